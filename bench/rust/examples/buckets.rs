//! Skew of the block indexes on real text: how many documents share each 16-bit block value.
//!
//! cargo run --release -p simdup-bench --example buckets -- bench/data/zh_news.jsonl [more.jsonl ...]
//!
//! Prints, per block, the number of distinct values and the size of the largest buckets,
//! counted over all documents and over distinct fingerprints (identical documents collapsed,
//! as simdup_pairs and simdup_groups do), next to what uniform random fingerprints would give.

#![allow(clippy::type_complexity, clippy::needless_range_loop)] // benchmark drivers: tuples of results, indexed histograms

use std::collections::HashMap;

use simdup_core::blocks::{block, BLOCKS};
use simdup_core::simhash;

fn summary(counts: &HashMap<u16, usize>) -> String {
    let mut sizes: Vec<usize> = counts.values().copied().collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let pct = |p: f64| -> usize {
        // Bucket size at the p-th percentile of documents (weighted by bucket size).
        let total: usize = sizes.iter().sum();
        let mut acc = 0;
        for &s in sizes.iter().rev() {
            acc += s;
            if acc as f64 >= p * total as f64 {
                return s;
            }
        }
        0
    };
    format!(
        "{:>6} values | largest {:?} | a document's bucket: median {}, p99 {}",
        sizes.len(),
        &sizes[..sizes.len().min(5)],
        pct(0.5),
        pct(0.99)
    )
}

fn main() {
    let mut fps = Vec::new();
    for path in std::env::args().skip(1) {
        for line in std::fs::read_to_string(&path).expect("read corpus").lines() {
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(line).expect("json line");
            if let Some(fp) = simhash(v["body"].as_str().unwrap_or_default()) {
                fps.push(fp);
            }
        }
    }
    let mut distinct = fps.clone();
    distinct.sort_unstable();
    distinct.dedup();
    println!("{} fingerprints, {} distinct", fps.len(), distinct.len());
    println!(
        "uniform random: {:.2} documents a bucket on average, largest of 65,536 buckets ≈ {}",
        fps.len() as f64 / 65536.0,
        if fps.len() < 65536 { "2–3" } else { "~ mean + 5·sqrt(mean)" }
    );
    for i in 0..BLOCKS {
        for (name, set) in [("all", &fps), ("distinct", &distinct)] {
            let mut counts: HashMap<u16, usize> = HashMap::new();
            for &fp in set.iter() {
                *counts.entry(block(fp, i)).or_default() += 1;
            }
            println!("block {i} {name:>8}: {}", summary(&counts));
        }
    }
}
