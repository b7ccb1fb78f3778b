//! `f32` → `ue8m0` toward zero or toward +∞ (PTX `cvt.{rz,rp}.ue8m0x2.f32`): the exponent
//! field, plus one when rounding up a value with a non-zero fraction.

use gpucvt_core::convert::{NanResult, Overflow, Policy};
use gpucvt_core::format::{Format, UE8M0};
use gpucvt_core::round::{Direction, Rounding};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub up: bool,
    satfinite: bool,
    saturate_overflow: bool,
    ftz_in: bool,
}

impl Params {
    pub(crate) fn new(dst: &Format, rounding: Rounding, p: &Policy) -> Option<Params> {
        if *dst != UE8M0
            || rounding.integral
            || p.sat
            || p.relu
            || p.flush_outputs
            || p.scale != 0
            || p.nan != NanResult::Canonical
            || !p.no_nan.is_default()
            || p.lowest_binade_up
            || p.unrepresentable_nan
            // Overflow to infinity whatever the direction: the exact core's.
            || p.overflow == Overflow::Infinite
        {
            return None;
        }
        let up = match rounding.direction {
            Direction::TowardZero => false,
            Direction::Up => true,
            _ => return None,
        };
        Some(Params {
            up,
            satfinite: p.satfinite,
            saturate_overflow: p.satfinite || p.overflow == Overflow::Saturate,
            ftz_in: p.flush_inputs,
        })
    }
}

/// Policy bit: `.satfinite`.
pub(crate) const SF: u8 = 1;
/// Policy bit: overflows saturate (without `.satfinite`: infinities stay NaN-like `0xff`).
pub(crate) const OVSAT: u8 = 2;
/// Policy bit: subnormal inputs flushed to zero.
pub(crate) const FTZ: u8 = 4;

impl Params {
    /// The policy bits of this conversion.
    pub(crate) fn bits(&self) -> u8 {
        let mut p = 0;
        if self.satfinite {
            p |= SF;
        } else if self.saturate_overflow {
            p |= OVSAT;
        }
        if self.ftz_in {
            p |= FTZ;
        }
        p
    }
}

/// Converts one `f32` bit pattern; `P` holds the policy bits above.
#[inline(always)]
pub(crate) fn convert<const UP: bool, const P: u8>(x: u32) -> u32 {
    let mut abs = x & 0x7fff_ffff;
    if P & FTZ != 0 && abs < 0x0080_0000 {
        abs = 0;
    }
    if UP && P & OVSAT == 0 {
        // Rounding up without the overflow policy's select: the pattern plus all ones below
        // the exponent field carries into it exactly when the fraction is not zero, so its
        // exponent field is the result; ∞ and overflows give 255 (`0x7fff_ffff` and below),
        // NaNs 256 (their sum is `0x8000_0000` to `0x807f_fffe`, negative as a signed
        // number). `.satfinite` clamps the sum, as a signed number, to the largest that gives
        // 0xfe: ∞ and overflows come down to it, NaNs stay negative. Then 256 becomes 0xff
        // in the final clamp. At or below 2^-127 (`0x0040_0000`) the result is 0x00, the
        // smallest value (nothing rounds below it); every normal input is above it. Five
        // vector operations (AVX-512: `vpandd`, `vpaddd`, `vpminsd`, `vpcmpgtd`, a masked
        // `vpsrld`) and a saturating narrowing `vpmovusdb`. (With `.satfinite` the AVX2 and
        // AVX-512 kernels of `isa/` take four, by a floating-point doubling instead:
        // `ue8m0_groups_avx2`.)
        let mut t = abs.wrapping_add(0x007f_ffff);
        if P & SF != 0 {
            t = (t as i32).min(0x7f7f_ffff) as u32;
        }
        let r = if abs > 0x0040_0000 { t >> 23 } else { 0 };
        return r.min(0xff);
    }
    let e = abs >> 23;
    let frac = abs & 0x007f_ffff;
    // Round up a value with a fraction, unless it is at or below 2^-127 (0x00 is the
    // smallest value: nothing rounds below it); every normal input is above 2^-127.
    let up = UP && frac != 0 && abs > 0x0040_0000;
    let r = e + up as u32;
    // 255 is ∞ or an overflow (or NaN, up to 256).
    if P & SF != 0 {
        // ∞ and overflows give 0xfe, NaN 0xff.
        if abs > 0x7f80_0000 {
            0xff
        } else {
            r.min(0xfe)
        }
    } else if P & OVSAT != 0 {
        // Overflows give 0xfe, ∞ and NaN 0xff.
        if abs >= 0x7f80_0000 {
            0xff
        } else {
            r.min(0xfe)
        }
    } else {
        r.min(0xff)
    }
}

#[inline(always)]
pub(crate) fn run<const UP: bool, const P: u8, D: crate::Word>(src: &[u32], dst: &mut [D]) {
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = D::from_u32(convert::<UP, P>(x));
    }
}
