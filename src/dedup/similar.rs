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
//!    containment keys ([`simdup_core::similar::Keys`], the containment index's
//!    `_simdup_similar_keys(text, k, containment)`);
//! 2. its lock stripes ([`simdup_core::locks::similar_stripes`]: of those band values, of the
//!    prefix filters of a small text's k-shingle set and a short text's 3-shingle set, and of
//!    its containment keys), transaction-scoped, ascending, under simdup's lock tags
//!    ([`super::lookup::similar_stripes`]), held in the row's check window ([`super::window`]);
//! 3. the candidates: the rows sharing a band value, read from the similarity index (and those
//!    sharing a short band, from the short-text index, and those whose containment keys meet
//!    its own, from the containment index) with a dirty snapshot
//!    ([`crate::search::gin::Candidates`]); when they are more than
//!    `simdup.similar_verify_limit` rows, only those sharing the most index values with the new
//!    row ([`simdup_core::candidates`]);
//! 4. each candidate verified exactly by the one decision [`simdup_core::similar::Rule::judge`],
//!    with the rules its index covers: `jaccard(text, candidate, k) >= threshold` (the value the
//!    SQL function `jaccard()` computes) for a shared band; containment ≥ `containment => c`
//!    for a shared band between texts of at least 50 shingles, or for meeting containment keys;
//!    and for any candidate, when the shorter text has fewer than 50 characters and both are
//!    short, `jaccard(text, candidate, 3) >= threshold`;
//! 5. among the verified ones, the one with the smallest key ([`super::lookup::smallest_key`],
//!    which verifies only candidates whose key would be the smallest so far, and waits for a
//!    verified candidate another transaction is writing), and the outcome: reject (23505,
//!    constraint `simdup_dedup_similar`), skip, or mark (`dup_of`).
//!
//! Why this is safe under concurrency (docs/dedup.md, "Dedup by similarity"): two rows the
//! trigger could judge duplicates are offered by one of the indexes and near-duplicates by a rule
//! that index covers (step 4), and [`simdup_core::locks::similar_stripes`] gives every such pair
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
use pgrx::spi::quote_literal;

use simdup_core::locks::SimilarStripes;
use simdup_core::minhash as mh;
use simdup_core::similar::{By, Keys, Match, Via};

use crate::args::{self, Mode};
use crate::catalog::relation_name;
use crate::errors::{not_in_prerequisite_state, Code, ConstraintError, Error};
use crate::minhash::{
    char_set, counted_overlap, set_bands, set_keys, short_set_of, text_bands, text_short, text_short_bands, ShortText,
};

use super::config::trigger_args_named;
use super::config::DUP_OF;
use super::event::{before_row_event, decide, no_duplicate, protocol_error, run, violation, Outcome, RowEvent};
use super::lookup::{similar_stripes, smallest_key};
use super::placement::{self, Gate};
use super::tuple::{column_hinted, refuse_generated, text_of, text_value};
use super::window;
use crate::search::gin::{count_shared, visit_rows, Candidates};
use simdup_core::candidates::Shared;

/// The name of the trigger, and of the constraint a near-duplicate violates.
pub(crate) const TRIGGER_SIMILAR: &str = "simdup_dedup_similar";

const INSTALLED_BY: &str =
    "simdup_similar_dedup_trigger is installed by simdup_enable_similar(tbl, text_column, threshold, on_duplicate => ...)";

const REENABLE: &str = "Columns used by the simdup_dedup_similar trigger were renamed, dropped or changed: call \
                        simdup_disable_similar and simdup_enable_similar again.";

/// The similarity dedup trigger's arguments: written by `simdup_enable_similar` (through
/// `_simdup_similar_dedup_trigger_args`) and parsed by the trigger, by this one struct.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SimilarConfig {
    pub mode: Mode,
    pub threshold: f64,
    /// Character shingle size, bands and rows of the similarity index the trigger reads.
    pub k: usize,
    pub bands: usize,
    pub rows: usize,
    pub text_column: String,
    pub key_column: String,
    /// `containment => c`: a row is also a near-duplicate of one that holds at least this share
    /// of the smaller text's shingles (the trigger's eighth argument; none: Jaccard only).
    pub containment: Option<f64>,
}

impl SimilarConfig {
    /// The one decision of dedup by similarity ([`simdup_core::similar::Rule`]): whether a
    /// stored row with k-shingle set `other_set` makes a row with k-shingle set `set` a
    /// near-duplicate; then their Jaccard similarity and the rule. `via` is the index that
    /// found the stored row (a shared band, short band or containment key): the rules are
    /// applied only to the candidates whose lock stripes cover them
    /// ([`simdup_core::similar::Rule::judge`]). `short_sets` gives the two texts' 3-shingle sets
    /// ([`short_set_of`]), asked only when the short-text rule decides: callers pass the sets
    /// they already hold rather than shingle the texts again.
    pub fn similar(
        &self,
        set: &[u64],
        other_set: &[u64],
        via: Via,
        short_sets: impl FnOnce() -> (Option<Vec<u64>>, Option<Vec<u64>>),
    ) -> Option<Match> {
        self.rule().judge(set, other_set, via, short_sets)
    }

    /// Whether the similarity index offers a stored row with k-shingle set `other_set` to a row
    /// with band values `bands`: they share a band value.
    pub fn shares_band(&self, bands: &[i64], other_set: &[u64]) -> bool {
        set_bands(other_set, self.bands, self.rows).iter().any(|b| bands.contains(b))
    }

    /// Whether the short-text index offers a stored row with text `other` to a row with short
    /// bands `own` (None: not a short text): both are short texts and share a short band.
    pub fn shares_short_band(&self, own: Option<&[i64]>, other: &str) -> bool {
        let own = own.unwrap_or_default();
        text_short_bands(other, self.threshold).is_some_and(|theirs| theirs.iter().any(|b| own.contains(b)))
    }

    /// Whether the containment index offers a stored row with k-shingle set `other_set` to a row
    /// with containment keys `own` (None: the table has no containment rule): the keys meet.
    pub fn shares_key(&self, own: Option<&Keys>, other_set: &[u64]) -> bool {
        own.is_some_and(|own| self.keys(other_set).is_some_and(|theirs| own.meet(&theirs)))
    }

    /// The containment keys of a row with k-shingle set `set`, when the table has the
    /// containment rule.
    pub fn keys(&self, set: &[u64]) -> Option<Keys> {
        self.containment.map(|c| set_keys(set, self.k, c))
    }

    /// The decision's terms ([`SimilarConfig::similar`]'s rule; the trigger also judges a
    /// candidate from its counted overlap with [`simdup_core::similar::Rule::judge_overlap`]).
    pub fn rule(&self) -> simdup_core::similar::Rule {
        simdup_core::similar::Rule { k: self.k, threshold: self.threshold, containment: self.containment }
    }

    /// The lock stripes of a row with k-shingle set `set`, band values `bands`, a short
    /// text's `short`, and its containment keys `keys` ([`SimilarConfig::keys`])
    /// ([`simdup_core::locks::similar_stripes`]).
    pub fn stripes(
        &self,
        set: &[u64],
        bands: &[i64],
        short: Option<&ShortText>,
        keys: Option<&Keys>,
    ) -> SimilarStripes {
        let short_set = short.map_or(&[][..], |s| &s.set);
        simdup_core::locks::similar_stripes(bands, set, self.k, short_set, self.threshold, keys)
    }

    /// The `CREATE TRIGGER` argument list, as SQL literals (the thresholds in the shortest form
    /// that reads back as the same double; the containment only when there is one, so that a
    /// trigger without it keeps 0.3.0's seven arguments).
    pub fn to_args(&self) -> String {
        let mut args = vec![
            self.mode.as_str().to_owned(),
            self.threshold.to_string(),
            self.k.to_string(),
            self.bands.to_string(),
            self.rows.to_string(),
            self.text_column.clone(),
            self.key_column.clone(),
        ];
        args.extend(self.containment.map(|c| c.to_string()));
        args.iter().map(quote_literal).collect::<Vec<_>>().join(", ")
    }

    /// The configuration from the trigger's arguments, checked as `simdup_enable_similar`
    /// checks them: 39P01 for a wrong count, 22023 for a bad value.
    pub fn parse(args: &[String]) -> SimilarConfig {
        let (mode, threshold, k, bands, rows, text, key, containment) = match args {
            [mode, threshold, k, bands, rows, text, key] => (mode, threshold, k, bands, rows, text, key, None),
            [mode, threshold, k, bands, rows, text, key, c] => (mode, threshold, k, bands, rows, text, key, Some(c)),
            _ => protocol_error(
                &format!(
                    "simdup_similar_dedup_trigger needs 7 or 8 arguments (mode, threshold, k, bands, rows, text_column, key_column[, containment]), got {}",
                    args.len()
                ),
                INSTALLED_BY,
            ),
        };
        let int = |s: &str| s.parse::<i32>().unwrap_or(-1);
        let threshold = args::similarity_target(threshold.parse::<f64>().unwrap_or(f64::NAN), 0.5).0;
        let k = args::shingle_size(int(k));
        let (bands, rows) = args::banding(int(bands), int(rows), mh::MAX_PERMUTATIONS);
        SimilarConfig {
            mode: Mode::parse(mode),
            threshold,
            k,
            bands,
            rows,
            text_column: text.clone(),
            key_column: key.clone(),
            containment: containment.map(|c| args::containment_threshold(c.parse::<f64>().unwrap_or(f64::NAN))),
        }
    }
}

/// The trigger's decision ([`simdup_core::similar::Rule::judge`]) on two texts, for the
/// cross-shard check's SQL ([`_simdup_similar_match`]: a pair sharing a band;
/// [`_simdup_similar_short_match`]: one sharing only a short band), with the SQL functions'
/// argument checks: NULL for a NULL argument or text without shingles.
fn judge_texts(
    a: Option<&str>,
    b: Option<&str>,
    k: Option<i32>,
    threshold: Option<f64>,
    containment: Option<f64>,
    via: Via,
) -> Option<f64> {
    let (a, b, k, threshold) = (a?, b?, k?, threshold?);
    let k = args::shingle_size(k);
    let threshold = args::similarity_target(threshold, 0.5).0;
    let containment = containment.map(args::containment_threshold);
    let (sa, sb) = crate::minhash::char_sets(a, b, k)?;
    simdup_core::similar::Rule { k, threshold, containment }
        .judge(&sa, &sb, via, || (short_set_of(a), short_set_of(b)))
        .map(|m| m.jaccard)
}

/// `_simdup_similar_match(a, b, k, threshold, containment)`: the Jaccard similarity of the
/// character k-shingles of `a` and `b` when dedup by similarity counts them as near-duplicates
/// sharing a band ([`judge_texts`]), NULL otherwise or for text without shingles; `containment`
/// NULL: Jaccard only. The condition of the checked write's query on every shard
/// (src/citus/checked). COST 2500: shingling two articles takes about 0.13 ms (measured, as
/// `jaccard`).
#[pg_extern(sql = "")]
fn _simdup_similar_match(
    a: Option<&str>,
    b: Option<&str>,
    k: Option<i32>,
    threshold: Option<f64>,
    containment: Option<f64>,
) -> Option<f64> {
    judge_texts(a, b, k, threshold, containment, Via::Band)
}

/// `_simdup_similar_short_match(a, b, k, threshold)`: the Jaccard similarity of the character
/// k-shingles of `a` and `b` when the short-text rule alone counts them as near-duplicates
/// ([`judge_texts`] for a pair sharing only a short band: the shorter text under 50 characters, both
/// short, their 3-shingle Jaccard ≥ `threshold`), NULL otherwise: the cross-shard check's
/// condition for the rows that share only a short band (src/citus/checked), as the trigger
/// judges them. COST 2500, as `_simdup_similar_match`.
#[pg_extern(sql = "")]
fn _simdup_similar_short_match(
    a: Option<&str>,
    b: Option<&str>,
    k: Option<i32>,
    threshold: Option<f64>,
) -> Option<f64> {
    judge_texts(a, b, k, threshold, None, Via::ShortBand)
}

/// `_simdup_similar_key_match(a, b, k, threshold, containment)`: the Jaccard similarity of the
/// character k-shingles of `a` and `b` when dedup by similarity counts them as near-duplicates
/// whose containment keys meet ([`judge_texts`] for a pair found through the containment index:
/// containment ≥ `containment`, or the short-text rule), NULL otherwise: the cross-shard check's
/// condition for the rows found through the containment index (src/citus/checked). COST 2500,
/// as `_simdup_similar_match`.
#[pg_extern(sql = "")]
fn _simdup_similar_key_match(
    a: Option<&str>,
    b: Option<&str>,
    k: Option<i32>,
    threshold: Option<f64>,
    containment: Option<f64>,
) -> Option<f64> {
    judge_texts(a, b, k, threshold, Some(containment?), Via::Key)
}

/// Checks `simdup_enable_similar`'s dedup arguments and returns the trigger's argument list:
/// 22023 for an unknown mode or a bad threshold, k, bands, rows or containment; 22004 for a
/// NULL argument but the containment (NULL: none).
#[pg_extern(sql = "")]
#[allow(clippy::too_many_arguments)]
fn _simdup_similar_dedup_trigger_args(
    on_duplicate: Option<&str>,
    threshold: Option<f64>,
    k: Option<i32>,
    bands: Option<i32>,
    rows: Option<i32>,
    text_column: Option<&str>,
    key_column: Option<&str>,
    containment: Option<f64>,
) -> String {
    let (Some(on_duplicate), Some(threshold), Some(k), Some(bands), Some(rows), Some(text_column), Some(key_column)) =
        (on_duplicate, threshold, k, bands, rows, text_column, key_column)
    else {
        crate::errors::null_not_allowed(
            "on_duplicate, threshold, k, bands, rows, text_column and key_column must not be NULL",
            "Only the containment may be NULL (no containment rule).",
        )
    };
    let mut args = vec![
        on_duplicate.to_owned(),
        threshold.to_string(),
        k.to_string(),
        bands.to_string(),
        rows.to_string(),
        text_column.to_owned(),
        key_column.to_owned(),
    ];
    args.extend(containment.map(|c| c.to_string()));
    SimilarConfig::parse(&args).to_args()
}

/// The configuration of `rel`'s simdup_dedup_similar trigger, if it has one.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn similar_config(rel: pg_sys::Relation) -> Option<SimilarConfig> {
    // SAFETY: the caller guarantees an open relation.
    unsafe { trigger_args_named(rel, TRIGGER_SIMILAR).map(|args| SimilarConfig::parse(&args)) }
}

/// The columns the trigger reads and writes.
pub(crate) struct Columns {
    pub text: c_int,
    pub key: c_int,
    /// `dup_of`, in mark mode: of the key's type.
    pub dup_of: Option<c_int>,
}

/// The one check of the columns named in the trigger's configuration, on every row and by
/// `simdup_enable_similar`: 42703 for a missing column, 42804 for a text column that is not
/// text or varchar (the similarity index's expression reads it as text) or a `dup_of` not of
/// the key's type.
///
/// # Safety
/// `rel` is an open relation.
pub(crate) unsafe fn check_columns(rel: pg_sys::Relation, cfg: &SimilarConfig) -> Columns {
    // SAFETY: the caller guarantees an open relation; catalog lookups of its columns.
    unsafe {
        let relid = (*rel).rd_id;
        let type_of = |attnum: c_int| pg_sys::get_atttype(relid, attnum as pg_sys::AttrNumber);
        let type_name =
            |typ: pg_sys::Oid| std::ffi::CStr::from_ptr(pg_sys::format_type_be(typ)).to_string_lossy().into_owned();
        let mismatch = |name: &str, attnum: c_int, wanted: &str| -> ! {
            Error::new(
                Code::ERRCODE_DATATYPE_MISMATCH,
                format!(
                    "column \"{name}\" of relation \"{}\" is of type {}, not {wanted}",
                    relation_name(rel),
                    type_name(type_of(attnum))
                ),
            )
            .hint(REENABLE)
            .raise()
        };
        let text = column_hinted(rel, &cfg.text_column, REENABLE);
        let base = pg_sys::getBaseType(type_of(text));
        if base != pg_sys::TEXTOID && base != pg_sys::VARCHAROID {
            mismatch(&cfg.text_column, text, "text or varchar");
        }
        refuse_generated(rel, text, &cfg.text_column, "text", "Enable dedup on the column the text is generated from.");
        let key = column_hinted(rel, &cfg.key_column, REENABLE);
        let dup_of = (cfg.mode == Mode::Mark).then(|| {
            let attnum = column_hinted(rel, DUP_OF, REENABLE);
            if type_of(attnum) != type_of(key) {
                let wanted = format!("{} (the type of key column \"{}\")", type_name(type_of(key)), cfg.key_column);
                mismatch(DUP_OF, attnum, &wanted);
            }
            attnum
        });
        Columns { text, key, dup_of }
    }
}

/// The near-duplicate error of the similarity trigger (23505, constraint simdup_dedup_similar
/// of table `name`): the key it names only to a role that may read it (`may_read_key`), and
/// the rule that matched (`by`; None: not known, the rules that can match below the threshold
/// are named).
pub(crate) fn similar_error(
    rel: pg_sys::Relation,
    cfg: &SimilarConfig,
    name: &str,
    key_text: &str,
    similarity: f64,
    by: Option<By>,
    may_read_key: bool,
) -> ConstraintError {
    let t = cfg.threshold;
    let short = format!("the texts are short and their 3-character shingles have Jaccard similarity at least {t}");
    let rule = match (by, cfg.containment) {
        _ if similarity >= t => format!("threshold {t}"),
        (Some(By::ShortText), _) | (None, None) => format!("below the threshold {t}, but {short}"),
        (Some(By::Containment), Some(c)) => {
            format!("below the threshold {t}, but at least {c} of the smaller text's shingles are in the other")
        }
        (None, Some(c)) => {
            format!(
                "below the threshold {t}, but at least {c} of the smaller text's shingles are in the other, or {short}"
            )
        }
        _ => format!("threshold {t}"),
    };
    let detail = if may_read_key {
        format!(
            "Key ({})=({}) has Jaccard similarity {:.3} with it ({rule}).",
            pgrx::spi::quote_identifier(&cfg.key_column),
            key_text,
            similarity,
        )
    } else {
        format!("An existing row has Jaccard similarity {similarity:.3} with it ({rule}).")
    };
    violation(rel, TRIGGER_SIMILAR, name, detail)
}

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
            crate::similar::similarity_indexes(rel)
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
            crate::similar::short_indexes(rel)
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
            crate::similar::key_indexes(rel)
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
            // SAFETY: as above.
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
        super::window::close_previous();
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
        let keys = cfg.containment.map(|c| crate::minhash::text_set_keys(&text, &set, cfg.k, c));
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
        // (`via`: simdup_core::similar::Rule::judge), since the lock stripes cover rule 1 only
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
            cfg.rule().judge_overlap(&overlap, via, || (short.as_ref().map(|s| s.set.clone()), short_set_of(&other)))
        };
        let shares_band = |_: &str, other_set: &[u64]| cfg.shares_band(&bands, other_set);
        let shares_short_band = |other: &str, _: &[u64]| cfg.shares_short_band(short_bands, other);
        let shares_key = |_: &str, other_set: &[u64]| cfg.shares_key(keys.as_ref(), other_set);
        let found = smallest_key(rel, cols.key, exclude, |snapshot, visit| {
            // The rows each index offers, with how many of the new row's values each shares;
            // past the verification limit, only those sharing the most are verified
            // (simdup_core::candidates). A lossy bitmap (a value shared by more rows than
            // work_mem holds) leaves the counts incomplete: then every row of each index's
            // bitmap is visited, as without a limit.
            let short = short_index.zip(short_bands);
            let key = key_index.zip(probe.as_deref());
            let (mut by_band, mut by_short, mut by_key) = (Shared::default(), Shared::default(), Shared::default());
            let counted = count_shared(index, &bands, snapshot, &mut by_band)
                && short.is_none_or(|(i, b)| count_shared(i, b, snapshot, &mut by_short))
                && key.is_none_or(|(i, p)| count_shared(i, p, snapshot, &mut by_key));
            if !counted {
                Candidates::scan(index, &bands, snapshot).visit(rel, snapshot, |slot, recheck| {
                    visit(slot, &mut || candidate(slot, recheck.then_some(&shares_band), Via::Band))
                });
                if let Some((i, b)) = short {
                    Candidates::scan(i, b, snapshot).visit(rel, snapshot, |slot, recheck| {
                        visit(slot, &mut || candidate(slot, recheck.then_some(&shares_short_band), Via::ShortBand))
                    });
                }
                if let Some((i, p)) = key {
                    Candidates::scan(i, p, snapshot).visit(rel, snapshot, |slot, recheck| {
                        visit(slot, &mut || candidate(slot, recheck.then_some(&shares_key), Via::Key))
                    });
                }
                return;
            }
            let only = verify_only(&[&by_band, &by_short, &by_key]);
            for (rows, via) in [(&by_band, Via::Band), (&by_short, Via::ShortBand), (&by_key, Via::Key)] {
                let mut at: Vec<u64> = match &only {
                    Some(only) => only.iter().copied().filter(|p| rows.contains_key(p)).collect(),
                    None => rows.keys().copied().collect(),
                };
                at.sort_unstable();
                visit_rows(rel, snapshot, at.into_iter(), |slot| visit(slot, &mut || candidate(slot, None, via)));
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

/// The positions of the candidates to verify when the indexes offer more rows than
/// `simdup.similar_verify_limit`: those sharing the most index values with the new row
/// ([`simdup_core::candidates::most_shared`]). None: every candidate.
fn verify_only(offered: &[&Shared]) -> Option<Vec<u64>> {
    let limit = crate::gucs::similar_verify_limit();
    let only = simdup_core::candidates::most_shared(offered, limit)?;
    pgrx::debug1!(
        "simdup: {} rows offered by the similarity indexes; verifying the {limit} sharing the most values with the new row",
        offered.iter().map(|s| s.len()).sum::<usize>()
    );
    Some(only)
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

    #[pg_test]
    fn similar_config_round_trips() {
        let c = SimilarConfig {
            mode: Mode::Skip,
            threshold: 0.6,
            k: 5,
            bands: 18,
            rows: 6,
            text_column: "bo'dy".into(),
            key_column: "id".into(),
            containment: None,
        };
        assert_eq!(c.to_args(), "'skip', '0.6', '5', '18', '6', 'bo''dy', 'id'");
        let args = ["skip", "0.6", "5", "18", "6", "bo'dy", "id"].map(String::from);
        assert_eq!(SimilarConfig::parse(&args), c);
        let c = SimilarConfig { containment: Some(0.7), ..c };
        assert_eq!(c.to_args(), "'skip', '0.6', '5', '18', '6', 'bo''dy', 'id', '0.7'");
        let args = ["skip", "0.6", "5", "18", "6", "bo'dy", "id", "0.7"].map(String::from);
        assert_eq!(SimilarConfig::parse(&args), c);
    }

    /// The verification limit chooses which candidates are verified, and a lossy bitmap turns it
    /// off: 5,000 similar rows of 200 characters, each padded to about 1,950 bytes (about 1,250
    /// heap pages), stored with the smallest key last; key 1 holds the first 150 characters only
    /// (Jaccard about 0.7 with the new rows, fewer shared bands than most). Every candidate
    /// verified (limit 0, or a `work_mem` of 64 kB, whose single-value bitmaps outgrow it) names
    /// key 1; the limit verifies the 128 sharing the most band values, the earlier position on
    /// ties, and names the smallest key among them.
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
        Spi::run("RESET simdup.similar_verify_limit").unwrap();
        let limited = dup_of(100_002);
        // The 128 other rows sharing the most band values with it, the earlier position first
        // (the texts are neither short nor tiny: the band index offers every candidate).
        let verified = Spi::get_one::<i32>(
            "SELECT min(id) FROM (
               SELECT f.id FROM famt f, famt n WHERE n.id = 100002 AND f.id <> n.id
               ORDER BY cardinality(ARRAY(SELECT unnest(_simdup_similar_bands(f.body, 5, 35, 3))
                                          INTERSECT SELECT unnest(_simdup_similar_bands(n.body, 5, 35, 3)))) DESC, f.ctid
               LIMIT 128) s",
        )
        .unwrap()
        .unwrap();
        assert_eq!(limited, verified);
        assert!(limited > 1);
        Spi::run("SET work_mem = '64kB'").unwrap();
        assert_eq!(dup_of(100_003), 1);
    }
}
