//! The `f32` → integer kernel against the exact core, for every width, rounding and policy
//! it accepts, compiled for every instruction set the CPU has. (All 2^32 inputs: the ignored
//! `s32_rni` test of `gpucvt` and `gpucvt verify`.)

use super::Params;
use crate::isa::{convert_int_isa as convert_isa, InstructionSet};
use crate::{Kernel, Strategy, Word};
use gpucvt_core::convert::{Conversion, IntNan, IntOverflow, Policy};
use gpucvt_core::format::*;
use gpucvt_core::round::Rounding;

// The bulk tests' reproducible generator.
use gpucvt_reference::Rng;

/// Dense at every exponent, around every small integer and half-integer, around every
/// power of two up to 2^65 (the range ends of every width), both signs; NaNs, infinities,
/// subnormals; and random patterns.
fn inputs() -> Vec<u32> {
    let mut v = Vec::new();
    let mants = [
        0u32, 1, 2, 3, 0x7f_ffff, 0x7f_fffe, 0x40_0000, 0x40_0001, 0x3f_ffff, 0x20_0000, 0x60_0000,
    ];
    for e in 0..=255u32 {
        for &m in &mants {
            v.push(e << 23 | m);
        }
        for k in 0..23 {
            let b = 1u32 << k;
            v.extend([
                e << 23 | b,
                e << 23 | (b - 1),
                e << 23 | (b + 1) & 0x7f_ffff,
            ]);
            v.extend([
                e << 23 | (3 * b) & 0x7f_ffff,
                e << 23 | (b << 1 | b >> 1) & 0x7f_ffff,
            ]);
        }
    }
    let mut around = |x: f32| {
        let b = x.to_bits() as i64;
        for d in -6..=6 {
            v.push((b + d).clamp(0, 0x7f80_0000) as u32);
        }
    };
    for k in 0..=300 {
        around(k as f32);
        around(k as f32 + 0.5);
    }
    for e in 0..=65 {
        let p = 2f64.powi(e) as f32;
        around(p);
        around(p - 1.0);
        around(p + 1.0);
        around(p - 0.5);
    }
    v.extend([0x7f80_0001, 0x7fc0_0000, 0x7fff_ffff, 0x7fa0_0000]);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..20_000 {
        v.push(rng.next_u32());
    }
    let neg: Vec<u32> = v.iter().map(|x| x | 0x8000_0000).collect();
    v.extend(neg);
    v.sort_unstable();
    v.dedup();
    v
}

const INTS: [Format; 8] = [S8, U8, S16, U16, S32, U32, S64, U64];

fn roundings() -> Vec<Rounding> {
    vec![
        Rounding::RNI,
        Rounding::RZI,
        Rounding::RMI,
        Rounding::RPI,
        Rounding::RN,
        Rounding::RNA,
        Rounding::RZ,
        Rounding::RM,
        Rounding::RP,
    ]
}

fn policies() -> Vec<Policy> {
    let d = Policy::default();
    let ftz = Policy {
        flush_inputs: true,
        ..d
    };
    vec![
        d,
        ftz,
        Policy { sat: true, ..d },
        Policy { sat: true, ..ftz },
        Policy {
            int_nan: IntNan::HighBit,
            ..d
        },
        Policy {
            int_nan: IntNan::HighBit,
            sat: true,
            ..ftz
        },
        Policy {
            satfinite: true,
            ..d
        },
        Policy { relu: true, ..d },
        Policy {
            relu: true,
            int_nan: IntNan::HighBit,
            ..ftz
        },
        Policy {
            int_overflow: IntOverflow::Wrap,
            sat: true,
            ..d
        },
        // Knobs that do not act on integer destinations.
        Policy {
            flush_outputs: true,
            positive_zero: true,
            overflow: gpucvt_core::convert::Overflow::Saturate,
            nan: gpucvt_core::convert::NanResult::Payload,
            ..d
        },
    ]
}

/// Compares `got` with `want`, the exact results.
fn compare<D: Word>(c: &Conversion, src: &[u32], want: &[u64], got: &[D], what: &str) {
    for ((&x, &want), &g) in src.iter().zip(want).zip(got) {
        if g.to_u64() != want {
            panic!(
                "{what}: {} {:?} {:?}: {x:#010x} ({}) gave {:#x}, exact {want:#x}",
                c.dst,
                c.rounding,
                c.policy,
                f32::from_bits(x),
                g.to_u64()
            );
        }
    }
}

/// The natural word of a width, through `Kernel::convert`.
fn natural<D: Word>(k: &Kernel, src: &[u32]) -> Vec<D> {
    let mut out = vec![D::default(); src.len()];
    k.convert(src, &mut out).unwrap();
    out
}

#[test]
fn every_width_rounding_and_policy_matches_the_exact_core() {
    let src = inputs();
    let src64: Vec<u64> = src.iter().map(|&x| x as u64).collect();
    for dst in INTS {
        for rounding in roundings() {
            for policy in policies() {
                let c = Conversion::new(F32, dst, rounding, policy);
                let k = Kernel::new(c);
                assert_eq!(
                    k.strategy(),
                    Strategy::F32Int,
                    "{dst} {rounding:?} {policy:?}"
                );
                let p = Params::new(&dst, rounding, &policy).unwrap();
                let want: Vec<u64> = src.iter().map(|&x| c.apply(x as u64).bits).collect();
                for isa in InstructionSet::ALL {
                    let mut out = vec![0u64; src.len()];
                    convert_isa(&p, isa, &src, &mut out);
                    compare(&c, &src, &want, &out, &format!("isa {isa}"));
                }
                // Through the kernel: the natural word, and `u64` words in and out.
                match dst.width() {
                    8 => compare(&c, &src, &want, &natural::<u8>(&k, &src), "u8 words"),
                    16 => compare(&c, &src, &want, &natural::<u16>(&k, &src), "u16 words"),
                    32 => compare(&c, &src, &want, &natural::<u32>(&k, &src), "u32 words"),
                    _ => {}
                }
                let mut out = vec![0u64; src.len()];
                k.convert(&src64, &mut out).unwrap();
                compare(&c, &src, &want, &out, "u64 words");
            }
        }
    }
}

#[test]
fn other_integer_conversions_keep_the_exact_core() {
    let d = Policy::default();
    let wrap = Policy {
        int_overflow: IntOverflow::Wrap,
        ..d
    };
    let scaled = Policy { scale: 3, ..d };
    for (dst, rounding, policy) in [
        (S32, Rounding::RNI, wrap),
        (U8, Rounding::RZI, scaled),
        (S32, Rounding::stochastic(5, 8), d),
        (S4, Rounding::RNI, d),
        (U2, Rounding::RNI, d),
        (S2F6, Rounding::RN, d),
    ] {
        let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
        assert_ne!(
            k.strategy(),
            Strategy::F32Int,
            "{dst} {rounding:?} {policy:?}"
        );
    }
}

#[test]
fn ptx_examples() {
    let c = |dst, r| Kernel::new(Conversion::new(F32, dst, r, Policy::default()));
    let src = [
        2.5f32,
        -2.5,
        3e9,
        -3e9,
        f32::NAN,
        -0.75,
        255.5,
        f32::INFINITY,
    ]
    .map(f32::to_bits);
    let mut out = [0u32; 8];
    c(S32, Rounding::RNI).convert(&src, &mut out).unwrap();
    assert_eq!(
        out,
        [
            2,
            -2i32 as u32,
            0x7fff_ffff,
            0x8000_0000,
            0,
            0xffff_ffff,
            256,
            0x7fff_ffff
        ]
    );
    c(U8, Rounding::RMI).convert(&src, &mut out).unwrap();
    assert_eq!(out, [2, 0, 255, 0, 0, 0, 255, 255]);
    let mut out = [0u64; 8];
    c(U32, Rounding::RPI).convert(&src, &mut out).unwrap();
    assert_eq!(out, [3, 0, 3_000_000_000, 0, 0, 0, 256, 0xffff_ffff]);
}

#[test]
fn sixty_four_bit_ends_on_every_instruction_set() {
    // The 64-bit kernels (the significand shifted into 64-bit lanes; with AVX-512 DQ, the
    // CPU's conversion instruction) at the ends of their ranges, on every instruction set and at every offset within a vector (slices of
    // every length up to 40, so that each value also lands in the scalar remainder).
    let d = Policy::default();
    let ftz = Policy {
        flush_inputs: true,
        ..d
    };
    let nan_high = Policy {
        int_nan: IntNan::HighBit,
        ..d
    };
    let big = f32::from_bits(0x5eff_ffff); // 2^63 − 2^39, the largest f32 below 2^63
    let ubig = f32::from_bits(0x5f7f_ffff); // 2^64 − 2^40
    let sub = f32::from_bits(0x0000_0001);
    #[rustfmt::skip]
    let cases: [(Format, Rounding, Policy, f32, u64); 24] = [
        (S64, Rounding::RNI, d, big, 0x7fff_ff80_0000_0000),
        (S64, Rounding::RNI, d, -big, 0x8000_0080_0000_0000),
        (S64, Rounding::RNI, d, -9.223_372e18, i64::MIN as u64), // −2^63
        (S64, Rounding::RNI, d, 9.223_372e18, i64::MAX as u64), // 2^63: saturates
        (S64, Rounding::RZI, d, f32::INFINITY, i64::MAX as u64),
        (S64, Rounding::RZI, d, f32::NEG_INFINITY, i64::MIN as u64),
        (S64, Rounding::RZI, d, -1e30, i64::MIN as u64),
        (S64, Rounding::RZI, d, f32::NAN, 0),
        (S64, Rounding::RZI, nan_high, f32::NAN, 1 << 63),
        (S64, Rounding::RPI, d, sub, 1),
        (S64, Rounding::RPI, ftz, sub, 0),
        (S64, Rounding::RMI, d, -sub, u64::MAX),
        (S64, Rounding::RMI, ftz, -sub, 0),
        (S64, Rounding::RNI, d, -16_777_217.0, (-16_777_216i64) as u64),
        (S64, Rounding::RMI, d, -2.5, (-3i64) as u64),
        (S64, Rounding::RNI, d, 1.5 * 2f32.powi(40), 3 << 39),
        (U64, Rounding::RNI, d, ubig, 0xffff_ff00_0000_0000),
        (U64, Rounding::RNI, d, 1.844_674_4e19, u64::MAX), // 2^64: saturates
        (U64, Rounding::RZI, d, f32::INFINITY, u64::MAX),
        (U64, Rounding::RZI, d, -1e30, 0),
        (U64, Rounding::RPI, d, -0.5, 0),
        (U64, Rounding::RPI, d, sub, 1),
        (U64, Rounding::RPI, ftz, sub, 0),
        (U64, Rounding::RZI, d, 2f32.powi(63), 1 << 63),
    ];
    for (dst, rounding, policy, x, want) in cases {
        let c = Conversion::new(F32, dst, rounding, policy);
        let x = x.to_bits();
        assert_eq!(
            c.apply(x as u64).bits,
            want,
            "exact core: {dst} {rounding:?} {x:#x}"
        );
        let p = Params::new(&dst, rounding, &policy).unwrap();
        for len in 1..=40usize {
            // `x` at every position of a slice of ordinary values.
            for at in [0, len / 2, len - 1] {
                let mut src: Vec<u32> = (0..len as u32)
                    .map(|i| (i as f32 * 3.7).to_bits())
                    .collect();
                src[at] = x;
                let exact: Vec<u64> = src.iter().map(|&s| c.apply(s as u64).bits).collect();
                for isa in InstructionSet::ALL {
                    let mut out = vec![0x5a5au64; len];
                    convert_isa(&p, isa, &src, &mut out);
                    compare(&c, &src, &exact, &out, &format!("isa {isa} len {len}"));
                    assert_eq!(out[at], want);
                }
            }
        }
    }
}
