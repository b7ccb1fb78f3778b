//! `gpucvt verify` and `gpucvt sweep`: a form's fast slice kernel over every input.
//!
//! # Inputs
//!
//! The *input units* of a form are its source words: one packed word for a packed source
//! type (`f16x2`: all 2^32 words), else one lane value (`f32`: all 2^32 patterns). With `L`
//! scalar sources per instruction (`cvt.rn.satfinite.e4m3x2.f32 d, a, b`) instruction `i`
//! takes units `L·i … L·i+L−1` in memory order ([`Order::Memory`]: the first unit is the last
//! operand, so its result lands in the low bits), so that every unit is converted exactly
//! once and the results, stored little-endian, are in input order.
//!
//! Sources of at most 32 bits are enumerated completely. Wider sources (`f64`, `s64`,
//! `u64`) are sampled: a boundary-dense set (every exponent of an `f64` with the mantissa
//! patterns near every rounding position; every power of two of an integer and its
//! neighbours) and then `sample` pseudo-random words.
//!
//! `.rs` forms take the random operand of instruction `i` from [`rbits_for`]`(seed, i)`.
//!
//! # Verification
//!
//! Each lane's fast result is compared with the exact core's conversion of that lane's
//! input ([`Conversion::apply`] of the form's lane conversion, with the lane's share of
//! `rbits`). Every [`FULL_EVERY`]-th instruction, every instruction whose lanes disagree, and
//! every instruction of a form the lane path does not cover (`.scaled`, `cvt.pack`) is also
//! evaluated whole by [`evaluate_bits`], the PTX model, which checks the packing.

use super::{CvtBulkError, CvtKernel, Order, Path, Plan};
use crate::core::convert::{BitsFn, Conversion};
use crate::kernels::{vectorized, Kernel, Vectorizable, Word};
use crate::ptx::eval::{
    evaluate_bits, lane_conversion, lane_rbits_place, role_bits, EvalError, Role,
};
use crate::ptx::form::CvtForm;
use crate::Error;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Instructions per unit of work (its buffers stay small enough for the allocator to reuse
/// them without returning memory to the system).
const BATCH: u64 = 1 << 13;

/// Instructions per block of a sweep.
const SWEEP_BLOCK: u64 = 1 << 16;

/// The `rbits` operand of instruction `i` of a sweep seeded with `seed`: word `i` of the
/// SplitMix64 stream seeded with `seed` ([`crate::core::random::random_word`]), the same
/// stream `gpucvt convert` uses.
///
/// ```
/// assert_ne!(gpucvt::ptx::slices::verify::rbits_for(0, 0), gpucvt::ptx::slices::verify::rbits_for(0, 1));
/// ```
pub fn rbits_for(seed: u64, i: u64) -> u32 {
    crate::core::random::random_word(seed, i)
}

/// How inputs are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// Random words after the boundary-dense set, for sources wider than 32 bits.
    pub sample: u64,
    /// Seed of the random words and of the `rbits` operands.
    pub seed: u64,
}

impl Default for Inputs {
    fn default() -> Self {
        Inputs {
            sample: 1 << 24,
            seed: 0,
        }
    }
}

/// The input units of a form, enumerated or sampled (see the module docs).
#[derive(Clone, Debug)]
pub struct Units {
    bits: u32,
    per: u64,
    /// Every input in order (else the listed words, then the random ones).
    every: bool,
    /// The boundary-dense list for wide sources (empty when enumerating).
    listed: Vec<u64>,
    sample: u64,
    seed: u64,
}

impl Units {
    /// The units of `kernel`'s form.
    pub fn new(kernel: &CvtKernel, inputs: Inputs) -> Units {
        let bits = kernel.source_bits();
        let listed = if bits > 32 {
            boundary_dense(kernel.form())
        } else {
            Vec::new()
        };
        Units {
            bits,
            per: kernel.sources_per_result() as u64,
            every: bits <= 32,
            listed,
            sample: inputs.sample,
            seed: inputs.seed,
        }
    }

    /// A seeded sample whatever the source width: for sources wider than 32 bits the same
    /// units as [`Units::new`] (the boundary-dense set, then `inputs.sample` random words),
    /// for narrower ones `inputs.sample` random words only.
    pub fn sampled(kernel: &CvtKernel, inputs: Inputs) -> Units {
        Units {
            every: false,
            ..Units::new(kernel, inputs)
        }
    }

    /// Whether every input is covered.
    pub fn exhaustive(&self) -> bool {
        self.every
    }

    /// Source words each instruction takes.
    pub fn per_instruction(&self) -> u64 {
        self.per
    }

    /// How many units there are.
    pub fn count(&self) -> u64 {
        let n = if self.exhaustive() {
            1u64 << self.bits
        } else {
            self.listed.len() as u64 + self.sample
        };
        // Whole instructions only.
        n / self.per * self.per
    }

    /// How many instructions they make.
    pub fn instructions(&self) -> u64 {
        self.count() / self.per
    }

    /// Unit `i`.
    pub fn get(&self, i: u64) -> u64 {
        if self.exhaustive() {
            i
        } else if (i as usize) < self.listed.len() {
            self.listed[i as usize]
        } else {
            let r = rbits_for(self.seed ^ 0x5eed, i) as u64;
            let s = rbits_for(self.seed ^ 0xface, i) as u64;
            let w = (r << 32) | s;
            if self.bits >= 64 {
                w
            } else {
                w & ((1u64 << self.bits) - 1)
            }
        }
    }
}

/// A boundary-dense list of wide source words.
fn boundary_dense(form: &CvtForm) -> Vec<u64> {
    let mut out = Vec::new();
    let is_float = form.atype.lane_format().is_some_and(|f| f.is_float());
    if is_float {
        // f64: every exponent and sign, mantissas near every bit position.
        let mut mans = vec![0u64, 1, 2, 3, (1 << 52) - 1, (1 << 52) - 2, 1 << 51];
        for p in 0..52 {
            let b = 1u64 << p;
            mans.extend([b, b - 1, b + 1, (1 << 52) - b, ((1 << 52) - b) | (b >> 1)]);
        }
        mans.sort_unstable();
        mans.dedup();
        for sign in [0u64, 1 << 63] {
            for e in 0..2048u64 {
                for &m in &mans {
                    out.push(sign | (e << 52) | (m & ((1 << 52) - 1)));
                }
            }
        }
    } else {
        for p in 0..64 {
            let b = 1u64 << p;
            for d in [0u64, 1, 2, 3] {
                out.extend([
                    b.wrapping_add(d),
                    b.wrapping_sub(d),
                    b.wrapping_neg().wrapping_add(d),
                    b.wrapping_neg().wrapping_sub(d),
                ]);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// One disagreement between the fast kernel and the exact model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The instruction's index.
    pub index: u64,
    /// Its source operands in instruction order (then `rbits`).
    pub operands: Vec<u64>,
    /// The fast kernel's result.
    pub fast: u64,
    /// The exact model's result.
    pub exact: u64,
}

/// What [`verify`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The form's spelling.
    pub form: String,
    /// The fast path checked.
    pub path: Path,
    /// Instructions evaluated.
    pub instructions: u64,
    /// Input units covered.
    pub inputs: u64,
    /// Whether every input of the source type was covered.
    pub exhaustive: bool,
    /// How many instructions disagreed.
    pub mismatches: u64,
    /// The first disagreements (by index), at most `examples` of [`verify`].
    pub examples: Vec<Mismatch>,
}

/// Builds the kernel of `form` for sweeping: memory order, the scale/`c` operand ×1/0.
pub fn sweep_kernel(form: &CvtForm) -> Result<CvtKernel, CvtBulkError> {
    CvtKernel::new(form, Order::Memory)
}

/// Runs `form`'s fast kernel over every input (or the sample) and compares each
/// instruction with the exact model. `progress` is called with the number of instructions
/// just finished, from any thread.
pub fn verify(
    form: &CvtForm,
    inputs: Inputs,
    examples: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Report, CvtBulkError> {
    verify_with(form, inputs, examples, progress, &|ops| {
        evaluate_bits(form, ops).map(|r| r.0)
    })
}

/// The exact model [`verify_with`] compares with: the result of one instruction given its
/// operands in instruction order.
pub type Model<'a> = dyn Fn(&[u64]) -> Result<u64, EvalError> + Sync + 'a;

/// [`verify`] against another model (tests use it to show a wrong model is caught).
pub fn verify_with(
    form: &CvtForm,
    inputs: Inputs,
    examples: usize,
    progress: &(dyn Fn(u64) + Sync),
    model: &Model<'_>,
) -> Result<Report, CvtBulkError> {
    let kernel = sweep_kernel(form)?;
    let units = Units::new(&kernel, inputs);
    let total = units.instructions();
    let found = Mutex::new(Vec::<Mismatch>::new());
    let count = AtomicU64::new(0);
    let batches = total.div_ceil(BATCH);
    let per = kernel.sources_per_result() as u64;
    let extra = kernel.extra_operands();
    let lanes = LaneModel::new(&kernel)?;
    (0..batches).into_par_iter().try_for_each_init(
        Scratch::default,
        |scratch, b| -> Result<(), CvtBulkError> {
            let first = b * BATCH;
            let n = BATCH.min(total - first);
            run_batch(&kernel, &units, inputs.seed, first, n, scratch)?;
            let Scratch {
                src,
                rbits,
                fast,
                exact,
                lanes: lane_buffers,
                ..
            } = scratch;
            let rbits = kernel.is_stochastic().then_some(&rbits[..]);
            if let Some(l) = &lanes {
                l.exact_words(src, rbits, exact, lane_buffers);
            }
            let per = per as usize;
            // Instruction `i` against the model.
            let full = |i: usize| -> Result<(), CvtBulkError> {
                let index = first + i as u64;
                let f = fast[i];
                let rbits_i = rbits.map(|r| r[i]);
                let ops = operands(
                    &src[i * per..(i + 1) * per],
                    kernel.packed_src,
                    rbits_i,
                    extra,
                );
                let exact = model(&ops).map_err(|error| CvtBulkError::Operand {
                    index: index as usize,
                    error,
                })?;
                if exact != f {
                    count.fetch_add(1, Ordering::Relaxed);
                    let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
                    found.push(Mismatch {
                        index,
                        operands: ops,
                        fast: f,
                        exact,
                    });
                    found.sort_by_key(|m| m.index);
                    found.truncate(examples);
                }
                Ok(())
            };
            if lanes.is_none() {
                // Without a lane model, every instruction goes to the model.
                (0..fast.len()).try_for_each(full)?;
                progress(n);
                return Ok(());
            }
            // Lanes against the exact core; the whole instruction against the model every
            // `FULL_EVERY` instructions (and wherever the lanes disagree). A chunk of 64
            // instructions at a time: a mask of those for the model, in a loop without
            // branches.
            for (c, (fs, es)) in fast.chunks(64).zip(exact.chunks(64)).enumerate() {
                let mut todo = to_model(first + (c * 64) as u64, fs, es);
                while todo != 0 {
                    let j = todo.trailing_zeros() as usize;
                    todo &= todo - 1;
                    full(c * 64 + j)?;
                }
            }
            progress(n);
            Ok(())
        },
    )?;
    Ok(Report {
        form: form.spelling(),
        path: kernel.path(),
        instructions: total,
        inputs: units.count(),
        exhaustive: units.exhaustive(),
        mismatches: count.into_inner(),
        examples: found.into_inner().unwrap_or_else(|p| p.into_inner()),
    })
}

/// Which of up to 64 instructions, the first of index `first`, [`verify`] evaluates with
/// the model (bit `j` for instruction `first + j`): those whose lanes disagree (`fast[j] ≠
/// exact[j]`) and every `FULL_EVERY`-th.
fn to_model(first: u64, fast: &[u64], exact: &[u64]) -> u64 {
    debug_assert!(fast.len() <= 64 && exact.len() == fast.len());
    // Without branches, so that the loop over agreeing lanes stays cheap.
    let mut todo = fast
        .iter()
        .zip(exact)
        .enumerate()
        .fold(0u64, |m, (j, (f, e))| m | ((f != e) as u64) << j);
    let mut j = (FULL_EVERY - first % FULL_EVERY) % FULL_EVERY;
    while j < fast.len() as u64 {
        todo |= 1 << j;
        j += FULL_EVERY;
    }
    todo
}

/// The operands of one instruction in instruction order, from its source units in memory
/// order: the memory order reversed for scalar sources, then `rbits`, then the fixed
/// operands.
fn operands(units: &[u64], packed_src: bool, rbits: Option<u32>, extra: &[u64]) -> Vec<u64> {
    let mut ops: Vec<u64> = units.to_vec();
    if !packed_src {
        ops.reverse();
    }
    ops.extend(rbits.map(u64::from));
    ops.extend_from_slice(extra);
    ops
}

/// How often [`verify`] also evaluates a whole instruction with the PTX model when its
/// lanes agree with the exact core.
pub const FULL_EVERY: u64 = 64;

/// Calls `$f` with the lane count `$l`, as a constant for 1, 2 and 4 lanes (so that the
/// per-lane loops of [`split_random`] and [`pack`] unroll).
macro_rules! by_lanes {
    ($l:expr, |$n:ident| $f:expr) => {
        match $l {
            1 => {
                let $n = 1;
                $f
            }
            2 => {
                let $n = 2;
                $f
            }
            4 => {
                let $n = 4;
                $f
            }
            $n => $f,
        }
    };
}

/// The exact side of [`verify`] for forms on the lane path: each lane's input converted by
/// the exact core ([`Conversion::apply`]), the results packed as the instruction packs
/// them. The packing itself is checked by evaluating whole instructions with the PTX
/// model every [`FULL_EVERY`] instructions.
struct LaneModel {
    conversion: Conversion,
    /// The lanes' results, compiled for the pair of formats where gpucvt has an instance
    /// ([`Conversion::compiled_bits`]).
    bits: BitsFn,
    form: CvtForm,
    lanes: usize,
    packed_src: bool,
    src_lane_bits: u32,
    slot: u32,
    lane_mask: u64,
}

impl LaneModel {
    fn new(kernel: &CvtKernel) -> Result<Option<LaneModel>, CvtBulkError> {
        if kernel.path() == Path::Exact {
            return Ok(None);
        }
        let form = *kernel.form();
        let conversion = lane_conversion(&form)?;
        Ok(Some(LaneModel {
            conversion,
            bits: conversion.compiled_bits(),
            form,
            lanes: form.dtype.lanes() as usize,
            packed_src: form.atype.lanes() > 1,
            src_lane_bits: form.atype.lane_bits(),
            slot: form.dtype.lane_bits(),
            lane_mask: low_mask(conversion.dst.width()),
        }))
    }

    /// The exact results of instructions from their source units (memory order) and their
    /// `rbits`, into `out` (one word per instruction). Lane `j` counts from the low end of
    /// the result word (the PTX operand order is the other way round: its lane `L − 1 − j`).
    fn exact_words(
        &self,
        units: &[u64],
        rbits: Option<&[u32]>,
        out: &mut [u64],
        lanes: &mut LaneBuffers,
    ) {
        let l = self.lanes;
        let n = out.len();
        // Each lane's input, instruction by instruction, lane 0 (lowest) first.
        let inputs: &[u64] = if self.packed_src {
            let src_mask = low_mask(self.src_lane_bits);
            lanes.inputs.clear();
            lanes.inputs.extend(units.iter().flat_map(|&u| {
                (0..l).map(move |j| (u >> (self.src_lane_bits * j as u32)) & src_mask)
            }));
            &lanes.inputs
        } else {
            units
        };
        let random = rbits.map(|r| {
            // Lane j's random bits: a field of the instruction's `rbits` (`lane_random`).
            let place: Vec<(u32, u64)> = (0..l)
                .map(|j| {
                    let (shift, width) = lane_rbits_place(&self.form, l - 1 - j);
                    (shift, low_mask(width))
                })
                .collect();
            lanes.random.resize(n * l, 0);
            by_lanes!(l, |l| split_random(l, r, &place, &mut lanes.random));
            &lanes.random[..]
        });
        lanes.results.resize(n * l, 0);
        (self.bits)(&self.conversion, inputs, random, &mut lanes.results);
        let (mask, slot) = (self.lane_mask, self.slot);
        by_lanes!(l, |l| pack(l, &lanes.results, mask, slot, out));
    }
}

/// Each instruction's `rbits` split into its `l` lanes' random bits (`place`: each lane's
/// shift and mask).
#[inline(always)]
fn split_random(l: usize, rbits: &[u32], place: &[(u32, u64)], random: &mut [u64]) {
    for (out, &r) in random.chunks_exact_mut(l).zip(rbits) {
        for (o, &(shift, mask)) in out.iter_mut().zip(place) {
            *o = (r as u64 >> shift) & mask;
        }
    }
}

/// Each instruction's `l` lane results packed into one word, lane `j` at `slot · j`.
#[inline(always)]
fn pack(l: usize, results: &[u64], mask: u64, slot: u32, out: &mut [u64]) {
    for (word, r) in out.iter_mut().zip(results.chunks_exact(l)) {
        *word = r
            .iter()
            .enumerate()
            .fold(0, |w, (j, &b)| w | (b & mask) << (slot * j as u32));
    }
}

/// The per-lane buffers of [`LaneModel::exact_words`].
#[derive(Default)]
struct LaneBuffers {
    inputs: Vec<u64>,
    random: Vec<u64>,
    results: Vec<u64>,
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The buffers of one batch, reused from batch to batch.
#[derive(Default)]
struct Scratch {
    /// Source units, memory order.
    src: Vec<u64>,
    /// `rbits` per instruction (stochastic forms).
    rbits: Vec<u32>,
    /// The fast kernel's results.
    fast: Vec<u64>,
    /// The exact results.
    exact: Vec<u64>,
    /// The exact side's lanes.
    lanes: LaneBuffers,
}

/// Runs instructions `first .. first + n` through the fast kernel: their source units
/// (memory order), `rbits` and results, into `scratch`.
fn run_batch(
    kernel: &CvtKernel,
    units: &Units,
    seed: u64,
    first: u64,
    n: u64,
    scratch: &mut Scratch,
) -> Result<(), CvtBulkError> {
    let per = kernel.sources_per_result() as u64;
    let range = first * per..(first + n) * per;
    scratch.src.clear();
    if units.exhaustive() {
        scratch.src.extend(range);
    } else {
        scratch.src.extend(range.map(|u| units.get(u)));
    }
    scratch.rbits.clear();
    if kernel.is_stochastic() {
        scratch
            .rbits
            .extend((first..first + n).map(|i| rbits_for(seed, i)));
    }
    scratch.fast.resize(n as usize, 0);
    scratch.exact.resize(n as usize, 0);
    let rbits = kernel.is_stochastic().then_some(&scratch.rbits[..]);
    run_typed(kernel, &scratch.src, &mut scratch.fast, rbits)
}

/// Runs the kernel with the word types a caller of that width would use (`u32` sources
/// for 32-bit inputs, `u16` results for 16-bit ones, …), so that the paths checked are the
/// paths used.
fn run_typed(
    kernel: &CvtKernel,
    src: &[u64],
    out: &mut [u64],
    rbits: Option<&[u32]>,
) -> Result<(), CvtBulkError> {
    fn go<S: Word, D: Word>(
        kernel: &CvtKernel,
        src: &[u64],
        out: &mut [u64],
        rbits: Option<&[u32]>,
    ) -> Result<(), CvtBulkError> {
        let s: Vec<S> = src.iter().map(|&x| S::from_u64(x)).collect();
        let mut d = vec![D::default(); out.len()];
        match rbits {
            Some(r) => kernel.convert_rs(&s, &mut d, r)?,
            None => kernel.convert(&s, &mut d)?,
        }
        for (o, x) in out.iter_mut().zip(d) {
            *o = x.to_u64();
        }
        Ok(())
    }
    macro_rules! by_dst {
        ($s:ty) => {
            match kernel.result_bits() {
                0..=8 => go::<$s, u8>(kernel, src, out, rbits),
                9..=16 => go::<$s, u16>(kernel, src, out, rbits),
                17..=32 => go::<$s, u32>(kernel, src, out, rbits),
                _ => go::<$s, u64>(kernel, src, out, rbits),
            }
        };
    }
    match kernel.source_bits() {
        0..=8 => by_dst!(u8),
        9..=16 => by_dst!(u16),
        17..=32 => by_dst!(u32),
        _ => by_dst!(u64),
    }
}

/// Bytes per result word in a sweep's output: the result width rounded up to 1, 2, 4 or 8.
pub fn result_bytes(kernel: &CvtKernel) -> usize {
    match kernel.result_bits() {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}

/// Runs `form`'s fast kernel over every input of a source of at most 32 bits, in input
/// order, handing the results to `sink` as little-endian bytes, block after block in
/// order (`result_bytes` bytes a result). `progress` is called with the number of
/// instructions finished.
///
/// Every thread of the current rayon pool (`rayon::broadcast`) converts its share of the
/// blocks and calls `sink` with each of them in turn, so `sink` runs on those threads, one
/// call at a time. The threads wait for one another's turn: call `sweep` from outside the
/// pool's other parallel work (as `gpucvt sweep` does), not from inside a task of it.
pub fn sweep(
    form: &CvtForm,
    seed: u64,
    sink: &mut (dyn FnMut(&[u8]) -> std::io::Result<()> + Send),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, Error> {
    let inputs = SweepInputs {
        seed,
        ..SweepInputs::default()
    };
    sweep_in_blocks(form, &inputs, SWEEP_BLOCK, sink, progress)
}

/// Which instructions a sweep runs: every input or a seeded sample, and a range of the
/// instructions they make (so that a long sweep can be cut into pieces, or a mismatch found
/// by bisection, with the same numbering).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepInputs {
    /// Seed of the `rbits` operands ([`rbits_for`]) and of the sampled units.
    pub seed: u64,
    /// `None`: every input (sources of at most 32 bits). `Some(n)`: the units of
    /// [`Units::sampled`] with `n` random words.
    pub sample: Option<u64>,
    /// The first instruction.
    pub first: u64,
    /// At most this many instructions (`None`: to the end).
    pub count: Option<u64>,
}

/// What a sweep with `inputs` covers: the form's sweep kernel, its units and the range of
/// instruction indices.
pub fn sweep_plan(
    form: &CvtForm,
    inputs: &SweepInputs,
) -> Result<(CvtKernel, Units, std::ops::Range<u64>), Error> {
    let kernel = sweep_kernel(form)?;
    let units = match inputs.sample {
        None if kernel.source_bits() > 32 => {
            return Err(Error::SweepTooWide {
                bits: kernel.source_bits(),
            })
        }
        None => Units::new(
            &kernel,
            Inputs {
                sample: 0,
                seed: inputs.seed,
            },
        ),
        Some(sample) => Units::sampled(
            &kernel,
            Inputs {
                sample,
                seed: inputs.seed,
            },
        ),
    };
    let total = units.instructions();
    if inputs.first > total || (inputs.first == total && total > 0) {
        return Err(Error::SweepRange {
            first: inputs.first,
            total,
        });
    }
    let end = match inputs.count {
        Some(n) => total.min(inputs.first.saturating_add(n)),
        None => total,
    };
    Ok((kernel, units, inputs.first..end))
}

/// [`sweep`] with a choice of inputs ([`SweepInputs`]); returns the number of
/// instructions run.
pub fn sweep_inputs(
    form: &CvtForm,
    inputs: &SweepInputs,
    sink: &mut (dyn FnMut(&[u8]) -> std::io::Result<()> + Send),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, Error> {
    sweep_in_blocks(form, inputs, SWEEP_BLOCK, sink, progress)
}

/// What feeds an operand of a swept instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// Unit `k` of the instruction's units in memory order: unit `L·i + k` of instruction
    /// `i` of a form with `L` units per instruction.
    Unit(u64),
    /// The `rbits` operand of `.rs` forms: [`rbits_for`]`(seed, i)`.
    Rbits,
    /// The same value in every instruction (the scale operand of `.scaled` forms, `c` of
    /// `cvt.pack`).
    Fixed(u64),
}

/// One source operand of a swept instruction (after `d`, in instruction order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepOperand {
    /// What the operand is for.
    pub role: Role,
    /// Its register's width in bits.
    pub bits: u32,
    /// Where its value comes from.
    pub feed: Feed,
}

/// How a sweep lays a form's instructions out: enough to run the same instructions
/// elsewhere (on a GPU) and compare the results word for word, or by their hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepShape {
    /// The form.
    pub form: CvtForm,
    /// Width of the destination register `d`.
    pub dst_bits: u32,
    /// Width of the result word a sweep keeps of `d`.
    pub result_bits: u32,
    /// Bytes per result in a sweep's output ([`result_bytes`]).
    pub result_bytes: usize,
    /// Width of one input unit (a lane value, or a packed source word).
    pub unit_bits: u32,
    /// Units per instruction.
    pub units_per_instruction: u64,
    /// The source operands in instruction order.
    pub operands: Vec<SweepOperand>,
    /// How many instructions a sweep of every input runs (`None`: sources wider than 32
    /// bits, which are sampled).
    pub every_input: Option<u64>,
}

/// The layout of `form`'s sweep (see [`SweepShape`]).
///
/// ```
/// use gpucvt::ptx::{parse_instruction, slices::verify::{sweep_shape, Feed}};
/// let form = parse_instruction("cvt.rn.f16x2.f32").unwrap().form;
/// let s = sweep_shape(&form).unwrap();
/// // `d, a, b`: `a` (the high half) is the second unit of each pair in memory order.
/// let feeds: Vec<Feed> = s.operands.iter().map(|o| o.feed).collect();
/// assert_eq!(feeds, [Feed::Unit(1), Feed::Unit(0)]);
/// assert_eq!((s.units_per_instruction, s.every_input), (2, Some(1 << 31)));
/// ```
pub fn sweep_shape(form: &CvtForm) -> Result<SweepShape, Error> {
    let kernel = sweep_kernel(form)?;
    let per = kernel.sources_per_result() as u64;
    let mut extra = kernel.extra_operands().iter();
    let mut source = 0u64;
    let mut operands = Vec::new();
    for role in crate::ptx::eval::operand_roles(form) {
        let feed = match role {
            Role::A | Role::B | Role::E | Role::F => {
                // Memory order is the operand order reversed (see [`operands`]).
                let k = if kernel.packed_src {
                    source
                } else {
                    per - 1 - source
                };
                source += 1;
                Feed::Unit(k)
            }
            Role::Rbits => Feed::Rbits,
            Role::Scale | Role::C => Feed::Fixed(*extra.next().unwrap_or(&0)),
        };
        operands.push(SweepOperand {
            role,
            bits: role_bits(form, role),
            feed,
        });
    }
    let unit_bits = kernel.source_bits();
    Ok(SweepShape {
        form: *form,
        dst_bits: if form.pack { 32 } else { form.dtype.bits() },
        result_bits: kernel.result_bits(),
        result_bytes: result_bytes(&kernel),
        unit_bits,
        units_per_instruction: per,
        operands,
        every_input: (unit_bits <= 32).then(|| (1u64 << unit_bits) / per),
    })
}

/// [`sweep_inputs`] in blocks of `block` instructions.
fn sweep_in_blocks(
    form: &CvtForm,
    inputs: &SweepInputs,
    block: u64,
    sink: &mut (dyn FnMut(&[u8]) -> std::io::Result<()> + Send),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, Error> {
    let (kernel, units, range) = sweep_plan(form, inputs)?;
    let seed = inputs.seed;
    let (start, total) = (range.start, range.end - range.start);
    let width = result_bytes(&kernel);
    // The direct path numbers units from 0: every input only.
    let direct = if units.exhaustive() {
        Direct::new(&kernel, seed)
    } else {
        None
    };
    let blocks = total.div_ceil(block);
    // Every thread of the pool converts blocks `t, t + n, t + 2n, …` into a buffer of its
    // own and then, when the block before has been handed over, hands its block to the sink
    // itself. The hash (or write) of a block runs on the core that just converted it, while
    // its bytes are still in that core's cache, and overlaps the other threads'
    // conversions. (Converting on some threads and hashing on another streamed every
    // result through the shared cache and memory: twice as slow for 64-bit results.)
    let turn = Mutex::new(Turn {
        next: 0,
        failed: None,
        sink,
    });
    let handed = std::sync::Condvar::new();
    rayon::broadcast(|ctx| {
        let (t, n) = (ctx.index() as u64, ctx.num_threads() as u64);
        // Words, so that 16-, 32- and 64-bit results can be written in place.
        let mut words = vec![0u64; (block as usize * width).div_ceil(8)];
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        let mut scratch = DirectScratch::new();
        for b in (t..blocks).step_by(n as usize) {
            let m = block.min(total - b * block);
            let first = start + b * block;
            let out = &mut buf[..m as usize * width];
            let converted = match &direct {
                Some(d) => d.run(first, m, out, &mut scratch),
                None => sweep_block(&kernel, &units, seed, first, m, out),
            };
            let mut g = turn.lock().unwrap_or_else(|e| e.into_inner());
            while g.next != b && g.failed.is_none() {
                g = handed.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            if g.failed.is_some() {
                return;
            }
            match converted
                .map_err(Error::Bulk)
                .and_then(|()| (g.sink)(out).map_err(Error::from))
            {
                Ok(()) => g.next += 1,
                Err(e) => g.failed = Some(e),
            }
            let stop = g.failed.is_some();
            drop(g);
            handed.notify_all();
            if stop {
                return;
            }
            progress(m);
        }
    });
    if let Some(e) = turn.into_inner().unwrap_or_else(|e| e.into_inner()).failed {
        return Err(e);
    }
    Ok(total)
}

/// Whose turn it is to hand a block to a sweep's sink.
struct Turn<'s> {
    /// The next block for the sink.
    next: u64,
    /// The first failure: every thread stops.
    failed: Option<Error>,
    sink: &'s mut (dyn FnMut(&[u8]) -> std::io::Result<()> + Send),
}

/// The buffers of [`Direct::run`], one chunk each, kept by each thread of a sweep.
struct DirectScratch {
    /// The chunk's input units.
    src: Vec<u32>,
    /// Their random values, in `u8`, `u16` or `u32` words.
    rnd: Vec<u32>,
    /// The random words they are taken from.
    words: Vec<u32>,
    /// Lane results of 4 to 64 bits before they are packed or copied.
    narrow: Vec<u64>,
}

impl DirectScratch {
    fn new() -> DirectScratch {
        DirectScratch {
            src: vec![0; DIRECT_CHUNK],
            rnd: vec![0; DIRECT_CHUNK],
            words: vec![0; DIRECT_CHUNK],
            narrow: vec![0; DIRECT_CHUNK],
        }
    }
}

/// Units per chunk of [`Direct::run`] (its buffers stay in the first-level cache).
const DIRECT_CHUNK: usize = 4096;

/// The sweep of a form on the lane path whose sources are scalar words of at most 32 bits
/// and whose lanes fill the result word exactly (`f16`, `e4m3x2`, `e2m1x4`, `bf16x2`, …).
///
/// In memory order the result words of consecutive instructions, stored little-endian,
/// are the lane results of consecutive units, each in its `slot` bits: a sweep's output is
/// just the per-unit results laid side by side. So a chunk of units is converted by the
/// lane kernel in one call, into the output bytes themselves (8-bit slots) or into a
/// narrow buffer that is then copied out (16-, 32- and 64-bit slots) or paired into bytes
/// (4-bit slots). No per-instruction packing, no allocation.
struct Direct<'a> {
    k: &'a Kernel,
    /// Lanes per instruction (1, 2 or 4).
    lanes: usize,
    /// Bits per lane in the result word: 4, 8, 16, 32 or 64.
    slot: u32,
    /// The lane results' width as a mask (the packing keeps these bits).
    mask: u64,
    /// `.rs` forms: where each lane's random bits are.
    random: Option<LaneRandom>,
}

/// The random operand of the lanes of a `.rs` form in a sweep.
struct LaneRandom {
    seed: u64,
    /// Lane `j` in memory order (PTX lane `L − 1 − j`): its field of `rbits`, as shift
    /// and mask.
    place: [(u32, u32); 4],
    /// The widest field, which picks the word the random values are handed over in.
    width: u32,
}

impl<'a> Direct<'a> {
    /// The direct path for `kernel`, if its form has one.
    fn new(kernel: &'a CvtKernel, seed: u64) -> Option<Direct<'a>> {
        let Plan::Lanes(k) = &kernel.plan else {
            return None;
        };
        let lanes = kernel.lanes;
        let slot = kernel.dst_lane_bits;
        let mask = kernel.dst_lane_mask;
        if kernel.packed_src
            || kernel.order != Order::Memory
            || kernel.source_bits() > 32
            || !matches!(lanes, 1 | 2 | 4)
            || !matches!(slot, 4 | 8 | 16 | 32 | 64)
            || slot as usize * lanes != result_bytes(kernel) * 8
            || mask > low_mask(slot)
        {
            return None;
        }
        let random = kernel.stochastic.then(|| {
            let mut place = [(0, 0); 4];
            let mut width = 0;
            for (j, p) in place.iter_mut().enumerate().take(lanes) {
                let (shift, w) = lane_rbits_place(&kernel.form, lanes - 1 - j);
                *p = (shift, low_mask(w) as u32);
                width = width.max(w);
            }
            LaneRandom { seed, place, width }
        });
        Some(Direct {
            k,
            lanes,
            slot,
            mask,
            random,
        })
    }

    /// Instructions `first .. first + n` into `out` (what [`sweep_block`] writes).
    fn run(
        &self,
        first: u64,
        n: u64,
        out: &mut [u8],
        scratch: &mut DirectScratch,
    ) -> Result<(), CvtBulkError> {
        match self.random.as_ref().map(|r| r.width) {
            None | Some(0..=8) => self.run_with::<u8>(first, n, out, scratch),
            Some(9..=16) => self.run_with::<u16>(first, n, out, scratch),
            Some(_) => self.run_with::<u32>(first, n, out, scratch),
        }
    }

    /// [`Direct::run`] with the random values (if any) in `R` words, as the lane path of
    /// [`CvtKernel`] hands them over.
    fn run_with<R: Word + bytemuck::Pod>(
        &self,
        first: u64,
        n: u64,
        out: &mut [u8],
        scratch: &mut DirectScratch,
    ) -> Result<(), CvtBulkError> {
        let l = self.lanes as u64;
        let units = (n * l) as usize;
        let first_unit = first * l;
        let DirectScratch {
            src,
            rnd,
            words,
            narrow,
        } = scratch;
        let rnd: &mut [R] = bytemuck::cast_slice_mut(&mut rnd[..]);
        // Bits of output per unit, and the chunk's bytes.
        let out_per_chunk = DIRECT_CHUNK * self.slot as usize / 8;
        for (c, o) in out[..units * self.slot as usize / 8]
            .chunks_mut(out_per_chunk)
            .enumerate()
        {
            let start = c * DIRECT_CHUNK;
            let m = (units - start).min(DIRECT_CHUNK);
            // Units below 2^32: a chunk's units fit `u32`.
            let base = (first_unit + start as u64) as u32;
            vectorized(Iota {
                base,
                out: &mut src[..m],
            });
            let s = &src[..m];
            let r = match &self.random {
                Some(lr) => {
                    let first_instr = (first_unit + start as u64) / l;
                    let r = &mut rnd[..m];
                    match self.lanes {
                        1 => fill_random::<1, R>(lr, first_instr, words, r),
                        2 => fill_random::<2, R>(lr, first_instr, words, r),
                        _ => fill_random::<4, R>(lr, first_instr, words, r),
                    }
                    Some(&rnd[..m])
                }
                None => None,
            };
            match self.slot {
                8 => {
                    self.lane_results(s, r, o)?;
                    if self.mask != 0xff {
                        o.iter_mut().for_each(|b| *b &= self.mask as u8);
                    }
                }
                4 => {
                    let t = &mut bytemuck::cast_slice_mut::<u64, u8>(narrow)[..m];
                    self.lane_results(s, r, t)?;
                    pair_nibbles(t, o, self.mask as u8);
                }
                16 => {
                    let t = &mut bytemuck::cast_slice_mut::<u64, u16>(narrow)[..m];
                    self.wide_results(s, r, t, o)?
                }
                32 => {
                    let t = &mut bytemuck::cast_slice_mut::<u64, u32>(narrow)[..m];
                    self.wide_results(s, r, t, o)?
                }
                _ => self.wide_results(s, r, &mut narrow[..m], o)?,
            }
        }
        Ok(())
    }

    /// Lane results of 16, 32 or 64 bits (`W`) into `out` as little-endian bytes: in place
    /// when `out` is aligned words of this machine's byte order and the results fill them,
    /// else through `tmp` and a masked copy.
    fn wide_results<R: Word, W: Word + bytemuck::Pod>(
        &self,
        src: &[u32],
        rnd: Option<&[R]>,
        tmp: &mut [W],
        out: &mut [u8],
    ) -> Result<(), CvtBulkError>
    where
        for<'b> LeBytes<'b, W>: Vectorizable<Output = ()>,
    {
        if cfg!(target_endian = "little") && self.mask == low_mask(W::BITS) {
            if let Ok(words) = bytemuck::try_cast_slice_mut::<u8, W>(out) {
                return self.lane_results(src, rnd, words);
            }
        }
        self.lane_results(src, rnd, tmp)?;
        vectorized(LeBytes {
            words: &*tmp,
            mask: W::from_u64(self.mask),
            out,
        });
        Ok(())
    }

    /// Every unit's lane result, with its random value for `.rs` forms.
    fn lane_results<R: Word, LO: Word>(
        &self,
        src: &[u32],
        rnd: Option<&[R]>,
        out: &mut [LO],
    ) -> Result<(), CvtBulkError> {
        match rnd {
            Some(r) => self.k.convert_stochastic_words(src, out, r)?,
            None => self.k.convert(src, out)?,
        }
        Ok(())
    }
}

/// `out[j] = base + j` (wrapping), compiled for wide vectors.
struct Iota<'a> {
    base: u32,
    out: &'a mut [u32],
}

impl Vectorizable for Iota<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        for (j, u) in self.out.iter_mut().enumerate() {
            *u = self.base.wrapping_add(j as u32);
        }
    }
}

/// `words`, each masked with `mask`, stored little-endian into `out`, compiled for wide
/// vectors.
struct LeBytes<'a, T> {
    words: &'a [T],
    mask: T,
    out: &'a mut [u8],
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl Vectorizable for LeBytes<'_, $t> {
            type Output = ();

            #[inline(always)]
            fn run(self) {
                const N: usize = std::mem::size_of::<$t>();
                for (b, &x) in self.out.chunks_exact_mut(N).zip(self.words) {
                    b.copy_from_slice(&(x & self.mask).to_le_bytes());
                }
            }
        }
    )*};
}
le_bytes!(u16, u32, u64);

/// Byte `k` of `out`: `lanes[2k]` in the low nibble, `lanes[2k + 1]` in the high one
/// (each masked with `mask`). Eight lanes at a time in a `u64`.
fn pair_nibbles(lanes: &[u8], out: &mut [u8], mask: u8) {
    let m = u64::from_le_bytes([mask; 8]);
    let mut whole = lanes.chunks_exact(8);
    let mut outs = out.chunks_exact_mut(4);
    for (o, l) in (&mut outs).zip(&mut whole) {
        let x = u64::from_le_bytes(l.try_into().expect("8 bytes")) & m;
        // Byte 2k: lane 2k | lane 2k+1 << 4; then the even bytes gathered into the low half.
        let y = (x | x >> 4) & 0x00ff_00ff_00ff_00ff;
        let y = (y | y >> 8) & 0x0000_ffff_0000_ffff;
        let y = y | y >> 16;
        o.copy_from_slice(&(y as u32).to_le_bytes());
    }
    for (b, p) in outs
        .into_remainder()
        .iter_mut()
        .zip(whole.remainder().chunks_exact(2))
    {
        *b = (p[0] & mask) | (p[1] & mask) << 4;
    }
}

/// The random values of the units of instructions `first …` (`L` units each, memory order):
/// each unit's field of its instruction's `rbits` ([`rbits_for`]). The words come from
/// [`crate::kernels::random::random_words`] into `words` (one per instruction), then are split
/// by a loop compiled for wide vectors ([`SplitRandom`]).
fn fill_random<const L: usize, R: Word>(
    lr: &LaneRandom,
    first: u64,
    words: &mut [u32],
    out: &mut [R],
) {
    let words = &mut words[..out.len() / L];
    crate::kernels::random::random_words(lr.seed, first, words);
    vectorized(SplitRandom::<L, R> {
        words,
        place: &lr.place,
        out,
    });
}

/// Each instruction's `rbits` (`words`) split into the random values of its `L` units.
struct SplitRandom<'a, const L: usize, R> {
    words: &'a [u32],
    place: &'a [(u32, u32); 4],
    out: &'a mut [R],
}

impl<const L: usize, R: Word> Vectorizable for SplitRandom<'_, L, R> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let place = &self.place[..L];
        if let Some(bytes) = R::as_u8_slice_mut(self.out) {
            // Byte fields: an instruction's `L` values as one little-endian word (one store
            // per instruction rather than `L` interleaved ones).
            for (o, &r) in bytes.chunks_exact_mut(L).zip(self.words) {
                let w = place
                    .iter()
                    .enumerate()
                    .fold(0u32, |w, (j, &(shift, mask))| {
                        w | ((r >> shift) & mask) << (8 * j)
                    });
                o.copy_from_slice(&w.to_le_bytes()[..L]);
            }
        } else {
            for (o, &r) in self.out.chunks_exact_mut(L).zip(self.words) {
                for (x, &(shift, mask)) in o.iter_mut().zip(place) {
                    *x = R::from_u32((r >> shift) & mask);
                }
            }
        }
    }
}

/// One block of a sweep: instructions `first .. first + n`, their results written to `out`
/// as little-endian words of `out.len() / n` bytes.
fn sweep_block(
    kernel: &CvtKernel,
    units: &Units,
    seed: u64,
    first: u64,
    n: u64,
    out: &mut [u8],
) -> Result<(), CvtBulkError> {
    let per = kernel.sources_per_result() as u64;
    let rbits = kernel.is_stochastic().then(|| {
        (first..first + n)
            .map(|i| rbits_for(seed, i))
            .collect::<Vec<u32>>()
    });
    let span = first * per..(first + n) * per;
    let r = rbits.as_deref();
    macro_rules! go {
        ($s:ty, $d:ty) => {{
            let s: Vec<$s> = span.map(|i| units.get(i) as $s).collect();
            let mut d = vec![<$d>::default(); n as usize];
            match r {
                Some(r) => kernel.convert_rs(&s, &mut d, r)?,
                None => kernel.convert(&s, &mut d)?,
            }
            for (o, x) in out.chunks_exact_mut(size_of::<$d>()).zip(&d) {
                o.copy_from_slice(&x.to_le_bytes());
            }
            Ok(())
        }};
    }
    macro_rules! by_dst {
        ($s:ty) => {
            match out.len() / n.max(1) as usize {
                1 => go!($s, u8),
                2 => go!($s, u16),
                4 => go!($s, u32),
                _ => go!($s, u64),
            }
        };
    }
    match kernel.source_bits() {
        0..=8 => by_dst!(u8),
        9..=16 => by_dst!(u16),
        17..=32 => by_dst!(u32),
        _ => by_dst!(u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::parse_instruction;

    #[test]
    fn a_16_bit_form_verifies_and_a_wrong_model_is_caught() {
        let form = parse_instruction("cvt.rn.f16x2.e4m3x2").unwrap().form;
        let done = AtomicU64::new(0);
        let r = verify(&form, Inputs::default(), 5, &|n| {
            done.fetch_add(n, Ordering::Relaxed);
        })
        .unwrap();
        assert!(r.exhaustive);
        assert_eq!(r.instructions, 1 << 16);
        assert_eq!(done.into_inner(), 1 << 16);
        assert_eq!(r.mismatches, 0, "{:?}", r.examples);
        // A model that differs on three inputs (instructions checked whole: multiples of
        // FULL_EVERY): exactly those are reported, in order.
        let wrong = |ops: &[u64]| {
            let (b, _) = evaluate_bits(&form, ops)?;
            Ok(if [0x0100, 0x3840, 0xfec0].contains(&ops[0]) {
                b ^ 1
            } else {
                b
            })
        };
        let r = verify_with(&form, Inputs::default(), 2, &|_| {}, &wrong).unwrap();
        assert_eq!(r.mismatches, 3);
        assert_eq!(r.examples.len(), 2);
        assert_eq!(r.examples[0].operands, [0x0100]);
        assert_eq!(r.examples[1].operands, [0x3840]);
        assert_eq!(r.examples[1].fast ^ r.examples[1].exact, 1);
    }

    #[test]
    fn the_model_sees_disagreements_and_every_full_every_th() {
        for first in [0, 1, 63, 64, 100, FULL_EVERY * 7 - 5] {
            for len in [1usize, 13, 63, 64] {
                let fast: Vec<u64> = (0..len as u64)
                    .map(crate::core::random::splitmix64)
                    .collect();
                // Disagree at a few positions (none of them special).
                let mut exact = fast.clone();
                for j in [2usize, 17, 40, 62] {
                    if j < len {
                        exact[j] ^= 1 << (j % 7);
                    }
                }
                let todo = to_model(first, &fast, &exact);
                for j in 0..64 {
                    let want = j < len
                        && (fast[j] != exact[j] || (first + j as u64).is_multiple_of(FULL_EVERY));
                    assert_eq!(todo >> j & 1 == 1, want, "first {first} len {len} j {j}");
                }
            }
        }
    }

    #[test]
    fn the_lane_model_equals_the_ptx_model() {
        // The lane model is the exact side for every instruction but every 64th: it must
        // give the PTX model's words for scalar and packed sources, x1/x2/x4, and `rbits`.
        for text in [
            "cvt.rn.f16.f32",
            "cvt.rz.satfinite.e5m2x2.f32",
            "cvt.rn.satfinite.e4m3x2.f16x2",
            "cvt.rs.satfinite.e2m1x4.f32",
            "cvt.rs.relu.f16x2.f32",
            "cvt.rni.s32.f32",
        ] {
            let form = parse_instruction(text).unwrap().form;
            let kernel = sweep_kernel(&form).unwrap();
            let model = LaneModel::new(&kernel).unwrap().expect("a lane model");
            let units = Units::new(&kernel, Inputs::default());
            let per = kernel.sources_per_result() as u64;
            let n = 3000u64;
            // Random units, and half of them near 1.0 where every destination rounds.
            let src: Vec<u64> = (0..n * per)
                .map(|u| {
                    let r = crate::core::random::splitmix64(u);
                    let unit = units.get(r % units.count());
                    match (u % 2, kernel.source_bits()) {
                        (0, 32) => 0x3f00_0000 | (unit & 0x80ff_ffff),
                        (0, 16) => 0x3800 | (unit & 0x87ff),
                        _ => unit,
                    }
                })
                .collect();
            let rbits: Vec<u32> = (0..n).map(|i| rbits_for(7, i)).collect();
            let rbits = kernel.is_stochastic().then_some(&rbits[..]);
            let mut words = vec![0u64; n as usize];
            model.exact_words(&src, rbits, &mut words, &mut LaneBuffers::default());
            for (i, &w) in words.iter().enumerate() {
                let units_i = &src[i * per as usize..(i + 1) * per as usize];
                let ops = operands(units_i, kernel.packed_src, rbits.map(|r| r[i]), &[]);
                let (want, _) = evaluate_bits(&form, &ops).unwrap();
                assert_eq!(w, want, "{text} {ops:x?}");
            }
        }
    }

    #[test]
    fn sweep_bytes_are_the_per_input_results_in_order() {
        let form = parse_instruction("cvt.rn.f32.f16").unwrap().form;
        let mut bytes = Vec::new();
        let n = sweep(
            &form,
            0,
            &mut |b| {
                bytes.extend_from_slice(b);
                Ok(())
            },
            &|_| {},
        )
        .unwrap();
        assert_eq!(n, 1 << 16);
        assert_eq!(bytes.len(), 4 << 16);
        for x in [0u32, 0x3c00, 0x7bff, 0x8001, 0xfc00, 0x7e01] {
            let at = 4 * x as usize;
            let got = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let want = evaluate_bits(&form, &[x as u64]).unwrap().0 as u32;
            assert_eq!(got, want, "{x:#x}");
        }
    }

    #[test]
    fn sweep_blocks_reach_the_sink_in_order_and_a_failing_sink_stops_it() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // A lane form (the direct path) and a packed source (the per-instruction path);
        // blocks of 1000 instructions, the last one short.
        for text in ["cvt.rn.f32.f16", "cvt.rn.f16x2.e4m3x2"] {
            let form = parse_instruction(text).unwrap().form;
            let k = sweep_kernel(&form).unwrap();
            let width = result_bytes(&k);
            let mut want = vec![0u8; width << 16];
            sweep_block(&k, &every(&k), 0, 0, 1 << 16, &mut want).unwrap();
            let mut got = Vec::new();
            let done = AtomicU64::new(0);
            let n = pool
                .install(|| {
                    sweep_in_blocks(
                        &form,
                        &SweepInputs::default(),
                        1000,
                        &mut |b| {
                            got.extend_from_slice(b);
                            Ok(())
                        },
                        &|m| {
                            done.fetch_add(m, Ordering::Relaxed);
                        },
                    )
                })
                .unwrap();
            assert_eq!((n, done.into_inner()), (1 << 16, 1 << 16), "{text}");
            assert!(got == want, "{text}");
            // The fifth block fails: the sweep reports it and hands over nothing more.
            let mut calls = 0;
            let r = pool.install(|| {
                sweep_in_blocks(
                    &form,
                    &SweepInputs::default(),
                    1000,
                    &mut |_| {
                        calls += 1;
                        if calls == 5 {
                            Err(std::io::Error::other("disk full"))
                        } else {
                            Ok(())
                        }
                    },
                    &|_| {},
                )
            });
            assert!(matches!(r, Err(Error::Io { ref message, .. }) if message == "disk full"));
            assert_eq!(calls, 5, "{text}");
        }
    }

    #[test]
    fn packed_pairs_in_a_sweep_keep_input_order() {
        let form = parse_instruction("cvt.rn.satfinite.e4m3x2.f32")
            .unwrap()
            .form;
        let k = sweep_kernel(&form).unwrap();
        let first = 0x1fc0_0000u64;
        let mut bytes = [0u8; 8];
        sweep_block(&k, &every(&k), 0, first, 4, &mut bytes).unwrap();
        // Instruction i converts units 2i and 2i+1; the byte order is the unit order.
        let lane = crate::ptx::eval::lane_conversion(&form).unwrap();
        for (j, &b) in bytes.iter().enumerate() {
            let unit = 2 * first + j as u64;
            assert_eq!(b as u64, lane.apply(unit).bits, "unit {unit:#x}");
        }
    }

    #[test]
    fn the_direct_sweep_writes_the_bytes_of_the_generic_one() {
        // The direct path against `sweep_block` (the slice kernel, packed instruction by
        // instruction) on blocks at the start, in the middle, at the end of the inputs and
        // of odd lengths, for x1/x2/x4, 4/8/16/32/64-bit slots, `.rs` with two seeds.
        for (text, direct) in [
            ("cvt.rn.f16.f32", true),
            ("cvt.rn.satfinite.e4m3x2.f32", true),
            ("cvt.rz.satfinite.relu.e5m2x2.f32", true),
            ("cvt.rn.satfinite.e2m1x2.f32", true),
            ("cvt.rn.satfinite.e2m3x2.f32", true),
            ("cvt.rz.satfinite.ue8m0x2.f32", true),
            ("cvt.rn.f16x2.f32", true),
            ("cvt.rn.bf16x2.f32", true),
            ("cvt.rs.satfinite.e4m3x4.f32", true),
            ("cvt.rs.satfinite.e2m1x4.f32", true),
            ("cvt.rs.satfinite.e3m2x4.f32", true),
            ("cvt.rs.relu.satfinite.f16x2.f32", true),
            ("cvt.rs.satfinite.bf16x2.f32", true),
            ("cvt.rni.s32.f32", true),
            ("cvt.rni.s64.f32", true),
            ("cvt.rzi.u64.f32", true),
            ("cvt.rmi.ftz.s64.f32", true),
            ("cvt.rn.f64.f32", true),
            ("cvt.rn.f32.f16", true),
            ("cvt.rn.satfinite.e4m3x2.f16x2", false),
        ] {
            let form = parse_instruction(text).unwrap().form;
            let k = sweep_kernel(&form).unwrap();
            let total = Units::new(&k, Inputs::default()).instructions();
            let width = result_bytes(&k);
            for seed in [0u64, 7] {
                let d = Direct::new(&k, seed);
                assert_eq!(d.is_some(), direct, "{text}");
                let Some(d) = d else { continue };
                for (first, n) in [
                    (0u64, 5000u64),
                    (total / 3, 3 * DIRECT_CHUNK as u64 + 1),
                    (total - 777, 777),
                    (total - SWEEP_BLOCK, SWEEP_BLOCK),
                ] {
                    let (first, n) = (first.min(total), n.min(total - first.min(total)));
                    let len = n as usize * width;
                    let mut want = vec![0u8; len];
                    sweep_block(&k, &every(&k), seed, first, n, &mut want).unwrap();
                    // Into aligned words (wide results in place) and one byte off (through
                    // the copy).
                    let mut words = vec![0x5a5a_5a5a_5a5a_5a5au64; len / 8 + 2];
                    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
                    for at in [0, 1] {
                        let got = &mut bytes[at..at + len];
                        d.run(first, n, got, &mut DirectScratch::new()).unwrap();
                        assert!(
                            want == got,
                            "{text} seed {seed} block {first:#x}+{n} at {at}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn wide_sources_are_sampled_with_their_boundaries() {
        let form = parse_instruction("cvt.rn.f32.f64").unwrap().form;
        let k = sweep_kernel(&form).unwrap();
        let u = Units::new(
            &k,
            Inputs {
                sample: 1000,
                seed: 1,
            },
        );
        assert!(!u.exhaustive());
        assert!(u.count() > 400_000);
        let all: Vec<u64> = (0..u.count()).map(|i| u.get(i)).collect();
        assert!(all.contains(&0x7ff0_0000_0000_0000));
        assert!(all.contains(&0x3ff0_0000_1000_0000)); // bit 28: f32's rounding position
        let r = verify(
            &form,
            Inputs {
                sample: 1000,
                seed: 1,
            },
            3,
            &|_| {},
        )
        .unwrap();
        assert_eq!(r.mismatches, 0);
        assert!(matches!(
            sweep(&form, 0, &mut |_| Ok(()), &|_| {}),
            Err(Error::SweepTooWide { bits: 64 })
        ));
    }

    /// Every input of a form of at most 32-bit sources.
    fn every(k: &CvtKernel) -> Units {
        Units::new(k, Inputs { sample: 0, seed: 0 })
    }

    /// The bytes of a sweep with `inputs`, from one thread of a pool of three.
    fn swept(form: &CvtForm, inputs: &SweepInputs, block: u64) -> Result<Vec<u8>, Error> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut got = Vec::new();
        pool.install(|| {
            sweep_in_blocks(
                form,
                inputs,
                block,
                &mut |b| {
                    got.extend_from_slice(b);
                    Ok(())
                },
                &|_| {},
            )
        })?;
        Ok(got)
    }

    #[test]
    fn a_range_of_a_sweep_is_that_slice_of_the_whole() {
        // The direct path, the per-instruction path and a stochastic form, with ranges
        // across block boundaries, at the end, and a count past the end.
        for text in [
            "cvt.rn.f32.f16",
            "cvt.rn.f16x2.e4m3x2",
            "cvt.rs.satfinite.e4m3x4.f32",
        ] {
            let form = parse_instruction(text).unwrap().form;
            let k = sweep_kernel(&form).unwrap();
            let width = result_bytes(&k);
            let total = every(&k).instructions();
            let start = total - (1 << 16);
            let whole = swept(
                &form,
                &SweepInputs {
                    seed: 3,
                    first: start,
                    ..SweepInputs::default()
                },
                1000,
            )
            .unwrap();
            assert_eq!(whole.len() as u64, (1 << 16) * width as u64, "{text}");
            for (first, count) in [(0u64, 1u64), (999, 1002), (5000, 60_000), (65_000, 10_000)] {
                let got = swept(
                    &form,
                    &SweepInputs {
                        seed: 3,
                        first: start + first,
                        count: Some(count),
                        ..SweepInputs::default()
                    },
                    1000,
                )
                .unwrap();
                let end = (first + count).min(1 << 16);
                assert!(
                    got == whole[first as usize * width..end as usize * width],
                    "{text} {first}+{count}"
                );
            }
        }
        let form = parse_instruction("cvt.rn.f32.f16").unwrap().form;
        for first in [1u64 << 16, 1 << 40] {
            let r = swept(
                &form,
                &SweepInputs {
                    first,
                    ..SweepInputs::default()
                },
                1000,
            );
            assert!(
                matches!(r, Err(Error::SweepRange { total, .. }) if total == 1 << 16),
                "{first}"
            );
        }
    }

    #[test]
    fn a_sampled_sweep_converts_the_sampled_units() {
        // A 32-bit source (random units only), a pair of them per instruction, and a 64-bit
        // source (the boundary-dense set first): each result is the PTX model's for the
        // units `Units::sampled` lists, in memory order.
        for text in [
            "cvt.rn.f16.f32",
            "cvt.rn.satfinite.e4m3x2.f32",
            "cvt.rn.f32.f64",
        ] {
            let form = parse_instruction(text).unwrap().form;
            let k = sweep_kernel(&form).unwrap();
            let inputs = SweepInputs {
                seed: 5,
                sample: Some(3000),
                first: 100,
                count: Some(2500),
            };
            let units = Units::sampled(
                &k,
                Inputs {
                    sample: 3000,
                    seed: 5,
                },
            );
            assert!(!units.exhaustive());
            let got = swept(&form, &inputs, 1000).unwrap();
            let width = result_bytes(&k);
            let per = units.per_instruction();
            // The sample counts units: 3000 of them make 3000 / L instructions.
            let n = 2500.min(units.instructions() - 100) as usize;
            assert_eq!(got.len(), n * width, "{text}");
            let mut distinct = std::collections::HashSet::new();
            for (j, word) in got.chunks_exact(width).enumerate() {
                let i = 100 + j as u64;
                let memory: Vec<u64> = (0..per).map(|u| units.get(i * per + u)).collect();
                distinct.extend(memory.iter().copied());
                let ops = operands(&memory, false, None, &[]);
                let want = evaluate_bits(&form, &ops).unwrap().0;
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(word);
                assert_eq!(u64::from_le_bytes(b), want, "{text} instruction {i}");
            }
            // Not the first inputs in order: a sample.
            assert!(distinct.len() > n * per as usize * 9 / 10, "{text}");
            assert!(!distinct.contains(&1) || text.ends_with("f64"), "{text}");
        }
    }

    #[test]
    fn a_cvt_pack_sweep_keeps_the_whole_b32_register() {
        // `d` holds both saturated lanes (and `c` above them): a sweep keeps 32 bits, each
        // instruction the PTX model's result for its pair of units.
        for text in [
            "cvt.pack.sat.s8.s32.b32",
            "cvt.pack.sat.u4.s32.b32",
            "cvt.pack.sat.s16.s32",
        ] {
            let form = parse_instruction(text).unwrap().form;
            let k = sweep_kernel(&form).unwrap();
            assert_eq!((k.result_bits(), result_bytes(&k)), (32, 4), "{text}");
            let shape = sweep_shape(&form).unwrap();
            assert_eq!(shape.dst_bits, 32, "{text}");
            let first = 0x7fff_ff00u64;
            let got = swept(
                &form,
                &SweepInputs {
                    first,
                    count: Some(300),
                    ..SweepInputs::default()
                },
                128,
            )
            .unwrap();
            for (j, w) in got.chunks_exact(4).enumerate() {
                let i = first + j as u64;
                let ops = operands(&[2 * i, 2 * i + 1], false, None, k.extra_operands());
                let want = evaluate_bits(&form, &ops).unwrap().0 as u32;
                assert_eq!(
                    u32::from_le_bytes(w.try_into().unwrap()),
                    want,
                    "{text} {i}"
                );
            }
        }
    }
}
