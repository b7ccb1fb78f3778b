//! The PTX ISA's conversion tables (Tables 15 and 16 of §6.5.1, "Convert Instruction
//! Precision and Format"), computed from the legality rules: a cell names the conversion
//! method when some legal `cvt` converts a value of the row's format to the column's format
//! (on a given target, or on some target), and is `–` otherwise.
//!
//! A pair is converted by a form when the form's source lane type is the row and its
//! destination lane type is the column: `cvt.rn.satfinite.e4m3x2.f32` converts f32 → e4m3,
//! `cvt.rn.f16x2.e4m3x2` e4m3 → f16. `cvt.pack` (integer packing) is not part of the tables.
//!
//! Methods: `sext`/`zext` (wider integer, by the source's signedness), `chop` (narrower
//! integer), `s2f`, `u2f`, `f2s`, `f2u`, `f2f`. A type converted to itself is `–` (no change
//! of format; `cvt.rni.f32.f32` rounds to an integral value) except for `bf16`, whose
//! `cvt.bf16.bf16` the ISA lists as `f2f`, and integer types of the same width are `–` (the
//! bits are kept).
//!
//! ```
//! use gpucvt::ptx::{table::{method_table, TABLE_15_TYPES}, PtxType};
//! let t = method_table(&TABLE_15_TYPES, &TABLE_15_TYPES, Some("sm_90".parse().unwrap()));
//! let cell = |s: PtxType, d: PtxType| {
//!     let i = TABLE_15_TYPES.iter().position(|&x| x == s).unwrap();
//!     let j = TABLE_15_TYPES.iter().position(|&x| x == d).unwrap();
//!     t[i][j]
//! };
//! assert_eq!(cell(PtxType::S16, PtxType::S8), "chop");
//! assert_eq!(cell(PtxType::U8, PtxType::S32), "zext");
//! assert_eq!(cell(PtxType::F32, PtxType::Tf32), "f2f");
//! assert_eq!(cell(PtxType::Tf32, PtxType::F32), "–");
//! ```

use super::check::legal_forms;
use super::target::Target;
use super::types::{Kind, PtxType};
use std::collections::BTreeSet;

use PtxType::*;

/// The rows and columns of Table 15: the integer and the classic float types.
pub const TABLE_15_TYPES: [PtxType; 13] = [
    S8, S16, S32, S64, U8, U16, U32, U64, F16, F32, F64, Bf16, Tf32,
];

/// The rows and columns of Table 16: the ISA's alternate floating-point formats (f16 … ue8m0),
/// then the two the implementation also converts, `ue5m3` and `s2f6` (newer than the table).
pub const TABLE_16_TYPES: [PtxType; 11] = [
    F16, F32, Bf16, E4m3, E5m2, E2m3, E3m2, E2m1, Ue8m0, Ue5m3, S2f6,
];

/// The scalar type of one lane of `t` (`e4m3x2` → `e4m3`; scalars are themselves).
pub fn lane_type(t: PtxType) -> Option<PtxType> {
    if t.lanes() == 1 && t.kind() != Kind::Packed {
        return Some(t);
    }
    t.lane_format().and_then(|f| PtxType::from_name(f.name))
}

/// Every (source, destination) lane-type pair some legal `cvt` converts, on `target` at its
/// newest PTX version, or on any target when `target` is `None`.
pub fn converted_pairs(target: Option<Target>) -> BTreeSet<(PtxType, PtxType)> {
    let targets: Vec<Target> = match target {
        Some(t) => vec![t],
        None => Target::all().collect(),
    };
    let mut out = BTreeSet::new();
    for t in targets {
        for f in legal_forms(t, t.max_version()) {
            if f.pack {
                continue;
            }
            if let (Some(a), Some(d)) = (lane_type(f.atype), lane_type(f.dtype)) {
                out.insert((a, d));
            }
        }
    }
    out
}

/// The method of converting `src` to `dst` (see the module documentation), whether or not a
/// form exists.
pub fn method(src: PtxType, dst: PtxType) -> &'static str {
    let int = |t: PtxType| matches!(t.kind(), Kind::Signed | Kind::Unsigned);
    let signed = |t: PtxType| t.kind() == Kind::Signed;
    match (int(src), int(dst)) {
        (true, true) => {
            if dst.bits() < src.bits() {
                "chop"
            } else if dst.bits() == src.bits() {
                "–"
            } else if signed(src) {
                "sext"
            } else {
                "zext"
            }
        }
        (true, false) => {
            if signed(src) {
                "s2f"
            } else {
                "u2f"
            }
        }
        (false, true) => {
            if signed(dst) {
                "f2s"
            } else {
                "f2u"
            }
        }
        (false, false) if src == dst && src != Bf16 => "–",
        (false, false) => "f2f",
    }
}

/// The table over `rows` × `cols`: the method where some legal form converts the pair (see
/// [`converted_pairs`]), `–` elsewhere.
pub fn method_table(
    rows: &[PtxType],
    cols: &[PtxType],
    target: Option<Target>,
) -> Vec<Vec<&'static str>> {
    let pairs = converted_pairs(target);
    rows.iter()
        .map(|&s| {
            cols.iter()
                .map(|&d| {
                    if pairs.contains(&(s, d)) {
                        method(s, d)
                    } else {
                        "–"
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods() {
        assert_eq!(method(S64, U8), "chop");
        assert_eq!(method(S8, U64), "sext");
        assert_eq!(method(U16, S16), "–");
        assert_eq!(method(Bf16, Bf16), "f2f");
        assert_eq!(method(F16, F16), "–");
        assert_eq!(method(F64, U8), "f2u");
        assert_eq!(lane_type(E2m1x2), Some(E2m1));
        assert_eq!(lane_type(F16x2), Some(F16));
    }

    #[test]
    fn fp8_needs_sm_89() {
        let old = converted_pairs(Some("sm_80".parse().unwrap()));
        let new = converted_pairs(Some("sm_89".parse().unwrap()));
        assert!(!old.contains(&(F32, E4m3)));
        assert!(new.contains(&(F32, E4m3)));
    }
}
