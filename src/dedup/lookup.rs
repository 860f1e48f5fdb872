//! The check of one row: lock its stripes, then find the earliest existing near-duplicate.
//!
//! The steps follow the argument in docs/dedup.md ("Under concurrency"):
//!
//! 1. the row's k + 1 lock stripes (`simdup_core::locks`), exclusive transaction-scoped
//!    advisory locks `(table OID, stripe)`, in ascending order;
//! 2. then the command counter is advanced and the latest snapshot taken, so the search sees
//!    every committed row — also those committed after a REPEATABLE READ transaction's own
//!    snapshot — and this transaction's earlier rows, the same statement's included;
//! 3. the search through the block indexes ([`crate::search::scan`]) reads the index and the
//!    heap directly, like a unique index's check: no SPI, no plan, no permission or row-level
//!    security in the way, so every row is seen whoever inserts.

use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::IntoDatum;

use simdup_core::locks::lock_stripes;

use crate::errors::not_in_prerequisite_state;
use crate::search::{estimated_rows, indexes::block_indexes, scan::search};

use super::config::Config;
use super::tuple::relation_name;

/// The earliest near-duplicate: its key (copied into the current memory context), the key as
/// text, and its distance.
pub(super) struct Found {
    pub key: pg_sys::Datum,
    pub key_text: String,
    pub distance: u32,
}

fn same_tid(a: &pg_sys::ItemPointerData, b: &pg_sys::ItemPointerData) -> bool {
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

/// Takes `pg_advisory_xact_lock(classid, stripe)`.
fn lock_exclusive(classid: i32, stripe: i32) {
    // SAFETY: pg_advisory_xact_lock_int4 takes two int4 arguments and returns void; the direct
    // call builds a valid fcinfo for them.
    unsafe fn f(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
        // SAFETY: `fcinfo` comes from direct_function_call_as_datum with the two arguments.
        unsafe { pg_sys::pg_advisory_xact_lock_int4(fcinfo) }
    }
    // SAFETY: see above; both datums are int4.
    unsafe { pgrx::direct_function_call_as_datum(f, &[classid.into_datum(), stripe.into_datum()]) };
}

/// Locks the stripes of fingerprint `fp` for `rel`, then returns the existing row within k of
/// `fp` with the smallest key (column `key_attnum`), other than the row at `exclude` (the row
/// being updated).
///
/// # Safety
/// `rel` is the open relation the trigger fired on; `key_attnum` one of its columns.
pub(super) unsafe fn earliest(
    rel: pg_sys::Relation,
    cfg: &Config,
    fp: i64,
    fp_attnum: i32,
    key_attnum: i32,
    exclude: Option<pg_sys::ItemPointerData>,
) -> Option<Found> {
    // SAFETY: the caller guarantees `rel`; the snapshot is registered for the search and
    // unregistered after it (on error, the resource owner releases it).
    unsafe {
        let relid = (*rel).rd_id;
        for stripe in lock_stripes(fp as u64, cfg.k) {
            lock_exclusive(u32::from(relid) as i32, stripe as i32);
        }
        let Some(indexes) = block_indexes(rel, fp_attnum as pg_sys::AttrNumber) else {
            not_in_prerequisite_state(
                format!("table \"{}\" has no simdup block indexes on column \"{}\"", relation_name(rel), cfg.fp_column),
                "The dedup trigger finds near-duplicates through them: call simdup_reindex(table) to build them again.",
            );
        };
        pg_sys::CommandCounterIncrement();
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());

        let att = &*(*(*rel).rd_att).attrs.as_ptr().add(key_attnum as usize - 1);
        let tc = pg_sys::lookup_type_cache(att.atttypid, pg_sys::TYPECACHE_CMP_PROC_FINFO as i32);
        if (*tc).cmp_proc_finfo.fn_oid == pg_sys::InvalidOid {
            pg_sys::UnregisterSnapshot(snapshot);
            not_in_prerequisite_state(
                format!("the key column of table \"{}\" has no ordering", relation_name(rel)),
                "The dedup trigger reports the near-duplicate with the smallest key; use a key type with a B-tree operator class.",
            );
        }
        let mut best: Option<(pg_sys::Datum, u32)> = None;
        search(rel, &indexes, fp as u64, cfg.k as i32, snapshot, estimated_rows(rel), |slot, other| {
            if exclude.is_some_and(|t| same_tid(&t, &(*slot).tts_tid)) {
                return;
            }
            pg_sys::slot_getsomeattrs_int(slot, key_attnum);
            if *(*slot).tts_isnull.add(key_attnum as usize - 1) {
                return; // a NULL key cannot be named (a primary key is never NULL)
            }
            let key = *(*slot).tts_values.add(key_attnum as usize - 1);
            let smaller = match best {
                None => true,
                Some((b, _)) => {
                    (pg_sys::FunctionCall2Coll(&mut (*tc).cmp_proc_finfo, att.attcollation, key, b).value() as i32) < 0
                }
            };
            if smaller {
                let copy = copy_datum(key, att.attbyval, att.attlen);
                best = Some((copy, simdup_core::hamming(fp as u64, other)));
            }
        });
        pg_sys::UnregisterSnapshot(snapshot);
        best.map(|(key, distance)| {
            let mut out = pg_sys::InvalidOid;
            let mut varlena = false;
            pg_sys::getTypeOutputInfo(att.atttypid, &mut out, &mut varlena);
            let text = pg_sys::OidOutputFunctionCall(out, key);
            Found { key, key_text: CStr::from_ptr(text).to_string_lossy().into_owned(), distance }
        })
    }
}

/// The lock stripes (advisory lock keys (table OID, stripe)) the dedup trigger takes for a
/// fingerprint at maximum distance k, ascending. For tests and for reading pg_locks.
#[pgrx::pg_extern(immutable, strict, parallel_safe)]
fn _simdup_lock_stripes(fp: i64, k: i32) -> Vec<i32> {
    lock_stripes(fp as u64, crate::args::max_distance(k)).into_iter().map(|s| s as i32).collect()
}

pgrx::extension_sql!(
    "COMMENT ON FUNCTION _simdup_lock_stripes(bigint, integer) IS 'simdup (internal): the advisory lock stripes (0..4095) the dedup trigger locks exclusively, as pg_advisory_xact_lock(table OID, stripe), for fingerprint fp at maximum distance k: one per piece of the fingerprint cut into k + 1 pieces (near-duplicates share a piece, so a stripe), ascending';",
    name = "comment__simdup_lock_stripes",
    requires = [_simdup_lock_stripes]
);
