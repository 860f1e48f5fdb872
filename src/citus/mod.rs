//! Citus: dedup of distributed tables, over the dedup engine of [`crate::dedup`] (which does not
//! know Citus).
//!
//! * [`shard`]: whether a relation is a shard, and which writes its dedup trigger lets through
//!   (registered with the engine as its [`crate::dedup::placement`]);
//! * [`checked`]: the checked write of rows into a distributed table, as the table's owner;
//! * [`plan`]: the planner side (called from the planner hook, src/hooks.rs): plain `INSERT`
//!   and text-changing `UPDATE` planned under a custom scan;
//! * [`insert_scan`], [`update_scan`]: the writes of the custom scans `SimdupCheckedInsert` and
//!   `SimdupCheckedUpdate`; [`scan`]: their methods and the callbacks both share;
//! * [`returning`]: `RETURNING` of those writes;
//! * [`node`]: the plan-node helpers both scans share; [`rules`]: which writes are checked,
//!   what they refuse, the batch sizes;
//! * `COPY … FROM` into such a table is read by src/copy.rs and written through [`plan`].
//!
//! Plain writes into a Citus distributed dedup table, on its coordinator: `INSERT` (one row,
//! many rows, `INSERT … SELECT`, prepared or from a function), `COPY … FROM` and `UPDATE`s that
//! change the checked column, each row checked across shards by the checked write
//! ([`crate::citus::checked`]), in the statement's row order, with the answers of the single-node
//! trigger.
//!
//! * **`INSERT`.** A planner hook (installed after Citus's, so it runs first and chains it)
//!   plans the statement's rows as a query of their own — the INSERT's target list after the
//!   rewriter filled in the defaults of omitted columns, so defaults are evaluated as the writer
//!   — and puts a custom scan, `SimdupCheckedInsert`, on top: it pulls the rows and writes them
//!   through the checked write, up to [`BATCH_ROWS`] at a time where the table allows it
//!   ([`crate::citus::checked::write_batch`]), else one by one; the command tag counts the rows stored
//!   (`INSERT 0 n`).
//! * **`COPY … FROM`.** A `ProcessUtility` hook (also before Citus's) reads the rows with
//!   PostgreSQL's own COPY reader (`BeginCopyFrom` / `NextCopyFrom`: every format and option,
//!   defaults of the columns left out) and writes them by `INSERT … SELECT`, [`BATCH_ROWS`] at
//!   a time, which the planner hook plans as above (`COPY n`). The same hook writes a COPY into
//!   a plain dedup table that [`crate::dedup::readahead::copies_ahead`] by `INSERT … SELECT`s of large
//!   batches, which [`crate::dedup::readahead`] reads ahead for the bulk check.
//! * **`UPDATE`** that assigns the checked column (the text, or an adopted fingerprint). The
//!   planner hook plans the rows it changes as a SELECT, as the writer — each row's ctid, key
//!   and checked value as they are, then the new values — under the custom scan
//!   `SimdupCheckedUpdate`, which checks them up to [`BATCH_ROWS`] at a time where the table
//!   allows it ([`crate::citus::checked::update_batch`]), else one by one
//!   ([`crate::citus::checked::update_row`]): each row checked against every shard but itself (and,
//!   in a batch, against the batch's earlier new texts instead of their old ones), then
//!   written by key *and* ctid, so that a row another transaction changed meanwhile is not
//!   overwritten: a row at a time, it is read again as it is now (the rows' query, deparsed at
//!   planning, for its key: `UpdateRows::read_again` in [`update_scan`]) and checked and written again, as READ
//!   COMMITTED re-reads a row; in a batch the statement raises 40001. A row a join yields twice
//!   is updated once (`UPDATE n`). UPDATEs of other columns are Citus's: the shards' triggers
//!   let them through.
//! * **`RETURNING`** (of an INSERT or such an UPDATE): the checked write's own statement returns
//!   the rows as the shards stored them; the custom scan keeps them ([`checked::Returned`]: a tuplestore)
//!   and then scans them as rows of the target — appended to the plan's relations for it — with
//!   the RETURNING list as its target list, after checking the writer's SELECT on the columns
//!   it reads. Refused with 0A000: a sub-SELECT, a system column, a column of another relation,
//!   (PostgreSQL 18) `old` values.
//! * **`INSERT … ON CONFLICT … DO NOTHING`**: the clause is appended to the checked write's
//!   INSERT, each row checked first, as a BEFORE trigger runs before the conflict check. A row
//!   it leaves out must be no earlier row to the rows after it: a batch is written in runs, each
//!   ending before a row its rows would decide ([`crate::citus::checked::write_batch`]).
//!
//! The writer's INSERT and UPDATE privileges are checked by the checked write, per column
//! written, as the executor would. Refused with 0A000: `ON CONFLICT … DO UPDATE`, `COPY …
//! WHERE`, `COPY … (ON_ERROR)`, a data-modifying `WITH` around an UPDATE, and an UPDATE
//! assigning several columns from one sub-SELECT. Writes through a worker the shards' triggers
//! refuse ([`crate::citus::shard`]). The checked write's own INSERT or UPDATE (`simdup.checked_write`
//! naming the table, as its owner) is left to Citus: it is what the shards' triggers let
//! through.
//!
//! **Settings.** The rows' values are made by the writer's statement with the writer's settings
//! (its literals, parameters, defaults and COPY's reader). Where they then cross to the workers
//! as text — the checked write's statements, and the query of the rows itself when it reads
//! Citus tables (an UPDATE's always: Citus writes its constants into the shard queries, at
//! planning or when the scan begins, and reads the shards' rows back as text) — the settings
//! that decide that text are pinned ([`crate::citus::checked::pin_transfer`]).

pub(crate) mod checked;
mod insert_scan;
pub(crate) mod node;
mod plan;
mod returning;
pub(crate) mod rules;
mod scan;
pub(crate) mod shard;
mod update_scan;

pub(crate) use plan::plan_if_checked;

/// Registers the custom scans (so that a plan holding one can be read back from its text form)
/// and the shard recognition with the dedup engine. Called once from `_PG_init`
/// (src/hooks.rs, which installs the hooks that call [`plan`]).
pub(crate) fn init() {
    scan::register();
    crate::dedup::placement::register(&shard::PLACEMENT);
}
