//! `gpucvt sweep INSTR --out FILE | --hash`: a form's result for every input, in input
//! order, written out or hashed.

use crate::args::{PtxTarget, Threads};
use crate::common::{fail, CliError, Done};
use crate::output::to_json;
use crate::verify::{bar, form_of, pool};
use gpucvt::ptx::slices::verify::{self, Feed, SweepInputs, Units};
use serde::Serialize;
use std::io::Write;
use std::time::Instant;

/// Options of `gpucvt sweep`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PTX `cvt` form, operands optional (`cvt.rn.f16.f32`).
    #[arg(value_name = "INSTRUCTION", required_unless_present = "list")]
    pub instruction: Option<String>,
    /// List every form legal on `--target` with the layout of its sweep (units per
    /// instruction, what feeds each operand, result width) instead of sweeping.
    #[arg(long, requires = "target", conflicts_with_all = ["instruction", "out", "hash", "units_out", "sample", "first", "count"])]
    pub list: bool,
    /// Write the results here: raw little-endian words (1, 2, 4 or 8 bytes each), in
    /// input order.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["hash", "list", "units_out"])]
    pub out: Option<std::path::PathBuf>,
    /// Print the XXH3-64 hash of those bytes (what `xxhsum -H3` prints for the file).
    #[arg(long)]
    pub hash: bool,
    /// Seed of the `rbits` operands of `.rs` forms (and of the sampled inputs).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Sweep a seeded sample instead of every input: for sources wider than 32 bits (which
    /// need it) a boundary-dense set and then N random words, for others N random words.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 34))]
    pub sample: Option<u64>,
    /// Start at instruction I (0-based; instruction i takes the units L·i … L·i+L−1).
    #[arg(long, value_name = "I", default_value_t = 0)]
    pub first: u64,
    /// Run at most N instructions.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Write the input units of the instructions run here, as little-endian 64-bit words
    /// in memory order (what a GPU needs to run a sampled sweep).
    #[arg(long, value_name = "FILE")]
    pub units_out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub threads: Threads,
    #[command(flatten)]
    pub target: PtxTarget,
    /// Print a JSON object (form, results, bytes per result, file, hash) instead of the
    /// lines.
    #[arg(long)]
    pub json: bool,
}

/// `sweep --json`.
#[derive(Serialize)]
struct SweepJson {
    form: String,
    results: u64,
    result_bytes: usize,
    out: Option<String>,
    hash: Option<String>,
    seconds: f64,
}

/// Runs `gpucvt sweep`.
pub fn run(a: &Args) -> Result<Done, CliError> {
    if a.list {
        return list(a);
    }
    let form = form_of(
        a.instruction.as_deref().unwrap_or_default(),
        &a.target.target,
    )?;
    let pool = pool(&a.threads)?;
    let inputs = SweepInputs {
        seed: a.seed,
        sample: a.sample,
        first: a.first,
        count: a.count,
    };
    let (kernel, units, range) =
        verify::sweep_plan(&form, &inputs).map_err(|e| CliError(e.to_string()))?;
    if let Some(p) = &a.units_out {
        write_units(p, &units, &range)?;
    }
    if a.out.is_none() && !a.hash {
        return Ok(Done::ok(format!(
            "wrote the units of {} instructions to {}\n",
            range.end - range.start,
            p_display(&a.units_out)
        )));
    }
    let planned = range.end - range.start;
    let mut hasher = a.hash.then(twox_hash::XxHash3_64::new);
    // The results go to a temporary file beside the output, renamed at the end (as
    // `convert` writes: the replaced file's mode and owner kept): a failed sweep leaves
    // nothing behind.
    let mut file = match &a.out {
        Some(p) => Some(std::io::BufWriter::with_capacity(
            1 << 20,
            gpucvt_tensor::OutputFile::create(p).map_err(|e| CliError(e.to_string()))?,
        )),
        None => None,
    };
    let bar = bar(planned, "sweeping", true);
    let start = Instant::now();
    let result = pool.install(|| {
        verify::sweep_inputs(
            &form,
            &inputs,
            &mut |bytes| {
                if let Some(h) = hasher.as_mut() {
                    std::hash::Hasher::write(h, bytes);
                }
                if let Some(f) = file.as_mut() {
                    f.write_all(bytes)?;
                }
                Ok(())
            },
            &|n| {
                if let Some(b) = &bar {
                    b.inc(n);
                }
            },
        )
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let n = match result {
        Ok(n) => n,
        Err(gpucvt::Error::Io { message, .. }) => {
            return fail(format!("cannot write the output: {message}"))
        }
        Err(e) => return fail(e.to_string()),
    };
    let mut out = String::new();
    let wrote = file.is_some();
    if let Some(f) = file {
        let tmp = f
            .into_inner()
            .map_err(|e| CliError(e.error().to_string()))?;
        let path = tmp.path().to_path_buf();
        tmp.commit(false).map_err(|e| CliError(e.to_string()))?;
        out.push_str(&format!(
            "wrote {} results ({} bytes each) to {}\n",
            n,
            verify::result_bytes(&kernel),
            path.display()
        ));
    }
    let hash = hasher.map(|h| format!("{:016x}", std::hash::Hasher::finish(&h)));
    if a.json {
        let j = SweepJson {
            form: form.spelling(),
            results: n,
            result_bytes: verify::result_bytes(&kernel),
            out: a
                .out
                .as_ref()
                .filter(|_| wrote)
                .map(|p| p.display().to_string()),
            hash,
            seconds: start.elapsed().as_secs_f64(),
        };
        return Ok(Done::ok(to_json(&j)?));
    }
    if let Some(h) = hash {
        out.push_str(&h);
        out.push('\n');
    }
    let err = format!(
        "{}: {} results in {:.2} s\n",
        form.spelling(),
        n,
        start.elapsed().as_secs_f64()
    );
    Ok(Done { out, err, code: 0 })
}

fn p_display(p: &Option<std::path::PathBuf>) -> String {
    p.as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Writes the units of instructions `range` (memory order, 8 bytes each, little-endian)
/// to `path`, through a temporary renamed at the end.
fn write_units(
    path: &std::path::Path,
    units: &Units,
    range: &std::ops::Range<u64>,
) -> Result<(), CliError> {
    let tmp = gpucvt_tensor::OutputFile::create(path).map_err(|e| CliError(e.to_string()))?;
    let cannot =
        |e: &dyn std::fmt::Display| CliError(format!("cannot write {}: {e}", path.display()));
    let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp);
    let per = units.per_instruction();
    for i in range.start * per..range.end * per {
        w.write_all(&units.get(i).to_le_bytes())
            .map_err(|e| cannot(&e))?;
    }
    let tmp = w.into_inner().map_err(|e| cannot(e.error()))?;
    tmp.commit(false).map_err(|e| CliError(e.to_string()))
}

/// `sweep --list --json`.
#[derive(Serialize)]
struct ListJson {
    target: String,
    ptx_version: String,
    forms: Vec<ShapeJson>,
}

/// `sweep --list --json`: one form.
#[derive(Serialize)]
struct ShapeJson {
    form: String,
    dst_bits: u32,
    result_bits: u32,
    result_bytes: usize,
    unit_bits: u32,
    units_per_instruction: u64,
    operands: Vec<OperandJson>,
    /// Instructions of a sweep of every input; null where the source is sampled.
    every_input: Option<u64>,
}

#[derive(Serialize)]
struct OperandJson {
    role: &'static str,
    bits: u32,
    /// `unit`, `rbits` or `fixed`.
    feed: &'static str,
    /// The unit's index in the instruction's units (memory order), for `unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    unit: Option<u64>,
    /// The value, for `fixed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<u64>,
}

/// `gpucvt sweep --list --target SM`: every legal form and its sweep's layout.
fn list(a: &Args) -> Result<Done, CliError> {
    let Some(target) = a.target.target.ptx("sweep")? else {
        return fail("--list needs --target");
    };
    let version = a.target.ptx_version.unwrap_or(target.max_version());
    let mut shapes = Vec::new();
    let mut skipped = Vec::new();
    for form in gpucvt::ptx::legal_forms(target, version) {
        match verify::sweep_shape(&form) {
            Ok(s) => shapes.push(s),
            Err(e) => skipped.push(format!("{}: {e}", form.spelling())),
        }
    }
    let mut err = String::new();
    for s in &skipped {
        err.push_str(&format!("not sweepable: {s}\n"));
    }
    if a.json {
        let j: Vec<ShapeJson> = shapes
            .iter()
            .map(|s| ShapeJson {
                form: s.form.spelling(),
                dst_bits: s.dst_bits,
                result_bits: s.result_bits,
                result_bytes: s.result_bytes,
                unit_bits: s.unit_bits,
                units_per_instruction: s.units_per_instruction,
                operands: s
                    .operands
                    .iter()
                    .map(|o| {
                        let (feed, unit, value) = match o.feed {
                            Feed::Unit(k) => ("unit", Some(k), None),
                            Feed::Rbits => ("rbits", None, None),
                            Feed::Fixed(v) => ("fixed", None, Some(v)),
                        };
                        OperandJson {
                            role: o.role.name(),
                            bits: o.bits,
                            feed,
                            unit,
                            value,
                        }
                    })
                    .collect(),
                every_input: s.every_input,
            })
            .collect();
        let list = ListJson {
            target: target.to_string(),
            ptx_version: version.to_string(),
            forms: j,
        };
        return Ok(Done {
            out: to_json(&list)?,
            err,
            code: 0,
        });
    }
    let mut out = String::new();
    for s in &shapes {
        let inputs = match s.every_input {
            Some(n) => format!("{n} instructions"),
            None => "sampled".to_string(),
        };
        out.push_str(&format!(
            "{:<44} {:>2} x {:>2}-bit units  {}-byte results  {}\n",
            s.form.spelling(),
            s.units_per_instruction,
            s.unit_bits,
            s.result_bytes,
            inputs
        ));
    }
    Ok(Done { out, err, code: 0 })
}
