//! Values pinned while the core was restructured: lock stripes, the three schemes'
//! fingerprints and weighted features, and MinHash word shingles over varied texts. Computed
//! from the code before the move; they must never change.

use simdup_core::features::features;
use simdup_core::locks::lock_stripes;
use simdup_core::no_interrupt;
use simdup_core::scheme::{features_with, simhash_scheme, Scheme};
use simdup_core::similarity::minhash::{shingles, word_shingles};

/// Order-sensitive fold of values into one u64 (SplitMix64 finalizer).
fn fold(acc: u64, x: u64) -> u64 {
    let mut z = (acc ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const TEXTS: &[&str] = &[
    "南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。综上所述，它是一座重要的桥梁。",
    "The quick brown fox jumps over the lazy dog near the river bank. However, the dog did not wake up.",
    "Rust 语言的 PostgreSQL 扩展 simdup 用 SimHash 查找近似重复文档。ＡＢＣ１２３ Straße",
    "数据库",
    "今天天气很好，我们去公园散步。然而下午下雨了，所以我们回家了。总之，这是愉快的一天。",
    "Photosynthesis converts light energy into chemical energy; therefore plants grow. Teh qiuck borwn fxo.",
    "【新华网讯】记者 张三 报道：2024年第一季度国内生产总值同比增长5.3%，比上年四季度环比增长1.6%。",
    "Ünïcödé façade naïve café — ＦＵＬＬ ｗｉｄｔｈ text, and emoji 😀 and the end.",
    "乒乓球拍卖完了 结婚的和尚未结婚的 南京市长江大桥 研究生命的起源 工信处女干事每月经过下属科室",
    "x",
];

const TITLES: &[Option<&str>] =
    &[None, Some(""), Some("南京长江大桥通车"), Some("Quick fox, lazy dog"), Some("数据库 天气 公园")];

#[test]
fn lock_stripes_unchanged() {
    let mut acc = 0u64;
    let mut x = 0x0123_4567_89ab_cdefu64;
    for i in 0..2000u64 {
        x = fold(x, i);
        for k in [0, 1, 3, 5, 6, 8, 10, 12, 16, 20, 31, 63, 64] {
            for s in lock_stripes(x, k) {
                acc = fold(acc, u64::from(s));
            }
            acc = fold(acc, 0xffff);
        }
    }
    assert_eq!(acc, 0x1e3f_6ad0_665c_1f09, "lock stripes digest {acc:#018x}");
}

#[test]
fn schemes_and_features_unchanged() {
    let mut fps = 0u64;
    let mut feats = 0u64;
    for body in TEXTS {
        for title in TITLES {
            for s in Scheme::ALL {
                fps = fold(fps, simhash_scheme(body, *title, s, &mut no_interrupt).unwrap_or(1));
                for f in features_with(body, *title, &s.options(), true, &mut no_interrupt) {
                    feats = fold(feats, f.hash);
                    feats = fold(feats, f.weight.to_bits());
                    feats = fold(feats, u64::from(f.idf.to_bits()));
                    feats = fold(feats, u64::from(f.count));
                    for b in f.token.bytes() {
                        feats = fold(feats, u64::from(b));
                    }
                }
            }
        }
        for f in features(body, true, &mut no_interrupt) {
            feats = fold(feats, f.weight.to_bits() ^ f.hash);
        }
    }
    assert_eq!(
        (fps, feats),
        (0x8bfe_ddbd_995e_af60, 0xb65b_4550_f472_55e0),
        "scheme digest {fps:#018x}, features digest {feats:#018x}"
    );
}

#[test]
fn shingles_unchanged() {
    let mut acc = 0u64;
    for body in TEXTS {
        for k in [1, 2, 3, 5] {
            for h in word_shingles(body, k, &mut no_interrupt).unwrap() {
                acc = fold(acc, h);
            }
            for h in shingles(body, k, &mut no_interrupt).unwrap() {
                acc = fold(acc, h);
            }
        }
    }
    assert_eq!(acc, 0xf379_bd5d_28ab_45c3, "shingles digest {acc:#018x}");
}

/// The containment index stores `containment_keys(..).entry()` (`_simdup_similar_keys`): its
/// values, the rarest-first order and the common-shingle table behind it are part of the index
/// format. A change here needs a REINDEX of every containment index, and so a new version.
#[test]
fn containment_keys_unchanged() {
    use simdup_core::similarity::containment_keys;
    let mut acc = 0u64;
    for body in TEXTS {
        let set = shingles(body, 5, &mut no_interrupt).unwrap();
        for c in [0.5, 0.7, 0.8, 1.0] {
            let keys = containment_keys(&set, 5, c);
            for v in keys.entry().into_iter().chain([0]).chain(keys.probe()) {
                acc = fold(acc, v as u64);
            }
            acc = fold(acc, 0xffff);
        }
    }
    assert_eq!(acc, 0xaeda_8822_9363_e0cd, "containment keys digest {acc:#018x}");
}
