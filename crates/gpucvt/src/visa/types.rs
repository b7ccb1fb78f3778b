//! vISA data types (`visa.md` §1) and the packed immediates V, UV and VF (§4).
//!
//! Each type is data: its binary code (`VISA_Type`), its text name, its size and the core
//! [`Format`] of one element. The packed immediate types hold several elements in one dword;
//! [`unpack`] splits such a dword into its element encodings.
//!
//! ```
//! use gpucvt::visa::types::{unpack_v, unpack_vf, VisaType};
//! assert_eq!(VisaType::from_name("HF"), Some(VisaType::Hf));
//! assert_eq!(VisaType::Hf.code(), 0xE);
//! assert_eq!(VisaType::from_code(0x9), Some(VisaType::Vf));
//! assert_eq!(unpack_v(0x76543210), [0, 1, 2, 3, 4, 5, 6, 7]);
//! assert_eq!(unpack_v(0x0000_00f8), [-8, -1, 0, 0, 0, 0, 0, 0]);
//! // VF 0x30 = 1.0, 0x38 = 1.5, 0x80 = -0.0, 0x7f = 31.0, expanded to f32 bit patterns.
//! assert_eq!(unpack_vf(0x7f80_3830), [0x3f80_0000, 0x3fc0_0000, 0x8000_0000, 0x41f8_0000]);
//! ```

use core::fmt;
use gpucvt_core::format::{self, Format};

/// The vISA data types of the seed's table, with their binary codes (`VISA_Type` in
/// `visa_igc_common_header.h`).
///
/// The code-only types of IGC (`tf32` 0x10, `hf8` 0x11, `bf8` 0x12, `e2m1` 0x13) are not part
/// of the documented type system; [`VisaType::from_name`] does not accept them, and the
/// reader reports them as outside the modelled subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VisaType {
    /// Unsigned double word, u32 (code 0x0).
    Ud,
    /// Signed double word, i32 (0x1).
    D,
    /// Unsigned word, u16 (0x2).
    Uw,
    /// Signed word, i16 (0x3).
    W,
    /// Unsigned byte, u8 (0x4).
    Ub,
    /// Signed byte, i8 (0x5).
    B,
    /// binary64 (0x6).
    Df,
    /// binary32 (0x7).
    F,
    /// Eight signed 4-bit integers packed in a dword; immediates only (0x8).
    V,
    /// Four 8-bit restricted floats packed in a dword; immediates only (0x9).
    Vf,
    /// One-bit predicate element; predicate variables only (0xA).
    Bool,
    /// Unsigned quad word, u64 (0xB).
    Uq,
    /// Eight unsigned 4-bit integers packed in a dword; immediates only (0xC).
    Uv,
    /// Signed quad word, i64 (0xD).
    Q,
    /// binary16 (0xE).
    Hf,
    /// bfloat16, 1-8-7 (0xF; XeHP and later).
    Bf,
}

use VisaType::*;

/// What kind of values a type holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// A signed integer (D, W, B, Q, and the packed V).
    Signed,
    /// An unsigned integer (UD, UW, UB, UQ, and the packed UV).
    Unsigned,
    /// A floating-point type (DF, F, HF, BF, and the packed VF).
    Float,
    /// The predicate element type.
    Bool,
}

/// `(type, code, text name, size in bytes, element format, elements per dword for packed
/// types, kind)`. The size of BOOL is given as one byte; it is one bit.
type Row = (VisaType, u8, &'static str, u32, Format, u32, TypeKind);

const TABLE: &[Row] = &[
    (Ud, 0x0, "ud", 4, format::U32, 1, TypeKind::Unsigned),
    (D, 0x1, "d", 4, format::S32, 1, TypeKind::Signed),
    (Uw, 0x2, "uw", 2, format::U16, 1, TypeKind::Unsigned),
    (W, 0x3, "w", 2, format::S16, 1, TypeKind::Signed),
    (Ub, 0x4, "ub", 1, format::U8, 1, TypeKind::Unsigned),
    (B, 0x5, "b", 1, format::S8, 1, TypeKind::Signed),
    (Df, 0x6, "df", 8, format::F64, 1, TypeKind::Float),
    (F, 0x7, "f", 4, format::F32, 1, TypeKind::Float),
    (V, 0x8, "v", 4, format::S4, 8, TypeKind::Signed),
    (Vf, 0x9, "vf", 4, format::VF, 4, TypeKind::Float),
    (Bool, 0xA, "bool", 1, format::U1, 1, TypeKind::Bool),
    (Uq, 0xB, "uq", 8, format::U64, 1, TypeKind::Unsigned),
    (Uv, 0xC, "uv", 4, format::U4, 8, TypeKind::Unsigned),
    (Q, 0xD, "q", 8, format::S64, 1, TypeKind::Signed),
    (Hf, 0xE, "hf", 2, format::F16, 1, TypeKind::Float),
    (Bf, 0xF, "bf", 2, format::BF16, 1, TypeKind::Float),
];

/// IGC's type names that exist in code but not in the documented type system.
pub const CODE_ONLY_NAMES: &[&str] = &["tf32", "hf8", "bf8", "e2m1"];

impl VisaType {
    /// Every type, in code order.
    pub const ALL: [VisaType; 16] = [Ud, D, Uw, W, Ub, B, Df, F, V, Vf, Bool, Uq, Uv, Q, Hf, Bf];

    fn row(self) -> &'static Row {
        // The table is in code order and complete, so the code indexes it.
        &TABLE[self as usize]
    }

    /// The binary code (`VISA_Type`).
    pub fn code(self) -> u8 {
        self.row().1
    }

    /// The type with a binary code.
    pub fn from_code(code: u8) -> Option<VisaType> {
        TABLE.iter().find(|r| r.1 == code).map(|r| r.0)
    }

    /// The lower-case text name (`ud`, `hf`, …).
    pub fn name(self) -> &'static str {
        self.row().2
    }

    /// The upper-case name the documentation uses (`UD`, `HF`, …).
    pub fn doc_name(self) -> String {
        self.name().to_ascii_uppercase()
    }

    /// Looks a type up by its text name; upper or lower case, as the assembler accepts.
    pub fn from_name(name: &str) -> Option<VisaType> {
        TABLE
            .iter()
            .find(|r| r.2.eq_ignore_ascii_case(name))
            .map(|r| r.0)
    }

    /// Size in bytes of one operand element (a whole dword for the packed types; BOOL is
    /// given as 1 although a predicate element is one bit).
    pub fn size(self) -> u32 {
        self.row().3
    }

    /// The core format of one element: `s4`/`u4` for V/UV, `vf` for VF, `u1` for BOOL.
    pub fn element_format(self) -> Format {
        self.row().4
    }

    /// Number of elements packed in one immediate dword (8 for V and UV, 4 for VF, else 1).
    pub fn packed_elements(self) -> u32 {
        self.row().5
    }

    /// Whether this is one of the packed immediate types V, UV, VF.
    pub fn is_packed(self) -> bool {
        self.packed_elements() > 1
    }

    /// What kind of values the type holds.
    pub fn kind(self) -> TypeKind {
        self.row().6
    }

    /// Whether the type is a float type (DF, F, HF, BF, or the packed VF).
    pub fn is_float(self) -> bool {
        self.kind() == TypeKind::Float
    }

    /// Whether the type is an integer type (including the packed V and UV, excluding BOOL).
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), TypeKind::Signed | TypeKind::Unsigned)
    }

    /// Whether the type is a signed integer type.
    pub fn is_signed_integer(self) -> bool {
        self.kind() == TypeKind::Signed
    }

    /// Whether a general (`v_type=G`) variable may have this type: every type but the
    /// packed immediates and BOOL.
    pub fn is_variable_type(self) -> bool {
        !self.is_packed() && self != Bool
    }

    /// Width in bits of one element (4 for V/UV, 8 for VF, 1 for BOOL).
    pub fn element_bits(self) -> u32 {
        self.element_format().width()
    }

    /// The seed's description of the type.
    pub fn description(self) -> &'static str {
        match self {
            Ud => "unsigned double word",
            D => "signed double word",
            Uw => "unsigned word",
            W => "signed word",
            Ub => "unsigned byte",
            B => "signed byte",
            Df => "double precision floating point",
            F => "single precision floating point",
            V => "packed integer vector (8 x signed 4-bit)",
            Vf => "packed floating vector (4 x 8-bit restricted float)",
            Bool => "boolean",
            Uq => "unsigned quad word",
            Uv => "packed unsigned integer vector (8 x unsigned 4-bit)",
            Q => "signed quad word",
            Hf => "half precision floating point",
            Bf => "bfloat16",
        }
    }

    /// The range of the type as text, with the seed's errors corrected (`visa.md` §1: HF's
    /// smallest subnormal is 2^-24, BF's 2^-133, VF's smallest non-zero magnitude
    /// 0.1328125).
    pub fn range_text(self) -> &'static str {
        match self {
            Ud => "[0, 2^32-1]",
            D => "[-2^31, 2^31-1]",
            Uw => "[0, 65535]",
            W => "[-32768, 32767]",
            Ub => "[0, 255]",
            B => "[-128, 127]",
            Df => "±[2^-1074, (2-2^-52)x2^1023], ±0, ±inf, NaN",
            F => "±[2^-149, (2-2^-23)x2^127], ±0, ±inf, NaN",
            V => "[-8, 7] per element",
            Vf => "±[0.1328125, 31], ±0 per element (no inf, NaN or subnormals)",
            Bool => "[0, 1]",
            Uq => "[0, 2^64-1]",
            Uv => "[0, 15] per element",
            Q => "[-2^63, 2^63-1]",
            Hf => "±[2^-24, 65504], ±0, ±inf, NaN",
            Bf => "±[2^-133, (2-2^-7)x2^127], ±0, ±inf, NaN",
        }
    }
}

impl fmt::Display for VisaType {
    /// The upper-case documentation name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.name().chars() {
            write!(f, "{}", c.to_ascii_uppercase())?;
        }
        Ok(())
    }
}

/// Splits a V immediate into its eight signed 4-bit elements; element `i` is bits
/// `[4i+3 : 4i]`, so element 0 is the least significant nibble.
pub fn unpack_v(dword: u32) -> [i8; 8] {
    let mut out = [0i8; 8];
    for (i, e) in out.iter_mut().enumerate() {
        let nibble = ((dword >> (4 * i)) & 0xf) as i8;
        *e = if nibble >= 8 { nibble - 16 } else { nibble };
    }
    out
}

/// Splits a UV immediate into its eight unsigned 4-bit elements (element 0 = bits 3:0).
pub fn unpack_uv(dword: u32) -> [u8; 8] {
    let mut out = [0u8; 8];
    for (i, e) in out.iter_mut().enumerate() {
        *e = ((dword >> (4 * i)) & 0xf) as u8;
    }
    out
}

/// The four VF bytes of a VF immediate (element 0 = bits 7:0).
pub fn vf_bytes(dword: u32) -> [u8; 4] {
    dword.to_le_bytes()
}

/// One VF byte as an `f32` bit pattern, through the core's exact `vf` format (the
/// conversion is exact: every VF value is an `f32`).
pub fn vf_to_f32_bits(byte: u8) -> u32 {
    let v = format::VF.decode(byte as u64);
    // Every VF value is an f32 value, so the encoding exists.
    format::F32.encode(&v).unwrap_or(0) as u32
}

/// Splits a VF immediate into its four elements, each expanded to an `f32` bit pattern
/// (exact; `0x00` is +0.0, `0x80` is −0.0).
pub fn unpack_vf(dword: u32) -> [u32; 4] {
    vf_bytes(dword).map(vf_to_f32_bits)
}

/// The element encodings of an immediate of type `ty`, in element order: eight 4-bit
/// encodings for V and UV, four bytes for VF, and the value itself for every other type.
///
/// ```
/// use gpucvt::visa::types::{unpack, VisaType};
/// assert_eq!(unpack(VisaType::Uv, 0xfedc_ba98), vec![8, 9, 10, 11, 12, 13, 14, 15]);
/// assert_eq!(unpack(VisaType::Vf, 0x0000_3830), vec![0x30, 0x38, 0, 0]);
/// assert_eq!(unpack(VisaType::D, 0xffff_ffff), vec![0xffff_ffff]);
/// ```
pub fn unpack(ty: VisaType, imm: u64) -> Vec<u64> {
    elements(ty, imm).collect()
}

/// [`unpack`] without allocating: the element encodings in element order.
///
/// ```
/// use gpucvt::visa::types::{elements, VisaType};
/// assert_eq!(elements(VisaType::Vf, 0x3830).nth(1), Some(0x38));
/// ```
pub fn elements(
    ty: VisaType,
    imm: u64,
) -> impl DoubleEndedIterator<Item = u64> + ExactSizeIterator {
    let (n, bits, mask) = match ty {
        V | Uv => (8, 4, 0xf),
        Vf => (4, 8, 0xff),
        _ => (1, 0, ty.element_format().mask()),
    };
    (0..n as u32).map(move |i| (imm >> (bits * i)) & mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_code_order() {
        for (i, t) in VisaType::ALL.iter().enumerate() {
            assert_eq!(t.code() as usize, i);
            assert_eq!(VisaType::from_code(i as u8), Some(*t));
            assert_eq!(VisaType::from_name(&t.doc_name()), Some(*t));
        }
        assert_eq!(VisaType::from_code(0x10), None);
        assert_eq!(VisaType::from_name("tf32"), None);
    }

    #[test]
    fn packed() {
        assert_eq!(unpack_uv(0x0000_00f8), [8, 15, 0, 0, 0, 0, 0, 0]);
        assert_eq!(vf_to_f32_bits(0x00), 0);
        assert_eq!(vf_to_f32_bits(0x80), 0x8000_0000);
        assert_eq!(vf_to_f32_bits(0x01), 0x3e08_0000); // 0.1328125
    }
}
