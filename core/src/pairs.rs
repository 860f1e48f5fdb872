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
//! for t = 0, 1, 2, 3; at k = 10, t = (2, 2, 2, 1): 428 / 2¹⁷ · n², 3.3·10⁹ checks at n = 10⁶),
//! plus whatever a crowded block value adds. Identical fingerprints are collapsed first, so many
//! copies of one document cost nothing. A check is an XOR and a popcount against k: eight at a
//! time with AVX-512 (VPOPCNTQ) where the CPU has it, else four at a time with AVX2 (a table
//! lookup per half byte), else the POPCNT instruction, else portable code (the CPU is asked at
//! run time; every path gives the same pairs).
//!
//! Threads ([`near_pairs_parallel`]): the 65,536 block values of each block are cut into
//! [`CHUNKS`] ranges handed out to the threads one at a time (so a crowded range does not leave
//! the others idle); the calling thread works too, and it alone calls the `interrupt` callback,
//! so a host that may only be called from its own thread (a PostgreSQL backend) can check for
//! cancellation there. When the callback unwinds (a cancelled query), the helper threads stop
//! within [`CHECKS_PER_TICK`] checks and are joined before the unwinding goes on. The helpers
//! block every signal, so a host's signal handlers keep running on the calling thread. The pairs
//! come out in the same order whatever the number of threads.
//!
//! Memory: the distinct fingerprints twice (16 bytes each) and two 65,537-entry offset tables,
//! plus the output (16 bytes a pair); with threads, a block's pairs are held once more while
//! they are appended to the output in order.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::blocks::{block, neighbours, Layout, BLOCKS};
use crate::parallel::with_helpers;

/// Candidate checks between two calls of the progress tick: the `interrupt` callback on the
/// calling thread, a look at the stop flag on a helper thread (a few milliseconds).
pub const CHECKS_PER_TICK: u64 = 1 << 22;

/// Ranges of block values per block handed out to threads (512 values each).
pub const CHUNKS: usize = 128;
const CHUNK_VALUES: usize = 65_536 / CHUNKS;

/// Fingerprints of neighbour buckets copied together before a bucket is checked against them
/// (64 KiB a thread).
const GATHER: usize = 1 << 13;
/// Buckets of at most this many fingerprints are joined with themselves pair by pair.
const SMALL: usize = 32;
/// How many block values ahead the buckets are prefetched.
const AHEAD: usize = 2;
/// Fingerprints after the last bucket, so that PAD of them can be read from any bucket's start.
const PAD: usize = 32;

/// Pairs `(a, b)`, `a < b`, of distinct values of `fps` (duplicates are ignored) with
/// `hamming(a, b) <= k`, each exactly once, on the calling thread alone; `interrupt` is called
/// every [`CHECKS_PER_TICK`] candidate checks or so.
pub fn near_pairs(fps: Vec<u64>, k: u32, interrupt: &mut dyn FnMut()) -> Vec<(u64, u64)> {
    near_pairs_parallel(fps, k, 1, &mut |_| interrupt())
}

/// [`near_pairs`] on `threads` threads, the calling thread included (0 and 1: the calling
/// thread alone, no thread started). `interrupt` is called on the calling thread only, with the
/// number of candidate checks done so far, about every [`CHECKS_PER_TICK`] checks (and every
/// 10 ms while the calling thread waits for the others); it may unwind. The same pairs in the
/// same order whatever `threads` is.
pub fn near_pairs_parallel(fps: Vec<u64>, k: u32, threads: usize, interrupt: &mut dyn FnMut(u64)) -> Vec<(u64, u64)> {
    join(fps, k, threads, Isa::detect(), usize::MAX, interrupt).unwrap_or_default()
}

/// More pairs than the caller allowed: the join stopped early, its pairs dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyPairs {
    /// The limit that was exceeded.
    pub max_pairs: usize,
}

/// [`near_pairs_parallel`] that stops as soon as more than `max_pairs` pairs are found (all
/// threads together), so that its memory stays within about `16 * max_pairs` bytes plus one
/// range's pairs per thread, and returns [`TooManyPairs`] then.
pub fn near_pairs_limited(
    fps: Vec<u64>,
    k: u32,
    threads: usize,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    join(fps, k, threads, Isa::detect(), max_pairs, interrupt)
}

/// The pairs of [`near_pairs_limited`] that have at least one value of `batch`: the pairs within
/// k among the values of `batch` and `stored` together (each exactly once, `a < b`, a value in
/// both counted as `batch`'s), without checking the pairs of two `stored` values. For a batch
/// checked against a large stored set, the work is about |batch| · |batch ∪ stored| rather than
/// |batch ∪ stored|² / 2: a third for 200,000 against 1M, a twenty-fifth against 10M.
pub fn near_pairs_across(
    batch: Vec<u64>,
    stored: Vec<u64>,
    k: u32,
    threads: usize,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    join_sides(batch, Some(stored), k, threads, Isa::detect(), max_pairs, interrupt)
}

/// The bound on the pairs of one join, shared by its threads.
struct Limit {
    max_pairs: usize,
    /// Pairs of the ranges finished (all threads, all blocks so far).
    found: AtomicUsize,
    exceeded: AtomicBool,
}

/// The instructions a candidate check is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    /// `count_ones` as the target's baseline compiles it (no POPCNT on plain x86-64).
    Portable,
    #[cfg(target_arch = "x86_64")]
    Popcnt,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// Every path this CPU can run, the fastest last.
    fn available() -> Vec<Isa> {
        #[allow(unused_mut)]
        let mut v = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("popcnt") {
                v.push(Isa::Popcnt);
                if std::arch::is_x86_feature_detected!("avx2") {
                    v.push(Isa::Avx2);
                }
            }
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            {
                v.push(Isa::Avx512);
            }
        }
        v
    }

    fn detect() -> Isa {
        *Isa::available().last().expect("the portable path is always there")
    }
}

fn join(
    fps: Vec<u64>,
    k: u32,
    threads: usize,
    isa: Isa,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    join_sides(fps, None, k, threads, isa, max_pairs, interrupt)
}

/// The join of `fps` with itself, or (with `stored`) of `fps` with itself and with `stored`:
/// every bucket holds its `fps` values first, and a pair of two `stored` values is never checked.
fn join_sides(
    mut fps: Vec<u64>,
    stored: Option<Vec<u64>>,
    k: u32,
    threads: usize,
    isa: Isa,
    max_pairs: usize,
    interrupt: &mut dyn FnMut(u64),
) -> Result<Vec<(u64, u64)>, TooManyPairs> {
    fps.sort_unstable();
    fps.dedup();
    let across = stored.is_some();
    let mut stored = stored.unwrap_or_default();
    stored.sort_unstable();
    stored.dedup();
    // A value of both sides is the batch's (both sorted: one merge).
    let mut at = 0;
    stored.retain(|&fp| {
        while at < fps.len() && fps[at] < fp {
            at += 1;
        }
        at == fps.len() || fps[at] != fp
    });
    let n = fps.len() + stored.len();
    let mut out = Vec::new();
    if n < 2 || fps.is_empty() {
        return Ok(out);
    }
    let limit = Limit { max_pairs, found: AtomicUsize::new(0), exceeded: AtomicBool::new(false) };
    let layout = Layout::default_layout();
    let t = layout.thresholds(k.min(64) as i32);
    let mut offsets = vec![0u32; 65_537];
    let mut next = vec![0u32; 65_537];
    // (Across: where each bucket's `stored` values start.)
    let mut stored_at = vec![0u32; if across { 65_537 } else { 0 }];
    let mut sorted = vec![0u64; n + PAD];
    let mut done = 0u64; // candidate checks of the blocks finished
    for i in 0..BLOCKS {
        if t[i] < 0 {
            continue; // pairs within k always meet in an earlier block
        }
        // Counting sort by the value of block i, each bucket's `fps` values first.
        offsets.iter_mut().for_each(|o| *o = 0);
        for &fp in fps.iter().chain(&stored) {
            offsets[block(fp, i) as usize + 1] += 1;
        }
        for v in 0..65_536 {
            offsets[v + 1] += offsets[v];
        }
        next.copy_from_slice(&offsets);
        for &fp in &fps {
            let slot = &mut next[block(fp, i) as usize];
            sorted[*slot as usize] = fp;
            *slot += 1;
        }
        if across {
            stored_at.copy_from_slice(&next);
        }
        for &fp in &stored {
            let slot = &mut next[block(fp, i) as usize];
            sorted[*slot as usize] = fp;
            *slot += 1;
        }
        let stored_at = across.then_some(&stored_at[..]);
        let job = BlockJoin::new(i, k, &t, &layout, &offsets, stored_at, &sorted, isa, &limit);
        done += if threads <= 1 {
            let mut checks = 0;
            job.run(0..65_536, &mut out, &mut |c| {
                checks += c;
                interrupt(done + checks);
                true
            });
            checks
        } else {
            job.run_threads(threads, &mut out, &mut |c| interrupt(done + c))
        };
        if limit.exceeded.load(Ordering::Relaxed) {
            return Err(TooManyPairs { max_pairs });
        }
    }
    Ok(out)
}

/// The join of one block: its buckets (`sorted` cut at `offsets`), each with itself and with
/// the buckets of the values within tᵢ above its own (the pair of buckets is joined once, from
/// the smaller value).
struct BlockJoin<'a> {
    block: usize,
    k: u32,
    t: &'a [i32],
    layout: &'a Layout,
    offsets: &'a [u32],
    /// Across two sides: where bucket v's second side starts (`sorted[stored_at[v]..offsets[v +
    /// 1]]`); pairs of two second-side values are not checked.
    stored_at: Option<&'a [u32]>,
    sorted: &'a [u64],
    /// The flip masks of weight 1..=tᵢ by their highest bit: for a value u whose bit b is 0,
    /// `u ^ m` > u for every m in `masks_by_top[b]`.
    masks_by_top: [Vec<u16>; 16],
    isa: Isa,
    limit: &'a Limit,
}

impl<'a> BlockJoin<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        block: usize,
        k: u32,
        t: &'a [i32],
        layout: &'a Layout,
        offsets: &'a [u32],
        stored_at: Option<&'a [u32]>,
        sorted: &'a [u64],
        isa: Isa,
        limit: &'a Limit,
    ) -> Self {
        let mut masks_by_top: [Vec<u16>; 16] = Default::default();
        for m in neighbours(0, t[block] as u32).into_iter().filter(|&m| m != 0) {
            masks_by_top[15 - m.leading_zeros() as usize].push(m);
        }
        BlockJoin { block, k, t, layout, offsets, stored_at, sorted, masks_by_top, isa, limit }
    }

    #[inline(always)]
    fn bucket(&self, v: usize) -> &'a [u64] {
        &self.sorted[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// Joins the buckets of the values in `values`, appending the pairs found to `out`; calls
    /// `tick` with the checks done since its last call every [`CHECKS_PER_TICK`] or so checks and
    /// at the end, and returns false as soon as `tick` does (stop: `out` is then incomplete).
    fn run(&self, values: Range<usize>, out: &mut Vec<(u64, u64)>, tick: &mut dyn FnMut(u64) -> bool) -> bool {
        match self.isa {
            Isa::Portable => self.run_body::<PORTABLE>(values, out, tick),
            // SAFETY: `Isa::available` lists these only where the CPU has the features.
            #[cfg(target_arch = "x86_64")]
            Isa::Popcnt => unsafe { self.run_popcnt(values, out, tick) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { self.run_avx2(values, out, tick) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { self.run_avx512(values, out, tick) },
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn run_popcnt(&self, values: Range<usize>, out: &mut Vec<(u64, u64)>, tick: &mut dyn FnMut(u64) -> bool) -> bool {
        self.run_body::<PORTABLE>(values, out, tick)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,avx2")]
    fn run_avx2(&self, values: Range<usize>, out: &mut Vec<(u64, u64)>, tick: &mut dyn FnMut(u64) -> bool) -> bool {
        self.run_body::<AVX2>(values, out, tick)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,avx512f,avx512vpopcntdq")]
    fn run_avx512(&self, values: Range<usize>, out: &mut Vec<(u64, u64)>, tick: &mut dyn FnMut(u64) -> bool) -> bool {
        self.run_body::<AVX512>(values, out, tick)
    }

    #[inline(always)]
    fn run_body<const ISA: u8>(
        &self,
        values: Range<usize>,
        out: &mut Vec<(u64, u64)>,
        tick: &mut dyn FnMut(u64) -> bool,
    ) -> bool {
        let mut checks = 0u64;
        // The neighbour buckets of one bucket, copied end to end (at most GATHER at a time), so
        // that each fingerprint of the bucket is checked against them in one long run. A bucket
        // of up to PAD fingerprints is copied as PAD of them (`sorted` is padded at its end): a
        // fixed-size copy, without a call.
        let mut gathered = vec![0u64; GATHER + PAD];
        // Across two sides: the neighbour buckets' first-side values, gathered apart for the
        // bucket's second-side values.
        let mut gathered_first = vec![0u64; if self.stored_at.is_some() { GATHER + PAD } else { 0 }];
        for u in values {
            let own = self.bucket(u);
            if own.is_empty() {
                continue;
            }
            // Across: the bucket's first-side values against all the rest; its second-side values
            // against the neighbours' first-side ones only.
            let firsts = self.stored_at.map_or(own.len(), |at| at[u] as usize - self.offsets[u] as usize);
            if let Some(at) = self.stored_at {
                if !self.across::<ISA>(u, own, firsts, at, &mut gathered, &mut gathered_first, out, &mut checks, tick) {
                    return false;
                }
                continue;
            }
            // Within the bucket: a small one one pair at a time (no eight-lane runs to fill).
            for x in 0..firsts {
                let ok = if own.len() <= SMALL {
                    self.against::<PORTABLE>(&own[x..x + 1], &own[x + 1..], out, &mut checks, tick)
                } else {
                    self.against::<ISA>(&own[x..x + 1], &own[x + 1..], out, &mut checks, tick)
                };
                if !ok {
                    return false;
                }
            }
            let mut filled = 0;
            for (top, masks) in self.masks_by_top.iter().enumerate() {
                if u & (1 << top) != 0 {
                    continue; // u ^ m < u: that pair of buckets is joined from u ^ m
                }
                let ahead = (u + AHEAD).min(65_535);
                for &m in masks {
                    self.prefetch(ahead ^ m as usize);
                    let v = u ^ m as usize;
                    let (lo, hi) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
                    let len = hi - lo;
                    if filled + len > GATHER {
                        if !self.against::<ISA>(own, &gathered[..filled], out, &mut checks, tick) {
                            return false;
                        }
                        filled = 0;
                        if len > GATHER {
                            // A crowded value: checked in place rather than copied.
                            if !self.against::<ISA>(own, &self.sorted[lo..hi], out, &mut checks, tick) {
                                return false;
                            }
                            continue;
                        }
                    }
                    if len <= PAD {
                        gathered[filled..filled + PAD].copy_from_slice(&self.sorted[lo..lo + PAD]);
                    } else {
                        gathered[filled..filled + len].copy_from_slice(&self.sorted[lo..hi]);
                    }
                    filled += len;
                }
            }
            if !self.against::<ISA>(own, &gathered[..filled], out, &mut checks, tick) {
                return false;
            }
        }
        tick(checks)
    }

    /// [`BlockJoin::run_body`]'s work on bucket `u` (`own`, its first `firsts` values of the
    /// first side) when the join is across two sides (`stored_at`): the pairs with at least one
    /// first-side value, within the bucket and with its neighbour buckets above it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn across<const ISA: u8>(
        &self,
        u: usize,
        own: &[u64],
        firsts: usize,
        stored_at: &[u32],
        gathered: &mut [u64],
        gathered_first: &mut [u64],
        out: &mut Vec<(u64, u64)>,
        checks: &mut u64,
        tick: &mut dyn FnMut(u64) -> bool,
    ) -> bool {
        let (own_first, own_second) = own.split_at(firsts);
        for x in 0..firsts {
            let ok = if own.len() <= SMALL {
                self.against::<PORTABLE>(&own[x..x + 1], &own[x + 1..], out, checks, tick)
            } else {
                self.against::<ISA>(&own[x..x + 1], &own[x + 1..], out, checks, tick)
            };
            if !ok {
                return false;
            }
        }
        let (mut filled, mut filled_first) = (0, 0);
        for (top, masks) in self.masks_by_top.iter().enumerate() {
            if u & (1 << top) != 0 {
                continue; // joined from u ^ m
            }
            let ahead = (u + AHEAD).min(65_535);
            for &m in masks {
                self.prefetch(ahead ^ m as usize);
                let v = u ^ m as usize;
                let (lo, mid, hi) = (self.offsets[v] as usize, stored_at[v] as usize, self.offsets[v + 1] as usize);
                if filled + (hi - lo) > GATHER || filled_first + (mid - lo) > GATHER {
                    if !self.against::<ISA>(own_first, &gathered[..filled], out, checks, tick)
                        || !self.against::<ISA>(own_second, &gathered_first[..filled_first], out, checks, tick)
                    {
                        return false;
                    }
                    (filled, filled_first) = (0, 0);
                    if hi - lo > GATHER || mid - lo > GATHER {
                        // A crowded value: checked in place.
                        if !self.against::<ISA>(own_first, &self.sorted[lo..hi], out, checks, tick)
                            || !self.against::<ISA>(own_second, &self.sorted[lo..mid], out, checks, tick)
                        {
                            return false;
                        }
                        continue;
                    }
                }
                gathered[filled..filled + (hi - lo)].copy_from_slice(&self.sorted[lo..hi]);
                filled += hi - lo;
                gathered_first[filled_first..filled_first + (mid - lo)].copy_from_slice(&self.sorted[lo..mid]);
                filled_first += mid - lo;
            }
        }
        self.against::<ISA>(own_first, &gathered[..filled], out, checks, tick)
            && self.against::<ISA>(own_second, &gathered_first[..filled_first], out, checks, tick)
    }

    /// Asks the CPU to start loading the bucket of value `v` (its first 32 fingerprints) into the
    /// cache: the neighbour buckets are spread over all of `sorted`.
    #[inline(always)]
    fn prefetch(&self, v: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at = self.sorted[self.offsets[v] as usize..].as_ptr();
            for line in 0..PAD / 8 {
                // SAFETY: a prefetch loads nothing the program sees and never faults; the
                // addresses are within `sorted` and its padding.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(8 * line) as *const i8) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = v;
    }

    /// Checks every fingerprint of `own` against every one of `others`, counting the checks in
    /// `checks` and passing them to `tick` when they reach [`CHECKS_PER_TICK`]; false when `tick`
    /// says stop.
    #[inline(always)]
    fn against<const ISA: u8>(
        &self,
        own: &[u64],
        others: &[u64],
        out: &mut Vec<(u64, u64)>,
        checks: &mut u64,
        tick: &mut dyn FnMut(u64) -> bool,
    ) -> bool {
        if others.is_empty() {
            return true;
        }
        for part in own.chunks(64) {
            self.cross::<ISA>(part, others, out);
            // `out` holds this range's pairs (one thread) or all pairs so far (no threads).
            if self.limit.found.load(Ordering::Relaxed).saturating_add(out.len()) > self.limit.max_pairs {
                self.limit.exceeded.store(true, Ordering::Relaxed);
                return false;
            }
            *checks += (part.len() * (others.len() + 1)) as u64;
            if *checks >= CHECKS_PER_TICK {
                if !tick(*checks) {
                    return false;
                }
                *checks = 0;
            }
        }
        true
    }

    /// Checks every fingerprint of `own` against every one of `others` (another bucket's, or
    /// those after it in its own), keeping the pairs within k whose first block is this one.
    #[inline(always)]
    fn cross<const ISA: u8>(&self, own: &[u64], others: &[u64], out: &mut Vec<(u64, u64)>) {
        let mut hit = |a: u64, b: u64| {
            if self.layout.first_block(a, b, self.k, self.t) == Some(self.block) {
                out.push(if a < b { (a, b) } else { (b, a) });
            }
        };
        #[cfg(target_arch = "x86_64")]
        if ISA == AVX512 {
            // SAFETY: AVX512 is only instantiated in `run_avx512`, which has the features.
            return unsafe { cross_avx512(own, others, self.k, &mut hit) };
        }
        #[cfg(target_arch = "x86_64")]
        if ISA == AVX2 {
            // SAFETY: AVX2 is only instantiated in `run_avx2`, which has the features.
            return unsafe { cross_avx2(own, others, self.k, &mut hit) };
        }
        for &a in own {
            for &b in others {
                if (a ^ b).count_ones() <= self.k {
                    hit(a, b);
                }
            }
        }
    }

    /// [`BlockJoin::run`] over all values on `threads` threads (the calling one included),
    /// appending the pairs to `out` in the order of one thread; returns the checks done.
    /// `interrupt` (checks so far) is called on the calling thread only.
    fn run_threads(&self, threads: usize, out: &mut Vec<(u64, u64)>, interrupt: &mut dyn FnMut(u64)) -> u64 {
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let checks = AtomicU64::new(0);
        // Takes ranges of values until none is left or `tick` says stop: (range, pairs) each.
        let work = |tick: &mut dyn FnMut(u64) -> bool| {
            let mut parts = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let c = next.fetch_add(1, Ordering::Relaxed);
                if c >= CHUNKS {
                    break;
                }
                let mut pairs = Vec::new();
                let finished = self.run(c * CHUNK_VALUES..(c + 1) * CHUNK_VALUES, &mut pairs, tick);
                self.limit.found.fetch_add(pairs.len(), Ordering::Relaxed);
                parts.push((c, pairs));
                if !finished {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
            parts
        };
        let mut parts: Vec<_> = with_helpers(
            "simdup pairs",
            threads.min(CHUNKS).saturating_sub(1),
            &stop,
            || {
                work(&mut |c| {
                    checks.fetch_add(c, Ordering::Relaxed);
                    !stop.load(Ordering::Relaxed)
                })
            },
            interrupt,
            |i| {
                work(&mut |c| {
                    i(checks.fetch_add(c, Ordering::Relaxed) + c);
                    !stop.load(Ordering::Relaxed)
                })
            },
            |i| i(checks.load(Ordering::Relaxed)),
        )
        .into_iter()
        .flatten()
        .collect();
        // In the order of the ranges, each range's pairs freed once copied; copying millions of
        // pairs takes a while, so `interrupt` is called between ranges.
        parts.sort_unstable_by_key(|&(c, _)| c);
        out.reserve(parts.iter().map(|(_, p)| p.len()).sum());
        let checks = checks.into_inner();
        for (_, pairs) in parts {
            out.extend(pairs);
            interrupt(checks);
        }
        checks
    }
}

const PORTABLE: u8 = 0;
const AVX512: u8 = 1;
const AVX2: u8 = 2;

/// The loop both vector checks share: the fingerprints of `own` four at a time (then one at a
/// time), each broadcast with `$splat`, against `others` `$width` lanes at a time: `$load(at,
/// lanes)` reads the lanes of `others` from `at` (`lanes`: a bit per lane to read, all of them
/// but in the last run), `$near(va, vb, lanes)` gives the bit mask of the lanes within k, and
/// `hit(a, b)` is called for each.
#[cfg(target_arch = "x86_64")]
macro_rules! sweep_rows {
    ($own:expr, $others:expr, $hit:expr, $width:expr, $splat:expr, $load:expr, $near:expr) => {{
        let (own, others, hit): (&[u64], &[u64], _) = ($own, $others, $hit);
        let mut quads = own.chunks_exact(4);
        for q in &mut quads {
            sweep_rows!(@row [q[0], q[1], q[2], q[3]], others, hit, $width, $splat, $load, $near);
        }
        for &a in quads.remainder() {
            sweep_rows!(@row [a], others, hit, $width, $splat, $load, $near);
        }
    }};
    (@row $a:expr, $others:ident, $hit:ident, $width:expr, $splat:expr, $load:expr, $near:expr) => {{
        let a = $a;
        let va = a.map($splat);
        let n = $others.len();
        let mut at = 0;
        while at + $width <= n {
            sweep_rows!(@step a, va, $others, $hit, at, (1 << $width) - 1, $load, $near);
            at += $width;
        }
        if at < n {
            sweep_rows!(@step a, va, $others, $hit, at, (1 << (n - at)) - 1, $load, $near);
        }
    }};
    (@step $a:ident, $va:ident, $others:ident, $hit:ident, $at:expr, $lanes:expr, $load:expr, $near:expr) => {{
        let (at, lanes): (usize, u32) = ($at, $lanes);
        let vb = ($load)(at, lanes);
        let near = $va.map(|va| ($near)(va, vb, lanes));
        if near.iter().fold(0, |any, &m| any | m) != 0 {
            for (&a, mut m) in $a.iter().zip(near) {
                while m != 0 {
                    $hit(a, $others[at + m.trailing_zeros() as usize]);
                    m &= m - 1;
                }
            }
        }
    }};
}

/// Calls `hit(a, b)` for every `a` of `own` and `b` of `others` within `k` of each other:
/// four of `own` at a time against eight of `others`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx512f,avx512vpopcntdq")]
#[inline]
fn cross_avx512(own: &[u64], others: &[u64], k: u32, hit: &mut impl FnMut(u64, u64)) {
    use std::arch::x86_64::*;
    let vk = _mm512_set1_epi64(i64::from(k));
    sweep_rows!(
        own,
        others,
        hit,
        8,
        |a: u64| _mm512_set1_epi64(a as i64),
        // SAFETY: the lanes read are within `others` (a masked-off lane is not read).
        |at: usize, lanes: u32| unsafe { _mm512_maskz_loadu_epi64(lanes as u8, others.as_ptr().add(at) as *const i64) },
        |va: __m512i, vb: __m512i, lanes: u32| u32::from(_mm512_mask_cmple_epu64_mask(
            lanes as u8,
            _mm512_popcnt_epi64(_mm512_xor_si512(va, vb)),
            vk
        ))
    );
}

/// [`cross_avx512`] on four lanes without a vector popcount: each byte's bits counted by a
/// 16-entry table lookup of each half (VPSHUFB), the bytes summed per lane (VPSADBW).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx2")]
#[inline]
fn cross_avx2(own: &[u64], others: &[u64], k: u32, hit: &mut impl FnMut(u64, u64)) {
    use std::arch::x86_64::*;
    let bits = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
    );
    let nibble = _mm256_set1_epi8(0x0f);
    let vk = _mm256_set1_epi64x(i64::from(k));
    sweep_rows!(
        own,
        others,
        hit,
        4,
        |a: u64| _mm256_set1_epi64x(a as i64),
        |at: usize, lanes: u32| if lanes == 0b1111 {
            // SAFETY: 4 values from `at` are within `others`.
            unsafe { _mm256_loadu_si256(others.as_ptr().add(at) as *const __m256i) }
        } else {
            let bit = |j: u32| -i64::from(lanes >> j & 1);
            // SAFETY: the lanes read are within `others` (a masked-off lane is not read).
            unsafe {
                _mm256_maskload_epi64(
                    others.as_ptr().add(at) as *const i64,
                    _mm256_setr_epi64x(bit(0), bit(1), bit(2), 0),
                )
            }
        },
        |va: __m256i, vb: __m256i, lanes: u32| {
            let x = _mm256_xor_si256(va, vb);
            let lo = _mm256_shuffle_epi8(bits, _mm256_and_si256(x, nibble));
            let hi = _mm256_shuffle_epi8(bits, _mm256_and_si256(_mm256_srli_epi16::<4>(x), nibble));
            let count = _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256());
            !(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(count, vk))) as u32) & lanes
        }
    );
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

    /// A fixed stream of pseudo-random u64 (SplitMix64).
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed;
        move || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            crate::hash::mix64(s)
        }
    }

    /// The pair limit: at exactly the number of pairs the join succeeds, one fewer stops it,
    /// on one thread and on several, on every path.
    #[test]
    fn the_pair_limit_stops_the_join() {
        let mut next = stream(7);
        let base: Vec<u64> = (0..400).map(|_| next()).collect();
        // 400 clusters of 6 fingerprints within 2 bits of their base: many pairs at k = 4.
        let fps: Vec<u64> =
            base.iter().flat_map(|&b| (0..6).map(move |i| b ^ (1u64 << i) ^ (1u64 << (i + 7)))).collect();
        let all = brute(&fps, 4).len();
        assert!(all > 1000, "{all} pairs");
        for isa in Isa::available() {
            for threads in [1, 3] {
                assert_eq!(join(fps.clone(), 4, threads, isa, all, &mut |_| {}).map(|p| p.len()), Ok(all));
                assert_eq!(
                    join(fps.clone(), 4, threads, isa, all - 1, &mut |_| {}),
                    Err(TooManyPairs { max_pairs: all - 1 }),
                    "{isa:?} on {threads} threads"
                );
                assert!(join(fps.clone(), 4, threads, isa, 10, &mut |_| {}).is_err());
            }
        }
    }

    /// The pairs of every instruction path on one thread and on each of `threads`: on each path
    /// the same pairs in the same order whatever the threads, and the same pairs on every path;
    /// returned sorted.
    fn every_path(fps: &[u64], k: u32, threads: &[usize]) -> Vec<(u64, u64)> {
        let mut portable: Option<Vec<(u64, u64)>> = None; // the first path's
        for isa in Isa::available() {
            let one = join(fps.to_vec(), k, 1, isa, usize::MAX, &mut |_| {}).unwrap();
            for &t in threads {
                let got = join(fps.to_vec(), k, t, isa, usize::MAX, &mut |_| {}).unwrap();
                assert!(got == one, "{isa:?}: {} pairs on {t} threads, not as on one ({})", got.len(), one.len());
            }
            let one = sorted(one);
            match &portable {
                Some(first) => assert!(one == *first, "{isa:?}: not the portable pairs"),
                None => portable = Some(one),
            }
        }
        portable.expect("the portable path is always there")
    }

    #[test]
    fn small_cases() {
        assert!(near_pairs(vec![], 3, &mut || {}).is_empty());
        assert!(near_pairs(vec![7, 7, 7], 3, &mut || {}).is_empty());
        assert_eq!(sorted(near_pairs(vec![0, 1, 3, 7 << 40, 0], 1, &mut || {})), vec![(0, 1), (1, 3)]);
        assert_eq!(
            sorted(near_pairs(vec![0, 1, 3, 7 << 40, 0], 3, &mut || {})),
            vec![(0, 1), (0, 3), (0, 7 << 40), (1, 3)]
        );
        // Every block touched: distance 4, found at k = 4 only.
        let b = (1u64 << 63) | (1 << 47) | (1 << 31) | (1 << 15);
        assert!(near_pairs(vec![0, b], 3, &mut || {}).is_empty());
        assert_eq!(near_pairs(vec![0, b], 4, &mut || {}), vec![(0, b)]);
        for threads in [0, 1, 2, 8] {
            assert!(near_pairs_parallel(vec![5], 3, threads, &mut |_| {}).is_empty());
            assert_eq!(near_pairs_parallel(vec![0, b, 0], 4, threads, &mut |_| {}), vec![(0, b)]);
        }
    }

    proptest! {
        /// Same pairs as brute force, each once, on clusters of fingerprints a few bits apart
        /// (and crowded block values: the centres share their low blocks), on every instruction
        /// path of this CPU and on 1 to 3 threads.
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
            prop_assert_eq!(&got, &brute(&fps, k));
            prop_assert_eq!(every_path(&fps, k, &[2]), got);
        }

        /// The AVX-512 and AVX2 checks against the portable one on every length of both sides
        /// (the four-at-a-time rows, the eight- or four-lane runs and their tails). Some of
        /// `own` have few bits set, so that a lane read past the end (zero) would be near.
        #[test]
        fn checks_agree(
            own in proptest::collection::vec(prop_oneof![any::<u64>(), (0u32..64).prop_map(|b| 1u64 << b), Just(0u64)], 0..11),
            others in proptest::collection::vec((0usize..11, proptest::collection::vec(0u32..64, 0..12), any::<u64>(), any::<bool>()), 0..40),
            k in 0u32..=12,
        ) {
            // Each of `others` is near one of `own` (some bits flipped) or random.
            let others: Vec<u64> = others
                .iter()
                .map(|(c, bits, r, random)| match own.get(c % own.len().max(1)) {
                    Some(&a) if !random => bits.iter().fold(a, |fp, b| fp ^ (1 << b)),
                    _ => *r,
                })
                .collect();
            let mut want = Vec::new();
            for &a in &own {
                for &b in &others {
                    if hamming(a, b) <= k {
                        want.push((a, b));
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            {
                let want = sorted(want);
                if Isa::available().contains(&Isa::Avx512) {
                    let mut got = Vec::new();
                    // SAFETY: the CPU has the features (checked just above).
                    unsafe { cross_avx512(&own, &others, k, &mut |a, b| got.push((a, b))) };
                    prop_assert_eq!(sorted(got), want.clone());
                }
                if Isa::available().contains(&Isa::Avx2) {
                    let mut got = Vec::new();
                    // SAFETY: as above.
                    unsafe { cross_avx2(&own, &others, k, &mut |a, b| got.push((a, b))) };
                    prop_assert_eq!(sorted(got), want);
                }
            }
        }
    }

    /// Crowded block values: neighbour buckets that more than fill one gathered run (value 0 of
    /// block 0 against 1, 2, 4 and 8) and one bucket larger than a whole run (value 3, joined
    /// with itself and, at k = 10, from value 0), on every path.
    /// The join across two sides: exactly the brute force's pairs of the union with a value of
    /// the first side, on every path and thread count, crowded block values included.
    #[test]
    fn across_two_sides_matches_brute_force() {
        let mut next = stream(11);
        let base: Vec<u64> = (0..60).map(|_| next()).collect();
        let mut first = Vec::new();
        let mut second = Vec::new();
        for (j, &b) in base.iter().enumerate() {
            for d in 0..12u32 {
                let v = (0..d).fold(b, |v, i| v ^ (1u64 << (((next() % 64) as u32 + i) % 64)));
                if (j + d as usize).is_multiple_of(3) {
                    first.push(v)
                } else {
                    second.push(v)
                }
            }
        }
        // Crowded: more second-side values sharing their last block (0x0003) than a gathered run
        // holds, and first-side values at distance 10 from some of them whose first block within
        // the thresholds is the last one (3 bits off in each other block, 0x0001 there): that
        // neighbour bucket is checked in place.
        let crowded: Vec<u64> = (0..9000).map(|_| (next() & !0xffff) | 3).collect();
        first.extend(crowded.iter().step_by(300).map(|&x| x ^ (0b111 << 48 | 0b111 << 32 | 0b111 << 16 | 0b10)));
        second.extend_from_slice(&crowded);
        first.extend_from_slice(&second[..10]); // values on both sides
        for k in [0, 3, 6, 10, 16] {
            let mut all = first.clone();
            all.extend_from_slice(&second);
            let mut firsts = first.clone();
            firsts.sort_unstable();
            let want: Vec<(u64, u64)> = brute(&all, k)
                .into_iter()
                .filter(|&(a, b)| firsts.binary_search(&a).is_ok() || firsts.binary_search(&b).is_ok())
                .collect();
            for isa in Isa::available() {
                for threads in [1, 2, 3] {
                    let got = join_sides(first.clone(), Some(second.clone()), k, threads, isa, usize::MAX, &mut |_| {})
                        .unwrap();
                    assert_eq!(sorted(got), sorted(want.clone()), "k = {k}, {isa:?}, {threads} threads");
                }
            }
        }
    }

    #[test]
    fn crowded_values() {
        let mut r = stream(7);
        let centres: Vec<u64> = (0..600).map(|_| r() & 0xffff_ffff_ffff).collect();
        // Per 25: 12 in value 3, 3 in each of 1, 2, 4 and 8, 1 in value 0.
        let tops: Vec<u64> = [3u64; 12].into_iter().chain([1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 0]).collect();
        let fps: Vec<u64> = (0..18_000usize)
            .map(|i| {
                let mut low = centres[i % centres.len()];
                for _ in 0..r() % 5 {
                    low ^= 1 << (r() % 48);
                }
                (tops[i % tops.len()] << 48) | low
            })
            .collect();
        assert!(fps.iter().filter(|&&fp| fp >> 48 == 3).count() > GATHER);
        assert!(fps.iter().filter(|&&fp| [1, 2, 4, 8].contains(&(fp >> 48))).count() > GATHER);
        for k in [3, 10] {
            let want = brute(&fps, k);
            assert!(want.len() > 10_000, "{}", want.len());
            assert_eq!(every_path(&fps, k, &[2, 3]), want, "k = {k}");
        }
    }

    /// Random fingerprints: the pairs within 10 among 100,000 (some fifty), the same on every
    /// path (in the same order on 1 to 3 threads) and each within k.
    #[test]
    fn random_fingerprints_on_every_path() {
        let mut r = stream(1);
        let fps: Vec<u64> = (0..100_000).map(|_| r()).collect();
        let pairs = every_path(&fps, 10, &[2, 3]);
        assert!(!pairs.is_empty());
        assert!(pairs.iter().all(|&(a, b)| a < b && hamming(a, b) <= 10));
        let mut dedup = pairs.clone();
        dedup.dedup();
        assert_eq!(dedup.len(), pairs.len());
    }

    #[test]
    fn interrupts_are_called_on_crowded_buckets() {
        // 5,000 fingerprints sharing block 0 (top 16 bits zero): 12.5 million checks.
        let fps: Vec<u64> = (1..=5_000u64).map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16).collect();
        let mut calls = 0;
        let pairs = near_pairs(fps.clone(), 3, &mut || calls += 1);
        assert!(calls >= 2, "{calls}");
        assert_eq!(sorted(pairs), brute(&fps, 3));
        // With threads: on the calling thread only, with a count of checks that only grows.
        let me = std::thread::current().id();
        let mut seen = Vec::new();
        let threaded = near_pairs_parallel(fps.clone(), 3, 2, &mut |checks| {
            assert_eq!(std::thread::current().id(), me);
            seen.push(checks);
        });
        assert!(seen.len() >= 2 && seen.windows(2).all(|w| w[0] <= w[1]) && *seen.last().unwrap() > 0, "{seen:?}");
        assert_eq!(sorted(threaded), brute(&fps, 3));
    }

    /// A callback that unwinds (a cancelled query) stops every thread promptly: the panic comes
    /// out of `near_pairs_parallel` long before the join could have finished, with every helper
    /// joined (the scope returns only then).
    #[test]
    fn an_unwinding_interrupt_stops_every_thread() {
        // 450,000 fingerprints in two crowded values of block 0, in the first and the last range
        // of values handed out: two self-joins of 2.5·10¹⁰ checks each, seconds of work for each
        // thread even on the AVX-512 path (a helper that ignored the stop flag took 2.5 s to stop
        // with 300,000).
        let mut r = stream(3);
        let fps: Vec<u64> =
            (0..450_000u64).map(|i| (if i % 2 == 0 { 0 } else { 0xffff << 48 }) | (r() >> 16)).collect();
        for threads in [1, 2, 3] {
            let mut cancelled_at = None;
            let me = std::thread::current().id();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut calls = 0;
                near_pairs_parallel(fps.clone(), 10, threads, &mut |_| {
                    assert_eq!(std::thread::current().id(), me);
                    calls += 1;
                    if calls == 3 {
                        cancelled_at = Some(std::time::Instant::now());
                        std::panic::panic_any("cancelled");
                    }
                })
            }));
            let payload = result.expect_err("the interrupt unwinds");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"cancelled"), "threads = {threads}");
            // From the unwinding callback to every thread stopped and joined.
            let stopping = cancelled_at.expect("cancelled").elapsed();
            assert!(stopping.as_secs_f64() < 1.0, "threads = {threads}: {stopping:?}");
        }
    }
}
