//! From text to weighted features: segmentation, filtering, term counts and TF-IDF weights.

use std::sync::LazyLock;

use jieba_rs::Jieba;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::idf::{self, HashKeyed};
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
    let _ = idf::table();
}

/// The xxh3-64 hash of a normalized token. Part of the fingerprint format.
#[inline]
pub fn feature_hash(token: &str) -> u64 {
    xxh3_64_with_seed(token.as_bytes(), FEATURE_SEED)
}

/// Whether a token carries meaning: it has at least one letter or digit (any script).
/// Tokens of only punctuation, whitespace, symbols or emoji are dropped.
#[inline]
pub fn is_feature_token(token: &str) -> bool {
    // Fast path: a token starting with an ASCII letter/digit or a CJK ideograph is a word.
    match token.chars().next() {
        None => false,
        Some(c) if c.is_ascii_alphanumeric() || ('\u{4e00}'..='\u{9fff}').contains(&c) => true,
        Some(_) => token.chars().any(char::is_alphanumeric),
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

/// Term counts of a document, in order of first occurrence.
pub struct Counts {
    index: HashKeyed<u32>,
    pub(crate) entries: Vec<Feature>,
    keep_tokens: bool,
}

impl Counts {
    fn new(keep_tokens: bool) -> Self {
        Counts { index: HashKeyed::default(), entries: Vec::new(), keep_tokens }
    }

    #[inline]
    fn add(&mut self, token: &str) {
        let hash = feature_hash(token);
        match self.index.get(&hash) {
            Some(&i) => self.entries[i as usize].count += 1,
            None => {
                self.index.insert(hash, self.entries.len() as u32);
                self.entries.push(Feature {
                    token: if self.keep_tokens { token.to_owned() } else { String::new() },
                    hash,
                    count: 1,
                    idf: 0.0,
                    weight: 0.0,
                });
            }
        }
    }
}

/// Segments `text` and counts its feature tokens, calling `interrupt` between chunks.
pub fn count_tokens(text: &str, params: &Params, keep_tokens: bool, interrupt: Interrupt<'_>) -> Counts {
    let jieba = jieba();
    let mut counts = Counts::new(keep_tokens);
    let mut norm = String::new();
    for piece in chunks(text, CHUNK_BYTES) {
        interrupt();
        normalize_into(piece, &mut norm);
        for token in jieba.cut(&norm, params.hmm) {
            if is_feature_token(token.word) {
                counts.add(token.word);
            }
        }
    }
    counts
}

/// The weighted features of `text`, in order of first occurrence.
pub fn features(text: &str, params: &Params, keep_tokens: bool, interrupt: Interrupt<'_>) -> Vec<Feature> {
    let mut counts = count_tokens(text, params, keep_tokens, interrupt);
    let table = idf::table();
    let unknown = table.median() * params.unknown_idf;
    for f in &mut counts.entries {
        f.idf = table.get(f.hash).unwrap_or(unknown);
        f.weight = params.weight(f.count, f.idf);
    }
    counts.entries
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
