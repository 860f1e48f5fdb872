//! # simdup-core
//!
//! The pure-Rust core of the simdup PostgreSQL extension. Nothing in this crate knows about
//! PostgreSQL: the extension crate maps these functions to SQL.
//!
//! Pipeline of a SimHash fingerprint (format [`FORMAT_VERSION`]):
//!
//! 1. [`normalize`]: Unicode NFKC (full-width → half-width), then lower case.
//! 2. [`tokens`]: segmentation with jieba-rs (Chinese words; English words and numbers as
//!    words), tokens without a letter or digit dropped.
//! 3. [`features`]: term counts per distinct token, weight = (1 + ln tf) × IDF ([`idf`]:
//!    jieba's Chinese table and an English table built from wordfreq, both vendored in `data/`;
//!    other words get half jieba's median).
//! 4. [`simhash`]: every token hashed with xxh3-64 ([`hash`], fixed seed); bit i of the
//!    fingerprint is 1 where the weighted sum of the tokens' bit i (as ±weight) is positive.
//! 5. [`blocks`]: the fingerprint's four 16-bit blocks and their Hamming neighbours, for
//!    index probes (Manku, Jain, Das Sarma, WWW 2007); [`pairs`] finds all near-duplicate pairs of a set
//!    and [`components`] groups them.
//! 6. [`locks`]: the advisory lock stripes of the dedup trigger (k + 1 pieces, pigeonhole);
//!    [`nearset`]: the block probes over a set in memory, for the trigger's bulk check;
//!    [`expected`]: a batch known up front, checked against the stored set and itself by one
//!    pair join.
//!
//! [`scheme`] holds alternative weightings selectable by name (title-aware, Zhang & He 2020);
//! the default scheme is format 1 itself. [`similarity`] is the set-similarity side: its rules,
//! and under it shingles, signatures and bands ([`similarity::minhash`]), set overlaps
//! ([`similarity::overlap`]) and the trigger's verification limit ([`similarity::candidates`]).
//!
//! Module layers (each uses only those above it): [`hash`], [`normalize`] → [`tokens`],
//! [`idf`] → [`features`] → [`simhash`] → [`scheme`]; [`similarity`] on [`tokens`] and [`hash`];
//! [`locks`] on [`hash`] (its tests also use [`blocks`]); [`blocks`] → [`pairs`] → [`leaders`], [`blocks`] → [`nearset`], [`pairs`] → [`expected`];
//! [`components`] alone; [`parallel`] (threads for a caller with interrupts) under [`pairs`];
//! [`precision`] (how often unverified SimHash meets unrelated rows) alone; [`explain`] (the
//! aligned passages of two texts, for `simdup_explain`) alone; [`calibrate`] (the histogram and
//! valley of `simdup_calibrate`) alone.

pub mod blocks;
pub mod calibrate;
pub mod components;
pub mod expected;
pub mod explain;
pub mod features;
pub mod hash;
pub mod idf;
pub mod leaders;
pub mod locks;
pub mod nearset;
pub mod normalize;
pub mod pairs;
pub mod parallel;
pub mod precision;
pub mod scheme;
pub mod simhash;
pub mod similarity;
pub mod tokens;

pub use blocks::hamming;
pub use features::Feature;
pub use scheme::{simhash_scheme, Options, Scheme};
pub use simhash::{simhash, simhash_with, FORMAT_VERSION};

/// A callback run between chunks of a long input, so that a caller (PostgreSQL) can cancel a
/// long computation. It may unwind (a PostgreSQL `ERROR` does); the core holds no locks.
pub type Interrupt<'a> = &'a mut dyn FnMut();

/// An [`Interrupt`] that does nothing, for callers outside PostgreSQL.
pub fn no_interrupt() {}

/// Default maximum Hamming distance for near-duplicates (`simdup.max_distance`), chosen by
/// measurement on real Chinese news at the table sizes users run (bench/quality/precision_scale.sh;
/// docs/quality.md, "Precision as the table grows"): with verification, k = 11 finds every
/// planted edit kind with recall ≥ 0.95 at 1M rows (k = 10 misses inserted sentences and 3 %
/// typos: 0.930 and 0.937), and its index search probes the same two bits a block as k = 10
/// plus one more block at two bits (548 probe values against 428). Without verification every
/// larger k catches more unrelated rows as the table grows ([`precision::unverified_false_share`]).
pub const DEFAULT_MAX_DISTANCE: u32 = 11;
