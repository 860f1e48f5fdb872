//! The planner step that serves `hamming(fp, q) <= k` with the block indexes.
//!
//! For every scan of a table (`set_rel_pathlist_hook`, src/hooks.rs, after the previous hook —
//! Citus and others install their own), each restriction of the form
//!
//! ```sql
//! hamming(fp, q) <= k      fp <~> q <= k      hamming(fp, q) < k      k >= fp <~> q   ...
//! ```
//!
//! (also what `simdup_match(fp, q, k)` inlines to), where `fp` is a column with simdup block
//! indexes and `q` and `k` do not depend on the scanned row (constants, parameters of generic
//! plans, `simhash('text')`, `simhash($1)`), adds one more path: a Tid Scan whose TID condition
//! is `ctid = ANY (_simdup_tids(tbl, fp's column number, q, k))`. The restriction itself stays
//! as the scan's filter, so the answer cannot change; the planner picks the path by its cost
//! (the probes and candidates it will check, [`super::cost`]), against a sequential scan and the rest.
//! Tables without block indexes, and other quals, are left exactly as they were.
//!
//! The library is loaded, and the hook installed, by the first call of any simdup function,
//! which for such a query is the planner's own call of `hamming`'s support function while it
//! simplifies the expressions — before it builds the scan paths, so even a session's first
//! query is served.

use std::ffi::c_char;

use pgrx::pg_sys;

use super::indexes::{block_indexes, BlockIndexes};
use super::plan_nodes::{binary_op, bms_empty, check_as_user, restrictinfo, PLANNED_CALL};
use crate::catalog::{cells, is_our_function};

/// Whether simdup's planner steps may add paths to the scan of range table entry `rti`: with
/// `simdup.index_search` on, a plain table scanned alone (no inheritance), whose rows the query
/// neither locks nor modifies. Checked by the `set_rel_pathlist_hook` (src/hooks.rs) before
/// [`add_paths`] and the similarity step.
///
/// # Safety
/// The planner's `set_rel_pathlist_hook` arguments.
pub(crate) unsafe fn may_add_paths(
    root: *mut pg_sys::PlannerInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) -> bool {
    // SAFETY: the planner passes valid pointers.
    unsafe {
        crate::gucs::index_search()
            && (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
            && (*rte).relkind == pg_sys::RELKIND_RELATION as c_char
            && !(*rte).inh
            && !rows_locked_or_modified(root, rti)
    }
}

/// Adds the block-index paths of a table scan's `hamming` restrictions to `rel`'s paths, where
/// [`may_add_paths`]. Called by the `set_rel_pathlist_hook` (src/hooks.rs) after the previous
/// hook. Returns false when it stopped at a served restriction under row-level security (no
/// path of simdup's may serve the scan then).
///
/// # Safety
/// The planner's `set_rel_pathlist_hook` arguments, inside pgrx's guard.
pub(crate) unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) -> bool {
    // SAFETY: the planner passes valid pointers.
    unsafe {
        let mut indexes: Option<(pg_sys::AttrNumber, Option<BlockIndexes>)> = None;
        // The smallest row-estimate correction of the restrictions served ([`row_factor`]).
        let mut tightest: Option<f64> = None;
        // Restrictions of this scan (q and k known once per scan), then join clauses, whose
        // q or k come from other tables: those give a parameterized path, run once per outer
        // row of a nested loop.
        let clauses = cells((*rel).baserestrictinfo).iter().chain(cells((*rel).joininfo));
        for cell in clauses {
            let rinfo = cell.ptr_value as *mut pg_sys::RestrictInfo;
            let Some(m) = match_clause(root, (*rinfo).clause as *mut pg_sys::Node, rti) else { continue };
            // Under row-level security the search would see rows the policies hide: no path.
            // (Checked as the role the executor checks this table's privileges as: a view's
            // owner for a table read through a view.)
            if pg_sys::check_enable_rls((*rte).relid, check_as_user(root, rte, rti), true)
                == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
            {
                return false;
            }
            // The table's block indexes on that column (read once per scan and column).
            if indexes.as_ref().map(|(a, _)| *a) != Some(m.attnum) {
                let heap = pg_sys::table_open((*rte).relid, pg_sys::NoLock as pg_sys::LOCKMODE);
                indexes = Some((m.attnum, block_indexes(heap, m.attnum)));
                pg_sys::table_close(heap, pg_sys::NoLock as pg_sys::LOCKMODE);
            }
            let Some((_, Some(found))) = &indexes else { continue };
            add_search_path(root, rel, rti, (*rte).relid, &m, found);
            if m.outer.is_null() {
                let factor = row_factor(root, rinfo, (*rel).tuples, &m);
                tightest = Some(tightest.map_or(factor, |f: f64| f.min(factor)));
            }
        }
        if let Some(factor) = tightest {
            correct_rows(rel, factor);
        }
        add_nearest_path(root, rel, rti, rte);
        true
    }
}

/// `ORDER BY fp <~> q LIMIT n` (or `hamming(fp, q)`, ascending, NULLS LAST; any further sort
/// keys; an OFFSET; WITH TIES) as the whole of a query on this table: adds a Tid Scan of
/// `ctid = ANY (_simdup_nearest_tids(tbl, fp's column number, q, n + offset))`, which returns
/// every row within the distance of the (n + offset)-th nearest, ties included. The sort and
/// the limit above it are the ones the query already has, so the answer is the full sort's.
/// Only where nothing else can drop or multiply rows between the scan and the limit: no WHERE
/// (row-level security adds one), no join, GROUP BY, DISTINCT, aggregate, window function,
/// set-returning function in the select list or set operation; n and the offset constants or
/// parameters ([`limit_plus_offset`]).
///
/// # Safety
/// Valid planner structures of the scan of range table entry `rti`, `rte`.
unsafe fn add_nearest_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: the planner's structures; node tags say which struct a node is.
    unsafe {
        let parse = (*root).parse;
        let p = &*parse;
        if p.commandType != pg_sys::CmdType::CMD_SELECT
            || p.limitCount.is_null()
            || !p.groupClause.is_null()
            || !p.groupingSets.is_null()
            || !p.distinctClause.is_null()
            || !p.havingQual.is_null()
            || !p.setOperations.is_null()
            || p.hasAggs
            || p.hasWindowFuncs
            || p.hasTargetSRFs
            || !(*rel).baserestrictinfo.is_null()
        {
            return;
        }
        // The one table of the query: its jointree is that table, alone or (a view pulled up)
        // wrapped in FROM lists of one item. (Their conditions on the table are restrictions,
        // refused above; constant ones keep or drop every row alike.)
        let mut item = p.jointree as *mut pg_sys::Node;
        while (*item).type_ == pg_sys::NodeTag::T_FromExpr {
            let from = cells((*(item as *mut pg_sys::FromExpr)).fromlist);
            if from.len() != 1 {
                return;
            }
            item = from[0].ptr_value as *mut pg_sys::Node;
        }
        if (*item).type_ != pg_sys::NodeTag::T_RangeTblRef
            || (*(item as *mut pg_sys::RangeTblRef)).rtindex as pg_sys::Index != rti
        {
            return;
        }
        let Some(first) = cells(p.sortClause).first().map(|c| c.ptr_value as *mut pg_sys::SortGroupClause) else {
            return;
        };
        if u32::from((*first).sortop) != pg_sys::Int4LessOperator || (*first).nulls_first {
            return;
        }
        let tle = pg_sys::get_sortgroupref_tle((*first).tleSortGroupRef, p.targetList);
        let Some((funcid, a, b)) = hamming_args((*tle).expr as *mut pg_sys::Node) else { return };
        let (attnum, q) = match (column_of(a, rti), column_of(b, rti)) {
            (Some(attnum), _) => (attnum, b),
            (None, Some(attnum)) => (attnum, a),
            _ => return,
        };
        if !outer_tables(root, q, rti).is_some_and(bms_empty) {
            return;
        }
        let Some((count, estimate)) = limit_plus_offset(p.limitCount, p.limitOffset) else { return };
        if pg_sys::check_enable_rls((*rte).relid, check_as_user(root, rte, rti), true)
            == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
        {
            return;
        }
        let heap = pg_sys::table_open((*rte).relid, pg_sys::NoLock as pg_sys::LOCKMODE);
        let found = block_indexes(heap, attnum);
        pg_sys::table_close(heap, pg_sys::NoLock as pg_sys::LOCKMODE);
        let Some(found) = found else { return };
        let cost = super::cost::nearest_cost(&found, (*rel).tuples, estimate, super::cost::FIRST_RADIUS);
        let schema = pg_sys::get_func_namespace(funcid);
        let argtypes = [pg_sys::OIDOID, pg_sys::INT4OID, pg_sys::INT8OID, pg_sys::INT8OID];
        let f = function_oid(schema, c"_simdup_nearest_tids", &argtypes);
        if f == pg_sys::InvalidOid {
            return;
        }
        let mut args = pg_sys::lappend(std::ptr::null_mut(), regclass_const((*rte).relid).cast());
        args = pg_sys::lappend(args, int4_const(i32::from(attnum)).cast());
        args = pg_sys::lappend(args, pg_sys::copyObjectImpl(q.cast()));
        args = pg_sys::lappend(args, count.cast());
        // The scan returns about n rows (those tied at the n-th distance besides), not the
        // table's: the sort above it is priced for those.
        add_tid_path(root, rel, rti, f, args, std::ptr::null_mut(), (cost.0, cost.1, Some(estimate)));
    }
}

/// The number of rows the nearest search must return for LIMIT `count` OFFSET `offset`, as an
/// expression, with its value for costing (a parameter counts as 10 rows): their sum, folded
/// when both are constants, else `LEAST(count, 2⁶²) + LEAST(offset, 2⁶²)`, which cannot
/// overflow where the query would not (LEAST skips a NULL: a NULL offset, which is none,
/// then asks for every row, still exact). Each a constant or a parameter ($1); None for
/// `LIMIT ALL` and other expressions.
///
/// # Safety
/// `count` is a valid int8 expression node, `offset` NULL or one.
unsafe fn limit_plus_offset(count: *mut pg_sys::Node, offset: *mut pg_sys::Node) -> Option<(*mut pg_sys::Node, f64)> {
    const CAP: i64 = 1 << 62;
    // SAFETY: node tags say which struct a node is; a Const's value is read only when not NULL.
    unsafe {
        // Some(Some(v)): the constant v; Some(None): a parameter; None: anything else.
        let value = |n: *mut pg_sys::Node| -> Option<Option<i64>> {
            match (*n).type_ {
                pg_sys::NodeTag::T_Const => {
                    let c = &*(n as *mut pg_sys::Const);
                    Some(Some(if c.constisnull { -1 } else { (c.constvalue.value() as i64).max(0) }))
                }
                pg_sys::NodeTag::T_Param
                    if (*(n as *mut pg_sys::Param)).paramkind == pg_sys::ParamKind::PARAM_EXTERN =>
                {
                    Some(None)
                }
                _ => None,
            }
        };
        let c = value(count)?;
        if c == Some(-1) {
            return None; // LIMIT ALL, LIMIT NULL
        }
        let o = if offset.is_null() { Some(0) } else { value(offset)?.map(|o| o.max(0)) };
        let estimate = c.unwrap_or(10).saturating_add(o.unwrap_or(0)) as f64;
        if let (Some(c), Some(o)) = (c, o) {
            return Some((int8_const(c.saturating_add(o)), estimate));
        }
        let capped = |n: *mut pg_sys::Node| {
            min_max(
                pg_sys::MinMaxOp::IS_LEAST,
                pg_sys::INT8OID,
                pg_sys::copyObjectImpl(n.cast()).cast(),
                int8_const(CAP),
            )
        };
        let offset = if offset.is_null() { int8_const(0) } else { capped(offset) };
        Some((call2(pg_sys::F_INT8PL, pg_sys::INT8OID, capped(count), offset), estimate))
    }
}

/// Column number of `node` when it is a column of range table entry `rti` of this query.
///
/// # Safety
/// `node` is a valid expression node.
unsafe fn column_of(node: *mut pg_sys::Node, rti: pg_sys::Index) -> Option<pg_sys::AttrNumber> {
    // SAFETY: node tags say which struct a node is.
    unsafe {
        if (*node).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        let v = &*(node as *mut pg_sys::Var);
        (v.varno as pg_sys::Index == rti && v.varlevelsup == 0 && v.varattno > 0).then_some(v.varattno)
    }
}

/// Whether the scan of range table entry `rti` returns rows the statement locks or modifies
/// (the target of UPDATE, DELETE or MERGE, or a table of SELECT … FOR UPDATE/SHARE). Such rows
/// are rechecked by EvalPlanQual after a concurrent update, on their new version, whose ctid
/// is not among the tids the search returned: a Tid Scan would drop them. Those scans get no
/// index path, so their answer is the sequential scan's.
///
/// # Safety
/// `root` is the planner's state for the query being planned.
unsafe fn rows_locked_or_modified(root: *mut pg_sys::PlannerInfo, rti: pg_sys::Index) -> bool {
    // SAFETY: the planner's structures; rowMarks holds PlanRowMarks.
    unsafe {
        if (*(*root).parse).resultRelation as pg_sys::Index == rti
            || pg_sys::bms_is_member(rti as i32, (*root).all_result_relids)
        {
            return true;
        }
        cells((*root).rowMarks).iter().any(|cell| {
            let mark = &*(cell.ptr_value as *const pg_sys::PlanRowMark);
            mark.rti == rti && mark.markType <= pg_sys::RowMarkType::ROW_MARK_KEYSHARE
        })
    }
}

/// How much fewer rows a restriction `hamming(fp, q) <= k` keeps than PostgreSQL estimated.
/// PostgreSQL has no statistics for `hamming(fp, q)` and prices `<=` on it at a third of the
/// rows (DEFAULT_INEQ_SEL). The model here: the share of 64-bit values within k of q,
/// Σᵢ≤ₖ C(64, i) / 2⁶⁴ (uniformly spread fingerprints), but at least one row. With a third of
/// a million-row table expected to match, `ORDER BY id LIMIT 1` would walk the primary key
/// index filtering every row instead of probing.
///
/// # Safety
/// Valid planner structures; `rinfo` a restriction of the scan.
unsafe fn row_factor(root: *mut pg_sys::PlannerInfo, rinfo: *mut pg_sys::RestrictInfo, tuples: f64, m: &Match) -> f64 {
    // SAFETY: the caller guarantees the planner structures.
    let (estimated, k) = unsafe {
        (
            pg_sys::clause_selectivity(
                root,
                rinfo as *mut pg_sys::Node,
                0,
                pg_sys::JoinType::JOIN_INNER,
                std::ptr::null_mut(),
            ),
            const_k(m),
        )
    };
    let k = k.unwrap_or_else(crate::gucs::max_distance).clamp(0, 64);
    let mut binomial = 1.0f64; // C(64, i)
    let mut within = 0.0f64;
    for i in 0..=k {
        within += binomial;
        binomial = binomial * f64::from(64 - i) / f64::from(i + 1);
    }
    let modelled = (within / 2f64.powi(64)).max(1.0 / tuples.max(1.0)).min(1.0);
    if estimated > 0.0 && modelled < estimated {
        modelled / estimated
    } else {
        1.0
    }
}

/// Scales the row estimate of `rel` and of the paths built so far by `factor` (< 1): the
/// unparameterized paths carry the relation's estimate, partial paths their share of it.
///
/// # Safety
/// `rel` is the planner's relation, in set_rel_pathlist_hook (before set_cheapest).
unsafe fn correct_rows(rel: *mut pg_sys::RelOptInfo, factor: f64) {
    // SAFETY: the caller guarantees the relation; its path lists hold Paths.
    unsafe {
        (*rel).rows = pg_sys::clamp_row_est((*rel).rows * factor);
        for cell in cells((*rel).pathlist).iter().chain(cells((*rel).partial_pathlist)) {
            let path = cell.ptr_value as *mut pg_sys::Path;
            if (*path).param_info.is_null() {
                (*path).rows = pg_sys::clamp_row_est((*path).rows * factor);
            }
        }
    }
}

/// k when it is a constant.
///
/// # Safety
/// `m.k` is a valid expression node.
unsafe fn const_k(m: &Match) -> Option<i32> {
    // SAFETY: the caller guarantees the node; a Const's value is read only when it is not NULL.
    unsafe {
        match (*m.k).type_ {
            pg_sys::NodeTag::T_Const if !(*(m.k as *mut pg_sys::Const)).constisnull => {
                Some((*(m.k as *mut pg_sys::Const)).constvalue.value() as i32)
            }
            _ => None,
        }
    }
}

/// A restriction `hamming(fp, q) <= k` on column `attnum` of the scanned table.
struct Match {
    /// The `hamming` function called (its schema holds `_simdup_tids`).
    hamming: pg_sys::Oid,
    attnum: pg_sys::AttrNumber,
    q: *mut pg_sys::Node,
    /// The inclusive bound k (already k − 1 for `<`).
    k: *mut pg_sys::Node,
    /// The other tables q and k read (NULL: none, a plain restriction).
    outer: pg_sys::Relids,
}

/// The function and arguments of a call of `hamming`, as a function or as `<~>`.
///
/// # Safety
/// `node` is a valid expression node.
unsafe fn hamming_args(node: *mut pg_sys::Node) -> Option<(pg_sys::Oid, *mut pg_sys::Node, *mut pg_sys::Node)> {
    // SAFETY: node tags say which struct a node is.
    unsafe {
        let (funcid, args) = match (*node).type_ {
            pg_sys::NodeTag::T_FuncExpr => {
                let f = node as *mut pg_sys::FuncExpr;
                ((*f).funcid, (*f).args)
            }
            pg_sys::NodeTag::T_OpExpr => {
                let o = node as *mut pg_sys::OpExpr;
                pg_sys::set_opfuncid(o);
                ((*o).opfuncid, (*o).args)
            }
            _ => return None,
        };
        let args = cells(args);
        if args.len() != 2 || !is_our_function(funcid, Some(crate::operators::hamming_wrapper)) {
            return None;
        }
        Some((funcid, args[0].ptr_value as *mut pg_sys::Node, args[1].ptr_value as *mut pg_sys::Node))
    }
}

/// The tables `node` reads, if it can be computed before scanning table `rti` (none of its
/// columns, nothing volatile): an empty set means once per scan, others once per outer row.
///
/// # Safety
/// `node` is a valid expression node of the query `root` plans.
unsafe fn outer_tables(
    root: *mut pg_sys::PlannerInfo,
    node: *mut pg_sys::Node,
    rti: pg_sys::Index,
) -> Option<pg_sys::Relids> {
    // SAFETY: these only walk the expression tree.
    unsafe {
        if pg_sys::contain_volatile_functions(node) {
            return None;
        }
        let varnos = pg_sys::pull_varnos(root, node);
        (!pg_sys::bms_is_member(rti as i32, varnos)).then_some(varnos)
    }
}

/// `GREATEST(a, b)` or `LEAST(a, b)` (`op`) of type `typ`.
///
/// # Safety
/// `a` and `b` are valid expression nodes of type `typ`.
unsafe fn min_max(
    op: pg_sys::MinMaxOp::Type,
    typ: pg_sys::Oid,
    a: *mut pg_sys::Node,
    b: *mut pg_sys::Node,
) -> *mut pg_sys::Node {
    // SAFETY: palloc0 in the planner's memory context; the node is filled as makeNode would.
    unsafe {
        let m = pg_sys::palloc0(std::mem::size_of::<pg_sys::MinMaxExpr>()) as *mut pg_sys::MinMaxExpr;
        (*m).xpr.type_ = pg_sys::NodeTag::T_MinMaxExpr;
        (*m).minmaxtype = typ;
        (*m).op = op;
        (*m).args = pg_sys::lappend(pg_sys::lappend(std::ptr::null_mut(), a.cast()), b.cast());
        (*m).location = -1;
        m.cast()
    }
}

/// A call of the built-in function `f` (an `F_*` number) returning `typ` on `a` and `b`.
///
/// # Safety
/// `a` and `b` are valid expression nodes of `f`'s argument types.
unsafe fn call2(f: u32, typ: pg_sys::Oid, a: *mut pg_sys::Node, b: *mut pg_sys::Node) -> *mut pg_sys::Node {
    // SAFETY: makeFuncExpr pallocs the node; the list cells point at the caller's nodes.
    unsafe {
        let args = pg_sys::lappend(pg_sys::lappend(std::ptr::null_mut(), a.cast()), b.cast());
        pg_sys::makeFuncExpr(
            pg_sys::Oid::from(f),
            typ,
            args,
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
        )
        .cast()
    }
}

/// # Safety
/// `clause` is a valid expression node of a restriction or join clause of range table entry
/// `rti` in the query `root` plans.
unsafe fn match_clause(root: *mut pg_sys::PlannerInfo, clause: *mut pg_sys::Node, rti: pg_sys::Index) -> Option<Match> {
    // SAFETY: node tags say which struct a node is; lists are read through `cells`.
    unsafe {
        let (funcid, left, right) = binary_op(clause)?;
        // (hamming on the left, strict <): h <= k, h < k, k >= h, k > h.
        let (hamming, k, strict) = match funcid {
            pg_sys::F_INT4LE => (left, right, false),
            pg_sys::F_INT4LT => (left, right, true),
            pg_sys::F_INT4GE => (right, left, false),
            pg_sys::F_INT4GT => (right, left, true),
            _ => return None,
        };
        let (funcid, a, b) = hamming_args(hamming)?;
        let (attnum, q) = match (column_of(a, rti), column_of(b, rti)) {
            (Some(attnum), _) => (attnum, b),
            (None, Some(attnum)) => (attnum, a),
            _ => return None,
        };
        let outer = pg_sys::bms_union(outer_tables(root, q, rti)?, outer_tables(root, k, rti)?);
        let outer = if bms_empty(outer) { std::ptr::null_mut() } else { outer };
        let k = if strict { minus_one(k) } else { k };
        Some(Match { hamming: funcid, attnum, q, k, outer })
    }
}

/// `k − 1` for `< k`, folded when k is a constant. Never overflows: a k of -2147483648 (any k
/// ≤ 0) gives a negative bound, which finds nothing, as `hamming(fp, q) < k` does; a
/// parameter is first raised to at least −2147483647 (`GREATEST(k, -2147483647) - 1`).
///
/// # Safety
/// `k` is a valid int4 expression node.
unsafe fn minus_one(k: *mut pg_sys::Node) -> *mut pg_sys::Node {
    // SAFETY: node tags say which struct a node is; makeConst/makeFuncExpr palloc new nodes.
    unsafe {
        if (*k).type_ == pg_sys::NodeTag::T_Const {
            let c = &*(k as *mut pg_sys::Const);
            if !c.constisnull {
                return int4_const((c.constvalue.value() as i32).saturating_sub(1).max(-1));
            }
        }
        let floor = min_max(pg_sys::MinMaxOp::IS_GREATEST, pg_sys::INT4OID, k, int4_const(-i32::MAX));
        call2(pg_sys::F_INT4MI, pg_sys::INT4OID, floor, int4_const(1))
    }
}

fn int4_const(v: i32) -> *mut pg_sys::Node {
    // SAFETY: makeConst pallocs a new node; int4 is passed by value.
    unsafe {
        pg_sys::makeConst(pg_sys::INT4OID, -1, pg_sys::InvalidOid, 4, pg_sys::Datum::from(v), false, true)
            as *mut pg_sys::Node
    }
}

fn int8_const(v: i64) -> *mut pg_sys::Node {
    // SAFETY: makeConst pallocs a new node; int8 is passed by value on the 64-bit platforms
    // pgrx supports.
    unsafe {
        pg_sys::makeConst(pg_sys::INT8OID, -1, pg_sys::InvalidOid, 8, pg_sys::Datum::from(v), false, true)
            as *mut pg_sys::Node
    }
}

fn regclass_const(relid: pg_sys::Oid) -> *mut pg_sys::Node {
    // SAFETY: makeConst pallocs a new node; an oid is passed by value.
    unsafe {
        pg_sys::makeConst(pg_sys::REGCLASSOID, -1, pg_sys::InvalidOid, 4, pg_sys::Datum::from(relid), false, true)
            as *mut pg_sys::Node
    }
}

/// The OID of function `schema.name(argtypes)`, InvalidOid if there is none (an older version
/// of the extension's SQL, before ALTER EXTENSION UPDATE).
///
/// # Safety
/// In a transaction.
unsafe fn function_oid(schema: pg_sys::Oid, name: &std::ffi::CStr, argtypes: &[pg_sys::Oid]) -> pg_sys::Oid {
    // SAFETY: catalog lookups; LookupFuncName with missing_ok returns InvalidOid if absent.
    unsafe {
        let names = pg_sys::lappend(
            pg_sys::lappend(std::ptr::null_mut(), pg_sys::makeString(pg_sys::get_namespace_name(schema)).cast()),
            pg_sys::makeString(pg_sys::pstrdup(name.as_ptr())).cast(),
        );
        let mut argtypes = argtypes.to_vec();
        pg_sys::LookupFuncName(names, argtypes.len() as i32, argtypes.as_mut_ptr(), true)
    }
}

/// Adds the path for restriction `m` to `rel`: a Tid Scan over `_simdup_tids`.
///
/// # Safety
/// Valid planner structures of the scan of table `relid`, range table entry `rti`.
unsafe fn add_search_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    relid: pg_sys::Oid,
    m: &Match,
    found: &BlockIndexes,
) {
    // SAFETY: nodes are built with PostgreSQL's constructors in the planner's memory context.
    unsafe {
        let schema = pg_sys::get_func_namespace(m.hamming);
        let f =
            function_oid(schema, c"_simdup_tids", &[pg_sys::OIDOID, pg_sys::INT4OID, pg_sys::INT8OID, pg_sys::INT4OID]);
        if f == pg_sys::InvalidOid {
            return;
        }
        let mut args = pg_sys::lappend(std::ptr::null_mut(), regclass_const(relid).cast());
        args = pg_sys::lappend(args, int4_const(i32::from(m.attnum)).cast());
        args = pg_sys::lappend(args, pg_sys::copyObjectImpl(m.q.cast()));
        args = pg_sys::lappend(args, pg_sys::copyObjectImpl(m.k.cast()));
        let k = const_k(m).unwrap_or_else(crate::gucs::max_distance);
        let cost = super::cost::probe_cost(found, (*rel).tuples, k);
        add_tid_path(root, rel, rti, f, args, m.outer, (cost.0, cost.1, None));
    }
}

/// Adds to `rel` a Tid Scan of `ctid = ANY (f(args))`, a function returning `tid[]`, with
/// cost `(startup, total)`, parameterized by `outer` (NULL: not), returning `rows` rows when
/// given (else PostgreSQL's estimate for the scan).
///
/// # Safety
/// Valid planner structures of the scan of range table entry `rti`; `args` a list of valid
/// expression nodes the path may keep.
unsafe fn add_tid_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    f: pg_sys::Oid,
    args: *mut pg_sys::List,
    outer: pg_sys::Relids,
    (startup, total, rows): (f64, f64, Option<f64>),
) {
    // SAFETY: every node is built with PostgreSQL's constructors in the planner's memory
    // context; the path is handed to add_path, which owns it from then on (and may free it).
    unsafe {
        // COERCE_SQL_SYNTAX marks the call as the planner's (see super::functions::planned_call).
        let call =
            pg_sys::makeFuncExpr(f, pg_sys::TIDARRAYOID, args, pg_sys::InvalidOid, pg_sys::InvalidOid, PLANNED_CALL);
        let ctid = pg_sys::makeVar(
            rti as _,
            pg_sys::SelfItemPointerAttributeNumber as pg_sys::AttrNumber,
            pg_sys::TIDOID,
            -1,
            pg_sys::InvalidOid,
            0,
        );
        let saop = pg_sys::palloc0(std::mem::size_of::<pg_sys::ScalarArrayOpExpr>()) as *mut pg_sys::ScalarArrayOpExpr;
        (*saop).xpr.type_ = pg_sys::NodeTag::T_ScalarArrayOpExpr;
        (*saop).opno = pg_sys::Oid::from(pg_sys::TIDEqualOperator);
        (*saop).opfuncid = pg_sys::Oid::from(pg_sys::F_TIDEQ);
        (*saop).useOr = true;
        (*saop).inputcollid = pg_sys::InvalidOid;
        (*saop).args = pg_sys::lappend(pg_sys::lappend(std::ptr::null_mut(), ctid.cast()), call.cast());
        (*saop).location = -1;
        let rinfo = restrictinfo(root, saop as *mut pg_sys::Expr);
        let path = pg_sys::create_tidscan_path(root, rel, pg_sys::lappend(std::ptr::null_mut(), rinfo.cast()), outer);
        let disable = if pg_sys::enable_tidscan { 0.0 } else { pg_sys::disable_cost };
        (*path).path.startup_cost = startup + disable;
        (*path).path.total_cost = total + disable;
        if let Some(rows) = rows {
            (*path).path.rows = pg_sys::clamp_row_est(rows);
        }
        pg_sys::add_path(rel, path as *mut pg_sys::Path);
    }
}
