//! `Converter`: a conversion built once (its kernel, tables and result dtype) and applied to
//! arrays in one call that allocates the result, so that a small `astype` costs little more
//! than Python's own call machinery. `gpucvt.astype` keeps one per (source dtype, format,
//! options) in a cache.

use crate::{container_bits, conversion, lookup, nan_rule, thread_count};
use gpucvt::compat::Peer;
use gpucvt_core::round::Direction;
use gpucvt_core::NanResult;
use gpucvt_kernels::bulk::{Bulk as Runner, Random};
use gpucvt_kernels::{Kernel, Word};
use numpy::npyffi::{
    self, npy_intp, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_WRITEABLE, PY_ARRAY_API,
};
use numpy::{
    PyArrayDescr, PyArrayDescrMethods, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::time::Instant;

/// Elements below which converting with the GIL held is cheaper than releasing it.
const DETACH_FROM: usize = 1 << 12;

/// A conversion ready to apply to NumPy arrays.
#[pyclass(frozen, module = "gpucvt._gpucvt")]
pub struct Converter {
    runner: Runner,
    /// Container widths (8, 16, 32, 64) of the source and destination encodings.
    src_bits: u32,
    dst_bits: u32,
    stochastic: bool,
    /// The dtype of results.
    out: Py<PyArrayDescr>,
}

/// A C-contiguous, aligned, native-order array's elements, if `a` is one.
fn contiguous(a: &Bound<'_, PyUntypedArray>) -> bool {
    // SAFETY: `a` is a live NumPy array; reading its flags field.
    let flags = unsafe { (*a.as_array_ptr()).flags };
    flags & NPY_ARRAY_C_CONTIGUOUS != 0
        && flags & NPY_ARRAY_ALIGNED != 0
        && a.dtype().is_native_byteorder() != Some(false)
}

/// A new, uninitialised C-ordered array of `shape` and `descr` (NumPy's allocator: huge
/// pages for large arrays; an impossible size is NumPy's MemoryError).
fn empty<'py>(
    py: Python<'py>,
    descr: &Bound<'py, PyArrayDescr>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let mut dims: Vec<npy_intp> = shape.iter().map(|&d| d as npy_intp).collect();
    // SAFETY: NewFromDescr steals a reference to the descriptor (hence the clone that is
    // given away); dims holds `shape.len()` dimensions; NULL strides and data make NumPy
    // allocate a C-ordered buffer. A NULL result is an exception set by NumPy.
    unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            PY_ARRAY_API.get_type_object(py, npyffi::NpyTypes::PyArray_Type),
            descr.clone().into_dtype_ptr(),
            dims.len() as std::os::raw::c_int,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        Ok(Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked())
    }
}

/// The elements of a C-contiguous, aligned array whose items are `S` words.
///
/// # Safety
/// `a` must be C-contiguous, aligned, with items of `size_of::<S>()` bytes, and not be
/// written while the slice lives.
unsafe fn words<'a, S>(a: &'a Bound<'_, PyUntypedArray>) -> &'a [S] {
    let n = a.len();
    if n == 0 {
        return &[];
    }
    std::slice::from_raw_parts((*a.as_array_ptr()).data as *const S, n)
}

/// The bytes an array's elements span, as an address range (empty for an empty array).
fn extent(a: &Bound<'_, PyUntypedArray>) -> std::ops::Range<usize> {
    // SAFETY: reading the data pointer of a live NumPy array.
    let start = unsafe { (*a.as_array_ptr()).data } as usize;
    start..start + a.len() * a.dtype().itemsize()
}

/// # Safety
/// As [`words`], and no one else may read or write `a` while the slice lives (a fresh
/// array, or the caller's `out`, checked not to overlap the source).
#[allow(clippy::mut_from_ref)]
unsafe fn words_mut<'a, D>(a: &'a Bound<'_, PyUntypedArray>) -> &'a mut [D] {
    let n = a.len();
    if n == 0 {
        return &mut [];
    }
    std::slice::from_raw_parts_mut((*a.as_array_ptr()).data as *mut D, n)
}

impl Converter {
    fn run<S: Word + Sync, D: Word + Send>(
        &self,
        py: Python<'_>,
        src: &[S],
        dst: &mut [D],
        random: Random<'_>,
        threads: usize,
    ) -> PyResult<()> {
        let mut go = move || self.runner.fill::<S, D>(src, dst, random, threads);
        if src.len() < DETACH_FROM {
            go()
        } else {
            py.detach(go)
        }
        .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

#[pymethods]
impl Converter {
    /// The conversion of `src_fmt` encodings to `dst_fmt`, results of dtype `out`.
    #[new]
    #[pyo3(signature = (src_fmt, dst_fmt, out, mode="rn", satfinite=false, sat=false, relu=false, ftz=false, rbits_width=None, nan="canonical", compat=None, pzo=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        src_fmt: &str,
        dst_fmt: &str,
        out: Bound<'_, PyArrayDescr>,
        mode: &str,
        satfinite: bool,
        sat: bool,
        relu: bool,
        ftz: bool,
        rbits_width: Option<i64>,
        nan: &str,
        compat: Option<&str>,
        pzo: bool,
    ) -> PyResult<Converter> {
        let (s, d) = (lookup(src_fmt)?, lookup(dst_fmt)?);
        let nan = nan_rule(nan)?;
        let runner = match compat {
            None => {
                let mut conv = conversion(s, d, mode, satfinite, sat, relu, ftz, pzo, rbits_width)?;
                conv.policy.nan = nan;
                Runner::new(conv)
            }
            Some(peer) => {
                let peer: Peer = peer
                    .parse()
                    .map_err(|e: gpucvt::Error| PyValueError::new_err(e.to_string()))?;
                let given = [
                    (!mode.eq_ignore_ascii_case("rn"), "mode"),
                    (satfinite, "satfinite"),
                    (sat, "sat"),
                    (relu, "relu"),
                    (ftz, "ftz"),
                    (pzo, "pzo"),
                    (rbits_width.is_some(), "rbits_width"),
                    (nan != NanResult::Canonical, "nan"),
                ];
                if let Some((_, name)) = given.iter().find(|(set, _)| *set) {
                    return Err(PyValueError::new_err(format!(
                        "compat={:?} reproduces {}'s own rounding (to nearest) and NaNs: it takes no {name}=",
                        peer.name(),
                        peer.version()
                    )));
                }
                let chain = peer
                    .chain(s, d)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Runner::chained(chain)
            }
        };
        let conv = *runner.conversion();
        let dst_bits = container_bits(d);
        if out.itemsize() * 8 != dst_bits as usize {
            return Err(PyTypeError::new_err(format!(
                "results of {} need {dst_bits}-bit items, not {}",
                d.name, out
            )));
        }
        Ok(Converter {
            stochastic: matches!(conv.rounding.direction, Direction::Stochastic { .. }),
            runner,
            src_bits: container_bits(s),
            dst_bits,
            out: out.unbind(),
        })
    }

    /// Checks the caller's `out` for a source array `a`: a writeable, C-contiguous,
    /// aligned array of `a`'s shape, whose dtype is the results' or the unsigned integer of
    /// their width, and whose memory does not overlap `a`'s (the kernels read the source
    /// while writing the result: an overlap would be read after it is overwritten).
    fn check_out<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyUntypedArray>,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyUntypedArray>> {
        let Ok(o) = out.cast::<PyUntypedArray>() else {
            return Err(PyTypeError::new_err(format!(
                "out must be a NumPy array, not {}",
                out.get_type().name()?
            )));
        };
        let want = self.out.bind(py);
        let dt = o.dtype();
        let container = dt.kind() == b'u'
            && dt.itemsize() * 8 == self.dst_bits as usize
            && dt.is_native_byteorder() != Some(false);
        if !dt.is_equiv_to(want) && !container {
            return Err(PyTypeError::new_err(format!(
                "out has dtype {dt}, but the results are {want} (or their bits as uint{})",
                self.dst_bits
            )));
        }
        if o.shape() != a.shape() {
            return Err(PyValueError::new_err(format!(
                "out has shape {:?}, but x has shape {:?}",
                o.shape(),
                a.shape()
            )));
        }
        // SAFETY: reading the flags field of a live NumPy array.
        let flags = unsafe { (*o.as_array_ptr()).flags };
        if flags & NPY_ARRAY_WRITEABLE == 0 {
            return Err(PyValueError::new_err("out is read-only"));
        }
        if flags & NPY_ARRAY_C_CONTIGUOUS == 0 || flags & NPY_ARRAY_ALIGNED == 0 {
            return Err(PyValueError::new_err(
                "out must be a C-contiguous, aligned array (np.empty(x.shape, dtype) is one)",
            ));
        }
        let (src, dst) = (extent(a), extent(o));
        if src.start < dst.end && dst.start < src.end {
            return Err(PyValueError::new_err(
                "out overlaps x's memory; converting in place is not supported: pass a \
                 separate array",
            ));
        }
        Ok(o.clone())
    }

    /// Converts the array `x` (its items are the source's encodings); returns the result, of
    /// `x`'s shape (written into `out` when given, after checking it: see `check_out`), or
    /// `None` when `x` is not a C-contiguous, aligned, native-order array of items of the
    /// source's container width (the caller makes one and calls again).
    #[pyo3(signature = (x, threads=None, seed=0, rbits=None, out=None))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        threads: Option<usize>,
        seed: u64,
        rbits: Option<PyReadonlyArray1<'py, u32>>,
        out: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyUntypedArray>>> {
        let Ok(a) = x.cast::<PyUntypedArray>() else {
            return Ok(None);
        };
        if a.dtype().itemsize() * 8 != self.src_bits as usize || !contiguous(a) {
            return Ok(None);
        }
        let threads = thread_count(threads)?;
        let given = match &rbits {
            Some(r) => Some(
                r.as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?,
            ),
            None => None,
        };
        let random = match (self.stochastic, given) {
            (false, None) => Random::None,
            (false, Some(_)) => {
                return Err(PyValueError::new_err(
                    "rbits is only valid with mode=\"rs\"",
                ))
            }
            (true, Some(g)) => {
                if g.len() != a.len() {
                    return Err(PyValueError::new_err(format!(
                        "rbits must have one word per element: {} elements, {} words",
                        a.len(),
                        g.len()
                    )));
                }
                Random::Given(g)
            }
            // The stream of a single-tensor `gpucvt convert --seed` (`.npy` or raw input).
            (true, None) => Random::Stream(gpucvt_core::random::splitmix64(seed)),
        };
        let out = match out {
            Some(o) => self.check_out(py, a, &o)?,
            None => empty(py, self.out.bind(py), a.shape())?,
        };
        macro_rules! go {
            ($S:ty) => {{
                // SAFETY: checked above: contiguous, aligned, items of $S's width; `out` is
                // new, of the destination's container width (checked in `new`), or the
                // caller's, checked by `check_out` (as many items of that width, writeable,
                // contiguous, aligned, not overlapping `x`).
                let src: &[$S] = unsafe { words(a) };
                // The bytes of a sub-byte format (e2m1, e2m3, ...) with bits set above it are
                // not its encodings: refused, as `gpucvt convert` refuses them.
                gpucvt_kernels::check_encodings(self.runner.src(), src, 0)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                match self.dst_bits {
                    8 => self.run::<$S, u8>(py, src, unsafe { words_mut(&out) }, random, threads),
                    16 => self.run::<$S, u16>(py, src, unsafe { words_mut(&out) }, random, threads),
                    32 => self.run::<$S, u32>(py, src, unsafe { words_mut(&out) }, random, threads),
                    _ => self.run::<$S, u64>(py, src, unsafe { words_mut(&out) }, random, threads),
                }
            }};
        }
        match self.src_bits {
            8 => go!(u8),
            16 => go!(u16),
            32 => go!(u32),
            _ => go!(u64),
        }?;
        Ok(Some(out))
    }
}

/// The benchmark's reference: the best of `reps` runs of the slice kernel
/// (`Kernel::convert`, one thread) of `src_fmt` → `dst_fmt` (rn) from `x`'s items into
/// `out`'s, in seconds; both C-contiguous arrays of the containers' widths.
#[pyfunction]
pub fn _bench_kernel(
    x: &Bound<'_, PyUntypedArray>,
    out: &Bound<'_, PyUntypedArray>,
    src_fmt: &str,
    dst_fmt: &str,
    reps: usize,
) -> PyResult<f64> {
    let (s, d) = (lookup(src_fmt)?, lookup(dst_fmt)?);
    let conv = conversion(s, d, "rn", false, false, false, false, false, None)?;
    let kernel = Kernel::new(conv);
    let (sb, db) = (container_bits(s) as usize, container_bits(d) as usize);
    if !contiguous(x)
        || !contiguous(out)
        || x.dtype().itemsize() * 8 != sb
        || out.dtype().itemsize() * 8 != db
        || x.len() != out.len()
    {
        return Err(PyTypeError::new_err(format!(
            "x and out must be C-contiguous arrays of as many {sb}-bit and {db}-bit items"
        )));
    }
    fn time<S: Word, D: Word>(k: &Kernel, src: &[S], dst: &mut [D], reps: usize) -> PyResult<f64> {
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(1) {
            let t = Instant::now();
            k.convert(src, dst)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        Ok(best)
    }
    macro_rules! go {
        ($S:ty) => {{
            // SAFETY: checked above; `out` is the caller's scratch array.
            let src: &[$S] = unsafe { words(x) };
            match db {
                8 => time::<$S, u8>(&kernel, src, unsafe { words_mut(out) }, reps),
                16 => time::<$S, u16>(&kernel, src, unsafe { words_mut(out) }, reps),
                32 => time::<$S, u32>(&kernel, src, unsafe { words_mut(out) }, reps),
                _ => time::<$S, u64>(&kernel, src, unsafe { words_mut(out) }, reps),
            }
        }};
    }
    // The GIL stays held: the benchmark runs nothing else meanwhile.
    match sb {
        8 => go!(u8),
        16 => go!(u16),
        32 => go!(u32),
        _ => go!(u64),
    }
}
