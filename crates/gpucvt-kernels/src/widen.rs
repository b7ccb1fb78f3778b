//! Sources of at most 16 bits through the `f32` kernels: their exact widening to `f32`, as
//! a table, for conversions that a table of results cannot serve (stochastic rounding takes a
//! random value per element; MX block scaling scales each element first).

use gpucvt_core::format::{Format, F32};
use gpucvt_core::{Conversion, Rounding};

/// The `f32` bit pattern of every encoding of a source format of at most 16 bits, and which
/// encodings must go through the exact core instead of an `f32` kernel: where the widening
/// is not exact, a subnormal or NaN source (whose payload or flush rules are the source's
/// own), or an `f32` subnormal.
///
/// ```
/// use gpucvt_core::format::{BF16, F16};
/// use gpucvt_kernels::Widening;
/// let w = Widening::of(&F16);
/// assert_eq!(w.bits[0x3c00], 1.0f32.to_bits());
/// assert!(!w.exact[0x3c00]);
/// assert!(w.exact[0x0001]); // an f16 subnormal
/// assert!(w.exact[0x7e00]); // NaN
/// assert_eq!(Widening::of(&BF16).bits.len(), 1 << 16);
/// ```
#[derive(Clone, Debug)]
pub struct Widening {
    /// The `f32` word of each encoding, by bit pattern.
    pub bits: Box<[u32]>,
    /// Whether an encoding goes through the exact core instead.
    pub exact: Box<[bool]>,
}

impl Widening {
    /// The table of `src` (at most 16 bits wide).
    pub fn of(src: &Format) -> Widening {
        let to32 = Conversion::new(*src, F32, Rounding::RZ, Default::default());
        let n = 1usize << src.width().min(16);
        let mut bits = Vec::with_capacity(n);
        let mut exact = Vec::with_capacity(n);
        for b in 0..n as u64 {
            let out = to32.apply(b);
            let w = out.bits as u32;
            bits.push(w);
            exact.push(
                !out.flags.is_empty()
                    || src.is_subnormal(b)
                    || src.decode(b).is_nan()
                    || (w & 0x7f80_0000 == 0 && w & 0x007f_ffff != 0),
            );
        }
        Widening {
            bits: bits.into(),
            exact: exact.into(),
        }
    }
}
