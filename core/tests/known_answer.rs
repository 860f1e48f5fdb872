//! Known-answer test on hand-written fixtures (`tests/fixtures/`).
//!
//! For each language, `NN.txt` is an original news-like paragraph and `NN.edited.txt` the same
//! paragraph touched up as a person re-posting it would: 2–3 clauses removed (about 8–12 % of
//! the characters), one or two words changed.
//!
//! Known answers:
//! * every edited copy is a near-duplicate candidate of its original: distance ≤ the crate's
//!   [`DEFAULT_MAX_DISTANCE`] k;
//! * any two different paragraphs are far apart: distance ≥ 2 · 10 + 1. This is the separation
//!   fingerprint format 1 was chosen for (at k = 10, deciding by the distance alone); it is a
//!   property of the fingerprint, not of the default k, which verification of the candidates
//!   made 11 (docs/quality.md, "Precision as the table grows").
//!
//! Run with `cargo test --test known_answer -- --nocapture` to see the distance tables.

use std::fs;
use std::path::PathBuf;

use simdup_core::{hamming, simhash, DEFAULT_MAX_DISTANCE};

fn fixture(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn fp(name: &str, text: &str) -> u64 {
    simhash(text).unwrap_or_else(|| panic!("{name}: no fingerprint"))
}

/// The k the fingerprint format's separation of unrelated texts was chosen at.
const SEPARATION_K: u32 = 10;

/// Smallest distance required between unrelated paragraphs for a given k.
fn unrelated_floor(k: u32) -> u32 {
    10.max(2 * k + 1)
}

fn median(sorted: &[u32]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        f64::from(sorted[n / 2])
    } else {
        (f64::from(sorted[n / 2 - 1]) + f64::from(sorted[n / 2])) / 2.0
    }
}

/// Checks language `lang` (fixtures `lang/01.txt` … `lang/NN.txt`), prints its distance table
/// and panics listing every violation.
fn check_language(lang: &str, n: usize) {
    let k = DEFAULT_MAX_DISTANCE;
    let floor = unrelated_floor(SEPARATION_K);

    let mut originals = Vec::with_capacity(n);
    let mut edited = Vec::with_capacity(n);
    for i in 1..=n {
        let a = format!("{lang}/{i:02}.txt");
        let b = format!("{lang}/{i:02}.edited.txt");
        originals.push(fp(&a, &fixture(&a)));
        edited.push(fp(&b, &fixture(&b)));
    }

    let mut failures = Vec::new();

    eprintln!("== {lang}: k = DEFAULT_MAX_DISTANCE = {k}, unrelated floor = {floor} (2 · {SEPARATION_K} + 1)");
    let mut edited_d = Vec::with_capacity(n);
    for i in 0..n {
        let d = hamming(originals[i], edited[i]);
        edited_d.push(d);
        let verdict = if d <= k { "ok" } else { "FAIL" };
        eprintln!(
            "{lang}/{:02}: fp {:016x}  edited {:016x}  distance {d:2}  {verdict}",
            i + 1,
            originals[i],
            edited[i]
        );
        if d > k {
            failures.push(format!("{lang}/{:02} vs its edited copy: distance {d} > k = {k}", i + 1));
        }
    }

    let mut unrelated = Vec::new();
    eprintln!("{lang}: distances between different originals (row NN, column MM):");
    let header: String = (1..=n).map(|j| format!(" {j:02}")).collect();
    eprintln!("     {header}");
    for i in 0..n {
        let mut row = format!("  {:02} ", i + 1);
        for j in 0..n {
            if j <= i {
                row.push_str("  .");
                continue;
            }
            let d = hamming(originals[i], originals[j]);
            row.push_str(&format!(" {d:2}"));
            unrelated.push(d);
            if d < floor {
                failures.push(format!(
                    "{lang}/{:02} vs {lang}/{:02}: distance {d} < 2 · {SEPARATION_K} + 1 = {floor}",
                    i + 1,
                    j + 1
                ));
            }
        }
        eprintln!("{row}");
    }
    unrelated.sort_unstable();

    let max_edited = edited_d.iter().copied().max().unwrap_or(0);
    let min_unrelated = unrelated.first().copied().unwrap_or(64);
    eprintln!("{lang}: edited distances {edited_d:?} (max {max_edited})");
    eprintln!(
        "{lang}: unrelated distances: min {min_unrelated}, median {}, max {} over {} pairs",
        median(&unrelated),
        unrelated.last().copied().unwrap_or(0),
        unrelated.len()
    );
    // The smallest k for which both known answers hold on these fixtures, if any.
    match (0..=64u32).find(|&kk| max_edited <= kk && min_unrelated >= unrelated_floor(kk)) {
        Some(kk) => eprintln!("{lang}: smallest k that passes: {kk}"),
        None => eprintln!("{lang}: no k passes (edited max {max_edited}, unrelated min {min_unrelated})"),
    }

    assert!(
        failures.is_empty(),
        "{lang}: {} known-answer failure(s) at k = {k}:\n  {}\nedited distances: {edited_d:?}; \
         unrelated min {min_unrelated}, median {}",
        failures.len(),
        failures.join("\n  "),
        median(&unrelated)
    );
}

#[test]
fn zh_edited_copies_are_near_and_unrelated_are_far() {
    check_language("zh", 10);
}

#[test]
fn en_edited_copies_are_near_and_unrelated_are_far() {
    check_language("en", 5);
}

/// The mixed fixture (full-width letters and digits, emoji, a URL) has a fingerprint, and its
/// full-width forms are folded by normalization. Prints the value, for golden vectors.
#[test]
fn mixed_fixture_fingerprint() {
    let text = fixture("mixed.txt");
    let f = fp("mixed.txt", &text);
    eprintln!("mixed.txt: simhash {f:016x} ({})", f as i64);
    let half_width = text
        .replace('２', "2")
        .replace('０', "0")
        .replace('４', "4")
        .replace('１', "1")
        .replace('５', "5")
        .replace('９', "9")
        .replace('３', "3")
        .replace("ＡＩ", "AI")
        .replace("ＬＬＭ", "LLM")
        .replace("Ｒｏｂｏｔｉｃｓ", "Robotics");
    assert_ne!(half_width, text);
    assert_eq!(simhash(&half_width), Some(f), "full-width and half-width forms must fingerprint alike");
}
