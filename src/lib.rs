//! simdup: near-duplicate detection for Chinese and English text inside PostgreSQL.
//!
//! This crate is the thin SQL layer over `simdup-core`: one module per concern.

use pgrx::prelude::*;

mod dedup;
mod errors;
mod functions;
mod gucs;
mod minhash;
mod operators;
mod search;

pg_module_magic!();

/// Runs when the library is loaded: in the postmaster when listed in
/// `shared_preload_libraries`, otherwise in a backend on first use.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    gucs::init();
    // Listed in shared_preload_libraries: load jieba's dictionary and the IDF tables once, in
    // the postmaster, so that every backend shares them copy-on-write and no first call pays
    // for them. Otherwise they load lazily on first use in each backend.
    if unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        simdup_core::features::preload();
    }
}

// Near-duplicate search on B-tree indexes of the four blocks (issue #3): the SQL API.
extension_sql_file!(
    "../sql/search.sql",
    name = "search",
    requires = [
        functions::simhash,
        functions::simhash_block,
        operators::hamming,
        search::simdup_probe,
        search::simdup_fingerprint_pairs,
        search::simdup_max_distance,
        search::simdup_fingerprint_components,
    ]
);

// Dedup on insert (issue #4): the trigger function and what simdup_enable needs for it.
extension_sql_file!("../sql/dedup.sql", name = "dedup", requires = ["search", dedup::simdup_lock_stripes]);

// Comments on every public object, once they all exist.
extension_sql_file!("../sql/comments.sql", name = "comments", finalize);

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
