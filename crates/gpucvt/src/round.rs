//! One number (or one bit pattern) converted to a format, with a report of every step: what
//! `gpucvt round` prints (as text, `--explain` and `--json`) and what the Python package's
//! `gpucvt.round` returns. Both build a [`Request`], and [`Request::run`] checks it (with the
//! CLI's messages, which name its options), converts, and returns the [`Report`], whose
//! fields are the objects of `round --json` (with the `serde` feature, [`Report`]
//! serializes as them) and whose [`Report::text`] is the CLI's plain output.
//!
//! ```
//! use gpucvt::core::format::Format;
//! use gpucvt::round::{Request, RoundError};
//! let e4m3 = Format::from_name("e4m3").unwrap();
//! let mut req = Request::new(e4m3);
//! req.number = Some("0.3".into());
//! req.explain = true;
//! let report = req.run().unwrap();
//! assert_eq!((report.result.bits.as_str(), report.result.value.as_str()), ("0x2a", "0.3125"));
//! assert_eq!(report.result.flags, ["inexact"]);
//! assert!(report.text().contains("neighbour away from zero  0x2a = 0.3125"));
//! // Options that do not apply to the destination: the CLI's message.
//! req.wrap = true;
//! let e = req.run().unwrap_err();
//! assert!(matches!(e, RoundError::NotForFloat { option: "--wrap", .. }));
//! assert!(e.to_string().starts_with("--wrap applies to integer and fixed-point destinations only"));
//! ```

use crate::text::{
    difference, format_bits, parse_bits, parse_bits_named, parse_number, to_decimal, to_short,
    Parsed, ODD_BITS,
};
use gpucvt_core::convert::{
    convert, convert_traced, Conversion, Event, Flags, IntNan, IntOverflow, NanResult, NoNanResult,
    Overflow, Policy, Trace,
};
use gpucvt_core::format::Format;
use gpucvt_core::round::{Direction, Magnitude, Rounded, Rounding, Why};
use gpucvt_core::value::{Class, Value};

/// The largest `|K|` of `--scale K`.
pub const MAX_SCALE: i32 = 100_000;

/// What number literals look like, for error messages.
pub const NUMBER_SYNTAX: &str = "accepted: a decimal (3.14159, -1e-3, .5), a hexadecimal \
                                 float (0x1.8p3), a binary number (0b1.1), inf, infinity or nan";

/// Why a [`Request`] cannot run. The messages are the CLI's (they name its options); the
/// ones for option combinations that the CLI's argument parser rejects before the library
/// sees them are written in the same style.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RoundError {
    /// An option for integer and fixed-point destinations, with a float destination.
    #[error(
        "{option} applies to integer and fixed-point destinations only, and {format} is a \
         float format; accepted for {format}: --sat, --satfinite, --relu, --ftz, --pzo, \
         --overflow, --nan, --scale"
    )]
    NotForFloat {
        /// The option (`--wrap`, `--int-nan`).
        option: &'static str,
        /// The destination's name.
        format: &'static str,
    },
    /// An option for float destinations, with an integer or fixed-point destination.
    #[error(
        "{option} applies to float destinations only, and {format} is {kind}; accepted for \
         {format}: --sat, --satfinite, --wrap, --int-nan, --scale"
    )]
    NotForInteger {
        /// The option (`--relu`, `--pzo`, `--overflow`, `--nan`).
        option: &'static str,
        /// The destination's name.
        format: &'static str,
        /// `an integer` or `a fixed-point format`.
        kind: &'static str,
    },
    /// Two options that exclude each other.
    #[error("{0} and {1} exclude each other")]
    Conflict(&'static str, &'static str),
    /// `--mode rs` without `--rbits`.
    #[error("--mode rs needs --rbits <PATTERN> (the random bits) [--rbits-width N]")]
    MissingRbits,
    /// `--rbits` with a mode other than `rs`.
    #[error(
        "--rbits is only valid with --mode rs (got --mode {mode}); accepted: --mode rs \
         --rbits <PATTERN> [--rbits-width N]"
    )]
    RbitsWithoutRs {
        /// The mode given.
        mode: &'static str,
    },
    /// `--rbits-width` without `--rbits`.
    #[error("--rbits-width is only valid with --rbits")]
    WidthWithoutRbits,
    /// `--rbits-width` outside 1 to 64.
    #[error("--rbits-width must be 1 to 64, not {0}")]
    RbitsWidth(i64),
    /// `--scale` outside ±[`MAX_SCALE`].
    #[error("--scale must be -{MAX_SCALE} to {MAX_SCALE}, not {0}")]
    Scale(i64),
    /// A mode name that is not one of [`Rounding::NAMES`].
    #[error("invalid value {given:?} for --mode; accepted: {}", Rounding::NAMES.join(", "))]
    Mode {
        /// The name given.
        given: String,
    },
    /// A value of `--overflow`, `--nan` or `--int-nan` that is not one of its names.
    #[error("invalid value {given:?} for {option}; accepted: {}", accepted.join(", "))]
    Choice {
        /// The option.
        option: &'static str,
        /// The value given.
        given: String,
        /// Its names.
        accepted: &'static [&'static str],
    },
    /// `--rbits` does not read as a pattern of its width.
    #[error("{message}; accepted: a pattern of at most {width} bits (0x…, 0b…, 0o… or decimal)")]
    Rbits {
        /// The reader's message.
        message: String,
        /// The width of the random bits.
        width: u32,
    },
    /// `--bits` does not read as a pattern of the `--from` format.
    #[error("{message}; accepted: a pattern of at most {width} bits (0x…, 0b…, 0o… or decimal)")]
    Bits {
        /// The reader's message.
        message: String,
        /// The width of the `--from` format.
        width: u32,
    },
    /// The number does not read as a number.
    #[error("{message}; {NUMBER_SYNTAX}")]
    Number {
        /// The reader's message.
        message: String,
    },
    /// `--bits` without `--from`.
    #[error("--bits needs --from <FMT> (the format of the pattern)")]
    BitsWithoutFrom,
    /// Both a number and `--bits`, or neither.
    #[error("give a number, or --bits <PATTERN> with --from <FMT>")]
    Source,
}

/// Looks up a rounding mode by name, any case (`rn`, `RS`, …).
pub fn mode_named(name: &str) -> Result<Rounding, RoundError> {
    Rounding::NAMES
        .iter()
        .find(|n| n.eq_ignore_ascii_case(name))
        .and_then(|n| Rounding::from_name(n))
        .ok_or_else(|| RoundError::Mode {
            given: name.to_string(),
        })
}

/// One of a fixed set of names, any case: the index in `names`.
fn choice(
    given: &str,
    option: &'static str,
    names: &'static [&'static str],
) -> Result<usize, RoundError> {
    names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(given))
        .ok_or_else(|| RoundError::Choice {
            option,
            given: given.to_string(),
            accepted: names,
        })
}

/// `--overflow` by name: `ieee`, `saturate` or `infinite`, any case.
pub fn overflow_named(name: &str) -> Result<Overflow, RoundError> {
    let i = choice(name, "--overflow", &["ieee", "saturate", "infinite"])?;
    Ok([Overflow::Ieee, Overflow::Saturate, Overflow::Infinite][i])
}

/// `--nan` by name: `canonical` or `payload`, any case.
pub fn nan_named(name: &str) -> Result<NanResult, RoundError> {
    let i = choice(name, "--nan", &["canonical", "payload"])?;
    Ok([NanResult::Canonical, NanResult::Payload][i])
}

/// `--int-nan` by name: `zero` or `highbit`, any case.
pub fn int_nan_named(name: &str) -> Result<IntNan, RoundError> {
    let i = choice(name, "--int-nan", &["zero", "highbit"])?;
    Ok([IntNan::Zero, IntNan::HighBit][i])
}

/// What `gpucvt round` is asked: the source (a number, or a bit pattern of `from`), the
/// destination, the mode and the policy options, as given (unchecked).
#[derive(Clone, Debug)]
pub struct Request {
    /// The number, in [`crate::text::parse_number`]'s syntax; `None` with [`Self::bits`].
    pub number: Option<String>,
    /// A bit pattern of [`Self::from`] (`0x…`, `0b…`, `0o…` or decimal) instead of a number.
    pub bits: Option<String>,
    /// The destination format.
    pub to: &'static Format,
    /// The source format: the number is first rounded to it with rn, then converted from its
    /// bits; the format of [`Self::bits`].
    pub from: Option<&'static Format>,
    /// The rounding mode; for `rs`, the random bits come from [`Self::rbits`].
    pub mode: Rounding,
    /// The random bits of `rs` (a pattern of [`Self::rbits_width`] bits).
    pub rbits: Option<String>,
    /// How many random bits [`Self::rbits`] has, 1 to 64 (default 32; as given, checked
    /// by [`Self::run`]).
    pub rbits_width: Option<i64>,
    /// `.satfinite`.
    pub satfinite: bool,
    /// `.sat`.
    pub sat: bool,
    /// `.relu` (float destinations).
    pub relu: bool,
    /// `.ftz`: flush subnormal inputs and results.
    pub ftz: bool,
    /// `.pzo`: -0 becomes +0 (float destinations).
    pub pzo: bool,
    /// Integer and fixed-point results out of range keep their low bits.
    pub wrap: bool,
    /// Float overflow without satfinite (float destinations).
    pub overflow: Option<Overflow>,
    /// A NaN into a float destination with NaNs (float destinations).
    pub nan: Option<NanResult>,
    /// A NaN into an integer or fixed-point destination.
    pub int_nan: Option<IntNan>,
    /// Multiply the value by 2^K first, |K| <= [`MAX_SCALE`] (as given, checked by
    /// [`Self::run`]).
    pub scale: Option<i64>,
    /// Build [`Report::explain`].
    pub explain: bool,
}

impl Request {
    /// A request to convert to `to` with rn and no policy; set the source
    /// ([`Self::number`], or [`Self::bits`] with [`Self::from`]) before running it.
    pub fn new(to: &'static Format) -> Request {
        Request {
            number: None,
            bits: None,
            to,
            from: None,
            mode: Rounding::RN,
            rbits: None,
            rbits_width: None,
            satfinite: false,
            sat: false,
            relu: false,
            ftz: false,
            pzo: false,
            wrap: false,
            overflow: None,
            nan: None,
            int_nan: None,
            scale: None,
            explain: false,
        }
    }

    /// The checks of the options, in the order the CLI makes them: the argument parser's
    /// (conflicts, ranges, requirements), then those that depend on the destination's kind
    /// or on the mode's value. Returns the rounding (with its random bits) and the policy.
    fn checked(&self) -> Result<(Rounding, Policy), RoundError> {
        if self.sat && self.satfinite {
            return Err(RoundError::Conflict("--sat", "--satfinite"));
        }
        if self.wrap && (self.sat || self.satfinite) {
            let other = if self.sat { "--sat" } else { "--satfinite" };
            return Err(RoundError::Conflict("--wrap", other));
        }
        let scale = match self.scale {
            None => 0,
            Some(k) => match i32::try_from(k) {
                Ok(k) if (-MAX_SCALE..=MAX_SCALE).contains(&k) => k,
                _ => return Err(RoundError::Scale(k)),
            },
        };
        let stochastic = matches!(self.mode.direction, Direction::Stochastic { .. });
        if stochastic && self.rbits.is_none() {
            return Err(RoundError::MissingRbits);
        }
        let width = match self.rbits_width {
            None => 32,
            Some(_) if self.rbits.is_none() => return Err(RoundError::WidthWithoutRbits),
            Some(w) if (1..=64).contains(&w) => w as u32,
            Some(w) => return Err(RoundError::RbitsWidth(w)),
        };

        let to = self.to;
        if to.is_float() {
            for (given, option) in [(self.wrap, "--wrap"), (self.int_nan.is_some(), "--int-nan")] {
                if given {
                    return Err(RoundError::NotForFloat {
                        option,
                        format: to.name,
                    });
                }
            }
        } else {
            let kind = if to.is_integer() {
                "an integer"
            } else {
                "a fixed-point format"
            };
            for (given, option) in [
                (self.relu, "--relu"),
                (self.pzo, "--pzo"),
                (self.overflow.is_some(), "--overflow"),
                (self.nan.is_some(), "--nan"),
            ] {
                if given {
                    return Err(RoundError::NotForInteger {
                        option,
                        format: to.name,
                        kind,
                    });
                }
            }
        }

        let mut rounding = self.mode;
        if let Some(random) = &self.rbits {
            if !stochastic {
                return Err(RoundError::RbitsWithoutRs {
                    mode: rounding.name(),
                });
            }
            let bits =
                parse_bits_named(random, width, "--rbits (see --rbits-width)").map_err(|e| {
                    RoundError::Rbits {
                        message: e.to_string(),
                        width,
                    }
                })?;
            rounding = Rounding::stochastic(bits, width);
        }

        let policy = Policy {
            flush_inputs: self.ftz,
            flush_outputs: self.ftz,
            sat: self.sat,
            satfinite: self.satfinite,
            relu: self.relu,
            positive_zero: self.pzo,
            overflow: self.overflow.unwrap_or_default(),
            nan: self.nan.unwrap_or_default(),
            int_nan: self.int_nan.unwrap_or_default(),
            int_overflow: if self.wrap {
                IntOverflow::Wrap
            } else {
                IntOverflow::Clamp
            },
            scale,
            ..Policy::default()
        };
        Ok((rounding, policy))
    }

    /// Checks the request, converts, and reports every step.
    pub fn run(&self) -> Result<Report, RoundError> {
        let (rounding, policy) = self.checked()?;
        let to = self.to;
        let (input, (outcome, trace)) = match (&self.bits, &self.number, self.from) {
            (Some(_), None, None) => return Err(RoundError::BitsWithoutFrom),
            (Some(b), None, Some(from)) => {
                let bits = parse_bits(b, from).map_err(|e| RoundError::Bits {
                    message: e.to_string(),
                    width: from.width(),
                })?;
                let input = Input {
                    text: None,
                    bits: Some(format_bits(bits, from.width())),
                    from: Some(from.name),
                    value: exact(&from.decode(bits)),
                    exact: true,
                    from_step: None,
                };
                let cvt = Conversion::new(*from, *to, rounding, policy);
                (input, cvt.apply_traced(bits))
            }
            (None, Some(n), from) => {
                let parsed = parse_number(n).map_err(|e| RoundError::Number {
                    message: e.to_string(),
                })?;
                let (from_step, run) = match from {
                    Some(f) => {
                        let o = convert(&parsed.value, f, Rounding::RN, &Policy::default());
                        let cvt = Conversion::new(*f, *to, rounding, policy);
                        (Some(encoded(f, o.bits, o.flags)), cvt.apply_traced(o.bits))
                    }
                    None => (None, convert_traced(&parsed.value, to, rounding, &policy)),
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
            _ => return Err(RoundError::Source),
        };
        Ok(Report {
            input,
            to: to.name,
            mode: rounding.name(),
            policy: policy_json(&policy, &rounding),
            result: encoded(to, outcome.bits, outcome.flags),
            explain: self
                .explain
                .then(|| explain(&trace, to, &policy, &rounding)),
            bits: outcome.bits,
            format: to,
            rounding,
        })
    }
}

/// The class of an encoding: `zero`, `subnormal`, `normal`, `infinity` or `nan` for floats,
/// `zero` or `finite` for integers and fixed point.
pub fn class_name(f: &Format, bits: u64) -> &'static str {
    match f.decode(bits).class {
        Class::Zero => "zero",
        Class::Infinite => "infinity",
        Class::Nan { .. } => "nan",
        Class::Finite(_) if !f.is_float() => "finite",
        Class::Finite(_) if f.is_subnormal(bits) => "subnormal",
        Class::Finite(_) => "normal",
    }
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
/// An exact value in decimal and as a hexadecimal float.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PolicyJson {
    /// The policy's fields.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub policy: Policy,
    /// With `--mode rs`: the random bits and their width; null otherwise.
    pub random: Option<RandomJson>,
}

/// The random bits of stochastic rounding.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RandomJson {
    /// The bits, hexadecimal, padded to the width.
    pub bits: String,
    /// Their number.
    pub width: u32,
}

/// One neighbour of the rounded value in the destination.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Neighbour {
    /// Its exact decimal value (with the sign of the rounded value).
    pub value: String,
    /// Its encoding, or null when the destination cannot encode it.
    pub bits: Option<String>,
    /// Why there is no encoding (beyond the largest finite value, …), or null.
    pub note: Option<String>,
}

/// The stochastic rounding decision.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EventJson {
    /// A stable identifier (`rounded`, `overflow-to-max`, …; see docs/json.md).
    pub event: &'static str,
    /// The event in words.
    pub text: String,
}

/// The explanation (`--explain`).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Explain {
    /// The value the conversion starts from (decoded from the source bits with `--from`).
    pub source: Exact,
    /// The rounding step, or null when nothing was rounded (NaN, infinity, zero, clamps).
    pub rounding: Option<RoundingJson>,
    /// What happened, in order.
    pub events: Vec<EventJson>,
}

/// Everything `gpucvt round` reports: with the `serde` feature it serializes as the object
/// `round --json` prints; [`Report::text`] is the plain output (with `--explain`, the steps).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub explain: Option<Explain>,
    /// The destination encoding as a number (not serialized: `result.bits` is its text).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub bits: u64,
    /// The destination format (not serialized: `to` is its name).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub format: &'static Format,
    /// The rounding, with its random bits (not serialized: `mode` and `policy.random`).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub rounding: Rounding,
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
                format!(
                    "{name} has no NaN: the NaN became {}",
                    match p.no_nan {
                        NoNanResult::LargestFinite => "its largest finite value",
                        NoNanResult::NegativeZero => "-0",
                        NoNanResult::OppositeZero => "a zero of the other sign",
                    }
                )
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
        Event::Unrepresentable => (
            "unrepresentable",
            format!("{name} has no encoding for the value: it became NaN"),
        ),
    };
    EventJson { event, text }
}

fn explain(trace: &Trace, to: &Format, policy: &Policy, rounding: &Rounding) -> Explain {
    let source = trace.source.unwrap_or(Value::zero(false));
    // The sign the rounding worked with: unsigned float destinations take the magnitude.
    let negative = source.negative && (to.is_signed() || !to.is_float());
    Explain {
        source: exact(&source),
        rounding: trace
            .rounded
            .as_ref()
            .map(|r| rounding_json(r, to, negative, rounding)),
        events: trace
            .events
            .iter()
            .map(|e| event_json(e, to, policy, rounding))
            .collect(),
    }
}

fn flags_text(flags: &[&str]) -> String {
    if flags.is_empty() {
        "none".to_string()
    } else {
        flags.join(", ")
    }
}

impl Report {
    /// The plain-text report `gpucvt round` prints: with [`Report::explain`], the input, the
    /// conversion, the neighbours and the events first; then the bits, value, class and
    /// flags of the result.
    pub fn text(&self) -> String {
        text(self)
    }
}

fn text(r: &Report) -> String {
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
        let p = &r.policy.policy;
        for (on, name) in [
            (p.sat, "sat"),
            (p.satfinite, "satfinite"),
            (p.relu, "relu"),
            (p.flush_inputs, "ftz"),
            (p.positive_zero, "pzo"),
            (p.overflow == Overflow::Saturate, "overflow=saturate"),
            (p.overflow == Overflow::Infinite, "overflow=infinite"),
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
            mode_words(&r.rounding),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(to: &str, number: &str) -> Request {
        let mut r = Request::new(Format::from_name(to).unwrap());
        r.number = Some(number.to_string());
        r
    }

    /// The checks the CLI's argument parser makes before the library sees a request: here
    /// for the library's other callers (Python), with messages in the CLI's words.
    #[test]
    fn the_argument_parsers_checks_are_made_too() {
        let mut r = request("e4m3", "1");
        r.sat = true;
        r.satfinite = true;
        assert_eq!(
            r.run().unwrap_err(),
            RoundError::Conflict("--sat", "--satfinite")
        );
        let mut r = request("s8", "1");
        r.wrap = true;
        r.satfinite = true;
        assert_eq!(
            r.run().unwrap_err(),
            RoundError::Conflict("--wrap", "--satfinite")
        );
        let mut r = request("e4m3", "1");
        r.scale = Some(100_001);
        assert_eq!(
            r.run().unwrap_err().to_string(),
            "--scale must be -100000 to 100000, not 100001"
        );
        r.scale = Some(i64::MIN);
        assert_eq!(r.run().unwrap_err(), RoundError::Scale(i64::MIN));
        r.scale = Some(-100_000);
        assert!(r.run().is_ok());
        let mut r = request("e4m3", "1");
        r.mode = mode_named("RS").unwrap();
        assert_eq!(r.run().unwrap_err(), RoundError::MissingRbits);
        r.rbits = Some("1".into());
        r.rbits_width = Some(65);
        assert_eq!(r.run().unwrap_err(), RoundError::RbitsWidth(65));
        r.rbits_width = Some(0);
        assert_eq!(r.run().unwrap_err(), RoundError::RbitsWidth(0));
        r.rbits_width = Some(64);
        assert!(r.run().is_ok());
        let mut r = request("e4m3", "1");
        r.rbits_width = Some(8);
        assert_eq!(r.run().unwrap_err(), RoundError::WidthWithoutRbits);
    }

    #[test]
    fn sources_and_names() {
        let mut r = request("e4m3", "1");
        r.bits = Some("0x1".into());
        assert_eq!(r.run().unwrap_err(), RoundError::Source);
        r.number = None;
        assert_eq!(r.run().unwrap_err(), RoundError::BitsWithoutFrom);
        r.bits = None;
        assert_eq!(r.run().unwrap_err(), RoundError::Source);
        let e = request("e4m3", "1.2.3").run().unwrap_err();
        assert!(matches!(e, RoundError::Number { .. }));
        assert!(e.to_string().ends_with(NUMBER_SYNTAX), "{e}");
        assert_eq!(
            mode_named("rq").unwrap_err().to_string(),
            "invalid value \"rq\" for --mode; accepted: rn, rna, rz, rm, rp, rs, rni, rzi, rmi, rpi"
        );
        assert_eq!(overflow_named("SATURATE"), Ok(Overflow::Saturate));
        assert_eq!(nan_named("payload"), Ok(NanResult::Payload));
        assert_eq!(int_nan_named("HighBit"), Ok(IntNan::HighBit));
        assert_eq!(
            int_nan_named("one").unwrap_err().to_string(),
            "invalid value \"one\" for --int-nan; accepted: zero, highbit"
        );
    }

    #[test]
    fn the_report_holds_the_result_as_a_number_too() {
        let mut r = request("e4m3", "500");
        r.satfinite = true;
        let rep = r.run().unwrap();
        assert_eq!(
            (rep.bits, rep.format.name, rep.result.bits.as_str()),
            (0x7e, "e4m3", "0x7e")
        );
        assert!(rep.explain.is_none());
        assert!(rep.text().starts_with("bits   0x7e\n"));
    }
}
