//! Branch-free `f32` → small-float conversion, one element at a time, written so that the
//! compiler vectorizes the loops around it (every branch is a select; the only per-lane
//! variable shift is the rounding shift, which AVX2 and AVX-512 have).
//!
//! It covers destinations with IEEE-style subnormals and at most 8 exponent bits (`f16`,
//! `bf16`, `tf32`, `e4m3`, `e5m2`, `e2m3`, `e3m2`, `e2m1`, `ue4m3`, `ue5m3`, and ml_dtypes'
//! `e4m3ieee`, `e3m4` and the fnuz formats, whose one NaN is `Spec::nan_full`) in the
//! directions `rn rna rz rm rp rs`, with `.sat`, `.satfinite`, `.relu`, `.pzo`, input
//! flushing and saturating overflow. Everything else goes through the exact core. The exact
//! core is the reference: `tests` below and `gpucvt verify` compare the two.

use gpucvt_core::convert::{NanResult, Overflow, Policy};
use gpucvt_core::format::{Format, Layout, Specials, ZeroExponent};
use gpucvt_core::round::{Direction, Rounding};

use super::spec::Spec;

pub(crate) const RN: u8 = 0;
pub(crate) const RNA: u8 = 1;
pub(crate) const RZ: u8 = 2;
pub(crate) const RM: u8 = 3;
pub(crate) const RP: u8 = 4;
pub(crate) const RS: u8 = 5;

/// Everything the element function needs, precomputed from a format and a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub(crate) mode: u8,
    /// The destination format.
    pub(crate) spec: Spec,
    pub(crate) sat: bool,
    /// `.satfinite` or `Overflow::Saturate`: overflows give the largest finite value.
    pub(crate) saturate_overflow: bool,
    /// `.satfinite`: infinities give the largest finite value.
    pub(crate) satfinite: bool,
    pub(crate) relu: bool,
    pub(crate) pzo: bool,
    pub(crate) ftz_in: bool,
    pub(crate) rs_width: u32,
}

impl Params {
    /// The fast path's parameters, or `None` when the conversion is outside what it covers.
    pub(crate) fn new(dst: &Format, rounding: Rounding, p: &Policy) -> Option<Params> {
        let Layout::Float(l) = dst.layout else {
            return None;
        };
        if l.zero_exponent != ZeroExponent::Subnormal
            || l.exp_bits > 8
            || l.man_bits > 22
            || l.man_bits == 0
            || rounding.integral
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
        let (mode, rs_width) = match rounding.direction {
            Direction::NearestEven => (RN, 0),
            Direction::NearestAway => (RNA, 0),
            Direction::TowardZero => (RZ, 0),
            Direction::Down => (RM, 0),
            Direction::Up => (RP, 0),
            Direction::Stochastic { width, .. } => (RS, width.clamp(1, 32)),
        };
        Some(Params {
            mode,
            spec: Spec::of(dst),
            sat: p.sat,
            saturate_overflow: p.satfinite || p.overflow == Overflow::Saturate,
            satfinite: p.satfinite,
            relu: p.relu,
            // A destination without −0 (the fnuz rule) always turns a zero result into +0.
            pzo: p.positive_zero || l.specials == Specials::Fnuz,
            ftz_in: p.flush_inputs,
            rs_width,
        })
    }
}

/// Converts one `f32` bit pattern. `MODE` is one of the constants above; `rnd` is the random
/// value for `RS`.
#[inline(always)]
pub(crate) fn convert<const MODE: u8>(p: &Params, x: u32, rnd: u32) -> u32 {
    let x = if p.sat {
        // Clamp to [0, 1] first: NaN and every value <= 0 (also -0) give +0.
        let abs = x & 0x7fff_ffff;
        if abs > 0x7f80_0000 || x >> 31 != 0 {
            0
        } else if x > 0x3f80_0000 {
            0x3f80_0000
        } else {
            x
        }
    } else {
        x
    };
    let sign = if p.spec.signed { x >> 31 } else { 0 };
    let abs = x & 0x7fff_ffff;
    let e = abs >> 23;
    let is_nan = abs > 0x7f80_0000;
    let is_inf = abs == 0x7f80_0000;
    let sub_in = e == 0;
    let frac = if p.ftz_in && sub_in {
        0
    } else {
        abs & 0x007f_ffff
    };
    let mant = frac | if sub_in { 0 } else { 0x0080_0000 };
    let e_eff = e.max(1) as i32;
    let m = p.spec.man as i32;
    // Bits of the significand below the destination's grid step.
    let s_full = (23 - m).max(151 - p.spec.bias - m - e_eff);
    let s = s_full.min(31) as u32;
    let kept = mant >> s;
    let rem = mant & ((1u32 << s) - 1);
    let half = 1u32 << (s - 1);
    let neg = sign == 1;
    let inc: u32 = match MODE {
        RN => ((rem > half) | ((rem == half) & (kept & 1 == 1))) as u32,
        RNA => (rem >= half) as u32,
        RZ => 0,
        RP => ((rem != 0) & !neg) as u32,
        RM => ((rem != 0) & neg) as u32,
        _ => {
            // The discarded bits as a `w`-bit fraction of the grid step (`rem` < 2^24, so
            // shifting right by 31 already gives zero).
            let w = p.rs_width;
            let f = if s_full >= w as i32 {
                (rem >> (s_full - w as i32).min(31)) as u64
            } else {
                (rem as u64) << (w - s)
            };
            ((f + (rnd as u64 & ((1u64 << w) - 1))) >> w) as u32
        }
    };
    let eb = (e_eff - 127 + p.spec.bias).max(1) as u32;
    let rounded = ((eb - 1) << p.spec.man) + kept + inc;
    let to_inf = match MODE {
        RN | RNA => true,
        RZ => false,
        RP => !neg,
        RM => neg,
        _ => inc == 1,
    };
    // What "infinity" is in this format: infinity, else NaN, else the largest finite value.
    let inf_mag = if p.spec.has_inf {
        p.spec.inf_enc
    } else {
        p.spec.max_enc
    };
    let inf_is_nan = !p.spec.has_inf && p.spec.has_nan;
    let over = rounded > p.spec.max_enc;
    let over_inf = over & to_inf & !p.saturate_overflow;
    let in_inf = is_inf & !p.satfinite;
    let mut mag = if over | is_inf {
        p.spec.max_enc
    } else {
        rounded
    };
    mag = if over_inf | in_inf { inf_mag } else { mag };
    let relu_zero = p.relu & neg & !is_nan;
    let nan_out = is_nan | ((over_inf | in_inf) & inf_is_nan & !relu_zero);
    let mag = if relu_zero { 0 } else { mag };
    let sign = if relu_zero | (p.pzo & (mag == 0)) {
        0
    } else {
        sign
    };
    let full = (mag << p.spec.pad) | (sign << p.spec.sign_pos);
    if nan_out {
        p.spec.nan_full
    } else {
        full
    }
}

/// Converts a slice; `rnd` (for `RS`) has one value per element or is empty.
#[inline(always)]
pub(crate) fn run<const MODE: u8, D: Copy>(
    p: &Params,
    src: &[u32],
    dst: &mut [D],
    rnd: &[u32],
    cast: impl Fn(u32) -> D,
) {
    if MODE == RS {
        for ((d, &x), &r) in dst.iter_mut().zip(src).zip(rnd) {
            *d = cast(convert::<MODE>(p, x, r));
        }
    } else {
        for (d, &x) in dst.iter_mut().zip(src) {
            *d = cast(convert::<MODE>(p, x, 0));
        }
    }
}
