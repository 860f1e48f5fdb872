//! `INSERT ... SELECT` into a table with the SimHash dedup trigger: the statement's rows are
//! read before the first is written, so that the trigger's bulk check knows the batch and checks
//! it by one pair join ([`super::bulk`], "A batch known up front").
//!
//! After planning, an `INSERT` whose rows come from a plan estimated at more than one row, into
//! a plain table with the dedup trigger, gets the custom scan `SimdupReadAhead` between the
//! `ModifyTable` node and the plan of its rows (a one-row `INSERT ... VALUES` is left as it is).
//! On its first call the node reads every row of that plan into a tuplestore (`work_mem`, then
//! temporary files, as a Material node does) and takes each row's fingerprint: the value the
//! row gives an adopted fingerprint column, or, for a table whose trigger fingerprints a text
//! column, `simhash` of the row's text, computed for the whole batch on `simdup.batch_threads`
//! threads ([`simdup_core::parallel::map`]) and remembered for each row just before it is
//! returned ([`crate::fingerprint::remember`]), so that the trigger and the generated
//! fingerprint column find it instead of computing it again in the one backend. It hands the
//! fingerprints to the bulk check as the hint, then returns the rows in the order they came.
//!
//! Reading the rows first changes no answer: the rows are the same, in the same order, and the
//! plan reads the tables with the statement's snapshot, which never sees the rows the statement
//! writes (a Sort or a Material node in the plan reads them all first too; only a volatile
//! function in the SELECT that queries the target table itself could tell). A remembered
//! fingerprint is `simhash` of exactly that text (the memo compares the whole text); a row a
//! BEFORE trigger changes is computed again. The hint is only numbers (a row whose fingerprint
//! is not in it sends the rest of the statement to the copy in memory), and it is bounded by the
//! bulk check's memory: past `simdup.bulk_check_memory` the node stops reading ahead, gives no
//! hint, and passes the rest of the rows through as they come. With `simdup.bulk_check = off`
//! (when the statement runs) it passes every row through. `simdup_insert_select` and
//! `simdup_insert` write their rows by one such `INSERT ... SELECT`.
//!
//! A `COPY` read ahead is written by one such INSERT a batch (src/copy.rs), and
//! the texts of its next batch are fingerprinted on threads of their own while the backend
//! writes the current one ([`fingerprint_ahead`]): the batch's read-ahead then takes each
//! row's fingerprint from that work where the row's text is the very text fingerprinted there
//! (compared whole), and computes the others itself.

use std::ffi::{c_int, CStr};
use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::catalog::cells;
use crate::gucs::{bulk_check, BulkCheck};

use super::bulk::{give_hint, hint_fits, hint_source, HintSource};
use super::tuple::{slot_value, text_of};

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
pub(crate) unsafe extern "C-unwind" fn plan(stmt: *mut pg_sys::PlannedStmt) {
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
        let Some(source) = target_column((*rte).relid) else { return };
        let (attnum, text) = match source {
            HintSource::Fingerprint(attnum) => (attnum, false),
            HintSource::Text(attnum) => (attnum, true),
        };
        // The column's value is the child's output column whose resno is its attribute number
        // (an INSERT's rows come in the table's column order).
        let Some(position) = cells((*child).targetlist).iter().position(|c| {
            let tle = c.ptr_value as *mut pg_sys::TargetEntry;
            !(*tle).resjunk && i32::from((*tle).resno) == attnum
        }) else {
            return;
        };
        (*modify).plan.lefttree = read_ahead(child, (*rte).relid, position as i32 + 1, text).cast();
    }
}

/// Where the hint of an INSERT into table `relid` comes from, when it can be read ahead: a
/// plain table (not partitioned, not distributed by Citus) with the SimHash dedup trigger.
///
/// # Safety
/// In a transaction; the statement holds a lock on `relid`.
unsafe fn target_column(relid: pg_sys::Oid) -> Option<HintSource> {
    // SAFETY: the relation is opened and closed here.
    unsafe {
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return None;
        }
        let source = ((*(*rel).rd_rel).relkind == pg_sys::RELKIND_RELATION as std::ffi::c_char
            && !super::placement::is_distributed(relid))
        .then(|| hint_source(rel))
        .flatten();
        pg_sys::RelationClose(rel);
        source
    }
}

/// Where the hint of `COPY … FROM` into `rel` comes from, if the COPY is read ahead too (None:
/// not read ahead): written by simdup as one `INSERT ...
/// SELECT` a batch of `simdup.copy_batch_memory` (src/copy.rs reads the rows with
/// PostgreSQL's COPY reader), which this module reads ahead. Only where that INSERT does what
/// the COPY would: a plain table with the SimHash dedup trigger that Citus does not know (no
/// shard, no Citus table), the bulk check not off, a role with the INSERT privilege on the
/// whole table (the INSERT names every column, with the defaults the reader evaluated), no
/// row-level security for the role (COPY FROM refuses it), no rules (COPY does not apply them),
/// no `WHERE`, only options of the data's form ([`DATA_OPTIONS`]: not `FREEZE`, `ON_ERROR`,
/// ...), and no column named `ordinality` (the INSERT's own). Any other COPY is PostgreSQL's.
///
/// # Safety
/// `rel` is an open relation; `stmt` its `COPY … FROM`.
pub(crate) unsafe fn copies_ahead(rel: pg_sys::Relation, stmt: *mut pg_sys::CopyStmt) -> Option<HintSource> {
    // SAFETY: the caller guarantees `rel` is open (rd_rel, rd_att valid) and `stmt` its COPY …
    // FROM, whose options are DefElems; catalog and ACL lookups of the open relation.
    unsafe {
        let relid = (*rel).rd_id;
        // Options of the data's form only: FREEZE, ON_ERROR, REJECT_LIMIT and the like change
        // how COPY itself inserts, and stay PostgreSQL's.
        let plain_options = cells((*stmt).options).iter().all(|c| {
            let option = c.ptr_value as *mut pg_sys::DefElem;
            DATA_OPTIONS.contains(&CStr::from_ptr((*option).defname).to_bytes())
        });
        let ordinality = pgrx::PgTupleDesc::from_pg_unchecked((*rel).rd_att)
            .iter()
            .any(|a| !a.attisdropped && CStr::from_ptr(a.attname.data.as_ptr()).to_bytes() == b"ordinality");
        let source = hint_source(rel)?;
        (bulk_check() != BulkCheck::Off
            && (*(*rel).rd_rel).relkind == pg_sys::RELKIND_RELATION as std::ffi::c_char
            && (*stmt).whereClause.is_null()
            && plain_options
            && (*rel).rd_rules.is_null()
            && !ordinality
            && pg_sys::pg_class_aclcheck(relid, pg_sys::GetUserId(), pg_sys::ACL_INSERT as pg_sys::AclMode)
                == pg_sys::AclResult::ACLCHECK_OK
            && pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, true)
                == pg_sys::CheckEnableRlsResult::RLS_NONE as i32
            && !super::placement::is_managed(relid)
            && !super::placement::is_part(rel))
        .then_some(source)
    }
}

/// The COPY options a read-ahead COPY accepts: those of the data's form, which PostgreSQL's
/// reader applies.
const DATA_OPTIONS: [&[u8]; 10] = [
    b"format",
    b"delimiter",
    b"null",
    b"default",
    b"header",
    b"quote",
    b"escape",
    b"force_not_null",
    b"force_null",
    b"encoding",
];

/// `SimdupReadAhead` over `child`, returning its rows as they are: its target list refers to
/// the child's columns one by one (constants stay constants, as PostgreSQL's own pass-through
/// nodes keep them: an INSERT's plan gives a dropped column a NULL constant). The child is also
/// the node's outer plan, which only EXPLAIN reads (to name what the columns are).
///
/// # Safety
/// `child` is a finished plan.
unsafe fn read_ahead(
    child: *mut pg_sys::Plan,
    relid: pg_sys::Oid,
    position: i32,
    text: bool,
) -> *mut pg_sys::CustomScan {
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
            let var = |varno| {
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
        (*scan).custom_private = crate::catalog::private_ints(&[u32::from(relid) as i32, position, i32::from(text)]);
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

/// The state of a `SimdupReadAhead` node (palloc'd; of what Rust owns, only `fps`, freed with
/// the executor's memory by [`free_fps`]).
#[repr(C)]
struct State {
    css: pg_sys::CustomScanState,
    relid: pg_sys::Oid,
    /// The position among the child's columns of the fingerprint column, or of the text.
    position: i32,
    /// The column is the text (fingerprinted here), not the fingerprint.
    text: bool,
    /// Text: the type of the column, and for each row read ahead its fingerprint to remember,
    /// once known (None: a NULL text, or one too long for the memo); the next row to return.
    text_type: pg_sys::Oid,
    fps: *mut Vec<Option<Option<i64>>>,
    served: usize,
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
    // SAFETY: the caller guarantees a node begun by `begin`, which made custom_ps a one-element
    // List of the child's PlanState.
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
        let ints = crate::catalog::ints_of_private(scan);
        let state = node as *mut State;
        (*state).relid = pg_sys::Oid::from(ints[0] as u32);
        (*state).position = ints[1];
        (*state).text = ints[2] != 0;
        // The fingerprints read ahead live in Rust's heap: freed with the executor's memory
        // (also when the statement fails and `end` is never called).
        crate::catalog::on_reset(pg_sys::CurrentMemoryContext, free_fps, state.cast());
        let desc = (*(*node).ss.ss_ScanTupleSlot).tts_tupleDescriptor;
        (*state).text_type = pgrx::PgTupleDesc::from_pg_unchecked(desc)
            .get((*state).position as usize - 1)
            .map_or(pg_sys::InvalidOid, |a| a.atttypid);
        (*state).slot = pg_sys::ExecInitExtraTupleSlot(estate, desc, &pg_sys::TTSOpsMinimalTuple);
        // The rows come in the store's slot or the child's, not in the virtual scan slot
        // ExecInitCustomScan made: the projection (if any) is built again for slots of any
        // kind, and without one the node's result slots are of no fixed kind.
        (*node).ss.ps.scanopsfixed = false;
        pg_sys::ExecAssignScanProjectionInfoWithVarno(&raw mut (*node).ss, pg_sys::INDEX_VAR);
    }
}

/// Texts fingerprinted together (each batch of them spread over the threads): the memory the
/// copies of a batch's texts take at most, beyond one text.
const TEXT_BATCH_BYTES: usize = 16 << 20;

/// Fingerprints of texts computed in the background for a coming read-ahead of an INSERT into
/// `relid`: each item is a row's position among the INSERT's rows and its text.
struct Ahead {
    relid: pg_sys::Oid,
    work: simdup_core::parallel::Background<(usize, String), Option<u64>>,
}

/// Work begun for the batches of a COPY not yet written, oldest first: the batch about to be
/// written and the one after it.
const AHEAD_MAX: usize = 2;

thread_local! {
    /// The work begun ahead, oldest first; the next read-ahead of an INSERT into its table takes
    /// the oldest. Kept here, not in the COPY's frame, which an error leaves by `longjmp`: it is
    /// stopped and freed at the end of the transaction, or by [`clear_ahead`].
    static AHEAD: std::cell::RefCell<std::collections::VecDeque<Ahead>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// Begins fingerprinting `texts` (row, text: texts of at most
/// [`crate::fingerprint::MEMO_MAX_BYTES`], which the read-ahead remembers) on
/// `simdup.batch_threads` threads of their own, for the next read-ahead of an INSERT into `relid`
/// after those begun before (at most [`AHEAD_MAX`] are kept: the oldest is stopped). Nothing is
/// begun when there is nothing to do, when `simdup.batch_threads` is the backend alone, or when
/// no thread is to be had: the read-ahead then computes them as usual.
pub(crate) fn fingerprint_ahead(relid: pg_sys::Oid, texts: Vec<(usize, String)>) {
    let threads = crate::gucs::batch_threads();
    if texts.is_empty() || threads < 2 {
        return;
    }
    let Some(work) = simdup_core::parallel::map_in_background(texts, threads, |(_, text)| simdup_core::simhash(text))
    else {
        return;
    };
    let stale = AHEAD.with(|a| {
        let mut a = a.borrow_mut();
        a.push_back(Ahead { relid, work });
        if a.len() > AHEAD_MAX {
            a.pop_front()
        } else {
            None
        }
    });
    drop(stale);
    for event in [pgrx::PgXactCallbackEvent::Commit, pgrx::PgXactCallbackEvent::Abort] {
        pgrx::register_xact_callback(event, clear_ahead);
    }
}

/// Stops and frees the work begun ahead (each thread stops at its next text).
pub(crate) fn clear_ahead() {
    let left = AHEAD.with(|a| a.try_borrow_mut().map(|mut a| std::mem::take(&mut *a)).unwrap_or_default());
    drop(left);
}

/// Texts fingerprinted ahead, in row order: ((row, text), fingerprint).
type Known = std::iter::Peekable<std::vec::IntoIter<((usize, String), Option<u64>)>>;

/// The rows' fingerprints computed ahead for an INSERT into `relid`, once done (waiting with
/// interrupts), in row order; empty when there are none.
fn take_ahead(relid: pg_sys::Oid) -> Known {
    let ahead = AHEAD.with(|a| {
        let mut a = a.borrow_mut();
        if a.front().is_some_and(|a| a.relid == relid) {
            a.pop_front()
        } else {
            None
        }
    });
    let known: Vec<_> = match ahead {
        Some(ahead) => {
            let (texts, fps) = ahead.work.wait(&mut || {
                pgrx::check_for_interrupts!();
            });
            texts.into_iter().zip(fps).collect()
        }
        None => Vec::new(),
    };
    known.into_iter().peekable()
}

/// The fingerprint of row `row`'s `text` among those computed ahead (which are in row order;
/// the earlier ones are passed), if it was computed there for exactly this text.
fn known_fingerprint(known: &mut Known, row: usize, text: &str) -> Option<Option<u64>> {
    while known.next_if(|((r, _), _)| *r < row).is_some() {}
    known.next_if(|((r, t), _)| *r == row && t == text).map(|(_, fp)| fp)
}

/// Reads the child's rows into the store until it ends or the hint would outgrow its memory,
/// takes their fingerprints, and gives the hint if it read them all.
///
/// # Safety
/// `state` is a node begun by [`begin`], in its first call.
unsafe fn read(state: *mut State) {
    // SAFETY: the caller guarantees a node begun by `begin` (its child initialised, `position` a
    // column of the child's rows); a slot the child returns is valid until its next call (the
    // texts are copied out of it).
    unsafe {
        (*state).store = pg_sys::tuplestore_begin_heap(false, false, pg_sys::work_mem);
        let child = child(state.cast());
        let mut fps: Vec<u64> = Vec::new();
        let mut rows: Vec<Option<Option<i64>>> = Vec::new();
        let mut texts: Vec<(usize, String)> = Vec::new();
        let mut text_bytes = 0;
        let mut read = 0u64;
        let mut known = if (*state).text { take_ahead((*state).relid) } else { Vec::new().into_iter().peekable() };
        let (ahead, mut taken) = (known.len(), 0usize);
        loop {
            let slot = pg_sys::ExecProcNode(child);
            if slot.is_null() || (*slot).tts_flags & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
                break;
            }
            pg_sys::tuplestore_puttupleslot((*state).store, slot);
            let mut row = None;
            if let Some(datum) = slot_value(slot, (*state).position) {
                if !(*state).text {
                    fps.push(datum.value() as i64 as u64);
                } else if let Some(text) = text_of(datum, (*state).text_type) {
                    if text.len() <= crate::fingerprint::MEMO_MAX_BYTES {
                        if let Some(fp) = known_fingerprint(&mut known, rows.len(), &text) {
                            row = Some(fp.map(|fp| fp as i64));
                            fps.extend(fp);
                            taken += 1;
                        } else {
                            text_bytes += text.len();
                            texts.push((rows.len(), text));
                        }
                    } else {
                        // Too long to be remembered: fingerprinted here, with interrupts, for
                        // the hint only (the trigger computes it again).
                        fps.extend(crate::fingerprint::simhash(&text).map(|fp| fp as u64));
                    }
                }
            }
            rows.push(row);
            if text_bytes >= TEXT_BATCH_BYTES {
                fingerprint(&mut texts, &mut rows, &mut fps);
                text_bytes = 0;
            }
            read += 1;
            if read.is_multiple_of(ROWS_PER_INTERRUPT) {
                pgrx::check_for_interrupts!();
            }
            if !hint_fits(rows.len() + 1) {
                (*state).more = true;
                break;
            }
        }
        fingerprint(&mut texts, &mut rows, &mut fps);
        if ahead > 0 {
            pgrx::debug1!("simdup: read ahead: fingerprints of {taken} of {ahead} texts computed in the background");
        }
        if !(*state).more {
            give_hint((*state).relid, (*(*state).css.ss.ps.state).es_query_cxt, fps);
        }
        if (*state).text {
            (*state).fps = Box::into_raw(Box::new(rows));
        }
    }
}

/// The fingerprints of `texts` (row, text), on `simdup.batch_threads` threads: each row's in
/// `rows`, the non-NULL ones added to `fps`; `texts` emptied.
fn fingerprint(texts: &mut Vec<(usize, String)>, rows: &mut [Option<Option<i64>>], fps: &mut Vec<u64>) {
    let threads = crate::gucs::batch_threads();
    let out = simdup_core::parallel::map(
        texts,
        threads,
        &mut || {
            pgrx::check_for_interrupts!();
        },
        |(_, text)| simdup_core::simhash(text),
    );
    for ((row, _), fp) in texts.iter().zip(out) {
        rows[*row] = Some(fp.map(|fp| fp as i64));
        fps.extend(fp);
    }
    texts.clear();
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
                        remember(state);
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

/// Text: makes the fingerprint computed for the row just read from the store simhash's memo
/// for its text, which the trigger and the generated column then find.
///
/// # Safety
/// `state` is a node begun by [`begin`] whose slot holds the row `served` of the store.
unsafe fn remember(state: *mut State) {
    // SAFETY: the caller guarantees a node begun by `begin` whose slot holds the store's row
    // `served`; `fps` is NULL or the list `read` made, freed only with the store or the node.
    unsafe {
        let row = (*state).served;
        (*state).served += 1;
        if (*state).fps.is_null() {
            return;
        }
        if let Some(Some(fp)) = (&(*(*state).fps)).get(row) {
            if let Some(text) =
                slot_value((*state).slot, (*state).position).and_then(|d| text_of(d, (*state).text_type))
            {
                crate::fingerprint::remember(&text, *fp);
            }
        }
    }
}

/// The fingerprints read ahead, freed (a memory context callback: it cannot fail).
unsafe extern "C-unwind" fn free_fps(arg: *mut std::ffi::c_void) {
    let state = arg as *mut State;
    // SAFETY: the node registered itself; the callback runs before its memory is freed.
    unsafe {
        if !(*state).fps.is_null() {
            drop(Box::from_raw((*state).fps));
            (*state).fps = ptr::null_mut();
        }
    }
}

/// Frees the rows read ahead, if any.
///
/// # Safety
/// `state` is a node begun by [`begin`].
unsafe fn drop_store(state: *mut State) {
    // SAFETY: the caller guarantees a node begun by `begin`: `store` is NULL or its store, ended
    // once and set to NULL; free_fps frees `fps` at most once (it sets it to NULL).
    unsafe {
        if !(*state).store.is_null() {
            pg_sys::tuplestore_end((*state).store);
            (*state).store = ptr::null_mut();
        }
        free_fps(state.cast());
        (*state).served = 0;
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
