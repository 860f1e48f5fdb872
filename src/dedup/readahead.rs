//! `INSERT ... SELECT` into a dedup table that adopts its fingerprints: the statement's rows are
//! read before the first is written, so that the dedup trigger's bulk check knows the batch and
//! checks it by one pair join ([`super::bulk`], "A batch known up front").
//!
//! After planning, an `INSERT` whose rows come from a plan estimated at more than one row, into
//! a plain table whose dedup trigger adopts a `bigint` fingerprint column, gets the custom scan
//! `SimdupReadAhead` between the `ModifyTable` node and the plan of its rows (a one-row `INSERT
//! ... VALUES` is left as it is). On its first call the node reads every row of that plan into
//! a tuplestore (`work_mem`, then temporary files, as a Material node does), collects the values
//! the plan gives the fingerprint column, hands them to the bulk check as the hint, and then
//! returns the rows in the order they came. Reading the rows first changes no answer: the rows
//! are the same, in the same order, and the plan reads the tables with the statement's snapshot,
//! which never sees the rows the statement writes (a Sort or a Material node in the plan reads
//! them all first too; only a volatile function in the SELECT that queries the target table
//! itself could tell). The hint is only numbers (a BEFORE trigger that changes a row's
//! fingerprint sends the rest of the statement to the copy in memory), and it is bounded by the
//! bulk check's memory: past `simdup.bulk_check_memory` the node stops reading ahead, gives no
//! hint, and passes the rest of the rows through as they come. With `simdup.bulk_check = off`
//! (when the statement runs) it passes every row through. `simdup_insert_select` and
//! `simdup_insert` write their rows by one such `INSERT ... SELECT`.

use std::ffi::{c_int, CStr};
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::catalog::cells;
use crate::gucs::{bulk_check, BulkCheck};

use super::bulk::{give_hint, hint_column, hint_fits};

const NAME: &CStr = c"SimdupReadAhead";

static mut SCAN_METHODS: pg_sys::CustomScanMethods =
    pg_sys::CustomScanMethods { CustomName: NAME.as_ptr(), CreateCustomScanState: Some(create_state) };

static mut EXEC_METHODS: pg_sys::CustomExecMethods = pg_sys::CustomExecMethods {
    CustomName: NAME.as_ptr(),
    BeginCustomScan: Some(begin),
    ExecCustomScan: Some(exec),
    EndCustomScan: Some(end),
    ReScanCustomScan: Some(rescan),
    // SAFETY: the remaining callbacks are optional (NULL): no mark/restore, no parallel scan,
    // nothing of its own to EXPLAIN.
    ..unsafe { std::mem::zeroed() }
};

/// Rows read between interrupt checks.
const ROWS_PER_INTERRUPT: u64 = 1 << 12;

/// Registers the custom scan, so that a plan holding it can be read back from its text form.
/// Called once from `_PG_init`.
pub(super) fn init() {
    // SAFETY: _PG_init runs once per process, before any planning; the methods are a static
    // that lives as long as the process.
    unsafe { pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS) };
}

/// Puts `SimdupReadAhead` under the `ModifyTable` of `stmt` when `stmt` is an `INSERT` whose
/// rows the bulk check can be told up front (the module's doc); leaves every other plan as it
/// is.
///
/// # Safety
/// `stmt` was just planned; the statement holds its lock on the INSERT's target.
#[pg_guard]
pub(super) unsafe extern "C-unwind" fn plan(stmt: *mut pg_sys::PlannedStmt) {
    // SAFETY: a finished plan; the nodes built are palloc'd in the planner's memory context,
    // as the planner's own.
    unsafe {
        if stmt.is_null() || (*stmt).commandType != pg_sys::CmdType::CMD_INSERT || bulk_check() == BulkCheck::Off {
            return;
        }
        let top = (*stmt).planTree;
        if top.is_null() || (*top).type_ != pg_sys::NodeTag::T_ModifyTable {
            return;
        }
        let modify = top as *mut pg_sys::ModifyTable;
        let child = (*modify).plan.lefttree;
        if (*modify).operation != pg_sys::CmdType::CMD_INSERT
            || pg_sys::list_length((*modify).resultRelations) != 1
            || child.is_null()
            || (*child).plan_rows < 2.0
        {
            return;
        }
        let rti = cells((*modify).resultRelations)[0].int_value;
        let rte = pg_sys::list_nth((*stmt).rtable, rti - 1) as *mut pg_sys::RangeTblEntry;
        let Some(attnum) = target_column((*rte).relid) else { return };
        // The column's value is the child's output column whose resno is its attribute number
        // (an INSERT's rows come in the table's column order).
        let Some(position) = cells((*child).targetlist).iter().position(|c| {
            let tle = c.ptr_value as *mut pg_sys::TargetEntry;
            !(*tle).resjunk && i32::from((*tle).resno) == attnum
        }) else {
            return;
        };
        (*modify).plan.lefttree = read_ahead(child, (*rte).relid, position as i32 + 1).cast();
    }
}

/// The hint column's attribute number of table `relid` when an INSERT into it can be read
/// ahead: a plain table (not partitioned, not distributed by Citus) whose dedup trigger adopts a
/// bigint fingerprint column.
///
/// # Safety
/// In a transaction; the statement holds a lock on `relid`.
unsafe fn target_column(relid: pg_sys::Oid) -> Option<i32> {
    // SAFETY: the relation is opened and closed here.
    unsafe {
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return None;
        }
        let attnum = ((*(*rel).rd_rel).relkind == pg_sys::RELKIND_RELATION as std::ffi::c_char
            && !super::citus::is_distributed(relid))
        .then(|| hint_column(rel))
        .flatten();
        pg_sys::RelationClose(rel);
        attnum
    }
}

/// `SimdupReadAhead` over `child`, returning its rows as they are: its target list refers to
/// the child's columns one by one (constants stay constants, as PostgreSQL's own pass-through
/// nodes keep them: an INSERT's plan gives a dropped column a NULL constant). The child is also
/// the node's outer plan, which only EXPLAIN reads (to name what the columns are).
///
/// # Safety
/// `child` is a finished plan.
unsafe fn read_ahead(child: *mut pg_sys::Plan, relid: pg_sys::Oid, position: i32) -> *mut pg_sys::CustomScan {
    // SAFETY: nodes palloc'd in the current (planner's) memory context.
    unsafe {
        let scan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        let plan = &raw mut (*scan).scan.plan;
        (*plan).type_ = pg_sys::NodeTag::T_CustomScan;
        (*plan).startup_cost = (*child).total_cost;
        (*plan).total_cost = (*child).total_cost;
        (*plan).plan_rows = (*child).plan_rows;
        (*plan).plan_width = (*child).plan_width;
        (*plan).plan_node_id = i32::MAX - 1; // numbered apart from the planner's nodes
        (*plan).lefttree = child;
        let mut scan_tlist: *mut pg_sys::List = ptr::null_mut();
        let mut tlist: *mut pg_sys::List = ptr::null_mut();
        for (i, cell) in cells((*child).targetlist).iter().enumerate() {
            let tle = cell.ptr_value as *mut pg_sys::TargetEntry;
            let expr = (*tle).expr as *mut pg_sys::Node;
            let var = |varno: i32| {
                pg_sys::makeVar(
                    varno,
                    (i + 1) as pg_sys::AttrNumber,
                    pg_sys::exprType(expr),
                    pg_sys::exprTypmod(expr),
                    pg_sys::exprCollation(expr),
                    0,
                )
            };
            let scanned = pg_sys::flatCopyTargetEntry(tle);
            (*scanned).expr = var(pg_sys::OUTER_VAR).cast();
            scan_tlist = pg_sys::lappend(scan_tlist, scanned.cast());
            let out = pg_sys::flatCopyTargetEntry(tle);
            if (*expr).type_ != pg_sys::NodeTag::T_Const {
                (*out).expr = var(pg_sys::INDEX_VAR).cast();
            }
            tlist = pg_sys::lappend(tlist, out.cast());
        }
        (*plan).targetlist = tlist;
        (*scan).custom_scan_tlist = scan_tlist;
        (*scan).custom_plans = pg_sys::lappend(ptr::null_mut(), child.cast());
        let private = pg_sys::lappend_int(ptr::null_mut(), u32::from(relid) as c_int);
        (*scan).custom_private = pg_sys::lappend_int(private, position);
        (*scan).methods = &raw const SCAN_METHODS;
        scan
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing read yet.
    Start,
    /// Returning the rows read ahead; then the child's, if `more`.
    Stored,
    /// Returning the child's rows as they come.
    Through,
    /// Every row returned.
    Done,
}

/// The state of a `SimdupReadAhead` node (palloc'd, nothing Rust owns).
#[repr(C)]
struct State {
    css: pg_sys::CustomScanState,
    relid: pg_sys::Oid,
    /// The fingerprint column's position among the child's columns.
    position: i32,
    phase: Phase,
    /// The child has rows left after those read ahead (the hint would have been too large).
    more: bool,
    store: *mut pg_sys::Tuplestorestate,
    /// A slot of the child's row type to read the store with.
    slot: *mut pg_sys::TupleTableSlot,
}

#[pg_guard]
unsafe extern "C-unwind" fn create_state(_scan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    // SAFETY: palloc0 of a node the size of State, in the executor's memory context.
    unsafe {
        let state = pg_sys::palloc0(std::mem::size_of::<State>()) as *mut State;
        (*state).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*state).css.methods = &raw const EXEC_METHODS;
        (*state).phase = Phase::Start;
        state.cast()
    }
}

/// The node's child.
///
/// # Safety
/// `node` is a `SimdupReadAhead` node begun by [`begin`].
unsafe fn child(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::PlanState {
    // SAFETY: as the caller guarantees.
    unsafe { pg_sys::list_nth((*node).custom_ps, 0) as *mut pg_sys::PlanState }
}

#[pg_guard]
unsafe extern "C-unwind" fn begin(node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: c_int) {
    // SAFETY: the executor's node and state; the child plan is initialized as a child node; the
    // store and slot are allocated in the executor's memory context.
    unsafe {
        let scan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let child = pg_sys::list_nth((*scan).custom_plans, 0) as *mut pg_sys::Plan;
        (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), pg_sys::ExecInitNode(child, estate, eflags).cast());
        let ints: Vec<i32> = cells((*scan).custom_private).iter().map(|c| c.int_value).collect();
        let state = node as *mut State;
        (*state).relid = pg_sys::Oid::from(ints[0] as u32);
        (*state).position = ints[1];
        let desc = (*(*node).ss.ss_ScanTupleSlot).tts_tupleDescriptor;
        (*state).slot = pg_sys::ExecInitExtraTupleSlot(estate, desc, &pg_sys::TTSOpsMinimalTuple);
        // The rows come in the store's slot or the child's, not in the virtual scan slot
        // ExecInitCustomScan made: the projection (if any) is built again for slots of any
        // kind, and without one the node's result slots are of no fixed kind.
        (*node).ss.ps.scanopsfixed = false;
        pg_sys::ExecAssignScanProjectionInfoWithVarno(&raw mut (*node).ss, pg_sys::INDEX_VAR);
    }
}

/// Reads the child's rows into the store until it ends or the hint would outgrow its memory,
/// and gives the hint if it did not.
///
/// # Safety
/// `state` is a node begun by [`begin`], in its first call.
unsafe fn read(state: *mut State) {
    // SAFETY: as the caller guarantees; a slot the child returns is valid until its next call.
    unsafe {
        (*state).store = pg_sys::tuplestore_begin_heap(false, false, pg_sys::work_mem);
        let child = child(state.cast());
        let mut fps: Vec<u64> = Vec::new();
        let mut read = 0u64;
        loop {
            let slot = pg_sys::ExecProcNode(child);
            if slot.is_null() || (*slot).tts_flags & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
                break;
            }
            pg_sys::tuplestore_puttupleslot((*state).store, slot);
            if i32::from((*slot).tts_nvalid) < (*state).position {
                pg_sys::slot_getsomeattrs_int(slot, (*state).position);
            }
            let i = (*state).position as usize - 1;
            if !*(*slot).tts_isnull.add(i) {
                fps.push((*(*slot).tts_values.add(i)).value() as i64 as u64);
            }
            read += 1;
            if read.is_multiple_of(ROWS_PER_INTERRUPT) {
                pgrx::check_for_interrupts!();
            }
            if !hint_fits(fps.len() + 1) {
                (*state).more = true;
                break;
            }
        }
        if !(*state).more {
            give_hint((*state).relid, fps);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: the node begun by `begin`; slots returned are the store's or the child's, valid
    // until the next call, projected (when the target list has constants) in the node's
    // per-row context.
    unsafe {
        let state = node as *mut State;
        if (*state).phase == Phase::Start {
            if bulk_check() == BulkCheck::Off {
                (*state).phase = Phase::Through;
            } else {
                read(state);
                (*state).phase = Phase::Stored;
            }
        }
        let row = loop {
            match (*state).phase {
                Phase::Stored => {
                    if pg_sys::tuplestore_gettupleslot((*state).store, true, false, (*state).slot) {
                        break (*state).slot;
                    }
                    (*state).phase = if (*state).more { Phase::Through } else { Phase::Done };
                }
                Phase::Through => {
                    let slot = pg_sys::ExecProcNode(child(node));
                    if slot.is_null() || (*slot).tts_flags & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
                        (*state).phase = Phase::Done;
                    } else {
                        break slot;
                    }
                }
                Phase::Start | Phase::Done => return ptr::null_mut(),
            }
        };
        let projection = (*node).ss.ps.ps_ProjInfo;
        if projection.is_null() {
            return row;
        }
        let econtext = (*node).ss.ps.ps_ExprContext;
        pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
        (*econtext).ecxt_scantuple = row;
        pg_sys::ExecProject(projection)
    }
}

/// Frees the rows read ahead, if any.
///
/// # Safety
/// `state` is a node begun by [`begin`].
unsafe fn drop_store(state: *mut State) {
    // SAFETY: as the caller guarantees; the store is ended once.
    unsafe {
        if !(*state).store.is_null() {
            pg_sys::tuplestore_end((*state).store);
            (*state).store = ptr::null_mut();
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn end(node: *mut pg_sys::CustomScanState) {
    // SAFETY: the node begun by `begin`.
    unsafe {
        drop_store(node.cast());
        pg_sys::ExecEndNode(child(node));
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::CustomScanState) {
    // SAFETY: the node begun by `begin`: read again from the start.
    unsafe {
        let state = node as *mut State;
        drop_store(state);
        (*state).phase = Phase::Start;
        (*state).more = false;
        pg_sys::ExecReScan(child(node));
    }
}
