//! Property tests at scale on arbitrary input ("fuzzing" on stable Rust): nothing panics, the
//! results are deterministic and well-formed, and chunked processing equals whole processing.
//!
//! PROPTEST_CASES raises the number of cases (default 512 here; CI runs the default).
//! `scripts/test.sh core` fixes PROPTEST_RNG_SEED, so CI explores the same cases on every run;
//! a plain `cargo test` draws new ones.

use proptest::prelude::*;
use simdup_core::features::features;
use simdup_core::normalize::{chunks, normalize};
use simdup_core::simhash::fingerprint;
use simdup_core::similarity::minhash::{minhash, shingles, word_shingles};
use simdup_core::{no_interrupt, simhash};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    }
}

/// Text mixing scripts, combining marks, right-to-left text, emoji, controls and full-width forms.
fn messy_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "南京市长江大桥",
        "，",
        "。",
        "ＡＢＣ１２３",
        "hello",
        " ",
        "\n",
        "\t",
        "\u{0}",
        "\u{7}",
        "\u{1b}",
        "e\u{301}",
        "\u{301}\u{302}\u{303}",
        "مرحبا",
        "שלום",
        "\u{200f}",
        "\u{202e}",
        "😀",
        "👨‍👩‍👧",
        "🇨🇳",
        "\u{fe0f}",
        "\u{200d}",
        "ﬁ",
        "①",
        "㈱",
        "ｶﾞ",
        "\u{1100}\u{1161}",
        "𠀀",
        "\u{feff}",
        "……",
        "\u{ffff}",
        "The quick brown fox",
        "2024年",
        "3.14",
        "C++",
        "a.b.c",
        "#tag",
        "%",
        "—",
    ]);
    prop::collection::vec(prop_oneof![pieces.prop_map(String::from), any::<String>()], 0..64).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn simhash_never_panics_and_is_deterministic(s in messy_text()) {
        let a = simhash(&s);
        prop_assert_eq!(a, simhash(&s));
        // NULL exactly when there is no feature.
        let f = features(&s, false, &mut no_interrupt);
        prop_assert_eq!(a.is_none(), f.iter().all(|x| x.weight <= 0.0));
        // The allocation-free path (reused per-thread tally, prefetched flat IDF table, i32
        // lanes) gives what the plain path over `features` gives.
        prop_assert_eq!(a, fingerprint(&f));
    }

    #[test]
    fn hot_path_equals_plain_path_on_long_text(parts in prop::collection::vec(messy_text(), 1..40)) {
        // Longer texts: the tally grows past its first size and is reused from a larger text.
        let s = parts.concat().repeat(7);
        let f = features(&s, false, &mut no_interrupt);
        prop_assert_eq!(simhash(&s), fingerprint(&f));
        prop_assert_eq!(simhash(&parts[0]), fingerprint(&features(&parts[0], false, &mut no_interrupt)));
    }

    #[test]
    fn fingerprint_sees_only_the_normalized_text(s in messy_text()) {
        // Format 1 normalizes in one pass (NFKC, then lower case), which is not idempotent where
        // lower case makes a new composition (pinned in normalize.rs). Where a second pass
        // changes nothing, the normalized text has the text's fingerprint; and the second pass
        // is a fixed point.
        let once = normalize(&s);
        let twice = normalize(&once);
        if twice == once {
            prop_assert_eq!(simhash(&once), simhash(&s));
        }
        prop_assert_eq!(normalize(&twice), twice);
    }

    #[test]
    fn chunks_partition_any_text(s in messy_text(), target in 1usize..64) {
        let pieces: Vec<&str> = chunks(&s, target).collect();
        prop_assert_eq!(pieces.concat(), s.clone());
        prop_assert!(pieces.iter().all(|p| !p.is_empty()));
    }

    #[test]
    fn minhash_family_never_panics(s in messy_text(), k in 1usize..8, n in 1usize..64) {
        let sh = shingles(&s, k, &mut no_interrupt).unwrap();
        prop_assert!(sh.windows(2).all(|w| w[0] < w[1]));
        let sig = minhash(&sh, n).unwrap();
        prop_assert_eq!(sig.len(), if sh.is_empty() { 0 } else { n });
        let _ = word_shingles(&s, k, &mut no_interrupt).unwrap();
    }
}
