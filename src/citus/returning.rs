//! RETURNING of a checked write: the list planned over the target, its privileges, and the
//! rows the checked write returned, scanned back.

use super::node::State;
use super::rules::not_supported;
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::catalog::{cells, qualified_name};
use crate::citus::checked::Returned;
use crate::errors::{Code, ConstraintError, Error};

/// A copy of the RETURNING list of write `parse` (`verb`: INSERT or UPDATE) into `table`, to be
/// computed from the rows stored; NULL without one. 0A000 for what the rows stored do not hold:
/// a sub-SELECT, a column of another relation than the target (an UPDATE's FROM list), a system
/// column, or (PostgreSQL 18) the row as it was before the statement (`old`).
///
/// # Safety
/// `parse` is a query being planned.
pub(super) unsafe fn returning_list(parse: *mut pg_sys::Query, table: &str, verb: &str) -> *mut pg_sys::List {
    // SAFETY: a valid Query; pull_var_clause walks its RETURNING list (which holds no aggregate
    // or placeholder: the parser allows none there).
    unsafe {
        let list = (*parse).returningList;
        if list.is_null() {
            return ptr::null_mut();
        }
        let hint = "Return columns of the table itself, and compute the rest from them in a second statement.";
        if pg_sys::contain_subplans(list.cast()) {
            not_supported(&format!("{verb} … RETURNING a sub-SELECT"), table, hint);
        }
        for cell in cells(pg_sys::pull_var_clause(list.cast(), 0)) {
            let var = cell.ptr_value as *mut pg_sys::Var;
            if i64::from((*var).varno) != i64::from((*parse).resultRelation) {
                not_supported(&format!("{verb} … RETURNING columns of another table"), table, hint);
            }
            if (*var).varattno < 0 {
                not_supported(&format!("{verb} … RETURNING a system column"), table, hint);
            }
            if crate::compat::returns_old(var) {
                not_supported(&format!("{verb} … RETURNING old values"), table, hint);
            }
        }
        pg_sys::copyObjectImpl(list.cast()) as *mut pg_sys::List
    }
}

/// 42501 unless the user may read every column of table `relid` that the RETURNING list
/// `targets` (scanning it as relation `scanrelid`) returns, as the executor checks an INSERT's or
/// UPDATE's RETURNING (a whole-row reference: every column).
///
/// # Safety
/// In a transaction; `relid` is locked; `targets` is a List of TargetEntry.
pub(super) unsafe fn check_returning_privileges(
    relid: pg_sys::Oid,
    targets: *mut pg_sys::List,
    scanrelid: pg_sys::Index,
) {
    // SAFETY: the caller guarantees a transaction, `relid` locked (so RelationIdGetRelation finds
    // it open) and `targets` a List of TargetEntry; catalog and ACL lookups of its columns.
    unsafe {
        let mut attrs: *mut pg_sys::Bitmapset = ptr::null_mut();
        pg_sys::pull_varattnos(targets.cast(), scanrelid, &mut attrs);
        let rel = pg_sys::RelationIdGetRelation(relid);
        let natts = (*(*rel).rd_att).natts;
        let table = qualified_name(rel);
        pg_sys::RelationClose(rel);
        let mut columns: Vec<i32> = Vec::new();
        let mut member = -1;
        loop {
            member = pg_sys::bms_next_member(attrs, member);
            if member < 0 {
                break;
            }
            match member + pg_sys::FirstLowInvalidHeapAttributeNumber {
                0 => columns.extend(1..=natts),
                attnum => columns.push(attnum),
            }
        }
        for attnum in columns {
            let attnum = attnum as pg_sys::AttrNumber;
            if pg_sys::get_attname(relid, attnum, true).is_null() {
                continue; // dropped
            }
            if !crate::access::column_privilege(relid, attnum, pg_sys::ACL_SELECT as pg_sys::AclMode) {
                Error::new(Code::ERRCODE_INSUFFICIENT_PRIVILEGE, format!("permission denied for table {table}"))
                    .detail("RETURNING reads the rows written, which needs SELECT on the columns it returns.")
                    .raise();
            }
        }
    }
}

/// The next row of the RETURNING list into `*out`: the projection of the next row stored
/// (ExecScan: the plan's target list over the scan slot), an empty slot after the last.
///
/// # Safety
/// A node of [`State`] with its store of rows.
#[pg_guard]
pub(super) unsafe extern "C-unwind" fn next_returned(
    node: *mut pg_sys::CustomScanState,
    out: *mut *mut pg_sys::TupleTableSlot,
) {
    // SAFETY: the caller guarantees a `State` node with its store, whose scan slot and projection
    // `begin` set up for ExecScan; `out` is the caller's local.
    unsafe { *out = pg_sys::ExecScan(&raw mut (*node).ss, Some(fetch_returned), Some(recheck_returned)) }
}

/// ExecScan's access method: the next row stored into the scan slot (a slot of minimal tuples,
/// the store's kind), or the slot emptied after the last.
#[pg_guard]
pub(super) unsafe extern "C-unwind" fn fetch_returned(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: the ScanState of a node of `State` (its first member) with its store.
    unsafe {
        let slot = (*ss).ss_ScanTupleSlot;
        pg_sys::tuplestore_gettupleslot((*(ss as *mut State)).returned, true, false, slot);
        slot
    }
}

/// ExecScan's recheck method: never called (no EvalPlanQual reaches this node, which locks no
/// rows of its own); every row stored qualifies.
#[pg_guard]
pub(super) unsafe extern "C-unwind" fn recheck_returned(
    _ss: *mut pg_sys::ScanState,
    _slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    true
}

/// Where the checked write puts the rows it stores: the node's store, if its statement has a
/// RETURNING list.
///
/// # Safety
/// A node of [`State`], begun.
pub(super) unsafe fn returned(state: *mut State) -> Option<Returned> {
    // SAFETY: the caller guarantees a `State` node begun by `begin`: `rel` is open and `returned`
    // NULL or its store.
    unsafe {
        (!(*state).returned.is_null()).then(|| Returned { store: (*state).returned, desc: (*(*state).rel).rd_att })
    }
}

/// Runs `write` (a guarded writer of the child plan's rows) on `node` once, then raises the
/// near-duplicate error it stopped at, if any, from this frame; returns the next row of the
/// RETURNING list (none without one).
///
/// # Safety
/// The executor's node; `write` is guarded (its errors become PostgreSQL errors there).
pub(super) unsafe fn write_all(
    node: *mut pg_sys::CustomScanState,
    write: unsafe extern "C-unwind" fn(*mut pg_sys::CustomScanState, *mut Option<ConstraintError>),
) -> *mut pg_sys::TupleTableSlot {
    let state = node as *mut State;
    // SAFETY: the executor's node, of `State`.
    if !unsafe { (*state).written } {
        // SAFETY: `node` is the executor's node (the caller's contract), allocated as a `State`
        // by new_state, so `written` is its field.
        unsafe { (*state).written = true };
        let mut duplicate = None;
        // SAFETY: the caller guarantees the executor's node and a guarded `write` (its errors
        // become PostgreSQL errors there); `duplicate` lives on this frame for the call.
        unsafe { write(node, &mut duplicate) };
        if let Some(error) = duplicate {
            // SAFETY: the frames above are the executor's callback and this one, nothing in them
            // needs dropping (a ConstraintError holds only palloc'd pointers), and the relation is
            // open.
            unsafe { error.raise() }
        }
    }
    let mut slot = ptr::null_mut();
    // SAFETY: `node` is the executor's node of `State` (the caller's contract); `returned` is
    // non-NULL only once `begin` made the store next_returned reads; `next_returned` is guarded.
    unsafe {
        if !(*state).returned.is_null() {
            next_returned(node, &mut slot);
        }
    }
    slot
}
