//! Reading the columns of the row being written, and setting `dup_of`.

use std::ffi::{c_int, CStr, CString};

use pgrx::{pg_sys, FromDatum};

use crate::args::Mode;
use crate::catalog::relation_name;
use crate::errors::{Code, Error};

use super::config::{Config, DUP_OF};

/// Attribute number of user column `name` of `rel`; 42703 naming the table otherwise.
///
/// # Safety
/// `rel` is an open relation.
unsafe fn column(rel: pg_sys::Relation, name: &str) -> c_int {
    // SAFETY: `rel` is an open relation (this function's contract), all column_hinted asks.
    unsafe { column_hinted(rel, name, REENABLE) }
}

/// [`column`] with the hint of another trigger.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn column_hinted(rel: pg_sys::Relation, name: &str, hint: &str) -> c_int {
    let cname = CString::new(name).unwrap_or_default();
    // SAFETY: SPI_fnumber only reads the tuple descriptor of the open relation.
    let attnum = unsafe { pg_sys::SPI_fnumber((*rel).rd_att, cname.as_ptr()) };
    if attnum <= 0 {
        Error::new(
            Code::ERRCODE_UNDEFINED_COLUMN,
            // SAFETY: `rel` is open.
            format!("column \"{name}\" of relation \"{}\" does not exist", unsafe { relation_name(rel) }),
        )
        .hint(hint)
        .raise();
    }
    attnum
}

const REENABLE: &str =
    "Columns used by the simdup_dedup trigger were renamed, dropped or changed: call simdup_disable and simdup_enable again.";

/// The columns the dedup trigger reads and writes, resolved from the relation's current
/// descriptor, with the types it reads and writes them as. A table owner can rename, drop and
/// retype columns after `simdup_enable`; the trigger then refuses (42703 for a missing column,
/// 42804 for a wrong type, 0A000 for a generated adopted fingerprint) instead of reading or
/// writing a datum of the wrong type.
pub(crate) struct Columns {
    /// The text column (None: an adopted fingerprint column).
    pub text: Option<c_int>,
    pub fp: c_int,
    pub key: c_int,
    /// `dup_of`, in mark mode: of the key's type.
    pub dup_of: Option<c_int>,
}

/// The one check of the columns named in the trigger's configuration: see [`Columns`].
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn columns(rel: pg_sys::Relation, cfg: &Config) -> Columns {
    // SAFETY: the caller guarantees an open relation; catalog lookups of its columns.
    unsafe {
        let relid = (*rel).rd_id;
        let type_of = |attnum: c_int| pg_sys::get_atttype(relid, attnum as pg_sys::AttrNumber);
        let mismatch = |name: &str, attnum: c_int, wanted: &str| -> ! {
            let typ = CStr::from_ptr(pg_sys::format_type_be(type_of(attnum))).to_string_lossy().into_owned();
            Error::new(
                Code::ERRCODE_DATATYPE_MISMATCH,
                format!("column \"{name}\" of relation \"{}\" is of type {typ}, not {wanted}", relation_name(rel)),
            )
            .hint(REENABLE)
            .raise()
        };
        let fp = column(rel, &cfg.fp_column);
        if pg_sys::getBaseType(type_of(fp)) != pg_sys::INT8OID {
            mismatch(&cfg.fp_column, fp, "bigint");
        }
        let text = match &cfg.text_column {
            Some(name) => {
                let attnum = column(rel, name);
                if pg_sys::TypeCategory(pg_sys::getBaseType(type_of(attnum))) as u8 != pg_sys::TYPCATEGORY_STRING {
                    mismatch(name, attnum, "a string type");
                }
                refuse_generated(rel, attnum, name, "text", "Enable dedup on the column the text is generated from.");
                Some(attnum)
            }
            None => {
                refuse_generated(
                    rel,
                    fp,
                    &cfg.fp_column,
                    "fingerprint",
                    "Enable dedup with the text column instead: simdup_enable(table, text_column, on_duplicate => ...) fingerprints the text itself.",
                );
                None
            }
        };
        let key = column(rel, &cfg.key_column);
        let dup_of = (cfg.mode == Mode::Mark).then(|| {
            let attnum = column(rel, DUP_OF);
            if type_of(attnum) != type_of(key) {
                let key_type = CStr::from_ptr(pg_sys::format_type_be(type_of(key))).to_string_lossy().into_owned();
                mismatch(DUP_OF, attnum, &format!("{key_type} (the type of key column \"{}\")", cfg.key_column));
            }
            attnum
        });
        Columns { text, fp, key, dup_of }
    }
}

/// 0A000 when column `attnum` (`name`) of `rel`, the `what` a dedup trigger reads, is a
/// generated column: a BEFORE trigger runs before generated columns are computed and sees it
/// as NULL, so nothing would ever be checked. The one check of both triggers, made when they
/// are installed and on every row.
///
/// # Safety
/// `rel` is an open relation and `attnum` one of its columns.
pub(crate) unsafe fn refuse_generated(rel: pg_sys::Relation, attnum: c_int, name: &str, what: &str, hint: &str) {
    // SAFETY: catalog lookups of a column and the name of an open relation.
    unsafe {
        if pg_sys::get_attgenerated((*rel).rd_id, attnum as pg_sys::AttrNumber) != 0 {
            Error::new(
                Code::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("dedup cannot check generated column \"{name}\" of relation \"{}\"", relation_name(rel)),
            )
            .detail(format!(
                "A BEFORE trigger runs before generated columns are computed, so it would see every {what} as NULL."
            ))
            .hint(hint.to_owned())
            .raise();
        }
    }
}

/// The value of column `attnum` as the text `simhash()` sees in the generated column
/// `simhash(text_column)`: the column cast to text. text and varchar are already text; the
/// bpchar-to-text cast drops trailing spaces; other string types (name, citext, domains over
/// them) are cast to text through their output function.
///
/// # Safety
/// `tuple` is a valid tuple of `tupdesc`, `attnum` one of its columns.
pub(crate) unsafe fn text_value(tuple: pg_sys::HeapTuple, tupdesc: pg_sys::TupleDesc, attnum: c_int) -> Option<String> {
    // SAFETY: the caller guarantees tuple, descriptor and column; the datum is read as the
    // column's type says.
    unsafe {
        let mut isnull = false;
        let datum = pg_sys::SPI_getbinval(tuple, tupdesc, attnum, &mut isnull);
        if isnull {
            return None;
        }
        text_of(datum, pg_sys::SPI_gettypeid(tupdesc, attnum))
    }
}

/// A datum of string type `typid` as text, as [`text_value`] reads a column.
///
/// # Safety
/// `datum` is a valid, non-NULL datum of type `typid`.
pub(crate) unsafe fn text_of(datum: pg_sys::Datum, typid: pg_sys::Oid) -> Option<String> {
    // SAFETY: the caller guarantees the datum; it is read as its type says.
    unsafe {
        let typid = pg_sys::getBaseType(typid);
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

/// The value of column `attnum` of the row in `slot`, if not NULL.
///
/// # Safety
/// `slot` holds a row with at least `attnum` columns.
pub(crate) unsafe fn slot_value(slot: *mut pg_sys::TupleTableSlot, attnum: i32) -> Option<pg_sys::Datum> {
    // SAFETY: the caller guarantees `slot` holds a row of at least `attnum` columns; the first
    // `attnum` are deformed (as slot_getsomeattrs does) before tts_values and tts_isnull are read.
    unsafe {
        if i32::from((*slot).tts_nvalid) < attnum {
            pg_sys::slot_getsomeattrs_int(slot, attnum);
        }
        let i = attnum as usize - 1;
        (!*(*slot).tts_isnull.add(i)).then(|| *(*slot).tts_values.add(i))
    }
}

/// The value of bigint column `attnum`.
///
/// # Safety
/// `tuple` is a valid tuple of `tupdesc`, `attnum` one of its bigint columns.
pub(crate) unsafe fn bigint_value(tuple: pg_sys::HeapTuple, tupdesc: pg_sys::TupleDesc, attnum: c_int) -> Option<i64> {
    let mut isnull = false;
    // SAFETY: the caller guarantees `tuple` is a valid tuple of `tupdesc` and `attnum` one of its
    // bigint columns: the datum is an int8, read only when not NULL.
    unsafe {
        let datum = pg_sys::SPI_getbinval(tuple, tupdesc, attnum, &mut isnull);
        i64::from_datum(datum, isnull)
    }
}

/// A copy of `new` with `dup_of` (column `dup_of`, checked by [`columns`]) set to `key` (NULL
/// for None): the one way the trigger writes `dup_of`. The copy is made in the current memory
/// context (the trigger's caller's).
///
/// # Safety
/// `rel` is the open relation of `new`; `key`, if any, is a datum of `dup_of`'s type.
pub(crate) unsafe fn with_dup_of(
    rel: pg_sys::Relation,
    new: pg_sys::HeapTuple,
    dup_of: c_int,
    key: Option<pg_sys::Datum>,
) -> pg_sys::HeapTuple {
    // SAFETY: heap_modify_tuple_by_cols builds a new tuple of the relation's descriptor.
    unsafe {
        let tupdesc = (*rel).rd_att;
        let mut cols = [dup_of];
        let mut values = [key.unwrap_or(pg_sys::Datum::from(0))];
        let mut isnull = [key.is_none()];
        pg_sys::heap_modify_tuple_by_cols(new, tupdesc, 1, cols.as_mut_ptr(), values.as_mut_ptr(), isnull.as_mut_ptr())
    }
}
