//! What every subcommand uses: the error type, the result of a run, and how values are
//! described.

use gpucvt::core::value::Value;
use gpucvt::text::{to_decimal, to_short};
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

pub use gpucvt::round::class_name;

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
