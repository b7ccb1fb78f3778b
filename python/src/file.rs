//! `gpucvt.convert_file`: whole tensor files through one conversion, as `gpucvt convert`.
//!
//! The options are the CLI's, checked and built by the same library function
//! (`gpucvt_tensor::ConvertRequest::build`), so the messages are the CLI's; the summary is
//! returned as the JSON text `gpucvt convert --json` prints.

use gpucvt::ptx;
use gpucvt_tensor::{Built, ConvertRequest, Error, ScalingRequest};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

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
/// `dry_run`, the plan) as JSON text. The GIL is released while converting.
#[pyfunction]
#[pyo3(signature = (src, dst, to=None, mode="rn", satfinite=false, sat=false, relu=false, ftz=false, pzo=false, rbits_width=None, cvt=None, from_=None, tensors=Vec::new(), exclude=Vec::new(), strict=false, threads=0, seed=0, block=None, scale="ue8m0", scale_method="ocp", dry_run=false))]
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
    block: Option<u64>,
    scale: &str,
    scale_method: &str,
    dry_run: bool,
) -> PyResult<String> {
    let bad = |m: String| PyValueError::new_err(m);
    // What clap checks for the CLI.
    let mode = ptx::RoundMod::ALL
        .into_iter()
        .find(|r| r.name().eq_ignore_ascii_case(mode))
        .ok_or_else(|| {
            let names: Vec<&str> = ptx::RoundMod::ALL.iter().map(|r| r.name()).collect();
            bad(format!(
                "invalid value {mode:?} for mode; accepted: {}",
                names.join(", ")
            ))
        })?;
    match (&to, &cvt) {
        (None, None) => {
            return Err(bad(
                "say what to convert to: to=FMT [mode=..., satfinite=...] or cvt='cvt.…'"
                    .to_string(),
            ))
        }
        (Some(_), Some(_)) => return Err(bad("give to= or cvt=, not both".to_string())),
        _ => {}
    }
    if cvt.is_some() && (satfinite || sat || relu || ftz || pzo || rbits_width.is_some()) {
        return Err(bad(
            "cvt= is a whole PTX form: its modifiers are in it (satfinite, sat, relu, ftz, pzo \
             and rbits_width go with to=)"
                .to_string(),
        ));
    }
    if let Some(w) = rbits_width {
        if !(1..=32).contains(&w) {
            return Err(bad(format!("rbits_width must be 1 to 32, not {w}")));
        }
    }
    // (The scale options mean something only with a block.)
    let sreq = ScalingRequest {
        block: block.map(|b| b.to_string()),
        scale: block.map(|_| scale.to_string()),
        rule: block.map(|_| scale_method.to_string()),
        ..ScalingRequest::default()
    };
    let block = sreq.build().map_err(|e| bad(e.to_string()))?;
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
    };
    let Built { options, label } = request.build().map_err(|e| bad(e.to_string()))?;
    let input = src.display().to_string();
    let output = dst.display().to_string();
    let to_py = |e: Error| match e {
        Error::Io { .. } => PyOSError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    };
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
    let summary = py
        .detach(|| gpucvt_tensor::convert_file(&src, &dst, &options, &mut |_, _| {}))
        .map_err(to_py)?;
    json(serde_json::to_string(&Json {
        input,
        output,
        conversion: &label,
        summary: &summary,
    }))
}
