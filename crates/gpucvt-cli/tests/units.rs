//! `gpucvt convert` outputs with their sidecar files as one unit (issue 41 §6): stale
//! sidecars removed, concurrent writers leaving one writer's unit, the blocking recorded
//! and read back, modes kept and read-only outputs refused without `--force`, long names.

use crate::common::gpucvt_in as gpucvt;
use std::path::Path;

fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut x = 0x9e37_79b9u32 ^ seed.wrapping_mul(0x85eb_ca6b);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x as f32 / u32::MAX as f32 - 0.5) * (1 << (x % 9)) as f32
        })
        .collect()
}

fn npy(path: &Path, shape: &[u64], v: &[f32]) {
    let data: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, gpucvt_reference::npy_bytes("<f4", shape, &data)).unwrap();
}

/// Runs `gpucvt ARGS` in `d`, which must succeed; its stdout.
#[track_caller]
fn ok(d: &Path, args: &[&str]) -> String {
    let (code, out, err) = gpucvt(d, args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// Runs `gpucvt ARGS` in `d`, which must fail with one line containing `needle`.
#[track_caller]
fn fails(d: &Path, args: &[&str], needle: &str) {
    let (code, out, err) = gpucvt(d, args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle) && err.lines().count() == 1,
        "{args:?}: {err}"
    );
}

/// The `max_abs_error` of a `--json` summary.
fn max_abs_error(js: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(js).unwrap();
    v["total"]["max_abs_error"].as_f64().unwrap()
}

/// The f64 data of a `.npy` output (after its header).
fn f64s(path: &Path) -> Vec<f64> {
    let b = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize + 10;
    b[hlen..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The largest |y − x| over the non-NaN `y`, and the number of NaN.
fn error(x: &[f32], y: &[f64]) -> (f64, usize) {
    let nan = y.iter().filter(|v| v.is_nan()).count();
    let e = x
        .iter()
        .zip(y)
        .filter(|(_, v)| !v.is_nan())
        .map(|(a, b)| (*a as f64 - b).abs())
        .fold(0.0, f64::max);
    (e, nan)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Issue 41 §6's reproductions: nvfp4 then mxfp4 into `q.npy`, dequantized, gave 64 NaN and
/// a max error of 2.84 (the stale `q_scale_2.npy` used); mxfp8 then plain e4m3 gave 4.3
/// (the stale `q_scale.npy` used). Now the second run removes them, and the dequantized
/// error is the second quantization's own.
#[test]
fn stale_sidecars_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(64 * 64, 1);
    npy(&d.join("x.npy"), &[64, 64], &x);
    ok(d, &["convert", "x.npy", "-o", "q.npy", "--recipe", "nvfp4"]);
    assert!(d.join("q_scale_2.npy").exists());
    let js = ok(
        d,
        &[
            "convert", "x.npy", "-o", "q.npy", "--recipe", "mxfp4", "--json",
        ],
    );
    assert_eq!(
        listing(d),
        ["q.npy", "q.npy.gpucvt.json", "q_scale.npy", "x.npy"]
    );
    ok(
        d,
        &[
            "convert",
            "q.npy",
            "-o",
            "b.npy",
            "--dequantize",
            "--to",
            "f64",
        ],
    );
    let (e, nan) = error(&x, &f64s(&d.join("b.npy")));
    assert_eq!((e, nan), (max_abs_error(&js), 0));

    ok(d, &["convert", "x.npy", "-o", "r.npy", "--recipe", "mxfp8"]);
    ok(d, &["convert", "x.npy", "-o", "r.npy", "--to", "e4m3"]);
    assert!(!d.join("r_scale.npy").exists() && !d.join("r.npy.gpucvt.json").exists());
    fails(
        d,
        &[
            "convert",
            "r.npy",
            "-o",
            "c.npy",
            "--dequantize",
            "--from",
            "e4m3",
        ],
        "r.npy: its block scales r_scale.npy are missing",
    );
    // Scales of another run put beside the data are refused, not used.
    ok(
        d,
        &[
            "convert",
            "x.npy",
            "-o",
            "s.npy",
            "--recipe",
            "mxfp4",
            "--scale-rule",
            "rceil",
        ],
    );
    std::fs::copy(d.join("s_scale.npy"), d.join("q_scale.npy")).unwrap();
    fails(
        d,
        &["convert", "q.npy", "-o", "c.npy", "--dequantize"],
        "q_scale.npy does not belong to q.npy: its checksum differs from the one its metadata q.npy.gpucvt.json records",
    );
    assert!(!d.join("c.npy").exists());
}

/// Issue 41 §6: two `convert --block` runs into one `.npy` output gave the data of one and
/// the scales of the other (3 of 15 trials with 4 writers, exit 0). Now, over many rounds
/// of 4 concurrent writers, what is left is always one writer's unit, byte for byte, and it
/// dequantizes.
#[test]
fn concurrent_writers_leave_one_writers_unit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let writers = 4;
    let mut want = Vec::new();
    let parts = |name: &str| -> Vec<Option<Vec<u8>>> {
        [
            format!("{name}.npy"),
            format!("{name}_scale.npy"),
            format!("{name}_scale_2.npy"),
        ]
        .iter()
        .map(|p| std::fs::read(d.join(p)).ok())
        .collect()
    };
    for w in 0..writers {
        // Of different sizes, so that the runs' timings differ.
        let rows = 16 << w;
        npy(
            &d.join(format!("x{w}.npy")),
            &[rows, 256],
            &values(rows as usize * 256, 10 + w as u32),
        );
        let out = format!("r{w}.npy");
        ok(
            d,
            &[
                "convert",
                &format!("x{w}.npy"),
                "-o",
                &out,
                "--recipe",
                "nvfp4",
            ],
        );
        want.push(parts(&format!("r{w}")));
    }
    let exe = env!("CARGO_BIN_EXE_gpucvt");
    for round in 0..25 {
        let children: Vec<_> = (0..writers)
            .map(|w| {
                std::process::Command::new(exe)
                    .current_dir(d)
                    .args([
                        "convert",
                        &format!("x{w}.npy"),
                        "-o",
                        "q.npy",
                        "--recipe",
                        "nvfp4",
                    ])
                    .args(["--threads", "1"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let got = parts("q");
        assert!(
            want.contains(&got),
            "round {round}: the parts of q.npy come from different writers"
        );
        ok(d, &["convert", "q.npy", "-o", "b.npy", "--dequantize"]);
    }
    let hidden: Vec<String> = listing(d)
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
}

/// Issue 41 §6: a 300×300 tensor quantized in 100×100 tiles and dequantized without
/// `--block` was read in other tiles (error 340 instead of 13). The blocking is recorded and
/// read back; without the record, the shapes are not guessed from.
#[test]
fn the_blocking_is_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(300 * 300, 3);
    npy(&d.join("x.npy"), &[300, 300], &x);
    let js = ok(
        d,
        &[
            "convert",
            "x.npy",
            "-o",
            "q.npy",
            "--to",
            "e4m3",
            "--satfinite",
            "--block",
            "100x100",
            "--scale",
            "f32",
            "--json",
        ],
    );
    ok(
        d,
        &[
            "convert",
            "q.npy",
            "-o",
            "b.npy",
            "--dequantize",
            "--to",
            "f64",
        ],
    );
    let (e, _) = error(&x, &f64s(&d.join("b.npy")));
    assert_eq!(e, max_abs_error(&js));
    // Options that contradict the record are refused.
    fails(
        d,
        &["convert", "q.npy", "-o", "c.npy", "--dequantize", "--block", "96x96", "--scale", "f32"],
        "q.npy: its metadata q.npy.gpucvt.json records the blocking block=100x100 axis=-1 scale=f32 rule=floor second_level=false layout=rows, which the blocking given contradicts",
    );
    std::fs::remove_file(d.join("q.npy.gpucvt.json")).unwrap();
    fails(
        d,
        &["convert", "q.npy", "-o", "c.npy", "--dequantize", "--from", "e4m3"],
        "q.npy: its scales q_scale.npy (shape [3, 3]) fit tiles of several sizes (100 to 149 rows by 100 to 149 columns), which cut it differently; give the block it was quantized with (for example 100x100) or its recipe",
    );
    ok(
        d,
        &[
            "convert",
            "q.npy",
            "-o",
            "c.npy",
            "--dequantize",
            "--from",
            "e4m3",
            "--block",
            "100x100",
            "--scale",
            "f32",
            "--to",
            "f64",
        ],
    );
    assert_eq!(
        std::fs::read(d.join("b.npy")).unwrap(),
        std::fs::read(d.join("c.npy")).unwrap()
    );
}

/// Issue 41 §6: overwriting an output made a 0600 file 0644 (and root's), and replaced a
/// 0444 file. The mode (and owner, where the process may) is kept; a read-only output is
/// refused unless `--force`.
#[cfg(unix)]
#[test]
fn modes_are_kept_and_read_only_outputs_need_force() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy(&d.join("x.npy"), &[4, 64], &values(256, 4));
    std::fs::write(d.join("p.npy"), b"old").unwrap();
    std::fs::set_permissions(d.join("p.npy"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let root = std::fs::metadata(d.join("p.npy")).unwrap().uid() == 0;
    if root {
        std::os::unix::fs::chown(d.join("p.npy"), Some(1234), Some(1234)).unwrap();
    }
    ok(d, &["convert", "x.npy", "-o", "p.npy", "--recipe", "mxfp8"]);
    for name in ["p.npy", "p_scale.npy", "p.npy.gpucvt.json"] {
        let m = std::fs::metadata(d.join(name)).unwrap();
        assert_eq!(m.mode() & 0o777, 0o600, "{name}");
        if root {
            assert_eq!((m.uid(), m.gid()), (1234, 1234), "{name}");
        }
    }
    std::fs::write(d.join("r.npy"), b"old").unwrap();
    std::fs::set_permissions(d.join("r.npy"), std::fs::Permissions::from_mode(0o444)).unwrap();
    fails(
        d,
        &["convert", "x.npy", "-o", "r.npy", "--to", "bf16"],
        "r.npy is read-only: it is replaced or removed only when forced (--force)",
    );
    assert_eq!(std::fs::read(d.join("r.npy")).unwrap(), b"old");
    ok(
        d,
        &["convert", "x.npy", "-o", "r.npy", "--to", "bf16", "--force"],
    );
    assert_ne!(std::fs::read(d.join("r.npy")).unwrap(), b"old");
    let m = std::fs::metadata(d.join("r.npy")).unwrap();
    assert_eq!(m.mode() & 0o777, 0o444);
}

/// Issue 41 §6: output names of 237 to 255 bytes failed with "File name too long".
#[test]
fn output_names_up_to_255_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy(&d.join("x.npy"), &[4, 64], &values(256, 5));
    for len in [236, 237, 255] {
        let name = format!("{}.npy", "n".repeat(len - 4));
        ok(d, &["convert", "x.npy", "-o", &name, "--to", "bf16"]);
        assert!(d.join(&name).exists());
    }
    let name = format!("{}.npy", "m".repeat(243 - 4));
    ok(d, &["convert", "x.npy", "-o", &name, "--recipe", "mxfp8"]);
    fails(
        d,
        &["convert", "x.npy", "-o", &format!("{}.npy", "m".repeat(246)), "--recipe", "mxfp8"],
        "would have a name of 256 bytes, more than the 255 a file name may have; choose a shorter output name",
    );
}
