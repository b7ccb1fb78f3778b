//! Properties of the engine's conversions that hold whatever the reference says: rounding is
//! monotonic; `rz`, `rm` and `rp` bracket the exact value; widening conversions are exact and
//! round-trip; stochastic rounding with zero random bits is `rz`, and with any random bits
//! picks `rz`'s or the away-from-zero neighbour.
//!
//! Results are read back as exact values with the reference's own decoder.

use gpucvt_reference::reference;

use gpucvt_core::format::{
    BF16, CATALOGUE, E2M1, E2M3, E3M2, E3M4, E4M3, E4M3B11FNUZ, E4M3FNUZ, E4M3IEEE, E5M2, E5M2FNUZ,
    F16, F32, F64, S16, S2F6, S32, S4, S64, S8, U16, U32, U64, U8, UE4M3, UE5M3, UE8M0, VF,
};
use gpucvt_core::{Conversion, Format, NanResult, Overflow, Policy, Rounding};
use num_traits::{One, Signed, Zero};
use proptest::prelude::*;
use reference::*;
use std::cmp::Ordering;

/// A value on the extended real line, for ordering results (`None` for NaN).
#[derive(Clone, Debug, PartialEq)]
enum Ext {
    NegInf,
    Fin(Q),
    PosInf,
}

fn ext(v: &Val) -> Option<Ext> {
    Some(match v {
        Val::Nan { .. } => return None,
        Val::Inf { neg: true } => Ext::NegInf,
        Val::Inf { neg: false } => Ext::PosInf,
        Val::Zero { .. } => Ext::Fin(Q::zero()),
        Val::Num { neg, mag } => Ext::Fin(if *neg { -mag.clone() } else { mag.clone() }),
    })
}

fn ext_cmp(a: &Ext, b: &Ext) -> Ordering {
    use Ext::*;
    match (a, b) {
        (NegInf, NegInf) | (PosInf, PosInf) => Ordering::Equal,
        (NegInf, _) | (_, PosInf) => Ordering::Less,
        (_, NegInf) | (PosInf, _) => Ordering::Greater,
        (Fin(x), Fin(y)) => x.cmp(y),
    }
}

fn cvt(src: Format, dst: Format, r: Rounding, p: Policy, bits: u64) -> gpucvt_core::Outcome {
    Conversion::new(src, dst, r, p).apply(bits)
}

fn value_of(f: &Format, bits: u64) -> Option<Ext> {
    ext(&decode(f, bits).val)
}

fn mask(f: &Format) -> u64 {
    let w = width_of(f);
    if w == 64 {
        !0
    } else {
        (1u64 << w) - 1
    }
}

fn float_sources() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![F32, F64, F16, BF16])
}

fn any_dst() -> impl Strategy<Value = Format> {
    prop::sample::select(CATALOGUE.to_vec())
}

/// Every rounding that is not to an integral value (stochastic rounding with fixed random
/// bits included).
fn non_integral_rounding() -> impl Strategy<Value = Rounding> {
    prop_oneof![
        prop::sample::select(vec![
            Rounding::RN,
            Rounding::RNA,
            Rounding::RZ,
            Rounding::RM,
            Rounding::RP,
        ]),
        (any::<u64>(), 1u32..=64).prop_map(|(r, w)| Rounding::stochastic(r, w)),
    ]
}

/// Every deterministic rounding, and stochastic rounding with fixed random bits.
fn any_rounding() -> impl Strategy<Value = Rounding> {
    prop_oneof![
        prop::sample::select(vec![
            Rounding::RN,
            Rounding::RNA,
            Rounding::RZ,
            Rounding::RM,
            Rounding::RP,
            Rounding::RNI,
            Rounding::RZI,
            Rounding::RMI,
            Rounding::RPI,
        ]),
        (any::<u64>(), 1u32..=64).prop_map(|(r, w)| Rounding::stochastic(r, w)),
    ]
}

/// Policies under which every conversion is a monotonic function of the value.
fn monotonic_policy() -> impl Strategy<Value = Policy> {
    let d = Policy::default();
    prop::sample::select(vec![
        d,
        Policy {
            satfinite: true,
            ..d
        },
        Policy { sat: true, ..d },
        Policy { relu: true, ..d },
        Policy {
            flush_inputs: true,
            flush_outputs: true,
            ..d
        },
        Policy {
            overflow: Overflow::Saturate,
            ..d
        },
        Policy { scale: -7, ..d },
        Policy { scale: 9, ..d },
    ])
}

/// A pattern and a second one either nearby or anywhere.
fn pattern_pair(f: Format) -> impl Strategy<Value = (u64, u64)> {
    let m = mask(&f);
    (any::<u64>(), any::<u64>(), -40i64..=40, any::<bool>()).prop_map(move |(a, b, d, near)| {
        let a = a & m;
        let b = if near {
            a.wrapping_add_signed(d) & m
        } else {
            b & m
        };
        (a, b)
    })
}

/// `cases` cases, or more where `PROPTEST_CASES` asks for more (a long local run).
fn config(cases: u32) -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: cases.max(default.cases),
        failure_persistence: None,
        ..default
    }
}

proptest! {
    #![proptest_config(config(50_000))]

    /// x ≤ y implies cvt(x) ≤ cvt(y), for every destination, rounding (stochastic rounding
    /// with fixed random bits included) and clamping policy. Destinations without a sign
    /// take magnitudes, so they are checked on non-negative values; results that are NaN
    /// (an overflow into a format whose only special value is NaN) are not ordered.
    #[test]
    fn rounding_is_monotonic(
        (src, (a, b)) in float_sources().prop_flat_map(|f| (Just(f), pattern_pair(f))),
        dst in any_dst(),
        r in any_rounding(),
        p in monotonic_policy(),
    ) {
        let sign = 1u64 << (width_of(&src) - 1);
        let (a, b) = if signed(&dst) { (a, b) } else { (a & !sign, b & !sign) };
        let (Some(va), Some(vb)) = (value_of(&src, a), value_of(&src, b)) else {
            return Ok(());
        };
        let (lo, hi) = match ext_cmp(&va, &vb) {
            Ordering::Greater => (b, a),
            _ => (a, b),
        };
        let (olo, ohi) = (cvt(src, dst, r, p, lo), cvt(src, dst, r, p, hi));
        let (Some(rlo), Some(rhi)) = (value_of(&dst, olo.bits), value_of(&dst, ohi.bits)) else {
            return Ok(());
        };
        // Stochastic rounding overflows to infinity when it steps up and to the largest
        // finite value when it does not, so past the largest finite value it is not
        // monotonic (65511.95 can give +inf while 1.9e11 gives 65504 in f16): it is checked
        // below the overflow threshold only.
        let overflow = olo.flags.contains(gpucvt_core::Flags::OVERFLOW)
            || ohi.flags.contains(gpucvt_core::Flags::OVERFLOW);
        if overflow && matches!(r.direction, gpucvt_core::Direction::Stochastic { .. }) {
            return Ok(());
        }
        prop_assert!(
            ext_cmp(&rlo, &rhi) != Ordering::Greater,
            "{src} {lo:#x} -> {:#x}, {hi:#x} -> {:#x} ({dst} {r:?} {p:?})",
            olo.bits,
            ohi.bits
        );
    }

    /// rm ≤ x ≤ rp, rz is one of them and no larger in magnitude than x, and all three are x
    /// when x is representable — wherever the destination can hold x's neighbours (within
    /// its range, or beyond it with infinities; non-negative x for formats without sign;
    /// not below the smallest value of a format without zero). The same holds for the
    /// integral roundings rmi, rzi, rpi.
    #[test]
    fn directed_roundings_bracket_the_exact_value(
        src in float_sources(),
        bits in any::<u64>(),
        dst in any_dst(),
        integral in any::<bool>(),
        scale in prop_oneof![Just(0i32), -12i32..=12],
    ) {
        let bits = bits & mask(&src);
        let p = Policy { scale, ..Policy::default() };
        let dec = decode(&src, bits);
        let Val::Num { neg, mag } = &dec.val else { return Ok(()) };
        let mag = scaled(mag, scale);
        let d = dst_model(&dst);
        let x = if *neg { -mag.clone() } else { mag.clone() };
        if !d.float() {
            let lo = if signed(&dst) {
                -(d.max.clone() + pow2(-d.grid_params().0))
            } else {
                Q::zero()
            };
            if x < lo || x > d.max { return Ok(()); }
            // The integral roundings' neighbours are integers, which must be in range too
            // (s2f6's largest value, 1.984375, has 2 above it on that grid).
            if integral && (x.floor() < lo || x.ceil() > d.max) { return Ok(()); }
        } else {
            if *neg && !signed(&dst) { return Ok(()); }
            if d.inf_bits.is_none() && mag > d.max { return Ok(()); }
            // Without infinities the integral neighbours must be in range too: e2m3's
            // largest value, 7.5, has 8 above it, which rpi clamps back to 7.5 (x itself)
            // while rmi gives 7.
            if integral && d.inf_bits.is_none() && mag.ceil() > d.max { return Ok(()); }
            // Below the smallest value of a format without zero (1, for the integral grid)
            // every rounding is forced up.
            if !d.has_zero {
                let smallest = if integral { Q::one() } else { d.table_values().next().unwrap().clone() };
                if mag < smallest { return Ok(()); }
            }
        }
        let (rm, rz, rp) = if integral {
            (Rounding::RMI, Rounding::RZI, Rounding::RPI)
        } else {
            (Rounding::RM, Rounding::RZ, Rounding::RP)
        };
        let get = |r| value_of(&dst, cvt(src, dst, r, p, bits).bits);
        let (Some(vm), Some(vz), Some(vp)) = (get(rm), get(rz), get(rp)) else {
            prop_assert!(false, "NaN result for {src} {bits:#x} -> {dst}");
            unreachable!()
        };
        let xe = Ext::Fin(x.clone());
        prop_assert!(ext_cmp(&vm, &xe) != Ordering::Greater, "rm above x: {src} {bits:#x} -> {dst} {vm:?}");
        prop_assert!(ext_cmp(&vp, &xe) != Ordering::Less, "rp below x: {src} {bits:#x} -> {dst} {vp:?}");
        prop_assert!(vz == vm || vz == vp, "rz is neither rm nor rp: {src} {bits:#x} -> {dst}");
        if let Ext::Fin(z) = &vz {
            prop_assert!(z.abs() <= mag, "rz larger than x: {src} {bits:#x} -> {dst}");
        }
        if vm == xe || vp == xe {
            prop_assert!(vm == xe && vz == xe && vp == xe, "exact value not kept: {src} {bits:#x} -> {dst}");
        }
    }

    /// Stochastic rounding with zero random bits is truncation (`rz`), flags included; with
    /// any random bits it gives `rz`'s result or the one away from zero.
    #[test]
    fn stochastic_rounding_with_zero_bits_is_rz(
        src in prop::sample::select(CATALOGUE.to_vec()),
        bits in any::<u64>(),
        dst in any_dst(),
        width in 1u32..=64,
        random in any::<u64>(),
        pi in 0usize..12,
    ) {
        let bits = bits & mask(&src);
        let p = policies()[pi].policy;
        let rs0 = cvt(src, dst, Rounding::stochastic(0, width), p, bits);
        let rz = cvt(src, dst, Rounding::RZ, p, bits);
        prop_assert_eq!(rs0, rz, "{} {:#x} -> {}", src, bits, dst);
        // Away from zero: down for negative values (a float destination without sign takes
        // the magnitude; integers keep the sign and clamp).
        let negative = (signed(&dst) || !is_float(&dst))
            && matches!(decode(&src, bits).val, Val::Num { neg: true, .. });
        let away = if negative { Rounding::RM } else { Rounding::RP };
        let ra = cvt(src, dst, away, p, bits);
        let rs = cvt(src, dst, Rounding::stochastic(random, width), p, bits);
        prop_assert!(rs.bits == rz.bits || rs.bits == ra.bits,
            "{} {:#x} -> {} rs {:#x}, rz {:#x}, away {:#x}", src, bits, dst, rs.bits, rz.bits, ra.bits);
    }
}

proptest! {
    #![proptest_config(config(20_000))]

    /// The traced conversion (`--explain`) gives the same outcome as the plain one.
    #[test]
    fn traced_and_plain_conversions_agree(
        src in prop::sample::select(CATALOGUE.to_vec()),
        bits in any::<u64>(),
        dst in any_dst(),
        r in any_rounding(),
        pi in 0usize..12,
    ) {
        let bits = bits & mask(&src);
        let c = Conversion::new(src, dst, r, policies()[pi].policy);
        prop_assert_eq!(c.apply_traced(bits).0, c.apply(bits));
    }
}

/// Conversions into fixed-point formats take a 64-bit path when untraced and the 128-bit
/// rounding step when traced: the two agree on every `f16` and `bf16` input.
#[test]
fn traced_and_plain_fixed_point_conversions_agree_on_every_16_bit_input() {
    let roundings = [
        Rounding::RNI,
        Rounding::RZI,
        Rounding::RMI,
        Rounding::RPI,
        Rounding::RN,
        Rounding::RM,
        Rounding::stochastic(0x5a5a_5a5a, 9),
    ];
    for src in [F16, BF16] {
        for dst in [S8, U16, S32, U64, S2F6] {
            for r in roundings {
                for p in policies().iter().step_by(3) {
                    let c = Conversion::new(src, dst, r, p.policy);
                    for bits in 0..1u64 << 16 {
                        assert_eq!(
                            c.apply_traced(bits).0,
                            c.apply(bits),
                            "{src} {bits:#x} -> {dst} {r:?}"
                        );
                    }
                }
            }
        }
    }
}

/// Widening pairs: every value of the first format is a value of the second.
const WIDENING: &[(Format, Format)] = &[
    (F16, F32),
    (F16, F64),
    (BF16, F32),
    (BF16, F64),
    (F32, F64),
    (E4M3, F16),
    (E4M3, BF16),
    (E5M2, F16),
    (E2M1, E4M3),
    (E4M3FNUZ, F16),
    (E5M2FNUZ, BF16),
    (E4M3B11FNUZ, F16),
    (E3M4, F16),
    (E4M3IEEE, F16),
    (E2M1, E4M3FNUZ),
    (E2M3, F16),
    (E3M2, BF16),
    (UE8M0, F32),
    (UE4M3, F16),
    (UE5M3, F32),
    (VF, F16),
    (S2F6, F16),
    (S8, S32),
    (S4, S8),
    (S16, S64),
    (U8, U16),
    (U16, S32),
    (U32, S64),
    (S16, F32),
    (S32, F64),
    (U32, F64),
];

proptest! {
    #![proptest_config(config(50_000))]

    /// A widening conversion is exact (no flags, the same value, the same sign of zero) in
    /// every rounding that is not to an integral value, and converting back gives the
    /// original pattern; NaNs keep their sign and payload both ways under
    /// `NanResult::Payload`.
    #[test]
    fn widening_round_trips(
        pair in prop::sample::select(WIDENING.to_vec()),
        bits in any::<u64>(),
        r1 in non_integral_rounding(),
        r2 in non_integral_rounding(),
    ) {
        let (narrow, wide) = pair;
        let bits = bits & mask(&narrow);
        let p = Policy { nan: NanResult::Payload, ..Policy::default() };
        let up = cvt(narrow, wide, r1, p, bits);
        prop_assert!(up.flags.is_empty(), "{narrow} {bits:#x} -> {wide}: flags {}", up.flags);
        let (a, b) = (decode(&narrow, bits).val, decode(&wide, up.bits).val);
        match (&a, &b) {
            (Val::Nan { neg: n1, .. }, Val::Nan { neg: n2, .. }) => prop_assert_eq!(n1, n2),
            // (The fnuz formats have one zero.)
            (Val::Zero { neg: n1 }, Val::Zero { neg: n2 }) if wide.has_negative_zero() => prop_assert_eq!(n1, n2),
            (Val::Zero { .. }, Val::Zero { .. }) => {}
            _ => prop_assert_eq!(&a, &b, "{} {:#x} -> {} {:#x}", narrow, bits, wide, up.bits),
        }
        let back = cvt(wide, narrow, r2, p, up.bits);
        prop_assert!(back.flags.is_empty(), "{wide} {:#x} -> {narrow}: flags {}", up.bits, back.flags);
        let want = match a {
            // Integers have one zero.
            Val::Zero { .. } if !narrow.has_negative_zero() || !wide.has_negative_zero() => 0,
            _ => bits,
        };
        prop_assert_eq!(back.bits, want, "{} {:#x} -> {} {:#x} -> {:#x}", narrow, bits, wide, up.bits, back.bits);
    }
}

#[test]
fn widening_is_exact_for_every_pattern_of_the_narrow_formats() {
    // Small enough to do exhaustively; the reference value must be kept exactly.
    for &(narrow, wide) in WIDENING.iter().filter(|(n, _)| width_of(n) <= 16) {
        for bits in 0..=mask(&narrow) {
            let up = cvt(narrow, wide, Rounding::RN, Policy::default(), bits);
            let (a, b) = (decode(&narrow, bits).val, decode(&wide, up.bits).val);
            match (&a, &b) {
                (Val::Nan { .. }, Val::Nan { .. }) => {}
                (Val::Zero { .. }, Val::Zero { .. }) => {}
                (Val::Num { neg: n1, mag: m1 }, Val::Num { neg: n2, mag: m2 }) => {
                    assert_eq!(n1, n2, "{narrow} {bits:#x}");
                    assert!(m1 == m2 && m1.is_positive(), "{narrow} {bits:#x} -> {wide}");
                }
                _ => assert_eq!(a, b, "{narrow} {bits:#x} -> {wide} {:#x}", up.bits),
            }
        }
    }
}
