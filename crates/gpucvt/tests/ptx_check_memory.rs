//! `check_source` on a large valid PTX module must not hold the module's parse tree: its
//! peak heap use, counted by a wrapping allocator (exact and repeatable, unlike RSS), stays
//! a small fraction of the text however many functions the module has.
//!
//! This file holds one test only, so that no other test allocates while it counts.

use gpucvt::ptx::check::check_source;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

/// An nvcc-like kernel of about 32 KB: labels, branches, loads and stores, arithmetic,
/// `mov` and legal `cvt`s.
fn kernel(k: usize) -> String {
    kernel_of(k, 100)
}

/// An nvcc-like kernel of `blocks` basic blocks of 10 statements.
fn kernel_of(k: usize, blocks: usize) -> String {
    let mut s = format!(
        ".visible .entry kernel_{k}(\n\t.param .u64 kernel_{k}_param_0\n)\n{{\n\
         \t.reg .pred \t%p<4>;\n\t.reg .b16 \t%h<16>;\n\t.reg .b32 \t%r<32>;\n\
         \t.reg .f32 \t%f<32>;\n\t.reg .b64 \t%rd<8>;\n\n\
         \tld.param.u64 \t%rd1, [kernel_{k}_param_0];\n\
         \tcvta.to.global.u64 \t%rd2, %rd1;\n"
    );
    for b in 0..blocks {
        let (x, y) = (b % 30 + 1, (b * 7) % 30 + 1);
        s += &format!(
            "$L__BB{k}_{b}:\n\
             \tld.global.f32 \t%f{x}, [%rd2+{b}];\n\
             \tfma.rn.f32 \t%f{y}, %f{x}, %f{y}, %f1;\n\
             \tmov.f32 \t%f2, 0f3F800000;\n\
             \tcvt.rn.f16.f32 \t%h{h}, %f{x};\n\
             \tcvt.rn.satfinite.e4m3x2.f32 \t%h3, %f{x}, %f{y};\n\
             \tcvt.rzi.s32.f32 \t%r{x}, %f{y};\n\
             \tadd.s32 \t%r{y}, %r{x}, %r{y};\n\
             \tst.global.f32 \t[%rd2+{b}], %f{y};\n\
             \tsetp.lt.s32 \t%p1, %r{x}, %r{y};\n\
             \t@%p1 bra \t$L__BB{k}_{b};\n",
            h = b % 15 + 1
        );
    }
    s + "\tret;\n}\n\n"
}

/// The heap bytes `check_source` peaks at on `src` (no diagnostic expected).
fn peak_of_check(src: &str) -> usize {
    let base = counting_alloc::reset_peak();
    let diags = check_source(src, None, None);
    let peak = counting_alloc::peak() - base;
    assert!(diags.is_empty(), "{:?}", &diags[..diags.len().min(5)]);
    peak
}

/// A parse tree of the whole module took about 20 times the text; one function at a time
/// takes a few times one function, plus the reader's token window, however large the
/// module: the peak on `large` is under a tenth of it and grows by less than two kernels of
/// `one` bytes over the peak on `small`.
#[track_caller]
fn bounded(what: &str, small: &str, large: &str, one: usize) {
    let (p_small, p_large) = (peak_of_check(small), peak_of_check(large));
    eprintln!(
        "{what}: {} bytes peak at {p_small}, {} bytes at {p_large}",
        small.len(),
        large.len()
    );
    assert!(p_large < large.len() / 10, "{p_large} heap bytes");
    assert!(
        p_large < p_small + 2 * one,
        "{p_small} -> {p_large} heap bytes"
    );
}

#[test]
fn check_source_peak_heap_is_a_fraction_of_the_module() {
    let header = ".version 8.0\n.target sm_90\n.address_size 64\n\n";
    let one = kernel(0).len();
    let module = |n: usize| header.to_string() + &(0..n).map(kernel).collect::<String>();
    // Warm up (lazily built tables) before counting.
    assert_eq!(check_source(&kernel(0), None, None).len(), 2);
    let (small, large) = (module(100), module(400));
    bounded(&format!("kernels of {one} bytes"), &small, &large, one);
    // Within one function too: each cvt is checked as it is read, not kept to the end.
    let (small, large) = (
        header.to_string() + &kernel_of(0, 10_000),
        header.to_string() + &kernel_of(0, 40_000),
    );
    bounded("one kernel", &small, &large, one);
}
