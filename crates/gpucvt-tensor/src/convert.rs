//! The entry points: [`convert_file`], [`plan_file`], [`dequantize_file`], and the checks
//! every run makes before it reads anything.

use crate::dequantize::DequantizeOptions;
use crate::error::{Error, Result};
use crate::files::output::{
    file_type_name, refuse_read_only, refuse_same, refuse_special, resolve_output,
};
use crate::files::safetensors::layout::{nothing_to_convert, st_layout};
use crate::files::single::single_layout;
use crate::files::{self, Ctx};
use crate::stream::pipeline;
use crate::{FilePlan, Options, Summary};
use std::fs::File;
use std::path::{Path, PathBuf};

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
        Kind::Safetensors => crate::dequantize::safetensors::dequantize_safetensors(
            input, output, opts, &pool, progress,
        )?,
        Kind::Npy | Kind::Raw => crate::dequantize::single::dequantize_single(
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
    if input.is_dir() {
        let mut notes = Vec::new();
        let pool = start_pool(clamp_threads(opts.threads, &mut notes))?;
        check_options(opts, Kind::Safetensors)?;
        let mut s =
            crate::files::checkpoint::dir::convert_dir(input, output, opts, &pool, progress)?;
        notes.append(&mut s.notes);
        s.notes = notes;
        return Ok(s);
    }
    let output = &resolve_output(output)?;
    let (mut f, len, kind) = open_input(input, output, opts)?;
    let mut notes = Vec::new();
    let threads = clamp_threads(opts.threads, &mut notes);
    let pool = start_pool(threads)?;
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
            let layout = st_layout(input, opts, &mut f, len, &pool, true)?;
            if !layout.converts_any() {
                return Err(nothing_to_convert(input, &layout));
            }
            if opts.layout != crate::options::Layout::Gpucvt {
                notes.push(format!(
                    "the {} layout's configuration (config.json's quantization_config) is \
                     written when a checkpoint folder is converted; a single file gets the \
                     layout's tensors only",
                    opts.layout.name()
                ));
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
    if input.is_dir() {
        let pool = start_pool(clamp_threads(opts.threads, &mut Vec::new()))?;
        check_options(opts, Kind::Safetensors)?;
        return crate::files::checkpoint::dir::plan_dir(input, output, opts, &pool);
    }
    let output = &resolve_output(output)?;
    let (mut f, len, kind) = open_input(input, output, opts)?;
    // (The tensors that f32, bf16 and ue4m3 scales would quantize are read, as a conversion
    // reads them first, to find the ones it keeps.)
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(clamp_threads(opts.threads, &mut Vec::new()))
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start the worker threads: {e}")))?;
    match kind {
        Kind::Safetensors => Ok(st_layout(input, opts, &mut f, len, &pool, true)?.plan()),
        Kind::Npy | Kind::Raw => {
            Ok(single_layout(input, output, opts, &mut f, len, kind == Kind::Npy, &pool)?.plan())
        }
    }
}

fn start_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start the worker threads: {e}")))
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

/// The checks of the options alone, for an input of `kind`.
fn check_options(opts: &Options, kind: Kind) -> Result<()> {
    if let Some(b) = opts.block {
        b.check()?;
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
    if opts.layout != crate::options::Layout::Gpucvt && kind != Kind::Safetensors {
        return Err(Error::Option(crate::options::msg![
            crate::options::Opt::Layout,
            " lays out .safetensors checkpoints; a .npy or raw output has gpucvt's own layout"
        ]));
    }
    Ok(())
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
    check_options(opts, kind)?;
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
    let f = File::open(input).map_err(|e| Error::io("open", input, e))?;
    Ok((f, meta.len(), kind))
}
