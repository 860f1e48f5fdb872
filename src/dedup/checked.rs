//! The checked write of one row into a Citus distributed table, on the coordinator:
//! `_simdup_checked_insert(tbl, row jsonb)`, which `simdup_insert` and `simdup_insert_select`
//! (sql/dedup.sql) call for each row.
//!
//! A shard's dedup trigger sees that shard only ([`super::citus`]), so the check is made here,
//! with what every node shares (docs/citus.md, "Dedup across shards"):
//!
//! 1. the fingerprint of the text the row will store;
//! 2. its lock stripes on the coordinator ([`super::lookup::lock_to_commit`], the trigger's
//!    stripes, held to the end of the transaction: the workers' snapshots see committed rows only):
//!    two writers of near-duplicates share a stripe, whichever shards their rows go to;
//! 3. one query over every shard for the near-duplicate with the smallest key; READ COMMITTED,
//!    so each worker's snapshot is taken after the locks are held;
//! 4. the outcome the trigger would give ([`super::trigger::duplicate_error`] for reject, skip,
//!    or mark with `dup_of`), then the INSERT.
//!
//! The INSERT runs **as the table's owner**, with `simdup.checked_write` naming the table, and
//! the shard trigger lets a write through only when both hold ([`super::citus::passes_unchecked`]).
//! `simdup.checked_write` is an ordinary setting — Citus must propagate it — so it proves
//! nothing alone: a writer could set it with `SET LOCAL`, `ALTER ROLE … SET` or `PGOPTIONS`.
//! The owner's identity is what a writer cannot take, and the owner could disable the trigger
//! anyway. Everything the check depends on is read here (the trigger's configuration, Citus's
//! metadata, the isolation level), never taken from the caller, so calling this function
//! directly gives exactly a checked write.
//!
//! While it acts as the owner, nothing of the caller's runs: the row is data, the statements
//! are built here with every name qualified, `search_path` is `pg_catalog, pg_temp`, and the
//! security context is restricted (as for VACUUM's index functions). Before that, the caller's
//! own rights are checked: INSERT on the table or on every column written.
//!
//! The rows come as values the writer's statement made with the writer's settings; they cross to
//! the workers, and back, as text, which Citus writes with the coordinator's output functions and
//! a worker reads with its own settings. The write's statements therefore run with the settings
//! that decide that text pinned on both sides ([`pin_transfer`]), so that every value is stored
//! as the writer's statement gave it, and as it was checked.

use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, CString};

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;

use crate::args::Mode;
use crate::catalog::{qualified_name, relation_name};
use crate::errors::{Code, ConstraintError, Error, OrRaise};

use crate::minhash::{char_set, set_bands, text_short, ShortText};
use simdup_core::similar::{Keys, Via};

use super::config::{Config, DUP_OF};
use super::lookup::{lock_to_commit, row_stripes, similar_stripes};
use super::similar::{check_columns, similar_config, similar_error, SimilarConfig};
use super::trigger::{dedup_config, duplicate_error};
use super::tuple::{columns, text_of};

/// The check a table's dedup trigger makes: by SimHash distance or by verified similarity.
enum Check {
    SimHash(Config),
    Similar(SimilarConfig),
}

impl Check {
    /// The trigger's 23505 for a row of table `rel` whose near-duplicate has key `key` (as text)
    /// at `measure` (the distance, or the Jaccard similarity), naming the key only if the caller
    /// may read it.
    fn duplicate(
        &self,
        rel: pg_sys::Relation,
        name: &str,
        key: &str,
        measure: f64,
        may_read_key: bool,
    ) -> ConstraintError {
        match self {
            Check::SimHash(cfg) => duplicate_error(rel, cfg, name, key, measure as u32, may_read_key),
            Check::Similar(cfg) => similar_error(rel, cfg, name, key, measure, None, may_read_key),
        }
    }
}

/// The columns the check reads and writes.
struct Cols {
    /// The column the check reads: the text, or an adopted fingerprint.
    source: i32,
    /// Whether `source` is a text (not an adopted fingerprint).
    text: bool,
    /// The fingerprint column (SimHash).
    fp: Option<i32>,
    key: i32,
    dup_of: Option<i32>,
}

/// The outcome of a checked write: the rows stored, or the near-duplicate that rejects the
/// statement (the relation left open: the error names it).
pub(super) enum Outcome {
    Stored(u64),
    Duplicate(ConstraintError),
    /// The one row of a checked UPDATE ([`update_row`]) was changed by another transaction
    /// since the UPDATE read it: nothing was written, the caller reads it again.
    Changed,
}

/// Where a checked write puts the rows it stored, as the shards stored them (defaults, `dup_of`,
/// generated columns and the shards' own triggers included), for a statement's `RETURNING` list
/// ([`super::coordinator`]).
pub(super) struct Returned {
    /// Filled in the memory context it was made in.
    pub store: *mut pg_sys::Tuplestorestate,
    /// The table's descriptor, dropped columns included: the store's rows are of it.
    pub desc: pg_sys::TupleDesc,
}

impl Returned {
    /// Puts the rows of the statement SPI ran last into the store: after its first `skip`
    /// columns (`skip` = 1: an int8 whose `rank` orders the rows; 0: the order they came in),
    /// the table's columns but the dropped ones (`RETURNING …, *`). In rank order, stably.
    ///
    /// # Safety
    /// In the SPI connection that ran the statement, before it runs another.
    unsafe fn put_spi_rows(&self, skip: usize, mut rank: impl FnMut(Option<i64>) -> usize) {
        // SAFETY: SPI's result of the last statement, valid until the connection runs another;
        // the store copies each row (tuplestore_putvalues) into its own memory.
        unsafe {
            let table = pg_sys::SPI_tuptable;
            if table.is_null() {
                return;
            }
            let spi_desc = (*table).tupdesc;
            let tuples = std::slice::from_raw_parts((*table).vals, pg_sys::SPI_processed as usize);
            let dropped: Vec<bool> =
                pgrx::PgTupleDesc::from_pg_unchecked(self.desc).iter().map(|att| att.attisdropped).collect();
            let live = dropped.iter().filter(|&&d| !d).count();
            if (*spi_desc).natts as usize != skip + live {
                crate::errors::internal("a checked write returned other columns than the table's");
            }
            let mut order: Vec<(usize, usize)> = tuples
                .iter()
                .enumerate()
                .map(|(r, &tuple)| {
                    let mut isnull = false;
                    let first = (skip > 0)
                        .then(|| pg_sys::SPI_getbinval(tuple, spi_desc, 1, &mut isnull).value() as i64)
                        .filter(|_| !isnull);
                    (rank(first), r)
                })
                .collect();
            order.sort_unstable();
            let mut spi_values = vec![pg_sys::Datum::from(0); skip + live];
            let mut spi_nulls = vec![true; skip + live];
            let mut values = vec![pg_sys::Datum::from(0); dropped.len()];
            let mut nulls = vec![true; dropped.len()];
            for (_, r) in order {
                pg_sys::heap_deform_tuple(tuples[r], spi_desc, spi_values.as_mut_ptr(), spi_nulls.as_mut_ptr());
                let mut c = skip;
                for (a, &gone) in dropped.iter().enumerate() {
                    if !gone {
                        (values[a], nulls[a]) = (spi_values[c], spi_nulls[c]);
                        c += 1;
                    }
                }
                pg_sys::tuplestore_putvalues(self.store, self.desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            }
        }
    }
}

/// Runs `sql` with `args` over SPI (read-write: a fresh snapshot per statement) and returns the
/// first column of each row as text.
fn query(sql: &str, args: &[DatumWithOid], what: &str) -> Vec<Option<String>> {
    Spi::connect_mut(|client| {
        let rows = client.update(sql, None, args).or_raise(what);
        rows.map(|row| row.get::<String>(1).or_raise(what)).collect()
    })
}

fn not_supported(message: String, detail: &str) -> ! {
    Error::new(Code::ERRCODE_FEATURE_NOT_SUPPORTED, message).detail(detail).raise()
}

/// The work of `_simdup_checked_insert`, inside pgrx's guard.
///
/// # Safety
/// Called by [`simdup_checked_insert`] with the function manager's `fcinfo`.
#[pg_guard]
unsafe extern "C-unwind" fn work(fcinfo: pg_sys::FunctionCallInfo, outcome: *mut Option<Outcome>) {
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
unsafe fn json_row(relid: pg_sys::Oid, json: pg_sys::Datum) -> Row {
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
pub(super) struct Row {
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
pub(super) unsafe fn write_row(
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

/// Steps 1 to 3 of a checked write, as the table's owner: the lock stripes of `value` (the text
/// the row will store, or its adopted fingerprint, as text; None: NULL), then one query over
/// every shard for its near-duplicate with the smallest key, leaving out the row whose key (as
/// text) is `exclude` (an UPDATE's own row); that key, as text, and the measure (the distance,
/// or the Jaccard similarity).
fn nearest_stored(
    relid: pg_sys::Oid,
    check: &Check,
    cols: &Cols,
    table: &str,
    ext_schema: &str,
    value: Option<String>,
    exclude: Option<&str>,
) -> Option<(String, f64)> {
    let column = |attnum: i32| column_name(relid, attnum);
    let source = column(cols.source);
    let key_column = column(cols.key);
    // (Ordered aggregates, not ORDER BY key LIMIT 1: pushed to the shards, that would let a
    // shard's planner walk its primary key index.) The own row is left out by its key, compared
    // as text: the parameter after the search's own; the condition parenthesized, so that this
    // applies to all of it (the similarity check's is a disjunction).
    let smallest = |measure: &str, condition: &str, params: usize| {
        let own = match exclude {
            Some(_) => format!(" AND t.{key_column}::pg_catalog.text OPERATOR(pg_catalog.<>) ${}", params + 1),
            None => String::new(),
        };
        format!(
            "SELECT (pg_catalog.array_agg(t.{key_column} ORDER BY t.{key_column}))[1]::pg_catalog.text
                  || ' ' || (pg_catalog.array_agg({measure} ORDER BY t.{key_column}))[1]
             FROM {table} t WHERE ({condition}){own}"
        )
    };
    let search = |sql: String, mut args: Vec<DatumWithOid>| {
        args.extend(exclude.map(|key| key.to_owned().into()));
        query(&sql, &args, "searching every shard for a near-duplicate").into_iter().next().flatten().and_then(|s| {
            let (key, measure) = s.rsplit_once(' ')?;
            Some((key.to_owned(), measure.parse::<f64>().ok()?))
        })
    };
    match check {
        Check::SimHash(cfg) => {
            let fp = match (value.as_deref(), cols.text) {
                (Some(text), true) => crate::fingerprint::simhash(text),
                (Some(fp), false) => Some(fp.parse::<i64>().or_raise("reading the row's fingerprint")),
                (None, _) => None,
            };
            fp.and_then(|fp| {
                lock_to_commit(relid, row_stripes(fp, cfg.k));
                let fp_column = column(cols.fp.unwrap_or(cols.source));
                let distance = format!("{ext_schema}.hamming(t.{fp_column}, $1)");
                let mut condition = format!("{distance} OPERATOR(pg_catalog.<=) {}", cfg.k);
                let mut args: Vec<DatumWithOid> = vec![fp.into()];
                // The table's verification, as the trigger's (src/dedup/verify.rs).
                if let (Some(v), true) = (cfg.verify, cols.text) {
                    condition += &verified_condition(ext_schema, &source, "$2", v);
                    args.push(value.unwrap_or_default().into());
                }
                let params = args.len();
                search(smallest(&distance, &condition, params), args)
            })
        }
        Check::Similar(cfg) => {
            let text = value.unwrap_or_default();
            let set = char_set(&text, cfg.k);
            (!set.is_empty())
                .then(|| {
                    let bands = set_bands(&set, cfg.bands, cfg.rows);
                    let short = text_short(&text, cfg.threshold);
                    let keys = cfg.keys(&set);
                    lock_to_commit(relid, similar_stripes(&cfg.stripes(&set, &bands, short.as_ref(), keys.as_ref())));
                    let short = short.map(|s| s.bands);
                    let (similarity, condition) =
                        similar_condition(cfg, ext_schema, &source, ["$2", "$1", "$5", "$3", "$4", "$6"]);
                    let args = vec![
                        bands.into(),
                        text.into(),
                        cfg.threshold.into(),
                        cfg.containment.into(),
                        short.into(),
                        keys.map(|k| k.probe()).into(),
                    ];
                    on_index(|| search(smallest(&similarity, &condition, 6), args))
                })
                .flatten()
        }
    }
}

/// The verification of a SimHash candidate as a query's condition on stored row `t` (text
/// column `source`) against the new text `text` (an SQL expression): ` AND
/// _simdup_verified(...)`, the trigger's decision (src/dedup/verify.rs).
fn verified_condition(ext_schema: &str, source: &str, text: &str, v: super::config::Verify) -> String {
    let containment = v.containment.map_or_else(|| "NULL".to_owned(), |c| format!("{c:?}"));
    format!(
        " AND {ext_schema}._simdup_verified(t.{source}::pg_catalog.text, {text}, {:?}::pg_catalog.float8, {containment}::pg_catalog.float8)",
        v.threshold
    )
}

/// The trigger's decision (src/dedup/similar.rs) as the similarity check's query asks it of
/// every shard: the measure (`_simdup_similar_match`: the Jaccard similarity of a near-duplicate)
/// and the condition "stored row `t` shares a band value with the new text and is a
/// near-duplicate by every rule, or shares a short band value and is one by the short-text rule
/// alone" (`_simdup_similar_short_match`). The band tests are written as the two indexes'
/// expressions, so that each shard reads them ([`crate::search::similarity`]). `[text, bands,
/// short, threshold, containment]` are the SQL expressions of the new row's text, its band
/// values and short band values (`int8[]`; short NULL for a text without short bands), and the
/// trigger's threshold and containment, and `probe` the new row's containment keys to look up
/// (`int8[]`, [`simdup_core::similar::Keys::probe`]; used only when the trigger has containment:
/// then the condition also holds for a stored row whose containment keys meet the new row's and
/// that `_simdup_similar_key_match` counts a near-duplicate, and the measure is whichever match
/// is not NULL: both give the pair's k-shingle Jaccard similarity).
fn similar_condition(cfg: &SimilarConfig, ext_schema: &str, source: &str, params: [&str; 6]) -> (String, String) {
    let [text, bands, short, threshold, containment, probe] = params;
    let (k, b, r, t) = (cfg.k, cfg.bands, cfg.rows, cfg.threshold);
    let stored = format!("t.{source}::pg_catalog.text");
    let by_band = format!("{ext_schema}._simdup_similar_match({stored}, {text}, {k}, {threshold}, {containment})");
    let mut condition = format!(
        "({ext_schema}._simdup_similar_bands(t.{source}, {k}, {b}, {r}) OPERATOR(pg_catalog.&&) {bands} \
          AND {by_band} IS NOT NULL) \
         OR ({ext_schema}._simdup_similar_short_bands(t.{source}, '{t}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) {short} \
             AND {ext_schema}._simdup_similar_short_match({stored}, {text}, {k}, {threshold}) IS NOT NULL)"
    );
    let mut similarity = by_band.clone();
    if let Some(c) = cfg.containment {
        // The key test is written as the containment index's expression, for the shards'
        // planners; a row found by a band and by a key is measured once, by its Jaccard.
        let by_key =
            format!("{ext_schema}._simdup_similar_key_match({stored}, {text}, {k}, {threshold}, {containment})");
        condition.push_str(&format!(
            " OR ({ext_schema}._simdup_similar_keys(t.{source}, {k}, '{c}'::pg_catalog.float8) OPERATOR(pg_catalog.&&) {probe} \
                 AND {by_key} IS NOT NULL)"
        ));
        similarity = format!("COALESCE({by_band}, {by_key})");
    }
    (similarity, condition)
}

/// The column a table's dedup check reads (the text, or an adopted fingerprint) and its key
/// column, if the table has a dedup trigger: what an UPDATE must assign for the coordinator to
/// check it ([`super::coordinator`]).
///
/// # Safety
/// `rel` is an open relation.
pub(super) unsafe fn checked_columns(rel: pg_sys::Relation) -> Option<(i32, i32)> {
    // SAFETY: the caller guarantees an open relation; catalog lookups of its columns.
    unsafe {
        match (dedup_config(rel), similar_config(rel)) {
            (Some(cfg), _) => {
                let c = columns(rel, &cfg);
                Some((c.text.unwrap_or(c.fp), c.key))
            }
            (None, Some(cfg)) => {
                let c = check_columns(rel, &cfg);
                Some((c.text, c.key))
            }
            (None, None) => None,
        }
    }
}

/// A row an UPDATE changes, as the coordinator read it: its `ctid` on its shard, its key and the
/// value of the checked column before the UPDATE.
pub(super) struct OldRow {
    pub ctid: pg_sys::ItemPointerData,
    pub key: pg_sys::Datum,
    /// The checked value as text (None: NULL).
    pub source: Option<String>,
}

/// The checked write of one row of an UPDATE of distributed table `relid` that assigns the
/// checked column, on the coordinator: `row` (a datum of the table's row type) holds the row's
/// key and the new values of columns `written`; `old` is the row as the UPDATE read it.
///
/// When the checked value does not change, the row is written as it is (the trigger lets such
/// an UPDATE through). Otherwise: its stripes, one query over every shard for the near-duplicate
/// with the smallest key **but its own**, and the trigger's outcome — reject (23505), skip (the
/// row is left as it was), or mark (`dup_of` = that key, or NULL). The write is one UPDATE of
/// the row's key *and* its ctid, as the owner with the marker, so it changes the row only as the
/// UPDATE read it: if another transaction changed it since (its ctid moved), nothing is written
/// and the outcome is [`Outcome::Changed`] (the caller reads the row again, as READ COMMITTED
/// re-reads it); a row deleted since is left out, as PostgreSQL does.
///
/// # Safety
/// In a transaction, inside pgrx's guard; `row` is of `relid`'s row type.
pub(super) unsafe fn update_row(
    relid: pg_sys::Oid,
    row: pg_sys::Datum,
    written: &[i32],
    old: &OldRow,
    ext_schema: &str,
    returned: Option<&Returned>,
) -> Outcome {
    // SAFETY: the caller guarantees a transaction, pgrx's guard and `row` of `relid`'s row type
    // (read by `field`); open_update opens and locks the relation, which stays open; the user
    // switch and settings are undone by `finish`, or by the transaction's abort on an error.
    unsafe {
        let (Target { rel, name, table, check, cols, mode, nest }, source_type, key_type) = open_update(relid, written);
        let new_value = field(row, cols.source).and_then(|v| text_of(v, source_type));
        let changed = written.contains(&cols.source) && new_value != old.source;
        let key_text = text_of(old.key, key_type).unwrap_or_default();

        let may_read_key = crate::access::read(relid, cols.key as pg_sys::AttrNumber) == crate::access::Read::Allowed;
        let (saved_user, saved_context) = become_owner(rel);
        let found = if changed {
            nearest_stored(relid, &check, &cols, &table, ext_schema, new_value, Some(&key_text))
        } else {
            None
        };
        let result = match (&found, mode) {
            (Some((key, measure)), Mode::Reject) => {
                Outcome::Duplicate(check.duplicate(rel, &name, key, *measure, may_read_key))
            }
            (Some(_), Mode::Skip) => Outcome::Stored(0),
            _ => {
                let write = if changed { Write::Checked(found.map(|(key, _)| key)) } else { Write::AsAssigned };
                let writer = RowWriter::new(relid, &table, &cols, written, returned.is_some());
                match as_checked(&table, || writer.write(&[(row, old, write)], returned)) {
                    (_, true) => Outcome::Changed,
                    (n, false) => Outcome::Stored(n),
                }
            }
        };
        finish(rel, nest, (saved_user, saved_context), result)
    }
}

/// [`open_target`] for a checked UPDATE of the columns `written`, with the types of the checked
/// and the key column: 42501 unless the caller may UPDATE each of those columns, as the
/// executor checks an UPDATE's target list (its check of the statement's rows covers what they
/// read).
///
/// # Safety
/// In a transaction, inside pgrx's guard.
unsafe fn open_update(relid: pg_sys::Oid, written: &[i32]) -> (Target, pg_sys::Oid, pg_sys::Oid) {
    // SAFETY: the caller guarantees a transaction inside pgrx's guard, as open_target asks; the
    // relation it opens stays open for the privilege and catalog lookups of its columns.
    unsafe {
        let target = open_target(relid);
        for &attnum in written {
            let allowed = crate::access::column_privilege(
                relid,
                attnum as pg_sys::AttrNumber,
                pg_sys::ACL_UPDATE as pg_sys::AclMode,
            );
            if !allowed {
                Error::new(
                    Code::ERRCODE_INSUFFICIENT_PRIVILEGE,
                    format!("permission denied for table {}", target.name),
                )
                .raise();
            }
        }
        let source_type = pg_sys::get_atttype(relid, target.cols.source as pg_sys::AttrNumber);
        let key_type = pg_sys::get_atttype(relid, target.cols.key as pg_sys::AttrNumber);
        (target, source_type, key_type)
    }
}

/// Column `attnum` of the composite datum `row` (None: NULL).
///
/// # Safety
/// `row` is a composite datum with that column.
unsafe fn field(row: pg_sys::Datum, attnum: i32) -> Option<pg_sys::Datum> {
    let mut isnull = false;
    // SAFETY: the caller guarantees `row` is a composite datum (a HeapTupleHeader) with column
    // `attnum`, which GetAttributeByNum reads.
    let value = unsafe {
        pg_sys::GetAttributeByNum(
            row.cast_mut_ptr::<pg_sys::HeapTupleHeaderData>(),
            attnum as pg_sys::AttrNumber,
            &mut isnull,
        )
    };
    (!isnull).then_some(value)
}

/// How a checked UPDATE writes a row.
enum Write {
    /// The row keeps its checked value: the columns assigned, as assigned.
    AsAssigned,
    /// The checked value changes: `dup_of` (if the table has it) set to the key given as text
    /// (None: NULL) instead of taken from the UPDATE.
    Checked(Option<String>),
}

/// The writes of a checked UPDATE's rows, as the owner, the caller having set the marker
/// ([`as_checked`]): one `UPDATE t SET … FROM` the rows (arrays: `$1` the rows, `$2` their keys,
/// `$3` their ctids, `$4` the check's `dup_of` as text, `$5` whether the check decided it)
/// `WHERE t.key = k AND t.ctid = c AND t.key = ANY ($2)`, of the columns `written` from each
/// row; for a row whose text changes, `dup_of` set by the check instead of taken from the UPDATE.
/// The last condition lets Citus send the statement only to the shards that hold the keys (one,
/// for one row), where each row is found by the key's index. The statements are built once per
/// UPDATE statement or batch.
struct RowWriter {
    /// When every row keeps its text: the columns assigned, as assigned.
    kept: String,
    /// When some row's text changes: for those rows `dup_of` (if the table has it) is `$4`.
    checked: String,
    /// The row, by its key alone: whether it is still there after a write found nothing.
    again: String,
    key_type: pg_sys::Oid,
    reltype: pg_sys::Oid,
}

impl RowWriter {
    /// The statements of an UPDATE writing columns `written`; `returning`: they return the rows
    /// written, whole, after their positions (for [`Returned::put_spi_rows`]).
    fn new(relid: pg_sys::Oid, table: &str, cols: &Cols, written: &[i32], returning: bool) -> RowWriter {
        let column = |attnum: i32| column_name(relid, attnum);
        // SAFETY: catalog lookups of columns of the open relation.
        let (key_type, reltype) =
            unsafe { (pg_sys::get_atttype(relid, cols.key as pg_sys::AttrNumber), pg_sys::get_rel_type_id(relid)) };
        // The key's equality operator, named with its schema (search_path is pg_catalog's): Citus
        // prunes the shards by it.
        let eq = key_equality(key_type);
        let key_column = column(cols.key);
        let statement = |checked: bool| {
            let mut sets: Vec<String> = written
                .iter()
                .filter(|&&a| !(checked && Some(a) == cols.dup_of))
                .map(|&a| column(a))
                .map(|c| format!("{c} = (w.r).{c}"))
                .collect();
            if let (true, Some(typ), Some(attnum)) = (checked, dup_of_type(relid, cols), cols.dup_of) {
                let dup_of = column(attnum);
                // Rows that keep their text keep dup_of as the UPDATE leaves it.
                let kept = if written.contains(&attnum) { format!("(w.r).{dup_of}") } else { format!("t.{dup_of}") };
                sets.push(format!("{dup_of} = CASE WHEN w.checked THEN w.d::{typ} ELSE {kept} END"));
            }
            format!(
                "UPDATE {table} t SET {} FROM (SELECT s.i, ($1)[s.i] AS r, ($2)[s.i] AS k, ($3)[s.i] AS c, \
                 ($4::pg_catalog.text[])[s.i] AS d, ($5::pg_catalog.bool[])[s.i] AS checked \
                 FROM pg_catalog.generate_subscripts($1, 1) AS s(i)) w \
                 WHERE t.{key_column} {eq} w.k AND t.ctid OPERATOR(pg_catalog.=) w.c AND t.{key_column} {eq} ANY ($2) \
                 RETURNING w.i::pg_catalog.int8{}",
                sets.join(", "),
                if returning { ", t.*" } else { "" }
            )
        };
        RowWriter {
            kept: statement(false),
            checked: statement(true),
            again: format!("SELECT 'x' FROM {table} t WHERE t.{key_column} {eq} $1"),
            key_type,
            reltype,
        }
    }

    /// Writes `rows` — each a row (the table's row type: its key and the new values), the row
    /// as the UPDATE read it, and how to write it — in one statement. Returns the rows written,
    /// and whether a row was changed since the UPDATE read it (its ctid moved: it is not
    /// written, rather than overwritten with values computed from the old row); a row deleted
    /// since is left out.
    ///
    /// # Safety
    /// In a transaction; the rows are of the table's row type, the old keys of its key's type.
    unsafe fn write(&self, rows: &[(pg_sys::Datum, &OldRow, Write)], returned: Option<&Returned>) -> (u64, bool) {
        if rows.is_empty() {
            return (0, false);
        }
        let checked: Vec<bool> = rows.iter().map(|r| matches!(r.2, Write::Checked(_))).collect();
        let update = if checked.contains(&true) { &self.checked } else { &self.kept };
        // SAFETY: the datums are of the types given (the caller's promise; TIDs by reference),
        // copied into arrays that outlive the statement.
        let args = unsafe {
            let array = |datums: Vec<pg_sys::Datum>, typ: pg_sys::Oid| {
                let (array, array_type) = datum_array(&datums, typ);
                DatumWithOid::new(array, array_type)
            };
            vec![
                array(rows.iter().map(|r| r.0).collect(), self.reltype),
                array(rows.iter().map(|r| r.1.key).collect(), self.key_type),
                array(
                    rows.iter().map(|r| pg_sys::Datum::from(&r.1.ctid as *const pg_sys::ItemPointerData)).collect(),
                    pg_sys::TIDOID,
                ),
                rows.iter()
                    .map(|r| match &r.2 {
                        Write::Checked(dup_of) => dup_of.clone(),
                        Write::AsAssigned => None,
                    })
                    .collect::<Vec<Option<String>>>()
                    .into(),
                checked.into(),
            ]
        };
        let what = "writing the rows";
        let written: HashSet<usize> = Spi::connect_mut(|client| {
            let rows = client.update(update, None, &args).or_raise(what);
            if let Some(returned) = returned {
                // SAFETY: right after the statement, in its connection.
                unsafe { returned.put_spi_rows(1, |i| i.map_or(0, |i| i as usize)) };
            }
            rows.map(|row| row.get::<i64>(1).or_raise(what).map_or(0, |i| i as usize)).collect()
        });
        // Changed since the statement read it (deleted: left out).
        let changed = rows.iter().enumerate().any(|(i, (_, old, _))| {
            // SAFETY: the key is of the key's type.
            let key = unsafe { DatumWithOid::new(old.key, self.key_type) };
            !written.contains(&(i + 1)) && !query(&self.again, &[key], "looking for the row again").is_empty()
        });
        (written.len() as u64, changed)
    }
}

/// The checked UPDATE of a batch of rows of distributed table `relid` (one that is
/// [`batchable`]) — `rows[i]` holding row i's key and the new values of columns `written`,
/// `olds[i]` the row as the UPDATE read it, in the statement's order, each row once — with the
/// answers [`update_row`] gives them one after another, checked in one round of queries:
///
/// 1. the lock stripes of every row whose checked value changes, ascending;
/// 2. one query over every shard for the stored near-duplicates of any of them;
/// 3. in Rust, row by row in order, the trigger's decision on the stored rows as they are by
///    then: each row's own, and those of the batch's earlier rows that got a new text, are left
///    out (the new texts of the latter are offered instead, as [`write_batch`] offers a batch's
///    rows: SimHash all of them, similarity those sharing a band); rows that keep their text
///    are written as they are;
/// 4. the rows to write, in one UPDATE ([`RowWriter`]), under the marker.
///
/// # Safety
/// In a transaction, inside pgrx's guard; the datums are of `relid`'s row type.
pub(super) unsafe fn update_batch(
    relid: pg_sys::Oid,
    rows: &[pg_sys::Datum],
    olds: &[OldRow],
    written: &[i32],
    ext_schema: &str,
    returned: Option<&Returned>,
) -> Outcome {
    // SAFETY: the caller guarantees a transaction, pgrx's guard and datums of `relid`'s row type
    // (read by `field`); open_update opens and locks the relation, which stays open; the user
    // switch and settings are undone by `finish`, or by the transaction's abort on an error.
    unsafe {
        let (Target { rel, name, table, check, cols, mode, nest }, source_type, key_type) = open_update(relid, written);
        let keys: Vec<i64> = olds.iter().map(|old| int_key(old.key, key_type)).collect();
        let news: Vec<Option<pg_sys::Datum>> = rows.iter().map(|&row| field(row, cols.source)).collect();
        let changed: Vec<bool> = news
            .iter()
            .zip(olds)
            .map(|(new, old)| written.contains(&cols.source) && new.and_then(|v| text_of(v, source_type)) != old.source)
            .collect();

        // 1. What the check reads of the rows that change, and their stripes.
        let checked: Vec<Option<pg_sys::Datum>> =
            news.iter().zip(&changed).map(|(&new, &c)| if c { new } else { None }).collect();
        let probes = probes_of(relid, &check, &cols, &checked, source_type);
        probes.lock(relid);

        // 2. Their stored near-duplicates, from every shard (as the owner).
        let may_read_key = crate::access::read(relid, cols.key as pg_sys::AttrNumber) == crate::access::Read::Allowed;
        let (saved_user, saved_context) = become_owner(rel);
        let matches = stored_matches(
            &probes,
            ext_schema,
            &table,
            &column_name(relid, cols.fp.unwrap_or(cols.source)),
            &column_name(relid, cols.key),
        );

        // 3. The decisions, in the statement's order (None: the row is left as it is).
        let mut plan: Vec<Option<Write>> = (0..rows.len()).map(|_| None).collect();
        let mut replaced: HashSet<i64> = HashSet::new(); // keys whose stored text this batch changes
        let mut renewed: Vec<usize> = Vec::new(); // those rows, in order
        let mut by_band: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut duplicate = None;
        for i in 0..rows.len() {
            if !changed[i] {
                plan[i] = Some(Write::AsAssigned);
                continue;
            }
            let mut found: Option<(i64, f64)> = None;
            if probes.has(i) {
                for &(key, measure) in &matches[i] {
                    if key != keys[i] && !replaced.contains(&key) && found.is_none_or(|(k, _)| key < k) {
                        found = Some((key, measure));
                    }
                }
                for j in probes.earlier(i, &renewed, &by_band) {
                    if found.is_none_or(|(k, _)| keys[j] < k) {
                        if let Some(measure) = probes.near(i, j) {
                            found = Some((keys[j], measure));
                        }
                    }
                }
            }
            match (found, mode) {
                (Some((key, measure)), Mode::Reject) => {
                    duplicate = Some(check.duplicate(rel, &name, &key.to_string(), measure, may_read_key));
                    break;
                }
                (Some(_), Mode::Skip) => {}
                (found, _) => {
                    plan[i] = Some(Write::Checked(found.map(|(key, _)| key.to_string())));
                    replaced.insert(keys[i]);
                    renewed.push(i);
                    probes.add_bands(i, &mut by_band);
                }
            }
        }

        // 4. The writes, in one statement, under the marker.
        let result = match duplicate {
            Some(error) => Outcome::Duplicate(error),
            None => {
                let writer = RowWriter::new(relid, &table, &cols, written, returned.is_some());
                let writes: Vec<(pg_sys::Datum, &OldRow, Write)> = plan
                    .into_iter()
                    .enumerate()
                    .filter_map(|(i, write)| write.map(|write| (rows[i], &olds[i], write)))
                    .collect();
                let (n, changed) = as_checked(&table, || writer.write(&writes, returned));
                if changed {
                    // (The batch's later rows were decided with its new text stored: the
                    // statement is undone, rather than the row read again.)
                    concurrent_update(format!(
                        "A row of distributed table {table} changed after the UPDATE read it and before its checked write."
                    ));
                }
                Outcome::Stored(n)
            }
        };
        finish(rel, nest, (saved_user, saved_context), result)
    }
}

/// A key of a [`batchable`] table (int2, int4 or int8) as an `i64`.
fn int_key(value: pg_sys::Datum, key_type: pg_sys::Oid) -> i64 {
    match key_type {
        pg_sys::INT2OID => i64::from(value.value() as i16),
        pg_sys::INT4OID => i64::from(value.value() as i32),
        _ => value.value() as i64,
    }
}

/// `OPERATOR(schema.=)`: the equality operator of type `typ`'s default btree operator class,
/// named with its schema (42883 when it has none).
pub(super) fn key_equality(typ: pg_sys::Oid) -> String {
    // SAFETY: type cache and catalog lookups of an existing type and operator.
    unsafe {
        let entry = pg_sys::lookup_type_cache(typ, pg_sys::TYPECACHE_EQ_OPR as i32);
        let op = (*entry).eq_opr;
        if op == pg_sys::InvalidOid {
            Error::new(Code::ERRCODE_UNDEFINED_FUNCTION, "the key's type has no equality operator".to_owned()).raise();
        }
        let tuple = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::OPEROID as i32, pg_sys::Datum::from(op));
        if tuple.is_null() {
            crate::errors::internal("the key type's equality operator is not in pg_operator");
        }
        let form = pg_sys::GETSTRUCT(tuple) as *mut pg_sys::FormData_pg_operator;
        let schema = CStr::from_ptr(pg_sys::get_namespace_name((*form).oprnamespace)).to_string_lossy().into_owned();
        let name = CStr::from_ptr((*form).oprname.data.as_ptr()).to_string_lossy().into_owned();
        pg_sys::ReleaseSysCache(tuple);
        format!("OPERATOR({}.{name})", quote_identifier(schema))
    }
}

/// Whether the checked writes of table `rel` can go a batch at a time ([`write_batch`]): a
/// dedup trigger (by SimHash distance or by similarity) and an integer key (`smallint`,
/// `integer`, `bigint`), so that the batch's keys and the stored ones compare in Rust as the key
/// type orders them.
///
/// # Safety
/// `rel` is an open relation.
pub(super) unsafe fn batchable(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees an open relation; catalog lookups of its columns.
    unsafe {
        let key = match (dedup_config(rel), similar_config(rel)) {
            (Some(cfg), _) => columns(rel, &cfg).key,
            (None, Some(cfg)) => check_columns(rel, &cfg).key,
            (None, None) => return false,
        };
        [pg_sys::INT2OID, pg_sys::INT4OID, pg_sys::INT8OID]
            .contains(&pg_sys::get_atttype((*rel).rd_id, key as pg_sys::AttrNumber))
    }
}

/// What a batch's rows are checked by: per row, what the check reads of it.
/// The texts a SimHash batch verifies its candidates with (None: NULL), and the quoted name of
/// the table's text column.
struct Verified {
    texts: Vec<Option<String>>,
    column: String,
}

enum Probes<'a> {
    /// The fingerprint of each row (None: NULL or featureless text).
    SimHash { cfg: &'a Config, fps: Vec<Option<i64>>, verified: Option<Verified> },
    /// The text, shingle set and band values of each row (an empty set: NULL or no shingles),
    /// each short text's 3-shingle set and short band values, and each row's containment keys
    /// (with the containment rule).
    Similar {
        cfg: &'a SimilarConfig,
        texts: Vec<String>,
        sets: Vec<Vec<u64>>,
        bands: Vec<Vec<i64>>,
        short: Vec<Option<ShortText>>,
        keys: Vec<Option<Keys>>,
    },
}

impl Probes<'_> {
    /// Whether row `i` can be a near-duplicate of anything (it has a fingerprint or shingles).
    fn has(&self, i: usize) -> bool {
        match self {
            Probes::SimHash { fps, .. } => fps[i].is_some(),
            Probes::Similar { sets, .. } => !sets[i].is_empty(),
        }
    }

    /// Takes the lock stripes of every row, ascending: the order every writer takes stripes
    /// in, so no deadlock.
    fn lock(&self, relid: pg_sys::Oid) {
        match self {
            Probes::SimHash { cfg, fps, .. } => {
                lock_to_commit(relid, fps.iter().flatten().flat_map(|&fp| row_stripes(fp, cfg.k)).collect());
            }
            Probes::Similar { cfg, sets, bands, short, keys, .. } => {
                let rows: Vec<_> = (0..sets.len())
                    .map(|i| cfg.stripes(&sets[i], &bands[i], short[i].as_ref(), keys[i].as_ref()))
                    .collect();
                lock_to_commit(relid, similar_stripes(&simdup_core::locks::SimilarStripes::union(&rows)));
            }
        }
    }

    /// The query over every shard for the stored near-duplicates of the batch's rows, and its
    /// arguments: rows (i, key, measure), i the row's position from 1 — the distance within k,
    /// or (similarity) the trigger's decision on a row sharing a band (the Jaccard similarity).
    fn search(&self, ext_schema: &str, table: &str, source: &str, key: &str) -> (String, Vec<DatumWithOid<'static>>) {
        match self {
            Probes::SimHash { cfg, fps, verified } => {
                // With the table's verification, the stored row's text must be a near-duplicate
                // of the batch row's (src/dedup/verify.rs).
                let (texts, verify) = match (verified, cfg.verify) {
                    (Some(v), Some(verify)) => {
                        (Some(v.texts.clone()), verified_condition(ext_schema, &v.column, "q.body", verify))
                    }
                    _ => (None, String::new()),
                };
                (
                    format!(
                        "SELECT q.i, t.{key}::pg_catalog.int8, {ext_schema}.hamming(t.{source}, q.fp)::pg_catalog.float8
                         FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.int8[]), pg_catalog.unnest($2::pg_catalog.text[]))
                              WITH ORDINALITY AS q(fp, body, i)
                         JOIN {table} t ON {ext_schema}.hamming(t.{source}, q.fp) OPERATOR(pg_catalog.<=) {}{verify}",
                        cfg.k
                    ),
                    vec![fps.clone().into(), texts.unwrap_or_default().into()],
                )
            }
            Probes::Similar { cfg, texts, sets, bands, short, keys } => {
                // The rows with shingles: their positions, texts, band values, short band
                // values and containment keys (as array literals: one text each, cast on the
                // shards).
                let rows: Vec<usize> = (0..sets.len()).filter(|&i| !sets[i].is_empty()).collect();
                let band_literal =
                    |b: &[i64]| format!("{{{}}}", b.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
                let (similarity, condition) = similar_condition(
                    cfg,
                    ext_schema,
                    source,
                    [
                        "q.body",
                        "q.bands::pg_catalog.int8[]",
                        "q.short::pg_catalog.int8[]",
                        "$6",
                        "$7",
                        "q.probe::pg_catalog.int8[]",
                    ],
                );
                (
                    format!(
                        "SELECT q.i::pg_catalog.int8, t.{key}::pg_catalog.int8, {similarity}
                         FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.text[]),
                                         pg_catalog.unnest($3::pg_catalog.text[]), pg_catalog.unnest($4::pg_catalog.text[]),
                                         pg_catalog.unnest($5::pg_catalog.text[]))
                              AS q(i, body, bands, short, probe)
                         JOIN {table} t ON {condition}"
                    ),
                    vec![
                        rows.iter().map(|&i| i as i32 + 1).collect::<Vec<i32>>().into(),
                        rows.iter().map(|&i| texts[i].clone()).collect::<Vec<String>>().into(),
                        rows.iter().map(|&i| band_literal(&bands[i])).collect::<Vec<String>>().into(),
                        rows.iter()
                            .map(|&i| short[i].as_ref().map(|s| band_literal(&s.bands)))
                            .collect::<Vec<Option<String>>>()
                            .into(),
                        rows.iter()
                            .map(|&i| keys[i].as_ref().map(|k| band_literal(&k.probe())))
                            .collect::<Vec<Option<String>>>()
                            .into(),
                        cfg.threshold.into(),
                        cfg.containment.into(),
                    ],
                )
            }
        }
    }

    /// The rows among `through` (earlier rows of the batch that the statement let through, in
    /// order) that row `i` is checked against: all of them (SimHash), or those sharing a band,
    /// a short band or a containment key with it (similarity: `by_band` of
    /// [`Probes::add_bands`]), as the indexes offer candidates.
    fn earlier(&self, i: usize, through: &[usize], by_band: &HashMap<i64, Vec<usize>>) -> Vec<usize> {
        match self {
            Probes::SimHash { .. } => through.to_vec(),
            Probes::Similar { .. } => {
                let mut js: Vec<usize> =
                    self.band_keys(i, true).iter().filter_map(|b| by_band.get(b)).flatten().copied().collect();
                js.sort_unstable();
                js.dedup();
                js
            }
        }
    }

    /// Files row `i`, let through, under its band values, short band values and containment
    /// index values (similarity).
    fn add_bands(&self, i: usize, by_band: &mut HashMap<i64, Vec<usize>>) {
        for b in self.band_keys(i, false) {
            by_band.entry(b).or_default().push(i);
        }
    }

    /// Row `i`'s band values, its short band values (bit-inverted: the two kinds never meet
    /// under one key, [`Probes::near`] tests which is shared), and its containment keys as the
    /// index stores them (`probe` false) or as a row looks them up (`probe` true), for `by_band`
    /// (similarity).
    fn band_keys(&self, i: usize, probe: bool) -> Vec<i64> {
        match self {
            Probes::SimHash { .. } => Vec::new(),
            Probes::Similar { bands, short, keys, .. } => {
                let keys = keys[i].as_ref().map(|k| if probe { k.probe() } else { k.entry() }).unwrap_or_default();
                bands[i]
                    .iter()
                    .copied()
                    .chain(short[i].iter().flat_map(|s| &s.bands).map(|&b| !b))
                    .chain(keys)
                    .collect()
            }
        }
    }

    /// The trigger's decision on row `i` against an earlier row `j` of the batch that the
    /// statement let through: the measure when `j` makes `i` a near-duplicate (for similarity,
    /// only a row sharing a band, as the index offers candidates).
    fn near(&self, i: usize, j: usize) -> Option<f64> {
        match self {
            Probes::SimHash { cfg, fps, verified } => {
                let distance = (fps[i]? ^ fps[j]?).count_ones();
                let confirmed = || match (verified, cfg.verify) {
                    (Some(v), Some(verify)) => match (&v.texts[i], &v.texts[j]) {
                        (Some(a), Some(b)) => verify.rule().texts(a, b, &mut crate::minhash::interrupt).is_some(),
                        _ => false,
                    },
                    _ => true,
                };
                (distance <= cfg.k && confirmed()).then_some(f64::from(distance))
            }
            Probes::Similar { cfg, sets, bands, short, keys, .. } => {
                let shares_short = match (&short[i], &short[j]) {
                    (Some(a), Some(b)) => a.bands.iter().any(|x| b.bands.contains(x)),
                    _ => false,
                };
                let shares_key = match (&keys[i], &keys[j]) {
                    (Some(a), Some(b)) => a.meet(b),
                    _ => false,
                };
                let by_band = bands[i].iter().any(|b| bands[j].contains(b));
                if sets[j].is_empty() {
                    return None;
                }
                // As the trigger: each index that offers the pair, with the rules it covers.
                let short_set = |k: usize| short[k].as_ref().map(|s| s.set.clone());
                [(by_band, Via::Band), (shares_key, Via::Key), (shares_short, Via::ShortBand)]
                    .into_iter()
                    .filter(|&(found, _)| found)
                    .find_map(|(_, via)| cfg.similar(&sets[i], &sets[j], via, || (short_set(i), short_set(j))))
                    .map(|m| m.jaccard)
            }
        }
    }
}

/// What `check` reads of each row's checked value (`values[i]`: the text or adopted
/// fingerprint, None for NULL or a row not to check, which then matches nothing).
///
/// # Safety
/// The datums are of the checked column's type `source_type`.
unsafe fn probes_of<'a>(
    relid: pg_sys::Oid,
    check: &'a Check,
    cols: &Cols,
    values: &[Option<pg_sys::Datum>],
    source_type: pg_sys::Oid,
) -> Probes<'a> {
    // SAFETY: the caller guarantees each datum of `values` is of `source_type`, the checked
    // column's type, as text_of asks (a NULL is None, never read).
    let text = |v: &Option<pg_sys::Datum>| v.and_then(|v| unsafe { text_of(v, source_type) });
    match check {
        Check::SimHash(cfg) => {
            let texts: Option<Vec<Option<String>>> = cols.text.then(|| values.iter().map(text).collect());
            let fps = match &texts {
                Some(texts) => texts.iter().map(|t| t.as_deref().and_then(crate::fingerprint::simhash)).collect(),
                None => values.iter().map(|v| v.map(|v| v.value() as i64)).collect(),
            };
            let verified = match (texts, cfg.verify) {
                (Some(texts), Some(_)) => Some(Verified { texts, column: column_name(relid, cols.source) }),
                _ => None,
            };
            Probes::SimHash { cfg, fps, verified }
        }
        Check::Similar(cfg) => {
            let texts: Vec<String> = values.iter().map(|v| text(v).unwrap_or_default()).collect();
            let sets: Vec<Vec<u64>> = texts.iter().map(|t| char_set(t, cfg.k)).collect();
            let bands = sets
                .iter()
                .map(|s| if s.is_empty() { Vec::new() } else { set_bands(s, cfg.bands, cfg.rows) })
                .collect();
            let short = texts
                .iter()
                .zip(&sets)
                .map(|(t, s)| if s.is_empty() { None } else { text_short(t, cfg.threshold) })
                .collect();
            let keys = sets.iter().map(|s| if s.is_empty() { None } else { cfg.keys(s) }).collect();
            Probes::Similar { cfg, texts, sets, bands, short, keys }
        }
    }
}

/// The stored near-duplicates of a batch's rows, by one query over every shard ([`Probes::search`]:
/// one round trip to each shard), as whoever calls it (the owner): per row, the key and measure
/// of each match. None is asked for when no row has anything to match.
fn stored_matches(probes: &Probes, ext_schema: &str, table: &str, source: &str, key: &str) -> Vec<Vec<(i64, f64)>> {
    let n = match probes {
        Probes::SimHash { fps, .. } => fps.len(),
        Probes::Similar { sets, .. } => sets.len(),
    };
    let mut found: Vec<Vec<(i64, f64)>> = vec![Vec::new(); n];
    if !(0..n).any(|i| probes.has(i)) {
        return found;
    }
    let (sql, args) = probes.search(ext_schema, table, source, key);
    let mut run = || {
        Spi::connect_mut(|client| {
            let what = "searching every shard for near-duplicates";
            for row in client.update(sql.as_str(), None, &args).or_raise(what) {
                let (Some(i), Some(key), Some(measure)) = (
                    row.get::<i64>(1).or_raise(what),
                    row.get::<i64>(2).or_raise(what),
                    row.get::<f64>(3).or_raise(what),
                ) else {
                    continue;
                };
                found[i as usize - 1].push((key, measure));
            }
        })
    };
    match probes {
        Probes::SimHash { .. } => run(),
        Probes::Similar { .. } => on_index(run),
    }
    found
}

/// The checked write of `rows` — datums of `relid`'s row type, filling columns `written`, in
/// the statement's order — into distributed table `relid` (one that is [`batchable`]), with the
/// answers [`write_row`] gives them one after another, in one round of queries:
///
/// 1. what the check reads of every row (its fingerprint, or its shingles and band values); the
///    union of their lock stripes, ascending (the order every writer takes stripes in, so no
///    deadlock; a transaction holds at most [`simdup_core::locks::LOCK_STRIPES`] of them per
///    table, however many rows it writes);
/// 2. one query over every shard for the stored near-duplicates of any of them (`unnest` of
///    the rows joined to the table: one round trip to each shard), after the locks;
/// 3. in Rust, row by row in order: the smallest key among the stored matches and the rows
///    of the batch already let through (all earlier rows in mark mode, the stored ones in
///    skip mode) — reject (the trigger's 23505), skip, or mark;
/// 4. one INSERT … SELECT of the rows kept, as the owner, with the marker set, which Citus
///    sends to each shard once; the rows it stores go to `returned` if given.
///
/// With `on_conflict` (an `ON CONFLICT … DO NOTHING` clause, appended to that INSERT), a row the
/// clause leaves out is no earlier row to the rows after it, as on one node (where the BEFORE
/// trigger checks a row, then the conflict check leaves it out). Which rows it leaves out is
/// known only once they are written (the INSERT returns the keys it stored), so the rows are
/// written in runs: a run ends before a row whose outcome its rows would decide, or that repeats
/// one of their keys, and that row is decided on the rows actually stored.
///
/// # Safety
/// In a transaction, inside pgrx's guard; the datums are of `relid`'s row type.
pub(super) unsafe fn write_batch(
    relid: pg_sys::Oid,
    rows: &[pg_sys::Datum],
    written: &[i32],
    ext_schema: &str,
    on_conflict: Option<&str>,
    returned: Option<&Returned>,
) -> Outcome {
    // SAFETY: the caller guarantees a transaction, pgrx's guard and datums of `relid`'s row type
    // (composite values, read by `field`); open_target opens and locks the relation, which stays
    // open; the user switch and settings are undone by `finish`, or by an error's abort.
    unsafe {
        let Target { rel, name, table, check, cols, mode, nest } = open_target(relid);
        let attnums = columns_written(relid, &name, &cols, written);
        let column = |attnum: i32| column_name(relid, attnum);
        let key_type = pg_sys::get_atttype(relid, cols.key as pg_sys::AttrNumber);
        let source_type = pg_sys::get_atttype(relid, cols.source as pg_sys::AttrNumber);
        let keys: Vec<Option<i64>> =
            rows.iter().map(|&row| field(row, cols.key).map(|v| int_key(v, key_type))).collect();

        // 1. What the check reads of every row, and the stripes of all of them.
        let sources: Vec<Option<pg_sys::Datum>> = rows.iter().map(|&row| field(row, cols.source)).collect();
        let probes = probes_of(relid, &check, &cols, &sources, source_type);
        probes.lock(relid);

        // 2. The stored near-duplicates, from every shard (as the owner: the caller needs no
        // SELECT).
        let may_read_key = crate::access::read(relid, cols.key as pg_sys::AttrNumber) == crate::access::Read::Allowed;
        let (saved_user, saved_context) = become_owner(rel);
        let matches =
            stored_matches(&probes, ext_schema, &table, &column(cols.fp.unwrap_or(cols.source)), &column(cols.key));

        // The write of step 4: rows `run` of the batch, let through with `dup_of`, in one
        // INSERT; returns the rows stored and, with ON CONFLICT, the keys of those stored. Without
        // ON CONFLICT, an INSERT ... SELECT of the rows' array, which Citus sends to each shard
        // once. With it, a multi-row INSERT ... VALUES of one parameter a row, which Citus splits
        // by shard too: its INSERT ... SELECT counts the rows the clause leaves out as written
        // (and SPI then refuses its RETURNING rows).
        let dup_of_type = dup_of_type(relid, &cols);
        let returning = match (on_conflict.is_some(), returned.is_some()) {
            (_, true) => format!(" RETURNING {}::pg_catalog.int8, *", column(cols.key)),
            (true, false) => format!(" RETURNING {}::pg_catalog.int8", column(cols.key)),
            (false, false) => String::new(),
        };
        let statement = |n: usize| match on_conflict {
            None => {
                let (target, mut values) = insert_columns(relid, &attnums, &cols, |c| format!("($1[s.i]).{c}"));
                if let Some(typ) = &dup_of_type {
                    values.push(format!("($2::pg_catalog.int8[])[s.i]::{typ}"));
                }
                array_insert(&table, &target, &values) + &returning
            }
            Some(clause) => {
                let (target, names) = insert_columns(relid, &attnums, &cols, str::to_owned);
                let tuples: Vec<String> = (1..=n)
                    .map(|p| {
                        let mut values: Vec<String> = names.iter().map(|c| format!("(${p}).{c}")).collect();
                        if let Some(typ) = &dup_of_type {
                            values.push(format!("${}::{typ}", n + p));
                        }
                        format!("({})", values.join(", "))
                    })
                    .collect();
                format!("INSERT INTO {table} ({target}) VALUES {}{clause}{returning}", tuples.join(", "))
            }
        };
        let write = |run: &[usize], dup_of: &[Option<i64>]| -> (u64, HashSet<Option<i64>>) {
            let insert = statement(run.len());
            let args: Vec<DatumWithOid> = match on_conflict {
                None => {
                    let run_rows: Vec<pg_sys::Datum> = run.iter().map(|&i| rows[i]).collect();
                    let (array, array_type) = row_array(rel, &run_rows);
                    let mut args = vec![DatumWithOid::new(array, array_type)];
                    if dup_of_type.is_some() {
                        args.push(run.iter().map(|&i| dup_of[i]).collect::<Vec<Option<i64>>>().into());
                    }
                    args
                }
                Some(_) => {
                    let reltype = (*(*rel).rd_rel).reltype;
                    let mut args: Vec<DatumWithOid> =
                        run.iter().map(|&i| DatumWithOid::new(rows[i], reltype)).collect();
                    if dup_of_type.is_some() {
                        args.extend(run.iter().map(|&i| DatumWithOid::from(dup_of[i])));
                    }
                    args
                }
            };
            // The rows stored come back from the shards in no order: put in the batch's by key.
            let mut position: HashMap<Option<i64>, std::collections::VecDeque<usize>> = HashMap::new();
            for (p, &i) in run.iter().enumerate() {
                position.entry(keys[i]).or_default().push_back(p);
            }
            let rank = |key: Option<i64>| position.get_mut(&key).and_then(|p| p.pop_front()).unwrap_or(usize::MAX);
            write_as_checked(&table, &insert, &args, !returning.is_empty(), returned, rank)
        };

        // 3. The decisions, in the statement's order: the smallest key among each row's stored
        // matches and the batch's earlier rows let through; then 4., the writes. Without ON
        // CONFLICT every row let through is stored: one INSERT of them all. With it, a row the
        // clause leaves out must be no earlier row to the rows after it, and which ones it leaves
        // out is known once they are written: the rows let through wait (`pending`) until a row
        // would be decided otherwise without them, or repeats one's key; then they are written
        // (one INSERT), the rows the clause left out dropped, and that row decided again.
        #[derive(Clone, Copy, PartialEq)]
        enum Fate {
            Out,
            Pending,
            Stored,
        }
        let mut fate = vec![Fate::Out; rows.len()];
        let mut through: Vec<usize> = Vec::new(); // pending or stored, in order
        let mut pending: Vec<usize> = Vec::new();
        let mut by_band: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut dup_of: Vec<Option<i64>> = vec![None; rows.len()];
        let mut duplicate = None;
        let mut stored = 0u64;
        let mut flush = |pending: &mut Vec<usize>, fate: &mut Vec<Fate>, dup_of: &[Option<i64>]| {
            if pending.is_empty() {
                return;
            }
            let (n, inserted) = write(pending, dup_of);
            stored += n;
            for &i in pending.iter() {
                fate[i] = if on_conflict.is_none() || inserted.contains(&keys[i]) { Fate::Stored } else { Fate::Out };
            }
            pending.clear();
        };
        for i in 0..rows.len() {
            // The smallest key near row i among the stored rows and the batch's earlier rows
            // let through (those stored only, with `settled`).
            let nearest = |fate: &[Fate], settled: bool| {
                if !probes.has(i) {
                    return None; // NULL, featureless or shingle-less text: never a duplicate
                }
                let mut found = matches[i].iter().copied().min_by_key(|&(key, _)| key);
                for j in probes.earlier(i, &through, &by_band) {
                    let (Some(key), true) =
                        (keys[j], fate[j] == Fate::Stored || (!settled && fate[j] == Fate::Pending))
                    else {
                        continue;
                    };
                    if found.is_some_and(|(k, _)| k <= key) {
                        continue;
                    }
                    if let Some(measure) = probes.near(i, j) {
                        found = Some((key, measure));
                    }
                }
                found
            };
            let mut found = nearest(&fate, false);
            let waits = on_conflict.is_some()
                && !pending.is_empty()
                && (found.map(|f| f.0) != nearest(&fate, true).map(|f| f.0)
                    || pending.iter().any(|&j| keys[j] == keys[i]));
            if waits {
                flush(&mut pending, &mut fate, &dup_of);
                found = nearest(&fate, false);
            }
            match (found, mode) {
                (Some((key, measure)), Mode::Reject) => {
                    let key = key.to_string();
                    duplicate = Some(check.duplicate(rel, &name, &key, measure, may_read_key));
                    break;
                }
                (Some(_), Mode::Skip) => {}
                (found, _) => {
                    dup_of[i] = found.map(|(key, _)| key);
                    fate[i] = Fate::Pending;
                    pending.push(i);
                    through.push(i);
                    probes.add_bands(i, &mut by_band);
                }
            }
        }
        if duplicate.is_none() {
            flush(&mut pending, &mut fate, &dup_of);
        }
        let result = match duplicate {
            Some(error) => Outcome::Duplicate(error),
            None => Outcome::Stored(stored),
        };
        finish(rel, nest, (saved_user, saved_context), result)
    }
}

/// What every checked write into a table reads first: the relation (opened here, kept open and
/// locked to the end of the transaction), its names, its dedup trigger's check and columns.
struct Target {
    rel: pg_sys::Relation,
    /// The table's name, unqualified (for messages).
    name: String,
    /// Schema-qualified and quoted: in statements, in messages, and as the marker the shards'
    /// triggers compare with (`format('%I.%I')` there).
    table: String,
    check: Check,
    cols: Cols,
    mode: Mode,
    /// The GUC nest level of the write's own settings (`search_path` among them), undone by
    /// [`finish`].
    nest: i32,
}

/// Opens `relid` for a checked write, with the checks every checked write makes: a Citus
/// distributed table, this node its coordinator, READ COMMITTED, no row security, a dedup
/// trigger.
///
/// # Safety
/// In a transaction, inside pgrx's guard.
unsafe fn open_target(relid: pg_sys::Oid) -> Target {
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
        let distributed = super::citus::is_distributed(relid) && super::citus::is_coordinator();
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
unsafe fn finish(rel: pg_sys::Relation, nest: i32, saved: (pg_sys::Oid, i32), result: Outcome) -> Outcome {
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
unsafe fn columns_written(relid: pg_sys::Oid, target_name: &str, cols: &Cols, given: &[i32]) -> Vec<i32> {
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
unsafe fn become_owner(rel: pg_sys::Relation) -> (pg_sys::Oid, i32) {
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
fn column_name(relid: pg_sys::Oid, attnum: i32) -> String {
    // SAFETY: a catalog lookup of an existing column (the callers read it from the catalog).
    let name = unsafe { CStr::from_ptr(pg_sys::get_attname(relid, attnum as pg_sys::AttrNumber, false)) };
    quote_identifier(name.to_string_lossy())
}

/// The target list of a checked write's INSERT — the quoted names of `attnums`, then `dup_of` in
/// mark mode — and the value expression `value(name)` of each column (the caller adds
/// `dup_of`'s, of [`dup_of_type`]).
fn insert_columns(
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
fn dup_of_type(relid: pg_sys::Oid, cols: &Cols) -> Option<String> {
    cols.dup_of.map(|attnum| {
        // SAFETY: a catalog lookup of a checked column of the table.
        let typ =
            unsafe { CStr::from_ptr(pg_sys::format_type_be(pg_sys::get_atttype(relid, attnum as pg_sys::AttrNumber))) };
        typ.to_string_lossy().into_owned()
    })
}

/// `INSERT INTO table (target) SELECT values FROM` the subscripts of the row array `$1`, in its
/// order: the statement of a batch of rows ([`row_array`]).
pub(super) fn array_insert(table: &str, target: &str, values: &[String]) -> String {
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
pub(super) unsafe fn row_array(rel: pg_sys::Relation, rows: &[pg_sys::Datum]) -> (pg_sys::Datum, pg_sys::Oid) {
    // SAFETY: the caller guarantees `rel` is open (rd_rel gives its row type) and the datums are
    // of that type, as datum_array asks.
    unsafe { datum_array(rows, (*(*rel).rd_rel).reltype) }
}

/// The array of `datums` of type `typ` (no NULLs), allocated in the current memory context, and
/// its array type.
///
/// # Safety
/// The datums are of type `typ`.
unsafe fn datum_array(datums: &[pg_sys::Datum], typ: pg_sys::Oid) -> (pg_sys::Datum, pg_sys::Oid) {
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
fn write_as_checked(
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
pub(super) fn concurrent_update(detail: String) -> ! {
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
fn as_checked<T>(table: &str, write: impl FnOnce() -> T) -> T {
    set_local("citus.propagate_set_commands", "local");
    mark(table);
    let result = write();
    mark("");
    result
}

/// Sets a setting until the end of the current GUC nest level (`GUC_ACTION_SAVE`, as a
/// function's SET clause does).
pub(super) fn set_local(name: &str, value: &str) {
    let (name, value) = (CString::new(name).unwrap_or_default(), CString::new(value).unwrap_or_default());
    // SAFETY: set_config_option with valid C strings, as a function's SET clause does.
    unsafe {
        pg_sys::set_config_option(
            name.as_ptr(),
            value.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
    }
}

/// `SET LOCAL simdup.checked_write = marker`, propagated to every worker of this transaction.
fn mark(marker: &str) {
    set_on_workers(&[("simdup.checked_write", marker)]);
}

/// `SET LOCAL name = value` for each of `settings`, from inside one DO block, which Citus counts
/// as a transaction block and so propagates to every worker of this transaction (with
/// `citus.propagate_set_commands = 'local'`), to its end; on the coordinator each lasts to the
/// end of the checked write's GUC nest level if the write set it there first ([`set_local`]),
/// else to the end of the transaction too.
fn set_on_workers(settings: &[(&str, &str)]) {
    let sets: String = settings
        .iter()
        .map(|(name, value)| format!("SET LOCAL {name} = {}; ", pgrx::spi::quote_literal(value)))
        .collect();
    // The DO block's body quoted as a literal: no dollar tag a value could contain.
    let body = pgrx::spi::quote_literal(format!("BEGIN {sets}END"));
    Spi::run(&format!("DO {body}")).or_raise("setting a parameter on the workers");
}

/// The settings by which the coordinator writes a value as text, and what the checked write
/// pins them to there ([`pin_transfer`]). Values cross to the workers as text: Citus writes a
/// constant or a parameter with the coordinator's output function (a constant as a literal,
/// quoted by the coordinator's `standard_conforming_strings`) and a worker reads it with its
/// own settings. With these, the text is one every worker reads back as the same value whatever
/// its own DateStyle, IntervalStyle or float and bytea settings: ISO dates and times (with the
/// offset of a `timestamptz`), intervals with a sign on every field, floats with every digit, hex
/// bytea; only `standard_conforming_strings` must agree, and is pinned on the workers too. The
/// workers' rows come back in binary (Citus's binary protocol, on), not as text of the workers'
/// settings.
const TRANSFER: [(&str, &str); 6] = [
    ("standard_conforming_strings", "on"),
    ("DateStyle", "ISO, MDY"),
    ("IntervalStyle", "postgres"),
    ("extra_float_digits", "3"),
    ("bytea_output", "hex"),
    ("citus.enable_binary_protocol", "on"),
];

/// Pins the settings of [`TRANSFER`] on the coordinator, to the end of the current GUC nest
/// level: while a statement whose values Citus sends to the workers is planned (Citus writes
/// most of its shard queries then).
pub(super) fn pin_coordinator() {
    for (name, value) in TRANSFER {
        set_local(name, value);
    }
}

/// Pins the settings of a value's transfer for the statements of a checked write (or for the
/// query of a checked statement's rows that reads Citus tables): [`TRANSFER`] on the
/// coordinator, to the end of the current GUC nest level, and on the workers of this
/// transaction `standard_conforming_strings = on` (how they read the literals) and `TimeZone` =
/// the writer's (so that what a shard computes from a time, `timestamptz` to `timestamp` or
/// `date` say, is what the writer's session computes), with `SET LOCAL`, which Citus sends them
/// and which lasts there to the end of the transaction: every checked write sets them again
/// before its statements, whatever ran in between. The coordinator keeps the writer's TimeZone.
pub(super) fn pin_transfer() {
    let time_zone = current_setting(c"TimeZone");
    pin_coordinator();
    // Set at this nest level first, so that on the coordinator the DO block's SET LOCAL of it
    // ends with the nest level (as the pins above), not with the transaction.
    set_local("TimeZone", &time_zone);
    set_local("citus.propagate_set_commands", "local");
    set_on_workers(&[("standard_conforming_strings", "on"), ("TimeZone", time_zone.as_str())]);
}

/// The current value of built-in setting `name`.
fn current_setting(name: &CStr) -> String {
    // SAFETY: reads a built-in setting by name (missing_ok false: it exists).
    unsafe { CStr::from_ptr(pg_sys::GetConfigOption(name.as_ptr(), false, false)).to_string_lossy().into_owned() }
}

/// Runs the query `f` makes over every shard with `enable_seqscan = off` on the shards, then
/// puts back the caller's value there. The similarity search joins the rows to the table on its
/// index's `&&`: a shard's planner that believes it empty (statistics from before this
/// transaction's own rows, after a TRUNCATE, say) would otherwise scan it and sign every row.
fn on_index<T>(f: impl FnOnce() -> T) -> T {
    let before = current_setting(c"enable_seqscan");
    set_local("citus.propagate_set_commands", "local");
    set_on_workers(&[("enable_seqscan", "off")]);
    let result = f();
    set_on_workers(&[("enable_seqscan", before.as_str())]);
    result
}

/// `_simdup_checked_insert(tbl regclass, row jsonb) RETURNS bigint`, declared in sql/dedup.sql.
#[unsafe(no_mangle)]
#[doc(hidden)]
pub extern "C" fn pg_finfo_simdup_checked_insert() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

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
