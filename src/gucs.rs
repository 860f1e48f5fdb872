//! Configuration parameters (`simdup.*`). The statics are private; read them with the getters.

use std::ffi::CStr;

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

static MAX_DISTANCE: GucSetting<i32> =
    GucSetting::<i32>::new(simdup_core::DEFAULT_MAX_DISTANCE as i32);

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
    let prefix: &CStr = c"simdup";
    unsafe { pgrx::pg_sys::MarkGUCPrefixReserved(prefix.as_ptr()) };
}

/// `simdup.max_distance`.
#[allow(dead_code)]
pub fn max_distance() -> i32 {
    MAX_DISTANCE.get()
}
