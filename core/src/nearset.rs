//! A set of fingerprints in memory that finds its members within distance k of a query: the
//! probes of the block indexes ([`Layout::probes`]), answered from bucketed arrays instead of
//! B-trees.
//!
//! Block i of every member is bucketed by its top `min(width, 16)` bits. A query reads, for
//! each probe (a run of block values within the block's threshold of the query's), the buckets
//! the run covers, and checks each member there with one XOR and popcount. By the pigeonhole
//! argument of [`crate::blocks`] every member within k is in some probed bucket, so the answer
//! is exact; [`Layout::first_block`] reports each member once. The dedup trigger's bulk check
//! loads a table's stored fingerprints into one and asks it, row by row, whether anything is
//! within k (src/dedup/bulk.rs): a few hundred bucket reads and a few thousand popcounts
//! instead of as many B-tree descents.
//!
//! Members are built in one pass (a counting sort per block: contiguous buckets) and may be
//! added afterwards: kept apart per bucket, then moved into the contiguous buckets by a rebuild
//! once they are a quarter of the set. The set always tells the members it was built with from
//! those added (the dedup trigger trusts only the first: rows stored before its statement).

use crate::blocks::{hamming, Layout};

/// Bucket bits of a block at most: 2¹⁶ buckets a block (a 256 KB offset array), whatever the
/// block's width.
pub const MAX_BUCKET_BITS: u32 = 16;

/// Bytes a member costs: its fingerprint once in every block's bucket array (twice while a
/// rebuild copies it).
pub const fn bytes_per_member(blocks: usize) -> usize {
    blocks * std::mem::size_of::<u64>()
}

/// Bytes a set of `n` members may take at most: every block's bucket array, twice (a rebuild
/// builds the new arrays before the old ones go), and per bucket its start and built end (8
/// bytes), counted with 24 bytes to spare.
pub fn max_bytes(n: usize) -> usize {
    2 * bytes_per_member(MAX_BLOCKS) * n + MAX_BLOCKS * (1 << MAX_BUCKET_BITS) * (8 + std::mem::size_of::<Vec<u64>>())
}

/// Costs with which the layout and the per-block thresholds are chosen, in ns: reading a probe
/// value's bucket (a random memory access) and checking one member in it (the scan streams
/// them from memory). Fitted to `bench/rust/examples/nearset.rs` at 1M members, k = 10, on the
/// development machine (4, 5 and 6 blocks: 40.6, 36.4 and 48.0 µs a query).
const BUCKET_COST: f64 = 74.0;
const CHECK_COST: f64 = 1.4;

/// Blocks a set is cut into at most (each at least 8 bits wide).
pub const MAX_BLOCKS: usize = 8;

/// The model's cost of one query at distance `k` in a set of `rows` members cut by `layout`.
fn probe_cost(layout: &Layout, k: u32, rows: f64) -> f64 {
    let t = layout.thresholds_for(k.min(64) as i32, rows, BUCKET_COST, CHECK_COST);
    (0..layout.len())
        .map(|i| {
            let bits = layout.width(i).min(MAX_BUCKET_BITS);
            crate::blocks::ball_size(layout.width(i), t[i]) as f64
                * (BUCKET_COST + rows / 2f64.powi(bits as i32) * CHECK_COST)
        })
        .sum()
}

struct Block {
    /// Rotation that brings the block to the top bits, and the bucket of a rotated value.
    offset: u32,
    shift: u32,
    /// Bucket b holds `fps[starts[b]..starts[b + 1]]`: first the members the set was built
    /// with (up to `built_end[b]`), then those added before the last rebuild.
    starts: Vec<u32>,
    built_end: Vec<u32>,
    fps: Vec<u64>,
}

impl Block {
    #[inline]
    fn bucket(&self, fp: u64) -> usize {
        (fp.rotate_left(self.offset) >> self.shift) as usize
    }

    /// Block `offset`..`offset + width` of `built` and `added` members, each bucket's built
    /// members first.
    fn build(offset: u32, width: u32, built: &[u64], added: &[u64]) -> Block {
        let bits = width.min(MAX_BUCKET_BITS);
        let buckets = 1usize << bits;
        let mut block = Block {
            offset,
            shift: 64 - bits,
            starts: vec![0u32; buckets + 1],
            built_end: vec![0u32; buckets],
            fps: vec![0u64; built.len() + added.len()],
        };
        for &fp in built.iter().chain(added) {
            let b = block.bucket(fp);
            block.starts[b + 1] += 1;
        }
        for b in 1..=buckets {
            block.starts[b] += block.starts[b - 1];
        }
        let mut next = block.starts.clone();
        for (list, is_built) in [(built, true), (added, false)] {
            for &fp in list {
                let b = block.bucket(fp);
                block.fps[next[b] as usize] = fp;
                next[b] += 1;
            }
            if is_built {
                block.built_end.copy_from_slice(&next[..buckets]);
            }
        }
        block
    }
}

/// The set. Its thresholds are chosen for its size when it is (re)built.
pub struct NearSet {
    layout: Layout,
    k: u32,
    t: Vec<i32>,
    blocks: Vec<Block>,
    /// Members built with, and added before the last rebuild.
    built: usize,
    added: usize,
    /// Members added since the last rebuild, read in full by every query.
    recent: Vec<u64>,
}

impl NearSet {
    /// The set of `fps` (duplicates kept), searched at distance `k`, cut into the even layout
    /// of 4 to 8 blocks whose probes cost least for its size (the model of [`BUCKET_COST`] and
    /// [`CHECK_COST`]; at 1M members, 5 blocks at k = 10).
    pub fn new(k: u32, fps: &[u64]) -> NearSet {
        let rows = fps.len() as f64;
        let layout = (4..=MAX_BLOCKS as u32)
            .map(|m| Layout::even(m).expect("4 to 8 even blocks are layouts"))
            .min_by(|a, b| probe_cost(a, k, rows).total_cmp(&probe_cost(b, k, rows)))
            .expect("five candidates");
        NearSet::with_layout(layout, k, fps)
    }

    /// The set of `fps` cut into the blocks of `layout`.
    pub fn with_layout(layout: Layout, k: u32, fps: &[u64]) -> NearSet {
        let mut set =
            NearSet { layout, k: k.min(64), t: Vec::new(), blocks: Vec::new(), built: 0, added: 0, recent: Vec::new() };
        set.build(fps, &[]);
        set
    }

    fn build(&mut self, built: &[u64], added: &[u64]) {
        let n = (built.len() + added.len()) as f64;
        self.t = self.layout.thresholds_for(self.k as i32, n, BUCKET_COST, CHECK_COST);
        self.blocks = (0..self.layout.len())
            .map(|i| Block::build(self.layout.offset(i), self.layout.width(i), built, added))
            .collect();
        (self.built, self.added) = (built.len(), added.len());
        self.recent.clear();
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.built + self.added + self.recent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a member. Members added are kept apart (`within` tells them from the members the
    /// set was built with): first in a list every query reads in full, then, by a rebuild, in
    /// the buckets. The list is rebuilt into the buckets at √(2 · 200 · n) members, which
    /// balances reading it (≈ 0.5 ns a member a query) against rebuilding (≈ 100 ns a member
    /// of the set): about 10 µs an insert at 1M members.
    pub fn insert(&mut self, fp: u64) {
        self.recent.push(fp);
        if self.recent.len() as f64 >= (400.0 * self.len() as f64).sqrt().max(1024.0) {
            self.rebuild();
        }
    }

    fn rebuild(&mut self) {
        let block = &self.blocks[0];
        let (mut built, mut added) =
            (Vec::with_capacity(self.built), Vec::with_capacity(self.added + self.recent.len()));
        for b in 0..block.built_end.len() {
            let (s, m, e) = (block.starts[b] as usize, block.built_end[b] as usize, block.starts[b + 1] as usize);
            built.extend_from_slice(&block.fps[s..m]);
            added.extend_from_slice(&block.fps[m..e]);
        }
        added.extend_from_slice(&self.recent);
        self.build(&built, &added);
    }

    /// Calls `found(fp, built)` once for every member within k of `q` (a member present twice,
    /// twice), `built` telling whether it was a member when the set was built (or was added
    /// since), and stops early when it returns false. Returns whether it was not stopped.
    pub fn within(&self, q: u64, mut found: impl FnMut(u64, bool) -> bool) -> bool {
        // First every probe's buckets, the first cache line of each prefetched (a probe's
        // buckets are a random access each: hundreds of them at k = 10, which then overlap),
        // then the scan, which prefetches the whole of the buckets LOOKAHEAD reads ahead (a
        // bucket is ~16 lines at 1M members: the hardware's stream prefetcher alone ramps up too
        // late in each).
        let members_of = |&(i, lo, hi): &(usize, usize, usize)| {
            let block = &self.blocks[i];
            &block.fps[block.starts[lo] as usize..block.starts[hi + 1] as usize]
        };
        // The next bucket of each block not yet read: a block's probes ascend, and runs of
        // values in one bucket (blocks wider than the buckets) read it once.
        let mut next = [0usize; MAX_BLOCKS];
        let mut reads: Vec<(usize, usize, usize)> = Vec::new(); // (block, first bucket, last bucket)
        for p in self.layout.probes(q, &self.t) {
            let i = p.block;
            let block = &self.blocks[i];
            // The probe's key range, back in rotated values, then in buckets.
            let lo = (((p.lo as u64) ^ (1 << 63)) >> block.shift) as usize;
            let hi = (((p.hi as u64) ^ (1 << 63)) >> block.shift) as usize;
            let lo = lo.max(next[i]);
            if lo > hi {
                continue;
            }
            next[i] = hi + 1;
            reads.push((i, lo, hi));
            prefetch(members_of(&(i, lo, hi)).as_ptr());
        }
        for r in reads.iter().take(LOOKAHEAD) {
            prefetch_all(members_of(r));
        }
        for (n, r) in reads.iter().enumerate() {
            if let Some(ahead) = reads.get(n + LOOKAHEAD) {
                prefetch_all(members_of(ahead));
            }
            let (i, block) = (r.0, &self.blocks[r.0]);
            let first = block.starts[r.1] as usize;
            let members = members_of(r);
            let mut at = 0;
            while let Some(j) = first_within(&members[at..], q, self.k) {
                let fp = members[at + j];
                let was_built = first + at + j < block.built_end[block.bucket(fp)] as usize;
                if self.layout.first_block(q, fp, self.k, &self.t) == Some(i) && !found(fp, was_built) {
                    return false;
                }
                at += j + 1;
            }
        }
        let mut rest = self.recent.as_slice();
        while let Some(j) = first_within(rest, q, self.k) {
            if !found(rest[j], false) {
                return false;
            }
            rest = &rest[j + 1..];
        }
        true
    }

    /// Whether some member is within k of `q`.
    pub fn any_within(&self, q: u64) -> bool {
        !self.within(q, |_, _| false)
    }
}

/// Reads ahead of the scan whose buckets it prefetches whole. Measured at 1M members, k = 10,
/// the settings interleaved in one process (docs/performance.md, "Whole buckets prefetched"):
/// 44.7–46.7 µs a query with first lines only, 32.0–34.3 µs with three reads ahead; one or two
/// ahead a little slower, four to six no faster.
const LOOKAHEAD: usize = 3;

/// Asks the CPU to bring in every cache line of `xs`.
#[inline(always)]
fn prefetch_all(xs: &[u64]) {
    for c in xs.chunks(8) {
        prefetch(c.as_ptr());
    }
}

/// Asks the CPU to bring the cache line at `p` in (a hint: no effect on what the program does).
#[inline(always)]
fn prefetch(p: *const u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address (SSE is in x86-64's baseline).
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The position of the first of `xs` within `k` of `q`: the scan every probe's bucket gets,
/// with the CPU's popcount instruction where it has one (x86-64's baseline lacks it), eight at
/// a time with AVX2.
#[inline]
fn first_within(xs: &[u64], q: u64, k: u32) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has the instructions the function is compiled for.
            return unsafe { first_within_avx2(xs, q, k) };
        }
        // SAFETY: the CPU has popcnt (checked just above), the one feature this function is
        // compiled for.
        return unsafe { first_within_popcnt(xs, q, k) };
    }
    first_within_plain(xs, q, k)
}

#[inline(always)]
fn first_within_plain(xs: &[u64], q: u64, k: u32) -> Option<usize> {
    // Eight at a time without a branch, then the one.
    let mut chunks = xs.chunks_exact(8);
    let mut at = 0;
    for c in &mut chunks {
        if c.iter().fold(false, |any, &x| any | (hamming(q, x) <= k)) {
            return c.iter().position(|&x| hamming(q, x) <= k).map(|j| at + j);
        }
        at += 8;
    }
    chunks.remainder().iter().position(|&x| hamming(q, x) <= k).map(|j| at + j)
}

/// Eight at a time: XOR with the query, popcount by nibble lookup (`vpshufb`), sums per lane
/// (`vpsadbw`), compare with k; the scalar path finds which one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx2")]
fn first_within_avx2(xs: &[u64], q: u64, k: u32) -> Option<usize> {
    use std::arch::x86_64::*;
    let nibbles = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
    );
    let low = _mm256_set1_epi8(0x0f);
    let query = _mm256_set1_epi64x(q as i64);
    let limit = _mm256_set1_epi64x(i64::from(k) + 1);
    let count = |v: __m256i| {
        let x = _mm256_xor_si256(v, query);
        let lo = _mm256_shuffle_epi8(nibbles, _mm256_and_si256(x, low));
        let hi = _mm256_shuffle_epi8(nibbles, _mm256_and_si256(_mm256_srli_epi16::<4>(x), low));
        _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256())
    };
    let mut chunks = xs.chunks_exact(8);
    let mut at = 0;
    for c in &mut chunks {
        // SAFETY: two unaligned 32-byte loads within the chunk of eight u64.
        let (a, b) = unsafe { (_mm256_loadu_si256(c.as_ptr().cast()), _mm256_loadu_si256(c.as_ptr().add(4).cast())) };
        let near = _mm256_or_si256(_mm256_cmpgt_epi64(limit, count(a)), _mm256_cmpgt_epi64(limit, count(b)));
        if _mm256_testz_si256(near, near) == 0 {
            return c.iter().position(|&x| hamming(q, x) <= k).map(|j| at + j);
        }
        at += 8;
    }
    chunks.remainder().iter().position(|&x| hamming(q, x) <= k).map(|j| at + j)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn first_within_popcnt(xs: &[u64], q: u64, k: u32) -> Option<usize> {
    first_within_plain(xs, q, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(set: &[u64], q: u64, k: u32) -> Vec<u64> {
        let mut v: Vec<u64> = set.iter().copied().filter(|&fp| hamming(q, fp) <= k).collect();
        v.sort_unstable();
        v
    }

    fn found(s: &NearSet, q: u64) -> Vec<u64> {
        let (mut built, added) = found_split(s, q);
        built.extend(added);
        built.sort_unstable();
        built
    }

    /// The members within k of `q` that the set was built with, and those added since.
    fn found_split(s: &NearSet, q: u64) -> (Vec<u64>, Vec<u64>) {
        let (mut built, mut added) = (Vec::new(), Vec::new());
        s.within(q, |fp, b| {
            if b { &mut built } else { &mut added }.push(fp);
            true
        });
        built.sort_unstable();
        added.sort_unstable();
        (built, added)
    }

    /// Members near the queries: each a query with a few bits flipped.
    fn near(base: &[u64], flips: &[(usize, u64)]) -> Vec<u64> {
        flips.iter().map(|&(i, mask)| base[i % base.len()] ^ mask).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn finds_exactly_the_members_within_k(
            queries in prop::collection::vec(any::<u64>(), 1..8),
            masks in prop::collection::vec((any::<usize>(), any::<u64>(), any::<u64>(), any::<u64>()), 0..300),
            random in prop::collection::vec(any::<u64>(), 0..300),
            k in 0u32..=16,
            blocks in 3u32..=6,
            split in 0usize..600,
        ) {
            // Sparse masks (AND of three random words: ~8 bits) put members within reach.
            let flips: Vec<(usize, u64)> = masks.iter().map(|&(i, a, b, c)| (i, a & b & c)).collect();
            let mut members = near(&queries, &flips);
            members.extend(random);
            let layout = Layout::even(blocks).unwrap();
            let split = split.min(members.len());
            let mut s = NearSet::with_layout(layout, k, &members[..split]);
            for &fp in &members[split..] {
                s.insert(fp);
            }
            prop_assert_eq!(s.len(), members.len());
            for &q in &queries {
                prop_assert_eq!(found(&s, q), brute(&members, q, k));
                prop_assert_eq!(s.any_within(q), !brute(&members, q, k).is_empty());
                prop_assert_eq!(found_split(&s, q), (brute(&members[..split], q, k), brute(&members[split..], q, k)));
            }
        }
    }

    #[test]
    fn rebuilds_keep_added_members_apart() {
        // 500 built, then 6,000 added (moved into the buckets by rebuilds at 1,024 of them),
        // near the queries as often as not.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let queries: Vec<u64> = (0..20).map(|_| next()).collect();
        let mut members: Vec<u64> =
            (0..6500).map(|i| if i % 2 == 0 { queries[i % 20] ^ (next() & next() & next()) } else { next() }).collect();
        members[700] = members[3]; // a built member added again
        let k = 10;
        let mut s = NearSet::new(k, &members[..500]);
        for (n, &fp) in members[500..].iter().enumerate() {
            s.insert(fp);
            if n % 997 == 0 || n == members.len() - 501 {
                let all = &members[..501 + n];
                for &q in &queries {
                    assert_eq!(found(&s, q), brute(all, q, k));
                    assert_eq!(found_split(&s, q), (brute(&all[..500], q, k), brute(&all[500..], q, k)));
                }
            }
        }
        assert_eq!(s.len(), members.len());
    }

    #[test]
    fn uneven_layout_and_wide_blocks() {
        // 20 + 22 + 22 bits: buckets hold several block values.
        let layout = Layout::new(vec![0, 20, 42]).unwrap();
        let q = 0x0123_4567_89ab_cdefu64;
        let members: Vec<u64> = (0..64).map(|b| q ^ (1u64 << b) ^ (1u64 << ((b * 7 + 3) % 64))).collect();
        for k in [0, 1, 2, 5, 10] {
            let s = NearSet::with_layout(layout.clone(), k, &members);
            assert_eq!(found(&s, q), brute(&members, q, k), "k = {k}");
        }
    }

    #[test]
    fn empty_and_early_stop() {
        let s = NearSet::new(10, &[]);
        assert!(s.is_empty());
        assert!(!s.any_within(42));
        let s = NearSet::new(3, &[7, 7, 7 ^ 1]);
        let mut seen = 0;
        assert!(!s.within(7, |_, _| {
            seen += 1;
            seen < 2
        }));
        assert_eq!(seen, 2);
        assert_eq!(found(&s, 7), vec![6, 7, 7]);
    }
}
