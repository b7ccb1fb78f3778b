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
}

impl fmt::Display for Diagnostic {
    /// `line:col: error[rule]: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{}:{}: {}[{}]: {}",
            self.span.line, self.span.col, sev, self.rule, self.message
        )
    }
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
