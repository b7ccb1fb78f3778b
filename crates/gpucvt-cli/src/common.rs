//! Helpers shared by the subcommands: the error type, name look-ups, value descriptions and
//! a plain-text table.

use gpucvt::core::format::{Format, CATALOGUE};
use gpucvt::core::names::NameError;
use gpucvt::core::value::{Class, Value};
use gpucvt::text::{to_decimal, to_short};
use serde::Serialize;
use std::fmt;

/// A problem with the user's input: printed as one line on stderr, exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CliError {}

impl From<gpucvt::Error> for CliError {
    fn from(e: gpucvt::Error) -> CliError {
        CliError(e.to_string())
    }
}

/// A [`CliError`] from a message.
pub fn fail<T>(message: impl Into<String>) -> Result<T, CliError> {
    Err(CliError(message.into()))
}

/// The catalogue's names, comma separated.
pub fn format_names() -> String {
    Format::names().collect::<Vec<_>>().join(", ")
}

/// Looks up a format given to `option` (`--to`, `--from`, `<format>`): a catalogue name or
/// another tool's name for it ([`gpucvt::core::names`]).
pub fn lookup_format(name: &str, option: &str) -> Result<&'static Format, CliError> {
    Format::from_name(name).map_err(|e| match &e {
        NameError::Unknown { name, suggestion } => {
            let hint = match suggestion {
                Some((s, c)) if s == c => format!(" (did you mean {s:?}?)"),
                Some((s, c)) => format!(" (did you mean {s:?}, that is {c}?)"),
                None => String::new(),
            };
            CliError(format!(
                "unknown format {name:?} for {option}{hint}; accepted: {}, and the ml_dtypes, safetensors and MLIR names the README lists",
                format_names()
            ))
        }
        _ => CliError(format!("{option}: {e}")),
    })
}

/// Looks up one of a fixed set of names (case-insensitive) given to `option`.
pub fn choice<T: Copy>(value: &str, option: &str, choices: &[(&str, T)]) -> Result<T, CliError> {
    choices
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(value))
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            CliError(format!(
                "unknown value {value:?} for {option}; accepted: {}",
                names.join(", ")
            ))
        })
}

/// The class of an encoding: `zero`, `subnormal`, `normal`, `infinity` or `nan` for floats,
/// `zero` or `finite` for integers and fixed point.
pub fn class_name(f: &Format, bits: u64) -> &'static str {
    match f.decode(bits).class {
        Class::Zero => "zero",
        Class::Infinite => "infinity",
        Class::Nan { .. } => "nan",
        Class::Finite(_) if !f.is_float() => "finite",
        Class::Finite(_) if f.is_subnormal(bits) => "subnormal",
        Class::Finite(_) => "normal",
    }
}

/// The exact decimal if it has at most 24 characters, otherwise the short form with 8
/// significant digits (marked `~` when approximate).
pub fn compact(v: &Value) -> String {
    let exact = to_decimal(v);
    if exact.len() <= 24 {
        exact
    } else {
        to_short(v, 8).to_string()
    }
}

/// Pretty JSON with a final newline.
pub fn to_json<T: Serialize>(value: &T) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| CliError(format!("internal error: cannot write JSON: {e}")))
}

/// A plain-text table: columns padded to their widest cell, separated by two spaces, a rule
/// under the header.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(cell);
            if i + 1 < widths.len() {
                s.push_str(&" ".repeat(w - cell.chars().count()));
            }
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = line(&mut headers.iter().copied());
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(&mut rule.iter().map(String::as_str)));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// Every format of at most `bits` bits, comma separated.
pub fn formats_up_to(bits: u32) -> String {
    CATALOGUE
        .iter()
        .filter(|f| f.width() <= bits)
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a subcommand prints on stdout and the exit code it ends with (0 unless the
/// subcommand's contract says otherwise, e.g. `check` exits with 1 when it finds errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The text for stdout.
    pub out: String,
    /// The text for stderr (diagnostics of a failed run), written after `out`.
    pub err: String,
    /// The exit code.
    pub code: u8,
}

impl Done {
    /// Output with exit code 0.
    pub fn ok(out: String) -> Done {
        Done {
            out,
            err: String::new(),
            code: 0,
        }
    }
}

/// The dialect of a source file, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `.ptx`
    Ptx,
    /// `.visaasm`
    Visa,
}

/// Reads a source file and tells its dialect by extension (`.ptx` or `.visaasm`; callers
/// take `.mlir` files before this, and the message names all three).
pub fn read_source(path: &std::path::Path) -> Result<(Dialect, String), CliError> {
    let dialect = match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("ptx") => Dialect::Ptx,
        Some(e) if e.eq_ignore_ascii_case("visaasm") => Dialect::Visa,
        _ => {
            return fail(format!(
                "cannot tell the dialect of {}: the file name must end in .ptx (NVIDIA PTX), .visaasm (Intel vISA assembly) or .mlir (CUDA Tile IR)",
                path.display()
            ))
        }
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
    Ok((dialect, text))
}

/// Parses `--target` and `--ptx-version`.
pub fn ptx_options(
    target: Option<&str>,
    version: Option<&str>,
) -> Result<
    (
        Option<gpucvt::ptx::target::Target>,
        Option<gpucvt::ptx::target::PtxVersion>,
    ),
    CliError,
> {
    let t = target
        .map(|t| t.parse().map_err(|e| CliError(format!("--target: {e}"))))
        .transpose()?;
    let v = version
        .map(|v| {
            v.parse()
                .map_err(|e| CliError(format!("--ptx-version: {e}")))
        })
        .transpose()?;
    Ok((t, v))
}

/// The evaluation options of `eval` and `diff`: `--target`, `--ptx-version` and the vISA
/// control register (`cr0_flag` names the option in messages).
pub fn instr_options(
    target: Option<&str>,
    version: Option<&str>,
    cr0: Option<&str>,
    cr0_flag: &str,
) -> Result<gpucvt::instr::Options, CliError> {
    let (target, version) = ptx_options(target, version)?;
    let mut o = gpucvt::instr::Options {
        target,
        version,
        ..Default::default()
    };
    if let Some(c) = cr0 {
        o.cr0 =
            gpucvt::visa::cr0::Cr0::parse(c).map_err(|e| CliError(format!("{cr0_flag}: {e}")))?;
    }
    Ok(o)
}

/// A note of `gpucvt run`, in every dialect: the five fields of `check --json`.
#[derive(Serialize, Clone, Debug)]
pub struct NoteJson {
    /// 1-based line (0: a note about an option's value).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `warning` (notes are never errors).
    pub severity: &'static str,
    /// The note.
    pub message: String,
    /// The rule (`ptx.run-skipped`, `visa.run-skipped`, `tile.run-skipped`, …).
    pub rule: &'static str,
}

impl NoteJson {
    /// The note of a diagnostic.
    pub fn of(d: &gpucvt::diag::Diagnostic) -> NoteJson {
        NoteJson {
            line: d.span.line,
            column: d.span.col,
            severity: d.severity.name(),
            message: d.message.clone(),
            rule: d.rule,
        }
    }

    /// `  path:line:col: message` (`  path: message` without a position).
    pub fn line_text(&self, path: &str) -> String {
        if self.line == 0 {
            format!("  {path}: {}\n", self.message)
        } else {
            format!("  {path}:{}:{}: {}\n", self.line, self.column, self.message)
        }
    }
}

/// What `gpucvt run --json` says of an unknown register, element or value: the skipped
/// instruction that wrote it and the option that supplies it.
#[derive(Serialize, Clone, Debug)]
pub struct UnknownJson {
    /// The skipped instruction as written (on one line).
    pub instruction: String,
    /// Its line.
    pub line: u32,
    /// Its column.
    pub column: u32,
    /// `--set %f1=…` or `--arg %y=…`.
    pub supply: String,
}

impl UnknownJson {
    /// The JSON of an unknown value.
    pub fn of(u: &gpucvt::unknown::Unknown) -> UnknownJson {
        UnknownJson {
            instruction: u.instr.clone(),
            line: u.span.line,
            column: u.span.col,
            supply: format!("{} {}=…", u.supply.flag(), u.name),
        }
    }
}
