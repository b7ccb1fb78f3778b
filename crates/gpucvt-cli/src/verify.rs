//! `gpucvt verify INSTR`: a form's fast slice kernel against the exact model over every
//! input (and the form, thread pool and progress bar that `gpucvt sweep` shares).

use crate::args::{TargetArg, Threads};
use crate::common::{fail, CliError, Done};
use crate::output::{progress_bar, to_json, Counting};
use gpucvt::instr::{Instr, Options};
use gpucvt::kernels::{instruction_set, Strategy};
use gpucvt::ptx::slices::verify::{self, Inputs, Report};
use gpucvt::ptx::slices::Path;
use gpucvt::ptx::CvtForm;
use serde::Serialize;
use std::io::Write;
use std::time::Instant;

/// Options of `gpucvt verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The PTX `cvt` form, operands optional (`cvt.rn.satfinite.e4m3x2.f32`).
    #[arg(value_name = "INSTRUCTION")]
    pub instruction: String,
    /// For sources wider than 32 bits: random inputs after the boundary-dense set.
    #[arg(long, value_name = "N", default_value_t = 1 << 24, value_parser = clap::value_parser!(u64).range(..=1 << 34))]
    pub sample: u64,
    /// Seed of the random inputs and of the `rbits` operands of `.rs` forms.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub threads: Threads,
    /// Disagreements shown.
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u16).range(..=1000))]
    pub examples: u16,
    #[command(flatten)]
    pub target: TargetArg,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Parses a PTX form given on the command line.
pub fn form_of(text: &str, target: &TargetArg) -> Result<CvtForm, CliError> {
    let opts = Options {
        target: target.ptx("verify and sweep")?,
        ..Default::default()
    };
    match Instr::parse(text, &opts)? {
        Instr::Ptx(p) => Ok(p.form),
        _ => fail(format!(
            "{text:?}: verify and sweep take a PTX cvt form (vISA and Tile IR are evaluated with `gpucvt eval`)"
        )),
    }
}

/// The worker pool of `--threads`, by the rule every front end shares (at most a few per
/// core; a note on stderr when fewer than asked for are used).
pub fn pool(threads: &Threads) -> Result<rayon::ThreadPool, CliError> {
    let t = gpucvt::kernels::threads::Threads::new(threads.count());
    if let Some(n) = t.note() {
        let _ = writeln!(std::io::stderr(), "note: {n}");
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(t.used)
        .build()
        .map_err(|e| CliError(format!("cannot start worker threads: {e}")))
}

/// A progress bar for the long runs only.
pub fn bar(len: u64, verb: &str, show: bool) -> Option<indicatif::ProgressBar> {
    if !show || len < 1 << 22 {
        return None;
    }
    progress_bar(verb, len, Counting::Items(""))
}

fn path_name(p: Path) -> String {
    match p {
        Path::Lanes(s) => format!("{s:?}").to_lowercase(),
        Path::Exact => "exact".into(),
    }
}

#[derive(Serialize)]
struct JsonReport {
    form: String,
    kernel: String,
    isa: &'static str,
    exhaustive: bool,
    instructions: u64,
    inputs: u64,
    mismatches: u64,
    seconds: f64,
    examples: Vec<JsonMismatch>,
}

#[derive(Serialize)]
struct JsonMismatch {
    index: u64,
    operands: Vec<String>,
    fast: String,
    exact: String,
}

/// Runs `gpucvt verify`: exit code 0 when every result agrees, 1 when some differ.
pub fn run_verify(a: &VerifyArgs) -> Result<Done, CliError> {
    let form = form_of(&a.instruction, &a.target)?;
    let pool = pool(&a.threads)?;
    let inputs = Inputs {
        sample: a.sample,
        seed: a.seed,
    };
    let kernel = verify::sweep_kernel(&form).map_err(|e| CliError(e.to_string()))?;
    let planned = verify::Units::new(&kernel, inputs).instructions();
    let bar = bar(planned, "verifying", !a.json);
    let start = Instant::now();
    let report = pool
        .install(|| {
            verify::verify(&form, inputs, usize::from(a.examples), &|n| {
                if let Some(b) = &bar {
                    b.inc(n);
                }
            })
        })
        .map_err(|e| CliError(e.to_string()))?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let code = u8::from(report.mismatches > 0);
    let out = if a.json {
        to_json(&json(&report, seconds))?
    } else {
        text(&report, seconds)
    };
    Ok(Done {
        out,
        err: String::new(),
        code,
    })
}

fn hex(v: u64, bits: u32) -> String {
    format!("0x{:0w$x}", v, w = bits.div_ceil(4) as usize)
}

fn json(r: &Report, seconds: f64) -> JsonReport {
    JsonReport {
        form: r.form.clone(),
        kernel: path_name(r.path),
        isa: instruction_set().name(),
        exhaustive: r.exhaustive,
        instructions: r.instructions,
        inputs: r.inputs,
        mismatches: r.mismatches,
        seconds,
        examples: r
            .examples
            .iter()
            .map(|m| JsonMismatch {
                index: m.index,
                operands: m.operands.iter().map(|&o| format!("{o:#x}")).collect(),
                fast: format!("{:#x}", m.fast),
                exact: format!("{:#x}", m.exact),
            })
            .collect(),
    }
}

fn text(r: &Report, seconds: f64) -> String {
    let scope = if r.exhaustive {
        "every input"
    } else {
        "a boundary-dense and random sample"
    };
    // The instruction set the `f32` kernels ran with (`GPUCVT_ISA` lowers it); tables and
    // the exact core are the same code on every one.
    let isa = match r.path {
        Path::Lanes(Strategy::F32Small | Strategy::F32Ue8m0 | Strategy::F32Int) => {
            format!(" ({})", instruction_set())
        }
        _ => String::new(),
    };
    let mut s = format!(
        "{}: {} kernel{isa} against the exact model over {scope}: {} inputs, {} instructions, {:.1} s\n",
        r.form,
        path_name(r.path),
        r.inputs,
        r.instructions,
        seconds
    );
    if r.mismatches == 0 {
        s.push_str("all results agree\n");
    } else {
        s.push_str(&format!(
            "{} instructions DISAGREE; the first {}:\n",
            r.mismatches,
            r.examples.len()
        ));
        for m in &r.examples {
            let ops: Vec<String> = m.operands.iter().map(|&o| format!("{o:#x}")).collect();
            s.push_str(&format!(
                "  #{}: {} -> fast {} exact {}\n",
                m.index,
                ops.join(" "),
                hex(m.fast, 1),
                hex(m.exact, 1)
            ));
        }
    }
    s
}
