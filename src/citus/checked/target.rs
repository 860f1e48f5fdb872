//! The table a checked write writes, opened and written as its owner: the target, the columns
//! written, the statements that write them.

use super::settings::{mark, pin_transfer, set_local};
use super::types::{not_supported, Check, Cols, Outcome, Returned};
use std::collections::HashSet;
use std::ffi::CStr;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;

use crate::args::Mode;
use crate::catalog::{qualified_name, relation_name};
use crate::errors::{Code, Error, OrRaise};

use crate::dedup::config::dedup_config;
use crate::dedup::config::DUP_OF;
use crate::dedup::tuple::columns;
use crate::similarity::config::{check_columns, similar_config};

/// What every checked write into a table reads first: the relation (opened here, kept open and
/// locked to the end of the transaction), its names, its dedup trigger's check and columns.
pub(crate) struct Target {
    pub(crate) rel: pg_sys::Relation,
    /// The table's name, unqualified (for messages).
    pub(crate) name: String,
    /// Schema-qualified and quoted: in statements, in messages, and as the marker the shards'
    /// triggers compare with (`format('%I.%I')` there).
    pub(crate) table: String,
    pub(crate) check: Check,
    pub(crate) cols: Cols,
    pub(crate) mode: Mode,
    /// The GUC nest level of the write's own settings (`search_path` among them), undone by
    /// [`finish`].
    pub(crate) nest: i32,
}

/// Opens `relid` for a checked write, with the checks every checked write makes: a Citus
/// distributed table, this node its coordinator, READ COMMITTED, no row security, a dedup
/// trigger.
///
/// # Safety
/// In a transaction, inside pgrx's guard.
pub(crate) unsafe fn open_target(relid: pg_sys::Oid) -> Target {
    // SAFETY: the relation is opened here and stays open (and locked) until the end of the
    // transaction; catalog lookups of its columns.
    unsafe {
        // Settings made from here on are undone at the end of the write (`finish`), as a
        // function's SET clause's.
        let nest = pg_sys::NewGUCNestLevel();
        set_local("search_path", "pg_catalog, pg_temp");
        let rel = crate::catalog::open_relation(relid);
        let name = relation_name(rel);
        let table = qualified_name(rel);

        // Only on the coordinator, only for a table whose shards see part of the rows.
        let distributed = crate::citus::shard::is_distributed(relid) && crate::citus::shard::is_coordinator();
        if !distributed {
            not_supported(
            format!("_simdup_checked_insert: {table} is not a Citus distributed table, or this is not its coordinator"),
            "It writes rows of a distributed table after checking them across shards; on other tables INSERT is checked by the dedup trigger.",
        );
        }
        if pg_sys::XactIsoLevel != pg_sys::XACT_READ_COMMITTED as i32 {
            not_supported(
            format!("a checked write into distributed table {table} needs READ COMMITTED"),
            "At a higher isolation level a worker's snapshot can predate a concurrent writer's commit, so its near-duplicate could be missed.",
        );
        }
        if (*(*rel).rd_rel).relrowsecurity {
            not_supported(
                format!("checked writes do not support distributed table {table} with row-level security"),
                "The row is written as the table's owner, which row security does not restrict.",
            );
        }
        // The table's dedup trigger: by SimHash distance, or by verified similarity.
        let check = match (dedup_config(rel), similar_config(rel)) {
            (Some(cfg), _) => Check::SimHash(cfg),
            (None, Some(cfg)) => Check::Similar(cfg),
            (None, None) => crate::errors::not_in_prerequisite_state(
                format!("table {table} is not enabled for dedup"),
                "Call simdup_enable(table, text_column, on_duplicate => 'reject' | 'skip' | 'mark') first.",
            ),
        };
        let cols = match &check {
            Check::SimHash(cfg) => {
                let c = columns(rel, cfg);
                Cols {
                    source: c.text.unwrap_or(c.fp),
                    text: c.text.is_some(),
                    fp: Some(c.fp),
                    key: c.key,
                    dup_of: c.dup_of,
                }
            }
            Check::Similar(cfg) => {
                let c = check_columns(rel, cfg);
                Cols { source: c.text, text: true, fp: None, key: c.key, dup_of: c.dup_of }
            }
        };
        let mode = match &check {
            Check::SimHash(cfg) => cfg.mode,
            Check::Similar(cfg) => cfg.mode,
        };
        // The rows are values already; from here on they only cross to the workers and back.
        pin_transfer();
        Target { rel, name, table, check, cols, mode, nest }
    }
}

/// The end of every checked write: its settings undone, the caller's user and security context
/// back, and the relation closed (its lock kept to the end of the transaction) — or left open
/// for a near-duplicate's error, which names the table through it (the abort closes it).
///
/// # Safety
/// `rel` and `nest` are the write's [`Target`]'s; `saved` the user and context it replaced.
pub(crate) unsafe fn finish(rel: pg_sys::Relation, nest: i32, saved: (pg_sys::Oid, i32), result: Outcome) -> Outcome {
    // SAFETY: the caller guarantees `rel` and `nest` are its Target's (an open relation, the GUC
    // nest level open_target made) and `saved` what become_owner replaced: each restored once,
    // `rel` closed here unless a near-duplicate's error still names it.
    unsafe {
        pg_sys::AtEOXact_GUC(true, nest);
        pg_sys::SetUserIdAndSecContext(saved.0, saved.1);
        if !matches!(result, Outcome::Duplicate(_)) {
            pg_sys::table_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        }
    }
    result
}

/// The columns a checked write writes: `given` (generated columns, and dup_of in mark mode, are
/// computed, not taken) and always the column the fingerprint comes from, so that a default
/// never fills it unchecked (the caller fills defaults first, as itself), ascending; 42501 unless
/// the caller may INSERT into each.
///
/// # Safety
/// `target` is open.
pub(crate) unsafe fn columns_written(relid: pg_sys::Oid, target_name: &str, cols: &Cols, given: &[i32]) -> Vec<i32> {
    let mut attnums: Vec<i32> = vec![cols.source];
    for &attnum in given {
        // SAFETY: a catalog lookup of a column of an open relation.
        let generated = unsafe { pg_sys::get_attgenerated(relid, attnum as pg_sys::AttrNumber) } != 0;
        if generated || Some(attnum) == cols.dup_of || attnums.contains(&attnum) {
            continue;
        }
        attnums.push(attnum);
    }
    attnums.sort_unstable();
    for &attnum in &attnums {
        // SAFETY: a privilege lookup of a column of an open relation.
        let allowed = unsafe {
            crate::access::column_privilege(relid, attnum as pg_sys::AttrNumber, pg_sys::ACL_INSERT as pg_sys::AclMode)
        };
        if !allowed {
            Error::new(Code::ERRCODE_INSUFFICIENT_PRIVILEGE, format!("permission denied for table {target_name}"))
                .raise();
        }
    }
    attnums
}

/// Acts as the owner of `rel`, in a restricted security context (nothing of the caller's runs
/// with the owner's rights: statements are built here, names qualified); returns the user and
/// context to restore (a transaction's abort restores them too).
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn become_owner(rel: pg_sys::Relation) -> (pg_sys::Oid, i32) {
    let (mut saved_user, mut saved_context) = (pg_sys::InvalidOid, 0);
    // SAFETY: the caller guarantees an open relation; the user switch as SECURITY DEFINER
    // functions and VACUUM's index functions make it.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut saved_user, &mut saved_context);
        pg_sys::SetUserIdAndSecContext(
            (*(*rel).rd_rel).relowner,
            saved_context | (pg_sys::SECURITY_LOCAL_USERID_CHANGE | pg_sys::SECURITY_RESTRICTED_OPERATION) as i32,
        );
    }
    (saved_user, saved_context)
}

/// The quoted name of column `attnum` of `relid`.
pub(crate) fn column_name(relid: pg_sys::Oid, attnum: i32) -> String {
    // SAFETY: a catalog lookup of an existing column (the callers read it from the catalog).
    let name = unsafe { CStr::from_ptr(pg_sys::get_attname(relid, attnum as pg_sys::AttrNumber, false)) };
    quote_identifier(name.to_string_lossy())
}

/// The target list of a checked write's INSERT — the quoted names of `attnums`, then `dup_of` in
/// mark mode — and the value expression `value(name)` of each column (the caller adds
/// `dup_of`'s, of [`dup_of_type`]).
pub(crate) fn insert_columns(
    relid: pg_sys::Oid,
    attnums: &[i32],
    cols: &Cols,
    value: impl Fn(&str) -> String,
) -> (String, Vec<String>) {
    let names: Vec<String> = attnums.iter().map(|&a| column_name(relid, a)).collect();
    let values = names.iter().map(|n| value(n)).collect();
    let mut target = names.join(", ");
    if cols.dup_of.is_some() {
        target.push_str(&format!(", {}", quote_identifier(DUP_OF)));
    }
    (target, values)
}

/// The type of `dup_of` (the key's), as a cast names it; None without `dup_of`.
pub(crate) fn dup_of_type(relid: pg_sys::Oid, cols: &Cols) -> Option<String> {
    cols.dup_of.map(|attnum| {
        // SAFETY: a catalog lookup of a checked column of the table.
        let typ =
            unsafe { CStr::from_ptr(pg_sys::format_type_be(pg_sys::get_atttype(relid, attnum as pg_sys::AttrNumber))) };
        typ.to_string_lossy().into_owned()
    })
}

/// `INSERT INTO table (target) SELECT values FROM` the subscripts of the row array `$1`, in its
/// order: the statement of a batch of rows ([`row_array`]).
pub(crate) fn array_insert(table: &str, target: &str, values: &[String]) -> String {
    format!(
        "INSERT INTO {table} ({target}) SELECT {} FROM pg_catalog.generate_subscripts($1, 1) AS s(i) ORDER BY s.i",
        values.join(", ")
    )
}

/// The array of `rows` (datums of `rel`'s row type), allocated in the current memory context,
/// and the table's array type: the `$1` of [`array_insert`].
///
/// # Safety
/// `rel` is an open relation; the datums are of its row type.
pub(crate) unsafe fn row_array(rel: pg_sys::Relation, rows: &[pg_sys::Datum]) -> (pg_sys::Datum, pg_sys::Oid) {
    // SAFETY: the caller guarantees `rel` is open (rd_rel gives its row type) and the datums are
    // of that type, as datum_array asks.
    unsafe { datum_array(rows, (*(*rel).rd_rel).reltype) }
}

/// The array of `datums` of type `typ` (no NULLs), allocated in the current memory context, and
/// its array type.
///
/// # Safety
/// The datums are of type `typ`.
pub(crate) unsafe fn datum_array(datums: &[pg_sys::Datum], typ: pg_sys::Oid) -> (pg_sys::Datum, pg_sys::Oid) {
    // SAFETY: the caller guarantees the datums are of type `typ`, none NULL; construct_array is
    // given the type's length, by-value flag and alignment, and copies them into the current
    // memory context.
    unsafe {
        let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
        pg_sys::get_typlenbyvalalign(typ, &mut len, &mut byval, &mut align);
        let mut elems = datums.to_vec();
        let array = pg_sys::construct_array(elems.as_mut_ptr(), elems.len() as i32, typ, len.into(), byval, align);
        (pg_sys::Datum::from(array), pg_sys::get_array_type(typ))
    }
}

/// Runs `insert` as a checked write of `table`: with `simdup.checked_write` naming it for this
/// statement (propagated to the workers), which the shards' triggers let through for the
/// owner the caller has become; returns the rows written and, when `keyed` (the statement
/// returns the key as int8 first), the keys of those rows. With `returned`, the rows it returns
/// (after the key when `keyed`) go to the store in the order `rank` gives them
/// ([`Returned::put_spi_rows`]).
pub(crate) fn write_as_checked(
    table: &str,
    insert: &str,
    args: &[DatumWithOid],
    keyed: bool,
    returned: Option<&Returned>,
    rank: impl FnMut(Option<i64>) -> usize,
) -> (u64, HashSet<Option<i64>>) {
    as_checked(table, || {
        Spi::connect_mut(|client| {
            let what = "writing the rows";
            let result = client.update(insert, None, args).or_raise(what);
            if let Some(returned) = returned {
                // SAFETY: right after the statement, in its connection.
                unsafe { returned.put_spi_rows(usize::from(keyed), rank) };
            }
            let n = result.len() as u64;
            let keys = match keyed {
                true => result.map(|row| row.get::<i64>(1).or_raise(what)).collect(),
                false => HashSet::new(),
            };
            (n, keys)
        })
    })
}

/// 40001, as PostgreSQL raises it for an UPDATE whose row another transaction changed, with
/// `detail`.
pub(crate) fn concurrent_update(detail: String) -> ! {
    Error::new(
        Code::ERRCODE_T_R_SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update".to_owned(),
    )
    .detail(detail)
    .hint("Retry the statement.")
    .raise()
}

/// Runs `write` (statements writing `table`) as checked writes: with `simdup.checked_write`
/// naming the table while it runs (propagated to the workers), which the shards' triggers let
/// through for the owner the caller has become.
pub(crate) fn as_checked<T>(table: &str, write: impl FnOnce() -> T) -> T {
    set_local("citus.propagate_set_commands", "local");
    mark(table);
    let result = write();
    mark("");
    result
}
