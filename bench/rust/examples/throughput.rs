//! Throughput of the fingerprint against raw jieba-rs segmentation of the same text, in one
//! process, repeated; prints medians as JSON.
//!
//! cargo run --release -p simdup-bench --example throughput -- FILE.jsonl [REPEATS] [--stages]
//!
//! FILE.jsonl: one {"body": "..."} per line (bench/fetch/news.sh makes them).
//!
//! `--stages`: where the time goes instead: each stage of the pipeline added in turn
//! (normalize, cut, filter, hash, tally, IDF, full fingerprint), timed over the same documents
//! (medians of alternating passes), printed as a markdown table of MB/s and ratios to raw
//! segmentation. SIMDUP_STAGE=i times stage i alone (for a profiler).

#![allow(clippy::type_complexity, clippy::needless_range_loop)] // benchmark drivers: tuples of results, indexed histograms

use std::time::Instant;

use simdup_core::features::{feature_hash, is_feature_token, jieba};
use simdup_core::normalize::normalize_into;
use simdup_core::simhash;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let stages = args.iter().any(|a| a == "--stages");
    args.retain(|a| a != "--stages");
    let mut args = args.into_iter();
    let path = args.next().expect("usage: throughput FILE.jsonl [REPEATS] [--stages]");
    let repeats: usize = args.next().map_or(5, |r| r.parse().expect("REPEATS"));
    let docs: Vec<String> = std::fs::read_to_string(&path)
        .expect("read corpus")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            v["body"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    let bytes: usize = docs.iter().map(String::len).sum();
    let mb = bytes as f64 / 1e6;
    // Load the dictionary and IDF tables before timing.
    simdup_core::features::preload();
    let jieba = jieba();
    if stages {
        return print_stages(&docs, mb, repeats);
    }

    let (mut seg, mut fp) = (Vec::new(), Vec::new());
    let mut sink = 0u64;
    for _ in 0..repeats {
        // Alternate so that both see the same machine state.
        let t = Instant::now();
        for d in &docs {
            sink = sink.wrapping_add(jieba.cut(d, false).len() as u64);
        }
        seg.push(mb / t.elapsed().as_secs_f64());
        let t = Instant::now();
        for d in &docs {
            sink = sink.wrapping_add(simhash(d).unwrap_or(0));
        }
        fp.push(mb / t.elapsed().as_secs_f64());
    }
    let (s, f) = (median(seg), median(fp));
    println!(
        "{{\"file\": {path:?}, \"docs\": {}, \"mb\": {mb:.3}, \"repeats\": {repeats}, \
         \"jieba_cut_mb_s\": {s:.3}, \"simhash_mb_s\": {f:.3}, \"ratio\": {:.3}, \"sink\": {}}}",
        docs.len(),
        f / s,
        sink % 10
    );
}

/// The `--stages` table.
fn print_stages(docs: &[String], mb: f64, repeats: usize) {
    let jieba = jieba();
    let table = simdup_core::idf::table();
    // The normalized text of each document, keyed by the address of the original.
    let pre: std::collections::HashMap<usize, String> =
        docs.iter().map(|d| (d.as_ptr() as usize, simdup_core::normalize::normalize(d))).collect();
    let tally = std::cell::RefCell::new(simdup_core::features::Tally::default());
    // Normalize, cut, keep feature tokens, hash them.
    let hashes = |d: &str, n: &mut String, f: &mut dyn FnMut(u64)| {
        normalize_into(d, n);
        for t in jieba.cut(n, false) {
            if is_feature_token(t.word) {
                f(feature_hash(t.word));
            }
        }
    };
    type Stage<'a> = (&'a str, Box<dyn Fn(&str, &mut String) -> u64 + 'a>);
    let stages: Vec<Stage> = vec![
        ("jieba cut (raw text)", Box::new(|d, _| jieba.cut(d, false).len() as u64)),
        (
            "jieba cut (normalized text, prepared)",
            Box::new(|d, _| jieba.cut(&pre[&(d.as_ptr() as usize)], false).len() as u64),
        ),
        (
            "normalize",
            Box::new(|d, n| {
                normalize_into(d, n);
                n.len() as u64
            }),
        ),
        (
            "normalize + cut",
            Box::new(|d, n| {
                normalize_into(d, n);
                jieba.cut(n, false).len() as u64
            }),
        ),
        (
            "+ filter + hash",
            Box::new(|d, n| {
                let mut s = 0u64;
                hashes(d, n, &mut |h| s = s.wrapping_add(h));
                s
            }),
        ),
        (
            "+ tally",
            Box::new(|d, n| {
                let mut tally = tally.borrow_mut();
                tally.reset(d.len() / 8);
                hashes(d, n, &mut |h| {
                    tally.add(h);
                });
                tally.len() as u64
            }),
        ),
        (
            "+ IDF of each distinct token",
            Box::new(|d, n| {
                let mut tally = tally.borrow_mut();
                tally.reset(d.len() / 8);
                hashes(d, n, &mut |h| {
                    tally.add(h);
                });
                let mut s = 0f32;
                tally.for_each_idf(table, 1.0, |_, _, _, idf| s += idf);
                s as u64
            }),
        ),
        ("simhash (full)", Box::new(|d, _| simhash(d).unwrap_or(0))),
    ];
    // SIMDUP_STAGE=i runs only stage i (for `perf stat`).
    let only: Option<usize> = std::env::var("SIMDUP_STAGE").ok().map(|v| v.parse().expect("SIMDUP_STAGE"));
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); stages.len()];
    let mut norm = String::new();
    let mut sink = 0u64;
    for _ in 0..repeats {
        for (i, (_, f)) in stages.iter().enumerate() {
            if only.is_some_and(|o| o != i) {
                times[i].push(1.0);
                continue;
            }
            let t = Instant::now();
            for d in docs {
                sink = sink.wrapping_add(f(d, &mut norm));
            }
            times[i].push(mb / t.elapsed().as_secs_f64());
        }
    }
    let base = median(times[0].clone());
    println!("| stage ({} docs, {mb:.1} MB, median of {repeats}) | MB/s | vs raw cut |", docs.len());
    println!("| --- | ---: | ---: |");
    for (i, (name, _)) in stages.iter().enumerate() {
        let m = median(times[i].clone());
        println!("| {name} | {m:.2} | {:.3} |", m / base);
    }
    eprintln!("sink {}", sink % 7);
}
