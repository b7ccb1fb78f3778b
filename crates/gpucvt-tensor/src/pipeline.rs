//! The streaming pipeline of one tensor: a reader thread, the conversion of each chunk on the
//! caller's thread pool, and a writer thread, connected by bounded channels so that reading,
//! converting and writing overlap while at most a few chunks are in memory.

use crate::engine::Plan;
use crate::error::{Error, Result};
use crate::Stats;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel};

/// Input bytes per chunk (about): big enough to amortise the hand-offs, small enough that the
/// chunks in flight (at most ~4 input and ~4 output buffers) stay far below the memory bound.
pub(crate) const CHUNK_BYTES: u64 = 8 << 20;

/// Where the data goes and where messages point.
pub(crate) struct Io<'a> {
    pub input_path: &'a Path,
    pub output_path: &'a Path,
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
) -> Result<Stats> {
    let sub = plan.sub_elements();
    let per = plan.src_pack.bits().max(plan.dst_pack.bits()).max(8) / 8;
    let chunk = (CHUNK_BYTES / per).div_ceil(sub).max(1) * sub;
    let mut stats = Stats::default();
    if n == 0 {
        return Ok(stats);
    }
    std::thread::scope(|s| -> Result<Stats> {
        let (in_tx, in_rx) = sync_channel::<std::io::Result<(Vec<u8>, u64, u64)>>(2);
        let (in_back_tx, in_back_rx) = channel::<Vec<u8>>();
        let (out_tx, out_rx) = sync_channel::<Vec<u8>>(2);
        let (out_back_tx, out_back_rx) = channel::<Vec<u8>>();
        let src_pack = plan.src_pack;
        let reader = s.spawn(move || {
            let mut first = 0u64;
            while first < n {
                let m = chunk.min(n - first);
                let mut buf = in_back_rx.try_recv().unwrap_or_default();
                buf.resize(src_pack.bytes_for(m) as usize, 0);
                let r = input.read_exact(&mut buf).map(|()| (buf, m, first));
                let failed = r.is_err();
                if in_tx.send(r).is_err() || failed {
                    return;
                }
                first += m;
            }
        });
        let writer = s.spawn(move || -> std::io::Result<()> {
            for buf in out_rx {
                output.write_all(&buf)?;
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
                let mut out = out_back_rx.try_recv().unwrap_or_default();
                let (st, sc) = pool.install(|| plan.convert_chunk(&buf, m, first, &mut out));
                stats.merge(&st);
                scales(&sc)?;
                let bytes = buf.len() as u64;
                let _ = in_back_tx.send(buf);
                if out_tx.send(out).is_err() {
                    // The writer failed: its error is reported below.
                    break;
                }
                progress(bytes);
            }
            Ok(())
        })();
        drop(out_tx);
        let written = writer.join().expect("the writer thread does not panic");
        let _ = reader.join();
        result?;
        written.map_err(|e| Error::io("write", io.output_path, e))?;
        Ok(stats)
    })
}
