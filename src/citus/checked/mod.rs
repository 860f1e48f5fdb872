//! The checked write of one row into a Citus distributed table, on the coordinator:
//! `_simdup_checked_insert(tbl, row jsonb)`, which `simdup_insert` and `simdup_insert_select`
//! (sql/dedup.sql) call for each row.
//!
//! A shard's dedup trigger sees that shard only ([`crate::citus::shard`]), so the check is made here,
//! with what every node shares (docs/citus.md, "Dedup across shards"):
//!
//! 1. the fingerprint of the text the row will store;
//! 2. its record as a row in progress on the coordinator, then a wait for the transactions in
//!    progress with an earlier record of a near-duplicate candidate of it ([`pending`]: the
//!    workers' snapshots see committed rows only, so the coordinator records the rows written
//!    until their transactions end; the row's lock stripes are taken only around its record, or
//!    to commit when there is no room for it);
//! 3. one query over every shard for the near-duplicate with the smallest key; READ COMMITTED,
//!    so each worker's snapshot is taken after the locks are held;
//! 4. the outcome the trigger would give ([`crate::dedup::trigger::duplicate_error`] for reject, skip,
//!    or mark with `dup_of`), then the INSERT.
//!
//! The INSERT runs **as the table's owner**, with `simdup.checked_write` naming the table, and
//! the shard trigger lets a write through only when both hold ([`crate::citus::shard::passes_unchecked`]).
//! `simdup.checked_write` is an ordinary setting — Citus must propagate it — so it proves
//! nothing alone: a writer could set it with `SET LOCAL`, `ALTER ROLE … SET` or `PGOPTIONS`.
//! The owner's identity is what a writer cannot take, and the owner could disable the trigger
//! anyway. Everything the check depends on is read here (the trigger's configuration, Citus's
//! metadata, the isolation level), never taken from the caller, so calling this function
//! directly gives exactly a checked write.
//!
//! While it acts as the owner, nothing of the caller's runs: the row is data, the statements
//! are built here with every name qualified, `search_path` is `pg_catalog, pg_temp`, and the
//! security context is restricted (as for VACUUM's index functions). Before that, the caller's
//! own rights are checked: INSERT on the table or on every column written.
//!
//! The rows come as values the writer's statement made with the writer's settings; they cross to
//! the workers, and back, as text, which Citus writes with the coordinator's output functions and
//! a worker reads with its own settings. The write's statements therefore run with the settings
//! that decide that text pinned on both sides ([`pin_transfer`]), so that every value is stored
//! as the writer's statement gave it, and as it was checked.

mod batch;
pub(crate) mod pending;
mod probes;
mod row;
mod search;
mod settings;
mod target;
mod types;
mod update;

pub(crate) use batch::*;
pub(crate) use row::*;
pub(crate) use settings::*;
pub(crate) use target::*;
pub(crate) use types::{Outcome, Returned};
pub(crate) use update::*;
