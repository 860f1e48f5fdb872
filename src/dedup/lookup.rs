//! The check of one row: lock its stripes, then find the existing near-duplicate with the
//! smallest key.
//!
//! The steps follow the argument in docs/dedup.md ("Under concurrency"):
//!
//! 1. the row's k + 1 lock stripes (`simdup_core::locks`), exclusive transaction-scoped locks
//!    in ascending order, under simdup's own lock tag ([`lock_stripe`]): advisory locks that no
//!    `pg_advisory_*` call can take, so no role can hold them to stall dedup writers;
//! 2. the search through the block indexes ([`crate::search::scan`]) with a dirty snapshot, as
//!    a unique index's check does: it sees every committed row — also those committed after a
//!    REPEATABLE READ transaction's own snapshot — this transaction's earlier rows (the same
//!    statement's included), and the rows other transactions are inserting or deleting;
//! 3. a candidate that another transaction is inserting or deleting (or updating) is not
//!    decided on: the check waits for that transaction to end and searches again, so a row
//!    whose near-duplicate is being deleted is stored once the deleter commits (and rejected,
//!    skipped or marked if it rolls back);
//! 4. the search reads the index and the heap directly: no SPI, no plan, no permission or
//!    row-level security in the way, so every row is seen whoever inserts.

use std::ffi::CStr;

use pgrx::pg_sys;

use simdup_core::locks::lock_stripes;

use crate::catalog::{estimated_rows, relation_name};
use crate::errors::{not_in_prerequisite_state, Code, Error};
use crate::search::{indexes::block_indexes, scan::search};

use super::config::Config;
use super::window::{self, Stripe};

/// The near-duplicate with the smallest key: its key (copied into the current memory context),
/// the key as text, and how near it is (`M`: the Hamming distance, or the Jaccard similarity).
pub(crate) struct Found<M> {
    pub key: pg_sys::Datum,
    pub key_text: String,
    pub measure: M,
}

pub(crate) fn same_tid(a: &pg_sys::ItemPointerData, b: &pg_sys::ItemPointerData) -> bool {
    a.ip_blkid.bi_hi == b.ip_blkid.bi_hi && a.ip_blkid.bi_lo == b.ip_blkid.bi_lo && a.ip_posid == b.ip_posid
}

/// A copy of `value` in the current memory context (PostgreSQL's `datumCopy`, which the
/// bindings do not export): by-value datums as they are, varlenas (a toast pointer included) by
/// their size, cstrings by their length, fixed-length types by `len`.
///
/// # Safety
/// `value` is a valid datum of a type with `byval` and `len`.
unsafe fn copy_datum(value: pg_sys::Datum, byval: bool, len: i16) -> pg_sys::Datum {
    if byval {
        return value;
    }
    // SAFETY: the caller guarantees the datum; the copy is palloc'd with its exact size.
    unsafe {
        let src = value.cast_mut_ptr::<u8>();
        let size = match len {
            -1 => pgrx::varsize_any(src.cast()),
            -2 => CStr::from_ptr(src.cast()).to_bytes_with_nul().len(),
            n => n as usize,
        };
        let dst = pg_sys::palloc(size) as *mut u8;
        std::ptr::copy_nonoverlapping(src, dst, size);
        pg_sys::Datum::from(dst)
    }
}

/// Field 4 of simdup's lock tags. `pg_advisory_lock(key bigint)` uses 1 and
/// `pg_advisory_lock(key1 int, key2 int)` uses 2 in this field, and Citus small numbers of its
/// own: no SQL-callable function can take, wait for or hold a lock with this value.
pub(crate) const SIMDUP_LOCK_CLASS: u16 = 0x5344;

/// Field 4 of the lock tags of containment-key stripes (simdup_core::locks::SimilarStripes): a
/// space of their own, so that the shared locks of every row's sketch meet only the exclusive
/// locks of tiny rows' prefixes, never the main stripes.
pub(crate) const SIMDUP_KEY_LOCK_CLASS: u16 = 0x5345;

/// The lock stripes of a row of a SimHash dedup table with fingerprint `fp` at distance `k`
/// (`simdup_core::locks::lock_stripes`), taken exclusively: advisory locks under simdup's own tag
/// (pg_locks: locktype `advisory`, classid = table OID, objid = stripe, objsubid = 21316).
pub(crate) fn row_stripes(fp: i64, k: u32) -> Vec<Stripe> {
    lock_stripes(fp as u64, k)
        .into_iter()
        .map(|stripe| Stripe { class: SIMDUP_LOCK_CLASS, stripe, exclusive: true })
        .collect()
}

/// The lock stripes of a row (or a batch) of a similarity dedup table: the main stripes
/// exclusively, the containment-key stripes (objsubid = 21317) exclusively or shared.
pub(crate) fn similar_stripes(stripes: &simdup_core::locks::SimilarStripes) -> Vec<Stripe> {
    let main = stripes.exclusive.iter().map(|&stripe| Stripe { class: SIMDUP_LOCK_CLASS, stripe, exclusive: true });
    let keys =
        stripes.keys_exclusive.iter().map(|&stripe| Stripe { class: SIMDUP_KEY_LOCK_CLASS, stripe, exclusive: true });
    let shared =
        stripes.keys_shared.iter().map(|&stripe| Stripe { class: SIMDUP_KEY_LOCK_CLASS, stripe, exclusive: false });
    main.chain(keys).chain(shared).collect()
}

/// Takes `stripes` in ascending order to the end of the transaction: the Citus checked write
/// (src/citus/checked), whose searches run on the workers with snapshots that see committed
/// rows only, so that its rows must stay covered by their stripes until they commit.
pub(crate) fn lock_to_commit(relid: pg_sys::Oid, mut stripes: Vec<Stripe>) {
    stripes.sort_unstable();
    stripes.dedup();
    for s in &stripes {
        // SAFETY: LockAcquire with a fully initialised tag of the user lock method, as
        // pg_advisory_xact_lock(_shared) does (transaction-scoped: released at commit or
        // abort); it waits, honouring lock_timeout, deadlock detection and cancels.
        unsafe { pg_sys::LockAcquire(&window::tag(relid, s), window::mode(s), false, false) };
    }
}

/// A transaction the check must wait for: it is inserting, deleting or updating a candidate.
struct Wait {
    xid: pg_sys::TransactionId,
    speculative_token: u32,
    tid: pg_sys::ItemPointerData,
}

/// Locks the stripes of fingerprint `fp` for `rel`, then returns the existing row within k of
/// `fp` with the smallest key (column `key_attnum`) that `verifier` confirms (every row within
/// k when there is none), other than the row at `exclude` (the row being updated). Waits for
/// transactions that are inserting or deleting a candidate, then searches again.
///
/// # Safety
/// `rel` is the open relation the trigger fired on; `key_attnum` one of its columns.
pub(super) unsafe fn smallest_key_match(
    rel: pg_sys::Relation,
    cfg: &Config,
    fp: i64,
    fp_attnum: i32,
    key_attnum: i32,
    exclude: Option<pg_sys::ItemPointerData>,
    verifier: Option<&super::verify::Verifier<'_>>,
) -> Option<Found<u32>> {
    // SAFETY: the caller guarantees `rel` is the trigger's open relation and `key_attnum` one of
    // its columns; the slots the search reports are rows of `rel`.
    unsafe {
        let relid = (*rel).rd_id;
        window::open(relid, row_stripes(fp, cfg.k));
        let Some(indexes) = block_indexes(rel, fp_attnum as pg_sys::AttrNumber) else {
            not_in_prerequisite_state(
                format!("table \"{}\" has no simdup block indexes on column \"{}\"", relation_name(rel), cfg.fp_column),
                "The dedup trigger finds near-duplicates through them: call simdup_reindex(table) to build them again.",
            );
        };
        let rows = estimated_rows(rel);
        smallest_key(rel, key_attnum, exclude, |snapshot, visit| {
            search(rel, &indexes, fp as u64, cfg.k as i32, snapshot, rows, |slot, other| {
                visit(slot, &mut || {
                    let confirmed = verifier.is_none_or(|v| v.confirms(slot));
                    confirmed.then(|| simdup_core::hamming(fp as u64, other))
                })
            })
        })
    }
}

/// How a table's key column orders its values: the key a check names is the smallest of its
/// near-duplicates', by the default B-tree operator class of the key's type and the column's
/// collation (42883 when the type has none).
pub(crate) struct KeyOrder {
    typid: pg_sys::Oid,
    collation: pg_sys::Oid,
    byval: bool,
    len: i16,
    attnum: i32,
    cmp: *mut pg_sys::FmgrInfo,
}

impl KeyOrder {
    /// The order of column `key_attnum` of `rel`.
    ///
    /// # Safety
    /// `rel` is an open relation and `key_attnum` one of its columns.
    pub(crate) unsafe fn of(rel: pg_sys::Relation, key_attnum: i32) -> Self {
        // SAFETY: the caller's; catalog and type cache lookups of the column's type (the type
        // cache entry, and so its comparison function, lives as long as the backend).
        unsafe {
            let relid = (*rel).rd_id;
            let (mut typid, mut typmod, mut collation) = (pg_sys::InvalidOid, 0, pg_sys::InvalidOid);
            pg_sys::get_atttypetypmodcoll(
                relid,
                key_attnum as pg_sys::AttrNumber,
                &mut typid,
                &mut typmod,
                &mut collation,
            );
            let (mut len, mut byval) = (0i16, false);
            pg_sys::get_typlenbyval(typid, &mut len, &mut byval);
            let tc = pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_CMP_PROC_FINFO as i32);
            if (*tc).cmp_proc_finfo.fn_oid == pg_sys::InvalidOid {
                Error::new(
                    Code::ERRCODE_UNDEFINED_FUNCTION,
                    format!("the key column of table \"{}\" has no ordering", relation_name(rel)),
                )
                .hint("The dedup trigger reports the near-duplicate with the smallest key; use a key type with a B-tree operator class.")
                .raise();
            }
            KeyOrder { typid, collation, byval, len, attnum: key_attnum, cmp: &mut (*tc).cmp_proc_finfo }
        }
    }

    /// The key of the row in `slot` (None: NULL), valid while the slot holds the row.
    ///
    /// # Safety
    /// `slot` holds a row of the relation the order was made for.
    pub(crate) unsafe fn key(&self, slot: *mut pg_sys::TupleTableSlot) -> Option<pg_sys::Datum> {
        // SAFETY: the caller's; `attnum` is a column of the slot's relation.
        unsafe {
            pg_sys::slot_getsomeattrs_int(slot, self.attnum);
            (!*(*slot).tts_isnull.add(self.attnum as usize - 1))
                .then(|| *(*slot).tts_values.add(self.attnum as usize - 1))
        }
    }

    /// A copy of key `value` in the current memory context.
    ///
    /// # Safety
    /// `value` is a valid datum of the key's type.
    pub(crate) unsafe fn copy(&self, value: pg_sys::Datum) -> pg_sys::Datum {
        // SAFETY: the caller's; the type's length and passing are the ones looked up.
        unsafe { copy_datum(value, self.byval, self.len) }
    }

    /// How key `a` compares with key `b`.
    ///
    /// # Safety
    /// Both are valid datums of the key's type.
    pub(crate) unsafe fn cmp(&self, a: pg_sys::Datum, b: pg_sys::Datum) -> std::cmp::Ordering {
        // SAFETY: the caller's; the comparison function of the type's default B-tree class.
        let c = unsafe { pg_sys::FunctionCall2Coll(self.cmp, self.collation, a, b).value() as i32 };
        c.cmp(&0)
    }
}

/// The dedup decision shared by the SimHash and the similarity trigger, once the caller holds
/// the row's lock stripes: among the candidates that `search(snapshot, visit)` reports
/// (`visit(slot, verify)`, the row in `slot`), the near-duplicate with the smallest key (column
/// `key_attnum`), other than the row at `exclude` (the row being updated). `verify()` says
/// whether the candidate is a near-duplicate, and how near (None: it is not); it is called only
/// for a candidate that could change the answer — its key is smaller than the best so far, or
/// another transaction is writing it — so that a costly verification (the similarity trigger's
/// Jaccard) runs for few candidates. `search` runs with a dirty snapshot; a near-duplicate that
/// another transaction is inserting or deleting (or updating) is not decided on: the check
/// waits for that transaction to end and searches again (steps 2–3 of the module's note).
///
/// # Safety
/// `rel` is the open relation the trigger fired on; `key_attnum` one of its columns; `search`
/// reports rows of `rel` in slots valid during the call.
pub(crate) unsafe fn smallest_key<M: Copy>(
    rel: pg_sys::Relation,
    key_attnum: i32,
    exclude: Option<pg_sys::ItemPointerData>,
    mut search: impl FnMut(pg_sys::Snapshot, &mut dyn FnMut(*mut pg_sys::TupleTableSlot, &mut dyn FnMut() -> Option<M>)),
) -> Option<Found<M>> {
    // SAFETY: the caller guarantees `rel` is the trigger's open relation, `key_attnum` one of its
    // columns (catalog lookups of it) and `search`'s slots valid during the call; the dirty
    // snapshot lives on this frame for the whole search.
    unsafe {
        let order = KeyOrder::of(rel, key_attnum);
        loop {
            let mut dirty =
                pg_sys::SnapshotData { snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY, ..Default::default() };
            let snapshot: pg_sys::Snapshot = &mut dirty;
            let mut best: Option<(pg_sys::Datum, M)> = None;
            let mut wait: Option<Wait> = None;
            search(snapshot, &mut |slot, verify| {
                if wait.is_some() || exclude.is_some_and(|t| same_tid(&t, &(*slot).tts_tid)) {
                    return;
                }
                // The dirty snapshot says who is inserting (xmin) or deleting (xmax) the row
                // version it just returned, when that transaction is still in progress.
                let (xmin, xmax) = ((*snapshot).xmin, (*snapshot).xmax);
                if xmin != pg_sys::InvalidTransactionId || xmax != pg_sys::InvalidTransactionId {
                    if verify().is_some() {
                        let xid = if xmin != pg_sys::InvalidTransactionId { xmin } else { xmax };
                        wait =
                            Some(Wait { xid, speculative_token: (*snapshot).speculativeToken, tid: (*slot).tts_tid });
                    }
                    return;
                }
                let Some(key) = order.key(slot) else {
                    return; // a NULL key cannot be named (a primary key is never NULL)
                };
                let smaller = best.is_none_or(|(b, _)| order.cmp(key, b) == std::cmp::Ordering::Less);
                if smaller {
                    if let Some(measure) = verify() {
                        best = Some((order.copy(key), measure));
                    }
                }
            });
            if let Some(mut w) = wait {
                // As a unique index's check does: wait for the transaction's end, then look again.
                // Outside the row's window: no stripe is held while waiting for a transaction.
                window::around_wait(|| {
                    if w.speculative_token != 0 {
                        pg_sys::SpeculativeInsertionWait(w.xid, w.speculative_token);
                    } else {
                        pg_sys::XactLockTableWait(w.xid, rel, &mut w.tid, pg_sys::XLTW_Oper::XLTW_InsertIndex);
                    }
                });
                continue;
            }
            return best.map(|(key, measure)| {
                let mut out = pg_sys::InvalidOid;
                let mut varlena = false;
                pg_sys::getTypeOutputInfo(order.typid, &mut out, &mut varlena);
                let text = pg_sys::OidOutputFunctionCall(out, key);
                Found { key, key_text: CStr::from_ptr(text).to_string_lossy().into_owned(), measure }
            });
        }
    }
}

/// `_simdup_lock_row(tbl, fp, k)` until 0.3.0, dropped in 0.4.0 (a row's stripes are held in its
/// check window, src/dedup/window.rs, and no SQL function takes them). The symbol stays, without
/// SQL: an update from 0.1.0 or 0.2.0 runs the 0.2.0 → 0.3.0 script with this library, which
/// creates the function before the 0.3.0 → 0.4.0 script drops it. Called anyway, it refuses.
#[pgrx::pg_extern(sql = false)]
fn _simdup_lock_row(_tbl: pg_sys::Oid, _fp: i64, _k: i32) {
    Error::new(Code::ERRCODE_FEATURE_NOT_SUPPORTED, "_simdup_lock_row was removed in simdup 0.4.0")
        .hint("ALTER EXTENSION simdup UPDATE drops it; the dedup trigger holds its lock stripes only while it checks a row.")
        .raise()
}

/// The lock stripes the dedup trigger takes for a fingerprint at maximum distance k, ascending
/// (pg_locks shows them as advisory locks with classid = table OID, objid = stripe, objsubid =
/// 21316). For tests and for reading pg_locks.
#[pgrx::pg_extern(sql = "")]
fn _simdup_lock_stripes(fp: i64, k: i32) -> Vec<i32> {
    lock_stripes(fp as u64, crate::args::max_distance(k)).into_iter().map(|s| s as i32).collect()
}
