//! `gpucvt.convert_file` and `gpucvt.dequantize_file`: whole tensor files, as `gpucvt convert` (and `--dequantize`).
//!
//! The options are the CLI's, checked and built by the same library function
//! (`gpucvt_tensor::ConvertRequest::build`), with messages that name the options as the
//! keywords do (`scale_rule`, `recipe=nvfp4`); the summary is
//! returned as the JSON text `gpucvt convert --json` prints.

use gpucvt_tensor::options::Opt;
use gpucvt_tensor::{Built, ConvertRequest, Error, ScalingRequest};
use pyo3::exceptions::{PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// How often a running conversion lets Python run its signal handlers.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work` on a thread of its own while this thread, taking the GIL every
/// [`SIGNAL_POLL`], runs Python's signal handlers. A handler that raises (Ctrl-C's
/// `KeyboardInterrupt`; `gpucvt._file` makes SIGTERM and SIGHUP raise too) sets `cancel`,
/// which the library polls between chunks: the work stops, its temporaries removed and
/// nothing written, and the handler's exception is raised.
fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|s| {
        let (tx, mut rx) = channel::<()>();
        let worker = s.spawn(move || {
            let r = work();
            let _ = tx.send(());
            r
        });
        let mut raised = None;
        loop {
            // (A receiver cannot be shared, so it goes to the GIL-free closure and back.)
            let (waited, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
            rx = back;
            if !matches!(waited, Err(RecvTimeoutError::Timeout)) {
                break;
            }
            if let Err(e) = py.check_signals() {
                cancel.store(true, Ordering::Relaxed);
                raised = Some(e);
                break;
            }
        }
        let r = py
            .detach(|| worker.join())
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match raised {
            Some(e) => Err(e),
            None => Ok(r),
        }
    })
}

/// The library's error as a Python exception, with the keyword that lifts a refusal.
fn to_py(e: Error) -> PyErr {
    match e {
        Error::Io { .. } => PyOSError::new_err(e.to_string()),
        Error::ReadOnly { .. } => PyPermissionError::new_err(format!("{e} (force=True)")),
        _ => PyValueError::new_err(e.to_string()),
    }
}

#[derive(Serialize)]
struct Json<'a> {
    input: String,
    output: String,
    conversion: &'a str,
    #[serde(flatten)]
    summary: &'a gpucvt_tensor::Summary,
}

#[derive(Serialize)]
struct PlanJson<'a> {
    input: String,
    output: String,
    conversion: &'a str,
    dry_run: bool,
    #[serde(flatten)]
    plan: &'a gpucvt_tensor::FilePlan,
}

/// `gpucvt convert INPUT -o OUTPUT [options]`; returns the `--json` summary (or, with
/// `dry_run`, the plan) as JSON text. The GIL is released while converting, and taken back
/// every 50 ms to run signal handlers: one that raises stops the conversion
/// ([`interruptible`]).
#[pyfunction]
#[pyo3(signature = (src, dst, to=None, mode="rn", satfinite=false, sat=false, relu=false, ftz=false, pzo=false, rbits_width=None, cvt=None, from_=None, tensors=Vec::new(), exclude=Vec::new(), strict=false, threads=0, seed=0, block=None, scale=None, scale_rule=None, dry_run=false, recipe=None, axis=None, scale_layout=None, scale_2=false, force=false, all=false, layout=None))]
#[allow(clippy::too_many_arguments)]
pub fn convert_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    to: Option<String>,
    mode: &str,
    satfinite: bool,
    sat: bool,
    relu: bool,
    ftz: bool,
    pzo: bool,
    rbits_width: Option<i64>,
    cvt: Option<String>,
    from_: Option<String>,
    tensors: Vec<String>,
    exclude: Vec<String>,
    strict: bool,
    threads: usize,
    seed: u64,
    block: Option<String>,
    scale: Option<String>,
    scale_rule: Option<String>,
    dry_run: bool,
    recipe: Option<String>,
    axis: Option<i64>,
    scale_layout: Option<String>,
    scale_2: bool,
    force: bool,
    all: bool,
    layout: Option<String>,
) -> PyResult<String> {
    let request = ConvertRequest {
        to,
        mode: crate::round_mod(mode)?,
        satfinite,
        sat,
        relu,
        ftz,
        pzo,
        rbits_width,
        cvt,
        from: from_,
        tensors,
        all,
        exclude,
        strict,
        threads,
        seed,
        scaling: ScalingRequest {
            recipe,
            block,
            axis,
            scale,
            rule: scale_rule,
            layout: scale_layout,
            second_level: scale_2,
        },
        force,
        layout,
    };
    let Built { mut options, label } = request.build().map_err(to_py)?;
    let label = label.to_string();
    let cancel = Arc::new(AtomicBool::new(false));
    options.cancel = Some(cancel.clone());
    let input = src.display().to_string();
    let output = dst.display().to_string();
    let json = |r: Result<String, serde_json::Error>| {
        r.map_err(|e| PyValueError::new_err(format!("cannot write the summary: {e}")))
    };
    if dry_run {
        let plan = py
            .detach(|| gpucvt_tensor::plan_file(&src, &dst, &options))
            .map_err(to_py)?;
        return json(serde_json::to_string(&PlanJson {
            input,
            output,
            conversion: &label,
            dry_run: true,
            plan: &plan,
        }));
    }
    let summary = interruptible(py, &cancel, || {
        gpucvt_tensor::convert_file(&src, &dst, &options, &mut |_, _| {})
    })?
    .map_err(to_py)?;
    json(serde_json::to_string(&Json {
        input,
        output,
        conversion: &label,
        summary: &summary,
    }))
}

/// `gpucvt convert INPUT -o OUTPUT --dequantize [--to TO] [block options]`; returns the
/// `--json` summary as JSON text. The GIL is released while converting, and signal handlers
/// run as in [`convert_file`].
#[pyfunction]
#[pyo3(signature = (src, dst, to="f32", block=None, axis=None, scale=None, scale_rule=None, scale_layout=None, scale_2=false, threads=0, from_=None, recipe=None, force=false))]
#[allow(clippy::too_many_arguments)]
pub fn dequantize_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    to: &str,
    block: Option<String>,
    axis: Option<i64>,
    scale: Option<String>,
    scale_rule: Option<String>,
    scale_layout: Option<String>,
    scale_2: bool,
    threads: usize,
    from_: Option<String>,
    recipe: Option<String>,
    force: bool,
) -> PyResult<String> {
    let bad = |m: String| PyValueError::new_err(m);
    let to = *gpucvt_tensor::lookup_format(to, Opt::To).map_err(|e| bad(e.to_string()))?;
    let sreq = ScalingRequest {
        recipe,
        block,
        axis,
        scale,
        rule: scale_rule,
        layout: scale_layout,
        second_level: scale_2,
    };
    let mut opts = sreq
        .dequantize(to, from_.as_deref(), threads)
        .map_err(|e| bad(e.to_string()))?;
    let cancel = Arc::new(AtomicBool::new(false));
    opts.force = force;
    opts.cancel = Some(cancel.clone());
    let label = format!("dequantize to {}", to.name);
    let summary = interruptible(py, &cancel, || {
        gpucvt_tensor::dequantize_file(&src, &dst, &opts, &mut |_, _| {})
    })?
    .map_err(to_py)?;
    serde_json::to_string(&Json {
        input: src.display().to_string(),
        output: dst.display().to_string(),
        conversion: &label,
        summary: &summary,
    })
    .map_err(|e| PyValueError::new_err(format!("cannot write the summary: {e}")))
}
