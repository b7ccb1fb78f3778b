//! `gpucvt sweep INSTR --out FILE | --hash`: a form's result for every input, in input
//! order, written out or hashed.

use crate::args::{TargetArg, Threads};
use crate::common::{fail, CliError, Done};
use crate::output::to_json;
use crate::verify::{bar, form_of, pool};
use gpucvt::ptx::slices::verify::{self, Inputs};
use serde::Serialize;
use std::io::Write;
use std::time::Instant;

/// Options of `gpucvt sweep`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PTX `cvt` form, operands optional (`cvt.rn.f16.f32`).
    #[arg(value_name = "INSTRUCTION")]
    pub instruction: String,
    /// Write the results here: raw little-endian words (1, 2, 4 or 8 bytes each), in
    /// input order.
    #[arg(long, value_name = "FILE", required_unless_present = "hash")]
    pub out: Option<std::path::PathBuf>,
    /// Print the XXH3-64 hash of those bytes (what `xxhsum -H3` prints for the file).
    #[arg(long)]
    pub hash: bool,
    /// Seed of the `rbits` operands of `.rs` forms.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub threads: Threads,
    #[command(flatten)]
    pub target: TargetArg,
    /// Print a JSON object (form, results, bytes per result, file, hash) instead of the
    /// lines.
    #[arg(long)]
    pub json: bool,
}

/// `sweep --json`.
#[derive(Serialize)]
struct SweepJson {
    form: String,
    results: u64,
    result_bytes: usize,
    out: Option<String>,
    hash: Option<String>,
    seconds: f64,
}

/// Runs `gpucvt sweep`.
pub fn run(a: &Args) -> Result<Done, CliError> {
    let form = form_of(&a.instruction, &a.target)?;
    let pool = pool(&a.threads)?;
    let kernel = verify::sweep_kernel(&form).map_err(|e| CliError(e.to_string()))?;
    let planned = verify::Units::new(&kernel, Inputs::default()).instructions();
    let mut hasher = a.hash.then(twox_hash::XxHash3_64::new);
    // The results go to a temporary file beside the output, renamed at the end: a failed
    // sweep leaves nothing behind.
    let out_path = match &a.out {
        Some(p) => Some(gpucvt_tensor::resolve_output(p).map_err(|e| CliError(e.to_string()))?),
        None => None,
    };
    let mut registered = None;
    let mut file = match &out_path {
        Some(p) => {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => std::path::Path::new("."),
            };
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut builder = tempfile::Builder::new();
            // The target's name is in the temporary's, so that a leftover says what it was.
            let prefix = format!(".{name}.gpucvt-sweep-");
            builder.prefix(&prefix);
            // A temporary file is private (0600); the output gets the usual mode.
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
            let tmp = builder
                .tempfile_in(dir)
                .map_err(|e| CliError(format!("cannot write {}: {e}", p.display())))?;
            gpucvt_tensor::register_temporary(tmp.path());
            registered = Some(Unregister(tmp.path().to_path_buf()));
            Some(std::io::BufWriter::with_capacity(1 << 20, tmp))
        }
        None => None,
    };
    let bar = bar(planned, "sweeping", true);
    let start = Instant::now();
    let result = pool.install(|| {
        verify::sweep(
            &form,
            a.seed,
            &mut |bytes| {
                if let Some(h) = hasher.as_mut() {
                    std::hash::Hasher::write(h, bytes);
                }
                if let Some(f) = file.as_mut() {
                    f.write_all(bytes)?;
                }
                Ok(())
            },
            &|n| {
                if let Some(b) = &bar {
                    b.inc(n);
                }
            },
        )
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let n = match result {
        Ok(n) => n,
        Err(gpucvt::Error::Io { message, .. }) => {
            return fail(format!("cannot write the output: {message}"))
        }
        Err(e) => return fail(e.to_string()),
    };
    let mut out = String::new();
    let _registered = registered;
    let wrote = file.is_some();
    if let (Some(f), Some(path)) = (file, &out_path) {
        let tmp = f
            .into_inner()
            .map_err(|e| CliError(format!("cannot write {}: {}", path.display(), e.error())))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
        tmp.persist(path)
            .map_err(|e| CliError(format!("cannot write {}: {}", path.display(), e.error)))?;
        out.push_str(&format!(
            "wrote {} results ({} bytes each) to {}\n",
            n,
            verify::result_bytes(&kernel),
            path.display()
        ));
    }
    let hash = hasher.map(|h| format!("{:016x}", std::hash::Hasher::finish(&h)));
    if a.json {
        let j = SweepJson {
            form: form.spelling(),
            results: n,
            result_bytes: verify::result_bytes(&kernel),
            out: a
                .out
                .as_ref()
                .filter(|_| wrote)
                .map(|p| p.display().to_string()),
            hash,
            seconds: start.elapsed().as_secs_f64(),
        };
        return Ok(Done::ok(to_json(&j)?));
    }
    if let Some(h) = hash {
        out.push_str(&h);
        out.push('\n');
    }
    let err = format!(
        "{}: {} results in {:.2} s\n",
        form.spelling(),
        n,
        start.elapsed().as_secs_f64()
    );
    Ok(Done { out, err, code: 0 })
}

/// Unregisters a temporary file from the signal clean-up when dropped (renamed or removed).
struct Unregister(std::path::PathBuf);

impl Drop for Unregister {
    fn drop(&mut self) {
        gpucvt_tensor::unregister_temporary(&self.0);
    }
}
