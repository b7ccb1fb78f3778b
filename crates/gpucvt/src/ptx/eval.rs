//! Evaluation of `cvt` and `cvt.pack` forms, bit-exactly (`ptx-cvt.md` §4).
//!
//! A form becomes a *plan*: one core [`Conversion`] per destination lane, with the lane's
//! source bits, its place in the destination register, its share of the random bits (`.rs`)
//! and its scale factor. The core does the arithmetic; this module only knows PTX's packing
//! order and which policy each modifier turns on.
//!
//! ```
//! use gpucvt::ptx::{eval::evaluate, CvtForm, PtxType, RoundMod};
//! let mut form = CvtForm::new(PtxType::E4m3x2, PtxType::F32);
//! form.rounding = Some(RoundMod::Rn);
//! form.satfinite = true;
//! // a = 1.0 goes to the high byte, b = 300.0 (→ 288) to the low byte.
//! let out = evaluate(&form, &[0x3f80_0000, 0x4396_0000]).unwrap();
//! assert_eq!(out.bits, 0x3879);
//! ```
//!
//! # Choices where the documentation is silent
//!
//! Each open question of `ptx-cvt.md` §10 is one named choice here (see [`CHOICES`]).

use super::form::{CvtForm, RoundMod, Scaled};
use super::types::{Kind, PtxType};
use gpucvt_core::convert::{Conversion, IntNan, IntOverflow, NanResult, Outcome, Overflow, Policy};
use gpucvt_core::format::{self, Format};
use gpucvt_core::round::Rounding;

/// One documented choice where the PTX documentation leaves the behaviour open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// A short stable name.
    pub name: &'static str,
    /// What gpucvt does, and why.
    pub what: &'static str,
}

/// The choices gpucvt makes where `ptx-cvt.md` lists a question as open (§10, §12).
pub const CHOICES: &[Choice] = &[
    Choice {
        name: "f16-overflow-ieee",
        what: "f16 results overflow as IEEE 754 says (rn: ±Inf from |x| >= 65520; rz: ±65504), \
               not to the '~131,000' of §6.5.1, as measured on GPUs (§11).",
    },
    Choice {
        name: "canonical-nan",
        what: "NaN results are the canonical NaN of the destination: f16/bf16 0x7fff, f32 and \
               tf32 0x7fffffff, f64 0x7fffffffffffffff, e4m3/e5m2 0x7f, ue8m0/ue5m3 0xff.",
    },
    Choice {
        name: "bf16-widening-keeps-nan-payload",
        what: "cvt.f32.bf16 and cvt.f64.bf16 keep the NaN's sign and payload (the conversion is \
               a shift, as CUDA's own emulation does); every other conversion produces the \
               canonical NaN.",
    },
    Choice {
        name: "relu-negative-zero",
        what: ".relu turns -0.0 (and negative values that round to -0.0) into +0.0: relu is \
               max(x, +0).",
    },
    Choice {
        name: "f16-bf16-default-rounding",
        what: "cvt.f16.bf16 and cvt.bf16.f16 without a rounding modifier round to nearest even.",
    },
    Choice {
        name: "rbits-msb-aligned",
        what: ".rs adds the random field to the discarded bits aligned at their most significant \
               bit: the discarded part of the value, as a fraction of one unit in the last place, \
               is truncated to the random field's width (13 bits for f16x2, 16 for bf16x2, 8 for \
               each lane of the x4 forms), so subnormal results use the same width.",
    },
    Choice {
        name: "rbits-x4-bytes",
        what: "x4 forms: a uses rbits[31:24], b rbits[23:16], e rbits[15:8], f rbits[7:0]; for \
               e2m1x4, as its text says (the upper bytes of both halves for a, b), a uses \
               rbits[31:24], b rbits[15:8], e rbits[23:16], f rbits[7:0].",
    },
    Choice {
        name: "rs-satfinite-after-carry",
        what: ".rs rounds first and applies .satfinite to the rounded result.",
    },
    Choice {
        name: "tf32-layout",
        what: "tf32 results are f32 bit patterns with the low 13 bits zero; .satfinite clamps to \
               0x7f7fe000; the NaN result is 0x7fffffff.",
    },
    Choice {
        name: "s2f6-negative-saturation",
        what: "s2f6 saturates negative values to 0x80 (-2.0, the 'negative max representation' \
               of §5.2.4): x <= -2.0 gives 0x80 and (-2.0, -1.984375) rounds normally.",
    },
    Choice {
        name: "scale-nan",
        what:
            "A scale factor of 0xff (the ue8m0 NaN) makes the lane's input NaN: down-conversions \
               give the destination's NaN result (+MAX_NORM for s2f6 and formats without NaN), \
               up-conversions the canonical NaN.",
    },
    Choice {
        name: "ue8m0-sign-ignored",
        what: "Conversions to ue8m0 and ue5m3 use |x| (the destination has no sign).",
    },
    Choice {
        name: "cvt-f32-f32-nan",
        what: "cvt.f32.f32 (and the other same-type moves) return the canonical NaN for a NaN.",
    },
];

/// What an operand of a `cvt` is for, in instruction order after `d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The first source `a`.
    A,
    /// The second source `b`.
    B,
    /// The third source of an x4 form.
    E,
    /// The fourth source of an x4 form.
    F,
    /// The random bits of `.rs`.
    Rbits,
    /// The ue8m0 scale factor(s).
    Scale,
    /// `cvt.pack`'s `c`.
    C,
}

impl Role {
    /// The operand's name as the documentation writes it.
    pub fn name(self) -> &'static str {
        match self {
            Role::A => "a",
            Role::B => "b",
            Role::E => "e",
            Role::F => "f",
            Role::Rbits => "rbits",
            Role::Scale => "scale-factor",
            Role::C => "c",
        }
    }
}

/// Why a form could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// Wrong number of source operands.
    #[error("{form} takes {expected} source operand(s) ({names}), got {got}")]
    OperandCount {
        /// The form's spelling.
        form: String,
        /// How many it takes.
        expected: usize,
        /// Their names.
        names: String,
        /// How many were given.
        got: usize,
    },
    /// An operand does not fit its width.
    #[error("operand {role} = {value:#x} does not fit in {bits} bits")]
    OperandTooWide {
        /// Which operand.
        role: &'static str,
        /// Its value.
        value: u64,
        /// Its width.
        bits: u32,
    },
    /// The form has no conversion semantics (a type with no value format, mismatched lanes).
    #[error("{0} is not a conversion gpucvt can evaluate")]
    NotEvaluable(String),
}

/// One lane of an evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneResult {
    /// The conversion the lane ran (source and destination formats, rounding, policy).
    pub conversion: Conversion,
    /// The lane's source bits (after taking the lane out of a packed operand).
    pub input: u64,
    /// Where the result sits in the destination (bit offset of its least significant bit).
    pub shift: u32,
    /// The result and its flags.
    pub outcome: Outcome,
}

/// The result of evaluating one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The destination value, `width` bits wide.
    pub bits: u64,
    /// The width of the destination type (the packed register's width for packed types).
    pub width: u32,
    /// The lanes, most significant first.
    pub lanes: Vec<LaneResult>,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The width of the scale operand of a form (16 bits for `n2`, 8 for `n1`).
fn scale_bits(form: &CvtForm) -> u32 {
    if form.scaled == Some(Scaled::N1Ue8m0) {
        8
    } else {
        16
    }
}

/// Whether the lanes are scaled by ue8m0 factors: the `.scaled` qualifiers, and the s2f6
/// forms (whose scale operand defaults to ×1 when the qualifier is absent).
fn takes_scale(form: &CvtForm) -> bool {
    form.scaled.is_some() || form.dtype == PtxType::S2f6x2 || form.atype == PtxType::S2f6x2
}

/// The source operands a form takes, in instruction order after `d`: `a`, then `b` (two
/// scalar sources), `e` and `f` (x4 forms), `rbits` (`.rs`), the scale factor (with a
/// `.scaled` qualifier), `c` (`cvt.pack` with a cType).
///
/// ```
/// use gpucvt::ptx::{eval::{operand_roles, Role}, CvtForm, PtxType, RoundMod};
/// let mut f = CvtForm::new(PtxType::E4m3x4, PtxType::F32);
/// f.rounding = Some(RoundMod::Rs);
/// assert_eq!(operand_roles(&f), [Role::A, Role::B, Role::E, Role::F, Role::Rbits]);
/// ```
pub fn operand_roles(form: &CvtForm) -> Vec<Role> {
    roles_of(form).as_slice().to_vec()
}

/// The roles of a form without allocating: at most six.
#[derive(Clone, Copy)]
struct Roles {
    list: [Role; 6],
    len: usize,
}

impl Roles {
    fn push(&mut self, r: Role) {
        if self.len < self.list.len() {
            self.list[self.len] = r;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[Role] {
        &self.list[..self.len]
    }
}

fn roles_of(form: &CvtForm) -> Roles {
    let mut roles = Roles {
        list: [Role::A; 6],
        len: 0,
    };
    if form.pack {
        roles.push(Role::A);
        roles.push(Role::B);
        if form.ctype.is_some() {
            roles.push(Role::C);
        }
        return roles;
    }
    if form.dtype.lanes() == 4 {
        for r in [Role::A, Role::B, Role::E, Role::F] {
            roles.push(r);
        }
    } else if form.dtype.lanes() == 2 && form.atype.lanes() == 1 {
        roles.push(Role::A);
        roles.push(Role::B);
    } else {
        roles.push(Role::A);
    }
    if form.rounding == Some(RoundMod::Rs) {
        roles.push(Role::Rbits);
    }
    if form.scaled.is_some() {
        roles.push(Role::Scale);
    }
    roles
}

/// The width in bits of a source operand.
pub fn role_bits(form: &CvtForm, role: Role) -> u32 {
    match role {
        Role::A | Role::B | Role::E | Role::F => form.atype.bits(),
        Role::Rbits | Role::C => 32,
        Role::Scale => scale_bits(form),
    }
}

fn rounding_of(form: &CvtForm) -> Rounding {
    match form.rounding {
        None | Some(RoundMod::Rn) => Rounding::RN,
        Some(RoundMod::Rna) => Rounding::RNA,
        Some(RoundMod::Rz) => Rounding::RZ,
        Some(RoundMod::Rm) => Rounding::RM,
        Some(RoundMod::Rp) => Rounding::RP,
        Some(RoundMod::Rs) => Rounding::stochastic(0, 32),
        Some(RoundMod::Rni) => Rounding::RNI,
        Some(RoundMod::Rzi) => Rounding::RZI,
        Some(RoundMod::Rmi) => Rounding::RMI,
        Some(RoundMod::Rpi) => Rounding::RPI,
    }
}

/// The core policy a form's modifiers select, for a lane from `src` to `dst`.
pub fn policy_of(form: &CvtForm, src: &Format, dst: &Format) -> Policy {
    let is_f32 = |t: PtxType| t == PtxType::F32;
    let int = |f: &Format| !f.is_float();
    Policy {
        // `.ftz` flushes f32 inputs, except into f16 where it is measured to be a no-op
        // (ptx-cvt.md §11, §12 item 1); `.scaled::n1` flushes every subnormal input (§12.3).
        flush_inputs: (form.ftz && is_f32(form.atype) && form.dtype != PtxType::F16)
            || form.scaled == Some(Scaled::N1Ue8m0),
        flush_outputs: form.ftz && is_f32(form.dtype),
        sat: form.sat,
        satfinite: form.satfinite,
        relu: form.relu,
        positive_zero: form.pzo,
        overflow: Overflow::Ieee,
        nan: if *src == format::BF16 && (*dst == format::F32 || *dst == format::F64) {
            NanResult::Payload
        } else {
            NanResult::Canonical
        },
        int_nan: if form.atype == PtxType::F64 || (int(dst) && dst.width() == 64) {
            IntNan::HighBit
        } else {
            IntNan::Zero
        },
        int_overflow: if int(src) && int(dst) {
            IntOverflow::Wrap
        } else {
            IntOverflow::Clamp
        },
        scale: 0,
        ..Policy::default()
    }
}

/// The scalar PTX type whose lane format is `f` (`None` for formats PTX has no type for:
/// `vf`, `s1`, `u1`).
///
/// ```
/// use gpucvt::core::format::{E4M3, VF};
/// use gpucvt::ptx::{eval::scalar_type, PtxType};
/// assert_eq!(scalar_type(&E4M3), Some(PtxType::E4m3));
/// assert_eq!(scalar_type(&VF), None);
/// ```
pub fn scalar_type(f: &Format) -> Option<PtxType> {
    PtxType::all().find(|t| {
        t.lanes() == 1 && !matches!(t.kind(), Kind::Packed) && t.lane_format().as_ref() == Some(f)
    })
}

/// The random-bit width of an element's stochastic rounding into `dst` when the caller does
/// not choose one: the width of a lane of PTX's `.rs` forms (13 bits for f16, 16 for bf16),
/// else 8 (the FP8/FP6/FP4 forms').
pub fn default_rbits_width(dst: &Format) -> u32 {
    match dst.name {
        "f16" => 13,
        "bf16" => 16,
        _ => 8,
    }
}

/// The conversion of one element from `src` to `dst` under the modifiers of `modifiers`
/// (its rounding modifier, `.ftz`, `.sat`, `.relu`, `.satfinite`, `.pzo`; its types are
/// ignored), with `rounding` (for `.rs`, the caller's random-bit width): the lane conversion
/// of the PTX form `cvt.MODE.MODS.dst.src` (PTX's policy: `.ftz` flushes f32 inputs except
/// into f16, NaN payloads of bf16 into f32/f64, integer NaN and overflow rules, ...)
/// whenever both formats are PTX types, whether or not PTX accepts that pair; for a format
/// PTX has no type for ([`scalar_type`]), the policy the same modifiers select, with `.b8`
/// standing in for the missing type (none of the policy's type rules concern it). What
/// `gpucvt convert --to` and the Python package's `astype` apply.
///
/// ```
/// use gpucvt::core::{format::{BF16, E4M3}, Rounding};
/// use gpucvt::ptx::{eval::element_conversion, CvtForm, PtxType, RoundMod};
/// let mut mods = CvtForm::new(PtxType::F32, PtxType::F32);
/// mods.rounding = Some(RoundMod::Rn);
/// mods.satfinite = true;
/// let c = element_conversion(&mods, Rounding::RN, &BF16, &E4M3).unwrap();
/// assert!(c.policy.satfinite);
/// assert_eq!(c.apply(0x43c8).bits, 0x7c); // bf16 400: a tie between 384 and 416, to even 384
/// assert_eq!(c.apply(0x43fa).bits, 0x7e); // bf16 500 → 448, the largest finite (.satfinite)
/// ```
///
/// # Errors
/// A form [`lane_conversion`] refuses (`.scaled`, `cvt.pack`).
pub fn element_conversion(
    modifiers: &CvtForm,
    rounding: Rounding,
    src: &Format,
    dst: &Format,
) -> Result<Conversion, EvalError> {
    let mut f = *modifiers;
    let conv = match (scalar_type(src), scalar_type(dst)) {
        (Some(atype), Some(dtype)) => {
            (f.atype, f.dtype) = (atype, dtype);
            lane_conversion(&f)?
        }
        (atype, dtype) => {
            f.atype = atype.unwrap_or(PtxType::B8);
            f.dtype = dtype.unwrap_or(PtxType::B8);
            Conversion::new(*src, *dst, rounding, policy_of(&f, src, dst))
        }
    };
    Ok(Conversion::new(conv.src, conv.dst, rounding, conv.policy))
}

/// The core conversion one lane of a form performs, when every lane performs the same one:
/// source and destination lane formats, the form's rounding (for `.rs` a 32-bit-wide
/// stochastic rounding whose random bits the caller supplies per element, narrowed to the
/// lane's share: see [`rbits_width`]) and the policy its modifiers select. `.scaled` forms
/// and `cvt.pack` have per-lane or per-instruction state and are refused.
///
/// ```
/// use gpucvt::ptx::{eval::lane_conversion, parse_instruction};
/// let form = parse_instruction("cvt.rn.satfinite.e4m3x2.f32").unwrap().form;
/// let c = lane_conversion(&form).unwrap();
/// assert_eq!((c.src.name, c.dst.name), ("f32", "e4m3"));
/// assert!(c.policy.satfinite);
/// assert_eq!(c.apply(0x4396_0000).bits, 0x79); // 300 → 288
/// ```
pub fn lane_conversion(form: &CvtForm) -> Result<Conversion, EvalError> {
    let not_evaluable = || EvalError::NotEvaluable(form.spelling());
    if form.pack || takes_scale(form) {
        return Err(not_evaluable());
    }
    if matches!(form.dtype.kind(), Kind::Bits | Kind::Pred)
        || matches!(form.atype.kind(), Kind::Bits | Kind::Pred)
    {
        return Err(not_evaluable());
    }
    let dst = form.dtype.lane_format().ok_or_else(not_evaluable)?;
    let src = form.atype.lane_format().ok_or_else(not_evaluable)?;
    let rounding = match form.rounding {
        Some(RoundMod::Rs) => Rounding::stochastic(0, rbits_width(form)),
        _ => rounding_of(form),
    };
    Ok(Conversion::new(
        src,
        dst,
        rounding,
        policy_of(form, &src, &dst),
    ))
}

/// How many random bits each lane of an `.rs` form uses (13 for `f16x2`, 16 for `bf16x2`,
/// 8 for the FP8/FP6/FP4 forms); 0 for other roundings.
pub fn rbits_width(form: &CvtForm) -> u32 {
    if form.rounding != Some(RoundMod::Rs) {
        return 0;
    }
    lane_rbits(form, 0, 0).1
}

/// The random bits lane `k` (0 = most significant) of an `.rs` form takes from the
/// instruction's `rbits` operand, right-aligned (their count is [`rbits_width`]).
///
/// ```
/// use gpucvt::ptx::{eval::lane_random, parse_instruction};
/// let form = parse_instruction("cvt.rs.satfinite.bf16x2.f32").unwrap().form;
/// assert_eq!(lane_random(&form, 0x1234_5678, 0), 0x1234);
/// assert_eq!(lane_random(&form, 0x1234_5678, 1), 0x5678);
/// ```
pub fn lane_random(form: &CvtForm, rbits: u32, k: usize) -> u32 {
    lane_rbits(form, rbits as u64, k).0 as u32
}

/// The random bits and width lane `k` (0 = most significant) of an `.rs` form uses.
fn lane_rbits(form: &CvtForm, rbits: u64, k: usize) -> (u64, u32) {
    let (shift, width) = lane_rbits_place(form, k);
    ((rbits >> shift) & mask(width), width)
}

/// Where lane `k`'s random bits sit in `rbits`: (shift of their lowest bit, count).
///
/// ```
/// use gpucvt::ptx::{eval::lane_rbits_place, parse_instruction};
/// let form = parse_instruction("cvt.rs.satfinite.e2m1x4.f32").unwrap().form;
/// assert_eq!(lane_rbits_place(&form, 1), (8, 8));
/// ```
pub fn lane_rbits_place(form: &CvtForm, k: usize) -> (u32, u32) {
    match (form.dtype, k) {
        (PtxType::F16x2, 0) => (16, 13),
        (PtxType::F16x2, _) => (0, 13),
        (PtxType::Bf16x2, 0) => (16, 16),
        (PtxType::Bf16x2, _) => (0, 16),
        (PtxType::E2m1x4, k) => ([24, 8, 16, 0][k.min(3)], 8),
        (_, k) => (24 - 8 * k.min(3) as u32, 8),
    }
}

/// Evaluates a form on its source operands (in instruction order, without `d`; vector braces
/// flattened). Operands are bit patterns; wider register values are first chopped to the
/// instruction type's width by the caller or here (bits above the width are an error).
pub fn evaluate(form: &CvtForm, operands: &[u64]) -> Result<Evaluation, EvalError> {
    let mut lanes = Vec::with_capacity(4);
    let (bits, width) = evaluate_into(form, operands, |l| lanes.push(*l))?;
    Ok(Evaluation { bits, width, lanes })
}

/// [`evaluate`] without the lanes: only the destination value and its width, and no heap
/// allocation on success (what the batch evaluator needs).
///
/// ```
/// use gpucvt::ptx::{eval::evaluate_bits, CvtForm, PtxType, RoundMod};
/// let mut f = CvtForm::new(PtxType::F16, PtxType::F32);
/// f.rounding = Some(RoundMod::Rn);
/// assert_eq!(evaluate_bits(&f, &[0x3f80_0000]).unwrap(), (0x3c00, 16));
/// ```
pub fn evaluate_bits(form: &CvtForm, operands: &[u64]) -> Result<(u64, u32), EvalError> {
    evaluate_into(form, operands, |_| {})
}

/// [`evaluate_bits`] that shows each lane to `visit` (most significant first) as it is
/// computed: the lanes' flags without the heap allocation of [`evaluate`] (what the C
/// library's one-lane evaluation needs).
///
/// ```
/// use gpucvt::core::Flags;
/// use gpucvt::ptx::{eval::evaluate_each, parse_instruction};
/// let form = parse_instruction("cvt.rn.f16.f32").unwrap().form;
/// let mut flags = Flags::empty();
/// let r = evaluate_each(&form, &[0x3f80_0001], |l| flags |= l.outcome.flags).unwrap();
/// assert_eq!(r, (0x3c00, 16));
/// assert!(flags.contains(Flags::INEXACT));
/// ```
pub fn evaluate_each(
    form: &CvtForm,
    operands: &[u64],
    visit: impl FnMut(&LaneResult),
) -> Result<(u64, u32), EvalError> {
    evaluate_into(form, operands, visit)
}

fn evaluate_into(
    form: &CvtForm,
    operands: &[u64],
    visit: impl FnMut(&LaneResult),
) -> Result<(u64, u32), EvalError> {
    Planned::new(form).evaluate_each(operands, visit)
}

/// A form with what its evaluation derives from it worked out once: its operands and their
/// widths, the lane formats, rounding and policy, and the core's conversion function compiled
/// for the pair of lane formats ([`Conversion::compiled`]). Every evaluation of a form goes
/// through one ([`evaluate`] makes one per call); [`crate::instr::Instr`] keeps one per PTX
/// form, so that evaluating it many times (the C library, `eval --batch`) does not redo it.
///
/// ```
/// use gpucvt::ptx::{eval::Planned, parse_instruction};
/// let p = Planned::new(&parse_instruction("cvt.rn.satfinite.e4m3x2.f32").unwrap().form);
/// assert_eq!(p.evaluate_each(&[0x3f80_0000, 0x4396_0000], |_| {}).unwrap(), (0x3879, 16));
/// ```
#[derive(Clone, Copy)]
pub struct Planned {
    form: CvtForm,
    roles: Roles,
    /// Each operand's mask (its width).
    masks: [u64; 6],
    /// The lanes' plan; `None` for `cvt.pack` and for forms with no conversion semantics
    /// (refused after the operand checks, as the operands are checked first).
    lanes: Option<LanePlan>,
}

/// What every lane of a non-`cvt.pack` form shares.
#[derive(Clone, Copy)]
struct LanePlan {
    /// Every lane's conversion, before its share of the random bits and its scale factor.
    conversion: Conversion,
    apply: gpucvt_core::convert::ApplyFn,
    /// Destination lanes, and the width of each one's slot.
    lanes: usize,
    slot: u32,
    /// The source's lanes and their width (a packed source: several in `a`).
    src_lanes: u32,
    src_lane_bits: u32,
    /// The ue8m0 scale operand (`.scaled`, s2f6): its width is 8 (one factor), else 16.
    scaled: bool,
    scale8: bool,
    /// A down-conversion divides by the scale factor.
    divide: bool,
}

impl core::fmt::Debug for Planned {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Planned")
            .field("form", &self.form)
            .finish_non_exhaustive()
    }
}

/// Plans are functions of their forms: equal forms have equal plans.
impl PartialEq for Planned {
    fn eq(&self, other: &Planned) -> bool {
        self.form == other.form
    }
}

impl Eq for Planned {}

impl Planned {
    /// The plan of a form.
    pub fn new(form: &CvtForm) -> Planned {
        let roles = roles_of(form);
        let mut masks = [0u64; 6];
        for (m, &r) in masks.iter_mut().zip(roles.as_slice()) {
            *m = mask(role_bits(form, r));
        }
        let evaluable = !form.pack
            && !matches!(form.dtype.kind(), Kind::Bits | Kind::Pred)
            && !matches!(form.atype.kind(), Kind::Bits | Kind::Pred);
        let lanes = match (form.dtype.lane_format(), form.atype.lane_format()) {
            (Some(dst), Some(src)) if evaluable => {
                let rounding = rounding_of(form);
                let policy = policy_of(form, &src, &dst);
                let c = Conversion::new(src, dst, rounding, policy);
                Some(LanePlan {
                    conversion: c,
                    // The compiled instances are proven equal to `apply`; the scaled forms,
                    // rare and with a per-lane scale, keep the general path.
                    apply: if takes_scale(form) {
                        Conversion::apply
                    } else {
                        c.compiled()
                    },
                    lanes: form.dtype.lanes() as usize,
                    slot: form.dtype.lane_bits(),
                    src_lanes: form.atype.lanes(),
                    src_lane_bits: form.atype.lane_bits(),
                    scaled: takes_scale(form),
                    scale8: scale_bits(form) == 8,
                    divide: form.dtype.lane_bits() < form.atype.lane_bits(),
                })
            }
            _ => None,
        };
        Planned {
            form: *form,
            roles,
            masks,
            lanes,
        }
    }

    /// The form.
    pub fn form(&self) -> &CvtForm {
        &self.form
    }

    /// [`evaluate_each`] with this plan.
    ///
    /// # Errors
    /// As [`evaluate`].
    pub fn evaluate_each(
        &self,
        operands: &[u64],
        mut visit: impl FnMut(&LaneResult),
    ) -> Result<(u64, u32), EvalError> {
        let form = &self.form;
        let roles = self.roles.as_slice();
        if operands.len() != roles.len() {
            let names: Vec<&str> = roles.iter().map(|r| r.name()).collect();
            return Err(EvalError::OperandCount {
                form: form.spelling(),
                expected: roles.len(),
                names: names.join(", "),
                got: operands.len(),
            });
        }
        for ((&role, &v), &m) in roles.iter().zip(operands).zip(&self.masks) {
            if v & !m != 0 {
                return Err(EvalError::OperandTooWide {
                    role: role.name(),
                    value: v,
                    bits: role_bits(form, role),
                });
            }
        }
        let get = |r: Role| roles.iter().position(|&x| x == r).map(|i| operands[i]);
        if form.pack {
            return evaluate_pack(form, get(Role::A), get(Role::B), get(Role::C), visit);
        }
        let Some(p) = &self.lanes else {
            return Err(EvalError::NotEvaluable(form.spelling()));
        };
        // Lane inputs, most significant first.
        let mut input_list = [0u64; 8];
        let mut n_inputs = 0usize;
        if p.src_lanes > 1 {
            let a = get(Role::A).unwrap_or(0);
            let (n, lb) = (p.src_lanes, p.src_lane_bits);
            for k in 0..n {
                if n_inputs < input_list.len() {
                    input_list[n_inputs] = (a >> (lb * (n - 1 - k))) & mask(lb);
                }
                n_inputs += 1;
            }
        } else {
            for (&r, &v) in roles.iter().zip(operands) {
                if matches!(r, Role::A | Role::B | Role::E | Role::F) {
                    input_list[n_inputs] = v;
                    n_inputs += 1;
                }
            }
        }
        let lanes = p.lanes;
        if n_inputs != lanes || n_inputs > input_list.len() {
            return Err(EvalError::NotEvaluable(form.spelling()));
        }
        let inputs = &input_list[..n_inputs];
        let scale_operand = if p.scaled {
            get(Role::Scale).unwrap_or(if p.scale8 { 0x7f } else { 0x7f7f })
        } else {
            0
        };
        let rbits = get(Role::Rbits).unwrap_or(0);
        let dst_mask = mask(p.conversion.dst.width());
        let mut out_bits = 0u64;
        for (k, &input) in inputs.iter().enumerate() {
            // Changed in place where a lane differs, so that the common lane copies the
            // plan's conversion whole.
            let mut conversion = p.conversion;
            let mut input = input;
            let mut apply = p.apply;
            if p.scaled {
                let e = if p.scale8 {
                    scale_operand & 0xff
                } else {
                    // n2: the high byte scales the high lane.
                    (scale_operand >> (8 * (lanes - 1 - k.min(lanes - 1)) as u32)) & 0xff
                };
                if e == 0xff {
                    // The scale is the ue8m0 NaN: the lane's input becomes a NaN of a format
                    // that has one (choice `scale-nan`).
                    conversion.src = format::F32;
                    input = format::F32.canonical_nan().unwrap_or(0);
                    apply = Conversion::apply;
                } else {
                    let k2 = e as i32 - 127;
                    conversion.policy.scale = if p.divide { -k2 } else { k2 };
                }
            }
            if form.rounding == Some(RoundMod::Rs) {
                let (r, w) = lane_rbits(form, rbits, k);
                conversion.rounding = Rounding::stochastic(r, w);
            }
            let outcome = apply(&conversion, input);
            let shift = p.slot * (lanes - 1 - k) as u32;
            out_bits |= (outcome.bits & dst_mask) << shift;
            visit(&LaneResult {
                conversion,
                input,
                shift,
                outcome,
            });
        }
        Ok((out_bits, form.dtype.bits()))
    }
}

fn evaluate_pack(
    form: &CvtForm,
    a: Option<u64>,
    b: Option<u64>,
    c: Option<u64>,
    mut visit: impl FnMut(&LaneResult),
) -> Result<(u64, u32), EvalError> {
    let not_evaluable = || EvalError::NotEvaluable(form.spelling());
    let dst = form.dtype.lane_format().ok_or_else(not_evaluable)?;
    let src = form.atype.lane_format().ok_or_else(not_evaluable)?;
    let size = dst.width();
    let policy = Policy {
        sat: true,
        ..Policy::default()
    };
    let conversion = Conversion::new(src, dst, Rounding::RZ, policy);
    let mut bits = 0u64;
    for (k, v) in [a, b].into_iter().enumerate() {
        let input = v.unwrap_or(0) & mask(src.width());
        let outcome = conversion.apply(input);
        let shift = size * (1 - k as u32);
        bits |= (outcome.bits & mask(size)) << shift;
        visit(&LaneResult {
            conversion,
            input,
            shift,
            outcome,
        });
    }
    if let Some(c) = c {
        bits |= (c << (2 * size)) & mask(32);
    }
    bits &= mask(32);
    Ok((bits, 32))
}

/// Extends a result to a destination register of `reg_bits` bits (`ptx-cvt.md` §4.15):
/// sign extension for signed-integer destination types, zero extension otherwise.
///
/// ```
/// use gpucvt::ptx::{eval::extend_to_register, PtxType};
/// assert_eq!(extend_to_register(PtxType::S16, 0x8000, 32), 0xffff_8000);
/// assert_eq!(extend_to_register(PtxType::F16, 0x8000, 32), 0x0000_8000);
/// ```
pub fn extend_to_register(dtype: PtxType, value: u64, reg_bits: u32) -> u64 {
    let w = if dtype.kind() == Kind::Packed || dtype.lanes() > 1 {
        dtype.bits()
    } else {
        dtype
            .lane_format()
            .map_or(dtype.bits(), |f| f.width().max(dtype.bits()))
    };
    let value = value & mask(w);
    let out = if dtype.kind() == Kind::Signed && w < 64 && (value >> (w - 1)) & 1 == 1 {
        value | !mask(w)
    } else {
        value
    };
    out & mask(reg_bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PtxType::*;

    fn form(d: PtxType, a: PtxType, r: Option<RoundMod>) -> CvtForm {
        let mut f = CvtForm::new(d, a);
        f.rounding = r;
        f
    }

    fn eval(f: &CvtForm, ops: &[u64]) -> u64 {
        evaluate(f, ops).unwrap().bits
    }

    #[test]
    fn packing_order() {
        let f = form(F16x2, F32, Some(RoundMod::Rn));
        assert_eq!(eval(&f, &[0x3f80_0000, 0x4000_0000]), 0x3c00_4000);
        let mut f = form(E2m1x2, F32, Some(RoundMod::Rn));
        f.satfinite = true;
        assert_eq!(eval(&f, &[0x3f80_0000, 0xc0c0_0000]), 0x2f); // 1.0, -6.0
        let mut f = form(E2m1x2, F16x2, Some(RoundMod::Rn));
        f.satfinite = true;
        assert_eq!(eval(&f, &[0x3c00_c600]), 0x2f);
        let f = form(F16x2, E4m3x2, Some(RoundMod::Rn));
        assert_eq!(eval(&f, &[0x3879]), 0x3c00_5c80); // 1.0, 288.0
        let mut f = form(E3m2x2, F32, Some(RoundMod::Rn));
        f.satfinite = true;
        assert_eq!(eval(&f, &[0x3f80_0000, 0xbf80_0000]), 0x0c2c);
    }

    #[test]
    fn ue8m0_vectors_from_the_notes() {
        let rp = form(Ue8m0x2, F32, Some(RoundMod::Rp));
        let rz = form(Ue8m0x2, F32, Some(RoundMod::Rz));
        assert_eq!(eval(&rp, &[0x3f80_0008, 0x3f80_0001]), 0x8080);
        assert_eq!(eval(&rz, &[0x3f80_0008, 0x3f80_0001]), 0x7f7f);
        assert_eq!(eval(&rp, &[0x0040_0000, 0x0020_0000]), 0x0000);
        assert_eq!(eval(&rp, &[0x0040_0001, 0x0080_0001]), 0x0102);
        assert_eq!(eval(&rp, &[0x3fc0_0000, 0xbfc0_0000]), 0x8080);
        let up = form(Bf16x2, Ue8m0x2, Some(RoundMod::Rn));
        assert_eq!(eval(&up, &[0x00ff]), 0x0040_7fff);
    }

    #[test]
    fn integers_and_registers() {
        let f = form(S16, U32, None);
        assert_eq!(eval(&f, &[0x0001_8000]), 0x8000);
        assert_eq!(extend_to_register(S16, 0x8000, 32), 0xffff_8000);
        let mut f = form(U8, S32, None);
        f.sat = true;
        assert_eq!(eval(&f, &[(-5i32) as u32 as u64]), 0);
        let f = form(S32, F64, Some(RoundMod::Rni));
        assert_eq!(eval(&f, &[0x7ff8_0000_0000_0000]), 0x8000_0000);
        let f = form(U64, F32, Some(RoundMod::Rni));
        assert_eq!(eval(&f, &[0x7fc0_0000]), 0x8000_0000_0000_0000);
        let f = form(S32, F32, Some(RoundMod::Rni));
        assert_eq!(eval(&f, &[0x7fc0_0000]), 0);
    }

    #[test]
    fn stochastic_lanes() {
        let f = form(Bf16x2, F32, Some(RoundMod::Rs));
        // 1 + 2^-8 (half an ulp of bf16): rbits 0x8000 carries, 0x7fff does not.
        let x = 0x3f80_8000;
        assert_eq!(eval(&f, &[x, x, 0x8000_7fff]), 0x3f81_3f80);
        let f = form(F16x2, F32, Some(RoundMod::Rs));
        let x = 0x3f80_1000; // 1 + 2^-11: half an f16 ulp
        assert_eq!(eval(&f, &[x, x, 0x1000_0fff]), 0x3c01_3c00);
    }

    #[test]
    fn s2f6_scales() {
        let mut f = form(S2f6x2, F32, Some(RoundMod::Rn));
        f.satfinite = true;
        assert_eq!(eval(&f, &[0x3f80_0000, 0xc080_0000]), 0x4080); // 1.0, -4.0 → -2.0
                                                                   // Scale 2^1 on a: 1.0 / 2 = 0.5 (0x20); scale NaN on b: +MAX_NORM.
        f.scaled = Some(Scaled::N2Ue8m0);
        assert_eq!(eval(&f, &[0x3f80_0000, 0x3f80_0000, 0x80ff]), 0x207f);
        let mut f = form(Bf16x2, S2f6x2, Some(RoundMod::Rn));
        f.scaled = Some(Scaled::N2Ue8m0);
        assert_eq!(eval(&f, &[0x40c0, 0x807f]), 0x4000_bf80); // 1.0×2, -1.0×1
    }

    #[test]
    fn operand_count_errors() {
        let f = form(F16x2, F32, Some(RoundMod::Rn));
        assert!(matches!(
            evaluate(&f, &[1]),
            Err(EvalError::OperandCount { got: 1, .. })
        ));
        let f = form(F16, F32, Some(RoundMod::Rn));
        assert!(matches!(
            evaluate(&f, &[1 << 40]),
            Err(EvalError::OperandTooWide { .. })
        ));
    }
}
