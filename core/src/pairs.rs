//! All pairs of distinct fingerprints within Hamming distance k, without comparing all pairs.
//!
//! For each 16-bit block i of the default layout, the fingerprints are bucketed by the value of
//! block i (a counting sort over the 65,536 values); each bucket is joined with itself and with
//! the buckets of the values within the block's threshold tᵢ of its own (the same tight probe
//! set a single lookup uses, [`Layout::thresholds`]; a block with tᵢ = −1 is skipped). By the
//! general pigeonhole principle every pair within distance k meets in some block; a pair is kept
//! only from its [`Layout::first_block`], so each comes out once, without a DISTINCT.
//!
//! Work per block: Σ over buckets of |bucket| × |neighbour buckets| candidate checks, i.e.
//! about Σᵢ n² · N(tᵢ) / 2¹⁷ for n uniformly random fingerprints (N(t) = 1, 17, 137, 697 values
//! for t = 0, 1, 2, 3; at k = 10, t = (2, 2, 2, 1)), plus whatever a crowded block value adds. Identical fingerprints are
//! collapsed first, so many copies of one document cost nothing. Memory: the distinct
//! fingerprints twice and a 65,537-entry offset table.

use crate::blocks::{block, neighbours, Layout, BLOCKS};

/// Candidate checks between interrupt callbacks.
const CHECKS_PER_INTERRUPT: u64 = 1 << 22;

/// Pairs `(a, b)`, `a < b`, of distinct values of `fps` (duplicates are ignored) with
/// `hamming(a, b) <= k`, each exactly once, in no particular order.
pub fn near_pairs(mut fps: Vec<u64>, k: u32, interrupt: &mut dyn FnMut()) -> Vec<(u64, u64)> {
    fps.sort_unstable();
    fps.dedup();
    let n = fps.len();
    let mut out = Vec::new();
    if n < 2 {
        return out;
    }
    let layout = Layout::default_layout();
    let t = layout.thresholds(k.min(64) as i32);
    let mut offsets = vec![0u32; 65_537];
    let mut sorted = vec![0u64; n];
    let mut checks = 0u64;
    for i in 0..BLOCKS {
        if t[i] < 0 {
            continue; // pairs within k always meet in an earlier block
        }
        // Flip masks of weight 1..=tᵢ: the neighbours of value u other than u are u ^ mask.
        let masks: Vec<u16> = neighbours(0, t[i] as u32).into_iter().filter(|&m| m != 0).collect();
        // Counting sort by the value of block i.
        offsets.iter_mut().for_each(|o| *o = 0);
        for &fp in &fps {
            offsets[block(fp, i) as usize + 1] += 1;
        }
        for v in 0..65_536 {
            offsets[v + 1] += offsets[v];
        }
        let mut next = offsets.clone();
        for &fp in &fps {
            let slot = &mut next[block(fp, i) as usize];
            sorted[*slot as usize] = fp;
            *slot += 1;
        }
        let bucket = |v: usize| &sorted[offsets[v] as usize..offsets[v + 1] as usize];

        let check = |a: u64, b: u64, out: &mut Vec<(u64, u64)>| {
            if layout.first_block(a, b, k, &t) == Some(i) {
                out.push(if a < b { (a, b) } else { (b, a) });
            }
        };
        for u in 0..65_536usize {
            let own = bucket(u);
            if own.is_empty() {
                continue;
            }
            for (x, &a) in own.iter().enumerate() {
                for &b in &own[x + 1..] {
                    check(a, b, &mut out);
                }
                checks += (own.len() - x) as u64;
                if checks >= CHECKS_PER_INTERRUPT {
                    checks = 0;
                    interrupt();
                }
            }
            for &m in &masks {
                let v = u ^ m as usize;
                if v < u {
                    continue; // that pair of buckets was joined from v
                }
                let other = bucket(v);
                for &a in own {
                    for &b in other {
                        check(a, b, &mut out);
                    }
                    checks += other.len() as u64 + 1;
                    if checks >= CHECKS_PER_INTERRUPT {
                        checks = 0;
                        interrupt();
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::hamming;
    use proptest::prelude::*;

    fn brute(fps: &[u64], k: u32) -> Vec<(u64, u64)> {
        let mut v: Vec<u64> = fps.to_vec();
        v.sort_unstable();
        v.dedup();
        let mut out = Vec::new();
        for x in 0..v.len() {
            for y in x + 1..v.len() {
                if hamming(v[x], v[y]) <= k {
                    out.push((v[x], v[y]));
                }
            }
        }
        out
    }

    fn sorted(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
        v.sort_unstable();
        v
    }

    #[test]
    fn small_cases() {
        assert!(near_pairs(vec![], 3, &mut || {}).is_empty());
        assert!(near_pairs(vec![7, 7, 7], 3, &mut || {}).is_empty());
        assert_eq!(sorted(near_pairs(vec![0, 1, 3, 7 << 40, 0], 1, &mut || {})), vec![(0, 1), (1, 3)]);
        assert_eq!(sorted(near_pairs(vec![0, 1, 3, 7 << 40, 0], 3, &mut || {})), vec![(0, 1), (0, 3), (0, 7 << 40), (1, 3)]);
        // Every block touched: distance 4, found at k = 4 only.
        let b = (1u64 << 63) | (1 << 47) | (1 << 31) | (1 << 15);
        assert!(near_pairs(vec![0, b], 3, &mut || {}).is_empty());
        assert_eq!(near_pairs(vec![0, b], 4, &mut || {}), vec![(0, b)]);
    }

    proptest! {
        /// Same pairs as brute force, each once, on clusters of fingerprints a few bits apart
        /// (and crowded block values: the centres share their low blocks).
        #[test]
        fn matches_brute_force(
            centres in proptest::collection::vec(any::<u64>(), 1..12),
            flips in proptest::collection::vec((0usize..12, proptest::collection::vec(0u32..64, 0..14)), 0..60),
            shared_low in any::<bool>(),
            k in 0u32..=16,
        ) {
            let mut fps: Vec<u64> = centres.iter().map(|&c| if shared_low { c & !0xffff_ffff } else { c }).collect();
            let base = fps.clone();
            for (c, bits) in &flips {
                let mut fp = base[c % base.len()];
                for b in bits { fp ^= 1 << b; }
                fps.push(fp);
            }
            let got = near_pairs(fps.clone(), k, &mut || {});
            let once = got.len();
            let got = sorted(got);
            let mut dedup = got.clone();
            dedup.dedup();
            prop_assert_eq!(once, dedup.len());
            prop_assert_eq!(got, brute(&fps, k));
        }
    }

    #[test]
    fn interrupts_are_called_on_crowded_buckets() {
        // 5,000 fingerprints sharing block 0 (top 16 bits zero): 12.5 million checks.
        let fps: Vec<u64> = (1..=5_000u64).map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16).collect();
        let mut calls = 0;
        let pairs = near_pairs(fps.clone(), 3, &mut || calls += 1);
        assert!(calls >= 2, "{calls}");
        assert_eq!(sorted(pairs), brute(&fps, 3));
    }
}
