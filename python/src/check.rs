//! `gpucvt.check`'s native half: the diagnostics `gpucvt check --json` reports for a PTX
//! module, a vISA assembly file or a CUDA Tile IR file, from a file or from text.

use crate::dialects::parse_tile_version;
use gpucvt::diag::Diagnostic;
use gpucvt::visa::check::CheckOptions;
use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;

/// `(line, column, severity, rule, message)`, the fields of `check --json`.
type DiagTuple = (u32, u32, &'static str, &'static str, String);

fn diagnostics(
    dialect: &str,
    text: String,
    target: Option<&str>,
    ptx_version: Option<&str>,
    tile_version: Option<&str>,
) -> PyResult<Vec<Diagnostic>> {
    let ptx_given = target.is_some() || ptx_version.is_some();
    let ptx_only = || PyValueError::new_err("target and ptx_version apply to PTX (.ptx) only");
    Ok(match dialect {
        "ptx" => {
            let t = target
                .map(|t| {
                    t.parse()
                        .map_err(|e: gpucvt::ptx::target::ParseError| PyValueError::new_err(e.0))
                })
                .transpose()?;
            let v = ptx_version
                .map(|v| {
                    v.parse()
                        .map_err(|e: gpucvt::ptx::target::ParseError| PyValueError::new_err(e.0))
                })
                .transpose()?;
            let text = gpucvt::diag::lone_cr_to_lf(text);
            gpucvt::ptx::check::check_source(&text, t, v)
        }
        "visa" => {
            if ptx_given {
                return Err(ptx_only());
            }
            gpucvt::visa::check::check_source(&text, &CheckOptions::default())
        }
        "tile" => {
            if ptx_given {
                return Err(ptx_only());
            }
            let version = parse_tile_version(tile_version)?
                .unwrap_or(gpucvt::tile::types::SpecVersion::LATEST);
            let text = gpucvt::tile::check::source_text(text);
            gpucvt::tile::check::check_source(&text, version)
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "invalid dialect {other:?}; expected one of: ptx, visa, tile"
            )))
        }
    })
}

fn tuples(d: Vec<Diagnostic>) -> Vec<DiagTuple> {
    d.into_iter()
        .map(|d| {
            (
                d.span.line,
                d.span.col,
                d.severity.name(),
                d.rule,
                d.message,
            )
        })
        .collect()
}

/// The diagnostics of `text` read as `dialect` (`ptx`, `visa` or `tile`).
#[pyfunction]
#[pyo3(signature = (text, dialect, target=None, ptx_version=None, tile_version=None))]
pub fn check_text(
    py: Python<'_>,
    text: String,
    dialect: &str,
    target: Option<&str>,
    ptx_version: Option<&str>,
    tile_version: Option<&str>,
) -> PyResult<Vec<DiagTuple>> {
    let dialect = dialect.to_string();
    let (t, v, tv) = (
        target.map(str::to_string),
        ptx_version.map(str::to_string),
        tile_version.map(str::to_string),
    );
    py.detach(move || diagnostics(&dialect, text, t.as_deref(), v.as_deref(), tv.as_deref()))
        .map(tuples)
}

/// The dialect of a file from its extension, as `gpucvt check` tells it.
fn dialect_of(path: &std::path::Path) -> PyResult<&'static str> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("ptx") => Ok("ptx"),
        Some(e) if e.eq_ignore_ascii_case("visaasm") => Ok("visa"),
        Some(e) if e.eq_ignore_ascii_case("mlir") => Ok("tile"),
        _ => Err(PyValueError::new_err(format!(
            "cannot tell the dialect of {}: the file name must end in .ptx (NVIDIA PTX), .visaasm (Intel vISA assembly) or .mlir (CUDA Tile IR)",
            path.display()
        ))),
    }
}

/// The diagnostics of the file at `path` (its dialect from its extension; `dialect`
/// overrides it).
#[pyfunction]
#[pyo3(signature = (path, dialect=None, target=None, ptx_version=None, tile_version=None))]
pub fn check_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    dialect: Option<&str>,
    target: Option<&str>,
    ptx_version: Option<&str>,
    tile_version: Option<&str>,
) -> PyResult<Vec<DiagTuple>> {
    let dialect = match dialect {
        Some(d) => d,
        None => dialect_of(&path)?,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let msg = format!("cannot read {}: {e}", path.display());
        match e.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
            std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(msg),
            // Not UTF-8: a bad value rather than a failed read (as `UnicodeDecodeError`).
            std::io::ErrorKind::InvalidData => PyValueError::new_err(msg),
            _ => PyOSError::new_err(msg),
        }
    })?;
    check_text(py, text, dialect, target, ptx_version, tile_version)
}

/// Registers the functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_text, m)?)?;
    m.add_function(wrap_pyfunction!(check_file, m)?)?;
    Ok(())
}
