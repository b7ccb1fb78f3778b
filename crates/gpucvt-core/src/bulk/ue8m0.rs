//! `f32` → `ue8m0` toward zero or toward +∞ (PTX `cvt.{rz,rp}.ue8m0x2.f32`): the exponent
//! field, plus one when rounding up a value with a non-zero fraction.

use crate::convert::{NanResult, Overflow, Policy};
use crate::format::{Format, UE8M0};
use crate::round::{Direction, Rounding};

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

#[inline(always)]
pub(crate) fn convert<const UP: bool>(p: &Params, x: u32) -> u32 {
    let abs = x & 0x7fff_ffff;
    let e = abs >> 23;
    let frac = if p.ftz_in && e == 0 {
        0
    } else {
        abs & 0x007f_ffff
    };
    // Round up a value with a fraction, unless it is at or below 2^-127 (0x00 is the
    // smallest value: nothing rounds below it).
    let up = UP && frac != 0 && (e != 0 || frac > 0x0040_0000);
    let r = e + up as u32;
    let over = r == 255;
    let is_nan = abs > 0x7f80_0000;
    let is_inf = abs == 0x7f80_0000;
    let sat_value = if p.saturate_overflow { 0xfe } else { 0xff };
    let inf_value = if p.satfinite { 0xfe } else { 0xff };
    if is_nan {
        0xff
    } else if is_inf {
        inf_value
    } else if over {
        sat_value
    } else {
        r
    }
}

#[inline(always)]
pub(crate) fn run<const UP: bool, D: Copy>(
    p: &Params,
    src: &[u32],
    dst: &mut [D],
    cast: impl Fn(u32) -> D,
) {
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = cast(convert::<UP>(p, x));
    }
}
