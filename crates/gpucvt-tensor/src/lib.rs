//! # gpucvt-tensor
//!
//! Converts whole tensor files — `.npy`, `.safetensors` and raw little-endian binary — with
//! gpucvt's bit-exact conversions, streaming: memory stays bounded (a few chunks of 8 MiB in
//! flight) whatever the file size, chunks are converted in parallel on a rayon pool, and
//! reading, converting and writing overlap.
//!
//! ## Layers
//!
//! From the API down (each file has one job):
//!
//! - `lib.rs`: the API — [`convert_file`], [`plan_file`], [`Options`] (with its [`Recipe`]),
//!   [`Summary`], [`Stats`]; the input checks before anything is read. `error.rs`: [`Error`].
//!   `request.rs`: [`ConvertRequest`], the options of `gpucvt convert` as values, checked and
//!   built into [`Options`] (for the CLI and the Python package alike).
//!   `output.rs`: the temporary an output is written to and renamed from
//!   ([`resolve_output`], [`register_temporary`], [`remove_temporaries`]).
//! - `files/`: the file kinds. A conversion reads the input's header into a layout (what
//!   happens to each tensor; also what [`plan_file`] reports), then writes the output from it.
//!   `files/safetensors/{header,layout,write}.rs`; `files/single.rs` (`.npy` and raw: one
//!   tensor, scales in a sidecar) with [`npy`] and `files/raw.rs` reading those inputs;
//!   `files/selfcheck.rs` reads every output back (hashes) before it is kept.
//! - `pipeline.rs`: one tensor streamed chunk by chunk — workers convert, a writer thread
//!   writes.
//! - `engine/`: one chunk converted. `plan.rs` (`Plan`: how a tensor's elements are converted,
//!   sub-chunks in parallel), `io.rs` (positioned reads, per-thread scratch),
//!   `pack.rs` (FP4/FP6 packing), `decode.rs` (decoders for the statistics), `scale.rs` (MX
//!   block scales), `stats/` (error statistics: the general loop, `lanes.rs` for `f32`
//!   sources, `sse2.rs`), `random.rs` (stochastic rounding's random values).
//! - `dtype.rs`: dtype names of each file kind ↔ gpucvt formats, and packings.
//!
//! ## Behaviour
//!
//! - **Output**: written to a temporary file in the destination folder and renamed at the
//!   end; on any error the temporary is removed and nothing is left. An output that is the
//!   input (same path or same file) is refused. A replaced output keeps its mode (and owner,
//!   where the process may); a read-only one is refused unless [`Options::force`]. A `.npy`
//!   or raw output and its sidecars (scales, second-level scale, the metadata
//!   [`metadata_path`]) are one unit: renamed into place together under a lock, the
//!   sidecars a run does not write removed (`files/unit.rs`).
//! - **Packing** (`.safetensors` and raw): `e2m1` (`F4`) two elements per byte, the first
//!   in the low nibble; `e2m3`/`e3m2` (`F6_E2M3`/`F6_E3M2`) four elements per three bytes as
//!   a little-endian bit stream (element `i` in bits `6i…6i+5`), which is the dense 6-bit
//!   layout the safetensors format's sizes imply; everything else one element per
//!   little-endian container of 1, 2, 4 or 8 bytes. In `.npy` files every element has its
//!   own container (`bf16` as `<u2`, FP8/FP6/FP4/`ue8m0` as `|u1`).
//! - **Selection** (`.safetensors`): every tensor, or the named ones; tensors not selected are
//!   copied unchanged (same dtype and bytes), so the output is a complete file.
//! - **MX block scaling**: one `ue8m0` scale per block of consecutive elements along the last
//!   axis (the last dimension must be a multiple of the block size); see [`ScaleRule`]. The
//!   scales of tensor `NAME` are written as the tensor `NAME_scale` (dtype `F8_E8M0`, shape
//!   of `NAME` with the last dimension divided by the block size), right after it; for
//!   `.npy` and raw outputs as a sidecar file `OUTPUT_scale.npy` (`|u1`) or `OUTPUT_scale.bin`
//!   (raw bytes) — the output name with `_scale` before its extension.
//! - **Stochastic rounding**: the random word of element `i` of the `t`-th tensor (0-based,
//!   in the input's data order; 0 for `.npy` and raw) is the low 32 bits of the `i`-th output
//!   of SplitMix64 seeded with `splitmix64(seed + t)` ([`engine::random_word`]); the
//!   conversion uses its low `width` bits.
//!
//! ## Example
//!
//! An `f32` `.npy` file converted to `e4m3` with `.satfinite`:
//!
//! ```
//! use gpucvt_core::{format::E4M3, Conversion, Policy, Rounding};
//! use gpucvt_tensor::{convert_file, npy, Options};
//! let dir = tempfile::tempdir().unwrap();
//! let (input, output) = (dir.path().join("x.npy"), dir.path().join("x-fp8.npy"));
//! let mut bytes = npy::header_bytes("<f4", false, &[4]);
//! for v in [1.0f32, -0.5, 500.0, f32::NAN] {
//!     bytes.extend_from_slice(&v.to_le_bytes());
//! }
//! std::fs::write(&input, bytes).unwrap();
//!
//! let opts = Options::new(Box::new(|src| {
//!     let satfinite = Policy { satfinite: true, ..Policy::default() };
//!     Ok(Conversion::new(*src, E4M3, Rounding::RN, satfinite))
//! }));
//! let summary = convert_file(&input, &output, &opts, &mut |_done, _total| {})?;
//! assert_eq!(summary.total.elements, 4);
//! assert_eq!(summary.total.saturated, 1); // 500 became 448, e4m3's largest finite value
//! let out = std::fs::read(&output).unwrap();
//! let data = &out[out.len() - 4..];
//! assert_eq!(data, [0x38, 0xb0, 0x7e, 0x7f]);
//! # Ok::<(), gpucvt_tensor::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod dtype;
pub mod engine;
mod error;
mod files;
mod output;
mod pipeline;
pub mod quant;
mod request;

pub use error::{Error, Result};
pub use files::dequantize::DequantizeOptions;
pub use files::npy;
pub use output::{
    register_temporary, remove_temporaries, resolve_output, unregister_temporary, OutputFile,
};
pub use quant::{BlockScaling, ScaleRule};
pub use request::{lookup_format, Built, ConvertRequest, ScalingRequest};

use files::safetensors::layout::{nothing_to_convert, st_layout};
use files::single::single_layout;
use files::Ctx;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Format;
use output::{file_type_name, refuse_read_only, refuse_same, refuse_special};
use serde::Serialize;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Chooses the conversion for a tensor from its element format; a format it does not take
/// is an [`Error::Refused`] saying why (for example "cvt.rn.f16.f32 converts f32 elements,
/// but the data is bf16"), whose message becomes the tensor's reason for being kept.
pub type Recipe = Box<dyn Fn(&Format) -> Result<Conversion> + Sync>;

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
    /// Replace a read-only output (and remove or replace read-only sidecar files of a
    /// `.npy` or raw output); without it they are an [`Error::ReadOnly`].
    pub force: bool,
    /// A flag another thread may set to stop the conversion: it is polled between chunks
    /// (a few MiB), and a set flag stops it with [`Error::Cancelled`], its temporaries
    /// removed and nothing written.
    pub cancel: Option<Arc<AtomicBool>>,
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
            force: false,
            cancel: None,
        }
    }
}

/// [`Error::Cancelled`] if the caller's cancel flag is set.
pub(crate) fn check_cancel(flag: Option<&AtomicBool>) -> Result<()> {
    match flag {
        Some(f) if f.load(Ordering::Relaxed) => Err(Error::Cancelled),
        _ => Ok(()),
    }
}

/// Counts and error statistics of converted elements.
///
/// Classified from each (input, output) pair, both decoded exactly to `f64` (inputs scaled by
/// their block scale first): `saturated` — the input is beyond the destination's range
/// (largest finite magnitude; [0, 1] with `.sat`; an integer type's range), or infinite, and
/// the output is finite; `overflow_to_inf` — a finite input became ±∞; `flushed_to_zero` — a
/// non-zero finite input became zero (flushed or underflowed; `.relu` zeroing negatives is not
/// counted); `nan` — the value read back is NaN: the output is NaN, or its block's scale is
/// (every element of a block that holds a NaN or an infinity is NaN, whatever its code);
/// `nan_to_number` — a NaN input became a number. The absolute error `|output × scale −
/// input|` is taken over the elements where input and output are both finite (NaN and
/// infinite elements, and the blocks of a NaN scale, are left out).
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
    /// Elements whose value is NaN: NaN outputs, and every element of a block whose scale is
    /// NaN.
    pub nan: u64,
    /// NaN inputs that became numbers.
    pub nan_to_number: u64,
    /// Blocks scaled (block scaling only).
    pub blocks: u64,
    /// Blocks that got the NaN scale (`0xff`, or the scale format's NaN: they held a NaN or
    /// an infinity).
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
    /// The second-level (per-tensor) scale's tensor or sidecar file (NVFP4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_2: Option<String>,
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
    /// Things the caller should know (a thread count lowered, a tensor whose blocks got the
    /// NaN scale, …).
    pub notes: Vec<String>,
    /// The statistics of all converted tensors together.
    pub total: Stats,
}

/// A selected tensor that was copied unchanged because the conversion cannot take it: a
/// dtype with no gpucvt format, an integer tensor (see [`Options::integers`]), a scalar or a
/// last dimension that does not divide into blocks, a tensor without elements (with block
/// scales), a NaN or an infinity under `f32`, `bf16` or `ue4m3` block scales (its block's
/// scale would be NaN), an element count that does not fill the packed bytes of FP4/FP6, or
/// a dtype the conversion does not accept.
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
    sidecar_path(output, "_scale")
}

/// The sidecar file of the second-level (per-tensor) scale of a `.npy` or raw output:
/// `_scale_2` inserted before the extension.
pub fn scale_2_path(output: &Path) -> PathBuf {
    sidecar_path(output, "_scale_2")
}

/// The metadata file of a block-scaled `.npy` or raw output: the output's name with
/// `.gpucvt.json` after it (`out.npy` → `out.npy.gpucvt.json`). It records the element
/// format, the shape, the block scaling and a checksum of the data and of each scale file,
/// so that a dequantization reads the blocking back and refuses scale files that do not
/// belong to the data.
pub fn metadata_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".gpucvt.json");
    output.with_file_name(name)
}

fn sidecar_path(output: &Path, suffix: &str) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match output.extension() {
        Some(e) => format!("{stem}{suffix}.{}", e.to_string_lossy()),
        None => format!("{stem}{suffix}"),
    };
    output.with_file_name(name)
}

/// Dequantizes a file that was block-scaled.
///
/// `.safetensors`: every tensor `NAME` with a scale tensor `NAME_scale` (or
/// `NAME_scale_inv`), and `NAME_scale_2` with NVFP4's two levels, becomes the exact products
/// `q × s (× s2)` rounded once to [`DequantizeOptions::to`]; the scale tensors are dropped,
/// every other tensor is copied. How each tensor is blocked comes from the metadata gpucvt
/// writes, else from [`DequantizeOptions::block`], else from the shapes.
///
/// `.npy` and raw: the one tensor, with the sidecar scale files [`scale_path`] (and
/// [`scale_2_path`]) of the input, as [`convert_file`] writes them; the output is of the
/// input's kind. With the metadata file [`metadata_path`] that [`convert_file`] writes
/// beside them, the element format and the blocking come from it, and a part whose
/// checksum it does not record is refused ([`Error::Corrupt`]). Without it, the element
/// format comes from the `.npy` dtype where it tells (`<f2`), else from
/// [`DequantizeOptions::elements`]; the blocking from [`DequantizeOptions::block`], else
/// (`.npy`) from the scale array's shape and dtype where they tell it unambiguously.
pub fn dequantize_file(
    input: &Path,
    output: &Path,
    opts: &DequantizeOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary> {
    let output = &resolve_output(output)?;
    let (kind, _) = input_kind(input, output, "")?;
    if let Ok(m) = std::fs::metadata(output) {
        refuse_special(output, &m)?;
    }
    if ![
        gpucvt_core::format::F32,
        gpucvt_core::format::BF16,
        gpucvt_core::format::F16,
        gpucvt_core::format::F64,
    ]
    .contains(&opts.to)
    {
        return Err(Error::Invalid(format!(
            "dequantize to f32, bf16, f16 or f64, not {}",
            opts.to
        )));
    }
    refuse_same(input, output)?;
    if kind == Kind::Safetensors {
        refuse_read_only(output, opts.force)?;
    } else {
        let read = files::unit::Unit::of(input);
        files::unit::check_unit(&read.parts(), &files::unit::Unit::of(output), opts.force)?;
    }
    let mut notes = Vec::new();
    let threads = clamp_threads(opts.threads, &mut notes);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start the worker threads: {e}")))?;
    let mut s = match kind {
        Kind::Safetensors => {
            files::dequantize::dequantize_safetensors(input, output, opts, &pool, progress)?
        }
        Kind::Npy | Kind::Raw => files::dequantize_single::dequantize_single(
            input,
            output,
            opts,
            &pool,
            progress,
            kind == Kind::Npy,
        )?,
    };
    s.notes = notes;
    Ok(s)
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
        raw: kind == Kind::Raw,
    };
    let mut summary = match kind {
        Kind::Safetensors => {
            let layout = st_layout(input, opts, &mut f, len, &pool)?;
            if !layout.converts_any() {
                return Err(nothing_to_convert(input, &layout));
            }
            ctx.safetensors(&mut f, layout)?
        }
        Kind::Npy | Kind::Raw => {
            let layout = single_layout(input, output, opts, &mut f, len, kind == Kind::Npy, &pool)?;
            ctx.single(&mut f, layout)?
        }
    };
    notes.append(&mut summary.notes);
    summary.notes = notes;
    Ok(summary)
}

/// What [`convert_file`] would do, without writing anything: every tensor with its
/// conversion or the reason it is kept, and the output's size. The same checks run, so an
/// input that [`convert_file`] would refuse is refused here too.
pub fn plan_file(input: &Path, output: &Path, opts: &Options) -> Result<FilePlan> {
    let output = &resolve_output(output)?;
    let (mut f, len, kind) = open_input(input, output, opts)?;
    // (The tensors that f32, bf16 and ue4m3 scales would quantize are read, as a conversion
    // reads them first, to find the ones it keeps.)
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(clamp_threads(opts.threads, &mut Vec::new()))
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start the worker threads: {e}")))?;
    match kind {
        Kind::Safetensors => Ok(st_layout(input, opts, &mut f, len, &pool)?.plan()),
        Kind::Npy | Kind::Raw => {
            Ok(single_layout(input, output, opts, &mut f, len, kind == Kind::Npy, &pool)?.plan())
        }
    }
}

/// The worker threads for `asked` (0: one per core), by the rule every front end shares
/// ([`gpucvt_kernels::threads::Threads`]), with a note when fewer are used.
fn clamp_threads(asked: usize, notes: &mut Vec<String>) -> usize {
    let t = gpucvt_kernels::threads::Threads::new(asked);
    notes.extend(t.note());
    t.used
}

/// The kind of the input file, which the output's must be, and its metadata; the input
/// must be a regular file (`why`: more words for the message when it is not).
fn input_kind(input: &Path, output: &Path, why: &str) -> Result<(Kind, std::fs::Metadata)> {
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
            "the input {} is {}; gpucvt reads a regular file{why}",
            input.display(),
            file_type_name(&meta)
        )));
    }
    Ok((kind, meta))
}

/// The checks every conversion makes before reading the input; the input opened, its length
/// and kind.
fn open_input(input: &Path, output: &Path, opts: &Options) -> Result<(File, u64, Kind)> {
    let (kind, meta) = input_kind(
        input,
        output,
        " (it reads parts of the file by position, which a pipe cannot give: save the data to a file first)",
    )?;
    refuse_same(input, output)?;
    if let Some(b) = opts.block {
        b.check()?;
    }
    if kind == Kind::Safetensors {
        refuse_read_only(output, opts.force)?;
    } else {
        let unit = files::unit::Unit::of(output);
        files::unit::check_unit(&[input], &unit, opts.force)?;
        if let Some(b) = opts.block {
            let mut written = vec![unit.scale.as_path(), unit.meta.as_path()];
            if b.second_level {
                written.push(&unit.scale_2);
            }
            files::unit::check_names(&unit, &written)?;
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
