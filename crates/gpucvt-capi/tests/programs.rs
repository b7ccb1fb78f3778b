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
