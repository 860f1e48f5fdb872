//! Every pair of a corpus that only the containment rule makes near-duplicates: character
//! 5-shingle Jaccard below the threshold, containment (the share of the smaller text's shingles
//! found in the other) at or above C. For each: both texts' shingle counts, Jaccard,
//! containment, the share of the larger text the smaller covers, and both texts' beginnings.
//!
//! ```text
//! containment_cases --corpus PATH [--corpus PATH ...] [--threshold T] [--containment C]
//! ```
//!
//! Exhaustive (an inverted index of shingles, every overlap counted), so it is the superset of
//! what the similarity dedup trigger can meet through its indexes. Output: TSV on stdout.
use std::collections::HashMap;

use simdup_bench::edits::load_with_ids;
use simdup_core::no_interrupt;
use simdup_core::similarity::minhash::{intersection_size, shingles};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned());
    let t: f64 = value("--threshold").map_or(0.5, |v| v.parse().expect("--threshold"));
    let c: f64 = value("--containment").map_or(0.8, |v| v.parse().expect("--containment"));
    let paths: Vec<String> = args.windows(2).filter(|w| w[0] == "--corpus").map(|w| w[1].clone()).collect();
    let mut docs = Vec::new();
    for p in &paths {
        docs.extend(load_with_ids(p));
    }
    let sets: Vec<Vec<u64>> = docs.iter().map(|(_, _, b)| shingles(b, 5, &mut no_interrupt).unwrap()).collect();
    let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
    for (i, s) in sets.iter().enumerate() {
        for &h in s {
            postings.entry(h).or_default().push(i as u32);
        }
    }
    let head = |s: &str| s.chars().take(40).collect::<String>().replace(['\n', '\t'], " ");
    println!("a\tb\tshingles_a\tshingles_b\tjaccard\tcontainment\tcover\ttext_a\ttext_b");
    for (a, sa) in sets.iter().enumerate() {
        if sa.is_empty() {
            continue;
        }
        // a is the smaller text (ties: the lower index); count its shingles in each larger text.
        let mut overlap: HashMap<u32, u32> = HashMap::new();
        for h in sa {
            for &b in &postings[h] {
                let sb = &sets[b as usize];
                if b as usize != a && (sb.len() > sa.len() || (sb.len() == sa.len() && (b as usize) > a)) {
                    *overlap.entry(b).or_default() += 1;
                }
            }
        }
        for (b, n) in overlap {
            let sb = &sets[b as usize];
            let cont = f64::from(n) / sa.len() as f64;
            if cont < c {
                continue;
            }
            let inter = intersection_size(sa, sb);
            let j = inter as f64 / (sa.len() + sb.len() - inter) as f64;
            if j >= t {
                continue;
            }
            println!(
                "{}\t{}\t{}\t{}\t{j:.3}\t{cont:.3}\t{:.3}\t{}\t{}",
                docs[a].0,
                docs[b as usize].0,
                sa.len(),
                sb.len(),
                inter as f64 / sb.len() as f64,
                head(&docs[a].2),
                head(&docs[b as usize].2)
            );
        }
    }
}
