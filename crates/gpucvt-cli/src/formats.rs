//! `gpucvt formats`: the catalogue as a table.

use crate::common::{compact, CliError};
use crate::output::{table, to_json};
use gpucvt::core::format::{Format, Layout, Specials, CATALOGUE};
use gpucvt::text::{format_bits, to_decimal};
use serde::Serialize;

/// Options of `gpucvt formats`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON (see docs/json.md) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One encoding and its value.
#[derive(Serialize)]
pub struct Sample {
    /// The encoding, hexadecimal, padded to the format's width.
    pub bits: String,
    /// The exact decimal value.
    pub value: String,
}

/// How a format encodes NaN.
#[derive(Serialize)]
pub struct NanInfo {
    /// `ieee` (all-ones exponent, non-zero mantissa), `listed` (only the encodings in
    /// `ranges`) or `none`.
    pub rule: &'static str,
    /// The canonical NaN encoding, or null.
    pub canonical: Option<String>,
    /// Inclusive ranges `[first, last]` of every NaN encoding.
    pub ranges: Vec<[String; 2]>,
    /// The number of NaN encodings.
    pub count: u64,
}

/// One catalogue entry, as `formats --json` prints it.
#[derive(Serialize)]
pub struct FormatInfo {
    /// The catalogue name.
    pub name: &'static str,
    /// Width of an encoding in bits.
    pub bits: u32,
    /// `float`, `fixed` or `integer`.
    pub kind: &'static str,
    /// A one-line description of the layout (`s e4 m3`, `s8 fixed, 6 fraction bits`).
    pub layout: String,
    /// Whether negative values can be encoded.
    pub signed: bool,
    /// Exponent field width (floats), else null.
    pub exponent_bits: Option<u32>,
    /// Stored mantissa width (floats), else null.
    pub mantissa_bits: Option<u32>,
    /// Always-zero low padding bits (floats; 13 for `tf32`), else null.
    pub padding_bits: Option<u32>,
    /// Exponent bias (floats), else null.
    pub bias: Option<i32>,
    /// Fraction bits (fixed point and integers), else null.
    pub fraction_bits: Option<u32>,
    /// The smallest positive subnormal, or null if the format has no subnormals.
    pub min_subnormal: Option<Sample>,
    /// The smallest positive normal (floats), else null.
    pub min_normal: Option<Sample>,
    /// The smallest positive value.
    pub min_positive: Sample,
    /// The largest finite value.
    pub max_finite: Sample,
    /// The most negative finite value, or null for unsigned formats.
    pub min_finite: Option<Sample>,
    /// The encodings of zero (empty for `ue8m0`).
    pub zeros: Vec<String>,
    /// The encodings of +∞ and −∞ (empty without infinities).
    pub infinities: Vec<String>,
    /// NaN encodings.
    pub nan: NanInfo,
}

fn sample(f: &Format, bits: u64) -> Sample {
    Sample {
        bits: format_bits(bits, f.width()),
        value: to_decimal(&f.decode(bits)),
    }
}

fn with_sign(f: &Format, bits: u64) -> Vec<String> {
    let w = f.width();
    let mut v = vec![format_bits(bits, w)];
    if f.is_float() && (bits != 0 || f.has_negative_zero()) {
        if let Some(s) = f.sign_bit() {
            v.push(format_bits(bits | s, w));
        }
    }
    v
}

fn nan_info(f: &Format) -> NanInfo {
    let w = f.width();
    let (rule, first) = match f.layout {
        Layout::Float(l) => match (l.specials, f.infinity(), f.canonical_nan()) {
            (Specials::Ieee, Some(inf), Some(_)) => ("ieee", Some(inf | (1u64 << l.pad_bits))),
            (Specials::NanOnly | Specials::Fnuz, _, Some(c)) => ("listed", Some(c)),
            _ => ("none", None),
        },
        Layout::Fixed(_) => ("none", None),
    };
    let (Some(first), Some(last)) = (first, f.canonical_nan()) else {
        return NanInfo {
            rule,
            canonical: None,
            ranges: Vec::new(),
            count: 0,
        };
    };
    let mut ranges = vec![(first, last)];
    // (The fnuz formats' one NaN is the sign bit itself.)
    match f.sign_bit() {
        Some(s) if first & s == 0 => ranges.push((first | s, last | s)),
        _ => {}
    }
    NanInfo {
        rule,
        canonical: Some(format_bits(last, w)),
        count: ranges.iter().map(|(a, b)| b - a + 1).sum(),
        ranges: ranges
            .into_iter()
            .map(|(a, b)| [format_bits(a, w), format_bits(b, w)])
            .collect(),
    }
}

/// The description of one format.
pub fn info(f: &Format) -> FormatInfo {
    let (kind, exponent_bits, mantissa_bits, padding_bits, bias, fraction_bits) = match f.layout {
        Layout::Float(l) => (
            "float",
            Some(l.exp_bits),
            Some(l.man_bits),
            Some(l.pad_bits),
            Some(l.bias),
            None,
        ),
        Layout::Fixed(l) => (
            if l.frac_bits == 0 { "integer" } else { "fixed" },
            None,
            None,
            None,
            None,
            Some(l.frac_bits),
        ),
    };
    FormatInfo {
        name: f.name,
        bits: f.width(),
        kind,
        layout: f.layout_text(),
        signed: f.is_signed(),
        exponent_bits,
        mantissa_bits,
        padding_bits,
        bias,
        fraction_bits,
        min_subnormal: f.has_subnormals().then(|| sample(f, f.min_positive_bits())),
        min_normal: f.min_normal_bits().map(|b| sample(f, b)),
        min_positive: sample(f, f.min_positive_bits()),
        max_finite: sample(f, f.max_finite_bits()),
        min_finite: f.min_finite_bits().map(|b| sample(f, b)),
        zeros: match f.zero_bits() {
            Some(z) => with_sign(f, z),
            None => Vec::new(),
        },
        infinities: match f.infinity() {
            Some(i) => with_sign(f, i),
            None => Vec::new(),
        },
        nan: nan_info(f),
    }
}

/// Runs `gpucvt formats`.
pub fn run(args: &Args) -> Result<String, CliError> {
    let infos: Vec<FormatInfo> = CATALOGUE.iter().map(info).collect();
    if args.json {
        return to_json(&infos);
    }
    let dash = || "-".to_string();
    let rows: Vec<Vec<String>> = CATALOGUE
        .iter()
        .zip(&infos)
        .map(|(f, i)| {
            let value = |s: &Option<Sample>, bits: Option<u64>| match (s, bits) {
                (Some(_), Some(b)) => compact(&f.decode(b)),
                _ => dash(),
            };
            let nan = match i.nan.rule {
                "ieee" => format!(
                    "ieee, canonical {}",
                    i.nan.canonical.clone().unwrap_or_default()
                ),
                "listed" => i
                    .nan
                    .ranges
                    .iter()
                    .map(|r| r[0].clone())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => "no".to_string(),
            };
            let zero = match (f.has_zero(), f.is_float(), f.has_negative_zero()) {
                (false, _, _) => "no",
                (true, true, true) => "+0 -0",
                (true, true, false) => "+0",
                (true, false, _) => "0",
            };
            vec![
                f.name.to_string(),
                f.width().to_string(),
                i.layout.clone(),
                i.bias.map_or_else(dash, |b| b.to_string()),
                value(&i.min_subnormal, Some(f.min_positive_bits())),
                value(&i.min_normal, f.min_normal_bits()),
                compact(&f.decode(f.max_finite_bits())),
                if f.has_infinity() { "yes" } else { "no" }.to_string(),
                nan,
                zero.to_string(),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "name",
            "bits",
            "layout",
            "bias",
            "min subnormal",
            "min normal",
            "max finite",
            "inf",
            "nan",
            "zero",
        ],
        &rows,
    );
    out.push_str(
        "\nValues are exact decimals; ~ marks a value rounded to 8 significant digits \
         (gpucvt formats --json has them all exactly).\n\
         nan: ieee = an all-ones exponent with a non-zero mantissa, either sign; \
         otherwise the NaN encodings are listed.\n",
    );
    Ok(out)
}
