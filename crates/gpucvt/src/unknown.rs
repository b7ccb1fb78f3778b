//! Values a run does not know: one rule for `run` in every dialect (PTX, vISA, Tile IR).
//!
//! gpucvt executes conversions and the copies around them, not a whole kernel. An instruction
//! it does not model (a load, an `add`, a `send`, an `addf`) is skipped with a note, and every
//! register, variable element or SSA value it writes becomes *unknown*, remembering the
//! instruction. Then:
//! - a conversion that reads an unknown value stops with an error that names the instruction
//!   (its text and line:column) and the option that supplies the value ([`Supply`]);
//! - a value the user supplied for a name stands for what every skipped instruction writes
//!   to it: the user stands in for the instruction (a load, even one after a `mov` of a
//!   default, as Triton writes masked loads). A value that a *modelled* instruction writes
//!   replaces whatever was there, supplied or not, with a note that says by what; a later
//!   skipped write gives the supplied value again;
//! - an unknown value that no conversion reads is no error: outputs show it as unknown
//!   ([`Unknown::describe`]) rather than a made-up value.
//!
//! ```
//! use gpucvt::diag::Span;
//! use gpucvt::unknown::{Supply, Unknown};
//! let at = Span { start: 0, end: 26, line: 26, col: 5 };
//! let u = Unknown::new("ld.global.f32   %f1,\n [%rd3];", at, "%f1", Supply::Set);
//! assert_eq!(u.instr, "ld.global.f32 %f1, [%rd3];");
//! assert_eq!(u.describe(), "unknown (ld.global.f32 at 26:5)");
//! let read = Span { start: 40, end: 43, line: 29, col: 46 };
//! let d = u.read_error("ptx.run-unknown", "%f1", read);
//! assert_eq!(d.span.line, 29);
//! assert!(d.message.contains("`ld.global.f32 %f1, [%rd3];` at 26:5"));
//! assert!(d.message.ends_with("--set %f1=…"));
//! ```

use crate::diag::{Diagnostic, Span};

/// How a user gives `gpucvt run` a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Supply {
    /// `--set NAME=VALUE` (PTX registers, vISA variables).
    Set,
    /// `--arg NAME=VALUES` (Tile IR SSA values).
    Arg,
}

impl Supply {
    /// The option: `--set` or `--arg`.
    pub fn flag(self) -> &'static str {
        match self {
            Supply::Set => "--set",
            Supply::Arg => "--arg",
        }
    }
}

/// Longest instruction text kept; longer ones end with `…`.
const MAX_TEXT: usize = 80;

/// A value that a skipped instruction wrote.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unknown {
    /// The instruction as written, on one line, runs of white space as one space (long
    /// instructions shortened with `…`).
    pub instr: String,
    /// Where the instruction is.
    pub span: Span,
    /// The name it wrote, as the option that supplies it takes it (`%f1`, `V33`, `%y`).
    pub name: String,
    /// The option that supplies it.
    pub supply: Supply,
}

impl Unknown {
    /// The value `name` as written by the instruction `text` at `span`.
    pub fn new(text: &str, span: Span, name: impl Into<String>, supply: Supply) -> Unknown {
        let mut instr = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if instr.chars().count() > MAX_TEXT {
            instr = instr.chars().take(MAX_TEXT - 1).collect::<String>() + "…";
        }
        Unknown {
            instr,
            span,
            name: name.into(),
            supply,
        }
    }

    /// The instruction's opcode or mnemonic: its first word after a guard (`@%p`, `(P1)`) or
    /// an SSA result (`%y =`).
    pub fn opcode(&self) -> &str {
        let mut words = self.instr.split_whitespace().peekable();
        let mut skip_to_eq = self.instr.contains(" = ") && self.instr.starts_with('%');
        while let Some(w) = words.next() {
            if skip_to_eq {
                if w == "=" {
                    skip_to_eq = false;
                }
                continue;
            }
            if w.starts_with('@') {
                continue;
            }
            if w.starts_with('(') {
                // A vISA predicate `(P1)` or `(!P1.any)`, possibly followed by the mnemonic.
                if let Some(rest) = w.split_once(')').map(|(_, r)| r) {
                    if !rest.is_empty() {
                        return trim_opcode(rest);
                    }
                    continue;
                }
                for w in words.by_ref() {
                    if w.contains(')') {
                        break;
                    }
                }
                continue;
            }
            return trim_opcode(w);
        }
        &self.instr
    }

    /// How a table shows it: `unknown (ld.global.f32 at 26:5)`.
    pub fn describe(&self) -> String {
        format!(
            "unknown ({} at {}:{})",
            self.opcode(),
            self.span.line,
            self.span.col
        )
    }

    /// The error when a conversion (or a guard) reads it: `what` is what was read (`%f1`,
    /// `element 3 of V33`), `at` where. Names the instruction and the option that supplies
    /// the value (which the instruction then leaves alone).
    pub fn read_error(&self, rule: &'static str, what: &str, at: Span) -> Diagnostic {
        let via = if what == self.name || what.ends_with(&format!(" of {}", self.name)) {
            String::new()
        } else {
            format!(" (from {})", self.name)
        };
        Diagnostic::error(
            rule,
            format!(
                "{what} is unknown{via}: `{}` at {}:{} writes it, and gpucvt does not execute that instruction; give the value it writes with {} {}=…",
                self.instr,
                self.span.line,
                self.span.col,
                self.supply.flag(),
                self.name
            ),
            at,
        )
    }
}

/// Drops a trailing `:` from an opcode written without a space before its operands.
fn trim_opcode(w: &str) -> &str {
    w.trim_end_matches([',', ':'])
}

/// The note for a skipped instruction: `head` (`ld.global.f32 not executed: only mov, cvt and
/// cvt.pack run`), then what it writes: the names now unknown, those that keep a value the
/// user supplied, and those that take it again (a modelled instruction had replaced it, and
/// the user's value stands for every write a skipped instruction makes).
pub fn skipped_note(
    rule: &'static str,
    head: &str,
    unknown: &[String],
    kept: &[String],
    again: &[String],
    supply: Supply,
    span: Span,
) -> Diagnostic {
    let mut m = head.to_string();
    if !unknown.is_empty() {
        m.push_str(&format!(
            "; {} {} unknown",
            unknown.join(", "),
            if unknown.len() == 1 { "is" } else { "are" }
        ));
    }
    if !kept.is_empty() {
        m.push_str(&format!(
            "; {} {} the {} value",
            kept.join(", "),
            if kept.len() == 1 { "keeps" } else { "keep" },
            supply.flag()
        ));
    }
    if !again.is_empty() {
        m.push_str(&format!(
            "; {} {} the {} value again",
            again.join(", "),
            if again.len() == 1 { "takes" } else { "take" },
            supply.flag()
        ));
    }
    Diagnostic::warning(rule, m, span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_and_notes() {
        let at = Span::default();
        let op = |t: &str| Unknown::new(t, at, "x", Supply::Set).opcode().to_string();
        assert_eq!(op("@!%p ld.global.f32 %f1, [%rd1];"), "ld.global.f32");
        assert_eq!(
            op("(P1) add (M1, 16) V33(0,0)<1> V32(0,0)<1;1,0> 0x1:d"),
            "add"
        );
        assert_eq!(op("(!P1.any) send.x (M1, 8) V1"), "send.x");
        assert_eq!(op("%y, %z = addf %x, %x : tile<4xf32>"), "addf");
        let long = "a ".repeat(100);
        assert_eq!(
            Unknown::new(&long, at, "x", Supply::Set)
                .instr
                .chars()
                .count(),
            MAX_TEXT
        );
        let d = skipped_note(
            "r",
            "ld not executed",
            &["%f1".into(), "%f2".into()],
            &["%f3".into()],
            &["%f4".into()],
            Supply::Set,
            at,
        );
        assert_eq!(
            d.message,
            "ld not executed; %f1, %f2 are unknown; %f3 keeps the --set value; %f4 takes the --set value again"
        );
        let u = Unknown::new("addf", at, "%y", Supply::Arg);
        let e = u.read_error("t", "%w", at);
        assert!(e.message.starts_with("%w is unknown (from %y)"));
        assert!(e.message.ends_with("--arg %y=…"));
    }
}
