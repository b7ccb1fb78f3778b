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
        let Layout::Float(l) = f.layout else {
            return None;
        };
        let max = f.decode(f.max_finite_bits()).to_f64_lossy();
        Some(Element {
            max: max as f32,
            emax: max.log2().floor() as i32,
            mbits: l.man_bits,
        })
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
pub fn ue8m0_shared(rule: ScaleRule, e: &Element, m: u32) -> i32 {
    let shared = match rule {
        ScaleRule::Floor => {
            if m == 0 {
                -127
            } else {
                floor_log2(m) - e.emax
            }
        }
        ScaleRule::Ceil => {
            if m == 0 {
                -127
            } else {
                let pow2 = if m >> 23 > 0 {
                    m & 0x7f_ffff == 0
                } else {
                    m & (m - 1) == 0
                };
                floor_log2(m) + (!pow2) as i32 - e.emax
            }
        }
        ScaleRule::Even => {
            let add = 1u32 << (22 - e.mbits.min(22));
            let r = (m + add) & 0x7f80_0000;
            (r >> 23) as i32 - 127 - e.emax
        }
        ScaleRule::Rceil => {
            let q = f32::from_bits(m) / e.max;
            gpucvt_kernels::ue8m0_rp_satfinite(q.to_bits()) as i32 - 127
        }
    };
    shared.clamp(-127, 127)
}

/// floor(log2) of the positive finite `f32` whose encoding is `m`, subnormals included.
pub fn floor_log2(m: u32) -> i32 {
    let e = (m >> 23) as i32;
    if e > 0 {
        e - 127
    } else {
        31 - m.leading_zeros() as i32 - 149
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
    use gpucvt_core::format::{E4M3, F32};
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
