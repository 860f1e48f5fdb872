//! Lock keys for the dedup trigger: which advisory locks a row with fingerprint `fp` takes so
//! that two transactions inserting near-duplicates (Hamming distance ≤ k) at the same time
//! always contend for at least one of them, while the number of distinct locks per table stays
//! bounded.
//!
//! # The scheme: k + 1 pieces, exclusive locks only
//!
//! Cut the 64 bits into k + 1 contiguous *pieces* (widths ⌊64/(k+1)⌋ or ⌈64/(k+1)⌉). If
//! `hamming(a, b) ≤ k`, the at most k differing bits fall into at most k pieces, so by
//! pigeonhole at least one piece j is *identical* in `a` and `b`. The lock key of piece j of a
//! fingerprint is (j, value of piece j); a row takes an exclusive lock on the key of each of its
//! k + 1 pieces. Two near-duplicates therefore always request the same key — exclusively — and
//! one of the two transactions waits for the other to end.
//!
//! Compared with locking the four 16-bit blocks (exclusive on the row's own 4 block keys,
//! shared on the 4 × Σ_{j≤⌊k/4⌋} C(16, j) neighbour keys it probes: 552 locks a row at k = 10),
//! this takes k + 1 locks a row (11 at k = 10), needs no shared locks, and its key space is
//! small by itself: Σ_j 2^width_j keys (640 at k = 10, 1,280 at k = 8). Lock *stripes*: keys
//! are numbered into [`LOCK_STRIPES`] stripes, one-to-one when the key space fits (k ≥ 6), by a
//! fixed hash otherwise (k ≤ 5, where pieces are 11 bits or wider). Equal keys always give equal
//! stripes, so the pigeonhole argument carries over to stripes; different keys may share a
//! stripe, which only adds waits, never misses one. A transaction thus holds at most
//! min(LOCK_STRIPES, key space) locks per table, however many rows it writes (a 1M-row COPY
//! at k = 10: at most 640).
//!
//! The price is false contention: two unrelated fingerprints share some piece with probability
//! about Σ_j 2^−width_j (≈ 18 % at k = 10, ≈ 6 % at k = 8, ≈ 1 % at k = 6), in which case
//! the later transaction waits for the earlier one's commit even though its row is no
//! duplicate. The block scheme with 552 keys a row spread over 4,096 stripes would contend for
//! about 65 % of unrelated pairs.

use crate::hash::mix64;
use crate::similarity::{prefix_filter, rare_first, Keys, SHORT_SHINGLE, TINY_SHINGLES};

/// Number of lock stripes per table: the bound on the advisory locks one transaction holds for
/// one table.
pub const LOCK_STRIPES: u32 = 4096;

/// The pieces for maximum distance `k`: (first bit, width) of each, least significant first.
/// `k ≥ 64` (every pair of fingerprints is within distance 64) gets no pieces: see
/// [`lock_stripes`].
pub fn pieces(k: u32) -> Vec<(u32, u32)> {
    if k >= 64 {
        return Vec::new();
    }
    let n = k + 1;
    let (base, wide) = (64 / n, 64 % n);
    let mut out = Vec::with_capacity(n as usize);
    let mut start = 0;
    for j in 0..n {
        let width = base + u32::from(j < wide);
        out.push((start, width));
        start += width;
    }
    debug_assert_eq!(start, 64);
    out
}

/// Number of distinct lock keys (piece, value) for maximum distance `k`, saturating at
/// `u64::MAX` (k = 0: one 64-bit piece).
pub fn key_space(k: u32) -> u64 {
    if k >= 64 {
        return 1;
    }
    pieces(k).iter().fold(0u64, |acc, &(_, w)| acc.saturating_add(1u64.checked_shl(w).unwrap_or(u64::MAX)))
}

/// The lock stripes (0..[`LOCK_STRIPES`]) a row with fingerprint `fp` locks exclusively at
/// maximum distance `k`, sorted ascending and without repeats (the order in which they must be
/// taken). At most k + 1 of them; `k ≥ 64` gives the single stripe 0 (all rows contend).
///
/// Guarantee (tested below): `hamming(a, b) ≤ k` ⇒ `lock_stripes(a, k)` and
/// `lock_stripes(b, k)` share a stripe.
pub fn lock_stripes(fp: u64, k: u32) -> Vec<u32> {
    if k >= 64 {
        return vec![0];
    }
    let direct = key_space(k) <= u64::from(LOCK_STRIPES);
    let mut offset = 0u64;
    let mut out: Vec<u32> = pieces(k)
        .into_iter()
        .enumerate()
        .map(|(j, (start, width))| {
            let value = if width == 64 { fp } else { (fp >> start) & ((1u64 << width) - 1) };
            let stripe = if direct {
                (offset + value) as u32
            } else {
                (mix64(value ^ mix64(j as u64 + 1)) % u64::from(LOCK_STRIPES)) as u32
            };
            offset += 1u64.checked_shl(width).unwrap_or(0);
            stripe
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The lock stripes a row of a similarity dedup table (`simdup_enable_similar(...,
/// on_duplicate => ...)`) locks exclusively: one per LSH band value of its text, sorted
/// ascending and without repeats.
///
/// The trigger's candidates are the stored rows that share a band value with the new row
/// (the GIN index's `&&`), so two rows the trigger could judge duplicates of each other share a
/// band value, and therefore a stripe: the pigeonhole argument of [`lock_stripes`] becomes
/// "shared band, shared stripe". At most `bands` stripes a row, at most [`LOCK_STRIPES`] a
/// transaction and table. Unrelated rows share one of `b` stripes each with probability about
/// `1 − (1 − b/4096)^b` (26 % at the default 35 bands): a wait, never a missed check.
pub fn band_stripes(bands: &[i64]) -> Vec<u32> {
    let mut out: Vec<u32> = band_values(bands).map(to_stripe).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A row's band values as lock values: the stripe of each is the value modulo
/// [`LOCK_STRIPES`] ([`band_stripes`]).
fn band_values(bands: &[i64]) -> impl Iterator<Item = u64> + '_ {
    bands.iter().map(|&v| mix64(v as u64 ^ BAND_STRIPE_SALT))
}

fn to_stripe(value: u64) -> u32 {
    (value % u64::from(LOCK_STRIPES)) as u32
}

/// The locks of a row of the similarity dedup trigger ([`similar_values`]):
/// locks of the table's main space, taken exclusively, and locks of its containment-key space,
/// each taken exclusively or shared. Two rows wait for each other when they share a main lock,
/// or a key lock that one of them takes exclusively. `T` is `u32` for lock stripes
/// ([`SimilarStripes`]) and `u64` for the full lock values they are reduced from
/// ([`SimilarValues`]): rows that share a value share its stripe.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimilarLocks<T> {
    /// Main space, exclusive; ascending, without repeats.
    pub exclusive: Vec<T>,
    /// Key space, exclusive (a tiny text's containment prefix); ascending, without repeats.
    pub keys_exclusive: Vec<T>,
    /// Key space, shared (the sketch), none of them in `keys_exclusive`; ascending, without
    /// repeats.
    pub keys_shared: Vec<T>,
}

/// A similarity row's lock stripes (0..[`LOCK_STRIPES`]).
pub type SimilarStripes = SimilarLocks<u32>;

/// A similarity row's lock values, before their reduction to stripes: what the Citus checked
/// write records of a row its transaction has written but not yet committed, so that a later
/// writer waits only for a writer whose row shares a value with its own (a band, a prefix
/// shingle, a containment key), not merely a stripe.
pub type SimilarValues = SimilarLocks<u64>;

impl<T: Ord + Copy> SimilarLocks<T> {
    /// The union of several rows' locks: a key lock any of them takes exclusively is taken
    /// exclusively (what a transaction writing them all at once takes).
    pub fn union<'a>(all: impl IntoIterator<Item = &'a SimilarLocks<T>>) -> SimilarLocks<T>
    where
        T: 'a,
    {
        let (mut exclusive, mut keys_exclusive, mut keys_shared) = (Vec::new(), Vec::new(), Vec::new());
        for s in all {
            exclusive.extend(&s.exclusive);
            keys_exclusive.extend(&s.keys_exclusive);
            keys_shared.extend(&s.keys_shared);
        }
        for v in [&mut exclusive, &mut keys_exclusive, &mut keys_shared] {
            v.sort_unstable();
            v.dedup();
        }
        keys_shared.retain(|x| keys_exclusive.binary_search(x).is_err());
        SimilarLocks { exclusive, keys_exclusive, keys_shared }
    }

    /// Whether two rows writing at the same time would wait for each other.
    pub fn conflict(&self, other: &SimilarLocks<T>) -> bool {
        let meet = |a: &[T], b: &[T]| a.iter().any(|x| b.binary_search(x).is_ok());
        meet(&self.exclusive, &other.exclusive)
            || meet(&self.keys_exclusive, &other.keys_exclusive)
            || meet(&self.keys_exclusive, &other.keys_shared)
            || meet(&self.keys_shared, &other.keys_exclusive)
    }
}

impl SimilarValues {
    /// The stripes these values lock: each value modulo [`LOCK_STRIPES`].
    pub fn stripes(&self) -> SimilarStripes {
        let reduce = |v: &[u64]| v.iter().copied().map(to_stripe).collect();
        let row = SimilarStripes {
            exclusive: reduce(&self.exclusive),
            keys_exclusive: reduce(&self.keys_exclusive),
            keys_shared: reduce(&self.keys_shared),
        };
        SimilarStripes::union([&row])
    }
}

/// The lock values of a row of the similarity dedup trigger at threshold `t`
/// ([`SimilarValues`]; its stripes: [`SimilarValues::stripes`]). `bands` are the row's LSH band values, `set` its k-shingle set,
/// `short_set` its short text's 3-shingle set ([`crate::similarity::short_set`]; empty for another
/// text), and `keys` its containment keys when the table has the containment rule
/// ([`crate::similarity::containment_keys`]; None: no rule 2).
///
/// Every pair of rows the trigger could judge near-duplicates ([`crate::similarity::Rule::judge`])
/// shares a stripe one of them takes exclusively:
///
/// - **Rule 3** (short texts): both rows lock one stripe per element of the prefix filter of
///   their 3-shingle sets ([`crate::similarity::prefix_filter`]), and two sets of Jaccard ≥ t
///   share a prefix element, whether or not they share a short band.
/// - **Rule 1** (Jaccard of k-shingles ≥ t, between rows sharing a band value). A row of at
///   most [`PREFIX_MAX_SHINGLES`] k-shingles locks the prefix filter of its k-shingle set. A
///   row of fewer than t · [`PREFIX_MAX_SHINGLES`] (a *small* row) does not lock its band
///   values; every other row does. Sets of Jaccard ≥ t have sizes within a factor t, so a
///   small row's partner has at most [`PREFIX_MAX_SHINGLES`] shingles and locks its prefix
///   too; two rows that are not small both lock their bands.
/// - **Rule 2** (containment). Between rows sharing a band value, it applies when both have at
///   least [`crate::similarity::TINY_SHINGLES`] k-shingles, and with `keys` every such row locks
///   its band values, small or not. Between rows whose containment keys meet (a tiny row's
///   prefix shares a shingle with the other's sketch), it applies whatever the sizes: a tiny
///   row locks a key stripe per prefix shingle exclusively, every row one per sketch shingle
///   shared, so they meet in a stripe one of them takes exclusively. Shared locks keep two
///   rows that are not tiny apart: their sketches never make them wait for each other.
///
/// The prefixes are taken in the order of [`crate::similarity::rare_first`] (common shingles
/// last), the same for every row of a table (one k), which the prefix argument needs and no
/// more. A 24-character title locks about 11 k-shingle prefix stripes and 12 3-shingle prefix
/// stripes instead of 35 band stripes and 12. Unrelated rows contend when their stripes meet
/// among [`LOCK_STRIPES`]: about 1 − (1 − s/4096)^s for s stripes each, more where they share
/// shingles (the `stripes` example of bench/rust, docs/performance.md). The short texts' 72
/// short band values as stripes would make almost every pair of short rows wait for each other.
///
/// The row locks the stripes of its values (each value modulo [`LOCK_STRIPES`]); the argument
/// holds for the values themselves, and unrelated rows share a value only where they share a
/// band value, a prefix shingle or a containment key, not by the collision of two values in one
/// stripe: what the Citus checked write records of a row it has written.
pub fn similar_values(
    bands: &[i64],
    set: &[u64],
    k: usize,
    short_set: &[u64],
    t: f64,
    keys: Option<&Keys>,
) -> SimilarValues {
    let n = set.len();
    let lock_bands = n as f64 >= t * PREFIX_MAX_SHINGLES as f64 || (keys.is_some() && n >= TINY_SHINGLES);
    let mut out: Vec<u64> = if lock_bands { band_values(bands).collect() } else { Vec::new() };
    if n <= PREFIX_MAX_SHINGLES {
        out.extend(prefix_values(prefix_filter(&rare_first(set, k), t), PREFIX_STRIPE_SALT));
    }
    let short = rare_first(short_set, SHORT_SHINGLE);
    out.extend(prefix_values(prefix_filter(&short, t), SHORT_TEXT_STRIPE_SALT));
    let mut row = SimilarValues { exclusive: out, ..SimilarValues::default() };
    if let Some(keys) = keys {
        row.keys_exclusive = prefix_values(&keys.prefix, KEY_STRIPE_SALT).collect();
        row.keys_shared = prefix_values(&keys.sketch, KEY_STRIPE_SALT).collect();
    }
    SimilarValues::union([&row])
}

/// Rows of at most this many k-shingles lock the prefix filter of their k-shingle set
/// ([`similar_values`]): at most 100 stripes a row for it, about 51 at t = 0.5.
pub const PREFIX_MAX_SHINGLES: usize = 100;

fn prefix_values(prefix: &[u64], salt: u64) -> impl Iterator<Item = u64> + '_ {
    prefix.iter().map(move |&h| mix64(h ^ salt))
}

/// Keeps the stripes of k-shingle prefixes apart from those of band values and 3-shingles.
const PREFIX_STRIPE_SALT: u64 = 0x7072_6566_6978_6b73;

/// Keeps the stripes of short texts' 3-shingles apart from those of band values.
const SHORT_TEXT_STRIPE_SALT: u64 = 0x7368_6f72_7474_7874;

/// The stripes of containment keys are in a space of their own (a lock tag of their own);
/// the salt keeps them independent of the prefix stripes' numbering all the same.
const KEY_STRIPE_SALT: u64 = 0x6b65_7973_7472_7065;

/// Keeps the stripes of band values apart from those of fingerprint pieces.
const BAND_STRIPE_SALT: u64 = 0x6261_6e64_7374_7270;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::hamming;
    use proptest::prelude::*;

    #[test]
    fn band_stripes_are_sorted_bounded_and_shared() {
        let a: Vec<i64> = (0..35).map(|i| mix64(i) as i64).collect();
        let sa = band_stripes(&a);
        assert!(!sa.is_empty() && sa.len() <= 35);
        assert!(sa.windows(2).all(|w| w[0] < w[1]) && sa.iter().all(|&x| x < LOCK_STRIPES));
        // Rows sharing any one band value share its stripe.
        for j in 0..35 {
            let mut b: Vec<i64> = (100..135).map(|i| mix64(i) as i64).collect();
            b[j as usize] = a[j as usize];
            let sb = band_stripes(&b);
            assert!(sb.contains(&band_stripes(&a[j as usize..=j as usize])[0]));
            assert!(sa.iter().any(|x| sb.contains(x)));
        }
        assert!(band_stripes(&[]).is_empty());
    }

    /// Short texts that rule 3 could judge near-duplicates share a stripe even when they share
    /// no band value (real 3-shingle sets: a typo in a title).
    #[test]
    fn short_near_duplicates_share_a_stripe() {
        use crate::similarity::short_set;
        let none = &mut crate::no_interrupt;
        let pairs = [
            ("the quick brown fox jumps over the dog", "the quick brown fox jumsp over the dog"),
            ("北京今日迎来今冬第一场雪", "北京今日迎来今年第一场雪"),
            ("a short post", "a shrot post"),
        ];
        for (a, b) in pairs {
            let (sa, sb) = (short_set(a, none).unwrap(), short_set(b, none).unwrap());
            let t = crate::similarity::minhash::jaccard(&sa, &sb);
            // Sets far apart in rule 1's terms (disjoint, large), no shared band value.
            let (big_a, big_b): (Vec<u64>, Vec<u64>) = ((0..300).collect(), (1000..1300).collect());
            let xa = similar_values(&[1], &big_a, 5, &sa, t, None).stripes();
            let xb = similar_values(&[2], &big_b, 5, &sb, t, None).stripes();
            assert!(xa.conflict(&xb), "{a} / {b} at {t}");
            let xa = xa.exclusive;
            assert!(xa.windows(2).all(|w| w[0] < w[1]) && xa.iter().all(|&x| x < LOCK_STRIPES));
        }
    }

    /// The guarantee for rules 1 and 2: rows sharing a band value with Jaccard ≥ t (or, with
    /// containment, rows of at least TINY_SHINGLES shingles each sharing a band value) share a
    /// stripe, for sizes across the small, middle and large classes and thresholds across (0, 1];
    /// rows of Jaccard ≥ t share one even without a shared band when either is small enough to
    /// lock its prefix only; and rows whose containment keys meet share a key stripe that one of
    /// them takes exclusively.
    #[test]
    fn rule_1_and_2_pairs_share_a_stripe() {
        use crate::similarity::containment_keys;
        let mut checked = [0usize; 4];
        for seed in 0..300u64 {
            // Every fourth element a common 5-shingle, which the prefixes order last.
            let h = |i: u64| {
                let x = mix64(i ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                if i.is_multiple_of(4) {
                    crate::similarity::common::common_5((x % 1000) as usize).0
                } else {
                    x
                }
            };
            for t in [0.05, 0.2, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0] {
                for na in [1u64, 4, 10, 20, 29, 30, 49, 50, 51, 75, 99, 100, 101, 150, 300] {
                    let na_f = na as f64;
                    for nb in [(na_f * t).ceil() as u64, na, (na_f / t).floor() as u64, na + 1, na * 2, na * 4 + 30] {
                        let nb = nb.max(1);
                        // Share as many elements as Jaccard ≥ t allows at the least.
                        let common = ((t * (na + nb) as f64) / (1.0 + t)).ceil().min(na.min(nb) as f64) as u64;
                        let mut a: Vec<u64> = (0..na).map(h).collect();
                        let mut b: Vec<u64> = (0..common).map(h).chain((10_000..10_000 + nb - common).map(h)).collect();
                        for s in [&mut a, &mut b] {
                            s.sort_unstable();
                            s.dedup();
                        }
                        let (na, nb) = (a.len(), b.len());
                        let j = crate::similarity::minhash::jaccard(&a, &b);
                        for containment in [None, Some(0.8)] {
                            let keys = |x: &[u64]| containment.map(|c| containment_keys(x, 5, c));
                            let (ka, kb) = (keys(&a), keys(&b));
                            let shared_band = similar_values(&[7, 8], &a, 5, &[], t, ka.as_ref()).stripes();
                            let other = similar_values(&[9, 8], &b, 5, &[], t, kb.as_ref()).stripes();
                            let not_tiny = na.min(nb) >= TINY_SHINGLES;
                            if j >= t || (containment.is_some() && not_tiny) {
                                assert!(
                                    shared_band.conflict(&other),
                                    "t {t}, sizes {na} {nb}, j {j}, c {containment:?}"
                                );
                                checked[0] += 1;
                            }
                            let apart = similar_values(&[1], &a, 5, &[], t, ka.as_ref()).stripes();
                            let apart_b = similar_values(&[2], &b, 5, &[], t, kb.as_ref()).stripes();
                            let small = (na.min(nb) as f64) < t * PREFIX_MAX_SHINGLES as f64;
                            if j >= t && small {
                                assert!(apart.conflict(&apart_b), "t {t}, sizes {na} {nb}, j {j}: no shared band");
                                checked[1] += 1;
                            }
                            if let (Some(ka), Some(kb)) = (&ka, &kb) {
                                if ka.meet(kb) {
                                    assert!(apart.conflict(&apart_b), "t {t}, sizes {na} {nb}: keys meet");
                                    checked[3] += 1;
                                }
                            }
                            if (na as f64) < t * PREFIX_MAX_SHINGLES as f64
                                && (containment.is_none() || na < TINY_SHINGLES)
                            {
                                // A small row locks no band stripe (with containment: a small and
                                // tiny one).
                                assert_eq!(
                                    apart.exclusive,
                                    similar_values(&[], &a, 5, &[], t, ka.as_ref()).stripes().exclusive
                                );
                                checked[2] += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked.iter().all(|&c| c > 1000), "{checked:?}");
    }

    /// Containment keys: a tiny text wrapped in added shingles (a header and footer) meets the
    /// wrapped copy's sketch, and two rows that are not tiny never wait for each other through
    /// their sketches (shared locks), whatever they share.
    #[test]
    fn containment_keys_stripes() {
        use crate::similarity::containment_keys;
        let mut met = 0;
        for seed in 0..500u64 {
            let h = |i: u64| mix64(i ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let n = 5 + seed % 40;
            let mut tiny: Vec<u64> = (0..n).map(h).collect();
            // The copy keeps 90 % of the tiny text and adds twice as many common shingles.
            let kept = n - n / 10;
            let mut wrapped: Vec<u64> = (0..kept)
                .map(h)
                .chain((0..2 * n).map(|i| crate::similarity::common::common_5((h(i + 999) % 1000) as usize).0))
                .collect();
            for s in [&mut tiny, &mut wrapped] {
                s.sort_unstable();
                s.dedup();
            }
            assert!(crate::similarity::minhash::containment(&tiny, &wrapped) >= 0.8);
            let (kt, kw) = (containment_keys(&tiny, 5, 0.8), containment_keys(&wrapped, 5, 0.8));
            // The common shingles go last: the wrapped copy's sketch starts with the tiny text's.
            assert!(kt.meet(&kw), "seed {seed}");
            assert!(kt.probe().iter().any(|x| kw.entry().contains(x)));
            let st = similar_values(&[1], &tiny, 5, &[], 0.5, Some(&kt)).stripes();
            let sw = similar_values(&[2], &wrapped, 5, &[], 0.5, Some(&kw)).stripes();
            assert!(st.conflict(&sw) && sw.conflict(&st));
            assert!(!st.keys_exclusive.is_empty() && st.keys_exclusive.len() <= n as usize / 5 + 2);
            met += 1;
        }
        assert_eq!(met, 500);
        // Large rows: the same sketch, shared locks only, no key conflict.
        let big: Vec<u64> = (0..300).map(mix64).collect();
        let kb = containment_keys(&big, 5, 0.8);
        assert!(kb.prefix.is_empty() && kb.sketch.len() == crate::similarity::SKETCH_SHINGLES);
        let x = similar_values(&[], &big, 5, &[], 0.5, Some(&kb)).stripes();
        assert!(x.keys_exclusive.is_empty() && !x.keys_shared.is_empty());
        let y = SimilarStripes { exclusive: Vec::new(), ..x.clone() };
        assert!(!y.conflict(&y));
        // The union takes a key stripe exclusively when any row does.
        let u = SimilarStripes::union([
            &x,
            &similar_values(&[], &big[..20], 5, &[], 0.5, Some(&containment_keys(&big[..20], 5, 0.8))).stripes(),
        ]);
        assert!(u.keys_shared.iter().all(|s| u.keys_exclusive.binary_search(s).is_err()));
        assert!(!u.keys_exclusive.is_empty());
    }

    #[test]
    fn values_reduce_to_the_stripes_and_keep_their_conflicts() {
        // Rows of every kind: long (bands), small (k-shingle prefix), short texts (3-shingle
        // prefix), tiny and large with containment keys.
        use crate::similarity::containment_keys;
        let rows: Vec<SimilarValues> = (0..200u64)
            .map(|r| {
                let n = [3usize, 12, 40, 80, 150, 300][(r % 6) as usize];
                let set: Vec<u64> = {
                    let mut s: Vec<u64> = (0..n as u64).map(|i| mix64(i + 1000 * (r / 3))).collect();
                    s.sort_unstable();
                    s
                };
                let bands: Vec<i64> = (0..35).map(|b| mix64(b * 7919 + r / 3) as i64).collect();
                let short: Vec<u64> = if n <= 12 { set.clone() } else { Vec::new() };
                let keys = (r % 2 == 0).then(|| containment_keys(&set, 5, 0.8));
                similar_values(&bands, &set, 5, &short, 0.5, keys.as_ref())
            })
            .collect();
        for (i, a) in rows.iter().enumerate() {
            let sa = a.stripes();
            assert!(sa.exclusive.iter().all(|&s| s < LOCK_STRIPES));
            assert!(sa.keys_shared.iter().all(|s| sa.keys_exclusive.binary_search(s).is_err()));
            for b in &rows[i..] {
                // A shared value is a shared stripe: the values never wait where the stripes
                // would not.
                if a.conflict(b) {
                    assert!(sa.conflict(&b.stripes()));
                }
            }
        }
        // Rows 3r, 3r + 1, 3r + 2 share their sets' seed: some of them conflict.
        assert!(rows[0].conflict(&rows[1]) || rows[0].conflict(&rows[2]));
        // A long row without containment locks its band values alone: their stripes are
        // band_stripes', computed apart.
        let set: Vec<u64> = {
            let mut s: Vec<u64> = (0..300).map(mix64).collect();
            s.sort_unstable();
            s
        };
        let bands: Vec<i64> = (0..35).map(|b| mix64(b + 77) as i64).collect();
        let long = similar_values(&bands, &set, 5, &[], 0.5, None);
        assert_eq!(long.exclusive.len(), 35);
        assert_eq!(long.stripes().exclusive, band_stripes(&bands));
        assert!(long.keys_exclusive.is_empty() && long.keys_shared.is_empty());
    }

    #[test]
    fn piece_layout() {
        assert_eq!(pieces(0), vec![(0, 64)]);
        assert_eq!(pieces(3), vec![(0, 16), (16, 16), (32, 16), (48, 16)]);
        let p10 = pieces(10);
        assert_eq!(p10.len(), 11);
        assert_eq!(p10.iter().filter(|p| p.1 == 6).count(), 9);
        assert_eq!(p10.iter().filter(|p| p.1 == 5).count(), 2);
        assert_eq!(pieces(63).len(), 64);
        assert!(pieces(64).is_empty());
        for k in 0..64 {
            let p = pieces(k);
            assert_eq!(p.iter().map(|x| x.1).sum::<u32>(), 64);
            assert!(p.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        }
    }

    #[test]
    fn key_spaces() {
        assert_eq!(key_space(10), 9 * 64 + 2 * 32);
        assert_eq!(key_space(8), 256 + 8 * 128);
        assert_eq!(key_space(64), 1);
        assert_eq!(key_space(0), u64::MAX);
        // One-to-one from k = 6 on (7 pieces of 9–10 bits: 1 × 1024 + 6 × 512 = 4096).
        assert!(key_space(6) <= u64::from(LOCK_STRIPES));
        assert!(key_space(5) > u64::from(LOCK_STRIPES));
    }

    #[test]
    fn bounded() {
        for k in 0..=64 {
            let mut seen = std::collections::HashSet::new();
            for i in 0..20_000u64 {
                let s = lock_stripes(mix64(i), k);
                assert!(!s.is_empty() && s.len() <= (k as usize + 1).min(64));
                assert!(s.windows(2).all(|w| w[0] < w[1]));
                assert!(s.iter().all(|&x| x < LOCK_STRIPES));
                seen.extend(s);
            }
            assert!(seen.len() as u64 <= key_space(k).min(u64::from(LOCK_STRIPES)));
        }
    }

    #[test]
    fn exact_duplicates_share_everything() {
        let fp = 0x0123_4567_89ab_cdef;
        for k in 0..=64 {
            assert_eq!(lock_stripes(fp, k), lock_stripes(fp, k));
        }
    }

    proptest! {
        /// The guarantee the trigger's correctness rests on.
        #[test]
        fn near_duplicates_share_a_stripe(a in any::<u64>(), flips in proptest::collection::vec(0u32..64, 0..24), k in 0u32..=64) {
            let mut b = a;
            for f in &flips { b ^= 1 << f; }
            prop_assume!(hamming(a, b) <= k);
            let sa = lock_stripes(a, k);
            let sb = lock_stripes(b, k);
            prop_assert!(sa.iter().any(|x| sb.contains(x)), "k = {}, a = {:x}, b = {:x}", k, a, b);
        }

        /// Exactly k differing bits, the hardest case, spread over all pieces.
        #[test]
        fn at_exactly_k(a in any::<u64>(), k in 0u32..64, seed in any::<u64>()) {
            let mut b = a;
            let mut bits: Vec<u32> = (0..64).collect();
            let mut s = seed;
            for i in (1..64).rev() {
                s = mix64(s.wrapping_add(i as u64));
                bits.swap(i as usize, (s % (i as u64 + 1)) as usize);
            }
            for &f in &bits[..k as usize] { b ^= 1 << f; }
            prop_assert_eq!(hamming(a, b), k);
            let sa = lock_stripes(a, k);
            let sb = lock_stripes(b, k);
            prop_assert!(sa.iter().any(|x| sb.contains(x)));
        }
    }

    /// False contention of unrelated fingerprints, as documented above.
    #[test]
    fn false_contention_rates() {
        let rate = |k: u32| {
            let n = 20_000u64;
            let hits = (0..n)
                .filter(|&i| {
                    let (a, b) = (lock_stripes(mix64(2 * i), k), lock_stripes(mix64(2 * i + 1), k));
                    a.iter().any(|x| b.contains(x))
                })
                .count();
            hits as f64 / n as f64
        };
        let r10 = rate(10);
        assert!((0.15..0.22).contains(&r10), "{r10}");
        let r8 = rate(8);
        assert!((0.04..0.08).contains(&r8), "{r8}");
        assert!(rate(6) < 0.02);
    }
}
