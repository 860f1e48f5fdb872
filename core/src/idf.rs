//! Inverse document frequencies.
//!
//! The Chinese table is jieba's `idf.txt` (jieba-rs 0.11.0, MIT licence), vendored in
//! `data/jieba_idf.txt` so that a dependency update cannot change stored fingerprints. It is
//! compressed into the binary at compile time and parsed once per process, keyed by the same
//! xxh3 hash as the features, so a lookup costs no second hash of the token.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use include_flate::flate;

use crate::features::feature_hash;
use crate::normalize::normalize_into;

flate!(static JIEBA_IDF: str from "data/jieba_idf.txt");

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
        let mut buf = String::new();
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            let (Some(word), Some(idf)) = (parts.next(), parts.next()) else { continue };
            let Ok(idf) = idf.parse::<f32>() else { continue };
            normalize_into(word, &mut buf);
            map.entry(feature_hash(&buf)).or_insert(idf);
            values.push(idf);
        }
        let median = if values.is_empty() {
            1.0
        } else {
            let mid = (values.len() - 1) / 2;
            let (_, m, _) = values.select_nth_unstable_by(mid, f32::total_cmp);
            *m
        };
        IdfTable { map, median }
    }

    /// The IDF of the token with this hash, if the table has it.
    #[inline]
    pub fn get(&self, hash: u64) -> Option<f32> {
        self.map.get(&hash).copied()
    }

    /// The median IDF over the table (jieba's default for unknown words).
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

static CHINESE: LazyLock<IdfTable> = LazyLock::new(|| IdfTable::parse(&JIEBA_IDF));

/// jieba's IDF table, parsed on first use.
pub fn chinese() -> &'static IdfTable {
    &CHINESE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jieba_table_loads() {
        let t = chinese();
        assert!(t.len() > 250_000, "{}", t.len());
        let de = t.get(feature_hash("的")).unwrap();
        assert!((de - 0.884_742).abs() < 1e-4);
        assert!(t.median() > 10.0 && t.median() < 13.0, "{}", t.median());
        assert_eq!(t.get(feature_hash("zzzz-not-a-word")), None);
    }
}
