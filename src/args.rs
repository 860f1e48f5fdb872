//! Every invariant of simdup's arguments, checked in one place each (as pgvector's `CheckDim`
//! and `CheckElement`): a bad value raises `invalid_parameter_value` (22023) with a hint.

use std::fmt;

use simdup_core::blocks::{Layout, BLOCKS};
use simdup_core::similarity::minhash::MAX_SHINGLE_SIZE;

use crate::errors::invalid_parameter;

const K_HINT: &str = "The maximum distance k is a Hamming distance between 64-bit fingerprints: 0 to 64.";

/// The number of MinHash permutations n (the signature length): 1..=4096, else 22023 naming
/// the value given.
pub fn permutations(n: i32) -> usize {
    use simdup_core::similarity::minhash::MAX_PERMUTATIONS;
    match usize::try_from(n) {
        Ok(n) if (1..=MAX_PERMUTATIONS).contains(&n) => n,
        _ => invalid_parameter(
            format!("number of permutations n must be between 1 and {MAX_PERMUTATIONS}, got {n}"),
            "n is the signature length; the default 128 estimates Jaccard similarity with a \
             standard deviation of at most 0.044.",
        ),
    }
}

/// A maximum Hamming distance k: 0..=64.
pub fn max_distance(k: i32) -> u32 {
    if !(0..=64).contains(&k) {
        invalid_parameter(format!("maximum distance {k} is out of range"), K_HINT);
    }
    k as u32
}

/// A block of the default layout (`simhash_block`): 0..=3.
pub fn block_index(i: i32) -> usize {
    if !(0..BLOCKS as i32).contains(&i) {
        invalid_parameter(
            format!("block index {i} is out of range"),
            "A fingerprint has four 16-bit blocks, numbered 0 to 3.",
        );
    }
    i as usize
}

/// The number of block indexes of a table (`simdup_enable(..., blocks => m)`): 2..=8 blocks of
/// nearly equal width.
pub fn layout(blocks: i32) -> Layout {
    u32::try_from(blocks).ok().and_then(|m| Layout::even(m).ok()).unwrap_or_else(|| {
        invalid_parameter(
            format!("{blocks} blocks is out of range"),
            "A fingerprint is cut into 2 to 8 blocks, one B-tree index each; the default is 4 blocks \
             of 16 bits. See the README's section on layouts.",
        )
    })
}

/// What the dedup trigger does with a near-duplicate row.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Raise unique_violation (23505).
    Reject,
    /// Drop the row silently.
    Skip,
    /// Store it with `dup_of` set.
    Mark,
}

const MODE_HINT: &str =
    "on_duplicate is 'reject' (error 23505), 'skip' (the row is not stored) or 'mark' (stored with dup_of set).";

impl Mode {
    const ALL: [Mode; 3] = [Mode::Reject, Mode::Skip, Mode::Mark];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Reject => "reject",
            Mode::Skip => "skip",
            Mode::Mark => "mark",
        }
    }

    /// The mode named `name`; 22023 for an unknown name.
    pub fn parse(name: &str) -> Mode {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == name)
            .unwrap_or_else(|| invalid_parameter(format!("unknown on_duplicate mode \"{name}\""), MODE_HINT))
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub const BANDS_HINT: &str = "A signature of n values is cut into bands of rows values each (bands × rows ≤ n); \
     minhash_choose_bands(n, threshold) picks them for a Jaccard threshold.";

/// A shingle size k: 1..=MAX_SHINGLE_SIZE characters or words.
pub fn shingle_size(k: i32) -> usize {
    match usize::try_from(k) {
        Ok(k) if (1..=MAX_SHINGLE_SIZE).contains(&k) => k,
        _ => invalid_parameter(
            format!("shingle size k must be between 1 and {MAX_SHINGLE_SIZE}, got {k}"),
            "k counts characters (shingles, jaccard, minhash) or words (word_shingles); \
             the defaults are 5 characters and 3 words.",
        ),
    }
}

/// Bands of rows values each, from a signature of `len` values: at least 1 each, bands × rows ≤ len.
pub fn banding(bands: i32, rows: i32, len: usize) -> (usize, usize) {
    if bands < 1 || rows < 1 {
        invalid_parameter(format!("bands and rows must be at least 1, got {bands} bands of {rows} rows"), BANDS_HINT);
    }
    let need = i64::from(bands) * i64::from(rows);
    if need as u64 > len as u64 {
        invalid_parameter(
            format!("{bands} bands of {rows} rows need {need} signature values, the signature has {len}"),
            BANDS_HINT,
        );
    }
    (bands as usize, rows as usize)
}

/// A Jaccard similarity (0..=1) or, `open`, a threshold strictly between 0 and 1.
pub fn unit_interval(what: &str, v: f64, open: bool) -> f64 {
    let ok = if open { v > 0.0 && v < 1.0 } else { (0.0..=1.0).contains(&v) };
    if !ok {
        let range = if open { "strictly between 0 and 1" } else { "between 0 and 1" };
        invalid_parameter(
            format!("{what} must be {range}, got {v}"),
            "Jaccard similarity is a fraction: 0 for disjoint shingle sets, 1 for equal ones.",
        );
    }
    v
}

/// Two MinHash signatures compared position by position have the same length.
pub fn same_signature_length(a: usize, b: usize) {
    if a != b {
        invalid_parameter(
            format!("signatures have different lengths, {a} and {b}"),
            "Compare signatures made with the same number of permutations n.",
        );
    }
}

// The same checks for the handwritten SQL (sql/search.sql, sql/enable.sql), so that no
// invariant is spelled out twice.

/// `k` itself when it is a valid maximum distance (0..64); 22023 otherwise.
#[pgrx::pg_extern(sql = "")]
fn _simdup_check_k(k: i32) -> i32 {
    max_distance(k) as i32
}

/// `k` itself when it is a valid shingle size (1..=256); 22023 otherwise.
#[pgrx::pg_extern(sql = "")]
fn _simdup_check_shingle_size(k: i32) -> i32 {
    shingle_size(k) as i32
}

/// The bit offsets at which the blocks of an m-block layout start (one block index each).
#[pgrx::pg_extern(sql = "")]
fn _simdup_layout(blocks: i32) -> Vec<i32> {
    layout(blocks).offsets().iter().map(|&o| o as i32).collect()
}

/// How `simdup_groups` groups near-duplicates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GroupMethod {
    /// Connected components: chains of near-duplicates join (members may be far apart).
    Components,
    /// Leader clustering in key order: every member within k of its group's first row.
    Leader,
}

impl GroupMethod {
    /// The method named `name`; 22023 for an unknown name.
    pub fn parse(name: &str) -> GroupMethod {
        match name {
            "components" => GroupMethod::Components,
            "leader" => GroupMethod::Leader,
            _ => invalid_parameter(
                format!("unknown grouping method \"{name}\""),
                "method is 'components' (connected components: near-duplicates of near-duplicates join, \
                 so members can be more than k apart) or 'leader' (every member within k of its group's \
                 first row, in primary key order).",
            ),
        }
    }
}

/// The batch grouping method's name when it is a valid one; 22023 otherwise.
#[pgrx::pg_extern(sql = "")]
fn _simdup_check_group_method(method: &str) -> &str {
    match GroupMethod::parse(method) {
        GroupMethod::Components => "components",
        GroupMethod::Leader => "leader",
    }
}

const SIMILARITY_HINT: &str = "Jaccard similarity is a fraction: 0 for disjoint shingle sets, 1 for equal ones; \
     simdup_similar finds rows at or above a threshold in (0, 1], with at least a recall in (0, 1) at the threshold.";

/// The containment threshold of dedup by similarity (`simdup_enable_similar(..., containment =>
/// c)`): a stored row whose character shingles hold at least this share of the smaller text's
/// (or the reverse) is a near-duplicate too; 0 < c ≤ 1.
pub fn containment_threshold(c: f64) -> f64 {
    if !(c > 0.0 && c <= 1.0) {
        invalid_parameter(
            format!("containment threshold must be in (0, 1], got {c}"),
            "Containment is the share of the smaller text's shingles found in the other text: 1 when one text \
             contains the other (an added header or paragraph). 0.7 finds such edits with few false matches.",
        );
    }
    c
}

/// The Jaccard threshold that verifies a SimHash candidate (`simdup_enable(..., threshold =>
/// t)`, `simdup_pairs(..., verify => true, threshold => t)`): 0 < t ≤ 1.
pub fn jaccard_threshold(t: f64) -> f64 {
    if !(t > 0.0 && t <= 1.0) {
        invalid_parameter(
            format!("similarity threshold must be in (0, 1], got {t}"),
            "A candidate within max_distance is a near-duplicate when the Jaccard similarity of the two texts' \
             character 5-shingles reaches the threshold (0.5 by default), or the containment threshold.",
        );
    }
    t
}

/// A Jaccard threshold of a verified similarity search (`simdup_similar`,
/// `simdup_enable_similar`, `minhash_choose_bands(n, threshold, recall)`): 0 < t ≤ 1, and the
/// recall wanted at it: 0 < recall < 1.
pub fn similarity_target(threshold: f64, recall: f64) -> (f64, f64) {
    if !(threshold > 0.0 && threshold <= 1.0) {
        invalid_parameter(format!("similarity threshold must be in (0, 1], got {threshold}"), SIMILARITY_HINT);
    }
    if !(recall > 0.0 && recall < 1.0) {
        invalid_parameter(format!("recall must be strictly between 0 and 1, got {recall}"), SIMILARITY_HINT);
    }
    (threshold, recall)
}
