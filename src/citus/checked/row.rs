//! The checked write of one row: `_simdup_checked_insert(tbl, row jsonb)`, and the row a
//! checked INSERT or COPY writes on its own.

use super::search::nearest_stored;
use super::settings::set_local;
use super::target::{
    become_owner, column_name, columns_written, dup_of_type, finish, insert_columns, open_target, write_as_checked,
    Target,
};
use super::types::{query, Outcome, Returned};
use std::ffi::{CStr, CString};

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;

use crate::args::Mode;
use crate::errors::{Code, Error, OrRaise};

/// The work of `_simdup_checked_insert`, inside pgrx's guard.
///
/// # Safety
/// Called by [`simdup_checked_insert`] with the function manager's `fcinfo`.
#[pg_guard]
pub(crate) unsafe extern "C-unwind" fn work(fcinfo: pg_sys::FunctionCallInfo, outcome: *mut Option<Outcome>) {
    // SAFETY: two arguments (regclass, jsonb), non-NULL (the function is STRICT).
    unsafe {
        let args = (*fcinfo).args.as_slice(2);
        let relid = pg_sys::Oid::from(args[0].value.value() as u32);
        let ext_schema = {
            let ns = pg_sys::get_func_namespace((*(*fcinfo).flinfo).fn_oid);
            quote_identifier(CStr::from_ptr(pg_sys::get_namespace_name(ns)).to_string_lossy())
        };
        // The row's values are read from the jsonb object here, as the caller and with the
        // caller's settings, as an INSERT of them reads them; the write pins the settings of
        // their transfer only.
        let row = json_row(relid, args[1].value);
        *outcome = Some(write_row(relid, row, &ext_schema, None, None));
    }
}

/// The jsonb object `json` (`simdup_insert`'s row) as a datum of table `relid`'s row type
/// (`jsonb_populate_record`, as the caller, with the caller's settings), with the columns its keys
/// name (42703 for a key that names no column).
///
/// # Safety
/// In a transaction, inside pgrx's guard; `json` is a jsonb datum.
pub(crate) unsafe fn json_row(relid: pg_sys::Oid, json: pg_sys::Datum) -> Row {
    // SAFETY: catalog lookups of an existing table (the function's regclass argument); the row
    // SPI returns is copied out of SPI's memory (SPI_datumTransfer) before the connection ends;
    // the GUC nest level is closed here, or by the transaction's abort.
    unsafe {
        let nest = pg_sys::NewGUCNestLevel();
        set_local("search_path", "pg_catalog, pg_temp");
        let arg = || DatumWithOid::new(json, pg_sys::JSONBOID);
        let name = CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy().into_owned();
        let written: Vec<i32> =
            query("SELECT k FROM pg_catalog.jsonb_object_keys($1) k", &[arg()], "reading the row's keys")
                .into_iter()
                .flatten()
                .map(|key| {
                    let ckey = CString::new(key.as_str()).unwrap_or_default();
                    let attnum = i32::from(pg_sys::get_attnum(relid, ckey.as_ptr()));
                    if attnum <= 0 {
                        Error::new(
                            Code::ERRCODE_UNDEFINED_COLUMN,
                            format!("column \"{key}\" of relation \"{name}\" does not exist"),
                        )
                        .raise();
                    }
                    attnum
                })
                .collect();
        let reltype = pg_sys::get_rel_type_id(relid);
        let datum = Spi::connect_mut(|client| {
            let what = "reading the row";
            client
                .update(
                    "SELECT pg_catalog.jsonb_populate_record($1, $2)",
                    None,
                    &[DatumWithOid::null_oid(reltype), arg()],
                )
                .or_raise(what);
            let table = pg_sys::SPI_tuptable;
            if table.is_null() || pg_sys::SPI_processed != 1 {
                crate::errors::internal("jsonb_populate_record returned no row");
            }
            let mut isnull = false;
            let value = pg_sys::SPI_getbinval(*(*table).vals, (*table).tupdesc, 1, &mut isnull);
            if isnull {
                crate::errors::internal("jsonb_populate_record returned NULL");
            }
            pg_sys::SPI_datumTransfer(value, false, -1)
        });
        pg_sys::AtEOXact_GUC(true, nest);
        Row { datum, written }
    }
}

/// A row to write: a datum of the table's row type and the columns written (a plain INSERT's
/// target list, a COPY's columns, or `simdup_insert`'s keys), its values made by the writer's
/// statement, with the writer's settings (the INSERT's defaults already evaluated as the writer).
pub(crate) struct Row {
    pub datum: pg_sys::Datum,
    pub written: Vec<i32>,
}

/// The checked write of one row into distributed table `relid`, on the coordinator, with
/// simdup's functions in schema `ext_schema` (quoted), its INSERT followed by `on_conflict` (an
/// `ON CONFLICT … DO NOTHING` clause) if given; the row stored goes to `returned` if given. On
/// [`Outcome::Duplicate`] the relation is left open: the error names it.
///
/// # Safety
/// In a transaction, inside pgrx's guard; `row`'s datum is of `relid`'s row type;
/// `returned`'s descriptor is `relid`'s.
pub(crate) unsafe fn write_row(
    relid: pg_sys::Oid,
    row: Row,
    ext_schema: &str,
    on_conflict: Option<&str>,
    returned: Option<&Returned>,
) -> Outcome {
    // SAFETY: the relation is opened here and stays open (and locked) until the end of the
    // transaction; catalog lookups of its columns; the user switch is undone on every path
    // (errors included: the transaction's abort restores the user and security context, and
    // the GUC nest level).
    unsafe {
        let Target { rel, name, table, check, cols, mode, nest } = open_target(relid);
        // The row as a statement's `$1`, and the record `($1)` whose fields are its columns.
        // (The INSERT is a single-row VALUES, which Citus routes to the row's shard.)
        let Row { datum: row_datum, written: given } = row;
        let record = "($1)";
        let row_arg = || DatumWithOid::new(row_datum, (*(*rel).rd_rel).reltype);

        // The columns written: the statement's columns or the row's keys (generated columns,
        // and dup_of in mark mode, are computed, not taken), and always the column the
        // fingerprint comes from, so that a default never fills it unchecked (the caller fills
        // defaults first, as itself).
        let attnums = columns_written(relid, &name, &cols, &given);
        let source_attnum = cols.source;
        let column = |attnum: i32| column_name(relid, attnum);
        let source = column(source_attnum);

        // 1. What the row stores: its text (or adopted fingerprint), as text.
        let value = query(&format!("SELECT {record}.{source}::pg_catalog.text"), &[row_arg()], "reading the row")
            .into_iter()
            .next()
            .flatten();

        // 2.-4. Lock, search every shard, decide (as the owner: the caller needs no SELECT).
        // The key is named to the caller only if they may read it, as the trigger does.
        let may_read_key = crate::access::read(relid, cols.key as pg_sys::AttrNumber) == crate::access::Read::Allowed;
        let (saved_user, saved_context) = become_owner(rel);

        let found = nearest_stored(relid, &check, &cols, &table, ext_schema, value, None);
        let result = match (&found, mode) {
            (Some((key, measure)), Mode::Reject) => {
                Outcome::Duplicate(check.duplicate(rel, &name, key, *measure, may_read_key))
            }
            (Some(_), Mode::Skip) => Outcome::Stored(0),
            _ => {
                let (target, mut values) = insert_columns(relid, &attnums, &cols, |n| format!("{record}.{n}"));
                let mut insert_args = vec![row_arg()];
                if let Some(typ) = dup_of_type(relid, &cols) {
                    values.push(format!("$2::{typ}"));
                    insert_args.push(found.as_ref().map(|(k, _)| k.clone()).into());
                }
                // (A single-row VALUES, which Citus routes to the row's shard.)
                let returning = if returned.is_some() { "*" } else { "1" };
                let insert = format!(
                    "INSERT INTO {table} ({target}) VALUES ({}){} RETURNING {returning}",
                    values.join(", "),
                    on_conflict.unwrap_or_default()
                );
                Outcome::Stored(write_as_checked(&table, &insert, &insert_args, false, returned, |_| 0).0)
            }
        };
        finish(rel, nest, (saved_user, saved_context), result)
    }
}

// `_simdup_checked_insert(tbl regclass, row jsonb) RETURNS bigint`, declared in sql/dedup.sql.
crate::fmgr::finfo_v1!(pg_finfo_simdup_checked_insert);

/// # Safety
/// Called by the function manager.
#[unsafe(no_mangle)]
#[doc(hidden)]
pub unsafe extern "C-unwind" fn simdup_checked_insert(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    let mut outcome = None;
    // SAFETY: `work` is guarded: its errors and panics become PostgreSQL errors there.
    unsafe { work(fcinfo, &mut outcome) };
    match outcome {
        Some(Outcome::Stored(n)) => pg_sys::Datum::from(n as i64),
        Some(Outcome::Changed) => crate::errors::internal("an INSERT's checked write found its row changed"),
        // SAFETY: this is the outermost Rust frame, nothing in it needs dropping (a
        // ConstraintError holds only palloc'd pointers), and the relation is open.
        Some(Outcome::Duplicate(error)) => unsafe { error.raise() },
        None => pg_sys::Datum::from(0),
    }
}
