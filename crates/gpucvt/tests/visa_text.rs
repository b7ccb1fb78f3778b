//! The `.visaasm` reader, checker and executor on the example kernels in `examples/visa/`.

use gpucvt::diag::Severity;
use gpucvt::visa::check::{check, CheckOptions};
use gpucvt::visa::cr0::{Cr0, RoundingMode};
use gpucvt::visa::parse::{parse, Stmt};
use gpucvt::visa::run::{execute, ExecOptions};

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/visa/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn f(x: f32) -> u64 {
    x.to_bits() as u64
}

#[test]
fn f_to_hf_example() {
    let text = example("f_to_hf.visaasm");
    let (k, d) = parse(&text);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(k.version, Some((3, 6)));
    assert_eq!(k.name.as_deref(), Some("f_to_hf"));
    assert_eq!(k.decls.len(), 2);
    assert_eq!(k.stmts.len(), 3);
    assert!(matches!(&k.stmts[2], Stmt::Skipped(s) if s.mnemonic == "ret"));
    assert!(check(&k, &CheckOptions::default()).is_empty());
    // 32 inputs: i + 1/3 (not exact in HF), the HF overflow threshold, a subnormal, NaN.
    let mut xs: Vec<u64> = (0..32).map(|i| f(i as f32 + 1.0 / 3.0)).collect();
    xs[20] = f(65520.0);
    xs[21] = f(65519.0);
    xs[22] = f(2f32.powi(-24));
    xs[23] = 0xffc0_0000;
    xs[24] = f(-0.0);
    let init = [("vector331".to_string(), xs.clone())];
    let run = |cr0: Cr0| {
        execute(
            &k,
            &init,
            &ExecOptions {
                cr0,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let rne = run(Cr0::OPENCL);
    let out = rne.get("vectorized_cast").unwrap();
    assert_eq!(out.len(), 32);
    assert_eq!(out[0], 0x3555); // 1/3 -> 0.33325
    assert_eq!(out[1], 0x3d55); // 4/3 -> 1.333
    assert_eq!(out[2], 0x40ab); // 7/3 -> 2.334 (rounded up)
    assert_eq!(out[20], 0x7c00);
    assert_eq!(out[21], 0x7bff);
    assert_eq!(out[22], 0x0001);
    assert_eq!(out[23], 0xfe00);
    assert_eq!(out[24], 0x8000);
    assert_eq!(rne.movs.len(), 2);
    assert_eq!(rne.movs[0].channels, 16);
    // The 2022 seed's truncation is cr0 RM = RTZ.
    let rtz = run(Cr0::OPENCL.with_rounding_mode(RoundingMode::Rtz));
    let out = rtz.get("vectorized_cast").unwrap();
    assert_eq!(out[2], 0x40aa);
    assert_eq!(out[20], 0x7bff);
}

#[test]
fn pvc_snippet_with_64_byte_grfs() {
    // visa.md §3.5, verbatim: on PVC a GRF holds 16 floats, so row 1 is element 16.
    let text = "\
.decl vector331 v_type=G type=f num_elts=128 align=wordx32
.decl vectorized_cast v_type=G type=hf num_elts=128 align=wordx32
mov (M1, 16) vectorized_cast(0,0)<1> vector331(0,0)<1;1,0>
mov (M1, 16) vectorized_cast(0,16)<1> vector331(1,0)<1;1,0>
";
    let (k, d) = parse(text);
    assert!(d.is_empty());
    let opts = ExecOptions {
        grf_bytes: 64,
        ..Default::default()
    };
    let xs: Vec<u64> = (0..32).map(|i| f(i as f32)).collect();
    let out = execute(&k, &[("vector331".into(), xs)], &opts).unwrap();
    let h = out.get("vectorized_cast").unwrap();
    assert_eq!(h[17], 0x4c40); // 17.0
    assert_eq!(h[31], 0x4fc0); // 31.0
    assert_eq!(h[32], 0);
}

#[test]
fn saturating_uchar_example() {
    let text = example("sat_f_to_ub.visaasm");
    let (k, d) = parse(&text);
    assert!(d.is_empty(), "{d:?}");
    let diags = check(&k, &CheckOptions::default());
    assert!(diags.is_empty(), "{diags:?}");
    let x = [-1.5f32, -0.0, 0.5, 1.5, 254.6, 255.5, 1e9, f32::NAN];
    let xd = [300.0f64, -5.0, 255.9, f64::NEG_INFINITY];
    let init = [
        ("X".to_string(), x.iter().map(|&v| f(v)).collect()),
        ("XD".to_string(), xd.iter().map(|v| v.to_bits()).collect()),
    ];
    let out = execute(&k, &init, &ExecOptions::default()).unwrap();
    let y = out.get("Y").unwrap();
    assert_eq!(
        y,
        &[0, 0, 0, 1, 254, 255, 255, 0, 255, 0, 255, 0, 0, 1, 2, 3]
    );
    // DF -> UB without .sat: 300 -> 0x2C, -5 -> 0xFB, 255.9 -> 0xFF, -inf -> W 0x8000 -> 0.
    assert_eq!(out.get("YRAW").unwrap(), &[0x2c, 0xfb, 0xff, 0x00]);
    assert_eq!(out.values.len(), 2);
    assert!(out.movs[1].plan.contains("then"));
}

#[test]
fn mistakes_example() {
    let text = example("mistakes.visaasm");
    let (k, parse_diags) = parse(&text);
    assert_eq!(parse_diags.len(), 1);
    assert_eq!(parse_diags[0].rule, "visa.imm");
    assert_eq!(parse_diags[0].span.line, 14);
    let diags = check(&k, &CheckOptions::default());
    let got: Vec<(u32, &str, Severity)> = diags
        .iter()
        .map(|d| (d.span.line, d.rule, d.severity))
        .collect();
    use Severity::*;
    assert_eq!(
        got,
        vec![
            (6, "visa.decl-duplicate", Error),
            (7, "visa.decl-type", Error),
            (10, "visa.region-bounds", Error),
            (10, "visa.region-bounds", Error),
            (11, "visa.undeclared", Error),
            (12, "visa.exec-size", Error),
            (13, "visa.modifier", Error),
            (15, "visa.imm-float-bits", Warning),
            (16, "visa.region", Error),
            (17, "visa.predicate", Error),
        ]
    );
    // Columns point at the offending token.
    let undeclared = diags.iter().find(|d| d.rule == "visa.undeclared").unwrap();
    assert_eq!(undeclared.span.col, 23);
    assert_eq!(
        undeclared.to_string(),
        "11:23: error[visa.undeclared]: `Z` is not declared"
    );
    // The executor refuses to run a kernel with errors.
    let errs = execute(&k, &[], &ExecOptions::default()).unwrap_err();
    assert!(errs.iter().all(|d| d.severity == Error));
}

#[test]
fn executor_input_errors() {
    let (k, _) = parse(".decl A v_type=G type=hf num_elts=2\n.decl P v_type=P num_elts=2\n");
    let run =
        |name: &str, v: Vec<u64>| execute(&k, &[(name.to_string(), v)], &ExecOptions::default());
    assert!(run("A", vec![0x3c00, 0x3c00]).is_ok());
    assert!(run("A", vec![0x1_0000]).is_err());
    assert!(run("A", vec![0, 0, 0]).is_err());
    assert!(run("Q", vec![0]).is_err());
    assert!(run("P", vec![2]).is_err());
}
