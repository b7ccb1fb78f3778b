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
use gpucvt_core::{Conversion, Policy, Rounding};
use std::hint::black_box;

fn main() {
    let n = 1 << 20;
    let mut s = 0x1234_5678_9abc_def0u64;
    let src: Vec<u32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = s as u32;
            (r & 0x8000_0000) | (100 + (r >> 24) % 50) << 23 | (r & 0x007f_ffff)
        })
        .collect();
    let random: Vec<u32> = src.iter().map(|x| x.rotate_left(7)).collect();
    let random16: Vec<u16> = random.iter().map(|&r| r as u16).collect();
    let random8: Vec<u8> = random.iter().map(|&r| r as u8).collect();
    let sf = Policy {
        satfinite: true,
        ..Policy::default()
    };
    let none = Policy::default();
    let cases = [
        ("f16-rn", F16, Rounding::RN, none),
        ("f16-rz", F16, Rounding::RZ, none),
        ("f16-rs", F16, Rounding::stochastic(0, 13), none),
        ("bf16-rn", BF16, Rounding::RN, none),
        ("bf16-rz", BF16, Rounding::RZ, none),
        ("bf16-rs", BF16, Rounding::stochastic(0, 16), none),
        ("tf32-rna", TF32, Rounding::RNA, none),
        ("tf32-rn", TF32, Rounding::RN, none),
        ("tf32-rz", TF32, Rounding::RZ, none),
        ("e4m3-rn", E4M3, Rounding::RN, sf),
        ("e4m3-rz", E4M3, Rounding::RZ, sf),
        ("e4m3-rs", E4M3, Rounding::stochastic(0, 8), sf),
        ("e5m2-rn", E5M2, Rounding::RN, sf),
        ("e5m2-rz", E5M2, Rounding::RZ, sf),
        ("e5m2-rs", E5M2, Rounding::stochastic(0, 8), sf),
        ("e2m3-rn", E2M3, Rounding::RN, sf),
        ("e2m3-rz", E2M3, Rounding::RZ, sf),
        ("e2m3-rs", E2M3, Rounding::stochastic(0, 8), sf),
        ("e3m2-rn", E3M2, Rounding::RN, sf),
        ("e3m2-rz", E3M2, Rounding::RZ, sf),
        ("e3m2-rs", E3M2, Rounding::stochastic(0, 8), sf),
        ("e2m1-rn", E2M1, Rounding::RN, sf),
        ("e2m1-rz", E2M1, Rounding::RZ, sf),
        ("e2m1-rs", E2M1, Rounding::stochastic(0, 8), sf),
        ("ue8m0-rz", UE8M0, Rounding::RZ, sf),
        ("ue8m0-rp", UE8M0, Rounding::RP, sf),
    ];
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
