//! MinHash over k-shingles: shingle sets, exact and estimated Jaccard similarity, and LSH band
//! values for a GIN index (`minhash_bands(sig, b, r) && minhash_bands($1, b, r)`).
//!
//! The format (normalization, shingle hashes, permutations, band hash) is defined and versioned
//! in `simdup_core::similarity::minhash`; this module only maps it to SQL:
//!
//! * every `bigint` is the core's `u64` with the same bits, so shingle sets come back sorted as
//!   unsigned numbers, not in `bigint` order (functions taking a stored set re-sort it);
//! * text without shingles (empty or whitespace only; for word shingles, no word or number)
//!   gives NULL, never an empty array or a constant similarity;
//! * bad arguments raise `invalid_parameter_value` (22023) with a hint; NULL elements inside an
//!   array argument raise `null_value_not_allowed` (22004).

use std::cell::RefCell;

use pgrx::prelude::*;

use crate::errors::{invalid_parameter, null_not_allowed};
use simdup_core::similarity::minhash as mh;

use crate::args::{banding, permutations, shingle_size, unit_interval, BANDS_HINT};
pub(crate) use crate::shingles::{char_set, interrupt, pair, short_set_of};

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

/// The values of a `bigint[]` argument as the core's `u64`s (same bits); a NULL element is an
/// error. Multidimensional arrays are read in storage order, as if flattened.
fn values(a: &Array<'_, i64>, what: &str) -> Vec<u64> {
    match a.as_slice() {
        Ok(s) => s.iter().map(|&v| v as u64).collect(),
        Err(_) => null_not_allowed(
            format!("{what} must not contain NULL elements"),
            "Shingle sets and signatures come from shingles(), word_shingles() and minhash(), \
             which never produce NULL elements; use array_remove(a, NULL) on hand-made arrays.",
        ),
    }
}

fn to_bigints(v: Vec<u64>) -> Vec<i64> {
    v.into_iter().map(|x| x as i64).collect()
}

// ---------------------------------------------------------------------------------------------
// Shingles and exact Jaccard
// ---------------------------------------------------------------------------------------------

/// The set of hashes of the character `k`-shingles of the normalized text (NFKC, lower case,
/// whitespace runs as one space), sorted as unsigned 64-bit numbers; NULL when the text is
/// empty or whitespace only. A text shorter than `k` characters is one shingle.
#[pg_extern(sql = "")]
fn shingles(body: &str, k: i32) -> Option<Vec<i64>> {
    let set = char_set(body, shingle_size(k));
    (!set.is_empty()).then(|| to_bigints(set))
}

/// The set of hashes of the word `k`-shingles (jieba words, numbers and English words; other
/// tokens dropped); NULL when the text has no word or number.
#[pg_extern(sql = "")]
fn word_shingles(body: &str, k: i32) -> Option<Vec<i64>> {
    let k = shingle_size(k);
    let set = match mh::word_shingles(body, k, &mut interrupt) {
        Ok(s) => s,
        Err(e) => invalid_parameter(e.to_string(), "k must be between 1 and 256."),
    };
    (!set.is_empty()).then(|| to_bigints(set))
}

/// Exact Jaccard similarity of the character `k`-shingle sets of two texts; NULL when either
/// has no shingles.
#[pg_extern(sql = "")]
pub(crate) fn jaccard(a: &str, b: &str, k: i32) -> Option<f64> {
    char_sets(a, b, shingle_size(k)).map(|(sa, sb)| mh::jaccard(&sa, &sb))
}

/// The overlap of a counter's set with the character `k`-shingle set of `body`
/// ([`mh::char_overlap`]: `Overlap::of(set, &char_set(body, k))`, without sorting).
pub(crate) fn counted_overlap(counter: &mut mh::OverlapCounter, body: &str, k: usize) -> mh::Overlap {
    match mh::char_overlap(counter, body, k, &mut interrupt) {
        Ok(o) => o,
        Err(e) => invalid_parameter(e.to_string(), "k must be between 1 and 256."),
    }
}

/// The character `k`-shingle sets of two texts, None when either has none (the second text is
/// not shingled then).
pub(crate) fn char_sets(a: &str, b: &str, k: usize) -> Option<(Vec<u64>, Vec<u64>)> {
    let sa = char_set(a, k);
    if sa.is_empty() {
        return None;
    }
    let sb = char_set(b, k);
    (!sb.is_empty()).then_some((sa, sb))
}

/// Containment of the character `k`-shingle sets of two texts: the share of the smaller set
/// found in the other (1 when one text contains the other); NULL when either has no shingles.
#[pg_extern(sql = "")]
fn containment(a: &str, b: &str, k: i32) -> Option<f64> {
    char_sets(a, b, shingle_size(k)).map(|(sa, sb)| mh::containment(&sa, &sb))
}

/// Exact Jaccard similarity of two stored shingle sets (any order, duplicates ignored); NULL
/// when either is empty.
#[pg_extern(sql = "")]
fn jaccard_sets(a: Array<'_, i64>, b: Array<'_, i64>) -> Option<f64> {
    let sa = mh::to_set(values(&a, "shingle set"));
    let sb = mh::to_set(values(&b, "shingle set"));
    (!sa.is_empty() && !sb.is_empty()).then(|| mh::jaccard(&sa, &sb))
}

// ---------------------------------------------------------------------------------------------
// Signatures
// ---------------------------------------------------------------------------------------------

/// Texts up to this size are remembered with their signature (one per backend), so that a
/// query repeating `minhash($1)` per row, as a filter `minhash_jaccard(sig, minhash($1)) >= t`
/// does in a generic plan, computes it once.
const MEMO_MAX_BYTES: usize = 64 * 1024;

struct Memo {
    body: String,
    k: i32,
    n: i32,
    sig: Option<Vec<i64>>,
}

thread_local! {
    static LAST: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// The `n`-value MinHash signature of the character `k`-shingles of a text (deterministic:
/// fixed seeds, format `minhash_format_version()`); NULL when the text has no shingles.
///
/// COST 5000: a signature of a 1,200-character article takes about 0.2 ms (measured, 105
/// values), the work of thousands of operators. With the default cost the planner computed the
/// similarity index's expression `_simdup_similar_bands(body, ...)` for every row of a small or
/// unanalyzed table instead of reading the index (the checks of a Citus similarity table on its
/// shards, whose stored rows then cost 0.2 ms each).
#[pg_extern(sql = "")]
pub(crate) fn minhash(body: &str, k: i32, n: i32) -> Option<Vec<i64>> {
    let memo = body.len() <= MEMO_MAX_BYTES;
    if memo {
        let hit = LAST.with_borrow(|last| match last {
            Some(m) if m.k == k && m.n == n && m.body == body => Some(m.sig.clone()),
            _ => None,
        });
        if let Some(sig) = hit {
            return sig;
        }
    }
    let (ku, nu) = (shingle_size(k), permutations(n));
    let set = char_set(body, ku);
    let sig = signature(&set, nu);
    if memo {
        LAST.with_borrow_mut(|last| *last = Some(Memo { body: body.to_owned(), k, n, sig: sig.clone() }));
    }
    sig
}

fn signature(set: &[u64], n: usize) -> Option<Vec<i64>> {
    if set.is_empty() {
        return None;
    }
    match mh::minhash_with(set, n, &mut interrupt) {
        Ok(sig) => Some(to_bigints(sig)),
        Err(e) => invalid_parameter(e.to_string(), "n must be between 1 and 4096."),
    }
}

/// The LSH band values of a text, as [`set_bands`] of its shingle set `set` (non-empty), with
/// the signature remembered as `minhash(body, k, bands * rows)`'s: the similarity index entry
/// of the row the dedup trigger just checked then reuses it instead of signing the text again.
pub(crate) fn text_bands(body: &str, k: usize, set: &[u64], bands: usize, rows: usize) -> Vec<i64> {
    let (sig, out) = signature_bands(set, bands, rows);
    if body.len() <= MEMO_MAX_BYTES {
        let n = (bands * rows) as i32;
        let memo = Memo { body: body.to_owned(), k: k as i32, n, sig: Some(to_bigints(sig)) };
        LAST.with_borrow_mut(|last| *last = Some(memo));
    }
    out
}

/// The LSH band values of a non-empty shingle set, as the similarity index expression
/// `_simdup_similar_bands(body, k, bands, rows)` = `minhash_bands(minhash(body, k, bands *
/// rows), bands, rows)` computes them from the text's set: the dedup trigger's candidates and
/// lock stripes.
pub(crate) fn set_bands(set: &[u64], bands: usize, rows: usize) -> Vec<i64> {
    signature_bands(set, bands, rows).1
}

/// The short bands of a text at `threshold` (None: not a short text): what
/// `_simdup_similar_short_bands(body, threshold)` indexes, and what the trigger and the checked
/// write probe.
pub(crate) fn text_short_bands(body: &str, threshold: f64) -> Option<Vec<i64>> {
    text_short(body, threshold).map(|s| s.bands)
}

/// A text the short-text rule covers, at a threshold: its 3-shingle set and its short bands.
pub(crate) struct ShortText {
    pub(crate) set: Vec<u64>,
    pub(crate) bands: Vec<i64>,
}

/// The text's [`ShortText`] at `threshold`, None for a text that is not short.
pub(crate) fn text_short(body: &str, threshold: f64) -> Option<ShortText> {
    short_set_of(body).map(|set| ShortText { bands: short_bands_of(&set, threshold), set })
}

/// The bands and rows of the short bands at `threshold` (0 < t ≤ 1, checked by the caller).
pub(crate) fn short_banding_of(threshold: f64) -> (usize, usize) {
    simdup_core::similarity::short_banding(threshold)
        .unwrap_or_else(|e| invalid_parameter(e.to_string(), "the similarity threshold must be in (0, 1]."))
}

/// The short bands of a short text's 3-shingle set ([`short_set_of`]) at `threshold`.
fn short_bands_of(set: &[u64], threshold: f64) -> Vec<i64> {
    let (bands, rows) = short_banding_of(threshold);
    simdup_core::similarity::short_bands(set, bands, rows)
        .unwrap_or_else(|e| invalid_parameter(e.to_string(), BANDS_HINT))
}

/// `_simdup_similar_short_bands(body, threshold)`: the LSH band values of the character
/// 3-shingles of a short text (at most 100 distinct 3-shingles, about 100 characters), banded
/// so that two texts of 3-shingle Jaccard similarity `threshold` share one with probability at
/// least 0.99 (72 bands of 4 rows at 0.5); NULL for any other text. The expression of the
/// similarity dedup trigger's second GIN index, which finds the candidates of its short-text
/// rule (simdup_core::similarity).
///
/// COST 2500: a short text's 3-shingles and 288 MinHash values take a few microseconds; the
/// cost keeps the planner off computing it per row (as `minhash`'s).
#[pg_extern(sql = "")]
pub(crate) fn _simdup_similar_short_bands(body: &str, threshold: f64) -> Option<Vec<i64>> {
    text_short_bands(body, crate::args::similarity_target(threshold, 0.5).0)
}

/// The containment keys of a text's k-shingle set at containment threshold `c`
/// ([`simdup_core::similarity::containment_keys`]): what `_simdup_similar_keys(body, k, c)`
/// indexes ([`simdup_core::similarity::Keys::entry`]), and what the trigger and the checked write
/// look up ([`simdup_core::similarity::Keys::probe`]).
pub(crate) fn set_keys(set: &[u64], k: usize, c: f64) -> simdup_core::similarity::Keys {
    simdup_core::similarity::containment_keys(set, k, c)
}

/// The containment index's entry of a text, remembered: (text, k, containment bits, entry).
type KeysMemo = (String, usize, u64, Vec<i64>);

thread_local! {
    /// The containment index's entry of the last text the similarity dedup trigger computed
    /// keys for: the index expression of that row's entry takes it rather than shingle and order
    /// the text again (as [`LAST`] for signatures).
    static LAST_KEYS: RefCell<Option<KeysMemo>> = const { RefCell::new(None) };
}

/// [`set_keys`] of a text's k-shingle set `set`, remembered for the row's index entry (texts up
/// to `MEMO_MAX_BYTES`).
pub(crate) fn text_set_keys(body: &str, set: &[u64], k: usize, c: f64) -> simdup_core::similarity::Keys {
    let keys = set_keys(set, k, c);
    if body.len() <= MEMO_MAX_BYTES {
        LAST_KEYS.with_borrow_mut(|last| *last = Some((body.to_owned(), k, c.to_bits(), keys.entry())));
    }
    keys
}

/// `_simdup_similar_keys(body, k, containment)`: the containment keys of a text's character
/// k-shingles, as the containment index stores them: its sketch (its 32 rarest shingles) and,
/// for a tiny text (fewer than 50 shingles), its containment prefix, each tagged by its role;
/// NULL for text without shingles. The expression of the similarity dedup trigger's third GIN
/// index, which finds the candidates of its containment rule for tiny texts
/// (simdup_core::similarity::Keys). 22023 for a bad k or containment.
///
/// COST 2500, as `_simdup_similar_short_bands`.
#[pg_extern(sql = "")]
pub(crate) fn _simdup_similar_keys(body: &str, k: i32, containment: f64) -> Option<Vec<i64>> {
    let remembered = LAST_KEYS.with_borrow(|last| match last {
        Some((text, lk, lc, entry)) if *lk as i32 == k && *lc == containment.to_bits() && text == body => {
            Some(entry.clone())
        }
        _ => None,
    });
    remembered.or_else(|| text_keys(body, k, containment).map(|keys| keys.entry()))
}

/// The containment keys of a text, with the SQL functions' argument checks (22023 for a bad k
/// or containment); None for text without shingles.
fn text_keys(body: &str, k: i32, containment: f64) -> Option<simdup_core::similarity::Keys> {
    let k = crate::args::shingle_size(k);
    let c = crate::args::containment_threshold(containment);
    let set = char_set(body, k);
    (!set.is_empty()).then(|| set_keys(&set, k, c))
}

/// `_simdup_similar_key_probe(body, k, containment)`: the values a text looks up in the
/// containment index (its prefix among the others' sketches, its sketch among the others'
/// prefixes: [`simdup_core::similarity::Keys::probe`]); `_simdup_similar_key_probe(a, k, c) &&
/// _simdup_similar_keys(b, k, c)` exactly when the containment keys of `a` and `b` meet. NULL
/// for text without shingles. What the trigger and the cross-shard check look up, for tests and
/// for explaining a decision.
#[pg_extern(sql = "")]
pub(crate) fn _simdup_similar_key_probe(body: &str, k: i32, containment: f64) -> Option<Vec<i64>> {
    text_keys(body, k, containment).map(|keys| keys.probe())
}

/// The `bands × rows`-value signature of a non-empty shingle set and its band values.
fn signature_bands(set: &[u64], bands: usize, rows: usize) -> (Vec<u64>, Vec<i64>) {
    let sig = match mh::minhash_with(set, bands * rows, &mut interrupt) {
        Ok(sig) => sig,
        Err(e) => invalid_parameter(e.to_string(), BANDS_HINT),
    };
    match mh::bands(&sig, bands, rows) {
        Ok(v) => (sig, v),
        Err(e) => invalid_parameter(e.to_string(), BANDS_HINT),
    }
}

/// The `n`-value MinHash signature of a stored shingle set, e.g. `minhash(word_shingles(body))`
/// (order and duplicates do not matter); NULL for an empty set.
#[pg_extern(sql = "")]
fn minhash_set(shingles: Array<'_, i64>, n: i32) -> Option<Vec<i64>> {
    let n = permutations(n);
    signature(&values(&shingles, "shingle set"), n)
}

/// Estimated Jaccard similarity of two signatures: the fraction of positions where they agree.
/// Signatures of different lengths are an error; two empty ones give NULL.
#[pg_extern(sql = "")]
fn minhash_jaccard(a: Array<'_, i64>, b: Array<'_, i64>) -> Option<f64> {
    let (a, b) = (values(&a, "signature"), values(&b, "signature"));
    crate::args::same_signature_length(a.len(), b.len());
    mh::minhash_jaccard(&a, &b)
}

/// Version of the MinHash format (normalization, shingle hashes, permutations, band hash)
/// computed by this build; stored shingle sets, signatures and band indexes made by another
/// version must be recomputed.
#[pg_extern(sql = "")]
fn minhash_format_version() -> i32 {
    mh::MINHASH_FORMAT_VERSION
}

// ---------------------------------------------------------------------------------------------
// LSH bands
// ---------------------------------------------------------------------------------------------

/// The `bands` band values of a signature (band j hashes values j·rows .. (j+1)·rows − 1; values
/// past bands × rows are unused). Two signatures share a band value (`&&`) with probability
/// `minhash_s_curve(J, bands, rows)`; index the expression with GIN.
#[pg_extern(sql = "")]
pub(crate) fn minhash_bands(sig: Array<'_, i64>, bands: i32, rows: i32) -> Vec<i64> {
    let sig = values(&sig, "signature");
    let (b, r) = banding(bands, rows, sig.len());
    match mh::bands(&sig, b, r) {
        Ok(v) => v,
        Err(e) => invalid_parameter(e.to_string(), BANDS_HINT),
    }
}

/// Probability that two documents of Jaccard similarity `similarity` share at least one band
/// value: `1 − (1 − similarity^rows)^bands` (the LSH "S-curve").
#[pg_extern(sql = "")]
fn minhash_s_curve(similarity: f64, bands: i32, rows: i32) -> f64 {
    let j = unit_interval("similarity", similarity, false);
    let (b, r) = banding(bands, rows, usize::MAX);
    mh::s_curve(j, b, r)
}

/// Bands × rows for signatures of `n` values and a Jaccard `threshold`: the pair minimizing the
/// false-positive plus false-negative area under the S-curve, with its approximate threshold
/// `(1/bands)^(1/rows)` where the curve is steepest.
#[pg_extern(sql = "")]
fn minhash_choose_bands(
    n: i32,
    threshold: f64,
) -> TableIterator<'static, (name!(bands, i32), name!(rows, i32), name!(approx_threshold, f64))> {
    let n = permutations(n);
    let t = unit_interval("threshold", threshold, true);
    let (b, r) = match mh::choose_bands(n, t) {
        Ok(br) => br,
        Err(e) => invalid_parameter(e.to_string(), BANDS_HINT),
    };
    TableIterator::once((b as i32, r as i32, mh::band_threshold(b, r)))
}
