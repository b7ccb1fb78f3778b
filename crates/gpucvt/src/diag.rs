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
            message: capped(message.into()),
            span,
        }
    }

    /// A warning.
    pub fn warning(rule: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            rule,
            message: capped(message.into()),
            span,
        }
    }

    /// A note.
    pub fn note(rule: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Note,
            rule,
            message: capped(message.into()),
            span,
        }
    }
}

/// The longest message a diagnostic keeps, in bytes: a message that quotes a huge token
/// (a 300 KB identifier) is cut with `…`, so that no diagnostic is much larger than this.
pub const MAX_MESSAGE: usize = 1000;

fn capped(mut m: String) -> String {
    if m.len() > MAX_MESSAGE {
        let mut cut = MAX_MESSAGE - '…'.len_utf8();
        while !m.is_char_boundary(cut) {
            cut -= 1;
        }
        m.truncate(cut);
        m.push('…');
    }
    m
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
        let (shown, lead, room) = echo(source, line_text, &self.span);
        let width = source
            .get(self.span.start..self.span.end)
            .map_or(1, |t| {
                t.split('\n')
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(room.saturating_add(1))
                    .count()
            })
            .min(room)
            .max(1);
        format!(
            "{path}:{}:{}: {head}\n{pad} |\n{number} | {shown}\n{pad} | {lead}{}\n",
            self.span.line,
            self.span.col,
            "^".repeat(width)
        )
    }
}

/// At most this many characters of a source line are shown under a diagnostic: a longer
/// line (minified code, a generated table) is cut around the span, so that each diagnostic
/// stays a few lines long however long its line is.
pub const ECHO_CHARS: usize = 160;

/// Of those, at most this many come before the span.
const ECHO_BEFORE: usize = 60;

/// The part of `line` (a line of `source`) shown under a diagnostic at `span`, `…` where it
/// is cut; the caret line's lead up to the span (tabs kept so that the carets line up); and
/// how many characters are shown from the span on (the most the carets may cover). The work
/// is linear in what is shown, not in the line's length.
fn echo(source: &str, line: &str, span: &Span) -> (String, String, usize) {
    // The span's byte offset in the line: `line` is a slice of `source`.
    let line_start = (line.as_ptr() as usize).wrapping_sub(source.as_ptr() as usize);
    let at = span.start.checked_sub(line_start).filter(|&i| {
        line_start
            .checked_add(line.len())
            .is_some_and(|e| e <= source.len())
            && i <= line.len()
            && line.is_char_boundary(i)
    });
    let at = match at {
        Some(i) => i,
        // Not a slice of `source` (or the span lies elsewhere): by the column.
        None => line
            .char_indices()
            .nth(span.col.max(1) as usize - 1)
            .map_or(line.len(), |(i, _)| i),
    };
    let (before, after) = line.split_at(at);
    let from = before
        .char_indices()
        .rev()
        .nth(ECHO_BEFORE - 1)
        .map_or(0, |(i, _)| i);
    let before = &before[from..];
    let shown_before = before.chars().count();
    let room = ECHO_CHARS - shown_before;
    let to = after
        .char_indices()
        .nth(room)
        .map_or(after.len(), |(i, _)| i);
    let after_shown = &after[..to];
    let mut shown = String::new();
    let mut lead = String::new();
    if from > 0 {
        shown.push('…');
        lead.push(' ');
    }
    shown.push_str(before);
    shown.push_str(after_shown);
    if to < after.len() {
        shown.push('…');
    }
    lead.extend(before.chars().map(|c| if c == '\t' { '\t' } else { ' ' }));
    (shown, lead, after_shown.chars().count())
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

    /// A diagnostic on a line of a million characters shows a window around its span, not
    /// the whole line.
    #[test]
    fn long_lines_are_cut_around_the_span() {
        let mut src = "x".repeat(1_000_000);
        src.replace_range(500_000..500_003, "bad");
        src.push_str("\nnext\n");
        let d = Diagnostic::error("r", "m", Span::locate(&src, 500_000, 500_003));
        let r = d.render("f", &src);
        assert!(r.len() < 600, "{} bytes", r.len());
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[0], "f:1:500001: error[r]: m");
        let shown = lines[2].strip_prefix("1 | ").unwrap();
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert_eq!(shown.chars().count(), ECHO_CHARS + 2);
        // The carets stand under `bad`.
        let carets = lines[3].strip_prefix("  | ").unwrap();
        let col = carets.find('^').unwrap();
        assert_eq!(&carets[col..], "^^^");
        assert_eq!(shown.chars().skip(col).take(3).collect::<String>(), "bad");
        // A span to the end of a long line gets at most the carets of what is shown.
        let d = Diagnostic::error("r", "m", Span::locate(&src, 10, 1_000_000));
        let r = d.render("f", &src);
        assert!(r.len() < 800, "{} bytes", r.len());
        // Short lines are shown whole, as before.
        let s = "ab\tcd";
        let d = Diagnostic::error("r", "m", Span::locate(s, 3, 5));
        assert_eq!(
            d.render("f", s),
            "f:1:4: error[r]: m\n  |\n1 | ab\tcd\n  |   \t^^\n"
        );
    }

    #[test]
    fn messages_are_capped() {
        let d = Diagnostic::error(
            "r",
            format!("'{}' is unknown", "é".repeat(5000)),
            Span::default(),
        );
        assert!(d.message.len() <= MAX_MESSAGE && d.message.ends_with('…'));
        assert_eq!(
            Diagnostic::note("r", "short", Span::default()).message,
            "short"
        );
    }

    #[test]
    fn locate_counts_lines_and_columns() {
        let text = "ab\ncdé f\n";
        let s = Span::locate(text, 8, 9);
        assert_eq!((s.line, s.col), (2, 5));
        assert_eq!(Span::locate(text, 0, 1).col, 1);
    }
}
