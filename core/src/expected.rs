//! The rows a statement is known to insert, checked in one pass: for a batch of fingerprints
//! given up front (`simdup_insert_select` knows its rows before its INSERT starts), every
//! stored fingerprint within k of each, and every other fingerprint of the batch within k of
//! each, found by one run of the pair join across the two ([`crate::pairs::near_pairs_across`]:
//! pairs of two stored fingerprints are never checked), instead of one search a row.
//!
//! The dedup trigger's bulk check then answers a row of the batch from these lists: the stored
//! near-duplicates are the ones a search of the stored set would report, and the statement's
//! own rows that landed are those of the row's batch neighbours marked [`Expected::pass`]ed. A
//! row whose fingerprint is not in the batch is not answered here ([`Expected::index`] is None).
//!
//! Memory: the pair join's (16 bytes a distinct fingerprint, the pairs 16 bytes each, at most
//! `max_pairs` of them), then 8 bytes a stored neighbour and 8 a batch neighbour (each batch
//! pair twice), and 13 bytes a distinct batch fingerprint.

use crate::pairs::{near_pairs_across, TooManyPairs};

/// The batch's fingerprints and their neighbours within k.
pub struct Expected {
    /// Distinct fingerprints of the batch, ascending.
    values: Vec<u64>,
    /// Where the values with each top-`radix_bits` prefix start: `values[radix[p]..radix[p + 1]]`
    /// (a lookup reads one entry of this and a few values, not a binary search's ~18 lines).
    radix: Vec<u32>,
    radix_bits: u32,
    /// Stored fingerprints within k of `values[i]` (the equal one included), ascending:
    /// `stored[stored_start[i]..stored_start[i + 1]]`.
    stored_start: Vec<u32>,
    stored: Vec<u64>,
    /// Indexes of the other batch fingerprints within k of `values[i]`.
    batch_start: Vec<u32>,
    batch: Vec<u32>,
    /// Whether a row with `values[i]` has been let through.
    passed: Vec<bool>,
}

/// CSR lists from `(owner, item)` pairs: owner i's items, in the pairs' order.
fn lists<T: Copy + Default>(n: usize, pairs: &[(u32, T)]) -> (Vec<u32>, Vec<T>) {
    let mut start = vec![0u32; n + 1];
    for &(i, _) in pairs {
        start[i as usize + 1] += 1;
    }
    for i in 1..=n {
        start[i] += start[i - 1];
    }
    let mut next = start.clone();
    let mut items = vec![T::default(); pairs.len()];
    for &(i, x) in pairs {
        items[next[i as usize] as usize] = x;
        next[i as usize] += 1;
    }
    (start, items)
}

impl Expected {
    /// The neighbours within `k` of each of `batch` among `stored` (fingerprints in any order,
    /// copies allowed) and among `batch` itself, by the pair join on `threads` threads
    /// ([`near_pairs_across`]: `interrupt` is called on the calling thread as the join goes,
    /// and may unwind). [`TooManyPairs`] when there are more than `max_pairs` pairs within k
    /// with a batch fingerprint.
    pub fn new(
        stored: &[u64],
        batch: &[u64],
        k: u32,
        threads: usize,
        max_pairs: usize,
        interrupt: &mut dyn FnMut(u64),
    ) -> Result<Expected, TooManyPairs> {
        let mut values = batch.to_vec();
        values.sort_unstable();
        values.dedup();
        let mut stored_values = stored.to_vec();
        stored_values.sort_unstable();
        stored_values.dedup();
        let is_stored = |fp: u64| stored_values.binary_search(&fp).is_ok();
        let index = |fp: u64| values.binary_search(&fp).ok().map(|i| i as u32);

        let pairs = near_pairs_across(values.clone(), stored_values.clone(), k, threads, max_pairs, interrupt)?;

        let mut stored_pairs: Vec<(u32, u64)> = Vec::new();
        let mut batch_pairs: Vec<(u32, u32)> = Vec::new();
        for (i, &fp) in values.iter().enumerate() {
            if is_stored(fp) {
                stored_pairs.push((i as u32, fp));
            }
        }
        for &(a, b) in &pairs {
            let (ia, ib) = (index(a), index(b));
            if let Some(ia) = ia {
                if is_stored(b) {
                    stored_pairs.push((ia, b));
                }
            }
            if let Some(ib) = ib {
                if is_stored(a) {
                    stored_pairs.push((ib, a));
                }
            }
            if let (Some(ia), Some(ib)) = (ia, ib) {
                batch_pairs.push((ia, ib));
                batch_pairs.push((ib, ia));
            }
        }
        stored_pairs.sort_unstable();
        let (stored_start, stored) = lists(values.len(), &stored_pairs);
        let (batch_start, batch) = lists(values.len(), &batch_pairs);
        let passed = vec![false; values.len()];
        // About one value a prefix (at least 1 bit, at most 2^20 prefixes: 4 MB).
        let radix_bits = (usize::BITS - values.len().leading_zeros()).clamp(1, 20);
        let mut radix = vec![0u32; (1usize << radix_bits) + 1];
        for &fp in &values {
            radix[(fp >> (64 - radix_bits)) as usize + 1] += 1;
        }
        for p in 1..radix.len() {
            radix[p] += radix[p - 1];
        }
        Ok(Expected { values, radix, radix_bits, stored_start, stored, batch_start, batch, passed })
    }

    /// The position of `fp` among the batch's distinct fingerprints, if it is one of them.
    pub fn index(&self, fp: u64) -> Option<usize> {
        let p = (fp >> (64 - self.radix_bits)) as usize;
        let (lo, hi) = (self.radix[p] as usize, self.radix[p + 1] as usize);
        self.values[lo..hi].binary_search(&fp).ok().map(|i| lo + i)
    }

    /// The stored fingerprints within k of the batch's fingerprint `i`, ascending (each once,
    /// however many stored rows have it).
    pub fn stored_near(&self, i: usize) -> &[u64] {
        &self.stored[self.stored_start[i] as usize..self.stored_start[i + 1] as usize]
    }

    /// Whether a row with the batch's fingerprint `i`, or with one of the batch's fingerprints
    /// within k of it, has been let through.
    pub fn passed_near(&self, i: usize) -> bool {
        self.passed[i]
            || self.batch[self.batch_start[i] as usize..self.batch_start[i + 1] as usize]
                .iter()
                .any(|&j| self.passed[j as usize])
    }

    /// Records that a row with the batch's fingerprint `i` was let through.
    pub fn pass(&mut self, i: usize) {
        self.passed[i] = true;
    }

    /// The batch's fingerprints let through so far.
    pub fn passed(&self) -> impl Iterator<Item = u64> + '_ {
        self.values.iter().zip(&self.passed).filter(|&(_, &p)| p).map(|(&fp, _)| fp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::hamming;
    use proptest::prelude::*;

    fn random(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                // splitmix64
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            })
            .collect()
    }

    /// `base`'s fingerprints with `bits` of their bits flipped (bit positions from `seed`).
    fn near(base: &[u64], bits: u32, seed: u64) -> Vec<u64> {
        let r = random(seed, base.len() * bits as usize);
        base.iter()
            .enumerate()
            .map(|(i, &fp)| (0..bits as usize).fold(fp, |fp, j| fp ^ (1u64 << (r[i * bits as usize + j] % 64))))
            .collect()
    }

    fn check(stored: &[u64], batch: &[u64], k: u32) {
        let e = Expected::new(stored, batch, k, 1, usize::MAX, &mut |_| {}).expect("no limit");
        let mut distinct_stored = stored.to_vec();
        distinct_stored.sort_unstable();
        distinct_stored.dedup();
        for &q in batch {
            let i = e.index(q).expect("a batch fingerprint");
            let want: Vec<u64> = distinct_stored.iter().copied().filter(|&s| hamming(s, q) <= k).collect();
            assert_eq!(e.stored_near(i), &want[..], "stored near {q:#x}, k = {k}");
            let mut got: Vec<u64> = e.batch[e.batch_start[i] as usize..e.batch_start[i + 1] as usize]
                .iter()
                .map(|&j| e.values[j as usize])
                .collect();
            got.sort_unstable();
            let mut want: Vec<u64> = e.values.iter().copied().filter(|&b| b != q && hamming(b, q) <= k).collect();
            want.sort_unstable();
            assert_eq!(got, want, "batch near {q:#x}, k = {k}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Every list is the brute force's, at every distance around k: stored and batch
        /// fingerprints near each other at 0..=18 bits, copies in both.
        #[test]
        fn lists_are_the_brute_force(seed in any::<u64>(), k in 0u32..=16) {
            let base = random(seed, 30);
            let mut stored = base.clone();
            let mut batch = Vec::new();
            for bits in (0..=18).step_by(3) {
                stored.extend(near(&base[..10], bits, seed ^ u64::from(bits)));
                batch.extend(near(&base[5..25], bits, seed.wrapping_add(u64::from(bits) + 1)));
            }
            stored.extend_from_within(..5);
            batch.extend_from_within(..7);
            batch.extend(random(seed ^ 1, 50));
            check(&stored, &batch, k);
        }
    }

    #[test]
    fn passing_marks_the_neighbours() {
        let stored = [0u64, u64::MAX];
        let batch = [0b1u64, 0b11, 0b1111_0000_0000, 0b1];
        let mut e = Expected::new(&stored, &batch, 2, 1, usize::MAX, &mut |_| {}).unwrap();
        let (a, b, c) = (e.index(0b1).unwrap(), e.index(0b11).unwrap(), e.index(0b1111_0000_0000).unwrap());
        assert_eq!(e.index(0b111), None);
        assert_eq!(e.stored_near(a), &[0]);
        assert_eq!(e.stored_near(b), &[0]);
        assert_eq!(e.stored_near(c), &[] as &[u64]);
        assert!(!e.passed_near(a) && !e.passed_near(b));
        e.pass(a);
        assert!(e.passed_near(a), "the same fingerprint again");
        assert!(e.passed_near(b), "one bit away");
        assert!(!e.passed_near(c));
        assert_eq!(e.passed().collect::<Vec<_>>(), vec![0b1]);
    }

    #[test]
    fn too_many_pairs_and_empty_sides() {
        let base = random(7, 40);
        let stored: Vec<u64> = base.iter().flat_map(|&b| near(&[b; 8], 1, b)).collect();
        assert!(Expected::new(&stored, &base, 3, 1, 10, &mut |_| {}).is_err());
        check(&[], &base, 10);
        check(&base, &[], 10);
    }
}
