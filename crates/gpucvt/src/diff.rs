//! Comparing two single-input conversions — of two ISAs or of one — over every input of
//! their source format (or, for 64-bit sources, a boundary-dense plus seeded random sample),
//! and sorting the inputs where they disagree into classes: what `gpucvt diff` prints.
//!
//! ```
//! use gpucvt::diff::{Comparison, DiffClass, Sweep};
//! use gpucvt::instr::{Instr, Options};
//! use gpucvt::visa::cr0::Cr0;
//! let opts = Options { cr0: Cr0::OPENCL, ..Options::default() };
//! // One source operand each, of the same width, results of the same width:
//! let a = Instr::parse("cvt.f32.f16", &opts).unwrap();
//! let b = Instr::parse("mov f <- hf", &opts).unwrap();
//! let c = Comparison::new(a, b).unwrap();
//! let r = c.run(&Sweep::Exhaustive, 3, &|_| {});
//! assert_eq!(r.inputs, 65536);
//! // f16 -> f32 is exact in both; only NaNs are encoded differently.
//! assert_eq!(r.differ, r.count(DiffClass::NanEncoding));
//! assert!(r.differ > 0);
//! ```
//!
//! # How the sweep is fast
//!
//! Sources of at most 16 bits: each instruction is evaluated once per input. 32-bit sources
//! (all 2^32 inputs): an instruction that is one core conversion of an `f32` lane into a
//! small float runs through the vectorised [`Kernel`] of `gpucvt-core` (NaN inputs, whose
//! encodings a vISA move derives from the payload, go through the exact path), chunk by
//! chunk on every core with rayon. Every fast path is checked against [`Instr::eval`] on a
//! boundary-dense probe set before it is used, and falls back to the exact path on any
//! disagreement. Conversions the kernels do not cover use the exact core per element —
//! correct, but minutes rather than seconds for 2^32 inputs.

use crate::core::convert::{Conversion, NanResult};
use crate::core::format::{Format, Layout, F32};
use crate::core::value::{Class, Value};
use crate::instr::{Instr, OperandSpec, Output};
use crate::kernels::{Kernel, Strategy};
use crate::visa::eval::Plan;
use crate::Error;
use rayon::prelude::*;
use std::cmp::Ordering;

/// Where two results differ, in the order they are tested: the first that fits is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiffClass {
    /// Both results are NaNs, with different encodings (sign, payload, canonical pattern).
    NanEncoding,
    /// One result is a NaN, the other a number.
    NanVsNumber,
    /// One result is infinite and the other finite, or the input lies outside the finite
    /// range of a result format (saturation against infinity, clamping against wrapping).
    Overflow,
    /// The input is subnormal (flushed by one, kept by the other), or one result is
    /// subnormal and the other is not a neighbour of it.
    Subnormal,
    /// Both results are zeros of opposite signs.
    SignOfZero,
    /// Both results are finite numbers of the same format and sign at most two encodings
    /// apart: a different rounding.
    Rounding,
    /// Anything else.
    Other,
}

impl DiffClass {
    /// Every class, in report order.
    pub const ALL: [DiffClass; 7] = [
        DiffClass::NanEncoding,
        DiffClass::NanVsNumber,
        DiffClass::Overflow,
        DiffClass::Subnormal,
        DiffClass::SignOfZero,
        DiffClass::Rounding,
        DiffClass::Other,
    ];

    /// A short stable name (`nan-encoding`, `nan-vs-number`, `overflow`, `subnormal`,
    /// `sign-of-zero`, `rounding`, `other`).
    pub fn name(self) -> &'static str {
        match self {
            DiffClass::NanEncoding => "nan-encoding",
            DiffClass::NanVsNumber => "nan-vs-number",
            DiffClass::Overflow => "overflow",
            DiffClass::Subnormal => "subnormal",
            DiffClass::SignOfZero => "sign-of-zero",
            DiffClass::Rounding => "rounding",
            DiffClass::Other => "other",
        }
    }

    /// One line saying what the class means.
    pub fn description(self) -> &'static str {
        match self {
            DiffClass::NanEncoding => "both results are NaN, encoded differently",
            DiffClass::NanVsNumber => "one result is NaN, the other a number",
            DiffClass::Overflow => {
                "out of range: one result infinite or saturated, the other not (or clamped vs wrapped)"
            }
            DiffClass::Subnormal => {
                "subnormal input or result: one flushes or loses it, the other keeps it"
            }
            DiffClass::SignOfZero => "both results are zero, with opposite signs",
            DiffClass::Rounding => "finite results one or two ulps apart: a different rounding",
            DiffClass::Other => "none of the above",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Which inputs a comparison runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Every bit pattern of the source width (at most 32 bits); for 64-bit sources, the
    /// default sample ([`DEFAULT_SAMPLE`] inputs, seed 0).
    Exhaustive,
    /// `count` inputs: the boundary-dense set of the source format first (as much of it as
    /// fits), then seeded pseudo-random patterns.
    Sample {
        /// How many inputs.
        count: u64,
        /// The seed of the random part.
        seed: u64,
    },
}

/// The sample size used for 64-bit sources when no size is given.
pub const DEFAULT_SAMPLE: u64 = 1_000_000;

/// One input where the two instructions differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Example {
    /// The source bits.
    pub input: u64,
    /// The first instruction's result bits.
    pub a: u128,
    /// The second instruction's result bits.
    pub b: u128,
}

/// The inputs of one class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassReport {
    /// The class.
    pub class: DiffClass,
    /// How many inputs fall in it.
    pub count: u64,
    /// Up to the requested number of examples, a deterministic spread over the class (the
    /// same inputs for the same comparison and sweep, whatever the thread count), sorted by
    /// input.
    pub examples: Vec<Example>,
}

/// The result of a comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// How many inputs were compared.
    pub inputs: u64,
    /// Whether they were every bit pattern of the source width.
    pub exhaustive: bool,
    /// The seed of the random part of a sample.
    pub seed: Option<u64>,
    /// On how many inputs the results differ.
    pub differ: u64,
    /// Every class, in [`DiffClass::ALL`] order (including empty ones).
    pub classes: Vec<ClassReport>,
}

impl Report {
    /// How many inputs fall in `class`.
    pub fn count(&self, class: DiffClass) -> u64 {
        self.classes[class.index()].count
    }

    /// The report of `class`.
    pub fn class(&self, class: DiffClass) -> &ClassReport {
        &self.classes[class.index()]
    }
}

/// How one side computes its result on a whole chunk of inputs.
enum Fast {
    /// A table over every input (sources of at most 16 bits).
    Table(Vec<u128>),
    /// The vectorised `f32` kernel; NaN inputs through the exact path if `nan_exact`.
    Kernel { kernel: Kernel, nan_exact: bool },
    /// The exact path per element.
    Exact,
}

/// The exact path of one side.
enum Exact {
    /// A scalar PTX form: one core conversion.
    Conversion(Conversion),
    /// A scalar vISA move: one plan.
    Plan(Plan),
    /// Anything: [`Instr::eval`].
    Instr,
}

/// One instruction of a comparison, and the layout of its operand and result.
struct Side {
    instr: Instr,
    source: OperandSpec,
    source_format: Format,
    /// Result lanes: (shift, format), most significant first.
    lanes: Vec<(u32, Format)>,
    width: u32,
    exact: Exact,
    fast: Fast,
    /// Per result lane: the smallest and largest finite value of its format.
    range: Vec<(Value, Value)>,
}

/// Two instructions, ready to compare.
pub struct Comparison {
    sides: [Side; 2],
}

impl std::fmt::Debug for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comparison")
            .field("a", &self.sides[0].instr.spelling())
            .field("b", &self.sides[1].instr.spelling())
            .finish()
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The destination bits of an output, wider than 64 bits for vISA packed sources.
fn combine(o: &Output) -> u128 {
    if o.width <= 64 {
        return o.bits as u128;
    }
    let mut wide = 0u128;
    for l in &o.lanes {
        if l.shift < 128 {
            wide |= (l.bits as u128) << l.shift;
        }
    }
    wide
}

/// The mixer of samples and of the choice of examples: SplitMix64's output function.
use crate::core::random::splitmix64 as mix;

/// [`Error::Incomparable`] with `message`.
fn incomparable(message: String) -> Error {
    Error::Incomparable { message }
}

impl Side {
    fn new(instr: Instr, which: &str) -> Result<Side, Error> {
        let ops = instr.operands();
        let spelling = instr.spelling();
        if ops.len() != 1 {
            let names: Vec<&str> = ops.iter().map(|o| o.name).collect();
            return Err(incomparable(format!(
                "{which} ({spelling}) takes {} source operands ({}); diff compares conversions of one source operand",
                ops.len(),
                names.join(", ")
            )));
        }
        let source = ops[0];
        let Some(source_format) = source.format else {
            return Err(incomparable(format!(
                "{which} ({spelling}) has no numeric source operand"
            )));
        };
        let probe = instr
            .eval(&[0])
            .map_err(|e| incomparable(format!("{which} ({spelling}): {e}")))?;
        if probe.width > 128 {
            return Err(incomparable(format!(
                "{which} ({spelling}) gives a {}-bit result; diff handles at most 128 bits",
                probe.width
            )));
        }
        let mut lanes: Vec<(u32, Format)> = probe
            .lanes
            .iter()
            .map(|l| {
                let f = l.conversions.last().map_or(source_format, |c| c.dst);
                (l.shift, f)
            })
            .collect();
        lanes.sort_by_key(|l| std::cmp::Reverse(l.0));
        let range = lanes
            .iter()
            .map(|(_, f)| {
                let lo = f
                    .min_finite_bits()
                    .map_or(Value::zero(false), |b| f.decode(b));
                (lo, f.decode(f.max_finite_bits()))
            })
            .collect();
        let single = probe.lanes.len() == 1 && probe.lanes[0].conversions.len() == 1;
        let exact = match &instr {
            Instr::Ptx(_) if single && source.lanes == 1 => {
                Exact::Conversion(probe.lanes[0].conversions[0])
            }
            Instr::Visa(v) if single && source.lanes == 1 && v.plan.steps.len() == 1 => {
                Exact::Plan(v.plan.clone())
            }
            _ => Exact::Instr,
        };
        let mut side = Side {
            instr,
            source,
            source_format,
            lanes,
            width: probe.width,
            exact,
            fast: Fast::Exact,
            range,
        };
        if !side.agrees(&Fast::Exact) {
            // A shortcut misread the instruction: every element goes through `Instr::eval`.
            side.exact = Exact::Instr;
        }
        side.fast = side.choose_fast();
        Ok(side)
    }

    /// The result through the exact path.
    fn exact(&self, x: u64) -> u128 {
        match &self.exact {
            Exact::Conversion(c) => (c.apply(x).bits & mask(c.dst.width())) as u128,
            Exact::Plan(p) => p.eval(x).bits as u128,
            Exact::Instr => self.instr.eval(&[x]).map_or(0, |o| combine(&o)),
        }
    }

    /// The result as [`Instr::eval`] gives it (the reference every fast path is checked
    /// against).
    fn reference(&self, x: u64) -> u128 {
        self.instr.eval(&[x]).map_or(0, |o| combine(&o))
    }

    fn choose_fast(&self) -> Fast {
        let bits = self.source.bits;
        if bits <= 16 {
            let table = (0..1u64 << bits)
                .into_par_iter()
                .map(|x| self.exact(x))
                .collect();
            return Fast::Table(table);
        }
        if bits == 32 && self.source_format == F32 && self.lanes.len() == 1 {
            let conversion = match &self.exact {
                Exact::Conversion(c) => Some(*c),
                Exact::Plan(p) if p.fixups.is_empty() => Some(p.steps[0].conversion),
                _ => None,
            };
            if let Some(c) = conversion {
                // The kernels produce canonical NaNs only; NaN inputs of the other rules
                // take the exact path.
                let mut k = c;
                k.policy.nan = NanResult::Canonical;
                let nan_exact = k != c || matches!(self.exact, Exact::Plan(_));
                let kernel = Kernel::new(k);
                if matches!(
                    kernel.strategy(),
                    Strategy::F32Small | Strategy::F32Ue8m0 | Strategy::F32Int
                ) {
                    let fast = Fast::Kernel { kernel, nan_exact };
                    if self.agrees(&fast) {
                        return fast;
                    }
                }
            }
        }
        Fast::Exact
    }

    /// Whether `fast` gives [`Instr::eval`]'s results on a boundary-dense probe set.
    fn agrees(&self, fast: &Fast) -> bool {
        let probes = sample_inputs(&self.source_format, self.source.bits, &[], 6000, 1);
        let mut out = vec![0u128; probes.len()];
        let mut scratch = Scratch::default();
        self.eval_with(fast, &probes, &mut out, &mut scratch);
        probes
            .iter()
            .zip(&out)
            .all(|(&x, &r)| self.reference(x) == r)
    }

    fn eval_chunk(&self, inputs: &[u64], out: &mut [u128], scratch: &mut Scratch) {
        self.eval_with(&self.fast, inputs, out, scratch);
    }

    fn eval_with(&self, fast: &Fast, inputs: &[u64], out: &mut [u128], scratch: &mut Scratch) {
        match fast {
            Fast::Table(t) => {
                let m = mask(self.source.bits) as usize;
                for (o, &x) in out.iter_mut().zip(inputs) {
                    *o = t[x as usize & m];
                }
            }
            Fast::Kernel { kernel, nan_exact } => {
                scratch.src.clear();
                scratch.src.extend(inputs.iter().map(|&x| x as u32));
                scratch.dst.clear();
                scratch.dst.resize(inputs.len(), 0);
                if kernel.convert(&scratch.src, &mut scratch.dst).is_err() {
                    for (o, &x) in out.iter_mut().zip(inputs) {
                        *o = self.exact(x);
                    }
                    return;
                }
                for ((o, &d), &x) in out.iter_mut().zip(&scratch.dst).zip(inputs) {
                    *o = d as u128;
                    if *nan_exact && (x as u32 & 0x7fff_ffff) > 0x7f80_0000 {
                        *o = self.exact(x);
                    }
                }
            }
            Fast::Exact => {
                for (o, &x) in out.iter_mut().zip(inputs) {
                    *o = self.exact(x);
                }
            }
        }
    }

    /// The source lanes of an input, most significant first.
    fn source_lanes(&self, x: u64) -> Vec<Value> {
        let n = self.source.lanes.max(1);
        let lb = self.source.bits / n;
        (0..n)
            .map(|k| {
                let shift = lb * (n - 1 - k);
                let bits = if shift >= 64 { 0 } else { x >> shift } & mask(lb);
                self.source_format.decode(bits)
            })
            .collect()
    }

    /// Result lane `j` (most significant first): its bits and format.
    fn lane(&self, r: u128, j: usize) -> (u64, &Format) {
        let (shift, f) = &self.lanes[j];
        let bits = if *shift >= 128 { 0 } else { r >> shift } as u64 & f.mask();
        (bits, f)
    }

    fn lane_bits(&self, r: u128) -> impl Iterator<Item = (u64, &Format)> + '_ {
        self.lanes.iter().map(move |(shift, f)| {
            let bits = if *shift >= 128 { 0 } else { r >> shift } as u64 & f.mask();
            (bits, f)
        })
    }
}

#[derive(Default)]
struct Scratch {
    inputs: Vec<u64>,
    a: Vec<u128>,
    b: Vec<u128>,
    src: Vec<u32>,
    dst: Vec<u64>,
    dst2: Vec<u64>,
}

/// What a float or integer encoding is, for classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Nan,
    Inf,
    Zero,
    Subnormal,
    Number,
}

fn kind(f: &Format, bits: u64) -> Kind {
    match f.decode(bits).class {
        Class::Nan { .. } => Kind::Nan,
        Class::Infinite => Kind::Inf,
        Class::Zero => Kind::Zero,
        Class::Finite(_) if f.is_float() && f.is_subnormal(bits) => Kind::Subnormal,
        Class::Finite(_) => Kind::Number,
    }
}

fn out_of_range(v: &Value, range: &(Value, Value)) -> bool {
    matches!(v.partial_cmp_value(&range.0), Some(Ordering::Less))
        || matches!(v.partial_cmp_value(&range.1), Some(Ordering::Greater))
}

/// Whether two encodings of one format are at most two steps apart with the same sign.
fn neighbours(f: &Format, a: u64, b: u64) -> bool {
    match f.layout {
        Layout::Float(_) => {
            let sign = f.sign_bit().unwrap_or(0);
            (a ^ b) & sign == 0 && (a & !sign).abs_diff(b & !sign) <= 2
        }
        Layout::Fixed(l) => {
            let w = l.bits.clamp(1, 64);
            let as_int = |x: u64| -> i128 {
                if l.signed && (x >> (w - 1)) & 1 == 1 {
                    x as i128 - (1i128 << w)
                } else {
                    x as i128
                }
            };
            (as_int(a) - as_int(b)).abs() <= 2
        }
    }
}

impl Comparison {
    /// Two instructions to compare: each must take one source operand, of the same width,
    /// and give results of the same width.
    ///
    /// # Errors
    /// An instruction with more or fewer source operands, different source or result widths.
    pub fn new(a: Instr, b: Instr) -> Result<Comparison, Error> {
        let (sa, sb) = (a.spelling(), b.spelling());
        let probe = |i: &Instr, which: &str, s: &str| -> Result<(), Error> {
            let n = i.operands().len();
            if n != 1 {
                let names: Vec<&str> = i.operands().iter().map(|o| o.name).collect();
                return Err(incomparable(format!(
                    "{which} ({s}) takes {n} source operands ({}); diff compares conversions of exactly one source operand",
                    names.join(", ")
                )));
            }
            Ok(())
        };
        probe(&a, "the first instruction", &sa)?;
        probe(&b, "the second instruction", &sb)?;
        let (wa, wb) = (a.operands()[0].bits, b.operands()[0].bits);
        if wa != wb {
            return Err(incomparable(format!(
                "the source operands differ in width: {sa} reads {wa} bits, {sb} reads {wb} bits"
            )));
        }
        let (ra, rb) = (a.result_bits(), b.result_bits());
        if ra != rb {
            return Err(incomparable(format!(
                "the results differ in width: {sa} gives {ra} bits, {sb} gives {rb} bits"
            )));
        }
        let a = Side::new(a, "the first instruction")?;
        let b = Side::new(b, "the second instruction")?;
        if a.width != b.width {
            return Err(incomparable(format!(
                "the results differ in width: {sa} gives {} bits, {sb} gives {} bits",
                a.width, b.width
            )));
        }
        Ok(Comparison { sides: [a, b] })
    }

    /// The instruction of side `i` (0 = first, 1 = second).
    pub fn instr(&self, i: usize) -> &Instr {
        &self.sides[i.min(1)].instr
    }

    /// The width of the source operand.
    pub fn source_bits(&self) -> u32 {
        self.sides[0].source.bits
    }

    /// The width of the results.
    pub fn result_bits(&self) -> u32 {
        self.sides[0].width
    }

    /// The format (of each lane) side `i` reads its source as.
    pub fn source_format(&self, i: usize) -> Format {
        self.sides[i.min(1)].source_format
    }

    /// How many lanes side `i`'s source packs.
    pub fn source_lanes(&self, i: usize) -> u32 {
        self.sides[i.min(1)].source.lanes.max(1)
    }

    /// The formats of side `i`'s result lanes, most significant first.
    pub fn result_formats(&self, i: usize) -> Vec<Format> {
        self.sides[i.min(1)].lanes.iter().map(|l| l.1).collect()
    }

    /// The source value(s) of an input as side `i` reads them, most significant lane first.
    pub fn decode_input(&self, i: usize, x: u64) -> Vec<Value> {
        self.sides[i.min(1)].source_lanes(x)
    }

    /// The result value(s) of side `i`, most significant lane first.
    pub fn decode_result(&self, i: usize, r: u128) -> Vec<Value> {
        self.sides[i.min(1)]
            .lane_bits(r)
            .map(|(b, f)| f.decode(b))
            .collect()
    }

    /// The number of inputs `sweep` means for this comparison, and whether it is every
    /// input.
    pub fn planned_inputs(&self, sweep: &Sweep) -> (u64, bool) {
        match *sweep {
            Sweep::Exhaustive if self.source_bits() <= 32 => (1u64 << self.source_bits(), true),
            Sweep::Exhaustive => (DEFAULT_SAMPLE, false),
            Sweep::Sample { count, .. } => (count, false),
        }
    }

    /// Classifies an input where the results differ.
    pub fn classify(&self, x: u64, ra: u128, rb: u128) -> DiffClass {
        let [a, b] = &self.sides;
        // The first lane that differs decides.
        let lanes = a.lanes.len().min(b.lanes.len());
        let Some(j) = (0..lanes).find(|&j| a.lane(ra, j).0 != b.lane(rb, j).0) else {
            return DiffClass::Other;
        };
        let ((ba, fa), (bb, fb)) = (a.lane(ra, j), b.lane(rb, j));
        let ka = kind(fa, ba);
        let kb = kind(fb, bb);
        match (ka == Kind::Nan, kb == Kind::Nan) {
            (true, true) => return DiffClass::NanEncoding,
            (true, false) | (false, true) => return DiffClass::NanVsNumber,
            _ => {}
        }
        if (ka == Kind::Inf) != (kb == Kind::Inf) {
            return DiffClass::Overflow;
        }
        // The source lane feeding result lane j, as each side reads it: (value, subnormal).
        let source = |s: &Side| -> Option<(Value, bool)> {
            let n = s.source.lanes.max(1);
            if n as usize != s.lanes.len() {
                return None;
            }
            let lbits = s.source.bits / n;
            let shift = lbits * (n - 1 - j as u32);
            let raw = if shift >= 64 { 0 } else { x >> shift } & mask(lbits);
            let sub = s.source_format.is_float() && s.source_format.is_subnormal(raw);
            Some((s.source_format.decode(raw), sub))
        };
        let (sa, sb) = (source(a), source(b));
        let beyond = |src: &Option<(Value, bool)>, s: &Side| {
            src.as_ref()
                .is_some_and(|(v, _)| !v.is_nan() && out_of_range(v, &s.range[j]))
        };
        if beyond(&sa, a) || beyond(&sb, b) {
            return DiffClass::Overflow;
        }
        if sa.is_some_and(|s| s.1) || sb.is_some_and(|s| s.1) {
            return DiffClass::Subnormal;
        }
        if ka == Kind::Zero && kb == Kind::Zero {
            return DiffClass::SignOfZero;
        }
        if fa == fb && neighbours(fa, ba, bb) {
            return DiffClass::Rounding;
        }
        if ka == Kind::Subnormal || kb == Kind::Subnormal {
            return DiffClass::Subnormal;
        }
        DiffClass::Other
    }

    /// The exhaustive 32-bit sweep of inputs `start..end` when both sides run the `f32`
    /// kernels: 32-bit sources and 64-bit results in cache-sized buffers, the exact path
    /// only for NaN inputs that need it and for classification.
    fn kernel_chunk(
        &self,
        start: u64,
        end: u64,
        examples: usize,
        scratch: &mut Scratch,
    ) -> Option<Tally> {
        let [a, b] = &self.sides;
        let (
            Fast::Kernel {
                kernel: ka,
                nan_exact: na,
            },
            Fast::Kernel {
                kernel: kb,
                nan_exact: nb,
            },
        ) = (&a.fast, &b.fast)
        else {
            return None;
        };
        let mut t = Tally::new(examples);
        const STEP: u64 = 4096;
        let mut lo = start;
        while lo < end {
            let hi = (lo + STEP).min(end);
            scratch.src.clear();
            scratch.src.extend((lo..hi).map(|x| x as u32));
            let n = scratch.src.len();
            scratch.dst.clear();
            scratch.dst.resize(n, 0);
            scratch.dst2.clear();
            scratch.dst2.resize(n, 0);
            if ka.convert(&scratch.src, &mut scratch.dst).is_err()
                || kb.convert(&scratch.src, &mut scratch.dst2).is_err()
            {
                return None;
            }
            for i in 0..n {
                let x = scratch.src[i];
                let (mut ra, mut rb) = (scratch.dst[i] as u128, scratch.dst2[i] as u128);
                if (x & 0x7fff_ffff) > 0x7f80_0000 {
                    if *na {
                        ra = a.exact(x as u64);
                    }
                    if *nb {
                        rb = b.exact(x as u64);
                    }
                }
                if ra != rb {
                    let class = self.classify(x as u64, ra, rb);
                    t.add(
                        class,
                        lo + i as u64,
                        Example {
                            input: x as u64,
                            a: ra,
                            b: rb,
                        },
                    );
                }
            }
            lo = hi;
        }
        Some(t)
    }

    /// Runs the comparison over `sweep`, keeping `examples` examples per class. `progress`
    /// is called from the worker threads with the number of inputs just finished.
    pub fn run(&self, sweep: &Sweep, examples: usize, progress: &(dyn Fn(u64) + Sync)) -> Report {
        let (count, exhaustive) = self.planned_inputs(sweep);
        let seed = match *sweep {
            Sweep::Sample { seed, .. } => Some(seed),
            Sweep::Exhaustive if !exhaustive => Some(0),
            Sweep::Exhaustive => None,
        };
        let list: Option<Vec<u64>> = if exhaustive {
            None
        } else {
            let mut extra = Vec::new();
            for s in &self.sides {
                for (_, f) in &s.lanes {
                    extra.push(*f);
                }
            }
            Some(sample_inputs(
                &self.sides[0].source_format,
                self.source_bits(),
                &extra,
                count,
                seed.unwrap_or(0),
            ))
        };
        const CHUNK: u64 = 1 << 16;
        let chunks = count.div_ceil(CHUNK);
        let tally = (0..chunks)
            .into_par_iter()
            .map_init(Scratch::default, |scratch, c| {
                let start = c * CHUNK;
                let end = (start + CHUNK).min(count);
                if list.is_none() {
                    if let Some(t) = self.kernel_chunk(start, end, examples, scratch) {
                        progress(end - start);
                        return t;
                    }
                }
                let mut inputs = std::mem::take(&mut scratch.inputs);
                inputs.clear();
                match &list {
                    None => inputs.extend(start..end),
                    Some(l) => inputs.extend_from_slice(&l[start as usize..end as usize]),
                }
                let n = inputs.len();
                let mut ra = std::mem::take(&mut scratch.a);
                let mut rb = std::mem::take(&mut scratch.b);
                ra.clear();
                ra.resize(n, 0);
                rb.clear();
                rb.resize(n, 0);
                self.sides[0].eval_chunk(&inputs, &mut ra, scratch);
                self.sides[1].eval_chunk(&inputs, &mut rb, scratch);
                let mut t = Tally::new(examples);
                for i in 0..n {
                    if ra[i] != rb[i] {
                        let class = self.classify(inputs[i], ra[i], rb[i]);
                        t.add(
                            class,
                            start + i as u64,
                            Example {
                                input: inputs[i],
                                a: ra[i],
                                b: rb[i],
                            },
                        );
                    }
                }
                scratch.inputs = inputs;
                scratch.a = ra;
                scratch.b = rb;
                progress(n as u64);
                t
            })
            .reduce(|| Tally::new(examples), Tally::merge);
        let differ = tally.counts.iter().sum();
        let classes = DiffClass::ALL
            .iter()
            .zip(tally.counts.iter().zip(tally.examples))
            .map(|(&class, (&count, ex))| {
                let mut examples: Vec<Example> = ex.into_iter().map(|(_, e)| e).collect();
                examples.sort_by_key(|e| e.input);
                ClassReport {
                    class,
                    count,
                    examples,
                }
            })
            .collect();
        Report {
            inputs: count,
            exhaustive,
            seed,
            differ,
            classes,
        }
    }
}

/// Per-class counts and the examples with the smallest keys (a deterministic spread).
struct Tally {
    keep: usize,
    counts: [u64; 7],
    /// (key, example), at most `keep` per class.
    examples: [Vec<(u64, Example)>; 7],
}

impl Tally {
    fn new(keep: usize) -> Tally {
        Tally {
            keep,
            counts: [0; 7],
            examples: Default::default(),
        }
    }

    fn add(&mut self, class: DiffClass, index: u64, e: Example) {
        let i = class.index();
        self.counts[i] += 1;
        if self.keep == 0 {
            return;
        }
        let key = mix(index);
        let v = &mut self.examples[i];
        if v.len() < self.keep {
            v.push((key, e));
        } else if let Some(worst) = v.iter_mut().max_by_key(|(k, _)| *k) {
            if key < worst.0 {
                *worst = (key, e);
            }
        }
    }

    fn merge(mut self, other: Tally) -> Tally {
        for i in 0..7 {
            self.counts[i] += other.counts[i];
            self.examples[i].extend(other.examples[i].iter().copied());
            self.examples[i].sort_by_key(|(k, e)| (*k, e.input));
            self.examples[i].truncate(self.keep);
        }
        self
    }
}

/// A boundary-dense plus pseudo-random set of `count` source patterns of `bits` bits read as
/// `format`: special values, every binade's edges and the half-ulp points of the `targets`'
/// precisions (for floats), powers of two and their neighbours (for integers), then seeded
/// random patterns — half of them uniform, half drawn near the targets' ranges.
pub fn sample_inputs(
    format: &Format,
    bits: u32,
    targets: &[Format],
    count: u64,
    seed: u64,
) -> Vec<u64> {
    let m = mask(bits);
    let mut out: Vec<u64> = Vec::new();
    let mut mids: Vec<u64> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut push = |out: &mut Vec<u64>, x: u64| {
        let x = x & m;
        if seen.insert(x) {
            out.push(x);
        }
    };
    // Precisions worth probing: the targets' mantissa widths (and integer widths).
    let mut precisions: Vec<u32> = targets
        .iter()
        .map(|f| match f.layout {
            Layout::Float(l) => l.man_bits,
            Layout::Fixed(l) => l.bits,
        })
        .collect();
    precisions.extend([0, 1, 2, 3, 7, 10, 23]);
    precisions.sort_unstable();
    precisions.dedup();
    match format.layout {
        // Packed sources (several lanes in one operand) get only the random part.
        _ if format.width() != bits => {}
        Layout::Float(l) if l.exp_bits + l.man_bits < 64 => {
            let man = l.man_bits;
            let sign = format.sign_bit().unwrap_or(0);
            let shift = l.pad_bits;
            for e in 0..(1u64 << l.exp_bits) {
                let edges = [0u64, 1, 2, mask(man), mask(man) - 1];
                let mut mans = Vec::new();
                for &p in &precisions {
                    if p < man {
                        let half = 1u64 << (man - p - 1);
                        let ulp = half << 1;
                        for base in [half, ulp + half, half.wrapping_sub(1), half + 1] {
                            mans.push(base & mask(man));
                        }
                        mans.push((ulp + half - 1) & mask(man));
                        mans.push((ulp + half + 1) & mask(man));
                    }
                }
                for mm in edges {
                    let enc = ((e << man) | mm) << shift;
                    push(&mut out, enc);
                    if sign != 0 {
                        push(&mut out, enc | sign);
                    }
                }
                for mm in mans {
                    let enc = ((e << man) | mm) << shift;
                    push(&mut mids, enc);
                    if sign != 0 {
                        push(&mut mids, enc | sign);
                    }
                }
            }
        }
        _ => {
            for p in 0..bits.min(64) {
                let base = 1u64 << p;
                for d in [0u64, 1, 2] {
                    for x in [base.wrapping_add(d), base.wrapping_sub(d)] {
                        push(&mut out, x);
                        push(&mut out, x.wrapping_neg());
                    }
                }
                for &q in &precisions {
                    if q + 1 < p {
                        let half = 1u64 << (p - q - 1);
                        for x in [
                            base + half,
                            base + half - 1,
                            base + half + 1,
                            base + 3 * half,
                        ] {
                            push(&mut mids, x);
                            push(&mut mids, x.wrapping_neg());
                        }
                    }
                }
            }
            push(&mut out, m);
            push(&mut out, m >> 1);
        }
    }
    // The edges (specials, binade ends, powers of two) first, then the half-ulp points; a
    // part that does not fit is thinned evenly (a deterministic shuffle, then a prefix).
    let thin = |v: Vec<u64>, keep: u64| -> Vec<u64> {
        let mut keys: Vec<(u64, u64)> = v.iter().map(|&x| (mix(x ^ 0x5eed), x)).collect();
        keys.sort_unstable();
        keys.into_iter().take(keep as usize).map(|k| k.1).collect()
    };
    if out.len() as u64 > count {
        out = thin(out, count);
    } else {
        let room = count - out.len() as u64;
        out.extend(thin(mids, room));
    }
    let mut state = mix(seed ^ 0xd1ff);
    let mut i = 0u64;
    while (out.len() as u64) < count {
        state = mix(state.wrapping_add(i));
        i += 1;
        let r = state;
        let x = if i.is_multiple_of(2) {
            r
        } else {
            match format.layout {
                Layout::Float(l) if l.exp_bits + l.man_bits < 64 && format.width() == bits => {
                    // An exponent within ±160 binades of 1.
                    let span = 320.min(1u64 << l.exp_bits);
                    let e = (l.bias as i64 - (span as i64) / 2 + ((r >> 48) % span) as i64)
                        .clamp(0, mask(l.exp_bits) as i64) as u64;
                    let mm = r & mask(l.man_bits);
                    let s = (r >> 63) & 1;
                    let enc = ((e << l.man_bits) | mm) << l.pad_bits;
                    enc | if s == 1 {
                        format.sign_bit().unwrap_or(0)
                    } else {
                        0
                    }
                }
                _ => {
                    let len = (r >> 58) as u32 % bits.max(1);
                    let v = (r & mask(len + 1)) | (1 << len);
                    if (r >> 57) & 1 == 1 {
                        v.wrapping_neg()
                    } else {
                        v
                    }
                }
            }
        };
        // Duplicates are harmless in the random part.
        out.push(x & m);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::Options;
    use crate::visa::cr0::{Cr0, RoundingMode};

    fn cmp(a: &str, b: &str, cr0: Cr0) -> Result<Comparison, Error> {
        let opts = Options {
            cr0,
            ..Options::default()
        };
        let a = Instr::parse(a, &opts)?;
        let b = Instr::parse(b, &opts)?;
        Comparison::new(a, b)
    }

    fn sample(n: u64) -> Sweep {
        Sweep::Sample { count: n, seed: 7 }
    }

    #[test]
    fn f16_from_f32_under_rne_differs_only_in_nans() {
        // PTX cvt.rn.f16.f32: IEEE RNE, subnormals kept, canonical NaN 0x7fff.
        // vISA mov hf <- f with cr0 0x4C0: RNE, subnormals kept, NaN quieted with its sign
        // and top payload bits. Numbers agree; only NaN inputs can differ, and both give a
        // NaN.
        let c = cmp("cvt.rn.f16.f32", "mov hf <- f", Cr0::OPENCL).unwrap();
        let r = c.run(&sample(300_000), 4, &|_| {});
        assert!(r.differ > 0);
        assert_eq!(r.differ, r.count(DiffClass::NanEncoding), "{r:?}");
        for e in &r.class(DiffClass::NanEncoding).examples {
            assert!((e.input as u32 & 0x7fff_ffff) > 0x7f80_0000);
            assert_eq!(e.a, 0x7fff);
        }
        assert_eq!(r.class(DiffClass::NanEncoding).examples.len(), 4);
    }

    #[test]
    fn f16_from_f32_under_rtz_rounds_differently() {
        let rtz = Cr0::OPENCL.with_rounding_mode(RoundingMode::Rtz);
        let c = cmp("cvt.rn.f16.f32", "mov hf <- f", rtz).unwrap();
        let r = c.run(&sample(300_000), 2, &|_| {});
        assert!(r.count(DiffClass::Rounding) > 1000, "{r:?}");
        assert!(r.count(DiffClass::Overflow) > 0, "{r:?}");
        assert!(r.count(DiffClass::NanEncoding) > 0, "{r:?}");
        assert_eq!(r.count(DiffClass::Other), 0, "{r:?}");
        assert_eq!(r.count(DiffClass::NanVsNumber), 0, "{r:?}");
        // Rounding examples: finite, one ulp apart, the RNE one is never smaller in
        // magnitude.
        for e in &r.class(DiffClass::Rounding).examples {
            assert_eq!((e.a & 0x7fff).abs_diff(e.b & 0x7fff), 1);
            assert!(e.a & 0x7fff > e.b & 0x7fff);
        }
        // 65520 overflows to inf under RNE, to 65504 under RTZ.
        let x = 65520f32.to_bits() as u64;
        assert_eq!(c.classify(x, 0x7c00, 0x7bff), DiffClass::Overflow);
    }

    #[test]
    fn the_fast_path_matches_the_exact_path() {
        let c = cmp("cvt.rn.f16.f32", "mov hf <- f", Cr0::OPENCL).unwrap();
        assert!(matches!(c.sides[0].fast, Fast::Kernel { .. }));
        assert!(matches!(
            c.sides[1].fast,
            Fast::Kernel {
                nan_exact: true,
                ..
            }
        ));
        let inputs = sample_inputs(&F32, 32, &[], 20_000, 3);
        for s in &c.sides {
            let mut out = vec![0; inputs.len()];
            s.eval_chunk(&inputs, &mut out, &mut Scratch::default());
            for (&x, &r) in inputs.iter().zip(&out) {
                assert_eq!(r, s.reference(x), "{} {x:#x}", s.instr.spelling());
            }
        }
    }

    #[test]
    fn sixteen_bit_sources_are_exhaustive() {
        // f16 -> f32 is exact on both sides; PTX gives the canonical NaN, vISA keeps the
        // payload.
        let c = cmp("cvt.f32.f16", "mov f <- hf", Cr0::OPENCL).unwrap();
        let r = c.run(&Sweep::Exhaustive, 2, &|_| {});
        assert!(r.exhaustive);
        assert_eq!(r.inputs, 1 << 16);
        // NaN inputs: 2 × 1023; the quiet all-ones payload with a positive sign agrees.
        // NaN inputs: 2 × 1023. PTX gives 0x7fffffff, vISA keeps the payload (the low 13
        // bits zero): every one differs, and nothing else does.
        assert_eq!(r.differ, r.count(DiffClass::NanEncoding));
        assert_eq!(r.differ, 2 * 1023);
        // The same instruction against itself never differs.
        let c = cmp("cvt.rn.f16.f32", "cvt.rn.f16.f32", Cr0::OPENCL).unwrap();
        assert_eq!(c.run(&sample(50_000), 3, &|_| {}).differ, 0);
    }

    #[test]
    fn integer_sources_and_saturation() {
        // s16 -> s8: PTX .sat clamps, vISA mov keeps the low bits: out-of-range inputs
        // whose low byte is not the clamped value differ, as overflow.
        let c = cmp("cvt.sat.s8.s16", "mov b <- w", Cr0::OPENCL).unwrap();
        let r = c.run(&Sweep::Exhaustive, 3, &|_| {});
        let expected = (0..=u16::MAX)
            .filter(|&x| {
                let v = x as i16;
                (v.clamp(-128, 127) as i8) != (v as i8)
            })
            .count() as u64;
        assert_eq!(r.differ, expected);
        assert_eq!(r.differ, r.count(DiffClass::Overflow));
        // Without .sat both keep the low bits.
        let c = cmp("cvt.s8.s16", "mov b <- w", Cr0::OPENCL).unwrap();
        assert_eq!(c.run(&Sweep::Exhaustive, 3, &|_| {}).differ, 0);
    }

    #[test]
    fn f64_sources_are_sampled() {
        let c = cmp("cvt.rn.f32.f64", "mov f <- df", Cr0::OPENCL).unwrap();
        let (n, exhaustive) = c.planned_inputs(&Sweep::Exhaustive);
        assert_eq!((n, exhaustive), (DEFAULT_SAMPLE, false));
        let r = c.run(&sample(20_000), 2, &|_| {});
        assert_eq!(r.inputs, 20_000);
        assert_eq!(r.differ, r.count(DiffClass::NanEncoding));
        let rtz = Cr0::OPENCL.with_rounding_mode(RoundingMode::Rtz);
        let c = cmp("cvt.rn.f32.f64", "mov f <- df", rtz).unwrap();
        let r = c.run(&sample(20_000), 2, &|_| {});
        assert!(r.count(DiffClass::Rounding) > 100);
    }

    #[test]
    fn reports_are_deterministic() {
        let rtz = Cr0::OPENCL.with_rounding_mode(RoundingMode::Rtz);
        let c = cmp("cvt.rn.f16.f32", "mov hf <- f", rtz).unwrap();
        let one = c.run(&sample(200_000), 5, &|_| {});
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let two = pool.install(|| c.run(&sample(200_000), 5, &|_| {}));
        assert_eq!(one, two);
    }

    #[test]
    fn mismatched_shapes_are_refused() {
        let e = cmp("cvt.rn.f16.f32", "mov f <- hf", Cr0::OPENCL).unwrap_err();
        assert!(
            matches!(&e, Error::Incomparable { message } if message.contains("source operands differ in width")),
            "{e}"
        );
        let e = cmp("cvt.rn.f16.f32", "mov f <- f", Cr0::OPENCL).unwrap_err();
        assert!(
            matches!(&e, Error::Incomparable { message } if message.contains("results differ in width")),
            "{e}"
        );
        let e = cmp("cvt.rn.f16x2.f32", "mov hf <- f", Cr0::OPENCL).unwrap_err();
        assert!(
            matches!(&e, Error::Incomparable { message } if message.contains("takes 2 source operands")),
            "{e}"
        );
    }

    #[test]
    fn samples_hold_boundaries() {
        let s = sample_inputs(&crate::core::format::F64, 64, &[F32], 100_000, 1);
        assert_eq!(s.len(), 100_000);
        assert!(s.contains(&0x7ff0_0000_0000_0000));
        assert!(s.contains(&0x0000_0000_0000_0001));
        assert!(s.contains(&1f64.to_bits()));
        // A half-ulp point of f32 above 1.0.
        assert!(s.contains(&(1f64.to_bits() | 1 << 28)));
        let small = sample_inputs(&crate::core::format::F64, 64, &[], 10, 1);
        assert_eq!(small.len(), 10);
    }
}
