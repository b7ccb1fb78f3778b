//! `gpucvt.testing`'s native half: the cases of `gpucvt vectors` and the check of
//! `gpucvt conform`, for a NumPy function. The cases, their answers and the classification
//! of disagreements are the library's (`gpucvt::vectors::{generate, check}`); this layer
//! moves words between them and NumPy, and reports as JSON text that the Python half reads.

use crate::dialects::{options, py_error};
use gpucvt::instr::Instr;
use gpucvt::vectors::{check, generate, sha256_hex, Class, Report, Request, Vectors};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::Serialize;

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs `f` with the GIL released, on `threads` worker threads (`None`: rayon's pool of
/// every core), as `--threads` does for the CLI.
fn on_threads<T: Send>(
    py: Python<'_>,
    threads: Option<usize>,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let pool = match threads {
        None => None,
        Some(t) => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(crate::thread_count(Some(t))?)
                .build()
                .map_err(|e| value_error(format!("cannot start worker threads: {e}")))?,
        ),
    };
    Ok(py.detach(|| match pool {
        Some(p) => p.install(f),
        None => f(),
    }))
}

/// Test cases of one instruction with the model's answers (`gpucvt::vectors::Vectors`).
#[pyclass(module = "gpucvt._gpucvt", frozen, name = "Vectors")]
pub struct PyVectors {
    v: Vectors,
}

/// Builds the vectors `gpucvt vectors INSTRUCTION` writes for the same options.
#[pyfunction]
#[pyo3(signature = (instruction, target=None, ptx_version=None, cr0=None, semantics=None, tile_version=None, level=1, seed=0, count=None, threads=None))]
#[allow(clippy::too_many_arguments)]
pub fn vectors(
    py: Python<'_>,
    instruction: &str,
    target: Option<&str>,
    ptx_version: Option<&str>,
    cr0: Option<&str>,
    semantics: Option<&str>,
    tile_version: Option<&str>,
    level: u8,
    seed: u64,
    count: Option<u64>,
    threads: Option<usize>,
) -> PyResult<PyVectors> {
    let opts = options(target, ptx_version, cr0, semantics, tile_version)?;
    let req = Request {
        instruction: instruction.to_string(),
        options: opts,
        level,
        seed,
        count,
    };
    let v = on_threads(py, threads, || generate(&req))?
        .map_err(|e| py_error(py, e, instruction, &opts))?;
    Ok(PyVectors { v })
}

/// One disagreement, as `conform --json` reports it.
#[derive(Serialize)]
struct DisagreementJson<'a> {
    case: u64,
    input: &'a str,
    expected: &'a str,
    got: &'a str,
    class: &'static str,
    lane: Option<usize>,
    detail: &'a str,
}

#[derive(Serialize)]
struct RbitsJson<'a> {
    rule: &'a str,
    model: &'a str,
    explains: u64,
    cases: u64,
}

/// The report, with the fields of `conform --json` and its text.
#[derive(Serialize)]
struct ReportJson<'a> {
    instruction: &'a str,
    cases: u64,
    agree: u64,
    disagree: u64,
    /// Every class in report order, with its count.
    classes: Vec<(&'static str, u64)>,
    allowed: Vec<&'static str>,
    disallowed: u64,
    rbits: Option<RbitsJson<'a>>,
    disagreements: Vec<DisagreementJson<'a>>,
    text: String,
}

fn report_json(r: &Report, allowed: &[Class]) -> PyResult<String> {
    let json = ReportJson {
        instruction: &r.instruction,
        cases: r.cases,
        agree: r.agree,
        disagree: r.disagree(),
        classes: r.classes.iter().map(|(c, n)| (c.name(), *n)).collect(),
        allowed: allowed.iter().map(|c| c.name()).collect(),
        disallowed: r.disallowed(allowed),
        rbits: r.rbits.as_ref().map(|x| RbitsJson {
            rule: &x.rule,
            model: &x.model,
            explains: x.explains,
            cases: x.cases,
        }),
        disagreements: r
            .shown
            .iter()
            .map(|d| DisagreementJson {
                case: d.case,
                input: &d.input,
                expected: &d.expected,
                got: &d.got,
                class: d.class.name(),
                lane: d.lane,
                detail: &d.detail,
            })
            .collect(),
        text: r.to_text(),
    };
    serde_json::to_string(&json).map_err(value_error)
}

/// The classes `allow` names, or `ValueError` naming the classes there are.
fn classes(names: &[String]) -> PyResult<Vec<Class>> {
    names
        .iter()
        .map(|n| {
            Class::from_name(n).ok_or_else(|| {
                let all: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
                value_error(format!(
                    "unknown class {n:?} in allow; the classes are {}",
                    all.join(", ")
                ))
            })
        })
        .collect()
}

/// Every class of disagreement: `(name, description)`, in report order.
#[pyfunction]
pub fn disagreement_classes() -> Vec<(&'static str, &'static str)> {
    Class::ALL
        .iter()
        .map(|c| (c.name(), c.description()))
        .collect()
}

/// One source operand word: `(name, bits, format or None, lanes)`.
type OperandTuple = (String, u32, Option<&'static str>, u32);

#[pymethods]
impl PyVectors {
    /// The instruction's canonical spelling.
    #[getter]
    fn spelling(&self) -> String {
        self.v.instr.spelling()
    }

    /// `ptx`, `visa` or `tile`.
    #[getter]
    fn dialect(&self) -> &'static str {
        gpucvt::vectors::dialect(&self.v.instr)
    }

    /// The number of cases.
    #[getter]
    fn cases(&self) -> usize {
        self.v.cases()
    }

    /// The result's width in bits.
    #[getter]
    fn result_bits(&self) -> u32 {
        self.v.instr.result_bits()
    }

    /// The width of one answer element: a Tile IR op's destination element, otherwise the
    /// whole result.
    #[getter]
    fn element_bits(&self) -> u32 {
        match &self.v.instr {
            Instr::Tile(t) => t.op.dst.value.elem.bits(),
            i => i.result_bits(),
        }
    }

    /// 64-bit words per answer.
    #[getter]
    fn answer_words(&self) -> usize {
        self.v.answer_words
    }

    /// The operand words of each case: `(name, bits, format or None, lanes)`, in the order
    /// of an `eval --batch` input line.
    fn operands(&self) -> Vec<OperandTuple> {
        self.v
            .operands
            .iter()
            .map(|o| (o.name.clone(), o.bits, o.format.map(|f| f.name), o.lanes))
            .collect()
    }

    /// The shape of a Tile IR op's tile (`None` for other dialects).
    fn tile_shape(&self) -> Option<Vec<u64>> {
        match &self.v.instr {
            Instr::Tile(t) => Some(t.op.src.value.shape.clone()),
            _ => None,
        }
    }

    /// The operand words, `cases × operands` `uint64`.
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let w = self.v.operands.len();
        let a = PyArray1::from_slice(py, &self.v.inputs).reshape([self.v.cases(), w])?;
        Ok(a.into_any())
    }

    /// The model's answers, `cases × answer_words` `uint64` (the result's 64-bit pieces,
    /// least significant first; one word per element for Tile IR).
    fn expected<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = PyArray1::from_slice(py, &self.v.expected)
            .reshape([self.v.cases(), self.v.answer_words])?;
        Ok(a.into_any())
    }

    /// Case `i` as a line of the text file: `INPUT_LINE -> EXPECTED`.
    fn line(&self, i: usize) -> PyResult<String> {
        if i >= self.v.cases() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "case {i} of {} cases",
                self.v.cases()
            )));
        }
        Ok(self.v.line(i))
    }

    /// The manifest `gpucvt vectors -o FILE.txt` writes beside the text file of these cases
    /// (JSON text; `sha256` is that file's), without `file` and `kind`.
    fn manifest(&self, py: Python<'_>) -> PyResult<String> {
        let v = &self.v;
        let m = py.detach(|| {
            let (text, cases) = v.to_text();
            v.manifest("", "text", sha256_hex(text.as_bytes()), cases)
        });
        let mut json = serde_json::to_value(&m).map_err(value_error)?;
        if let Some(o) = json.as_object_mut() {
            o.remove("file");
            o.remove("kind");
        }
        serde_json::to_string(&json).map_err(value_error)
    }

    /// Checks answers (`cases × answer_words` `uint64`, as [`PyVectors::expected`]) and
    /// classifies each disagreement: the report as JSON text, with the first `show`
    /// disagreements and the count outside the classes `allow` names.
    #[pyo3(signature = (answers, show=10, allow=Vec::new(), threads=None))]
    fn check(
        &self,
        py: Python<'_>,
        answers: PyReadonlyArray2<'_, u64>,
        show: usize,
        allow: Vec<String>,
        threads: Option<usize>,
    ) -> PyResult<String> {
        let allowed = classes(&allow)?;
        let (n, w) = (self.v.cases(), self.v.answer_words);
        let shape = answers.shape();
        if shape != [n, w] {
            return Err(value_error(format!(
                "answers of shape {shape:?} for {n} cases of {w} word(s) each"
            )));
        }
        let words = answers.as_slice().map_err(value_error)?;
        let v = &self.v;
        let report = on_threads(py, threads, || {
            let rows: Vec<Result<Vec<u64>, String>> =
                words.chunks(w.max(1)).map(|c| Ok(c.to_vec())).collect();
            check(v, &rows, show)
        })?
        .map_err(value_error)?;
        report_json(&report, &allowed)
    }
}

/// Registers the class and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyVectors>()?;
    m.add_function(wrap_pyfunction!(vectors, m)?)?;
    m.add_function(wrap_pyfunction!(disagreement_classes, m)?)?;
    Ok(())
}
