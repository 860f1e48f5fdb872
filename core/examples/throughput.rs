//! Throughput of the fingerprint against raw jieba-rs segmentation of the same text, in one
//! process, repeated; prints medians as JSON.
//!
//! cargo run --release -p simdup-core --example throughput -- FILE.jsonl [REPEATS]
//!
//! FILE.jsonl: one {"body": "..."} per line (bench/fetch_data.sh makes them).

use std::time::Instant;

use simdup_core::features::jieba;
use simdup_core::{simhash, Params};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: throughput FILE.jsonl [REPEATS]");
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
    let params = Params::default();
    // Load the dictionary and IDF tables before timing.
    simdup_core::features::preload();
    let jieba = jieba();

    let (mut seg, mut fp) = (Vec::new(), Vec::new());
    let mut sink = 0u64;
    for _ in 0..repeats {
        // Alternate so that both see the same machine state.
        let t = Instant::now();
        for d in &docs {
            sink = sink.wrapping_add(jieba.cut(d, params.hmm).len() as u64);
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
