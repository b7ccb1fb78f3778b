//! Every vISA `mov` type pair, with and without `.sat`, under every cr0 rounding mode (and
//! with the float-to-int-uses-RM bit and the denormal bits set), evaluated by gpucvt's vISA
//! dialect against the independent big-rational reference (`gpucvt-reference`) driven by a
//! model of the rules written here from `visa.md` §6 and the documented choices:
//!
//! - int → int: low bits (sign/zero extension by the source); `.sat` clamps the source value;
//! - int → float and float → narrower float: cr0's rounding mode, IEEE overflow; `.sat`
//!   clamps to [0, 1] (NaN and −0 → +0);
//! - float → int: toward zero (cr0's mode with bit 12), NaN → 0, clamped to the range (every
//!   negative, −0 and −Inf → 0 for unsigned destinations), with or without `.sat`;
//! - NaNs are quieted and keep sign and payload; BF → F and same-type moves without `.sat`
//!   are bit copies;
//! - the finalizer's two-step lowerings: DF/Q/UQ → HF through F (double rounding),
//!   DF/Q/UQ → B/UB through W, BF with anything but F through F;
//! - F/DF → Q: a negative input of magnitude in (2^63, 2^64) gives 0x7fff_ffff_ffff_ffff.
//!
//! Inputs: every pattern of sources of at most 16 bits; boundary-dense plus seeded random
//! samples of 32- and 64-bit sources. BOOL (a predicate source) is tested elsewhere.

use gpucvt::core::format::{self, Format};
use gpucvt::core::{IntNan, IntOverflow, NanResult, Policy, Rounding};
use gpucvt::visa::cr0::{Cr0, RoundingMode};
use gpucvt::visa::eval::mov_plan;
use gpucvt::visa::types::VisaType;
use gpucvt_reference::{reference, Rng};

use VisaType::*;

const TYPES: [VisaType; 15] = [Ud, D, Uw, W, Ub, B, Df, F, V, Vf, Uq, Uv, Q, Hf, Bf];

fn fmt(t: VisaType) -> Format {
    match t {
        Ud => format::U32,
        D => format::S32,
        Uw => format::U16,
        W => format::S16,
        Ub => format::U8,
        B => format::S8,
        Df => format::F64,
        F => format::F32,
        V => format::S4,
        Vf => format::VF,
        Uq => format::U64,
        Uv => format::U4,
        Q => format::S64,
        Hf => format::F16,
        Bf => format::BF16,
        Bool => format::U1,
    }
}

fn float(t: VisaType) -> bool {
    matches!(t, Df | F | Hf | Bf | Vf)
}

/// One step: a conversion through the reference.
#[derive(Clone, Copy)]
struct Step {
    src: Format,
    dst: Format,
    r: Rounding,
    p: Policy,
}

fn float_rounding(cr0: Cr0) -> Rounding {
    match cr0.rounding_mode() {
        RoundingMode::Rne => Rounding::RN,
        RoundingMode::Ru => Rounding::RP,
        RoundingMode::Rd => Rounding::RM,
        RoundingMode::Rtz => Rounding::RZ,
    }
}

fn int_rounding(cr0: Cr0) -> Rounding {
    if cr0.float_to_int_uses_rm() {
        Rounding {
            integral: true,
            ..float_rounding(cr0)
        }
    } else {
        Rounding::RZI
    }
}

/// A direct conversion between two non-BF types.
fn direct(dst: VisaType, src: VisaType, sat: bool, cr0: Cr0) -> Step {
    let (s, d) = (fmt(src), fmt(dst));
    let mut p = Policy {
        sat,
        nan: NanResult::Payload,
        int_nan: IntNan::Zero,
        ..Policy::default()
    };
    let r = if float(dst) {
        float_rounding(cr0)
    } else if float(src) {
        p.int_overflow = IntOverflow::Clamp;
        int_rounding(cr0)
    } else {
        p.int_overflow = IntOverflow::Wrap;
        Rounding::RZ
    };
    Step {
        src: s,
        dst: d,
        r,
        p,
    }
}

/// The steps the finalizer emits for `mov[.sat] dst <- src` (§6.1; `.sat` on the last step).
fn steps(dst: VisaType, src: VisaType, sat: bool, cr0: Cr0) -> Vec<Step> {
    let two = |mid: VisaType| {
        // `.sat` is copied to both movs for B/UB via W, and otherwise stays on the second.
        let first_sat = sat && mid == W;
        vec![direct(mid, src, first_sat, cr0), direct(dst, mid, sat, cr0)]
    };
    match (dst, src) {
        (Hf, Df | Q | Uq) => two(F),
        (B | Ub, Df | Q | Uq) => two(W),
        (Bf, s) if s != F && s != Bf => two(F),
        (d, Bf) if d != F && d != Bf => two(F),
        _ => vec![direct(dst, src, sat, cr0)],
    }
}

fn quiet(f: &Format, bits: u64) -> u64 {
    // Set the IEEE quiet bit of a NaN (the top mantissa bit).
    let l = match f.layout {
        gpucvt::core::format::Layout::Float(l) => l,
        _ => return bits,
    };
    if f.decode(bits).is_nan() && l.man_bits > 0 && f.has_infinity() {
        bits | 1 << (l.man_bits + l.pad_bits - 1)
    } else {
        bits
    }
}

fn model(dst: VisaType, src: VisaType, sat: bool, cr0: Cr0, bits: u64) -> u64 {
    let s = fmt(src);
    // Bit copies: same type without .sat, and BF → F.
    if (dst == src && !sat) || (dst == F && src == Bf && !sat) {
        return if dst == F {
            bits << (16 * (src == Bf) as u32)
        } else {
            bits
        };
    }
    if dst == F && src == Bf {
        // .sat moves to an F → F mov after the shift.
        return reference(
            &format::F32,
            bits << 16,
            &format::F32,
            Rounding::RN,
            &Policy {
                sat: true,
                nan: NanResult::Payload,
                ..Policy::default()
            },
        )
        .bits;
    }
    let mut cur = bits;
    let mut cur_fmt = s;
    for st in steps(dst, src, sat, cr0) {
        let input = if st.src.is_float() && st.dst.is_float() {
            quiet(&cur_fmt, cur)
        } else {
            cur
        };
        // The 64-bit quirk (§6.3): F/DF → Q, negative with magnitude in (2^63, 2^64).
        let x = match st.src {
            f if f == format::F32 => Some(f32::from_bits(cur as u32) as f64),
            f if f == format::F64 => Some(f64::from_bits(cur)),
            _ => None,
        };
        if let (true, Some(x)) = (st.dst == format::S64, x) {
            if x < -(2f64.powi(63)) && x > -(2f64.powi(64)) {
                cur = 0x7fff_ffff_ffff_ffff;
                cur_fmt = st.dst;
                continue;
            }
        }
        cur = reference(&st.src, input, &st.dst, st.r, &st.p).bits;
        cur_fmt = st.dst;
    }
    cur
}

fn inputs(t: VisaType, rng: &mut Rng) -> Vec<u64> {
    let f = fmt(t);
    let w = f.width();
    if w <= 16 {
        return (0..(1u64 << w)).collect();
    }
    let mut v = vec![0, 1, f.mask(), f.mask() >> 1, (f.mask() >> 1) + 1];
    if f.is_float() {
        let m = if w == 64 { 52 } else { 23 };
        let e_max = if w == 64 { 2047u64 } else { 255 };
        for e in (0..=e_max).filter(|e| {
            e % 7 == 0 || *e < 4 || *e > e_max - 4 || (e_max / 2 - 70..e_max / 2 + 70).contains(e)
        }) {
            for mm in [
                0u64,
                1,
                (1 << m) - 1,
                1 << (m - 1),
                (1 << (m - 1)) | 1,
                1 << (m - 11),
                3 << (m - 11),
                rng.next_u64() & ((1 << m) - 1),
            ] {
                let b = (e << m) | (mm & ((1 << m) - 1));
                v.push(b);
                v.push(b | 1 << (w - 1));
            }
        }
    } else {
        for k in 0..w {
            let b = 1u64 << k;
            v.extend([b, b - 1, b + 1, b.wrapping_neg() & f.mask(), !b & f.mask()]);
        }
    }
    for _ in 0..4000 {
        v.push(rng.next_u64() & f.mask());
    }
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn every_mov_pair_agrees_with_the_reference_model() {
    let mut cr0s = Vec::new();
    for mode in RoundingMode::ALL {
        cr0s.push(Cr0::KERNEL_ENTRY.with_rounding_mode(mode));
    }
    // Bit 12 (float → int with the rounding mode) and the denormal bits.
    cr0s.push(Cr0::from_raw(0x1000 | 0x20));
    cr0s.push(Cr0::from_raw(0x1000 | 0x10));
    cr0s.push(Cr0::from_raw(Cr0::OPENCL.raw() | 0x30));
    let mut rng = Rng(0x05ee_d0f0_004d);
    let mut failures = Vec::new();
    let mut count = 0u64;
    for src in TYPES {
        let xs = inputs(src, &mut rng);
        for dst in TYPES {
            if matches!(dst, V | Uv | Vf) {
                continue; // packed types are immediates: never destinations
            }
            for sat in [false, true] {
                for &cr0 in &cr0s {
                    let plan = match mov_plan(dst, src, sat, cr0) {
                        Ok(p) => p,
                        Err(e) => {
                            failures.push(format!(
                                "mov{} {dst:?} <- {src:?}: no plan: {e}",
                                if sat { ".sat" } else { "" }
                            ));
                            continue;
                        }
                    };
                    // Float sources under the non-default modes: a sample is enough.
                    let step = if xs.len() > 4096 && cr0 != cr0s[0] {
                        16
                    } else {
                        1
                    };
                    for &x in xs.iter().step_by(step) {
                        let got = plan.eval(x).bits;
                        let want = model(dst, src, sat, cr0, x);
                        count += 1;
                        if got != want && failures.len() < 40 {
                            failures.push(format!(
                                "mov{} {} <- {} cr0={:#x} src={x:#x}: gpucvt {got:#x}, model {want:#x}",
                                if sat { ".sat" } else { "" },
                                dst.name(),
                                src.name(),
                                cr0.raw()
                            ));
                        }
                    }
                }
            }
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} disagreements in {count} evaluations",
        failures.len()
    );
}

/// The vectors of `visa.md` §6, by hand.
#[test]
fn vectors_from_the_notes() {
    let ev = |d, s, sat, cr0: Cr0, x: u64| mov_plan(d, s, sat, cr0).unwrap().eval(x).bits;
    let c = Cr0::KERNEL_ENTRY;
    assert_eq!(ev(B, Df, false, c, 300.0f64.to_bits()), 0x2c);
    assert_eq!(ev(B, Df, true, c, 300.0f64.to_bits()), 0x7f);
    assert_eq!(ev(Ud, F, false, c, (-0.0f32).to_bits() as u64), 0);
    assert_eq!(ev(Ud, F, false, c, f32::NEG_INFINITY.to_bits() as u64), 0);
    assert_eq!(ev(Ud, F, false, c, (-1.5f32).to_bits() as u64), 0);
    assert_eq!(ev(D, F, false, c, f32::NAN.to_bits() as u64), 0);
    assert_eq!(ev(F, D, true, c, 5), 0x3f80_0000);
    // RTZ reproduces the 2022 seed's truncation.
    let rtz = c.with_rounding_mode(RoundingMode::Rtz);
    assert_eq!(ev(Hf, F, false, rtz, 0x3f80_1fff), 0x3c00);
    assert_eq!(ev(Hf, F, false, c, 0x3f80_1fff), 0x3c01);
}
