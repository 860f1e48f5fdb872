//! The precision of unverified SimHash dedup as the table grows: how likely two unrelated texts
//! are to fall within distance k, and the share of new rows that meet an unrelated row within k
//! in a table of n rows (docs/quality.md, "Precision as the table grows"). `simdup_enable`
//! warns from these when a table without verification is large enough to mark unrelated rows.

/// How much likelier two unrelated real texts are to fall within distance k than two random
/// 64-bit fingerprints: the share of unrelated pairs (character 5-shingle Jaccard < 0.3) within
/// k among 10 million documents of the precision benchmark (bench/quality/precision_scale.sh: 10 real
/// Chinese news sentences each, docs/quality.md "Precision as the table grows"), divided by the
/// binomial share `Σ_{i≤k} C(64, i) / 2^64`: 8.82 at k = 6, 5.81 at k = 8, 4.49 at k = 10
/// (4.59 and 4.53 at 200,000 and 1M rows), 4.08 at k = 11 and 3.76 at k = 12 (1M rows). Texts
/// of one language share their common words, which pulls their fingerprints together, and the
/// more so the nearer. k = 7 and 9 are interpolated; below 6 the value at 6 is taken (too few
/// pairs are that near to measure), above 12 the value at 12.
pub fn unrelated_skew(k: u32) -> f64 {
    match k {
        0..=6 => 8.82,
        7 => (8.82 + 5.81) / 2.0,
        8 => 5.81,
        9 => (5.81 + 4.49) / 2.0,
        10 => 4.49,
        11 => 4.08,
        _ => 3.76,
    }
}

/// The chance that two unrelated texts have fingerprints within distance k, as
/// [`unrelated_skew`] times the share of random fingerprint pairs within k.
pub fn unrelated_pair_rate(k: u32) -> f64 {
    let mut c = 1.0f64; // C(64, i)
    let mut sum = 0.0f64;
    for i in 0..=k.min(64) {
        if i > 0 {
            c = c * f64::from(64 - i + 1) / f64::from(i);
        }
        sum += c;
    }
    (unrelated_skew(k) * sum / 2f64.powi(64)).min(1.0)
}

/// The expected share of new rows that have at least one unrelated row within distance k in a
/// table of `rows` rows, when every row within k counts (no verification): 1 − e^(−rows · p).
pub fn unverified_false_share(rows: f64, k: u32) -> f64 {
    1.0 - (-rows.max(0.0) * unrelated_pair_rate(k)).exp()
}

/// The table size up to which [`unverified_false_share`] stays below `share`.
pub fn unverified_safe_rows(k: u32, share: f64) -> f64 {
    -(1.0 - share).ln() / unrelated_pair_rate(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unverified_false_share_follows_the_measured_rate() {
        // The benchmark's unrelated pairs within 10 bits: 4.48e-8 a pair; 1 - e^(-n p) of new
        // rows meet one among n stored rows.
        assert!((unrelated_pair_rate(10) - 4.48e-8).abs() < 0.01e-8, "{}", unrelated_pair_rate(10));
        let at_1m = unverified_false_share(1e6, 10);
        assert!((0.04..0.05).contains(&at_1m), "{at_1m}");
        // The largest safe table for 1 %: about 224,000 rows at k = 10; a smaller k is safe for more.
        let safe = unverified_safe_rows(10, 0.01);
        assert!((200_000.0..250_000.0).contains(&safe), "{safe}");
        assert!(unverified_safe_rows(6, 0.01) > 10.0 * safe);
        assert!(unverified_safe_rows(3, 0.01) > unverified_safe_rows(6, 0.01));
        assert_eq!(unverified_false_share(0.0, 10), 0.0);
        assert!(unrelated_pair_rate(64) <= 1.0);
    }
}
