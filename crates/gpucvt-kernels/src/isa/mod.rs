//! Run-time CPU-feature dispatch: the only `unsafe` code of gpucvt-core.
//!
//! This file holds the entry points and their dispatch, the float-environment check and what
//! both instruction sets' kernels share (the random values' forms, the facts about formats
//! that decide which kernel applies); the hand-written kernels are in `avx512.rs` (with the
//! choice of one conversion's kernel, [`fast_avx512`]) and `avx2.rs` ([`fast_avx2`]), both
//! compiled only on x86-64.
//!
//! The kernels in `fast.rs`, `small.rs` and `ue8m0.rs` are plain safe Rust marked
//! `#[inline(always)]`.
//! Here they are compiled three times — for the baseline target, for AVX2 and for AVX-512 —
//! and the best version the running CPU supports is called. Calling a
//! `#[target_feature]` function is `unsafe` only because the CPU must have the feature; each
//! call below is guarded by `is_x86_feature_detected!` for exactly the features it enables
//! (`avx512_here`, `avx2_here`), after `allowed`, which takes versions away under the
//! `GPUCVT_ISA` ceiling ([`ISA_VARIABLE`]) so that one machine can run and time the
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

use crate::portable::spec::{formats, Fmt, Id, Spec};
use crate::portable::{fast, int, small, ue8m0};
use crate::streams::streams_for;
use crate::Word;
use core::fmt;

mod int_dispatch;
pub(crate) use int_dispatch::convert as convert_int;
#[cfg(test)]
pub(crate) use int_dispatch::convert_isa as convert_int_isa;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
use avx2::*;
#[cfg(target_arch = "x86_64")]
use avx512::*;

/// Work to be compiled for the best instruction set of the running CPU: see [`vectorized`].
pub trait Vectorizable {
    /// What the work returns.
    type Output;
    /// Does the work. Mark it `#[inline(always)]`, and the functions it calls whose loops
    /// should be vectorized too: only code inlined into it is compiled for the wider
    /// instruction sets.
    fn run(self) -> Self::Output;

    /// Does the work where the CPU has AVX-512 F, BW, VL and DQ: [`run`](Self::run)
    /// unless the work has a formulation that only those instructions make fast (the
    /// integer kernel's conversions to 64-bit integers). Both must give the same results.
    #[inline(always)]
    fn run_avx512(self) -> Self::Output
    where
        Self: Sized,
    {
        self.run()
    }
}

/// Runs `work` compiled for AVX-512 (F, BW, VL) or AVX2 where the CPU has them (x86-64),
/// else for the baseline target: a safe entry to the run-time dispatch of `isa/` for loops
/// of other crates that the compiler vectorizes better with wider vectors (the conversion
/// kernels of this module dispatch by themselves). The result is the same whichever version
/// runs, as long as the work is ordinary safe Rust (the compiler does not reorder floating-point
/// operations for vectors).
///
/// ```
/// use gpucvt_kernels::{vectorized, Vectorizable};
/// struct Sum<'a>(&'a [u32]);
/// impl Vectorizable for Sum<'_> {
///     type Output = u64;
///     #[inline(always)]
///     fn run(self) -> u64 {
///         self.0.iter().map(|&x| x as u64).sum()
///     }
/// }
/// assert_eq!(vectorized(Sum(&[1, 2, 3])), 6);
/// ```
pub fn vectorized<V: Vectorizable>(work: V) -> V::Output {
    vectorized_isa(InstructionSet::Avx512, work)
}

/// [`vectorized`] with the instruction set at most `max`, so that code built on it can test
/// each of its versions on one machine (the versions give the same results; a test shows it).
///
/// ```
/// use gpucvt_kernels::{vectorized_up_to, Vectorizable, InstructionSet};
/// struct Sum<'a>(&'a [u32]);
/// impl Vectorizable for Sum<'_> {
///     type Output = u64;
///     #[inline(always)]
///     fn run(self) -> u64 {
///         self.0.iter().map(|&x| x as u64).sum()
///     }
/// }
/// for isa in [InstructionSet::Baseline, InstructionSet::Avx2, InstructionSet::Avx512] {
///     assert_eq!(vectorized_up_to(isa, Sum(&[1, 2, 3])), 6);
/// }
/// ```
pub fn vectorized_up_to<V: Vectorizable>(max: InstructionSet, work: V) -> V::Output {
    vectorized_isa(max, work)
}

/// The environment variable that lowers the instruction set of every bulk kernel (and of
/// [`vectorized`]) for the whole process: `baseline`, `avx2` or `avx512` (the default: the
/// best the CPU has). It is a ceiling, never a demand: `avx512` on a CPU without AVX-512
/// runs its AVX2 kernels. Every version gives the same results, so it changes only speed;
/// it lets one machine run, time and `gpucvt verify` the kernels another machine would
/// use. Read once, on first use; [`isa_limit`] reports a value that is not one of these
/// (which the library then ignores, and the command line refuses).
pub const ISA_VARIABLE: &str = "GPUCVT_ISA";

/// An instruction set that the bulk kernels are compiled for.
///
/// ```
/// use gpucvt_kernels::{instruction_set, InstructionSet};
/// // Whatever this machine has, the kernels run on one of the three.
/// let isa = instruction_set();
/// assert!(isa <= InstructionSet::Avx512);
/// assert_eq!("avx2".parse::<InstructionSet>(), Ok(InstructionSet::Avx2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InstructionSet {
    /// The target's baseline (SSE2 on x86-64; on other architectures the only version).
    Baseline,
    /// x86-64 with AVX2 (and F16C where a kernel needs it).
    Avx2,
    /// x86-64 with AVX-512 F, BW and VL (and VBMI, BF16, DQ where a kernel needs them).
    Avx512,
}

impl InstructionSet {
    /// The three, from the narrowest.
    pub const ALL: [InstructionSet; 3] = [
        InstructionSet::Baseline,
        InstructionSet::Avx2,
        InstructionSet::Avx512,
    ];

    /// The name [`ISA_VARIABLE`] takes: `baseline`, `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            InstructionSet::Baseline => "baseline",
            InstructionSet::Avx2 => "avx2",
            InstructionSet::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for InstructionSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InstructionSet::Baseline => "the baseline target",
            InstructionSet::Avx2 => "AVX2",
            InstructionSet::Avx512 => "AVX-512",
        })
    }
}

/// A value of [`ISA_VARIABLE`] that names no instruction set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsaError(pub String);

impl fmt::Display for IsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{ISA_VARIABLE}={:?} names no instruction set: use baseline, avx2 or avx512",
            self.0
        )
    }
}

impl std::error::Error for IsaError {}

impl core::str::FromStr for InstructionSet {
    type Err = IsaError;
    fn from_str(s: &str) -> Result<Self, IsaError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "baseline" => Ok(InstructionSet::Baseline),
            "avx2" => Ok(InstructionSet::Avx2),
            "avx512" | "avx-512" => Ok(InstructionSet::Avx512),
            _ => Err(IsaError(s.to_string())),
        }
    }
}

/// The ceiling [`ISA_VARIABLE`] sets, as it is now in the environment: `Ok(None)` when it is
/// unset or empty, an error when it names no instruction set (the library then uses the
/// best the CPU has; a program may refuse to go on, as `gpucvt` does).
pub fn isa_limit() -> Result<Option<InstructionSet>, IsaError> {
    match std::env::var(ISA_VARIABLE) {
        Ok(s) if s.trim().is_empty() => Ok(None),
        Ok(s) => s.parse().map(Some),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(s)) => Err(IsaError(s.to_string_lossy().into())),
    }
}

/// The best instruction set the dispatch may use, from [`ISA_VARIABLE`] as it was on first
/// use.
#[cfg(target_arch = "x86_64")]
fn ceiling() -> InstructionSet {
    static CEILING: std::sync::OnceLock<InstructionSet> = std::sync::OnceLock::new();
    *CEILING.get_or_init(|| match isa_limit() {
        Ok(Some(isa)) => isa,
        Ok(None) | Err(_) => InstructionSet::Avx512,
    })
}

/// The dispatch ladder: the AVX-512 version (`$avx512`) where [`avx512_here`], else the AVX2
/// one (`$avx2`) where [`avx2_here`], else `$baseline`. Each version is a
/// `#[target_feature]` function enabling at most the features its rung checks.
macro_rules! ladder {
    (avx512: $avx512:expr, avx2: $avx2:expr, baseline: $baseline:expr $(,)?) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if avx512_here() {
                // SAFETY: the CPU has AVX-512 F, BW and VL (`avx512_here`), every feature the
                // AVX-512 versions enable.
                return unsafe { $avx512 };
            }
            if avx2_here() {
                // SAFETY: the CPU has AVX2 (`avx2_here`).
                return unsafe { $avx2 };
            }
        }
        $baseline
    }};
}

macro_rules! dispatch_small {
    ($p:expr, $src:expr, $dst:expr, $r:expr, $mode:ident) => {
        run_small::<{ small::$mode }, D>($p, $src, $dst, $r)
    };
}

/// `f32` → small float over a slice; `rnd` has one random value per element (ignored by
/// deterministic modes).
pub(crate) fn small<D: Word>(p: &small::Params, src: &[u32], dst: &mut [D], rnd: &[u32]) {
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
/// the ceiling of `GPUCVT_ISA` ([`ISA_VARIABLE`]). Each use is followed by the
/// feature detection that makes the call safe: this only ever takes a version away.
#[cfg(target_arch = "x86_64")]
#[inline]
fn allowed(isa: InstructionSet) -> bool {
    ceiling() >= isa
}

/// Whether the AVX-512 versions run here: the ceiling allows them and the CPU has AVX-512
/// F, BW and VL, every feature the `*_avx512` dispatch functions enable.
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx512_here() -> bool {
    allowed(InstructionSet::Avx512)
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl")
}

/// Whether the AVX2 versions run here: the ceiling allows them and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2_here() -> bool {
    allowed(InstructionSet::Avx2) && is_x86_feature_detected!("avx2")
}

/// Whether the processor's floating-point environment is the default one that Rust code
/// assumes and the `f32` kernels rely on (x86-64: MXCSR rounds to nearest, flushes no
/// result to zero, treats no input denormal as zero, and masks every exception; its six
/// status flags may be set). A host that changes it (some numerical libraries set
/// flush-to-zero and denormals-are-zero for speed) would otherwise get other results for
/// subnormal inputs from `vcvtps2ph`, `vcvtne2ps2bf16` and the kernels' additions, or a
/// trap. Elsewhere: `true` (the floating-point control register is not read).
pub(crate) fn float_environment_is_default() -> bool {
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
pub(crate) fn with_mxcsr<T>(csr: u32, f: impl FnOnce() -> T) -> T {
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

/// The instruction set the bulk kernels run with in this process: the best this CPU has,
/// lowered to [`ISA_VARIABLE`]'s ceiling. `gpucvt verify` reports it.
pub fn instruction_set() -> InstructionSet {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512_here() {
            return InstructionSet::Avx512;
        }
        if avx2_here() {
            return InstructionSet::Avx2;
        }
    }
    InstructionSet::Baseline
}

fn run_small<const MODE: u8, D: Word>(p: &small::Params, src: &[u32], dst: &mut [D], rnd: &[u32]) {
    ladder!(
        avx512: small_avx512::<MODE, D>(p, src, dst, rnd),
        avx2: small_avx2::<MODE, D>(p, src, dst, rnd),
        baseline: small::run::<MODE, D>(p, src, dst, rnd, D::from_u32),
    )
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
pub(crate) fn fast<
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
    ladder!(
        avx512: fast_avx512::<F, M, SF, KN, W, D, R>(src, dst, rnd, k),
        avx2: fast_avx2::<F, M, SF, KN, W, D, R>(src, dst, rnd, k),
        // (On x86-64, `Plan::new` does not choose these kernels without AVX2: `has_fast`.)
        baseline: fast::run::<F, M, SF, KN, W, D, R>(src, dst, rnd, k),
    )
}

/// Whether the specialised kernels run here: on x86-64 they are compiled for AVX2 and
/// AVX-512 only (older CPUs use the run-time-parameterised kernel), elsewhere for the
/// baseline target.
pub(crate) fn has_fast() -> bool {
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
/// (following [`streams_for`]'s two streams for long slices), so that these forms
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
fn knobs_first<F: Fmt, const SF: bool, D: Word, R: Word>(
    src: &[u32],
    dst: &mut [D],
    rnd: &[R],
    k: fast::Knobs,
    kernel: impl Fn(&[u32], &mut [D], &[R]),
) {
    let sp = const { F::SPEC };
    let sign = 1u64 << sp.sign_pos;
    let relu_after = const { relu_on_results(&F::SPEC, SF) };
    if k.ftz_below == 0 && k.relu == 0 {
        // Neither knob set (as a caller may ask): the kernel alone.
        kernel(src, dst, rnd);
        return;
    }
    let n = src.len().min(dst.len());
    // The tiles of at most `tile` elements, in the streams' order.
    let tiles = |tile: usize| {
        streams_for::<u32, D>(n).flat_map(move |r| {
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

/// The random values of a stochastic kernel (in `avx512.rs` and `avx2.rs`): in the narrow word of the conversion's
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
    fn tail<F: Fmt, const SF: bool, const KN: bool, const W: u32, D: Word>(
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

/// Widens random values to `u32` (the low 32 bits), compiled for the best instruction set.
pub(crate) fn widen<R: Word>(src: &[R], dst: &mut [u32]) {
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

/// `f32` → `ue8m0` over a slice, for the policy bits `P` of `ue8m0.rs`.
pub(crate) fn ue8m0<const UP: bool, const P: u8, D: Word>(src: &[u32], dst: &mut [D]) {
    ladder!(
        avx512: ue8m0_avx512::<UP, P, D>(src, dst),
        avx2: ue8m0_avx2::<UP, P, D>(src, dst),
        baseline: ue8m0::run::<UP, P, D>(src, dst),
    )
}

/// [`vectorized`]: `work.run()` compiled for the best instruction set the CPU has up
/// to `isa` — 0: the baseline target, 1: AVX2, 2: AVX-512 (F, BW, VL and DQ, whose 64-bit
/// multiplications and conversions the integer kernel and the random words use). Callers
/// ask for 2; tests run each level.
pub(crate) fn vectorized_isa<V: Vectorizable>(isa: InstructionSet, work: V) -> V::Output {
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= InstructionSet::Avx512 && avx512_here() && is_x86_feature_detected!("avx512dq") {
            // SAFETY: the CPU has every feature `vectorized_avx512` enables (`avx512_here`
            // and the check of DQ).
            return unsafe { vectorized_avx512(work) };
        }
        if isa >= InstructionSet::Avx2 && avx2_here() {
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
pub(crate) fn round64<const M: u8, const U: bool>(
    src: &[u32],
    dst: &mut [u64],
    k: &int::Knobs,
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

/// `x` rounded toward zero to an `i64`, saturating: `i64::MAX` from 2^63 up, `i64::MIN`
/// below −2^63 and for NaN (callers decide NaN themselves). Written with Rust's unchecked
/// conversion, reached only for values in range, which compiles to one `vcvttps2qq` for
/// eight lanes with AVX-512 DQ and two masked moves (the saturating `as` compiles to
/// scalar code).
#[inline(always)]
pub(crate) fn trunc_i64(x: f32) -> i64 {
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
pub(crate) fn trunc_u64(x: f32) -> u64 {
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
pub(crate) fn ue8m0_isa<const UP: bool, const P: u8>(
    isa: InstructionSet,
    src: &[u32],
    dst: &mut [u8],
) -> bool {
    match isa {
        InstructionSet::Baseline => ue8m0::run::<UP, P, u8>(src, dst),
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx2 if is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { ue8m0_avx2::<UP, P, u8>(src, dst) }
        }
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx512
            if is_x86_feature_detected!("avx512f")
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
pub(crate) fn fast_isa<
    F: Fmt,
    const M: u8,
    const SF: bool,
    const KN: bool,
    const W: u32,
    D: Word,
    R: Word,
>(
    isa: InstructionSet,
    src: &[u32],
    dst: &mut [D],
    rnd: &[R],
    k: fast::Knobs,
) -> bool {
    match isa {
        InstructionSet::Baseline => fast::run::<F, M, SF, KN, W, D, R>(src, dst, rnd, k),
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx2 if is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { fast_avx2::<F, M, SF, KN, W, D, R>(src, dst, rnd, k) }
        }
        #[cfg(target_arch = "x86_64")]
        InstructionSet::Avx512
            if is_x86_feature_detected!("avx512f")
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
