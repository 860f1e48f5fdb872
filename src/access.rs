//! Who may read what. simdup reads tables' indexes and heaps directly in two places — a direct
//! call of a search function, and the key a near-duplicate error names — so it checks there
//! what PostgreSQL's executor would check for a query of the table, in one place.

use pgrx::pg_sys;

/// Whether the current user may read column `attnum` of table `relid` as a query would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// SELECT on the table or on the column, and no row-level security in force.
    Allowed,
    /// Neither SELECT on the table nor on the column.
    NoPrivilege,
    /// Row-level security applies to the user's reads: policies would hide rows that a direct
    /// read of the indexes and heap sees.
    RowSecurity,
}

/// See [`Read`].
///
/// # Safety
/// In a transaction; `relid` an existing table, `attnum` one of its columns.
pub(crate) unsafe fn read(relid: pg_sys::Oid, attnum: pg_sys::AttrNumber) -> Read {
    // SAFETY: catalog and ACL lookups of an existing table; check_enable_rls with noError never
    // raises.
    unsafe {
        if !column_privilege(relid, attnum, pg_sys::ACL_SELECT as pg_sys::AclMode) {
            return Read::NoPrivilege;
        }
        if pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, true)
            == pg_sys::CheckEnableRlsResult::RLS_ENABLED as std::ffi::c_int
        {
            return Read::RowSecurity;
        }
        Read::Allowed
    }
}

/// Whether the current user holds privilege `mode` on column `attnum` of table `relid`: on the
/// table, or on the column, as the executor checks a column it reads or writes.
///
/// # Safety
/// In a transaction; `relid` an existing table, `attnum` one of its columns.
pub(crate) unsafe fn column_privilege(relid: pg_sys::Oid, attnum: pg_sys::AttrNumber, mode: pg_sys::AclMode) -> bool {
    // SAFETY: ACL lookups of an existing table and column.
    unsafe {
        let user = pg_sys::GetUserId();
        pg_sys::pg_class_aclcheck(relid, user, mode) == pg_sys::AclResult::ACLCHECK_OK
            || pg_sys::pg_attribute_aclcheck(relid, attnum, user, mode) == pg_sys::AclResult::ACLCHECK_OK
    }
}
