//! Which stored rows the similarity dedup check verifies when more of them share index values
//! with a new row than its verification limit (`simdup.similar_verify_limit`, 64 by default).
//!
//! Verifying a candidate reads its text and counts its shingles against the new row's: about
//! 20 µs. A family of texts that share a long common part yet stay under the thresholds (a long
//! footer, a template, or a family built on purpose) makes nearly every stored member a
//! candidate of each new one, so the work of one insert would grow with the table. Past the
//! limit the check verifies the `limit` candidates that share the most index values (LSH band
//! values, containment keys, short bands) with the new row: the index's own estimate of their
//! similarity, since a pair at Jaccard J shares each of b bands of r rows with probability J^r.
//! Among rows sharing as many, the smaller keys go first ([`verified`]), as the near-duplicate a
//! check names is the one with the smallest key; so the choice depends on the stored rows only,
//! not on where they are stored, and a Citus distributed table chooses as one node does.
//!
//! The effect, documented in docs/dedup.md: a near-duplicate is missed only when at least
//! `limit` other candidates share as many index values with the new row as it does. Within a
//! family of texts at Jaccard 0.42 to each other, a near-duplicate at 0.7 shares 12 of 35 bands
//! on average and a family member 2.6: with 10,000 such rows and a limit of 64 it is
//! missed with probability 0.05 ([`missed_share`], the model), one at 0.8 with 0.00015, one at
//! 0.6 with 0.51. Inside a family of texts at 0.3, a near-duplicate at 0.7 is missed with
//! probability 0.002.

use std::cmp::Ordering;

/// The default of `simdup.similar_verify_limit`: about 1.3 ms of verification an insert (20 µs
/// a candidate of 750 characters), which keeps an insert beside 10,000 family rows within 3× an
/// unrelated one with the counting it takes (bench/dedup/family_bench.sh, docs/performance.md).
/// Among 10,000 family rows the model ([`missed_share`]) gives the same misses as a limit of 128.
pub const DEFAULT_VERIFY_LIMIT: usize = 64;

/// A candidate row: its position (block << 16 | offset) and how many index values it shares
/// with the new row. Keyed by Fx hashing: tens of thousands of increments an insert, and the
/// positions are not chosen by the writer's text.
pub type Shared = rustc_hash::FxHashMap<u64, u32>;

/// The rule: of `rows` (a candidate's key and how many index values it shares with the new row),
/// the keys of those verified — all of them within `limit` (0: no limit), else the `limit`
/// sharing the most, the smaller key first among equals (a total order for distinct keys).
/// `None`: every row is verified.
pub fn verified<K: Ord + Clone>(rows: &[(K, u32)], limit: usize) -> Option<Vec<K>> {
    if limit == 0 || rows.len() <= limit {
        return None;
    }
    let mut rows = rows.to_vec();
    let order = |a: &(K, u32), b: &(K, u32)| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0));
    rows.select_nth_unstable_by(limit - 1, order);
    Some(rows.into_iter().take(limit).map(|(key, _)| key).collect())
}

/// [`verified`]'s choice on one node, whose indexes name rows by position and count index
/// entries, some of them of rows no longer there: the positions of `sources`' rows (one map an
/// index, the counts of a row summed over them) grouped by how many values they share, most
/// first, are handed level by level to `read`, which returns the rows there (each position with
/// its key; a dead or left-out row is not returned), until `limit` rows are chosen; at the level
/// that crosses it, the smallest keys by `cmp`, the smaller position first among equal keys.
/// `None`: every row is verified (at most `limit` offered, or `limit` 0). So only the keys of
/// rows at or above the cut are read.
pub fn choose<K>(
    sources: &[&Shared],
    limit: usize,
    mut read: impl FnMut(&[u64]) -> Vec<(u64, K)>,
    mut cmp: impl FnMut(&K, &K) -> Ordering,
) -> Option<Vec<u64>> {
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
    let mut rows: Vec<(u32, u64)> = merged.into_iter().map(|(tid, n)| (n, tid)).collect();
    rows.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen = Vec::with_capacity(limit);
    for level in rows.chunk_by(|a, b| a.0 == b.0) {
        let positions: Vec<u64> = level.iter().map(|&(_, tid)| tid).collect();
        let mut there = read(&positions);
        let take = limit - chosen.len();
        if there.len() > take {
            there.sort_by(|a, b| cmp(&a.1, &b.1).then(a.0.cmp(&b.0)));
            there.truncate(take);
        }
        chosen.extend(there.into_iter().map(|(tid, _)| tid));
        if chosen.len() == limit {
            break;
        }
    }
    chosen.sort_unstable();
    Some(chosen)
}

/// How many of a new row's index values `mine` (one index lookup each) another row's `theirs`
/// holds: what one index adds to the other row's count.
pub fn shared_values(mine: &[i64], theirs: &[i64]) -> u32 {
    mine.iter().filter(|v| theirs.contains(v)).count() as u32
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

    /// The positions [`choose`] picks, given each position's key and which rows are there.
    fn chosen(
        sources: &[&Shared],
        limit: usize,
        key: impl Fn(u64) -> u64,
        there: impl Fn(u64) -> bool,
    ) -> Option<Vec<u64>> {
        let read = |level: &[u64]| level.iter().filter(|&&t| there(t)).map(|&t| (t, key(t))).collect();
        choose(sources, limit, read, |a: &u64, b| a.cmp(b))
    }

    #[test]
    fn within_the_limit_every_row_is_verified() {
        let shared: Shared = (0..10).map(|i| (i, 1)).collect();
        let all = |_| true;
        assert_eq!(chosen(&[&shared], 10, |t| t, all), None);
        assert_eq!(chosen(&[&shared], 0, |t| t, all), None);
        assert_eq!(chosen(&[&Shared::default()], 1, |t| t, all), None);
        // A row offered by two indexes is one row.
        assert_eq!(chosen(&[&shared, &shared], 10, |t| t, all), None);
        let rows: Vec<(u64, u32)> = (0..10).map(|i| (i, 1)).collect();
        assert_eq!(verified(&rows, 10), None);
        assert_eq!(verified(&rows, 0), None);
    }

    #[test]
    fn past_the_limit_the_rows_sharing_most_are_verified() {
        let shared: Shared = [(7, 1), (3, 5), (9, 2), (1, 2), (4, 9), (2, 1)].into_iter().collect();
        let (id, all) = (|tid: u64| tid, |_| true);
        assert_eq!(chosen(&[&shared], 1, id, all), Some(vec![4]));
        assert_eq!(chosen(&[&shared], 2, id, all), Some(vec![3, 4]));
        // 1 and 9 are level at 2 shared values: the smaller key goes first.
        assert_eq!(chosen(&[&shared], 3, id, all), Some(vec![1, 3, 4]));
        assert_eq!(chosen(&[&shared], 3, |tid| 100 - tid, all), Some(vec![3, 4, 9]));
        assert_eq!(chosen(&[&shared], 5, id, all), Some(vec![1, 2, 3, 4, 9]));
        // A row no longer there leaves its place to the next one.
        assert_eq!(chosen(&[&shared], 2, id, |t| t != 4), Some(vec![1, 3]));
        // Counts add up over the indexes: 7 shares 1 + 9 values.
        let other: Shared = [(7, 9), (11, 1)].into_iter().collect();
        assert_eq!(chosen(&[&shared, &other], 2, id, all), Some(vec![4, 7]));
        // Equal keys: the smaller position.
        assert_eq!(chosen(&[&shared], 3, |t| t % 2, all), Some(vec![1, 3, 4]));
    }

    #[test]
    fn one_node_chooses_as_the_rule_does_whatever_the_map() {
        // The walk by levels, reading keys and dropping rows no longer there, against the rule
        // on the (key, count) rows that are there, on maps with many ties and keys in another
        // order than positions.
        for seed in 0..50u64 {
            let shared: Shared =
                (0..500u64).map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40, ((i ^ seed) % 7) as u32)).collect();
            let key = |tid: u64| tid.wrapping_mul(0xff51_afd7_ed55_8ccd) ^ seed;
            let there = |tid: u64| !(tid ^ seed).is_multiple_of(5) || seed.is_multiple_of(2);
            for limit in [1, 17, 100, 380, 499, 500] {
                let rows: Vec<(u64, u32)> =
                    shared.iter().filter(|(&t, _)| there(t)).map(|(&t, &n)| (key(t), n)).collect();
                let keys = |tids: Vec<u64>| {
                    let mut keys: Vec<u64> = tids.into_iter().map(key).collect();
                    keys.sort_unstable();
                    keys
                };
                let got = chosen(&[&shared], limit, key, there);
                let want = verified(&rows, limit).map(|mut k| {
                    k.sort_unstable();
                    k
                });
                match got {
                    // Within the limit before the rows not there are left out: every row is
                    // verified, and only the rows there are candidates.
                    None => assert!(shared.len() <= limit && want.is_none(), "seed {seed}, limit {limit}"),
                    Some(tids) if rows.len() <= limit => assert_eq!(keys(tids).len(), rows.len()),
                    Some(tids) => assert_eq!(Some(keys(tids)), want, "seed {seed}, limit {limit}"),
                }
                // The rule against a full sort.
                if rows.len() > limit {
                    let mut all = rows.clone();
                    all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                    let mut full: Vec<u64> = all[..limit].iter().map(|x| x.0).collect();
                    full.sort_unstable();
                    assert_eq!(
                        verified(&rows, limit).map(|mut k| {
                            k.sort_unstable();
                            k
                        }),
                        Some(full)
                    );
                }
            }
        }
    }

    #[test]
    fn the_model_misses_near_threshold_pairs_in_large_families_only() {
        // 35 bands of 3 rows (the defaults at threshold 0.5), 10,000 family rows at 0.42.
        let limit = DEFAULT_VERIFY_LIMIT as f64;
        let at = |j: f64, family: f64| missed_share(j, 0.42, 35, 3, family, limit);
        assert_eq!(at(0.5, 50.0), 0.0, "a family smaller than the limit is verified whole");
        // The figures of docs/dedup.md (10,000 family rows, the default limit).
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
