//! MinHash (Broder 1997) over character or word shingles, with LSH banding.
//!
//! # Storage format (version [`MINHASH_FORMAT_VERSION`])
//!
//! Shingle sets, signatures and band values are meant to be stored in table columns and
//! compared with values computed later, by other versions of this crate, on other platforms.
//! Everything below is therefore part of a fixed format; all arithmetic is on integers
//! (wrapping `u64`), all byte strings are UTF-8 or little-endian, so results do not depend on
//! the platform. Any change to any of it must bump [`MINHASH_FORMAT_VERSION`].
//!
//! 1. **Normalization** ([`crate::normalize`]): Unicode NFKC, then lower case. Long texts are
//!    processed in pieces of about [`CHUNK_BYTES`] cut where normalization cannot join
//!    characters ([`crate::normalize::chunks`]); results do not depend on where the cuts fall.
//!    (Caveat shared with SimHash: a run of over 16 × [`CHUNK_BYTES`] without whitespace or
//!    sentence punctuation is cut at a character boundary, which could split a jieba word or
//!    a non-combining NFKC composition such as half-width katakana + U+FF9E, or Hangul jamo.)
//! 2. **Character shingles** ([`shingles`]): in the normalized text every maximal run of
//!    whitespace (Unicode `White_Space`, [`char::is_whitespace`]) becomes one U+0020 space, and
//!    leading and trailing whitespace is dropped. Every other character (punctuation included)
//!    is kept. A shingle is `k` consecutive characters (Unicode scalar values) of the result;
//!    its hash is `xxh3_64_with_seed(utf8_bytes, SHINGLE_SEED)`. A non-empty result shorter
//!    than `k` characters is one shingle (the whole result); an empty one has no shingles.
//! 3. **Word shingles** ([`word_shingles`]): the normalized text is segmented with jieba
//!    (default dictionary, HMM off, as for SimHash) and only feature tokens
//!    ([`crate::tokens::is_feature_token`]: at least one letter or digit) are kept. A
//!    shingle is `k` consecutive tokens joined with [`WORD_SEPARATOR`] (U+001F, which no
//!    feature token contains: jieba emits it as a token of its own); its hash is
//!    `xxh3_64_with_seed(utf8_bytes, WORD_SHINGLE_SEED)`. Fewer than `k` (but some) tokens
//!    are one shingle (all of them, joined); no token, no shingles.
//! 4. **Shingle sets** are sorted ascending as `u64` and deduplicated. (Stored as PostgreSQL
//!    `bigint`, i.e. the same bits read as `i64`, they are no longer in `bigint` order: use
//!    [`to_set`] on values that come back.)
//! 5. **Permutations** ([`minhash`]): permutation `i` (0-based) is
//!    `h_i(x) = mix64(x ^ seed_i)`, where [`mix64`] is the SplitMix64 finalizer (a bijection
//!    of `u64`) and `seed_i` is the `(i+1)`-th output of SplitMix64 started at
//!    [`MINHASH_SEED`]: `state_i = MINHASH_SEED + (i+1)·0x9E3779B97F4A7C15 (mod 2^64)`,
//!    `seed_i = mix64(state_i)` ([`permutation_seeds`]). Signature position `i` is
//!    `min_{x ∈ set} h_i(x)`. Signatures of different lengths share their prefixes: the first
//!    64 values of a 128-value signature are the 64-value signature.
//! 6. **Bands** ([`bands`]): band `j` is `xxh3_64_with_seed(bytes, BAND_SEED)` read as `i64`,
//!    where `bytes` is `j` as a little-endian `u64` followed by `sig[j·rows .. (j+1)·rows]`, each
//!    value a little-endian `u64`.
//!
//! # Estimates
//!
//! For sets A and B, each signature position agrees with probability J(A, B) (exactly for a
//! truly random permutation; `h_i` is a fixed bijection, which tests show behaves like one).
//! The fraction of agreeing positions of two n-value signatures ([`minhash_jaccard`])
//! estimates J with standard deviation √(J(1−J)/n): about 0.044 at J = 0.5, n = 128.
//! Because `h_i` is a bijection, disjoint sets never agree anywhere (estimate exactly 0) and
//! equal sets agree everywhere (estimate exactly 1).
//!
//! With b bands of r rows, two documents share at least one band value with probability
//! [`s_curve`]`(J, b, r) = 1 − (1 − J^r)^b`, which rises steeply around J ≈ (1/b)^(1/r)
//! ([`band_threshold`]); [`choose_bands`] picks b and r for a target threshold.

use std::collections::VecDeque;
use std::fmt;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::normalize::{chunks, normalize_into};
use crate::tokens::for_each_token_in;
use crate::Interrupt;

pub use crate::hash::{mix64, MIX_C1, MIX_C2, SPLITMIX_GAMMA};
pub use crate::similarity::overlap::{containment, intersection_size, jaccard, Overlap, OverlapCounter};
pub use crate::tokens::CHUNK_BYTES;

/// Version of the MinHash format (normalization, whitespace rule, shingle hashes, permutation
/// family and seeds, band hash: see the module documentation). Any change to any of them
/// changes stored shingles, signatures or bands and must bump this number.
pub const MINHASH_FORMAT_VERSION: i32 = 1;

/// Seed of the xxh3-64 hash of a character shingle. Part of the format.
pub const SHINGLE_SEED: u64 = 0x7369_6d64_7570_0002; // "simdup" 0002

/// Seed of the xxh3-64 hash of a word shingle. Part of the format. It differs from
/// [`SHINGLE_SEED`] so that a word set and a character set never share values by construction.
pub const WORD_SHINGLE_SEED: u64 = 0x7369_6d64_7570_0003; // "simdup" 0003

/// Start of the SplitMix64 sequence giving the permutation seeds. Part of the format.
pub const MINHASH_SEED: u64 = 0x7369_6d64_7570_0004; // "simdup" 0004

/// Seed of the xxh3-64 hash of a band. Part of the format.
pub const BAND_SEED: u64 = 0x7369_6d64_7570_0005; // "simdup" 0005

/// Separator between the tokens of a word shingle (U+001F UNIT SEPARATOR).
pub const WORD_SEPARATOR: char = '\u{1f}';

/// Largest shingle size `k` accepted (characters or words).
pub const MAX_SHINGLE_SIZE: usize = 256;

/// Largest number of permutations (signature length) accepted.
pub const MAX_PERMUTATIONS: usize = 4096;

/// [`minhash_with`] calls its interrupt callback once per this many shingles.
const MINHASH_INTERRUPT_EVERY: usize = 16 * 1024;

/// The shingle list being collected is sorted and deduplicated whenever it reaches twice its
/// size after the previous compaction (and at least this many values), so memory stays within
/// about twice the number of distinct shingles plus one chunk.
const COMPACT_MIN: usize = 64 * 1024;

/// Steps of the midpoint rule in [`choose_bands`]' error integrals.
const CHOOSE_STEPS: usize = 128;

/// A bad argument, reported (never a panic) so that the SQL layer can raise an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MinHashError {
    /// Shingle size `k` outside `1..=MAX_SHINGLE_SIZE`.
    ShingleSize(usize),
    /// Number of permutations `n` outside `1..=MAX_PERMUTATIONS`.
    Permutations(usize),
    /// `bands` or `rows` is 0, or `bands × rows` exceeds the signature length `len`.
    Bands {
        /// Requested bands.
        bands: usize,
        /// Requested rows per band.
        rows: usize,
        /// Signature length.
        len: usize,
    },
    /// Similarity threshold not in `(0, 1]`.
    Threshold(f64),
    /// Recall target not strictly between 0 and 1.
    Recall(f64),
    /// No `bands × rows ≤ n` reaches the recall target at the threshold.
    RecallUnreachable {
        /// Signature length available.
        n: usize,
        /// Jaccard threshold.
        threshold: f64,
        /// Recall target.
        recall: f64,
    },
}

impl fmt::Display for MinHashError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MinHashError::ShingleSize(k) => {
                write!(f, "shingle size must be between 1 and {MAX_SHINGLE_SIZE}, got {k}")
            }
            MinHashError::Permutations(n) => {
                write!(f, "number of permutations must be between 1 and {MAX_PERMUTATIONS}, got {n}")
            }
            MinHashError::Bands { bands, rows, len } => {
                if bands == 0 || rows == 0 {
                    write!(f, "bands and rows must be at least 1, got {bands} bands of {rows} rows")
                } else {
                    write!(
                        f,
                        "{bands} bands of {rows} rows need {} signature values, the signature has {len}",
                        bands.saturating_mul(rows)
                    )
                }
            }
            MinHashError::Threshold(t) => write!(f, "threshold must be in (0, 1], got {t}"),
            MinHashError::Recall(r) => write!(f, "recall must be strictly between 0 and 1, got {r}"),
            MinHashError::RecallUnreachable { n, threshold, recall } => write!(
                f,
                "no banding of {n} signature values finds pairs of similarity {threshold} with probability {recall}"
            ),
        }
    }
}

impl std::error::Error for MinHashError {}

/// Checks a shingle size: `1 ≤ k ≤ MAX_SHINGLE_SIZE`.
pub fn check_shingle_size(k: usize) -> Result<(), MinHashError> {
    if (1..=MAX_SHINGLE_SIZE).contains(&k) {
        Ok(())
    } else {
        Err(MinHashError::ShingleSize(k))
    }
}

/// Checks a number of permutations: `1 ≤ n ≤ MAX_PERMUTATIONS`.
pub fn check_permutations(n: usize) -> Result<(), MinHashError> {
    if (1..=MAX_PERMUTATIONS).contains(&n) {
        Ok(())
    } else {
        Err(MinHashError::Permutations(n))
    }
}

/// Checks a banding of a signature of length `len`: `bands, rows ≥ 1`, `bands × rows ≤ len`.
pub fn check_bands(bands: usize, rows: usize, len: usize) -> Result<(), MinHashError> {
    match bands.checked_mul(rows) {
        Some(used) if bands > 0 && rows > 0 && used <= len => Ok(()),
        _ => Err(MinHashError::Bands { bands, rows, len }),
    }
}

/// Checks a Jaccard similarity threshold: `0 < t ≤ 1` (NaN rejected).
pub fn check_threshold(t: f64) -> Result<(), MinHashError> {
    if t > 0.0 && t <= 1.0 {
        Ok(())
    } else {
        Err(MinHashError::Threshold(t))
    }
}

// ---------------------------------------------------------------------------------------------
// Shingles
// ---------------------------------------------------------------------------------------------

/// Sorts and deduplicates `v` in place once it has grown enough since the last time.
fn compact(v: &mut Vec<u64>, next: &mut usize) {
    if v.len() >= *next {
        v.sort_unstable();
        v.dedup();
        *next = v.len().saturating_mul(2).max(COMPACT_MIN);
    }
}

/// Makes a shingle set out of any list of hashes: sorted ascending as `u64`, deduplicated.
pub fn to_set(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether `v` is a set as [`jaccard`] expects: strictly ascending as `u64`.
pub fn is_set(v: &[u64]) -> bool {
    v.windows(2).all(|w| w[0] < w[1])
}

/// The set of hashes of the character `k`-shingles of `text` (format in the
/// [module documentation](self)): sorted, deduplicated, empty for empty or whitespace-only
/// text. Calls `interrupt` before each piece of input (about [`CHUNK_BYTES`]; at most 16 times that).
pub fn shingles(text: &str, k: usize, interrupt: Interrupt<'_>) -> Result<Vec<u64>, MinHashError> {
    check_shingle_size(k)?;
    Ok(char_shingles_in(text, k, CHUNK_BYTES, interrupt))
}

/// The [`Overlap`] of `counter`'s set with the character `k`-shingle set of `text`:
/// `Overlap::of(set, &shingles(text, k))`, without building and sorting the text's set (see
/// [`OverlapCounter`]). Calls `interrupt` as [`shingles`] does.
pub fn char_overlap(
    counter: &mut OverlapCounter,
    text: &str,
    k: usize,
    interrupt: Interrupt<'_>,
) -> Result<Overlap, MinHashError> {
    check_shingle_size(k)?;
    Ok(char_overlap_in(counter, text, k, CHUNK_BYTES, interrupt))
}

/// [`char_overlap`] with a chosen piece size.
fn char_overlap_in(
    counter: &mut OverlapCounter,
    text: &str,
    k: usize,
    piece_bytes: usize,
    interrupt: Interrupt<'_>,
) -> Overlap {
    counter.count(|sink| for_each_char_shingle(text, k, piece_bytes, interrupt, sink))
}

/// The hashes of `text`'s character `k`-shingles in text order, repeats included (the values
/// whose set [`shingles`] gives). Calls `interrupt` as [`shingles`] does.
pub fn sequence(text: &str, k: usize, interrupt: Interrupt<'_>) -> Result<Vec<u64>, MinHashError> {
    check_shingle_size(k)?;
    let mut out = Vec::new();
    for_each_char_shingle(text, k, CHUNK_BYTES, interrupt, |h| out.push(h));
    Ok(out)
}

/// Where a run of shingles stands in a text: what rule 2's footer test reads
/// ([`crate::similarity::is_footer`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The first shingle position of the text where `head` appears in order, if it does.
    pub start: Option<usize>,
    /// Whether the text's last shingles are `tail`, in order.
    pub ends_with: bool,
}

/// The [`Placement`] of the runs `head` and `tail` (shingle hashes in text order, of one length)
/// in the character `k`-shingles of `text`, in one pass over it. Calls `interrupt` as
/// [`shingles`] does.
pub fn placement(
    head: &[u64],
    tail: &[u64],
    text: &str,
    k: usize,
    interrupt: Interrupt<'_>,
) -> Result<Placement, MinHashError> {
    check_shingle_size(k)?;
    let w = head.len();
    let mut window = std::collections::VecDeque::with_capacity(w + 1);
    let (mut at, mut start) = (0usize, None);
    for_each_char_shingle(text, k, CHUNK_BYTES, interrupt, |h| {
        window.push_back(h);
        if window.len() > w {
            window.pop_front();
        }
        at += 1;
        if start.is_none() && w > 0 && window.len() == w && window.iter().eq(head) {
            start = Some(at - w);
        }
    });
    let ends_with = w > 0 && tail.len() == w && window.len() == w && window.iter().eq(tail);
    Ok(Placement { start, ends_with })
}

/// [`shingles`] with a chosen piece size (the result does not depend on it).
pub(crate) fn char_shingles_in(text: &str, k: usize, piece_bytes: usize, interrupt: Interrupt<'_>) -> Vec<u64> {
    let mut out = Vec::new();
    let mut next_compact = COMPACT_MIN;
    for_each_char_shingle(text, k, piece_bytes, interrupt, |h| {
        out.push(h);
        compact(&mut out, &mut next_compact);
    });
    to_set(out)
}

/// Calls `sink` with the hash of each character `k`-shingle of `text`, in text order, repeats
/// included: the walk behind [`shingles`] (whose set is exactly the values passed here).
fn for_each_char_shingle(
    text: &str,
    k: usize,
    piece_bytes: usize,
    interrupt: Interrupt<'_>,
    mut sink: impl FnMut(u64),
) {
    let mut norm = String::new();
    // The whitespace-collapsed text not yet fully shingled: the last k−1 characters of the
    // previous pieces, then the current piece. `starts` has the byte offset of each character.
    let mut win = String::new();
    let mut starts: Vec<usize> = Vec::new();
    // A whitespace run seen after some character, not yet written (it is written as one space
    // before the next character, so trailing whitespace is never written).
    let mut pending_space = false;
    let mut started = false;
    let mut any_full = false;
    for piece in chunks(text, piece_bytes) {
        interrupt();
        normalize_into(piece, &mut norm);
        for c in norm.chars() {
            if c.is_whitespace() {
                pending_space = started;
                continue;
            }
            if pending_space {
                starts.push(win.len());
                win.push(' ');
                pending_space = false;
            }
            starts.push(win.len());
            win.push(c);
            started = true;
        }
        let n = starts.len();
        if n >= k {
            any_full = true;
            for i in 0..=n - k {
                let end = starts.get(i + k).copied().unwrap_or(win.len());
                sink(xxh3_64_with_seed(&win.as_bytes()[starts[i]..end], SHINGLE_SEED));
            }
            // Keep the last k−1 characters: every later shingle starting in them also contains
            // a later character, so no shingle is hashed twice and none is missed.
            let first_kept = n + 1 - k;
            let cut = starts.get(first_kept).copied().unwrap_or(win.len());
            win.drain(..cut);
            starts.drain(..first_kept);
            for s in &mut starts {
                *s -= cut;
            }
        }
    }
    if !any_full && !win.is_empty() {
        // Shorter than k: the whole (collapsed) text is the one shingle.
        sink(xxh3_64_with_seed(win.as_bytes(), SHINGLE_SEED));
    }
}

/// The set of hashes of the word `k`-shingles of `text` (format in the
/// [module documentation](self)): sorted, deduplicated, empty when `text` has no feature token.
/// Calls `interrupt` before each piece of input (about [`CHUNK_BYTES`]; at most 16 times that).
pub fn word_shingles(text: &str, k: usize, interrupt: Interrupt<'_>) -> Result<Vec<u64>, MinHashError> {
    check_shingle_size(k)?;
    Ok(word_shingles_in(text, k, CHUNK_BYTES, interrupt))
}

fn join_into(key: &mut String, words: &VecDeque<String>) {
    key.clear();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            key.push(WORD_SEPARATOR);
        }
        key.push_str(w);
    }
}

/// [`word_shingles`] with a chosen piece size.
pub(crate) fn word_shingles_in(text: &str, k: usize, piece_bytes: usize, interrupt: Interrupt<'_>) -> Vec<u64> {
    let mut out = Vec::new();
    let mut next_compact = COMPACT_MIN;
    let mut norm = String::new();
    let mut key = String::new();
    // The last (up to) k feature tokens, across pieces.
    let mut window: VecDeque<String> = VecDeque::with_capacity(k);
    let mut total = 0usize;
    for_each_token_in(text, piece_bytes, &mut norm, interrupt, |token| {
        let mut slot = if window.len() == k { window.pop_front().unwrap_or_default() } else { String::new() };
        slot.clear();
        slot.push_str(token);
        window.push_back(slot);
        total = total.saturating_add(1);
        if window.len() == k {
            join_into(&mut key, &window);
            out.push(xxh3_64_with_seed(key.as_bytes(), WORD_SHINGLE_SEED));
            compact(&mut out, &mut next_compact);
        }
    });
    if total > 0 && total < k {
        join_into(&mut key, &window);
        out.push(xxh3_64_with_seed(key.as_bytes(), WORD_SHINGLE_SEED));
    }
    to_set(out)
}

// ---------------------------------------------------------------------------------------------
// MinHash
// ---------------------------------------------------------------------------------------------

/// The first `n` permutation seeds: `seed_i = mix64(MINHASH_SEED + (i+1)·SPLITMIX_GAMMA)`.
pub fn permutation_seeds(n: usize) -> Vec<u64> {
    let mut state = MINHASH_SEED;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(SPLITMIX_GAMMA);
            mix64(state)
        })
        .collect()
}

/// Permutation `h(x) = mix64(x ^ seed)` (the reference definition; [`minhash`] computes the
/// same values faster).
#[inline]
pub fn permute(x: u64, seed: u64) -> u64 {
    mix64(x ^ seed)
}

/// The `n`-value MinHash signature of a set of shingle hashes (format in the
/// [module documentation](self)). Order and duplicates in `shingles` do not matter. An empty
/// set gives an empty signature (the SQL layer maps it to NULL).
pub fn minhash(shingles: &[u64], n: usize) -> Result<Vec<u64>, MinHashError> {
    minhash_with(shingles, n, &mut crate::no_interrupt)
}

/// [`minhash`], calling `interrupt` every 16 Ki shingles.
pub fn minhash_with(shingles: &[u64], n: usize, interrupt: Interrupt<'_>) -> Result<Vec<u64>, MinHashError> {
    check_permutations(n)?;
    if shingles.is_empty() {
        return Ok(Vec::new());
    }
    // The first xor-shift of mix64 is linear over GF(2):
    //   (x ^ s) ^ ((x ^ s) >> 30) = (x ^ (x >> 30)) ^ (s ^ (s >> 30)),
    // so it is applied once per shingle and once per seed instead of once per pair.
    let pre: Vec<u64> = permutation_seeds(n).into_iter().map(|s| s ^ (s >> 30)).collect();
    let mut sig = vec![u64::MAX; n];
    for block in shingles.chunks(MINHASH_INTERRUPT_EVERY) {
        interrupt();
        kernel(block, &pre, &mut sig);
    }
    Ok(sig)
}

/// `sig[i] = min(sig[i], min_x mix64(x ^ seed_i))` with `pre[i] = seed_i ^ (seed_i >> 30)`.
#[inline(always)]
fn kernel_body(xs: &[u64], pre: &[u64], sig: &mut [u64]) {
    // Shingles outer, permutations inner: the inner loop is straight-line integer code over
    // two arrays, which the compiler vectorizes.
    for &x in xs {
        let xx = x ^ (x >> 30);
        for (m, &p) in sig.iter_mut().zip(pre) {
            let mut z = (xx ^ p).wrapping_mul(MIX_C1);
            z = (z ^ (z >> 27)).wrapping_mul(MIX_C2);
            z ^= z >> 31;
            *m = (*m).min(z);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn kernel_avx512(xs: &[u64], pre: &[u64], sig: &mut [u64]) {
    kernel_body(xs, pre, sig)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn kernel_avx2(xs: &[u64], pre: &[u64], sig: &mut [u64]) {
    kernel_body(xs, pre, sig)
}

fn kernel(xs: &[u64], pre: &[u64], sig: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512dq") && std::arch::is_x86_feature_detected!("avx512vl") {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { kernel_avx512(xs, pre, sig) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above), the feature the function is
            // compiled for.
            return unsafe { kernel_avx2(xs, pre, sig) };
        }
    }
    kernel_body(xs, pre, sig)
}

/// The estimated Jaccard similarity of two signatures: the fraction of positions where they
/// agree. `None` when their lengths differ or are 0 (no estimate).
pub fn minhash_jaccard(a: &[u64], b: &[u64]) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let same: usize = a.iter().zip(b).map(|(x, y)| usize::from(x == y)).sum();
    Some(same as f64 / a.len() as f64)
}

// ---------------------------------------------------------------------------------------------
// Banding (LSH)
// ---------------------------------------------------------------------------------------------

/// The `bands` band values of a signature, for a GIN index on `bigint[]` queried with `&&`:
/// band `j` is the xxh3-64 hash (seed [`BAND_SEED`]) of `j` and `sig[j·rows .. (j+1)·rows]`,
/// all as little-endian `u64`, read as `i64`. Hashing `j` in keeps equal rows in different
/// bands from giving equal values. Signature values past `bands × rows` are not used.
/// An error when `bands` or `rows` is 0 or `bands × rows > sig.len()`.
pub fn bands(sig: &[u64], bands: usize, rows: usize) -> Result<Vec<i64>, MinHashError> {
    check_bands(bands, rows, sig.len())?;
    let mut buf: Vec<u8> = Vec::with_capacity(8 * (rows + 1));
    let out = sig
        .chunks_exact(rows)
        .take(bands)
        .enumerate()
        .map(|(j, rows)| {
            buf.clear();
            buf.extend_from_slice(&(j as u64).to_le_bytes());
            for v in rows {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            xxh3_64_with_seed(&buf, BAND_SEED) as i64
        })
        .collect();
    Ok(out)
}

/// `x^e` by repeated squaring: only multiplications, so the same on every platform.
fn powu(mut x: f64, mut e: usize) -> f64 {
    let mut acc = 1.0;
    while e > 0 {
        if e & 1 == 1 {
            acc *= x;
        }
        x *= x;
        e >>= 1;
    }
    acc
}

/// Probability that two documents of Jaccard similarity `j` share at least one of `bands`
/// bands of `rows` rows: `1 − (1 − j^rows)^bands`.
pub fn s_curve(j: f64, bands: usize, rows: usize) -> f64 {
    let j = j.clamp(0.0, 1.0);
    1.0 - powu(1.0 - powu(j, rows), bands)
}

/// The similarity where [`s_curve`] rises most steeply, approximately: `(1/bands)^(1/rows)`.
pub fn band_threshold(bands: usize, rows: usize) -> f64 {
    (1.0 / bands.max(1) as f64).powf(1.0 / rows.max(1) as f64)
}

/// Chooses `(bands, rows)` with `bands × rows ≤ n` for a Jaccard threshold `t`: among all such
/// pairs, the one minimizing the false-positive plus false-negative area,
/// `∫₀ᵗ s_curve(j) dj + ∫ₜ¹ (1 − s_curve(j)) dj` (as datasketch's `MinHashLSH` does; midpoint rule,
/// 128 steps; ties go to the pair found first, rows then bands ascending). The curve of the
/// result rises around `t` (its [`band_threshold`] is close to `t`) as steeply as `n` allows.
/// Deterministic (integer powers only). An error when `n` or `t` is out of range.
pub fn choose_bands(n: usize, t: f64) -> Result<(usize, usize), MinHashError> {
    check_permutations(n)?;
    check_threshold(t)?;
    let step = 1.0 / CHOOSE_STEPS as f64;
    let grid: Vec<f64> = (0..CHOOSE_STEPS).map(|i| (i as f64 + 0.5) * step).collect();
    let mut pow_r = vec![0.0f64; CHOOSE_STEPS];
    let mut best = (1, 1);
    let mut best_err = f64::INFINITY;
    for r in 1..=n {
        for (p, &j) in pow_r.iter_mut().zip(&grid) {
            *p = powu(j, r);
        }
        for b in 1..=n / r {
            let mut err = 0.0;
            for (&p, &j) in pow_r.iter().zip(&grid) {
                let miss = powu(1.0 - p, b); // 1 − s_curve(j)
                err += if j < t { 1.0 - miss } else { miss };
            }
            let err = err * step;
            if err < best_err {
                best_err = err;
                best = (b, r);
            }
        }
    }
    Ok(best)
}

/// Chooses `(bands, rows)` with `bands × rows ≤ n` so that a pair of Jaccard similarity `t`
/// becomes a candidate with probability at least `recall` (`s_curve(t, bands, rows) ≥ recall`),
/// and among those the one with the smallest false-positive area `∫₀ᵗ s_curve(j) dj` (midpoint
/// rule, 128 steps): the steepest curve that is already high at `t`. For each `rows` only the
/// fewest bands reaching `recall` are considered (more bands only add false candidates); ties go
/// to more rows. This is the choice for a *verified* search, where every candidate is checked
/// exactly, so a missed pair costs recall and an extra candidate only time; [`choose_bands`]
/// instead balances both errors and finds a pair at `t` with probability 0.3–0.65.
/// Only the first `bands × rows` signature values are used, so a signature of exactly that
/// length suffices (the permutation seeds of a shorter signature are a prefix of a longer one's).
/// Deterministic (integer powers only). An error when `n`, `t` or `recall` is out of range, or
/// when no banding of `n` values reaches `recall` at `t`.
pub fn choose_bands_for_recall(n: usize, t: f64, recall: f64) -> Result<(usize, usize), MinHashError> {
    check_permutations(n)?;
    check_threshold(t)?;
    if !(recall > 0.0 && recall < 1.0) {
        return Err(MinHashError::Recall(recall));
    }
    let step = t / CHOOSE_STEPS as f64;
    let grid: Vec<f64> = (0..CHOOSE_STEPS).map(|i| (i as f64 + 0.5) * step).collect();
    let mut best: Option<((usize, usize), f64)> = None;
    for r in 1..=n {
        let Some(b) = (1..=n / r).find(|&b| s_curve(t, b, r) >= recall) else { continue };
        let area: f64 = grid.iter().map(|&j| s_curve(j, b, r)).sum::<f64>() * step;
        if best.is_none_or(|(_, a)| area <= a) {
            best = Some(((b, r), area));
        }
    }
    best.map(|(br, _)| br).ok_or(MinHashError::RecallUnreachable { n, threshold: t, recall })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::normalize;
    use crate::tokens::{is_feature_token, jieba};
    use proptest::prelude::*;

    fn reference_chars(text: &str, k: usize) -> Vec<u64> {
        let norm = normalize(text);
        let collapsed: Vec<&str> = norm.split_whitespace().collect();
        let chars: Vec<char> = collapsed.join(" ").chars().collect();
        if chars.is_empty() {
            return Vec::new();
        }
        let h = |cs: &[char]| xxh3_64_with_seed(cs.iter().collect::<String>().as_bytes(), SHINGLE_SEED);
        if chars.len() < k {
            return vec![h(&chars)];
        }
        to_set(chars.windows(k).map(h).collect())
    }

    fn reference_words(text: &str, k: usize) -> Vec<u64> {
        let norm = normalize(text);
        let toks: Vec<&str> =
            jieba().cut(&norm, false).into_iter().map(|t| t.word).filter(|w| is_feature_token(w)).collect();
        if toks.is_empty() {
            return Vec::new();
        }
        let sep = WORD_SEPARATOR.to_string();
        let h = |ws: &[&str]| xxh3_64_with_seed(ws.join(&sep).as_bytes(), WORD_SHINGLE_SEED);
        if toks.len() < k {
            return vec![h(&toks)];
        }
        to_set(toks.windows(k).map(h).collect())
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        // Characters that NFKC does not compose across a piece cut (see normalize::chunks).
        let alphabet: Vec<char> =
            "ab cdeXYZ 的是在了不和有大这 。，！？.,;!?\t\n\r\u{3000}\u{a0}ＡＢ１é\u{301}-_".chars().collect();
        proptest::collection::vec(proptest::sample::select(alphabet), 0..300).prop_map(|v| v.into_iter().collect())
    }

    fn words_strategy() -> impl Strategy<Value = String> {
        // Words separated by characters a piece may be cut after, so that no run is long enough
        // for a hard cut (which could split a word, for SimHash as here).
        let words: &'static [&str] =
            &["的", "是", "北京", "天气", "很好", "hello", "world", "2024", "c++", "é", "ＡＢ", "。"];
        let seps: &'static [&str] = &[" ", "，", "。", "\n", "!", "  \t", "\u{3000}"];
        proptest::collection::vec((proptest::sample::select(words), proptest::sample::select(seps)), 0..120)
            .prop_map(|v| v.into_iter().flat_map(|(w, s)| [w, s]).collect())
    }

    proptest! {
        #[test]
        fn chunked_chars_equal_reference(text in text_strategy(), k in 1usize..8, piece in 1usize..40) {
            prop_assert_eq!(char_shingles_in(&text, k, piece, &mut crate::no_interrupt), reference_chars(&text, k));
        }

        /// One counter, many texts: each counted overlap equals the sorted shingle sets'.
        #[test]
        fn char_overlap_equals_sets(a in text_strategy(), others in proptest::collection::vec(text_strategy(), 1..6),
                                    k in 1usize..8, piece in 1usize..40) {
            let sa = reference_chars(&a, k);
            let mut counter = OverlapCounter::new(&sa);
            for b in others.iter().chain([&a]) {
                let counted = char_overlap_in(&mut counter, b, k, piece, &mut crate::no_interrupt);
                prop_assert_eq!(counted, Overlap::of(&sa, &reference_chars(b, k)));
            }
        }

        #[test]
        fn chunked_words_equal_reference(text in words_strategy(), k in 1usize..5, piece in 1usize..40) {
            prop_assert_eq!(word_shingles_in(&text, k, piece, &mut crate::no_interrupt), reference_words(&text, k));
        }
    }

    #[test]
    fn char_overlap_long_texts() {
        let words: Vec<String> = (0..3000).map(|i| format!("w{}", i * 7919 % 4001)).collect();
        let sa = shingles(&words[..1200].join(" "), 5, &mut crate::no_interrupt).unwrap();
        let mut counter = OverlapCounter::new(&sa);
        for t in [words[600..].join(" "), words[..300].join(" ").repeat(3), words.join(" ")] {
            let want = Overlap::of(&sa, &shingles(&t, 5, &mut crate::no_interrupt).unwrap());
            assert_eq!(char_overlap(&mut counter, &t, 5, &mut crate::no_interrupt).unwrap(), want);
        }
        assert_eq!(char_overlap(&mut counter, "x", 0, &mut crate::no_interrupt), Err(MinHashError::ShingleSize(0)));
    }

    #[test]
    fn fast_kernel_matches_definition() {
        let seeds = permutation_seeds(37);
        let xs: Vec<u64> = (0..1000u64).map(|i| i.wrapping_mul(0x1234_5678_9abc_def1) ^ (i << 3)).collect();
        let sig = minhash(&xs, 37).unwrap();
        for (i, s) in seeds.iter().enumerate() {
            let want = xs.iter().map(|&x| permute(x, *s)).min().unwrap();
            assert_eq!(sig[i], want);
        }
        let mut plain = vec![u64::MAX; 37];
        let pre: Vec<u64> = seeds.iter().map(|s| s ^ (s >> 30)).collect();
        kernel_body(&xs, &pre, &mut plain);
        assert_eq!(plain, sig);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut v = vec![u64::MAX; 37];
            // SAFETY: the CPU has AVX2.
            unsafe { kernel_avx2(&xs, &pre, &mut v) };
            assert_eq!(v, sig);
        }
    }

    #[test]
    fn interrupt_is_called() {
        let text = "abc def ".repeat(50_000);
        let mut calls = 0;
        shingles(&text, 3, &mut || calls += 1).unwrap();
        assert!(calls >= text.len() / CHUNK_BYTES, "{calls}");
        let xs: Vec<u64> = (0..100_000).collect();
        let mut calls = 0;
        minhash_with(&xs, 4, &mut || calls += 1).unwrap();
        assert_eq!(calls, 7);
    }
    #[test]
    fn choose_bands_for_recall_meets_recall() {
        // The pairs documented in docs/similar.md (n = 128, recall 0.99).
        assert_eq!(choose_bands_for_recall(128, 0.5, 0.99), Ok((35, 3)));
        for &t in &[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0] {
            for &n in &[16usize, 64, 128, 256] {
                for &recall in &[0.9, 0.95, 0.99, 0.999] {
                    let Ok((b, r)) = choose_bands_for_recall(n, t, recall) else {
                        // Unreachable only when even one row per band cannot reach it.
                        assert!(s_curve(t, n, 1) < recall, "n {n} t {t} recall {recall}");
                        continue;
                    };
                    assert!(b * r <= n);
                    assert!(s_curve(t, b, r) >= recall, "n {n} t {t} -> {b}x{r}");
                    // Fewest bands for its rows.
                    assert!(b == 1 || s_curve(t, b - 1, r) < recall);
                    // No feasible pair has a smaller false-positive area.
                    let area =
                        |b: usize, r: usize| (0..128).map(|i| s_curve((i as f64 + 0.5) * t / 128.0, b, r)).sum::<f64>();
                    for r2 in 1..=n {
                        if let Some(b2) = (1..=n / r2).find(|&b2| s_curve(t, b2, r2) >= recall) {
                            assert!(area(b, r) <= area(b2, r2) + 1e-12, "n {n} t {t}: {b}x{r} vs {b2}x{r2}");
                        }
                    }
                }
            }
        }
        assert_eq!(choose_bands_for_recall(128, 0.0, 0.99), Err(MinHashError::Threshold(0.0)));
        assert_eq!(choose_bands_for_recall(128, 0.5, 1.0), Err(MinHashError::Recall(1.0)));
        assert!(choose_bands_for_recall(128, 0.5, f64::NAN).is_err());
        assert_eq!(choose_bands_for_recall(0, 0.5, 0.99), Err(MinHashError::Permutations(0)));
        assert_eq!(
            choose_bands_for_recall(2, 0.1, 0.99),
            Err(MinHashError::RecallUnreachable { n: 2, threshold: 0.1, recall: 0.99 })
        );
    }
}
