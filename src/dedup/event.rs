//! A dedup trigger's row event and its decision: the call checked as a BEFORE INSERT OR UPDATE
//! row trigger, the row's outcome (the row to store, or the near-duplicate error), and the one
//! place both dedup triggers decide it.

use std::ffi::c_int;

use pgrx::pg_sys;

use crate::args::Mode;
use crate::catalog::relation_name;
use crate::errors::{Code, ConstraintError, Error};

use super::config::trigger_args;
use super::lookup::Found;
use super::tuple::with_dup_of;

/// 39P01 (trigger protocol violated), saying which function installs the trigger.
pub(crate) fn protocol_error(message: &str, installed_by: &str) -> ! {
    Error::new(Code::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED, message).hint(format!("{installed_by}.")).raise()
}

/// The near-duplicate error of a dedup trigger: 23505 with the schema, table and constraint
/// name (`constraint`, the trigger's) that drivers read.
pub(crate) fn violation(rel: pg_sys::Relation, constraint: &str, name: &str, detail: String) -> ConstraintError {
    let message = format!("near-duplicate row violates {constraint} on relation \"{name}\"");
    Error::new(Code::ERRCODE_UNIQUE_VIOLATION, message).detail(detail).for_constraint(rel, constraint)
}

/// What the trigger decided: the row to return, or the near-duplicate error to raise.
pub(crate) enum Outcome {
    Row(pg_sys::Datum),
    Duplicate(ConstraintError),
}

/// A dedup trigger's call: the table, the new row, the old one (UPDATE), and the trigger's
/// arguments.
pub(crate) struct RowEvent {
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
pub(crate) unsafe fn before_row_event(
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
pub(crate) unsafe fn run(
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

/// What a dedup trigger returns for a new row that is no near-duplicate: the row, with
/// `dup_of` NULL in mark mode.
///
/// # Safety
/// `rel` is the open relation the trigger fired on, `new` its new row, `dup_of` its checked
/// `dup_of` column.
pub(crate) unsafe fn no_duplicate(rel: pg_sys::Relation, new: pg_sys::HeapTuple, dup_of: Option<c_int>) -> Outcome {
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
pub(crate) unsafe fn decide<M>(
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
