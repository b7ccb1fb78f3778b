//! Instruction counts of the bulk kernels, for `valgrind --tool=callgrind` (repeatable where
//! timings are noisy). Runs each named case once over 1 Mi elements (all cases without
//! arguments) and prints nothing but the case names (`-rs` cases take their random values in
//! the narrowest word, as in the `bulk` benchmark; the `roofline-*` loops of the `bulk`
//! benchmark are cases too):
//!
//! ```sh
//! cargo bench -p gpucvt-kernels --bench bulk_icount --no-run
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/deps/bulk_icount-* e4m3-rn
//! callgrind_annotate --inclusive=yes cg.out | grep 'isa::fast \|isa::map'
//! ```
//!
//! (Valgrind does not emulate AVX-512, so this counts the AVX2 kernels.)

use gpucvt_core::format::*;
use gpucvt_core::Conversion;
use gpucvt_kernels::Kernel;
use std::hint::black_box;

mod common;
use common::{cases, roofline, Data, ROOFLINES};

fn main() {
    let n = 1 << 20;
    let mut data = Data::new(n);
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |name: &str| wanted.is_empty() || wanted.iter().any(|w| w == name);
    for name in ROOFLINES {
        if want(name) {
            println!("{name}");
            roofline(name, &mut data);
        }
    }
    let d = &mut data;
    for (name, dst, rounding, policy) in cases() {
        if !want(name) {
            continue;
        }
        println!("{name}");
        let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
        let rs = name.ends_with("-rs");
        let src = black_box(&d.src[..]);
        match dst.width() {
            w if w <= 8 && rs => k.convert_stochastic_words(src, &mut d.dst8[..], &d.random8[..]),
            w if w <= 8 => k.convert(src, &mut d.dst8[..]),
            w if w <= 16 && rs => {
                k.convert_stochastic_words(src, &mut d.dst16[..], &d.random16[..])
            }
            w if w <= 16 => k.convert(src, &mut d.dst16[..]),
            _ => k.convert(src, &mut d.dst32[..]),
        }
        .unwrap();
    }
    black_box((&d.dst8, &d.dst16, &d.dst32));
}
