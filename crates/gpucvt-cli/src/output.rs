//! Writing results: JSON, plain-text tables, numbers, the notes of `gpucvt run`, and the
//! progress bar of the long-running subcommands.

use crate::common::CliError;
use gpucvt::diag::Diagnostic;
use serde::Serialize;
use std::io::{IsTerminal, Write};

/// How many diagnostics the text output shows per file, in every command; a line then says
/// how many more there are. A file with more is broken throughout, and showing each
/// source line again would only bury the first problems.
pub const MAX_RENDERED: usize = 10_000;

/// The diagnostics of one file as a compiler prints them (each with its source line, cut
/// around the span when long: [`Diagnostic::render_in`]): the first [`MAX_RENDERED`], then
/// `PATH: N more diagnostics not shown (the first … are{hint})`.
pub fn render_diagnostics(path: &str, text: &str, diags: &[Diagnostic], hint: &str) -> String {
    let mut s = String::new();
    // (A line table costs 16 bytes a line: none is needed when there is nothing to show.)
    let lines: Vec<&str> = if diags.is_empty() {
        Vec::new()
    } else {
        text.split('\n').collect()
    };
    for d in diags.iter().take(MAX_RENDERED) {
        s.push_str(&d.render_in(path, text, &lines));
        s.push('\n');
    }
    if diags.len() > MAX_RENDERED {
        s.push_str(&format!(
            "{path}: {} more diagnostics not shown (the first {MAX_RENDERED} are{hint})\n",
            diags.len() - MAX_RENDERED
        ));
    }
    s
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

/// Pretty JSON with a final newline, written to stdout as it is produced (for outputs too
/// large to hold); a closed pipe is not an error (as for the other output, see `main`).
pub fn write_json<T: Serialize>(value: &T) -> Result<(), CliError> {
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    let r = serde_json::to_writer_pretty(&mut w, value)
        .map_err(std::io::Error::from)
        .and_then(|()| w.write_all(b"\n"))
        .and_then(|()| w.flush());
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError(format!("cannot write the output: {e}")))
        }
        _ => Ok(()),
    }
}

/// An integer with its thousands separated by commas (`1,048,576`).
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a progress bar counts.
#[derive(Debug, Clone, Copy)]
pub enum Counting {
    /// Bytes: shown with their rate.
    Bytes,
    /// Items, with a noun after the count (`" inputs"`, or `""`).
    Items(&'static str),
}

/// A progress bar on stderr, `verb` (`converting`, `comparing`, …) in front; `None` when
/// stderr is not a terminal, so that logs and pipes get no control characters. `len` may be
/// 0 and set later.
pub fn progress_bar(verb: &str, len: u64, counting: Counting) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let template = match counting {
        Counting::Bytes => format!(
            "{{spinner}} {verb} [{{bar:40}}] {{bytes}}/{{total_bytes}} ({{bytes_per_sec}}, {{eta}} left)"
        ),
        Counting::Items(noun) => format!(
            "{{spinner}} {verb} {{pos}}/{{len}}{noun} [{{bar:40}}] {{percent}}% ({{eta}} left)"
        ),
    };
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    Some(bar)
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
