//! Integration tests: run the built `gpucvt` binary and check its real outputs.
//!
//! The expected encodings are worked out by hand from the format definitions (the comments
//! show the arithmetic), or taken from Rust's own correctly rounded `f32`/`f64` parsing, never
//! copied from the program's output.

use crate::common::run;

/// Runs a command that must succeed; returns stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "gpucvt {args:?} failed: {err}");
    assert!(err.is_empty(), "gpucvt {args:?} wrote to stderr: {err}");
    out
}

/// The value of a `key  value` line of the plain output.
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(key).filter(|r| r.starts_with(' ')))
        .unwrap_or_else(|| panic!("no {key} line in:\n{out}"))
        .trim()
}

/// `gpucvt round …`: (bits, value, class, flags).
fn round(args: &[&str]) -> (String, String, String, String) {
    let mut a = vec!["round"];
    a.extend_from_slice(args);
    let out = ok(&a);
    (
        field(&out, "bits").to_string(),
        field(&out, "value").to_string(),
        field(&out, "class").to_string(),
        field(&out, "flags").to_string(),
    )
}

/// Checks bits, value and flags of one `round`.
#[track_caller]
fn check(args: &[&str], bits: &str, value: &str, flags: &str) {
    let (b, v, _, f) = round(args);
    assert_eq!(
        (b.as_str(), v.as_str(), f.as_str()),
        (bits, value, flags),
        "{args:?}"
    );
}

/// Runs a command that must fail with a one-line error and exit code 2; returns the line.
#[track_caller]
fn fails(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(
        code, 2,
        "gpucvt {args:?}: expected exit code 2, stderr: {err}"
    );
    assert!(out.is_empty(), "gpucvt {args:?} wrote to stdout: {out}");
    assert_eq!(
        err.lines().count(),
        1,
        "gpucvt {args:?}: not one line: {err}"
    );
    assert!(err.starts_with("error: "), "{err}");
    err
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("valid JSON")
}

#[test]
fn e4m3_examples() {
    // e4m3: [2, 4) has step 2^(1 − 3) = 0.25; 3.14159 lies between 3 and 3.25 and is nearer
    // 3.25 (0.10841 < 0.14159). 3.25 = 1.625 × 2^1: exponent field 1 + 7 = 8, mantissa
    // 0.625 × 8 = 5: 0 1000 101 = 0x45.
    check(
        &["3.14159", "--to", "e4m3", "--mode", "rn", "--satfinite"],
        "0x45",
        "3.25",
        "inexact",
    );
    // [256, 512) has step 32: 300 → 288 (12 < 20) = 1.125 × 2^8: 0 1111 001 = 0x79.
    check(
        &["300", "--to", "e4m3", "--satfinite"],
        "0x79",
        "288",
        "inexact",
    );
    // 500 rounds to the virtual 480 (> 448): overflow; .satfinite gives 448 = 0x7e, without it
    // e4m3 has no infinity and rn overflows to NaN, 0x7f.
    check(
        &["500", "--to", "e4m3", "--satfinite"],
        "0x7e",
        "448",
        "inexact, overflow, saturated",
    );
    check(&["500", "--to", "e4m3"], "0x7f", "nan", "inexact, overflow");
    // 464 is the tie between 448 (mantissa 110, even) and the virtual 480: 448.
    check(&["464", "--to", "e4m3"], "0x7e", "448", "inexact");
    // 12 = 1.5 × 2^3: 0 1010 100 = 0x54, via --scale 2 from 3.
    check(&["3", "--to", "e4m3", "--scale", "2"], "0x54", "12", "none");
}

#[test]
fn e2m1_rounding_modes() {
    // e2m1 values 4 (0x6, mantissa 0: even) and 6 (0x7); 5 is the tie.
    check(&["5", "--to", "e2m1"], "0x6", "4", "inexact");
    check(
        &["5", "--to", "e2m1", "--mode", "rna"],
        "0x7",
        "6",
        "inexact",
    );
    check(
        &["5", "--to", "e2m1", "--mode", "rz"],
        "0x6",
        "4",
        "inexact",
    );
    check(
        &["5", "--to", "e2m1", "--mode", "rp"],
        "0x7",
        "6",
        "inexact",
    );
    check(
        &["5", "--to", "e2m1", "--mode", "rm"],
        "0x6",
        "4",
        "inexact",
    );
    check(
        &["-5", "--to", "e2m1", "--mode", "rm"],
        "0xf",
        "-6",
        "inexact",
    );
    check(
        &["--to", "e2m1", "-5", "--mode", "rp"],
        "0xe",
        "-4",
        "inexact",
    );
    // Beyond 6 there is nothing: satfinite is implied by the format (no inf, no NaN).
    check(
        &["7", "--to", "e2m1", "--mode", "rp"],
        "0x7",
        "6",
        "inexact, overflow",
    );
}

#[test]
fn stochastic_rounding() {
    // e2m1 around 1.1: neighbours 1 (0x2) and 1.5 (0x3), gap 0.5; the discarded part
    // 0.1 / 0.5 = 0.2 of the gap, as a 4-bit fraction floor(0.2 × 16) = 3. Random 12: 3 + 12
    // = 15 does not carry out of 4 bits; random 13: 16 carries.
    let rs = |r: &str| {
        round(&[
            "1.1",
            "--to",
            "e2m1",
            "--mode",
            "rs",
            "--rbits",
            r,
            "--rbits-width",
            "4",
        ])
        .0
    };
    assert_eq!(rs("0"), "0x2");
    assert_eq!(rs("12"), "0x2");
    assert_eq!(rs("13"), "0x3");
    assert_eq!(rs("0b1111"), "0x3");
    // The default width is 32 bits: 0xffffffff always carries for an inexact value.
    check(
        &[
            "1.1",
            "--to",
            "e2m1",
            "--mode",
            "rs",
            "--rbits",
            "0xffffffff",
        ],
        "0x3",
        "1.5",
        "inexact",
    );
}

#[test]
fn f32_and_f16() {
    // Rust's float parsing is correctly rounded (nearest even).
    let b = format!("{:#010x}", 0.1f32.to_bits());
    assert_eq!(b, "0x3dcccccd");
    check(
        &["0.1", "--to", "f32"],
        &b,
        "0.100000001490116119384765625",
        "inexact",
    );
    // 0x3dcccccc = 13421772 × 2^-27.
    check(
        &["0.1", "--to", "f32", "--mode", "rz"],
        "0x3dcccccc",
        "0.0999999940395355224609375",
        "inexact",
    );
    // 65520 is the tie between 65504 (mantissa 0x3ff, odd) and the virtual 65536: up, and
    // rn overflows to infinity.
    check(
        &["65520", "--to", "f16"],
        "0x7c00",
        "inf",
        "inexact, overflow",
    );
    check(&["65519", "--to", "f16"], "0x7bff", "65504", "inexact");
    check(
        &["1e6", "--to", "f16", "--overflow", "saturate"],
        "0x7bff",
        "65504",
        "inexact, overflow, saturated",
    );
    // The smallest f16 subnormal is 2^-24 ≈ 5.96e-8; 1e-8 is below half of it.
    check(
        &["1e-8", "--to", "f16"],
        "0x0000",
        "0",
        "inexact, underflow",
    );
    check(
        &["-1e-10", "--to", "f16"],
        "0x8000",
        "-0",
        "inexact, underflow",
    );
    check(
        &["-1e-10", "--to", "f16", "--pzo"],
        "0x0000",
        "0",
        "inexact, underflow",
    );
    // Hexadecimal floats are exact.
    check(
        &["0x1p-149", "--to", "f32"],
        "0x00000001",
        "0.00000000000000000000000000000000000000000000140129846432481707092372958328991613128026194187651577175706828388979108268586060148663818836212158203125",
        "none",
    );
    check(&["-0x.8p-2", "--to", "f32"], "0xbe000000", "-0.125", "none");
    check(&["-inf", "--to", "f16"], "0xfc00", "-inf", "none");
    check(&["nan", "--to", "f16"], "0x7fff", "nan", "none");
}

#[test]
fn inexact_literals_round_correctly() {
    // 1 + 2^-128 has 129 significant bits: held as its round-to-odd, still above 1.
    let x = "0x1.00000000000000000000000000000001p0";
    check(&[x, "--to", "f64"], "0x3ff0000000000000", "1", "inexact");
    check(
        &[x, "--to", "f64", "--mode", "rp"],
        "0x3ff0000000000001",
        "1.0000000000000002220446049250313080847263336181640625",
        "inexact",
    );
    // 1 + 2^-53 exactly is the tie between 1 (even) and 1 + 2^-52; a decimal just above or
    // below it is not dyadic and must still round to the correct side.
    let tie = "1.00000000000000011102230246251565404236316680908203125";
    check(&[tie, "--to", "f64"], "0x3ff0000000000000", "1", "inexact");
    let above = "1.00000000000000011102230246251565404236316680908203126";
    assert_eq!(round(&[above, "--to", "f64"]).0, "0x3ff0000000000001");
    let below = "1.00000000000000011102230246251565404236316680908203124";
    assert_eq!(round(&[below, "--to", "f64"]).0, "0x3ff0000000000000");
    // The same against Rust's parser.
    for s in [above, below, "3.14159", "2.2250738585072011e-308", "1e23"] {
        let expect = format!("{:#018x}", s.parse::<f64>().unwrap().to_bits());
        assert_eq!(round(&[s, "--to", "f64"]).0, expect, "{s}");
    }
}

#[test]
fn from_and_bits() {
    // --from f64: first rounded to f64, then to f32 (double rounding, as `as f32` does).
    let x: f64 = "3.14159".parse().unwrap();
    let expect = format!("{:#010x}", (x as f32).to_bits());
    assert_eq!(
        round(&["3.14159", "--from", "f64", "--to", "f32"]).0,
        expect
    );
    // 1 + 2^-23 into f16: below the half-way point 1 + 2^-11: 1.0.
    check(
        &["--bits", "0x3f800001", "--from", "f32", "--to", "f16"],
        "0x3c00",
        "1",
        "inexact",
    );
    // The smallest f32 subnormal: rn gives +0 (underflow), --ftz flushes the input.
    check(
        &["--bits", "0x00000001", "--from", "f32", "--to", "f16"],
        "0x0000",
        "0",
        "inexact, underflow",
    );
    check(
        &["--bits", "1", "--from", "f32", "--to", "f16", "--ftz"],
        "0x0000",
        "0",
        "flushed",
    );
    // NaN payloads: f32 mantissa 0x500000 keeps its top 10 bits 0x280 in f16.
    check(
        &[
            "--bits",
            "0x7fd00000",
            "--from",
            "f32",
            "--to",
            "f16",
            "--nan",
            "payload",
        ],
        "0x7e80",
        "nan",
        "none",
    );
    check(
        &["--bits", "0x7fd00000", "--from", "f32", "--to", "f16"],
        "0x7fff",
        "nan",
        "none",
    );
}

#[test]
fn integral_and_integer_destinations() {
    check(
        &["2.5", "--to", "f32", "--mode", "rni"],
        "0x40000000",
        "2",
        "inexact",
    );
    check(
        &["2.5", "--to", "f32", "--mode", "rpi"],
        "0x40400000",
        "3",
        "inexact",
    );
    check(
        &["-2.5", "--to", "f32", "--mode", "rmi"],
        "0xc0400000",
        "-3",
        "inexact",
    );
    // −5.5 is the tie between −5 and −6 (even): −6 = 0xfa in two's complement.
    check(
        &["-5.5", "--to", "s8", "--mode", "rni"],
        "0xfa",
        "-6",
        "inexact",
    );
    check(
        &["300", "--to", "u8", "--mode", "rzi"],
        "0xff",
        "255",
        "overflow, saturated",
    );
    // 300 mod 256 = 44.
    check(
        &["300", "--to", "u8", "--mode", "rzi", "--wrap"],
        "0x2c",
        "44",
        "overflow",
    );
    check(
        &[
            "nan",
            "--to",
            "s32",
            "--mode",
            "rzi",
            "--int-nan",
            "highbit",
        ],
        "0x80000000",
        "-2147483648",
        "invalid",
    );
    check(
        &["nan", "--to", "s32", "--mode", "rzi"],
        "0x00000000",
        "0",
        "invalid",
    );
    // s2f6: n × 2^-6 in 8 bits; 1 = 64 = 0x40, −2 = −128 = 0x80, 3 clamps to 127/64.
    check(&["1", "--to", "s2f6"], "0x40", "1", "none");
    check(&["-2", "--to", "s2f6"], "0x80", "-2", "none");
    check(
        &["3", "--to", "s2f6", "--satfinite"],
        "0x7f",
        "1.984375",
        "overflow, saturated",
    );
}

#[test]
fn other_formats_and_policies() {
    // ue8m0: 3 is the tie between 2 (field 128, even) and 4 (field 129).
    check(&["3", "--to", "ue8m0"], "0x80", "2", "inexact");
    // vf: the smallest magnitude is 17/128 = 0.1328125; 0.1 is above half of it.
    check(
        &["0.1", "--to", "vf"],
        "0x01",
        "0.1328125",
        "inexact, underflow",
    );
    check(&["1.5", "--to", "f16", "--sat"], "0x3c00", "1", "saturated");
    check(&["-1.5", "--to", "bf16", "--relu"], "0x0000", "0", "none");
    let (_, _, class, _) = round(&["1e-6", "--to", "f16"]);
    assert_eq!(class, "subnormal");
}

#[test]
fn explain_shows_neighbours_reason_and_events() {
    let out = ok(&[
        "round",
        "3.14159",
        "--to",
        "e4m3",
        "--satfinite",
        "--explain",
    ]);
    assert!(
        out.contains("neighbour toward zero     0x44 = 3\n"),
        "{out}"
    );
    assert!(
        out.contains("neighbour away from zero  0x45 = 3.25\n"),
        "{out}"
    );
    assert!(out.contains("because it is nearer"), "{out}");
    assert!(
        out.contains("inexact: 3.14159 is not a dyadic rational"),
        "{out}"
    );
    assert!(out.contains("hex    0x1.921f9f01b866e"), "{out}");

    let out = ok(&["round", "500", "--to", "e4m3", "--satfinite", "--explain"]);
    assert!(
        out.contains("480 (beyond the largest finite value 448 of e4m3: no encoding)"),
        "{out}"
    );
    assert!(out.contains("(--satfinite)"), "{out}");

    let out = ok(&["round", "5", "--to", "e2m1", "--explain"]);
    assert!(
        out.contains("because the value is exactly half way and ties go to the even encoding"),
        "{out}"
    );

    let out = ok(&["round", "1e-50", "--to", "ue8m0", "--explain"]);
    assert!(out.contains("neighbour toward zero     none"), "{out}");
    assert!(out.contains("forced away from zero"), "{out}");

    let out = ok(&[
        "round",
        "1.1",
        "--to",
        "e2m1",
        "--mode",
        "rs",
        "--rbits",
        "13",
        "--rbits-width",
        "4",
        "--explain",
    ]);
    assert!(
        out.contains("the discarded fraction 0x3 (of 2^4) plus the random bits 0xd carry"),
        "{out}"
    );

    let out = ok(&[
        "round",
        "--bits",
        "1",
        "--from",
        "f32",
        "--to",
        "f16",
        "--ftz",
        "--explain",
    ]);
    assert!(out.contains("no rounding step"), "{out}");
    assert!(
        out.contains("--ftz: the subnormal input was flushed"),
        "{out}"
    );

    let out = ok(&[
        "round",
        "3.14159",
        "--from",
        "f64",
        "--to",
        "f32",
        "--explain",
    ]);
    assert!(
        out.contains("the number rounded to f64 (rn): 0x400921f9f01b866e"),
        "{out}"
    );
}

#[test]
fn json_output() {
    let j = json(&[
        "round",
        "3.14159",
        "--to",
        "e4m3",
        "--satfinite",
        "--explain",
        "--json",
    ]);
    assert_eq!(j["result"]["bits"], "0x45");
    assert_eq!(j["result"]["value"], "3.25");
    assert_eq!(j["result"]["class"], "normal");
    assert_eq!(j["result"]["flags"], serde_json::json!(["inexact"]));
    assert_eq!(j["input"]["exact"], false);
    assert_eq!(j["to"], "e4m3");
    assert_eq!(j["mode"], "rn");
    assert_eq!(j["policy"]["satfinite"], true);
    let r = &j["explain"]["rounding"];
    assert_eq!(r["toward_zero"]["bits"], "0x44");
    assert_eq!(r["away_from_zero"]["value"], "3.25");
    assert_eq!(r["chosen"], "away_from_zero");
    assert_eq!(r["why"], "nearer");
    assert_eq!(j["explain"]["events"][0]["event"], "rounded");

    let j = json(&["round", "5", "--to", "e2m1", "--json"]);
    assert!(j.get("explain").is_none());
    assert_eq!(j["input"]["exact"], true);
    assert_eq!(j["result"]["bits"], "0x6");

    let j = json(&["round", "500", "--to", "e4m3", "--explain", "--json"]);
    assert_eq!(
        j["explain"]["rounding"]["away_from_zero"]["bits"],
        serde_json::Value::Null
    );
    assert_eq!(j["explain"]["events"][1]["event"], "overflow-to-nan");

    let j = json(&["values", "e2m1", "--json"]);
    assert_eq!(j["bits"], 4);
    assert_eq!(j["values"].as_array().unwrap().len(), 16);
    assert_eq!(j["values"][7]["value"], "6");
    assert_eq!(j["values"][9]["class"], "subnormal");

    let j = json(&["formats", "--json"]);
    let all = j.as_array().unwrap();
    assert_eq!(all.len(), 34);
    // The fnuz formats: one NaN, the sign bit alone; one zero.
    let fnuz = all.iter().find(|f| f["name"] == "e4m3fnuz").unwrap();
    assert_eq!(fnuz["bias"], 8);
    assert_eq!(fnuz["max_finite"]["value"], "240");
    assert_eq!(fnuz["min_finite"]["bits"], "0xff");
    assert_eq!(fnuz["nan"]["ranges"], serde_json::json!([["0x80", "0x80"]]));
    assert_eq!(fnuz["nan"]["count"], 1);
    assert_eq!(fnuz["zeros"], serde_json::json!(["0x00"]));
    assert_eq!(fnuz["infinities"], serde_json::json!([]));
    let e4m3 = all.iter().find(|f| f["name"] == "e4m3").unwrap();
    assert_eq!(e4m3["max_finite"]["bits"], "0x7e");
    assert_eq!(e4m3["max_finite"]["value"], "448");
    assert_eq!(e4m3["min_subnormal"]["value"], "0.001953125");
    assert_eq!(
        e4m3["nan"]["ranges"],
        serde_json::json!([["0x7f", "0x7f"], ["0xff", "0xff"]])
    );
    let f16 = all.iter().find(|f| f["name"] == "f16").unwrap();
    assert_eq!(f16["nan"]["count"], 2046);
    assert_eq!(f16["infinities"], serde_json::json!(["0x7c00", "0xfc00"]));
    let ue8m0 = all.iter().find(|f| f["name"] == "ue8m0").unwrap();
    assert_eq!(ue8m0["zeros"], serde_json::json!([]));
    assert_eq!(ue8m0["min_subnormal"], serde_json::Value::Null);
}

#[test]
fn errors() {
    let e = fails(&["round", "1", "--to", "e9m9"]);
    assert!(
        e.contains("unknown format \"e9m9\" for --to; accepted: f64, f32"),
        "{e}"
    );
    let e = fails(&["round", "1", "--to", "f16", "--from", "f99"]);
    assert!(e.contains("unknown format \"f99\" for --from"), "{e}");
    let e = fails(&["round", "1", "--to", "f16", "--mode", "rx"]);
    assert!(e.contains("invalid value 'rx' for '--mode <MODE>'"), "{e}");
    assert!(
        e.contains("[possible values: rn, rna, rz, rm, rp, rs, rni, rzi, rmi, rpi]"),
        "{e}"
    );
    let e = fails(&["round", "3.1x", "--to", "f16"]);
    assert!(e.contains("invalid number \"3.1x\" at position 4"), "{e}");
    let e = fails(&["round", "--bits", "0x100", "--from", "e4m3", "--to", "f16"]);
    assert!(e.contains("does not fit in the 8 bits of e4m3"), "{e}");
    let e = fails(&["round", "--bits", "0x1", "--to", "f16"]);
    assert!(
        e.contains("the following required arguments were not provided: --from <FMT>"),
        "{e}"
    );
    let e = fails(&["round", "1", "--to", "f16", "--rbits", "0x1"]);
    assert!(e.contains("--rbits is only valid with --mode rs"), "{e}");
    let e = fails(&["round", "1", "--to", "f16", "--mode", "rs"]);
    assert!(
        e.contains("the following required arguments were not provided: --rbits <PATTERN>"),
        "{e}"
    );
    let e = fails(&[
        "round",
        "1",
        "--to",
        "f16",
        "--mode",
        "rs",
        "--rbits",
        "0x10",
        "--rbits-width",
        "4",
    ]);
    assert!(e.contains("does not fit in the 4 bits"), "{e}");
    let e = fails(&["round", "1", "--to", "f16", "--sat", "--satfinite"]);
    assert!(
        e.contains("the argument '--sat' cannot be used with '--satfinite'"),
        "{e}"
    );
    let e = fails(&["round", "1", "--to", "f16", "--wrap"]);
    assert!(e.contains("--wrap applies to integer"), "{e}");
    let e = fails(&["round", "1", "--to", "s8", "--relu"]);
    assert!(
        e.contains("--relu applies to float destinations only"),
        "{e}"
    );
    let e = fails(&["round", "1", "--to", "f16", "--bits", "1", "--from", "f32"]);
    assert!(
        e.contains("the argument '[NUMBER]' cannot be used with '--bits <PATTERN>'"),
        "{e}"
    );
    let e = fails(&["round", "1"]);
    assert!(
        e.contains("the following required arguments were not provided: --to <FMT>"),
        "{e}"
    );
    let e = fails(&["round", "--to", "f16"]);
    assert!(
        e.contains("the following required arguments were not provided: <NUMBER|--bits <PATTERN>>"),
        "{e}"
    );
    let e = fails(&["round", "1", "--to", "f16", "--scale", "x"]);
    assert!(e.contains("invalid value 'x' for '--scale <K>'"), "{e}");
    let e = fails(&["values", "f32"]);
    assert!(e.contains("f32 has 32 bits"), "{e}");
    assert!(e.contains("at most 16 bits (f16, bf16"), "{e}");
    let e = fails(&["values", "nope"]);
    assert!(e.contains("unknown format \"nope\""), "{e}");
    // clap's own usage errors also exit with 2.
    assert_eq!(run(&["round", "1", "--to", "f16", "--frob"]).0, 2);
    assert_eq!(run(&["values"]).0, 2);
    assert_eq!(run(&["frobnicate"]).0, 2);
    assert_eq!(run(&["--help"]).0, 0);
}

#[test]
fn odd_inputs_never_panic() {
    for n in [
        "",
        "-",
        "+",
        ".",
        "0x",
        "0b",
        "0x.",
        "0x1p",
        "1e",
        "1e+",
        "nan(",
        "nan(0x",
        "nan(0x1",
        "infinit",
        "∞",
        "١",
        "0x1p99999999999999999999",
        "1e-99999999999999999999",
        "0e99999",
        "-0",
        "1_",
        "_1",
        "1__0",
        "0x_1",
        "--",
        "-nan(0xffffffffffffffff)",
        "1.e5",
        ".e5",
    ] {
        let (code, _, err) = run(&["round", n, "--to", "f16"]);
        assert!(code == 0 || code == 2, "{n:?}: exit {code}, {err}");
        let (code, _, err) = run(&["round", "--bits", n, "--from", "e4m3", "--to", "f16"]);
        assert!(code == 0 || code == 2, "{n:?}: exit {code}, {err}");
    }
}

#[test]
fn snapshot_formats() {
    insta::assert_snapshot!("formats", ok(&["formats"]));
}

#[test]
fn snapshot_values_e2m1() {
    insta::assert_snapshot!("values_e2m1", ok(&["values", "e2m1"]));
}

/// `gpucvt eval --batch` on `input`: the output lines.
fn batch(input: &[u8]) -> Vec<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .args(["eval", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // Written from a thread: the output may fill its pipe before the input is all read.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("the binary ends");
    writer.join().unwrap().expect("write stdin");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The `d = …` line of `gpucvt eval`.
fn eval_d(args: &[&str]) -> String {
    crate::common::eval_value(args, "d = ")
}

#[test]
fn format_names_of_other_tools() {
    // 1.0 in e4m3 is 0x38 (exponent 7 = bias), whatever the spelling.
    for name in ["e4m3", "float8_e4m3fn", "E4M3FN", "F8_E4M3", "f8E4M3FN"] {
        assert_eq!(round(&["1", "--to", name]).0, "0x38", "{name}");
    }
    // 57344 is e5m2's largest finite value, 0x7b; 6 is e2m1's, 0x7.
    assert_eq!(round(&["57344", "--to", "float8_e5m2"]).0, "0x7b");
    assert_eq!(round(&["6", "--to", "float4_e2m1fn"]).0, "0x7");
    assert_eq!(round(&["7.5", "--to", "F6_E2M3"]).0, "0x1f");
    assert_eq!(round(&["28", "--to", "f6E3M2FN"]).0, "0x1f");
    // 2^127 is ue8m0's largest, 0xfe.
    assert_eq!(
        round(&["0x1p127", "--to", "float8_e8m0fnu"]).0,
        round(&["0x1p127", "--to", "ue8m0"]).0
    );
    assert_eq!(round(&["-1", "--to", "int8"]).0, "0xff");
    assert_eq!(round(&["65504", "--to", "half"]).0, "0x7bff");
    assert_eq!(
        round(&["--bits", "0x3f80", "--from", "bfloat16", "--to", "F32"]).0,
        "0x3f800000"
    );
    // `values` takes them too: safetensors' F4 is e2m1.
    assert_eq!(ok(&["values", "F4"]), ok(&["values", "e2m1"]));
    // ml_dtypes' other FP8 types are their own formats, never e4m3/e5m2 lookalikes.
    for (name, catalogue) in [
        ("float8_e4m3", "e4m3ieee"),
        ("f8E4M3", "e4m3ieee"),
        ("float8_e4m3fnuz", "e4m3fnuz"),
        ("float8_e5m2fnuz", "e5m2fnuz"),
        ("float8_e4m3b11fnuz", "e4m3b11fnuz"),
        ("float8_e3m4", "e3m4"),
    ] {
        assert_eq!(ok(&["values", name]), ok(&["values", catalogue]), "{name}");
    }
    // The fnuz formats: no -0, 0x80 the one NaN; e3m4 keeps -0.
    assert_eq!(round(&["1.5", "--to", "e4m3fnuz"]).0, "0x44");
    assert_eq!(round(&["-0", "--to", "e4m3fnuz"]).0, "0x00");
    assert_eq!(round(&["nan", "--to", "e4m3b11fnuz"]).0, "0x80");
    assert_eq!(round(&["-0", "--to", "e3m4"]).0, "0x80");
    assert_eq!(
        round(&["--bits", "0x80", "--from", "e5m2fnuz", "--to", "f32"]).2,
        "nan"
    );
    // 448 is e4m3's largest value; in IEEE-style E4M3 it overflows to infinity.
    assert_eq!(round(&["448", "--to", "e4m3"]).0, "0x7e");
    assert_eq!(round(&["448", "--to", "float8_e4m3"]).0, "0x78");
    let e = fails(&["values", "complex64"]);
    assert!(e.contains("is not supported yet"), "{e}");
    let e = fails(&["round", "1", "--to", "float"]);
    assert!(e.contains("ambiguous"), "{e}");
    let e = fails(&["round", "1", "--to", "bfloat61"]);
    assert!(
        e.contains("did you mean \"bfloat16\", that is bf16?"),
        "{e}"
    );
    let e = fails(&["round", "1", "--to", "f8e4m3f"]);
    assert!(
        e.contains("did you mean \"f8E4M3FN\", that is e4m3?"),
        "{e}"
    );
}

#[test]
fn eval_reads_statements_and_ptx_literals() {
    assert_eq!(eval_d(&["cvt.rn.f16.f32 %h1, %f1;", "1.0"]), "0x3c00");
    let e = fails(&["eval", "cvt.rn.f16.f32 %h1, %f1, %f2;", "1.0"]);
    assert!(e.contains("takes 2 operands"), "{e}");
    // 0f3F800000 is the f32 1.0; 0d3FF0000000000000 the f64 1.0.
    assert_eq!(eval_d(&["cvt.rn.f16.f32", "0f3F800000"]), "0x3c00");
    assert_eq!(
        eval_d(&["cvt.rn.f32.f64", "0d3FF0000000000000"]),
        "0x3f800000"
    );
    // In an operand of its own format, a literal is its bits: the NaN payload stays.
    let out = ok(&["eval", "cvt.rn.f32.f64", "0d7FF0000000000001"]);
    assert!(
        out.contains("a = 0d7FF0000000000001 (0x7ff0000000000001)"),
        "{out}"
    );
    // Elsewhere its value rounds like a decimal: f64 1.0 into an f32 operand.
    assert_eq!(eval_d(&["cvt.rn.f16.f32", "0d3FF0000000000000"]), "0x3c00");
    let e = fails(&["eval", "cvt.rn.f16.f32", "0f3F80"]);
    assert!(e.contains("exactly 8 hexadecimal digits"), "{e}");
}

#[test]
fn eval_refuses_a_sign_on_raw_bits() {
    let e = fails(&["eval", "cvt.rn.f16.f32", "--", "-0x3f800000"]);
    assert!(e.contains("a negative sign on raw bits"), "{e}");
    let e = fails(&["eval", "cvt.rn.f16.f32", "--", "-0f3F800000"]);
    assert!(e.contains("a negative sign on raw bits"), "{e}");
    // A hex float is a number and may be negative: -1.0 in f16 is 0xbc00.
    assert_eq!(eval_d(&["cvt.rn.f16.f32", "--", "-0x1p0"]), "0xbc00");
    assert_eq!(eval_d(&["cvt.rn.f16.f32", "--", "-0x1.0"]), "0xbc00");
}

#[test]
fn eval_gives_the_checkers_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.ptx");
    std::fs::write(
        &path,
        ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  .reg .f32 %f<2>;\n  .reg .b16 %h<2>;\n  cvt.rn.f32.f16 %f1, %h1;\n}\n",
    )
    .unwrap();
    let (_, out, _) = run(&["check", path.to_str().unwrap(), "--json"]);
    let diags: serde_json::Value = serde_json::from_str(&out).unwrap();
    let message = diags
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["message"].as_str().unwrap().contains("'.rn'"))
        .unwrap_or_else(|| panic!("{out}"))["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("'.rn'"), "{message}");
    for args in [
        ["eval", "cvt.rn.f32.f16", "0x3c00"],
        ["eval", "cvt.rn.f32.f16 %f1, %h1;", "0x3c00"],
    ] {
        let e = fails(&args);
        assert!(e.contains(&message), "{e} / {message}");
        assert!(!e.contains("is not a conversion form"), "{e}");
    }
    assert_eq!(
        batch(b"cvt.rn.f32.f16 0x3c00\n"),
        [format!("error: {message} (column 4)")]
    );
}

#[test]
fn literals_beyond_the_range_round() {
    // Both sides of the decimal exponent limit behave alike: overflow, or underflow.
    for n in ["1e100000", "1e100001", "1e999999"] {
        check(
            &[n, "--to", "f32"],
            "0x7f800000",
            "inf",
            "inexact, overflow",
        );
    }
    for n in ["1e-100000", "1e-100001", "1e-999999"] {
        check(&[n, "--to", "f32"], "0x00000000", "0", "inexact, underflow");
        check(
            &[n, "--to", "f32", "--mode", "rp"],
            "0x00000001",
            "0.00000000000000000000000000000000000000000000140129846432481707092372958328991613128026194187651577175706828388979108268586060148663818836212158203125",
            "inexact, underflow",
        );
    }
    assert_eq!(eval_d(&["cvt.rn.f16.f32", "1e100001"]), "0x7c00");
}

#[test]
fn batch_literals_statements_and_reasons() {
    let out = batch(
        b"cvt.rn.f16.f32 0f3F800000\n\
          cvt.rn.f32.f64 0d3FF0000000000000\n\
          cvt.rn.f16.f32 %h1, %f1; 0x3f800000\n\
          cvt.rn.f16.f32 0x3f800000\n\
          cvt.rn.f32.f64 0f3F800000\n\
          cvt.rn.f16.f32 0x1234567890abcdef12\n\
          cvt.rn.f16.f32 0x00000000000000000003f800000\n",
    );
    assert_eq!(out[0], "0x3c00");
    assert_eq!(out[1], "0x3f800000");
    assert_eq!(out[2], "0x3c00");
    assert_eq!(out[3], "0x3c00");
    assert!(
        out[4].starts_with("error: operand 1 is a PTX f32 literal (32 bits); operand a of cvt.rn.f32.f64 is 64 bits"),
        "{}",
        out[4]
    );
    // 0x12… has 18 digits, the first of 1 bit: 69 bits.
    assert_eq!(
        out[5],
        "error: operand 1 \"0x1234567890abcdef12\" has 69 bits; operand a of cvt.rn.f16.f32 is 32 bits"
    );
    assert_eq!(out[6], "0x3c00");
}

#[test]
fn batch_prints_results_wider_than_128_bits() {
    // VF 0x38303030: elements 0-2 are 1.0 (0x30), element 3 is 1.5 (0x38); as f64 1.0 is
    // 0x3ff0000000000000 and 1.5 0x3ff8000000000000, element 3 highest.
    // V 0x12345678: eight signed nibbles, element 0 (low) is 8 = -8, element 7 is 1.
    let out = batch(b"mov df <- vf 0x38303030\nmov q <- v 0x12345678\nmov d <- v 0x12345678\n");
    assert_eq!(
        out[0],
        format!("0x3ff8000000000000{}", "3ff0000000000000".repeat(3))
    );
    let q: String = (1..=7)
        .map(|k| format!("{k:016x}"))
        .chain(["fffffffffffffff8".to_string()])
        .collect();
    assert_eq!(out[1], format!("0x{q}"));
    let d: String = (1..=7)
        .map(|k| format!("{k:08x}"))
        .chain(["fffffff8".to_string()])
        .collect();
    assert_eq!(out[2], format!("0x{d}"));
    // `eval` shows the whole value too.
    assert_eq!(eval_d(&["mov q <- v", "0x12345678"]), format!("0x{q}"));
}

#[test]
fn batch_hostile_lines_stay_small_and_fast() {
    let mut input = String::from("cvt");
    input.push_str(&".rn".repeat(300_000)); // 0.9 MB of repeated modifiers
    input.push_str(".f16.f32 0x3f800000\ncvt.rn.f16.f32 ");
    input.push_str(&"z".repeat(500_000));
    input.push_str("\ncvt.rn.f16.f32 0x");
    input.push_str(&"f".repeat(2 << 20)); // longer than the 1 MiB line limit
    input.push_str("\ncvt.rn.f16.f32 0x3f800000\n");
    let start = std::time::Instant::now();
    let out = batch(input.as_bytes());
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    assert_eq!(out.len(), 4);
    assert!(
        out[0].starts_with("error: multiple rounding modifiers: '.rn' after '.rn' (column 7); "),
        "{}",
        &out[0][..200]
    );
    assert!(out[0].ends_with("; and 299996 more"), "{}", out[0]);
    assert!(out[0].len() < 400, "{}", out[0].len());
    assert!(out[1].len() < 300 && out[1].contains("z…"), "{}", out[1]);
    assert_eq!(out[2], "error: the line is longer than 1048576 bytes");
    assert_eq!(out[3], "0x3c00");
}

#[test]
fn table_and_sweep_take_json() {
    let t = json(&["table", "ptx", "--json"]);
    assert_eq!(t["table"], "ptx");
    let t15 = &t["tables"][0];
    assert_eq!(t15["number"], 15);
    let types: Vec<&str> = t15["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let at = |n: &str| types.iter().position(|t| *t == n).unwrap();
    // s8 → s16 sign-extends; f32 → f16 is f2f; s8 → s8 prints "–" (null).
    assert_eq!(t15["cells"][at("s8")][at("s16")], "sext");
    assert_eq!(t15["cells"][at("f32")][at("f16")], "f2f");
    assert!(t15["cells"][at("s8")][at("s8")].is_null());
    assert_eq!(t["tables"][1]["number"], 16);
    let v = json(&["table", "visa", "--json"]);
    let rules = v["rules"].as_array().unwrap();
    let text = ok(&["table", "visa"]);
    assert_eq!(rules.len(), text.lines().count());
    assert_eq!(rules[0]["rule"], text.lines().next().unwrap());
    let tile = json(&["table", "tile", "--json"]);
    assert!(tile["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["op"] == "ftof" && e["source"] == "f32" && e["result"] == "f16"));
    let s = json(&["sweep", "cvt.f32.f16", "--hash", "--json"]);
    assert_eq!(s["form"], "cvt.f32.f16");
    assert_eq!(s["results"], 65536);
    assert_eq!(s["result_bytes"], 4);
    // The plain form prints its timing on stderr.
    let (code, plain, _) = run(&["sweep", "cvt.f32.f16", "--hash"]);
    assert_eq!(code, 0);
    assert_eq!(s["hash"], plain.trim());
}

#[test]
fn check_names_all_three_file_kinds() {
    let e = fails(&["check", "kernel.txt"]);
    assert!(
        e.contains(".ptx") && e.contains(".visaasm") && e.contains(".mlir"),
        "{e}"
    );
    let help = ok(&["check", "--help"]);
    assert!(help.contains(".ptx") && help.contains(".visaasm") && help.contains(".mlir"));
    let help = ok(&["--help"]);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("check"))
        .unwrap();
    assert!(line.contains(".mlir"), "{line}");
}

/// What clap checks before a subcommand runs: exclusions, requirements, ranges and value
/// sets, each reported on one line (`fails`) that names the option and the bad value.
#[test]
fn clap_checks_options() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["round", "1", "--to", "s8", "--wrap", "--sat"],
            "the argument '--wrap' cannot be used with '--sat'",
        ),
        (
            &["round", "1", "--to", "s8", "--satfinite", "--wrap"],
            "the argument '--satfinite' cannot be used with '--wrap'",
        ),
        (
            &["round", "1", "--to", "f16", "--mode", "RS"],
            "the following required arguments were not provided: --rbits <PATTERN>",
        ),
        (
            &["round", "1", "--to", "f16", "--rbits-width", "8"],
            "the following required arguments were not provided: --rbits <PATTERN>",
        ),
        (
            &[
                "round",
                "1",
                "--to",
                "f16",
                "--mode",
                "rs",
                "--rbits",
                "1",
                "--rbits-width",
                "65",
            ],
            "invalid value '65' for '--rbits-width <N>': 65 is not in 1..=64",
        ),
        (
            &["round", "1", "--to", "f16", "--scale", "-100001"],
            "invalid value '-100001' for '--scale <K>': -100001 is not in -100000..=100000",
        ),
        (
            &["round", "1", "--to", "f16", "--overflow", "wrap"],
            "invalid value 'wrap' for '--overflow <ieee|saturate|infinite>'; [possible values: ieee, saturate, infinite]",
        ),
        (
            &["round", "1", "--to", "f16", "--nan", "keep"],
            "invalid value 'keep' for '--nan <canonical|payload>'; [possible values: canonical, payload]",
        ),
        (
            &["round", "1", "--to", "s8", "--int-nan", "max"],
            "invalid value 'max' for '--int-nan <zero|highbit>'; [possible values: zero, highbit]",
        ),
        (
            &["eval"],
            "the following required arguments were not provided: <INSTRUCTION OPERAND|--batch>",
        ),
        (
            &["eval", "--batch", "cvt.rn.f16.f32"],
            "the argument '--batch' cannot be used with '[INSTRUCTION OPERAND]...'",
        ),
        (
            &["eval", "--batch", "--explain"],
            "the argument '--batch' cannot be used with '--explain'",
        ),
        (
            &["eval", "--batch", "--json"],
            "the argument '--batch' cannot be used with '--json'",
        ),
        (
            &["eval", "cvt.rn.f16.f32", "1", "--cr0", "bogus"],
            "invalid value 'bogus' for '--cr0 <CR0>': `bogus` is not a cr0 value",
        ),
        (
            &["eval", "cvt.rn.f16.f32", "1", "--target", "sm_1000"],
            "invalid value 'sm_1000' for '--target <SM>'",
        ),
        (
            &["eval", "cvt.rn.f16.f32", "1", "--ptx-version", "0.1"],
            "invalid value '0.1' for '--ptx-version <X.Y>'",
        ),
        (
            &["eval", "cvt.rn.f16.f32", "1", "--semantics", "exact"],
            "invalid value 'exact' for '--semantics <SEMANTICS>'; [possible values: spec, tileiras]",
        ),
        (
            &["eval", "cvt.rn.f16.f32", "1", "--tile-version", "12.0"],
            "invalid value '12.0' for '--tile-version <X.Y>'; [possible values: 13.1, 13.2, 13.3, 13.4]",
        ),
        (
            &["verify", "cvt.rn.f16.f32", "--threads", "0"],
            "invalid value '0' for '--threads <N>': 0 is not in 1..18446744073709551615",
        ),
        (
            &["verify", "cvt.rn.f16.f32", "--examples", "1001"],
            "invalid value '1001' for '--examples <K>': 1001 is not in 0..=1000",
        ),
        (
            &["verify", "cvt.rn.f32.f64", "--sample", "17179869185"],
            "invalid value '17179869185' for '--sample <N>': 17179869185 is not in 0..=17179869184",
        ),
        (
            &["sweep", "cvt.rn.f16.f32"],
            "the following required arguments were not provided: --out <FILE>",
        ),
        (
            &["diff", "cvt.rn.f16.f32", "mov hf <- f", "--examples", "1001"],
            "invalid value '1001' for '--examples <K>': 1001 is not in 0..=1000",
        ),
        (
            &["diff", "cvt.rn.f16.f32", "mov hf <- f", "--sample", "0"],
            "invalid value '0' for '--sample <N>'",
        ),
        (
            &["table", "ptx", "--target", "sm_1"],
            "invalid value 'sm_1' for '--target <SM>'",
        ),
        (
            &["check", "x.ptx", "--ptx-version", "x"],
            "invalid value 'x' for '--ptx-version <X.Y>'",
        ),
        (
            &["run", "x.ptx", "--tile-version", "13"],
            "invalid value '13' for '--tile-version <X.Y>'",
        ),
        // clap's own errors are one line too, with the usage.
        (
            &["round", "1", "--to", "f16", "--frob"],
            "unexpected argument '--frob' found; tip: a similar argument exists: '--from'; usage: gpucvt round",
        ),
    ];
    for (args, needle) in cases {
        let e = fails(args);
        assert!(e.contains(needle), "{args:?}: {e}");
    }
}

/// The value sets clap now reads still take any case, as the hand-written look-ups did, and
/// the library readers' other spellings still pass.
#[test]
fn option_values_in_any_case() {
    assert_eq!(
        ok(&[
            "round",
            "1.1",
            "--to",
            "e4m3",
            "--mode",
            "RZ",
            "--overflow",
            "Saturate"
        ]),
        ok(&[
            "round",
            "1.1",
            "--to",
            "e4m3",
            "--mode",
            "rz",
            "--overflow",
            "saturate"
        ])
    );
    assert_eq!(
        ok(&["round", "nan", "--to", "s8", "--int-nan", "HIGHBIT"]),
        ok(&["round", "nan", "--to", "s8", "--int-nan", "highbit"])
    );
    let tile = [
        "eval",
        "ftof %x : tile<f64> -> tile<bf16>",
        "0x3ff0100000000001",
    ];
    let spec = ok(&[&tile[..], &["--semantics", "spec"]].concat());
    assert_eq!(ok(&[&tile[..], &["--semantics", "SPEC"]].concat()), spec);
    // SpecVersion::from_name takes a `v` and a patch level.
    let v = ok(&[&tile[..], &["--tile-version", "13.4"]].concat());
    assert_eq!(ok(&[&tile[..], &["--tile-version", "v13.4.1"]].concat()), v);
}
