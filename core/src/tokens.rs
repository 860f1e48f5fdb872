//! Segmentation: jieba-rs with its default dictionary, and the feature tokens of a text (words
//! with at least one letter or digit) after normalization. Shared by SimHash
//! ([`crate::features`]), the schemes and MinHash word shingles.

use std::sync::LazyLock;

use jieba_rs::Jieba;

use crate::normalize::{chunks, normalize_into};
use crate::Interrupt;

/// Size in bytes of the pieces a long text is processed in (between interrupt checks).
pub const CHUNK_BYTES: usize = 64 * 1024;

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// jieba's segmenter with its default dictionary, loaded on first use.
pub fn jieba() -> &'static Jieba {
    &JIEBA
}

/// Loads the dictionary (and the table of [`is_feature_token`]) now rather than on first use.
pub fn preload() {
    LazyLock::force(&JIEBA);
    let _ = is_alphanumeric('a');
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

/// Calls `f(normalized piece)` for the pieces of about `piece_bytes` of `text` ([`chunks`]),
/// each normalized into `norm`, `interrupt` called before each.
#[inline]
fn for_each_piece(
    text: &str,
    piece_bytes: usize,
    norm: &mut String,
    interrupt: Interrupt<'_>,
    mut f: impl FnMut(&str),
) {
    for piece in chunks(text, piece_bytes) {
        interrupt();
        normalize_into(piece, norm);
        f(norm);
    }
}

/// Calls `f(token)` for each feature token of `text` in order, with jieba's HMM off (the
/// segmentation of fingerprint format 1): the text is normalized in pieces of about
/// `piece_bytes` ([`chunks`]), `interrupt` called before each. `norm` is a reusable buffer.
#[inline]
pub fn for_each_token_in(
    text: &str,
    piece_bytes: usize,
    norm: &mut String,
    interrupt: Interrupt<'_>,
    mut f: impl FnMut(&str),
) {
    let jieba = jieba();
    for_each_piece(text, piece_bytes, norm, interrupt, |norm| {
        for token in jieba.cut(norm, false) {
            if is_feature_token(token.word) {
                f(token.word);
            }
        }
    });
}

/// [`for_each_token_in`] in pieces of [`CHUNK_BYTES`].
#[inline]
pub fn for_each_token(text: &str, norm: &mut String, interrupt: Interrupt<'_>, f: impl FnMut(&str)) {
    for_each_token_in(text, CHUNK_BYTES, norm, interrupt, f)
}

/// Calls `f(token, tag)` for each feature token of `text` with its jieba part-of-speech tag:
/// the same tokens as [`for_each_token`] (jieba's `tag` segments as `cut` does).
pub fn for_each_tagged_token(text: &str, norm: &mut String, interrupt: Interrupt<'_>, mut f: impl FnMut(&str, &str)) {
    let jieba = jieba();
    for_each_piece(text, CHUNK_BYTES, norm, interrupt, |norm| {
        for t in jieba.tag(norm, false) {
            if is_feature_token(t.word) {
                f(t.word, t.tag);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_token(text, &mut String::new(), &mut crate::no_interrupt, |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn segments_chinese_and_english() {
        let words = tokens("我们在北京，We love Beijing 2024!");
        assert_eq!(words, ["我们", "在", "北京", "we", "love", "beijing", "2024"]);
        assert!(tokens("。。。!!! ？？ \t\n 😀🎉 ©®").is_empty());
    }

    #[test]
    fn tagged_tokens_are_the_tokens() {
        let text = "南京市长江大桥于1968年建成通车。Rust 语言的 PostgreSQL 扩展，ＡＢＣ！".repeat(50);
        let mut tagged = Vec::new();
        for_each_tagged_token(&text, &mut String::new(), &mut crate::no_interrupt, |t, _| tagged.push(t.to_owned()));
        assert_eq!(tagged, tokens(&text));
    }

    #[test]
    fn alphanumeric_bitmap_is_char_is_alphanumeric() {
        for c in (0..0x11_0000u32).filter_map(char::from_u32) {
            assert_eq!(is_alphanumeric(c), c.is_alphanumeric(), "{c:?}");
        }
    }

    #[test]
    fn chunked_equals_whole() {
        // Processing in pieces gives the same tokens as one piece would.
        let text = "南京市长江大桥于1968年建成通车。它是长江上第一座由中国自行设计的双层铁路公路两用桥！".repeat(3000);
        let norm = crate::normalize::normalize(&text);
        let whole: Vec<&str> =
            jieba().cut(&norm, false).into_iter().map(|t| t.word).filter(|w| is_feature_token(w)).collect();
        assert_eq!(tokens(&text), whole);
    }
}
