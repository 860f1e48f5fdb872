//! The paths the SQL layer (crate `simdup`, src/) uses: they must keep compiling when modules
//! of the core move.

#[allow(unused_imports)]
use simdup_core::{
    blocks::{ball_size, block, key, unkey, Layout, BLOCKS},
    components::Components,
    features::{features, preload, Feature, Params},
    hamming,
    leaders::leaders,
    locks::lock_stripes,
    minhash::{
        band_threshold, bands, choose_bands, jaccard, minhash_jaccard, minhash_with, s_curve, shingles, to_set,
        word_shingles, MAX_PERMUTATIONS, MAX_SHINGLE_SIZE, MINHASH_FORMAT_VERSION,
    },
    pairs::{near_pairs, near_pairs_threads},
    scheme::{features_with, Scheme, UnknownScheme},
    simhash_scheme, simhash_with, Feature as RootFeature, Params as RootParams, Scheme as RootScheme,
    DEFAULT_MAX_DISTANCE, FORMAT_VERSION,
};

#[test]
fn sql_layer_paths() {
    let p = Params::default();
    assert_eq!(p, RootParams::default());
    let s: Scheme = "improved".parse().unwrap();
    let _: Vec<Feature> = features_with("数据库", Some("标题"), &s.options(), true, &mut simdup_core::no_interrupt);
    assert!("nope".parse::<Scheme>().is_err_and(|e: UnknownScheme| e.0 == "nope"));
    assert_eq!(
        simhash_with("数据库", &p, &mut simdup_core::no_interrupt),
        simhash_scheme("数据库", None, RootScheme::Default, &mut simdup_core::no_interrupt)
    );
    let _ = (FORMAT_VERSION, DEFAULT_MAX_DISTANCE, lock_stripes(1, 10), hamming(1, 2));
    let _: Option<RootFeature> = None;
}
