//! A checkpoint folder (`config.json`, `model.safetensors` or shards
//! `model-0000K-of-0000N.safetensors` with `model.safetensors.index.json`, tokenizer files)
//! converted into a new folder: every shard converted with the same options, the index's
//! `weight_map` and `total_size` rewritten for the tensors written, the stack's
//! quantization configuration added, every other file copied. The folder is written beside
//! the output under a temporary name and renamed into place at the end.

use crate::error::{Error, Result};
use crate::files::checkpoint::config::quantization_config;
use crate::files::checkpoint::stacks::{self, Scheme};
use crate::files::output::{committing, register_temporary, unregister_temporary};
use crate::files::safetensors::header as st;
use crate::files::safetensors::layout::{st_layout, Patterns, StAction, StLayout};
use crate::files::Ctx;
use crate::options::{msg, Layout, Opt};
use crate::stream::pipeline;
use crate::{FilePlan, Options, Summary};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The index file of a sharded checkpoint.
pub(crate) const INDEX: &str = "model.safetensors.index.json";

/// The files of an input checkpoint folder.
struct Folder {
    /// The `.safetensors` files, by name.
    shards: Vec<String>,
    /// The index, parsed.
    index: Option<Map<String, Value>>,
    /// Everything else (files and folders), by name, copied.
    others: Vec<String>,
    /// The shards' total size.
    bytes: u64,
}

impl Folder {
    fn read(input: &Path) -> Result<Folder> {
        let mut names = Vec::new();
        for e in std::fs::read_dir(input).map_err(|e| Error::io("read", input, e))? {
            let e = e.map_err(|e| Error::io("read", input, e))?;
            let name = e.file_name().into_string().map_err(|n| {
                Error::Invalid(format!(
                    "{}: the name {n:?} is not UTF-8 text",
                    input.display()
                ))
            })?;
            names.push(name);
        }
        names.sort();
        let (mut shards, mut others, mut index, mut bytes) = (Vec::new(), Vec::new(), None, 0);
        for name in names {
            let path = input.join(&name);
            if name.to_ascii_lowercase().ends_with(".safetensors") {
                let m = std::fs::metadata(&path).map_err(|e| Error::io("read", &path, e))?;
                if !m.is_file() {
                    return Err(Error::Invalid(format!(
                        "{} is not a regular file",
                        path.display()
                    )));
                }
                bytes += m.len();
                shards.push(name);
            } else if name == INDEX {
                index = Some(read_object(&path)?);
            } else {
                others.push(name);
            }
        }
        if shards.is_empty() {
            return Err(Error::Invalid(format!(
                "the input {} is a folder without .safetensors files; gpucvt converts a \
                 checkpoint folder's .safetensors shards",
                input.display()
            )));
        }
        Ok(Folder {
            shards,
            index,
            others,
            bytes,
        })
    }

    /// The index's `weight_map` agrees with the shards' headers: every tensor it names is in
    /// the shard it names, and every shard's tensors are in it.
    fn check_index(&self, input: &Path, headers: &[Vec<String>]) -> Result<()> {
        let Some(index) = &self.index else {
            return Ok(());
        };
        let path = input.join(INDEX);
        let map = index
            .get("weight_map")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: it has no \"weight_map\" object",
                    path.display()
                ))
            })?;
        let mut found = 0usize;
        for (shard, names) in self.shards.iter().zip(headers) {
            for n in names {
                match map.get(n).and_then(Value::as_str) {
                    Some(s) if s == shard => found += 1,
                    Some(s) => {
                        return Err(Error::Invalid(format!(
                            "{}: it places tensor {n:?} in {s}, but it is in {shard}",
                            path.display()
                        )))
                    }
                    None => {
                        return Err(Error::Invalid(format!(
                            "{}: tensor {n:?} of {shard} is not in its weight_map",
                            path.display()
                        )))
                    }
                }
            }
        }
        if found != map.len() {
            let missing = map
                .iter()
                .find(|(n, s)| {
                    let at = self
                        .shards
                        .iter()
                        .position(|x| Some(x.as_str()) == s.as_str());
                    !at.is_some_and(|i| headers[i].iter().any(|h| h == *n))
                })
                .map(|(n, s)| format!("{n:?} in {s}"))
                .unwrap_or_default();
            return Err(Error::Invalid(format!(
                "{}: its weight_map names a tensor no shard has ({missing})",
                path.display()
            )));
        }
        Ok(())
    }
}

fn read_object(path: &Path) -> Result<Map<String, Value>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::Invalid(format!(
            "{}: not a JSON object",
            path.display()
        ))),
        Err(e) => Err(Error::Invalid(format!(
            "{}: not valid JSON: {e}",
            path.display()
        ))),
    }
}

/// The tensor names of every shard, and a check that each `tensors` pattern matches a
/// tensor of some shard.
fn headers(input: &Path, folder: &Folder, opts: &Options) -> Result<Vec<Vec<String>>> {
    let mut all = Vec::with_capacity(folder.shards.len());
    for s in &folder.shards {
        let path = input.join(s);
        let mut f = File::open(&path).map_err(|e| Error::io("open", &path, e))?;
        let len = f.metadata().map_err(|e| Error::io("read", &path, e))?.len();
        let h = st::read_header(&mut f, len, &path)?;
        all.push(h.tensors.into_iter().map(|(n, _)| n).collect::<Vec<_>>());
    }
    let wanted = Patterns::new(&opts.tensors, Opt::Tensor)?;
    for (i, text) in opts.tensors.iter().enumerate() {
        if !all.iter().flatten().any(|n| wanted.matches(i, n)) {
            return Err(Error::Invalid(format!(
                "no shard of {} has a tensor named {text:?}",
                input.display()
            )));
        }
    }
    folder.check_index(input, &all)?;
    Ok(all)
}

/// The checks before anything is written: the output is a new or empty folder (or
/// replaced, with `force`), neither folder inside the other.
fn check_output(input: &Path, output: &Path, force: bool) -> Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(output) {
        if !m.is_dir() {
            return Err(Error::Invalid(format!(
                "the input {} is a checkpoint folder, so the output must be a folder too; {} \
                 exists and is not one",
                input.display(),
                output.display()
            )));
        }
        let empty = std::fs::read_dir(output)
            .map_err(|e| Error::io("read", output, e))?
            .next()
            .is_none();
        if !empty && !force {
            return Err(Error::Option(msg![
                format!(
                    "the output folder {} exists and is not empty; give a new folder, or \
                     replace it (",
                    output.display()
                ),
                Opt::Force,
                ")"
            ]));
        }
    }
    let canon_in = std::fs::canonicalize(input).map_err(|e| Error::io("read", input, e))?;
    let parent = parent_of(output);
    let canon_parent =
        std::fs::canonicalize(&parent).map_err(|e| Error::io("write", &parent, e))?;
    let canon_out = canon_parent.join(output.file_name().unwrap_or_default());
    if canon_out.starts_with(&canon_in) || canon_in.starts_with(&canon_out) {
        return Err(Error::Invalid(format!(
            "the output folder {} and the input folder {} must not be one inside the other",
            output.display(),
            input.display()
        )));
    }
    Ok(())
}

fn parent_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A folder being written: removed with everything in it unless [`TempDir::commit`]ted.
struct TempDir {
    path: PathBuf,
    done: bool,
}

impl TempDir {
    fn new(output: &Path) -> Result<TempDir> {
        let parent = parent_of(output);
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".gpucvt-tmp")
            .tempdir_in(&parent)
            .map_err(|e| Error::io("write", &parent, e))?;
        let path = dir.keep();
        register_temporary(&path);
        Ok(TempDir { path, done: false })
    }

    /// Renames the folder into place, replacing an existing `output` folder.
    fn commit(mut self, output: &Path) -> Result<()> {
        let _committing = committing();
        let old = if std::fs::symlink_metadata(output).is_ok() {
            let old = self.path.with_extension("gpucvt-old");
            std::fs::rename(output, &old).map_err(|e| Error::io("replace", output, e))?;
            Some(old)
        } else {
            None
        };
        if let Err(e) = std::fs::rename(&self.path, output) {
            if let Some(old) = &old {
                let _ = std::fs::rename(old, output);
            }
            return Err(Error::io("write", output, e));
        }
        self.done = true;
        unregister_temporary(&self.path);
        if let Some(old) = old {
            std::fs::remove_dir_all(&old).map_err(|e| Error::io("remove", &old, e))?;
        }
        Ok(())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.path);
            unregister_temporary(&self.path);
        }
    }
}

/// Copies a file or a folder (recursively; symbolic links followed, as a Hugging Face cache
/// snapshot's files are links).
fn copy_all(from: &Path, to: &Path) -> Result<()> {
    let m = std::fs::metadata(from).map_err(|e| Error::io("read", from, e))?;
    if m.is_dir() {
        std::fs::create_dir(to).map_err(|e| Error::io("write", to, e))?;
        for e in std::fs::read_dir(from).map_err(|e| Error::io("read", from, e))? {
            let e = e.map_err(|e| Error::io("read", from, e))?;
            copy_all(&e.path(), &to.join(e.file_name()))?;
        }
        return Ok(());
    }
    std::fs::copy(from, to).map_err(|e| Error::io("copy", from, e))?;
    Ok(())
}

/// What the shards' layouts say about the whole checkpoint: the scheme of its converted
/// tensors and the linear modules left unquantized.
#[derive(Default)]
struct Choices {
    scheme: Option<Scheme>,
    kept: Vec<String>,
}

impl Choices {
    fn add(&mut self, layout: &StLayout) {
        for e in &layout.entries {
            match &e.action {
                StAction::Convert(c) if self.scheme.is_none() => {
                    let key = &layout.keys[c.key as usize];
                    self.scheme = Scheme::of(&key.conv.dst, key.scaled.scaling().as_ref());
                }
                StAction::Convert(_) => {}
                _ if e.shape.len() == 2 => {
                    if let Some(m) = stacks::module_of(&e.name) {
                        self.kept.push(m.to_string());
                    }
                }
                _ => {}
            }
        }
    }
}

/// Converts a checkpoint folder into a new folder.
pub(crate) fn convert_dir(
    input: &Path,
    output: &Path,
    opts: &Options,
    pool: &rayon::ThreadPool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary> {
    let folder = Folder::read(input)?;
    check_output(input, output, opts.force)?;
    check_not_quantized(input, &folder, opts.layout)?;
    let names = headers(input, &folder, opts)?;
    let tmp = TempDir::new(output)?;
    let mut summary = Summary {
        kind: "checkpoint",
        tensors: Vec::new(),
        copied: Vec::new(),
        kept: Vec::new(),
        notes: Vec::new(),
        total: Default::default(),
    };
    let mut choices = Choices::default();
    let mut weight_map = BTreeMap::new();
    let mut total_size = 0u64;
    let mut done = 0u64;
    for (shard, _) in folder.shards.iter().zip(&names) {
        let (from, to) = (input.join(shard), tmp.path.join(shard));
        let mut f = File::open(&from).map_err(|e| Error::io("open", &from, e))?;
        let len = f.metadata().map_err(|e| Error::io("read", &from, e))?.len();
        let layout = st_layout(&from, opts, &mut f, len, pool, false)?;
        choices.add(&layout);
        let mut ctx = Ctx {
            input: &from,
            output: &to,
            opts,
            pool,
            done,
            total: folder.bytes,
            progress: &mut *progress,
            buffers: pipeline::Buffers::default(),
            raw: false,
        };
        let s = ctx.safetensors(&mut f, layout)?;
        done += len;
        summary.tensors.extend(s.tensors);
        summary.copied.extend(s.copied);
        summary.kept.extend(s.kept);
        summary.notes.extend(s.notes);
        summary.total.merge(&s.total);
        // The index from what was written, read back.
        let mut o = File::open(&to).map_err(|e| Error::io("read back", &to, e))?;
        let olen = o
            .metadata()
            .map_err(|e| Error::io("read back", &to, e))?
            .len();
        let h = st::read_header(&mut o, olen, &to)?;
        for (n, info) in h.tensors {
            total_size += (info.data_offsets.1 - info.data_offsets.0) as u64;
            weight_map.insert(n, Value::String(shard.clone()));
        }
    }
    if summary.tensors.is_empty() {
        return Err(Error::Option(msg![
            format!(
                "no tensor of the checkpoint {} is converted: by default only linear layers' \
                 weights are, and no shard has one the conversion takes; name the tensors (",
                input.display()
            ),
            Opt::Tensor,
            ") or convert them all (",
            Opt::All,
            ")"
        ]));
    }
    if folder.index.is_some() || folder.shards.len() > 1 {
        let mut index = folder.index.clone().unwrap_or_default();
        let meta = index
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = meta {
            m.insert("total_size".into(), total_size.into());
        }
        index.insert(
            "weight_map".into(),
            Value::Object(weight_map.into_iter().collect()),
        );
        write_json(&tmp.path.join(INDEX), &Value::Object(index))?;
    }
    choices.kept.sort();
    choices.kept.dedup();
    write_others(
        input,
        &tmp.path,
        &folder,
        opts.layout,
        &choices,
        &mut summary.notes,
    )?;
    tmp.commit(output)?;
    Ok(summary)
}

/// Copies the files that are not shards, with the stack's configuration written into
/// `config.json` (and ModelOpt's `hf_quant_config.json`).
fn write_others(
    input: &Path,
    out: &Path,
    folder: &Folder,
    layout: Layout,
    choices: &Choices,
    notes: &mut Vec<String>,
) -> Result<()> {
    let stack = match (layout, choices.scheme) {
        (Layout::Gpucvt, _) | (_, None) => None,
        (l, Some(s)) => Some(quantization_config(l, s, &choices.kept)),
    };
    for name in &folder.others {
        let from = input.join(name);
        match (&stack, name.as_str()) {
            (Some((config, _)), "config.json") => {
                let mut c = read_object(&from)?;
                c.insert("quantization_config".into(), config.clone());
                write_json(&out.join(name), &Value::Object(c))?;
                notes.push(format!(
                    "config.json: quantization_config written for the {} layout",
                    layout.name()
                ));
            }
            _ => copy_all(&from, &out.join(name))?,
        }
    }
    if let Some((_, hf)) = &stack {
        if !folder.others.iter().any(|n| n == "config.json") {
            notes.push(format!(
                "{} has no config.json, so no quantization_config was written; a loader \
                 needs the model's config.json with the {} layout's quantization_config",
                input.display(),
                layout.name()
            ));
        }
        if let Some(hf) = hf {
            write_json(&out.join("hf_quant_config.json"), hf)?;
            notes.push("hf_quant_config.json written (ModelOpt's quantization config)".into());
        }
    }
    Ok(())
}

/// A stack's layout is written over a checkpoint in full precision: one that has a
/// quantization configuration already is refused before anything is converted.
fn check_not_quantized(input: &Path, folder: &Folder, layout: Layout) -> Result<()> {
    if layout == Layout::Gpucvt {
        return Ok(());
    }
    let refuse = |path: &Path, why: String| {
        Error::Invalid(format!(
            "{}: {why}: the checkpoint is quantized already; convert one in full precision",
            path.display()
        ))
    };
    if folder.others.iter().any(|n| n == "hf_quant_config.json") {
        let path = input.join("hf_quant_config.json");
        return Err(refuse(
            &path,
            "ModelOpt's quantization config is there".into(),
        ));
    }
    if folder.others.iter().any(|n| n == "config.json") {
        let path = input.join("config.json");
        if let Some(q) = read_object(&path)?.get("quantization_config") {
            let method = q.get("quant_method").cloned().unwrap_or(Value::Null);
            return Err(refuse(
                &path,
                format!("its quantization_config says quant_method {method}"),
            ));
        }
    }
    Ok(())
}

/// JSON as the Hugging Face tools write it: indented by 2, keys sorted, a newline at the end.
fn write_json(path: &Path, v: &Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(v)
        .map_err(|e| Error::Internal(format!("JSON for {}: {e}", path.display())))?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| Error::io("write", path, e))
}

/// What [`convert_dir`] would do: every shard's plan, one after the other.
pub(crate) fn plan_dir(
    input: &Path,
    output: &Path,
    opts: &Options,
    pool: &rayon::ThreadPool,
) -> Result<FilePlan> {
    let folder = Folder::read(input)?;
    check_output(input, output, opts.force)?;
    check_not_quantized(input, &folder, opts.layout)?;
    headers(input, &folder, opts)?;
    let mut plan = FilePlan {
        kind: "checkpoint",
        tensors: Vec::new(),
        output_bytes: 0,
        scale_file_bytes: None,
    };
    for shard in &folder.shards {
        let from = input.join(shard);
        let mut f = File::open(&from).map_err(|e| Error::io("open", &from, e))?;
        let len = f.metadata().map_err(|e| Error::io("read", &from, e))?.len();
        let p = st_layout(&from, opts, &mut f, len, pool, false)?.plan();
        plan.tensors.extend(p.tensors);
        plan.output_bytes += p.output_bytes;
    }
    Ok(plan)
}
