//! The integer kernel (`portable/int.rs`) compiled for each instruction set, with the
//! AVX-512 DQ formulation of its 64-bit results.

use super::InstructionSet;
use crate::portable::int::{
    integral, is_nan, run32, run64, Knobs, Params, NARROW, RM, RN, RNA, RP, RZ, S32, S64, U32, U64,
};

/// [`run64`] for AVX-512 DQ, which converts 64-bit lanes from `f32` in one instruction:
/// the value rounded (toward zero: by the truncation itself) and raised to the lower bound
/// (`.relu`'s 0), then truncated with saturation at 2^63 or 2^64 (`super::trunc_i64`);
/// once rounded, it truncates exactly.
#[inline(always)]
fn run64_dq<const M: u8, const U: bool, D: crate::Word>(src: &[u32], dst: &mut [D], k: Knobs) {
    // To nearest, down and up into `u64` words: the rounding in the conversion instruction
    // (`super::round64`), eight at a time; the rest here.
    let done = match D::as_u64_slice_mut(dst) {
        Some(d) if matches!(M, RN | RM | RP) => super::round64::<M, U>(src, d, &k),
        _ => 0,
    };
    let (src, dst) = (&src[done..], &mut dst[done..]);
    for (d, &b) in dst.iter_mut().zip(src) {
        // Toward zero, the truncating conversion rounds by itself (and flushing a subnormal
        // input to zero first changes nothing: either way the integer is 0).
        let r = if M == RZ {
            f32::from_bits(b)
        } else {
            integral::<M>(b, &k)
        };
        let r = if r < k.lo { k.lo } else { r };
        let v = if U {
            super::trunc_u64(r)
        } else {
            super::trunc_i64(r) as u64
        };
        *d = D::from_u64(if is_nan(b) { k.nan } else { v });
    }
}

/// Runs the kernel of `p` (through the best instruction set, `super::simd`).
pub(crate) fn convert<D: crate::Word>(p: &Params, src: &[u32], dst: &mut [D]) {
    convert_isa(p, InstructionSet::Avx512, src, dst);
}

/// [`convert`] through the best instruction set up to `isa` (see
/// [`super::vectorized_isa`]).
pub(crate) fn convert_isa<D: crate::Word>(
    p: &Params,
    isa: InstructionSet,
    src: &[u32],
    dst: &mut [D],
) {
    macro_rules! job {
        ($m:expr, $k:expr) => {
            super::vectorized_isa(
                isa,
                Job::<$m, $k, D> {
                    src,
                    dst,
                    k: p.knobs,
                },
            )
        };
    }
    macro_rules! modes {
        ($k:expr) => {
            match p.mode {
                RN => job!(RN, $k),
                RNA => job!(RNA, $k),
                RZ => job!(RZ, $k),
                RM => job!(RM, $k),
                _ => job!(RP, $k),
            }
        };
    }
    match p.kind {
        NARROW => modes!(NARROW),
        S32 => modes!(S32),
        U32 => modes!(U32),
        S64 => modes!(S64),
        _ => modes!(U64),
    }
}

/// The kernel for rounding mode `M` and destination kind `K`, as work for
/// [`super::vectorized_isa`].
struct Job<'a, const M: u8, const K: u8, D> {
    src: &'a [u32],
    dst: &'a mut [D],
    k: Knobs,
}

impl<const M: u8, const K: u8, D: crate::Word> super::Vectorizable for Job<'_, M, K, D> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        match K {
            S64 => run64::<M, false, D>(self.src, self.dst, self.k),
            U64 => run64::<M, true, D>(self.src, self.dst, self.k),
            _ => run32::<M, K, D>(self.src, self.dst, self.k),
        }
    }

    #[inline(always)]
    fn run_avx512(self) {
        match K {
            S64 => run64_dq::<M, false, D>(self.src, self.dst, self.k),
            U64 => run64_dq::<M, true, D>(self.src, self.dst, self.k),
            _ => self.run(),
        }
    }
}
