//! The candidate check of the pair join: which instructions it is compiled for, and the vector
//! kernels that check four fingerprints against eight (AVX-512) or four (AVX2) at a time.

/// The instructions a candidate check is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Isa {
    /// `count_ones` as the target's baseline compiles it (no POPCNT on plain x86-64).
    Portable,
    #[cfg(target_arch = "x86_64")]
    Popcnt,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// Every path this CPU can run, the fastest last.
    pub(super) fn available() -> Vec<Isa> {
        #[allow(unused_mut)]
        let mut v = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("popcnt") {
                v.push(Isa::Popcnt);
                if std::arch::is_x86_feature_detected!("avx2") {
                    v.push(Isa::Avx2);
                }
            }
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            {
                v.push(Isa::Avx512);
            }
        }
        v
    }

    pub(super) fn detect() -> Isa {
        *Isa::available().last().expect("the portable path is always there")
    }
}

pub(super) const PORTABLE: u8 = 0;
pub(super) const AVX512: u8 = 1;
pub(super) const AVX2: u8 = 2;

/// The loop both vector checks share: the fingerprints of `own` four at a time (then one at a
/// time), each broadcast with `$splat`, against `others` `$width` lanes at a time: `$load(at,
/// lanes)` reads the lanes of `others` from `at` (`lanes`: a bit per lane to read, all of them
/// but in the last run), `$near(va, vb, lanes)` gives the bit mask of the lanes within k, and
/// `hit(a, b)` is called for each.
#[cfg(target_arch = "x86_64")]
macro_rules! sweep_rows {
    ($own:expr, $others:expr, $hit:expr, $width:expr, $splat:expr, $load:expr, $near:expr) => {{
        let (own, others, hit): (&[u64], &[u64], _) = ($own, $others, $hit);
        let mut quads = own.chunks_exact(4);
        for q in &mut quads {
            sweep_rows!(@row [q[0], q[1], q[2], q[3]], others, hit, $width, $splat, $load, $near);
        }
        for &a in quads.remainder() {
            sweep_rows!(@row [a], others, hit, $width, $splat, $load, $near);
        }
    }};
    (@row $a:expr, $others:ident, $hit:ident, $width:expr, $splat:expr, $load:expr, $near:expr) => {{
        let a = $a;
        let va = a.map($splat);
        let n = $others.len();
        let mut at = 0;
        while at + $width <= n {
            sweep_rows!(@step a, va, $others, $hit, at, (1 << $width) - 1, $load, $near);
            at += $width;
        }
        if at < n {
            sweep_rows!(@step a, va, $others, $hit, at, (1 << (n - at)) - 1, $load, $near);
        }
    }};
    (@step $a:ident, $va:ident, $others:ident, $hit:ident, $at:expr, $lanes:expr, $load:expr, $near:expr) => {{
        let (at, lanes): (usize, u32) = ($at, $lanes);
        let vb = ($load)(at, lanes);
        let near = $va.map(|va| ($near)(va, vb, lanes));
        if near.iter().fold(0, |any, &m| any | m) != 0 {
            for (&a, mut m) in $a.iter().zip(near) {
                while m != 0 {
                    $hit(a, $others[at + m.trailing_zeros() as usize]);
                    m &= m - 1;
                }
            }
        }
    }};
}

/// Calls `hit(a, b)` for every `a` of `own` and `b` of `others` within `k` of each other:
/// four of `own` at a time against eight of `others`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx512f,avx512vpopcntdq")]
#[inline]
pub(super) fn cross_avx512(own: &[u64], others: &[u64], k: u32, hit: &mut impl FnMut(u64, u64)) {
    use std::arch::x86_64::*;
    let vk = _mm512_set1_epi64(i64::from(k));
    sweep_rows!(
        own,
        others,
        hit,
        8,
        |a: u64| _mm512_set1_epi64(a as i64),
        // SAFETY: the lanes read are within `others` (a masked-off lane is not read).
        |at: usize, lanes: u32| unsafe { _mm512_maskz_loadu_epi64(lanes as u8, others.as_ptr().add(at) as *const i64) },
        |va: __m512i, vb: __m512i, lanes: u32| u32::from(_mm512_mask_cmple_epu64_mask(
            lanes as u8,
            _mm512_popcnt_epi64(_mm512_xor_si512(va, vb)),
            vk
        ))
    );
}

/// [`cross_avx512`] on four lanes without a vector popcount: each byte's bits counted by a
/// 16-entry table lookup of each half (VPSHUFB), the bytes summed per lane (VPSADBW).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,avx2")]
#[inline]
pub(super) fn cross_avx2(own: &[u64], others: &[u64], k: u32, hit: &mut impl FnMut(u64, u64)) {
    use std::arch::x86_64::*;
    let bits = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
    );
    let nibble = _mm256_set1_epi8(0x0f);
    let vk = _mm256_set1_epi64x(i64::from(k));
    sweep_rows!(
        own,
        others,
        hit,
        4,
        |a: u64| _mm256_set1_epi64x(a as i64),
        |at: usize, lanes: u32| if lanes == 0b1111 {
            // SAFETY: 4 values from `at` are within `others`.
            unsafe { _mm256_loadu_si256(others.as_ptr().add(at) as *const __m256i) }
        } else {
            let bit = |j: u32| -i64::from(lanes >> j & 1);
            // SAFETY: the lanes read are within `others` (a masked-off lane is not read).
            unsafe {
                _mm256_maskload_epi64(
                    others.as_ptr().add(at) as *const i64,
                    _mm256_setr_epi64x(bit(0), bit(1), bit(2), 0),
                )
            }
        },
        |va: __m256i, vb: __m256i, lanes: u32| {
            let x = _mm256_xor_si256(va, vb);
            let lo = _mm256_shuffle_epi8(bits, _mm256_and_si256(x, nibble));
            let hi = _mm256_shuffle_epi8(bits, _mm256_and_si256(_mm256_srli_epi16::<4>(x), nibble));
            let count = _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256());
            !(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(count, vk))) as u32) & lanes
        }
    );
}
