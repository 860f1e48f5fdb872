//! What the custom scans `SimdupCheckedInsert` and `SimdupCheckedUpdate` share: their methods,
//! registered once, and the callbacks that begin, end, rescan and explain either (each one's
//! writes are in insert_scan.rs and update_scan.rs).

use std::ffi::{c_int, CStr};
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::insert_scan::exec;
use super::node::{memory_context, new_state, private, State};
use super::returning::check_returning_privileges;
use super::update_scan::exec_update;
use crate::catalog::qualified_name;
use crate::citus::checked::pin_coordinator;

pub(super) const NAME: &CStr = c"SimdupCheckedInsert";

pub(super) static mut SCAN_METHODS: pg_sys::CustomScanMethods =
    pg_sys::CustomScanMethods { CustomName: NAME.as_ptr(), CreateCustomScanState: Some(create_state) };

pub(super) static mut EXEC_METHODS: pg_sys::CustomExecMethods = exec_methods(NAME, exec);

pub(super) const NAME_UPDATE: &CStr = c"SimdupCheckedUpdate";

pub(super) static mut SCAN_METHODS_UPDATE: pg_sys::CustomScanMethods =
    pg_sys::CustomScanMethods { CustomName: NAME_UPDATE.as_ptr(), CreateCustomScanState: Some(create_update_state) };

pub(super) static mut EXEC_METHODS_UPDATE: pg_sys::CustomExecMethods = exec_methods(NAME_UPDATE, exec_update);

/// The executor's callbacks of the custom scan `name` whose rows `exec` writes: that one, and
/// those both scans share.
const fn exec_methods(
    name: &'static CStr,
    exec: unsafe extern "C-unwind" fn(*mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot,
) -> pg_sys::CustomExecMethods {
    pg_sys::CustomExecMethods {
        CustomName: name.as_ptr(),
        BeginCustomScan: Some(begin),
        ExecCustomScan: Some(exec),
        EndCustomScan: Some(end),
        ReScanCustomScan: Some(rescan),
        ExplainCustomScan: Some(explain),
        // SAFETY: the remaining callbacks are optional (NULL): no mark/restore, no parallel scan.
        ..unsafe { std::mem::zeroed() }
    }
}

/// Registers both custom scans, so that a plan holding one can be read back from its text form.
/// Called once from `_PG_init` (through [`super::init`]).
pub(super) fn register() {
    // SAFETY: _PG_init runs once per process, single-threaded; the methods are statics that
    // live as long as the process.
    unsafe {
        pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS);
        pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS_UPDATE);
    }
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn create_state(_scan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    new_state(&raw const EXEC_METHODS)
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn create_update_state(_scan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    new_state(&raw const EXEC_METHODS_UPDATE)
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn begin(
    node: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    eflags: c_int,
) {
    // SAFETY: the executor's node and state; the child plan is initialized as a child node; the
    // GUC nest level around that is closed at once (an error's abort closes it otherwise).
    unsafe {
        let scan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let child = pg_sys::list_nth((*scan).custom_plans, 0) as *mut pg_sys::Plan;
        let (relid, pinned, _) = private(node);
        // (Citus writes a prepared statement's shard query when its scan begins.)
        let nest = pg_sys::NewGUCNestLevel();
        if pinned {
            pin_coordinator();
        }
        let child_state = pg_sys::ExecInitNode(child, estate, eflags);
        pg_sys::AtEOXact_GUC(true, nest);
        (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), child_state.cast());
        let state = node as *mut State;
        // The lock the INSERT's target takes (the rows' plan does not take it).
        (*state).rel = pg_sys::table_open(relid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
        (*state).rows = memory_context(c"simdup checked insert rows");
        if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as c_int == 0 {
            let schema = std::ffi::CString::new(crate::catalog::extension_schema()).unwrap_or_default();
            (*state).ext_schema = pg_sys::pstrdup(schema.as_ptr());
        }
        let scanrelid = (*scan).scan.scanrelid;
        if scanrelid > 0 {
            // RETURNING: the rows stored are kept (as minimal tuples of the table's descriptor)
            // and scanned back through the plan's projection, which is rebuilt for a scan slot
            // of that kind.
            let ss = &raw mut (*node).ss;
            pg_sys::ExecInitScanTupleSlot(estate, ss, (*(*state).rel).rd_att, &raw const pg_sys::TTSOpsMinimalTuple);
            pg_sys::ExecAssignScanProjectionInfoWithVarno(ss, scanrelid as _);
            (*state).returned = pg_sys::tuplestore_begin_heap(false, false, pg_sys::work_mem);
            if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as c_int == 0 {
                check_returning_privileges(relid, (*scan).scan.plan.targetlist, scanrelid);
            }
        }
    }
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn end(node: *mut pg_sys::CustomScanState) {
    // SAFETY: the node begun by `begin`.
    unsafe {
        pg_sys::ExecEndNode(pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState);
        let state = node as *mut State;
        if !(*state).returned.is_null() {
            pg_sys::tuplestore_end((*state).returned);
        }
        if !(*state).rel.is_null() {
            pg_sys::table_close((*state).rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        }
    }
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::CustomScanState) {
    // SAFETY: the node begun by `begin`.
    unsafe { pg_sys::ExecReScan(pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState) }
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn explain(
    node: *mut pg_sys::CustomScanState,
    _ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: the node begun by `begin`; EXPLAIN's state.
    unsafe {
        let table = qualified_name((*(node as *mut State)).rel);
        let text = std::ffi::CString::new(format!("each row against every shard of {table}")).unwrap_or_default();
        pg_sys::ExplainPropertyText(c"Dedup Check".as_ptr(), text.as_ptr(), es);
    }
}
