//! End-to-end tests of the CUDA Tile IR commands: `gpucvt eval` (one op, `--explain`,
//! `--json`), `gpucvt eval --batch` with Tile IR lines, and `gpucvt run FILE.mlir`. The
//! expected encodings are worked out by hand from the formats and `tile-ir.md` §3.3/§3.4 (the
//! comments show the arithmetic), never copied from the program's output.

use crate::common::gpucvt;

use serde_json::Value as Json;
use std::io::Write;
use std::process::{Command, Stdio};

/// A command that must succeed; its stdout.
#[track_caller]
fn ok(args: &[&str]) -> String {
    let (code, out, err) = gpucvt(args);
    assert_eq!(code, 0, "gpucvt {args:?} failed: {err}");
    assert!(err.is_empty(), "gpucvt {args:?} wrote to stderr: {err}");
    out
}

/// A command that must fail with one `error: ` line and exit code 2; the line.
#[track_caller]
fn fails(args: &[&str]) -> String {
    let (code, out, err) = gpucvt(args);
    assert_eq!(code, 2, "gpucvt {args:?}: expected exit 2, stderr: {err}");
    assert!(out.is_empty(), "gpucvt {args:?} wrote to stdout: {out}");
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

/// The `r = …` line of `gpucvt eval` on a Tile IR op.
#[track_caller]
fn result(args: &[&str]) -> String {
    crate::common::eval_value(args, "r = ")
}

/// `gpucvt eval --batch [extra]` on `input`: the output lines.
fn batch(input: &str, extra: &[&str]) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .arg("eval")
        .arg("--batch")
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("the binary ends");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn eval_each_of_the_nine_ops() {
    // bitcast keeps the bits: 0x3f800000 as f32 is 1.0.
    assert_eq!(
        result(&["bitcast %x : tile<i32> -> tile<f32>", "0x3f800000"]),
        "0x3f800000"
    );
    // exti of 0x80 (-128 as i8): sign extension fills with ones, zero extension with zeros.
    assert_eq!(
        result(&["exti %x signed : tile<i8> -> tile<i32>", "0x80"]),
        "0xffffff80"
    );
    assert_eq!(
        result(&["exti %x unsigned : tile<i8> -> tile<i32>", "0x80"]),
        "0x00000080"
    );
    // exti of i1 true, signed: -1 (selp -1, 0).
    assert_eq!(
        result(&["exti %x signed : tile<i1> -> tile<i16>", "true"]),
        "0xffff"
    );
    // trunci keeps the low byte.
    assert_eq!(
        result(&["trunci %x : tile<i32> -> tile<i8>", "0x12345678"]),
        "0x78"
    );
    // ftof f32 -> f16: 65520 is the rounding boundary of the largest f16, 65504 = 0x7bff:
    // nearest even goes to Inf (0x7c00), toward zero stays at 65504.
    assert_eq!(
        result(&["ftof %x : tile<f32> -> tile<f16>", "65520"]),
        "0x7c00"
    );
    assert_eq!(
        result(&["ftof %x rounding<zero> : tile<f32> -> tile<f16>", "65520"]),
        "0x7bff"
    );
    // ftoi 200.0 -> i8 signed: tileiras converts to s16 (200) and stores the low byte 0xc8;
    // the specification leaves the out-of-range result undefined.
    let op = "ftoi %x signed : tile<f32> -> tile<i8>";
    assert_eq!(result(&[op, "200.0"]), "0xc8");
    assert_eq!(result(&[op, "200.0", "--semantics", "spec"]), "undefined");
    // -5.0 -> u8: cvt.rzi.u16 clamps to 0.
    assert_eq!(
        result(&["ftoi %x unsigned : tile<f32> -> tile<i8>", "-5.0"]),
        "0x00"
    );
    // itof -3 (signed i32) -> f32: -3 = -1.5 × 2^1: 1 10000000 100… = 0xc0400000.
    assert_eq!(
        result(&["itof %x signed : tile<i32> -> tile<f32>", "-3"]),
        "0xc0400000"
    );
    // The pointer ops move 64-bit addresses unchanged.
    assert_eq!(
        result(&["int_to_ptr %x : tile<i64> -> tile<ptr<f32>>", "0x1000"]),
        "0x0000000000001000"
    );
    assert_eq!(
        result(&["ptr_to_int %x : tile<ptr<f32>> -> tile<i64>", "0xdeadbeef"]),
        "0x00000000deadbeef"
    );
    assert_eq!(
        result(&[
            "cuda_tile.ptr_to_ptr %x : !cuda_tile.tile<4xptr<i8>> -> tile<4xptr<f64>>",
            "[0x10, 0x20, 0x30, 0x40]"
        ]),
        "[0x0000000000000010, 0x0000000000000020, 0x0000000000000030, 0x0000000000000040]"
    );
}

#[test]
fn whole_tiles_as_words_lists_and_splats() {
    // 1.0, 2.0 and -0.5 in f16: 0x3c00, 0x4000, 0xb800.
    let op = "ftof %x : tile<2x2xf32> -> tile<2x2xf16>";
    let want = "[0x3c00, 0x4000, 0xb800, 0x3c00]";
    assert_eq!(result(&[op, "1.0", "2.0", "-0.5", "1.0"]), want);
    assert_eq!(result(&[op, "[[1.0, 2.0], [-0.5, 0x3f800000]]"]), want);
    assert_eq!(result(&[op, "1.0,2,-0.5,0x1p0"]), want);
    assert_eq!(result(&[op, "1.0"]), "[0x3c00, 0x3c00, 0x3c00, 0x3c00]");
    let e = fails(&["eval", op, "1.0", "2.0"]);
    assert!(e.contains("needs 4 element value(s)"), "{e}");
}

#[test]
fn section_3_4_double_rounding_tileiras_and_spec() {
    let both = |op: &str, x: &str, target: &str, tileiras: &str, spec: &str| {
        assert_eq!(
            result(&[op, x, "--target", target]),
            tileiras,
            "tileiras {op} {x}"
        );
        assert_eq!(
            result(&[op, x, "--semantics", "spec", "--target", target]),
            spec,
            "spec {op} {x}"
        );
    };
    // 4609 = 2^12 + 2^9 + 1 → f16 rounds to 4608 (step 4), then e5m2 (step 1024 in
    // [4096, 8192)) sees the tie 4608 → 4096 (even, 0x6c); once rounded, 4609 is just
    // above the tie → 5120 (0x6d).
    both(
        "itof %x signed : tile<i32> -> tile<f8E5M2>",
        "4609",
        "sm_90",
        "0x6c",
        "0x6d",
    );
    // 2^24 + 2^13 + 1 → f32 (step 2) gives 2^24 + 2^13, a tf32 tie (step 2^14) → 2^24
    // (0x4b800000); once rounded → 2^24 + 2^14 (0x4b802000).
    both(
        "itof %x signed : tile<i32> -> tile<tf32>",
        "16785409",
        "sm_90",
        "0x4b800000",
        "0x4b802000",
    );
    // 1.0625 + 2^-40 (f64 0x3ff1000000001000) → f32 1.0625, an e4m3 tie between 1.0 (0x38)
    // and 1.125 (0x39) → 1.0; once rounded → 1.125.
    both(
        "ftof %x : tile<f64> -> tile<f8E4M3FN>",
        "0x3ff1000000001000",
        "sm_90",
        "0x38",
        "0x39",
    );
    // 1 + 2^-11 + 2^-40 → f32 1 + 2^-11, a tf32 tie (step 2^-10) → 1.0.
    both(
        "ftof %x : tile<f64> -> tile<tf32>",
        "0x3ff0020000001000",
        "sm_90",
        "0x3f800000",
        "0x3f802000",
    );
    // f64 → bf16, 1 + 2^-8 + 2^-40: sm_80 goes through f32 (1 + 2^-8, a bf16 tie → 1.0,
    // 0x3f80); sm_90 converts directly (above the tie → 1 + 2^-7, 0x3f81).
    let op = "ftof %x : tile<f64> -> tile<bf16>";
    both(op, "0x3ff0100000001000", "sm_80", "0x3f80", "0x3f81");
    both(op, "0x3ff0100000001000", "sm_90", "0x3f81", "0x3f81");
}

#[test]
fn explain_shows_the_lowering_and_the_differences() {
    let out = ok(&[
        "eval",
        "ftof %x : tile<f64> -> tile<bf16>",
        "0x3ff0100000001000",
        "--target",
        "sm_80",
        "--explain",
    ]);
    assert!(
        out.contains("lowering (tileiras, sm_80): cvt.rn.f32.f64 → cvt.rn.bf16x2.f32"),
        "{out}"
    );
    // The intermediate f32 is 1 + 2^-8 = 1.00390625 (0x3f808000).
    assert!(out.contains("0x3f808000  1.00390625"), "{out}");
    assert!(out.contains("differ on 1 of 1 element(s)"), "{out}");
    assert!(out.contains("DIFFER"), "{out}");
    // On sm_90 one cvt, and no difference.
    let out = ok(&[
        "eval",
        "ftof %x : tile<f64> -> tile<bf16>",
        "0x3ff0100000001000",
        "--target",
        "sm_90",
        "--explain",
    ]);
    assert!(
        out.contains("lowering (tileiras, sm_90): cvt.rn.bf16.f64\n"),
        "{out}"
    );
    assert!(out.contains("the same on all 1 element(s)"), "{out}");
    assert!(!out.contains("DIFFER"), "{out}");
    // Undefined spec results are flagged as differences, with the reason.
    let out = ok(&[
        "eval",
        "ftoi %x signed : tile<2xf32> -> tile<2xi8>",
        "[nan, 3.5]",
        "--semantics",
        "spec",
        "--explain",
    ]);
    assert!(out.contains("r = [undefined, 0x03]"), "{out}");
    assert!(out.contains("cvt.rzi.s16.f32"), "{out}");
    assert!(out.contains("spec undefined (ftoi: NaN input)"), "{out}");
    assert!(out.contains("differ on 1 of 2 element(s)"), "{out}");
}

#[test]
fn json_output() {
    let out = ok(&[
        "eval",
        "ftoi %x signed : tile<2xf32> -> tile<2xi8>",
        "[nan, 300.0]",
        "--semantics",
        "spec",
        "--explain",
        "--json",
    ]);
    let v: Json = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["dialect"], "tile");
    assert_eq!(v["semantics"], "spec");
    assert_eq!(v["source_type"], "tile<2xf32>");
    assert_eq!(v["operands"][0]["bits"], "0x7fffffff");
    assert_eq!(v["elements"][0]["bits"], Json::Null);
    assert_eq!(v["elements"][0]["undefined"], "ftoi: NaN input");
    assert!(v["elements"][1]["undefined"].is_string());
    let x = &v["explain"];
    assert_eq!(x["lowering"][0], "cvt.rzi.s16.f32");
    assert_eq!(x["differ"], 2);
    // tileiras: 300 → s16 300 = 0x012c, low byte 0x2c.
    assert_eq!(x["trace"][1]["steps"][1]["bits"], "0x2c");
    assert_eq!(x["comparison"][1]["differ"], true);
    let out = ok(&[
        "eval",
        "itof %x signed : tile<i32> -> tile<f8E5M2>",
        "4609",
        "--json",
    ]);
    let v: Json = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["elements"][0]["bits"], "0x6c");
    assert_eq!(v["elements"][0]["value"], "4096");
    assert!(v.get("explain").is_none());
}

#[test]
fn batch_mixed_lines_one_line_each() {
    let input = "\
ftof %x rounding<zero> : tile<f32> -> tile<f16> 0x3f800000
itof signed : tile<i32> -> tile<f8E5M2> 0x1201
cuda_tile.ftof : tile<2xf32> -> tile<2xf16> [0x3f800000, 0x40000000]
cvt.rn.f16.f32 0x3f800000
ftoi signed : tile<f32> -> tile<i8> 0x7fc00000
ftof : tile<f32> -> tile<f32> 0x0
ftof : tile<2xf32> -> tile<2xf16> 0x1

ftof : tile<f32> -> tile<f16> 1.0
exti : tile<i8> -> tile<i16> 0x1
mov.sat ub <- f 0x43960000
ftof : tile<f32> -> tile<f8E4M3FN> 0x100000000
ftof : tile<f32> -> tile<f16";
    let lines = batch(input, &[]);
    assert_eq!(lines.len(), 13, "{lines:?}");
    assert_eq!(lines[0], "0x3c00");
    assert_eq!(lines[1], "0x6c");
    assert_eq!(lines[2], "0x3c00 0x4000");
    assert_eq!(lines[3], "0x3c00");
    // tileiras: cvt.rzi.s16.f32 of NaN is 0, low byte 0.
    assert_eq!(lines[4], "0x00");
    assert!(lines[5].starts_with("error: ") && lines[5].contains("no-op"));
    assert!(lines[6].starts_with("error: ") && lines[6].contains("2 element(s)"));
    assert!(lines[7].starts_with("error: empty line"));
    assert_eq!(
        lines[8],
        "error: operand 1 \"1.0\" is not a 0x hex bit pattern"
    );
    assert!(lines[9].contains("expected signedness"), "{}", lines[9]);
    assert_eq!(lines[10], "0xff");
    assert!(lines[11].contains("does not fit"), "{}", lines[11]);
    assert!(lines[12].starts_with("error: "), "{}", lines[12]);
    // Under spec, 4609 is rounded once, and NaN → i8 is undefined.
    let lines = batch(input, &["--semantics", "spec"]);
    assert_eq!(lines.len(), 13);
    assert_eq!(lines[1], "0x6d");
    assert_eq!(
        lines[4],
        "error: undefined (spec semantics): element 0: ftoi: NaN input"
    );
    // f8E4M3FN needs sm_90 in tileiras; sm_80 is refused per line.
    let lines = batch(
        "ftof : tile<f32> -> tile<f8E4M3FN> 0x3f800000\nftof : tile<f64> -> tile<bf16> 0x3ff0100000001000\n",
        &["--target", "sm_80"],
    );
    assert!(lines[0].starts_with("error: ") && lines[0].contains("sm_90"));
    assert_eq!(lines[1], "0x3f80");
}

#[test]
fn eval_errors_exit_2() {
    let e = fails(&["eval", "ftof %x : tile<f32> -> tile<f16>"]);
    assert!(e.contains("takes one operand"), "{e}");
    let e = fails(&["eval", "ftof %x : tile<f32> -> tile<f16>", "abc"]);
    assert!(e.contains("x"), "{e}");
    let e = fails(&["eval", "ftof %x : tile<f16> -> tile<f16>", "0x0"]);
    assert!(e.contains("must not be a no-op"), "{e}");
    let e = fails(&[
        "eval",
        "ftof %x : tile<f32> -> tile<f16>",
        "1.0",
        "--semantics",
        "exact",
    ]);
    assert!(e.contains("--semantics"), "{e}");
    let e = fails(&[
        "eval",
        "ftof %x : tile<f32> -> tile<f16>",
        "1.0",
        "--tile-version",
        "12.0",
    ]);
    assert!(e.contains("--tile-version"), "{e}");
    // saturating ftoi is new in 13.4.
    let e = fails(&[
        "eval",
        "ftoi %x signed saturating : tile<f32> -> tile<i32>",
        "1.0",
        "--tile-version",
        "13.3",
    ]);
    assert!(e.contains("13.3"), "{e}");
    let e = fails(&[
        "eval",
        "ftof %x : tile<f32> -> tile<f8E4M3FN>",
        "1.0",
        "--target",
        "sm_80",
    ]);
    assert!(e.contains("sm_90"), "{e}");
    let e = fails(&["eval", "exti %x signed : tile<i8> -> tile<i16>", "300"]);
    assert!(e.contains("s8"), "{e}");
    let e = fails(&["eval", "ftof %x : tile<f32> -> tile<f16>", "0x123456789"]);
    assert!(e.starts_with("error: x"), "{e}");
}

#[test]
fn run_with_args() {
    // quantize.mlir: %x: tile<4xf32>, %n: tile<4xi32>.
    let out = ok(&[
        "run",
        "examples/tile/quantize.mlir",
        "--arg",
        "%x=[1.0, 300, -0.3, nan]",
        "--arg",
        "n=[7,-1,200,0x10000]",
    ]);
    assert!(
        out.starts_with("entry @k: 7 value(s) computed, semantics tileiras (target sm_100a)"),
        "{out}"
    );
    // %q = ftof %x → e4m3: 1.0 = 0x38; 300 → 288 = 0x79 (step 32); -0.3 → -0.3125 = 0xaa
    // (1.25 × 2^-2: 1 0101 010); NaN → 0x7f.
    has(&out, "%q", 0, "0x38", "1");
    has(&out, "%q", 1, "0x79", "288");
    has(&out, "%q", 2, "0xaa", "-0.3125");
    has(&out, "%q", 3, "0x7f", "nan");
    // %t = trunci %n → i8: 7, 0xff, 0xc8, 0x00.
    for (k, b) in ["0x07", "0xff", "0xc8", "0x00"].iter().enumerate() {
        assert_eq!(elt(&out, "%t", k).0, *b);
    }
    // %f = itof %n signed: -1 → 0xbf800000; 65536 = 2^16 → 0x47800000.
    has(&out, "%f", 1, "0xbf800000", "-1");
    has(&out, "%f", 3, "0x47800000", "65536");
    // %i = ftoi %x signed → i32: NaN gives 0 under tileiras, undefined under spec.
    has(&out, "%i", 3, "0x00000000", "0");
    // -0.3 is not exact in f32: a note.
    assert!(out.contains("%x[2]: -0.3 is not exact in f32"), "{out}");
    let out = ok(&[
        "run",
        "examples/tile/quantize.mlir",
        "--arg",
        "%x=[1.0, 300, -0.3, nan]",
        "--arg",
        "%n=0",
        "--semantics",
        "spec",
        "--json",
    ]);
    let v: Json = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["entry"], "k");
    assert_eq!(v["semantics"], "spec");
    let values = v["values"].as_array().expect("values");
    let i = values.iter().find(|x| x["name"] == "%i").expect("%i");
    assert_eq!(i["type"], "tile<4xi32>");
    assert_eq!(i["elements"][0]["bits"], "0x00000001");
    assert_eq!(i["elements"][1]["bits"], "0x0000012c");
    assert_eq!(i["elements"][3]["bits"], Json::Null);
    assert_eq!(i["elements"][3]["undefined"], "ftoi: NaN input");
    // The splat %n=0 gives four zeros.
    let n = values.iter().find(|x| x["name"] == "%n").expect("%n");
    assert_eq!(n["from"], "argument");
    assert_eq!(n["elements"].as_array().map(Vec::len), Some(4));
}

/// Element `k` of a value in `gpucvt run` output: (bits, value).
#[track_caller]
fn elt(out: &str, name: &str, k: usize) -> (String, String) {
    let sec = section(out, name);
    let row = sec
        .lines()
        .skip(3)
        .find(|l| l.split_whitespace().next() == Some(&k.to_string()))
        .unwrap_or_else(|| panic!("no element {k} of {name} in:\n{sec}"));
    let mut words = row.split_whitespace().skip(1);
    let bits = words.next().unwrap_or("").to_string();
    (bits, words.collect::<Vec<_>>().join(" "))
}

#[track_caller]
fn has(out: &str, name: &str, k: usize, bits: &str, value: &str) {
    assert_eq!(
        elt(out, name, k),
        (bits.to_string(), value.to_string()),
        "{name}[{k}] in:\n{out}"
    );
}

/// The lines of one value's table in `gpucvt run` output.
fn section<'a>(out: &'a str, name: &str) -> &'a str {
    let start = out
        .find(&format!("\n{name} : "))
        .unwrap_or_else(|| panic!("no {name} in:\n{out}"));
    let rest = &out[start + 1..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn run_with_constants_and_targets() {
    let file = "examples/tile/double_rounding.mlir";
    let out = ok(&["run", file]);
    // See the vectors of section_3_4_double_rounding_tileiras_and_spec.
    has(&out, "%e", 0, "0x6c", "4096");
    has(&out, "%t", 1, "0x4b800000", "16777216");
    has(&out, "%q", 0, "0x38", "1");
    has(&out, "%x", 1, "0x3f800000", "1");
    // sm_100a converts f64 → bf16 directly: 1 + 2^-7 = 1.0078125.
    has(&out, "%b", 2, "0x3f81", "1.0078125");
    // +inf → i32: cvt.rzi clamps to INT_MAX.
    has(&out, "%k", 3, "0x7fffffff", "2147483647");
    // tileiras has no fp8 before sm_90: a clear error, nothing printed.
    let e = fails(&["run", file, "--target", "sm_80"]);
    assert!(e.contains("needs sm_90 or newer for f8E5M2"), "{e}");
    let out = ok(&["run", file, "--semantics", "spec"]);
    has(&out, "%e", 0, "0x6d", "5120");
    has(&out, "%t", 1, "0x4b802000", "16793600");
    has(&out, "%q", 0, "0x39", "1.125");
    has(&out, "%x", 1, "0x3f802000", "1.0009765625");
    has(&out, "%b", 2, "0x3f81", "1.0078125");
    has(&out, "%k", 3, "undefined", "ftoi: infinite input");
    assert!(out.contains("1 undefined element(s)"), "{out}");
}

#[test]
fn run_errors() {
    let q = "examples/tile/quantize.mlir";
    let e = fails(&["run", q, "--arg", "%x=1.0"]);
    assert!(e.contains("needs a value for %n"), "{e}");
    let e = fails(&[
        "run", q, "--arg", "%x=1.0", "--arg", "%n=1", "--arg", "%z=1",
    ]);
    assert!(e.contains("no argument %z"), "{e}");
    let e = fails(&["run", q, "--arg", "%x=[1.0, 2.0]", "--arg", "%n=1"]);
    assert!(e.contains("needs 4 element value(s)"), "{e}");
    let e = fails(&["run", q, "--arg", "%x=1.0", "--arg", "%n=1.5"]);
    assert!(e.contains("%n"), "{e}");
    let e = fails(&["run", q, "--arg", "%x", "--arg", "%n=1"]);
    assert!(e.contains("NAME=VALUES"), "{e}");
    let e = fails(&[
        "run", q, "--arg", "%x=1", "--arg", "%n=1", "--entry", "nope",
    ]);
    assert!(e.contains("--entry nope"), "{e}");
    let e = fails(&[
        "run",
        q,
        "--arg",
        "%x=1",
        "--arg",
        "%n=1",
        "--semantics",
        "hardware",
    ]);
    assert!(e.contains("--semantics"), "{e}");
    let e = fails(&["run", q, "--arg", "%x=1", "--arg", "%n=1", "--cr0", "rtz"]);
    assert!(e.contains("--cr0"), "{e}");
    let e = fails(&["run", "examples/ptx/quantize_fp8.ptx", "--arg", "%f1=1"]);
    assert!(e.contains("--arg"), "{e}");
    // fp8 needs sm_90 in tileiras.
    let e = fails(&[
        "run", q, "--arg", "%x=1", "--arg", "%n=1", "--target", "sm_80",
    ]);
    assert!(e.contains("sm_90"), "{e}");
    // A file with verifier errors: the diagnostics on stderr, exit 1, nothing run.
    let (code, out, err) = gpucvt(&[
        "run",
        "examples/tile/mistakes.mlir",
        "--arg",
        "%x=1",
        "--arg",
        "%n=1",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("examples/tile/mistakes.mlir:4:5: error[tile.verify]"),
        "{err}"
    );
    assert!(err.contains("nothing was run"), "{err}");
    let e = fails(&["run", "examples/tile/missing.mlir"]);
    assert!(e.contains("cannot read"), "{e}");
}

#[test]
fn run_several_entries_and_skipped_ops() {
    let dir = std::env::temp_dir().join(format!("gpucvt-tile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("two.mlir");
    std::fs::write(
        &path,
        "cuda_tile.module @m {
  entry @a(%s: tile<f32>) {
    %h = ftof %s : tile<f32> -> tile<f16>
    %p = get_global @g : tile<ptr<f32>>
    return
  }
  entry @b(%c: tile<2xi1>) {
    %f = itof %c unsigned : tile<2xi1> -> tile<2xf32>
    return
  }
}
",
    )
    .expect("write");
    let p = path.to_str().expect("UTF-8 path");
    let e = fails(&["run", p, "--arg", "%s=1.0"]);
    assert!(e.contains("several entries (@a, @b)"), "{e}");
    // 0.1 is not exact in f32: a note; f16 of 0.1f32 is 0x2e66.
    let out = ok(&["run", p, "--entry", "a", "--arg", "%s=0.1"]);
    has(&out, "%h", 0, "0x2e66", "0.0999755859375");
    assert!(out.contains("not exact in f32"), "{out}");
    assert!(out.contains(":4:5: get_global not evaluated"), "{out}");
    let out = ok(&["run", p, "--entry", "@b", "--arg", "%c=[true, false]"]);
    has(&out, "%f", 0, "0x3f800000", "1");
    has(&out, "%f", 1, "0x00000000", "0");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_unmodelled_intermediates() {
    let dir = std::env::temp_dir().join(format!("gpucvt-tile-u-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("addf.mlir");
    std::fs::write(
        &path,
        "cuda_tile.module @m {
  entry @k(%x: tile<2xf32>) {
    %y = addf %x, %x : tile<2xf32>
    %z = mulf %x, %x : tile<2xf32>
    %h = ftof %y : tile<2xf32> -> tile<2xf16>
    return
  }
}
",
    )
    .expect("write");
    let p = path.to_str().expect("UTF-8 path");
    // ftof reads %y, which addf defines: an error naming addf and suggesting --arg %y.
    let (code, out, err) = gpucvt(&["run", p, "--arg", "%x=1.0"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains(":5:15: error[tile.run-unknown]: %y is unknown: `%y = addf %x, %x : tile<2xf32>` at 3:5"),
        "{err}"
    );
    assert!(
        err.contains("--arg %y=…") && err.ends_with("execution stopped\n"),
        "{err}"
    );
    // With --arg %y it runs: 2.0 -> 0x4000, -1 -> 0xbc00; %z stays unknown.
    let out = ok(&["run", p, "--arg", "%x=1.0", "--arg", "%y=[2.0, -1]"]);
    has(&out, "%h", 0, "0x4000", "2");
    has(&out, "%h", 1, "0xbc00", "-1");
    assert!(
        out.contains("\n%y : tile<2xf32>  (--arg (for addf))\n"),
        "{out}"
    );
    assert!(
        out.contains("\n%z : tile<2xf32>  (mulf, not evaluated)\nunknown: written by `%z = mulf %x, %x : tile<2xf32>` at 4:5; give it with --arg %z=…\n"),
        "{out}"
    );
    assert!(out.contains(":3:5: addf not evaluated: only constants and conversion ops run; %y keeps the --arg value"), "{out}");
    assert!(
        out.contains(
            ":4:5: mulf not evaluated: only constants and conversion ops run; %z is unknown"
        ),
        "{out}"
    );
    // JSON: the same note shape as PTX and vISA; %z with "unknown".
    let out = ok(&[
        "run", p, "--arg", "%x=1.0", "--arg", "%y=2", "--arg", "%h=0", "--json",
    ]);
    let v: Json = serde_json::from_str(&out).expect("JSON");
    for n in v["notes"].as_array().expect("notes") {
        let mut k: Vec<&String> = n.as_object().expect("object").keys().collect();
        k.sort();
        assert_eq!(k, ["column", "line", "message", "rule", "severity"], "{n}");
    }
    let notes = v["notes"].as_array().expect("notes");
    assert!(
        notes
            .iter()
            .any(|n| n["rule"] == "tile.run-unused" && n["line"] == 5),
        "{out}"
    );
    let z = v["values"]
        .as_array()
        .expect("values")
        .iter()
        .find(|x| x["name"] == "%z")
        .expect("%z");
    assert_eq!(z["unknown"]["line"], 4);
    assert_eq!(z["unknown"]["supply"], "--arg %z=…");
    assert_eq!(z["type"], "tile<2xf32>");
    assert_eq!(z["elements"].as_array().map(Vec::len), Some(0));
    // A name nothing defines is still an error.
    let e = fails(&["run", p, "--arg", "%x=1.0", "--arg", "%w=1"]);
    assert!(e.contains("no argument %w and no op defines it"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `gpucvt check` on every file of the Tile IR corpus (NVIDIA's valid cuda-tile test files
/// and gpucvt's own syntax files): exit 0, no error, skipped ops as notes. A BOM and CR or
/// CRLF line endings read the same.
#[test]
fn check_valid_corpus_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpucvt/tests/data/tile");
    let mut n = 0;
    for dir in ["cuda-tile", "syntax"] {
        for e in std::fs::read_dir(root.join(dir)).expect("corpus dir") {
            let p = e.expect("entry").path();
            if p.extension().is_none_or(|x| x != "mlir") {
                continue;
            }
            let path = p.to_str().expect("UTF-8 path");
            let (code, out, err) = gpucvt(&["check", path]);
            assert_eq!(code, 0, "{path}: {out}{err}");
            assert!(!out.contains("error["), "{path}: {out}");
            n += 1;
        }
    }
    assert!(n >= 30, "{n}");
    let regions = root.join("syntax/regions.mlir");
    let out = ok(&["check", regions.to_str().expect("UTF-8 path")]);
    assert!(
        out.contains(
            "regions.mlir:9:14: note[tile.skipped]: op 'addf' is not modelled by gpucvt: read and skipped (3 times)"
        ),
        "{out}"
    );
    assert!(out.ends_with(": 0 errors, 0 warnings, 8 notes\n"), "{out}");
    // The same file with a BOM and CR line endings: the same report, the same positions.
    let dir = std::env::temp_dir().join(format!("gpucvt-tile-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let text = std::fs::read_to_string(&regions).expect("read");
    let bad = text.replace("%f = itof %iv signed", "%f = itof %ivx signed");
    for (name, t) in [
        ("bom.mlir", format!("\u{feff}{bad}")),
        ("cr.mlir", bad.replace('\n', "\r")),
        ("crlf.mlir", bad.replace('\n', "\r\n")),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, t).expect("write");
        let (code, out, _) = gpucvt(&["check", p.to_str().expect("UTF-8 path")]);
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains(&format!(
                "{name}:28:17: error[tile.ssa]: use of undeclared SSA value name\n   |\n28 |       %f = itof %ivx signed : tile<i32> -> tile<f32>\n"
            )),
            "{out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
