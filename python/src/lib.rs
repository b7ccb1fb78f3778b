//! `gpucvt._gpucvt`: the native half of the `gpucvt` Python package.
//!
//! The Python half (`gpucvt/__init__.py`) resolves dtypes and array-likes to gpucvt format
//! names and builds a `Converter` (`converter.rs`) per conversion: the conversion exactly as
//! `gpucvt convert --to` does, whose call takes a C-contiguous array as it is, allocates the
//! result and runs `gpucvt_kernels::bulk::Bulk` (the slice kernels, split over threads by
//! the library's rule) with the GIL released. `round.rs` is `gpucvt round`, `file.rs` `gpucvt convert` on files, `testing.rs`
//! `gpucvt vectors` and `gpucvt conform` for `gpucvt.testing`. Keeping NumPy
//! dtype logic in Python keeps this layer small, so later functions (`cvt`, `mov`, `tile`, …)
//! add one Rust entry point each.

use gpucvt::ptx;
use gpucvt_core::format::{Layout, CATALOGUE};
use gpucvt_core::{Conversion, Format, NanResult};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod check;
mod converter;
mod dialects;
mod file;
mod quant;
mod round;
mod testing;

/// Every catalogue format name, in catalogue order (floats first, widest first).
#[pyfunction]
fn formats() -> Vec<&'static str> {
    CATALOGUE.iter().map(|f| f.name).collect()
}

/// A format by any name gpucvt accepts, or `ValueError` with the library's message (the
/// nearest name, unsupported ml_dtypes formats, ambiguous names).
fn lookup(name: &str) -> PyResult<&'static Format> {
    Format::from_name(name).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The catalogue name of a format name (`"float8_e4m3fn"` → `"e4m3"`).
#[pyfunction]
fn canonical_name(name: &str) -> PyResult<&'static str> {
    Ok(lookup(name)?.name)
}

fn value_of(f: &Format, bits: u64) -> f64 {
    f.decode(bits).to_f64_lossy()
}

/// The properties of a format, for `gpucvt.finfo`.
#[pyfunction]
fn format_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let f = lookup(name)?;
    let d = PyDict::new(py);
    d.set_item("name", f.name)?;
    d.set_item("bits", f.width())?;
    d.set_item("signed", f.is_signed())?;
    d.set_item("is_float", f.is_float())?;
    let (exp_bits, man_bits, bias, frac_bits) = match f.layout {
        Layout::Float(l) => (l.exp_bits, l.man_bits, l.bias, 0),
        Layout::Fixed(l) => (0, 0, 0, l.frac_bits),
    };
    d.set_item("exp_bits", exp_bits)?;
    d.set_item("man_bits", man_bits)?;
    d.set_item("bias", bias)?;
    d.set_item("frac_bits", frac_bits)?;
    d.set_item("has_inf", f.has_infinity())?;
    d.set_item("has_nan", f.has_nan())?;
    d.set_item("has_zero", f.has_zero())?;
    d.set_item("has_subnormals", f.has_subnormals())?;
    let max = value_of(f, f.max_finite_bits());
    d.set_item("max", max)?;
    d.set_item(
        "min",
        f.min_finite_bits().map_or(
            // Unsigned: the smallest value (0, or 2^-127 for ue8m0).
            if f.has_zero() {
                0.0
            } else {
                value_of(f, f.min_positive_bits())
            },
            |b| value_of(f, b),
        ),
    )?;
    let smallest = value_of(f, f.min_positive_bits());
    d.set_item(
        "min_normal",
        f.min_normal_bits().map_or(smallest, |b| value_of(f, b)),
    )?;
    d.set_item("smallest_subnormal", smallest)?;
    // The gap above 1.0 (fixed point: the resolution, one unit in the last place).
    let eps = if f.is_float() {
        (-(man_bits as f64)).exp2()
    } else {
        (-(frac_bits as f64)).exp2()
    };
    d.set_item("eps", eps)?;
    d.set_item("layout", f.layout_text())?;
    Ok(d)
}

/// Every encoding's value (index = bit pattern) of a format of at most 16 bits.
#[pyfunction]
fn values<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let f = lookup(name)?;
    if f.width() > 16 {
        return Err(PyValueError::new_err(format!(
            "values() lists every encoding of formats of at most 16 bits; {} has {} bits",
            f.name,
            f.width()
        )));
    }
    let v: Vec<f64> = (0..1u64 << f.width()).map(|b| value_of(f, b)).collect();
    Ok(PyArray1::from_vec(py, v))
}

/// A PTX rounding modifier by name, any case (`mode=` of `astype`, `convert_file` and the
/// quantizers).
fn round_mod(mode: &str) -> PyResult<ptx::RoundMod> {
    gpucvt_tensor::options::ElementRequest::mode_named(mode)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The conversion `gpucvt convert --to DST --mode MODE [--satfinite …]` applies to a tensor of
/// `src`, by the library's builder ([`gpucvt_tensor::options::ElementRequest`]), so that
/// `astype(mode="rs", seed=s)` equals `gpucvt convert --seed s` and both take the same
/// modifiers and checks.
#[allow(clippy::too_many_arguments)]
fn conversion(
    src: &Format,
    dst: &Format,
    mode: &str,
    satfinite: bool,
    sat: bool,
    relu: bool,
    ftz: bool,
    pzo: bool,
    rbits_width: Option<i64>,
) -> PyResult<Conversion> {
    gpucvt_tensor::options::ElementRequest {
        to: *dst,
        mode: round_mod(mode)?,
        satfinite,
        sat,
        relu,
        ftz,
        pzo,
        rbits_width,
    }
    .build()
    .and_then(|rule| rule.conversion(src))
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `astype`'s `nan=`: `canonical` (PTX's) or `payload` (the source's sign and payload).
fn nan_rule(name: &str) -> PyResult<NanResult> {
    gpucvt::round::nan_named(name).map_err(|_| {
        PyValueError::new_err(format!(
            "nan must be \"canonical\" or \"payload\", not {name:?}"
        ))
    })
}

/// The number of threads: `threads`, or every core the process may use; at most a few per
/// core, by the rule every front end shares ([`gpucvt_kernels::threads::Threads`]).
fn thread_count(threads: Option<usize>) -> PyResult<usize> {
    match threads {
        Some(0) => Err(PyValueError::new_err(
            "threads must be at least 1 (None: every core)",
        )),
        Some(t) => Ok(gpucvt_kernels::threads::Threads::new(t).used),
        None => Ok(gpucvt_kernels::threads::cores()),
    }
}

/// The destination's word: the narrowest of 8, 16, 32 and 64 bits that holds it.
fn container_bits(f: &Format) -> u32 {
    f.width().next_power_of_two().max(8)
}

/// The native module.
#[pymodule]
fn _gpucvt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_name, m)?)?;
    m.add_function(wrap_pyfunction!(format_info, m)?)?;
    m.add_function(wrap_pyfunction!(values, m)?)?;
    dialects::register(m)?;
    check::register(m)?;
    testing::register(m)?;
    m.add_function(wrap_pyfunction!(round::round, m)?)?;
    m.add_function(wrap_pyfunction!(file::convert_file, m)?)?;
    m.add_function(wrap_pyfunction!(file::dequantize_file, m)?)?;
    m.add_function(wrap_pyfunction!(quant::mx_quantize, m)?)?;
    m.add_function(wrap_pyfunction!(quant::mx_dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(quant::quant_recipe, m)?)?;
    m.add_class::<converter::Converter>()?;
    m.add_function(wrap_pyfunction!(converter::_bench_kernel, m)?)?;
    Ok(())
}
