//! An independent reference model of every gpucvt conversion, for the test suites.
//!
//! It shares no code with the engine. From `gpucvt_core` it reads only the numeric parameters
//! of the formats (`Format::name` and the fields of `Format::layout`) and the plain data types
//! that name a conversion (`Rounding`, `Direction`, `Policy` and its enums); the engine is
//! called only to get the answer under test (`Conversion::apply`).
//!
//! Everything here is computed with exact rational arithmetic (`BigRational`, with `BigInt`
//! numerators and denominators where a ratio is needed without reducing it):
//!
//! - [`decode`] turns any bit pattern into a sign and an exact rational magnitude;
//! - a destination of at most 16 bits is a sorted table of all its positive finite values,
//!   searched by bisection; beyond its largest value the grid is continued with an unbounded
//!   exponent (floats) or the same step (fixed point);
//! - `f32`, `tf32`, `f64` and the 32/64-bit integers use arithmetic on rationals instead:
//!   the grid step is a power of two found from the exponent of the value;
//! - [`locate`] brackets a magnitude between its two grid neighbours and measures where it
//!   sits between them (against the midpoint, and as a 64-bit fraction of the gap);
//!   comparisons go by exponent first, the bisection compares `f64` images when both sides
//!   are exactly `f64` values, and positions use `u128` when the integers fit — all exact,
//!   with `BigInt` for everything else;
//! - [`pre`] applies the input policies, [`finish`] chooses a neighbour by the rounding and
//!   applies the output policies.
//!
//! The semantics are those documented in `convert.rs`/`round.rs` and the PTX notes; the
//! decisions where those leave room are spelt out next to the code that makes them.

use gpucvt_core::format::{Layout, Specials, ZeroExponent};
use gpucvt_core::{
    Conversion, Direction, Flags, Format, IntNan, IntOverflow, NanResult, NoNanResult, Overflow,
    Policy, Rounding,
};
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};
use std::sync::{Mutex, OnceLock};

/// Exact rationals.
pub type Q = BigRational;

// ---------------------------------------------------------------------------------------------
// Small exact helpers.
// ---------------------------------------------------------------------------------------------

fn low_mask(n: u32) -> u64 {
    if n >= 64 {
        !0
    } else {
        (1u64 << n) - 1
    }
}

/// `k × 2^e` as a reduced rational, without a gcd (only powers of two can cancel).
pub fn dyadic(k: BigInt, e: i64) -> Q {
    assert!(k.sign() != num_bigint::Sign::Minus, "negative magnitude");
    if k.is_zero() {
        return Q::zero();
    }
    let tz = k.trailing_zeros().unwrap_or(0) as i64;
    let k = k >> (tz as usize);
    let e = e + tz;
    if e >= 0 {
        Q::new_raw(k << (e as usize), BigInt::one())
    } else {
        Q::new_raw(k, BigInt::one() << ((-e) as usize))
    }
}

/// `2^e`.
pub fn pow2(e: i64) -> Q {
    dyadic(BigInt::one(), e)
}

/// The exponent `k` of a dyadic rational `n / 2^k` (every value in this model is one).
fn den_exp(y: &Q) -> i64 {
    // Dyadic by construction: every rational of this model comes from `dyadic`, which
    // checks it, or from sums and differences of such.
    y.denom().bits() as i64 - 1
}

/// `floor(log2 y)` for `y > 0`.
pub fn flog2(y: &Q) -> i64 {
    y.numer().bits() as i64 - 1 - den_exp(y)
}

/// Exact comparison of non-negative dyadic rationals: by exponent first, then by cross
/// multiplication.
pub fn qcmp(a: &Q, b: &Q) -> Ordering {
    match (a.numer().is_zero(), b.numer().is_zero()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    debug_assert!(a.numer().is_positive() && b.numer().is_positive());
    match flog2(a).cmp(&flog2(b)) {
        Ordering::Equal => (a.numer() * b.denom()).cmp(&(b.numer() * a.denom())),
        o => o,
    }
}

fn qeq(a: &Q, b: &Q) -> bool {
    a.numer() == b.numer() && a.denom() == b.denom()
}

/// `floor(y / 2^e)` for `y ≥ 0`.
fn floor_div_pow2(y: &Q, e: i64) -> BigInt {
    let s = den_exp(y) + e;
    if s >= 0 {
        y.numer() >> (s as usize)
    } else {
        y.numer() << ((-s) as usize)
    }
}

/// `v × 2^e` in `f64`, in steps that do not overflow early.
fn ldexp(mut v: f64, mut e: i64) -> f64 {
    if (-1022..=1023).contains(&e) {
        return v * f64::from_bits(((e + 1023) as u64) << 52);
    }
    while e > 0 {
        let k = e.min(600);
        v *= 2f64.powi(k as i32);
        e -= k;
    }
    while e < 0 {
        let k = (-e).min(600);
        v /= 2f64.powi(k as i32);
        e += k;
    }
    v
}

/// A rough `f64` image of a non-negative dyadic rational, only used to start a table search
/// (every search result is then confirmed exactly).
pub fn approx(y: &Q) -> f64 {
    let n = y.numer();
    let bits = n.bits() as i64;
    let (top, shift) = if bits <= 64 {
        (n.to_u64().unwrap(), 0)
    } else {
        ((n >> ((bits - 64) as usize)).to_u64().unwrap(), bits - 64)
    };
    ldexp(top as f64, shift - den_exp(y))
}

/// The `f64` image of a non-negative dyadic rational when it is exact (at most 53
/// significant bits, exponent in the normal range).
pub fn exact_f64(y: &Q) -> Option<f64> {
    let n = y.numer();
    if n.is_zero() {
        return Some(0.0);
    }
    // An integer numerator may end in zeros (the denominator is then 1).
    let tz = n.trailing_zeros().unwrap_or(0) as i64;
    let significant = n.bits() as i64 - tz;
    let top = flog2(y);
    (significant <= 53 && (-1022..=1023).contains(&top)).then(|| {
        let odd = (n >> (tz as usize)).to_u64().unwrap();
        ldexp(odd as f64, tz - den_exp(y))
    })
}

// ---------------------------------------------------------------------------------------------
// Decoding.
// ---------------------------------------------------------------------------------------------

/// A decoded source value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// NaN with the source's sign and its mantissa field left-aligned to bit 63.
    Nan { neg: bool, payload: u64 },
    /// ±∞.
    Inf { neg: bool },
    /// ±0.
    Zero { neg: bool },
    /// A non-zero finite value: sign and exact magnitude.
    Num { neg: bool, mag: Q },
}

/// A decoded pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub val: Val,
    /// Whether the pattern is a subnormal of a format that has subnormals.
    pub subnormal: bool,
}

/// The width of a format's encodings, from its layout.
pub fn width_of(f: &Format) -> u32 {
    match f.layout {
        Layout::Float(l) => u32::from(l.signed) + l.exp_bits + l.man_bits + l.pad_bits,
        Layout::Fixed(l) => l.bits,
    }
}

/// Whether a format has a sign, from its layout.
pub fn signed(f: &Format) -> bool {
    match f.layout {
        Layout::Float(l) => l.signed,
        Layout::Fixed(l) => l.signed,
    }
}

/// Whether a format is a float format, from its layout.
pub fn is_float(f: &Format) -> bool {
    matches!(f.layout, Layout::Float(_))
}

/// Decodes a pattern exactly.
pub fn decode(f: &Format, bits: u64) -> Decoded {
    match f.layout {
        Layout::Fixed(l) => {
            let raw = bits & low_mask(l.bits);
            let is_neg = l.signed && (raw >> (l.bits - 1)) & 1 == 1;
            // Two's complement: the pattern is raw − 2^bits when the top bit is set.
            let n: i128 = if is_neg {
                raw as i128 - (1i128 << l.bits)
            } else {
                raw as i128
            };
            let val = if n == 0 {
                Val::Zero { neg: false }
            } else {
                Val::Num {
                    neg: n < 0,
                    mag: dyadic(BigInt::from(n.unsigned_abs()), -(l.frac_bits as i64)),
                }
            };
            Decoded {
                val,
                subnormal: false,
            }
        }
        Layout::Float(l) => {
            let total = u32::from(l.signed) + l.exp_bits + l.man_bits + l.pad_bits;
            let raw = bits & low_mask(total);
            let neg = l.signed && (raw >> (total - 1)) & 1 == 1;
            let frac = (raw >> l.pad_bits) & low_mask(l.man_bits);
            let expo = (raw >> (l.pad_bits + l.man_bits)) & low_mask(l.exp_bits);
            let top_exp = low_mask(l.exp_bits);
            let payload = if l.man_bits == 0 {
                0
            } else {
                frac << (64 - l.man_bits)
            };
            let special = match l.specials {
                Specials::Ieee => expo == top_exp,
                Specials::NanOnly => expo == top_exp && frac == low_mask(l.man_bits),
                Specials::None => false,
                // The pattern that would be −0 is the only NaN.
                Specials::Fnuz => neg && expo == 0 && frac == 0,
            };
            if special {
                let val = if l.specials == Specials::Ieee && frac == 0 {
                    Val::Inf { neg }
                } else {
                    Val::Nan { neg, payload }
                };
                return Decoded {
                    val,
                    subnormal: false,
                };
            }
            let m = l.man_bits as i64;
            let bias = l.bias as i64;
            // value = significand × 2^(scale)
            let (sig, scale, subnormal) = if expo == 0 {
                match l.zero_exponent {
                    ZeroExponent::Subnormal => (frac, 1 - bias - m, frac != 0),
                    ZeroExponent::NormalExceptZero if frac == 0 => (0, 0, false),
                    _ => (frac + (1u64 << m), -bias - m, false),
                }
            } else {
                (frac + (1u64 << m), expo as i64 - bias - m, false)
            };
            let val = if sig == 0 {
                Val::Zero { neg }
            } else {
                Val::Num {
                    neg,
                    mag: dyadic(BigInt::from(sig), scale),
                }
            };
            Decoded { val, subnormal }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Destination grids.
// ---------------------------------------------------------------------------------------------

/// A grid point chosen as a candidate result, reduced to what the output stage needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    /// Float destinations: the positive encoding; `None` beyond the largest finite value.
    pub enc: Option<u64>,
    /// Whether it counts as the even candidate of a tie.
    pub even: bool,
    /// Zero.
    pub zero: bool,
    /// A subnormal of the destination.
    pub sub: bool,
    /// Fixed-point destinations: the magnitude in units of the last place, modulo 2^64 ...
    pub n_mod: u64,
    /// ... and exactly, when it fits in 64 bits.
    pub n_fit: Option<u64>,
}

/// Where a magnitude sits on a destination grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    /// On the grid: `lower == Some(upper)`.
    pub exact: bool,
    /// The largest grid point ≤ x (`None`: nothing there, a format without zero).
    pub lower: Option<Pick>,
    /// The smallest grid point > x.
    pub upper: Pick,
    /// `x − lower` compared with `upper − x`.
    pub half: Ordering,
    /// `floor((x − lower) / (upper − lower) × 2^64)`.
    pub frac64: u64,
    /// `x` is below the smallest normal value of a float destination.
    pub tiny: bool,
}

#[derive(Debug)]
struct Entry {
    val: Q,
    approx: f64,
    pick: Pick,
}

/// How a grid continues past its table (or everywhere, for the arithmetic destinations).
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Binades of `2^man` steps; `emin` is the exponent of the lowest binade, below which
    /// the step stops shrinking (the subnormals, for formats that have them).
    Float {
        man: i64,
        bias: i64,
        emin: i64,
        pad: u32,
    },
    /// A uniform step `2^-frac`.
    Fixed { frac: i64 },
}

/// Everything the reference knows about a destination.
pub struct Dst {
    pub format: Format,
    kind: Kind,
    /// Sorted positive finite values (≤ 16-bit destinations); empty for arithmetic ones.
    table: Vec<Entry>,
    /// Their `f64` images (exact), in a compact array for the bisection.
    keys: Vec<f64>,
    /// Largest finite magnitude.
    pub max: Q,
    /// The rational 0, for grid points that are zero.
    zero: Q,
    /// Smallest normal magnitude (floats).
    pub min_normal: Q,
    pub has_zero: bool,
    pub signed: bool,
    pub width: u32,
    // Float encodings.
    pub max_bits: u64,
    pub inf_bits: Option<u64>,
    pub nan_bits: Option<u64>,
    pub min_pos_bits: u64,
    pub one_bits: u64,
    pub specials: Option<Specials>,
    /// Whether a zero result may carry the sign (not in the fnuz formats, where that
    /// pattern is the NaN).
    pub signed_zero: bool,
    pub man_bits: u32,
    pub exp_bits: u32,
    pub pad_bits: u32,
    // Fixed point: the largest positive and negative magnitudes in units, and the encodings
    // of the range ends.
    pub fix_pos: u64,
    pub fix_neg: u64,
    pub fix_min_bits: u64,
}

impl Dst {
    /// The positive finite grid values of a table destination (at most 16 bits), ascending;
    /// empty for the wide destinations.
    pub fn table_values(&self) -> impl Iterator<Item = &Q> {
        self.table.iter().map(|e| &e.val)
    }

    /// For float destinations: (mantissa bits, smallest exponent of the grid's binades,
    /// exponent of the largest finite value); for fixed point: (fraction bits, 0, 0).
    pub fn grid_params(&self) -> (i64, i64, i64) {
        match self.kind {
            Kind::Float { man, emin, .. } => (man, emin, flog2(&self.max)),
            Kind::Fixed { frac } => (frac, 0, 0),
        }
    }

    /// Whether the destination is a float format.
    pub fn float(&self) -> bool {
        self.is_float()
    }

    fn is_float(&self) -> bool {
        matches!(self.kind, Kind::Float { .. })
    }

    fn sign_bit(&self) -> u64 {
        if self.signed {
            1u64 << (self.width - 1)
        } else {
            0
        }
    }

    fn new(f: &Format) -> Dst {
        Dst::build(f, width_of(f) <= 16).with_keys()
    }

    fn with_keys(mut self) -> Dst {
        self.keys = self.table.iter().map(|e| e.approx).collect();
        self
    }

    /// A model of an IEEE-style format that uses arithmetic instead of a table, to check the
    /// two styles against each other.
    pub fn arithmetic(f: &Format) -> Dst {
        Dst::build(f, false).with_keys()
    }

    fn build(f: &Format, use_table: bool) -> Dst {
        let width = width_of(f);
        match f.layout {
            Layout::Float(l) => {
                let man = l.man_bits as i64;
                let bias = l.bias as i64;
                let emin = match l.zero_exponent {
                    ZeroExponent::Subnormal => 1 - bias,
                    _ => -bias,
                };
                let kind = Kind::Float {
                    man,
                    bias,
                    emin,
                    pad: l.pad_bits,
                };
                let body_bits = l.exp_bits + l.man_bits + l.pad_bits;
                let nan_bits = match l.specials {
                    Specials::None => None,
                    Specials::Fnuz => Some(1u64 << body_bits),
                    _ => Some(low_mask(body_bits)),
                };
                let inf_bits = match l.specials {
                    Specials::Ieee => Some(low_mask(l.exp_bits) << (l.man_bits + l.pad_bits)),
                    _ => None,
                };
                let has_zero = l.zero_exponent != ZeroExponent::Normal;
                let mut d = Dst {
                    format: *f,
                    kind,
                    table: Vec::new(),
                    keys: Vec::new(),
                    max: Q::zero(),
                    zero: Q::zero(),
                    min_normal: Q::zero(),
                    has_zero,
                    signed: l.signed,
                    width,
                    max_bits: 0,
                    inf_bits,
                    nan_bits,
                    min_pos_bits: 0,
                    one_bits: 0,
                    specials: Some(l.specials),
                    signed_zero: l.signed && l.specials != Specials::Fnuz,
                    man_bits: l.man_bits,
                    exp_bits: l.exp_bits,
                    pad_bits: l.pad_bits,
                    fix_pos: 0,
                    fix_neg: 0,
                    fix_min_bits: 0,
                };
                if use_table {
                    // Every positive pattern, decoded; the finite non-zero ones form the grid.
                    let positive_patterns = 1u64 << (width - u32::from(l.signed));
                    for bits in 0..positive_patterns {
                        let dec = decode(f, bits);
                        if let Val::Num { neg: false, mag } = dec.val {
                            d.table.push(Entry {
                                approx: exact_f64(&mag).expect("≤16-bit values are f64 values"),
                                val: mag,
                                pick: Pick {
                                    enc: Some(bits),
                                    even: bits & 1 == 0,
                                    zero: false,
                                    sub: dec.subnormal,
                                    n_mod: 0,
                                    n_fit: None,
                                },
                            });
                        }
                    }
                    d.table.sort_by(|a, b| qcmp(&a.val, &b.val));
                    for w in d.table.windows(2) {
                        assert_eq!(qcmp(&w[0].val, &w[1].val), Ordering::Less, "{f}: table");
                    }
                    let last = d.table.last().unwrap();
                    d.max = last.val.clone();
                    d.max_bits = last.pick.enc.unwrap();
                    d.min_pos_bits = d.table[0].pick.enc.unwrap();
                    d.one_bits = d
                        .table
                        .iter()
                        .find(|e| qeq(&e.val, &Q::one()))
                        .and_then(|e| e.pick.enc)
                        .expect("1.0 is representable");
                    d.min_normal = if l.zero_exponent == ZeroExponent::Subnormal {
                        pow2(1 - bias)
                    } else {
                        d.table[0].val.clone()
                    };
                } else {
                    // Only IEEE-style wide formats are handled arithmetically.
                    assert_eq!(l.specials, Specials::Ieee);
                    assert_eq!(l.zero_exponent, ZeroExponent::Subnormal);
                    let emax = (1i64 << l.exp_bits) - 2 - bias;
                    // (2 − 2^-man) × 2^emax = (2^(man+1) − 1) × 2^(emax − man)
                    d.max = dyadic((BigInt::one() << (l.man_bits as usize + 1)) - 1, emax - man);
                    d.max_bits = ((low_mask(l.exp_bits) - 1) << l.man_bits | low_mask(l.man_bits))
                        << l.pad_bits;
                    d.min_pos_bits = 1u64 << l.pad_bits;
                    d.one_bits = (bias as u64) << (l.man_bits + l.pad_bits);
                    d.min_normal = pow2(1 - bias);
                }
                d
            }
            Layout::Fixed(l) => {
                let frac = l.frac_bits as i64;
                let (fix_pos, fix_neg) = if l.signed {
                    ((1u64 << (l.bits - 1)) - 1, 1u64 << (l.bits - 1))
                } else {
                    (low_mask(l.bits), 0)
                };
                let mut d = Dst {
                    format: *f,
                    kind: Kind::Fixed { frac },
                    table: Vec::new(),
                    keys: Vec::new(),
                    max: dyadic(BigInt::from(fix_pos), -frac),
                    zero: Q::zero(),
                    min_normal: Q::zero(),
                    has_zero: true,
                    signed: l.signed,
                    width,
                    max_bits: fix_pos,
                    inf_bits: None,
                    nan_bits: None,
                    min_pos_bits: 1,
                    one_bits: 0,
                    specials: None,
                    signed_zero: false,
                    man_bits: 0,
                    exp_bits: 0,
                    pad_bits: 0,
                    fix_pos,
                    fix_neg,
                    fix_min_bits: if l.signed { 1u64 << (l.bits - 1) } else { 0 },
                };
                if use_table {
                    // Magnitudes that one sign or the other can hold.
                    let top = fix_pos.max(fix_neg);
                    for n in 1..=top {
                        let val = dyadic(BigInt::from(n), -frac);
                        d.table.push(Entry {
                            approx: exact_f64(&val).expect("≤16-bit values are f64 values"),
                            val,
                            pick: fixed_pick(&BigInt::from(n)),
                        });
                    }
                }
                d
            }
        }
    }

    /// The point `k × 2^e` (known to be on the grid), by arithmetic.
    fn point_at(&self, k: BigInt, e: i64) -> Pt<'_> {
        if k.is_zero() {
            assert!(
                self.has_zero,
                "{}: zero on a grid without zero",
                self.format
            );
            return Pt::Zero;
        }
        let val = dyadic(k, e);
        match self.kind {
            Kind::Fixed { frac } => {
                let n = floor_div_pow2(&val, -frac);
                let pick = fixed_pick(&n);
                Pt::Own(val, pick)
            }
            Kind::Float {
                man,
                bias,
                emin,
                pad,
                ..
            } => {
                let e = flog2(&val);
                // The significand, counted in steps of the value's own binade.
                let q = e.max(emin) - man;
                let sig = floor_div_pow2(&val, q);
                let even = if man == 0 {
                    // One significant bit: the encoding's last bit is the exponent's.
                    (e + bias) % 2 == 0
                } else {
                    sig.is_even()
                };
                if qcmp(&val, &self.max) == Ordering::Greater {
                    // Past the largest finite value: a point of the unbounded grid.
                    let pick = Pick {
                        enc: None,
                        even,
                        zero: false,
                        sub: false,
                        n_mod: 0,
                        n_fit: None,
                    };
                    return Pt::Own(val, pick);
                }
                if !self.table.is_empty() {
                    let i = self.search(&val);
                    let ent = &self.table[i - 1];
                    assert!(
                        qeq(&ent.val, &val),
                        "{}: {val} is not a table value",
                        self.format
                    );
                    return Pt::Tab(ent);
                }
                // Encode arithmetically (IEEE layout).
                let sig = sig.to_u64().unwrap();
                let (field, mant, sub) = if e < emin {
                    (0u64, sig, true)
                } else {
                    ((e + bias) as u64, sig - (1u64 << man), false)
                };
                let pick = Pick {
                    enc: Some(((field << man) | mant) << pad),
                    even,
                    zero: false,
                    sub,
                    n_mod: 0,
                    n_fit: None,
                };
                Pt::Own(val, pick)
            }
        }
    }

    /// The number of table entries ≤ y.
    fn search(&self, y: &Q) -> usize {
        // Every table value is exactly its f64 image; when y is too, comparing the images
        // is exact. Otherwise the image only starts the search, which is then corrected
        // with exact comparisons.
        if let Some(a) = exact_f64(y) {
            return self.keys.partition_point(|&k| k <= a);
        }
        let a = approx(y);
        let mut i = self.keys.partition_point(|&k| k <= a);
        while i > 0 && qcmp(&self.table[i - 1].val, y) == Ordering::Greater {
            i -= 1;
        }
        while i < self.table.len() && qcmp(&self.table[i].val, y) != Ordering::Greater {
            i += 1;
        }
        i
    }

    /// The exponent of the grid step at magnitude `y > 0`, by arithmetic (past the table,
    /// and everywhere for the wide destinations).
    fn step_exp(&self, y: &Q) -> i64 {
        match self.kind {
            Kind::Fixed { frac } => -frac,
            Kind::Float { man, emin, .. } => flog2(y).max(emin) - man,
        }
    }

    /// The grid points around `y > 0` by arithmetic: (largest ≤ y, smallest ≥ y, where y
    /// sits between them: `None` on the grid).
    #[allow(clippy::type_complexity)]
    fn arith_bracket(&self, y: &Q) -> (Option<Pt<'_>>, Pt<'_>, Option<(Ordering, u64)>) {
        let q = self.step_exp(y);
        let k = floor_div_pow2(y, q);
        let pos = fraction_of_step(y, q);
        let on = pos.is_none();
        let next = &k + 1u32;
        let lower = if k.is_zero() {
            self.has_zero.then_some(Pt::Zero)
        } else {
            Some(self.point_at(k, q))
        };
        if on {
            let l = lower.unwrap();
            let u = match &l {
                Pt::Zero => Pt::Zero,
                Pt::Tab(e) => Pt::Tab(e),
                Pt::Own(v, p) => Pt::Own(v.clone(), *p),
            };
            (Some(l), u, None)
        } else {
            (lower, self.point_at(next, q), pos)
        }
    }

    /// The largest grid point ≤ y (y ≥ 0).
    fn grid_floor(&self, y: &Q) -> Option<Pt<'_>> {
        if y.is_zero() {
            return self.has_zero.then_some(Pt::Zero);
        }
        if let Some(last) = self.table.last() {
            let i = self.search(y);
            if i == 0 {
                return self.has_zero.then_some(Pt::Zero);
            }
            if i < self.table.len() || qeq(y, &last.val) {
                return Some(Pt::Tab(&self.table[i - 1]));
            }
        }
        self.arith_bracket(y).0
    }

    /// The smallest grid point ≥ y (y > 0).
    fn grid_ceil(&self, y: &Q) -> Pt<'_> {
        if !self.table.is_empty() {
            let i = self.search(y);
            if i > 0 && qeq(&self.table[i - 1].val, y) {
                return Pt::Tab(&self.table[i - 1]);
            }
            if i < self.table.len() {
                return Pt::Tab(&self.table[i]);
            }
        }
        self.arith_bracket(y).1
    }

    /// (largest grid point ≤ x, smallest grid point > x, x's position between them when the
    /// step is a power of two already known), or the point x is on.
    #[allow(clippy::type_complexity)]
    fn bracket(&self, x: &Q) -> Result<(Option<Pt<'_>>, Pt<'_>, Option<(Ordering, u64)>), Pt<'_>> {
        if let Some(last) = self.table.last() {
            let i = self.search(x);
            if i > 0 && qeq(&self.table[i - 1].val, x) {
                return Err(Pt::Tab(&self.table[i - 1]));
            }
            if i < self.table.len() {
                let lower = if i == 0 {
                    self.has_zero.then_some(Pt::Zero)
                } else {
                    Some(Pt::Tab(&self.table[i - 1]))
                };
                return Ok((lower, Pt::Tab(&self.table[i]), None));
            }
            debug_assert_eq!(qcmp(x, &last.val), Ordering::Greater);
        }
        match self.arith_bracket(x) {
            (Some(l), _, None) => Err(l),
            (l, u, pos) => Ok((l, u, pos)),
        }
    }
}

/// A grid point: zero, a table entry, or a point computed by arithmetic.
enum Pt<'a> {
    Zero,
    Tab(&'a Entry),
    Own(Q, Pick),
}

const ZERO_PICK: Pick = Pick {
    enc: Some(0),
    even: true,
    zero: true,
    sub: false,
    n_mod: 0,
    n_fit: Some(0),
};

impl Pt<'_> {
    fn val<'b>(&'b self, zero: &'b Q) -> &'b Q {
        match self {
            Pt::Zero => zero,
            Pt::Tab(e) => &e.val,
            Pt::Own(v, _) => v,
        }
    }
    fn pick(&self) -> Pick {
        match self {
            Pt::Zero => ZERO_PICK,
            Pt::Tab(e) => e.pick,
            Pt::Own(_, p) => *p,
        }
    }
}

fn fixed_pick(n: &BigInt) -> Pick {
    let n_mod = n.iter_u64_digits().next().unwrap_or(0);
    Pick {
        enc: None,
        even: n.is_even(),
        zero: n.is_zero(),
        sub: false,
        n_mod,
        n_fit: n.to_u64(),
    }
}

/// Where `y` sits in its step of the grid of step `2^q`: the fractional part of `y / 2^q`
/// compared with 1/2, and as a 64-bit fraction; `None` when `y / 2^q` is an integer.
fn fraction_of_step(y: &Q, q: i64) -> Option<(Ordering, u64)> {
    // y / 2^q = n / 2^s: the fraction is the low s bits of n, over 2^s.
    let n = y.numer();
    let s = den_exp(y) + q;
    if s <= 0 || n.trailing_zeros().unwrap_or(0) as i64 >= s {
        return None;
    }
    let (half, frac) = if s <= 127 && n.bits() <= 127 {
        let r = n.to_u128().unwrap() & ((1u128 << s) - 1);
        let half = r.cmp(&(1u128 << (s - 1)));
        let frac = if s >= 64 {
            r >> (s - 64)
        } else {
            r << (64 - s)
        };
        (half, frac as u64)
    } else {
        let r = n - ((n >> (s as usize)) << (s as usize));
        let half = r.cmp(&(BigInt::one() << ((s - 1) as usize)));
        let frac = if s >= 64 {
            r >> ((s - 64) as usize)
        } else {
            r << ((64 - s) as usize)
        };
        (half, frac.to_u64().unwrap())
    };
    Some((half, frac))
}

/// `(x − L) / (U − L)` compared with 1/2, and as a 64-bit fraction (`L < x < U`).
fn position(x: &Q, l: &Q, u: &Q) -> (Ordering, u64) {
    if l.is_zero() && flog2(x) + 66 < flog2(u) {
        // x / U < 2^-65: below the midpoint, and below 2^-64 of the gap.
        return (Ordering::Less, 0);
    }
    // Bring all three to the common denominator 2^k: X, L, U integers.
    let k = den_exp(x).max(den_exp(l)).max(den_exp(u));
    let (sx, sl, su) = (k - den_exp(x), k - den_exp(l), k - den_exp(u));
    let small = |n: &BigInt, s: i64| n.bits() as i64 + s <= 120;
    if small(x.numer(), sx) && small(l.numer(), sl) && small(u.numer(), su) {
        let xx = x.numer().to_u128().unwrap() << sx;
        let ll = l.numer().to_u128().unwrap() << sl;
        let uu = u.numer().to_u128().unwrap() << su;
        let (num, den) = (xx - ll, uu - ll);
        assert!(num > 0 && num < den);
        let half = (num << 1).cmp(&den);
        // floor(num × 2^64 / den) by long division, as many bits at a time as the headroom
        // above den allows (rem < den, so rem << step cannot overflow).
        let step = den.leading_zeros().min(64);
        let (mut rem, mut frac, mut left) = (num, 0u128, 64u32);
        while left > 0 {
            let c = step.min(left);
            rem <<= c;
            frac = (frac << c) | (rem / den);
            rem %= den;
            left -= c;
        }
        return (half, frac as u64);
    }
    let xx = x.numer() << (sx as usize);
    let ll = l.numer() << (sl as usize);
    let uu = u.numer() << (su as usize);
    let num = &xx - &ll;
    let den = &uu - &ll;
    assert!(num.is_positive() && num < den);
    let half = (&num << 1usize).cmp(&den);
    let frac = ((num << 64usize) / den).to_u64().unwrap();
    (half, frac)
}

/// Brackets the magnitude `x > 0` on the grid of `dst` (the integral grid when `integral`).
pub fn locate(dst: &Dst, x: &Q, integral: bool) -> Loc {
    debug_assert!(x.is_positive());
    let tiny = dst.is_float() && qcmp(x, &dst.min_normal) == Ordering::Less;
    let exact = |p: Pt<'_>| Loc {
        exact: true,
        lower: Some(p.pick()),
        upper: p.pick(),
        half: Ordering::Equal,
        frac64: 0,
        tiny,
    };
    let (lower, upper, pos) = if !integral {
        match dst.bracket(x) {
            Err(p) => return exact(p),
            Ok(b) => b,
        }
    } else {
        // The integral grid: the grid points that are integers. The largest one ≤ x is the
        // grid floor of floor(x); the smallest one ≥ x the grid ceiling of ceil(x).
        let fl = Q::from_integer(floor_div_pow2(x, 0));
        let is_int = den_exp(x) == 0;
        let lower = dst.grid_floor(&fl);
        if is_int {
            if let Some(l) = &lower {
                if qeq(l.val(&dst.zero), x) {
                    return exact(lower.unwrap());
                }
            }
        }
        let ce = if is_int {
            fl
        } else {
            Q::from_integer(fl.numer() + 1u32)
        };
        (lower, dst.grid_ceil(&ce), None)
    };
    let Some(lower) = lower else {
        // Nothing below (no zero): forced up.
        return Loc {
            exact: false,
            lower: None,
            upper: upper.pick(),
            half: Ordering::Greater,
            frac64: u64::MAX,
            tiny,
        };
    };
    let (lv, uv) = (lower.val(&dst.zero), upper.val(&dst.zero));
    let mut lp = lower.pick();
    if integral
        && lv.denom().is_one()
        && uv.denom().is_one()
        && uv.numer() - lv.numer() == BigInt::one()
    {
        // Neighbouring integers: the even one is the even integer.
        lp.even = lv.numer().is_even();
    }
    // A known power-of-two step gives the position directly (the table and arithmetic
    // styles are checked against each other in reference_selfcheck.rs).
    let (half, frac64) = match pos {
        Some(p) => p,
        None => position(x, lv, uv),
    };
    Loc {
        exact: false,
        lower: Some(lp),
        upper: upper.pick(),
        half,
        frac64,
        tiny,
    }
}

// ---------------------------------------------------------------------------------------------
// Destination cache.
// ---------------------------------------------------------------------------------------------

/// The reference model of a destination (built once per format).
pub fn dst_model(f: &Format) -> &'static Dst {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, &'static Dst>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(d) = cache.lock().unwrap().get(f.name) {
        return d;
    }
    // Built outside the lock (tables take a moment); a racing duplicate is harmless.
    let d: &'static Dst = Box::leak(Box::new(Dst::new(f)));
    cache.lock().unwrap().entry(f.name).or_insert(d)
}

// ---------------------------------------------------------------------------------------------
// The conversion itself.
// ---------------------------------------------------------------------------------------------

/// The flags the reference predicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RFlags {
    pub inexact: bool,
    pub overflow: bool,
    pub underflow: bool,
    pub saturated: bool,
    pub flushed: bool,
    pub invalid: bool,
}

impl RFlags {
    pub fn of_engine(f: Flags) -> RFlags {
        RFlags {
            inexact: f.contains(Flags::INEXACT),
            overflow: f.contains(Flags::OVERFLOW),
            underflow: f.contains(Flags::UNDERFLOW),
            saturated: f.contains(Flags::SATURATED),
            flushed: f.contains(Flags::FLUSHED),
            invalid: f.contains(Flags::INVALID),
        }
    }
}

impl std::fmt::Display for RFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut v = Vec::new();
        for (on, n) in [
            (self.inexact, "inexact"),
            (self.overflow, "overflow"),
            (self.underflow, "underflow"),
            (self.saturated, "saturated"),
            (self.flushed, "flushed"),
            (self.invalid, "invalid"),
        ] {
            if on {
                v.push(n);
            }
        }
        if v.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&v.join(","))
        }
    }
}

/// The expected outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub bits: u64,
    pub flags: RFlags,
}

/// Which magnitude the rounding step rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// `|source| × 2^scale`.
    Source,
    /// `1`, after a `.sat` clamp.
    One,
}

/// The outcome of the input stage.
#[derive(Clone, Copy, Debug)]
pub enum Pre {
    Done(Expect),
    Round {
        neg: bool,
        which: Which,
        flags: RFlags,
    },
}

/// What `.sat` and `.relu` clamp to: +0, or for a destination without zero (`ue8m0`) its
/// smallest value, which stands in for +0 there. (A zero *input* into such a destination is
/// instead rounded up to that value, inexactly: see [`pre`].)
fn plus_zero(d: &Dst) -> u64 {
    if d.has_zero {
        0
    } else {
        d.min_pos_bits
    }
}

/// A NaN that keeps the source's sign and payload, as far as the destination allows.
fn payload_nan(d: &Dst, neg: bool, payload: u64) -> u64 {
    let canonical = d.nan_bits.unwrap();
    match d.specials {
        Some(Specials::Ieee) => {
            let m = d.man_bits;
            let mut mant = payload >> (64 - m);
            if mant == 0 {
                // Keep it a NaN: the quiet bit.
                mant = 1u64 << (m - 1);
            }
            let body = ((low_mask(d.exp_bits) << m) | mant) << d.pad_bits;
            body | if neg { d.sign_bit() } else { 0 }
        }
        // One NaN pattern, the sign bit alone: nothing can be kept.
        Some(Specials::Fnuz) => canonical,
        // Only the all-ones magnitude is NaN: the sign is all that can be kept.
        _ => canonical | if neg { d.sign_bit() } else { 0 },
    }
}

/// The NaN a rule of [`NanResult`] gives in a destination with NaN: for a NaN input of sign
/// `neg` with its payload, or (`payload` `None`) for the NaN standing in for an infinity or
/// an overflow, which the first two rules leave canonical and the peers' rules sign.
fn rule_nan(d: &Dst, rule: NanResult, neg: bool, payload: Option<u64>) -> u64 {
    let canonical = d.nan_bits.unwrap();
    let with_sign = |bits: u64, neg: bool| if neg { bits | d.sign_bit() } else { bits };
    if rule == NanResult::Canonical || (rule == NanResult::Payload && payload.is_none()) {
        return canonical;
    }
    if rule == NanResult::Payload {
        return payload_nan(d, neg, payload.unwrap());
    }
    match d.specials {
        // One NaN, unsigned: nothing to choose.
        Some(Specials::Fnuz) => canonical,
        // Exponent all ones with a mantissa: what the mantissa holds depends on the rule.
        Some(Specials::Ieee)
            if rule != NanResult::SignedCanonical && rule != NanResult::NegativeCanonical =>
        {
            let m = d.man_bits;
            let quiet = 1u64 << (m - 1);
            let kept = if rule == NanResult::Quieted {
                payload.unwrap_or(0) >> (64 - m)
            } else {
                0
            };
            with_sign(
                (low_mask(d.exp_bits) << m | quiet | kept) << d.pad_bits,
                neg,
            )
        }
        // The all-ones magnitude (the only NaN of e4m3 and ue8m0, the canonical one of the
        // IEEE-style formats) with a sign.
        _ => with_sign(canonical, neg || rule == NanResult::NegativeCanonical),
    }
}

/// The input stage: decoding policies, NaN, infinities, zero, `.sat`, `.relu`.
///
/// `gt_one` may give the answer to "is `|x| × 2^scale` above 1?" when the caller knows it.
pub fn pre(dec: &Decoded, d: &Dst, p: &Policy, gt_one: Option<bool>) -> Pre {
    let mut flags = RFlags::default();
    let mut val = &dec.val;
    let flushed_zero;
    if p.flush_inputs && dec.subnormal {
        let neg = matches!(dec.val, Val::Num { neg: true, .. });
        flushed_zero = Val::Zero { neg };
        val = &flushed_zero;
        flags.flushed = true;
    }
    let done = |bits: u64, flags: RFlags| Pre::Done(Expect { bits, flags });
    if !d.is_float() {
        // Integer and fixed-point destinations.
        return match val {
            Val::Nan { .. } => {
                flags.invalid = true;
                // `.satfinite`: NaN becomes +largest finite where there is no NaN
                // (PTX s2f6x2: "NaN results are converted to positive MAX_NORM").
                let bits = if p.satfinite {
                    d.max_bits
                } else {
                    match p.int_nan {
                        IntNan::Zero => 0,
                        IntNan::HighBit => 1u64 << (d.width - 1),
                    }
                };
                done(bits, flags)
            }
            Val::Inf { neg: true } if p.relu => done(0, flags),
            Val::Inf { neg } => {
                flags.invalid = true;
                flags.saturated = true;
                done(if *neg { d.fix_min_bits } else { d.max_bits }, flags)
            }
            Val::Zero { .. } => done(0, flags),
            Val::Num { neg: true, .. } if p.relu => done(0, flags),
            Val::Num { neg, .. } => Pre::Round {
                neg: *neg,
                which: Which::Source,
                flags,
            },
        };
    }
    // Float destinations.
    let sign = |neg: bool| if neg { d.sign_bit() } else { 0 };
    if let Val::Nan { neg, payload } = val {
        if p.sat {
            flags.invalid = true;
            return done(plus_zero(d), flags);
        }
        let Some(canonical) = d.nan_bits else {
            flags.invalid = true;
            let bits = match p.no_nan {
                NoNanResult::LargestFinite => d.max_bits,
                NoNanResult::NegativeZero => sign(true),
                NoNanResult::OppositeZero => sign(!*neg),
            };
            return done(bits, flags);
        };
        let bits = if p.relu {
            canonical
        } else {
            rule_nan(d, p.nan, *neg, Some(*payload))
        };
        return done(bits, flags);
    }
    // A value the destination cannot encode (ml_dtypes' e8m0 rule): NaN instead of its
    // magnitude or the smallest value.
    if p.unrepresentable_nan && !p.sat && !p.relu {
        let cannot = match val {
            Val::Zero { .. } => !d.has_zero,
            Val::Inf { neg } | Val::Num { neg, .. } => *neg && !d.signed,
            Val::Nan { .. } => false,
        };
        if let (true, Some(nan)) = (cannot, d.nan_bits) {
            flags.invalid = true;
            return done(nan, flags);
        }
    }
    // An unsigned destination drops the sign of everything but NaN (`neg`); `.sat` looks at
    // the sign of the value itself (`src_neg`): it clamps the mathematical value, so every
    // value ≤ 0 gives +0 even where the destination would have dropped the sign. `.relu`
    // looks at the sign the destination would get. (The step list of `convert.rs` puts the
    // magnitude step between the two `.sat` steps for infinities and finite values; the
    // engine, and this model, apply both `.sat` steps to the signed value.)
    let (src_neg, is_inf, is_zero) = match val {
        Val::Inf { neg } => (*neg, true, false),
        Val::Zero { neg } => (*neg, false, true),
        Val::Num { neg, .. } => (*neg, false, false),
        Val::Nan { .. } => unreachable!(),
    };
    let neg = src_neg && d.signed;
    if is_inf {
        if p.sat {
            flags.saturated = true;
            return if src_neg {
                done(plus_zero(d), flags)
            } else {
                done(d.one_bits, flags)
            };
        }
        if p.relu && neg {
            return done(plus_zero(d), flags);
        }
        if p.satfinite {
            flags.saturated = true;
            return done(sign(neg) | d.max_bits, flags);
        }
        if let Some(inf) = d.inf_bits {
            return done(sign(neg) | inf, flags);
        }
        flags.invalid = true;
        return match d.nan_bits {
            Some(_) => done(rule_nan(d, p.nan, neg, None), flags),
            None => done(sign(neg) | d.max_bits, flags),
        };
    }
    let mut which = Which::Source;
    if p.sat {
        if src_neg || is_zero {
            // Every value ≤ 0 (and −0) clamps to +0.
            flags.saturated = src_neg && !is_zero;
            return done(plus_zero(d), flags);
        }
        if let Val::Num { mag, .. } = val {
            let above = gt_one
                .unwrap_or_else(|| qcmp(&scaled(mag, p.scale), &Q::one()) == Ordering::Greater);
            if above {
                flags.saturated = true;
                which = Which::One;
            }
        }
    }
    if p.relu && neg {
        return done(plus_zero(d), flags);
    }
    if is_zero {
        if !d.has_zero {
            // Zero rounds up to the smallest value: inexact, and tiny.
            flags.inexact = true;
            flags.underflow = true;
            return done(d.min_pos_bits, flags);
        }
        let neg = neg && !p.positive_zero && d.signed_zero;
        return done(sign(neg), flags);
    }
    Pre::Round { neg, which, flags }
}

/// `mag × 2^scale`.
pub fn scaled(mag: &Q, scale: i32) -> Q {
    if scale == 0 {
        return mag.clone();
    }
    // Every magnitude here is dyadic: its reduced denominator is a power of two.
    let den_exp = mag.denom().bits() as i64 - 1;
    assert_eq!(mag.denom().trailing_zeros(), Some(den_exp as u64));
    dyadic(mag.numer().clone(), scale as i64 - den_exp)
}

/// Chooses between the neighbours: (choice, inexact, took the upper one).
fn choose(loc: &Loc, neg: bool, r: Rounding) -> (Pick, bool, bool) {
    if loc.exact {
        return (loc.upper, false, false);
    }
    let Some(lower) = loc.lower else {
        // Nothing below: forced up.
        return (loc.upper, true, true);
    };
    let up = match r.direction {
        Direction::NearestEven => match loc.half {
            Ordering::Less => false,
            Ordering::Greater => true,
            Ordering::Equal => !lower.even,
        },
        Direction::NearestAway => loc.half != Ordering::Less,
        Direction::TowardZero => false,
        Direction::Down => neg,
        Direction::Up => !neg,
        Direction::Stochastic { random, width } => {
            assert!((1..=64).contains(&width), "width {width}");
            // floor(fraction × 2^w) + (random mod 2^w) carries out of w bits?
            let f = loc.frac64 >> (64 - width);
            let r = random & low_mask(width);
            (f as u128 + r as u128) >> width != 0
        }
    };
    (if up { loc.upper } else { lower }, true, up)
}

/// The output stage: rounding choice, overflow, encoding, output policies.
pub fn finish(d: &Dst, neg: bool, loc: &Loc, r: Rounding, p: &Policy, pre: RFlags) -> Expect {
    let mut flags = pre;
    // Between the two smallest values of a destination without zero: up, if asked.
    let bottom =
        !d.has_zero && !loc.exact && loc.lower.is_some_and(|l| l.enc == Some(d.min_pos_bits));
    let r = if p.lowest_binade_up && bottom {
        Rounding {
            direction: Direction::Up,
            ..r
        }
    } else {
        r
    };
    let (c, inexact, up) = choose(loc, neg, r);
    flags.inexact |= inexact;
    if !d.is_float() {
        let n = c.n_fit;
        let in_range = match (neg, n) {
            (_, None) => false,
            (false, Some(n)) => n <= d.fix_pos,
            (true, Some(n)) => n <= d.fix_neg,
        };
        let wmask = low_mask(d.width);
        if in_range {
            let n = n.unwrap();
            let bits = if neg { n.wrapping_neg() & wmask } else { n };
            return Expect { bits, flags };
        }
        flags.overflow = true;
        if p.int_overflow == IntOverflow::Wrap && !p.sat {
            let low = if neg { c.n_mod.wrapping_neg() } else { c.n_mod };
            return Expect {
                bits: low & wmask,
                flags,
            };
        }
        flags.saturated = true;
        let bits = if neg { d.fix_min_bits } else { d.max_bits };
        return Expect { bits, flags };
    }
    let sign = if neg { d.sign_bit() } else { 0 };
    let Some(enc) = c.enc else {
        // Beyond the largest finite value.
        flags.overflow = true;
        flags.inexact = true;
        if p.satfinite || p.overflow == Overflow::Saturate {
            flags.saturated = true;
            return Expect {
                bits: sign | d.max_bits,
                flags,
            };
        }
        // Overflow::Infinite: every overflow, whichever neighbour the rounding took.
        let to_infinity = p.overflow == Overflow::Infinite
            || match r.direction {
                Direction::NearestEven | Direction::NearestAway => true,
                Direction::TowardZero => false,
                Direction::Down => neg,
                Direction::Up => !neg,
                Direction::Stochastic { .. } => up,
            };
        let bits = if !to_infinity {
            sign | d.max_bits
        } else if let Some(inf) = d.inf_bits {
            sign | inf
        } else if d.nan_bits.is_some() {
            rule_nan(d, p.nan, neg, None)
        } else {
            sign | d.max_bits
        };
        return Expect { bits, flags };
    };
    let mut bits = sign | enc;
    if loc.tiny && inexact {
        flags.underflow = true;
    }
    let mut zero = c.zero;
    if p.flush_outputs && c.sub {
        flags.flushed = true;
        bits = sign;
        zero = true;
    }
    if zero && neg && (p.positive_zero || p.relu || !d.signed_zero) {
        bits = 0;
    }
    Expect { bits, flags }
}

/// The whole conversion of one source pattern.
pub fn reference(src: &Format, bits: u64, dst: &Format, r: Rounding, p: &Policy) -> Expect {
    let d = dst_model(dst);
    let dec = decode(src, bits);
    reference_decoded(&dec, d, r, p)
}

/// The whole conversion of a decoded value.
pub fn reference_decoded(dec: &Decoded, d: &Dst, r: Rounding, p: &Policy) -> Expect {
    match pre(dec, d, p, None) {
        Pre::Done(e) => e,
        Pre::Round { neg, which, flags } => {
            let x = match which {
                Which::One => Q::one(),
                Which::Source => match &dec.val {
                    Val::Num { mag, .. } => scaled(mag, p.scale),
                    _ => unreachable!(),
                },
            };
            let loc = locate(d, &x, r.integral);
            finish(d, neg, &loc, r, p, flags)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Test plumbing: the engine's answer, comparison, the lists of roundings and policies, a
// seeded generator and a small work splitter.
// ---------------------------------------------------------------------------------------------

/// The engine's answer.
pub fn engine(src: &Format, bits: u64, dst: &Format, r: Rounding, p: &Policy) -> Expect {
    let out = Conversion::new(*src, *dst, r, *p).apply(bits);
    Expect {
        bits: out.bits,
        flags: RFlags::of_engine(out.flags),
    }
}

/// Whether the engine's outcome agrees with the reference.
pub fn agree(want: &Expect, got: &Expect) -> bool {
    want.bits == got.bits && want.flags == got.flags
}

/// A printable rounding.
pub fn rounding_text(r: &Rounding) -> String {
    let base = match (r.direction, r.integral) {
        (Direction::NearestEven, false) => "rn",
        (Direction::NearestAway, false) => "rna",
        (Direction::TowardZero, false) => "rz",
        (Direction::Down, false) => "rm",
        (Direction::Up, false) => "rp",
        (Direction::NearestEven, true) => "rni",
        (Direction::NearestAway, true) => "rnai",
        (Direction::TowardZero, true) => "rzi",
        (Direction::Down, true) => "rmi",
        (Direction::Up, true) => "rpi",
        (Direction::Stochastic { random, width }, i) => {
            return format!(
                "rs{}(random={random:#x}, width={width})",
                if i { "i" } else { "" }
            )
        }
    };
    base.to_string()
}

/// A named policy.
#[derive(Clone, Copy, Debug)]
pub struct NamedPolicy {
    pub name: &'static str,
    pub policy: Policy,
}

const DEFAULT: Policy = Policy {
    flush_inputs: false,
    flush_outputs: false,
    sat: false,
    satfinite: false,
    relu: false,
    positive_zero: false,
    overflow: Overflow::Ieee,
    nan: NanResult::Canonical,
    int_nan: IntNan::Zero,
    int_overflow: IntOverflow::Clamp,
    scale: 0,
    no_nan: NoNanResult::LargestFinite,
    lowest_binade_up: false,
    unrepresentable_nan: false,
};

/// The scale used by the exhaustive policy list.
pub const SCALE: i32 = -3;

/// The policy combinations the exhaustive tests run.
pub fn policies() -> Vec<NamedPolicy> {
    let d = DEFAULT;
    vec![
        NamedPolicy {
            name: "default",
            policy: d,
        },
        NamedPolicy {
            name: "satfinite",
            policy: Policy {
                satfinite: true,
                ..d
            },
        },
        NamedPolicy {
            name: "sat",
            policy: Policy { sat: true, ..d },
        },
        NamedPolicy {
            name: "relu",
            policy: Policy { relu: true, ..d },
        },
        NamedPolicy {
            name: "relu+satfinite",
            policy: Policy {
                relu: true,
                satfinite: true,
                ..d
            },
        },
        NamedPolicy {
            name: "ftz(in+out)",
            policy: Policy {
                flush_inputs: true,
                flush_outputs: true,
                ..d
            },
        },
        NamedPolicy {
            name: "pzo",
            policy: Policy {
                positive_zero: true,
                ..d
            },
        },
        NamedPolicy {
            name: "overflow=saturate",
            policy: Policy {
                overflow: Overflow::Saturate,
                ..d
            },
        },
        NamedPolicy {
            name: "overflow=infinite",
            policy: Policy {
                overflow: Overflow::Infinite,
                ..d
            },
        },
        NamedPolicy {
            name: "nan=payload",
            policy: Policy {
                nan: NanResult::Payload,
                ..d
            },
        },
        NamedPolicy {
            name: "nan=quieted+no_nan=negative_zero",
            policy: Policy {
                nan: NanResult::Quieted,
                no_nan: NoNanResult::NegativeZero,
                ..d
            },
        },
        NamedPolicy {
            name: "nan=signed_quiet+no_nan=opposite_zero+unrepresentable_nan+lowest_binade_up",
            policy: Policy {
                nan: NanResult::SignedQuiet,
                no_nan: NoNanResult::OppositeZero,
                unrepresentable_nan: true,
                lowest_binade_up: true,
                ..d
            },
        },
        NamedPolicy {
            name: "nan=signed_canonical+lowest_binade_up",
            policy: Policy {
                nan: NanResult::SignedCanonical,
                lowest_binade_up: true,
                ..d
            },
        },
        NamedPolicy {
            name: "nan=negative_canonical+unrepresentable_nan",
            policy: Policy {
                nan: NanResult::NegativeCanonical,
                unrepresentable_nan: true,
                ..d
            },
        },
        NamedPolicy {
            name: "int_overflow=wrap",
            policy: Policy {
                int_overflow: IntOverflow::Wrap,
                ..d
            },
        },
        NamedPolicy {
            name: "int_nan=highbit",
            policy: Policy {
                int_nan: IntNan::HighBit,
                ..d
            },
        },
        NamedPolicy {
            name: "scale",
            policy: Policy { scale: SCALE, ..d },
        },
    ]
}

/// Every rounding: the nine named ones and stochastic rounding with several random values
/// and widths.
pub fn roundings() -> Vec<Rounding> {
    vec![
        Rounding::RN,
        Rounding::RNA,
        Rounding::RZ,
        Rounding::RM,
        Rounding::RP,
        Rounding::RNI,
        Rounding::RZI,
        Rounding::RMI,
        Rounding::RPI,
        Rounding::stochastic(0, 13),
        Rounding::stochastic(0x8000_0000_0000_0000, 64),
        Rounding::stochastic(0x1a5f, 16),
        Rounding::stochastic(0x5, 3),
    ]
}

/// Runs `work(i)` for `i in 0..n` on a few threads, handing out indices in order.
pub fn parallel<F: Fn(usize) + Sync>(n: usize, work: F) {
    let threads = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(2)
        .clamp(1, 8);
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, AtOrd::Relaxed);
                if i >= n {
                    break;
                }
                work(i);
            });
        }
    });
}

/// Collects disagreements from several threads and fails with a readable report: the number
/// of disagreements per (source, destination, rounding, policy) group with the first example
/// of each. With `GPUCVT_REPORT=path` every group is also written to that file.
#[derive(Default)]
pub struct Mismatches {
    inner: Mutex<Groups>,
}

/// The number of disagreements, and per group its count and first example.
type Groups = (usize, HashMap<String, (usize, String)>);

impl Mismatches {
    /// How many groups the panic message shows.
    pub const SHOW: usize = 50;

    /// Records a disagreement.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        src: &Format,
        bits: u64,
        dst: &Format,
        r: &Rounding,
        policy: &str,
        p: &Policy,
        want: &Expect,
        got: &Expect,
    ) {
        let key = format!(
            "{} -> {} {} [{}]{}",
            src.name,
            dst.name,
            rounding_text(r),
            policy,
            if want.bits == got.bits {
                " (flags only)"
            } else {
                ""
            }
        );
        let mut g = self.inner.lock().unwrap();
        g.0 += 1;
        let e = g.1.entry(key).or_insert_with(|| {
            (
                0,
                format!(
                    "{} {bits:#x} -> {} {} policy {policy} {p:?}: expected {:#x} [{}], engine {:#x} [{}]",
                    src.name,
                    dst.name,
                    rounding_text(r),
                    want.bits,
                    want.flags,
                    got.bits,
                    got.flags
                ),
            )
        });
        e.0 += 1;
    }

    /// Compares and records; returns whether they agree.
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &self,
        src: &Format,
        bits: u64,
        dst: &Format,
        r: &Rounding,
        policy: &str,
        p: &Policy,
        want: &Expect,
        got: &Expect,
    ) -> bool {
        if agree(want, got) {
            true
        } else {
            self.record(src, bits, dst, r, policy, p, want, got);
            false
        }
    }

    /// The number of disagreements so far.
    pub fn count(&self) -> usize {
        self.inner.lock().unwrap().0
    }

    /// Panics with the collected report if there was any disagreement.
    pub fn assert_none(&self, what: &str, checked: u64) {
        let g = self.inner.lock().unwrap();
        if g.0 == 0 {
            eprintln!("{what}: {checked} conversions agree with the reference");
            return;
        }
        let mut groups: Vec<_> = g.1.iter().collect();
        groups.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        if let Ok(path) = std::env::var("GPUCVT_REPORT") {
            let mut all = String::new();
            for (k, (n, ex)) in &groups {
                all.push_str(&format!("{n:>9}  {k}\n           e.g. {ex}\n"));
            }
            let _ = std::fs::write(path, all);
        }
        let mut msg = format!(
            "{what}: {} of {checked} conversions disagree with the reference, in {} groups\n",
            g.0,
            groups.len()
        );
        for (k, (n, ex)) in groups.iter().take(Self::SHOW) {
            msg.push_str(&format!("{n:>9}  {k}\n           e.g. {ex}\n"));
        }
        if groups.len() > Self::SHOW {
            msg.push_str(&format!(
                "  ... {} more groups\n",
                groups.len() - Self::SHOW
            ));
        }
        panic!("{msg}");
    }
}
