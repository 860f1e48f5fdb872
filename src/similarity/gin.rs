//! Reading a similarity index directly: the rows that share an LSH band value with a text.
//!
//! A similarity index is a GIN index on `_simdup_similar_bands(body, k, bands, rows)`
//! (`bigint[]`). GIN answers `&&` (overlap, strategy 1 of the array operator class) only as a
//! bitmap: [`Candidates`] runs the index's bitmap scan for the new row's band values, as a
//! Bitmap Index Scan would (the pending list of `fastupdate` included), then fetches the rows of
//! the bitmap through the table's index fetch with the caller's snapshot, following HOT chains
//! ([`crate::search::scan::fetch_heap`]). When the rows are more than the trigger's verification
//! limit, [`count_shared`] finds the same rows again one value at a time and counts how many
//! values each shares (simdup_core::similarity::candidates); [`visit_rows`] fetches the ones
//! chosen. No SPI, no plan, no permission or row-level security check:
//! the dedup trigger sees every row, whoever writes.
//!
//! An exact page of the bitmap names the candidates themselves (GIN's overlap needs no recheck).
//! A lossy page (the bitmap outgrew `work_mem`) names only its heap page: every row on it is
//! visited with `recheck` set, and the caller must test the band overlap itself, so that the
//! answer never depends on memory.

use pgrx::pg_sys;
use pgrx::IntoDatum;

use crate::compat;
use crate::search::scan::{fetch_heap, init_key};

/// GIN's overlap strategy of the array operator class (`GinOverlapStrategy`).
const GIN_OVERLAP_STRATEGY: u32 = 1;

/// The rows of a similarity index sharing a value with a text's band values (or keys): the
/// bitmap of one bitmap scan, at most `work_mem` large, counted by [`Candidates::rows`] and read
/// by [`Candidates::visit`] (a built bitmap may be iterated more than once).
pub(crate) struct Candidates(*mut pg_sys::TIDBitmap);

impl Candidates {
    /// Runs the bitmap scan of `index` for `values` with `snapshot`.
    ///
    /// # Safety
    /// `index` is the OID of a GIN index on a `bigint[]` expression of an open table;
    /// `snapshot` is valid for the call.
    pub(crate) unsafe fn scan(index: pg_sys::Oid, values: &[i64], snapshot: pg_sys::Snapshot) -> Self {
        // SAFETY: as the caller guarantees; the index is opened and closed here.
        unsafe {
            let irel = pg_sys::index_open(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let tbm = bitmap(irel, values, snapshot);
            pg_sys::index_close(irel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            Candidates(tbm)
        }
    }

    /// The rows the bitmap names, each counted once; None when a page of it is lossy (the
    /// bitmap outgrew `work_mem` and names pages, not rows).
    pub(crate) fn rows(&self) -> Option<usize> {
        let mut rows = Some(0);
        // SAFETY: the bitmap is built and not being iterated elsewhere.
        unsafe {
            compat::tbm_for_each_page(self.0, |_, offsets, recheck| {
                rows = rows.filter(|_| !recheck).map(|n| n + offsets.len());
            })
        };
        rows
    }

    /// Adds one to `shared[row]` for each row of the bitmap; false, adding nothing more, at a
    /// lossy page.
    fn count_into(&self, shared: &mut simdup_core::similarity::candidates::Shared) -> bool {
        let mut exact = true;
        // SAFETY: as in `rows`.
        unsafe {
            compat::tbm_for_each_page(self.0, |block, offsets, recheck| {
                exact &= !recheck;
                if exact {
                    for &offset in offsets {
                        *shared.entry(position(block, offset)).or_insert(0) += 1;
                    }
                }
            })
        };
        exact
    }

    /// Calls `visit(slot, recheck)` for each row version of `heap` that `snapshot` sees among
    /// the bitmap's rows; `recheck` when the row came from a lossy bitmap page (see the
    /// module's note). A row may be visited twice (a lossy page reaches a HOT chain's members
    /// one by one); callers keep the smallest key, which repeats do not change.
    ///
    /// # Safety
    /// `heap` is the open table of the scanned index; `snapshot` is valid for the whole call.
    pub(crate) unsafe fn visit(
        &self,
        heap: pg_sys::Relation,
        snapshot: pg_sys::Snapshot,
        mut visit: impl FnMut(*mut pg_sys::TupleTableSlot, bool),
    ) {
        // SAFETY: the caller guarantees the relation and the snapshot; the fetch and the slot
        // are opened and released here (on error, the transaction's resource owner and memory
        // context release them).
        unsafe {
            let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
            let fetch = pg_sys::table_index_fetch_begin(heap);
            compat::tbm_for_each_page(self.0, |block, offsets, recheck| {
                pgrx::check_for_interrupts!();
                for &offset in offsets {
                    let mut tid = pg_sys::ItemPointerData::default();
                    pgrx::itemptr::item_pointer_set_all(&mut tid, block, offset);
                    fetch_heap(fetch, &tid, snapshot, slot, || visit(slot, recheck));
                }
            });
            pg_sys::table_index_fetch_end(fetch);
            pg_sys::ExecDropSingleTupleTableSlot(slot);
        }
    }
}

impl Drop for Candidates {
    fn drop(&mut self) {
        // SAFETY: the bitmap was created by `scan` and is freed once, here.
        unsafe { pg_sys::tbm_free(self.0) }
    }
}

/// A row's position as [`simdup_core::similarity::candidates`] names it.
fn position(block: pg_sys::BlockNumber, offset: u16) -> u64 {
    (u64::from(block) << 16) | u64::from(offset)
}

/// Calls `visit(slot)` for each row version of `heap` that `snapshot` sees at `positions`
/// (ascending, as a bitmap names them: rows from [`count_shared`]), following HOT chains.
///
/// # Safety
/// As [`Candidates::visit`].
pub(crate) unsafe fn visit_rows(
    heap: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    positions: impl Iterator<Item = u64>,
    mut visit: impl FnMut(u64, *mut pg_sys::TupleTableSlot),
) {
    // SAFETY: as in `Candidates::visit`.
    unsafe {
        let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
        let fetch = pg_sys::table_index_fetch_begin(heap);
        for at in positions {
            pgrx::check_for_interrupts!();
            let mut tid = pg_sys::ItemPointerData::default();
            pgrx::itemptr::item_pointer_set_all(&mut tid, (at >> 16) as pg_sys::BlockNumber, (at & 0xffff) as u16);
            fetch_heap(fetch, &tid, snapshot, slot, || visit(at, slot));
        }
        pg_sys::table_index_fetch_end(fetch);
        pg_sys::ExecDropSingleTupleTableSlot(slot);
    }
}

/// Adds to `shared` how many of `values` each row of `index` holds: one bitmap scan a value
/// (the rows of all of them are the rows of [`Candidates::scan`] of `values`, as GIN's overlap
/// is true exactly when one value is shared). False when a bitmap went lossy (the counts are
/// then incomplete).
///
/// # Safety
/// As [`Candidates::scan`].
pub(crate) unsafe fn count_shared(
    index: pg_sys::Oid,
    values: &[i64],
    snapshot: pg_sys::Snapshot,
    shared: &mut simdup_core::similarity::candidates::Shared,
) -> bool {
    let mut distinct = values.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    // SAFETY: as the caller guarantees.
    distinct.iter().all(|v| unsafe { Candidates::scan(index, std::slice::from_ref(v), snapshot) }.count_into(shared))
}

/// The bitmap of the index entries sharing a value with `bands`, at most `work_mem` large.
///
/// # Safety
/// As [`Candidates::scan`]; `index` is open.
unsafe fn bitmap(index: pg_sys::Relation, bands: &[i64], snapshot: pg_sys::Snapshot) -> *mut pg_sys::TIDBitmap {
    // SAFETY: the caller guarantees `index` is an open GIN index on a `bigint[]` expression and
    // `snapshot` valid; the array datum lives in the current memory context for the scan,
    // which is ended here.
    unsafe {
        let scan = compat::index_beginscan_bitmap(index, snapshot, 1);
        let mut key = pg_sys::ScanKeyData::default();
        let query = bands.to_vec().into_datum().unwrap_or(pg_sys::Datum::from(0));
        init_key(&mut key, GIN_OVERLAP_STRATEGY, pg_sys::F_ARRAYOVERLAP, query);
        pg_sys::index_rescan(scan, &mut key, 1, std::ptr::null_mut(), 0);
        let max_bytes = pg_sys::work_mem as usize * 1024;
        let tbm = compat::tbm_create(max_bytes);
        pg_sys::index_getbitmap(scan, tbm);
        pg_sys::index_endscan(scan);
        tbm
    }
}
