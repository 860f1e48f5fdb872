//! What the containment index costs an insert: how many stored rows the containment keys of a
//! new row meet (`simdup_core::similarity::Keys::meet`), each a candidate the similarity dedup
//! trigger reads from the heap and verifies, on real text, with simdup's own code.
//!
//! ```text
//! keys_cost --corpus NAME=PATH [--corpus NAME=PATH ...] [--containment C] [--seed S]
//!           [--reference FILE --top N]
//! ```
//!
//! Each corpus (a jsonl of documents, such as bench/data/zh_news.jsonl or en_pydoc.jsonl) is
//! split in two halves by document. The *table* holds the first half's documents, their
//! sentences of 50 to 300 characters, and their tiny sentences (15 to 49 characters); the
//! *inserts* are the second half's tiny sentences and documents. For each insert: the share of
//! the table's rows whose keys meet its own (mean, median, 99th percentile, maximum), how many
//! of them hold at least C of the smaller text's shingles (the candidates that are
//! near-duplicates by containment), and, over the first 300 inserts by brute force, the share of
//! all such rows of the table that the keys meet (their recall). Keys in the order the index stores them
//! (`similar::rare_first`: the common shingles of Debian's license texts last), or, with
//! `--reference FILE --top N`, in another order for comparison: the N 5-shingles in the most
//! paragraphs (runs of non-blank lines) of FILE last, by frequency (N = 0: every shingle of FILE
//! ranked). Output: a markdown table.
use std::collections::HashMap;

use simdup_bench::edits::{load, nchars, sentences, Rng};
use simdup_core::no_interrupt;
use simdup_core::similarity::minhash::{containment, shingles};
use simdup_core::similarity::{containment_keys, prefix_filter, Keys, SKETCH_SHINGLES, TINY_SHINGLES};

/// The N most frequent 5-shingles of a reference text (by paragraphs), each with its frequency.
fn reference_ranks(path: &str, top: usize) -> HashMap<u64, u32> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut df: HashMap<u64, u32> = HashMap::new();
    for para in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        for h in shingles(para, 5, &mut no_interrupt).unwrap() {
            *df.entry(h).or_default() += 1;
        }
    }
    let mut by_df: Vec<(u64, u32)> = df.into_iter().collect();
    by_df.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if top > 0 {
        by_df.truncate(top);
    }
    by_df.into_iter().collect()
}

/// `containment_keys` in the order of a reference's frequencies (unseen shingles first).
fn keys_in(set: &[u64], c: f64, ranks: &HashMap<u64, u32>) -> Keys {
    let mut ordered = set.to_vec();
    ordered.sort_by_cached_key(|h| (ranks.get(h).copied().unwrap_or(0), *h));
    let prefix = if set.len() < TINY_SHINGLES { prefix_filter(&ordered, c).to_vec() } else { Vec::new() };
    ordered.truncate(SKETCH_SHINGLES);
    Keys { sketch: ordered, prefix }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned());
    let corpora: Vec<(String, String)> = args
        .windows(2)
        .filter(|w| w[0] == "--corpus")
        .map(|w| {
            let (n, p) = w[1].split_once('=').expect("--corpus NAME=PATH");
            (n.to_owned(), p.to_owned())
        })
        .collect();
    assert!(!corpora.is_empty(), "--corpus NAME=PATH");
    let c: f64 = value("--containment").map_or(0.8, |s| s.parse().unwrap());
    let seed: u64 = value("--seed").map_or(1, |s| s.parse().unwrap());
    let ranks = value("--reference").map(|path| {
        let top: usize = value("--top").map_or(0, |s| s.parse().unwrap());
        let r = reference_ranks(&path, top);
        println!("order: the {} most frequent 5-shingles of {path} last (--top {top})\n", r.len());
        r
    });
    let keys_of = |set: &[u64]| match &ranks {
        Some(r) => keys_in(set, c, r),
        None => containment_keys(set, 5, c),
    };
    println!(
        "containment {c}; keys: sketch of 32 shingles, containment prefix of tiny texts (fewer than 50 5-shingles)\n"
    );
    println!("| corpus | table rows (documents / sentences / tiny) | inserts | keys a row (entry) | rows met: mean | median | p99 | max | of them containing (mean) | containing rows met (first 300) |");
    println!("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, path) in corpora {
        let mut rng = Rng::new(&[seed]);
        let docs: Vec<String> =
            load(&path).into_iter().map(|(_, body)| body).filter(|b| !b.trim().is_empty()).collect();
        let (table_docs, insert_docs) = docs.split_at(docs.len() / 2);
        let tiny = |d: &[String]| -> Vec<String> {
            d.iter()
                .flat_map(|b| sentences(b))
                .map(|s| s.trim().to_owned())
                .filter(|s| (15..50).contains(&nchars(s)))
                .collect()
        };
        let mid: Vec<String> = table_docs
            .iter()
            .flat_map(|b| sentences(b))
            .map(|s| s.trim().to_owned())
            .filter(|s| (50..=300).contains(&nchars(s)))
            .collect();
        let table_tiny = tiny(table_docs);
        let mut table: Vec<String> = table_docs.to_vec();
        let counts = (table.len(), mid.len(), table_tiny.len());
        table.extend(mid);
        table.extend(table_tiny);
        let sets: Vec<Vec<u64>> = table.iter().map(|t| shingles(t, 5, &mut no_interrupt).unwrap()).collect();
        let keys: Vec<Keys> = sets.iter().map(|s| keys_of(s)).collect();
        // Inverted lists: which rows hold a shingle in their sketch, and in their prefix.
        let (mut by_sketch, mut by_prefix): (HashMap<u64, Vec<u32>>, HashMap<u64, Vec<u32>>) = Default::default();
        for (i, k) in keys.iter().enumerate() {
            for &x in &k.sketch {
                by_sketch.entry(x).or_default().push(i as u32);
            }
            for &x in &k.prefix {
                by_prefix.entry(x).or_default().push(i as u32);
            }
        }
        let entry_mean = keys.iter().map(|k| k.entry().len()).sum::<usize>() as f64 / keys.len() as f64;
        let mut inserts_tiny = tiny(insert_docs);
        // At most 2,000 inserts of each kind, drawn at random.
        for list in [&mut inserts_tiny] {
            while list.len() > 2000 {
                let i = rng.below(list.len());
                list.swap_remove(i);
            }
        }
        let mut inserts_docs: Vec<String> = insert_docs.to_vec();
        while inserts_docs.len() > 2000 {
            let i = rng.below(inserts_docs.len());
            inserts_docs.swap_remove(i);
        }
        for (kind, inserts) in [("tiny sentences", &inserts_tiny), ("documents", &inserts_docs)] {
            let mut met: Vec<usize> = Vec::new();
            let mut containing = 0usize;
            let (mut all, mut found) = (0usize, 0usize);
            for (n_insert, text) in inserts.iter().enumerate() {
                let set = shingles(text, 5, &mut no_interrupt).unwrap();
                if set.is_empty() {
                    continue;
                }
                let k = keys_of(&set);
                let mut rows: Vec<u32> = k
                    .prefix
                    .iter()
                    .filter_map(|x| by_sketch.get(x))
                    .chain(k.sketch.iter().filter_map(|x| by_prefix.get(x)))
                    .flatten()
                    .copied()
                    .collect();
                rows.sort_unstable();
                rows.dedup();
                containing += rows.iter().filter(|&&r| containment(&set, &sets[r as usize]) >= c).count();
                met.push(rows.len());
                if n_insert < 300 {
                    for (r, other) in sets.iter().enumerate() {
                        if !other.is_empty() && containment(&set, other) >= c {
                            all += 1;
                            found += usize::from(rows.binary_search(&(r as u32)).is_ok());
                        }
                    }
                }
            }
            met.sort_unstable();
            let n = met.len().max(1);
            let share = |x: f64| format!("{:.3} %", 100.0 * x / table.len() as f64);
            println!(
                "| {name}: {kind} | {} ({} / {} / {}) | {} | {:.1} | {} | {} | {} | {} | {:.2} | {found} / {all} |",
                table.len(),
                counts.0,
                counts.1,
                counts.2,
                met.len(),
                entry_mean,
                share(met.iter().sum::<usize>() as f64 / n as f64),
                share(met[n / 2] as f64),
                share(met[(n * 99 / 100).min(n - 1)] as f64),
                share(*met.last().unwrap_or(&0) as f64),
                containing as f64 / n as f64,
            );
        }
    }
}
