//! Plan-node helpers of the search's planner steps: reading a clause, the role a scan is checked
//! as, building a RestrictInfo, and the mark of the planner's own `_simdup_tids` call.

use pgrx::pg_sys;

use crate::catalog::cells;
use crate::compat;
// Building a RestrictInfo and testing a relid set for emptiness differ by major: their home is
// the compat module, used from here as the other helpers.
pub(crate) use crate::compat::{bms_empty, restrictinfo};

/// The display form of the `_simdup_tids` call this planner step puts in a Tid Scan. The
/// parser gives `COERCE_SQL_SYNTAX` only to the pg_catalog functions behind SQL's special
/// syntaxes (EXTRACT, SUBSTRING, …), never to a call of `_simdup_tids` written in SQL, so it
/// tells the planner's call apart from a direct one; EXPLAIN shows it as an ordinary call.
pub(crate) const PLANNED_CALL: pg_sys::CoercionForm::Type = pg_sys::CoercionForm::COERCE_SQL_SYNTAX;

/// The role whose privileges the executor checks for range table entry `rte` (`rti`): its
/// checkAsUser (a view's owner, for a table read through a view), or the current user.
///
/// # Safety
/// `root` is the planner's state for the query being planned; `rte` its entry `rti`.
pub(crate) unsafe fn check_as_user(
    root: *mut pg_sys::PlannerInfo,
    rte: *mut pg_sys::RangeTblEntry,
    rti: pg_sys::Index,
) -> pg_sys::Oid {
    // SAFETY: the caller guarantees the planner's state and the entry.
    let user = unsafe { compat::check_as_user(root, rte, rti) };
    if user == pg_sys::InvalidOid {
        // SAFETY: the current user of this backend.
        unsafe { pg_sys::GetUserId() }
    } else {
        user
    }
}

/// The function (`F_*` number) and the two arguments of a binary operator clause.
///
/// # Safety
/// `clause` is a valid expression node.
pub(crate) unsafe fn binary_op(clause: *mut pg_sys::Node) -> Option<(u32, *mut pg_sys::Node, *mut pg_sys::Node)> {
    // SAFETY: node tags say which struct a node is; lists are read through `cells`.
    unsafe {
        if (*clause).type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let op = clause as *mut pg_sys::OpExpr;
        pg_sys::set_opfuncid(op);
        let args = cells((*op).args);
        if args.len() != 2 {
            return None;
        }
        Some((
            u32::from((*op).opfuncid),
            args[0].ptr_value as *mut pg_sys::Node,
            args[1].ptr_value as *mut pg_sys::Node,
        ))
    }
}
