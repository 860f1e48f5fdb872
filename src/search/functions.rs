//! The search's SQL functions: the tids of a served query, the exact
//! nearest rows of `simdup_nearest`, and the catalog listing of a column's block indexes. A
//! direct call checks the caller's access as a query of the table would ([`check_access`]).

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::cost::FIRST_RADIUS;
use super::plan_nodes::PLANNED_CALL;
use super::{indexes, scan};
use crate::catalog::{estimated_rows, open_relation, open_table};
use crate::errors::{invalid_parameter, not_in_prerequisite_state};

/// The heap relation `relid` ([`crate::catalog::open_table`]) with its block indexes on column `attnum`; 55000
/// when it has none. With `check`, the current user's access is checked first
/// ([`check_access`]): direct calls of the search functions; the planner's own call of
/// `_simdup_tids` runs in a scan whose table the executor has already checked.
///
/// # Safety
/// Must run in a transaction; the caller closes the relation with `table_close`.
unsafe fn open_indexed(relid: pg_sys::Oid, attnum: i32, check: bool) -> (pg_sys::Relation, indexes::BlockIndexes) {
    // SAFETY: the caller guarantees a transaction, as open_table requires, and closes the
    // relation it returns with `table_close`, as open_table asks.
    let heap = unsafe { open_table(relid) };
    if check {
        // SAFETY: `heap` is open.
        unsafe { check_access(heap, attnum) };
    }
    // SAFETY: `heap` is open.
    let found = unsafe { indexes::block_indexes(heap, attnum as pg_sys::AttrNumber) };
    let Some(found) = found else {
        // SAFETY: `heap` is open; get_rel_name only reads the catalog.
        let name = unsafe { std::ffi::CStr::from_ptr(pg_sys::get_rel_name(relid)) }.to_string_lossy().into_owned();
        not_in_prerequisite_state(
            format!("table \"{name}\" has no simdup block indexes on column {attnum}"),
            "Call simdup_enable(table, text_column) first, or simdup_reindex(table) for a table whose block indexes were dropped.",
        );
    };
    (heap, found)
}

/// The search reads the table's indexes and heap directly, so it checks what a query of the
/// table would ([`crate::access::read`]): SELECT on the table or on the fingerprint column
/// (42501 otherwise), and no row-level security in force for the current user (the search would
/// see rows the policies hide; the planner step does not offer the search then, and a direct
/// call is refused).
///
/// # Safety
/// `heap` is an open relation and `attnum` a column number.
unsafe fn check_access(heap: pg_sys::Relation, attnum: i32) {
    use crate::access::{read, Read};
    use crate::errors::{Code, Error};
    // SAFETY: ACL and RLS checks of an open relation; its rd_rel holds its name.
    unsafe {
        let name = || std::ffi::CStr::from_ptr((*(*heap).rd_rel).relname.data.as_ptr()).to_string_lossy().into_owned();
        match read((*heap).rd_id, attnum as pg_sys::AttrNumber) {
            Read::Allowed => {}
            Read::NoPrivilege => {
                Error::new(Code::ERRCODE_INSUFFICIENT_PRIVILEGE, format!("permission denied for table {}", name())).raise()
            }
            Read::RowSecurity => Error::new(
                Code::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!("simdup's index search is not available on table {} under row-level security", name()),
            )
            .hint("Query the table with hamming(fp, q) <= k: with row-level security in force the planner reads it without the block indexes, applying the policies.")
            .raise(),
        }
    }
}

/// `_simdup_tids(tbl oid, attnum int, q bigint, k int) RETURNS tid[]`: the tids of the rows of
/// `tbl` visible to the active snapshot whose column `attnum` is within `k` of `q` (the row
/// versions the snapshot sees, HOT chains followed), found through the block indexes. The
/// planner step puts it in a Tid Scan's `ctid = ANY (...)`; the scan keeps the original qual
/// as its filter, so the answer is the qual's whatever this returns.
///
/// `planned`: called from the Tid Scan the planner step built ([`planned_call`]). The executor
/// has checked the privileges of that scan's table as PostgreSQL does for its range table
/// entry (a view's owner's, for a view), so no check is made here; and when
/// `simdup.index_search` is off (a cached generic plan made while it was on), every visible
/// row's tid is returned, so the scan filters the table as a sequential scan would. A direct
/// call checks the current user's access.
fn tids(relid: pg_sys::Oid, attnum: i32, q: i64, k: i32, planned: bool) -> Vec<pg_sys::ItemPointerData> {
    let mut out = Vec::new();
    // SAFETY: in a query, so in a transaction with an active snapshot, which outlives the call.
    unsafe {
        let (heap, found) = open_indexed(relid, attnum, !planned);
        let snapshot = pg_sys::GetActiveSnapshot();
        if planned && !crate::gucs::index_search() {
            let scan = pg_sys::table_beginscan(heap, snapshot, 0, std::ptr::null_mut());
            let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
            while pg_sys::table_scan_getnextslot(scan, pg_sys::ScanDirection::ForwardScanDirection, slot) {
                out.push((*slot).tts_tid);
                if out.len() % 16384 == 0 {
                    pgrx::check_for_interrupts!();
                }
            }
            pg_sys::ExecDropSingleTupleTableSlot(slot);
            pg_sys::table_endscan(scan);
        } else {
            scan::search(heap, &found, q as u64, k, snapshot, estimated_rows(heap), |slot, _| {
                out.push((*slot).tts_tid)
            });
        }
        pg_sys::table_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
    out
}

/// Whether this call of a search function is the one the planner step put in a Tid Scan
/// (its FuncExpr carries [`PLANNED_CALL`], which SQL cannot give a call of it).
///
/// # Safety
/// `fcinfo` is the function manager's call information.
unsafe fn planned_call(fcinfo: pg_sys::FunctionCallInfo) -> bool {
    // SAFETY: flinfo and fn_expr are set by the executor for calls in expressions; fn_expr is
    // NULL or a valid node.
    unsafe {
        let flinfo = (*fcinfo).flinfo;
        if flinfo.is_null() || (*flinfo).fn_expr.is_null() {
            return false;
        }
        let expr = (*flinfo).fn_expr;
        (*expr).type_ == pg_sys::NodeTag::T_FuncExpr && (*(expr as *mut pg_sys::FuncExpr)).funcformat == PLANNED_CALL
    }
}

/// The arguments (table oid, column number, fingerprint, integer) of the V1 search functions.
///
/// # Safety
/// `fcinfo` is the function manager's call of a function declared STRICT with arguments
/// (oid, integer, bigint, integer): every argument is present, not NULL, of that type.
unsafe fn search_args(fcinfo: pg_sys::FunctionCallInfo) -> (pg_sys::Oid, i32, i64, i32) {
    // SAFETY: the caller guarantees a STRICT call with arguments (oid, integer, bigint, integer):
    // arguments 0 to 3 are present, not NULL, and of the types read here.
    unsafe {
        (
            pgrx::fcinfo::pg_getarg::<pg_sys::Oid>(fcinfo, 0).unwrap_or_default(),
            pgrx::fcinfo::pg_getarg::<i32>(fcinfo, 1).unwrap_or_default(),
            pgrx::fcinfo::pg_getarg::<i64>(fcinfo, 2).unwrap_or_default(),
            pgrx::fcinfo::pg_getarg::<i32>(fcinfo, 3).unwrap_or_default(),
        )
    }
}

/// A `tid[]` of `tids`.
fn tid_array(tids: &[pg_sys::ItemPointerData]) -> pg_sys::Datum {
    let mut datums: Vec<pg_sys::Datum> =
        tids.iter().map(|t| pg_sys::Datum::from(t as *const pg_sys::ItemPointerData)).collect();
    // SAFETY: construct_array copies the 6-byte tids (typbyval false, alignment 's') into a new
    // array in the current memory context; `tids` outlives the call.
    unsafe {
        pg_sys::construct_array(
            datums.as_mut_ptr(),
            datums.len() as i32,
            pg_sys::TIDOID,
            std::mem::size_of::<pg_sys::ItemPointerData>() as i32,
            false,
            pg_sys::TYPALIGN_SHORT as std::ffi::c_char,
        )
        .into()
    }
}

// `_simdup_tids` and `_simdup_nearest_tids` are the two V1 entry points written by hand, not
// by `#[pg_extern]`: their C symbols are named in the SQL of every installed version since 0.2.0
// (`AS 'MODULE_PATHNAME', '_simdup_tids'`), and between installing a new library and ALTER
// EXTENSION UPDATE the old version's SQL calls the new library, so the symbols must keep
// their names (`#[pg_extern]` would export `_simdup_tids_wrapper`). They also read the call's
// expression (`flinfo->fn_expr`, [`planned_call`]). Their SQL declarations are in
// sql/functions.sql.
crate::fmgr::finfo_v1!(pg_finfo__simdup_tids);

/// # Safety
/// Called by the function manager as a V1 function declared STRICT with arguments
/// (oid, integer, bigint, integer).
#[unsafe(no_mangle)]
#[doc(hidden)]
#[pg_guard]
pub unsafe extern "C-unwind" fn _simdup_tids(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: this function's contract: the function manager's call of a STRICT V1 function of
    // (oid, integer, bigint, integer), which is what search_args asks.
    let (relid, attnum, q, k) = unsafe { search_args(fcinfo) };
    // SAFETY: `fcinfo` is the function manager's call information (this function's contract),
    // all planned_call asks.
    let planned = unsafe { planned_call(fcinfo) };
    tid_array(&tids(relid, attnum, q, k, planned))
}

/// The tids of the rows of `heap` nearest to `q` in column `attnum`: every row whose distance
/// is at most the n-th smallest (ties at the n-th distance included, so that any `ORDER BY
/// fp <~> q, … LIMIT n` above it picks the rows a full sort would). When fewer than `n` rows
/// have a fingerprint, every row with a fingerprint and every row without one (their distance
/// is NULL, which sorts last). `n` None: no limit (every row).
///
/// Exact: a search at radius k finds every row within k ([`scan::search`]); when it finds at
/// least n, the n-th smallest distance is at most k, so every row that near is among them.
/// The radius starts at [`FIRST_RADIUS`] and grows so that each search costs about twice the
/// last ([`super::cost::probe_cost`]); once the next search would cost more than reading the
/// whole table, the table is read instead ([`nearest_by_scan`]).
///
/// # Safety
/// In a transaction with an active snapshot; `heap` open, `found` its block indexes on `attnum`.
unsafe fn nearest(
    heap: pg_sys::Relation,
    found: &indexes::BlockIndexes,
    attnum: i32,
    q: u64,
    n: Option<u64>,
    use_index: bool,
) -> Vec<pg_sys::ItemPointerData> {
    if n == Some(0) {
        return Vec::new();
    }
    // SAFETY: the caller guarantees a transaction with an active snapshot and the relation.
    unsafe {
        let snapshot = pg_sys::GetActiveSnapshot();
        let rows = estimated_rows(heap);
        let (Some(n), true) = (n, use_index) else { return nearest_by_scan(heap, attnum, q, n, snapshot) };
        let whole_table = super::cost::scan_cost(heap);
        let cost = |k: i32| super::cost::probe_cost(found, rows, k).1;
        let mut k = FIRST_RADIUS;
        let mut within: Vec<(u32, pg_sys::ItemPointerData)> = Vec::new();
        while k < 64 && cost(k) <= whole_table {
            within.clear();
            scan::search(heap, found, q, k, snapshot, rows, |slot, fp| {
                within.push((simdup_core::hamming(fp, q), (*slot).tts_tid))
            });
            if within.len() as u64 >= n {
                within.sort_unstable_by_key(|&(d, _)| d);
                let nth = within[n as usize - 1].0;
                return within.into_iter().take_while(|&(d, _)| d <= nth).map(|(_, t)| t).collect();
            }
            let next = cost(k) * 2.0;
            k += 1;
            while k < 64 && cost(k + 1) <= next {
                k += 1;
            }
        }
        nearest_by_scan(heap, attnum, q, Some(n), snapshot)
    }
}

/// [`nearest`] by reading every row visible to `snapshot`: the rows within the n-th smallest
/// distance, kept in memory only while they can still be among the nearest (a count per
/// distance gives the current n-th distance).
///
/// # Safety
/// `heap` is open, `snapshot` valid for the call, `attnum` a bigint column of `heap`.
unsafe fn nearest_by_scan(
    heap: pg_sys::Relation,
    attnum: i32,
    q: u64,
    n: Option<u64>,
    snapshot: pg_sys::Snapshot,
) -> Vec<pg_sys::ItemPointerData> {
    let n = n.unwrap_or(u64::MAX);
    let mut kept: Vec<(u32, pg_sys::ItemPointerData)> = Vec::new();
    let mut nulls: Vec<pg_sys::ItemPointerData> = Vec::new();
    let mut per_distance = [0u64; 65];
    let mut with_fp = 0u64;
    let mut cutoff = 64u32; // rows farther than this are not among the n nearest
                            // SAFETY: the caller guarantees the relation and the snapshot; the scan and slot are ended
                            // and dropped here (on error, the resource owner releases them).
    unsafe {
        let scan = pg_sys::table_beginscan(heap, snapshot, 0, std::ptr::null_mut());
        let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
        let mut since_interrupt = 0u32;
        while pg_sys::table_scan_getnextslot(scan, pg_sys::ScanDirection::ForwardScanDirection, slot) {
            since_interrupt += 1;
            if since_interrupt == 1 << 14 {
                since_interrupt = 0;
                pgrx::check_for_interrupts!();
            }
            let mut isnull = false;
            let datum = pg_sys::slot_getattr(slot, attnum, &mut isnull);
            if isnull {
                if with_fp < n {
                    nulls.push((*slot).tts_tid);
                }
                continue;
            }
            let d = simdup_core::hamming(datum.value() as u64, q);
            with_fp += 1;
            if d > cutoff {
                continue;
            }
            kept.push((d, (*slot).tts_tid));
            per_distance[d as usize] += 1;
            if with_fp >= n {
                nulls = Vec::new();
                let mut seen = 0;
                cutoff = (0..=64)
                    .find(|&c| {
                        seen += per_distance[c as usize];
                        seen >= n
                    })
                    .unwrap_or(64);
                if kept.len() > 2 * (n.min(1 << 20) as usize) + 1024 {
                    kept.retain(|&(d, _)| d <= cutoff);
                }
            }
        }
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::table_endscan(scan);
    }
    let mut out: Vec<_> = kept.into_iter().filter(|&(d, _)| d <= cutoff).map(|(_, t)| t).collect();
    out.extend(nulls);
    out
}

/// `_simdup_nearest_tids(tbl oid, attnum int, q bigint, n bigint) RETURNS tid[]`: the tids of
/// [`nearest`]. The planner step puts it in the Tid Scan it adds for `ORDER BY fp <~> q LIMIT
/// n` (n is the limit plus the offset), below the sort and the limit, which pick the answer
/// from these rows. Not STRICT: for the planner's call, a NULL `q` (every row's distance is
/// NULL, all tie) or `n` (`LIMIT NULL`, no limit) gives every row; a direct call gives NULL
/// for any NULL argument. A direct call checks the caller's access ([`check_access`]) and
/// raises 22023 for n < 0.
fn nearest_tids(
    relid: pg_sys::Oid,
    attnum: i32,
    q: Option<i64>,
    n: Option<i64>,
    planned: bool,
) -> Option<Vec<pg_sys::ItemPointerData>> {
    if !planned && (q.is_none() || n.is_none()) {
        return None;
    }
    // (The planner's n is never negative: the query's Limit node refuses a negative count
    // before its sort reads the scan.)
    if let Some(n) = n.filter(|&n| n < 0) {
        invalid_parameter(format!("n = {n} rows is out of range"), "The nearest n >= 0 rows can be asked for.");
    }
    // SAFETY: in a query, so in a transaction with an active snapshot, which outlives the call.
    unsafe {
        let (heap, found) = open_indexed(relid, attnum, !planned);
        let out = match q {
            Some(q) => {
                nearest(heap, &found, attnum, q as u64, n.map(|n| n as u64), crate::gucs::index_search() || !planned)
            }
            None => nearest_by_scan(heap, attnum, 0, None, pg_sys::GetActiveSnapshot()),
        };
        pg_sys::table_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        Some(out)
    }
}

crate::fmgr::finfo_v1!(pg_finfo__simdup_nearest_tids);

/// # Safety
/// Called by the function manager as a V1 function declared with arguments
/// (oid, integer, bigint, bigint), not STRICT.
#[unsafe(no_mangle)]
#[doc(hidden)]
#[pg_guard]
pub unsafe extern "C-unwind" fn _simdup_nearest_tids(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: called by the function manager with its fcinfo, arguments of the declared types
    // (None where NULL).
    let (relid, attnum, q, n, planned) = unsafe {
        (
            pgrx::fcinfo::pg_getarg::<pg_sys::Oid>(fcinfo, 0),
            pgrx::fcinfo::pg_getarg::<i32>(fcinfo, 1),
            pgrx::fcinfo::pg_getarg::<i64>(fcinfo, 2),
            pgrx::fcinfo::pg_getarg::<i64>(fcinfo, 3),
            planned_call(fcinfo),
        )
    };
    let found = match (relid, attnum) {
        (Some(relid), Some(attnum)) => nearest_tids(relid, attnum, q, n, planned),
        _ => None,
    };
    match found {
        Some(tids) => tid_array(&tids),
        // SAFETY: the function manager's fcinfo; a NULL result.
        None => unsafe { pgrx::fcinfo::pg_return_null(fcinfo) },
    }
}

/// The block indexes of column `attnum` of `tbl`, read from the catalog: each index with the
/// block it serves, the bit offset where the block starts and its width, and its kind
/// (`key`: 0.2.0, `block`: 0.1.0).
#[pg_extern(sql = "")]
fn _simdup_block_indexes(
    tbl: pg_sys::Oid,
    attnum: i32,
) -> TableIterator<
    'static,
    (name!(index, pg_sys::Oid), name!(block, i32), name!(bit_offset, i32), name!(bits, i32), name!(kind, String)),
> {
    // SAFETY: in a transaction; the relation is opened and closed here.
    let found = unsafe {
        let heap = open_relation(tbl);
        let found = indexes::block_indexes(heap, attnum as pg_sys::AttrNumber);
        pg_sys::table_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        found
    };
    let rows: Vec<_> = found
        .map(|f| {
            let kind = match f.kind {
                indexes::Kind::Key => "key",
                indexes::Kind::Block => "block",
            };
            (0..f.layout.len())
                .map(|i| (f.oids[i], i as i32, f.layout.offset(i) as i32, f.layout.width(i) as i32, kind.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    TableIterator::new(rows)
}
