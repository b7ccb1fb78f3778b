//! Elementwise evaluation of the nine conversion ops, under two semantics.
//!
//! - [`Semantics::Spec`]: what the specification text says (the newest, 13.4, text): one
//!   correctly rounded conversion through the core's [`convert`], and
//!   [`ElementResult::Undefined`] where the text says the result is undefined (non-saturating
//!   `ftoi` of NaN, ±Inf or an out-of-range value; `trunci` whose overflow flag is violated).
//! - [`Semantics::Tileiras`] (the default): what NVIDIA's compiler emits (`tile-ir.md` §3.3,
//!   §3.4): each op is the sequence of PTX instructions it lowers to ([`lowering`]), and each
//!   `cvt` in it is evaluated by gpucvt's PTX dialect ([`crate::ptx::eval::evaluate`]). The
//!   PTX [`Target`] selects between the sm_80 and sm_90+ lowerings (`f64 → bf16`, `f32 →
//!   tf32`) and gates the element types `tileiras` supports per architecture.
//!
//! ```
//! use gpucvt::tile::{eval::{eval_op, ElementResult, Semantics}, parse::parse_op};
//! use gpucvt::ptx::Target;
//! // itof 4609 → f8E5M2: the compiler goes through f16 and rounds twice.
//! let op = parse_op("itof %x signed : tile<i32> -> tile<f8E5M2>").unwrap();
//! let t = eval_op(&op, Semantics::Tileiras, Target::SM_90, &[4609]).unwrap();
//! let s = eval_op(&op, Semantics::Spec, Target::SM_90, &[4609]).unwrap();
//! assert_eq!(t, [ElementResult::Bits(0x6c)]); // 4096
//! assert_eq!(s, [ElementResult::Bits(0x6d)]); // 5120
//! ```
//!
//! # Choices where the sources are silent or disagree
//!
//! - `spec`, float destinations: f16/bf16/f32/f64/tf32 round by the mode with IEEE overflow
//!   and the canonical NaN; every narrow destination (e4m3, e5m2, e2m1, ue8m0, ue5m3)
//!   saturates to finite (the 13.4 table names e4m3 and e5m2; the others follow the same
//!   rule, as the compiler's `.satfinite` does). An e4m3 destination turns NaN into +MAX_NORM
//!   (0x7e), as the 13.4 table says, although the compiler (PTX) gives NaN (0x7f); a negative
//!   value into an unsigned format (ue8m0, ue5m3) keeps its magnitude.
//! - `spec`, `tf32` sources are their 19 significant bits (low 13 bits ignored); `tileiras`
//!   reads them as `f32` words.
//! - `tileiras` pairs that `tile-ir.md` §3.3 does not list are lowered by the same pattern as
//!   their neighbours: narrow sources are widened exactly (fp8/e2m1 through f16, ue8m0/ue5m3
//!   through bf16) to f32 and converted from there; `f64 → e2m1/ue8m0/ue5m3` goes through f32
//!   like `f64 → fp8`; `ftoi` from ue5m3 goes through f32 (not f16); `ftoi` to i1 from e2m1,
//!   ue8m0 and ue5m3 tests the raw bits as for fp8; `itof` from signed i1 selects −1.0;
//!   saturating `ftoi` from ue8m0 and e2m1 clamps the exact value; the sm_80 `tf32` emulation
//!   with `zero` truncates and with `nearest_away` rounds half away (only `nearest_even` is
//!   documented).
//! - `tileiras` needs sm_90 for f8E4M3FN/f8E5M2, sm_100 for f8E8M0FNU/f4E2M1FN and sm_107 for
//!   fnv8E5M3FNU (cuTile's `_DTYPE_MIN_SM`); on older targets evaluation is
//!   [`EvalError::Unsupported`], as is saturating `ftoi` from f8E4M3FN/f8E5M2, which
//!   `tileiras` 13.4.92 fails to compile.
//! - Results are compared bit for bit ([`difference`]): two different NaN encodings differ.

use super::check::{exactly_representable, verify_op};
use super::parse::ConvOp;
use super::types::{ElemType, Element, OpKind, Overflow, RoundingMode, Signedness};
use crate::diag::Diagnostic;
use crate::ptx::eval::{evaluate, operand_roles};
use crate::ptx::{CvtForm, PtxType, RoundMod, Target};
use gpucvt_core::convert::{convert, IntNan, IntOverflow, Policy};
use gpucvt_core::format::{self, Format};
use gpucvt_core::value::Class;
use gpucvt_core::{Flags, Rounding};

/// Which semantics to evaluate with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Semantics {
    /// The specification text: single correctly rounded conversions; undefined results
    /// marked.
    Spec,
    /// What `tileiras` emits: the PTX `cvt` sequences of §3.3.
    #[default]
    Tileiras,
}

impl Semantics {
    /// `spec` or `tileiras`.
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Spec => "spec",
            Semantics::Tileiras => "tileiras",
        }
    }

    /// Looks a name up.
    pub fn from_name(name: &str) -> Option<Semantics> {
        match name {
            "spec" => Some(Semantics::Spec),
            "tileiras" => Some(Semantics::Tileiras),
            _ => None,
        }
    }
}

/// The default PTX target of the `tileiras` semantics: `sm_100a` (every element type but
/// `fnv8E5M3FNU`).
pub const DEFAULT_TARGET: Target = Target::SM_100A;

/// The result of one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementResult {
    /// A bit pattern of the result element type (`i1`: 0 or 1; `tf32`: an `f32` word).
    Bits(u64),
    /// The specification says the result is undefined; the reason.
    Undefined(&'static str),
}

impl ElementResult {
    /// The bits, if defined.
    pub fn bits(self) -> Option<u64> {
        match self {
            ElementResult::Bits(b) => Some(b),
            ElementResult::Undefined(_) => None,
        }
    }
}

/// Why an op or an entry could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// The op does not verify (at the newest spec version).
    #[error("the op is not valid: {}", .0.first().map_or(String::new(), |d| d.message.clone()))]
    Invalid(Vec<Diagnostic>),
    /// `tileiras` does not compile this op for the target.
    #[error("{0}")]
    Unsupported(String),
    /// An input element does not fit the source element type.
    #[error(
        "element {index} = {value:#x} does not fit in the {bits} bits of the source element type"
    )]
    InputTooWide {
        /// Which element.
        index: usize,
        /// Its value.
        value: u64,
        /// The element width.
        bits: u32,
    },
    /// A PTX step could not be evaluated (an internal inconsistency).
    #[error("PTX step {form}: {message}")]
    Ptx {
        /// The step's spelling.
        form: String,
        /// What went wrong.
        message: String,
    },
    /// No function of that name.
    #[error("no entry named @{0}")]
    NoEntry(String),
    /// Wrong number of arguments.
    #[error("@{entry} takes {expected} argument(s), got {got}")]
    ArgCount {
        /// The entry.
        entry: String,
        /// How many it takes.
        expected: usize,
        /// How many were given.
        got: usize,
    },
    /// An argument has the wrong number of elements.
    #[error(
        "argument %{name} of type {ty} needs {expected} element(s) (or 1 to splat), got {got}"
    )]
    ArgLength {
        /// The argument.
        name: String,
        /// Its type.
        ty: String,
        /// Its element count.
        expected: u64,
        /// How many were given.
        got: usize,
    },
    /// A value used by a conversion is not available (undeclared, or from a skipped op).
    #[error("value %{0} is not defined by an argument, a constant or a conversion")]
    UnknownValue(String),
    /// A conversion reads a value that a skipped op defined and no `--arg` supplied (rule
    /// `tile.run-unknown`, at the operand).
    #[error("{}", .0.message)]
    Stopped(Diagnostic),
    /// A value is used at a type different from its own.
    #[error("value %{name} has type {actual}, the op expects {expected}")]
    TypeMismatch {
        /// The value.
        name: String,
        /// Its type.
        actual: String,
        /// The op's source type.
        expected: String,
    },
}

/// A non-`cvt` instruction (or instruction pattern) of a lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Machine {
    /// No instruction: the bits are kept (bitcast, pointer ops, `tf32 → f32`).
    Copy,
    /// Sign extension from `from` to `to` bits (a sign-extending load).
    SignExtend {
        /// Source width.
        from: u32,
        /// Result width.
        to: u32,
    },
    /// Zero extension (a plain load into a wider register).
    ZeroExtend {
        /// Source width.
        from: u32,
        /// Result width.
        to: u32,
    },
    /// Keep the low `bits` bits (a narrow store, or `and.b16 x, 1` for i1).
    KeepLow {
        /// Result width.
        bits: u32,
    },
    /// `setp.neu.<ty> p, x, 0` → `selp 1, 0`: float compare with zero (NaN → 1, −0 → 0).
    NonZeroFloat {
        /// The PTX float type compared.
        ty: PtxType,
    },
    /// `setp.ne.b<bits> p, x, 0` → `selp 1, 0`: any bit set.
    NonZeroBits {
        /// The width tested.
        bits: u32,
    },
    /// i1 → integer: `setp.ne.b16 p, x, 0` → `selp 1, 0` (unsigned) or `selp -1, 0` (signed).
    BoolToInt {
        /// Result width.
        to: u32,
        /// Signed (−1) or unsigned (1).
        signed: bool,
    },
    /// i1 → float: `setp.ne.b16 p, x, 0` → `selp 1.0, 0.0` (−1.0 when signed).
    BoolToFloat {
        /// The PTX float type selected.
        ty: PtxType,
        /// Signed (−1.0) or unsigned (1.0).
        signed: bool,
    },
    /// Saturating `ftoi`: NaN → 0, clamp to the destination range, then `cvt.rzi`
    /// (`max`/`min` in float for 8/16-bit results, compare-and-select otherwise).
    SaturatingFtoi {
        /// The PTX float type of the input.
        src: PtxType,
        /// The integer result type.
        dst: PtxType,
    },
    /// The sm_80 integer emulation of `f32 → tf32` (no `cvt.*.tf32.f32` there).
    Tf32Emulation {
        /// The rounding.
        mode: RoundMod,
    },
}

impl Machine {
    /// The PTX text of the pattern (one or more instructions, `→`-separated).
    pub fn spelling(&self) -> String {
        match *self {
            Machine::Copy => "(no instruction: bits copied)".into(),
            Machine::SignExtend { from, to } => {
                format!("ld.global.s{from} (sign-extend {from} → {to} bits)")
            }
            Machine::ZeroExtend { from, to } => {
                format!("ld.global.u{from} (zero-extend {from} → {to} bits)")
            }
            Machine::KeepLow { bits: 1 } => "and.b16 %r, %x, 1".into(),
            Machine::KeepLow { bits: 4 } => "and.b16 %r, %x, 0xf".into(),
            Machine::KeepLow { bits } => format!("st.global.b{bits} (keep the low {bits} bits)"),
            Machine::NonZeroFloat { ty } => {
                format!("setp.neu.{} %p, %x, 0 → selp.u16 %r, 1, 0, %p", ty.name())
            }
            Machine::NonZeroBits { bits } => format!(
                "setp.ne.b{} %p, %x, 0 → selp.u16 %r, 1, 0, %p",
                bits.max(16)
            ),
            Machine::BoolToInt { to, signed } => format!(
                "setp.ne.b16 %p, %x, 0 → selp.b{} %r, {}, 0, %p",
                to.max(16),
                if signed { "-1" } else { "1" }
            ),
            Machine::BoolToFloat { ty, signed } => format!(
                "setp.ne.b16 %p, %x, 0 → selp.{} %r, {}, 0.0, %p",
                ty.name(),
                if signed { "-1.0" } else { "1.0" }
            ),
            Machine::SaturatingFtoi { src, dst } => {
                let s = if dst.bits() <= 16 { "s16" } else { dst.name() };
                let (s, cvt_dst) = if dst.kind() == crate::ptx::types::Kind::Unsigned {
                    ("u", if dst.bits() <= 16 { "u16" } else { dst.name() })
                } else {
                    ("s", s)
                };
                let _ = s;
                if dst.bits() <= 16 {
                    format!(
                        "setp.nan.{src} %p, %x, %x → max.{src} %x, %x, MIN → min.{src} %x, %x, \
                         MAX → cvt.rzi.{cvt_dst}.{src} → selp 0 if NaN",
                        src = if src == PtxType::F64 { "f64" } else { "f32" }
                    )
                } else {
                    format!(
                        "setp.ltu.{src} %p, %x, MIN → cvt.rzi.{cvt_dst}.{src} → selp MIN → \
                         setp.gt.{src} %p, %x, MAX → selp MAX → setp.nan.{src} → selp 0",
                        src = src.name()
                    )
                }
            }
            Machine::Tf32Emulation { mode } => format!(
                "(sm_80 integer emulation of cvt.{}.tf32.f32: NaN → 0x7fffffff, round at bit \
                 13, & 0xffffe000)",
                mode.name()
            ),
        }
    }

    fn apply(&self, x: u64) -> u64 {
        match *self {
            Machine::Copy => x,
            Machine::SignExtend { from, to } => {
                let v = x & mask(from);
                let ext = if from > 0 && (v >> (from - 1)) & 1 == 1 {
                    v | !mask(from)
                } else {
                    v
                };
                ext & mask(to)
            }
            Machine::ZeroExtend { from, to } => x & mask(from) & mask(to),
            Machine::KeepLow { bits } => x & mask(bits),
            Machine::NonZeroFloat { ty } => {
                let f = ty.lane_format().unwrap_or(format::F32);
                let v = f.decode(x);
                // `neu`: unordered or not equal; NaN compares unordered.
                (!matches!(v.class, Class::Zero)) as u64
            }
            Machine::NonZeroBits { bits } => (x & mask(bits) != 0) as u64,
            Machine::BoolToInt { to, signed } => {
                if x & 1 == 1 {
                    if signed {
                        mask(to)
                    } else {
                        1
                    }
                } else {
                    0
                }
            }
            Machine::BoolToFloat { ty, signed } => {
                let f = ty.lane_format().unwrap_or(format::F32);
                let v = if x & 1 == 1 {
                    gpucvt_core::Value::finite(signed, 1, 0)
                } else {
                    gpucvt_core::Value::zero(false)
                };
                convert(&v, &f, Rounding::RN, &Policy::default()).bits
            }
            Machine::SaturatingFtoi { src, dst } => {
                let sf = src.lane_format().unwrap_or(format::F32);
                let df = dst.lane_format().unwrap_or(format::S32);
                let pol = Policy {
                    int_nan: IntNan::Zero,
                    int_overflow: IntOverflow::Clamp,
                    ..Policy::default()
                };
                convert(&sf.decode(x), &df, Rounding::RZI, &pol).bits
            }
            Machine::Tf32Emulation { mode } => {
                let x = x & 0xffff_ffff;
                if (x >> 23) & 0xff == 0xff {
                    return if x & 0x7f_ffff != 0 { 0x7fff_ffff } else { x };
                }
                let add = match mode {
                    RoundMod::Rz => 0,
                    RoundMod::Rna => 0x1000,
                    _ => {
                        let round = (x >> 12) & 1;
                        let sticky = (x & 0xfff != 0) as u64;
                        let lsb = (x >> 13) & 1;
                        if round == 1 && (sticky == 1 || lsb == 1) {
                            0x2000
                        } else {
                            0
                        }
                    }
                };
                (x + add) & 0xffff_e000 & 0xffff_ffff
            }
        }
    }
}

/// One step of a lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// A PTX `cvt`; the element sits in the low lane of packed operands (`b` of two-source
    /// x2 forms), and the result is the low lane.
    Cvt(CvtForm),
    /// Any other instruction pattern.
    Other(Machine),
}

impl Step {
    /// The PTX spelling.
    pub fn spelling(&self) -> String {
        match self {
            Step::Cvt(f) => f.spelling(),
            Step::Other(m) => m.spelling(),
        }
    }

    fn apply(&self, x: u64) -> Result<u64, EvalError> {
        match self {
            Step::Other(m) => Ok(m.apply(x)),
            Step::Cvt(form) => {
                let n = operand_roles(form).len();
                let x = x & mask(if form.atype.lanes() > 1 {
                    form.atype.lane_bits()
                } else {
                    form.atype.bits()
                });
                let ops: Vec<u64> = match n {
                    1 => vec![x],
                    _ => {
                        let mut v = vec![0; n];
                        v[1] = x;
                        v
                    }
                };
                let ev = evaluate(form, &ops).map_err(|e| EvalError::Ptx {
                    form: form.spelling(),
                    message: e.to_string(),
                })?;
                Ok(ev.bits & mask(form.dtype.lane_bits()))
            }
        }
    }
}

/// The PTX sequence an op lowers to for one element, as data.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Lowering {
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl Lowering {
    /// The spellings of the steps (`cvt.rn.f32.f64`, …), for `--explain`.
    pub fn spellings(&self) -> Vec<String> {
        self.steps.iter().map(|s| s.spelling()).collect()
    }

    /// Runs the steps on one element.
    pub fn apply(&self, x: u64) -> Result<u64, EvalError> {
        self.steps.iter().try_fold(x, |v, s| s.apply(v))
    }
}

pub(crate) fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn cvt(d: PtxType, a: PtxType, r: Option<RoundMod>) -> Step {
    let mut f = CvtForm::new(d, a);
    f.rounding = r;
    Step::Cvt(f)
}

fn cvt_sf(d: PtxType, a: PtxType, r: RoundMod) -> Step {
    let mut f = CvtForm::new(d, a);
    f.rounding = Some(r);
    f.satfinite = true;
    Step::Cvt(f)
}

fn round_mod(m: RoundingMode) -> RoundMod {
    match m {
        RoundingMode::Zero => RoundMod::Rz,
        RoundingMode::NegativeInf => RoundMod::Rm,
        RoundingMode::PositiveInf => RoundMod::Rp,
        RoundingMode::NearestAway => RoundMod::Rna,
        _ => RoundMod::Rn,
    }
}

/// The packed PTX type of a narrow element (`e4m3x2`, …).
fn packed(e: ElemType) -> Option<PtxType> {
    Some(match e {
        ElemType::F8E4M3FN => PtxType::E4m3x2,
        ElemType::F8E5M2 => PtxType::E5m2x2,
        ElemType::F4E2M1FN => PtxType::E2m1x2,
        ElemType::F8E8M0FNU => PtxType::Ue8m0x2,
        ElemType::FNV8E5M3FNU => PtxType::Ue5m3x2,
        _ => return None,
    })
}

/// The scalar PTX type of a wide float element (`tf32` reads as `f32`).
fn scalar(e: ElemType) -> Option<PtxType> {
    Some(match e {
        ElemType::F16 => PtxType::F16,
        ElemType::BF16 => PtxType::Bf16,
        ElemType::F32 | ElemType::TF32 => PtxType::F32,
        ElemType::F64 => PtxType::F64,
        _ => return None,
    })
}

fn int_ptx(bits: u32, signed: bool) -> PtxType {
    match (bits, signed) {
        (64, true) => PtxType::S64,
        (64, false) => PtxType::U64,
        (32, true) => PtxType::S32,
        (32, false) => PtxType::U32,
        (_, true) => PtxType::S16,
        (_, false) => PtxType::U16,
    }
}

/// Exact widening of a float element to f32, as the compiler does it.
fn to_f32(s: ElemType) -> Vec<Step> {
    use ElemType::*;
    match s {
        F16 => vec![cvt(PtxType::F32, PtxType::F16, None)],
        BF16 => vec![cvt(PtxType::F32, PtxType::Bf16, None)],
        F8E4M3FN | F8E5M2 | F4E2M1FN => vec![
            cvt(
                PtxType::F16x2,
                packed(s).unwrap_or(PtxType::E4m3x2),
                Some(RoundMod::Rn),
            ),
            cvt(PtxType::F32, PtxType::F16, None),
        ],
        F8E8M0FNU | FNV8E5M3FNU => vec![
            cvt(
                PtxType::Bf16x2,
                packed(s).unwrap_or(PtxType::Ue8m0x2),
                Some(RoundMod::Rn),
            ),
            cvt(PtxType::F32, PtxType::Bf16, None),
        ],
        _ => Vec::new(),
    }
}

/// f32 (in a register) to a float element.
fn from_f32(d: ElemType, r: RoundMod, target: Target) -> Vec<Step> {
    use ElemType::*;
    match d {
        F16 => vec![cvt(PtxType::F16x2, PtxType::F32, Some(r))],
        BF16 => vec![cvt(PtxType::Bf16x2, PtxType::F32, Some(r))],
        F64 => vec![cvt(PtxType::F64, PtxType::F32, None)],
        TF32 if target.arch() < 90 => vec![Step::Other(Machine::Tf32Emulation { mode: r })],
        TF32 => vec![cvt(PtxType::Tf32, PtxType::F32, Some(r))],
        F8E8M0FNU => vec![cvt_sf(PtxType::Ue8m0x2, PtxType::F32, r)],
        F8E4M3FN | F8E5M2 | F4E2M1FN | FNV8E5M3FNU => vec![cvt_sf(
            packed(d).unwrap_or(PtxType::E4m3x2),
            PtxType::F32,
            RoundMod::Rn,
        )],
        _ => Vec::new(),
    }
}

fn ftof_lowering(s: ElemType, d: ElemType, m: RoundingMode, target: Target) -> Vec<Step> {
    use ElemType::*;
    let exact = exactly_representable(s, d);
    let r = if exact { RoundMod::Rn } else { round_mod(m) };
    let ne = m == RoundingMode::NearestEven;
    match (s, d) {
        (TF32, F32) => vec![Step::Other(Machine::Copy)],
        (F64, F32) => vec![cvt(PtxType::F32, PtxType::F64, Some(r))],
        (F64, F16) if ne => vec![cvt(PtxType::F16, PtxType::F64, Some(RoundMod::Rn))],
        (F64, BF16) if ne && target.arch() >= 90 => {
            vec![cvt(PtxType::Bf16, PtxType::F64, Some(RoundMod::Rn))]
        }
        (F64, _) => {
            let mut v = vec![cvt(PtxType::F32, PtxType::F64, Some(r))];
            v.extend(from_f32(d, r, target));
            v
        }
        (F16 | BF16 | F32 | TF32, F64) => {
            vec![cvt(PtxType::F64, scalar(s).unwrap_or(PtxType::F32), None)]
        }
        (F8E4M3FN | F8E5M2 | F4E2M1FN, F64) => vec![
            cvt(
                PtxType::F16x2,
                packed(s).unwrap_or(PtxType::E4m3x2),
                Some(RoundMod::Rn),
            ),
            cvt(PtxType::F64, PtxType::F16, None),
        ],
        (F8E8M0FNU | FNV8E5M3FNU, F64) => vec![
            cvt(
                PtxType::Bf16x2,
                packed(s).unwrap_or(PtxType::Ue8m0x2),
                Some(RoundMod::Rn),
            ),
            cvt(PtxType::F64, PtxType::Bf16, None),
        ],
        (F16, F8E4M3FN | F8E5M2) => vec![cvt_sf(
            packed(d).unwrap_or(PtxType::E4m3x2),
            PtxType::F16x2,
            RoundMod::Rn,
        )],
        (F8E4M3FN | F8E5M2 | F4E2M1FN, F8E4M3FN | F8E5M2) => vec![
            cvt(
                PtxType::F16x2,
                packed(s).unwrap_or(PtxType::E4m3x2),
                Some(RoundMod::Rn),
            ),
            cvt_sf(
                packed(d).unwrap_or(PtxType::E4m3x2),
                PtxType::F16x2,
                RoundMod::Rn,
            ),
        ],
        (F8E4M3FN | F8E5M2 | F4E2M1FN, F16) => vec![cvt(
            PtxType::F16x2,
            packed(s).unwrap_or(PtxType::E4m3x2),
            Some(RoundMod::Rn),
        )],
        (F8E8M0FNU | FNV8E5M3FNU, BF16) => vec![cvt(
            PtxType::Bf16x2,
            packed(s).unwrap_or(PtxType::Ue8m0x2),
            Some(RoundMod::Rn),
        )],
        _ => {
            let mut v = to_f32(s);
            v.extend(from_f32(d, r, target));
            v
        }
    }
}

fn ftoi_lowering(
    s: ElemType,
    d: ElemType,
    signed: bool,
    saturating: bool,
) -> Result<Vec<Step>, EvalError> {
    use ElemType::*;
    let w = d.bits();
    if saturating && matches!(s, F8E4M3FN | F8E5M2) {
        return Err(EvalError::Unsupported(format!(
            "tileiras 13.4.92 fails to compile a saturating ftoi from {s}"
        )));
    }
    if d == I1 {
        return Ok(vec![Step::Other(match scalar(s) {
            Some(ty) if s != TF32 => Machine::NonZeroFloat { ty },
            _ => Machine::NonZeroBits { bits: s.bits() },
        })]);
    }
    let dst_ptx = int_ptx(w, signed);
    let exact_dst = match (w, signed) {
        (8, true) => PtxType::S8,
        (8, false) => PtxType::U8,
        _ => dst_ptx,
    };
    if saturating {
        let (mut pre, src) = match s {
            F4E2M1FN => (
                vec![cvt(PtxType::F16x2, PtxType::E2m1x2, Some(RoundMod::Rn))],
                PtxType::F16,
            ),
            F8E8M0FNU | FNV8E5M3FNU => (to_f32(s), PtxType::F32),
            F16 | BF16 if w <= 16 => (to_f32(s), PtxType::F32),
            _ => (Vec::new(), scalar(s).unwrap_or(PtxType::F32)),
        };
        pre.push(Step::Other(Machine::SaturatingFtoi {
            src,
            dst: exact_dst,
        }));
        return Ok(pre);
    }
    let (mut steps, src) = match s {
        F8E4M3FN | F8E5M2 | F4E2M1FN => (
            vec![cvt(
                PtxType::F16x2,
                packed(s).unwrap_or(PtxType::E4m3x2),
                Some(RoundMod::Rn),
            )],
            PtxType::F16,
        ),
        F8E8M0FNU => {
            let mut v = to_f32(s);
            v.push(cvt(PtxType::F16x2, PtxType::F32, Some(RoundMod::Rn)));
            (v, PtxType::F16)
        }
        FNV8E5M3FNU => (to_f32(s), PtxType::F32),
        _ => (Vec::new(), scalar(s).unwrap_or(PtxType::F32)),
    };
    steps.push(cvt(dst_ptx, src, Some(RoundMod::Rzi)));
    if w == 8 {
        steps.push(Step::Other(Machine::KeepLow { bits: 8 }));
    }
    Ok(steps)
}

fn itof_lowering(s: ElemType, d: ElemType, signed: bool, target: Target) -> Vec<Step> {
    use ElemType::*;
    if s == I1 {
        let (ty, then): (PtxType, Vec<Step>) = match d {
            F16 | BF16 | F32 | F64 => (scalar(d).unwrap_or(PtxType::F32), Vec::new()),
            TF32 => (PtxType::F32, Vec::new()),
            F8E4M3FN | F8E5M2 => (
                PtxType::F16,
                vec![cvt_sf(
                    packed(d).unwrap_or(PtxType::E4m3x2),
                    PtxType::F16x2,
                    RoundMod::Rn,
                )],
            ),
            _ => (PtxType::F32, from_f32(d, RoundMod::Rn, target)),
        };
        let mut v = vec![Step::Other(Machine::BoolToFloat { ty, signed })];
        v.extend(then);
        return v;
    }
    let w = s.bits();
    let mut steps = Vec::new();
    if w == 8 {
        steps.push(Step::Other(if signed {
            Machine::SignExtend { from: 8, to: 16 }
        } else {
            Machine::ZeroExtend { from: 8, to: 16 }
        }));
    }
    let it = int_ptx(w, signed);
    let rn = Some(RoundMod::Rn);
    match d {
        BF16 if w == 8 && signed => {
            steps.push(cvt(PtxType::F32, it, rn));
            steps.push(cvt(PtxType::Bf16x2, PtxType::F32, rn));
        }
        F16 | BF16 | F32 | F64 => steps.push(cvt(scalar(d).unwrap_or(PtxType::F32), it, rn)),
        F8E4M3FN | F8E5M2 => {
            steps.push(cvt(PtxType::F16, it, rn));
            steps.push(cvt_sf(
                packed(d).unwrap_or(PtxType::E4m3x2),
                PtxType::F16x2,
                RoundMod::Rn,
            ));
        }
        _ => {
            steps.push(cvt(PtxType::F32, it, rn));
            steps.extend(from_f32(d, RoundMod::Rn, target));
        }
    }
    steps
}

fn min_sm(e: ElemType) -> u32 {
    match e {
        ElemType::F8E4M3FN | ElemType::F8E5M2 => 90,
        ElemType::F8E8M0FNU | ElemType::F4E2M1FN => 100,
        ElemType::FNV8E5M3FNU => 107,
        _ => 0,
    }
}

fn elems(op: &ConvOp) -> (Element, Element) {
    (op.src.value.elem, op.dst.value.elem)
}

/// The PTX sequence `tileiras` emits for one element of `op` on `target` (`tile-ir.md` §3.3),
/// as data. The op must verify at the newest spec version.
///
/// ```
/// use gpucvt::tile::{eval::lowering, parse::parse_op};
/// use gpucvt::ptx::Target;
/// let op = parse_op("ftof : tile<f64> -> tile<bf16>").unwrap();
/// assert_eq!(lowering(&op, Target::SM_90).unwrap().spellings(), ["cvt.rn.bf16.f64"]);
/// assert_eq!(
///     lowering(&op, Target::SM_80).unwrap().spellings(),
///     ["cvt.rn.f32.f64", "cvt.rn.bf16x2.f32"]
/// );
/// ```
pub fn lowering(op: &ConvOp, target: Target) -> Result<Lowering, EvalError> {
    check(op)?;
    let (se, de) = elems(op);
    for e in [se, de] {
        if let Element::Num(t) = e {
            if target.arch() < min_sm(t) {
                return Err(EvalError::Unsupported(format!(
                    "tileiras needs sm_{} or newer for {t} (target {target})",
                    min_sm(t)
                )));
            }
        }
    }
    let signed = op.signedness == Some(Signedness::Signed);
    let steps = match (op.kind, se.num(), de.num()) {
        (OpKind::ExtI, Some(s), Some(d)) => {
            if s == ElemType::I1 {
                vec![Step::Other(Machine::BoolToInt {
                    to: d.bits(),
                    signed,
                })]
            } else if signed {
                vec![Step::Other(Machine::SignExtend {
                    from: s.bits(),
                    to: d.bits(),
                })]
            } else {
                vec![Step::Other(Machine::ZeroExtend {
                    from: s.bits(),
                    to: d.bits(),
                })]
            }
        }
        (OpKind::TruncI, Some(_), Some(d)) => {
            vec![Step::Other(Machine::KeepLow { bits: d.bits() })]
        }
        (OpKind::FtoF, Some(s), Some(d)) => ftof_lowering(
            s,
            d,
            op.rounding_mode().unwrap_or(RoundingMode::NearestEven),
            target,
        ),
        (OpKind::FtoI, Some(s), Some(d)) => ftoi_lowering(s, d, signed, op.is_saturating())?,
        (OpKind::ItoF, Some(s), Some(d)) => itof_lowering(s, d, signed, target),
        _ => vec![Step::Other(Machine::Copy)],
    };
    Ok(Lowering { steps })
}

fn check(op: &ConvOp) -> Result<(), EvalError> {
    let d = verify_op(op, super::types::SpecVersion::LATEST);
    if d.is_empty() {
        Ok(())
    } else {
        Err(EvalError::Invalid(d))
    }
}

/// The core policy of a float destination under the `spec` semantics.
fn spec_policy(d: &Format) -> Policy {
    let narrow = [
        format::E4M3,
        format::E5M2,
        format::E2M1,
        format::UE8M0,
        format::UE5M3,
    ];
    Policy {
        satfinite: narrow.contains(d),
        ..Policy::default()
    }
}

fn spec_element(op: &ConvOp, x: u64) -> ElementResult {
    let (se, de) = elems(op);
    let (Some(s), Some(d)) = (se.num(), de.num()) else {
        return ElementResult::Bits(x); // pointer ops
    };
    let sg = op.signedness;
    match op.kind {
        OpKind::Bitcast => ElementResult::Bits(x),
        OpKind::ExtI => {
            let pol = Policy {
                int_overflow: IntOverflow::Wrap,
                ..Policy::default()
            };
            let v = s.format(sg).decode(x);
            ElementResult::Bits(convert(&v, &d.format(sg), Rounding::RZ, &pol).bits)
        }
        OpKind::TruncI => {
            let pol = Policy {
                int_overflow: IntOverflow::Wrap,
                ..Policy::default()
            };
            let v = s.format(None).decode(x);
            let low = convert(&v, &d.format(None), Rounding::RZ, &pol).bits;
            let (sw, dw) = (s.bits(), d.bits());
            let high = x & mask(sw) & !mask(dw);
            let top = (low >> (dw - 1)) & 1;
            let nsw_ok = if top == 1 {
                high == mask(sw) & !mask(dw)
            } else {
                high == 0
            };
            let nuw_ok = high == 0;
            let ok = match op.overflow {
                Overflow::None => true,
                Overflow::NoSignedWrap => nsw_ok,
                Overflow::NoUnsignedWrap => nuw_ok,
                Overflow::NoWrap => nsw_ok && nuw_ok,
            };
            if ok {
                ElementResult::Bits(low)
            } else {
                ElementResult::Undefined("trunci: the overflow flag's promise is violated")
            }
        }
        OpKind::FtoF | OpKind::ItoF => {
            let df = d.format(None);
            let v = s.format(sg).decode(x);
            if v.is_nan() && df == format::E4M3 {
                // The 13.4 table: "The e4m3 type does not support NaN" → +MAX_NORM.
                return ElementResult::Bits(df.max_finite_bits());
            }
            let r = op
                .rounding_mode()
                .and_then(|m| m.rounding())
                .unwrap_or(Rounding::RN);
            ElementResult::Bits(convert(&v, &df, r, &spec_policy(&df)).bits)
        }
        OpKind::FtoI => {
            let v = s.format(None).decode(x);
            let pol = Policy {
                int_nan: IntNan::Zero,
                int_overflow: IntOverflow::Clamp,
                ..Policy::default()
            };
            let out = convert(&v, &d.format(sg), Rounding::RZI, &pol);
            if op.is_saturating() {
                return ElementResult::Bits(out.bits);
            }
            match v.class {
                Class::Nan { .. } => ElementResult::Undefined("ftoi: NaN input"),
                Class::Infinite => ElementResult::Undefined("ftoi: infinite input"),
                _ if out.flags.contains(Flags::SATURATED) => {
                    ElementResult::Undefined("ftoi: out of the range of the result type")
                }
                _ => ElementResult::Bits(out.bits),
            }
        }
        _ => ElementResult::Bits(x),
    }
}

/// Evaluates an op on the elements of its operand (bit patterns of the source element type,
/// row-major; any number of elements), under `semantics`; `target` selects the `tileiras`
/// lowering (ignored by `spec`). The op must verify at the newest spec version.
pub fn eval_op(
    op: &ConvOp,
    semantics: Semantics,
    target: Target,
    elements: &[u64],
) -> Result<Vec<ElementResult>, EvalError> {
    let bits = op.src.value.elem.bits();
    if let Some((index, &value)) = elements
        .iter()
        .enumerate()
        .find(|(_, &v)| v & !mask(bits) != 0)
    {
        return Err(EvalError::InputTooWide { index, value, bits });
    }
    match semantics {
        Semantics::Spec => {
            check(op)?;
            Ok(elements.iter().map(|&x| spec_element(op, x)).collect())
        }
        Semantics::Tileiras => {
            let low = lowering(op, target)?;
            let out_mask = mask(op.dst.value.elem.bits());
            elements
                .iter()
                .map(|&x| low.apply(x).map(|b| ElementResult::Bits(b & out_mask)))
                .collect()
        }
    }
}

/// How `spec` and `tileiras` compare on one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Difference {
    /// The same bits.
    Same(u64),
    /// Different bits, or the spec leaves the result undefined.
    Differ {
        /// The `spec` result.
        spec: ElementResult,
        /// The `tileiras` result.
        tileiras: ElementResult,
    },
}

/// Compares `spec` and `tileiras` on one element (bit for bit).
pub fn difference(op: &ConvOp, target: Target, element: u64) -> Result<Difference, EvalError> {
    let s = eval_op(op, Semantics::Spec, target, &[element])?;
    let t = eval_op(op, Semantics::Tileiras, target, &[element])?;
    let (s, t) = (s[0], t[0]);
    Ok(match (s, t) {
        (ElementResult::Bits(a), ElementResult::Bits(b)) if a == b => Difference::Same(a),
        _ => Difference::Differ {
            spec: s,
            tileiras: t,
        },
    })
}

/// Whether `spec` and `tileiras` differ on one element.
pub fn differs(op: &ConvOp, target: Target, element: u64) -> Result<bool, EvalError> {
    Ok(matches!(
        difference(op, target, element)?,
        Difference::Differ { .. }
    ))
}
