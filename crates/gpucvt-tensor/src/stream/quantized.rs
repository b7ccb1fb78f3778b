//! A tensor quantized with [`crate::chunk::Quantizer`]: block shapes and scale formats other
//! than MX's, which the streaming engine does not do. The tensor's elements are read in
//! chunks of whole tiles, widened exactly to `f32`, quantized, packed and written; the caller
//! writes the scale tensors.

use crate::chunk::pack::{self, Le};
use crate::chunk::read_exact_at;
use crate::chunk::{Quantizer, Source, StreamBuffers};
use crate::dtype::Packing;
use crate::error::{Error, Result};
use crate::files::{Ctx, PlanKey};
use crate::scaling::{BlockScaling, ScaleFormat, ScaleLayout};
use crate::Stats;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, BF16, F16, F32};
use gpucvt_core::round::Direction;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use zerocopy::IntoBytes;

/// One tensor to quantize.
pub(crate) struct QuantJob<'a> {
    pub(crate) key: &'a PlanKey,
    pub(crate) scaling: BlockScaling,
    pub(crate) shape: &'a [u64],
    /// Its random stream (stochastic rounding).
    pub(crate) stream: u64,
    /// Its largest magnitude (an `f32` encoding), if it was read before
    /// ([`crate::files::finite::scan`]): then no first pass is needed.
    pub(crate) amax: Option<u32>,
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
    /// packed elements to `w` as they are made (on a writer thread, while the next chunk
    /// is quantized), and leaves `f` just after the tensor; returns the statistics and the
    /// scales. One scale for the whole tensor, or a second level, need the tensor's amax
    /// first: the tensor is read twice then (unless `t.amax` gives it).
    pub(crate) fn quantize_streamed<W: Write + Send>(
        &mut self,
        f: &mut File,
        t: &QuantJob<'_>,
        w: &mut W,
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
        let cancel = self.opts.cancel.as_deref();
        let src = FileWords {
            f,
            path: self.input,
            src: conv.src,
            start,
            raw: self.raw,
            cancel,
        };
        let pool = self.pool;
        let threaded = qz.geometry().elements() > CHUNK;
        let (stats, scales, second) = if dst_pack.bits() <= 8 {
            let mut bufs = std::mem::take(&mut self.buffers.quant);
            let r = self.write_behind(w, out_path, threaded, |ctx, out| {
                qz.stream(pool, CHUNK, &src, random, t.amax, &mut bufs, |q, len| {
                    crate::check_cancel(cancel)?;
                    out.send(dst_pack, q)?;
                    ctx.tick(src_pack.bytes_for(len));
                    Ok(())
                })
            });
            self.buffers.quant = bufs;
            r?
        } else {
            let mut bufs = StreamBuffers::<u16>::default();
            self.write_behind(w, out_path, threaded, |ctx, out| {
                qz.stream(pool, CHUNK, &src, random, t.amax, &mut bufs, |q, len| {
                    crate::check_cancel(cancel)?;
                    out.send(dst_pack, q)?;
                    ctx.tick(src_pack.bytes_for(len));
                    Ok(())
                })
            })?
        };
        f.seek(SeekFrom::Start(
            start + src_pack.bytes_for(qz.geometry().elements()),
        ))
        .map_err(|e| Error::io("read", self.input, e))?;
        let laid = match t.scaling.layout {
            ScaleLayout::Rows => scales,
            ScaleLayout::Swizzled => qz.lay_out(&scales),
        };
        let sbytes: Vec<u8> = match t.scaling.format {
            ScaleFormat::Ue8m0 | ScaleFormat::Ue4m3 => laid.iter().map(|&s| s as u8).collect(),
            ScaleFormat::Bf16 => laid
                .iter()
                .flat_map(|&s| (s as u16).to_le_bytes())
                .collect(),
            ScaleFormat::F32 => laid.iter().flat_map(|s| s.to_le_bytes()).collect(),
        };
        Ok(Quantized {
            stats,
            scales: sbytes,
            scale_2: second.map(|s| s.to_le_bytes()),
        })
    }

    /// Runs `make` with an [`Out`] whose chunks a writer thread writes to `w` meanwhile
    /// (or, for a tensor of one chunk, that writes them itself: a file of many small
    /// tensors would otherwise start a thread per tensor); returns what `make` returns, or
    /// the first error (a write error if the writer failed).
    fn write_behind<W: Write + Send, R>(
        &mut self,
        w: &mut W,
        out_path: &Path,
        threaded: bool,
        make: impl FnOnce(&mut Self, &mut Out<'_>) -> Result<R>,
    ) -> Result<R> {
        if !threaded {
            let mut out = Out::Here {
                w,
                path: out_path,
                buf: Vec::new(),
            };
            return make(self, &mut out);
        }
        std::thread::scope(|s| {
            // Two chunks in flight at most; the buffers come back to be filled again.
            let (tx, rx) = sync_channel::<Vec<u8>>(2);
            let (back_tx, back_rx) = channel::<Vec<u8>>();
            let writer = s.spawn(move || -> std::io::Result<()> {
                for buf in rx {
                    w.write_all(&buf)?;
                    // The maker may have stopped; then the buffer is simply dropped.
                    let _ = back_tx.send(buf);
                }
                Ok(())
            });
            let mut out = Out::Behind { tx, back: back_rx };
            let made = make(self, &mut out);
            drop(out);
            let written = writer.join().expect("the writer thread does not panic");
            // A failed write stops the maker (its send fails): the write error is the one
            // to report.
            written.map_err(|e| Error::io("write", out_path, e))?;
            made
        })
    }
}

/// Where [`Ctx::write_behind`]'s chunks of element codes go, packed.
enum Out<'a> {
    /// To the writer thread, the buffers coming back on `back`.
    Behind {
        tx: SyncSender<Vec<u8>>,
        back: Receiver<Vec<u8>>,
    },
    /// Written here.
    Here {
        w: &'a mut dyn Write,
        path: &'a Path,
        buf: Vec<u8>,
    },
}

impl Out<'_> {
    /// Packs `codes` and writes them or sends them to be written. Byte codes are their own
    /// packing: sent, the buffer itself goes, and `codes` gets one the writer has finished
    /// with.
    // (A `Vec`: sent, the byte buffer itself is swapped for another.)
    #[allow(clippy::ptr_arg)]
    fn send<D: Le + 'static>(&mut self, dst_pack: Packing, codes: &mut Vec<D>) -> Result<()> {
        // Byte codes when the packing is a byte per element.
        let bytes = (dst_pack.bits() == 8)
            .then(|| (codes as &mut dyn std::any::Any).downcast_mut::<Vec<u8>>())
            .flatten();
        match self {
            Out::Here { w, path, buf } => {
                let data: &[u8] = match bytes {
                    Some(bytes) => bytes,
                    None => {
                        pack_into(dst_pack, codes, buf);
                        buf
                    }
                };
                w.write_all(data).map_err(|e| Error::io("write", path, e))
            }
            Out::Behind { tx, back } => {
                let mut buf = back.try_recv().unwrap_or_default();
                match bytes {
                    Some(bytes) => std::mem::swap(bytes, &mut buf),
                    None => pack_into(dst_pack, codes, &mut buf),
                }
                // A closed channel: the writer failed, and its error is reported.
                tx.send(buf)
                    .map_err(|_| Error::Invalid("the writer stopped".into()))
            }
        }
    }
}

/// `codes` packed into `buf` (resized to fit).
fn pack_into<D: Le>(dst_pack: Packing, codes: &[D], buf: &mut Vec<u8>) {
    buf.resize(dst_pack.bytes_for(codes.len() as u64) as usize, 0);
    pack::pack(dst_pack, codes, buf);
}

/// A tensor's elements in a file from `start` on, widened exactly to `f32` words.
struct FileWords<'a> {
    f: &'a File,
    path: &'a Path,
    /// Their format: `f32`, `bf16` or `f16`.
    src: Format,
    start: u64,
    /// The input is raw data (no header).
    raw: bool,
    /// The caller's cancel flag, polled at each read (the workers read a chunk's pieces).
    cancel: Option<&'a std::sync::atomic::AtomicBool>,
}

thread_local! {
    /// A worker's buffer for 16-bit elements, kept from one piece to the next.
    static RAW: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Source for FileWords<'_> {
    fn read_at(&self, x: &mut [u32], at: u64) -> Result<()> {
        crate::check_cancel(self.cancel)?;
        let path = self.path;
        let read_error = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                crate::stream::pipeline::ends_early(path, self.raw)
            } else {
                Error::io("read", path, e)
            }
        };
        let width = if self.src == F32 { 4 } else { 2 };
        let from = self.start + at * width;
        if self.src == F32 {
            read_exact_at(self.f, x.as_mut_bytes(), from).map_err(read_error)?;
            if cfg!(target_endian = "big") {
                x.iter_mut().for_each(|w| *w = u32::from_le(*w));
            }
            return Ok(());
        }
        RAW.with_borrow_mut(|raw| {
            raw.resize(x.len(), 0);
            read_exact_at(self.f, raw.as_mut_bytes(), from).map_err(read_error)?;
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
        })
    }
}
