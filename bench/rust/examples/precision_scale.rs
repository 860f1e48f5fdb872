//! Dedup precision as the table grows: what the SimHash dedup trigger in mark mode
//! (`on_duplicate => 'mark'`) marks in a table of N real-sentence Chinese documents plus planted
//! edited copies, with and without verification of each candidate by the exact similarity rule
//! (bench/quality/precision_scale.sh, docs/quality.md "Precision as the table grows").
//!
//! ```text
//! precision_scale --data bench/data/zh_news.jsonl --n 200000,1000000 [--planted 300] [--seed 1]
//!                 [--k 3,6,8,10] [--threads 2] [--budget-min 40] [--max-gb 10] [--recall-only 0]
//! ```
//!
//! **Corpus.** The articles of `--data` are split into sentences (`edits::sentences`),
//! whitespace collapsed, exact repeats dropped, and sentences of fewer than
//! [`MIN_SENTENCE`] or more than [`MAX_SENTENCE`] characters dropped (the latter are paragraphs
//! without a sentence end). Document i (0 ≤ i < N) is [`SENTENCES_PER_DOC`] distinct sentences
//! drawn by `Rng::new(&[seed, DOC_TAG, i])`: nothing is stored per document, its text is
//! regenerated from i whenever it is read. After them come the planted copies: for each of the
//! first P documents (the subjects), one copy per edit kind of [`KINDS`] (`edits.rs`; Chinese
//! typos drawn from the corpus's CJK characters by frequency), ids N + s·|KINDS| + e.
//!
//! **The decision.** Every row is stored (mark mode) in id order. Row j is marked when an
//! earlier row i < j has `hamming(fp_i, fp_j) ≤ k` (verified: and
//! `similarity::Rule::verification(VERIFY_THRESHOLD, Some(VERIFY_CONTAINMENT))` says the two texts
//! are near-duplicates), against the smallest such i, at each distance k of `--k` (default
//! 3, 6, 8, 10). All pairs within the largest k come from `pairs::near_pairs_parallel` (pairs of
//! distinct fingerprint values, mapped back to ids; rows with the same fingerprint are pairs at
//! distance 0), so only rows with a candidate need work.
//!
//! **The judge.** Every marked row against its dup_of, by the exact Jaccard J and containment
//! C of character 5-shingles (`minhash::shingles`): "unrelated" J < 0.3; precision = share with
//! J ≥ 0.5 or C ≥ 0.8 (for the verified mode 1 by construction: that is the rule itself on
//! texts of this length). By the planted truth: base documents are independent draws, so a
//! marked base row is a false mark; a planted copy is a true mark when its dup_of is its
//! subject, another copy of the same subject, or the subject's own dup_of when that pair is a
//! near-duplicate by the judge. Recall per edit kind: share of the planted copies marked.
//! Verifications per row: the candidates within k a verified check may have to read.
//!
//! Also measured: the rate of unrelated pairs (J < 0.3) within k among the N documents, against
//! the share of random 64-bit pairs within k (`similarity::UNRELATED_SKEW` is their ratio at
//! k = 10).

#![allow(clippy::type_complexity)] // benchmark driver: tuples of results

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::time::Instant;

use simdup_bench::edits::{self, is_cjk, load, nchars, Lang, Rng};
use simdup_core::similarity::minhash;
use simdup_core::similarity::{self, Rule, VERIFY_CONTAINMENT, VERIFY_THRESHOLD};
use simdup_core::{hamming, no_interrupt, pairs, simhash};

/// The distances decided at by default (`--k`); the pairs are found once at the largest.
const DEFAULT_KS: [u32; 4] = [3, 6, 8, 10];
const SENTENCES_PER_DOC: usize = 10;
const MIN_SENTENCE: usize = 8;
const MAX_SENTENCE: usize = 300;
/// The planted edit kinds, in the order of their copies' ids.
const KINDS: [&str; 9] = ["del5", "del10", "insert", "swap", "typo1", "typo3", "format", "boiler", "trunc10"];
const DOC_TAG: u64 = 0xd0c5;
const EDIT_TAG: u64 = 0xed17;
/// The judge: "unrelated" below this Jaccard.
const UNRELATED_J: f64 = 0.3;
/// The judge's near-duplicate: Jaccard ≥ this or containment ≥ [`NEAR_C`].
const NEAR_J: f64 = 0.5;
const NEAR_C: f64 = 0.8;

struct Args {
    data: String,
    ns: Vec<usize>,
    planted: usize,
    seed: u64,
    /// The distances decided at, ascending, without repeats.
    ks: Vec<u32>,
    /// The largest of `ks`: the distance the pairs are found at.
    k_max: u32,
    threads: usize,
    budget_min: f64,
    max_gb: f64,
    /// Judge only the pairs whose later row is a planted copy: recall per kind at a size where
    /// judging every pair within k would take hours (the other columns then count planted rows
    /// only).
    recall_only: bool,
}

fn parse_args() -> Args {
    let mut a = Args {
        data: "bench/data/zh_news.jsonl".into(),
        ns: vec![200_000, 1_000_000],
        planted: 300,
        seed: 1,
        ks: DEFAULT_KS.to_vec(),
        k_max: 0,
        threads: 2,
        budget_min: 40.0,
        max_gb: 10.0,
        recall_only: false,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let val = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let num = |v: &str| v.replace('_', "").parse::<usize>().unwrap_or_else(|e| panic!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--data" => a.data = val.clone(),
            "--n" => a.ns = val.split(',').map(num).collect(),
            "--planted" => a.planted = num(val),
            "--seed" => a.seed = num(val) as u64,
            "--k" => a.ks = val.split(',').map(|v| num(v.trim()) as u32).collect(),
            "--threads" => a.threads = num(val).max(1),
            "--budget-min" => a.budget_min = val.parse().expect("--budget-min"),
            "--max-gb" => a.max_gb = val.parse().expect("--max-gb"),
            "--recall-only" => a.recall_only = num(val) != 0,
            _ => panic!("unknown argument {flag}"),
        }
    }
    a.ks.sort_unstable();
    a.ks.dedup();
    assert!(!a.ks.is_empty() && a.ks.iter().all(|&k| k < 64), "--k: distances from 0 to 63");
    a.k_max = *a.ks.last().unwrap();
    a
}

// ---------------------------------------------------------------------------------------------
// The corpus.

struct Corpus {
    sentences: Vec<String>,
    /// The CJK characters of the articles, with repeats: typos drawn from it go by frequency.
    cjk: Vec<char>,
    seed: u64,
}

impl Corpus {
    fn load(path: &str, seed: u64) -> Corpus {
        let docs = load(path);
        let mut seen = HashSet::new();
        let mut sentences = Vec::new();
        let mut cjk = Vec::new();
        for (_, body) in &docs {
            cjk.extend(body.chars().filter(|&c| is_cjk(c)));
            for s in edits::sentences(body) {
                let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
                let n = nchars(&s);
                if (MIN_SENTENCE..=MAX_SENTENCE).contains(&n) && seen.insert(s.clone()) {
                    sentences.push(s);
                }
            }
        }
        Corpus { sentences, cjk, seed }
    }

    /// Document i of the base corpus: SENTENCES_PER_DOC distinct sentences drawn by its seed.
    fn base_text(&self, i: usize) -> String {
        let mut rng = Rng::new(&[self.seed, DOC_TAG, i as u64]);
        let mut picked = [usize::MAX; SENTENCES_PER_DOC];
        let mut out = String::with_capacity(SENTENCES_PER_DOC * 160);
        let mut k = 0;
        while k < SENTENCES_PER_DOC {
            let s = rng.below(self.sentences.len());
            if picked[..k].contains(&s) {
                continue;
            }
            picked[k] = s;
            k += 1;
            out.push_str(&self.sentences[s]);
        }
        out
    }
}

/// A table of n base documents and the planted copies after them.
struct Table<'a> {
    corpus: &'a Corpus,
    n: usize,
    /// Texts of the planted copies, id n + s·|KINDS| + e.
    planted: Vec<String>,
}

impl Table<'_> {
    fn new(corpus: &Corpus, n: usize, subjects: usize) -> Table<'_> {
        let subjects = subjects.min(n);
        let mut planted = Vec::with_capacity(subjects * KINDS.len());
        for s in 0..subjects {
            let text = corpus.base_text(s);
            for (e, kind) in KINDS.iter().enumerate() {
                let mut rng = Rng::new(&[corpus.seed, EDIT_TAG, s as u64, e as u64]);
                let copy = match *kind {
                    "del5" => edits::delete_clauses(&text, 0.05, &mut rng),
                    "del10" => edits::delete_clauses(&text, 0.10, &mut rng),
                    "insert" => {
                        let mut other = rng.below(n - 1);
                        if other >= s {
                            other += 1;
                        }
                        edits::insert_sentence(&text, &corpus.base_text(other), Lang::Zh, &mut rng)
                    }
                    "swap" => edits::swap_sentences(&text, Lang::Zh, &mut rng),
                    "typo1" => edits::typos(&text, 0.01, Lang::Zh, &corpus.cjk, &mut rng),
                    "typo3" => edits::typos(&text, 0.03, Lang::Zh, &corpus.cjk, &mut rng),
                    "format" => edits::reformat(&text, Lang::Zh, &mut rng),
                    "boiler" => edits::boilerplate(&text, "", Lang::Zh, &mut rng),
                    "trunc10" => edits::truncate(&text, 0.10),
                    _ => unreachable!("{kind}"),
                };
                planted.push(copy);
            }
        }
        Table { corpus, n, planted }
    }

    fn len(&self) -> usize {
        self.n + self.planted.len()
    }

    fn text(&self, id: usize) -> String {
        if id < self.n {
            self.corpus.base_text(id)
        } else {
            self.planted[id - self.n].clone()
        }
    }

    /// (subject, kind) of a planted copy.
    fn planted_of(&self, id: usize) -> Option<(usize, usize)> {
        (id >= self.n).then(|| ((id - self.n) / KINDS.len(), (id - self.n) % KINDS.len()))
    }
}

// ---------------------------------------------------------------------------------------------
// Fingerprints, pairs, and the exact judgement of each pair.

fn fingerprints(table: &Table, threads: usize) -> (Vec<u64>, usize) {
    let total = table.len();
    let mut fps = vec![0u64; total];
    let chunk = total.div_ceil(threads).max(1);
    let mut empty = 0;
    std::thread::scope(|scope| {
        let handles: Vec<_> = fps
            .chunks_mut(chunk)
            .enumerate()
            .map(|(t, part)| {
                scope.spawn(move || {
                    let mut empty = 0usize;
                    for (k, fp) in part.iter_mut().enumerate() {
                        match simhash(&table.text(t * chunk + k)) {
                            Some(v) => *fp = v,
                            None => empty += 1,
                        }
                    }
                    empty
                })
            })
            .collect();
        for h in handles {
            empty += h.join().unwrap();
        }
    });
    (fps, empty)
}

/// A pair of rows within the largest k, `i < j`, and the exact judgement of their texts.
#[derive(Clone, Copy, Default)]
struct Pair {
    j: u32,
    i: u32,
    d: u8,
    jaccard: f32,
    containment: f32,
    /// `Rule::verification(0.5, Some(0.8))` says near-duplicate.
    verified: bool,
}

impl Pair {
    fn unrelated(&self) -> bool {
        f64::from(self.jaccard) < UNRELATED_J
    }
    fn near(&self) -> bool {
        f64::from(self.jaccard) >= NEAR_J || f64::from(self.containment) >= NEAR_C
    }
}

/// Every pair of rows within `k_max`, sorted by (j, i): the pairs of distinct fingerprint values
/// from the core's join, each expanded to the rows that carry the two values, and the pairs of
/// rows with the same fingerprint (distance 0).
fn row_pairs(fps: &[u64], k_max: u32, threads: usize) -> (Vec<Pair>, usize, usize) {
    let value_pairs = pairs::near_pairs_parallel(fps.to_vec(), k_max, threads, &mut |_| {});
    let mut by_fp: Vec<(u64, u32)> = fps.iter().enumerate().map(|(id, &f)| (f, id as u32)).collect();
    by_fp.sort_unstable();
    let rows_of = |f: u64| {
        let lo = by_fp.partition_point(|x| x.0 < f);
        let hi = by_fp.partition_point(|x| x.0 <= f);
        &by_fp[lo..hi]
    };
    let mut out = Vec::new();
    for &(a, b) in &value_pairs {
        let d = hamming(a, b) as u8;
        for &(_, x) in rows_of(a) {
            for &(_, y) in rows_of(b) {
                out.push(Pair { j: x.max(y), i: x.min(y), d, ..Pair::default() });
            }
        }
    }
    let mut same = 0;
    for group in by_fp.chunk_by(|x, y| x.0 == y.0) {
        for (n, &(_, x)) in group.iter().enumerate() {
            for &(_, y) in &group[..n] {
                out.push(Pair { j: x.max(y), i: x.min(y), d: 0, ..Pair::default() });
                same += 1;
            }
        }
    }
    out.sort_unstable_by_key(|p| (p.j, p.i));
    (out, value_pairs.len(), same)
}

/// Fills in the Jaccard, containment and verification of every pair, on `threads` threads
/// (each row's text and shingles once per group of pairs with the same later row).
fn judge_pairs(table: &Table, pairs: &mut [Pair], threads: usize) -> usize {
    // Cut into `threads` ranges at boundaries between later rows.
    let mut cuts = vec![0];
    for t in 1..threads {
        let mut at = (pairs.len() * t / threads).max(*cuts.last().unwrap());
        while at > 0 && at < pairs.len() && pairs[at].j == pairs[at - 1].j {
            at += 1;
        }
        cuts.push(at.min(pairs.len()));
    }
    cuts.push(pairs.len());
    let mut ranges = Vec::new();
    let mut rest = pairs;
    for w in cuts.windows(2) {
        let (head, tail) = rest.split_at_mut(w[1] - w[0]);
        ranges.push(head);
        rest = tail;
    }
    let rule = Rule::verification(VERIFY_THRESHOLD, Some(VERIFY_CONTAINMENT));
    let shingles = |t: &str| minhash::shingles(t, rule.k, &mut no_interrupt).expect("shingles");
    let mut checked = 0;
    std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|range| {
                scope.spawn(move || {
                    let mut checked = 0usize;
                    for group in range.chunk_by_mut(|x, y| x.j == y.j) {
                        let new = table.text(group[0].j as usize);
                        let new_set = shingles(&new);
                        for p in group.iter_mut() {
                            let old = table.text(p.i as usize);
                            let old_set = shingles(&old);
                            p.jaccard = minhash::jaccard(&new_set, &old_set) as f32;
                            p.containment = minhash::containment(&new_set, &old_set) as f32;
                            let mut pair = similarity::Texts::new(&new, &old, no_interrupt);
                            p.verified = rule.near_duplicate(&new_set, &old_set, &mut pair).is_some();
                            // The same decision as the rule's own entry point on the two texts.
                            if checked < 200 {
                                let by_texts = rule.texts(&new, &old, &mut no_interrupt).is_some();
                                assert_eq!(by_texts, p.verified, "rows {} and {}", p.j, p.i);
                                checked += 1;
                            }
                        }
                    }
                    checked
                })
            })
            .collect();
        for h in handles {
            checked += h.join().unwrap();
        }
    });
    checked
}

// ---------------------------------------------------------------------------------------------
// Mark mode, row by row.

#[derive(Default)]
struct Outcome {
    marked: usize,
    marked_planted: usize,
    unrelated: usize,
    below_half: usize,
    near: usize,
    /// Planted copies marked against their own family.
    true_marks: usize,
    recall: [usize; KINDS.len()],
    /// Candidates within k of the inserted rows (the rows a verified check may read).
    reads: usize,
    max_reads: usize,
    /// The same, of the base rows alone (their candidates are all unrelated documents).
    base_reads: usize,
    rows_with_candidates: usize,
}

fn decide(table: &Table, pairs: &[Pair], k: u32, verified: bool) -> Outcome {
    let mut o = Outcome::default();
    // Row -> its dup_of pair.
    let mut dup: HashMap<u32, Pair> = HashMap::new();
    for group in pairs.chunk_by(|x, y| x.j == y.j) {
        let within = group.iter().filter(|p| u32::from(p.d) <= k);
        let n = within.clone().count();
        if n == 0 {
            continue;
        }
        o.rows_with_candidates += 1;
        o.reads += n;
        o.max_reads = o.max_reads.max(n);
        if (group[0].j as usize) < table.n {
            o.base_reads += n;
        }
        // Sorted by i: the first that counts is the smallest.
        let chosen = within.clone().find(|p| !verified || p.verified);
        if let Some(p) = chosen {
            dup.insert(p.j, *p);
        }
    }
    for (&j, p) in &dup {
        o.marked += 1;
        o.unrelated += usize::from(p.unrelated());
        o.below_half += usize::from(f64::from(p.jaccard) < NEAR_J);
        o.near += usize::from(p.near());
        if let Some((s, e)) = table.planted_of(j as usize) {
            o.marked_planted += 1;
            o.recall[e] += 1;
            let of = p.i as usize;
            let family = of == s
                || table.planted_of(of).is_some_and(|(s2, _)| s2 == s)
                || dup.get(&(s as u32)).is_some_and(|q| q.i as usize == of && q.near());
            o.true_marks += usize::from(family);
        }
    }
    o
}

// ---------------------------------------------------------------------------------------------
// Report.

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

fn peak_rss_gb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0)
}

/// Σ_{i ≤ k} C(64, i) / 2^64: the share of pairs of random 64-bit values within k.
fn binomial_share(k: u32) -> f64 {
    let (mut c, mut sum) = (1.0f64, 0.0f64);
    for i in 0..=k {
        if i > 0 {
            c = c * f64::from(64 - i + 1) / f64::from(i);
        }
        sum += c;
    }
    sum / 2f64.powi(64)
}

fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.3}", a as f64 / b as f64)
    }
}

/// The timings of one run, for the estimate of a larger one.
#[derive(Clone, Copy)]
struct Timing {
    n: usize,
    linear: f64,
    quadratic: f64,
    pairs: usize,
    peak_gb: f64,
}

fn run(corpus: &Corpus, n: usize, a: &Args, mean_chars: f64) -> Timing {
    let total_start = Instant::now();
    let mut out = String::new();
    let t = Instant::now();
    let table = Table::new(corpus, n, a.planted);
    let t_plant = secs(t);
    eprintln!("n = {n}: {} planted copies ({t_plant:.1}s); fingerprints ...", table.planted.len());
    let t = Instant::now();
    let (fps, empty) = fingerprints(&table, a.threads);
    let t_fp = secs(t);
    eprintln!("n = {n}: fingerprints {t_fp:.1}s ({empty} without features); pairs within {} ...", a.k_max);
    let t = Instant::now();
    let (mut pairs, value_pairs, same) = row_pairs(&fps, a.k_max, a.threads);
    let t_pairs = secs(t);
    eprintln!(
        "n = {n}: {value_pairs} fingerprint pairs, {} row pairs ({same} same fingerprint) {t_pairs:.1}s; judging ...",
        pairs.len()
    );
    drop(fps);
    if a.recall_only {
        pairs.retain(|p| table.planted_of(p.j as usize).is_some());
        eprintln!("n = {n}: recall only: {} pairs of a planted copy and an earlier row", pairs.len());
    }
    let t = Instant::now();
    let checked = judge_pairs(&table, &mut pairs, a.threads);
    let t_judge = secs(t);
    eprintln!("n = {n}: judged {} pairs {t_judge:.1}s; deciding ...", pairs.len());
    let t = Instant::now();
    let mut results = Vec::new();
    for &k in &a.ks {
        for verified in [false, true] {
            results.push((k, verified, decide(&table, &pairs, k, verified)));
        }
    }
    let t_decide = secs(t);
    let rows = table.len();
    let copies = table.planted.len();
    let subjects = copies / KINDS.len();

    let _ =
        writeln!(out, "## N = {n} documents + {copies} planted copies ({subjects} subjects × {} kinds)\n", KINDS.len());
    if a.recall_only {
        let _ = writeln!(
            out,
            "**Recall only** (`--recall-only 1`): only the pairs of a planted copy and an earlier row were judged; \
             the recall columns are exact, every other column counts the planted copies only.\n"
        );
    }
    let _ = writeln!(
        out,
        "Marked rows judged against their dup_of by exact character-5-shingle Jaccard J and containment C. \
         precision = share with J ≥ {NEAR_J} or C ≥ {NEAR_C} (1 by construction when verified: that is the \
         verification rule); truth = share of marked rows that are planted copies marked against their own \
         subject's family (base documents are independent draws: any mark of one is false). Recall = share of \
         each kind's planted copies marked. Verifications = candidates within k per inserted row (mean over all \
         {rows} rows, max), the rows a verified check may read.\n"
    );
    let _ = write!(out, "| k | mode | marked | J < 0.3 | J ≥ 0.3 | precision | truth |");
    for kind in KINDS {
        let _ = write!(out, " {kind} |");
    }
    let _ = writeln!(out, " verifications/row (max) |");
    let _ = write!(out, "| ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    for _ in KINDS {
        let _ = write!(out, " ---: |");
    }
    let _ = writeln!(out, " ---: |");
    for (k, verified, o) in &results {
        let _ = write!(
            out,
            "| {k} | {} | {} | {} | {} | {} | {} |",
            if *verified { "verified" } else { "unverified" },
            o.marked,
            o.unrelated,
            ratio(o.marked - o.unrelated, o.marked),
            ratio(o.near, o.marked),
            ratio(o.true_marks, o.marked),
        );
        for e in 0..KINDS.len() {
            let _ = write!(out, " {} |", ratio(o.recall[e], subjects));
        }
        if *verified {
            let _ = writeln!(out, " {:.5} ({}) |", o.reads as f64 / rows as f64, o.max_reads);
        } else {
            let _ = writeln!(out, " – |");
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Marked base rows (no planted near-duplicate) and marked planted copies:\n");
    let _ = writeln!(out, "| k | mode | base rows marked | share of the {n} base rows | planted copies marked | of them against their subject's family | rows with a candidate | candidates per base row |");
    let _ = writeln!(out, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (k, verified, o) in &results {
        let base = o.marked - o.marked_planted;
        let _ = writeln!(
            out,
            "| {k} | {} | {base} | {:.2e} | {} of {copies} | {} | {} | {:.2e} |",
            if *verified { "verified" } else { "unverified" },
            base as f64 / n as f64,
            o.marked_planted,
            o.true_marks,
            o.rows_with_candidates,
            o.base_reads as f64 / n as f64
        );
    }
    let _ = writeln!(out);

    // What verification costs in recall: the pairs of a planted copy and an earlier row of its
    // family (its subject, another copy of it) within k that the rule rejects.
    let _ = writeln!(out, "Pairs of a planted copy and an earlier row of its subject's family within k, and those the verification rejects:\n");
    let _ = writeln!(
        out,
        "| k | family pairs within k | rejected by the verification | lowest J of a family pair within k |"
    );
    let _ = writeln!(out, "| ---: | ---: | ---: | ---: |");
    for &k in &a.ks {
        let family: Vec<&Pair> = pairs
            .iter()
            .filter(|p| u32::from(p.d) <= k)
            .filter(|p| {
                table.planted_of(p.j as usize).is_some_and(|(s, _)| {
                    p.i as usize == s || table.planted_of(p.i as usize).is_some_and(|(s2, _)| s2 == s)
                })
            })
            .collect();
        let rejected = family.iter().filter(|p| !p.verified).count();
        let lowest = family.iter().map(|p| p.jaccard).fold(f32::INFINITY, f32::min);
        let _ = writeln!(out, "| {k} | {} | {rejected} | {lowest:.3} |", family.len());
    }
    let _ = writeln!(out);

    // Unrelated pairs among the base documents, per k, against random 64-bit values (not
    // judged in a recall-only run).
    if !a.recall_only {
        let all = n as f64 * (n as f64 - 1.0) / 2.0;
        let _ = writeln!(
            out,
            "Pairs of base documents (all {all:.3e} pairs) within k, and the unrelated ones (J < 0.3):\n"
        );
        let _ = writeln!(out, "| k | pairs within k | J < 0.3 | rate per pair | random 64-bit share | ratio |");
        let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: | ---: |");
        for &k in &a.ks {
            let base: Vec<&Pair> = pairs.iter().filter(|p| (p.j as usize) < n && u32::from(p.d) <= k).collect();
            let unrelated = base.iter().filter(|p| p.unrelated()).count();
            let rate = unrelated as f64 / all;
            let _ = writeln!(
                out,
                "| {k} | {} | {unrelated} | {rate:.3e} | {:.3e} | {:.2} |",
                base.len(),
                binomial_share(k),
                rate / binomial_share(k)
            );
        }
        let _ = writeln!(out);
    }
    let total = secs(total_start);
    let _ = writeln!(
        out,
        "Timings ({} threads): planted copies {t_plant:.1} s, fingerprints {t_fp:.1} s ({:.0} docs/s), pairs within {} \
         {t_pairs:.1} s ({value_pairs} fingerprint pairs, {} row pairs, {same} of them the same fingerprint), \
         judging every pair (texts regenerated, 5-shingles, the rule; {checked} checked against `Rule::texts`) \
         {t_judge:.1} s, the {} decisions {t_decide:.2} s; total {total:.1} s; peak RSS {:.2} GB. \
         Mean document length {mean_chars:.0} characters.\n",
        a.threads,
        rows as f64 / t_fp,
        a.k_max,
        pairs.len(),
        results.len(),
        peak_rss_gb()
    );
    print!("{out}");
    use std::io::Write;
    std::io::stdout().flush().ok();
    Timing {
        n,
        linear: t_plant + t_fp,
        quadratic: t_pairs + t_judge + t_decide,
        pairs: pairs.len(),
        peak_gb: peak_rss_gb(),
    }
}

fn main() {
    let a = parse_args();
    let t = Instant::now();
    let corpus = Corpus::load(&a.data, a.seed);
    let sample = 10_000;
    let mean_chars = (0..sample).map(|i| nchars(&corpus.base_text(i))).sum::<usize>() as f64 / sample as f64;
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("# Dedup precision as the table grows\n");
    println!(
        "Data: {} ({} distinct sentences of {MIN_SENTENCE}–{MAX_SENTENCE} characters), documents of \
         {SENTENCES_PER_DOC} sentences drawn at random (mean {mean_chars:.0} characters), seed {}; {} subjects \
         planted, edit kinds {}; verification `Rule::verification({VERIFY_THRESHOLD}, Some({VERIFY_CONTAINMENT}))`. \
         Machine: {cpu}, {cores} cores, {} threads. Corpus loaded in {:.1} s.\n",
        a.data,
        corpus.sentences.len(),
        a.seed,
        a.planted,
        KINDS.join(", "),
        a.threads,
        secs(t)
    );
    let mut last: Option<Timing> = None;
    for &n in &a.ns {
        if let Some(prev) = last.filter(|p| n > p.n) {
            // Fingerprints grow with n; the pair join, the pairs and their judging with n².
            let s = n as f64 / prev.n as f64;
            let est_min = (prev.linear * s + prev.quadratic * s * s) / 60.0;
            let est_pairs = prev.pairs as f64 * s * s;
            // Per row: its fingerprint, twice in the join and once with its id (~48 bytes); per
            // pair: the row pair and the join's output.
            let est_gb = prev.peak_gb
                + (n - prev.n) as f64 * 48.0 / 1e9
                + est_pairs * (std::mem::size_of::<Pair>() + 32) as f64 / 1e9;
            let line = format!(
                "Estimate for N = {n} from the run at N = {}: {est_min:.0} min, ~{:.1e} row pairs, ~{est_gb:.1} GB \
                 (budget {:.0} min, {:.0} GB).",
                prev.n, est_pairs, a.budget_min, a.max_gb
            );
            eprintln!("{line}");
            if est_min > a.budget_min || est_gb > a.max_gb {
                println!("{line} **Skipped**: over the budget.\n");
                continue;
            }
            println!("{line}\n");
        }
        last = Some(run(&corpus, n, &a, mean_chars));
    }
}
