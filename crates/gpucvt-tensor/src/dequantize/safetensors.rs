//! Dequantization of a `.safetensors` file: every tensor `NAME` with a scale tensor
//! `NAME_scale` (or DeepSeek's `NAME_scale_inv`), and with NVFP4's `NAME_scale_2`, becomes
//! the exact products `q × s (× s2)` rounded once to the output format; the scale tensors
//! are dropped and every other tensor is copied.

use super::{
    ambiguous, codes, encode, infer, scale_format, scale_words, DequantizeOptions, NotInferred,
};
use crate::chunk::Quantizer;
use crate::dtype::{dense_packing, format_of_safetensors, safetensors_of};
use crate::error::{Error, Result};
use crate::files::output::Temp;
use crate::files::safetensors::header as st;
use crate::files::selfcheck::{self, Hashing, Region};
use crate::options::{msg, Opt};
use crate::scaling::{metadata_key, BlockScaling, ScaleLayout, ScaleRule};
use crate::{Stats, Summary, TensorSummary};
use ::safetensors::tensor::TensorInfo;
use ::safetensors::Dtype;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, F32};
use gpucvt_core::{Policy, Rounding};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The tensors of a `.safetensors` file as the dequantization sees them.
struct Input<'a> {
    file: String,
    path: &'a Path,
    hdr: st::StHeader,
    data_start: u64,
}

/// Dequantizes a `.safetensors` file (see the module).
pub(crate) fn dequantize_safetensors(
    input: &Path,
    output: &Path,
    opts: &DequantizeOptions,
    pool: &rayon::ThreadPool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary> {
    let mut f = File::open(input).map_err(|e| Error::io("open", input, e))?;
    let len = f.metadata().map_err(|e| Error::io("read", input, e))?.len();
    let hdr = st::read_header(&mut f, len, input)?;
    let data_start = f
        .stream_position()
        .map_err(|e| Error::io("read", input, e))?;
    let inp = Input {
        file: input.display().to_string(),
        path: input,
        hdr,
        data_start,
    };
    let (jobs, dropped) = inp.jobs(opts)?;
    let to = opts.to;
    let header = inp.out_header(&jobs, &dropped, &to)?;
    let mut tmp = Temp::new(output)?;
    let mut w = Hashing::new(BufWriter::with_capacity(1 << 20, tmp.file.as_file_mut()));
    w.write_all(&header)
        .map_err(|e| Error::io("write", output, e))?;
    w.take();
    let mut regions = Vec::new();
    let mut at = 0u64;
    let mut summary = Summary {
        kind: "safetensors",
        tensors: Vec::new(),
        copied: Vec::new(),
        kept: Vec::new(),
        notes: Vec::new(),
        total: Stats::default(),
    };
    let mut done = 0u64;
    for (i, (name, info)) in inp.hdr.tensors.iter().enumerate() {
        if dropped.contains(&i) && !jobs.contains_key(&i) {
            continue;
        }
        crate::check_cancel(opts.cancel.as_deref())?;
        let bytes = inp.read(&mut f, info)?;
        done += bytes.len() as u64;
        let data = match jobs.get(&i) {
            None => {
                summary.copied.push(name.clone());
                bytes
            }
            Some(job) => {
                let (data, t) = inp.dequantize(&mut f, job, name, info, &bytes, pool, &to)?;
                summary.tensors.push(t);
                data
            }
        };
        w.write_all(&data)
            .map_err(|e| Error::io("write", output, e))?;
        let (hash, written) = w.take();
        regions.push(Region {
            name: name.clone(),
            start: at,
            len: written,
            hash,
        });
        at += written;
        progress(done, len);
    }
    w.flush().map_err(|e| Error::io("write", output, e))?;
    drop(w);
    for t in &summary.tensors {
        let st = t.stats;
        summary.total.merge(&st);
    }
    selfcheck::verify_safetensors(tmp.file.path(), output, &regions)?;
    crate::check_cancel(opts.cancel.as_deref())?;
    tmp.finish(opts.force)?;
    Ok(summary)
}

impl Input<'_> {
    /// The tensors to dequantize (by index) and every scale tensor they drop.
    fn jobs(&self, opts: &DequantizeOptions) -> Result<(HashMap<usize, Job>, HashSet<usize>)> {
        let index: HashMap<&str, usize> = self
            .hdr
            .tensors
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.as_str(), i))
            .collect();
        let mut jobs = HashMap::new();
        let mut dropped = HashSet::new();
        for (i, (name, info)) in self.hdr.tensors.iter().enumerate() {
            let Some(job) = self.job(opts, &index, name, info)? else {
                continue;
            };
            dropped.insert(job.scale);
            dropped.extend(job.scale_2);
            jobs.insert(i, job);
        }
        if jobs.is_empty() {
            return Err(Error::Invalid(format!(
                "{} has no tensor NAME with a scale tensor NAME_scale to dequantize",
                self.file
            )));
        }
        Ok((jobs, dropped))
    }

    /// The dequantization of tensor `name`, if it has a scale tensor: its format and
    /// blocking (recorded, given or read off the scales' shape), checked.
    fn job(
        &self,
        opts: &DequantizeOptions,
        index: &HashMap<&str, usize>,
        name: &str,
        info: &TensorInfo,
    ) -> Result<Option<Job>> {
        let (file, hdr) = (&self.file, &self.hdr);
        let meta = hdr.metadata.clone().unwrap_or_default();
        let scale = [format!("{name}_scale"), format!("{name}_scale_inv")]
            .into_iter()
            .find_map(|s| index.get(s.as_str()).copied());
        let Some(scale) = scale else {
            return Ok(None);
        };
        let what = format!("{file}: tensor {name:?}");
        let elem = format_of_safetensors(info.dtype)
        .filter(|f| f.is_float() && f.width() <= 16)
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "{what}: it has a scale tensor, but its dtype {:?} is not a float format of at most 16 bits",
                info.dtype
            ))
        })?;
        if let Some(want) = opts.elements {
            if want != elem {
                return Err(Error::Invalid(format!(
                    "{what}: its dtype {:?} holds {elem} elements, not {want}",
                    info.dtype
                )));
            }
        }
        let (sname, sinfo) = &hdr.tensors[scale];
        let format = scale_format(sinfo.dtype).ok_or_else(|| {
        Error::Unsupported(format!(
            "{file}: scale tensor {sname:?} has dtype {:?}; block scales are F8_E8M0, F8_E4M3, F32 or BF16",
            sinfo.dtype
        ))
    })?;
        let scale_2 = index.get(format!("{name}_scale_2").as_str()).copied();
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        let sshape: Vec<u64> = sinfo.shape.iter().map(|&d| d as u64).collect();
        let scaling = match meta.get(&metadata_key(name)) {
            Some(text) => BlockScaling::from_description(text)
                .map_err(|e| Error::Corrupt(format!("{what}: metadata: {e}")))?,
            None => match opts.block {
                Some(b) => b,
                None => {
                    let (block, axis) = infer(&shape, &sshape).map_err(|e| match e {
                    NotInferred::NoFit => Error::Option(msg![
                        format!("{what}: cannot tell how its scales {sname:?} (shape {sshape:?}) block it (shape {shape:?}); give "),
                        Opt::Block,
                        " (and ",
                        Opt::Axis,
                        ")"
                    ]),
                    NotInferred::Ambiguous(sides) => Error::Invalid(ambiguous(
                        &what,
                        &format!("{sname:?}"),
                        &sshape,
                        sides,
                    )),
                })?;
                    BlockScaling {
                        block,
                        axis,
                        format: opts.scale.unwrap_or(format),
                        rule: ScaleRule::Floor,
                        second_level: scale_2.is_some(),
                        layout: ScaleLayout::Rows,
                    }
                }
            },
        };
        if scaling.format != format {
            return Err(Error::Invalid(format!(
                "{what}: its scales {sname:?} are {:?}, not {} scales",
                sinfo.dtype,
                scaling.format.name()
            )));
        }
        let want = scaling.written_shape(&shape);
        if want != sshape {
            return Err(Error::Invalid(format!(
            "{what}: block {} needs scales of shape {want:?}, but {sname:?} has shape {sshape:?}",
            scaling.block.text()
        )));
        }
        if scaling.second_level != scale_2.is_some() {
            return Err(Error::Invalid(format!(
                "{what}: {}",
                if scaling.second_level {
                    format!("its second-level scale {name}_scale_2 is missing")
                } else {
                    format!("{name}_scale_2 is there, but the block scaling has no second level")
                }
            )));
        }
        if let Some(j) = scale_2 {
            let (n2, i2) = &hdr.tensors[j];
            if i2.dtype != Dtype::F32 || i2.shape.iter().product::<usize>() != 1 {
                return Err(Error::Invalid(format!(
                    "{file}: second-level scale {n2:?} must be one F32 value"
                )));
            }
        }
        let conv = Conversion::new(F32, elem, Rounding::RN, Policy::default());
        Quantizer::check(&conv, &scaling, &shape).map_err(|e| e.about(&what))?;
        Ok(Some(Job {
            elem,
            scaling,
            scale,
            scale_2,
        }))
    }

    /// The output header: dequantized tensors in their new dtype, scales dropped, the
    /// blocking metadata of the dequantized ones removed.
    fn out_header(
        &self,
        jobs: &HashMap<usize, Job>,
        dropped: &HashSet<usize>,
        to: &Format,
    ) -> Result<Vec<u8>> {
        let hdr = &self.hdr;
        let out_dtype = out_dtype(to)?;
        let out_bytes = (to.width() / 8) as u64;
        let mut out = Vec::new();
        let mut offset = 0u64;
        for (i, (name, info)) in hdr.tensors.iter().enumerate() {
            if dropped.contains(&i) && !jobs.contains_key(&i) {
                continue;
            }
            let (dtype, bytes) = if jobs.contains_key(&i) {
                (
                    out_dtype,
                    info.shape.iter().product::<usize>() as u64 * out_bytes,
                )
            } else {
                (
                    info.dtype,
                    (info.data_offsets.1 - info.data_offsets.0) as u64,
                )
            };
            out.push((
                name.clone(),
                TensorInfo {
                    dtype,
                    shape: info.shape.clone(),
                    data_offsets: (offset as usize, (offset + bytes) as usize),
                },
            ));
            offset += bytes;
        }
        let mut metadata = hdr.metadata.clone();
        if let Some(m) = metadata.as_mut() {
            for &i in jobs.keys() {
                m.remove(&metadata_key(&hdr.tensors[i].0));
            }
        }
        st::header_bytes(metadata, out)
    }

    /// The bytes of a tensor.
    fn read(&self, f: &mut File, info: &TensorInfo) -> Result<Vec<u8>> {
        let (a, b) = info.data_offsets;
        let mut buf = vec![0u8; b - a];
        f.seek(SeekFrom::Start(self.data_start + a as u64))
            .and_then(|_| f.read_exact(&mut buf))
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    Error::Corrupt(format!(
                        "{}: the data ends early (truncated file)",
                        self.file
                    ))
                } else {
                    Error::io("read", self.path, e)
                }
            })?;
        Ok(buf)
    }

    /// One tensor (its codes `bytes`) multiplied out by its scales and encoded in `to`.
    #[allow(clippy::too_many_arguments)]
    fn dequantize(
        &self,
        f: &mut File,
        job: &Job,
        name: &str,
        info: &TensorInfo,
        bytes: &[u8],
        pool: &rayon::ThreadPool,
        to: &Format,
    ) -> Result<(Vec<u8>, TensorSummary)> {
        let hdr = &self.hdr;
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        let n = shape.iter().product::<u64>() as usize;
        let conv = Conversion::new(F32, job.elem, Rounding::RN, Policy::default());
        let qz = Quantizer::new(conv, &job.scaling, &shape)?;
        let q = codes(dense_packing(&job.elem), bytes, n);
        let sbytes = self.read(f, &hdr.tensors[job.scale].1)?;
        let scales = qz.read_layout(&scale_words(job.scaling.format, &sbytes))?;
        let s2 = match job.scale_2 {
            Some(j) => {
                let b = self.read(f, &hdr.tensors[j].1)?;
                Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            None => None,
        };
        let values = pool.install(|| qz.dequantize(&q, &scales, s2))?;
        let out = pool.install(|| encode(&values, to));
        let t = TensorSummary {
            name: name.to_string(),
            from: job.elem.name.to_string(),
            to: to.name.to_string(),
            dtype: format!("{:?}", out_dtype(to)?),
            shape,
            scale: Some(hdr.tensors[job.scale].0.clone()),
            scale_2: job.scale_2.map(|j| hdr.tensors[j].0.clone()),
            stats: Stats {
                elements: n as u64,
                nan: values.iter().filter(|v| v.is_nan()).count() as u64,
                ..Stats::default()
            },
        };
        Ok((out, t))
    }
}

/// The safetensors dtype of a dequantization's output format.
fn out_dtype(to: &Format) -> Result<Dtype> {
    safetensors_of(to).ok_or_else(|| {
        Error::Internal(format!(
            "{to} has no safetensors dtype; dequantizing to it was not refused"
        ))
    })
}

/// One tensor to dequantize: its element format, scaling, and its scale tensors' indices.
struct Job {
    elem: Format,
    scaling: BlockScaling,
    scale: usize,
    scale_2: Option<usize>,
}
