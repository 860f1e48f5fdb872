//! The search: every row whose fingerprint is within k of a query, found through the block
//! indexes with the heap read only for rows that match.
//!
//! For each block i of the table's [`Layout`], the B-tree is probed with one key range per run
//! of block values within the block's threshold tᵢ of the query's ([`Layout::probes`]),
//! ascending. A key index is read by simdup's own page reader ([`super::btree`]: descents and
//! leaf pages read in place, one leaf reused by the ranges it holds); the 0.1.0 block indexes,
//! a B-tree of a pre-PostgreSQL 12 format, and every index under `simdup.page_reader = off` go
//! through the index access method (`index_rescan` / `index_getnext_tid`, returning the index
//! tuple as an index-only scan does). Each index entry carries the whole fingerprint, so a
//! candidate is checked from the index alone: only an entry within k — and only from the first
//! block that can find it ([`Layout::first_block`], so each row once) — is looked up in the
//! heap, with the caller's snapshot and following HOT chains (`table_index_fetch_tuple`), which
//! gives the row version the snapshot sees, if any.

use pgrx::pg_sys;

use simdup_core::blocks::{unkey, Layout};

use super::btree::Reader;
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
    // SAFETY: the caller guarantees `heap` and `snapshot`; each index is opened and closed here
    // under AccessShareLock; the slot is created for `heap` and dropped before returning (on
    // error, the transaction's resource owner releases the scan, the buffers and the locks).
    unsafe {
        let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
        let fetch = pg_sys::table_index_fetch_begin(heap);
        for (i, &oid) in indexes.oids.iter().enumerate() {
            let ranges: Vec<(i64, i64)> = probes.iter().filter(|p| p.block == i).map(|p| (p.lo, p.hi)).collect();
            if ranges.is_empty() {
                continue;
            }
            let index = pg_sys::index_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let offset = layout.offset(i);
            // An entry's row is fetched only if within k and first found from this block (each
            // row once), checked from the fingerprint in the index alone.
            let wanted = |fp: u64| layout.first_block(q, fp, k as u32, &t) == Some(i);
            let reader = match indexes.kind {
                Kind::Key if crate::gucs::page_reader() => Reader::new(index, snapshot),
                _ => None,
            };
            if let Some(reader) = reader {
                // The keys are the whole (rotated) fingerprints: the check runs on the locked leaf.
                let keep = |key: i64| wanted(unkey(key, offset));
                let mut fetched = 0;
                reader.scan(&ranges, keep, |key, tid| {
                    fetch_heap(fetch, tid, snapshot, slot, || {
                        fetched += 1;
                        found(slot, unkey(key, offset))
                    })
                });
                crate::compat::count_stats(index, 0, 0, fetched);
            } else {
                search_through_am(
                    heap,
                    index,
                    indexes.kind,
                    &ranges,
                    snapshot,
                    slot,
                    |itup, desc| {
                        let fp = match indexes.kind {
                            Kind::Key => unkey(index_int8(itup, 1, desc), offset),
                            Kind::Block => index_int8(itup, 2, desc) as u64,
                        };
                        wanted(fp).then_some(fp)
                    },
                    &mut found,
                );
            }
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        }
        pg_sys::table_index_fetch_end(fetch);
        pg_sys::ExecDropSingleTupleTableSlot(slot);
    }
}

/// Fetches the heap row versions of `tid` that `snapshot` sees into `slot`, calling `found`
/// for each, following the HOT chain. An MVCC snapshot sees at most one version of a chain; a
/// dirty one (the dedup check's) may see several (one being deleted, one being inserted): each
/// is reported.
///
/// # Safety
/// `fetch` is an index fetch of the table `slot` belongs to, `snapshot` valid.
pub(crate) unsafe fn fetch_heap(
    fetch: *mut pg_sys::IndexFetchTableData,
    tid: &pg_sys::ItemPointerData,
    snapshot: pg_sys::Snapshot,
    slot: *mut pg_sys::TupleTableSlot,
    mut found: impl FnMut(),
) {
    let mut tid = *tid;
    let mut call_again = false;
    loop {
        let mut all_dead = false;
        // SAFETY: the caller guarantees the fetch, the slot and the snapshot.
        if !unsafe { pg_sys::table_index_fetch_tuple(fetch, &mut tid, snapshot, slot, &mut call_again, &mut all_dead) }
        {
            return;
        }
        found();
        if !call_again {
            return;
        }
    }
}

/// The search of one block index through the index access method (`index_beginscan` /
/// `index_rescan` / `index_getnext_tid`, returning the index tuple as an index-only scan
/// does): for the 0.1.0 block indexes, for a B-tree the page reader does not read, and under
/// `simdup.page_reader = off`. `check(itup, desc)` gives the fingerprint of an entry to fetch.
///
/// # Safety
/// As [`search`]; `index` one of its block indexes, open; `slot` a slot of `heap`.
#[allow(clippy::too_many_arguments)]
unsafe fn search_through_am(
    heap: pg_sys::Relation,
    index: pg_sys::Relation,
    kind: Kind,
    ranges: &[(i64, i64)],
    snapshot: pg_sys::Snapshot,
    slot: *mut pg_sys::TupleTableSlot,
    mut check: impl FnMut(pg_sys::IndexTuple, pg_sys::TupleDesc) -> Option<u64>,
    found: &mut impl FnMut(*mut pg_sys::TupleTableSlot, u64),
) {
    let mut since_interrupt = 0u32;
    // SAFETY: the caller guarantees the relations, the snapshot and the slot; the scan is ended
    // here (on error, the resource owner releases it).
    unsafe {
        let scan = crate::compat::index_beginscan(heap, index, snapshot, 2, 0);
        (*scan).xs_want_itup = true;
        let mut keys = [pg_sys::ScanKeyData::default(), pg_sys::ScanKeyData::default()];
        for &(lo, hi) in ranges {
            match kind {
                Kind::Key => {
                    init_key(&mut keys[0], pg_sys::BTGreaterEqualStrategyNumber, pg_sys::F_INT8GE, lo.into());
                    init_key(&mut keys[1], pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT8LE, hi.into());
                }
                Kind::Block => {
                    // The 16-bit block values of the key range, as the int4 keys of simhash_block.
                    let lo = ((lo as u64 ^ SIGN) >> 48) as i32;
                    let hi = ((hi as u64 ^ SIGN) >> 48) as i32;
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
                let Some(fp) = check((*scan).xs_itup, (*scan).xs_itupdesc) else { continue };
                while pg_sys::index_fetch_heap(scan, slot) {
                    found(slot, fp);
                    if !(*scan).xs_heap_continue {
                        break;
                    }
                }
            }
        }
        pg_sys::index_endscan(scan);
    }
}

/// # Safety
/// `key` is a scan key to initialise; `proc` a comparison function of the integer family.
pub(crate) unsafe fn init_key(key: &mut pg_sys::ScanKeyData, strategy: u32, proc: u32, arg: pg_sys::Datum) {
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
    // SAFETY: the caller guarantees `itup` is a tuple of `desc` whose column `attnum` is a
    // non-NULL int8, which nocache_index_getattr reads (by value on 64-bit platforms).
    unsafe { pg_sys::nocache_index_getattr(itup, attnum, desc).value() as i64 }
}
