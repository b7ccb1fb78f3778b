//! `check_source` on a large valid `.mlir` file must not hold the file's parse tree: its
//! peak heap use, counted by a wrapping allocator (exact and repeatable, unlike RSS), stays
//! a small fraction of the text however many functions it has, and within one function
//! grows with the values it defines rather than with the text.
//!
//! This file holds one test only, so that no other test allocates while it counts.

use gpucvt::tile::check::check_source;
use gpucvt::tile::types::SpecVersion;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

/// An entry of `ops` statements: conversions, constants, ops gpucvt skips (some with a
/// region), and long `loc(…)` locations as compilers write them.
fn entry(k: usize, ops: usize) -> String {
    let mut s =
        format!("  entry @k{k}(%x: tile<4xf32>, %n: tile<4xi32>, %p: !cuda_tile.ptr<f32>) {{\n");
    for i in 0..ops {
        let loc = format!("loc(\"/home/user/project/kernels/attention_{k}.py\":{i}:7)");
        s += &match i % 6 {
            0 => format!("    %h{i} = ftof %x rounding<nearest_even> : tile<4xf32> -> tile<4xf16> {loc}\n"),
            1 => format!("    %q{i} = ftof %x : tile<4xf32> -> tile<4xf8E4M3FN> {loc}\n"),
            2 => format!("    %c{i} = constant <f32: [1.0, 2.0, 3.0, 4.0]> : tile<4xf32> {loc}\n"),
            3 => format!("    %a{i} = addf %x, %x : tile<4xf32> {loc}\n"),
            4 => format!("    %i{i} = itof %n signed rounding<nearest_even> : tile<4xi32> -> tile<4xf32> {loc}\n"),
            _ => format!("    %t{i} = trunci %n : tile<4xi32> -> tile<4xi8> {loc}\n"),
        };
    }
    s + "    return\n  }\n"
}

fn module(entries: usize, ops: usize) -> String {
    let mut s = String::from("cuda_tile.module @m {\n");
    for k in 0..entries {
        s += &entry(k, ops);
    }
    s + "}\n"
}

/// The heap bytes `check_source` peaks at on `src`, and its diagnostics' count.
fn peak_of_check(src: &str) -> (usize, usize) {
    let base = counting_alloc::reset_peak();
    let diags = check_source(src, SpecVersion::LATEST);
    let peak = counting_alloc::peak() - base;
    (peak, diags.len())
}

/// Many functions: one at a time, a tenth of the text at most, hardly more for four times
/// the functions. One function of n ops: the names and types of its values (a few types,
/// kept once; a name and its hash-table slot, under 128 bytes a value, about 90 measured),
/// never the ops: under the text itself, where the parse tree took about 7 times it.
#[test]
fn check_source_peak_heap_is_a_fraction_of_the_file() {
    let _ = check_source(&module(1, 6), SpecVersion::LATEST);
    let one = entry(0, 600).len();
    let (small, large) = (module(100, 600), module(400, 600));
    let ((p_small, n_small), (p_large, n_large)) = (peak_of_check(&small), peak_of_check(&large));
    eprintln!(
        "entries: {} bytes peak at {p_small}, {} bytes at {p_large}",
        small.len(),
        large.len()
    );
    assert_eq!(
        n_small, n_large,
        "the same notes (skipped ops, counted once per name)"
    );
    assert!(p_large < large.len() / 10, "{p_large} heap bytes");
    assert!(
        p_large < p_small + 2 * one,
        "{p_small} -> {p_large} heap bytes"
    );
    let (small, large) = (module(1, 60_000), module(1, 240_000));
    let ((p_small, _), (p_large, _)) = (peak_of_check(&small), peak_of_check(&large));
    eprintln!(
        "one entry: {} bytes peak at {p_small}, {} bytes at {p_large}",
        small.len(),
        large.len()
    );
    assert!(p_large < large.len(), "{p_large} heap bytes");
    assert!(
        p_large - p_small < 128 * 180_000,
        "{p_small} -> {p_large} heap bytes"
    );
}
