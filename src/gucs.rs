//! Configuration parameters (`simdup.*`). The statics are private; read them with the getters.

use std::ffi::CStr;

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

static MAX_DISTANCE: GucSetting<i32> = GucSetting::<i32>::new(simdup_core::DEFAULT_MAX_DISTANCE as i32);
static INDEX_SEARCH: GucSetting<bool> = GucSetting::<bool>::new(true);

/// Registers the parameters. Called once from `_PG_init`.
pub fn init() {
    GucRegistry::define_int_guc(
        c"simdup.max_distance",
        c"Default maximum Hamming distance between near-duplicate SimHash fingerprints.",
        c"Used where a function's max_distance argument is omitted. Chosen by measurement on real Chinese and English news; see the README.",
        &MAX_DISTANCE,
        0,
        64,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"simdup.index_search",
        c"Lets the planner serve hamming(fp, q) <= k with simdup's block indexes.",
        c"When on, a scan with such a condition on a column with simdup block indexes may use a Tid Scan over _simdup_tids; the condition stays as its filter. Off: plans as without simdup.",
        &INDEX_SEARCH,
        GucContext::Userset,
        GucFlags::default(),
    );
    let prefix: &CStr = c"simdup";
    // SAFETY: called from _PG_init, in the backend's main thread.
    unsafe { pgrx::pg_sys::MarkGUCPrefixReserved(prefix.as_ptr()) };
}

/// `simdup.max_distance`.
pub fn max_distance() -> i32 {
    MAX_DISTANCE.get()
}

/// `simdup.index_search`.
pub fn index_search() -> bool {
    INDEX_SEARCH.get()
}
