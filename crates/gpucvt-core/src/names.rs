//! Format names: gpucvt's own and the ones users bring from other tools.
//!
//! One table serves every place that reads a format name (the command line, the tensor
//! reader, bindings). It accepts, case-insensitively:
//!
//! - gpucvt's catalogue names (`e4m3`, `bf16`, `s8`, …);
//! - ml_dtypes / NumPy / PyTorch names (`float8_e4m3fn`, `bfloat16`, `float16`, `half`,
//!   `int8`, `uint8`, …);
//! - safetensors dtypes (`F8_E4M3`, `BF16`, `F4`, `I8`, …);
//! - MLIR / CUDA Tile IR element types (`f8E4M3FN`, `f4E2M1FN`, `bf16`, `i8`, …);
//! - LLVM's APFloat semantics (`Float8E4M3FN`, `Float8E8M0FNU`, `IEEEhalf`, `BFloat`, …).
//!
//! An alias never stands for a format other than the one its tool means: ml_dtypes'
//! `float8_e4m3` (IEEE-style, with infinities) is `e4m3ieee`, not gpucvt's `e4m3` (OCP
//! `float8_e4m3fn`, without); formats gpucvt lacks give [`NameError::Unsupported`] instead of
//! the nearest lookalike.
//! Names whose meaning depends on the tool (`float`: `f32` in PyTorch, `f64` in NumPy) give
//! [`NameError::Ambiguous`]. Short names count bits (`i8` is 8 bits, `f4` is 4 bits), as in
//! MLIR and gpucvt; NumPy's byte-counting typecodes (`f4` = float32, `i8` = int64, `u1` =
//! uint8) are not accepted as such.
//!
//! ```
//! use gpucvt_core::format::{Format, E4M3, BF16};
//! use gpucvt_core::names::NameError;
//! assert_eq!(Format::from_name("float8_e4m3fn").unwrap(), &E4M3);
//! assert_eq!(Format::from_name("F8_E4M3").unwrap(), &E4M3);
//! assert_eq!(Format::from_name("bfloat16").unwrap(), &BF16);
//! assert_eq!(Format::from_name("float8_e4m3").unwrap().name, "e4m3ieee");
//! assert!(matches!(Format::from_name("complex64"), Err(NameError::Unsupported { .. })));
//! let e = Format::from_name("e4m3f").unwrap_err();
//! assert_eq!(e.suggestion(), Some("e4m3"));
//! ```

use crate::format::{self as f, Format, CATALOGUE};
use core::fmt;

/// Which tool a name comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// ml_dtypes, NumPy or PyTorch (`float8_e4m3fn`, `bfloat16`, `half`, `int8`).
    Python,
    /// safetensors dtypes (`F8_E4M3`, `BF16`, `I8`).
    Safetensors,
    /// MLIR builtin types, as CUDA Tile IR writes them (`f8E4M3FN`, `i8`).
    Mlir,
    /// LLVM's APFloat semantics (`Float8E4M3FN`, `IEEEhalf`, `BFloat`).
    Llvm,
}

impl Origin {
    /// A short description for documentation and messages.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Python => "ml_dtypes / NumPy / PyTorch",
            Origin::Safetensors => "safetensors",
            Origin::Mlir => "MLIR / Tile IR",
            Origin::Llvm => "LLVM APFloat",
        }
    }
}

/// Another name for a catalogue format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The name as its tool spells it.
    pub name: &'static str,
    /// The catalogue format it denotes.
    pub format: &'static Format,
    /// The tool it comes from.
    pub origin: Origin,
}

const fn a(name: &'static str, format: &'static Format, origin: Origin) -> Alias {
    Alias {
        name,
        format,
        origin,
    }
}

use Origin::{Llvm, Mlir, Python, Safetensors};

/// Every alias, grouped by format in catalogue order. Names equal to a catalogue name
/// (`f32`, `bf16`, …, which MLIR spells the same) are not repeated here.
pub const ALIASES: &[Alias] = &[
    a("float64", &f::F64, Python),
    a("double", &f::F64, Python),
    a("IEEEdouble", &f::F64, Llvm),
    a("F64", &f::F64, Safetensors),
    a("float32", &f::F32, Python),
    a("F32", &f::F32, Safetensors),
    a("IEEEsingle", &f::F32, Llvm),
    a("float16", &f::F16, Python),
    a("half", &f::F16, Python),
    a("F16", &f::F16, Safetensors),
    a("IEEEhalf", &f::F16, Llvm),
    a("bfloat16", &f::BF16, Python),
    a("BF16", &f::BF16, Safetensors),
    a("BFloat", &f::BF16, Llvm),
    a("float8_e4m3fn", &f::E4M3, Python),
    a("e4m3fn", &f::E4M3, Python),
    a("F8_E4M3", &f::E4M3, Safetensors),
    a("f8E4M3FN", &f::E4M3, Mlir),
    a("Float8E4M3FN", &f::E4M3, Llvm),
    a("float8_e5m2", &f::E5M2, Python),
    a("F8_E5M2", &f::E5M2, Safetensors),
    a("f8E5M2", &f::E5M2, Mlir),
    a("Float8E5M2", &f::E5M2, Llvm),
    a("float8_e4m3", &f::E4M3IEEE, Python),
    a("f8E4M3", &f::E4M3IEEE, Mlir),
    a("Float8E4M3", &f::E4M3IEEE, Llvm),
    a("float8_e3m4", &f::E3M4, Python),
    a("f8E3M4", &f::E3M4, Mlir),
    a("Float8E3M4", &f::E3M4, Llvm),
    a("float8_e4m3fnuz", &f::E4M3FNUZ, Python),
    a("F8_E4M3FNUZ", &f::E4M3FNUZ, Safetensors),
    a("f8E4M3FNUZ", &f::E4M3FNUZ, Mlir),
    a("Float8E4M3FNUZ", &f::E4M3FNUZ, Llvm),
    a("float8_e5m2fnuz", &f::E5M2FNUZ, Python),
    a("F8_E5M2FNUZ", &f::E5M2FNUZ, Safetensors),
    a("f8E5M2FNUZ", &f::E5M2FNUZ, Mlir),
    a("Float8E5M2FNUZ", &f::E5M2FNUZ, Llvm),
    a("float8_e4m3b11fnuz", &f::E4M3B11FNUZ, Python),
    a("f8E4M3B11FNUZ", &f::E4M3B11FNUZ, Mlir),
    a("Float8E4M3B11FNUZ", &f::E4M3B11FNUZ, Llvm),
    a("float6_e2m3fn", &f::E2M3, Python),
    a("e2m3fn", &f::E2M3, Python),
    a("F6_E2M3", &f::E2M3, Safetensors),
    a("f6E2M3FN", &f::E2M3, Mlir),
    a("Float6E2M3FN", &f::E2M3, Llvm),
    a("float6_e3m2fn", &f::E3M2, Python),
    a("e3m2fn", &f::E3M2, Python),
    a("F6_E3M2", &f::E3M2, Safetensors),
    a("f6E3M2FN", &f::E3M2, Mlir),
    a("Float6E3M2FN", &f::E3M2, Llvm),
    a("float4_e2m1fn", &f::E2M1, Python),
    a("e2m1fn", &f::E2M1, Python),
    a("F4", &f::E2M1, Safetensors),
    a("f4E2M1FN", &f::E2M1, Mlir),
    a("Float4E2M1FN", &f::E2M1, Llvm),
    a("float8_e8m0fnu", &f::UE8M0, Python),
    a("e8m0fnu", &f::UE8M0, Python),
    a("e8m0", &f::UE8M0, Python),
    a("F8_E8M0", &f::UE8M0, Safetensors),
    a("f8E8M0FNU", &f::UE8M0, Mlir),
    a("Float8E8M0FNU", &f::UE8M0, Llvm),
    a("int8", &f::S8, Python),
    a("I8", &f::S8, Safetensors),
    a("i8", &f::S8, Mlir),
    a("int16", &f::S16, Python),
    a("I16", &f::S16, Safetensors),
    a("i16", &f::S16, Mlir),
    a("int32", &f::S32, Python),
    a("I32", &f::S32, Safetensors),
    a("i32", &f::S32, Mlir),
    a("int64", &f::S64, Python),
    a("I64", &f::S64, Safetensors),
    a("i64", &f::S64, Mlir),
    a("int4", &f::S4, Python),
    a("i4", &f::S4, Mlir),
    a("int2", &f::S2, Python),
    a("uint8", &f::U8, Python),
    a("U8", &f::U8, Safetensors),
    a("ui8", &f::U8, Mlir),
    a("uint16", &f::U16, Python),
    a("U16", &f::U16, Safetensors),
    a("ui16", &f::U16, Mlir),
    a("uint32", &f::U32, Python),
    a("U32", &f::U32, Safetensors),
    a("ui32", &f::U32, Mlir),
    a("uint64", &f::U64, Python),
    a("U64", &f::U64, Safetensors),
    a("ui64", &f::U64, Mlir),
    a("uint4", &f::U4, Python),
    a("ui4", &f::U4, Mlir),
    a("uint2", &f::U2, Python),
];

/// Names of formats other tools have and gpucvt does not (yet), with what they are: these
/// are refused, never mapped to a lookalike.
pub const UNSUPPORTED: &[(&str, &str)] = &[
    ("bool", "a truth value, not a number format"),
    (
        "i1",
        "MLIR's 1-bit truth value (for 1-bit numbers: s1 or u1)",
    ),
    ("complex64", "a complex type (two f32)"),
    ("complex128", "a complex type (two f64)"),
    ("C64", "safetensors' complex type (two f32)"),
    (
        "float4_e2m1fn_x2",
        "PyTorch's packed pair of e2m1 (one element: e2m1)",
    ),
    (
        "FloatTF32",
        "LLVM's 19-bit TF32 encoding (gpucvt's tf32 is the 32-bit register form: an f32 whose low 13 bits are zero)",
    ),
];

/// Names that mean different formats in different tools.
pub const AMBIGUOUS: &[(&str, &str)] = &[
    (
        "float",
        "float32 (f32) in PyTorch, float64 (f64) in NumPy and Python",
    ),
    ("int", "int64 (s64) in NumPy, int32 (s32) in C"),
    ("long", "int64 (s64) in PyTorch, int32 or int64 in C"),
    (
        "f8",
        "an 8-bit float (e4m3 or e5m2), or NumPy's typecode for float64",
    ),
    ("fp8", "e4m3 (float8_e4m3fn) or e5m2 (float8_e5m2)"),
    ("float8", "e4m3 (float8_e4m3fn) or e5m2 (float8_e5m2)"),
    ("fp6", "e2m3 (float6_e2m3fn) or e3m2 (float6_e3m2fn)"),
    ("float6", "e2m3 (float6_e2m3fn) or e3m2 (float6_e3m2fn)"),
];

/// Why a name does not give a format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    /// No tool gpucvt knows uses the name.
    Unknown {
        /// The name as given.
        name: String,
        /// The nearest known name (catalogue name or alias) and the catalogue format it
        /// denotes, when one is close.
        suggestion: Option<(&'static str, &'static str)>,
    },
    /// A format of another tool that gpucvt does not implement.
    Unsupported {
        /// The name as given.
        name: String,
        /// What the format is.
        what: &'static str,
    },
    /// A name whose meaning depends on the tool.
    Ambiguous {
        /// The name as given.
        name: String,
        /// The meanings.
        meanings: &'static str,
    },
}

impl NameError {
    /// The suggested name for an unknown name.
    pub fn suggestion(&self) -> Option<&'static str> {
        match self {
            NameError::Unknown { suggestion, .. } => suggestion.map(|(s, _)| s),
            _ => None,
        }
    }
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Unknown { name, suggestion } => {
                write!(f, "unknown format {name:?}")?;
                match suggestion {
                    Some((s, c)) if s == c => write!(f, "; did you mean {s:?}?"),
                    Some((s, c)) => write!(f, "; did you mean {s:?} ({c})?"),
                    None => Ok(()),
                }
            }
            NameError::Unsupported { name, what } => {
                write!(f, "format {name:?} is not supported yet: {what}")
            }
            NameError::Ambiguous { name, meanings } => write!(
                f,
                "format name {name:?} is ambiguous: {meanings}; write the exact name"
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// Display names are at most this long in messages (a name is user input of any length).
const ECHO_LIMIT: usize = 64;

fn echo(name: &str) -> String {
    match name.char_indices().nth(ECHO_LIMIT) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    }
}

/// Edit distance (insertions, deletions, substitutions and transpositions of neighbours, each
/// one edit), case-insensitive; `None` once it exceeds `limit`.
fn distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    // Three rows of the table: i − 2, i − 1 and i.
    let mut older: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            let mut d = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            if i > 0 && j > 0 && ca == b[j - 1] && a[i - 1] == cb {
                d = d.min(older[j - 1] + 1);
            }
            cur[j + 1] = d;
        }
        std::mem::swap(&mut older, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= limit).then_some(d)
}

/// Every accepted name with its format: catalogue names first, then the aliases.
pub fn all_names() -> impl Iterator<Item = (&'static str, &'static Format)> {
    CATALOGUE
        .iter()
        .map(|f| (f.name, f))
        .chain(ALIASES.iter().map(|a| (a.name, a.format)))
}

/// The nearest accepted name to `name` (catalogue names win ties), if it is within a third
/// of the name's length (at least 1, at most 3 edits).
fn suggest(name: &str) -> Option<(&'static str, &'static str)> {
    let len = name.chars().count();
    if len > 40 {
        return None;
    }
    let limit = (len / 3).clamp(1, 3);
    let mut best: Option<(usize, &'static str, &'static Format)> = None;
    for (n, f) in all_names() {
        if let Some(d) = distance(name, n, limit) {
            if best.is_none_or(|(bd, _, _)| d < bd) {
                best = Some((d, n, f));
            }
        }
    }
    best.map(|(_, n, f)| (n, f.name))
}

impl Format {
    /// Looks a format up by any accepted name, case-insensitively: a catalogue name or an
    /// alias from ml_dtypes / NumPy / PyTorch, safetensors or MLIR (see [`crate::names`]).
    ///
    /// # Errors
    /// [`NameError::Unsupported`] for another tool's format gpucvt does not have,
    /// [`NameError::Ambiguous`] for a name different tools read differently, and
    /// [`NameError::Unknown`] (with the nearest name, if one is close) otherwise.
    pub fn from_name(name: &str) -> Result<&'static Format, NameError> {
        let name = name.trim();
        if let Some((_, f)) = all_names().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Ok(f);
        }
        if let Some((_, what)) = UNSUPPORTED
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            return Err(NameError::Unsupported {
                name: echo(name),
                what,
            });
        }
        if let Some((_, meanings)) = AMBIGUOUS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Err(NameError::Ambiguous {
                name: echo(name),
                meanings,
            });
        }
        Err(NameError::Unknown {
            name: echo(name),
            suggestion: suggest(name),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;

    #[test]
    fn catalogue_names_round_trip() {
        for f in CATALOGUE {
            assert_eq!(Format::from_name(f.name).unwrap(), f);
            assert_eq!(Format::from_name(&f.name.to_uppercase()).unwrap(), f);
        }
    }

    #[test]
    fn names_are_consistent() {
        // Matching ignores case: spellings that differ only in case (safetensors `I8`, MLIR
        // `i8`) must denote the same format, and a refused name must not be an accepted one.
        for (n, f) in all_names() {
            for (m, g) in all_names() {
                if n.eq_ignore_ascii_case(m) {
                    assert_eq!(f, g, "{n} / {m}");
                }
            }
        }
        let refused: Vec<&str> = UNSUPPORTED
            .iter()
            .chain(AMBIGUOUS)
            .map(|(n, _)| *n)
            .collect();
        for (i, r) in refused.iter().enumerate() {
            assert!(all_names().all(|(n, _)| !n.eq_ignore_ascii_case(r)), "{r}");
            assert!(
                refused[i + 1..].iter().all(|s| !s.eq_ignore_ascii_case(r)),
                "{r}"
            );
        }
    }

    /// Facts each alias's tool documents: width, largest finite value's bits, infinities,
    /// NaNs, signedness. An alias that pointed at a lookalike would fail one of them.
    #[test]
    fn aliases_denote_their_tools_formats() {
        struct Fact {
            bits: u32,
            max: u64,
            inf: bool,
            nan: Option<u64>,
            signed: bool,
        }
        let fact = |name: &str| -> Fact {
            let lower = name.to_ascii_lowercase();
            match lower.as_str() {
                // float8_e4m3fn: max 448 = 0x7e, NaN 0x7f, no inf.
                "float8_e4m3fn" | "e4m3fn" | "f8_e4m3" | "f8e4m3fn" | "float8e4m3fn" => Fact {
                    bits: 8,
                    max: 0x7e,
                    inf: false,
                    nan: Some(0x7f),
                    signed: true,
                },
                // float8_e4m3 (IEEE-style): max 240 = 0x77, inf 0x78.
                "float8_e4m3" | "f8e4m3" | "float8e4m3" => Fact {
                    bits: 8,
                    max: 0x77,
                    inf: true,
                    nan: Some(0x7f),
                    signed: true,
                },
                // float8_e3m4: max 15.5 = 0x6f, inf 0x70.
                "float8_e3m4" | "f8e3m4" | "float8e3m4" => Fact {
                    bits: 8,
                    max: 0x6f,
                    inf: true,
                    nan: Some(0x7f),
                    signed: true,
                },
                // The fnuz formats: max 0x7f (240, 57344, 30), the one NaN 0x80, no inf.
                "float8_e4m3fnuz" | "f8e4m3fnuz" | "f8_e4m3fnuz" | "float8_e5m2fnuz"
                | "f8e5m2fnuz" | "f8_e5m2fnuz" | "float8_e4m3b11fnuz" | "f8e4m3b11fnuz"
                | "float8e4m3fnuz" | "float8e5m2fnuz" | "float8e4m3b11fnuz" => Fact {
                    bits: 8,
                    max: 0x7f,
                    inf: false,
                    nan: Some(0x80),
                    signed: true,
                },
                // float8_e5m2: max 57344 = 0x7b, inf 0x7c.
                "float8_e5m2" | "f8_e5m2" | "f8e5m2" | "float8e5m2" => Fact {
                    bits: 8,
                    max: 0x7b,
                    inf: true,
                    nan: Some(0x7f),
                    signed: true,
                },
                // float6_e2m3fn: max 7.5 = 0x1f, finite only.
                "float6_e2m3fn" | "e2m3fn" | "f6_e2m3" | "f6e2m3fn" | "float6e2m3fn" => Fact {
                    bits: 6,
                    max: 0x1f,
                    inf: false,
                    nan: None,
                    signed: true,
                },
                // float6_e3m2fn: max 28 = 0x1f.
                "float6_e3m2fn" | "e3m2fn" | "f6_e3m2" | "f6e3m2fn" | "float6e3m2fn" => Fact {
                    bits: 6,
                    max: 0x1f,
                    inf: false,
                    nan: None,
                    signed: true,
                },
                // float4_e2m1fn: max 6 = 0x7.
                "float4_e2m1fn" | "e2m1fn" | "f4" | "f4e2m1fn" | "float4e2m1fn" => Fact {
                    bits: 4,
                    max: 0x7,
                    inf: false,
                    nan: None,
                    signed: true,
                },
                // float8_e8m0fnu: unsigned, max 2^127 = 0xfe, NaN 0xff.
                "float8_e8m0fnu" | "e8m0fnu" | "e8m0" | "f8_e8m0" | "f8e8m0fnu"
                | "float8e8m0fnu" => Fact {
                    bits: 8,
                    max: 0xfe,
                    inf: false,
                    nan: Some(0xff),
                    signed: false,
                },
                "float64" | "double" | "f64" | "ieeedouble" => Fact {
                    bits: 64,
                    max: 0x7fef_ffff_ffff_ffff,
                    inf: true,
                    nan: Some(0x7fff_ffff_ffff_ffff),
                    signed: true,
                },
                "float32" | "f32" | "ieeesingle" => Fact {
                    bits: 32,
                    max: 0x7f7f_ffff,
                    inf: true,
                    nan: Some(0x7fff_ffff),
                    signed: true,
                },
                "float16" | "half" | "f16" | "ieeehalf" => Fact {
                    bits: 16,
                    max: 0x7bff,
                    inf: true,
                    nan: Some(0x7fff),
                    signed: true,
                },
                "bfloat16" | "bf16" | "bfloat" => Fact {
                    bits: 16,
                    max: 0x7f7f,
                    inf: true,
                    nan: Some(0x7fff),
                    signed: true,
                },
                _ => {
                    // Integers: intN / IN / iN signed, uintN / UN / uiN unsigned.
                    let signed = !lower.starts_with('u');
                    let digits: String = lower.chars().filter(char::is_ascii_digit).collect();
                    let bits: u32 = digits.parse().expect(name);
                    Fact {
                        bits,
                        max: if signed {
                            (1u64 << (bits - 1)) - 1
                        } else {
                            u64::MAX >> (64 - bits)
                        },
                        inf: false,
                        nan: None,
                        signed,
                    }
                }
            }
        };
        for al in ALIASES {
            let f = Format::from_name(al.name).unwrap();
            assert_eq!(f, al.format);
            let want = fact(al.name);
            assert_eq!(f.width(), want.bits, "{}", al.name);
            assert_eq!(f.max_finite_bits(), want.max, "{}", al.name);
            assert_eq!(f.has_infinity(), want.inf, "{}", al.name);
            assert_eq!(f.canonical_nan(), want.nan, "{}", al.name);
            assert_eq!(f.is_signed(), want.signed, "{}", al.name);
            // Integers are intN, IN, iN, uintN, UN, uiN (LLVM's IEEEhalf … are floats).
            let lower = al.name.to_ascii_lowercase();
            if !lower.contains("int")
                && (lower.starts_with("ieee")
                    || !matches!(al.name.as_bytes()[0], b'i' | b'I' | b'u' | b'U'))
            {
                assert!(f.is_float(), "{}", al.name);
            } else {
                assert!(f.is_integer(), "{}", al.name);
            }
        }
    }

    #[test]
    fn lookalikes_are_refused() {
        for n in ["bool", "complex64", "C64", "float4_e2m1fn_x2", "i1"] {
            let e = Format::from_name(n).unwrap_err();
            assert!(matches!(e, NameError::Unsupported { .. }), "{n}: {e}");
            assert!(e.to_string().contains("not supported yet"), "{e}");
        }
        let e = Format::from_name("float").unwrap_err();
        assert!(matches!(e, NameError::Ambiguous { .. }), "{e}");
    }

    #[test]
    fn ml_dtypes_names_denote_their_formats() {
        // ml_dtypes' IEEE-style float8_e4m3 is not OCP e4m3 (float8_e4m3fn).
        for (n, f) in [
            ("float8_e4m3", &E4M3IEEE),
            ("F8E4M3", &E4M3IEEE),
            ("e4m3ieee", &E4M3IEEE),
            ("e4m3", &E4M3),
            ("e4m3fn", &E4M3),
            ("f8_e4m3", &E4M3),
            ("float8_e3m4", &E3M4),
            ("float8_e4m3fnuz", &E4M3FNUZ),
            ("f8E4M3FNUZ", &E4M3FNUZ),
            ("float8_e5m2fnuz", &E5M2FNUZ),
            ("float8_e4m3b11fnuz", &E4M3B11FNUZ),
            ("int4", &S4),
            ("uint4", &U4),
            ("int2", &S2),
            ("uint2", &U2),
        ] {
            assert_eq!(Format::from_name(n).unwrap(), f, "{n}");
        }
    }

    #[test]
    fn unknown_names_get_the_nearest() {
        let e = Format::from_name("bfloat61").unwrap_err();
        assert_eq!(e.suggestion(), Some("bfloat16"));
        assert_eq!(
            e.to_string(),
            "unknown format \"bfloat61\"; did you mean \"bfloat16\" (bf16)?"
        );
        assert_eq!(
            Format::from_name("float8_e4m3f").unwrap_err().suggestion(),
            Some("float8_e4m3fn")
        );
        assert_eq!(
            Format::from_name("e4m2").unwrap_err().suggestion(),
            Some("e4m3")
        );
        assert_eq!(
            Format::from_name("zzzzzzzz").unwrap_err().suggestion(),
            None
        );
        // A long name is echoed shortened.
        let long = "x".repeat(10_000);
        let msg = Format::from_name(&long).unwrap_err().to_string();
        assert!(msg.len() < 120, "{msg}");
    }
}
