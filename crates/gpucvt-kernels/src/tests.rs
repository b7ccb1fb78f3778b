//! The fast kernels against the exact core. (The full 2^32 sweeps are ignored tests below and
//! `gpucvt verify`.)

use super::*;
use crate::portable::spec::{formats, Fmt, Id};
use crate::portable::{fast, small, ue8m0};
use gpucvt_core::convert::{Overflow, Policy};
use gpucvt_core::format::*;
use gpucvt_core::round::Rounding;
use gpucvt_reference::Rng;

/// A small deterministic generator (xorshift*), so failures are reproducible.
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
    let random: Vec<u32> = inputs.iter().map(|_| rng.next_u32()).collect();
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
    let inputs: Vec<u32> = (0..200_000).map(|_| rng.next_u32()).collect();
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
    inputs.extend((0..100_000).map(|_| rng.next_u32()));
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
fn f32_ue8m0_kernels_agree_on_every_instruction_set() {
    // Each version of the kernel (the AVX2 one has its own code for `.satfinite` and for no
    // policy), on boundary and random inputs, with a length that leaves a tail.
    let mut inputs = boundary_f32();
    let mut rng = Rng(11);
    inputs.extend((0..50_000).map(|_| rng.next_u32()));
    inputs.extend((0..50_000).map(|_| rng.next_u32() | 0x7f80_0000));
    // Whole groups of 32 and a tail of 7.
    let n = inputs.len() / 32 * 32 - 25;
    inputs.truncate(n);
    fn check<const UP: bool, const P: u8>(inputs: &[u32], conv: Conversion) {
        let mut out = vec![0u8; inputs.len()];
        for isa in InstructionSet::ALL {
            out.fill(0x55);
            if !isa::ue8m0_isa::<UP, P>(isa, inputs, &mut out) {
                continue;
            }
            for (&x, &got) in inputs.iter().zip(&out) {
                assert_eq!(
                    got as u64,
                    conv.apply(x as u64).bits,
                    "{x:#x} isa {isa} {conv:?}"
                );
            }
        }
    }
    let sf = satfinite();
    let ftz = Policy {
        flush_inputs: true,
        ..Policy::default()
    };
    let c = |r, p| Conversion::new(F32, UE8M0, r, p);
    check::<false, 0>(&inputs, c(Rounding::RZ, Policy::default()));
    check::<true, 0>(&inputs, c(Rounding::RP, Policy::default()));
    check::<false, { ue8m0::SF }>(&inputs, c(Rounding::RZ, sf));
    check::<true, { ue8m0::SF }>(&inputs, c(Rounding::RP, sf));
    check::<false, { ue8m0::FTZ }>(&inputs, c(Rounding::RZ, ftz));
    check::<true, { ue8m0::FTZ }>(&inputs, c(Rounding::RP, ftz));
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

/// ml_dtypes' formats (fnuz: one NaN at 0x80, no −0) as sources and destinations of the
/// tables, and as destinations of the run-time `f32` kernel, against the exact core.
#[test]
fn ml_dtypes_formats_equal_the_core() {
    let new = [E4M3IEEE, E3M4, E4M3FNUZ, E5M2FNUZ, E4M3B11FNUZ];
    let policies = [
        Policy::default(),
        satfinite(),
        Policy {
            relu: true,
            ..Policy::default()
        },
        Policy {
            sat: true,
            ..Policy::default()
        },
        Policy {
            flush_inputs: true,
            ..Policy::default()
        },
        Policy {
            positive_zero: true,
            ..Policy::default()
        },
    ];
    for src in new.iter().chain(&[F16, BF16, E4M3, E2M1]) {
        for dst in new.iter().chain(&[F32, F16, E4M3, S8]) {
            for rounding in [Rounding::RN, Rounding::RZ, Rounding::RM] {
                for p in [Policy::default(), satfinite()] {
                    let conv = Conversion::new(*src, *dst, rounding, p);
                    let k = Kernel::new(conv);
                    assert_eq!(k.strategy(), Strategy::Table);
                    let inputs: Vec<u16> = (0..=src.mask() as u16).collect();
                    let mut out = vec![0u32; inputs.len()];
                    k.convert(&inputs, &mut out).unwrap();
                    for (&x, &got) in inputs.iter().zip(&out) {
                        assert_eq!(got as u64, conv.apply(x as u64).bits, "{conv:?} {x:#x}");
                    }
                }
            }
        }
    }
    let mut rng = Rng(0x5eed_0f8f_0f8f_0001);
    for dst in new {
        let inputs: Vec<u32> = boundary_f32()
            .into_iter()
            .chain(specials())
            .chain(dst_boundaries(dst))
            .chain((0..5_000).map(|_| rng.next_u32()))
            .collect();
        let random: Vec<u32> = inputs.iter().map(|_| rng.next_u32()).collect();
        for rounding in [
            Rounding::RN,
            Rounding::RNA,
            Rounding::RZ,
            Rounding::RM,
            Rounding::RP,
            Rounding::stochastic(0, 8),
        ] {
            for p in policies {
                let conv = Conversion::new(F32, dst, rounding, p);
                let k = Kernel::new(conv);
                assert_eq!(k.strategy(), Strategy::F32Small, "{conv:?}");
                let mut out = vec![0u32; inputs.len()];
                k.convert_stochastic(&inputs, &mut out, &random).unwrap();
                for ((&x, &r), &got) in inputs.iter().zip(&random).zip(&out) {
                    let mut c = conv;
                    if let Direction::Stochastic { width, .. } = rounding.direction {
                        c.rounding = Rounding::stochastic(r as u64, width);
                    }
                    assert_eq!(got as u64, c.apply(x as u64).bits, "{c:?} {x:#x}");
                }
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

/// Runs `check` on every one of the 2^32 `f32` bit patterns, 2^16 at a time in order, the
/// pieces shared among the machine's cores.
fn every_f32(check: impl Fn(&[u32]) + Sync) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    std::thread::scope(|scope| {
        for t in 0..threads {
            let check = &check;
            scope.spawn(move || {
                let mut inputs = vec![0u32; 1 << 16];
                for hi in (t..1u32 << 16).step_by(threads as usize) {
                    for (lo, x) in inputs.iter_mut().enumerate() {
                        *x = hi << 16 | lo as u32;
                    }
                    check(&inputs);
                }
            });
        }
    });
}

/// Every one of the 2^32 inputs through the kernel and the exact core, on every core.
fn exhaustive(dst: Format, rounding: Rounding, policy: Policy) {
    let conv = Conversion::new(F32, dst, rounding, policy);
    let k = Kernel::new(conv);
    assert_ne!(k.strategy(), Strategy::Exact);
    every_f32(|inputs| {
        let mut out = vec![0u32; inputs.len()];
        k.convert(inputs, &mut out).unwrap();
        for (&x, &got) in inputs.iter().zip(&out) {
            assert_eq!(got as u64, conv.apply(x as u64).bits, "{x:#x} → {dst}");
        }
    });
}

fn satfinite() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

/// All 2^32 inputs, f32 → f16 rn (slow: `cargo test --release -- --ignored every_input`, or
/// `gpucvt verify`).
#[test]
#[ignore]
fn every_input_f16_rn() {
    exhaustive(F16, Rounding::RN, Policy::default());
}

/// All 2^32 inputs, f32 → bf16 rn.
#[test]
#[ignore]
fn every_input_bf16_rn() {
    exhaustive(BF16, Rounding::RN, Policy::default());
}

/// All 2^32 inputs through instance `F`, `M`, `SF` (8-bit random values in bytes for `RS`,
/// derived from the input; `.relu` if `conv` has it) compiled for instruction set `isa` (1:
/// AVX2), against the exact core: the AVX2 kernels on a machine whose best is AVX-512.
/// Skipped where the CPU lacks the instruction set.
fn exhaustive_isa<F: Fmt, const M: u8, const SF: bool>(conv: Conversion, isa: InstructionSet) {
    if conv.policy.relu {
        return exhaustive_isa_knobs::<F, M, SF, true>(conv, isa);
    }
    exhaustive_isa_knobs::<F, M, SF, false>(conv, isa);
}

/// [`exhaustive_isa`] through the instance with the knobs (`KN`) or without.
fn exhaustive_isa_knobs<F: Fmt, const M: u8, const SF: bool, const KN: bool>(
    conv: Conversion,
    isa: InstructionSet,
) {
    let k = fast::Knobs {
        w: 8,
        ftz_below: 0,
        relu: if conv.policy.relu { !0 } else { 0 },
    };
    every_f32(|inputs| {
        let random: Vec<u8> = inputs
            .iter()
            .map(|x| (x.wrapping_mul(0x9e37_79b9) >> 24) as u8)
            .collect();
        let mut out = vec![0u8; inputs.len()];
        if !isa::fast_isa::<F, M, SF, KN, 8, u8, u8>(isa, inputs, &mut out, &random, k) {
            return;
        }
        for ((&x, &r), &got) in inputs.iter().zip(&random).zip(&out) {
            let mut c = conv;
            if M == small::RS {
                c.rounding = Rounding::stochastic(u64::from(r), 8);
            }
            assert_eq!(
                u64::from(got),
                c.apply(u64::from(x)).bits,
                "{x:#x} r {r} isa {isa}"
            );
        }
    });
}

/// All 2^32 inputs through the AVX2 FP8/FP6/FP4 kernels whose dispatch an AVX-512 machine
/// never reaches (unless `GPUCVT_ISA=avx2`). One addition per element: e4m3 and e2m1 to
/// nearest, e5m2 to nearest without .satfinite (overflow to infinity); e2m3 and e3m2 toward
/// zero without .satfinite; e2m3 and e4m3 stochastic. Through f16's bytes: e4m3, e5m2,
/// e2m3, e3m2 and e2m1 toward zero with .satfinite; e5m2, e3m2 and e2m1 stochastic. With
/// `.relu` (which the kernels apply themselves): e2m3 toward zero without `.satfinite` (one
/// addition), e5m2 and e2m1 toward zero with it (through f16's bytes; PTX has no such form
/// for `gpucvt verify`).
#[test]
#[ignore]
fn every_input_avx2_narrow_kernels() {
    let sf = satfinite();
    let d = Policy::default();
    let c = |f, r, p| Conversion::new(F32, f, r, p);
    exhaustive_isa::<formats::E4M3, { small::RN }, true>(
        c(E4M3, Rounding::RN, sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E2M1, { small::RN }, true>(
        c(E2M1, Rounding::RN, sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E5M2, { small::RN }, false>(
        c(E5M2, Rounding::RN, d),
        InstructionSet::Avx2,
    );
    // Toward zero and stochastic: the truncation from the pattern and from `vcvttps2dq`.
    exhaustive_isa::<formats::E2M3, { small::RZ }, false>(
        c(E2M3, Rounding::RZ, d),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E3M2, { small::RZ }, false>(
        c(E3M2, Rounding::RZ, d),
        InstructionSet::Avx2,
    );
    let rs = Rounding::stochastic(0, 8);
    exhaustive_isa::<formats::E2M3, { small::RS }, true>(c(E2M3, rs, sf), InstructionSet::Avx2);
    exhaustive_isa::<formats::E4M3, { small::RS }, true>(c(E4M3, rs, sf), InstructionSet::Avx2);
    // e5m2, e3m2, e2m1 with .satfinite: through f16 (F16C), toward zero and stochastic;
    // e4m3 and e2m3 toward zero.
    exhaustive_isa::<formats::E4M3, { small::RZ }, true>(
        c(E4M3, Rounding::RZ, sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E2M3, { small::RZ }, true>(
        c(E2M3, Rounding::RZ, sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E5M2, { small::RZ }, true>(
        c(E5M2, Rounding::RZ, sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E3M2, { small::RZ }, true>(
        c(E3M2, Rounding::RZ, sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E2M1, { small::RZ }, true>(
        c(E2M1, Rounding::RZ, sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E5M2, { small::RS }, true>(c(E5M2, rs, sf), InstructionSet::Avx2);
    exhaustive_isa::<formats::E3M2, { small::RS }, true>(c(E3M2, rs, sf), InstructionSet::Avx2);
    exhaustive_isa::<formats::E2M1, { small::RS }, true>(c(E2M1, rs, sf), InstructionSet::Avx2);
    let (relu, relu_sf) = (Policy { relu: true, ..d }, Policy { relu: true, ..sf });
    exhaustive_isa::<formats::E2M3, { small::RZ }, false>(
        c(E2M3, Rounding::RZ, relu),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E5M2, { small::RZ }, true>(
        c(E5M2, Rounding::RZ, relu_sf),
        InstructionSet::Avx2,
    );
    exhaustive_isa::<formats::E2M1, { small::RZ }, true>(
        c(E2M1, Rounding::RZ, relu_sf),
        InstructionSet::Avx2,
    );
}

/// All 2^32 inputs, f32 → tf32 rn (with `GPUCVT_ISA=avx2`, through the AVX2 kernel).
#[test]
#[ignore]
fn every_input_tf32_rn() {
    exhaustive(TF32, Rounding::RN, Policy::default());
}

/// All 2^32 inputs, f32 → ue8m0 rz satfinite (with `GPUCVT_ISA=avx2`, through the AVX2
/// kernel).
#[test]
#[ignore]
fn every_input_ue8m0_rz_satfinite() {
    exhaustive(UE8M0, Rounding::RZ, satfinite());
}

/// All 2^32 inputs, f32 → bf16 rz.
#[test]
#[ignore]
fn every_input_bf16_rz() {
    exhaustive(BF16, Rounding::RZ, Policy::default());
}

/// All 2^32 inputs, f32 → bf16 rs with 16 random bits in half-words.
#[test]
#[ignore]
fn every_input_bf16_rs_in_half_words() {
    exhaustive_rs_words::<u16>(BF16, 16, Policy::default());
}

/// All 2^32 inputs, f32 → e4m3 rn satfinite.
#[test]
#[ignore]
fn every_input_e4m3_rn_satfinite() {
    exhaustive(E4M3, Rounding::RN, satfinite());
}

/// All 2^32 inputs, f32 → e4m3 rn without .satfinite (overflows give the unsigned NaN;
/// with `GPUCVT_ISA=avx2`, through the AVX2 kernel).
#[test]
#[ignore]
fn every_input_e4m3_rn() {
    exhaustive(E4M3, Rounding::RN, Policy::default());
}

/// All 2^32 inputs, f32 → e2m1 rn satfinite.
#[test]
#[ignore]
fn every_input_e2m1_rn_satfinite() {
    exhaustive(E2M1, Rounding::RN, satfinite());
}

/// All 2^32 inputs, f32 → e2m3 rn satfinite (on AVX-512 VBMI: through f16 and three
/// tables by its high byte, as e4m3, e3m2 and e2m1).
#[test]
#[ignore]
fn every_input_e2m3_rn_satfinite() {
    exhaustive(E2M3, Rounding::RN, satfinite());
}

/// All 2^32 inputs, f32 → e2m3 rn without .satfinite (NaN gives the largest finite code,
/// positive; the tables without .satfinite).
#[test]
#[ignore]
fn every_input_e2m3_rn() {
    exhaustive(E2M3, Rounding::RN, Policy::default());
}

/// All 2^32 inputs, f32 → e2m1 rn without .satfinite.
#[test]
#[ignore]
fn every_input_e2m1_rn() {
    exhaustive(E2M1, Rounding::RN, Policy::default());
}

/// All 2^32 inputs, f32 → e5m2 rn satfinite (on AVX-512 VBMI: through f16 rounded to odd and
/// tables by its bytes, midpoints below 2^-14 through the portable kernel).
#[test]
#[ignore]
fn every_input_e5m2_rn_satfinite() {
    exhaustive(E5M2, Rounding::RN, satfinite());
}

/// All 2^32 inputs, f32 → e5m2 rn, overflows to infinity.
#[test]
#[ignore]
fn every_input_e5m2_rn() {
    exhaustive(E5M2, Rounding::RN, Policy::default());
}

/// All 2^32 inputs, f32 → e3m2 rn satfinite.
#[test]
#[ignore]
fn every_input_e3m2_rn_satfinite() {
    exhaustive(E3M2, Rounding::RN, satfinite());
}

/// All 2^32 inputs, f32 → e4m3 rz satfinite (on AVX-512 VBMI: through f16 and tables by its
/// bytes).
#[test]
#[ignore]
fn every_input_e4m3_rz_satfinite() {
    exhaustive(E4M3, Rounding::RZ, satfinite());
}

/// All 2^32 inputs, f32 → e5m2 rz, infinities kept (on AVX-512 VBMI: through f16 and a
/// table).
#[test]
#[ignore]
fn every_input_e5m2_rz() {
    exhaustive(E5M2, Rounding::RZ, Policy::default());
}

/// All 2^32 inputs, f32 → e2m1 rz satfinite (on AVX-512 VBMI: through f16 and tables by its
/// bytes).
#[test]
#[ignore]
fn every_input_e2m1_rz_satfinite() {
    exhaustive(E2M1, Rounding::RZ, satfinite());
}

/// All 2^32 inputs, f32 → e2m3 rz satfinite (its third significand bit in f16's low byte).
#[test]
#[ignore]
fn every_input_e2m3_rz_satfinite() {
    exhaustive(E2M3, Rounding::RZ, satfinite());
}

/// All 2^32 inputs, f32 → e3m2 rz without .satfinite.
#[test]
#[ignore]
fn every_input_e3m2_rz() {
    exhaustive(E3M2, Rounding::RZ, Policy::default());
}

/// All 2^32 inputs, f32 → `dst` with stochastic rounding of `width` random bits in words
/// `R` (the format's natural word), each input with a random value of its own (a hash of
/// it, all of the word's bits: the kernel must mask them), against the exact core.
fn exhaustive_rs_words<R: Word>(dst: Format, width: u32, policy: Policy) {
    let k = Kernel::new(Conversion::new(
        F32,
        dst,
        Rounding::stochastic(0, width),
        policy,
    ));
    every_f32(|inputs| {
        let random: Vec<R> = inputs
            .iter()
            .map(|x| R::from_u32(x.wrapping_mul(0x9e37_79b9) >> (32 - R::BITS)))
            .collect();
        let mut out = vec![R::default(); inputs.len()];
        k.convert_stochastic_words(inputs, &mut out, &random)
            .unwrap();
        for ((&x, &r), &got) in inputs.iter().zip(&random).zip(&out) {
            let conv = Conversion::new(F32, dst, Rounding::stochastic(r.to_u64(), width), policy);
            assert_eq!(
                got.to_u64(),
                conv.apply(u64::from(x)).bits,
                "{x:#x} r {}",
                r.to_u64()
            );
        }
    });
}

/// All 2^32 inputs, f32 → e5m2 rs satfinite with 8 random bits in bytes (on AVX-512: through
/// f16).
#[test]
#[ignore]
fn every_input_e5m2_rs_satfinite_in_bytes() {
    exhaustive_rs_words::<u8>(E5M2, 8, satfinite());
}

/// All 2^32 inputs, f32 → e4m3 rs satfinite with 8 random bits in bytes (on AVX-512: one
/// addition toward zero, as e2m3, e3m2 and e2m1).
#[test]
#[ignore]
fn every_input_e4m3_rs_satfinite_in_bytes() {
    exhaustive_rs_words::<u8>(E4M3, 8, satfinite());
}

/// All 2^32 inputs, f32 → e2m1 rs satfinite with 8 random bits in bytes.
#[test]
#[ignore]
fn every_input_e2m1_rs_satfinite_in_bytes() {
    exhaustive_rs_words::<u8>(E2M1, 8, satfinite());
}

/// All 2^32 inputs, f32 → e2m3 rs satfinite with 8 random bits in bytes.
#[test]
#[ignore]
fn every_input_e2m3_rs_satfinite_in_bytes() {
    exhaustive_rs_words::<u8>(E2M3, 8, satfinite());
}

/// All 2^32 inputs, f32 → e3m2 rs satfinite with 8 random bits in bytes.
#[test]
#[ignore]
fn every_input_e3m2_rs_satfinite_in_bytes() {
    exhaustive_rs_words::<u8>(E3M2, 8, satfinite());
}

/// All 2^32 inputs, f32 → f16 rs with 13 random bits in half-words (on AVX-512: `vcvtps2ph`
/// and the carry from the 13 bits below).
#[test]
#[ignore]
fn every_input_f16_rs_in_half_words() {
    exhaustive_rs_words::<u16>(F16, 13, Policy::default());
}

/// All 2^32 inputs, f32 → f16 rs satfinite with 13 random bits in half-words.
#[test]
#[ignore]
fn every_input_f16_rs_satfinite_in_half_words() {
    exhaustive_rs_words::<u16>(F16, 13, satfinite());
}

/// All 2^32 inputs, f32 → ue8m0 rp.
#[test]
#[ignore]
fn every_input_ue8m0_rp() {
    exhaustive(UE8M0, Rounding::RP, Policy::default());
}

/// All 2^32 inputs, f32 → ue8m0 rp satfinite (the MX scale).
#[test]
#[ignore]
fn every_input_ue8m0_rp_satfinite() {
    exhaustive(UE8M0, Rounding::RP, satfinite());
}

/// f32 patterns around every rounding boundary of `dst`: each destination value (every one
/// for formats up to 8 bits, a few mantissas per exponent for wider ones), the midpoints
/// between neighbours (the ties), the overflow threshold beyond the largest finite value, and
/// 2 ulps of f32 either side of each, with both signs.
fn dst_boundaries(dst: Format) -> Vec<u32> {
    let Layout::Float(l) = dst.layout else {
        unreachable!()
    };
    let max = dst.max_finite_bits() >> l.pad_bits;
    let to_f32 = |enc: u64| -> f64 {
        let bits = Conversion::new(dst, F32, Rounding::RN, Policy::default())
            .apply(enc << l.pad_bits)
            .bits as u32;
        f32::from_bits(bits) as f64
    };
    let mut encs: Vec<u64> = if dst.width() <= 8 {
        (0..=max).collect()
    } else {
        let top = (1u64 << l.man_bits) - 1;
        (0..1u64 << l.exp_bits)
            .flat_map(|e| {
                [0, 1, 2, top / 2, top / 2 + 1, top - 1, top].map(move |m| e << l.man_bits | m)
            })
            .filter(|&e| e <= max)
            .collect()
    };
    encs.sort_unstable();
    encs.dedup();
    let vals: Vec<f64> = encs.iter().map(|&e| to_f32(e)).collect();
    let mut points = vals.clone();
    for w in vals.windows(2) {
        points.push((w[0] + w[1]) / 2.0);
    }
    let (top, below) = (vals[vals.len() - 1], vals[vals.len() - 2]);
    let ulp = top - below;
    points.extend([top + ulp / 2.0, top + ulp, top + 1.5 * ulp, 2.0 * top]);
    let mut v = Vec::new();
    for p in points {
        let b = (p as f32).to_bits();
        if f32::from_bits(b) as f64 != p {
            // Beyond the f32 range (the overflow thresholds of bf16 and tf32).
            assert!(p > 3.4e38, "{dst}: {p} is not an f32");
            continue;
        }
        for d in [-2i32, -1, 0, 1, 2] {
            let x = b.wrapping_add(d as u32);
            v.extend([x, x | 0x8000_0000]);
        }
    }
    v
}

/// NaNs, infinities, zeros, f32 subnormals and extremes.
fn specials() -> Vec<u32> {
    let mut v = Vec::new();
    for m in [
        0x7f80_0000u32,
        0x7f80_0001,
        0x7fc0_0000,
        0x7fff_ffff,
        0x7fa0_0000,
        0x7f7f_ffff,
        0x7f7f_fffe,
        0x0000_0000,
        0x0000_0001,
        0x0000_0002,
        0x0040_0000,
        0x0040_0001,
        0x003f_ffff,
        0x007f_ffff,
        0x0080_0000,
        0x0080_0001,
    ] {
        v.extend([m, m | 0x8000_0000]);
    }
    v
}

/// The specialised (format, rounding) pairs, as `Plan::new` instantiates them.
fn specialised_pairs() -> Vec<(Format, Vec<Rounding>)> {
    let nearest_and_directed = vec![
        Rounding::RN,
        Rounding::RZ,
        Rounding::RM,
        Rounding::RP,
        Rounding::stochastic(0, 1),
        Rounding::stochastic(0, 13),
    ];
    let mut v = vec![
        (F16, nearest_and_directed.clone()),
        (BF16, {
            let mut r = nearest_and_directed;
            r.push(Rounding::stochastic(0, 16));
            r
        }),
        (TF32, vec![Rounding::RNA, Rounding::RN, Rounding::RZ]),
    ];
    for (f, man) in [(E4M3, 3), (E5M2, 2), (E2M3, 3), (E3M2, 2), (E2M1, 1)] {
        v.push((
            f,
            vec![
                Rounding::RN,
                Rounding::RZ,
                Rounding::stochastic(0, 8),
                Rounding::stochastic(0, 1),
                Rounding::stochastic(0, 23 - man),
            ],
        ));
    }
    v
}

/// Every combination of the policies the specialised kernels take.
fn specialised_policies() -> Vec<Policy> {
    let mut v = Vec::new();
    for bits in 0..8 {
        v.push(Policy {
            satfinite: bits & 1 != 0,
            relu: bits & 2 != 0,
            flush_inputs: bits & 4 != 0,
            ..Policy::default()
        });
    }
    v
}

/// Runs `k` over `inputs` into words of type `D` and checks against `want`.
fn check_words<D: Word>(k: &Kernel, inputs: &[u32], random: &[u32], want: &[u32], what: &str) {
    let mut out = vec![D::default(); inputs.len()];
    k.convert_stochastic(inputs, &mut out, random).unwrap();
    for (i, (&x, got)) in inputs.iter().zip(&out).enumerate() {
        assert_eq!(
            got.to_u64(),
            want[i] as u64,
            "f32 {x:#010x} (random {:#x}) → {what} ({}-bit words)",
            random[i],
            D::BITS
        );
    }
}

/// Runs `k` over `inputs` with the random values truncated to words of type `N`, into words of
/// type `N`, and checks against `want`.
fn check_narrow<N: Word>(k: &Kernel, inputs: &[u32], random: &[u32], want: &[u32], what: &str) {
    let r: Vec<N> = random.iter().map(|&r| N::from_u32(r)).collect();
    let mut out = vec![N::default(); inputs.len()];
    k.convert_stochastic_words(inputs, &mut out, &r).unwrap();
    for (i, (&x, got)) in inputs.iter().zip(&out).enumerate() {
        assert_eq!(
            got.to_u64(),
            want[i] as u64,
            "f32 {x:#010x} (random {:#x}) → {what} ({}-bit words and random)",
            r[i].to_u64(),
            N::BITS
        );
    }
}

#[test]
fn specialised_kernels_equal_the_core() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let common: Vec<u32> = boundary_f32()
        .into_iter()
        .chain(specials())
        .chain((0..20_000).map(|_| rng.next_u32()))
        .collect();
    for (dst, roundings) in specialised_pairs() {
        let mut inputs = common.clone();
        inputs.extend(dst_boundaries(dst));
        let random: Vec<u32> = inputs.iter().map(|_| rng.next_u32()).collect();
        for rounding in roundings {
            for policy in specialised_policies() {
                let conv = Conversion::new(F32, dst, rounding, policy);
                let what = format!("{dst} {rounding:?} {policy:?}");
                let k = Kernel::new(conv);
                // (On x86-64 without AVX2, or under `GPUCVT_ISA=baseline`, the
                // run-time-parameterised kernel runs instead: it must agree all the same.)
                assert!(
                    k.specialised() || !isa::has_fast(),
                    "not specialised: {what}"
                );
                let want: Vec<u32> = inputs
                    .iter()
                    .zip(&random)
                    .map(|(&x, &r)| {
                        let mut c = conv;
                        if let Direction::Stochastic { width, .. } = rounding.direction {
                            c.rounding = Rounding::stochastic(r as u64, width);
                        }
                        c.apply(x as u64).bits as u32
                    })
                    .collect();
                // The natural word, and a wider one (through the kernel's buffer).
                match dst.width() {
                    w if w <= 8 => check_words::<u8>(&k, &inputs, &random, &want, &what),
                    w if w <= 16 => check_words::<u16>(&k, &inputs, &random, &want, &what),
                    _ => {}
                }
                check_words::<u32>(&k, &inputs, &random, &want, &what);
                // Random values in the output word (the kernels that read them directly),
                // with bits above the width set.
                if let Direction::Stochastic { width, .. } = rounding.direction {
                    match dst.width() {
                        w if w <= 8 && width <= 8 => {
                            check_narrow::<u8>(&k, &inputs, &random, &want, &what)
                        }
                        w if w <= 16 && width <= 16 => {
                            check_narrow::<u16>(&k, &inputs, &random, &want, &what)
                        }
                        _ => {}
                    }
                }
                // Short slices (vector tails), and one random value for every element.
                let n = 3000;
                if let Direction::Stochastic { width, .. } = rounding.direction {
                    let fixed = random[7];
                    let k = Kernel::new(Conversion {
                        rounding: Rounding::stochastic(fixed as u64, width),
                        ..conv
                    });
                    let mut out = vec![0u64; n];
                    k.convert(&inputs[..n], &mut out).unwrap();
                    for (&x, &got) in inputs.iter().zip(&out) {
                        assert_eq!(got, k.conversion().apply(x as u64).bits, "{x:#x} {what}");
                    }
                }
                for len in [0, 1, 5, 17, 63, 1025] {
                    let mut out = vec![0u32; len];
                    let at = 1000;
                    k.convert_stochastic(&inputs[at..at + len], &mut out, &random[at..at + len])
                        .unwrap();
                    assert_eq!(out, want[at..at + len], "{what}, {len} elements");
                }
            }
        }
    }
}

#[test]
fn uncovered_conversions_use_the_run_time_kernel() {
    for (dst, rounding, policy) in [
        (F16, Rounding::RNA, Policy::default()),
        (F16, Rounding::stochastic(0, 14), Policy::default()),
        (
            E4M3,
            Rounding::RN,
            Policy {
                sat: true,
                ..Policy::default()
            },
        ),
        (
            E4M3,
            Rounding::RN,
            Policy {
                positive_zero: true,
                ..Policy::default()
            },
        ),
        (
            BF16,
            Rounding::RN,
            Policy {
                overflow: Overflow::Saturate,
                ..Policy::default()
            },
        ),
        (UE4M3, Rounding::RN, Policy::default()),
    ] {
        let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
        assert_eq!(k.strategy(), Strategy::F32Small);
        assert!(!k.specialised(), "{dst} {rounding:?} {policy:?}");
    }
}

/// The specialised kernels' format types describe their formats as the run-time kernel does.
#[test]
fn specs_match_the_run_time_parameters() {
    for (f, s, id) in [
        (F16, formats::F16::SPEC, formats::F16::ID),
        (BF16, formats::BF16::SPEC, formats::BF16::ID),
        (TF32, formats::TF32::SPEC, formats::TF32::ID),
        (E4M3, formats::E4M3::SPEC, formats::E4M3::ID),
        (E5M2, formats::E5M2::SPEC, formats::E5M2::ID),
        (E2M3, formats::E2M3::SPEC, formats::E2M3::ID),
        (E3M2, formats::E3M2::SPEC, formats::E3M2::ID),
        (E2M1, formats::E2M1::SPEC, formats::E2M1::ID),
    ] {
        let p = small::Params::new(&f, Rounding::RN, &Policy::default()).unwrap();
        assert_eq!(s, p.spec, "{f}");
        assert_eq!(s, fast::Spec::of(&f), "{f}");
        // The plan finds each format's own kernels from its description, and no other's.
        assert_eq!(Id::of(&p.spec), Some(id), "{f}");
    }
    // The formats the run-time kernel serves without specialised instances.
    for f in [UE4M3, UE5M3] {
        let p = small::Params::new(&f, Rounding::RN, &Policy::default()).unwrap();
        assert_eq!(Id::of(&p.spec), None, "{f}");
    }
}

/// A few instances compiled for every instruction set the CPU has (the dispatch runs only the
/// best one), against the exact core; the `RS` ones with a run-time random width (`W` = 0)
/// and with the PTX width as a constant.
#[test]
fn specialised_kernels_agree_on_every_instruction_set() {
    use fast::*;
    let mut rng = Rng(99);
    let mut inputs: Vec<u32> = boundary_f32().into_iter().chain(specials()).collect();
    // Every destination's values, the midpoints between them and the overflow thresholds,
    // and their neighbours, with both signs.
    for f in [F16, BF16, E4M3, E5M2, E2M3, E3M2, E2M1] {
        inputs.extend(dst_boundaries(f));
    }
    inputs.extend((0..20_000).map(|_| rng.next_u32()));
    let random: Vec<u32> = inputs.iter().map(|_| rng.next_u32()).collect();
    /// Runs one instance with random words `R` (the low bits of `random`).
    fn run_all<
        F: Fmt,
        const M: u8,
        const SF: bool,
        const KN: bool,
        const W: u32,
        D: Word,
        R: Word,
    >(
        conv: Conversion,
        inputs: &[u32],
        random: &[u32],
    ) {
        let w = match conv.rounding.direction {
            Direction::Stochastic { width, .. } => width,
            _ => 1,
        };
        assert!(W == 0 || W == w, "constant width {W}, conversion width {w}");
        let p = conv.policy;
        let k = Knobs {
            w,
            ftz_below: if p.flush_inputs { 0x0080_0000 } else { 0 },
            relu: if p.relu { !0 } else { 0 },
        };
        let random: Vec<R> = random.iter().map(|&r| R::from_u32(r)).collect();
        for isa in InstructionSet::ALL {
            let mut out = vec![D::default(); inputs.len()];
            if !isa::fast_isa::<F, M, SF, KN, W, D, R>(isa, inputs, &mut out, &random, k) {
                continue;
            }
            for (i, (&x, got)) in inputs.iter().zip(&out).enumerate() {
                let mut c = conv;
                if let Direction::Stochastic { width, .. } = c.rounding.direction {
                    c.rounding = Rounding::stochastic(random[i].to_u64(), width);
                }
                assert_eq!(
                    got.to_u64(),
                    c.apply(x as u64).bits,
                    "{x:#x} {c:?} isa {isa} W {W} {}-bit random",
                    R::BITS
                );
            }
        }
    }
    let d = Policy::default();
    let sf = Policy {
        satfinite: true,
        ..d
    };
    let relu_ftz = Policy {
        relu: true,
        flush_inputs: true,
        ..d
    };
    // `.relu` with `.satfinite`, and `.ftz` alone: the kernels without the knobs behind a
    // pass that applies them.
    let relu_sf = Policy { relu: true, ..sf };
    let (relu, ftz) = (
        Policy { relu: true, ..d },
        Policy {
            flush_inputs: true,
            ..d
        },
    );
    let c = |f, r, p| Conversion::new(F32, f, r, p);
    let (i, r) = (&inputs[..], &random[..]);
    run_all::<formats::F16, { small::RN }, false, false, 0, u16, u32>(
        c(F16, Rounding::RN, d),
        i,
        r,
    );
    let f16_rs = c(F16, Rounding::stochastic(0, 13), relu_ftz);
    run_all::<formats::F16, { small::RS }, false, true, 0, u16, u32>(f16_rs, i, r);
    run_all::<formats::F16, { small::RS }, false, true, 13, u16, u32>(f16_rs, i, r);
    run_all::<formats::F16, { small::RS }, false, true, 13, u16, u16>(f16_rs, i, r);
    let f16_rs = c(F16, Rounding::stochastic(0, 13), d);
    run_all::<formats::F16, { small::RS }, false, false, 13, u16, u16>(f16_rs, i, r);
    run_all::<formats::F16, { small::RS }, false, false, 13, u16, u32>(f16_rs, i, r);
    run_all::<formats::F16, { small::RS }, false, false, 13, u16, u8>(f16_rs, i, r);
    let f16_rs_sf = c(F16, Rounding::stochastic(0, 13), sf);
    run_all::<formats::F16, { small::RS }, true, false, 13, u16, u16>(f16_rs_sf, i, r);
    run_all::<formats::F16, { small::RS }, true, false, 13, u16, u32>(f16_rs_sf, i, r);
    // f16 stochastic with `.relu` (its kernels apply it), with and without `.satfinite`.
    let f16_rs_relu = c(F16, Rounding::stochastic(0, 13), relu);
    run_all::<formats::F16, { small::RS }, false, true, 13, u16, u16>(f16_rs_relu, i, r);
    run_all::<formats::F16, { small::RS }, false, true, 13, u16, u8>(f16_rs_relu, i, r);
    let f16_rs_relu_sf = c(F16, Rounding::stochastic(0, 13), relu_sf);
    run_all::<formats::F16, { small::RS }, true, true, 13, u16, u32>(f16_rs_relu_sf, i, r);
    let e5m2_rs_sf = c(E5M2, Rounding::stochastic(0, 8), sf);
    run_all::<formats::E5M2, { small::RS }, true, false, 8, u8, u8>(e5m2_rs_sf, i, r);
    run_all::<formats::E5M2, { small::RS }, true, false, 8, u8, u16>(e5m2_rs_sf, i, r);
    run_all::<formats::E5M2, { small::RS }, true, false, 8, u8, u32>(e5m2_rs_sf, i, r);
    let bf16_rs = c(BF16, Rounding::stochastic(0, 16), sf);
    run_all::<formats::BF16, { small::RS }, true, false, 16, u16, u16>(bf16_rs, i, r);
    run_all::<formats::BF16, { small::RS }, true, false, 16, u16, u32>(bf16_rs, i, r);
    run_all::<formats::BF16, { small::RP }, false, false, 0, u16, u32>(
        c(BF16, Rounding::RP, d),
        i,
        r,
    );
    // tf32 in its three directions (AVX2's integer rounding at bit 13).
    run_all::<formats::TF32, { small::RNA }, false, false, 0, u32, u32>(
        c(TF32, Rounding::RNA, d),
        i,
        r,
    );
    run_all::<formats::TF32, { small::RN }, false, false, 0, u32, u32>(
        c(TF32, Rounding::RN, d),
        i,
        r,
    );
    run_all::<formats::TF32, { small::RZ }, false, false, 0, u32, u32>(
        c(TF32, Rounding::RZ, d),
        i,
        r,
    );
    run_all::<formats::E4M3, { small::RN }, true, false, 0, u8, u32>(
        c(E4M3, Rounding::RN, sf),
        i,
        r,
    );
    // The run-time policies, switched off.
    run_all::<formats::E4M3, { small::RN }, true, true, 0, u8, u32>(
        c(E4M3, Rounding::RN, sf),
        i,
        r,
    );
    run_all::<formats::E4M3, { small::RZ }, false, true, 0, u8, u32>(
        c(E4M3, Rounding::RZ, relu_ftz),
        i,
        r,
    );
    let e5m2_rs = c(E5M2, Rounding::stochastic(0, 8), d);
    run_all::<formats::E5M2, { small::RS }, false, false, 0, u8, u32>(e5m2_rs, i, r);
    run_all::<formats::E5M2, { small::RS }, false, false, 8, u8, u8>(e5m2_rs, i, r);
    // Random values in the output word.
    let e4m3_rs = c(E4M3, Rounding::stochastic(0, 8), sf);
    run_all::<formats::E4M3, { small::RS }, true, false, 0, u8, u8>(e4m3_rs, i, r);
    run_all::<formats::E4M3, { small::RS }, true, false, 8, u8, u8>(e4m3_rs, i, r);
    run_all::<formats::E4M3, { small::RS }, true, true, 8, u8, u32>(e4m3_rs, i, r);
    let e2m1_rs = c(E2M1, Rounding::stochastic(0, 8), sf);
    run_all::<formats::E2M1, { small::RS }, true, false, 0, u8, u32>(e2m1_rs, i, r);
    run_all::<formats::E2M1, { small::RS }, true, false, 8, u8, u8>(e2m1_rs, i, r);
    let e2m3_rs = c(E2M3, Rounding::stochastic(0, 8), sf);
    run_all::<formats::E2M3, { small::RS }, true, false, 8, u8, u8>(e2m3_rs, i, r);
    run_all::<formats::E4M3, { small::RS }, true, false, 8, u8, u16>(e4m3_rs, i, r);
    run_all::<formats::E4M3, { small::RS }, true, false, 8, u8, u32>(e4m3_rs, i, r);
    let e2m1_rs_plain = c(E2M1, Rounding::stochastic(0, 8), d);
    run_all::<formats::E2M1, { small::RS }, false, false, 8, u8, u32>(e2m1_rs_plain, i, r);
    let e3m2_rs_sf = c(E3M2, Rounding::stochastic(0, 8), sf);
    run_all::<formats::E3M2, { small::RS }, true, false, 8, u8, u8>(e3m2_rs_sf, i, r);
    // e3m2 and e2m1 through f16 scaled (AVX-512 VBMI), random values in every word.
    run_all::<formats::E3M2, { small::RS }, true, false, 8, u8, u16>(e3m2_rs_sf, i, r);
    run_all::<formats::E3M2, { small::RS }, true, false, 8, u8, u32>(e3m2_rs_sf, i, r);
    run_all::<formats::E2M1, { small::RS }, true, false, 8, u8, u16>(e2m1_rs, i, r);
    run_all::<formats::E2M1, { small::RS }, true, false, 8, u8, u32>(e2m1_rs, i, r);
    let e3m2_rs = c(E3M2, Rounding::stochastic(0, 8), relu_ftz);
    run_all::<formats::E3M2, { small::RS }, false, true, 8, u8, u8>(e3m2_rs, i, r);
    run_all::<formats::BF16, { small::RN }, false, false, 0, u16, u32>(
        c(BF16, Rounding::RN, d),
        i,
        r,
    );
    run_all::<formats::BF16, { small::RZ }, false, false, 0, u16, u32>(
        c(BF16, Rounding::RZ, d),
        i,
        r,
    );
    let bf16_rs_plain = c(BF16, Rounding::stochastic(0, 16), d);
    run_all::<formats::BF16, { small::RS }, false, false, 16, u16, u8>(bf16_rs_plain, i, r);
    run_all::<formats::BF16, { small::RS }, false, false, 16, u16, u16>(bf16_rs_plain, i, r);
    run_all::<formats::BF16, { small::RS }, false, false, 16, u16, u32>(bf16_rs_plain, i, r);
    // f16 in the four IEEE directions (`vcvtps2ph` on AVX2 and on AVX-512).
    run_all::<formats::F16, { small::RZ }, false, false, 0, u16, u32>(
        c(F16, Rounding::RZ, d),
        i,
        r,
    );
    run_all::<formats::F16, { small::RM }, false, false, 0, u16, u32>(
        c(F16, Rounding::RM, d),
        i,
        r,
    );
    run_all::<formats::F16, { small::RP }, false, false, 0, u16, u32>(
        c(F16, Rounding::RP, d),
        i,
        r,
    );
    // f16 and bf16 with `.relu`, `.ftz` or both.
    run_all::<formats::F16, { small::RN }, false, true, 0, u16, u32>(
        c(F16, Rounding::RN, relu),
        i,
        r,
    );
    run_all::<formats::F16, { small::RN }, false, true, 0, u16, u32>(
        c(F16, Rounding::RN, ftz),
        i,
        r,
    );
    let f16_rz = c(F16, Rounding::RZ, relu_ftz);
    run_all::<formats::F16, { small::RZ }, false, true, 0, u16, u32>(f16_rz, i, r);
    let f16_sf = c(F16, Rounding::RN, relu_sf);
    run_all::<formats::F16, { small::RN }, true, true, 0, u16, u32>(f16_sf, i, r);
    // `.relu` without `.satfinite`: e4m3's negative overflows are NaN without `.relu`
    // (applied to the inputs first), e5m2's are −∞ (the results after).
    run_all::<formats::E4M3, { small::RN }, false, true, 0, u8, u32>(
        c(E4M3, Rounding::RN, relu),
        i,
        r,
    );
    run_all::<formats::E5M2, { small::RN }, false, true, 0, u8, u32>(
        c(E5M2, Rounding::RN, relu),
        i,
        r,
    );
    // (Where `.ftz` shows: f16 up, and bf16, whose subnormals are f32's.)
    run_all::<formats::F16, { small::RP }, false, true, 0, u16, u32>(
        c(F16, Rounding::RP, ftz),
        i,
        r,
    );
    run_all::<formats::BF16, { small::RN }, false, true, 0, u16, u32>(
        c(BF16, Rounding::RN, ftz),
        i,
        r,
    );
    let bf16_rn = c(BF16, Rounding::RN, relu);
    run_all::<formats::BF16, { small::RN }, false, true, 0, u16, u32>(bf16_rn, i, r);
    let bf16_rs = c(BF16, Rounding::stochastic(0, 16), relu);
    run_all::<formats::BF16, { small::RS }, false, true, 16, u16, u32>(bf16_rs, i, r);
    // Every FP8/FP6/FP4 format to nearest and toward zero, with and without .satfinite, and
    // stochastic with .satfinite in the three random words (AVX2's one-addition kernel).
    macro_rules! narrow {
        ($i:ty, $f:ident) => {
            run_all::<$i, { small::RN }, true, false, 0, u8, u32>(c($f, Rounding::RN, sf), i, r);
            run_all::<$i, { small::RN }, false, false, 0, u8, u32>(c($f, Rounding::RN, d), i, r);
            run_all::<$i, { small::RZ }, true, false, 0, u8, u32>(c($f, Rounding::RZ, sf), i, r);
            run_all::<$i, { small::RZ }, false, false, 0, u8, u32>(c($f, Rounding::RZ, d), i, r);
            let rs = c($f, Rounding::stochastic(0, 8), sf);
            run_all::<$i, { small::RS }, true, false, 8, u8, u8>(rs, i, r);
            run_all::<$i, { small::RS }, true, false, 8, u8, u16>(rs, i, r);
            run_all::<$i, { small::RS }, true, false, 8, u8, u32>(rs, i, r);
            let rn = c($f, Rounding::RN, relu_sf);
            run_all::<$i, { small::RN }, true, true, 0, u8, u32>(rn, i, r);
            let rz = c($f, Rounding::RZ, relu_sf);
            run_all::<$i, { small::RZ }, true, true, 0, u8, u32>(rz, i, r);
            let rs = c($f, Rounding::stochastic(0, 8), relu_sf);
            run_all::<$i, { small::RS }, true, true, 8, u8, u8>(rs, i, r);
            run_all::<$i, { small::RS }, true, true, 8, u8, u32>(rs, i, r);
            run_all::<$i, { small::RS }, true, true, 8, u8, u16>(rs, i, r);
            // `.relu` alone (applied by the kernel where the format's NaN result is positive
            // and no negative overflow gives NaN: e5m2's −∞, the formats without NaN).
            run_all::<$i, { small::RZ }, false, true, 0, u8, u32>(c($f, Rounding::RZ, relu), i, r);
            let rs = c($f, Rounding::stochastic(0, 8), relu);
            run_all::<$i, { small::RS }, false, true, 8, u8, u8>(rs, i, r);
        };
    }
    narrow!(formats::E4M3, E4M3);
    narrow!(formats::E5M2, E5M2);
    narrow!(formats::E2M3, E2M3);
    narrow!(formats::E3M2, E3M2);
    narrow!(formats::E2M1, E2M1);
}

#[test]
fn narrow_random_words_give_the_same_results() {
    let mut rng = Rng(5);
    let inputs: Vec<u32> = (0..5000).map(|_| rng.next_u32()).collect();
    for (dst, width, policy) in [
        (E4M3, 8, satfinite()),
        (F16, 13, Policy::default()),
        (BF16, 16, satfinite()),
        (E2M1, 8, satfinite()),
        (
            E5M2,
            8,
            Policy {
                relu: true,
                ..Policy::default()
            },
        ),
        (UE4M3, 8, satfinite()),
    ] {
        let k = Kernel::new(Conversion::new(
            F32,
            dst,
            Rounding::stochastic(0, width),
            policy,
        ));
        let random: Vec<u32> = inputs
            .iter()
            .map(|_| rng.next_u32() & ((1 << width) - 1))
            .collect();
        let mut want = vec![0u32; inputs.len()];
        k.convert_stochastic(&inputs, &mut want, &random).unwrap();
        let mut got = vec![0u32; inputs.len()];
        let r16: Vec<u16> = random.iter().map(|&r| r as u16).collect();
        k.convert_stochastic_words(&inputs, &mut got, &r16).unwrap();
        assert_eq!(got, want, "{dst} u16");
        if width <= 8 {
            let r8: Vec<u8> = random.iter().map(|&r| r as u8).collect();
            let mut got = vec![0u8; inputs.len()];
            k.convert_stochastic_words(&inputs, &mut got, &r8).unwrap();
            assert!(
                got.iter().zip(&want).all(|(&g, &w)| g as u32 == w),
                "{dst} u8"
            );
        } else {
            let mut got = vec![0u16; inputs.len()];
            k.convert_stochastic_words(&inputs, &mut got, &r16).unwrap();
            assert!(
                got.iter().zip(&want).all(|(&g, &w)| g as u32 == w),
                "{dst} u16 words"
            );
            let mut got = vec![0u32; inputs.len()];
            let r8 = vec![0u8; inputs.len()];
            assert!(matches!(
                k.convert_stochastic_words(&inputs, &mut got, &r8),
                Err(BulkError::Narrow { .. })
            ));
        }
    }
}

#[test]
fn two_streams_cover_every_index_once_in_tiles_of_each_half_in_turn() {
    use crate::streams::two_streams_of;
    for (min, tile) in [(8, 4), (1, 1), (100, 3), (16, 16)] {
        for n in 0..200 {
            let ranges: Vec<_> = two_streams_of(n, min, tile).collect();
            let mut seen = vec![0u32; n];
            for r in &ranges {
                for i in r.clone() {
                    seen[i] += 1;
                }
            }
            assert!(
                seen.iter().all(|&c| c == 1),
                "n {n} min {min} tile {tile}: {ranges:?}"
            );
            if n < min {
                assert_eq!(ranges, vec![0..n]);
                continue;
            }
            // Tiles of the first half and of the second in turn, then the rest.
            let half = n / 2 / tile * tile;
            for (k, pair) in ranges[..ranges.len() - 1].chunks(2).enumerate() {
                assert_eq!(
                    pair,
                    [
                        k * tile..(k + 1) * tile,
                        half + k * tile..half + (k + 1) * tile
                    ]
                );
            }
            assert_eq!(ranges[ranges.len() - 1], 2 * half..n);
        }
    }
    // The threshold the unit tests run with: the exhaustive 2^16-element slices interleave,
    // unless their results are as wide as their inputs.
    assert!(streams_for::<u32, u8>(1 << 16).count() > 2);
    assert!(streams_for::<u32, u16>(1 << 16).count() > 2);
    assert!(streams_for::<u64, u32>(1 << 16).count() > 2);
    let whole = |r: Vec<std::ops::Range<usize>>, n| r.len() == 1 && r[0] == (0..n);
    assert!(whole(streams_for::<u32, u32>(1 << 16).collect(), 1 << 16));
    assert!(whole(streams_for::<u32, u64>(1 << 24).collect(), 1 << 24));
}

#[test]
fn every_narrow_format_has_toward_zero_tables() {
    // The AVX-512 VBMI byte-table kernel (`isa/avx512.rs`) falls back to the portable kernel for a
    // format whose tables do not fit its scheme: toward zero every one of them must fit,
    // with and without .satfinite; the entry of f16 1.0 (high byte 0x3c) must be the
    // format's 1, with the sign marked, and so must +0's. The third significand bit of e4m3
    // and e2m3 is the low byte's top bit: their rows go up above 0x7f where they are normal.
    use crate::portable::fast::*;
    use small::RZ;
    fn check<F: Fmt, const SF: bool>(one: u8, limit: u8) {
        let t = byte_tables::<F, RZ, SF>().unwrap_or_else(|| panic!("format {:?} sf {SF}", F::ID));
        let sign = 1u8 << F::SPEC.sign_pos;
        assert_eq!(t.base[0x3c] & !sign, one, "format {:?} sf {SF}", F::ID);
        assert_eq!((t.limit[0x3c], t.second[0x3c]), (limit, 0xff));
        assert!(t.second.iter().all(|&l| l == 0xff));
        // Finite results take the sign; 0 is +0 and -0.
        assert_ne!(t.base[0x3c] & sign, 0);
        assert_ne!(t.base[0] & sign, 0);
    }
    check::<formats::E4M3, true>(0x38, 0x7f);
    check::<formats::E4M3, false>(0x38, 0x7f);
    check::<formats::E5M2, true>(0x3c, 0xff);
    check::<formats::E5M2, false>(0x3c, 0xff);
    check::<formats::E2M3, true>(0x08, 0x7f);
    check::<formats::E2M3, false>(0x08, 0x7f);
    check::<formats::E3M2, true>(0x0c, 0xff);
    check::<formats::E3M2, false>(0x0c, 0xff);
    check::<formats::E2M1, true>(0x02, 0xff);
    check::<formats::E2M1, false>(0x02, 0xff);
}

#[test]
fn round_to_nearest_tables_fit_where_the_scheme_applies() {
    // The AVX-512 VBMI byte-table kernel (`isa/avx512.rs`) falls back to the portable kernel where
    // `byte_tables` gives `None`. It must give tables for e4m3 and e5m2 with .satfinite (the
    // PTX forms), e5m2 without, and for the formats without infinity or NaN either way; e4m3
    // without .satfinite gives a NaN for overflows (unsigned where the other results of its
    // row take the sign), which does not fit. e5m2 alone has midpoints below f16's normal
    // range, where the sticky bit may be missing.
    use super::small::RN;
    use crate::portable::fast::*;
    assert!(byte_tables::<formats::E4M3, RN, false>().is_none());
    for (t, below) in [
        (byte_tables::<formats::E4M3, RN, true>(), false),
        (byte_tables::<formats::E5M2, RN, true>(), true),
        (byte_tables::<formats::E5M2, RN, false>(), true),
        (byte_tables::<formats::E2M3, RN, true>(), false),
        (byte_tables::<formats::E2M3, RN, false>(), false),
        (byte_tables::<formats::E3M2, RN, true>(), false),
        (byte_tables::<formats::E3M2, RN, false>(), false),
        (byte_tables::<formats::E2M1, RN, true>(), false),
        (byte_tables::<formats::E2M1, RN, false>(), false),
    ] {
        assert_eq!(t.map(|t| t.subnormal_midpoints), Some(below));
    }
    // The kernel looks up as many limits as `byte_steps` says, a constant: every table of
    // rn and rz uses them all (none is looked up for nothing).
    macro_rules! steps {
        ($($i:ty)*) => {$(
            for (t, rn) in [
                (byte_tables::<$i, RN, true>(), true),
                (byte_tables::<$i, { small::RZ }, true>(), false),
            ] {
                assert_eq!(t.map(|t| t.steps), Some(byte_steps(&<$i>::SPEC, rn)));
            }
        )*};
    }
    steps!(formats::E4M3 formats::E5M2 formats::E2M3 formats::E3M2 formats::E2M1);
    // e4m3 around 1.0 (f16 0x3c00..0x3cff: row 0x3c, 1.0 = 0x38 with the sign marked):
    // e4m3's step there is 0x80 low bits; the midpoint 0x40 stays at the even 0x38, above it
    // 0x39, and the next midpoint 0xc0 goes up to the even 0x3a, so the limits are 0x40 and
    // 0xbf.
    let ByteTables {
        base,
        limit,
        second,
        ..
    } = byte_tables::<formats::E4M3, RN, true>().unwrap();
    assert_eq!(
        (base[0x3c], limit[0x3c], second[0x3c]),
        (0x80 | 0x38, 0x40, 0xbf)
    );
    // The largest finite value (448, f16 0x5f00) never goes up with .satfinite; the upper
    // half of each table repeats the lower (the sign bit of the index is not looked at).
    assert_eq!(
        (base[0x5f], limit[0x5f], second[0x5f]),
        (0x80 | 0x7e, 0xff, 0xff)
    );
    assert_eq!(
        (base[0xdf], limit[0xbc], second[0xbc]),
        (0x80 | 0x7e, 0x40, 0xbf)
    );
    // e2m1 (sign bit 0x8): 1.0 to 1.25 (row 0x3c) all give 1.0 (code 2); from 1.25 (row
    // 0x3d), the midpoint to 1.5, only the midpoint itself stays at the even 2.
    let t = byte_tables::<formats::E2M1, RN, true>().unwrap();
    assert_eq!(
        (t.base[0x3c], t.limit[0x3c], t.second[0x3c]),
        (0x8 | 0x2, 0xff, 0xff)
    );
    assert_eq!(
        (t.base[0x3d], t.limit[0x3d], t.second[0x3d]),
        (0x8 | 0x2, 0x00, 0xff)
    );
}

#[test]
fn e5m2_rn_below_f16_normals() {
    // Below 2^-14 f16 is subnormal, and the round to odd into f16 of the byte-table kernel
    // (AVX-512 VBMI) may be off in its last bit; for e5m2 it must send the groups with a
    // midpoint there to the portable kernel.
    // Every f16 subnormal value, and f32s around it at every distance from one f32 ulp to one
    // f16 ulp, with both signs, against the exact core.
    let widen = Conversion::new(F16, F32, Rounding::RN, Policy::default());
    let mut inputs = Vec::new();
    for h in 1..0x0400u64 {
        let x = widen.apply(h).bits as u32;
        for k in 0..16 {
            for d in [(1u32 << k) - 1, 1 << k, (1 << k) + 1] {
                for sign in [0, 0x8000_0000] {
                    inputs.push((x + d) | sign);
                    inputs.push((x - d.min(x - 1)) | sign);
                }
            }
        }
    }
    for policy in [Policy::default(), satfinite()] {
        let conv = Conversion::new(F32, E5M2, Rounding::RN, policy);
        let k = Kernel::new(conv);
        let mut out = vec![0u8; inputs.len()];
        k.convert(&inputs, &mut out).unwrap();
        for (&x, &got) in inputs.iter().zip(&out) {
            assert_eq!(
                u64::from(got),
                conv.apply(u64::from(x)).bits,
                "{x:#x} {policy:?}"
            );
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn f16_byte_kernels_take_the_formats_whose_code_is_f16s_top_bits() {
    // The rz and rs kernels through f16's bytes (`isa/avx512.rs`, `isa/avx2.rs`) apply to the formats with one or
    // two significand bits: e5m2 and e3m2 are f16's top byte (no shift), e2m1 its bits 14..9.
    // Toward zero (AVX2) also to those with three: e4m3 and e2m3 are its bits 14..7.
    use crate::isa::{f16_bytes_shift, f16_bytes_truncate};
    use crate::portable::fast::*;
    assert_eq!(f16_bytes_shift(&formats::E5M2::SPEC), Some(0));
    assert_eq!(f16_bytes_shift(&formats::E3M2::SPEC), Some(0));
    assert_eq!(f16_bytes_shift(&formats::E2M1::SPEC), Some(1));
    for sp in [
        formats::F16::SPEC,
        formats::BF16::SPEC,
        formats::TF32::SPEC,
        formats::E4M3::SPEC,
        formats::E2M3::SPEC,
    ] {
        assert_eq!(f16_bytes_shift(&sp), None, "{sp:?}");
    }
    for sp in [
        formats::E4M3::SPEC,
        formats::E5M2::SPEC,
        formats::E2M3::SPEC,
        formats::E3M2::SPEC,
        formats::E2M1::SPEC,
    ] {
        assert!(f16_bytes_truncate(&sp), "{sp:?}");
    }
    for sp in [formats::F16::SPEC, formats::BF16::SPEC, formats::TF32::SPEC] {
        assert!(!f16_bytes_truncate(&sp), "{sp:?}");
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn stochastic_kernel_gives_nan_results_by_the_clamp() {
    // The AVX-512 stochastic kernel of e4m3, e2m3, e3m2 and e2m1 (`isa/avx512.rs`) gives NaN inputs
    // their result through the clamp: e4m3's NaN is the code above its largest finite one,
    // the others' is their largest finite code; e5m2 and f16, with infinities, do not fit.
    use crate::isa::nan_by_clamp;
    use crate::portable::fast::*;
    assert_eq!(nan_by_clamp(&formats::E4M3::SPEC), Some(true));
    for sp in [
        formats::E2M3::SPEC,
        formats::E3M2::SPEC,
        formats::E2M1::SPEC,
    ] {
        assert_eq!(nan_by_clamp(&sp), Some(false), "{sp:?}");
    }
    assert_eq!(nan_by_clamp(&formats::E5M2::SPEC), None);
    assert_eq!(nan_by_clamp(&formats::F16::SPEC), None);
}

#[test]
fn instruction_sets_are_named_as_gpucvt_isa_takes_them() {
    for isa in [
        InstructionSet::Baseline,
        InstructionSet::Avx2,
        InstructionSet::Avx512,
    ] {
        assert_eq!(isa.name().parse::<InstructionSet>(), Ok(isa));
        assert_eq!(isa.name().to_uppercase().parse::<InstructionSet>(), Ok(isa));
    }
    assert_eq!(
        " avx-512\n".parse::<InstructionSet>(),
        Ok(InstructionSet::Avx512)
    );
    let e = "sse4".parse::<InstructionSet>().unwrap_err();
    assert_eq!(e, IsaError("sse4".into()));
    assert_eq!(
        e.to_string(),
        "GPUCVT_ISA=\"sse4\" names no instruction set: use baseline, avx2 or avx512"
    );
    // The ceiling only lowers: the dispatch never claims more than the CPU has.
    #[cfg(target_arch = "x86_64")]
    match instruction_set() {
        InstructionSet::Avx512 => assert!(is_x86_feature_detected!("avx512bw")),
        InstructionSet::Avx2 => assert!(is_x86_feature_detected!("avx2")),
        InstructionSet::Baseline => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    assert_eq!(instruction_set(), InstructionSet::Baseline);
}

/// With MXCSR set to flush results to zero, treat input denormals as zero and round toward
/// zero (as some hosts set it), the `f32` kernels, whose instructions would follow it, leave
/// the work to the exact core: the results are the default environment's.
#[cfg(target_arch = "x86_64")]
#[test]
fn f32_kernels_give_exact_results_in_another_float_environment() {
    use crate::isa::{float_environment_is_default, with_mxcsr};
    let csr = 0x1f80 | 0x8000 | 0x0040 | 0x6000;
    assert!(float_environment_is_default());
    assert!(!with_mxcsr(csr, float_environment_is_default));
    let mut inputs: Vec<u32> = boundary_f32().into_iter().chain(specials()).collect();
    // Subnormal inputs, and values that round differently toward zero.
    inputs.extend([
        1,
        0x8000_0001,
        0x0040_0000,
        0x007f_ffff,
        0x3f8c_cccd,
        0xbf8c_cccd,
    ]);
    let sf = satfinite();
    let d = Policy::default();
    let rs8 = Rounding::stochastic(0, 8);
    for conv in [
        Conversion::new(F32, F16, Rounding::RP, d),
        Conversion::new(F32, F16, Rounding::RN, d),
        Conversion::new(F32, BF16, Rounding::RN, d),
        Conversion::new(F32, TF32, Rounding::RN, d),
        Conversion::new(F32, E4M3, Rounding::RN, sf),
        Conversion::new(F32, E2M1, Rounding::RN, sf),
        Conversion::new(F32, E2M1, rs8, sf),
        Conversion::new(F32, E4M3, rs8, sf),
        Conversion::new(F32, S32, Rounding::RNI, d),
    ] {
        let k = Kernel::new(conv);
        let random: Vec<u8> = inputs.iter().map(|&x| (x >> 3) as u8).collect();
        let mut got = vec![0u32; inputs.len()];
        with_mxcsr(csr, || {
            k.convert_stochastic_words(&inputs, &mut got, &random)
        })
        .unwrap();
        for ((&x, &r), &g) in inputs.iter().zip(&random).zip(&got) {
            let mut c = conv;
            if let Direction::Stochastic { width, .. } = c.rounding.direction {
                c.rounding = Rounding::stochastic(u64::from(r), width);
            }
            assert_eq!(u64::from(g), c.apply(u64::from(x)).bits, "{x:#x} {conv:?}");
        }
    }
}

#[test]
fn f32_kernels_take_wider_source_words() {
    // `u64` source words (a caller holding bit patterns in its widest word) through the
    // f32 kernels of each kind: the results of the `u32` words, deterministic and
    // stochastic, slices longer than the narrowing block; bits above 32 are ignored.
    let mut rng = Rng(11);
    let inputs: Vec<u32> = (0..3000).map(|_| rng.next_u32()).collect();
    let random: Vec<u32> = inputs.iter().map(|_| rng.next_u32()).collect();
    for (dst, rounding, policy) in [
        (F16, Rounding::RN, Policy::default()),
        (E4M3, Rounding::RN, satfinite()),
        (E2M1, Rounding::stochastic(0, 8), satfinite()),
        (UE8M0, Rounding::RP, Policy::default()),
        (S32, Rounding::RNI, Policy::default()),
    ] {
        let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
        let mut want = vec![0u32; inputs.len()];
        k.convert_stochastic(&inputs, &mut want, &random).unwrap();
        for high in [0u64, 0xdead_beef << 32] {
            let wide: Vec<u64> = inputs.iter().map(|&x| x as u64 | high).collect();
            let mut got = vec![0u32; inputs.len()];
            k.convert_stochastic(&wide, &mut got, &random).unwrap();
            assert_eq!(got, want, "{dst} {high:#x}");
            let mut det = vec![0u32; inputs.len()];
            k.convert(&wide, &mut det).unwrap();
            let mut det32 = vec![0u32; inputs.len()];
            k.convert(&inputs, &mut det32).unwrap();
            assert_eq!(det, det32, "{dst} {high:#x} convert");
        }
    }
}
