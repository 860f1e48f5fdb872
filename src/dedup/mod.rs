//! Dedup on insert: the row trigger `simdup_dedup_trigger` that
//! `simdup_enable(..., on_duplicate => 'reject' | 'skip' | 'mark')` installs as
//!
//! ```sql
//! CREATE TRIGGER simdup_dedup BEFORE INSERT OR UPDATE ON tbl FOR EACH ROW
//!     EXECUTE FUNCTION simdup_dedup_trigger(mode, k, text_column, fingerprint_column, key_column);
//! ```
//!
//! * [`config`]: the trigger's arguments, written by `simdup_enable` and parsed here by the
//!   same [`config::Config`];
//! * [`tuple`]: reading the new row's text or fingerprint and setting `dup_of`;
//! * [`window`]: the check window of a row, in which it holds its lock stripes;
//! * [`lookup`]: the lock stripes and the search for the near-duplicate with the smallest key;
//! * [`verify`]: a candidate within k confirmed from the two texts (the table's verification);
//! * [`bulk`]: a statement's copy of the table's fingerprints in memory, which clears rows
//!   without a search once it has many;
//! * [`readahead`]: an `INSERT ... SELECT`'s rows read before the first is written, so that
//!   the bulk check knows the batch;
//! * [`trigger`]: the trigger function, its protocol checks and the reject error;
//! * [`placement`]: whether a relation is one part of a distributed table, and which writes its
//!   trigger lets through, as the distribution layer (src/citus, which this engine does not
//!   know) answers it;
//! * [`similar`]: the other dedup trigger, `simdup_similar_dedup_trigger` of
//!   `simdup_enable_similar(..., on_duplicate => ...)`: near-duplicates by verified Jaccard
//!   similarity, candidates from the similarity index, the same lookup and outcomes.
//!
//! Why two concurrent near-duplicates can never both land — the lock stripes, the fresh
//! snapshot, deadlocks and the bound on locks — is argued in docs/dedup.md ("Under
//! concurrency"); `lookup` implements it step by step.

pub(crate) mod bulk;
mod check;
pub(crate) mod config;
mod event;
pub(crate) mod lookup;
pub(crate) mod placement;
pub(crate) mod readahead;
pub(crate) mod similar;
pub(crate) mod trigger;
pub(crate) mod tuple;
mod verify;
mod window;

/// The configuration of a table's SimHash dedup trigger (`simdup_dedup`), read from its
/// arguments as the trigger reads them; None without one.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn simhash_config(rel: pgrx::pg_sys::Relation) -> Option<config::Config> {
    // SAFETY: the caller's.
    unsafe { config::dedup_config(rel) }
}

/// The qualified name of table `tbl` and the configurations of its SimHash and similarity dedup
/// triggers (None where it has none); 42P01 for a missing relation. For `simdup_explain` and
/// `simdup_calibrate`.
pub(crate) fn trigger_configs(
    tbl: pgrx::pg_sys::Oid,
) -> (String, Option<config::Config>, Option<similar::SimilarConfig>) {
    // SAFETY: the relation is opened (42P01 if missing) and closed here; its trigger descriptor
    // is valid while it is open.
    unsafe {
        let rel = crate::catalog::open_relation(tbl);
        let found = (crate::catalog::qualified_name(rel), simhash_config(rel), similar::similar_config(rel));
        pgrx::pg_sys::table_close(rel, pgrx::pg_sys::AccessShareLock as pgrx::pg_sys::LOCKMODE);
        found
    }
}

/// Registers [`readahead`]'s custom scan. Called once from `_PG_init` (src/hooks.rs, which
/// installs the hooks that call the read-ahead).
pub(crate) fn init() {
    readahead::init();
}
