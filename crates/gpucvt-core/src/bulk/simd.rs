//! Run-time CPU-feature dispatch: the only `unsafe` code of gpucvt-core.
//!
//! The kernels in `fast.rs`, `small.rs` and `ue8m0.rs` are plain safe Rust marked
//! `#[inline(always)]`.
//! Here they are compiled three times — for the baseline target, for AVX2 and for AVX-512 —
//! and the best version the running CPU supports is called. Calling a
//! `#[target_feature]` function is `unsafe` only because the CPU must have the feature; each
//! call below is guarded by `is_x86_feature_detected!` for exactly the features it enables
//! (`avx512_here`, `avx2_here`), after `allowed`, which takes versions away under the
//! `GPUCVT_ISA` ceiling ([`super::ISA_VARIABLE`]) so that one machine can run and time the
//! others' kernels.
//! [`vectorized_isa`] does the same for any work (the integer kernel of `int.rs`, the
//! random words of `random.rs`, the statistics of `gpucvt-tensor`): a generic
//! `#[target_feature]` function into which the work's `#[inline(always)]` code is inlined.
//!
//! Two conversions use the CPU's own conversion instructions, where they give exactly the
//! exact core's results: `f32` → `f16` in rn/rz/rm/rp through `vcvtps2ph` ([`f16_avx512`],
//! intrinsics on unaligned loads and stores), and the integer kernel's `f32` → 64-bit
//! integers: toward zero through Rust's unchecked float-to-integer conversion
//! ([`trunc_i64`], [`trunc_u64`]: `vcvttps2qq` with AVX-512 DQ), reached only for values in
//! range, and to nearest, down and up into `u64` words through `vcvtps2qq`/`vcvtps2uqq` with
//! the direction in the instruction ([`round64`], intrinsics).
//!
//! The other intrinsic kernels build on `vcvtps2ph` and byte permutations (AVX-512 VBMI):
//! f32 → FP8/FP6/FP4 toward zero through f16 and tables by its bytes, to nearest through f16
//! rounded to odd and the same kind of tables ([`narrow_bytes_avx512`]), e5m2, e3m2 and e2m1
//! stochastic with `.satfinite` through f16's bytes (of the input scaled for e3m2 and e2m1:
//! [`f16_bytes_rs_avx512`]), the other FP8/FP6/FP4 stochastic roundings by one addition
//! toward zero ([`narrow_rs_avx512`]), f16 stochastic with the carry of the 13 bits below f16's
//! grid ([`f16_rs_avx512`]), and bf16 to nearest through `vcvtne2ps2bf16`
//! ([`bf16_rn_avx512`]). Each is used only where it gives the exact core's results for
//! every input (the ignored tests run all 2^32), and falls back to the portable kernel for
//! the other policies and for the tail of a slice.
//!
//! Without AVX-512 (AVX2, with F16C where noted), seven more: f16 in rn/rz/rm/rp through
//! `vcvtps2ph` ([`f16_avx2`]), f16 stochastic by `vcvtps2ph` toward zero and the carry of
//! the 13 bits below f16's grid ([`f16_rs_avx2`]), bf16 to nearest, toward zero and
//! stochastic by integer rounding ([`bf16_avx2`]), tf32 likewise ([`tf32_avx2`]), e5m2,
//! e3m2 and e2m1 toward zero and stochastic with `.satfinite` through f16's bytes, as on
//! AVX-512, and e4m3 and e2m3 toward zero ([`f16_bytes_avx2`]), the FP8/FP6/FP4 formats to
//! nearest by one floating-point addition per element and (the others) toward zero and
//! stochastic by two truncations, from the pattern and from `vcvttps2dq`
//! ([`narrow_sum_avx2`]), and ue8m0 from the exponent field ([`ue8m0_groups_avx2`]). The
//! tests run every instance compiled for each instruction set the CPU has, so an AVX-512
//! machine tests the AVX2 kernels too (and an ignored test runs the FP8/FP6/FP4 ones over
//! all 2^32 inputs; `GPUCVT_ISA=avx2` sends the other ignored `every_input` tests through
//! them).
//!
//! The forms with `.relu` or `.ftz` reach the same kernels. Where `.relu` can act on the
//! results ([`relu_on_results`]), every kernel of this module applies it itself (`RELU`):
//! the f16 and bf16 ones ([`f16_avx512`], [`bf16_rn_avx512`], [`f16_rs_avx512`],
//! [`f16_avx2`], [`bf16_avx2`], [`f16_rs_avx2`]) and the FP8/FP6/FP4 ones
//! ([`narrow_bytes_avx512`], [`f16_bytes_rs_avx512`], [`narrow_rs_avx512`],
//! [`f16_bytes_avx2`], [`narrow_sum_avx2`]). The portable kernel behind the other forms
//! goes through [`knobs_first`]: `.relu` by a pass over each tile's results that makes the
//! negative ones +0; otherwise (`.ftz`, or e4m3 without `.satfinite`) the knobs are applied
//! to a tile of inputs in a buffer first.
#![allow(unsafe_code)]

use super::{fast, small, ue8m0, Vectorizable, Word};

macro_rules! dispatch_small {
    ($p:expr, $src:expr, $dst:expr, $r:expr, $mode:ident) => {
        run_small::<{ small::$mode }, D>($p, $src, $dst, $r)
    };
}

/// `f32` → small float over a slice; `rnd` has one random value per element (ignored by
/// deterministic modes).
pub(super) fn small<D: Word>(p: &small::Params, src: &[u32], dst: &mut [D], rnd: &[u32]) {
    match p.mode {
        small::RN => dispatch_small!(p, src, dst, rnd, RN),
        small::RNA => dispatch_small!(p, src, dst, rnd, RNA),
        small::RZ => dispatch_small!(p, src, dst, rnd, RZ),
        small::RM => dispatch_small!(p, src, dst, rnd, RM),
        small::RP => dispatch_small!(p, src, dst, rnd, RP),
        _ => dispatch_small!(p, src, dst, rnd, RS),
    }
}

/// Whether the dispatch may use instruction-set level `level` (1: AVX2, 2: AVX-512), under
/// the ceiling of `GPUCVT_ISA` ([`super::ISA_VARIABLE`]). Each use is followed by the
/// feature detection that makes the call safe: this only ever takes a version away.
#[cfg(target_arch = "x86_64")]
#[inline]
fn allowed(level: u8) -> bool {
    super::isa_ceiling() >= level
}

/// Whether the AVX-512 versions run here: the ceiling allows them and the CPU has AVX-512
/// F, BW and VL, every feature the `*_avx512` dispatch functions enable.
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx512_here() -> bool {
    allowed(2)
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl")
}

/// Whether the AVX2 versions run here: the ceiling allows them and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2_here() -> bool {
    allowed(1) && is_x86_feature_detected!("avx2")
}

/// Whether the processor's floating-point environment is the default one that Rust code
/// assumes and the `f32` kernels rely on (x86-64: MXCSR rounds to nearest, flushes no
/// result to zero, treats no input denormal as zero, and masks every exception; its six
/// status flags may be set). A host that changes it (some numerical libraries set
/// flush-to-zero and denormals-are-zero for speed) would otherwise get other results for
/// subnormal inputs from `vcvtps2ph`, `vcvtne2ps2bf16` and the kernels' additions, or a
/// trap. Elsewhere: `true` (the floating-point control register is not read).
pub(super) fn float_environment_is_default() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let mut csr = 0u32;
        // SAFETY: `stmxcsr` stores the 32-bit MXCSR at the address given, that of `csr`; it
        // changes nothing else (no stack use, no flags).
        unsafe {
            std::arch::asm!(
                "stmxcsr [{}]",
                in(reg) &mut csr,
                options(nostack, preserves_flags)
            );
        }
        csr & 0xffff_ffc0 == 0x1f80
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}

/// Runs `f` with MXCSR set to `csr`, then restores it (for the tests of
/// [`float_environment_is_default`]'s callers: nothing else changes it).
#[cfg(all(test, target_arch = "x86_64"))]
pub(super) fn with_mxcsr<T>(csr: u32, f: impl FnOnce() -> T) -> T {
    let mut old = 0u32;
    // SAFETY: `stmxcsr` stores MXCSR into `old` and `ldmxcsr` loads it from `csr` (a valid
    // MXCSR value: the callers pass the default with control bits added, no reserved
    // bits), then from `old`; nothing else is touched.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut old, options(nostack, preserves_flags));
        std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags));
    }
    let r = f();
    // SAFETY: as above, restoring the value read.
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &old, options(nostack, preserves_flags));
    }
    r
}

/// [`super::instruction_set`].
pub(super) fn instruction_set() -> super::InstructionSet {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512_here() {
            return super::InstructionSet::Avx512;
        }
        if avx2_here() {
            return super::InstructionSet::Avx2;
        }
    }
    super::InstructionSet::Baseline
}

fn run_small<const MODE: u8, D: Word>(p: &small::Params, src: &[u32], dst: &mut [D], rnd: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512_here() {
            // SAFETY: the CPU has every feature `small_avx512` enables (`avx512_here`).
            unsafe { small_avx512::<MODE, D>(p, src, dst, rnd) };
            return;
        }
        if avx2_here() {
            // SAFETY: the CPU has AVX2 (`avx2_here`).
            unsafe { small_avx2::<MODE, D>(p, src, dst, rnd) };
            return;
        }
    }
    small::run::<MODE, D>(p, src, dst, rnd, D::from_u32);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn small_avx2<const MODE: u8, D: Word>(
    p: &small::Params,
    src: &[u32],
    dst: &mut [D],
    rnd: &[u32],
) {
    small::run::<MODE, D>(p, src, dst, rnd, D::from_u32);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn small_avx512<const MODE: u8, D: Word>(
    p: &small::Params,
    src: &[u32],
    dst: &mut [D],
    rnd: &[u32],
) {
    small::run::<MODE, D>(p, src, dst, rnd, D::from_u32);
}

/// `f32` → small float, specialised (`fast.rs`) for format `F`, direction `M`, `.satfinite`
/// (`SF`) and the run-time policies (`KN`), into the format's natural word `D`, with random
/// values (`RS`) in words `R` of width `W` (0: the run-time width of the knobs).
pub(super) fn fast<
    const F: usize,
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
    #[cfg(target_arch = "x86_64")]
    {
        if avx512_here() {
            // SAFETY: the CPU has every feature `fast_avx512` enables (`avx512_here`).
            unsafe { fast_avx512::<F, M, SF, KN, W, D, R>(src, dst, rnd, k) };
            return;
        }
        if avx2_here() {
            // SAFETY: the CPU has AVX2 (`avx2_here`).
            unsafe { fast_avx2::<F, M, SF, KN, W, D, R>(src, dst, rnd, k) };
            return;
        }
        // `Plan::new` does not choose these kernels without AVX2.
        unreachable!("specialised kernels need AVX2 on x86-64");
    }
    #[cfg(not(target_arch = "x86_64"))]
    fast::run::<F, M, SF, KN, W, D, R>(src, dst, rnd, k);
}

/// Whether the specialised kernels run here: on x86-64 they are compiled for AVX2 and
/// AVX-512 only (older CPUs use the run-time-parameterised kernel), elsewhere for the
/// baseline target.
pub(super) fn has_fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx2_here()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}

/// Whether `.relu` into format `sp` (with `.satfinite` if `sf`) can act on the results of
/// the kernels without it: where their only results with the sign bit set are those of
/// negative inputs that are not NaNs, which holds where the NaN result is positive and no
/// overflow of a negative input is a NaN (`.satfinite`, or a format with infinity or
/// without NaN). Those results then become +0.
#[cfg(target_arch = "x86_64")]
const fn relu_on_results(sp: &fast::Spec, sf: bool) -> bool {
    (sf || sp.has_inf || !sp.has_nan) && (sp.nan_full as u64) & (1 << sp.sign_pos) == 0
}

/// The forms with `.relu` or `.ftz` (the run-time knobs `k`) into format `F`, with
/// `.satfinite` if `SF`, through `kernel`, the instance without them, a tile at a time
/// (following [`super::streams_for`]'s two streams for long slices), so that these forms
/// have the specialised kernels too:
/// - `.relu` alone, where [`relu_on_results`] holds, is applied to each tile of 4096
///   results afterwards: those with the sign bit set become +0. A pass over a few
///   kilobytes in the first-level cache;
/// - otherwise (`.ftz`, which acts on the input) the knobs are applied to each tile of 512
///   inputs first (`fast::with_knobs`), into a buffer on the stack, which the kernel then
///   converts: the same results, as `.relu` and `.ftz` act on the input alone.
///
/// Inlined into the caller, whose instruction set compiles the passes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn knobs_first<const F: usize, const SF: bool, D: Word, R: Word>(
    src: &[u32],
    dst: &mut [D],
    rnd: &[R],
    k: fast::Knobs,
    kernel: impl Fn(&[u32], &mut [D], &[R]),
) {
    let sp = const { fast::SPECS[F] };
    let sign = 1u64 << sp.sign_pos;
    let relu_after = const { relu_on_results(&fast::SPECS[F], SF) };
    if k.ftz_below == 0 && k.relu == 0 {
        // Neither knob set (as a caller may ask): the kernel alone.
        kernel(src, dst, rnd);
        return;
    }
    let n = src.len().min(dst.len());
    // The tiles of at most `tile` elements, in the streams' order.
    let tiles = |tile: usize| {
        super::streams_for::<u32, D>(n).flat_map(move |r| {
            (r.start..r.end)
                .step_by(tile)
                .map(move |s| s..r.end.min(s + tile))
        })
    };
    // (Random values only as far as there are any: the kernel converts as many.)
    let random = |t: &std::ops::Range<usize>| &rnd[t.start.min(rnd.len())..t.end.min(rnd.len())];
    if relu_after && k.ftz_below == 0 {
        // (Each call of `kernel` costs some tens of instructions before its loop: tiles of
        // 512 cost about a third more than tiles of 4096 here.)
        for t in tiles(4096) {
            kernel(&src[t.clone()], &mut dst[t.clone()], random(&t));
            // (Every result stored again, not only the negative ones: masked stores are
            // slow on the Zen 4.)
            for d in &mut dst[t] {
                let v = d.to_u64();
                *d = D::from_u64(v & !((v & sign != 0) as u64).wrapping_neg());
            }
        }
        return;
    }
    let mut buf = [0u32; 512];
    for t in tiles(buf.len()) {
        let tile = &mut buf[..t.len()];
        for (b, &x) in tile.iter_mut().zip(&src[t.clone()]) {
            *b = fast::with_knobs(x, k);
        }
        kernel(tile, &mut dst[t.clone()], random(&t));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fast_avx2<
    const F: usize,
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
    let f16_ieee = F == fast::I_F16
        && !SF
        && matches!(M, small::RN | small::RZ | small::RM | small::RP)
        && f16c;
    let bf16 = F == fast::I_BF16
        && !SF
        && (M == small::RN || M == small::RZ || (M == small::RS && W == 16));
    // f32 → f16 stochastic with 13 random bits, where the CPU has F16C:
    let f16_rs = F == fast::I_F16 && M == small::RS && W == 13 && f16c;
    // f32 → FP8/FP6/FP4 through f16's bytes (where the CPU has F16C) and by one addition:
    let f16_bytes = SF
        && ((M == small::RZ && const { f16_bytes_truncate(&fast::SPECS[F]) })
            || (M == small::RS && W == 8 && const { f16_bytes_shift(&fast::SPECS[F]).is_some() }))
        && f16c;
    let sum = (M == small::RN || M == small::RZ || (M == small::RS && W == 8))
        && const { sum_avx2_applies(F, M, SF) };
    let own_relu = k.ftz_below == 0
        && (f16_ieee || bf16 || f16_rs || f16_bytes || sum)
        && const { relu_on_results(&fast::SPECS[F], SF) };
    if KN && !own_relu {
        knobs_first::<F, SF, D, R>(src, dst, rnd, k, |s, d, r| {
            // SAFETY: this function's feature is the instance's.
            unsafe { fast_avx2::<F, M, SF, false, W, D, R>(s, d, r, k) }
        });
        return;
    }
    for r in super::streams_for::<u32, D>(src.len().min(dst.len())) {
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
        if F == fast::I_TF32 && !SF && !KN && matches!(M, small::RN | small::RNA | small::RZ) {
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

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn fast_avx512<
    const F: usize,
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
        F == fast::I_F16 && !SF && matches!(M, small::RN | small::RZ | small::RM | small::RP);
    let bf16_rn = F == fast::I_BF16
        && !SF
        && M == small::RN
        && is_x86_feature_detected!("avx512bf16")
        && is_x86_feature_detected!("avx512dq");
    // f32 → FP8/FP6/FP4 toward zero and to nearest (where the CPU has AVX-512 VBMI), where
    // `.relu` can act on the results: the table kernel takes it too.
    let vbmi = is_x86_feature_detected!("avx512vbmi");
    let narrow_bytes = (M == small::RZ || M == small::RN) && F >= fast::I_E4M3 && vbmi;
    // f32 → e5m2, e3m2, e2m1 stochastic with .satfinite and 8 random bits: through f16's
    // bytes (below).
    let bytes_rs = const { f16_bytes_shift(&fast::SPECS[F]).is_some() }
        && M == small::RS
        && SF
        && W == 8
        && vbmi;
    // f32 → e4m3, e2m3 (and e3m2, e2m1 without .satfinite) stochastic with 8 random bits:
    // one addition (below).
    let sum_rs = M == small::RS
        && W == 8
        && F >= fast::I_E4M3
        && F != fast::I_E5M2
        && (SF || (!fast::SPECS[F].has_inf && !fast::SPECS[F].has_nan))
        && const { nan_by_clamp(&fast::SPECS[F]).is_some() }
        && vbmi;
    // f32 → f16 stochastic with 13 random bits: truncation by the CPU's own conversion.
    let f16_rs = F == fast::I_F16 && M == small::RS && W == 13;
    // (Those kernels also take .relu where it can act on their results.)
    let own_relu = k.ftz_below == 0
        && (f16_ieee || bf16_rn || narrow_bytes || bytes_rs || sum_rs || f16_rs)
        && const { relu_on_results(&fast::SPECS[F], SF) };
    if KN && !own_relu {
        knobs_first::<F, SF, D, R>(src, dst, rnd, k, |s, d, r| {
            // SAFETY: this function's features are the instance's.
            unsafe { fast_avx512::<F, M, SF, false, W, D, R>(s, d, r, k) }
        });
        return;
    }
    for r in super::streams_for::<u32, D>(src.len().min(dst.len())) {
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
#[cfg(target_arch = "x86_64")]
fn byte_tables<const F: usize, const M: u8, const SF: bool>() -> Option<&'static fast::ByteTables> {
    use std::sync::OnceLock;
    static TABLES: [OnceLock<Option<fast::ByteTables>>; 20] = [const { OnceLock::new() }; 20];
    let i = 4 * (F - fast::I_E4M3) + 2 * (M == small::RN) as usize + SF as usize;
    TABLES
        .get(i)?
        .get_or_init(fast::byte_tables::<F, M, SF>)
        .as_ref()
}

/// `vpermt2b`/`vpermt2w` indices, computed at compile time (the kernels below are called per
/// tile of a long slice, so nothing is built per call): byte `i` of a result is byte
/// `stride * (i % lanes) + offset` of the two sources.
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
const LOW_BYTES: [u8; 64] = byte_indices(2, 64, 0);
/// The high byte of each 16-bit lane of two vectors, in order.
#[cfg(target_arch = "x86_64")]
const HIGH_BYTES: [u8; 64] = byte_indices(2, 64, 1);
/// The low byte of each 32-bit lane of two vectors, in order, twice (bytes 32..63 repeat
/// bytes 0..31: a select takes each half from another pair of vectors).
#[cfg(target_arch = "x86_64")]
const LOW_BYTES_OF_WORDS: [u8; 64] = byte_indices(4, 32, 0);
/// The low byte of each 32-bit lane of two vectors, in order, at the even bytes (the low
/// bytes of 16-bit lanes; a zeroing mask clears the odd ones).
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
trait Plain: Copy {}
#[cfg(target_arch = "x86_64")]
impl Plain for u8 {}
#[cfg(target_arch = "x86_64")]
impl Plain for u16 {}
#[cfg(target_arch = "x86_64")]
impl Plain for u32 {}

/// The 64 bytes of table `t` from byte `64 * i` on, as a vector.
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
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
/// instruction: 2-6 % on the two kernels below at 1 Mi (e2m1 rs 0.80 → 0.84, session 17).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn masked_one() -> std::arch::x86_64::__m512i {
    opaque_bytes(1)
}

/// 64 bytes of `b` that LLVM cannot see (as in [`masked_one`]): for the masked addition of a
/// format's sign bit, which it would otherwise rewrite as an `vpxor` and a masked move.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn opaque_bytes(b: u8) -> std::arch::x86_64::__m512i {
    std::arch::x86_64::_mm512_set1_epi8(std::hint::black_box(b) as i8)
}

/// How [`narrow_rs_avx512`] gives NaN inputs the NaN result of format `sp` (always
/// positive): `Some(false)` where it is the largest finite code (the formats without NaN),
/// which the clamp gives; `Some(true)` where it is the code one above, in the same binade
/// (e4m3's NaN); `None` otherwise (the kernel does not apply).
#[cfg(target_arch = "x86_64")]
pub(super) const fn nan_by_clamp(sp: &fast::Spec) -> Option<bool> {
    if sp.nan_full == sp.max_enc {
        Some(false)
    } else if sp.nan_full == sp.max_enc + 1 && sp.nan_full >> sp.man == sp.max_enc >> sp.man {
        Some(true)
    } else {
        None
    }
}

/// Where [`f16_bytes_rs_avx512`] and [`f16_bytes_avx2`] apply to format `sp` with
/// stochastic rounding: the formats of [`f16_bytes_truncate`] with one or two significand
/// bits (e5m2, e3m2, e2m1). After the input is scaled by [`f16_bytes_scale`], such a
/// format's code is f16's bits 14 down to 8 + the shift this returns (the bits of e5m2's
/// significand below the format's), and the 8 bits below its grid the next eight.
#[cfg(target_arch = "x86_64")]
pub(super) const fn f16_bytes_shift(sp: &fast::Spec) -> Option<u32> {
    if f16_bytes_truncate(sp) && sp.man <= 2 {
        Some(2 - sp.man)
    } else {
        None
    }
}

/// Where [`f16_bytes_avx2`] applies toward zero to format `sp`: signed formats with one to
/// three significand bits and at most five exponent bits (e4m3, e5m2, e2m3, e3m2, e2m1),
/// whose code after the scaling is f16's top bits (bits 14..7 for three significand bits:
/// truncation needs none of the bits below the grid, of which f16 keeps only 7 for them;
/// [`f16_bytes_shift`] takes those with 8).
#[cfg(target_arch = "x86_64")]
pub(super) const fn f16_bytes_truncate(sp: &fast::Spec) -> bool {
    let exponent = sp.sign_pos - sp.man - sp.pad;
    sp.signed && sp.pad == 0 && sp.man >= 1 && sp.man <= 3 && exponent <= 5
}

/// The `f32` bit pattern of 2^(bias − 15), by which [`f16_bytes_rs_avx512`] and
/// [`f16_bytes_avx2`] scale their inputs (exactly), putting the smallest normal value of
/// format `sp` on f16's.
#[cfg(target_arch = "x86_64")]
const fn f16_bytes_scale(sp: &fast::Spec) -> i32 {
    (127 + sp.bias - 15) << 23
}

/// The addends of the one-addition kernels for format `sp`, with `below` bits kept below the
/// destination's grid, by the exponent's low bits (`N` entries, `N` a power of two above
/// the format's exponent span), as `f32` bit patterns: for each biased exponent `e` from
/// the smallest normal one's to the largest finite value's, the `f32` of exponent
/// `e + 23 − mantissa bits − below` and significand bits `(e − e0) << (mantissa bits +
/// below)`. [`narrow_rs_avx512`] takes 32 entries with 8 bits below, [`narrow_sum_avx2`] 8
/// entries ([`addend_table`]).
#[cfg(target_arch = "x86_64")]
const fn sum_addends<const N: usize>(sp: &fast::Spec, below: u32) -> [u32; N] {
    let e0 = (128 - sp.bias) as u32;
    let last = fast::value_bits(sp, sp.max_enc) >> 23;
    let mut t = [0u32; N];
    let mut e = e0;
    while e <= last {
        t[e as usize % N] = ((e + 23 - sp.man - below) << 23) | ((e - e0) << (sp.man + below));
        e += 1;
    }
    t
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
/// (Until session 16 the row was the f16's bits 14..7, each f16 shifted or rotated by one
/// bit first, the look-ups of 256 entries two `vpermi2b` and a select each, the rz and rn
/// kernels two functions, and e5m2 rn a third, by arithmetic on the high byte.) With
/// `RELU`, `.relu` from `k` (without `.ftz`, where [`relu_on_results`] holds): the codes
/// with the sign bit set are made +0. The tail (under 64 elements) goes through the portable
/// kernel.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
unsafe fn narrow_bytes_avx512<const F: usize, const M: u8, const SF: bool, const RELU: bool>(
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
#[cfg(target_arch = "x86_64")]
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
/// [`fast::byte_subnormal_midpoints`]), and nothing is called in the loop: with the tables'
/// fields tested in it and the call of the portable kernel in it, rn into e4m3 ran at 0.66×
/// the roofline at 1 Mi against 0.71× (constants reloaded from the stack).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
#[inline]
fn narrow_bytes_groups<const F: usize, const M: u8, const RELU: bool>(
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
    let steps = const { fast::byte_steps(&fast::SPECS[F], M == small::RN) };
    let midpoints = const { fast::byte_subnormal_midpoints(&fast::SPECS[F], M == small::RN) };
    let (low, high) = (vector(&LOW_BYTES, 0), vector(&HIGH_BYTES, 0));
    let one = masked_one();
    let sign_pos = fast::SPECS[F].sign_pos;
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

/// The random values of a stochastic kernel below: in the narrow word of the conversion's
/// output or in `u32` words (whose low bits count).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
enum Randoms<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
}

#[cfg(target_arch = "x86_64")]
impl<'a> Randoms<'a> {
    /// `r` if its word is one of the three.
    fn of<R: Word>(r: &'a [R]) -> Option<Randoms<'a>> {
        if let Some(r) = R::as_u8_slice(r) {
            Some(Randoms::U8(r))
        } else if let Some(r) = R::as_u16_slice(r) {
            Some(Randoms::U16(r))
        } else {
            R::as_u32_slice(r).map(Randoms::U32)
        }
    }

    /// What a kernel of direction `M` that takes random values only for `RS` gets: `None`
    /// where `M` is `RS` and `r`'s word is none of the three (no such kernel), else
    /// `Some(None)` for the deterministic directions and `Some(Some(..))` for `RS`.
    fn if_stochastic<const M: u8, R: Word>(r: &'a [R]) -> Option<Option<Randoms<'a>>> {
        if M == small::RS {
            Randoms::of(r).map(Some)
        } else {
            Some(None)
        }
    }

    fn len(self) -> usize {
        match self {
            Randoms::U8(r) => r.len(),
            Randoms::U16(r) => r.len(),
            Randoms::U32(r) => r.len(),
        }
    }

    /// The portable kernel of format `F`, stochastic, with `.satfinite` if `SF`, the knobs
    /// of `k` if `KN` and random width `W`, over `src` from element `from` on.
    fn tail<const F: usize, const SF: bool, const KN: bool, const W: u32, D: Word>(
        self,
        src: &[u32],
        dst: &mut [D],
        from: usize,
        k: fast::Knobs,
    ) {
        let n = src.len().min(dst.len()).min(self.len());
        let (src, dst) = (&src[from..n], &mut dst[from..n]);
        match self {
            Randoms::U8(r) => {
                fast::run::<F, { small::RS }, SF, KN, W, D, u8>(src, dst, &r[from..n], k)
            }
            Randoms::U16(r) => {
                fast::run::<F, { small::RS }, SF, KN, W, D, u16>(src, dst, &r[from..n], k)
            }
            Randoms::U32(r) => {
                fast::run::<F, { small::RS }, SF, KN, W, D, u32>(src, dst, &r[from..n], k)
            }
        }
    }
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
unsafe fn f16_bytes_rs_avx512<const F: usize, const RELU: bool>(
    src: &[u32],
    dst: &mut [u8],
    rnd: Randoms,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    let relu = RELU && k.relu != 0;
    let sp = const { fast::SPECS[F] };
    // Bits of e5m2's significand below the format's (0 or 1), by which each f16 is shifted.
    // (Instances of other formats exist, never called: the dispatch checks the format.)
    let shift = const {
        match f16_bytes_shift(&fast::SPECS[F]) {
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
/// (32 at a time, one byte narrowing per 32, it ran at 0.86–0.93× the roofline at 64 Mi on
/// the Zen 4, against the portable kernel's 0.94–1.04×; 64 at a time, 0.93–0.99×.) With
/// `RELU`, `.relu` from `k` (without `.ftz`): the codes of negative inputs that are not NaNs
/// are +0 instead of signed. The tail (under 64 elements) goes through the portable kernel.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
unsafe fn narrow_rs_avx512<const F: usize, const SF: bool, const RELU: bool>(
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
#[inline]
fn narrow_rs_groups<const F: usize, const SF: bool, R>(
    src: &[u32],
    dst: &mut [u8],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i),
) {
    use std::arch::x86_64::*;
    const RZ: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    let sp = fast::SPECS[F];
    // Biased f32 exponent of the smallest normal, and the largest finite value's pattern.
    let e0 = (128 - sp.bias) as u32;
    let top = fast::value_bits(&sp, sp.max_enc);
    let addends = const { sum_addends::<32>(&fast::SPECS[F], 8) };
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
    let nan_above = const { matches!(nan_by_clamp(&fast::SPECS[F]), Some(true)) };
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn f16_rs_avx512<const SF: bool, const RELU: bool>(
    src: &[u32],
    dst: &mut [u16],
    rnd: Randoms,
    k: fast::Knobs,
) {
    use std::arch::x86_64::*;
    if RELU && k.relu == 0 {
        // The knob not set: the instance without it. (A test of `k.relu` in the loop cost
        // a fifth of the speed at 1 Mi: 0.70× the roofline against 0.87×.)
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
    let nan = _mm512_set1_epi16(fast::SPECS[fast::I_F16].nan_full as i16);
    let largest = _mm512_set1_epi16(fast::SPECS[fast::I_F16].max_enc as i16);
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
    rnd.tail::<{ fast::I_F16 }, SF, RELU, 13, u16>(src, dst, whole, k);
}

/// f32 → bf16 rounding to nearest even, 32 at a time with `vcvtne2ps2bf16` (AVX-512 BF16),
/// which converts two vectors into one. The instruction rounds normal numbers and
/// infinities as IEEE 754 does (overflow to infinity included), which is what the exact
/// core does, but it takes subnormal inputs as zero and keeps a NaN's sign and the top of
/// its payload (setting its quiet bit): so NaN lanes (results above infinity's pattern in
/// magnitude) get PTX's canonical NaN by a masked move, and a group of 32 with a nonzero
/// subnormal input (rare in practice: one `vfpclassps` per 16 tells) goes through the
/// portable kernel instead, as does the tail (under 32 elements). (Sixteen at a time, with
/// `vcvtneps2bf16`, it ran at 0.75–0.78× the roofline at 1 Mi on the Zen 4.) With `RELU`,
/// `.relu` from `k` (without `.ftz`) as in [`f16_avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16,avx512dq")]
unsafe fn bf16_rn_avx512<const RELU: bool>(src: &[u32], dst: &mut [u16], k: fast::Knobs) {
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
        |s, d| fast::run::<{ fast::I_BF16 }, { small::RN }, false, RELU, 0, u16, u32>(s, d, &[], k),
    );
}

/// The groups of 32 of [`bf16_rn_avx512`] (`src` and `dst` a multiple of 32 long), with
/// `.relu` if `RELU`, up to the first with a subnormal input (its index, or `None` when all
/// are done): nothing is called in the loop (see [`narrow_bytes_groups`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16,avx512dq")]
#[inline]
fn bf16_rn_groups<const RELU: bool>(src: &[u32], dst: &mut [u16]) -> Option<usize> {
    use std::arch::x86_64::*;
    let magnitude = _mm512_set1_epi16(0x7fff);
    let infinity = _mm512_set1_epi16(0x7f80);
    let nan = _mm512_set1_epi16(fast::SPECS[fast::I_BF16].nan_full as u16 as i16);
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
/// as signed numbers (until 2026-11-24 a shift and a mask, one of the slower kind).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn clear_negative_halves(h: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512i {
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn f16_avx512<const M: u8, const RELU: bool>(src: &[u32], dst: &mut [u16], k: fast::Knobs) {
    use std::arch::x86_64::*;
    let n = src.len().min(dst.len());
    let whole = n - n % 16;
    let relu = RELU && k.relu != 0;
    let nan = _mm256_set1_epi16(fast::SPECS[fast::I_F16].nan_full as u16 as i16);
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
    fast::run::<{ fast::I_F16 }, M, false, RELU, 0, u16, u32>(
        &src[whole..n],
        &mut dst[whole..n],
        &[],
        k,
    );
}

/// f32 → f16 rounding in direction `M` (rn, rz, rm or rp) on AVX2 with F16C, sixteen at a
/// time: two `vcvtps2ph` (the rounding given in the instruction), as [`f16_avx512`] does,
/// and the canonical NaN put in place by a byte select where a result's magnitude is above
/// infinity's. With `RELU`, `.relu` from `k` (without `.ftz`), as there. The tail (under 16
/// elements) goes through the portable kernel.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_avx2<const M: u8, const RELU: bool>(src: &[u32], dst: &mut [u16], k: fast::Knobs) {
    use std::arch::x86_64::*;
    let n = src.len().min(dst.len());
    let whole = n - n % 16;
    let relu = RELU && k.relu != 0;
    let nan = _mm256_set1_epi16(fast::SPECS[fast::I_F16].nan_full as u16 as i16);
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
    fast::run::<{ fast::I_F16 }, M, false, RELU, 0, u16, u32>(
        &src[whole..n],
        &mut dst[whole..n],
        &[],
        k,
    );
}

/// [`clear_negative_halves`] on AVX2: 16-bit results with the sign bit set made +0.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn clear_negative_halves_avx2(h: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    _mm256_max_epi16(h, _mm256_setzero_si256())
}

/// Eight random bytes of `r` (at least that many) zero-extended into 32-bit lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn byte_lanes(r: &[u8]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..8].as_ptr().cast::<__m128i>();
    // SAFETY: `r[..8]` is 8 bytes: the 8-byte unaligned load reads exactly those.
    _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(p) })
}

/// Eight random half-words of `r` (at least that many) zero-extended into 32-bit lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn half_word_lanes(r: &[u16]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..8].as_ptr().cast::<__m128i>();
    // SAFETY: `r[..8]` is 16 bytes: the unaligned load reads exactly those.
    _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(p) })
}

/// Sixteen random bytes of `r` (at least that many) zero-extended into 16-bit lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn sixteen_byte_lanes(r: &[u8]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = r[..16].as_ptr().cast::<__m128i>();
    // SAFETY: `r[..16]` is 16 bytes: the unaligned load reads exactly those.
    _mm256_cvtepu8_epi16(unsafe { _mm_loadu_si128(p) })
}

/// Sixteen random half-words of `r` (at least that many) as 16-bit lanes.
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn sixteen_word_lanes(r: &[u32], bits: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let w = |i: usize| _mm256_and_si256(word_lanes(&r[i..]), bits);
    _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(w(0), w(8)))
}

/// Eight random words of `r` (at least that many) as 32-bit lanes.
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn bf16_avx2<const M: u8, const RELU: bool>(
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
        Some(r) => r.tail::<{ fast::I_BF16 }, false, RELU, 16, u16>(src, dst, whole, k),
        None => fast::run::<{ fast::I_BF16 }, M, false, RELU, 0, u16, u32>(
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
#[cfg(target_arch = "x86_64")]
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
    let nan = _mm256_set1_epi32((fast::SPECS[fast::I_BF16].nan_full << 16) as i32);
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_rs_avx2<const SF: bool, const RELU: bool>(
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
    rnd.tail::<{ fast::I_F16 }, SF, RELU, 13, u16>(src, dst, whole, k);
}

/// The groups of 16 of [`f16_rs_avx2`] (`src`, `dst` and `rnd` of a multiple of 16
/// elements), with `.relu` if `relu`, `random` giving a group's 13-bit random values in
/// 16-bit lanes, in order.
#[cfg(target_arch = "x86_64")]
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
    let nan = _mm256_set1_epi16(fast::SPECS[fast::I_F16].nan_full as u16 as i16);
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
/// sum could carry a negative NaN's pattern past 0xffff. (Until session 20 the clamp, the
/// NaN and the sign were all done in 16-bit lanes, and e2m1's f16s shifted right one bit:
/// e3m2 and e2m1 rs ran at 0.81 and 0.75 the roofline at 1 Mi, e4m3 and e5m2 rz at
/// 0.56-0.60 and 0.71, e3m2 and e2m1 rz at 0.70, against 0.91, 0.86, 0.62-0.66, 0.79-0.83
/// and 0.76-0.78.) With `RELU`, `.relu` from `k` (without `.ftz`): the codes of negative
/// inputs other than NaNs are made +0 instead of taking the sign (e5m2's sum is clamped
/// below at zero, as a signed number). The tail (under 16 elements) goes through the
/// portable kernel.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_bytes_avx2<const F: usize, const M: u8, const RELU: bool>(
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
#[inline]
fn f16_bytes_groups<const F: usize, const M: u8, R>(
    src: &[u32],
    dst: &mut [u8],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> std::arch::x86_64::__m256i,
) {
    use std::arch::x86_64::*;
    let sp = const { fast::SPECS[F] };
    // For stochastic rounding into e2m1, whose code is f16's bits 14..9, the 8 bits below
    // its grid are bits 8..1: the random byte r is doubled instead, and added to bits 8..0
    // (bit 0 cannot change the carry: 2r being even, bits 8..0 plus 2r reach 512 exactly
    // when bits 8..1 plus r reach 256).
    let double = const { matches!(f16_bytes_shift(&fast::SPECS[F]), Some(1)) && M == small::RS };
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
        let man = fast::SPECS[F].man;
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
    let signed_bytes =
        const { M == small::RZ && matches!(10u32.checked_sub(fast::SPECS[F].man), Some(8 | 9)) }
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
            let c = if relu {
                _mm256_andnot_si256(n, c)
            } else {
                _mm256_or_si256(c, _mm256_and_si256(n, sign))
            };
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
            let n = _mm256_packs_epi16(na, nb);
            if relu {
                _mm256_andnot_si256(n, c)
            } else {
                _mm256_or_si256(c, _mm256_and_si256(n, sign))
            }
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tf32_avx2<const M: u8>(src: &[u32], dst: &mut [u32], k: fast::Knobs) {
    use std::arch::x86_64::*;
    let n = src.len().min(dst.len());
    let whole = n - n % 16;
    let abs_mask = _mm256_set1_epi32(0x7fff_ffff);
    let infinity = _mm256_set1_epi32(0x7f80_0000);
    let nan = _mm256_set1_epi32(fast::SPECS[fast::I_TF32].nan_full as i32);
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
    fast::run::<{ fast::I_TF32 }, M, false, false, 0, u32, u32>(
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
#[cfg(target_arch = "x86_64")]
const fn sum_avx2_applies(f: usize, m: u8, sf: bool) -> bool {
    let sp = fast::SPECS[f];
    f >= fast::I_E4M3
        && sp.pad == 0
        && (sf
            || (!sp.has_inf && !sp.has_nan)
            || (m == small::RN && (sp.has_inf || unsigned_overflow(&sp).is_some())))
}

/// For a format without infinity whose NaN is the code above its largest finite one, in the
/// same binade (e4m3), to which every overflow rounds to nearest, and which is unsigned:
/// the largest magnitude's pattern that rounds to nearest even to a finite value (the
/// midpoint of the largest finite value and that code's value, where the largest finite
/// code is even, else just under it). `None` for other formats.
#[cfg(target_arch = "x86_64")]
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
///   operand where one is NaN; until session 19 a compare and a select);
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
/// (Before 2026-11-23 `RZ` and `RS` took the `RN` sum one step down where it had rounded
/// up: four more operations per 8, 0.28–0.37× the roofline at 1 Mi against 0.39–0.45×.)
/// The caller checks [`sum_avx2_applies`]. The tail (under 32 elements) goes through the
/// portable kernel.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn narrow_sum_avx2<const F: usize, const M: u8, const SF: bool, const RELU: bool>(
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
#[cfg(target_arch = "x86_64")]
const fn addend_table(sp: &fast::Spec) -> Option<[u32; 8]> {
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn narrow_sum_groups<const F: usize, const M: u8, const SF: bool, R>(
    src: &[u32],
    dst: &mut [u8],
    rnd: &[R],
    relu: bool,
    random: impl Fn(&[R]) -> [std::arch::x86_64::__m256i; 2],
) {
    use std::arch::x86_64::*;
    let sp = fast::SPECS[F];
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
    let table = const { addend_table(&fast::SPECS[F]) }
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
        // The sign; with `.relu` instead the codes of those inputs made +0
        // (`relu_on_results`: the others are positive).
        let c = if relu {
            _mm256_andnot_si256(n, c)
        } else {
            _mm256_or_si256(c, _mm256_and_si256(n, sign))
        };
        let c = _mm256_permutevar8x32_epi32(c, order);
        // SAFETY: `d` holds 32 bytes: the unaligned store writes exactly those.
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast::<__m256i>(), c) };
    }
}

/// Widens random values to `u32` (the low 32 bits), compiled for the best instruction set.
pub(super) fn widen<R: Word>(src: &[R], dst: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2_here() {
            // SAFETY: the CPU has AVX2 (`avx2_here`).
            unsafe { widen_avx2(src, dst) };
            return;
        }
    }
    widen_plain(src, dst);
}

#[inline(always)]
fn widen_plain<R: Word>(src: &[R], dst: &mut [u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.to_u64() as u32;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn widen_avx2<R: Word>(src: &[R], dst: &mut [u32]) {
    widen_plain(src, dst);
}

/// `f32` → `ue8m0` over a slice, for the policy bits `P` of `ue8m0.rs`.
pub(super) fn ue8m0<const UP: bool, const P: u8, D: Word>(src: &[u32], dst: &mut [D]) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512_here() {
            // SAFETY: the CPU has every feature `ue8m0_avx512` enables (`avx512_here`).
            unsafe { ue8m0_avx512::<UP, P, D>(src, dst) };
            return;
        }
        if avx2_here() {
            // SAFETY: the CPU has AVX2 (`avx2_here`).
            unsafe { ue8m0_avx2::<UP, P, D>(src, dst) };
            return;
        }
    }
    ue8m0::run::<UP, P, D>(src, dst);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn ue8m0_avx2<const UP: bool, const P: u8, D: Word>(src: &[u32], dst: &mut [D]) {
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
///   more, ∞ 255); with `.satfinite` that sum first clamped as a signed number to the
///   largest that gives 0xfe (NaN sums are negative and stay: 256 or more).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn ue8m0_groups_avx2<const UP: bool, const P: u8>(src: &[u32], dst: &mut [u8]) {
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
            let mut t = _mm256_add_epi32(a, below);
            if sf {
                t = _mm256_min_epi32(t, largest);
            }
            let r = _mm256_srli_epi32::<23>(t);
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

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn ue8m0_avx512<const UP: bool, const P: u8, D: Word>(src: &[u32], dst: &mut [D]) {
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
#[cfg(target_arch = "x86_64")]
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

/// [`super::vectorized`]: `work.run()` compiled for the best instruction set the CPU has up
/// to `isa` — 0: the baseline target, 1: AVX2, 2: AVX-512 (F, BW, VL and DQ, whose 64-bit
/// multiplications and conversions the integer kernel and the random words use). Callers
/// ask for 2; tests run each level.
pub(super) fn vectorized_isa<V: Vectorizable>(isa: u8, work: V) -> V::Output {
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= 2 && avx512_here() && is_x86_feature_detected!("avx512dq") {
            // SAFETY: the CPU has every feature `vectorized_avx512` enables (`avx512_here`
            // and the check of DQ).
            return unsafe { vectorized_avx512(work) };
        }
        if isa >= 1 && avx2_here() {
            // SAFETY: the CPU has AVX2 (`avx2_here`).
            return unsafe { vectorized_avx2(work) };
        }
    }
    let _ = isa;
    work.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn vectorized_avx2<V: Vectorizable>(work: V) -> V::Output {
    work.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
unsafe fn vectorized_avx512<V: Vectorizable>(work: V) -> V::Output {
    work.run_avx512()
}

/// The integer kernel's `f32` → 64-bit integers (signed, or unsigned if `U`) in direction
/// `M` (rn, rm or rp), eight at a time with the rounding given in the conversion instruction
/// (`vcvtps2qq`/`vcvtps2uqq` with embedded rounding) instead of a separate `vroundps`: lane
/// by lane what `int.rs`'s `run64_dq` computes — `.ftz` applied to subnormal inputs, the
/// input raised to the lower bound (an integral value, so raising before rounding gives
/// what raising the rounded value does), the result saturated from the upper bound up (the
/// instruction's out-of-range value replaced), NaN's own result. Returns how many leading
/// elements it converted: a multiple of 8, and 0 where the CPU lacks AVX-512 F, VL or DQ
/// (the caller converts the rest).
pub(super) fn round64<const M: u8, const U: bool>(
    src: &[u32],
    dst: &mut [u64],
    k: &super::int::Knobs,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if avx512_here() && is_x86_feature_detected!("avx512dq") {
        // SAFETY: the CPU has every feature `round64_avx512` enables (`avx512_here` and the
        // check of DQ).
        return unsafe { round64_avx512::<M, U>(src, dst, k) };
    }
    let _ = (src, dst, k);
    0
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq")]
unsafe fn round64_avx512<const M: u8, const U: bool>(
    src: &[u32],
    dst: &mut [u64],
    k: &super::int::Knobs,
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

/// `x` rounded toward zero to an `i64`, saturating: `i64::MAX` from 2^63 up, `i64::MIN`
/// below −2^63 and for NaN (callers decide NaN themselves). Written with Rust's unchecked
/// conversion, reached only for values in range, which compiles to one `vcvttps2qq` for
/// eight lanes with AVX-512 DQ and two masked moves (the saturating `as` compiles to
/// scalar code).
#[inline(always)]
pub(super) fn trunc_i64(x: f32) -> i64 {
    const TOP: f32 = 9_223_372_036_854_775_808.0; // 2^63
    if x >= TOP {
        i64::MAX
    } else if x >= -TOP {
        // SAFETY: −2^63 ≤ x < 2^63 (so `x` is not NaN): its truncation is an `i64`.
        unsafe { x.to_int_unchecked::<i64>() }
    } else {
        i64::MIN
    }
}

/// `x` rounded toward zero to a `u64`, saturating: `u64::MAX` from 2^64 up, 0 below 0 and
/// for NaN. As [`trunc_i64`], with `vcvttps2uqq`.
#[inline(always)]
pub(super) fn trunc_u64(x: f32) -> u64 {
    const TOP: f32 = 18_446_744_073_709_551_616.0; // 2^64
    if x >= TOP {
        u64::MAX
    } else if x >= 0.0 {
        // SAFETY: 0 ≤ x < 2^64 (so `x` is not NaN): its truncation is a `u64`.
        unsafe { x.to_int_unchecked::<u64>() }
    } else {
        0
    }
}

/// Runs the `ue8m0` kernel compiled for one instruction set — 0: the baseline target, 1:
/// AVX2, 2: AVX-512 — if the CPU has it (as [`fast_isa`]).
#[cfg(test)]
pub(super) fn ue8m0_isa<const UP: bool, const P: u8>(isa: u8, src: &[u32], dst: &mut [u8]) -> bool {
    match isa {
        0 => ue8m0::run::<UP, P, u8>(src, dst),
        #[cfg(target_arch = "x86_64")]
        1 if is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { ue8m0_avx2::<UP, P, u8>(src, dst) }
        }
        #[cfg(target_arch = "x86_64")]
        2 if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl") =>
        {
            // SAFETY: the CPU has every feature `ue8m0_avx512` enables (`avx512_here`).
            unsafe { ue8m0_avx512::<UP, P, u8>(src, dst) }
        }
        _ => return false,
    }
    true
}

/// Runs the specialised kernel compiled for one instruction set — 0: the baseline target,
/// 1: AVX2, 2: AVX-512 — if the CPU has it (tests compare them with the exact core: the
/// dispatch alone only ever exercises the best one).
#[cfg(test)]
pub(super) fn fast_isa<
    const F: usize,
    const M: u8,
    const SF: bool,
    const KN: bool,
    const W: u32,
    D: Word,
    R: Word,
>(
    isa: u8,
    src: &[u32],
    dst: &mut [D],
    rnd: &[R],
    k: fast::Knobs,
) -> bool {
    match isa {
        0 => fast::run::<F, M, SF, KN, W, D, R>(src, dst, rnd, k),
        #[cfg(target_arch = "x86_64")]
        1 if is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { fast_avx2::<F, M, SF, KN, W, D, R>(src, dst, rnd, k) }
        }
        #[cfg(target_arch = "x86_64")]
        2 if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl") =>
        {
            // SAFETY: the CPU has every feature `fast_avx512` enables (checked just above).
            unsafe { fast_avx512::<F, M, SF, KN, W, D, R>(src, dst, rnd, k) }
        }
        _ => return false,
    }
    true
}
