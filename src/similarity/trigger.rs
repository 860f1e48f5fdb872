//! Dedup by verified similarity: the row trigger `simdup_similar_dedup_trigger` that
//! `simdup_enable_similar(..., on_duplicate => 'reject' | 'skip' | 'mark')` installs as
//!
//! ```sql
//! CREATE TRIGGER simdup_dedup_similar BEFORE INSERT OR UPDATE ON tbl FOR EACH ROW
//!     EXECUTE FUNCTION simdup_similar_dedup_trigger(mode, threshold, k, bands, rows, text_column, key_column);
//! ```
//!
//! For each new row (or each UPDATE that changes the text):
//!
//! 1. the character k-shingle set of the text (`shingles(text, k)`; none: never a duplicate)
//!    and its LSH band values, computed as the similarity index's expression
//!    `_simdup_similar_bands(text, k, bands, rows)` computes them (the signature is remembered,
//!    so that the row's index entry does not compute it again); for a short text (at most 100
//!    distinct 3-shingles) also its short bands, as the short-text index's expression
//!    `_simdup_similar_short_bands(text, threshold)` computes them; with containment, its
//!    containment keys ([`simdup_core::similarity::Keys`], the containment index's
//!    `_simdup_similar_keys(text, k, containment)`);
//! 2. its lock stripes ([`simdup_core::locks::similar_values`]: of those band values, of the
//!    prefix filters of a small text's k-shingle set and a short text's 3-shingle set, and of
//!    its containment keys), transaction-scoped, ascending, under simdup's lock tags
//!    ([`crate::dedup::lookup::similar_stripes`]), held in the row's check window ([`crate::dedup::window`]);
//! 3. the candidates: the rows sharing a band value, read from the similarity index (and those
//!    sharing a short band, from the short-text index, and those whose containment keys meet
//!    its own, from the containment index) with a dirty snapshot
//!    ([`crate::similarity::gin::Candidates`]); when they are more than
//!    `simdup.similar_verify_limit` rows (64 by default), only those sharing the most index
//!    values with the new row, the smaller keys first among equals
//!    ([`simdup_core::similarity::candidates`]);
//! 4. each candidate verified exactly by the one decision [`simdup_core::similarity::Rule::judge`],
//!    with the rules its index covers: `jaccard(text, candidate, k) >= threshold` (the value the
//!    SQL function `jaccard()` computes) for a shared band; containment ≥ `containment => c`
//!    for a shared band between texts of at least 50 shingles, or for meeting containment keys;
//!    and for any candidate, when the shorter text has fewer than 50 characters and both are
//!    short, `jaccard(text, candidate, 3) >= threshold`;
//! 5. among the verified ones, the one with the smallest key ([`crate::dedup::lookup::smallest_key`],
//!    which verifies only candidates whose key would be the smallest so far, and waits for a
//!    verified candidate another transaction is writing), and the outcome: reject (23505,
//!    constraint `simdup_dedup_similar`), skip, or mark (`dup_of`).
//!
//! Why this is safe under concurrency (docs/dedup.md, "Dedup by similarity"): two rows the
//! trigger could judge duplicates are offered by one of the indexes and near-duplicates by a rule
//! that index covers (step 4), and [`simdup_core::locks::similar_values`] gives every such pair
//! a stripe one of them takes exclusively (band values, prefix filters, a tiny text's
//! containment prefix against the other's sketch). So one transaction waits for the other and
//! then sees its row with the dirty snapshot. The argument is the SimHash trigger's, with "a
//! shared stripe" for "a shared piece".
//!
//! On a shard of a Citus distributed table the trigger lets through only `simdup_insert`'s
//! checked writes (src/citus/checked runs the same check across shards), as the SimHash
//! trigger does.
//!
//! What the trigger promises is therefore: no two stored rows that share a band value and are
//! near-duplicates by the rules a band covers, share containment keys and are near-duplicates by
//! containment or the short-text rule, or share a short band value and are near-duplicates by the
//! short-text rule. A pair at the threshold shares a band with the probability the index's
//! S-curve gives (≥ the recall it was made for, 0.99 by default, more above the threshold), and a
//! short-text pair at the threshold a short band with probability ≥ 0.99; a tiny text's wrapped
//! copy meets its keys as often as docs/quality.md measures; MinHash and the keys are
//! deterministic, so the same rows are found every time. With the verification limit
//! (`simdup.similar_verify_limit`, step 3), a near-duplicate is found unless at least that many
//! other candidates share as many index values with the new row (docs/dedup.md, "the
//! verification limit"); the lock stripes still cover every pair, the limit only chooses which
//! candidates are verified.

use std::collections::HashMap;
use std::ffi::c_int;

use pgrx::pg_sys;
use pgrx::prelude::*;

use simdup_core::similarity::minhash as mh;
use simdup_core::similarity::{Keys, Via};

use crate::catalog::relation_name;
use crate::errors::not_in_prerequisite_state;
use crate::similarity::minhash::{char_set, counted_overlap, pair, text_bands, text_short};

use crate::dedup::event::{before_row_event, decide, no_duplicate, run, Outcome, RowEvent};
use crate::dedup::lookup::{similar_stripes, smallest_key, KeyOrder};
use crate::dedup::placement::{self, Gate};
use crate::dedup::tuple::{text_of, text_value};
use crate::dedup::window;

use super::config::{check_columns, similar_error, SimilarConfig, INSTALLED_BY};
use crate::similarity::gin::{count_shared, visit_rows, Candidates};
use simdup_core::similarity::candidates::Shared;

/// The similarity index the trigger reads: the oldest valid GIN index of `rel` on
/// `_simdup_similar_bands(text_column, k, bands, rows)` with the trigger's k, bands and rows;
/// 55000 when there is none (dropped since `simdup_enable_similar`).
///
/// # Safety
/// `rel` is an open relation, `text` one of its columns.
unsafe fn similarity_index(rel: pg_sys::Relation, cfg: &SimilarConfig, text: c_int) -> pg_sys::Oid {
    let kind = IndexKind::Bands { k: cfg.k, bands: cfg.bands, rows: cfg.rows };
    let (k, bands, rows) = (cfg.k, cfg.bands, cfg.rows);
    let what = format!("similarity index on column \"{}\" with k = {k}, {bands} bands of {rows} rows", cfg.text_column);
    // SAFETY: the caller's.
    unsafe {
        required_index(rel, text, kind, &what, "its candidates", || {
            crate::similarity::search::similarity_indexes(rel)
                .into_iter()
                .find(|ix| ix.k as usize == k && ix.bands == bands && ix.rows == rows && on_column(ix.body, text))
                .map(|ix| ix.oid)
        })
    }
}

/// The short-text index the trigger reads for its short-text rule: the oldest valid GIN index
/// of `rel` on `_simdup_similar_short_bands(text_column, threshold)` with the trigger's
/// threshold; 55000 when there is none.
///
/// # Safety
/// As [`similarity_index`].
unsafe fn short_index(rel: pg_sys::Relation, cfg: &SimilarConfig, text: c_int) -> pg_sys::Oid {
    let kind = IndexKind::Short { threshold: cfg.threshold.to_bits() };
    let what = format!("short-text index on column \"{}\" with threshold {}", cfg.text_column, cfg.threshold);
    // SAFETY: the caller's.
    unsafe {
        required_index(rel, text, kind, &what, "the candidates of short texts", || {
            crate::similarity::search::short_indexes(rel)
                .into_iter()
                .find(|ix| ix.threshold == cfg.threshold && on_column(ix.body, text))
                .map(|ix| ix.oid)
        })
    }
}

/// The containment index the trigger reads for its containment rule: the oldest valid GIN
/// index of `rel` on `_simdup_similar_keys(text_column, k, containment)` with the trigger's k
/// and containment; 55000 when there is none.
///
/// # Safety
/// As [`similarity_index`].
unsafe fn key_index(rel: pg_sys::Relation, cfg: &SimilarConfig, text: c_int, containment: f64) -> pg_sys::Oid {
    let kind = IndexKind::Keys { k: cfg.k, containment: containment.to_bits() };
    let what =
        format!("containment index on column \"{}\" with k = {} and containment {containment}", cfg.text_column, cfg.k);
    // SAFETY: the caller's.
    unsafe {
        required_index(rel, text, kind, &what, "the candidates of its containment rule", || {
            crate::similarity::search::key_indexes(rel)
                .into_iter()
                .find(|ix| ix.k as usize == cfg.k && ix.containment == containment && on_column(ix.body, text))
                .map(|ix| ix.oid)
        })
    }
}

/// One of the trigger's indexes ([`cached_index`]), or 55000: `table "..." has no {what}`, with
/// the hint that the trigger finds `finds` through it.
///
/// # Safety
/// As [`similarity_index`].
unsafe fn required_index(
    rel: pg_sys::Relation,
    text: c_int,
    kind: IndexKind,
    what: &str,
    finds: &str,
    find: impl FnOnce() -> Option<pg_sys::Oid>,
) -> pg_sys::Oid {
    // SAFETY: the caller guarantees an open relation.
    unsafe { cached_index(rel, text, kind, find) }.unwrap_or_else(|| {
        not_in_prerequisite_state(
            // SAFETY: `rel` is the caller's open relation, whose name the relcache entry holds.
            format!("table \"{}\" has no {what}", unsafe { relation_name(rel) }),
            &format!(
                "The similarity dedup trigger finds {finds} through it: call simdup_disable_similar(table) and simdup_enable_similar again."
            ),
        )
    })
}

/// Whether an index's text expression is column `text` (through binary-compatible casts).
///
/// # Safety
/// `node` is a valid expression node or NULL.
unsafe fn on_column(mut node: *mut pg_sys::Node, text: c_int) -> bool {
    // SAFETY: node tags say which struct a node is.
    unsafe {
        while !node.is_null() && (*node).type_ == pg_sys::NodeTag::T_RelabelType {
            node = (*(node as *mut pg_sys::RelabelType)).arg as *mut pg_sys::Node;
        }
        !node.is_null()
            && (*node).type_ == pg_sys::NodeTag::T_Var
            && c_int::from((*(node as *mut pg_sys::Var)).varattno) == text
    }
}

/// Which of the trigger's indexes: the similarity index of k, bands and rows, the short-text
/// index of a threshold (its bits), or the containment index of k and a containment (its bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum IndexKind {
    Bands { k: usize, bands: usize, rows: usize },
    Short { threshold: u64 },
    Keys { k: usize, containment: u64 },
}

/// One of the trigger's indexes of a table, by (table, text column, kind).
type IndexKey = (pg_sys::Oid, c_int, IndexKind);

thread_local! {
    /// [`cached_index`] answers of this backend; a table's entries are dropped when its
    /// relcache entry is invalidated, which PostgreSQL does whenever an index of the table is
    /// created, dropped or rebuilt, the table is altered, and at the abort of a transaction that
    /// did any of these. (A missing index is not remembered: it raises an error each time.)
    static INDEX_CACHE: std::cell::RefCell<Option<HashMap<IndexKey, pg_sys::Oid>>> = const { std::cell::RefCell::new(None) };
}

/// The index `find` reads from the catalog, remembered by (table, column, kind).
///
/// # Safety
/// `rel` is an open relation.
unsafe fn cached_index(
    rel: pg_sys::Relation,
    text: c_int,
    kind: IndexKind,
    find: impl FnOnce() -> Option<pg_sys::Oid>,
) -> Option<pg_sys::Oid> {
    // SAFETY: the caller guarantees an open relation.
    let key = (unsafe { (*rel).rd_id }, text, kind);
    if let Some(oid) = INDEX_CACHE.with(|c| c.borrow().as_ref().and_then(|m| m.get(&key).copied())) {
        return Some(oid);
    }
    let oid = find()?;
    INDEX_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            // SAFETY: registering a callback for the backend's lifetime; `forget_index` only
            // touches this thread-local map.
            unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(forget_index), pg_sys::Datum::from(0)) };
        }
        c.get_or_insert_with(HashMap::new).insert(key, oid);
    });
    Some(oid)
}

/// Relcache invalidation: forget `relid`'s entries (all for InvalidOid).
#[pg_guard]
unsafe extern "C-unwind" fn forget_index(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    INDEX_CACHE.with(|c| {
        if let Some(map) = c.borrow_mut().as_mut() {
            map.retain(|&(r, ..), _| relid != pg_sys::InvalidOid && r != relid);
        }
    });
}

/// The trigger's work, inside pgrx's guard (errors and panics become PostgreSQL errors).
///
/// # Safety
/// Called by [`simdup_similar_dedup_trigger`] with the function manager's `fcinfo`.
#[pg_guard]
unsafe extern "C-unwind" fn fire(fcinfo: pg_sys::FunctionCallInfo, outcome: *mut Option<Outcome>) {
    // SAFETY: before_row_event checks the call; the trigger's relation is open and its tuples
    // valid for the call; the candidates' slots are valid inside the visit.
    unsafe {
        let RowEvent { rel, new, old, is_update, args } =
            before_row_event(fcinfo, "simdup_similar_dedup_trigger", INSTALLED_BY);
        // The statement's previous row is written: its check window closes (src/dedup/window.rs).
        window::close_previous();
        let cfg = SimilarConfig::parse(&args);
        let tupdesc = (*rel).rd_att;
        let unchanged = pg_sys::Datum::from(new);
        let cols = check_columns(rel, &cfg);

        let text = text_value(new, tupdesc, cols.text);
        if is_update && text == text_value(old, tupdesc, cols.text) {
            *outcome = Some(Outcome::Row(unchanged));
            return;
        }
        // One part of a distributed table holds part of the rows: only the writes its
        // distribution layer checked pass (src/dedup/placement.rs; src/citus/shard.rs).
        let shard = match placement::gate(rel) {
            Gate::Pass => {
                *outcome = Some(Outcome::Row(unchanged));
                return;
            }
            Gate::Part(table) => Some(table),
            Gate::Whole => None,
        };
        let text = text.unwrap_or_default();
        let set = char_set(&text, cfg.k);
        if set.is_empty() {
            // Text without shingles: similar to nothing.
            *outcome = Some(no_duplicate(rel, new, cols.dup_of));
            return;
        }
        let bands = text_bands(&text, cfg.k, &set, cfg.bands, cfg.rows);
        // A short text is also a candidate of the short-text rule: its 3-shingle bands. The
        // stripes: of the bands, or of the prefix filters of small and short texts
        // (simdup_core::locks, docs/dedup.md).
        let short = text_short(&text, cfg.threshold);
        let keys = cfg.containment.map(|c| crate::similarity::minhash::text_set_keys(&text, &set, cfg.k, c));
        window::open((*rel).rd_id, similar_stripes(&cfg.stripes(&set, &bands, short.as_ref(), keys.as_ref())));
        let short_bands = short.as_ref().map(|s| s.bands.as_slice());
        let index = similarity_index(rel, &cfg, cols.text);
        let short_index = short_bands.as_ref().map(|_| short_index(rel, &cfg, cols.text));
        let key_index = cfg.containment.map(|c| key_index(rel, &cfg, cols.text, c));
        let probe = keys.as_ref().map(Keys::probe);
        let text_type = pg_sys::get_atttype((*rel).rd_id, cols.text as pg_sys::AttrNumber);
        let exclude = is_update.then(|| (*old).t_self);
        // A candidate's text, when it is one: a row from a lossy bitmap page may share no band
        // value (or key), so there the sharing is tested again (the decision is the same
        // whatever the bitmap's memory). Each candidate is judged by the rules its index covers
        // (`via`: simdup_core::similarity::Rule::judge), since the lock stripes cover rule 1 only
        // between rows sharing a band, and rule 2 between rows sharing a band or a key.
        // A candidate that needs no recheck is counted against the new row's set in hash
        // tables (mh::OverlapCounter, built at the first candidate), without sorting its own
        // set: the same overlap.
        let counter = std::cell::RefCell::new(None::<mh::OverlapCounter>);
        let candidate = |slot: *mut pg_sys::TupleTableSlot, recheck: Option<&Shares>, via: Via| {
            let mut isnull = false;
            let datum = pg_sys::slot_getattr(slot, cols.text, &mut isnull);
            let other = (!isnull).then(|| text_of(datum, text_type)).flatten()?;
            let overlap = match recheck {
                None => {
                    let mut counter = counter.borrow_mut();
                    counted_overlap(counter.get_or_insert_with(|| mh::OverlapCounter::new(&set)), &other, cfg.k)
                }
                Some(shares) => {
                    let other_set = char_set(&other, cfg.k);
                    if other_set.is_empty() || !shares(&other, &other_set) {
                        return None;
                    }
                    mh::Overlap::of(&set, &other_set)
                }
            };
            // The new row's 3-shingle set is the one its short bands came from.
            let new_short = Some(short.as_ref().map(|s| s.set.as_slice()));
            cfg.rule().judge_overlap(&overlap, via, &mut pair(&text, &other).with_short(new_short, None))
        };
        let shares_band = |_: &str, other_set: &[u64]| cfg.shares_band(&bands, other_set);
        let shares_short_band = |other: &str, _: &[u64]| cfg.shares_short_band(short_bands, other);
        let shares_key = |_: &str, other_set: &[u64]| cfg.shares_key(keys.as_ref(), other_set);
        let sources: [Source; 3] = [
            (Some((index, bands.as_slice())), &shares_band, Via::Band),
            (short_index.zip(short_bands), &shares_short_band, Via::ShortBand),
            (key_index.zip(probe.as_deref()), &shares_key, Via::Key),
        ];
        let limit = crate::gucs::similar_verify_limit();
        let found = smallest_key(rel, cols.key, exclude, |snapshot, visit| {
            let mut visit_all = |rows: &Candidates, shares: &Shares, via: Via| {
                rows.visit(rel, snapshot, |slot, recheck| {
                    visit(slot, &mut || candidate(slot, recheck.then_some(shares), via))
                })
            };
            if limit == 0 {
                // Every offered row, one index at a time (one bitmap in memory at a time).
                for (source, shares, via) in sources {
                    if let Some((i, values)) = source {
                        visit_all(&Candidates::scan(i, values, snapshot), shares, via);
                    }
                }
                return;
            }
            // The rows each index offers, one bitmap scan each. Past the verification limit,
            // only those sharing the most of the new row's values are verified
            // (simdup_core::similarity::candidates), counted one scan a value; otherwise, or
            // when a bitmap is lossy (the counts would be incomplete), every offered row.
            let offered = sources.map(|(source, ..)| source.map(|(i, values)| Candidates::scan(i, values, snapshot)));
            let only = verify_only(rel, snapshot, cols.key, exclude, limit, &offered, |maps| {
                sources.iter().zip(maps.iter_mut()).all(|((source, ..), shared)| {
                    source.is_none_or(|(i, values)| count_shared(i, values, snapshot, shared))
                })
            });
            if let Some((only, maps)) = only {
                for ((_, _, via), rows) in sources.iter().zip(&maps) {
                    let at = only.iter().copied().filter(|p| rows.contains_key(p));
                    visit_rows(rel, snapshot, at, |_, slot| visit(slot, &mut || candidate(slot, None, *via)));
                }
                return;
            }
            for ((_, shares, via), rows) in sources.iter().zip(&offered) {
                if let Some(rows) = rows {
                    visit_all(rows, shares, *via);
                }
            }
        });
        *outcome = Some(decide(rel, new, cfg.mode, cols.dup_of, cols.key, shard, found, |name, f, may_read| {
            similar_error(rel, &cfg, name, &f.key_text, f.measure.jaccard, Some(f.measure.by), may_read)
        }));
    }
}

/// Whether a stored row (its text and k-shingle set) shares what an index offered it by: the test
/// of a candidate from a lossy bitmap page.
type Shares<'a> = dyn Fn(&str, &[u64]) -> bool + 'a;

/// One of the trigger's indexes as its search reads it: the index and the new row's values to
/// look up (None: the table or the row has no such index values), the test of a lossy page's
/// rows, and the rules its candidates are judged by.
type Source<'a> = (Option<(pg_sys::Oid, &'a [i64])>, &'a Shares<'a>, Via);

/// The positions (ascending) of the candidates to verify, with the rows each index offered,
/// when the indexes offer more rows than `limit` (`simdup.similar_verify_limit`, at least 1):
/// those sharing the most index values with the new row, the smaller keys (column `key`) first among
/// equals ([`simdup_core::similarity::candidates::choose`]), counted by `count` (band,
/// short-band and key maps; false when a bitmap went lossy). Only rows `snapshot` finds are
/// chosen (an index also names dead rows), and not the row at `exclude` (the old version of
/// the row being updated). None: verify every offered row (within the limit, or with a lossy
/// bitmap).
///
/// # Safety
/// `rel` is the trigger's open relation, `key` its key column; `snapshot` is
/// valid for the call.
#[allow(clippy::too_many_arguments)]
unsafe fn verify_only(
    rel: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    key: i32,
    exclude: Option<pg_sys::ItemPointerData>,
    limit: usize,
    offered: &[Option<Candidates>; 3],
    count: impl FnOnce(&mut [Shared; 3]) -> bool,
) -> Option<(Vec<u64>, [Shared; 3])> {
    let rows = offered.iter().flatten().map(Candidates::rows).sum::<Option<usize>>()?;
    if rows <= limit {
        return None;
    }
    let mut maps = [Shared::default(), Shared::default(), Shared::default()];
    if !count(&mut maps) {
        return None;
    }
    // The key's order, looked up only past the limit (not for every row the trigger checks).
    // SAFETY: the caller's relation, and its key column.
    let order = unsafe { KeyOrder::of(rel, key) };
    // The rows of a level that are there, with their keys (copied: the slot is reused).
    let read = |level: &[u64]| {
        let mut there = Vec::with_capacity(level.len());
        // SAFETY: the caller's relation and snapshot; the slot holds a row of `rel` during the
        // visit, whose key `order` reads and copies.
        unsafe {
            visit_rows(rel, snapshot, level.iter().copied(), |at, slot| {
                if exclude.is_some_and(|t| crate::dedup::lookup::same_tid(&t, &(*slot).tts_tid)) {
                    return;
                }
                there.push((at, order.key(slot).map(|k| order.copy(k))));
            });
        }
        there
    };
    // A NULL key (never named) goes last.
    let cmp = |a: &Option<pg_sys::Datum>, b: &Option<pg_sys::Datum>| match (a, b) {
        // SAFETY: keys `order` read from rows of `rel`, of its key's type.
        (Some(a), Some(b)) => unsafe { order.cmp(*a, *b) },
        _ => a.is_none().cmp(&b.is_none()),
    };
    let only = simdup_core::similarity::candidates::choose(&[&maps[0], &maps[1], &maps[2]], limit, read, cmp)?;
    pgrx::debug1!("simdup: {rows} rows offered by the similarity indexes; verifying the {limit} sharing the most values with the new row");
    Some((only, maps))
}

// `RETURNS trigger` function, declared in sql/similar.sql.
crate::fmgr::finfo_v1!(pg_finfo_simdup_similar_dedup_trigger);

/// # Safety
/// Called by the trigger manager.
#[unsafe(no_mangle)]
#[doc(hidden)]
pub unsafe extern "C-unwind" fn simdup_similar_dedup_trigger(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: called by the trigger manager; `fire` is guarded.
    unsafe { run(fcinfo, fire) }
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use super::*;

    /// The verification limit chooses which candidates are verified, and a lossy bitmap turns it
    /// off: 5,000 similar rows of 200 characters, each padded to about 1,950 bytes (about 1,250
    /// heap pages), stored with the smallest key last; key 1 holds the first 150 characters only
    /// (Jaccard about 0.7 with the new rows, fewer shared bands than most). Every candidate
    /// verified (limit 0, or a `work_mem` of 64 kB, whose single-value bitmaps outgrow it) names
    /// key 1; the limit verifies the 64 sharing the most band values, the smaller key among
    /// equals, and names the smallest key among them.
    #[pg_test]
    fn the_verification_limit_and_lossy_bitmaps() {
        Spi::run("CREATE TABLE famt (id int PRIMARY KEY, body text, pad text)").unwrap();
        Spi::run("SELECT simdup_enable_similar('famt', 'body', on_duplicate => 'mark')").unwrap();
        Spi::run("ALTER TABLE famt DISABLE TRIGGER simdup_dedup_similar").unwrap();
        Spi::run(
            "INSERT INTO famt SELECT g, CASE WHEN g = 1 THEN left(b.base, 150) || 'xyz' ELSE b.base || md5(g::text) END, b.pad
             FROM (SELECT (SELECT string_agg(md5(x::text), ' ') FROM generate_series(1, 6) x) AS base,
                          (SELECT string_agg(md5((-x)::text), '') FROM generate_series(1, 53) x) AS pad) b,
                  generate_series(5000, 1, -1) g",
        )
        .unwrap();
        Spi::run("ALTER TABLE famt ENABLE TRIGGER simdup_dedup_similar").unwrap();
        let pages = Spi::get_one::<i64>("SELECT pg_relation_size('famt') / 8192").unwrap().unwrap();
        assert!(pages > 1100, "{pages} pages");
        let dup_of = |id: i32| {
            Spi::run(&format!(
                "INSERT INTO famt SELECT {id}, string_agg(md5(x::text), ' ') || 'new' FROM generate_series(1, 6) x"
            ))
            .unwrap();
            Spi::get_one::<i32>(&format!("SELECT dup_of FROM famt WHERE id = {id}")).unwrap().unwrap()
        };
        Spi::run("SET work_mem = '64MB'").unwrap();
        Spi::run("SET simdup.similar_verify_limit = 0").unwrap();
        assert_eq!(dup_of(100_001), 1);
        Spi::run("SET simdup.similar_verify_limit = 64").unwrap();
        let limited = dup_of(100_002);
        // The 64 other rows sharing the most band values with it, the smaller key first among
        // equals (the texts are neither short nor tiny: the band index offers every candidate).
        let verified = Spi::get_one::<i32>(&format!(
            "SELECT min(id) FROM (
               SELECT f.id FROM famt f, famt n WHERE n.id = 100002 AND f.id <> n.id
               ORDER BY cardinality(ARRAY(SELECT unnest(_simdup_similar_bands(f.body, 5, 35, 3))
                                          INTERSECT SELECT unnest(_simdup_similar_bands(n.body, 5, 35, 3)))) DESC, f.id
               LIMIT {}) s",
            simdup_core::similarity::candidates::DEFAULT_VERIFY_LIMIT
        ))
        .unwrap()
        .unwrap();
        assert_eq!(limited, verified);
        assert!(limited > 1);
        Spi::run("SET work_mem = '64kB'").unwrap();
        assert_eq!(dup_of(100_003), 1);
    }
}
