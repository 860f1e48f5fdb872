//! Inverse document frequencies.
//!
//! The Chinese table is jieba's `idf.txt` (jieba-rs 0.11.0, MIT licence), vendored in
//! `data/jieba_idf.txt` so that a dependency update cannot change stored fingerprints. It has no
//! word with a Latin letter or a digit. The English table, `data/english_idf.txt`, is built by
//! `scripts/build_english_idf.py` from wordfreq's English word frequencies on jieba's scale
//! (`the` weighs what `的` weighs); it holds only ASCII-alphanumeric words.
//!
//! Both are compressed into the binary at compile time and parsed once per process into one
//! map keyed by the same xxh3 hash as the features, so a lookup costs no second hash of the
//! token. The English table is laid over jieba's: an ASCII-alphanumeric token takes its English
//! IDF first, then jieba's; any other token (never in the English table) takes jieba's. A token
//! in neither gets `unknown_idf` × jieba's median.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use include_flate::flate;

use crate::features::feature_hash;
use crate::normalize::normalize_into;

flate!(static JIEBA_IDF: str from "data/jieba_idf.txt");
flate!(static ENGLISH_IDF: str from "data/english_idf.txt");

/// A hasher for keys that are already uniformly distributed 64-bit hashes.
#[derive(Default, Clone, Copy)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are used; fold anything else deterministically.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by feature hashes.
pub type HashKeyed<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

/// An IDF table keyed by feature hash.
pub struct IdfTable {
    map: HashKeyed<f32>,
    median: f32,
}

impl IdfTable {
    /// Parses `word idf` lines. Words are normalized like document text; where two words
    /// normalize alike the first one's IDF is kept.
    pub fn parse(text: &str) -> IdfTable {
        let mut map: HashKeyed<f32> = HashKeyed::default();
        map.reserve(text.len() / 20);
        let mut values = Vec::with_capacity(text.len() / 20);
        for_each_entry(text, |hash, idf| {
            map.entry(hash).or_insert(idf);
            values.push(idf);
        });
        let median = if values.is_empty() {
            1.0
        } else {
            let mid = (values.len() - 1) / 2;
            let (_, m, _) = values.select_nth_unstable_by(mid, f32::total_cmp);
            *m
        };
        IdfTable { map, median }
    }

    /// Lays `word idf` lines over the table: their IDFs replace the table's for the same
    /// words. The median stays the table's own.
    pub fn overlay(&mut self, text: &str) {
        self.map.reserve(text.len() / 16);
        for_each_entry(text, |hash, idf| {
            self.map.insert(hash, idf);
        });
    }

    /// The IDF of the token with this hash, if the table has it.
    #[inline]
    pub fn get(&self, hash: u64) -> Option<f32> {
        self.map.get(&hash).copied()
    }

    /// The median IDF over the table as parsed, before any overlay (jieba's default for
    /// unknown words).
    pub fn median(&self) -> f32 {
        self.median
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Calls `f(hash, idf)` for each `word idf` line, the word normalized like document text.
fn for_each_entry(text: &str, mut f: impl FnMut(u64, f32)) {
    let mut buf = String::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(word), Some(idf)) = (parts.next(), parts.next()) else { continue };
        let Ok(idf) = idf.parse::<f32>() else { continue };
        normalize_into(word, &mut buf);
        f(feature_hash(&buf), idf);
    }
}

static TABLE: LazyLock<IdfTable> = LazyLock::new(|| {
    let mut t = IdfTable::parse(&JIEBA_IDF);
    t.overlay(&ENGLISH_IDF);
    t
});

/// The IDF table of the fingerprint: jieba's with the English table laid over it (median:
/// jieba's), parsed on first use.
pub fn table() -> &'static IdfTable {
    &TABLE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_load() {
        let t = table();
        assert!(t.len() > 300_000, "{}", t.len());
        let de = t.get(feature_hash("的")).unwrap();
        assert!((de - 0.884_742).abs() < 1e-4);
        // jieba's median, not moved by the English words.
        assert!((t.median() - 11.954_768).abs() < 1e-4, "{}", t.median());
        assert_eq!(t.get(feature_hash("zzzz-not-a-word")), None);
        let the = t.get(feature_hash("the")).unwrap();
        assert!((the - 0.8847).abs() < 1e-4, "{the}");
        let rare = t.get(feature_hash("photosynthesis")).unwrap();
        assert!(rare > 9.0 && rare < 12.5, "{rare}");
    }

    #[test]
    fn english_table_is_ascii_and_disjoint_from_jieba() {
        // So laying it over jieba's table gives ASCII-alphanumeric tokens their English IDF
        // first and leaves every other token to jieba's.
        let jieba = IdfTable::parse(&JIEBA_IDF);
        let mut n = 0;
        let mut prev = "";
        for line in ENGLISH_IDF.lines() {
            let (word, idf) = line.split_once(' ').unwrap();
            let ascii = word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            assert!(!word.is_empty() && ascii, "{word}");
            assert!(word > prev, "not sorted or repeated: {word}");
            let idf: f32 = idf.parse().unwrap();
            assert!((0.88..=13.91).contains(&idf), "{word} {idf}");
            assert_eq!(jieba.get(feature_hash(word)), None, "{word} is in jieba's table");
            prev = word;
            n += 1;
        }
        assert!(n > 45_000, "{n}");
    }
}
