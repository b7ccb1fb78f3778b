//! The AVX2 kernels (F16C where noted) and their helpers: the dispatch of one conversion to
//! them ([`fast_avx2`]), f16 through `vcvtps2ph`, bf16 and tf32 by integer rounding,
//! FP8/FP6/FP4 through f16's bytes and by one addition, the MX scale and the widening of
//! random values. The module docs of [`super`] say what each is for and how it is proven.
//! (x86-64 only: the parent declares this module for that architecture alone.)

use super::*;

#[target_feature(enable = "avx2")]
pub(super) unsafe fn fast_avx2<
    F: Fmt,
    const M: u8,
    const SF: bool,
    const KN: bool,
    const W: u32,
    D: Word,
    R: Word,
>(
    src: &[u32],
    dst: &mut [D],
    rnd: &[R],
    k: fast::Knobs,
) {
    // The kernels below, each of which takes .relu (without .ftz) itself where it can act on
    // the results. f32 → f16 in the IEEE directions (where the CPU has F16C) and bf16 to
    // nearest, toward zero and stochastic with 16 random bits, without .satfinite:
    let f16c = is_x86_feature_detected!("f16c");
    let f16_ieee = F::ID == Id::F16
        && !SF
        && matches!(M, small::RN | small::RZ | small::RM | small::RP)
        && f16c;
    let bf16 = F::ID == Id::Bf16
        && !SF
        && (M == small::RN || M == small::RZ || (M == small::RS && W == 16));
    // f32 → f16 stochastic with 13 random bits, where the CPU has F16C:
    let f16_rs = F::ID == Id::F16 && M == small::RS && W == 13 && f16c;
    // f32 → FP8/FP6/FP4 through f16's bytes (where the CPU has F16C) and by one addition:
    let f16_bytes = SF
        && ((M == small::RZ && const { f16_bytes_truncate(&F::SPEC) })
            || (M == small::RS && W == 8 && const { f16_bytes_shift(&F::SPEC).is_some() }))
        && f16c;
    let sum = (M == small::RN || M == small::RZ || (M == small::RS && W == 8))
        && const { sum_avx2_applies(F::ID, &F::SPEC, M, SF) };
    let own_relu = k.ftz_below == 0
        && (f16_ieee || bf16 || f16_rs || f16_bytes || sum)
        && const { relu_on_results(&F::SPEC, SF) };
    if KN && !own_relu {
        knobs_first::<F, SF, D, R>(src, dst, rnd, k, |s, d, r| {
            // SAFETY: this function's feature is the instance's.
            unsafe { fast_avx2::<F, M, SF, false, W, D, R>(s, d, r, k) }
        });
        return;
    }
    for r in streams_for::<u32, D>(src.len().min(dst.len())) {
        let (src, dst) = (&src[r.clone()], &mut dst[r.clone()]);
        let rnd = rnd.get(r).unwrap_or(&[]);
        // f32 → f16 in the IEEE directions, without .satfinite or .ftz, where the CPU has
        // F16C: its own conversion.
        if f16_ieee && (!KN || own_relu) {
            if let Some(d) = D::as_u16_slice_mut(dst) {
                // SAFETY: this function's feature and the one that `f16_ieee` checked are all
                // that `f16_avx2` enables.
                unsafe { f16_avx2::<M, KN>(src, d, k) };
                continue;
            }
        }
        // f32 → f16 stochastic with 13 random bits (in any word), without .ftz, where the
        // CPU has F16C: truncation by its own conversion, the carry from the 13 bits below.
        if f16_rs && (!KN || own_relu) {
            if let (Some(d), Some(r)) = (D::as_u16_slice_mut(dst), Randoms::of(rnd)) {
                // SAFETY: this function's feature and the one that `f16_rs` checked are all
                // that `f16_rs_avx2` enables.
                unsafe { f16_rs_avx2::<SF, KN>(src, d, r, k) };
                continue;
            }
        }
        // f32 → bf16 to nearest even, toward zero or stochastic with 16 random bits, without
        // .satfinite or .ftz: integer rounding.
        if bf16 && (!KN || own_relu) {
            if let (Some(d), Some(r)) = (
                D::as_u16_slice_mut(dst),
                Randoms::if_stochastic::<M, R>(rnd),
            ) {
                // SAFETY: this function's feature is all that `bf16_avx2` enables.
                unsafe { bf16_avx2::<M, KN>(src, d, r, k) };
                continue;
            }
        }
        // f32 → tf32 to nearest even, to nearest away or toward zero, without .satfinite,
        // .relu or .ftz: integer rounding at bit 13.
        if F::ID == Id::Tf32 && !SF && !KN && matches!(M, small::RN | small::RNA | small::RZ) {
            if let Some(d) = D::as_u32_slice_mut(dst) {
                // SAFETY: this function's feature is all that `tf32_avx2` enables.
                unsafe { tf32_avx2::<M>(src, d, k) };
                continue;
            }
        }
        // f32 → e5m2, e3m2, e2m1 toward zero or stochastic with 8 random bits, e4m3 and
        // e2m3 toward zero, with .satfinite, without .ftz, where the CPU has F16C: through
        // f16 (of the input scaled to put the format's smallest normal on f16's), whose top
        // bits these formats are.
        if f16_bytes && (!KN || own_relu) {
            if let (Some(d), Some(r)) =
                (D::as_u8_slice_mut(dst), Randoms::if_stochastic::<M, R>(rnd))
            {
                // SAFETY: this function's feature and the one that `f16_bytes` checked are
                // all that `f16_bytes_avx2` enables.
                unsafe { f16_bytes_avx2::<F, M, KN>(src, d, r, k) };
                continue;
            }
        }
        // f32 → FP8/FP6/FP4 to nearest, toward zero or stochastic with 8 random bits,
        // without .ftz: one addition per element gives the code.
        if sum && (!KN || own_relu) {
            if let (Some(d), Some(r)) =
                (D::as_u8_slice_mut(dst), Randoms::if_stochastic::<M, R>(rnd))
            {
                // SAFETY: this function's feature is all that `narrow_sum_avx2` enables.
                unsafe { narrow_sum_avx2::<F, M, SF, KN>(src, d, r, k) };
                continue;
            }
        }
        fast::run::<F, M, SF, KN, W, D, R>(src, dst, rnd, k);
    }
}

/// f32 → f16 rounding in direction `M` (rn, rz, rm or rp) on AVX2 with F16C, sixteen at a
/// time: two `vcvtps2ph` (the rounding given in the instruction), as [`f16_avx512`] does,
/// and the canonical NaN put in place by a byte select where a result's magnitude is above
/// infinity's. With `RELU`, `.relu` from `k` (without `.ftz`), as there. The tail (under 16
/// elements) goes through the portable kernel.
#[target_feature(enable = "avx2,f16c")]
pub(super) unsafe fn f16_avx2<const M: u8, const RELU: bool>(
    src: &[u32],
    dst: &mut [u16],
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let n = src.len().min(dst.len());
    let whole = n - n % 16;
    let relu = RELU && k.relu != 0;
    let nan = _mm256_set1_epi16(formats::F16::SPEC.nan_full as u16 as i16);
    let magnitude = _mm256_set1_epi16(0x7fff);
    let infinity = _mm256_set1_epi16(0x7c00);
    let half = |x: __m256| -> __m128i {
        match M {
            small::RN => _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x),
            small::RZ => _mm256_cvtps_ph::<_MM_FROUND_TO_ZERO>(x),
            small::RM => _mm256_cvtps_ph::<_MM_FROUND_TO_NEG_INF>(x),
            _ => _mm256_cvtps_ph::<_MM_FROUND_TO_POS_INF>(x),
        }
    };
    for (s, d) in src[..whole]
        .chunks_exact(16)
        .zip(dst[..whole].chunks_exact_mut(16))
    {
        let p = s.as_ptr().cast::<f32>();
        // SAFETY: `s` holds 16 `u32`s (64 bytes): the two unaligned loads read exactly
        // those.
        let (x0, x1) = unsafe { (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))) };
        let h = _mm256_set_m128i(half(x1), half(x0));
        let is_nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, magnitude), infinity);
        let h = _mm256_blendv_epi8(h, nan, is_nan);
        let h = if relu {
            clear_negative_halves_avx2(h)
        } else {
            h
        };
        // SAFETY: `d` holds 16 `u16`s (32 bytes): the unaligned store writes exactly those.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast::<__m256i>(), h) };
    }
    fast::run::<formats::F16, M, false, RELU, 0, u16, u32>(
        &src[whole..n],
        &mut dst[whole..n],
        &[],
        k,
    );
}

/// [`clear_negative_halves`] on AVX2: 16-bit results with the sign bit set made +0.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn clear_negative_halves_avx2(
    h: std::arch::x86_64::__m256i,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    _mm256_max_epi16(h, _mm256_setzero_si256())
}

/// Packed codes `c` given the sign bit `sign` where the mask `n` is set (negative inputs
/// other than NaNs), or with `relu` made +0 there instead (`relu_on_results`: the other
/// codes are positive).
#[target_feature(enable = "avx2")]
#[inline]
fn signed_codes(
    c: std::arch::x86_64::__m256i,
    n: std::arch::x86_64::__m256i,
    sign: std::arch::x86_64::__m256i,
    relu: bool,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    if relu {
        _mm256_andnot_si256(n, c)
    } else {
        _mm256_or_si256(c, _mm256_and_si256(n, sign))
    }
}

/// Eight random bytes of `r` (at least that many) zero-extended into 32-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn byte_lanes(r: &[u8]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..8].as_ptr().cast::<__m128i>();
    // SAFETY: `r[..8]` is 8 bytes: the 8-byte unaligned load reads exactly those.
    _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(p) })
}

/// Eight random half-words of `r` (at least that many) zero-extended into 32-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn half_word_lanes(r: &[u16]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..8].as_ptr().cast::<__m128i>();
    // SAFETY: `r[..8]` is 16 bytes: the unaligned load reads exactly those.
    _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(p) })
}

/// Sixteen random bytes of `r` (at least that many) zero-extended into 16-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn sixteen_byte_lanes(r: &[u8]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..16].as_ptr().cast::<__m128i>();
    // SAFETY: `r[..16]` is 16 bytes: the unaligned load reads exactly those.
    _mm256_cvtepu8_epi16(unsafe { _mm_loadu_si128(p) })
}

/// Sixteen random half-words of `r` (at least that many) as 16-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn sixteen_half_words(r: &[u16]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..16].as_ptr().cast::<__m256i>();
    // SAFETY: `r[..16]` is 32 bytes: the unaligned load reads exactly those.
    unsafe { _mm256_loadu_si256(p) }
}

/// Sixteen random words of `r` (at least that many), each masked by `bits` (at most 16
/// bits), as 16-bit lanes in order.
#[target_feature(enable = "avx2")]
#[inline]
fn sixteen_word_lanes(r: &[u32], bits: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let w = |i: usize| _mm256_and_si256(word_lanes(&r[i..]), bits);
    _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(w(0), w(8)))
}

/// Eight random words of `r` (at least that many) as 32-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn word_lanes(r: &[u32]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..8].as_ptr().cast::<__m256i>();
    // SAFETY: `r[..8]` is 32 bytes: the unaligned load reads exactly those.
    unsafe { _mm256_loadu_si256(p) }
}

/// f32 → bf16 on AVX2 to nearest even (`RN`), toward zero (`RZ`) or stochastic with 16
/// random bits (`RS`, in any word), without `.satfinite`, sixteen at a time, by integer
/// rounding: the f32 pattern plus an increment (0x7fff plus its last kept bit, nothing, or
/// the random value), the high half kept. The carry goes into the exponent and up to
/// infinity as the rounding does, subnormals included; infinity, whose low half is zero,
/// stays infinity. NaN inputs are replaced by the canonical NaN's pattern first (their carry
/// could reach the sign). Two vectors of results are narrowed by `vpackusdw` and put in
/// order by `vpermq`. With `RELU`, `.relu` from `k` (without `.ftz`): the results with the
/// sign bit set (negative inputs' only: the canonical NaN is positive) are made +0. The tail
/// (under 16 elements) goes through the portable kernel.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn bf16_avx2<const M: u8, const RELU: bool>(
    src: &[u32],
    dst: &mut [u16],
    rnd: Option<Randoms>,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let mut n = src.len().min(dst.len());
    if let Some(r) = rnd {
        n = n.min(r.len());
    }
    let whole = n - n % 16;
    let (s, d) = (&src[..whole], &mut dst[..whole]);
    let half = _mm256_set1_epi32(0xffff);
    let relu = RELU && k.relu != 0;
    match rnd {
        None => bf16_groups::<M, u8>(s, d, &[], relu, |_| [_mm256_setzero_si256(); 2]),
        Some(Randoms::U8(r)) => bf16_groups::<M, u8>(s, d, &r[..whole], relu, |r| {
            [byte_lanes(r), byte_lanes(&r[8..])]
        }),
        Some(Randoms::U16(r)) => bf16_groups::<M, u16>(s, d, &r[..whole], relu, |r| {
            [half_word_lanes(r), half_word_lanes(&r[8..])]
        }),
        Some(Randoms::U32(r)) => bf16_groups::<M, u32>(s, d, &r[..whole], relu, |r| {
            [word_lanes(r), word_lanes(&r[8..])].map(|w| _mm256_and_si256(w, half))
        }),
    }
    match rnd {
        Some(r) => r.tail::<formats::BF16, false, RELU, 16, u16>(src, dst, whole, k),
        None => fast::run::<formats::BF16, M, false, RELU, 0, u16, u32>(
            &src[whole..n],
            &mut dst[whole..n],
            &[],
            k,
        ),
    }
}

/// The groups of 16 of [`bf16_avx2`] (`src`, `dst` and `rnd` of a multiple of 16 elements;
/// `rnd` empty unless `RS`), with `.relu` if `relu`, `random` giving a group's 16-bit random
/// values in two vectors of 32-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn bf16_groups<const M: u8, R>(
    src: &[u32],
    dst: &mut [u16],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> [std::arch::x86_64::__m256i; 2],
) {
    use std::arch::x86_64::*;
    let nan = _mm256_set1_epi32((formats::BF16::SPEC.nan_full << 16) as i32);
    let (bias, one) = (_mm256_set1_epi32(0x7fff), _mm256_set1_epi32(1));
    let round = |x: __m256i, r: __m256i| -> __m256i {
        let xf = _mm256_castsi256_ps(x);
        let unordered = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(xf, xf));
        let x = _mm256_blendv_epi8(x, nan, unordered);
        let x = match M {
            small::RN => {
                let last = _mm256_and_si256(_mm256_srli_epi32::<16>(x), one);
                _mm256_add_epi32(_mm256_add_epi32(x, bias), last)
            }
            small::RS => _mm256_add_epi32(x, r),
            _ => x,
        };
        _mm256_srli_epi32::<16>(x)
    };
    let p = src.as_ptr().cast::<__m256i>();
    for (i, d) in dst.chunks_exact_mut(16).enumerate() {
        let r = if M == small::RS {
            random(&rnd[16 * i..16 * i + 16])
        } else {
            [_mm256_setzero_si256(); 2]
        };
        // SAFETY: `src` holds 16 `u32`s (64 bytes) from `16 * i` on (`dst` and `src` have
        // the same length): the two unaligned loads read exactly those.
        let (x0, x1) = unsafe {
            (
                _mm256_loadu_si256(p.add(2 * i)),
                _mm256_loadu_si256(p.add(2 * i + 1)),
            )
        };
        let h = _mm256_packus_epi32(round(x0, r[0]), round(x1, r[1]));
        let h = _mm256_permute4x64_epi64::<0b11_01_10_00>(h);
        let h = if relu {
            clear_negative_halves_avx2(h)
        } else {
            h
        };
        // SAFETY: `d` holds 16 `u16`s (32 bytes): the unaligned store writes exactly those.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast::<__m256i>(), h) };
    }
}

/// f32 → f16 with stochastic rounding (13 random bits per element, in any word) on AVX2 with
/// F16C, sixteen at a time: the magnitude truncated to f16's grid by `vcvtps2ph` toward zero
/// (with the sign; an f32 beyond f16's range gives its largest finite value, which a carry
/// turns into infinity, as in the exact core), plus the carry out of the 13 bits below the
/// grid added to the random value, as [`f16_rs_avx512`] does. The 13 bits are the f32's low
/// 13 from f16's smallest normal value (2^-14) up; below it, where f16's grid step is 2^-24
/// whatever the exponent, the low 13 bits of the magnitude times 2^37 truncated to an
/// integer (`vcvttps2dq`; under 2^23, so exact), truncated either way as the exact core
/// takes them; those of 16 inputs are packed into 16-bit lanes, where the random values
/// are added. With `.satfinite` (`SF`) the result is then clamped to the largest finite
/// value (infinities and overflows), in 16-bit lanes: as a signed number for positive
/// results, as an unsigned one for negative ones. NaN inputs (f16 magnitudes above
/// infinity's) get the canonical NaN. With `RELU`, `.relu` from `k` (without `.ftz`) as in
/// [`f16_avx2`]. The tail (under 16 elements) goes through the portable kernel.
#[target_feature(enable = "avx2,f16c")]
pub(super) unsafe fn f16_rs_avx2<const SF: bool, const RELU: bool>(
    src: &[u32],
    dst: &mut [u16],
    rnd: Randoms,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let relu = RELU && k.relu != 0;
    let n = src.len().min(dst.len()).min(rnd.len());
    let whole = n - n % 16;
    let (s, d) = (&src[..whole], &mut dst[..whole]);
    let (bits, bits16) = (_mm256_set1_epi32(0x1fff), _mm256_set1_epi16(0x1fff));
    match rnd {
        Randoms::U8(r) => {
            f16_rs_groups::<SF, _>(s, d, &r[..whole], relu, |r| sixteen_byte_lanes(r))
        }
        Randoms::U16(r) => f16_rs_groups::<SF, _>(s, d, &r[..whole], relu, |r| {
            _mm256_and_si256(sixteen_half_words(r), bits16)
        }),
        Randoms::U32(r) => {
            f16_rs_groups::<SF, _>(s, d, &r[..whole], relu, |r| sixteen_word_lanes(r, bits))
        }
    }
    rnd.tail::<formats::F16, SF, RELU, 13, u16>(src, dst, whole, k);
}

/// The groups of 16 of [`f16_rs_avx2`] (`src`, `dst` and `rnd` of a multiple of 16
/// elements), with `.relu` if `relu`, `random` giving a group's 13-bit random values in
/// 16-bit lanes, in order.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn f16_rs_groups<const SF: bool, R>(
    src: &[u32],
    dst: &mut [u16],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> std::arch::x86_64::__m256i,
) {
    use std::arch::x86_64::*;
    let abs_mask = _mm256_set1_epi32(0x7fff_ffff);
    let bits = _mm256_set1_epi32(0x1fff);
    // f16's smallest normal value, 2^-14, and the exponent of 2^37.
    let normal = _mm256_set1_epi32(0x3880_0000);
    let scale = _mm256_set1_epi32(37 << 23);
    let nan = _mm256_set1_epi16(formats::F16::SPEC.nan_full as u16 as i16);
    let magnitude = _mm256_set1_epi16(0x7fff);
    let infinity = _mm256_set1_epi16(0x7c00);
    let (largest, minus_largest) = (
        _mm256_set1_epi16(0x7bff),
        _mm256_set1_epi16(0xfbff_u16 as i16),
    );
    // Per 8 inputs: the truncation and the 13 bits below f16's grid.
    let half = |x: __m256i| -> (__m128i, __m256i) {
        let h = _mm256_cvtps_ph::<_MM_FROUND_TO_ZERO>(_mm256_castsi256_ps(x));
        let a = _mm256_and_si256(x, abs_mask);
        // Below 2^-14: the magnitude times 2^37 (the exponent field raised by 37), truncated
        // to an integer (under 2^23: exact); an f32 subnormal becomes a number under one
        // (0, as the magnitude times 2^37 is).
        let scaled = _mm256_cvttps_epi32(_mm256_castsi256_ps(_mm256_add_epi32(a, scale)));
        let subnormal = _mm256_cmpgt_epi32(normal, a);
        (
            h,
            _mm256_and_si256(_mm256_blendv_epi8(x, scaled, subnormal), bits),
        )
    };
    let p = src.as_ptr().cast::<__m256i>();
    for (i, d) in dst.chunks_exact_mut(16).enumerate() {
        let r = random(&rnd[16 * i..16 * i + 16]);
        // SAFETY: `src` holds 16 `u32`s (64 bytes) from `16 * i` on (`dst` and `src` have
        // the same length): the two unaligned loads read exactly those.
        let (x0, x1) = unsafe {
            (
                _mm256_loadu_si256(p.add(2 * i)),
                _mm256_loadu_si256(p.add(2 * i + 1)),
            )
        };
        let (h0, b0) = half(x0);
        let (h1, b1) = half(x1);
        // The 13 bits of 16 inputs in order in 16-bit lanes, plus the random values (at most
        // `0x3ffe`): bit 13 of the sum is the carry.
        let below = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(b0, b1));
        let carry = _mm256_srli_epi16::<13>(_mm256_add_epi16(below, r));
        let h = _mm256_set_m128i(h1, h0);
        // NaNs found before the carry is added (it could carry a NaN's pattern into the
        // sign).
        let is_nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, magnitude), infinity);
        let mut h = _mm256_add_epi16(h, carry);
        if SF {
            // Positive results at most the largest finite value's pattern as signed
            // half-words, negative ones as unsigned (each compare leaves the other sign).
            h = _mm256_min_epu16(_mm256_min_epi16(h, largest), minus_largest);
        }
        let h = _mm256_blendv_epi8(h, nan, is_nan);
        let h = if relu {
            clear_negative_halves_avx2(h)
        } else {
            h
        };
        // SAFETY: `d` holds 16 `u16`s (32 bytes): the unaligned store writes exactly those.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast::<__m256i>(), h) };
    }
}

/// f32 → e5m2, e3m2 or e2m1 (`F`) toward zero or with stochastic rounding (`M`; 8 random
/// bits per element, in any word), or e4m3 or e2m3 toward zero, with `.satfinite` on AVX2
/// with F16C, sixteen at a time, as [`f16_bytes_rs_avx512`] does: the input scaled by
/// 2^(bias − 15) (exactly; none for e5m2) and converted toward zero into f16 (`vcvtps2ph`),
/// whose top byte is then the format's truncated code (e2m1's bits 14..9, the 8 bits below
/// its grid bits 8..1; e4m3's and e2m3's bits 14..7, truncation needing none of the bits
/// below) and whose low byte the 8 bits below its grid. In 16-bit lanes: the magnitude
/// plus the random byte (toward zero: none; for e2m1 twice the random byte, added to bits
/// 8..0, whose bit 0 cannot change the carry), shifted right by 8 (7 for e4m3 and e2m3, 9
/// for e2m1), is the code before the clamp (toward zero, e3m2's and e2m1's f16s are shifted
/// arithmetically instead, so that a signed byte holds the code's bits and the sign, and
/// the sign compare is done 32 at a time too). Two groups of 16 are narrowed to bytes by
/// one pack, where the rest is done 32 at a time: the clamp to the largest finite code;
/// e4m3's NaN (`vcvtps2ph` makes every NaN quiet, so a NaN f16's byte is at least 0x7e00's,
/// above infinity's, and a compare finds it); and the sign, where the f16 (as a signed
/// number) is at most −∞'s, the compare masks packed the same way. e2m3's, e3m2's and
/// e2m1's NaN result is their largest code (the clamp gives it, positive). e5m2's code is
/// the f16's high byte with its sign: toward zero that byte is clamped once packed (as a
/// signed byte where positive, as an unsigned one where negative; ±∞ are 0x7c and 0xfc, and
/// a quiet NaN's magnitude bits 0x7e or 0x7f); stochastically the whole f16 plus the random
/// byte is clamped the same way in 16-bit lanes, NaNs found and selected there, before the
/// sum could carry a negative NaN's pattern past 0xffff. (Every step that does not need
/// 16-bit lanes works on packed bytes, 32 per instruction rather than 16 half-words: the
/// kernel is bound by its instruction count.) With `RELU`, `.relu` from `k` (without
/// `.ftz`): the codes of negative inputs other than NaNs are made +0 instead of taking the
/// sign (e5m2's sum is clamped below at zero, as a signed number). The tail (under 16
/// elements) goes through the portable kernel.
#[target_feature(enable = "avx2,f16c")]
pub(super) unsafe fn f16_bytes_avx2<F: Fmt, const M: u8, const RELU: bool>(
    src: &[u32],
    dst: &mut [u8],
    rnd: Option<Randoms>,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let relu = RELU && k.relu != 0;
    let n = match rnd {
        Some(r) => src.len().min(dst.len()).min(r.len()),
        None => src.len().min(dst.len()),
    };
    let whole = n - n % 16;
    let (s, d) = (&src[..whole], &mut dst[..whole]);
    let (byte, byte32) = (_mm256_set1_epi16(0xff), _mm256_set1_epi32(0xff));
    match rnd {
        None => f16_bytes_groups::<F, M, u8>(s, d, &[], relu, |_| _mm256_setzero_si256()),
        Some(Randoms::U8(r)) => {
            f16_bytes_groups::<F, M, u8>(s, d, &r[..whole], relu, |r| sixteen_byte_lanes(r))
        }
        Some(Randoms::U16(r)) => f16_bytes_groups::<F, M, u16>(s, d, &r[..whole], relu, |r| {
            _mm256_and_si256(sixteen_half_words(r), byte)
        }),
        Some(Randoms::U32(r)) => f16_bytes_groups::<F, M, u32>(s, d, &r[..whole], relu, |r| {
            sixteen_word_lanes(r, byte32)
        }),
    }
    match rnd {
        Some(r) => r.tail::<F, true, RELU, 8, u8>(src, dst, whole, k),
        None => {
            fast::run::<F, M, true, RELU, 0, u8, u32>(&src[whole..n], &mut dst[whole..n], &[], k)
        }
    }
}

/// The groups of 16 of [`f16_bytes_avx2`] (`src`, `dst` and `rnd` of a multiple of 16
/// elements; `rnd` empty toward zero), with `.relu` if `relu`, `random` giving a group's
/// random bytes in 16-bit lanes, in order.
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn f16_bytes_groups<F: Fmt, const M: u8, R>(
    src: &[u32],
    dst: &mut [u8],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> std::arch::x86_64::__m256i,
) {
    use std::arch::x86_64::*;
    let sp = const { F::SPEC };
    // For stochastic rounding into e2m1, whose code is f16's bits 14..9, the 8 bits below
    // its grid are bits 8..1: the random byte r is doubled instead, and added to bits 8..0
    // (bit 0 cannot change the carry: 2r being even, bits 8..0 plus 2r reach 512 exactly
    // when bits 8..1 plus r reach 256).
    let double = const { matches!(f16_bytes_shift(&F::SPEC), Some(1)) && M == small::RS };
    // The code's lowest bit in the f16: 8, or 7 for three significand bits, or 9 for e2m1.
    // (Instances of other formats exist, never called: the dispatch checks the format.)
    let down = _mm_set_epi64x(0, i64::from(10u32.saturating_sub(sp.man)));
    let scale = _mm256_castsi256_ps(_mm256_set1_epi32(f16_bytes_scale(&sp)));
    let magnitude = _mm256_set1_epi16(0x7fff);
    let infinity = _mm256_set1_epi16(0x7c00);
    // One above −∞'s f16: the signed compare's limit.
    let above_minus_infinity = _mm256_set1_epi16(0xfc01_u16 as i16);
    let nan_by_clamp = matches!(nan_by_clamp(&sp), Some(false));
    let largest8 = _mm256_set1_epi8(sp.max_enc as i8);
    let nan = _mm256_set1_epi16(sp.nan_full as i16);
    let nan8 = _mm256_set1_epi8(sp.nan_full as i8);
    // `vcvtps2ph` makes every NaN quiet: a NaN f16's magnitude is this or more. The three
    // NaN tests on bytes below are this, shifted as each path shifts the f16s.
    const QUIET_NAN: u16 = 0x7e00;
    // e5m2 toward zero: the high byte's magnitude bits, the byte under a quiet NaN's, and
    // the largest finite code, negative.
    let (magnitude8, below_nan8) = (
        _mm256_set1_epi8(0x7f),
        _mm256_set1_epi8(((QUIET_NAN >> 8) - 1) as i8),
    );
    let minus_largest8 = _mm256_set1_epi8((sp.max_enc | 0x80) as u8 as i8);
    // The smallest byte of a NaN f16 (a quiet NaN's magnitude), above infinity's plus a
    // random byte (0x7cff) shifted the same way, for the formats that have one.
    let nan_q = const {
        let man = F::SPEC.man;
        // (The FP8/FP6/FP4 formats: instances of others are never called.)
        if man >= 1 && man <= 3 {
            let down = 10 - man;
            assert!(QUIET_NAN >> down > 0x7cff >> down && QUIET_NAN >> down <= 0xff);
            (QUIET_NAN >> down) as u8
        } else {
            0
        }
    };
    let nan_q = _mm256_set1_epi8(nan_q as i8);
    let sign = _mm256_set1_epi8((1u8 << sp.sign_pos) as i8);
    // e5m2: the f16's high byte is the code, its sign included.
    let code_is_high_byte = sp.sign_pos == 7 && sp.bias == 15;
    // e3m2 and e2m1 toward zero (code f16's bits 14..8 or 14..9, no NaN), in signed bytes
    // (the f16s shifted arithmetically): the magnitude's bits, and the byte of the smallest
    // negative quiet NaN shifted the same way, under which the input is negative.
    let signed_bytes = const { M == small::RZ && matches!(10u32.checked_sub(F::SPEC.man), Some(8 | 9)) }
        && nan_by_clamp
        && !code_is_high_byte;
    let low_bits8 = _mm256_set1_epi8((0x7fu8 >> 2u32.saturating_sub(sp.man)) as i8);
    let shifted_nan = ((0x8000 | QUIET_NAN) as i16) >> 10u32.saturating_sub(sp.man).min(15);
    let minus_nan8 = _mm256_set1_epi8(shifted_nan as i8);
    // The largest finite code's pattern with all ones below it, positive and negative.
    let (largest_f16, minus_largest_f16) = (
        _mm256_set1_epi16(((sp.max_enc << 8) | 0xff) as u16 as i16),
        _mm256_set1_epi16(((sp.max_enc << 8) | 0x80ff) as u16 as i16),
    );
    let p = src.as_ptr().cast::<__m256i>();
    // The codes of the 16 elements from `16 * i` on, in 16-bit lanes, without the sign but
    // for e5m2's, and the mask of negative inputs other than NaNs (the sign is put on, or
    // with `.relu` the code cleared, once two groups are packed into bytes).
    let codes = |i: usize| -> (__m256i, __m256i) {
        // SAFETY: `src` holds 16 `u32`s (64 bytes) from `16 * i` on (the caller's loop
        // stays within it): the two unaligned loads read exactly those.
        let (x0, x1) = unsafe {
            (
                _mm256_loadu_ps(p.add(2 * i).cast()),
                _mm256_loadu_ps(p.add(2 * i + 1).cast()),
            )
        };
        let (x0, x1) = if sp.bias == 15 {
            (x0, x1)
        } else {
            (_mm256_mul_ps(x0, scale), _mm256_mul_ps(x1, scale))
        };
        let h = _mm256_set_m128i(
            _mm256_cvtps_ph::<_MM_FROUND_TO_ZERO>(x1),
            _mm256_cvtps_ph::<_MM_FROUND_TO_ZERO>(x0),
        );
        if code_is_high_byte && M != small::RS {
            // e5m2 toward zero: the high byte, with its sign, clamped once packed into bytes.
            return (_mm256_srli_epi16::<8>(h), _mm256_setzero_si256());
        }
        if signed_bytes {
            // e3m2 and e2m1 toward zero: the f16 shifted arithmetically, which a signed byte
            // holds with its sign (the rest once packed).
            return (_mm256_sra_epi16(h, down), _mm256_setzero_si256());
        }
        let code = if code_is_high_byte {
            // The random byte added to the whole f16 (a magnitude up to infinity's does not
            // carry into the sign; NaNs are selected below), the sum clamped to the largest
            // finite code's pattern as a signed number where positive and as an unsigned
            // one where negative (each leaves the other sign), its high byte kept. With
            // `.relu` the negative sums are clamped to zero instead.
            let t = if M == small::RS {
                _mm256_add_epi16(h, random(&rnd[16 * i..16 * i + 16]))
            } else {
                h
            };
            let t = _mm256_min_epi16(t, largest_f16);
            let t = if relu {
                _mm256_max_epi16(t, _mm256_setzero_si256())
            } else {
                _mm256_min_epu16(t, minus_largest_f16)
            };
            _mm256_srli_epi16::<8>(t)
        } else {
            let mag = _mm256_and_si256(h, magnitude);
            let mag = if M == small::RS {
                let r = random(&rnd[16 * i..16 * i + 16]);
                let r = if double { _mm256_add_epi16(r, r) } else { r };
                _mm256_add_epi16(mag, r)
            } else {
                mag
            };
            // (Clamped, and for e4m3 its NaN selected, once packed into bytes.)
            return (
                _mm256_srl_epi16(mag, down),
                _mm256_cmpgt_epi16(above_minus_infinity, h),
            );
        };
        let is_nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, magnitude), infinity);
        (
            _mm256_blendv_epi8(code, nan, is_nan),
            _mm256_setzero_si256(),
        )
    };
    let groups = dst.len() / 16;
    let mut pairs = dst.chunks_exact_mut(32);
    // The codes (at most 0xff) of two groups as bytes with their signs (the masks packed
    // the same way), put in order (`vpackuswb` packs within 128-bit lanes).
    let bytes = |(a, na): (__m256i, __m256i), (b, nb): (__m256i, __m256i)| {
        if signed_bytes {
            // The codes toward zero of e3m2 and e2m1 (f16's bits 14..8 or 14..9, each
            // signed byte the f16 shifted right arithmetically): the low 7 or 6 bits are the
            // magnitude's, clamped to the largest finite code (NaNs' bits 0x7e-0x7f or
            // 0x3f give it, positive, as the format has no NaN); the sign goes on where the
            // byte is under a negative quiet NaN's (−2 or −1): −∞ and the negative finite
            // values (with `.relu`, those codes are +0 instead).
            let q = _mm256_packs_epi16(a, b);
            let c = _mm256_min_epu8(_mm256_and_si256(q, low_bits8), largest8);
            let n = _mm256_cmpgt_epi8(minus_nan8, q);
            let c = signed_codes(c, n, sign, relu);
            return _mm256_permute4x64_epi64::<0b11_01_10_00>(c);
        }
        let c = _mm256_packus_epi16(a, b);
        let c = if code_is_high_byte && M != small::RS {
            // e5m2 toward zero, the f16s' high bytes: 0x7c and 0xfc are ±∞, 0x7e, 0x7f, 0xfe
            // and 0xff NaNs (`vcvtps2ph` makes every NaN quiet). Clamped to the largest
            // finite code as signed bytes where positive and as unsigned ones where negative
            // (with `.relu`, to zero), and NaNs given the NaN code.
            let is_nan = _mm256_cmpgt_epi8(_mm256_and_si256(c, magnitude8), below_nan8);
            let c = _mm256_min_epi8(c, largest8);
            let c = if relu {
                _mm256_max_epi8(c, _mm256_setzero_si256())
            } else {
                _mm256_min_epu8(c, minus_largest8)
            };
            _mm256_blendv_epi8(c, nan8, is_nan)
        } else if code_is_high_byte {
            c
        } else {
            // The magnitude's bits from the code's lowest up (at most 0xff: 0x80fe >> 8 with
            // a random byte, 0x7fff >> 7 or >> 9 without), clamped to the largest finite
            // code. e4m3's NaN: `vcvtps2ph` makes every NaN quiet, so NaN f16s have
            // magnitudes from 0x7e00 up, above infinity's (plus a random byte), and their
            // bytes are at least `nan_q`.
            let clamped = _mm256_min_epu8(c, largest8);
            let c = if nan_by_clamp {
                clamped
            } else {
                let is_nan = _mm256_cmpeq_epi8(_mm256_max_epu8(c, nan_q), c);
                _mm256_blendv_epi8(clamped, nan8, is_nan)
            };
            signed_codes(c, _mm256_packs_epi16(na, nb), sign, relu)
        };
        _mm256_permute4x64_epi64::<0b11_01_10_00>(c)
    };
    for (i, d) in pairs.by_ref().enumerate() {
        let bytes = bytes(codes(2 * i), codes(2 * i + 1));
        // SAFETY: `d` holds 32 bytes: the unaligned store writes exactly those.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), bytes) };
    }
    // An odd group at the end (`dst` is a multiple of 16 long).
    let last = pairs.into_remainder();
    if !last.is_empty() {
        let zero = _mm256_setzero_si256();
        let bytes = bytes(codes(groups - 1), (zero, zero));
        // SAFETY: `last` holds the last 16 bytes: the unaligned store writes exactly those.
        unsafe { _mm_storeu_si128(last.as_mut_ptr().cast(), _mm256_castsi256_si128(bytes)) };
    }
}

/// f32 → tf32 on AVX2, to nearest even (`RN`), to nearest away from zero (`RNA`) or toward
/// zero (`RZ`), without `.satfinite`, 16 at a time: tf32 is the f32 with its 13 lowest bits
/// cleared, in the same exponent range, so the pattern plus the rounding increment (`0xfff`
/// plus bit 13 for `RN`, `0x1000` for `RNA`, none for `RZ`), its 13 lowest bits cleared, is
/// the result, subnormal or normal, a carry into the exponent (up to infinity) included.
/// NaN inputs (magnitudes above infinity's, which the increment could carry into the sign)
/// get the canonical NaN by a select. The tail (under 16 elements) goes through the
/// portable kernel.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn tf32_avx2<const M: u8>(src: &[u32], dst: &mut [u32], k: fast::Knobs) {
    use std::arch::x86_64::*;
    let n = src.len().min(dst.len());
    let whole = n - n % 16;
    let abs_mask = _mm256_set1_epi32(0x7fff_ffff);
    let infinity = _mm256_set1_epi32(0x7f80_0000);
    let nan = _mm256_set1_epi32(formats::TF32::SPEC.nan_full as i32);
    let grid = _mm256_set1_epi32(!0x1fff);
    let half = _mm256_set1_epi32(if M == small::RNA { 0x1000 } else { 0xfff });
    let one = _mm256_set1_epi32(1);
    let round = |x: __m256i| -> __m256i {
        let t = match M {
            small::RN => _mm256_add_epi32(
                _mm256_add_epi32(x, half),
                _mm256_and_si256(_mm256_srli_epi32::<13>(x), one),
            ),
            small::RNA => _mm256_add_epi32(x, half),
            _ => x,
        };
        let is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), infinity);
        _mm256_blendv_epi8(_mm256_and_si256(t, grid), nan, is_nan)
    };
    let p = src.as_ptr().cast::<__m256i>();
    let q = dst.as_mut_ptr().cast::<__m256i>();
    for i in 0..whole / 16 {
        // SAFETY: `src` and `dst` hold at least `whole` elements, so 16 (64 bytes) from
        // `16 * i` on: the two unaligned loads and the two stores touch exactly those.
        unsafe {
            let (x0, x1) = (
                _mm256_loadu_si256(p.add(2 * i)),
                _mm256_loadu_si256(p.add(2 * i + 1)),
            );
            _mm256_storeu_si256(q.add(2 * i), round(x0));
            _mm256_storeu_si256(q.add(2 * i + 1), round(x1));
        }
    }
    fast::run::<formats::TF32, M, false, false, 0, u32, u32>(
        &src[whole..n],
        &mut dst[whole..n],
        &[],
        k,
    );
}

/// Whether [`narrow_sum_avx2`] gives format `F`'s results in direction `M` with
/// `.satfinite` `SF`: where the format saturates (`.satfinite`, or neither infinity nor NaN),
/// so that the clamp to the largest finite value gives every overflow's result, and to
/// nearest where it overflows to infinity (the clamp to infinity's value gives it, signed)
/// or to a NaN that is the code above the largest finite one (e4m3 without `.satfinite`:
/// the clamp gives it, and the sign is left out where the magnitude rounds to it,
/// [`unsigned_overflow`]).
const fn sum_avx2_applies(id: Id, sp: &Spec, m: u8, sf: bool) -> bool {
    id.is_narrow()
        && sp.pad == 0
        && (sf
            || (!sp.has_inf && !sp.has_nan)
            || (m == small::RN && (sp.has_inf || unsigned_overflow(sp).is_some())))
}

/// For a format without infinity whose NaN is the code above its largest finite one, in the
/// same binade (e4m3), to which every overflow rounds to nearest, and which is unsigned:
/// the largest magnitude's pattern that rounds to nearest even to a finite value (the
/// midpoint of the largest finite value and that code's value, where the largest finite
/// code is even, else just under it). `None` for other formats.
const fn unsigned_overflow(sp: &fast::Spec) -> Option<u32> {
    if sp.has_inf || !sp.has_nan || sp.nan_full != sp.max_enc + 1 {
        return None;
    }
    let (max, nan) = (
        fast::value_bits(sp, sp.max_enc),
        fast::value_bits(sp, sp.nan_full),
    );
    if max >> 23 != nan >> 23 {
        return None;
    }
    // Same binade: the patterns' mean is the values' midpoint.
    let mid = (max + nan) / 2;
    Some(if sp.max_enc & 1 == 0 { mid } else { mid - 1 })
}

/// f32 → e4m3, e5m2, e2m3, e3m2 or e2m1 on AVX2, to nearest even (`RN`), toward zero (`RZ`)
/// or stochastic with 8 random bits (`RS`, in bytes, half-words or words), 32 at a time:
/// - the magnitude is clamped (to the largest finite value, or for `RN` without
///   `.satfinite` to the value of the code above it, which is infinity or NaN); NaN inputs
///   of a format whose NaN result is not its largest finite code get the value of that
///   code (e4m3's and e5m2's 0x7f, read as if finite): there the clamp is a floating-point
///   minimum, which keeps a NaN, and a second minimum replaces it (`vminps` gives its second
///   operand where one is NaN: one instruction where a compare and a select would be two);
/// - `RN`, by one floating-point addition per 8, as `fast.rs`'s `mag_rn` rounds one
///   element: the addend is computed from the clamped magnitude's exponent `e` (raised to
///   the smallest normal one's, `e0`): exponent `e + 23 − mantissa bits` and significand
///   bits `(e − e0) << mantissa bits`, so that its unit in the last place is the
///   destination's grid step at the input; the sum, rounded to nearest even by the
///   processor (MXCSR's default, as in the portable kernel), has the encoding in its low
///   bits, normal and subnormal results alike, a carry included;
/// - `RZ` and `RS`, the magnitude truncated to the grid (for `RS` to 2^-8 of it: the
///   encoding times 256 plus the 8 bits below the grid), the larger of two truncations:
///   the pattern shifted right and re-biased (right at and above the smallest normal
///   value, negative below it), and the magnitude scaled to the subnormal grid (its
///   exponent field raised) truncated to an integer by `vcvttps2dq`, at most the code under
///   the smallest normal one (right below the smallest normal value, smaller above it);
///   `RS` then adds the random byte and drops the 8 bits below the grid, 16 at a time once
///   the results are packed into 16-bit lanes (the carry rounds up; the clamped largest
///   finite value has no bits below its grid, so no code goes past it);
/// - the low bytes of 32 results are packed (`vpackusdw`, `vpackuswb`), the sign added where
///   the input is negative and not NaN (the same packing of the compare masks; for `RN` into
///   e4m3 without `.satfinite`, only where the magnitude rounds to a finite value: the
///   overflows' NaN is unsigned), and put in order (`vpermd`). With `RELU`, `.relu` from `k`
///   (without `.ftz`; the caller checks [`relu_on_results`]): those codes are made +0
///   instead.
///
/// (`RZ` and `RS` truncate directly rather than taking the `RN` sum one step down where
/// it rounded up, which costs four more operations per 8.)
/// The caller checks [`sum_avx2_applies`]. The tail (under 32 elements) goes through the
/// portable kernel.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn narrow_sum_avx2<F: Fmt, const M: u8, const SF: bool, const RELU: bool>(
    src: &[u32],
    dst: &mut [u8],
    rnd: Option<Randoms>,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let relu = RELU && k.relu != 0;
    let mut n = src.len().min(dst.len());
    if let Some(r) = rnd {
        n = n.min(r.len());
    }
    let whole = n - n % 32;
    let (s, d) = (&src[..whole], &mut dst[..whole]);
    // The random bytes of 16 elements in 16-bit lanes, in the order `vpackusdw` leaves the
    // codes of two vectors of 8 in (the 64-bit quarters of 4 lanes as 0, 2, 1, 3).
    let (byte, byte16) = (_mm256_set1_epi32(0xff), _mm256_set1_epi16(0xff));
    let packed = |v: __m256i| _mm256_permute4x64_epi64::<0b11_01_10_00>(v);
    match rnd {
        None => narrow_sum_groups::<F, M, SF, u8>(s, d, &[], relu, |_| [_mm256_setzero_si256(); 2]),
        Some(Randoms::U8(r)) => narrow_sum_groups::<F, M, SF, u8>(s, d, &r[..whole], relu, |r| {
            [0, 16].map(|i| packed(sixteen_byte_lanes(&r[i..])))
        }),
        Some(Randoms::U16(r)) => narrow_sum_groups::<F, M, SF, u16>(s, d, &r[..whole], relu, |r| {
            [0, 16].map(|i| packed(_mm256_and_si256(sixteen_half_words(&r[i..]), byte16)))
        }),
        Some(Randoms::U32(r)) => narrow_sum_groups::<F, M, SF, u32>(s, d, &r[..whole], relu, |r| {
            let w = |i: usize| _mm256_and_si256(word_lanes(&r[i..]), byte);
            [0, 16].map(|i| _mm256_packus_epi32(w(i), w(i + 8)))
        }),
    }
    match rnd {
        Some(r) => r.tail::<F, SF, RELU, 8, u8>(src, dst, whole, k),
        None => fast::run::<F, M, SF, RELU, 0, u8, u32>(&src[whole..n], &mut dst[whole..n], &[], k),
    }
}

/// The addends of [`narrow_sum_avx2`] to nearest for format `sp` by the exponent's low 3
/// bits, where its exponents from the smallest normal one's to the largest finite value's
/// are at most 8 and its NaN result is the clamp's (e2m3, e3m2, e2m1): one `vpermd` instead
/// of five operations.
pub(super) const fn addend_table(sp: &fast::Spec) -> Option<[u32; 8]> {
    let e0 = (128 - sp.bias) as u32;
    let last = fast::value_bits(sp, sp.max_enc) >> 23;
    if last - e0 >= 8 || sp.nan_full != sp.max_enc {
        return None;
    }
    Some(sum_addends::<8>(sp, 0))
}

/// The groups of 32 of [`narrow_sum_avx2`] (`src`, `dst` and `rnd` of a multiple of 32
/// elements; `rnd` empty unless `RS`), with `.relu` if `relu`, `random` giving a group's
/// random bytes in two vectors of 16-bit lanes, in the order of the codes packed by
/// `vpackusdw`.
#[target_feature(enable = "avx2")]
#[inline]
fn narrow_sum_groups<F: Fmt, const M: u8, const SF: bool, R>(
    src: &[u32],
    dst: &mut [u8],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> [std::arch::x86_64::__m256i; 2],
) {
    use std::arch::x86_64::*;
    let sp = F::SPEC;
    let below = if M == small::RS { 8 } else { 0 };
    let shift = 23 - sp.man - below;
    let e0u = (128 - sp.bias) as u32;
    // The clamp: the largest finite value, or for `RN` without saturation the code above.
    let saturates = M != small::RN || SF || (!sp.has_inf && !sp.has_nan);
    let top = fast::value_bits(
        &sp,
        if saturates {
            sp.max_enc
        } else {
            sp.max_enc + 1
        },
    );
    let nan_select = sp.nan_full != sp.max_enc;
    let nan_value = _mm256_set1_epi32(fast::value_bits(&sp, sp.nan_full) as i32);
    let top = _mm256_set1_epi32(top as i32);
    let abs_mask = _mm256_set1_epi32(0x7fff_ffff);
    let exponent = _mm256_set1_epi32(0x7f80_0000);
    let e0 = _mm256_set1_epi32((e0u << 23) as i32);
    let shift = _mm_set_epi64x(0, i64::from(shift));
    let k = _mm256_set1_epi32(
        ((23 - sp.man - below) << 23).wrapping_sub(e0u << (sp.man + below)) as i32,
    );
    let e0_index = _mm256_set1_epi32(e0u as i32);
    let table = const { addend_table(&F::SPEC) }
        .map(|t| t.map(|w| w as i32))
        .map(|t| _mm256_setr_epi32(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]));
    let byte = _mm256_set1_epi32(0xff);
    // Toward zero and stochastic: the codes (times 2^b) of the subnormal range by `vcvttps2dq`
    // of the magnitude times 2^scale (added to the exponent field), at most `last_sub`.
    let scale = _mm256_set1_epi32((sp.bias - 1 + sp.man as i32 + below as i32) << 23);
    let last_sub = _mm256_set1_epi32((1 << (sp.man + below)) - 1);
    let normal_base = _mm256_set1_epi32(((e0u - 1) << (sp.man + below)) as i32);
    // Negative inputs other than NaNs: below −∞'s pattern plus one, as signed words; for
    // `RN` into e4m3 without `.satfinite`, whose overflows give the unsigned NaN, those whose
    // magnitude rounds to a finite value.
    let negative_limit = match (M, SF, unsigned_overflow(&sp)) {
        (small::RN, false, Some(limit)) => (0x8000_0000 | limit) + 1,
        _ => 0xff80_0001,
    };
    let above_minus_infinity = _mm256_set1_epi32(negative_limit as i32);
    let sign = _mm256_set1_epi8((1u8 << sp.sign_pos) as i8);
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    // Per 8 inputs: the codes (for `RS` times 256, with the 8 bits below the grid) in 32-bit
    // lanes and the mask of negative inputs other than NaNs.
    let codes = |x: __m256i| -> (__m256i, __m256i) {
        let a = _mm256_and_si256(x, abs_mask);
        let c = if nan_select {
            // Two floating-point minimums: the first clamps and keeps a NaN (`vminps` gives
            // its second operand where one is NaN), the second turns it into the NaN code's
            // value (at least the clamp's, so nothing else changes).
            let (a, top) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(top));
            let y = _mm256_min_ps(top, a);
            _mm256_castps_si256(_mm256_min_ps(y, _mm256_castsi256_ps(nan_value)))
        } else {
            _mm256_min_epu32(a, top)
        };
        if M != small::RN {
            // The truncation (times 2^b) two ways, the larger of which is right: the normal
            // range's from the pattern (`c >> shift`, rebiased: negative below the smallest
            // normal), the subnormal range's by `vcvttps2dq` (at most `last_sub`, which is
            // under the smallest normal code).
            let normal = _mm256_sub_epi32(_mm256_srl_epi32(c, shift), normal_base);
            let scaled = _mm256_castsi256_ps(_mm256_add_epi32(c, scale));
            let subnormal = _mm256_min_epi32(_mm256_cvttps_epi32(scaled), last_sub);
            // (For `RS` the random byte is added once the results are 16 bits wide.)
            let t = _mm256_max_epi32(normal, subnormal);
            let negative = _mm256_cmpgt_epi32(above_minus_infinity, x);
            return (t, negative);
        }
        let addend = match table {
            // The addend by the exponent's low 3 bits (`vpermd`).
            Some(t) => _mm256_permutevar8x32_epi32(
                t,
                _mm256_max_epu32(_mm256_srli_epi32::<23>(c), e0_index),
            ),
            None => {
                let e = _mm256_max_epu32(_mm256_and_si256(c, exponent), e0);
                _mm256_add_epi32(_mm256_add_epi32(e, _mm256_srl_epi32(e, shift)), k)
            }
        };
        let (c, addend) = (_mm256_castsi256_ps(c), _mm256_castsi256_ps(addend));
        let t = _mm256_castps_si256(_mm256_add_ps(c, addend));
        let negative = _mm256_cmpgt_epi32(above_minus_infinity, x);
        (_mm256_and_si256(t, byte), negative)
    };
    let p = src.as_ptr().cast::<__m256i>();
    for (i, d) in dst.chunks_exact_mut(32).enumerate() {
        // SAFETY: `src` holds 32 `u32`s (128 bytes) from `32 * i` on (`dst` and `src` have
        // the same length): the four unaligned loads read exactly those.
        let x = |j: usize| unsafe { _mm256_loadu_si256(p.add(4 * i + j)) };
        let (c0, n0) = codes(x(0));
        let (c1, n1) = codes(x(1));
        let (c2, n2) = codes(x(2));
        let (c3, n3) = codes(x(3));
        let (mut c01, mut c23) = (_mm256_packus_epi32(c0, c1), _mm256_packus_epi32(c2, c3));
        if M == small::RS {
            // The encodings times 256 plus the 8 bits below the grid (at most the largest
            // finite code's, with nothing below it, plus 255: 16 bits), plus the random
            // byte: the carry rounds up, and the high byte is the code.
            let r = random(&rnd[32 * i..32 * i + 32]);
            c01 = _mm256_srli_epi16::<8>(_mm256_add_epi16(c01, r[0]));
            c23 = _mm256_srli_epi16::<8>(_mm256_add_epi16(c23, r[1]));
        }
        let c = _mm256_packus_epi16(c01, c23);
        let n = _mm256_packs_epi16(_mm256_packs_epi32(n0, n1), _mm256_packs_epi32(n2, n3));
        let c = signed_codes(c, n, sign, relu);
        let c = _mm256_permutevar8x32_epi32(c, order);
        // SAFETY: `d` holds 32 bytes: the unaligned store writes exactly those.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast::<__m256i>(), c) };
    }
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn widen_avx2<R: Word>(src: &[R], dst: &mut [u32]) {
    widen_plain(src, dst);
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn ue8m0_avx2<const UP: bool, const P: u8, D: Word>(src: &[u32], dst: &mut [D]) {
    // With `.satfinite` or without any policy, into bytes: 32 at a time.
    if P & !ue8m0::SF == 0 {
        if let Some(d) = D::as_u8_slice_mut(dst) {
            let n = src.len().min(d.len());
            let whole = n - n % 32;
            ue8m0_groups_avx2::<UP, P>(&src[..whole], &mut d[..whole]);
            ue8m0::run::<UP, P, u8>(&src[whole..n], &mut d[whole..n]);
            return;
        }
    }
    ue8m0::run::<UP, P, D>(src, dst);
}

/// f32 → ue8m0 toward zero or up (`UP`), with `.satfinite` (`P` = `ue8m0::SF`) or without
/// any policy (`P` = 0), 32 at a time (`src` and `dst` a multiple of 32 long), as
/// `ue8m0::convert` computes one, the results in 32-bit lanes between 0 and 511 and the
/// narrowing to bytes saturating (`vpackusdw`, `vpackuswb`: 256 and above give 0xff):
/// - toward zero, the magnitude's exponent field (∞ and NaN 0xff); with `.satfinite` of the
///   magnitude clamped to the largest finite value (∞ and overflows give 0xfe), plus one
///   for NaN (`a − (a > ∞)`, the compare's mask being −1): 0xff;
/// - up, the magnitude plus all ones below the exponent field (which carries into it exactly
///   when the fraction is not zero), zero at or below 2^-127, its exponent field (NaN 256 or
///   more, ∞ 255); with `.satfinite` the exponent field of twice the magnitude less one
///   unit, shifted arithmetically (below).
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn ue8m0_groups_avx2<const UP: bool, const P: u8>(src: &[u32], dst: &mut [u8]) {
    use std::arch::x86_64::*;
    let sf = P & ue8m0::SF != 0;
    let abs_mask = _mm256_set1_epi32(0x7fff_ffff);
    let below = _mm256_set1_epi32(0x007f_ffff);
    let largest = _mm256_set1_epi32(0x7f7f_ffff);
    let infinity = _mm256_set1_epi32(0x7f80_0000);
    let tiny = _mm256_set1_epi32(0x0040_0000);
    let minus_one = _mm256_set1_epi32(-1);
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    let code = |x: __m256i| -> __m256i {
        let a = _mm256_and_si256(x, abs_mask);
        if UP && sf {
            // Twice the magnitude (exact, or ∞ beyond the largest finite value), less one
            // unit, shifted arithmetically: the exponent field of 2a − ulp is the code
            // rounded up (2a's exponent, one less where 2a is a power of two), 2^-127 and
            // below give 0 or −1 (0 once narrowed), ∞ and overflows 0xfe, NaNs (quiet, their
            // fraction not zero) 0xff.
            let d = _mm256_castps_si256(_mm256_add_ps(
                _mm256_castsi256_ps(a),
                _mm256_castsi256_ps(a),
            ));
            return _mm256_srai_epi32::<23>(_mm256_add_epi32(d, minus_one));
        }
        if UP {
            let r = _mm256_srli_epi32::<23>(_mm256_add_epi32(a, below));
            _mm256_and_si256(r, _mm256_cmpgt_epi32(a, tiny))
        } else if sf {
            let r = _mm256_srli_epi32::<23>(_mm256_min_epi32(a, largest));
            _mm256_sub_epi32(r, _mm256_cmpgt_epi32(a, infinity))
        } else {
            _mm256_srli_epi32::<23>(a)
        }
    };
    let p = src.as_ptr().cast::<__m256i>();
    for (i, d) in dst.chunks_exact_mut(32).enumerate() {
        // SAFETY: `src` holds 32 `u32`s (128 bytes) from `32 * i` on (`dst` and `src` have
        // the same length): the four unaligned loads read exactly those.
        let x = |j: usize| code(unsafe { _mm256_loadu_si256(p.add(4 * i + j)) });
        let c = _mm256_packus_epi16(
            _mm256_packus_epi32(x(0), x(1)),
            _mm256_packus_epi32(x(2), x(3)),
        );
        let c = _mm256_permutevar8x32_epi32(c, order);
        // SAFETY: `d` holds 32 bytes: the unaligned store writes exactly those.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast::<__m256i>(), c) };
    }
}
