//! vISA MOV semantics: the packed immediates value by value, and hand-checked vectors for
//! every rule of `visa.md` §6 (expected values computed by hand or with host arithmetic on
//! exactly representable values, never with the engine).

use gpucvt::core::{format, Conversion, Flags, Policy, Rounding};
use gpucvt::visa::cr0::{Cr0, RoundingMode};
use gpucvt::visa::eval::{
    eval_mov, mov_plan, mov_plan_with, rule_text, AltMode, BfPairs, Denormals, DfToUb, MovOptions,
    NanRule, QNegativeOverflow, QToFloat, SatNegativeZero, SmallInt,
};
use gpucvt::visa::types::{unpack, unpack_uv, unpack_v, unpack_vf, VisaType, VisaType::*};

/// `visa.md` §4: all 128 non-negative VF values, row = exponent field, column = mantissa.
const VF_TABLE: &str = "
| 0 | **0.0** | 0.1328125 | 0.140625 | 0.1484375 | 0.15625 | 0.1640625 | 0.171875 | 0.1796875 | 0.1875 | 0.1953125 | 0.203125 | 0.2109375 | 0.21875 | 0.2265625 | 0.234375 | 0.2421875 |
| 1 | 0.25 | 0.265625 | 0.28125 | 0.296875 | 0.3125 | 0.328125 | 0.34375 | 0.359375 | 0.375 | 0.390625 | 0.40625 | 0.421875 | 0.4375 | 0.453125 | 0.46875 | 0.484375 |
| 2 | 0.5 | 0.53125 | 0.5625 | 0.59375 | 0.625 | 0.65625 | 0.6875 | 0.71875 | 0.75 | 0.78125 | 0.8125 | 0.84375 | 0.875 | 0.90625 | 0.9375 | 0.96875 |
| 3 | 1.0 | 1.0625 | 1.125 | 1.1875 | 1.25 | 1.3125 | 1.375 | 1.4375 | 1.5 | 1.5625 | 1.625 | 1.6875 | 1.75 | 1.8125 | 1.875 | 1.9375 |
| 4 | 2.0 | 2.125 | 2.25 | 2.375 | 2.5 | 2.625 | 2.75 | 2.875 | 3.0 | 3.125 | 3.25 | 3.375 | 3.5 | 3.625 | 3.75 | 3.875 |
| 5 | 4.0 | 4.25 | 4.5 | 4.75 | 5.0 | 5.25 | 5.5 | 5.75 | 6.0 | 6.25 | 6.5 | 6.75 | 7.0 | 7.25 | 7.5 | 7.75 |
| 6 | 8.0 | 8.5 | 9.0 | 9.5 | 10.0 | 10.5 | 11.0 | 11.5 | 12.0 | 12.5 | 13.0 | 13.5 | 14.0 | 14.5 | 15.0 | 15.5 |
| 7 | 16 | 17 | 18 | 19 | 20 | 21 | 22 | 23 | 24 | 25 | 26 | 27 | 28 | 29 | 30 | 31 |
";

/// The table as 256 `f64` values indexed by the VF byte (negatives mirror with bit 7).
fn vf_table() -> Vec<f64> {
    let mut pos = vec![f64::NAN; 128];
    let mut rows = 0;
    for line in VF_TABLE.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(cells.len(), 17, "{line}");
        let e: usize = cells[0].parse().unwrap();
        for (m, c) in cells[1..].iter().enumerate() {
            pos[e * 16 + m] = c.trim_matches('*').parse().unwrap();
        }
        rows += 1;
    }
    assert_eq!(rows, 8);
    let mut all = pos.clone();
    all.extend(pos.iter().map(|v| -v));
    all
}

const ENTRY: Cr0 = Cr0::KERNEL_ENTRY;
const OCL: Cr0 = Cr0::OPENCL;

fn ev(dst: VisaType, src: VisaType, sat: bool, cr0: Cr0, bits: u64) -> u64 {
    eval_mov(dst, src, sat, cr0, bits).unwrap().0
}

fn evo(dst: VisaType, src: VisaType, sat: bool, cr0: Cr0, o: MovOptions, bits: u64) -> u64 {
    mov_plan_with(dst, src, sat, cr0, &o)
        .unwrap()
        .eval(bits)
        .bits
}

fn rm(mode: RoundingMode) -> Cr0 {
    OCL.with_rounding_mode(mode)
}

fn f(x: f32) -> u64 {
    x.to_bits() as u64
}

fn d(x: f64) -> u64 {
    x.to_bits()
}

#[test]
fn vf_every_byte_matches_the_table() {
    let table = vf_table();
    for byte in 0..=255u32 {
        let want = table[byte as usize];
        // Every table value is exact in f32; -0.0 for 0x80.
        let want32 = (want as f32).to_bits();
        let want64 = want.to_bits();
        // The packed decode, in every element position.
        for pos in 0..4 {
            assert_eq!(
                unpack_vf(byte << (8 * pos))[pos],
                want32,
                "VF {byte:#04x} at element {pos}"
            );
        }
        // The same through mov: VF -> F, DF, HF (exact), and the core's vf format.
        assert_eq!(ev(F, Vf, false, OCL, byte as u64), want32 as u64);
        assert_eq!(ev(Df, Vf, false, OCL, byte as u64), want64);
        let want16 = half_bits(want);
        assert_eq!(
            ev(Hf, Vf, false, OCL, byte as u64),
            want16,
            "VF {byte:#x} -> HF"
        );
        assert_eq!(
            format::VF.decode(byte as u64).to_f64_lossy().to_bits(),
            want64
        );
    }
    // The seed's range is wrong: 0.125 is not a VF value, 0.1328125 is the smallest.
    assert!(!table.contains(&0.125));
    assert_eq!(table[1], 0.1328125);
    assert_eq!(table[0x80].to_bits(), (-0.0f64).to_bits());
}

/// binary16 bits of a value exactly representable in binary16 (normal range only).
fn half_bits(x: f64) -> u64 {
    if x == 0.0 {
        return if x.is_sign_negative() { 0x8000 } else { 0 };
    }
    let sign = if x < 0.0 { 0x8000 } else { 0 };
    let a = x.abs();
    let e = a.log2().floor() as i32;
    let m = a / 2f64.powi(e) - 1.0;
    let man = (m * 1024.0) as u64;
    assert_eq!(man as f64, m * 1024.0, "not exact in binary16");
    sign | (((e + 15) as u64) << 10) | man
}

#[test]
fn v_and_uv_every_nibble() {
    for n in 0..16u32 {
        let signed = if n >= 8 { n as i32 - 16 } else { n as i32 };
        for pos in 0..8 {
            let dword = n << (4 * pos);
            let v = unpack_v(dword);
            let uv = unpack_uv(dword);
            for (i, (&a, &b)) in v.iter().zip(uv.iter()).enumerate() {
                let (wa, wb) = if i == pos { (signed, n) } else { (0, 0) };
                assert_eq!(a as i32, wa, "V {dword:#010x} element {i}");
                assert_eq!(b as u32, wb, "UV {dword:#010x} element {i}");
            }
            assert_eq!(unpack(V, dword as u64)[pos], n as u64);
        }
        // Elements convert as W (V) and UW (UV) values.
        assert_eq!(
            ev(W, V, false, OCL, n as u64),
            (signed as i16 as u16) as u64
        );
        assert_eq!(ev(D, V, false, OCL, n as u64), (signed as u32) as u64);
        assert_eq!(ev(Uw, Uv, false, OCL, n as u64), n as u64);
        assert_eq!(ev(F, V, false, OCL, n as u64), f(signed as f32));
        assert_eq!(ev(F, Uv, false, OCL, n as u64), f(n as f32));
        assert_eq!(ev(Df, V, false, OCL, n as u64), d(signed as f64));
        // .sat into UB clamps negative elements to 0.
        assert_eq!(ev(Ub, V, true, OCL, n as u64), signed.max(0) as u64);
    }
    assert_eq!(unpack_v(0x7654_3210), [0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn df_to_byte_goes_through_w() {
    // visa.md §6.1: DF 300.0 -> W 300 (0x012C) -> B keeps the low byte.
    assert_eq!(ev(B, Df, false, ENTRY, d(300.0)), 0x2c);
    assert_eq!(ev(Ub, Df, false, ENTRY, d(300.0)), 0x2c);
    // .sat is copied to both movs: the right saturation.
    assert_eq!(ev(B, Df, true, ENTRY, d(300.0)), 0x7f);
    assert_eq!(ev(Ub, Df, true, ENTRY, d(300.0)), 0xff);
    assert_eq!(ev(Ub, Df, true, ENTRY, d(-5.0)), 0x00);
    // Beyond i16: W saturates, then the low byte.
    assert_eq!(ev(B, Df, false, ENTRY, d(1e10)), 0xff); // 0x7FFF
    assert_eq!(ev(B, Df, false, ENTRY, d(-1e10)), 0x00); // 0x8000
    assert_eq!(ev(B, Df, false, ENTRY, d(f64::INFINITY)), 0xff);
    assert_eq!(ev(B, Df, false, ENTRY, d(-200.7)), 0x38); // -200 = 0xFF38
    assert_eq!(ev(B, Df, false, ENTRY, d(f64::NAN)), 0);
    // §11 #1: DF -5.0 -> UB gives 0xFB by default, 0 under the unsigned rule.
    assert_eq!(ev(Ub, Df, false, ENTRY, d(-5.0)), 0xfb);
    let o = MovOptions {
        df_to_ub: DfToUb::UnsignedRule,
        ..MovOptions::default()
    };
    assert_eq!(evo(Ub, Df, false, ENTRY, o, d(-5.0)), 0);
    assert_eq!(evo(Ub, Df, false, ENTRY, o, d(-0.0)), 0);
    assert_eq!(evo(Ub, Df, false, ENTRY, o, d(300.0)), 0x2c);
    // Q/UQ -> B/UB through W: truncation, as a direct move.
    assert_eq!(ev(B, Q, false, ENTRY, 0x1234_5678_9abc_def0), 0xf0);
    assert_eq!(ev(B, Uq, true, ENTRY, 200), 0x7f);
    assert_eq!(ev(Ub, Q, true, ENTRY, (-200i64) as u64), 0);
    // F -> B is direct: the destination range (§11 #7) ...
    assert_eq!(ev(B, F, false, ENTRY, f(300.0)), 0x7f);
    assert_eq!(ev(Ub, F, false, ENTRY, f(300.0)), 0xff);
    assert_eq!(ev(W, F, false, ENTRY, f(1e6)), 0x7fff);
    // ... or, switched, D's range and then the low bits.
    let o = MovOptions {
        small_int: SmallInt::ViaD,
        ..MovOptions::default()
    };
    assert_eq!(evo(B, F, false, ENTRY, o, f(300.0)), 0x2c);
    assert_eq!(evo(W, F, false, ENTRY, o, f(1e6)), 0x4240); // 1000000 = 0xF4240
    assert_eq!(evo(B, F, true, ENTRY, o, f(300.0)), 0x7f);
}

#[test]
fn float_to_unsigned_negative_rows() {
    let negatives = [
        f(-0.0),
        0x8000_0001, // -denormal
        f(-1e-30),
        f(-0.5),
        f(-1.5),
        f(-3e9),
        f(f32::NEG_INFINITY),
    ];
    for t in [Ub, Uw, Ud, Uq] {
        for &x in &negatives {
            assert_eq!(ev(t, F, false, ENTRY, x), 0, "{t} <- F {x:#x}");
            assert_eq!(ev(t, F, true, ENTRY, x), 0, "{t} <- F {x:#x} sat");
        }
        // RD with cr0 bit 12 rounds -0.3 to -1: still 0.
        let rd = Cr0::from_raw(0x1020);
        assert_eq!(ev(t, F, false, rd, f(-0.3)), 0);
        // NaN of either sign -> 0; +inf and too large -> max.
        let max = if t == Uq {
            u64::MAX
        } else {
            (1u64 << (t.size() * 8)) - 1
        };
        assert_eq!(ev(t, F, false, ENTRY, 0x7fc0_0000), 0);
        assert_eq!(ev(t, F, false, ENTRY, 0xffc0_0001), 0);
        assert_eq!(ev(t, F, false, ENTRY, f(f32::INFINITY)), max);
        assert_eq!(ev(t, F, false, ENTRY, f(3e38)), max);
        assert_eq!(ev(t, Hf, false, ENTRY, 0x7c00), max); // HF +inf
        assert_eq!(ev(t, Hf, false, ENTRY, 0xfc00), 0); // HF -inf
        assert_eq!(ev(t, Df, false, ENTRY, d(-0.0)), 0);
    }
    // HF +inf -> UQ is all ones (choice hf-inf-to-uq).
    assert_eq!(ev(Uq, Hf, false, ENTRY, 0x7c00), u64::MAX);
    assert_eq!(ev(Ud, F, false, ENTRY, f(4294967040.0)), 4294967040);
    assert_eq!(
        ev(Uq, Df, false, ENTRY, d(18446744073709549568.0)),
        18446744073709549568
    );
    assert_eq!(
        ev(Uq, Df, false, ENTRY, d(18446744073709551616.0)),
        u64::MAX
    );
}

#[test]
fn float_to_signed() {
    let c = ENTRY;
    assert_eq!(ev(D, F, false, c, f(-2.7)), (-2i32) as u32 as u64);
    assert_eq!(ev(D, F, false, c, f(2.7)), 2);
    assert_eq!(ev(D, F, false, c, f(f32::INFINITY)), 0x7fff_ffff);
    assert_eq!(ev(D, F, false, c, f(f32::NEG_INFINITY)), 0x8000_0000);
    assert_eq!(ev(D, F, false, c, f(3e9)), 0x7fff_ffff);
    assert_eq!(ev(D, F, false, c, f(-3e9)), 0x8000_0000);
    assert_eq!(ev(D, F, false, c, 0x7fc0_0000), 0);
    assert_eq!(ev(D, F, false, c, 0xff80_0001), 0);
    assert_eq!(ev(W, Hf, false, c, 0x7bff), 0x7fff); // 65504 -> 32767
    assert_eq!(ev(B, Hf, false, c, 0xd800), 0x80); // -128.0
    assert_eq!(ev(B, Hf, false, c, 0xd808), 0x80); // -129.0 -> -128
                                                   // cr0 bit 12: float -> int uses RM.
    let bit12 = |m| {
        Cr0::KERNEL_ENTRY
            .with_rounding_mode(m)
            .with_float_to_int_rm(true)
    };
    assert_eq!(
        ev(D, F, false, bit12(RoundingMode::Rne), f(-2.7)),
        (-3i32) as u32 as u64
    );
    assert_eq!(ev(D, F, false, bit12(RoundingMode::Rne), f(2.5)), 2);
    assert_eq!(ev(D, F, false, bit12(RoundingMode::Rne), f(3.5)), 4);
    assert_eq!(ev(D, F, false, bit12(RoundingMode::Ru), f(2.1)), 3);
    assert_eq!(
        ev(D, F, false, bit12(RoundingMode::Rd), f(-2.1)),
        (-3i32) as u32 as u64
    );
    assert_eq!(
        ev(D, F, false, bit12(RoundingMode::Rtz), f(-2.9)),
        (-2i32) as u32 as u64
    );
    // Without bit 12 the mode does not matter.
    assert_eq!(ev(D, F, false, rm(RoundingMode::Ru), f(2.1)), 2);
    // .sat changes nothing for a signed integer destination.
    assert_eq!(ev(B, F, true, c, f(-300.0)), 0x80);
}

#[test]
fn q_negative_overflow_quirk() {
    let c = ENTRY;
    let band = d(-(9223372036854775808.0 + 2048.0)); // -(2^63 + 2^11)
    assert_eq!(ev(Q, Df, false, c, band), 0x7fff_ffff_ffff_ffff);
    assert_eq!(ev(Q, Df, true, c, band), 0x7fff_ffff_ffff_ffff);
    assert_eq!(
        ev(Q, F, false, c, f(-1.5 * 9223372036854775808.0)),
        0x7fff_ffff_ffff_ffff
    );
    assert_eq!(
        ev(Q, Df, false, c, d(-9223372036854775808.0)),
        0x8000_0000_0000_0000
    );
    assert_eq!(
        ev(Q, Df, false, c, d(-18446744073709551616.0)),
        0x8000_0000_0000_0000
    );
    assert_eq!(
        ev(Q, Df, false, c, d(f64::NEG_INFINITY)),
        0x8000_0000_0000_0000
    );
    assert_eq!(
        ev(Q, Df, false, c, d(9223372036854775808.0)),
        0x7fff_ffff_ffff_ffff
    );
    assert_eq!(ev(Q, Df, false, c, d(-12.9)), (-12i64) as u64);
    assert_eq!(ev(Q, Hf, false, c, 0xfc00), 0x8000_0000_0000_0000);
    assert_eq!(ev(Q, Hf, false, c, 0x7c00), 0x7fff_ffff_ffff_ffff);
    assert_eq!(ev(Q, Hf, false, c, 0xfbff), (-65504i64) as u64);
    assert_eq!(ev(Q, Hf, false, c, 0x7e00), 0);
    // D is not affected.
    assert_eq!(ev(D, Df, false, c, band), 0x8000_0000);
    let o = MovOptions {
        q_negative_overflow: QNegativeOverflow::Imin,
        ..MovOptions::default()
    };
    assert_eq!(evo(Q, Df, false, c, o, band), 0x8000_0000_0000_0000);
}

#[test]
fn narrowing_floats_round_with_cr0() {
    // F -> HF near the top: 65519 and 65520.
    let x65519 = f(65519.0);
    let x65520 = f(65520.0);
    assert_eq!(ev(Hf, F, false, OCL, x65519), 0x7bff);
    assert_eq!(ev(Hf, F, false, OCL, x65520), 0x7c00);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Rtz), x65520), 0x7bff);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Rtz), f(1e10)), 0x7bff);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Ru), f(65504.5)), 0x7c00);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Rd), f(65504.5)), 0x7bff);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Rd), f(-65504.5)), 0xfc00);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Ru), f(-65504.5)), 0xfbff);
    assert_eq!(ev(Hf, F, false, OCL, f(f32::NEG_INFINITY)), 0xfc00);
    // 1 + 2^-11 (a tie): RNE to even 1.0, RU up; 1 + 3*2^-11: RNE up to even.
    let tie = 0x3f80_1000;
    assert_eq!(ev(Hf, F, false, OCL, tie), 0x3c00);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Ru), tie), 0x3c01);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Rd), tie), 0x3c00);
    assert_eq!(ev(Hf, F, false, OCL, 0x3f80_3000), 0x3c02);
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Rtz), 0x3f80_3000), 0x3c01);
    // The 2022 seed's truncation: RM = RTZ.
    assert_eq!(ev(Hf, F, false, rm(RoundingMode::Rtz), f(1.9999)), 0x3fff);
    assert_eq!(ev(F, Df, false, rm(RoundingMode::Rtz), d(0.1)), 0x3dcc_cccc);
    assert_eq!(ev(F, Df, false, OCL, d(0.1)), 0x3dcc_cccd);
    // DF -> F overflow.
    assert_eq!(ev(F, Df, false, OCL, d(1e39)), 0x7f80_0000);
    assert_eq!(
        ev(F, Df, false, rm(RoundingMode::Rtz), d(1e39)),
        0x7f7f_ffff
    );
    assert_eq!(ev(F, Df, false, rm(RoundingMode::Rd), d(1e39)), 0x7f7f_ffff);
    assert_eq!(
        ev(F, Df, false, rm(RoundingMode::Rd), d(-1e39)),
        0xff80_0000
    );
}

#[test]
fn df_to_hf_rounds_twice() {
    let direct = |bits: u64| {
        Conversion::new(format::F64, format::F16, Rounding::RN, Policy::default())
            .apply(bits)
            .bits
    };
    // 1 + 2^-11 + 2^-40: just above an HF tie. DF -> F drops 2^-40 (exact tie), then ties to
    // even: 1.0. A single rounding would give 1 + 2^-10.
    let up = d(1.0 + 2f64.powi(-11) + 2f64.powi(-40));
    assert_eq!(ev(Hf, Df, false, OCL, up), 0x3c00);
    assert_eq!(direct(up), 0x3c01);
    // 1 + 3*2^-11 - 2^-40: just below a tie. F rounds up to the tie, which goes to even 0x3c02.
    let down = d(1.0 + 3.0 * 2f64.powi(-11) - 2f64.powi(-40));
    assert_eq!(ev(Hf, Df, false, OCL, down), 0x3c02);
    assert_eq!(direct(down), 0x3c01);
    // RTZ twice is RTZ once.
    assert_eq!(ev(Hf, Df, false, rm(RoundingMode::Rtz), down), 0x3c01);
    // .sat applies on the second mov: NaN -> 0, 2.0 -> 1.0.
    assert_eq!(ev(Hf, Df, true, OCL, d(f64::NAN)), 0);
    assert_eq!(ev(Hf, Df, true, OCL, d(2.0)), 0x3c00);
    // Q -> HF goes through F too.
    assert_eq!(ev(Hf, Q, false, OCL, 65519), 0x7bff);
    assert_eq!(ev(Hf, Q, false, OCL, 65520), 0x7c00);
    assert_eq!(ev(Hf, Uq, false, rm(RoundingMode::Rtz), u64::MAX), 0x7bff);
    assert_eq!(mov_plan(Hf, Q, false, OCL).unwrap().steps.len(), 2);
    // D -> HF rounds once.
    assert_eq!(mov_plan(Hf, D, false, OCL).unwrap().steps.len(), 1);
    assert_eq!(ev(Hf, D, false, OCL, 2049), 0x6800);
    assert_eq!(ev(Hf, D, false, rm(RoundingMode::Ru), 2049), 0x6801);
    assert_eq!(ev(Hf, D, false, OCL, 65520), 0x7c00);
}

#[test]
fn subnormals_are_kept() {
    // F 2^-24 -> HF 0x0001 whatever cr0's denormal bits say (choice mov-keeps-denormals).
    for c in [ENTRY, OCL] {
        assert_eq!(ev(Hf, F, false, c, f(2f32.powi(-24))), 0x0001);
        assert_eq!(ev(Hf, F, false, c, f(3.0 * 2f32.powi(-26))), 0x0001);
        assert_eq!(ev(Hf, F, false, c, f(2f32.powi(-25))), 0x0000); // tie -> even 0
        assert_eq!(ev(F, Hf, false, c, 0x0001), f(2f32.powi(-24)));
        assert_eq!(ev(F, Hf, false, c, 0x83ff), f(-1023.0 * 2f32.powi(-24)));
        assert_eq!(ev(Df, F, false, c, 1), d(2f64.powi(-149)));
        assert_eq!(ev(F, F, false, c, 0x8000_0001), 0x8000_0001);
    }
    // The seed's rows: F or DF denormals -> ±0 in HF/F under RNE and RTZ; ± min under RU/RD.
    assert_eq!(ev(Hf, F, false, OCL, 0x8000_0001), 0x8000);
    assert_eq!(ev(F, Df, false, rm(RoundingMode::Rtz), 1), 0);
    assert_eq!(ev(F, Df, false, rm(RoundingMode::Ru), 1), 1);
    assert_eq!(
        ev(F, Df, false, rm(RoundingMode::Rd), 0x8000_0000_0000_0001),
        0x8000_0001
    );
    // Switched: honour cr0's bits (entry value: everything flushed).
    let o = MovOptions {
        denormals: Denormals::HonourCr0,
        ..MovOptions::default()
    };
    assert_eq!(evo(Hf, F, false, ENTRY, o, f(2f32.powi(-24))), 0);
    assert_eq!(evo(Hf, F, false, OCL, o, f(2f32.powi(-24))), 1);
    assert_eq!(evo(F, Hf, false, ENTRY, o, 0x8001), 0x8000_0000);
    assert_eq!(evo(F, F, false, ENTRY, o, 1), 1); // raw copy keeps it
}

#[test]
fn f_and_bf() {
    // F -> BF with RM.
    assert_eq!(ev(Bf, F, false, OCL, 0x3f80_8000), 0x3f80); // tie -> even
    assert_eq!(ev(Bf, F, false, OCL, 0x3f81_8000), 0x3f82);
    assert_eq!(ev(Bf, F, false, OCL, 0x3f80_8001), 0x3f81);
    assert_eq!(ev(Bf, F, false, rm(RoundingMode::Rtz), 0x3f81_ffff), 0x3f81);
    assert_eq!(ev(Bf, F, false, rm(RoundingMode::Ru), 0x3f80_0001), 0x3f81);
    assert_eq!(ev(Bf, F, false, OCL, 0x7f7f_ffff), 0x7f80); // overflow -> inf
    assert_eq!(ev(Bf, F, false, rm(RoundingMode::Rtz), 0x7f7f_ffff), 0x7f7f);
    assert_eq!(ev(Bf, F, false, OCL, 0x0000_8001), 0x0001); // subnormal kept
                                                            // NaN: quieted, sign and top payload bits kept.
    assert_eq!(ev(Bf, F, false, OCL, 0x7fa0_0000), 0x7fe0);
    assert_eq!(ev(Bf, F, false, OCL, 0xff80_0001), 0xffc0);
    // BF -> F: a shift, NaNs kept exactly (sNaN too), subnormals exact.
    assert_eq!(ev(F, Bf, false, OCL, 0x7fa0), 0x7fa0_0000);
    assert_eq!(ev(F, Bf, false, OCL, 0x0001), 0x0001_0000);
    assert_eq!(ev(F, Bf, false, OCL, 0xc0a0), 0xc0a0_0000);
    // BF -> F with .sat: the sat moves to an F -> F mov.
    assert_eq!(ev(F, Bf, true, OCL, 0x4000), 0x3f80_0000);
    assert_eq!(ev(F, Bf, true, OCL, 0x7fa0), 0);
    assert_eq!(ev(Bf, F, true, OCL, f(-3.0)), 0);
    assert_eq!(ev(Bf, F, true, OCL, f(0.5)), 0x3f00);
    // BF -> BF is a copy.
    assert_eq!(ev(Bf, Bf, false, OCL, 0x7f81), 0x7f81);
    // BF with other types goes through F (may round twice).
    let x = (1u64 << 24) + (1 << 16) + 1; // D -> F ties to 2^24 + 2^16, then BF ties to even
    assert_eq!(ev(Bf, D, false, OCL, x), 0x4b80);
    let direct = Conversion::new(format::S32, format::BF16, Rounding::RN, Policy::default());
    assert_eq!(direct.apply(x).bits, 0x4b81);
    assert_eq!(ev(D, Bf, false, OCL, 0x4b80), 1 << 24);
    assert_eq!(ev(Hf, Bf, false, OCL, 0x3f80), 0x3c00);
    assert_eq!(ev(Hf, Bf, false, OCL, 0x4780), 0x7c00);
    assert_eq!(ev(Bf, Hf, false, OCL, 0x3c01), 0x3f80);
    assert_eq!(ev(Df, Bf, false, OCL, 0x3f80), d(1.0));
    assert_eq!(ev(Ub, Bf, false, OCL, 0xbf80), 0);
    let o = MovOptions {
        bf_pairs: BfPairs::Reject,
        ..MovOptions::default()
    };
    assert!(mov_plan_with(Bf, D, false, OCL, &o).is_err());
    assert!(mov_plan_with(D, Bf, false, OCL, &o).is_err());
}

#[test]
fn nan_results() {
    // DF -> F: quiet, sign and top payload bits.
    assert_eq!(ev(F, Df, false, OCL, 0x7ff0_0000_0000_0001), 0x7fc0_0000);
    assert_eq!(ev(F, Df, false, OCL, 0xfff8_0000_0000_0000), 0xffc0_0000);
    assert_eq!(ev(F, Df, false, OCL, 0x7ff4_0000_0000_0000), 0x7fe0_0000);
    assert_eq!(ev(Hf, F, false, OCL, 0x7fa0_0000), 0x7f00);
    assert_eq!(ev(F, Hf, false, OCL, 0x7d00), 0x7fa0_0000 | 0x0040_0000);
    assert_eq!(ev(Df, F, false, OCL, 0xffa0_0000), 0xfffc_0000_0000_0000);
    // Same type without .sat: raw copy, sNaN kept.
    assert_eq!(ev(F, F, false, OCL, 0x7fa0_0001), 0x7fa0_0001);
    assert_eq!(ev(Hf, Hf, false, OCL, 0xfd01), 0xfd01);
    // Canonical NaN when switched.
    let o = MovOptions {
        nan: NanRule::Canonical,
        ..MovOptions::default()
    };
    assert_eq!(
        evo(F, Df, false, OCL, o, 0xfff8_0000_0000_0000),
        0x7fff_ffff
    );
    assert_eq!(evo(Hf, F, false, OCL, o, 0x7fa0_0000), 0x7fff);
}

#[test]
fn saturation() {
    // Float .sat: [0, 1], NaN -> +0, -0 -> +0, -inf -> 0, +inf -> 1.
    let cases = [
        (f(2.0), 0x3f80_0000),
        (f(0.5), 0x3f00_0000),
        (f(1.0), 0x3f80_0000),
        (f(-0.0), 0),
        (f(-1e-30), 0),
        (f(-7.0), 0),
        (0x7fc0_0000, 0),
        (0xffc0_0000, 0),
        (f(f32::INFINITY), 0x3f80_0000),
        (f(f32::NEG_INFINITY), 0),
        (1, 1), // a denormal stays
    ];
    for (x, want) in cases {
        assert_eq!(ev(F, F, true, OCL, x), want, "F .sat {x:#x}");
    }
    assert_eq!(ev(Hf, F, true, OCL, f(1.0004)), 0x3c00);
    assert_eq!(ev(Hf, F, true, rm(RoundingMode::Ru), f(0.99999)), 0x3c00);
    assert_eq!(ev(Df, Hf, true, OCL, 0xfc00), 0);
    // int -> float .sat: mov.sat f <- d 5 = 1.0.
    assert_eq!(ev(F, D, true, OCL, 5), 0x3f80_0000);
    assert_eq!(ev(F, D, true, OCL, (-3i32) as u32 as u64), 0);
    assert_eq!(ev(F, D, true, OCL, 0), 0);
    assert_eq!(ev(Hf, Ub, true, OCL, 1), 0x3c00);
    assert_eq!(ev(Df, Q, true, OCL, u64::MAX), 0); // Q -1
                                                   // §11 #4 switched: -0.0 stays -0.0.
    let o = MovOptions {
        sat_negative_zero: SatNegativeZero::Keep,
        ..MovOptions::default()
    };
    assert_eq!(evo(F, F, true, OCL, o, f(-0.0)), 0x8000_0000);
    assert_eq!(evo(Hf, F, true, OCL, o, f(-0.0)), 0x8000);
    assert_eq!(evo(F, F, true, OCL, o, f(-1.0)), 0);
}

#[test]
fn integers() {
    let c = OCL;
    assert_eq!(ev(D, B, false, c, 0xff), 0xffff_ffff); // sign-extend
    assert_eq!(ev(D, Ub, false, c, 0xff), 0xff); // zero-extend
    assert_eq!(ev(Uq, D, false, c, 0x8000_0000), 0xffff_ffff_8000_0000);
    assert_eq!(ev(Q, Ud, false, c, 0x8000_0000), 0x8000_0000);
    assert_eq!(ev(W, D, false, c, 0x1234_5678), 0x5678); // truncate
    assert_eq!(ev(Ub, Q, false, c, 0x1234_5678_9abc_def0), 0xf0);
    assert_eq!(ev(D, Ud, false, c, 0x8000_0000), 0x8000_0000); // same size: bits kept
                                                               // .sat clamps the source value.
    assert_eq!(ev(Ub, D, true, c, (-5i32) as u32 as u64), 0);
    assert_eq!(ev(Ub, D, true, c, 300), 0xff);
    assert_eq!(ev(B, D, true, c, 300), 0x7f);
    assert_eq!(ev(B, D, true, c, (-300i32) as u32 as u64), 0x80);
    assert_eq!(ev(D, Ud, true, c, 0xffff_ffff), 0x7fff_ffff);
    assert_eq!(ev(Ud, D, true, c, 0xffff_ffff), 0);
    assert_eq!(ev(Uq, Q, true, c, u64::MAX), 0);
    assert_eq!(ev(Q, Uq, true, c, u64::MAX), i64::MAX as u64);
    assert_eq!(ev(Uw, B, true, c, 0x80), 0);
    // The predicate as an integer.
    assert_eq!(ev(Ud, Bool, false, c, 0b1011), 0b1011);
    assert_eq!(ev(Uw, Bool, false, c, 0xffff), 0xffff);
}

#[test]
fn int_to_float_rounds_with_cr0() {
    assert_eq!(ev(F, D, false, OCL, 16_777_217), 0x4b80_0000);
    assert_eq!(
        ev(F, D, false, rm(RoundingMode::Ru), 16_777_217),
        0x4b80_0001
    );
    assert_eq!(
        ev(
            F,
            D,
            false,
            rm(RoundingMode::Rd),
            (-16_777_217i32) as u32 as u64
        ),
        0xcb80_0001
    );
    assert_eq!(ev(F, Ud, false, OCL, 0xffff_ffff), 0x4f80_0000);
    assert_eq!(
        ev(F, Ud, false, rm(RoundingMode::Rtz), 0xffff_ffff),
        0x4f7f_ffff
    );
    assert_eq!(ev(Df, Q, false, OCL, (-1i64) as u64), d(-1.0));
    assert_eq!(ev(Df, Uq, false, OCL, u64::MAX), d(18446744073709551616.0));
    assert_eq!(
        ev(Df, Uq, false, rm(RoundingMode::Rtz), u64::MAX),
        d(18446744073709549568.0)
    );
    assert_eq!(
        ev(F, Uq, false, rm(RoundingMode::Rtz), u64::MAX),
        0x5f7f_ffff
    );
    let o = MovOptions {
        q_to_float: QToFloat::AlwaysRne,
        ..MovOptions::default()
    };
    assert_eq!(
        evo(F, Uq, false, rm(RoundingMode::Rtz), o, u64::MAX),
        0x5f80_0000
    );
    assert_eq!(
        evo(F, D, false, rm(RoundingMode::Rtz), o, 0x7fff_ffff),
        0x4eff_ffff
    );
    assert_eq!(ev(Hf, Uw, false, OCL, 65535), 0x7c00);
    assert_eq!(ev(Hf, Uw, false, rm(RoundingMode::Rtz), 65535), 0x7bff);
    assert_eq!(
        ev(Df, D, false, rm(RoundingMode::Rtz), 0x7fff_ffff),
        d(2147483647.0)
    );
}

#[test]
fn packed_sources() {
    // VF elements convert like F values.
    assert_eq!(ev(Hf, Vf, false, OCL, 0x7f), 0x4fc0); // 31.0
    assert_eq!(ev(B, Vf, false, OCL, 0xb8), 0xff); // -1.5 -> -1
    assert_eq!(ev(Ub, Vf, false, OCL, 0xb8), 0); // negative -> 0
    assert_eq!(ev(Ud, Vf, false, OCL, 0x7f), 31);
    assert_eq!(ev(F, Vf, true, OCL, 0x40), 0x3f80_0000); // 2.0 -> 1.0
    assert_eq!(ev(Bf, Vf, false, OCL, 0x38), 0x3fc0); // 1.5
    assert_eq!(ev(Q, Vf, false, OCL, 0xff), (-31i64) as u64);
    // V/UV/VF are immediates only.
    for t in [V, Uv, Vf] {
        assert!(mov_plan(t, F, false, OCL).is_err());
    }
}

#[test]
fn alt_mode() {
    let alt = OCL.with_alt(true);
    // Default: ALT does not change MOV.
    assert_eq!(ev(F, Df, false, alt, d(1e300)), 0x7f80_0000);
    assert_eq!(ev(F, Df, false, alt, d(f64::NEG_INFINITY)), 0xff80_0000);
    let o = MovOptions {
        alt_mode: AltMode::InfToFmax,
        ..MovOptions::default()
    };
    assert_eq!(evo(F, Df, false, alt, o, d(1e300)), 0x7f7f_ffff);
    assert_eq!(evo(F, Df, false, alt, o, d(f64::NEG_INFINITY)), 0xff7f_ffff);
    assert_eq!(evo(F, Hf, false, alt, o, 0x7c00), 0x7f7f_ffff);
    assert_eq!(evo(F, Df, false, OCL, o, d(1e300)), 0x7f80_0000); // ALT bit off
    assert_eq!(evo(Hf, Df, false, alt, o, d(1e300)), 0x7c00); // F intermediate, HF result
    assert_eq!(evo(F, F, false, alt, o, 0x7f80_0000), 0x7f80_0000); // raw copy
}

#[test]
fn flags_report_what_happened() {
    let (_, fl) = eval_mov(Hf, F, false, OCL, f(65520.0)).unwrap();
    assert!(fl.contains(Flags::OVERFLOW) && fl.contains(Flags::INEXACT));
    let (_, fl) = eval_mov(B, F, false, OCL, f(300.0)).unwrap();
    assert!(fl.contains(Flags::SATURATED));
    let (_, fl) = eval_mov(F, D, false, OCL, 3).unwrap();
    assert!(fl.is_empty());
}

#[test]
fn every_pair_has_a_rule() {
    for dst in VisaType::ALL {
        for src in VisaType::ALL {
            let t = rule_text(dst, src);
            assert!(t.starts_with(&format!("{dst} <- {src}: ")), "{t}");
            let legal = mov_plan(dst, src, false, OCL).is_ok();
            assert_eq!(!legal, t.contains("illegal"), "{t}");
            if legal {
                // Every legal pair evaluates every source pattern of a small sample.
                let p = mov_plan(dst, src, true, OCL).ok();
                for bits in [0u64, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, u64::MAX] {
                    if let Some(p) = &p {
                        let _ = p.eval(bits);
                    }
                    let _ = mov_plan(dst, src, false, OCL).unwrap().eval(bits);
                }
            }
        }
    }
    assert!(rule_text(B, Df).contains("0x2C"));
    assert!(rule_text(Hf, Df).contains("two roundings"));
    assert!(rule_text(Ud, F).contains("sign bit set"));
}
