//! `gpucvt values <format>`: every encoding of a format of at most 16 bits.

use crate::common::{class_name, fail, CliError};
use crate::input::{formats_up_to, lookup_format};
use crate::output::{table, to_json};
use gpucvt::text::{format_bits, to_decimal};
use serde::Serialize;

/// The widest format `values` lists.
pub const MAX_BITS: u32 = 16;

/// Options of `gpucvt values`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The format (at most 16 bits wide; see `gpucvt formats`).
    #[arg(value_name = "FORMAT")]
    pub format: String,
    /// Print JSON (see docs/json.md) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One encoding.
#[derive(Serialize)]
pub struct Entry {
    /// The encoding, hexadecimal, padded to the format's width.
    pub bits: String,
    /// `zero`, `subnormal`, `normal`, `infinity`, `nan` or (integers, fixed point) `finite`.
    pub class: &'static str,
    /// The exact decimal value (`nan`/`-nan`, `inf`/`-inf`, `-0` for negative zero).
    pub value: String,
}

/// `values --json`.
#[derive(Serialize)]
pub struct Listing {
    /// The format's name.
    pub format: &'static str,
    /// Its width in bits.
    pub bits: u32,
    /// Every encoding, in increasing order of the bits.
    pub values: Vec<Entry>,
}

/// Runs `gpucvt values`.
pub fn run(args: &Args) -> Result<String, CliError> {
    let f = lookup_format(&args.format, "values")?;
    let w = f.width();
    if w > MAX_BITS {
        return fail(format!(
            "values: {} has {w} bits, too many to list; accepted: formats of at most \
             {MAX_BITS} bits ({})",
            f.name,
            formats_up_to(MAX_BITS)
        ));
    }
    let values: Vec<Entry> = (0..=f.mask())
        .map(|bits| Entry {
            bits: format_bits(bits, w),
            class: class_name(f, bits),
            value: to_decimal(&f.decode(bits)),
        })
        .collect();
    if args.json {
        return to_json(&Listing {
            format: f.name,
            bits: w,
            values,
        });
    }
    let rows: Vec<Vec<String>> = values
        .into_iter()
        .map(|e| vec![e.bits, e.class.to_string(), e.value])
        .collect();
    Ok(table(&["bits", "class", "value"], &rows))
}
