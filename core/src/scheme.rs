//! Fingerprint schemes: alternatives to the default weighting, selectable by name, and the
//! options the quality benchmark measures (`core/examples/quality_pairs.rs`, docs/quality.md).
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
//! [`Options`] holds everything the benchmark varies, including settings measured and not
//! adopted (NFKC off, lower case off, a stopword list, HMM on, character n-grams): see
//! docs/quality.md for what each changes.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use unicode_normalization::UnicodeNormalization;

use crate::features::{feature_hash, features, is_feature_token, jieba, Feature, Params, TfMode, CHUNK_BYTES};
use crate::idf::{self, HashKeyed};
use crate::normalize::{chunks, normalize_into};
use crate::simhash::{fingerprint, simhash_with};
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
    "综上所述", "总之", "总而言之", "总的来说", "由此可见", "可见", "因此", "所以", "因而",
    "但是", "然而", "不过", "可是", "最后", "最终", "首先", "其次", "此外", "另外", "而且", "事实上",
    "实际上", "显然", "换句话说", "也就是说", "总体而言", "结果", "据悉",
    "however", "therefore", "thus", "hence", "but", "finally", "overall", "consequently", "moreover",
    "furthermore", "nevertheless", "conclusion", "summary", "although", "meanwhile",
];

/// Stopwords of the measured (and not adopted) stopword option: common Chinese function words
/// and the English stopwords of NLTK. Matched as whole normalized tokens.
pub const STOPWORDS: &[&str] = &[
    // Chinese
    "的", "了", "和", "是", "在", "也", "就", "都", "而", "及", "与", "着", "或", "之", "以", "为",
    "于", "被", "把", "从", "对", "向", "由", "给", "让", "将", "并", "等", "其", "该", "此", "这",
    "那", "这个", "那个", "这些", "那些", "这样", "那样", "一个", "一些", "没有", "不", "很", "还",
    "又", "才", "已", "已经", "我", "你", "他", "她", "它", "我们", "你们", "他们", "她们", "它们",
    "自己", "因为", "所以", "但是", "然而", "如果", "虽然", "而且", "并且", "或者", "还是", "不过",
    "只是", "因此", "可以", "能", "会", "要", "得", "地", "吗", "呢", "吧", "啊", "嘛", "哦", "呀",
    "上", "下", "中", "里", "到", "说", "有", "个", "来", "去", "做", "对于", "关于", "以及", "通过",
    // English (NLTK)
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself",
    "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its",
    "itself", "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom",
    "this", "that", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being",
    "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an", "the", "and", "but",
    "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about",
    "against", "between", "into", "through", "during", "before", "after", "above", "below", "to",
    "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then",
    "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few",
    "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so",
    "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now",
];

/// What the features of a text are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tokenizer {
    /// Unicode NFKC (format 1: on).
    pub nfkc: bool,
    /// Lower case (format 1: on).
    pub lowercase: bool,
    /// jieba's HMM for words missing from its dictionary (format 1: off).
    pub hmm: bool,
    /// 0: jieba words (format 1). n > 0: character n-grams instead (see [`terms`]).
    pub char_ngrams: u8,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer { nfkc: true, lowercase: true, hmm: false, char_ngrams: 0 }
    }
}

/// How the features of a text are weighted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weighting {
    /// Term-frequency factor (format 1: 1 + ln tf).
    pub tf: TfMode,
    /// Multiply by the IDF (format 1: yes; character n-grams have no IDF table).
    pub idf: bool,
    /// IDF of a word in neither table, as a multiple of jieba's median (format 1: 0.5).
    pub unknown_idf: f32,
    /// Drop [`STOPWORDS`] (format 1: no).
    pub stopwords: bool,
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
        let p = Params::default();
        Weighting {
            tf: p.tf,
            idf: true,
            unknown_idf: p.unknown_idf,
            stopwords: false,
            pos: false,
            length: false,
            cue: 1.0,
            title: 1.0,
        }
    }
}

/// Tokenizer, weighting and the use of a title. [`Options::default`] is fingerprint format 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    pub tokenizer: Tokenizer,
    pub weighting: Weighting,
    /// A title given is part of the text: `title + "\n" + body` is fingerprinted (format 1:
    /// yes). Otherwise the title only weights ([`Weighting::title`]).
    pub title_text: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { tokenizer: Tokenizer::default(), weighting: Weighting::default(), title_text: true }
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
            Scheme::Title => {
                Options { weighting: Weighting { title: TITLE_BOOST, ..d.weighting }, title_text: false, ..d }
            }
            Scheme::Improved => Options {
                weighting: Weighting {
                    pos: true,
                    length: true,
                    cue: CUE_BOOST,
                    title: TITLE_BOOST,
                    ..d.weighting
                },
                title_text: false,
                ..d
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
        Scheme::ALL
            .into_iter()
            .find(|x| x.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownScheme(s.to_string()))
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
    /// The hash the IDF table is looked up with: that of the NFKC + lower-case form.
    pub idf_hash: u64,
    /// Occurrences.
    pub count: u32,
    /// [`pos_factor`] of its jieba part-of-speech tag (1 for character n-grams).
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

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
}

/// Normalizes like [`normalize_into`] with NFKC and lower-casing each switchable.
pub fn normalize_with(text: &str, nfkc: bool, lowercase: bool, out: &mut String) {
    if nfkc && lowercase {
        normalize_into(text, out);
        return;
    }
    out.clear();
    let lower = |c: char, out: &mut String| {
        if lowercase && c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    };
    if nfkc {
        for c in text.nfkc() {
            lower(c, out);
        }
    } else {
        for c in text.chars() {
            lower(c, out);
        }
    }
}

struct TermCounts {
    index: HashKeyed<u32>,
    terms: Vec<Term>,
    keep: bool,
    plain: bool,
    buf: String,
}

impl TermCounts {
    fn add(&mut self, token: &str, pos: f32) {
        let hash = feature_hash(token);
        if let Some(&i) = self.index.get(&hash) {
            self.terms[i as usize].count += 1;
            return;
        }
        let idf_hash = if self.plain {
            hash
        } else {
            normalize_into(token, &mut self.buf);
            feature_hash(&self.buf)
        };
        self.index.insert(hash, self.terms.len() as u32);
        self.terms.push(Term {
            token: if self.keep { token.to_owned() } else { String::new() },
            hash,
            idf_hash,
            count: 1,
            pos,
            length: length_factor(token),
        });
    }
}

/// The distinct feature tokens of `text`, in order of first occurrence.
///
/// Words (`char_ngrams` 0): jieba's tokens with their part of speech, tokens without a letter or
/// digit dropped, exactly the tokens of format 1 when NFKC and lower case are on and HMM is
/// off. Character n-grams (`char_ngrams` n): the normalized text with every character that is
/// not a letter, digit or whitespace removed, whitespace runs as one space, no space kept next
/// to a CJK character; the n-grams of each line of the result (a text shorter than n is one
/// gram).
pub fn terms(text: &str, tok: &Tokenizer, keep_tokens: bool, interrupt: Interrupt<'_>) -> Vec<Term> {
    let mut counts = TermCounts {
        index: HashKeyed::default(),
        terms: Vec::new(),
        keep: keep_tokens,
        plain: tok.nfkc && tok.lowercase,
        buf: String::new(),
    };
    let mut norm = String::new();
    if tok.char_ngrams == 0 {
        let jieba = jieba();
        for piece in chunks(text, CHUNK_BYTES) {
            interrupt();
            normalize_with(piece, tok.nfkc, tok.lowercase, &mut norm);
            for t in jieba.tag(&norm, tok.hmm) {
                if is_feature_token(t.word) {
                    counts.add(t.word, pos_factor(t.tag));
                }
            }
        }
    } else {
        let n = usize::from(tok.char_ngrams);
        let mut chars: Vec<char> = Vec::new();
        let mut gram = String::new();
        // Grams do not cross chunk boundaries (cuts fall on whitespace or punctuation).
        for piece in chunks(text, CHUNK_BYTES) {
            interrupt();
            normalize_with(piece, tok.nfkc, tok.lowercase, &mut norm);
            chars.clear();
            for c in norm.chars() {
                if c.is_alphanumeric() {
                    if chars.last() == Some(&' ') && is_cjk(c) {
                        chars.pop();
                    }
                    chars.push(c);
                } else if c.is_whitespace() && chars.last().is_some_and(|&p| p != ' ' && !is_cjk(p)) {
                    chars.push(' ');
                }
            }
            if chars.last() == Some(&' ') {
                chars.pop();
            }
            if chars.is_empty() {
                continue;
            }
            if chars.len() < n {
                gram.clear();
                gram.extend(&chars);
                counts.add(&gram, 1.0);
                continue;
            }
            for w in chars.windows(n) {
                gram.clear();
                gram.extend(w);
                counts.add(&gram, 1.0);
            }
        }
    }
    counts.terms
}

fn word_set(words: &[&str]) -> HashSet<u64> {
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
static STOP_SET: std::sync::LazyLock<HashSet<u64>> = std::sync::LazyLock::new(|| word_set(STOPWORDS));

/// Hashes of the title's feature tokens (same tokenizer as the body).
pub fn title_set(title: &str, tok: &Tokenizer, interrupt: Interrupt<'_>) -> HashSet<u64> {
    terms(title, tok, false, interrupt).into_iter().map(|t| t.hash).collect()
}

/// Weighted features from terms; `title` holds the title's token hashes (empty: no title).
/// Stopwords (when dropped) are left out.
pub fn weigh(terms: Vec<Term>, title: &HashSet<u64>, w: &Weighting) -> Vec<Feature> {
    let table = idf::table();
    let unknown = table.median() * w.unknown_idf;
    let p = Params { hmm: false, tf: w.tf, unknown_idf: w.unknown_idf };
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        if w.stopwords && STOP_SET.contains(&t.idf_hash) {
            continue;
        }
        let idf = if w.idf { table.get(t.idf_hash).unwrap_or(unknown) } else { 1.0 };
        let mut weight = p.weight(t.count, idf);
        if w.pos {
            weight *= f64::from(t.pos);
        }
        if w.length {
            weight *= f64::from(t.length);
        }
        if w.cue != 1.0 && CUE_SET.contains(&t.idf_hash) {
            weight *= f64::from(w.cue);
        }
        if w.title != 1.0 && title.contains(&t.hash) {
            weight *= f64::from(w.title);
        }
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
        return features(&text, &Params::default(), keep_tokens, interrupt);
    }
    let titles = match title {
        Some(t) if opts.title_weights() => title_set(t, &opts.tokenizer, interrupt),
        _ => HashSet::new(),
    };
    weigh(terms(&text, &opts.tokenizer, keep_tokens, interrupt), &titles, &opts.weighting)
}

/// SimHash of `body` (with `title`) under `opts`.
pub fn simhash_with_options(body: &str, title: Option<&str>, opts: &Options, interrupt: Interrupt<'_>) -> Option<u64> {
    if opts.is_format_1() {
        // The allocation-free path of format 1 (the same value).
        let text = text_of(body, title.filter(|t| !t.is_empty()), opts);
        return simhash_with(&text, &Params::default(), interrupt);
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
            let general = fingerprint(&weigh(terms(s, &d.tokenizer, false, &mut crate::no_interrupt), &HashSet::new(), &d.weighting));
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
        let general = fingerprint(&weigh(terms(&long, &d.tokenizer, false, &mut crate::no_interrupt), &HashSet::new(), &d.weighting));
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
        let f = features_with("综上所述，我们的数据库很快。", None, &Scheme::Improved.options(), true, &mut crate::no_interrupt);
        let d = features_with("综上所述，我们的数据库很快。", None, &Options::default(), true, &mut crate::no_interrupt);
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

    #[test]
    fn char_ngrams() {
        let tok = Tokenizer { char_ngrams: 2, ..Tokenizer::default() };
        let t: Vec<String> = terms("今天，天气 好! Ab c", &tok, true, &mut crate::no_interrupt).into_iter().map(|t| t.token).collect();
        assert_eq!(t, ["今天", "天天", "天气", "气好", "好a", "ab", "b ", " c"]);
        let one: Vec<String> = terms("好", &tok, true, &mut crate::no_interrupt).into_iter().map(|t| t.token).collect();
        assert_eq!(one, ["好"]);
    }

    #[test]
    fn normalization_switches() {
        let mut out = String::new();
        normalize_with("ＡＢ Cd", false, false, &mut out);
        assert_eq!(out, "ＡＢ Cd");
        normalize_with("ＡＢ Cd", true, false, &mut out);
        assert_eq!(out, "AB Cd");
        normalize_with("ＡＢ Cd", false, true, &mut out);
        assert_eq!(out, "ａｂ cd");
        normalize_with("ＡＢ Cd", true, true, &mut out);
        assert_eq!(out, "ab cd");
    }
}
