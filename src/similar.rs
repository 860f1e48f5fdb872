//! Verified similarity search: the rows whose exact character-shingle Jaccard similarity with a
//! query is at least a threshold (`simdup_similar`, sql/similar.sql). Candidates come from MinHash
//! LSH bands in a GIN index whose S-curve is chosen for a recall target at the threshold
//! (`simdup_core::minhash::choose_bands_for_recall`); every candidate is verified with
//! `jaccard()`, so precision is exact and recall is the S-curve's.
//!
//! Everything but the choice of bands and the argument check is SQL (sql/similar.sql), built from
//! the MinHash functions of src/minhash.rs.

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::args::similarity_target;
use crate::errors::invalid_parameter;
use simdup_core::minhash as mh;

/// Bands × rows (bands × rows ≤ n) under which a pair of Jaccard similarity `threshold` becomes
/// a candidate with probability at least `recall`, the steepest such curve (fewest false
/// candidates below the threshold), with its approximate threshold `(1/bands)^(1/rows)`.
#[pg_extern(immutable, strict, parallel_safe, name = "minhash_choose_bands")]
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

extension_sql!(
    "COMMENT ON FUNCTION minhash_choose_bands(integer, double precision, double precision) IS 'simdup: bands and rows (bands*rows <= n) under which a pair of Jaccard similarity threshold becomes a candidate with probability at least recall (minhash_s_curve(threshold, bands, rows) >= recall), the steepest such curve (smallest false-positive area below the threshold), with its approximate threshold (1/bands)^(1/rows); for verified searches (simdup_similar), see docs/similar.md';",
    name = "comment_minhash_choose_bands_recall",
    requires = [minhash_choose_bands_for_recall]
);

/// `threshold` itself when it is a valid threshold of `simdup_similar` (0 < t ≤ 1) and `recall`
/// a valid recall (0 < r < 1); 22023 otherwise. For the handwritten SQL.
#[pg_extern(immutable, strict, parallel_safe)]
fn _simdup_check_similarity(threshold: f64, recall: f64) -> f64 {
    similarity_target(threshold, recall).0
}

extension_sql!(
    "COMMENT ON FUNCTION _simdup_check_similarity(double precision, double precision) IS 'simdup (internal): the threshold when it is a valid Jaccard threshold (0 < t <= 1) and recall a valid recall (0 < r < 1); 22023 otherwise';",
    name = "comment__simdup_check_similarity",
    requires = [_simdup_check_similarity]
);

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

/// The similarity indexes of an open table, oldest first, read from their expressions in the
/// catalog ([`crate::search::similarity::bands_expression`]): the one reader for
/// `_simdup_similar_indexes` and the dedup trigger.
///
/// # Safety
/// `heap` is an open relation, in a transaction.
pub(crate) unsafe fn similarity_indexes(heap: pg_sys::Relation) -> Vec<SimilarityIndex> {
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
                if let Some((body, k, bands, rows)) = first.and_then(|e| crate::search::similarity::bands_expression(e))
                {
                    out.push(SimilarityIndex { oid: cell.oid_value, body, k, bands, rows });
                }
            }
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        }
    }
    out
}

/// `_simdup_similar_indexes(tbl regclass)`: the valid similarity indexes of a table, oldest
/// first, each with its text expression (SQL, as the caller's search_path prints it), k, bands
/// and rows ([`similarity_indexes`]). Declared in sql/similar.sql (its argument is a regclass).
#[pg_extern(sql = false)]
#[allow(clippy::type_complexity)]
fn _simdup_similar_indexes(
    tbl: pg_sys::Oid,
) -> TableIterator<
    'static,
    (name!(index, pg_sys::Oid), name!(text_expr, String), name!(k, i32), name!(bands, i32), name!(rows, i32)),
> {
    let mut out = Vec::new();
    // SAFETY: in a transaction; the table is opened and closed here under AccessShareLock.
    unsafe {
        let heap = pg_sys::try_relation_open(tbl, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        if heap.is_null() {
            return TableIterator::new(out);
        }
        let context = pg_sys::deparse_context_for((*(*heap).rd_rel).relname.data.as_ptr(), tbl);
        for ix in similarity_indexes(heap) {
            let text = std::ffi::CStr::from_ptr(pg_sys::deparse_expression(ix.body, context, false, false));
            out.push((ix.oid, text.to_string_lossy().into_owned(), ix.k, ix.bands as i32, ix.rows as i32));
        }
        pg_sys::relation_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
    TableIterator::new(out)
}
