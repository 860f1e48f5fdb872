//! The aligned passages of two texts, for `simdup_explain`: the runs the two texts share and the
//! runs only one of them has.
//!
//! 1. **Units** ([`units`]): a CJK character (Han, kana, Hangul, CJK and full-width punctuation)
//!    is a unit on its own; other text is cut into words (runs of letters and digits), runs of
//!    whitespace, and single other characters (punctuation, symbols). A combining mark, a
//!    variation selector or a zero-width joiner stays with the unit before it. The units of a
//!    text, concatenated, are the text itself, byte for byte: nothing is normalized, dropped
//!    or added. So a Chinese text is compared character by character and an English one word by
//!    word.
//! 2. **Diff** ([`align`]): the two unit sequences are diffed with imara-diff's Histogram
//!    algorithm (a patience-diff variant that falls back to Myers' algorithm, with git's and GNU
//!    diff's heuristics, on runs of frequent units). Units are equal when their text is (exactly:
//!    case and width count). The result is deterministic.
//! 3. **Long texts**: a unit diff costs O((N + M) · D) for D differing units, which for two
//!    unrelated 100 KB Chinese texts is seconds. So texts whose diff could cost more than
//!    [`DIFF_BUDGET`] are first aligned by *chunks* of about 16 units, cut where the text itself
//!    says ([`chunk_bounds`]: content-defined, so an edit changes only the chunks it touches,
//!    and the chunks of a text are nearly all distinct, which the Histogram diff aligns in about
//!    linear time). Then each changed stretch is diffed unit by unit, while the budget lasts; a
//!    stretch beyond it (long, and sharing no chunk with the other text: unrelated text) stays
//!    one change, counted in [`Alignment::coarse_chars`].
//! 4. **Clean-up**: a shared run that is no longer than the changes on both sides of it (in
//!    characters) is reported as changed, so that two unrelated sentences do not come out as a
//!    spray of shared spaces and particles (the rule of diff-match-patch's semantic clean-up).
//!
//! Every passage is a slice of its text: the passages of sides [`Side::Both`] and [`Side::A`],
//! in order, concatenate to `a`; those of [`Side::Both`] and [`Side::B`] to `b` (tested below on
//! random texts). Changed units are reported as an `A` passage followed by a `B` passage.
//!
//! Cost: tokenizing is linear; the diffs are bounded by [`DIFF_BUDGET`] and the chunk diff by
//! the chunks' rarity (100 KB against 100 KB, edited or unrelated, Chinese or English, in well
//! under a second: tested below). The interrupt is called between the diffs, which cannot be
//! interrupted themselves; texts of more than [`MAX_UNITS`] units are refused
//! ([`AlignError::TooLong`]).

use crate::Interrupt;
use imara_diff::{Algorithm, Diff, InternedInput};
use std::ops::Range;

/// The most units a text may have for [`align`]: about 1 MB of Chinese or 2.5 MB of English.
pub const MAX_UNITS: usize = 400_000;

/// Characters tokenized between two calls of the interrupt.
const INTERRUPT_CHARS: usize = 64 * 1024;

/// Which text a passage belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Both texts have it.
    Both,
    /// Only the first text has it.
    A,
    /// Only the second text has it.
    B,
}

impl Side {
    /// `both`, `a` or `b`: the SQL name.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Both => "both",
            Side::A => "a",
            Side::B => "b",
        }
    }
}

/// A run of units of one or both texts: a slice of `a` (sides `Both` and `A`) or of `b` (side `B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passage<'t> {
    pub side: Side,
    pub text: &'t str,
}

/// The aligned passages of two texts ([`align`]), with their sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Alignment<'t> {
    pub passages: Vec<Passage<'t>>,
    /// Units of each text.
    pub units_a: usize,
    pub units_b: usize,
    /// Characters in the shared passages, and in the passages of one text only.
    pub shared_chars: usize,
    pub a_only_chars: usize,
    pub b_only_chars: usize,
    /// Characters of the changed passages that were not compared unit by unit: stretches of
    /// long texts that share no chunk and exceed the diff's budget (see the module). Zero but
    /// for long, largely different texts.
    pub coarse_chars: usize,
}

/// Why [`align`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlignError {
    /// A text has more than `max` ([`MAX_UNITS`]) units: found while tokenizing, which stops
    /// there (a text of 100 MB is not cut into units first).
    TooLong { max: usize },
}

impl std::fmt::Display for AlignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AlignError::TooLong { max } => write!(f, "a text of more than {max} units is too long to align"),
        }
    }
}

impl std::error::Error for AlignError {}

/// Whether `c` is a CJK character: a unit on its own.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF      // Hangul jamo
        | 0x2E80..=0x2FDF    // CJK and Kangxi radicals
        | 0x2FF0..=0x303F    // ideographic description, CJK symbols and punctuation
        | 0x3040..=0x31FF    // kana, bopomofo, Hangul compatibility jamo, kanbun, CJK strokes
        | 0x3200..=0x4DBF    // enclosed CJK, compatibility, extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xA960..=0xA97F    // Hangul jamo extended A
        | 0xAC00..=0xD7FF    // Hangul syllables, jamo extended B
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFE10..=0xFE1F    // vertical forms
        | 0xFE30..=0xFE6F    // CJK compatibility forms, small form variants
        | 0xFF00..=0xFFEF    // half-width and full-width forms
        | 0x1B000..=0x1B16F  // kana supplement and extended
        | 0x20000..=0x3FFFF // extensions B onwards, compatibility supplement
    )
}

/// A character that stays with the unit before it: a combining mark, a variation selector, a
/// zero-width joiner or non-joiner.
fn extends(c: char) -> bool {
    unicode_normalization::char::is_combining_mark(c)
        || matches!(c as u32, 0x200C | 0x200D | 0xFE00..=0xFE0F | 0xE0100..=0xE01EF)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Cjk,
    Word,
    Space,
    Other,
}

fn class(c: char) -> Class {
    if is_cjk(c) {
        Class::Cjk
    } else if c.is_alphanumeric() {
        Class::Word
    } else if c.is_whitespace() {
        Class::Space
    } else {
        Class::Other
    }
}

/// The byte offsets where the units of `text` start ([`units`]), and the text's length last;
/// None as soon as there are more than `max` units.
fn unit_bounds(text: &str, max: usize, interrupt: Interrupt<'_>) -> Option<Vec<usize>> {
    let mut bounds = Vec::new();
    let mut prev: Option<Class> = None;
    for (n, (i, c)) in text.char_indices().enumerate() {
        if n % INTERRUPT_CHARS == 0 {
            interrupt();
        }
        if prev.is_some() && extends(c) {
            continue; // stays with the unit before
        }
        let cls = class(c);
        // A word or a whitespace run goes on; every other character starts a unit.
        let goes_on = prev == Some(cls) && matches!(cls, Class::Word | Class::Space);
        if !goes_on {
            if bounds.len() == max {
                return None;
            }
            bounds.push(i);
        }
        prev = Some(cls);
    }
    bounds.push(text.len());
    Some(bounds)
}

/// The units of `text` (see the module): concatenated, they are `text`.
pub fn units<'t>(text: &'t str, interrupt: Interrupt<'_>) -> Vec<&'t str> {
    let bounds = unit_bounds(text, usize::MAX, interrupt).unwrap_or_default();
    bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// A text cut into units: byte offsets and the characters before each unit.
struct Cut<'t> {
    text: &'t str,
    /// Byte offset of unit i; the text's length last.
    bounds: Vec<usize>,
    /// Characters before unit i; the text's character count last.
    chars: Vec<usize>,
}

impl<'t> Cut<'t> {
    fn new(text: &'t str, interrupt: Interrupt<'_>) -> Result<Cut<'t>, AlignError> {
        let bounds = unit_bounds(text, MAX_UNITS, interrupt).ok_or(AlignError::TooLong { max: MAX_UNITS })?;
        let mut chars = Vec::with_capacity(bounds.len());
        let mut n = 0;
        chars.push(0);
        for w in bounds.windows(2) {
            n += text[w[0]..w[1]].chars().count();
            chars.push(n);
        }
        Ok(Cut { text, bounds, chars })
    }

    fn units(&self) -> usize {
        self.bounds.len() - 1
    }

    fn unit(&self, i: usize) -> &'t str {
        &self.text[self.bounds[i]..self.bounds[i + 1]]
    }

    fn slice(&self, r: &Range<usize>) -> &'t str {
        &self.text[self.bounds[r.start]..self.bounds[r.end]]
    }

    fn char_len(&self, r: &Range<usize>) -> usize {
        self.chars[r.end] - self.chars[r.start]
    }
}

/// A run of the alignment, in units: shared (equal ranges of both) or changed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Run {
    a: Range<usize>,
    b: Range<usize>,
    shared: bool,
}

/// The work the unit diffs of one alignment may do, as the sum of (units of a + units of b)²
/// over the ranges diffed unit by unit: a bound on Myers' O((N + M) · D) for each. About a
/// quarter of a second at worst on the 2-core machine of the tests.
pub const DIFF_BUDGET: u64 = 400_000_000;

/// Chunks (the coarse units of long texts) end, on average, every this many units.
const CHUNK_AVERAGE: u64 = 16;
/// A chunk has at least this many units (but at the end of the text) ...
const CHUNK_MIN: usize = 4;
/// ... and at most this many.
const CHUNK_MAX: usize = 64;

/// The aligned passages of `a` and `b` (see the module). Calls `interrupt` while tokenizing
/// (every 64 Ki characters), between diffs, and while the passages are built.
pub fn align<'t>(a: &'t str, b: &'t str, interrupt: Interrupt<'_>) -> Result<Alignment<'t>, AlignError> {
    let ca = Cut::new(a, &mut *interrupt)?;
    let cb = Cut::new(b, &mut *interrupt)?;
    let mut runs: Vec<Run> = Vec::new();
    let mut budget = DIFF_BUDGET;
    let mut coarse = 0;
    if cost(ca.units(), cb.units()) <= budget {
        diff_units(&ca, &cb, 0..ca.units(), 0..cb.units(), &mut runs);
    } else {
        // Long texts: aligned by chunks first, then each changed stretch unit by unit while the
        // budget lasts; a stretch beyond it stays one change.
        let (ka, kb) = (chunk_bounds(&ca), chunk_bounds(&cb));
        let mut input: InternedInput<&str> = InternedInput::default();
        input.reserve(ka.len() as u32, kb.len() as u32);
        input.update_before(ka.windows(2).map(|w| ca.slice(&(w[0]..w[1]))));
        input.update_after(kb.windows(2).map(|w| cb.slice(&(w[0]..w[1]))));
        interrupt();
        let mut diff = Diff::compute(Algorithm::Histogram, &input);
        diff.postprocess_no_heuristic(&input);
        interrupt();
        let unit = |k: &[usize], r: Range<u32>| k[r.start as usize]..k[r.end as usize];
        let (mut pa, mut pb) = (0, 0);
        for hunk in diff.hunks() {
            let (ra, rb) = (unit(&ka, hunk.before), unit(&kb, hunk.after));
            push(&mut runs, Run { a: pa..ra.start, b: pb..rb.start, shared: true });
            let c = cost(ra.len(), rb.len());
            if ra.is_empty() || rb.is_empty() {
                push(&mut runs, Run { a: ra.clone(), b: rb.clone(), shared: false });
            } else if c <= budget {
                budget -= c;
                diff_units(&ca, &cb, ra.clone(), rb.clone(), &mut runs);
                interrupt();
            } else {
                coarse += ca.char_len(&ra) + cb.char_len(&rb);
                push(&mut runs, Run { a: ra.clone(), b: rb.clone(), shared: false });
            }
            (pa, pb) = (ra.end, rb.end);
        }
        push(&mut runs, Run { a: pa..ca.units(), b: pb..cb.units(), shared: true });
    }
    interrupt();
    let runs = clean_up(runs, &ca, &cb);

    let mut out = Alignment { units_a: ca.units(), units_b: cb.units(), coarse_chars: coarse, ..Alignment::default() };
    for run in &runs {
        if run.shared {
            out.shared_chars += ca.char_len(&run.a);
            out.passages.push(Passage { side: Side::Both, text: ca.slice(&run.a) });
            continue;
        }
        if !run.a.is_empty() {
            out.a_only_chars += ca.char_len(&run.a);
            out.passages.push(Passage { side: Side::A, text: ca.slice(&run.a) });
        }
        if !run.b.is_empty() {
            out.b_only_chars += cb.char_len(&run.b);
            out.passages.push(Passage { side: Side::B, text: cb.slice(&run.b) });
        }
    }
    Ok(out)
}

/// The budget a unit diff of `n` and `m` units takes ([`DIFF_BUDGET`]).
fn cost(n: usize, m: usize) -> u64 {
    let s = (n + m) as u64;
    s * s
}

/// Appends a run unless it is empty on both sides; a run of the same kind as the last one
/// extends it.
fn push(runs: &mut Vec<Run>, run: Run) {
    if run.a.is_empty() && run.b.is_empty() {
        return;
    }
    if let Some(last) = runs.last_mut() {
        if last.shared == run.shared && last.a.end == run.a.start && last.b.end == run.b.start {
            last.a.end = run.a.end;
            last.b.end = run.b.end;
            return;
        }
    }
    runs.push(run);
}

/// Appends the runs of the unit diff of units `ra` of `ca` and `rb` of `cb`.
fn diff_units(ca: &Cut<'_>, cb: &Cut<'_>, ra: Range<usize>, rb: Range<usize>, runs: &mut Vec<Run>) {
    let mut input: InternedInput<&str> = InternedInput::default();
    input.reserve(ra.len() as u32, rb.len() as u32);
    input.update_before(ra.clone().map(|i| ca.unit(i)));
    input.update_after(rb.clone().map(|i| cb.unit(i)));
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_no_heuristic(&input);
    let (mut pa, mut pb) = (ra.start, rb.start);
    for hunk in diff.hunks() {
        let ha = ra.start + hunk.before.start as usize..ra.start + hunk.before.end as usize;
        let hb = rb.start + hunk.after.start as usize..rb.start + hunk.after.end as usize;
        push(runs, Run { a: pa..ha.start, b: pb..hb.start, shared: true });
        push(runs, Run { a: ha.clone(), b: hb.clone(), shared: false });
        (pa, pb) = (ha.end, hb.end);
    }
    push(runs, Run { a: pa..ra.end, b: pb..rb.end, shared: true });
}

/// The unit indices where the chunks of a text start, and its unit count last. A chunk ends
/// after a unit where a hash of that unit and the one before is 0 modulo [`CHUNK_AVERAGE`]
/// (between [`CHUNK_MIN`] and [`CHUNK_MAX`] units): the cuts depend on the text around them,
/// not on where it stands, so an insertion or deletion changes only the chunks it touches
/// (content-defined chunking, as rsync's).
fn chunk_bounds(cut: &Cut<'_>) -> Vec<usize> {
    let mut bounds = vec![0];
    let mut prev = 0u64;
    let mut start = 0;
    for i in 0..cut.units() {
        let h = xxhash_rust::xxh3::xxh3_64(cut.unit(i).as_bytes());
        let len = i + 1 - start;
        if len >= CHUNK_MAX
            || (len >= CHUNK_MIN && crate::hash::mix64(prev ^ h.rotate_left(17)).is_multiple_of(CHUNK_AVERAGE))
        {
            bounds.push(i + 1);
            start = i + 1;
        }
        prev = h;
    }
    if *bounds.last().unwrap_or(&0) != cut.units() {
        bounds.push(cut.units());
    }
    bounds
}

/// The semantic clean-up (see the module): a shared run between two changed runs, no longer
/// (in characters) than the larger side of the change before it and of the change after it,
/// joins them into one changed run; then neighbouring changed runs are one run.
fn clean_up(runs: Vec<Run>, ca: &Cut<'_>, cb: &Cut<'_>) -> Vec<Run> {
    let size = |r: &Run| ca.char_len(&r.a).max(cb.char_len(&r.b));
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    for run in runs {
        out.push(run);
        while let [.., before, shared, after] = &out[..] {
            if before.shared || !shared.shared || after.shared {
                break;
            }
            let len = ca.char_len(&shared.a);
            if len > size(before) || len > size(after) {
                break;
            }
            let (a_end, b_end) = (after.a.end, after.b.end);
            out.truncate(out.len() - 2);
            if let Some(before) = out.last_mut() {
                before.a.end = a_end;
                before.b.end = b_end;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::no_interrupt;

    fn join(al: &Alignment<'_>, side: Side) -> String {
        al.passages.iter().filter(|p| p.side == Side::Both || p.side == side).map(|p| p.text).collect()
    }

    fn check(a: &str, b: &str) -> Alignment<'static> {
        let (a, b): (&'static str, &'static str) = (Box::leak(a.into()), Box::leak(b.into()));
        let al = align(a, b, &mut no_interrupt).unwrap();
        assert_eq!(join(&al, Side::A), a, "a reassembles");
        assert_eq!(join(&al, Side::B), b, "b reassembles");
        assert!(al.passages.iter().all(|p| !p.text.is_empty()), "no empty passage");
        // No two neighbouring passages of one side, and a shared passage never follows another.
        for w in al.passages.windows(2) {
            assert!(w[0].side != w[1].side, "{:?}", al.passages);
            assert!(!(w[0].side == Side::B && w[1].side == Side::A), "a before b in a change: {:?}", al.passages);
        }
        let count = |s: Side| al.passages.iter().filter(|p| p.side == s).map(|p| p.text.chars().count()).sum::<usize>();
        assert_eq!(
            (al.shared_chars, al.a_only_chars, al.b_only_chars),
            (count(Side::Both), count(Side::A), count(Side::B))
        );
        al
    }

    fn sides(al: &Alignment<'_>) -> Vec<(&'static str, String)> {
        al.passages.iter().map(|p| (p.side.as_str(), p.text.to_string())).collect()
    }

    #[test]
    fn units_are_cjk_characters_and_words() {
        let u = units("国家统计局 said: 1968年, the bridge’s \"deck\"  opened.\n", &mut no_interrupt);
        assert_eq!(
            u,
            [
                "国", "家", "统", "计", "局", " ", "said", ":", " ", "1968", "年", ",", " ", "the", " ", "bridge", "’",
                "s", " ", "\"", "deck", "\"", "  ", "opened", ".", "\n"
            ]
        );
        // Full-width punctuation and kana are CJK units; combining marks stay with their letter.
        assert_eq!(units("，。カナ", &mut no_interrupt), ["，", "。", "カ", "ナ"]);
        assert_eq!(units("cafe\u{301} ok", &mut no_interrupt), ["cafe\u{301}", " ", "ok"]);
        assert_eq!(units("e\u{301}\u{301}", &mut no_interrupt), ["e\u{301}\u{301}"]);
        assert_eq!(units("\u{301}x", &mut no_interrupt), ["\u{301}", "x"]);
        assert!(units("", &mut no_interrupt).is_empty());
    }

    #[test]
    fn an_edited_chinese_copy() {
        let a = "国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三。";
        let b = "国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三！";
        let al = check(a, b);
        assert_eq!(
            sides(&al),
            [
                ("both", "国家统计局".into()),
                ("a", "今天".into()),
                ("both", "发布数据显示，".into()),
                ("a", "今年".into()),
                ("both", "前三季度全国居民人均可支配收入同比名义增长百分之六点三".into()),
                ("a", "。".into()),
                ("b", "！".into()),
            ]
        );
        assert_eq!((al.a_only_chars, al.b_only_chars), (5, 1));
    }

    #[test]
    fn an_edited_english_copy_is_compared_by_words() {
        let a = "The Nanjing Yangtze River Bridge opened in 1968.";
        let b = "The Yangtze River Bridge in Nanjing opened in 1968!";
        let al = check(a, b);
        assert_eq!(
            sides(&al),
            [
                ("both", "The ".into()),
                ("a", "Nanjing ".into()),
                ("both", "Yangtze River Bridge ".into()),
                ("b", "in Nanjing ".into()),
                ("both", "opened in 1968".into()),
                ("a", ".".into()),
                ("b", "!".into()),
            ]
        );
        // A changed word is the whole word, not its common letters.
        assert_eq!(sides(&check("a colour b", "a color b"))[1], ("a", "colour".into()));
    }

    #[test]
    fn unrelated_texts_are_one_change_not_a_spray_of_spaces() {
        let al = check("apples and pears are fruit", "a storm hit the coast at night");
        assert_eq!(al.shared_chars, 0, "{:?}", al.passages);
        assert_eq!(al.passages.len(), 2);
        // A long shared passage between two short changes stays shared.
        let al =
            check("Yesterday the central bank raised its key rate.", "Today the central bank raised its key rate!");
        assert!(al.passages.contains(&Passage { side: Side::Both, text: " the central bank raised its key rate" }));
    }

    #[test]
    fn empty_and_identical_texts() {
        assert!(check("", "").passages.is_empty());
        assert_eq!(sides(&check("", "abc")), [("b", "abc".into())]);
        assert_eq!(sides(&check("abc", "")), [("a", "abc".into())]);
        assert_eq!(sides(&check("同一段文字。", "同一段文字。")), [("both", "同一段文字。".into())]);
    }

    #[test]
    fn too_long_texts_are_refused_before_the_diff() {
        let long = "字".repeat(MAX_UNITS + 1);
        assert_eq!(align(&long, "x", &mut no_interrupt), Err(AlignError::TooLong { max: MAX_UNITS }));
        assert!(align("x", &long, &mut no_interrupt).is_err());
        assert!(align(&long[3..], "x", &mut no_interrupt).is_ok(), "exactly MAX_UNITS units");
        // Tokenizing stops at the limit: a 100 MB text is refused without cutting all of it.
        let huge = "字".repeat(35_000_000);
        let mut calls = 0;
        assert!(align(&huge, "x", &mut || calls += 1).is_err());
        assert!(calls < 10, "{calls}");
        // Words are units: the same bytes of English are fewer units.
        let words = "word ".repeat(MAX_UNITS / 2 - 1);
        assert!(align(&words, "x", &mut no_interrupt).is_ok());
    }

    #[test]
    fn the_interrupt_is_called_and_may_stop_the_alignment() {
        let text = "南京长江大桥。".repeat(30_000);
        let mut calls = 0;
        align(&text, &text, &mut || calls += 1).unwrap();
        assert!(calls >= 8, "{calls}");
        let stopped = std::panic::catch_unwind(|| {
            let mut n = 0;
            align(&text, &text, &mut || {
                n += 1;
                if n == 3 {
                    panic!("cancelled");
                }
            })
        });
        assert!(stopped.is_err());
    }

    /// A pseudo-random text of Chinese characters, English words, spaces, punctuation and the
    /// odd combining mark, from a seed.
    fn random_text(seed: u64, len: usize) -> String {
        const PIECES: &[&str] = &[
            "的",
            "国",
            "家",
            "。",
            "，",
            "年",
            "桥",
            "the",
            "bridge",
            "river",
            " ",
            "  ",
            "\n",
            ".",
            ",",
            "1968",
            "e\u{301}",
            "カ",
            "’",
            "\t",
            "Yangtze",
            "ｆｕｌｌ",
        ];
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                PIECES[(x % PIECES.len() as u64) as usize]
            })
            .collect()
    }

    /// `text` with about one character in `one_in` deleted, replaced or followed by an
    /// insertion, from a seed.
    fn edited_one_in(text: &str, seed: u64, one_in: u64) -> String {
        let mut x = seed | 1;
        let mut out = String::new();
        for c in text.chars() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % one_in {
                0 => {}
                1 => out.push('改'),
                2 => {
                    out.push(c);
                    out.push_str(" new ");
                }
                _ => out.push(c),
            }
        }
        out
    }

    /// `text` with some of its pieces deleted, replaced or repeated, from a seed.
    fn edited(text: &str, seed: u64) -> String {
        edited_one_in(text, seed, 23)
    }

    /// `text` with about one character in 200 deleted, replaced or followed by an insertion.
    fn lightly_edited(text: &str, seed: u64) -> String {
        edited_one_in(text, seed, 600)
    }

    /// The property: shared and a-only passages reassemble a; shared and b-only passages
    /// reassemble b; for unrelated, edited, identical and empty texts.
    #[test]
    fn passages_reassemble_both_texts() {
        for seed in 0..300u64 {
            let a = random_text(seed, (seed % 97) as usize);
            let b = random_text(seed + 1000, (seed % 53) as usize);
            check(&a, &b);
            check(&a, &edited(&a, seed));
            check(&edited(&a, seed + 7), &a);
            check(&a, &a);
            check(&a, "");
        }
    }

    /// Long texts go through the chunks: the passages still reassemble both texts, an edited
    /// copy is still aligned unit by unit, and unrelated text is one coarse change.
    #[test]
    fn long_texts_are_aligned_by_chunks_first() {
        for seed in 0..6u64 {
            let a = random_text(seed, 12_000);
            assert!(cost(units(&a, &mut no_interrupt).len(), 1) > 0);
            check(&a, &edited(&a, seed));
            let al = check(&a, &lightly_edited(&a, seed));
            assert_eq!(al.coarse_chars, 0);
            assert!(al.shared_chars > al.a_only_chars * 5, "{} {}", al.shared_chars, al.a_only_chars);
            check(&a, &format!("{}{a}", random_text(seed + 50, 3_000)));
            check(&a, &random_text(seed + 100, 12_000));
        }
    }

    /// A text of `n` pieces drawn from `pieces`, from a seed.
    fn draw(seed: u64, n: usize, pieces: &[&str]) -> String {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                pieces[(x % pieces.len() as u64) as usize]
            })
            .collect()
    }

    /// 100 KB against 100 KB, in well under a second each in an optimized build (the core part
    /// of scripts/test.sh; a debug build is slower): edited copies and unrelated texts, real
    /// and drawn from the 100 most frequent Chinese characters (every unit frequent: the worst
    /// case of a unit diff, seconds without the chunks) or English words.
    #[test]
    fn hundred_kilobyte_texts_align_quickly() {
        let grow = |s: &str| {
            let mut out = String::new();
            let mut i = 0;
            while out.len() < 100_000 {
                out.push_str(&edited(s, i));
                i += 1;
            }
            out
        };
        let zh = grow(include_str!("../tests/fixtures/zh/01.txt"));
        let en = grow(include_str!("../tests/fixtures/en/01.txt"));
        let frequent: Vec<&str> = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没公从，。"
            .split("")
            .filter(|s| !s.is_empty())
            .collect();
        let words: Vec<&str> = "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their been has when who will more no if out so said what up its about into than them can only other new some time could these two may then do first any my now such like our over"
            .split(' ')
            .collect();
        let words: Vec<String> = words.iter().map(|w| format!("{w} ")).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let (fa, fb) = (draw(1, 34_000, &frequent), draw(2, 34_000, &frequent));
        let (wa, wb) = (draw(3, 25_000, &words), draw(4, 25_000, &words));
        let cases = [
            (zh.clone(), lightly_edited(&zh, 99)),
            (zh.clone(), edited(&zh, 98)),
            (zh.clone(), en.clone()),
            (en.clone(), lightly_edited(&en, 3)),
            (en.clone(), edited(&en, 4)),
            (fa.clone(), fb.clone()),
            (fa.clone(), lightly_edited(&fa, 5)),
            (wa.clone(), wb.clone()),
            (wa.clone(), lightly_edited(&wa, 6)),
        ];
        for (n, (a, b)) in cases.iter().enumerate() {
            assert!(a.len() >= 90_000 && b.len() >= 90_000);
            let t0 = std::time::Instant::now();
            let al = check(a, b);
            let took = t0.elapsed();
            if !cfg!(debug_assertions) {
                assert!(took < std::time::Duration::from_secs(1), "{took:?}");
            }
            // The lightly edited copies are aligned unit by unit; unrelated texts are one change.
            match n {
                0 | 3 | 6 | 8 => assert_eq!(al.coarse_chars, 0, "case {n}"),
                2 | 5 => assert_eq!(al.passages.len(), 2, "case {n}"),
                _ => {}
            }
        }
    }
}
