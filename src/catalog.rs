//! General pgrx and catalog helpers shared by the search, the dedup trigger and the planner
//! step: opening relations with SQLSTATEs, relation names, PostgreSQL `List` cells, and
//! recognising simdup's own C functions in expression trees.

use std::ffi::CStr;

use pgrx::pg_sys::{self, Oid};

use crate::errors::{Code, Error, OrRaise};

/// The name of relation `rel`.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn relation_name(rel: pg_sys::Relation) -> String {
    // SAFETY: an open relation has rd_rel with a NUL-terminated name.
    unsafe { CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()).to_string_lossy().into_owned() }
}

/// The schema-qualified, quoted name of an open relation (`format('%I.%I', schema, name)`): for
/// statements and messages, and the marker Citus shards compare with.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn qualified_name(rel: pg_sys::Relation) -> String {
    // SAFETY: an open relation; its namespace exists while it is open.
    let schema = unsafe { CStr::from_ptr(pg_sys::get_namespace_name((*(*rel).rd_rel).relnamespace)) };
    // SAFETY: `rel` is open (this function's contract), which is all relation_name asks.
    pgrx::spi::quote_qualified_identifier(schema.to_string_lossy(), unsafe { relation_name(rel) }.into())
}

/// Opens relation `relid` under AccessShareLock for a search: 42P01 when there is no such
/// relation, 42809 when it is not a plain table (a partitioned table's rows live in its
/// partitions, whose tids are not unique across them; views and indexes have no rows to scan).
///
/// # Safety
/// Must run in a transaction; the caller closes the relation with `table_close`.
pub(crate) unsafe fn open_table(relid: pg_sys::Oid) -> pg_sys::Relation {
    // SAFETY: catalog lookups of the relation open_relation opened; it stays open for the caller.
    unsafe {
        let heap = open_relation(relid);
        if (*(*heap).rd_rel).relkind != pg_sys::RELKIND_RELATION as std::ffi::c_char {
            let name = CStr::from_ptr((*(*heap).rd_rel).relname.data.as_ptr()).to_string_lossy().into_owned();
            pg_sys::table_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            Error::new(
                Code::ERRCODE_WRONG_OBJECT_TYPE,
                format!("\"{name}\" is not a plain table"),
            )
            .detail("simdup's search functions read one table's block indexes and return its rows' tids; a partitioned table's rows live in its partitions.")
            .hint("Query the table itself: SELECT ... WHERE hamming(fp, q) <= k, or ORDER BY fp <~> q LIMIT n, which the planner runs on every partition.")
            .raise();
        }
        heap
    }
}

/// Opens relation `relid` (a table of any kind) under AccessShareLock: 42P01 when there is no
/// such relation.
///
/// # Safety
/// Must run in a transaction; the caller closes the relation with `table_close`.
pub(crate) unsafe fn open_relation(relid: pg_sys::Oid) -> pg_sys::Relation {
    // SAFETY: try_table_open returns NULL for a missing relation and raises an ERROR for an
    // index or composite type.
    let rel = unsafe { pg_sys::try_table_open(relid, pg_sys::AccessShareLock as pg_sys::LOCKMODE) };
    if rel.is_null() {
        Error::new(Code::ERRCODE_UNDEFINED_TABLE, format!("relation with OID {} does not exist", u32::from(relid)))
            .raise();
    }
    rel
}

/// Estimated rows of a relation, for choosing thresholds (never analyzed: 0).
///
/// # Safety
/// `heap` is an open relation.
pub(crate) unsafe fn estimated_rows(heap: pg_sys::Relation) -> f64 {
    // SAFETY: an open relation has rd_rel.
    f64::from(unsafe { (*(*heap).rd_rel).reltuples }).max(0.0)
}

/// The cells of a PostgreSQL `List`.
///
/// # Safety
/// `list` is NIL (null) or a valid `List` that outlives the returned slice.
pub(crate) unsafe fn cells<'a>(list: *mut pg_sys::List) -> &'a [pg_sys::ListCell] {
    if list.is_null() {
        return &[];
    }
    // SAFETY: a valid List has `length` initialised cells at `elements`.
    unsafe { std::slice::from_raw_parts((*list).elements, (*list).length as usize) }
}

/// A custom scan's `custom_private` holding `ints`: a List whose one element is the integer
/// list. Other extensions look at the first element of any custom scan's private list as a node
/// (Citus's `IsCitusCustomScan`, walking a plan for its own scan): an integer there would be
/// read as a pointer.
pub(crate) fn private_ints(ints: &[i32]) -> *mut pg_sys::List {
    // SAFETY: Lists palloc'd in the current (planner's) memory context.
    unsafe {
        let list = ints.iter().fold(std::ptr::null_mut(), |list, &i| pg_sys::lappend_int(list, i));
        pg_sys::lappend(std::ptr::null_mut(), list.cast())
    }
}

/// The integers [`private_ints`] put in custom scan `scan`'s private list.
///
/// # Safety
/// `scan` is a custom scan whose private list [`private_ints`] made.
pub(crate) unsafe fn ints_of_private(scan: *mut pg_sys::CustomScan) -> Vec<i32> {
    // SAFETY: the caller guarantees private_ints made `custom_private`: its element 0 exists
    // and is an integer List, whose cells hold int_value.
    unsafe {
        let list = pg_sys::list_nth((*scan).custom_private, 0) as *mut pg_sys::List;
        cells(list).iter().map(|c| c.int_value).collect()
    }
}

/// Whether function `funcid` is the C function `symbol` of this library (compared by address,
/// so a function of the same name in another schema never matches).
pub(crate) fn is_our_function(funcid: Oid, symbol: pg_sys::PGFunction) -> bool {
    let mut finfo = pg_sys::FmgrInfo::default();
    // SAFETY: fmgr_info fills `finfo` for any existing function OID; callers pass OIDs taken
    // from expression trees, which name existing functions.
    unsafe { pg_sys::fmgr_info(funcid, &mut finfo) };
    finfo.fn_addr.map(|f| f as usize) == symbol.map(|f| f as usize)
}

/// simdup's schema, quoted, for the statements simdup runs over SPI (the checked write,
/// `simdup_similar`).
pub(crate) fn extension_schema() -> String {
    pgrx::Spi::get_one::<String>(
        "SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e
         JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
         WHERE e.extname OPERATOR(pg_catalog.=) 'simdup'",
    )
    .or_raise("finding simdup's schema")
    .unwrap_or_else(|| {
        crate::errors::not_in_prerequisite_state("extension simdup is not installed", "CREATE EXTENSION simdup;")
    })
}

/// Calls `func(arg)` when `context` is reset or deleted (for an executor's memory: at the end of
/// its statement, on error too), through a callback allocated in `context` itself. The callback
/// must not fail.
///
/// # Safety
/// `context` is a valid memory context; `arg` stays valid for `func` until it runs.
pub(crate) unsafe fn on_reset(
    context: pg_sys::MemoryContext,
    func: unsafe extern "C-unwind" fn(*mut std::ffi::c_void),
    arg: *mut std::ffi::c_void,
) {
    // SAFETY: the callback is allocated in the context it is registered on, so it lives exactly
    // as long as the registration.
    unsafe {
        let cb = pg_sys::MemoryContextAlloc(context, std::mem::size_of::<pg_sys::MemoryContextCallback>())
            as *mut pg_sys::MemoryContextCallback;
        cb.write(pg_sys::MemoryContextCallback { func: Some(func), arg, next: std::ptr::null_mut() });
        pg_sys::MemoryContextRegisterResetCallback(context, cb);
    }
}
