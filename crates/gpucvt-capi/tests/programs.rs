//! The C and C++ test programs: every error path (tests/c/errors.c), one form shared by four
//! threads (tests/c/threads.c), the C++ wrapper (tests/cpp/wrapper.cpp), and the warp
//! examples of examples/c and examples/cpp.

use crate::common::{build, root, run, warp_expected};

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

#[test]
fn slices() {
    let p = build(
        "slices",
        &[root().join("crates/gpucvt-capi/tests/c/slices.c")],
        false,
    );
    assert_eq!(run(&p, &[], ""), "slices: every check passed\n");
}
