//! The streaming pipeline of one tensor: each chunk read and converted piece by piece by the
//! workers of the caller's thread pool, and a writer thread, connected by a bounded channel
//! so that converting and writing overlap while at most a few chunks are in memory.

use crate::chunk::Plan;
use crate::error::{Error, Result};
use crate::Stats;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel};
use zerocopy::IntoBytes;

/// Input bytes per chunk (about): big enough to amortise the hand-offs, small enough that the
/// output chunks in flight (at most 4 buffers) and the workers' input pieces stay far below
/// the memory bound.
pub(crate) const CHUNK_BYTES: u64 = 8 << 20;

/// Where the data goes and where messages point.
pub(crate) struct Io<'a> {
    pub input_path: &'a Path,
    pub output_path: &'a Path,
    /// Whether the input is raw data (no header), for the message of a file that ends early.
    pub raw: bool,
    /// The caller's cancel flag, polled before each chunk.
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
}

/// The message of an input that ends before its data does: with a header, before the end
/// the header gives; raw data, whose length was taken when the conversion started, was
/// shortened meanwhile.
pub(crate) fn ends_early(path: &Path, raw: bool) -> Error {
    Error::Corrupt(if raw {
        format!(
            "{}: the file ends before its data was read: it was shortened while it was being converted (truncated file)",
            path.display()
        )
    } else {
        format!(
            "{}: the data ends before the header says it does (truncated file)",
            path.display()
        )
    })
}

/// One tensor's elements: `n` of them from `input` (from its position on) into `output`.
pub(crate) struct Tensor<'a, W> {
    pub input: &'a mut File,
    pub n: u64,
    pub output: &'a mut W,
}

/// The output chunk buffers, kept from one tensor to the next (so that each is allocated and
/// zeroed once): `u64` words, so that the bytes are aligned for the kernels to write them as
/// words in place (`Plan::convert_chunk_at`).
#[derive(Default)]
pub(crate) struct Buffers {
    outputs: Vec<Vec<u64>>,
    /// A block-scaled tensor's buffers ([`crate::chunk::Quantizer`]).
    pub(crate) quant: crate::chunk::StreamBuffers<u8>,
}

/// Streams `n` elements of a tensor from `input` (from its position on, which is left just
/// after them) through `plan` into `output`, calling `scales` with each chunk's block scales
/// (in order) and `progress` with the input bytes done. The workers read their own pieces of
/// each chunk ([`Plan::convert_chunk_at`]), so that the bytes the kernel copies out of the
/// file are converted while they are still in the reading core's cache; a writer thread
/// writes the converted chunks meanwhile.
pub(crate) fn run<W: Write + Send>(
    plan: &Plan,
    pool: &rayon::ThreadPool,
    tensor: Tensor<'_, W>,
    scales: &mut dyn FnMut(&[u8]) -> Result<()>,
    progress: &mut dyn FnMut(u64),
    io: &Io<'_>,
    buffers: &mut Buffers,
) -> Result<Stats> {
    let Tensor { input, n, output } = tensor;
    let sub = plan.sub_elements();
    let per = plan.src_pack.bits().max(plan.dst_pack.bits()).max(8) / 8;
    let chunk = (CHUNK_BYTES / per).div_ceil(sub).max(1) * sub;
    let mut stats = Stats::default();
    if n == 0 {
        return Ok(stats);
    }
    let read_error = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ends_early(io.input_path, io.raw),
        // (The kernels' report of an element that is not an encoding of its format.)
        std::io::ErrorKind::InvalidData => {
            Error::Corrupt(format!("{}: {e}", io.input_path.display()))
        }
        _ => Error::io("read", io.input_path, e),
    };
    crate::check_cancel(io.cancel)?;
    let start = input.stream_position().map_err(read_error)?;
    let file: &File = input;
    if n <= chunk {
        // One chunk: converted and written here, without a writer thread (a file of many
        // small tensors would otherwise start one thread per tensor).
        let out_bytes = plan.dst_pack.bytes_for(n) as usize;
        let mut out = buffers.outputs.pop().unwrap_or_default();
        if out.len() < out_bytes.div_ceil(8) {
            out.resize(out_bytes.div_ceil(8), 0);
        }
        let dst = &mut out.as_mut_bytes()[..out_bytes];
        let r = if n <= sub {
            // (One piece: converted on this thread, see `Plan::convert_chunk_at`.)
            plan.convert_chunk_at(file, start, n, 0, dst)
        } else {
            pool.install(|| plan.convert_chunk_at(file, start, n, 0, dst))
        };
        let r = r.map_err(read_error).and_then(|(st, sc)| {
            scales(&sc)?;
            output
                .write_all(&out.as_bytes()[..out_bytes])
                .map_err(|e| Error::io("write", io.output_path, e))?;
            Ok(st)
        });
        buffers.outputs.push(out);
        stats = r?;
        progress(plan.src_pack.bytes_for(n));
        input
            .seek(SeekFrom::Start(start + plan.src_pack.bytes_for(n)))
            .map_err(read_error)?;
        return Ok(stats);
    }
    // The output buffers circulate through a return channel and go back to `buffers` at the
    // end.
    let result = std::thread::scope(|s| -> Result<Stats> {
        let (out_tx, out_rx) = sync_channel::<(Vec<u64>, usize)>(2);
        let (out_back_tx, out_back_rx) = channel::<Vec<u64>>();
        for b in buffers.outputs.drain(..) {
            let _ = out_back_tx.send(b);
        }
        let writer = s.spawn(move || -> std::io::Result<()> {
            for (buf, bytes) in out_rx {
                output.write_all(&buf.as_bytes()[..bytes])?;
                // The converter may have stopped; then the buffer is simply dropped.
                let _ = out_back_tx.send(buf);
            }
            Ok(())
        });
        let result = (|| -> Result<()> {
            let (mut first, mut at) = (0u64, start);
            while first < n {
                crate::check_cancel(io.cancel)?;
                let m = chunk.min(n - first);
                let in_bytes = plan.src_pack.bytes_for(m);
                let out_bytes = plan.dst_pack.bytes_for(m) as usize;
                let mut out = out_back_rx.try_recv().unwrap_or_default();
                if out.len() < out_bytes.div_ceil(8) {
                    out.resize(out_bytes.div_ceil(8), 0);
                }
                let (st, sc) = pool
                    .install(|| {
                        plan.convert_chunk_at(
                            file,
                            at,
                            m,
                            first,
                            &mut out.as_mut_bytes()[..out_bytes],
                        )
                    })
                    .map_err(read_error)?;
                stats.merge(&st);
                scales(&sc)?;
                if out_tx.send((out, out_bytes)).is_err() {
                    // The writer failed: its error is reported below.
                    break;
                }
                progress(in_bytes);
                first += m;
                at += in_bytes;
            }
            Ok(())
        })();
        drop(out_tx);
        let written = writer.join().expect("the writer thread does not panic");
        buffers.outputs.extend(out_back_rx.try_iter());
        result?;
        written.map_err(|e| Error::io("write", io.output_path, e))?;
        Ok(stats)
    })?;
    input
        .seek(SeekFrom::Start(start + plan.src_pack.bytes_for(n)))
        .map_err(read_error)?;
    Ok(result)
}
