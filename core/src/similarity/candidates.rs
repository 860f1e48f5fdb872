//! Which stored rows the similarity dedup trigger verifies when more of them share index values
//! with a new row than its verification limit (`simdup.similar_verify_limit`).
//!
//! Verifying a candidate reads its text and counts its shingles against the new row's: about
//! 20 µs. A family of texts that share a long common part yet stay under the thresholds (a long
//! footer, a template, or a family built on purpose) makes nearly every stored member a
//! candidate of each new one, so the work of one insert would grow with the table. Past the
//! limit the trigger verifies the `limit` candidates that share the most index values (LSH band
//! values, containment keys, short bands) with the new row: the index's own estimate of their
//! similarity, since a pair at Jaccard J shares each of b bands of r rows with probability J^r.
//! Ties go to the earlier row position, so the choice depends on the stored rows only.
//!
//! The effect, documented in docs/dedup.md: a near-duplicate is missed only when at least
//! `limit` other candidates share as many index values with the new row as it does. Within a
//! family of texts at Jaccard 0.42 to each other, a near-duplicate at 0.7 shares 12 of 35 bands
//! on average and a family member 2.6: with 10,000 such rows and a limit of 64 it is
//! missed with probability 0.05 ([`missed_share`], the model), one at 0.8 with 0.00015, one at
//! 0.6 with 0.51. Inside a family of texts at 0.3, a near-duplicate at 0.7 is missed with
//! probability 0.002.

/// The limit docs/dedup.md suggests for `simdup.similar_verify_limit` (whose default is 0, no
/// limit): about 1.3 ms of verification an insert (20 µs a candidate of 750 characters), which
/// keeps an insert beside 10,000 family rows within 3× an unrelated one with the counting it
/// takes (bench/dedup/family_bench.sh, docs/performance.md). Among 10,000 family rows the model
/// ([`missed_share`]) gives the same misses as a limit of 128.
pub const SUGGESTED_VERIFY_LIMIT: usize = 64;

/// A candidate row: its position (block << 16 | offset) and how many index values it shares
/// with the new row. Keyed by Fx hashing: tens of thousands of increments an insert, and the
/// positions are not chosen by the writer's text.
pub type Shared = rustc_hash::FxHashMap<u64, u32>;

/// The rows to verify among those of `sources` (one map an index, the counts of a row summed
/// over them) when they are more than `limit`: the `limit` sharing the most index values, ties
/// to the smaller position, ascending. `None` when every row is verified (`limit` 0 means no
/// limit).
pub fn most_shared(sources: &[&Shared], limit: usize) -> Option<Vec<u64>> {
    if limit == 0 || sources.iter().map(|s| s.len()).sum::<usize>() <= limit {
        return None;
    }
    let mut merged = Shared::with_capacity_and_hasher(sources[0].len(), Default::default());
    for source in sources {
        for (&tid, &n) in source.iter() {
            *merged.entry(tid).or_insert(0) += n;
        }
    }
    if merged.len() <= limit {
        return None;
    }
    let mut rows: Vec<(u32, u64)> = merged.iter().map(|(&tid, &n)| (n, tid)).collect();
    // A total order: more shared values first, then the smaller position.
    let order = |a: &(u32, u64), b: &(u32, u64)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
    rows.select_nth_unstable_by(limit - 1, order);
    let mut chosen: Vec<u64> = rows[..limit].iter().map(|&(_, tid)| tid).collect();
    chosen.sort_unstable();
    Some(chosen)
}

/// The chance, under the LSH model, that a near-duplicate at Jaccard `j` is not among the
/// `limit` rows verified, when `family` other candidates sit at Jaccard `f` with the new row:
/// the near-duplicate shares Binomial(bands, j^rows) band values, each family row
/// Binomial(bands, f^rows), and it is missed when at least `limit` family rows share more
/// (ties counted against it). The expected count of such rows stands for their count.
pub fn missed_share(j: f64, f: f64, bands: u32, rows: u32, family: f64, limit: f64) -> f64 {
    let p_dup = j.powi(rows as i32);
    let p_fam = f.powi(rows as i32);
    let pmf = |p: f64, s: u32| binomial(bands, s) * p.powi(s as i32) * (1.0 - p).powi((bands - s) as i32);
    let mut missed = 0.0;
    for s in 0..=bands {
        // Family rows sharing at least s values: the ones ranked level with or above the duplicate.
        let at_least: f64 = (s..=bands).map(|x| pmf(p_fam, x)).sum();
        if family * at_least >= limit {
            missed += pmf(p_dup, s);
        }
    }
    missed
}

fn binomial(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_the_limit_every_row_is_verified() {
        let shared: Shared = (0..10).map(|i| (i, 1)).collect();
        assert_eq!(most_shared(&[&shared], 10), None);
        assert_eq!(most_shared(&[&shared], 0), None);
        assert_eq!(most_shared(&[&Shared::default()], 1), None);
        // A row offered by two indexes is one row.
        assert_eq!(most_shared(&[&shared, &shared], 10), None);
    }

    #[test]
    fn past_the_limit_the_rows_sharing_most_are_verified() {
        let shared: Shared = [(7, 1), (3, 5), (9, 2), (1, 2), (4, 9), (2, 1)].into_iter().collect();
        assert_eq!(most_shared(&[&shared], 1), Some(vec![4]));
        assert_eq!(most_shared(&[&shared], 2), Some(vec![3, 4]));
        // 1 and 9 tie at 2 shared values: the smaller position goes first.
        assert_eq!(most_shared(&[&shared], 3), Some(vec![1, 3, 4]));
        assert_eq!(most_shared(&[&shared], 5), Some(vec![1, 2, 3, 4, 9]));
        // Counts add up over the indexes: 7 shares 1 + 9 values.
        let other: Shared = [(7, 9), (11, 1)].into_iter().collect();
        assert_eq!(most_shared(&[&shared, &other], 2), Some(vec![4, 7]));
    }

    #[test]
    fn the_choice_is_the_sorted_order_whatever_the_map() {
        // Against a full sort, on maps with many ties.
        for seed in 0..50u64 {
            let shared: Shared =
                (0..500u64).map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40, ((i ^ seed) % 7) as u32)).collect();
            for limit in [1, 17, 100, 499] {
                let mut all: Vec<(u32, u64)> = shared.iter().map(|(&t, &n)| (n, t)).collect();
                all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                let mut want: Vec<u64> = all[..limit.min(all.len())].iter().map(|x| x.1).collect();
                want.sort_unstable();
                let got = most_shared(&[&shared], limit);
                if shared.len() <= limit {
                    assert_eq!(got, None);
                } else {
                    assert_eq!(got, Some(want));
                }
            }
        }
    }

    #[test]
    fn the_model_misses_near_threshold_pairs_in_large_families_only() {
        // 35 bands of 3 rows (the defaults at threshold 0.5), 10,000 family rows at 0.42.
        let limit = SUGGESTED_VERIFY_LIMIT as f64;
        let at = |j: f64, family: f64| missed_share(j, 0.42, 35, 3, family, limit);
        assert_eq!(at(0.5, 50.0), 0.0, "a family smaller than the limit is verified whole");
        // The figures of docs/dedup.md (10,000 family rows, the suggested limit).
        let cases = [(0.5, 0.9367), (0.6, 0.5060), (0.7, 0.0501), (0.8, 0.00015)];
        for (j, want) in cases {
            assert!((at(j, 10_000.0) - want).abs() < 5e-5, "{j}: {}", at(j, 10_000.0));
        }
        let lower = missed_share(0.7, 0.3, 35, 3, 10_000.0, limit);
        assert!((lower - 0.0021).abs() < 5e-5, "{lower}");
        assert!(at(0.9, 10_000.0) < 1e-9);
        // Monotone in the family's size.
        assert!(at(0.6, 1_000.0) <= at(0.6, 10_000.0));
    }
}
