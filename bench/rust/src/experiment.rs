//! Fingerprint settings that were measured and not adopted, for the quality benchmark
//! (examples/quality_pairs/, docs/quality.md): NFKC or lower case off, jieba's HMM on,
//! character n-grams instead of words, raw or binary term frequency, IDF off, another
//! unknown-word IDF, a stopword list. Everything the shipped schemes need is in
//! `simdup_core::scheme`; [`Options::from_scheme`] carries a shipped scheme over, and the
//! benchmark checks that it computes the library's fingerprints.

use std::collections::HashSet;

use unicode_normalization::UnicodeNormalization;

use simdup_core::features::{sublinear_tf, Feature};
use simdup_core::hash::feature_hash;
use simdup_core::idf;
use simdup_core::normalize::{chunks, normalize_into};
use simdup_core::scheme::{self, is_cjk, pos_factor, Term, TermCounts};
use simdup_core::tokens::{is_feature_token, jieba, CHUNK_BYTES};
use simdup_core::Interrupt;

/// Stopwords of the measured (and not adopted) stopword option: common Chinese function words
/// and the English stopwords of NLTK. Matched as whole normalized tokens.
pub const STOPWORDS: &[&str] = &[
    // Chinese
    "的",
    "了",
    "和",
    "是",
    "在",
    "也",
    "就",
    "都",
    "而",
    "及",
    "与",
    "着",
    "或",
    "之",
    "以",
    "为",
    "于",
    "被",
    "把",
    "从",
    "对",
    "向",
    "由",
    "给",
    "让",
    "将",
    "并",
    "等",
    "其",
    "该",
    "此",
    "这",
    "那",
    "这个",
    "那个",
    "这些",
    "那些",
    "这样",
    "那样",
    "一个",
    "一些",
    "没有",
    "不",
    "很",
    "还",
    "又",
    "才",
    "已",
    "已经",
    "我",
    "你",
    "他",
    "她",
    "它",
    "我们",
    "你们",
    "他们",
    "她们",
    "它们",
    "自己",
    "因为",
    "所以",
    "但是",
    "然而",
    "如果",
    "虽然",
    "而且",
    "并且",
    "或者",
    "还是",
    "不过",
    "只是",
    "因此",
    "可以",
    "能",
    "会",
    "要",
    "得",
    "地",
    "吗",
    "呢",
    "吧",
    "啊",
    "嘛",
    "哦",
    "呀",
    "上",
    "下",
    "中",
    "里",
    "到",
    "说",
    "有",
    "个",
    "来",
    "去",
    "做",
    "对于",
    "关于",
    "以及",
    "通过",
    // English (NLTK)
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "should",
    "now",
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

/// How a term's count in the document enters its weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfMode {
    /// tf
    Raw,
    /// 1 + ln(tf) (format 1)
    Sublinear,
    /// 1 (presence only)
    Binary,
}

impl TfMode {
    pub fn tf(self, count: u32) -> f64 {
        match self {
            TfMode::Raw => f64::from(count),
            TfMode::Sublinear => sublinear_tf(count),
            TfMode::Binary => 1.0,
        }
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
    /// The shipped schemes' factors (part of speech, length, cue words, title words).
    pub factors: scheme::Weighting,
}

impl Default for Weighting {
    fn default() -> Self {
        Weighting {
            tf: TfMode::Sublinear,
            idf: true,
            unknown_idf: simdup_core::features::UNKNOWN_IDF,
            stopwords: false,
            factors: scheme::Weighting::default(),
        }
    }
}

/// Tokenizer, weighting and the use of a title. [`Options::default`] is fingerprint format 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    pub tokenizer: Tokenizer,
    pub weighting: Weighting,
    /// Fingerprint `title + "\n" + body` when a title is given (format 1: yes).
    pub title_text: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options::from_scheme(scheme::Scheme::Default)
    }
}

impl Options {
    /// The settings of a shipped scheme.
    pub fn from_scheme(s: scheme::Scheme) -> Options {
        let o = s.options();
        Options {
            tokenizer: Tokenizer::default(),
            weighting: Weighting { factors: o.weighting, ..Weighting::default() },
            title_text: o.title_text,
        }
    }
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

/// One distinct feature token and the hash its IDF is looked up with: that of its NFKC +
/// lower-case form (the feature hash itself when the tokenizer normalizes).
#[derive(Clone, Debug, PartialEq)]
pub struct ExpTerm {
    pub term: Term,
    pub idf_hash: u64,
}

/// The distinct feature tokens of `text`, in order of first occurrence.
///
/// Words (`char_ngrams` 0): jieba's tokens with their part of speech, tokens without a letter or
/// digit dropped, exactly the tokens of format 1 when NFKC and lower case are on and HMM is
/// off. Character n-grams (`char_ngrams` n): the normalized text with every character that is
/// not a letter, digit or whitespace removed, whitespace runs as one space, no space kept next
/// to a CJK character; the n-grams of each piece of the result (a text shorter than n is one
/// gram).
pub fn terms(text: &str, tok: &Tokenizer, keep_tokens: bool, interrupt: Interrupt<'_>) -> Vec<ExpTerm> {
    let plain = tok.nfkc && tok.lowercase;
    let mut counts = TermCounts::new(keep_tokens);
    let mut idf_hashes = Vec::new();
    let mut buf = String::new();
    let mut add = |token: &str, pos: f32| {
        let hash = feature_hash(token);
        if counts.add(token, hash, pos) {
            idf_hashes.push(if plain {
                hash
            } else {
                normalize_into(token, &mut buf);
                feature_hash(&buf)
            });
        }
    };
    let mut norm = String::new();
    if tok.char_ngrams == 0 {
        let jieba = jieba();
        for piece in chunks(text, CHUNK_BYTES) {
            interrupt();
            normalize_with(piece, tok.nfkc, tok.lowercase, &mut norm);
            for t in jieba.tag(&norm, tok.hmm) {
                if is_feature_token(t.word) {
                    add(t.word, pos_factor(t.tag));
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
                add(&gram, 1.0);
                continue;
            }
            for w in chars.windows(n) {
                gram.clear();
                gram.extend(w);
                add(&gram, 1.0);
            }
        }
    }
    counts.terms.into_iter().zip(idf_hashes).map(|(term, idf_hash)| ExpTerm { term, idf_hash }).collect()
}

static STOP_SET: std::sync::LazyLock<HashSet<u64>> = std::sync::LazyLock::new(|| scheme::word_set(STOPWORDS));

/// Hashes of the title's feature tokens (same tokenizer as the body).
pub fn title_set(title: &str, tok: &Tokenizer, interrupt: Interrupt<'_>) -> HashSet<u64> {
    terms(title, tok, false, interrupt).into_iter().map(|t| t.term.hash).collect()
}

/// Weighted features from terms; `title` holds the title's token hashes (empty: no title).
/// Stopwords (when dropped) are left out.
pub fn weigh(terms: Vec<ExpTerm>, title: &HashSet<u64>, w: &Weighting) -> Vec<Feature> {
    let table = idf::table();
    let unknown = table.median() * w.unknown_idf;
    let mut out = Vec::with_capacity(terms.len());
    for ExpTerm { term: t, idf_hash } in terms {
        if w.stopwords && STOP_SET.contains(&idf_hash) {
            continue;
        }
        let idf = if w.idf { table.get(idf_hash).unwrap_or(unknown) } else { 1.0 };
        // Cue and title words are matched on the token's own hash (the shipped schemes
        // normalize, so it is the normalized form's).
        let weight = scheme::apply_factors(w.tf.tf(t.count) * f64::from(idf), &t, title, &w.factors);
        out.push(Feature { token: t.token, hash: t.hash, count: t.count, idf, weight });
    }
    out
}

/// SimHash of `body` (with `title`) under `opts`.
pub fn simhash(body: &str, title: Option<&str>, opts: &Options, interrupt: Interrupt<'_>) -> Option<u64> {
    let title = title.filter(|t| !t.is_empty());
    let text = match title {
        Some(t) if opts.title_text => scheme::title_and_body(t, body),
        _ => body.to_string(),
    };
    let titles = match title {
        Some(t) if opts.weighting.factors.title != 1.0 => title_set(t, &opts.tokenizer, interrupt),
        _ => HashSet::new(),
    };
    simdup_core::simhash::fingerprint(&weigh(terms(&text, &opts.tokenizer, false, interrupt), &titles, &opts.weighting))
}

#[cfg(test)]
mod tests {
    use super::*;
    use simdup_core::no_interrupt;
    use simdup_core::scheme::{simhash_scheme, Scheme};

    const SAMPLES: &[&str] = &[
        "综上所述，北京的数据库很快；但是上海的数据库更快。Therefore the database wins, however slowly.",
        "标题里的词在正文中出现：北京 北京 标题 Title title TITLE。",
        "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ and 全角字符，no title words here at all.",
        "",
    ];

    #[test]
    fn shipped_schemes_through_the_experiment_path() {
        // The general path with a shipped scheme's settings gives the library's fingerprint.
        for s in SAMPLES {
            for title in [None, Some("北京 标题 However Title")] {
                for sc in Scheme::ALL {
                    let want = simhash_scheme(s, title, sc, &mut no_interrupt);
                    assert_eq!(simhash(s, title, &Options::from_scheme(sc), &mut no_interrupt), want, "{sc:?} {s}");
                }
            }
        }
    }

    #[test]
    fn char_ngrams() {
        let tok = Tokenizer { char_ngrams: 2, ..Tokenizer::default() };
        let grams = |t: &str| -> Vec<String> {
            terms(t, &tok, true, &mut no_interrupt).into_iter().map(|t| t.term.token).collect()
        };
        assert_eq!(grams("今天，天气 好! Ab c"), ["今天", "天天", "天气", "气好", "好a", "ab", "b ", " c"]);
        assert_eq!(grams("好"), ["好"]);
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

    #[test]
    fn stopwords_dropped() {
        let w = Weighting { stopwords: true, ..Weighting::default() };
        let f = weigh(terms("我们的数据库", &Tokenizer::default(), true, &mut no_interrupt), &HashSet::new(), &w);
        let toks: Vec<&str> = f.iter().map(|f| f.token.as_str()).collect();
        assert_eq!(toks, ["数据库"]);
    }
}
