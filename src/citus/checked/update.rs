//! The checked UPDATE of rows whose checked column changes: one row, or a batch, checked against
//! every shard but itself and written by key and ctid.

use super::probes::{probes_of, stored_matches};
use super::search::nearest_stored;
use super::target::{
    as_checked, become_owner, column_name, concurrent_update, datum_array, dup_of_type, finish, open_target, Target,
};
use super::types::{query, Cols, Outcome, Returned};
use std::collections::{HashMap, HashSet};
use std::ffi::CStr;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_identifier;

use crate::args::Mode;
use crate::errors::{Code, Error, OrRaise};

use crate::dedup::config::dedup_config;
use crate::dedup::tuple::{columns, text_of};
use crate::similarity::config::{check_columns, similar_config};

/// The column a table's dedup check reads (the text, or an adopted fingerprint) and its key
/// column, if the table has a dedup trigger: what an UPDATE must assign for the coordinator to
/// check it ([`crate::citus`]).
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn checked_columns(rel: pg_sys::Relation) -> Option<(i32, i32)> {
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
pub(crate) struct OldRow {
    pub(crate) ctid: pg_sys::ItemPointerData,
    pub(crate) key: pg_sys::Datum,
    /// The checked value as text (None: NULL).
    pub(crate) source: Option<String>,
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
pub(crate) unsafe fn update_row(
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
pub(crate) unsafe fn open_update(relid: pg_sys::Oid, written: &[i32]) -> (Target, pg_sys::Oid, pg_sys::Oid) {
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
pub(crate) unsafe fn field(row: pg_sys::Datum, attnum: i32) -> Option<pg_sys::Datum> {
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
pub(crate) enum Write {
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
pub(crate) struct RowWriter {
    /// When every row keeps its text: the columns assigned, as assigned.
    pub(crate) kept: String,
    /// When some row's text changes: for those rows `dup_of` (if the table has it) is `$4`.
    pub(crate) checked: String,
    /// The row, by its key alone: whether it is still there after a write found nothing.
    pub(crate) again: String,
    pub(crate) key_type: pg_sys::Oid,
    pub(crate) reltype: pg_sys::Oid,
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
pub(crate) unsafe fn update_batch(
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
        probes.claim(relid);

        // 2. Their stored near-duplicates, from every shard (as the owner).
        let may_read_key = crate::access::read(relid, cols.key as pg_sys::AttrNumber) == crate::access::Read::Allowed;
        let (saved_user, saved_context) = become_owner(rel);
        let matches = stored_matches(
            &probes,
            ext_schema,
            &table,
            (&column_name(relid, cols.fp.unwrap_or(cols.source)), &column_name(relid, cols.key)),
            Some(&keys),
            changed.iter().filter(|&&c| c).count(),
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
                let earlier = probes.earlier(i, &renewed, &by_band);
                // Past the verification limit, only the candidates it chooses among the stored
                // rows as they are by then (not the row's own, nor those the batch changed) and
                // the batch's rows with their new texts.
                let changed_before = |key: i64| key == keys[i] || replaced.contains(&key);
                let chosen = matches.chosen(i, changed_before, earlier.iter().map(|&j| (keys[j], probes.shared(i, j))));
                let verified = |key: i64| chosen.as_ref().is_none_or(|c| c.contains(&key));
                for &(key, measure) in &matches.matches[i] {
                    if !changed_before(key) && verified(key) && found.is_none_or(|(k, _)| key < k) {
                        found = Some((key, measure));
                    }
                }
                for j in earlier {
                    if verified(keys[j]) && found.is_none_or(|(k, _)| keys[j] < k) {
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
pub(crate) fn int_key(value: pg_sys::Datum, key_type: pg_sys::Oid) -> i64 {
    match key_type {
        pg_sys::INT2OID => i64::from(value.value() as i16),
        pg_sys::INT4OID => i64::from(value.value() as i32),
        _ => value.value() as i64,
    }
}

/// `OPERATOR(schema.=)`: the equality operator of type `typ`'s default btree operator class,
/// named with its schema (42883 when it has none).
pub(crate) fn key_equality(typ: pg_sys::Oid) -> String {
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
pub(crate) unsafe fn batchable(rel: pg_sys::Relation) -> bool {
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
