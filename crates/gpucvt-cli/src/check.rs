//! `gpucvt check FILE`: the reader's and the checker's diagnostics for a PTX module or a vISA
//! assembly file, compiler style or as JSON.
//!
//! The diagnostics are rendered as plain text by [`Diagnostic::render`] rather than with a
//! diagnostics crate: the first line of each must be exactly `file:line:col:
//! error[rule]: message` (editors and CI parse it), which codespan-reporting prints only in
//! its short style (without the source line), while ariadne and miette draw their own
//! box-drawing layouts with the position on a later line. Plain text keeps that line exact,
//! the output byte-for-byte deterministic, and never coloured.

use crate::common::{ptx_options, read_source, to_json, CliError, Dialect, Done};
use gpucvt::diag::{Diagnostic, Severity};
use gpucvt::visa::check::CheckOptions;
use serde::Serialize;
use std::path::PathBuf;

/// Options of `gpucvt check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The file: `.ptx` (PTX module) or `.visaasm` (vISA assembly).
    pub file: PathBuf,
    /// PTX target whose rules apply (sm_80, sm_90a, …); default: the file's `.target`.
    #[arg(long, value_name = "SM")]
    pub target: Option<String>,
    /// PTX ISA version; default: the file's `.version`.
    #[arg(long = "ptx-version", value_name = "X.Y")]
    pub ptx_version: Option<String>,
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
    let (dialect, text) = read_source(&a.file)?;
    let diags = match dialect {
        Dialect::Ptx => {
            let (t, v) = ptx_options(a.target.as_deref(), a.ptx_version.as_deref())?;
            gpucvt::ptx::legality::check_source(&text, t, v)
        }
        Dialect::Visa => {
            if a.target.is_some() || a.ptx_version.is_some() {
                return Err(CliError(
                    "--target and --ptx-version apply to .ptx files only".to_string(),
                ));
            }
            gpucvt::visa::check::check_source(&text, &CheckOptions::default())
        }
    };
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
        render(&a.file.display().to_string(), &text, &diags)
    };
    Ok(Done {
        out,
        err: String::new(),
        code,
    })
}

fn render(path: &str, text: &str, diags: &[Diagnostic]) -> String {
    let mut s = String::new();
    for d in diags {
        s.push_str(&d.render(path, text));
        s.push('\n');
    }
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags.len() - errors;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    s.push_str(&format!(
        "{path}: {}, {}\n",
        plural(errors, "error"),
        plural(warnings, "warning")
    ));
    s
}
