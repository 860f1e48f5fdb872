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
//!
//! The other dedup trigger, `simdup_similar_dedup_trigger` of `simdup_enable_similar(...,
//! on_duplicate => ...)` (near-duplicates by verified Jaccard similarity), lives with the rest of
//! similarity in src/similarity/ and uses this engine's [`event`], [`lookup`], [`window`],
//! [`placement`] and [`tuple`]; the engine does not know it.//!
//! Why two concurrent near-duplicates can never both land — the lock stripes, the fresh
//! snapshot, deadlocks and the bound on locks — is argued in docs/dedup.md ("Under
//! concurrency"); `lookup` implements it step by step.

pub(crate) mod bulk;
pub(crate) mod config;
pub(crate) mod event;
pub(crate) mod lookup;
pub(crate) mod placement;
pub(crate) mod readahead;
pub(crate) mod trigger;
pub(crate) mod tuple;
mod verify;
pub(crate) mod window;

/// Registers [`readahead`]'s custom scan. Called once from `_PG_init` (src/hooks.rs, which
/// installs the hooks that call the read-ahead).
pub(crate) fn init() {
    readahead::init();
}
