//! What every end-to-end test file needs: running the built `gpucvt` binary.
// Each test file uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (where `examples/` is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `gpucvt` with `args` in the folder `dir`: (exit code, stdout, stderr).
pub fn gpucvt_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    gpucvt_with(dir, args, &[])
}

/// Runs `gpucvt` with `args` in the folder `dir` and the environment variables `vars` set:
/// (exit code, stdout, stderr).
pub fn gpucvt_with(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .current_dir(dir)
        .args(args)
        .envs(vars.iter().copied())
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    )
}

/// Runs `gpucvt` with `args` from the workspace root.
pub fn gpucvt(args: &[&str]) -> (i32, String, String) {
    gpucvt_in(&root(), args)
}

/// Runs `gpucvt` with `args` from the CLI crate's folder.
pub fn run(args: &[&str]) -> (i32, String, String) {
    gpucvt_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// The value after `prefix` (`d = `, `r = `) on its line of `gpucvt eval ARGS`, which must
/// succeed with nothing on stderr.
#[track_caller]
pub fn eval_value(args: &[&str], prefix: &str) -> String {
    let mut a = vec!["eval"];
    a.extend_from_slice(args);
    let (code, out, err) = gpucvt(&a);
    assert_eq!(code, 0, "gpucvt {a:?} failed: {err}");
    assert!(err.is_empty(), "gpucvt {a:?} wrote to stderr: {err}");
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{out}"))
        .to_string()
}
