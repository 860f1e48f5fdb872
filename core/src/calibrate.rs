//! Calibration of a table's dedup: a histogram of each sampled row's nearest other row (Hamming
//! distance) or most similar one (Jaccard), and the k or threshold at its valley.
//!
//! A table with near-duplicates shows two modes: rows with a near-duplicate (distance 0 and a
//! few bits, or Jaccard near 1) and the rest, whose nearest row is an unrelated one (at 1M rows
//! of real text 13–14 bits away; Jaccard near 0). The suggestion is the bucket where the counts
//! between the two modes are lowest ([`valley`]), so that the rows it flags are those of the
//! first mode; how many that is in the whole table is estimated from the sample with a Wilson
//! interval ([`wilson`]). Buckets run from the most similar to the least; the last one holds
//! the rows with nothing within reach (farther than the search radius, or no candidate).

/// The buckets of a calibration, from the most similar to the least; the last is the overflow
/// bucket (no other row within the searched radius or among the index's candidates).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub counts: Vec<u64>,
}

impl Histogram {
    /// The histogram of nearest distances `d` (None: nothing within `radius`) over buckets
    /// 0..=radius and the overflow bucket. A distance above `radius` counts as overflow.
    pub fn of_distances(distances: impl IntoIterator<Item = Option<u32>>, radius: u32) -> Histogram {
        let mut counts = vec![0u64; radius as usize + 2];
        let overflow = radius as usize + 1;
        for d in distances {
            counts[d.map_or(overflow, |d| (d as usize).min(overflow))] += 1;
        }
        Histogram { counts }
    }

    /// The histogram of best similarities `s` (None: no candidate) over [`SIMILARITY_BUCKETS`]
    /// buckets of equal width from 1 down to 0 ([`similarity_bucket`]) and the overflow bucket.
    pub fn of_similarities(similarities: impl IntoIterator<Item = Option<f64>>) -> Histogram {
        let mut counts = vec![0u64; SIMILARITY_BUCKETS + 1];
        for s in similarities {
            counts[s.map_or(SIMILARITY_BUCKETS, similarity_bucket)] += 1;
        }
        Histogram { counts }
    }

    /// The rows counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The rows in buckets 0..=last.
    pub fn flagged(&self, last: usize) -> u64 {
        self.counts[..=last.min(self.counts.len() - 1)].iter().sum()
    }
}

/// The similarity histogram's buckets: 20 of width 0.05.
pub const SIMILARITY_BUCKETS: usize = 20;

/// The bucket of similarity `s`: bucket i holds [1 − (i + 1)/20, 1 − i/20), bucket 0 also 1.
pub fn similarity_bucket(s: f64) -> usize {
    let s = if s.is_nan() { 0.0 } else { s.clamp(0.0, 1.0) };
    // 1 − s in twentieths, less a rounding error, so that a bucket's lower edge computed in
    // floating point (1 − 0.95 is 0.0500000000000000044) stays in that bucket.
    let steps = ((1.0 - s) * SIMILARITY_BUCKETS as f64 - 1e-9).max(0.0).floor() as usize;
    steps.min(SIMILARITY_BUCKETS - 1)
}

/// The lower edge of similarity bucket `i` (its rows have similarity ≥ this).
pub fn similarity_lower_edge(i: usize) -> f64 {
    (SIMILARITY_BUCKETS - 1 - i.min(SIMILARITY_BUCKETS - 1)) as f64 / SIMILARITY_BUCKETS as f64
}

/// The valley of a histogram: the suggested bucket and the floor around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Valley {
    /// The suggestion: the middle of the floor. It flags buckets 0..=at.
    pub at: usize,
    /// The first and last bucket of the floor: the run around the deepest bucket whose
    /// smoothed counts are within twice their noise of it. Any k (threshold) in it separates the
    /// two modes about as well, as far as the sample can tell.
    pub floor: (usize, usize),
}

/// The valley between the first mode (the most similar rows) and the rest, looked for among
/// buckets 1..`reach` (not the first, not the overflow bucket, and not a bucket whose counts are
/// known to be low for another reason, such as a similarity index's falling recall).
///
/// The counts are smoothed over three neighbouring buckets (weights 1, 2, 1; a smoothed value
/// s of Poisson counts has a standard deviation of about sqrt(1.5 s)). The deepest bucket is the
/// one lying lowest below the lower of the two peaks on either side of it (the right side's
/// peak may be at any bucket, overflow included). None when it lies less than twice the noise
/// of that peak below it: the sample shows no mode of near-duplicates apart from the rest.
pub fn valley(h: &Histogram, reach: usize) -> Option<Valley> {
    let b = &h.counts;
    let m = b.len();
    let reach = reach.min(m.saturating_sub(1));
    if reach < 2 {
        return None;
    }
    let at = |i: isize| b[i.clamp(0, m as isize - 1) as usize] as f64;
    let s: Vec<f64> = (0..m as isize).map(|i| at(i - 1) + 2.0 * at(i) + at(i + 1)).collect();
    let noise = |x: f64| 2.0 * (1.5 * x.max(1.0)).sqrt();
    let mut deepest: Option<(f64, usize)> = None;
    for v in 1..reach {
        let left = s[..v].iter().cloned().fold(0.0, f64::max);
        let right = s[v + 1..].iter().cloned().fold(0.0, f64::max);
        let peak = left.min(right);
        let depth = peak - s[v];
        if depth > noise(peak) && deepest.is_none_or(|(d, _)| depth > d) {
            deepest = Some((depth, v));
        }
    }
    let (_, v) = deepest?;
    let level = s[v] + noise(s[v]);
    let mut floor = (v, v);
    while floor.0 > 1 && s[floor.0 - 1] <= level {
        floor.0 -= 1;
    }
    while floor.1 + 1 < reach && s[floor.1 + 1] <= level {
        floor.1 += 1;
    }
    Some(Valley { at: (floor.0 + floor.1) / 2, floor })
}

/// The Wilson score interval of a share `k` of `n` at 95 % (z = 1.96): (low, high).
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n, z) = (k as f64, n as f64, 1.959_963_984_540_054);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    let low = if k == 0.0 { 0.0 } else { (centre - half).max(0.0) };
    (low, (centre + half).min(1.0))
}

/// A bar of at most `width` characters for `count` against the largest count `max`, its length
/// growing with the logarithm of the count (so that a mode of 1 % beside one of 99 % is still
/// seen); at least one character for a count above 0.
pub fn bar(count: u64, max: u64, width: usize) -> String {
    if count == 0 || max == 0 {
        return String::new();
    }
    let len = ((count as f64).ln_1p() / (max as f64).ln_1p() * width as f64).round() as usize;
    "█".repeat(len.clamp(1, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(counts: &[u64]) -> Histogram {
        Histogram { counts: counts.to_vec() }
    }

    #[test]
    fn distances_fall_in_their_buckets_and_far_ones_overflow() {
        let got = Histogram::of_distances([Some(0), Some(0), Some(3), None, Some(12), Some(13)], 12);
        assert_eq!(got.counts.len(), 14);
        assert_eq!(got.counts[0], 2);
        assert_eq!(got.counts[3], 1);
        assert_eq!(got.counts[12], 1);
        assert_eq!(got.counts[13], 2); // None and 13 > radius
        assert_eq!(got.total(), 6);
        assert_eq!(got.flagged(3), 3);
    }

    #[test]
    fn similarities_fall_in_twentieths_from_the_top() {
        assert_eq!(similarity_bucket(1.0), 0);
        assert_eq!(similarity_bucket(0.95), 0);
        assert_eq!(similarity_bucket(0.9499), 1);
        assert_eq!(similarity_bucket(0.5), 9); // [0.5, 0.55)
        assert_eq!(similarity_bucket(0.0), 19);
        assert_eq!(similarity_bucket(f64::NAN), 19);
        assert_eq!(similarity_lower_edge(10), 0.45);
        // every edge value lands in the bucket whose lower edge it is
        for i in 0..SIMILARITY_BUCKETS {
            assert_eq!(similarity_bucket(similarity_lower_edge(i)), i, "edge of bucket {i}");
        }
        let got = Histogram::of_similarities([Some(1.0), Some(0.52), None, Some(0.0)]);
        assert_eq!(got.counts[0], 1);
        assert_eq!(got.counts[9], 1);
        assert_eq!(got.counts[19], 1);
        assert_eq!(got.counts[20], 1);
    }

    #[test]
    fn the_valley_lies_between_the_near_duplicates_and_the_rest() {
        // near-duplicates at 0..4 bits, nothing at 6..8, unrelated rows rising from 9 and beyond
        let hist = h(&[40, 25, 15, 8, 4, 1, 0, 0, 0, 2, 9, 30, 80, 9000]);
        let v = valley(&hist, 13).unwrap();
        assert_eq!(v.floor, (6, 8));
        assert_eq!(v.at, 7);
        // the first mode is what it flags
        assert_eq!(hist.flagged(v.at), 93);
        // a flat stretch between the modes: the floor spans it, the suggestion is its middle
        let flat = h(&[284, 15, 18, 32, 26, 14, 27, 28, 25, 29, 37, 38, 78, 6965]);
        let v = valley(&flat, 13).unwrap();
        assert!(v.floor.0 < v.floor.1 && (2..=8).contains(&v.floor.0) && (2..=8).contains(&v.floor.1), "{v:?}");
        assert_eq!(v.at, (v.floor.0 + v.floor.1) / 2);
    }

    #[test]
    fn a_table_without_near_duplicates_has_no_valley() {
        // only the rising tail of unrelated rows: no first mode
        assert_eq!(valley(&h(&[0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 10, 40, 200, 9700]), 13), None);
        // a first "mode" of two rows is noise, not a mode
        assert_eq!(valley(&h(&[2, 0, 0, 0, 0, 0, 0, 0, 1, 3, 10, 40, 200, 9700]), 13), None);
        // too few buckets, or no bucket within reach
        assert_eq!(valley(&h(&[5, 5]), 2), None);
        assert_eq!(valley(&h(&[40, 25, 15, 8, 4, 1, 0, 0, 0, 2, 9, 30, 80, 9000]), 1), None);
    }

    #[test]
    fn similarity_valleys_run_from_one_down() {
        // rows with a copy at J ≥ 0.9, nothing between 0.8 and 0.5, unrelated rows near 0 or none
        let mut counts = vec![0u64; SIMILARITY_BUCKETS + 1];
        counts[0] = 300;
        counts[1] = 60;
        counts[2] = 20;
        counts[3] = 5;
        counts[12] = 3;
        counts[15] = 20;
        counts[18] = 200;
        counts[SIMILARITY_BUCKETS] = 5000;
        let v = valley(&h(&counts), SIMILARITY_BUCKETS).unwrap();
        assert!((4..=11).contains(&v.at), "{v:?}");
        // not looked for beyond a reach: a valley made by an index's falling recall is not one
        let mut undercounted = counts.clone();
        undercounted[9] = 40;
        undercounted[10] = 40;
        undercounted[13] = 1;
        let v = valley(&h(&undercounted), 11).unwrap();
        assert!(v.at < 11 && v.floor.1 < 11, "{v:?}");
    }

    #[test]
    fn wilson_intervals_hold_the_share() {
        let (lo, hi) = wilson(312, 10_000);
        assert!(lo < 0.0312 && 0.0312 < hi);
        assert!((lo - 0.0280).abs() < 0.0005 && (hi - 0.0348).abs() < 0.0005, "{lo} {hi}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        let (lo, hi) = wilson(0, 100);
        assert_eq!(lo, 0.0);
        assert!(hi > 0.03 && hi < 0.04);
    }

    #[test]
    fn bars_grow_with_the_logarithm_of_the_count() {
        assert_eq!(bar(0, 100, 40), "");
        assert_eq!(bar(100, 100, 40).chars().count(), 40);
        assert_eq!(bar(1, 1_000_000, 40).chars().count(), 2);
        assert!(bar(10, 100, 40).chars().count() < bar(50, 100, 40).chars().count());
    }
}
