//! `quality_pairs score` and `pool`: simdup's methods scored on the exported pairs, and the
//! false positives among all pairs of each bucket's pool.

use super::*;

/// A SimHash method of the benchmark.
pub(super) struct Method {
    name: &'static str,
    /// Index into [`TOKENIZERS`].
    tokenizer: usize,
    weighting: Weighting,
    /// Fingerprint of title + "\n" + body instead of body (format 1 otherwise).
    title_in_text: bool,
}

pub(super) fn tokenizers() -> Vec<Tokenizer> {
    let d = Tokenizer::default();
    vec![
        d,
        Tokenizer { nfkc: false, ..d },
        Tokenizer { lowercase: false, ..d },
        Tokenizer { hmm: true, ..d },
        Tokenizer { char_ngrams: 2, ..d },
        Tokenizer { char_ngrams: 3, ..d },
    ]
}

pub(super) fn methods() -> Vec<Method> {
    let d = Weighting::default();
    let improved = Options::from_scheme(Scheme::Improved).weighting;
    let title = Options::from_scheme(Scheme::Title).weighting;
    let chars = Weighting { idf: false, ..d };
    let f = |factors| Weighting { factors, ..d };
    let df = d.factors;
    let m = |name, tokenizer, weighting| Method { name, tokenizer, weighting, title_in_text: false };
    vec![
        m("default", 0, d),
        Method { name: "default_title_body", tokenizer: 0, weighting: d, title_in_text: true },
        m("title", 0, title),
        m("title3", 0, f(scheme::Weighting { title: 3.0, ..df })),
        m("title10", 0, f(scheme::Weighting { title: 10.0, ..df })),
        m("improved", 0, improved),
        m("improved_notitle", 0, f(scheme::Weighting { title: 1.0, ..improved.factors })),
        m("pos", 0, f(scheme::Weighting { pos: true, ..df })),
        m("length", 0, f(scheme::Weighting { length: true, ..df })),
        m("cue5", 0, f(scheme::Weighting { cue: 5.0, ..df })),
        m("stopwords", 0, Weighting { stopwords: true, ..d }),
        m("tf_raw", 0, Weighting { tf: TfMode::Raw, ..d }),
        m("unk0.25", 0, Weighting { unknown_idf: 0.25, ..d }),
        m("unk1", 0, Weighting { unknown_idf: 1.0, ..d }),
        m("nfkc_off", 1, d),
        m("lower_off", 2, d),
        m("hmm_on", 3, d),
        m("char2", 4, chars),
        m("char3", 5, chars),
    ]
}

/// Similarity methods (higher = more similar, 0..1). `simdup_dedup_default` is what the
/// similarity dedup trigger of `simdup_enable_similar(..., 0.5, on_duplicate => ...)` decides at
/// its defaults (containment 0.8 and its keys; `simdup_core::similarity::Rule::judge` through each
/// index that offers the pair): 1 for a near-duplicate, 0 otherwise, whatever the threshold of the
/// report. `simdup_dedup_similar` is what it decides with `containment => NULL`: for a pair that shares one of the similarity
/// index's 35 LSH bands of 3 rows, the exact Jaccard of character 5-shingles, or that of
/// 3-shingles when the short-text rule applies and it is higher; for a pair that shares only one
/// of the short-text index's 72 bands of 4 rows over 3-shingles (both texts short), the short-text
/// rule alone (the 3-shingle Jaccard where it applies, else 0); 0 for a pair that is never a
/// candidate. At t = 0.5 it is ≥ t exactly when the trigger rejects the pair (checked). Which
/// bands each pair shares is also written to `dedup_candidates.tsv` (bench/quality/containment_eval.py
/// reads it).
pub(super) const SIM_METHODS: [&str; 5] =
    ["simdup_jaccard5", "simdup_jaccard3", "simdup_minhash128", "simdup_dedup_similar", "simdup_dedup_default"];

/// The bands × rows `simdup_enable_similar` chooses at its default threshold 0.5 (recall 0.99).
pub(super) const DEDUP_BANDS: (usize, usize) = (35, 3);

pub(super) fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &str) -> Vec<T> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    BufReader::new(f)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

pub(super) fn score(dir: &str) {
    let t0 = Instant::now();
    simdup_core::features::preload();
    let texts: Vec<TextRec> = read_jsonl(&format!("{dir}/texts.jsonl"));
    let pairs: Vec<PairRec> = read_jsonl(&format!("{dir}/pairs.jsonl"));
    let index: HashMap<&str, usize> = texts.iter().enumerate().map(|(i, t)| (t.id.as_str(), i)).collect();
    eprintln!("{} texts, {} pairs ({})", texts.len(), pairs.len(), ftime(t0));

    let toks = tokenizers();
    let ms = methods();
    // fps[method][text]
    let mut fps = vec![vec![0u64; texts.len()]; ms.len()];
    let mut none = vec![0usize; ms.len()];
    for (ti, tok) in toks.iter().enumerate() {
        let t1 = Instant::now();
        for (x, t) in texts.iter().enumerate() {
            let body_terms = exp::terms(&t.body, tok, false, &mut no_interrupt);
            let title_set: HashSet<u64> =
                if t.title.is_empty() { HashSet::new() } else { exp::title_set(&t.title, tok, &mut no_interrupt) };
            for (mi, m) in ms.iter().enumerate() {
                if m.tokenizer != ti {
                    continue;
                }
                let fp = if m.title_in_text {
                    let text = if t.title.is_empty() { t.body.clone() } else { format!("{}\n{}", t.title, t.body) };
                    simhash(&text)
                } else {
                    fingerprint(&exp::weigh(body_terms.clone(), &title_set, &m.weighting))
                };
                if fp.is_none() {
                    none[mi] += 1;
                }
                fps[mi][x] = fp.unwrap_or(0);
            }
        }
        eprintln!("tokenizer {ti} done ({})", ftime(t1));
    }
    // The benchmark's default is the library's simhash() and the named schemes are the library's.
    let title_m = ms.iter().position(|m| m.name == "title").unwrap();
    let title_body_m = ms.iter().position(|m| m.name == "default_title_body").unwrap();
    let improved_m = ms.iter().position(|m| m.name == "improved").unwrap();
    for (x, t) in texts.iter().enumerate().take(200) {
        assert_eq!(fps[0][x], simhash(&t.body).unwrap_or(0), "default differs from simhash() on {}", t.id);
        let title = Some(t.title.as_str());
        for (mi, s) in [(title_body_m, Scheme::Default), (title_m, Scheme::Title), (improved_m, Scheme::Improved)] {
            let lib = scheme::simhash_scheme(&t.body, title, s, &mut no_interrupt).unwrap_or(0);
            assert_eq!(fps[mi][x], lib, "{} differs from the library on {}", s.name(), t.id);
        }
    }
    // Set similarities.
    let t1 = Instant::now();
    let sh5: Vec<Vec<u64>> = texts.iter().map(|t| char5(&t.body)).collect();
    let sh3: Vec<Vec<u64>> = texts.iter().map(|t| minhash::shingles(&t.body, 3, &mut no_interrupt).unwrap()).collect();
    let sigs: Vec<Vec<u64>> = sh5.iter().map(|s| minhash::minhash(s, 128).unwrap()).collect();
    let (b, r) = DEDUP_BANDS;
    assert_eq!(minhash::choose_bands_for_recall(128, 0.5, 0.99).unwrap(), DEDUP_BANDS);
    let bands: Vec<Vec<i64>> = sh5
        .iter()
        .map(|s| {
            if s.is_empty() {
                Vec::new()
            } else {
                minhash::bands(&minhash::minhash(s, b * r).unwrap(), b, r).unwrap()
            }
        })
        .collect();
    // The short-text rule's 3-shingle sets and bands (simdup_core::similarity).
    let short: Vec<Option<Vec<u64>>> =
        texts.iter().map(|t| similarity::short_set(&t.body, &mut no_interrupt)).collect();
    let (sb, sr) = similarity::short_banding(0.5).unwrap();
    let short_bands: Vec<Vec<i64>> = short
        .iter()
        .map(|s| s.as_ref().map(|s| similarity::short_bands(s, sb, sr).unwrap()).unwrap_or_default())
        .collect();
    // The containment keys at containment 0.7 and 0.8 (simdup_core::similarity::containment_keys).
    let keys: Vec<[similarity::Keys; 2]> =
        sh5.iter().map(|s| [0.7, 0.8].map(|c| similarity::containment_keys(s, 5, c))).collect();
    eprintln!("shingles and MinHash done ({})", ftime(t1));

    let names: Vec<&str> = ms.iter().map(|m| m.name).collect();

    let path = format!("{dir}/scores_simdup.tsv");
    let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
    write!(out, "pair").unwrap();
    for m in &names {
        write!(out, "\t{m}").unwrap();
    }
    for s in SIM_METHODS {
        write!(out, "\t{s}").unwrap();
    }
    writeln!(out).unwrap();
    let mut candidates = BufWriter::new(std::fs::File::create(format!("{dir}/dedup_candidates.tsv")).unwrap());
    writeln!(candidates, "pair\tband\tshort_band\tkey70\tkey80").unwrap();
    for p in &pairs {
        let (a, b) = (index[p.a.as_str()], index[p.b.as_str()]);
        write!(out, "{}", p.id).unwrap();
        for f in &fps {
            write!(out, "\t{}", hamming(f[a], f[b])).unwrap();
        }
        let j5 = minhash::jaccard(&sh5[a], &sh5[b]);
        let j3 = minhash::jaccard(&sh3[a], &sh3[b]);
        let mj = minhash::minhash_jaccard(&sigs[a], &sigs[b]).unwrap_or(0.0);
        let band = bands[a].iter().any(|v| bands[b].contains(v));
        let short_band = short_bands[a].iter().any(|v| short_bands[b].contains(v));
        let rule = similarity::Rule { k: 5, threshold: 0.5, containment: None };
        let short_rule = sh5[a].len().min(sh5[b].len()) + 4 < similarity::SHORT_TEXT_CHARS
            && short[a].is_some()
            && short[b].is_some();
        // As the trigger: every rule for a pair sharing a band, the short-text rule alone for
        // one sharing only a short band.
        let dedup = match (band, short_band) {
            (true, _) if short_rule => j5.max(j3),
            (true, _) => j5,
            (false, true) if short_rule => j3,
            _ => 0.0,
        };
        let pair = || {
            similarity::Texts::new(&texts[a].body, &texts[b].body, no_interrupt)
                .with_short(Some(short[a].as_deref()), Some(short[b].as_deref()))
        };
        let via = if band { similarity::Via::Band } else { similarity::Via::ShortBand };
        let decided = (band || short_band).then(|| rule.judge(&sh5[a], &sh5[b], via, &mut pair())).flatten();
        assert_eq!(dedup >= 0.5, decided.is_some(), "the trigger's decision on {}", p.id);
        // With containment c: the same, and rule 2 through a shared band when neither text is
        // tiny, or through containment keys that meet.
        let key = [0, 1].map(|i| keys[a][i].meet(&keys[b][i]));
        // Rule 2's footer test (simdup_core::similarity::is_footer), read only for a contained pair.
        let (small, large) = if sh5[a].len() <= sh5[b].len() { (a, b) } else { (b, a) };
        let containment = minhash::containment(&sh5[a], &sh5[b]);
        let footer = std::cell::OnceCell::new();
        let footer = || {
            *footer.get_or_init(|| {
                similarity::is_footer(&texts[small].body, &texts[large].body, sh5[small].len(), 5, &mut no_interrupt)
            })
        };
        let mut default = false;
        for (i, c) in [0.7, 0.8].into_iter().enumerate() {
            let rule = similarity::Rule { containment: Some(c), ..rule };
            let tiny = sh5[a].len().min(sh5[b].len()) < similarity::TINY_SHINGLES;
            let contained = containment >= c && !footer();
            let expected =
                dedup >= 0.5 || (contained && ((band && !tiny) || key[i])) || (key[i] && short_rule && j3 >= 0.5);
            let decided = [
                (band, similarity::Via::Band),
                (short_band, similarity::Via::ShortBand),
                (key[i], similarity::Via::Key),
            ]
            .into_iter()
            .any(|(found, via)| found && rule.judge(&sh5[a], &sh5[b], via, &mut pair()).is_some());
            assert_eq!(expected, decided, "the trigger's decision at containment {c} on {}", p.id);
            default = decided; // containment 0.8, the default, comes last
        }
        writeln!(out, "\t{j5:.4}\t{j3:.4}\t{mj:.4}\t{dedup:.4}\t{}", u8::from(default)).unwrap();
        let [k70, k80] = key.map(u8::from);
        writeln!(candidates, "{}\t{}\t{}\t{k70}\t{k80}", p.id, u8::from(band), u8::from(short_band)).unwrap();
    }
    candidates.flush().unwrap();
    out.flush().unwrap();
    let empty: Vec<String> =
        ms.iter().zip(&none).filter(|(_, &n)| n > 0).map(|(m, n)| format!("{} {n}", m.name)).collect();
    eprintln!(
        "wrote {path} ({}); texts without a fingerprint: {}",
        ftime(t0),
        if empty.is_empty() { "none".into() } else { empty.join(", ") }
    );
}

// ---------------------------------------------------------------------------------------------
// All pairs of the pools (simdup methods only).

/// False-positive rates over every pair of different texts of each bucket's whole pool (reposts,
/// char-5-shingle Jaccard > 0.5, excluded): `DIR/pool_fpr.tsv` with one row per language,
/// bucket, method and threshold: the number of pairs and how many of them the method flags
/// (SimHash: distance ≤ k; MinHash: estimate ≥ t).
pub(super) fn pool_fpr(a: &ExportArgs) {
    let t0 = Instant::now();
    simdup_core::features::preload();
    std::fs::create_dir_all(&a.out).unwrap();
    let path = format!("{}/pool_fpr.tsv", a.out);
    let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, "lang\tbucket\tmethod\tthreshold\tpairs\tflagged").unwrap();
    let chars = Weighting { idf: false, ..Weighting::default() };
    // (name, options, with the title)
    let simhash_methods: Vec<(&str, Options, bool)> = vec![
        ("default", Options::default(), false),
        ("default_title_body", Options::default(), true),
        ("title", Options::from_scheme(Scheme::Title), true),
        ("improved", Options::from_scheme(Scheme::Improved), true),
        (
            "unk0.25",
            Options { weighting: Weighting { unknown_idf: 0.25, ..Weighting::default() }, ..Options::default() },
            false,
        ),
        (
            "char2",
            Options {
                tokenizer: Tokenizer { char_ngrams: 2, ..Tokenizer::default() },
                weighting: chars,
                title_text: false,
            },
            false,
        ),
        (
            "char3",
            Options {
                tokenizer: Tokenizer { char_ngrams: 3, ..Tokenizer::default() },
                weighting: chars,
                title_text: false,
            },
            false,
        ),
    ];
    let mut langs: Vec<(Lang, &str, Vec<(String, String, String)>)> = Vec::new();
    if let Some(p) = &a.zh {
        langs.push((Lang::Zh, "zh", load_with_ids(p)));
    }
    if let Some(p) = &a.en {
        langs.push((Lang::En, "en", load_with_ids(p)));
    }
    for (lang, lname, docs) in &langs {
        for (b, pool) in pools(*lang, docs, a.seed).iter().enumerate() {
            let n = pool.len();
            if n < 10 {
                continue;
            }
            let bname = BUCKETS[b].2;
            let fps: Vec<Vec<u64>> = simhash_methods
                .iter()
                .map(|(_, o, with_title)| {
                    pool.iter()
                        .map(|t| {
                            let title = with_title.then_some(t.title.as_str());
                            exp::simhash(&t.body, title, o, &mut no_interrupt).unwrap_or(0)
                        })
                        .collect()
                })
                .collect();
            let sh: Vec<Vec<u64>> = pool.iter().map(|t| char5(&t.body)).collect();
            let sigs: Vec<Vec<u64>> = sh.iter().map(|s| minhash::minhash(s, 128).unwrap()).collect();
            let mut hist = vec![[0u64; 65]; fps.len()];
            let mut mh_hist = [0u64; 129];
            let (mut pairs, mut excluded) = (0u64, 0u64);
            for i in 0..n {
                for j in i + 1..n {
                    let same = sigs[i].iter().zip(&sigs[j]).filter(|(x, y)| x == y).count();
                    if same >= 32 && minhash::jaccard(&sh[i], &sh[j]) > 0.5 {
                        excluded += 1;
                        continue;
                    }
                    pairs += 1;
                    mh_hist[same] += 1;
                    for (m, f) in fps.iter().enumerate() {
                        hist[m][hamming(f[i], f[j]) as usize] += 1;
                    }
                }
            }
            let names = simhash_methods.iter().map(|x| x.0);
            for (m, name) in names.enumerate() {
                let mut cum = 0;
                for k in 0..=32 {
                    cum += hist[m][k];
                    writeln!(out, "{lname}\t{bname}\t{name}\t{k}\t{pairs}\t{cum}").unwrap();
                }
            }
            for t in 1..20 {
                let t = t as f64 * 0.05;
                let flagged: u64 = (0..=128).filter(|&s| s as f64 / 128.0 >= t - 1e-9).map(|s| mh_hist[s]).sum();
                writeln!(out, "{lname}\t{bname}\tsimdup_minhash128\t{t:.2}\t{pairs}\t{flagged}").unwrap();
            }
            eprintln!("{lname} {bname}: {n} texts, {pairs} pairs, {excluded} reposts excluded ({})", ftime(t0));
        }
    }
    out.flush().unwrap();
    eprintln!("wrote {path} ({})", ftime(t0));
}
