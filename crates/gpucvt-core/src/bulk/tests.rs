//! The fast kernels against the exact core. (The full 2^32 sweeps are ignored tests below and
//! `gpucvt verify`.)

use super::*;
use crate::convert::{Overflow, Policy};
use crate::format::*;
use crate::round::Rounding;

/// A small deterministic generator (xorshift*), so failures are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }
}

/// f32 patterns dense around every exponent and every rounding position, both signs.
fn boundary_f32() -> Vec<u32> {
    let mut mants = vec![
        0u32, 1, 2, 3, 0x7f_ffff, 0x7f_fffe, 0x7f_fffd, 0x40_0000, 0x40_0001,
    ];
    for k in 0..23 {
        let b = 1u32 << k;
        mants.extend([
            b,
            b - 1,
            b + 1,
            b | (b >> 1),
            (b << 1).wrapping_sub(1) & 0x7f_ffff,
        ]);
        // Ties and near-ties at every rounding position, with the kept bit odd and even.
        for kept in [0u32, 1, 2, 3] {
            let base = (kept << (k + 1)) & 0x7f_ffff;
            mants.extend([base | b, base | (b - 1), base | (b + 1)]);
        }
    }
    mants.sort_unstable();
    mants.dedup();
    let mut v = Vec::new();
    for e in 0..=255u32 {
        for &m in &mants {
            for s in [0u32, 1] {
                v.push(s << 31 | e << 23 | (m & 0x7f_ffff));
            }
        }
    }
    v
}

fn policies() -> Vec<Policy> {
    let d = Policy::default();
    vec![
        d,
        Policy {
            satfinite: true,
            ..d
        },
        Policy { relu: true, ..d },
        Policy {
            relu: true,
            satfinite: true,
            ..d
        },
        Policy { sat: true, ..d },
        Policy {
            flush_inputs: true,
            ..d
        },
        Policy {
            positive_zero: true,
            ..d
        },
        Policy {
            overflow: Overflow::Saturate,
            ..d
        },
    ]
}

fn check_f32(dst: Format, rounding: Rounding, policy: Policy, inputs: &[u32], rng: &mut Rng) {
    let conv = Conversion::new(F32, dst, rounding, policy);
    let k = Kernel::new(conv);
    assert_ne!(
        k.strategy(),
        Strategy::Exact,
        "{dst} {rounding:?} {policy:?}"
    );
    let random: Vec<u32> = inputs.iter().map(|_| rng.next()).collect();
    let mut out = vec![0u32; inputs.len()];
    let stochastic = matches!(rounding.direction, Direction::Stochastic { .. });
    if stochastic {
        k.convert_stochastic(inputs, &mut out, &random).unwrap();
    } else {
        k.convert(inputs, &mut out).unwrap();
    }
    for (i, (&x, &got)) in inputs.iter().zip(&out).enumerate() {
        let mut c = conv;
        if let Direction::Stochastic { width, .. } = rounding.direction {
            c.rounding = Rounding::stochastic(random[i] as u64, width);
        }
        let want = c.apply(x as u64).bits as u32;
        assert_eq!(
            got, want,
            "f32 {x:#010x} → {dst} {rounding:?} {policy:?}: kernel {got:#x}, core {want:#x}"
        );
    }
}

const SMALL: [Format; 10] = [F16, BF16, TF32, E4M3, E5M2, E2M3, E3M2, E2M1, UE4M3, UE5M3];

#[test]
fn f32_small_kernels_equal_the_core_on_boundaries() {
    let inputs = boundary_f32();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for dst in SMALL {
        for rounding in [
            Rounding::RN,
            Rounding::RNA,
            Rounding::RZ,
            Rounding::RM,
            Rounding::RP,
            Rounding::stochastic(0, 13),
            Rounding::stochastic(0, 8),
            Rounding::stochastic(0, 16),
        ] {
            for policy in policies() {
                check_f32(dst, rounding, policy, &inputs, &mut rng);
            }
        }
    }
}

#[test]
fn f32_small_kernels_equal_the_core_on_random_inputs() {
    let mut rng = Rng(42);
    let inputs: Vec<u32> = (0..200_000).map(|_| rng.next()).collect();
    for dst in SMALL {
        for rounding in [Rounding::RN, Rounding::RZ, Rounding::stochastic(0, 13)] {
            for policy in [
                Policy::default(),
                Policy {
                    satfinite: true,
                    relu: true,
                    ..Policy::default()
                },
            ] {
                check_f32(dst, rounding, policy, &inputs, &mut rng);
            }
        }
    }
}

#[test]
fn f32_ue8m0_kernels_equal_the_core() {
    let mut inputs = boundary_f32();
    let mut rng = Rng(7);
    inputs.extend((0..100_000).map(|_| rng.next()));
    for rounding in [Rounding::RZ, Rounding::RP] {
        for policy in [
            Policy::default(),
            Policy {
                satfinite: true,
                ..Policy::default()
            },
            Policy {
                flush_inputs: true,
                ..Policy::default()
            },
        ] {
            let conv = Conversion::new(F32, UE8M0, rounding, policy);
            let k = Kernel::new(conv);
            assert_eq!(k.strategy(), Strategy::F32Ue8m0);
            let mut out = vec![0u8; inputs.len()];
            k.convert(&inputs, &mut out).unwrap();
            for (&x, &got) in inputs.iter().zip(&out) {
                assert_eq!(
                    got as u64,
                    conv.apply(x as u64).bits,
                    "{x:#x} {rounding:?} {policy:?}"
                );
            }
        }
    }
}

#[test]
fn tables_equal_the_core_exhaustively() {
    for src in [F16, BF16, E4M3, E2M1, S16, U8] {
        for dst in [F32, E5M2, S8, F16, UE8M0] {
            let conv = Conversion::new(src, dst, Rounding::RN, Policy::default());
            let k = Kernel::new(conv);
            assert_eq!(k.strategy(), Strategy::Table);
            let inputs: Vec<u16> = (0..=src.mask() as u16).collect();
            let mut out = vec![0u32; inputs.len()];
            k.convert(&inputs, &mut out).unwrap();
            for (&x, &got) in inputs.iter().zip(&out) {
                assert_eq!(got as u64, conv.apply(x as u64).bits);
            }
        }
    }
}

#[test]
fn errors_are_reported() {
    let k = Kernel::new(Conversion::new(F32, F16, Rounding::RN, Policy::default()));
    let mut out = [0u8; 2];
    assert!(matches!(
        k.convert(&[0u32, 1], &mut out),
        Err(BulkError::Narrow { .. })
    ));
    let mut out = [0u16; 1];
    assert!(matches!(
        k.convert(&[0u32, 1], &mut out),
        Err(BulkError::Length { .. })
    ));
    let k = Kernel::new(Conversion::new(
        F32,
        F16,
        Rounding::stochastic(0, 13),
        Policy::default(),
    ));
    let mut out = [0u16; 2];
    assert!(matches!(
        k.convert_stochastic(&[0u32, 1], &mut out, &[1]),
        Err(BulkError::Random { .. })
    ));
}

/// All 2^32 inputs (slow; `cargo test -- --ignored`, or `gpucvt verify`).
#[test]
#[ignore]
fn f32_kernels_equal_the_core_on_every_input() {
    for (dst, rounding, policy) in [
        (F16, Rounding::RN, Policy::default()),
        (BF16, Rounding::RN, Policy::default()),
        (
            E4M3,
            Rounding::RN,
            Policy {
                satfinite: true,
                ..Policy::default()
            },
        ),
        (
            E2M1,
            Rounding::RN,
            Policy {
                satfinite: true,
                ..Policy::default()
            },
        ),
        (UE8M0, Rounding::RP, Policy::default()),
    ] {
        let conv = Conversion::new(F32, dst, rounding, policy);
        let k = Kernel::new(conv);
        let mut out = vec![0u32; 1 << 16];
        for hi in 0..(1u32 << 16) {
            let inputs: Vec<u32> = (0..(1u32 << 16)).map(|lo| hi << 16 | lo).collect();
            k.convert(&inputs, &mut out).unwrap();
            for (&x, &got) in inputs.iter().zip(&out) {
                assert_eq!(got as u64, conv.apply(x as u64).bits, "{x:#x} → {dst}");
            }
        }
    }
}
