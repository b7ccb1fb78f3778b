//! The C and C++ test programs: every error path (tests/c/errors.c), one form shared by four
//! threads (tests/c/threads.c), the C++ wrapper (tests/cpp/wrapper.cpp), and the warp
//! examples of examples/c and examples/cpp.

use crate::common::{build, root, run};

#[test]
fn errors() {
    let p = build(
        "errors",
        &[root().join("crates/gpucvt-capi/tests/c/errors.c")],
        false,
    );
    assert_eq!(run(&p, &[], ""), "errors: every check passed\n");
}

#[test]
fn threads() {
    let p = build(
        "threads",
        &[root().join("crates/gpucvt-capi/tests/c/threads.c")],
        false,
    );
    assert_eq!(
        run(&p, &[], ""),
        "threads: 4 threads x 20000 evaluations equal to one thread's\n"
    );
}

#[test]
fn cpp_wrapper() {
    let p = build(
        "wrapper",
        &[root().join("crates/gpucvt-capi/tests/cpp/wrapper.cpp")],
        true,
    );
    assert_eq!(run(&p, &[], ""), "cpp wrapper: every check passed\n");
}

/// What examples/c/warp_cvt.c and examples/cpp/warp_cvt.cpp print, from the Rust API: the
/// same lanes, operands and random bits.
fn warp_expected() -> String {
    use model::instr::{Instr, Options};
    let opts = Options {
        target: Some("sm_100a".parse().unwrap()),
        ..Options::default()
    };
    let form = Instr::parse("cvt.rs.satfinite.e4m3x4.f32", &opts).unwrap();
    let mut out = String::new();
    for i in 0..8u32 {
        let ops = [
            (1.0f32 + i as f32 / 64.0).to_bits(),
            (-0.3f32 * i as f32).to_bits(),
            1000.0f32.to_bits(),
            (i as f32 / 512.0).to_bits(),
            0x9e37_79b9u32.wrapping_mul(i + 1),
        ]
        .map(u64::from);
        let d = if i == 4 {
            0xdead_beef // inactive
        } else {
            form.eval_bits(&ops).unwrap().0
        };
        out.push_str(&format!("lane {i}: d = {d:08x}\n"));
    }
    out.push_str("lane 16: d = deadbeef (inactive)\n");
    out
}

#[test]
fn warp_examples() {
    let want = warp_expected();
    let c = build("warp_c", &[root().join("examples/c/warp_cvt.c")], false);
    assert_eq!(run(&c, &[], ""), want);
    let cpp = build(
        "warp_cpp",
        &[root().join("examples/cpp/warp_cvt.cpp")],
        true,
    );
    assert_eq!(run(&cpp, &[], ""), want);
}
