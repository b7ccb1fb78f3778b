//! What a `.safetensors` conversion does to each tensor, decided from the header before
//! anything is written: converted (with its plan key and random stream), copied, or kept.

use crate::chunk::splitmix64;
use crate::dtype::{self, dense_packing, Packing};
use crate::error::{Error, Result};
use crate::files::checkpoint::stacks::{self, Scheme, Storage};
use crate::files::finite::{self, Scan};
use crate::files::safetensors::header as st;
use crate::files::{decide, scale_outputs, PlanKey, Scaled};
use crate::options::{msg, Layout, Opt};
use crate::{FilePlan, Options, PlannedTensor};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Format;
use safetensors::tensor::TensorInfo;
use safetensors::Dtype;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::Path;

/// Glob patterns of tensor names (`*`, `?`, `[…]`); a pattern also matches the name it
/// spells exactly, so names with brackets can be given as they are.
pub(crate) struct Patterns(Vec<(String, glob::Pattern)>);

impl Patterns {
    pub(crate) fn new(texts: &[String], option: Opt) -> Result<Patterns> {
        let mut out = Vec::with_capacity(texts.len());
        for t in texts {
            let p = glob::Pattern::new(t).map_err(|e| {
                Error::Option(msg![
                    (option, format!("{t:?}")),
                    format!(" is not a valid pattern: {e}")
                ])
            })?;
            out.push((t.clone(), p));
        }
        Ok(Patterns(out))
    }

    pub(crate) fn matches(&self, i: usize, name: &str) -> bool {
        let (text, p) = &self.0[i];
        text == name || p.matches(name)
    }

    pub(crate) fn any(&self, name: &str) -> bool {
        (0..self.0.len()).any(|i| self.matches(i, name))
    }

    /// Whether some pattern spells `name` exactly (no wildcard chose it).
    pub(crate) fn names(&self, name: &str) -> bool {
        self.0.iter().any(|(t, _)| t == name)
    }
}

/// The conversion of one tensor of a `.safetensors` file.
/// A tensor's conversion: kept small, as a file can hold a million tensors.
pub(crate) struct StConvert {
    /// Its [`PlanKey`]: an index into [`StLayout::keys`].
    pub(crate) key: u32,
    pub(crate) stream: u64,
    pub(crate) n: u64,
    /// The scale tensor's name and bytes.
    pub(crate) scale: Option<(String, u64)>,
    /// The second-level scale tensor's name and bytes (NVFP4).
    pub(crate) scale_2: Option<(String, u64)>,
    /// Its largest magnitude (an `f32` encoding), where it was read before the header was
    /// written ([`finite::scan`]).
    pub(crate) amax: Option<u32>,
}

pub(crate) enum StAction {
    /// Not selected: copied unchanged.
    Copy,
    /// Selected but not convertible: copied unchanged.
    Keep(String),
    /// Not a linear layer's weight, where the tensors are chosen by default: copied
    /// unchanged.
    Default(&'static str),
    Convert(StConvert),
}

pub(crate) struct StEntry {
    pub(crate) name: String,
    /// The name it is stored under (a stack's layout may rename a converted weight).
    pub(crate) out_name: String,
    pub(crate) in_dtype: Dtype,
    pub(crate) shape: Vec<u64>,
    pub(crate) in_bytes: u64,
    pub(crate) out_dtype: Dtype,
    pub(crate) out_bytes: u64,
    pub(crate) action: StAction,
}

/// The output of a `.safetensors` conversion, decided before anything is written.
pub(crate) struct StLayout {
    pub(crate) header: Vec<u8>,
    pub(crate) entries: Vec<StEntry>,
    /// The distinct conversions of the file.
    pub(crate) keys: Vec<PlanKey>,
    /// Where the input's data starts.
    pub(crate) in_data_start: u64,
    pub(crate) data_len: u64,
    /// How a stack's layout stores the converted tensors (`None`: gpucvt's own).
    pub(crate) storage: Option<Storage>,
}

impl StLayout {
    pub(crate) fn converts_any(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.action, StAction::Convert(_)))
            || self
                .entries
                .iter()
                .all(|e| matches!(e.action, StAction::Copy))
    }

    pub(crate) fn plan(&self) -> FilePlan {
        FilePlan {
            kind: "safetensors",
            tensors: self
                .entries
                .iter()
                .map(|e| {
                    let (action, reason, scale) = match &e.action {
                        StAction::Copy => ("copy", None, None),
                        StAction::Keep(r) => ("keep", Some(r.clone()), None),
                        StAction::Default(r) => ("keep", Some(r.to_string()), None),
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

pub(crate) fn nothing_to_convert(input: &Path, layout: &StLayout) -> Error {
    // The conversion's refusals first: they say what to change; then the default choice's.
    let refused = layout.entries.iter().filter_map(|e| match &e.action {
        StAction::Keep(r) => Some(format!("{:?}: {r}", e.name)),
        _ => None,
    });
    let left_out = layout.entries.iter().filter_map(|e| match &e.action {
        StAction::Default(r) => Some(format!("{:?}: {r}", e.name)),
        _ => None,
    });
    let all = refused.clone().count() + left_out.clone().count();
    let reasons: Vec<String> = refused.chain(left_out.clone()).take(3).collect();
    let list = format!(
        "{}{}",
        reasons.join("; "),
        if reasons.len() < all { "; …" } else { "" }
    );
    if left_out.count() == 0 {
        return Error::Invalid(format!(
            "no selected tensor of {} can be converted ({list})",
            input.display()
        ));
    }
    Error::Option(msg![
        format!(
            "no tensor of {} is chosen: by default only linear layers' weights are \
             converted, and none of its tensors can be converted as one ({list}); name the \
             tensors to convert (",
            input.display()
        ),
        Opt::Tensor,
        ") or convert them all (",
        Opt::All,
        ")"
    ])
}

/// Reads the header of a `.safetensors` input (leaving `f` at the start of its data) and
/// decides what happens to each tensor. Tensors that block scales other than `ue8m0` would quantize are read on `pool`'s workers,
/// to keep those holding a NaN or an infinity ([`finite`]).
pub(crate) fn st_layout(
    input: &Path,
    opts: &Options,
    f: &mut File,
    len: u64,
    pool: &rayon::ThreadPool,
    whole: bool,
) -> Result<StLayout> {
    let file = input.display().to_string();
    let hdr = st::read_header(f, len, input)?;
    let in_data_start = 8 + (len - 8 - hdr_data_len(&hdr));
    let wanted = Patterns::new(&opts.tensors, Opt::Tensor)?;
    let excluded = Patterns::new(&opts.exclude, Opt::Exclude)?;
    if whole {
        // (In a checkpoint folder, a pattern must match in some shard: checked over all.)
        every_pattern_matches(&file, &hdr, &wanted)?;
    }
    let mut b = Builder {
        taken: hdr.tensors.iter().map(|(n, _)| n.as_str()).collect(),
        ..Builder::default()
    };
    let mut scan = Scanner {
        input,
        f,
        pool,
        in_data_start,
    };
    for (t, (name, info)) in hdr.tensors.iter().enumerate() {
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        let what = format!("{file}: tensor {name:?}");
        let selected = (opts.tensors.is_empty() || wanted.any(name)) && !excluded.any(name);
        let by_default = opts.tensors.is_empty() && !opts.all;
        let left_out = match by_default {
            true => crate::options::not_a_linear_weight(name, &shape),
            false => None,
        };
        let action = if let (true, Some(reason)) = (selected, left_out) {
            StAction::Default(reason)
        } else if selected {
            match decision(opts, &wanted, &mut scan, &what, name, info, &shape)? {
                Err(reason) if opts.strict => {
                    return Err(Error::Option(msg![
                        format!("{what}: {reason} ("),
                        Opt::Strict,
                        ": every selected tensor must be converted)"
                    ]))
                }
                Err(reason) => StAction::Keep(reason),
                Ok(chosen) => b.convert(opts, &what, t, name, &shape, chosen)?,
            }
        } else {
            StAction::Copy
        };
        b.push(name, info, shape, action);
    }
    let Builder {
        taken,
        keys,
        metadata_notes,
        out,
        entries,
        offset,
        storage,
        ..
    } = b;
    // (The input's tensor list is not needed again: freed before the output header is built.)
    drop(taken);
    let mut metadata = hdr.metadata;
    if !metadata_notes.is_empty() {
        let m = metadata.get_or_insert_with(HashMap::new);
        for (name, b) in metadata_notes {
            m.insert(crate::scaling::metadata_key(&name), b.describe());
        }
    }
    drop(hdr.tensors);
    let header = st::header_bytes(metadata, out)?;
    Ok(StLayout {
        header,
        entries,
        keys,
        in_data_start,
        data_len: offset,
        storage,
    })
}

/// Every `tensors` pattern matches some tensor of the file.
fn every_pattern_matches(file: &str, hdr: &st::StHeader, wanted: &Patterns) -> Result<()> {
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
    Ok(())
}

/// Reads a selected tensor's data where its block scales need its largest magnitude first.
struct Scanner<'a> {
    input: &'a Path,
    f: &'a mut File,
    pool: &'a rayon::ThreadPool,
    in_data_start: u64,
}

/// A selected tensor's conversion: its source format, the decision, and the largest
/// magnitude where the data was scanned for it.
type Chosen = (Format, (Conversion, Packing, Scaled), Option<u32>);

/// What happens to a selected tensor: its conversion, or why it is kept.
fn decision(
    opts: &Options,
    wanted: &Patterns,
    scan: &mut Scanner<'_>,
    what: &str,
    name: &str,
    info: &TensorInfo,
    shape: &[u64],
) -> Result<std::result::Result<Chosen, String>> {
    let decision = match dtype::format_of_safetensors(info.dtype) {
        None => Err(format!("dtype {:?} has no gpucvt format", info.dtype)),
        Some(src) if src.is_integer() && !opts.integers && !wanted.names(name) => Err(format!(
            "integer dtype {:?} (integer tensors are kept unless named exactly)",
            info.dtype
        )),
        Some(src) => decide(opts, what, &src, shape, true)?.map(|d| (src, d)),
    };
    Ok(match decision {
        Ok((src, (conv, pack, Scaled::General(b)))) if finite::needs_scan(&b) => {
            let at = scan.in_data_start + info.data_offsets.0 as u64;
            let n: u64 = shape.iter().product();
            match finite::scan(scan.f, scan.input, &src, at, n, scan.pool)? {
                Scan::Finite(m) => Ok((src, (conv, pack, Scaled::General(b)), Some(m))),
                Scan::NonFinite(i, v) => Err(finite::reason(&b, shape, i, v)),
            }
        }
        Ok((src, d)) => Ok((src, d, None)),
        Err(e) => Err(e),
    })
}

/// The output layout as it is built, tensor by tensor.
#[derive(Default)]
struct Builder<'h> {
    /// The names in use (the input's, then the scale tensors added).
    taken: HashSet<&'h str>,
    scale_names: HashSet<String>,
    keys: Vec<PlanKey>,
    key_index: HashMap<PlanKey, u32>,
    /// The block scaling of each scaled tensor, recorded in the header's metadata for
    /// dequantization.
    metadata_notes: Vec<(String, crate::scaling::BlockScaling)>,
    out: Vec<(String, TensorInfo)>,
    entries: Vec<StEntry>,
    offset: u64,
    /// The stack storage of the converted tensors (one recipe: one storage per file).
    storage: Option<Storage>,
}

impl<'h> Builder<'h> {
    /// The conversion of tensor `t` (`name`): its plan key, random stream and scale
    /// tensors' names.
    fn convert(
        &mut self,
        opts: &Options,
        what: &str,
        t: usize,
        name: &str,
        shape: &[u64],
        (src, (conv, dst_pack, scaled), amax): Chosen,
    ) -> Result<StAction> {
        let dst = conv.dst;
        dtype::safetensors_of(&dst).ok_or_else(|| {
            Error::Unsupported(format!(
                "{what}: safetensors has no dtype for {dst}; write .npy or raw output instead"
            ))
        })?;
        let n: u64 = shape.iter().product();
        let storage = self.storage(opts, what, name, shape, &dst, scaled)?;
        let mut named = Vec::new();
        let outs = scale_outputs(shape, scaled);
        let mut renamed = Vec::new();
        if let Some(s) = &storage {
            // (`storage` checked that the name is `P.weight`.)
            let module = stacks::module_of(name).unwrap_or(name);
            if s.weight != "weight" {
                renamed.push(format!("{module}.{}", s.weight));
            }
            let suffixes = std::iter::once(s.scale).chain(s.second.map(|x| x.0));
            named.extend(
                outs.iter()
                    .zip(suffixes)
                    .map(|(o, x)| (format!("{module}.{x}"), o.bytes)),
            );
        } else {
            named.extend(
                outs.iter()
                    .map(|o| (format!("{name}{}", o.suffix), o.bytes)),
            );
        }
        for sname in renamed.iter().chain(named.iter().map(|x| &x.0)) {
            if self.taken.contains(sname.as_str()) || self.scale_names.contains(sname) {
                return Err(Error::Invalid(format!(
                    "{what}: it would write a tensor named {sname:?}, which the file already has"
                )));
            }
            self.scale_names.insert(sname.clone());
        }
        let mut named = named.into_iter();
        let (scale, scale_2) = (named.next(), named.next());
        if let Some(b) = scaled.scaling() {
            self.metadata_notes.push((name.to_string(), b));
        }
        let key = PlanKey {
            conv,
            src_pack: dense_packing(&src),
            dst_pack,
            scaled,
        };
        let keys = &mut self.keys;
        let key = *self.key_index.entry(key).or_insert_with(|| {
            keys.push(key);
            keys.len() as u32 - 1
        });
        Ok(StAction::Convert(StConvert {
            key,
            stream: splitmix64(opts.seed.wrapping_add(t as u64)),
            n,
            scale,
            scale_2,
            amax,
        }))
    }

    /// How the layout asked for stores the tensor `name` (`None`: gpucvt's own layout),
    /// which a stack's layout must be able to: a linear layer's weight (`P.weight`, 2-d)
    /// quantized by a scheme that stack has.
    fn storage(
        &mut self,
        opts: &Options,
        what: &str,
        name: &str,
        shape: &[u64],
        dst: &Format,
        scaled: Scaled,
    ) -> Result<Option<Storage>> {
        let layout = opts.layout;
        if layout == Layout::Gpucvt {
            return Ok(None);
        }
        if stacks::module_of(name).is_none() || shape.len() != 2 {
            return Err(Error::Option(msg![
                format!(
                    "{what}: the {} layout stores linear layers' weights (2-d tensors named \
                     P.weight), and this tensor is not one; leave it out (",
                    layout.name()
                ),
                Opt::Exclude,
                ") or write gpucvt's own layout"
            ]));
        }
        let Some(scheme) = Scheme::of(dst, scaled.scaling().as_ref()) else {
            return Err(Error::Option(msg![
                format!(
                    "{what}: the {} layout holds the stacks' named schemes; this conversion \
                     (to {dst}{}) is none of them: give one of the recipes nvfp4, mxfp4, \
                     mxfp8, fp8-tensor, fp8-row, fp8-block128 (",
                    layout.name(),
                    match scaled.scaling() {
                        Some(b) => format!(", {}", b.describe()),
                        None => ", without block scales".to_string(),
                    }
                ),
                Opt::Recipe,
                ")"
            ]));
        };
        let s = stacks::storage(layout, scheme)
            .map_err(|m| Error::Option(m.after(format!("{what}: {}: ", layout.name()))))?;
        self.storage = Some(s);
        Ok(Some(s))
    }

    /// The tensor's entry and its output header entries (with its scale tensors').
    fn push(&mut self, name: &'h str, info: &TensorInfo, shape: Vec<u64>, action: StAction) {
        let in_bytes = (info.data_offsets.1 - info.data_offsets.0) as u64;
        let (out_dtype, out_bytes) = match &action {
            StAction::Convert(c) => {
                let key = &self.keys[c.key as usize];
                // (`convert` checked that the destination has a dtype.)
                let d = dtype::safetensors_of(&key.conv.dst).unwrap_or(info.dtype);
                (d, key.dst_pack.bytes_for(c.n))
            }
            _ => (info.dtype, in_bytes),
        };
        let converted = matches!(action, StAction::Convert(_));
        let (out_name, out_dtype, stored_shape) = match &self.storage {
            Some(s) if converted => {
                let (d, sh) = stacks::weight_stored(s, out_dtype, &info.shape);
                let module = stacks::module_of(name).unwrap_or(name);
                (format!("{module}.{}", s.weight), d, sh)
            }
            _ => (name.to_string(), out_dtype, info.shape.clone()),
        };
        self.header_entry(out_name.clone(), out_dtype, stored_shape, out_bytes);
        if let StAction::Convert(c) = &action {
            let outs = scale_outputs(&shape, self.keys[c.key as usize].scaled);
            for (i, (o, (sname, sbytes))) in outs
                .into_iter()
                .zip(c.scale.iter().chain(&c.scale_2))
                .enumerate()
            {
                let mut dtype = o
                    .format
                    .and_then(|f| dtype::safetensors_of(f.storage()))
                    .unwrap_or(Dtype::F32);
                let mut sshape = o.shape.clone();
                if let Some(s) = &self.storage {
                    if i == 0 {
                        dtype = stacks::scale_dtype(s, dtype);
                        sshape = s.scale_shape.apply(&sshape);
                    } else if let Some((_, stacks::Second::Reciprocal)) = s.second {
                        sshape = vec![1];
                    }
                }
                let sshape = sshape.iter().map(|&d| d as usize).collect();
                self.header_entry(sname.clone(), dtype, sshape, *sbytes);
            }
        }
        self.entries.push(StEntry {
            name: name.to_string(),
            out_name,
            in_dtype: info.dtype,
            shape,
            in_bytes,
            out_dtype,
            out_bytes,
            action,
        });
        self.taken.insert(name);
    }

    fn header_entry(&mut self, name: String, dtype: Dtype, shape: Vec<usize>, bytes: u64) {
        let at = self.offset as usize;
        self.out.push((
            name,
            TensorInfo {
                dtype,
                shape,
                data_offsets: (at, at + bytes as usize),
            },
        ));
        self.offset += bytes;
    }
}

fn hdr_data_len(h: &st::StHeader) -> u64 {
    h.tensors.last().map_or(0, |(_, i)| i.data_offsets.1 as u64)
}
