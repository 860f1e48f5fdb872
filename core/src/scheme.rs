//! Fingerprint schemes: alternatives to the default weighting, selectable by name in SQL.
//!
//! The default scheme is fingerprint format 1 ([`crate::simhash::simhash`]) and is computed by
//! exactly the same code; given a title, it fingerprints the title and the body as one text,
//! `title + "\n" + body` (measured best of the title-aware choices, docs/quality.md). The other
//! schemes use the same normalization, segmentation (jieba-rs 0.11.0, HMM off), feature hash and
//! bit rule, fingerprint the body only, and change the weight of each feature:
//!
//! * [`Scheme::Title`]: a body word that also occurs in the title weighs ×5 ([`TITLE_BOOST`]).
//! * [`Scheme::Improved`]: the weighting of Zhang & He 2020 (张兴兰, 何丹丹, "基于改进的Simhash算法
//!   的相似文档识别技术", 计算机科学与应用 10(2): 371–378): TF-IDF × part of speech
//!   ([`pos_factor`]: nouns, verbs, idioms and English words 1, modifiers 0.6, function words
//!   0.3) × normalized word length ([`length_factor`]) × 5 for cue words ([`CUE_WORDS`]) × 5
//!   for words also in the title. The paper gives the factors but not all constants; these are
//!   simdup's.
//!
//! A scheme's fingerprints are as much a storage format as the default's: the constants and word
//! lists here are pinned by `core/tests/golden.rs` and `tests/pg_regress/expected/schemes.out`.
//!
//! Settings that were measured and not adopted (NFKC or lower case off, stopwords, HMM on,
//! character n-grams, other term-frequency and unknown-word weights) live in the benchmark
//! crate (bench/rust, docs/quality.md), not here.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use crate::features::{features, unknown_idf, weight, Feature};
use crate::hash::{feature_hash, HashKeyed};
use crate::idf;
use crate::normalize::normalize_into;
use crate::simhash::{fingerprint, simhash_with};
use crate::tokens::for_each_tagged_token;
use crate::Interrupt;

/// Weight factor of a body word that also occurs in the title ([`Scheme::Title`],
/// [`Scheme::Improved`]).
pub const TITLE_BOOST: f32 = 5.0;

/// Weight factor of a cue word ([`Scheme::Improved`]).
pub const CUE_BOOST: f32 = 5.0;

/// Cue words (标志词) of [`Scheme::Improved`]: words that announce a summary, a conclusion or
/// a turn, Chinese and English. Matched as whole normalized tokens. (jieba tags most of them as
/// conjunctions, so with the part-of-speech factor they end up at 5 × 0.3 = 1.5 times their
/// TF-IDF weight.)
pub const CUE_WORDS: &[&str] = &[
    "综上所述",
    "总之",
    "总而言之",
    "总的来说",
    "由此可见",
    "可见",
    "因此",
    "所以",
    "因而",
    "但是",
    "然而",
    "不过",
    "可是",
    "最后",
    "最终",
    "首先",
    "其次",
    "此外",
    "另外",
    "而且",
    "事实上",
    "实际上",
    "显然",
    "换句话说",
    "也就是说",
    "总体而言",
    "结果",
    "据悉",
    "however",
    "therefore",
    "thus",
    "hence",
    "but",
    "finally",
    "overall",
    "consequently",
    "moreover",
    "furthermore",
    "nevertheless",
    "conclusion",
    "summary",
    "although",
    "meanwhile",
];

/// The weight factors of a scheme, on top of format 1's TF-IDF. [`Weighting::default`] changes
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weighting {
    /// Multiply by [`pos_factor`] of the word's jieba part of speech (format 1: no).
    pub pos: bool,
    /// Multiply by [`length_factor`] (format 1: no).
    pub length: bool,
    /// Factor of a [`CUE_WORDS`] word (format 1: 1).
    pub cue: f32,
    /// Factor of a word that also occurs in the title (format 1: 1, no title).
    pub title: f32,
}

impl Default for Weighting {
    fn default() -> Self {
        Weighting { pos: false, length: false, cue: 1.0, title: 1.0 }
    }
}

/// Weighting and the use of a title. [`Options::default`] is fingerprint format 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    pub weighting: Weighting,
    /// A title given is part of the text: `title + "\n" + body` is fingerprinted (format 1:
    /// yes). Otherwise the title only weights ([`Weighting::title`]).
    pub title_text: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { weighting: Weighting::default(), title_text: true }
    }
}

impl Options {
    /// Whether these options compute fingerprint format 1 exactly (of `title + "\n" + body`
    /// when a title is given).
    pub fn is_format_1(&self) -> bool {
        *self == Options::default()
    }

    /// Whether the title changes the weights.
    pub fn title_weights(&self) -> bool {
        self.weighting.title != 1.0
    }
}

/// A named fingerprint scheme, as selected in SQL by `simhash(body, title, scheme)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Fingerprint format 1: `simhash(body)`, or `simhash(title + "\n" + body)` given a title.
    Default,
    /// Format 1 weights, body words that also occur in the title ×5.
    Title,
    /// Zhang & He 2020: part of speech, word length, cue words ×5, title words ×5.
    Improved,
}

impl Scheme {
    /// Every scheme, in the order they are documented.
    pub const ALL: [Scheme; 3] = [Scheme::Default, Scheme::Title, Scheme::Improved];

    /// The scheme's name in SQL.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Default => "default",
            Scheme::Title => "title",
            Scheme::Improved => "improved",
        }
    }

    /// The scheme's settings.
    pub fn options(self) -> Options {
        let d = Options::default();
        match self {
            Scheme::Default => d,
            Scheme::Title => Options { weighting: Weighting { title: TITLE_BOOST, ..d.weighting }, title_text: false },
            Scheme::Improved => Options {
                weighting: Weighting { pos: true, length: true, cue: CUE_BOOST, title: TITLE_BOOST },
                title_text: false,
            },
        }
    }
}

/// An unknown scheme name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownScheme(pub String);

impl fmt::Display for UnknownScheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown simhash scheme \"{}\"", self.0)
    }
}

impl std::error::Error for UnknownScheme {}

impl FromStr for Scheme {
    type Err = UnknownScheme;

    /// Scheme names are matched case-insensitively, surrounding whitespace ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Scheme::ALL.into_iter().find(|x| x.name().eq_ignore_ascii_case(t)).ok_or_else(|| UnknownScheme(s.to_string()))
    }
}

/// The names of all schemes, comma-separated (for error hints).
pub fn scheme_names() -> String {
    Scheme::ALL.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
}

// ---------------------------------------------------------------------------------------------
// Terms.

/// One distinct feature token of a text, before weighting.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// The token (empty unless tokens were kept).
    pub token: String,
    /// Its feature hash.
    pub hash: u64,
    /// Occurrences.
    pub count: u32,
    /// [`pos_factor`] of its jieba part-of-speech tag.
    pub pos: f32,
    /// [`length_factor`] of the token.
    pub length: f32,
}

/// Factor of a jieba part-of-speech tag in [`Scheme::Improved`]: nouns (`n*`), verbs (`v*`),
/// idioms and fixed expressions (`i`, `l`), abbreviations (`j`) and English words (`eng`)
/// 1.0; adjectives, adverbs, distinguishing and state words, time, place and direction words,
/// numerals and measure words 0.6; everything else (pronouns, prepositions, conjunctions,
/// particles, interjections, ...) 0.3.
pub fn pos_factor(tag: &str) -> f32 {
    match tag.as_bytes().first() {
        Some(b'n' | b'v' | b'i' | b'l' | b'j') => 1.0,
        _ if tag == "eng" => 1.0,
        Some(b'a' | b'b' | b'd' | b'z' | b't' | b's' | b'f' | b'm' | b'q') => 0.6,
        _ => 0.3,
    }
}

/// Normalized word length in [`Scheme::Improved`]: characters / 4 for a word with a CJK
/// character, characters / 8 for other words (English, numbers), at most 1.
pub fn length_factor(token: &str) -> f32 {
    let mut n = 0u32;
    let mut cjk = false;
    for c in token.chars() {
        n += 1;
        cjk |= is_cjk(c);
    }
    let cap = if cjk { 4.0 } else { 8.0 };
    (n as f32 / cap).min(1.0)
}

/// A CJK unified ideograph (basic block or extension A).
pub fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
}

/// Distinct terms of a text in order of first occurrence, counted by feature hash.
#[cfg_attr(feature = "experiments", visibility::make(pub))]
#[derive(Default)]
pub(crate) struct TermCounts {
    index: HashKeyed<u32>,
    /// The terms so far.
    pub terms: Vec<Term>,
    /// Keep the tokens' text in [`Term::token`].
    pub keep: bool,
}

impl TermCounts {
    /// Empty counts; `keep`: keep the tokens' text.
    pub fn new(keep: bool) -> TermCounts {
        TermCounts { keep, ..TermCounts::default() }
    }

    /// Counts one occurrence of `token` (hash `hash`, part-of-speech factor `pos`); true when
    /// it is the first.
    pub fn add(&mut self, token: &str, hash: u64, pos: f32) -> bool {
        if let Some(&i) = self.index.get(&hash) {
            self.terms[i as usize].count += 1;
            return false;
        }
        self.index.insert(hash, self.terms.len() as u32);
        self.terms.push(Term {
            token: if self.keep { token.to_owned() } else { String::new() },
            hash,
            count: 1,
            pos,
            length: length_factor(token),
        });
        true
    }
}

/// The distinct feature tokens of `text` with their part of speech, in order of first
/// occurrence: exactly the tokens of format 1 (jieba's `tag`, HMM off).
pub fn terms(text: &str, keep_tokens: bool, interrupt: Interrupt<'_>) -> Vec<Term> {
    let mut counts = TermCounts::new(keep_tokens);
    for_each_tagged_token(text, &mut String::new(), interrupt, |word, tag| {
        counts.add(word, feature_hash(word), pos_factor(tag));
    });
    counts.terms
}

/// The hashes of the normalized forms of `words`.
#[cfg_attr(feature = "experiments", visibility::make(pub))]
pub(crate) fn word_set(words: &[&str]) -> HashSet<u64> {
    let mut buf = String::new();
    words
        .iter()
        .map(|w| {
            normalize_into(w, &mut buf);
            feature_hash(&buf)
        })
        .collect()
}

static CUE_SET: std::sync::LazyLock<HashSet<u64>> = std::sync::LazyLock::new(|| word_set(CUE_WORDS));

/// Whether the token with this (normalized) hash is one of the [`CUE_WORDS`].
pub fn is_cue_word(hash: u64) -> bool {
    CUE_SET.contains(&hash)
}

/// Hashes of the title's feature tokens.
#[cfg_attr(feature = "experiments", visibility::make(pub))]
pub(crate) fn title_set(title: &str, interrupt: Interrupt<'_>) -> HashSet<u64> {
    terms(title, false, interrupt).into_iter().map(|t| t.hash).collect()
}

/// `weight` (the format-1 TF-IDF weight of term `t`, or another base weight) times the
/// scheme's factors, applied in a fixed order (part of the schemes' format).
#[cfg_attr(feature = "experiments", visibility::make(pub))]
#[inline]
pub(crate) fn apply_factors(mut weight: f64, t: &Term, title: &HashSet<u64>, w: &Weighting) -> f64 {
    if w.pos {
        weight *= f64::from(t.pos);
    }
    if w.length {
        weight *= f64::from(t.length);
    }
    if w.cue != 1.0 && is_cue_word(t.hash) {
        weight *= f64::from(w.cue);
    }
    if w.title != 1.0 && title.contains(&t.hash) {
        weight *= f64::from(w.title);
    }
    weight
}

/// Weighted features from terms; `title` holds the title's token hashes (empty: no title).
pub fn weigh(terms: Vec<Term>, title: &HashSet<u64>, w: &Weighting) -> Vec<Feature> {
    let table = idf::table();
    let unknown = unknown_idf(table);
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        let idf = table.get(t.hash).unwrap_or(unknown);
        let weight = apply_factors(weight(t.count, idf), &t, title, w);
        out.push(Feature { token: t.token, hash: t.hash, count: t.count, idf, weight });
    }
    out
}

/// `title + "\n" + body`, the text fingerprinted when the title is part of the text.
pub fn title_and_body(title: &str, body: &str) -> String {
    let mut s = String::with_capacity(title.len() + 1 + body.len());
    s.push_str(title);
    s.push('\n');
    s.push_str(body);
    s
}

/// The text fingerprinted: `title + "\n" + body` when the options put the (non-empty) title
/// into the text, else the body.
fn text_of<'a>(body: &'a str, title: Option<&str>, opts: &Options) -> Cow<'a, str> {
    match title {
        Some(t) if opts.title_text => Cow::Owned(title_and_body(t, body)),
        _ => Cow::Borrowed(body),
    }
}

/// The weighted features of `body` with `title` (`None` or empty: no title) under `opts`, in
/// order of first occurrence. Format 1 options take exactly the path of [`features`].
pub fn features_with(
    body: &str,
    title: Option<&str>,
    opts: &Options,
    keep_tokens: bool,
    interrupt: Interrupt<'_>,
) -> Vec<Feature> {
    let title = title.filter(|t| !t.is_empty());
    let text = text_of(body, title, opts);
    if opts.is_format_1() {
        return features(&text, keep_tokens, interrupt);
    }
    let titles = match title {
        Some(t) if opts.title_weights() => title_set(t, interrupt),
        _ => HashSet::new(),
    };
    weigh(terms(&text, keep_tokens, interrupt), &titles, &opts.weighting)
}

/// SimHash of `body` (with `title`) under `opts`.
pub fn simhash_with_options(body: &str, title: Option<&str>, opts: &Options, interrupt: Interrupt<'_>) -> Option<u64> {
    if opts.is_format_1() {
        // The allocation-free path of format 1 (the same value).
        let text = text_of(body, title.filter(|t| !t.is_empty()), opts);
        return simhash_with(&text, interrupt);
    }
    fingerprint(&features_with(body, title, opts, false, interrupt))
}

/// SimHash of `body` (with `title`) under a named scheme.
pub fn simhash_scheme(body: &str, title: Option<&str>, scheme: Scheme, interrupt: Interrupt<'_>) -> Option<u64> {
    simhash_with_options(body, title, &scheme.options(), interrupt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::simhash;

    const SAMPLES: &[&str] = &[
        "南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。",
        "The quick brown fox jumps over the lazy dog near the river bank.",
        "Rust 语言的 PostgreSQL 扩展 simdup 用 SimHash 查找近似重复文档。ＡＢＣ１２３ Straße",
        "数据库",
        "",
        "。。。！？",
        "综上所述，但是总之，我们今天在北京看到了很多很多的人。However, the end.",
    ];

    #[test]
    fn default_weighting_through_terms_is_format_1() {
        // The general path (jieba.tag, weigh) with format 1 settings equals format 1: the
        // tokens of tag() are those of cut(), and the weights are the same.
        let d = Options::default();
        for s in SAMPLES {
            let general = fingerprint(&weigh(terms(s, false, &mut crate::no_interrupt), &HashSet::new(), &d.weighting));
            assert_eq!(general, simhash(s), "{s}");
            assert_eq!(simhash_scheme(s, None, Scheme::Default, &mut crate::no_interrupt), simhash(s));
            assert_eq!(simhash_scheme(s, Some(""), Scheme::Default, &mut crate::no_interrupt), simhash(s));
            // With a title: format 1 of title + "\n" + body.
            assert_eq!(
                simhash_scheme(s, Some("标题 Title"), Scheme::Default, &mut crate::no_interrupt),
                simhash(&format!("标题 Title\n{s}"))
            );
        }
        let long = SAMPLES[0].repeat(5000) + &SAMPLES[2].repeat(3000);
        let general = fingerprint(&weigh(terms(&long, false, &mut crate::no_interrupt), &HashSet::new(), &d.weighting));
        assert_eq!(general, simhash(&long));
    }

    #[test]
    fn title_without_title_is_default() {
        for s in SAMPLES {
            assert_eq!(simhash_scheme(s, None, Scheme::Title, &mut crate::no_interrupt), simhash(s), "{s}");
            assert_eq!(simhash_scheme(s, Some(""), Scheme::Title, &mut crate::no_interrupt), simhash(s), "{s}");
        }
    }

    #[test]
    fn title_boosts_shared_words() {
        let body = "北京 北京 上海 上海 广州 深圳 天津 重庆";
        let f = features_with(body, Some("上海新闻"), &Scheme::Title.options(), true, &mut crate::no_interrupt);
        let plain = features_with(body, None, &Scheme::Title.options(), true, &mut crate::no_interrupt);
        for (a, b) in f.iter().zip(&plain) {
            let want = if a.token == "上海" { b.weight * 5.0 } else { b.weight };
            assert!((a.weight - want).abs() < 1e-9, "{} {} {}", a.token, a.weight, want);
        }
    }

    #[test]
    fn improved_factors() {
        let f = features_with(
            "综上所述，我们的数据库很快。",
            None,
            &Scheme::Improved.options(),
            true,
            &mut crate::no_interrupt,
        );
        let d =
            features_with("综上所述，我们的数据库很快。", None, &Options::default(), true, &mut crate::no_interrupt);
        let get = |v: &[Feature], t: &str| v.iter().find(|f| f.token == t).unwrap().weight;
        // 综上所述: cue word (×5), 4 characters (×1), tagged a conjunction (×0.3).
        assert!((get(&f, "综上所述") - 1.5 * get(&d, "综上所述")).abs() < 1e-6);
        // 数据库: noun, 3 characters.
        assert!((get(&f, "数据库") - 0.75 * get(&d, "数据库")).abs() < 1e-6);
        // 的: particle (0.3), 1 character (0.25).
        assert!((get(&f, "的") - 0.075 * get(&d, "的")).abs() < 1e-6);
    }

    #[test]
    fn factors() {
        assert_eq!(pos_factor("n"), 1.0);
        assert_eq!(pos_factor("nr"), 1.0);
        assert_eq!(pos_factor("vn"), 1.0);
        assert_eq!(pos_factor("eng"), 1.0);
        assert_eq!(pos_factor("a"), 0.6);
        assert_eq!(pos_factor("m"), 0.6);
        assert_eq!(pos_factor("uj"), 0.3);
        assert_eq!(pos_factor("p"), 0.3);
        assert_eq!(pos_factor("x"), 0.3);
        assert_eq!(length_factor("的"), 0.25);
        assert_eq!(length_factor("数据库"), 0.75);
        assert_eq!(length_factor("综上所述而言"), 1.0);
        assert_eq!(length_factor("the"), 0.375);
        assert_eq!(length_factor("photosynthesis"), 1.0);
    }

    #[test]
    fn names() {
        for s in Scheme::ALL {
            assert_eq!(s.name().parse::<Scheme>(), Ok(s));
        }
        assert_eq!(" Improved ".parse::<Scheme>(), Ok(Scheme::Improved));
        assert_eq!("nope".parse::<Scheme>(), Err(UnknownScheme("nope".into())));
        assert_eq!(scheme_names(), "default, title, improved");
    }
}
