//! `gpucvt check FILE`: the reader's and the checker's diagnostics for a PTX module or a vISA
//! assembly file, compiler style or as JSON.
//!
//! The diagnostics are rendered as plain text by [`Diagnostic::render`] rather than with a
//! diagnostics crate: the first line of each must be exactly `file:line:col:
//! error[rule]: message` (editors and CI parse it), which codespan-reporting prints only in
//! its short style (without the source line), while ariadne and miette draw their own
//! box-drawing layouts with the position on a later line. Plain text keeps that line exact,
//! the output byte-for-byte deterministic, and never coloured.

use crate::args::{PtxTarget, TileVersion};
use crate::common::{CliError, Done};
use crate::input::{is_mlir, read_source, Dialect};
use crate::output::{render_diagnostics, to_json};
use gpucvt::diag::{Diagnostic, Severity};
use gpucvt::visa::check::CheckOptions;
use serde::Serialize;
use std::path::PathBuf;

/// Options of `gpucvt check`.
#[derive(clap::Args, Debug)]
#[command(
    mut_arg("target", |a| a.help(
        "PTX target whose rules apply (sm_80, sm_90a, …); default: the file's `.target`"
    )),
    mut_arg("ptx_version", |a| a.help("PTX ISA version; default: the file's `.version`")),
    mut_arg("tile_version", |a| a.help(
        "Tile IR (`.mlir`) specification version: 13.1, 13.2, 13.3 or 13.4 (default)"
    )),
)]
pub struct Args {
    /// The file: `.ptx` (PTX module), `.visaasm` (vISA assembly) or `.mlir` (CUDA Tile IR).
    pub file: PathBuf,
    #[command(flatten)]
    pub ptx: PtxTarget,
    #[command(flatten)]
    pub tile: TileVersion,
    /// A JSON array, one object per diagnostic: line, column, severity, message, rule.
    #[arg(long)]
    pub json: bool,
}

/// One diagnostic in `--json` output. These five names are a contract with outside tools.
#[derive(Serialize)]
struct DiagJson<'a> {
    line: u32,
    column: u32,
    severity: &'static str,
    message: &'a str,
    rule: &'static str,
}

/// Runs `gpucvt check`: exit code 1 if any diagnostic is an error, else 0.
pub fn run(a: &Args) -> Result<Done, CliError> {
    // AMD assembly files are not read yet: an AMD --target is refused, not ignored.
    a.ptx.target.ptx("check")?;
    if is_mlir(&a.file) {
        return run_tile(a);
    }
    let (dialect, text) = read_source(&a.file)?;
    let diags = match dialect {
        Dialect::Ptx => gpucvt::ptx::check::check_source(&text, a.ptx.target(), a.ptx.ptx_version),
        Dialect::Visa => {
            if a.ptx.given() {
                return Err(CliError(
                    "--target and --ptx-version apply to .ptx files only".to_string(),
                ));
            }
            gpucvt::visa::check::check_source(&text, &CheckOptions::default())
        }
    };
    report(a, &text, &diags)
}

/// `gpucvt check FILE.mlir`: the Tile IR reader's and verifier's diagnostics, at the spec
/// version given by `--tile-version` (default: the newest).
fn run_tile(a: &Args) -> Result<Done, CliError> {
    if a.ptx.given() {
        return Err(CliError(
            "--target and --ptx-version apply to .ptx files only".to_string(),
        ));
    }
    let version = a
        .tile
        .tile_version
        .unwrap_or(gpucvt::tile::types::SpecVersion::LATEST);
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| CliError(format!("cannot read {}: {e}", a.file.display())))?;
    // The source lines shown under the diagnostics are split at '\n': the text as the reader
    // sees it.
    let text = gpucvt::tile::check::source_text(text);
    let diags = gpucvt::tile::check::check_source(&text, version);
    report(a, &text, &diags)
}

fn report(a: &Args, text: &str, diags: &[Diagnostic]) -> Result<Done, CliError> {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let code = u8::from(errors > 0);
    let out = if a.json {
        let v: Vec<DiagJson> = diags
            .iter()
            .map(|d| DiagJson {
                line: d.span.line,
                column: d.span.col,
                severity: d.severity.name(),
                message: &d.message,
                rule: d.rule,
            })
            .collect();
        to_json(&v)?
    } else {
        render(&a.file.display().to_string(), text, diags)
    };
    Ok(Done {
        out,
        err: String::new(),
        code,
    })
}

fn render(path: &str, text: &str, diags: &[Diagnostic]) -> String {
    let mut s = render_diagnostics(path, text, diags, "; --json lists all");
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let notes = diags
        .iter()
        .filter(|d| d.severity == Severity::Note)
        .count();
    let warnings = diags.len() - errors - notes;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let notes = if notes > 0 {
        format!(", {}", plural(notes, "note"))
    } else {
        String::new()
    };
    s.push_str(&format!(
        "{path}: {}, {}{notes}\n",
        plural(errors, "error"),
        plural(warnings, "warning")
    ));
    s
}
