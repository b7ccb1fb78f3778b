//! The streaming pipeline of one tensor: a reader thread, the conversion of each chunk on the
//! caller's thread pool, and a writer thread, connected by bounded channels so that reading,
//! converting and writing overlap while at most a few chunks are in memory.

use crate::engine::Plan;
use crate::error::{Error, Result};
use crate::Stats;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel};
use zerocopy::IntoBytes;

/// Input bytes per chunk (about): big enough to amortise the hand-offs, small enough that the
/// chunks in flight (at most ~4 input and ~4 output buffers) stay far below the memory bound.
pub(crate) const CHUNK_BYTES: u64 = 8 << 20;

/// Where the data goes and where messages point.
pub(crate) struct Io<'a> {
    pub input_path: &'a Path,
    pub output_path: &'a Path,
}

/// The chunk buffers, kept from one tensor to the next (so that each is allocated and
/// zeroed once): `u64` words, so that the bytes are aligned for the kernels to read and write
/// them as words in place (`Plan::convert_chunk`).
#[derive(Default)]
pub(crate) struct Buffers {
    inputs: Vec<Vec<u64>>,
    outputs: Vec<Vec<u64>>,
}

/// Streams `n` elements of a tensor from `input` through `plan` into `output`, calling
/// `scales` with each chunk's block scales (in order) and `progress` with the input bytes
/// done.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<R: Read + Send, W: Write + Send>(
    plan: &Plan,
    pool: &rayon::ThreadPool,
    input: &mut R,
    n: u64,
    output: &mut W,
    scales: &mut dyn FnMut(&[u8]) -> Result<()>,
    progress: &mut dyn FnMut(u64),
    io: &Io<'_>,
    buffers: &mut Buffers,
) -> Result<Stats> {
    let sub = plan.sub_elements();
    let per = plan.src_pack.bits().max(plan.dst_pack.bits()).max(8) / 8;
    let chunk = (CHUNK_BYTES / per).div_ceil(sub).max(1) * sub;
    let mut stats = Stats::default();
    if n == 0 {
        return Ok(stats);
    }
    // The buffers circulate through return channels and go back to `buffers` at the end.
    std::thread::scope(|s| -> Result<Stats> {
        let (in_tx, in_rx) = sync_channel::<std::io::Result<(Vec<u64>, u64, u64)>>(2);
        let (in_back_tx, in_back_rx) = channel::<Vec<u64>>();
        let (out_tx, out_rx) = sync_channel::<(Vec<u64>, usize)>(2);
        let (out_back_tx, out_back_rx) = channel::<Vec<u64>>();
        for b in buffers.inputs.drain(..) {
            let _ = in_back_tx.send(b);
        }
        for b in buffers.outputs.drain(..) {
            let _ = out_back_tx.send(b);
        }
        let src_pack = plan.src_pack;
        let reader = s.spawn(move || {
            let mut first = 0u64;
            while first < n {
                let m = chunk.min(n - first);
                let bytes = src_pack.bytes_for(m) as usize;
                let mut buf = in_back_rx.try_recv().unwrap_or_default();
                if buf.len() < bytes.div_ceil(8) {
                    buf.resize(bytes.div_ceil(8), 0);
                }
                let r = input
                    .read_exact(&mut buf.as_mut_bytes()[..bytes])
                    .map(|()| (buf, m, first));
                let failed = r.is_err();
                if in_tx.send(r).is_err() || failed {
                    break;
                }
                first += m;
            }
            // The receiver of the returned buffers, to collect them once converted.
            in_back_rx
        });
        let writer = s.spawn(move || -> std::io::Result<()> {
            for (buf, bytes) in out_rx {
                output.write_all(&buf.as_bytes()[..bytes])?;
                // The converter may have stopped; then the buffer is simply dropped.
                let _ = out_back_tx.send(buf);
            }
            Ok(())
        });
        let result = (|| -> Result<()> {
            for msg in in_rx {
                let (buf, m, first) = msg.map_err(|e| {
                    if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        Error::Corrupt(format!(
                            "{}: the data ends before the header says it does (truncated file)",
                            io.input_path.display()
                        ))
                    } else {
                        Error::io("read", io.input_path, e)
                    }
                })?;
                let in_bytes = plan.src_pack.bytes_for(m) as usize;
                let out_bytes = plan.dst_pack.bytes_for(m) as usize;
                let mut out = out_back_rx.try_recv().unwrap_or_default();
                if out.len() < out_bytes.div_ceil(8) {
                    out.resize(out_bytes.div_ceil(8), 0);
                }
                let (st, sc) = pool.install(|| {
                    plan.convert_chunk(
                        &buf.as_bytes()[..in_bytes],
                        m,
                        first,
                        &mut out.as_mut_bytes()[..out_bytes],
                    )
                });
                stats.merge(&st);
                scales(&sc)?;
                let _ = in_back_tx.send(buf);
                if out_tx.send((out, out_bytes)).is_err() {
                    // The writer failed: its error is reported below.
                    break;
                }
                progress(in_bytes as u64);
            }
            Ok(())
        })();
        drop(out_tx);
        let written = writer.join().expect("the writer thread does not panic");
        let in_back = reader.join().expect("the reader thread does not panic");
        drop(in_back_tx);
        buffers.inputs.extend(in_back.try_iter());
        buffers.outputs.extend(out_back_rx.try_iter());
        result?;
        written.map_err(|e| Error::io("write", io.output_path, e))?;
        Ok(stats)
    })
}
