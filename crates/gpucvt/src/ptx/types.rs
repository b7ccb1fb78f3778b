//! PTX types: fundamental, alternate and packed (PTX ISA §5.2), as data.

use gpucvt_core::format::{self, Format};

/// Every PTX type name that can appear as an instruction type or a register type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum PtxType {
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    B8,
    B16,
    B32,
    B64,
    B128,
    F16,
    F16x2,
    F32,
    F64,
    Pred,
    Bf16,
    Bf16x2,
    Tf32,
    F32x2,
    U16x2,
    S16x2,
    E4m3,
    E5m2,
    E2m3,
    E3m2,
    E2m1,
    Ue8m0,
    Ue4m3,
    Ue5m3,
    S2f6,
    E4m3x2,
    E5m2x2,
    E2m3x2,
    E3m2x2,
    E2m1x2,
    Ue8m0x2,
    Ue5m3x2,
    S2f6x2,
    E4m3x4,
    E5m2x4,
    E2m3x4,
    E3m2x4,
    E2m1x4,
    U4,
    S4,
    U2,
    S2,
}

/// The basic kind of a PTX type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `.sN`
    Signed,
    /// `.uN`
    Unsigned,
    /// `.bN`
    Bits,
    /// `.f16 .f32 .f64 .bf16 .tf32` and the scalar alternate formats.
    Float,
    /// Packed types: two or four lanes in one register.
    Packed,
    /// `.pred`
    Pred,
}

use PtxType::*;

/// `(type, name, bits, kind, lane format, lanes)`
type Row = (PtxType, &'static str, u32, Kind, Option<Format>, u32);

const TABLE: &[Row] = &[
    (S8, "s8", 8, Kind::Signed, Some(format::S8), 1),
    (S16, "s16", 16, Kind::Signed, Some(format::S16), 1),
    (S32, "s32", 32, Kind::Signed, Some(format::S32), 1),
    (S64, "s64", 64, Kind::Signed, Some(format::S64), 1),
    (U8, "u8", 8, Kind::Unsigned, Some(format::U8), 1),
    (U16, "u16", 16, Kind::Unsigned, Some(format::U16), 1),
    (U32, "u32", 32, Kind::Unsigned, Some(format::U32), 1),
    (U64, "u64", 64, Kind::Unsigned, Some(format::U64), 1),
    (B8, "b8", 8, Kind::Bits, None, 1),
    (B16, "b16", 16, Kind::Bits, None, 1),
    (B32, "b32", 32, Kind::Bits, None, 1),
    (B64, "b64", 64, Kind::Bits, None, 1),
    (B128, "b128", 128, Kind::Bits, None, 1),
    (F16, "f16", 16, Kind::Float, Some(format::F16), 1),
    (F16x2, "f16x2", 32, Kind::Packed, Some(format::F16), 2),
    (F32, "f32", 32, Kind::Float, Some(format::F32), 1),
    (F64, "f64", 64, Kind::Float, Some(format::F64), 1),
    (Pred, "pred", 1, Kind::Pred, None, 1),
    (Bf16, "bf16", 16, Kind::Float, Some(format::BF16), 1),
    (Bf16x2, "bf16x2", 32, Kind::Packed, Some(format::BF16), 2),
    (Tf32, "tf32", 32, Kind::Float, Some(format::TF32), 1),
    (F32x2, "f32x2", 64, Kind::Packed, Some(format::F32), 2),
    (U16x2, "u16x2", 32, Kind::Packed, Some(format::U16), 2),
    (S16x2, "s16x2", 32, Kind::Packed, Some(format::S16), 2),
    (E4m3, "e4m3", 8, Kind::Float, Some(format::E4M3), 1),
    (E5m2, "e5m2", 8, Kind::Float, Some(format::E5M2), 1),
    (E2m3, "e2m3", 8, Kind::Float, Some(format::E2M3), 1),
    (E3m2, "e3m2", 8, Kind::Float, Some(format::E3M2), 1),
    (E2m1, "e2m1", 4, Kind::Float, Some(format::E2M1), 1),
    (Ue8m0, "ue8m0", 8, Kind::Float, Some(format::UE8M0), 1),
    (Ue4m3, "ue4m3", 8, Kind::Float, Some(format::UE4M3), 1),
    (Ue5m3, "ue5m3", 8, Kind::Float, Some(format::UE5M3), 1),
    (S2f6, "s2f6", 8, Kind::Float, Some(format::S2F6), 1),
    (E4m3x2, "e4m3x2", 16, Kind::Packed, Some(format::E4M3), 2),
    (E5m2x2, "e5m2x2", 16, Kind::Packed, Some(format::E5M2), 2),
    (E2m3x2, "e2m3x2", 16, Kind::Packed, Some(format::E2M3), 2),
    (E3m2x2, "e3m2x2", 16, Kind::Packed, Some(format::E3M2), 2),
    (E2m1x2, "e2m1x2", 8, Kind::Packed, Some(format::E2M1), 2),
    (Ue8m0x2, "ue8m0x2", 16, Kind::Packed, Some(format::UE8M0), 2),
    (Ue5m3x2, "ue5m3x2", 16, Kind::Packed, Some(format::UE5M3), 2),
    (S2f6x2, "s2f6x2", 16, Kind::Packed, Some(format::S2F6), 2),
    (E4m3x4, "e4m3x4", 32, Kind::Packed, Some(format::E4M3), 4),
    (E5m2x4, "e5m2x4", 32, Kind::Packed, Some(format::E5M2), 4),
    (E2m3x4, "e2m3x4", 32, Kind::Packed, Some(format::E2M3), 4),
    (E3m2x4, "e3m2x4", 32, Kind::Packed, Some(format::E3M2), 4),
    (E2m1x4, "e2m1x4", 16, Kind::Packed, Some(format::E2M1), 4),
    // Sub-byte integer types: only `cvt.pack`'s convert types.
    (U4, "u4", 4, Kind::Unsigned, Some(format::U4), 1),
    (S4, "s4", 4, Kind::Signed, Some(format::S4), 1),
    (U2, "u2", 2, Kind::Unsigned, Some(format::U2), 1),
    (S2, "s2", 2, Kind::Signed, Some(format::S2), 1),
];

impl PtxType {
    #[inline]
    fn row(self) -> &'static Row {
        // The table is in declaration order; fall back to a search if it ever is not.
        match TABLE.get(self as usize) {
            Some(r) if r.0 == self => r,
            _ => TABLE
                .iter()
                .find(|r| r.0 == self)
                .expect("every PtxType has a row"),
        }
    }

    /// Every type.
    pub fn all() -> impl Iterator<Item = PtxType> {
        TABLE.iter().map(|r| r.0)
    }

    /// The name without the leading dot (`f16x2`).
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// Looks a type up by name, with or without the leading dot.
    pub fn from_name(name: &str) -> Option<PtxType> {
        let name = name.strip_prefix('.').unwrap_or(name);
        TABLE.iter().find(|r| r.1 == name).map(|r| r.0)
    }

    /// Width in bits of a value of this type (the whole packed register for packed types).
    #[inline]
    pub fn bits(self) -> u32 {
        self.row().2
    }

    /// The basic kind.
    #[inline]
    pub fn kind(self) -> Kind {
        self.row().3
    }

    /// The format of one lane (`None` for `.bN` and `.pred`).
    #[inline]
    pub fn lane_format(self) -> Option<Format> {
        self.row().4
    }

    /// Number of lanes (1 for scalars).
    #[inline]
    pub fn lanes(self) -> u32 {
        self.row().5
    }

    /// Width of one lane's slot in the packed register (8 for `e2m3x2`, whose values are 6
    /// bits wide; 4 for `e2m1x2`).
    #[inline]
    pub fn lane_bits(self) -> u32 {
        self.bits() / self.lanes()
    }
}

impl PtxType {
    /// Whether this is an integer type (`.uN`/`.sN`, including `cvt.pack`'s `.u2 … .s4`).
    pub fn is_int(self) -> bool {
        matches!(self.kind(), Kind::Signed | Kind::Unsigned)
    }

    /// Whether this is a bit-size type (`.bN`).
    pub fn is_bits(self) -> bool {
        self.kind() == Kind::Bits
    }

    /// Whether this is a sub-word type whose use PTX restricts (ISA §5.2.1: "the `.u8`,
    /// `.s8` and `.b8` instruction types are restricted to `ld`, `st` and `cvt`
    /// instructions"). `cvt` takes them as instruction types, and 8-bit registers as operands
    /// of any integer type of at most 8 bits.
    pub fn is_restricted_sub_word(self) -> bool {
        matches!(self, PtxType::U8 | PtxType::S8 | PtxType::B8)
    }

    /// Whether a register can be declared with this type (`.reg .f16x2 %h;`): the fundamental
    /// types of PTX ISA §5.2.1. The alternate formats (`.bf16`, `.tf32`, `.e4m3`, …) and the
    /// other packed types are instruction types only; their values live in `.bN` registers.
    pub fn is_register_type(self) -> bool {
        use PtxType::*;
        matches!(
            self,
            S8 | S16
                | S32
                | S64
                | U8
                | U16
                | U32
                | U64
                | B8
                | B16
                | B32
                | B64
                | B128
                | F16
                | F16x2
                | F32
                | F64
                | Pred
        )
    }
}

/// PTX's type-checking rule for an operand whose register has the same size as the instruction
/// type (PTX ISA §9.4.1, Table 27): the same type; signed and unsigned integers of the same
/// size; a bit-size type with any register of its size, and a bit-size register with any
/// instruction type of its size; `.f16x2` with `.b32`.
///
/// ```
/// use gpucvt::ptx::types::{same_size_compatible, PtxType::*};
/// assert!(same_size_compatible(S32, U32));
/// assert!(same_size_compatible(B16, F16) && same_size_compatible(F16, B16));
/// assert!(!same_size_compatible(F32, S32));
/// assert!(!same_size_compatible(F32, F16x2));
/// assert!(!same_size_compatible(U16, U32));
/// ```
pub fn same_size_compatible(instr: PtxType, reg: PtxType) -> bool {
    if instr == reg {
        return true;
    }
    if instr.bits() != reg.bits() || instr == PtxType::Pred || reg == PtxType::Pred {
        return false;
    }
    instr.is_bits() || reg.is_bits() || (instr.is_int() && reg.is_int())
}

/// The relaxed rule for an operand held in a register wider than the instruction type (PTX ISA
/// §9.4.1, Table 28, and the `cvt` notes of §4.15): integer and bit-size instruction types take
/// any integer or bit-size register at least as wide; floating-point instruction types take
/// their own type or any bit-size register at least as wide. Registers narrower than the
/// instruction type never fit.
///
/// ```
/// use gpucvt::ptx::types::{wide_compatible, PtxType::*};
/// assert!(wide_compatible(U8, S32) && wide_compatible(F16, B64));
/// assert!(!wide_compatible(F16, F32) && !wide_compatible(U32, U16));
/// ```
pub fn wide_compatible(instr: PtxType, reg: PtxType) -> bool {
    if instr == reg {
        return true;
    }
    if reg.bits() < instr.bits() || instr == PtxType::Pred || reg == PtxType::Pred {
        return false;
    }
    if instr.is_int() || instr.is_bits() {
        reg.is_int() || reg.is_bits()
    } else {
        reg.is_bits()
    }
}

/// The type of a declared register: a scalar, or a `.v2`/`.v4` vector of scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegType {
    /// The element type.
    pub ty: PtxType,
    /// 1 for a scalar, 2 or 4 for `.v2`/`.v4`.
    pub lanes: u8,
}

impl RegType {
    /// A scalar register of type `ty`.
    pub const fn scalar(ty: PtxType) -> RegType {
        RegType { ty, lanes: 1 }
    }

    /// Whether this is a vector register.
    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }

    /// Total width in bits.
    pub fn bits(self) -> u32 {
        self.ty.bits() * u32::from(self.lanes)
    }
}

impl core::fmt::Display for RegType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.lanes > 1 {
            write!(f, ".v{} ", self.lanes)?;
        }
        write!(f, ".{}", self.ty.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in PtxType::all() {
            assert_eq!(PtxType::from_name(t.name()), Some(t));
            assert_eq!(PtxType::from_name(&format!(".{}", t.name())), Some(t));
            if let Some(f) = t.lane_format() {
                assert!(f.width() <= t.lane_bits() || t == PtxType::Tf32, "{t:?}");
            }
        }
    }
}
