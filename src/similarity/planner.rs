//! The planner step that serves `jaccard(body, q) >= t` with a similarity index.
//!
//! A similarity index (`simdup_enable_similar`) is a GIN index on
//! `_simdup_similar_bands(body, k, bands, rows)`, which PostgreSQL stores inlined as
//! `minhash_bands(minhash(body, k, bands * rows), bands, rows)`. For each restriction
//!
//! ```sql
//! jaccard(body, q, k) >= t      jaccard(body, q) > t      t <= jaccard(q, body)   ...
//! ```
//!
//! of a scan (`body` any expression of the scanned table, `q` not reading it, `k` and `t`
//! constants), this step adds, for each similarity index of the table on that expression and k
//! whose S-curve reaches [`MIN_RECALL`] at t, a Bitmap Heap Scan over it (the planner keeps the
//! cheapest: an index made for a higher threshold has fewer false candidates) with the index
//! condition `minhash_bands(minhash(body, …)) && minhash_bands(minhash(q, …))` (the
//! candidates: rows sharing an LSH band with q). The restriction itself stays as the scan's
//! filter, so every row returned has jaccard ≥ t: precision is exact. Recall is the index's:
//! a row of similarity s is a candidate with probability `minhash_s_curve(s, bands, rows)`,
//! at least [`MIN_RECALL`] at s = t and more above it (MinHash is deterministic: the same rows
//! are found every time). `simdup.index_search = off` gives the sequential scan's answer.
//!
//! The configuration is read from the index's expression in the catalog (the planner's
//! `IndexOptInfo`), never from `pg_get_indexdef` text.

use pgrx::pg_sys;

use crate::catalog::{cells, is_our_function};

/// The recall at the threshold below which an index is not used (as `simdup_similar`'s default
/// `min_recall`).
pub(crate) const MIN_RECALL: f64 = 0.99;

/// A similarity index as the planner sees it (its IndexOptInfo); the catalog's view of one is
/// [`crate::similarity::search::SimilarityIndex`].
struct PlannedSimilarityIndex {
    index: *mut pg_sys::IndexOptInfo,
    /// The indexed text expression (`body`), in the planner's form.
    body: *mut pg_sys::Node,
    k: i32,
    bands: usize,
    rows: usize,
}

/// What a similarity index of `index` is, if it is one.
///
/// # Safety
/// `index` is an IndexOptInfo of the relation being planned.
unsafe fn similarity_index(index: *mut pg_sys::IndexOptInfo) -> Option<PlannedSimilarityIndex> {
    // SAFETY: the planner's IndexOptInfo.
    unsafe {
        let ix = &*index;
        if ix.relam != pg_sys::GIN_AM_OID || ix.ncolumns != 1 || !ix.indpred.is_null() || *ix.indexkeys != 0 {
            return None;
        }
        let (body, k, bands, rows) = bands_expression(cells(ix.indexprs).first()?.ptr_value as *mut pg_sys::Node)?;
        Some(PlannedSimilarityIndex { index, body, k, bands, rows })
    }
}

/// The text expression, k, bands and rows of a similarity index's expression as PostgreSQL
/// holds it (`_simdup_similar_bands(body, k, bands, rows)` inlined and folded):
/// `minhash_bands(minhash(body, k, bands * rows), bands, rows)`.
///
/// # Safety
/// `expr` is a valid expression node.
pub(crate) unsafe fn bands_expression(expr: *mut pg_sys::Node) -> Option<(*mut pg_sys::Node, i32, usize, usize)> {
    // SAFETY: node tags say which struct a node is; Consts read only when not NULL.
    unsafe {
        let (bands_fn, outer) = func_args(expr)?;
        if outer.len() != 3 || !is_our_function(bands_fn, Some(crate::similarity::minhash::minhash_bands_wrapper)) {
            return None;
        }
        let (minhash_fn, inner) = func_args(outer[0])?;
        if inner.len() != 3 || !is_our_function(minhash_fn, Some(crate::similarity::minhash::minhash_wrapper)) {
            return None;
        }
        let (k, n, bands, rows) = (int4(inner[1])?, int4(inner[2])?, int4(outer[1])?, int4(outer[2])?);
        if bands < 1 || rows < 1 || i64::from(bands) * i64::from(rows) != i64::from(n) {
            return None;
        }
        Some((inner[0], k, bands as usize, rows as usize))
    }
}

/// The text expression and threshold of a short-text index's expression
/// (`_simdup_similar_short_bands(body, threshold)`, the similarity dedup trigger's second
/// index).
///
/// # Safety
/// `expr` is a valid expression node.
pub(crate) unsafe fn short_bands_expression(expr: *mut pg_sys::Node) -> Option<(*mut pg_sys::Node, f64)> {
    // SAFETY: node tags say which struct a node is; Consts read only when not NULL.
    unsafe {
        let (funcid, args) = func_args(expr)?;
        if args.len() != 2
            || !is_our_function(funcid, Some(crate::similarity::minhash::_simdup_similar_short_bands_wrapper))
        {
            return None;
        }
        Some((args[0], float8(args[1])?))
    }
}

/// The text expression, k and containment threshold of a containment index's expression
/// (`_simdup_similar_keys(body, k, containment)`, the similarity dedup trigger's third index).
///
/// # Safety
/// `expr` is a valid expression node.
pub(crate) unsafe fn keys_expression(expr: *mut pg_sys::Node) -> Option<(*mut pg_sys::Node, i32, f64)> {
    // SAFETY: node tags say which struct a node is; Consts read only when not NULL.
    unsafe {
        let (funcid, args) = func_args(expr)?;
        if args.len() != 3 || !is_our_function(funcid, Some(crate::similarity::minhash::_simdup_similar_keys_wrapper)) {
            return None;
        }
        Some((args[0], int4(args[1])?, float8(args[2])?))
    }
}

/// The function and arguments of a function call node.
///
/// # Safety
/// `node` is a valid expression node.
unsafe fn func_args(node: *mut pg_sys::Node) -> Option<(pg_sys::Oid, Vec<*mut pg_sys::Node>)> {
    // SAFETY: node tags say which struct a node is.
    unsafe {
        if (*node).type_ != pg_sys::NodeTag::T_FuncExpr {
            return None;
        }
        let f = node as *mut pg_sys::FuncExpr;
        Some(((*f).funcid, cells((*f).args).iter().map(|c| c.ptr_value as *mut pg_sys::Node).collect()))
    }
}

/// The value of a non-NULL int4 constant.
///
/// # Safety
/// `node` is a valid expression node.
unsafe fn int4(node: *mut pg_sys::Node) -> Option<i32> {
    // SAFETY: the caller's node; its tag is read first, and only a T_Const is read as a Const.
    unsafe { constant(node, pg_sys::INT4OID).map(|v| v.value() as i32) }
}

/// The value of a non-NULL float8 constant.
///
/// # Safety
/// `node` is a valid expression node.
unsafe fn float8(node: *mut pg_sys::Node) -> Option<f64> {
    // SAFETY: as `int4`: only a node tagged T_Const is read as a Const.
    unsafe { constant(node, pg_sys::FLOAT8OID).map(|v| f64::from_bits(v.value() as u64)) }
}

/// The datum of a non-NULL constant of type `typ`.
///
/// # Safety
/// `node` is a valid expression node.
unsafe fn constant(node: *mut pg_sys::Node, typ: pg_sys::Oid) -> Option<pg_sys::Datum> {
    // SAFETY: every node starts with its tag; a node tagged T_Const is a Const, so the reference
    // is made only then.
    unsafe {
        if (*node).type_ != pg_sys::NodeTag::T_Const {
            return None;
        }
        let c = &*(node as *mut pg_sys::Const);
        (!c.constisnull && c.consttype == typ).then_some(c.constvalue)
    }
}

/// A restriction `jaccard(body, q, k) >= t` (or `> t`) of the scanned table.
struct Restriction {
    body: *mut pg_sys::Node,
    q: *mut pg_sys::Node,
    k: i32,
    t: f64,
}

/// # Safety
/// `clause` is a valid expression node of a restriction of range table entry `rti`.
unsafe fn match_restriction(
    root: *mut pg_sys::PlannerInfo,
    clause: *mut pg_sys::Node,
    rti: pg_sys::Index,
) -> Option<Restriction> {
    // SAFETY: node tags say which struct a node is; Consts read only when not NULL.
    unsafe {
        let (funcid, left, right) = crate::search::plan_nodes::binary_op(clause)?;
        // jaccard(...) >= t, > t; t <= jaccard(...), t < jaccard(...).
        let (call, bound) = match funcid {
            pg_sys::F_FLOAT8GE | pg_sys::F_FLOAT8GT => (left, right),
            pg_sys::F_FLOAT8LE | pg_sys::F_FLOAT8LT => (right, left),
            _ => return None,
        };
        if (*bound).type_ != pg_sys::NodeTag::T_Const {
            return None;
        }
        let bound = &*(bound as *mut pg_sys::Const);
        if bound.constisnull || bound.consttype != pg_sys::FLOAT8OID {
            return None;
        }
        let t = f64::from_bits(bound.constvalue.value() as u64);
        let (funcid, jargs) = func_args(call)?;
        if jargs.len() != 3 || !is_our_function(funcid, Some(crate::similarity::minhash::jaccard_wrapper)) {
            return None;
        }
        let k = int4(jargs[2])?;
        let reads_row = |n: *mut pg_sys::Node| pg_sys::bms_is_member(rti as i32, pg_sys::pull_varnos(root, n));
        let constant = |n: *mut pg_sys::Node| {
            !pg_sys::contain_volatile_functions(n) && crate::search::plan_nodes::bms_empty(pg_sys::pull_varnos(root, n))
        };
        let (body, q) = match (reads_row(jargs[0]), reads_row(jargs[1])) {
            (true, false) => (jargs[0], jargs[1]),
            (false, true) => (jargs[1], jargs[0]),
            _ => return None,
        };
        if !(constant(q) && t > 0.0 && t <= 1.0) {
            return None;
        }
        Some(Restriction { body, q, k, t })
    }
}

/// Adds a Bitmap Heap Scan over a similarity index for each restriction of `rel` that one
/// serves (see the module's documentation). Not under row-level security for the role the
/// executor checks the table as: the policies filter a sequential scan, as for the block
/// indexes.
///
/// # Safety
/// Valid planner structures of the scan of range table entry `rti` (`rte`), in
/// set_rel_pathlist_hook.
pub(crate) unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: the planner's structures; nodes are built with PostgreSQL's constructors in the
    // planner's memory context, and the path is handed to add_path.
    unsafe {
        if (*rel).baserestrictinfo.is_null()
            || pg_sys::check_enable_rls((*rte).relid, crate::search::plan_nodes::check_as_user(root, rte, rti), true)
                == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
        {
            return;
        }
        let indexes: Vec<PlannedSimilarityIndex> = cells((*rel).indexlist)
            .iter()
            .filter_map(|c| similarity_index(c.ptr_value as *mut pg_sys::IndexOptInfo))
            .collect();
        if indexes.is_empty() {
            return;
        }
        for cell in cells((*rel).baserestrictinfo) {
            let rinfo = cell.ptr_value as *mut pg_sys::RestrictInfo;
            let Some(r) = match_restriction(root, (*rinfo).clause as *mut pg_sys::Node, rti) else { continue };
            for ix in indexes.iter().filter(|ix| {
                ix.k == r.k
                    && pg_sys::equal(ix.body.cast(), r.body.cast())
                    && simdup_core::similarity::minhash::s_curve(r.t, ix.bands, ix.rows) >= MIN_RECALL
            }) {
                add_bitmap_path(root, rel, rinfo, ix, r.q);
            }
        }
    }
}

/// The Bitmap Heap Scan of `ix` for restriction `rinfo` with query text `q`.
///
/// # Safety
/// As [`add_paths`].
unsafe fn add_bitmap_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rinfo: *mut pg_sys::RestrictInfo,
    ix: &PlannedSimilarityIndex,
    q: *mut pg_sys::Node,
) {
    // SAFETY: the caller guarantees the planner structures of `rel`; `ix` is similarity_index's,
    // so its first expression is minhash_bands(minhash(body, ..), ..), FuncExprs whose arguments
    // are read and changed only on copies; nodes are made by PostgreSQL's constructors.
    unsafe {
        let indexed = cells((*ix.index).indexprs)[0].ptr_value as *mut pg_sys::Node;
        // The query's band values: the index expression with q for body, constant-folded (once
        // per plan for a constant q).
        let of_q = pg_sys::copyObjectImpl(indexed.cast()) as *mut pg_sys::FuncExpr;
        let inner = cells((*of_q).args)[0].ptr_value as *mut pg_sys::FuncExpr;
        (*(*(*inner).args).elements).ptr_value = pg_sys::copyObjectImpl(q.cast());
        let of_q = pg_sys::eval_const_expressions(root, of_q.cast());
        let overlap = pg_sys::make_opclause(
            pg_sys::Oid::from(pg_sys::OID_ARRAY_OVERLAP_OP),
            pg_sys::BOOLOID,
            false,
            pg_sys::copyObjectImpl(indexed.cast()).cast(),
            of_q.cast(),
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
        );
        let clause = pg_sys::palloc0(std::mem::size_of::<pg_sys::IndexClause>()) as *mut pg_sys::IndexClause;
        (*clause).type_ = pg_sys::NodeTag::T_IndexClause;
        (*clause).rinfo = rinfo;
        (*clause).indexquals =
            pg_sys::lappend(std::ptr::null_mut(), crate::search::plan_nodes::restrictinfo(root, overlap.cast()).cast());
        (*clause).lossy = true;
        (*clause).indexcol = 0;
        let path = pg_sys::create_index_path(
            root,
            ix.index,
            pg_sys::lappend(std::ptr::null_mut(), clause.cast()),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            pg_sys::ScanDirection::ForwardScanDirection,
            false,
            std::ptr::null_mut(),
            1.0,
            false,
        );
        let heap = pg_sys::create_bitmap_heap_path(root, rel, path.cast(), std::ptr::null_mut(), 1.0, 0);
        pg_sys::add_path(rel, heap.cast());
    }
}
