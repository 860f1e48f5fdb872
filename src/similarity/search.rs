//! Verified similarity search: the rows whose exact character-shingle Jaccard similarity with a
//! query is at least a threshold (`simdup_similar`, sql/similar.sql). Candidates come from MinHash
//! LSH bands in a GIN index whose S-curve is chosen for a recall target at the threshold
//! (`simdup_core::similarity::minhash::choose_bands_for_recall`); every candidate is verified with
//! `jaccard()`, so precision is exact and recall is the S-curve's.
//!
//! `simdup_similar` itself is here: the choice of index, its errors, and the search, run as
//! one query over SPI (the caller's privileges and row-level security apply) from a plan kept
//! per backend, so that a call costs what the query costs. The indexes are made and dropped by
//! the SQL of sql/similar.sql.

use pgrx::pg_sys;
use pgrx::prelude::*;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};

use crate::args::similarity_target;
use crate::errors::{invalid_parameter, Code, Error};
use crate::similarity::minhash::{char_set, set_bands};
use simdup_core::similarity::minhash as mh;

/// Bands × rows (bands × rows ≤ n) under which a pair of Jaccard similarity `threshold` becomes
/// a candidate with probability at least `recall`, the steepest such curve (fewest false
/// candidates below the threshold), with its approximate threshold `(1/bands)^(1/rows)`.
#[pg_extern(sql = "")]
fn minhash_choose_bands_for_recall(
    n: i32,
    threshold: f64,
    recall: f64,
) -> TableIterator<'static, (name!(bands, i32), name!(rows, i32), name!(approx_threshold, f64))> {
    let (t, recall) = similarity_target(threshold, recall);
    let (b, r) = match mh::choose_bands_for_recall(crate::args::permutations(n), t, recall) {
        Ok(br) => br,
        Err(e) => invalid_parameter(
            e.to_string(),
            "n is the signature length (1 to 4096); a lower threshold or a higher recall needs more bands: \
             raise n, or lower the recall.",
        ),
    };
    TableIterator::once((b as i32, r as i32, mh::band_threshold(b, r)))
}

/// `threshold` itself when it is a valid threshold of `simdup_similar` (0 < t ≤ 1) and `recall`
/// a valid recall (0 < r < 1); 22023 otherwise. For the handwritten SQL.
#[pg_extern(sql = "")]
fn _simdup_check_similarity(threshold: f64, recall: f64) -> f64 {
    similarity_target(threshold, recall).0
}

/// A similarity index of a table: a valid GIN index on `_simdup_similar_bands(body, k, bands,
/// rows)`, with its text expression as the catalog holds it.
pub(crate) struct SimilarityIndex {
    pub oid: pg_sys::Oid,
    /// The indexed text expression (a copy of the relcache's, in the current memory context).
    pub body: *mut pg_sys::Node,
    pub k: i32,
    pub bands: usize,
    pub rows: usize,
}

/// A short-text index of a table, which the similarity dedup trigger reads for its short-text
/// rule: a valid GIN index on `_simdup_similar_short_bands(body, threshold)`.
pub(crate) struct ShortIndex {
    pub oid: pg_sys::Oid,
    /// The indexed text expression, as in [`SimilarityIndex`].
    pub body: *mut pg_sys::Node,
    pub threshold: f64,
}

/// A containment index of a table, which the similarity dedup trigger reads for its containment
/// rule: a valid GIN index on `_simdup_similar_keys(body, k, containment)`.
pub(crate) struct KeyIndex {
    pub oid: pg_sys::Oid,
    /// The indexed text expression, as in [`SimilarityIndex`].
    pub body: *mut pg_sys::Node,
    pub k: i32,
    pub containment: f64,
}

/// The similarity indexes of an open table, oldest first, read from their expressions in the
/// catalog ([`crate::similarity::planner::bands_expression`]): the one reader for
/// `_simdup_similar_indexes`, `simdup_similar` and the dedup trigger.
///
/// # Safety
/// `heap` is an open relation, in a transaction.
pub(crate) unsafe fn similarity_indexes(heap: pg_sys::Relation) -> Vec<SimilarityIndex> {
    // SAFETY: `heap` is open in a transaction (this function's contract), as
    // gin_expression_indexes requires; the expression it passes on is a valid node, the first of
    // an index's RelationGetIndexExpressions.
    unsafe {
        gin_expression_indexes(heap, |oid, expr| {
            crate::similarity::planner::bands_expression(expr).map(|(body, k, bands, rows)| SimilarityIndex {
                oid,
                body,
                k,
                bands,
                rows,
            })
        })
    }
}

/// The short-text indexes of an open table, oldest first
/// ([`crate::similarity::planner::short_bands_expression`]).
///
/// # Safety
/// As [`similarity_indexes`].
pub(crate) unsafe fn short_indexes(heap: pg_sys::Relation) -> Vec<ShortIndex> {
    // SAFETY: `heap` is open in a transaction (this function's contract), as
    // gin_expression_indexes requires; the expression it passes on is a valid node, the first of
    // an index's RelationGetIndexExpressions.
    unsafe {
        gin_expression_indexes(heap, |oid, expr| {
            crate::similarity::planner::short_bands_expression(expr).map(|(body, threshold)| ShortIndex {
                oid,
                body,
                threshold,
            })
        })
    }
}

/// The containment indexes of an open table, oldest first
/// ([`crate::similarity::planner::keys_expression`]).
///
/// # Safety
/// As [`similarity_indexes`].
pub(crate) unsafe fn key_indexes(heap: pg_sys::Relation) -> Vec<KeyIndex> {
    // SAFETY: `heap` is open in a transaction (this function's contract), as
    // gin_expression_indexes requires; the expression it passes on is a valid node, the first of
    // an index's RelationGetIndexExpressions.
    unsafe {
        gin_expression_indexes(heap, |oid, expr| {
            crate::similarity::planner::keys_expression(expr).map(|(body, k, containment)| KeyIndex {
                oid,
                body,
                k,
                containment,
            })
        })
    }
}

/// `read(index, expression)` of each valid, non-partial, one-expression GIN index of an open
/// table, oldest first, where it gives something.
///
/// # Safety
/// As [`similarity_indexes`].
unsafe fn gin_expression_indexes<T>(
    heap: pg_sys::Relation,
    mut read: impl FnMut(pg_sys::Oid, *mut pg_sys::Node) -> Option<T>,
) -> Vec<T> {
    let mut out = Vec::new();
    // SAFETY: the caller guarantees the relation; its indexes are opened and closed here under
    // AccessShareLock; RelationGetIndexExpressions returns a copy in this memory context.
    unsafe {
        for cell in crate::catalog::cells(pg_sys::RelationGetIndexList(heap)) {
            let index = pg_sys::index_open(cell.oid_value, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let form = &*(*index).rd_index;
            let keys = form.indkey.values.as_slice(form.indnatts as usize);
            if (*(*index).rd_rel).relam == pg_sys::GIN_AM_OID
                && form.indisvalid
                && form.indnatts == 1
                && keys[0] == 0
                && pg_sys::RelationGetIndexPredicate(index).is_null()
            {
                let exprs = pg_sys::RelationGetIndexExpressions(index);
                let first = crate::catalog::cells(exprs).first().map(|c| c.ptr_value as *mut pg_sys::Node);
                out.extend(first.and_then(|e| read(cell.oid_value, e)));
            }
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        }
    }
    out
}

/// The SQL text of a similarity index's text expression, as the current search_path prints it
/// (`simdup_similar`'s: pg_catalog, names outside it qualified).
///
/// # Safety
/// `heap` is an open relation and `body` an expression over it.
unsafe fn expression_sql(heap: pg_sys::Relation, body: *mut pg_sys::Node) -> String {
    // SAFETY: the caller guarantees `heap` is open, so rd_rel and its name are valid, and that
    // `body` is an expression over it; deparse_expression returns a palloc'd C string.
    unsafe {
        let context = pg_sys::deparse_context_for((*(*heap).rd_rel).relname.data.as_ptr(), (*heap).rd_id);
        CStr::from_ptr(pg_sys::deparse_expression(body, context, false, false)).to_string_lossy().into_owned()
    }
}

/// `_simdup_similar_indexes(tbl regclass)`: the valid similarity indexes of a table, oldest
/// first, each with its text expression (SQL, as the caller's search_path prints it), k, bands
/// and rows ([`similarity_indexes`]), then the similarity dedup trigger's short-text indexes
/// ([`short_indexes`]) with k = 3 and their bands and rows, then its containment indexes
/// ([`key_indexes`]) with their k and NULL bands and rows. Declared in sql/similar.sql (its
/// argument is a regclass).
#[pg_extern(sql = false)]
#[allow(clippy::type_complexity)]
fn _simdup_similar_indexes(
    tbl: pg_sys::Oid,
) -> TableIterator<
    'static,
    (
        name!(index, pg_sys::Oid),
        name!(text_expr, String),
        name!(k, i32),
        name!(bands, Option<i32>),
        name!(rows, Option<i32>),
    ),
> {
    let mut out = Vec::new();
    // SAFETY: in a transaction; the table is opened and closed here under AccessShareLock.
    unsafe {
        let heap = pg_sys::try_relation_open(tbl, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        if heap.is_null() {
            return TableIterator::new(out);
        }
        for ix in similarity_indexes(heap) {
            out.push((ix.oid, expression_sql(heap, ix.body), ix.k, Some(ix.bands as i32), Some(ix.rows as i32)));
        }
        // The dedup trigger's short-text indexes, as indexes of 3-shingle bands.
        for ix in short_indexes(heap) {
            let (bands, rows) = crate::similarity::minhash::short_banding_of(ix.threshold);
            let k = simdup_core::similarity::SHORT_SHINGLE as i32;
            out.push((ix.oid, expression_sql(heap, ix.body), k, Some(bands as i32), Some(rows as i32)));
        }
        // The dedup trigger's containment indexes: sketches and prefixes, not bands.
        for ix in key_indexes(heap) {
            out.push((ix.oid, expression_sql(heap, ix.body), ix.k, None, None));
        }
        pg_sys::relation_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
    TableIterator::new(out)
}

/// `simdup_similar(tbl regclass, query text, threshold float8 DEFAULT 0.5, min_recall float8
/// DEFAULT 0.99) RETURNS TABLE (ctid tid, similarity float8)`: the rows of `tbl` whose
/// `jaccard(text, query, k) >= threshold`, most similar first, ties by ctid. Declared in
/// sql/similar.sql (a regclass argument; search_path pinned to pg_catalog, pg_temp, and
/// enable_seqscan off: the bands expression in a sequential scan's filter would sign every row,
/// which the planner cannot see).
///
/// The index: the oldest similarity index whose S-curve reaches `min_recall` at `threshold`
/// (55000 without any, 22023 when none reaches it, 0A000 on a Citus distributed table, whose
/// ctids name no row). The search: the rows sharing a band value with the query, each verified
/// with `jaccard`, in one query over SPI as the caller.
#[pg_extern(sql = false)]
fn simdup_similar(
    tbl: pg_sys::Oid,
    query: &str,
    threshold: f64,
    min_recall: f64,
) -> TableIterator<'static, (name!(ctid, pg_sys::ItemPointerData), name!(similarity, f64))> {
    let (threshold, min_recall) = similarity_target(threshold, min_recall);
    let search = chosen_index(tbl, threshold, min_recall);
    let set = char_set(query, search.k as usize);
    if set.is_empty() {
        return TableIterator::new(Vec::new()); // no shingles: similar to nothing
    }
    let bands = set_bands(&set, search.bands, search.rows);
    let set: Vec<i64> = set.into_iter().map(|h| h as i64).collect();
    TableIterator::new(run_search(&search, set, bands, threshold))
}

/// The search `simdup_similar` runs through the index it chose.
struct Search {
    /// The table, as regclass prints it with simdup_similar's search_path.
    table: String,
    /// The index's text expression, likewise.
    expr: String,
    k: i32,
    bands: usize,
    rows: usize,
}

/// The text of `regclass` `relid` as the current search_path prints it.
fn regclass_text(relid: pg_sys::Oid) -> String {
    // SAFETY: regclassout takes an OID datum and returns a palloc'd C string.
    unsafe {
        pgrx::direct_function_call::<&CStr>(pg_sys::regclassout, &[Some(pg_sys::Datum::from(relid))])
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// The oldest similarity index of `tbl` whose S-curve reaches `min_recall` at `threshold`, and
/// the query that searches through it; the errors of `simdup_similar` otherwise.
fn chosen_index(tbl: pg_sys::Oid, threshold: f64, min_recall: f64) -> Search {
    let table = regclass_text(tbl);
    // SAFETY: in a transaction; the table is opened and closed here under AccessShareLock (a
    // relation dropped since the call was planned has no indexes).
    let (indexes, chosen) = unsafe {
        let heap = pg_sys::try_relation_open(tbl, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let indexes = if heap.is_null() { Vec::new() } else { similarity_indexes(heap) };
        let chosen = indexes
            .iter()
            .find(|ix| mh::s_curve(threshold, ix.bands, ix.rows) >= min_recall)
            .map(|ix| (expression_sql(heap, ix.body), ix.k, ix.bands, ix.rows));
        if !heap.is_null() {
            pg_sys::relation_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        }
        (indexes, chosen)
    };
    let Some((expr, k, bands, rows)) = chosen else {
        let Some(&SimilarityIndex { oid: last, bands: b, rows: r, .. }) = indexes.last() else {
            Error::new(Code::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, format!("table {table} has no similarity index"))
                .hint("Call simdup_enable_similar(table, text_column, threshold) first.")
                .raise()
        };
        Error::new(
            Code::ERRCODE_INVALID_PARAMETER_VALUE,
            format!(
                "the similarity index {} finds pairs of similarity {threshold} with probability {:.4}, below min_recall {min_recall}",
                regclass_text(last),
                mh::s_curve(threshold, b, r),
            ),
        )
        .hint(format!(
            "Search at a threshold of at least the one the index was made for, or add an index for this one: simdup_enable_similar({}, text_column, {threshold}).",
            pgrx::spi::quote_literal(&table),
        ))
        .raise()
    };
    if crate::dedup::placement::is_distributed(tbl) {
        Error::new(Code::ERRCODE_FEATURE_NOT_SUPPORTED, format!("simdup_similar is not supported on distributed table {table}"))
            .detail("It returns ctids, which do not identify a row across shards.")
            .hint(format!(
                "Query the table instead (Citus runs it on every shard, each through its similarity index): \
                 SELECT key, jaccard({expr}, q, {k}) AS similarity FROM {table} WHERE jaccard({expr}, q, {k}) >= {threshold} ORDER BY similarity DESC"
            ))
            .raise()
    }
    Search { table, expr, k, bands, rows }
}

/// At most this many searches keep their plans in a backend (one per table and index; more are
/// planned on every call).
const MAX_KEPT_PLANS: usize = 64;

thread_local! {
    /// `simdup_similar`'s kept plans (`SPI_keepplan`), by search (see [`run_search`]). A plan
    /// is never freed while the backend lives (a call in progress may be running it);
    /// PostgreSQL's plan cache replans it when the table or its indexes change.
    static PLANS: RefCell<HashMap<String, Plan>> = RefCell::new(HashMap::new());
}

/// A plan kept by `SPI_keepplan` (it lives in its own memory context until freed).
struct Plan(pg_sys::SPIPlanPtr);

/// The query of a search: $1 the query's shingle set, $2 its band values, $3 the threshold.
fn search_sql(search: &Search) -> String {
    let Search { table, expr, k, bands, rows } = search;
    let ext = crate::catalog::extension_schema();
    format!(
        "SELECT s.ctid, s.similarity FROM (\
           SELECT t.ctid, {ext}.jaccard({ext}.shingles({expr}, {k}), $1) AS similarity \
           FROM {table} t WHERE {ext}._simdup_similar_bands({expr}, {k}, {bands}, {rows}) OPERATOR(pg_catalog.&&) $2 OFFSET 0) s \
         WHERE s.similarity OPERATOR(pg_catalog.>=) $3 ORDER BY s.similarity DESC, s.ctid"
    )
}

/// Runs `simdup_similar`'s search with its three arguments and returns (ctid, similarity) of
/// each row. The plan is kept by the search's table, expression, k, bands and rows, and the
/// extension's OID (its schema is in the query).
fn run_search(search: &Search, set: Vec<i64>, bands: Vec<i64>, threshold: f64) -> Vec<(pg_sys::ItemPointerData, f64)> {
    use pgrx::{FromDatum, IntoDatum};
    // SAFETY: a catalog lookup by name.
    let extension = unsafe { pg_sys::get_extension_oid(c"simdup".as_ptr(), false) };
    let key = format!(
        "{}\0{}\0{}\0{}\0{}\0{}",
        u32::from(extension),
        search.table,
        search.expr,
        search.k,
        search.bands,
        search.rows
    );
    let kept = PLANS.with_borrow(|plans| plans.get(&key).map(|p| p.0));
    let sql = if kept.is_none() { search_sql(search) } else { String::new() };
    Spi::connect(|_client| {
        // SAFETY: SPI is connected for the closure; the plan is prepared with the three argument
        // types given here and executed with three datums of those types; SPI_tuptable holds
        // SPI_processed rows of two columns (tid, float8), read before the connection ends (the
        // tids are copied out).
        unsafe {
            let plan = kept.unwrap_or_else(|| {
                let text = CString::new(sql.as_str()).unwrap_or_default();
                let mut types = [pg_sys::INT8ARRAYOID, pg_sys::INT8ARRAYOID, pg_sys::FLOAT8OID];
                let plan = pg_sys::SPI_prepare_cursor(
                    text.as_ptr(),
                    3,
                    types.as_mut_ptr(),
                    pg_sys::CURSOR_OPT_GENERIC_PLAN as i32,
                );
                if plan.is_null() {
                    Error::new(Code::ERRCODE_INTERNAL_ERROR, "could not prepare simdup_similar's search").raise()
                }
                PLANS.with_borrow_mut(|plans| {
                    if plans.len() < MAX_KEPT_PLANS && pg_sys::SPI_keepplan(plan) == 0 {
                        plans.insert(key.clone(), Plan(plan));
                    }
                });
                plan
            });
            let datum = |d: Option<pg_sys::Datum>| d.unwrap_or(pg_sys::Datum::from(0usize)); // never None here
            let mut values = [datum(set.into_datum()), datum(bands.into_datum()), datum(threshold.into_datum())];
            let nulls = [b' ' as c_char; 3];
            let rc = pg_sys::SPI_execute_plan(plan, values.as_mut_ptr(), nulls.as_ptr(), true, 0);
            if rc != pg_sys::SPI_OK_SELECT as i32 {
                Error::new(Code::ERRCODE_INTERNAL_ERROR, format!("simdup_similar's search failed (SPI result {rc})"))
                    .raise()
            }
            let table = pg_sys::SPI_tuptable;
            let mut out = Vec::with_capacity(pg_sys::SPI_processed as usize);
            for i in 0..pg_sys::SPI_processed as usize {
                let row = *(*table).vals.add(i);
                let mut null = false;
                let tid = pg_sys::SPI_getbinval(row, (*table).tupdesc, 1, &mut null);
                let tid = *(tid.cast_mut_ptr::<pg_sys::ItemPointerData>());
                let similarity = pg_sys::SPI_getbinval(row, (*table).tupdesc, 2, &mut null);
                out.push((tid, f64::from_datum(similarity, null).unwrap_or(0.0)));
            }
            out
        }
    })
}
