//! `gpucvt.round`: one number (or one bit pattern) converted to a format, as
//! `gpucvt round NUMBER --to FMT [--from F] [--bits B] [--mode M] [policy] [--explain]`.
//!
//! The same library calls as the CLI (`gpucvt::text::parse_number`, `convert_traced`,
//! `Conversion::apply_traced`), and a report of the same fields as `gpucvt round --json`
//! (`input`, `to`, `mode`, `policy`, `result`), as a dict the Python half wraps.

use gpucvt::text::{format_bits, parse_bits, parse_bits_named, parse_number, to_decimal};
use gpucvt_core::convert::{
    convert, convert_traced, Conversion, Event, Flags, IntNan, IntOverflow, NanResult, Overflow,
    Policy, Trace,
};
use gpucvt_core::format::Format;
use gpucvt_core::round::{Direction, Magnitude, Rounding, Why};
use gpucvt_core::value::{Class, Value};
use gpucvt_tensor::lookup_format;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What number literals look like (the CLI's wording).
const NUMBER_SYNTAX: &str = "accepted: a decimal (3.14159, -1e-3, .5), a hexadecimal float \
                             (0x1.8p3), a binary number (0b1.1), inf, infinity or nan";

fn err<T>(message: impl Into<String>) -> PyResult<T> {
    Err(PyValueError::new_err(message.into()))
}

/// One of a fixed set of option values, any case.
fn choice<'a>(given: Option<&str>, option: &str, names: &[&'a str]) -> PyResult<Option<&'a str>> {
    let Some(g) = given else { return Ok(None) };
    match names.iter().find(|n| n.eq_ignore_ascii_case(g)) {
        Some(n) => Ok(Some(n)),
        None => err(format!(
            "invalid value {g:?} for {option}; accepted: {}",
            names.join(", ")
        )),
    }
}

fn class_name(f: &Format, bits: u64) -> &'static str {
    match f.decode(bits).class {
        Class::Zero => "zero",
        Class::Infinite => "infinity",
        Class::Nan { .. } => "nan",
        Class::Finite(_) if !f.is_float() => "finite",
        Class::Finite(_) if f.is_subnormal(bits) => "subnormal",
        Class::Finite(_) => "normal",
    }
}

fn exact<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("value", to_decimal(v))?;
    d.set_item("hex", v.to_string())?;
    Ok(d)
}

/// An encoding with its value, class and flags: the `result` (and `from_step`) object of
/// `round --json`.
fn encoded<'py>(
    py: Python<'py>,
    f: &'static Format,
    bits: u64,
    flags: Flags,
) -> PyResult<Bound<'py, PyDict>> {
    let v = f.decode(bits);
    let d = PyDict::new(py);
    d.set_item("format", f.name)?;
    d.set_item("bits", format_bits(bits, f.width()))?;
    d.set_item("value", to_decimal(&v))?;
    d.set_item("hex", v.to_string())?;
    d.set_item("class", class_name(f, bits))?;
    d.set_item("flags", flags.names())?;
    Ok(d)
}

/// The policy object of `round --json` (the core's `Policy` as it serializes, then `random`).
fn policy_dict<'py>(py: Python<'py>, p: &Policy, r: &Rounding) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flush_inputs", p.flush_inputs)?;
    d.set_item("flush_outputs", p.flush_outputs)?;
    d.set_item("sat", p.sat)?;
    d.set_item("satfinite", p.satfinite)?;
    d.set_item("relu", p.relu)?;
    d.set_item("positive_zero", p.positive_zero)?;
    d.set_item(
        "overflow",
        match p.overflow {
            Overflow::Ieee => "ieee",
            Overflow::Saturate => "saturate",
        },
    )?;
    d.set_item(
        "nan",
        match p.nan {
            NanResult::Canonical => "canonical",
            NanResult::Payload => "payload",
        },
    )?;
    d.set_item(
        "int_nan",
        match p.int_nan {
            IntNan::Zero => "zero",
            IntNan::HighBit => "highbit",
        },
    )?;
    d.set_item(
        "int_overflow",
        match p.int_overflow {
            IntOverflow::Clamp => "clamp",
            IntOverflow::Wrap => "wrap",
        },
    )?;
    d.set_item("scale", p.scale)?;
    match r.direction {
        Direction::Stochastic { random, width } => {
            let rd = PyDict::new(py);
            rd.set_item("bits", format_bits(random, width))?;
            rd.set_item("width", width)?;
            d.set_item("random", rd)?;
        }
        _ => d.set_item("random", py.None())?,
    }
    Ok(d)
}

/// The largest `|scale|` (as the CLI's `--scale`).
const MAX_SCALE: i32 = 100_000;

/// `round`'s options, checked as the CLI checks them (clap's rules and `round::validate`).
fn request(to: &'static Format, mode: &str, p: &PolicyArgs) -> PyResult<(Rounding, Policy)> {
    let mut rounding = Rounding::NAMES
        .iter()
        .find(|n| n.eq_ignore_ascii_case(mode))
        .and_then(|n| Rounding::from_name(n))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "invalid mode {mode:?}; expected one of: {}",
                Rounding::NAMES.join(", ")
            ))
        })?;
    if p.sat && p.satfinite {
        return err("sat and satfinite exclude each other");
    }
    if p.wrap && (p.sat || p.satfinite) {
        return err("wrap excludes sat and satfinite");
    }
    let overflow = choice(p.overflow.as_deref(), "overflow", &["ieee", "saturate"])?;
    let nan = choice(p.nan.as_deref(), "nan", &["canonical", "payload"])?;
    let int_nan = choice(p.int_nan.as_deref(), "int_nan", &["zero", "highbit"])?;
    if let Some(k) = p.scale {
        if !(-MAX_SCALE..=MAX_SCALE).contains(&k) {
            return err(format!(
                "scale must be -{MAX_SCALE} to {MAX_SCALE}, not {k}"
            ));
        }
    }
    if to.is_float() {
        for (given, name) in [(p.wrap, "wrap"), (int_nan.is_some(), "int_nan")] {
            if given {
                return err(format!(
                    "{name} applies to integer and fixed-point destinations only, and {} is a \
                     float format; accepted for {}: sat, satfinite, relu, ftz, pzo, overflow, \
                     nan, scale",
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
            (p.relu, "relu"),
            (p.pzo, "pzo"),
            (overflow.is_some(), "overflow"),
            (nan.is_some(), "nan"),
        ] {
            if given {
                return err(format!(
                    "{name} applies to float destinations only, and {} is {kind}; accepted \
                     for {}: sat, satfinite, wrap, int_nan, scale",
                    to.name, to.name
                ));
            }
        }
    }
    let stochastic = matches!(rounding.direction, Direction::Stochastic { .. });
    match (&p.rbits, stochastic) {
        (None, true) => {
            return err(
                "mode=\"rs\" needs rbits=<PATTERN> (the random bits: an int, or 0x…, 0b…, 0o… \
                 or decimal text) [rbits_width=N]",
            )
        }
        (Some(_), false) => {
            return err(format!(
                "rbits is only valid with mode=\"rs\" (got mode={:?}); accepted: mode=\"rs\", \
                 rbits=<PATTERN> [, rbits_width=N]",
                rounding.name()
            ))
        }
        (Some(random), true) => {
            let width = p.rbits_width.unwrap_or(32);
            if !(1..=64).contains(&width) {
                return err(format!("rbits_width must be 1 to 64, not {width}"));
            }
            let bits =
                parse_bits_named(random, width, "--rbits (see --rbits-width)").map_err(|e| {
                    PyValueError::new_err(format!(
                    "{e}; accepted: a pattern of at most {width} bits (0x…, 0b…, 0o… or decimal)"
                ))
                })?;
            rounding = Rounding::stochastic(bits, width);
        }
        (None, false) => {
            if p.rbits_width.is_some() {
                return err("rbits_width is only valid with rbits");
            }
        }
    }
    let policy = Policy {
        flush_inputs: p.ftz,
        flush_outputs: p.ftz,
        sat: p.sat,
        satfinite: p.satfinite,
        relu: p.relu,
        positive_zero: p.pzo,
        overflow: if overflow == Some("saturate") {
            Overflow::Saturate
        } else {
            Overflow::Ieee
        },
        nan: if nan == Some("payload") {
            NanResult::Payload
        } else {
            NanResult::Canonical
        },
        int_nan: if int_nan == Some("highbit") {
            IntNan::HighBit
        } else {
            IntNan::Zero
        },
        int_overflow: if p.wrap {
            IntOverflow::Wrap
        } else {
            IntOverflow::Clamp
        },
        scale: p.scale.unwrap_or(0),
    };
    Ok((rounding, policy))
}

/// The policy keywords of `round`.
pub struct PolicyArgs {
    satfinite: bool,
    sat: bool,
    relu: bool,
    ftz: bool,
    pzo: bool,
    wrap: bool,
    overflow: Option<String>,
    nan: Option<String>,
    int_nan: Option<String>,
    scale: Option<i32>,
    rbits: Option<String>,
    rbits_width: Option<u32>,
}

fn event_text(e: &Event, to: &Format) -> String {
    let name = to.name;
    match e {
        Event::FlushedInput => {
            "ftz: the subnormal input was flushed to a zero of the same sign".to_string()
        }
        Event::Scaled(k) => format!("scale: the value was multiplied by 2^{k}"),
        Event::NanResult => format!("the NaN became a NaN of {name}"),
        Event::NanToNumber => format!("the NaN became a number ({name} has no NaN, or sat)"),
        Event::SignDropped => {
            format!("{name} is unsigned: the magnitude was kept and the sign dropped")
        }
        Event::ClampedUnit => "sat: the value was clamped to [0, 1]".to_string(),
        Event::Relu => "relu: the negative value (or -0) became +0".to_string(),
        Event::Rounded => format!("the value was rounded in {name}"),
        Event::OverflowToMax => {
            format!("beyond the largest finite value of {name}: it became the largest finite value of its sign")
        }
        Event::OverflowToInfinity => {
            format!("beyond the largest finite value of {name}: it became infinity")
        }
        Event::OverflowToNan => {
            format!("{name} has no infinity: the overflow (or infinity) became NaN")
        }
        Event::ClampedRange => format!("outside the range of {name}: clamped"),
        Event::Wrapped => format!(
            "wrap: outside the range of {name}: the result kept its low {} bits",
            to.width()
        ),
        Event::FlushedOutput => {
            "ftz: the subnormal result was flushed to a zero of the same sign".to_string()
        }
        Event::PositiveZero => "pzo: -0 became +0".to_string(),
        Event::NoZero => format!("{name} has no zero: zero became its smallest value"),
    }
}

fn neighbour(to: &Format, negative: bool, m: &Magnitude, huge: bool) -> String {
    if huge {
        return format!("{}(beyond 2^127)", if negative { "-" } else { "" });
    }
    let v = Value::finite(negative, m.m, m.q);
    match to.encode(&v) {
        Some(b) => format!("{} = {}", format_bits(b, to.width()), to_decimal(&v)),
        None => format!("{} (no encoding in {})", to_decimal(&v), to.name),
    }
}

/// The steps of the conversion in words: the source, the two neighbours and why one was
/// chosen, and every policy event.
fn explanation(trace: &Trace, to: &'static Format, rounding: &Rounding) -> String {
    let mut out = String::new();
    let source = trace.source.unwrap_or(Value::zero(false));
    out.push_str(&format!("source   {} ({})\n", to_decimal(&source), source));
    out.push_str(&format!("convert  to {}, {}\n", to.name, rounding.name()));
    match &trace.rounded {
        None => out.push_str("  no rounding step (see the events)\n"),
        Some(r) => {
            let negative = source.negative && (to.is_signed() || !to.is_float());
            let x = Value {
                negative,
                class: Class::Finite(r.exact),
            };
            if x != source {
                out.push_str(&format!("  rounded value {}\n", to_decimal(&x)));
            }
            if let Why::Exact = r.why {
                out.push_str(&format!(
                    "  on the grid  {} (nothing to round)\n",
                    neighbour(to, negative, &r.upper, r.huge)
                ));
            } else {
                out.push_str(&format!(
                    "  neighbour toward zero     {}\n",
                    r.lower.map_or_else(
                        || "none".to_string(),
                        |l| neighbour(to, negative, &l, r.huge)
                    )
                ));
                out.push_str(&format!(
                    "  neighbour away from zero  {}\n",
                    neighbour(to, negative, &r.upper, r.huge)
                ));
                let why = match r.why {
                    Why::Exact => "the value is exactly representable".to_string(),
                    Why::Nearer => "it is nearer".to_string(),
                    Why::TieEven => {
                        "the value is exactly half way and ties go to the even encoding".to_string()
                    }
                    Why::TieAway => {
                        "the value is exactly half way and ties go away from zero".to_string()
                    }
                    Why::Directed => format!("the mode {} is directed", rounding.name()),
                    Why::Stochastic {
                        fraction,
                        random,
                        width,
                    } => format!(
                        "the discarded fraction {} (of 2^{width}) plus the random bits {} {} \
                         out of {width} bits",
                        format_bits(fraction as u64, width),
                        format_bits(random, width),
                        if r.took_upper {
                            "carry"
                        } else {
                            "do not carry"
                        }
                    ),
                    Why::Forced => format!(
                        "{} has nothing toward zero (it has no zero), so the value is forced \
                         away from zero",
                        to.name
                    ),
                };
                out.push_str(&format!(
                    "  chose the neighbour {} because {why}\n",
                    if r.took_upper {
                        "away from zero"
                    } else {
                        "toward zero"
                    }
                ));
            }
        }
    }
    out.push_str("events\n");
    if trace.events.is_empty() {
        out.push_str("  none\n");
    }
    for (k, e) in trace.events.iter().enumerate() {
        out.push_str(&format!("  {}. {}\n", k + 1, event_text(e, to)));
    }
    out
}

/// `gpucvt round`: `number` (text in the CLI's syntax) or `bits` (a pattern of `from_`),
/// converted to `to`. Returns the fields of `gpucvt round --json` as a dict, with
/// `explanation` (text) when `explain`.
#[pyfunction]
#[pyo3(signature = (number, to, from_=None, bits=None, mode="rn", explain=false, satfinite=false, sat=false, relu=false, ftz=false, pzo=false, wrap=false, overflow=None, nan=None, int_nan=None, scale=None, rbits=None, rbits_width=None))]
#[allow(clippy::too_many_arguments)]
pub fn round<'py>(
    py: Python<'py>,
    number: Option<String>,
    to: &str,
    from_: Option<&str>,
    bits: Option<String>,
    mode: &str,
    explain: bool,
    satfinite: bool,
    sat: bool,
    relu: bool,
    ftz: bool,
    pzo: bool,
    wrap: bool,
    overflow: Option<String>,
    nan: Option<String>,
    int_nan: Option<String>,
    scale: Option<i32>,
    rbits: Option<String>,
    rbits_width: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    // The CLI's messages, which name its options.
    let find = |name: &str, option: &str| {
        lookup_format(name, option).map_err(|e| PyValueError::new_err(e.to_string()))
    };
    let to = find(to, "--to")?;
    let from = from_.map(|f| find(f, "--from")).transpose()?;
    let policy_args = PolicyArgs {
        satfinite,
        sat,
        relu,
        ftz,
        pzo,
        wrap,
        overflow,
        nan,
        int_nan,
        scale,
        rbits,
        rbits_width,
    };
    let (rounding, policy) = request(to, mode, &policy_args)?;
    let input = PyDict::new(py);
    let (outcome, trace) = match (&bits, &number, from) {
        (Some(_), Some(_), _) => return err("give a number or bits=, not both"),
        (Some(_), None, None) => return err("bits= needs from_= (the format of the pattern)"),
        (Some(b), None, Some(from)) => {
            let pattern = parse_bits(b, from).map_err(|e| {
                PyValueError::new_err(format!(
                    "{e}; accepted: a pattern of at most {} bits (0x…, 0b…, 0o… or decimal)",
                    from.width()
                ))
            })?;
            input.set_item("text", py.None())?;
            input.set_item("bits", format_bits(pattern, from.width()))?;
            input.set_item("from", from.name)?;
            input.set_item("value", exact(py, &from.decode(pattern))?)?;
            input.set_item("exact", true)?;
            input.set_item("from_step", py.None())?;
            Conversion::new(*from, *to, rounding, policy).apply_traced(pattern)
        }
        (None, Some(n), from) => {
            let parsed = parse_number(n)
                .map_err(|e| PyValueError::new_err(format!("{e}; {NUMBER_SYNTAX}")))?;
            input.set_item("text", n)?;
            input.set_item("bits", py.None())?;
            input.set_item("from", from.map(|f| f.name))?;
            input.set_item("value", exact(py, &parsed.value)?)?;
            input.set_item("exact", parsed.exact)?;
            match from {
                Some(f) => {
                    let o = convert(&parsed.value, f, Rounding::RN, &Policy::default());
                    input.set_item("from_step", encoded(py, f, o.bits, o.flags)?)?;
                    Conversion::new(*f, *to, rounding, policy).apply_traced(o.bits)
                }
                None => {
                    input.set_item("from_step", py.None())?;
                    convert_traced(&parsed.value, to, rounding, &policy)
                }
            }
        }
        (None, None, _) => return err("give a number, or bits=<PATTERN> with from_=<FMT>"),
    };
    let report = PyDict::new(py);
    report.set_item("input", input)?;
    report.set_item("to", to.name)?;
    report.set_item("mode", rounding.name())?;
    report.set_item("policy", policy_dict(py, &policy, &rounding)?)?;
    report.set_item("result", encoded(py, to, outcome.bits, outcome.flags)?)?;
    report.set_item("bits_int", outcome.bits)?;
    report.set_item("float", to.decode(outcome.bits).to_f64_lossy())?;
    if explain {
        report.set_item("explanation", explanation(&trace, to, &rounding))?;
    }
    Ok(report)
}
