//! 64-bit SimHash (Charikar 2002) over weighted features.

pub use crate::features::{quantize, WEIGHT_SCALE};
use crate::features::{with_weighted, Feature};
use crate::Interrupt;

/// Version of the fingerprint format: normalization (NFKC + lower case, unicode-normalization
/// 0.1.26), segmentation (jieba-rs 0.11.0 default dictionary, HMM off), feature filter, weights
/// ((1 + ln tf) × IDF from jieba's Chinese table and simdup's English table, words in neither
/// at half jieba's median IDF, quantized to 1/1024), hash (xxh3-64, seed
/// [`crate::hash::FEATURE_SEED`]) and bit rule. Any change to any of them
/// changes stored fingerprints and must bump this number (see the README's upgrade notes).
pub const FORMAT_VERSION: i32 = 1;

/// Combines `(hash, quantized weight)` pairs into a fingerprint: bit i is 1 where the sum of
/// +w over features whose hash has bit i set and −w over those where it is clear is > 0.
/// `None` when no feature has a positive weight: such text has no fingerprint.
pub fn combine<I: IntoIterator<Item = (u64, i64)>>(weighted: I) -> Option<u64> {
    let pairs: Vec<(u64, i64)> = weighted.into_iter().filter(|&(_, w)| w > 0).collect();
    combine_positive(&pairs)
}

/// [`combine`] of pairs whose weights are all positive.
fn combine_positive(pairs: &[(u64, i64)]) -> Option<u64> {
    debug_assert!(pairs.iter().all(|&(_, w)| w > 0));
    if pairs.is_empty() {
        return None;
    }
    let mut sums = [0i64; 64];
    accumulate(pairs, &mut sums);
    let mut fp = 0u64;
    for (i, s) in sums.iter().enumerate() {
        if *s > 0 {
            fp |= 1 << i;
        }
    }
    Some(fp)
}

/// Adds +w to `sums[i]` for every pair whose hash has bit i set and −w where it is clear.
/// Integer arithmetic: the same result on every path.
fn accumulate(pairs: &[(u64, i64)], sums: &mut [i64; 64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has the feature the function is compiled for.
            return unsafe { accumulate_avx2(pairs, sums) };
        }
    }
    accumulate_body(pairs, sums)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn accumulate_avx2(pairs: &[(u64, i64)], sums: &mut [i64; 64]) {
    accumulate_body(pairs, sums)
}

#[inline(always)]
fn accumulate_body(pairs: &[(u64, i64)], sums: &mut [i64; 64]) {
    // Blocks of pairs whose weights are small enough are summed in i32 lanes (twice as many
    // per vector instruction), then added to the i64 sums: the same integers either way.
    for block in pairs.chunks(SMALL_BLOCK) {
        if block.iter().all(|&(_, w)| (0..=SMALL_WEIGHT).contains(&w)) {
            let mut lo = [0i32; 32];
            let mut hi = [0i32; 32];
            for &(hash, w) in block {
                let w = w as i32;
                add_signed(&mut lo, hash as u32, w);
                add_signed(&mut hi, (hash >> 32) as u32, w);
            }
            for i in 0..32 {
                sums[i] += i64::from(lo[i]);
                sums[32 + i] += i64::from(hi[i]);
            }
        } else {
            for &(hash, w) in block {
                for (i, s) in sums.iter_mut().enumerate() {
                    // +w where bit i is set, −w where it is clear, without a branch or a
                    // multiply (m = 0 or −1; (w ^ m) − m = w or −w), so the loop vectorizes.
                    let m = ((hash >> i) & 1) as i64 - 1;
                    *s += (w ^ m) - m;
                }
            }
        }
    }
}

/// Largest weight summed in i32 lanes, and how many such pairs at most: 4096 × (2^19 − 1) <
/// 2^31. (Format-1 weights stay below 2^19: IDF < 16 and 1 + ln tf < 24 for any text.)
const SMALL_WEIGHT: i64 = (1 << 19) - 1;
const SMALL_BLOCK: usize = 4096;

/// `sums[i] += w` where bit i of `bits` is set, `−w` where it is clear.
#[inline(always)]
fn add_signed(sums: &mut [i32; 32], bits: u32, w: i32) {
    for (i, s) in sums.iter_mut().enumerate() {
        let m = ((bits >> i) & 1) as i32 - 1;
        *s += (w ^ m) - m;
    }
}

/// Fingerprint of already weighted features.
pub fn fingerprint(features: &[Feature]) -> Option<u64> {
    combine(features.iter().map(|f| (f.hash, quantize(f.weight))))
}

/// SimHash of `text` with the default parameters (format [`FORMAT_VERSION`]).
pub fn simhash(text: &str) -> Option<u64> {
    simhash_with(text, &mut crate::no_interrupt)
}

/// SimHash of `text`, calling `interrupt` between chunks of a long text.
/// The same value as `fingerprint(&features(text, false, interrupt))`, on the
/// allocation-free path of [`with_weighted`].
pub fn simhash_with(text: &str, interrupt: Interrupt<'_>) -> Option<u64> {
    with_weighted(text, interrupt, combine_positive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_feature_is_its_hash() {
        assert_eq!(combine([(0xdead_beef_u64, 5)]), Some(0xdead_beef));
    }

    #[test]
    fn nothing_gives_none() {
        assert_eq!(combine(std::iter::empty()), None);
        assert_eq!(combine([(1, 0)]), None);
        assert_eq!(simhash(""), None);
        assert_eq!(simhash("，。！？ …… ——"), None);
    }

    #[test]
    fn majority_wins() {
        // Two features agree on bit 0 against one lighter feature.
        let fp = combine([(0b01, 3), (0b11, 3), (0b10, 5)]).unwrap();
        assert_eq!(fp & 0b11, 0b11);
    }

    /// The bit rule written plainly.
    fn reference(pairs: &[(u64, i64)], sums: &mut [i64; 64]) {
        for &(hash, w) in pairs {
            for (i, s) in sums.iter_mut().enumerate() {
                if hash >> i & 1 == 1 {
                    *s += w;
                } else {
                    *s -= w;
                }
            }
        }
    }

    #[test]
    fn fast_paths_equal_the_plain_rule() {
        // Several i32 blocks, weights up to the i32 bound, and a block forced onto the i64 path
        // by one large weight: every path gives the plain rule's sums.
        let mut state = 0x1234_5678_9abc_def0u64;
        let pairs: Vec<(u64, i64)> = (0..10_000)
            .map(|_| {
                state = crate::hash::mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
                (state, (state >> 40) as i64 % SMALL_WEIGHT + 1)
            })
            .collect();
        let mut big = pairs.clone();
        big[5000].1 = 1 << 40;
        // The i32 bound itself: every bit's sum reaches ±4096 × SMALL_WEIGHT in every block.
        let max_set = vec![(u64::MAX, SMALL_WEIGHT); 10_000];
        let max_clear = vec![(0, SMALL_WEIGHT); 10_000];
        for pairs in [&pairs, &big, &max_set, &max_clear] {
            let (mut a, mut b, mut c) = ([0i64; 64], [0i64; 64], [0i64; 64]);
            accumulate(pairs, &mut a);
            accumulate_body(pairs, &mut b);
            reference(pairs, &mut c);
            assert_eq!(a, c);
            assert_eq!(b, c);
        }
    }

    #[test]
    fn ties_are_zero() {
        assert_eq!(combine([(u64::MAX, 4), (0, 4)]), Some(0));
    }
}
