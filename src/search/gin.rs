//! Reading a similarity index directly: the rows that share an LSH band value with a text.
//!
//! A similarity index is a GIN index on `_simdup_similar_bands(body, k, bands, rows)`
//! (`bigint[]`). GIN answers `&&` (overlap, strategy 1 of the array operator class) only as a
//! bitmap: [`band_candidates`] runs the index's bitmap scan for the new row's band values, as a
//! Bitmap Index Scan would (the pending list of `fastupdate` included), then fetches the rows of
//! the bitmap through the table's index fetch with the caller's snapshot, following HOT chains
//! ([`super::scan::fetch_heap`]). No SPI, no plan, no permission or row-level security check:
//! the dedup trigger sees every row, whoever writes.
//!
//! An exact page of the bitmap names the candidates themselves (GIN's overlap needs no recheck).
//! A lossy page (the bitmap outgrew `work_mem`) names only its heap page: every row on it is
//! visited with `recheck` set, and the caller must test the band overlap itself, so that the
//! answer never depends on memory.

use pgrx::pg_sys;
use pgrx::IntoDatum;

use super::scan::{fetch_heap, init_key};
use crate::compat;

/// GIN's overlap strategy of the array operator class (`GinOverlapStrategy`).
const GIN_OVERLAP_STRATEGY: u32 = 1;

/// Calls `visit(slot, recheck)` for each row version of `heap` that `snapshot` sees among the
/// rows of the GIN index `index` (a similarity index of `heap`) sharing a value with `bands`;
/// `recheck` when the row came from a lossy bitmap page (see the module's note). A row may be
/// visited twice (a lossy page reaches a HOT chain's members one by one); callers keep the
/// smallest key, which repeats do not change.
///
/// # Safety
/// `heap` is an open table and `index` the OID of one of its GIN indexes on a `bigint[]`
/// expression; `snapshot` is valid for the whole call.
pub(crate) unsafe fn band_candidates(
    heap: pg_sys::Relation,
    index: pg_sys::Oid,
    bands: &[i64],
    snapshot: pg_sys::Snapshot,
    mut visit: impl FnMut(*mut pg_sys::TupleTableSlot, bool),
) {
    // SAFETY: the caller guarantees the relations and the snapshot; the index, the scan, the
    // bitmap, the fetch and the slot are opened and released here (on error, the transaction's
    // resource owner and memory context release them).
    unsafe {
        let irel = pg_sys::index_open(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let tbm = bitmap(irel, bands, snapshot);
        pg_sys::index_close(irel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);

        let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
        let fetch = pg_sys::table_index_fetch_begin(heap);
        compat::tbm_for_each_page(tbm, |block, offsets, recheck| {
            pgrx::check_for_interrupts!();
            for &offset in offsets {
                let mut tid = pg_sys::ItemPointerData::default();
                pgrx::itemptr::item_pointer_set_all(&mut tid, block, offset);
                fetch_heap(fetch, &tid, snapshot, slot, || visit(slot, recheck));
            }
        });
        pg_sys::table_index_fetch_end(fetch);
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::tbm_free(tbm);
    }
}

/// The bitmap of the index entries sharing a value with `bands`, at most `work_mem` large.
///
/// # Safety
/// As [`band_candidates`]; `index` is open.
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
