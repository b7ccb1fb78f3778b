//! Diagnostics shared by every reader and checker: a rule, a message and a source span.

use core::fmt;

/// A half-open byte range in a source text, with the 1-based line and column of its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
    /// 1-based line of `start`.
    pub line: u32,
    /// 1-based column (in characters) of `start`.
    pub col: u32,
}

impl Span {
    /// The span of `start..end` in `text`, with line and column computed from the text.
    pub fn locate(text: &str, start: usize, end: usize) -> Span {
        let start = start.min(text.len());
        let before = &text[..start];
        let line = before.matches('\n').count() as u32 + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() as u32 + 1;
        Span {
            start,
            end: end.max(start).min(text.len()),
            line,
            col,
        }
    }
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The input is rejected.
    Error,
    /// The input is accepted, but something deserves attention.
    Warning,
    /// Information only (a part of the input that was read but not modelled).
    Note,
}

/// One problem found in an input: which rule, what is wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A short stable identifier of the rule (`ptx.rounding-required`, `syntax`, …).
    pub rule: &'static str,
    /// A message for people.
    pub message: String,
    /// Where.
    pub span: Span,
}

impl Diagnostic {
    /// An error.
    pub fn error(rule: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            rule,
            message: message.into(),
            span,
        }
    }

    /// A warning.
    pub fn warning(rule: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            rule,
            message: message.into(),
            span,
        }
    }

    /// A note.
    pub fn note(rule: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Note,
            rule,
            message: message.into(),
            span,
        }
    }
}

impl Severity {
    /// `error`, `warning` or `note`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

impl Diagnostic {
    /// The diagnostic as a compiler prints it: `path:line:col: error[rule]: message`, then
    /// the source line with its number and a caret line under the span (`^^^`, at least one
    /// caret; a span that runs past the end of its line is underlined to the end of the line).
    /// Tabs before the span are kept in the caret line so that the carets line up. Without a
    /// usable position (line 0, or a line past the end of `source`) only the first line is
    /// written, as `path: error[rule]: message`. No colour, ends with a newline.
    ///
    /// ```
    /// use gpucvt::diag::{Diagnostic, Span};
    /// let src = "a\n\tcvt.f16.f32 %h, %f;\n";
    /// let d = Diagnostic::error("ptx.rounding-required", "needs a rounding", Span::locate(src, 3, 14));
    /// assert_eq!(
    ///     d.render("k.ptx", src),
    ///     "k.ptx:2:2: error[ptx.rounding-required]: needs a rounding\n  |\n2 | \tcvt.f16.f32 %h, %f;\n  | \t^^^^^^^^^^^\n"
    /// );
    /// ```
    pub fn render(&self, path: &str, source: &str) -> String {
        let line = (self.span.line > 0)
            .then(|| source.split('\n').nth(self.span.line as usize - 1))
            .flatten();
        self.render_line(path, source, line)
    }

    /// [`Self::render`] with the source already split at `'\n'` (`lines`), for many
    /// diagnostics of one text: finding each line by a scan from the start of the text
    /// would make them quadratic.
    ///
    /// ```
    /// use gpucvt::diag::{Diagnostic, Span};
    /// let src = "a\nbc\n";
    /// let d = Diagnostic::error("r", "m", Span::locate(src, 3, 4));
    /// let lines: Vec<&str> = src.split('\n').collect();
    /// assert_eq!(d.render_in("f", src, &lines), d.render("f", src));
    /// ```
    pub fn render_in(&self, path: &str, source: &str, lines: &[&str]) -> String {
        let line = (self.span.line > 0)
            .then(|| lines.get(self.span.line as usize - 1).copied())
            .flatten();
        self.render_line(path, source, line)
    }

    fn render_line(&self, path: &str, source: &str, line: Option<&str>) -> String {
        let head = format!("{}[{}]: {}", self.severity.name(), self.rule, self.message);
        let line_text = line.map(|l| l.strip_suffix('\r').unwrap_or(l));
        let Some(line_text) = line_text else {
            return format!("{path}: {head}\n");
        };
        let number = self.span.line.to_string();
        let pad = " ".repeat(number.len());
        let col = self.span.col.max(1) as usize - 1;
        let chars: Vec<char> = line_text.chars().collect();
        let lead: String = chars
            .iter()
            .take(col)
            .map(|&c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let width = source
            .get(self.span.start..self.span.end)
            .map_or(1, |t| t.split('\n').next().unwrap_or("").chars().count())
            .min(chars.len().saturating_sub(col))
            .max(1);
        format!(
            "{path}:{}:{}: {head}\n{pad} |\n{number} | {line_text}\n{pad} | {lead}{}\n",
            self.span.line,
            self.span.col,
            "^".repeat(width)
        )
    }
}

impl fmt::Display for Diagnostic {
    /// `line:col: error[rule]: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = self.severity.name();
        write!(
            f,
            "{}:{}: {}[{}]: {}",
            self.span.line, self.span.col, sev, self.rule, self.message
        )
    }
}

/// The text with each CR that is not followed by LF made an LF (same length, same offsets),
/// in place: the readers end a line at a lone CR too, so a caller that splits the text at
/// `'\n'` (to show the source line under a diagnostic) sees the readers' lines.
///
/// ```
/// assert_eq!(gpucvt::diag::lone_cr_to_lf("a\rb\r\nc".to_string()), "a\nb\r\nc");
/// ```
pub fn lone_cr_to_lf(text: String) -> String {
    let mut bytes = text.into_bytes();
    for i in 0..bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            bytes[i] = b'\n';
        }
    }
    // An ASCII byte replaced by another keeps the text UTF-8, so the fallback never runs.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_counts_lines_and_columns() {
        let text = "ab\ncdé f\n";
        let s = Span::locate(text, 8, 9);
        assert_eq!((s.line, s.col), (2, 5));
        assert_eq!(Span::locate(text, 0, 1).col, 1);
    }
}
