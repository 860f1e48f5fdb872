//! The pair join against a brute-force join, on every instruction path.

#[cfg(target_arch = "x86_64")]
use super::kernels::{cross_avx2, cross_avx512};
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
    let fps: Vec<u64> = base.iter().flat_map(|&b| (0..6).map(move |i| b ^ (1u64 << i) ^ (1u64 << (i + 7)))).collect();
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
                // SAFETY: the CPU has AVX2 (checked just above), the features the function is
                // compiled for.
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
                let got =
                    join_sides(first.clone(), Some(second.clone()), k, threads, isa, usize::MAX, &mut |_| {}).unwrap();
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
    let fps: Vec<u64> = (0..450_000u64).map(|i| (if i % 2 == 0 { 0 } else { 0xffff << 48 }) | (r() >> 16)).collect();
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
