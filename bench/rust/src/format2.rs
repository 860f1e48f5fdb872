//! Candidates for a fingerprint format 2, measured here only (docs/quality.md): format 1's
//! segmentation, feature hash and bit rule, with the weights changed where format 1 is weak —
//! words missing from the IDF tables (typos, names, identifiers) and edits that hit heavy words.
//!
//! * `unknown_idf`: the IDF of a token in neither table, × jieba's median (format 1: 0.5).
//! * `unknown_subwords`: an unknown ASCII token of 4+ characters enters as the character
//!   3-grams of `#token#`, its weight split evenly among them (a typo then changes a few grams
//!   instead of adding a whole heavy word).
//! * `subword_share`: every ASCII token of 4+ characters (known or not) keeps `1 − share` of
//!   its weight as a word and spreads `share` over its 3-grams, so a misspelt word still shares
//!   most of its grams with the original.
//! * `cjk_share`: the same for CJK words of 2+ characters, with their single characters as the
//!   pieces (a wrong character then leaves the others).
//! * `cap`: no feature weighs more than `cap` × the document's total weight (0: no cap).
//!
//! [`Format2::default`] is format 1 exactly (tested).

use std::cell::RefCell;

use simdup_core::features::{expected_distinct, quantize, sublinear_tf, Tally};
use simdup_core::hash::{feature_hash, mix64};
use simdup_core::idf;
use simdup_core::scheme::is_cjk;
use simdup_core::simhash::combine;
use simdup_core::tokens::for_each_token;

/// A format-2 candidate. [`Format2::default`] is format 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Format2 {
    pub unknown_idf: f32,
    pub unknown_subwords: bool,
    pub subword_share: f32,
    pub cjk_share: f32,
    pub cap: f32,
}

impl Default for Format2 {
    fn default() -> Self {
        Format2 {
            unknown_idf: simdup_core::features::UNKNOWN_IDF,
            unknown_subwords: false,
            subword_share: 0.0,
            cjk_share: 0.0,
            cap: 0.0,
        }
    }
}

/// Salt of the hash of a sub-word piece, so that a piece never shares a feature with a word.
const PIECE_SALT: u64 = 0x7375_6277_6f72_6431;

fn piece_hash(piece: &str) -> u64 {
    mix64(feature_hash(piece) ^ PIECE_SALT)
}

#[derive(Default)]
struct Scratch {
    norm: String,
    tally: Tally,
    /// Text of the distinct tokens, in tally order (only when a rule needs it).
    text: String,
    ends: Vec<u32>,
    weights: Vec<(u64, f64)>,
    pairs: Vec<(u64, i64)>,
    buf: String,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// Whether a token is an ASCII word long enough for 3-grams.
fn ascii_word(t: &str) -> bool {
    t.len() >= 4 && t.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Pushes `(piece hash, w / pieces)` for the pieces of `t`: 3-grams of `#t#` (ASCII) or its
/// characters (CJK).
fn push_pieces(t: &str, w: f64, cjk: bool, buf: &mut String, out: &mut Vec<(u64, f64)>) {
    if cjk {
        let n = t.chars().count() as f64;
        let mut b = [0u8; 4];
        for c in t.chars() {
            out.push((piece_hash(c.encode_utf8(&mut b)), w / n));
        }
    } else {
        buf.clear();
        buf.push('#');
        buf.push_str(t);
        buf.push('#');
        let n = (buf.len() - 2) as f64;
        for i in 0..buf.len() - 2 {
            out.push((piece_hash(&buf[i..i + 3]), w / n));
        }
    }
}

impl Format2 {
    fn needs_text(&self) -> bool {
        self.unknown_subwords || self.subword_share > 0.0 || self.cjk_share > 0.0
    }

    /// The SimHash of `text` under this candidate.
    pub fn simhash(&self, text: &str) -> Option<u64> {
        SCRATCH.with(|cell| self.simhash_in(text, &mut cell.borrow_mut()))
    }

    fn simhash_in(&self, text: &str, s: &mut Scratch) -> Option<u64> {
        let Scratch { norm, tally, text: words, ends, weights, pairs, buf } = s;
        let keep = self.needs_text();
        tally.reset(expected_distinct(text.len()));
        words.clear();
        ends.clear();
        for_each_token(text, norm, &mut simdup_core::no_interrupt, |t| {
            if tally.add(feature_hash(t)) && keep {
                words.push_str(t);
                ends.push(words.len() as u32);
            }
        });
        let table = idf::table();
        let unknown = table.median() * self.unknown_idf;
        weights.clear();
        tally.for_each_idf(table, f32::NAN, |i, hash, count, idf| {
            let known = !idf.is_nan();
            let w = sublinear_tf(count) * f64::from(if known { idf } else { unknown });
            if !keep {
                weights.push((hash, w));
                return;
            }
            let start = if i == 0 { 0 } else { ends[i - 1] as usize };
            let t = &words[start..ends[i] as usize];
            let (share, cjk) = if ascii_word(t) {
                if !known && self.unknown_subwords {
                    (1.0, false)
                } else {
                    (f64::from(self.subword_share), false)
                }
            } else if self.cjk_share > 0.0 && t.chars().count() >= 2 && t.chars().all(is_cjk) {
                (f64::from(self.cjk_share), true)
            } else {
                (0.0, false)
            };
            if share < 1.0 {
                weights.push((hash, w * (1.0 - share)));
            }
            if share > 0.0 {
                push_pieces(t, w * share, cjk, buf, weights);
            }
        });
        if self.cap > 0.0 {
            let total: f64 = weights.iter().map(|x| x.1).sum();
            let max = total * f64::from(self.cap);
            for x in weights.iter_mut() {
                x.1 = x.1.min(max);
            }
        }
        pairs.clear();
        pairs.extend(weights.iter().map(|&(h, w)| (h, quantize(w))));
        combine(pairs.iter().copied())
    }
}

/// The candidates the benchmark scores, by name.
pub fn candidates() -> Vec<(&'static str, Format2)> {
    let d = Format2::default();
    vec![
        ("f2_unk0.25", Format2 { unknown_idf: 0.25, ..d }),
        ("f2_unk0.1", Format2 { unknown_idf: 0.1, ..d }),
        ("f2_unksub", Format2 { unknown_subwords: true, ..d }),
        ("f2_cap3", Format2 { cap: 0.03, ..d }),
        ("f2_sub50", Format2 { subword_share: 0.5, ..d }),
        ("f2_sub50_unk0.25", Format2 { subword_share: 0.5, unknown_idf: 0.25, ..d }),
        ("f2_sub75_unk0.25", Format2 { subword_share: 0.75, unknown_idf: 0.25, ..d }),
        ("f2_sub50_cjk50", Format2 { subword_share: 0.5, cjk_share: 0.5, ..d }),
        ("f2_sub50_cjk50_unk0.25", Format2 { subword_share: 0.5, cjk_share: 0.5, unknown_idf: 0.25, ..d }),
        (
            "f2_sub50_cjk50_unk0.25_cap3",
            Format2 { subword_share: 0.5, cjk_share: 0.5, unknown_idf: 0.25, cap: 0.03, ..d },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_format_1() {
        let text = "南京市长江大桥于1968年建成通车。Photosynthesis qwzxy the end, ＡＢＣ！".repeat(20);
        for t in [text.as_str(), "数据库", "", "。。。", "Teh qiuck borwn fxo"] {
            assert_eq!(Format2::default().simhash(t), simdup_core::simhash(t), "{t}");
        }
    }

    #[test]
    fn pieces() {
        let mut out = Vec::new();
        push_pieces("word", 8.0, false, &mut String::new(), &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0], (piece_hash("#wo"), 2.0));
        out.clear();
        push_pieces("数据库", 3.0, true, &mut String::new(), &mut out);
        assert_eq!(out, [(piece_hash("数"), 1.0), (piece_hash("据"), 1.0), (piece_hash("库"), 1.0)]);
    }
}
