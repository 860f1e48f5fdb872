//! Verified similarity search: the rows whose exact character-shingle Jaccard similarity with a
//! query is at least a threshold (`simdup_similar`, sql/similar.sql). Candidates come from MinHash
//! LSH bands in a GIN index whose S-curve is chosen for a recall target at the threshold
//! (`simdup_core::minhash::choose_bands_for_recall`); every candidate is verified with
//! `jaccard()`, so precision is exact and recall is the S-curve's.
//!
//! Everything but the choice of bands and the argument check is SQL (sql/similar.sql), built from
//! the MinHash functions of src/minhash.rs.

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
