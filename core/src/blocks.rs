//! Hamming distance, the blocks a fingerprint is cut into for index probes, and the probe set
//! that finds every fingerprint within distance k.
//!
//! A [`Layout`] cuts the 64 bits into m contiguous blocks, most significant first (the default:
//! four blocks of 16 bits). By the general pigeonhole principle (Qin, Wang, Xiao et al., ICDE
//! 2018), if `hamming(a, b) <= k` then for *any* thresholds t₀ … t₍ₘ₋₁₎ with
//! Σ tᵢ ≥ k − m + 1 some block i of a and b differs in at most tᵢ bits: were every block i at
//! least tᵢ + 1 bits apart, the distance would be at least Σ (tᵢ + 1) ≥ k + 1. A threshold of
//! −1 means the block is not probed at all. [`Layout::thresholds`] chooses the tᵢ that make the
//! probe set cheapest; for four 16-bit blocks at k = 10 that is (2, 2, 2, 1): 137 + 137 + 137 +
//! 17 = 428 probe values instead of the 4 × 137 = 548 of the classic ⌊k/m⌋ radius (Manku,
//! Jain, Das Sarma, WWW 2007).
//!
//! Each block is served by a B-tree on [`key`]: the fingerprint rotated so that the block is in
//! its top bits, with the sign bit flipped so that unsigned order is `bigint` order. A probe
//! value is then one contiguous key range ([`Probe`]), and the key carries the whole
//! fingerprint (rotation does not change Hamming distance), so candidates are checked from the
//! index alone.

/// Number of blocks of the default layout.
pub const BLOCKS: usize = 4;
/// Bits per block of the default layout.
pub const BLOCK_BITS: u32 = 16;

/// Number of differing bits.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Block `i` (0 = most significant) of `fp` in the default layout. Panics when `i >= 4`:
/// callers validate.
#[inline]
pub fn block(fp: u64, i: usize) -> u16 {
    assert!(i < BLOCKS, "block index {i} out of range");
    (fp >> (48 - 16 * i as u32)) as u16
}

/// All four blocks of the default layout, most significant first.
#[inline]
pub fn blocks(fp: u64) -> [u16; BLOCKS] {
    [block(fp, 0), block(fp, 1), block(fp, 2), block(fp, 3)]
}

/// Reassembles a fingerprint from its four default blocks.
#[inline]
pub fn from_blocks(b: [u16; BLOCKS]) -> u64 {
    (u64::from(b[0]) << 48) | (u64::from(b[1]) << 32) | (u64::from(b[2]) << 16) | u64::from(b[3])
}

const SIGN: u64 = 1 << 63;

/// The B-tree key of the block starting at bit `offset` (0 = most significant): `fp` rotated
/// left by `offset`, its sign bit flipped, as a `bigint`. Keys of one block value form one
/// contiguous range ([`Layout::probes`]); [`unkey`] gives the fingerprint back.
#[inline]
pub fn key(fp: u64, offset: u32) -> i64 {
    (fp.rotate_left(offset) ^ SIGN) as i64
}

/// The fingerprint behind [`key`]`(fp, offset)`.
#[inline]
pub fn unkey(key: i64, offset: u32) -> u64 {
    ((key as u64) ^ SIGN).rotate_right(offset)
}

/// Number of values of a `width`-bit block within Hamming radius `t` of a value:
/// Σ_{j ≤ t} C(width, j) (0 for t < 0).
pub fn ball_size(width: u32, t: i32) -> u64 {
    if t < 0 {
        return 0;
    }
    let t = (t as u32).min(width);
    let mut total = 0u64;
    let mut c = 1u64; // C(width, 0)
    for j in 0..=u64::from(t) {
        total += c;
        c = c * (u64::from(width) - j) / (j + 1);
    }
    total
}

/// Number of 16-bit values within Hamming radius `r` of a value.
pub fn neighbour_count(r: u32) -> usize {
    ball_size(BLOCK_BITS, r as i32) as usize
}

/// Every `width`-bit value within Hamming radius `t` of `v` (`v` included when t ≥ 0), in
/// ascending order. `width` ≤ 32 keeps this small enough to list (callers validate).
pub fn ball(v: u64, width: u32, t: i32) -> Vec<u64> {
    if t < 0 {
        return Vec::new();
    }
    let t = (t as u32).min(width);
    let mut out = Vec::with_capacity(ball_size(width, t as i32) as usize);
    fn go(v: u64, width: u32, start: u32, left: u32, mask: u64, out: &mut Vec<u64>) {
        out.push(v ^ mask);
        if left == 0 {
            return;
        }
        for bit in start..width {
            go(v, width, bit + 1, left - 1, mask | (1 << bit), out);
        }
    }
    go(v, width, 0, t, 0, &mut out);
    out.sort_unstable();
    out
}

/// Every 16-bit value within Hamming radius `r` of `b`, `b` included, in ascending order.
pub fn neighbours(b: u16, r: u32) -> Vec<u16> {
    ball(u64::from(b), BLOCK_BITS, r as i32).into_iter().map(|v| v as u16).collect()
}

/// Why a list of block offsets is not a layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError(pub String);

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LayoutError {}

/// Smallest and largest block width a layout may use: narrower blocks make every probe find a
/// large share of the table, wider ones make the probe set too large to list.
pub const MIN_BLOCK_BITS: u32 = 8;
pub const MAX_BLOCK_BITS: u32 = 32;

/// Probe values of one block beyond which the whole block index is read instead (wide blocks at
/// large k: 32-bit blocks at threshold 8 would be 15 million values).
pub const MAX_PROBES: u64 = 1 << 16;

/// The cut of a 64-bit fingerprint into contiguous blocks, most significant first, given by the
/// bit offset at which each block starts (the first at 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    offsets: Vec<u32>,
}

/// One probe of a block index: every key in `lo..=hi` (as `bigint`s) has block `block` equal to
/// one value within the block's threshold of the query's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub block: usize,
    pub lo: i64,
    pub hi: i64,
}

impl Layout {
    /// The layout with blocks starting at `offsets`: the first 0, strictly ascending, every
    /// block [`MIN_BLOCK_BITS`]..=[`MAX_BLOCK_BITS`] wide.
    pub fn new(mut offsets: Vec<u32>) -> Result<Layout, LayoutError> {
        offsets.sort_unstable();
        offsets.dedup();
        if offsets.first() != Some(&0) {
            return Err(LayoutError("the first block must start at bit 0".into()));
        }
        let layout = Layout { offsets };
        for i in 0..layout.len() {
            let w = layout.width(i);
            if !(MIN_BLOCK_BITS..=MAX_BLOCK_BITS).contains(&w) {
                return Err(LayoutError(format!(
                    "block {i} (bits {}..{}) is {w} bits wide, not {MIN_BLOCK_BITS} to {MAX_BLOCK_BITS}",
                    layout.offsets[i],
                    layout.offsets[i] + w
                )));
            }
        }
        Ok(layout)
    }

    /// `m` blocks of nearly equal width (the wider ones first): `even(4)` is 4 × 16 bits.
    pub fn even(m: u32) -> Result<Layout, LayoutError> {
        if m == 0 || m > 64 {
            return Err(LayoutError(format!("{m} blocks: a layout has 2 to 8 blocks")));
        }
        let (base, extra) = (64 / m, 64 % m);
        let mut offsets = Vec::with_capacity(m as usize);
        let mut at = 0;
        for i in 0..m {
            offsets.push(at);
            at += base + u32::from(i < extra);
        }
        Layout::new(offsets)
    }

    /// The default layout: four 16-bit blocks.
    pub fn default_layout() -> Layout {
        Layout::even(BLOCKS as u32).expect("4 × 16 bits is a layout")
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    pub fn offset(&self, i: usize) -> u32 {
        self.offsets[i]
    }

    pub fn width(&self, i: usize) -> u32 {
        self.offsets.get(i + 1).copied().unwrap_or(64) - self.offsets[i]
    }

    /// Block `i` of `fp`, as a `width(i)`-bit value.
    #[inline]
    pub fn value(&self, fp: u64, i: usize) -> u64 {
        fp.rotate_left(self.offsets[i]) >> (64 - self.width(i))
    }

    /// Per-block thresholds for distance `k` (general pigeonhole: Σ (tᵢ + 1) = k + 1, so every
    /// fingerprint within k has some block i within tᵢ), chosen greedily to keep the estimated
    /// cost of the probe set small for a table of `rows` rows: each probe value costs one index
    /// descent (`descent`) plus its expected candidates, rows / 2^width, at `check` each.
    /// k < 0 gives all −1 (nothing can be that close); a block whose threshold reaches its width
    /// is probed in full.
    pub fn thresholds_for(&self, k: i32, rows: f64, descent: f64, check: f64) -> Vec<i32> {
        let m = self.len();
        let mut t = vec![-1i32; m];
        if k < 0 {
            return t;
        }
        let cost = |i: usize, ti: i32| -> f64 {
            let w = self.width(i);
            ball_size(w, ti) as f64 * (descent + rows / 2f64.powi(w as i32) * check)
        };
        let mut budget = k.min(64) + 1;
        while budget > 0 {
            let best = (0..m).filter(|&i| t[i] < self.width(i) as i32).min_by(|&a, &b| {
                let da = cost(a, t[a] + 1) - cost(a, t[a]);
                let db = cost(b, t[b] + 1) - cost(b, t[b]);
                da.total_cmp(&db).then(a.cmp(&b))
            });
            let Some(i) = best else { break };
            t[i] += 1;
            budget -= 1;
            if t[i] == self.width(i) as i32 {
                break; // block i is probed in full: every row is a candidate already
            }
        }
        t
    }

    /// [`Layout::thresholds_for`] with unit costs and no table size: the fewest probe values.
    pub fn thresholds(&self, k: i32) -> Vec<i32> {
        self.thresholds_for(k, 0.0, 1.0, 0.0)
    }

    /// The key ranges that find every fingerprint within `k` of `q` in the block indexes
    /// ([`key`] of each block's offset), for thresholds `t` (from [`Layout::thresholds_for`]),
    /// block by block, ranges of adjacent values merged, ascending within a block.
    #[allow(clippy::needless_range_loop)] // i is also the block number the probes carry
    pub fn probes(&self, q: u64, t: &[i32]) -> Vec<Probe> {
        let mut out = Vec::new();
        for i in 0..self.len() {
            let w = self.width(i);
            let shift = 64 - w;
            let low_mask = if shift == 64 { u64::MAX } else { (1u64 << shift) - 1 };
            let mut run: Option<(u64, u64)> = None; // (first value, last value)
            let mut push = |(a, b): (u64, u64)| {
                let lo = (a << shift) ^ SIGN;
                let hi = ((b << shift) | low_mask) ^ SIGN;
                out.push(Probe { block: i, lo: lo as i64, hi: hi as i64 });
            };
            if t[i] >= 0 && (ball_size(w, t[i]) as f64 * 8.0 > 2f64.powi(w as i32) || ball_size(w, t[i]) > MAX_PROBES) {
                // So many values that reading the whole index is cheaper than listing them.
                push((0, (1u64 << w) - 1));
                continue;
            }
            for v in ball(self.value(q, i), w, t[i]) {
                run = match run {
                    Some((a, b)) if v == b + 1 => Some((a, v)),
                    Some(r) => {
                        push(r);
                        Some((v, v))
                    }
                    None => Some((v, v)),
                };
            }
            if let Some(r) = run {
                push(r);
            }
        }
        out
    }

    /// The first block from which a search around `a` for distance `k` with thresholds `t`
    /// finds `b`: the smallest i with block i of a and b at most tᵢ bits apart, provided
    /// `hamming(a, b) <= k`; `None` when they are farther apart. By pigeonhole it is `Some`
    /// exactly when `hamming(a, b) <= k`. Batch searches keep a pair only from this block, so
    /// each pair comes out once.
    #[inline]
    pub fn first_block(&self, a: u64, b: u64, k: u32, t: &[i32]) -> Option<usize> {
        if hamming(a, b) > k {
            return None;
        }
        (0..self.len()).find(|&i| (self.value(a, i) ^ self.value(b, i)).count_ones() as i32 <= t[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn block_order() {
        let fp = 0x0123_4567_89ab_cdefu64;
        assert_eq!(blocks(fp), [0x0123, 0x4567, 0x89ab, 0xcdef]);
        let l = Layout::default_layout();
        assert_eq!((0..4).map(|i| l.value(fp, i)).collect::<Vec<_>>(), vec![0x0123, 0x4567, 0x89ab, 0xcdef]);
    }

    #[test]
    fn ball_sizes() {
        assert_eq!(neighbour_count(0), 1);
        assert_eq!(neighbour_count(1), 17);
        assert_eq!(neighbour_count(2), 137);
        assert_eq!(neighbour_count(3), 697);
        assert_eq!(ball_size(21, 3), 1 + 21 + 210 + 1330);
        assert_eq!(ball_size(16, -1), 0);
        for r in 0..=4 {
            let n = neighbours(0xa5a5, r);
            assert_eq!(n.len(), neighbour_count(r));
            assert!(n.windows(2).all(|w| w[0] < w[1]));
            assert!(n.iter().all(|&v| (v ^ 0xa5a5).count_ones() <= r));
        }
        assert_eq!(neighbours(7, 16).len(), 65536);
    }

    #[test]
    fn layouts() {
        assert_eq!(Layout::even(4).unwrap().offsets(), &[0, 16, 32, 48]);
        assert_eq!(Layout::even(3).unwrap().offsets(), &[0, 22, 43]);
        assert_eq!(Layout::even(5).unwrap().offsets(), &[0, 13, 26, 39, 52]);
        assert!(Layout::new(vec![16, 32]).is_err());
        assert!(Layout::new(vec![0, 4, 32]).is_err());
        assert!(Layout::new(vec![0]).is_err()); // one 64-bit block
        assert!(Layout::even(9).is_err()); // 7-bit blocks
    }

    #[test]
    fn tight_thresholds() {
        let l = Layout::default_layout();
        assert_eq!(l.thresholds(10), vec![2, 2, 2, 1]);
        assert_eq!(l.thresholds(3), vec![0, 0, 0, 0]);
        assert_eq!(l.thresholds(0), vec![0, -1, -1, -1]);
        assert_eq!(l.thresholds(2), vec![0, 0, 0, -1]);
        assert_eq!(l.thresholds(-1), vec![-1, -1, -1, -1]);
        let probes = |k| l.thresholds(k).iter().enumerate().map(|(i, &t)| ball_size(l.width(i), t)).sum::<u64>();
        assert_eq!(probes(10), 428);
        assert_eq!(probes(3), 4);
        assert_eq!(probes(0), 1);
        // Large k: some block is probed in full.
        assert!(l.thresholds(64).iter().enumerate().any(|(i, &t)| t == l.width(i) as i32));
    }

    #[test]
    fn key_ranges() {
        let l = Layout::default_layout();
        let q = 0x0123_4567_89ab_cdefu64;
        let p = l.probes(q, &[0, -1, -1, -1]);
        assert_eq!(p.len(), 1);
        assert!(p[0].lo <= key(q, 0) && key(q, 0) <= p[0].hi);
        assert_eq!(unkey(key(q, 16), 16), q);
        // A whole block: one range covering every key.
        let all = l.probes(q, &[16, -1, -1, -1]);
        assert_eq!(all, vec![Probe { block: 0, lo: i64::MIN, hi: i64::MAX }]);
    }

    /// Keys preserve unsigned order, so a block value is one bigint range.
    #[test]
    fn key_order_is_unsigned_order() {
        let xs = [0u64, 1, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000, u64::MAX];
        for w in xs.windows(2) {
            assert!(key(w[0], 0) < key(w[1], 0));
        }
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

        /// The probe set is exact: at every distance up to k, for every layout size and any
        /// table-size cost model, the key of some block of b falls in one of the probe ranges
        /// around a, and every key in a probe range has its block within that block's threshold.
        #[test]
        fn probes_find_everything_within_k(
            a in any::<u64>(),
            flips in proptest::collection::vec(0u32..64, 0..18),
            extra in 0i32..3,
            m in 3u32..=8,
            rows in prop_oneof![Just(0.0), Just(1e6), Just(1e7)],
        ) {
            let mut b = a;
            for f in &flips { b ^= 1 << f; }
            let d = hamming(a, b) as i32;
            let layout = Layout::even(m).unwrap();
            for k in [d, d + extra] {
                let t = layout.thresholds_for(k, rows, 1.0, 0.02);
                let probes = layout.probes(a, &t);
                let found = probes.iter().any(|p| {
                    let kb = key(b, layout.offset(p.block));
                    p.lo <= kb && kb <= p.hi
                });
                prop_assert!(found, "k={} d={} t={:?}", k, d, t);
                prop_assert!(layout.first_block(a, b, k as u32, &t).is_some());
                // Each probe is a run of values within the block's threshold, or the whole
                // block where the ball holds more than an eighth of its values.
                for p in &probes {
                    let w = layout.width(p.block);
                    let lo = ((p.lo as u64) ^ SIGN) >> (64 - w);
                    let hi = ((p.hi as u64) ^ SIGN) >> (64 - w);
                    let near = |v: u64| (v ^ layout.value(a, p.block)).count_ones() as i32 <= t[p.block];
                    let n = ball_size(w, t[p.block]);
                    let whole = (lo, hi) == (0, (1u64 << w) - 1);
                    prop_assert!(
                        (whole && (n * 8 > 1u64 << w || n > MAX_PROBES)) || (near(lo) && near(hi)),
                        "block {} probe {}..={} t={}", p.block, lo, hi, t[p.block]
                    );
                }
            }
            // And one bit less than the distance finds no first block.
            if d > 0 {
                let t = layout.thresholds(d - 1);
                prop_assert!(layout.first_block(a, b, (d - 1) as u32, &t).is_none());
            }
        }

        #[test]
        fn keys_round_trip(fp in any::<u64>(), offset in 0u32..64) {
            prop_assert_eq!(unkey(key(fp, offset), offset), fp);
            prop_assert_eq!(hamming(unkey(key(fp, offset), offset), fp), 0);
        }
    }
}
