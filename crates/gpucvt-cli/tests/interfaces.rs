//! The interfaces outside programs use: `eval --batch` as a co-process over pipes, operands
//! that start with `-`, and exit codes when stdout closes early.

use crate::common::{gpucvt, root};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A simulator's loop: write one line, wait for its answer, write the next. Each answer must
/// come while stdin stays open (an answer held back until stdin closes hangs the caller,
/// which the timeout turns into a failure).
#[test]
fn batch_answers_each_line_while_stdin_stays_open() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .args(["eval", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let asks = [
        ("cvt.rn.f16.f32 0x3f800000", "0x3c00"),
        (
            "cvt.rn.satfinite.e4m3x2.f32 0x3f800000 0x43960000",
            "0x3879",
        ),
        (
            "cvt.rn.f16.f32 zz",
            "error: operand 1 \"zz\" is not a 0x hex bit pattern",
        ),
        ("mov hf <- f 0x40000000", "0x4000"),
    ];
    for (ask, want) in asks {
        writeln!(stdin, "{ask}").unwrap();
        stdin.flush().unwrap();
        let got = rx.recv_timeout(Duration::from_secs(20));
        if got.is_err() {
            let _ = child.kill();
        }
        assert_eq!(
            got.as_deref(),
            Ok(want),
            "no answer to {ask:?} while stdin is open"
        );
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
}

/// Flushing when the input runs dry must not cost a stream its speed: 200,000 lines through
/// a pipe still give 200,000 answers, and the whole run is written in far fewer writes than
/// lines (checked by the count of answers only here; the time is in the commit message).
#[test]
fn batch_streams_many_lines() {
    let mut input = String::new();
    for i in 0..200_000u32 {
        input.push_str(&format!(
            "cvt.rn.f16.f32 0x{:08x}\n",
            i.wrapping_mul(0x9e37_79b9)
        ));
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .args(["eval", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 200_000);
}

/// `d = …` of `gpucvt ARGS`, which must succeed.
#[track_caller]
fn d_of(args: &[&str]) -> String {
    let (code, out, err) = gpucvt(args);
    assert_eq!(code, 0, "gpucvt {args:?}: {err}");
    out.lines()
        .find_map(|l| l.strip_prefix("d = "))
        .unwrap_or_else(|| panic!("no d line:\n{out}"))
        .to_string()
}

/// Operands that start with `-` are operands wherever they stand, with options before or
/// after them (clap alone reads `-1e-8` as the short option `-1`).
#[test]
fn operands_may_start_with_a_minus() {
    assert_eq!(d_of(&["eval", "cvt.rn.f16.f32", "-1e-8"]), "0x8000");
    assert_eq!(d_of(&["eval", "cvt.rn.f16.f32", "-inf"]), "0xfc00");
    assert_eq!(d_of(&["eval", "cvt.rn.f16.f32", "-0x1p0"]), "0xbc00");
    assert_eq!(
        d_of(&["eval", "cvt.rn.f16.f32", "-1e-8", "--explain"]),
        "0x8000"
    );
    assert_eq!(
        d_of(&[
            "eval",
            "--target",
            "sm_90",
            "cvt.rn.satfinite.e4m3x2.f32",
            "-inf",
            "-0x1.8p0"
        ]),
        "0xfebc"
    );
    assert_eq!(d_of(&["eval", "cvt.rn.f16.f32", "--", "-inf"]), "0xfc00");
    let (code, out, err) = gpucvt(&["eval", "cvt.rn.f16.f32", "-nan", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"text\": \"-nan\""), "{out}");
    // vISA and Tile IR operands too.
    assert_eq!(d_of(&["eval", "mov hf <- f", "-1e-8"]), "0x8000");
    let (code, out, err) = gpucvt(&[
        "eval",
        "ftof %x : tile<2xf32> -> tile<2xf16>",
        "-inf",
        "-0x1p0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0xfc00") && out.contains("0xbc00"), "{out}");
    // round takes them before or after its options.
    for args in [
        ["round", "-1e-8", "--to", "f16"],
        ["round", "--to", "f16", "-1e-8"],
    ] {
        let (code, out, err) = gpucvt(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("0x8000"), "{out}");
    }
    // A word that is no number is still the operand's error, not clap's.
    let (code, _, err) = gpucvt(&["eval", "cvt.rn.f16.f32", "-zz"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: operand a"), "{err}");
}

/// `gpucvt check bad.ptx | head`: the reader goes away early, and the exit code still says
/// that the file has errors.
#[test]
fn check_keeps_its_exit_code_when_stdout_closes_early() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ptx");
    let mut src = String::from(
        ".version 8.0\n.target sm_90\n.entry k()\n{\n .reg .f32 %f;\n .reg .b16 %h;\n",
    );
    for _ in 0..5000 {
        src.push_str(" cvt.f16.f32 %h, %f;\n");
    }
    src.push_str("}\n");
    std::fs::write(&path, src).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .arg("check")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("error[ptx.rounding-required]"), "{first}");
    // The pipe is closed here, with most of the output not yet read.
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let (code, _, _) = gpucvt(&[
        "check",
        root().join("examples/ptx/mistakes.ptx").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
}

/// `--cvt` is a whole PTX form, its rounding included: `--mode` beside it is refused rather
/// than ignored.
#[test]
fn convert_cvt_refuses_mode() {
    let (code, _, err) = gpucvt(&[
        "convert",
        "x.npy",
        "-o",
        "y.npy",
        "--cvt",
        "cvt.rn.satfinite.e4m3x2.f32",
        "--mode",
        "rz",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--mode") && err.contains("--cvt"), "{err}");
}

/// `--threads` has one rule in every subcommand (and in Python): at most four per core,
/// with a note, as `convert` always did.
#[test]
fn thread_counts_are_clamped_in_every_subcommand() {
    for args in [
        &["verify", "cvt.rn.f16x2.e4m3x2", "--threads", "100000"][..],
        &[
            "sweep",
            "cvt.rn.f16x2.e4m3x2",
            "--hash",
            "--threads",
            "100000",
        ][..],
    ] {
        let (code, _, err) = gpucvt(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            err.contains("note: 100000 threads asked for; using "),
            "{args:?}: {err}"
        );
    }
    let (code, _, err) = gpucvt(&["verify", "cvt.rn.f16x2.e4m3x2", "--threads", "2"]);
    assert_eq!(code, 0);
    assert!(!err.contains("threads asked for"), "{err}");
}

/// The reproduction: a 300 KB `.ptx` whose one long line holds 15,000 errors made
/// `check` write 4 GB (each diagnostic repeated the whole line) and `run` run out of
/// memory. Every command shows a window of the line and at most 10,000 diagnostics, then
/// says how many more there are; the count line still counts them all.
#[test]
fn diagnostics_of_long_lines_stay_small() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = dir.path().join("long.ptx");
    let head = ".version 8.0\n.target sm_90\n.entry k()\n{\n .reg .f32 %f;\n .reg .b16 %h;\n";
    std::fs::write(
        &ptx,
        format!("{head}{}\n}}\n", " cvt.f16.f32 %h, %f;".repeat(15_000)),
    )
    .unwrap();
    let p = ptx.to_str().unwrap();
    let (code, out, _) = gpucvt(&["check", p]);
    assert_eq!(code, 1);
    assert!(out.len() < 4 << 20, "check wrote {} bytes", out.len());
    assert!(
        out.contains(": 5000 more diagnostics not shown (the first 10000 are; --json lists all)")
    );
    assert!(
        out.ends_with(": 15000 errors, 0 warnings\n"),
        "{}",
        &out[out.len() - 200..]
    );
    let (code, out, err) = gpucvt(&["run", p]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.len() < 4 << 20, "run wrote {} bytes", err.len());
    assert!(err.contains(": 5000 more diagnostics not shown (the first 10000 are)"));
    assert!(err.ends_with("the file has errors (see gpucvt check); nothing was run\n"));
    // A long line in the other dialects, and a message that quotes a huge token.
    let visa = dir.path().join("long.visaasm");
    std::fs::write(
        &visa,
        format!(
            "mov (M1, 8) {}(0,0)<1> A(0,0)<1;1,0>\n",
            "V".repeat(300_000)
        ),
    )
    .unwrap();
    let mlir = dir.path().join("long.mlir");
    std::fs::write(
        &mlir,
        format!(
            "cuda_tile.module @m {{\n  entry @k(%x: tile<f32>) {{\n    %y = ftof %x : tile<f32> -> tile<{}>\n    return\n  }}\n}}\n",
            "q".repeat(300_000)
        ),
    )
    .unwrap();
    let tok = dir.path().join("token.ptx");
    std::fs::write(
        &tok,
        format!("{head} cvt.rn.{}.f32 %h, %f;\n}}\n", "x".repeat(300_000)),
    )
    .unwrap();
    for f in [&visa, &mlir, &tok] {
        for cmd in ["check", "run"] {
            let (code, out, err) = gpucvt(&[cmd, f.to_str().unwrap()]);
            assert_eq!(code, 1, "{cmd} {f:?}: {err}");
            assert!(
                out.len() + err.len() < 8000,
                "{cmd} {f:?}: {} bytes",
                out.len() + err.len()
            );
        }
    }
}

/// The Triton kernel through `gpucvt run`: `--set %r1=…` is what the masked load
/// writes after `mov.u32 %r1, 0x0`, and the notes say that the mov replaced it.
#[test]
fn run_set_supplies_a_masked_load() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("masked.ptx");
    std::fs::write(
        &k,
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<3>;\n.reg .b16 %rs<3>;\n.reg .b64 %rd<2>;\n\
         ld.param.b64 %rd1,[p];\nmov.u32 %r1, 0x0;\n@%p1 ld.global.b32 %r1, [%rd1+0];\n\
         mov.b32 {%rs1,%rs2}, %r1;\ncvt.f32.f16 %r2, %rs2;\n}\n",
    )
    .unwrap();
    let (code, out, err) = gpucvt(&["run", k.to_str().unwrap(), "--set", "%r1=0x3c004000"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0x3f800000"), "{out}");
    assert!(out.contains("which replaces its --set value"), "{out}");
    assert!(out.contains("%r1 takes the --set value again"), "{out}");
}
