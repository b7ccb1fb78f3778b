//! Number formats as data.
//!
//! One descriptor type, [`Format`], describes every number format gpucvt knows: IEEE-style
//! floats with their special-value rules, the finite-only and exponent-only formats of the
//! OCP MX family, Intel's restricted VF byte, fixed point (`s2f6`) and integers. Nothing in the
//! engine switches on a format's *name*; everything it needs is in these fields.
//!
//! ```
//! use gpucvt_core::format::{Format, E4M3};
//! let e4m3 = Format::by_name("e4m3").unwrap();
//! assert_eq!(e4m3, &E4M3);
//! assert_eq!(e4m3.width(), 8);
//! assert_eq!(e4m3.max_finite_bits(), 0x7e); // 448
//! assert_eq!(e4m3.canonical_nan(), Some(0x7f));
//! ```

use core::fmt;

/// Which encodings of a float format are not finite numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Specials {
    /// IEEE 754: an all-ones exponent field is infinity (zero mantissa) or NaN (anything else).
    Ieee,
    /// No infinity; only the all-ones magnitude (exponent and mantissa all ones) is NaN, with
    /// either sign (`e4m3`: `0x7f`/`0xff`; `ue8m0`: `0xff`).
    NanOnly,
    /// Every encoding is a finite number (`e2m1`, `e2m3`, `e3m2`, `vf`).
    None,
    /// The "fnuz" rule (AMD and Graphcore FP8: `e4m3fnuz`, `e5m2fnuz`, `e4m3b11fnuz`): every
    /// encoding is finite except the negative-zero one (sign bit alone, `0x80`), which is the
    /// only NaN. Zero is unsigned: a result that would be −0 is +0. No infinity.
    Fnuz,
}

/// What an exponent field of zero means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ZeroExponent {
    /// IEEE 754: zero and the subnormals (no implied leading one).
    Subnormal,
    /// A normal binade with an implied leading one, except that the all-zero mantissa is zero
    /// (Intel's VF: the smallest non-zero magnitude is 17/128 = 0.1328125).
    NormalExceptZero,
    /// A normal binade; the format has no zero at all (`ue8m0`: `0x00` is 2^-127).
    Normal,
}

/// The layout of a floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatLayout {
    /// Whether there is a sign bit (the most significant bit of the encoding).
    pub signed: bool,
    /// Width of the exponent field.
    pub exp_bits: u32,
    /// Width of the stored mantissa (fraction) field.
    pub man_bits: u32,
    /// Exponent bias: a normal value is `1.m × 2^(e − bias)`.
    pub bias: i32,
    /// Which encodings are infinities or NaNs.
    pub specials: Specials,
    /// What an exponent field of zero encodes.
    pub zero_exponent: ZeroExponent,
    /// Low padding bits that are always zero in encodings this library produces and ignored
    /// when decoding (13 for `tf32`, which lives in an `f32` bit pattern).
    pub pad_bits: u32,
}

/// The layout of a fixed-point (or integer) format: a two's-complement or unsigned integer
/// `n` standing for the value `n × 2^-frac_bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixedLayout {
    /// Two's complement (`true`) or unsigned.
    pub signed: bool,
    /// Total width in bits, 1 to 64.
    pub bits: u32,
    /// Number of fraction bits (0 for integers, 6 for `s2f6`).
    pub frac_bits: u32,
}

/// Float or fixed point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// A floating-point format.
    Float(FloatLayout),
    /// A fixed-point format; integers are fixed point with no fraction bits.
    Fixed(FixedLayout),
}

/// A number format: a name and a layout. Every property the engine uses is derived from the
/// layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// The catalogue name (`f32`, `e4m3`, `s8`, …).
    pub name: &'static str,
    /// How the bits encode a value.
    pub layout: Layout,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

const fn ieee(name: &'static str, exp_bits: u32, man_bits: u32) -> Format {
    float(
        name,
        true,
        exp_bits,
        man_bits,
        Specials::Ieee,
        ZeroExponent::Subnormal,
    )
}

const fn float(
    name: &'static str,
    signed: bool,
    exp_bits: u32,
    man_bits: u32,
    specials: Specials,
    zero_exponent: ZeroExponent,
) -> Format {
    Format {
        name,
        layout: Layout::Float(FloatLayout {
            signed,
            exp_bits,
            man_bits,
            bias: (1 << (exp_bits - 1)) - 1,
            specials,
            zero_exponent,
            pad_bits: 0,
        }),
    }
}

/// A float format whose bias is not the IEEE one (`2^(exp_bits − 1) − 1`).
const fn with_bias(f: Format, bias: i32) -> Format {
    match f.layout {
        Layout::Float(l) => Format {
            name: f.name,
            layout: Layout::Float(FloatLayout { bias, ..l }),
        },
        Layout::Fixed(_) => f,
    }
}

const fn fixed(name: &'static str, signed: bool, bits: u32, frac_bits: u32) -> Format {
    Format {
        name,
        layout: Layout::Fixed(FixedLayout {
            signed,
            bits,
            frac_bits,
        }),
    }
}

impl FloatLayout {
    /// Width of an encoding in bits (including padding).
    #[inline(always)]
    pub(crate) const fn width(&self) -> u32 {
        self.signed as u32 + self.exp_bits + self.man_bits + self.pad_bits
    }

    /// The sign bit, or 0 for an unsigned layout.
    #[inline(always)]
    pub(crate) const fn sign_bit(&self) -> u64 {
        // `signed` as 0 or 1, moved to the top bit (a shift count of 64, only possible for a
        // 64-bit unsigned layout, shifts the 0 by 0).
        (self.signed as u64).wrapping_shl(self.exp_bits + self.man_bits + self.pad_bits)
    }

    /// Whether a negative zero exists (every signed layout but the fnuz ones, where its
    /// encoding is the NaN).
    #[inline(always)]
    pub const fn has_negative_zero(&self) -> bool {
        self.signed && !matches!(self.specials, Specials::Fnuz)
    }

    /// The body (encoding without sign and padding) of the largest finite positive value.
    #[inline(always)]
    pub(crate) const fn max_finite_body(&self) -> u64 {
        let all = (1u64 << (self.exp_bits + self.man_bits)) - 1;
        match self.specials {
            Specials::Ieee => all - (1u64 << self.man_bits),
            Specials::NanOnly => all - 1,
            Specials::None | Specials::Fnuz => all,
        }
    }
}

/// IEEE binary64.
pub const F64: Format = ieee("f64", 11, 52);
/// IEEE binary32.
pub const F32: Format = ieee("f32", 8, 23);
/// NVIDIA TensorFloat-32: an `f32` bit pattern whose low 13 mantissa bits are zero.
pub const TF32: Format = Format {
    name: "tf32",
    layout: Layout::Float(FloatLayout {
        signed: true,
        exp_bits: 8,
        man_bits: 10,
        bias: 127,
        specials: Specials::Ieee,
        zero_exponent: ZeroExponent::Subnormal,
        pad_bits: 13,
    }),
};
/// IEEE binary16.
pub const F16: Format = ieee("f16", 5, 10);
/// bfloat16: the top half of an `f32`.
pub const BF16: Format = ieee("bf16", 8, 7);
/// OCP FP8 E4M3 (`FN`): no infinity, NaN only at `0x7f`/`0xff`, largest finite 448.
pub const E4M3: Format = float(
    "e4m3",
    true,
    4,
    3,
    Specials::NanOnly,
    ZeroExponent::Subnormal,
);
/// OCP FP8 E5M2: IEEE-style, with infinities and NaNs.
pub const E5M2: Format = ieee("e5m2", 5, 2);
/// IEEE-style E4M3 (ml_dtypes `float8_e4m3`, MLIR `f8E4M3`): bias 7, infinities `0x78`/`0xf8`,
/// NaNs above them, largest finite 240. Not OCP `e4m3` (`float8_e4m3fn`), which has no
/// infinity.
pub const E4M3IEEE: Format = ieee("e4m3ieee", 4, 3);
/// IEEE-style E3M4 (ml_dtypes `float8_e3m4`): bias 3, infinities `0x70`/`0xf0`, largest
/// finite 15.5.
pub const E3M4: Format = ieee("e3m4", 3, 4);
/// AMD MI300 FP8 E4M3 (ml_dtypes `float8_e4m3fnuz`): bias 8, no infinity, no −0, `0x80` the
/// only NaN, largest finite `0x7f` = 240.
pub const E4M3FNUZ: Format = with_bias(
    float(
        "e4m3fnuz",
        true,
        4,
        3,
        Specials::Fnuz,
        ZeroExponent::Subnormal,
    ),
    8,
);
/// AMD MI300 FP8 E5M2 (ml_dtypes `float8_e5m2fnuz`): bias 16, no infinity, no −0, `0x80` the
/// only NaN, largest finite `0x7f` = 57344.
pub const E5M2FNUZ: Format = with_bias(
    float(
        "e5m2fnuz",
        true,
        5,
        2,
        Specials::Fnuz,
        ZeroExponent::Subnormal,
    ),
    16,
);
/// Graphcore FP8 E4M3 (ml_dtypes `float8_e4m3b11fnuz`): bias 11, no infinity, no −0, `0x80`
/// the only NaN, largest finite `0x7f` = 30.
pub const E4M3B11FNUZ: Format = with_bias(
    float(
        "e4m3b11fnuz",
        true,
        4,
        3,
        Specials::Fnuz,
        ZeroExponent::Subnormal,
    ),
    11,
);
/// OCP FP6 E2M3: finite only, largest 7.5 (6 bits).
pub const E2M3: Format = float("e2m3", true, 2, 3, Specials::None, ZeroExponent::Subnormal);
/// OCP FP6 E3M2: finite only, largest 28 (6 bits).
pub const E3M2: Format = float("e3m2", true, 3, 2, Specials::None, ZeroExponent::Subnormal);
/// OCP FP4 E2M1: finite only, largest 6 (4 bits).
pub const E2M1: Format = float("e2m1", true, 2, 1, Specials::None, ZeroExponent::Subnormal);
/// OCP E8M0 scale: 2^(e − 127), no zero, no sign, NaN `0xff`.
pub const UE8M0: Format = float(
    "ue8m0",
    false,
    8,
    0,
    Specials::NanOnly,
    ZeroExponent::Normal,
);
/// Unsigned E4M3 (7 bits): NaN `0x7f`, largest 448.
pub const UE4M3: Format = float(
    "ue4m3",
    false,
    4,
    3,
    Specials::NanOnly,
    ZeroExponent::Subnormal,
);
/// Unsigned E5M3 (8 bits, PTX 9.4): NaN `0xff`, largest 114688.
pub const UE5M3: Format = float(
    "ue5m3",
    false,
    5,
    3,
    Specials::NanOnly,
    ZeroExponent::Subnormal,
);
/// PTX `s2f6`: an 8-bit two's-complement integer times 2^-6, range [−2, 1.984375].
pub const S2F6: Format = fixed("s2f6", true, 8, 6);
/// Intel vISA VF: `s eee mmmm`, bias 3, no subnormals, no infinity or NaN; `0x00`/`0x80` are
/// zero and the smallest non-zero magnitude is 0.1328125.
pub const VF: Format = float(
    "vf",
    true,
    3,
    4,
    Specials::None,
    ZeroExponent::NormalExceptZero,
);

/// Signed 1-bit integer (−1, 0).
pub const S1: Format = fixed("s1", true, 1, 0);
/// Signed 2-bit integer.
pub const S2: Format = fixed("s2", true, 2, 0);
/// Signed 4-bit integer.
pub const S4: Format = fixed("s4", true, 4, 0);
/// Signed 8-bit integer.
pub const S8: Format = fixed("s8", true, 8, 0);
/// Signed 16-bit integer.
pub const S16: Format = fixed("s16", true, 16, 0);
/// Signed 32-bit integer.
pub const S32: Format = fixed("s32", true, 32, 0);
/// Signed 64-bit integer.
pub const S64: Format = fixed("s64", true, 64, 0);
/// Unsigned 1-bit integer.
pub const U1: Format = fixed("u1", false, 1, 0);
/// Unsigned 2-bit integer.
pub const U2: Format = fixed("u2", false, 2, 0);
/// Unsigned 4-bit integer.
pub const U4: Format = fixed("u4", false, 4, 0);
/// Unsigned 8-bit integer.
pub const U8: Format = fixed("u8", false, 8, 0);
/// Unsigned 16-bit integer.
pub const U16: Format = fixed("u16", false, 16, 0);
/// Unsigned 32-bit integer.
pub const U32: Format = fixed("u32", false, 32, 0);
/// Unsigned 64-bit integer.
pub const U64: Format = fixed("u64", false, 64, 0);

/// The catalogue: every named format, floats first (widest first), then integers.
pub const CATALOGUE: &[Format] = &[
    F64,
    F32,
    TF32,
    F16,
    BF16,
    E4M3,
    E5M2,
    E4M3IEEE,
    E3M4,
    E4M3FNUZ,
    E5M2FNUZ,
    E4M3B11FNUZ,
    E2M3,
    E3M2,
    E2M1,
    UE8M0,
    UE4M3,
    UE5M3,
    S2F6,
    VF,
    S1,
    S2,
    S4,
    S8,
    S16,
    S32,
    S64,
    U1,
    U2,
    U4,
    U8,
    U16,
    U32,
    U64,
];

impl Format {
    /// Looks a format up by its catalogue name (case-insensitive).
    ///
    /// ```
    /// assert_eq!(gpucvt_core::Format::by_name("BF16").unwrap().width(), 16);
    /// assert!(gpucvt_core::Format::by_name("e9m9").is_none());
    /// ```
    pub fn by_name(name: &str) -> Option<&'static Format> {
        CATALOGUE.iter().find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The names of the catalogue, for error messages.
    pub fn names() -> impl Iterator<Item = &'static str> {
        CATALOGUE.iter().map(|f| f.name)
    }

    /// Width of an encoding in bits (including `tf32`'s padding).
    #[inline]
    pub const fn width(&self) -> u32 {
        match self.layout {
            Layout::Float(l) => l.width(),
            Layout::Fixed(l) => l.bits,
        }
    }

    /// Mask of the bits an encoding may use.
    #[inline]
    pub const fn mask(&self) -> u64 {
        let w = self.width();
        if w >= 64 {
            u64::MAX
        } else {
            (1u64 << w) - 1
        }
    }

    /// Whether the format is floating point.
    pub const fn is_float(&self) -> bool {
        matches!(self.layout, Layout::Float(_))
    }

    /// Whether the format is an integer (fixed point with no fraction bits).
    pub const fn is_integer(&self) -> bool {
        matches!(self.layout, Layout::Fixed(FixedLayout { frac_bits: 0, .. }))
    }

    /// Whether negative values can be encoded.
    pub const fn is_signed(&self) -> bool {
        match self.layout {
            Layout::Float(l) => l.signed,
            Layout::Fixed(l) => l.signed,
        }
    }

    /// Whether the format has infinities.
    pub const fn has_infinity(&self) -> bool {
        matches!(
            self.layout,
            Layout::Float(FloatLayout {
                specials: Specials::Ieee,
                ..
            })
        )
    }

    /// Whether the format has NaNs.
    pub const fn has_nan(&self) -> bool {
        matches!(
            self.layout,
            Layout::Float(FloatLayout {
                specials: Specials::Ieee | Specials::NanOnly | Specials::Fnuz,
                ..
            })
        )
    }

    /// Whether the format has a negative zero (signed floats except the fnuz formats, whose
    /// negative-zero encoding is their NaN).
    pub const fn has_negative_zero(&self) -> bool {
        match self.layout {
            Layout::Float(l) => {
                l.has_negative_zero() && !matches!(l.zero_exponent, ZeroExponent::Normal)
            }
            Layout::Fixed(_) => false,
        }
    }

    /// Whether the format can encode zero (every format but `ue8m0`).
    pub const fn has_zero(&self) -> bool {
        !matches!(
            self.layout,
            Layout::Float(FloatLayout {
                zero_exponent: ZeroExponent::Normal,
                ..
            })
        )
    }

    /// Whether the format has subnormal numbers.
    pub fn has_subnormals(&self) -> bool {
        matches!(self.layout, Layout::Float(l) if l.zero_exponent == ZeroExponent::Subnormal)
    }

    /// The canonical NaN encoding: positive, every exponent and mantissa bit set (also the
    /// padding bits, so `tf32`'s canonical NaN is the `f32` one, `0x7fffffff`); for the fnuz
    /// formats their one NaN, the sign bit alone (`0x80`). `None` for formats without NaN.
    #[inline]
    pub const fn canonical_nan(&self) -> Option<u64> {
        match self.layout {
            Layout::Float(l) if matches!(l.specials, Specials::Fnuz) => {
                Some(1u64 << (l.exp_bits + l.man_bits + l.pad_bits))
            }
            Layout::Float(l) if self.has_nan() => {
                Some((1u64 << (l.exp_bits + l.man_bits + l.pad_bits)) - 1)
            }
            _ => None,
        }
    }

    /// The encoding of the positive infinity, if the format has one.
    #[inline]
    pub const fn infinity(&self) -> Option<u64> {
        match self.layout {
            Layout::Float(l) if self.has_infinity() => {
                Some(((1u64 << l.exp_bits) - 1) << (l.man_bits + l.pad_bits))
            }
            _ => None,
        }
    }

    /// The encoding of the largest finite positive value.
    #[inline]
    pub const fn max_finite_bits(&self) -> u64 {
        match self.layout {
            Layout::Float(l) => l.max_finite_body() << l.pad_bits,
            Layout::Fixed(l) => {
                if l.signed {
                    (1u64 << (l.bits - 1)) - 1
                } else if l.bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << l.bits) - 1
                }
            }
        }
    }

    /// The encoding of the most negative finite value (`None` for unsigned formats).
    #[inline]
    pub const fn min_finite_bits(&self) -> Option<u64> {
        match self.layout {
            Layout::Float(l) if l.signed => {
                Some(self.max_finite_bits() | 1u64 << (l.exp_bits + l.man_bits + l.pad_bits))
            }
            Layout::Fixed(l) if l.signed => Some(1u64 << (l.bits - 1)),
            _ => None,
        }
    }

    /// The encoding of the smallest positive value (the smallest subnormal, where there are
    /// subnormals).
    #[inline]
    pub const fn min_positive_bits(&self) -> u64 {
        match self.layout {
            Layout::Float(l) => match l.zero_exponent {
                ZeroExponent::Normal => 0,
                _ => 1u64 << l.pad_bits,
            },
            Layout::Fixed(_) => 1,
        }
    }

    /// The encoding of the smallest positive normal value (`None` for fixed point).
    #[inline]
    pub const fn min_normal_bits(&self) -> Option<u64> {
        match self.layout {
            Layout::Float(l) => Some(match l.zero_exponent {
                ZeroExponent::Subnormal => 1u64 << (l.man_bits + l.pad_bits),
                ZeroExponent::NormalExceptZero => 1u64 << l.pad_bits,
                ZeroExponent::Normal => 0,
            }),
            Layout::Fixed(_) => None,
        }
    }

    /// The encoding of positive zero (`None` for `ue8m0`).
    #[inline]
    pub const fn zero_bits(&self) -> Option<u64> {
        if self.has_zero() {
            Some(0)
        } else {
            None
        }
    }

    /// The bit that holds the sign of a float, or the top bit of a signed fixed-point format.
    #[inline]
    pub const fn sign_bit(&self) -> Option<u64> {
        if self.is_signed() {
            Some(1u64 << (self.width() - 1))
        } else {
            None
        }
    }

    /// A one-line description of the layout, e.g. `s e4 m3` or `s8.6 fixed`.
    pub fn layout_text(&self) -> String {
        match self.layout {
            Layout::Float(l) => {
                let mut s = String::new();
                if l.signed {
                    s.push_str("s ");
                } else {
                    s.push_str("u ");
                }
                s.push_str(&format!("e{}", l.exp_bits));
                if l.man_bits > 0 {
                    s.push_str(&format!(" m{}", l.man_bits));
                }
                if l.pad_bits > 0 {
                    s.push_str(&format!(" +{} zero bits", l.pad_bits));
                }
                s
            }
            Layout::Fixed(l) if l.frac_bits == 0 => {
                format!("{}{} integer", if l.signed { "s" } else { "u" }, l.bits)
            }
            Layout::Fixed(l) => format!(
                "{}{} fixed, {} fraction bits",
                if l.signed { "s" } else { "u" },
                l.bits,
                l.frac_bits
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_specials() {
        assert_eq!(F64.width(), 64);
        assert_eq!(TF32.width(), 32);
        assert_eq!(E2M3.width(), 6);
        assert_eq!(E2M1.width(), 4);
        assert_eq!(UE4M3.width(), 7);
        assert_eq!(UE8M0.width(), 8);
        assert_eq!(F16.max_finite_bits(), 0x7bff);
        assert_eq!(BF16.max_finite_bits(), 0x7f7f);
        assert_eq!(E5M2.max_finite_bits(), 0x7b);
        assert_eq!(E2M3.max_finite_bits(), 0x1f);
        assert_eq!(UE8M0.max_finite_bits(), 0xfe);
        assert_eq!(UE5M3.max_finite_bits(), 0xfe);
        assert_eq!(TF32.max_finite_bits(), 0x7f7f_e000);
        assert_eq!(S2F6.max_finite_bits(), 0x7f);
        assert_eq!(S2F6.min_finite_bits(), Some(0x80));
        assert_eq!(U64.max_finite_bits(), u64::MAX);
        assert_eq!(F16.canonical_nan(), Some(0x7fff));
        assert_eq!(TF32.canonical_nan(), Some(0x7fff_ffff));
        assert_eq!(UE8M0.canonical_nan(), Some(0xff));
        assert_eq!(E2M1.canonical_nan(), None);
        assert_eq!(F32.infinity(), Some(0x7f80_0000));
        assert_eq!(E4M3.infinity(), None);
        assert_eq!(F16.min_finite_bits(), Some(0xfbff));
    }

    #[test]
    fn ml_dtypes_formats() {
        // (format, bias, largest finite, infinity, NaN) as ml_dtypes' finfo gives them.
        for (f, bias, max, inf, nan) in [
            (E4M3FNUZ, 8, 0x7f, None, Some(0x80)),
            (E5M2FNUZ, 16, 0x7f, None, Some(0x80)),
            (E4M3B11FNUZ, 11, 0x7f, None, Some(0x80)),
            (E3M4, 3, 0x6f, Some(0x70), Some(0x7f)),
            (E4M3IEEE, 7, 0x77, Some(0x78), Some(0x7f)),
        ] {
            let Layout::Float(l) = f.layout else { panic!() };
            assert_eq!(l.bias, bias, "{f}");
            assert_eq!(f.width(), 8, "{f}");
            assert_eq!(f.max_finite_bits(), max, "{f}");
            assert_eq!(f.min_finite_bits(), Some(max | 0x80), "{f}");
            assert_eq!(f.infinity(), inf, "{f}");
            assert_eq!(f.canonical_nan(), nan, "{f}");
            assert_eq!(l.has_negative_zero(), l.specials != Specials::Fnuz, "{f}");
            assert_eq!(Format::by_name(f.name), Some(&f));
        }
        // The names that existed keep their meaning.
        assert_eq!(Format::by_name("e4m3"), Some(&E4M3));
    }

    #[test]
    fn catalogue_names_are_unique() {
        for (i, a) in CATALOGUE.iter().enumerate() {
            for b in &CATALOGUE[i + 1..] {
                assert_ne!(a.name, b.name);
            }
        }
    }
}
