//! Instruction counts of the bulk kernels, for `valgrind --tool=callgrind` (repeatable where
//! timings are noisy). Runs each named case once over 1 Mi elements (all cases without
//! arguments) and prints nothing but the case names (`-rs` cases take their random values in
//! the narrowest word, as in the `bulk` benchmark):
//!
//! ```sh
//! cargo bench -p gpucvt-core --bench bulk_icount --no-run
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/deps/bulk_icount-* e4m3-rn
//! callgrind_annotate --inclusive=yes cg.out | grep convert
//! ```
//!
//! (Valgrind does not emulate AVX-512, so this counts the AVX2 kernels.)

use gpucvt_core::bulk::Kernel;
use gpucvt_core::format::*;
use gpucvt_core::Conversion;
use std::hint::black_box;

mod common;
use common::{cases, inputs};

fn main() {
    let n = 1 << 20;
    let src = inputs(n);
    let random: Vec<u32> = src.iter().map(|x| x.rotate_left(7)).collect();
    let random16: Vec<u16> = random.iter().map(|&r| r as u16).collect();
    let random8: Vec<u8> = random.iter().map(|&r| r as u8).collect();
    let cases = cases();
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut d8 = vec![0u8; n];
    let mut d16 = vec![0u16; n];
    let mut d32 = vec![0u32; n];
    for (name, dst, rounding, policy) in cases {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        println!("{name}");
        let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
        let rs = name.ends_with("-rs");
        match dst.width() {
            w if w <= 8 && rs => k.convert_stochastic_words(black_box(&src), &mut d8, &random8),
            w if w <= 8 => k.convert(black_box(&src), &mut d8),
            w if w <= 16 && rs => k.convert_stochastic_words(black_box(&src), &mut d16, &random16),
            w if w <= 16 => k.convert(black_box(&src), &mut d16),
            _ => k.convert(black_box(&src), &mut d32),
        }
        .unwrap();
    }
    black_box((&d8, &d16, &d32));
}
