//! Dequantization: the exact products `q × s (× s2)` of block-scaled tensors rounded once to
//! the output format, for `.safetensors` files (`safetensors.rs`: scale tensors beside their
//! tensors) and `.npy`/raw files (`single.rs`: sidecar scale files). This module holds what
//! both share: the options, how a blocking is inferred from the scales' shapes, and the
//! encoding of the products.

pub(crate) mod safetensors;
pub(crate) mod single;

use crate::scaling::{Block, BlockScaling, ScaleFormat};
use ::safetensors::Dtype;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, BF16, F16, F32, F64};
use gpucvt_core::{Policy, Rounding};
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What [`crate::dequantize_file`] does.
#[derive(Clone, Debug)]
pub struct DequantizeOptions {
    /// The output format: `f32` (default), `bf16`, `f16` or `f64`.
    pub to: Format,
    /// The block scaling of tensors whose file does not record it (gpucvt records it in the
    /// `.safetensors` header's metadata); without it, it is read off the shapes (a raw
    /// file, which has none, needs it).
    pub block: Option<BlockScaling>,
    /// The format of the quantized elements (`--from`, or a recipe's): needed where the
    /// container does not tell (a `.npy` `|u1` or `<u2` array, raw data); in a
    /// `.safetensors` file each scaled tensor's dtype must be it.
    pub elements: Option<Format>,
    /// Without [`DequantizeOptions::block`]: the scale format (`--scale`), for one-byte
    /// `.npy` scales, which are `ue8m0` unless a second-level scale file makes them `ue4m3`;
    /// scales of another dtype must agree with it.
    pub scale: Option<ScaleFormat>,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Replace a read-only output (and remove read-only sidecar files of a `.npy` or raw
    /// output); without it they are an [`Error::ReadOnly`](crate::Error::ReadOnly).
    pub force: bool,
    /// A flag another thread may set to stop the dequantization ([`crate::Options::cancel`]).
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for DequantizeOptions {
    fn default() -> Self {
        DequantizeOptions {
            to: F32,
            block: None,
            elements: None,
            scale: None,
            threads: 0,
            force: false,
            cancel: None,
        }
    }
}

pub(crate) fn scale_format(d: Dtype) -> Option<ScaleFormat> {
    Some(match d {
        Dtype::F8_E8M0 => ScaleFormat::Ue8m0,
        Dtype::F8_E4M3 => ScaleFormat::Ue4m3,
        Dtype::F32 => ScaleFormat::F32,
        Dtype::BF16 => ScaleFormat::Bf16,
        _ => return None,
    })
}

/// Why [`infer`] found no blocking.
pub(crate) enum NotInferred {
    /// No blocking gives scales of that shape.
    NoFit,
    /// Tiles of several sizes give scales of that shape, and none is the evident one: the
    /// sides that fit, (low, high) for the rows and the columns.
    Ambiguous([(u64, u64); 2]),
}

/// The side of the tiles that cut an axis of `n` elements into `s` (the last one may be
/// ragged). Every side from ⌈n/s⌉ to ⌊(n−1)/(s−1)⌋ does, and they cut the axis
/// differently: one side is taken only where it is the only one, or where it is the power
/// of two in that range and no other side divides the axis exactly (DeepSeek's 128 × 128
/// tiles, ragged or not). Otherwise the range is returned.
pub(crate) fn tile_side(n: u64, s: u64) -> std::result::Result<u64, Option<(u64, u64)>> {
    if s == 0 || n == 0 {
        return Err(None);
    }
    if s == 1 {
        return Ok(n);
    }
    let (lo, hi) = (n.div_ceil(s), (n - 1) / (s - 1));
    if lo > hi {
        return Err(None);
    }
    if lo == hi {
        return Ok(lo);
    }
    let p = lo.next_power_of_two();
    if p <= hi && (!n.is_multiple_of(s) || n / s == p) {
        return Ok(p);
    }
    Err(Some((lo, hi)))
}

/// The block scaling that maps a tensor of `shape` to scales of `sshape` (row-major), read
/// off the shapes: a scalar is one scale per tensor; one axis divided is blocks of N along
/// it (1: per row); the last two divided, R×C tiles where the sides are evident
/// ([`tile_side`]).
pub(crate) fn infer(
    shape: &[u64],
    sshape: &[u64],
) -> std::result::Result<(Block, i64), NotInferred> {
    if sshape.is_empty()
        || (sshape.iter().product::<u64>() == 1
            && shape.iter().product::<u64>() > 1
            && sshape.len() != shape.len())
    {
        return Ok((Block::Tensor, -1));
    }
    if sshape.len() != shape.len() {
        return Err(NotInferred::NoFit);
    }
    let diff: Vec<usize> = (0..shape.len())
        .filter(|&i| shape[i] != sshape[i])
        .collect();
    let nd = shape.len() as i64;
    match diff[..] {
        [] => Ok((Block::Len(1), -1)),
        [a] => {
            if sshape[a] == 0 || !shape[a].is_multiple_of(sshape[a]) {
                return Err(NotInferred::NoFit);
            }
            let axis = a as i64 - nd;
            if sshape[a] == 1 {
                Ok((Block::Row, axis))
            } else {
                Ok((Block::Len(shape[a] / sshape[a]), axis))
            }
        }
        [a, b] if a + 2 == shape.len() && b + 1 == shape.len() => {
            match (
                tile_side(shape[a], sshape[a]),
                tile_side(shape[b], sshape[b]),
            ) {
                (Ok(r), Ok(c)) => Ok((Block::Tile(r, c), -1)),
                (Err(None), _) | (_, Err(None)) => Err(NotInferred::NoFit),
                (r, c) => {
                    let range = |x: std::result::Result<u64, Option<(u64, u64)>>| match x {
                        Ok(t) => (t, t),
                        Err(r) => r.unwrap_or_default(),
                    };
                    Err(NotInferred::Ambiguous([range(r), range(c)]))
                }
            }
        }
        _ => Err(NotInferred::NoFit),
    }
}

/// The message of an ambiguous tiling ([`NotInferred::Ambiguous`]) of `what`, whose scales
/// `sname` have the shape `sshape`.
pub(crate) fn ambiguous(what: &str, sname: &str, sshape: &[u64], sides: [(u64, u64); 2]) -> String {
    let side = |(lo, hi): (u64, u64)| {
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo} to {hi}")
        }
    };
    format!(
        "{what}: its scales {sname} (shape {}) fit tiles of several sizes ({} rows by {} columns), which cut it differently; give the block it was quantized with (for example {}x{}) or its recipe",
        crate::files::shape_text(sshape),
        side(sides[0]),
        side(sides[1]),
        sides[0].0,
        sides[1].0
    )
}

/// The values rounded once to `to` (little-endian bytes).
pub(crate) fn encode(values: &[f64], to: &Format) -> Vec<u8> {
    let width = (to.width() / 8) as usize;
    let mut out = vec![0u8; values.len() * width];
    if *to == F64 {
        out.par_chunks_mut(8)
            .zip(values)
            .for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
    } else if *to == F32 {
        // (`as` rounds to nearest even.)
        out.par_chunks_mut(4)
            .zip(values)
            .for_each(|(o, v)| o.copy_from_slice(&(*v as f32).to_le_bytes()));
    } else {
        debug_assert!(*to == BF16 || *to == F16);
        let c = Conversion::new(F64, *to, Rounding::RN, Policy::default());
        out.par_chunks_mut(2).zip(values).for_each(|(o, v)| {
            o.copy_from_slice(&(c.apply(v.to_bits()).bits as u16).to_le_bytes())
        });
    }
    out
}

/// The codes of `n` elements packed as `p` in `bytes`, one per element.
pub(crate) fn codes(p: crate::dtype::Packing, bytes: &[u8], n: usize) -> Vec<u16> {
    let mut q: Vec<u16> = Vec::new();
    if p.bits() <= 8 {
        let mut q8: Vec<u8> = Vec::new();
        crate::chunk::pack::unpack(p, bytes, n, &mut q8);
        q.extend(q8.into_iter().map(u16::from));
    } else {
        crate::chunk::pack::unpack(p, bytes, n, &mut q);
    }
    q
}

/// The scales as written (little-endian bytes of `format`), one word each.
pub(crate) fn scale_words(format: ScaleFormat, bytes: &[u8]) -> Vec<u32> {
    match format {
        ScaleFormat::Ue8m0 | ScaleFormat::Ue4m3 => bytes.iter().map(|&b| b as u32).collect(),
        ScaleFormat::Bf16 => bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
            .collect(),
        ScaleFormat::F32 => bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    }
}
