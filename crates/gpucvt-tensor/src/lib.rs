//! # gpucvt-tensor
//!
//! Converts whole tensor files — `.npy`, `.safetensors` and raw little-endian binary — with
//! gpucvt's bit-exact conversions, streaming: memory stays bounded (a few chunks of 8 MiB in
//! flight) whatever the file size, chunks are converted in parallel on a rayon pool, and
//! reading, converting and writing overlap.
//!
//! - **Output**: written to a temporary file in the destination folder and renamed at the
//!   end; on any error the temporary is removed and nothing is left. An output that is the
//!   input (same path or same file) is refused.
//! - **Packing** (`.safetensors` and raw): `e2m1` (`F4`) two elements per byte, the first
//!   in the low nibble; `e2m3`/`e3m2` (`F6_E2M3`/`F6_E3M2`) four elements per three bytes as
//!   a little-endian bit stream (element `i` in bits `6i…6i+5`), which is the dense 6-bit
//!   layout the safetensors format's sizes imply; everything else one element per
//!   little-endian container of 1, 2, 4 or 8 bytes. In `.npy` files every element has its
//!   own container (`bf16` as `<u2`, FP8/FP6/FP4/`ue8m0` as `|u1`).
//! - **Selection** (`.safetensors`): every tensor, or the named ones; tensors not selected are
//!   copied unchanged (same dtype and bytes), so the output is a complete file.
//! - **MX block scaling**: one `ue8m0` scale per block of consecutive elements along the last
//!   axis (the last dimension must be a multiple of the block size); see [`ScaleMethod`]. The
//!   scales of tensor `NAME` are written as the tensor `NAME_scale` (dtype `F8_E8M0`, shape
//!   of `NAME` with the last dimension divided by the block size), right after it; for
//!   `.npy` and raw outputs as a sidecar file `OUTPUT_scale.npy` (`|u1`) or `OUTPUT_scale.bin`
//!   (raw bytes) — the output name with `_scale` before its extension.
//! - **Stochastic rounding**: the random word of element `i` of the `t`-th tensor (0-based,
//!   in the input's data order; 0 for `.npy` and raw) is the low 32 bits of the `i`-th output
//!   of SplitMix64 seeded with `splitmix64(seed + t)` ([`engine::random_word`]); the
//!   conversion uses its low `width` bits.
//!
//! ```no_run
//! use gpucvt_core::{Conversion, Policy, Rounding, format::E4M3};
//! use gpucvt_tensor::{convert_file, Options};
//! let opts = Options::new(Box::new(|src| {
//!     Ok(Conversion::new(*src, E4M3, Rounding::RN, Policy { satfinite: true, ..Policy::default() }))
//! }));
//! let summary = convert_file("in.safetensors".as_ref(), "out.safetensors".as_ref(), &opts, &mut |_, _| {})?;
//! println!("{} elements", summary.total.elements);
//! # Ok::<(), gpucvt_tensor::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod dtype;
pub mod engine;
mod error;
pub mod npy;
mod pipeline;
mod st;

pub use error::{Error, Result};

use dtype::{container_bytes, dense_packing, Packing};
use engine::{splitmix64, Plan};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Format;
use safetensors::tensor::TensorInfo;
use safetensors::Dtype;
use serde::Serialize;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How the block scale is chosen from the largest magnitude `amax` of a block's elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleMethod {
    /// The OCP MX specification (v1.0, §6.3): shared exponent `floor(log2(amax)) − emax`,
    /// `emax` being the exponent of the element format's largest normal value, clamped to
    /// the `ue8m0` range [−127, 127]; an all-zero block gets −127 (as the OCP reference
    /// implementation, which takes `log2` of the smallest normal for a zero `amax`). Values
    /// above the element format's range after scaling saturate or overflow as the element
    /// conversion says.
    #[default]
    Ocp,
    /// As a GPU kernel would with PTX: `q = amax / max_finite` in `f32` (`div.rn.f32`), then
    /// `cvt.rp.satfinite.ue8m0x2.f32` of `q`: the smallest power of two not below `q`, so no
    /// element saturates.
    Rp,
}

/// MX-style block scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockScaling {
    /// Elements per block (along the last axis), 1 to 65,536.
    pub size: u64,
    /// How the scale is chosen.
    pub method: ScaleMethod,
}

/// Chooses the conversion for a tensor from its element format; `Err` carries a message
/// (for example "cvt.rn.f16.f32 converts f32, but the tensor is bf16").
pub type Recipe = Box<dyn Fn(&Format) -> std::result::Result<Conversion, String> + Sync>;

/// What to convert and how.
pub struct Options {
    /// The conversion of each tensor, from its element format.
    pub recipe: Recipe,
    /// The element format of a raw input (required there); for `.npy` input, reinterpret the
    /// integer container (`<u2` as `bf16`, `|u1` as `e4m3`, …).
    pub from: Option<Format>,
    /// `.safetensors`: the tensors to convert (empty: all); the others are copied unchanged.
    pub tensors: Vec<String>,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Seed of the random words of stochastic rounding.
    pub seed: u64,
    /// MX block scaling.
    pub block: Option<BlockScaling>,
}

impl Options {
    /// Options with a recipe and everything else by default.
    pub fn new(recipe: Recipe) -> Options {
        Options {
            recipe,
            from: None,
            tensors: Vec::new(),
            threads: 0,
            seed: 0,
            block: None,
        }
    }
}

/// Counts and error statistics of converted elements.
///
/// Classified from each (input, output) pair, both decoded exactly to `f64` (inputs scaled by
/// their block scale first): `saturated` — the input is beyond the destination's range
/// (largest finite magnitude; [0, 1] with `.sat`; an integer type's range), or infinite, and
/// the output is finite; `overflow_to_inf` — a finite input became ±∞; `flushed_to_zero` — a
/// non-zero finite input became zero (flushed or underflowed; `.relu` zeroing negatives is not
/// counted); `nan` — the output is NaN; `nan_to_number` — a NaN input became a number. The
/// absolute error `|output × scale − input|` is taken over the elements where input and
/// output are both finite (NaN and infinite elements are left out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Elements converted.
    pub elements: u64,
    /// Elements clamped to the destination's range.
    pub saturated: u64,
    /// Finite inputs that became infinities.
    pub overflow_to_inf: u64,
    /// Non-zero inputs that became zero.
    pub flushed_to_zero: u64,
    /// Outputs that are NaN.
    pub nan: u64,
    /// NaN inputs that became numbers.
    pub nan_to_number: u64,
    /// Blocks scaled (block scaling only).
    pub blocks: u64,
    /// Blocks that got the NaN scale `0xff` (they held a NaN or an infinity).
    pub nan_blocks: u64,
    /// Elements in the error statistics.
    pub error_elements: u64,
    /// Largest absolute error.
    pub max_abs_error: f64,
    /// Mean absolute error.
    pub mean_abs_error: f64,
    /// Sum of the absolute errors.
    #[serde(skip)]
    pub sum_abs_error: f64,
}

impl Stats {
    /// Adds the counts of `o`.
    pub fn merge(&mut self, o: &Stats) {
        self.elements += o.elements;
        self.saturated += o.saturated;
        self.overflow_to_inf += o.overflow_to_inf;
        self.flushed_to_zero += o.flushed_to_zero;
        self.nan += o.nan;
        self.nan_to_number += o.nan_to_number;
        self.blocks += o.blocks;
        self.nan_blocks += o.nan_blocks;
        self.error_elements += o.error_elements;
        self.sum_abs_error += o.sum_abs_error;
        self.max_abs_error = self.max_abs_error.max(o.max_abs_error);
        self.mean_abs_error = if self.error_elements == 0 {
            0.0
        } else {
            self.sum_abs_error / self.error_elements as f64
        };
    }
}

/// One converted tensor.
#[derive(Clone, Debug, Serialize)]
pub struct TensorSummary {
    /// Its name (`.npy` and raw: the input file name).
    pub name: String,
    /// Source format.
    pub from: String,
    /// Destination format.
    pub to: String,
    /// The dtype written (`F8_E4M3`, `<u2`, …).
    pub dtype: String,
    /// The shape.
    pub shape: Vec<u64>,
    /// The scale tensor's name or sidecar file, with block scaling.
    pub scale: Option<String>,
    /// Its statistics.
    pub stats: Stats,
}

/// What a conversion did.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// `npy`, `safetensors` or `raw`.
    pub kind: &'static str,
    /// The converted tensors, in data order.
    pub tensors: Vec<TensorSummary>,
    /// Tensors copied unchanged (not selected).
    pub copied: Vec<String>,
    /// The statistics of all converted tensors together.
    pub total: Stats,
}

/// The kind of a tensor file, from its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `.npy`
    Npy,
    /// `.safetensors`
    Safetensors,
    /// Anything else: raw little-endian elements.
    Raw,
}

impl Kind {
    /// The kind of `path` by its extension (case-insensitive).
    pub fn of(path: &Path) -> Kind {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("npy") => Kind::Npy,
            Some("safetensors") => Kind::Safetensors,
            _ => Kind::Raw,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Npy => "npy",
            Kind::Safetensors => "safetensors",
            Kind::Raw => "raw",
        }
    }
}

/// The sidecar file of the block scales of a `.npy` or raw output: `_scale` inserted before
/// the extension (`out.npy` → `out_scale.npy`, `out.bin` → `out_scale.bin`).
pub fn scale_path(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match output.extension() {
        Some(e) => format!("{stem}_scale.{}", e.to_string_lossy()),
        None => format!("{stem}_scale"),
    };
    output.with_file_name(name)
}

/// Converts `input` into `output`; `progress(done, total)` is called with input bytes.
pub fn convert_file(
    input: &Path,
    output: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary> {
    let kind = Kind::of(input);
    let out_kind = Kind::of(output);
    if kind != out_kind {
        return Err(Error::Invalid(format!(
            "the output must be the same kind of file as the input: {} is {}, {} is {} (by extension)",
            input.display(),
            kind.name(),
            output.display(),
            out_kind.name()
        )));
    }
    let meta = std::fs::metadata(input).map_err(|e| Error::io("read", input, e))?;
    if meta.is_dir() {
        return Err(Error::Invalid(format!("{} is a folder", input.display())));
    }
    refuse_same(input, output)?;
    if let Some(b) = opts.block {
        if b.size == 0 || b.size > 65536 {
            return Err(Error::Invalid(format!(
                "the block size must be 1 to 65536, not {}",
                b.size
            )));
        }
        if kind != Kind::Safetensors {
            refuse_same(input, &scale_path(output))?;
        }
    }
    if !opts.tensors.is_empty() && kind != Kind::Safetensors {
        return Err(Error::Invalid(
            "tensor names select tensors of .safetensors files only".into(),
        ));
    }
    if opts.from.is_some() && kind == Kind::Safetensors {
        return Err(Error::Invalid(
            "a .safetensors file names its dtypes; an input format applies to raw and .npy files only".into(),
        ));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start the worker threads: {e}")))?;
    let mut f = File::open(input).map_err(|e| Error::io("open", input, e))?;
    let len = meta.len();
    let mut ctx = Ctx {
        input,
        output,
        opts,
        pool: &pool,
        done: 0,
        total: len,
        progress,
        buffers: pipeline::Buffers::default(),
    };
    match kind {
        Kind::Safetensors => ctx.safetensors(&mut f, len),
        Kind::Npy => ctx.single(&mut f, len, true),
        Kind::Raw => ctx.single(&mut f, len, false),
    }
}

fn refuse_same(input: &Path, output: &Path) -> Result<()> {
    let same = || -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(output)) {
                return a.dev() == b.dev() && a.ino() == b.ino();
            }
        }
        let Ok(a) = std::fs::canonicalize(input) else {
            return false;
        };
        let parent = match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        match (std::fs::canonicalize(parent), output.file_name()) {
            (Ok(p), Some(n)) => p.join(n) == a,
            _ => false,
        }
    };
    if input == output || same() {
        return Err(Error::Invalid(format!(
            "the output {} is the input file; choose another output path (the input is never overwritten)",
            output.display()
        )));
    }
    Ok(())
}

/// A temporary file beside `path`, renamed to it by [`Temp::finish`] and removed if dropped.
struct Temp {
    file: tempfile::NamedTempFile,
    path: PathBuf,
}

impl Temp {
    fn new(path: &Path) -> Result<Temp> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix).suffix(".gpucvt-tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let file = b.tempfile_in(dir).map_err(|e| Error::Io {
            context: format!(
                "cannot create the output {}: cannot create a file in {}",
                path.display(),
                dir.display()
            ),
            source: e,
        })?;
        Ok(Temp {
            file,
            path: path.to_path_buf(),
        })
    }

    fn finish(self) -> Result<()> {
        let path = self.path;
        self.file
            .persist(&path)
            .map(|_| ())
            .map_err(|e| Error::io("write", &path, e.error))
    }
}

struct Ctx<'a> {
    input: &'a Path,
    output: &'a Path,
    opts: &'a Options,
    pool: &'a rayon::ThreadPool,
    done: u64,
    total: u64,
    progress: &'a mut dyn FnMut(u64, u64),
    buffers: pipeline::Buffers,
}

fn shape_text(shape: &[u64]) -> String {
    format!(
        "[{}]",
        shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

impl Ctx<'_> {
    fn conversion(&self, what: &str, src: &Format) -> Result<Conversion> {
        let c = (self.opts.recipe)(src).map_err(|m| Error::Invalid(format!("{what}: {m}")))?;
        if c.src != *src {
            return Err(Error::Invalid(format!(
                "{what}: the conversion takes {} but the data is {}",
                c.src, src
            )));
        }
        Ok(c)
    }

    fn check_blocks(&self, what: &str, shape: &[u64]) -> Result<Option<(u64, ScaleMethod)>> {
        let Some(b) = self.opts.block else {
            return Ok(None);
        };
        match shape.last() {
            None => Err(Error::Invalid(format!(
                "{what}: a scalar cannot be block-scaled"
            ))),
            Some(&last) if last % b.size != 0 => Err(Error::Invalid(format!(
                "{what}: the last dimension {last} (shape {}) is not a multiple of the block size {}",
                shape_text(shape),
                b.size
            ))),
            Some(_) => Ok(Some((b.size, b.method))),
        }
    }

    fn check_packing(what: &str, n: u64, pack: Packing, dst: &Format) -> Result<()> {
        if !n.is_multiple_of(pack.unit()) {
            return Err(Error::Invalid(format!(
                "{what}: {n} elements of {dst} cannot be packed {} per {} bytes; the element count must be a multiple of {}",
                pack.unit(),
                pack.bytes_for(pack.unit()),
                pack.unit()
            )));
        }
        Ok(())
    }

    fn tick(&mut self, bytes: u64) {
        self.done += bytes;
        (self.progress)(self.done, self.total);
    }

    fn stream<W: Write + Send>(
        &mut self,
        plan: &Plan,
        f: &mut File,
        n: u64,
        w: &mut W,
        scales: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<Stats> {
        let io = pipeline::Io {
            input_path: self.input,
            output_path: self.output,
        };
        let pool = self.pool;
        let mut done = self.done;
        let total = self.total;
        let progress = &mut *self.progress;
        let r = pipeline::run(
            plan,
            pool,
            f,
            n,
            w,
            scales,
            &mut |b| {
                done += b;
                progress(done, total);
            },
            &io,
            &mut self.buffers,
        );
        self.done = done;
        r
    }

    /// `.npy` or raw: one tensor, scales in a sidecar file.
    fn single(&mut self, f: &mut File, len: u64, npy: bool) -> Result<Summary> {
        let file = self.input.display().to_string();
        let (src, shape, fortran, data_start, src_pack) = if npy {
            let h = npy::read_header(f, &file)?;
            if h.descr == "<structured>" {
                return Err(Error::Unsupported(format!(
                    "{file}: a structured dtype cannot be converted; numeric little-endian dtypes (<f8 <f4 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8) can"
                )));
            }
            let itemsize = dtype::npy_itemsize(&h.descr);
            let src = match self.opts.from {
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
            let n = h.elements().ok_or_else(|| {
                Error::Corrupt(format!("{file}: the shape {:?} overflows", h.shape))
            })?;
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
            if h.fortran_order && self.opts.block.is_some() {
                return Err(Error::Unsupported(format!(
                    "{file}: block scaling needs C order (the blocks run along the last axis), this array is in Fortran order"
                )));
            }
            (
                src,
                h.shape,
                h.fortran_order,
                h.header_len,
                Packing::Bytes(item as usize),
            )
        } else {
            let src = self.opts.from.ok_or_else(|| {
                Error::Invalid(format!(
                    "{file} is raw data (not .npy or .safetensors): give its element format (for example f32)"
                ))
            })?;
            let pack = dense_packing(&src);
            let bits = len * 8;
            if !bits.is_multiple_of(pack.bits())
                || !(bits / pack.bits()).is_multiple_of(pack.unit())
            {
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
            (src, vec![bits / pack.bits()], false, 0, pack)
        };
        let n: u64 = shape.iter().product();
        let name = self
            .input
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let conv = self.conversion(&file, &src)?;
        let dst = conv.dst;
        let dst_pack = if npy {
            Packing::Bytes(container_bytes(&dst))
        } else {
            let p = dense_packing(&dst);
            Self::check_packing(&file, n, p, &dst)?;
            p
        };
        let block = self.check_blocks(&file, &shape)?;
        let plan = Plan::new(conv, src_pack, dst_pack, block, splitmix64(self.opts.seed));
        let dtype_name = if npy {
            dtype::npy_descr_of(&dst).to_string()
        } else {
            format!("raw {dst}")
        };
        // The outputs.
        let mut out = Temp::new(self.output)?;
        let mut side = match block {
            Some(_) => Some(Temp::new(&scale_path(self.output))?),
            None => None,
        };
        let out_path = self.output.to_path_buf();
        let mut w = BufWriter::with_capacity(1 << 20, out.file.as_file_mut());
        if npy {
            w.write_all(&npy::header_bytes(
                dtype::npy_descr_of(&dst),
                fortran,
                &shape,
            ))
            .map_err(|e| Error::io("write", &out_path, e))?;
        }
        let side_path = scale_path(self.output);
        let mut sw = side
            .as_mut()
            .map(|t| BufWriter::with_capacity(1 << 20, t.file.as_file_mut()));
        if let (Some(sw), Some((size, _))) = (sw.as_mut(), block) {
            if npy {
                let mut sshape = shape.clone();
                if let Some(l) = sshape.last_mut() {
                    *l /= size;
                }
                sw.write_all(&npy::header_bytes("|u1", false, &sshape))
                    .map_err(|e| Error::io("write", &side_path, e))?;
            }
        }
        f.seek(SeekFrom::Start(data_start))
            .map_err(|e| Error::io("read", self.input, e))?;
        self.tick(data_start);
        let stats = {
            let sp = side_path.clone();
            let mut scales = |b: &[u8]| -> Result<()> {
                if let Some(sw) = sw.as_mut() {
                    sw.write_all(b).map_err(|e| Error::io("write", &sp, e))?;
                }
                Ok(())
            };
            self.stream(&plan, f, n, &mut w, &mut scales)?
        };
        w.flush().map_err(|e| Error::io("write", &out_path, e))?;
        drop(w);
        if let Some(sw) = sw.as_mut() {
            sw.flush().map_err(|e| Error::io("write", &side_path, e))?;
        }
        drop(sw);
        let scale = side.as_ref().map(|_| side_path.display().to_string());
        if let Some(s) = side {
            s.finish()?;
        }
        if let Err(e) = out.finish() {
            if block.is_some() {
                let _ = std::fs::remove_file(&side_path);
            }
            return Err(e);
        }
        let mut total = Stats::default();
        total.merge(&stats);
        Ok(Summary {
            kind: if npy { "npy" } else { "raw" },
            tensors: vec![TensorSummary {
                name,
                from: src.name.to_string(),
                to: dst.name.to_string(),
                dtype: dtype_name,
                shape,
                scale,
                stats,
            }],
            copied: Vec::new(),
            total,
        })
    }

    fn safetensors(&mut self, f: &mut File, len: u64) -> Result<Summary> {
        let file = self.input.display().to_string();
        let hdr = st::read_header(f, len, self.input)?;
        let names: HashSet<&str> = hdr.tensors.iter().map(|(n, _)| n.as_str()).collect();
        for want in &self.opts.tensors {
            if !names.contains(want.as_str()) {
                let mut all: Vec<&str> = names.iter().copied().collect();
                all.sort_unstable();
                let shown = all.iter().take(12).copied().collect::<Vec<_>>().join(", ");
                return Err(Error::Invalid(format!(
                    "{file} has no tensor named {want:?}; it has {} tensor(s): {shown}{}",
                    all.len(),
                    if all.len() > 12 { ", …" } else { "" }
                )));
            }
        }
        let selected =
            |n: &str| self.opts.tensors.is_empty() || self.opts.tensors.iter().any(|t| t == n);
        enum Job {
            Copy(u64),
            Convert {
                plan: Box<Plan>,
                n: u64,
                scale_at: Option<u64>,
                summary: Box<TensorSummary>,
            },
        }
        let mut jobs = Vec::new();
        let mut out: Vec<(String, TensorInfo)> = Vec::new();
        let mut taken: HashSet<String> = names.iter().map(|s| s.to_string()).collect();
        let mut offset = 0usize;
        let mut copied = Vec::new();
        for (t, (name, info)) in hdr.tensors.iter().enumerate() {
            let bytes = info.data_offsets.1 - info.data_offsets.0;
            if !selected(name) {
                out.push((
                    name.clone(),
                    TensorInfo {
                        dtype: info.dtype,
                        shape: info.shape.clone(),
                        data_offsets: (offset, offset + bytes),
                    },
                ));
                offset += bytes;
                copied.push(name.clone());
                jobs.push(Job::Copy(bytes as u64));
                continue;
            }
            let what = format!("{file}: tensor {name:?}");
            let src = dtype::format_of_safetensors(info.dtype).ok_or_else(|| {
                Error::Unsupported(format!(
                    "{what}: dtype {:?} cannot be converted",
                    info.dtype
                ))
            })?;
            let conv = self.conversion(&what, &src)?;
            let dst = conv.dst;
            let dst_dtype = dtype::safetensors_of(&dst).ok_or_else(|| {
                Error::Unsupported(format!(
                    "{what}: safetensors has no dtype for {dst}; write .npy or raw output instead"
                ))
            })?;
            let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
            let n: u64 = shape.iter().product();
            let dst_pack = dense_packing(&dst);
            Self::check_packing(&what, n, dst_pack, &dst)?;
            let block = self.check_blocks(&what, &shape)?;
            let out_bytes = dst_pack.bytes_for(n) as usize;
            out.push((
                name.clone(),
                TensorInfo {
                    dtype: dst_dtype,
                    shape: info.shape.clone(),
                    data_offsets: (offset, offset + out_bytes),
                },
            ));
            offset += out_bytes;
            let mut scale_at = None;
            let mut scale = None;
            if let Some((size, _)) = block {
                let sname = format!("{name}_scale");
                if !taken.insert(sname.clone()) {
                    return Err(Error::Invalid(format!(
                        "{what}: its scale tensor would be named {sname:?}, which the file already has"
                    )));
                }
                let mut sshape = info.shape.clone();
                if let Some(l) = sshape.last_mut() {
                    *l /= size as usize;
                }
                let sbytes = (n / size) as usize;
                out.push((
                    sname.clone(),
                    TensorInfo {
                        dtype: Dtype::F8_E8M0,
                        shape: sshape,
                        data_offsets: (offset, offset + sbytes),
                    },
                ));
                scale_at = Some(offset as u64);
                offset += sbytes;
                scale = Some(sname);
            }
            let plan = Plan::new(
                conv,
                dense_packing(&src),
                dst_pack,
                block,
                splitmix64(self.opts.seed.wrapping_add(t as u64)),
            );
            jobs.push(Job::Convert {
                plan: Box::new(plan),
                n,
                scale_at,
                summary: Box::new(TensorSummary {
                    name: name.clone(),
                    from: src.name.to_string(),
                    to: dst.name.to_string(),
                    dtype: format!("{dst_dtype:?}"),
                    shape,
                    scale,
                    stats: Stats::default(),
                }),
            });
        }
        let header = st::header_bytes(hdr.metadata.clone(), out)?;
        let data_start = header.len() as u64;
        let mut tmp = Temp::new(self.output)?;
        let out_path = self.output.to_path_buf();
        let mut scale_file = if jobs.iter().any(|j| {
            matches!(
                j,
                Job::Convert {
                    scale_at: Some(_),
                    ..
                }
            )
        }) {
            Some(
                tmp.file
                    .reopen()
                    .map_err(|e| Error::io("write", &out_path, e))?,
            )
        } else {
            None
        };
        let mut w = BufWriter::with_capacity(1 << 20, tmp.file.as_file_mut());
        w.write_all(&header)
            .map_err(|e| Error::io("write", &out_path, e))?;
        let in_start = 8 + (len - 8 - hdr_data_len(&hdr));
        self.tick(in_start);
        let mut tensors = Vec::new();
        let mut total = Stats::default();
        for job in jobs {
            match job {
                Job::Copy(bytes) => {
                    let mut left = bytes;
                    let mut buf = vec![0u8; (1 << 20).min(bytes as usize)];
                    while left > 0 {
                        let m = left.min(buf.len() as u64) as usize;
                        f.read_exact(&mut buf[..m]).map_err(|e| {
                            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                                Error::Corrupt(format!(
                                    "{file}: the data ends early (truncated file)"
                                ))
                            } else {
                                Error::io("read", self.input, e)
                            }
                        })?;
                        w.write_all(&buf[..m])
                            .map_err(|e| Error::io("write", &out_path, e))?;
                        left -= m as u64;
                        self.tick(m as u64);
                    }
                }
                Job::Convert {
                    plan,
                    n,
                    scale_at,
                    mut summary,
                } => {
                    let mut sw = match (scale_at, scale_file.as_mut()) {
                        (Some(at), Some(sf)) => {
                            sf.seek(SeekFrom::Start(data_start + at))
                                .map_err(|e| Error::io("write", &out_path, e))?;
                            Some(BufWriter::with_capacity(1 << 20, sf))
                        }
                        _ => None,
                    };
                    let op = out_path.clone();
                    let mut scales = |b: &[u8]| -> Result<()> {
                        if let Some(sw) = sw.as_mut() {
                            sw.write_all(b).map_err(|e| Error::io("write", &op, e))?;
                        }
                        Ok(())
                    };
                    let stats = self.stream(&plan, f, n, &mut w, &mut scales)?;
                    if let Some(mut sw) = sw {
                        sw.flush().map_err(|e| Error::io("write", &out_path, e))?;
                    }
                    total.merge(&stats);
                    summary.stats = stats;
                    tensors.push(*summary);
                }
            }
        }
        w.flush().map_err(|e| Error::io("write", &out_path, e))?;
        drop(w);
        drop(scale_file);
        tmp.finish()?;
        Ok(Summary {
            kind: "safetensors",
            tensors,
            copied,
            total,
        })
    }
}

fn hdr_data_len(h: &st::StHeader) -> u64 {
    h.tensors.last().map_or(0, |(_, i)| i.data_offsets.1 as u64)
}
