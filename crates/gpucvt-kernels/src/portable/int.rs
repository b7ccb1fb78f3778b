//! `f32` → integer (PTX `cvt.{rni,rzi,rmi,rpi}[.ftz][.sat].{s,u}{8,16,32,64}.f32`), branch
//! free: round in `f32` (rounding an `f32` to an integral `f32` is exact), clamp in `f32` to
//! bounds that are themselves `f32` values, convert, and put the policy's value in place of
//! NaN.
//!
//! The bounds: a destination of at most 16 bits has both ends exactly representable, so the
//! clamped value converts exactly. The 32- and 64-bit ends `2^31 − 1`, `2^32 − 1`, … are not
//! `f32` values; there the upper bound is the power of two above them, which is replaced by
//! the largest integer (every integral `f32` below that power of two is in range).

use gpucvt_core::convert::{IntNan, IntOverflow, Policy};
use gpucvt_core::format::{Format, Layout};
use gpucvt_core::round::{Direction, Rounding};

// The rounding modes (the const parameter `M` of `run32` and `run64`) are `small.rs`'s.
pub(crate) use super::small::{RM, RN, RNA, RP, RZ};

/// Destination kinds (the const parameter `K` of `isa/int_dispatch.rs`'s `Job`): 8- and 16-bit integers.
pub(crate) const NARROW: u8 = 0;
/// `s32`.
pub(crate) const S32: u8 = 1;
/// `u32`.
pub(crate) const U32: u8 = 2;
/// `s64`.
pub(crate) const S64: u8 = 3;
/// `u64`.
pub(crate) const U64: u8 = 4;

/// The run-time parameters of a kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Knobs {
    /// ANDed into subnormal inputs: the sign bit alone with `.ftz` (they become zeros),
    /// every bit otherwise.
    pub sub_mask: u32,
    /// The clamp bounds (integral `f32` values).
    pub lo: f32,
    /// See `lo`.
    pub hi: f32,
    /// What NaN becomes.
    pub nan: u64,
    /// The destination's width as a mask.
    pub mask: u64,
}

/// A conversion the kernel handles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Params {
    /// Rounding mode, one of the constants above.
    pub mode: u8,
    /// Destination kind, one of the constants above.
    pub kind: u8,
    /// Run-time parameters.
    pub knobs: Knobs,
}

impl Params {
    /// The kernel's parameters for `f32` → `dst`, if it handles the conversion: an 8-, 16-,
    /// 32- or 64-bit integer destination, a deterministic rounding, no scaling and no
    /// wrapping overflow.
    pub(crate) fn new(dst: &Format, rounding: Rounding, p: &Policy) -> Option<Params> {
        let Layout::Fixed(l) = dst.layout else {
            return None;
        };
        if l.frac_bits != 0
            || !matches!(l.bits, 8 | 16 | 32 | 64)
            || p.scale != 0
            || (p.int_overflow == IntOverflow::Wrap && !p.sat)
        {
            return None;
        }
        let mode = match rounding.direction {
            Direction::NearestEven => RN,
            Direction::NearestAway => RNA,
            Direction::TowardZero => RZ,
            Direction::Down => RM,
            Direction::Up => RP,
            Direction::Stochastic { .. } => return None,
        };
        let bits = l.bits as i32;
        let kind = match (l.signed, l.bits) {
            (true, 64) => S64,
            (false, 64) => U64,
            (true, 32) => S32,
            (false, 32) => U32,
            _ => NARROW,
        };
        // Powers of two, so exact in f32.
        let pow2 = |e: i32| f32::from_bits(((127 + e) as u32) << 23);
        let (lo, hi) = match (l.signed, l.bits) {
            (true, 8 | 16) => (-pow2(bits - 1), pow2(bits - 1) - 1.0),
            (false, 8 | 16) => (0.0, pow2(bits) - 1.0),
            // Saturated by the conversion.
            (true, _) => (-pow2(bits - 1), pow2(bits - 1)),
            (false, _) => (0.0, pow2(bits)),
        };
        let lo = if p.relu { 0.0 } else { lo };
        let nan = if p.satfinite {
            dst.max_finite_bits()
        } else {
            match p.int_nan {
                IntNan::Zero => 0,
                IntNan::HighBit => 1u64 << (l.bits - 1),
            }
        };
        Some(Params {
            mode,
            kind,
            knobs: Knobs {
                sub_mask: if p.flush_inputs {
                    0x8000_0000
                } else {
                    u32::MAX
                },
                lo,
                hi,
                nan,
                mask: dst.mask(),
            },
        })
    }
}

/// The input after `.ftz`, rounded to an integral value; NaN stays NaN.
#[inline(always)]
pub(crate) fn integral<const M: u8>(b: u32, k: &Knobs) -> f32 {
    let b = b & if b & 0x7f80_0000 == 0 {
        k.sub_mask
    } else {
        u32::MAX
    };
    let x = f32::from_bits(b);
    match M {
        RN => x.round_ties_even(),
        RNA => x.round(),
        RZ => x.trunc(),
        RM => x.floor(),
        _ => x.ceil(),
    }
}

/// [`integral`], clamped; NaN stays NaN.
#[inline(always)]
pub(crate) fn rounded<const M: u8>(b: u32, k: &Knobs) -> f32 {
    let r = integral::<M>(b, k);
    // Compare and select (not `max`/`min`, which need extra work for NaN).
    let r = if r < k.lo { k.lo } else { r };
    if r > k.hi {
        k.hi
    } else {
        r
    }
}

#[inline(always)]
pub(crate) fn is_nan(b: u32) -> bool {
    b & 0x7fff_ffff > 0x7f80_0000
}

/// An integral `f32` of magnitude at most 2^22 as a two's complement integer: adding
/// 1.5 · 2^23 (exactly) puts it in the low bits of the mantissa. (Rust's `as` conversions
/// saturate, which compilers turn into scalar code.)
#[inline(always)]
fn small_int(f: f32) -> u32 {
    (f + 12_582_912.0).to_bits().wrapping_sub(0x4b40_0000)
}

/// Converts into integers of at most 32 bits (kind `K`).
#[inline(always)]
pub(crate) fn run32<const M: u8, const K: u8, D: crate::Word>(
    src: &[u32],
    dst: &mut [D],
    k: Knobs,
) {
    let (nan, mask) = (k.nan as u32, k.mask as u32);
    for (d, &b) in dst.iter_mut().zip(src) {
        let r = rounded::<M>(b, &k);
        let v = if K != NARROW {
            // 32-bit destinations: the upper bound is 2^31 or 2^32, which saturates.
            // Two halves of 16 bits, each exact.
            let h = (r * (1.0 / 65536.0)).trunc();
            let l = r - h * 65536.0;
            let v = (small_int(h) << 16).wrapping_add(small_int(l));
            let top = if K == U32 { u32::MAX } else { i32::MAX as u32 };
            if r >= k.hi {
                top
            } else {
                v
            }
        } else {
            small_int(r)
        };
        *d = D::from_u32(if is_nan(b) { nan } else { v & mask });
    }
}

/// An integral `f32` below 2^64 in magnitude as a 64-bit two's complement integer (wrapping):
/// its significand shifted into place, then negated if negative. Being integral, a value
/// below 2^23 loses only zero bits to the right shift; zeros (the only integral `f32`s with
/// an exponent below 127) have no significand. Integer shifts and a select in 64-bit lanes,
/// where Rust's saturating `as` would compile to scalar code.
#[inline(always)]
pub(crate) fn int64(r: f32) -> u64 {
    let b = r.to_bits();
    let e = (b >> 23) & 0xff;
    let m = u64::from(b & 0x7f_ffff | if e == 0 { 0 } else { 0x80_0000 });
    // r = m · 2^(e − 150).
    let v = if e >= 150 {
        m << (e.wrapping_sub(150) & 63)
    } else {
        m >> (150u32.wrapping_sub(e) & 63)
    };
    if b >> 31 != 0 {
        v.wrapping_neg()
    } else {
        v
    }
}

/// Converts into 64-bit integers, unsigned if `U`. The upper bound is 2^63 or 2^64, which
/// saturates; every other clamped value is exact (`int64`).
#[inline(always)]
pub(crate) fn run64<const M: u8, const U: bool, D: crate::Word>(
    src: &[u32],
    dst: &mut [D],
    k: Knobs,
) {
    let top = if U { u64::MAX } else { i64::MAX as u64 };
    for (d, &b) in dst.iter_mut().zip(src) {
        let r = rounded::<M>(b, &k);
        let v = if r >= k.hi { top } else { int64(r) };
        *d = D::from_u64(if is_nan(b) { k.nan } else { v });
    }
}

#[cfg(test)]
mod tests;
