//! The similarity dedup trigger's configuration: its arguments ([`SimilarConfig`], written by
//! `simdup_enable_similar` and parsed by the trigger), the columns it reads and writes, its
//! error, and the SQL helpers of the Citus checked write that apply its decision to two texts.

use std::ffi::c_int;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::quote_literal;

use simdup_core::locks::{SimilarStripes, SimilarValues};
use simdup_core::similarity::minhash as mh;
use simdup_core::similarity::{By, Keys, Match, PairTexts, Via};

use crate::args::{self, Mode};
use crate::catalog::relation_name;
use crate::errors::{Code, ConstraintError, Error};
use crate::similarity::minhash::{set_bands, set_keys, text_short_bands, ShortText};

use crate::dedup::config::trigger_args_named;
use crate::dedup::config::DUP_OF;
use crate::dedup::event::{protocol_error, violation};
use crate::dedup::tuple::{column_hinted, refuse_generated};

/// What a misuse of the trigger function is told (who installs it).
pub(crate) const INSTALLED_BY: &str =
    "simdup_similar_dedup_trigger is installed by simdup_enable_similar(tbl, text_column, threshold, on_duplicate => ...)";

/// The name of the trigger, and of the constraint a near-duplicate violates.
pub(crate) const TRIGGER_SIMILAR: &str = "simdup_dedup_similar";

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
    /// The one decision of dedup by similarity ([`simdup_core::similarity::Rule`]): whether a
    /// stored row with k-shingle set `other_set` makes a row with k-shingle set `set` a
    /// near-duplicate; then their Jaccard similarity and the rule. `via` is the index that
    /// found the stored row (a shared band, short band or containment key): the rules are
    /// applied only to the candidates whose lock stripes cover them
    /// ([`simdup_core::similarity::Rule::judge`]). `texts` gives what the rules read of the two
    /// texts themselves ([`PairTexts`]: their 3-shingle sets when the short-text rule decides, the
    /// footer test when containment does): callers pass the short sets they already hold
    /// ([`simdup_core::similarity::Texts::with_short`]) rather than shingle the texts again.
    pub fn similar(&self, set: &[u64], other_set: &[u64], via: Via, texts: &mut impl PairTexts) -> Option<Match> {
        self.rule().judge(set, other_set, via, texts)
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
    /// candidate from its counted overlap with [`simdup_core::similarity::Rule::judge_overlap`]).
    pub fn rule(&self) -> simdup_core::similarity::Rule {
        simdup_core::similarity::Rule { k: self.k, threshold: self.threshold, containment: self.containment }
    }

    /// The lock stripes of a row with k-shingle set `set`, band values `bands`, a short
    /// text's `short`, and its containment keys `keys` ([`SimilarConfig::keys`])
    /// ([`simdup_core::locks::similar_values`]).
    pub fn stripes(
        &self,
        set: &[u64],
        bands: &[i64],
        short: Option<&ShortText>,
        keys: Option<&Keys>,
    ) -> SimilarStripes {
        self.values(set, bands, short, keys).stripes()
    }

    /// The lock values [`Self::stripes`] reduces to stripes
    /// ([`simdup_core::locks::similar_values`]): what a Citus checked write records of a row it
    /// has written (src/citus/checked/pending.rs).
    pub fn values(&self, set: &[u64], bands: &[i64], short: Option<&ShortText>, keys: Option<&Keys>) -> SimilarValues {
        let short_set = short.map_or(&[][..], |s| &s.set);
        simdup_core::locks::similar_values(bands, set, self.k, short_set, self.threshold, keys)
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

/// The trigger's decision ([`simdup_core::similarity::Rule::judge`]) on two texts, for the
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
    let (sa, sb) = crate::similarity::minhash::char_sets(a, b, k)?;
    simdup_core::similarity::Rule { k, threshold, containment }
        .judge(&sa, &sb, via, &mut crate::shingles::pair(a, b))
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
}
