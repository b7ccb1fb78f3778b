//! The one rounding routine.
//!
//! [`round_magnitude`] takes an exact finite non-zero value and a destination [`Format`], finds
//! the two destination values that bracket it on the destination's grid — with the exponent
//! range *unbounded above*, as IEEE 754 defines overflow — and picks one of them by the
//! rounding [`Direction`]. It does not look at ranges, policies or encodings: those are the
//! business of [`crate::convert`]. Every conversion of every format pair goes through it.
//!
//! ```
//! use gpucvt_core::{format::E2M1, round::{round_magnitude, Rounding}, value::Dyadic};
//! // 5 lies half way between 4 and 6 in e2m1; ties go to the even encoding, 4.
//! let r = round_magnitude(false, Dyadic::new(5, 0), &E2M1, Rounding::RN);
//! assert_eq!(r.result.to_dyadic(), Some(Dyadic::new(4, 0)));
//! // Toward +∞ gives 6.
//! let r = round_magnitude(false, Dyadic::new(5, 0), &E2M1, Rounding::RP);
//! assert_eq!(r.result.to_dyadic(), Some(Dyadic::new(6, 0)));
//! ```

use crate::format::{Format, Layout, ZeroExponent};
use crate::value::{bitlen, Dyadic};
use core::cmp::Ordering;

/// Which way to round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// To nearest, ties to the even encoding (PTX `.rn`, vISA RNE, Tile IR `nearest_even`).
    NearestEven,
    /// To nearest, ties away from zero (PTX `.rna`).
    NearestAway,
    /// Toward zero (PTX `.rz`, vISA RTZ, Tile IR `zero`).
    TowardZero,
    /// Toward −∞ (PTX `.rm`, vISA RD).
    Down,
    /// Toward +∞ (PTX `.rp`, vISA RU).
    Up,
    /// Stochastic (PTX `.rs`): the discarded part of the value, as a fraction of the gap
    /// between the two neighbours truncated to `width` bits, is added to the low `width` bits
    /// of `random`; a carry out of `width` bits steps away from zero, otherwise the result is
    /// truncated toward zero. With `random = 0` this is [`Direction::TowardZero`].
    Stochastic {
        /// The caller's random bits (only the low `width` bits are used).
        random: u64,
        /// How many random bits there are, 1 to 64.
        width: u32,
    },
}

/// A rounding: a direction, and whether to round to an integral value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rounding {
    /// Which way to round.
    pub direction: Direction,
    /// Round to an integral value (PTX `.rni .rzi .rmi .rpi`): the grid is coarsened to at
    /// least 1, so the result is the integral destination value chosen by `direction`.
    pub integral: bool,
}

impl Rounding {
    /// `.rn`: nearest, ties to even.
    pub const RN: Rounding = Rounding::new(Direction::NearestEven, false);
    /// `.rna`: nearest, ties away from zero.
    pub const RNA: Rounding = Rounding::new(Direction::NearestAway, false);
    /// `.rz`: toward zero.
    pub const RZ: Rounding = Rounding::new(Direction::TowardZero, false);
    /// `.rm`: toward −∞.
    pub const RM: Rounding = Rounding::new(Direction::Down, false);
    /// `.rp`: toward +∞.
    pub const RP: Rounding = Rounding::new(Direction::Up, false);
    /// `.rni`: to an integral value, nearest even.
    pub const RNI: Rounding = Rounding::new(Direction::NearestEven, true);
    /// `.rzi`: to an integral value, toward zero.
    pub const RZI: Rounding = Rounding::new(Direction::TowardZero, true);
    /// `.rmi`: to an integral value, toward −∞.
    pub const RMI: Rounding = Rounding::new(Direction::Down, true);
    /// `.rpi`: to an integral value, toward +∞.
    pub const RPI: Rounding = Rounding::new(Direction::Up, true);

    /// The names [`Rounding::from_name`] accepts.
    pub const NAMES: &'static [&'static str] = &[
        "rn", "rna", "rz", "rm", "rp", "rs", "rni", "rzi", "rmi", "rpi",
    ];

    /// A rounding from its parts.
    pub const fn new(direction: Direction, integral: bool) -> Rounding {
        Rounding {
            direction,
            integral,
        }
    }

    /// `.rs` with the caller's random bits.
    pub const fn stochastic(random: u64, width: u32) -> Rounding {
        Rounding::new(Direction::Stochastic { random, width }, false)
    }

    /// Looks up a rounding by its PTX-style name. `rs` gets zero random bits of width 32;
    /// use [`Rounding::stochastic`] to supply them.
    pub fn from_name(name: &str) -> Option<Rounding> {
        Some(match name.to_ascii_lowercase().as_str() {
            "rn" => Self::RN,
            "rna" => Self::RNA,
            "rz" => Self::RZ,
            "rm" => Self::RM,
            "rp" => Self::RP,
            "rs" => Self::stochastic(0, 32),
            "rni" => Self::RNI,
            "rzi" => Self::RZI,
            "rmi" => Self::RMI,
            "rpi" => Self::RPI,
            _ => return None,
        })
    }

    /// The PTX-style name.
    pub fn name(&self) -> &'static str {
        match (self.direction, self.integral) {
            (Direction::NearestEven, false) => "rn",
            (Direction::NearestAway, false) => "rna",
            (Direction::TowardZero, false) => "rz",
            (Direction::Down, false) => "rm",
            (Direction::Up, false) => "rp",
            (Direction::Stochastic { .. }, false) => "rs",
            (Direction::NearestEven, true) => "rni",
            (Direction::NearestAway, true) => "rnai",
            (Direction::TowardZero, true) => "rzi",
            (Direction::Down, true) => "rmi",
            (Direction::Up, true) => "rpi",
            (Direction::Stochastic { .. }, true) => "rsi",
        }
    }

    /// The stochastic width clamped to 1 to 64, or 0 for the other directions.
    ///
    /// ```
    /// use gpucvt_core::round::Rounding;
    /// assert_eq!(Rounding::stochastic(0, 13).stochastic_width(), 13);
    /// assert_eq!(Rounding::RN.stochastic_width(), 0);
    /// ```
    #[inline(always)]
    pub fn stochastic_width(&self) -> u32 {
        match self.direction {
            Direction::Stochastic { width, .. } => width.clamp(1, 64),
            _ => 0,
        }
    }

    /// Whether a result that overflows the destination's range becomes infinity (`true`) or
    /// the largest finite value (`false`), as IEEE 754 §7.4 defines for each direction.
    /// `toward_larger` says whether the rounding stepped away from zero (used by
    /// [`Direction::Stochastic`]).
    pub fn overflows_to_infinity(&self, negative: bool, toward_larger: bool) -> bool {
        match self.direction {
            Direction::NearestEven | Direction::NearestAway => true,
            Direction::TowardZero => false,
            Direction::Down => negative,
            Direction::Up => !negative,
            Direction::Stochastic { .. } => toward_larger,
        }
    }
}

/// A non-negative magnitude `m × 2^q` on a destination's grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Magnitude {
    /// The multiple of the grid step (may be zero).
    pub m: u128,
    /// The grid step's exponent.
    pub q: i32,
}

impl Magnitude {
    /// The magnitude as a dyadic; `None` for zero.
    pub fn to_dyadic(&self) -> Option<Dyadic> {
        (self.m != 0).then(|| Dyadic::new(self.m, self.q))
    }

    /// Exponent of the leading bit (`i32::MIN` for zero).
    pub fn top(&self) -> i32 {
        if self.m == 0 {
            i32::MIN
        } else {
            self.q + bitlen(self.m) - 1
        }
    }
}

/// Why a neighbour was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    /// The value is on the grid.
    Exact,
    /// It is nearer.
    Nearer,
    /// A tie, and its encoding is even.
    TieEven,
    /// A tie, and ties go away from zero.
    TieAway,
    /// The rounding direction says so.
    Directed,
    /// Stochastic rounding: `fraction + random` did (or did not) carry out of `width` bits.
    Stochastic {
        /// The discarded part, as a `width`-bit fraction of the gap.
        fraction: u128,
        /// The random bits used.
        random: u64,
        /// The width of both.
        width: u32,
    },
    /// There is nothing representable below (a format without zero, below its minimum).
    Forced,
}

/// The outcome of [`round_magnitude`]: the bracketing neighbours and the choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rounded {
    /// The exact magnitude that was rounded.
    pub exact: Dyadic,
    /// The largest grid value ≤ the magnitude; `None` when the format has nothing there.
    pub lower: Option<Magnitude>,
    /// The smallest grid value > the magnitude (equal to `lower` when exact).
    pub upper: Magnitude,
    /// Whether the upper neighbour was chosen.
    pub took_upper: bool,
    /// Why.
    pub why: Why,
    /// The chosen magnitude (`lower` or `upper`).
    pub result: Magnitude,
    /// Whether the magnitude is so large that the candidates could not be held exactly (only
    /// for fixed-point destinations; `result.m` is then correct modulo 2^128): it is out of
    /// every fixed-point range.
    pub huge: bool,
}

impl Rounded {
    /// Whether the result differs from the exact value.
    pub fn inexact(&self) -> bool {
        self.why != Why::Exact
    }
}

/// Where the value sits between its neighbours.
struct Position {
    /// `x − lower > upper − x`.
    above_half: bool,
    /// `x − lower = upper − x`.
    at_half: bool,
    /// `floor((x − lower) / (upper − lower) × 2^w)` for the stochastic width `w` (at most
    /// 64, so it fits in 64 bits).
    fraction: u64,
}

impl Position {
    /// The position from `x − lower` compared with `upper − x`.
    #[inline(always)]
    fn new(half: Ordering, fraction: u64) -> Position {
        Position {
            above_half: half == Ordering::Greater,
            at_half: half == Ordering::Equal,
            fraction,
        }
    }
}

/// The low `width` bits set, for a stochastic width of 1 to 64.
#[inline(always)]
fn mask64(width: u32) -> u64 {
    debug_assert!((1..=64).contains(&width));
    u64::MAX >> (64 - width)
}

#[inline]
fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// `sig` split at bit `s`: `(sig >> s, sig mod 2^s)`, for any `s`.
#[inline]
fn split(sig: u128, s: u32) -> (u128, u128) {
    if s >= 128 {
        (0, sig)
    } else {
        (sig >> s, sig & mask(s))
    }
}

/// Rounds the magnitude `x` (the value's sign is `negative`) onto the grid of `fmt`.
///
/// The grid is the format's with its exponent range unbounded above: a result larger than
/// the format's largest finite value is an overflow, for the caller to handle. Below, the
/// grid ends where the format ends: subnormals where the format has them, zero, or — for a
/// format without zero — its smallest value, which every smaller magnitude is forced to.
#[inline(always)]
pub fn round_magnitude(negative: bool, x: Dyadic, fmt: &Format, rounding: Rounding) -> Rounded {
    // Every decoded value has a significand of at most 64 bits (floats at most 53, integers
    // at most 64): the routine then runs on a `u64` significand, in 64-bit arithmetic. Only
    // wider values (built otherwise, such as parsed from text) take the same routine on a
    // `u128` significand, out of line.
    match u64::try_from(x.sig) {
        Ok(sig) => round_dyadic(negative, sig, x.exp, fmt, rounding),
        Err(_) => round_wide(negative, x, fmt, rounding),
    }
}

/// [`round_dyadic`] on a `u128` significand, out of line.
#[cold]
#[inline(never)]
fn round_wide(negative: bool, x: Dyadic, fmt: &Format, rounding: Rounding) -> Rounded {
    round_dyadic(negative, x.sig, x.exp, fmt, rounding)
}

/// A significand type of [`round_dyadic`]: `u64` (every decoded value) or `u128`.
trait Significand: Copy + Into<u128> {
    /// The number of significant bits.
    fn bitlen(self) -> i32;
    /// The significand as a `u64`, if it fits.
    fn narrow(self) -> Option<u64>;
}

impl Significand for u64 {
    #[inline(always)]
    fn bitlen(self) -> i32 {
        64 - self.leading_zeros() as i32
    }
    #[inline(always)]
    fn narrow(self) -> Option<u64> {
        Some(self)
    }
}

impl Significand for u128 {
    #[inline(always)]
    fn bitlen(self) -> i32 {
        bitlen(self)
    }
    #[inline(always)]
    fn narrow(self) -> Option<u64> {
        u64::try_from(self).ok()
    }
}

/// The body of [`round_magnitude`], for the magnitude `sig × 2^exp`.
#[inline(always)]
fn round_dyadic<S: Significand>(
    negative: bool,
    sig: S,
    exp: i32,
    fmt: &Format,
    rounding: Rounding,
) -> Rounded {
    let x = Dyadic {
        sig: sig.into(),
        exp,
    };
    let width = rounding.stochastic_width();
    // The exponent of the leading bit.
    let t = exp + sig.bitlen() - 1;
    // Grid step exponent q, or a gap below the smallest value.
    let (q, lower_even_by_exponent, has_zero) = match fmt.layout {
        Layout::Fixed(l) => (-(l.frac_bits as i32), None, true),
        Layout::Float(l) => {
            let m = l.man_bits as i32;
            match l.zero_exponent {
                ZeroExponent::Subnormal => ((t.max(1 - l.bias)) - m, None, true),
                zx => {
                    let e_lo = -l.bias;
                    // The smallest positive value.
                    let min_pos = match zx {
                        ZeroExponent::Normal => Dyadic::new(1, e_lo),
                        _ => Dyadic::new((1u128 << m) + 1, e_lo - m),
                    };
                    if !rounding.integral && x.cmp_value(&min_pos) == Ordering::Less {
                        return round_in_gap(negative, x, min_pos, zx, rounding, width);
                    }
                    (
                        t - m,
                        (m == 0).then_some(l.bias),
                        zx != ZeroExponent::Normal,
                    )
                }
            }
        }
    };
    let q = if rounding.integral { q.max(0) } else { q };
    let huge = t - q >= 127;
    // m_lo = floor(x / 2^q) (mod 2^128), and the position of x in [m_lo, m_lo + 1).
    let (m_lo, m_up, pos) = if q <= x.exp {
        let shift = x.exp - q;
        let m = if shift >= 128 { 0 } else { x.sig << shift };
        (m, m, None)
    } else if let Some(sig) = sig.narrow() {
        // The common case, in 64 bits (every decoded value).
        let (m, pos) = split_u64(sig, (q - x.exp) as u32, width);
        // m < 2^63: the upper neighbour too fits in 64 bits.
        (m as u128, (m + 1) as u128, Some(pos))
    } else {
        let s = (q - x.exp) as u32; // bits of x below the grid step
        let (m, rem) = split(x.sig, s);
        let half = if s > 128 {
            Ordering::Less
        } else {
            rem.cmp(&(1u128 << (s - 1)))
        };
        // rem < 2^s, so the fraction is below 2^width ≤ 2^64.
        let fraction = if width == 0 {
            0 // not stochastic
        } else if s >= width {
            let d = s - width;
            if d >= 128 {
                0
            } else {
                (rem >> d) as u64
            }
        } else {
            (rem << (width - s)) as u64
        };
        (m, m.wrapping_add(1), Some(Position::new(half, fraction)))
    };
    let lower = Magnitude { m: m_lo, q };
    let upper = Magnitude { m: m_up, q };
    let Some(pos) = pos else {
        return Rounded {
            exact: x,
            lower: Some(lower),
            upper: lower,
            took_upper: false,
            why: Why::Exact,
            result: lower,
            huge,
        };
    };
    // A format without zero has nothing below its smallest value (integral roundings of
    // values below 1 land here).
    if m_lo == 0 && !has_zero {
        return Rounded {
            exact: x,
            lower: None,
            upper,
            took_upper: true,
            why: Why::Forced,
            result: upper,
            huge,
        };
    }
    let lower_even = match lower_even_by_exponent {
        // One significant bit (ue8m0): the encoding's last bit is the exponent's.
        Some(bias) if m_lo != 0 => (q + bias) % 2 == 0,
        _ => m_lo % 2 == 0,
    };
    let (took_upper, why) = choose(negative, rounding.direction, &pos, lower_even);
    Rounded {
        exact: x,
        lower: Some(lower),
        upper,
        took_upper,
        why,
        result: if took_upper { upper } else { lower },
        huge,
    }
}

/// `sig × 2^-s`, for `s ≥ 1` bits of `sig` below the grid step, split into the multiple of
/// the step below it (less than 2^63) and its position between that multiple and the next,
/// with the stochastic fraction of `width` bits (0: not stochastic).
#[inline(always)]
fn split_u64(sig: u64, s: u32, width: u32) -> (u64, Position) {
    debug_assert!(s >= 1);
    // `below` is the bits under the step as a fraction of the step in 64 bits, truncated
    // when s > 64 (x is then less than half a step above m, and the fraction below 2^63).
    let (m, below) = if s < 64 {
        (sig >> s, sig << (64 - s))
    } else {
        (0, sig.checked_shr(s - 64).unwrap_or(0))
    };
    // The top `width` bits of the fraction (width ≤ 64).
    let fraction = if width == 0 {
        0 // not stochastic
    } else {
        below >> (64 - width)
    };
    let pos = Position {
        above_half: below > 1 << 63,
        at_half: below == 1 << 63,
        fraction,
    };
    (m, pos)
}

/// [`round_magnitude`] onto the grid of step 2^q of a fixed-point format (zero included,
/// evenness by the multiple's last bit), for the magnitude `sig × 2^exp` with `exp < q`
/// (`s = q − exp` bits below the step), in 64-bit arithmetic: the same
/// [`Rounded::took_upper`] and [`Rounded::result`] (a multiple of 2^q, at most 2^63). The
/// result is always inexact ([`Rounded::inexact`]). [`crate::convert`] uses it for the
/// common case of a fixed-point destination; [`round_magnitude`] takes the same steps.
#[inline(always)]
pub(crate) fn round_below_step_u64(negative: bool, sig: u64, s: u32, rounding: Rounding) -> u64 {
    let (m, pos) = split_u64(sig, s, rounding.stochastic_width());
    let (took_upper, _) = choose(negative, rounding.direction, &pos, m % 2 == 0);
    m + took_upper as u64
}

/// Rounding below the smallest positive value of a format without subnormals.
fn round_in_gap(
    negative: bool,
    x: Dyadic,
    min_pos: Dyadic,
    zx: ZeroExponent,
    rounding: Rounding,
    width: u32,
) -> Rounded {
    let upper = Magnitude {
        m: min_pos.sig,
        q: min_pos.exp,
    };
    if zx == ZeroExponent::Normal {
        return Rounded {
            exact: x,
            lower: None,
            upper,
            took_upper: true,
            why: Why::Forced,
            result: upper,
            huge: false,
        };
    }
    // lower = 0: compare 2x with upper; fraction = floor(x × 2^w / upper).
    let half = x.scale(1).cmp_value(&min_pos);
    let s = x.exp + width as i32 - min_pos.exp;
    let num = if s >= 0 {
        x.sig << s // x < min_pos, so this is below min_pos.sig × 2^width: it fits
    } else if s <= -128 {
        0
    } else {
        x.sig >> -s
    };
    // x < min_pos, so the quotient is below 2^width ≤ 2^64.
    let pos = Position::new(half, (num / min_pos.sig) as u64);
    let (took_upper, why) = choose(negative, rounding.direction, &pos, true);
    let lower = Magnitude { m: 0, q: 0 };
    Rounded {
        exact: x,
        lower: Some(lower),
        upper,
        took_upper,
        why,
        result: if took_upper { upper } else { lower },
        huge: false,
    }
}

#[inline(always)]
fn choose(negative: bool, direction: Direction, pos: &Position, lower_even: bool) -> (bool, Why) {
    match direction {
        Direction::NearestEven if pos.at_half => (!lower_even, Why::TieEven),
        Direction::NearestAway if pos.at_half => (true, Why::TieAway),
        Direction::NearestEven | Direction::NearestAway => (pos.above_half, Why::Nearer),
        Direction::TowardZero => (false, Why::Directed),
        Direction::Down => (negative, Why::Directed),
        Direction::Up => (!negative, Why::Directed),
        Direction::Stochastic { random, width } => {
            let width = width.clamp(1, 64);
            let mask = mask64(width);
            let r = random & mask;
            // fraction + r carries out of `width` bits: r > mask − fraction, without
            // overflowing 64 bits (the fraction is at most the mask).
            debug_assert!(pos.fraction <= mask);
            let carry = r > mask - pos.fraction;
            (
                carry,
                Why::Stochastic {
                    fraction: pos.fraction as u128,
                    random: r,
                    width,
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;

    fn r(x: Dyadic, f: &Format, mode: Rounding) -> Option<Dyadic> {
        round_magnitude(false, x, f, mode).result.to_dyadic()
    }

    #[test]
    fn e4m3_top_binade_rounds_on_virtual_grid() {
        // 464 is the tie between 448 (even) and the virtual 480.
        assert_eq!(
            r(Dyadic::new(464, 0), &E4M3, Rounding::RN),
            Some(Dyadic::new(448, 0))
        );
        assert_eq!(
            r(Dyadic::new(465, 0), &E4M3, Rounding::RN),
            Some(Dyadic::new(480, 0))
        );
    }

    #[test]
    fn vf_gap() {
        // Half of the smallest VF magnitude 17/128 is a tie: zero is even.
        let half = Dyadic::new(17, -8);
        let rr = round_magnitude(false, half, &VF, Rounding::RN);
        assert_eq!(rr.result.m, 0);
        assert_eq!(rr.why, Why::TieEven);
        let rr = round_magnitude(false, Dyadic::new(1, -3), &VF, Rounding::RN);
        assert_eq!(rr.result.to_dyadic(), Some(Dyadic::new(17, -7)));
    }

    #[test]
    fn ue8m0_has_no_zero() {
        let rr = round_magnitude(false, Dyadic::new(1, -140), &UE8M0, Rounding::RZ);
        assert_eq!(rr.why, Why::Forced);
        assert_eq!(rr.result.to_dyadic(), Some(Dyadic::new(1, -127)));
        // ue8m0 rn: 3 is a tie between 2 (0x80, even) and 4 (0x81).
        assert_eq!(
            r(Dyadic::new(3, 0), &UE8M0, Rounding::RN),
            Some(Dyadic::new(1, 1))
        );
    }

    #[test]
    fn stochastic_zero_is_truncation() {
        let x = Dyadic::new(0x3fff_ffff, -29);
        let a = round_magnitude(false, x, &F16, Rounding::stochastic(0, 13));
        let b = round_magnitude(false, x, &F16, Rounding::RZ);
        assert_eq!(a.result, b.result);
        let c = round_magnitude(false, x, &F16, Rounding::stochastic(0x1fff, 13));
        assert!(c.took_upper);
    }

    #[test]
    fn integral_roundings() {
        let x = Dyadic::new(5, -1); // 2.5
        assert_eq!(r(x, &F32, Rounding::RNI), Some(Dyadic::new(2, 0)));
        assert_eq!(r(x, &F32, Rounding::RPI), Some(Dyadic::new(3, 0)));
        assert_eq!(r(x, &S32, Rounding::RZI), Some(Dyadic::new(2, 0)));
        assert_eq!(r(Dyadic::new(1, -10), &F32, Rounding::RZI), None);
    }
}
