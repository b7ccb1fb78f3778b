//! The tensors that `f32`, `bf16` and `ue4m3` block scales do not take: a NaN or an infinity
//! makes its block's scale NaN, and the block (a whole row, or the whole tensor, for one
//! scale per row or per tensor) would read back as NaN. Such a tensor is kept unquantized,
//! so each tensor these scales would quantize is read once before the output's header is
//! written (which says what each tensor becomes). The same pass gives the tensor's largest
//! magnitude, the first pass that one scale per tensor or a second level needs.
//! (`ue8m0` scales keep OCP MX's NaN scale for such a block: the rest of the tensor is not
//! touched by it.)

use crate::chunk::read_exact_at;
use crate::chunk::Maxima;
use crate::error::{Error, Result};
use crate::files::shape_text;
use crate::scaling::{Block, BlockScaling, ScaleFormat};
use gpucvt_core::format::{Format, BF16, F16, F32};
use gpucvt_kernels::vectorized;
use rayon::prelude::*;
use std::cell::RefCell;
use std::fs::File;
use std::path::Path;
use zerocopy::IntoBytes;

/// Whether tensors block-scaled by `b` are read first: every scale format but `ue8m0`.
pub(crate) fn needs_scan(b: &BlockScaling) -> bool {
    b.format != ScaleFormat::Ue8m0
}

/// What the pass over a tensor found.
pub(crate) enum Scan {
    /// No NaN or infinity; the largest magnitude, as an `f32` encoding.
    Finite(u32),
    /// The first NaN or infinity: its flat index and its value (widened to `f32`).
    NonFinite(u64, f32),
}

/// Elements per piece of the pass (each read and scanned by one worker).
const PIECE: usize = 1 << 18;

thread_local! {
    static WORDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static HALVES: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// The `n` elements of format `src` (`f32`, `bf16` or `f16`) at byte `start` of `f`: their
/// largest magnitude, or their first NaN or infinity. The pieces are read and scanned by the
/// workers of `pool`.
pub(crate) fn scan(
    f: &File,
    path: &Path,
    src: &Format,
    start: u64,
    n: u64,
    pool: &rayon::ThreadPool,
) -> Result<Scan> {
    let width = if *src == F32 { 4 } else { 2 };
    let pieces = n.div_ceil(PIECE as u64);
    let piece = |p: u64| -> (u64, usize) {
        let at = p * PIECE as u64;
        (at, (n - at).min(PIECE as u64) as usize)
    };
    let read = |p: u64, visit: &mut dyn FnMut(&[u32], &[u16]) -> u32| -> Result<u32> {
        let (at, len) = piece(p);
        let from = start + at * width;
        let truncated = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Corrupt(format!(
                    "{}: the data ends before the header says it does (truncated file)",
                    path.display()
                ))
            } else {
                Error::io("read", path, e)
            }
        };
        if width == 4 {
            WORDS.with_borrow_mut(|w| {
                w.resize(len, 0);
                read_exact_at(f, w.as_mut_bytes(), from).map_err(truncated)?;
                if cfg!(target_endian = "big") {
                    w.iter_mut().for_each(|x| *x = u32::from_le(*x));
                }
                Ok(visit(w, &[]))
            })
        } else {
            HALVES.with_borrow_mut(|h| {
                h.resize(len, 0);
                read_exact_at(f, h.as_mut_bytes(), from).map_err(truncated)?;
                if cfg!(target_endian = "big") {
                    h.iter_mut().for_each(|x| *x = u16::from_le(*x));
                }
                Ok(visit(&[], h))
            })
        }
    };
    // The largest magnitude of each piece, as the widened `f32` encoding (widening keeps
    // the order of magnitudes, so the widened largest is the largest widened).
    let widen = |h: u16| -> u32 {
        if *src == BF16 {
            (h as u32) << 16
        } else {
            debug_assert_eq!(*src, F16);
            (F16.decode(h as u64).to_f64_lossy() as f32).to_bits()
        }
    };
    let largest = |w: &[u32], h: &[u16]| -> u32 {
        if width == 4 {
            vectorized(Maxima(w))
        } else {
            widen(h.iter().fold(0u16, |m, &x| m.max(x & 0x7fff)))
        }
    };
    let m = pool.install(|| {
        (0..pieces)
            .into_par_iter()
            .map(|p| read(p, &mut |w, h| largest(w, h)))
            .try_reduce(|| 0, |a, b| Ok(a.max(b)))
    })?;
    if m < 0x7f80_0000 {
        return Ok(Scan::Finite(m));
    }
    // (Rare: read again, in order, for the first one.)
    for p in 0..pieces {
        let mut first = u32::MAX;
        let mut bits = 0;
        read(p, &mut |w, h| {
            let found = if width == 4 {
                w.iter()
                    .position(|&x| x & 0x7fff_ffff >= 0x7f80_0000)
                    .map(|i| (i, w[i]))
            } else {
                h.iter()
                    .position(|&x| widen(x & 0x7fff) >= 0x7f80_0000)
                    .map(|i| (i, widen(h[i] & 0x7fff) | ((h[i] as u32 & 0x8000) << 16)))
            };
            if let Some((i, b)) = found {
                (first, bits) = (i as u32, b);
            }
            0
        })?;
        if first != u32::MAX {
            return Ok(Scan::NonFinite(
                piece(p).0 + first as u64,
                f32::from_bits(bits),
            ));
        }
    }
    // (Only if the file changed between the two reads.)
    Err(Error::Corrupt(format!(
        "{}: the data changed while it was read (a NaN or an infinity found in one read was not there in the next)",
        path.display()
    )))
}

/// Why a tensor of `shape`, block-scaled by `b`, whose element `index` (flat) is the NaN or
/// infinity `value`, is not quantized.
pub(crate) fn reason(b: &BlockScaling, shape: &[u64], index: u64, value: f32) -> String {
    let mut at = vec![0u64; shape.len()];
    let mut rest = index;
    for (i, &d) in shape.iter().enumerate().rev() {
        at[i] = rest % d.max(1);
        rest /= d.max(1);
    }
    let what = if value.is_nan() {
        "NaN"
    } else if value < 0.0 {
        "-inf"
    } else {
        "+inf"
    };
    let fmt = b.format.name();
    let scope = match b.block {
        Block::Tensor => {
            format!("the tensor's one {fmt} scale would be NaN, and every element would read back as NaN")
        }
        Block::Row => {
            format!("the {fmt} scale of its row would be NaN, and the row would read back as NaN")
        }
        Block::Tile(r, c) => format!(
            "the {fmt} scale of its {r}x{c} tile would be NaN, and the tile would read back as NaN"
        ),
        Block::Len(n) => format!(
            "the {fmt} scale of its block of {n} would be NaN, and the block would read back as NaN"
        ),
    };
    format!(
        "element {} is {what}: {scope} (NaN and infinities are not quantized with {fmt} scales)",
        shape_text(&at)
    )
}
