//! The search: every row whose fingerprint is within k of a query, found through the block
//! indexes with the heap read only for rows that match.
//!
//! For each block i of the table's [`Layout`], the B-tree is probed with one key range per run
//! of block values within the block's threshold tᵢ of the query's ([`Layout::probes`]), through
//! the index access method directly (`index_beginscan` / `index_rescan` / `index_getnext_tid`,
//! returning the index tuple, as an index-only scan does). Each index entry carries the whole
//! fingerprint, so a candidate is checked from the index alone: only an entry within k — and
//! only from the first block that can find it ([`Layout::first_block`], so each row once) — is
//! looked up in the heap, with the caller's snapshot and following HOT chains
//! (`index_fetch_heap`), which gives the row version the snapshot sees, if any.

use pgrx::pg_sys;

use simdup_core::blocks::{unkey, Layout};

use super::indexes::{BlockIndexes, Kind};

/// Candidates checked between interrupt checks.
const CHECKS_PER_INTERRUPT: u32 = 1 << 14;

const SIGN: u64 = 1 << 63;

/// Calls `found(slot, fp)` once for every row version of `heap` visible to `snapshot` whose fingerprint
/// (the column the `indexes` are on) is within `k` of `q`, the slot holding that row version.
/// `k` < 0 finds nothing; `k` ≥ 64 finds every row with a fingerprint (probing one block in
/// full). Thresholds are chosen for the table's size (`rows`).
///
/// # Safety
/// `heap` is an open table relation (at least AccessShareLock), `snapshot` an MVCC or dirty
/// snapshot that stays valid (registered, active, or on the caller's frame) for the call, and `indexes` the block indexes of
/// `heap` as found by [`super::indexes::block_indexes`] in this transaction. With a dirty
/// snapshot, its xmin, xmax and speculativeToken describe the row version in the slot while
/// `found` runs.
pub(crate) unsafe fn search(
    heap: pg_sys::Relation,
    indexes: &BlockIndexes,
    q: u64,
    k: i32,
    snapshot: pg_sys::Snapshot,
    rows: f64,
    mut found: impl FnMut(*mut pg_sys::TupleTableSlot, u64),
) {
    if k < 0 {
        return;
    }
    let k = k.min(64);
    let layout: &Layout = &indexes.layout;
    let t = layout.thresholds_for(k, rows, super::cost::DESCENT_COST, super::cost::CHECK_COST);
    let probes = layout.probes(q, &t);
    let mut since_interrupt = 0u32;
    // SAFETY: the caller guarantees `heap` and `snapshot`; each index is opened and closed here
    // under AccessShareLock; the slot is created for `heap` and dropped before returning (on
    // error, the transaction's resource owner releases the scan, the buffers and the locks).
    unsafe {
        let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
        for (i, &oid) in indexes.oids.iter().enumerate() {
            let block_probes: Vec<_> = probes.iter().filter(|p| p.block == i).collect();
            if block_probes.is_empty() {
                continue;
            }
            let index = pg_sys::index_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let scan = begin_index_scan(heap, index, snapshot);
            (*scan).xs_want_itup = true;
            let offset = layout.offset(i);
            let mut keys = [pg_sys::ScanKeyData::default(), pg_sys::ScanKeyData::default()];
            for p in block_probes {
                match indexes.kind {
                    Kind::Key => {
                        init_key(&mut keys[0], pg_sys::BTGreaterEqualStrategyNumber, pg_sys::F_INT8GE, p.lo.into());
                        init_key(&mut keys[1], pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT8LE, p.hi.into());
                    }
                    Kind::Block => {
                        // The 16-bit block values of the key range, as the int4 keys of simhash_block.
                        let lo = ((p.lo as u64 ^ SIGN) >> 48) as i32;
                        let hi = ((p.hi as u64 ^ SIGN) >> 48) as i32;
                        init_key(&mut keys[0], pg_sys::BTGreaterEqualStrategyNumber, pg_sys::F_INT4GE, lo.into());
                        init_key(&mut keys[1], pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT4LE, hi.into());
                    }
                }
                pg_sys::index_rescan(scan, keys.as_mut_ptr(), 2, std::ptr::null_mut(), 0);
                while !pg_sys::index_getnext_tid(scan, pg_sys::ScanDirection::ForwardScanDirection).is_null() {
                    since_interrupt += 1;
                    if since_interrupt == CHECKS_PER_INTERRUPT {
                        since_interrupt = 0;
                        pgrx::check_for_interrupts!();
                    }
                    let itup = (*scan).xs_itup;
                    let fp = match indexes.kind {
                        Kind::Key => unkey(index_int8(itup, 1, (*scan).xs_itupdesc), offset),
                        Kind::Block => index_int8(itup, 2, (*scan).xs_itupdesc) as u64,
                    };
                    if layout.first_block(q, fp, k as u32, &t) != Some(i) {
                        continue; // too far, or found from an earlier block
                    }
                    // An MVCC snapshot sees at most one version of a HOT chain; a dirty one (the
                    // dedup check's) may see several (one being deleted, one being inserted):
                    // each is reported.
                    while pg_sys::index_fetch_heap(scan, slot) {
                        found(slot, fp);
                        if !(*scan).xs_heap_continue {
                            break;
                        }
                    }
                }
            }
            pg_sys::index_endscan(scan);
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        }
        pg_sys::ExecDropSingleTupleTableSlot(slot);
    }
}

/// `index_beginscan` with two scan keys and no ordering.
///
/// # Safety
/// `heap` and `index` are open, `snapshot` valid for the scan.
#[cfg(not(feature = "pg18"))]
unsafe fn begin_index_scan(
    heap: pg_sys::Relation,
    index: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
) -> pg_sys::IndexScanDesc {
    // SAFETY: the caller guarantees the relations and the snapshot.
    unsafe { pg_sys::index_beginscan(heap, index, snapshot, 2, 0) }
}

/// See the other variant (PostgreSQL 18 added the instrumentation argument; none here).
///
/// # Safety
/// As the other variant.
#[cfg(feature = "pg18")]
unsafe fn begin_index_scan(
    heap: pg_sys::Relation,
    index: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
) -> pg_sys::IndexScanDesc {
    // SAFETY: as above.
    unsafe { pg_sys::index_beginscan(heap, index, snapshot, std::ptr::null_mut(), 2, 0) }
}

/// # Safety
/// `key` is a scan key to initialise; `proc` a comparison function of the integer family.
unsafe fn init_key(key: &mut pg_sys::ScanKeyData, strategy: u32, proc: u32, arg: pg_sys::Datum) {
    // SAFETY: ScanKeyInit only fills the struct (and looks up `proc`, a built-in function).
    unsafe { pg_sys::ScanKeyInit(key, 1, strategy as pg_sys::StrategyNumber, pg_sys::Oid::from(proc), arg) }
}

/// Column `attnum` (a non-NULL bigint) of an index tuple.
///
/// # Safety
/// `itup` is an index tuple of `desc` whose column `attnum` is a non-NULL int8: the block
/// indexes' probe ranges never contain NULL keys, and a 0.1.0 index includes the fingerprint
/// of a row only where its key (a block of that fingerprint) is not NULL.
unsafe fn index_int8(itup: pg_sys::IndexTuple, attnum: i32, desc: pg_sys::TupleDesc) -> i64 {
    // SAFETY: see above; nocache_index_getattr reads a non-NULL attribute of a valid tuple.
    unsafe { pg_sys::nocache_index_getattr(itup, attnum, desc).value() as i64 }
}
