//! `gpucvt convert INPUT -o OUTPUT`: whole tensor files (`.npy`, `.safetensors`, raw) through
//! one conversion, streaming, with optional MX block scaling (library: `gpucvt-tensor`).

use crate::args::{self, PolicyFlags, ScaleFormat, ScaleLayoutArg, ScaleRuleArg};
use crate::common::{CliError, Done};
use crate::output::{group, progress_bar, table, to_json, write_json, Counting};
use clap::Args as ClapArgs;
use gpucvt::ptx;
use gpucvt_tensor::options::Opt;
use gpucvt_tensor::{Built, ConvertRequest, FilePlan, ScaleRule, ScalingRequest, Stats, Summary};
use serde::Serialize;
use std::path::PathBuf;

/// Options of `gpucvt convert`.
#[derive(ClapArgs, Debug)]
#[command(
    // What to convert to: --to (with its options), --cvt, or a --recipe; or --dequantize.
    group(clap::ArgGroup::new("conversion").args(["to", "cvt", "recipe", "dequantize"]).required(true).multiple(true)),
    mut_arg("satfinite", |a| a.help(
        "With --to: PTX .satfinite (±∞ and overflows give ±largest finite)"
    )),
    mut_arg("sat", |a| a.help("With --to: PTX .sat (clamp to [0, 1]; integers: to the range)")),
    mut_arg("relu", |a| a.help("With --to: PTX .relu (negative results become +0)")),
    mut_arg("ftz", |a| a.help(
        "With --to: PTX .ftz (f32 subnormal inputs and results become zero)"
    )),
    mut_arg("pzo", |a| a.help("With --to: PTX .pzo (−0 results become +0)")),
)]
pub struct Args {
    /// The input: FILE.npy, FILE.safetensors, a checkpoint folder (config.json and
    /// .safetensors shards, with model.safetensors.index.json), or raw little-endian data
    /// (with --from).
    pub input: PathBuf,
    /// The output, of the same kind as the input (written to a temporary file, or for a
    /// checkpoint a temporary folder, beside it and renamed when complete; never the input).
    #[arg(short = 'o', long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Destination format (f16, bf16, e4m3, e5m2, e2m3, e3m2, e2m1, ue8m0, …); the source is
    /// each tensor's dtype.
    #[arg(long, value_name = "FMT")]
    pub to: Option<String>,
    /// Rounding with --to: rn, rna, rz, rm, rp, rs (stochastic, random bits from --seed),
    /// rni, rzi, rmi, rpi.
    #[arg(long, value_name = "MODE", default_value = "rn", value_parser = args::round_mod(), ignore_case = true)]
    pub mode: ptx::RoundMod,
    #[command(flatten)]
    pub policy: PolicyFlags,
    /// With --to --mode rs: random bits per element, 1 to 32 (default as PTX: 13 for f16, 16
    /// for bf16, 8 otherwise).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub rbits_width: Option<u32>,
    /// A PTX cvt form instead of --to and its options, e.g. 'cvt.rn.satfinite.e4m3x2.f32':
    /// each element is one lane; the tensor's dtype must be the form's source type.
    #[arg(long, value_name = "FORM", conflicts_with_all = ["to", "mode", "satfinite", "sat", "relu", "ftz", "pzo", "rbits_width"])]
    pub cvt: Option<String>,
    /// Element format of raw input (f32, bf16, e4m3, …); for .npy input, reinterpret the
    /// integer container (<u2 as bf16, |u1 as e4m3, …). With --dequantize: the format of
    /// the quantized elements.
    #[arg(long, value_name = "FMT")]
    pub from: Option<String>,
    /// .safetensors: convert only the tensors of this name or glob pattern ('*.weight';
    /// repeatable); the others are copied unchanged. Without it, the weights of linear
    /// layers are converted (2-d '*.weight' tensors that are not embeddings, lm_head, norms,
    /// routers or rotary tables), and every other tensor is kept with its reason.
    #[arg(long = "tensor", value_name = "PATTERN")]
    pub tensors: Vec<String>,
    /// .safetensors: convert every tensor, not only the weights of linear layers.
    #[arg(long, conflicts_with = "tensors")]
    pub all: bool,
    /// .safetensors: do not convert the tensors of this name or glob pattern ('*norm*';
    /// repeatable): they are copied unchanged.
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Make a selected tensor that the conversion cannot take (a scalar or a last dimension
    /// that does not divide into blocks, an element count that does not fill FP4/FP6 bytes, an
    /// integer or unsupported dtype) an error; by default it is copied unchanged and listed
    /// as kept. With MX scales, a tensor whose blocks get the NaN scale (a NaN or an
    /// infinity: an attention mask's -inf) is an error too, instead of a note.
    #[arg(long)]
    pub strict: bool,
    /// Print what would be done to every tensor and the output's size; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Seed of the random bits of stochastic rounding (SplitMix64, one word per element).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// A quantization recipe: mxfp8, mxfp6, mxfp4 (OCP MX), nvfp4, fp8-block128, fp8-tensor,
    /// fp8-row; it stands for --to, --satfinite, --block, --scale (and --scale-2), and
    /// prints what it stands for. --scale-rule, --scale-layout, --axis and --mode still apply.
    /// With --dequantize: what the input was quantized with (its element format and
    /// blocking).
    #[arg(long, value_name = "NAME", value_parser = args::recipe(), conflicts_with_all = ["cvt", "block", "scale", "scale_2", "satfinite"])]
    pub recipe: Option<String>,
    /// Block scaling: N (one scale per N consecutive elements along --axis, by default the
    /// last), RxC (tiles over the last two axes, e.g. 128x128), row (one scale per row) or
    /// tensor (one scale).
    #[arg(long, value_name = "N|RxC|row|tensor")]
    pub block: Option<String>,
    /// The blocked axis of --block N or row (negative: from the end; default -1).
    #[arg(long, value_name = "AXIS", allow_hyphen_values = true)]
    pub axis: Option<i64>,
    /// The scale format: ue8m0 (default; powers of two, MX), ue4m3 (NVFP4), f32 or bf16
    /// (amax / the element format's largest finite value).
    #[arg(long, value_name = "FMT", value_enum, ignore_case = true)]
    pub scale: Option<ScaleFormat>,
    /// How a ue8m0 scale is chosen from the block's largest magnitude amax: floor
    /// (floor(log2(amax)) − emax, OCP MX; alias ocp), rceil (the smallest power of two not
    /// below amax / max: nothing saturates; alias rp), ceil, even (torchao's names).
    #[arg(long, value_name = "RULE", value_enum, ignore_case = true)]
    pub scale_rule: Option<ScaleRuleArg>,
    /// Where the scales go: rows (row-major, default) or swizzled (the 128x4 tiles
    /// cuBLASLt and CUTLASS block-scaled GEMMs read).
    #[arg(long, value_name = "LAYOUT", value_enum, ignore_case = true)]
    pub scale_layout: Option<ScaleLayoutArg>,
    /// A per-tensor f32 scale above ue4m3 block scales (NVFP4's second level), written as
    /// NAME_scale_2.
    #[arg(long = "scale-2")]
    pub scale_2: bool,
    /// Dequantize: every tensor NAME with a scale tensor NAME_scale (and NAME_scale_2) is
    /// multiplied out exactly into --to (f32 by default; bf16, f16, f64), the scale tensors
    /// dropped, the rest copied. .npy and raw: the file with its sidecars X_scale.EXT (and
    /// X_scale_2.EXT); --from or --recipe name the elements' format where the file does not,
    /// --block/--recipe (and --axis, --scale, --scale-layout, --scale-2) the blocking.
    #[arg(long, conflicts_with_all = ["cvt", "mode", "satfinite", "sat", "relu", "ftz", "pzo"])]
    pub dequantize: bool,
    /// Replace a read-only output (and replace or remove read-only sidecar files of a .npy
    /// or raw output); without it they are an error.
    #[arg(long)]
    pub force: bool,
    /// .safetensors: the checkpoint layout a serving stack loads: modelopt (NVFP4, FP8 per
    /// row or in 128x128 blocks, as ModelOpt exports them), compressed-tensors (NVFP4,
    /// MXFP4, MXFP8, FP8: llm-compressor / vLLM), deepseek (FP8 128x128 blocks with
    /// weight_scale_inv), or gpucvt (default: gpucvt's own). With a checkpoint folder as
    /// input, the output folder gets the stack's quantization config too.
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    input: String,
    output: String,
    conversion: &'a str,
    #[serde(flatten)]
    summary: &'a Summary,
}

fn num(x: f64) -> String {
    if x == 0.0 || (1e-4..1e7).contains(&x.abs()) {
        let s = format!("{x:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{x:.6e}")
    }
}

fn stats_rows(s: &Stats, blocks: bool) -> Vec<Vec<String>> {
    let mut rows = vec![
        vec!["elements".into(), group(s.elements)],
        vec!["saturated".into(), group(s.saturated)],
        vec!["overflow to inf".into(), group(s.overflow_to_inf)],
        vec!["flushed to zero".into(), group(s.flushed_to_zero)],
        vec!["became NaN".into(), group(s.nan)],
        vec!["NaN to number".into(), group(s.nan_to_number)],
    ];
    if blocks {
        rows.push(vec!["blocks".into(), group(s.blocks)]);
        rows.push(vec!["NaN-scale blocks".into(), group(s.nan_blocks)]);
    }
    rows.push(vec!["max abs error".into(), num(s.max_abs_error)]);
    rows.push(vec!["mean abs error".into(), num(s.mean_abs_error)]);
    rows.push(vec!["max rel error".into(), num(s.max_rel_error)]);
    rows.push(vec!["SQNR".into(), sqnr(s.sqnr_db)]);
    rows
}

/// An SQNR in dB, to two decimals; `exact` where there is no error.
fn sqnr(db: Option<f64>) -> String {
    match db {
        Some(db) => format!("{db:.2} dB"),
        None => "exact".into(),
    }
}

/// The order of the text table: the worst tensors first (lowest SQNR; exact ones last, in
/// data order among equals).
fn worst_first(tensors: &[gpucvt_tensor::TensorSummary]) -> Vec<&gpucvt_tensor::TensorSummary> {
    let mut v: Vec<_> = tensors.iter().collect();
    let key = |t: &gpucvt_tensor::TensorSummary| t.stats.sqnr_db.unwrap_or(f64::INFINITY);
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    v
}

/// How many tensors the text output lists in each of its lists; `--json` lists all. A file
/// of a million small tensors would otherwise print (and first build) a table of a million
/// rows.
const MAX_LISTED: usize = 10_000;

/// The line that says how many of `n` items a list of at most [`MAX_LISTED`] left out.
fn more(n: usize, what: &str) -> String {
    if n > MAX_LISTED {
        format!(
            "({} more {what} not listed: the first {} are; --json lists all)\n",
            group((n - MAX_LISTED) as u64),
            group(MAX_LISTED as u64)
        )
    } else {
        String::new()
    }
}

/// A tensor's scale tensors (or sidecar files), comma-separated.
fn scale_names(t: &gpucvt_tensor::TensorSummary) -> String {
    t.scale
        .iter()
        .chain(&t.scale_2)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text summary of `--dequantize`.
fn dequantize_text(a: &Args, label: &str, s: &Summary) -> String {
    let mut out = format!(
        "{} -> {}  ({label})\n\n",
        a.input.display(),
        a.output.display()
    );
    let rows: Vec<Vec<String>> = s
        .tensors
        .iter()
        .take(MAX_LISTED)
        .map(|t| {
            vec![
                t.name.clone(),
                format!("{:?}", t.shape),
                format!("{} -> {}", t.from, t.to),
                group(t.stats.nan),
                scale_names(t),
            ]
        })
        .collect();
    out.push_str(&table(
        &["tensor", "shape", "conversion", "NaN", "scales (dropped)"],
        &rows,
    ));
    out.push_str(&more(s.tensors.len(), "dequantized tensors"));
    if !s.copied.is_empty() {
        let names: Vec<&str> = s
            .copied
            .iter()
            .take(MAX_LISTED)
            .map(|n| n.as_str())
            .collect();
        out.push_str(&format!("copied unchanged: {}\n", names.join(", ")));
        out.push_str(&more(s.copied.len(), "copied tensors"));
    }
    out
}

fn text(a: &Args, label: &str, s: &Summary) -> String {
    let mut out = format!(
        "{} -> {}  ({label})\n",
        a.input.display(),
        a.output.display()
    );
    let shape = |v: &[u64]| {
        format!(
            "[{}]",
            v.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let rows: Vec<Vec<String>> = worst_first(&s.tensors)
        .into_iter()
        .take(MAX_LISTED)
        .map(|t| {
            vec![
                t.name.clone(),
                shape(&t.shape),
                format!("{} -> {}", t.from, t.to),
                t.dtype.clone(),
                sqnr(t.stats.sqnr_db),
                num(t.stats.max_rel_error),
                group(t.stats.saturated + t.stats.overflow_to_inf),
                group(t.stats.flushed_to_zero),
                group(t.stats.nan),
                num(t.stats.max_abs_error),
                scale_names(t),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&table(
        &[
            "tensor",
            "shape",
            "conversion",
            "dtype",
            "SQNR",
            "max rel",
            "clamped",
            "to zero",
            "NaN",
            "max err",
            "scales",
        ],
        &rows,
    ));
    if s.tensors.len() > MAX_LISTED {
        out.push_str(&format!(
            "({} more converted tensors not listed: the {} worst are; --json lists all)\n",
            group((s.tensors.len() - MAX_LISTED) as u64),
            group(MAX_LISTED as u64)
        ));
    }
    if !s.copied.is_empty() {
        let names: Vec<&str> = s
            .copied
            .iter()
            .take(MAX_LISTED)
            .map(|n| n.as_str())
            .collect();
        out.push_str(&format!("copied unchanged: {}\n", names.join(", ")));
        out.push_str(&more(s.copied.len(), "copied tensors"));
    }
    for (by_default, head) in [
        (
            true,
            "kept unchanged (not linear layers' weights; --tensor or --all converts them):\n",
        ),
        (
            false,
            "kept unchanged (the conversion cannot take them; --strict makes this an error):\n",
        ),
    ] {
        let kept: Vec<_> = s
            .kept
            .iter()
            .filter(|k| k.by_default == by_default)
            .collect();
        if !kept.is_empty() {
            out.push_str(head);
            for k in kept.iter().take(MAX_LISTED) {
                out.push_str(&format!("  {}: {}\n", k.name, k.reason));
            }
            out.push_str(&more(kept.len(), "kept tensors"));
        }
    }
    out.push('\n');
    for r in stats_rows(&s.total, s.total.blocks > 0) {
        out.push_str(&format!("{:<17}{}\n", r[0], r[1]));
    }
    out.push_str("(errors are |output x scale - input| over elements finite on both sides)\n");
    out
}

#[derive(Serialize)]
struct PlanJson<'a> {
    input: String,
    output: String,
    conversion: &'a str,
    dry_run: bool,
    #[serde(flatten)]
    plan: &'a FilePlan,
}

fn plan_text(a: &Args, label: &str, p: &FilePlan) -> String {
    let mut out = format!(
        "{} -> {}  ({label}), dry run: nothing written\n\n",
        a.input.display(),
        a.output.display()
    );
    let rows: Vec<Vec<String>> = p
        .tensors
        .iter()
        .take(MAX_LISTED)
        .map(|t| {
            let what = match t.action {
                "convert" => format!("convert {} -> {}", t.input_dtype, t.dtype),
                "keep" => format!("keep: {}", t.reason.as_deref().unwrap_or("")),
                _ => "copy (not selected)".to_string(),
            };
            let bytes = match t.scale_bytes {
                Some(sb) => format!("{} + {} scales", group(t.bytes), group(sb)),
                None => group(t.bytes),
            };
            vec![
                t.name.clone(),
                format!(
                    "[{}]",
                    t.shape
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                what,
                bytes,
            ]
        })
        .collect();
    out.push_str(&table(&["tensor", "shape", "plan", "bytes"], &rows));
    out.push_str(&more(p.tensors.len(), "tensors"));
    out.push_str(&format!("\noutput: {} bytes\n", group(p.output_bytes)));
    if let Some(b) = p.scale_file_bytes {
        out.push_str(&format!("scale file: {} bytes\n", group(b)));
    }
    out
}

/// Runs `gpucvt convert`.
pub fn run(a: &Args) -> Result<Done, CliError> {
    let sreq = scaling_request(a);
    if a.dequantize {
        if a.dry_run {
            return Err(CliError(
                "--dry-run plans conversions; --dequantize has no dry run".into(),
            ));
        }
        return dequantize(a, &sreq);
    }
    if let (Some(r), Some(_)) = (&a.recipe, &a.to) {
        return Err(CliError(format!(
            "--recipe {r} sets --to; give the options one by one instead of the recipe to change it (--to is the output format only with --dequantize)"
        )));
    }
    let request = ConvertRequest {
        to: a.to.clone(),
        mode: a.mode,
        satfinite: a.policy.satfinite,
        sat: a.policy.sat,
        relu: a.policy.relu,
        ftz: a.policy.ftz,
        pzo: a.policy.pzo,
        rbits_width: a.rbits_width.map(i64::from),
        cvt: a.cvt.clone(),
        from: a.from.clone(),
        tensors: a.tensors.clone(),
        all: a.all,
        exclude: a.exclude.clone(),
        strict: a.strict,
        threads: a.threads,
        seed: a.seed,
        scaling: sreq,
        force: a.force,
        layout: a.layout.clone(),
    };
    let Built {
        options: opts,
        label,
    } = request.build().map_err(message)?;
    let label = label.command_line();
    if a.dry_run {
        let plan = gpucvt_tensor::plan_file(&a.input, &a.output, &opts).map_err(message)?;
        let out = if a.json {
            to_json(&PlanJson {
                input: a.input.display().to_string(),
                output: a.output.display().to_string(),
                conversion: &label,
                dry_run: true,
                plan: &plan,
            })?
        } else {
            plan_text(a, &label, &plan)
        };
        return Ok(Done::ok(out));
    }
    let summary = with_progress("converting", |p| {
        gpucvt_tensor::convert_file(&a.input, &a.output, &opts, p)
    })?;
    let out = report(a, &label, &summary, text)?;
    let err = summary
        .notes
        .iter()
        .map(|n| format!("note: {n}\n"))
        .collect();
    Ok(Done { out, err, code: 0 })
}

/// The block-scaling options as the library reads them.
fn scaling_request(a: &Args) -> ScalingRequest {
    ScalingRequest {
        recipe: a.recipe.clone(),
        block: a.block.clone(),
        axis: a.axis,
        scale: a.scale.map(|s| {
            gpucvt_tensor::scaling::ScaleFormat::from(s)
                .name()
                .to_string()
        }),
        rule: a.scale_rule.map(|r| ScaleRule::from(r).name().to_string()),
        layout: a.scale_layout.map(|l| match l {
            ScaleLayoutArg::Rows => "rows".to_string(),
            ScaleLayoutArg::Swizzled => "swizzled".to_string(),
        }),
        second_level: a.scale_2,
    }
}

/// `--dequantize`: the scaled tensors multiplied out into `--to` (f32 by default); the
/// block options (and `--from`) describe the input.
fn dequantize(a: &Args, sreq: &ScalingRequest) -> Result<Done, CliError> {
    let to = match &a.to {
        Some(t) => *gpucvt_tensor::lookup_format(t, Opt::To).map_err(message)?,
        None => gpucvt_core::format::F32,
    };
    let mut opts = sreq
        .dequantize(to, a.from.as_deref(), a.threads)
        .map_err(message)?;
    opts.force = a.force;
    let label = format!("dequantize to {}", to.name);
    let summary = with_progress("dequantizing", |p| {
        gpucvt_tensor::dequantize_file(&a.input, &a.output, &opts, p)
    })?;
    Ok(Done::ok(report(a, &label, &summary, dequantize_text)?))
}

/// Runs `f` with a progress bar (input bytes) when stderr is a terminal.
fn with_progress(
    what: &str,
    f: impl FnOnce(&mut dyn FnMut(u64, u64)) -> gpucvt_tensor::Result<Summary>,
) -> Result<Summary, CliError> {
    let bar = progress_bar(what, 0, Counting::Bytes);
    let result = f(&mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    result.map_err(message)
}

/// The library's error as the CLI says it: options in its spelling (`--scale-rule`), and
/// the option that lifts a refusal.
pub fn message(e: gpucvt_tensor::Error) -> CliError {
    match e {
        gpucvt_tensor::Error::ReadOnly { .. } => CliError(format!("{e} (--force)")),
        gpucvt_tensor::Error::Option(m) => CliError(m.command_line()),
        _ => CliError(e.to_string()),
    }
}

/// The summary as `--json` (written as it is produced: the summary of a file of a million
/// tensors is half a gigabyte of JSON; the text returned is then empty) or as `text` gives it.
fn report(
    a: &Args,
    label: &str,
    summary: &Summary,
    text: fn(&Args, &str, &Summary) -> String,
) -> Result<String, CliError> {
    if a.json {
        write_json(&Json {
            input: a.input.display().to_string(),
            output: a.output.display().to_string(),
            conversion: label,
            summary,
        })?;
        Ok(String::new())
    } else {
        Ok(text(a, label, summary))
    }
}
