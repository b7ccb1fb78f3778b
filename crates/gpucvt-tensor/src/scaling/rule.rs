//! The scale of a block from its largest magnitude, for every scale format and rule, and the
//! number the block's elements are divided by.

use crate::scaling::{ScaleFormat, ScaleRule};
use gpucvt_core::format::{Format, Layout};

/// What a block's elements are scaled by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Divisor {
    /// Multiplied by 2^k exactly (`ue8m0` scales).
    Pow2(i32),
    /// Divided by this `f32` in `f32` arithmetic, `RN(x / t)` (`f32` and `bf16` scales).
    Div(f32),
    /// Multiplied by this `f32` (a rounded reciprocal of the scale), `RN(x × r)` (`ue4m3`
    /// scales, as torchao's NVFP4).
    Mul(f32),
}

/// The element format's numbers the rules need: its largest finite value, the exponent of
/// its largest power of two (OCP MX's `emax`), and its stored mantissa bits.
#[derive(Clone, Copy, Debug)]
pub struct Element {
    /// Largest finite value.
    pub max: f32,
    /// floor(log2(max)).
    pub emax: i32,
    /// Mantissa bits.
    pub mbits: u32,
}

impl Element {
    /// The numbers of a float format (`None` for the others).
    pub fn of(f: &Format) -> Option<Element> {
        matches!(f.layout, Layout::Float(_)).then(|| Element::of_max(f))
    }

    /// The numbers of any format, by its largest finite value (no mantissa bits for the
    /// integer ones).
    pub fn of_max(f: &Format) -> Element {
        let max = f.decode(f.max_finite_bits()).to_f64_lossy();
        Element {
            max: max as f32,
            emax: max.log2().floor() as i32,
            mbits: match f.layout {
                Layout::Float(l) => l.man_bits,
                _ => 0,
            },
        }
    }
}

/// The scale of a block whose largest magnitude is the `f32` encoding `m` (sign bit clear),
/// as the bits of `format`, and what its elements are scaled by. `second`: the per-tensor
/// second-level scale (`ue4m3` only). A block holding a NaN or an infinity (`m` ≥
/// `0x7f80_0000`) gets the scale format's NaN and is left unscaled.
pub fn block_scale(
    format: ScaleFormat,
    rule: ScaleRule,
    e: &Element,
    m: u32,
    second: Option<f32>,
) -> (u32, Divisor) {
    let bits = scale_bits(format, rule, e, m, second);
    (bits, divisor(format, bits, second))
}

/// The bits of [`block_scale`]'s scale. Branch-free on `m`, so that a loop over many
/// blocks' maxima is vectorized.
#[inline(always)]
pub fn scale_bits(
    format: ScaleFormat,
    rule: ScaleRule,
    e: &Element,
    m: u32,
    second: Option<f32>,
) -> u32 {
    let amax = f32::from_bits(m);
    let (bits, nan) = match format {
        ScaleFormat::Ue8m0 => (
            (ue8m0_shared(rule, e, m.min(0x7f7f_ffff)) + 127) as u32,
            0xff,
        ),
        ScaleFormat::F32 => ((amax / e.max).max(f32::MIN_POSITIVE).to_bits(), 0x7fc0_0000),
        ScaleFormat::Bf16 => {
            let s = bf16_rn((amax / e.max).max(f32::MIN_POSITIVE));
            (s.max(0x0080) as u32, 0x7fc0)
        }
        ScaleFormat::Ue4m3 => {
            let mut q = amax / e.max;
            if let Some(s2) = second {
                q /= s2;
            }
            // (NaN for a block with NaN: clamped like any other, then replaced.)
            let q = q.clamp(E4M3_MIN_NORMAL, E4M3_MAX);
            // A second level of 0 (an all-zero tensor): every block is zero, scale 0.
            let zero = second == Some(0.0);
            (if zero { 0 } else { e4m3_rn(q) as u32 }, 0x7f)
        }
    };
    if m >= 0x7f80_0000 {
        nan
    } else {
        bits
    }
}

/// What the elements of a block whose scale has the bits `bits` are scaled by (the NaN
/// scale's block: left unscaled).
pub fn divisor(format: ScaleFormat, bits: u32, second: Option<f32>) -> Divisor {
    match format {
        ScaleFormat::Ue8m0 if bits == 0xff => Divisor::Pow2(0),
        ScaleFormat::Ue8m0 => Divisor::Pow2(127 - bits as i32),
        ScaleFormat::Ue4m3 if bits & 0x7f == 0x7f => Divisor::Mul(1.0),
        ScaleFormat::Ue4m3 => {
            let s = e4m3_value(bits as u8);
            // torchao's NVFP4 multiplies by a reciprocal rounded to f32: 1/s, or (1/s2)/s,
            // finite for every s ≥ 2^-6 and s2 ≥ SECOND_LEVEL_MIN. A zero scale (an all-zero
            // tensor's) has no reciprocal: its elements are zeros.
            Divisor::Mul(match second {
                _ if s == 0.0 || second == Some(0.0) => 0.0,
                Some(s2) => (1.0 / s2) / s,
                None => 1.0 / s,
            })
        }
        ScaleFormat::F32 if f32::from_bits(bits).is_nan() => Divisor::Div(1.0),
        ScaleFormat::F32 => Divisor::Div(f32::from_bits(bits)),
        ScaleFormat::Bf16 if f32::from_bits(bits << 16).is_nan() => Divisor::Div(1.0),
        ScaleFormat::Bf16 => Divisor::Div(f32::from_bits(bits << 16)),
    }
}

/// e4m3's smallest normal value, 2^-6: the least block scale of `ue4m3` (as torchao's NVFP4,
/// whose `E4M3_EPS` it is), so that no block scale is zero or subnormal.
pub const E4M3_MIN_NORMAL: f32 = 0.015625;
/// e4m3's largest finite value.
pub const E4M3_MAX: f32 = 448.0;
/// The least non-zero NVFP4 second-level scale, 2^-121: with block scales of at least 2^-6
/// the element factor `RN_f32(RN_f32(1 / s2) / s)` is then at most 2^127, a finite `f32`
/// (f32's smallest normal, 2^-126, is not enough: 2^126 / s overflows for s < 2^-2).
pub const SECOND_LEVEL_MIN: f32 = f32::from_bits(0x0300_0000);

/// The per-tensor scale of a second level: `RN_f32(amax / (448 × max))`, at least
/// [`SECOND_LEVEL_MIN`] (2^-121, so that no element factor is infinite); 0 for an all-zero
/// tensor (`amax` 0), whose blocks then all get the scale 0 and zero elements, as
/// TransformerEngine's NVFP4 quantizes it.
///
/// ```
/// use gpucvt_tensor::scaling::second_level_scale;
/// assert_eq!(second_level_scale(7.75, 6.0), 7.75 / 2688.0);
/// assert_eq!(second_level_scale(0.0, 6.0), 0.0);
/// assert_eq!(second_level_scale(1e-40, 6.0), 2f32.powi(-121));
/// ```
pub fn second_level_scale(amax: f32, elem_max: f32) -> f32 {
    if amax == 0.0 {
        return 0.0;
    }
    // 448 × max in f64: exact for every element format (in f32 it overflows for bf16's).
    let s = (amax as f64 / (448.0 * elem_max as f64)) as f32;
    s.max(SECOND_LEVEL_MIN)
}

/// The shared exponent (the scale is 2^shared) of a `ue8m0` block scale of a finite block
/// whose largest magnitude is the `f32` encoding `m`, clamped to [−127, 127]:
/// - `floor`: floor(log2(amax)) − emax (OCP MX; an all-zero block gets −127);
/// - `ceil`: ceil(log2(amax)) − emax;
/// - `even`: floor(log2(amax′)) − emax, amax′ being amax rounded to the element format's
///   mantissa bits, ties away from zero (torchao's `EVEN`: half an element ulp added to the
///   `f32` bits, then the mantissa dropped);
/// - `rceil`: the smallest power of two not below `amax / max` (computed in `f32`, round to
///   nearest), i.e. `cvt.rp.satfinite.ue8m0x2.f32` of the quotient.
///
/// Every block scaling takes its `ue8m0` scales from here (the MX fast path of
/// `chunk::mx` calls it once per block, in a loop over blocks that the compiler
/// vectorizes: the `floor` arm is free of branches on `m`).
#[inline(always)]
pub fn ue8m0_shared(rule: ScaleRule, e: &Element, m: u32) -> i32 {
    let shared = match rule {
        ScaleRule::Floor if m == 0 => -127,
        ScaleRule::Floor => floor_log2(m) - e.emax,
        ScaleRule::Rceil => rceil(f32::from_bits(m), e),
        _ => Magnitude::of_f32(m).shared(rule, e),
    };
    shared.clamp(-127, 127)
}

/// [`ue8m0_shared`] of a block of a source wider than `f32` (`f64`), whose largest magnitude
/// `amax` may lie between `f32` values or beyond them: the same rules on `amax` itself
/// (`rceil`'s quotient is still computed in `f32`, from `amax` rounded to nearest).
pub fn ue8m0_shared_f64(rule: ScaleRule, e: &Element, amax: f64) -> i32 {
    let shared = match rule {
        ScaleRule::Rceil => rceil(amax as f32, e),
        _ => Magnitude::of_f64(amax).shared(rule, e),
    };
    shared.clamp(-127, 127)
}

/// `rceil`: `cvt.rp.satfinite.ue8m0.f32` of `amax / max` (in `f32`), as a shared exponent.
#[inline(always)]
fn rceil(amax: f32, e: &Element) -> i32 {
    gpucvt_kernels::ue8m0_rp_satfinite((amax / e.max).to_bits()) as i32 - 127
}

/// A finite non-negative magnitude as the `ceil` and `even` rules read it, whatever its
/// width: its binade and the bits below its leading one.
#[derive(Clone, Copy)]
struct Magnitude {
    zero: bool,
    /// floor(log2).
    log2: i32,
    /// The bits below the leading one, the first at bit 63.
    frac: u64,
}

impl Magnitude {
    /// Of the `f32` encoding `m` (sign clear, finite), subnormals included.
    fn of_f32(m: u32) -> Magnitude {
        let log2 = floor_log2(m);
        // The significand with its leading one, which is at bit `lead`.
        let (sig, lead) = if m >> 23 > 0 {
            ((m & 0x7f_ffff) | 0x80_0000, 23)
        } else {
            (m, (log2 + 149).max(0) as u32)
        };
        Magnitude {
            zero: m == 0,
            log2,
            frac: ((sig as u64) << (63 - lead)) << 1,
        }
    }

    /// Of `x` (finite, not negative), subnormals included.
    fn of_f64(x: f64) -> Magnitude {
        let b = x.to_bits();
        let (e, man) = ((b >> 52) as i32, b & ((1 << 52) - 1));
        let (sig, lead, log2) = if e > 0 {
            (man | 1 << 52, 52, e - 1023)
        } else {
            let lead = 63 - man.leading_zeros().min(63);
            (man, lead, lead as i32 - 1074)
        };
        Magnitude {
            zero: x == 0.0,
            log2,
            frac: (sig << (63 - lead)) << 1,
        }
    }

    /// The unclamped shared exponent of `rule` (`floor`, `ceil` or `even`).
    fn shared(self, rule: ScaleRule, e: &Element) -> i32 {
        if self.zero {
            return -127;
        }
        let up = match rule {
            ScaleRule::Floor | ScaleRule::Rceil => false,
            ScaleRule::Ceil => self.frac != 0,
            // Rounding to `mbits` bits (ties away) reaches the next binade when the top
            // `mbits` + 1 bits below the leading one are all ones.
            ScaleRule::Even => {
                let k = e.mbits + 1;
                k <= 64 && (!self.frac) >> (64 - k) == 0
            }
        };
        self.log2 + up as i32 - e.emax
    }
}

/// floor(log2) of the positive finite `f32` whose encoding is `m`, subnormals included,
/// without branches on `m`: the exponent field less the bias for a normal `m`, and for a
/// subnormal one (`m` < 2^23, converted to `f32` exactly) the exponent of `m` itself less
/// 127 + 149.
#[inline(always)]
pub fn floor_log2(m: u32) -> i32 {
    let e = (m >> 23) as i32;
    let sub = ((m as f32).to_bits() >> 23) as i32 - (127 + 149);
    if e > 0 {
        e - 127
    } else {
        sub
    }
}

/// `x` rounded to `bf16`, to nearest even (a NaN stays a NaN).
pub fn bf16_rn(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    ((b + round) >> 16) as u16
}

/// `x`, within [2^−6, 448] (e4m3's normal range), rounded to `e4m3`, to nearest even: the
/// mantissa rounded at its 3rd bit on the `f32` encoding.
#[inline(always)]
pub fn e4m3_rn(x: f32) -> u8 {
    let b = x.to_bits();
    let r = (b + 0x7_ffff + ((b >> 20) & 1)) & !0xf_ffff;
    let e = (r >> 23) + 7 - 127;
    ((e << 3) | ((r >> 20) & 7)) as u8
}

/// The value of the `e4m3` encoding `b` (sign bit clear, not NaN).
pub fn e4m3_value(b: u8) -> f32 {
    let (e, m) = ((b >> 3) as u32 & 0xf, (b & 7) as u32);
    if e == 0 {
        m as f32 / 512.0
    } else {
        f32::from_bits(((e + 120) << 23) | (m << 20))
    }
}

/// The value of a scale's bits in `format` (`ue8m0`: 2^(b − 127), NaN for 0xff).
pub fn scale_value(format: ScaleFormat, bits: u32) -> f64 {
    match format {
        ScaleFormat::Ue8m0 => {
            if bits == 0xff {
                f64::NAN
            } else {
                2f64.powi(bits as i32 - 127)
            }
        }
        ScaleFormat::Ue4m3 => {
            if bits & 0x7f == 0x7f {
                f64::NAN
            } else {
                e4m3_value(bits as u8) as f64
            }
        }
        ScaleFormat::F32 => f32::from_bits(bits) as f64,
        ScaleFormat::Bf16 => f32::from_bits(bits << 16) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpucvt_core::format::{E2M1, E2M3, E3M2, E4M3, E5M2, F32, UE8M0};
    /// The shared exponent of every rule by exact arithmetic on powers of two (no bit
    /// tricks): the least/greatest k with 2^k on the right side of the value, the
    /// value rounded by integer arithmetic on its significand for `even`, clamped.
    fn reference(rule: ScaleRule, e: &Element, amax: f64) -> i32 {
        let p = |k: i32| 2f64.powi(k);
        let floor = |x: f64| (-1200..1100).rev().find(|&k| p(k) <= x).unwrap();
        let ceil = |x: f64| (-1200..1100).find(|&k| p(k) >= x).unwrap();
        let shared = match rule {
            _ if amax == 0.0 && rule != ScaleRule::Rceil => -127,
            ScaleRule::Floor => floor(amax) - e.emax,
            ScaleRule::Ceil => ceil(amax) - e.emax,
            ScaleRule::Even => {
                // amax = sig × 2^(f − 52) with sig < 2^53 an integer; round sig to
                // mbits + 1 significant bits, ties away.
                let f = floor(amax);
                if f < -300 {
                    // At most 2^(f + 1) after rounding: far below every scale.
                    return -127;
                }
                let drop = 52 - e.mbits as i32;
                let sig = (amax / p(f - 52)) as u128;
                let unit = 1u128 << drop;
                let r = (sig + unit / 2) / unit * unit;
                floor(r as f64 * p(f - 52)) - e.emax
            }
            ScaleRule::Rceil => {
                let q = (amax as f32 / e.max) as f64;
                if q == 0.0 {
                    -127
                } else {
                    ceil(q)
                }
            }
        };
        shared.clamp(-127, 127)
    }

    #[test]
    fn ue8m0_rules_equal_the_reference() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut ms: Vec<u32> = vec![0, 1, 2, 3, 0x7f_ffff, 0x80_0000, 0x7f7f_ffff];
        for e in 0..255u32 {
            for d in [
                0u32, 1, 0x3f_ffff, 0x40_0000, 0x40_0001, 0x5f_ffff, 0x60_0000, 0x6f_ffff,
                0x70_0000, 0x77_ffff, 0x78_0000, 0x7f_fffe, 0x7f_ffff,
            ] {
                ms.push((e << 23) | d);
            }
            for _ in 0..8 {
                ms.push((e << 23) | (next() as u32 & 0x7f_ffff));
            }
        }
        let elems: Vec<Element> = [E4M3, E5M2, E2M3, E3M2, E2M1, UE8M0]
            .iter()
            .map(Element::of_max)
            .collect();
        let mut n = 0;
        for e in &elems {
            for rule in ScaleRule::ALL {
                for &m in &ms {
                    let x = f32::from_bits(m) as f64;
                    let want = reference(rule, e, x);
                    assert_eq!(ue8m0_shared(rule, e, m), want, "{rule:?} {e:?} {m:#x}");
                    assert_eq!(
                        ue8m0_shared_f64(rule, e, x),
                        want,
                        "f64 {rule:?} {e:?} {m:#x}"
                    );
                    n += 1;
                }
                // f64 magnitudes between and beyond the f32 values.
                for _ in 0..2000 {
                    let b = next() % 0x7fe0_0000_0000_0000;
                    let x = f64::from_bits(b);
                    assert_eq!(
                        ue8m0_shared_f64(rule, e, x),
                        reference(rule, e, x),
                        "{rule:?} {e:?} {x:e}"
                    );
                }
                for x in [
                    1e-320,
                    2f64.powi(-1074),
                    2f64.powi(128),
                    3e38 * 2.0,
                    1e300,
                    f64::MAX,
                    448.0 * (1.0 + 2f64.powi(-40)),
                ] {
                    assert_eq!(
                        ue8m0_shared_f64(rule, e, x),
                        reference(rule, e, x),
                        "{rule:?} {e:?} {x:e}"
                    );
                }
            }
        }
        assert!(n > 100_000);
    }

    use gpucvt_core::{Conversion, Policy, Rounding};

    /// The bit tricks against the exact core: every e4m3 value, and rounding at every
    /// binade and mantissa with the bits below the kept ones at and around the tie.
    #[test]
    fn e4m3_bits_equal_the_core() {
        for b in 0..0x7fu8 {
            assert_eq!(
                e4m3_value(b) as f64,
                E4M3.decode(b as u64).to_f64_lossy(),
                "{b:#x}"
            );
        }
        let core = Conversion::new(F32, E4M3, Rounding::RN, Policy::default());
        let mut n = 0;
        for e in 121u32..=135 {
            for top in 0..8u32 {
                for low in [
                    0, 1, 0x7_fffe, 0x7_ffff, 0x8_0000, 0x8_0001, 0xf_fffe, 0xf_ffff, 0x5_5555,
                ] {
                    let x = f32::from_bits((e << 23) | (top << 20) | low);
                    if !(E4M3_MIN_NORMAL..=E4M3_MAX).contains(&x) {
                        continue;
                    }
                    assert_eq!(
                        e4m3_rn(x) as u64,
                        core.apply(x.to_bits() as u64).bits,
                        "{x:e}"
                    );
                    n += 1;
                }
            }
        }
        assert!(n > 1000);
    }
}
