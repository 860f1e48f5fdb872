//! The join of one block's buckets: each bucket with itself and with the buckets of the values
//! within the block's threshold, on the instructions the CPU has.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

#[cfg(target_arch = "x86_64")]
use super::kernels::{cross_avx2, cross_avx512};
use super::kernels::{Isa, AVX2, AVX512, PORTABLE};
use super::{Limit, AHEAD, CHECKS_PER_TICK, CHUNKS, CHUNK_VALUES, GATHER, PAD, SMALL};
use crate::blocks::{neighbours, Layout};
use crate::parallel::with_helpers;

/// The join of one block: its buckets (`sorted` cut at `offsets`), each with itself and with
/// the buckets of the values within tᵢ above its own (the pair of buckets is joined once, from
/// the smaller value).
pub(super) struct BlockJoin<'a> {
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
    pub(super) fn new(
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
    pub(super) fn run(
        &self,
        values: Range<usize>,
        out: &mut Vec<(u64, u64)>,
        tick: &mut dyn FnMut(u64) -> bool,
    ) -> bool {
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
    pub(super) fn run_threads(&self, threads: usize, out: &mut Vec<(u64, u64)>, interrupt: &mut dyn FnMut(u64)) -> u64 {
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
