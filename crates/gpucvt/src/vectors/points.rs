//! The boundary inputs of level 1: the source encodings around every point where a
//! conversion's answer can change.
//!
//! Sources of at most 16 bits need none of this: every encoding is a case. For wider
//! sources the points are taken from the *destination's* grid, since that is where rounding
//! decides: each destination value and the midpoint to its neighbour (the tie), each as the
//! nearest source encodings below and above, one more encoding either side (±1 ulp of the
//! source), the overflow threshold past the largest magnitude, the integers and half
//! integers of integral roundings, and the source's own special encodings.

use crate::core::convert::{convert, Policy};
use crate::core::format::{Format, Layout, Specials};
use crate::core::round::Rounding;
use crate::core::value::{Class, Value};
use std::collections::BTreeSet;

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Every encoding of `f` when it has at most 16 bits, else `None`.
pub(crate) fn exhaustive(f: &Format) -> Option<Vec<u64>> {
    (f.width() <= 16).then(|| (0..=f.mask()).collect())
}

/// The level-1 source encodings of format `src` for a conversion into `dst` (`integral`:
/// the rounding is to integers, whatever the destination), sorted and distinct.
pub(crate) fn boundary(src: &Format, dst: &Format, integral: bool) -> Vec<u64> {
    let mut out = BTreeSet::new();
    specials(src, &mut out);
    let grid = grid(dst);
    for &d in &grid {
        let v = dst.decode(d);
        if !finite(&v) {
            continue;
        }
        around(src, &v, &mut out);
        // The neighbour one encoding further out; where there is none (the largest
        // magnitude), the overflow threshold and the next grid point past it.
        let next = dst.decode(d.wrapping_add(1) & dst.mask());
        if adjacent(dst, d, &v, &next) {
            if let Some(mid) = midpoint(&v, &next) {
                around(src, &mid, &mut out);
            }
        } else if d > 0 {
            let prev = dst.decode(d - 1);
            if finite(&prev) && adjacent(dst, d - 1, &prev, &v) {
                // v + (v - prev) / 2 and v + (v - prev): mirror prev through v.
                if let Some(beyond) = reflect(&prev, &v) {
                    around(src, &beyond, &mut out);
                    if let Some(mid) = midpoint(&v, &beyond) {
                        around(src, &mid, &mut out);
                    }
                }
            }
        }
    }
    if integral || !dst.is_float() {
        // Integers near zero and near each power of two, and the half integers between them
        // (the ties of integral rounding).
        let mut ints: Vec<i128> = (-4..=4).collect();
        for p in 1..64 {
            let b = 1i128 << p;
            ints.extend([b - 1, b, b + 1, -b - 1, -b, -b + 1]);
        }
        for n in ints {
            let v = Value::from_i128(n);
            around(src, &v, &mut out);
            if let Some(h) = midpoint(&v, &Value::from_i128(n + 1)) {
                around(src, &h, &mut out);
            }
        }
    }
    out.into_iter().collect()
}

fn finite(v: &Value) -> bool {
    matches!(v.class, Class::Zero | Class::Finite(_))
}

/// Whether encoding `d + 1` of `f` is the next value after encoding `d` (same sign, no
/// wrap-around, both finite).
fn adjacent(f: &Format, d: u64, v: &Value, next: &Value) -> bool {
    if !finite(next) || d == f.mask() {
        return false;
    }
    match f.layout {
        Layout::Float(_) => {
            let sign = f.sign_bit().unwrap_or(0);
            (d & sign) == ((d + 1) & sign)
        }
        Layout::Fixed(_) => matches!(next.partial_cmp_value(v), Some(std::cmp::Ordering::Greater)),
    }
}

/// The destination encodings whose values matter: all of them for at most 16 bits, else
/// every binade's edges and a few mantissas inside (floats) or the powers of two and their
/// neighbours (fixed point).
fn grid(f: &Format) -> Vec<u64> {
    if let Some(all) = exhaustive(f) {
        return all;
    }
    let mut out = BTreeSet::new();
    match f.layout {
        Layout::Float(l) => {
            let sign = f.sign_bit().unwrap_or(0);
            let man = l.man_bits;
            let top = mask(man);
            for e in 0..(1u64 << l.exp_bits) {
                for m in [0, 1, 2, top / 3, top / 2, top / 2 + 1, top - 1, top] {
                    let enc = ((e << man) | (m & top)) << l.pad_bits;
                    out.insert(enc);
                    if sign != 0 {
                        out.insert(enc | sign);
                    }
                }
            }
        }
        Layout::Fixed(l) => {
            let m = f.mask();
            for p in 0..l.bits {
                let b = 1u64 << p;
                for x in [b, b.wrapping_sub(1), b.wrapping_add(1)] {
                    out.insert(x & m);
                    out.insert(x.wrapping_neg() & m);
                }
            }
            out.extend([0, m, m >> 1, (m >> 1) + 1]);
        }
    }
    out.into_iter().collect()
}

/// The source encodings nearest below and above `x`, and one further out on each side.
fn around(src: &Format, x: &Value, out: &mut BTreeSet<u64>) {
    let policy = Policy::default();
    for r in [Rounding::RM, Rounding::RP] {
        let b = convert(x, src, r, &policy).bits;
        let v = src.decode(b);
        if !finite(&v) {
            continue;
        }
        out.insert(b);
        for n in [b.wrapping_add(1), b.wrapping_sub(1)] {
            let n = n & src.mask();
            // An encoding of the same sign (floats: the step does not cross to the other
            // sign's zero or into another class).
            if let Layout::Float(_) = src.layout {
                let sign = src.sign_bit().unwrap_or(0);
                if n & sign != b & sign {
                    continue;
                }
            }
            out.insert(n);
        }
    }
}

/// A value as a signed significand and a power of two (`None` for non-finite values).
fn parts(v: &Value) -> Option<(i128, i32)> {
    match v.class {
        Class::Zero => Some((0, 0)),
        Class::Finite(d) => {
            let s = i128::try_from(d.sig).ok()?;
            Some((if v.negative { -s } else { s }, d.exp))
        }
        _ => None,
    }
}

/// `a·x + b·y` exactly, or `None` when the exponents are too far apart to align.
fn combine(x: &Value, a: i128, y: &Value, b: i128, scale: i32) -> Option<Value> {
    let (sx, ex) = parts(x)?;
    let (sy, ey) = parts(y)?;
    let e = if sx == 0 {
        ey
    } else if sy == 0 {
        ex
    } else {
        ex.min(ey)
    };
    let align = |s: i128, ee: i32| -> Option<i128> {
        let k = u32::try_from(ee - e).ok()?;
        if k > 100 {
            return None;
        }
        s.checked_mul(1i128 << k)
    };
    let sum = align(sx, ex)?
        .checked_mul(a)?
        .checked_add(align(sy, ey)?.checked_mul(b)?)?;
    let negative = sum < 0;
    Some(Value::finite(negative, sum.unsigned_abs(), e + scale))
}

/// `(x + y) / 2`.
fn midpoint(x: &Value, y: &Value) -> Option<Value> {
    combine(x, 1, y, 1, -1)
}

/// `2y - x`: `x` mirrored through `y`.
fn reflect(x: &Value, y: &Value) -> Option<Value> {
    combine(x, -1, y, 2, 0)
}

/// ±0, ±inf, NaNs with various payloads, the subnormal and normal edges, ±max and ±1.
fn specials(f: &Format, out: &mut BTreeSet<u64>) {
    let sign = f.sign_bit().unwrap_or(0);
    let mut add = |b: u64| {
        out.insert(b & f.mask());
        if sign != 0 {
            out.insert((b | sign) & f.mask());
        }
    };
    add(0);
    add(f.max_finite_bits());
    add(f.min_positive_bits());
    if let Some(b) = f.min_normal_bits() {
        add(b);
        add(b.wrapping_sub(1)); // the largest subnormal
    }
    if let Some(b) = f.infinity() {
        add(b);
    }
    if let Some(b) = f.encode(&Value::from_i128(1)) {
        add(b);
    }
    if let Layout::Float(l) = f.layout {
        if l.specials == Specials::Ieee {
            // Quiet and signalling NaNs, the smallest and largest payloads.
            let exp = mask(l.exp_bits) << (l.man_bits + l.pad_bits);
            let m = l.man_bits;
            if m > 0 {
                for payload in [1u64, mask(m), 1 << (m - 1), (1 << (m - 1)) | 1, mask(m - 1)] {
                    add(exp | ((payload & mask(m)) << l.pad_bits));
                }
            }
        }
        if let Some(n) = f.canonical_nan() {
            add(n);
        }
    } else {
        add(f.mask());
        add(f.mask() >> 1);
        add((f.mask() >> 1) + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::format::{E4M3, F16, F32, S32};

    #[test]
    fn ties_and_thresholds_are_there() {
        let pts = boundary(&F32, &E4M3, false);
        // 1 + 2^-4 (a tie between 1 and 1.125), its neighbours, and 464 (the overflow
        // threshold between 448 and 512).
        for x in [1.0625f32, 464.0, 448.0, -464.0, 2.0f32.powi(-10)] {
            let b = x.to_bits() as u64;
            assert!(pts.contains(&b), "{x}");
            assert!(pts.contains(&(b + 1)) && pts.contains(&(b - 1)), "{x}");
        }
        assert!(pts.contains(&0x7fc0_0000) && pts.contains(&0x7f80_0001));
        let f16 = boundary(&F32, &F16, false);
        assert!(f16.contains(&65520.0f32.to_bits().into()));
        // Integer destinations: the half integers.
        let s = boundary(&F32, &S32, true);
        assert!(s.contains(&2.5f32.to_bits().into()));
        assert!(s.contains(&2147483648.0f32.to_bits().into()));
    }
}
