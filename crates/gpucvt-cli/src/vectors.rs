//! `gpucvt vectors FORM -o FILE` and `gpucvt vectors --suite --target T -o DIR`: test
//! vectors for other implementations (the cases are built by `gpucvt::vectors`), written as
//! text or `.npz`, each with a `.manifest.json` sidecar.

use crate::args::{PtxTarget, Threads, TileOptions};
use crate::common::{fail, CliError, Done};
use crate::output::to_json;
use crate::verify::pool;
use gpucvt::instr::Options;
use gpucvt::vectors::{generate, sha256_hex, Manifest, Request, Vectors};
use gpucvt::visa::cr0::Cr0;
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `gpucvt vectors`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The instruction without operands: a PTX form (`cvt.rn.satfinite.e4m3x2.f32`), a vISA
    /// move (`'mov.sat hf <- f'`) or a Tile IR op (`'ftof : tile<f32> -> tile<f16>'`).
    #[arg(value_name = "INSTRUCTION", required_unless_present = "suite")]
    pub instruction: Option<String>,
    /// Every form legal on --target, one file each in the directory -o, and a manifest.json
    /// listing them.
    #[arg(long, requires = "target", conflicts_with = "instruction")]
    pub suite: bool,
    /// The output: a file (text, or NumPy .npz when its name ends in .npz), or with --suite a
    /// directory. A manifest goes beside each file (FILE.manifest.json).
    #[arg(short = 'o', long = "out", value_name = "PATH")]
    pub out: PathBuf,
    /// With --suite: only the forms whose spelling contains TEXT (`e4m3`, `.rs.`).
    #[arg(long, value_name = "TEXT", requires = "suite")]
    pub only: Option<String>,
    /// With --suite: write each form as `npz` or `text`.
    #[arg(long, value_name = "KIND", default_value = "text", value_parser = ["text", "npz"])]
    pub kind: String,
    /// 1: the boundaries (every encoding for sources of at most 16 bits); 2: level 1 and
    /// --count seeded random cases.
    #[arg(long, value_name = "L", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub level: u8,
    /// The seed of level 2's random cases and rbits.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Random cases of level 2 (default 10000).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    #[command(flatten)]
    pub ptx: PtxTarget,
    /// vISA control register: a raw value (0x4C0), a preset (0, opencl) or a rounding mode
    /// name (rne, ru, rd, rtz).
    #[arg(long, value_name = "CR0", value_parser = Cr0::parse)]
    pub cr0: Option<Cr0>,
    #[command(flatten)]
    pub tile: TileOptions,
    #[command(flatten)]
    pub threads: Threads,
    /// Print what was written as JSON (the manifest, or the suite's manifest).
    #[arg(long)]
    pub json: bool,
}

/// The suite's `manifest.json`.
#[derive(Serialize)]
pub struct SuiteManifest {
    gpucvt_version: String,
    target: String,
    ptx_version: String,
    level: u8,
    seed: u64,
    count: u64,
    kind: String,
    files: Vec<SuiteFile>,
    skipped: Vec<Skipped>,
}

#[derive(Serialize)]
struct SuiteFile {
    instruction: String,
    file: String,
    cases: u64,
    sha256: String,
    cases_sha256: String,
}

#[derive(Serialize)]
struct Skipped {
    instruction: String,
    reason: String,
}

/// Runs `gpucvt vectors`.
pub fn run(a: &Args) -> Result<Done, CliError> {
    let pool = pool(&a.threads)?;
    let mut options = a.ptx.instr_options(a.cr0);
    options.semantics = a.tile.semantics();
    options.tile_version = a.tile.version.tile_version;
    let start = Instant::now();
    if a.suite {
        return pool.install(|| suite(a, options, start));
    }
    let req = Request {
        instruction: a.instruction.clone().unwrap_or_default(),
        options,
        level: a.level,
        seed: a.seed,
        count: a.count,
    };
    let npz = a.out.extension().is_some_and(|e| e == "npz");
    let (v, manifest) = pool.install(|| -> Result<_, CliError> {
        let v = generate(&req)?;
        let m = write_vectors(&v, &a.out, npz)?;
        Ok((v, m))
    })?;
    if a.json {
        return Ok(Done::ok(to_json(&manifest)?));
    }
    Ok(Done {
        out: format!(
            "wrote {} cases of {} to {} (sha256 {})\n",
            v.cases(),
            manifest.instruction,
            a.out.display(),
            manifest.sha256
        ),
        err: format!("{:.2} s\n", start.elapsed().as_secs_f64()),
        code: 0,
    })
}

/// A file name for a form (`::` of the scaled forms is not a portable file-name character).
fn file_name(spelling: &str, npz: bool) -> String {
    format!(
        "{}.{}",
        spelling.replace("::", "-"),
        if npz { "npz" } else { "txt" }
    )
}

fn suite(a: &Args, options: Options, start: Instant) -> Result<Done, CliError> {
    let Some(target) = options.target else {
        return fail("--suite needs --target");
    };
    let version = options.version.unwrap_or(target.max_version());
    let dir = &a.out;
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError(format!("cannot create {}: {e}", dir.display())))?;
    let npz = a.kind == "npz";
    let mut forms = gpucvt::ptx::legal_forms(target, version);
    if let Some(only) = &a.only {
        forms.retain(|f| f.spelling().contains(only.as_str()));
        if forms.is_empty() {
            return fail(format!(
                "no form legal on {target} at PTX {version} contains {only:?}"
            ));
        }
    }
    let results: Vec<Result<SuiteFile, Skipped>> = forms
        .par_iter()
        .map(|form| {
            let spelling = form.spelling();
            let req = Request {
                instruction: spelling.clone(),
                options,
                level: a.level,
                seed: a.seed,
                count: a.count,
            };
            let skipped = |reason: String| Skipped {
                instruction: spelling.clone(),
                reason,
            };
            let v = generate(&req).map_err(|e| skipped(e.to_string()))?;
            let name = file_name(&spelling, npz);
            let m = write_vectors(&v, &dir.join(&name), npz).map_err(|e| skipped(e.0))?;
            Ok(SuiteFile {
                instruction: spelling.clone(),
                file: name,
                cases: m.cases,
                sha256: m.sha256,
                cases_sha256: m.cases_sha256,
            })
        })
        .collect();
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok(f) => files.push(f),
            Err(s) => skipped.push(s),
        }
    }
    let cases: u64 = files.iter().map(|f| f.cases).sum();
    let m = SuiteManifest {
        gpucvt_version: env!("CARGO_PKG_VERSION").to_string(),
        target: target.to_string(),
        ptx_version: version.to_string(),
        level: a.level,
        seed: a.seed,
        count: if a.level >= 2 {
            a.count.unwrap_or(gpucvt::vectors::DEFAULT_COUNT)
        } else {
            0
        },
        kind: a.kind.clone(),
        files,
        skipped,
    };
    let json = to_json(&m)?;
    write_atomic(&dir.join("manifest.json"), json.as_bytes())?;
    if a.json {
        return Ok(Done::ok(json));
    }
    let mut out = format!(
        "wrote {} files ({} cases) for {target} to {}\n",
        m.files.len(),
        cases,
        dir.display()
    );
    for s in &m.skipped {
        out.push_str(&format!("skipped {}: {}\n", s.instruction, s.reason));
    }
    Ok(Done {
        out,
        err: format!("{:.2} s\n", start.elapsed().as_secs_f64()),
        code: 0,
    })
}

/// Writes the vectors (text or `.npz`) and their manifest beside them; returns the manifest.
fn write_vectors(v: &Vectors, path: &Path, npz: bool) -> Result<Manifest, CliError> {
    let (bytes, cases_sha256) = if npz {
        (npz_bytes(v)?, v.cases_sha256())
    } else {
        let (text, h) = v.to_text();
        (text.into_bytes(), h)
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let manifest = v.manifest(
        &name,
        if npz { "npz" } else { "text" },
        sha256_hex(&bytes),
        cases_sha256,
    );
    write_atomic(path, &bytes)?;
    let mpath = manifest_path(path);
    write_atomic(&mpath, to_json(&manifest)?.as_bytes())?;
    Ok(manifest)
}

/// `FILE.manifest.json`.
pub fn manifest_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".manifest.json");
    PathBuf::from(s)
}

/// The `.npz`: `operands` (cases × operand words, uint64), `expected` (cases × answer
/// words, uint64), `lines` is not stored (the text format has them). Entries are stored
/// uncompressed with a fixed time stamp, so that the bytes (and the hash) depend on the
/// cases only.
fn npz_bytes(v: &Vectors) -> Result<Vec<u8>, CliError> {
    use zip::write::SimpleFileOptions;
    let npy = |rows: u64, cols: u64, data: &[u64]| -> Vec<u8> {
        let mut b = gpucvt_tensor::npy::header_bytes("<u8", false, &[rows, cols]);
        b.reserve(data.len() * 8);
        for x in data {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b
    };
    let n = v.cases() as u64;
    let opts = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .last_modified_time(zip::DateTime::default())
        .large_file(false);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let bad = |e: &dyn std::fmt::Display| CliError(format!("cannot write the .npz: {e}"));
    let entries = [
        ("operands.npy", npy(n, v.operands.len() as u64, &v.inputs)),
        ("expected.npy", npy(n, v.answer_words as u64, &v.expected)),
    ];
    for (name, data) in entries {
        w.start_file(name, opts).map_err(|e| bad(&e))?;
        w.write_all(&data).map_err(|e| bad(&e))?;
    }
    Ok(w.finish().map_err(|e| bad(&e))?.into_inner())
}

/// Writes `bytes` to `path` through the temporary every output uses
/// ([`gpucvt_tensor::OutputFile`]): a failed write leaves nothing behind, a replaced file
/// keeps its mode.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let cannot =
        |e: &dyn std::fmt::Display| CliError(format!("cannot write {}: {e}", path.display()));
    let mut tmp = gpucvt_tensor::OutputFile::create(path).map_err(|e| CliError(e.to_string()))?;
    tmp.write_all(bytes).map_err(|e| cannot(&e))?;
    tmp.commit(false).map_err(|e| CliError(e.to_string()))
}
