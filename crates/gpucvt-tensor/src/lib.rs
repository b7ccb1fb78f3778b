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
mod selfcheck;
mod st;

pub use error::{Error, Result};

use dtype::{container_bytes, dense_packing, Packing};
use engine::{splitmix64, Plan};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Format;
use safetensors::tensor::TensorInfo;
use safetensors::Dtype;
use selfcheck::{Hashing, Region};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How the block scale is chosen from the largest magnitude `amax` of a block's elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
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
    /// `.safetensors`: the tensors to convert, as names or glob patterns (`*.weight`,
    /// `layers.[0-3].*`; empty: all); the others are copied unchanged. Each must match some
    /// tensor.
    pub tensors: Vec<String>,
    /// `.safetensors`: names or glob patterns of tensors not to convert (copied unchanged),
    /// applied after [`Options::tensors`].
    pub exclude: Vec<String>,
    /// Make a selected tensor that the conversion cannot take an error, instead of keeping it
    /// unchanged (see [`Kept`]).
    pub strict: bool,
    /// Convert integer and boolean tensors too. By default they (indices, step counters,
    /// masks) are kept unchanged unless named exactly in [`Options::tensors`].
    pub integers: bool,
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
            exclude: Vec::new(),
            strict: false,
            integers: false,
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
    /// Selected tensors copied unchanged because the conversion cannot take them.
    pub kept: Vec<Kept>,
    /// Things the caller should know (a thread count lowered, …).
    pub notes: Vec<String>,
    /// The statistics of all converted tensors together.
    pub total: Stats,
}

/// A selected tensor that was copied unchanged because the conversion cannot take it: a
/// dtype with no gpucvt format, an integer tensor (see [`Options::integers`]), a scalar or a
/// last dimension that does not divide into blocks, an element count that does not fill the
/// packed bytes of FP4/FP6, or a dtype the conversion does not accept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Kept {
    /// The tensor's name.
    pub name: String,
    /// Why it was not converted.
    pub reason: String,
}

/// What [`plan_file`] finds that a conversion would do to one tensor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlannedTensor {
    /// The tensor's name (`.npy` and raw: the input file name).
    pub name: String,
    /// `convert`, `keep` (selected, but the conversion cannot take it: see `reason`) or
    /// `copy` (not selected).
    pub action: &'static str,
    /// Why a kept tensor is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The input dtype (`F32`, `<f4`, `raw f32`, …).
    pub input_dtype: String,
    /// The output dtype.
    pub dtype: String,
    /// The shape.
    pub shape: Vec<u64>,
    /// Bytes of the output tensor (its scale tensor not included).
    pub bytes: u64,
    /// The scale tensor's name or sidecar file, with block scaling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<String>,
    /// Bytes of the scale tensor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_bytes: Option<u64>,
}

/// The plan of a conversion, without converting: [`plan_file`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FilePlan {
    /// `npy`, `safetensors` or `raw`.
    pub kind: &'static str,
    /// Every tensor, in data order (scale tensors are named in their tensor's entry).
    pub tensors: Vec<PlannedTensor>,
    /// The size of the output file in bytes (sidecar scale file not included).
    pub output_bytes: u64,
    /// The size of the sidecar scale file of a `.npy` or raw output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_file_bytes: Option<u64>,
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
///
/// The output is written to a temporary file beside it; before that file is renamed into
/// place it is read back and checked (the header parsed by the `safetensors` crate for
/// `.safetensors`, every tensor's bytes and the sidecar scale file's compared by hash with
/// those converted). A difference is an [`Error::Internal`] and nothing is kept.
pub fn convert_file(
    input: &Path,
    output: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary> {
    let output = &resolve_output(output)?;
    let (mut f, len, kind) = open_input(input, output, opts)?;
    let mut notes = Vec::new();
    let threads = clamp_threads(opts.threads, &mut notes);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start the worker threads: {e}")))?;
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
    let mut summary = match kind {
        Kind::Safetensors => {
            let layout = st_layout(input, opts, &mut f, len)?;
            if !layout.converts_any() {
                return Err(nothing_to_convert(input, &layout));
            }
            ctx.safetensors(&mut f, layout)?
        }
        Kind::Npy | Kind::Raw => {
            let layout = single_layout(input, output, opts, &mut f, len, kind == Kind::Npy)?;
            ctx.single(&mut f, layout)?
        }
    };
    summary.notes = notes;
    Ok(summary)
}

/// What [`convert_file`] would do, without writing anything: every tensor with its
/// conversion or the reason it is kept, and the output's size. The same checks run, so an
/// input that [`convert_file`] would refuse is refused here too.
pub fn plan_file(input: &Path, output: &Path, opts: &Options) -> Result<FilePlan> {
    let output = &resolve_output(output)?;
    let (mut f, len, kind) = open_input(input, output, opts)?;
    match kind {
        Kind::Safetensors => Ok(st_layout(input, opts, &mut f, len)?.plan()),
        Kind::Npy | Kind::Raw => {
            Ok(single_layout(input, output, opts, &mut f, len, kind == Kind::Npy)?.plan())
        }
    }
}

/// At most this many worker threads per core: more only adds switching and memory.
const THREADS_PER_CORE: usize = 4;

fn clamp_threads(asked: usize, notes: &mut Vec<String>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = cores * THREADS_PER_CORE;
    if asked > most {
        notes.push(format!(
            "{asked} threads asked for; using {most} ({THREADS_PER_CORE} per core on this machine's {cores})"
        ));
        most
    } else {
        asked
    }
}

/// The path an output is written to: an existing output must be a regular file (a symbolic
/// link is followed, so the file it points to is replaced and the link kept). A folder,
/// device, FIFO or socket is refused, because the output is written beside it and renamed
/// over it, which would replace it.
pub fn resolve_output(output: &Path) -> Result<PathBuf> {
    let Ok(m) = std::fs::symlink_metadata(output) else {
        return Ok(output.to_path_buf());
    };
    if m.file_type().is_symlink() {
        let target = std::fs::canonicalize(output).map_err(|e| {
            Error::Invalid(format!(
                "the output {} is a symbolic link that does not lead to a file ({e})",
                output.display()
            ))
        })?;
        let m = std::fs::metadata(&target).map_err(|e| Error::io("inspect", &target, e))?;
        refuse_special(output, &m)?;
        return Ok(target);
    }
    refuse_special(output, &m)?;
    Ok(output.to_path_buf())
}

fn file_type_name(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

fn refuse_special(output: &Path, m: &std::fs::Metadata) -> Result<()> {
    if m.is_file() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "the output {} is {}: gpucvt writes a complete file beside the output and renames it into place, which would replace it; give the path of a regular file",
        output.display(),
        file_type_name(m)
    )))
}

/// The checks every conversion makes before reading the input; the input opened, its length
/// and kind.
fn open_input(input: &Path, output: &Path, opts: &Options) -> Result<(File, u64, Kind)> {
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
    if !meta.is_file() {
        return Err(Error::Invalid(format!(
            "the input {} is {}; gpucvt reads a regular file (it reads parts of the file by position, which a pipe cannot give: save the data to a file first)",
            input.display(),
            file_type_name(&meta)
        )));
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
            let side = scale_path(output);
            if let Ok(m) = std::fs::metadata(&side) {
                refuse_special(&side, &m)?;
            }
            refuse_same(input, &side)?;
        }
    }
    if (!opts.tensors.is_empty() || !opts.exclude.is_empty()) && kind != Kind::Safetensors {
        return Err(Error::Invalid(
            "tensor names select tensors of .safetensors files only".into(),
        ));
    }
    if opts.from.is_some() && kind == Kind::Safetensors {
        return Err(Error::Invalid(
            "a .safetensors file names its dtypes; an input format applies to raw and .npy files only".into(),
        ));
    }
    let f = File::open(input).map_err(|e| Error::io("open", input, e))?;
    Ok((f, meta.len(), kind))
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

/// A temporary file beside `path`, renamed to it by [`Temp::finish`] and removed if dropped
/// (or by [`remove_temporaries`] on a signal).
struct Temp {
    file: tempfile::NamedTempFile,
    path: PathBuf,
    _registered: Registered,
}

/// Unregisters a temporary ([`register_temporary`]) when dropped.
struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        unregister_temporary(&self.0);
    }
}

/// The temporary files being written, for [`remove_temporaries`].
static LIVE_TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn live_temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it as it was: still a valid list.
    LIVE_TEMPORARIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers a temporary file that [`remove_temporaries`] removes if the process is stopped
/// while it exists. Every output temporary of this crate is registered; a caller that writes
/// temporaries of its own (the CLI's `sweep --out`) registers them too.
pub fn register_temporary(path: &Path) {
    live_temporaries().push(path.to_path_buf());
}

/// Forgets a temporary registered with [`register_temporary`] (it was renamed or removed).
pub fn unregister_temporary(path: &Path) {
    let mut live = live_temporaries();
    if let Some(i) = live.iter().rposition(|p| p == path) {
        live.swap_remove(i);
    }
}

/// Removes every registered temporary file: for a signal handler (SIGINT, SIGTERM) to call
/// before the process exits, so that an interrupted conversion leaves nothing behind.
pub fn remove_temporaries() {
    for p in live_temporaries().drain(..) {
        let _ = std::fs::remove_file(p);
    }
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
        // The target's name is in the temporary's, so that a leftover says what it was.
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
        register_temporary(file.path());
        Ok(Temp {
            _registered: Registered(file.path().to_path_buf()),
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

/// Everything a [`Plan`] is built from but the random stream: tensors with equal keys share
/// one plan (its tables are built once per file, not once per tensor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PlanKey {
    conv: Conversion,
    src_pack: Packing,
    dst_pack: Packing,
    block: Option<(u64, ScaleMethod)>,
}

#[derive(Default)]
struct Plans(HashMap<PlanKey, Plan>);

impl Plans {
    fn get(&mut self, key: PlanKey, stream: u64) -> &Plan {
        let plan = self
            .0
            .entry(key)
            .or_insert_with(|| Plan::new(key.conv, key.src_pack, key.dst_pack, key.block, stream));
        plan.stream = stream;
        plan
    }
}

/// Why a tensor cannot be converted, or `None`: the conversion of `src` elements, checked
/// against the shape. `Err` is for problems of the whole run (a recipe whose destination the
/// file type cannot hold); `Ok(Err(reason))` for this tensor alone.
type Decision = std::result::Result<(Conversion, Packing, Option<(u64, ScaleMethod)>), String>;

fn decide(
    opts: &Options,
    what: &str,
    src: &Format,
    shape: &[u64],
    pack_dense: bool,
) -> Result<Decision> {
    let conv = match (opts.recipe)(src) {
        Ok(c) => c,
        Err(m) => return Ok(Err(m)),
    };
    if conv.src != *src {
        return Err(Error::Invalid(format!(
            "{what}: the conversion takes {} but the data is {}",
            conv.src, src
        )));
    }
    let dst = conv.dst;
    let n: u64 = shape.iter().product();
    let dst_pack = if pack_dense {
        let p = dense_packing(&dst);
        if !n.is_multiple_of(p.unit()) {
            let per = match p.bytes_for(p.unit()) {
                1 => "byte".to_string(),
                b => format!("{b} bytes"),
            };
            return Ok(Err(format!(
                "{n} elements of {dst} do not fill whole bytes ({} per {per}; the element count must be a multiple of {})",
                p.unit(),
                p.unit()
            )));
        }
        p
    } else {
        Packing::Bytes(container_bytes(&dst))
    };
    let block = match opts.block {
        None => None,
        Some(b) => match shape.last() {
            None => return Ok(Err("a scalar cannot be block-scaled".into())),
            Some(&last) if last % b.size != 0 => {
                return Ok(Err(format!(
                    "the last dimension {last} (shape {}) is not a multiple of the block size {}",
                    shape_text(shape),
                    b.size
                )))
            }
            Some(_) => Some((b.size, b.method)),
        },
    };
    Ok(Ok((conv, dst_pack, block)))
}

/// Glob patterns of tensor names (`*`, `?`, `[…]`); a pattern also matches the name it
/// spells exactly, so names with brackets can be given as they are.
struct Patterns(Vec<(String, glob::Pattern)>);

impl Patterns {
    fn new(texts: &[String], option: &str) -> Result<Patterns> {
        let mut out = Vec::with_capacity(texts.len());
        for t in texts {
            let p = glob::Pattern::new(t).map_err(|e| {
                Error::Invalid(format!("{option} {t:?} is not a valid pattern: {e}"))
            })?;
            out.push((t.clone(), p));
        }
        Ok(Patterns(out))
    }

    fn matches(&self, i: usize, name: &str) -> bool {
        let (text, p) = &self.0[i];
        text == name || p.matches(name)
    }

    fn any(&self, name: &str) -> bool {
        (0..self.0.len()).any(|i| self.matches(i, name))
    }

    /// Whether some pattern spells `name` exactly (no wildcard chose it).
    fn names(&self, name: &str) -> bool {
        self.0.iter().any(|(t, _)| t == name)
    }
}

/// The conversion of one tensor of a `.safetensors` file.
/// A tensor's conversion: kept small, as a file can hold a million tensors.
struct StConvert {
    /// Its [`PlanKey`]: an index into [`StLayout::keys`].
    key: u32,
    stream: u64,
    n: u64,
    /// The scale tensor's name and bytes.
    scale: Option<(String, u64)>,
}

enum StAction {
    /// Not selected: copied unchanged.
    Copy,
    /// Selected but not convertible: copied unchanged.
    Keep(String),
    Convert(StConvert),
}

struct StEntry {
    name: String,
    in_dtype: Dtype,
    shape: Vec<u64>,
    in_bytes: u64,
    out_dtype: Dtype,
    out_bytes: u64,
    action: StAction,
}

/// The output of a `.safetensors` conversion, decided before anything is written.
struct StLayout {
    header: Vec<u8>,
    entries: Vec<StEntry>,
    /// The distinct conversions of the file.
    keys: Vec<PlanKey>,
    /// Where the input's data starts.
    in_data_start: u64,
    data_len: u64,
}

impl StLayout {
    fn converts_any(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.action, StAction::Convert(_)))
            || self
                .entries
                .iter()
                .all(|e| matches!(e.action, StAction::Copy))
    }

    fn plan(&self) -> FilePlan {
        FilePlan {
            kind: "safetensors",
            tensors: self
                .entries
                .iter()
                .map(|e| {
                    let (action, reason, scale) = match &e.action {
                        StAction::Copy => ("copy", None, None),
                        StAction::Keep(r) => ("keep", Some(r.clone()), None),
                        StAction::Convert(c) => ("convert", None, c.scale.clone()),
                    };
                    PlannedTensor {
                        name: e.name.clone(),
                        action,
                        reason,
                        input_dtype: format!("{:?}", e.in_dtype),
                        dtype: format!("{:?}", e.out_dtype),
                        shape: e.shape.clone(),
                        bytes: e.out_bytes,
                        scale_bytes: scale.as_ref().map(|s| s.1),
                        scale: scale.map(|s| s.0),
                    }
                })
                .collect(),
            output_bytes: self.header.len() as u64 + self.data_len,
            scale_file_bytes: None,
        }
    }
}

fn nothing_to_convert(input: &Path, layout: &StLayout) -> Error {
    let reasons: Vec<String> = layout
        .entries
        .iter()
        .filter_map(|e| match &e.action {
            StAction::Keep(r) => Some(format!("{:?}: {r}", e.name)),
            _ => None,
        })
        .take(3)
        .collect();
    Error::Invalid(format!(
        "no selected tensor of {} can be converted ({}{})",
        input.display(),
        reasons.join("; "),
        if reasons.len()
            < layout
                .entries
                .iter()
                .filter(|e| matches!(e.action, StAction::Keep(_)))
                .count()
        {
            "; …"
        } else {
            ""
        }
    ))
}

/// Reads the header of a `.safetensors` input (leaving `f` at the start of its data) and
/// decides what happens to each tensor.
fn st_layout(input: &Path, opts: &Options, f: &mut File, len: u64) -> Result<StLayout> {
    let file = input.display().to_string();
    let hdr = st::read_header(f, len, input)?;
    let wanted = Patterns::new(&opts.tensors, "--tensor")?;
    let excluded = Patterns::new(&opts.exclude, "--exclude")?;
    for (i, (text, _)) in wanted.0.iter().enumerate() {
        if !hdr.tensors.iter().any(|(n, _)| wanted.matches(i, n)) {
            let mut all: Vec<&str> = hdr.tensors.iter().map(|(n, _)| n.as_str()).collect();
            all.sort_unstable();
            let shown = all.iter().take(12).copied().collect::<Vec<_>>().join(", ");
            return Err(Error::Invalid(format!(
                "{file} has no tensor named {text:?}; it has {} tensor(s): {shown}{}",
                all.len(),
                if all.len() > 12 { ", …" } else { "" }
            )));
        }
    }
    let mut taken: HashSet<&str> = hdr.tensors.iter().map(|(n, _)| n.as_str()).collect();
    let mut scale_names: HashSet<String> = HashSet::new();
    let mut keys: Vec<PlanKey> = Vec::new();
    let mut key_index: HashMap<PlanKey, u32> = HashMap::new();
    let mut out: Vec<(String, TensorInfo)> = Vec::with_capacity(hdr.tensors.len());
    let mut entries = Vec::with_capacity(hdr.tensors.len());
    let mut offset = 0u64;
    for (t, (name, info)) in hdr.tensors.iter().enumerate() {
        let in_bytes = (info.data_offsets.1 - info.data_offsets.0) as u64;
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        let what = format!("{file}: tensor {name:?}");
        let selected = (opts.tensors.is_empty() || wanted.any(name)) && !excluded.any(name);
        let mut action = StAction::Copy;
        if selected {
            let decision = match dtype::format_of_safetensors(info.dtype) {
                None => Err(format!("dtype {:?} has no gpucvt format", info.dtype)),
                Some(src) if src.is_integer() && !opts.integers && !wanted.names(name) => {
                    Err(format!(
                        "integer dtype {:?} (integer tensors are kept unless named exactly)",
                        info.dtype
                    ))
                }
                Some(src) => decide(opts, &what, &src, &shape, true)?.map(|d| (src, d)),
            };
            action = match decision {
                Err(reason) if opts.strict => {
                    return Err(Error::Invalid(format!(
                        "{what}: {reason} (--strict: every selected tensor must be converted)"
                    )))
                }
                Err(reason) => StAction::Keep(reason),
                Ok((src, (conv, dst_pack, block))) => {
                    let dst = conv.dst;
                    dtype::safetensors_of(&dst).ok_or_else(|| {
                        Error::Unsupported(format!(
                            "{what}: safetensors has no dtype for {dst}; write .npy or raw output instead"
                        ))
                    })?;
                    let n: u64 = shape.iter().product();
                    let scale = match block {
                        None => None,
                        Some((size, _)) => {
                            let sname = format!("{name}_scale");
                            if taken.contains(sname.as_str()) || scale_names.contains(&sname) {
                                return Err(Error::Invalid(format!(
                                    "{what}: its scale tensor would be named {sname:?}, which the file already has"
                                )));
                            }
                            scale_names.insert(sname.clone());
                            Some((sname, n / size))
                        }
                    };
                    let key = PlanKey {
                        conv,
                        src_pack: dense_packing(&src),
                        dst_pack,
                        block,
                    };
                    let key = *key_index.entry(key).or_insert_with(|| {
                        keys.push(key);
                        keys.len() as u32 - 1
                    });
                    StAction::Convert(StConvert {
                        key,
                        stream: splitmix64(opts.seed.wrapping_add(t as u64)),
                        n,
                        scale,
                    })
                }
            };
        }
        let (out_dtype, out_bytes) = match &action {
            StAction::Convert(c) => {
                let key = &keys[c.key as usize];
                let d = dtype::safetensors_of(&key.conv.dst).expect("checked above");
                (d, key.dst_pack.bytes_for(c.n))
            }
            _ => (info.dtype, in_bytes),
        };
        out.push((
            name.clone(),
            TensorInfo {
                dtype: out_dtype,
                shape: info.shape.clone(),
                data_offsets: (offset as usize, (offset + out_bytes) as usize),
            },
        ));
        offset += out_bytes;
        if let StAction::Convert(c) = &action {
            if let (Some((sname, sbytes)), Some((size, _))) = (&c.scale, keys[c.key as usize].block)
            {
                let mut sshape = info.shape.clone();
                if let Some(l) = sshape.last_mut() {
                    *l /= size as usize;
                }
                out.push((
                    sname.clone(),
                    TensorInfo {
                        dtype: Dtype::F8_E8M0,
                        shape: sshape,
                        data_offsets: (offset as usize, (offset + sbytes) as usize),
                    },
                ));
                offset += sbytes;
            }
        }
        entries.push(StEntry {
            name: name.clone(),
            in_dtype: info.dtype,
            shape,
            in_bytes,
            out_dtype,
            out_bytes,
            action,
        });
        taken.insert(name.as_str());
    }
    let in_data_start = 8 + (len - 8 - hdr_data_len(&hdr));
    // (The input's tensor list is not needed again: freed before the output header is built.)
    drop(taken);
    let metadata = hdr.metadata;
    drop(hdr.tensors);
    let header = st::header_bytes(metadata, out)?;
    Ok(StLayout {
        header,
        entries,
        keys,
        in_data_start,
        data_len: offset,
    })
}

/// The output of a `.npy` or raw conversion: one tensor, scales in a sidecar file.
struct SingleLayout {
    npy: bool,
    name: String,
    src: Format,
    in_dtype: String,
    shape: Vec<u64>,
    data_start: u64,
    key: PlanKey,
    n: u64,
    dtype_name: String,
    /// The output's header (`.npy`; empty for raw).
    header: Vec<u8>,
    /// The sidecar's path, header and data bytes.
    scale: Option<(PathBuf, Vec<u8>, u64)>,
}

impl SingleLayout {
    fn data_bytes(&self) -> u64 {
        self.key.dst_pack.bytes_for(self.n)
    }

    fn plan(&self) -> FilePlan {
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

fn single_layout(
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

/// An internal error: the writer wrote a different number of bytes than it planned.
fn short_region(path: &Path, what: &str, planned: u64, written: u64) -> Error {
    Error::Internal(format!(
        "{}: {what}: {written} bytes were written where {planned} were planned; no output was kept (please report this)",
        path.display()
    ))
}

impl Ctx<'_> {
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
    fn single(&mut self, f: &mut File, l: SingleLayout) -> Result<Summary> {
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

    fn safetensors(&mut self, f: &mut File, mut layout: StLayout) -> Result<Summary> {
        let file = self.input.display().to_string();
        let out_path = self.output.to_path_buf();
        let mut tmp = Temp::new(self.output)?;
        let data_start = layout.header.len() as u64;
        // The scales of a tensor come out while its elements stream and go after them: a
        // second handle writes them in place while the first moves on past them.
        let mut scale_file = if layout
            .entries
            .iter()
            .any(|e| matches!(&e.action, StAction::Convert(c) if c.scale.is_some()))
        {
            Some(
                tmp.file
                    .reopen()
                    .map_err(|e| Error::io("write", &out_path, e))?,
            )
        } else {
            None
        };
        let mut w = Hashing::new(BufWriter::with_capacity(1 << 20, tmp.file.as_file_mut()));
        w.write_all(&layout.header)
            .map_err(|e| Error::io("write", &out_path, e))?;
        w.take();
        // (A header can be 100 MB: it is not needed again, the self-check reads it back.)
        layout.header = Vec::new();
        self.tick(layout.in_data_start);
        let mut regions = Vec::with_capacity(layout.entries.len());
        let mut plans = Plans::default();
        let (mut tensors, mut copied, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        tensors.reserve_exact(
            layout
                .entries
                .iter()
                .filter(|e| matches!(e.action, StAction::Convert(_)))
                .count(),
        );
        let mut total = Stats::default();
        let mut at = 0u64;
        let mut buf = Vec::new();
        for mut e in layout.entries {
            let mut scale_region = None;
            match e.action {
                StAction::Copy | StAction::Keep(_) => {
                    let mut left = e.in_bytes;
                    buf.resize((1 << 20).min(e.in_bytes as usize), 0);
                    while left > 0 {
                        let m = left.min(buf.len() as u64) as usize;
                        f.read_exact(&mut buf[..m]).map_err(|err| {
                            if err.kind() == std::io::ErrorKind::UnexpectedEof {
                                Error::Corrupt(format!(
                                    "{file}: the data ends early (truncated file)"
                                ))
                            } else {
                                Error::io("read", self.input, err)
                            }
                        })?;
                        w.write_all(&buf[..m])
                            .map_err(|err| Error::io("write", &out_path, err))?;
                        left -= m as u64;
                        self.tick(m as u64);
                    }
                    match e.action {
                        StAction::Keep(reason) => kept.push(Kept {
                            name: e.name.clone(),
                            reason,
                        }),
                        _ => copied.push(e.name.clone()),
                    }
                }
                StAction::Convert(c) => {
                    let key = layout.keys[c.key as usize];
                    let plan = plans.get(key, c.stream);
                    let mut sw = match (&c.scale, scale_file.as_mut()) {
                        (Some(_), Some(sf)) => {
                            sf.seek(SeekFrom::Start(data_start + at + e.out_bytes))
                                .map_err(|err| Error::io("write", &out_path, err))?;
                            Some(Hashing::new(BufWriter::with_capacity(1 << 20, sf)))
                        }
                        _ => None,
                    };
                    let op = out_path.clone();
                    let mut scales = |b: &[u8]| -> Result<()> {
                        if let Some(sw) = sw.as_mut() {
                            sw.write_all(b)
                                .map_err(|err| Error::io("write", &op, err))?;
                        }
                        Ok(())
                    };
                    let stats = self.stream(plan, f, c.n, &mut w, &mut scales)?;
                    if let Some((sname, sbytes)) = &c.scale {
                        let mut sw = sw.expect("a scale writer for each scaled tensor");
                        sw.flush()
                            .map_err(|err| Error::io("write", &out_path, err))?;
                        let (hash, written) = sw.take();
                        if written != *sbytes {
                            return Err(short_region(&out_path, sname, *sbytes, written));
                        }
                        scale_region = Some(Region {
                            name: sname.clone(),
                            start: at + e.out_bytes,
                            len: *sbytes,
                            hash,
                        });
                    }
                    total.merge(&stats);
                    tensors.push(TensorSummary {
                        name: e.name.clone(),
                        from: key.conv.src.name.to_string(),
                        to: key.conv.dst.name.to_string(),
                        dtype: format!("{:?}", e.out_dtype),
                        shape: std::mem::take(&mut e.shape),
                        scale: c.scale.map(|s| s.0),
                        stats,
                    });
                }
            }
            let (hash, written) = w.take();
            if written != e.out_bytes {
                return Err(short_region(&out_path, &e.name, e.out_bytes, written));
            }
            regions.push(Region {
                name: e.name,
                start: at,
                len: e.out_bytes,
                hash,
            });
            at += e.out_bytes;
            if let Some(r) = scale_region {
                // The scale tensor follows: step over the bytes the second handle wrote.
                w.get_mut()
                    .seek(SeekFrom::Current(r.len as i64))
                    .map_err(|err| Error::io("write", &out_path, err))?;
                at += r.len;
                regions.push(r);
            }
        }
        w.flush().map_err(|e| Error::io("write", &out_path, e))?;
        drop(w.into_inner());
        drop(scale_file);
        selfcheck::verify_safetensors(tmp.file.path(), &out_path, &regions)?;
        tmp.finish()?;
        Ok(Summary {
            kind: "safetensors",
            tensors,
            copied,
            kept,
            notes: Vec::new(),
            total,
        })
    }
}

fn hdr_data_len(h: &st::StHeader) -> u64 {
    h.tensors.last().map_or(0, |(_, i)| i.data_offsets.1 as u64)
}
