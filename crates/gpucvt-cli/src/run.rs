//! `gpucvt run FILE`: execute the straight-line conversions of a PTX entry
//! ([`gpucvt::ptx::run`]) or of a vISA kernel ([`gpucvt::visa::run`]) and print the final
//! value of every register or variable written; for a CUDA Tile IR file (`.mlir`), evaluate
//! an entry over its `--arg` values and constants ([`gpucvt::tile::run::run_entry`], see
//! [`crate::tile`]) and print every tile.
//!
//! A file with errors, or a statement that cannot run (a register read before it has a
//! value, a conversion that reads a value an unmodelled instruction wrote), prints its
//! diagnostics on stderr and exits with 1; bad options exit with 2. Values that unmodelled
//! instructions wrote and nothing read are shown as `unknown` ([`gpucvt::unknown`]).

use crate::args::{PtxTarget, TileOptions};
use crate::common::{CliError, Done};
use crate::input::{is_mlir, name_value, read_source, Dialect};
use crate::output::{render_diagnostics, table, to_json, NoteJson, UnknownJson};
use gpucvt::diag::Diagnostic;
use gpucvt::ptx::parse::parse_file;
use gpucvt::ptx::run::{run as run_ptx, RunError, RunInput, RunOptions};
use gpucvt::text::{format_bits, to_decimal, to_short};
use gpucvt::visa::cr0::Cr0;
use gpucvt::visa::run::{execute, initial_value, ExecOptions};
use serde::Serialize;
use std::path::PathBuf;

/// Options of `gpucvt run`.
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("semantics", |a| a.help(
        "Tile IR: `tileiras` (default: the PTX NVIDIA's compiler emits) or `spec` (the \
         specification text; undefined results are marked)"
    )),
    mut_arg("tile_version", |a| a.help(
        "Tile IR: the specification version the file is verified at (13.1 … 13.4, default \
         the newest)"
    )),
    mut_arg("target", |a| a.help(
        "PTX target for the legality check; default: the file's `.target`. Tile IR: the \
         target of the tileiras lowering (default sm_100a; sm_80 rounds f64 → bf16 twice)"
    )),
    mut_arg("ptx_version", |a| a.help(
        "PTX ISA version for the legality check; default: the file's `.version`"
    )),
)]
pub struct Args {
    /// The file: `.ptx` (runs one entry), `.visaasm` (runs the kernel) or `.mlir` (runs one
    /// Tile IR entry).
    pub file: PathBuf,
    /// PTX, Tile IR: the entry (or function with a body) to run; default: the only one.
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,
    /// An initial value, repeatable. PTX: `%f1=1.5`, `%r2=0x3f800000`, `%h=1.0,-2` (packed
    /// lanes, most significant first), `%p=1`, read for the register's declared type. vISA:
    /// `V33=[1.0,2.5,…]`, element 0 first, read for the variable's type. Also what every
    /// instruction gpucvt does not execute (a load, an `add`) writes to it, also after a mov
    /// replaced it (Triton's masked loads).
    #[arg(long = "set", value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// Tile IR: an argument's value, repeatable: `%a=[1.0,2.5,…]` (row-major; nested
    /// brackets are flattened; one value splats), `%s=0x3f800000` for a 0-d tile.
    /// Decimals, hex floats and 0x bit patterns; true/false for i1. Also a value for the
    /// result of an op gpucvt does not evaluate (`%y` of `%y = addf …`).
    #[arg(long = "arg", value_name = "NAME=VALUES", allow_hyphen_values = true)]
    pub arg: Vec<String>,
    #[command(flatten)]
    pub tile: TileOptions,
    #[command(flatten)]
    pub ptx: PtxTarget,
    /// vISA: the control register at kernel entry: a raw value (0x4C0), a preset (0, opencl)
    /// or a rounding mode (rne, ru, rd, rtz). Default: 0, the kernel-entry value.
    #[arg(long, value_name = "CR0", value_parser = Cr0::parse)]
    pub cr0: Option<Cr0>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Runs `gpucvt run`.
pub fn run(a: &Args) -> Result<Done, CliError> {
    a.ptx.target.ptx("run")?;
    if is_mlir(&a.file) {
        return run_tile(a);
    }
    if !a.arg.is_empty() || a.tile.given() {
        return Err(CliError(
            "--arg, --semantics and --tile-version apply to .mlir (Tile IR) files only; use --set for .ptx and .visaasm".to_string(),
        ));
    }
    let (dialect, text) = read_source(&a.file)?;
    let path = a.file.display().to_string();
    let sets = a
        .set
        .iter()
        .map(|s| {
            name_value(
                s,
                "--set",
                "NAME=VALUE (e.g. --set %f1=1.5 or --set V=[1.0,2.5])",
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    match dialect {
        Dialect::Ptx => {
            if a.cr0.is_some() {
                return Err(CliError("--cr0 applies to .visaasm files only".to_string()));
            }
            ptx(a, &path, &text, sets)
        }
        Dialect::Visa => {
            if a.ptx.given() || a.entry.is_some() {
                return Err(CliError(
                    "--entry, --target and --ptx-version apply to .ptx files only".to_string(),
                ));
            }
            visa(a, &path, &text, sets)
        }
    }
}

fn run_tile(a: &Args) -> Result<Done, CliError> {
    if a.ptx.ptx_version.is_some() || a.cr0.is_some() {
        return Err(CliError(
            "--ptx-version and --cr0 do not apply to .mlir files".to_string(),
        ));
    }
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| CliError(format!("cannot read {}: {e}", a.file.display())))?;
    // As `check` reads it: the source lines shown under diagnostics are the reader's.
    let text = gpucvt::tile::check::source_text(text);
    let path = a.file.display().to_string();
    let args = a
        .arg
        .iter()
        .chain(&a.set)
        .map(|s| {
            name_value(
                s,
                "--arg",
                "NAME=VALUES (e.g. --arg %a=[1.0,2.5] or --arg %s=0x3f800000)",
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    crate::tile::run(&crate::tile::RunArgs {
        path: &path,
        text: &text,
        entry: a.entry.as_deref(),
        args,
        semantics: a.tile.semantics(),
        target: a.ptx.target(),
        tile_version: a.tile.version.tile_version,
        json: a.json,
    })
}

fn failed(path: &str, text: &str, diags: &[Diagnostic], what: &str) -> Done {
    let mut err = render_diagnostics(path, text, diags, "");
    err.push_str(&format!("{path}: {what}\n"));
    Done {
        out: String::new(),
        err,
        code: 1,
    }
}

#[derive(Serialize)]
struct RegJson {
    name: String,
    #[serde(rename = "type")]
    ty: &'static str,
    written_as: &'static str,
    /// `null` when unknown.
    bits: Option<String>,
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown: Option<UnknownJson>,
}

#[derive(Serialize)]
struct PtxJson {
    entry: String,
    executed: usize,
    registers: Vec<RegJson>,
    notes: Vec<NoteJson>,
}

fn ptx(a: &Args, path: &str, text: &str, sets: Vec<(String, String)>) -> Result<Done, CliError> {
    let (target, version) = (a.ptx.target(), a.ptx.ptx_version);
    let file = parse_file(text);
    let inputs: Vec<RunInput> = sets
        .into_iter()
        .map(|(name, value)| RunInput { name, value })
        .collect();
    let opts = RunOptions {
        entry: a.entry.clone(),
        target,
        version,
    };
    let r = match run_ptx(&file, &inputs, &opts) {
        Ok(r) => r,
        Err(RunError::Input(m)) => return Err(CliError(m)),
        Err(RunError::Invalid(d)) => {
            return Ok(failed(
                path,
                text,
                &d,
                "the file has errors (see gpucvt check); nothing was run",
            ))
        }
        Err(RunError::Stopped(d)) => {
            return Ok(failed(path, text, &[d], "execution stopped"));
        }
    };
    let regs: Vec<RegJson> = r
        .written
        .iter()
        .map(|v| RegJson {
            name: v.name.clone(),
            ty: v.reg_type.name(),
            written_as: v.written_as.name(),
            bits: v
                .unknown
                .is_none()
                .then(|| format_bits(v.bits, v.reg_type.bits().clamp(1, 64))),
            value: if v.unknown.is_some() {
                "unknown".to_string()
            } else {
                v.describe()
            },
            unknown: v.unknown.as_ref().map(UnknownJson::of),
        })
        .collect();
    let notes: Vec<NoteJson> = r.notes.iter().map(NoteJson::of).collect();
    if a.json {
        return to_json(&PtxJson {
            entry: r.entry,
            executed: r.executed,
            registers: regs,
            notes,
        })
        .map(Done::ok);
    }
    let mut out = format!(
        "entry {}: {} statement(s) executed, {} register(s) written\n\n",
        r.entry,
        r.executed,
        regs.len()
    );
    let rows: Vec<Vec<String>> = regs
        .iter()
        .zip(&r.written)
        .map(|(g, v)| {
            vec![
                g.name.clone(),
                g.ty.to_string(),
                g.written_as.to_string(),
                g.bits.clone().unwrap_or_else(|| "unknown".to_string()),
                v.describe(),
            ]
        })
        .collect();
    out.push_str(&table(&["register", "type", "as", "bits", "value"], &rows));
    if !notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &notes {
            out.push_str(&n.line_text(path));
        }
    }
    Ok(Done::ok(out))
}

#[derive(Serialize)]
struct ElemJson {
    index: usize,
    /// `null` when unknown.
    bits: Option<String>,
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown: Option<UnknownJson>,
    #[serde(skip)]
    shown: String,
}

#[derive(Serialize)]
struct VarJson {
    name: String,
    #[serde(rename = "type")]
    ty: &'static str,
    elements: Vec<ElemJson>,
}

#[derive(Serialize)]
struct VisaJson {
    cr0: String,
    variables: Vec<VarJson>,
    notes: Vec<NoteJson>,
}

fn visa(a: &Args, path: &str, text: &str, sets: Vec<(String, String)>) -> Result<Done, CliError> {
    let mut opts = ExecOptions::default();
    if let Some(c) = a.cr0 {
        opts.cr0 = c;
    }
    let (kernel, reader) = gpucvt::visa::parse::parse(text);
    let reader_errors: Vec<Diagnostic> = reader
        .into_iter()
        .filter(|d| d.severity == gpucvt::diag::Severity::Error)
        .collect();
    if !reader_errors.is_empty() {
        return Ok(failed(
            path,
            text,
            &reader_errors,
            "the file has errors (see gpucvt check); nothing was run",
        ));
    }
    let init = sets
        .iter()
        .map(|(n, v)| initial_value(&kernel, n, v).map_err(CliError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let r = match execute(&kernel, &init, &opts) {
        Ok(r) => r,
        Err(d) if d.iter().any(|d| d.rule == "visa.run-unknown") => {
            return Ok(failed(path, text, &d, "execution stopped"));
        }
        Err(d) => {
            return Ok(failed(
                path,
                text,
                &d,
                "the file has errors (see gpucvt check); nothing was run",
            ))
        }
    };
    let vars: Vec<VarJson> = r
        .values
        .iter()
        .map(|w| {
            let f = w.ty.element_format();
            VarJson {
                name: w.name.clone(),
                ty: w.ty.name(),
                elements: w
                    .elements
                    .iter()
                    .zip(&w.unknown)
                    .enumerate()
                    .map(|(i, (&b, u))| {
                        if let Some(u) = u {
                            return ElemJson {
                                index: i,
                                bits: None,
                                value: "unknown".to_string(),
                                unknown: Some(UnknownJson::of(u)),
                                shown: u.describe(),
                            };
                        }
                        let v = f.decode(b);
                        let exact = to_decimal(&v);
                        let value = if exact.len() <= 24 {
                            exact
                        } else {
                            to_short(&v, 9).to_string()
                        };
                        ElemJson {
                            index: i,
                            bits: Some(format_bits(b, f.width())),
                            shown: value.clone(),
                            value,
                            unknown: None,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    let notes: Vec<NoteJson> = r.warnings.iter().map(NoteJson::of).collect();
    if a.json {
        return to_json(&VisaJson {
            cr0: format!("{:#x}", r.cr0.raw()),
            variables: vars,
            notes,
        })
        .map(Done::ok);
    }
    let mut out = format!(
        "{} mov(s) executed, {} variable(s) written; cr0 at the end: {:#x}\n",
        r.movs.len(),
        vars.len(),
        r.cr0.raw()
    );
    for v in &vars {
        out.push_str(&format!(
            "\n{} ({}, {} elements)\n",
            v.name,
            v.ty,
            v.elements.len()
        ));
        let rows: Vec<Vec<String>> = v
            .elements
            .iter()
            .map(|e| {
                vec![
                    e.index.to_string(),
                    e.bits.clone().unwrap_or_else(|| "unknown".to_string()),
                    e.shown.clone(),
                ]
            })
            .collect();
        out.push_str(&table(&["elt", "bits", "value"], &rows));
    }
    if !notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &notes {
            out.push_str(&format!(
                "  {path}:{}:{}: {}[{}]: {}\n",
                n.line, n.column, n.severity, n.rule, n.message
            ));
        }
    }
    Ok(Done::ok(out))
}
