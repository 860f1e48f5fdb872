//! The bulk check: a statement that inserts many rows (`INSERT ... SELECT`, `COPY`, a long
//! multi-row `INSERT`, `simdup_insert_select`) checks them against a copy of the table's
//! fingerprints in memory ([`simdup_core::nearset::NearSet`]) instead of probing the block
//! indexes for every row.
//!
//! The answers are the row-by-row trigger's, because the copy is used only to say "nothing is
//! within k": a row for which the copy finds a candidate is checked by the index search as
//! before ([`super::lookup::smallest_key_match`]), which decides reject, skip or mark. So the
//! copy must hold (a superset of) every fingerprint the index search could find, for as long as
//! it is used:
//!
//! In skip mode a candidate among the rows stored before the statement decides at once (the
//! row is skipped, whichever near-duplicate the search would name), once its row is found still
//! there (by its tid, with the search's dirty snapshot: the statement itself may have deleted it,
//! in a MERGE or a data-modifying WITH). An UPDATE inside the statement that changes a
//! fingerprint (`ON CONFLICT DO UPDATE`, MERGE) drops the copy.
//!
//! 1. **Others.** Before loading, the statement takes SHARE ROW EXCLUSIVE on the table, which
//!    every other writer's ROW EXCLUSIVE conflicts with, and only when it is free at once
//!    (`ConditionalLockRelation`: no wait, so no lock-upgrade deadlock with a writer waiting on
//!    this transaction's lock stripes). Then no other transaction has an insert, update or
//!    delete in progress on the table, and none can start one while the lock is held. Readers
//!    are not blocked. When another writer waits for the table, the copy is dropped and the
//!    lock released before the next row ([`check`]): the rows written under it are in the
//!    indexes, where that writer's check finds them, and the statement's next rows are checked
//!    one by one in their check windows. Only a role that may take the lock with `LOCK TABLE`
//!    (UPDATE, DELETE or TRUNCATE privilege) gets it, so an INSERT-only role cannot lock other
//!    writers out even for that long.
//! 2. **What is loaded.** A fresh snapshot taken after the lock sees every committed row and
//!    this transaction's rows of earlier commands: the rows the index search's dirty snapshot
//!    would see, but for the statement's own rows, which are added as it lets them through (the
//!    rows before the load are remembered for it). Rows this statement let through but that did
//!    not land (a later BEFORE trigger, `ON CONFLICT DO NOTHING`) stay in the copy: they can
//!    only send a row to the index search.
//! 3. **How long.** The copy belongs to one statement: its executor's memory context (freed
//!    at its end, on error too), its subtransaction and its command id. Any write that bypasses
//!    this trigger's bookkeeping inside the statement (another trigger's SQL) advances the
//!    command id, and the copy is dropped; so is a copy whose lock is no longer held.
//!
//! The choice (`simdup.bulk_check`): auto loads once the statement has checked enough rows one
//! by one that their index searches would have cost as much as the load (ski rental: never more
//! than twice the better choice), at the earliest after [`AUTO_MIN_ROWS`] rows, so short
//! statements never lock the table.
//!
//! **A batch known up front.** An `INSERT ... SELECT` into a table with this trigger
//! (`simdup_insert_select`, `simdup_insert` and a `COPY` write by one) has its rows read before
//! the first is written ([`super::readahead`]), which gives their fingerprints (an adopted
//! column's values, or its texts' fingerprints computed there) to the check as a hint
//! ([`give_hint`]). The INSERT's bulk check then chooses by the batch's size and the table's
//! (loading at its first row when the rows' searches would cost more than
//! the load and the join), and answers the batch's rows from one pair join of the loaded
//! fingerprints with the batch's ([`simdup_core::expected::Expected`]): the stored
//! fingerprints within k of each, and its neighbours within the batch, of which those the
//! statement let through count, as the copy's added members do. The answers are the copy's:
//! the same loaded rows, the same added ones. A hint is only a list of numbers: a row whose
//! fingerprint is not in it (a BEFORE trigger changed it) turns the lists into the copy in
//! memory for the rest of the statement, so a wrong hint can cost time, never an answer. Only
//! the statement that read the rows ahead takes it.

use std::cell::RefCell;

use pgrx::pg_sys;

use pgrx::{register_xact_callback, PgXactCallbackEvent};
use simdup_core::expected::Expected;
use simdup_core::nearset::{max_bytes, NearSet};

use crate::catalog::estimated_rows;
use crate::gucs::{bulk_check, bulk_check_memory, BulkCheck};

use super::window::statement_context;

/// Rows a statement checks one by one before auto considers loading.
const AUTO_MIN_ROWS: u64 = 100;

/// The cost model of the choice, in microseconds (measured on the development machine,
/// docs/performance.md "0.3.0: the bulk check"): a row's index search, and the load by heap
/// page and by row.
const ROW_SEARCH_US: f64 = 1500.0;
const LOAD_PAGE_US: f64 = 1.0;
const LOAD_ROW_US: f64 = 0.3;
/// The pair join of a hinted batch of b rows with n fingerprints in all: about this many µs a
/// batch row per 10⁶ fingerprints (its checks grow with b · n; measured 0.6–1.0 s for 200,000
/// against 1.2M, docs/performance.md "A batch known up front").
const JOIN_US_PER_ROW_M: f64 = 5.0;

/// Rows read between interrupt checks while loading.
const ROWS_PER_INTERRUPT: u64 = 1 << 12;

struct State {
    relid: pg_sys::Oid,
    context: pg_sys::MemoryContext,
    subxact: pg_sys::SubTransactionId,
    command: pg_sys::CommandId,
    /// Rows checked one by one, and the count at which to try loading next.
    checked: u64,
    next_try: u64,
    /// Fingerprints the statement let through before the load.
    early: Vec<u64>,
    k: u32,
    /// The batch the statement was said to insert ([`give_hint`]), until the load.
    hint: Vec<u64>,
    /// The copy: the hinted batch's lists, or the set.
    expected: Option<Expected>,
    set: Option<NearSet>,
    /// The rows loaded, by fingerprint: where to look when a stored candidate decides.
    stored: Vec<(u64, pg_sys::ItemPointerData)>,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
    static HINT: RefCell<Option<Hint>> = const { RefCell::new(None) };
}

/// Fingerprints a statement of this transaction is about to insert into a table.
struct Hint {
    relid: pg_sys::Oid,
    /// The executor memory of the statement that read the rows ahead, in this transaction.
    context: pg_sys::MemoryContext,
    transaction: pg_sys::LocalTransactionId,
    fps: Vec<u64>,
}

/// The hint for `relid` given by the statement whose executor memory is `context`, taken (a hint
/// of another statement stays for its own).
fn take_hint(relid: pg_sys::Oid, context: pg_sys::MemoryContext) -> Vec<u64> {
    let transaction = crate::compat::local_transaction_id();
    HINT.with(|h| {
        let mut h = h.borrow_mut();
        if h.as_ref().is_some_and(|h| h.relid == relid && h.context == context && h.transaction == transaction) {
            h.take().map_or_else(Vec::new, |h| h.fps)
        } else {
            Vec::new()
        }
    })
}

/// Whether a hint of `n` fingerprints may be given: the bulk check is not off, and the hint
/// fits `simdup.bulk_check_memory`.
pub(super) fn hint_fits(n: usize) -> bool {
    bulk_check() != BulkCheck::Off && bytes(n) <= bulk_check_memory()
}

/// Gives the hint: `fps` are the fingerprints of the rows the INSERT into `relid` whose
/// executor memory is `context` will check, in any order (an `INSERT ... SELECT` whose rows
/// were read first, [`super::readahead`]). Only that statement takes it: an INSERT whose
/// dedup trigger is disabled leaves it to be replaced or freed with the transaction.
pub(super) fn give_hint(relid: pg_sys::Oid, context: pg_sys::MemoryContext, fps: Vec<u64>) {
    let transaction = crate::compat::local_transaction_id();
    HINT.with(|h| *h.borrow_mut() = Some(Hint { relid, context, transaction, fps }));
    // A hint its statement did not take (the dedup trigger disabled, or another BEFORE trigger
    // dropped every row first) is freed with its transaction.
    for event in [PgXactCallbackEvent::Commit, PgXactCallbackEvent::Abort] {
        register_xact_callback(event, || {
            HINT.with(|h| {
                if let Ok(mut h) = h.try_borrow_mut() {
                    *h = None;
                }
            })
        });
    }
}

/// What a batch's hint is read from: the rows' adopted fingerprint column, or the text column
/// the trigger fingerprints (the read-ahead fingerprints the batch's texts itself,
/// [`super::readahead`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum HintSource {
    Fingerprint(i32),
    Text(i32),
}

/// Where `rel`'s hint comes from (attribute numbers): the dedup trigger's adopted fingerprint
/// column (a `bigint` column that is not generated), or its text column; None when `rel` has no
/// SimHash dedup trigger, or its column is missing (the trigger raises that on every row).
///
/// # Safety
/// `rel` is an open relation.
pub(super) unsafe fn hint_source(rel: pg_sys::Relation) -> Option<HintSource> {
    // SAFETY: the caller guarantees `rel` is open; its trigger and tuple descriptors live as long
    // as it is open.
    unsafe {
        let cfg = super::config::dedup_config(rel)?;
        let (name, wanted) = match &cfg.text_column {
            None => (cfg.fp_column.as_str(), Some(pg_sys::INT8OID)),
            Some(text) => (text.as_str(), None),
        };
        let desc = pgrx::PgTupleDesc::from_pg_unchecked((*rel).rd_att);
        let attnum = desc.iter().position(|a| {
            !a.attisdropped
                && a.attgenerated == 0
                && wanted.is_none_or(|t| a.atttypid == t)
                && std::ffi::CStr::from_ptr(a.attname.data.as_ptr()).to_bytes() == name.as_bytes()
        })? as i32
            + 1;
        Some(if cfg.text_column.is_none() { HintSource::Fingerprint(attnum) } else { HintSource::Text(attnum) })
    }
}

/// Drops the state of the statement whose executor context is being reset or deleted (a
/// memory context callback: it cannot fail).
unsafe extern "C-unwind" fn forget(arg: *mut std::ffi::c_void) {
    let context = arg as pg_sys::MemoryContext;
    STATE.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            if s.as_ref().is_some_and(|st| st.context == context) {
                *s = None;
            }
        }
    });
}

/// What the statement's copy in memory says of a row.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Verdict {
    /// Nothing within k: no near-duplicate is stored.
    Clear,
    /// A row stored before the statement is within k (so in skip mode the row is skipped).
    Stored,
    /// Search the indexes: no copy, or a candidate that only the search can decide on.
    Search,
}

/// What the statement's copy of `rel`'s fingerprints (column `fp_attnum`, near-duplicates within
/// `k`) says of the row with fingerprint `fp` that the trigger is checking for INSERT. `Search`
/// counts the row toward loading the copy. `Stored` is answered only when `stored_decides`
/// (skip mode: any stored near-duplicate decides, whichever key it has); otherwise a candidate
/// means `Search`, which finds the smallest key.
///
/// # Safety
/// `rel` is the open relation the trigger fired on, `fp_attnum` its fingerprint column.
pub(super) unsafe fn check(rel: pg_sys::Relation, fp_attnum: i32, k: u32, stored_decides: bool, fp: i64) -> Verdict {
    let mode = bulk_check();
    if mode == BulkCheck::Off {
        return Verdict::Search;
    }
    let Some(context) = statement_context() else { return Verdict::Search };
    // SAFETY: the caller guarantees `rel` is open, so rd_id is valid; transaction state of this
    // backend.
    let (relid, subxact, command) =
        unsafe { ((*rel).rd_id, pg_sys::GetCurrentSubTransactionId(), pg_sys::GetCurrentCommandId(false)) };
    STATE.with(|cell| {
        let mut guard = cell.borrow_mut();
        let current = guard
            .as_ref()
            .is_some_and(|s| s.relid == relid && s.context == context && s.subxact == subxact && s.command == command);
        if !current {
            let registered = guard.as_ref().is_some_and(|s| s.context == context);
            if !registered {
                // SAFETY: the statement's executor memory, passed to `forget` as the context
                // it is registered on.
                unsafe { crate::catalog::on_reset(context, forget, context.cast()) };
            }
            let hint = take_hint(relid, context);
            let next_try = match mode {
                BulkCheck::On => 1,
                // SAFETY: the caller guarantees `rel` is open, all auto_threshold asks.
                _ => unsafe { auto_threshold(rel, hint.len()) },
            };
            *guard = Some(State {
                relid,
                context,
                subxact,
                command,
                checked: 0,
                next_try,
                early: Vec::new(),
                k,
                hint,
                expected: None,
                set: None,
                stored: Vec::new(),
            });
        }
        let state = guard.as_mut().expect("set above");
        if state.loaded() {
            // SAFETY: the caller guarantees `rel` is open, all CheckRelationLockedByMe here and
            // LockHasWaitersRelation in the `else if` below read of it.
            let locked = unsafe { pg_sys::CheckRelationLockedByMe(rel, pg_sys::ShareRowExclusiveLock as i32, true) };
            if !locked {
                state.drop_copy();
            } else if unsafe { pg_sys::LockHasWaitersRelation(rel, pg_sys::ShareRowExclusiveLock as pg_sys::LOCKMODE) }
            {
                // Another writer waits for the table: the copy goes, and with it the lock (the
                // rows written under it are in the indexes, where that writer's check finds
                // them), and the statement's next rows are checked one by one in their windows
                // (src/dedup/window.rs). A bulk load makes writers wait for one row's check at
                // most, not for its transaction.
                state.drop_copy();
                state.next_try = u64::MAX;
                // SAFETY: the lock this statement's load took (ConditionalLockRelation), under
                // the same resource owner; a lock the transaction held before stays.
                unsafe { pg_sys::UnlockRelation(rel, pg_sys::ShareRowExclusiveLock as pg_sys::LOCKMODE) };
            }
        }
        if !state.loaded() {
            state.checked += 1;
            if state.checked < state.next_try {
                return Verdict::Search;
            }
            // SAFETY: the caller guarantees `rel` is the trigger's open relation and `fp_attnum`
            // its fingerprint column, as load asks.
            match unsafe { load(rel, fp_attnum, state.early.len()) } {
                Load::Loaded(stored) => {
                    state.stored = stored;
                    state.expected = state.join_hint();
                    if state.expected.is_none() {
                        state.use_set();
                    }
                    state.early = Vec::new();
                    state.hint = Vec::new();
                }
                Load::Busy => {
                    state.next_try = state.checked.saturating_mul(2);
                    return Verdict::Search;
                }
                Load::Never => {
                    state.next_try = u64::MAX;
                    return Verdict::Search;
                }
            }
        }
        let fp = fp as u64;
        if let Some(e) = state.expected.as_ref() {
            match e.index(fp) {
                Some(i) => {
                    let any = e.passed_near(i) || !e.stored_near(i).is_empty();
                    // SAFETY: the caller guarantees `rel` is the trigger's open relation and
                    // `fp_attnum` its fingerprint column, as still_stored asks.
                    let stored = stored_decides
                        && e.stored_near(i)
                            .iter()
                            .any(|&near| unsafe { still_stored(rel, fp_attnum, &state.stored, near) });
                    return verdict(stored, any);
                }
                // Not one of the batch's rows: the copy in memory answers from here on.
                None => state.leave_hint(),
            }
        }
        let set = state.set.as_ref().expect("loaded");
        if !stored_decides {
            return if set.any_within(fp) { Verdict::Search } else { Verdict::Clear };
        }
        let mut stored = Vec::new();
        let mut any = false;
        set.within(fp, |near, built| {
            any = true;
            if built {
                stored.push(near);
            }
            true
        });
        // A stored candidate decides only while its row is still there: the statement itself
        // may have deleted it (MERGE, a data-modifying WITH) without this trigger seeing it.
        // SAFETY: the caller guarantees `rel` is the trigger's open relation and `fp_attnum` its
        // fingerprint column, as still_stored asks.
        verdict(stored.iter().any(|&near| unsafe { still_stored(rel, fp_attnum, &state.stored, near) }), any)
    })
}

/// The verdict on a row: a stored row within k that decides (`stored`), else a candidate
/// (`any`) that the search decides on, else nothing.
fn verdict(stored: bool, any: bool) -> Verdict {
    if stored {
        Verdict::Stored
    } else if any {
        Verdict::Search
    } else {
        Verdict::Clear
    }
}

impl State {
    fn loaded(&self) -> bool {
        self.set.is_some() || self.expected.is_some()
    }

    /// Forgets the copy for the rest of the statement (its rows are checked one by one).
    fn drop_copy(&mut self) {
        self.set = None;
        self.expected = None;
        self.stored = Vec::new();
        self.early = Vec::new();
        self.hint = Vec::new();
        self.next_try = u64::MAX;
    }

    /// The hinted batch's lists, right after the load: None without a hint, when the rows the
    /// statement let through before the load are not all the batch's, or when the loaded rows
    /// and the batch, or the pairs the join finds, need more than `simdup.bulk_check_memory`
    /// (the set in memory then answers, as without a hint).
    fn join_hint(&self) -> Option<Expected> {
        let need = bytes(self.stored.len() + self.hint.len());
        if self.hint.is_empty() || need > bulk_check_memory() {
            return None;
        }
        // A pair costs 16 bytes in the join's output and about as much again in each list.
        let max_pairs = (bulk_check_memory() - need) / (4 * std::mem::size_of::<(u64, u64)>());
        let stored: Vec<u64> = self.stored.iter().map(|&(fp, _)| fp).collect();
        let threads = crate::gucs::batch_threads();
        let mut e = Expected::new(&stored, &self.hint, self.k, threads, max_pairs, &mut |_| {
            pgrx::check_for_interrupts!();
        })
        .ok()?;
        for &fp in &self.early {
            e.pass(e.index(fp)?);
        }
        pgrx::debug1!(
            "simdup: bulk check of {} hinted rows by one join with {} loaded fingerprints",
            self.hint.len(),
            stored.len()
        );
        Some(e)
    }

    /// A row's fingerprint is not one of the hinted batch's (a BEFORE trigger changed it): the
    /// set in memory answers the rest of the statement.
    fn leave_hint(&mut self) {
        pgrx::debug1!("simdup: bulk check: a row is not in the hinted batch; the set in memory answers from here on");
        self.use_set();
    }

    /// Turns the copy into the set in memory: the rows loaded, and those the statement let
    /// through (before the load, or among the hinted batch's) added.
    fn use_set(&mut self) {
        let stored: Vec<u64> = self.stored.iter().map(|&(fp, _)| fp).collect();
        let mut set = NearSet::new(self.k, &stored);
        for &fp in &self.early {
            set.insert(fp);
        }
        if let Some(e) = self.expected.take() {
            for fp in e.passed() {
                set.insert(fp);
            }
        }
        self.set = Some(set);
    }
}

/// The fingerprint (column `fp_attnum`, a `bigint`) of the row in `slot`, if not NULL.
///
/// # Safety
/// `slot` holds a row of the relation whose column `fp_attnum` is the fingerprint.
unsafe fn fingerprint(slot: *mut pg_sys::TupleTableSlot, fp_attnum: i32) -> Option<u64> {
    // SAFETY: the caller guarantees `slot` holds a row of the relation whose column `fp_attnum`
    // is the fingerprint: slot_value may read it, a bigint, passed by value.
    unsafe { super::tuple::slot_value(slot, fp_attnum).map(|d| d.value() as i64 as u64) }
}

/// Whether a row loaded with fingerprint `fp` is still in `rel` with that fingerprint, as the
/// index search's dirty snapshot sees it.
///
/// # Safety
/// `rel` is the open relation, `fp_attnum` its fingerprint column.
unsafe fn still_stored(
    rel: pg_sys::Relation,
    fp_attnum: i32,
    stored: &[(u64, pg_sys::ItemPointerData)],
    fp: u64,
) -> bool {
    let first = stored.partition_point(|&(f, _)| f < fp);
    // SAFETY: a slot of `rel` and a dirty snapshot on this frame, both released here; tids of
    // `rel`'s heap (a tid that no longer holds a visible row is simply not found).
    unsafe {
        let slot = pg_sys::table_slot_create(rel, std::ptr::null_mut());
        let mut dirty =
            pg_sys::SnapshotData { snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY, ..Default::default() };
        let found = stored[first..].iter().take_while(|&&(f, _)| f == fp).any(|&(_, tid)| {
            let mut tid = tid;
            pg_sys::table_tuple_fetch_row_version(rel, &mut tid, &mut dirty, slot)
                && fingerprint(slot, fp_attnum) == Some(fp)
        });
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        found
    }
}

/// An UPDATE of `rel` that changes a row's fingerprint inside the statement (`INSERT ... ON
/// CONFLICT DO UPDATE`, MERGE): the copy no longer knows which stored fingerprints are still
/// there, so the statement goes on row by row.
///
/// # Safety
/// `rel` is an open relation (its `rd_id` is read).
pub(super) unsafe fn updated(rel: pg_sys::Relation) {
    // SAFETY: the caller guarantees an open relation.
    let relid = unsafe { (*rel).rd_id };
    STATE.with(|cell| {
        if let Some(state) = cell.borrow_mut().as_mut().filter(|s| s.relid == relid) {
            state.drop_copy();
        }
    });
}

/// Records that the statement is letting a row with fingerprint `fp` into `rel` (a new row
/// stored or marked, or an UPDATE's new fingerprint), for the copy in memory.
///
/// # Safety
/// `rel` is an open relation (its `rd_id` is read).
pub(super) unsafe fn passed(rel: pg_sys::Relation, fp: i64) {
    // SAFETY: the caller guarantees an open relation.
    let relid = unsafe { (*rel).rd_id };
    STATE.with(|cell| {
        if let Some(state) = cell.borrow_mut().as_mut().filter(|s| s.relid == relid) {
            if let Some(e) = state.expected.as_mut() {
                match e.index(fp as u64) {
                    Some(i) => return e.pass(i),
                    None => state.leave_hint(),
                }
            }
            match state.set.as_mut() {
                Some(set) => set.insert(fp as u64),
                // Kept for a load to come, within the memory a load may take (a statement that
                // keeps finding the table busy gives up on loading).
                None if state.next_try != u64::MAX => {
                    if bytes(state.early.len() + 1) > bulk_check_memory() {
                        state.drop_copy();
                    } else {
                        state.early.push(fp as u64);
                    }
                }
                None => {}
            }
        }
    });
}

/// The row count at which auto tries to load: when the rows' index searches would have cost
/// as much as reading the table. With a hinted batch of `hinted` rows: its first row when
/// the batch has [`AUTO_MIN_ROWS`] rows or more and their searches would cost more than the
/// load and the join, else as without.
///
/// # Safety
/// `rel` is an open relation.
unsafe fn auto_threshold(rel: pg_sys::Relation, hinted: usize) -> u64 {
    // SAFETY: the caller guarantees `rel` is open, which is all RelationGetNumberOfBlocksInFork
    // and estimated_rows ask.
    let (pages, rows) = unsafe {
        (f64::from(pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM)), estimated_rows(rel))
    };
    let load = pages * LOAD_PAGE_US + rows * LOAD_ROW_US;
    let join = JOIN_US_PER_ROW_M * hinted as f64 * (rows + hinted as f64) / 1e6;
    if hinted as u64 >= AUTO_MIN_ROWS && hinted as f64 * ROW_SEARCH_US > load + join {
        return 1;
    }
    ((load / ROW_SEARCH_US).ceil() as u64).max(AUTO_MIN_ROWS)
}

enum Load {
    /// The rows loaded (fingerprint, tid) in fingerprint order.
    Loaded(Vec<(u64, pg_sys::ItemPointerData)>),
    /// Another transaction writes the table: try again later.
    Busy,
    /// Not for this statement: the role may not lock the table, or it is too large.
    Never,
}

/// Takes SHARE ROW EXCLUSIVE on `rel` if it is free, then reads every fingerprint a fresh
/// snapshot sees; `more` fingerprints (the statement's so far) are to be added (within the
/// memory it checks).
///
/// # Safety
/// `rel` is an open table, `fp_attnum` its bigint fingerprint column.
unsafe fn load(rel: pg_sys::Relation, fp_attnum: i32, more: usize) -> Load {
    // SAFETY: catalog, ACL and lock calls on an open relation; the scan, its snapshot and its
    // slot are created and released here (on error, the resource owner releases them).
    unsafe {
        let relid = (*rel).rd_id;
        // As LOCK TABLE ... IN SHARE ROW EXCLUSIVE MODE requires.
        let lockers = (pg_sys::ACL_UPDATE | pg_sys::ACL_DELETE | pg_sys::ACL_TRUNCATE) as pg_sys::AclMode;
        if pg_sys::pg_class_aclmask(relid, pg_sys::GetUserId(), lockers, pg_sys::AclMaskHow::ACLMASK_ANY) == 0 {
            return Load::Never;
        }
        let budget = bulk_check_memory();
        let expected = estimated_rows(rel) as usize + more;
        if bytes(expected) > budget {
            return Load::Never;
        }
        if !pg_sys::ConditionalLockRelation(rel, pg_sys::ShareRowExclusiveLock as pg_sys::LOCKMODE) {
            return Load::Busy;
        }
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        let scan = pg_sys::table_beginscan(rel, snapshot, 0, std::ptr::null_mut());
        let slot = pg_sys::table_slot_create(rel, std::ptr::null_mut());
        let mut rows: Vec<(u64, pg_sys::ItemPointerData)> = Vec::with_capacity(expected.max(1024));
        let mut read = 0u64;
        let mut too_large = false;
        while pg_sys::table_scan_getnextslot(scan, pg_sys::ScanDirection::ForwardScanDirection, slot) {
            read += 1;
            if read.is_multiple_of(ROWS_PER_INTERRUPT) {
                pgrx::check_for_interrupts!();
                if bytes(rows.len()) > budget {
                    too_large = true;
                    break;
                }
            }
            if let Some(fp) = fingerprint(slot, fp_attnum) {
                rows.push((fp, (*slot).tts_tid));
            }
        }
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::table_endscan(scan);
        pg_sys::UnregisterSnapshot(snapshot);
        if too_large || bytes(rows.len() + more) > budget {
            // The lock stays (table locks last to the end of the transaction); the statement
            // goes on row by row.
            return Load::Never;
        }
        rows.sort_unstable_by_key(|&(fp, _)| fp);
        pgrx::debug1!(
            "simdup: bulk check of table \"{}\": {} fingerprints loaded",
            crate::catalog::relation_name(rel),
            rows.len()
        );
        Load::Loaded(rows)
    }
}

/// Memory the copy of `n` rows may take: the set, and each row's fingerprint and tid.
fn bytes(n: usize) -> usize {
    max_bytes(n) + n * std::mem::size_of::<(u64, pg_sys::ItemPointerData)>()
}
