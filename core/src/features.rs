//! From text to weighted features: term counts of the feature tokens ([`crate::tokens`]) and
//! their TF-IDF weights ([`crate::idf`]), as fingerprint format 1 defines them.

use std::sync::LazyLock;

use crate::idf;
use crate::tokens::for_each_token;
use crate::Interrupt;

// Re-exported: the feature hash and the tokens are part of what fingerprint format 1 defines.
pub use crate::hash::{feature_hash, FEATURE_SEED};
pub use crate::tokens::{is_feature_token, jieba, CHUNK_BYTES};

/// Loads the dictionary and IDF tables now rather than on first use.
pub fn preload() {
    crate::tokens::preload();
    let _ = idf::table();
}

/// IDF of a token in neither IDF table, as a multiple of jieba's median (jieba itself uses the
/// median, 1.0). Part of the fingerprint format.
pub const UNKNOWN_IDF: f32 = 0.5;

/// Weights are quantized to multiples of 1/`WEIGHT_SCALE` and summed as integers, so a
/// fingerprint does not depend on the order of summation or on floating-point details.
pub const WEIGHT_SCALE: f64 = 1024.0;

/// Quantized weight of a feature.
#[inline]
pub fn quantize(weight: f64) -> i64 {
    if weight.is_finite() && weight > 0.0 {
        (weight * WEIGHT_SCALE).round() as i64
    } else {
        0
    }
}

/// The weight of a token seen `count` times whose IDF is `idf`, as fingerprint format 1 weighs
/// it: (1 + ln count) × idf. (Segmentation is jieba's with its HMM off; the settings measured
/// and not adopted are in the benchmark crate, bench/rust.)
#[inline]
pub fn weight(count: u32, idf: f32) -> f64 {
    sublinear_tf(count) * f64::from(idf)
}

/// The IDF of a token in neither table: [`UNKNOWN_IDF`] × the table's median.
#[inline]
pub fn unknown_idf(table: &idf::IdfTable) -> f32 {
    table.median() * UNKNOWN_IDF
}

/// 1 + ln(count), from a table for the common small counts (the same values `ln` gives).
#[inline]
pub fn sublinear_tf(count: u32) -> f64 {
    static TABLE: LazyLock<[f64; 64]> = LazyLock::new(|| std::array::from_fn(|i| 1.0 + (i as f64).ln()));
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
#[cfg_attr(feature = "experiments", visibility::make(pub))]
#[derive(Default)]
pub(crate) struct Tally {
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
    #[cfg(feature = "experiments")]
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

/// A guess at the number of distinct tokens of a text of `bytes` bytes, to size a [`Tally`].
pub(crate) fn expected_distinct(bytes: usize) -> usize {
    bytes / 8
}

/// The weighted features of `text`, in order of first occurrence.
pub fn features(text: &str, keep_tokens: bool, interrupt: Interrupt<'_>) -> Vec<Feature> {
    let mut tally = Tally::default();
    tally.reset(expected_distinct(text.len()));
    let mut tokens = Vec::new();
    for_each_token(text, &mut String::new(), interrupt, |token| {
        if tally.add(feature_hash(token)) && keep_tokens {
            tokens.push(token.to_owned());
        }
    });
    let table = idf::table();
    let unknown = unknown_idf(table);
    let mut out = Vec::with_capacity(tally.len());
    tally.for_each_idf(table, unknown, |i, hash, count, idf| {
        out.push(Feature {
            token: tokens.get_mut(i).map(std::mem::take).unwrap_or_default(),
            hash,
            count,
            idf,
            weight: weight(count, idf),
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
pub fn with_weighted<R>(text: &str, interrupt: Interrupt<'_>, f: impl FnOnce(&[(u64, i64)]) -> R) -> R {
    let run = |s: &mut Scratch| {
        let Scratch { norm, tally, pairs } = s;
        tally.reset(expected_distinct(text.len()));
        for_each_token(text, norm, interrupt, |token| {
            tally.add(feature_hash(token));
        });
        let table = idf::table();
        let unknown = unknown_idf(table);
        pairs.clear();
        tally.for_each_idf(table, unknown, |_, hash, count, idf| {
            let w = quantize(weight(count, idf));
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
        features(text, true, &mut crate::no_interrupt).into_iter().map(|f| (f.token, f.count)).collect()
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
                let key = crate::hash::mix64(i % distinct) << 20 | (i % distinct) & 3;
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
    fn weights() {
        let f = features("我们 zzzzqx", true, &mut crate::no_interrupt);
        let table = idf::table();
        assert_eq!(f[0].idf, table.get(feature_hash("我们")).unwrap());
        assert_eq!(f[1].idf, table.median() * UNKNOWN_IDF);
        assert_eq!(f[1].weight, f64::from(f[1].idf));
        assert_eq!(sublinear_tf(3), 1.0 + 3f64.ln());
        assert_eq!(sublinear_tf(1000), 1.0 + 1000f64.ln());
    }
}
