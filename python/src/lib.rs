//! `gpucvt._gpucvt`: the native half of the `gpucvt` Python package.
//!
//! The Python half (`gpucvt/__init__.py`) resolves dtypes and array-likes to gpucvt format
//! names and builds a `Converter` (`converter.rs`) per conversion: the conversion exactly as
//! `gpucvt convert --to` does, whose call takes a C-contiguous array as it is, allocates the
//! result and runs the slice kernels of `gpucvt-kernels` with the GIL released, split over
//! threads. `round.rs` is `gpucvt round`, `file.rs` `gpucvt convert` on files, `testing.rs`
//! `gpucvt vectors` and `gpucvt conform` for `gpucvt.testing`. Keeping NumPy
//! dtype logic in Python keeps this layer small, so later functions (`cvt`, `mov`, `tile`, …)
//! add one Rust entry point each.

use gpucvt::ptx;
use gpucvt_core::format::{Layout, CATALOGUE, F32};
use gpucvt_core::round::Direction;
use gpucvt_core::{Chain, Conversion, Format, NanResult};
use gpucvt_kernels::random::random_values;
use gpucvt_kernels::{Kernel, Strategy, Widening, Word};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ops::Range;

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

/// Where stochastic rounding takes its random words.
#[derive(Clone, Copy)]
enum Random<'a> {
    /// Not stochastic.
    None,
    /// The caller's, one per element.
    Given(&'a [u32]),
    /// gpucvt's stream: element `i` takes `random_word(stream, i)`.
    Stream(u64),
}

/// Elements per thread below which a second thread costs more than it gains, by the cost of
/// an element (measured with `python/benchmarks/astype.py --threads`): the table and `f32`
/// kernels take a fraction of a nanosecond an element and one thread nearly fills the
/// memory bandwidth, so a thread's start and the second core's wake-up only pay off on
/// large parts; stochastic rounding draws a random word per element; the exact core takes
/// tens of nanoseconds.
const MIN_PER_THREAD_FAST: usize = 1 << 22;
const MIN_PER_THREAD_STOCHASTIC: usize = 1 << 18;
const MIN_PER_THREAD_EXACT: usize = 1 << 14;
/// At most this many threads, whatever `threads` asks (each is an OS thread).
const MAX_THREADS: usize = 256;
/// Elements converted at a time by the stochastic paths (bounds a thread's scratch memory).
const BLOCK: usize = 1 << 14;

/// A conversion ready to run over slices: its kernel and, for stochastic rounding of sources
/// of at most 16 bits (which the kernels' tables cannot take: each element has its own random
/// word), the way `gpucvt convert` takes too: the source widened exactly to `f32` by a table,
/// then the `f32` kernel, with the elements it cannot serve bit for bit (NaN payloads,
/// subnormals, anything the widening flags) converted by the exact core.
struct Runner {
    kernel: Kernel,
    widen: Option<Widen>,
    /// A first rounding to `f32` before `kernel` (a peer's double rounding, see
    /// `gpucvt::compat`).
    first: Option<Kernel>,
}

struct Widen {
    /// The `f32` kernel of the same rounding and policy.
    kernel: Kernel,
    /// The `f32` word of each source encoding, and which go through the exact core instead.
    table: Widening,
    mask: u64,
}

impl Runner {
    fn new(conv: Conversion) -> Runner {
        let stochastic = matches!(conv.rounding.direction, Direction::Stochastic { .. });
        let src = conv.src;
        let widen = (stochastic && src.width() <= 16 && src != F32).then(|| {
            let mut wide = conv;
            wide.src = F32;
            Widen {
                kernel: Kernel::new(wide),
                table: Widening::of(&src),
                mask: src.mask(),
            }
        });
        Runner {
            kernel: Kernel::new(conv),
            widen,
            first: None,
        }
    }

    /// The conversions of `chain`, one after the other (never stochastic: the peers round
    /// to nearest).
    fn chained(chain: Chain) -> Runner {
        let mut r = Runner::new(chain.last);
        r.first = chain.first.map(Kernel::new);
        r
    }

    /// The fewest elements worth a thread of their own for this conversion.
    fn min_per_thread(&self) -> usize {
        let exact = |k: &Kernel| k.strategy() == Strategy::Exact;
        // The widened stochastic path runs the f32 kernel (the exact core only for the few
        // encodings it cannot serve).
        if self.widen.is_some() {
            MIN_PER_THREAD_STOCHASTIC
        } else if exact(&self.kernel) || self.first.as_ref().is_some_and(exact) {
            MIN_PER_THREAD_EXACT
        } else if matches!(
            self.kernel.conversion().rounding.direction,
            Direction::Stochastic { .. }
        ) {
            MIN_PER_THREAD_STOCHASTIC
        } else {
            MIN_PER_THREAD_FAST
        }
    }

    /// The source format (of the first step, where there are two).
    fn src(&self) -> &Format {
        let k = self.first.as_ref().unwrap_or(&self.kernel);
        &k.conversion().src
    }

    /// `src` through the first step into `f32` words, then the last step, a block at a time.
    fn twice<S: Word, D: Word>(
        &self,
        first: &Kernel,
        src: &[S],
        dst: &mut [D],
    ) -> Result<(), String> {
        let mut mid = vec![0u32; BLOCK.min(src.len())];
        for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
            let m = &mut mid[..s.len()];
            first.convert(s, m).map_err(|e| e.to_string())?;
            self.kernel.convert(m, d).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Stochastic conversion of `src` with the random words `random` (as long).
    fn stochastic<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        random: &[u32],
        wide: &mut Vec<u32>,
    ) -> Result<(), String> {
        let Some(w) = &self.widen else {
            return self
                .kernel
                .convert_stochastic(src, dst, random)
                .map_err(|e| e.to_string());
        };
        wide.clear();
        wide.extend(
            src.iter()
                .map(|x| w.table.bits[(x.to_u64() & w.mask) as usize]),
        );
        w.kernel
            .convert_stochastic(wide, dst, random)
            .map_err(|e| e.to_string())?;
        let conv = self.kernel.conversion();
        for (i, x) in src.iter().enumerate() {
            let x = x.to_u64() & w.mask;
            if w.table.exact[x as usize] {
                let mut c = *conv;
                if let Direction::Stochastic { width, .. } = c.rounding.direction {
                    c.rounding.direction = Direction::Stochastic {
                        random: random[i] as u64,
                        width,
                    };
                }
                dst[i] = D::from_u64(c.apply(x).bits);
            }
        }
        Ok(())
    }

    /// Converts the elements `at` of the whole array (`src`, `dst`: those elements).
    fn part<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        at: Range<usize>,
        random: Random<'_>,
    ) -> Result<(), String> {
        let mut wide = Vec::new();
        match random {
            Random::None => match &self.first {
                Some(first) => self.twice(first, src, dst),
                None => self.kernel.convert(src, dst).map_err(|e| e.to_string()),
            },
            Random::Given(words) => {
                let words = &words[at];
                for ((s, d), r) in src
                    .chunks(BLOCK)
                    .zip(dst.chunks_mut(BLOCK))
                    .zip(words.chunks(BLOCK))
                {
                    self.stochastic(s, d, r, &mut wide)?;
                }
                Ok(())
            }
            Random::Stream(stream) => {
                let mut buf = vec![0u32; BLOCK.min(src.len())];
                let mut first = at.start as u64;
                for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
                    let b = &mut buf[..s.len()];
                    random_values(stream, first, b);
                    self.stochastic(s, d, b, &mut wide)?;
                    first += s.len() as u64;
                }
                Ok(())
            }
        }
    }

    /// Converts every element, split into `threads` contiguous parts (each element's random
    /// word depends on its index only, so the split never changes a result).
    fn fill<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        random: Random<'_>,
        threads: usize,
    ) -> Result<(), String> {
        let n = src.len();
        let parts = threads
            .min(MAX_THREADS)
            .min(n / self.min_per_thread())
            .max(1);
        if parts == 1 {
            return self.part(src, dst, 0..n, random);
        }
        // Parts of a multiple of 64 elements, so that each starts on a cache line.
        let size = n.div_ceil(parts).next_multiple_of(64);
        std::thread::scope(|scope| {
            let handles: Vec<_> = src
                .chunks(size)
                .zip(dst.chunks_mut(size))
                .enumerate()
                .map(|(j, (s, d))| {
                    let at = j * size..j * size + s.len();
                    scope.spawn(move || self.part(s, d, at, random))
                })
                .collect();
            handles.into_iter().try_for_each(|h| {
                h.join()
                    .map_err(|_| "a conversion thread panicked".to_string())?
            })
        })
    }
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
