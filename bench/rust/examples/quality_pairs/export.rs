//! `quality_pairs export`: labelled pairs built from real news (the pools, the edits, the hard
//! and random negatives), written once for every scorer.

use super::*;

// ---------------------------------------------------------------------------------------------
// Data.

/// A prefix of `body` with lo ≤ characters < hi, cut at the sentence end (else clause end, else
/// word end for English) closest to `target`.
pub(super) fn cut_to(body: &str, lo: usize, hi: usize, target: usize, lang: Lang) -> Option<String> {
    let try_units = |units: Vec<String>| -> Option<String> {
        let mut best: Option<(usize, usize)> = None;
        let mut len = 0;
        for (k, u) in units.iter().enumerate() {
            let l = len + nchars(u.trim_end());
            if l >= lo && l < hi {
                let d = l.abs_diff(target);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, k + 1));
                }
            }
            len += nchars(u);
            if len >= hi {
                break;
            }
        }
        best.map(|(_, k)| units[..k].concat().trim_end().to_string())
    };
    if let Some(s) = try_units(sentences(body)) {
        return Some(s);
    }
    if let Some(s) = try_units(clauses(body)) {
        return Some(s);
    }
    if lang == Lang::En {
        let words: Vec<String> = body.split_inclusive(' ').map(str::to_string).collect();
        return try_units(words);
    }
    let s: String = body.chars().take(target).collect();
    (nchars(&s) >= lo && nchars(&s) < hi).then_some(s)
}

/// Bucket pools of one language.
pub(super) fn pools(lang: Lang, docs: &[(String, String, String)], seed: u64) -> Vec<Vec<PoolText>> {
    let mut out: Vec<Vec<PoolText>> = (0..BUCKETS.len()).map(|_| Vec::new()).collect();
    let mut seen: Vec<HashSet<String>> = vec![HashSet::new(); BUCKETS.len()];
    for (n, (id, title, body)) in docs.iter().enumerate() {
        let len = nchars(body);
        for (b, &(lo, hi, _)) in BUCKETS.iter().enumerate() {
            let text = if (lo..hi).contains(&len) {
                Some(body.clone())
            } else if lang == Lang::En && len >= hi {
                let mut rng = Rng::new(&[seed, 0x5e, n as u64, b as u64]);
                let (lo2, hi2) = if lo == 0 { (20, hi) } else { (lo, hi) };
                let target = lo2 + rng.below(hi2 - lo2);
                cut_to(body, lo2, hi2, target, lang)
            } else {
                None
            };
            let Some(text) = text else { continue };
            // Enough words to be a text, and no exact repeats in a pool.
            let words = features(&text, false, &mut no_interrupt).len();
            if nchars(&text) < 10 || words < 3 || !seen[b].insert(text.clone()) {
                continue;
            }
            out[b].push(PoolText { source: id.clone(), title: title.clone(), body: text });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Edits.

pub(super) const ZH_TITLE_SUFFIX: [&str; 5] = ["_新浪新闻", " - 凤凰网", "|网易新闻", "_手机搜狐网", "-今日头条"];
pub(super) const ZH_TITLE_PREFIX: [&str; 5] = ["【转载】", "重磅！", "突发：", "最新消息！", "热议："];

/// A reposter's headline: the title with a site suffix or an attention prefix, or the lead
/// clause of the body as a new headline.
pub(super) fn retitle(title: &str, body: &str, rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => format!("{title}{}", rng.pick(&ZH_TITLE_SUFFIX)),
        1 => format!("{}{title}", rng.pick(&ZH_TITLE_PREFIX)),
        _ => {
            let lead = clauses(body).into_iter().next().unwrap_or_default();
            let lead: String =
                lead.trim().trim_end_matches(['，', '。', '！', '？', '；', ',', '.']).chars().take(30).collect();
            if lead.is_empty() || lead == title {
                format!("{}{title}", rng.pick(&ZH_TITLE_PREFIX))
            } else {
                lead
            }
        }
    }
}

/// The prefix of whole units (sentences, else clauses, else characters) closest to `n`
/// characters, at least one unit.
pub(super) fn head_chars(text: &str, n: usize) -> String {
    let mut units = sentences(text);
    if units.len() < 3 {
        units = clauses(text);
    }
    if units.len() < 3 {
        return text.chars().take(n.max(1)).collect();
    }
    let mut best = (usize::MAX, 1);
    let mut len = 0;
    for (k, u) in units.iter().enumerate() {
        len += nchars(u);
        let d = len.abs_diff(n);
        if d < best.0 {
            best = (d, k + 1);
        }
    }
    units[..best.1].concat()
}

/// The suffix of whole units closest to `n` characters, at least one unit.
pub(super) fn tail_chars(text: &str, n: usize) -> String {
    let mut units = sentences(text);
    if units.len() < 3 {
        units = clauses(text);
    }
    if units.len() < 3 {
        let c: Vec<char> = text.chars().collect();
        return c[c.len().saturating_sub(n.max(1))..].iter().collect();
    }
    let mut best = (usize::MAX, units.len() - 1);
    let mut len = 0;
    for k in (0..units.len()).rev() {
        len += nchars(&units[k]);
        let d = len.abs_diff(n);
        if d < best.0 {
            best = (d, k);
        }
    }
    units[best.1..].concat()
}

pub(super) fn join(a: &str, b: &str, lang: Lang) -> String {
    match lang {
        Lang::Zh => format!("{}{}", a.trim_end(), b.trim_start()),
        Lang::En => format!("{} {}", a.trim_end(), b.trim_start()),
    }
}

/// (title, body) of edit `kind` of `pool[i]`; `other` is another pool text.
pub(super) fn make_edit(
    kind: &str,
    lang: Lang,
    t: &PoolText,
    other: &PoolText,
    chars: &[char],
    rng: &mut Rng,
) -> (String, String) {
    let text = t.body.as_str();
    let title = t.title.clone();
    let body = match kind {
        "del5" => delete_clauses(text, 0.05, rng),
        "del10" => delete_clauses(text, 0.10, rng),
        "insert" => insert_sentence(text, &other.body, lang, rng),
        "swap" => swap_sentences(text, lang, rng),
        "typo1" => typos(text, 0.01, lang, chars, rng),
        "typo2" => typos(text, 0.02, lang, chars, rng),
        "typo3" => typos(text, 0.03, lang, chars, rng),
        "format" => reformat(text, lang, rng),
        "boiler" => boilerplate(text, &t.title, lang, rng),
        "trunc10" => truncate(text, 0.10),
        "del5+typo1" => {
            let d = delete_clauses(text, 0.05, rng);
            typos(&d, 0.01, lang, chars, rng)
        }
        "title" => return (retitle(&t.title, text, rng), text.to_string()),
        "merge80" => {
            let n = nchars(text);
            join(&head_chars(text, n * 8 / 10), &tail_chars(&other.body, n / 5), lang)
        }
        "merge50" => join(&head_chars(text, nchars(text) / 2), &tail_chars(&other.body, nchars(&other.body) / 2), lang),
        _ => unreachable!("{kind}"),
    };
    (title, body)
}

// ---------------------------------------------------------------------------------------------
// Negatives.

/// Smallest content-word Jaccard of a "story" pair, and largest character-5-shingle Jaccard.
pub(super) const STORY_MIN_WORDS: f64 = 0.2;
pub(super) const STORY_MAX_J5: f64 = 0.3;

/// "The same story by another outlet": pairs of pool documents from different sources whose
/// content words (words in at most 10 % of the pool) overlap most — same event, same names and
/// places — while their texts are genuinely different: character-5-shingle Jaccard at most
/// [`STORY_MAX_J5`] (reposts and light rewrites are above 0.5; 0.3–0.5 is left out as
/// ambiguous). Candidates: every pair whose 64-value MinHash of content words agrees in at least
/// 8 places; exact content-word Jaccard at least [`STORY_MIN_WORDS`]; the `limit` pairs with the
/// highest, each document in at most two of them. Returns (i, j, J5, content-word Jaccard),
/// by content-word Jaccard descending.
pub(super) fn story_pairs(
    pool: &[PoolText],
    content: &[Vec<u64>],
    sigs: &[[u32; MH]],
    sh: &[Vec<u64>],
    limit: usize,
) -> Vec<(usize, usize, f64, f64)> {
    let n = pool.len();
    let mut cand: Vec<(f64, usize, usize)> = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if matches(&sigs[i], &sigs[j]) < 8 || pool[i].source == pool[j].source {
                continue;
            }
            let wj = minhash::jaccard(&content[i], &content[j]);
            if wj >= STORY_MIN_WORDS {
                cand.push((wj, i, j));
            }
        }
    }
    cand.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    let mut uses = vec![0u8; n];
    let mut out = Vec::new();
    for (wj, i, j) in cand {
        if out.len() >= limit {
            break;
        }
        if uses[i] >= 2 || uses[j] >= 2 {
            continue;
        }
        let cj = minhash::jaccard(&sh[i], &sh[j]);
        if cj > STORY_MAX_J5 {
            continue;
        }
        uses[i] += 1;
        uses[j] += 1;
        out.push((i, j, cj, wj));
    }
    out
}

pub(super) fn char5(text: &str) -> Vec<u64> {
    minhash::shingles(text, 5, &mut no_interrupt).expect("k = 5")
}

pub(super) fn j5(a: &str, b: &str) -> f64 {
    minhash::jaccard(&char5(a), &char5(b))
}

// ---------------------------------------------------------------------------------------------
// Export.

pub(super) fn export(a: &ExportArgs) {
    let t0 = Instant::now();
    simdup_core::features::preload();
    std::fs::create_dir_all(&a.out).unwrap();
    let mut texts = BufWriter::new(std::fs::File::create(format!("{}/texts.jsonl", a.out)).unwrap());
    let mut pairs = BufWriter::new(std::fs::File::create(format!("{}/pairs.jsonl", a.out)).unwrap());
    let mut n_texts = 0usize;
    let mut n_pairs: HashMap<(String, String), usize> = HashMap::new();
    let mut langs: Vec<(Lang, &str, Vec<(String, String, String)>)> = Vec::new();
    if let Some(p) = &a.zh {
        langs.push((Lang::Zh, "zh", load_with_ids(p)));
    }
    if let Some(p) = &a.en {
        langs.push((Lang::En, "en", load_with_ids(p)));
    }
    // Typos in Chinese replace a character by one drawn from the corpus's own characters.
    let mut cjk: Vec<char> = Vec::new();
    for (lang, _, docs) in &langs {
        if *lang == Lang::Zh {
            for (_, _, b) in docs {
                cjk.extend(b.chars().filter(|&c| is_cjk(c)));
            }
        }
    }
    if cjk.is_empty() {
        cjk.extend("的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要她出也得里后自以会".chars());
    }
    for (lang, lname, docs) in &langs {
        let pools = pools(*lang, docs, a.seed);
        for (b, pool) in pools.iter().enumerate() {
            let bname = BUCKETS[b].2;
            let n = pool.len();
            if n < 10 {
                eprintln!("{lname} {bname}: only {n} texts, skipped");
                continue;
            }
            let mut order: Vec<usize> = (0..n).collect();
            Rng::new(&[a.seed, 0x5b, *lang as u64, b as u64]).shuffle(&mut order);
            let subjects: Vec<usize> = order[..a.per_bucket.min(n)].to_vec();

            // Hard-negative candidates: content words (in ≤ 10 % of the pool), MinHash top 3H,
            // exact Jaccard re-rank; reposts (char-5 J > 0.5) excluded.
            let words: Vec<Vec<u64>> = pool
                .iter()
                .map(|t| {
                    let mut w: Vec<u64> = features(&t.body, false, &mut no_interrupt).iter().map(|f| f.hash).collect();
                    w.sort_unstable();
                    w
                })
                .collect();
            let mut df: HashMap<u64, u32> = HashMap::new();
            for w in &words {
                for &h in w {
                    *df.entry(h).or_insert(0) += 1;
                }
            }
            let max_df = ((n as f64) * 0.10).max(2.0) as u32;
            let content: Vec<Vec<u64>> =
                words.iter().map(|w| w.iter().copied().filter(|h| df[h] <= max_df).collect()).collect();
            let sigs: Vec<[u32; MH]> = content.iter().map(|c| simdup_bench::edits::minhash(c)).collect();
            let sh: Vec<Vec<u64>> = pool.iter().map(|t| char5(&t.body)).collect();

            let mut written: HashSet<usize> = HashSet::new();
            let text_id = |i: usize| format!("{lname}/{bname}/{i}");
            let put_text = |w: &mut BufWriter<std::fs::File>, id: String, title: &str, body: &str| {
                let rec = TextRec {
                    id,
                    lang: lname.to_string(),
                    bucket: bname.to_string(),
                    title: title.into(),
                    body: body.into(),
                };
                serde_json::to_writer(&mut *w, &rec).unwrap();
                w.write_all(b"\n").unwrap();
            };
            let put_pair = |w: &mut BufWriter<std::fs::File>,
                            counts: &mut HashMap<(String, String), usize>,
                            id: String,
                            ta: String,
                            tb: String,
                            label: u8,
                            kind: &str,
                            j: f64| {
                let rec = PairRec {
                    id,
                    a: ta,
                    b: tb,
                    label,
                    kind: kind.into(),
                    lang: lname.to_string(),
                    bucket: bname.to_string(),
                    j5: (j * 10000.0).round() / 10000.0,
                };
                serde_json::to_writer(&mut *w, &rec).unwrap();
                w.write_all(b"\n").unwrap();
                *counts.entry((lname.to_string(), kind.to_string())).or_insert(0) += 1;
            };
            let mut ensure = |w: &mut BufWriter<std::fs::File>, i: usize, n_texts: &mut usize| {
                if written.insert(i) {
                    put_text(w, text_id(i), &pool[i].title, &pool[i].body);
                    *n_texts += 1;
                }
            };
            for (si, &i) in subjects.iter().enumerate() {
                ensure(&mut texts, i, &mut n_texts);
                let orig = &pool[i];
                // Positives (and merge50).
                for (e, kind) in EDITS.iter().enumerate() {
                    if *kind == "title" && (orig.title.is_empty() || *lang == Lang::En) {
                        continue;
                    }
                    let mut rng = Rng::new(&[a.seed, *lang as u64, b as u64, i as u64, e as u64]);
                    let mut j = rng.below(n - 1);
                    if j >= i {
                        j += 1;
                    }
                    let (title, body) = make_edit(kind, *lang, orig, &pool[j], &cjk, &mut rng);
                    if *kind != "title" && body == orig.body {
                        continue; // the edit found nothing to change
                    }
                    let id = format!("{}/{kind}", text_id(i));
                    put_text(&mut texts, id.clone(), &title, &body);
                    n_texts += 1;
                    let label = u8::from(*kind != "merge50");
                    put_pair(&mut pairs, &mut n_pairs, id.clone(), text_id(i), id, label, kind, j5(&orig.body, &body));
                }
                // Hard negatives.
                let mut cand: Vec<(u32, usize)> =
                    (0..n).filter(|&j| j != i).map(|j| (matches(&sigs[i], &sigs[j]), j)).collect();
                cand.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
                let mut ranked: Vec<(f64, usize, f64)> = Vec::new();
                for &(_, j) in cand.iter().take(4 * a.hard.max(1)) {
                    if pool[j].source == orig.source {
                        continue;
                    }
                    let cj = minhash::jaccard(&sh[i], &sh[j]);
                    if cj > 0.5 {
                        continue;
                    }
                    let wj = minhash::jaccard(&content[i], &content[j]);
                    ranked.push((wj, j, cj));
                }
                ranked.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
                for (r, &(_, j, cj)) in ranked.iter().take(a.hard).enumerate() {
                    ensure(&mut texts, j, &mut n_texts);
                    put_pair(
                        &mut pairs,
                        &mut n_pairs,
                        format!("{}/hard{r}", text_id(i)),
                        text_id(i),
                        text_id(j),
                        0,
                        "hard",
                        cj,
                    );
                }
                // Random negatives: all pairs of subjects (--random 0), or a sample per subject.
                if a.random == 0 {
                    for &j in &subjects[si + 1..] {
                        if pool[j].source == orig.source {
                            continue;
                        }
                        let cj = minhash::jaccard(&sh[i], &sh[j]);
                        if cj > 0.5 {
                            continue;
                        }
                        ensure(&mut texts, j, &mut n_texts);
                        put_pair(
                            &mut pairs,
                            &mut n_pairs,
                            format!("{}/rand{j}", text_id(i)),
                            text_id(i),
                            text_id(j),
                            0,
                            "random",
                            cj,
                        );
                    }
                    continue;
                }
                let mut rng = Rng::new(&[a.seed, 0x7a, *lang as u64, b as u64, i as u64]);
                let mut got = 0;
                let mut tries = 0;
                let mut used = HashSet::new();
                while got < a.random && tries < 50 * a.random {
                    tries += 1;
                    let j = subjects[rng.below(subjects.len())];
                    if j == i || pool[j].source == orig.source || !used.insert(j) {
                        continue;
                    }
                    let cj = minhash::jaccard(&sh[i], &sh[j]);
                    if cj > 0.5 {
                        continue;
                    }
                    ensure(&mut texts, j, &mut n_texts);
                    put_pair(
                        &mut pairs,
                        &mut n_pairs,
                        format!("{}/rand{got}", text_id(i)),
                        text_id(i),
                        text_id(j),
                        0,
                        "random",
                        cj,
                    );
                    got += 1;
                }
            }
            // "The same story by another outlet": the pool's pairs with the most content words
            // in common whose text is nevertheless different (see story_pairs).
            let story = story_pairs(pool, &content, &sigs, &sh, a.story);
            let mean_cj = story.iter().map(|x| x.2).sum::<f64>() / story.len().max(1) as f64;
            for (r, &(i, j, cj, _)) in story.iter().enumerate() {
                ensure(&mut texts, i, &mut n_texts);
                ensure(&mut texts, j, &mut n_texts);
                put_pair(
                    &mut pairs,
                    &mut n_pairs,
                    format!("{lname}/{bname}/story{r}"),
                    text_id(i),
                    text_id(j),
                    0,
                    "story",
                    cj,
                );
            }
            eprintln!(
                "{lname} {bname}: pool {n}, {} subjects, {} story pairs (content-word Jaccard {:.2}-{:.2}, mean J5 {mean_cj:.3}) ({})",
                subjects.len(),
                story.len(),
                story.last().map_or(0.0, |x| x.3),
                story.first().map_or(0.0, |x| x.3),
                ftime(t0)
            );
        }
    }
    texts.flush().unwrap();
    pairs.flush().unwrap();
    let mut counts: Vec<_> = n_pairs.into_iter().collect();
    counts.sort();
    eprintln!(
        "exported {n_texts} texts; pairs: {} ({})",
        counts.iter().map(|((l, k), c)| format!("{l} {k} {c}")).collect::<Vec<_>>().join(", "),
        ftime(t0)
    );
}

// ---------------------------------------------------------------------------------------------
// Score.
