//! The file kinds and what they share. A conversion reads the input's header and decides
//! what happens to each tensor (a layout, which is also what `--dry-run` prints), then writes
//! the output from it: [`single`] for `.npy` and raw files (one tensor, block scales in a
//! sidecar), [`safetensors`] for `.safetensors` (many tensors, scales as tensors of their
//! own). [`npy`] and [`raw`] read those inputs' headers, [`selfcheck`] reads every output
//! back before it is kept.

pub(crate) mod checkpoint;
pub(crate) mod finite;
pub mod npy;
pub(crate) mod output;
pub(crate) mod raw;
pub(crate) mod safetensors;
pub(crate) mod selfcheck;
pub(crate) mod single;
pub(crate) mod unit;

use crate::chunk::Plan;
pub(crate) use crate::chunk::Scaled;
use crate::dtype::{container_bytes, dense_packing, Packing};
use crate::error::{Error, Result};
use crate::scaling::{Geometry, ScaleFormat};
use crate::stream::pipeline;
use crate::{Options, Stats};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Format;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

pub(crate) struct Ctx<'a> {
    pub(crate) input: &'a Path,
    pub(crate) output: &'a Path,
    pub(crate) opts: &'a Options,
    pub(crate) pool: &'a rayon::ThreadPool,
    pub(crate) done: u64,
    pub(crate) total: u64,
    pub(crate) progress: &'a mut dyn FnMut(u64, u64),
    pub(crate) buffers: pipeline::Buffers,
    /// The input is raw data (no header).
    pub(crate) raw: bool,
}

pub(crate) fn shape_text(shape: &[u64]) -> String {
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
pub(crate) struct PlanKey {
    pub(crate) conv: Conversion,
    pub(crate) src_pack: Packing,
    pub(crate) dst_pack: Packing,
    pub(crate) scaled: Scaled,
}

/// One scale tensor of a converted tensor: its name suffix, format, shape and bytes.
pub(crate) struct ScaleOut {
    pub(crate) suffix: &'static str,
    pub(crate) format: Option<ScaleFormat>,
    pub(crate) shape: Vec<u64>,
    pub(crate) bytes: u64,
}

/// The scale tensors of a tensor of `shape` scaled by `scaled`: `_scale` (the block
/// scales, in their layout) and, with a second level, `_scale_2` (one `f32`; `format`
/// `None`).
pub(crate) fn scale_outputs(shape: &[u64], scaled: Scaled) -> Vec<ScaleOut> {
    let Some(b) = scaled.scaling() else {
        return Vec::new();
    };
    let sshape = b.written_shape(shape);
    let mut out = vec![ScaleOut {
        suffix: "_scale",
        format: Some(b.format),
        bytes: sshape.iter().product::<u64>() * b.format.bytes() as u64,
        shape: sshape,
    }];
    if b.second_level {
        out.push(ScaleOut {
            suffix: "_scale_2",
            format: None,
            shape: Vec::new(),
            bytes: 4,
        });
    }
    out
}

#[derive(Default)]
pub(crate) struct Plans(HashMap<PlanKey, Plan>);

impl Plans {
    pub(crate) fn get(&mut self, key: PlanKey, stream: u64) -> &Plan {
        let plan = self.0.entry(key).or_insert_with(|| {
            Plan::new(
                key.conv,
                key.src_pack,
                key.dst_pack,
                key.scaled.mx(),
                stream,
            )
        });
        plan.stream = stream;
        plan
    }
}

/// Why a tensor cannot be converted, or `None`: the conversion of `src` elements, checked
/// against the shape. `Err` is for problems of the whole run (a recipe whose destination the
/// file type cannot hold); `Ok(Err(reason))` for this tensor alone.
pub(crate) type Decision = std::result::Result<(Conversion, Packing, Scaled), String>;

pub(crate) fn decide(
    opts: &Options,
    what: &str,
    src: &Format,
    shape: &[u64],
    pack_dense: bool,
) -> Result<Decision> {
    let conv = match (opts.recipe)(src) {
        Ok(c) => c,
        Err(e) => return Ok(Err(e.to_string())),
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
    let scaled = match opts.block {
        None => Scaled::No,
        Some(_) if n == 0 => {
            return Ok(Err(format!(
                "it has no elements (shape {}): there is nothing to block-scale",
                shape_text(shape)
            )))
        }
        Some(b) => {
            if let Err(e) = Geometry::new(shape, b.block, b.axis) {
                return Ok(Err(e.to_string()));
            }
            match Scaled::choose(src, &conv, b, shape) {
                Ok(s) => s,
                Err(reason) => return Ok(Err(reason)),
            }
        }
    };
    Ok(Ok((conv, dst_pack, scaled)))
}

/// The note on a converted tensor some of whose blocks hold a NaN or an infinity: those got
/// the NaN scale (OCP MX's rule for `ue8m0` scales) and read back as NaN.
pub(crate) fn nan_scale_note(name: &str, st: &Stats) -> Option<String> {
    (st.nan_blocks > 0).then(|| {
        format!(
            "{name}: {} of its {} blocks hold a NaN or an infinity and got the NaN scale, so they read back as NaN ({} of its {} elements are NaN)",
            st.nan_blocks, st.blocks, st.nan, st.elements
        )
    })
}

/// With [`Options::strict`], a converted tensor some of whose blocks got the NaN scale (an
/// attention mask's `-inf` under MX scales) is an error instead of a note: the output is
/// not kept.
pub(crate) fn refuse_nan_scales(opts: &Options, name: &str, st: &Stats) -> Result<()> {
    if !opts.strict || st.nan_blocks == 0 {
        return Ok(());
    }
    Err(Error::Option(crate::options::msg![
        format!(
            "{name}: {} of its {} blocks hold a NaN or an infinity, whose scale would be NaN \
             and which would read back as NaN (",
            st.nan_blocks, st.blocks
        ),
        crate::options::Opt::Strict,
        "); leave the tensor out, or convert without it to keep OCP MX's NaN scale"
    ]))
}

/// An internal error: the writer wrote a different number of bytes than it planned.
pub(crate) fn short_region(path: &Path, what: &str, planned: u64, written: u64) -> Error {
    Error::Internal(format!(
        "{}: {what}: {written} bytes were written where {planned} were planned; no output was kept (please report this)",
        path.display()
    ))
}

impl Ctx<'_> {
    pub(crate) fn tick(&mut self, bytes: u64) {
        self.done += bytes;
        (self.progress)(self.done, self.total);
    }

    pub(crate) fn stream<W: Write + Send>(
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
            raw: self.raw,
            cancel: self.opts.cancel.as_deref(),
        };
        let pool = self.pool;
        let mut done = self.done;
        let total = self.total;
        let progress = &mut *self.progress;
        let tensor = pipeline::Tensor {
            input: f,
            n,
            output: w,
        };
        let r = pipeline::run(
            plan,
            pool,
            tensor,
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
}
