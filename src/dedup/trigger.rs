//! The trigger function: protocol checks, then for each new row (or each UPDATE that changes
//! the text or the adopted fingerprint):
//!
//! 1. compute `simhash(NEW.text_column)` (a BEFORE trigger runs before the generated
//!    fingerprint column is computed; the column then gets the same value from simhash's memo);
//!    NULL (text without words) is never a duplicate: the row passes unchecked;
//! 2. [`super::lookup::smallest_key_match`]: lock the stripes, find the near-duplicate with
//!    the smallest key (a statement inserting many rows first asks its copy of the table's
//!    fingerprints in memory, [`super::bulk`], and searches only when that finds a candidate);
//! 3. reject (23505, with the schema, table and constraint name `simdup_dedup` that drivers
//!    read), skip (return NULL) or mark (`NEW.dup_of := key`).

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;

use crate::args::Mode;
use crate::errors::ConstraintError;

use super::bulk;
use super::config::dedup_config;
use super::config::{Config, TRIGGER};
use super::event::{before_row_event, decide, no_duplicate, run, violation, Outcome, RowEvent};
use super::lookup::smallest_key_match;
use super::placement::{self, Gate};
use super::tuple::{bigint_value, columns, text_value};
use super::verify::Verifier;

const INSTALLED_BY: &str = "simdup_dedup_trigger is installed by simdup_enable(tbl, text_column, on_duplicate => ...)";

/// `_simdup_dedup_settings(tbl)`: the mode, k and verification thresholds of `tbl`'s
/// simdup_dedup trigger, read from its arguments ([`Config::parse`]); no row without one. What
/// `simdup_register` records for a table restored without its simdup_tables row.
#[pg_extern(sql = "")]
fn _simdup_dedup_settings(
    tbl: pg_sys::Oid,
) -> TableIterator<
    'static,
    (
        name!(on_duplicate, String),
        name!(max_distance, i32),
        name!(threshold, Option<f64>),
        name!(containment, Option<f64>),
    ),
> {
    // SAFETY: the relation is opened (42P01 if missing) and closed here; its trigger
    // descriptor is valid while it is open.
    let cfg = unsafe {
        let rel = crate::catalog::open_relation(tbl);
        let cfg = dedup_config(rel);
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        cfg
    };
    TableIterator::new(cfg.map(|c| {
        (c.mode.as_str().to_owned(), c.k as i32, c.verify.map(|v| v.threshold), c.verify.and_then(|v| v.containment))
    }))
}

/// The near-duplicate error (23505, constraint simdup_dedup of table `name`): the key it
/// names only to a role that may read it (`may_read_key`), as a unique index's DETAIL.
pub(crate) fn duplicate_error(
    rel: pg_sys::Relation,
    cfg: &Config,
    name: &str,
    key_text: &str,
    distance: u32,
    may_read_key: bool,
) -> ConstraintError {
    let detail = if may_read_key {
        format!(
            "Key ({})=({}) is at Hamming distance {} (max_distance {}).",
            quote_identifier(&cfg.key_column),
            key_text,
            distance,
            cfg.k
        )
    } else {
        format!("An existing row is at Hamming distance {} (max_distance {}).", distance, cfg.k)
    };
    violation(rel, TRIGGER, name, detail)
}

/// What a new row is fingerprinted from: its text, or the fingerprint column it was given.
enum Source {
    Text(Option<String>),
    Fingerprint(Option<i64>),
}

/// The trigger's work, inside pgrx's guard (errors and panics become PostgreSQL errors).
///
/// # Safety
/// Called by [`simdup_dedup_trigger`] with the function manager's `fcinfo`.
#[pg_guard]
unsafe extern "C-unwind" fn fire(fcinfo: pg_sys::FunctionCallInfo, outcome: *mut Option<Outcome>) {
    // SAFETY: before_row_event checks the call; the trigger's relation is open and its tuples
    // valid for the call.
    unsafe {
        let RowEvent { rel, new, old, is_update, args } =
            before_row_event(fcinfo, "simdup_dedup_trigger", INSTALLED_BY);
        // The statement's previous row is written: its check window closes (src/dedup/window.rs).
        super::window::close_previous();
        let cfg = Config::parse(&args);
        let tupdesc = (*rel).rd_att;
        let unchanged = pg_sys::Datum::from(new);
        let cols = columns(rel, &cfg);

        // What NEW fingerprints (its text, or the adopted fingerprint), and whether an UPDATE
        // changed it: an unchanged one passes unchecked.
        let source = match cols.text {
            Some(attnum) => {
                let text = text_value(new, tupdesc, attnum);
                if is_update && text == text_value(old, tupdesc, attnum) {
                    *outcome = Some(Outcome::Row(unchanged));
                    return;
                }
                Source::Text(text)
            }
            None => {
                let fp = bigint_value(new, tupdesc, cols.fp);
                if is_update && fp == bigint_value(old, tupdesc, cols.fp) {
                    *outcome = Some(Outcome::Row(unchanged));
                    return;
                }
                Source::Fingerprint(fp)
            }
        };
        // One part of a distributed table holds part of the rows: only the writes its
        // distribution layer checked pass (src/dedup/placement.rs; src/citus/shard.rs).
        let shard = match placement::gate(rel) {
            Gate::Pass => {
                *outcome = Some(Outcome::Row(unchanged));
                return;
            }
            Gate::Part(table) => Some(table),
            Gate::Whole => None,
        };
        let (fp, text) = match source {
            Source::Text(text) => (text.as_deref().and_then(crate::fingerprint::simhash), text),
            Source::Fingerprint(fp) => (fp, None),
        };
        let Some(fp) = fp else {
            // Featureless text: never a duplicate.
            *outcome = Some(no_duplicate(rel, new, cols.dup_of));
            return;
        };

        let key_attnum = cols.key;
        let exclude = is_update.then(|| (*old).t_self);
        // A statement inserting many rows asks its copy of the table's fingerprints first
        // (src/dedup/bulk.rs); a row with a candidate there, and every other row, searches the
        // indexes.
        if is_update {
            bulk::updated(rel);
        }
        // With verification a candidate decides nothing until its text is read: the bulk
        // check's copy holds fingerprints only, so it may clear a row, never skip one.
        let verifier = match (cfg.verify, text.as_deref(), cols.text) {
            (Some(verify), Some(text), Some(attnum)) => Some(Verifier::new(rel, verify, text, attnum)),
            _ => None,
        };
        let stored_decides = cfg.mode == Mode::Skip && cols.dup_of.is_none() && verifier.is_none();
        let verdict = if is_update || shard.is_some() {
            bulk::Verdict::Search
        } else {
            bulk::check(rel, cols.fp, cfg.k, stored_decides, fp)
        };
        let found = match verdict {
            bulk::Verdict::Clear => None,
            bulk::Verdict::Stored => {
                *outcome = Some(Outcome::Row(pg_sys::Datum::from(0))); // skipped
                return;
            }
            bulk::Verdict::Search => smallest_key_match(rel, &cfg, fp, cols.fp, key_attnum, exclude, verifier.as_ref()),
        };
        if found.is_none() || cols.dup_of.is_some() {
            bulk::passed(rel, fp);
        }
        *outcome = Some(decide(rel, new, cfg.mode, cols.dup_of, key_attnum, shard, found, |name, f, may_read| {
            duplicate_error(rel, &cfg, name, &f.key_text, f.measure, may_read)
        }));
    }
}

// `RETURNS trigger` function, declared in sql/dedup.sql (pgrx's `#[pg_trigger]` hides the raw
// TriggerData this needs: arbitrary key types, the tid of OLD).
crate::fmgr::finfo_v1!(pg_finfo_simdup_dedup_trigger);

/// # Safety
/// Called by the trigger manager.
#[unsafe(no_mangle)]
#[doc(hidden)]
pub unsafe extern "C-unwind" fn simdup_dedup_trigger(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: called by the trigger manager; `fire` is guarded.
    unsafe { run(fcinfo, fire) }
}
