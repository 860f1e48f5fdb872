//! Plan-node helpers of the checked writes' custom scans: the scan state both share, the text
//! kept in a plan's private list, row memory, and pulling a batch of rows from the child plan.

use std::ffi::{c_char, CStr};

use pgrx::pg_sys;

use super::rules::BATCH_BYTES;
use crate::citus::checked::pin_transfer;

/// A new memory context, a child of the current one, for a batch's rows.
pub(crate) fn memory_context(name: &'static CStr) -> pg_sys::MemoryContext {
    // SAFETY: an AllocSet under the current context (freed with it), as AllocSetContextCreate
    // makes one.
    unsafe {
        pg_sys::AllocSetContextCreateExtended(
            pg_sys::CurrentMemoryContext,
            name.as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        )
    }
}

/// Forms a row of `desc` from `values` / `nulls` (one per column) in memory context `cx`, adds
/// it to `rows` as a datum of the table's row type, and returns its size in bytes.
///
/// # Safety
/// `desc` is the table's descriptor; the values are of its columns' types.
pub(crate) unsafe fn push_row(
    cx: pg_sys::MemoryContext,
    desc: pg_sys::TupleDesc,
    values: &mut [pg_sys::Datum],
    nulls: &mut [bool],
    rows: &mut Vec<pg_sys::Datum>,
) -> usize {
    // SAFETY: the caller guarantees `desc` is the table's descriptor and `values` / `nulls` one
    // per column, of its types, as heap_form_tuple reads them; the tuple is formed and copied in
    // `cx`, then the current context restored.
    unsafe {
        let old = pg_sys::CurrentMemoryContext;
        pg_sys::CurrentMemoryContext = cx;
        let tuple = pg_sys::heap_form_tuple(desc, values.as_mut_ptr(), nulls.as_mut_ptr());
        rows.push(pg_sys::heap_copy_tuple_as_datum(tuple, desc));
        pg_sys::CurrentMemoryContext = old;
        (*tuple).t_len as usize
    }
}

/// The state of a `SimdupCheckedInsert` node (palloc'd, nothing Rust owns).
#[repr(C)]
pub(super) struct State {
    pub(super) css: pg_sys::CustomScanState,
    pub(super) rel: pg_sys::Relation,
    /// The rows of the batch being checked.
    pub(super) rows: pg_sys::MemoryContext,
    /// simdup's schema, quoted (palloc'd C string).
    pub(super) ext_schema: *mut c_char,
    /// The rows stored, for the RETURNING list (NULL without one).
    pub(super) returned: *mut pg_sys::Tuplestorestate,
    /// Every row of the child plan has been written.
    pub(super) written: bool,
}

/// A zeroed state node of the executor's kind with the custom scan's `methods`, as nodeCustom.c
/// expects.
pub(super) fn new_state(methods: *const pg_sys::CustomExecMethods) -> *mut pg_sys::Node {
    // SAFETY: palloc0 of a node the size of State, in the executor's memory context.
    unsafe {
        let state = pg_sys::palloc0(std::mem::size_of::<State>()) as *mut State;
        (*state).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*state).css.methods = methods;
        state.cast()
    }
}

/// The plan's private list: the table, whether the rows' plan runs with the transfer's settings
/// pinned, then the columns the rows fill.
///
/// # Safety
/// `node` is a `SimdupCheckedInsert` or `SimdupCheckedUpdate` node.
pub(super) unsafe fn private(node: *mut pg_sys::CustomScanState) -> (pg_sys::Oid, bool, Vec<i32>) {
    // SAFETY: the plan built by wrap_in_scan.
    let ints = unsafe { crate::catalog::ints_of_private((*node).ss.ps.plan as *mut pg_sys::CustomScan) };
    (pg_sys::Oid::from(ints[0] as u32), ints[1] != 0, ints[2..].to_vec())
}

/// Runs `write` (the writes of checked statement `node`'s rows, pulling them from its child
/// plan) with the transfer's settings pinned ([`pin_transfer`]) if the rows' plan reads Citus
/// tables, else as it is (the checked writes pin them for their own statements).
///
/// # Safety
/// The executor's node, inside pgrx's guard.
pub(super) unsafe fn pinned_if_sent(node: *mut pg_sys::CustomScanState, write: impl FnOnce()) {
    // SAFETY: the caller guarantees the executor's node (its plan has wrap_in_scan's private
    // list, which `private` reads), inside pgrx's guard; the GUC nest level is closed here, or by
    // the (sub)transaction's abort on an error.
    unsafe {
        let (_, pinned, _) = private(node);
        if !pinned {
            return write();
        }
        let nest = pg_sys::NewGUCNestLevel();
        pin_transfer();
        write();
        pg_sys::AtEOXact_GUC(true, nest);
    }
}

/// Asks `child` for rows and hands each, its attributes read, to `take`, which returns the bytes
/// it kept of it (None: the row is left out), until `limit` rows were kept or [`BATCH_BYTES`].
/// False once the plan has returned its end (it is not asked again: a scan would start over).
///
/// # Safety
/// `child` is an initialised plan state; `take` reads the slot before the next row is asked for.
pub(super) unsafe fn pull_batch(
    child: *mut pg_sys::PlanState,
    limit: usize,
    mut take: impl FnMut(*mut pg_sys::TupleTableSlot) -> Option<usize>,
) -> bool {
    let (mut kept, mut bytes) = (0, 0);
    while kept < limit && bytes < BATCH_BYTES {
        // SAFETY: the caller guarantees `child` is an initialised plan state; the slot it returns
        // is valid until the next call.
        let slot = unsafe { pg_sys::ExecProcNode(child) };
        // SAFETY: `slot` is checked non-NULL first; it is the slot just returned, still valid.
        if slot.is_null() || unsafe { (*slot).tts_flags } & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
            return false;
        }
        // SAFETY: `slot` is the non-empty slot just returned (the plan not yet asked again);
        // slot_getallattrs deforms its columns for `take`.
        unsafe { pg_sys::slot_getallattrs(slot) };
        if let Some(b) = take(slot) {
            kept += 1;
            bytes += b;
        }
    }
    true
}

/// Adds `text` to the private list of the custom scan on top of `stmt` (after its integers, a
/// String node): an INSERT's `ON CONFLICT` clause, an UPDATE's query of its rows.
///
/// # Safety
/// `stmt` is a plan [`wrap_in_scan`] made, in the planner's memory context.
pub(super) unsafe fn add_private_text(stmt: *mut pg_sys::PlannedStmt, text: &str) {
    // SAFETY: the caller guarantees `stmt` is a plan wrap_in_scan made (its planTree a
    // CustomScan) in the planner's memory context, where the String node and its text are
    // palloc'd.
    unsafe {
        let scan = (*stmt).planTree as *mut pg_sys::CustomScan;
        let text = std::ffi::CString::new(text).unwrap_or_default();
        let node = pg_sys::makeString(pg_sys::pstrdup(text.as_ptr()));
        (*scan).custom_private = pg_sys::lappend((*scan).custom_private, node.cast());
    }
}

/// The text [`add_private_text`] put in custom scan `scan`'s plan, if any.
///
/// # Safety
/// `scan` is a plan of [`wrap_in_scan`].
pub(super) unsafe fn private_text(scan: *mut pg_sys::CustomScan) -> Option<String> {
    // SAFETY: the private list of wrap_in_scan: the integers, then maybe a String.
    unsafe {
        let private = (*scan).custom_private;
        (pg_sys::list_length(private) > 1).then(|| {
            let text = crate::compat::string_value(pg_sys::list_nth(private, 1) as *mut pg_sys::Node);
            CStr::from_ptr(text).to_string_lossy().into_owned()
        })
    }
}
