//! `gpucvt round`'s text, `--explain` and `--json` outputs over many numbers, formats, modes
//! and policies, held as one snapshot: the library's round report and explanation, which the
//! CLI and the Python package share, must keep printing exactly this.

use crate::common::run;

/// The argument lists of the snapshot: every kind of rounding decision (exact, nearer, ties,
/// directed, stochastic, forced), every policy event, and `--from` / `--bits` inputs.
// One case a line, however long: easier to read and extend.
#[rustfmt::skip]
const CASES: &[&[&str]] = &[
    &["0.3", "--to", "e4m3"],
    &["0.1", "--to", "f64"],
    &["3.14159", "--to", "e4m3", "--satfinite"],
    &["500", "--to", "e4m3"],
    &["500", "--to", "e4m3", "--satfinite"],
    &["1e9", "--to", "e5m2"],
    &["1e9", "--to", "e5m2", "--mode", "rz"],
    &["-1e9", "--to", "f16", "--overflow", "saturate"],
    &["5", "--to", "e2m1"],
    &["5", "--to", "e2m1", "--mode", "rna"],
    &["2.5", "--to", "e2m1", "--mode", "rn"],
    &["-2.5", "--to", "e2m1", "--mode", "rm"],
    &["2.25", "--to", "e2m1", "--mode", "rp"],
    &["1.1", "--to", "e2m1", "--mode", "rs", "--rbits", "0x80000000"],
    &["1.1", "--to", "e2m1", "--mode", "rs", "--rbits", "0x1", "--rbits-width", "4"],
    &["1.3", "--to", "bf16", "--mode", "rs", "--rbits", "0xffff", "--rbits-width", "16"],
    &["-1.3", "--to", "bf16", "--mode", "RS", "--rbits", "7", "--rbits-width", "3"],
    &["2.5", "--to", "s8", "--mode", "rni"],
    &["-2.5", "--to", "s8", "--mode", "rzi"],
    &["2.5", "--to", "f32", "--mode", "rmi"],
    &["-2.5", "--to", "f32", "--mode", "rpi"],
    &["300", "--to", "s8"],
    &["300", "--to", "s8", "--wrap"],
    &["-300", "--to", "u8", "--sat"],
    &["nan", "--to", "s32"],
    &["nan", "--to", "s32", "--int-nan", "highbit"],
    &["nan", "--to", "e2m1"],
    &["nan", "--to", "e4m3"],
    &["-nan", "--to", "f16", "--nan", "payload"],
    &["nan", "--to", "f16", "--sat"],
    &["inf", "--to", "e4m3"],
    &["-inf", "--to", "e4m3", "--satfinite"],
    &["inf", "--to", "e2m1"],
    &["1.7", "--to", "f16", "--sat"],
    &["-1.7", "--to", "bf16", "--relu"],
    &["-0", "--to", "f16", "--pzo"],
    &["-1e-50", "--to", "f32", "--mode", "rz", "--pzo"],
    &["1e-6", "--to", "f16"],
    &["1e-6", "--to", "f16", "--ftz"],
    &["1e-50", "--to", "ue8m0"],
    &["0", "--to", "ue8m0"],
    &["-3", "--to", "ue8m0"],
    &["1e40", "--to", "e4m3"],
    &["0x1p200", "--to", "f32"],
    &["0x1p200", "--to", "f32", "--mode", "rz"],
    &["3", "--to", "e4m3", "--scale", "-3"],
    &["3", "--to", "s16", "--scale", "10"],
    &["0.7", "--to", "s2f6"],
    &["5", "--to", "s2f6"],
    &["0.33", "--to", "tf32"],
    &["0.1", "--to", "e3m2", "--mode", "rna"],
    &["0.1", "--to", "e2m3", "--mode", "rm"],
    &["0b1.1p-3", "--to", "ue4m3"],
    &["3.14159", "--from", "f64", "--to", "f32"],
    &["3.14159", "--from", "bf16", "--to", "e4m3", "--mode", "rz"],
    &["1e-40", "--from", "f32", "--to", "f16", "--ftz"],
    &["--bits", "0x3f800001", "--from", "f32", "--to", "f16"],
    &["--bits", "0x7fc00001", "--from", "f32", "--to", "bf16", "--nan", "payload"],
    &["--bits", "0x80", "--from", "e4m3", "--to", "f32"],
    &["--bits", "0xff", "--from", "e5m2", "--to", "e4m3", "--satfinite"],
    &["--bits", "0x0001", "--from", "f16", "--to", "e5m2", "--ftz"],
    &["--bits", "0b101", "--from", "e2m1", "--to", "s8"],
    &["0.1000000000000000000000000000000000000000001", "--to", "f64"],
    &["-0x1.fffffep127", "--to", "bf16", "--mode", "rp"],
];

/// Runs a `round` that must succeed; returns stdout.
fn ok(args: &[&str]) -> String {
    let mut a = vec!["round"];
    a.extend_from_slice(args);
    let (code, out, err) = run(&a);
    assert_eq!(code, 0, "gpucvt {a:?} failed: {err}");
    assert!(err.is_empty(), "gpucvt {a:?} wrote to stderr: {err}");
    out
}

#[test]
fn round_outputs_snapshot() {
    let mut all = String::new();
    for case in CASES {
        for extra in [
            &[][..],
            &["--explain"],
            &["--json"],
            &["--explain", "--json"],
        ] {
            let mut args = case.to_vec();
            args.extend_from_slice(extra);
            all.push_str(&format!("$ gpucvt round {}\n", args.join(" ")));
            all.push_str(&ok(&args));
        }
    }
    insta::assert_snapshot!("round_outputs", all);
}
