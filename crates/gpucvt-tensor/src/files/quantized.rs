//! A tensor quantized in memory ([`crate::quant::Quantizer`]): block shapes and scale formats
//! other than MX's, which the streaming engine does not do. The tensor's elements are read
//! whole, widened exactly to `f32`, quantized, and packed; the caller writes the elements and
//! the scale tensors.

use crate::engine::pack;
use crate::error::{Error, Result};
use crate::files::{Ctx, PlanKey};
use crate::quant::{BlockScaling, Quantizer, ScaleFormat};
use crate::Stats;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{BF16, F16, F32};
use gpucvt_core::round::Direction;
use std::fs::File;
use std::io::Read;
use zerocopy::IntoBytes;

/// One tensor to quantize in memory.
pub(crate) struct InMemory<'a> {
    pub(crate) key: &'a PlanKey,
    pub(crate) scaling: BlockScaling,
    pub(crate) shape: &'a [u64],
    pub(crate) n: u64,
    /// Its random stream (stochastic rounding).
    pub(crate) stream: u64,
}

/// A quantized tensor's bytes.
pub(crate) struct Quantized {
    pub(crate) stats: Stats,
    /// The elements, packed.
    pub(crate) data: Vec<u8>,
    /// The block scales in their layout, little-endian.
    pub(crate) scales: Vec<u8>,
    /// The second-level scale (`f32`, little-endian).
    pub(crate) scale_2: Option<[u8; 4]>,
}

impl Ctx<'_> {
    /// Reads the next tensor's elements from `f` and quantizes them.
    pub(crate) fn quantize_in_memory(
        &mut self,
        f: &mut File,
        t: &InMemory<'_>,
    ) -> Result<Quantized> {
        let conv = t.key.conv;
        let n = t.n as usize;
        let in_bytes = t.key.src_pack.bytes_for(t.n);
        let mut x = std::mem::take(&mut self.buffers.words);
        x.resize(n, 0);
        let read_error = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Corrupt(format!(
                    "{}: the data ends before the header says it does (truncated file)",
                    self.input.display()
                ))
            } else {
                Error::io("read", self.input, e)
            }
        };
        if conv.src == F32 {
            f.read_exact(x.as_mut_bytes()).map_err(read_error)?;
            if cfg!(target_endian = "big") {
                x.iter_mut().for_each(|w| *w = u32::from_le(*w));
            }
        } else {
            let mut raw = vec![0u16; n];
            f.read_exact(raw.as_mut_bytes()).map_err(read_error)?;
            if conv.src == BF16 {
                for (o, &h) in x.iter_mut().zip(&raw) {
                    *o = (u16::from_le(h) as u32) << 16;
                }
            } else {
                debug_assert_eq!(conv.src, F16);
                // f16 widens exactly to f32.
                for (o, &h) in x.iter_mut().zip(&raw) {
                    *o = (F16.decode(u16::from_le(h) as u64).to_f64_lossy() as f32).to_bits();
                }
            }
        }
        let c32 = Conversion { src: F32, ..conv };
        let qz = Quantizer::new(c32, &t.scaling, t.shape)?;
        let stochastic = matches!(conv.rounding.direction, Direction::Stochastic { .. });
        let random = stochastic.then_some(t.stream);
        let dst_pack = t.key.dst_pack;
        let mut data = vec![0u8; dst_pack.bytes_for(t.n) as usize];
        let mut scales = vec![0u32; qz.scale_count()];
        let mut codes = std::mem::take(&mut self.buffers.codes);
        let (stats, s2) = self.pool.install(|| -> Result<(Stats, Option<f32>)> {
            if dst_pack.bits() <= 8 {
                codes.resize(n, 0);
                let r = qz.quantize_auto(&x, random, &mut codes[..n], &mut scales)?;
                pack::pack(dst_pack, &codes[..n], &mut data);
                Ok(r)
            } else {
                let mut q = vec![0u16; n];
                let r = qz.quantize_auto(&x, random, &mut q, &mut scales)?;
                pack::pack(dst_pack, &q, &mut data);
                Ok(r)
            }
        })?;
        self.buffers.words = x;
        self.buffers.codes = codes;
        self.tick(in_bytes);
        let laid = qz.lay_out(&scales);
        let format = t.scaling.format;
        let mut sbytes = Vec::with_capacity(laid.len() * format.bytes());
        for s in laid {
            match format {
                ScaleFormat::Ue8m0 | ScaleFormat::Ue4m3 => sbytes.push(s as u8),
                ScaleFormat::Bf16 => sbytes.extend_from_slice(&(s as u16).to_le_bytes()),
                ScaleFormat::F32 => sbytes.extend_from_slice(&s.to_le_bytes()),
            }
        }
        Ok(Quantized {
            stats,
            data,
            scales: sbytes,
            scale_2: s2.map(|s| s.to_le_bytes()),
        })
    }
}
