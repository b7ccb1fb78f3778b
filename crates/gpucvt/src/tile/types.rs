//! Tile IR types and attribute enumerations (`tile-ir.md` §1.3, §2.1): element types with
//! their MLIR spellings, tile types and their size rules, spec versions, rounding modes,
//! signedness and overflow flags, and the map from element types to core formats.

use core::fmt;
use gpucvt_core::format::{self, Format};

/// A version of the Tile IR specification (and of the dialect's verifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum SpecVersion {
    /// 13.1: the first release.
    V13_1,
    /// 13.2: adds `f8E8M0FNU`.
    V13_2,
    /// 13.3: adds `i4`, `f4E2M1FN`, the `f8E8M0FNU` rounding rules of `ftof`.
    V13_3,
    /// 13.4: `saturating` on `ftoi`, `nearest_away`, directed `ftof` modes, `fnv8E5M3FNU`.
    #[default]
    V13_4,
}

impl SpecVersion {
    /// Every version, oldest first.
    pub const ALL: [SpecVersion; 4] = [
        SpecVersion::V13_1,
        SpecVersion::V13_2,
        SpecVersion::V13_3,
        SpecVersion::V13_4,
    ];

    /// The newest version (the default).
    pub const LATEST: SpecVersion = SpecVersion::V13_4;

    /// `13.1` … `13.4`.
    pub fn name(self) -> &'static str {
        match self {
            SpecVersion::V13_1 => "13.1",
            SpecVersion::V13_2 => "13.2",
            SpecVersion::V13_3 => "13.3",
            SpecVersion::V13_4 => "13.4",
        }
    }

    /// Parses `13.1` … `13.4` (a patch level such as `13.3.2` is accepted and ignored).
    pub fn from_name(text: &str) -> Option<SpecVersion> {
        let t = text.trim().trim_start_matches('v');
        let mut parts = t.split('.');
        let (major, minor) = (parts.next()?, parts.next()?);
        if let Some(p) = parts.next() {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || parts.next().is_some() {
                return None;
            }
        }
        if major != "13" {
            return None;
        }
        SpecVersion::ALL
            .into_iter()
            .find(|v| v.name()[3..] == *minor)
    }
}

impl fmt::Display for SpecVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Tile IR element type (number types; pointers are [`Element::Ptr`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    /// `i1`
    I1,
    /// `i4` (13.3)
    I4,
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `f16`
    F16,
    /// `bf16`
    BF16,
    /// `f32`
    F32,
    /// `tf32` (MLIR width 19, stored in 32 bits)
    TF32,
    /// `f64`
    F64,
    /// `f8E4M3FN`
    F8E4M3FN,
    /// `f8E5M2`
    F8E5M2,
    /// `f8E8M0FNU` (13.2)
    F8E8M0FNU,
    /// `f4E2M1FN` (13.3)
    F4E2M1FN,
    /// `fnv8E5M3FNU` (13.4): NVIDIA's unsigned e5m3.
    FNV8E5M3FNU,
}

use ElemType::*;

impl ElemType {
    /// Every element type, integers first.
    pub const ALL: [ElemType; 16] = [
        I1,
        I4,
        I8,
        I16,
        I32,
        I64,
        F16,
        BF16,
        F32,
        TF32,
        F64,
        F8E4M3FN,
        F8E5M2,
        F8E8M0FNU,
        F4E2M1FN,
        FNV8E5M3FNU,
    ];

    /// The MLIR spelling.
    pub fn name(self) -> &'static str {
        match self {
            I1 => "i1",
            I4 => "i4",
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            TF32 => "tf32",
            F64 => "f64",
            F8E4M3FN => "f8E4M3FN",
            F8E5M2 => "f8E5M2",
            F8E8M0FNU => "f8E8M0FNU",
            F4E2M1FN => "f4E2M1FN",
            FNV8E5M3FNU => "fnv8E5M3FNU",
        }
    }

    /// Looks up an MLIR spelling (case-sensitive, as MLIR is).
    pub fn from_name(name: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether this is an integer type.
    pub fn is_int(self) -> bool {
        matches!(self, I1 | I4 | I8 | I16 | I32 | I64)
    }

    /// Whether this is a float type.
    pub fn is_float(self) -> bool {
        !self.is_int()
    }

    /// The width MLIR's `getIntOrFloatBitWidth` reports (`tf32`: 19), used by `bitcast`,
    /// `exti` and `trunci`.
    pub fn mlir_width(self) -> u32 {
        match self {
            TF32 => 19,
            t => t.bits(),
        }
    }

    /// The width of an element's bit pattern in this model: `i1` is 0 or 1, `i4` and
    /// `f4E2M1FN` are 4 bits, `tf32` is an `f32` word.
    pub fn bits(self) -> u32 {
        match self {
            I1 => 1,
            I4 | F4E2M1FN => 4,
            I8 | F8E4M3FN | F8E5M2 | F8E8M0FNU | FNV8E5M3FNU => 8,
            I16 | F16 | BF16 => 16,
            I32 | F32 | TF32 => 32,
            I64 | F64 => 64,
        }
    }

    /// The first spec version with this type.
    pub fn since(self) -> SpecVersion {
        match self {
            F8E8M0FNU => SpecVersion::V13_2,
            I4 | F4E2M1FN => SpecVersion::V13_3,
            FNV8E5M3FNU => SpecVersion::V13_4,
            _ => SpecVersion::V13_1,
        }
    }

    /// The core format of an element: integers by signedness (`i1` → `s1`/`u1`, `i4` →
    /// `s4`/`u4`, …; `None` = unsigned, the raw bits), `f8E8M0FNU` → `ue8m0`,
    /// `fnv8E5M3FNU` → `ue5m3`, `tf32` → `tf32` (19 significant bits in an `f32` word).
    pub fn format(self, signedness: Option<Signedness>) -> Format {
        let signed = signedness == Some(Signedness::Signed);
        let pick = |s: Format, u: Format| if signed { s } else { u };
        match self {
            I1 => pick(format::S1, format::U1),
            I4 => pick(format::S4, format::U4),
            I8 => pick(format::S8, format::U8),
            I16 => pick(format::S16, format::U16),
            I32 => pick(format::S32, format::U32),
            I64 => pick(format::S64, format::U64),
            F16 => format::F16,
            BF16 => format::BF16,
            F32 => format::F32,
            TF32 => format::TF32,
            F64 => format::F64,
            F8E4M3FN => format::E4M3,
            F8E5M2 => format::E5M2,
            F8E8M0FNU => format::UE8M0,
            F4E2M1FN => format::E2M1,
            FNV8E5M3FNU => format::UE5M3,
        }
    }

    /// Whether the type is in `NumberTileType` (every type but `i4`; `fnv8E5M3FNU` is
    /// counted as a float from 13.4).
    pub fn is_number(self) -> bool {
        self != I4
    }

    /// Whether the type is in `FloatTileType` (13.3 list, plus `fnv8E5M3FNU`).
    pub fn in_float_class(self) -> bool {
        self.is_float()
    }

    /// Whether the type is in `IntTileType` (i1, i8, i16, i32, i64; not i4).
    pub fn in_int_class(self) -> bool {
        self.is_int() && self != I4
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The element of a tile: a number, or a pointer to a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    /// A number type.
    Num(ElemType),
    /// `ptr<E>`: a 64-bit global address.
    Ptr(ElemType),
}

impl Element {
    /// The number type, if this is not a pointer.
    pub fn num(self) -> Option<ElemType> {
        match self {
            Element::Num(t) => Some(t),
            Element::Ptr(_) => None,
        }
    }

    /// Whether this is a pointer.
    pub fn is_ptr(self) -> bool {
        matches!(self, Element::Ptr(_))
    }

    /// The width of an element's bit pattern (64 for pointers).
    pub fn bits(self) -> u32 {
        match self {
            Element::Num(t) => t.bits(),
            Element::Ptr(_) => 64,
        }
    }

    fn write(self, f: &mut fmt::Formatter<'_>, long: bool) -> fmt::Result {
        match self {
            Element::Num(t) => f.write_str(t.name()),
            Element::Ptr(t) if long => write!(f, "!cuda_tile.ptr<{t}>"),
            Element::Ptr(t) => write!(f, "ptr<{t}>"),
        }
    }
}

/// The most elements a tile may have (2^24).
pub const MAX_ELEMENTS: u64 = 1 << 24;

/// A tile type: a shape (empty for a 0-d tile, a scalar) and an element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TileType {
    /// The extents, outermost first.
    pub shape: Vec<u64>,
    /// The element.
    pub elem: Element,
}

impl TileType {
    /// A tile of numbers.
    pub fn new(shape: &[u64], elem: ElemType) -> TileType {
        TileType {
            shape: shape.to_vec(),
            elem: Element::Num(elem),
        }
    }

    /// The number of elements (saturating; 1 for a 0-d tile).
    pub fn num_elements(&self) -> u64 {
        self.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }

    /// The number element type, if the element is not a pointer.
    pub fn num(&self) -> Option<ElemType> {
        self.elem.num()
    }

    /// The dialect's size rules (`verifyTileSize` and the f4 rule), in the dialect's order:
    /// f4 tiles with an odd element count, then non-positive dims, dims that are not powers
    /// of two, and more than 2^24 elements: [`crate::Error::TileSize`] with the dialect's message.
    pub fn check_size(&self) -> Result<(), crate::Error> {
        self.size_rule()
            .map_err(|message| crate::Error::TileSize { message })
    }

    /// [`Self::check_size`] with the message as text.
    pub(crate) fn size_rule(&self) -> Result<(), String> {
        let dims = || {
            self.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.elem == Element::Num(F4E2M1FN)
            && (self.shape.is_empty() || self.num_elements() % 2 == 1)
        {
            return Err("F4E2M1FN tiles must have an even number of elements".into());
        }
        if self.shape.contains(&0) {
            return Err(format!(
                "all dimensions must be positive constants, got {}",
                dims()
            ));
        }
        if self.shape.iter().any(|d| !d.is_power_of_two()) {
            return Err(format!(
                "all dimensions must be powers of two, got {}",
                dims()
            ));
        }
        if self.num_elements() > MAX_ELEMENTS {
            return Err(format!(
                "tile would exceed the maximum of {MAX_ELEMENTS} elements"
            ));
        }
        Ok(())
    }

    /// The long spelling used in diagnostics: `!cuda_tile.tile<2xi16>`.
    pub fn long(&self) -> String {
        struct Long<'a>(&'a TileType);
        impl fmt::Display for Long<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("!cuda_tile.")?;
                self.0.write(f, true)
            }
        }
        Long(self).to_string()
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, long: bool) -> fmt::Result {
        f.write_str("tile<")?;
        for d in &self.shape {
            write!(f, "{d}x")?;
        }
        self.elem.write(f, long)?;
        f.write_str(">")
    }
}

impl fmt::Display for TileType {
    /// The short spelling: `tile<4x8xf32>`, `tile<ptr<f32>>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, false)
    }
}

/// `RoundingMode` (`#cuda_tile.rounding<…>`), with its bytecode code as discriminant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RoundingMode {
    /// `nearest_even` (0)
    NearestEven = 0,
    /// `zero` (1)
    Zero = 1,
    /// `negative_inf` (2)
    NegativeInf = 2,
    /// `positive_inf` (3)
    PositiveInf = 3,
    /// `approx` (4): math ops only.
    Approx = 4,
    /// `full` (5): math ops only.
    Full = 5,
    /// `nearest_int_to_zero` (6): `ftoi`'s only mode.
    NearestIntToZero = 6,
    /// `nearest_away` (7, 13.4)
    NearestAway = 7,
}

impl RoundingMode {
    /// Every mode, by code.
    pub const ALL: [RoundingMode; 8] = [
        RoundingMode::NearestEven,
        RoundingMode::Zero,
        RoundingMode::NegativeInf,
        RoundingMode::PositiveInf,
        RoundingMode::Approx,
        RoundingMode::Full,
        RoundingMode::NearestIntToZero,
        RoundingMode::NearestAway,
    ];

    /// The spelling inside `rounding<…>`.
    pub fn name(self) -> &'static str {
        match self {
            RoundingMode::NearestEven => "nearest_even",
            RoundingMode::Zero => "zero",
            RoundingMode::NegativeInf => "negative_inf",
            RoundingMode::PositiveInf => "positive_inf",
            RoundingMode::Approx => "approx",
            RoundingMode::Full => "full",
            RoundingMode::NearestIntToZero => "nearest_int_to_zero",
            RoundingMode::NearestAway => "nearest_away",
        }
    }

    /// Looks a spelling up.
    pub fn from_name(name: &str) -> Option<RoundingMode> {
        RoundingMode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The core rounding of a float-destination mode (`nearest_int_to_zero` is `RZI`;
    /// `approx`/`full` have none).
    pub fn rounding(self) -> Option<gpucvt_core::Rounding> {
        use gpucvt_core::Rounding as R;
        Some(match self {
            RoundingMode::NearestEven => R::RN,
            RoundingMode::Zero => R::RZ,
            RoundingMode::NegativeInf => R::RM,
            RoundingMode::PositiveInf => R::RP,
            RoundingMode::NearestAway => R::RNA,
            RoundingMode::NearestIntToZero => R::RZI,
            RoundingMode::Approx | RoundingMode::Full => return None,
        })
    }
}

impl fmt::Display for RoundingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `Signedness`: how an integer operand (exti, itof) or result (ftoi) is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signedness {
    /// `unsigned` (0)
    Unsigned,
    /// `signed` (1)
    Signed,
}

impl Signedness {
    /// The keyword.
    pub fn name(self) -> &'static str {
        match self {
            Signedness::Unsigned => "unsigned",
            Signedness::Signed => "signed",
        }
    }
}

/// `IntegerOverflow` of `trunci`: an assumption, not a behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Overflow {
    /// `none` (0, the default, printed as nothing)
    #[default]
    None,
    /// `no_signed_wrap` (1)
    NoSignedWrap,
    /// `no_unsigned_wrap` (2)
    NoUnsignedWrap,
    /// `no_wrap` (3): both.
    NoWrap,
}

impl Overflow {
    /// Every flag value.
    pub const ALL: [Overflow; 4] = [
        Overflow::None,
        Overflow::NoSignedWrap,
        Overflow::NoUnsignedWrap,
        Overflow::NoWrap,
    ];

    /// The spelling inside `overflow<…>`.
    pub fn name(self) -> &'static str {
        match self {
            Overflow::None => "none",
            Overflow::NoSignedWrap => "no_signed_wrap",
            Overflow::NoUnsignedWrap => "no_unsigned_wrap",
            Overflow::NoWrap => "no_wrap",
        }
    }

    /// Looks a spelling up.
    pub fn from_name(name: &str) -> Option<Overflow> {
        Overflow::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// The nine conversion ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// `bitcast`
    Bitcast,
    /// `exti`
    ExtI,
    /// `trunci`
    TruncI,
    /// `ftof`
    FtoF,
    /// `ftoi`
    FtoI,
    /// `itof`
    ItoF,
    /// `int_to_ptr`
    IntToPtr,
    /// `ptr_to_int`
    PtrToInt,
    /// `ptr_to_ptr`
    PtrToPtr,
}

impl OpKind {
    /// Every op.
    pub const ALL: [OpKind; 9] = [
        OpKind::Bitcast,
        OpKind::ExtI,
        OpKind::TruncI,
        OpKind::FtoF,
        OpKind::FtoI,
        OpKind::ItoF,
        OpKind::IntToPtr,
        OpKind::PtrToInt,
        OpKind::PtrToPtr,
    ];

    /// The op name without the dialect prefix.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Bitcast => "bitcast",
            OpKind::ExtI => "exti",
            OpKind::TruncI => "trunci",
            OpKind::FtoF => "ftof",
            OpKind::FtoI => "ftoi",
            OpKind::ItoF => "itof",
            OpKind::IntToPtr => "int_to_ptr",
            OpKind::PtrToInt => "ptr_to_int",
            OpKind::PtrToPtr => "ptr_to_ptr",
        }
    }

    /// Looks an op up, with or without the `cuda_tile.` prefix.
    pub fn from_name(name: &str) -> Option<OpKind> {
        let name = name.strip_prefix("cuda_tile.").unwrap_or(name);
        OpKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The operand and result names used in diagnostics: `{source, result}` or `{from, to}`.
    pub fn operand_names(self) -> (&'static str, &'static str) {
        match self {
            OpKind::ExtI | OpKind::TruncI | OpKind::FtoF | OpKind::FtoI | OpKind::ItoF => {
                ("from", "to")
            }
            _ => ("source", "result"),
        }
    }

    /// Whether the op takes a signedness keyword.
    pub fn has_signedness(self) -> bool {
        matches!(self, OpKind::ExtI | OpKind::FtoI | OpKind::ItoF)
    }

    /// Whether the op takes a `rounding<…>` attribute.
    pub fn has_rounding(self) -> bool {
        matches!(self, OpKind::FtoF | OpKind::FtoI | OpKind::ItoF)
    }

    /// The mode the parser fills in when `rounding<…>` is absent.
    pub fn default_rounding(self) -> Option<RoundingMode> {
        match self {
            OpKind::FtoF | OpKind::ItoF => Some(RoundingMode::NearestEven),
            OpKind::FtoI => Some(RoundingMode::NearestIntToZero),
            _ => None,
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ElemType::ALL {
            assert_eq!(ElemType::from_name(t.name()), Some(t));
        }
        for m in RoundingMode::ALL {
            assert_eq!(RoundingMode::from_name(m.name()), Some(m));
        }
        for v in SpecVersion::ALL {
            assert_eq!(SpecVersion::from_name(v.name()), Some(v));
        }
        assert_eq!(SpecVersion::from_name("13.3.2"), Some(SpecVersion::V13_3));
        assert_eq!(SpecVersion::from_name("13.5"), None);
        assert_eq!(OpKind::from_name("cuda_tile.ftof"), Some(OpKind::FtoF));
    }

    #[test]
    fn size_rules() {
        let t = |s: &[u64], e| TileType::new(s, e).size_rule();
        assert!(t(&[4, 8], F32).is_ok());
        assert!(t(&[], F32).is_ok());
        assert_eq!(
            t(&[1, 0, 2], F32).unwrap_err(),
            "all dimensions must be positive constants, got 1, 0, 2"
        );
        assert_eq!(
            t(&[3, 5, 9], F32).unwrap_err(),
            "all dimensions must be powers of two, got 3, 5, 9"
        );
        assert!(t(&[1 << 25], I8).unwrap_err().contains("16777216"));
        assert!(t(&[3, 3, 3], F4E2M1FN).unwrap_err().contains("F4E2M1FN"));
        assert!(t(&[], F4E2M1FN).is_err());
        assert!(matches!(
            TileType::new(&[3], F32).check_size(),
            Err(crate::Error::TileSize { message }) if message.contains("powers of two")
        ));
        assert!(t(&[2], F4E2M1FN).is_ok());
        assert_eq!(TileType::new(&[2], I16).long(), "!cuda_tile.tile<2xi16>");
        assert_eq!(TileType::new(&[4, 8], F32).to_string(), "tile<4x8xf32>");
        assert_eq!(ElemType::TF32.mlir_width(), 19);
    }
}
