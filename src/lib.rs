//! simdup: near-duplicate detection for Chinese and English text inside PostgreSQL.
//!
//! This crate is the thin SQL layer over `simdup-core`, one module per concern; the README's
//! "Architecture" section maps every file.

#![deny(unsafe_op_in_unsafe_fn)]

use pgrx::prelude::*;

mod access;
mod args;
mod batch;
mod calibrate;
mod catalog;
mod citus;
mod compat;
mod copy;
mod dedup;
mod errors;
mod explain;
mod fingerprint;
mod fmgr;
mod gucs;
mod hooks;
mod operators;
mod search;
mod shingles;
mod similarity;
mod triggers;

pg_module_magic!();

/// Runs when the library is loaded: in the postmaster when listed in
/// `shared_preload_libraries`, otherwise in a backend on first use.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    let preloading = unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress };
    // (Before gucs::init reserves the prefix, which drops unknown simdup.* settings.)
    if preloading {
        gucs::init_preloaded();
    }
    gucs::init();
    hooks::init();
    // Listed in shared_preload_libraries: load jieba's dictionary and the IDF tables once, in
    // the postmaster, so that every backend shares them copy-on-write and no first call pays
    // for them. Otherwise they load lazily on first use in each backend. The Citus checked
    // write's shared memory is requested then too (src/citus/checked/pending.rs).
    if preloading {
        simdup_core::features::preload();
        citus::checked::pending::init();
    }
}

// Hand-written SQL, one file per concern, each object's CREATE and COMMENT side by side; pgrx
// generates none (`#[pg_extern(sql = "")]` or `sql = false`). sql/functions.sql declares the
// functions implemented in Rust (and the operator `<~>`), installed first (`bootstrap`) so that
// every other file may use them; the trigger functions and those only one feature's SQL calls
// (explain, calibrate, simdup_similar) are declared in that feature's file.
extension_sql_file!("../sql/functions.sql", name = "functions", bootstrap);
extension_sql_file!("../sql/tables.sql", name = "tables");
extension_sql_file!("../sql/search.sql", name = "search_sql", requires = ["tables"]);
extension_sql_file!("../sql/enable.sql", name = "enable", requires = ["tables", "search_sql", "dedup_sql"]);
extension_sql_file!("../sql/dedup.sql", name = "dedup_sql", requires = ["tables"]);
extension_sql_file!("../sql/batch.sql", name = "batch_sql", requires = ["enable"]);
extension_sql_file!("../sql/similar.sql", name = "similar_sql", requires = ["enable"]);
extension_sql_file!("../sql/explain.sql", name = "explain_sql", requires = ["enable"]);
extension_sql_file!("../sql/calibrate.sql", name = "calibrate_sql", requires = ["enable", "similar_sql"]);

#[cfg(any(test, feature = "pg_test"))]
mod tests;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
