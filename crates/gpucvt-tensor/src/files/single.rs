//! `.npy` and raw conversions: one tensor, its block scales in a sidecar file, written with
//! its metadata as one unit ([`crate::files::unit`]).

use crate::chunk::{splitmix64, Plan};
use crate::dtype::{self, Packing};
use crate::error::{Error, Result};
use crate::files::finite::{self, Scan};
use crate::files::output::Temp;
use crate::files::selfcheck::{self, Hashing, Region};
use crate::files::unit::{self, Metadata, Part, Unit};
use crate::files::{
    decide, nan_scale_note, npy, raw, refuse_nan_scales, scale_outputs, short_region, Ctx, PlanKey,
    Scaled,
};
use crate::scaling::ScaleFormat;
use crate::stream::quantized::QuantJob;
use crate::{
    check_cancel, metadata_path, scale_2_path, scale_path, FilePlan, Options, PlannedTensor, Stats,
    Summary, TensorSummary,
};
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
    /// The second-level scale's sidecar (NVFP4): path, header and data bytes.
    pub(crate) scale_2: Option<(PathBuf, Vec<u8>, u64)>,
    /// The tensor's largest magnitude (an `f32` encoding), where it was read first
    /// ([`finite::scan`]).
    pub(crate) amax: Option<u32>,
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
            scale_file_bytes: self.scale.as_ref().map(|s| {
                s.1.len() as u64 + s.2 + self.scale_2.as_ref().map_or(0, |s| s.1.len() as u64 + s.2)
            }),
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

/// With block scales other than `ue8m0` the tensor is read on `pool`'s workers first: one
/// holding a NaN or an infinity is refused ([`finite`]).
pub(crate) fn single_layout(
    input: &Path,
    output: &Path,
    opts: &Options,
    f: &mut File,
    len: u64,
    npy: bool,
    pool: &rayon::ThreadPool,
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
    let (conv, dst_pack, scaled) = decide(opts, &file, &i.src, &i.shape, !npy)?
        .map_err(|m| Error::Invalid(format!("{file}: {m}")))?;
    let amax = match scaled {
        Scaled::General(b) if finite::needs_scan(&b) => {
            match finite::scan(f, input, &i.src, i.data_start, n, pool)? {
                Scan::Finite(m) => Some(m),
                Scan::NonFinite(at, v) => {
                    return Err(Error::Invalid(format!(
                        "{file}: {}",
                        finite::reason(&b, &i.shape, at, v)
                    )))
                }
            }
        }
        _ => None,
    };
    let dst = conv.dst;
    let header = if npy {
        npy::header_bytes(dtype::npy_descr_of(&dst), i.fortran, &i.shape)
    } else {
        Vec::new()
    };
    let mut sides = scale_outputs(&i.shape, scaled).into_iter().map(|o| {
        let (descr, path) = match o.format {
            Some(ScaleFormat::Ue8m0 | ScaleFormat::Ue4m3) => ("|u1", scale_path(output)),
            Some(ScaleFormat::Bf16) => ("<u2", scale_path(output)),
            Some(ScaleFormat::F32) => ("<f4", scale_path(output)),
            None => ("<f4", scale_2_path(output)),
        };
        let sheader = if npy {
            npy::header_bytes(descr, false, &o.shape)
        } else {
            Vec::new()
        };
        (path, sheader, o.bytes)
    });
    let (scale, scale_2) = (sides.next(), sides.next());
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
            scaled,
        },
        n,
        dtype_name: if npy {
            dtype::npy_descr_of(&dst).to_string()
        } else {
            format!("raw {dst}")
        },
        header,
        scale,
        scale_2,
        amax,
    })
}

/// The output files of a `.npy` or raw conversion while they are written: the data file and
/// the block scales' sidecar, each a temporary.
struct Outputs {
    out: Temp,
    /// The sidecar and the path it gets.
    side: Option<(Temp, PathBuf)>,
    /// The second-level scale's sidecar and the path it gets.
    side_2: Option<(Temp, PathBuf)>,
}

/// What was written: the hashes of each region, and the statistics.
struct Hashes {
    header: u64,
    data: u64,
    /// The sidecar's header and scales.
    side: Option<(u64, u64)>,
    /// The second sidecar's header and scale.
    side_2: Option<(u64, u64)>,
    stats: Stats,
}

impl Ctx<'_> {
    /// `.npy` or raw: one tensor, scales in a sidecar file.
    pub(crate) fn single(&mut self, f: &mut File, l: SingleLayout) -> Result<Summary> {
        let plan = Plan::new(
            l.key.conv,
            l.key.src_pack,
            l.key.dst_pack,
            l.key.scaled.mx(),
            splitmix64(self.opts.seed),
        );
        let mut outputs = Outputs {
            out: Temp::new(self.output)?,
            side: match &l.scale {
                Some((p, _, _)) => Some((Temp::new(p)?, p.clone())),
                None => None,
            },
            side_2: match &l.scale_2 {
                Some((p, _, _)) => Some((Temp::new(p)?, p.clone())),
                None => None,
            },
        };
        let hashes = self.write_single(f, &l, &plan, &mut outputs)?;
        verify_single(&l, &outputs, &hashes, self.output)?;
        let meta = match l.key.scaled.scaling() {
            Some(scaling) => Some(write_metadata(self.output, &l, &hashes, &scaling)?),
            None => None,
        };
        let scale = outputs.side.as_ref().map(|(_, p)| p.display().to_string());
        let scale_2 = outputs
            .side_2
            .as_ref()
            .map(|(_, p)| p.display().to_string());
        let cancel = self.opts.cancel.as_deref();
        unit::commit(
            &Unit::of(self.output),
            unit::Written {
                data: outputs.out,
                scale: outputs.side.map(|(t, _)| t),
                scale_2: outputs.side_2.map(|(t, _)| t),
                meta,
            },
            self.opts.force,
            &|| check_cancel(cancel),
        )?;
        let stats = hashes.stats;
        let mut total = Stats::default();
        total.merge(&stats);
        refuse_nan_scales(self.opts, &l.name, &stats)?;
        let notes = nan_scale_note(&l.name, &stats).into_iter().collect();
        Ok(Summary {
            kind: if l.npy { "npy" } else { "raw" },
            tensors: vec![TensorSummary {
                name: l.name,
                from: l.src.name.to_string(),
                to: l.key.conv.dst.name.to_string(),
                dtype: l.dtype_name,
                shape: l.shape,
                scale,
                scale_2,
                stats,
            }],
            copied: Vec::new(),
            kept: Vec::new(),
            notes,
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
        let mut side_2 = None;
        let stats = if let Scaled::General(b) = l.key.scaled {
            let job = QuantJob {
                key: &l.key,
                scaling: b,
                shape: &l.shape,
                stream: splitmix64(self.opts.seed),
                amax: l.amax,
            };
            let qd = self.quantize_streamed(f, &job, &mut w, &out_path)?;
            if let Some(sw) = sw.as_mut() {
                sw.write_all(&qd.scales)
                    .map_err(|e| Error::io("write", &side_path, e))?;
            }
            if let (Some(bytes), Some((t, p)), Some((_, sheader, _))) =
                (qd.scale_2, o.side_2.as_mut(), &l.scale_2)
            {
                let mut w2 = Hashing::new(BufWriter::new(t.file.as_file_mut()));
                w2.write_all(sheader)
                    .map_err(|e| Error::io("write", p, e))?;
                let (h, _) = w2.take();
                w2.write_all(&bytes)
                    .and_then(|_| w2.flush())
                    .map_err(|e| Error::io("write", p, e))?;
                side_2 = Some((h, w2.take().0));
            }
            qd.stats
        } else {
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
            side_2,
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
    if let (Some((header_hash, hash)), Some((_, sheader, sbytes)), Some((t, p))) =
        (h.side_2, &l.scale_2, o.side_2.as_ref())
    {
        let shlen = sheader.len() as u64;
        let regions = [
            Region {
                name: "the second-level scale file's header".into(),
                start: 0,
                len: shlen,
                hash: header_hash,
            },
            Region {
                name: "the second-level scale".into(),
                start: shlen,
                len: *sbytes,
                hash,
            },
        ];
        selfcheck::verify_regions(t.file.path(), p, shlen + sbytes, &regions)?;
    }
    Ok(())
}

/// The unit's metadata ([`Metadata`]) written to a temporary beside `output` and read back.
fn write_metadata(
    output: &Path,
    l: &SingleLayout,
    h: &Hashes,
    scaling: &crate::scaling::BlockScaling,
) -> Result<Temp> {
    let part = |side: &Option<(PathBuf, Vec<u8>, u64)>, hash: Option<(u64, u64)>| {
        side.as_ref()
            .zip(hash)
            .map(|((p, _, bytes), (_, hash))| Part::new(p, *bytes, hash))
    };
    let scale = part(&l.scale, h.side).ok_or_else(|| {
        crate::Error::Internal(format!(
            "{}: a block-scaled output without its scales (please report this)",
            output.display()
        ))
    })?;
    let meta = Metadata {
        gpucvt: unit::KIND.to_string(),
        elements: l.key.conv.dst.name.to_string(),
        shape: l.shape.clone(),
        scaling: scaling.describe(),
        data: Part::new(output, l.data_bytes(), h.data),
        scale,
        scale_2: part(&l.scale_2, h.side_2),
    };
    let mut text = serde_json::to_vec_pretty(&meta)
        .map_err(|e| crate::Error::Internal(format!("cannot write the metadata: {e}")))?;
    text.push(b'\n');
    let path = metadata_path(output);
    let mut t = Temp::new(&path)?;
    t.file
        .as_file_mut()
        .write_all(&text)
        .and_then(|_| t.file.as_file_mut().flush())
        .map_err(|e| Error::io("write", &path, e))?;
    let back = std::fs::read(t.file.path()).map_err(|e| Error::io("read", &path, e))?;
    if back != text {
        return Err(Error::Internal(format!(
            "{}: the written file does not read back as written; no output was kept (please report this)",
            path.display()
        )));
    }
    Ok(t)
}
