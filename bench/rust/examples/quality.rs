//! Measures how well SimHash weighting variants separate near-duplicates from unrelated
//! documents, to choose format 1's weighting and the default maximum distance k.
//!
//! ```text
//! cargo run --release -p simdup-bench --example quality -- --zh zh_news.jsonl --en en_news.jsonl [--limit N] [--seed S]
//! ```
//!
//! Input: JSON lines `{"id", "title", "body"}`. For each language two sets are built: "main"
//! (bodies of 300–3000 characters) and "500" (the first ~500 characters of a body, cut at a
//! sentence end). Every document gets one seeded copy per edit kind (positives). Negatives are
//! all pairs of distinct documents of a set ("random"), minus the pairs whose character
//! 5-shingle Jaccard is > 0.5 (the corpus holds real reposts), plus "hard" pairs: each
//! document with its nearest other document by Jaccard of content-word sets (words in ≤ 10% of
//! the set's documents). Segmentation runs once per text and HMM setting; the weightings are
//! applied to the same features.

#![allow(clippy::type_complexity, clippy::needless_range_loop)] // benchmark drivers: tuples of results, indexed histograms

use std::collections::HashMap;
use std::time::Instant;

use simdup_bench::experiment::{self, terms, Options, TfMode, Tokenizer, Weighting};
use simdup_core::features::{quantize, UNKNOWN_IDF};
use simdup_core::simhash::combine;
use simdup_core::{hamming, idf, no_interrupt, simhash_with};

use simdup_bench::edits::*;

// ---------------------------------------------------------------------------------------------
// Variants.

const TFS: [TfMode; 3] = [TfMode::Raw, TfMode::Sublinear, TfMode::Binary];
const UNKS: [f32; 2] = [1.0, 0.5];
/// Weightings per HMM setting: tf × unknown_idf × drop single-character tokens.
const NW: usize = 12;
/// All variants: HMM × weightings. Index = hmm·12 + tf·4 + unk·2 + drop1.
const NV: usize = 24;

#[derive(Clone, Copy)]
struct Variant {
    hmm: bool,
    tf: TfMode,
    unk: f32,
    drop1: bool,
}

fn variant(v: usize) -> Variant {
    Variant { hmm: v / NW == 1, tf: TFS[(v % NW) / 4], unk: UNKS[(v % 4) / 2], drop1: v % 2 == 1 }
}

fn variant_name(v: usize) -> String {
    let x = variant(v);
    let tf = match x.tf {
        TfMode::Raw => "raw",
        TfMode::Sublinear => "sub",
        TfMode::Binary => "bin",
    };
    format!(
        "hmm={} tf={} unk={:.1} drop1={}",
        if x.hmm { "on " } else { "off" },
        tf,
        x.unk,
        if x.drop1 { "yes" } else { "no " }
    )
}

/// Fingerprints of `text` for the 12 weightings with HMM `hmm`; `words` receives the distinct
/// token hashes. A text without features gets 0 (counted in `empty`).
fn fingerprints(text: &str, hmm: bool, words: Option<&mut Vec<u64>>, empty: &mut usize) -> [u64; NW] {
    let tok = Tokenizer { hmm, ..Tokenizer::default() };
    let feats: Vec<_> = terms(text, &tok, true, &mut no_interrupt).into_iter().map(|t| t.term).collect();
    let table = idf::table();
    let known: Vec<Option<f32>> = feats.iter().map(|f| table.get(f.hash)).collect();
    let single: Vec<bool> = feats.iter().map(|f| f.token.chars().count() == 1).collect();
    let mut out = [0u64; NW];
    for (w, o) in out.iter_mut().enumerate() {
        let x = variant(w);
        let unknown = table.median() * x.unk;
        let it = feats
            .iter()
            .enumerate()
            .filter(|&(i, _)| !(x.drop1 && single[i]))
            .map(|(i, f)| (f.hash, quantize(x.tf.tf(f.count) * f64::from(known[i].unwrap_or(unknown)))));
        *o = combine(it).unwrap_or_else(|| {
            *empty += 1;
            0
        });
    }
    if let Some(words) = words {
        words.clear();
        words.extend(feats.iter().map(|f| f.hash));
        words.sort_unstable();
        words.dedup();
    }
    out
}

const EDITS: [&str; 10] =
    ["del5", "del10", "insert", "swap", "typo1", "typo2", "format", "boiler", "trunc10", "del5+typo1"];
const NE: usize = EDITS.len();

fn make_edit(e: usize, set: &Set, i: usize, pool: &[char], rng: &mut Rng) -> String {
    let text = &set.docs[i];
    let lang = set.lang;
    match EDITS[e] {
        "del5" => delete_clauses(text, 0.05, rng),
        "del10" => delete_clauses(text, 0.10, rng),
        "insert" => {
            let mut j = rng.below(set.docs.len() - 1);
            if j >= i {
                j += 1;
            }
            insert_sentence(text, &set.docs[j], lang, rng)
        }
        "swap" => swap_sentences(text, lang, rng),
        "typo1" => typos(text, 0.01, lang, pool, rng),
        "typo2" => typos(text, 0.02, lang, pool, rng),
        "format" => reformat(text, lang, rng),
        "boiler" => boilerplate(text, &set.titles[i], lang, rng),
        "trunc10" => truncate(text, 0.10),
        "del5+typo1" => {
            let t = delete_clauses(text, 0.05, rng);
            typos(&t, 0.01, lang, pool, rng)
        }
        _ => unreachable!(),
    }
}

// ---------------------------------------------------------------------------------------------
// Data.

struct Set {
    name: String,
    lang: Lang,
    docs: Vec<String>,
    titles: Vec<String>,
}

fn build_sets(name: &str, lang: Lang, raw: &[(String, String)], limit: usize, seed: u64) -> Vec<Set> {
    let mut main = Set { name: format!("{name} main"), lang, docs: vec![], titles: vec![] };
    let mut short = Set { name: format!("{name} 500"), lang, docs: vec![], titles: vec![] };
    for (t, b) in raw {
        let n = nchars(b);
        if (300..=3000).contains(&n) {
            main.docs.push(b.clone());
            main.titles.push(t.clone());
        }
        if let Some(x) = excerpt(b, 500) {
            short.docs.push(x);
            short.titles.push(t.clone());
        }
    }
    let mut sets = vec![main, short];
    for (k, s) in sets.iter_mut().enumerate() {
        if s.docs.len() > limit {
            let mut idx: Vec<usize> = (0..s.docs.len()).collect();
            Rng::new(&[seed, 0x11, k as u64, lang as u64]).shuffle(&mut idx);
            idx.truncate(limit);
            idx.sort_unstable();
            s.docs = idx.iter().map(|&i| s.docs[i].clone()).collect();
            s.titles = idx.iter().map(|&i| s.titles[i].clone()).collect();
        }
    }
    sets
}

// ---------------------------------------------------------------------------------------------
// Negatives: duplicate exclusion and hard pairs.

struct Negatives {
    /// Excluded pairs (i < j) with char-5-shingle Jaccard > 0.5.
    excluded: Vec<(u32, u32)>,
    /// Hard pairs (i < j) and their content-word Jaccard.
    hard: Vec<(u32, u32, f64)>,
    /// Hard-pair candidates skipped because they were duplicates.
    hard_skipped: usize,
}

fn negatives(docs: &[String], words: &[Vec<u64>]) -> Negatives {
    let n = docs.len();
    let sh: Vec<Vec<u64>> = docs.iter().map(|d| shingles(d)).collect();
    let mh_c: Vec<[u32; MH]> = sh.iter().map(|s| minhash(s)).collect();
    // Content words: in at most 10% of the documents.
    let mut df: HashMap<u64, u32> = HashMap::new();
    for w in words {
        for &h in w {
            *df.entry(h).or_insert(0) += 1;
        }
    }
    let max_df = ((n as f64) * 0.10).max(2.0) as u32;
    let content: Vec<Vec<u64>> =
        words.iter().map(|w| w.iter().copied().filter(|h| df[h] <= max_df).collect()).collect();
    let mh_w: Vec<[u32; MH]> = content.iter().map(|s| minhash(s)).collect();

    const TOP: usize = 6;
    let mut top: Vec<Vec<(u32, u32)>> = vec![Vec::with_capacity(TOP + 1); n]; // (matches, j)
    let push = |t: &mut Vec<(u32, u32)>, m: u32, j: u32| {
        if t.len() < TOP || m > t[t.len() - 1].0 {
            let pos = t.iter().position(|&(x, _)| x < m).unwrap_or(t.len());
            t.insert(pos, (m, j));
            t.truncate(TOP);
        }
    };
    let mut excluded = Vec::new();
    let mut checked: HashMap<(u32, u32), f64> = HashMap::new();
    for i in 0..n {
        for j in i + 1..n {
            let mc = matches(&mh_c[i], &mh_c[j]);
            if mc >= 16 {
                let jac = jaccard(&sh[i], &sh[j]);
                checked.insert((i as u32, j as u32), jac);
                if jac > 0.5 {
                    excluded.push((i as u32, j as u32));
                }
            }
            let mw = matches(&mh_w[i], &mh_w[j]);
            push(&mut top[i], mw, j as u32);
            push(&mut top[j], mw, i as u32);
        }
    }
    let mut hard = Vec::new();
    let mut hard_skipped = 0;
    for i in 0..n {
        let mut best: Option<(f64, u32)> = None;
        for &(_, j) in &top[i] {
            let key = ((i as u32).min(j), (i as u32).max(j));
            if checked.get(&key).is_some_and(|&c| c > 0.5) {
                hard_skipped += 1;
                continue;
            }
            let wj = jaccard(&content[i], &content[j as usize]);
            if best.is_none_or(|(b, _)| wj > b) {
                best = Some((wj, j));
            }
        }
        if let Some((wj, j)) = best {
            let (a, b) = ((i as u32).min(j), (i as u32).max(j));
            hard.push((a, b, wj));
        }
    }
    hard.sort_by_key(|x| (x.0, x.1));
    hard.dedup_by(|x, y| x.0 == y.0 && x.1 == y.1);
    Negatives { excluded, hard, hard_skipped }
}

// ---------------------------------------------------------------------------------------------
// Statistics.

type Hist = [u64; 65];

fn hist_quantile(h: &Hist, p: f64) -> u32 {
    let total: u64 = h.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((p * total as f64).ceil() as u64).max(1);
    let mut cum = 0;
    for (d, &c) in h.iter().enumerate() {
        cum += c;
        if cum >= rank {
            return d as u32;
        }
    }
    64
}

fn hist_le(h: &Hist, k: usize) -> f64 {
    let total: u64 = h.iter().sum();
    if total == 0 {
        return 0.0;
    }
    h[..=k.min(64)].iter().sum::<u64>() as f64 / total as f64
}

fn hist_min(h: &Hist) -> u32 {
    h.iter().position(|&c| c > 0).unwrap_or(64) as u32
}

struct SetResult {
    name: String,
    ndocs: usize,
    /// [variant][edit] histogram of positive distances.
    pos: Vec<Vec<Hist>>,
    /// [variant] histogram of random-pair distances (duplicates excluded).
    rand: Vec<Hist>,
    /// [variant] histogram of hard-pair distances.
    hard: Vec<Hist>,
    npairs: u64,
    excluded: usize,
    nhard: usize,
    hard_skipped: usize,
    hard_mean_wj: f64,
    /// Mean relative length change per edit.
    len_change: Vec<f64>,
}

fn ftime(t: Instant) -> String {
    format!("{:.1}s", t.elapsed().as_secs_f64())
}

/// Index of the variant that is format 1 (HMM off, 1 + ln tf, unknown-word IDF ×0.5 median,
/// single-character tokens kept).
fn default_variant() -> usize {
    (0..NV)
        .find(|&v| {
            let x = variant(v);
            !x.hmm && x.tf == TfMode::Sublinear && x.unk == UNKNOWN_IDF && !x.drop1
        })
        .expect("format 1 is among the variants")
}

fn run_set(set: &Set, pool: &[char], seed: u64, set_id: u64, dump_close: Option<u32>, empty: &mut usize) -> SetResult {
    let t0 = Instant::now();
    let n = set.docs.len();
    let mut orig = vec![[0u64; NV]; n];
    let mut pos = vec![[[0u64; NV]; NE]; n];
    let mut words = vec![Vec::new(); n];
    let mut len_change = vec![0f64; NE];
    for i in 0..n {
        let text = &set.docs[i];
        let a = fingerprints(text, false, Some(&mut words[i]), empty);
        let b = fingerprints(text, true, None, empty);
        orig[i][..NW].copy_from_slice(&a);
        orig[i][NW..].copy_from_slice(&b);
        let l0 = nchars(text) as f64;
        for e in 0..NE {
            let mut rng = Rng::new(&[seed, set_id, i as u64, e as u64]);
            let edited = make_edit(e, set, i, pool, &mut rng);
            len_change[e] += (nchars(&edited) as f64 - l0) / l0;
            let a = fingerprints(&edited, false, None, empty);
            let b = fingerprints(&edited, true, None, empty);
            pos[i][e][..NW].copy_from_slice(&a);
            pos[i][e][NW..].copy_from_slice(&b);
        }
        if i % 1000 == 999 {
            eprintln!("  {}: {}/{} docs fingerprinted ({})", set.name, i + 1, n, ftime(t0));
        }
    }
    for x in &mut len_change {
        *x /= n as f64;
    }
    // Sanity: the re-weighting here equals the experiment path for the plain variants, and
    // format 1 is the library's simhash.
    for i in 0..n.min(30) {
        for v in (0..NV).filter(|v| !variant(*v).drop1) {
            let x = variant(v);
            let o = Options {
                tokenizer: Tokenizer { hmm: x.hmm, ..Tokenizer::default() },
                weighting: Weighting { tf: x.tf, unknown_idf: x.unk, ..Weighting::default() },
                ..Options::default()
            };
            let general = experiment::simhash(&set.docs[i], None, &o, &mut no_interrupt).unwrap_or(0);
            assert_eq!(general, orig[i][v], "re-weighted fingerprint differs ({})", variant_name(v));
        }
        let lib = simhash_with(&set.docs[i], &mut no_interrupt).unwrap_or(0);
        assert_eq!(lib, orig[i][default_variant()], "format 1 differs from simhash_with");
    }
    eprintln!("  {}: fingerprints done ({})", set.name, ftime(t0));

    let neg = negatives(&set.docs, &words);
    eprintln!("  {}: negatives selected ({})", set.name, ftime(t0));

    let mut pos_h = vec![vec![[0u64; 65]; NE]; NV];
    for i in 0..n {
        for e in 0..NE {
            for v in 0..NV {
                pos_h[v][e][hamming(orig[i][v], pos[i][e][v]) as usize] += 1;
            }
        }
    }
    let mut rand_h = vec![[0u64; 65]; NV];
    for i in 0..n {
        let a = &orig[i];
        for b in &orig[i + 1..] {
            for v in 0..NV {
                rand_h[v][hamming(a[v], b[v]) as usize] += 1;
            }
        }
    }
    for &(i, j) in &neg.excluded {
        for v in 0..NV {
            rand_h[v][hamming(orig[i as usize][v], orig[j as usize][v]) as usize] -= 1;
        }
    }
    let mut hard_h = vec![[0u64; 65]; NV];
    for &(i, j, _) in &neg.hard {
        for v in 0..NV {
            hard_h[v][hamming(orig[i as usize][v], orig[j as usize][v]) as usize] += 1;
        }
    }
    if let Some(max) = dump_close {
        // The closest "unrelated" pairs under the default parameters, to see what they are.
        let v = default_variant();
        let excluded: std::collections::HashSet<(u32, u32)> = neg.excluded.iter().copied().collect();
        let hard: std::collections::HashSet<(u32, u32)> = neg.hard.iter().map(|x| (x.0, x.1)).collect();
        let head = |t: &str| t.chars().filter(|c| !c.is_whitespace()).take(70).collect::<String>();
        println!("\n## {}: random pairs within {max} bits under {}", set.name, variant_name(v));
        for i in 0..n {
            for j in i + 1..n {
                let d = hamming(orig[i][v], orig[j][v]);
                if d <= max && !excluded.contains(&(i as u32, j as u32)) {
                    let cj = jaccard(&shingles(&set.docs[i]), &shingles(&set.docs[j]));
                    let h = if hard.contains(&(i as u32, j as u32)) { " (hard pair)" } else { "" };
                    println!("d={d} char5-J={cj:.3}{h} len {}/{}", nchars(&set.docs[i]), nchars(&set.docs[j]));
                    println!("   A: {}", head(&set.docs[i]));
                    println!("   B: {}", head(&set.docs[j]));
                }
            }
        }
    }
    let npairs = (n as u64) * (n as u64 - 1) / 2 - neg.excluded.len() as u64;
    let hard_mean_wj = neg.hard.iter().map(|x| x.2).sum::<f64>() / neg.hard.len().max(1) as f64;
    eprintln!("  {}: done ({})", set.name, ftime(t0));
    SetResult {
        name: set.name.clone(),
        ndocs: n,
        pos: pos_h,
        rand: rand_h,
        hard: hard_h,
        npairs,
        excluded: neg.excluded.len(),
        nhard: neg.hard.len(),
        hard_skipped: neg.hard_skipped,
        hard_mean_wj,
        len_change,
    }
}

// ---------------------------------------------------------------------------------------------
// Report.

const KMAX: usize = 16;
/// Edits that count as "a few clauses removed".
const DEL_EDITS: [usize; 2] = [0, 1];

fn pooled(r: &SetResult, v: usize, edits: &[usize]) -> Hist {
    let mut h = [0u64; 65];
    for &e in edits {
        for d in 0..65 {
            h[d] += r.pos[v][e][d];
        }
    }
    h
}

fn f1(recall: f64, fpr: f64) -> f64 {
    if recall <= 0.0 {
        return 0.0;
    }
    let precision = recall / (recall + fpr);
    2.0 * precision * recall / (precision + recall)
}

fn sep_threshold(k: usize) -> usize {
    10.max(2 * k + 1)
}

/// Fraction of random negatives at distance ≥ max(10, 2k+1).
fn sep_frac(h: &Hist, k: usize) -> f64 {
    1.0 - hist_le(h, sep_threshold(k) - 1)
}

fn print_detail(r: &SetResult, v: usize) {
    println!(
        "\n### {} | {} | {} docs; random pairs {} ({} excluded as char5-J>0.5); hard pairs {} (mean content-word J {:.3}, {} duplicate candidates skipped)",
        variant_name(v),
        r.name,
        r.ndocs,
        r.npairs,
        r.excluded,
        r.nhard,
        r.hard_mean_wj,
        r.hard_skipped
    );
    println!(
        "{:<11} {:>6} {:>7} {:>4} {:>4} {:>4} {:>4} {:>4}",
        "edit", "n", "len%", "med", "p90", "p95", "p99", "max"
    );
    for e in 0..NE {
        let h = &r.pos[v][e];
        println!(
            "{:<11} {:>6} {:>+7.1} {:>4} {:>4} {:>4} {:>4} {:>4}",
            EDITS[e],
            h.iter().sum::<u64>(),
            100.0 * r.len_change[e],
            hist_quantile(h, 0.5),
            hist_quantile(h, 0.9),
            hist_quantile(h, 0.95),
            hist_quantile(h, 0.99),
            64 - h.iter().rev().position(|&c| c > 0).unwrap_or(64)
        );
    }
    for (label, h) in [("random neg", &r.rand[v]), ("hard neg", &r.hard[v])] {
        println!(
            "{:<11} {:>10}: min {:>2}  p0.01 {:>2}  p0.1 {:>2}  p1 {:>2}  p5 {:>2}  median {:>2}",
            label,
            h.iter().sum::<u64>(),
            hist_min(h),
            hist_quantile(h, 0.0001),
            hist_quantile(h, 0.001),
            hist_quantile(h, 0.01),
            hist_quantile(h, 0.05),
            hist_quantile(h, 0.5)
        );
    }
    print!("{:>2} {:>6} {:>6}", "k", "recall", "del");
    for e in 0..NE {
        print!(" {:>6}", &EDITS[e][..EDITS[e].len().min(6)]);
    }
    println!(" {:>9} {:>8} {:>6} {:>6} {:>8}", "FPR", "FPRhard", "F1", "F1hard", "sep");
    let all: Vec<usize> = (0..NE).collect();
    let ph = pooled(r, v, &all);
    let dh = pooled(r, v, &DEL_EDITS);
    for k in 0..=KMAX {
        let rec = hist_le(&ph, k);
        let fpr = hist_le(&r.rand[v], k);
        let fprh = hist_le(&r.hard[v], k);
        print!("{:>2} {:>6.3} {:>6.3}", k, rec, hist_le(&dh, k));
        for e in 0..NE {
            print!(" {:>6.3}", hist_le(&r.pos[v][e], k));
        }
        println!(
            " {:>9.2e} {:>8.4} {:>6.3} {:>6.3} {:>8.6}",
            fpr,
            fprh,
            f1(rec, fpr),
            f1(rec, fprh),
            sep_frac(&r.rand[v], k)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut zh = None;
    let mut en = None;
    let mut limit = usize::MAX;
    let mut seed = 1u64;
    let mut detail_all = false;
    let mut dump_close: Option<u32> = None;
    let mut show_edits = 0usize;
    let mut i = 1;
    while i < args.len() {
        let val = || args.get(i + 1).cloned().unwrap_or_else(|| panic!("{} needs a value", args[i]));
        match args[i].as_str() {
            "--zh" => zh = Some(val()),
            "--en" => en = Some(val()),
            "--limit" => limit = val().parse().expect("--limit N"),
            "--seed" => seed = val().parse().expect("--seed S"),
            "--dump-close" => dump_close = Some(val().parse().expect("--dump-close D")),
            "--show-edits" => show_edits = val().parse().expect("--show-edits N"),
            "--detail-all" => {
                detail_all = true;
                i += 1;
                continue;
            }
            a => panic!("unknown argument {a}; usage: quality --zh FILE --en FILE [--limit N] [--seed S] [--detail-all] [--dump-close D] [--show-edits N]"),
        }
        i += 2;
    }
    let t0 = Instant::now();
    simdup_core::features::preload();
    let mut sets = Vec::new();
    let mut pool: Vec<char> = Vec::new();
    if let Some(p) = &zh {
        let raw = load(p);
        for (_, b) in &raw {
            pool.extend(b.chars().filter(|&c| is_cjk(c)));
        }
        sets.extend(build_sets("zh", Lang::Zh, &raw, limit, seed));
    }
    if let Some(p) = &en {
        sets.extend(build_sets("en", Lang::En, &load(p), limit, seed));
    }
    if pool.is_empty() {
        pool.extend("的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要她出也得里后自以会".chars());
    }
    eprintln!(
        "loaded ({}); sets: {}",
        ftime(t0),
        sets.iter().map(|s| format!("{} = {}", s.name, s.docs.len())).collect::<Vec<_>>().join(", ")
    );

    if show_edits > 0 {
        // Print the edited copies of the first documents of each set, then stop.
        for (k, s) in sets.iter().enumerate() {
            for i in 0..show_edits.min(s.docs.len()) {
                println!("===== {} doc {i}\n{}", s.name, s.docs[i]);
                for e in 0..NE {
                    let mut rng = Rng::new(&[seed, k as u64, i as u64, e as u64]);
                    println!("--- {}\n{}", EDITS[e], make_edit(e, s, i, &pool, &mut rng));
                }
            }
        }
        return;
    }
    let mut empty = 0usize;
    let results: Vec<SetResult> =
        sets.iter().enumerate().map(|(k, s)| run_set(s, &pool, seed, k as u64, dump_close, &mut empty)).collect();
    eprintln!("all sets done ({}); fingerprints without features: {empty}", ftime(t0));

    println!(
        "# simdup SimHash quality (seed {seed}, limit {})",
        if limit == usize::MAX { "none".into() } else { limit.to_string() }
    );
    println!("edits: {}", EDITS.join(", "));
    println!(
        "del = del5 ∪ del10; recall = all edits pooled; FPR = random pairs (duplicates excluded); F1 on a balanced set"
    );
    println!("sep = fraction of random pairs at distance ≥ max(10, 2k+1); fingerprints without features: {empty}");

    // Summary: one line per variant.
    println!("\n## Summary per variant");
    println!("k95 = smallest k with pooled recall ≥ 0.95 (FPR there); kdel = smallest k with del recall ≥ 0.95 (sep there); F1* = best F1 (at k)");
    print!("{:<36}", "variant");
    for r in &results {
        print!(" | {:<44}", r.name);
    }
    println!();
    for v in 0..NV {
        print!("{:<36}", variant_name(v));
        let all: Vec<usize> = (0..NE).collect();
        for r in &results {
            let ph = pooled(r, v, &all);
            let dh = pooled(r, v, &DEL_EDITS);
            let k95 = (0..=64).find(|&k| hist_le(&ph, k) >= 0.95).unwrap_or(64);
            let kdel = (0..=64).find(|&k| hist_le(&dh, k) >= 0.95).unwrap_or(64);
            let (bf, bk) = (0..=KMAX)
                .map(|k| (f1(hist_le(&ph, k), hist_le(&r.rand[v], k)), k))
                .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
            print!(
                " | k95 {:>2} ({:>7.1e}) kdel {:>2} ({:.4}) F1* {:.3}@{:<2}",
                k95,
                hist_le(&r.rand[v], k95),
                kdel,
                sep_frac(&r.rand[v], kdel),
                bf,
                bk
            );
        }
        println!();
    }

    // Recall / FPR per k, compact, for every variant.
    println!("\n## Recall (all edits pooled) / del recall / FPR random / FPR hard per k");
    for v in 0..NV {
        println!("\n{}", variant_name(v));
        print!("{:>2}", "k");
        for r in &results {
            print!(" | {:^32}", r.name);
        }
        println!();
        let all: Vec<usize> = (0..NE).collect();
        for k in 0..=KMAX {
            print!("{:>2}", k);
            for r in &results {
                let ph = pooled(r, v, &all);
                let dh = pooled(r, v, &DEL_EDITS);
                print!(
                    " | {:.3} {:.3} {:>8.1e} {:>6.4}",
                    hist_le(&ph, k),
                    hist_le(&dh, k),
                    hist_le(&r.rand[v], k),
                    hist_le(&r.hard[v], k)
                );
            }
            println!();
        }
    }

    println!("\n## Details");
    for v in 0..NV {
        let x = variant(v);
        if detail_all || v == default_variant() || !x.hmm {
            for r in &results {
                print_detail(r, v);
            }
        }
    }
    eprintln!("total {}", ftime(t0));
}
