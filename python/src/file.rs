//! `gpucvt.convert_file` and `gpucvt.dequantize_file`: whole tensor files, as `gpucvt convert` (and `--dequantize`).
//!
//! The options are the CLI's, checked and built by the same library function
//! (`gpucvt_tensor::ConvertRequest::build`), so the messages are the CLI's; the summary is
//! returned as the JSON text `gpucvt convert --json` prints.

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
#[pyo3(signature = (src, dst, to=None, mode="rn", satfinite=false, sat=false, relu=false, ftz=false, pzo=false, rbits_width=None, cvt=None, from_=None, tensors=Vec::new(), exclude=Vec::new(), strict=false, threads=0, seed=0, block=None, scale=None, scale_rule=None, dry_run=false, recipe=None, axis=None, scale_layout=None, scale_2=false, force=false))]
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
    rbits_width: Option<u32>,
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
) -> PyResult<String> {
    let bad = |m: String| PyValueError::new_err(m);
    // What clap checks for the CLI.
    let mode = crate::round_mod(mode)?;
    // The block-scaling options, read as the CLI reads them.
    let sreq = ScalingRequest {
        recipe,
        block,
        axis,
        scale,
        rule: scale_rule,
        layout: scale_layout,
        second_level: scale_2,
    };
    let recipe = sreq.recipe().map_err(|e| bad(e.to_string()))?;
    let block = sreq.build().map_err(|e| bad(e.to_string()))?;
    let to = match (recipe, to) {
        (Some(r), None) => Some(r.to.to_string()),
        (Some(r), Some(t)) => {
            let f = gpucvt_tensor::lookup_format(&t, "--to").map_err(|e| bad(e.to_string()))?;
            if f.name != r.to {
                return Err(bad(format!(
                    "recipe {} converts to {}, not {}: leave to= out with recipe=",
                    r.name, r.to, f.name
                )));
            }
            Some(t)
        }
        (None, t) => t,
    };
    match (&to, &cvt) {
        (None, None) => return Err(bad(
            "say what to convert to: to=FMT [mode=..., satfinite=...], cvt='cvt.…' or recipe=NAME"
                .to_string(),
        )),
        (Some(_), Some(_)) => {
            return Err(bad(
                "give one of to=, cvt= and recipe=, not several".to_string()
            ))
        }
        _ => {}
    }
    let moded = mode != gpucvt::ptx::RoundMod::Rn;
    if cvt.is_some() && (moded || satfinite || sat || relu || ftz || pzo || rbits_width.is_some()) {
        return Err(bad(
            "cvt= is a whole PTX form: its rounding and modifiers are in it (mode, satfinite, \
             sat, relu, ftz, pzo and rbits_width go with to=)"
                .to_string(),
        ));
    }
    if let Some(w) = rbits_width {
        if !(1..=32).contains(&w) {
            return Err(bad(format!("rbits_width must be 1 to 32, not {w}")));
        }
    }
    let satfinite = satfinite || recipe.is_some_and(|r| r.satfinite);
    let request = ConvertRequest {
        to,
        mode,
        satfinite,
        sat,
        relu,
        ftz,
        pzo,
        rbits_width,
        cvt,
        from: from_,
        tensors,
        exclude,
        strict,
        threads,
        seed,
        block,
        force,
    };
    let Built {
        mut options,
        mut label,
    } = request.build().map_err(|e| bad(e.to_string()))?;
    let cancel = Arc::new(AtomicBool::new(false));
    options.cancel = Some(cancel.clone());
    if let (Some(r), Some(x)) = (
        recipe,
        sreq.expansion(mode).map_err(|e| bad(e.to_string()))?,
    ) {
        label = format!("recipe {}: {x}", r.name);
    }
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
    let to = *gpucvt_tensor::lookup_format(to, "--to").map_err(|e| bad(e.to_string()))?;
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
