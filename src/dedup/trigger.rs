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

use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;

use crate::args::Mode;
use crate::errors::{Code, ConstraintError, Error};

use super::config::{Config, TRIGGER};
use super::lookup::smallest_key_match;
use super::tuple::{bigint_value, columns, text_value, with_dup_of};
use super::{bulk, citus};
use crate::catalog::relation_name;

fn protocol_error(message: &str) -> ! {
    Error::new(Code::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED, message)
        .hint("simdup_dedup_trigger is installed by simdup_enable(tbl, text_column, on_duplicate => ...).")
        .raise()
}

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
        if let Some(cfg) = dedup_config(rel) {
            columns(rel, &cfg);
        }
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
}

extension_sql!(
    "COMMENT ON FUNCTION _simdup_check_dedup(oid) IS 'simdup (internal): checks the columns the simdup_dedup trigger of a table reads and writes (exist, types, not a generated adopted fingerprint), as the trigger does on every row; simdup_enable calls it after installing the trigger';",
    name = "comment__simdup_check_dedup",
    requires = [_simdup_check_dedup]
);

/// The configuration of `rel`'s simdup_dedup trigger, if it has one.
///
/// # Safety
/// `rel` is an open relation.
pub(super) unsafe fn dedup_config(rel: pg_sys::Relation) -> Option<Config> {
    // SAFETY: the trigger descriptor of an open relation is valid while it is open.
    unsafe {
        let desc = (*rel).trigdesc;
        if desc.is_null() {
            return None;
        }
        std::slice::from_raw_parts((*desc).triggers, (*desc).numtriggers as usize)
            .iter()
            .find(|t| CStr::from_ptr(t.tgname).to_bytes() == TRIGGER.as_bytes())
            .map(|t| Config::parse(&trigger_args(t)))
    }
}

/// The near-duplicate error (23505, constraint simdup_dedup of table `name`): the key it
/// names only to a role that may read it (`may_read_key`), as a unique index's DETAIL.
pub(super) fn duplicate_error(
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
    let message = format!("near-duplicate row violates {TRIGGER} on relation \"{name}\"");
    Error::new(Code::ERRCODE_UNIQUE_VIOLATION, message).detail(detail).for_constraint(rel, TRIGGER)
}

/// What a new row is fingerprinted from: its text, or the fingerprint column it was given.
enum Source {
    Text(Option<String>),
    Fingerprint(Option<i64>),
}

/// What the trigger decided: the row to return, or the near-duplicate error to raise.
enum Outcome {
    Row(pg_sys::Datum),
    Duplicate(ConstraintError),
}

/// The trigger's work, inside pgrx's guard (errors and panics become PostgreSQL errors).
///
/// # Safety
/// Called by [`simdup_dedup_trigger`] with the function manager's `fcinfo`.
#[pg_guard]
unsafe extern "C-unwind" fn fire(fcinfo: pg_sys::FunctionCallInfo, outcome: *mut Option<Outcome>) {
    // SAFETY: the trigger manager passes TriggerData as the context (checked first); its
    // relation is open and its tuples valid for the call.
    unsafe {
        if !pgrx::trigger_support::called_as_trigger(fcinfo) {
            protocol_error("simdup_dedup_trigger: not called by the trigger manager");
        }
        let td = &*((*fcinfo).context as *const pg_sys::TriggerData);
        let event = td.tg_event;
        let op = event & pg_sys::TRIGGER_EVENT_OPMASK;
        if event & pg_sys::TRIGGER_EVENT_ROW == 0
            || event & pg_sys::TRIGGER_EVENT_TIMINGMASK != pg_sys::TRIGGER_EVENT_BEFORE
            || !(op == pg_sys::TRIGGER_EVENT_INSERT || op == pg_sys::TRIGGER_EVENT_UPDATE)
        {
            protocol_error("simdup_dedup_trigger must be fired BEFORE INSERT OR UPDATE FOR EACH ROW");
        }
        let cfg = Config::parse(&trigger_args(&*td.tg_trigger));
        let rel = td.tg_relation;
        let tupdesc = (*rel).rd_att;
        let is_update = op == pg_sys::TRIGGER_EVENT_UPDATE;
        let (new, old) =
            if is_update { (td.tg_newtuple, td.tg_trigtuple) } else { (td.tg_trigtuple, std::ptr::null_mut()) };
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
        // A shard of a Citus distributed table holds part of the rows: only simdup_insert,
        // which checked the row against every shard, may write it (src/dedup/citus.rs).
        let shard = citus::shard_of(rel);
        if let Some(shard) = shard.as_ref().filter(|s| s.is_partial()) {
            citus::refuse_unchecked(rel, shard);
            *outcome = Some(Outcome::Row(unchanged));
            return;
        }
        let fp = match source {
            Source::Text(text) => text.and_then(|t| crate::fingerprint::simhash(&t)),
            Source::Fingerprint(fp) => fp,
        };
        let Some(fp) = fp else {
            // Featureless text: never a duplicate.
            let row = match cols.dup_of {
                Some(dup_of) => pg_sys::Datum::from(with_dup_of(rel, new, dup_of, None)),
                None => unchanged,
            };
            *outcome = Some(Outcome::Row(row));
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
        let verdict = if is_update || shard.is_some() {
            bulk::Verdict::Search
        } else {
            bulk::check(rel, cols.fp, cfg.k, cfg.mode == Mode::Skip && cols.dup_of.is_none(), fp)
        };
        let found = match verdict {
            bulk::Verdict::Clear => None,
            bulk::Verdict::Stored => {
                *outcome = Some(Outcome::Row(pg_sys::Datum::from(0))); // skipped
                return;
            }
            bulk::Verdict::Search => smallest_key_match(rel, &cfg, fp, cols.fp, key_attnum, exclude),
        };
        if found.is_none() || cols.dup_of.is_some() {
            bulk::passed(rel, fp);
        }
        *outcome = Some(match (cols.dup_of, cfg.mode, found) {
            (Some(dup_of), _, found) => {
                Outcome::Row(pg_sys::Datum::from(with_dup_of(rel, new, dup_of, found.map(|f| f.key))))
            }
            (None, _, None) => Outcome::Row(unchanged),
            (None, Mode::Skip, Some(_)) => Outcome::Row(pg_sys::Datum::from(0)),
            (None, _, Some(f)) => {
                let may_read =
                    crate::access::read((*rel).rd_id, key_attnum as pg_sys::AttrNumber) == crate::access::Read::Allowed;
                // On a placement of a Citus reference table: the table's name, not the shard's.
                let name = shard.map_or_else(|| relation_name(rel), |s| s.name);
                Outcome::Duplicate(duplicate_error(rel, &cfg, &name, &f.key_text, f.distance, may_read))
            }
        });
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
