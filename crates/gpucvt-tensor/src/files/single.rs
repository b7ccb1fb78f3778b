//! `.npy` and raw conversions: one tensor, its block scales in a sidecar file.

use crate::dtype::{self, container_bytes, dense_packing, Packing};
use crate::engine::{splitmix64, Plan};
use crate::error::{Error, Result};
use crate::files::selfcheck::{self, Hashing, Region};
use crate::files::{decide, npy, shape_text, short_region, Ctx, PlanKey};
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

pub(crate) fn single_layout(
    input: &Path,
    output: &Path,
    opts: &Options,
    f: &mut File,
    len: u64,
    npy: bool,
) -> Result<SingleLayout> {
    let file = input.display().to_string();
    let (src, in_dtype, shape, fortran, data_start, src_pack) = if npy {
        let h = npy::read_header(f, &file)?;
        if h.descr == "<structured>" {
            return Err(Error::Unsupported(format!(
                "{file}: a structured dtype cannot be converted; numeric little-endian dtypes (<f8 <f4 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8) can"
            )));
        }
        let itemsize = dtype::npy_itemsize(&h.descr);
        let src = match opts.from {
            Some(fmt) => {
                let numeric = dtype::format_of_npy(&h.descr).is_some();
                if !numeric || itemsize != Some(container_bytes(&fmt)) {
                    return Err(Error::Invalid(format!(
                        "{file}: dtype {} cannot hold {fmt} encodings; {fmt} needs a {}-byte little-endian integer container",
                        h.descr,
                        container_bytes(&fmt)
                    )));
                }
                fmt
            }
            None => dtype::format_of_npy(&h.descr).ok_or_else(|| {
                Error::Unsupported(format!(
                    "{file}: dtype {:?} cannot be converted; numeric little-endian dtypes (<f8 <f4 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8) can",
                    h.descr
                ))
            })?,
        };
        let item = itemsize.unwrap_or(0) as u64;
        let n = h
            .elements()
            .ok_or_else(|| Error::Corrupt(format!("{file}: the shape {:?} overflows", h.shape)))?;
        let need = n.checked_mul(item);
        let have = len.saturating_sub(h.header_len);
        if need != Some(have) {
            return Err(Error::Corrupt(format!(
                "{file}: shape {} of {} needs {} bytes of data but the file has {have}{}",
                shape_text(&h.shape),
                h.descr,
                need.map_or("too many".into(), |b| b.to_string()),
                if need.is_some_and(|b| have < b) {
                    " (truncated file)"
                } else {
                    ""
                }
            )));
        }
        if h.fortran_order && opts.block.is_some() {
            return Err(Error::Unsupported(format!(
                "{file}: block scaling needs C order (the blocks run along the last axis), this array is in Fortran order"
            )));
        }
        (
            src,
            h.descr.clone(),
            h.shape,
            h.fortran_order,
            h.header_len,
            Packing::Bytes(item as usize),
        )
    } else {
        let src = opts.from.ok_or_else(|| {
            Error::Invalid(format!(
                "{file} is raw data (not .npy or .safetensors): give its element format (for example f32)"
            ))
        })?;
        let pack = dense_packing(&src);
        let bits = len * 8;
        if !bits.is_multiple_of(pack.bits()) || !(bits / pack.bits()).is_multiple_of(pack.unit()) {
            return Err(Error::Corrupt(format!(
                "{file}: {len} bytes is not a whole number of {src} elements ({} bits each{})",
                pack.bits(),
                if pack.unit() > 1 {
                    format!(
                        ", packed {} per {} bytes",
                        pack.unit(),
                        pack.bytes_for(pack.unit())
                    )
                } else {
                    String::new()
                }
            )));
        }
        (
            src,
            format!("raw {src}"),
            vec![bits / pack.bits()],
            false,
            0,
            pack,
        )
    };
    let n: u64 = shape.iter().product();
    let name = input
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (conv, dst_pack, block) = decide(opts, &file, &src, &shape, !npy)?
        .map_err(|m| Error::Invalid(format!("{file}: {m}")))?;
    let dst = conv.dst;
    let header = if npy {
        npy::header_bytes(dtype::npy_descr_of(&dst), fortran, &shape)
    } else {
        Vec::new()
    };
    let scale = block.map(|(size, _)| {
        let sbytes = n / size;
        let sheader = if npy {
            let mut sshape = shape.clone();
            if let Some(l) = sshape.last_mut() {
                *l /= size;
            }
            npy::header_bytes("|u1", false, &sshape)
        } else {
            Vec::new()
        };
        (scale_path(output), sheader, sbytes)
    });
    Ok(SingleLayout {
        npy,
        name,
        src,
        in_dtype,
        shape,
        data_start,
        key: PlanKey {
            conv,
            src_pack,
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
        let out_path = self.output.to_path_buf();
        let mut out = Temp::new(self.output)?;
        let mut side = match &l.scale {
            Some((p, _, _)) => Some((Temp::new(p)?, p.clone())),
            None => None,
        };
        let mut w = Hashing::new(BufWriter::with_capacity(1 << 20, out.file.as_file_mut()));
        w.write_all(&l.header)
            .map_err(|e| Error::io("write", &out_path, e))?;
        let (header_hash, _) = w.take();
        let mut sw = side
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
            self.stream(&plan, f, l.n, &mut w, &mut scales)?
        };
        let (data_hash, written) = w.take();
        w.flush().map_err(|e| Error::io("write", &out_path, e))?;
        drop(w);
        let hlen = l.header.len() as u64;
        if written != l.data_bytes() {
            return Err(short_region(&out_path, "the data", l.data_bytes(), written));
        }
        let side_check = match (sw, &l.scale) {
            (Some(mut sw), Some((_, sheader, sbytes))) => {
                let (h, written) = sw.take();
                sw.flush().map_err(|e| Error::io("write", &side_path, e))?;
                if written != *sbytes {
                    return Err(short_region(&side_path, "the scales", *sbytes, written));
                }
                let shlen = sheader.len() as u64;
                Some((
                    shlen + sbytes,
                    [
                        Region {
                            name: "the scale file's header".into(),
                            start: 0,
                            len: shlen,
                            hash: side_header_hash,
                        },
                        Region {
                            name: "the scales".into(),
                            start: shlen,
                            len: *sbytes,
                            hash: h,
                        },
                    ],
                ))
            }
            _ => None,
        };
        selfcheck::verify_regions(
            out.file.path(),
            &out_path,
            hlen + l.data_bytes(),
            &[
                Region {
                    name: "the header".into(),
                    start: 0,
                    len: hlen,
                    hash: header_hash,
                },
                Region {
                    name: "the data".into(),
                    start: hlen,
                    len: l.data_bytes(),
                    hash: data_hash,
                },
            ],
        )?;
        if let (Some((total, regions)), Some((t, p))) = (&side_check, side.as_ref()) {
            selfcheck::verify_regions(t.file.path(), p, *total, regions)?;
        }
        let scale = side.as_ref().map(|(_, p)| p.display().to_string());
        if let Some((s, _)) = side {
            s.finish()?;
        }
        if let Err(e) = out.finish() {
            if let Some((p, _, _)) = &l.scale {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
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
}
