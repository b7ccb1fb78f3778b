//! The AVX-512 kernels (F, BW, VL; VBMI for the byte tables, BF16 for bf16 to nearest) and
//! their helpers: the dispatch of one conversion to them ([`fast_avx512`]), f16 through
//! `vcvtps2ph`, FP8/FP6/FP4 through f16 and tables by its bytes, the stochastic kernels, bf16
//! to nearest through `vcvtne2ps2bf16`, the MX scale and the 64-bit integer roundings. The
//! module docs of [`super`] say what each is for and how it is proven.
//! (x86-64 only: the parent declares this module for that architecture alone.)

use super::*;

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn fast_avx512<
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
    // f32 → f16 in the IEEE directions and bf16 to nearest (where the CPU has AVX-512 BF16),
    // without .satfinite: their kernels below take .relu (without .ftz) themselves.
    let f16_ieee =
        F::ID == Id::F16 && !SF && matches!(M, small::RN | small::RZ | small::RM | small::RP);
    let bf16_rn = F::ID == Id::Bf16
        && !SF
        && M == small::RN
        && is_x86_feature_detected!("avx512bf16")
        && is_x86_feature_detected!("avx512dq");
    // f32 → FP8/FP6/FP4 toward zero and to nearest (where the CPU has AVX-512 VBMI), where
    // `.relu` can act on the results: the table kernel takes it too.
    let vbmi = is_x86_feature_detected!("avx512vbmi");
    let narrow_bytes = (M == small::RZ || M == small::RN) && F::ID.is_narrow() && vbmi;
    // f32 → e5m2, e3m2, e2m1 stochastic with .satfinite and 8 random bits: through f16's
    // bytes (below).
    let bytes_rs =
        const { f16_bytes_shift(&F::SPEC).is_some() } && M == small::RS && SF && W == 8 && vbmi;
    // f32 → e4m3, e2m3 (and e3m2, e2m1 without .satfinite) stochastic with 8 random bits:
    // one addition (below).
    let sum_rs = M == small::RS
        && W == 8
        && F::ID.is_narrow()
        && F::ID != Id::E5m2
        && (SF || (!F::SPEC.has_inf && !F::SPEC.has_nan))
        && const { nan_by_clamp(&F::SPEC).is_some() }
        && vbmi;
    // f32 → f16 stochastic with 13 random bits: truncation by the CPU's own conversion.
    let f16_rs = F::ID == Id::F16 && M == small::RS && W == 13;
    // (Those kernels also take .relu where it can act on their results.)
    let own_relu = k.ftz_below == 0
        && (f16_ieee || bf16_rn || narrow_bytes || bytes_rs || sum_rs || f16_rs)
        && const { relu_on_results(&F::SPEC, SF) };
    if KN && !own_relu {
        knobs_first::<F, SF, D, R>(src, dst, rnd, k, |s, d, r| {
            // SAFETY: this function's features are the instance's.
            unsafe { fast_avx512::<F, M, SF, false, W, D, R>(s, d, r, k) }
        });
        return;
    }
    for r in streams_for::<u32, D>(src.len().min(dst.len())) {
        let (src, dst) = (&src[r.clone()], &mut dst[r.clone()]);
        let rnd = rnd.get(r).unwrap_or(&[]);
        // f32 → f16 in the IEEE directions, without .satfinite or .ftz: the CPU's own
        // conversion (all constants: the test folds away in every other instance).
        if f16_ieee && (!KN || own_relu) {
            if let Some(d) = D::as_u16_slice_mut(dst) {
                // SAFETY: this function's features include AVX-512 F, which `f16_avx512`
                // needs.
                unsafe { f16_avx512::<M, KN>(src, d, k) };
                continue;
            }
        }
        // f32 → FP8/FP6/FP4 toward zero and to nearest even, without .ftz, where
        // the CPU has AVX-512 VBMI: through f16 (rounded to odd for rn) and tables by its
        // bytes.
        if narrow_bytes && (!KN || own_relu) {
            if let (Some(t), Some(d)) = (byte_tables::<F, M, SF>(), D::as_u8_slice_mut(dst)) {
                // SAFETY: this function's features and the one that `narrow_bytes` checked
                // are all that `narrow_bytes_avx512` enables.
                unsafe { narrow_bytes_avx512::<F, M, SF, KN>(src, d, t, k) };
                continue;
            }
        }
        // f32 → e5m2, e3m2, e2m1 stochastic with .satfinite and 8 random bits (in bytes,
        // half-words or words), without .ftz: through f16 (of the input scaled to put the
        // format's smallest normal on f16's), whose top bits these formats are.
        if bytes_rs && (!KN || own_relu) {
            if let (Some(d), Some(r)) = (D::as_u8_slice_mut(dst), Randoms::of(rnd)) {
                // SAFETY: this function's features and the one that `vbmi` checked are all
                // that `f16_bytes_rs_avx512` enables.
                unsafe { f16_bytes_rs_avx512::<F, KN>(src, d, r, k) };
                continue;
            }
        }
        // f32 → e4m3, e2m3 (and e3m2, e2m1 without .satfinite) stochastic with 8 random bits
        // (in any word), with .satfinite or without infinity and NaN, without .ftz: one
        // addition toward zero gives the truncated code and the 8 bits below the grid.
        if sum_rs && (!KN || own_relu) {
            if let (Some(d), Some(r)) = (D::as_u8_slice_mut(dst), Randoms::of(rnd)) {
                // SAFETY: this function's features and the one that `vbmi` checked are all
                // that `narrow_rs_avx512` enables.
                unsafe { narrow_rs_avx512::<F, SF, KN>(src, d, r, k) };
                continue;
            }
        }
        // f32 → f16 stochastic with 13 random bits (in any word), without .ftz: truncation
        // by the CPU's own conversion, the carry from the 13 bits below.
        if f16_rs && (!KN || own_relu) {
            if let (Some(d), Some(r)) = (D::as_u16_slice_mut(dst), Randoms::of(rnd)) {
                // SAFETY: this function's features are all that `f16_rs_avx512` enables.
                unsafe { f16_rs_avx512::<SF, KN>(src, d, r, k) };
                continue;
            }
        }
        // f32 → bf16 rounding to nearest even, without .satfinite or .ftz, where the CPU has
        // AVX-512 BF16: its own conversion.
        if bf16_rn && (!KN || own_relu) {
            if let Some(d) = D::as_u16_slice_mut(dst) {
                // SAFETY: this function's features and the two that `bf16_rn` checked are
                // all that `bf16_rn_avx512` enables.
                unsafe { bf16_rn_avx512::<KN>(src, d, k) };
                continue;
            }
        }
        fast::run::<F, M, SF, KN, W, D, R>(src, dst, rnd, k);
    }
}

/// The tables of [`narrow_bytes_avx512`], built on first use (`fast::byte_tables`): by
/// format (e4m3, e5m2, e2m3, e3m2, e2m1), rounding (rz, rn) and `.satfinite`.
fn byte_tables<F: Fmt, const M: u8, const SF: bool>() -> Option<&'static fast::ByteTables> {
    use std::sync::OnceLock;
    static TABLES: [OnceLock<Option<fast::ByteTables>>; 20] = [const { OnceLock::new() }; 20];
    let i = 4 * (F::ID as usize - Id::E4m3 as usize) + 2 * (M == small::RN) as usize + SF as usize;
    TABLES
        .get(i)?
        .get_or_init(fast::byte_tables::<F, M, SF>)
        .as_ref()
}

/// `vpermt2b`/`vpermt2w` indices, computed at compile time (the kernels below are called per
/// tile of a long slice, so nothing is built per call): byte `i` of a result is byte
/// `stride * (i % lanes) + offset` of the two sources.
const fn byte_indices(stride: usize, lanes: usize, offset: usize) -> [u8; 64] {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (stride * (i % lanes) + offset) as u8;
        i += 1;
    }
    t
}
/// The low byte of each 16-bit lane of two vectors, in order.
const LOW_BYTES: [u8; 64] = byte_indices(2, 64, 0);
/// The high byte of each 16-bit lane of two vectors, in order.
const HIGH_BYTES: [u8; 64] = byte_indices(2, 64, 1);
/// The low byte of each 32-bit lane of two vectors, in order, twice (bytes 32..63 repeat
/// bytes 0..31: a select takes each half from another pair of vectors).
const LOW_BYTES_OF_WORDS: [u8; 64] = byte_indices(4, 32, 0);
/// The low byte of each 32-bit lane of two vectors, in order, at the even bytes (the low
/// bytes of 16-bit lanes; a zeroing mask clears the odd ones).
const LOW_BYTES_OF_WORDS_IN_HALVES: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (4 * (i / 2)) as u8;
        i += 1;
    }
    t
};
/// The low half-word of each 32-bit lane of two vectors, in order.
const LOW_HALVES: [u16; 32] = {
    let mut t = [0u16; 32];
    let mut i = 0;
    while i < 32 {
        t[i] = 2 * i as u16;
        i += 1;
    }
    t
};

/// Integers without padding, whose tables [`vector`] reads as bytes.
trait Plain: Copy {}
impl Plain for u8 {}
impl Plain for u16 {}
impl Plain for u32 {}

/// The 64 bytes of table `t` from byte `64 * i` on, as a vector.
#[inline(always)]
fn vector<T: Plain>(t: &[T], i: usize) -> std::arch::x86_64::__m512i {
    assert!(
        64 * (i + 1) <= std::mem::size_of_val(t),
        "a table of too few bytes"
    );
    // SAFETY: the table holds at least `64 * (i + 1)` bytes (checked just above), all of
    // them initialised (`T` is an integer type without padding): the unaligned load reads
    // the 64 from `64 * i` on. The callers all have AVX-512 F, and this is inlined into them.
    unsafe {
        let p = t.as_ptr().cast::<u8>().add(64 * i);
        std::arch::x86_64::_mm512_loadu_si512(p.cast())
    }
}

/// The 64 `u32`s of `s` (at least that many), as four vectors.
#[inline(always)]
fn group(s: &[u32]) -> [std::arch::x86_64::__m512i; 4] {
    let p = s[..64].as_ptr().cast::<std::arch::x86_64::__m512i>();
    // SAFETY: `s[..64]` is 256 bytes: the four unaligned loads read exactly those. The
    // callers all have AVX-512 F, and this is inlined into them.
    unsafe {
        use std::arch::x86_64::_mm512_loadu_si512 as load;
        [load(p), load(p.add(1)), load(p.add(2)), load(p.add(3))]
    }
}

/// The 64 `f32`s of `x` converted toward zero into f16 (`vcvtps2ph`), as two vectors of 32
/// halves in order. With `ODD`, rounded to odd: bit 13 of each f32 (f16's last bit) is set
/// first where one of the 13 bits below it is (`x | ((x + 0x1fff) & 0x2000)`); where f16 is
/// normal, its last bit is then set exactly where the conversion is inexact (an OR never
/// carries: the truncation is the f32's). Below 2^-14 bit 13 is under f16's grid and the
/// sticky bit may be missing (the callers say why that does not matter to them).
#[target_feature(enable = "avx512f")]
#[inline]
fn f16_halves<const ODD: bool>(
    x: [std::arch::x86_64::__m512i; 4],
) -> (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i) {
    use std::arch::x86_64::*;
    const RZ: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    let (below, last) = (_mm512_set1_epi32(0x1fff), _mm512_set1_epi32(0x2000));
    let f16 = |x: __m512i| -> __m256i {
        let x = if ODD {
            _mm512_ternarylogic_epi32::<0xf8>(x, _mm512_add_epi32(x, below), last)
        } else {
            x
        };
        _mm512_cvt_roundps_ph::<RZ>(_mm512_castsi512_ps(x))
    };
    let pair = |lo: __m512i, hi: __m512i| {
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(f16(lo)), f16(hi))
    };
    (pair(x[0], x[1]), pair(x[2], x[3]))
}

/// 64 bytes of 1 for a masked addition (`vpaddb` under a mask) that adds one where a compare
/// holds. Given a literal 1, LLVM rewrites that addition as a subtraction of the mask
/// widened to a vector (`vpmovm2b`, `vpsubb`: two instructions instead of one); from
/// `black_box` (once per call, before the loop) it cannot see the value and keeps the one
/// instruction, which the two kernels below, bound by their instruction count, need.
#[target_feature(enable = "avx512f")]
#[inline]
fn masked_one() -> std::arch::x86_64::__m512i {
    opaque_bytes(1)
}

/// 64 bytes of `b` that LLVM cannot see (as in [`masked_one`]): for the masked addition of a
/// format's sign bit, which it would otherwise rewrite as an `vpxor` and a masked move.
#[target_feature(enable = "avx512f")]
#[inline]
fn opaque_bytes(b: u8) -> std::arch::x86_64::__m512i {
    std::arch::x86_64::_mm512_set1_epi8(std::hint::black_box(b) as i8)
}

/// f32 → e4m3, e5m2, e2m3, e3m2 or e2m1 toward zero or to nearest even (`M`), 64 at a time,
/// through f16 and tables (`fast::byte_tables`):
/// - `vcvtps2ph` toward zero into f16 ([`f16_halves`]), for rn rounded to odd; below
///   2^-14, where its sticky bit may be missing, e4m3, e2m3, e3m2 and e2m1 round everything
///   to zero, as they do the f32, and e5m2 has its subnormals: its sticky bit matters only
///   where the low byte is 0x80 (a midpoint), and a group of 64 with such an element below
///   2^-14, rare, goes through the portable kernel;
/// - the f16s' high and low bytes gathered into 64 bytes each (`vpermt2b`);
/// - the result is the base table's entry for the high byte's low 7 bits (one `vpermi2b`:
///   128 entries), plus one where the low byte is above the limit table's entry, plus one
///   more where it is above the second limit's (formats with three significand bits have
///   the third in the low byte: a row of 256 low bytes can go up once toward zero, twice to
///   nearest); the look-ups of limits that no row uses (all 0xff) are skipped;
/// - the sign by one `vpternlogd`: the entry's sign bit is kept where the input is negative
///   (the high byte shifted right, in 16-bit lanes, so that its bit 7 is at the sign's
///   place).
///
/// The instruction's truncation is IEEE 754's with MXCSR's defaults, as for `f16_avx512`.
/// (Rows of 128 entries indexed by the f16's high byte as it is take one `vpermi2b` each
/// and no shift of the f16 first; tables of 256 would need two and a select.) With
/// `RELU`, `.relu` from `k` (without `.ftz`, where [`relu_on_results`] holds): the codes
/// with the sign bit set are made +0. The tail (under 64 elements) goes through the portable
/// kernel.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn narrow_bytes_avx512<F: Fmt, const M: u8, const SF: bool, const RELU: bool>(
    src: &[u32],
    dst: &mut [u8],
    tables: &fast::ByteTables,
    k: fast::Knobs,
) {
    if RELU && k.relu == 0 {
        // The knob not set: the instance without it.
        return narrow_bytes_avx512::<F, M, SF, false>(src, dst, tables, k);
    }
    // The portable kernel takes the groups with a midpoint below 2^-14.
    groups_then_portable(
        src,
        dst,
        64,
        // (The closures have this function's features.)
        |s, d| narrow_bytes_groups::<F, M, RELU>(s, d, tables),
        |s, d| fast::run::<F, M, SF, RELU, 0, u8, u32>(s, d, &[], k),
    );
}

/// `groups`, a loop over the whole groups of `size` elements of `src` and `dst` that stops
/// at the first group it cannot take (giving its index), run from the start and again after
/// each such group, which `portable` converts instead, as it does the tail (under `size`
/// elements): so that nothing is called inside the vector loop (see
/// [`narrow_bytes_groups`]).
#[inline(always)]
fn groups_then_portable<D>(
    src: &[u32],
    dst: &mut [D],
    size: usize,
    mut groups: impl FnMut(&[u32], &mut [D]) -> Option<usize>,
    mut portable: impl FnMut(&[u32], &mut [D]),
) {
    let n = src.len().min(dst.len());
    let whole = n - n % size;
    let mut from = 0;
    while let Some(g) = groups(&src[from..whole], &mut dst[from..whole]) {
        let g = from + size * g;
        portable(&src[g..g + size], &mut dst[g..g + size]);
        from = g + size;
    }
    portable(&src[whole..n], &mut dst[whole..n]);
}

/// The groups of 64 of [`narrow_bytes_avx512`] (`src` and `dst` a multiple of 64 long),
/// with `.relu` if `RELU`, up to the first that the portable kernel must take (its index, or
/// `None` when all are done). The number of limits looked up and the midpoint check are
/// constants of the format and direction ([`fast::byte_steps`],
/// [`fast::byte_subnormal_midpoints`]), and nothing is called in the loop: a call or a
/// field tested there makes the compiler reload the constants from the stack, and the loop
/// is bound by its instruction count.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
#[inline]
pub(super) fn narrow_bytes_groups<F: Fmt, const M: u8, const RELU: bool>(
    src: &[u32],
    dst: &mut [u8],
    tables: &fast::ByteTables,
) -> Option<usize> {
    use std::arch::x86_64::*;
    let table = |t: &[u8; 256]| (vector(t, 0), vector(t, 1));
    let (base, limit, second) = (
        table(&tables.base),
        table(&tables.limit),
        table(&tables.second),
    );
    // (The kernel is called per tile of 512 elements of a long slice: nothing is computed
    // here from the tables but their vectors.)
    let steps = const { fast::byte_steps(&F::SPEC, M == small::RN) };
    let midpoints = const { fast::byte_subnormal_midpoints(&F::SPEC, M == small::RN) };
    let (low, high) = (vector(&LOW_BYTES, 0), vector(&HIGH_BYTES, 0));
    let one = masked_one();
    let sign_pos = F::SPEC.sign_pos;
    let sign_shift = _mm_set_epi64x(0, i64::from(7 - sign_pos));
    let unsigned = _mm512_set1_epi8(!(1u8 << sign_pos) as i8);
    let sign_bit = _mm512_set1_epi8((1u8 << sign_pos) as i8);
    // f16's exponent bits in its high byte, and a low byte at a midpoint.
    let (exponent, midpoint) = (_mm512_set1_epi8(0x7c), _mm512_set1_epi8(0x80u8 as i8));
    for (i, (s, d)) in src
        .chunks_exact(64)
        .zip(dst.chunks_exact_mut(64))
        .enumerate()
    {
        let (a, b) = if M == small::RN {
            f16_halves::<true>(group(s))
        } else {
            f16_halves::<false>(group(s))
        };
        let row = _mm512_permutex2var_epi8(a, high, b);
        let mut code = _mm512_permutex2var_epi8(base.0, row, base.1);
        if midpoints {
            let lo = _mm512_permutex2var_epi8(a, low, b);
            let subnormal = _mm512_testn_epi8_mask(row, exponent);
            if _mm512_mask_cmpeq_epi8_mask(subnormal, lo, midpoint) != 0 {
                return Some(i);
            }
        }
        if steps > 0 {
            let lo = _mm512_permutex2var_epi8(a, low, b);
            let lim = _mm512_permutex2var_epi8(limit.0, row, limit.1);
            code = _mm512_mask_add_epi8(code, _mm512_cmpgt_epu8_mask(lo, lim), code, one);
            if steps > 1 {
                let lim = _mm512_permutex2var_epi8(second.0, row, second.1);
                code = _mm512_mask_add_epi8(code, _mm512_cmpgt_epu8_mask(lo, lim), code, one);
            }
        }
        // `code & (sign | !sign bit)`, the input's sign moved to the sign bit's place.
        let sign = _mm512_srl_epi16(row, sign_shift);
        let code = _mm512_ternarylogic_epi32::<0xe0>(code, sign, unsigned);
        // `.relu`: the codes with the sign bit set made +0 (`relu_on_results`).
        let code = if RELU {
            _mm512_maskz_mov_epi8(_mm512_testn_epi8_mask(code, sign_bit), code)
        } else {
            code
        };
        // SAFETY: `d` holds 64 bytes: the unaligned store writes exactly those.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), code) };
    }
    None
}

/// f32 → e5m2, e3m2 or e2m1 (`F`) with stochastic rounding (8 random bits per element, in
/// bytes, or the low bytes of half-words or words, gathered by `vpermt2b`) and `.satfinite`,
/// 64 at a time. e5m2 is the top byte of f16 (the same exponent field and bias, subnormals
/// included), so the 8 bits below e5m2's grid step that stochastic rounding keeps are
/// exactly f16's low byte at every magnitude: `vcvtps2ph` toward zero gives the magnitude
/// truncated to them (an f32 beyond f16's range gives f16's largest finite value, whose
/// e5m2 result with `.satfinite` is e5m2's largest, as the f32's is). e3m2 and e2m1 are the
/// same with the input scaled first by 2^(bias − 15) (exactly; below f32's normal range the
/// product may round, but all of that range, scaled or not, gives 0 with no carry), which
/// puts their smallest normal value on f16's: e3m2 is then f16's top byte too, up to its
/// own largest value, and e2m1 f16's bits 14..9, the 8 bits below its grid bits 8..1 (each
/// f16 shifted right by one bit in 16-bit lanes). The f16s' high and low bytes are gathered
/// into two vectors (`vpermt2b`), and the rest is done on 64 bytes at once: the carry out
/// of the low byte plus the random byte (the sum's byte below the low byte) is added to the
/// high byte's magnitude, which is clamped to the largest finite code (which also takes
/// infinity there); the sign is the high byte's (shifted to the format's sign bit); NaN
/// inputs (high-byte magnitudes above infinity's: `vcvtps2ph` sets a NaN's quiet bit) get
/// the format's NaN result (e3m2's and e2m1's: their largest finite code, positive). With
/// `RELU`, `.relu` from `k` (without `.ftz`): the codes of negative inputs that are not NaNs
/// are +0. The tail (under 64 elements) goes through the portable kernel.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn f16_bytes_rs_avx512<F: Fmt, const RELU: bool>(
    src: &[u32],
    dst: &mut [u8],
    rnd: Randoms,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let relu = RELU && k.relu != 0;
    let sp = const { F::SPEC };
    // Bits of e5m2's significand below the format's (0 or 1), by which each f16 is shifted.
    // (Instances of other formats exist, never called: the dispatch checks the format.)
    let shift = const {
        match f16_bytes_shift(&F::SPEC) {
            Some(shift) => shift,
            None => 0,
        }
    };
    let n = src.len().min(dst.len()).min(rnd.len());
    let whole = n - n % 64;
    // 2^(bias − 15), to put the format's smallest normal value on f16's.
    let scale = _mm512_castsi512_ps(_mm512_set1_epi32(f16_bytes_scale(&sp)));
    // The high byte's magnitude bits and infinity's (shifted by `shift`).
    let magnitude = _mm512_set1_epi8((0x7fu8 >> shift) as i8);
    let infinity = _mm512_set1_epi8((0x7cu8 >> shift) as i8);
    // −∞'s high byte (with the sign bit copied into bit 6 where the f16 is shifted).
    let minus_infinity = _mm512_set1_epi8((0xfcu8 as i8) >> shift);
    // Whether the format's NaN result is its largest finite code (e3m2, e2m1), positive;
    // otherwise (e5m2) the sign is the high byte's and NaN inputs are selected.
    let nan_by_clamp = matches!(nan_by_clamp(&sp), Some(false));
    let largest = _mm512_set1_epi8(sp.max_enc as i8);
    let nan = _mm512_set1_epi8(sp.nan_full as i8);
    // (Opaque: kept as one masked `vpaddb`.)
    let sign = opaque_bytes(1u8 << sp.sign_pos);
    let one = masked_one();
    let (low, high) = (vector(&LOW_BYTES, 0), vector(&HIGH_BYTES, 0));
    let low32 = vector(&LOW_BYTES_OF_WORDS, 0);
    // The 64 random bytes of elements `i..i + 64`.
    let random = |i: usize| -> __m512i {
        match rnd {
            Randoms::U32(r) => {
                let p = r[i..i + 64].as_ptr().cast::<__m512i>();
                // SAFETY: `p` points at 64 `u32`s (256 bytes): the four unaligned loads read
                // exactly those.
                let (r0, r1, r2, r3) = unsafe {
                    (
                        _mm512_loadu_si512(p),
                        _mm512_loadu_si512(p.add(1)),
                        _mm512_loadu_si512(p.add(2)),
                        _mm512_loadu_si512(p.add(3)),
                    )
                };
                _mm512_mask_blend_epi64(
                    0xf0,
                    _mm512_permutex2var_epi8(r0, low32, r1),
                    _mm512_permutex2var_epi8(r2, low32, r3),
                )
            }
            Randoms::U16(r) => {
                let p = r[i..i + 64].as_ptr().cast::<__m512i>();
                // SAFETY: `p` points at 64 `u16`s (128 bytes): the two unaligned loads read
                // exactly those.
                let (r0, r1) = unsafe { (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1))) };
                _mm512_permutex2var_epi8(r0, low, r1)
            }
            Randoms::U8(r) => {
                // SAFETY: `r[i..i + 64]` is 64 bytes: the unaligned load reads exactly those.
                unsafe { _mm512_loadu_si512(r[i..i + 64].as_ptr().cast()) }
            }
        }
    };
    for (i, (s, d)) in src[..whole]
        .chunks_exact(64)
        .zip(dst[..whole].chunks_exact_mut(64))
        .enumerate()
    {
        let r = random(64 * i);
        let x = group(s);
        let x = if sp.bias == 15 {
            x
        } else {
            x.map(|x| _mm512_castps_si512(_mm512_mul_ps(_mm512_castsi512_ps(x), scale)))
        };
        let (a, b) = f16_halves::<false>(x);
        // (Arithmetic: the sign fills the top bit again.)
        let (a, b) = if shift == 0 {
            (a, b)
        } else {
            (_mm512_srai_epi16::<1>(a), _mm512_srai_epi16::<1>(b))
        };
        let hi = _mm512_permutex2var_epi8(a, high, b);
        let lo = _mm512_permutex2var_epi8(a, low, b);
        // The low byte plus the random byte carries where the sum wraps below the low byte.
        let carry = _mm512_cmplt_epu8_mask(_mm512_add_epi8(lo, r), lo);
        let mag = _mm512_and_si512(hi, magnitude);
        let mag = _mm512_min_epu8(_mm512_mask_add_epi8(mag, carry, mag, one), largest);
        let code = if nan_by_clamp {
            // NaNs have the largest code from the clamp; the sign goes on where the high
            // byte, as a signed number, is at most −∞'s: negative, and not a NaN (with
            // `.relu`, such codes are +0 instead).
            let negative = _mm512_cmple_epi8_mask(hi, minus_infinity);
            if relu {
                _mm512_mask_mov_epi8(mag, negative, _mm512_setzero_si512())
            } else {
                _mm512_mask_add_epi8(mag, negative, mag, sign)
            }
        } else {
            let is_nan = _mm512_cmpgt_epu8_mask(_mm512_and_si512(hi, magnitude), infinity);
            let code = _mm512_ternarylogic_epi32::<0xf8>(mag, hi, sign);
            let code = _mm512_mask_mov_epi8(code, is_nan, nan);
            if relu {
                let negative = _mm512_cmple_epi8_mask(hi, minus_infinity);
                _mm512_mask_mov_epi8(code, negative, _mm512_setzero_si512())
            } else {
                code
            }
        };
        // SAFETY: `d` holds 64 bytes: the unaligned store writes exactly those.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), code) };
    }
    rnd.tail::<F, true, RELU, 8, u8>(src, dst, whole, k);
}

/// f32 → e4m3, e2m3, e3m2 or e2m1 with stochastic rounding (8 random bits per element, in
/// any word) and `.satfinite` (or a format without infinity and NaN), 64 at a time: the
/// truncated magnitude and the 8 bits below the destination's grid from one floating-point
/// addition, as `fast.rs`'s `mag_rn` rounds to nearest:
/// - the magnitude, clamped to the largest finite value (whose result the clamp keeps), plus
///   an addend, added toward zero (`vaddps` with the rounding in the instruction). The
///   addend's unit in the last place is 2^-8 of the destination's grid step at the input,
///   and its significand bits the exponent's offset from the smallest normal one, shifted
///   left by the mantissa bits and 8: the sum's low 16 bits are then the truncated encoding
///   times 256 plus the 8 bits below the grid, normal and subnormal results alike, a carry
///   into the next exponent included. The addend comes from a 32-entry table by the
///   exponent's low 5 bits (`vpermt2ps`; the exponent raised to the smallest normal one
///   first: the formats' exponent range is narrower than 32);
/// - those low halves gathered into 16-bit lanes (`vpermt2w`) and the random byte added: the
///   high byte of the sum is the code (the carry rounds up; the largest finite value, which
///   the clamp gives, has no bits below the grid, so no code goes past it);
/// - the high bytes gathered into 64 bytes (`vpermt2b`), the sign added where the input is
///   negative and not NaN;
/// - NaN inputs: where the format's NaN result is its largest finite code (the formats
///   without NaN), the clamp gives it; where it is the code one above, in the same binade
///   (e4m3's), that code's value (its bits below the grid are zero: no carry goes past it),
///   by two floating-point minimums, the clamp keeping the NaN and the second replacing it
///   (`vminps` gives its second operand where one is NaN). The caller
///   checks that the format's NaN result is one of the two ([`nan_by_clamp`]).
///
/// (64 at a time: at 32, with one byte narrowing per 32, it is slower than the portable
/// kernel at 64 Mi.) With `RELU`, `.relu` from `k` (without `.ftz`): the codes of negative
/// inputs that are not NaNs are +0 instead of signed. The tail (under 64 elements) goes
/// through the portable kernel.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn narrow_rs_avx512<F: Fmt, const SF: bool, const RELU: bool>(
    src: &[u32],
    dst: &mut [u8],
    rnd: Randoms,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let relu = RELU && k.relu != 0;
    let n = src.len().min(dst.len()).min(rnd.len());
    let whole = n - n % 64;
    let (s, d) = (&src[..whole], &mut dst[..whole]);
    let low_bytes = vector(&LOW_BYTES_OF_WORDS_IN_HALVES, 0);
    let byte = _mm512_set1_epi16(0xff);
    // One loop per word of the random values (no choice per group): each widens or gathers
    // the 64 random bytes of a group into two vectors of 16-bit lanes.
    match rnd {
        Randoms::U8(r) => narrow_rs_groups::<F, SF, u8>(s, d, &r[..whole], relu, |r| {
            let p = r.as_ptr().cast::<__m256i>();
            // SAFETY: `r` holds 64 bytes: the two unaligned loads read exactly those.
            let (r0, r1) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
            (_mm512_cvtepu8_epi16(r0), _mm512_cvtepu8_epi16(r1))
        }),
        Randoms::U16(r) => narrow_rs_groups::<F, SF, u16>(s, d, &r[..whole], relu, |r| {
            let p = r.as_ptr().cast::<__m512i>();
            // SAFETY: `r` holds 64 `u16`s (128 bytes): the two unaligned loads read exactly
            // those.
            let (r0, r1) = unsafe { (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1))) };
            (_mm512_and_si512(r0, byte), _mm512_and_si512(r1, byte))
        }),
        Randoms::U32(r) => narrow_rs_groups::<F, SF, u32>(s, d, &r[..whole], relu, |r| {
            let p = r.as_ptr().cast::<__m512i>();
            // SAFETY: `r` holds 64 `u32`s (256 bytes): the four unaligned loads read exactly
            // those.
            let (r0, r1, r2, r3) = unsafe {
                (
                    _mm512_loadu_si512(p),
                    _mm512_loadu_si512(p.add(1)),
                    _mm512_loadu_si512(p.add(2)),
                    _mm512_loadu_si512(p.add(3)),
                )
            };
            // The words' low bytes, zero-extended: `vpermt2b` with the odd bytes zeroed.
            let even = 0x5555_5555_5555_5555;
            (
                _mm512_maskz_permutex2var_epi8(even, r0, low_bytes, r1),
                _mm512_maskz_permutex2var_epi8(even, r2, low_bytes, r3),
            )
        }),
    }
    rnd.tail::<F, SF, RELU, 8, u8>(src, dst, whole, k);
}

/// The groups of 64 of [`narrow_rs_avx512`] (`src`, `dst` and `rnd` of a multiple of 64
/// elements), with `.relu` if `relu`, `random` giving a group's random bytes in two
/// vectors of 16-bit lanes.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
#[inline]
fn narrow_rs_groups<F: Fmt, const SF: bool, R>(
    src: &[u32],
    dst: &mut [u8],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i),
) {
    use std::arch::x86_64::*;
    const RZ: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    let sp = F::SPEC;
    // Biased f32 exponent of the smallest normal, and the largest finite value's pattern.
    let e0 = (128 - sp.bias) as u32;
    let top = fast::value_bits(&sp, sp.max_enc);
    let addends = const { sum_addends::<32>(&F::SPEC, 8) };
    let a0 = _mm512_castsi512_ps(vector(&addends, 0));
    let a1 = _mm512_castsi512_ps(vector(&addends, 1));
    let low = vector(&LOW_HALVES, 0);
    let high_bytes = vector(&HIGH_BYTES, 0);
    let abs_mask = _mm512_set1_epi32(0x7fff_ffff);
    let (top, e0) = (_mm512_set1_epi32(top as i32), _mm512_set1_epi32(e0 as i32));
    // (Opaque: kept as one masked `vpaddb`.)
    let sign = opaque_bytes(1u8 << sp.sign_pos);
    // NaN inputs get their result from the clamp ([`nan_by_clamp`]), or from a second
    // minimum, with the value of the code above the largest finite one.
    let nan_above = const { matches!(nan_by_clamp(&F::SPEC), Some(true)) };
    let nan_value = _mm512_set1_epi32(fast::value_bits(&sp, sp.nan_full) as i32);
    // The words of negative inputs that are not NaNs: at most −∞'s pattern, as signed words.
    let minus_infinity = _mm512_set1_epi32(0xff80_0000_u32 as i32);
    // Per 16 inputs: the sums, and the mask of negative inputs other than NaNs.
    let sums = |x: __m512i| -> (__m512i, __mmask16) {
        let a = _mm512_and_si512(x, abs_mask);
        let c = if nan_above {
            // Two floating-point minimums, as in `narrow_sum_groups`: the clamp keeps a NaN,
            // which the second makes the NaN code's value.
            let (a, top) = (_mm512_castsi512_ps(a), _mm512_castsi512_ps(top));
            let y = _mm512_min_ps(top, a);
            _mm512_castps_si512(_mm512_min_ps(y, _mm512_castsi512_ps(nan_value)))
        } else {
            _mm512_min_epu32(a, top)
        };
        let e = _mm512_max_epu32(_mm512_srli_epi32::<23>(c), e0);
        let addend = _mm512_permutex2var_ps(a0, e, a1);
        let sum = _mm512_add_round_ps::<RZ>(_mm512_castsi512_ps(c), addend);
        let negative = _mm512_cmple_epi32_mask(x, minus_infinity);
        (_mm512_castps_si512(sum), negative)
    };
    for ((s, d), r) in src
        .chunks_exact(64)
        .zip(dst.chunks_exact_mut(64))
        .zip(rnd.chunks_exact(64))
    {
        let [x0, x1, x2, x3] = group(s);
        let ((y0, neg0), (y1, neg1)) = (sums(x0), sums(x1));
        let ((y2, neg2), (y3, neg3)) = (sums(x2), sums(x3));
        let scaled01 = _mm512_permutex2var_epi16(y0, low, y1);
        let scaled23 = _mm512_permutex2var_epi16(y2, low, y3);
        // The codes are the sums' high bytes (at most the largest finite code: its value,
        // the clamp's, has no bits below the grid).
        let (r01, r23) = random(r);
        let sum01 = _mm512_add_epi16(scaled01, r01);
        let sum23 = _mm512_add_epi16(scaled23, r23);
        let codes = _mm512_permutex2var_epi8(sum01, high_bytes, sum23);
        let negative = _mm512_kunpackd(
            u64::from(_mm512_kunpackw(u32::from(neg3), u32::from(neg2))),
            u64::from(_mm512_kunpackw(u32::from(neg1), u32::from(neg0))),
        );
        // (With `.relu`, the codes of negative inputs that are not NaNs are +0.)
        let codes = if relu {
            _mm512_mask_mov_epi8(codes, negative, _mm512_setzero_si512())
        } else {
            _mm512_mask_add_epi8(codes, negative, codes, sign)
        };
        // SAFETY: `d` holds 64 bytes: the unaligned store writes exactly those.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), codes) };
    }
}

/// f32 → f16 with stochastic rounding (13 random bits per element, in half-words, or the
/// low halves of words gathered by `vpermt2w`, or bytes widened), 32 at a time. The result
/// is the magnitude truncated to f16's grid plus the carry out of the 13 bits below the grid
/// step added to the random value:
/// - the truncation is `vcvtps2ph` toward zero (with the sign; an f32 beyond f16's range
///   gives f16's largest finite value, which with a carry becomes infinity, as in the exact
///   core, and infinity stays infinity: its 13 bits are zero);
/// - the 13 bits are the f32's lowest at or above f16's smallest normal. Below it f16's grid
///   step is 2^-24 whatever the exponent, and the f32 magnitude plus 2^-14, added toward
///   zero (`vaddps` with the rounding in the instruction, on those lanes only), lies in
///   [2^-14, 2^-13), whose grid step is 2^-37: its lowest 13 bits are the magnitude's bits
///   from 2^-25 to 2^-37, truncated, as the exact core takes them;
/// - the 13 bits and the random value's low 13 are added in 16-bit lanes (at most
///   `0x3ffe`): bit 13 of the sum is the carry.
///
/// With `.satfinite` (`SF`) the magnitude is then clamped to the largest finite value
/// (infinities and overflows). NaN inputs (f16 magnitudes above infinity's) get the canonical
/// NaN. With `RELU`, `.relu` from `k` (without `.ftz`) as in [`f16_avx512`]. The tail
/// (under 32 elements) goes through the portable kernel.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn f16_rs_avx512<const SF: bool, const RELU: bool>(
    src: &[u32],
    dst: &mut [u16],
    rnd: Randoms,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    if RELU && k.relu == 0 {
        // The knob not set: the instance without it. (A test of `k.relu` in the loop
        // costs much of the speed in cache.)
        return f16_rs_avx512::<SF, false>(src, dst, rnd, k);
    }
    let relu = RELU;
    const RZ: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    let n = src.len().min(dst.len()).min(rnd.len());
    let whole = n - n % 32;
    let abs_mask = _mm512_set1_epi32(0x7fff_ffff);
    // 2^-14, f16's smallest normal.
    let min_normal = _mm512_set1_epi32(0x3880_0000);
    let low13 = _mm512_set1_epi16(0x1fff);
    let magnitude = _mm512_set1_epi16(0x7fff);
    let infinity = _mm512_set1_epi16(0x7c00);
    let nan = _mm512_set1_epi16(formats::F16::SPEC.nan_full as i16);
    let largest = _mm512_set1_epi16(formats::F16::SPEC.max_enc as i16);
    let low = vector(&LOW_HALVES, 0);
    // The 32 random values of elements `i..i + 32`, as 16-bit lanes.
    let random = |i: usize| -> __m512i {
        match rnd {
            Randoms::U32(r) => {
                let p = r[i..i + 32].as_ptr().cast::<__m512i>();
                // SAFETY: `p` points at 32 `u32`s (128 bytes): the two unaligned loads read
                // exactly those.
                let (r0, r1) = unsafe { (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1))) };
                _mm512_permutex2var_epi16(r0, low, r1)
            }
            Randoms::U16(r) => {
                // SAFETY: `r[i..i + 32]` is 64 bytes: the unaligned load reads exactly those.
                unsafe { _mm512_loadu_si512(r[i..i + 32].as_ptr().cast()) }
            }
            Randoms::U8(r) => {
                // SAFETY: `r[i..i + 32]` is 32 bytes: the unaligned load reads exactly those.
                _mm512_cvtepu8_epi16(unsafe { _mm256_loadu_si256(r[i..i + 32].as_ptr().cast()) })
            }
        }
    };
    for (i, (s, d)) in src[..whole]
        .chunks_exact(32)
        .zip(dst[..whole].chunks_exact_mut(32))
        .enumerate()
    {
        let p = s.as_ptr().cast::<f32>();
        // SAFETY: `s` holds 32 `u32`s (128 bytes): the unaligned loads read exactly those.
        let (x0, x1) = unsafe { (_mm512_loadu_ps(p), _mm512_loadu_ps(p.add(16))) };
        let r = random(32 * i);
        let lowest13 = |x: __m512| {
            let a = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), abs_mask));
            let below = _mm512_cmplt_epu32_mask(_mm512_castps_si512(a), min_normal);
            let lifted =
                _mm512_mask_add_round_ps::<RZ>(a, below, a, _mm512_castsi512_ps(min_normal));
            _mm512_castps_si512(lifted)
        };
        let bits = _mm512_permutex2var_epi16(lowest13(x0), low, lowest13(x1));
        let sum = _mm512_add_epi16(_mm512_and_si512(bits, low13), _mm512_and_si512(r, low13));
        let h = _mm512_inserti64x4::<1>(
            _mm512_castsi256_si512(_mm512_cvt_roundps_ph::<RZ>(x0)),
            _mm512_cvt_roundps_ph::<RZ>(x1),
        );
        let mut code = _mm512_add_epi16(h, _mm512_srli_epi16::<13>(sum));
        if SF {
            let clamped = _mm512_min_epu16(_mm512_and_si512(code, magnitude), largest);
            // The clamped magnitude with the sign bit of the code.
            code = _mm512_ternarylogic_epi32::<0xe2>(clamped, magnitude, code);
        }
        let is_nan = _mm512_cmpgt_epu16_mask(_mm512_and_si512(h, magnitude), infinity);
        let code = _mm512_mask_mov_epi16(code, is_nan, nan);
        let code = if relu {
            clear_negative_halves(code)
        } else {
            code
        };
        // SAFETY: `d` holds 32 `u16`s (64 bytes): the unaligned store writes exactly those.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), code) };
    }
    rnd.tail::<formats::F16, SF, RELU, 13, u16>(src, dst, whole, k);
}

/// f32 → bf16 rounding to nearest even, 32 at a time with `vcvtne2ps2bf16` (AVX-512 BF16),
/// which converts two vectors into one. The instruction rounds normal numbers and
/// infinities as IEEE 754 does (overflow to infinity included), which is what the exact
/// core does, but it takes subnormal inputs as zero and keeps a NaN's sign and the top of
/// its payload (setting its quiet bit): so NaN lanes (results above infinity's pattern in
/// magnitude) get PTX's canonical NaN by a masked move, and a group of 32 with a nonzero
/// subnormal input (rare in practice: one `vfpclassps` per 16 tells) goes through the
/// portable kernel instead, as does the tail (under 32 elements). (32 at a time with
/// `vcvtne2ps2bf16` rather than 16 with `vcvtneps2bf16`: half the conversions per result.)
/// With `RELU`, `.relu` from `k` (without `.ftz`) as in [`f16_avx512`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16,avx512dq")]
pub(super) unsafe fn bf16_rn_avx512<const RELU: bool>(
    src: &[u32],
    dst: &mut [u16],
    k: fast::Knobs,
) {
    if RELU && k.relu == 0 {
        // The knob not set: the instance without it.
        return bf16_rn_avx512::<false>(src, dst, k);
    }
    // The portable kernel takes the groups with a subnormal input.
    groups_then_portable(
        src,
        dst,
        32,
        |s, d| bf16_rn_groups::<RELU>(s, d),
        |s, d| fast::run::<formats::BF16, { small::RN }, false, RELU, 0, u16, u32>(s, d, &[], k),
    );
}

/// The groups of 32 of [`bf16_rn_avx512`] (`src` and `dst` a multiple of 32 long), with
/// `.relu` if `RELU`, up to the first with a subnormal input (its index, or `None` when all
/// are done): nothing is called in the loop (see [`narrow_bytes_groups`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16,avx512dq")]
#[inline]
fn bf16_rn_groups<const RELU: bool>(src: &[u32], dst: &mut [u16]) -> Option<usize> {
    use std::arch::x86_64::*;
    let magnitude = _mm512_set1_epi16(0x7fff);
    let infinity = _mm512_set1_epi16(0x7f80);
    let nan = _mm512_set1_epi16(formats::BF16::SPEC.nan_full as u16 as i16);
    for (i, (s, d)) in src
        .chunks_exact(32)
        .zip(dst.chunks_exact_mut(32))
        .enumerate()
    {
        let p = s.as_ptr().cast::<f32>();
        // SAFETY: `s` holds 32 `u32`s (128 bytes): the two unaligned loads read exactly
        // those.
        let (x0, x1) = unsafe { (_mm512_loadu_ps(p), _mm512_loadu_ps(p.add(16))) };
        // Class 0x20: subnormal (zeros are not, and convert exactly).
        if _mm512_fpclass_ps_mask::<0x20>(x0) | _mm512_fpclass_ps_mask::<0x20>(x1) != 0 {
            return Some(i);
        }
        // SAFETY: `__m512bh` and `__m512i` are both 64 bytes of vector, any bits valid.
        let h = unsafe { std::mem::transmute::<__m512bh, __m512i>(_mm512_cvtne2ps_pbh(x1, x0)) };
        let is_nan = _mm512_cmpgt_epu16_mask(_mm512_and_si512(h, magnitude), infinity);
        let h = _mm512_mask_mov_epi16(h, is_nan, nan);
        let h = if RELU { clear_negative_halves(h) } else { h };
        // SAFETY: `d` holds 32 `u16`s (64 bytes): the unaligned store writes exactly those.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), h) };
    }
    None
}

/// 16-bit results `h` with those that have the sign bit set made +0: `.relu` for kernels
/// whose negative results are exactly those of negative inputs that are not NaNs (their NaN
/// result, the canonical NaN, is positive). One instruction: the larger of each and zero,
/// as signed numbers (a shift and a mask would be two, one of the slower kind).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) fn clear_negative_halves(h: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    _mm512_max_epi16(h, _mm512_setzero_si512())
}

/// f32 → f16 rounding in direction `M` (rn, rz, rm or rp), sixteen at a time with
/// `vcvtps2ph`, the rounding given in the instruction (not taken from MXCSR). The
/// instruction rounds as IEEE 754 does, which is what the exact core does for these
/// directions — overflow to infinity or to the largest finite value by direction, f16
/// subnormal results rounded, f32 subnormal inputs converted — with MXCSR's defaults
/// (denormals not treated as zero: Rust code never changes them, and the other kernels'
/// floating-point steps make the same assumption). Only NaN differs: the instruction keeps
/// the sign and the top of the payload, PTX gives the canonical NaN, put in place by a
/// masked move. With `RELU`, `.relu` from `k` (without `.ftz`): after the NaN's move the
/// only negative results are those of negative inputs that are not NaNs, and they are made
/// +0. The tail (under 16 elements) goes through the portable kernel.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn f16_avx512<const M: u8, const RELU: bool>(
    src: &[u32],
    dst: &mut [u16],
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let n = src.len().min(dst.len());
    let whole = n - n % 16;
    let relu = RELU && k.relu != 0;
    let nan = _mm256_set1_epi16(formats::F16::SPEC.nan_full as u16 as i16);
    for (s, d) in src[..whole]
        .chunks_exact(16)
        .zip(dst[..whole].chunks_exact_mut(16))
    {
        // SAFETY: `s` holds 16 `u32`s (64 bytes): the unaligned load reads exactly those.
        let x = unsafe { _mm512_loadu_ps(s.as_ptr().cast::<f32>()) };
        let h = match M {
            small::RN => {
                _mm512_cvt_roundps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x)
            }
            small::RZ => _mm512_cvt_roundps_ph::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x),
            small::RM => _mm512_cvt_roundps_ph::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(x),
            _ => _mm512_cvt_roundps_ph::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(x),
        };
        let unordered = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
        let h = _mm256_mask_mov_epi16(h, unordered, nan);
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

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn ue8m0_avx512<const UP: bool, const P: u8, D: Word>(
    src: &[u32],
    dst: &mut [D],
) {
    // Rounding up with `.satfinite` into bytes (the MX scale): 64 at a time. The other
    // forms: the portable kernel, which LLVM vectorizes well for them.
    if UP && P == ue8m0::SF {
        if let Some(d) = D::as_u8_slice_mut(dst) {
            let n = src.len().min(d.len());
            let whole = n - n % 64;
            ue8m0_rp_satfinite_groups_avx512(&src[..whole], &mut d[..whole]);
            ue8m0::run::<UP, P, u8>(&src[whole..n], &mut d[whole..n]);
            return;
        }
    }
    ue8m0::run::<UP, P, D>(src, dst);
}

/// f32 → ue8m0 up with `.satfinite`, 64 at a time (`src` and `dst` a multiple of 64 long),
/// as [`ue8m0_groups_avx2`] computes it: the exponent field of twice the magnitude less one
/// unit, shifted arithmetically (−1 to 255 in 32-bit lanes), narrowed with saturation
/// (`vpackssdw`, `vpackuswb`: −1 gives 0) and put in order (`vpermd`).
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
#[inline]
fn ue8m0_rp_satfinite_groups_avx512(src: &[u32], dst: &mut [u8]) {
    use std::arch::x86_64::*;
    let abs_mask = _mm512_set1_epi32(0x7fff_ffff);
    let minus_one = _mm512_set1_epi32(-1);
    // `vpackssdw` then `vpackuswb` leave, in each 128-bit lane k, the bytes of elements
    // 4k..4k+3 of each of the four vectors in turn: dword 4k + j holds vector j's.
    let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    let code = |x: __m512i| -> __m512i {
        let a = _mm512_castsi512_ps(_mm512_and_si512(x, abs_mask));
        let d = _mm512_castps_si512(_mm512_add_ps(a, a));
        _mm512_srai_epi32::<23>(_mm512_add_epi32(d, minus_one))
    };
    let p = src.as_ptr().cast::<__m512i>();
    for (i, d) in dst.chunks_exact_mut(64).enumerate() {
        // SAFETY: `src` holds 64 `u32`s (256 bytes) from `64 * i` on (`dst` and `src` have
        // the same length): the four unaligned loads read exactly those.
        let x = |j: usize| code(unsafe { _mm512_loadu_si512(p.add(4 * i + j).cast()) });
        let c = _mm512_packus_epi16(
            _mm512_packs_epi32(x(0), x(1)),
            _mm512_packs_epi32(x(2), x(3)),
        );
        let c = _mm512_permutexvar_epi32(order, c);
        // SAFETY: `d` holds 64 bytes: the unaligned store writes exactly those.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), c) };
    }
}

#[target_feature(enable = "avx512f,avx512vl,avx512dq")]
pub(super) unsafe fn round64_avx512<const M: u8, const U: bool>(
    src: &[u32],
    dst: &mut [u64],
    k: &int::Knobs,
) -> usize {
    use std::arch::x86_64::*;
    const RN: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const RM: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    const RP: i32 = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
    let n = src.len().min(dst.len());
    let whole = n - n % 8;
    let exponent = _mm256_set1_epi32(0x7f80_0000);
    let sub_mask = _mm256_set1_epi32(k.sub_mask as i32);
    let (lo, hi) = (_mm256_set1_ps(k.lo), _mm256_set1_ps(k.hi));
    let top = _mm512_set1_epi64(if U { -1 } else { i64::MAX });
    let nan = _mm512_set1_epi64(k.nan as i64);
    for (s, d) in src[..whole]
        .chunks_exact(8)
        .zip(dst[..whole].chunks_exact_mut(8))
    {
        // SAFETY: `s` holds 8 `u32`s (32 bytes) and `d` 8 `u64`s (64 bytes); the unaligned
        // load and store read and write exactly those.
        let b = unsafe { _mm256_loadu_si256(s.as_ptr().cast::<__m256i>()) };
        let subnormal = _mm256_testn_epi32_mask(b, exponent);
        let x = _mm256_castsi256_ps(_mm256_mask_and_epi32(b, subnormal, b, sub_mask));
        // The lower bound where `x` is below it (NaN lanes are replaced below).
        let x = _mm256_max_ps(x, lo);
        let v = match (M, U) {
            (small::RN, false) => _mm512_cvt_roundps_epi64::<RN>(x),
            (small::RM, false) => _mm512_cvt_roundps_epi64::<RM>(x),
            (_, false) => _mm512_cvt_roundps_epi64::<RP>(x),
            (small::RN, true) => _mm512_cvt_roundps_epu64::<RN>(x),
            (small::RM, true) => _mm512_cvt_roundps_epu64::<RM>(x),
            (_, true) => _mm512_cvt_roundps_epu64::<RP>(x),
        };
        let v = _mm512_mask_mov_epi64(v, _mm256_cmp_ps_mask::<_CMP_GE_OQ>(x, hi), top);
        let raw = _mm256_castsi256_ps(b);
        let v = _mm512_mask_mov_epi64(v, _mm256_cmp_ps_mask::<_CMP_UNORD_Q>(raw, raw), nan);
        // SAFETY: as above.
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast::<__m512i>(), v) };
    }
    whole
}
