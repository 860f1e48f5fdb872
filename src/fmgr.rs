//! The fmgr info function of simdup's hand-written C functions: those SQL declares by their C
//! name instead of through `#[pg_extern]` (the dedup triggers, which need the raw TriggerData;
//! the searches that read their call's expression; the planner support function).

/// Declares `$finfo` (`pg_finfo_<function>`), which PostgreSQL's function manager looks up
/// beside a C function to learn its calling convention: version 1, as C's
/// `PG_FUNCTION_INFO_V1(function)` declares it.
macro_rules! finfo_v1 {
    ($finfo:ident) => {
        #[unsafe(no_mangle)]
        #[doc(hidden)]
        pub extern "C" fn $finfo() -> &'static pgrx::pg_sys::Pg_finfo_record {
            const V1: pgrx::pg_sys::Pg_finfo_record = pgrx::pg_sys::Pg_finfo_record { api_version: 1 };
            &V1
        }
    };
}
pub(crate) use finfo_v1;
