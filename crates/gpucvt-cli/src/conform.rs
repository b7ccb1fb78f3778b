//! `gpucvt conform FILE --impl CMD | --answers FILE`: another implementation's answers to a
//! vectors file, checked and their disagreements classified (`gpucvt::vectors::check`).
//!
//! With `--impl`, the program runs under `sh -c` and gets the input lines on stdin; it
//! must print one answer line per input line. One thread writes while the main thread
//! reads, so a program that answers as it goes never blocks on a full pipe.

use crate::common::{fail, CliError, Done};
use crate::output::to_json;
use gpucvt::vectors::{check_lines, read_text, Class, Report};
use serde::Serialize;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Options of `gpucvt conform`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").args(["implementation", "answers"]).required(true)))]
pub struct Args {
    /// A text vectors file written by `gpucvt vectors`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The implementation: a shell command that reads `eval --batch` input lines on stdin
    /// and prints one answer line (`0x…`) per line on stdout.
    #[arg(long = "impl", value_name = "CMD")]
    pub implementation: Option<String>,
    /// The implementation's answers, one line per case, instead of running it.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Show the first N disagreements.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub show: usize,
    /// Classes of disagreement that do not fail the check (comma-separated: nan-encoding,
    /// saturation, sign-of-zero, subnormal, rounding, rbits, other).
    #[arg(long, value_name = "CLASSES", value_delimiter = ',', value_parser = class)]
    pub allow: Vec<Class>,
    /// Print the report as JSON (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

fn class(text: &str) -> Result<Class, String> {
    Class::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
        format!(
            "unknown class {text:?}; the classes are {}",
            names.join(", ")
        )
    })
}

/// `conform --json`.
#[derive(Serialize)]
struct ReportJson {
    file: String,
    instruction: String,
    cases: u64,
    agree: u64,
    disagree: u64,
    classes: std::collections::BTreeMap<&'static str, u64>,
    allowed: Vec<&'static str>,
    disallowed: u64,
    rbits: Option<RbitsJson>,
    disagreements: Vec<DisagreementJson>,
    ok: bool,
}

#[derive(Serialize)]
struct RbitsJson {
    rule: String,
    model: String,
    explains: u64,
    cases: u64,
}

#[derive(Serialize)]
struct DisagreementJson {
    case: u64,
    input: String,
    expected: String,
    got: String,
    class: &'static str,
    lane: Option<usize>,
    detail: String,
}

/// Runs `gpucvt conform`.
pub fn run(a: &Args) -> Result<Done, CliError> {
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| CliError(format!("cannot read {}: {e}", a.file.display())))?;
    let (v, lines) =
        read_text(&text).map_err(|e| CliError(format!("{}: {e}", a.file.display())))?;
    let answers = match (&a.implementation, &a.answers) {
        (Some(cmd), _) => run_impl(cmd, &lines)?,
        (None, Some(p)) => std::fs::read_to_string(p)
            .map_err(|e| CliError(format!("cannot read {}: {e}", p.display())))?
            .lines()
            .map(str::to_string)
            .collect(),
        (None, None) => return fail("give --impl CMD or --answers FILE"),
    };
    if answers.len() != lines.len() {
        return fail(format!(
            "{} answers for the {} cases of {}: the implementation must print one line per input line",
            answers.len(),
            lines.len(),
            a.file.display()
        ));
    }
    let report = check_lines(&v, &answers, a.show)?;
    let disallowed = report.disallowed(&a.allow);
    let code = u8::from(disallowed > 0);
    if a.json {
        return Ok(Done {
            out: to_json(&json(a, &report, disallowed))?,
            err: String::new(),
            code,
        });
    }
    let mut out = report.to_text();
    if disallowed > 0 {
        let allowed: Vec<&str> = a.allow.iter().map(|c| c.name()).collect();
        out.push_str(&format!(
            "FAIL: {disallowed} disagreement(s) outside the allowed classes ({})\n",
            if allowed.is_empty() {
                "none".to_string()
            } else {
                allowed.join(", ")
            }
        ));
    } else if report.disagree() > 0 {
        out.push_str("ok: every disagreement is in an allowed class\n");
    }
    Ok(Done {
        out,
        err: String::new(),
        code,
    })
}

fn json(a: &Args, r: &Report, disallowed: u64) -> ReportJson {
    ReportJson {
        file: a.file.display().to_string(),
        instruction: r.instruction.clone(),
        cases: r.cases,
        agree: r.agree,
        disagree: r.disagree(),
        classes: r.classes.iter().map(|(c, n)| (c.name(), *n)).collect(),
        allowed: a.allow.iter().map(|c| c.name()).collect(),
        disallowed,
        rbits: r.rbits.as_ref().map(|x| RbitsJson {
            rule: x.rule.clone(),
            model: x.model.clone(),
            explains: x.explains,
            cases: x.cases,
        }),
        disagreements: r
            .shown
            .iter()
            .map(|d| DisagreementJson {
                case: d.case,
                input: d.input.clone(),
                expected: d.expected.clone(),
                got: d.got.clone(),
                class: d.class.name(),
                lane: d.lane,
                detail: d.detail.clone(),
            })
            .collect(),
        ok: disallowed == 0,
    }
}

/// Runs the implementation on the input lines: a writer thread feeds stdin while this
/// thread reads stdout, so neither pipe fills up with the other side waiting.
fn run_impl(cmd: &str, lines: &[String]) -> Result<Vec<String>, CliError> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| CliError(format!("cannot run {cmd:?}: {e}")))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| CliError("internal error: no stdin pipe".into()))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| CliError("internal error: no stdout pipe".into()))?;
    let answers = std::thread::scope(|s| {
        let writer = s.spawn(move || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut stdin);
            for l in lines {
                w.write_all(l.as_bytes())?;
                w.write_all(b"\n")?;
            }
            w.flush()
            // stdin is closed when the thread ends: the program sees the end of its input.
        });
        let mut answers = Vec::with_capacity(lines.len());
        let mut r = BufReader::with_capacity(1 << 16, stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match r.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => answers.push(line.trim_end_matches(['\n', '\r']).to_string()),
                Err(e) => return Err(CliError(format!("cannot read the answers of {cmd:?}: {e}"))),
            }
        }
        // A program that stops reading early closes the pipe: that is its answer count's
        // problem, reported below, not a write error.
        let _ = writer.join();
        Ok(answers)
    })?;
    let status = child
        .wait()
        .map_err(|e| CliError(format!("cannot wait for {cmd:?}: {e}")))?;
    if !status.success() {
        return fail(format!(
            "{cmd:?} failed ({status}) after {} answers",
            answers.len()
        ));
    }
    Ok(answers)
}
