//! # gpucvt-kernels
//!
//! Bulk conversion: one [`Conversion`] of `gpucvt-core` over whole slices, with the fastest
//! kernel that gives the exact core's bits.
//!
//! The layers, bottom up:
//!
//! - `portable/`: the kernels as plain safe Rust (`fast.rs`: `f32` → small float with the
//!   format, direction and policy as constants; `small.rs`: the same read at run time;
//!   `ue8m0.rs`; `int.rs`: `f32` → integers);
//! - `isa/`: [`InstructionSet`], [`ISA_VARIABLE`], and the one dispatch ladder that
//!   compiles each portable kernel for AVX-512, AVX2 and the baseline and runs the best the
//!   CPU has; the hand-written kernels on the CPU's own conversions (`avx512.rs`,
//!   `avx2.rs`); [`vectorized`] for other crates' loops. All of the crate's `unsafe` code is
//!   in this module, each use documented;
//! - `plan.rs`: which compiled instance serves one conversion;
//! - [`Kernel`] (this file): a table, a kernel or the exact core for a [`Conversion`];
//! - [`random`]: long runs of the random stream that stochastic rounding draws from;
//!   [`Widening`]: sources of at most 16 bits widened exactly to `f32` for the `f32` kernels.
//!
//! Which kernel serves a conversion:
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
//!   crate is that dispatch and those kernels, in `isa/`). The conversions PTX has —
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
//! use gpucvt_kernels::Kernel;
//! use gpucvt_core::{Conversion, Policy, Rounding, format::{F32, E4M3}};
//! let k = Kernel::new(Conversion::new(F32, E4M3, Rounding::RN,
//!     Policy { satfinite: true, ..Policy::default() }));
//! let src = [1.0f32.to_bits(), 300.0f32.to_bits(), f32::INFINITY.to_bits()];
//! let mut dst = [0u8; 3];
//! k.convert(&src, &mut dst).unwrap();
//! assert_eq!(dst, [0x38, 0x79, 0x7e]);
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod bulk;
mod isa;
mod plan;
mod portable;
pub mod random;
mod streams;
pub mod threads;
mod widen;
mod word;

pub use isa::{
    instruction_set, isa_limit, vectorized, vectorized_up_to, InstructionSet, IsaError,
    Vectorizable, ISA_VARIABLE,
};
pub use widen::Widening;
pub use word::Word;

use core::fmt;
use gpucvt_core::format::F32;
use gpucvt_core::round::Direction;
use gpucvt_core::Conversion;
use plan::{FastFn, NarrowRs, Plan, SliceFn};
use portable::{int, small, ue8m0};
use streams::streams_for;

/// `cvt.rp.satfinite.ue8m0x2.f32` of one `f32` bit pattern: the scale byte `2^(byte − 127)`
/// of MX block scaling with rp scales, for code that computes one per block in its own
/// loop. The same element function as the `ue8m0` slice kernel ([`Kernel`] of that
/// conversion), which the tests compare with the exact core.
///
/// ```
/// use gpucvt_kernels::ue8m0_rp_satfinite;
/// assert_eq!(ue8m0_rp_satfinite(0x3f80_0000), 127); // 1.0 = 2^0
/// assert_eq!(ue8m0_rp_satfinite(0x3f80_0001), 128); // just above 1.0 rounds up to 2^1
/// assert_eq!(ue8m0_rp_satfinite(0x7f80_0000), 254); // +inf saturates to 2^127
/// ```
#[inline(always)]
pub fn ue8m0_rp_satfinite(x: u32) -> u8 {
    ue8m0::convert::<true, { ue8m0::SF }>(x) as u8
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
    /// A worker thread panicked (a bug in gpucvt).
    Panicked,
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
            BulkError::Panicked => f.write_str("a conversion thread panicked (please report this)"),
        }
    }
}

impl std::error::Error for BulkError {}

/// A word of a slice that is not an encoding of its format: a format narrower than its
/// container (e2m1, e2m3, e3m2, ue4m3, a narrow integer in a byte) leaves the container's high
/// bits zero, and reading a word with any of them set as an encoding would drop them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrayBits {
    /// The format's name.
    pub format: &'static str,
    /// Its width in bits.
    pub bits: u32,
    /// The element's index (from the `first` given to [`check_encodings`]).
    pub index: u64,
    /// The word.
    pub word: u64,
}

impl fmt::Display for StrayBits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let StrayBits {
            format,
            bits,
            index,
            word,
        } = self;
        write!(
            f,
            "element {index} is 0x{word:x}, which is not a {format} encoding: {format} has \
             {bits} bits and the bits above them must be zero"
        )
    }
}

impl std::error::Error for StrayBits {}

/// Checks that every word of `src` is an encoding of `format` (no bit set above its width);
/// `first` is the index `src[0]` has in the whole array, for the error.
///
/// ```
/// use gpucvt_core::format::E2M1;
/// let e = gpucvt_kernels::check_encodings(&E2M1, &[0x7u8, 0x17], 10).unwrap_err();
/// assert_eq!((e.index, e.word), (11, 0x17));
/// assert!(gpucvt_kernels::check_encodings(&E2M1, &[0xfu8], 0).is_ok());
/// ```
pub fn check_encodings<S: Word>(
    format: &gpucvt_core::format::Format,
    src: &[S],
    first: u64,
) -> Result<(), StrayBits> {
    if format.width() >= S::BITS {
        return Ok(());
    }
    let stray = !format.mask();
    match src.iter().position(|w| w.to_u64() & stray != 0) {
        None => Ok(()),
        Some(i) => Err(StrayBits {
            format: format.name,
            bits: format.width(),
            index: first + i as u64,
            word: src[i].to_u64(),
        }),
    }
}

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
    Fast(Plan),
    /// Run-time parameters (`small.rs`): the rarer policies.
    Small(small::Params),
    Ue8m0(Plan),
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
                match Plan::new(&conversion.dst, &p) {
                    Some(plan) => Imp::Fast(plan),
                    None => Imp::Small(p),
                }
            } else if let Some(p) =
                ue8m0::Params::new(&conversion.dst, conversion.rounding, &conversion.policy)
            {
                Imp::Ue8m0(plan::ue8m0_plan(&p))
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
            isa::float_environment_is_default(),
        ) {
            match plan.narrow {
                Some(NarrowRs::U8(f)) => {
                    if let (Some(d), Some(r)) = (D::as_u8_slice_mut(dst), R::as_u8_slice(random)) {
                        f(src32, d, r, plan.knobs);
                        return Ok(());
                    }
                }
                Some(NarrowRs::U16(f)) => {
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
            isa::widen(r, b);
            self.run(s, d, Random::PerElement(b));
        }
        Ok(())
    }

    /// Converts `src` into `dst`: a long slice as two interleaved streams ([`streams_for`];
    /// the specialised kernels interleave in [`run_fast`] or, writing their natural word,
    /// inside their instruction-set entry, `isa/`).
    fn run<S: Word, D: Word>(&self, src: &[S], dst: &mut [D], random: Random<'_>) {
        if self.needs_default_float_environment() && !isa::float_environment_is_default() {
            return self.run_exact(src, dst, random);
        }
        if matches!(self.imp, Imp::Fast(_) | Imp::Ue8m0(_) | Imp::Small(_))
            && S::as_u32_slice(src).is_none()
        {
            // The f32 kernels read `u32` words; wider ones (`check` refused narrower) are
            // narrowed a block at a time. Their high bits are not part of an f32 encoding
            // and are ignored, as the other paths ignore bits above a format's width.
            const C: usize = 1024;
            let mut buf = [0u32; C];
            for (k, (s, d)) in src.chunks(C).zip(dst.chunks_mut(C)).enumerate() {
                let b = &mut buf[..s.len()];
                for (w, x) in b.iter_mut().zip(s) {
                    *w = x.to_u64() as u32;
                }
                let part = match random {
                    Random::PerElement(r) => Random::PerElement(&r[k * C..k * C + s.len()]),
                    Random::Fixed(v) => Random::Fixed(v),
                };
                self.run(b, d, part);
            }
            return;
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
                    FastFn::U8(f) => run_fast(f, D::as_u8_slice_mut, plan, src, dst, random),
                    FastFn::U16(f) => run_fast(f, D::as_u16_slice_mut, plan, src, dst, random),
                    FastFn::U32(f) => run_fast(f, D::as_u32_slice_mut, plan, src, dst, random),
                }
            }
            Imp::Small(p) => {
                let src = S::as_u32_slice(src).expect("f32 kernels take u32 words");
                match random {
                    Random::PerElement(r) => isa::small(p, src, dst, r),
                    // Deterministic directions read no random values.
                    Random::Fixed(_) if p.mode != small::RS => isa::small(p, src, dst, &[]),
                    Random::Fixed(r) => {
                        // Chunks keep the random buffer small and in cache.
                        let buf = [r; 1024];
                        for (s, d) in src.chunks(1024).zip(dst.chunks_mut(1024)) {
                            isa::small(p, s, d, &buf[..s.len()]);
                        }
                    }
                }
            }
            Imp::Int(p) => match S::as_u32_slice(src) {
                Some(src) => isa::convert_int(p, src, dst),
                None => {
                    let mut buf = [0u32; 1024];
                    for (s, d) in src.chunks(1024).zip(dst.chunks_mut(1024)) {
                        let b = &mut buf[..s.len()];
                        for (b, s) in b.iter_mut().zip(s) {
                            *b = s.to_u64() as u32;
                        }
                        isa::convert_int(p, b, d);
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
    f: SliceFn<N>,
    natural: fn(&mut [D]) -> Option<&mut [N]>,
    plan: &Plan,
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
