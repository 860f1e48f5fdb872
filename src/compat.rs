//! Every difference between the PostgreSQL majors simdup builds on (14 to 18), one thin wrapper each.
//!
//! The rest of the crate calls these and has no `cfg` of a major of its own. Each wrapper has
//! one line (or arm) per form of the call, under the majors that have that form; a major that
//! lacks a feature says so by what its line returns (PostgreSQL 14 has no MERGE, no exported
//! deparser, no reservation of a setting prefix). PostgreSQL 13 is not built; the conditions
//! name it only so that "up to 15" reads as one condition.
//!

use std::ffi::c_char;

use pgrx::pg_sys;

#[cfg(not(feature = "pg14"))]
use crate::catalog::cells;

/// The C string of a `String` value node (PostgreSQL 14: a `Value` node of type `T_String`).
///
/// # Safety
/// `node` is a string value node.
pub(crate) unsafe fn string_value(node: *mut pg_sys::Node) -> *const c_char {
    // SAFETY: the caller guarantees a string value node, whose struct this major names so.
    unsafe {
        #[cfg(feature = "pg14")]
        return (*(node as *mut pg_sys::Value)).val.str_;
        #[cfg(not(feature = "pg14"))]
        return (*(node as *mut pg_sys::String)).sval;
    }
}

/// The actions of `MERGE` statement `parse`, each one's command and target list; None for any
/// other statement (PostgreSQL 14 has no MERGE).
///
/// # Safety
/// `parse` is a query being planned.
pub(crate) unsafe fn merge_actions(
    parse: *mut pg_sys::Query,
) -> Option<Vec<(pg_sys::CmdType::Type, *mut pg_sys::List)>> {
    #[cfg(feature = "pg14")]
    return {
        let _ = parse;
        None
    };
    // SAFETY: a valid Query; a MERGE's actions are MergeAction nodes.
    #[cfg(not(feature = "pg14"))]
    return unsafe {
        ((*parse).commandType == pg_sys::CmdType::CMD_MERGE).then(|| {
            cells((*parse).mergeActionList)
                .iter()
                .map(|cell| {
                    let action = cell.ptr_value as *mut pg_sys::MergeAction;
                    ((*action).commandType, (*action).targetList)
                })
                .collect()
        })
    };
}

/// `pg_get_querydef(query, false)`: the query as SQL, None on PostgreSQL 14, which exports no
/// deparser of a query (it came in 15).
///
/// # Safety
/// `query` is a valid Query the deparser may scribble on (a copy).
pub(crate) unsafe fn query_def(query: *mut pg_sys::Query) -> Option<*mut c_char> {
    #[cfg(feature = "pg14")]
    return {
        let _ = query;
        None
    };
    // SAFETY: the caller guarantees a valid Query.
    #[cfg(not(feature = "pg14"))]
    return Some(unsafe { pg_sys::pg_get_querydef(query, false) });
}

/// Clears the privileges the executor would check for range table entry `rte` (PostgreSQL 16
/// moved them from the entry into the query's RTEPermissionInfo list, which the entry indexes).
///
/// # Safety
/// `rte` is a valid range table entry.
pub(crate) unsafe fn clear_required_permissions(rte: *mut pg_sys::RangeTblEntry) {
    // SAFETY: the caller guarantees a valid entry.
    unsafe {
        #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
        {
            (*rte).requiredPerms = 0;
        }
        #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
        {
            (*rte).perminfoindex = 0;
        }
    }
}

/// Marks relation `rti` of plan `stmt` as one run-time pruning must not remove (PostgreSQL 18
/// prunes the relations not listed; before it, nothing to do).
///
/// # Safety
/// `stmt` is a plan being built; `rti` one of its range table indexes.
pub(crate) unsafe fn mark_unprunable(stmt: *mut pg_sys::PlannedStmt, rti: i32) {
    // SAFETY: the caller guarantees the plan; bms_add_member pallocs in the current context.
    #[cfg(feature = "pg18")]
    unsafe {
        (*stmt).unprunableRelids = pg_sys::bms_add_member((*stmt).unprunableRelids, rti);
    }
    #[cfg(not(feature = "pg18"))]
    let _ = (stmt, rti);
}

/// Whether `var` is a `RETURNING` list's reference to the old row (`old.col`, PostgreSQL 18;
/// never before it).
///
/// # Safety
/// `var` is a valid Var.
pub(crate) unsafe fn returns_old(var: *mut pg_sys::Var) -> bool {
    // SAFETY: the caller guarantees a valid Var.
    #[cfg(feature = "pg18")]
    return unsafe { (*var).varreturningtype == pg_sys::VarReturningType::VAR_RETURNING_OLD };
    #[cfg(not(feature = "pg18"))]
    return {
        let _ = var;
        false
    };
}

/// This backend's local transaction id (PostgreSQL 17 moved it into the PGPROC's virtual
/// transaction id).
pub(crate) fn local_transaction_id() -> pg_sys::LocalTransactionId {
    // SAFETY: MyProc is this backend's PGPROC, set up before any SQL function runs.
    unsafe {
        #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15", feature = "pg16"))]
        return (*pg_sys::MyProc).lxid;
        #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15", feature = "pg16")))]
        return (*pg_sys::MyProc).vxid.lxid;
    }
}

/// Reserves the setting prefix `prefix`: unknown settings under it are refused
/// (`MarkGUCPrefixReserved`, PostgreSQL 15); on 14, warned about only
/// (`EmitWarningsOnPlaceholders`).
///
/// # Safety
/// Called from `_PG_init`, in the backend's main thread.
pub(crate) unsafe fn reserve_guc_prefix(prefix: &std::ffi::CStr) {
    // SAFETY: the caller guarantees the context; `prefix` is a valid C string.
    unsafe {
        #[cfg(not(feature = "pg14"))]
        pg_sys::MarkGUCPrefixReserved(prefix.as_ptr());
        #[cfg(feature = "pg14")]
        pg_sys::EmitWarningsOnPlaceholders(prefix.as_ptr());
    }
}

/// `index_beginscan` with `keys` scan keys and `orderbys` orderings, no instrumentation
/// (PostgreSQL 18 added its argument).
///
/// # Safety
/// `heap` and `index` are open, `snapshot` valid for the scan.
pub(crate) unsafe fn index_beginscan(
    heap: pg_sys::Relation,
    index: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    keys: i32,
    orderbys: i32,
) -> pg_sys::IndexScanDesc {
    // SAFETY: the caller guarantees `heap` and `index` open and `snapshot` valid for the scan;
    // the instrumentation pointer may be NULL.
    unsafe {
        #[cfg(not(feature = "pg18"))]
        return pg_sys::index_beginscan(heap, index, snapshot, keys, orderbys);
        #[cfg(feature = "pg18")]
        return pg_sys::index_beginscan(heap, index, snapshot, std::ptr::null_mut(), keys, orderbys);
    }
}

/// `ReadRecentBuffer` of block `blkno` of `rel`'s main fork, expected in buffer `buf`
/// (PostgreSQL 16 renamed the relation's file node its file locator).
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn read_recent_buffer(
    rel: pg_sys::Relation,
    blkno: pg_sys::BlockNumber,
    buf: pg_sys::Buffer,
) -> bool {
    let fork = pg_sys::ForkNumber::MAIN_FORKNUM;
    // SAFETY: an open relation; ReadRecentBuffer pins only a buffer whose tag is this
    // relation's block, else returns false.
    unsafe {
        #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
        return pg_sys::ReadRecentBuffer((*rel).rd_node, fork, blkno, buf);
        #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
        return pg_sys::ReadRecentBuffer((*rel).rd_locator, fork, blkno, buf);
    }
}

/// Adds to the statistics of `rel` (pg_stat_user_indexes' idx_scan, idx_tup_read,
/// idx_tup_fetch) what the index access method would have counted, as its macros
/// (`pgstat_count_index_scan` and the like, behind `pgstat_should_count_relation`) do: the
/// pending entry is set up on first use (PostgreSQL 15: `pgstat_assoc_relation` when the
/// relation counts; 14: `pgstat_initstats`), and its counters lost their `t_` prefix in 16.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn count_stats(rel: pg_sys::Relation, scans: i64, returned: i64, fetched: i64) {
    // SAFETY: an open relation's pending statistics entry, associated on first use; both calls
    // leave pgstat_info NULL when the relation's statistics are off.
    unsafe {
        if (*rel).pgstat_info.is_null() {
            #[cfg(not(feature = "pg14"))]
            if (*rel).pgstat_enabled {
                pg_sys::pgstat_assoc_relation(rel);
            }
            #[cfg(feature = "pg14")]
            pg_sys::pgstat_initstats(rel);
            if (*rel).pgstat_info.is_null() {
                return;
            }
        }
        let info = &mut *(*rel).pgstat_info;
        #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
        {
            info.t_counts.t_numscans += scans;
            info.t_counts.t_tuples_returned += returned;
            info.t_counts.t_tuples_fetched += fetched;
        }
        #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
        {
            info.counts.numscans += scans;
            info.counts.tuples_returned += returned;
            info.counts.tuples_fetched += fetched;
        }
    }
}

/// The role recorded as the one whose privileges the executor checks for range table entry
/// `rte` (`rti`), InvalidOid for the current user: the entry's checkAsUser up to PostgreSQL 15;
/// from 16 on, that of its RTEPermissionInfo, which inheritance children share with their parent.
///
/// # Safety
/// `root` is the planner's state for the query being planned; `rte` its entry `rti`.
pub(crate) unsafe fn check_as_user(
    root: *mut pg_sys::PlannerInfo,
    rte: *mut pg_sys::RangeTblEntry,
    rti: pg_sys::Index,
) -> pg_sys::Oid {
    // SAFETY: the caller guarantees the entry; inheritance children carry their parent's
    // checkAsUser.
    #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
    return unsafe {
        let _ = (root, rti);
        (*rte).checkAsUser
    };
    // SAFETY: the caller guarantees the planner's structures.
    #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
    return unsafe { permission_info_user(root, rte, rti) };
}

/// The checkAsUser of the RTEPermissionInfo of entry `rte` (`rti`), or of the parent whose
/// permissions an appendrel child uses; InvalidOid when there is none.
///
/// # Safety
/// As [`check_as_user`].
#[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
unsafe fn permission_info_user(
    root: *mut pg_sys::PlannerInfo,
    rte: *mut pg_sys::RangeTblEntry,
    rti: pg_sys::Index,
) -> pg_sys::Oid {
    // SAFETY: the planner's structures: an appendrel child's parent is in append_rel_array,
    // and getRTEPermissionInfo returns the entry's permission info.
    unsafe {
        let (mut rte, mut rti) = (rte, rti);
        while (*rte).perminfoindex == 0 {
            let appinfos = (*root).append_rel_array;
            if appinfos.is_null() || (*appinfos.add(rti as usize)).is_null() {
                return pg_sys::InvalidOid;
            }
            rti = (**appinfos.add(rti as usize)).parent_relid;
            rte = *(*root).simple_rte_array.add(rti as usize);
        }
        let info = pg_sys::getRTEPermissionInfo((*(*root).parse).rteperminfos, rte);
        (*info).checkAsUser
    }
}

/// Whether a relid set is empty (PostgreSQL 16 and later represent every empty set as NULL, and
/// `bms_is_empty` is a macro there; 15 may keep an empty one allocated).
pub(crate) fn bms_empty(set: pg_sys::Relids) -> bool {
    // SAFETY: `set` is NULL or a valid Bitmapset.
    #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
    return unsafe { pg_sys::bms_is_empty(set) };
    #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
    return set.is_null();
}

/// A plain restriction (pushed down, security level 0, no relids of its own) of `clause`
/// (PostgreSQL 16 added has_clone, is_clone and incompatible_relids to `make_restrictinfo`).
///
/// # Safety
/// Valid planner structures; `clause` a valid expression.
pub(crate) unsafe fn restrictinfo(
    root: *mut pg_sys::PlannerInfo,
    clause: *mut pg_sys::Expr,
) -> *mut pg_sys::RestrictInfo {
    let none = std::ptr::null_mut();
    // SAFETY: the caller guarantees valid planner structures and a valid `clause`, all
    // make_restrictinfo reads; it pallocs the node; the relid sets passed are empty (NULL).
    unsafe {
        #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
        return pg_sys::make_restrictinfo(root, clause, true, false, false, 0, none, none, none);
        #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
        return pg_sys::make_restrictinfo(root, clause, true, false, false, false, 0, none, none, none);
    }
}

/// Starts a bitmap scan of `index` with `nkeys` scan keys (PostgreSQL 18 added the
/// instrumentation argument, NULL here).
///
/// # Safety
/// `index` is open and `snapshot` valid for the scan's life.
pub(crate) unsafe fn index_beginscan_bitmap(
    index: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    nkeys: i32,
) -> pg_sys::IndexScanDesc {
    // SAFETY: the caller guarantees an open index and a valid snapshot, all the call reads.
    unsafe {
        #[cfg(not(feature = "pg18"))]
        return pg_sys::index_beginscan_bitmap(index, snapshot, nkeys);
        #[cfg(feature = "pg18")]
        return pg_sys::index_beginscan_bitmap(index, snapshot, std::ptr::null_mut(), nkeys);
    }
}

/// A new TID bitmap of at most `max_bytes` in the current memory context, not shared
/// (PostgreSQL 18 takes the size as a `size_t`, earlier majors as a `long`).
pub(crate) fn tbm_create(max_bytes: usize) -> *mut pg_sys::TIDBitmap {
    // SAFETY: tbm_create pallocs a bitmap in the current memory context; a NULL area makes it
    // private to this backend.
    unsafe {
        #[cfg(not(feature = "pg18"))]
        return pg_sys::tbm_create(max_bytes as std::ffi::c_long, std::ptr::null_mut());
        #[cfg(feature = "pg18")]
        return pg_sys::tbm_create(max_bytes, std::ptr::null_mut());
    }
}

/// `MaxHeapTuplesPerPage`: the most line pointers a heap page can have ((BLCKSZ − page header)
/// / (aligned tuple header + line pointer) = (8192 − 24) / (24 + 4) = 291 for 8 kB pages):
/// every offset of a lossy bitmap page.
const MAX_HEAP_TUPLES_PER_PAGE: usize = (pg_sys::BLCKSZ as usize - 24) / (24 + 4);

/// Calls `page(block, offsets, recheck)` for each heap page of the bitmap, in block order:
/// its offsets, or every possible offset of a lossy page (with `recheck`).
///
/// # Safety
/// `tbm` is a bitmap that is not being iterated.
#[cfg(not(feature = "pg18"))]
pub(crate) unsafe fn tbm_for_each_page(
    tbm: *mut pg_sys::TIDBitmap,
    mut page: impl FnMut(pg_sys::BlockNumber, &[u16], bool),
) {
    let every: Vec<u16> = (1..=MAX_HEAP_TUPLES_PER_PAGE as u16).collect();
    // SAFETY: the iterator is created, read and ended here; a result is valid until the next
    // tbm_iterate, and holds ntuples offsets (−1: lossy).
    unsafe {
        let it = pg_sys::tbm_begin_iterate(tbm);
        loop {
            let r = pg_sys::tbm_iterate(it);
            if r.is_null() {
                break;
            }
            let r = &*r;
            if r.ntuples < 0 {
                page(r.blockno, &every, true);
            } else {
                page(r.blockno, r.offsets.as_slice(r.ntuples as usize), r.recheck);
            }
        }
        pg_sys::tbm_end_iterate(it);
    }
}

/// See the other variant (PostgreSQL 18 iterates into a caller's result and extracts the
/// offsets separately).
///
/// # Safety
/// As the other variant.
#[cfg(feature = "pg18")]
pub(crate) unsafe fn tbm_for_each_page(
    tbm: *mut pg_sys::TIDBitmap,
    mut page: impl FnMut(pg_sys::BlockNumber, &[u16], bool),
) {
    let every: Vec<u16> = (1..=MAX_HEAP_TUPLES_PER_PAGE as u16).collect();
    let mut offsets = vec![0u16; MAX_HEAP_TUPLES_PER_PAGE];
    // SAFETY: the caller guarantees `tbm` is not being iterated; the private iterator is created,
    // read and ended here, filling `r` on this frame; tbm_extract_page_tuple writes at most the
    // given count of offsets into `offsets` and returns how many it wrote.
    unsafe {
        let it = pg_sys::tbm_begin_private_iterate(tbm);
        let mut r = pg_sys::TBMIterateResult::default();
        while pg_sys::tbm_private_iterate(it, &mut r) {
            if r.lossy {
                page(r.blockno, &every, true);
            } else {
                let n = pg_sys::tbm_extract_page_tuple(&mut r, offsets.as_mut_ptr(), offsets.len() as u32);
                page(r.blockno, &offsets[..n.max(0) as usize], r.recheck);
            }
        }
        pg_sys::tbm_end_private_iterate(it);
    }
}
