//! Converting one chunk of a tensor: unpacking, MX block scales, the conversion kernels,
//! packing, and the error statistics — in parallel over sub-chunks.
//!
//! - `plan`: `Plan`, what converts one tensor's elements, and the chunk loop (sub-chunks
//!   in parallel, each unpacked, scaled, converted, packed and counted).
//! - `io`: where a chunk's bytes come from (positioned file reads) and the per-thread
//!   scratch buffers.
//! - `pack`: little-endian words and the packed layouts (FP4 nibbles, FP6 bit streams).
//! - `decode`: encodings decoded to values and classes for the statistics (tables and
//!   arithmetic decoders).
//! - `mx`: the fused MX path: block maxima, scales (by `scaling::rule`) and the scaling of
//!   `f32` words by them in one pass.
//! - `quantizer`: [`Quantizer`], every other block scaling (tiles, rows, the tensor, `f32`,
//!   `bf16` and `ue4m3` scales, the second level, swizzled scales) on `f32` values, in
//!   memory or streamed in chunks of whole tiles; `fast`: its vectorized scaling and
//!   statistics.
//! - `stats`: the error statistics: the general loop, the fast `f32` paths
//!   (`stats::lanes`, and SSE2 on `x86_64`).
//! - `random`: the random values of stochastic rounding.

pub(crate) mod decode;
mod fast;
mod io;
pub(crate) mod mx;
pub(crate) mod pack;
mod plan;
mod quantizer;
mod random;
pub(crate) mod stats;
#[cfg(test)]
mod tests;

use crate::scaling::{BlockScaling, ScaleRule};
pub(crate) use io::read_exact_at;
pub(crate) use plan::Plan;
pub use quantizer::Quantizer;
pub(crate) use quantizer::{Maxima, Source, StreamBuffers};

/// Elements per unit of parallel work (a multiple of every block size is chosen around it).
pub(crate) const SUB_ELEMENTS: u64 = 1 << 16;

pub use gpucvt_core::random::{random_word, splitmix64};

/// `2^k` (exact; `k` within ±(127 + 1023)).
#[inline(always)]
pub(crate) fn exp2i(k: i32) -> f64 {
    if (-1022..=1023).contains(&k) {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        pow2(k)
    }
}

fn pow2(k: i32) -> f64 {
    // k is within ±(127 + 1023): split to stay in range.
    let half = k / 2;
    f64::powi(2.0, half) * f64::powi(2.0, k - half)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub(crate) fn lcm(a: u64, b: u64) -> u64 {
    a / gcd(a, b) * b
}

/// How a tensor's elements are block-scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scaled {
    No,
    /// MX: `ue8m0` scales of blocks of this size along the last axis, streamed by the
    /// engine.
    Mx(u64, ScaleRule),
    /// Any other block scaling: the tensor streamed through [`crate::chunk::Quantizer`].
    General(BlockScaling),
}

impl Scaled {
    /// The engine's path for a tensor of `src` elements and `shape` converted by `conv`
    /// under the block scaling `b`: MX's fused fast path for `ue8m0` scales of blocks along
    /// the last axis, row-major (any float source); else the [`Quantizer`], which computes
    /// the scales on `f32` values. A tensor neither takes is `Err` with the reason.
    pub(crate) fn choose(
        src: &gpucvt_core::format::Format,
        conv: &gpucvt_core::convert::Conversion,
        b: BlockScaling,
        shape: &[u64],
    ) -> std::result::Result<Scaled, String> {
        match b.block {
            crate::scaling::Block::Len(size)
                if b.is_mx() && b.layout == crate::scaling::ScaleLayout::Rows =>
            {
                Ok(Scaled::Mx(size, b.rule))
            }
            _ => {
                use gpucvt_core::format::{BF16, F16, F32};
                if ![F32, BF16, F16].contains(src) {
                    return Err(format!(
                        "these block scales are computed on f32 values: f32, bf16 and f16 data only, not {src}"
                    ));
                }
                let c32 = gpucvt_core::convert::Conversion { src: F32, ..*conv };
                Quantizer::check(&c32, &b, shape).map_err(|e| e.to_string())?;
                Ok(Scaled::General(b))
            }
        }
    }

    /// The engine's block scaling.
    pub(crate) fn mx(self) -> Option<(u64, ScaleRule)> {
        match self {
            Scaled::Mx(size, rule) => Some((size, rule)),
            _ => None,
        }
    }

    /// The block scaling, whichever path does it.
    pub(crate) fn scaling(self) -> Option<BlockScaling> {
        match self {
            Scaled::No => None,
            Scaled::Mx(size, rule) => Some(BlockScaling::mx(size, rule)),
            Scaled::General(b) => Some(b),
        }
    }
}
