//! Hamming distance and the four 16-bit blocks used for index probes.
//!
//! If two fingerprints differ in at most k bits, then by pigeonhole at least one of their four
//! 16-bit blocks differs in at most ⌊k/4⌋ bits. So probing, for each block, every value within
//! Hamming radius ⌊k/4⌋ of the query's block finds every fingerprint within distance k
//! (k ≤ 3: the block values themselves; k ≤ 7: 17 values a block; k ≤ 11: 137; k ≤ 15: 697).

/// Number of blocks.
pub const BLOCKS: usize = 4;
/// Bits per block.
pub const BLOCK_BITS: u32 = 16;

/// Number of differing bits.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Block `i` (0 = most significant) of `fp`. Panics when `i >= 4`: callers validate.
#[inline]
pub fn block(fp: u64, i: usize) -> u16 {
    assert!(i < BLOCKS, "block index {i} out of range");
    (fp >> (48 - 16 * i as u32)) as u16
}

/// All four blocks, most significant first.
#[inline]
pub fn blocks(fp: u64) -> [u16; BLOCKS] {
    [block(fp, 0), block(fp, 1), block(fp, 2), block(fp, 3)]
}

/// Reassembles a fingerprint from its blocks.
#[inline]
pub fn from_blocks(b: [u16; BLOCKS]) -> u64 {
    (u64::from(b[0]) << 48) | (u64::from(b[1]) << 32) | (u64::from(b[2]) << 16) | u64::from(b[3])
}

/// The block radius that keeps a probe exact for distance `k`.
#[inline]
pub fn block_radius(k: u32) -> u32 {
    k / BLOCKS as u32
}

/// Number of 16-bit values within Hamming radius `r` of a value: Σ_{j≤r} C(16, j).
pub fn neighbour_count(r: u32) -> usize {
    let r = r.min(BLOCK_BITS);
    let mut total = 0usize;
    let mut c = 1usize; // C(16, 0)
    for j in 0..=r as usize {
        total += c;
        c = c * (16 - j) / (j + 1);
    }
    total
}

/// Every 16-bit value within Hamming radius `r` of `b`, `b` included, in ascending order.
pub fn neighbours(b: u16, r: u32) -> Vec<u16> {
    let r = r.min(BLOCK_BITS);
    let mut out = Vec::with_capacity(neighbour_count(r));
    if r == BLOCK_BITS {
        out.extend(0..=u16::MAX);
        return out;
    }
    // Enumerate flip masks of weight ≤ r by recursion over bit positions.
    fn go(b: u16, start: u32, left: u32, mask: u16, out: &mut Vec<u16>) {
        out.push(b ^ mask);
        if left == 0 {
            return;
        }
        for bit in start..16 {
            go(b, bit + 1, left - 1, mask | (1 << bit), out);
        }
    }
    go(b, 0, r, 0, &mut out);
    out.sort_unstable();
    out
}

/// The block from which an exact block-probe search first finds `b` when searching around `a`
/// for distance `k`: the smallest `i` such that block `i` of `a` and `b` differ in at most
/// [`block_radius`]`(k)` bits, provided `hamming(a, b) <= k`; `None` when they are farther apart.
///
/// Batch searches join on every block but keep a candidate pair only from this block, so each
/// pair comes out exactly once without a DISTINCT. By pigeonhole it is `Some` exactly when
/// `hamming(a, b) <= k`.
#[inline]
pub fn first_block(a: u64, b: u64, k: u32) -> Option<usize> {
    if hamming(a, b) > k {
        return None;
    }
    let r = block_radius(k);
    (0..BLOCKS).find(|&i| (block(a, i) ^ block(b, i)).count_ones() <= r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn block_order() {
        let fp = 0x0123_4567_89ab_cdefu64;
        assert_eq!(blocks(fp), [0x0123, 0x4567, 0x89ab, 0xcdef]);
    }

    #[test]
    fn neighbour_counts() {
        assert_eq!(neighbour_count(0), 1);
        assert_eq!(neighbour_count(1), 17);
        assert_eq!(neighbour_count(2), 137);
        assert_eq!(neighbour_count(3), 697);
        for r in 0..=4 {
            let n = neighbours(0xa5a5, r);
            assert_eq!(n.len(), neighbour_count(r));
            assert!(n.windows(2).all(|w| w[0] < w[1]));
            assert!(n.iter().all(|&v| (v ^ 0xa5a5).count_ones() <= r));
        }
        assert_eq!(neighbours(7, 16).len(), 65536);
    }

    proptest! {
        #[test]
        fn blocks_reassemble(fp in any::<u64>()) {
            prop_assert_eq!(from_blocks(blocks(fp)), fp);
        }

        #[test]
        fn hamming_is_a_metric(a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
            prop_assert_eq!(hamming(a, a), 0);
            prop_assert_eq!(hamming(a, b), hamming(b, a));
            prop_assert!(hamming(a, c) <= hamming(a, b) + hamming(b, c));
        }

        /// Pigeonhole: within distance k, some block is within radius ⌊k/4⌋.
        #[test]
        fn some_block_within_radius(a in any::<u64>(), flips in proptest::collection::vec(0u32..64, 0..16)) {
            let mut b = a;
            for f in &flips { b ^= 1 << f; }
            let k = hamming(a, b);
            let r = block_radius(k);
            let ok = (0..BLOCKS).any(|i| neighbours(block(a, i), r).contains(&block(b, i)));
            prop_assert!(ok);
        }

        /// `first_block` is symmetric, `Some` exactly within distance k, and names a block the
        /// probe of that block finds, with no earlier block that would also find it.
        #[test]
        fn first_block_is_exact(a in any::<u64>(), flips in proptest::collection::vec(0u32..64, 0..20), k in 0u32..=64) {
            let mut b = a;
            for f in &flips { b ^= 1 << f; }
            let fb = first_block(a, b, k);
            prop_assert_eq!(fb, first_block(b, a, k));
            prop_assert_eq!(fb.is_some(), hamming(a, b) <= k);
            if let Some(i) = fb {
                let r = block_radius(k);
                prop_assert!(neighbours(block(a, i), r).contains(&block(b, i)));
                for j in 0..i {
                    prop_assert!(!neighbours(block(a, j), r).contains(&block(b, j)));
                }
            }
        }
    }

    #[test]
    fn first_block_examples() {
        let a = 0x0123_4567_89ab_cdefu64;
        assert_eq!(first_block(a, a, 0), Some(0));
        // One bit flipped in block 0: block 1 is the first equal block at k = 1..3.
        assert_eq!(first_block(a, a ^ (1 << 63), 0), None);
        assert_eq!(first_block(a, a ^ (1 << 63), 1), Some(1));
        // Bits flipped in every block (4 bits): exact only from k = 4, where radius 1 admits block 0.
        let b = a ^ (1 << 63) ^ (1 << 47) ^ (1 << 31) ^ (1 << 15);
        assert_eq!(first_block(a, b, 3), None);
        assert_eq!(first_block(a, b, 4), Some(0));
    }
}
