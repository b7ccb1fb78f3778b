//! `gpucvt round`: convert one number (or one bit pattern) to a format, optionally with the
//! steps explained.

use crate::args::{self, IntNanArg, NanArg, OverflowArg, PolicyFlags};
use crate::common::{class_name, fail, CliError};
use crate::input::lookup_format;
use crate::output::to_json;
use gpucvt::core::convert::{
    convert, convert_traced, Conversion, Event, Flags, IntNan, IntOverflow, NanResult, Overflow,
    Policy, Trace,
};
use gpucvt::core::format::Format;
use gpucvt::core::round::{Direction, Magnitude, Rounded, Rounding, Why};
use gpucvt::core::value::{Class, Value};
use gpucvt::text::{
    difference, format_bits, parse_bits, parse_bits_named, parse_number, to_decimal, to_short,
    Parsed, ODD_BITS,
};
use serde::Serialize;

/// The largest `|K|` of `--scale K`.
pub const MAX_SCALE: i32 = 100_000;

/// What number literals look like, for error messages.
const NUMBER_SYNTAX: &str = "accepted: a decimal (3.14159, -1e-3, .5), a hexadecimal float \
                             (0x1.8p3), a binary number (0b1.1), inf, infinity or nan";

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
    /// the default) or saturate (always the largest finite value). Float destinations only.
    #[arg(long, value_name = "ieee|saturate", value_enum, ignore_case = true)]
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

/// The validated request.
struct Request {
    to: &'static Format,
    from: Option<&'static Format>,
    rounding: Rounding,
    policy: Policy,
}

/// The rounding mode in words.
fn mode_words(r: &Rounding) -> &'static str {
    match (r.direction, r.integral) {
        (Direction::NearestEven, false) => "to nearest, ties to even",
        (Direction::NearestAway, false) => "to nearest, ties away from zero",
        (Direction::TowardZero, false) => "toward zero",
        (Direction::Down, false) => "toward -inf",
        (Direction::Up, false) => "toward +inf",
        (Direction::Stochastic { .. }, false) => "stochastic",
        (Direction::NearestEven, true) => "to an integral value, nearest even",
        (Direction::NearestAway, true) => "to an integral value, nearest, ties away",
        (Direction::TowardZero, true) => "to an integral value toward zero",
        (Direction::Down, true) => "to an integral value toward -inf",
        (Direction::Up, true) => "to an integral value toward +inf",
        (Direction::Stochastic { .. }, true) => "to an integral value, stochastic",
    }
}

/// What clap cannot check: the format names, the options that depend on the destination's
/// kind or on the mode's value, and the random bits' width.
fn validate(a: &Args) -> Result<Request, CliError> {
    let to = lookup_format(&a.to, "--to")?;
    let from = a
        .from
        .as_deref()
        .map(|n| lookup_format(n, "--from"))
        .transpose()?;
    let p = &a.policy;
    if to.is_float() {
        for (given, name) in [(a.wrap, "--wrap"), (a.int_nan.is_some(), "--int-nan")] {
            if given {
                return fail(format!(
                    "{name} applies to integer and fixed-point destinations only, and {} is a \
                     float format; accepted for {}: --sat, --satfinite, --relu, --ftz, --pzo, \
                     --overflow, --nan, --scale",
                    to.name, to.name
                ));
            }
        }
    } else {
        let kind = if to.is_integer() {
            "an integer"
        } else {
            "a fixed-point format"
        };
        for (given, name) in [
            (p.relu, "--relu"),
            (p.pzo, "--pzo"),
            (a.overflow.is_some(), "--overflow"),
            (a.nan.is_some(), "--nan"),
        ] {
            if given {
                return fail(format!(
                    "{name} applies to float destinations only, and {} is {kind}; accepted \
                     for {}: --sat, --satfinite, --wrap, --int-nan, --scale",
                    to.name, to.name
                ));
            }
        }
    }

    // clap requires --rbits with --mode rs; the reverse depends on the mode's value.
    let mut rounding = a.mode;
    if let Some(random) = &a.rbits {
        if !matches!(rounding.direction, Direction::Stochastic { .. }) {
            return fail(format!(
                "--rbits is only valid with --mode rs (got --mode {}); accepted: --mode rs \
                 --rbits <PATTERN> [--rbits-width N]",
                rounding.name()
            ));
        }
        let width = a.rbits_width.unwrap_or(32);
        let bits = parse_bits_named(random, width, "--rbits (see --rbits-width)").map_err(|e| {
            CliError(format!(
                "{e}; accepted: a pattern of at most {width} bits (0x…, 0b…, 0o… or decimal)"
            ))
        })?;
        rounding = Rounding::stochastic(bits, width);
    }

    let policy = Policy {
        flush_inputs: p.ftz,
        flush_outputs: p.ftz,
        sat: p.sat,
        satfinite: p.satfinite,
        relu: p.relu,
        positive_zero: p.pzo,
        overflow: a.overflow.map(Overflow::from).unwrap_or_default(),
        nan: a.nan.map(NanResult::from).unwrap_or_default(),
        int_nan: a.int_nan.map(IntNan::from).unwrap_or_default(),
        int_overflow: if a.wrap {
            IntOverflow::Wrap
        } else {
            IntOverflow::Clamp
        },
        scale: a.scale.unwrap_or(0),
    };
    Ok(Request {
        to,
        from,
        rounding,
        policy,
    })
}

/// An exact value in decimal and as a hexadecimal float.
#[derive(Serialize)]
pub struct Exact {
    /// The exact decimal.
    pub value: String,
    /// The hexadecimal float (`0x1.8p+1`, `inf`, `nan(0x…)`).
    pub hex: String,
}

fn exact(v: &Value) -> Exact {
    Exact {
        value: to_decimal(v),
        hex: v.to_string(),
    }
}

/// An encoding of a format with its value, class and flags.
#[derive(Serialize)]
pub struct Encoded {
    /// The format's name.
    pub format: &'static str,
    /// The encoding, hexadecimal, padded to the format's width.
    pub bits: String,
    /// The exact decimal value.
    pub value: String,
    /// The hexadecimal float.
    pub hex: String,
    /// `zero`, `subnormal`, `normal`, `infinity`, `nan` or `finite`.
    pub class: &'static str,
    /// The status flags of the conversion that produced it (`inexact`, `overflow`,
    /// `underflow`, `saturated`, `flushed`, `invalid`), in that order.
    pub flags: Vec<&'static str>,
}

fn encoded(f: &'static Format, bits: u64, flags: Flags) -> Encoded {
    let v = f.decode(bits);
    Encoded {
        format: f.name,
        bits: format_bits(bits, f.width()),
        value: to_decimal(&v),
        hex: v.to_string(),
        class: class_name(f, bits),
        flags: flags.names(),
    }
}

/// What was given.
#[derive(Serialize)]
pub struct Input {
    /// The number as given, or null with `--bits`.
    pub text: Option<String>,
    /// `--bits`, normalised to hexadecimal padded to the `--from` width, or null.
    pub bits: Option<String>,
    /// `--from`, or null.
    pub from: Option<&'static str>,
    /// The value of the number (or of `--bits`) as gpucvt holds it.
    pub value: Exact,
    /// Whether `value` is exactly the number given (`false`: it is the round-to-odd at 126
    /// bits of a number that is not a dyadic rational or has more than 128 bits).
    pub exact: bool,
    /// With a number and `--from`: the number rounded (rn) to `--from`; the conversion
    /// starts from these bits. Null otherwise.
    pub from_step: Option<Encoded>,
}

/// The policy in effect: the core's [`Policy`] as it serializes itself (`flush_inputs`,
/// `flush_outputs`, `sat`, `satfinite`, `relu`, `positive_zero`, `overflow`: `ieee` or
/// `saturate`, `nan`: `canonical` or `payload`, `int_nan`: `zero` or `highbit`,
/// `int_overflow`: `clamp` or `wrap`, `scale`), then the random bits.
#[derive(Serialize)]
pub struct PolicyJson {
    /// The policy's fields.
    #[serde(flatten)]
    pub policy: Policy,
    /// With `--mode rs`: the random bits and their width; null otherwise.
    pub random: Option<RandomJson>,
}

/// The random bits of stochastic rounding.
#[derive(Serialize)]
pub struct RandomJson {
    /// The bits, hexadecimal, padded to the width.
    pub bits: String,
    /// Their number.
    pub width: u32,
}

/// One neighbour of the rounded value in the destination.
#[derive(Serialize)]
pub struct Neighbour {
    /// Its exact decimal value (with the sign of the rounded value).
    pub value: String,
    /// Its encoding, or null when the destination cannot encode it.
    pub bits: Option<String>,
    /// Why there is no encoding (beyond the largest finite value, …), or null.
    pub note: Option<String>,
}

/// The stochastic rounding decision.
#[derive(Serialize)]
pub struct StochasticJson {
    /// The discarded part as a `width`-bit fraction of the gap between the neighbours.
    pub fraction: String,
    /// The random bits used.
    pub random: String,
    /// The number of bits of both.
    pub width: u32,
    /// Whether `fraction + random` carried out of `width` bits (away from zero).
    pub carry: bool,
}

/// The rounding step.
#[derive(Serialize)]
pub struct RoundingJson {
    /// The value that was rounded (after `--scale` and clamps), with its sign.
    pub rounded: Exact,
    /// The neighbour toward zero; null when there is nothing there (a format without zero).
    pub toward_zero: Option<Neighbour>,
    /// The neighbour away from zero (equal to `toward_zero` when the value is exact).
    pub away_from_zero: Neighbour,
    /// `toward_zero` or `away_from_zero`.
    pub chosen: &'static str,
    /// `exact`, `nearer`, `tie-even`, `tie-away`, `directed`, `stochastic` or `forced`.
    pub why: &'static str,
    /// The reason in words.
    pub reason: String,
    /// With `--mode rs`: the decision; null otherwise.
    pub stochastic: Option<StochasticJson>,
}

/// One policy event.
#[derive(Serialize)]
pub struct EventJson {
    /// A stable identifier (`rounded`, `overflow-to-max`, …; see docs/json.md).
    pub event: &'static str,
    /// The event in words.
    pub text: String,
}

/// The explanation (`--explain`).
#[derive(Serialize)]
pub struct Explain {
    /// The value the conversion starts from (decoded from the source bits with `--from`).
    pub source: Exact,
    /// The rounding step, or null when nothing was rounded (NaN, infinity, zero, clamps).
    pub rounding: Option<RoundingJson>,
    /// What happened, in order.
    pub events: Vec<EventJson>,
}

/// `round --json`.
#[derive(Serialize)]
pub struct Report {
    /// What was given.
    pub input: Input,
    /// The destination format.
    pub to: &'static str,
    /// The rounding mode's name.
    pub mode: &'static str,
    /// The policy.
    pub policy: PolicyJson,
    /// The destination encoding.
    pub result: Encoded,
    /// Only with `--explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

fn policy_json(p: &Policy, r: &Rounding) -> PolicyJson {
    PolicyJson {
        policy: *p,
        random: match r.direction {
            Direction::Stochastic { random, width } => Some(RandomJson {
                bits: format_bits(random, width),
                width,
            }),
            _ => None,
        },
    }
}

/// The signed value of a neighbour magnitude.
fn signed(negative: bool, m: &Magnitude) -> Value {
    Value::finite(negative, m.m, m.q)
}

fn neighbour(to: &Format, negative: bool, m: &Magnitude, huge: bool) -> Neighbour {
    let v = signed(negative, m);
    let max = to.decode(to.max_finite_bits());
    let bits = if huge { None } else { to.encode(&v) };
    let note = match bits {
        Some(_) => None,
        None => {
            let beyond = huge
                || match (v.class, max.class) {
                    (Class::Finite(d), Class::Finite(mx)) => {
                        d.cmp_value(&mx) == core::cmp::Ordering::Greater
                    }
                    _ => false,
                };
            Some(if beyond {
                format!(
                    "beyond the largest finite value {} of {}: no encoding",
                    to_decimal(&max),
                    to.name
                )
            } else {
                format!("not representable in {}", to.name)
            })
        }
    };
    Neighbour {
        value: if huge {
            format!("{}(beyond 2^127)", if negative { "-" } else { "" })
        } else {
            to_decimal(&v)
        },
        bits: bits.map(|b| format_bits(b, to.width())),
        note,
    }
}

/// `|a − b|` in short form, for the explanation of a nearest rounding.
fn distance(a: &Value, b: &Value) -> String {
    match difference(a, b) {
        Some(Parsed { value, .. }) => to_short(
            &Value {
                negative: false,
                ..value
            },
            8,
        )
        .to_string(),
        None => "?".to_string(),
    }
}

fn rounding_json(r: &Rounded, to: &Format, negative: bool, rounding: &Rounding) -> RoundingJson {
    let x = Value {
        negative,
        class: Class::Finite(r.exact),
    };
    let toward_zero = r.lower.map(|l| neighbour(to, negative, &l, r.huge));
    let away = neighbour(to, negative, &r.upper, r.huge);
    let (why, reason) = match r.why {
        Why::Exact => ("exact", "the value is exactly representable".to_string()),
        Why::Nearer => {
            let dz = r
                .lower
                .map_or_else(|| "?".to_string(), |l| distance(&x, &signed(negative, &l)));
            let da = distance(&x, &signed(negative, &r.upper));
            (
                "nearer",
                format!(
                    "it is nearer ({dz} from the neighbour toward zero, {da} from the one away \
                     from zero)"
                ),
            )
        }
        Why::TieEven => (
            "tie-even",
            "the value is exactly half way and ties go to the even encoding".to_string(),
        ),
        Why::TieAway => (
            "tie-away",
            "the value is exactly half way and ties go away from zero".to_string(),
        ),
        Why::Directed => (
            "directed",
            format!("the mode rounds {}", mode_words(rounding)),
        ),
        Why::Stochastic {
            fraction,
            random,
            width,
        } => (
            "stochastic",
            format!(
                "the discarded fraction {} (of 2^{width}) plus the random bits {} {} out of \
                 {width} bits",
                format_bits(fraction as u64, width),
                format_bits(random, width),
                if r.took_upper {
                    "carry"
                } else {
                    "do not carry"
                }
            ),
        ),
        Why::Forced => (
            "forced",
            format!(
                "{} has nothing toward zero (it has no zero), so the value is forced away from \
                 zero",
                to.name
            ),
        ),
    };
    RoundingJson {
        rounded: exact(&x),
        toward_zero,
        away_from_zero: away,
        chosen: if r.took_upper {
            "away_from_zero"
        } else {
            "toward_zero"
        },
        why,
        reason,
        stochastic: match r.why {
            Why::Stochastic {
                fraction,
                random,
                width,
            } => Some(StochasticJson {
                fraction: format_bits(fraction as u64, width),
                random: format_bits(random, width),
                width,
                carry: r.took_upper,
            }),
            _ => None,
        },
    }
}

fn event_json(e: &Event, to: &Format, p: &Policy, rounding: &Rounding) -> EventJson {
    let name = to.name;
    let (event, text) = match e {
        Event::FlushedInput => (
            "flushed-input",
            "--ftz: the subnormal input was flushed to a zero of the same sign".to_string(),
        ),
        Event::Scaled(k) => (
            "scaled",
            format!("--scale: the value was multiplied by 2^{k}"),
        ),
        Event::NanResult => (
            "nan-result",
            if p.nan == NanResult::Payload && !p.relu {
                format!(
                    "the NaN keeps its sign and payload in {name} (--nan payload; the \
                     canonical NaN where the payload does not fit)"
                )
            } else {
                format!("the NaN became the canonical NaN of {name}")
            },
        ),
        Event::NanToNumber => (
            "nan-to-number",
            if !to.is_float() {
                format!(
                    "a NaN has no value in {name}: it became {} (--int-nan)",
                    match p.int_nan {
                        IntNan::Zero => "zero",
                        IntNan::HighBit => "the high bit 1 << (width - 1)",
                    }
                )
            } else if p.sat {
                "--sat: the NaN became +0".to_string()
            } else {
                format!("{name} has no NaN: the NaN became its largest finite value")
            },
        ),
        Event::SignDropped => (
            "sign-dropped",
            format!("{name} is unsigned: the magnitude was kept and the sign dropped"),
        ),
        Event::ClampedUnit => (
            "clamped-unit",
            "--sat: the value was clamped to [0, 1]".to_string(),
        ),
        Event::Relu => (
            "relu",
            "--relu: the negative value (or -0) became +0".to_string(),
        ),
        Event::Rounded => (
            "rounded",
            format!(
                "the value was rounded in {name}, {} (see above)",
                mode_words(rounding)
            ),
        ),
        Event::OverflowToMax => (
            "overflow-to-max",
            format!(
                "beyond the largest finite value of {name}: it became the largest finite value \
                 of its sign ({})",
                if p.satfinite {
                    "--satfinite".to_string()
                } else if p.overflow == Overflow::Saturate {
                    "--overflow saturate".to_string()
                } else if !to.has_infinity() && !to.has_nan() {
                    format!("{name} has neither infinity nor NaN")
                } else {
                    format!("{} does not overflow to infinity", mode_words(rounding))
                }
            ),
        ),
        Event::OverflowToInfinity => (
            "overflow-to-infinity",
            format!(
                "beyond the largest finite value of {name}: it became infinity (IEEE 754 \
                 overflow, {})",
                mode_words(rounding)
            ),
        ),
        Event::OverflowToNan => (
            "overflow-to-nan",
            format!("{name} has no infinity: the overflow (or infinity) became NaN"),
        ),
        Event::ClampedRange => (
            "clamped-range",
            format!(
                "outside the range of {name} [{}, {}]: clamped",
                to_decimal(&to.decode(to.min_finite_bits().unwrap_or(0))),
                to_decimal(&to.decode(to.max_finite_bits()))
            ),
        ),
        Event::Wrapped => (
            "wrapped",
            format!(
                "--wrap: outside the range of {name}: the result kept its low {} bits",
                to.width()
            ),
        ),
        Event::FlushedOutput => (
            "flushed-output",
            "--ftz: the subnormal result was flushed to a zero of the same sign".to_string(),
        ),
        Event::PositiveZero => ("positive-zero", "--pzo: -0 became +0".to_string()),
        Event::NoZero => (
            "no-zero",
            format!("{name} has no zero: zero became its smallest value"),
        ),
    };
    EventJson { event, text }
}

fn explain(trace: &Trace, req: &Request) -> Explain {
    let source = trace.source.unwrap_or(Value::zero(false));
    // The sign the rounding worked with: unsigned float destinations take the magnitude.
    let negative = source.negative && (req.to.is_signed() || !req.to.is_float());
    Explain {
        source: exact(&source),
        rounding: trace
            .rounded
            .as_ref()
            .map(|r| rounding_json(r, req.to, negative, &req.rounding)),
        events: trace
            .events
            .iter()
            .map(|e| event_json(e, req.to, &req.policy, &req.rounding))
            .collect(),
    }
}

/// Runs `gpucvt round`.
pub fn run(a: &Args) -> Result<String, CliError> {
    let req = validate(a)?;
    let (input, (outcome, trace)) = match (&a.bits, &a.number, req.from) {
        (Some(b), None, Some(from)) => {
            let bits = parse_bits(b, from).map_err(|e| {
                CliError(format!(
                    "{e}; accepted: a pattern of at most {} bits (0x…, 0b…, 0o… or decimal)",
                    from.width()
                ))
            })?;
            let input = Input {
                text: None,
                bits: Some(format_bits(bits, from.width())),
                from: Some(from.name),
                value: exact(&from.decode(bits)),
                exact: true,
                from_step: None,
            };
            let cvt = Conversion::new(*from, *req.to, req.rounding, req.policy);
            (input, cvt.apply_traced(bits))
        }
        (None, Some(n), from) => {
            let parsed = parse_number(n).map_err(|e| CliError(format!("{e}; {NUMBER_SYNTAX}")))?;
            let (from_step, run) = match from {
                Some(f) => {
                    let o = convert(&parsed.value, f, Rounding::RN, &Policy::default());
                    let cvt = Conversion::new(*f, *req.to, req.rounding, req.policy);
                    (Some(encoded(f, o.bits, o.flags)), cvt.apply_traced(o.bits))
                }
                None => (
                    None,
                    convert_traced(&parsed.value, req.to, req.rounding, &req.policy),
                ),
            };
            let input = Input {
                text: Some(n.clone()),
                bits: None,
                from: from.map(|f| f.name),
                value: exact(&parsed.value),
                exact: parsed.exact,
                from_step,
            };
            (input, run)
        }
        // validate() rejects every other combination.
        _ => return fail("give a number, or --bits <PATTERN> with --from <FMT>"),
    };
    let report = Report {
        input,
        to: req.to.name,
        mode: req.rounding.name(),
        policy: policy_json(&req.policy, &req.rounding),
        result: encoded(req.to, outcome.bits, outcome.flags),
        explain: a.explain.then(|| explain(&trace, &req)),
    };
    if a.json {
        return to_json(&report);
    }
    Ok(text(&report, &req))
}

fn flags_text(flags: &[&str]) -> String {
    if flags.is_empty() {
        "none".to_string()
    } else {
        flags.join(", ")
    }
}

/// The plain-text report.
fn text(r: &Report, req: &Request) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    if let Some(e) = &r.explain {
        let i = &r.input;
        match (&i.text, &i.bits) {
            (Some(t), _) => {
                line(format!("input    {t}"));
                if i.exact {
                    line("         exact: the number is held exactly".to_string());
                } else {
                    line(format!(
                        "         inexact: {t} is not a dyadic rational of at most 128 bits; \
                         gpucvt holds its round-to-odd at {ODD_BITS} bits, which rounds like \
                         the exact number in every format of at most 64 bits"
                    ));
                }
                line(format!("  value  {}", i.value.value));
                line(format!("  hex    {}", i.value.hex));
            }
            (None, Some(b)) => {
                line(format!("input    {b} ({})", i.from.unwrap_or("?")));
            }
            (None, None) => {}
        }
        if let Some(s) = &i.from_step {
            line(format!(
                "step 1   the number rounded to {} (rn): {} = {} (flags: {})",
                s.format,
                s.bits,
                s.value,
                flags_text(&s.flags)
            ));
        }
        let mut policy = Vec::new();
        let p = &req.policy;
        for (on, name) in [
            (p.sat, "sat"),
            (p.satfinite, "satfinite"),
            (p.relu, "relu"),
            (p.flush_inputs, "ftz"),
            (p.positive_zero, "pzo"),
            (p.overflow == Overflow::Saturate, "overflow=saturate"),
            (p.nan == NanResult::Payload, "nan=payload"),
            (p.int_nan == IntNan::HighBit, "int-nan=highbit"),
            (p.int_overflow == IntOverflow::Wrap, "wrap"),
        ] {
            if on {
                policy.push(name.to_string());
            }
        }
        if p.scale != 0 {
            policy.push(format!("scale={}", p.scale));
        }
        if let Some(rj) = &r.policy.random {
            policy.push(format!("rbits={} width={}", rj.bits, rj.width));
        }
        line(format!(
            "convert  to {}, {} ({}){}",
            r.to,
            r.mode,
            mode_words(&req.rounding),
            if policy.is_empty() {
                String::new()
            } else {
                format!(", {}", policy.join(", "))
            }
        ));
        if i.text.is_none() || i.from_step.is_some() {
            line(format!("  source {}", e.source.value));
            line(format!("  hex    {}", e.source.hex));
        }
        match &e.rounding {
            None => line("  no rounding step (see the events)".to_string()),
            Some(rj) => {
                if rj.rounded.value != e.source.value {
                    line(format!("  rounded value {}", rj.rounded.value));
                }
                let show = |n: &Neighbour| {
                    let mut s = match &n.bits {
                        Some(b) => format!("{b} = {}", n.value),
                        None => n.value.clone(),
                    };
                    if let Some(note) = &n.note {
                        s.push_str(&format!(" ({note})"));
                    }
                    s
                };
                if rj.why == "exact" {
                    line(format!(
                        "  on the grid  {} (nothing to round)",
                        show(&rj.away_from_zero)
                    ));
                } else {
                    line(format!(
                        "  neighbour toward zero     {}",
                        rj.toward_zero
                            .as_ref()
                            .map_or_else(|| "none".to_string(), show)
                    ));
                    line(format!(
                        "  neighbour away from zero  {}",
                        show(&rj.away_from_zero)
                    ));
                    line(format!(
                        "  chose the neighbour {} because {}",
                        rj.chosen.replace('_', " "),
                        rj.reason
                    ));
                }
            }
        }
        line("events".to_string());
        if e.events.is_empty() {
            line("  none".to_string());
        }
        for (k, ev) in e.events.iter().enumerate() {
            line(format!("  {}. {}", k + 1, ev.text));
        }
    }
    line(format!("bits   {}", r.result.bits));
    line(format!("value  {}", r.result.value));
    line(format!("class  {}", r.result.class));
    line(format!("flags  {}", flags_text(&r.result.flags)));
    out
}
