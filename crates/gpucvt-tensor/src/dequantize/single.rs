//! Dequantization of a `.npy` or raw file that was block-scaled: the element file with the
//! sidecars `convert` writes beside it (`X_scale.EXT`, and `X_scale_2.EXT` with a second
//! level), and the metadata file `X.EXT.gpucvt.json` that records how it was blocked and a
//! checksum of each part ([`crate::files::unit`]): the blocking is read from it, and parts
//! that do not match it are refused. Without a metadata file (a file gpucvt did not write)
//! the blocking comes from the options; a `.npy` scale array's shape (and dtype) can tell
//! it too where it is unambiguous, as a safetensors scale tensor's can. The output is one
//! file of the input's kind.

use super::{ambiguous, codes, encode, infer, scale_words, DequantizeOptions, NotInferred};
use crate::chunk::Quantizer;
use crate::dtype::{self, container_bytes, dense_packing, format_of_npy, Packing};
use crate::error::{Error, Result};
use crate::files::output::{refuse_same, Temp};
use crate::files::selfcheck::{self, Hashing, Region};
use crate::files::unit::{self, read_metadata, Unit, UnitLock};
use crate::files::{npy, shape_text};
use crate::options::{msg, Opt};
use crate::scaling::{BlockScaling, ScaleFormat, ScaleLayout, ScaleRule};
use crate::{check_cancel, metadata_path, scale_2_path, scale_path, Stats, Summary, TensorSummary};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, F32};
use gpucvt_core::{Policy, Rounding};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The element file: its element format, shape, where its data starts and how it is packed.
struct Elements {
    elem: Format,
    shape: Vec<u64>,
    data_start: u64,
    pack: Packing,
}

/// A sidecar file opened, or `None` if there is none; anything but a regular file is an
/// error (a FIFO would block the read).
fn open_sidecar(path: &Path) -> Result<Option<(File, u64)>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
        Ok(m) if !m.is_file() => Err(Error::Invalid(format!(
            "the scale file {} is not a regular file",
            path.display()
        ))),
        Ok(m) => {
            let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
            Ok(Some((f, m.len())))
        }
    }
}

fn read_exact(f: &mut File, path: &Path, n: u64) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; n as usize];
    f.read_exact(&mut buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::Corrupt(format!(
                "{}: the data ends early (truncated file)",
                path.display()
            ))
        } else {
            Error::io("read", path, e)
        }
    })?;
    Ok(buf)
}

/// The `.npy` dtype the quantizer writes scales of `format` in.
fn scale_descr(format: ScaleFormat) -> &'static str {
    match format {
        ScaleFormat::Ue8m0 | ScaleFormat::Ue4m3 => "|u1",
        ScaleFormat::Bf16 => "<u2",
        ScaleFormat::F32 => "<f4",
    }
}

/// Reads the element file's header (`.npy`) or size (raw, with the element format given).
fn elements(
    f: &mut File,
    file: &str,
    len: u64,
    given: Option<Format>,
    npy: bool,
) -> Result<Elements> {
    let e = if npy {
        let h = npy::read_header(f, file)?;
        let item = dtype::npy_itemsize(&h.descr);
        let elem = match (given, format_of_npy(&h.descr)) {
            (_, None) => {
                return Err(Error::Unsupported(format!(
                    "{file}: dtype {:?} cannot hold quantized elements; numeric little-endian dtypes (|u1 <u2 <f2 …) can",
                    h.descr
                )))
            }
            (Some(fmt), Some(_)) => {
                if item != Some(container_bytes(&fmt)) {
                    return Err(Error::Invalid(format!(
                        "{file}: dtype {} cannot hold {fmt} encodings; {fmt} needs a {}-byte little-endian container",
                        h.descr,
                        container_bytes(&fmt)
                    )));
                }
                fmt
            }
            (None, Some(fmt)) if fmt.is_float() => fmt,
            (None, Some(_)) => {
                return Err(Error::Option(msg![
                    format!("{file}: dtype {} holds the codes of some element format: say which with ", h.descr),
                    Opt::From,
                    " (e4m3, e5m2, e2m1, e2m3, e3m2, bf16, …) or ",
                    Opt::Recipe
                ]))
            }
        };
        if h.fortran_order {
            return Err(Error::Unsupported(format!(
                "{file}: block scales run over C-order data; this array is in Fortran order"
            )));
        }
        let item = item.unwrap_or(0) as u64;
        h.data_elements(file, item, len)?;
        Elements {
            elem,
            shape: h.shape,
            data_start: h.header_len,
            pack: Packing::Bytes(item as usize),
        }
    } else {
        let elem = given.ok_or_else(|| {
            Error::Option(msg![
                format!("{file} is raw data (not .npy or .safetensors): give the format of its elements with "),
                Opt::From,
                " (e4m3, e2m1, …) or ",
                Opt::Recipe
            ])
        })?;
        let pack = dense_packing(&elem);
        let bits = len * 8;
        if !bits.is_multiple_of(pack.bits()) || !(bits / pack.bits()).is_multiple_of(pack.unit()) {
            return Err(Error::Corrupt(format!(
                "{file}: {len} bytes is not a whole number of packed {elem} elements"
            )));
        }
        Elements {
            elem,
            shape: vec![bits / pack.bits()],
            data_start: 0,
            pack,
        }
    };
    if !(e.elem.is_float() && e.elem.width() <= 16) {
        return Err(Error::Unsupported(format!(
            "{file}: its elements are {}; block-scaled elements are float formats of at most 16 bits",
            e.elem
        )));
    }
    Ok(e)
}

/// The error for metadata `meta` that does not describe the data file `file`.
fn not_its(file: &str, meta: &Path, why: String) -> Error {
    Error::Corrupt(format!(
        "{file} does not match its metadata {}: {why}",
        meta.display()
    ))
}

/// Where a `.npy` or raw input's parts are, and what its metadata records.
struct Parts {
    /// The data file, as messages name it.
    file: String,
    /// The scales, the second-level scale and the metadata file.
    sp: PathBuf,
    sp2: PathBuf,
    mp: PathBuf,
    recorded: Option<unit::Recorded>,
    npy: bool,
}

/// Dequantizes a `.npy` (`npy`) or raw file with its sidecar scale files (see the module).
pub(crate) fn dequantize_single(
    input: &Path,
    output: &Path,
    opts: &DequantizeOptions,
    pool: &rayon::ThreadPool,
    progress: &mut dyn FnMut(u64, u64),
    npy: bool,
) -> Result<Summary> {
    let (sp, sp2, mp) = (scale_path(input), scale_2_path(input), metadata_path(input));
    for (side, what) in [(&sp, "scale"), (&sp2, "scale"), (&mp, "metadata")] {
        refuse_same(side, output).map_err(|_| {
            Error::Invalid(format!(
                "the output {} is the input's {what} file {}; choose another output path",
                output.display(),
                side.display()
            ))
        })?;
    }
    // Every part is opened under the unit's shared lock (a writer renames its parts in
    // under the exclusive one); once open, a rename does not change what is read.
    let lock = UnitLock::shared(input);
    let mut f = File::open(input).map_err(|e| Error::io("open", input, e))?;
    let len = f.metadata().map_err(|e| Error::io("read", input, e))?.len();
    let recorded = read_metadata(&mp)?;
    let side = open_sidecar(&sp)?;
    let side_2 = open_sidecar(&sp2)?;
    lock.release();
    let p = Parts {
        file: input.display().to_string(),
        sp,
        sp2,
        mp,
        recorded,
        npy,
    };
    let el = p.elements(&mut f, len, opts)?;
    let (mut sf, slen) = side.ok_or_else(|| {
        Error::Invalid(format!(
            "{}: its block scales {} are missing (gpucvt convert writes them beside the quantized file: the name with _scale before the extension)",
            p.file,
            p.sp.display()
        ))
    })?;
    p.check_recorded(&el, side_2.is_some())?;
    let s2 = match side_2 {
        None => None,
        Some(side) => Some(p.second_level(side)?),
    };
    let (sdescr, sshape, sstart) = p.scale_header(&mut sf)?;
    let scaling = p.blocking(opts, &el, sdescr.as_deref(), &sshape, s2.is_some())?;
    let count = p.check_scale_file(&scaling, &el, sdescr.as_deref(), &sshape, sstart, slen)?;
    let conv = Conversion::new(F32, el.elem, Rounding::RN, Policy::default());
    Quantizer::check(&conv, &scaling, &el.shape).map_err(|e| e.about(&p.file))?;
    let qz = Quantizer::new(conv, &scaling, &el.shape)?;
    let q = p.codes(&mut f, input, len, &el)?;
    progress(len, len);
    let written = p.scales(&mut sf, &scaling, sstart, count, s2)?;
    check_cancel(opts.cancel.as_deref())?;
    let scales = qz.read_layout(&written)?;
    let values = pool.install(|| qz.dequantize(&q, &scales, s2))?;
    drop(q);
    check_cancel(opts.cancel.as_deref())?;
    let to = opts.to;
    let data = pool.install(|| encode(&values, &to));
    let nan = values.iter().filter(|v| v.is_nan()).count() as u64;
    drop(values);
    write_output(output, opts, npy, &el.shape, &data)?;
    Ok(p.summary(input, el, to, nan, s2.is_some()))
}

impl Parts {
    /// The data file's elements: the format given, or recorded (they must agree).
    fn elements(&self, f: &mut File, len: u64, opts: &DequantizeOptions) -> Result<Elements> {
        let given = match (opts.elements, self.recorded.as_ref().map(|r| r.elements)) {
            (Some(a), Some(b)) if a != b => {
                return Err(Error::Invalid(format!(
                    "{}: its metadata {} records {b} elements, not {a}",
                    self.file,
                    self.mp.display()
                )))
            }
            (a, b) => a.or(b),
        };
        elements(f, &self.file, len, given, self.npy)
    }

    /// The data's shape and the second-level scale's presence against the metadata.
    fn check_recorded(&self, el: &Elements, has_scale_2: bool) -> Result<()> {
        let (file, mp, sp2) = (&self.file, &self.mp, &self.sp2);
        if let Some(r) = &self.recorded {
            if el.shape != r.meta.shape {
                return Err(not_its(
                    file,
                    mp,
                    format!(
                        "it records the shape {}, and the data has the shape {}",
                        shape_text(&r.meta.shape),
                        shape_text(&el.shape)
                    ),
                ));
            }
            if r.meta.scale_2.is_none() && has_scale_2 {
                return Err(Error::Corrupt(format!(
                    "{} does not belong to {file}: its metadata {} records no second-level scale",
                    sp2.display(),
                    mp.display()
                )));
            }
        }
        Ok(())
    }

    /// The second-level scale: one f32.
    fn second_level(&self, (mut f2, len2): (File, u64)) -> Result<f32> {
        let (sp2, npy) = (&self.sp2, self.npy);
        let what = || {
            format!(
                "{}: a second-level scale file holds one f32 value{}",
                sp2.display(),
                if npy {
                    " (<f4, shape ())"
                } else {
                    " (4 bytes)"
                }
            )
        };
        let start = if npy {
            let h = npy::read_header(&mut f2, &sp2.display().to_string())?;
            if format_of_npy(&h.descr) != Some(F32) || h.elements() != Some(1) {
                return Err(Error::Invalid(format!(
                    "{}, not {} of shape {}",
                    what(),
                    h.descr,
                    shape_text(&h.shape)
                )));
            }
            h.header_len
        } else {
            0
        };
        if len2 != start + 4 {
            return Err(Error::Invalid(format!(
                "{}; it has {} bytes of data",
                what(),
                len2.saturating_sub(start)
            )));
        }
        let b = read_exact(&mut f2, sp2, 4)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The scale file's dtype, shape and data start (`.npy`), or nothing of them (raw).
    fn scale_header(&self, sf: &mut File) -> Result<(Option<String>, Vec<u64>, u64)> {
        let (sp, npy) = (&self.sp, self.npy);
        Ok(if npy {
            let h = npy::read_header(sf, &sp.display().to_string())?;
            if h.fortran_order && h.shape.iter().filter(|&&d| d > 1).count() > 1 {
                return Err(Error::Unsupported(format!(
                    "{}: the scales are in Fortran order; the quantizer writes them in C order",
                    sp.display()
                )));
            }
            (Some(h.descr), h.shape, h.header_len)
        } else {
            (None, Vec::new(), 0)
        })
    }

    /// The blocking: recorded (the options may only repeat it), given, or read off the
    /// scales' shape and dtype; checked against the second-level scale's presence.
    fn blocking(
        &self,
        opts: &DequantizeOptions,
        el: &Elements,
        sdescr: Option<&str>,
        sshape: &[u64],
        second: bool,
    ) -> Result<BlockScaling> {
        let (file, sp, sp2, mp, npy) = (&self.file, &self.sp, &self.sp2, &self.mp, self.npy);
        let scaling = match (&self.recorded, opts.block) {
            (Some(r), given) => {
                // The rule chose the scales; reading them back does not depend on it.
                let differs = given.is_some_and(|b| {
                    BlockScaling {
                        rule: r.scaling.rule,
                        ..b
                    } != r.scaling
                }) || opts.scale.is_some_and(|s| s != r.scaling.format);
                if differs {
                    return Err(Error::Invalid(format!(
                    "{file}: its metadata {} records the blocking {}, which the blocking given contradicts; leave it out to use the recorded one",
                    mp.display(),
                    r.scaling.describe()
                )));
                }
                r.scaling
            }
            (None, Some(b)) => b,
            (None, None) if !npy => {
                return Err(Error::Option(msg![
                    format!(
                "{file} is raw data, which records neither its shape nor how it was blocked: give "
            ),
                    Opt::Block,
                    " (with ",
                    Opt::Axis,
                    ", ",
                    Opt::Scale,
                    ", ",
                    Opt::ScaleLayout,
                    ", ",
                    Opt::Scale2,
                    " as when it was quantized) or ",
                    Opt::Recipe
                ]))
            }
            (None, None) => {
                let d = sdescr.unwrap_or_default();
                let format = match opts.scale {
                Some(s) => s,
                None => match format_of_npy(d).map(|f| f.name) {
                    // One byte: the default ue8m0, or NVFP4's ue4m3 under a second level.
                    Some("u8") if second => ScaleFormat::Ue4m3,
                    Some("u8") => ScaleFormat::Ue8m0,
                    Some("u16") => ScaleFormat::Bf16,
                    Some("f32") => ScaleFormat::F32,
                    _ => {
                        return Err(Error::Invalid(format!(
                            "{}: scales of dtype {d} are none the quantizer writes (|u1 for ue8m0 and ue4m3, <u2 for bf16, <f4 for f32)",
                            sp.display()
                        )))
                    }
                },
            };
                let (block, axis) = infer(&el.shape, sshape).map_err(|e| match e {
                NotInferred::NoFit => Error::Option(msg![
                    format!(
                        "{file}: cannot tell how its scales {} (shape {}) block it (shape {}); give ",
                        sp.display(),
                        shape_text(sshape),
                        shape_text(&el.shape)
                    ),
                    Opt::Block,
                    " (and ",
                    Opt::Axis,
                    ") or ",
                    Opt::Recipe
                ]),
                NotInferred::Ambiguous(sides) => {
                    Error::Invalid(ambiguous(file, &sp.display().to_string(), sshape, sides))
                }
            })?;
                BlockScaling {
                    block,
                    axis,
                    format,
                    rule: ScaleRule::Floor,
                    second_level: second,
                    layout: ScaleLayout::Rows,
                }
            }
        };
        scaling.check().map_err(|e| e.about(file))?;
        if scaling.second_level != second {
            return Err(if scaling.second_level {
                Error::Invalid(format!(
                    "{file}: its second-level scale {} is missing",
                    sp2.display()
                ))
            } else {
                Error::Option(msg![
                    format!(
                        "{file}: {} is there, but the block scaling has no second level (",
                        sp2.display()
                    ),
                    Opt::Scale2,
                    ", or ",
                    (Opt::Recipe, "nvfp4"),
                    ")"
                ])
            });
        }
        Ok(scaling)
    }

    /// The scale file's dtype, shape and length against the blocking; the number of
    /// scales.
    fn check_scale_file(
        &self,
        scaling: &BlockScaling,
        el: &Elements,
        sdescr: Option<&str>,
        sshape: &[u64],
        sstart: u64,
        slen: u64,
    ) -> Result<u64> {
        let (file, sp) = (&self.file, &self.sp);
        let sbytes = scaling.format.bytes() as u64;
        let want = scaling.written_shape(&el.shape);
        let count: u64 = want.iter().product();
        if let Some(d) = sdescr {
            let expect = scale_descr(scaling.format);
            if format_of_npy(d) != format_of_npy(expect) {
                return Err(Error::Invalid(format!(
                    "{}: the scales are {d}, but {} scales are written as {expect}",
                    sp.display(),
                    scaling.format.name()
                )));
            }
            if want != *sshape {
                return Err(Error::Invalid(format!(
                    "{file}: block {} needs scales of shape {}, but {} has shape {}",
                    scaling.block.text(),
                    shape_text(&want),
                    sp.display(),
                    shape_text(sshape)
                )));
            }
            if slen.saturating_sub(sstart) != count * sbytes {
                return Err(Error::Corrupt(format!(
                    "{}: shape {} of {d} needs {} bytes of data but the file has {}",
                    sp.display(),
                    shape_text(sshape),
                    count * sbytes,
                    slen.saturating_sub(sstart)
                )));
            }
        } else if slen != count * sbytes {
            return Err(Error::Invalid(format!(
            "{file}: block {} over {} elements needs {count} {} scales ({} bytes), but {} has {slen} bytes",
            scaling.block.text(),
            el.shape[0],
            scaling.format.name(),
            count * sbytes,
            sp.display()
        )));
        }
        Ok(count)
    }

    /// The elements, one code per element, checked against the recorded checksum and the
    /// format's width.
    fn codes(&self, f: &mut File, input: &Path, len: u64, el: &Elements) -> Result<Vec<u16>> {
        let file = &self.file;
        let n = el.shape.iter().product::<u64>() as usize;
        f.seek(SeekFrom::Start(el.data_start))
            .map_err(|e| Error::io("read", input, e))?;
        let bytes = read_exact(f, input, len - el.data_start)?;
        if let Some(r) = &self.recorded {
            if !r.meta.data.matches(&bytes) {
                return Err(not_its(
                file,
                &self.mp,
                "the data's checksum differs from the one it records: the file was changed or replaced after it was quantized, and its scale files may not belong to it; quantize it again".into(),
            ));
            }
        }
        let width = el.elem.width();
        let stray = |i: usize, c: u64| {
            Error::Invalid(format!(
            "{file}: element {i} is 0x{c:x}, which is not a {} encoding: {} has {width} bits and the bits above them must be zero",
            el.elem, el.elem
        ))
        };
        let q = codes(el.pack, &bytes, n);
        if let Some(i) = q.iter().position(|&c| (c as u32) >> width != 0) {
            return Err(stray(i, q[i] as u64));
        }
        Ok(q)
    }

    /// The scales as written (row-major words), checked against the recorded checksums.
    fn scales(
        &self,
        sf: &mut File,
        scaling: &BlockScaling,
        sstart: u64,
        count: u64,
        s2: Option<f32>,
    ) -> Result<Vec<u32>> {
        let (file, sp, sp2, mp) = (&self.file, &self.sp, &self.sp2, &self.mp);
        let sbytes = scaling.format.bytes() as u64;
        sf.seek(SeekFrom::Start(sstart))
            .map_err(|e| Error::io("read", sp, e))?;
        let sb = read_exact(sf, sp, count * sbytes)?;
        if let Some(r) = &self.recorded {
            let s2_ok = match (&r.meta.scale_2, &s2) {
                (Some(p), Some(v)) => p.matches(&v.to_le_bytes()),
                _ => true,
            };
            for (ok, path) in [(r.meta.scale.matches(&sb), sp), (s2_ok, sp2)] {
                if !ok {
                    return Err(Error::Corrupt(format!(
                    "{} does not belong to {file}: its checksum differs from the one its metadata {} records (scales of another run?); quantize it again",
                    path.display(),
                    mp.display()
                )));
                }
            }
        }
        Ok(scale_words(scaling.format, &sb))
    }

    /// What the run did.
    fn summary(&self, input: &Path, el: Elements, to: Format, nan: u64, second: bool) -> Summary {
        let n: u64 = el.shape.iter().product();
        let npy = self.npy;
        let stats = Stats {
            elements: n,
            nan,
            ..Stats::default()
        };
        let mut total = Stats::default();
        total.merge(&stats);
        let shown = |p: &PathBuf| p.display().to_string();
        Summary {
            kind: if npy { "npy" } else { "raw" },
            tensors: vec![TensorSummary {
                name: input
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                from: el.elem.name.to_string(),
                to: to.name.to_string(),
                dtype: if npy {
                    dtype::npy_descr_of(&to).to_string()
                } else {
                    format!("raw {to}")
                },
                shape: el.shape,
                scale: Some(shown(&self.sp)),
                scale_2: second.then(|| shown(&self.sp2)),
                stats,
            }],
            copied: Vec::new(),
            kept: Vec::new(),
            notes: Vec::new(),
            total,
        }
    }
}

/// The output: the values' bytes (with a `.npy` header) written to a temporary, read back,
/// renamed into place.
fn write_output(
    output: &Path,
    opts: &DequantizeOptions,
    npy: bool,
    shape: &[u64],
    data: &[u8],
) -> Result<()> {
    let to = opts.to;
    let header = if npy {
        npy::header_bytes(dtype::npy_descr_of(&to), false, shape)
    } else {
        Vec::new()
    };
    let mut tmp = Temp::new(output)?;
    let mut w = Hashing::new(BufWriter::with_capacity(1 << 20, tmp.file.as_file_mut()));
    w.write_all(&header)
        .map_err(|e| Error::io("write", output, e))?;
    let (header_hash, _) = w.take();
    w.write_all(data)
        .map_err(|e| Error::io("write", output, e))?;
    let (data_hash, _) = w.take();
    w.flush().map_err(|e| Error::io("write", output, e))?;
    drop(w);
    let hlen = header.len() as u64;
    let dlen = data.len() as u64;
    selfcheck::verify_regions(
        tmp.file.path(),
        output,
        hlen + dlen,
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
                len: dlen,
                hash: data_hash,
            },
        ],
    )?;
    unit::commit(
        &Unit::of(output),
        unit::Written {
            data: tmp,
            scale: None,
            scale_2: None,
            meta: None,
        },
        opts.force,
        &|| check_cancel(opts.cancel.as_deref()),
    )?;
    Ok(())
}
