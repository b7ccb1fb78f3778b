//! Numbers as text: number literals in, exact decimals out, and raw bit patterns.
//!
//! # Number literals ([`parse_number`])
//!
//! An optional sign (`+` or `-`) followed by one of:
//!
//! - a decimal: `3.14159`, `.5`, `5.`, `-1e-3`, `1E+10`;
//! - a hexadecimal float: `0x1.8p3`, `-0x.8p-2`, `0x1p-149` (the binary exponent after `p` is
//!   optional: `0x10` is the integer 16, `0x1.8` is 1.5);
//! - a binary number: `0b101`, `0b1.01p-3`;
//! - `inf` or `infinity`, and `nan` (the canonical quiet NaN: payload with only the quiet bit
//!   set) or `nan(0x…)` with an explicit left-aligned payload, as [`Value`]'s `Display` prints
//!   it.
//!
//! Letters are case-insensitive. Underscores may separate digits (`1_000`, `0x3f80_0000`);
//! no other character, and no whitespace, is accepted.
//!
//! ## Exactness
//!
//! A [`Value`] is a dyadic rational `sig × 2^exp` with a significand of at most 128 bits.
//! Hexadecimal and binary literals are dyadic, and decimals such as `0.5` or `448` are too;
//! those are parsed exactly when their odd significand fits in 128 bits.
//!
//! Any other literal (a decimal such as `0.1`, which is not a dyadic rational, or a dyadic
//! with more than 128 significant bits) is **rounded to odd at 126 significant bits**: the
//! exact value is truncated to 126 bits and, if anything non-zero was discarded, the last kept
//! bit is set. [`Parsed::exact`] is then `false`.
//!
//! The guarantee: rounding to odd at `p` bits and then rounding to `q ≤ p − 2` bits gives the
//! same result as rounding the exact value to `q` bits directly (Boldo and Melquiond), for
//! round-to-nearest (either tie rule), toward zero, toward ±∞ and the integral variants; and
//! comparisons with any value of at most 125 significant bits (range limits, the smallest
//! normal, 1.0 for `.sat`) come out as for the exact value. So for every destination whose
//! grid near the value has at most 124 significant bits — every format of at most 64 bits,
//! including subnormals and fixed point — converting the parsed value in any deterministic
//! mode gives the correctly rounded result of the literal, with the correct flags except that
//! an inexact parse also makes an exact-looking conversion inexact (a value that is not
//! dyadic is never exactly representable, so the `inexact` flag is right there too).
//! Stochastic rounding (`rs`) is also exact as long as the destination precision plus the
//! random-bit width is at most 125 (for example `f32` or narrower with 64 random bits, `f64`
//! with up to 72). What is *not* preserved: the low bits of an integer result that wraps
//! (`--wrap`) when the rounded integer needs more than 126 bits.
//!
//! ## Range
//!
//! Every literal is accepted whatever its exponent. Values are held exactly (or rounded to
//! odd) while a decimal's scientific exponent (`d.ddd × 10^X`) satisfies `|X| ≤`
//! [`MAX_DECIMAL_EXPONENT`] and a hexadecimal or binary literal's leading bit `2^T` satisfies
//! `|T| ≤` [`MAX_BINARY_EXPONENT`]. This is far beyond every format (the `f64` range is about
//! `10^±308`). A non-zero literal beyond it (`1e100001`, `1e-100001`, `0x1p-400000`) is held
//! as a stand-in on the same side of the range, `±(2^125 + 1) × 2^(±(MAX_BINARY_EXPONENT + 1)
//! − 125)` with [`Parsed::exact`] `false`: it rounds in every format as the literal does (an
//! overflow, or an underflow to zero or to the smallest subnormal as the rounding decides,
//! with the `inexact` flag), and no work grows with the exponent. Zero is exact with any
//! exponent.
//!
//! # Printing
//!
//! [`to_decimal`] prints a value exactly: every finite dyadic rational has a finite decimal
//! expansion (`2^-149` has 149 digits after the point). [`to_short`] gives a `%g`-style short
//! form that is marked with a leading `~` when it is not exact. Hexadecimal floats come from
//! [`Value`]'s `Display`.
//!
//! # Bit patterns ([`parse_bits`])
//!
//! A non-negative integer in hexadecimal (`0x3f800000`), binary (`0b0011_1100`), octal
//! (`0o17`) or decimal, that must fit the width of a format.
//!
//! ```
//! use gpucvt::text::{parse_number, parse_bits, to_decimal, to_short};
//! use gpucvt::core::{format::F32, Value};
//! let p = parse_number("0x1.8p3").unwrap();
//! assert_eq!(p.value, Value::finite(false, 3, 2)); // 12
//! assert!(p.exact);
//! assert!(!parse_number("0.1").unwrap().exact);
//! assert_eq!(to_decimal(&F32.decode(0x3dcc_cccd)), "0.100000001490116119384765625");
//! assert_eq!(to_short(&F32.decode(0x3dcc_cccd), 8).to_string(), "~0.1");
//! assert_eq!(parse_bits("0x3f800000", &F32).unwrap(), 0x3f80_0000);
//! assert!(parse_bits("0x1_0000_0000", &F32).is_err());
//! let e = parse_number("1.2.3").unwrap_err();
//! assert_eq!(e.position, 4);
//! ```

use crate::core::format::Format;
use crate::core::value::{Class, Value};
use core::fmt;
use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

/// The largest decimal exponent `|X|` of a decimal literal `d.ddd × 10^X` (non-zero).
pub const MAX_DECIMAL_EXPONENT: i64 = 100_000;

/// The largest binary exponent `|T|` of the leading bit `2^T` of a parsed value (non-zero).
/// Every decimal within [`MAX_DECIMAL_EXPONENT`] is within this range too.
pub const MAX_BINARY_EXPONENT: i64 = 340_000;

/// The significant bits an inexact literal is rounded to (to odd).
pub const ODD_BITS: u64 = 126;

/// The payload of the canonical quiet NaN that `nan` parses to: only the quiet bit (the most
/// significant bit of the left-aligned payload).
pub const QUIET_NAN_PAYLOAD: u64 = 1 << 63;

/// A parsed number literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The value: exact, or rounded to odd at [`ODD_BITS`] bits (see the module documentation).
    pub value: Value,
    /// Whether `value` is exactly the literal's value.
    pub exact: bool,
}

/// What is wrong with a literal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// Nothing to parse.
    #[error("empty literal")]
    Empty,
    /// A character that cannot appear here.
    #[error("unexpected {found:?}, expected {expected}")]
    Unexpected {
        /// The character found.
        found: char,
        /// What could have been there.
        expected: &'static str,
    },
    /// The literal ends too early.
    #[error("unexpected end, expected {expected}")]
    End {
        /// What could have been there.
        expected: &'static str,
    },
    /// A word that is not `inf`, `infinity` or `nan`.
    #[error("unknown word {word:?}, expected a number, inf, infinity or nan")]
    Word {
        /// The word.
        word: String,
    },
    /// A non-zero number beyond the supported range.
    #[error(
        "number out of the supported range (decimal exponents up to ±{MAX_DECIMAL_EXPONENT}, \
         binary exponents up to ±{MAX_BINARY_EXPONENT})"
    )]
    Range,
    /// A bit pattern wider than its format.
    #[error(
        "the pattern does not fit in the {width} bits of {format} (largest pattern {})",
        format_bits(*max, *width)
    )]
    TooWide {
        /// The format's width.
        width: u32,
        /// The format's name (or what else the width belongs to).
        format: &'static str,
        /// The largest pattern that fits.
        max: u64,
    },
}

/// A literal that could not be parsed: what is wrong, where, and in which literal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {literal:?} at position {position}: {kind}")]
pub struct ParseError {
    /// What was being parsed: `number` or `bit pattern`.
    pub what: &'static str,
    /// The literal.
    pub literal: String,
    /// What is wrong.
    pub kind: ErrorKind,
    /// The 1-based position (in characters) of the problem; one past the end for problems at
    /// the end.
    pub position: usize,
}

/// A cursor over the characters of a literal.
struct Cursor<'a> {
    what: &'static str,
    text: &'a str,
    chars: Vec<char>,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(what: &'static str, text: &'a str) -> Self {
        Cursor {
            what,
            text,
            chars: text.chars().collect(),
            i: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek().is_some_and(|p| p.eq_ignore_ascii_case(&c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn error_at(&self, at: usize, kind: ErrorKind) -> ParseError {
        ParseError {
            what: self.what,
            literal: self.text.to_string(),
            kind,
            position: at + 1,
        }
    }

    /// An error at the cursor: the unexpected character, or the end.
    fn unexpected(&self, expected: &'static str) -> ParseError {
        let kind = match self.peek() {
            Some(found) => ErrorKind::Unexpected { found, expected },
            None => ErrorKind::End { expected },
        };
        self.error_at(self.i, kind)
    }

    /// Digits of `radix`, with `_` allowed after the first digit. Returns the digits (ASCII,
    /// without separators).
    fn digits(&mut self, radix: u32, into: &mut String) -> usize {
        let mut n = 0;
        while let Some(c) = self.peek() {
            if c.is_digit(radix) {
                into.push(c.to_ascii_lowercase());
                n += 1;
            } else if c == '_' && n > 0 {
                // a separator between digits
            } else {
                break;
            }
            self.i += 1;
        }
        n
    }

    /// An optionally signed decimal exponent, saturated to ±10^15 (far beyond every limit).
    fn exponent(&mut self) -> Result<i64, ParseError> {
        let negative = if self.eat('-') {
            true
        } else {
            self.eat('+');
            false
        };
        let mut s = String::new();
        if self.digits(10, &mut s) == 0 {
            return Err(self.unexpected("an exponent digit"));
        }
        let mut e: i64 = 0;
        for c in s.bytes() {
            e = (e * 10 + i64::from(c - b'0')).min(1_000_000_000_000_000);
        }
        Ok(if negative { -e } else { e })
    }
}

fn big(digits: &str, radix: u32) -> BigUint {
    if digits.is_empty() {
        BigUint::zero()
    } else {
        // Only digits of `radix` were collected.
        BigUint::parse_bytes(digits.as_bytes(), radix).unwrap_or_default()
    }
}

/// Parses a number literal (see the module documentation for the syntax and the exactness
/// guarantee). Never panics.
///
/// ```
/// use gpucvt::text::parse_number;
/// use gpucvt::core::Value;
/// assert_eq!(parse_number("-0x.8p-2").unwrap().value, Value::finite(true, 1, -3));
/// assert_eq!(parse_number("1E+10").unwrap().value, Value::finite(false, 10_000_000_000, 0));
/// assert_eq!(parse_number("-inf").unwrap().value, Value::infinity(true));
/// assert!(parse_number("nan").unwrap().value.is_nan());
/// ```
pub fn parse_number(text: &str) -> Result<Parsed, ParseError> {
    let mut c = Cursor::new("number", text);
    if c.chars.is_empty() {
        return Err(c.error_at(0, ErrorKind::Empty));
    }
    let negative = if c.eat('-') {
        true
    } else {
        c.eat('+');
        false
    };
    let parsed = match c.peek() {
        None => return Err(c.unexpected("a digit, '.', inf or nan")),
        Some(ch) if ch.is_ascii_alphabetic() => word(&mut c, negative)?,
        Some('0') if matches!(c.peek_at(1), Some('x' | 'X' | 'b' | 'B')) => {
            let radix = if c.peek_at(1).is_some_and(|x| x.eq_ignore_ascii_case(&'x')) {
                16
            } else {
                2
            };
            c.i += 2;
            radix_number(&mut c, negative, radix)?
        }
        Some(_) => decimal(&mut c, negative)?,
    };
    if c.peek().is_some() {
        return Err(c.unexpected("the end of the number"));
    }
    Ok(parsed)
}

fn word(c: &mut Cursor<'_>, negative: bool) -> Result<Parsed, ParseError> {
    let start = c.i;
    let mut w = String::new();
    while let Some(ch) = c.peek().filter(|ch| ch.is_ascii_alphabetic()) {
        w.push(ch.to_ascii_lowercase());
        c.i += 1;
    }
    let value = match w.as_str() {
        "inf" | "infinity" => Value::infinity(negative),
        "nan" => {
            let payload = if c.eat('(') {
                if !(c.eat('0') && c.eat('x')) {
                    return Err(c.unexpected("a hexadecimal payload 0x…"));
                }
                let mut s = String::new();
                let digits_start = c.i;
                if c.digits(16, &mut s) == 0 {
                    return Err(c.unexpected("a hexadecimal digit"));
                }
                let Some(p) = big(&s, 16).to_u64() else {
                    return Err(c.error_at(
                        digits_start,
                        ErrorKind::Unexpected {
                            found: c.chars[digits_start],
                            expected: "a payload of at most 64 bits",
                        },
                    ));
                };
                if !c.eat(')') {
                    return Err(c.unexpected("')'"));
                }
                p
            } else {
                QUIET_NAN_PAYLOAD
            };
            Value::nan(negative, payload)
        }
        _ => return Err(c.error_at(start, ErrorKind::Word { word: w })),
    };
    Ok(Parsed { value, exact: true })
}

/// Hexadecimal or binary: mantissa digits with an optional point, optional `p` exponent.
fn radix_number(c: &mut Cursor<'_>, negative: bool, radix: u32) -> Result<Parsed, ParseError> {
    let start = c.i;
    let mut s = String::new();
    let int_digits = c.digits(radix, &mut s);
    let mut frac_digits = 0;
    if c.eat('.') {
        frac_digits = c.digits(radix, &mut s);
    }
    if int_digits + frac_digits == 0 {
        return Err(c.unexpected(if radix == 16 {
            "a hexadecimal digit"
        } else {
            "a binary digit"
        }));
    }
    let p = if c.eat('p') { c.exponent()? } else { 0 };
    let per_digit: i64 = if radix == 16 { 4 } else { 1 };
    let m = big(&s, radix);
    let exp2 = p.saturating_sub(per_digit.saturating_mul(frac_digits as i64));
    let range = || c.error_at(start, ErrorKind::Range);
    if !m.is_zero() {
        let top = exp2.saturating_add(m.bits() as i64 - 1);
        if top.abs() > MAX_BINARY_EXPONENT {
            return Ok(beyond(negative, top > 0));
        }
    }
    dyadic_quotient(negative, m, 0, exp2).ok_or_else(range)
}

fn decimal(c: &mut Cursor<'_>, negative: bool) -> Result<Parsed, ParseError> {
    let start = c.i;
    let mut s = String::new();
    let int_digits = c.digits(10, &mut s);
    let mut frac_digits = 0;
    let point = c.eat('.');
    if point {
        frac_digits = c.digits(10, &mut s);
    }
    if int_digits + frac_digits == 0 {
        return Err(c.unexpected(if point {
            "a digit"
        } else {
            "a digit, '.', inf or nan"
        }));
    }
    let e = if c.eat('e') { c.exponent()? } else { 0 };
    let e = e.saturating_sub(frac_digits as i64);
    let significant = s.trim_start_matches('0');
    if significant.is_empty() {
        return Ok(Parsed {
            value: Value::zero(negative),
            exact: true,
        });
    }
    let range = || c.error_at(start, ErrorKind::Range);
    // The scientific exponent: the literal is d.ddd × 10^sci.
    let sci = e.saturating_add(significant.len() as i64 - 1);
    if sci.abs() > MAX_DECIMAL_EXPONENT {
        return Ok(beyond(negative, sci > 0));
    }
    let d = big(significant, 10);
    // d × 10^e = d × 5^e × 2^e, or d / 5^-e × 2^e. |e| is bounded by the exponent limit and
    // the number of digits, so it fits in u32.
    let k = u32::try_from(e.unsigned_abs()).map_err(|_| range())?;
    if e >= 0 {
        dyadic_quotient(negative, d * BigUint::from(5u32).pow(k), 0, e).ok_or_else(range)
    } else {
        dyadic_quotient(negative, d, k, e).ok_or_else(range)
    }
}

/// The stand-in for a non-zero literal beyond the range (see the module documentation):
/// rounded to odd at [`ODD_BITS`] bits just beyond `2^±MAX_BINARY_EXPONENT`, so that every
/// format rounds it as it rounds the literal.
fn beyond(negative: bool, huge: bool) -> Parsed {
    let top = if huge {
        MAX_BINARY_EXPONENT + 1
    } else {
        -(MAX_BINARY_EXPONENT + 1)
    };
    let sig = (1u128 << (ODD_BITS - 1)) | 1;
    Parsed {
        value: Value::finite(negative, sig, (top - (ODD_BITS as i64 - 1)) as i32),
        exact: false,
    }
}

/// `num / 5^k × 2^exp2` as a value: exact when it is a dyadic of at most 128 significant bits,
/// otherwise rounded to odd at [`ODD_BITS`] bits. `None` if out of range.
fn dyadic_quotient(negative: bool, num: BigUint, k: u32, exp2: i64) -> Option<Parsed> {
    if num.is_zero() {
        return Some(Parsed {
            value: Value::zero(negative),
            exact: true,
        });
    }
    let (num, den) = if k == 0 {
        (num, None)
    } else {
        let den = BigUint::from(5u32).pow(k);
        let (q, r) = num.div_rem(&den);
        if r.is_zero() {
            (q, None)
        } else {
            (num, Some(den))
        }
    };
    let (sig, exp, exact) = match den {
        None => {
            let tz = num.trailing_zeros().unwrap_or(0);
            let odd = num >> tz;
            let exp = exp2.checked_add(i64::try_from(tz).ok()?)?;
            match odd.to_u128() {
                Some(sig) => (sig, exp, true),
                None => round_to_odd(&odd, &BigUint::from(1u32), exp)?,
            }
        }
        Some(den) => round_to_odd(&num, &den, exp2)?,
    };
    let top = exp.checked_add(127 - i64::from(sig.leading_zeros()))?;
    if top.abs() > MAX_BINARY_EXPONENT + 1 {
        return None;
    }
    Some(Parsed {
        value: Value::finite(negative, sig, i32::try_from(exp).ok()?),
        exact,
    })
}

/// `num / den × 2^exp2` (non-zero) rounded to odd at [`ODD_BITS`] bits: `(sig, exp, exact)`.
fn round_to_odd(num: &BigUint, den: &BigUint, exp2: i64) -> Option<(u128, i64, bool)> {
    let nb = i64::try_from(num.bits()).ok()?;
    let db = i64::try_from(den.bits()).ok()?;
    // Shift so that the quotient has at least ODD_BITS + 1 bits:
    // num × 2^s / den > 2^(nb − 1 + s − db) = 2^ODD_BITS.
    let s = (ODD_BITS as i64 + 1 + db - nb).max(0);
    let (mut q, r) = (num << (s as u64)).div_rem(den);
    let mut sticky = !r.is_zero();
    let drop = q.bits().saturating_sub(ODD_BITS);
    if drop > 0 {
        sticky |= q.trailing_zeros().is_some_and(|tz| tz < drop);
        q >>= drop;
    }
    let mut sig = q.to_u128()?;
    if sticky {
        sig |= 1;
    }
    let exp = exp2
        .checked_sub(s)?
        .checked_add(i64::try_from(drop).ok()?)?;
    Some((sig, exp, !sticky))
}

/// The exact difference `a − b` of two finite (or zero) values: exact when it fits a
/// [`Value`] (at most 128 significant bits), otherwise rounded to odd at [`ODD_BITS`] bits
/// ([`Parsed::exact`] says which). `None` for infinities, NaNs, or a difference beyond the
/// parser's range ([`MAX_BINARY_EXPONENT`]).
///
/// ```
/// use gpucvt::text::difference;
/// use gpucvt::core::Value;
/// let d = difference(&Value::finite(false, 13, -2), &Value::finite(false, 3, 0)).unwrap();
/// assert_eq!(d.value, Value::finite(false, 1, -2)); // 3.25 − 3
/// let d = difference(&Value::finite(false, 1, -1000), &Value::finite(false, 1, 0)).unwrap();
/// assert!(d.value.negative && !d.exact); // 2^-1000 − 1 needs 1000 bits
/// ```
pub fn difference(a: &Value, b: &Value) -> Option<Parsed> {
    use num_bigint::{BigInt, Sign};
    fn parts(v: &Value) -> Option<(BigInt, i64)> {
        match v.class {
            Class::Zero => Some((BigInt::zero(), i64::MAX)),
            Class::Finite(d) => {
                let sign = if v.negative { Sign::Minus } else { Sign::Plus };
                Some((
                    BigInt::from_biguint(sign, BigUint::from(d.sig)),
                    i64::from(d.exp),
                ))
            }
            _ => None,
        }
    }
    let (x, ex) = parts(a)?;
    let (y, ey) = parts(b)?;
    let e = ex.min(ey);
    if e == i64::MAX {
        return Some(Parsed {
            value: Value::zero(a.negative && !b.negative),
            exact: true,
        });
    }
    let align = |n: BigInt, en: i64| -> Option<BigInt> {
        if n.is_zero() {
            Some(n)
        } else {
            let shift = u64::try_from(en - e).ok()?;
            // Keep the work bounded: both values are within the parser's range.
            (shift <= 4 * MAX_BINARY_EXPONENT as u64).then(|| n << shift)
        }
    };
    let diff = align(x, ex)? - align(y, ey)?;
    let (sign, mag) = diff.into_parts();
    dyadic_quotient(sign == Sign::Minus, mag, 0, e)
}

/// Parses a bit pattern for `format`: a non-negative integer in hexadecimal (`0x`), binary
/// (`0b`), octal (`0o`) or decimal, with optional `_` separators, that fits the format's
/// width. Never panics.
///
/// ```
/// use gpucvt::text::parse_bits;
/// use gpucvt::core::format::{E4M3, E2M1};
/// assert_eq!(parse_bits("0b0_1111_110", &E4M3).unwrap(), 0x7e);
/// assert_eq!(parse_bits("15", &E2M1).unwrap(), 15);
/// assert!(parse_bits("16", &E2M1).is_err());
/// ```
pub fn parse_bits(text: &str, format: &Format) -> Result<u64, ParseError> {
    parse_bits_named(text, format.width(), format.name)
}

/// Parses a bit pattern that must fit in `width` bits (1 to 64); `name` says what the width
/// belongs to in the error message.
pub fn parse_bits_named(text: &str, width: u32, name: &'static str) -> Result<u64, ParseError> {
    let mut c = Cursor::new("bit pattern", text);
    if c.chars.is_empty() {
        return Err(c.error_at(0, ErrorKind::Empty));
    }
    let radix = match (c.peek(), c.peek_at(1).map(|x| x.to_ascii_lowercase())) {
        (Some('0'), Some('x')) => 16,
        (Some('0'), Some('b')) => 2,
        (Some('0'), Some('o')) => 8,
        _ => 10,
    };
    if radix != 10 {
        c.i += 2;
    }
    let mut s = String::new();
    if c.digits(radix, &mut s) == 0 {
        return Err(c.unexpected(match radix {
            16 => "a hexadecimal digit",
            8 => "an octal digit",
            2 => "a binary digit",
            _ => "a non-negative integer (decimal, 0x…, 0b… or 0o…)",
        }));
    }
    if c.peek().is_some() {
        return Err(c.unexpected(match radix {
            16 => "a hexadecimal digit or the end",
            8 => "an octal digit or the end",
            2 => "a binary digit or the end",
            _ => "a decimal digit or the end",
        }));
    }
    let n = big(&s, radix);
    let width = width.clamp(1, 64);
    let max = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    match n.to_u64() {
        Some(v) if v <= max => Ok(v),
        _ => Err(c.error_at(
            0,
            ErrorKind::TooWide {
                width,
                format: name,
                max,
            },
        )),
    }
}

/// A PTX floating-point literal: `0f` and exactly 8 hexadecimal digits (the bits of an
/// `f32`, `0f3F800000` is 1.0) or `0d` and exactly 16 (the bits of an `f64`), either letter
/// case. `None` when `text` does not start with `0f`/`0d` followed by a hexadecimal digit;
/// otherwise the pattern and its format, or what is wrong with the literal.
///
/// ```
/// use gpucvt::text::ptx_float_literal;
/// use gpucvt::core::format::{F32, F64};
/// assert_eq!(ptx_float_literal("0f3F800000"), Some(Ok((0x3f80_0000, F32))));
/// assert_eq!(ptx_float_literal("0D3FF0000000000000"), Some(Ok((0x3ff0_0000_0000_0000, F64))));
/// assert!(ptx_float_literal("0f3F8").unwrap().is_err());
/// assert_eq!(ptx_float_literal("0x3f800000"), None);
/// ```
pub fn ptx_float_literal(text: &str) -> Option<Result<(u64, Format), FloatLiteralError>> {
    let b = text.as_bytes();
    if b.len() < 3 || b[0] != b'0' || !b[2].is_ascii_hexdigit() {
        return None;
    }
    let (format, digits) = match b[1] {
        b'f' | b'F' => (crate::core::format::F32, 8),
        b'd' | b'D' => (crate::core::format::F64, 16),
        _ => return None,
    };
    let hex = &text[2..];
    // (At most 16 hexadecimal digits always parse.)
    match u64::from_str_radix(hex, 16) {
        Ok(v) if hex.len() == digits && hex.bytes().all(|c| c.is_ascii_hexdigit()) => {
            Some(Ok((v, format)))
        }
        _ => Some(Err(FloatLiteralError {
            shown: text.chars().take(40).collect(),
            more: if text.chars().nth(40).is_some() {
                "…"
            } else {
                ""
            },
            format: format.name,
            letter: b[1] as char,
            digits,
        })),
    }
}

/// A `0f`/`0d` literal without exactly its number of hexadecimal digits
/// ([`ptx_float_literal`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{shown:?}{more} is not a PTX {format} literal: 0{letter} takes exactly {digits} hexadecimal digits (the {format} bits)")]
pub struct FloatLiteralError {
    /// The literal's first 40 characters.
    pub shown: String,
    /// `…` when the literal is longer.
    pub more: &'static str,
    /// `f32` or `f64`.
    pub format: &'static str,
    /// The letter after the `0`, as written.
    pub letter: char,
    /// The digits the literal needs.
    pub digits: usize,
}

/// A bit pattern in hexadecimal, zero-padded to the digits of `width` bits: `0x3f800000`,
/// `0x7`, `0x0ff` (for 9 bits).
pub fn format_bits(bits: u64, width: u32) -> String {
    let digits = width.div_ceil(4).max(1) as usize;
    format!("0x{bits:0digits$x}")
}

/// The exact decimal digits of a finite non-zero magnitude: `(digits, point)` where the value
/// is `0.digits × 10^point`, the digits without leading or trailing zeros.
fn decimal_digits(sig: u128, exp: i32) -> (String, i64) {
    let sig = BigUint::from(sig);
    let (n, frac) = if exp >= 0 {
        (sig << (exp as u64), 0i64)
    } else {
        let k = exp.unsigned_abs();
        (sig * BigUint::from(5u32).pow(k), i64::from(k))
    };
    let s = n.to_string();
    let point = s.len() as i64 - frac;
    let digits = s.trim_end_matches('0').to_string();
    (digits, point)
}

/// Prints a value exactly in decimal: `0.1` is printed as the dyadic it was rounded to,
/// `2^-149` with all its 105 significant digits. Zeros are `0` and `-0`, infinities `inf` and
/// `-inf`, NaNs `nan` and `-nan` (payloads are not printed; [`Value`]'s `Display` shows them).
///
/// The work grows with the square of the number of digits; values of the catalogue's formats
/// print instantly, values near the parser's range limits in a fraction of a second.
///
/// ```
/// use gpucvt::text::to_decimal;
/// use gpucvt::core::{format::F16, Value};
/// assert_eq!(to_decimal(&Value::finite(true, 3, -1)), "-1.5");
/// assert_eq!(to_decimal(&F16.decode(0x0001)), "0.000000059604644775390625");
/// assert_eq!(to_decimal(&Value::finite(false, 1, 70)), "1180591620717411303424");
/// ```
pub fn to_decimal(v: &Value) -> String {
    let sign = if v.negative { "-" } else { "" };
    match v.class {
        Class::Zero => format!("{sign}0"),
        Class::Infinite => format!("{sign}inf"),
        Class::Nan { .. } => format!("{sign}nan"),
        Class::Finite(d) if d.sig == 0 => format!("{sign}0"),
        Class::Finite(d) => {
            let (digits, point) = decimal_digits(d.sig, d.exp);
            format!("{sign}{}", positional(&digits, point))
        }
    }
}

/// `0.digits × 10^point` in positional notation.
fn positional(digits: &str, point: i64) -> String {
    let len = digits.len() as i64;
    if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point >= len {
        format!("{digits}{}", "0".repeat((point - len) as usize))
    } else {
        let (a, b) = digits.split_at(point as usize);
        format!("{a}.{b}")
    }
}

/// A short decimal form of a value (see [`to_short`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Short {
    /// The decimal, without the approximation mark.
    pub text: String,
    /// Whether `text` is the exact value.
    pub exact: bool,
}

impl fmt::Display for Short {
    /// The text, with a leading `~` when it is approximate.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.exact {
            f.write_str("~")?;
        }
        f.write_str(&self.text)
    }
}

/// A `%g`-style short form: the exact value if it has at most `max_digits` significant
/// digits, otherwise the value rounded to `max_digits` significant digits (ties to even on
/// the exact digits) and marked as approximate (`Display` prefixes `~`). Trailing zeros are
/// dropped; scientific notation (`1.1754944e-38`) is used below `1e-5`, and from `1e21` on (or
/// from `10^max_digits` on for approximations).
///
/// ```
/// use gpucvt::text::to_short;
/// use gpucvt::core::{format::{F32, F16}, Value};
/// assert_eq!(to_short(&F16.decode(0x7bff), 8).to_string(), "65504");
/// assert_eq!(to_short(&F32.decode(0x7f7f_ffff), 8).to_string(), "~3.4028235e+38");
/// assert_eq!(to_short(&F32.decode(0x0000_0001), 8).to_string(), "~1.4012985e-45");
/// assert_eq!(to_short(&Value::finite(false, 1, -3), 8).to_string(), "0.125");
/// ```
pub fn to_short(v: &Value, max_digits: usize) -> Short {
    let max_digits = max_digits.max(1);
    let d = match v.class {
        Class::Finite(d) if d.sig != 0 => d,
        _ => {
            return Short {
                text: to_decimal(v),
                exact: true,
            }
        }
    };
    let sign = if v.negative { "-" } else { "" };
    let (mut digits, mut point) = decimal_digits(d.sig, d.exp);
    let exact = digits.len() <= max_digits;
    if !exact {
        let (kept, rest) = digits.split_at(max_digits);
        let rest = rest.as_bytes();
        let up = match rest[0] {
            b'6'..=b'9' => true,
            b'5' => {
                rest[1..].iter().any(|&b| b != b'0') || kept.as_bytes()[max_digits - 1] % 2 == 1
            }
            _ => false,
        };
        let mut kept = kept.as_bytes().to_vec();
        if up {
            let mut i = kept.len();
            loop {
                if i == 0 {
                    kept.insert(0, b'1');
                    kept.pop();
                    point += 1;
                    break;
                }
                i -= 1;
                if kept[i] == b'9' {
                    kept[i] = b'0';
                } else {
                    kept[i] += 1;
                    break;
                }
            }
        }
        digits = String::from_utf8_lossy(&kept)
            .trim_end_matches('0')
            .to_string();
    }
    // The scientific exponent: value = d.ddd × 10^sci.
    let sci = point - 1;
    let plain_limit = if exact { 21 } else { max_digits as i64 };
    let text = if (-5..plain_limit).contains(&sci) {
        positional(&digits, point)
    } else {
        let (a, b) = digits.split_at(1);
        let dot = if b.is_empty() { "" } else { "." };
        format!("{a}{dot}{b}e{sci:+}")
    };
    Short {
        text: format!("{sign}{text}"),
        exact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::convert::{convert, Policy};
    use crate::core::format::{CATALOGUE, E4M3, F32, F64};
    use crate::core::round::Rounding;
    use num_bigint::BigInt;
    use num_traits::Signed;
    use proptest::prelude::*;

    fn value(s: &str) -> Value {
        parse_number(s).unwrap().value
    }

    #[test]
    fn decimals() {
        assert_eq!(value("3.25"), Value::finite(false, 13, -2));
        assert_eq!(value(".5"), Value::finite(false, 1, -1));
        assert_eq!(value("5."), Value::finite(false, 5, 0));
        assert!(value("-1e-3").negative);
        assert_eq!(value("1E+10"), Value::finite(false, 10_000_000_000, 0));
        assert_eq!(value("1_000"), Value::finite(false, 1000, 0));
        assert_eq!(value("0.0e99999999999999999999"), Value::zero(false));
        assert_eq!(value("-0"), Value::zero(true));
        assert_eq!(value("+448"), Value::finite(false, 448, 0));
        // 2^-149 written out exactly is exact.
        let tiny = to_decimal(&F32.decode(1));
        let p = parse_number(&tiny).unwrap();
        assert!(p.exact);
        assert_eq!(p.value, Value::finite(false, 1, -149));
    }

    #[test]
    fn hex_and_binary() {
        assert_eq!(value("0x1.8p3"), Value::finite(false, 3, 2));
        assert_eq!(value("-0x.8p-2"), Value::finite(true, 1, -3));
        assert_eq!(value("0x1p-149"), Value::finite(false, 1, -149));
        assert_eq!(value("0X1P+1"), Value::finite(false, 1, 1));
        assert_eq!(value("0x10"), Value::finite(false, 16, 0));
        assert_eq!(value("0b101.1"), Value::finite(false, 11, -1));
        assert_eq!(value("0x3f80_0000"), Value::finite(false, 0x3f80_0000, 0));
        // 129 significant bits: rounded to odd at 126.
        let p = parse_number("0x1.00000000000000000000000000000001p0").unwrap();
        assert!(!p.exact);
        assert_eq!(p.value, Value::finite(false, (1u128 << 125) | 1, -125));
        // 128 significant bits: exact.
        let p = parse_number("0xffffffffffffffffffffffffffffffff").unwrap();
        assert!(p.exact);
        assert_eq!(p.value, Value::finite(false, u128::MAX, 0));
    }

    #[test]
    fn words() {
        assert_eq!(value("inf"), Value::infinity(false));
        assert_eq!(value("-Infinity"), Value::infinity(true));
        assert_eq!(value("NaN"), Value::nan(false, QUIET_NAN_PAYLOAD));
        assert_eq!(value("-nan(0x4)"), Value::nan(true, 4));
        // Display of a NaN parses back.
        let v = Value::nan(false, 0x8000_0000_0000_0001);
        assert_eq!(value(&v.to_string()), v);
    }

    #[test]
    fn errors_name_the_position() {
        let e = parse_number("3.1x").unwrap_err();
        assert_eq!(e.position, 4);
        assert_eq!(
            e.to_string(),
            "invalid number \"3.1x\" at position 4: unexpected 'x', expected the end of the number"
        );
        assert_eq!(parse_number("").unwrap_err().kind, ErrorKind::Empty);
        assert_eq!(parse_number("-").unwrap_err().position, 2);
        assert_eq!(parse_number("1e").unwrap_err().position, 3);
        assert_eq!(parse_number("0x").unwrap_err().position, 3);
        assert_eq!(parse_number("0x1.8p").unwrap_err().position, 7);
        assert!(matches!(
            parse_number("pi").unwrap_err().kind,
            ErrorKind::Word { .. }
        ));
        assert!(parse_number("1e100000").is_ok());
        assert!(parse_number("1e-100000").is_ok());
        assert!(parse_number("_1").is_err());
        assert!(parse_number("1 ").is_err());
        assert!(parse_number("nan(0x10000000000000000)").is_err());
    }

    /// Literals beyond the exact range round like themselves: huge ones overflow, tiny ones
    /// underflow, with the sign kept and the result inexact, on both sides of the limit alike.
    #[test]
    fn literals_beyond_the_range_round_like_themselves() {
        use crate::core::convert::{convert, Flags, Policy};
        use crate::core::format::{F64, S2F6};
        use crate::core::Rounding;
        let conv = |t: &str, f: &Format, r: Rounding| {
            let p = parse_number(t).unwrap();
            (p.exact, convert(&p.value, f, r, &Policy::default()))
        };
        for t in [
            "1e100000",
            "1e100001",
            "1e999999999999",
            "0x1p340001",
            "0b1p999999",
        ] {
            let (exact, o) = conv(t, &F32, Rounding::RN);
            assert_eq!(o.bits, 0x7f80_0000, "{t}");
            assert!(o.flags.contains(Flags::OVERFLOW), "{t}");
            assert!(t == "1e100000" || !exact, "{t}");
            let (_, o) = conv(&format!("-{t}"), &F64, Rounding::RZ);
            assert_eq!(o.bits, 0xffef_ffff_ffff_ffff, "{t}");
        }
        for t in ["1e-100000", "1e-100001", "1e-999999999999", "0x1p-340001"] {
            let (exact, o) = conv(t, &F32, Rounding::RN);
            assert_eq!(o.bits, 0, "{t}");
            assert!(o.flags.contains(Flags::UNDERFLOW), "{t}");
            assert!(o.flags.contains(Flags::INEXACT), "{t}");
            assert!(!exact, "{t}");
            assert_eq!(conv(t, &F32, Rounding::RP).1.bits, 1, "{t}");
            assert_eq!(
                conv(&format!("-{t}"), &F32, Rounding::RZ).1.bits,
                0x8000_0000
            );
            assert_eq!(conv(t, &S2F6, Rounding::RN).1.bits, 0, "{t}");
        }
        // The stand-ins keep their order with the exact values.
        let d = |t: &str| match parse_number(t).unwrap().value.class {
            Class::Finite(d) => d,
            c => panic!("{c:?}"),
        };
        assert!(d("1e100001").cmp_value(&d("1e100000")).is_gt());
        assert!(d("1e-100001").cmp_value(&d("1e-100000")).is_lt());
    }

    #[test]
    fn bits() {
        assert_eq!(parse_bits("0x3f800000", &F32).unwrap(), 0x3f80_0000);
        assert_eq!(parse_bits("0b1", &E4M3).unwrap(), 1);
        assert_eq!(parse_bits("0o377", &E4M3).unwrap(), 255);
        assert_eq!(parse_bits("255", &E4M3).unwrap(), 255);
        assert_eq!(parse_bits("0xffffffffffffffff", &F64).unwrap(), u64::MAX);
        let e = parse_bits("0x100", &E4M3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid bit pattern \"0x100\" at position 1: the pattern does not fit in the 8 \
             bits of e4m3 (largest pattern 0xff)"
        );
        assert!(parse_bits("0x1_0000_0000_0000_0000", &F64).is_err());
        assert!(parse_bits("-1", &E4M3).is_err());
        assert!(parse_bits("1.0", &E4M3).is_err());
        assert!(parse_bits("0x", &E4M3).is_err());
        assert!(parse_bits("", &E4M3).is_err());
        assert_eq!(format_bits(0x45, 8), "0x45");
        assert_eq!(format_bits(0x5, 8), "0x05");
        assert_eq!(format_bits(0x5, 4), "0x5");
        assert_eq!(format_bits(0x3f, 7), "0x3f");
        assert_eq!(format_bits(1, 32), "0x00000001");
    }

    #[test]
    fn printing() {
        assert_eq!(to_decimal(&Value::zero(true)), "-0");
        assert_eq!(to_decimal(&Value::infinity(true)), "-inf");
        assert_eq!(to_decimal(&Value::finite(false, 448, 0)), "448");
        assert_eq!(
            to_decimal(&F32.decode(1)),
            "0.00000000000000000000000000000000000000000000140129846432481707092372958328991\
             613128026194187651577175706828388979108268586060148663818836212158203125"
        );
        assert_eq!(to_short(&Value::finite(false, 1, -149), 3).text, "1.4e-45");
        assert_eq!(to_short(&Value::finite(false, 999, -10), 2).text, "0.98");
        assert_eq!(to_short(&Value::finite(false, 2047, -11), 2).text, "1");
        assert_eq!(
            to_short(&Value::finite(false, 1, 100), 5).to_string(),
            "~1.2677e+30"
        );
        // 2^64 − 1 is short at 20 digits; at 8 it is approximate.
        let m = Value::finite(false, u64::MAX as u128, 0);
        assert_eq!(to_short(&m, 20).to_string(), "18446744073709551615");
        assert_eq!(to_short(&m, 8).to_string(), "~1.8446744e+19");
        // Ties to even on the exact digits: 0.125 at 2 digits is 0.12, 0.375 is 0.38.
        assert_eq!(to_short(&Value::finite(false, 1, -3), 2).text, "0.12");
        assert_eq!(to_short(&Value::finite(false, 3, -3), 2).text, "0.38");
        assert_eq!(
            to_short(&Value::finite(true, 1, -20), 30).text,
            "-9.5367431640625e-7"
        );
    }

    /// The parsed value of a decimal against the exact rational: equal when exact, otherwise
    /// the round-to-odd of it at 126 bits.
    fn check_round_to_odd(text: &str) {
        let p = parse_number(text).unwrap();
        // The exact rational n / d.
        let t = text.trim_start_matches(['-', '+']);
        let (mant, e) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i64>().unwrap()),
            None => (t, 0),
        };
        let frac = mant.find('.').map_or(0, |i| mant.len() - i - 1) as i64;
        let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
        let n = BigInt::parse_bytes(digits.as_bytes(), 10).unwrap();
        let e = e - frac;
        let ten = BigInt::from(10);
        let (n, d) = if e >= 0 {
            (n * ten.pow(e as u32), BigInt::from(1))
        } else {
            (n, ten.pow((-e) as u32))
        };
        let Class::Finite(x) = p.value.class else {
            assert!(n.is_zero());
            return;
        };
        // v = sig × 2^exp as a rational a / b.
        let (a, b) = if x.exp >= 0 {
            (BigInt::from(x.sig) << x.exp as usize, BigInt::from(1))
        } else {
            (BigInt::from(x.sig), BigInt::from(1) << (-x.exp) as usize)
        };
        let diff = &a * &d - &n * &b; // sign of v − exact, times b·d
        if p.exact {
            assert!(diff.is_zero(), "{text}");
        } else {
            assert!(!diff.is_zero(), "{text}");
            // 126 significant bits, odd.
            assert_eq!(128 - x.sig.leading_zeros(), 126, "{text}");
            assert_eq!(x.sig & 1, 1, "{text}");
            // |v − exact| < 2^exp, i.e. |diff| × 2^-exp < b·d.
            let lhs = if x.exp >= 0 {
                diff.abs()
            } else {
                diff.abs() << (-x.exp) as usize
            };
            let rhs = if x.exp >= 0 {
                (&b * &d) << x.exp as usize
            } else {
                &b * &d
            };
            assert!(lhs < rhs, "{text}");
            // Truncation plus the sticky bit: the kept bits without the last one are the
            // truncation, so v − 2^exp < exact < v + 2^exp, and v is odd: both signs are
            // possible; the test above bounds the error.
        }
    }

    #[test]
    fn round_to_odd_examples() {
        for t in [
            "0.1",
            "3.14159",
            "1e-3",
            "1e60",
            "123456789012345678901234567890123456789012345678901234567890",
            "0.3",
            "2.5",
            "1e-45",
            "6.103515625e-5",
        ] {
            check_round_to_odd(t);
        }
    }

    #[test]
    fn every_catalogue_value_prints_and_parses_back() {
        for f in CATALOGUE.iter().filter(|f| f.width() <= 16) {
            for bits in 0..=f.mask() {
                let v = f.decode(bits);
                let p = parse_number(&to_decimal(&v)).unwrap();
                assert!(p.exact);
                if v.is_nan() {
                    assert!(p.value.is_nan());
                } else {
                    assert_eq!(p.value, v, "{f} {bits:#x}");
                }
                assert_eq!(
                    parse_number(&v.to_string()).unwrap().value.is_nan(),
                    v.is_nan()
                );
            }
        }
    }

    proptest! {
        #[test]
        fn random_strings_never_panic(s in "\\PC{0,40}") {
            let _ = parse_number(&s);
            let _ = parse_bits(&s, &F32);
        }

        #[test]
        fn number_like_strings_never_panic(
            s in "[-+]?(0[xXbB])?[0-9a-fA-F_.]{0,30}([eEpP][-+]?[0-9]{0,8})?(nan|inf)?[()]?"
        ) {
            if let Ok(p) = parse_number(&s) {
                let _ = to_decimal(&p.value);
                let _ = to_short(&p.value, 8);
            }
            let _ = parse_bits(&s, &E4M3);
        }

        #[test]
        fn decimals_round_like_std(
            m in 0u64..=u64::MAX, frac in 0usize..25, e in -350i32..350, neg in any::<bool>()
        ) {
            let digits = m.to_string();
            let mant = if frac < digits.len() {
                format!("{}.{}", &digits[..digits.len() - frac], &digits[digits.len() - frac..])
            } else {
                format!("0.{}{}", "0".repeat(frac - digits.len()), digits)
            };
            let text = format!("{}{}e{}", if neg { "-" } else { "" }, mant, e);
            check_round_to_odd(&text);
            let p = parse_number(&text).unwrap();
            // std's float parsing is correctly rounded (nearest even): the round-to-odd value
            // must convert to the same bits.
            let f64_bits = text.parse::<f64>().unwrap().to_bits();
            let got = convert(&p.value, &F64, Rounding::RN, &Policy::default());
            prop_assert_eq!(got.bits, f64_bits, "{}", text);
            let f32_bits = text.parse::<f32>().unwrap().to_bits() as u64;
            let got = convert(&p.value, &F32, Rounding::RN, &Policy::default());
            prop_assert_eq!(got.bits, f32_bits, "{}", text);
        }

        #[test]
        fn exact_decimal_round_trips(bits in any::<u64>()) {
            let v = F64.decode(bits);
            let p = parse_number(&to_decimal(&v)).unwrap();
            prop_assert!(p.exact);
            if !v.is_nan() {
                prop_assert_eq!(p.value, v);
            }
            // The hexadecimal Display round-trips too.
            let h = parse_number(&v.to_string()).unwrap();
            if !v.is_nan() {
                prop_assert_eq!(h.value, v);
            }
        }
    }
}
