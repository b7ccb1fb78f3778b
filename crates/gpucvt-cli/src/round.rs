//! `gpucvt round`: convert one number (or one bit pattern) to a format, optionally with the
//! steps explained. The options are read here; the checks, the conversion and the report
//! (text, `--explain`, `--json`) are the library's [`gpucvt::round`], which the Python
//! package's `gpucvt.round` calls too.

use crate::args::{self, IntNanArg, NanArg, OverflowArg, PolicyFlags};
use crate::common::CliError;
use crate::input::lookup_format;
use crate::output::to_json;
use gpucvt::core::convert::{IntNan, NanResult, Overflow};
use gpucvt::core::round::Rounding;
use gpucvt::round::{Request, MAX_SCALE};
/// Options of `gpucvt round`.
#[derive(clap::Args, Debug)]
#[command(
    // The source: a number or --bits, exactly one.
    group(clap::ArgGroup::new("source").args(["number", "bits"]).required(true)),
    mut_arg("sat", |a| a.conflicts_with("satfinite")),
    mut_arg("ftz", |a| a.help(".ftz: flush subnormal inputs (of --from) and subnormal results to zero")),
)]
pub struct Args {
    /// The number: a decimal (3.14159, -1e-3, .5, 1E+10), a hexadecimal float (0x1.8p3,
    /// -0x.8p-2), a binary number (0b1.1p-3), inf, infinity or nan. Omit it with --bits.
    #[arg(value_name = "NUMBER", allow_hyphen_values = true)]
    pub number: Option<String>,
    /// Destination format (required; see `gpucvt formats`).
    #[arg(long, value_name = "FMT")]
    pub to: String,
    /// Rounding mode: rn, rna, rz, rm, rp, rs (stochastic, needs --rbits), rni, rzi, rmi,
    /// rpi (to an integral value).
    // ignore_case: `--mode RS` also makes --rbits required (required_if_eq).
    #[arg(long, value_name = "MODE", default_value = "rn", value_parser = args::rounding(), ignore_case = true)]
    pub mode: Rounding,
    /// Source format: the number is first rounded to it with rn, then converted from its bits.
    #[arg(long, value_name = "FMT")]
    pub from: Option<String>,
    /// A raw bit pattern of the --from format (0x…, 0b…, 0o… or decimal) instead of a number.
    #[arg(long, value_name = "PATTERN", requires = "from")]
    pub bits: Option<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
    /// The random bits of --mode rs (0x…, 0b…, 0o… or decimal; only with --mode rs).
    #[arg(long, value_name = "PATTERN", required_if_eq("mode", "rs"))]
    pub rbits: Option<String>,
    /// How many random bits --rbits has, 1 to 64 (default 32).
    #[arg(long, value_name = "N", requires = "rbits", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub rbits_width: Option<u32>,
    /// Float overflow without --satfinite: ieee (infinity or largest finite, by direction;
    /// the default), saturate (always the largest finite value) or infinite (always infinity,
    /// NaN without one, whatever the direction: AMD FP8). Float destinations only.
    #[arg(
        long,
        value_name = "ieee|saturate|infinite",
        value_enum,
        ignore_case = true
    )]
    pub overflow: Option<OverflowArg>,
    /// A NaN into a float destination with NaNs: canonical (the default) or payload (keep the
    /// sign and the payload). Float destinations only.
    #[arg(long, value_name = "canonical|payload", value_enum, ignore_case = true)]
    pub nan: Option<NanArg>,
    /// A NaN into an integer or fixed-point destination: zero (the default) or highbit
    /// (1 << (width - 1)).
    #[arg(long, value_name = "zero|highbit", value_enum, ignore_case = true)]
    pub int_nan: Option<IntNanArg>,
    /// Integer and fixed-point results out of range keep their low bits instead of clamping.
    #[arg(long, conflicts_with_all = ["sat", "satfinite"])]
    pub wrap: bool,
    /// Multiply the value by 2^K before rounding (exact), |K| <= 100000.
    #[arg(
        long,
        value_name = "K",
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(i32).range(-(MAX_SCALE as i64)..=MAX_SCALE as i64)
    )]
    pub scale: Option<i32>,
    /// Explain the steps: the exact source, its two neighbours in the destination, why one
    /// was chosen, and every policy event.
    #[arg(long)]
    pub explain: bool,
    /// Print JSON (see docs/json.md).
    #[arg(long)]
    pub json: bool,
}

/// Runs `gpucvt round`.
pub fn run(a: &Args) -> Result<String, CliError> {
    let p = &a.policy;
    let req = Request {
        number: a.number.clone(),
        bits: a.bits.clone(),
        to: lookup_format(&a.to, "--to")?,
        from: a
            .from
            .as_deref()
            .map(|n| lookup_format(n, "--from"))
            .transpose()?,
        mode: a.mode,
        rbits: a.rbits.clone(),
        rbits_width: a.rbits_width.map(i64::from),
        satfinite: p.satfinite,
        sat: p.sat,
        relu: p.relu,
        ftz: p.ftz,
        pzo: p.pzo,
        wrap: a.wrap,
        overflow: a.overflow.map(Overflow::from),
        nan: a.nan.map(NanResult::from),
        int_nan: a.int_nan.map(IntNan::from),
        scale: a.scale.map(i64::from),
        explain: a.explain,
    };
    let report = req.run().map_err(|e| CliError(e.to_string()))?;
    if a.json {
        return to_json(&report);
    }
    Ok(report.text())
}
