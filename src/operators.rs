//! Hamming distance between fingerprints: `hamming(a, b)` and the operator `<~>`, with the
//! support function that lets the planner serve `hamming(fp, q) <= k` with the block indexes.

use pgrx::pg_sys;
use pgrx::prelude::*;

/// Number of bits in which two 64-bit fingerprints differ (0..64); also the procedure of the
/// operator `<~>` (sql/functions.sql).
#[pg_extern(sql = "")]
pub(crate) fn hamming(a: i64, b: i64) -> i32 {
    simdup_core::hamming(a as u64, b as u64) as i32
}

// Declared by hand in sql/functions.sql (`AS 'MODULE_PATHNAME', '_simdup_hamming_support'`),
// with `ALTER FUNCTION ... SUPPORT` for `hamming` and `jaccard(text, text, integer)`.
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
