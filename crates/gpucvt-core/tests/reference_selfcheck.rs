//! Checks of the reference itself, so that an agreement between the reference and the engine
//! means something:
//!
//! - its decoder against the hardware's `f32`/`f64` decoding and the VF table of the vISA
//!   notes;
//! - its two styles of neighbour search (sorted table and bisection, arithmetic on the
//!   exponent) against each other on the IEEE formats of at most 16 bits;
//! - facts stated in the specification notes (`ptx-cvt.md`, `visa.md`), checked against the
//!   reference *and* the engine.

use gpucvt_reference::{reference, Rng};

use gpucvt_core::format::{
    BF16, E2M1, E4M3, E5M2, F16, F32, F64, S2F6, S32, S8, TF32, U8, UE8M0, VF,
};
use gpucvt_core::{Format, IntNan, NanResult, Policy, Rounding};
use num_bigint::BigInt;
use num_traits::{One, Zero};
use reference::*;

#[test]
fn decode_agrees_with_the_hardware_for_f32_and_f64() {
    let mut rng = Rng(42);
    for i in 0..400_000u64 {
        let b = if i < 1 << 16 {
            // Every exponent with a few mantissas, and the bottom and top of the range.
            (i >> 8) << 23 | (i & 0xff) | (i & 3) << 21
        } else {
            rng.next_u64()
        };
        let b32 = b & 0xffff_ffff;
        let h = f32::from_bits(b32 as u32);
        match decode(&F32, b32).val {
            Val::Nan { .. } => assert!(h.is_nan()),
            Val::Inf { neg } => assert!(h.is_infinite() && h.is_sign_negative() == neg),
            Val::Zero { neg } => assert!(h == 0.0 && h.is_sign_negative() == neg),
            Val::Num { neg, mag } => {
                assert_eq!(approx(&mag), h.abs() as f64, "{b32:#x}");
                assert_eq!(neg, h.is_sign_negative());
            }
        }
        let h = f64::from_bits(b);
        match decode(&F64, b).val {
            Val::Nan { .. } => assert!(h.is_nan()),
            Val::Inf { neg } => assert!(h.is_infinite() && h.is_sign_negative() == neg),
            Val::Zero { neg } => assert!(h == 0.0 && h.is_sign_negative() == neg),
            Val::Num { neg, mag } => {
                assert_eq!(approx(&mag), h.abs(), "{b:#x}");
                assert_eq!(neg, h.is_sign_negative());
            }
        }
    }
}

#[test]
fn decode_matches_the_vf_table_of_the_visa_notes() {
    // visa.md §4: value = (−1)^s × 2^(e−3) × (1 + m/16), 0x00/0x80 zero; rows of the table.
    let q = |n: i64, d: i64| Q::new(BigInt::from(n), BigInt::from(d));
    let rows: [(u64, Q); 8] = [
        (0x01, q(1328125, 10_000_000)),
        (0x0f, q(2421875, 10_000_000)),
        (0x10, q(1, 4)),
        (0x2d, q(90625, 100_000)),
        (0x30, q(1, 1)),
        (0x4b, q(3375, 1000)),
        (0x6f, q(155, 10)),
        (0x7f, q(31, 1)),
    ];
    for (b, v) in rows {
        assert_eq!(
            decode(&VF, b).val,
            Val::Num {
                neg: false,
                mag: v.clone()
            },
            "{b:#x}"
        );
        assert_eq!(decode(&VF, b | 0x80).val, Val::Num { neg: true, mag: v });
    }
    assert_eq!(decode(&VF, 0x00).val, Val::Zero { neg: false });
    assert_eq!(decode(&VF, 0x80).val, Val::Zero { neg: true });
    // Every other byte: the formula, written out.
    for b in 1..0x80u64 {
        let (e, m) = ((b >> 4) as i64, (b & 15) as i64);
        let v = Q::new(BigInt::from(16 + m), BigInt::from(16)) * pow2(e - 3);
        assert_eq!(
            decode(&VF, b).val,
            Val::Num { neg: false, mag: v },
            "{b:#x}"
        );
    }
}

#[test]
fn table_and_arithmetic_neighbour_searches_agree() {
    // The ≤16-bit IEEE formats through both styles: every value of bf16, f16 and e5m2 as
    // a source magnitude, scaled, and random f64 magnitudes, on both grids.
    let mut rng = Rng(7);
    for f in [F16, BF16, E5M2] {
        let table = dst_model(&f);
        let arith = Dst::arithmetic(&f);
        let mut xs: Vec<Q> = Vec::new();
        for src in [BF16, F16, E5M2] {
            for b in 0..0x7c00u64.min(1 << (width_of(&src) - 1)) {
                if let Val::Num { mag, .. } = decode(&src, b).val {
                    xs.push(scaled(&mag, (b % 7) as i32 - 3));
                }
            }
        }
        for _ in 0..100_000 {
            let b = rng.next_u64() & 0x7fff_ffff_ffff_ffff;
            let b = b >> rng.below(12); // smaller exponents too
            if let Val::Num { mag, .. } = decode(&F64, b).val {
                xs.push(mag);
            }
        }
        for x in &xs {
            for integral in [false, true] {
                let a = locate(table, x, integral);
                let b = locate(&arith, x, integral);
                assert_eq!(a, b, "{f} x = {x} integral {integral}");
            }
        }
    }
}

/// Checks an expected pattern against the reference and the engine.
#[track_caller]
fn both(src: Format, bits: u64, dst: Format, r: Rounding, p: Policy, want: u64) {
    let reference = reference(&src, bits, &dst, r, &p);
    let engine = engine(&src, bits, &dst, r, &p);
    assert_eq!(
        reference.bits, want,
        "reference: {src} {bits:#x} -> {dst} {r:?} {p:?}"
    );
    assert_eq!(
        engine.bits, want,
        "engine: {src} {bits:#x} -> {dst} {r:?} {p:?}"
    );
    assert_eq!(reference, engine, "flags: {src} {bits:#x} -> {dst}");
}

fn pol() -> Policy {
    Policy::default()
}

fn satfinite() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

#[test]
fn f16_overflow_is_ieee() {
    // ptx-cvt.md §4.6 and §11: RN gives ±inf from |x| ≥ 65520; RZ gives ±65504; RM gives
    // +65504 / −inf; RP gives +inf / −65504; .satfinite gives ±65504.
    both(F32, 0x477f_f000, F16, Rounding::RN, pol(), 0x7c00);
    both(F32, 0x477f_efff, F16, Rounding::RN, pol(), 0x7bff);
    both(F32, 0xc77f_f000, F16, Rounding::RN, pol(), 0xfc00);
    both(F32, 0x4780_0000, F16, Rounding::RZ, pol(), 0x7bff);
    both(F32, 0x4780_0000, F16, Rounding::RM, pol(), 0x7bff);
    both(F32, 0xc780_0000, F16, Rounding::RM, pol(), 0xfc00);
    both(F32, 0x4780_0000, F16, Rounding::RP, pol(), 0x7c00);
    both(F32, 0xc780_0000, F16, Rounding::RP, pol(), 0xfbff);
    both(F32, 0x7f80_0000, F16, Rounding::RN, satfinite(), 0x7bff);
    both(F32, 0xff80_0000, F16, Rounding::RZ, satfinite(), 0xfbff);
    both(F32, 0x7fc0_0000, F16, Rounding::RN, satfinite(), 0x7fff);
}

#[test]
fn narrow_formats_from_the_notes() {
    // §4.8/§4.9: e4m3 satfinite, NaN 0x7f; e2m1 NaN → +MAX_NORM, −0.1 → −0.
    both(F32, 0x4396_0000, E4M3, Rounding::RN, satfinite(), 0x79); // 300 → 288
    both(F32, 0x43fa_0000, E4M3, Rounding::RN, satfinite(), 0x7e); // 500 → 448
    both(F32, 0xffc0_0000, E4M3, Rounding::RN, satfinite(), 0x7f);
    both(F32, 0x7fc0_0000, E5M2, Rounding::RN, satfinite(), 0x7f);
    both(F32, 0x7fc0_0000, E2M1, Rounding::RN, satfinite(), 0x7);
    both(F32, 0xbdcc_cccd, E2M1, Rounding::RN, satfinite(), 0x8);
    // The e4m3 top binade rounds on the virtual grid: 464 is the tie of 448 and 480.
    both(F32, 0x43e8_0000, E4M3, Rounding::RN, satfinite(), 0x7e);
    both(F32, 0x43e8_0000, E4M3, Rounding::RN, pol(), 0x7e);
    both(F32, 0x43e8_8000, E4M3, Rounding::RN, pol(), 0x7f); // 465 → overflow → NaN
                                                             // §4.10: e4m3 NaN → f16 0x7fff (canonical); e5m2 inf → f16 inf.
    both(E4M3, 0xff, F16, Rounding::RN, pol(), 0x7fff);
    both(E5M2, 0xfc, F16, Rounding::RN, pol(), 0xfc00);
}

#[test]
fn ml_dtypes_formats_facts() {
    use gpucvt_core::format::{E3M4, E4M3B11FNUZ, E4M3FNUZ, E4M3IEEE, E5M2FNUZ};
    let rn = |src, b, dst, p, want| both(src, b, dst, Rounding::RN, p, want);
    for f in [E4M3FNUZ, E5M2FNUZ, E4M3B11FNUZ] {
        // NaN (either sign) and infinities give the one NaN 0x80; −0 and a tiny negative
        // value give +0; .satfinite clamps infinities to ±max 0x7f / 0xff.
        rn(F32, 0x7fc0_0000, f, pol(), 0x80);
        rn(F32, 0xffc0_0000, f, pol(), 0x80);
        rn(F32, 0x7f80_0000, f, pol(), 0x80);
        rn(F32, 0xff80_0000, f, pol(), 0x80);
        rn(F32, 0x8000_0000, f, pol(), 0x00);
        rn(F32, 0x8000_0001, f, pol(), 0x00);
        rn(F32, 0x7f80_0000, f, satfinite(), 0x7f);
        rn(F32, 0xff80_0000, f, satfinite(), 0xff);
        rn(F32, 0x7fc0_0000, f, satfinite(), 0x80);
        both(F32, 0x8000_0001, f, Rounding::RM, pol(), 0x81);
        // 0x80 decodes as NaN: into f16 the canonical NaN.
        rn(f, 0x80, F16, pol(), 0x7fff);
        // Largest values, and RN overflow beyond them gives NaN.
        rn(F32, 0x7f7f_ffff, f, pol(), 0x80);
        rn(F32, 0xff7f_ffff, f, satfinite(), 0xff);
    }
    rn(F32, 0x4370_0000, E4M3FNUZ, pol(), 0x7f); // 240
    rn(F32, 0x4378_0000, E4M3FNUZ, pol(), 0x80); // 248: tie of 240 and 256 → NaN
    rn(F32, 0x4377_ffff, E4M3FNUZ, pol(), 0x7f);
    rn(F32, 0x3a80_0000, E4M3FNUZ, pol(), 0x01); // 2^-10, the smallest subnormal
    rn(F32, 0x4760_0000, E5M2FNUZ, pol(), 0x7f); // 57344
    rn(F32, 0x3700_0000, E5M2FNUZ, pol(), 0x01); // 2^-17
    rn(F32, 0x41f0_0000, E4M3B11FNUZ, pol(), 0x7f); // 30
    rn(F32, 0x3900_0000, E4M3B11FNUZ, pol(), 0x01); // 2^-13
                                                    // IEEE-style: infinities, −0 kept.
    rn(F32, 0x4178_0000, E3M4, pol(), 0x6f); // 15.5
    rn(F32, 0x4180_0000, E3M4, pol(), 0x70); // 16 → inf
    rn(F32, 0x3c80_0000, E3M4, pol(), 0x01); // 2^-6
    rn(F32, 0x8000_0000, E3M4, pol(), 0x80);
    rn(F32, 0x4370_0000, E4M3IEEE, pol(), 0x77); // 240
    rn(F32, 0x4378_0000, E4M3IEEE, pol(), 0x78); // 248 → inf
    rn(F32, 0xff80_0000, E4M3IEEE, pol(), 0xf8);
    rn(F32, 0x3b00_0000, E4M3IEEE, pol(), 0x01); // 2^-9
}

#[test]
fn ue8m0_examples_of_the_notes() {
    // §12.7 (header emulation): rp/rz, subnormals, sign ignored, overflow.
    let rp = |b, want| both(F32, b, UE8M0, Rounding::RP, pol(), want);
    let rz = |b, want| both(F32, b, UE8M0, Rounding::RZ, pol(), want);
    rp(0x3f80_0008, 0x80);
    rp(0x3f80_0001, 0x80);
    rz(0x3f80_0008, 0x7f);
    rz(0x3f80_0001, 0x7f);
    rp(0x0040_0000, 0x00);
    rp(0x0020_0000, 0x00);
    rp(0x0040_0001, 0x01);
    rp(0x0080_0001, 0x02);
    rp(0x3fc0_0000, 0x80);
    rp(0xbfc0_0000, 0x80);
    rp(0x7f7f_ffff, 0xff);
    both(F32, 0x7f7f_ffff, UE8M0, Rounding::RP, satfinite(), 0xfe);
    rz(0, 0x00);
    rz(0x7fc0_0000, 0xff);
    rz(0x7f80_0000, 0xff);
    both(F32, 0x7f80_0000, UE8M0, Rounding::RZ, satfinite(), 0xfe);
    // §4.10: ue8m0 → bf16 is a shift: 0x00 → 0x0040 (2^-127), 0xff → NaN.
    both(UE8M0, 0x00, BF16, Rounding::RN, pol(), 0x0040);
    both(UE8M0, 0x85, BF16, Rounding::RN, pol(), 0x0085 << 7);
    both(UE8M0, 0xff, BF16, Rounding::RN, pol(), 0x7fff);
}

#[test]
fn tf32_s2f6_and_integers_from_the_notes() {
    // §12.8: tf32 satfinite clamps to 0x7f7fe000; rna ties away, rn ties to even.
    both(
        F32,
        0x7f7f_ffff,
        TF32,
        Rounding::RN,
        satfinite(),
        0x7f7f_e000,
    );
    both(F32, 0x3f80_1000, TF32, Rounding::RNA, pol(), 0x3f80_2000);
    both(F32, 0x3f80_1000, TF32, Rounding::RN, pol(), 0x3f80_0000);
    both(F32, 0x3f80_3000, TF32, Rounding::RN, pol(), 0x3f80_4000);
    // §4.13: s2f6 = s8 × 2^-6; satfinite NaN → +MAX_NORM 0x7f; 2.0 → MAX_NORM; relu.
    both(F32, 0x3f80_0000, S2F6, Rounding::RN, satfinite(), 0x40);
    both(F32, 0xc000_0000, S2F6, Rounding::RN, satfinite(), 0x80);
    both(F32, 0x4000_0000, S2F6, Rounding::RN, satfinite(), 0x7f);
    both(F32, 0x7fc0_0000, S2F6, Rounding::RN, satfinite(), 0x7f);
    let relu = Policy {
        relu: true,
        satfinite: true,
        ..pol()
    };
    both(F32, 0xbf80_0000, S2F6, Rounding::RN, relu, 0x00);
    both(F32, 0x3f00_0000, S2F6, Rounding::RN, relu, 0x20);
    // Dividing by the scale factor 2^1 (scale −1): 1.5 / 2 = 0.75.
    let scaled = Policy {
        scale: -1,
        ..satfinite()
    };
    both(F32, 0x3fc0_0000, S2F6, Rounding::RN, scaled, 0x30);
    // §4.4: float → int NaN → 0, or 1 << (w − 1) for f64 sources / 64-bit destinations.
    let hb = Policy {
        int_nan: IntNan::HighBit,
        ..pol()
    };
    both(F32, 0x7fc0_0000, S32, Rounding::RNI, pol(), 0);
    both(
        F64,
        0x7ff8_0000_0000_0000,
        S32,
        Rounding::RNI,
        hb,
        0x8000_0000,
    );
    both(F64, 0x7ff8_0000_0000_0000, U8, Rounding::RZI, hb, 0x80);
    // §4.2: .sat clamps the mathematical value.
    let sat = Policy { sat: true, ..pol() };
    both(S32, (-5i32) as u32 as u64, U8, Rounding::RZ, sat, 0);
    both(U8, 200, S8, Rounding::RZ, sat, 127);
    // §4.4: float → int clamps by default; ±inf → MIN/MAX.
    both(F32, 0x4f00_0000, S32, Rounding::RZI, pol(), 0x7fff_ffff);
    both(F32, 0xff80_0000, S32, Rounding::RZI, pol(), 0x8000_0000);
    both(F32, 0xbf00_0000, S32, Rounding::RMI, pol(), 0xffff_ffff);
}

#[test]
fn sat_and_nan_rules_from_the_notes() {
    // §11: .sat on a float destination: NaN → +0, values ≤ 0 (−0 too) → +0, > 1 → 1.
    let sat = Policy { sat: true, ..pol() };
    both(F32, 0x7fc0_0000, F16, Rounding::RN, sat, 0);
    both(F32, 0x8000_0000, F16, Rounding::RN, sat, 0);
    both(F32, 0xbf80_0000, F16, Rounding::RN, sat, 0);
    both(F32, 0x4000_0000, F16, Rounding::RN, sat, 0x3c00);
    both(F32, 0x3f00_0000, F16, Rounding::RN, sat, 0x3800);
    // §12.11: bf16 → f32 as a shift keeps sign and payload (NanResult::Payload), the
    // canonical NaN is positive with every bit set.
    let payload = Policy {
        nan: NanResult::Payload,
        ..pol()
    };
    both(BF16, 0xffc1, F32, Rounding::RN, payload, 0xffc1_0000);
    both(BF16, 0xffc1, F32, Rounding::RN, pol(), 0x7fff_ffff);
    both(F32, 0xffc1_0000, TF32, Rounding::RN, pol(), 0x7fff_ffff);
    // A payload that truncates away keeps the NaN quiet.
    both(F32, 0x7f80_0001, F16, Rounding::RN, payload, 0x7e00);
    // .relu: negative → +0, NaN → canonical.
    let relu = Policy {
        relu: true,
        ..pol()
    };
    both(F32, 0xbf80_0000, BF16, Rounding::RN, relu, 0);
    both(F32, 0xffc0_0001, BF16, Rounding::RN, relu, 0x7fff);
}

#[test]
fn reference_helpers() {
    assert_eq!(flog2(&pow2(-1074)), -1074);
    assert_eq!(flog2(&(pow2(10) - pow2(-3))), 9);
    assert!(qcmp(&pow2(3), &Q::from_integer(BigInt::from(8))).is_eq());
    assert!(qcmp(&Q::zero(), &pow2(-1000)).is_lt());
    assert_eq!(
        dyadic(BigInt::from(12), -2),
        Q::from_integer(BigInt::from(3))
    );
    assert_eq!(scaled(&Q::one(), -3), pow2(-3));
}
