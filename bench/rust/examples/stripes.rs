//! How often unrelated short texts contend for a lock stripe of the similarity dedup trigger
//! (`simdup_core::locks::similar_values`), on real text, with simdup's own code.
//!
//! ```text
//! stripes --zh zh_news.jsonl --en en_news.jsonl [--pairs N] [--threshold T] [--seed S]
//! ```
//!
//! Short texts: the corpus's Chinese news titles, and the first 15 to 45 characters of the
//! English articles' sentences (the Lee corpus has no titles). For each language, N random pairs
//! of distinct texts that are not near-duplicates by the trigger's rule; a pair *contends* when
//! the two rows' stripe sets intersect, so that the later writer waits for the earlier one's
//! commit. Printed per language: the mean number of stripes a row takes, and the share of pairs
//! contending with each scheme the trigger has had: one stripe for all short texts beside the
//! band stripes (every pair contends), band stripes and the 3-shingle prefix stripes of short
//! texts, the prefix stripes of small texts' 5-shingle sets instead of their band stripes
//! (`similar_values` without containment), and the same with the containment rule (the default,
//! 0.8): a tiny text's containment prefix locked exclusively and every text's sketch locked
//! shared, in a key space of their own (a pair contends when one's exclusive key stripe is among
//! the other's key stripes, or their main stripes meet: `SimilarStripes::conflict`). The
//! prefixes are in the order of `similar::rare_first` (common shingles last); a build of an
//! earlier revision gives the figures of its order. Output: a markdown table.
use simdup_bench::edits::{load, nchars, sentences, Rng};
use simdup_core::locks::{similar_values, SimilarStripes};
use simdup_core::no_interrupt;
use simdup_core::similarity::minhash::{bands, choose_bands_for_recall, minhash, shingles};
use simdup_core::similarity::{containment_keys, short_set, Rule, Texts};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

struct Row {
    text: String,
    set: Vec<u64>,
    short: Vec<u64>,
    /// Band stripes and 3-shingle prefix stripes (3cd2b09's scheme, in today's order).
    before: Vec<u32>,
    /// What the trigger locks without containment.
    stripes: SimilarStripes,
    /// What the trigger locks with containment 0.8 (the default).
    keyed: SimilarStripes,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let zh = arg(&args, "--zh").expect("--zh zh_news.jsonl");
    let en = arg(&args, "--en").expect("--en en_news.jsonl");
    let pairs: usize = arg(&args, "--pairs").map_or(20_000, |s| s.parse().unwrap());
    let t: f64 = arg(&args, "--threshold").map_or(0.5, |s| s.parse().unwrap());
    let seed: u64 = arg(&args, "--seed").map_or(1, |s| s.parse().unwrap());
    let (b, r) = choose_bands_for_recall(128, t, 0.99).unwrap();
    let rule = Rule { k: 5, threshold: t, containment: Some(0.8) };
    let mut rng = Rng::new(&[seed]);

    let titles: Vec<String> = load(&zh).into_iter().map(|(title, _)| title.trim().to_string()).collect();
    let mut clipped = Vec::new();
    for (_, body) in load(&en) {
        for s in sentences(&body) {
            let s = s.trim();
            if nchars(s) >= 20 {
                clipped.push(s.chars().take(15 + rng.below(31)).collect::<String>());
            }
        }
    }
    println!("threshold {t}: the similarity index's {b} bands of {r} rows; {pairs} random pairs a language\n");
    println!("| texts | rows | characters (mean) | stripes a row: bands + 3-shingle prefix | prefixes | prefixes + keys (exclusive / shared) | pairs contending: one short-text stripe | bands + 3-shingle prefix | prefixes | prefixes + keys |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, texts) in [("Chinese news titles", titles), ("English sentences, first 15-45 characters", clipped)] {
        let rows: Vec<(usize, Row)> = texts
            .iter()
            .filter_map(|text| {
                let set = shingles(text, 5, &mut no_interrupt).ok().filter(|s| !s.is_empty())?;
                let short = short_set(text, &mut no_interrupt)?;
                let bands = bands(&minhash(&set, b * r).unwrap(), b, r).unwrap();
                // A table with containment still locks every row's bands, with the 3-shingle
                // prefix of a short text: the scheme of 3cd2b09 for every table (its prefix in the
                // order of `rare_first`, which 3cd2b09 did not have).
                let mut before = simdup_core::locks::band_stripes(&bands);
                before.extend(similar_values(&[], &[], 5, &short, t, None).stripes().exclusive);
                before.sort_unstable();
                before.dedup();
                let stripes = similar_values(&bands, &set, 5, &short, t, None).stripes();
                let keyed = similar_values(&bands, &set, 5, &short, t, Some(&containment_keys(&set, 5, 0.8))).stripes();
                Some((nchars(text), Row { text: text.clone(), set, short, before, stripes, keyed }))
            })
            .collect();
        let n = rows.len();
        let (mut before, mut now, mut keyed, mut counted) = (0usize, 0usize, 0usize, 0usize);
        let meet = |a: &[u32], b: &[u32]| a.iter().any(|x| b.binary_search(x).is_ok());
        while counted < pairs {
            let (i, j) = (rng.below(n), rng.below(n));
            let (x, y) = (&rows[i].1, &rows[j].1);
            if i == j
                || rule
                    .near_duplicate(
                        &x.set,
                        &y.set,
                        &mut Texts::new(&x.text, &y.text, no_interrupt)
                            .with_short(Some(Some(&x.short)), Some(Some(&y.short))),
                    )
                    .is_some()
            {
                continue;
            }
            counted += 1;
            before += usize::from(meet(&x.before, &y.before));
            now += usize::from(x.stripes.conflict(&y.stripes));
            keyed += usize::from(x.keyed.conflict(&y.keyed));
        }
        let mean = |f: &dyn Fn(&(usize, Row)) -> usize| rows.iter().map(f).sum::<usize>() as f64 / n as f64;
        let share = |c: usize| format!("{:.1} %", 100.0 * c as f64 / counted as f64);
        println!(
            "| {name} | {n} | {:.1} | {:.1} | {:.1} | {:.1} + {:.1} / {:.1} | 100 % | {} | {} | {} |",
            mean(&|(c, _)| *c),
            mean(&|(_, row)| row.before.len()),
            mean(&|(_, row)| row.stripes.exclusive.len()),
            mean(&|(_, row)| row.keyed.exclusive.len()),
            mean(&|(_, row)| row.keyed.keys_exclusive.len()),
            mean(&|(_, row)| row.keyed.keys_shared.len()),
            share(before),
            share(now),
            share(keyed)
        );
    }
}
