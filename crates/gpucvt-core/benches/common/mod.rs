//! What the `bulk` and `bulk_icount` benchmarks share: the inputs and the cases.

use gpucvt_core::format::*;
use gpucvt_core::{Policy, Rounding};

/// `n` deterministic f32 bit patterns.
pub fn inputs(n: usize) -> Vec<u32> {
    // Values spread over the useful range of every destination (|x| from 2^-27 to 2^22, so
    // subnormal, normal and overflowing results for the narrow formats), with both signs,
    // deterministic.
    let mut s = 0x1234_5678_9abc_def0u64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = s as u32;
            let exp = 100 + (r >> 24) % 50;
            (r & 0x8000_0000) | exp << 23 | (r & 0x007f_ffff)
        })
        .collect()
}

fn satfinite() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

/// The gpucvt cases: name, destination, rounding, policy.
pub fn cases() -> Vec<(&'static str, Format, Rounding, Policy)> {
    let none = Policy::default();
    let sf = satfinite();
    vec![
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
    ]
}
