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

use std::ffi::{c_int, CStr};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;

use crate::args::Mode;
use crate::errors::{Code, ConstraintError, Error};

use super::bulk;
use super::config::{Config, TRIGGER};
use super::lookup::{smallest_key_match, Found};
use super::placement::{self, Gate};
use super::tuple::{bigint_value, columns, text_value, with_dup_of};
use super::verify::Verifier;
use crate::catalog::relation_name;

/// 39P01 (trigger protocol violated), saying which function installs the trigger.
pub(super) fn protocol_error(message: &str, installed_by: &str) -> ! {
    Error::new(Code::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED, message).hint(format!("{installed_by}.")).raise()
}

const INSTALLED_BY: &str = "simdup_dedup_trigger is installed by simdup_enable(tbl, text_column, on_duplicate => ...)";

/// The arguments of a trigger.
///
/// # Safety
/// `trigger` is a trigger of an open relation's trigger descriptor.
unsafe fn trigger_args(trigger: &pg_sys::Trigger) -> Vec<String> {
    // SAFETY: tgargs holds tgnargs NUL-terminated strings.
    unsafe {
        (0..trigger.tgnargs as usize)
            .map(|i| CStr::from_ptr(*trigger.tgargs.add(i)).to_string_lossy().into_owned())
            .collect()
    }
}

/// `_simdup_check_dedup(tbl)` (42P01 for a missing relation): the check of the columns that the dedup trigger makes on every
/// row ([`columns`]), made once by `simdup_enable` right after it installs the trigger, so that
/// a configuration the trigger would refuse is refused at once.
#[pg_extern(volatile, strict)]
fn _simdup_check_dedup(tbl: pg_sys::Oid) {
    // SAFETY: the relation is opened (42P01 if missing) and closed here; its trigger
    // descriptor is valid while it is open.
    unsafe {
        let rel = crate::catalog::open_relation(tbl);
        let simhash = dedup_config(rel);
        let similar = super::similar::similar_config(rel);
        if simhash.is_some() && similar.is_some() {
            Error::new(
                Code::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("table \"{}\" cannot have both dedup triggers", relation_name(rel)),
            )
            .detail(format!(
                "Its rows would be checked twice, by SimHash distance ({TRIGGER}) and by Jaccard similarity ({}), and both would write dup_of.",
                super::similar::TRIGGER_SIMILAR
            ))
            .hint("Dedup a table by one of them: simdup_disable(table) or simdup_disable_similar(table) removes the other.")
            .raise();
        }
        if let Some(cfg) = simhash {
            columns(rel, &cfg);
        }
        if let Some(cfg) = similar {
            super::similar::check_columns(rel, &cfg);
        }
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
}

extension_sql!(
    "COMMENT ON FUNCTION _simdup_check_dedup(oid) IS 'simdup (internal): checks the columns the dedup trigger of a table (simdup_dedup or simdup_dedup_similar) reads and writes (exist, types, not a generated adopted fingerprint), as the trigger does on every row, and that the table has not both; simdup_enable and simdup_enable_similar call it after installing the trigger';",
    name = "comment__simdup_check_dedup",
    requires = [_simdup_check_dedup]
);

/// `_simdup_dedup_settings(tbl)`: the mode, k and verification thresholds of `tbl`'s
/// simdup_dedup trigger, read from its arguments ([`Config::parse`]); no row without one. What
/// `simdup_register` records for a table restored without its simdup_tables row.
#[pg_extern(stable, strict)]
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

extension_sql!(
    "COMMENT ON FUNCTION _simdup_dedup_settings(oid) IS 'simdup (internal): on_duplicate, max_distance and the verification thresholds of a table''s simdup_dedup trigger, read from its arguments; no row without one. simdup_register records them';",
    name = "comment__simdup_dedup_settings",
    requires = [_simdup_dedup_settings]
);

/// The configuration of `rel`'s simdup_dedup trigger, if it has one.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn dedup_config(rel: pg_sys::Relation) -> Option<Config> {
    // SAFETY: the caller guarantees an open relation.
    unsafe { trigger_args_named(rel, TRIGGER).map(|args| Config::parse(&args)) }
}

/// The arguments of `rel`'s trigger named `name`, if it has one.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn trigger_args_named(rel: pg_sys::Relation, name: &str) -> Option<Vec<String>> {
    // SAFETY: the trigger descriptor of an open relation is valid while it is open.
    unsafe {
        let desc = (*rel).trigdesc;
        if desc.is_null() {
            return None;
        }
        std::slice::from_raw_parts((*desc).triggers, (*desc).numtriggers as usize)
            .iter()
            .find(|t| CStr::from_ptr(t.tgname).to_bytes() == name.as_bytes())
            .map(|t| trigger_args(t))
    }
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

/// The near-duplicate error of a dedup trigger: 23505 with the schema, table and constraint
/// name (`constraint`, the trigger's) that drivers read.
pub(super) fn violation(rel: pg_sys::Relation, constraint: &str, name: &str, detail: String) -> ConstraintError {
    let message = format!("near-duplicate row violates {constraint} on relation \"{name}\"");
    Error::new(Code::ERRCODE_UNIQUE_VIOLATION, message).detail(detail).for_constraint(rel, constraint)
}

/// What a new row is fingerprinted from: its text, or the fingerprint column it was given.
enum Source {
    Text(Option<String>),
    Fingerprint(Option<i64>),
}

/// What the trigger decided: the row to return, or the near-duplicate error to raise.
pub(super) enum Outcome {
    Row(pg_sys::Datum),
    Duplicate(ConstraintError),
}

/// A dedup trigger's call: the table, the new row, the old one (UPDATE), and the trigger's
/// arguments.
pub(super) struct RowEvent {
    pub rel: pg_sys::Relation,
    pub new: pg_sys::HeapTuple,
    /// The row being updated; null for an INSERT.
    pub old: pg_sys::HeapTuple,
    pub is_update: bool,
    pub args: Vec<String>,
}

/// The call of a dedup trigger: 39P01 unless the trigger manager called `function` BEFORE
/// INSERT OR UPDATE FOR EACH ROW.
///
/// # Safety
/// `fcinfo` is the function manager's call info of a dedup trigger function.
pub(super) unsafe fn before_row_event(
    fcinfo: pg_sys::FunctionCallInfo,
    function: &str,
    installed_by: &str,
) -> RowEvent {
    // SAFETY: the trigger manager passes TriggerData as the context (checked first); its
    // relation, tuples and trigger are valid for the call.
    unsafe {
        if !pgrx::trigger_support::called_as_trigger(fcinfo) {
            protocol_error(&format!("{function}: not called by the trigger manager"), installed_by);
        }
        let td = &*((*fcinfo).context as *const pg_sys::TriggerData);
        let event = td.tg_event;
        let op = event & pg_sys::TRIGGER_EVENT_OPMASK;
        if event & pg_sys::TRIGGER_EVENT_ROW == 0
            || event & pg_sys::TRIGGER_EVENT_TIMINGMASK != pg_sys::TRIGGER_EVENT_BEFORE
            || !(op == pg_sys::TRIGGER_EVENT_INSERT || op == pg_sys::TRIGGER_EVENT_UPDATE)
        {
            protocol_error(&format!("{function} must be fired BEFORE INSERT OR UPDATE FOR EACH ROW"), installed_by);
        }
        let is_update = op == pg_sys::TRIGGER_EVENT_UPDATE;
        let (new, old) =
            if is_update { (td.tg_newtuple, td.tg_trigtuple) } else { (td.tg_trigtuple, std::ptr::null_mut()) };
        RowEvent { rel: td.tg_relation, new, old, is_update, args: trigger_args(&*td.tg_trigger) }
    }
}

/// Runs a dedup trigger's guarded work `fire` and returns its row, or raises its near-duplicate
/// error from here, the outermost Rust frame.
///
/// # Safety
/// Called by a trigger function with the function manager's `fcinfo`; `fire` is `#[pg_guard]`ed.
pub(super) unsafe fn run(
    fcinfo: pg_sys::FunctionCallInfo,
    fire: unsafe extern "C-unwind" fn(pg_sys::FunctionCallInfo, *mut Option<Outcome>),
) -> pg_sys::Datum {
    let mut outcome = None;
    // SAFETY: `fire` is guarded: its errors and panics become PostgreSQL errors there.
    unsafe { fire(fcinfo, &mut outcome) };
    match outcome {
        Some(Outcome::Row(datum)) => datum,
        // SAFETY: this is the outermost Rust frame, nothing in it needs dropping (`outcome` is
        // moved out; a ConstraintError holds only palloc'd pointers), and the relation is open.
        Some(Outcome::Duplicate(error)) => unsafe { error.raise() },
        None => pg_sys::Datum::from(0),
    }
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

/// What a dedup trigger returns for a new row that is no near-duplicate: the row, with
/// `dup_of` NULL in mark mode.
///
/// # Safety
/// `rel` is the open relation the trigger fired on, `new` its new row, `dup_of` its checked
/// `dup_of` column.
pub(super) unsafe fn no_duplicate(rel: pg_sys::Relation, new: pg_sys::HeapTuple, dup_of: Option<c_int>) -> Outcome {
    // SAFETY: the caller guarantees the relation, the row and the column.
    let row = dup_of.map_or(new, |dup_of| unsafe { with_dup_of(rel, new, dup_of, None) });
    Outcome::Row(pg_sys::Datum::from(row))
}

/// What a dedup trigger returns for the new row `new` of `rel`, given the near-duplicate with
/// the smallest key it found (None: none, [`no_duplicate`]): in mark mode (`dup_of`
/// set) the row with `dup_of` = that key or NULL; otherwise the row unchanged when there is
/// none, nothing (skip), or the 23505 that `error(table name, found, may_read_key)` builds —
/// the key named only to a role that may read it, and on a placement of a Citus reference
/// table the table's name, not the shard's. The one place both triggers decide.
///
/// # Safety
/// `rel` is the open relation the trigger fired on, `new` its new row, `key_attnum` and
/// `dup_of` its checked key and `dup_of` columns.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn decide<M>(
    rel: pg_sys::Relation,
    new: pg_sys::HeapTuple,
    mode: Mode,
    dup_of: Option<c_int>,
    key_attnum: c_int,
    shard: Option<String>,
    found: Option<Found<M>>,
    error: impl FnOnce(&str, &Found<M>, bool) -> ConstraintError,
) -> Outcome {
    // SAFETY: the caller guarantees the relation, the row and the columns.
    unsafe {
        match (dup_of, mode, found) {
            (_, _, None) => no_duplicate(rel, new, dup_of),
            (Some(dup_of), _, Some(f)) => Outcome::Row(pg_sys::Datum::from(with_dup_of(rel, new, dup_of, Some(f.key)))),
            (None, Mode::Skip, Some(_)) => Outcome::Row(pg_sys::Datum::from(0)),
            (None, _, Some(f)) => {
                let may_read =
                    crate::access::read((*rel).rd_id, key_attnum as pg_sys::AttrNumber) == crate::access::Read::Allowed;
                let name = shard.unwrap_or_else(|| relation_name(rel));
                Outcome::Duplicate(error(&name, &f, may_read))
            }
        }
    }
}

/// `RETURNS trigger` function, declared in sql/dedup.sql (pgrx's `#[pg_trigger]` hides the raw
/// TriggerData this needs: arbitrary key types, the tid of OLD).
#[unsafe(no_mangle)]
#[doc(hidden)]
pub extern "C" fn pg_finfo_simdup_dedup_trigger() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// # Safety
/// Called by the trigger manager.
#[unsafe(no_mangle)]
#[doc(hidden)]
pub unsafe extern "C-unwind" fn simdup_dedup_trigger(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: called by the trigger manager; `fire` is guarded.
    unsafe { run(fcinfo, fire) }
}
