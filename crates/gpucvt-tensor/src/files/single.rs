//! `.npy` and raw conversions: one tensor, its block scales in a sidecar file.

use crate::dtype::{self, Packing};
use crate::engine::{splitmix64, Plan};
use crate::error::{Error, Result};
use crate::files::selfcheck::{self, Hashing, Region};
use crate::files::{decide, npy, raw, short_region, Ctx, PlanKey};
use crate::output::Temp;
use crate::{scale_path, FilePlan, Options, PlannedTensor, Stats, Summary, TensorSummary};
use gpucvt_core::format::Format;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The output of a `.npy` or raw conversion: one tensor, scales in a sidecar file.
pub(crate) struct SingleLayout {
    pub(crate) npy: bool,
    pub(crate) name: String,
    pub(crate) src: Format,
    pub(crate) in_dtype: String,
    pub(crate) shape: Vec<u64>,
    pub(crate) data_start: u64,
    pub(crate) key: PlanKey,
    pub(crate) n: u64,
    pub(crate) dtype_name: String,
    /// The output's header (`.npy`; empty for raw).
    pub(crate) header: Vec<u8>,
    /// The sidecar's path, header and data bytes.
    pub(crate) scale: Option<(PathBuf, Vec<u8>, u64)>,
}

impl SingleLayout {
    pub(crate) fn data_bytes(&self) -> u64 {
        self.key.dst_pack.bytes_for(self.n)
    }

    pub(crate) fn plan(&self) -> FilePlan {
        FilePlan {
            kind: if self.npy { "npy" } else { "raw" },
            tensors: vec![PlannedTensor {
                name: self.name.clone(),
                action: "convert",
                reason: None,
                input_dtype: self.in_dtype.clone(),
                dtype: self.dtype_name.clone(),
                shape: self.shape.clone(),
                bytes: self.data_bytes(),
                scale: self.scale.as_ref().map(|s| s.0.display().to_string()),
                scale_bytes: self.scale.as_ref().map(|s| s.2),
            }],
            output_bytes: self.header.len() as u64 + self.data_bytes(),
            scale_file_bytes: self.scale.as_ref().map(|s| s.1.len() as u64 + s.2),
        }
    }
}

/// The one tensor of a `.npy` or raw input, as its header (or `--from`) gives it.
pub(crate) struct Input {
    pub(crate) src: Format,
    /// The input's dtype as the summary names it (`<f4`, `raw f32`).
    pub(crate) dtype: String,
    pub(crate) shape: Vec<u64>,
    pub(crate) fortran: bool,
    /// Where the data starts (after the `.npy` header).
    pub(crate) data_start: u64,
    pub(crate) pack: Packing,
}

pub(crate) fn single_layout(
    input: &Path,
    output: &Path,
    opts: &Options,
    f: &mut File,
    len: u64,
    npy: bool,
) -> Result<SingleLayout> {
    let file = input.display().to_string();
    let i = if npy {
        npy::read_input(f, &file, len, opts)?
    } else {
        raw::read_input(&file, len, opts)?
    };
    let n: u64 = i.shape.iter().product();
    let name = input
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (conv, dst_pack, block) = decide(opts, &file, &i.src, &i.shape, !npy)?
        .map_err(|m| Error::Invalid(format!("{file}: {m}")))?;
    let dst = conv.dst;
    let header = if npy {
        npy::header_bytes(dtype::npy_descr_of(&dst), i.fortran, &i.shape)
    } else {
        Vec::new()
    };
    let scale = block.map(|(size, _)| {
        let sheader = if npy {
            npy::header_bytes("|u1", false, &scale_shape(&i.shape, size))
        } else {
            Vec::new()
        };
        (scale_path(output), sheader, n / size)
    });
    Ok(SingleLayout {
        npy,
        name,
        src: i.src,
        in_dtype: i.dtype,
        shape: i.shape,
        data_start: i.data_start,
        key: PlanKey {
            conv,
            src_pack: i.pack,
            dst_pack,
            block,
        },
        n,
        dtype_name: if npy {
            dtype::npy_descr_of(&dst).to_string()
        } else {
            format!("raw {dst}")
        },
        header,
        scale,
    })
}

/// The shape of the block scales of a tensor of `shape`: its last dimension divided by the
/// block size.
fn scale_shape(shape: &[u64], size: u64) -> Vec<u64> {
    let mut s = shape.to_vec();
    if let Some(l) = s.last_mut() {
        *l /= size;
    }
    s
}

/// The output files of a `.npy` or raw conversion while they are written: the data file and
/// the block scales' sidecar, each a temporary.
struct Outputs {
    out: Temp,
    /// The sidecar and the path it gets.
    side: Option<(Temp, PathBuf)>,
}

/// What was written: the hashes of each region, and the statistics.
struct Hashes {
    header: u64,
    data: u64,
    /// The sidecar's header and scales.
    side: Option<(u64, u64)>,
    stats: Stats,
}

impl Ctx<'_> {
    /// `.npy` or raw: one tensor, scales in a sidecar file.
    pub(crate) fn single(&mut self, f: &mut File, l: SingleLayout) -> Result<Summary> {
        let plan = Plan::new(
            l.key.conv,
            l.key.src_pack,
            l.key.dst_pack,
            l.key.block,
            splitmix64(self.opts.seed),
        );
        let mut outputs = Outputs {
            out: Temp::new(self.output)?,
            side: match &l.scale {
                Some((p, _, _)) => Some((Temp::new(p)?, p.clone())),
                None => None,
            },
        };
        let hashes = self.write_single(f, &l, &plan, &mut outputs)?;
        verify_single(&l, &outputs, &hashes, self.output)?;
        let scale = outputs.finish(&l)?;
        let stats = hashes.stats;
        let mut total = Stats::default();
        total.merge(&stats);
        Ok(Summary {
            kind: if l.npy { "npy" } else { "raw" },
            tensors: vec![TensorSummary {
                name: l.name,
                from: l.src.name.to_string(),
                to: l.key.conv.dst.name.to_string(),
                dtype: l.dtype_name,
                shape: l.shape,
                scale,
                stats,
            }],
            copied: Vec::new(),
            kept: Vec::new(),
            notes: Vec::new(),
            total,
        })
    }

    /// Writes the output's header and data, and the sidecar's header and scales, checking
    /// that each has the planned size.
    fn write_single(
        &mut self,
        f: &mut File,
        l: &SingleLayout,
        plan: &Plan,
        o: &mut Outputs,
    ) -> Result<Hashes> {
        let out_path = self.output.to_path_buf();
        let mut w = Hashing::new(BufWriter::with_capacity(1 << 20, o.out.file.as_file_mut()));
        w.write_all(&l.header)
            .map_err(|e| Error::io("write", &out_path, e))?;
        let (header_hash, _) = w.take();
        let mut sw = o
            .side
            .as_mut()
            .map(|(t, _)| Hashing::new(BufWriter::with_capacity(1 << 20, t.file.as_file_mut())));
        let side_path = l.scale.as_ref().map(|s| s.0.clone()).unwrap_or_default();
        let mut side_header_hash = 0;
        if let (Some(sw), Some((_, sheader, _))) = (sw.as_mut(), &l.scale) {
            sw.write_all(sheader)
                .map_err(|e| Error::io("write", &side_path, e))?;
            side_header_hash = sw.take().0;
        }
        f.seek(SeekFrom::Start(l.data_start))
            .map_err(|e| Error::io("read", self.input, e))?;
        self.tick(l.data_start);
        let stats = {
            let sp = side_path.clone();
            let mut scales = |b: &[u8]| -> Result<()> {
                if let Some(sw) = sw.as_mut() {
                    sw.write_all(b).map_err(|e| Error::io("write", &sp, e))?;
                }
                Ok(())
            };
            self.stream(plan, f, l.n, &mut w, &mut scales)?
        };
        let (data_hash, written) = w.take();
        w.flush().map_err(|e| Error::io("write", &out_path, e))?;
        drop(w);
        if written != l.data_bytes() {
            return Err(short_region(&out_path, "the data", l.data_bytes(), written));
        }
        let side = match (sw, &l.scale) {
            (Some(mut sw), Some((_, _, sbytes))) => {
                let (h, written) = sw.take();
                sw.flush().map_err(|e| Error::io("write", &side_path, e))?;
                if written != *sbytes {
                    return Err(short_region(&side_path, "the scales", *sbytes, written));
                }
                Some((side_header_hash, h))
            }
            _ => None,
        };
        Ok(Hashes {
            header: header_hash,
            data: data_hash,
            side,
            stats,
        })
    }
}

/// Reads the output and the sidecar back and compares their regions with what was written.
fn verify_single(l: &SingleLayout, o: &Outputs, h: &Hashes, out_path: &Path) -> Result<()> {
    let hlen = l.header.len() as u64;
    selfcheck::verify_regions(
        o.out.file.path(),
        out_path,
        hlen + l.data_bytes(),
        &[
            Region {
                name: "the header".into(),
                start: 0,
                len: hlen,
                hash: h.header,
            },
            Region {
                name: "the data".into(),
                start: hlen,
                len: l.data_bytes(),
                hash: h.data,
            },
        ],
    )?;
    if let (Some((header_hash, scales_hash)), Some((_, sheader, sbytes)), Some((t, p))) =
        (h.side, &l.scale, o.side.as_ref())
    {
        let shlen = sheader.len() as u64;
        let regions = [
            Region {
                name: "the scale file's header".into(),
                start: 0,
                len: shlen,
                hash: header_hash,
            },
            Region {
                name: "the scales".into(),
                start: shlen,
                len: *sbytes,
                hash: scales_hash,
            },
        ];
        selfcheck::verify_regions(t.file.path(), p, shlen + sbytes, &regions)?;
    }
    Ok(())
}

impl Outputs {
    /// Renames the sidecar, then the output, into place (the sidecar is removed again if the
    /// output cannot be); returns the sidecar's path as the summary shows it.
    fn finish(self, l: &SingleLayout) -> Result<Option<String>> {
        let scale = self.side.as_ref().map(|(_, p)| p.display().to_string());
        if let Some((s, _)) = self.side {
            s.finish()?;
        }
        if let Err(e) = self.out.finish() {
            if let Some((p, _, _)) = &l.scale {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
        Ok(scale)
    }
}
