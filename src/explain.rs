//! Why two texts are, or are not, near-duplicates: `simdup_explain(a, b[, tbl])` (jsonb),
//! `simdup_explain_passages(a, b)` (rows) and the columns `simdup_explain_rows(tbl, key_a, key_b)`
//! reads (sql/explain.sql).
//!
//! The figures are the SQL functions' own (`simhash`, `hamming`, `jaccard`, `containment`), and
//! each verdict is reached by the decision code of the dedup trigger it explains, with that
//! trigger's arguments (what it obeys): for `simdup_dedup`, the Hamming distance against
//! max_distance, then the verification's [`simdup_core::similarity::Rule::near_duplicate`]
//! ([`crate::dedup::config::Verify::rule`]) as `src/dedup/verify.rs` applies it; for
//! `simdup_dedup_similar`, which of its indexes offer the stored row
//! ([`SimilarConfig::shares_band`] and the others, as the trigger rechecks a candidate) and
//! [`SimilarConfig::similar`] ([`simdup_core::similarity::Rule::judge`]) for each. The passages
//! are [`simdup_core::explain::align`]'s. `b` is judged as the new row, `a` as the stored one
//! (the decisions are symmetric).

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Map, Value};

use simdup_core::explain::{align, AlignError, Alignment};
use simdup_core::similarity::minhash as mh;
use simdup_core::similarity::{
    By, Match, PairTexts, Rule, Via, MIN_CONTAINED_SHINGLES, VERIFY_CONTAINMENT, VERIFY_SHINGLE, VERIFY_THRESHOLD,
};

use crate::args::Mode;
use crate::dedup::config::{Config, Verify};
use crate::errors::{Code, Error};
use crate::similarity::config::SimilarConfig;
use crate::similarity::minhash::{char_set, interrupt, pair, set_bands, short_set_of, text_short};

/// The alignment of two texts, or 54000 for a text too long to align.
fn aligned<'t>(a: &'t str, b: &'t str) -> Alignment<'t> {
    align(a, b, &mut interrupt).unwrap_or_else(|e| match e {
        AlignError::TooLong { max } => Error::new(
            Code::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!("a text of more than {max} units is too long for simdup_explain's passages"),
        )
        .detail("A unit is a CJK character, a word, a run of whitespace or another character.")
        .hint("Explain a part of it, e.g. substr(text, 1, 100000).")
        .raise(),
    })
}

/// `simdup_explain_passages(a, b)`: the aligned passages of two texts, in order: (ord, side,
/// passage), side `both` for a run both texts have, `a` or `b` for one only one has. The
/// `both` and `a` passages concatenate to `a`, the `both` and `b` ones to `b`. Declared in
/// sql/explain.sql.
#[pg_extern(sql = false)]
fn simdup_explain_passages(
    a: &str,
    b: &str,
) -> TableIterator<'static, (name!(ord, i32), name!(side, String), name!(passage, String))> {
    let rows: Vec<_> = aligned(a, b)
        .passages
        .iter()
        .enumerate()
        .map(|(i, p)| (i as i32 + 1, p.side.as_str().to_owned(), p.text.to_owned()))
        .collect();
    TableIterator::new(rows)
}

/// The dedup triggers of `tbl` (its SimHash trigger or its similarity trigger), read from their
/// arguments; 55000 when it has neither.
fn table_triggers(tbl: pg_sys::Oid) -> (String, Option<Config>, Option<SimilarConfig>) {
    let (name, simhash, similar) = crate::triggers::trigger_configs(tbl);
    if simhash.is_none() && similar.is_none() {
        Error::new(Code::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, format!("table {name} has no simdup dedup trigger"))
            .hint(
                "simdup_explain applies a table's dedup trigger: simdup_enable(table, text_column, on_duplicate => ...) or \
                 simdup_enable_similar(table, text_column, on_duplicate => ...) installs one. Without a table it applies their defaults.",
            )
            .raise()
    }
    (name, simhash, similar)
}

/// `_simdup_explain_columns(tbl)`: the text and key columns of `tbl`'s dedup trigger, as its
/// arguments name them, for `simdup_explain_rows`; 55000 without a dedup trigger or for one
/// without a text column (an adopted fingerprint column). Declared in sql/explain.sql.
#[pg_extern(sql = false)]
fn _simdup_explain_columns(
    tbl: pg_sys::Oid,
) -> TableIterator<'static, (name!(text_column, String), name!(key_column, String))> {
    let (name, simhash, similar) = table_triggers(tbl);
    let columns = match (simhash, similar) {
        (Some(c), _) => c.text_column.map(|t| (t, c.key_column)),
        (_, Some(s)) => Some((s.text_column, s.key_column)),
        _ => None,
    };
    let Some(columns) = columns else {
        Error::new(Code::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, format!("table {name} has no text column"))
            .detail("Its dedup trigger compares fingerprints the application stores (an adopted fingerprint column).")
            .hint("Explain two texts with the table's settings: simdup_explain(a, b, table).")
            .raise()
    };
    TableIterator::once(columns)
}

/// `simdup_explain(a, b, tbl)`: see sql/explain.sql. NULL when `a` or `b` is NULL.
#[pg_extern(sql = false)]
fn simdup_explain(a: Option<&str>, b: Option<&str>, tbl: Option<pg_sys::Oid>) -> Option<JsonB> {
    let (a, b) = (a?, b?);
    let (table, simhash_cfg, similar_cfg) = match tbl {
        Some(tbl) => {
            let (name, simhash, similar) = table_triggers(tbl);
            (Some(name), simhash, similar)
        }
        None => (None, None, None),
    };
    // The passages first: a text too long for them is refused before any other work.
    let al = aligned(a, b);
    // The shingle size of the figures: the similarity trigger's, else the verification's (5).
    let k = similar_cfg.as_ref().map_or(VERIFY_SHINGLE, |c| c.k);
    let (fa, fb) = (crate::fingerprint::simhash(a), crate::fingerprint::simhash(b));
    let (sa, sb) = (char_set(a, k), char_set(b, k));
    let texts = Texts { a, b, fa, fb };

    let mut verdicts = Vec::new();
    match (&simhash_cfg, &similar_cfg) {
        (None, None) => {
            // No table: the defaults of simdup_enable(..., on_duplicate => ...) and
            // simdup_enable_similar(..., on_duplicate => ...).
            let k_default = crate::args::max_distance(crate::gucs::max_distance());
            let verify = Verify { threshold: VERIFY_THRESHOLD, containment: Some(VERIFY_CONTAINMENT) };
            verdicts.push(simhash_verdict(&texts, None, k_default, Some(verify), true));
            let (bands, rows) = mh::choose_bands_for_recall(128, 0.5, 0.99).unwrap_or((35, 3));
            let cfg = SimilarConfig {
                mode: Mode::Reject,
                threshold: 0.5,
                k: 5,
                bands,
                rows,
                text_column: String::new(),
                key_column: String::new(),
                containment: Some(0.8),
            };
            verdicts.push(similar_verdict(&texts, &cfg, None));
        }
        _ => {
            if let Some(c) = &simhash_cfg {
                verdicts.push(simhash_verdict(&texts, Some(c.mode), c.k, c.verify, c.text_column.is_some()));
            }
            if let Some(c) = &similar_cfg {
                verdicts.push(similar_verdict(&texts, c, Some(c.mode)));
            }
        }
    }

    let passages: Vec<Value> = al.passages.iter().map(|p| json!({"side": p.side.as_str(), "text": p.text})).collect();
    let both = !sa.is_empty() && !sb.is_empty();
    let inter = if both { mh::intersection_size(&sa, &sb) } else { 0 };
    let share = |n: usize| both.then(|| inter as f64 / n as f64);
    let mut out = Map::new();
    out.insert("table".into(), json!(table));
    out.insert("a".into(), json!({"chars": a.chars().count(), "simhash": fa, "shingles": sa.len()}));
    out.insert("b".into(), json!({"chars": b.chars().count(), "simhash": fb, "shingles": sb.len()}));
    out.insert("hamming".into(), json!(distance(fa, fb)));
    out.insert("k".into(), json!(k));
    out.insert("jaccard".into(), json!(both.then(|| mh::jaccard(&sa, &sb))));
    out.insert("containment".into(), json!(both.then(|| mh::containment(&sa, &sb))));
    out.insert("a_in_b".into(), json!(share(sa.len())));
    out.insert("b_in_a".into(), json!(share(sb.len())));
    out.insert("verdicts".into(), Value::Array(verdicts));
    out.insert(
        "alignment".into(),
        json!({
            "units_a": al.units_a,
            "units_b": al.units_b,
            "shared_chars": al.shared_chars,
            "a_only_chars": al.a_only_chars,
            "b_only_chars": al.b_only_chars,
            "coarse_chars": al.coarse_chars,
        }),
    );
    out.insert("passages".into(), Value::Array(passages));
    Some(JsonB(Value::Object(out)))
}

/// The two texts and their fingerprints.
struct Texts<'a> {
    a: &'a str,
    b: &'a str,
    fa: Option<i64>,
    fb: Option<i64>,
}

fn distance(fa: Option<i64>, fb: Option<i64>) -> Option<u32> {
    Some(simdup_core::hamming(fa? as u64, fb? as u64))
}

/// What a dedup trigger in `mode` does with a near-duplicate (None: no mode, the defaults).
fn action(mode: Option<Mode>, duplicate: bool) -> Value {
    match (mode, duplicate) {
        (None, _) => Value::Null,
        (Some(_), false) => json!("stored"),
        (Some(Mode::Reject), true) => json!("rejected (23505)"),
        (Some(Mode::Skip), true) => json!("skipped"),
        (Some(Mode::Mark), true) => json!("stored with dup_of"),
    }
}

fn rule_name(by: By) -> &'static str {
    match by {
        By::Jaccard => "jaccard",
        By::Containment => "containment",
        By::ShortText => "short_text",
    }
}

/// Why `rule` matched (`Some`) or did not on the k-shingle sets of `t.a` (`sa`) and `t.b` (`sb`),
/// both non-empty.
fn rule_reason(rule: &Rule, m: Option<Match>, t: &Texts<'_>, sa: &[u64], sb: &[u64]) -> String {
    let j = mh::jaccard(sa, sb);
    let c = mh::containment(sa, sb);
    let th = rule.threshold;
    let short = || match (short_set_of(t.a), short_set_of(t.b)) {
        (Some(x), Some(y)) => format!("{:.3}", mh::jaccard(&x, &y)),
        _ => "none (not both short)".into(),
    };
    match m.map(|m| m.by) {
        Some(By::Jaccard) => format!("Jaccard similarity {j:.3} >= threshold {th}"),
        Some(By::Containment) => format!(
            "containment {c:.3} >= {} while Jaccard similarity {j:.3} < threshold {th}",
            rule.containment.unwrap_or_default()
        ),
        Some(By::ShortText) => format!(
            "the shorter text has fewer than 50 characters and the Jaccard similarity of their 3-character shingles {} >= threshold {th} while Jaccard similarity {j:.3} < {th}",
            short()
        ),
        None => {
            let mut why = format!("Jaccard similarity {j:.3} < threshold {th}");
            if let Some(cc) = rule.containment {
                if c < cc {
                    why.push_str(&format!(", containment {c:.3} < {cc}"));
                } else if sa.len().min(sb.len()) < MIN_CONTAINED_SHINGLES {
                    why.push_str(&format!(
                        ", containment {c:.3} >= {cc} but the smaller text has fewer than {MIN_CONTAINED_SHINGLES} distinct shingles (one k-gram, which every text holding it contains: not a copy)"
                    ));
                } else if pair(t.a, t.b).footer(rule.k, sa.len() <= sb.len(), sa.len().min(sb.len())) {
                    why.push_str(&format!(
                        ", containment {c:.3} >= {cc} but the smaller text is the larger one's footer: the larger ends with it after more text than it holds (an article with that notice, not its copy)"
                    ));
                }
            }
            if sa.len().min(sb.len()) + rule.k <= simdup_core::similarity::SHORT_TEXT_CHARS {
                why.push_str(&format!(", 3-character-shingle Jaccard similarity {} < {th}", short()));
            }
            why
        }
    }
}

/// The verdict of a SimHash dedup trigger (`simdup_dedup`) of max distance `k` and verification
/// `verify` (None: none) on `b` as a new row against `a` stored; `text` false for a trigger on an
/// adopted fingerprint column, whose fingerprints the application computes.
fn simhash_verdict(t: &Texts<'_>, mode: Option<Mode>, k: u32, verify: Option<Verify>, text: bool) -> Value {
    let mut v = Map::new();
    v.insert("trigger".into(), json!("simdup_dedup"));
    v.insert("on_duplicate".into(), json!(mode.map(Mode::as_str)));
    v.insert("max_distance".into(), json!(k));
    v.insert("threshold".into(), json!(verify.map(|v| v.threshold)));
    v.insert("containment".into(), json!(verify.and_then(|v| v.containment)));
    let (duplicate, rule, mut reason) = match distance(t.fa, t.fb) {
        None => {
            let which = if t.fa.is_none() { "a" } else { "b" };
            (false, None, format!("{which} has no fingerprint (no word or number): never a near-duplicate"))
        }
        Some(d) if d > k => (false, None, format!("Hamming distance {d} > max_distance {k}: not a candidate")),
        Some(d) => match verify {
            None => (true, Some("distance"), format!("Hamming distance {d} <= max_distance {k} (no verification)")),
            Some(verify) => {
                // The verification of src/dedup/verify.rs (Verifier::confirms): the new row's
                // 5-shingles against the stored row's, by the table's rule.
                let rule = verify.rule();
                let (sb, sa) = (char_set(t.b, rule.k), char_set(t.a, rule.k));
                let m = rule.near_duplicate(&sb, &sa, &mut pair(t.b, t.a));
                let within = format!("Hamming distance {d} <= max_distance {k}");
                if sa.is_empty() || sb.is_empty() {
                    (false, None, format!("{within}, but a text without shingles is never verified"))
                } else {
                    let why = rule_reason(&rule, m, t, &sa, &sb);
                    match m {
                        Some(m) => (true, Some(rule_name(m.by)), format!("{within}, and {why}")),
                        None => (false, None, format!("{within}, but the texts are not near-duplicates: {why}")),
                    }
                }
            }
        },
    };
    if !text {
        reason.push_str("; the fingerprints here are simhash()'s, the table compares those its application stores");
    }
    v.insert("duplicate".into(), json!(duplicate));
    v.insert("action".into(), action(mode, duplicate));
    v.insert("rule".into(), json!(rule));
    v.insert("reason".into(), json!(reason));
    Value::Object(v)
}

/// The verdict of a similarity dedup trigger (`simdup_dedup_similar`) with configuration `cfg`
/// on `b` as a new row against `a` stored: the trigger's steps for one candidate (src/dedup/
/// similar.rs, `fire`): the indexes that offer it, then the decision for each.
fn similar_verdict(t: &Texts<'_>, cfg: &SimilarConfig, mode: Option<Mode>) -> Value {
    let mut v = Map::new();
    v.insert("trigger".into(), json!("simdup_dedup_similar"));
    v.insert("on_duplicate".into(), json!(mode.map(Mode::as_str)));
    v.insert("threshold".into(), json!(cfg.threshold));
    v.insert("k".into(), json!(cfg.k));
    v.insert("bands".into(), json!(cfg.bands));
    v.insert("rows".into(), json!(cfg.rows));
    v.insert("containment".into(), json!(cfg.containment));
    let (set, other_set) = (char_set(t.b, cfg.k), char_set(t.a, cfg.k));
    let mut offered = Vec::new();
    let (duplicate, rule, reason) = if set.is_empty() || other_set.is_empty() {
        let which = if other_set.is_empty() { "a" } else { "b" };
        (false, None, format!("{which} has no shingles: similar to nothing"))
    } else {
        let bands = set_bands(&set, cfg.bands, cfg.rows);
        let short = text_short(t.b, cfg.threshold);
        let short_bands = short.as_ref().map(|s| s.bands.as_slice());
        let keys = cfg.keys(&set);
        if cfg.shares_band(&bands, &other_set) {
            offered.push((Via::Band, "band"));
        }
        if short_bands.is_some() && cfg.shares_short_band(short_bands, t.a) {
            offered.push((Via::ShortBand, "short_band"));
        }
        if keys.is_some() && cfg.shares_key(keys.as_ref(), &other_set) {
            offered.push((Via::Key, "key"));
        }
        let judged = offered.iter().find_map(|&(via, name)| {
            cfg.similar(
                &set,
                &other_set,
                via,
                &mut pair(t.b, t.a).with_short(Some(short.as_ref().map(|s| s.set.as_slice())), None),
            )
            .map(|m| (m, name))
        });
        // The rules alone, whichever index offers the pair: what the reason compares with.
        let rule = Rule { k: cfg.k, threshold: cfg.threshold, containment: cfg.containment };
        let by_rules = rule.near_duplicate(&set, &other_set, &mut pair(t.b, t.a));
        let why = rule_reason(&rule, judged.map(|(m, _)| m).or(by_rules), t, &other_set, &set);
        let through = |name: &str| match name {
            "band" => "a shared band value of the similarity index",
            "short_band" => "a shared band value of the short-text index",
            _ => "meeting containment keys",
        };
        match (judged, offered.is_empty()) {
            (Some((m, name)), _) => {
                (true, Some(rule_name(m.by)), format!("found through {}, and {why}", through(name)))
            }
            (None, true) => {
                let p = mh::s_curve(mh::jaccard(&set, &other_set), cfg.bands, cfg.rows);
                let note = if by_rules.is_some() {
                    format!("; by the rules alone it would be a near-duplicate ({why}), but the trigger only judges the rows its indexes offer")
                } else {
                    format!("; {why}")
                };
                (
                    false,
                    None,
                    format!(
                        "not a candidate: no shared band value ({} bands of {} rows: a pair of this Jaccard similarity shares one with probability {p:.4}), short band or containment key{note}",
                        cfg.bands, cfg.rows
                    ),
                )
            }
            (None, false) => {
                let names: Vec<&str> = offered.iter().map(|&(_, n)| through(n)).collect();
                let names = names.join(" and ");
                if by_rules.is_some() {
                    (
                        false,
                        None,
                        format!(
                            "found through {names}, but the rule that would match ({why}) is not applied to a row found that way (docs/dedup.md, dedup by similarity)"
                        ),
                    )
                } else {
                    (false, None, format!("found through {names}, but {why}"))
                }
            }
        }
    };
    v.insert("candidate_via".into(), json!(offered.iter().map(|&(_, n)| n).collect::<Vec<_>>()));
    v.insert("duplicate".into(), json!(duplicate));
    v.insert("action".into(), action(mode, duplicate));
    v.insert("rule".into(), json!(rule));
    v.insert("reason".into(), json!(reason));
    Value::Object(v)
}
