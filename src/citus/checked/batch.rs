//! The checked write of a batch of rows: one cross-shard query for the batch, its rows decided
//! in order against the stored rows and the batch's earlier rows.

use super::probes::{probes_of, stored_matches};
use super::target::{
    array_insert, become_owner, column_name, columns_written, dup_of_type, finish, insert_columns, open_target,
    row_array, write_as_checked, Target,
};
use super::types::{Outcome, Returned};
use super::update::{field, int_key};
use std::collections::{HashMap, HashSet};

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;

use crate::args::Mode;

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
pub(crate) unsafe fn write_batch(
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
        probes.claim(relid);

        // 2. The stored near-duplicates, from every shard (as the owner: the caller needs no
        // SELECT).
        let may_read_key = crate::access::read(relid, cols.key as pg_sys::AttrNumber) == crate::access::Read::Allowed;
        let (saved_user, saved_context) = become_owner(rel);
        let matches = stored_matches(
            &probes,
            ext_schema,
            &table,
            (&column(cols.fp.unwrap_or(cols.source)), &column(cols.key)),
            None,
            0,
        );

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
                let earlier: Vec<(usize, i64)> = probes
                    .earlier(i, &through, &by_band)
                    .into_iter()
                    .filter(|&j| fate[j] == Fate::Stored || (!settled && fate[j] == Fate::Pending))
                    .filter_map(|j| Some((j, keys[j]?)))
                    .collect();
                // Past the verification limit, only the candidates it chooses among the stored
                // rows and these.
                let chosen = matches.chosen(i, |_| false, earlier.iter().map(|&(j, key)| (key, probes.shared(i, j))));
                let verified = |key: i64| chosen.as_ref().is_none_or(|c| c.contains(&key));
                let mut found =
                    matches.matches[i].iter().copied().filter(|&(key, _)| verified(key)).min_by_key(|&(key, _)| key);
                for (j, key) in earlier {
                    if !verified(key) || found.is_some_and(|(k, _)| k <= key) {
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
