//! From text to weighted features: segmentation, filtering, term counts and TF-IDF weights.

use std::sync::LazyLock;

use jieba_rs::Jieba;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::idf;
use crate::simhash::quantize;
use crate::normalize::{chunks, normalize_into};
use crate::Interrupt;

/// Seed of the xxh3-64 feature hash. Part of the fingerprint format.
pub const FEATURE_SEED: u64 = 0x7369_6d64_7570_0001; // "simdup" 0001

/// Size in bytes of the pieces a long text is processed in (between interrupt checks).
pub const CHUNK_BYTES: usize = 64 * 1024;

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// jieba's segmenter with its default dictionary, loaded on first use.
pub fn jieba() -> &'static Jieba {
    &JIEBA
}

/// Loads the dictionary and IDF tables now rather than on first use.
pub fn preload() {
    LazyLock::force(&JIEBA);
    let _ = is_alphanumeric('a');
    let _ = idf::table();
}

/// The xxh3-64 hash of a normalized token. Part of the fingerprint format.
#[inline]
pub fn feature_hash(token: &str) -> u64 {
    xxh3_64_with_seed(token.as_bytes(), FEATURE_SEED)
}

/// Whether a token carries meaning: it has at least one letter or digit (any script).
/// Tokens of only punctuation, whitespace, symbols or emoji are dropped.
#[inline(always)]
pub fn is_feature_token(token: &str) -> bool {
    // Fast path, inlined into every token loop: a token starting with an ASCII letter/digit
    // or a CJK ideograph is a word.
    match token.chars().next() {
        None => false,
        Some(c) if c.is_ascii_alphanumeric() || ('\u{4e00}'..='\u{9fff}').contains(&c) => true,
        Some(_) => has_alphanumeric(token),
    }
}

/// The slow path of [`is_feature_token`] (punctuation, other scripts), kept out of line.
#[inline(never)]
fn has_alphanumeric(token: &str) -> bool {
    token.chars().any(is_alphanumeric)
}

/// `char::is_alphanumeric`, from a bitmap for the Basic Multilingual Plane (8 KiB, built once
/// from `char::is_alphanumeric` itself): CJK and general punctuation (`，` `。` `“`) are
/// otherwise a slow table search for every such token.
#[inline]
fn is_alphanumeric(c: char) -> bool {
    static BMP: LazyLock<Box<[u64; 1024]>> = LazyLock::new(|| {
        let mut bits = Box::new([0u64; 1024]);
        for (cp, c) in (0..0x1_0000u32).filter_map(|cp| Some((cp, char::from_u32(cp)?))) {
            if c.is_alphanumeric() {
                bits[cp as usize / 64] |= 1 << (cp % 64);
            }
        }
        bits
    });
    match c as u32 {
        cp @ 0..0x1_0000 => BMP[cp as usize / 64] >> (cp % 64) & 1 == 1,
        _ => c.is_alphanumeric(),
    }
}

/// How a term's count in the document enters its weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfMode {
    /// tf
    Raw,
    /// 1 + ln(tf)
    Sublinear,
    /// 1 (presence only)
    Binary,
}

/// Weighting and segmentation settings. [`Params::default`] is fingerprint format 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// jieba's HMM for words missing from the dictionary.
    pub hmm: bool,
    /// Term-frequency factor.
    pub tf: TfMode,
    /// IDF of a token missing from the IDF table, as a multiple of the table's median
    /// (jieba uses the median itself, 1.0).
    pub unknown_idf: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params { hmm: false, tf: TfMode::Sublinear, unknown_idf: 0.5 }
    }
}

impl Params {
    /// The weight of a token seen `count` times whose IDF is `idf`.
    #[inline]
    pub fn weight(&self, count: u32, idf: f32) -> f64 {
        let tf = match self.tf {
            TfMode::Raw => f64::from(count),
            TfMode::Sublinear => sublinear_tf(count),
            TfMode::Binary => 1.0,
        };
        tf * f64::from(idf)
    }
}

/// 1 + ln(count), from a table for the common small counts (the same values `ln` gives).
#[inline]
fn sublinear_tf(count: u32) -> f64 {
    static TABLE: LazyLock<[f64; 64]> =
        LazyLock::new(|| std::array::from_fn(|i| 1.0 + (i as f64).ln()));
    match TABLE.get(count as usize) {
        Some(&v) if count > 0 => v,
        _ => 1.0 + f64::from(count).ln(),
    }
}

/// One distinct token of a document.
#[derive(Clone, Debug, PartialEq)]
pub struct Feature {
    /// The normalized token (empty unless tokens were kept).
    pub token: String,
    /// Its xxh3-64 hash.
    pub hash: u64,
    /// Occurrences in the document.
    pub count: u32,
    /// Its IDF (the table's, or the unknown-word IDF).
    pub idf: f32,
    /// Its weight in the fingerprint.
    pub weight: f64,
}

/// Counts of distinct feature hashes in order of first occurrence: open addressing with linear
/// probing (at most half full) over one array of `(hash, count)` slots, so that counting a
/// token touches one cache line, and the slots' order of first use beside it. Reused between
/// documents: counting allocates nothing once warm.
#[derive(Default)]
pub struct Tally {
    /// `(hash, count)`; count 0: empty.
    slots: Vec<(u64, u32)>,
    mask: usize,
    /// Slots in order of first use.
    order: Vec<u32>,
}

impl Tally {
    /// Empties the tally for a document expected to hold about `distinct` distinct tokens.
    pub fn reset(&mut self, distinct: usize) {
        let want = (distinct.clamp(16, 1 << 16) * 2).next_power_of_two();
        if self.slots.len() < want || self.slots.len() > 8 * want {
            // First use, or left large by a huge document: size it to this one.
            self.slots = vec![(0, 0); want];
            self.order = Vec::with_capacity(want / 2);
        } else {
            for &i in &self.order {
                self.slots[i as usize] = (0, 0);
            }
            self.order.clear();
        }
        self.mask = self.slots.len() - 1;
    }

    /// Counts one occurrence of `hash`; true when it is the first.
    #[inline]
    pub fn add(&mut self, hash: u64) -> bool {
        let mut i = hash as usize & self.mask;
        loop {
            let slot = &mut self.slots[i];
            if slot.0 == hash && slot.1 != 0 {
                slot.1 += 1;
                return false;
            }
            if slot.1 == 0 {
                *slot = (hash, 1);
                self.order.push(i as u32);
                if self.order.len() * 2 > self.slots.len() {
                    self.grow();
                }
                return true;
            }
            i = (i + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![(0, 0); old.len() * 2];
        self.mask = self.slots.len() - 1;
        for o in &mut self.order {
            let (hash, count) = old[*o as usize];
            let mut i = hash as usize & self.mask;
            while self.slots[i].1 != 0 {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = (hash, count);
            *o = i as u32;
        }
    }

    /// Number of distinct hashes.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The distinct hashes and their counts, in order of first occurrence.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.order.iter().map(|&i| self.slots[i as usize])
    }

    /// Calls `f(position, hash, count, idf)` for every distinct hash in order, its IDF from
    /// `table` or `unknown`. The table's slots are prefetched a few hashes ahead, so the cache
    /// misses of the lookups overlap instead of following one another.
    #[inline]
    pub fn for_each_idf(&self, table: &idf::IdfTable, unknown: f32, mut f: impl FnMut(usize, u64, u32, f32)) {
        const AHEAD: usize = 16;
        for (h, _) in self.iter().take(AHEAD) {
            table.prefetch(h);
        }
        for (i, (h, c)) in self.iter().enumerate() {
            if let Some(&next) = self.order.get(i + AHEAD) {
                table.prefetch(self.slots[next as usize].0);
            }
            f(i, h, c, table.get(h).unwrap_or(unknown));
        }
    }
}

/// Segments `text` (normalized, in chunks, calling `interrupt` between them) and calls
/// `f(token, hash)` for each feature token in order. `norm` is a reusable buffer.
#[inline]
fn for_each_token(
    text: &str,
    params: &Params,
    norm: &mut String,
    interrupt: Interrupt<'_>,
    mut f: impl FnMut(&str, u64),
) {
    let jieba = jieba();
    for piece in chunks(text, CHUNK_BYTES) {
        interrupt();
        normalize_into(piece, norm);
        for token in jieba.cut(norm, params.hmm) {
            if is_feature_token(token.word) {
                f(token.word, feature_hash(token.word));
            }
        }
    }
}

/// A guess at the number of distinct tokens of a text of `bytes` bytes, to size a [`Tally`].
fn expected_distinct(bytes: usize) -> usize {
    bytes / 8
}

/// The weighted features of `text`, in order of first occurrence.
pub fn features(text: &str, params: &Params, keep_tokens: bool, interrupt: Interrupt<'_>) -> Vec<Feature> {
    let mut tally = Tally::default();
    tally.reset(expected_distinct(text.len()));
    let mut tokens = Vec::new();
    for_each_token(text, params, &mut String::new(), interrupt, |token, hash| {
        if tally.add(hash) && keep_tokens {
            tokens.push(token.to_owned());
        }
    });
    let table = idf::table();
    let unknown = table.median() * params.unknown_idf;
    let mut out = Vec::with_capacity(tally.len());
    tally.for_each_idf(table, unknown, |i, hash, count, idf| {
        out.push(Feature {
            token: tokens.get_mut(i).map(std::mem::take).unwrap_or_default(),
            hash,
            count,
            idf,
            weight: params.weight(count, idf),
        });
    });
    out
}

/// Buffers of [`with_weighted`], kept per thread between calls.
#[derive(Default)]
struct Scratch {
    norm: String,
    tally: Tally,
    pairs: Vec<(u64, i64)>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Calls `f` with the `(hash, quantized weight)` pairs of `text`'s features of positive weight,
/// in order of first occurrence: what [`features`] gives, without keeping tokens and without
/// allocating once the per-thread buffers are warm (the fingerprint's hot path).
pub fn with_weighted<R>(text: &str, params: &Params, interrupt: Interrupt<'_>, f: impl FnOnce(&[(u64, i64)]) -> R) -> R {
    let run = |s: &mut Scratch| {
        let Scratch { norm, tally, pairs } = s;
        tally.reset(expected_distinct(text.len()));
        for_each_token(text, params, norm, interrupt, |_, hash| {
            tally.add(hash);
        });
        let table = idf::table();
        let unknown = table.median() * params.unknown_idf;
        pairs.clear();
        tally.for_each_idf(table, unknown, |_, hash, count, idf| {
            let w = quantize(params.weight(count, idf));
            if w > 0 {
                pairs.push((hash, w));
            }
        });
        f(pairs)
    };
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => run(&mut s),
        // Re-entered from `interrupt` (never by simdup itself): use fresh buffers.
        Err(_) => run(&mut Scratch::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<(String, u32)> {
        features(text, &Params::default(), true, &mut crate::no_interrupt)
            .into_iter()
            .map(|f| (f.token, f.count))
            .collect()
    }

    #[test]
    fn segments_chinese_and_english() {
        let t = toks("我们在北京，We love Beijing 2024!");
        let words: Vec<&str> = t.iter().map(|(w, _)| w.as_str()).collect();
        assert!(words.contains(&"我们"), "{words:?}");
        assert!(words.contains(&"北京"), "{words:?}");
        assert!(words.contains(&"we"), "{words:?}");
        assert!(words.contains(&"beijing"), "{words:?}");
        assert!(words.contains(&"2024"), "{words:?}");
        assert!(!words.iter().any(|w| !is_feature_token(w)));
    }

    #[test]
    fn tally_counts_like_a_map() {
        // Keys colliding in their low bits, growth past the first size, and reuse after a
        // larger document: counts and order of first occurrence as a plain map gives them.
        let mut tally = Tally::default();
        for (n, distinct) in [(5000usize, 1500u64), (300, 40), (20_000, 9000), (10, 3)] {
            tally.reset(16);
            let mut order = Vec::new();
            let mut map = std::collections::HashMap::new();
            for i in 0..n as u64 {
                let key = crate::minhash::mix64(i % distinct) << 20 | (i % distinct) & 3;
                let first = !map.contains_key(&key);
                assert_eq!(tally.add(key), first, "first sight of {key}");
                if first {
                    order.push(key);
                }
                *map.entry(key).or_insert(0u32) += 1;
            }
            let got: Vec<(u64, u32)> = tally.iter().collect();
            let want: Vec<(u64, u32)> = order.iter().map(|k| (*k, map[k])).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn alphanumeric_bitmap_is_char_is_alphanumeric() {
        for c in (0..0x11_0000u32).filter_map(char::from_u32) {
            assert_eq!(is_alphanumeric(c), c.is_alphanumeric(), "{c:?}");
        }
    }

    #[test]
    fn counts_repeats() {
        let t = toks("天气 天气 天气 好");
        assert_eq!(t[0], ("天气".to_string(), 3));
    }

    #[test]
    fn featureless() {
        assert!(toks("").is_empty());
        assert!(toks("。。。!!! ？？ \t\n 😀🎉 ©®").is_empty());
    }

    #[test]
    fn chunked_equals_whole() {
        // Processing in chunks gives the same counts as one piece would.
        let text = "南京市长江大桥于1968年建成通车。它是长江上第一座由中国自行设计的双层铁路公路两用桥！".repeat(3000);
        let jieba = jieba();
        let norm = crate::normalize::normalize(&text);
        let whole: usize = jieba.cut(&norm, false).iter().filter(|t| is_feature_token(t.word)).count();
        let chunked: u32 = features(&text, &Params::default(), false, &mut crate::no_interrupt)
            .iter()
            .map(|f| f.count)
            .sum();
        assert_eq!(whole as u32, chunked);
    }
}
