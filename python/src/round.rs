//! `gpucvt.round`: one number (or one bit pattern) converted to a format, as
//! `gpucvt round NUMBER --to FMT [--from F] [--bits B] [--mode M] [policy] [--explain]`.
//!
//! A thin layer over the library's [`gpucvt::round`], which the CLI calls too: the same
//! checks and messages, the report of `gpucvt round --json` (as JSON text the Python half
//! reads) and, with `explain`, the text `gpucvt round --explain` prints.

use gpucvt::round::{int_nan_named, mode_named, nan_named, overflow_named, Request, RoundError};
use gpucvt_tensor::lookup_format;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn value_error(e: RoundError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `gpucvt round`: `number` (text in the CLI's syntax) or `bits` (a pattern of `from_`),
/// converted to `to`. Returns `(report, bits, float, explanation)`: the JSON object
/// `gpucvt round --json` prints (as text), the result's bits and value as a float, and
/// with `explain` the text `gpucvt round --explain` prints (otherwise `None`).
#[pyfunction]
#[pyo3(signature = (number, to, from_=None, bits=None, mode="rn", explain=false, satfinite=false, sat=false, relu=false, ftz=false, pzo=false, wrap=false, overflow=None, nan=None, int_nan=None, scale=None, rbits=None, rbits_width=None))]
#[allow(clippy::too_many_arguments)]
pub fn round(
    number: Option<String>,
    to: &str,
    from_: Option<&str>,
    bits: Option<String>,
    mode: &str,
    explain: bool,
    satfinite: bool,
    sat: bool,
    relu: bool,
    ftz: bool,
    pzo: bool,
    wrap: bool,
    overflow: Option<String>,
    nan: Option<String>,
    int_nan: Option<String>,
    scale: Option<i64>,
    rbits: Option<String>,
    rbits_width: Option<i64>,
) -> PyResult<(String, u64, f64, Option<String>)> {
    // The CLI's messages (gpucvt::round's name its options), so the CLI's words here too.
    let find = |name: &str, option: &str| {
        lookup_format(name, option).map_err(|e| PyValueError::new_err(e.to_string()))
    };
    let mut req = Request::new(find(to, "--to")?);
    req.from = from_.map(|f| find(f, "--from")).transpose()?;
    req.number = number;
    req.bits = bits;
    req.mode = mode_named(mode).map_err(value_error)?;
    req.explain = explain;
    req.satfinite = satfinite;
    req.sat = sat;
    req.relu = relu;
    req.ftz = ftz;
    req.pzo = pzo;
    req.wrap = wrap;
    req.overflow = overflow
        .as_deref()
        .map(overflow_named)
        .transpose()
        .map_err(value_error)?;
    req.nan = nan
        .as_deref()
        .map(nan_named)
        .transpose()
        .map_err(value_error)?;
    req.int_nan = int_nan
        .as_deref()
        .map(int_nan_named)
        .transpose()
        .map_err(value_error)?;
    req.scale = scale;
    req.rbits = rbits;
    req.rbits_width = rbits_width;
    let report = req.run().map_err(value_error)?;
    let json = serde_json::to_string(&report)
        .map_err(|e| PyValueError::new_err(format!("internal error: cannot write JSON: {e}")))?;
    let explanation = explain.then(|| report.text());
    Ok((
        json,
        report.bits,
        report.format.decode(report.bits).to_f64_lossy(),
        explanation,
    ))
}
