//! The writes of the custom scan `SimdupCheckedInsert`: pulls the planned rows and writes them
//! through the checked write (its methods and the callbacks it shares with
//! `SimdupCheckedUpdate` are in scan.rs).

use super::node::{pinned_if_sent, private, private_text, pull_batch, push_row, State};
use super::returning::{returned, write_all};
use super::rules::BATCH_ROWS;
use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::citus::checked::{batchable, write_batch, write_row, Outcome, Row};
use crate::errors::ConstraintError;

/// Writes every row of the child plan on the first call; returns the RETURNING list of each row
/// stored, if the statement has one, else no tuple.
pub(super) unsafe extern "C-unwind" fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: the executor's node; `exec_rows` is guarded.
    unsafe { write_all(node, exec_rows) }
}

/// # Safety
/// The executor's node.
#[pg_guard]
pub(super) unsafe extern "C-unwind" fn exec_rows(
    node: *mut pg_sys::CustomScanState,
    duplicate: *mut Option<ConstraintError>,
) {
    // SAFETY: the caller guarantees the executor's node; #[pg_guard] puts this frame inside
    // pgrx's guard, as pinned_if_sent and write_rows ask; `duplicate` is write_all's local.
    unsafe { pinned_if_sent(node, || write_rows(node, duplicate)) }
}

/// The writes of `exec_rows`.
///
/// # Safety
/// The executor's node, inside pgrx's guard.
pub(super) unsafe fn write_rows(node: *mut pg_sys::CustomScanState, duplicate: *mut Option<ConstraintError>) {
    // SAFETY: the child's slots are read before the next row is asked for; each row is formed
    // with the relation's own descriptor (the target list's types are the columns' types) and
    // copied into the batch's memory, reset for each batch; the checks' memory is the node's
    // expression context's, reset for each batch.
    unsafe {
        let state = node as *mut State;
        let child = pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState;
        let (relid, _, written) = private(node);
        let ext_schema = CStr::from_ptr((*state).ext_schema).to_string_lossy().into_owned();
        let desc = (*(*state).rel).rd_att;
        let natts = (*desc).natts as usize;
        let per_batch = (*(*node).ss.ps.ps_ExprContext).ecxt_per_tuple_memory;
        let estate = (*node).ss.ps.state;
        // A batch at a time where the check allows it (src/citus/checked, write_batch),
        // else a row at a time.
        let conflict = private_text((*node).ss.ps.plan as *mut pg_sys::CustomScan);
        let batch_rows = if batchable((*state).rel) { BATCH_ROWS } else { 1 };
        let mut values = vec![pg_sys::Datum::from(0); natts];
        let mut nulls = vec![true; natts];
        // (A plan is not asked again once it has returned its end: a scan would start over.)
        let mut done = false;
        while !done {
            pg_sys::MemoryContextReset((*state).rows);
            let mut rows: Vec<pg_sys::Datum> = Vec::new();
            done = !pull_batch(child, batch_rows, |slot| {
                values.fill(pg_sys::Datum::from(0));
                nulls.fill(true);
                for (i, &attnum) in written.iter().enumerate() {
                    values[attnum as usize - 1] = *(*slot).tts_values.add(i);
                    nulls[attnum as usize - 1] = *(*slot).tts_isnull.add(i);
                }
                Some(push_row((*state).rows, desc, &mut values, &mut nulls, &mut rows))
            });
            if rows.is_empty() {
                break;
            }
            pg_sys::MemoryContextReset(per_batch);
            let old = pg_sys::CurrentMemoryContext;
            pg_sys::CurrentMemoryContext = per_batch;
            let returned = returned(state);
            let outcome = if rows.len() == 1 {
                let row = Row { datum: rows[0], written: written.clone() };
                write_row(relid, row, &ext_schema, conflict.as_deref(), returned.as_ref())
            } else {
                write_batch(relid, &rows, &written, &ext_schema, conflict.as_deref(), returned.as_ref())
            };
            pg_sys::CurrentMemoryContext = old;
            match outcome {
                Outcome::Stored(n) => (*estate).es_processed += n,
                Outcome::Duplicate(error) => {
                    *duplicate = Some(error);
                    return;
                }
                Outcome::Changed => crate::errors::internal("an INSERT's checked write found its row changed"),
            }
        }
    }
}
