//! 64-bit SimHash (Charikar 2002) over weighted features.

use crate::features::{features, Feature, Params};
use crate::Interrupt;

/// Version of the fingerprint format: normalization (NFKC + lower case, unicode-normalization
/// 0.1.26), segmentation (jieba-rs 0.11.0 default dictionary, HMM off), feature filter, weights
/// ((1 + ln tf) × IDF from jieba's Chinese table and simdup's English table, words in neither
/// at half jieba's median IDF, quantized to 1/1024), hash (xxh3-64, seed
/// [`crate::features::FEATURE_SEED`]) and bit rule. Any change to any of them
/// changes stored fingerprints and must bump this number (see the README's upgrade notes).
pub const FORMAT_VERSION: i32 = 1;

/// Weights are quantized to multiples of 1/`WEIGHT_SCALE` and summed as integers, so a
/// fingerprint does not depend on the order of summation or on floating-point details.
pub const WEIGHT_SCALE: f64 = 1024.0;

/// Quantized weight of a feature.
#[inline]
pub fn quantize(weight: f64) -> i64 {
    if weight.is_finite() && weight > 0.0 {
        (weight * WEIGHT_SCALE).round() as i64
    } else {
        0
    }
}

/// Combines `(hash, quantized weight)` pairs into a fingerprint: bit i is 1 where the sum of
/// +w over features whose hash has bit i set and −w over those where it is clear is > 0.
/// `None` when no feature has a positive weight: such text has no fingerprint.
pub fn combine<I: IntoIterator<Item = (u64, i64)>>(weighted: I) -> Option<u64> {
    let mut sums = [0i64; 64];
    let mut any = false;
    for (hash, w) in weighted {
        if w <= 0 {
            continue;
        }
        any = true;
        for (i, s) in sums.iter_mut().enumerate() {
            // (2·bit − 1)·w without a branch, so the loop vectorizes.
            let bit = ((hash >> i) & 1) as i64;
            *s += (2 * bit - 1) * w;
        }
    }
    if !any {
        return None;
    }
    let mut fp = 0u64;
    for (i, s) in sums.iter().enumerate() {
        if *s > 0 {
            fp |= 1 << i;
        }
    }
    Some(fp)
}

/// Fingerprint of already weighted features.
pub fn fingerprint(features: &[Feature]) -> Option<u64> {
    combine(features.iter().map(|f| (f.hash, quantize(f.weight))))
}

/// SimHash of `text` with the default parameters (format [`FORMAT_VERSION`]).
pub fn simhash(text: &str) -> Option<u64> {
    simhash_with(text, &Params::default(), &mut crate::no_interrupt)
}

/// SimHash of `text` with `params`, calling `interrupt` between chunks of a long text.
pub fn simhash_with(text: &str, params: &Params, interrupt: Interrupt<'_>) -> Option<u64> {
    fingerprint(&features(text, params, false, interrupt))
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

    #[test]
    fn ties_are_zero() {
        assert_eq!(combine([(u64::MAX, 4), (0, 4)]), Some(0));
    }
}
