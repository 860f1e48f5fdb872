//! The ground floor of the core: the feature hash, the SplitMix64 mixer, and maps keyed by
//! hashes. Depends on nothing else in the crate.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Seed of the xxh3-64 feature hash. Part of the fingerprint format.
pub const FEATURE_SEED: u64 = 0x7369_6d64_7570_0001; // "simdup" 0001

/// The xxh3-64 hash of a normalized token. Part of the fingerprint format.
#[inline]
pub fn feature_hash(token: &str) -> u64 {
    xxh3_64_with_seed(token.as_bytes(), FEATURE_SEED)
}

/// SplitMix64's increment (the golden ratio × 2^64, odd).
pub const SPLITMIX_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// First multiplier of [`mix64`].
pub const MIX_C1: u64 = 0xbf58_476d_1ce4_e5b9;

/// Second multiplier of [`mix64`].
pub const MIX_C2: u64 = 0x94d0_49bb_1331_11eb;

/// The SplitMix64 finalizer (Steele, Lea, Flood 2014; Stafford's "Mix13" constants): a
/// bijection of `u64` with full avalanche. Part of the MinHash format and of the lock stripes.
#[inline(always)]
pub const fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(MIX_C1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX_C2);
    z ^ (z >> 31)
}

/// A hasher for keys that are already uniformly distributed 64-bit hashes.
#[derive(Default, Clone, Copy)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are used; fold anything else deterministically.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by feature hashes.
pub type HashKeyed<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix64_is_splitmix64() {
        // The first outputs of SplitMix64 seeded with 0 (Vigna's reference implementation).
        let mut s = 0u64;
        let mut next = || {
            s = s.wrapping_add(SPLITMIX_GAMMA);
            mix64(s)
        };
        assert_eq!(next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(next(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn identity_keys() {
        let mut m: HashKeyed<u32> = HashKeyed::default();
        m.insert(feature_hash("数据库"), 1);
        assert_eq!(m.get(&feature_hash("数据库")), Some(&1));
        assert_eq!(m.get(&feature_hash("数据")), None);
    }
}
