//! Hamming distance between fingerprints: `hamming(a, b)` and the operator `<~>`, with the
//! support function that lets the planner serve `hamming(fp, q) <= k` with the block indexes.

use pgrx::pg_sys;
use pgrx::prelude::*;

/// Number of bits in which two 64-bit fingerprints differ (0..64).
#[pg_operator(immutable, strict, parallel_safe)]
#[opname(<~>)]
#[commutator(<~>)]
pub(crate) fn hamming(a: i64, b: i64) -> i32 {
    simdup_core::hamming(a as u64, b as u64) as i32
}

crate::fmgr::finfo_v1!(pg_finfo__simdup_hamming_support);

/// The planner support function of `hamming` and `jaccard(text, text, integer)`. It answers no
/// request (returns NULL); what matters is that the planner calls it while simplifying a
/// query's expressions, which loads this library — and so installs the planner step of
/// `crate::search::planner` — before the planner builds the scan paths, even in a session that
/// has not called simdup yet.
///
/// # Safety
/// Called by the function manager; it reads nothing.
#[unsafe(no_mangle)]
#[doc(hidden)]
pub unsafe extern "C-unwind" fn _simdup_hamming_support(_fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    pg_sys::Datum::from(0)
}

extension_sql!(
    r#"
COMMENT ON FUNCTION hamming(bigint, bigint) IS
  'simdup: number of differing bits between two 64-bit fingerprints (0..64); hamming(fp, q) <= k on a column with simdup block indexes is served by them';
COMMENT ON OPERATOR <~> (bigint, bigint) IS
  'simdup: Hamming distance between two 64-bit fingerprints; fp <~> q <= k is served by the block indexes';
CREATE FUNCTION _simdup_hamming_support(internal) RETURNS internal
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_hamming_support';
COMMENT ON FUNCTION _simdup_hamming_support(internal) IS
  'simdup (internal): planner support function of hamming and jaccard(text, text, integer): loads the library, and with it the planner step serving hamming(fp, q) <= k and jaccard(body, q) >= t, before the scan paths are built';
ALTER FUNCTION hamming(bigint, bigint) SUPPORT _simdup_hamming_support;
"#,
    name = "hamming_support",
    requires = [hamming]
);
