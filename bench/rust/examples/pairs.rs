//! The in-memory pair join behind `simdup_pairs` / `simdup_groups` (`simdup_core::pairs`), alone,
//! on uniformly random fingerprints: wall-clock and CPU seconds per run, the pair count and a
//! checksum of the pairs (equal checksums: the same pairs, whatever order they come out in).
//!
//! cargo run --release -p simdup-bench --example pairs -- [--n 1000000] [--k 10,3] [--threads 1,2] [--repeats 3] [--seed 1]
//!
//! Prints one line per run, then per k and thread count the medians and the wall-clock
//! nanoseconds per candidate check (the checks the block join makes on this data, counted here
//! from the bucket sizes, not by the join).

#![allow(clippy::type_complexity, clippy::needless_range_loop)] // benchmark drivers: tuples of results, indexed histograms

use std::time::Instant;

use simdup_bench::edits::Rng;
use simdup_core::blocks::{block, neighbours, Layout, BLOCKS};
use simdup_core::pairs::near_pairs_parallel;

/// The join measured, on `threads` threads.
fn join(fps: Vec<u64>, k: u32, threads: usize) -> Vec<(u64, u64)> {
    near_pairs_parallel(fps, k, threads, &mut |_| {})
}

const DEFAULT_THREADS: &[usize] = &[1, 2];

/// A fixed, seeded set of uniformly random u64.
fn random_fingerprints(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(&[seed]);
    (0..n).map(|_| rng.next_u64()).collect()
}

/// The candidate checks of the block join at distance k: per block i with tᵢ ≥ 0, each pair of
/// distinct fingerprints in one bucket, and each pair from two buckets whose values are within tᵢ.
fn candidate_checks(fps: &[u64], k: u32) -> u64 {
    let mut distinct = fps.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let t = Layout::default_layout().thresholds(k as i32);
    let mut total = 0u64;
    for i in 0..BLOCKS {
        if t[i] < 0 {
            continue;
        }
        let mut count = vec![0u64; 65_536];
        for &fp in &distinct {
            count[block(fp, i) as usize] += 1;
        }
        let masks: Vec<usize> = neighbours(0, t[i] as u32).into_iter().filter(|&m| m != 0).map(usize::from).collect();
        for u in 0..65_536 {
            total += count[u] * count[u].saturating_sub(1) / 2;
            total += masks.iter().filter(|&&m| u ^ m > u).map(|&m| count[u] * count[u ^ m]).sum::<u64>();
        }
    }
    total
}

/// CPU seconds of this process so far, all threads.
fn cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Order-independent checksum of a set of pairs.
fn checksum(pairs: &[(u64, u64)]) -> u64 {
    pairs.iter().fold(0u64, |acc, &(a, b)| acc.wrapping_add(a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut n = 1_000_000usize;
    let mut ks = vec![10u32, 3];
    let mut threads = DEFAULT_THREADS.to_vec();
    let mut repeats = 3usize;
    let mut seed = 1u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--n" => n = value().parse().expect("--n N"),
            "--k" => ks = value().split(',').map(|k| k.parse().expect("--k K[,K...]")).collect(),
            "--threads" => threads = value().split(',').map(|t| t.parse().expect("--threads T[,T...]")).collect(),
            "--repeats" => repeats = value().parse().expect("--repeats R"),
            "--seed" => seed = value().parse().expect("--seed S"),
            _ => panic!("unknown argument {a} (--n, --k, --threads, --repeats, --seed)"),
        }
    }
    let fps = random_fingerprints(n, seed);
    for &k in &ks {
        let checks = candidate_checks(&fps, k);
        println!("n={n} k={k} candidate_checks={checks}");
        for &th in &threads {
            let (mut wall, mut cpu) = (Vec::new(), Vec::new());
            for r in 0..repeats {
                let input = fps.clone();
                let (start, cpu_start) = (Instant::now(), cpu_secs());
                let pairs = join(input, k, th);
                let (secs, cpu_used) = (start.elapsed().as_secs_f64(), cpu_secs() - cpu_start);
                println!(
                    "n={n} k={k} threads={th} run={r} secs={secs:.3} cpu_secs={cpu_used:.3} pairs={} checksum={:016x}",
                    pairs.len(),
                    checksum(&pairs)
                );
                wall.push(secs);
                cpu.push(cpu_used);
            }
            let med = median(wall);
            println!(
                "n={n} k={k} threads={th} median_secs={med:.3} median_cpu_secs={:.3} (of {repeats}) ns_per_check={:.3}",
                median(cpu),
                med * 1e9 / checks.max(1) as f64
            );
        }
    }
}
