//! A tensor quantized with [`crate::quant::Quantizer`]: block shapes and scale formats other
//! than MX's, which the streaming engine does not do. The tensor's elements are read in
//! chunks of whole tiles, widened exactly to `f32`, quantized, packed and written; the caller
//! writes the scale tensors.

use crate::dtype::Packing;
use crate::engine::pack::{self, Le};
use crate::error::{Error, Result};
use crate::files::{Ctx, PlanKey};
use crate::quant::Source;
use crate::quant::{BlockScaling, Quantizer, ScaleFormat};
use crate::Stats;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, BF16, F16, F32};
use gpucvt_core::round::Direction;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use zerocopy::IntoBytes;

/// One tensor to quantize.
pub(crate) struct QuantJob<'a> {
    pub(crate) key: &'a PlanKey,
    pub(crate) scaling: BlockScaling,
    pub(crate) shape: &'a [u64],
    /// Its random stream (stochastic rounding).
    pub(crate) stream: u64,
}

/// What quantizing a tensor gives besides its elements (written as they are made).
pub(crate) struct Quantized {
    pub(crate) stats: Stats,
    /// The block scales in their layout, little-endian.
    pub(crate) scales: Vec<u8>,
    /// The second-level scale (`f32`, little-endian).
    pub(crate) scale_2: Option<[u8; 4]>,
}

/// Elements per chunk (about: whole tiles): 4 MiB of `f32` words, so that a chunk read is
/// still in the cache when it is scaled, converted and counted.
const CHUNK: u64 = 1 << 20;

impl Ctx<'_> {
    /// Quantizes the next tensor of `f` chunk by chunk (whole tiles at a time), writing its
    /// packed elements to `w` as they are made; returns the statistics and the scales.
    /// One scale for the whole tensor, or a second level, need the tensor's amax first:
    /// the tensor is read twice then (its start found again by seeking).
    pub(crate) fn quantize_streamed(
        &mut self,
        f: &mut File,
        t: &QuantJob<'_>,
        w: &mut impl Write,
        out_path: &Path,
    ) -> Result<Quantized> {
        let conv = t.key.conv;
        let c32 = Conversion { src: F32, ..conv };
        let qz = Quantizer::new(c32, &t.scaling, t.shape)?;
        let stochastic = matches!(conv.rounding.direction, Direction::Stochastic { .. });
        let random = stochastic.then_some(t.stream);
        let (dst_pack, src_pack) = (t.key.dst_pack, t.key.src_pack);
        let start = f
            .stream_position()
            .map_err(|e| Error::io("read", self.input, e))?;
        let mut src = FileWords {
            f,
            path: self.input,
            src: conv.src,
            start,
            raw: Vec::new(),
        };
        let mut out = Packer {
            w,
            path: out_path,
            data: Vec::new(),
            dst_pack,
        };
        let pool = self.pool;
        let (stats, scales, second) = if dst_pack.bits() <= 8 {
            let mut codes = std::mem::take(&mut self.buffers.codes);
            let r = qz.stream(pool, CHUNK, &mut src, random, &mut codes, |q, len| {
                out.write(q)?;
                self.tick(src_pack.bytes_for(len));
                Ok(())
            });
            self.buffers.codes = codes;
            r?
        } else {
            let mut codes = Vec::<u16>::new();
            qz.stream(pool, CHUNK, &mut src, random, &mut codes, |q, len| {
                out.write(q)?;
                self.tick(src_pack.bytes_for(len));
                Ok(())
            })?
        };
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
            scales: sbytes,
            scale_2: second.map(|s| s.to_le_bytes()),
        })
    }
}

/// Packs chunks of element codes and writes them.
struct Packer<'a, W> {
    w: &'a mut W,
    path: &'a Path,
    data: Vec<u8>,
    dst_pack: Packing,
}

impl<W: Write> Packer<'_, W> {
    fn write<D: Le>(&mut self, codes: &[D]) -> Result<()> {
        self.data
            .resize(self.dst_pack.bytes_for(codes.len() as u64) as usize, 0);
        pack::pack(self.dst_pack, codes, &mut self.data);
        self.w
            .write_all(&self.data)
            .map_err(|e| Error::io("write", self.path, e))
    }
}

/// A tensor's elements in a file from `start` on, widened exactly to `f32` words.
struct FileWords<'a> {
    f: &'a mut File,
    path: &'a Path,
    /// Their format: `f32`, `bf16` or `f16`.
    src: Format,
    start: u64,
    /// A buffer for 16-bit elements.
    raw: Vec<u16>,
}

impl Source for FileWords<'_> {
    fn read(&mut self, x: &mut Vec<u32>, n: usize) -> Result<()> {
        let path = self.path;
        let read_error = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Corrupt(format!(
                    "{}: the data ends before the header says it does (truncated file)",
                    path.display()
                ))
            } else {
                Error::io("read", path, e)
            }
        };
        x.resize(n, 0);
        if self.src == F32 {
            self.f.read_exact(x.as_mut_bytes()).map_err(read_error)?;
            if cfg!(target_endian = "big") {
                x.iter_mut().for_each(|w| *w = u32::from_le(*w));
            }
            return Ok(());
        }
        let raw = &mut self.raw;
        raw.resize(n, 0);
        self.f.read_exact(raw.as_mut_bytes()).map_err(read_error)?;
        if self.src == BF16 {
            for (o, &h) in x.iter_mut().zip(raw.iter()) {
                *o = (u16::from_le(h) as u32) << 16;
            }
        } else {
            debug_assert_eq!(self.src, F16);
            // f16 widens exactly to f32.
            for (o, &h) in x.iter_mut().zip(raw.iter()) {
                *o = (F16.decode(u16::from_le(h) as u64).to_f64_lossy() as f32).to_bits();
            }
        }
        Ok(())
    }

    fn rewind(&mut self) -> Result<()> {
        self.f
            .seek(SeekFrom::Start(self.start))
            .map(|_| ())
            .map_err(|e| Error::io("read", self.path, e))
    }
}
