//! Golden vectors of fingerprint format 1: input → exact fingerprint.
//!
//! Stored fingerprints, generated columns and indexes depend on these values. If this test
//! fails, the fingerprint format changed: that is only allowed on purpose, together with a
//! bump of `FORMAT_VERSION` and an upgrade note in the README.

use simdup_core::{simhash, FORMAT_VERSION};

fn fixture(path: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

const STRINGS: &[(&str, Option<u64>)] = &[
    ("南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。", Some(GOLD_ZH)),
    ("The quick brown fox jumps over the lazy dog near the river bank.", Some(GOLD_EN)),
    ("Rust 语言的 PostgreSQL 扩展 simdup 用 SimHash 查找近似重复文档。", Some(GOLD_MIXED)),
    ("数据库", Some(GOLD_ONE_WORD)),
    ("", None),
    ("。。。！？", None),
    ("😀 🎉 © ®", None),
];

const GOLD_ZH: u64 = 0x34ae_5ab6_0ecd_24c3;
const GOLD_EN: u64 = 0x8a2d_144d_39e3_160b;
const GOLD_MIXED: u64 = 0xd558_db0f_17b6_da9c;
const GOLD_ONE_WORD: u64 = 0x8d19_eb3f_d005_0a4f;

const FILES: &[(&str, u64)] = &[
    ("en/01.edited.txt", 0x3e1a134088c7e86a),
    ("en/01.txt", 0xbe1f11608847e8ea),
    ("en/02.edited.txt", 0x9c81cd0471d80ac5),
    ("en/02.txt", 0x9c81c50451dc088f),
    ("en/03.edited.txt", 0x9b7c3fd68bd73249),
    ("en/03.txt", 0x9b7c3fd688d72249),
    ("en/04.edited.txt", 0x9c0dbb2056598a14),
    ("en/04.txt", 0x9c093f2014598a30),
    ("en/05.edited.txt", 0xbac2204a95c7ae0e),
    ("en/05.txt", 0xbefab24a95c72e0e),
    ("mixed.txt", 0xb87b5774b7306001),
    ("zh/01.edited.txt", 0xa3d9e41551351c58),
    ("zh/01.txt", 0xa3c97435f1355c38),
    ("zh/02.edited.txt", 0xc8e9499b17051a33),
    ("zh/02.txt", 0xc8e9c99b16151236),
    ("zh/03.edited.txt", 0x95ddc8e702339b1a),
    ("zh/03.txt", 0x91d4c4e502339f1a),
    ("zh/04.edited.txt", 0x109b9dafe05d2a78),
    ("zh/04.txt", 0x10da89afe04d3e78),
    ("zh/05.edited.txt", 0x13b6243ea3bf554a),
    ("zh/05.txt", 0x1396243ca3bbd70e),
    ("zh/06.edited.txt", 0xbd752bbd4e574824),
    ("zh/06.txt", 0xbd7d2bb15e534005),
    ("zh/07.edited.txt", 0xa97341f7824d5ce3),
    ("zh/07.txt", 0xab7141d7824d5de2),
    ("zh/08.edited.txt", 0xb0b22acb0c0912cc),
    ("zh/08.txt", 0xa0b2aacf8c0956cc),
    ("zh/09.edited.txt", 0x7dd9cd1eb1105c9d),
    ("zh/09.txt", 0x7df9cd0eb1305c9d),
    ("zh/10.edited.txt", 0x1cd3395610f2ff29),
    ("zh/10.txt", 0x1ed7395600f2f539),
];

#[test]
fn format_version() {
    assert_eq!(FORMAT_VERSION, 1);
}

#[test]
fn strings() {
    let mut bad = Vec::new();
    for (text, want) in STRINGS {
        let got = simhash(text);
        if got != *want {
            bad.push(format!(
                "{text:?}: got {:?}, want {:?}",
                got.map(|v| format!("{v:#018x}")),
                want.map(|v| format!("{v:#018x}"))
            ));
        }
    }
    assert!(bad.is_empty(), "fingerprint format changed:\n{}", bad.join("\n"));
}

#[test]
fn files() {
    let mut bad = Vec::new();
    for (path, want) in FILES {
        let got = simhash(&fixture(path)).unwrap();
        if got != *want {
            bad.push(format!("(\"{path}\", {got:#018x}),  // want {want:#018x}"));
        }
    }
    assert!(bad.is_empty(), "fingerprint format changed:\n{}", bad.join("\n"));
}

#[test]
fn one_word_is_its_hash() {
    // A text of one feature has that feature's hash as its fingerprint.
    assert_eq!(simhash("数据库"), Some(simdup_core::features::feature_hash("数据库")));
}

// ---------------------------------------------------------------------------------------------
// Schemes (simdup_core::scheme, SQL simhash(body, title, scheme)): as much a storage format as
// format 1. The default scheme with a title is format 1 of title + "\n" + body.

const ZH_BODY: &str = "南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。综上所述，它是一座重要的桥梁。";
const EN_BODY: &str =
    "The quick brown fox jumps over the lazy dog near the river bank. However, the dog did not wake up.";
const MIXED_BODY: &str = "Rust 语言的 PostgreSQL 扩展 simdup 用 SimHash 查找近似重复文档。";

const SCHEMES: &[(&str, Option<&str>, &str, u64)] = &[
    (ZH_BODY, Some("南京长江大桥通车"), "default", 0x2cae_5af2_42a5_2c63),
    (ZH_BODY, Some("南京长江大桥通车"), "title", 0x3c9e_19f3_0ced_2c4b),
    (ZH_BODY, Some("南京长江大桥通车"), "improved", 0x349e_1873_0cad_2c63),
    (EN_BODY, Some("Quick fox, lazy dog"), "default", 0xae2d_945d_39b7_340b),
    (EN_BODY, Some("Quick fox, lazy dog"), "title", 0xaa2d_8d5c_a7f3_348f),
    (EN_BODY, Some("Quick fox, lazy dog"), "improved", 0x24e5_945c_21b7_740e),
    (MIXED_BODY, None, "default", GOLD_MIXED),
    (MIXED_BODY, None, "title", GOLD_MIXED),
    (MIXED_BODY, None, "improved", 0xd120_9a2f_5fe6_da9e),
    ("数据库", Some("数据库"), "improved", GOLD_ONE_WORD),
];

#[test]
fn schemes() {
    use simdup_core::scheme::{simhash_scheme, Scheme};
    let mut bad = Vec::new();
    for (body, title, scheme, want) in SCHEMES {
        let s: Scheme = scheme.parse().unwrap();
        let got = simhash_scheme(body, *title, s, &mut simdup_core::no_interrupt).unwrap();
        if got != *want {
            bad.push(format!("{scheme} {title:?} {body:?}: got {got:#018x}, want {want:#018x}"));
        }
    }
    assert!(bad.is_empty(), "scheme fingerprints changed:\n{}", bad.join("\n"));
    // The default scheme is format 1: of the body alone, or of title + "\n" + body.
    for (body, title, _, _) in SCHEMES {
        let d = simhash_scheme(body, *title, Scheme::Default, &mut simdup_core::no_interrupt);
        let want = match title {
            Some(t) => simhash(&format!("{t}\n{body}")),
            None => simhash(body),
        };
        assert_eq!(d, want);
        assert_eq!(simhash_scheme(body, None, Scheme::Default, &mut simdup_core::no_interrupt), simhash(body));
    }
}
