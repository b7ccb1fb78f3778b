//! End-to-end tests of `gpucvt check` and `gpucvt run` on the example files under
//! `examples/`: exact diagnostics (line, column, rule, message), the JSON contract, exit
//! codes, and register values worked out by hand from the formats (the comments show the
//! arithmetic).

use crate::common::gpucvt;

use serde_json::Value as Json;

/// The first lines (`file:line:col: severity[rule]: message`) of the plain output.
fn heads(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.contains(": error[") || l.contains(": warning["))
        .collect()
}

#[test]
fn check_ptx_mistakes_exact_diagnostics() {
    let (code, out, err) = gpucvt(&["check", "examples/ptx/mistakes.ptx"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.is_empty());
    let p = "examples/ptx/mistakes.ptx";
    let expected = [
        // 1. missing rounding modifier, at `cvt`
        (
            18,
            5,
            "ptx.rounding-required",
            "cvt.f16.f32 needs a rounding modifier",
        ),
        // 2. illegal .sat, at `.sat`
        (
            20,
            11,
            "ptx.modifier-illegal",
            "'.sat' does not apply to cvt.bf16x2.f32",
        ),
        // 3. missing .satfinite
        (22, 5, "ptx.modifier-required", "requires '.satfinite'"),
        // 4. wrong operand count, at the operand list
        (
            24,
            22,
            "ptx.operand-count",
            "takes 3 operands (d, a, b), found 2",
        ),
        // 5. wrong register type, at `%fd1`
        (26, 20, "ptx.register-type", "%fd1 is a .f64 register"),
        // 6. a feature above the file's target (sm_80), at `.rs`
        (28, 8, "ptx.target", "not supported on sm_80"),
        // 7. unknown type, at `.f12`
        (
            30,
            11,
            "ptx.unknown-modifier",
            "'.f12' is neither a modifier nor a type",
        ),
    ];
    let h = heads(&out);
    assert_eq!(h.len(), expected.len(), "{out}");
    for (line, (l, c, rule, msg)) in h.iter().zip(expected) {
        let prefix = format!("{p}:{l}:{c}: error[{rule}]: ");
        assert!(line.starts_with(&prefix), "{line:?} vs {prefix:?}");
        assert!(line.contains(msg), "{line:?} lacks {msg:?}");
    }
    // The source line and a caret under the span.
    assert!(
        out.contains("18 |     cvt.f16.f32 %h1, %f1;\n   |     ^^^\n"),
        "{out}"
    );
    assert!(out.contains("   |           ^^^^\n"), "{out}");
    assert!(out.ends_with("examples/ptx/mistakes.ptx: 7 errors, 0 warnings\n"));
}

#[test]
fn check_json_contract() {
    let (code, out, _) = gpucvt(&["check", "examples/ptx/mistakes.ptx", "--json"]);
    assert_eq!(code, 1);
    let v: Json = serde_json::from_str(&out).expect("JSON");
    let arr = v.as_array().expect("an array");
    assert_eq!(arr.len(), 7);
    for d in arr {
        let obj = d.as_object().expect("objects");
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["column", "line", "message", "rule", "severity"]);
        assert_eq!(obj["severity"], "error");
    }
    assert_eq!(arr[0]["line"], 18);
    assert_eq!(arr[0]["column"], 5);
    assert_eq!(arr[0]["rule"], "ptx.rounding-required");
    assert_eq!(arr[5]["rule"], "ptx.target");
    // A clean file: an empty array, exit 0.
    let (code, out, _) = gpucvt(&["check", "examples/ptx/quantize_fp8.ptx", "--json"]);
    assert_eq!((code, out.trim()), (0, "[]"));
}

#[test]
fn check_target_override_and_exit_codes() {
    let (code, out, _) = gpucvt(&["check", "examples/ptx/quantize_fp8.ptx"]);
    assert_eq!(code, 0);
    assert_eq!(out, "examples/ptx/quantize_fp8.ptx: 0 errors, 0 warnings\n");
    // On sm_90 the FP4 conversion is not available (it points at the types).
    let (code, out, _) = gpucvt(&[
        "check",
        "examples/ptx/quantize_fp8.ptx",
        "--target",
        "sm_90",
    ]);
    assert_eq!(code, 1);
    assert!(
        heads(&out)
            .iter()
            .any(|l| l.starts_with("examples/ptx/quantize_fp8.ptx:34:21: error[ptx.target]: ")),
        "{out}"
    );
    // Usage problems: exit 2 with one line on stderr.
    for args in [
        &["check", "README.md"][..],
        &["check", "examples/ptx/no-such-file.ptx"],
        &["check", "examples/ptx/mistakes.ptx", "--target", "sm_999x"],
        &[
            "check",
            "examples/visa/f_to_hf.visaasm",
            "--target",
            "sm_90",
        ],
    ] {
        let (code, out, err) = gpucvt(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1,
            "{err}"
        );
    }
    let (_, _, err) = gpucvt(&["check", "README.md"]);
    assert!(err.contains(".ptx") && err.contains(".visaasm"));
}

#[test]
fn check_visa_files() {
    let (code, out, _) = gpucvt(&["check", "examples/visa/f_to_hf.visaasm"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "examples/visa/f_to_hf.visaasm: 0 errors, 0 warnings\n")
    );
    let (code, out, _) = gpucvt(&["check", "examples/visa/mistakes.visaasm", "--json"]);
    assert_eq!(code, 1);
    let v: Json = serde_json::from_str(&out).unwrap();
    let arr = v.as_array().unwrap();
    assert!(arr.iter().any(|d| d["severity"] == "warning"));
    // Line 17: a predicate source needs an integer destination.
    assert!(arr
        .iter()
        .any(|d| d["line"] == 17 && d["column"] == 1 && d["rule"] == "visa.predicate"));
    // Diagnostics come in source order.
    let lines: Vec<i64> = arr.iter().map(|d| d["line"].as_i64().unwrap()).collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
}

const QUANTIZE_SETS: [&str; 8] = [
    "--set",
    "%f1=1.0",
    "--set",
    "%f2=300",
    "--set",
    "%f3=-0.3",
    "--set",
    "%f4=0.0625",
];

#[test]
fn run_quantize_kernel_exact_values() {
    let mut args = vec!["run", "examples/ptx/quantize_fp8.ptx", "--json"];
    args.extend(QUANTIZE_SETS);
    let (code, out, err) = gpucvt(&args);
    assert_eq!(code, 0, "{err}");
    let v: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(v["entry"], "quantize_fp8");
    let reg = |name: &str| -> (String, String) {
        let r = v["registers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        (
            r["bits"].as_str().unwrap().to_string(),
            r["value"].as_str().unwrap().to_string(),
        )
    };
    let bits = |name: &str| reg(name).0;
    // e4m3 (bias 7): 1.0 = 0 0111 000 = 0x38; 300 lies between 288 and 320 (step 32 in
    // [256, 512)), nearer 288 = 1.125 * 2^8 = 0 1111 001 = 0x79. a is the high byte.
    assert_eq!(reg("%h1"), ("0x3879".into(), "[1, 288]".into()));
    // -0.3 (as f32) between 0.28125 and 0.3125 (step 1/32), nearer 0.3125 = 1.25 * 2^-2 =
    // 1 0101 010 = 0xaa; 0.0625 = 2^-4 = 0 0011 000 = 0x18.
    assert_eq!(bits("%h2"), "0xaa18");
    // e5m2 (bias 15) with relu: -0.3 -> +0 = 0x00; 2^-4 = 0 01011 00 = 0x2c.
    assert_eq!(bits("%h3"), "0x002c");
    // e2m1: 1.0 = 0 01 0 = 0x2; 300 saturates to 6.0 = 0 11 1 = 0x7. Two lanes in a byte.
    assert_eq!(reg("%q1"), ("0x27".into(), "[1, 6]".into()));
    // bf16 with relu: -0.3 -> 0x0000; 2^-4: exponent 123 = 0x7b -> 0x3d80.
    assert_eq!(bits("%r1"), "0x00003d80");
    // e4m3x2 -> f16x2, exact: 1.0 = 0x3c00; 288 = 1.125 * 2^8: exponent 23, fraction 0x080.
    assert_eq!(bits("%r2"), "0x3c005c80");
    // mov.f32 0f3FC00000 = 1.5; mov.f32 0.1 (a double) rounds to f32 0x3dcccccd.
    assert_eq!(bits("%f5"), "0x3fc00000");
    assert_eq!(bits("%f6"), "0x3dcccccd");
    // 1.5 = 0 0111 100 = 0x3c; 0.1 in [1/16, 1/8) with step 1/128: 12.8 steps -> 13,
    // 0.1015625 = 1.625 * 2^-4 = 0 0011 101 = 0x1d.
    assert_eq!(reg("%h4"), ("0x3c1d".into(), "[1.5, 0.1015625]".into()));
    // mov.s32 -7 fills the register: 0xfffffff9.
    assert_eq!(bits("%s2"), "0xfffffff9");
    // cvt.pack.sat.u8.s32.b32: a = 300 -> 255 in bits 15:8, b = -7 -> 0 in bits 7:0, c = 0.
    assert_eq!(bits("%r4"), "0x0000ff00");
    // mov.b32 {%h2, %h1}: the first element in the low half.
    assert_eq!(bits("%r5"), "0x3879aa18");
    // The loads and the store are skipped with notes, at their positions.
    let notes = v["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n["line"] == 26
        && n["rule"] == "ptx.run-skipped"
        && n["message"]
            .as_str()
            .unwrap()
            .starts_with("ld.global.v4.f32")));
    assert!(notes.iter().any(|n| n["rule"] == "ptx.run-inexact"));
    // %rd3 (cvta) is unknown: bits null, the instruction that wrote it.
    let rd3 = v["registers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "%rd3")
        .unwrap();
    assert_eq!(rd3["bits"], Json::Null);
    assert_eq!(rd3["value"], "unknown");
    assert_eq!(
        rd3["unknown"]["instruction"],
        "cvta.to.global.u64 %rd3, %rd1"
    );
    assert_eq!(
        (
            rd3["unknown"]["line"].as_u64(),
            rd3["unknown"]["column"].as_u64()
        ),
        (Some(25), Some(5))
    );
    assert_eq!(rd3["unknown"]["supply"], "--set %rd3=…");
    // Known registers have no "unknown" field.
    let h1 = v["registers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "%h1")
        .unwrap();
    assert!(h1.get("unknown").is_none(), "{out}");
}

/// Writes `text` to a fresh temporary file named `name` and returns its path.
fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("gpucvt-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn run_unknown_values_in_ptx_and_visa() {
    // PTX: ld.global writes %f1, cvt reads it.
    let p = temp_file(
        "load.ptx",
        ".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n    .reg .f32 %f<2>;\n    .reg .b16 %h;\n    .reg .b64 %rd<2>;\n    ld.param.u64 %rd1, [p];\n    ld.global.f32 %f1, [%rd1];\n    cvt.rn.f16.f32 %h, %f1;\n}\n",
    );
    let (code, out, err) = gpucvt(&["run", &p]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains(
            ":11:24: error[ptx.run-unknown]: %f1 is unknown: `ld.global.f32 %f1, [%rd1]` at 10:5"
        ),
        "{err}"
    );
    assert!(err.contains("--set %f1=…"), "{err}");
    let (code, out, err) = gpucvt(&["run", &p, "--set", "%f1=1.5", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Json = serde_json::from_str(&out).unwrap();
    let h = v["registers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "%h")
        .unwrap();
    assert_eq!(h["bits"], "0x3e00");
    let notes = v["notes"].as_array().unwrap();
    let keys = |n: &Json| {
        let mut k: Vec<String> = n.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    for n in notes {
        assert_eq!(keys(n), ["column", "line", "message", "rule", "severity"]);
    }
    assert!(notes.iter().any(|n| n["line"] == 10
        && n["message"] == "ld.global.f32 not executed: only mov, cvt and cvt.pack run; %f1 keeps the --set value"));

    // vISA: an add writes V33, a mov converts it.
    let vread = ".decl V32 v_type=G type=f num_elts=8\n.decl V33 v_type=G type=f num_elts=8\n.decl H v_type=G type=hf num_elts=8\nadd (M1, 8) V33(0,0)<1> V32(0,0)<1;1,0> 0x3f800000:f\nmov (M1, 8) H(0,0)<1> V33(0,0)<1;1,0>\n";
    let p = temp_file("read.visaasm", vread);
    let (code, out, err) = gpucvt(&["run", &p]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains(
            ":5:23: error[visa.run-unknown]: element 0 of V33 is unknown: `add (M1, 8) V33(0,0)<1>"
        ),
        "{err}"
    );
    assert!(
        err.contains("--set V33=…") && err.ends_with("execution stopped\n"),
        "{err}"
    );
    let (code, out, err) = gpucvt(&["run", &p, "--set", "V33=[1,2,3,4,5,6,7,8]"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["1", "0x4000", "2"]),
        "{out}"
    );

    // vISA: the add's result is never read: it runs, V33 is shown unknown, with a note.
    let p = temp_file(
        "unread.visaasm",
        &vread.replace("H(0,0)<1> V33", "H(0,0)<1> V32"),
    );
    let (code, out, err) = gpucvt(&["run", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\nV33 (f, 8 elements)\n"), "{out}");
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["0", "unknown", "unknown", "(add", "at", "4:1)"]),
        "{out}"
    );
    assert!(
        out.contains(
            ":4:1: warning[visa.run-skipped]: add not executed: only mov runs; V33 is unknown"
        ),
        "{out}"
    );
    let (code, out, _) = gpucvt(&["run", &p, "--json"]);
    assert_eq!(code, 0);
    let v: Json = serde_json::from_str(&out).unwrap();
    let v33 = v["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "V33")
        .unwrap();
    let e0 = &v33["elements"][0];
    assert_eq!(e0["bits"], Json::Null);
    assert_eq!(e0["value"], "unknown");
    assert_eq!(e0["unknown"]["line"], 4);
    assert_eq!(e0["unknown"]["supply"], "--set V33=…");
    let n = &v["notes"][0];
    assert_eq!(
        (n["rule"].as_str(), n["severity"].as_str()),
        (Some("visa.run-skipped"), Some("warning"))
    );
}

#[test]
fn run_plain_output_and_errors() {
    let mut args = vec!["run", "examples/ptx/quantize_fp8.ptx"];
    args.extend(QUANTIZE_SETS);
    let (code, out, _) = gpucvt(&args);
    assert_eq!(code, 0);
    assert!(out.starts_with("entry quantize_fp8: 14 statement(s) executed"));
    assert!(out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
        == ["%h1", "b16", "e4m3x2", "0x3879", "[1,", "288]"]));
    // Without the loaded values: the first read of %f1 stops, with its position, naming
    // the load that wrote it and the option that supplies it.
    let (code, out, err) = gpucvt(&["run", "examples/ptx/quantize_fp8.ptx"]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.starts_with(
        "examples/ptx/quantize_fp8.ptx:29:46: error[ptx.run-unknown]: %f1 is unknown: `ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd3]` at 26:5 writes it"
    ), "{err}");
    assert!(err.contains("--set %f1=…"), "{err}");
    assert!(err.ends_with("execution stopped\n"), "{err}");
    // With them, the address registers the skipped loads wrote are listed as unknown.
    let mut args = vec!["run", "examples/ptx/quantize_fp8.ptx"];
    args.extend(QUANTIZE_SETS);
    let (_, out, _) = gpucvt(&args);
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == [
                "%rd1",
                "b64",
                "b64",
                "unknown",
                "unknown",
                "(ld.param.u64",
                "at",
                "23:5)"
            ]),
        "{out}"
    );
    // A file with errors is not run.
    let (code, _, err) = gpucvt(&["run", "examples/ptx/mistakes.ptx"]);
    assert_eq!(code, 1);
    assert!(err.ends_with("nothing was run\n"));
    // Bad options: exit 2, one line.
    for args in [
        &["run", "examples/ptx/quantize_fp8.ptx", "--set", "%f1=abc"][..],
        &["run", "examples/ptx/quantize_fp8.ptx", "--set", "%nope=1"],
        &["run", "examples/ptx/quantize_fp8.ptx", "--set", "novalue"],
        &["run", "examples/ptx/quantize_fp8.ptx", "--entry", "other"],
        &["run", "examples/ptx/quantize_fp8.ptx", "--set", "%s1=1.5"],
        &["run", "examples/ptx/quantize_fp8.ptx", "--cr0", "rtz"],
    ] {
        let (code, _, err) = gpucvt(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1,
            "{err}"
        );
    }
}

#[test]
fn run_visa_examples() {
    // convert_uchar_sat: F -> UB with .sat; DF -> UB with .sat through W; DF -> UB raw.
    let (code, out, err) = gpucvt(&[
        "run",
        "examples/visa/sat_f_to_ub.visaasm",
        "--set",
        "X=[-1.5,0.5,2.5,3.5,255.5,300,nan,-0.0]",
        "--set",
        "XD=[300,-2.5,1e10,255.5]",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Json = serde_json::from_str(&out).unwrap();
    let var = |name: &str| -> Vec<String> {
        v["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap()["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["bits"].as_str().unwrap().to_string())
            .collect()
    };
    // Float -> int rounds toward zero (cr0 = 0): -1.5 -> 0 (clamped), 0.5 -> 0, 2.5 -> 2,
    // 3.5 -> 3, 255.5 -> 255, 300 -> 255, NaN -> 0, -0 -> 0; then 300 -> 255, -2.5 -> 0,
    // 1e10 -> 255, 255.5 -> 255; then the immediate 0x3210:uv gives 0, 1, 2, 3.
    assert_eq!(
        var("Y"),
        [
            "0x00", "0x00", "0x02", "0x03", "0xff", "0xff", "0x00", "0x00", "0xff", "0x00", "0xff",
            "0xff", "0x00", "0x01", "0x02", "0x03"
        ]
    );
    // Without .sat DF -> W -> UB: 300 = 0x012c -> 0x2c; -2.5 -> -2 = 0xfffe -> 0xfe;
    // 1e10 saturates to 32767 = 0x7fff -> 0xff; 255.5 -> 255 = 0xff.
    assert_eq!(var("YRAW"), ["0x2c", "0xfe", "0xff", "0xff"]);

    // f_to_hf with cr0's rounding toward zero: 65520 -> 65504 (0x7bff) instead of +inf.
    let (code, out, _) = gpucvt(&[
        "run",
        "examples/visa/f_to_hf.visaasm",
        "--set",
        "vector331=[1.0,65520,-2]",
        "--cr0",
        "rtz",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("\nvectorized_cast (hf, 32 elements)\n"),
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(rows.contains(&vec!["0", "0x3c00", "1"]));
    assert!(rows.contains(&vec!["1", "0x7bff", "65504"]));
    assert!(rows.contains(&vec!["2", "0xc000", "-2"]));
    // The mistakes file does not run: exit 1, diagnostics on stderr.
    let (code, _, err) = gpucvt(&["run", "examples/visa/mistakes.visaasm"]);
    assert_eq!(code, 1);
    assert!(err.contains("error[visa."), "{err}");
    // A bad element: exit 2.
    let (code, _, err) = gpucvt(&[
        "run",
        "examples/visa/sat_f_to_ub.visaasm",
        "--set",
        "X=[1,x]",
    ]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn check_tile_ir_files() {
    let (code, out, _) = gpucvt(&["check", "examples/tile/quantize.mlir"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 errors"), "{out}");
    let (code, out, _) = gpucvt(&["check", "examples/tile/mistakes.mlir", "--json"]);
    assert_eq!(code, 1);
    let v: Json = serde_json::from_str(&out).expect("JSON");
    let diags = v.as_array().expect("an array");
    let got: Vec<(u64, u64, &str)> = diags
        .iter()
        .map(|d| {
            assert_eq!(d["severity"], "error");
            assert_eq!(d["rule"], "tile.verify");
            (
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!((got[0].0, got[0].1), (4, 5));
    assert!(got[0].2.contains("types must be equal width"));
    assert!(got[1]
        .2
        .contains("extending to smaller or identical integer"));
    assert!(got[2].2.contains("must not be a no-op"));
    assert!(got[3]
        .2
        .contains("integer to f8E8M0FNU conversion is not supported"));
    // A 13.1 file cannot use 13.4's saturating flag; bad versions are usage errors.
    let (code, _, err) = gpucvt(&[
        "check",
        "examples/tile/quantize.mlir",
        "--tile-version",
        "9.9",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--tile-version"), "{err}");
}

#[test]
fn table_tile_lists_legal_ops() {
    let (code, out, _) = gpucvt(&["table", "tile"]);
    assert_eq!(code, 0);
    assert!(out
        .lines()
        .any(|l| l.starts_with("ftof") && l.contains("f32") && l.contains("f16")));
    // itof to f8E8M0FNU is rejected by the verifier, so it is not in the table.
    assert!(!out
        .lines()
        .any(|l| l.starts_with("itof") && l.contains("f8E8M0FNU")));
}

/// A PTX file in a fresh temporary directory.
fn temp_ptx(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gpucvt-check-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.ptx"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn check_renders_lines_of_cr_only_ptx() {
    let text = ".version 8.0\r.target sm_90\r.entry k()\r{\r.reg .f32 %f;\r.reg .b16 %h;\r  cvt.f16.f32 %h, %f;\r}\r";
    let path = temp_ptx("cr", text);
    let p = path.to_str().unwrap();
    let (code, out, err) = gpucvt(&["check", p]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains(&format!(
            "{p}:7:3: error[ptx.rounding-required]: cvt.f16.f32 needs a rounding modifier"
        )),
        "{out}"
    );
    assert!(
        out.contains("7 |   cvt.f16.f32 %h, %f;\n  |   ^^^\n"),
        "{out}"
    );
}

#[test]
fn check_shows_at_most_ten_thousand_diagnostics() {
    let n = 10_050;
    let mut text =
        String::from(".version 8.0\n.target sm_90\n.entry k()\n{\n.reg .f32 %f;\n.reg .b16 %h;\n");
    for _ in 0..n {
        text.push_str("cvt.f16.f32 %h, %f;\n");
    }
    text.push_str("}\n");
    let path = temp_ptx("many", &text);
    let p = path.to_str().unwrap();
    let (code, out, _) = gpucvt(&["check", p]);
    assert_eq!(code, 1);
    assert_eq!(heads(&out).len(), 10_000);
    // The last one shown is the 10,000th, on line 6 + 10,000.
    assert!(heads(&out)[9_999].starts_with(&format!("{p}:10006:1: ")));
    assert!(
        out.contains(&format!(
            "{p}: 50 more diagnostics not shown (the first 10000 are; --json lists all)\n"
        )),
        "{}",
        &out[out.len().saturating_sub(400)..]
    );
    assert!(out.ends_with(&format!("{p}: {n} errors, 0 warnings\n")));
    let (_, json, _) = gpucvt(&["check", p, "--json"]);
    let v: Json = serde_json::from_str(&json).unwrap();
    assert_eq!(v.as_array().unwrap().len(), n);
}
