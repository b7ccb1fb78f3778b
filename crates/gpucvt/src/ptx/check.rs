//! Legality of `cvt` and `cvt.pack`, as ptxas 13.5 decides it.
//!
//! The rules are data:
//! - `VARIANTS`: every form that exists on some target: its type pairs, the roundings it
//!   takes (none, or a set), the modifiers it requires and those it allows, and its natural
//!   operand shape. A form is well-formed when one variant takes its rounding and exactly its
//!   modifiers (modifier order is free).
//! - `FEATURES`: the target and PTX-version floor of every feature (PTX ISA §5/§6 as
//!   measured with ptxas): a form is legal on a target at a version when every feature it
//!   uses is available there.
//! - register rules: the register types `d` and `a` may have (ISA §4.15 and the measured
//!   matrix of spec §7), by slot and by whether the type pair is a "classic" one that takes
//!   wider registers.
//!
//! ```
//! use gpucvt::ptx::check::{check, check_form, legal_somewhere, OperandShape};
//! use gpucvt::ptx::parse::parse_instruction;
//! use gpucvt::ptx::target::{PtxVersion, Target};
//! use gpucvt::ptx::types::{PtxType, RegType};
//!
//! let sm90: Target = "sm_90".parse().unwrap();
//! let v = PtxVersion::new(8, 0);
//! // Registers are looked up by name; here every name says its type (`%f32_a`).
//! let regs = |name: &str| {
//!     let ty = name.strip_prefix('%')?.split('_').next()?;
//!     PtxType::from_name(ty).map(RegType::scalar)
//! };
//! let ok = parse_instruction("cvt.rn.satfinite.e4m3x2.f32 %b16_d, %f32_a, %f32_b;").unwrap();
//! assert!(check(&ok, &regs, sm90, v).is_empty());
//! // .satfinite is mandatory for e4m3x2:
//! let bad = parse_instruction("cvt.rn.e4m3x2.f32 %b16_d, %f32_a, %f32_b;").unwrap();
//! let d = check(&bad, &regs, sm90, v);
//! assert_eq!(d[0].rule, "ptx.modifier-required");
//! // Stochastic rounding needs sm_100a / sm_103a / sm_107a:
//! let rs = parse_instruction("cvt.rs.f16x2.f32").unwrap();
//! let shape = OperandShape::natural(&rs.form).unwrap();
//! assert_eq!(check_form(&rs.form, &shape, sm90, v).unwrap_err().rule, "ptx.target");
//! assert!(legal_somewhere(&rs.form));
//! ```

use std::collections::{HashMap, HashSet};

use super::form::{CvtForm, Modifier, RoundMod, Scaled};
use super::parse::{
    Block, Function, Immediate, Instruction, OperandKind, PtxFile, RegDecl, RegName, RegRef,
    Statement,
};
use super::target::{PtxVersion, Target, TargetReq};
use super::types::{same_size_compatible, wide_compatible, Kind, PtxType, RegType};
use crate::diag::{Diagnostic, Span};

use PtxType::*;

// ---------------------------------------------------------------------------------------
// Modifier and rounding sets.

/// A set of boolean modifiers and scale qualifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Flags(u8);

const NO: Flags = Flags(0);
const FTZ: Flags = Flags(1);
const SAT: Flags = Flags(2);
const RELU: Flags = Flags(4);
const SF: Flags = Flags(8);
const PZO: Flags = Flags(16);
const N1: Flags = Flags(32);
const N2: Flags = Flags(64);

/// Each flag with its spelling.
const FLAG_NAMES: [(Flags, &str); 7] = [
    (FTZ, ".ftz"),
    (SAT, ".sat"),
    (RELU, ".relu"),
    (SF, ".satfinite"),
    (PZO, ".pzo"),
    (N1, ".scaled::n1::ue8m0"),
    (N2, ".scaled::n2::ue8m0"),
];

impl Flags {
    const fn or(self, o: Flags) -> Flags {
        Flags(self.0 | o.0)
    }
    fn contains(self, o: Flags) -> bool {
        self.0 & o.0 == o.0
    }
    fn minus(self, o: Flags) -> Flags {
        Flags(self.0 & !o.0)
    }
    fn of(form: &CvtForm) -> Flags {
        let mut f = NO;
        for (on, bit) in [
            (form.ftz, FTZ),
            (form.sat, SAT),
            (form.relu, RELU),
            (form.satfinite, SF),
            (form.pzo, PZO),
            (form.scaled == Some(Scaled::N1Ue8m0), N1),
            (form.scaled == Some(Scaled::N2Ue8m0), N2),
        ] {
            if on {
                f = f.or(bit);
            }
        }
        f
    }
    fn names(self) -> Vec<&'static str> {
        FLAG_NAMES
            .iter()
            .filter(|(b, _)| self.contains(*b))
            .map(|(_, n)| *n)
            .collect()
    }
    fn apply(self, form: &mut CvtForm) {
        form.ftz = self.contains(FTZ);
        form.sat = self.contains(SAT);
        form.relu = self.contains(RELU);
        form.satfinite = self.contains(SF);
        form.pzo = self.contains(PZO);
        form.scaled = if self.contains(N1) {
            Some(Scaled::N1Ue8m0)
        } else if self.contains(N2) {
            Some(Scaled::N2Ue8m0)
        } else {
            None
        };
    }
}

/// A set of roundings; bit 10 is "no rounding modifier".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Rnd(u16);

const fn rbit(r: RoundMod) -> u16 {
    1 << (r as u16)
}
const R_NONE: Rnd = Rnd(1 << 10);
const RN: Rnd = Rnd(rbit(RoundMod::Rn));
const RNA: Rnd = Rnd(rbit(RoundMod::Rna));
const RZ: Rnd = Rnd(rbit(RoundMod::Rz));
const RP: Rnd = Rnd(rbit(RoundMod::Rp));
const RS: Rnd = Rnd(rbit(RoundMod::Rs));
/// `.frnd2`: `.rn .rz`.
const FRND2: Rnd = Rnd(RN.0 | RZ.0);
/// `.frnd`: `.rn .rz .rm .rp`.
const FRND: Rnd = Rnd(FRND2.0 | rbit(RoundMod::Rm) | RP.0);
/// `.irnd`: `.rni .rzi .rmi .rpi`.
const IRND: Rnd =
    Rnd(rbit(RoundMod::Rni) | rbit(RoundMod::Rzi) | rbit(RoundMod::Rmi) | rbit(RoundMod::Rpi));

impl Rnd {
    const fn or(self, o: Rnd) -> Rnd {
        Rnd(self.0 | o.0)
    }
    fn has(self, r: Option<RoundMod>) -> bool {
        let bit = match r {
            Some(r) => rbit(r),
            None => R_NONE.0,
        };
        self.0 & bit != 0
    }
    fn members(self) -> impl Iterator<Item = Option<RoundMod>> {
        core::iter::once(None)
            .chain(RoundMod::ALL.into_iter().map(Some))
            .filter(move |r| self.has(*r))
    }
    fn describe(self) -> String {
        let names: Vec<String> = RoundMod::ALL
            .into_iter()
            .filter(|r| self.has(Some(*r)))
            .map(|r| format!(".{}", r.name()))
            .collect();
        names.join(" ")
    }
}

// ---------------------------------------------------------------------------------------
// The forms.

/// The natural operand list of a variant (the scale operand is added for `.scaled::…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// `d, a`
    Da,
    /// `d, a, b`
    Dab,
    /// `d, a, b, rbits`
    DabRbits,
    /// `d, {a, b, e, f}, rbits`
    Vec4Rbits,
    /// `cvt.pack`: `d, a, b, c`
    Dabc,
}

/// One family of forms: for every `dtype` in `dst` and `atype` in `src`, the rounding is one
/// of `rnd` (`R_NONE`: none written), every modifier of `req` is written and every other one
/// written is in `opt`.
#[derive(Clone, Copy, Debug)]
struct Variant {
    pack: bool,
    dst: &'static [PtxType],
    src: &'static [PtxType],
    ctype: Option<PtxType>,
    rnd: Rnd,
    req: Flags,
    opt: Flags,
    shape: Shape,
    /// Integer to integer: `.sat` only where the destination range is not a superset of the
    /// source range (ISA: "allowed only in cases where …").
    sat_if_overflow: bool,
}

const fn cv(
    dst: &'static [PtxType],
    src: &'static [PtxType],
    rnd: Rnd,
    req: Flags,
    opt: Flags,
    shape: Shape,
) -> Variant {
    Variant {
        pack: false,
        dst,
        src,
        ctype: None,
        rnd,
        req,
        opt,
        shape,
        sat_if_overflow: false,
    }
}

const INTS: &[PtxType] = &[U8, U16, U32, U64, S8, S16, S32, S64];
const NARROW2: &[PtxType] = &[E4m3x2, E5m2x2, E2m3x2, E3m2x2, E2m1x2];
const NARROW2_S2F6: &[PtxType] = &[E4m3x2, E5m2x2, E2m3x2, E3m2x2, E2m1x2, S2f6x2];
const F8X2: &[PtxType] = &[E4m3x2, E5m2x2];
const F4F6X2: &[PtxType] = &[E2m3x2, E3m2x2, E2m1x2];
const X4: &[PtxType] = &[E4m3x4, E5m2x4, E2m3x4, E3m2x4, E2m1x4];
const FP16X2: &[PtxType] = &[F16x2, Bf16x2];
const INTS_F16_F64: &[PtxType] = &[U8, U16, U32, U64, S8, S16, S32, S64, F16, F64];
const INTS_F16_F64_BF16: &[PtxType] = &[U8, U16, U32, U64, S8, S16, S32, S64, F16, F64, Bf16];

/// Every `cvt`/`cvt.pack` form that ptxas 13.5 accepts on some target (spec §2, §3, §6, §8,
/// checked against the sweep in `tests/data/ptxas-cvt-legality.tsv.gz`).
static VARIANTS: &[Variant] = &[
    // Integer ↔ integer: no rounding; `.sat` where the value can overflow.
    Variant {
        sat_if_overflow: true,
        ..cv(INTS, INTS, R_NONE, NO, SAT, Shape::Da)
    },
    // Integer → float: `.frnd` required (even when exact, e.g. s32 → f64).
    cv(&[F16, F64], INTS, FRND, NO, SAT, Shape::Da),
    cv(&[F32], INTS, FRND, NO, FTZ.or(SAT), Shape::Da),
    cv(&[Bf16], INTS, FRND, NO, NO, Shape::Da),
    // Float → integer: `.irnd` required; `.sat` is redundant but accepted, except with a
    // `.bf16` source.
    cv(INTS, &[F16, F64], IRND, NO, SAT, Shape::Da),
    cv(INTS, &[F32], IRND, NO, FTZ.or(SAT), Shape::Da),
    cv(INTS, &[Bf16], IRND, NO, NO, Shape::Da),
    // Same type: a move, or a round to integral with `.irnd`.
    cv(&[F16], &[F16], R_NONE.or(IRND), NO, SAT, Shape::Da),
    cv(&[F64], &[F64], R_NONE.or(IRND), NO, SAT, Shape::Da),
    cv(&[F32], &[F32], R_NONE.or(IRND), NO, FTZ.or(SAT), Shape::Da),
    cv(&[Bf16], &[Bf16], R_NONE.or(IRND), NO, NO, Shape::Da),
    // Widening: no rounding.
    cv(&[F32], &[F16], R_NONE, NO, FTZ.or(SAT), Shape::Da),
    cv(&[F64], &[F16], R_NONE, NO, SAT, Shape::Da),
    cv(&[F64], &[F32], R_NONE, NO, FTZ.or(SAT), Shape::Da),
    // ptxas quirk (spec §4.5, §6.1 item 4): exact bf16 → f32/f64 take an optional `.frnd`,
    // and f16 ↔ bf16 (lossy) does not require one. Matched to ptxas.
    cv(&[F32], &[Bf16], R_NONE.or(FRND), NO, FTZ, Shape::Da),
    cv(&[F16, F64], &[Bf16], R_NONE.or(FRND), NO, NO, Shape::Da),
    cv(&[Bf16], &[F16], R_NONE.or(FRND), NO, NO, Shape::Da),
    // Narrowing float → float: `.frnd` required. `.relu`/`.satfinite` (f16, bf16 from f32)
    // only with `.rn`/`.rz` and never with `.ftz`/`.sat`; `.pzo` (PTX 9.4) with any of the
    // f16 roundings but not `.ftz`; with bf16 also `.ftz.pzo`.
    cv(&[F16], &[F32], FRND, NO, FTZ.or(SAT), Shape::Da),
    cv(&[F16], &[F32], FRND2, NO, RELU.or(SF).or(PZO), Shape::Da),
    cv(&[F16], &[F32], FRND, PZO, NO, Shape::Da),
    cv(&[F16], &[F64], FRND, NO, SAT, Shape::Da),
    cv(&[F32], &[F64], FRND, NO, FTZ.or(SAT), Shape::Da),
    cv(&[Bf16], &[F32], FRND, NO, FTZ.or(PZO), Shape::Da),
    cv(&[Bf16], &[F32], FRND2, NO, RELU.or(SF).or(PZO), Shape::Da),
    cv(&[Bf16], &[F64], FRND, NO, NO, Shape::Da),
    // f32 pairs → f16x2 / bf16x2; stochastic rounding with an `rbits` operand.
    cv(FP16X2, &[F32], FRND2, NO, RELU.or(SF).or(PZO), Shape::Dab),
    cv(FP16X2, &[F32], RS, NO, RELU.or(SF), Shape::DabRbits),
    // f32 → tf32: `.rna{.satfinite}` or `.rn/.rz{.relu}{.satfinite}` (`.relu` not with `.rna`).
    cv(&[Tf32], &[F32], RNA, NO, SF.or(PZO), Shape::Da),
    cv(&[Tf32], &[F32], FRND2, NO, RELU.or(SF).or(PZO), Shape::Da),
    // Narrow packed destinations: `.rn` (`.rz` from PTX 9.4), `.satfinite` required.
    cv(NARROW2, &[F32], FRND2, SF, RELU.or(PZO).or(N1), Shape::Dab),
    cv(NARROW2, FP16X2, FRND2, SF, RELU.or(PZO).or(N1), Shape::Da),
    cv(X4, &[F32], RS, SF, RELU, Shape::Vec4Rbits),
    // Narrow packed sources.
    cv(&[F16x2], NARROW2, RN, NO, RELU, Shape::Da),
    cv(&[Bf16x2], NARROW2, RN, NO, RELU.or(SF).or(N2), Shape::Da),
    // ue8m0x2: `.rz`/`.rp` down, `.rn` up; no `.relu` (spec §6.1 item 2).
    cv(&[Ue8m0x2], &[F32], Rnd(RZ.0 | RP.0), NO, SF, Shape::Dab),
    cv(&[Ue8m0x2], &[Bf16x2], Rnd(RZ.0 | RP.0), NO, SF, Shape::Da),
    cv(&[Bf16x2], &[Ue8m0x2], RN, NO, NO, Shape::Da),
    // s2f6x2 (PTX 9.1), with the optional per-element scale. No `.pzo`: ptxas 13.5
    // (sm_107a) answers "Illegal modifier '.pzo' for instruction 'cvt'".
    cv(&[S2f6x2], &[F32], FRND2, SF, RELU.or(N2), Shape::Dab),
    cv(&[S2f6x2], &[Bf16x2], FRND2, SF, RELU.or(N2), Shape::Da),
    cv(&[Bf16x2], &[S2f6x2], RN, NO, RELU.or(SF).or(N2), Shape::Da),
    // ue5m3x2 (PTX 9.4): `.rn/.rz/.rp` down (the n1 scale only with `.rn/.rz`), `.rn` up.
    cv(&[Ue5m3x2], &[F32], Rnd(FRND2.0 | RP.0), NO, SF, Shape::Dab),
    cv(&[Ue5m3x2], FP16X2, Rnd(FRND2.0 | RP.0), NO, SF, Shape::Da),
    cv(&[Ue5m3x2], &[F32], FRND2, N1, SF, Shape::Dab),
    cv(&[Ue5m3x2], FP16X2, FRND2, N1, SF, Shape::Da),
    cv(&[F16x2], &[Ue5m3x2], RN, NO, NO, Shape::Da),
    cv(&[Bf16x2], &[Ue5m3x2], RN, NO, SF.or(N2), Shape::Da),
    // cvt.pack: `.sat` mandatory; `.u16/.s16` without, the sub-word types with a `.b32` c.
    Variant {
        pack: true,
        ..cv(&[U16, S16], &[S32], R_NONE, SAT, NO, Shape::Dab)
    },
    Variant {
        pack: true,
        ctype: Some(B32),
        ..cv(
            &[U8, S8, U4, S4, U2, S2],
            &[S32],
            R_NONE,
            SAT,
            NO,
            Shape::Dabc,
        )
    },
];

/// Whether every value of the integer type `src` fits in the integer type `dst`.
fn int_range_superset(dst: PtxType, src: PtxType) -> bool {
    let (db, sb) = (dst.bits(), src.bits());
    match (dst.kind(), src.kind()) {
        (a, b) if a == b => db >= sb,
        (Kind::Signed, Kind::Unsigned) => db > sb,
        _ => false,
    }
}

impl Variant {
    fn covers(&self, form: &CvtForm) -> bool {
        self.pack == form.pack
            && self.ctype == form.ctype
            && self.dst.contains(&form.dtype)
            && self.src.contains(&form.atype)
    }

    fn opt_for(&self, form: &CvtForm) -> Flags {
        if self.sat_if_overflow && int_range_superset(form.dtype, form.atype) {
            self.opt.minus(SAT)
        } else {
            self.opt
        }
    }

    fn accepts_flags(&self, form: &CvtForm, flags: Flags) -> bool {
        flags.contains(self.req) && self.req.or(self.opt_for(form)).contains(flags)
    }
}

/// The variant a well-formed form belongs to.
fn variant_of(form: &CvtForm) -> Option<&'static Variant> {
    let flags = Flags::of(form);
    VARIANTS
        .iter()
        .find(|v| v.covers(form) && v.rnd.has(form.rounding) && v.accepts_flags(form, flags))
}

// ---------------------------------------------------------------------------------------
// Features: target and PTX-version floors.

/// Which token a feature diagnostic points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    Opcode,
    Types,
    Dst,
    Src,
    Rounding,
    Modifier(Modifier),
    Scaled,
}

/// A predicate on a form: every given field must match.
#[derive(Clone, Copy, Debug)]
struct Cond {
    pack: bool,
    dst: Option<&'static [PtxType]>,
    src: Option<&'static [PtxType]>,
    either: Option<&'static [PtxType]>,
    rnd: Option<Rnd>,
    flags: Flags,
}

const ANY: Cond = Cond {
    pack: false,
    dst: None,
    src: None,
    either: None,
    rnd: None,
    flags: NO,
};

impl Cond {
    fn matches(&self, form: &CvtForm) -> bool {
        self.pack == form.pack
            && self.dst.is_none_or_contains(form.dtype)
            && self.src.is_none_or_contains(form.atype)
            && self
                .either
                .is_none_or_contains_any(&[form.dtype, form.atype])
            && self.rnd.none_or(|r| r.has(form.rounding))
            && Flags::of(form).contains(self.flags)
    }
}

trait OptSlice {
    fn is_none_or_contains(&self, t: PtxType) -> bool;
    fn is_none_or_contains_any(&self, ts: &[PtxType]) -> bool;
}

impl OptSlice for Option<&'static [PtxType]> {
    fn is_none_or_contains(&self, t: PtxType) -> bool {
        match self {
            None => true,
            Some(l) => l.contains(&t),
        }
    }
    fn is_none_or_contains_any(&self, ts: &[PtxType]) -> bool {
        match self {
            None => true,
            Some(l) => ts.iter().any(|t| l.contains(t)),
        }
    }
}

trait OptRnd {
    fn none_or(&self, f: impl Fn(Rnd) -> bool) -> bool;
}

impl OptRnd for Option<Rnd> {
    fn none_or(&self, f: impl Fn(Rnd) -> bool) -> bool {
        match *self {
            None => true,
            Some(r) => f(r),
        }
    }
}

/// A feature: what it is, which forms use it, which token to blame, and where it exists
/// (alternatives: a target condition with the PTX version it needs there).
#[derive(Clone, Copy, Debug)]
struct Feature {
    what: &'static str,
    cond: Cond,
    trigger: Trigger,
    avail: &'static [(TargetReq, PtxVersion)],
}

const fn ver(major: u8, minor: u8) -> PtxVersion {
    PtxVersion::new(major, minor)
}

/// The sm_100a/sm_101a(=sm_110a)/sm_120a features of PTX 8.6, family-wide from PTX 8.8.
const BLACKWELL_86: &[(TargetReq, PtxVersion)] = &[
    (TargetReq::Arch(&[100, 110, 120]), ver(8, 6)),
    (TargetReq::Family(&[100, 110, 120]), ver(8, 8)),
];
const FAMILIES_100_110_120: &[u32] = &[100, 110, 120];
const FAMILY_107: &[(TargetReq, PtxVersion)] = &[(TargetReq::Family(&[107]), ver(9, 4))];

/// Every feature with a floor (PTX ISA §5 "PTX ISA notes"/"Target ISA notes", refined by the
/// ptxas 13.5 sweep, spec §6 and §12).
static FEATURES: &[Feature] = &[
    Feature {
        what: "cvt with .f64",
        cond: Cond {
            either: Some(&[F64]),
            ..ANY
        },
        trigger: Trigger::Types,
        avail: &[(TargetReq::Min(13), ver(1, 0))],
    },
    Feature {
        what: ".relu",
        cond: Cond { flags: RELU, ..ANY },
        trigger: Trigger::Modifier(Modifier::Relu),
        avail: &[(TargetReq::Min(80), ver(7, 0))],
    },
    Feature {
        what: "cvt from .f32 to .f16x2, .bf16x2, .bf16 or .tf32",
        cond: Cond {
            dst: Some(&[F16x2, Bf16x2, Bf16, Tf32]),
            src: Some(&[F32]),
            ..ANY
        },
        trigger: Trigger::Dst,
        avail: &[(TargetReq::Min(80), ver(7, 0))],
    },
    Feature {
        what: "cvt.f32.bf16",
        cond: Cond {
            dst: Some(&[F32]),
            src: Some(&[Bf16]),
            ..ANY
        },
        trigger: Trigger::Types,
        avail: &[(TargetReq::Min(80), ver(7, 1))],
    },
    Feature {
        what: "cvt to .bf16 from an integer, .f16, .f64 or .bf16",
        cond: Cond {
            dst: Some(&[Bf16]),
            src: Some(INTS_F16_F64_BF16),
            ..ANY
        },
        trigger: Trigger::Types,
        avail: &[(TargetReq::Min(90), ver(7, 8))],
    },
    Feature {
        what: "cvt from .bf16 to an integer, .f16 or .f64",
        cond: Cond {
            dst: Some(INTS_F16_F64),
            src: Some(&[Bf16]),
            ..ANY
        },
        trigger: Trigger::Types,
        avail: &[(TargetReq::Min(90), ver(7, 8))],
    },
    Feature {
        what: ".ftz on cvt.f32.bf16",
        cond: Cond {
            dst: Some(&[F32]),
            src: Some(&[Bf16]),
            flags: FTZ,
            ..ANY
        },
        trigger: Trigger::Modifier(Modifier::Ftz),
        avail: &[(TargetReq::Min(90), ver(7, 8))],
    },
    Feature {
        what: "cvt.rn/.rz .tf32.f32",
        cond: Cond {
            dst: Some(&[Tf32]),
            rnd: Some(FRND2),
            ..ANY
        },
        trigger: Trigger::Rounding,
        avail: &[(TargetReq::Min(90), ver(7, 8))],
    },
    Feature {
        what: ".satfinite on cvt.f16.f32",
        cond: Cond {
            dst: Some(&[F16]),
            src: Some(&[F32]),
            flags: SF,
            ..ANY
        },
        trigger: Trigger::Modifier(Modifier::Satfinite),
        avail: &[(TargetReq::Min(75), ver(8, 1))],
    },
    Feature {
        what: ".satfinite on cvt to .bf16, .f16x2, .bf16x2 or .tf32",
        cond: Cond {
            dst: Some(&[Bf16, F16x2, Bf16x2, Tf32]),
            src: Some(&[F32]),
            flags: SF,
            ..ANY
        },
        trigger: Trigger::Modifier(Modifier::Satfinite),
        avail: &[(TargetReq::Min(80), ver(8, 1))],
    },
    Feature {
        what: ".satfinite on cvt.rn/.rz .tf32.f32",
        cond: Cond {
            dst: Some(&[Tf32]),
            rnd: Some(FRND2),
            flags: SF,
            ..ANY
        },
        trigger: Trigger::Modifier(Modifier::Satfinite),
        avail: &[(TargetReq::Min(100), ver(8, 6))],
    },
    Feature {
        what: "cvt to .e4m3x2/.e5m2x2 from .f32 or .f16x2",
        cond: Cond {
            dst: Some(F8X2),
            src: Some(&[F32, F16x2]),
            ..ANY
        },
        trigger: Trigger::Dst,
        avail: &[
            (TargetReq::Min(90), ver(7, 8)),
            (TargetReq::Min(89), ver(8, 1)),
        ],
    },
    Feature {
        what: "cvt.f16x2 from .e4m3x2/.e5m2x2",
        cond: Cond {
            dst: Some(&[F16x2]),
            src: Some(F8X2),
            ..ANY
        },
        trigger: Trigger::Src,
        avail: &[
            (TargetReq::Min(90), ver(7, 8)),
            (TargetReq::Min(89), ver(8, 1)),
        ],
    },
    Feature {
        what: "cvt to .e2m1x2/.e2m3x2/.e3m2x2 from .f32",
        cond: Cond {
            dst: Some(F4F6X2),
            src: Some(&[F32]),
            ..ANY
        },
        trigger: Trigger::Dst,
        avail: BLACKWELL_86,
    },
    Feature {
        what: "cvt.f16x2 from .e2m1x2/.e2m3x2/.e3m2x2",
        cond: Cond {
            dst: Some(&[F16x2]),
            src: Some(F4F6X2),
            ..ANY
        },
        trigger: Trigger::Src,
        avail: BLACKWELL_86,
    },
    Feature {
        what: "cvt with .ue8m0x2",
        cond: Cond {
            either: Some(&[Ue8m0x2]),
            ..ANY
        },
        trigger: Trigger::Types,
        avail: BLACKWELL_86,
    },
    Feature {
        what: "stochastic rounding .rs",
        cond: Cond {
            rnd: Some(RS),
            ..ANY
        },
        trigger: Trigger::Rounding,
        avail: &[(TargetReq::Arch(&[100, 103, 107]), ver(8, 7))],
    },
    Feature {
        what: "cvt to .e4m3x2/.e5m2x2 from .bf16x2",
        cond: Cond {
            dst: Some(F8X2),
            src: Some(&[Bf16x2]),
            ..ANY
        },
        trigger: Trigger::Src,
        avail: &[(TargetReq::Family(FAMILIES_100_110_120), ver(9, 1))],
    },
    Feature {
        what: "cvt to .e2m1x2/.e2m3x2/.e3m2x2 from .f16x2/.bf16x2",
        cond: Cond {
            dst: Some(F4F6X2),
            src: Some(FP16X2),
            ..ANY
        },
        trigger: Trigger::Src,
        avail: &[(TargetReq::Family(FAMILIES_100_110_120), ver(9, 1))],
    },
    Feature {
        what: "cvt with .s2f6x2",
        cond: Cond {
            either: Some(&[S2f6x2]),
            ..ANY
        },
        trigger: Trigger::Types,
        avail: &[(TargetReq::Arch(&[100, 103, 107, 110, 120, 121]), ver(9, 1))],
    },
    Feature {
        what: "cvt.bf16x2 from .e4m3x2/.e5m2x2/.e2m3x2/.e3m2x2/.e2m1x2",
        cond: Cond {
            dst: Some(&[Bf16x2]),
            src: Some(NARROW2),
            ..ANY
        },
        trigger: Trigger::Src,
        avail: &[(TargetReq::Family(FAMILIES_100_110_120), ver(9, 2))],
    },
    Feature {
        what: "cvt with .ue5m3x2",
        cond: Cond {
            either: Some(&[Ue5m3x2]),
            ..ANY
        },
        trigger: Trigger::Types,
        avail: FAMILY_107,
    },
    Feature {
        what: ".rz to a narrow packed type",
        cond: Cond {
            dst: Some(NARROW2_S2F6),
            rnd: Some(RZ),
            ..ANY
        },
        trigger: Trigger::Rounding,
        avail: FAMILY_107,
    },
    Feature {
        what: ".pzo",
        cond: Cond { flags: PZO, ..ANY },
        trigger: Trigger::Modifier(Modifier::Pzo),
        avail: FAMILY_107,
    },
    Feature {
        what: ".scaled::n1::ue8m0",
        cond: Cond { flags: N1, ..ANY },
        trigger: Trigger::Scaled,
        avail: FAMILY_107,
    },
    Feature {
        what: "cvt.pack",
        cond: Cond { pack: true, ..ANY },
        trigger: Trigger::Opcode,
        avail: &[(TargetReq::Min(72), ver(6, 5))],
    },
    Feature {
        what: "cvt.pack to .u4/.s4/.u2/.s2",
        cond: Cond {
            pack: true,
            dst: Some(&[U4, S4, U2, S2]),
            ..ANY
        },
        trigger: Trigger::Dst,
        avail: &[(TargetReq::Min(75), ver(6, 5))],
    },
];

// ---------------------------------------------------------------------------------------
// Operand shapes.

/// The structure of one operand position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShapeOperand {
    /// A register or an immediate.
    Scalar,
    /// A vector expression `{…}` with this many elements.
    Vector(u8),
}

/// The structure of an operand list: how many operands, and which are vectors. Register
/// types are not part of it (see [`check`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OperandShape(pub Vec<ShapeOperand>);

impl OperandShape {
    /// The operand list a form is written with: `d, a` for most; `d, a, b` for two-source
    /// forms; `d, a, b, rbits` and `d, {a, b, e, f}, rbits` for `.rs`; `cvt.pack`'s
    /// `d, a, b{, c}`; plus the scale factor of `.scaled::…`. `None` if the form does not
    /// exist on any target.
    pub fn natural(form: &CvtForm) -> Option<OperandShape> {
        variant_of(form).map(|v| OperandShape(slots(v, form).iter().map(|s| s.kind()).collect()))
    }

    /// The shape of parsed operands.
    pub fn of(operands: &[super::parse::Operand]) -> OperandShape {
        OperandShape(
            operands
                .iter()
                .map(|o| match &o.kind {
                    OperandKind::Vector(v) => {
                        ShapeOperand::Vector(u8::try_from(v.len()).unwrap_or(u8::MAX))
                    }
                    _ => ShapeOperand::Scalar,
                })
                .collect(),
        )
    }
}

/// What one operand position holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    D(PtxType),
    A(PtxType),
    B(PtxType),
    C(PtxType),
    Vec4(PtxType),
    Rbits,
    Scale(u32),
}

impl Slot {
    fn kind(self) -> ShapeOperand {
        match self {
            Slot::Vec4(_) => ShapeOperand::Vector(4),
            _ => ShapeOperand::Scalar,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Slot::D(_) => "d",
            Slot::A(_) => "a",
            Slot::B(_) => "b",
            Slot::C(_) => "c",
            Slot::Vec4(_) => "{a, b, e, f}",
            Slot::Rbits => "rbits",
            Slot::Scale(_) => "scale-factor",
        }
    }
}

fn slots(v: &Variant, form: &CvtForm) -> Vec<Slot> {
    let (d, a) = (form.dtype, form.atype);
    let mut s = match v.shape {
        Shape::Da => vec![Slot::D(d), Slot::A(a)],
        Shape::Dab => vec![Slot::D(d), Slot::A(a), Slot::B(a)],
        Shape::DabRbits => vec![Slot::D(d), Slot::A(a), Slot::B(a), Slot::Rbits],
        Shape::Vec4Rbits => vec![Slot::D(d), Slot::Vec4(a), Slot::Rbits],
        Shape::Dabc => vec![Slot::D(d), Slot::A(a), Slot::B(a), Slot::C(B32)],
    };
    match form.scaled {
        Some(Scaled::N1Ue8m0) => s.push(Slot::Scale(8)),
        Some(Scaled::N2Ue8m0) => s.push(Slot::Scale(16)),
        None => {}
    }
    if v.pack {
        // cvt.pack's d is a 32-bit integer whatever the convert type.
        s[0] = Slot::D(U32);
    }
    s
}

fn describe_slots(s: &[Slot]) -> String {
    s.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
}

// ---------------------------------------------------------------------------------------
// Register rules (ISA §4.15, §9.4.1 and the measured matrix of spec §7).

/// Whether a type pair is a "classic" one (integers, `.f16`, `.f32`, `.f64`, and `.f16x2`
/// made from `.f32`), whose operands may sit in wider registers. Every pair involving
/// `.bf16`, `.bf16x2`, `.tf32` or a narrow packed format needs registers of exactly the type's
/// width (ptxas is stricter than the ISA's notes here, spec §6.1 item 3).
fn classic_pair(form: &CvtForm) -> bool {
    let classic = |t: PtxType| t.is_int() || matches!(t, F16 | F32 | F64);
    form.pack
        || (classic(form.dtype) && classic(form.atype))
        || (form.dtype == F16x2 && form.atype == F32)
}

/// Whether a register of type `reg` may hold an operand of type `t`.
fn reg_fits(t: PtxType, reg: PtxType, wide: bool) -> bool {
    // `.b128` registers only serve the 128-bit instructions; ptxas's cvt behaviour with them
    // is unmeasured, so they are refused.
    if reg == B128 {
        return false;
    }
    // ptxas quirk (spec §6.1 item 10): a `.f16x2` register is taken wherever a 32-bit
    // integer or bit-size register is. Matched to ptxas.
    let f16x2_as_int = reg == F16x2 && t.is_int() && (t.bits() == 32 || (wide && t.bits() < 32));
    // Classic pairs take wider registers (Table 28); the others need the exact size (Table 27).
    let fits = if wide {
        wide_compatible(t, reg)
    } else {
        same_size_compatible(t, reg)
    };
    fits || f16x2_as_int
}

fn allowed_regs(t: PtxType, wide: bool) -> String {
    let names: Vec<String> = PtxType::all()
        .filter(|r| r.is_register_type() && reg_fits(t, *r, wide))
        .map(|r| format!(".{}", r.name()))
        .collect();
    names.join(" ")
}

// ---------------------------------------------------------------------------------------
// The checker.

/// Where to point diagnostics: the instruction's tokens, or nothing (a bare form).
struct Spans<'a> {
    instr: Option<&'a Instruction>,
}

impl Spans<'_> {
    fn opcode(&self) -> Span {
        self.instr.map_or_else(Span::default, |i| i.opcode)
    }
    fn types(&self) -> Span {
        self.instr.map_or_else(Span::default, |i| i.types_span())
    }
    fn ty(&self, k: usize) -> Span {
        self.instr
            .and_then(|i| i.type_span(k))
            .unwrap_or_else(|| self.types())
    }
    fn rounding(&self) -> Span {
        self.instr
            .and_then(|i| i.rounding_span())
            .unwrap_or_else(|| self.opcode())
    }
    fn flag(&self, f: Flags) -> Span {
        let m = match f {
            FTZ => Some(Modifier::Ftz),
            SAT => Some(Modifier::Sat),
            RELU => Some(Modifier::Relu),
            SF => Some(Modifier::Satfinite),
            PZO => Some(Modifier::Pzo),
            _ => None,
        };
        let span = match m {
            Some(m) => self.instr.and_then(|i| i.modifier_span(m)),
            None => self.instr.and_then(|i| i.scaled_span()),
        };
        span.unwrap_or_else(|| self.opcode())
    }
    fn trigger(&self, t: Trigger) -> Span {
        match t {
            Trigger::Opcode => self.opcode(),
            Trigger::Types => self.types(),
            Trigger::Dst => self.ty(0),
            Trigger::Src => self.ty(1),
            Trigger::Rounding => self.rounding(),
            Trigger::Modifier(m) => self
                .instr
                .and_then(|i| i.modifier_span(m))
                .unwrap_or_else(|| self.opcode()),
            Trigger::Scaled => self
                .instr
                .and_then(|i| i.scaled_span())
                .unwrap_or_else(|| self.opcode()),
        }
    }
    fn operands(&self) -> Span {
        let ops = self.instr.and_then(|i| i.operands.as_ref());
        match ops.and_then(|o| Some((o.first()?, o.last()?))) {
            Some((a, b)) => Span {
                end: b.span.end,
                ..a.span
            },
            None => self.instr.map_or_else(Span::default, |i| i.span),
        }
    }
}

fn types_name(form: &CvtForm) -> String {
    let mut s = String::from(if form.pack { "cvt.pack" } else { "cvt" });
    for t in [Some(form.dtype), Some(form.atype), form.ctype]
        .into_iter()
        .flatten()
    {
        s.push('.');
        s.push_str(t.name());
    }
    s
}

/// Stage 1 and 2: the types exist together, and the rounding and modifiers fit.
fn check_modifiers(form: &CvtForm, sp: &Spans<'_>) -> Result<&'static Variant, Diagnostic> {
    let flags = Flags::of(form);
    // The common case first: a variant takes the form as written.
    if let Some(v) = VARIANTS
        .iter()
        .find(|v| v.covers(form) && v.rnd.has(form.rounding) && v.accepts_flags(form, flags))
    {
        return Ok(v);
    }
    let cands: Vec<&Variant> = VARIANTS.iter().filter(|v| v.covers(form)).collect();
    let name = types_name(form);
    if cands.is_empty() {
        return Err(types_error(form, sp));
    }
    let with_r: Vec<&Variant> = cands
        .iter()
        .copied()
        .filter(|v| v.rnd.has(form.rounding))
        .collect();
    if with_r.is_empty() {
        let all = cands.iter().fold(Rnd(0), |a, v| a.or(v.rnd));
        return Err(match form.rounding {
            None => Diagnostic::error(
                "ptx.rounding-required",
                format!(
                    "{name} needs a rounding modifier: one of {}",
                    all.describe()
                ),
                sp.opcode(),
            ),
            Some(r) => {
                let allowed = if all == R_NONE {
                    "it takes no rounding modifier".to_string()
                } else if all.has(None) {
                    format!("allowed: none, or {}", all.describe())
                } else {
                    format!("allowed: {}", all.describe())
                };
                Diagnostic::error(
                    "ptx.rounding-illegal",
                    format!("'.{}' is not a rounding of {name} ({allowed})", r.name()),
                    sp.rounding(),
                )
            }
        });
    }
    // Explain: a modifier that never applies, or not with this rounding.
    for (bit, fname) in FLAG_NAMES {
        if !flags.contains(bit) {
            continue;
        }
        let anywhere = cands
            .iter()
            .any(|v| v.req.or(v.opt_for(form)).contains(bit));
        if !anywhere {
            let why = if bit == SAT && cands.iter().any(|v| v.sat_if_overflow) {
                format!(
                    ": every .{} value fits in .{}",
                    form.atype.name(),
                    form.dtype.name()
                )
            } else {
                String::new()
            };
            return Err(Diagnostic::error(
                "ptx.modifier-illegal",
                format!("'{fname}' does not apply to {name}{why}"),
                sp.flag(bit),
            ));
        }
        let with_this = with_r
            .iter()
            .any(|v| v.req.or(v.opt_for(form)).contains(bit));
        if !with_this {
            let rounds = cands
                .iter()
                .filter(|v| v.req.or(v.opt_for(form)).contains(bit))
                .fold(Rnd(0), |a, v| a.or(v.rnd));
            let r = form
                .rounding
                .map_or("no rounding modifier".to_string(), |r| {
                    format!("'.{}'", r.name())
                });
            return Err(Diagnostic::error(
                "ptx.modifier-rounding",
                format!(
                    "'{fname}' cannot be combined with {r} in {name} (it needs {})",
                    if rounds == R_NONE {
                        "no rounding modifier".to_string()
                    } else {
                        rounds.describe()
                    }
                ),
                sp.flag(bit),
            ));
        }
    }
    // A required modifier is missing?
    if let Some(v) = with_r
        .iter()
        .find(|v| v.req.or(v.opt_for(form)).contains(flags))
    {
        let missing = v.req.minus(flags);
        let names = missing.names().join("', '");
        return Err(Diagnostic::error(
            "ptx.modifier-required",
            format!("{name} requires '{names}'"),
            sp.opcode(),
        ));
    }
    // Two modifiers that never go together.
    let present: Vec<(Flags, &str)> = FLAG_NAMES
        .iter()
        .copied()
        .filter(|(b, _)| flags.contains(*b))
        .collect();
    for (i, (a, an)) in present.iter().enumerate() {
        for (b, bn) in &present[i + 1..] {
            let pair = a.or(*b);
            if !with_r
                .iter()
                .any(|v| v.req.or(v.opt_for(form)).contains(pair))
            {
                return Err(Diagnostic::error(
                    "ptx.modifier-combination",
                    format!("'{bn}' cannot be combined with '{an}' in {name}"),
                    sp.flag(*b),
                ));
            }
        }
    }
    Err(Diagnostic::error(
        "ptx.modifier-combination",
        format!("{} is not a form of {name}", flags.names().join("")),
        sp.opcode(),
    ))
}

fn types_error(form: &CvtForm, sp: &Spans<'_>) -> Diagnostic {
    let name = types_name(form);
    if form.pack {
        let msg = match form.ctype {
            _ if !matches!(form.dtype, U16 | S16 | U8 | S8 | U4 | S4 | U2 | S2) => format!(
                "{name}: the convert type must be .u16/.s16 (cvt.pack.sat.u16.s32) or \
                 .u8/.s8/.u4/.s4/.u2/.s2 (with .s32.b32)"
            ),
            _ if form.atype != S32 => {
                format!("{name}: the source type of cvt.pack is .s32")
            }
            None => format!(
                "{name}: .{} needs a .b32 c type (cvt.pack.sat.{}.s32.b32 d, a, b, c)",
                form.dtype.name(),
                form.dtype.name()
            ),
            Some(B32) => format!(
                "{name}: .{} takes no c type (cvt.pack.sat.{}.s32 d, a, b)",
                form.dtype.name(),
                form.dtype.name()
            ),
            Some(c) => format!("{name}: the c type of cvt.pack is .b32, not .{}", c.name()),
        };
        return Diagnostic::error("ptx.types", msg, sp.types());
    }
    if form.ctype.is_some() {
        return Diagnostic::error(
            "ptx.types",
            format!("{name}: cvt takes two types (.dtype.atype); only cvt.pack has a third"),
            sp.ty(2),
        );
    }
    let hint = |t: PtxType| -> Option<String> {
        if t.is_bits() {
            return Some(format!(
                ".{} is not a cvt type (cvt has no bit-size types; use .u{n} or .s{n})",
                t.name(),
                n = t.bits()
            ));
        }
        let packed = match t {
            E4m3 | E5m2 | E2m3 | E3m2 | E2m1 | Ue8m0 | S2f6 | Ue5m3 => {
                Some(format!("{}x2", t.name()))
            }
            _ => None,
        };
        if let Some(p) = packed {
            return Some(format!(
                "scalar .{} is not a cvt type (use the packed .{p})",
                t.name()
            ));
        }
        match t {
            Pred | B128 | Ue4m3 | F32x2 | U16x2 | S16x2 | U4 | S4 | U2 | S2 => {
                Some(format!(".{} is not a cvt type", t.name()))
            }
            _ => None,
        }
    };
    for (k, t) in [(0, form.dtype), (1, form.atype)] {
        if let Some(h) = hint(t) {
            return Diagnostic::error("ptx.types", format!("{name}: {h}"), sp.ty(k));
        }
    }
    Diagnostic::error(
        "ptx.types",
        format!(
            "cvt has no form converting .{} to .{}",
            form.atype.name(),
            form.dtype.name()
        ),
        sp.types(),
    )
}

/// Stage 4: the target and PTX-version floors.
fn check_features(
    form: &CvtForm,
    sp: &Spans<'_>,
    target: Target,
    version: PtxVersion,
    out: &mut Vec<Diagnostic>,
) {
    for f in FEATURES.iter().filter(|f| f.cond.matches(form)) {
        if f.avail
            .iter()
            .any(|(req, v)| req.holds(target) && version >= *v)
        {
            continue;
        }
        let on_target: Option<PtxVersion> = f
            .avail
            .iter()
            .filter(|(req, _)| req.holds(target))
            .map(|(_, v)| *v)
            .min();
        let span = sp.trigger(f.trigger);
        out.push(match on_target {
            Some(v) => Diagnostic::error(
                "ptx.version",
                format!(
                    "{} needs PTX ISA {v} or later on {target} (.version is {version})",
                    f.what
                ),
                span,
            ),
            None => {
                let alts: Vec<String> = f
                    .avail
                    .iter()
                    .map(|(req, v)| {
                        if *v > ver(1, 0) {
                            format!("{req} (PTX ISA {v})")
                        } else {
                            req.to_string()
                        }
                    })
                    .collect();
                Diagnostic::error(
                    "ptx.target",
                    format!(
                        "{} is not supported on {target}: it needs {}",
                        f.what,
                        alts.join("; or ")
                    ),
                    span,
                )
            }
        });
    }
}

fn check_target_version(target: Target, version: PtxVersion, span: Span) -> Option<Diagnostic> {
    if version < target.min_version() {
        Some(Diagnostic::error(
            "ptx.target-version",
            format!(
                "target {target} needs PTX ISA {} or later (.version is {version})",
                target.min_version()
            ),
            span,
        ))
    } else if version > target.max_version() {
        Some(Diagnostic::error(
            "ptx.target-version",
            format!(
                "target {target} is not accepted after PTX ISA {} (it was renamed sm_110)",
                target.max_version()
            ),
            span,
        ))
    } else {
        None
    }
}

/// Checks a form alone (no registers), with an operand shape, on a target at a PTX version:
/// the types, rounding and modifiers (mandatory, optional, illegal; order is free), the operand
/// count and vector positions, and the target and version floors. Returns the first problem.
/// Diagnostics have no position (there is no text); their messages name the tokens.
///
/// # Errors
/// The first rule the form breaks.
pub fn check_form(
    form: &CvtForm,
    shape: &OperandShape,
    target: Target,
    version: PtxVersion,
) -> Result<(), Diagnostic> {
    let sp = Spans { instr: None };
    let v = check_modifiers(form, &sp)?;
    if let Some(d) = check_shape(form, v, shape, &sp) {
        return Err(d);
    }
    if let Some(d) = check_target_version(target, version, Span::default()) {
        return Err(d);
    }
    let mut out = Vec::new();
    check_features(form, &sp, target, version, &mut out);
    match out.into_iter().next() {
        Some(d) => Err(d),
        None => Ok(()),
    }
}

/// Checks what of an instruction does not depend on the target: its types, rounding and
/// modifiers and, when it has operands, their count and vector positions (register types
/// are not looked at). The diagnostics are those of [`check`], with their spans; the first
/// problem is returned.
///
/// # Errors
/// The first rule the instruction breaks.
pub fn check_form_text(instr: &Instruction) -> Result<(), Diagnostic> {
    let sp = Spans { instr: Some(instr) };
    let v = check_modifiers(&instr.form, &sp)?;
    if let Some(ops) = &instr.operands {
        if let Some(d) = check_shape(&instr.form, v, &OperandShape::of(ops), &sp) {
            return Err(d);
        }
    }
    Ok(())
}

/// Whether the quirky operand shapes ptxas accepts apply.
fn shape_quirk(form: &CvtForm, shape: &OperandShape) -> bool {
    use ShapeOperand::{Scalar, Vector};
    // ptxas quirk (spec §6.1 item 10): `cvt.rn.satfinite{.relu}.e2m1x2.bf16x2 d, {a, b}` and
    // `d, {a, b, e, f}` are accepted. Matched to ptxas.
    // (The third operand of `cvt….ue5m3x2.{f16x2,bf16x2}`, also in item 10: see
    // `takes_optional_scale`.)
    form.dtype == E2m1x2
        && form.atype == Bf16x2
        && form.scaled.is_none()
        && (shape.0 == [Scalar, Vector(2)] || shape.0 == [Scalar, Vector(4)])
}

/// Whether a form takes an optional third operand, a `.b8` scale factor, without the
/// `.scaled::n1::ue8m0` qualifier. ptxas quirk (spec §6.1 item 10, re-measured with ptxas
/// 13.5 on sm_107a): `cvt.{rn,rz}{.satfinite}.ue5m3x2.{f16x2,bf16x2} d, a, s` is accepted
/// when `s` is an 8-bit register, and rejected with a 16-bit one ("Arguments mismatch"), so
/// the operand is checked as `.scaled::n1::ue8m0`'s scale. Matched to ptxas.
pub fn takes_optional_scale(form: &CvtForm) -> bool {
    form.dtype == Ue5m3x2
        && FP16X2.contains(&form.atype)
        && form.scaled.is_none()
        && matches!(form.rounding, Some(RoundMod::Rn | RoundMod::Rz))
}

/// The operand slots of `v` for an instruction written with `n` operands: the natural ones,
/// plus the optional scale factor where [`takes_optional_scale`] and `n` say so.
fn slots_for(v: &Variant, form: &CvtForm, n: usize) -> Vec<Slot> {
    let mut want = slots(v, form);
    if takes_optional_scale(form) && n == want.len() + 1 {
        want.push(Slot::Scale(8));
    }
    want
}

fn check_shape(
    form: &CvtForm,
    v: &Variant,
    shape: &OperandShape,
    sp: &Spans<'_>,
) -> Option<Diagnostic> {
    let want = slots_for(v, form, shape.0.len());
    let want_shape: Vec<ShapeOperand> = want.iter().map(|s| s.kind()).collect();
    if shape.0 == want_shape || shape_quirk(form, shape) {
        return None;
    }
    let spelling = form.spelling();
    if shape.0.len() != want.len() {
        let mut msg = format!(
            "{spelling} takes {} operands ({}), found {}",
            want.len(),
            describe_slots(&want),
            shape.0.len()
        );
        if form.scaled.is_none() && shape.0.len() == want.len() + 1 && v.opt.contains(N2) {
            msg.push_str(" (a scale-factor operand needs .scaled::n2::ue8m0)");
        }
        return Some(Diagnostic::error("ptx.operand-count", msg, sp.operands()));
    }
    let k = shape
        .0
        .iter()
        .zip(&want_shape)
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    let span = sp
        .instr
        .and_then(|i| i.operands.as_ref())
        .and_then(|o| o.get(k))
        .map_or_else(|| sp.operands(), |o| o.span);
    let msg = match want_shape[k] {
        ShapeOperand::Vector(n) => format!(
            "operand {} of {spelling} must be a vector of {n} registers ({})",
            k + 1,
            want[k].name()
        ),
        ShapeOperand::Scalar => format!(
            "operand {} ({}) of {spelling} must be a single register or value, not a vector",
            k + 1,
            want[k].name()
        ),
    };
    Some(Diagnostic::error("ptx.operand-vector", msg, span))
}

/// Stage 3b: register types and immediates.
fn check_registers(
    instr: &Instruction,
    v: &Variant,
    regs: &dyn Fn(&str) -> Option<RegType>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(ops) = &instr.operands else { return };
    let form = &instr.form;
    let mut want = slots_for(v, form, ops.len());
    let quirk = shape_quirk(form, &OperandShape::of(ops));
    if quirk {
        want = vec![Slot::D(E2m1x2), Slot::Vec4(Bf16x2)];
    }
    let wide = classic_pair(form);
    let spelling = || form.spelling();
    for (op, slot) in ops.iter().zip(want.iter().copied()) {
        match (&op.kind, slot) {
            (OperandKind::Vector(elems), Slot::Vec4(t)) => {
                for e in elems {
                    match &e.kind {
                        OperandKind::Reg(r) => {
                            if let Some(ty) = lookup(r, e.span, regs, out) {
                                if !(reg_fits(t, ty, false)) {
                                    out.push(reg_error(
                                        &spelling(),
                                        "a vector element",
                                        t,
                                        ty,
                                        false,
                                        r,
                                        e.span,
                                    ));
                                }
                            }
                        }
                        _ => out.push(Diagnostic::error(
                            "ptx.operand-type",
                            format!(
                                "the elements of the vector operand of {} must be registers",
                                spelling()
                            ),
                            e.span,
                        )),
                    }
                }
            }
            (OperandKind::Vector(_), _) | (_, Slot::Vec4(_)) => {} // reported by the shape check
            (OperandKind::Sink, _) => out.push(Diagnostic::error(
                "ptx.operand-type",
                format!(
                    "the sink '_' cannot be operand {} of {}",
                    slot.name(),
                    spelling()
                ),
                op.span,
            )),
            (OperandKind::Imm(imm), slot) => {
                let ok = match slot {
                    Slot::D(_) => false,
                    Slot::A(t) | Slot::B(t) => {
                        if t.is_int() {
                            !imm.is_float()
                        } else {
                            matches!(t, F32 | F64) && imm.is_float()
                        }
                    }
                    Slot::C(_) | Slot::Rbits | Slot::Scale(_) => !imm.is_float(),
                    Slot::Vec4(_) => false,
                };
                if !ok {
                    let why = match slot {
                        Slot::D(_) => "the destination must be a register".to_string(),
                        Slot::A(t) | Slot::B(t) if t.is_int() => {
                            format!("an integer source takes an integer literal, not {}", imm_kind(*imm))
                        }
                        Slot::A(t) | Slot::B(t) if matches!(t, F32 | F64) => format!(
                            "a .{} source takes a floating-point literal (0f…/0d…/1.0), not an integer",
                            t.name()
                        ),
                        Slot::A(t) | Slot::B(t) => {
                            format!("a .{} source must be a register", t.name())
                        }
                        _ => format!("{} takes an integer literal", slot.name()),
                    };
                    out.push(Diagnostic::error(
                        "ptx.operand-immediate",
                        format!("operand {} of {}: {why}", slot.name(), spelling()),
                        op.span,
                    ));
                }
            }
            (OperandKind::Reg(r), slot) => {
                let Some(ty) = lookup(r, op.span, regs, out) else {
                    continue;
                };
                let (t, w, ok) = match slot {
                    // ptxas quirk (spec §6.1 item 10): any 16-bit register as an `.s2f6x2`
                    // destination. Matched to ptxas.
                    Slot::D(S2f6x2) => (S2f6x2, false, ty != Pred && ty.bits() == 16),
                    // ptxas quirk (spec §6.1 item 10): `.u32/.s32/.f32` registers as the
                    // `.bf16x2` source of e2m1x2. Matched to ptxas.
                    Slot::A(Bf16x2) if form.dtype == E2m1x2 => {
                        (Bf16x2, false, ty != Pred && ty.bits() == 32)
                    }
                    Slot::D(t) | Slot::A(t) | Slot::B(t) => (t, wide, reg_fits(t, ty, wide)),
                    Slot::C(t) => (t, true, reg_fits(t, ty, true) || ty == F32),
                    Slot::Rbits => (B32, false, ty != Pred && ty.bits() == 32),
                    Slot::Scale(n) => (
                        if n == 8 { B8 } else { B16 },
                        false,
                        ty != Pred && ty.bits() == n,
                    ),
                    Slot::Vec4(_) => continue,
                };
                if !ok {
                    out.push(reg_error(&spelling(), slot.name(), t, ty, w, r, op.span));
                }
            }
        }
    }
}

fn imm_kind(i: Immediate) -> &'static str {
    if i.is_float() {
        "a floating-point literal"
    } else {
        "an integer"
    }
}

fn lookup(
    r: &RegRef,
    span: Span,
    regs: &dyn Fn(&str) -> Option<RegType>,
    out: &mut Vec<Diagnostic>,
) -> Option<PtxType> {
    let Some(rt) = regs(&r.name) else {
        out.push(Diagnostic::error(
            "ptx.register-undeclared",
            format!("register {} is not declared", r.name),
            span,
        ));
        return None;
    };
    match (r.component, rt.lanes) {
        (None, 1) => Some(rt.ty),
        (None, n) => {
            out.push(Diagnostic::error(
                "ptx.register-vector",
                format!(
                    "{} is a .v{n} register; name one element ({}.x …)",
                    r.name, r.name
                ),
                span,
            ));
            None
        }
        (Some(_), 1) => {
            out.push(Diagnostic::error(
                "ptx.register-vector",
                format!("{} is a scalar register; it has no elements", r.name),
                span,
            ));
            None
        }
        (Some(c), n) if c >= n => {
            out.push(Diagnostic::error(
                "ptx.register-vector",
                format!("{} has {n} elements; element {} does not exist", r.name, c),
                span,
            ));
            None
        }
        (Some(_), _) => Some(rt.ty),
    }
}

fn reg_error(
    spelling: &str,
    slot: &str,
    t: PtxType,
    ty: PtxType,
    wide: bool,
    r: &RegRef,
    span: Span,
) -> Diagnostic {
    let allowed = if slot == "rbits" || slot == "scale-factor" {
        format!("a {}-bit register", t.bits())
    } else {
        let a = allowed_regs(t, wide);
        if a.is_empty() {
            format!("a {}-bit register", t.bits())
        } else {
            a
        }
    };
    Diagnostic::error(
        "ptx.register-type",
        format!(
            "operand {slot} of {spelling}: {} is a .{} register; a .{} operand needs {allowed}",
            r.name,
            ty.name(),
            t.name()
        ),
        span,
    )
}

/// Checks one instruction on a target at a PTX version: types, rounding and modifiers,
/// operand count and shape, register types of every operand (looked up with `regs`), and the
/// target and PTX-version floors of every feature it uses. A bare instruction (no operands) is
/// checked as written in its natural shape. Returns every problem found (empty: legal).
///
/// Each diagnostic names its rule (`ptx.rounding-required`, `ptx.register-type`, …) and
/// points at the offending token.
pub fn check(
    instr: &Instruction,
    regs: &impl Fn(&str) -> Option<RegType>,
    target: Target,
    version: PtxVersion,
) -> Vec<Diagnostic> {
    check_dyn(instr, regs, target, version)
}

fn check_dyn(
    instr: &Instruction,
    regs: &dyn Fn(&str) -> Option<RegType>,
    target: Target,
    version: PtxVersion,
) -> Vec<Diagnostic> {
    let sp = Spans { instr: Some(instr) };
    let mut out = Vec::new();
    let v = match check_modifiers(&instr.form, &sp) {
        Ok(v) => v,
        Err(d) => {
            out.push(d);
            return out;
        }
    };
    if let Some(ops) = &instr.operands {
        match check_shape(&instr.form, v, &OperandShape::of(ops), &sp) {
            Some(d) => out.push(d),
            None => check_registers(instr, v, regs, &mut out),
        }
    }
    if let Some(d) = check_target_version(target, version, instr.opcode) {
        out.push(d);
    } else {
        check_features(&instr.form, &sp, target, version, &mut out);
    }
    out
}

/// Whether a form is legal on some target at some PTX version (for evaluation without a
/// target): it is well-formed and every feature it uses exists together on one known target.
pub fn legal_somewhere(form: &CvtForm) -> bool {
    variant_of(form).is_some()
        && Target::all().any(|t| {
            let mut out = Vec::new();
            check_features(form, &Spans { instr: None }, t, t.max_version(), &mut out);
            out.is_empty()
        })
}

/// Every distinct form (modifier order ignored) legal on `target` at `version`, sorted by
/// spelling. `cvt.pack` forms are included.
pub fn legal_forms(target: Target, version: PtxVersion) -> Vec<CvtForm> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let sp = Spans { instr: None };
    for v in VARIANTS {
        for &d in v.dst {
            for &a in v.src {
                let mut base = CvtForm::new(d, a);
                base.pack = v.pack;
                base.ctype = v.ctype;
                let opt = v.opt_for(&base);
                for r in v.rnd.members() {
                    // Every subset of the optional flags.
                    let mut sub = opt.0;
                    loop {
                        let flags = v.req.or(Flags(sub));
                        // The two scale qualifiers exclude each other.
                        if !flags.contains(N1.or(N2)) {
                            let mut f = base;
                            f.rounding = r;
                            flags.apply(&mut f);
                            let mut diags = Vec::new();
                            if check_target_version(target, version, Span::default()).is_none() {
                                check_features(&f, &sp, target, version, &mut diags);
                                if diags.is_empty() && seen.insert(f) {
                                    out.push(f);
                                }
                            }
                        }
                        if sub == 0 {
                            break;
                        }
                        sub = (sub - 1) & opt.0;
                    }
                }
            }
        }
    }
    out.sort_by_cached_key(|f| f.spelling());
    out
}

// ---------------------------------------------------------------------------------------
// Files.

/// Registers visible at one point: a stack of blocks' declarations.
struct Scope {
    blocks: Vec<BlockRegs>,
}

impl Scope {
    fn lookup(&self, name: &str) -> Option<RegType> {
        for b in self.blocks.iter().rev() {
            if let Some(t) = b.lookup(name) {
                return Some(t);
            }
        }
        // The special registers that are read-only inputs.
        special_register(name)
    }
}

/// The ways to read `name` as a parameterized register `prefix` + index (`%r12` is `%r1` 2
/// and `%r` 12): the prefix and the index, for every canonical decimal suffix.
fn indexed_splits(name: &str) -> impl Iterator<Item = (&str, u64)> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    (1..=digits).filter_map(move |n| {
        let (prefix, suffix) = name.split_at(name.len() - n);
        let canonical = suffix == "0" || !suffix.starts_with('0');
        (canonical && !prefix.is_empty())
            .then(|| suffix.parse::<u64>().ok().map(|k| (prefix, k)))
            .flatten()
    })
}

/// One block's declarations, hashed by name so that a lookup does not walk them all. (It
/// owns its names: the streaming checker builds it while the declarations are still growing.)
struct BlockRegs {
    /// Plain names: the index of the last declaration of each.
    plain: HashMap<String, usize>,
    /// Parameterized names by prefix: (declaration index, count), last declaration first,
    /// kept only where the count is above every later one's (the others are never the last
    /// to declare a name), so counts increase along each list.
    ranges: HashMap<String, Vec<(usize, u32)>>,
    /// Each declaration's register type.
    types: Vec<RegType>,
}

impl BlockRegs {
    fn new(decls: &[RegDecl]) -> BlockRegs {
        let mut plain = HashMap::new();
        let mut ranges: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        for (k, d) in decls.iter().enumerate() {
            for n in &d.names {
                match n.count {
                    None => {
                        plain.insert(n.name.clone(), k);
                    }
                    Some(c) => ranges.entry(n.name.clone()).or_default().push((k, c)),
                }
            }
        }
        for v in ranges.values_mut() {
            let mut kept: Vec<(usize, u32)> = Vec::new();
            for &(k, c) in v.iter().rev() {
                if kept.last().is_none_or(|&(_, m)| c > m) {
                    kept.push((k, c));
                }
            }
            *v = kept;
        }
        BlockRegs {
            plain,
            ranges,
            types: decls.iter().map(RegDecl::reg_type).collect(),
        }
    }

    /// The type of `name`, from the last declaration in this block that declares it.
    fn lookup(&self, name: &str) -> Option<RegType> {
        let mut best = self.plain.get(name).copied();
        for (prefix, k) in indexed_splits(name) {
            let hit = self.ranges.get(prefix).and_then(|v| {
                let i = v.partition_point(|&(_, c)| u64::from(c) <= k);
                v.get(i).map(|&(d, _)| d)
            });
            best = best.max(hit);
        }
        best.map(|k| self.types[k])
    }
}

/// The first earlier name in a block that `n` clashes with (the same name, or a name inside
/// a parameterized range, either way round), found through hash maps rather than by
/// comparing every pair.
#[derive(Default)]
struct ClashFinder<'a> {
    /// Plain names: the first declaration of each.
    plain: HashMap<&'a str, (usize, &'a RegName)>,
    /// Plain names by each prefix + index reading: (order, index, name), kept only where the
    /// index is below every earlier one's, so the earliest clash is a binary search away.
    plain_indexed: HashMap<&'a str, Vec<(usize, u64, &'a RegName)>>,
    /// Parameterized names by prefix: (order, count, name), kept only where the count is
    /// above every earlier one's.
    ranges: HashMap<&'a str, Vec<(usize, u32, &'a RegName)>>,
    order: usize,
}

impl<'a> ClashFinder<'a> {
    fn add(&mut self, n: &'a RegName) -> Option<&'a RegName> {
        let order = self.order;
        self.order += 1;
        let mut first: Option<(usize, &RegName)> = None;
        let mut consider = |hit: Option<(usize, &'a RegName)>| {
            if let Some(h) = hit {
                if first.is_none_or(|f| h.0 < f.0) {
                    first = Some(h);
                }
            }
        };
        match n.count {
            None => {
                consider(self.plain.get(n.name.as_str()).copied());
                for (prefix, k) in indexed_splits(&n.name) {
                    if let Some(v) = self.ranges.get(prefix) {
                        // Counts increase along `v`: the first above `k` is the earliest.
                        let i = v.partition_point(|&(_, c, _)| u64::from(c) <= k);
                        consider(v.get(i).map(|&(o, _, m)| (o, m)));
                    }
                }
                self.plain.entry(n.name.as_str()).or_insert((order, n));
                for (prefix, k) in indexed_splits(&n.name) {
                    let v = self.plain_indexed.entry(prefix).or_default();
                    if v.last().is_none_or(|&(_, j, _)| k < j) {
                        v.push((order, k, n));
                    }
                }
            }
            Some(c) => {
                if let Some(v) = self.ranges.get(n.name.as_str()) {
                    consider(v.first().map(|&(o, _, m)| (o, m)));
                }
                if let Some(v) = self.plain_indexed.get(n.name.as_str()) {
                    // Indices decrease along `v`: the first below `c` is the earliest.
                    let i = v.partition_point(|&(_, k, _)| k >= u64::from(c));
                    consider(v.get(i).map(|&(o, _, m)| (o, m)));
                }
                let v = self.ranges.entry(n.name.as_str()).or_default();
                if v.last().is_none_or(|&(_, m, _)| c > m) {
                    v.push((order, c, n));
                }
            }
        }
        first.map(|f| f.1)
    }
}

fn special_register(name: &str) -> Option<RegType> {
    let v4 = |ty| RegType { ty, lanes: 4 };
    match name {
        "%tid" | "%ntid" | "%ctaid" | "%nctaid" | "%clusterid" | "%nclusterid"
        | "%cluster_ctaid" | "%cluster_nctaid" => Some(v4(U32)),
        "%laneid" | "%warpid" | "%nwarpid" | "%smid" | "%nsmid" | "%gridid" | "%lanemask_eq"
        | "%lanemask_le" | "%lanemask_lt" | "%lanemask_ge" | "%lanemask_gt" | "%clock"
        | "%cluster_ctarank" | "%cluster_nctarank" | "%dynamic_smem_size" | "%total_smem_size" => {
            Some(RegType::scalar(U32))
        }
        "%clock64" | "%globaltimer" => Some(RegType::scalar(U64)),
        _ => None,
    }
}

fn check_reg_decl(d: &RegDecl, version: Option<PtxVersion>, out: &mut Vec<Diagnostic>) {
    if !d.ty.is_register_type() {
        let hint = match d.ty {
            Bf16 => " (bf16 values live in .b16 registers)",
            Bf16x2 | Tf32 => " (its values live in .b32 registers)",
            _ if d.ty.lane_format().is_some() && !d.ty.is_int() => {
                " (alternate formats live in .bN registers of their width)"
            }
            _ => "",
        };
        out.push(Diagnostic::error(
            "ptx.reg-type",
            format!(".{} is not a register type{hint}", d.ty.name()),
            d.type_span,
        ));
        return;
    }
    if d.lanes > 1 {
        let vspan = d.vector_span.unwrap_or(d.span);
        if !matches!(d.lanes, 2 | 4) {
            out.push(Diagnostic::error(
                "ptx.reg-vector",
                format!(".v{} is not a register vector size (.v2 or .v4)", d.lanes),
                vspan,
            ));
        } else if d.ty == Pred {
            out.push(Diagnostic::error(
                "ptx.reg-vector",
                "predicate registers cannot be vectors",
                vspan,
            ));
        } else if d.reg_type().bits() > 128 {
            out.push(Diagnostic::error(
                "ptx.reg-vector",
                format!(
                    ".v{} .{} is {} bits; a vector is at most 128 bits",
                    d.lanes,
                    d.ty.name(),
                    d.reg_type().bits()
                ),
                vspan,
            ));
        }
    }
    if d.ty == B128 && version.is_some_and(|v| v < ver(8, 3)) {
        out.push(Diagnostic::error(
            "ptx.version",
            ".b128 registers need PTX ISA 8.3 or later",
            d.type_span,
        ));
    }
}

/// A block's declarations: valid types, no name declared twice in one block.
fn check_reg_decls(decls: &[RegDecl], version: Option<PtxVersion>, out: &mut Vec<Diagnostic>) {
    let mut names = ClashFinder::default();
    for d in decls {
        check_reg_decl(d, version, out);
        for n in &d.names {
            if let Some(m) = names.add(n) {
                out.push(Diagnostic::error(
                    "ptx.reg-duplicate",
                    format!(
                        "{} is already declared in this block (line {})",
                        n.name, m.span.line
                    ),
                    n.span,
                ));
            }
        }
    }
}

fn check_block(
    block: &Block,
    scope: &mut Scope,
    target: Option<Target>,
    version: Option<PtxVersion>,
    out: &mut Vec<Diagnostic>,
) {
    check_reg_decls(&block.regs, version, out);
    scope.blocks.push(BlockRegs::new(&block.regs));
    for s in &block.statements {
        match s {
            Statement::Cvt(i) => {
                if let (Some(t), Some(v)) = (target, version) {
                    let lookup = |name: &str| scope.lookup(name);
                    out.extend(check_dyn(i, &lookup, t, v));
                }
            }
            Statement::Block(b) => check_block(b, scope, target, version, out),
            _ => {}
        }
    }
    scope.blocks.pop();
}

/// Runs legality on a parsed module: every `.reg` declaration (register types, vector sizes
/// of at most 128 bits, names declared twice) and every `cvt`/`cvt.pack` (as [`check`], with
/// the registers in scope). The target is `target` if given (a `--target` option), else the
/// file's `.target`; the version is `version` if given, else the file's `.version`.
///
/// Returns only legality diagnostics; the reader's own are in [`PtxFile::diagnostics`].
pub fn check_file(
    file: &PtxFile,
    target: Option<Target>,
    version: Option<PtxVersion>,
) -> Vec<Diagnostic> {
    let mut out = check_header(file, target, version);
    let target = target.or(file.target.map(|t| t.value));
    let version = version.or(file.version.map(|v| v.value));
    for f in &file.functions {
        check_function(f, target, version, &mut out);
    }
    out
}

/// The module-level part of [`check_file`]: a `.version` and a target exist and agree.
fn check_header(
    file: &PtxFile,
    target: Option<Target>,
    version: Option<PtxVersion>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let target = target.or(file.target.map(|t| t.value));
    let version = version.or(file.version.map(|v| v.value));
    if version.is_none() {
        out.push(Diagnostic::error(
            "ptx.directive",
            "no .version directive (a PTX module starts with e.g. .version 9.5)",
            Span::locate("", 0, 0),
        ));
    }
    if target.is_none() {
        out.push(Diagnostic::error(
            "ptx.directive",
            "no valid .target directive and no target given (e.g. .target sm_90a)",
            Span::locate("", 0, 0),
        ));
    }
    if let (Some(t), Some(v)) = (target, version) {
        let span = file
            .target
            .map(|t| t.span)
            .or(file.version.map(|v| v.span))
            .unwrap_or_default();
        if let Some(d) = check_target_version(t, v, span) {
            out.push(d);
        }
    }
    out
}

/// The per-function part of [`check_file`], with the target and version resolved.
fn check_function(
    f: &Function,
    target: Option<Target>,
    version: Option<PtxVersion>,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(body) = &f.body {
        let mut scope = Scope { blocks: Vec::new() };
        check_block(body, &mut scope, target, version, out);
    }
}

/// A block open while the streaming checker reads it.
#[derive(Default)]
struct OpenBlock {
    decls: Vec<RegDecl>,
    /// Built at the first lookup, from the declarations read so far.
    regs: Option<BlockRegs>,
    /// Whether a `cvt` in this block or a nested one has been checked.
    cvt_seen: bool,
}

/// Checks the bodies as the reader streams them: each `cvt` as soon as it is read, against
/// the declarations read so far. That is the whole-block answer when every block declares
/// its registers before its first `cvt`, as compilers write them; a `.reg` after a `cvt` it
/// could apply to sets `late`, and the results are not to be used.
struct StreamCheck {
    /// `--target` / `--ptx-version`, over the module's.
    target: Option<Target>,
    version: Option<PtxVersion>,
    /// What the function being read is checked with.
    current: (Option<Target>, Option<PtxVersion>),
    /// Every pair any function was checked with.
    used: Vec<(Option<Target>, Option<PtxVersion>)>,
    blocks: Vec<OpenBlock>,
    late: bool,
    out: Vec<Diagnostic>,
}

impl super::parse::Sink for StreamCheck {
    fn function(&mut self, _f: Function, _so_far: &PtxFile) {}

    fn streams(&self) -> bool {
        true
    }

    fn open(&mut self, so_far: &PtxFile) {
        if self.blocks.is_empty() {
            let t = self.target.or(so_far.target.map(|t| t.value));
            let v = self.version.or(so_far.version.map(|v| v.value));
            self.current = (t, v);
            if !self.used.contains(&(t, v)) {
                self.used.push((t, v));
            }
        }
        self.blocks.push(OpenBlock::default());
    }

    fn reg(&mut self, decl: RegDecl) {
        if let Some(b) = self.blocks.last_mut() {
            self.late |= b.cvt_seen;
            b.regs = None;
            b.decls.push(decl);
        }
    }

    fn cvt(&mut self, instr: Instruction, _so_far: &PtxFile) {
        // Once late, the module is checked again: no more work here (rebuilding the lookup
        // after each of many late declarations would be quadratic).
        if self.late {
            return;
        }
        for b in &mut self.blocks {
            if b.regs.is_none() {
                b.regs = Some(BlockRegs::new(&b.decls));
            }
        }
        if let Some(b) = self.blocks.last_mut() {
            b.cvt_seen = true;
        }
        if let (Some(t), Some(v)) = self.current {
            let lookup = |name: &str| {
                self.blocks
                    .iter()
                    .rev()
                    .find_map(|b| b.regs.as_ref().and_then(|r| r.lookup(name)))
                    .or_else(|| special_register(name))
            };
            let d = check_dyn(&instr, &lookup, t, v);
            self.out.extend(d);
        }
    }

    fn close(&mut self) {
        if let Some(b) = self.blocks.pop() {
            if !self.late {
                check_reg_decls(&b.decls, self.current.1, &mut self.out);
            }
            if let Some(parent) = self.blocks.last_mut() {
                parent.cvt_seen |= b.cvt_seen;
            }
        }
    }
}

/// [`check_source`]'s usual pass: each `cvt` checked as it is read ([`StreamCheck`]).
/// Returns the module (without functions), the header's and the bodies' diagnostics, and
/// whether they are final: every body was checked with the target and version the whole
/// module resolves to, and no declaration came after a `cvt` it could apply to.
fn check_stream(
    src: &str,
    target: Option<Target>,
    version: Option<PtxVersion>,
) -> (PtxFile, Vec<Diagnostic>, bool) {
    let mut sink = StreamCheck {
        target,
        version,
        current: (None, None),
        used: Vec::new(),
        blocks: Vec::new(),
        late: false,
        out: Vec::new(),
    };
    let file = super::parse::read_file(src, false, &mut sink);
    let t = target.or(file.target.map(|t| t.value));
    let v = version.or(file.version.map(|v| v.value));
    let fine = !sink.late && sink.used.iter().all(|&u| u == (t, v));
    let mut out = check_header(&file, target, version);
    out.append(&mut sink.out);
    (file, out, fine)
}

/// [`check_source`]'s second pass, where [`check_stream`]'s results are not final: each
/// function kept (without what legality ignores) until it ends, then checked whole with the
/// module's final `target` and `version`, and dropped. Returns the header's and the bodies'
/// diagnostics.
fn check_whole_functions(
    src: &str,
    target: Option<Target>,
    version: Option<PtxVersion>,
) -> Vec<Diagnostic> {
    let mut per_function = Vec::new();
    let file = super::parse::read_functions(src, false, |f, _| {
        check_function(&f, target, version, &mut per_function);
    });
    let mut out = check_header(&file, target, version);
    out.append(&mut per_function);
    out
}

/// Reads and checks a PTX text: the reader's diagnostics ([`PtxFile::diagnostics`]) and
/// [`check_file`]'s, in source order (by position; the reader's first at equal positions),
/// without duplicates. This is what `gpucvt check` prints for a `.ptx` file.
///
/// ```
/// use gpucvt::ptx::check::check_source;
/// let src = ".version 8.0\n.target sm_90\n.entry k()\n{\n .reg .f32 %f;\n .reg .b16 %h;\n cvt.f16.f32 %h, %f;\n}\n";
/// let d = check_source(src, None, None);
/// assert_eq!((d[0].rule, d[0].span.line, d[0].span.col), ("ptx.rounding-required", 7, 2));
/// ```
pub fn check_source(
    src: &str,
    target: Option<Target>,
    version: Option<PtxVersion>,
) -> Vec<Diagnostic> {
    // The bodies are checked as they are read, so that memory does not follow the file. A
    // `.version` or `.target` after a body, or a `.reg` after a `cvt` in its block (both
    // rare), changes what applies to what was read before: then read again, keeping each
    // function whole until it ends, with the module's final target and version.
    let (file, mut checks, fine) = check_stream(src, target, version);
    if !fine {
        let t = target.or(file.target.map(|t| t.value));
        let v = version.or(file.version.map(|v| v.value));
        checks = check_whole_functions(src, t, v);
    }
    let mut all = file.diagnostics;
    all.append(&mut checks);
    let mut seen = HashSet::new();
    all.retain(|d| seen.insert(d.clone()));
    all.sort_by_key(|d| (d.span.line, d.span.col));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::parse::{parse_file, parse_instruction};

    fn regs(name: &str) -> Option<RegType> {
        let ty = name.strip_prefix('%')?.split('_').next()?;
        PtxType::from_name(ty).map(RegType::scalar)
    }

    fn run(text: &str, target: &str, version: &str) -> Vec<Diagnostic> {
        let i = parse_instruction(text).unwrap();
        check(&i, &regs, target.parse().unwrap(), version.parse().unwrap())
    }

    #[test]
    fn rules_and_positions() {
        assert!(run("cvt.rn.f16.f32 %f16_d, %f32_a;", "sm_80", "7.0").is_empty());
        let d = run("cvt.f16.f32 %f16_d, %f32_a;", "sm_80", "7.0");
        assert_eq!(d[0].rule, "ptx.rounding-required");
        let d = run("cvt.rm.relu.f16.f32 %f16_d, %f32_a;", "sm_80", "7.0");
        assert_eq!(d[0].rule, "ptx.modifier-rounding");
        assert_eq!(d[0].span.col, 7);
        let d = run("cvt.rn.satfinite.f16.f32 %f16_d, %f32_a;", "sm_80", "7.0");
        assert_eq!(d[0].rule, "ptx.version");
        assert_eq!(d[0].span.col, 7);
        let d = run("cvt.rn.f16x2.f32 %b32_d, %f32_a;", "sm_80", "7.0");
        assert_eq!(d[0].rule, "ptx.operand-count");
        let d = run("cvt.rn.f16.f32 %f16_d, %f64_a;", "sm_80", "7.0");
        assert_eq!((d[0].rule, d[0].span.col), ("ptx.register-type", 24));
        let d = run(
            "cvt.rs.f16x2.f32 %b32_d, %f32_a, %f32_b, %b32_r;",
            "sm_90",
            "8.7",
        );
        assert_eq!(d[0].rule, "ptx.target");
        assert!(run(
            "cvt.rs.f16x2.f32 %b32_d, %f32_a, %f32_b, %b32_r;",
            "sm_103a",
            "8.8"
        )
        .is_empty());
        let d = run("cvt.sat.u16.u8 %u16_d, %u8_a;", "sm_80", "7.0");
        assert_eq!(d[0].rule, "ptx.modifier-illegal");
        let d = run("cvt.rn.f32.e4m3 %f32_d, %b8_a;", "sm_90", "7.8");
        assert_eq!(d[0].rule, "ptx.types");
        let d = run("cvt.rn.f16.f32 %f16_d, %f32_a;", "sm_90", "7.0");
        assert_eq!(d[0].rule, "ptx.target-version");
    }

    #[test]
    fn other_targets() {
        let ok = |t: &str, v: &str, s: &str| run(s, t, v).is_empty();
        let e4 = "cvt.rn.satfinite.e4m3x2.f32 %b16_d, %f32_a, %f32_b;";
        assert!(!ok("sm_89", "8.0", e4) && ok("sm_89", "8.1", e4) && ok("sm_90", "7.8", e4));
        assert!(!ok("sm_88", "9.0", e4));
        let e2 = "cvt.rn.satfinite.e2m1x2.f32 %b8_d, %f32_a, %f32_b;";
        assert!(ok("sm_120a", "8.7", e2) && !ok("sm_120f", "8.7", e2) && ok("sm_120f", "8.8", e2));
        assert!(ok("sm_121a", "8.8", e2) && !ok("sm_120", "9.5", e2) && ok("sm_103f", "8.8", e2));
        let s2 = "cvt.rn.satfinite.s2f6x2.f32 %b16_d, %f32_a, %f32_b;";
        assert!(ok("sm_120a", "9.1", s2) && !ok("sm_100f", "9.5", s2));
        let ue5 = "cvt.rn.ue5m3x2.f32 %b16_d, %f32_a, %f32_b;";
        assert!(ok("sm_107f", "9.4", ue5) && !ok("sm_100a", "9.5", ue5));
        let pk = "cvt.pack.sat.u4.s32.b32 %b32_d, %s32_a, %s32_b, 0;";
        assert!(ok("sm_75", "6.5", pk) && !ok("sm_72", "6.5", pk));
        assert!(ok(
            "sm_72",
            "6.5",
            "cvt.pack.sat.u16.s32 %b32_d, %s32_a, %s32_b;"
        ));
        assert!(!ok(
            "sm_70",
            "6.5",
            "cvt.pack.sat.u16.s32 %b32_d, %s32_a, %s32_b;"
        ));
        assert!(ok("sm_10", "1.0", "cvt.rn.f32.s32 %f32_d, %s32_a;"));
        assert!(!ok("sm_12", "1.2", "cvt.rn.f64.s32 %f64_d, %s32_a;"));
        assert!(ok("sm_13", "1.2", "cvt.rn.f64.s32 %f64_d, %s32_a;"));
    }

    /// ptxas 13.5 on sm_107a (issue 41 §2): the ue5m3x2 forms from f16x2/bf16x2 take an
    /// optional `.b8` scale operand with `.rn`/`.rz` (not `.rp`), and reject a `.b16` one;
    /// `.relu`/`.pzo` and a missing rounding stay errors; `.pzo` is illegal on s2f6x2.
    #[test]
    fn ue5m3x2_optional_scale_and_s2f6x2_pzo() {
        let on = |s: &str| run(s, "sm_107a", "9.4");
        for src in ["f16x2", "bf16x2"] {
            for head in ["cvt.rn", "cvt.rn.satfinite", "cvt.rz", "cvt.rz.satfinite"] {
                let two = format!("{head}.ue5m3x2.{src} %b16_d, %b32_a;");
                let three = format!("{head}.ue5m3x2.{src} %b16_d, %b32_a, %b8_s;");
                assert!(on(&two).is_empty(), "{two}: {:?}", on(&two));
                assert!(on(&three).is_empty(), "{three}: {:?}", on(&three));
                let wide = format!("{head}.ue5m3x2.{src} %b16_d, %b32_a, %b16_s;");
                let d = on(&wide);
                assert_eq!(d.len(), 1, "{wide}: {d:?}");
                assert_eq!(d[0].rule, "ptx.register-type", "{wide}");
                assert!(d[0].message.contains("scale-factor"), "{}", d[0].message);
                let four = format!("{head}.ue5m3x2.{src} %b16_d, %b32_a, %b8_s, %b8_t;");
                assert_eq!(on(&four)[0].rule, "ptx.operand-count", "{four}");
            }
            for bad in [
                format!("cvt.rp.ue5m3x2.{src} %b16_d, %b32_a, %b8_s;"),
                format!("cvt.ue5m3x2.{src} %b16_d, %b32_a, %b8_s;"),
                format!("cvt.rn.relu.ue5m3x2.{src} %b16_d, %b32_a, %b8_s;"),
                format!("cvt.rn.pzo.ue5m3x2.{src} %b16_d, %b32_a, %b8_s;"),
            ] {
                assert!(!on(&bad).is_empty(), "{bad}");
            }
        }
        // From f32 (d, a, b) there is no optional operand.
        let d = on("cvt.rn.ue5m3x2.f32 %b16_d, %f32_a, %f32_b, %b8_s;");
        assert_eq!(d[0].rule, "ptx.operand-count");
        for bad in [
            "cvt.rn.satfinite.pzo.s2f6x2.f32 %b16_d, %f32_a, %f32_b;",
            "cvt.rn.relu.satfinite.pzo.s2f6x2.bf16x2 %b16_d, %b32_a;",
        ] {
            let d = on(bad);
            assert!(!d.is_empty(), "{bad}");
            assert!(d[0].message.contains(".pzo"), "{bad}: {}", d[0].message);
        }
        assert!(on("cvt.rn.satfinite.s2f6x2.f32 %b16_d, %f32_a, %f32_b;").is_empty());
    }

    /// The sweep's counts of distinct legal forms per target (spec §6), less the 6 `cvt.pack`
    /// forms the sweep counted twice (register and immediate `c`).
    #[test]
    fn form_counts_match_the_sweep() {
        let v = PtxVersion::LATEST;
        for (t, n) in [
            ("sm_75", 720),
            ("sm_80", 761),
            ("sm_89", 773),
            ("sm_90", 870),
            ("sm_100a", 985),
            ("sm_100f", 951),
            ("sm_103a", 985),
            // The spec's 1304 for sm_107a is a model's count, not ptxas's (the targets in
            // parentheses); ptxas 13.5 rejects the 16 `.pzo` forms of s2f6x2 it counted.
            ("sm_107a", 1288),
            ("sm_120a", 967),
            ("sm_120f", 951),
        ] {
            let forms = legal_forms(t.parse().unwrap(), v);
            // The sweep never combined `.sat` with `.pzo` nor tried `.rna` with `.pzo`…
            assert_eq!(forms.len() + 6, n, "{t}");
        }
    }

    /// An `a` target has every feature of its base and `f` targets; forms legal on a target
    /// are legal somewhere; newer versions never lose forms.
    #[test]
    fn target_variants_are_supersets() {
        let v = PtxVersion::LATEST;
        // The older targets share one feature set (nothing new after PTX 6.5 reaches them).
        for t in Target::all().filter(|t| t.arch() >= 72) {
            let forms: HashSet<CvtForm> = legal_forms(t, t.max_version()).into_iter().collect();
            assert!(forms.iter().all(legal_somewhere), "{t}");
            if let Some(a) = Target::new(t.arch(), crate::ptx::target::Variant::Arch) {
                if a.max_version() >= v {
                    let fa: HashSet<CvtForm> = legal_forms(a, v).into_iter().collect();
                    let ft: HashSet<CvtForm> = legal_forms(t, v).into_iter().collect();
                    assert!(ft.is_subset(&fa), "{t} ⊄ {a}");
                }
            }
            let mut prev = 0;
            // The versions where features appear.
            let steps = [
                (7, 0),
                (7, 1),
                (7, 8),
                (8, 1),
                (8, 6),
                (8, 7),
                (8, 8),
                (9, 1),
                (9, 2),
            ];
            let versions = core::iter::once(t.min_version())
                .chain(steps.iter().map(|&(a, b)| ver(a, b)))
                .chain([ver(9, 4), ver(9, 5)])
                .filter(|x| *x >= t.min_version() && *x <= t.max_version());
            for ver in versions {
                let n = legal_forms(t, ver).len();
                assert!(n >= prev, "{t} {ver}");
                prev = n;
            }
        }
    }

    /// The hashed scope lookup and clash search agree with comparing every pair.
    #[test]
    fn hashed_names_match_pairwise_comparison() {
        let pool = [
            ("%r", None),
            ("%r", Some(3)),
            ("%r", Some(13)),
            ("%r1", None),
            ("%r12", None),
            ("%r1", Some(3)),
            ("%r01", None),
            ("%r0", None),
            ("%r2", Some(1)),
            ("%f", Some(2)),
            ("%f1", None),
            ("x", None),
        ];
        let probes = [
            "%r", "%r0", "%r1", "%r2", "%r12", "%r10", "%r01", "%f1", "%f2", "x", "y",
        ];
        let mut seed = 7u64;
        for _ in 0..3000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = (seed >> 60) as usize % 6 + 1;
            let decls: Vec<RegDecl> = (0..n)
                .map(|k| {
                    let (name, count) = pool[(seed >> (k * 8)) as usize % pool.len()];
                    RegDecl {
                        ty: if k % 2 == 0 { B32 } else { F32 },
                        lanes: 1,
                        names: vec![RegName {
                            name: name.to_string(),
                            count,
                            span: Span::default(),
                        }],
                        span: Span::default(),
                        type_span: Span::default(),
                        vector_span: None,
                    }
                })
                .collect();
            let names: Vec<&RegName> = decls.iter().flat_map(|d| &d.names).collect();
            let mut finder = ClashFinder::default();
            for (i, n) in names.iter().enumerate() {
                let want = names[..i].iter().find(|m| match (m.count, n.count) {
                    (None, None) | (Some(_), Some(_)) => m.name == n.name,
                    (Some(_), None) => m.declares(&n.name),
                    (None, Some(_)) => n.declares(&m.name),
                });
                let got = finder.add(n);
                assert_eq!(
                    got.map(|m| m as *const RegName),
                    want.map(|m| *m as *const RegName)
                );
            }
            let block = BlockRegs::new(&decls);
            for p in probes {
                let want = decls
                    .iter()
                    .rev()
                    .find(|d| d.names.iter().any(|n| n.declares(p)))
                    .map(|d| d.reg_type());
                assert_eq!(block.lookup(p), want, "{p} in {decls:?}");
            }
        }
    }

    #[test]
    fn files() {
        let src = "\
.version 8.6
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 p, .param .f32 x)
{
    .reg .pred %p<2>;
    .reg .f32 %f<4>;
    .reg .b16 %h<2>;
    .reg .v4 .f32 %v;
    .reg .v4 .f64 %bad;
    .reg .bf16 %nope;
    .reg .b32 %f1;
    $L__BB0_1:
    mov.f32 %f0, 0f3F800000;
    @%p1 cvt.rn.satfinite.e4m3x2.f32 %h0, %f0, %v.y;
    {
        .reg .b32 %r;
        cvt.rn.relu.f16.f32 %h1, %f2;
        cvt.rn.f16.f32 %r, %q;
    }
    add.f32 %f1, %f2, %f3;
    bra $L__BB0_1;
}
";
        let file = parse_file(src);
        assert!(file.diagnostics.is_empty(), "{:?}", file.diagnostics);
        let d = check_file(&file, None, None);
        let rules: Vec<&str> = d.iter().map(|d| d.rule).collect();
        assert_eq!(
            rules,
            [
                "ptx.reg-vector",
                "ptx.reg-type",
                "ptx.reg-duplicate",
                "ptx.register-undeclared"
            ],
            "{d:?}"
        );
        assert_eq!(d[3].span.line, 19);
        let d = check_file(&file, Some("sm_75".parse().unwrap()), Some(ver(7, 0)));
        assert!(d.iter().any(|d| d.rule == "ptx.target"), "{d:?}");
    }

    /// What `check_source` returned when it held the whole parse tree.
    fn check_whole_tree(
        src: &str,
        target: Option<Target>,
        version: Option<PtxVersion>,
    ) -> Vec<Diagnostic> {
        let file = parse_file(src);
        let mut all = file.diagnostics.clone();
        all.extend(check_file(&file, target, version));
        let mut seen = HashSet::new();
        all.retain(|d| seen.insert(d.clone()));
        all.sort_by_key(|d| (d.span.line, d.span.col));
        all
    }

    #[test]
    fn streaming_check_matches_the_whole_tree() {
        let body = |name: &str| {
            format!(
                ".visible .entry {name}()\n{{\n .reg .f32 %f<4>;\n .reg .b16 %h<2>;\n \
                 .reg .b128 %q;\n L1: mov.f32 %f1, 0f3F800000;\n \
                 cvt.rn.satfinite.e4m3x2.f32 %h0, %f1, %f2;\n cvt.f16.f32 %h1, %f1;\n \
                 {{ .reg .b32 %r; cvt.rn.f16.f32 %r, %f3; cvt.rn.f16 %h1; }}\n \
                 add.f32 %f1, %f2, %f3 bra L1;\n}}\n"
            )
        };
        let sources = [
            // Directives first, as compilers write them.
            format!(".version 8.0\n.target sm_90\n{}{}", body("a"), body("b")),
            // A `.target` after the first body applies to it too (the module's last).
            format!(".version 7.0\n{}.target sm_80\n{}", body("a"), body("b")),
            format!(
                ".version 7.8\n.target sm_90\n{}.version 8.3\n.target sm_80\n{}",
                body("a"),
                body("b")
            ),
            // None at all, or only at the end.
            format!("{}{}", body("a"), body("b")),
            format!("{}.target sm_90 .version 8.0\n", body("a")),
            // Declarations after a cvt they apply to: in its block (a second declaration of
            // a name is the one that counts), in an enclosing block after a nested block.
            format!(
                ".version 8.0\n.target sm_90\n{}.entry c()\n{{\n .reg .f32 %f;\n \
                 cvt.rn.f16.f32 %h, %f;\n .reg .b16 %h;\n .reg .f64 %f;\n}}\n",
                body("a")
            ),
            format!(
                ".version 8.0\n.target sm_90\n.entry c()\n{{\n .reg .f32 %f;\n \
                 {{ .reg .b32 %h; cvt.rn.f16.f32 %h, %f; }}\n .reg .b16 %h;\n \
                 cvt.rn.f16.f32 %h, %f;\n}}\n{}",
                body("b")
            ),
            // `.reg` parameters are declarations of the body.
            ".version 8.0\n.target sm_90\n.func (.reg .b16 r) f(.reg .f32 x, .reg .b16 x)\n\
             {\n .reg .f32 %g;\n cvt.rn.f16.f32 r, x;\n cvt.rn.f16.f32 r, %g;\n \
             cvt.rn.f32.f16 %g, r;\n}\n"
                .to_string(),
        ];
        let t90: Target = "sm_90".parse().unwrap();
        for (k, src) in sources.iter().enumerate() {
            for (t, v) in [(None, None), (Some(t90), None), (None, Some(ver(8, 2)))] {
                let streamed = check_source(src, t, v);
                assert!(!streamed.is_empty());
                assert_eq!(streamed, check_whole_tree(src, t, v), "{src}");
            }
            // Which sources the first pass alone answers (its results are final).
            let fine = check_stream(src, None, None).2;
            assert_eq!(fine, [0, 3, 7].contains(&k), "{k}: {src}");
        }
        // The late `.target` applies to the first body: its cvts are checked.
        let d = check_source(&sources[1], None, None);
        assert!(
            d.iter()
                .any(|d| (d.rule, d.span.line) == ("ptx.rounding-required", 9)),
            "{d:?}"
        );
        for path in [
            "../../examples/ptx/mistakes.ptx",
            "../../examples/ptx/quantize_fp8.ptx",
        ] {
            let src = std::fs::read_to_string(path).unwrap();
            assert_eq!(
                check_source(&src, None, None),
                check_whole_tree(&src, None, None)
            );
        }
    }
}
