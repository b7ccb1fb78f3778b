//! Which inputs saturation really changes: those whose rounding, with the destination's
//! exponent range unbounded, would leave its range. An input a little above the largest
//! finite value that rounds to it anyway (449 into e4m3 under `.rn`) is not counted.

use crate::chunk::exp2i;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Layout;
use gpucvt_core::round::Direction;

/// The thresholds `(lo, hi)` of a conversion's `saturated` count, in the destination's
/// (scaled) units: saturation changed an input `y` exactly when `y > hi` or `y < lo`.
/// Inputs are exact `f64`s (decoded sources times a power of two), so a threshold that
/// counts a tie is the `f64` just inside it.
pub(crate) fn saturation_bounds(conv: &Conversion) -> (f64, f64) {
    let dst = conv.dst;
    let policy = conv.policy;
    let value = |bits: u64| dst.decode(bits).to_f64_lossy();
    let max = value(dst.max_finite_bits());
    let integral = conv.rounding.integral;
    // The grid's spacing beyond each bound (at least 1 when rounding to integral values).
    let coarse = |s: f64| if integral { s.max(1.0) } else { s };
    let (bottom, below, top, above) = match dst.layout {
        Layout::Float(l) if policy.sat => {
            let tiny = match (policy.flush_outputs, dst.min_normal_bits()) {
                (true, Some(b)) => value(b),
                _ => value(dst.min_positive_bits()),
            };
            (0.0, coarse(tiny), 1.0, coarse(exp2i(-(l.man_bits as i32))))
        }
        Layout::Float(l) => {
            let ulp = coarse(exp2i(exponent(max) - l.man_bits as i32));
            (-max, ulp, max, ulp)
        }
        Layout::Fixed(l) => {
            let step = exp2i(-(l.frac_bits as i32));
            let min = dst.min_finite_bits().map_or(0.0, value);
            (min, coarse(step), max, coarse(step))
        }
    };
    let hi = upper(top, above, conv.rounding.direction);
    // `.relu` makes every negative input zero: no negative value is changed by saturation.
    // An unsigned float format (`ue8m0`, `ue4m3`: scale formats) takes a negative input's
    // magnitude, rounded as a positive one.
    let unsigned_float = matches!(dst.layout, Layout::Float(l) if !l.signed);
    let lo = if policy.relu {
        f64::NEG_INFINITY
    } else if unsigned_float && !policy.sat {
        -hi
    } else {
        -upper(-bottom, below, mirrored(conv.rounding.direction))
    };
    (lo, hi)
}

/// For a bound `top` > 0 with grid spacing `s` above it: the largest input that rounds to
/// `top` or below (counting a tie in).
fn upper(top: f64, s: f64, d: Direction) -> f64 {
    let half = top + s / 2.0;
    match d {
        // A tie goes to the even neighbour: `top` itself, or the one above.
        Direction::NearestEven if is_even(top, s) => half,
        Direction::NearestEven | Direction::NearestAway => next_down(half),
        Direction::TowardZero | Direction::Down => next_down(top + s),
        // Any input above `top` rounds above it; stochastic rounding may, depending on its
        // random bits, which the outputs do not tell.
        Direction::Up | Direction::Stochastic { .. } => top,
    }
}

/// The direction that rounds `-x` as `d` rounds `x` (negated).
fn mirrored(d: Direction) -> Direction {
    match d {
        Direction::Up => Direction::Down,
        Direction::Down => Direction::Up,
        d => d,
    }
}

/// Whether `v` is an even multiple of the spacing `s` (its last digit is 0).
fn is_even(v: f64, s: f64) -> bool {
    (v / s).abs() % 2.0 == 0.0
}

/// The exponent of a positive normal `f64`: `floor(log2 v)`.
fn exponent(v: f64) -> i32 {
    ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// The largest `f64` below `v` (`v` positive and finite).
fn next_down(v: f64) -> f64 {
    f64::from_bits(v.to_bits() - 1)
}

#[cfg(test)]
mod tests {
    use super::{next_down, saturation_bounds};
    use gpucvt_core::convert::{Conversion, Overflow, Policy};
    use gpucvt_core::format::{self, Format};
    use gpucvt_core::round::Rounding;

    fn bounds(src: Format, dst: Format, r: Rounding, p: Policy) -> (f64, f64) {
        saturation_bounds(&Conversion::new(src, dst, r, p))
    }

    /// Each threshold against the exact core, converting without saturation and with
    /// overflow judged on the rounded value alone (`Overflow::Infinite`): the threshold stays
    /// finite, the next `f64` beyond it overflows.
    #[test]
    fn thresholds_equal_the_cores_overflow() {
        let probe = Policy {
            overflow: Overflow::Infinite,
            ..Policy::default()
        };
        let dsts = [
            format::E4M3,
            format::E5M2,
            format::F16,
            format::BF16,
            format::E4M3FNUZ,
            format::E5M2FNUZ,
            format::E3M4,
            format::E4M3IEEE,
            format::TF32,
        ];
        let rs = [
            Rounding::RN,
            Rounding::RNA,
            Rounding::RZ,
            Rounding::RM,
            Rounding::RP,
        ];
        for dst in dsts {
            for r in rs {
                let c = Conversion::new(format::F64, dst, r, probe);
                let finite = |x: f64| {
                    let v = dst.decode(c.apply(x.to_bits()).bits).to_f64_lossy();
                    v.is_finite()
                };
                let sf = Policy {
                    satfinite: true,
                    ..Policy::default()
                };
                let (lo, hi) = bounds(format::F64, dst, r, sf);
                let up = f64::from_bits(hi.to_bits() + 1);
                assert!(finite(hi) && !finite(up), "{dst} {r:?}: {hi}");
                let down = f64::from_bits(lo.to_bits() + 1);
                assert!(finite(lo) && !finite(down), "{dst} {r:?}: {lo}");
            }
        }
    }

    /// The thresholds of common conversions, worked out by hand from the formats' grids.
    #[test]
    fn thresholds_are_where_unbounded_rounding_leaves_the_range() {
        let sf = Policy {
            satfinite: true,
            ..Policy::default()
        };
        let sat = Policy {
            sat: true,
            ..Policy::default()
        };
        let relu = Policy {
            satfinite: true,
            relu: true,
            ..Policy::default()
        };
        let f = format::F32;
        // e4m3: max 448 (mantissa 110, even), the next grid point 480.
        assert_eq!(bounds(f, format::E4M3, Rounding::RN, sf), (-464.0, 464.0));
        assert_eq!(
            bounds(f, format::E4M3, Rounding::RNA, sf).1,
            next_down(464.0)
        );
        assert_eq!(
            bounds(f, format::E4M3, Rounding::RZ, sf).1,
            next_down(480.0)
        );
        assert_eq!(
            bounds(f, format::E4M3, Rounding::RP, sf),
            (-next_down(480.0), 448.0)
        );
        assert_eq!(
            bounds(f, format::E4M3, Rounding::RM, sf),
            (-448.0, next_down(480.0))
        );
        // e5m2: max 57344 (mantissa 11, odd): the tie at 61440 goes up.
        assert_eq!(
            bounds(f, format::E5M2, Rounding::RN, sf).1,
            next_down(61440.0)
        );
        // f16: max 65504 (odd), spacing 32.
        assert_eq!(
            bounds(f, format::F16, Rounding::RN, Policy::default()).1,
            next_down(65520.0)
        );
        // e2m1: max 6 (1.1b x 2^2, odd), the next grid point 8.
        assert_eq!(
            bounds(f, format::E2M1, Rounding::RN, sf),
            (-next_down(7.0), next_down(7.0))
        );
        // Integers: s8 (127 odd, -128 even).
        assert_eq!(
            bounds(f, format::S8, Rounding::RNI, Policy::default()),
            (-128.5, next_down(127.5))
        );
        assert_eq!(
            bounds(f, format::U8, Rounding::RZI, Policy::default()),
            (-next_down(1.0), next_down(256.0))
        );
        // .sat: [0, 1]; f16's spacing above 1 is 2^-10, below 0 the smallest subnormal 2^-24.
        let (lo, hi) = bounds(f, format::F16, Rounding::RN, sat);
        assert_eq!(hi, 1.0 + 2f64.powi(-11));
        assert_eq!(lo, -(2f64.powi(-25)));
        // .relu: negatives are relu's, not saturation's.
        assert_eq!(
            bounds(f, format::E4M3, Rounding::RN, relu),
            (f64::NEG_INFINITY, 464.0)
        );
    }
}
