//! Conversions: a source format, a destination format, a rounding and a [`Policy`].
//!
//! The ISA dialects differ in the knobs of [`Policy`], never in the arithmetic: every
//! conversion decodes exactly, applies the policy's input rules, calls the one rounding
//! routine ([`crate::round::round_magnitude`]; into a fixed-point destination, the same
//! steps in 64-bit arithmetic for a decoded value) and applies the policy's output rules.
//!
//! The order of the steps, for a float destination:
//!
//! 1. decode the source exactly; with [`Policy::flush_inputs`], a subnormal becomes a zero of
//!    the same sign;
//! 2. NaN: `.sat` gives +0; a destination without NaN gives what [`Policy::no_nan`] says
//!    (+largest finite by default; `invalid` is set); otherwise the NaN rule of
//!    [`Policy::nan`] (`.relu` always canonical);
//! 3. multiply by 2^[`Policy::scale`] (exact);
//! 4. infinity: `.sat` clamps, `.relu` gives +0 for −∞, `.satfinite` gives ±largest finite;
//!    otherwise infinity, or NaN for a destination without infinity (of the value's sign
//!    under the NaN rules after [`NanResult::Payload`]), or the largest finite value for a
//!    destination with neither;
//! 5. an unsigned float destination (`ue8m0`, `ue4m3`, `ue5m3`) takes the magnitude
//!    (NVIDIA: "the destination sign is not supported"), or with
//!    [`Policy::unrepresentable_nan`] gives NaN for a negative value (and a destination
//!    without zero for a zero);
//! 6. `.sat` clamps to [0, 1] (every value ≤ 0 and −0 give +0); `.relu` turns negatives into +0;
//! 7. round (with [`Policy::lowest_binade_up`], up between the two smallest values of a
//!    destination without zero); a result beyond the largest finite value overflows: to the
//!    largest finite value with `.satfinite` or [`Overflow::Saturate`], to infinity with
//!    [`Overflow::Infinite`], otherwise as IEEE 754 says for the direction (infinity or
//!    largest finite), with NaN standing in for infinity where the format has no infinity;
//! 8. with [`Policy::flush_outputs`], a subnormal result becomes a zero of the same sign;
//!    with [`Policy::positive_zero`] (and `.relu`), −0 becomes +0. A destination without −0
//!    (the fnuz formats, [`crate::format::Specials::Fnuz`]) gives +0 for every zero result.
//!
//! For an integer or fixed-point destination: NaN gives [`Policy::int_nan`] (or, with
//! `.satfinite`, the largest value, as for every destination without NaN), `.relu` turns
//! negative inputs (−∞ included) into 0, infinities and out-of-range results clamp to the
//! range ([`IntOverflow::Clamp`] or `.sat`) or keep the low bits ([`IntOverflow::Wrap`], the
//! integer `chop`).
//!
//! ```
//! use gpucvt_core::{convert::{Conversion, Policy}, format::{F32, E4M3}, round::Rounding};
//! let cvt = Conversion::new(F32, E4M3, Rounding::RN, Policy { satfinite: true, ..Policy::default() });
//! assert_eq!(cvt.apply(0x4396_0000).bits, 0x79); // 300.0 → 288
//! assert_eq!(cvt.apply(0x7f80_0000).bits, 0x7e); // +inf → 448
//! ```

use crate::format::{FixedLayout, Format, Layout, ZeroExponent};
use crate::round::{
    round_below_step_u64, round_magnitude, Direction, Magnitude, Rounded, Rounding,
};
use crate::value::{Class, Dyadic, Value};
use core::fmt;

/// What a float result that overflows becomes (without `.satfinite`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Overflow {
    /// IEEE 754: infinity or the largest finite value, by rounding direction.
    #[default]
    Ieee,
    /// Always the largest finite value of the same sign.
    Saturate,
    /// Always infinity (NaN in a destination without infinity; the largest finite value in
    /// one with neither), whatever the rounding direction: overflow judged on the rounded
    /// value alone. AMD's FP8 conversions with MODE.FP16_OVFL = 0, whose stochastic
    /// rounding truncates 500 to 480, beyond e4m3's 448, and gives NaN where IEEE 754's
    /// toward-zero rule would give 448.
    Infinite,
}

/// What a NaN becomes in a destination that has NaNs.
///
/// The rules after `Payload` are those of other libraries' conversions (see
/// `gpucvt::compat`); under them the NaN that stands in for an infinity or an overflow in a
/// destination without infinity (`e4m3`, the fnuz formats, `ue8m0`) takes the value's sign
/// too (`0xff` for −∞ into `e4m3`), where `Canonical` and `Payload` give the canonical NaN.
/// A destination with one NaN (the fnuz formats) or without a sign (`ue8m0`) keeps only what
/// it can hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum NanResult {
    /// The destination's canonical NaN ([`Format::canonical_nan`]).
    #[default]
    Canonical,
    /// The source's sign and payload, truncated or extended as the mantissa widths require
    /// (what a plain bit shift such as `bf16` → `f32` does).
    Payload,
    /// The source's sign and payload with the quiet bit set: x86's conversion instructions
    /// (`cvtsd2ss`, `vcvtps2ph`).
    Quieted,
    /// The quiet NaN without payload (only the quiet bit of the mantissa set), of the
    /// source's sign: ml_dtypes; XLA's `bf16` and `e5m2`.
    SignedQuiet,
    /// The canonical NaN (every mantissa bit set) of the source's sign: PyTorch's FP8
    /// conversions, XLA's `e4m3`.
    SignedCanonical,
    /// The canonical NaN with the sign bit set, whatever the source's sign (`0xffff` in
    /// `bf16`): PyTorch's vectorised `f32` → `bf16` copy.
    NegativeCanonical,
}

/// What a NaN becomes in a float destination without NaN (`e2m1`, `e2m3`, `e3m2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum NoNanResult {
    /// The largest finite value, positive (PTX: "NaN results are converted to positive
    /// MAX_NORM").
    #[default]
    LargestFinite,
    /// −0, whatever the NaN's sign (XLA's `f4e2m1fn`).
    NegativeZero,
    /// A zero of the other sign: +NaN gives −0, −NaN gives +0 (ml_dtypes, whose NaN stand-in
    /// for these formats is the pattern of −0, negated for a negative NaN).
    OppositeZero,
}

/// What a NaN becomes in an integer or fixed-point destination.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum IntNan {
    /// Zero.
    #[default]
    Zero,
    /// `1 << (width − 1)`: the most negative value of a signed type, `MAXINT/2 + 1` of an
    /// unsigned one.
    HighBit,
}

/// What an integer or fixed-point result outside the destination range becomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum IntOverflow {
    /// Clamp to the range (float-to-integer conversions).
    #[default]
    Clamp,
    /// Keep the low bits (integer `chop`); NaN and infinities still follow `int_nan` and
    /// clamping.
    Wrap,
}

/// The knobs that differ between ISAs. `Policy::default()` is plain IEEE 754 behaviour:
/// no flushing, no clamping, canonical NaNs, clamping float-to-integer conversions with
/// NaN → 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Policy {
    /// Subnormal inputs become zeros of the same sign (PTX `.ftz` on an f32 source).
    pub flush_inputs: bool,
    /// Subnormal results become zeros of the same sign (PTX `.ftz` on an f32 result).
    pub flush_outputs: bool,
    /// `.sat`: float destinations clamp to [0.0, 1.0] with NaN → +0; integer destinations
    /// clamp to their range (overriding [`IntOverflow::Wrap`]).
    pub sat: bool,
    /// `.satfinite`: ±∞ and overflows give ±largest finite; NaN stays NaN, or becomes
    /// +largest finite where the destination has no NaN.
    pub satfinite: bool,
    /// `.relu`: negative results (and −0) become +0; NaN becomes the canonical NaN.
    pub relu: bool,
    /// `.pzo`: a −0 result becomes +0.
    pub positive_zero: bool,
    /// Float overflow without `.satfinite`.
    pub overflow: Overflow,
    /// NaN results in a float destination with NaNs.
    pub nan: NanResult,
    /// NaN in an integer destination.
    pub int_nan: IntNan,
    /// Out-of-range integer results.
    pub int_overflow: IntOverflow,
    /// Multiply the input by 2^scale before rounding (exact; PTX `.scaled` and `s2f6`
    /// scale factors).
    pub scale: i32,
    /// NaN in a float destination without NaN.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "NoNanResult::is_default")
    )]
    pub no_nan: NoNanResult,
    /// A destination without a zero (`ue8m0`): a magnitude strictly between its two smallest
    /// values (2^-127 and 2^-126) rounds up to the larger, whatever the rounding. PyTorch, XLA
    /// and ml_dtypes before 0.7 round the `f32` encoding's fields, in which such a value is a
    /// subnormal of more than half a unit.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "core::ops::Not::not")
    )]
    pub lowest_binade_up: bool,
    /// A value the destination has no encoding for gives NaN (where it has one) instead of
    /// its magnitude or its smallest value: a negative nonzero value in an unsigned
    /// destination, a zero in one without zero (ml_dtypes' and XLA's `float8_e8m0fnu`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "core::ops::Not::not")
    )]
    pub unrepresentable_nan: bool,
}

impl NoNanResult {
    /// Whether this is the default rule (so that serialized policies leave it out).
    pub fn is_default(&self) -> bool {
        *self == NoNanResult::LargestFinite
    }
}

/// Status flags of one conversion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(u8);

impl Flags {
    /// The result differs from the exact value.
    pub const INEXACT: Flags = Flags(1);
    /// The rounded magnitude exceeded the destination's range.
    pub const OVERFLOW: Flags = Flags(2);
    /// The result is tiny (below the smallest normal) and inexact.
    pub const UNDERFLOW: Flags = Flags(4);
    /// A clamp (`.sat`, `.satfinite`, integer range) changed the value.
    pub const SATURATED: Flags = Flags(8);
    /// A subnormal input or result was flushed to zero.
    pub const FLUSHED: Flags = Flags(16);
    /// A NaN became a number, or a value had no encoding (NaN or ∞ into a format without).
    pub const INVALID: Flags = Flags(32);

    const NAMES: [(Flags, &'static str); 6] = [
        (Self::INEXACT, "inexact"),
        (Self::OVERFLOW, "overflow"),
        (Self::UNDERFLOW, "underflow"),
        (Self::SATURATED, "saturated"),
        (Self::FLUSHED, "flushed"),
        (Self::INVALID, "invalid"),
    ];

    /// No flags.
    pub const fn empty() -> Flags {
        Flags(0)
    }
    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// Whether no flag is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The names of the flags that are set.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES
            .iter()
            .filter(|(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl core::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl core::ops::BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&self.names().join(","))
    }
}

/// What happened on the way, for `--explain`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A subnormal input was flushed to zero.
    FlushedInput,
    /// The input was scaled by 2^k.
    Scaled(i32),
    /// A NaN input became this destination pattern.
    NanResult,
    /// A NaN input became a number (`.sat`, or a destination without NaN).
    NanToNumber,
    /// An unsigned destination took the magnitude of a negative input.
    SignDropped,
    /// `.sat` clamped the value to 0 or 1.
    ClampedUnit,
    /// `.relu` clamped a negative value (or −0) to +0.
    Relu,
    /// The value was rounded (see [`Trace::rounded`]).
    Rounded,
    /// The rounded magnitude was beyond the range and saturated to the largest finite value.
    OverflowToMax,
    /// The rounded magnitude was beyond the range and became infinity.
    OverflowToInfinity,
    /// The rounded magnitude was beyond the range and became NaN (no infinity in the format).
    OverflowToNan,
    /// An integer result was clamped to the destination range.
    ClampedRange,
    /// An integer result kept its low bits only.
    Wrapped,
    /// A subnormal result was flushed to zero.
    FlushedOutput,
    /// A −0 result became +0.
    PositiveZero,
    /// The destination has no zero; zero became its smallest value.
    NoZero,
    /// The destination has no encoding for the value (a negative value in an unsigned
    /// format, a zero in one without zero): NaN ([`Policy::unrepresentable_nan`]).
    Unrepresentable,
}

/// The steps of one conversion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// The decoded source value.
    pub source: Option<Value>,
    /// The rounding step, if there was one.
    pub rounded: Option<Rounded>,
    /// What the policies did, in order.
    pub events: Vec<Event>,
}

/// The result of a conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The destination encoding.
    pub bits: u64,
    /// What happened.
    pub flags: Flags,
}

/// One conversion: everything needed to map a source encoding to a destination encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conversion {
    /// Source format.
    pub src: Format,
    /// Destination format.
    pub dst: Format,
    /// Rounding.
    pub rounding: Rounding,
    /// Policies.
    pub policy: Policy,
}

impl Conversion {
    /// A conversion from its parts.
    pub const fn new(src: Format, dst: Format, rounding: Rounding, policy: Policy) -> Self {
        Conversion {
            src,
            dst,
            rounding,
            policy,
        }
    }

    /// Converts one source encoding.
    pub fn apply(&self, bits: u64) -> Outcome {
        self.run(bits, &mut NoTrace)
    }

    /// [`Conversion::apply`] as a function, compiled with this pair of formats as constants
    /// where gpucvt has such an instance (f32 and f64 sources into the PTX formats), and
    /// `apply` itself otherwise: the same results, faster when converting many values.
    ///
    /// ```
    /// use gpucvt_core::{Conversion, Policy, Rounding, format::{F32, E4M3}};
    /// let c = Conversion::new(F32, E4M3, Rounding::RN, Policy::default());
    /// let apply = c.compiled();
    /// assert_eq!(apply(&c, 0x3f80_0000), c.apply(0x3f80_0000)); // 1.0 → 0x38
    /// ```
    pub fn compiled(&self) -> ApplyFn {
        compiled::lookup(&self.src, &self.dst).map_or(Conversion::apply, |(one, _)| one)
    }

    /// A function converting a slice of encodings to their result bits (no [`Flags`]),
    /// compiled for this pair of formats where [`Conversion::compiled`] is; with random words
    /// given, each element's stochastic rounding takes its own.
    ///
    /// ```
    /// use gpucvt_core::{Conversion, Policy, Rounding, format::{F32, BF16}};
    /// let c = Conversion::new(F32, BF16, Rounding::stochastic(0, 16), Policy::default());
    /// let mut out = [0u64; 2];
    /// // 1 + 2^-9 is a quarter of the way from 1.0 to the next bf16 (1 + 2^-7).
    /// (c.compiled_bits())(&c, &[0x3f80_4000; 2], Some(&[0, 0xc000]), &mut out);
    /// assert_eq!(out, [0x3f80, 0x3f81]);
    /// ```
    pub fn compiled_bits(&self) -> BitsFn {
        compiled::lookup(&self.src, &self.dst).map_or(compiled::bits_by_apply, |(_, many)| many)
    }

    /// Converts one source encoding and records the steps.
    pub fn apply_traced(&self, bits: u64) -> (Outcome, Trace) {
        let mut trace = Trace::default();
        let out = self.run(bits, &mut trace);
        (out, trace)
    }

    #[inline(always)]
    fn run<T: Tracer>(&self, bits: u64, trace: &mut T) -> Outcome {
        run(
            &self.src,
            &self.dst,
            self.rounding,
            &self.policy,
            bits,
            trace,
        )
    }
}

/// Conversions applied one after the other: the double rounding of libraries that convert
/// a source to `f32` first and then to the destination (see `gpucvt::compat`). Without
/// `first` it is the one conversion `last`.
///
/// ```
/// use gpucvt_core::{Chain, Conversion, Policy, Rounding, format::{F64, F32, BF16}};
/// let step = |s, d| Conversion::new(s, d, Rounding::RN, Policy::default());
/// let twice = Chain::new(step(F64, F32), step(F32, BF16)).unwrap();
/// let x = (1.0f64 + 2f64.powi(-8) + 2f64.powi(-40)).to_bits(); // just above a bf16 tie
/// assert_eq!(twice.apply(x).bits, 0x3f80); // f32 rounds to the tie, which goes to even
/// assert_eq!(step(F64, BF16).apply(x).bits, 0x3f81); // rounded once: up
/// assert!(Chain::new(step(F64, BF16), step(F32, BF16)).is_none()); // the steps must meet
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Chain {
    /// The first step, whose destination is `last`'s source.
    pub first: Option<Conversion>,
    /// The last step.
    pub last: Conversion,
}

impl Chain {
    /// The one conversion `c`.
    pub const fn single(c: Conversion) -> Chain {
        Chain {
            first: None,
            last: c,
        }
    }

    /// `first`, then `last`; `None` unless `first`'s destination is `last`'s source.
    pub fn new(first: Conversion, last: Conversion) -> Option<Chain> {
        (first.dst == last.src).then_some(Chain {
            first: Some(first),
            last,
        })
    }

    /// The source format.
    pub fn src(&self) -> Format {
        self.first.map_or(self.last.src, |f| f.src)
    }

    /// The destination format.
    pub fn dst(&self) -> Format {
        self.last.dst
    }

    /// Converts one source encoding; the flags are those of both steps.
    pub fn apply(&self, bits: u64) -> Outcome {
        match &self.first {
            None => self.last.apply(bits),
            Some(first) => {
                let mid = first.apply(bits);
                let out = self.last.apply(mid.bits);
                Outcome {
                    bits: out.bits,
                    flags: mid.flags | out.flags,
                }
            }
        }
    }
}

/// [`Conversion::apply`] from the parts of a conversion (so that [`compiled`] can pass its
/// constant formats without copying the rest).
#[inline(always)]
fn run<T: Tracer>(
    src: &Format,
    dst: &Format,
    rounding: Rounding,
    policy: &Policy,
    bits: u64,
    trace: &mut T,
) -> Outcome {
    let mut flags = Flags::empty();
    let mut v = src.decode(bits);
    trace.decoded(v);
    if policy.flush_inputs && src.is_subnormal(bits) {
        v = Value::zero(v.negative);
        flags |= Flags::FLUSHED;
        trace.note(Event::FlushedInput);
    }
    convert_value(&v, dst, rounding, policy, flags, trace)
}

mod compiled;
pub use compiled::{ApplyFn, BitsFn};

/// Where the steps of a conversion go: nowhere ([`NoTrace`], for [`Conversion::apply`]) or
/// into a [`Trace`]. A compile-time choice, so the untraced path carries none of it.
trait Tracer {
    /// Whether the steps are recorded (the untraced path may take shortcuts).
    const TRACES: bool;
    fn decoded(&mut self, v: Value);
    fn note(&mut self, e: Event);
    fn round_step(&mut self, r: Rounded);
}

struct NoTrace;

impl Tracer for NoTrace {
    const TRACES: bool = false;
    #[inline(always)]
    fn decoded(&mut self, _: Value) {}
    #[inline(always)]
    fn note(&mut self, _: Event) {}
    #[inline(always)]
    fn round_step(&mut self, _: Rounded) {}
}

impl Tracer for Trace {
    const TRACES: bool = true;
    fn decoded(&mut self, v: Value) {
        self.source = Some(v);
    }
    fn note(&mut self, e: Event) {
        self.events.push(e);
    }
    fn round_step(&mut self, r: Rounded) {
        self.rounded = Some(r);
    }
}

/// Converts an exact value (for example one parsed from text) into `dst`.
///
/// ```
/// use gpucvt_core::{convert::{convert, Policy}, format::E2M1, round::Rounding, value::Value};
/// let out = convert(&Value::finite(false, 5, 0), &E2M1, Rounding::RN, &Policy::default());
/// assert_eq!(out.bits, 0x6); // 4.0
/// ```
pub fn convert(v: &Value, dst: &Format, rounding: Rounding, policy: &Policy) -> Outcome {
    convert_value(v, dst, rounding, policy, Flags::empty(), &mut NoTrace)
}

/// [`convert`] with a trace of the steps.
pub fn convert_traced(
    v: &Value,
    dst: &Format,
    rounding: Rounding,
    policy: &Policy,
) -> (Outcome, Trace) {
    let mut t = Trace {
        source: Some(*v),
        ..Trace::default()
    };
    let out = convert_value(v, dst, rounding, policy, Flags::empty(), &mut t);
    (out, t)
}

#[inline(always)]
fn convert_value<T: Tracer>(
    v: &Value,
    dst: &Format,
    rounding: Rounding,
    p: &Policy,
    flags: Flags,
    trace: &mut T,
) -> Outcome {
    let mut flags = flags;
    let out = match dst.layout {
        Layout::Fixed(_) => to_fixed(v, dst, rounding, p, &mut flags, trace),
        Layout::Float(_) => to_float(v, dst, rounding, p, &mut flags, trace),
    };
    Outcome { bits: out, flags }
}

fn enc(dst: &Format, negative: bool, mag: Option<Dyadic>) -> u64 {
    let v = match mag {
        None => Value::zero(negative),
        Some(d) => Value {
            negative,
            class: Class::Finite(d),
        },
    };
    dst.encode(&v)
        .expect("internal error: a rounded value must be representable")
}

#[inline(always)]
fn to_float<T: Tracer>(
    v: &Value,
    dst: &Format,
    rounding: Rounding,
    p: &Policy,
    flags: &mut Flags,
    trace: &mut T,
) -> u64 {
    let Layout::Float(l) = dst.layout else {
        unreachable!()
    };
    // The layout's fields, taken out once.
    let sign = l.sign_bit();
    let max_body = l.max_finite_body();
    let max = || max_body << l.pad_bits;
    let has_zero = l.zero_exponent != ZeroExponent::Normal;
    // A zero result of a layout without −0 (the fnuz rule) stays +0.
    let neg_zero = l.has_negative_zero();
    let neg_bits = |bits: u64, negative: bool| {
        if negative && (neg_zero || bits != 0) {
            bits | sign
        } else {
            bits
        }
    };
    let plus_zero = || dst.zero_bits().unwrap_or(dst.min_positive_bits());
    let negative = v.negative && l.signed;
    if p.unrepresentable_nan && !p.sat && !p.relu {
        let unrepresentable = match v.class {
            Class::Zero => !has_zero,
            Class::Nan { .. } => false,
            _ => v.negative && !l.signed,
        };
        if let (true, Some(nan)) = (unrepresentable, dst.canonical_nan()) {
            *flags |= Flags::INVALID;
            trace.note(Event::Unrepresentable);
            return nan;
        }
    }
    if v.negative && !l.signed && !v.is_nan() {
        trace.note(Event::SignDropped);
    }
    let Class::Finite(d) = v.class else {
        // NaN, infinity and zero: no rounding (out of line, so that finite values, the
        // common case, take one branch).
        let nan = match v.class {
            Class::Nan { payload } => Some(payload),
            _ => None,
        };
        let infinite = v.class == Class::Infinite;
        return special_to_float(v.negative, nan, infinite, dst, p, flags, trace);
    };
    if p.scale != 0 {
        trace.note(Event::Scaled(p.scale));
    }
    let x = d.scale(p.scale);
    // `.sat` and `.relu` act on the exact value.
    let mut x = x;
    if p.sat {
        if v.negative {
            *flags |= Flags::SATURATED;
            trace.note(Event::ClampedUnit);
            return plus_zero();
        }
        if x.cmp_value(&Dyadic::new(1, 0)) == core::cmp::Ordering::Greater {
            *flags |= Flags::SATURATED;
            trace.note(Event::ClampedUnit);
            x = Dyadic::new(1, 0);
        }
    }
    if p.relu && negative {
        trace.note(Event::Relu);
        return plus_zero();
    }
    let rounding = if p.lowest_binade_up && !has_zero && in_lowest_binade(dst, &x) {
        Rounding {
            direction: Direction::Up,
            ..rounding
        }
    } else {
        rounding
    };
    let r = round_magnitude(negative, x, dst, rounding);
    trace.note(Event::Rounded);
    trace.round_step(r);
    if r.inexact() {
        *flags |= Flags::INEXACT;
    }
    // Encodings of a layout are ordered as the magnitudes they stand for, so the rounded
    // magnitude overflows exactly when its encoding lies beyond the largest finite one.
    // On a float grid the multiple has at most `man_bits + 2` bits, so it fits in 64 (the
    // failing conversion would be an overflow anyway).
    let body = u64::try_from(r.result.m)
        .ok()
        .and_then(|m| l.magnitude_body(m, r.result.q))
        .filter(|&body| body <= max_body);
    let Some(body) = body else {
        *flags |= Flags::OVERFLOW | Flags::INEXACT;
        if p.satfinite || p.overflow == Overflow::Saturate {
            *flags |= Flags::SATURATED;
            trace.note(Event::OverflowToMax);
            return neg_bits(max(), negative);
        }
        if p.overflow == Overflow::Infinite
            || rounding.overflows_to_infinity(negative, r.took_upper)
        {
            if let Some(inf) = dst.infinity() {
                trace.note(Event::OverflowToInfinity);
                return neg_bits(inf, negative);
            }
            if dst.canonical_nan().is_some() {
                trace.note(Event::OverflowToNan);
                return nan_bits(dst, p.nan, negative, None);
            }
        }
        trace.note(Event::OverflowToMax);
        return neg_bits(max(), negative);
    };
    let mut bits = neg_bits(body << l.pad_bits, negative);
    // Tiny: the exact magnitude is below the smallest normal one. That is 2^(1 − bias) in a
    // layout with subnormals (where an exponent field of 1 is finite), and below
    // 2^(2 − bias) in every layout.
    if r.inexact() && l.zero_exponent == ZeroExponent::Subnormal && l.exp_bits >= 2 {
        if x.top() < 1 - l.bias {
            *flags |= Flags::UNDERFLOW;
        }
    } else if r.inexact() && x.top() <= 1 - l.bias {
        let min_normal = dst
            .min_normal_bits()
            .map(|b| l.decode_body(b >> l.pad_bits));
        if let Some(Class::Finite(min_normal)) = min_normal {
            if x.cmp_value(&min_normal) == core::cmp::Ordering::Less {
                *flags |= Flags::UNDERFLOW;
            }
        }
    }
    if p.flush_outputs && dst.is_subnormal(bits) {
        *flags |= Flags::FLUSHED;
        trace.note(Event::FlushedOutput);
        bits = neg_bits(0, negative);
    }
    // A zero result: −0 → +0 with `.pzo` or `.relu`.
    if negative && (p.positive_zero || p.relu) && bits & !sign == 0 && has_zero {
        trace.note(if p.relu {
            Event::Relu
        } else {
            Event::PositiveZero
        });
        bits = 0;
    }
    bits
}

/// [`to_float`] of a value that is not rounded (of sign `v_negative`): a NaN (with the
/// payload `nan`), an infinity, or else a zero.
#[inline(never)]
fn special_to_float<T: Tracer>(
    v_negative: bool,
    nan: Option<u64>,
    infinite: bool,
    dst: &Format,
    p: &Policy,
    flags: &mut Flags,
    trace: &mut T,
) -> u64 {
    let Layout::Float(l) = dst.layout else {
        unreachable!()
    };
    let sign = l.sign_bit();
    let max = || l.max_finite_body() << l.pad_bits;
    let has_zero = l.zero_exponent != ZeroExponent::Normal;
    // A zero result of a layout without −0 (the fnuz rule) stays +0.
    let neg_zero = l.has_negative_zero();
    let neg_bits = |bits: u64, negative: bool| {
        if negative && (neg_zero || bits != 0) {
            bits | sign
        } else {
            bits
        }
    };
    let plus_zero = || dst.zero_bits().unwrap_or(dst.min_positive_bits());
    let mut negative = v_negative && l.signed;
    match (nan, infinite) {
        (Some(payload), _) => {
            if p.sat {
                *flags |= Flags::INVALID;
                trace.note(Event::NanToNumber);
                return plus_zero();
            }
            let Some(canon) = dst.canonical_nan() else {
                *flags |= Flags::INVALID;
                trace.note(Event::NanToNumber);
                return match p.no_nan {
                    NoNanResult::LargestFinite => max(),
                    NoNanResult::NegativeZero => neg_bits(0, l.signed),
                    NoNanResult::OppositeZero => neg_bits(0, l.signed && !v_negative),
                };
            };
            trace.note(Event::NanResult);
            if p.relu {
                canon
            } else {
                nan_bits(dst, p.nan, v_negative, Some(payload))
            }
        }
        (None, true) => {
            if p.sat {
                *flags |= Flags::SATURATED;
                trace.note(Event::ClampedUnit);
                return if v_negative {
                    plus_zero()
                } else {
                    enc(dst, false, Some(Dyadic::new(1, 0)))
                };
            }
            if p.relu && negative {
                trace.note(Event::Relu);
                return plus_zero();
            }
            if p.satfinite {
                *flags |= Flags::SATURATED;
                trace.note(Event::OverflowToMax);
                return neg_bits(max(), negative);
            }
            if let Some(inf) = dst.infinity() {
                return neg_bits(inf, negative);
            }
            *flags |= Flags::INVALID;
            match dst.canonical_nan() {
                Some(_) => {
                    trace.note(Event::OverflowToNan);
                    nan_bits(dst, p.nan, negative, None)
                }
                None => {
                    trace.note(Event::OverflowToMax);
                    neg_bits(max(), negative)
                }
            }
        }
        (None, false) => {
            // `.sat` and `.relu` give +0; so does a negative zero with `.pzo`.
            if p.sat || (p.relu && negative) {
                if p.sat && v_negative {
                    trace.note(Event::ClampedUnit);
                }
                if !p.sat {
                    trace.note(Event::Relu);
                }
                return plus_zero();
            }
            if !has_zero {
                *flags |= Flags::INEXACT | Flags::UNDERFLOW;
                trace.note(Event::NoZero);
                return dst.min_positive_bits();
            }
            if negative && p.positive_zero {
                trace.note(Event::PositiveZero);
                negative = false;
            }
            neg_bits(0, negative)
        }
    }
}

/// The NaN of `dst` that `rule` gives: for a NaN input of sign `negative` and (left-aligned)
/// `payload`, or with `payload` `None` for the NaN that stands in for an infinity or an
/// overflow (which `Canonical` and `Payload` leave canonical).
fn nan_bits(dst: &Format, rule: NanResult, negative: bool, payload: Option<u64>) -> u64 {
    let canon = dst
        .canonical_nan()
        .expect("internal error: a NaN result needs a format with NaN");
    // The quiet bit is the payload's top bit; every mantissa bit set is the canonical NaN.
    const QUIET: u64 = 1 << 63;
    let (negative, payload) = match (rule, payload) {
        (NanResult::Canonical, _) | (NanResult::Payload, None) => return canon,
        (NanResult::Payload, Some(p)) => (negative, p),
        (NanResult::Quieted, p) => (negative, p.unwrap_or(0) | QUIET),
        (NanResult::SignedQuiet, _) => (negative, QUIET),
        // The canonical NaN itself with a sign: its bits as the format defines them (tf32's
        // are all ones, padding included), which a payload could not give.
        (NanResult::SignedCanonical | NanResult::NegativeCanonical, _) => {
            let negative = negative || rule == NanResult::NegativeCanonical;
            return match dst.layout {
                Layout::Float(l) if l.signed && negative => canon | 1 << (dst.width() - 1),
                _ => canon,
            };
        }
    };
    // `None` where the format cannot carry it (no sign bit): the canonical NaN.
    dst.encode(&Value::nan(negative, payload)).unwrap_or(canon)
}

/// Whether the magnitude `x` lies strictly between the two smallest positive values of
/// `dst` (`ue8m0`: 2^-127 and 2^-126).
fn in_lowest_binade(dst: &Format, x: &Dyadic) -> bool {
    let Layout::Float(l) = dst.layout else {
        return false;
    };
    let smallest = dst.min_positive_bits();
    let value = |bits: u64| match dst.decode(bits).class {
        Class::Finite(d) => Some(d),
        _ => None,
    };
    // Encodings are ordered as their magnitudes: the next one up is one unit higher.
    let next = smallest + (1u64 << l.pad_bits);
    let (Some(lo), Some(hi)) = (value(smallest), value(next)) else {
        return false;
    };
    x.cmp_value(&lo) == core::cmp::Ordering::Greater
        && x.cmp_value(&hi) == core::cmp::Ordering::Less
}

#[inline(always)]
fn to_fixed<T: Tracer>(
    v: &Value,
    dst: &Format,
    rounding: Rounding,
    p: &Policy,
    flags: &mut Flags,
    trace: &mut T,
) -> u64 {
    let Layout::Fixed(l) = dst.layout else {
        unreachable!()
    };
    let x = match v.class {
        Class::Finite(d) if !(p.relu && v.negative) => {
            if p.scale != 0 {
                trace.note(Event::Scaled(p.scale));
            }
            d.scale(p.scale)
        }
        _ => return special_to_fixed(v, dst, p, flags, trace),
    };
    // Every decoded value has a significand of at most 64 bits: 64-bit arithmetic, unless a
    // trace wants the whole rounding step (or the value is wider).
    match u64::try_from(x.sig) {
        Ok(sig) if !T::TRACES => {
            let (n, big, inexact) = fixed_multiple(v.negative, sig, x.exp, &l, rounding);
            if inexact {
                *flags |= Flags::INEXACT;
            }
            fixed_range(v.negative, n as u128, big, dst, p, flags, trace)
        }
        _ => to_fixed_wide(v.negative, x, dst, rounding, p, flags, trace),
    }
}

/// [`to_fixed`] of a value that is not rounded: a NaN, an infinity, a zero, or a negative
/// value under `.relu`.
#[inline(never)]
fn special_to_fixed<T: Tracer>(
    v: &Value,
    dst: &Format,
    p: &Policy,
    flags: &mut Flags,
    trace: &mut T,
) -> u64 {
    let Layout::Fixed(l) = dst.layout else {
        unreachable!()
    };
    match v.class {
        Class::Nan { .. } => {
            *flags |= Flags::INVALID;
            trace.note(Event::NanToNumber);
            if p.satfinite {
                // `.satfinite` into a format without NaN: +largest finite (PTX s2f6x2).
                return dst.max_finite_bits();
            }
            match p.int_nan {
                IntNan::Zero => 0,
                IntNan::HighBit => 1u64 << (l.bits - 1),
            }
        }
        Class::Infinite | Class::Finite(_) if p.relu && v.negative => {
            // `.relu` (PTX s2f6x2): negative results become +0.
            trace.note(Event::Relu);
            0
        }
        Class::Infinite => {
            *flags |= Flags::SATURATED | Flags::INVALID;
            trace.note(Event::ClampedRange);
            if v.negative {
                dst.min_finite_bits().unwrap_or(0)
            } else {
                dst.max_finite_bits()
            }
        }
        Class::Zero | Class::Finite(_) => 0,
    }
}

/// The rounding of [`to_fixed`] for the magnitude `sig × 2^exp`, in 64-bit arithmetic: the
/// rounded magnitude in units of the destination's last place modulo 2^64, whether it is
/// 2^64 or more, and whether it is inexact. The same as [`round_magnitude`] followed by
/// [`to_fixed_wide`]'s rescaling (whose multiple is the same modulo 2^128).
#[inline(always)]
fn fixed_multiple(
    negative: bool,
    sig: u64,
    exp: i32,
    l: &FixedLayout,
    rounding: Rounding,
) -> (u64, bool, bool) {
    let f = l.frac_bits as i64;
    // The grid step 2^q: the last place, or 1 for an integral rounding.
    let q = if rounding.integral { (-f).max(0) } else { -f };
    let exp = exp as i64;
    // The multiple m of 2^q, then shifted left by q + f into units of 2^-f.
    let (m, shift, inexact) = if q <= exp {
        (sig, exp + f, false)
    } else {
        let s = (q - exp).min(u32::MAX as i64) as u32;
        (
            round_below_step_u64(negative, sig, s, rounding),
            q + f,
            true,
        )
    };
    // 0 ≤ shift; m << shift is 2^64 or more when m has more than 64 − shift bits.
    let shift = shift.min(u32::MAX as i64) as u32;
    let big = m != 0 && m.leading_zeros() < shift;
    let n = m.checked_shl(shift).unwrap_or(0);
    (n, big, inexact)
}

/// [`to_fixed`] through [`round_magnitude`] in 128-bit arithmetic, with the whole rounding
/// step traced (and for significands wider than 64 bits).
#[inline(never)]
fn to_fixed_wide<T: Tracer>(
    negative: bool,
    x: Dyadic,
    dst: &Format,
    rounding: Rounding,
    p: &Policy,
    flags: &mut Flags,
    trace: &mut T,
) -> u64 {
    let Layout::Fixed(l) = dst.layout else {
        unreachable!()
    };
    let r = round_magnitude(negative, x, dst, rounding);
    trace.note(Event::Rounded);
    trace.round_step(r);
    if r.inexact() {
        *flags |= Flags::INEXACT;
    }
    // The result in units of the destination's last place: an integral rounding rounds on
    // the coarser grid of 1, so rescale from its step 2^q to 2^-frac_bits.
    let shift = (r.result.q + l.frac_bits as i32) as u32;
    let (m, huge) = if shift == 0 || r.result.m == 0 {
        (r.result.m, r.huge)
    } else if shift >= 128 {
        (0, true)
    } else {
        (
            r.result.m << shift,
            r.huge || r.result.m >> (128 - shift) != 0,
        )
    };
    fixed_range(negative, m, huge, dst, p, flags, trace)
}

/// The encoding of the rounded magnitude `m` (in units of the last place; correct modulo
/// 2^64 at least, and with `huge` set when it is 2^64 or more) of sign `negative`: itself
/// when in range, otherwise clamped or wrapped.
#[inline(always)]
fn fixed_range<T: Tracer>(
    negative: bool,
    m: u128,
    huge: bool,
    dst: &Format,
    p: &Policy,
    flags: &mut Flags,
    trace: &mut T,
) -> u64 {
    let Layout::Fixed(l) = dst.layout else {
        unreachable!()
    };
    let width_mask = dst.mask();
    // In range? Magnitudes of the negative side go one further for signed formats.
    let limit: u64 = match (l.signed, negative) {
        (true, false) => (1u64 << (l.bits - 1)) - 1,
        (true, true) => 1u64 << (l.bits - 1),
        (false, false) => width_mask,
        (false, true) => 0,
    };
    // Only the low 64 bits count from here on: the destination is at most 64 bits wide.
    let huge = huge || m >> 64 != 0;
    let m = m as u64;
    if !huge && m <= limit {
        return if negative {
            m.wrapping_neg() & width_mask
        } else {
            m
        };
    }
    *flags |= Flags::OVERFLOW;
    if p.int_overflow == IntOverflow::Wrap && !p.sat {
        trace.note(Event::Wrapped);
        let low = if negative { m.wrapping_neg() } else { m };
        return low & width_mask;
    }
    *flags |= Flags::SATURATED;
    trace.note(Event::ClampedRange);
    if negative {
        dst.min_finite_bits().unwrap_or(0)
    } else {
        dst.max_finite_bits()
    }
}

/// The magnitude of a [`Magnitude`] as a value, for display.
pub fn magnitude_value(negative: bool, m: &Magnitude) -> Value {
    Value::finite(negative, m.m, m.q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;

    fn cvt(src: Format, dst: Format, r: Rounding, p: Policy, bits: u64) -> u64 {
        Conversion::new(src, dst, r, p).apply(bits).bits
    }

    const SATF: Policy = Policy {
        flush_inputs: false,
        flush_outputs: false,
        sat: false,
        satfinite: true,
        relu: false,
        positive_zero: false,
        overflow: Overflow::Ieee,
        nan: NanResult::Canonical,
        int_nan: IntNan::Zero,
        int_overflow: IntOverflow::Clamp,
        scale: 0,
        no_nan: NoNanResult::LargestFinite,
        lowest_binade_up: false,
        unrepresentable_nan: false,
    };

    #[test]
    fn f16_overflow_is_ieee() {
        let d = Policy::default();
        assert_eq!(cvt(F32, F16, Rounding::RN, d, 0x477f_f000), 0x7c00); // 65520 → inf
        assert_eq!(cvt(F32, F16, Rounding::RN, d, 0x477f_efff), 0x7bff);
        assert_eq!(cvt(F32, F16, Rounding::RZ, d, 0x4780_0000), 0x7bff);
        assert_eq!(cvt(F32, F16, Rounding::RM, d, 0xc780_0000), 0xfc00);
        assert_eq!(cvt(F32, F16, Rounding::RN, SATF, 0x7f80_0000), 0x7bff);
    }

    #[test]
    fn e4m3_satfinite_and_nan() {
        assert_eq!(cvt(F32, E4M3, Rounding::RN, SATF, 0x4396_0000), 0x79); // 300 → 288
        assert_eq!(cvt(F32, E4M3, Rounding::RN, SATF, 0x43fa_0000), 0x7e); // 500 → 448
        assert_eq!(cvt(F32, E4M3, Rounding::RN, SATF, 0xffc0_0000), 0x7f);
        assert_eq!(cvt(F32, E2M1, Rounding::RN, SATF, 0x7fc0_0000), 0x7);
        assert_eq!(cvt(F32, E2M1, Rounding::RN, SATF, 0xbdcc_cccd), 0x8); // -0.1 → -0
    }

    #[test]
    fn ue8m0_examples_from_the_notes() {
        let p = Policy::default();
        let rp = |b| cvt(F32, UE8M0, Rounding::RP, p, b);
        let rz = |b| cvt(F32, UE8M0, Rounding::RZ, p, b);
        assert_eq!((rp(0x3f80_0008), rp(0x3f80_0001)), (0x80, 0x80));
        assert_eq!((rz(0x3f80_0008), rz(0x3f80_0001)), (0x7f, 0x7f));
        assert_eq!((rp(0x0040_0000), rp(0x0020_0000)), (0x00, 0x00));
        assert_eq!((rp(0x0040_0001), rp(0x0080_0001)), (0x01, 0x02));
        assert_eq!((rp(0x3fc0_0000), rp(0xbfc0_0000)), (0x80, 0x80));
        assert_eq!(rp(0x7f7f_ffff), 0xff);
        assert_eq!(cvt(F32, UE8M0, Rounding::RP, SATF, 0x7f7f_ffff), 0xfe);
        assert_eq!(rz(0), 0x00);
    }

    #[test]
    fn integers() {
        let d = Policy::default();
        let wrap = Policy {
            int_overflow: IntOverflow::Wrap,
            ..d
        };
        assert_eq!(cvt(S32, U8, Rounding::RZ, wrap, 0x1ff), 0xff);
        assert_eq!(cvt(S32, S8, Rounding::RZ, wrap, 0x180), 0x80);
        assert_eq!(cvt(S32, U8, Rounding::RZ, d, (-5i32) as u32 as u64), 0);
        assert_eq!(cvt(U8, S8, Rounding::RZ, d, 200), 127);
        assert_eq!(cvt(F32, S32, Rounding::RNI, d, 0x7fc0_0000), 0);
        let hb = Policy {
            int_nan: IntNan::HighBit,
            ..d
        };
        assert_eq!(cvt(F64, U8, Rounding::RNI, hb, 0x7ff8_0000_0000_0000), 0x80);
        assert_eq!(cvt(F32, S32, Rounding::RMI, d, 0xbf00_0000), 0xffff_ffff);
        assert_eq!(cvt(F32, U32, Rounding::RMI, d, 0xbf00_0000), 0);
        assert_eq!(
            cvt(F64, S64, Rounding::RZI, d, 0x43e0_0000_0000_0000),
            i64::MAX as u64
        );
        assert_eq!(cvt(F32, S2F6, Rounding::RN, SATF, 0x3f80_0000), 0x40);
    }

    #[test]
    fn sat_and_relu() {
        let sat = Policy {
            sat: true,
            ..Policy::default()
        };
        assert_eq!(cvt(F32, F16, Rounding::RN, sat, 0x4000_0000), 0x3c00);
        assert_eq!(cvt(F32, F16, Rounding::RN, sat, 0x8000_0000), 0);
        assert_eq!(cvt(F32, F16, Rounding::RN, sat, 0x7fc0_0000), 0);
        let relu = Policy {
            relu: true,
            ..Policy::default()
        };
        assert_eq!(cvt(F32, BF16, Rounding::RN, relu, 0xbf80_0000), 0);
        assert_eq!(cvt(F32, BF16, Rounding::RN, relu, 0xffc0_0001), 0x7fff);
    }
}
