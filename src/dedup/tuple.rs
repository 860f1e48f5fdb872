//! Reading the columns of the row being written, and setting `dup_of`.

use std::ffi::{c_int, CStr, CString};

use pgrx::{pg_sys, FromDatum};

use crate::errors::{Code, Error};

/// The name of relation `rel`.
///
/// # Safety
/// `rel` is an open relation.
pub(super) unsafe fn relation_name(rel: pg_sys::Relation) -> String {
    // SAFETY: an open relation has rd_rel with a NUL-terminated name.
    unsafe { CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()).to_string_lossy().into_owned() }
}

/// Attribute number of user column `name` of `rel`; 42703 naming the table otherwise.
///
/// # Safety
/// `rel` is an open relation.
pub(super) unsafe fn column(rel: pg_sys::Relation, name: &str) -> c_int {
    let cname = CString::new(name).unwrap_or_default();
    // SAFETY: SPI_fnumber only reads the tuple descriptor of the open relation.
    let attnum = unsafe { pg_sys::SPI_fnumber((*rel).rd_att, cname.as_ptr()) };
    if attnum <= 0 {
        Error::new(
            Code::ERRCODE_UNDEFINED_COLUMN,
            // SAFETY: `rel` is open.
            format!("column \"{name}\" of relation \"{}\" does not exist", unsafe { relation_name(rel) }),
        )
        .hint("Columns used by the simdup_dedup trigger were renamed or dropped: call simdup_disable and simdup_enable again.")
        .raise();
    }
    attnum
}

/// The value of column `attnum` as the text `simhash()` sees in the generated column
/// `simhash(text_column)`: the column cast to text. text and varchar are already text; the
/// bpchar-to-text cast drops trailing spaces; other string types (name, citext, domains over
/// them) are cast to text through their output function.
///
/// # Safety
/// `tuple` is a valid tuple of `tupdesc`, `attnum` one of its columns.
pub(super) unsafe fn text_value(tuple: pg_sys::HeapTuple, tupdesc: pg_sys::TupleDesc, attnum: c_int) -> Option<String> {
    // SAFETY: the caller guarantees tuple, descriptor and column; the datum is read as the
    // column's type says.
    unsafe {
        let mut isnull = false;
        let datum = pg_sys::SPI_getbinval(tuple, tupdesc, attnum, &mut isnull);
        if isnull {
            return None;
        }
        let typid = pg_sys::getBaseType(pg_sys::SPI_gettypeid(tupdesc, attnum));
        if typid == pg_sys::TEXTOID || typid == pg_sys::VARCHAROID {
            <&str>::from_datum(datum, false).map(str::to_owned)
        } else if typid == pg_sys::BPCHAROID {
            <&str>::from_datum(datum, false).map(|s| s.trim_end_matches(' ').to_owned())
        } else {
            let mut out = pg_sys::InvalidOid;
            let mut varlena = false;
            pg_sys::getTypeOutputInfo(typid, &mut out, &mut varlena);
            let p = pg_sys::OidOutputFunctionCall(out, datum);
            // The server encoding of a simdup database is UTF-8 (simhash reads text as UTF-8).
            Some(CStr::from_ptr(p).to_string_lossy().into_owned())
        }
    }
}

/// The value of bigint column `attnum`.
///
/// # Safety
/// `tuple` is a valid tuple of `tupdesc`, `attnum` one of its bigint columns.
pub(super) unsafe fn bigint_value(tuple: pg_sys::HeapTuple, tupdesc: pg_sys::TupleDesc, attnum: c_int) -> Option<i64> {
    let mut isnull = false;
    // SAFETY: see above.
    unsafe {
        let datum = pg_sys::SPI_getbinval(tuple, tupdesc, attnum, &mut isnull);
        i64::from_datum(datum, isnull)
    }
}

/// A copy of `new` with `dup_of` set to `key` (NULL for None): the one way the trigger writes
/// `dup_of`. The copy is made in the current memory context (the trigger's caller's).
///
/// # Safety
/// `rel` is the open relation of `new`; `key`, if any, is a datum of `dup_of`'s type.
pub(super) unsafe fn with_dup_of(rel: pg_sys::Relation, new: pg_sys::HeapTuple, key: Option<pg_sys::Datum>) -> pg_sys::HeapTuple {
    // SAFETY: heap_modify_tuple_by_cols builds a new tuple of the relation's descriptor.
    unsafe {
        let tupdesc = (*rel).rd_att;
        let mut cols = [column(rel, super::config::DUP_OF)];
        let mut values = [key.unwrap_or(pg_sys::Datum::from(0))];
        let mut isnull = [key.is_none()];
        pg_sys::heap_modify_tuple_by_cols(new, tupdesc, 1, cols.as_mut_ptr(), values.as_mut_ptr(), isnull.as_mut_ptr())
    }
}
