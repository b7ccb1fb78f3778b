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
const TABLE: &[(PtxType, &str, u32, Kind, Option<Format>, u32)] = &[
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
];

impl PtxType {
    fn row(self) -> &'static (PtxType, &'static str, u32, Kind, Option<Format>, u32) {
        TABLE
            .iter()
            .find(|r| r.0 == self)
            .expect("every PtxType has a row")
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
    pub fn bits(self) -> u32 {
        self.row().2
    }

    /// The basic kind.
    pub fn kind(self) -> Kind {
        self.row().3
    }

    /// The format of one lane (`None` for `.bN` and `.pred`).
    pub fn lane_format(self) -> Option<Format> {
        self.row().4
    }

    /// Number of lanes (1 for scalars).
    pub fn lanes(self) -> u32 {
        self.row().5
    }

    /// Width of one lane's slot in the packed register (8 for `e2m3x2`, whose values are 6
    /// bits wide; 4 for `e2m1x2`).
    pub fn lane_bits(self) -> u32 {
        self.bits() / self.lanes()
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
