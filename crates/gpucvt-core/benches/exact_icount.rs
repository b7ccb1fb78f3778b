//! Instruction counts of the exact core ([`Conversion::apply`]) per conversion, for
//! `valgrind --tool=callgrind` (repeatable where timings are noisy). Each named case converts
//! 1 Mi f32 patterns spread evenly over all 2^32 (as `gpucvt verify` meets them: NaNs,
//! infinities, huge and tiny values included); the case `none` converts nothing, so the
//! difference of two totals divided by 2^20 is the cost of one conversion:
//!
//! ```sh
//! cargo bench -p gpucvt-core --bench exact_icount --no-run
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/deps/exact_icount-* e4m3-rn
//! ```
//!
//! With `--compiled` it converts through [`Conversion::compiled`] instead, with `--bits`
//! through [`Conversion::compiled_bits`] (results only, no flags, one call for the slice);
//! with `--bits --random` too, stochastic cases take a random word per element (as `gpucvt
//! verify` passes them: each element's own, at the case's width). Without case names it runs
//! every case once and prints their names.

use gpucvt_core::format::*;
use gpucvt_core::{Conversion, Policy, Rounding};
use std::hint::black_box;

fn main() {
    let n: u32 = 1 << 20;
    // An odd multiplier permutes the 32-bit patterns: an even spread over all of them.
    let src: Vec<u32> = (0..n)
        .map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x5bd1)
        .collect();
    let sf = Policy {
        satfinite: true,
        ..Policy::default()
    };
    let none = Policy::default();
    let cases = [
        ("f16-rn", F16, Rounding::RN, none),
        ("bf16-rn", BF16, Rounding::RN, none),
        ("tf32-rna", TF32, Rounding::RNA, none),
        ("e4m3-rn", E4M3, Rounding::RN, sf),
        ("e5m2-rz", E5M2, Rounding::RZ, sf),
        ("e2m1-rs", E2M1, Rounding::stochastic(0x5a5a, 8), sf),
        ("e4m3-rs", E4M3, Rounding::stochastic(0x5a5a, 8), sf),
        ("f16-rs", F16, Rounding::stochastic(0x5a5a, 13), sf),
        ("bf16-rs", BF16, Rounding::stochastic(0x5a5a, 16), sf),
        ("ue8m0-rp", UE8M0, Rounding::RP, sf),
        ("s32-rni", S32, Rounding::RNI, none),
        ("s32-rzi", S32, Rounding::RZI, none),
        ("u8-rni", U8, Rounding::RNI, none),
        ("u8-rzi", U8, Rounding::RZI, none),
        ("s64-rni", S64, Rounding::RNI, none),
        ("s64-rzi", S64, Rounding::RZI, none),
        ("u32-rmi", U32, Rounding::RMI, none),
    ];
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let compiled = std::env::args().any(|a| a == "--compiled");
    let bits = std::env::args().any(|a| a == "--bits");
    let random = std::env::args().any(|a| a == "--random");
    let words: Vec<u64> = (0..n as u64).map(gpucvt_core::random::splitmix64).collect();
    let wide: Vec<u64> = src.iter().map(|&x| x as u64).collect();
    let mut out = vec![0u64; wide.len()];
    let mut sum = 0u64;
    for (name, dst, rounding, policy) in cases {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        println!("{name}");
        let c = black_box(Conversion::new(F32, dst, rounding, policy));
        if bits {
            let words = random.then_some(black_box(&words[..]));
            (c.compiled_bits())(&c, black_box(&wide), words, &mut out);
            sum = sum.wrapping_add(out.iter().sum::<u64>());
            continue;
        }
        let apply = if compiled {
            c.compiled()
        } else {
            Conversion::apply
        };
        for &x in black_box(&src) {
            sum = sum.wrapping_add(apply(&c, x as u64).bits);
        }
    }
    black_box(sum);
}
