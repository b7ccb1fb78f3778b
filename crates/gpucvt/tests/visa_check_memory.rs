//! `check_source` on a large valid `.visaasm` kernel must not hold the kernel: its peak heap
//! use, counted by a wrapping allocator (exact and repeatable, unlike RSS), stays a small
//! fraction of the text however many instructions the kernel has (it was about 18 times the
//! text: 846 MB for a 45 MB file).
//!
//! This file holds one test only, so that no other test allocates while it counts.

use gpucvt::visa::check::{check_source, CheckOptions};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

/// An IGC-like kernel: declarations, then `blocks` groups of movs, arithmetic, a message and
/// a label (every variable declared before the code, as IGC writes them).
fn kernel(blocks: usize) -> String {
    let mut s = String::from(".version 3.6\n.kernel \"k\"\n");
    for v in 0..32 {
        s += &format!(".decl F{v} v_type=G type=f num_elts=16 align=GRF\n");
        s += &format!(".decl H{v} v_type=G type=hf num_elts=16 align=GRF\n");
        s += &format!(".decl D{v} v_type=G type=d num_elts=16 align=GRF\n");
    }
    s += ".decl P1 v_type=P num_elts=16\n.kernel_attr Target=3d\n";
    for b in 0..blocks {
        let (x, y) = (b % 32, (b * 7) % 32);
        s += &format!(
            "L{b}:\n\
             mov (M1, 16) H{x}(0,0)<1> F{y}(0,0)<1;1,0>\n\
             mov.sat (M1, 8) D{y}(0,0)<1> F{x}(0,0)<1;1,0>\n\
             add (M1, 16) F{x}(0,0)<1> F{y}(0,0)<1;1,0> 0x3f800000:f\n\
             cmp.lt (M1, 16) P1 F{x}(0,0)<1;1,0> 0x0:f\n\
             (P1) mov (M1, 16) D{x}(0,0)<1> 0x7:d\n\
             send (M1, 16) 0x0:ud 0x2000000:ud F{y}.0 // load\n"
        );
    }
    s + "ret (M1, 1)\n"
}

/// The heap bytes `check_source` peaks at on `src` (no diagnostic expected).
fn peak_of_check(src: &str) -> usize {
    let base = counting_alloc::reset_peak();
    let diags = check_source(src, &CheckOptions::default());
    let peak = counting_alloc::peak() - base;
    assert!(diags.is_empty(), "{:?}", &diags[..diags.len().min(5)]);
    peak
}

/// The peak on a kernel of 40,000 blocks is under a tenth of its text, and hardly more than
/// on one of 10,000.
#[test]
fn check_source_peak_heap_is_a_fraction_of_the_kernel() {
    assert!(check_source(&kernel(2), &CheckOptions::default()).is_empty());
    let (small, large) = (kernel(10_000), kernel(40_000));
    let (p_small, p_large) = (peak_of_check(&small), peak_of_check(&large));
    eprintln!(
        "{} bytes peak at {p_small}, {} bytes at {p_large}",
        small.len(),
        large.len()
    );
    assert!(p_large < large.len() / 10, "{p_large} heap bytes");
    assert!(
        p_large < p_small + 64 * 1024,
        "{p_small} -> {p_large} heap bytes"
    );
}
