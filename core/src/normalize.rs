//! Text normalization: Unicode NFKC, then lower case.
//!
//! NFKC maps full-width Latin letters, digits and punctuation to their half-width forms
//! (`ＡＢＣ１２３` → `abc123` after lower-casing), compatibility ideographs to unified ones and
//! ligatures to letters, so that copies differing only in such forms get equal features.

use unicode_normalization::UnicodeNormalization;

/// Normalizes `text` into `out` (cleared first), reusing its allocation.
pub fn normalize_into(text: &str, out: &mut String) {
    out.clear();
    out.reserve(text.len());
    if text.is_ascii() {
        // ASCII is already NFKC: only lower-case it.
        out.push_str(text);
        out.make_ascii_lowercase();
        return;
    }
    // CJK unified ideographs have no decomposition and never compose with a neighbour, so
    // they are copied as they are and only the runs between them go through NFKC (Chinese text
    // is mostly ideographs; this is the hot path).
    let mut run_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if is_stable_ideograph(c) {
            if let Some(s) = run_start.take() {
                push_nfkc_lower(&text[s..i], out);
            }
            out.push(c);
        } else if run_start.is_none() {
            run_start = Some(i);
        }
    }
    if let Some(s) = run_start {
        push_nfkc_lower(&text[s..], out);
    }
}

/// CJK Unified Ideographs (and Extension A): NFKC-stable starters that never compose.
#[inline]
fn is_stable_ideograph(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
}

fn push_nfkc_lower(run: &str, out: &mut String) {
    if run.is_ascii() {
        out.extend(run.chars().map(|c| c.to_ascii_lowercase()));
        return;
    }
    for c in run.nfkc() {
        if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
}

/// Normalizes `text` into a new string.
pub fn normalize(text: &str) -> String {
    let mut out = String::new();
    normalize_into(text, &mut out);
    out
}

/// Splits `text` into pieces of about `target` bytes at places where neither normalization nor
/// segmentation can join characters across the cut: after whitespace or sentence punctuation
/// (none of which jieba puts inside a word), when the next character is not a combining mark.
/// A piece with no such place within `16 × target` bytes is cut at the next character boundary
/// not followed by a combining mark, so memory stays bounded on any input.
pub fn chunks(text: &str, target: usize) -> Chunks<'_> {
    Chunks { rest: text, target: target.max(1) }
}

/// Iterator returned by [`chunks`].
pub struct Chunks<'a> {
    rest: &'a str,
    target: usize,
}

fn is_cut_char(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '。' | '！' | '？' | '；' | '，' | '、' | '：' | ',' | ';' | '!' | '?' | ':' | '\u{3000}'
        )
}

fn is_combining(c: char) -> bool {
    unicode_normalization::char::is_combining_mark(c) || matches!(c, '\u{200c}' | '\u{200d}')
}

impl<'a> Iterator for Chunks<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        if self.rest.len() <= self.target {
            return Some(std::mem::take(&mut self.rest));
        }
        let hard_limit = self.target.saturating_mul(16);
        let mut soft: Option<usize> = None;
        let mut hard: Option<usize> = None;
        let mut iter = self.rest.char_indices().peekable();
        while let Some((i, c)) = iter.next() {
            let end = i + c.len_utf8();
            let next_ok = iter.peek().map_or(true, |&(_, n)| !is_combining(n));
            if end >= self.target && next_ok && is_cut_char(c) {
                soft = Some(end);
                break;
            }
            if end >= hard_limit && next_ok {
                hard = Some(end);
                break;
            }
        }
        let cut = soft.or(hard).unwrap_or(self.rest.len());
        let (head, tail) = self.rest.split_at(cut);
        self.rest = tail;
        Some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_and_case() {
        assert_eq!(normalize("ＡＢＣ１２３，Ｈｅｌｌｏ"), "abc123,hello");
        assert_eq!(normalize("Straße ÉCOLE"), "straße école");
        assert_eq!(normalize("ﬁne"), "fine");
        assert_eq!(normalize("中文　文本"), "中文 文本");
    }

    #[test]
    fn fast_path_equals_plain_nfkc() {
        let samples = [
            "中文，ＡＢＣ１２３。Ｈｅｌｌｏ　世界！e\u{301}中\u{301}文 ﬁ ㈱ ｶﾞ ①",
            "纯中文文本没有别的字符",
            "Mixed ASCII 与 中文 and café",
        ];
        for s in samples {
            let plain: String = s.nfkc().flat_map(char::to_lowercase).collect();
            assert_eq!(normalize(s), plain, "{s}");
        }
    }

    #[test]
    fn chunks_cover_input_exactly() {
        let text = "今天天气很好。我们去公园散步，看见了很多人！".repeat(200);
        let pieces: Vec<&str> = chunks(&text, 100).collect();
        assert!(pieces.len() > 10);
        assert_eq!(pieces.concat(), text);
        for p in &pieces[..pieces.len() - 1] {
            let last = p.chars().last().unwrap();
            assert!(is_cut_char(last), "piece ends in {last:?}");
        }
    }

    #[test]
    fn chunks_without_cut_points_are_bounded() {
        let text = "字".repeat(10_000);
        let pieces: Vec<&str> = chunks(&text, 64).collect();
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|p| p.len() <= 64 * 16 + 4));
    }
}
