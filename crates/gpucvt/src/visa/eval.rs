//! MOV conversion semantics, bit-exactly (`visa.md` §6).
//!
//! A vISA `mov` whose destination and source declarations have different types converts.
//! [`mov_plan`] turns a type pair, `.sat` and a [`Cr0`] value into a [`Plan`]: one or more core
//! [`Conversion`]s run in sequence — more than one where IGC's finalizer splits the move
//! (§6.1) — plus at most one documented fix-up for a hardware quirk. The core does all the
//! arithmetic; this module only chooses formats, roundings and policies.
//!
//! The rules, per element (RM = cr0 bits 5:4; IRM = toward zero, or RM with cr0 bit 12):
//!
//! | conversion | rule |
//! | --- | --- |
//! | int → int | sign- or zero-extend by the source's signedness; narrower: keep the low bits; `.sat` clamps the source value to the destination range |
//! | int → float | round with RM; `.sat` clamps to [0, 1] |
//! | float → int | round with IRM; saturate to the destination range even without `.sat`; NaN → 0; unsigned destinations: any input with the sign bit set (−0, −denormal, −inf) → 0 |
//! | float → narrower float | round with RM (the 2022 seed's "round to zero" is RM = RTZ); IEEE overflow; subnormal results kept; NaN → quiet NaN with the sign and top payload bits |
//! | float → wider float | exact; BF → F is a bit shift that keeps NaNs exactly |
//! | float destination with `.sat` | clamp to [0.0, 1.0]; NaN → +0.0; −0.0 → +0.0 |
//!
//! The finalizer's two-step lowerings that change results: HF ← DF/Q/UQ goes through F (two
//! roundings), and B/UB ← DF goes through W (the low byte of the value saturated to i16: DF
//! 300.0 → B gives 0x2C).
//!
//! ```
//! use gpucvt::visa::{cr0::{Cr0, RoundingMode}, eval::{eval_mov, mov_plan}, types::VisaType};
//! // DF 300.0 → B: DF → W gives 300 (0x012C), W → B keeps the low byte.
//! let (bits, _) = eval_mov(VisaType::B, VisaType::Df, false, Cr0::KERNEL_ENTRY,
//!                          300f64.to_bits()).unwrap();
//! assert_eq!(bits, 0x2C);
//! // F → HF rounds with cr0's mode: RNE by default, the seed's truncation with RTZ.
//! let x = 1.0009765625f32 + 2f32.powi(-11) + 2f32.powi(-20); // just above a tie
//! let rne = eval_mov(VisaType::Hf, VisaType::F, false, Cr0::OPENCL, x.to_bits() as u64).unwrap();
//! let rtz = Cr0::OPENCL.with_rounding_mode(RoundingMode::Rtz);
//! let rtz = eval_mov(VisaType::Hf, VisaType::F, false, rtz, x.to_bits() as u64).unwrap();
//! assert_eq!((rne.0, rtz.0), (0x3c02, 0x3c01));
//! assert_eq!(mov_plan(VisaType::Hf, VisaType::Df, false, Cr0::OPENCL).unwrap().steps.len(), 2);
//! ```
//!
//! # Choices where the sources are silent or disagree
//!
//! Each open question of `visa.md` §10 and §11 is one named choice ([`CHOICES`]); the ones
//! hardware has not settled can be switched through [`MovOptions`].

use super::cr0::Cr0;
use super::types::{TypeKind, VisaType};
use gpucvt_core::convert::{convert, Conversion, Flags, IntNan, IntOverflow, NanResult, Outcome};
use gpucvt_core::convert::{Overflow, Policy};
use gpucvt_core::format::Format;
use gpucvt_core::round::{Direction, Rounding};
use gpucvt_core::value::{Class, Dyadic, Value};
use std::fmt::Write as _;

/// One documented choice where the vISA sources leave the behaviour open or contradict each
/// other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// A short stable name.
    pub name: &'static str,
    /// What gpucvt does, and why.
    pub what: &'static str,
    /// The [`MovOptions`] field and value that switch to the other reading, if any.
    pub switch: Option<&'static str>,
}

/// The choices gpucvt makes for vISA MOV (`visa.md` §10, §11 and the places the notes leave
/// open). The first nine follow §11's recommended defaults, in its order.
pub const CHOICES: &[Choice] = &[
    Choice {
        name: "df-to-ub-lowering",
        what:
            "DF -> UB without .sat follows the finalizer's lowering through signed W rather than \
               the unsigned 'sign bit set -> 0' rule: DF -5.0 -> W 0xFFFB -> UB 0xFB, like DF \
               300.0 -> B 0x2C (§11 #1).",
        switch: Some("MovOptions::df_to_ub = DfToUb::UnsignedRule (negative DF -> UB gives 0)"),
    },
    Choice {
        name: "q-negative-overflow",
        what: "Signed F/DF -> Q with a negative input whose magnitude is in (2^63, 2^64) gives \
               0x7FFFFFFFFFFFFFFF, the hardware response VC's emulation claims; magnitudes >= 2^64 \
               and -inf give 0x8000000000000000 (§6.3, §11 #2). Unverified on hardware.",
        switch: Some("MovOptions::q_negative_overflow = QNegativeOverflow::Imin"),
    },
    Choice {
        name: "alt-mode-mov",
        what: "ALT mode (cr0 bit 0) does not change MOV results: it affects F arithmetic only \
               (±inf results -> ±fmax; log, rsq, sqrt take |src|). No source covers conversions \
               (§5.5, §11 #3).",
        switch: Some("MovOptions::alt_mode = AltMode::InfToFmax (F results: ±inf -> ±fmax)"),
    },
    Choice {
        name: "sat-negative-zero",
        what: ".sat into a float turns -0.0 into +0.0 (the seed: any negative saturates to 0.0) \
               (§11 #4).",
        switch: Some("MovOptions::sat_negative_zero = SatNegativeZero::Keep"),
    },
    Choice {
        name: "bf-via-f",
        what:
            "BF paired with anything but F (D, W, B, HF, DF, Q, …) converts through F, which may \
               round twice; the documented type map has F <-> BF only, so the checker warns \
               (§2.1, §11 #5). F -> BF with .sat clamps to [0, 1] (the same result before or \
               after rounding).",
        switch: Some("MovOptions::bf_pairs = BfPairs::Reject"),
    },
    Choice {
        name: "q-to-float-rounding",
        what: "Q/UQ -> F/DF rounds with cr0's RM, as every int -> float conversion does; VC's \
               emulation always rounds to nearest even (§7 item 7, §11 #6).",
        switch: Some("MovOptions::q_to_float = QToFloat::AlwaysRne"),
    },
    Choice {
        name: "float-to-small-int",
        what: "F/HF -> B/UB/W/UW (and DF -> W/UW) without .sat saturate to the destination range, \
               as the documentation says (§10, §11 #7); DF -> B/UB go through W (§6.1).",
        switch: Some("MovOptions::small_int = SmallInt::ViaD (saturate to D, keep the low bits)"),
    },
    Choice {
        name: "nan-quiet-payload",
        what: "A NaN converted to another float type is quieted and keeps its sign and the top \
               bits of its payload (IGA's rule; §10, §11 #8). Exceptions: BF -> F is a bit shift \
               and same-type moves without .sat are raw copies, both keep the NaN exactly.",
        switch: Some("MovOptions::nan = NanRule::Canonical (the destination's canonical NaN)"),
    },
    Choice {
        name: "mov-keeps-denormals",
        what: "MOV conversions ignore cr0's denormal bits (6, 7, 10, 30): subnormal inputs are \
               used exactly and subnormal results are produced (IGC: 'conversion instructions \
               retain denorms'). The seed's 'HF denorms are flushed' sentence is obsolete \
               (§5.4, §11 #9).",
        switch: Some("MovOptions::denormals = Denormals::HonourCr0"),
    },
    Choice {
        name: "seed-rtz-superseded",
        what:
            "Narrowing float conversions (DF -> F, F -> HF, F -> BF) round with cr0's RM, as the \
               2024 documentation and IGC say; the 2022 seed's 'round to zero' is reproduced \
               with RM = RTZ (cr0 0x30, or `Cr0::with_rounding_mode(RoundingMode::Rtz)`) (§5.3, \
               §10 #1).",
        switch: None,
    },
    Choice {
        name: "unsigned-negative-zero",
        what: "Float -> unsigned integer gives 0 for every input with the sign bit set, -inf \
               included; the seed's 'qNaN Indefinite' rows are garbled and nothing supports them \
               (§6.2, §10 #5).",
        switch: None,
    },
    Choice {
        name: "float-to-int-rounding",
        what: "Float -> int rounds toward zero unless cr0 bit 12 is set, then with RM \
               (undocumented bit; IGC RMEncoding) (§5.1, §10 #7).",
        switch: None,
    },
    Choice {
        name: "f-to-bf-rounding",
        what: "F -> BF honours all four cr0 rounding modes and keeps subnormals whatever bit 30 \
               says (unverified on hardware, §8).",
        switch: None,
    },
    Choice {
        name: "hf-inf-to-uq",
        what: "HF +inf -> UQ gives 0xFFFFFFFFFFFFFFFF (the native rule and VC's emulation), not \
               the 0x00000000FFFFFFFF of IGC's 64-bit emulation (§7 item 8, §9).",
        switch: None,
    },
    Choice {
        name: "exact-lowerings",
        what: "Plans list the finalizer's lowerings that cannot change results too (DF/Q/UQ <- HF \
               through F, DF/Q/UQ <- B/UB through W, B/UB <- Q/UQ through W) so that a plan reads \
               like the emitted code; the platform-specific ones (noScalarByteToFloat, \
               noHFToInteger) are left out (§6.1).",
        switch: None,
    },
    Choice {
        name: "int-to-hf-single-rounding",
        what: "D/UD/W/UW/B/UB -> HF round once with RM (the execution-type change of §6.1 has no \
               numeric effect); only Q/UQ -> HF go through F and may round twice.",
        switch: None,
    },
    Choice {
        name: "int-source-modifier-exact",
        what: "Source modifiers on integer sources act on the exact value (vISA gives integer \
               execution extra precision): (-) of W -32768 is 32768, so it moves to D as 32768, \
               into W as 0x8000, and into W with .sat as 32767.",
        switch: None,
    },
    Choice {
        name: "float-source-modifier-sign",
        what: "(-), (abs) and (-abs) on a float source flip, clear or set the sign bit, NaNs \
               included.",
        switch: None,
    },
    Choice {
        name: "predicate-source",
        what: "mov from a predicate reads it as an unsigned integer (element 0 = bit 0) and \
               zero-extends it; the documentation leaves the destination bits above the \
               predicate's size undefined.",
        switch: None,
    },
    Choice {
        name: "packed-imm-replicate",
        what:
            "An execution size larger than a packed immediate's element count (8 for V/UV, 4 for \
               VF) repeats the elements (channel i takes element i mod n); the checker warns.",
        switch: None,
    },
];

/// §11 #1: DF → UB without `.sat`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DfToUb {
    /// The finalizer's lowering through W: −5.0 → 0xFB.
    #[default]
    Lowering,
    /// The unsigned rule: a DF with the sign bit set gives 0; other values still go through W.
    UnsignedRule,
}

/// §11 #2: signed F/DF → Q with a negative magnitude in (2^63, 2^64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QNegativeOverflow {
    /// `0x7FFF_FFFF_FFFF_FFFF`, the claimed hardware response.
    #[default]
    Quirk,
    /// `0x8000_0000_0000_0000` (Imin), as the documentation says.
    Imin,
}

/// §11 #3: ALT mode and MOV.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AltMode {
    /// ALT mode does not change MOV results.
    #[default]
    Unchanged,
    /// With cr0 bit 0 set, every F result that would be ±∞ (an infinite input or an
    /// overflow) becomes ±fmax.
    InfToFmax,
}

/// §11 #4: `.sat` on −0.0 with a float destination.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SatNegativeZero {
    /// −0.0 → +0.0.
    #[default]
    ToPositive,
    /// −0.0 stays −0.0 (other negative values still give +0.0).
    Keep,
}

/// §11 #5: BF paired with anything but F.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BfPairs {
    /// Convert through F.
    #[default]
    ViaF,
    /// Reject the pair ([`PlanError::BfPair`]).
    Reject,
}

/// §11 #6: the rounding of Q/UQ → F/DF.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QToFloat {
    /// cr0's RM.
    #[default]
    Cr0,
    /// Always round to nearest even.
    AlwaysRne,
}

/// §11 #7: float → B/UB/W/UW without `.sat`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SmallInt {
    /// Saturate to the destination's range.
    #[default]
    DestinationRange,
    /// Saturate to D's range, then keep the low bits.
    ViaD,
}

/// §11 #8: NaN results of float → float conversions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NanRule {
    /// A quiet NaN with the source's sign and the top bits of its payload.
    #[default]
    QuietPayload,
    /// The destination's canonical NaN (positive, every mantissa bit set).
    Canonical,
}

/// §11 #9: cr0's denormal bits and MOV.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Denormals {
    /// MOV keeps denormals whatever cr0 says.
    #[default]
    Keep,
    /// Flush subnormal inputs and results of float types whose cr0 bit says "flush"
    /// (DF bit 6, F bit 7, HF bit 10, BF bit 30), except in raw copies.
    HonourCr0,
}

/// The switchable readings of the open questions. `MovOptions::default()` is `visa.md` §11's
/// recommended set (see [`CHOICES`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MovOptions {
    /// §11 #1.
    pub df_to_ub: DfToUb,
    /// §11 #2.
    pub q_negative_overflow: QNegativeOverflow,
    /// §11 #3.
    pub alt_mode: AltMode,
    /// §11 #4.
    pub sat_negative_zero: SatNegativeZero,
    /// §11 #5.
    pub bf_pairs: BfPairs,
    /// §11 #6.
    pub q_to_float: QToFloat,
    /// §11 #7.
    pub small_int: SmallInt,
    /// §11 #8.
    pub nan: NanRule,
    /// §11 #9.
    pub denormals: Denormals,
}

/// Why a type pair has no MOV semantics.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// V, UV and VF exist only as immediates.
    #[error("{0} is an immediate-only packed type and cannot be a destination")]
    PackedDestination(VisaType),
    /// BOOL exists only in predicate variables, which a mov cannot write.
    #[error("BOOL (a predicate) cannot be a mov destination")]
    BoolDestination,
    /// A predicate source needs a UB, UW or UD destination.
    #[error("a predicate source needs a UB, UW or UD destination, not {0}")]
    PredicateDestination(VisaType),
    /// A predicate source allows no `.sat`.
    #[error("mov from a predicate cannot have .sat")]
    PredicateSat,
    /// BF with anything but F, under [`BfPairs::Reject`].
    #[error("BF converts only to and from F (XeHP and later), not {dst} <- {src}")]
    BfPair {
        /// Destination type.
        dst: VisaType,
        /// Source type.
        src: VisaType,
    },
}

/// One mov of a plan: a core conversion and the NaN handling around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The vISA types this step converts between.
    pub types: (VisaType, VisaType),
    /// The core conversion (source format, destination format, rounding, policy).
    pub conversion: Conversion,
    /// Whether a NaN input is quieted first (its payload's top bit, the IEEE quiet bit, set)
    /// — the `nan-quiet-payload` choice; with [`NanResult::Payload`] the result is then a
    /// quiet NaN with the source's sign and top payload bits.
    pub quiet_nan: bool,
}

impl Step {
    /// Runs the step on an exact value, as [`Conversion::apply`] does on bits (flushing a
    /// subnormal input first if the policy says so).
    pub fn apply_value(&self, v: &Value) -> Outcome {
        let c = &self.conversion;
        let mut v = *v;
        let mut pre = Flags::empty();
        if c.policy.flush_inputs {
            if let Some(b) = c.src.encode(&v) {
                if c.src.is_subnormal(b) {
                    v = Value::zero(v.negative);
                    pre |= Flags::FLUSHED;
                }
            }
        }
        if self.quiet_nan {
            if let Class::Nan { payload } = v.class {
                v = Value::nan(v.negative, payload | 1 << 63);
            }
        }
        let out = convert(&v, &c.dst, c.rounding, &c.policy);
        Outcome {
            bits: out.bits,
            flags: out.flags | pre,
        }
    }
}

/// A result rule the core's policies do not express: applied after the steps, from the
/// source value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fixup {
    /// `q-negative-overflow`: a negative source with magnitude in (2^63, 2^64) gives
    /// `0x7FFF_FFFF_FFFF_FFFF`.
    NegativeQOverflow,
    /// [`DfToUb::UnsignedRule`]: a source with the sign bit set (not NaN) gives 0.
    NegativeToZero,
    /// [`SatNegativeZero::Keep`]: a −0.0 source gives the destination's −0.0.
    SatKeepsNegativeZero,
}

/// The result of running a plan, with every intermediate value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovResult {
    /// The destination element's bits.
    pub bits: u64,
    /// The union of every step's flags.
    pub flags: Flags,
    /// Each step's outcome, in order.
    pub steps: Vec<Outcome>,
    /// The fix-up that changed the result, if one did.
    pub fixup: Option<Fixup>,
}

/// How a vISA mov converts one element: the steps the finalizer emits, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Destination type.
    pub dst: VisaType,
    /// Source type (for V/UV/VF: one element; for BOOL: the predicate as an integer).
    pub src: VisaType,
    /// Whether the mov has `.sat`.
    pub sat: bool,
    /// The control register the plan was made for.
    pub cr0: Cr0,
    /// The conversions, run in sequence (the first one's source format is the format of
    /// the source bits).
    pub steps: Vec<Step>,
    /// Result rules applied after the steps.
    pub fixups: Vec<Fixup>,
    /// The names of the [`CHOICES`] this plan depends on.
    pub choices: Vec<&'static str>,
}

impl Plan {
    /// The format of the source bits the plan takes: the element format of the source type
    /// (`s4`/`u4` for V/UV, `vf` for VF, `u32` for a predicate).
    pub fn source_format(&self) -> Format {
        self.steps[0].conversion.src
    }

    /// The format of the result.
    pub fn destination_format(&self) -> Format {
        self.steps[self.steps.len() - 1].conversion.dst
    }

    /// Converts one source element given as bits of [`Plan::source_format`] (higher bits are
    /// ignored).
    /// No heap allocation (unlike [`Plan::run`], which keeps the steps).
    pub fn eval(&self, src_bits: u64) -> Outcome {
        let (bits, flags, _) = self.run_steps(&self.source_format().decode(src_bits), |_| {});
        Outcome { bits, flags }
    }

    /// Converts one source element given as bits, keeping every step's outcome.
    pub fn run(&self, src_bits: u64) -> MovResult {
        self.run_value(&self.source_format().decode(src_bits))
    }

    /// Converts an exact source value: the source after a source modifier, which for an
    /// integer may lie outside its type's range (`int-source-modifier-exact`).
    pub fn run_value(&self, v: &Value) -> MovResult {
        let mut steps = Vec::with_capacity(self.steps.len());
        let (bits, flags, fixup) = self.run_steps(v, |o| steps.push(o));
        MovResult {
            bits,
            flags,
            steps,
            fixup,
        }
    }

    /// The steps and fix-ups on `v`, each step's outcome shown to `step`: the result bits,
    /// the union of the steps' flags and the fix-up that changed the result.
    fn run_steps(&self, v: &Value, mut step: impl FnMut(Outcome)) -> (u64, Flags, Option<Fixup>) {
        let mut flags = Flags::empty();
        let mut out = self.steps[0].apply_value(v);
        flags |= out.flags;
        step(out);
        for s in &self.steps[1..] {
            let v = s.conversion.src.decode(out.bits);
            out = s.apply_value(&v);
            flags |= out.flags;
            step(out);
        }
        let mut bits = out.bits;
        let mut applied = None;
        for &f in &self.fixups {
            if let Some(b) = fixup(f, v, &self.destination_format()) {
                bits = b;
                applied = Some(f);
            }
        }
        (bits, flags, applied)
    }

    /// A one-line description: `HF <- DF (.sat): DF -> F (RNE), then F -> HF (RNE, sat)`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} <- {}{}: ",
            self.dst,
            self.src,
            if self.sat { " (.sat)" } else { "" }
        );
        for (i, st) in self.steps.iter().enumerate() {
            if i > 0 {
                s.push_str(", then ");
            }
            let c = &st.conversion;
            let _ = write!(
                s,
                "{} -> {} ({}{}{})",
                st.types.1,
                st.types.0,
                rounding_text(c.rounding),
                if c.policy.sat { ", sat" } else { "" },
                if c.policy.satfinite {
                    ", inf->fmax"
                } else {
                    ""
                },
            );
        }
        for f in &self.fixups {
            let _ = write!(s, "; fix-up {f:?}");
        }
        s
    }
}

/// A rounding in vISA's words: `RNE`, `RU`, `RD`, `RTZ`, with ` to integer` for float → int.
fn rounding_text(r: Rounding) -> String {
    let base = match r.direction {
        Direction::NearestEven => "RNE",
        Direction::Up => "RU",
        Direction::Down => "RD",
        Direction::TowardZero => "RTZ",
        _ => return r.name().to_string(),
    };
    if r.integral {
        format!("{base} to integer")
    } else {
        base.to_string()
    }
}

fn fixup(f: Fixup, v: &Value, dst: &Format) -> Option<u64> {
    match f {
        Fixup::NegativeQOverflow => match v.class {
            Class::Finite(d) if v.negative => {
                let lo = Dyadic::new(1, 63);
                let hi = Dyadic::new(1, 64);
                (d.cmp_value(&lo).is_gt() && d.cmp_value(&hi).is_lt()).then_some(i64::MAX as u64)
            }
            _ => None,
        },
        Fixup::NegativeToZero => (v.negative && !v.is_nan()).then_some(0),
        Fixup::SatKeepsNegativeZero => {
            (v.negative && v.class == Class::Zero).then(|| dst.sign_bit().unwrap_or(0))
        }
    }
}

/// A mov of one hop in a lowering: `(to, from, sat on this hop)`.
type Hop = (VisaType, VisaType, bool);

fn is_f_like(t: VisaType) -> bool {
    matches!(t, VisaType::F | VisaType::Vf)
}

/// The hops the finalizer emits for `dst <- src` (`visa.md` §6.1, choices `bf-via-f`,
/// `exact-lowerings`, `float-to-small-int`).
fn hops(
    dst: VisaType,
    src: VisaType,
    sat: bool,
    o: &MovOptions,
) -> Result<(Vec<Hop>, Vec<&'static str>), PlanError> {
    use VisaType::*;
    let mut choices = Vec::new();
    let wide = |t: VisaType| matches!(t, Df | Q | Uq);
    let mut list: Vec<Hop> = if src == dst {
        vec![(dst, src, sat)]
    } else if dst == Bf && !is_f_like(src) || src == Bf && dst != F {
        if o.bf_pairs == BfPairs::Reject {
            return Err(PlanError::BfPair { dst, src });
        }
        choices.push("bf-via-f");
        vec![(F, src, false), (dst, F, sat)]
    } else if src == Bf && dst == F && sat {
        // The shift cannot saturate: the finalizer moves .sat onto a following F -> F mov.
        vec![(F, Bf, false), (F, F, true)]
    } else if dst == Hf && wide(src) {
        vec![(F, src, false), (Hf, F, sat)]
    } else if wide(dst) && src == Hf {
        choices.push("exact-lowerings");
        vec![(F, Hf, false), (dst, F, sat)]
    } else if matches!(dst, B | Ub) && wide(src) {
        if src != Df {
            choices.push("exact-lowerings");
        }
        vec![(W, src, sat), (dst, W, sat)]
    } else if wide(dst) && matches!(src, B | Ub) {
        choices.push("exact-lowerings");
        vec![(W, src, false), (dst, W, sat)]
    } else {
        vec![(dst, src, sat)]
    };
    if o.small_int == SmallInt::ViaD {
        let mut out = Vec::with_capacity(list.len() + 1);
        for h in list {
            let (to, from, s) = h;
            if from.is_float() && matches!(to, B | Ub | W | Uw) && !s {
                out.push((D, from, false));
                out.push((to, D, false));
            } else {
                out.push(h);
            }
        }
        list = out;
    }
    Ok((list, choices))
}

fn denorm_retained(t: VisaType, cr0: Cr0) -> bool {
    match t {
        VisaType::Df => cr0.df_denorm(),
        VisaType::F => cr0.f_denorm(),
        VisaType::Hf => cr0.hf_denorm(),
        VisaType::Bf => cr0.bf_denorm(),
        _ => true,
    }
}

fn step_of(
    (to, from, sat): Hop,
    raw_copy: bool,
    cr0: Cr0,
    o: &MovOptions,
    choices: &mut Vec<&'static str>,
) -> Step {
    let src = if from == VisaType::Bool {
        gpucvt_core::format::U32
    } else {
        from.element_format()
    };
    let dst = to.element_format();
    let mut policy = Policy {
        sat,
        overflow: Overflow::Ieee,
        int_nan: IntNan::Zero,
        ..Policy::default()
    };
    let mut quiet_nan = false;
    let rounding = match (from.is_float(), to.is_float()) {
        (false, false) => {
            policy.int_overflow = IntOverflow::Wrap;
            Rounding::RZ
        }
        (false, true) => {
            if matches!(from, VisaType::Q | VisaType::Uq) {
                choices.push("q-to-float-rounding");
                if o.q_to_float == QToFloat::AlwaysRne {
                    Rounding::RN
                } else {
                    cr0.float_rounding()
                }
            } else {
                cr0.float_rounding()
            }
        }
        (true, false) => {
            policy.int_overflow = IntOverflow::Clamp;
            choices.push("float-to-int-rounding");
            if to.kind() == TypeKind::Unsigned {
                choices.push("unsigned-negative-zero");
            }
            if matches!(to, VisaType::B | VisaType::Ub | VisaType::W | VisaType::Uw) {
                choices.push("float-to-small-int");
            }
            cr0.int_rounding()
        }
        (true, true) => {
            let shift = from == VisaType::Bf && to == VisaType::F;
            if raw_copy || shift {
                policy.nan = NanResult::Payload;
            } else {
                choices.push("nan-quiet-payload");
                match o.nan {
                    NanRule::QuietPayload => {
                        policy.nan = NanResult::Payload;
                        quiet_nan = true;
                    }
                    NanRule::Canonical => policy.nan = NanResult::Canonical,
                }
            }
            if to == VisaType::Bf {
                choices.push("f-to-bf-rounding");
            }
            if from.size() > to.size() || to == VisaType::Bf {
                choices.push("seed-rtz-superseded");
            }
            cr0.float_rounding()
        }
    };
    if from.is_float() || to.is_float() {
        choices.push("mov-keeps-denormals");
        let shift = from == VisaType::Bf && to == VisaType::F;
        if o.denormals == Denormals::HonourCr0 && !raw_copy && !shift {
            policy.flush_inputs = from.is_float() && !denorm_retained(from, cr0);
            policy.flush_outputs = to.is_float() && !denorm_retained(to, cr0);
        }
    }
    let shift = from == VisaType::Bf && to == VisaType::F;
    if to == VisaType::F && cr0.alt() && !raw_copy && !shift {
        choices.push("alt-mode-mov");
        if o.alt_mode == AltMode::InfToFmax {
            policy.satfinite = true;
        }
    }
    Step {
        types: (to, from),
        conversion: Conversion::new(src, dst, rounding, policy),
        quiet_nan,
    }
}

/// The plan of `mov[.sat] dst <- src` under `cr0`, with the recommended choices.
///
/// For V, UV and VF the plan converts one element (a nibble or a VF byte); for BOOL the
/// source is the predicate read as an unsigned integer.
///
/// ```
/// use gpucvt::visa::{cr0::Cr0, eval::mov_plan, types::VisaType};
/// let p = mov_plan(VisaType::B, VisaType::Df, false, Cr0::KERNEL_ENTRY).unwrap();
/// assert_eq!(p.steps.len(), 2); // DF -> W, W -> B
/// assert!(mov_plan(VisaType::V, VisaType::D, false, Cr0::KERNEL_ENTRY).is_err());
/// ```
pub fn mov_plan(dst: VisaType, src: VisaType, sat: bool, cr0: Cr0) -> Result<Plan, PlanError> {
    mov_plan_with(dst, src, sat, cr0, &MovOptions::default())
}

/// [`mov_plan`] with explicit readings of the open questions.
pub fn mov_plan_with(
    dst: VisaType,
    src: VisaType,
    sat: bool,
    cr0: Cr0,
    o: &MovOptions,
) -> Result<Plan, PlanError> {
    if dst.is_packed() {
        return Err(PlanError::PackedDestination(dst));
    }
    if dst == VisaType::Bool {
        return Err(PlanError::BoolDestination);
    }
    let mut choices: Vec<&'static str> = Vec::new();
    if src == VisaType::Bool {
        if !matches!(dst, VisaType::Ub | VisaType::Uw | VisaType::Ud) {
            return Err(PlanError::PredicateDestination(dst));
        }
        if sat {
            return Err(PlanError::PredicateSat);
        }
        choices.push("predicate-source");
        let step = step_of((dst, src, false), false, cr0, o, &mut choices);
        return Ok(Plan {
            dst,
            src,
            sat,
            cr0,
            steps: vec![step],
            fixups: vec![],
            choices,
        });
    }
    let (list, mut hop_choices) = hops(dst, src, sat, o)?;
    choices.append(&mut hop_choices);
    let raw_copy = src == dst && !sat;
    let steps: Vec<Step> = list
        .iter()
        .map(|&h| step_of(h, raw_copy, cr0, o, &mut choices))
        .collect();
    let mut fixups = Vec::new();
    if src.is_float() && dst == VisaType::Q {
        choices.push("q-negative-overflow");
        if o.q_negative_overflow == QNegativeOverflow::Quirk && src != VisaType::Vf {
            fixups.push(Fixup::NegativeQOverflow);
        }
    }
    if src == VisaType::Df && dst == VisaType::Ub && !sat {
        choices.push("df-to-ub-lowering");
        if o.df_to_ub == DfToUb::UnsignedRule {
            fixups.push(Fixup::NegativeToZero);
        }
    }
    if sat && dst.is_float() && src.is_float() {
        choices.push("sat-negative-zero");
        if o.sat_negative_zero == SatNegativeZero::Keep {
            fixups.push(Fixup::SatKeepsNegativeZero);
        }
    }
    let mut seen = Vec::with_capacity(choices.len());
    for c in choices {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    Ok(Plan {
        dst,
        src,
        sat,
        cr0,
        steps,
        fixups,
        choices: seen,
    })
}

/// Converts one source element: `(destination bits, flags)`.
///
/// ```
/// use gpucvt::visa::{cr0::Cr0, eval::eval_mov, types::VisaType};
/// // Any negative float, -0.0 and -inf included, gives 0 in an unsigned destination.
/// for x in [-0.0f32, -1e-40, -3.5, f32::NEG_INFINITY] {
///     assert_eq!(eval_mov(VisaType::Ud, VisaType::F, false, Cr0::OPENCL,
///                         x.to_bits() as u64).unwrap().0, 0);
/// }
/// // mov.sat f <- d 5 gives 1.0.
/// assert_eq!(eval_mov(VisaType::F, VisaType::D, true, Cr0::OPENCL, 5).unwrap().0, 0x3f80_0000);
/// ```
pub fn eval_mov(
    dst: VisaType,
    src: VisaType,
    sat: bool,
    cr0: Cr0,
    src_bits: u64,
) -> Result<(u64, Flags), PlanError> {
    let out = mov_plan(dst, src, sat, cr0)?.eval(src_bits);
    Ok((out.bits, out.flags))
}

fn int_range(t: VisaType) -> String {
    use VisaType::*;
    match t {
        Ud => "[0, 2^32-1]",
        D => "[-2^31, 2^31-1]",
        Uw => "[0, 65535]",
        W => "[-32768, 32767]",
        Ub => "[0, 255]",
        B => "[-128, 127]",
        Uq => "[0, 2^64-1]",
        Q => "[-2^63, 2^63-1]",
        V => "[-8, 7]",
        Uv => "[0, 15]",
        _ => "",
    }
    .to_string()
}

fn bits_of(t: VisaType) -> u32 {
    t.element_format().width()
}

/// How every value of `src` fits in `dst` (both non-packed-destination types).
fn exact_into(dst: VisaType, src: VisaType) -> bool {
    let (d, s) = (dst.element_format(), src.element_format());
    if src == VisaType::Vf {
        // Five significant bits, exponents -3 to 4: exact in every float type.
        return dst.is_float();
    }
    if dst.is_float() {
        let Some(dp) = float_precision(&d) else {
            return false;
        };
        if src.is_float() {
            let Some(sp) = float_precision(&s) else {
                return false;
            };
            // Precision and exponent range both at least as large.
            let (de, se) = (exp_range(&d), exp_range(&s));
            dp >= sp && de.0 <= se.0 && de.1 >= se.1
        } else {
            let mag_bits = s.width() - src.is_signed_integer() as u32;
            mag_bits <= dp
        }
    } else {
        false
    }
}

fn float_precision(f: &Format) -> Option<u32> {
    match f.layout {
        gpucvt_core::format::Layout::Float(l) => Some(l.man_bits + 1),
        _ => None,
    }
}

/// (smallest exponent of a subnormal or normal LSB, largest exponent) of a float format.
fn exp_range(f: &Format) -> (i32, i32) {
    match f.layout {
        gpucvt_core::format::Layout::Float(l) => {
            let emax = (1 << l.exp_bits) - 1 - l.bias - 1;
            let emin = 1 - l.bias - l.man_bits as i32;
            (emin, emax)
        }
        _ => (0, 0),
    }
}

fn hop_text(to: VisaType, from: VisaType, last: bool) -> String {
    let sat_int = format!(".sat clamps the source value to {}", int_range(to));
    match (from.is_float(), to.is_float()) {
        (false, false) => {
            let (fb, tb) = (bits_of(from), bits_of(to));
            let body = if from == VisaType::Bool {
                "the predicate as an unsigned integer (element 0 = bit 0), zero-extended".into()
            } else if tb > fb {
                if from.is_signed_integer() {
                    "sign-extends".to_string()
                } else {
                    "zero-extends".to_string()
                }
            } else if tb == fb {
                "keeps the bits".to_string()
            } else {
                format!("keeps the low {tb} bits")
            };
            if last && from != VisaType::Bool {
                format!("{body}; {sat_int}")
            } else {
                body
            }
        }
        (false, true) => {
            let r = if exact_into(to, from) {
                "exact".to_string()
            } else {
                "rounds with cr0 RM (RNE by default)".to_string()
            };
            if last {
                format!("{r}; .sat clamps to [0.0, 1.0]")
            } else {
                r
            }
        }
        (true, false) => {
            let mut s = format!(
                "rounds to an integer toward zero (with RM if cr0 bit 12 is set) and saturates to {} even without .sat; NaN -> 0",
                int_range(to)
            );
            if to.kind() == TypeKind::Unsigned {
                s.push_str("; any input with the sign bit set (-0, -denormal, -inf) -> 0");
            }
            s
        }
        (true, true) => {
            let mut s = if from == VisaType::Vf {
                "exact (every VF value is a value of every float type)".to_string()
            } else if from == VisaType::Bf && to == VisaType::F {
                "exact bit shift (shl 16): NaN payloads and sNaN unchanged".to_string()
            } else if from == to {
                "raw copy (NaN payloads and denormals unchanged)".to_string()
            } else if exact_into(to, from) {
                "exact (subnormals become normals); NaN is quieted, keeping sign and payload"
                    .to_string()
            } else {
                "rounds with cr0 RM (RNE by default; RTZ gives the 2022 seed's truncation), IEEE overflow, subnormal results kept; NaN -> quiet NaN with sign and top payload bits".to_string()
            };
            if last {
                s.push_str("; .sat clamps to [0.0, 1.0] with NaN -> +0 and -0 -> +0");
            }
            s
        }
    }
}

/// A one-line description of the rule for `dst <- src` without `.sat` under the recommended
/// choices (for `gpucvt table visa`).
///
/// ```
/// use gpucvt::visa::{eval::rule_text, types::VisaType};
/// let t = rule_text(VisaType::B, VisaType::Df);
/// assert!(t.starts_with("B <- DF: two movs"), "{t}");
/// assert!(rule_text(VisaType::V, VisaType::D).contains("illegal"));
/// ```
pub fn rule_text(dst: VisaType, src: VisaType) -> String {
    let head = format!("{dst} <- {src}: ");
    let plan = match mov_plan(dst, src, false, Cr0::KERNEL_ENTRY) {
        Ok(p) => p,
        Err(e) => return format!("{head}illegal: {e}"),
    };
    let n = plan.steps.len();
    let mut s = head;
    if src == dst {
        if src.is_float() {
            s.push_str("raw copy (NaN payloads and denormals unchanged); .sat clamps to [0.0, 1.0] with NaN -> +0 and -0 -> +0");
        } else {
            let _ = write!(s, "raw copy; .sat has no effect");
        }
        return s;
    }
    if n > 1 {
        let mid = plan.steps[0].types.0;
        let why = if plan.choices.contains(&"bf-via-f") {
            "BF pairs only with F"
        } else {
            "finalizer lowering"
        };
        let _ = write!(s, "two movs through {mid} ({why}): ");
    }
    for (i, st) in plan.steps.iter().enumerate() {
        if i > 0 {
            s.push_str("; then ");
        }
        let (to, from) = st.types;
        if n > 1 {
            let _ = write!(s, "{from} -> {to} ");
        }
        s.push_str(&hop_text(to, from, i + 1 == n));
    }
    if plan.choices.contains(&"q-negative-overflow") && src != VisaType::Vf && src != VisaType::Hf {
        s.push_str("; negative inputs of magnitude in (2^63, 2^64) -> 0x7FFFFFFFFFFFFFFF (claimed hardware quirk)");
    }
    if n > 1 && matches!(dst, VisaType::B | VisaType::Ub) && src == VisaType::Df {
        s.push_str(" (so DF 300.0 -> 0x2C; .sat applies to both movs)");
    }
    if n > 1 && dst == VisaType::Hf && src == VisaType::Df {
        s.push_str(" (two roundings: some results differ from a direct DF -> HF)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use VisaType::*;

    fn ev(dst: VisaType, src: VisaType, sat: bool, cr0: u32, bits: u64) -> u64 {
        eval_mov(dst, src, sat, Cr0::from_raw(cr0), bits).unwrap().0
    }

    #[test]
    fn lowering_shapes() {
        let p = mov_plan(Hf, Df, true, Cr0::OPENCL).unwrap();
        assert_eq!(p.steps.len(), 2);
        assert!(!p.steps[0].conversion.policy.sat && p.steps[1].conversion.policy.sat);
        let p = mov_plan(Ub, Df, true, Cr0::OPENCL).unwrap();
        assert!(p.steps[0].conversion.policy.sat && p.steps[1].conversion.policy.sat);
        assert_eq!(mov_plan(F, D, false, Cr0::OPENCL).unwrap().steps.len(), 1);
        assert_eq!(mov_plan(F, Bf, true, Cr0::OPENCL).unwrap().steps.len(), 2);
        assert_eq!(mov_plan(F, Bf, false, Cr0::OPENCL).unwrap().steps.len(), 1);
        assert_eq!(mov_plan(D, Bf, false, Cr0::OPENCL).unwrap().steps.len(), 2);
    }

    #[test]
    fn errors() {
        assert_eq!(
            mov_plan(Vf, F, false, Cr0::OPENCL),
            Err(PlanError::PackedDestination(Vf))
        );
        assert_eq!(
            mov_plan(Bool, D, false, Cr0::OPENCL),
            Err(PlanError::BoolDestination)
        );
        assert_eq!(
            mov_plan(D, Bool, false, Cr0::OPENCL),
            Err(PlanError::PredicateDestination(D))
        );
        assert_eq!(
            mov_plan(Ud, Bool, true, Cr0::OPENCL),
            Err(PlanError::PredicateSat)
        );
        let o = MovOptions {
            bf_pairs: BfPairs::Reject,
            ..MovOptions::default()
        };
        assert!(mov_plan_with(Bf, Hf, false, Cr0::OPENCL, &o).is_err());
        assert!(mov_plan_with(Bf, F, false, Cr0::OPENCL, &o).is_ok());
    }

    #[test]
    fn basics() {
        assert_eq!(ev(B, Df, false, 0, 300f64.to_bits()), 0x2c);
        assert_eq!(ev(Ub, Df, false, 0, (-5f64).to_bits()), 0xfb);
        assert_eq!(ev(Ud, Bool, false, 0, 0b1011), 0b1011);
        assert_eq!(ev(Ub, Bool, false, 0, 0x1ff), 0xff);
    }
}
