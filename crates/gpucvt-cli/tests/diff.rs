//! `gpucvt diff`: the real binary on small sweeps (16-bit sources exhaustively, f32 and f64
//! sources sampled), JSON output and the error cases.

/// Runs `gpucvt diff` with `args`.
fn run(args: &[&str]) -> (i32, String, String) {
    let mut a = vec!["diff"];
    a.extend_from_slice(args);
    crate::common::run(&a)
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "gpucvt diff {args:?} failed: {err}");
    assert!(
        err.is_empty(),
        "gpucvt diff {args:?} wrote to stderr: {err}"
    );
    out
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    serde_json::from_str(&ok(&a)).expect("valid JSON")
}

fn count(j: &serde_json::Value, class: &str) -> u64 {
    j["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == class)
        .unwrap()["count"]
        .as_u64()
        .unwrap()
}

#[test]
fn f16_to_f32_exhaustively() {
    // Both are exact; PTX returns the canonical NaN 0x7fffffff, vISA keeps sign and payload
    // (low 13 bits zero), so exactly the 2046 NaN inputs differ.
    let out = ok(&["cvt.f32.f16", "mov f <- hf", "--visa-cr0", "0x4C0"]);
    assert!(out.contains("A: cvt.f32.f16"), "{out}");
    assert!(out.contains("B: mov f <- hf"), "{out}");
    assert!(
        out.contains("inputs: 65,536 (every 16-bit source pattern)"),
        "{out}"
    );
    assert!(out.contains("differ: 2,046 "), "{out}");
    assert!(
        out.contains("nan-encoding (2,046 inputs; 5 of them):"),
        "{out}"
    );
    let j = json(&[
        "cvt.f32.f16",
        "mov f <- hf",
        "--visa-cr0",
        "0x4C0",
        "--examples",
        "2",
    ]);
    assert_eq!(j["inputs"], 65536);
    assert_eq!(j["exhaustive"], true);
    assert_eq!(j["differ"], 2046);
    assert_eq!(count(&j, "nan-encoding"), 2046);
    let ex = j["classes"][0]["examples"].as_array().unwrap();
    assert_eq!(ex.len(), 2);
    assert_eq!(ex[0]["a"], "0x7fffffff");
    assert_eq!(ex[0]["a_value"], "nan");
}

#[test]
fn f32_to_f16_under_rne_and_rtz() {
    // Under RNE the models agree on every number; NaNs differ in encoding only.
    let j = json(&[
        "cvt.rn.f16.f32",
        "mov hf <- f",
        "--visa-cr0",
        "0x4C0",
        "--sample",
        "200000",
    ]);
    assert_eq!(j["exhaustive"], false);
    assert_eq!(j["inputs"], 200000);
    let differ = j["differ"].as_u64().unwrap();
    assert!(differ > 0);
    assert_eq!(count(&j, "nan-encoding"), differ);
    // Under RTZ, roundings and overflows (inf vs 65504) appear.
    let j = json(&[
        "cvt.rn.f16.f32",
        "mov hf <- f",
        "--visa-cr0",
        "rtz",
        "--sample",
        "200000",
    ]);
    assert!(count(&j, "rounding") > 1000);
    assert!(count(&j, "overflow") > 0);
    assert_eq!(count(&j, "other"), 0);
    assert_eq!(j["b"]["cr0"], "0x30");
}

#[test]
fn identical_instructions_agree() {
    let out = ok(&["cvt.rn.bf16.f16", "cvt.rn.bf16.f16"]);
    assert!(out.contains("differ: 0 (0%)"), "{out}");
    assert!(out.contains("same bits on every input compared"), "{out}");
}

#[test]
fn f64_sources_are_sampled() {
    let out = ok(&[
        "cvt.rn.f32.f64",
        "mov f <- df",
        "--sample",
        "5000",
        "--seed",
        "9",
    ]);
    assert!(out.contains("inputs: 5,000 (a sample"), "{out}");
    assert!(out.contains("seed 9"), "{out}");
}

#[test]
fn errors_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["cvt.rn.f16.f32", "mov f <- hf"],
            "source operands differ in width",
        ),
        (&["cvt.rn.f16.f32", "mov f <- f"], "results differ in width"),
        (
            &["cvt.rn.f16x2.f32", "mov hf <- f"],
            "takes 2 source operands",
        ),
        (&["cvt.rn.f16.f32", "mov hf <- zz"], "INSTR_B"),
        (&["add.f32", "mov hf <- f"], "INSTR_A"),
        (
            &["cvt.rn.f16.f32", "mov hf <- f", "--visa-cr0", "bogus"],
            "--visa-cr0",
        ),
        (
            &["cvt.rn.f16.f32", "mov hf <- f", "--sample", "0"],
            "--sample",
        ),
        (
            &["cvt.rn.f16.f32", "mov hf <- f", "--target", "sm_1000"],
            "--target",
        ),
    ];
    for (args, needle) in cases {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let (code, _, _) = run(&["cvt.rn.f16.f32"]);
    assert_eq!(code, 2);
}
