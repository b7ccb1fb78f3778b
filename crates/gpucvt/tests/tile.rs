//! The Tile IR dialect: the `.mlir` cases of `tile-ir.md` §4 (valid round trips and every
//! expected diagnostic, with positions), the example vectors of §3.4 under both semantics,
//! per-op value tests against the core, lowerings, entries, and a no-panic property test.

use gpucvt::core::convert::{convert, IntNan, IntOverflow, Policy};
use gpucvt::core::format::{self, Format};
use gpucvt::core::value::Class;
use gpucvt::core::{Flags, Rounding};
use gpucvt::diag::Severity;
use gpucvt::ptx::Target;
use gpucvt::tile::check::{check_file, legal_table};
use gpucvt::tile::eval::{
    difference, differs, eval_op, lowering, Difference, ElementResult, Semantics,
};
use gpucvt::tile::parse::{parse_file, parse_op, ConvOp, Op, Stmt, ValueType};
use gpucvt::tile::run::{run_entry, RunOptions};
use gpucvt::tile::types::{ElemType, Element, OpKind, RoundingMode, Signedness, SpecVersion};
use proptest::prelude::*;
use std::path::PathBuf;

fn data(name: &str) -> (PathBuf, String) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tile")
        .join(name);
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    (p, t)
}

fn file_version(text: &str) -> SpecVersion {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("// tile-version:"))
        .and_then(SpecVersion::from_name)
        .unwrap_or_default()
}

/// One `// expected-error @below:COL{{text}}` annotation.
#[derive(Debug)]
struct Expected {
    line: u32,
    col: Option<u32>,
    text: String,
}

fn expectations(text: &str) -> Vec<Expected> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.trim().strip_prefix("// expected-error") else {
            continue;
        };
        let rest = rest.trim_start();
        let (loc, msg) = rest.split_once("{{").expect("{{ in expected-error");
        let msg = msg.strip_suffix("}}").expect("}} at the end");
        let loc = loc.trim();
        let (anchor, col) = match loc.split_once(':') {
            Some((a, c)) => (a, Some(c.parse::<u32>().expect("column"))),
            None => (loc, None),
        };
        let line = match anchor {
            "" => i + 1,
            "@below" => {
                // The next line that is not a comment.
                (i + 1..lines.len())
                    .find(|&j| !lines[j].trim_start().starts_with("//"))
                    .expect("a line below")
                    + 1
            }
            a if a.starts_with("@+") => i + 1 + a[2..].parse::<usize>().unwrap(),
            a if a.starts_with("@-") => i + 1 - a[2..].parse::<usize>().unwrap(),
            a => panic!("unknown anchor {a}"),
        };
        out.push(Expected {
            line: line as u32,
            col,
            text: msg.to_string(),
        });
    }
    out
}

/// Runs an invalid-cases file: split at `// -----`, each part read on its own (with its line
/// numbers kept), every diagnostic expected and every expectation met.
fn run_invalid(name: &str) {
    let (_, text) = data(name);
    let v = file_version(&text);
    let mut failures = Vec::new();
    let mut offset = 0usize;
    for part in text.split("// -----") {
        let padded = format!("{}{}", "\n".repeat(offset), part);
        offset += part.matches('\n').count();
        let f = parse_file(&padded);
        let diags = check_file(&f, v);
        let exp = expectations(&padded);
        let mut used = vec![false; diags.len()];
        for e in &exp {
            let hit = diags.iter().enumerate().position(|(k, d)| {
                !used[k]
                    && d.span.line == e.line
                    && e.col.is_none_or(|c| c == d.span.col)
                    && d.message.contains(&e.text)
            });
            match hit {
                Some(k) => used[k] = true,
                None => failures.push(format!(
                    "{name}:{}: expected {:?} (col {:?}); got {:?}",
                    e.line,
                    e.text,
                    e.col,
                    diags.iter().map(|d| d.to_string()).collect::<Vec<_>>()
                )),
            }
        }
        for (k, d) in diags.iter().enumerate() {
            if !used[k] {
                failures.push(format!("{name}: unexpected diagnostic {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn conversion_invalid_cases() {
    run_invalid("conversion_invalid.mlir");
}

#[test]
fn invalid_cases() {
    run_invalid("invalid.mlir");
}

#[test]
fn v13_4_invalid_cases() {
    run_invalid("v13_4_invalid.mlir");
}

#[test]
fn v13_1_invalid_cases() {
    run_invalid("v13_1_invalid.mlir");
}

fn same_op(a: &ConvOp, b: &ConvOp) -> bool {
    a.kind == b.kind
        && a.operand.as_ref().map(|o| &o.value) == b.operand.as_ref().map(|o| &o.value)
        && a.signedness == b.signedness
        && a.rounding_mode() == b.rounding_mode()
        && a.overflow == b.overflow
        && a.is_saturating() == b.is_saturating()
        && a.src.value == b.src.value
        && a.dst.value == b.dst.value
}

fn run_valid(name: &str) {
    let (_, text) = data(name);
    let v = file_version(&text);
    let f = parse_file(&text);
    let diags = check_file(&f, v);
    assert!(
        diags.is_empty(),
        "{name}: {:?}",
        diags.iter().map(|d| d.to_string()).collect::<Vec<_>>()
    );
    // Print every conversion op, read it back, and compare.
    let mut printed = Vec::new();
    let mut count = 0;
    for m in &f.modules {
        for func in &m.functions {
            for s in &func.body {
                if let Op::Convert(c) = &s.op {
                    let line = format!("%{} = {}", s.results[0].value, c.to_text());
                    let back = parse_op(&line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
                    assert!(same_op(c, &back), "{line} read back differently");
                    assert!(gpucvt::tile::check::verify_op(&back, v).is_empty());
                    printed.push(line);
                    count += 1;
                }
            }
        }
    }
    assert!(count > 0);
    // CHECK lines, in order.
    let mut at = 0;
    for l in text.lines() {
        if let Some(want) = l.trim().strip_prefix("// CHECK:") {
            let want = want.trim();
            let k = printed[at..]
                .iter()
                .position(|p| p == want)
                .unwrap_or_else(|| panic!("{name}: CHECK {want:?} not found after #{at}"));
            at += k + 1;
        }
    }
}

#[test]
fn valid_conversion_file() {
    run_valid("conversion.mlir");
}

#[test]
fn valid_ops_file() {
    run_valid("ops.mlir");
    let (_, text) = data("ops.mlir");
    let f = parse_file(&text);
    // Skipped ops are kept as `Other`.
    let others: Vec<&str> = f.modules[0].functions[1]
        .body
        .iter()
        .filter_map(|s| match &s.op {
            Op::Other(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(others, ["cuda_tile.get_global", "load_ptr_tko"]);
}

#[test]
fn valid_v13_4_file() {
    run_valid("v13_4.mlir");
    // The same file is not valid at 13.3.
    let (_, text) = data("v13_4.mlir");
    let d = check_file(&parse_file(&text), SpecVersion::V13_3);
    assert!(d.len() >= 5, "{d:?}");
}

#[test]
fn diagnostic_positions() {
    let text = "cuda_tile.module @m {\n  entry @k(%a: tile<2xf16>) {\n    %r = ftof %a : tile<2xf16> -> tile<2xf16>\n  }\n}\n";
    let d = check_file(&parse_file(text), SpecVersion::LATEST);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].span.line, d[0].span.col), (3, 5));
    assert_eq!(
        d[0].to_string(),
        "3:5: error[tile.verify]: 'cuda_tile.ftof' op converting tiles must not be a no-op"
    );
    let e = parse_op("ftof %x rounding<bogus> : tile<f32> -> tile<f16>").unwrap();
    let d = gpucvt::tile::check::verify_op(&e, SpecVersion::V13_3);
    assert_eq!((d[0].span.line, d[0].span.col), (1, 18));
}

// ---- §3.4 example vectors ----

fn op(text: &str) -> ConvOp {
    parse_op(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn one(o: &ConvOp, sem: Semantics, t: Target, x: u64) -> ElementResult {
    eval_op(o, sem, t, &[x]).unwrap_or_else(|e| panic!("{}: {e}", o.to_text()))[0]
}

fn bits(v: u64) -> ElementResult {
    ElementResult::Bits(v)
}

const T90: Target = Target::SM_90;
const T100: Target = Target::SM_100A;

/// (op, input, tileiras on sm_90 or sm_100a, spec)
fn check_vector(text: &str, x: u64, tileiras: ElementResult, spec: ElementResult) {
    let o = op(text);
    let t = if text.contains("f8E8M0FNU") || text.contains("f4E2M1FN") {
        T100
    } else {
        T90
    };
    assert_eq!(
        one(&o, Semantics::Tileiras, t, x),
        tileiras,
        "tileiras: {text} {x:#x}"
    );
    assert_eq!(one(&o, Semantics::Spec, t, x), spec, "spec: {text} {x:#x}");
    assert_eq!(
        differs(&o, t, x).unwrap(),
        tileiras != spec,
        "differs: {text} {x:#x}"
    );
}

fn is_undefined(r: ElementResult) -> bool {
    matches!(r, ElementResult::Undefined(_))
}

#[test]
fn section_3_4_ftoi_vectors() {
    let undefined = |text: &str, x: u64, t: u64| {
        let o = op(text);
        assert_eq!(
            one(&o, Semantics::Tileiras, T90, x),
            bits(t),
            "{text} {x:#x}"
        );
        assert!(
            is_undefined(one(&o, Semantics::Spec, T90, x)),
            "{text} {x:#x}"
        );
        assert!(matches!(
            difference(&o, T90, x).unwrap(),
            Difference::Differ { .. }
        ));
    };
    let s8 = "ftoi %x signed : tile<f32> -> tile<i8>";
    let u8_ = "ftoi %x unsigned : tile<f32> -> tile<i8>";
    undefined(s8, 0x4348_0000, 0xc8); // 200.0 → −56
    undefined(s8, 0x471c_4000, 0xff); // 40000.0 → clamp 32767 → 0xff
    undefined(u8_, 0x4396_0000, 0x2c); // 300.0 → 44
    undefined(u8_, 0xc0a0_0000, 0x00); // −5.0 → 0
    undefined(
        "ftoi %x signed : tile<f32> -> tile<i64>",
        0x7fc0_0000,
        0x8000_0000_0000_0000,
    );
    undefined(
        "ftoi %x signed : tile<f64> -> tile<i32>",
        0x7ff8_0000_0000_0000,
        0x8000_0000,
    );
    undefined(
        "ftoi %x signed : tile<f64> -> tile<i8>",
        0x7ff8_0000_0000_0000,
        0x00,
    );
    undefined(
        "ftoi %x signed : tile<f32> -> tile<i32>",
        0x7f80_0000,
        0x7fff_ffff,
    );
    undefined(
        "ftoi %x signed : tile<f32> -> tile<i32>",
        0xff80_0000,
        0x8000_0000,
    );
    // In range: both agree.
    check_vector(s8, 0xc2fe_0000, bits(0x81), bits(0x81)); // −127.0
    check_vector(s8, 0x3fc0_0000, bits(1), bits(1)); // 1.5 → 1
                                                     // i1: x != 0 (NaN → 1); fp8 and tf32 test the raw bits (−0 → 1).
    let f32_i1 = "ftoi %x unsigned : tile<f32> -> tile<i1>";
    check_vector(f32_i1, 0x8000_0000, bits(0), bits(0));
    check_vector(f32_i1, 0x3f80_0000, bits(1), bits(1));
    undefined(f32_i1, 0x7fc0_0000, 1);
    undefined(f32_i1, 0x4000_0000, 1); // 2.0 is out of the range of i1
    check_vector(
        "ftoi %x unsigned : tile<f8E4M3FN> -> tile<i1>",
        0x80,
        bits(1),
        bits(0),
    );
    check_vector(
        "ftoi %x unsigned : tile<tf32> -> tile<i1>",
        0x8000_0000,
        bits(1),
        bits(0),
    );
    // f8E8M0FNU → int goes through f16: 2^16 overflows to Inf, then clamps.
    check_vector(
        "ftoi %x signed : tile<f8E8M0FNU> -> tile<i32>",
        0x8f,
        bits(0x7fff_ffff),
        bits(65536),
    );
    check_vector(
        "ftoi %x signed : tile<f8E8M0FNU> -> tile<i32>",
        0x8e,
        bits(32768),
        bits(32768),
    );
}

#[test]
fn section_3_4_double_rounding_vectors() {
    check_vector(
        "itof %x signed : tile<i32> -> tile<f8E5M2>",
        4609,
        bits(0x6c),
        bits(0x6d),
    );
    check_vector(
        "itof %x signed : tile<i32> -> tile<tf32>",
        16_785_409,
        bits(0x4b80_0000),
        bits(0x4b80_2000),
    );
    let f = |x: f64| x.to_bits();
    check_vector(
        "ftof %x : tile<f64> -> tile<f8E4M3FN>",
        f(1.0625 + 2f64.powi(-40)),
        bits(0x38),
        bits(0x39),
    );
    check_vector(
        "ftof %x : tile<f64> -> tile<tf32>",
        f(1.0 + 2f64.powi(-11) + 2f64.powi(-40)),
        bits(0x3f80_0000),
        bits(0x3f80_2000),
    );
    // f64 → bf16: sm_80 rounds twice (through f32), sm_90 once.
    let o = op("ftof %x : tile<f64> -> tile<bf16>");
    let x = f(1.0 + 2f64.powi(-8) + 2f64.powi(-40));
    assert_eq!(one(&o, Semantics::Tileiras, Target::SM_80, x), bits(0x3f80));
    assert_eq!(one(&o, Semantics::Tileiras, T90, x), bits(0x3f81));
    assert_eq!(one(&o, Semantics::Spec, Target::SM_80, x), bits(0x3f81));
    assert!(differs(&o, Target::SM_80, x).unwrap());
    assert!(!differs(&o, T90, x).unwrap());
    // int → f8E4M3FN through f16 is safe: what f16 rounds saturates anyway.
    let o = op("itof %x signed : tile<i32> -> tile<f8E4M3FN>");
    for x in [
        0u64,
        1,
        447,
        448,
        449,
        464,
        465,
        4609,
        65519,
        65520,
        70000,
        0x8000_0000,
    ] {
        assert!(!differs(&o, T90, x).unwrap(), "{x}");
    }
}

#[test]
fn section_3_4_special_values() {
    // fp8 destinations saturate; NaN → NaN in PTX, +MAX_NORM for e4m3 in the 13.4 table.
    let e4 = "ftof %x : tile<f32> -> tile<f8E4M3FN>";
    check_vector(e4, 0x7f80_0000, bits(0x7e), bits(0x7e));
    check_vector(e4, 0xff80_0000, bits(0xfe), bits(0xfe));
    check_vector(e4, 0x7fc0_0000, bits(0x7f), bits(0x7e));
    let e5 = "ftof %x : tile<f32> -> tile<f8E5M2>";
    check_vector(e5, 0x7f80_0000, bits(0x7b), bits(0x7b));
    check_vector(e5, 0x7fc0_0000, bits(0x7f), bits(0x7f));
    // f16 destination: no satfinite, overflow → Inf.
    check_vector(
        "ftof %x : tile<f32> -> tile<f16>",
        0x4780_0000,
        bits(0x7c00),
        bits(0x7c00),
    );
    check_vector(
        "ftof %x rounding<zero> : tile<f32> -> tile<f16>",
        0x4780_0000,
        bits(0x7bff),
        bits(0x7bff),
    );
    // e2m1: NaN → +MAX_NORM, Inf → ±MAX_NORM.
    check_vector(
        "ftof %x : tile<2xf32> -> tile<2xf4E2M1FN>",
        0x7fc0_0000,
        bits(0x7),
        bits(0x7),
    );
    // itof to fp8 overflows f16 first, then saturates: same as direct.
    check_vector(
        "itof %x signed : tile<i32> -> tile<f8E5M2>",
        100_000,
        bits(0x7b),
        bits(0x7b),
    );
    // tf32 → f32 copies the word; the spec reads 19 significant bits.
    check_vector(
        "ftof %x : tile<tf32> -> tile<f32>",
        0x3f80_0001,
        bits(0x3f80_0001),
        bits(0x3f80_0000),
    );
    // Saturating ftoi is the math definition.
    let sat = "ftoi %x signed saturating : tile<f32> -> tile<i32>";
    check_vector(sat, 0x4f80_0000, bits(0x7fff_ffff), bits(0x7fff_ffff));
    check_vector(sat, 0x7fc0_0000, bits(0), bits(0));
    check_vector(sat, 0xff80_0000, bits(0x8000_0000), bits(0x8000_0000));
    let sat8 = "ftoi %x unsigned saturating : tile<f32> -> tile<i8>";
    check_vector(sat8, 0x4396_0000, bits(0xff), bits(0xff));
    check_vector(sat8, 0xc0a0_0000, bits(0), bits(0));
    let sat64 = "ftoi %x signed saturating : tile<f32> -> tile<i64>";
    check_vector(sat64, 0x7fc0_0000, bits(0), bits(0));
    assert!(eval_op(
        &op("ftoi %x signed saturating : tile<f8E4M3FN> -> tile<i32>"),
        Semantics::Tileiras,
        T90,
        &[0x38]
    )
    .is_err());
}

#[test]
fn sm80_tf32_emulation() {
    let o = op("ftof %x : tile<f32> -> tile<tf32>");
    let t = |x| one(&o, Semantics::Tileiras, Target::SM_80, x);
    assert_eq!(t(0x7fc0_0000), bits(0x7fff_ffff));
    assert_eq!(t(0x7f80_0000), bits(0x7f80_0000));
    assert_eq!(t(0x3f80_1000), bits(0x3f80_0000)); // tie → even
    assert_eq!(t(0x3f80_3000), bits(0x3f80_4000)); // tie → even (up)
    assert_eq!(t(0x3f80_1001), bits(0x3f80_2000));
    // sm_80 and sm_90 agree on every finite input of a sample.
    for x in (0u64..0x8000_0000).step_by(0x0001_2345) {
        if (x >> 23) & 0xff == 0xff {
            continue;
        }
        assert_eq!(t(x), one(&o, Semantics::Tileiras, T90, x), "{x:#x}");
    }
}

#[test]
fn lowerings_as_data() {
    let l = |text: &str, t: Target| lowering(&op(text), t).unwrap().spellings();
    assert_eq!(
        l("ftof : tile<f64> -> tile<f8E4M3FN>", T90),
        ["cvt.rn.f32.f64", "cvt.rn.satfinite.e4m3x2.f32"]
    );
    assert_eq!(
        l("itof signed : tile<i32> -> tile<tf32>", T90),
        ["cvt.rn.f32.s32", "cvt.rn.tf32.f32"]
    );
    assert_eq!(
        l("itof signed : tile<i32> -> tile<f8E5M2>", T90),
        ["cvt.rn.f16.s32", "cvt.rn.satfinite.e5m2x2.f16x2"]
    );
    assert_eq!(
        l("ftoi signed : tile<f8E8M0FNU> -> tile<i32>", T100),
        [
            "cvt.rn.bf16x2.ue8m0x2",
            "cvt.f32.bf16",
            "cvt.rn.f16x2.f32",
            "cvt.rzi.s32.f16"
        ]
    );
    let l8 = l("ftoi unsigned : tile<f32> -> tile<i8>", T90);
    assert_eq!(l8[0], "cvt.rzi.u16.f32");
    assert!(l8[1].starts_with("st.global.b8"));
    assert_eq!(
        l(
            "ftof rounding<positive_inf> : tile<f16> -> tile<f8E8M0FNU>",
            T100
        ),
        ["cvt.f32.f16", "cvt.rp.satfinite.ue8m0x2.f32"]
    );
    assert_eq!(
        l("ftof rounding<nearest_away> : tile<f32> -> tile<tf32>", T90),
        ["cvt.rna.tf32.f32"]
    );
    assert_eq!(
        l("ftof : tile<f8E4M3FN> -> tile<f8E5M2>", T90),
        ["cvt.rn.f16x2.e4m3x2", "cvt.rn.satfinite.e5m2x2.f16x2"]
    );
    assert_eq!(
        l("ftof : tile<bf16> -> tile<f16>", T90),
        ["cvt.f32.bf16", "cvt.rn.f16x2.f32"]
    );
    assert_eq!(
        l("ftof : tile<f64> -> tile<f16>", Target::SM_80),
        ["cvt.rn.f16.f64"]
    );
    assert_eq!(
        l("ftof rounding<zero> : tile<f64> -> tile<f16>", T90),
        ["cvt.rz.f32.f64", "cvt.rz.f16x2.f32"]
    );
    assert!(l("ftof : tile<tf32> -> tile<f32>", T90)[0].contains("no instruction"));
    // Target gates.
    assert!(lowering(&op("ftof : tile<f32> -> tile<f8E4M3FN>"), Target::SM_80).is_err());
    assert!(lowering(&op("ftof : tile<f32> -> tile<fnv8E5M3FNU>"), T100).is_err());
    // Invalid ops are not evaluated.
    assert!(lowering(&op("ftof : tile<f32> -> tile<f32>"), T90).is_err());
}

/// Every lowering of every legal op, element pair and mode runs on a sample of inputs on
/// the targets that support it, and never fails.
#[test]
fn every_legal_op_lowers_and_runs() {
    let sm107 = Target::new(107, gpucvt::ptx::target::Variant::Arch).unwrap();
    for e in legal_table(SpecVersion::LATEST) {
        for &m in &e.modes {
            for sg in [Signedness::Signed, Signedness::Unsigned] {
                for sat in [false, true] {
                    if sat && !(e.saturating) {
                        continue;
                    }
                    let mut o = ConvOp::new(
                        e.op,
                        gpucvt::tile::TileType {
                            shape: vec![2],
                            elem: e.src,
                        },
                        gpucvt::tile::TileType {
                            shape: vec![2],
                            elem: e.dst,
                        },
                    );
                    if e.op.has_signedness() {
                        o.signedness = Some(sg);
                    }
                    o.rounding = Some(gpucvt::tile::parse::Spanned {
                        value: m.name().to_string(),
                        span: Default::default(),
                    });
                    if sat {
                        o.saturating = Some(Default::default());
                    }
                    let w = e.src.bits();
                    let inputs: Vec<u64> = (0..64u64)
                        .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - w))
                        .collect();
                    for t in [Target::SM_80, T90, T100, sm107] {
                        let r = eval_op(&o, Semantics::Tileiras, t, &inputs);
                        let supported = [e.src, e.dst].iter().all(|el| match el {
                            Element::Num(ElemType::F8E4M3FN | ElemType::F8E5M2) => t.arch() >= 90,
                            Element::Num(ElemType::F8E8M0FNU | ElemType::F4E2M1FN) => {
                                t.arch() >= 100
                            }
                            Element::Num(ElemType::FNV8E5M3FNU) => t.arch() >= 107,
                            _ => true,
                        }) && !(sat
                            && matches!(
                                e.src,
                                Element::Num(ElemType::F8E4M3FN | ElemType::F8E5M2)
                            ));
                        assert_eq!(r.is_ok(), supported, "{} on {t}: {r:?}", o.to_text());
                        if let Ok(r) = r {
                            let dm = if e.dst.bits() == 64 {
                                u64::MAX
                            } else {
                                (1u64 << e.dst.bits()) - 1
                            };
                            assert!(r.iter().all(|x| x.bits().is_some_and(|b| b & !dm == 0)));
                        }
                        let s = eval_op(&o, Semantics::Spec, t, &inputs).unwrap();
                        assert_eq!(s.len(), inputs.len());
                    }
                }
            }
        }
    }
}

// ---- per-op value tests against the core ----

/// The spec result of one element, computed here from the core with one `convert`.
fn core_spec(o: &ConvOp, x: u64) -> ElementResult {
    let (s, d) = (o.src.value.num().unwrap(), o.dst.value.num().unwrap());
    let sg = o.signedness;
    let sf = s.format(sg);
    let v = sf.decode(x);
    match o.kind {
        OpKind::Bitcast => bits(x),
        OpKind::ExtI => {
            // Sign or zero extension, as an exact conversion between integer formats.
            bits(convert(&v, &d.format(sg), Rounding::RZ, &Policy::default()).bits)
        }
        OpKind::TruncI => {
            let p = Policy {
                int_overflow: IntOverflow::Wrap,
                ..Policy::default()
            };
            let v = s.format(None).decode(x);
            bits(convert(&v, &d.format(None), Rounding::RZ, &p).bits)
        }
        OpKind::FtoF | OpKind::ItoF => {
            let df: Format = d.format(None);
            if v.is_nan() && df == format::E4M3 {
                return bits(0x7e);
            }
            let narrow = [
                format::E4M3,
                format::E5M2,
                format::E2M1,
                format::UE8M0,
                format::UE5M3,
            ];
            let p = Policy {
                satfinite: narrow.contains(&df),
                ..Policy::default()
            };
            let r = o.rounding_mode().unwrap().rounding().unwrap();
            bits(convert(&v, &df, r, &p).bits)
        }
        OpKind::FtoI => {
            let p = Policy {
                int_nan: IntNan::Zero,
                int_overflow: IntOverflow::Clamp,
                ..Policy::default()
            };
            let out = convert(&v, &d.format(sg), Rounding::RZI, &p);
            let bad = matches!(v.class, Class::Nan { .. } | Class::Infinite)
                || out.flags.contains(Flags::SATURATED);
            if bad && !o.is_saturating() {
                ElementResult::Undefined("")
            } else {
                bits(out.bits)
            }
        }
        _ => bits(x),
    }
}

fn same(a: ElementResult, b: ElementResult) -> bool {
    match (a, b) {
        (ElementResult::Bits(x), ElementResult::Bits(y)) => x == y,
        (ElementResult::Undefined(_), ElementResult::Undefined(_)) => true,
        _ => false,
    }
}

/// `spec` = one core `convert`, exhaustively for every source element type of at most 16
/// bits, every legal result type, mode and signedness (and `saturating`).
#[test]
fn spec_is_one_convert_exhaustive_small_sources() {
    let mut checked = 0u64;
    for e in legal_table(SpecVersion::LATEST) {
        let (Element::Num(s), Element::Num(_)) = (e.src, e.dst) else {
            continue;
        };
        if s.bits() > 16 {
            continue;
        }
        let inputs: Vec<u64> = (0..1u64 << s.bits()).collect();
        let modes: Vec<Option<RoundingMode>> = if e.modes.is_empty() {
            vec![None]
        } else {
            e.modes.iter().copied().map(Some).collect()
        };
        for m in modes {
            for sg in [Signedness::Signed, Signedness::Unsigned] {
                for sat in [false, true] {
                    if sat && !e.saturating {
                        continue;
                    }
                    let mut o = ConvOp::new(
                        e.op,
                        gpucvt::tile::TileType {
                            shape: vec![2],
                            elem: e.src,
                        },
                        gpucvt::tile::TileType {
                            shape: vec![2],
                            elem: e.dst,
                        },
                    );
                    if e.op.has_signedness() {
                        o.signedness = Some(sg);
                    } else if sg == Signedness::Unsigned {
                        continue;
                    }
                    if let Some(m) = m {
                        o.rounding = Some(gpucvt::tile::parse::Spanned {
                            value: m.name().to_string(),
                            span: Default::default(),
                        });
                    }
                    if sat {
                        o.saturating = Some(Default::default());
                    }
                    let got = eval_op(&o, Semantics::Spec, T100, &inputs).unwrap();
                    for (&x, &g) in inputs.iter().zip(&got) {
                        let want = core_spec(&o, x);
                        assert!(same(g, want), "{} x={x:#x}: {g:?} vs {want:?}", o.to_text());
                    }
                    checked += inputs.len() as u64;
                }
            }
        }
    }
    assert!(checked > 1_000_000, "{checked}");
}

/// Where the compiler's lowering is single-rounded (integer ops, fp8 sources, f16 ↔ bf16,
/// bf16 → fp8, small integers to floats), `tileiras` equals `spec` on every non-NaN input
/// where `spec` is defined (exhaustive for ≤16-bit sources).
#[test]
fn tileiras_equals_spec_where_single_rounded() {
    let cases = [
        "exti %x signed : tile<i1> -> tile<i32>",
        "exti %x unsigned : tile<i1> -> tile<i64>",
        "exti %x signed : tile<i8> -> tile<i64>",
        "exti %x unsigned : tile<i16> -> tile<i32>",
        "exti %x signed : tile<2xi4> -> tile<2xi16>",
        "trunci %x : tile<i16> -> tile<i8>",
        "trunci %x : tile<i16> -> tile<i1>",
        "trunci %x : tile<2xi8> -> tile<2xi4>",
        "bitcast %x : tile<i16> -> tile<bf16>",
        "ftof %x : tile<f16> -> tile<bf16>",
        "ftof %x rounding<zero> : tile<bf16> -> tile<f16>",
        "ftof %x : tile<bf16> -> tile<f8E4M3FN>",
        "ftof %x : tile<f16> -> tile<f8E5M2>",
        "ftof %x : tile<f8E4M3FN> -> tile<f32>",
        "ftof %x : tile<f8E5M2> -> tile<f8E4M3FN>",
        "ftof %x : tile<f8E4M3FN> -> tile<bf16>",
        "ftof %x : tile<f8E5M2> -> tile<tf32>",
        "ftof %x rounding<zero> : tile<f16> -> tile<f8E8M0FNU>",
        "ftof %x : tile<f8E8M0FNU> -> tile<f32>",
        "ftof %x : tile<2xf4E2M1FN> -> tile<2xf64>",
        "ftof %x : tile<2xf16> -> tile<2xf4E2M1FN>",
        "ftoi %x signed : tile<f16> -> tile<i16>",
        "ftoi %x unsigned : tile<bf16> -> tile<i32>",
        "ftoi %x signed : tile<f16> -> tile<i8>",
        "ftoi %x unsigned : tile<f8E5M2> -> tile<i64>",
        "ftoi %x signed saturating : tile<f16> -> tile<i8>",
        "ftoi %x unsigned saturating : tile<bf16> -> tile<i16>",
        "itof %x signed : tile<i16> -> tile<f32>",
        "itof %x unsigned : tile<i16> -> tile<f16>",
        "itof %x signed : tile<i8> -> tile<bf16>",
        "itof %x unsigned : tile<i8> -> tile<f8E4M3FN>",
        "itof %x unsigned : tile<i1> -> tile<f8E5M2>",
        "itof %x signed : tile<i16> -> tile<f8E4M3FN>",
    ];
    for text in cases {
        let o = op(text);
        assert!(
            gpucvt::tile::check::verify_op(&o, SpecVersion::LATEST).is_empty(),
            "{text} does not verify"
        );
        let s = o.src.value.num().unwrap();
        let inputs: Vec<u64> = (0..1u64 << s.bits()).collect();
        let spec = eval_op(&o, Semantics::Spec, T100, &inputs).unwrap();
        let til = eval_op(&o, Semantics::Tileiras, T100, &inputs).unwrap();
        let sf = s.format(None);
        for ((&x, &a), &b) in inputs.iter().zip(&spec).zip(&til) {
            if s.is_float() && sf.decode(x).is_nan() {
                continue;
            }
            if let ElementResult::Bits(a) = a {
                assert_eq!(bits(a), b, "{text} x={x:#x}");
            }
        }
    }
}

#[test]
fn trunci_overflow_flags_are_promises() {
    let nsw = op("trunci %x overflow<no_signed_wrap> : tile<i16> -> tile<i8>");
    let nuw = op("trunci %x overflow<no_unsigned_wrap> : tile<i16> -> tile<i8>");
    let nw = op("trunci %x overflow<no_wrap> : tile<i16> -> tile<i8>");
    let s = |o: &ConvOp, x| one(o, Semantics::Spec, T90, x);
    assert_eq!(s(&nsw, 0xff80), bits(0x80));
    assert!(is_undefined(s(&nsw, 0x0080)));
    assert_eq!(s(&nuw, 0x0080), bits(0x80));
    assert!(is_undefined(s(&nuw, 0xff80)));
    assert!(is_undefined(s(&nw, 0x0080)));
    assert_eq!(s(&nw, 0x007f), bits(0x7f));
    // The compiler keeps the low bits regardless.
    assert_eq!(one(&nw, Semantics::Tileiras, T90, 0xff80), bits(0x80));
}

#[test]
fn run_an_entry() {
    let text = "cuda_tile.module @m {
  entry @k(%a: tile<4xf32>, %n: tile<4xi32>) {
    %c = constant <f64: [1.0625, 2.5, -0.0, 0x7FF0000000000000]> : tile<4xf64>
    %h = ftof %c : tile<4xf64> -> tile<4xf8E4M3FN>
    %i = ftoi %a signed : tile<4xf32> -> tile<4xi8>
    %j = exti %i signed : tile<4xi8> -> tile<4xi32>
    %g = get_global @x : tile<ptr<f32>>
    %f = itof %n unsigned : tile<4xi32> -> tile<4xf32>
    return
  }
}";
    let f = parse_file(text);
    assert!(check_file(&f, SpecVersion::LATEST).is_empty());
    let args = vec![
        vec![0x4348_0000, 0x3f80_0000, 0xc000_0000, 0x7fc0_0000],
        vec![7],
    ];
    let out = run_entry(&f, "k", &args, &RunOptions::default()).unwrap();
    let names: Vec<&str> = out.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["a", "n", "c", "h", "i", "j", "f"]);
    let b = |k: usize| out[k].elements.iter().map(|e| e.bits()).collect::<Vec<_>>();
    assert_eq!(b(3), [Some(0x38), Some(0x42), Some(0x80), Some(0x7e)]);
    assert_eq!(b(4), [Some(0xc8), Some(1), Some(0xfe), Some(0)]);
    assert_eq!(
        b(5),
        [Some(0xffff_ffc8), Some(1), Some(0xffff_fffe), Some(0)]
    );
    assert_eq!(b(6), [Some(0x40e0_0000); 4]);
    let spec = RunOptions {
        semantics: Semantics::Spec,
        ..RunOptions::default()
    };
    let out = run_entry(&f, "@k", &args, &spec).unwrap();
    assert!(is_undefined(out[4].elements[0]));
    assert!(is_undefined(out[5].elements[0])); // undefined in, undefined out
    assert_eq!(out[5].elements[2], bits(0xffff_fffe));
    assert!(run_entry(&f, "nope", &args, &spec).is_err());
    assert!(run_entry(&f, "k", &args[..1], &spec).is_err());
    assert!(run_entry(&f, "k", &[vec![1, 2], vec![1]], &spec).is_err());
}

#[test]
fn legal_table_shape() {
    for v in SpecVersion::ALL {
        let t = legal_table(v);
        let has = |op: OpKind, s: ElemType, d: ElemType| {
            t.iter()
                .find(|e| e.op == op && e.src == Element::Num(s) && e.dst == Element::Num(d))
                .map(|e| e.modes.clone())
        };
        assert_eq!(
            has(OpKind::FtoI, ElemType::F32, ElemType::I32),
            Some(vec![RoundingMode::NearestIntToZero])
        );
        assert_eq!(
            has(OpKind::ItoF, ElemType::I32, ElemType::F32),
            Some(vec![RoundingMode::NearestEven])
        );
        assert!(has(OpKind::ExtI, ElemType::I8, ElemType::I8).is_none());
        assert_eq!(
            has(OpKind::ExtI, ElemType::I4, ElemType::I8).is_some(),
            v >= SpecVersion::V13_3
        );
        let f64_f32 = has(OpKind::FtoF, ElemType::F64, ElemType::F32).unwrap();
        assert_eq!(f64_f32.len(), if v == SpecVersion::V13_4 { 4 } else { 1 });
    }
}

// ---- the reader never panics ----

const SEEDS: &[&str] = &[
    "cuda_tile.module @m {\n  entry @k(%a: tile<4x8xf32>, %p: tile<ptr<f32>>) {\n    %c = constant <f16: [[1.0, -0.0], [0x7C00, 2.5e-3]]> : !cuda_tile.tile<2x2xf16>\n    %r = ftof %a rounding<zero> : tile<4x8xf32> -> tile<4x8xf16>\n    %i = ftoi %a unsigned rounding<nearest_int_to_zero> saturating : tile<4x8xf32> -> tile<4x8xi8>\n    %t = trunci %i overflow<no_wrap> {x = 1} : tile<4x8xi8> -> tile<4x8xi4>\n    return %r : tile<4x8xf16>\n  }\n}\n",
    "module @m { testing$func @f(%arg0: tile<2xi1>) -> tile<2xi8> { %0 = exti %arg0 signed : tile<2xi1> -> tile<2xi8>\n \"x.y\"(%0) : (tile<2xi8>) -> ()\n } }",
    "%r = itof %x signed : tile<i32> -> tile<f8E5M2>",
    "bitcast : tile<16xi8> -> tile<16xf8E8M0FNU>",
];

proptest! {
    // (More cases where `PROPTEST_CASES` asks for more: a long local run.)
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(2000)))]

    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        let f = parse_file(&s);
        for v in SpecVersion::ALL {
            let _ = check_file(&f, v);
        }
        let _ = parse_op(&s);
        let _ = gpucvt::tile::parse_tile_type(&s);
    }

    #[test]
    fn mutated_seeds_never_panic(
        seed in 0..SEEDS.len(),
        edits in prop::collection::vec((any::<u16>(), 0u8..4, "[ -~]{0,4}"), 1..6),
        x in any::<u64>(),
    ) {
        let mut s: Vec<char> = SEEDS[seed].chars().collect();
        for (at, kind, text) in edits {
            let at = at as usize % (s.len() + 1);
            match kind {
                0 => { s.splice(at..at, text.chars()); }
                1 => { let end = (at + text.len().max(1)).min(s.len()); s.drain(at..end); }
                2 => if at < s.len() { s[at] = text.chars().next().unwrap_or('<'); },
                _ => { let end = (at + 3).min(s.len()); let seg: Vec<char> = s[at..end].to_vec(); s.splice(at..at, seg); }
            }
        }
        let s: String = s.into_iter().collect();
        let f = parse_file(&s);
        for v in SpecVersion::ALL {
            let _ = check_file(&f, v);
        }
        for m in &f.modules {
            for func in &m.functions {
                if func.args.iter().any(|a| a.ty.num_elements() > 4096) {
                    continue;
                }
                let args: Vec<Vec<u64>> = func.args.iter().map(|_| vec![0]).collect();
                let _ = run_entry(&f, &func.name, &args, &RunOptions::default());
            }
        }
        if let Ok(o) = parse_op(&s) {
            let _ = o.to_text();
            for v in SpecVersion::ALL {
                let _ = gpucvt::tile::check::verify_op(&o, v);
            }
            let w = o.src.value.elem.bits();
            let x = if w >= 64 { x } else { x & ((1u64 << w) - 1) };
            for t in [Target::SM_80, T90, T100] {
                let _ = eval_op(&o, Semantics::Tileiras, t, &[x, x.wrapping_add(1) & if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }]);
                let _ = eval_op(&o, Semantics::Spec, t, &[x]);
                let _ = lowering(&o, t).map(|l| l.spellings());
            }
            let _ = eval_op(&o, Semantics::Spec, T90, &[u64::MAX]);
        }
    }
}

// ---- NVIDIA's own valid files, and the syntax they use ----

fn errors(text: &str) -> Vec<String> {
    check_file(&parse_file(text), SpecVersion::LATEST)
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect()
}

/// Every statement of a function, region bodies included.
fn all_stmts(body: &[Stmt]) -> Vec<&Stmt> {
    let mut out = Vec::new();
    for s in body {
        out.push(s);
        for r in &s.regions {
            out.extend(all_stmts(&r.body));
        }
    }
    out
}

fn conversions(text: &str) -> Vec<ConvOp> {
    let f = parse_file(text);
    let mut out = Vec::new();
    for m in &f.modules {
        for func in &m.functions {
            for s in all_stmts(&func.body) {
                if let Op::Convert(c) = &s.op {
                    out.push(c.clone());
                }
            }
        }
    }
    out
}

fn corpus(dir: &str) -> Vec<(String, String)> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tile")
        .join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mlir"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).expect("readable");
            (p.display().to_string(), t)
        })
        .collect()
}

#[test]
fn valid_cuda_tile_files_check_without_errors() {
    let mut files = corpus("cuda-tile");
    assert!(files.len() >= 25, "{}", files.len());
    files.extend(corpus("syntax"));
    let mut convs = 0;
    for (name, text) in &files {
        assert_eq!(errors(text), Vec::<String>::new(), "{name}");
        let f = parse_file(text);
        // Every function written is read (none is skipped as unreadable text).
        let written = text
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                !l.starts_with("//")
                    && (l.contains("entry @") || l.contains("testing$func @"))
                    && !l.contains("CHECK")
            })
            .count()
            + text.matches("\"cuda_tile.entry\"").count()
            + text.matches("\"cuda_tile.testing$func\"").count();
        let read: usize = f.modules.iter().map(|m| m.functions.len()).sum();
        assert_eq!(read, written, "{name}: functions read");
        convs += conversions(text).len();
    }
    // conversion.mlir alone has over a hundred conversion ops; all are verified.
    assert!(convs > 150, "{convs}");
}

#[test]
fn ops_continued_on_the_next_line() {
    let (_, text) = data("syntax/continued_lines.mlir");
    let c = conversions(&text);
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].rounding_mode(), Some(RoundingMode::Zero));
    assert_eq!(c[1].kind, OpKind::FtoI);
    // A continued conversion op is still verified, at its first line.
    let bad = text.replace("-> tile<4xf16>", "-> tile<4xf32>");
    let e = errors(&bad);
    assert_eq!(
        e,
        ["4:5: error[tile.verify]: 'cuda_tile.ftof' op converting tiles must not be a no-op"]
    );
}

#[test]
fn region_arguments_and_conversions_inside_regions() {
    let (_, text) = data("syntax/regions.mlir");
    assert_eq!(conversions(&text).len(), 7);
    // A conversion inside a region is verified: its operand's type is the region argument's.
    let bad = text.replace(
        "%h = ftof %in rounding<zero> : tile<f32>",
        "%h = ftof %in rounding<zero> : tile<f64>",
    );
    assert_eq!(
        errors(&bad),
        ["7:17: error[tile.ssa]: use of value '%in' expects different type than prior uses: 'tile<f64>' vs 'tile<f32>'"]
    );
    // A region's values are not in scope after it.
    let bad = text.replace("return %1 : tile<f16>", "return %add : tile<f16>");
    assert_eq!(
        errors(&bad),
        ["13:12: error[tile.ssa]: use of undeclared SSA value name"]
    );
    // Outer values and the header's names are in scope inside; others are not.
    let bad = text.replace("%f = itof %iv signed", "%f = itof %ivx signed");
    assert_eq!(
        errors(&bad),
        ["28:17: error[tile.ssa]: use of undeclared SSA value name"]
    );
}

#[test]
fn results_of_skipped_ops_may_be_returned_and_yielded() {
    let text = "cuda_tile.module @m {\n  testing$func @f(%a: tile<4xf32>) -> tile<4xf32> {\n    %s = addf %a, %a : tile<4xf32>\n    return %s : tile<4xf32>\n  }\n}\n";
    assert_eq!(errors(text), Vec::<String>::new());
    let bad = text.replace("return %s", "return %t");
    assert_eq!(
        errors(&bad),
        ["4:12: error[tile.ssa]: use of undeclared SSA value name"]
    );
}

#[test]
fn undeclared_conversion_operand_is_an_error_in_check() {
    let text = "cuda_tile.module @m {\n  entry @k(%a: tile<f32>) {\n    %h = ftof %nope : tile<f32> -> tile<f16>\n  }\n}\n";
    assert_eq!(
        errors(text),
        ["3:15: error[tile.ssa]: use of undeclared SSA value name"]
    );
}

#[test]
fn view_pointer_and_token_argument_types() {
    let (_, text) = data("syntax/types.mlir");
    let f = parse_file(&text);
    let func = &f.modules[0].functions[0];
    assert_eq!(func.args.len(), 2);
    let other: Vec<&str> = func.other_args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(other, ["ptr", "tv", "pv", "tok"]);
    assert_eq!(
        func.other_args[1].ty,
        ValueType::Other("!cuda_tile.tensor_view<?x2xf32, strides=[1,?]>".into())
    );
    // A pointer is not a tile of pointers.
    let bad = text.replace("ptr_to_int %t :", "ptr_to_int %ptr :");
    assert_eq!(
        errors(&bad),
        ["9:21: error[tile.ssa]: use of value '%ptr' expects different type than prior uses: 'tile<4xptr<f32>>' vs '!cuda_tile.ptr<f32>'"]
    );
}

#[test]
fn locations_and_location_aliases() {
    let (_, text) = data("syntax/locations.mlir");
    let c = conversions(&text);
    assert_eq!(c.len(), 2);
    assert_eq!(c[1].kind, OpKind::FtoI);
    // Something other than a location after an op is still an error.
    let bad = text.replace("loc(#loc1)\n    %c", "junk\n    %c");
    assert_eq!(
        errors(&bad),
        ["7:58: error[tile.syntax]: unexpected text after the operation"]
    );
}

#[test]
fn module_attributes_and_the_generic_form() {
    let (_, text) = data("syntax/modules.mlir");
    let f = parse_file(&text);
    let names: Vec<(&str, Vec<&str>)> = f
        .modules
        .iter()
        .map(|m| {
            (
                m.name.as_str(),
                m.functions.iter().map(|f| f.name.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("outer", vec!["k"]),
            ("generic", vec!["func", "e"]),
            ("plain", vec!["k"]),
            ("generic_conversions", vec!["convs"])
        ]
    );
    let generic = &f.modules[1].functions[0];
    assert!(generic.test_func);
    assert_eq!(generic.args.len(), 2);
    let c = conversions(&text);
    assert_eq!(c.len(), 7);
    // Conversion ops in the generic form: their attributes are read and verified.
    assert_eq!(
        c[3].to_text(),
        "ftof %a rounding<zero> : tile<4xf32> -> tile<4xf16>"
    );
    assert_eq!(
        c[5].to_text(),
        "trunci %n overflow<no_wrap> : tile<4xi16> -> tile<4xi8>"
    );
    assert_eq!(c[6].signedness, Some(Signedness::Unsigned));
    let bad = text.replace(
        "#cuda_tile.rounding<zero>}> : (!cuda_tile.tile<4xf32>)",
        "#cuda_tile.rounding<bogus>}> : (!cuda_tile.tile<4xf32>)",
    );
    assert_eq!(
        errors(&bad),
        ["34:69: error[tile.rounding]: expected rounding mode to be one of: 'nearest_even', 'zero', 'negative_inf', 'positive_inf', 'nearest_away', got: 'bogus'"]
    );
    let bad = text.replace("<{signedness = #cuda_tile.signedness<unsigned>}> ", "");
    assert_eq!(
        errors(&bad),
        ["37:5: error[tile.syntax]: 'cuda_tile.exti' op requires attribute 'signedness'"]
    );
    // The generic function's block arguments are typed.
    let bad = text.replace(
        "%w = exti %x signed : tile<i8>",
        "%w = exti %x signed : tile<i16>",
    );
    assert_eq!(
        errors(&bad),
        ["20:15: error[tile.ssa]: use of value '%x' expects different type than prior uses: 'tile<i16>' vs 'tile<i8>'"]
    );
}

#[test]
fn skipped_ops_get_one_note_per_name() {
    let (_, text) = data("syntax/regions.mlir");
    let f = parse_file(&text);
    assert!(f.notes.iter().all(|d| d.severity == Severity::Note));
    let addf = f
        .notes
        .iter()
        .find(|d| d.message.contains("'addf'"))
        .expect("a note for addf");
    assert_eq!(
        addf.to_string(),
        "9:14: note[tile.skipped]: op 'addf' is not modelled by gpucvt: read and skipped (3 times)"
    );
    assert_eq!(f.notes.len(), 8);
    // Notes are not the checker's diagnostics.
    assert!(check_file(&f, SpecVersion::LATEST).is_empty());
}

#[test]
fn byte_order_mark_and_line_endings() {
    let text = "cuda_tile.module @m {\n  entry @k(%a: tile<2xf16>) {\n    %r = ftof %a\n      : tile<2xf16> -> tile<2xf16>\n    %s = addf %a, %a\n      : tile<2xf16>\n  }\n}\n";
    let want =
        ["3:5: error[tile.verify]: 'cuda_tile.ftof' op converting tiles must not be a no-op"];
    assert_eq!(errors(text), want);
    let bom = format!("\u{feff}{text}");
    assert_eq!(errors(&bom), want);
    // The column on the first line does not count the mark.
    let bad = format!("\u{feff}bogus {text}");
    assert_eq!(
        errors(&bad)[0],
        "1:1: error[tile.syntax]: expected 'cuda_tile.module'"
    );
    assert_eq!(errors(&text.replace('\n', "\r\n")), want);
    assert_eq!(errors(&text.replace('\n', "\r")), want);
}
