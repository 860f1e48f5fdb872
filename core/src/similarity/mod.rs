//! Dedup by verified similarity: the one decision "is this pair of texts a near-duplicate?"
//! of the similarity dedup trigger, and the short-text band set and containment keys that find
//! its candidates.
//!
//! A pair of texts is a near-duplicate ([`Rule::near_duplicate`]) when
//!
//! 1. the Jaccard similarity of their character k-shingles reaches the threshold t; or
//! 2. with a containment threshold c (0.8 by default in `simdup_enable_similar`), the share of
//!    the smaller k-shingle set found in the other reaches c (an added header, footer or
//!    paragraph), the smaller set holding at least [`MIN_CONTAINED_SHINGLES`] shingles, and
//!    the smaller text not being the larger one's *footer* ([`is_footer`]: an article that ends
//!    with a stored disclaimer is not a copy of the disclaimer); or
//! 3. **short texts**: the shorter text has fewer than [`SHORT_TEXT_CHARS`] characters
//!    (|k-shingles| + k − 1), both texts are short-banded ([`short_set`]: at most
//!    [`SHORT_MAX_SHINGLES`] distinct character 3-shingles), and the Jaccard similarity of
//!    their 3-shingles reaches t. One typo changes k of a text's k-shingles, which is most of
//!    them in a text of a few dozen characters; of its 3-shingles it changes three.
//!
//! Rule 1 finds its candidates in the similarity index's LSH bands of k-shingles, and so does
//! rule 2 when both texts have at least [`TINY_SHINGLES`] k-shingles. Rule 2 for a *tiny* text
//! finds them through containment keys ([`Keys`]): a header and footer longer than the text
//! itself leave too little Jaccard for any band. Rule 3 finds them in a second index, on
//! [`short_bands`]: the LSH bands of the 3-shingle set of every short-banded text, banded
//! ([`short_banding`]) so that a pair of 3-shingle Jaccard t becomes a candidate with
//! probability ≥ [`SHORT_RECALL`]. Both texts of a rule-3 pair are short-banded by the rule's own
//! terms, so every such pair has that chance: the rule is no weaker for the texts it names than
//! rule 1 is for long ones. [`Rule::judge`] applies to a candidate the rules its index's lock
//! stripes cover.
//!
//! Why 3-shingles only for short texts: among unrelated texts of up to 250 characters
//! (the quality benchmark's English news), 35 bands of 3 rows over 3-shingles make 1.7 % of
//! pairs candidates, against 0.2 % over 5-shingles (docs/quality.md, "Tiny texts in
//! boilerplate: the containment index").

pub mod candidates;
pub(crate) mod common;
pub mod minhash;
pub mod overlap;

use crate::Interrupt;
use minhash::MinHashError;

/// A pair whose shorter text has fewer characters than this (counted as |k-shingles| + k − 1)
/// is compared by its 3-shingles too (rule 3).
pub const SHORT_TEXT_CHARS: usize = 50;

/// The shingle size of rule 3 and of the short bands.
pub const SHORT_SHINGLE: usize = 3;

/// A text is short-banded when it has at most this many distinct 3-shingles (about 100
/// characters): enough for every partner of a text under [`SHORT_TEXT_CHARS`] characters at
/// 3-shingle Jaccard ≥ 0.5 (at most 47 / 0.5 = 94 3-shingles).
pub const SHORT_MAX_SHINGLES: usize = 100;

/// Texts of more characters than this (before normalization) are never short-banded, whatever
/// their normalized form: their 3-shingles are not computed, so a long text costs the trigger
/// and the index nothing more. (Part of the definition, so rule 3's pairs are still all found.)
pub const SHORT_MAX_CHARS: usize = 1000;

/// The signature length the short bands are chosen within.
pub const SHORT_PERMUTATIONS: usize = 288;

/// The probability with which a rule-3 pair at the threshold becomes a candidate.
pub const SHORT_RECALL: f64 = 0.99;

/// The bands and rows of the short bands for threshold `t`:
/// `choose_bands_for_recall(SHORT_PERMUTATIONS, t, SHORT_RECALL)` (72 bands of 4 rows at 0.5).
pub fn short_banding(t: f64) -> Result<(usize, usize), MinHashError> {
    minhash::choose_bands_for_recall(SHORT_PERMUTATIONS, t, SHORT_RECALL)
}

/// The 3-shingle set of a short-banded text, `None` for any other (more than
/// [`SHORT_MAX_CHARS`] characters, or more than [`SHORT_MAX_SHINGLES`] distinct 3-shingles, or
/// no shingles at all).
pub fn short_set(text: &str, interrupt: Interrupt<'_>) -> Option<Vec<u64>> {
    if text.chars().nth(SHORT_MAX_CHARS).is_some() {
        return None;
    }
    let set = minhash::shingles(text, SHORT_SHINGLE, interrupt).ok()?;
    (!set.is_empty() && set.len() <= SHORT_MAX_SHINGLES).then_some(set)
}

/// The short bands of a short-banded text's 3-shingle set (`short_set`): `bands` LSH band
/// values of `rows` MinHash values each, in the format of [`minhash::bands`].
pub fn short_bands(set: &[u64], bands: usize, rows: usize) -> Result<Vec<i64>, MinHashError> {
    minhash::bands(&minhash::minhash(set, bands * rows)?, bands, rows)
}

/// The prefix filter of a shingle set for threshold t: the first `n − ⌊t·n⌋ + 1` of its n
/// elements, in one fixed total order (every caller of a pair uses the same one: ascending,
/// or [`rare_first`]).
///
/// Two sets x and y with Jaccard similarity ≥ t share c ≥ t·max(|x|, |y|) elements, so at
/// most |x| − c elements of x follow all of them; the smallest shared element (in the order) is
/// therefore among the first |x| − c + 1 of x, and likewise of y. Each prefix here is at least
/// that long (⌊t·n⌋ ≤ ⌈t·n⌉ ≤ c, with room for the rounding of `t·n` and of the Jaccard
/// comparison), so **two sets of Jaccard similarity ≥ t have a prefix element in common**,
/// whatever the order (tested below). The dedup trigger takes a lock stripe for each element, of
/// a short text's 3-shingle set (rule 3) and of a small text's k-shingle set (rule 1;
/// [`crate::locks::similar_values`]). Half a set at 0.5: 12 of the 22 3-shingles of a
/// 24-character title.
pub fn prefix_filter(ordered: &[u64], t: f64) -> &[u64] {
    let n = ordered.len();
    let drop = ((t.clamp(0.0, 1.0) * n as f64).floor() as usize).min(n);
    &ordered[..(n - drop + 1).min(n)]
}

/// A shingle set (ascending, as [`minhash::shingles`] gives it) in the order of the lock
/// stripes' prefix filters: rarest first. The shingles that are not common come first, in
/// ascending order; then the common ones, from the least to the most frequent. The common ones
/// are the 1,000 character 3-shingles in the most paragraphs of the license texts of Debian 12
/// and the 20,000 5-shingles in the most paragraphs of the PostgreSQL 15 manual
/// (`src/common.rs`, written by the `common_shingles` example of bench/rust), such as `the`,
/// `ion`, `of th`, `ation` and `funct`. For other k no shingle is common and the order stays
/// ascending.
///
/// Why: a prefix holds half a set at t = 0.5, and two texts contend for a stripe whenever their
/// prefixes share a shingle. English texts share their function words' shingles, so in hash
/// order two unrelated English sentences contended for a stripe 55 % of the time
/// (docs/performance.md). Likewise a tiny text's containment prefix meets the sketches of the
/// texts that share its rare shingles ([`Keys`]), not of every text with a frequent one. The
/// 3-shingle order is not stored anywhere (another table changes which rows wait for each other,
/// never a stored value); the 5-shingle order is stored in the containment index's keys.
pub fn rare_first(set: &[u64], k: usize) -> Vec<u64> {
    let mut out = set.to_vec();
    let rank = common_rank(k);
    out.sort_by_cached_key(|&h| (rank(h), h));
    out
}

/// A text with fewer k-shingles than this is *tiny*: the containment rule (rule 2) finds its
/// partners through containment keys ([`Keys`]) rather than shared bands. A header and footer
/// longer than a tiny text lower its Jaccard with the wrapped copy below any threshold LSH bands
/// can serve (docs/quality.md, "Tiny texts in boilerplate: the containment index").
pub const TINY_SHINGLES: usize = 50;

/// Rule 2 (containment) needs the smaller text to hold at least this many distinct k-shingles.
/// A text of one distinct shingle is a single k-gram: shorter than k + 1 characters, or one
/// character repeated (`??????`, what mis-encoded text leaves; `------`). Every text holding
/// that k-gram contains it, so its containment says nothing of a copy: on the demo's corpus
/// (7,632 real articles) such rows made 8 of the 19 rows marked as near-duplicates that are
/// not (docs/dedup.md, "Rows that are only boilerplate: the footer test").
pub const MIN_CONTAINED_SHINGLES: usize = 2;

/// Rule 2's footer test: the smaller text of a pair is the larger one's *footer*, and
/// containment does not make them near-duplicates, when the larger text **ends with** it (its
/// last w k-shingles are the smaller text's last w, in order) and **starts it after more text
/// than it holds** (the first place where the smaller text's first w k-shingles appear in order
/// comes after more than n of the larger text's shingle positions). n is the smaller text's
/// number of distinct k-shingles and w = min(n, 2k). `smaller` and `larger` are the texts.
///
/// Why: a site's disclaimer, a forum's rules or a search-page notice stored as a row of its own
/// is contained in every article that ends with it. On the demo's corpus (7,632 real articles)
/// such rows made 10 of the 11 rows marked as near-duplicates that are not; each was the
/// article's exact ending, after 1.2 to 14 times its own length of article. What containment is
/// for stays: a copy wrapped in a header *and* a footer, a paragraph inserted or appended, a
/// trimmed copy (the quality benchmark's pairs of every edit kind keep their decisions,
/// docs/dedup.md "Rows that are only boilerplate: the footer test"). What it gives up: a copy with
/// only a header added that is longer than the copy itself, which reads as that footer case.
/// Runs of 2k shingles in order, rather than single shingles, keep chance k-grams (`the t` in
/// an article, `reser` in a footer's `reserved`) from placing the smaller text.
pub fn is_footer(smaller: &str, larger: &str, n: usize, k: usize, interrupt: Interrupt<'_>) -> bool {
    let Ok(seq) = minhash::sequence(smaller, k, &mut *interrupt) else { return false };
    let w = n.min(2 * k).min(seq.len());
    if w == 0 {
        return false;
    }
    minhash::placement(&seq[..w], &seq[seq.len() - w..], larger, k, interrupt)
        .is_ok_and(|p| p.ends_with && p.start.is_some_and(|start| start > n))
}

/// What the rules read from a pair's texts beyond their k-shingle sets, asked only when a rule
/// needs it: rule 3's short sets and rule 2's footer test.
pub trait PairTexts {
    /// Both texts' [`short_set`]s.
    fn short_sets(&mut self) -> (Option<Vec<u64>>, Option<Vec<u64>>);
    /// [`is_footer`] of the pair with k-shingles of size `k`: `a_smaller` whether text a has the
    /// smaller set, of `n` shingles.
    fn footer(&mut self, k: usize, a_smaller: bool, n: usize) -> bool;
}

/// A caller's short sets of a pair's two texts, each when it holds it (`Some(None)`: the text is
/// not short-banded), borrowed: copied only when rule 3 asks for them.
pub type HeldShortSets<'t> = (Option<Option<&'t [u64]>>, Option<Option<&'t [u64]>>);

/// The two texts of a pair ([`PairTexts`]): what is asked of them is computed from them, except
/// the short sets a caller already holds; `interrupt` is called as [`minhash::shingles`] calls
/// it.
pub struct Texts<'t, I: FnMut()> {
    pub a: &'t str,
    pub b: &'t str,
    /// The short sets of a and b that the caller holds.
    pub short: HeldShortSets<'t>,
    pub interrupt: I,
}

impl<'t, I: FnMut()> Texts<'t, I> {
    pub fn new(a: &'t str, b: &'t str, interrupt: I) -> Self {
        Texts { a, b, short: (None, None), interrupt }
    }

    /// The pair with the short sets the caller holds.
    pub fn with_short(mut self, a: Option<Option<&'t [u64]>>, b: Option<Option<&'t [u64]>>) -> Self {
        self.short = (a, b);
        self
    }
}

impl<I: FnMut()> PairTexts for Texts<'_, I> {
    fn short_sets(&mut self) -> (Option<Vec<u64>>, Option<Vec<u64>>) {
        let a = match self.short.0 {
            Some(held) => held.map(<[u64]>::to_vec),
            None => short_set(self.a, &mut self.interrupt),
        };
        let b = match self.short.1 {
            Some(held) => held.map(<[u64]>::to_vec),
            None => short_set(self.b, &mut self.interrupt),
        };
        (a, b)
    }

    fn footer(&mut self, k: usize, a_smaller: bool, n: usize) -> bool {
        let (small, large) = if a_smaller { (self.a, self.b) } else { (self.b, self.a) };
        is_footer(small, large, n, k, &mut self.interrupt)
    }
}

/// The number of a text's k-shingles, rarest first, in its containment sketch ([`Keys`]).
pub const SKETCH_SHINGLES: usize = 32;

/// The containment keys of a text, in the order of [`rare_first`]: its *sketch*, the first
/// [`SKETCH_SHINGLES`] k-shingles, and for a tiny text (fewer than [`TINY_SHINGLES`]) its
/// *containment prefix*, the first `n − ⌊c·n⌋ + 1` of its n k-shingles ([`prefix_filter`] at
/// the containment threshold c). Two texts' keys *meet* ([`Keys::meet`]) when one's prefix
/// and the other's sketch share a shingle.
///
/// Why they find wrapped copies: if at least c·n of a tiny text's n shingles are in another
/// text, the first of them in the order is among the first n − ⌊c·n⌋ + 1 of the tiny text's
/// (the prefix argument of [`prefix_filter`]); it is in the other's sketch when fewer than
/// [`SKETCH_SHINGLES`] of the other's shingles come before it, which the rarest-first order
/// makes likely: the added header's common words go last. (Recall, not a guarantee: measured in
/// docs/quality.md.) Why rarest first: a prefix meets the sketches of the texts that share its
/// rare shingles, not of every text that has `the`.
///
/// The keys are stored (the containment index's values, [`Keys::entry`]): the order, and
/// [`crate::similarity::common`]'s table with it, is part of the index format. A golden test pins them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    pub sketch: Vec<u64>,
    pub prefix: Vec<u64>,
}

/// A text's containment keys for containment threshold `c` ([`Keys`]), from its k-shingle
/// set (ascending, as [`minhash::shingles`] gives it).
pub fn containment_keys(set: &[u64], k: usize, c: f64) -> Keys {
    let sketch = first_in_order(set, k, SKETCH_SHINGLES);
    // A tiny set's prefix (at most n − ⌊c·n⌋ + 1 ≤ n of its n < 50 shingles) is the start of
    // the same order: of the sketch when it is shorter than the sketch, of the whole set else.
    let prefix = if set.len() < TINY_SHINGLES {
        let ordered = if set.len() <= SKETCH_SHINGLES { sketch.clone() } else { rare_first(set, k) };
        prefix_filter(&ordered, c).to_vec()
    } else {
        Vec::new()
    };
    Keys { sketch, prefix }
}

/// The first `m` shingles of an ascending set in the order of [`rare_first`], without ranking
/// them all when they need not be: the shingles that are not common come first in ascending
/// order, so when the set has at least `m` of them they are its first `m` uncommon shingles in
/// its own (ascending) order, found by looking up the ranks of as many shingles as it takes. An
/// article of 1,200 shingles, most of them uncommon, looks up about 40 ranks instead of 1,200.
fn first_in_order(set: &[u64], k: usize, m: usize) -> Vec<u64> {
    let rank = common_rank(k);
    let mut out = Vec::with_capacity(m);
    for &h in set {
        if out.len() == m {
            return out;
        }
        if rank(h) == 0 {
            out.push(h);
        }
    }
    if out.len() == m {
        return out;
    }
    let mut all = rare_first(set, k);
    all.truncate(m);
    all
}

/// Keeps a sketch's index values apart from a prefix's.
const SKETCH_TAG: u64 = 0x736b_6574_6368_6b79;
/// Keeps a prefix's index values apart from a sketch's.
const PREFIX_TAG: u64 = 0x7072_6566_6978_6b79;

fn tagged(xs: &[u64], tag: u64) -> impl Iterator<Item = i64> + '_ {
    xs.iter().map(move |&x| crate::hash::mix64(x ^ tag) as i64)
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v.dedup();
    v
}

impl Keys {
    /// The text's values in the containment index: its sketch and its prefix, each shingle
    /// tagged by its role, ascending.
    pub fn entry(&self) -> Vec<i64> {
        sorted(tagged(&self.sketch, SKETCH_TAG).chain(tagged(&self.prefix, PREFIX_TAG)).collect())
    }

    /// The values a text looks up in the containment index: its prefix among the others'
    /// sketches, its sketch among the others' prefixes. `a.probe()` and `b.entry()` share a
    /// value exactly when `a.meet(&b)` (but for a 64-bit hash collision).
    pub fn probe(&self) -> Vec<i64> {
        sorted(tagged(&self.prefix, SKETCH_TAG).chain(tagged(&self.sketch, PREFIX_TAG)).collect())
    }

    /// Whether one text's prefix and the other's sketch share a shingle (symmetric).
    pub fn meet(&self, other: &Keys) -> bool {
        let any = |xs: &[u64], ys: &[u64]| xs.iter().any(|x| ys.contains(x));
        any(&self.prefix, &other.sketch) || any(&self.sketch, &other.prefix)
    }
}

/// How frequent a k-shingle is among the common ones (1 to the table's size, the most
/// frequent last), 0 for any other.
fn common_rank(k: usize) -> impl Fn(u64) -> u16 {
    let table: &'static [(u64, u16)] = if k == 3 { &crate::similarity::common::COMMON_3 } else { &[] };
    move |h| match k {
        5 => crate::similarity::common::common_5_rank(h),
        _ => table.binary_search_by_key(&h, |&(x, _)| x).map_or(0, |i| table[i].1),
    }
}

/// The shingle size with which a SimHash candidate is verified ([`Rule::verification`]).
pub const VERIFY_SHINGLE: usize = 5;
/// The default Jaccard threshold a SimHash candidate must reach to count as a near-duplicate
/// (`simdup_enable(..., threshold => ...)`, `simdup_pairs(..., verify => true)`).
pub const VERIFY_THRESHOLD: f64 = 0.5;
/// The default containment threshold of the verification of a SimHash candidate.
pub const VERIFY_CONTAINMENT: f64 = 0.8;

/// Which rule made a pair near-duplicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    /// Rule 1: Jaccard of k-shingles ≥ t.
    Jaccard,
    /// Rule 2: containment of k-shingles ≥ c.
    Containment,
    /// Rule 3: short texts, Jaccard of 3-shingles ≥ t.
    ShortText,
}

/// The index through which the trigger found a candidate ([`Rule::judge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// A shared LSH band value of k-shingles (the similarity index).
    Band,
    /// A shared LSH band value of 3-shingles of two short texts (the short-text index).
    ShortBand,
    /// A shared containment key ([`Keys::meet`]: the containment index).
    Key,
}

/// A near-duplicate pair: the Jaccard similarity of its k-shingles and the rule that matched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Match {
    pub jaccard: f64,
    pub by: By,
}

/// The decision's terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    /// Shingle size of rules 1 and 2.
    pub k: usize,
    pub threshold: f64,
    /// Rule 2's threshold; `None`: no containment rule.
    pub containment: Option<f64>,
}

impl Rule {
    /// The rule that verifies a SimHash candidate: character [`VERIFY_SHINGLE`]-shingles,
    /// Jaccard ≥ `threshold`, or containment ≥ `containment`, or the short-text rule
    /// ([`Rule::near_duplicate`]).
    ///
    /// Why SimHash needs it: a fingerprint within k of a stored one is a *candidate*. Unrelated
    /// texts fall within k with a small probability p per pair, so a new row meets about n · p
    /// false candidates in a table of n rows: at k = 10 on real news, most of what an
    /// unverified check flags in a table of a million rows is unrelated (docs/quality.md,
    /// "Precision as the table grows"). The verification reads both texts and decides exactly;
    /// SimHash only chooses which few rows to read.
    pub fn verification(threshold: f64, containment: Option<f64>) -> Rule {
        Rule { k: VERIFY_SHINGLE, threshold, containment }
    }

    /// [`Rule::near_duplicate`] of two texts: shingles both (the second only when the first has
    /// shingles); what else a rule needs of them is computed when it asks ([`Texts`]).
    pub fn texts(&self, a: &str, b: &str, interrupt: Interrupt<'_>) -> Option<Match> {
        let sa = minhash::shingles(a, self.k, &mut *interrupt).ok()?;
        if sa.is_empty() {
            return None;
        }
        let sb = minhash::shingles(b, self.k, &mut *interrupt).ok()?;
        self.near_duplicate(&sa, &sb, &mut Texts::new(a, b, interrupt))
    }

    /// Whether two texts with k-shingle sets `a` and `b` are near-duplicates (see the module).
    /// `texts` gives what rules 2 and 3 read of the texts themselves ([`PairTexts`]): the short
    /// sets only when the shorter text is under [`SHORT_TEXT_CHARS`] characters and rules 1 and
    /// 2 did not match, the footer test only when containment reaches its threshold.
    pub fn near_duplicate(&self, a: &[u64], b: &[u64], texts: &mut impl PairTexts) -> Option<Match> {
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let overlap = minhash::Overlap::of(a, b);
        let jaccard = overlap.jaccard();
        if jaccard >= self.threshold {
            Some(Match { jaccard, by: By::Jaccard })
        } else if self.contained(&overlap, texts) {
            Some(Match { jaccard, by: By::Containment })
        } else {
            self.short_text_overlap(&overlap, texts)
        }
    }

    /// The trigger's decision on a candidate, by the index that offered it (`via`; a row
    /// several indexes offer is near-duplicate when one of the decisions says so):
    ///
    /// - a shared band of the similarity index ([`Via::Band`]): rule 1; rule 2 when both texts
    ///   have at least [`TINY_SHINGLES`] k-shingles; rule 3;
    /// - a shared containment key ([`Via::Key`], [`Keys::meet`]): rule 2; rule 3;
    /// - a shared short band only ([`Via::ShortBand`]): rule 3 alone.
    ///
    /// Each rule is applied only to the candidates whose lock stripes it can count on to meet
    /// ([`crate::locks::similar_values`]): rule 3's pairs always share a 3-shingle prefix
    /// stripe, rule 1's a band or k-shingle prefix stripe when they share a band, rule 2's a band
    /// stripe (both texts not tiny, which lock their bands when the table has containment) or a
    /// key stripe (a tiny text's containment prefix against the other's sketch).
    pub fn judge(&self, a: &[u64], b: &[u64], via: Via, texts: &mut impl PairTexts) -> Option<Match> {
        self.judge_overlap(&minhash::Overlap::of(a, b), via, texts)
    }

    /// [`Rule::judge`] from the two sets' [`minhash::Overlap`] (as
    /// [`minhash::OverlapCounter`] counts it without building the candidate's set).
    pub fn judge_overlap(&self, overlap: &minhash::Overlap, via: Via, texts: &mut impl PairTexts) -> Option<Match> {
        if overlap.a == 0 || overlap.b == 0 {
            return None;
        }
        let jaccard = overlap.jaccard();
        if via == Via::Band && jaccard >= self.threshold {
            return Some(Match { jaccard, by: By::Jaccard });
        }
        let contained = match via {
            Via::Band => overlap.a.min(overlap.b) >= TINY_SHINGLES,
            Via::Key => true,
            Via::ShortBand => false,
        };
        if contained && self.contained(overlap, texts) {
            return Some(Match { jaccard, by: By::Containment });
        }
        self.short_text_overlap(overlap, texts)
    }

    /// Rule 2: the table has a containment threshold c, the smaller set holds at least
    /// [`MIN_CONTAINED_SHINGLES`] shingles, at least c of them are in the other set, and the
    /// smaller text is not the larger one's footer ([`is_footer`], read from the texts last).
    fn contained(&self, overlap: &minhash::Overlap, texts: &mut impl PairTexts) -> bool {
        overlap.a.min(overlap.b) >= MIN_CONTAINED_SHINGLES
            && self.containment.is_some_and(|c| overlap.containment() >= c)
            && !texts.footer(self.k, overlap.a <= overlap.b, overlap.a.min(overlap.b))
    }

    /// Rule 3 alone: whether two texts with k-shingle sets `a` and `b` are near-duplicates as
    /// short texts (the shorter under [`SHORT_TEXT_CHARS`] characters, both short-banded, their
    /// 3-shingle Jaccard ≥ t), and then their k-shingle Jaccard similarity.
    ///
    /// The trigger judges a row found only through the short-text index (a shared short band, no
    /// shared band of the similarity index) by this rule alone: the lock stripes guarantee a
    /// shared stripe for rule 3's pairs (the 3-shingle prefixes) and for rules 1 and 2 only
    /// between rows that share a band ([`crate::locks::similar_values`]).
    pub fn short_text(&self, a: &[u64], b: &[u64], texts: &mut impl PairTexts) -> Option<Match> {
        self.short_text_overlap(&minhash::Overlap::of(a, b), texts)
    }

    /// [`Rule::short_text`] from the two k-shingle sets' overlap.
    fn short_text_overlap(&self, overlap: &minhash::Overlap, texts: &mut impl PairTexts) -> Option<Match> {
        if overlap.a == 0 || overlap.b == 0 || overlap.a.min(overlap.b) + self.k > SHORT_TEXT_CHARS {
            return None;
        }
        match texts.short_sets() {
            (Some(sa), Some(sb)) if minhash::jaccard(&sa, &sb) >= self.threshold => {
                Some(Match { jaccard: overlap.jaccard(), by: By::ShortText })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::no_interrupt;

    fn set(text: &str, k: usize) -> Vec<u64> {
        minhash::shingles(text, k, &mut no_interrupt).unwrap()
    }

    #[test]
    fn verification_confirms_copies_and_refuses_unrelated_texts() {
        let rule = Rule::verification(VERIFY_THRESHOLD, Some(VERIFY_CONTAINMENT));
        let a = "国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。";
        let edited = "国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九！";
        let other = "PostgreSQL is a powerful, open source object-relational database system with over thirty years of active development.";
        let m = rule.texts(a, edited, &mut no_interrupt).expect("an edited copy is confirmed");
        assert_eq!(m.by, By::Jaccard);
        assert_eq!(rule.texts(a, other, &mut no_interrupt), None);
        // Featureless text is never a near-duplicate, either way round.
        assert_eq!(rule.texts("", a, &mut no_interrupt), None);
        assert_eq!(rule.texts(a, "  ", &mut no_interrupt), None);
        // The same decision as the sets' (the one the trigger makes from the sets it holds).
        assert_eq!(rule.texts(a, edited, &mut no_interrupt), decide(&rule, a, edited));
        // A copy with a long footer: Jaccard below the threshold, containment above it.
        let header = "【本报讯】记者从有关部门获悉，以下为最新发布的统计公报摘要，供读者参考。";
        let footer =
            "本文来源于网络，版权归原作者所有，如有侵权请联系删除，转载请注明出处，更多精彩内容请关注我们的公众号。";
        let wrapped = format!("{header}{a}{footer}");
        let m = rule.texts(a, &wrapped, &mut no_interrupt).expect("a wrapped copy is contained");
        assert_eq!(m.by, By::Containment);
        assert!(m.jaccard < VERIFY_THRESHOLD);
        assert_eq!(Rule::verification(VERIFY_THRESHOLD, None).texts(a, &wrapped, &mut no_interrupt), None);
    }

    /// A text of one distinct shingle (one character repeated, as mis-encoded text leaves it) is
    /// inside every text holding that 5-gram: containment 1, and no copy of anything. Two
    /// shingles are enough for rule 2; the Jaccard and short-text rules are unchanged.
    #[test]
    fn one_shingle_is_not_contained() {
        let rule = Rule::verification(VERIFY_THRESHOLD, Some(VERIFY_CONTAINMENT));
        let junk = "??????";
        let post = "汉阳的老铁们玫瑰街还可以吃鸡吗？？？？？";
        assert_eq!(set(junk, 5).len(), 1);
        assert_eq!(minhash::containment(&set(junk, 5), &set(post, 5)), 1.0);
        for via in [Via::Band, Via::Key, Via::ShortBand] {
            let (a, b) = (set(junk, 5), set(post, 5));
            assert_eq!(rule.judge(&a, &b, via, &mut Texts::new(junk, post, no_interrupt)), None);
        }
        assert_eq!(decide(&rule, junk, post), None);
        assert_eq!(decide(&rule, post, junk), None);
        // Identical junk is still a copy (rule 1), and a two-shingle text can be contained.
        assert_eq!(decide(&rule, junk, "?????????").map(|m| m.by), Some(By::Jaccard));
        let short = "独家报道！";
        assert_eq!(set(short, 5).len(), 1);
        let two = "独家报道！！";
        assert_eq!(set(two, 5).len(), 2);
        let page = format!("今天的新闻很多。{two}记者从有关部门获悉，以下为最新发布的统计公报摘要。");
        assert_eq!(
            rule.judge(&set(two, 5), &set(&page, 5), Via::Key, &mut Texts::new(two, &page, no_interrupt)).map(|m| m.by),
            Some(By::Containment)
        );
    }

    fn decide(rule: &Rule, a: &str, b: &str) -> Option<Match> {
        rule.near_duplicate(&set(a, rule.k), &set(b, rule.k), &mut Texts::new(a, b, no_interrupt))
    }

    const RULE: Rule = Rule { k: 5, threshold: 0.5, containment: None };

    #[test]
    fn banding_at_the_default_threshold() {
        assert_eq!(short_banding(0.5).unwrap(), (72, 4));
        let (b, r) = short_banding(0.5).unwrap();
        assert!(minhash::s_curve(0.5, b, r) >= SHORT_RECALL);
        // Every threshold the similarity index accepts has a short banding.
        for t in [0.05, 0.1, 0.3, 0.7, 0.9, 1.0] {
            let (b, r) = short_banding(t).unwrap();
            assert!(b * r <= SHORT_PERMUTATIONS && minhash::s_curve(t, b, r) >= SHORT_RECALL, "{t}");
        }
    }

    #[test]
    fn a_typo_in_a_short_text_is_found_by_its_3_shingles() {
        let (a, b) = ("the quick brown fox jumps over the dog", "the quick brown fox jumsp over the dog");
        let j5 = minhash::jaccard(&set(a, 5), &set(b, 5));
        let j3 = minhash::jaccard(&set(a, 3), &set(b, 3));
        assert!(j5 < 0.75 && j3 >= 0.75, "j3 {j3}, j5 {j5}");
        let m = decide(&Rule { threshold: 0.75, ..RULE }, a, b).unwrap();
        assert_eq!(m.by, By::ShortText, "j3 {j3}, j5 {j5}");
        assert_eq!(m.jaccard, j5);
        // The same edit in a long text is judged by its 5-shingles alone.
        let long_a = format!("{a} {}", "and many more words follow here ".repeat(3));
        let long_b = format!("{b} {}", "and many more words follow here ".repeat(3));
        assert_eq!(decide(&RULE, &long_a, &long_b).unwrap().by, By::Jaccard);
    }

    #[test]
    fn unrelated_short_texts_and_rule_order() {
        assert_eq!(decide(&RULE, "apples and pears", "a storm hit the coast"), None);
        assert_eq!(decide(&RULE, "same text here", "same text here").unwrap().by, By::Jaccard);
        assert_eq!(decide(&RULE, "", "text"), None);
        let header = "Source: a news site | Editor: somebody | Original title: a title\n";
        let footer = "\n\nEditor: somebody. Copyright 2023 a news site. All rights reserved.";
        let (a, b) = ("a short post, quoted", format!("{header}a short post, quoted{footer}"));
        assert_eq!(decide(&RULE, a, &b), None);
        let with_c = Rule { containment: Some(0.8), ..RULE };
        assert_eq!(decide(&with_c, a, &b).unwrap().by, By::Containment);
    }

    /// Rule 2's footer test ([`is_footer`]): a text that ends with a smaller one after more text
    /// than the smaller holds is an article with that footer, not its copy, in either order;
    /// wrapped, appended-to, inserted-into and trimmed copies keep their containment.
    #[test]
    fn a_stored_footer_is_not_the_original_of_every_article_ending_with_it() {
        let rule = Rule::verification(VERIFY_THRESHOLD, Some(VERIFY_CONTAINMENT));
        // The disclaimer of the reproduction, stored as a row of its own.
        let notice = "特别声明：以上文章内容仅代表作者本人观点，不代表新浪看点观点或立场。如有关于作品内容、版权或其它问题请于作品发表后的30日内与新浪看点联系。";
        let story = "常德市气象台今天上午发布暴雪橙色预警信号，预计未来十二小时内全市大部分地区将出现大到暴雪，局部地区积雪深度可达十厘米以上，\
            请有关单位和人员做好防范准备，注意出行安全。市交通部门表示，部分国省道已经开始除雪作业，高速公路出入口将视情况临时管制。";
        let article = format!("{story}{notice}");
        let (sn, sa) = (set(notice, 5), set(&article, 5));
        assert_eq!(minhash::containment(&sn, &sa), 1.0);
        assert!(minhash::jaccard(&sn, &sa) < VERIFY_THRESHOLD);
        assert!(is_footer(notice, &article, sn.len(), 5, &mut no_interrupt));
        assert!(!is_footer(&article, notice, sa.len(), 5, &mut no_interrupt));
        assert_eq!(decide(&rule, notice, &article), None);
        assert_eq!(decide(&rule, &article, notice), None);
        for via in [Via::Band, Via::Key] {
            assert_eq!(rule.judge(&sn, &sa, via, &mut Texts::new(notice, &article, no_interrupt)), None);
            assert_eq!(rule.judge(&sa, &sn, via, &mut Texts::new(&article, notice, no_interrupt)), None);
        }
        // A copy with a header added that is shorter than the copy: Jaccard finds it, so a copy
        // with only a header is found while the header is shorter than the copy.
        let header = "【新浪新闻讯】记者 李明\n";
        let copy = format!("{header}{notice}");
        assert_eq!(decide(&rule, notice, &copy).map(|m| m.by), Some(By::Jaccard));
        // The article with something after the notice, with it in front, or around it: copies.
        let wrapped = format!("{story}{notice}（责任编辑：张三）");
        assert_eq!(decide(&rule, notice, &wrapped).map(|m| m.by), Some(By::Containment));
        let appended = format!("{notice}{story}");
        assert_eq!(decide(&rule, notice, &appended).map(|m| m.by), Some(By::Containment));
        let half = story.chars().count() / 2;
        let (front, back): (String, String) = (story.chars().take(half).collect(), story.chars().skip(half).collect());
        let inserted = format!("{front}{notice}{back}");
        assert_eq!(decide(&rule, notice, &inserted).map(|m| m.by), Some(By::Containment));
        // A footer's chance k-grams at the very end (`reser` of `reserved`) do not make a wrapped
        // copy's end look like the smaller text's: the tail is 2k shingles.
        let post = "The Reserve Bank has cut";
        let en = format!(
            "By Mark Lee, The Guardian staff writer. Originally published as \"The Reserve Bank has cut...\".\n{post}\n\nEditor: Mark Lee. Copyright 2023 The Guardian. All rights reserved."
        );
        assert_eq!(decide(&rule, post, &en).map(|m| m.by), Some(By::Containment));
        // An English notice: chance k-grams of the article (`the t`, ` the `) do not place it.
        let rules = "Comments are moderated. Please keep to the topic and be respectful of other readers.";
        let news = format!("The first crossing left at seven with forty passengers aboard, the operator said. {rules}");
        assert!(minhash::containment(&set(rules, 5), &set(&news, 5)) == 1.0);
        assert_eq!(decide(&rule, rules, &news), None);
        // What the test gives up: only a header, longer than the copy.
        let long_header = format!("Source: a news site | Editor: somebody | Original title: a title\n{post}");
        assert_eq!(decide(&rule, post, &long_header), None);
    }

    /// Random Chinese texts (no chance 5-gram in common): the footer test is exactly "the
    /// larger text ends with the smaller after more than n shingle positions".
    mod footer_props {
        use super::*;
        use proptest::prelude::*;

        fn cjk(len: std::ops::Range<usize>) -> impl Strategy<Value = String> {
            proptest::collection::vec(0x4e00u32..0x9fa5, len)
                .prop_map(|v| v.into_iter().filter_map(char::from_u32).collect())
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, rng_seed: proptest::test_runner::RngSeed::Fixed(0xf007), ..ProptestConfig::default() })]

            #[test]
            fn footer_is_an_ending_after_more_text_than_it_holds(
                notice in cjk(6..80),
                article in cjk(1..300),
                other in cjk(1..40),
            ) {
                let n = set(&notice, 5).len();
                prop_assume!(n >= MIN_CONTAINED_SHINGLES);
                let k = 5;
                // Ending the article, after len(article) shingle positions that are not its own.
                let ending = format!("{article}{notice}");
                prop_assert_eq!(is_footer(&notice, &ending, n, k, &mut no_interrupt), article.chars().count() > n);
                // Anything after it, or nothing before it: not a footer.
                let wrapped = format!("{article}{notice}{other}");
                prop_assert!(!is_footer(&notice, &wrapped, n, k, &mut no_interrupt));
                let appended = format!("{notice}{article}");
                prop_assert!(!is_footer(&notice, &appended, n, k, &mut no_interrupt));
                let half = notice.chars().count() / 2;
                let (front, back): (String, String) = (notice.chars().take(half).collect(), notice.chars().skip(half).collect());
                let inserted = format!("{front}{article}{back}");
                prop_assert!(!is_footer(&notice, &inserted, n, k, &mut no_interrupt));
                // The rule: the footer case is never a containment match, in either order; the
                // wrapped copy is one when Jaccard does not already decide.
                let rule = Rule::verification(VERIFY_THRESHOLD, Some(VERIFY_CONTAINMENT));
                let by = |x: &str, y: &str| decide(&rule, x, y).map(|m| m.by);
                if article.chars().count() > n {
                    prop_assert_ne!(by(&notice, &ending), Some(By::Containment));
                    prop_assert_ne!(by(&ending, &notice), Some(By::Containment));
                }
                if minhash::jaccard(&set(&notice, 5), &set(&wrapped, 5)) < VERIFY_THRESHOLD {
                    prop_assert_eq!(by(&notice, &wrapped), Some(By::Containment));
                }
            }
        }
    }

    #[test]
    fn placement_finds_the_first_run_in_order_and_the_ending() {
        let seq = |t: &str| minhash::sequence(t, 5, &mut no_interrupt).unwrap();
        let run = seq("abcdefg"); // abcde bcdef cdefg
        assert_eq!(run.len(), 3);
        let p = |text: &str| minhash::placement(&run, &run, text, 5, &mut no_interrupt).unwrap();
        assert_eq!(p("abcdefg"), minhash::Placement { start: Some(0), ends_with: true });
        assert_eq!(p("xyzabcdefg"), minhash::Placement { start: Some(3), ends_with: true });
        assert_eq!(p("abcdefgx"), minhash::Placement { start: Some(0), ends_with: false });
        // Out of order or interrupted: not the run.
        assert_eq!(p("cdefgabcdef"), minhash::Placement { start: None, ends_with: false });
        assert_eq!(p("abcdefg abcdefg"), minhash::Placement { start: Some(0), ends_with: true });
        // Whitespace runs are one space, as in the set.
        let spaced = seq("ab cdefg");
        let q = minhash::placement(&spaced, &spaced, "xy  ab   cdefg", 5, &mut no_interrupt).unwrap();
        assert_eq!(q, minhash::Placement { start: Some(3), ends_with: true });
        assert_eq!(seq("a b  c"), seq("a b c"));
        assert!(minhash::placement(&run, &run, "text", 0, &mut no_interrupt).is_err());
        assert_eq!(
            minhash::placement(&[], &[], "abcdefg", 5, &mut no_interrupt).unwrap(),
            minhash::Placement::default()
        );
    }

    /// A pair found only through the short-text index is judged by rule 3 alone: containment
    /// (or Jaccard of k-shingles) between short texts that share no band of the similarity index
    /// is not a near-duplicate there, since no lock stripe covers it (a reviewer's pair: 5-shingle
    /// Jaccard 0.217, 3-shingle Jaccard 0.273, containment 1).
    #[test]
    fn short_index_candidates_are_judged_by_rule_3_alone() {
        let rule = Rule { containment: Some(0.7), ..RULE };
        let (a, b) = ("house wins new", "house wins new jumps brown news rain school jumps dog");
        let (sa, sb) = (set(a, 5), set(b, 5));
        let short = &mut Texts::new(a, b, no_interrupt);
        assert_eq!(rule.near_duplicate(&sa, &sb, short).unwrap().by, By::Containment);
        assert_eq!(rule.short_text(&sa, &sb, short), None);
        assert_eq!(rule.judge(&sa, &sb, Via::ShortBand, short), None);
        // A tiny text's containment is judged through its containment keys, not a shared band
        // (its band stripes are not taken: crate::locks::similar_values).
        assert!(sa.len() < TINY_SHINGLES);
        assert_eq!(rule.judge(&sa, &sb, Via::Band, short), None);
        assert_eq!(rule.judge(&sa, &sb, Via::Key, short).unwrap().by, By::Containment);
        let (ka, kb) = (containment_keys(&sa, 5, 0.7), containment_keys(&sb, 5, 0.7));
        assert!(ka.meet(&kb) && kb.meet(&ka));
        // Rule 3's own pairs are the same either way.
        let (x, y) = ("the quick brown fox jumps over the dog", "the quick brown fox jumsp over the dog");
        let (sx, sy) = (set(x, 5), set(y, 5));
        let short = &mut Texts::new(x, y, no_interrupt);
        let strict = Rule { threshold: 0.75, ..RULE };
        assert_eq!(strict.short_text(&sx, &sy, short), strict.near_duplicate(&sx, &sy, short));
        assert_eq!(strict.short_text(&sx, &sy, short).unwrap().by, By::ShortText);
    }

    /// The guarantee of [`prefix_filter`]: sets of Jaccard ≥ t share a prefix element, for
    /// every threshold, size and overlap, including the exact boundary (J = t).
    #[test]
    fn similar_sets_share_a_prefix_element() {
        let mut checked = 0;
        for seed in 0..400u64 {
            let h = |i: u64| crate::hash::mix64(i ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            for (na, nb, common) in
                [(1, 1, 1), (2, 1, 1), (5, 3, 3), (20, 10, 10), (24, 24, 16), (40, 37, 26), (100, 60, 55)]
            {
                let mut a: Vec<u64> = (0..na).map(h).collect();
                let mut b: Vec<u64> = (0..common).map(h).chain((1000..1000 + nb - common).map(h)).collect();
                a.sort_unstable();
                b.sort_unstable();
                let j = minhash::jaccard(&a, &b);
                for t in [0.05, 0.1, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0, j] {
                    if j >= t {
                        let (pa, pb) = (prefix_filter(&a, t), prefix_filter(&b, t));
                        assert!(pa.iter().any(|x| pb.contains(x)), "t {t}, j {j}, sizes {na} {nb} {common}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000);
        // Half a set at 0.5 (and one more), the whole set at small thresholds, one at 1.
        let set: Vec<u64> = (1..=24).collect();
        assert_eq!(prefix_filter(&set, 0.5).len(), 13);
        assert_eq!(prefix_filter(&set, 0.01).len(), 24);
        assert_eq!(prefix_filter(&set, 1.0), &[1]);
        assert!(prefix_filter(&[], 0.5).is_empty());
    }

    /// The guarantee holds in the stripes' order too: sets mixing common and other shingles,
    /// ordered by [`rare_first`], share a prefix element whenever their Jaccard is ≥ t.
    #[test]
    fn similar_sets_share_a_prefix_element_rare_first() {
        let mut checked = 0;
        for seed in 0..300u64 {
            let h = |i: u64| crate::hash::mix64(i ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            // Element i: a common 5-shingle for every third i, another hash otherwise.
            let elem = |i: u64| {
                if i.is_multiple_of(3) {
                    crate::similarity::common::common_5((h(i) % 1000) as usize).0
                } else {
                    h(i)
                }
            };
            for (na, nb, common) in [(3, 3, 2), (20, 10, 10), (24, 24, 16), (40, 37, 26), (100, 60, 55)] {
                let mut a: Vec<u64> = (0..na).map(elem).collect();
                let mut b: Vec<u64> = (0..common).map(elem).chain((1000..1000 + nb - common).map(elem)).collect();
                for s in [&mut a, &mut b] {
                    s.sort_unstable();
                    s.dedup();
                }
                let j = minhash::jaccard(&a, &b);
                let (ra, rb) = (rare_first(&a, 5), rare_first(&b, 5));
                for t in [0.05, 0.3, 0.5, 0.7, 0.9, 1.0, j] {
                    if j >= t {
                        let (pa, pb) = (prefix_filter(&ra, t), prefix_filter(&rb, t));
                        assert!(pa.iter().any(|x| pb.contains(x)), "t {t}, j {j}, sizes {na} {nb} {common}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 4_000, "{checked}");
    }

    #[test]
    fn common_shingles_go_last() {
        let common_5: Vec<(u64, u16)> =
            (0..crate::similarity::common::COMMON_5_LEN).map(crate::similarity::common::common_5).collect();
        for (table, n) in [(&crate::similarity::common::COMMON_3[..], 1000u16), (&common_5[..], 20_000)] {
            assert_eq!(table.len(), usize::from(n));
            assert!(table.windows(2).all(|w| w[0].0 < w[1].0), "by hash, without repeats");
            let mut ranks: Vec<u16> = table.iter().map(|x| x.1).collect();
            ranks.sort_unstable();
            assert_eq!(ranks, (1..=n).collect::<Vec<u16>>());
            for &(h, rank) in table.iter().step_by(7) {
                assert_eq!(common_rank(if n == 1000 { 3 } else { 5 })(h), rank);
            }
        }
        // Function words' shingles are common; a rare word's are not.
        let (rank3, rank5) = (common_rank(3), common_rank(5));
        for gram in ["the", "ion", "and"] {
            assert!(rank3(set_of(gram, 3)) > 0, "{gram}");
        }
        for gram in ["zyg", "ygo"] {
            assert_eq!(rank3(set_of(gram, 3)), 0, "{gram}");
        }
        assert!(rank5(set_of("of th", 5)) > 0 && rank5(set_of("ation", 5)) > 0 && rank5(set_of("funct", 5)) > 0);
        assert!(rank5(set_of("of th", 5)) > 19_000 && rank5(set_of("zygot", 5)) == 0);
        // The most frequent 3-shingle of English is among the most frequent here.
        assert!(rank3(set_of("the", 3)) > 900);
        // Rarest first: the others ascending, then the common ones by rank.
        let three = set("the quick zygote of the", 3);
        let ordered = rare_first(&three, 3);
        assert_eq!(ordered.len(), three.len());
        let ranks: Vec<(u16, u64)> = ordered.iter().map(|&h| (rank3(h), h)).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]));
        assert!(ranks[0].0 == 0 && ranks.last().unwrap().0 > 0);
        // Other shingle sizes keep the ascending order.
        let four = set("the quick zygote of the", 4);
        assert_eq!(rare_first(&four, 4), four);
    }

    /// [`containment_keys`] takes the sketch without ranking every shingle; it is the
    /// definition's: the first SKETCH_SHINGLES of `rare_first`, the prefix the first
    /// n − ⌊c·n⌋ + 1 of a tiny set in that order.
    #[test]
    fn containment_keys_are_the_definition() {
        let mut checked = 0;
        for seed in 0..300u64 {
            let h = |i: u64| crate::hash::mix64(i ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            // Every `every`-th element common: from none to all of them.
            for every in [1u64, 2, 3, 7, 1000] {
                for n in [1u64, 5, 20, 31, 32, 33, 49, 50, 51, 200] {
                    let mut set: Vec<u64> = (0..n)
                        .map(|i| {
                            if i % every == 0 {
                                crate::similarity::common::common_5((h(i) % 20_000) as usize).0
                            } else {
                                h(i)
                            }
                        })
                        .collect();
                    set.sort_unstable();
                    set.dedup();
                    let ordered = rare_first(&set, 5);
                    for c in [0.5, 0.8, 1.0] {
                        let keys = containment_keys(&set, 5, c);
                        assert_eq!(keys.sketch, ordered[..ordered.len().min(SKETCH_SHINGLES)], "n {n}, every {every}");
                        let prefix =
                            if set.len() < TINY_SHINGLES { prefix_filter(&ordered, c).to_vec() } else { Vec::new() };
                        assert_eq!(keys.prefix, prefix, "n {n}, every {every}, c {c}");
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 300 * 5 * 10 * 3);
    }

    /// The hash of one k-gram (a text of exactly k characters, no space at either end, has one
    /// shingle).
    fn set_of(gram: &str, k: usize) -> u64 {
        let s = set(gram, k);
        assert_eq!(s.len(), 1, "{gram:?}");
        s[0]
    }

    #[test]
    fn short_sets_are_bounded() {
        assert!(short_set("", &mut no_interrupt).is_none());
        assert!(short_set("ab", &mut no_interrupt).is_some());
        let long = "word ".repeat(300);
        // Few distinct 3-shingles, but more characters than SHORT_MAX_CHARS.
        assert!(short_set(&long, &mut no_interrupt).is_none());
        let many: String = (0..200u32).map(|i| char::from_u32(0x4e00 + i).unwrap()).collect();
        assert!(short_set(&many, &mut no_interrupt).is_none());
        let s = short_set("a short text", &mut no_interrupt).unwrap();
        let (b, r) = short_banding(0.5).unwrap();
        let bands = short_bands(&s, b, r).unwrap();
        assert_eq!(bands.len(), 72);
        assert_eq!(bands, short_bands(&s, b, r).unwrap());
    }
}
