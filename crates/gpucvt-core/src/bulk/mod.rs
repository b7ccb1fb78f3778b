//! Bulk conversion: one [`Conversion`] over whole slices, with the fastest correct kernel.
//!
//! - Sources of at most 16 bits: a lookup table built from the exact core on construction.
//! - `f32` sources into small floats (`f16 bf16 tf32 e4m3 e5m2 e2m3 e3m2 e2m1 ue4m3 ue5m3`)
//!   in `rn rna rz rm rp rs`, and into `ue8m0` in `rz rp`: branch-free integer code that the
//!   compiler vectorizes, dispatched at run time to AVX-512 or AVX2 where the CPU has them;
//!   with AVX-512, the CPU's own conversions where they round as the core does: `vcvtps2ph`
//!   for f16 (for stochastic rounding too, with the carry from the 13 bits below f16's grid;
//!   and, through f16 and tables by its high byte (`vpermi2b` lookups), for the FP8/FP6/FP4
//!   formats toward zero, and to nearest from f16 rounded to odd; through f16's top byte for
//!   e5m2 with stochastic rounding) and `vcvtne2ps2bf16` for bf16 to nearest; the other
//!   FP8/FP6/FP4 stochastic roundings by one addition toward zero (the only `unsafe` of the
//!   crate is that dispatch and those kernels, in `simd/`). The conversions PTX has —
//!   `f16`/`bf16` in `rn rz rm rp rs`, `tf32` in `rna rn rz`, the FP8/FP6/FP4 formats
//!   in `rn rs` (and `rz`), with or without `.satfinite`, `.relu`, `.ftz` — and `ue8m0` run
//!   kernels specialised at compile time for their format, direction and policy (about one
//!   vector instruction per element with AVX-512, so they run at memory speed); the rest
//!   (`.sat`, `.pzo`, other directions, unsigned formats, wide random values) a kernel that
//!   reads the format and policy at run time. [`Strategy::F32Small`] names both. (`.relu`
//!   and `.ftz` reach the same kernels: the hand-written SIMD ones apply `.relu`
//!   themselves, the portable ones take a pass over each tile's results; `.ftz` takes one
//!   over each tile's inputs.)
//! - `f32` sources into 8-, 16-, 32- and 64-bit integers in the deterministic roundings
//!   (PTX `cvt.{rni,rzi,rmi,rpi}[.ftz][.sat]` into `s8`…`u64`): branch-free code rounding
//!   and clamping in `f32` (`int.rs`, dispatched like the small-float kernels).
//! - Everything else: the exact core, element by element.
//!
//! The `f32` kernels compute with floating-point instructions, whose results for subnormal
//! inputs and whose rounding follow the processor's floating-point environment. Each call
//! reads it (x86-64: MXCSR) and, where a host has changed it (flush-to-zero,
//! denormals-are-zero, another rounding direction, unmasked exceptions), converts through
//! the exact core instead: the same results, more slowly. Elsewhere than x86-64 it is not
//! read, and must be the default one.
//!
//! Stochastic rounding takes one random value per element, as `u32`
//! ([`Kernel::convert_stochastic`]) or in the narrowest word that holds the width
//! ([`Kernel::convert_stochastic_words`]: a quarter of the memory traffic for 8-bit widths).
//!
//! The exact core is the single source of truth: every kernel is compared with it by the
//! tests (exhaustively for table-driven kernels, on boundary-dense and random samples for the
//! `f32` kernels, and over all 2^32 inputs by `gpucvt verify` and the ignored tests).
//!
//! ```
//! use gpucvt_core::{bulk::Kernel, Conversion, Policy, Rounding, format::{F32, E4M3}};
//! let k = Kernel::new(Conversion::new(F32, E4M3, Rounding::RN,
//!     Policy { satfinite: true, ..Policy::default() }));
//! let src = [1.0f32.to_bits(), 300.0f32.to_bits(), f32::INFINITY.to_bits()];
//! let mut dst = [0u8; 3];
//! k.convert(&src, &mut dst).unwrap();
//! assert_eq!(dst, [0x38, 0x79, 0x7e]);
//! ```

mod fast;
mod int;
mod simd;
mod small;
mod ue8m0;

use crate::convert::Conversion;
use crate::format::F32;
use crate::round::Direction;
use core::fmt;

/// Keeps [`Word`] to the four types the kernels are written for: the slice casts and the
/// kernels' dispatch assume them, and another type would reach an internal `expect`.
mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// An unsigned integer type that holds encodings: `u8`, `u16`, `u32` or `u64` (sealed: no
/// other type can implement it).
///
/// ```compile_fail
/// use gpucvt_core::bulk::Word;
/// #[derive(Clone, Copy, Default)]
/// struct Mine(u32);
/// impl Word for Mine {
///     const BITS: u32 = 32;
///     fn to_u64(self) -> u64 { self.0 as u64 }
///     fn from_u64(v: u64) -> Self { Mine(v as u32) }
///     fn from_u32(v: u32) -> Self { Mine(v) }
/// }
/// ```
pub trait Word: sealed::Sealed + Copy + Default + Send + Sync + 'static {
    /// Its width.
    const BITS: u32;
    /// Widens to `u64`.
    fn to_u64(self) -> u64;
    /// Truncates from `u64`.
    fn from_u64(v: u64) -> Self;
    /// Truncates from `u32`.
    fn from_u32(v: u32) -> Self;
    /// The slice as `&[u32]`, if `Self` is `u32`.
    fn as_u32_slice(s: &[Self]) -> Option<&[u32]> {
        let _ = s;
        None
    }
    /// The slice as `&[u8]`, if `Self` is `u8`.
    #[doc(hidden)]
    fn as_u8_slice(s: &[Self]) -> Option<&[u8]> {
        let _ = s;
        None
    }
    /// The slice as `&[u16]`, if `Self` is `u16`.
    #[doc(hidden)]
    fn as_u16_slice(s: &[Self]) -> Option<&[u16]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u8]`, if `Self` is `u8` (lets kernels write their natural word).
    #[doc(hidden)]
    fn as_u8_slice_mut(s: &mut [Self]) -> Option<&mut [u8]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u16]`, if `Self` is `u16`.
    #[doc(hidden)]
    fn as_u16_slice_mut(s: &mut [Self]) -> Option<&mut [u16]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u32]`, if `Self` is `u32`.
    #[doc(hidden)]
    fn as_u32_slice_mut(s: &mut [Self]) -> Option<&mut [u32]> {
        let _ = s;
        None
    }
    /// The slice as `&mut [u64]`, if `Self` is `u64`.
    #[doc(hidden)]
    fn as_u64_slice_mut(s: &mut [Self]) -> Option<&mut [u64]> {
        let _ = s;
        None
    }
}

macro_rules! word {
    ($t:ty, $bits:expr $(, $m:ident $(, $c:ident)?)?) => {
        impl Word for $t {
            const BITS: u32 = $bits;
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_u32(v: u32) -> Self {
                v as $t
            }
            $(
                fn $m(s: &mut [$t]) -> Option<&mut [$t]> {
                    Some(s)
                }
                $(
                    fn $c(s: &[$t]) -> Option<&[$t]> {
                        Some(s)
                    }
                )?
            )?
        }
    };
}
word!(u8, 8, as_u8_slice_mut, as_u8_slice);
word!(u16, 16, as_u16_slice_mut, as_u16_slice);
word!(u64, 64, as_u64_slice_mut);
impl Word for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v as u32
    }
    #[inline(always)]
    fn from_u32(v: u32) -> Self {
        v
    }
    fn as_u32_slice(s: &[u32]) -> Option<&[u32]> {
        Some(s)
    }
    fn as_u32_slice_mut(s: &mut [u32]) -> Option<&mut [u32]> {
        Some(s)
    }
}

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

/// `cvt.rp.satfinite.ue8m0x2.f32` of one `f32` bit pattern: the scale byte `2^(byte − 127)`
/// of MX block scaling with rp scales, for code that computes one per block in its own
/// loop. The same element function as the `ue8m0` slice kernel ([`Kernel`] of that
/// conversion), which the tests compare with the exact core.
///
/// ```
/// use gpucvt_core::bulk::ue8m0_rp_satfinite;
/// assert_eq!(ue8m0_rp_satfinite(0x3f80_0000), 127); // 1.0 = 2^0
/// assert_eq!(ue8m0_rp_satfinite(0x3f80_0001), 128); // just above 1.0 rounds up to 2^1
/// assert_eq!(ue8m0_rp_satfinite(0x7f80_0000), 254); // +inf saturates to 2^127
/// ```
#[inline(always)]
pub fn ue8m0_rp_satfinite(x: u32) -> u8 {
    ue8m0::convert::<true, { ue8m0::SF }>(x) as u8
}

/// Runs `work` compiled for AVX-512 (F, BW, VL) or AVX2 where the CPU has them (x86-64),
/// else for the baseline target: a safe entry to the run-time dispatch of `simd/` for loops
/// of other crates that the compiler vectorizes better with wider vectors (the conversion
/// kernels of this module dispatch by themselves). The result is the same whichever version
/// runs, as long as the work is ordinary safe Rust (the compiler does not reorder floating-point
/// operations for vectors).
///
/// ```
/// use gpucvt_core::bulk::{vectorized, Vectorizable};
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
    simd::vectorized_isa(2, work)
}

/// [`vectorized`] through the best instruction set up to `isa` — 0: the baseline target,
/// 1: AVX2, 2: AVX-512 — so that tests can run each version.
pub(crate) fn vectorized_isa<V: Vectorizable>(isa: u8, work: V) -> V::Output {
    simd::vectorized_isa(isa, work)
}

/// The widest instruction set [`vectorized_up_to`] may compile work for (under the
/// process's ceiling, [`ISA_VARIABLE`]; [`InstructionSet`] names the one that runs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum VectorIsa {
    /// The baseline target only.
    Baseline,
    /// AVX2 where the CPU has it, else the baseline.
    Avx2,
    /// The best the CPU has: AVX-512, else AVX2, else the baseline ([`vectorized`]).
    #[default]
    Best,
}

/// [`vectorized`] with the instruction set at most `max`, so that code built on it can test
/// each of its versions on one machine (the versions give the same results; a test shows it).
///
/// ```
/// use gpucvt_core::bulk::{vectorized_up_to, Vectorizable, VectorIsa};
/// struct Sum<'a>(&'a [u32]);
/// impl Vectorizable for Sum<'_> {
///     type Output = u64;
///     #[inline(always)]
///     fn run(self) -> u64 {
///         self.0.iter().map(|&x| x as u64).sum()
///     }
/// }
/// for isa in [VectorIsa::Baseline, VectorIsa::Avx2, VectorIsa::Best] {
///     assert_eq!(vectorized_up_to(isa, Sum(&[1, 2, 3])), 6);
/// }
/// ```
pub fn vectorized_up_to<V: Vectorizable>(max: VectorIsa, work: V) -> V::Output {
    let isa = match max {
        VectorIsa::Baseline => 0,
        VectorIsa::Avx2 => 1,
        VectorIsa::Best => 2,
    };
    simd::vectorized_isa(isa, work)
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
/// use gpucvt_core::bulk::{instruction_set, InstructionSet};
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

/// The level the dispatch may use (0 baseline, 1 AVX2, 2 AVX-512), from [`ISA_VARIABLE`]
/// as it was on first use.
#[cfg(target_arch = "x86_64")]
fn isa_ceiling() -> u8 {
    static CEILING: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    *CEILING.get_or_init(|| match isa_limit() {
        Ok(Some(isa)) => isa as u8,
        Ok(None) | Err(_) => InstructionSet::Avx512 as u8,
    })
}

/// The instruction set the bulk kernels run with in this process: the best this CPU has,
/// lowered to [`ISA_VARIABLE`]'s ceiling. `gpucvt verify` reports it.
pub fn instruction_set() -> InstructionSet {
    simd::instruction_set()
}

/// Why a bulk conversion was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BulkError {
    /// Source and destination slices differ in length.
    Length {
        /// Source length.
        src: usize,
        /// Destination length.
        dst: usize,
    },
    /// A word type is narrower than the format it must hold.
    Narrow {
        /// The format.
        format: &'static str,
        /// Its width.
        bits: u32,
        /// The word's width.
        word: u32,
    },
    /// Stochastic rounding needs one random value per element.
    Random {
        /// Elements.
        elements: usize,
        /// Random values given.
        random: usize,
    },
}

impl fmt::Display for BulkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BulkError::Length { src, dst } => write!(
                f,
                "source has {src} elements but the destination has room for {dst}"
            ),
            BulkError::Narrow { format, bits, word } => write!(
                f,
                "{format} values are {bits} bits wide and do not fit {word}-bit words"
            ),
            BulkError::Random { elements, random } => write!(
                f,
                "stochastic rounding needs one random value per element: {elements} elements, {random} random values"
            ),
        }
    }
}

impl std::error::Error for BulkError {}

/// Which kernel a [`Kernel`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// A lookup table over every source encoding.
    Table,
    /// The branch-free `f32` → small-float kernel.
    F32Small,
    /// The `f32` → `ue8m0` kernel.
    F32Ue8m0,
    /// The branch-free `f32` → integer kernel.
    F32Int,
    /// The exact core, element by element.
    Exact,
}

enum Table {
    U8(Box<[u8]>),
    U16(Box<[u16]>),
    U32(Box<[u32]>),
    U64(Box<[u64]>),
}

enum Imp {
    Table(Table),
    /// Specialised at compile time (`fast.rs`).
    Fast(fast::Plan),
    /// Run-time parameters (`small.rs`): the rarer policies.
    Small(small::Params),
    Ue8m0(fast::Plan),
    Int(int::Params),
    Exact,
}

/// One conversion, ready to run over slices.
pub struct Kernel {
    conversion: Conversion,
    imp: Imp,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("conversion", &self.conversion)
            .field("strategy", &self.strategy())
            .finish()
    }
}

impl Kernel {
    /// Chooses the fastest correct kernel for `conversion` (building its table if it uses
    /// one: at most 65,536 exact conversions).
    pub fn new(conversion: Conversion) -> Kernel {
        let stochastic = matches!(conversion.rounding.direction, Direction::Stochastic { .. });
        let imp = if conversion.src == F32 {
            if let Some(p) =
                small::Params::new(&conversion.dst, conversion.rounding, &conversion.policy)
            {
                match fast::Plan::new(&conversion.dst, &p) {
                    Some(plan) => Imp::Fast(plan),
                    None => Imp::Small(p),
                }
            } else if let Some(p) =
                ue8m0::Params::new(&conversion.dst, conversion.rounding, &conversion.policy)
            {
                Imp::Ue8m0(ue8m0_plan(&p))
            } else if let Some(p) =
                int::Params::new(&conversion.dst, conversion.rounding, &conversion.policy)
            {
                Imp::Int(p)
            } else {
                Imp::Exact
            }
        } else if conversion.src.width() <= 16 && !stochastic {
            Imp::Table(build_table(&conversion))
        } else {
            Imp::Exact
        };
        Kernel { conversion, imp }
    }

    /// The conversion.
    pub fn conversion(&self) -> &Conversion {
        &self.conversion
    }

    /// The kernel in use.
    pub fn strategy(&self) -> Strategy {
        match self.imp {
            Imp::Table(_) => Strategy::Table,
            Imp::Fast(_) | Imp::Small(_) => Strategy::F32Small,
            Imp::Ue8m0(_) => Strategy::F32Ue8m0,
            Imp::Int(_) => Strategy::F32Int,
            Imp::Exact => Strategy::Exact,
        }
    }

    /// Whether the kernel is specialised at compile time for this conversion (for tests).
    #[cfg(test)]
    pub(crate) fn specialised(&self) -> bool {
        matches!(self.imp, Imp::Fast(_) | Imp::Ue8m0(_))
    }

    fn check<S: Word, D: Word>(&self, src: &[S], dst: &[D]) -> Result<(), BulkError> {
        if src.len() != dst.len() {
            return Err(BulkError::Length {
                src: src.len(),
                dst: dst.len(),
            });
        }
        for (f, word) in [
            (&self.conversion.src, S::BITS),
            (&self.conversion.dst, D::BITS),
        ] {
            if f.width() > word {
                return Err(BulkError::Narrow {
                    format: f.name,
                    bits: f.width(),
                    word,
                });
            }
        }
        Ok(())
    }

    /// Converts `src` into `dst` (same length). For stochastic rounding use
    /// [`Kernel::convert_stochastic`]; here the random bits of the conversion's rounding are
    /// used for every element.
    pub fn convert<S: Word, D: Word>(&self, src: &[S], dst: &mut [D]) -> Result<(), BulkError> {
        self.check(src, dst)?;
        let fixed = match self.conversion.rounding.direction {
            Direction::Stochastic { random, .. } => random as u32,
            _ => 0,
        };
        self.run(src, dst, Random::Fixed(fixed));
        Ok(())
    }

    /// Converts with stochastic rounding, one random value per element (its low `width`
    /// bits are used, `width` being the conversion's). Other roundings ignore `random`.
    pub fn convert_stochastic<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        random: &[u32],
    ) -> Result<(), BulkError> {
        self.check(src, dst)?;
        check_random(src.len(), random.len())?;
        self.run(src, dst, Random::PerElement(random));
        Ok(())
    }

    /// [`Kernel::convert_stochastic`] with the random values in any word type at least as
    /// wide as the conversion's random width: `u8` for the 8-bit widths of the FP8/FP6/FP4
    /// forms, `u16` for `f16` (13 bits) and `bf16` (16 bits). The random stream is then a
    /// quarter or a half of the bytes of `u32` values, which is what bounds a stochastic
    /// conversion over data in memory. A word narrower than the width is refused
    /// ([`BulkError::Narrow`]); other roundings ignore `random`.
    pub fn convert_stochastic_words<S: Word, D: Word, R: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        random: &[R],
    ) -> Result<(), BulkError> {
        self.check(src, dst)?;
        check_random(src.len(), random.len())?;
        if let Direction::Stochastic { width, .. } = self.conversion.rounding.direction {
            if width > R::BITS {
                return Err(BulkError::Narrow {
                    format: "random value",
                    bits: width,
                    word: R::BITS,
                });
            }
        }
        // The specialised kernels read narrow random values directly (in the default
        // floating-point environment; else `run` takes the exact core).
        if let (Imp::Fast(plan), Some(src32), true) = (
            &self.imp,
            S::as_u32_slice(src),
            simd::float_environment_is_default(),
        ) {
            match plan.narrow {
                Some(fast::NarrowRs::U8(f)) => {
                    if let (Some(d), Some(r)) = (D::as_u8_slice_mut(dst), R::as_u8_slice(random)) {
                        f(src32, d, r, plan.knobs);
                        return Ok(());
                    }
                }
                Some(fast::NarrowRs::U16(f)) => {
                    if let (Some(d), Some(r)) = (D::as_u16_slice_mut(dst), R::as_u16_slice(random))
                    {
                        f(src32, d, r, plan.knobs);
                        return Ok(());
                    }
                }
                None => {}
            }
        }
        // Widened a block at a time into a buffer that stays in the first-level cache.
        const C: usize = 1024;
        let mut buf = [0u32; C];
        for ((s, d), r) in src.chunks(C).zip(dst.chunks_mut(C)).zip(random.chunks(C)) {
            let b = &mut buf[..r.len()];
            simd::widen(r, b);
            self.run(s, d, Random::PerElement(b));
        }
        Ok(())
    }

    /// Converts `src` into `dst`: a long slice as two interleaved streams ([`streams_for`];
    /// the specialised kernels interleave in [`run_fast`] or, writing their natural word,
    /// inside their instruction-set entry, `simd/`).
    fn run<S: Word, D: Word>(&self, src: &[S], dst: &mut [D], random: Random<'_>) {
        if self.needs_default_float_environment() && !simd::float_environment_is_default() {
            return self.run_exact(src, dst, random);
        }
        if matches!(self.imp, Imp::Fast(_)) {
            return self.run_one(src, dst, random);
        }
        for r in streams_for::<S, D>(src.len()) {
            let part = match random {
                Random::PerElement(rnd) => Random::PerElement(&rnd[r.clone()]),
                Random::Fixed(v) => Random::Fixed(v),
            };
            self.run_one(&src[r.clone()], &mut dst[r], part);
        }
    }

    fn run_one<S: Word, D: Word>(&self, src: &[S], dst: &mut [D], random: Random<'_>) {
        match &self.imp {
            Imp::Table(t) => {
                let mask = self.conversion.src.mask() as usize;
                macro_rules! look {
                    ($t:expr) => {
                        for (d, s) in dst.iter_mut().zip(src) {
                            *d = D::from_u64($t[s.to_u64() as usize & mask] as u64);
                        }
                    };
                }
                match t {
                    Table::U8(t) => look!(t),
                    Table::U16(t) => look!(t),
                    Table::U32(t) => look!(t),
                    Table::U64(t) => look!(t),
                }
            }
            Imp::Fast(plan) | Imp::Ue8m0(plan) => {
                let src = S::as_u32_slice(src).expect("f32 kernels take u32 words");
                match plan.f {
                    fast::FastFn::U8(f) => run_fast(f, D::as_u8_slice_mut, plan, src, dst, random),
                    fast::FastFn::U16(f) => {
                        run_fast(f, D::as_u16_slice_mut, plan, src, dst, random)
                    }
                    fast::FastFn::U32(f) => {
                        run_fast(f, D::as_u32_slice_mut, plan, src, dst, random)
                    }
                }
            }
            Imp::Small(p) => {
                let src = S::as_u32_slice(src).expect("f32 kernels take u32 words");
                match random {
                    Random::PerElement(r) => simd::small(p, src, dst, r),
                    // Deterministic directions read no random values.
                    Random::Fixed(_) if p.mode != small::RS => simd::small(p, src, dst, &[]),
                    Random::Fixed(r) => {
                        // Chunks keep the random buffer small and in cache.
                        let buf = [r; 1024];
                        for (s, d) in src.chunks(1024).zip(dst.chunks_mut(1024)) {
                            simd::small(p, s, d, &buf[..s.len()]);
                        }
                    }
                }
            }
            Imp::Int(p) => match S::as_u32_slice(src) {
                Some(src) => int::convert(p, src, dst),
                None => {
                    let mut buf = [0u32; 1024];
                    for (s, d) in src.chunks(1024).zip(dst.chunks_mut(1024)) {
                        let b = &mut buf[..s.len()];
                        for (b, s) in b.iter_mut().zip(s) {
                            *b = s.to_u64() as u32;
                        }
                        int::convert(p, b, d);
                    }
                }
            },
            Imp::Exact => self.run_exact(src, dst, random),
        }
    }

    /// Whether the kernel computes with the processor's floating-point instructions, whose
    /// results depend on its floating-point environment: the `f32` kernels (the tables and
    /// the exact core are integer code).
    fn needs_default_float_environment(&self) -> bool {
        !matches!(self.imp, Imp::Table(_) | Imp::Exact)
    }

    /// The exact core, compiled for the pair where it has an instance, over chunks of 64-bit
    /// words: the `Exact` strategy, and every strategy while the floating-point environment
    /// is not the default one.
    fn run_exact<S: Word, D: Word>(&self, src: &[S], dst: &mut [D], random: Random<'_>) {
        const CHUNK: usize = 256;
        let c = &self.conversion;
        let bits = c.compiled_bits();
        let stochastic = matches!(c.rounding.direction, Direction::Stochastic { .. });
        let (mut s64, mut r64, mut d64) = ([0u64; CHUNK], [0u64; CHUNK], [0u64; CHUNK]);
        for (k, (s, d)) in src.chunks(CHUNK).zip(dst.chunks_mut(CHUNK)).enumerate() {
            let n = s.len();
            for (w, x) in s64.iter_mut().zip(s) {
                *w = x.to_u64();
            }
            let random = match random {
                Random::PerElement(r) if stochastic => {
                    for (w, &x) in r64.iter_mut().zip(&r[k * CHUNK..k * CHUNK + n]) {
                        *w = x as u64;
                    }
                    Some(&r64[..n])
                }
                _ => None,
            };
            bits(c, &s64[..n], random, &mut d64[..n]);
            for (x, &w) in d.iter_mut().zip(&d64[..n]) {
                *x = D::from_u64(w);
            }
        }
    }
}

/// The index ranges of a slice of `n` elements from words `S` into words `D` in the order a
/// kernel converts them: for `n` of at least [`INTERLEAVE_MIN`], two streams, the first half
/// and the second, a tile of [`INTERLEAVE_TILE`] elements of each in turn (and the second
/// half's last, shorter part at the end); else, and for results as wide as their inputs
/// (`f32` → tf32 or a 32-bit integer), `0..n` at once.
///
/// Why: a conversion that streams from memory is bound by how far ahead the hardware
/// prefetcher fetches, which it does per stream, and a kernel of ~20 instructions per 16
/// elements keeps fewer loads in flight than a plain shift loop's ~3; two streams give the
/// prefetcher twice the reach. Results as wide as their inputs already move twice the bytes
/// per element, and four streams (two read, two written) slowed their near-roofline
/// kernels instead, hence the exception for full-width results.
/// In cache (1 Mi elements) the split does not help, hence the threshold.
pub(crate) fn streams_for<S: Word, D: Word>(
    n: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let min = if D::BITS >= S::BITS {
        usize::MAX
    } else {
        INTERLEAVE_MIN
    };
    two_streams_of(n, min, INTERLEAVE_TILE)
}

/// [`streams_for`]'s ranges with the threshold `min` and the tile `tile`.
fn two_streams_of(
    n: usize,
    min: usize,
    tile: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let half = if n < min { 0 } else { n / 2 / tile * tile };
    (0..half)
        .step_by(tile.max(1))
        .flat_map(move |i| [i..i + tile, half + i..half + i + tile])
        .chain(std::iter::once(2 * half..n))
}

/// Slices of at least this many elements (16 MiB of `f32`, beyond the caches of one core)
/// are converted as two streams ([`streams_for`]). The unit tests use a low threshold, so
/// that their slices of 2^12 elements and more (the exhaustive ones among them) go through
/// the two streams.
const INTERLEAVE_MIN: usize = if cfg!(test) { 1 << 12 } else { 1 << 22 };

/// Elements per tile of the two streams (2 KiB of `f32`: half a page).
const INTERLEAVE_TILE: usize = 512;

/// One random value per element.
fn check_random(elements: usize, random: usize) -> Result<(), BulkError> {
    if random != elements {
        return Err(BulkError::Random { elements, random });
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Random<'a> {
    Fixed(u32),
    PerElement(&'a [u32]),
}

/// Runs a specialised slice function `f` over its natural word `N`: directly when `D` is `N`,
/// else through a small buffer; a fixed random value is repeated from a small buffer.
fn run_fast<N: Word, D: Word>(
    f: fast::SliceFn<N>,
    natural: fn(&mut [D]) -> Option<&mut [N]>,
    plan: &fast::Plan,
    src: &[u32],
    dst: &mut [D],
    random: Random<'_>,
) {
    const C: usize = 1024;
    let fixed = match random {
        Random::Fixed(r) if plan.rs => Some([r; C]),
        _ => None,
    };
    let rnd = |i: usize, n: usize| -> &[u32] {
        match (&fixed, random) {
            (Some(buf), _) => &buf[..n],
            (None, Random::PerElement(r)) => &r[i..i + n],
            (None, Random::Fixed(_)) => &[],
        }
    };
    if let Some(d) = natural(&mut *dst) {
        if fixed.is_none() {
            // (The kernel takes a long slice as two streams itself.)
            f(src, d, rnd(0, src.len()), plan.knobs);
        } else {
            for r in streams_for::<u32, D>(src.len()) {
                let (s, d) = (&src[r.clone()], &mut d[r.clone()]);
                for (k, (s, d)) in s.chunks(C).zip(d.chunks_mut(C)).enumerate() {
                    f(s, d, rnd(r.start + k * C, s.len()), plan.knobs);
                }
            }
        }
        return;
    }
    let mut tmp = [N::default(); C];
    for r in streams_for::<u32, D>(src.len()) {
        let (s, d) = (&src[r.clone()], &mut dst[r.clone()]);
        for (k, (s, d)) in s.chunks(C).zip(d.chunks_mut(C)).enumerate() {
            let t = &mut tmp[..s.len()];
            f(s, t, rnd(r.start + k * C, s.len()), plan.knobs);
            for (d, t) in d.iter_mut().zip(t.iter()) {
                *d = D::from_u64(t.to_u64());
            }
        }
    }
}

/// The `ue8m0` kernel as a specialised slice function.
fn ue8m0_plan(p: &ue8m0::Params) -> fast::Plan {
    fn entry<const UP: bool, const P: u8>(src: &[u32], dst: &mut [u8], _: &[u32], _: fast::Knobs) {
        simd::ue8m0::<UP, P, u8>(src, dst)
    }
    macro_rules! pick {
        ($($p:expr),*) => {
            match (p.up, p.bits()) {
                $(
                    (false, $p) => entry::<false, $p> as fast::SliceFn<u8>,
                    (true, $p) => entry::<true, $p>,
                )*
                _ => unreachable!("satfinite and plain overflow saturation exclude each other"),
            }
        };
    }
    // `ue8m0::SF | ue8m0::OVSAT` never occurs.
    let f = pick!(0, 1, 2, 4, 5, 6);
    fast::Plan {
        f: fast::FastFn::U8(f),
        rs: false,
        narrow: None,
        knobs: fast::Knobs {
            w: 0,
            ftz_below: 0,
            relu: 0,
        },
    }
}

fn build_table(c: &Conversion) -> Table {
    let n = 1usize << c.src.width();
    let w = c.dst.width();
    let it = (0..n as u64).map(|b| c.apply(b).bits);
    if w <= 8 {
        Table::U8(it.map(|b| b as u8).collect())
    } else if w <= 16 {
        Table::U16(it.map(|b| b as u16).collect())
    } else if w <= 32 {
        Table::U32(it.map(|b| b as u32).collect())
    } else {
        Table::U64(it.collect())
    }
}

#[cfg(test)]
mod tests;
