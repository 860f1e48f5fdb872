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
    // Code points U+4000..=U+9FFF (CJK Unified Ideographs, the end of Extension A and the
    // Yijing hexagrams) have no decomposition, canonical combining class 0 and never compose
    // with a neighbour, so runs of them are copied as they are and only the text between them
    // goes through NFKC. In UTF-8 they are exactly the 3-byte sequences led by 0xE4..=0xE9,
    // so the scan needs no decoding (Chinese text is mostly such characters: the hot path).
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut stable_start = 0; // start of the current run of such characters
    let mut other_start: Option<usize> = None; // start of the current run of anything else
    while i < bytes.len() {
        if (0xE4..=0xE9).contains(&bytes[i]) {
            if let Some(s) = other_start.take() {
                push_nfkc_lower(&text[s..i], out);
                stable_start = i;
            }
            i += 3;
        } else {
            if other_start.is_none() {
                out.push_str(&text[stable_start..i]);
                other_start = Some(i);
            }
            i += 1;
        }
    }
    match other_start {
        Some(s) => push_nfkc_lower(&text[s..], out),
        None => out.push_str(&text[stable_start..]),
    }
}

fn push_nfkc_lower(run: &str, out: &mut String) {
    // Most runs between ideographs are ASCII, full-width forms and CJK punctuation, whose NFKC
    // is character by character (no combining mark, nothing that composes): map them directly.
    let mark = out.len();
    if run.is_ascii() {
        out.push_str(run);
        // SAFETY: lower-casing ASCII bytes keeps the string valid UTF-8.
        unsafe { out.as_bytes_mut()[mark..].make_ascii_lowercase() };
        return;
    }
    if run.chars().all(|c| match simple_nfkc_lower(c) {
        Some(m) => {
            out.push(m);
            true
        }
        None => false,
    }) {
        return;
    }
    out.truncate(mark);
    for c in run.nfkc() {
        if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
}

/// NFKC then lower case of characters whose normalization does not depend on their neighbours
/// in a run made only of such characters: ASCII, full-width ASCII (U+FF01..=U+FF5E, which NFKC
/// maps to U+0021..=U+007E), the ideographic space and NFKC-stable CJK and quotation
/// punctuation. `None` for anything else (the caller then runs full NFKC).
#[inline]
fn simple_nfkc_lower(c: char) -> Option<char> {
    match c {
        '\0'..='\u{7f}' => Some(c.to_ascii_lowercase()),
        '\u{ff01}'..='\u{ff5e}' => Some(char::from((c as u32 - 0xfee0) as u8).to_ascii_lowercase()),
        '\u{3000}' => Some(' '),
        '\u{3001}'
        | '\u{3002}'
        | '\u{300a}'..='\u{3011}'
        | '\u{2018}'
        | '\u{2019}'
        | '\u{201c}'
        | '\u{201d}'
        | '\u{2014}'
        | '\u{00b7}' => Some(c),
        _ => None,
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
        || matches!(c, '。' | '！' | '？' | '；' | '，' | '、' | '：' | ',' | ';' | '!' | '?' | ':' | '\u{3000}')
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
            let next_ok = iter.peek().is_none_or(|&(_, n)| !is_combining(n));
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
            "\u{4dc0}\u{4dff}\u{4000}\u{9fff}\u{3400}\u{3000}\u{f900}\u{fa0e}丽ＡＢ",
            "e\u{301}\u{4e00}\u{301}\u{0327}a\u{4e00}",
        ];
        for s in samples {
            let plain: String = s.nfkc().flat_map(char::to_lowercase).collect();
            assert_eq!(normalize(s), plain, "{s}");
        }
    }

    #[test]
    fn simple_map_is_nfkc() {
        for c in (0u32..0x80)
            .chain(0xff01..=0xff5e)
            .chain([0x3000, 0x3001, 0x3002, 0x2018, 0x2019, 0x201c, 0x201d, 0x2014, 0xb7])
            .chain(0x300a..=0x3011)
        {
            let c = char::from_u32(c).unwrap();
            let plain: String = c.to_string().nfkc().flat_map(char::to_lowercase).collect();
            assert_eq!(simple_nfkc_lower(c).map(String::from), Some(plain), "{c:?}");
        }
    }

    #[test]
    fn one_pass_is_the_format_even_where_it_is_not_idempotent() {
        // ῼ + three accents: NFKC reorders the iota subscript (U+0345, class 240) after the
        // accents and composes Ω + U+0301 to Ώ, which has no composition with U+0345; lower
        // case gives ώ, which has (ῴ). Format 1 is the single pass: a second pass differs.
        let s = "\u{1ffc}\u{301}\u{302}\u{303}";
        assert_eq!(normalize(s), "\u{3ce}\u{302}\u{303}\u{345}");
        assert_eq!(normalize(&normalize(s)), "\u{1ff4}\u{302}\u{303}");
        assert_eq!(normalize(&normalize(&normalize(s))), normalize(&normalize(s)));
    }

    proptest::proptest! {
        /// The fast paths give exactly NFKC followed by lower case, on text mixing ideographs,
        /// ASCII, full-width forms, punctuation, combining marks and compatibility characters.
        #[test]
        fn fast_paths_equal_plain_nfkc(chars in proptest::collection::vec(proptest::sample::select(vec![
            'a', 'Z', 'e', ' ', ',', '1', 'Ａ', 'ｚ', '１', '，', '！', '（', '\u{3000}', '。', '、', '“', '”', '《',
            '中', '文', '\u{4e00}', '\u{9fff}', '\u{4dc0}', '\u{3400}', '\u{301}', '\u{327}', '\u{308}',
            '…', 'ﬁ', '①', '㈱', 'ｶ', 'ﾞ', '\u{1100}', '\u{1161}', 'É', 'ǅ', 'Σ', '\u{f900}', '\u{ff9e}',
        ]), 0..40)) {
            let s: String = chars.into_iter().collect();
            let plain: String = s.nfkc().map(|c| if c.is_uppercase() { c.to_lowercase().collect::<String>() } else { c.to_string() }).collect();
            proptest::prop_assert_eq!(normalize(&s), plain);
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
