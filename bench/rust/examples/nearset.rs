//! The in-memory set of the dedup trigger's bulk check (`simdup_core::nearset`), alone: build
//! it from N random fingerprints, then time queries at k, with and without inserting the
//! queries that find nothing (as a bulk load does), against the layouts it chooses among.
//!
//!   cargo run --release --example nearset [N [Q [K]]]     # defaults 1000000 200000 10
use std::time::Instant;

use simdup_core::blocks::Layout;
use simdup_core::nearset::NearSet;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let n = args.first().copied().unwrap_or(1_000_000);
    let q = args.get(1).copied().unwrap_or(200_000);
    let k = args.get(2).copied().unwrap_or(10) as u32;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let stored: Vec<u64> = (0..n).map(|_| next()).collect();
    let queries: Vec<u64> = (0..q).map(|_| next()).collect();
    println!("N = {n}, {q} queries, k = {k}");
    for m in 4..=8u32 {
        let s = NearSet::with_layout(Layout::even(m).expect("a layout"), k, &stored);
        let t = Instant::now();
        let hits = queries.iter().filter(|&&fp| s.any_within(fp)).count();
        println!("  {m} blocks: {:.1} us a query ({hits} found)", t.elapsed().as_secs_f64() / q as f64 * 1e6);
    }
    let t = Instant::now();
    let mut s = NearSet::new(k, &stored);
    let built = t.elapsed();
    let t = Instant::now();
    let hits = queries.iter().filter(|&&fp| s.any_within(fp)).count();
    let query = t.elapsed();
    let t = Instant::now();
    for &fp in &queries {
        if !s.any_within(fp) {
            s.insert(fp);
        }
    }
    let load = t.elapsed();
    println!(
        "  chosen layout: built in {:.0} ms; {:.1} us a query ({hits} found); {:.1} us a query with the misses inserted",
        built.as_secs_f64() * 1e3,
        query.as_secs_f64() / q as f64 * 1e6,
        load.as_secs_f64() / q as f64 * 1e6
    );
}
