//! Exact values: decoding any bit pattern of any format, and encoding back.
//!
//! Every finite value of every format is a [`Dyadic`]: an integer significand times a power
//! of two. Decoding never rounds.
//!
//! ```
//! use gpucvt_core::{format::{F32, E4M3}, value::{Class, Value}};
//! let v = F32.decode(0x3fc0_0000); // 1.5
//! assert_eq!(v, Value::finite(false, 3, -1));
//! assert_eq!(E4M3.decode(0xff).class, Class::Nan { payload: 0xe000_0000_0000_0000 });
//! assert_eq!(E4M3.encode(&v), Some(0x3c));
//! ```

use crate::format::{FloatLayout, Format, Layout, Specials, ZeroExponent};
use core::cmp::Ordering;
use core::fmt;

/// A positive dyadic rational `sig × 2^exp`, kept with an odd significand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dyadic {
    /// The significand, odd and non-zero once normalized.
    pub sig: u128,
    /// The power of two.
    pub exp: i32,
}

#[inline]
pub(crate) fn bitlen(x: u128) -> i32 {
    128 - x.leading_zeros() as i32
}

impl Dyadic {
    /// `sig × 2^exp`, normalized to an odd significand. `sig` must be non-zero.
    #[inline]
    pub fn new(sig: u128, exp: i32) -> Dyadic {
        debug_assert!(sig != 0);
        let tz = sig.trailing_zeros();
        Dyadic {
            sig: sig >> tz,
            exp: exp + tz as i32,
        }
    }

    /// [`Dyadic::new`] for a significand that fits in 64 bits (every decoded float).
    #[inline(always)]
    pub(crate) fn from_u64(sig: u64, exp: i32) -> Dyadic {
        debug_assert!(sig != 0);
        let tz = sig.trailing_zeros();
        Dyadic {
            sig: (sig >> tz) as u128,
            exp: exp + tz as i32,
        }
    }

    /// The exponent of the leading bit: the value lies in `[2^t, 2^(t+1))`.
    #[inline]
    pub fn top(&self) -> i32 {
        self.exp + bitlen(self.sig) - 1
    }

    /// Whether the value is an integer.
    pub fn is_integer(&self) -> bool {
        self.exp >= 0
    }

    /// Multiplies by `2^k`.
    #[inline]
    pub fn scale(self, k: i32) -> Dyadic {
        Dyadic {
            sig: self.sig,
            exp: self.exp + k,
        }
    }

    /// Exact comparison.
    #[inline]
    pub fn cmp_value(&self, other: &Dyadic) -> Ordering {
        let (ta, tb) = (self.top(), other.top());
        if ta != tb {
            return ta.cmp(&tb);
        }
        // Same leading bit: align the significands at their leading bits.
        let (la, lb) = (bitlen(self.sig), bitlen(other.sig));
        let (a, b) = if la >= lb {
            (self.sig, other.sig << (la - lb))
        } else {
            (self.sig << (lb - la), other.sig)
        };
        a.cmp(&b)
    }

    /// The nearest `f64` (round to nearest even), for display only.
    pub fn to_f64_lossy(&self) -> f64 {
        let l = bitlen(self.sig);
        let (s, e) = if l > 64 {
            let shift = l - 64;
            (
                (self.sig >> shift) as u64 | ((self.sig & ((1 << shift) - 1) != 0) as u64),
                self.exp + shift,
            )
        } else {
            (self.sig as u64, self.exp)
        };
        let mut v = s as f64;
        // Apply the power of two in steps that cannot overflow or underflow prematurely.
        let mut e = e;
        while e > 0 {
            let k = e.min(1000);
            v *= f64::powi(2.0, k);
            e -= k;
        }
        while e < 0 {
            let k = (-e).min(1000);
            v /= f64::powi(2.0, k);
            e += k;
        }
        v
    }
}

/// What kind of value an encoding holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Zero (the sign is in [`Value::negative`]).
    Zero,
    /// A finite non-zero value, exactly.
    Finite(Dyadic),
    /// An infinity.
    Infinite,
    /// A NaN. `payload` is the mantissa field aligned so that its most significant bit is
    /// bit 63 (the IEEE quiet bit), which makes payloads comparable across formats.
    Nan {
        /// The mantissa field, left-aligned in 64 bits.
        payload: u64,
    },
}

/// A decoded value: a sign and a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    /// The sign bit (for NaNs, the sign of the encoding).
    pub negative: bool,
    /// Zero, finite, infinite or NaN.
    pub class: Class,
}

impl Value {
    /// `±0`.
    pub const fn zero(negative: bool) -> Value {
        Value {
            negative,
            class: Class::Zero,
        }
    }

    /// `±∞`.
    pub const fn infinity(negative: bool) -> Value {
        Value {
            negative,
            class: Class::Infinite,
        }
    }

    /// A NaN with the given left-aligned payload.
    pub const fn nan(negative: bool, payload: u64) -> Value {
        Value {
            negative,
            class: Class::Nan { payload },
        }
    }

    /// `±sig × 2^exp` (zero if `sig` is zero).
    pub fn finite(negative: bool, sig: u128, exp: i32) -> Value {
        Value {
            negative,
            class: if sig == 0 {
                Class::Zero
            } else {
                Class::Finite(Dyadic::new(sig, exp))
            },
        }
    }

    /// A signed integer.
    pub fn from_i128(n: i128) -> Value {
        Value::finite(n < 0, n.unsigned_abs(), 0)
    }

    /// Whether this is a NaN.
    pub fn is_nan(&self) -> bool {
        matches!(self.class, Class::Nan { .. })
    }

    /// The nearest `f64`, for display only (NaN payloads are not kept).
    pub fn to_f64_lossy(&self) -> f64 {
        let m = match self.class {
            Class::Zero => 0.0,
            Class::Finite(d) => d.to_f64_lossy(),
            Class::Infinite => f64::INFINITY,
            Class::Nan { .. } => f64::NAN,
        };
        if self.negative {
            -m
        } else {
            m
        }
    }

    /// Exact comparison of two non-NaN values (`-0 == +0`); `None` if either is a NaN.
    pub fn partial_cmp_value(&self, other: &Value) -> Option<Ordering> {
        fn key(v: &Value) -> Option<(i8, Option<Dyadic>)> {
            // (class rank, magnitude) for the positive side.
            match v.class {
                Class::Zero => Some((0, None)),
                Class::Finite(d) => Some((1, Some(d))),
                Class::Infinite => Some((2, None)),
                Class::Nan { .. } => None,
            }
        }
        let (a, b) = (key(self)?, key(other)?);
        let sa = if a.0 == 0 {
            0
        } else if self.negative {
            -1
        } else {
            1
        };
        let sb = if b.0 == 0 {
            0
        } else if other.negative {
            -1
        } else {
            1
        };
        if sa != sb {
            return Some(sa.cmp(&sb));
        }
        let mag = match (a, b) {
            ((ra, Some(x)), (rb, Some(y))) if ra == rb => x.cmp_value(&y),
            ((ra, _), (rb, _)) => ra.cmp(&rb),
        };
        Some(if sa < 0 { mag.reverse() } else { mag })
    }
}

/// Prints the value exactly, as a hexadecimal float (`0x1.8p+1`, `-0x1p-149`, `inf`,
/// `nan(0x…)`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.negative { "-" } else { "" };
        match self.class {
            Class::Zero => write!(f, "{sign}0"),
            Class::Infinite => write!(f, "{sign}inf"),
            Class::Nan { payload } => write!(f, "{sign}nan(0x{payload:x})"),
            Class::Finite(d) => {
                let l = bitlen(d.sig);
                let frac_bits = l - 1;
                let frac = d.sig & ((1u128 << frac_bits) - 1);
                let exp = d.top();
                if frac_bits == 0 {
                    write!(f, "{sign}0x1p{exp:+}")
                } else {
                    // Pad the fraction to whole hex digits.
                    let digits = (frac_bits + 3) / 4;
                    let frac = frac << (digits * 4 - frac_bits);
                    write!(
                        f,
                        "{sign}0x1.{frac:0width$x}p{exp:+}",
                        width = digits as usize
                    )
                }
            }
        }
    }
}

impl FloatLayout {
    /// The exponent field and the mantissa field of a body (an encoding without its sign and
    /// padding bits).
    #[inline]
    fn fields(&self, body: u64) -> (i32, u64) {
        let man = body & ((1u64 << self.man_bits) - 1);
        let e = ((body >> self.man_bits) & ((1u64 << self.exp_bits) - 1)) as i32;
        (e, man)
    }

    /// The class of the magnitude a body encodes, exactly. The sign bit, where `body` has it
    /// (bits above it are ignored), matters only to the fnuz rule's NaN.
    #[inline]
    pub(crate) fn decode_body(&self, body: u64) -> Class {
        let (e, man) = self.fields(body);
        let e_all = (1i32 << self.exp_bits) - 1;
        let nan_payload = || {
            if self.man_bits == 0 {
                0
            } else {
                man << (64 - self.man_bits)
            }
        };
        match self.specials {
            Specials::Ieee if e == e_all => {
                return if man == 0 {
                    Class::Infinite
                } else {
                    Class::Nan {
                        payload: nan_payload(),
                    }
                };
            }
            Specials::NanOnly if e == e_all && man == (1u64 << self.man_bits) - 1 => {
                return Class::Nan {
                    payload: nan_payload(),
                };
            }
            Specials::Fnuz
                if e == 0 && man == 0 && (body >> (self.exp_bits + self.man_bits)) & 1 == 1 =>
            {
                return Class::Nan { payload: 0 };
            }
            _ => {}
        }
        let m = self.man_bits as i32;
        // The significand has at most `man_bits + 1` ≤ 64 bits.
        let (sig, exp) = if e == 0 {
            match self.zero_exponent {
                ZeroExponent::Subnormal => (man, 1 - self.bias - m),
                ZeroExponent::NormalExceptZero if man == 0 => (0, 0),
                _ => ((1u64 << m) | man, -self.bias - m),
            }
        } else {
            ((1u64 << m) | man, e - self.bias - m)
        };
        if sig == 0 {
            Class::Zero
        } else {
            Class::Finite(Dyadic::from_u64(sig, exp))
        }
    }

    /// The body of the magnitude `m × 2^q`, which must lie on this layout's grid with its
    /// exponent range unbounded above (a result of [`crate::round::round_magnitude`]); `None`
    /// when its exponent is beyond the exponent field.
    ///
    /// A body that is not a finite encoding (an infinity or NaN pattern, or beyond the largest
    /// finite value of the layout) is returned as is: bodies are ordered as the magnitudes of
    /// the grid they stand for, so the caller can compare with the largest finite body.
    #[inline]
    pub(crate) fn magnitude_body(&self, m: u64, q: i32) -> Option<u64> {
        if m == 0 {
            return Some(0);
        }
        let man_bits = self.man_bits as i32;
        // Shifts `m` so that its step is 2^(q - shift): left, or right over zero bits.
        let align = |shift: i32| -> u64 {
            if shift >= 0 {
                m << shift
            } else {
                debug_assert!(m.trailing_zeros() >= (-shift) as u32, "not on the grid");
                m >> -shift
            }
        };
        let t = q + (63 - m.leading_zeros() as i32);
        let e_lo = match self.zero_exponent {
            ZeroExponent::Subnormal => 1 - self.bias,
            _ => -self.bias,
        };
        if t >= e_lo {
            // Normal: M + 1 significant bits.
            let field = (t + self.bias) as u64;
            if field > (1u64 << self.exp_bits) - 1 {
                return None;
            }
            let sig = align(man_bits - (t - q));
            Some((field << self.man_bits) | (sig & ((1u64 << self.man_bits) - 1)))
        } else {
            debug_assert!(
                self.zero_exponent == ZeroExponent::Subnormal,
                "not on the grid"
            );
            Some(align(q - (e_lo - man_bits)))
        }
    }
}

impl Format {
    /// Decodes a bit pattern exactly. Bits above [`Format::width`] are ignored, and so are
    /// the padding bits of `tf32`.
    #[inline(always)]
    pub fn decode(&self, bits: u64) -> Value {
        match self.layout {
            Layout::Fixed(l) => {
                let bits = bits & self.mask();
                let negative = l.signed && (bits >> (l.bits - 1)) & 1 == 1;
                let mag = if negative {
                    // Two's complement magnitude; 2^(bits-1) for the most negative value.
                    (1u128 << l.bits) - bits as u128
                } else {
                    bits as u128
                };
                Value::finite(negative, mag, -(l.frac_bits as i32))
            }
            Layout::Float(l) => {
                // The bits above the width need no mask: the sign and the fields are taken
                // out by their positions and widths.
                let body = bits >> l.pad_bits;
                Value {
                    negative: l.signed && (body >> (l.exp_bits + l.man_bits)) & 1 == 1,
                    class: l.decode_body(body),
                }
            }
        }
    }

    /// Whether the pattern is a subnormal of a format with subnormals.
    #[inline]
    pub fn is_subnormal(&self, bits: u64) -> bool {
        match self.layout {
            Layout::Float(l) if l.zero_exponent == ZeroExponent::Subnormal => {
                let body = (bits & self.mask()) >> l.pad_bits;
                let e = (body >> l.man_bits) & ((1u64 << l.exp_bits) - 1);
                e == 0 && body & ((1u64 << l.man_bits) - 1) != 0
            }
            _ => false,
        }
    }

    /// Encodes a value exactly: `None` if the format cannot hold it (not representable, a
    /// sign the format lacks, an infinity or NaN it has no encoding for). NaN payloads are
    /// truncated to the mantissa width; a payload that truncates to zero becomes the quiet bit
    /// so that the result stays a NaN. The fnuz formats have one NaN (sign and payload are
    /// dropped) and an unsigned zero (−0 encodes as +0).
    pub fn encode(&self, v: &Value) -> Option<u64> {
        let sign = |neg: bool| -> Option<u64> {
            match (neg, self.sign_bit()) {
                (false, _) => Some(0),
                (true, Some(b)) if self.is_float() => Some(b),
                _ => None,
            }
        };
        match (self.layout, v.class) {
            (Layout::Float(l), Class::Zero | Class::Nan { .. }) if l.specials == Specials::Fnuz => {
                if v.is_nan() {
                    self.canonical_nan()
                } else {
                    Some(0)
                }
            }
            (Layout::Fixed(l), Class::Zero) => {
                let _ = l;
                Some(0)
            }
            (Layout::Fixed(l), Class::Finite(d)) => {
                let shift = d.exp + l.frac_bits as i32;
                if shift < 0 || bitlen(d.sig) + shift > l.bits as i32 + 1 {
                    return None;
                }
                let n = d.sig << shift; // fits: at most bits + 1 bits
                let (lo, hi) = if l.signed {
                    (1u128 << (l.bits - 1), (1u128 << (l.bits - 1)) - 1)
                } else {
                    (0, (1u128 << l.bits) - 1)
                };
                if v.negative {
                    (n <= lo).then(|| (((1u128 << l.bits) - n) as u64) & self.mask())
                } else {
                    (n <= hi).then_some(n as u64)
                }
            }
            (Layout::Fixed(_), _) => None,
            (Layout::Float(l), class) => {
                let s = sign(v.negative)?;
                let m = l.man_bits;
                let body = match class {
                    Class::Zero => self.has_zero().then_some(0)?,
                    Class::Infinite => self.infinity()? >> l.pad_bits,
                    Class::Nan { payload } => match l.specials {
                        Specials::Ieee => {
                            let e_all = (1u64 << l.exp_bits) - 1;
                            let mut man = if m == 0 { 0 } else { payload >> (64 - m) };
                            if man == 0 {
                                man = 1u64 << (m - 1);
                            }
                            (e_all << m) | man
                        }
                        Specials::NanOnly => self.canonical_nan()? >> l.pad_bits,
                        Specials::None => return None,
                        Specials::Fnuz => return self.canonical_nan(),
                    },
                    Class::Finite(d) => {
                        let t = d.top();
                        let e_lo = match l.zero_exponent {
                            ZeroExponent::Subnormal => 1 - l.bias,
                            _ => -l.bias,
                        };
                        let body = if t >= e_lo {
                            // Normal: M + 1 significant bits.
                            let shift = d.exp - (t - m as i32);
                            if shift < 0 {
                                return None;
                            }
                            let sig = d.sig << shift;
                            let field = (t + l.bias) as u64;
                            if field > (1u64 << l.exp_bits) - 1 {
                                return None;
                            }
                            (field << m) | (sig as u64 & ((1u64 << m) - 1))
                        } else if l.zero_exponent == ZeroExponent::Subnormal {
                            let shift = d.exp - (e_lo - m as i32);
                            if shift < 0 {
                                return None;
                            }
                            (d.sig << shift) as u64
                        } else {
                            return None;
                        };
                        if body > self.max_finite_bits() >> l.pad_bits
                            || (l.zero_exponent == ZeroExponent::NormalExceptZero && body == 0)
                        {
                            return None;
                        }
                        body
                    }
                };
                Some(s | (body << l.pad_bits))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;

    #[test]
    fn decode_examples() {
        assert_eq!(F32.decode(0x3f80_0000), Value::finite(false, 1, 0));
        assert_eq!(F32.decode(0x0000_0001), Value::finite(false, 1, -149));
        assert_eq!(F32.decode(0xff80_0000), Value::infinity(true));
        assert_eq!(F16.decode(0x7bff), Value::finite(false, 2047, 5));
        assert_eq!(E4M3.decode(0x7e), Value::finite(false, 448, 0));
        assert_eq!(UE8M0.decode(0x00), Value::finite(false, 1, -127));
        assert_eq!(UE8M0.decode(0xfe), Value::finite(false, 1, 127));
        assert!(UE8M0.decode(0xff).is_nan());
        assert_eq!(VF.decode(0x01), Value::finite(false, 17, -7));
        assert_eq!(VF.decode(0x80), Value::zero(true));
        assert_eq!(S2F6.decode(0x80), Value::finite(true, 2, 0));
        assert_eq!(S2F6.decode(0x7f), Value::finite(false, 127, -6));
        assert_eq!(S8.decode(0xff), Value::finite(true, 1, 0));
        assert_eq!(S64.decode(1 << 63), Value::finite(true, 1, 63));
        assert_eq!(TF32.decode(0x3f80_1fff), Value::finite(false, 1, 0));
        assert_eq!(E2M1.decode(0xf), Value::finite(true, 6, 0));
        // fnuz: 0x80 is the one NaN, every other pattern finite.
        for f in [E4M3FNUZ, E5M2FNUZ, E4M3B11FNUZ] {
            assert_eq!(f.decode(0x80), Value::nan(true, 0), "{f}");
            assert_eq!(f.decode(0x00), Value::zero(false), "{f}");
            assert_eq!(f.encode(&Value::zero(true)), Some(0), "{f}");
            assert_eq!(f.encode(&Value::nan(false, 1 << 63)), Some(0x80), "{f}");
            assert_eq!(f.encode(&Value::infinity(false)), None, "{f}");
            for b in (0..=0xffu64).filter(|&b| b != 0x80) {
                assert!(!f.decode(b).is_nan(), "{f} {b:#x}");
            }
        }
        assert_eq!(E4M3FNUZ.decode(0x7f), Value::finite(false, 240, 0));
        assert_eq!(E4M3FNUZ.decode(0xff), Value::finite(true, 240, 0));
        assert_eq!(E4M3FNUZ.decode(0x01), Value::finite(false, 1, -10));
        assert_eq!(E5M2FNUZ.decode(0x7f), Value::finite(false, 57344, 0));
        assert_eq!(E5M2FNUZ.decode(0x01), Value::finite(false, 1, -17));
        assert_eq!(E4M3B11FNUZ.decode(0x7f), Value::finite(false, 30, 0));
        assert_eq!(E4M3B11FNUZ.decode(0x01), Value::finite(false, 1, -13));
        // A bit above the width is ignored, also for the NaN test.
        assert_eq!(E4M3FNUZ.decode(0x100), Value::zero(false));
        assert_eq!(E3M4.decode(0x6f), Value::finite(false, 31, -1));
        assert_eq!(E3M4.decode(0x01), Value::finite(false, 1, -6));
        assert_eq!(E3M4.decode(0xf0), Value::infinity(true));
        assert_eq!(E4M3IEEE.decode(0x77), Value::finite(false, 240, 0));
        assert_eq!(E4M3IEEE.decode(0x01), Value::finite(false, 1, -9));
        assert_eq!(E4M3IEEE.decode(0x78), Value::infinity(false));
        assert!(E4M3IEEE.decode(0x79).is_nan());
    }

    #[test]
    fn round_trip_every_small_pattern() {
        for f in CATALOGUE.iter().filter(|f| f.width() <= 16) {
            for bits in 0..=f.mask() {
                let v = f.decode(bits);
                let back = f.encode(&v);
                if v.is_nan() {
                    assert!(f.decode(back.unwrap()).is_nan(), "{f} {bits:#x}");
                } else {
                    assert_eq!(back, Some(bits), "{f} {bits:#x} {v}");
                }
            }
        }
    }

    #[test]
    fn display_is_hex_float() {
        assert_eq!(F32.decode(0x3fc0_0000).to_string(), "0x1.8p+0");
        assert_eq!(F32.decode(0x8000_0001).to_string(), "-0x1p-149");
        assert_eq!(F16.decode(0x7e00).to_string(), "nan(0x8000000000000000)");
    }
}
