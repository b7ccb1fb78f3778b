//! One PTX `cvt` form over whole slices, with the fastest correct kernel.
//!
//! [`CvtKernel`] takes any `cvt` form (scalar, the packed `x2`/`x4` forms, stochastic
//! rounding with a caller-supplied stream of random bits, `.scaled` forms with one scale
//! operand for the whole slice, `cvt.pack`) and runs it over slices of operands:
//!
//! - forms whose lanes all perform one core conversion (everything but `.scaled` and
//!   `cvt.pack`) take their lanes out of the operands, convert each lane with a
//!   [`gpucvt_kernels::Kernel`] (lookup tables for sources of at most 16 bits, vectorised
//!   integer code for `f32` sources, the exact core otherwise) and pack the results;
//! - the others evaluate each instruction with [`crate::ptx::eval::evaluate_bits`].
//!
//! [`CvtKernel::convert_par`] splits long slices across rayon's threads.
//!
//! # Operand layout
//!
//! One destination word per instruction. The sources of instruction `i`:
//!
//! - a scalar source type and a scalar destination: `src[i]`;
//! - a packed source type (`f16x2`, `e4m3x2`, …): one packed word `src[i]`, lanes as PTX
//!   packs them (the first lane in the high bits);
//! - a scalar source type and a packed destination (`cvt.rn.satfinite.e4m3x2.f32 d, a, b`):
//!   `L` consecutive sources per instruction. In [`Order::Instruction`] they are the
//!   operands in the instruction's order (`a`, `b`, …, so the first lands in the high
//!   bits); in [`Order::Memory`] the order is reversed, so that the destination words,
//!   stored little-endian, hold the results in the order of the sources. Memory order is
//!   what a tensor in memory needs: `[x0, x1] → bytes [cvt(x0), cvt(x1)]`.
//!
//! `.rs` forms take one 32-bit `rbits` operand per instruction, shared out among the lanes
//! exactly as the instruction does.
//!
//! ```
//! use gpucvt::ptx::slices::{CvtKernel, Order};
//! use gpucvt::ptx::parse_instruction;
//! let form = parse_instruction("cvt.rn.satfinite.e4m3x2.f32").unwrap().form;
//! let k = CvtKernel::new(&form, Order::Memory).unwrap();
//! let src = [1.0f32.to_bits(), 300.0f32.to_bits()];
//! let mut dst = [0u16; 1];
//! k.convert(&src, &mut dst).unwrap();
//! assert_eq!(dst[0].to_le_bytes(), [0x38, 0x79]); // 1.0, then 300 → 288 (satfinite)
//! ```

use crate::kernels::{vectorized, BulkError, Kernel, Strategy, Vectorizable, Word};
use crate::ptx::eval::{evaluate_bits, lane_conversion, lane_rbits_place, EvalError};
use crate::ptx::form::{CvtForm, RoundMod};
use core::fmt;
use rayon::prelude::*;

pub mod verify;

/// How the scalar sources of a packed-destination form are grouped (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Operand order: `a` first, landing in the high bits of the destination.
    #[default]
    Instruction,
    /// Little-endian memory order: the first source lands in the low bits.
    Memory,
}

/// Why a slice conversion was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CvtBulkError {
    /// The form cannot be evaluated (see [`EvalError`]).
    Form(EvalError),
    /// The slices do not fit together or the words are too narrow.
    Slices(BulkError),
    /// The number of sources is not the instruction count times the sources per instruction.
    Sources {
        /// Sources given.
        sources: usize,
        /// Sources each instruction takes.
        per_instruction: usize,
        /// Destination words (instructions).
        instructions: usize,
    },
    /// An `rbits` slice was given to a form without `.rs`, or none to a form with it, or its
    /// length is not the instruction count.
    Rbits {
        /// Whether the form uses `.rs`.
        stochastic: bool,
        /// `rbits` values given (`None`: no slice).
        given: Option<usize>,
        /// Instructions.
        instructions: usize,
    },
    /// An instruction of the exact path failed (an operand too wide for its type).
    Operand {
        /// The instruction's index.
        index: usize,
        /// What went wrong.
        error: EvalError,
    },
}

impl fmt::Display for CvtBulkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CvtBulkError::Form(e) => e.fmt(f),
            CvtBulkError::Slices(e) => e.fmt(f),
            CvtBulkError::Sources {
                sources,
                per_instruction,
                instructions,
            } => write!(
                f,
                "{sources} source values for {instructions} results: each result takes {per_instruction}"
            ),
            CvtBulkError::Rbits {
                stochastic: true,
                given,
                instructions,
            } => write!(
                f,
                ".rs needs one rbits value per result: {instructions} results, {} rbits values",
                given.unwrap_or(0)
            ),
            CvtBulkError::Rbits { .. } => {
                write!(f, "rbits values were given but the form has no .rs rounding")
            }
            CvtBulkError::Operand { index, error } => write!(f, "instruction {index}: {error}"),
        }
    }
}

impl std::error::Error for CvtBulkError {}

impl From<EvalError> for CvtBulkError {
    fn from(e: EvalError) -> Self {
        CvtBulkError::Form(e)
    }
}

impl From<BulkError> for CvtBulkError {
    fn from(e: BulkError) -> Self {
        CvtBulkError::Slices(e)
    }
}

enum Plan {
    /// Every lane performs `kernel`'s conversion.
    Lanes(Kernel),
    /// Each instruction through the PTX evaluator (with the operands appended after the
    /// sources: the scale operand of `.scaled` forms, `c` of `cvt.pack`).
    Exact { extra: Vec<u64> },
}

/// Which path a [`CvtKernel`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Lanes converted by a core bulk kernel of this strategy.
    Lanes(crate::kernels::Strategy),
    /// Each instruction evaluated exactly.
    Exact,
}

/// One `cvt` form, ready to run over slices (see the module documentation).
pub struct CvtKernel {
    form: CvtForm,
    order: Order,
    plan: Plan,
    /// Destination lanes.
    lanes: usize,
    /// Source words per instruction.
    per_instruction: usize,
    /// Whether the source operand is a packed word.
    packed_src: bool,
    src_lane_bits: u32,
    dst_lane_bits: u32,
    dst_lane_mask: u64,
    stochastic: bool,
}

impl fmt::Debug for CvtKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CvtKernel")
            .field("form", &self.form.spelling())
            .field("order", &self.order)
            .field("path", &self.path())
            .finish()
    }
}

/// Instructions per block of the lane path (the lane buffers stay in the L1 cache).
const BLOCK: usize = 2048;

/// Instructions below which [`CvtKernel::convert_par`] stays on the calling thread.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;

/// Where the random bits of each source of a group are: (shift, width) for the first
/// `lanes` of `at`.
#[derive(Clone, Copy)]
struct Places {
    at: [(u32, u32); 4],
    lanes: usize,
}

impl Places {
    fn as_slice(&self) -> &[(u32, u32)] {
        &self.at[..self.lanes]
    }
}

/// Converts `ins` (at most [`BLOCK`] sources) into `out` with the random values of `rbits`,
/// one word per group of `places.len()` sources, spread into the sources' order
/// ([`spread`]) in the narrowest word of their width.
fn convert_spread<I: Word, O: Word>(
    k: &Kernel,
    ins: &[I],
    out: &mut [O],
    rbits: &[u32],
    places: &[(u32, u32)],
) -> Result<(), BulkError> {
    fn with<R: Word, I: Word, O: Word>(
        k: &Kernel,
        ins: &[I],
        out: &mut [O],
        rbits: &[u32],
        places: &[(u32, u32)],
    ) -> Result<(), BulkError> {
        let mut rnd = [R::default(); BLOCK];
        let rnd = &mut rnd[..ins.len()];
        spread::<R>(rnd, rbits, places);
        k.convert_stochastic_words(ins, out, rnd)
    }
    match places[0].1 {
        0..=8 => with::<u8, I, O>(k, ins, out, rbits, places),
        9..=16 => with::<u16, I, O>(k, ins, out, rbits, places),
        _ => with::<u32, I, O>(k, ins, out, rbits, places),
    }
}

/// The random values of the sources of groups of `places.len()` (1, 2 or 4), in the
/// sources' order: source `j` of group `g` takes the `places[j]` (shift, width) bits of
/// `rbits[g]`. Compiled for the best instruction set the CPU has.
fn spread<R: Word>(rnd: &mut [R], rbits: &[u32], places: &[(u32, u32)]) {
    struct Spread<'a, R, const L: usize> {
        rnd: &'a mut [R],
        rbits: &'a [u32],
        places: [(u32, u32); L],
    }
    impl<R: Word, const L: usize> Vectorizable for Spread<'_, R, L> {
        type Output = ();
        #[inline(always)]
        fn run(self) {
            // The group's length a constant here, so that the loop vectorizes.
            spread_groups(self.rnd, self.rbits, &self.places);
        }
    }
    match *places {
        [a] => vectorized(Spread {
            rnd,
            rbits,
            places: [a],
        }),
        [a, b] => vectorized(Spread {
            rnd,
            rbits,
            places: [a, b],
        }),
        [a, b, c, e] => vectorized(Spread {
            rnd,
            rbits,
            places: [a, b, c, e],
        }),
        _ => spread_groups(rnd, rbits, places),
    }
}

/// [`spread`]'s loop.
#[inline(always)]
fn spread_groups<R: Word>(rnd: &mut [R], rbits: &[u32], places: &[(u32, u32)]) {
    for (group, &bits) in rnd.chunks_exact_mut(places.len()).zip(rbits) {
        for (x, &(shift, width)) in group.iter_mut().zip(places) {
            *x = R::from_u32((bits >> shift) & mask(width) as u32);
        }
    }
}

/// [`pack`] with the lane width a constant where it is 4, 8 or 16 bits (every PTX packed
/// form), compiled for the best instruction set the CPU has.
#[inline(always)]
fn pack_lanes<const L: usize, D: Word, LO: Word>(
    dst: &mut [D],
    lanes: &[LO],
    slot: u32,
    mask: u64,
    memory: bool,
) {
    macro_rules! fixed {
        ($slot:expr, $memory:expr) => {
            vectorized(Pack::<L, { $slot }, { $memory }, D, LO> { dst, lanes, mask })
        };
    }
    match (slot, memory) {
        (4, true) => fixed!(4, true),
        (8, true) => fixed!(8, true),
        (16, true) => fixed!(16, true),
        (4, false) => fixed!(4, false),
        (8, false) => fixed!(8, false),
        (16, false) => fixed!(16, false),
        _ => pack::<L, D, LO>(dst, lanes, slot, mask, memory),
    }
}

/// [`pack`] for a constant lane width `SLOT` and order `MEMORY`.
struct Pack<'a, const L: usize, const SLOT: u32, const MEMORY: bool, D, LO> {
    dst: &'a mut [D],
    lanes: &'a [LO],
    mask: u64,
}

impl<const L: usize, const SLOT: u32, const MEMORY: bool, D: Word, LO: Word> Vectorizable
    for Pack<'_, L, SLOT, MEMORY, D, LO>
{
    type Output = ();
    #[inline(always)]
    fn run(self) {
        // The lane width and order constants here, so that the loop vectorizes.
        pack::<L, D, LO>(self.dst, self.lanes, SLOT, self.mask, MEMORY);
    }
}

/// Packs groups of `L` lane results (in source order) into destination words: the first
/// of a group in the low bits (`memory`) or in the high bits (operand order).
#[inline(always)]
fn pack<const L: usize, D: Word, LO: Word>(
    dst: &mut [D],
    lanes: &[LO],
    slot: u32,
    mask: u64,
    memory: bool,
) {
    for (w, o) in dst.iter_mut().zip(lanes.chunks_exact(L)) {
        let mut v = 0u64;
        for (j, x) in o.iter().enumerate() {
            let place = if memory { j } else { L - 1 - j };
            v |= (x.to_u64() & mask) << (slot * place as u32);
        }
        *w = D::from_u64(v);
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl CvtKernel {
    /// Prepares `form`. `.scaled` forms use the scale operand `0x7f7f` (×1); see
    /// [`CvtKernel::with_scale`].
    pub fn new(form: &CvtForm, order: Order) -> Result<CvtKernel, CvtBulkError> {
        Self::build(form, order, None)
    }

    /// Prepares a `.scaled` form (or an `s2f6` form) with one scale operand for every
    /// instruction, or `cvt.pack` with one `c` operand.
    pub fn with_scale(form: &CvtForm, order: Order, scale: u64) -> Result<CvtKernel, CvtBulkError> {
        Self::build(form, order, Some(scale))
    }

    fn build(form: &CvtForm, order: Order, extra: Option<u64>) -> Result<CvtKernel, CvtBulkError> {
        let roles = crate::ptx::eval::operand_roles(form);
        use crate::ptx::eval::Role;
        let sources = roles
            .iter()
            .filter(|r| matches!(r, Role::A | Role::B | Role::E | Role::F))
            .count();
        let stochastic = form.rounding == Some(RoundMod::Rs);
        let packed_src = form.atype.lanes() > 1;
        let lanes = form.dtype.lanes() as usize;
        let plan = match lane_conversion(form) {
            Ok(c) if !form.pack => Plan::Lanes(Kernel::new(c)),
            _ => {
                // Check the form evaluates at all, with zero operands.
                let mut ops = vec![0u64; roles.len()];
                let extra: Vec<u64> = roles
                    .iter()
                    .filter(|r| matches!(r, Role::Scale | Role::C))
                    .map(|r| match (r, extra) {
                        (_, Some(v)) => v,
                        (Role::Scale, None) => {
                            if crate::ptx::eval::role_bits(form, *r) == 8 {
                                0x7f
                            } else {
                                0x7f7f
                            }
                        }
                        _ => 0,
                    })
                    .collect();
                let n = ops.len();
                ops[n - extra.len()..].copy_from_slice(&extra);
                evaluate_bits(form, &ops)?;
                Plan::Exact { extra }
            }
        };
        let src_lane_bits = form.atype.lane_bits();
        let dst_lane_bits = form.dtype.lane_bits();
        Ok(CvtKernel {
            form: *form,
            order,
            plan,
            lanes,
            per_instruction: sources.max(1),
            packed_src,
            src_lane_bits,
            dst_lane_bits,
            dst_lane_mask: mask(
                form.dtype
                    .lane_format()
                    .map_or(dst_lane_bits, |f| f.width()),
            ),
            stochastic,
        })
    }

    /// The form.
    pub fn form(&self) -> &CvtForm {
        &self.form
    }

    /// The path in use.
    pub fn path(&self) -> Path {
        match &self.plan {
            Plan::Lanes(k) => Path::Lanes(k.strategy()),
            Plan::Exact { .. } => Path::Exact,
        }
    }

    /// The operands after the sources and `rbits` that the kernel fixes for every instruction
    /// (the scale operand of `.scaled` forms, `c` of `cvt.pack`); empty on the lane path.
    pub(crate) fn extra_operands(&self) -> &[u64] {
        match &self.plan {
            Plan::Exact { extra } => extra,
            Plan::Lanes(_) => &[],
        }
    }

    /// Source words each instruction takes (`L` for a scalar source type and a packed
    /// destination, else 1).
    pub fn sources_per_result(&self) -> usize {
        self.per_instruction
    }

    /// Whether the form takes `rbits` (`.rs`).
    pub fn is_stochastic(&self) -> bool {
        self.stochastic
    }

    /// Width in bits of one source word.
    pub fn source_bits(&self) -> u32 {
        if self.packed_src {
            self.form.atype.bits()
        } else {
            self.form
                .atype
                .lane_format()
                .map_or(self.form.atype.bits(), |f| f.width())
        }
    }

    /// Width in bits of one destination word.
    pub fn result_bits(&self) -> u32 {
        if self.form.pack {
            // `d` is a `.b32` register whatever the lanes' type (`ptx-cvt.md` §4).
            32
        } else if self.lanes > 1 {
            self.form.dtype.bits()
        } else {
            self.form
                .dtype
                .lane_format()
                .map_or(self.form.dtype.bits(), |f| f.width())
        }
    }

    fn check<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &[D],
        rbits: Option<&[u32]>,
    ) -> Result<(), CvtBulkError> {
        if src.len() != dst.len() * self.per_instruction {
            return Err(CvtBulkError::Sources {
                sources: src.len(),
                per_instruction: self.per_instruction,
                instructions: dst.len(),
            });
        }
        for (name, bits, word) in [
            (self.form.atype.name(), self.source_bits(), S::BITS),
            (self.form.dtype.name(), self.result_bits(), D::BITS),
        ] {
            if bits > word {
                return Err(BulkError::Narrow {
                    format: name,
                    bits,
                    word,
                }
                .into());
            }
        }
        let ok = match rbits {
            Some(r) => self.stochastic && r.len() == dst.len(),
            None => !self.stochastic,
        };
        if !ok {
            return Err(CvtBulkError::Rbits {
                stochastic: self.stochastic,
                given: rbits.map(|r| r.len()),
                instructions: dst.len(),
            });
        }
        Ok(())
    }

    /// Converts: `dst[i]` is instruction `i`'s result (see the module docs for where its
    /// sources are). Not for `.rs` forms: use [`CvtKernel::convert_rs`].
    pub fn convert<S: Word, D: Word>(&self, src: &[S], dst: &mut [D]) -> Result<(), CvtBulkError> {
        self.check(src, dst, None)?;
        self.run(src, dst, None)
    }

    /// Converts an `.rs` form: `rbits[i]` is instruction `i`'s random-bits operand.
    pub fn convert_rs<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        rbits: &[u32],
    ) -> Result<(), CvtBulkError> {
        self.check(src, dst, Some(rbits))?;
        self.run(src, dst, Some(rbits))
    }

    /// [`CvtKernel::convert`] or [`CvtKernel::convert_rs`] (`rbits` for `.rs` forms only)
    /// across rayon's threads when there are at least [`PARALLEL_THRESHOLD`] results.
    /// Run it inside a `rayon::ThreadPool::install` to choose the thread count.
    pub fn convert_par<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        rbits: Option<&[u32]>,
    ) -> Result<(), CvtBulkError> {
        self.check(src, dst, rbits)?;
        if dst.len() < PARALLEL_THRESHOLD {
            return self.run(src, dst, rbits);
        }
        let chunk = (dst.len() / (4 * rayon::current_num_threads()).max(1))
            .clamp(BLOCK, PARALLEL_THRESHOLD * 4)
            .next_multiple_of(BLOCK);
        let per = self.per_instruction;
        dst.par_chunks_mut(chunk)
            .enumerate()
            .try_for_each(|(i, d)| {
                let start = i * chunk;
                let s = &src[start * per..(start + d.len()) * per];
                let r = rbits.map(|r| &r[start..start + d.len()]);
                self.run(s, d, r).map_err(|e| match e {
                    CvtBulkError::Operand { index, error } => CvtBulkError::Operand {
                        index: index + start,
                        error,
                    },
                    e => e,
                })
            })
    }

    fn run<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        rbits: Option<&[u32]>,
    ) -> Result<(), CvtBulkError> {
        match &self.plan {
            Plan::Exact { extra } => self.run_exact(extra, src, dst, rbits),
            Plan::Lanes(k) => {
                // The f32 kernels read `u32` words; other word types go through the blocks.
                let direct = S::BITS == 32
                    || !matches!(
                        k.strategy(),
                        Strategy::F32Small | Strategy::F32Ue8m0 | Strategy::F32Int
                    );
                if self.lanes == 1 && !self.packed_src && !self.stochastic && direct {
                    k.convert(src, dst)?;
                    return Ok(());
                }
                if let Some(done) = self.run_in_place(k, src, dst, rbits) {
                    return done;
                }
                for (b, d) in dst.chunks_mut(BLOCK).enumerate() {
                    let start = b * BLOCK;
                    let s = &src
                        [start * self.per_instruction..(start + d.len()) * self.per_instruction];
                    let r = rbits.map(|r| &r[start..start + d.len()]);
                    self.run_block(k, s, d, r)?;
                }
                Ok(())
            }
        }
    }

    /// x2/x4 forms of `f32` sources whose lanes fill whole bytes or halves of the result
    /// word in memory order (e4m3x2, f16x2, e4m3x4 …): the results' bytes are the lane
    /// results one after another (on a little-endian machine), so the kernel writes them
    /// straight into `dst` viewed as bytes or `u16`s, no packing. `None` where that does not
    /// apply.
    fn run_in_place<S: Word, D: Word>(
        &self,
        k: &Kernel,
        src: &[S],
        dst: &mut [D],
        rbits: Option<&[u32]>,
    ) -> Option<Result<(), CvtBulkError>> {
        let slot = self.dst_lane_bits;
        let lanes = self.lanes;
        if cfg!(target_endian = "big")
            || self.order != Order::Memory
            || self.packed_src
            || !matches!(lanes, 2 | 4)
            || self.dst_lane_mask != mask(slot)
            || D::BITS != slot * lanes as u32
        {
            return None;
        }
        let src = S::as_u32_slice(src)?;
        enum Words<'a> {
            U8(&'a mut [u8]),
            U16(&'a mut [u16]),
        }
        let words = match (slot, D::BITS) {
            (8, 16) => Words::U8(bytemuck::cast_slice_mut(D::as_u16_slice_mut(dst)?)),
            (8, 32) => Words::U8(bytemuck::cast_slice_mut(D::as_u32_slice_mut(dst)?)),
            (16, 32) => Words::U16(bytemuck::cast_slice_mut(D::as_u32_slice_mut(dst)?)),
            _ => return None,
        };
        let Some(rbits) = rbits else {
            let done = match words {
                Words::U8(d) => k.convert(src, d),
                Words::U16(d) => k.convert(src, d),
            };
            return Some(done.map_err(CvtBulkError::from));
        };
        // Stochastic: block by block, the random values of the sources in their order.
        let places = self.random_places()?;
        let places = places.as_slice();
        fn blocks<O: Word>(
            k: &Kernel,
            src: &[u32],
            dst: &mut [O],
            rbits: &[u32],
            places: &[(u32, u32)],
        ) -> Result<(), CvtBulkError> {
            let per = places.len();
            for (c, (s, d)) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)).enumerate() {
                let r = &rbits[c * (BLOCK / per)..c * (BLOCK / per) + s.len() / per];
                convert_spread(k, s, d, r, places)?;
            }
            Ok(())
        }
        Some(match words {
            Words::U8(d) => blocks(k, src, d, rbits, places),
            Words::U16(d) => blocks(k, src, d, rbits, places),
        })
    }

    /// Where each source of a group (by its place in memory, in this kernel's order) finds
    /// its random bits, (shift, width), if every lane's are of the same width (as in every
    /// PTX form) and there are at most four lanes.
    fn random_places(&self) -> Option<Places> {
        let lanes = self.lanes;
        let mut places = Places {
            at: [(0, 0); 4],
            lanes,
        };
        for (j, p) in places.at.get_mut(..lanes)?.iter_mut().enumerate() {
            let lane = match self.order {
                Order::Memory => lanes - 1 - j,
                Order::Instruction => j,
            };
            *p = lane_rbits_place(&self.form, lane);
        }
        let at = places.as_slice();
        at.iter().all(|&(_, w)| w == at[0].1).then_some(places)
    }

    /// One block through the lane path, with lane buffers of the words the core kernels
    /// read and write directly.
    fn run_block<S: Word, D: Word>(
        &self,
        k: &Kernel,
        src: &[S],
        dst: &mut [D],
        rbits: Option<&[u32]>,
    ) -> Result<(), CvtBulkError> {
        let out_bits = self.result_lane_width();
        if self.src_lane_bits > 32 {
            return self.lanes_through::<S, D, u64, u64>(k, src, dst, rbits);
        }
        match out_bits {
            0..=8 => self.lanes_through::<S, D, u32, u8>(k, src, dst, rbits),
            9..=16 => self.lanes_through::<S, D, u32, u16>(k, src, dst, rbits),
            17..=32 => self.lanes_through::<S, D, u32, u32>(k, src, dst, rbits),
            _ => self.lanes_through::<S, D, u32, u64>(k, src, dst, rbits),
        }
    }

    fn result_lane_width(&self) -> u32 {
        self.dst_lane_mask.count_ones()
    }

    /// Lane inputs out (as `LI` words), one kernel call per lane (results as `LO` words,
    /// random values in the narrowest word their width fits), results packed in.
    fn lanes_through<S: Word, D: Word, LI: Word, LO: Word>(
        &self,
        k: &Kernel,
        src: &[S],
        dst: &mut [D],
        rbits: Option<&[u32]>,
    ) -> Result<(), CvtBulkError> {
        let n = dst.len();
        let mut lane_in = [LI::default(); BLOCK];
        let mut lane_out = [LO::default(); BLOCK];
        let lanes = self.lanes;
        let slot = self.dst_lane_bits;
        let memory = self.order == Order::Memory;
        let random_places = rbits.and(self.random_places());
        if !self.packed_src && (rbits.is_none() || random_places.is_some()) {
            // Scalar sources and one conversion for every lane: the sources in one kernel
            // call, in their order (with their random values in the same order), then packed.
            let per_chunk = BLOCK / lanes;
            for (c, (s, d)) in src
                .chunks(per_chunk * lanes)
                .zip(dst.chunks_mut(per_chunk))
                .enumerate()
            {
                let m = s.len();
                let out = &mut lane_out[..m];
                // `f32` sources go to the kernel as they are; other words through `u32` or
                // `u64` lane words.
                macro_rules! convert {
                    ($ins:expr) => {{
                        let ins = $ins;
                        match (rbits, &random_places) {
                            (Some(r), Some(places)) => {
                                let r = &r[c * per_chunk..c * per_chunk + d.len()];
                                convert_spread(k, ins, out, r, places.as_slice())?
                            }
                            _ => k.convert(ins, out)?,
                        }
                    }};
                }
                match S::as_u32_slice(s) {
                    Some(words) => convert!(words),
                    None => {
                        for (x, y) in lane_in[..m].iter_mut().zip(s) {
                            *x = LI::from_u64(y.to_u64());
                        }
                        convert!(&lane_in[..m])
                    }
                }
                let mask = self.dst_lane_mask;
                match lanes {
                    2 => pack_lanes::<2, D, LO>(d, &lane_out[..m], slot, mask, memory),
                    4 => pack_lanes::<4, D, LO>(d, &lane_out[..m], slot, mask, memory),
                    _ => pack_lanes::<1, D, LO>(d, &lane_out[..m], slot, mask, memory),
                }
            }
            return Ok(());
        }
        let src_mask = mask(self.src_lane_bits);
        for lane in 0..lanes {
            // Lane `lane` counts from the most significant.
            let ins = &mut lane_in[..n];
            if self.packed_src {
                let shift = self.src_lane_bits * (lanes - 1 - lane) as u32;
                for (x, s) in ins.iter_mut().zip(src) {
                    *x = LI::from_u64((s.to_u64() >> shift) & src_mask);
                }
            } else {
                let j = match self.order {
                    Order::Instruction => lane,
                    Order::Memory => lanes - 1 - lane,
                };
                for (x, s) in ins.iter_mut().zip(src.iter().skip(j).step_by(lanes)) {
                    *x = LI::from_u64(s.to_u64());
                }
            }
            let out = &mut lane_out[..n];
            match rbits {
                Some(r) => {
                    let (shift, width) = lane_rbits_place(&self.form, lane);
                    let m = mask(width) as u32;
                    macro_rules! with_random {
                        ($r:ty) => {{
                            let mut rnd = [<$r>::default(); BLOCK];
                            for (x, &bits) in rnd[..n].iter_mut().zip(r) {
                                *x = ((bits >> shift) & m) as $r;
                            }
                            k.convert_stochastic_words(ins, out, &rnd[..n])?
                        }};
                    }
                    match width {
                        0..=8 => with_random!(u8),
                        9..=16 => with_random!(u16),
                        _ => with_random!(u32),
                    }
                }
                None => k.convert(ins, out)?,
            }
            let shift = slot * (lanes - 1 - lane) as u32;
            if lane == 0 {
                for (d, o) in dst.iter_mut().zip(out.iter()) {
                    *d = D::from_u64((o.to_u64() & self.dst_lane_mask) << shift);
                }
            } else {
                for (d, o) in dst.iter_mut().zip(out.iter()) {
                    *d = D::from_u64(d.to_u64() | (o.to_u64() & self.dst_lane_mask) << shift);
                }
            }
        }
        Ok(())
    }

    fn run_exact<S: Word, D: Word>(
        &self,
        extra: &[u64],
        src: &[S],
        dst: &mut [D],
        rbits: Option<&[u32]>,
    ) -> Result<(), CvtBulkError> {
        let per = self.per_instruction;
        let mut ops = [0u64; 8];
        for (i, d) in dst.iter_mut().enumerate() {
            let mut n = 0;
            for j in 0..per {
                let j = match self.order {
                    Order::Memory if !self.packed_src => per - 1 - j,
                    _ => j,
                };
                ops[n] = src[i * per + j].to_u64();
                n += 1;
            }
            if let Some(r) = rbits {
                ops[n] = r[i] as u64;
                n += 1;
            }
            for &e in extra {
                ops[n] = e;
                n += 1;
            }
            let (bits, _) = evaluate_bits(&self.form, &ops[..n])
                .map_err(|error| CvtBulkError::Operand { index: i, error })?;
            *d = D::from_u64(bits);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::eval::evaluate_bits;
    use crate::ptx::parse_instruction;
    use crate::ptx::types::PtxType;

    fn is_packed(t: PtxType) -> bool {
        t.lanes() > 1
    }

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// `k` over `u32` sources into words `D`, on one thread and across threads, against
    /// `want` (the results in `u64` words).
    fn natural<D: Word>(k: &CvtKernel, src: &[u32], rbits: &[u32], want: &[u64], text: &str) {
        let mut one = vec![D::default(); want.len()];
        let mut par = vec![D::default(); want.len()];
        if k.is_stochastic() {
            k.convert_rs(src, &mut one, rbits).unwrap();
            k.convert_par(src, &mut par, Some(rbits)).unwrap();
        } else {
            k.convert(src, &mut one).unwrap();
            k.convert_par(src, &mut par, None).unwrap();
        }
        let widen = |v: &[D]| v.iter().map(|w| w.to_u64()).collect::<Vec<_>>();
        assert_eq!(widen(&one), want, "{text}: in {}-bit words", D::BITS);
        assert_eq!(
            widen(&par),
            want,
            "{text}: in {}-bit words, parallel",
            D::BITS
        );
    }

    /// Every path against the PTX evaluator, instruction by instruction, on random and
    /// special operands, in both orders and in parallel.
    fn agree(text: &str, n: usize) {
        let form = parse_instruction(text).unwrap().form;
        for order in [Order::Instruction, Order::Memory] {
            let k = CvtKernel::new(&form, order).unwrap();
            let per = k.sources_per_result();
            let sbits = k.source_bits();
            let mut st = 0x1234_5678_9abc_def1u64 ^ n as u64;
            let specials = [
                0u64,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x8000_0000,
                1,
                0x7f7f_ffff,
            ];
            let src: Vec<u64> = (0..n * per)
                .map(|i| {
                    let r = xorshift(&mut st);
                    let v = if i % 7 == 0 {
                        specials[i / 7 % specials.len()]
                    } else {
                        r
                    };
                    v & mask(sbits)
                })
                .collect();
            let rbits: Vec<u32> = (0..n).map(|_| xorshift(&mut st) as u32).collect();
            let mut dst = vec![0u64; n];
            let mut par = vec![0u64; n];
            if k.is_stochastic() {
                k.convert_rs(&src, &mut dst, &rbits).unwrap();
                k.convert_par(&src, &mut par, Some(&rbits)).unwrap();
            } else {
                k.convert(&src, &mut dst).unwrap();
                k.convert_par(&src, &mut par, None).unwrap();
            }
            assert_eq!(dst, par, "{text}: parallel differs");
            // The same in the natural words (`u32` sources, results in their own width),
            // which take other paths (the lane results written in place).
            if sbits <= 32 {
                let src32: Vec<u32> = src.iter().map(|&x| x as u32).collect();
                match k.result_bits() {
                    8 => natural::<u8>(&k, &src32, &rbits, &dst, text),
                    16 => natural::<u16>(&k, &src32, &rbits, &dst, text),
                    32 => natural::<u32>(&k, &src32, &rbits, &dst, text),
                    _ => {}
                }
            }
            for i in 0..n {
                let mut ops: Vec<u64> = src[i * per..(i + 1) * per].to_vec();
                if order == Order::Memory && !is_packed(form.atype) {
                    ops.reverse();
                }
                if k.is_stochastic() {
                    ops.push(rbits[i] as u64);
                }
                let want = evaluate_bits(&form, &ops).unwrap().0;
                assert_eq!(dst[i], want, "{text} {order:?} instruction {i}: {ops:x?}");
            }
        }
    }

    #[test]
    fn every_shape_matches_the_evaluator() {
        for text in [
            "cvt.rn.f16.f32",
            "cvt.rz.ftz.sat.f16.f32",
            "cvt.rn.satfinite.e4m3x2.f32",
            "cvt.rn.satfinite.relu.e5m2x2.f32",
            "cvt.rn.satfinite.e2m1x2.f32",
            "cvt.rn.satfinite.e2m3x2.f32",
            "cvt.rs.satfinite.e4m3x4.f32",
            "cvt.rs.satfinite.e2m1x4.f32",
            "cvt.rs.relu.satfinite.f16x2.f32",
            "cvt.rs.satfinite.bf16x2.f32",
            "cvt.rn.f16x2.f32",
            "cvt.rz.satfinite.ue8m0x2.f32",
            "cvt.rp.satfinite.ue8m0x2.bf16x2",
            "cvt.rn.satfinite.e4m3x2.f16x2",
            "cvt.rn.f16x2.e4m3x2",
            "cvt.rn.f16x2.e2m1x2",
            "cvt.rn.bf16x2.ue8m0x2",
            "cvt.rn.f32.f64",
            "cvt.rzi.s32.f64",
            "cvt.rni.u8.f32",
            "cvt.s16.s64",
            "cvt.f64.bf16",
            "cvt.rn.tf32.f32",
        ] {
            agree(text, 5000);
        }
    }

    #[test]
    fn exact_path_forms() {
        let form = parse_instruction("cvt.pack.sat.u8.s32.b32").unwrap().form;
        let k = CvtKernel::with_scale(&form, Order::Instruction, 0x1234_5678).unwrap();
        assert_eq!(k.path(), Path::Exact);
        let src = [5u32, 300, 0xffff_ffff, 7];
        let mut dst = [0u32; 2];
        k.convert(&src, &mut dst).unwrap();
        for i in 0..2 {
            let want = evaluate_bits(
                &form,
                &[src[2 * i] as u64, src[2 * i + 1] as u64, 0x1234_5678],
            )
            .unwrap()
            .0;
            assert_eq!(dst[i] as u64, want);
        }
    }

    #[test]
    fn bad_slices_are_refused() {
        let form = parse_instruction("cvt.rn.satfinite.e4m3x2.f32")
            .unwrap()
            .form;
        let k = CvtKernel::new(&form, Order::Memory).unwrap();
        let mut d = [0u16; 2];
        assert!(matches!(
            k.convert(&[0u32; 3], &mut d),
            Err(CvtBulkError::Sources { .. })
        ));
        let mut d8 = [0u8; 2];
        assert!(matches!(
            k.convert(&[0u32; 4], &mut d8),
            Err(CvtBulkError::Slices(BulkError::Narrow { .. }))
        ));
        assert!(matches!(
            k.convert_rs(&[0u32; 4], &mut d, &[0, 0]),
            Err(CvtBulkError::Rbits { .. })
        ));
        let rs = parse_instruction("cvt.rs.satfinite.e4m3x4.f32")
            .unwrap()
            .form;
        let k = CvtKernel::new(&rs, Order::Memory).unwrap();
        let mut d = [0u32; 1];
        let e = k.convert(&[0u32; 4], &mut d).unwrap_err();
        assert!(e.to_string().contains("rbits"), "{e}");
    }
}
