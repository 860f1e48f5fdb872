//! Golden vectors and properties of the MinHash format (simdup_core::similarity::minhash).

use std::collections::HashSet;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use simdup_core::no_interrupt;
use simdup_core::similarity::minhash::*;
use xxhash_rust::xxh3::xxh3_64_with_seed;

fn sh(text: &str, k: usize) -> Vec<u64> {
    shingles(text, k, &mut no_interrupt).unwrap()
}

fn wsh(text: &str, k: usize) -> Vec<u64> {
    word_shingles(text, k, &mut no_interrupt).unwrap()
}

// ------------------------------------------------------------------------------------------
// Golden vectors: these pin the storage format. If one fails, stored values would change:
// bump MINHASH_FORMAT_VERSION and document the upgrade instead of editing the numbers.
// ------------------------------------------------------------------------------------------

#[test]
fn golden_print() {
    // Helper to regenerate the vectors: cargo test --test minhash_props golden_print -- --nocapture
    println!("mix64(0) = {:#018x}, mix64(1) = {:#018x}", mix64(0), mix64(1));
    println!("seeds = {:#018x?}", permutation_seeds(4));
    println!("en = {:#018x?}", sh("Hello,  World!", 3));
    println!("zh = {:#018x?}", sh("今天天气很好，我们去公园散步。", 2));
    println!("words = {:#018x?}", wsh("我们在北京，We love Beijing 2024!", 2));
    let sig = minhash(&sh("Hello,  World!", 3), 16).unwrap();
    println!("sig = {:#018x?}", sig);
    println!("bands = {:?}", bands(&sig, 4, 4).unwrap());
}

#[test]
fn golden_constants() {
    assert_eq!(MINHASH_FORMAT_VERSION, 1);
    assert_eq!(SHINGLE_SEED, 0x7369_6d64_7570_0002);
    assert_eq!(WORD_SHINGLE_SEED, 0x7369_6d64_7570_0003);
    assert_eq!(MINHASH_SEED, 0x7369_6d64_7570_0004);
    assert_eq!(BAND_SEED, 0x7369_6d64_7570_0005);
    assert_eq!(WORD_SEPARATOR, '\u{1f}');
    assert_eq!(mix64(0), 0);
    assert_eq!(mix64(1), GOLDEN_MIX64_1);
    assert_eq!(permutation_seeds(4), GOLDEN_SEEDS);
}

const GOLDEN_MIX64_1: u64 = 0x5692_161d_100b_05e5;
const GOLDEN_SEEDS: [u64; 4] =
    [0x998b_ad27_bb0e_8a16, 0x7993_1791_7048_c185, 0x983a_8be9_b6c1_3211, 0x2b99_9f07_5b92_5097];

#[test]
fn golden_english_shingles() {
    let s = sh("Hello,  World!", 3);
    // "hello, world!" has 13 characters: 11 distinct 3-shingles.
    assert_eq!(s.len(), 11);
    assert!(s.contains(&xxh3_64_with_seed(b"hel", SHINGLE_SEED)));
    assert!(s.contains(&xxh3_64_with_seed(b", w", SHINGLE_SEED)));
    assert_eq!(s, GOLDEN_EN);
}

const GOLDEN_EN: [u64; 11] = [
    0x03f5_d525_2ed2_8fd6,
    0x0c96_f067_8ff0_590b,
    0x11eb_5171_a476_45b8,
    0x3b55_8ea2_2158_1d95,
    0x76da_200a_9d1c_2c2b,
    0x8aa9_27cf_ea7e_efc7,
    0xab41_bcb5_482a_1631,
    0xb413_808e_3283_6c93,
    0xb874_b1fe_4c6b_af09,
    0xba92_bd88_6ddf_36cf,
    0xc8c9_8e4f_7bb7_5e77,
];

#[test]
fn golden_chinese_shingles() {
    let s = sh("今天天气很好，我们去公园散步。", 2);
    assert_eq!(s.len(), 14);
    assert!(s.contains(&xxh3_64_with_seed("天气".as_bytes(), SHINGLE_SEED)));
    assert_eq!(s, GOLDEN_ZH);
}

const GOLDEN_ZH: [u64; 14] = [
    0x0292_6567_a3dd_f4f1,
    0x0f07_3e73_8fed_7a4f,
    0x4ea7_da95_0889_81d3,
    0x54ad_06da_338f_b561,
    0x652b_0bf3_86d0_7fd0,
    0x8277_755a_d0c6_b133,
    0x9e0f_dff8_17ae_51ef,
    0x9f71_d483_a016_f02f,
    0xa3cd_9b93_6cf4_910b,
    0xb189_8005_8518_d92e,
    0xba92_1cee_9897_8fd1,
    0xc0fc_5ffb_533a_1df7,
    0xeb07_181a_76f3_563c,
    0xf5a1_4cd0_c6ff_cead,
];

#[test]
fn golden_word_shingles() {
    let s = wsh("我们在北京，We love Beijing 2024!", 2);
    assert!(s.contains(&xxh3_64_with_seed("我们\u{1f}在".as_bytes(), WORD_SHINGLE_SEED)));
    assert!(s.contains(&xxh3_64_with_seed("beijing\u{1f}2024".as_bytes(), WORD_SHINGLE_SEED)));
    assert_eq!(s, GOLDEN_WORDS);
}

const GOLDEN_WORDS: [u64; 6] = [
    0x0616_aa2a_cc40_ee7d,
    0x3bea_de1a_6141_10a1,
    0x40b1_b31d_4bd7_7113,
    0x6cdb_5a2c_f813_b3da,
    0xac61_66eb_820b_d4ad,
    0xeed9_659b_3981_165a,
];

#[test]
fn golden_signature_and_bands() {
    let sig = minhash(&sh("Hello,  World!", 3), 16).unwrap();
    assert_eq!(sig, GOLDEN_SIG);
    assert_eq!(bands(&sig, 4, 4).unwrap(), GOLDEN_BANDS);
}

// Checked independently (Python, from GOLDEN_EN and the documented permutation family).
const GOLDEN_SIG: [u64; 16] = [
    0x2fbe_fb18_e1fc_615e,
    0x270d_c3cb_1ee8_7947,
    0x337b_d788_c491_5ec1,
    0x0468_dec7_6615_d060,
    0x2e07_3a9c_37cc_ba76,
    0x0ae9_0298_d1b4_e471,
    0x1f6e_669f_4bdf_4ef8,
    0x37ea_136b_973e_aa0b,
    0x1973_8229_3bc5_0be8,
    0x1123_739a_4ce9_1a29,
    0x3481_3afc_6ab0_2fc4,
    0x00f1_0c5f_b09f_66cc,
    0x2120_378e_9dc3_a223,
    0x05ce_1782_38ca_ebaa,
    0x1072_7758_3c94_5c7b,
    0x1ac8_a259_c17e_97f8,
];
const GOLDEN_BANDS: [i64; 4] = [-8960174512558894210, -8817340613137227017, 5139084212919271726, -8866177924662317725];

// ------------------------------------------------------------------------------------------
// Shingles
// ------------------------------------------------------------------------------------------

/// Shingles computed the obvious way on the whole text (no pieces, no streaming).
fn reference_chars(text: &str, k: usize) -> Vec<u64> {
    let norm = simdup_core::normalize::normalize(text);
    let chars: Vec<char> = norm.split_whitespace().collect::<Vec<_>>().join(" ").chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let h = |cs: &[char]| xxh3_64_with_seed(cs.iter().collect::<String>().as_bytes(), SHINGLE_SEED);
    if chars.len() < k {
        return vec![h(&chars)];
    }
    to_set(chars.windows(k).map(h).collect())
}

#[test]
fn short_and_empty_text() {
    assert!(sh("", 3).is_empty());
    assert!(sh(" \t\n\u{3000}\u{a0} ", 3).is_empty());
    assert_eq!(sh("  Ab  ", 5), vec![xxh3_64_with_seed(b"ab", SHINGLE_SEED)]);
    assert_eq!(sh("a  b", 5), vec![xxh3_64_with_seed(b"a b", SHINGLE_SEED)]);
    assert_eq!(sh("abc", 3), vec![xxh3_64_with_seed(b"abc", SHINGLE_SEED)]);
    assert_eq!(sh("中", 1), vec![xxh3_64_with_seed("中".as_bytes(), SHINGLE_SEED)]);
    assert!(wsh("", 2).is_empty());
    assert!(wsh("。，！？ …… 😀", 2).is_empty());
    assert_eq!(wsh("北京", 3), vec![xxh3_64_with_seed("北京".as_bytes(), WORD_SHINGLE_SEED)]);
}

#[test]
fn normalization_applies() {
    assert_eq!(sh("ＨＥＬＬＯ　ｗｏｒｌｄ", 4), sh("hello world", 4));
    assert_eq!(wsh("ＨＥＬＬＯ　ｗｏｒｌｄ", 1), wsh("hello world", 1));
}

#[test]
fn bad_arguments_are_errors() {
    assert_eq!(shingles("abc", 0, &mut no_interrupt), Err(MinHashError::ShingleSize(0)));
    assert_eq!(shingles("abc", MAX_SHINGLE_SIZE + 1, &mut no_interrupt), Err(MinHashError::ShingleSize(257)));
    assert_eq!(word_shingles("abc", 0, &mut no_interrupt), Err(MinHashError::ShingleSize(0)));
    assert_eq!(minhash(&[1, 2], 0), Err(MinHashError::Permutations(0)));
    assert_eq!(minhash(&[1, 2], MAX_PERMUTATIONS + 1), Err(MinHashError::Permutations(4097)));
    assert_eq!(minhash(&[], 0), Err(MinHashError::Permutations(0)));
    let sig = minhash(&[1, 2, 3], 8).unwrap();
    assert!(bands(&sig, 0, 2).is_err());
    assert!(bands(&sig, 2, 0).is_err());
    assert!(bands(&sig, 3, 3).is_err());
    assert!(bands(&sig, usize::MAX, 2).is_err());
    assert!(bands(&[], 1, 1).is_err());
    assert!(choose_bands(0, 0.5).is_err());
    assert!(choose_bands(128, 0.0).is_err());
    assert!(choose_bands(128, 1.5).is_err());
    assert!(choose_bands(128, f64::NAN).is_err());
    // Messages are meant for SQL users.
    assert_eq!(
        MinHashError::Bands { bands: 3, rows: 3, len: 8 }.to_string(),
        "3 bands of 3 rows need 9 signature values, the signature has 8"
    );
    assert_eq!(MinHashError::ShingleSize(0).to_string(), "shingle size must be between 1 and 256, got 0");
}

#[test]
fn long_text_equals_unchunked() {
    // Several 64 KiB pieces, cut points of every kind, and a run of over 1 MiB without a
    // soft cut point (forcing hard cuts).
    let mut text = String::new();
    for i in 0..4000 {
        text.push_str(&format!("第{i}段：今天天气很好，我们去公园散步。 The quick brown fox {i}!\n\t "));
    }
    text.push_str(&"长江大桥".repeat(100_000));
    text.push_str("  end  ");
    assert!(text.len() > 1_400_000);
    for k in [1, 2, 5, 9] {
        let mut calls = 0;
        let got = shingles(&text, k, &mut || calls += 1).unwrap();
        assert_eq!(got, reference_chars(&text, k), "k = {k}");
        // Once per piece: about 64 KiB, at most 1 MiB when there is no cut point.
        assert_eq!(calls, simdup_core::normalize::chunks(&text, CHUNK_BYTES).count());
        assert!(calls >= 7, "{calls}");
    }
}

#[test]
fn long_word_text_equals_unchunked() {
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("第{i}段：南京市长江大桥于1968年建成通车。 It was built in {i}!\n"));
    }
    let norm = simdup_core::normalize::normalize(&text);
    let toks: Vec<&str> = simdup_core::features::jieba()
        .cut(&norm, false)
        .into_iter()
        .map(|t| t.word)
        .filter(|w| simdup_core::features::is_feature_token(w))
        .collect();
    let want =
        to_set(toks.windows(3).map(|w| xxh3_64_with_seed(w.join("\u{1f}").as_bytes(), WORD_SHINGLE_SEED)).collect());
    assert_eq!(wsh(&text, 3), want);
}

fn ws_run() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        proptest::sample::select(vec![' ', '\t', '\n', '\r', '\u{3000}', '\u{a0}', '\u{2003}']),
        1..4,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn word() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select("ab中文的是，。!x1Ａ".chars().collect::<Vec<_>>()), 1..6)
        .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #[test]
    fn whitespace_edits_do_not_change_shingles(
        words in proptest::collection::vec(word(), 0..20),
        gaps in proptest::collection::vec(ws_run(), 20),
        lead in proptest::option::of(ws_run()),
        trail in proptest::option::of(ws_run()),
        k in 1usize..6,
    ) {
        let plain = words.join(" ");
        let mut edited = lead.unwrap_or_default();
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                edited.push_str(&gaps[i]);
            }
            edited.push_str(w);
        }
        edited.push_str(&trail.unwrap_or_default());
        prop_assert_eq!(sh(&edited, k), sh(&plain, k));
        prop_assert_eq!(wsh(&edited, k), wsh(&plain, k));
        prop_assert_eq!(sh(&plain, k), reference_chars(&plain, k));
    }

    #[test]
    fn shingles_are_sets(text in "\\PC{0,200}", k in 1usize..6) {
        prop_assert!(is_set(&sh(&text, k)));
        prop_assert!(is_set(&wsh(&text, k)));
    }
}

// ------------------------------------------------------------------------------------------
// Jaccard
// ------------------------------------------------------------------------------------------

fn naive_jaccard(a: &[u64], b: &[u64]) -> f64 {
    let a: HashSet<u64> = a.iter().copied().collect();
    let b: HashSet<u64> = b.iter().copied().collect();
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

fn small_set() -> impl Strategy<Value = Vec<u64>> {
    // A small universe, so that sets overlap; values spread over the whole u64 range.
    proptest::collection::vec(0u64..64, 0..40)
        .prop_map(|v| to_set(v.into_iter().map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect()))
}

proptest! {
    #[test]
    fn jaccard_properties(a in small_set(), b in small_set()) {
        let j = jaccard(&a, &b);
        prop_assert!((0.0..=1.0).contains(&j));
        prop_assert_eq!(j, jaccard(&b, &a));
        prop_assert_eq!(jaccard(&a, &a), 1.0);
        prop_assert!((j - naive_jaccard(&a, &b)).abs() < 1e-12);
        prop_assert_eq!(intersection_size(&a, &b), intersection_size(&b, &a));
    }

    #[test]
    fn containment_properties(a in small_set(), b in small_set()) {
        let c = containment(&a, &b);
        prop_assert!((0.0..=1.0).contains(&c));
        prop_assert_eq!(c, containment(&b, &a));
        // Never below Jaccard (|A ∪ B| >= min(|A|, |B|)), 1 when one set contains the other.
        prop_assert!(c >= jaccard(&a, &b));
        let mut both = a.clone();
        both.extend_from_slice(&b);
        prop_assert_eq!(containment(&a, &to_set(both)), 1.0);
        let naive = if a.is_empty() || b.is_empty() {
            1.0
        } else {
            let (x, y): (HashSet<u64>, HashSet<u64>) = (a.iter().copied().collect(), b.iter().copied().collect());
            x.intersection(&y).count() as f64 / x.len().min(y.len()) as f64
        };
        prop_assert!((c - naive).abs() < 1e-12);
    }

    #[test]
    fn minhash_order_duplicates_prefix(a in small_set(), n in 1usize..64) {
        let sig = minhash(&a, n).unwrap();
        if a.is_empty() {
            prop_assert!(sig.is_empty());
        } else {
            let mut shuffled: Vec<u64> = a.iter().rev().copied().collect();
            shuffled.extend_from_slice(&a);
            prop_assert_eq!(&minhash(&shuffled, n).unwrap(), &sig);
            let longer = minhash(&a, n + 7).unwrap();
            prop_assert_eq!(&longer[..n], &sig[..]);
            // Every value is the image of some element of the set.
            for (i, s) in permutation_seeds(n).iter().enumerate() {
                prop_assert!(a.iter().any(|&x| permute(x, *s) == sig[i]));
            }
        }
    }
}

#[test]
fn jaccard_edge_cases() {
    assert_eq!(jaccard(&[], &[]), 1.0);
    assert_eq!(jaccard(&[], &[1]), 0.0);
    assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
    assert_eq!(jaccard(&[0, u64::MAX], &[u64::MAX]), 0.5);
}

#[test]
fn containment_cases() {
    assert_eq!(containment(&[], &[]), 1.0);
    assert_eq!(containment(&[], &[1]), 1.0);
    assert_eq!(containment(&[1, 2, 3], &[2, 3, 4]), 2.0 / 3.0);
    // A set inside a larger one: containment 1, Jaccard 0.25.
    assert_eq!(containment(&[2, 3], &[1, 2, 3, 4, 5, 6, 7, 8]), 1.0);
    assert_eq!(jaccard(&[2, 3], &[1, 2, 3, 4, 5, 6, 7, 8]), 0.25);
    assert_eq!(containment(&[1, 2], &[3, 4]), 0.0);
}

#[test]
fn minhash_jaccard_cases() {
    assert_eq!(minhash_jaccard(&[], &[]), None);
    assert_eq!(minhash_jaccard(&[1, 2], &[1]), None);
    assert_eq!(minhash_jaccard(&[1, 2, 3, 4], &[1, 0, 3, 0]), Some(0.5));
    let a = minhash(&[1, 2, 3], 64).unwrap();
    let b = minhash(&[4, 5, 6], 64).unwrap();
    assert_eq!(minhash_jaccard(&a, &a), Some(1.0));
    assert_eq!(minhash_jaccard(&a, &b), Some(0.0)); // permutations are bijections
}

// ------------------------------------------------------------------------------------------
// MinHash accuracy
// ------------------------------------------------------------------------------------------

/// Two sets with |A ∩ B| = common, |A \ B| = only_a, |B \ A| = only_b, from a generator of
/// distinct values `gen(i)`.
fn pair(common: usize, only_a: usize, only_b: usize, gen: impl Fn(u64) -> u64) -> (Vec<u64>, Vec<u64>, f64) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut i = 0u64;
    for _ in 0..common {
        a.push(gen(i));
        b.push(gen(i));
        i += 1;
    }
    for _ in 0..only_a {
        a.push(gen(i));
        i += 1;
    }
    for _ in 0..only_b {
        b.push(gen(i));
        i += 1;
    }
    let j = common as f64 / (common + only_a + only_b) as f64;
    (to_set(a), to_set(b), j)
}

proptest! {
    #![proptest_config(Config { cases: 300, rng_seed: RngSeed::Fixed(0x5eed_0001), ..Config::default() })]

    #[test]
    fn estimate_within_four_sigma(
        common in 0usize..300,
        only_a in 0usize..300,
        only_b in 0usize..300,
        salt in any::<u64>(),
        structured in any::<bool>(),
        n in prop_oneof![Just(64usize), Just(128), Just(256)],
    ) {
        prop_assume!(common + only_a + only_b > 0);
        // Random-looking values (like real shingle hashes), or consecutive integers (worst
        // case for a weak permutation family).
        let (a, b, j) = if structured {
            pair(common, only_a, only_b, |i| i + (salt >> 40))
        } else {
            pair(common, only_a, only_b, |i| xxh3_64_with_seed(&i.to_le_bytes(), salt))
        };
        prop_assert!((jaccard(&a, &b) - j).abs() < 1e-12);
        if a.is_empty() || b.is_empty() {
            return Ok(());
        }
        let est = minhash_jaccard(&minhash(&a, n).unwrap(), &minhash(&b, n).unwrap()).unwrap();
        let sd = (j * (1.0 - j) / n as f64).sqrt();
        prop_assert!((est - j).abs() <= 4.0 * sd + 1.0 / n as f64, "J = {}, estimate {}, n = {}", j, est, n);
    }
}

/// The errors of many independent estimates look like Binomial(n, J)/n ones: mean 0 and
/// variance J(1−J)/n. Correlated permutations would inflate the variance.
#[test]
fn estimate_errors_are_binomial() {
    let n = 128;
    for structured in [false, true] {
        let mut zs = Vec::new();
        for t in 0..600u64 {
            let common = 20 + (t * 37 % 400) as usize;
            let only_a = 10 + (t * 53 % 300) as usize;
            let only_b = 10 + (t * 71 % 300) as usize;
            let (a, b, j) = if structured {
                pair(common, only_a, only_b, |i| i + t * 100_000)
            } else {
                pair(common, only_a, only_b, |i| xxh3_64_with_seed(&i.to_le_bytes(), t))
            };
            let est = minhash_jaccard(&minhash(&a, n).unwrap(), &minhash(&b, n).unwrap()).unwrap();
            zs.push((est - j) / (j * (1.0 - j) / n as f64).sqrt());
        }
        let m = zs.len() as f64;
        let mean = zs.iter().sum::<f64>() / m;
        let var = zs.iter().map(|z| (z - mean) * (z - mean)).sum::<f64>() / (m - 1.0);
        println!("structured = {structured}: mean z = {mean:.3}, var z = {var:.3}");
        assert!(mean.abs() < 4.0 / m.sqrt(), "mean z = {mean}");
        assert!((0.75..1.25).contains(&var), "var z = {var}");
    }
}

// ------------------------------------------------------------------------------------------
// Bands and the S-curve
// ------------------------------------------------------------------------------------------

#[test]
fn band_index_is_hashed_in() {
    let sig = vec![42u64; 32];
    let b = bands(&sig, 8, 4).unwrap();
    assert_eq!(b.len(), 8);
    assert_eq!(to_set(b.iter().map(|&x| x as u64).collect()).len(), 8);
    // Trailing values beyond bands × rows are ignored; a prefix gives the same bands.
    assert_eq!(bands(&sig[..30], 7, 4).unwrap(), b[..7]);
    // Documented byte layout.
    let mut bytes = 3u64.to_le_bytes().to_vec();
    for _ in 0..4 {
        bytes.extend_from_slice(&42u64.to_le_bytes());
    }
    assert_eq!(b[3], xxh3_64_with_seed(&bytes, BAND_SEED) as i64);
}

#[test]
fn similar_documents_share_bands() {
    let a = sh(&"今天天气很好，我们去公园散步。".repeat(3), 3);
    let text_b = "今天天气很好，我们去公园散步吧。".repeat(3);
    let b = sh(&text_b, 3);
    let (sa, sb) = (minhash(&a, 128).unwrap(), minhash(&b, 128).unwrap());
    let (nb, nr) = choose_bands(128, 0.5).unwrap();
    let (ba, bb) = (bands(&sa, nb, nr).unwrap(), bands(&sb, nb, nr).unwrap());
    assert!(ba.iter().any(|x| bb.contains(x)), "J = {}", jaccard(&a, &b));
    let c = sh("The quick brown fox jumps over the lazy dog.", 3);
    let bc = bands(&minhash(&c, 128).unwrap(), nb, nr).unwrap();
    assert!(!ba.iter().any(|x| bc.contains(x)));
}

#[test]
fn s_curve_shape() {
    assert_eq!(s_curve(0.0, 20, 5), 0.0);
    assert_eq!(s_curve(1.0, 20, 5), 1.0);
    let mut prev = 0.0;
    for i in 0..=100 {
        let y = s_curve(i as f64 / 100.0, 20, 5);
        assert!(y >= prev && (0.0..=1.0).contains(&y));
        prev = y;
    }
    // At the threshold the curve is near 1 − 1/e ≈ 0.63 for large b.
    let t = band_threshold(20, 5);
    assert!((t - 0.549).abs() < 1e-3, "{t}");
    assert!((s_curve(t, 20, 5) - 0.64).abs() < 0.01);
}

#[test]
fn chosen_bands_fit_threshold() {
    for n in [16usize, 64, 128, 256, 512] {
        for t in [0.3, 0.5, 0.7, 0.8, 0.9, 1.0] {
            let (b, r) = choose_bands(n, t).unwrap();
            assert!(b >= 1 && r >= 1 && b * r <= n);
            let bt = band_threshold(b, r);
            println!("n = {n}, t = {t}: {b} bands × {r} rows (uses {}), curve threshold {bt:.3}", b * r);
            assert!((bt - t).abs() < 0.15, "n = {n}, t = {t}: ({b}, {r}) has threshold {bt}");
        }
    }
    assert_eq!(choose_bands(1, 0.5).unwrap(), (1, 1));
    // Deterministic.
    assert_eq!(choose_bands(128, 0.5).unwrap(), choose_bands(128, 0.5).unwrap());
}

// ------------------------------------------------------------------------------------------
// Speed (rough): cargo test --release --test minhash_props speed -- --ignored --nocapture
// ------------------------------------------------------------------------------------------

#[test]
#[ignore]
fn speed() {
    use std::time::Instant;
    let xs: Vec<u64> = (0..2000u64).map(|i| xxh3_64_with_seed(&i.to_le_bytes(), 7)).collect();
    let reps = 2000;
    let t = Instant::now();
    let mut acc = 0u64;
    for r in 0..reps {
        let sig = minhash(&xs[..2000 - (r % 2)], 128).unwrap();
        acc ^= sig[r % 128];
    }
    let per = t.elapsed() / reps as u32;
    println!(
        "minhash 128 perms × 2000 shingles: {per:?} per signature ({:.2} ns per hash), {acc}",
        per.as_nanos() as f64 / 256_000.0
    );

    let text = "今天天气很好，我们去公园散步。The quick brown fox jumps over the lazy dog. ".repeat(20_000);
    let t = Instant::now();
    let s = sh(&text, 5);
    let el = t.elapsed();
    println!(
        "shingles k=5 of {} MB: {el:?} ({:.0} MB/s), {} shingles",
        text.len() / 1_000_000,
        text.len() as f64 / el.as_secs_f64() / 1e6,
        s.len()
    );
    let t = Instant::now();
    let w = wsh(&text, 3);
    let el = t.elapsed();
    println!(
        "word_shingles k=3: {el:?} ({:.0} MB/s), {} shingles",
        text.len() as f64 / el.as_secs_f64() / 1e6,
        w.len()
    );
    for n in [128usize, 1024, 4096] {
        let t = Instant::now();
        let c = choose_bands(n, 0.5).unwrap();
        println!("choose_bands({n}, 0.5) = {c:?} in {:?}", t.elapsed());
    }
}
