//! `gpucvt.mx_quantize` / `gpucvt.mx_dequantize`: one tensor in memory quantized with block
//! scales by the library's `Quantizer` (the code `gpucvt convert --block/--recipe` runs), and
//! multiplied back out exactly.
//!
//! The block-scaling keywords are read by `gpucvt_tensor::ScalingRequest`, whose messages
//! name the options as the keywords do (`scale_rule`, `recipe=nvfp4`). The Python half widens the input to `f32` words, picks the dtypes of the
//! results and packs FP4/FP6; this half takes and gives plain words.

use crate::{conversion, lookup, thread_count};
use gpucvt_core::format::{Format, F32};
use gpucvt_core::round::Direction;
use gpucvt_core::{Conversion, Policy, Rounding};
use gpucvt_tensor::chunk::Quantizer;
use gpucvt_tensor::{BlockScaling, ScalingRequest};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn bad(m: impl ToString) -> PyErr {
    PyValueError::new_err(m.to_string())
}

/// The keywords that say how a tensor is block-scaled.
struct Scaling {
    recipe: Option<String>,
    block: Option<String>,
    axis: Option<i64>,
    scale: Option<String>,
    rule: Option<String>,
    layout: Option<String>,
    scale_2: bool,
}

impl Scaling {
    /// The element format (`elem`, or the recipe's: both given must agree), whether the
    /// recipe saturates, and the checked block scaling.
    fn build(&self, elem: Option<&str>) -> PyResult<(&'static Format, bool, BlockScaling)> {
        let req = ScalingRequest {
            recipe: self.recipe.clone(),
            block: self.block.clone(),
            axis: self.axis,
            scale: self.scale.clone(),
            rule: self.rule.clone(),
            layout: self.layout.clone(),
            second_level: self.scale_2,
        };
        let recipe = req.recipe().map_err(bad)?;
        let scaling = req
            .build()
            .map_err(bad)?
            .ok_or_else(|| bad("say how to block-scale: block=... or recipe=..."))?;
        let (dst, satfinite) = match (recipe, elem) {
            (Some(r), None) => (lookup(r.to)?, r.satfinite),
            (Some(r), Some(e)) => {
                let f = lookup(e)?;
                if f.name != r.to {
                    return Err(bad(format!(
                        "recipe {} quantizes to {}, not {}: give elem=None (or {:?}) with recipe=",
                        r.name, r.to, f.name, r.to
                    )));
                }
                (f, r.satfinite)
            }
            (None, Some(e)) => (lookup(e)?, false),
            (None, None) => return Err(bad("say what to quantize to: elem=FMT or recipe=NAME")),
        };
        Ok((dst, satfinite, scaling))
    }
}

fn shape_text(shape: &[u64]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Quantizes the `f32` words `x` of a tensor of `shape`. Returns the element codes (`u8`
/// for formats of at most 8 bits, else `u16`), the scales' bits in their written layout,
/// the second-level scale, the written scale shape, the element format's and the scale
/// format's names.
#[pyfunction]
#[pyo3(signature = (x, shape, elem, recipe, block, axis, scale, rule, layout, scale_2, mode, satfinite, seed, threads, rbits=None, rbits_width=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn mx_quantize<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, u32>,
    shape: Vec<u64>,
    elem: Option<String>,
    recipe: Option<String>,
    block: Option<String>,
    axis: Option<i64>,
    scale: Option<String>,
    rule: Option<String>,
    layout: Option<String>,
    scale_2: bool,
    mode: &str,
    satfinite: bool,
    seed: u64,
    threads: Option<usize>,
    rbits: Option<PyReadonlyArray1<'py, u32>>,
    rbits_width: Option<i64>,
) -> PyResult<(
    Bound<'py, PyAny>,
    Bound<'py, PyArray1<u32>>,
    Option<f32>,
    Vec<u64>,
    &'static str,
    &'static str,
)> {
    let sc = Scaling {
        recipe,
        block,
        axis,
        scale,
        rule,
        layout,
        scale_2,
    };
    let (dst, recipe_sat, scaling) = sc.build(elem.as_deref())?;
    let conv = conversion(
        &F32,
        dst,
        mode,
        satfinite || recipe_sat,
        false,
        false,
        false,
        false,
        rbits_width,
    )?;
    let words = x.as_slice().map_err(bad)?;
    let n: u64 = shape.iter().product();
    if n == 0 {
        return Err(bad(format!(
            "x has no elements (shape {}): there is nothing to block-scale",
            shape_text(&shape)
        )));
    }
    if words.len() as u64 != n {
        return Err(bad(format!(
            "{} words were given for shape {}",
            words.len(),
            shape_text(&shape)
        )));
    }
    let qz = Quantizer::new(conv, &scaling, &shape).map_err(bad)?;
    let stochastic = matches!(conv.rounding.direction, Direction::Stochastic { .. });
    let given = match &rbits {
        None => None,
        Some(_) if !stochastic => return Err(bad("rbits is only valid with mode=\"rs\"")),
        Some(r) => {
            let g = r.as_slice().map_err(bad)?;
            if g.len() != words.len() {
                return Err(bad(format!(
                    "rbits must have one word per element: {} elements, {} words",
                    words.len(),
                    g.len()
                )));
            }
            Some(g)
        }
    };
    // The stream of a single-tensor `gpucvt convert --seed` (`.npy` input), as `astype`.
    let random = stochastic.then(|| gpucvt_core::random::splitmix64(seed));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(thread_count(threads)?)
        .build()
        .map_err(|e| bad(format!("cannot start the worker threads: {e}")))?;
    let mut scales = vec![0u32; qz.scale_count()];
    let narrow = dst.width() <= 8;
    let (q8, q16, s2) = py
        .detach(|| {
            pool.install(|| -> gpucvt_tensor::Result<_> {
                let s2 = qz.tensor_scale(words);
                if narrow {
                    let mut q = vec![0u8; words.len()];
                    match given {
                        Some(g) => qz.quantize_with_rbits(words, s2, g, &mut q, &mut scales)?,
                        None => qz.quantize(words, s2, random, &mut q, &mut scales)?,
                    };
                    Ok((q, Vec::new(), s2))
                } else {
                    let mut q = vec![0u16; words.len()];
                    match given {
                        Some(g) => qz.quantize_with_rbits(words, s2, g, &mut q, &mut scales)?,
                        None => qz.quantize(words, s2, random, &mut q, &mut scales)?,
                    };
                    Ok((Vec::new(), q, s2))
                }
            })
        })
        .map_err(bad)?;
    let q = if narrow {
        PyArray1::from_vec(py, q8).into_any()
    } else {
        PyArray1::from_vec(py, q16).into_any()
    };
    let laid = qz.lay_out(&scales);
    Ok((
        q,
        PyArray1::from_vec(py, laid),
        s2,
        qz.written_scale_shape(),
        dst.name,
        scaling.format.name(),
    ))
}

/// The element codes of `mx_dequantize`: one per element, `u8` or `u16`.
#[derive(FromPyObject)]
pub enum Codes<'py> {
    U8(PyReadonlyArray1<'py, u8>),
    U16(PyReadonlyArray1<'py, u16>),
}

/// The exact values `q × s (× s2)` of the element codes `q` of a tensor of `shape` and
/// its scales' bits in their written layout, as `f64` (every such product is exact in it).
#[pyfunction]
#[pyo3(signature = (q, scales, scale_2, shape, elem, recipe, block, axis, scale, rule, layout, second_level, threads))]
#[allow(clippy::too_many_arguments)]
pub fn mx_dequantize<'py>(
    py: Python<'py>,
    q: Codes<'py>,
    scales: PyReadonlyArray1<'py, u32>,
    scale_2: Option<f32>,
    shape: Vec<u64>,
    elem: Option<String>,
    recipe: Option<String>,
    block: Option<String>,
    axis: Option<i64>,
    scale: Option<String>,
    rule: Option<String>,
    layout: Option<String>,
    second_level: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let sc = Scaling {
        recipe,
        block,
        axis,
        scale,
        rule,
        layout,
        scale_2: second_level,
    };
    let (dst, _, scaling) = sc.build(elem.as_deref())?;
    match (scaling.second_level, scale_2) {
        (true, None) => {
            return Err(bad(
                "this block scaling has a second (per-tensor) level: pass its scale_2",
            ))
        }
        (false, Some(_)) => {
            return Err(bad(
                "scale_2 was given, but the block scaling has no second level (scale_2=True with ue4m3 scales, or recipe=\"nvfp4\")",
            ))
        }
        _ => {}
    }
    if let Some(s) = scale_2 {
        // (0 is an all-zero tensor's.)
        if !(s.is_finite() && s >= 0.0) {
            return Err(bad(format!(
                "scale_2 must be a finite float32 of at least 0, not {s}"
            )));
        }
    }
    let n: u64 = shape.iter().product();
    if n == 0 {
        return Err(bad(format!(
            "q has no elements (shape {}): there is nothing to dequantize",
            shape_text(&shape)
        )));
    }
    let conv = Conversion::new(F32, *dst, Rounding::RN, Policy::default());
    let qz = Quantizer::new(conv, &scaling, &shape).map_err(bad)?;
    let written = scales.as_slice().map_err(bad)?;
    let rows = qz.read_layout(written).map_err(bad)?;
    let width = dst.width();
    // A code with bits above the format's would index past its table of values.
    fn check_codes<W: Copy + Into<u64>>(q: &[W], width: u32, name: &str) -> PyResult<()> {
        if let Some((i, &c)) = q.iter().enumerate().find(|(_, &c)| c.into() >> width != 0) {
            return Err(bad(format!(
                "element {i} of q is 0x{:x}, not a {name} code ({width} bits)",
                c.into()
            )));
        }
        Ok(())
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(thread_count(threads)?)
        .build()
        .map_err(|e| bad(format!("cannot start the worker threads: {e}")))?;
    let out = match &q {
        Codes::U8(a) => {
            let s = a.as_slice().map_err(bad)?;
            check_codes(s, width, dst.name)?;
            py.detach(|| pool.install(|| qz.dequantize(s, &rows, scale_2)))
        }
        Codes::U16(a) => {
            let s = a.as_slice().map_err(bad)?;
            check_codes(s, width, dst.name)?;
            py.detach(|| pool.install(|| qz.dequantize(s, &rows, scale_2)))
        }
    }
    .map_err(bad)?;
    Ok(PyArray1::from_vec(py, out))
}

/// A recipe's element format and scale format (`ValueError` with the CLI's message for an
/// unknown name).
#[pyfunction]
pub fn quant_recipe(name: String) -> PyResult<(&'static str, &'static str)> {
    let req = ScalingRequest {
        recipe: Some(name),
        ..ScalingRequest::default()
    };
    let r = req.recipe().map_err(bad)?.expect("a recipe name was given");
    Ok((lookup(r.to)?.name, r.scaling.format.name()))
}
