//! The dialect functions' native half: `gpucvt.cvt`, `gpucvt.mov`, `gpucvt.tile`,
//! `gpucvt.cvt_forms` and `gpucvt.tile_ops`.
//!
//! An instruction is read and checked once ([`gpucvt::instr::Instr::parse`], exactly as
//! `gpucvt eval --batch` reads it) into an [`Instruction`]; the Python half turns the
//! operands into flat columns of unsigned words and [`Instruction::eval`] evaluates every
//! row with the GIL released, split over threads. PTX forms whose lanes all perform one core
//! conversion run through the slice kernels ([`CvtKernel`]), and so do Tile IR ops whose
//! `tileiras` lowering is made of such `cvt`s; the others (`cvt.pack`, `.scaled`, vISA
//! moves, other Tile IR ops) through the library's exact evaluators, row by row.

use gpucvt::diag::{Diagnostic, Severity};
use gpucvt::instr::{undefined_message, Instr, Options};
use gpucvt::ptx::eval::{evaluate_bits, lane_conversion, Role};
use gpucvt::ptx::slices::{CvtKernel, Order};
use gpucvt::ptx::{PtxVersion, Target};
use gpucvt::tile::eval::{ElementResult, Semantics};
use gpucvt::tile::types::SpecVersion;
use gpucvt::visa::cr0::Cr0;
use gpucvt::visa::types::{unpack, VisaType};
use gpucvt::Error;
use gpucvt_kernels::Word;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::ops::Range;

/// Rows per thread below which splitting costs more than it gains.
const MIN_PER_THREAD: usize = 1 << 14;
/// At most this many threads.
const MAX_THREADS: usize = 256;
/// Rows gathered at a time on the kernel path (the buffers stay in the cache).
const BLOCK: usize = 2048;

/// A diagnostic as the tuple `gpucvt.Diagnostic` is built from:
/// `(line, column, severity, rule, message)`.
type DiagTuple = (u32, u32, &'static str, &'static str, String);

fn diag_tuple(d: &Diagnostic) -> DiagTuple {
    (
        d.span.line,
        d.span.col,
        d.severity.name(),
        d.rule,
        d.message.clone(),
    )
}

/// `gpucvt.IllegalInstruction(message, diagnostics)` (defined in Python, so that it carries
/// `Diagnostic` objects).
fn illegal(py: Python<'_>, message: String, diags: Vec<DiagTuple>) -> PyErr {
    let made = py
        .import("gpucvt._dialects")
        .and_then(|m| m.getattr("IllegalInstruction"))
        .and_then(|cls| cls.call1((message.clone(), diags)));
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// The Python exception of a library error: `IllegalInstruction` for forms the dialect's
/// rules reject (with the checker's diagnostics), `ValueError` otherwise; the message is the
/// one the CLI prints.
pub(crate) fn py_error(py: Python<'_>, e: Error, text: &str, opts: &Options) -> PyErr {
    let version = opts.version.unwrap_or(PtxVersion::LATEST);
    let message = e.to_string();
    match e {
        Error::Invalid { diagnostics, .. } => {
            illegal(py, message, diagnostics.iter().map(diag_tuple).collect())
        }
        Error::Illegal {
            diagnostic, target, ..
        } => {
            let d = locate(text, &diagnostic, target.map(|t| (t, version)));
            illegal(py, message, vec![diag_tuple(&d)])
        }
        Error::Visa(p) => {
            // The rule `gpucvt check` gives the same pair in a .visaasm file.
            let rule = if text.to_ascii_lowercase().contains("bool") {
                "visa.predicate"
            } else {
                "visa.type-pair"
            };
            let d = Diagnostic::error(
                rule,
                p.to_string(),
                gpucvt::diag::Span {
                    start: 0,
                    end: text.len(),
                    line: 1,
                    col: 1,
                },
            );
            illegal(py, message, vec![diag_tuple(&d)])
        }
        Error::Tile(t) => {
            let diags = match &t {
                gpucvt::tile::eval::EvalError::Invalid(d) => d.iter().map(diag_tuple).collect(),
                _ => vec![(
                    1,
                    1,
                    Severity::Error.name(),
                    "tile.lowering",
                    message.clone(),
                )],
            };
            illegal(py, message, diags)
        }
        _ => PyValueError::new_err(message),
    }
}

/// The legality diagnostic of a PTX form with its position in `text`: the target check of
/// [`Instr::parse`] has no text to point into, so the form is checked again with it (the
/// same rule and message, now with a span); where that finds nothing, the whole text.
fn locate(text: &str, d: &Diagnostic, on: Option<(Target, PtxVersion)>) -> Diagnostic {
    let t = text.trim();
    // The guard `@%p` (already read by `Instr::parse`): columns count from the instruction.
    let t = match t.strip_prefix('@') {
        Some(_) => t
            .split_once(char::is_whitespace)
            .map_or(t, |(_, rest)| rest.trim_start()),
        None => t,
    };
    let located = on.and_then(|(target, version)| {
        let instr = gpucvt::ptx::parse_instruction(t).ok()?;
        gpucvt::ptx::check(&instr, &|_: &str| None, target, version)
            .into_iter()
            .find(|x| x.rule == d.rule && x.message == d.message && x.span.line > 0)
    });
    located.unwrap_or_else(|| {
        let mut whole = d.clone();
        if whole.span.line == 0 {
            whole.span = gpucvt::diag::Span {
                start: 0,
                end: t.len(),
                line: 1,
                col: 1,
            };
        }
        whole
    })
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn parse_target(target: Option<&str>) -> PyResult<Option<Target>> {
    target
        .map(|t| t.parse::<Target>().map_err(|e| value_error(e.0)))
        .transpose()
}

fn parse_ptx_version(version: Option<&str>) -> PyResult<Option<PtxVersion>> {
    version
        .map(|v| v.parse::<PtxVersion>().map_err(|e| value_error(e.0)))
        .transpose()
}

pub(crate) fn parse_tile_version(version: Option<&str>) -> PyResult<Option<SpecVersion>> {
    version
        .map(|v| {
            SpecVersion::from_name(v).ok_or_else(|| {
                let names: Vec<&str> = SpecVersion::ALL.iter().map(|v| v.name()).collect();
                value_error(format!(
                    "invalid tile_version {v:?}; expected one of: {}",
                    names.join(", ")
                ))
            })
        })
        .transpose()
}

/// Which dialect a function takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Ptx,
    Visa,
    Tile,
    Amd,
}

/// An instruction read and checked once, evaluated over columns of operand words.
#[pyclass(module = "gpucvt._gpucvt", frozen)]
pub struct Instruction {
    instr: Instr,
    kernel: Option<CvtKernel>,
    /// A Tile IR op whose `tileiras` lowering is a chain of `cvt`s whose lanes perform one
    /// conversion each: each step's kernel, with the masks its input and output are cut to.
    tile_chain: Option<Vec<(gpucvt_kernels::Kernel, u64, u64)>>,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Runs `k` on words held in `u64`s: the kernels take the natural container of each
/// format's width (`u32` for `f32`, ...).
fn kernel_words(k: &gpucvt_kernels::Kernel, src: &[u64], dst: &mut [u64]) -> Result<(), String> {
    let c = k.conversion();
    macro_rules! run {
        ($S:ty, $D:ty) => {{
            let s: Vec<$S> = src.iter().map(|&x| <$S>::from_u64(x)).collect();
            let mut d: Vec<$D> = vec![<$D>::default(); src.len()];
            k.convert(&s, &mut d).map_err(|e| e.to_string())?;
            for (o, x) in dst.iter_mut().zip(&d) {
                *o = x.to_u64();
            }
            Ok(())
        }};
    }
    macro_rules! to {
        ($S:ty) => {
            match container(c.dst.width()) {
                8 => run!($S, u8),
                16 => run!($S, u16),
                32 => run!($S, u32),
                _ => run!($S, u64),
            }
        };
    }
    match container(c.src.width()) {
        8 => to!(u8),
        16 => to!(u16),
        32 => to!(u32),
        _ => to!(u64),
    }
}

/// The kernels of a `tileiras` lowering made only of `cvt`s whose lanes all perform one
/// conversion, where the element goes through one lane: the low lane of a packed source or
/// result (`Step::apply` puts the element in `b` of two-source x2 forms, the low lane, and
/// keeps the low lane of the result). The input is cut to the source lane, the result to
/// the destination lane, as there.
fn tile_chain(t: &gpucvt::instr::TileInstr) -> Option<Vec<(gpucvt_kernels::Kernel, u64, u64)>> {
    use gpucvt::tile::eval::Step;
    if t.semantics != Semantics::Tileiras {
        return None;
    }
    let steps = &t.lowering.as_ref()?.steps;
    steps
        .iter()
        .map(|s| match s {
            Step::Cvt(f) if !f.pack => {
                let roles = gpucvt::ptx::eval::operand_roles(f);
                let one_lane = match (f.atype.lanes(), f.dtype.lanes()) {
                    (1, 1) => roles == [Role::A],
                    (1, 2) => roles == [Role::A, Role::B],
                    (2, 2) => roles == [Role::A],
                    _ => false,
                };
                if !one_lane {
                    return None;
                }
                let conv = lane_conversion(f).ok()?;
                let in_bits = if f.atype.lanes() > 1 {
                    f.atype.lane_bits()
                } else {
                    f.atype.bits()
                };
                Some((
                    gpucvt_kernels::Kernel::new(conv),
                    mask(in_bits),
                    mask(f.dtype.lane_bits()),
                ))
            }
            _ => None,
        })
        .collect()
}

/// One source operand: `(name, bits, format or None, lanes)` (for a Tile IR op: one element
/// of its tile).
type OperandTuple = (&'static str, u32, Option<&'static str>, u32);

/// The evaluation options the dialect functions (and `gpucvt.testing`) take, read as
/// `gpucvt eval` reads its flags.
pub(crate) fn options(
    target: Option<&str>,
    ptx_version: Option<&str>,
    cr0: Option<&str>,
    semantics: Option<&str>,
    tile_version: Option<&str>,
) -> PyResult<Options> {
    let mut opts = Options {
        target: parse_target(target)?,
        version: parse_ptx_version(ptx_version)?,
        tile_version: parse_tile_version(tile_version)?,
        ..Options::default()
    };
    if let Some(c) = cr0 {
        opts.cr0 = Cr0::parse(c).map_err(|e| value_error(format!("cr0: {e}")))?;
    }
    if let Some(s) = semantics {
        opts.semantics = Semantics::from_name(&s.to_ascii_lowercase()).ok_or_else(|| {
            value_error(format!(
                "invalid semantics {s:?}; expected one of: tileiras, spec"
            ))
        })?;
    }
    Ok(opts)
}

/// Reads `text` as an instruction of `dialect` and checks it against the options, as
/// `gpucvt eval` does.
#[pyfunction]
#[pyo3(signature = (dialect, text, target=None, ptx_version=None, cr0=None, semantics=None, tile_version=None, amd_mode=0, amd_old=0))]
#[allow(clippy::too_many_arguments)]
pub fn instruction(
    py: Python<'_>,
    dialect: &str,
    text: &str,
    target: Option<&str>,
    ptx_version: Option<&str>,
    cr0: Option<&str>,
    semantics: Option<&str>,
    tile_version: Option<&str>,
    amd_mode: u32,
    amd_old: u64,
) -> PyResult<Instruction> {
    let dialect = match dialect {
        "ptx" => Dialect::Ptx,
        "visa" => Dialect::Visa,
        "tile" => Dialect::Tile,
        "amd" => Dialect::Amd,
        other => return Err(value_error(format!("unknown dialect {other:?}"))),
    };
    let opts = if dialect == Dialect::Amd {
        // An AMD target is a gfx name, MODE and the old destination its state.
        let t = target.ok_or_else(|| {
            value_error("an AMD instruction needs its target (target=\"gfx942\", ...)")
        })?;
        Options {
            amd_target: Some(
                t.parse::<gpucvt::amd::Target>()
                    .map_err(|e| value_error(format!("unknown AMD target {t:?}: {e}")))?,
            ),
            amd_mode: gpucvt::amd::Mode::from_raw(amd_mode),
            amd_old,
            ..Options::default()
        }
    } else {
        options(target, ptx_version, cr0, semantics, tile_version)?
    };
    let instr = Instr::parse(text, &opts).map_err(|e| py_error(py, e, text, &opts))?;
    let (want, expected) = match dialect {
        Dialect::Ptx => (
            matches!(instr, Instr::Ptx(_)),
            "a PTX cvt/cvt.pack form (cvt.rn.f16.f32); gpucvt.mov takes vISA moves, gpucvt.tile Tile IR ops",
        ),
        Dialect::Visa => (
            matches!(instr, Instr::Visa(_)),
            "a vISA move (mov.sat hf <- f); gpucvt.cvt takes PTX forms, gpucvt.tile Tile IR ops",
        ),
        Dialect::Tile => (
            matches!(instr, Instr::Tile(_)),
            "a Tile IR conversion op (ftof : tile<f32> -> tile<f16>); gpucvt.cvt takes PTX forms, gpucvt.mov vISA moves",
        ),
        Dialect::Amd => (
            matches!(instr, Instr::Amd(_)),
            "an AMD conversion instruction (v_cvt_pk_fp8_f32 v1, v2, v3); gpucvt.cvt takes PTX forms",
        ),
    };
    if !want {
        return Err(value_error(format!(
            "{:?} is not {expected}",
            gpucvt::instr::shorten(text.trim())
        )));
    }
    let kernel = match &instr {
        Instr::Ptx(p) if !p.form.pack && lane_conversion(&p.form).is_ok() => {
            CvtKernel::new(&p.form, Order::Instruction).ok()
        }
        _ => None,
    };
    let tile_chain = match &instr {
        Instr::Tile(t) => tile_chain(t),
        _ => None,
    };
    Ok(Instruction {
        instr,
        kernel,
        tile_chain,
    })
}

/// A column of operand words: one per row, or one for every row (a broadcast scalar).
#[derive(Clone, Copy)]
enum Col<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

impl Col<'_> {
    fn len(&self) -> usize {
        match self {
            Col::U8(s) => s.len(),
            Col::U16(s) => s.len(),
            Col::U32(s) => s.len(),
            Col::U64(s) => s.len(),
        }
    }

    #[inline]
    fn at(&self, i: usize) -> u64 {
        // A one-word column stands for every row.
        let i = if self.len() == 1 { 0 } else { i };
        match self {
            Col::U8(s) => s[i] as u64,
            Col::U16(s) => s[i] as u64,
            Col::U32(s) => s[i] as u64,
            Col::U64(s) => s[i],
        }
    }

    /// The first row in `rows` whose word has bits at or above `bits`.
    fn too_wide(&self, bits: u32, rows: Range<usize>) -> Option<usize> {
        if bits >= 64 {
            return None;
        }
        rows.into_iter().find(|&i| self.at(i) >> bits != 0)
    }
}

/// The readonly views that keep the columns' arrays borrowed.
enum Held<'py> {
    U8(PyReadonlyArray1<'py, u8>),
    U16(PyReadonlyArray1<'py, u16>),
    U32(PyReadonlyArray1<'py, u32>),
    U64(PyReadonlyArray1<'py, u64>),
}

impl<'py> Held<'py> {
    fn of(a: &Bound<'py, PyAny>) -> PyResult<Held<'py>> {
        if let Ok(a) = a.cast::<PyArray1<u8>>() {
            return Ok(Held::U8(a.readonly()));
        }
        if let Ok(a) = a.cast::<PyArray1<u16>>() {
            return Ok(Held::U16(a.readonly()));
        }
        if let Ok(a) = a.cast::<PyArray1<u32>>() {
            return Ok(Held::U32(a.readonly()));
        }
        if let Ok(a) = a.cast::<PyArray1<u64>>() {
            return Ok(Held::U64(a.readonly()));
        }
        Err(PyTypeError::new_err(
            "an operand column must be a 1-D array of unsigned integers",
        ))
    }

    fn col(&self) -> PyResult<Col<'_>> {
        let e = |e: numpy::NotContiguousError| value_error(e);
        Ok(match self {
            Held::U8(a) => Col::U8(a.as_slice().map_err(e)?),
            Held::U16(a) => Col::U16(a.as_slice().map_err(e)?),
            Held::U32(a) => Col::U32(a.as_slice().map_err(e)?),
            Held::U64(a) => Col::U64(a.as_slice().map_err(e)?),
        })
    }
}

/// An error at one row: its index and the message.
type RowError = (usize, String);

/// The narrowest of 8, 16, 32 and 64 bits that holds `bits`.
fn container(bits: u32) -> u32 {
    bits.next_power_of_two().max(8)
}

impl Instruction {
    /// The width of one output word and how many each row gives.
    fn out_shape(&self) -> (u32, usize) {
        match &self.instr {
            Instr::Ptx(_) => (self.instr.result_bits(), 1),
            Instr::Visa(v) => (v.dst.size() * 8, v.src.packed_elements().max(1) as usize),
            Instr::Tile(t) => (t.op.dst.value.elem.bits(), 1),
            Instr::Amd(_) => (self.instr.result_bits(), 1),
        }
    }

    /// Evaluates rows `rows` into `out` (their output words). With `undefined`, an element
    /// the `spec` semantics leaves undefined is marked there (one flag per row) and gives 0,
    /// rather than an error.
    fn rows<D: Word>(
        &self,
        cols: &[Col<'_>],
        rows: Range<usize>,
        out: &mut [D],
        mut undefined: Option<&mut [u8]>,
    ) -> Result<(), RowError> {
        match &self.instr {
            Instr::Ptx(p) => {
                if let Some(k) = &self.kernel {
                    return self.kernel_rows(k, cols, rows, out);
                }
                let mut ops = [0u64; 8];
                let n = cols.len().min(ops.len());
                for (j, i) in rows.enumerate() {
                    for (o, c) in ops.iter_mut().zip(cols) {
                        *o = c.at(i);
                    }
                    let (bits, _) =
                        evaluate_bits(&p.form, &ops[..n]).map_err(|e| (i, e.to_string()))?;
                    out[j] = D::from_u64(bits);
                }
                Ok(())
            }
            Instr::Amd(_) => {
                // The library's evaluator, one row at a time.
                let mut ops = [0u64; 8];
                let n = cols.len().min(ops.len());
                for (j, i) in rows.enumerate() {
                    for (o, c) in ops.iter_mut().zip(cols) {
                        *o = c.at(i);
                    }
                    let (bits, _) = self
                        .instr
                        .eval_bits(&ops[..n])
                        .map_err(|e| (i, e.to_string()))?;
                    out[j] = D::from_u64(bits as u64);
                }
                Ok(())
            }
            Instr::Visa(v) => {
                let bits = v.src.size() * 8;
                let k = v.src.packed_elements().max(1) as usize;
                let packed = matches!(v.src, VisaType::V | VisaType::Uv | VisaType::Vf);
                for (j, i) in rows.enumerate() {
                    let x = cols[0].at(i);
                    if bits < 64 && x >> bits != 0 {
                        return Err((
                            i,
                            format!("operand src = {x:#x} does not fit in {bits} bits"),
                        ));
                    }
                    if packed {
                        for (e, s) in unpack(v.src, x).into_iter().zip(&mut out[j * k..]) {
                            *s = D::from_u64(v.plan.run(e).bits);
                        }
                    } else {
                        let x = x & v.src.element_format().mask();
                        out[j] = D::from_u64(v.plan.run(x).bits);
                    }
                }
                Ok(())
            }
            Instr::Tile(t) if self.tile_chain.is_some() => {
                let chain = self.tile_chain.as_deref().unwrap_or_default();
                let bits = t.op.src.value.elem.bits();
                if let Some(i) = cols[0].too_wide(bits, rows.clone()) {
                    let value = cols[0].at(i);
                    return Err((
                        i,
                        format!("x = {value:#x} does not fit in the {bits} bits of the source element type"),
                    ));
                }
                let out_mask = mask(t.op.dst.value.elem.bits());
                let (mut a, mut b) = (vec![0u64; BLOCK], vec![0u64; BLOCK]);
                let mut at = rows.start;
                while at < rows.end {
                    let end = (at + BLOCK).min(rows.end);
                    let m = end - at;
                    for (x, i) in a[..m].iter_mut().zip(at..end) {
                        *x = cols[0].at(i);
                    }
                    for (k, in_mask, lane_mask) in chain {
                        for x in &mut a[..m] {
                            *x &= in_mask;
                        }
                        kernel_words(k, &a[..m], &mut b[..m]).map_err(|e| (at, e))?;
                        for x in &mut b[..m] {
                            *x &= lane_mask;
                        }
                        std::mem::swap(&mut a, &mut b);
                    }
                    for (o, x) in out[at - rows.start..end - rows.start].iter_mut().zip(&a) {
                        *o = D::from_u64(x & out_mask);
                    }
                    at = end;
                }
                Ok(())
            }
            Instr::Tile(t) => {
                let mut buf = Vec::with_capacity(BLOCK.min(rows.len()));
                let per_tile = t.elements().max(1) as usize;
                let w = t.op.dst.value.elem.bits();
                let mut at = rows.start;
                while at < rows.end {
                    let end = (at + BLOCK).min(rows.end);
                    buf.clear();
                    buf.extend((at..end).map(|i| cols[0].at(i)));
                    let results = t.eval_with(t.semantics, &buf).map_err(|e| {
                        let msg = e.to_string();
                        // The element index of the library's message is the block's.
                        match e {
                            Error::Tile(gpucvt::tile::eval::EvalError::InputTooWide {
                                index,
                                value,
                                bits,
                            }) => (
                                at + index,
                                format!("x = {value:#x} does not fit in the {bits} bits of the source element type"),
                            ),
                            Error::Operand { .. } => {
                                let bad = cols[0]
                                    .too_wide(t.op.src.value.elem.bits(), at..end)
                                    .unwrap_or(at);
                                let value = cols[0].at(bad);
                                let bits = t.op.src.value.elem.bits();
                                (
                                    bad,
                                    format!("x = {value:#x} does not fit in the {bits} bits of the source element type"),
                                )
                            }
                            _ => (at, msg),
                        }
                    })?;
                    for (k, r) in results.iter().enumerate() {
                        match r {
                            ElementResult::Bits(b) => out[at - rows.start + k] = D::from_u64(*b),
                            ElementResult::Undefined(_) => {
                                if let Some(u) = undefined.as_deref_mut() {
                                    u[at - rows.start + k] = 1;
                                    continue;
                                }
                                // The CLI's message for the whole tile of that element.
                                let i = at + k;
                                let first = i - i % per_tile;
                                let tile: Vec<u64> =
                                    (first..first + per_tile).map(|i| cols[0].at(i)).collect();
                                let res = t.eval_with(t.semantics, &tile).unwrap_or_default();
                                let msg = undefined_message(&res, w)
                                    .unwrap_or_else(|| "undefined (spec semantics)".into());
                                return Err((i, msg));
                            }
                        }
                    }
                    at = end;
                }
                Ok(())
            }
        }
    }

    /// The kernel path: each block's sources gathered in operand order, then the kernel.
    fn kernel_rows<D: Word>(
        &self,
        k: &CvtKernel,
        cols: &[Col<'_>],
        rows: Range<usize>,
        out: &mut [D],
    ) -> Result<(), RowError> {
        let Instr::Ptx(p) = &self.instr else {
            return Err((rows.start, "internal error: not a PTX form".into()));
        };
        // Bits above an operand's width: the evaluator's message for the first such row.
        let roles = gpucvt::ptx::eval::operand_roles(&p.form);
        for (c, &r) in cols.iter().zip(&roles) {
            if let Some(i) = c.too_wide(gpucvt::ptx::eval::role_bits(&p.form, r), rows.clone()) {
                let ops: Vec<u64> = cols.iter().map(|c| c.at(i)).collect();
                let msg = match evaluate_bits(&p.form, &ops) {
                    Err(e) => e.to_string(),
                    Ok(_) => "an operand does not fit its width".to_string(),
                };
                return Err((i, msg));
            }
        }
        let sources: Vec<usize> = roles
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Role::A | Role::B | Role::E | Role::F))
            .map(|(j, _)| j)
            .collect();
        let rbits = roles.iter().position(|&r| r == Role::Rbits);
        macro_rules! with_src {
            ($S:ty) => {{
                let mut src: Vec<$S> = Vec::with_capacity(BLOCK * sources.len());
                let mut rnd: Vec<u32> = Vec::with_capacity(BLOCK);
                let mut at = rows.start;
                while at < rows.end {
                    let end = (at + BLOCK).min(rows.end);
                    src.clear();
                    for i in at..end {
                        for &j in &sources {
                            src.push(<$S>::from_u64(cols[j].at(i)));
                        }
                    }
                    let dst = &mut out[at - rows.start..end - rows.start];
                    let r = match rbits {
                        Some(j) => {
                            rnd.clear();
                            rnd.extend((at..end).map(|i| cols[j].at(i) as u32));
                            k.convert_rs(&src, dst, &rnd)
                        }
                        None => k.convert(&src, dst),
                    };
                    r.map_err(|e| (at, e.to_string()))?;
                    at = end;
                }
                Ok(())
            }};
        }
        match container(k.source_bits()) {
            8 => with_src!(u8),
            16 => with_src!(u16),
            32 => with_src!(u32),
            _ => with_src!(u64),
        }
    }

    /// Every row, split over `threads` threads; the error of the lowest row, if any.
    fn fill<D: Word>(
        &self,
        cols: &[Col<'_>],
        n: usize,
        per_row: usize,
        out: &mut [D],
        undefined: Option<&mut [u8]>,
        threads: usize,
    ) -> Result<(), RowError> {
        let parts = threads.min(MAX_THREADS).min(n / MIN_PER_THREAD).max(1);
        if parts == 1 {
            return self.rows(cols, 0..n, out, undefined);
        }
        let size = n.div_ceil(parts);
        let mut flags: Vec<Option<&mut [u8]>> = match undefined {
            Some(u) => u.chunks_mut(size).map(Some).collect(),
            None => Vec::new(),
        };
        flags.resize_with(parts, || None);
        std::thread::scope(|scope| {
            let handles: Vec<_> = out
                .chunks_mut(size * per_row)
                .zip(flags)
                .enumerate()
                .map(|(j, (o, u))| {
                    let rows = j * size..(j * size + o.len() / per_row);
                    scope.spawn(move || self.rows(cols, rows, o, u))
                })
                .collect();
            let mut first: Option<RowError> = None;
            for h in handles {
                let r = h
                    .join()
                    .unwrap_or_else(|_| Err((0, "an evaluation thread panicked".into())));
                if let Err(e) = r {
                    if first.as_ref().is_none_or(|f| e.0 < f.0) {
                        first = Some(e);
                    }
                }
            }
            first.map_or(Ok(()), Err)
        })
    }
}

fn eval_into<'py, D: Word + numpy::Element>(
    py: Python<'py>,
    this: &Instruction,
    cols: &[Col<'_>],
    n: usize,
    per_row: usize,
    threads: usize,
    mark_undefined: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let total = n
        .checked_mul(per_row)
        .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("the result is too large"))?;
    // NumPy allocates (MemoryError for an impossible size).
    let out = py
        .import("numpy")?
        .getattr("zeros")?
        .call1((total, numpy::dtype::<D>(py)))?
        .cast_into::<PyArray1<D>>()?;
    let flags = if mark_undefined {
        Some(
            py.import("numpy")?
                .getattr("zeros")?
                .call1((n, numpy::dtype::<u8>(py)))?
                .cast_into::<PyArray1<u8>>()?,
        )
    } else {
        None
    };
    {
        let mut rw = out.readwrite();
        let dst = rw.as_slice_mut().map_err(value_error)?;
        let mut frw = flags.as_ref().map(|f| f.readwrite());
        let undefined = match frw.as_mut() {
            Some(f) => Some(f.as_slice_mut().map_err(value_error)?),
            None => None,
        };
        py.detach(|| this.fill::<D>(cols, n, per_row, dst, undefined, threads))
            .map_err(|(i, msg)| value_error(format!("element {i}: {msg}")))?;
    }
    match flags {
        Some(f) => Ok((out, f).into_pyobject(py)?.into_any()),
        None => Ok(out.into_any()),
    }
}

#[pymethods]
impl Instruction {
    /// The canonical spelling.
    #[getter]
    fn spelling(&self) -> String {
        self.instr.spelling()
    }

    /// The source operands: `(name, bits, format or None, lanes)`; a Tile IR op has one,
    /// an element of its tile.
    fn operands(&self) -> Vec<OperandTuple> {
        match &self.instr {
            Instr::Tile(t) => vec![(
                "x",
                t.op.src.value.elem.bits(),
                t.source_format().map(|f| f.name),
                1,
            )],
            i => i
                .operands()
                .iter()
                .map(|s| (s.name, s.bits, s.format.map(|f| f.name), s.lanes))
                .collect(),
        }
    }

    /// The width of one result word and how many words each row gives (several for a vISA
    /// move of a packed immediate: one per element, element 0 first).
    fn result_shape(&self) -> (u32, usize) {
        self.out_shape()
    }

    /// The shape of a Tile IR op's source tile (`None` for other dialects).
    fn tile_shape(&self) -> Option<Vec<u64>> {
        match &self.instr {
            Instr::Tile(t) => Some(t.op.src.value.shape.clone()),
            _ => None,
        }
    }

    /// Evaluates `n` rows: `columns` holds one 1-D array of unsigned words per operand (of
    /// `n` words, or one for every row). Returns the result words, `result_shape()[1]` per
    /// row, in the narrowest unsigned container of the result width. With
    /// `mark_undefined`, elements the `spec` semantics leaves undefined give 0 and a flag:
    /// returns `(words, flags)`, `flags` a `uint8` array of one per row.
    #[pyo3(signature = (columns, n, threads=None, mark_undefined=false))]
    fn eval<'py>(
        &self,
        py: Python<'py>,
        columns: Vec<Bound<'py, PyAny>>,
        n: usize,
        threads: Option<usize>,
        mark_undefined: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let want = match &self.instr {
            Instr::Tile(_) => 1,
            i => i.operands().len(),
        };
        if columns.len() != want {
            return Err(value_error(format!(
                "{} takes {want} source operand(s), got {}",
                self.instr.spelling(),
                columns.len()
            )));
        }
        let held = columns.iter().map(Held::of).collect::<PyResult<Vec<_>>>()?;
        let cols = held.iter().map(Held::col).collect::<PyResult<Vec<_>>>()?;
        if let Some(c) = cols.iter().find(|c| c.len() != n && c.len() != 1) {
            return Err(value_error(format!(
                "an operand column has {} words for {n} rows",
                c.len()
            )));
        }
        if n > 0 && cols.iter().any(|c| c.len() == 0) {
            return Err(value_error("an operand column is empty"));
        }
        let threads = crate::thread_count(threads)?;
        let (bits, per_row) = self.out_shape();
        match container(bits) {
            8 => eval_into::<u8>(py, self, &cols, n, per_row, threads, mark_undefined),
            16 => eval_into::<u16>(py, self, &cols, n, per_row, threads, mark_undefined),
            32 => eval_into::<u32>(py, self, &cols, n, per_row, threads, mark_undefined),
            _ => eval_into::<u64>(py, self, &cols, n, per_row, threads, mark_undefined),
        }
    }
}

/// Every distinct PTX `cvt`/`cvt.pack` form legal on `target` at `ptx_version` (default:
/// the newest the target has), sorted by spelling.
#[pyfunction]
#[pyo3(signature = (target="sm_100a", ptx_version=None))]
pub fn cvt_forms(target: &str, ptx_version: Option<&str>) -> PyResult<Vec<String>> {
    let t = parse_target(Some(target))?.unwrap_or(Target::SM_100A);
    let v = parse_ptx_version(ptx_version)?.unwrap_or_else(|| t.max_version());
    Ok(gpucvt::ptx::legal_forms(t, v)
        .iter()
        .map(|f| f.spelling())
        .collect())
}

/// Every legal Tile IR conversion op at `tile_version` (default: the newest) on tiles of
/// `shape`: each op and element-type pair of the verifier's table, with each signedness,
/// each rounding mode it accepts and, for `ftoi` from 13.4, with and without `saturating`.
#[pyfunction]
#[pyo3(signature = (tile_version=None, shape=vec![2]))]
pub fn tile_ops(tile_version: Option<&str>, shape: Vec<u64>) -> PyResult<Vec<String>> {
    use gpucvt::tile::parse::{ConvOp, Spanned};
    use gpucvt::tile::types::{Signedness, TileType};
    let v = parse_tile_version(tile_version)?.unwrap_or(SpecVersion::LATEST);
    let mut out = Vec::new();
    for e in gpucvt::tile::check::legal_table(v) {
        let base = ConvOp::new(
            e.op,
            TileType {
                shape: shape.clone(),
                elem: e.src,
            },
            TileType {
                shape: shape.clone(),
                elem: e.dst,
            },
        );
        let signs: &[Option<Signedness>] = if e.op.has_signedness() {
            &[Some(Signedness::Signed), Some(Signedness::Unsigned)]
        } else {
            &[None]
        };
        let modes: Vec<Option<&str>> = if e.modes.is_empty() {
            vec![None]
        } else {
            e.modes.iter().map(|m| Some(m.name())).collect()
        };
        for &sg in signs {
            for m in &modes {
                for sat in [false, true] {
                    if sat && !e.saturating {
                        continue;
                    }
                    let mut op = base.clone();
                    op.signedness = sg;
                    op.rounding = m.map(|m| Spanned {
                        value: m.to_string(),
                        span: Default::default(),
                    });
                    op.saturating = sat.then(Default::default);
                    out.push(op.to_text());
                }
            }
        }
    }
    Ok(out)
}

/// Registers the classes and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Instruction>()?;
    m.add_function(wrap_pyfunction!(instruction, m)?)?;
    m.add_function(wrap_pyfunction!(cvt_forms, m)?)?;
    m.add_function(wrap_pyfunction!(tile_ops, m)?)?;
    Ok(())
}
