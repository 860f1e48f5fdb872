//! Plan-node helpers of the search's planner steps: reading a clause, the role a scan is checked
//! as, building a RestrictInfo, and the mark of the planner's own `_simdup_tids` call.

use pgrx::pg_sys;

use crate::catalog::cells;

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
#[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
pub(crate) unsafe fn check_as_user(
    _root: *mut pg_sys::PlannerInfo,
    rte: *mut pg_sys::RangeTblEntry,
    _rti: pg_sys::Index,
) -> pg_sys::Oid {
    // SAFETY: the caller guarantees the entry; inheritance children carry their parent's
    // checkAsUser.
    let user = unsafe { (*rte).checkAsUser };
    if user == pg_sys::InvalidOid {
        // SAFETY: the current user of this backend.
        unsafe { pg_sys::GetUserId() }
    } else {
        user
    }
}

/// See the PostgreSQL 15 variant; from 16 on, checkAsUser lives in the query's
/// RTEPermissionInfo list, which inheritance children share with their parent.
///
/// # Safety
/// As the PostgreSQL 15 variant.
#[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
pub(crate) unsafe fn check_as_user(
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
                return pg_sys::GetUserId();
            }
            rti = (**appinfos.add(rti as usize)).parent_relid;
            rte = *(*root).simple_rte_array.add(rti as usize);
        }
        let info = pg_sys::getRTEPermissionInfo((*(*root).parse).rteperminfos, rte);
        if (*info).checkAsUser == pg_sys::InvalidOid {
            pg_sys::GetUserId()
        } else {
            (*info).checkAsUser
        }
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

/// Whether a relid set is empty (PostgreSQL 16 and later represent every empty set as NULL;
/// 15 may keep an empty one allocated).
#[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
pub(crate) fn bms_empty(set: pg_sys::Relids) -> bool {
    // SAFETY: `set` is NULL or a valid Bitmapset.
    unsafe { pg_sys::bms_is_empty(set) }
}

/// See the PostgreSQL 15 variant (`bms_is_empty` is a macro from 16 on).
#[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
pub(crate) fn bms_empty(set: pg_sys::Relids) -> bool {
    set.is_null()
}

/// A plain restriction (pushed down, security level 0, no relids of its own) of `clause`.
///
/// # Safety
/// Valid planner structures; `clause` a valid expression.
#[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15"))]
pub(crate) unsafe fn restrictinfo(
    root: *mut pg_sys::PlannerInfo,
    clause: *mut pg_sys::Expr,
) -> *mut pg_sys::RestrictInfo {
    let none = std::ptr::null_mut();
    // SAFETY: the caller guarantees the planner structures; make_restrictinfo pallocs the node.
    unsafe { pg_sys::make_restrictinfo(root, clause, true, false, false, 0, none, none, none) }
}

/// See the PostgreSQL 15 variant (16 added has_clone, is_clone and incompatible_relids).
///
/// # Safety
/// As the PostgreSQL 15 variant.
#[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15")))]
pub(crate) unsafe fn restrictinfo(
    root: *mut pg_sys::PlannerInfo,
    clause: *mut pg_sys::Expr,
) -> *mut pg_sys::RestrictInfo {
    let none = std::ptr::null_mut();
    // SAFETY: the caller guarantees valid planner structures and a valid `clause`, all
    // make_restrictinfo reads; it pallocs the node; the relid sets passed are empty (NULL).
    unsafe { pg_sys::make_restrictinfo(root, clause, true, false, false, false, 0, none, none, none) }
}
