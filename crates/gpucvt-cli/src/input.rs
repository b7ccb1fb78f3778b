//! Reading what the user gives: format names and source files.

use crate::common::{fail, CliError};
use gpucvt::core::format::{Format, CATALOGUE};
use std::path::Path;

/// Looks up a format given to `option` (`--to`, `--from`, `<format>`): a catalogue name or
/// another tool's name for it ([`gpucvt_tensor::lookup_format`]).
pub fn lookup_format(name: &str, option: &str) -> Result<&'static Format, CliError> {
    gpucvt_tensor::lookup_format(name, option).map_err(crate::convert::message)
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

/// The dialect of a source file, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `.ptx`
    Ptx,
    /// `.visaasm`
    Visa,
}

/// Reads a source file (each lone CR an LF) and tells its dialect by extension (`.ptx` or `.visaasm`; callers
/// take `.mlir` files before this, and the message names all three).
pub fn read_source(path: &Path) -> Result<(Dialect, String), CliError> {
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
    // The readers end a line at a lone CR too; the source lines shown under diagnostics are
    // split at '\n', so they get the same text (same offsets).
    Ok((dialect, gpucvt::diag::lone_cr_to_lf(text)))
}

/// Whether `path` names a CUDA Tile IR file (`.mlir`, any case).
pub fn is_mlir(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("mlir"))
}

/// Splits the `NAME=VALUE` of a repeatable option (`--set`, `--arg`); `example` is what the
/// error shows.
pub fn name_value(text: &str, option: &str, example: &str) -> Result<(String, String), CliError> {
    text.split_once('=')
        .map(|(n, v)| (n.trim().to_string(), v.to_string()))
        .ok_or_else(|| CliError(format!("{option} {text:?}: write {example}")))
}
