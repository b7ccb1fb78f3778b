//! Slices long enough for the bulk kernels' two interleaved streams (4 Mi elements and more:
//! the first half and the second half converted a tile of each in turn). The unit tests run
//! the kernels with a low threshold; here the library's own threshold applies. Every
//! element of a long slice must equal the same kernel run over short pieces (one stream
//! each), and a sample of them the exact core.

use gpucvt_core::format::{Format, BF16, E2M1, E3M2, E4M3, E5M2, F16, F32, S32, TF32, UE8M0};
use gpucvt_core::{Conversion, Policy, Rounding};
use gpucvt_kernels::{Kernel, Word};

/// Past the threshold by an odd amount, so that the second half is longer than the first
/// and the last, short part is not a whole tile.
const N: usize = (4 << 20) + 1000 + 7;

/// `f32` patterns: uniform bits, values near the FP8/FP6/FP4 ranges, and specials.
fn inputs() -> Vec<u32> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    (0..N)
        .map(|i| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (s >> 32) as u32;
            match i % 8 {
                0 => r,
                1 => [0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0001, 1][r as usize % 6],
                // Exponents from 2^-20 to 2^20 with random signs and significands.
                _ => (r & 0x807f_ffff) | ((107 + (r >> 23) % 41) << 23),
            }
        })
        .collect()
}

fn sf() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

/// Converts `x` whole and in pieces of 4096 elements into `u32` words; checks both agree
/// and every 101st element equals the core (`rnd`: the random value of each element, for
/// stochastic rounding of `width` bits).
fn check(dst: Format, rounding: Rounding, policy: Policy, x: &[u32], rnd: Option<(&[u32], u32)>) {
    let c = Conversion::new(F32, dst, rounding, policy);
    let k = Kernel::new(c);
    let mut whole = vec![0u32; x.len()];
    let mut pieces = vec![0u32; x.len()];
    match rnd {
        Some((r, _)) => {
            k.convert_stochastic(x, &mut whole, r).unwrap();
            for ((xs, ps), rs) in x
                .chunks(4096)
                .zip(pieces.chunks_mut(4096))
                .zip(r.chunks(4096))
            {
                k.convert_stochastic(xs, ps, rs).unwrap();
            }
        }
        None => {
            k.convert(x, &mut whole).unwrap();
            for (xs, ps) in x.chunks(4096).zip(pieces.chunks_mut(4096)) {
                k.convert(xs, ps).unwrap();
            }
        }
    }
    let what = format!("{} {:?} {:?}", dst.name, rounding, policy);
    let agree = |got: &[u32], how: &str| {
        if let Some(i) = (0..x.len()).find(|&i| got[i] != pieces[i]) {
            panic!(
                "{what}: element {i} ({:#010x}): {how} {:#x}, pieces {:#x}",
                x[i], got[i], pieces[i]
            );
        }
    };
    agree(&whole, "whole slice in u32 words");
    // The narrowest word too (the specialised kernels' own, which they write directly).
    match dst.width() {
        w if w <= 8 => agree(&narrow::<u8>(&k, x, rnd), "whole slice in u8 words"),
        w if w <= 16 => agree(&narrow::<u16>(&k, x, rnd), "whole slice in u16 words"),
        _ => {}
    }
    for i in (0..x.len()).step_by(101).chain([x.len() / 2, x.len() - 1]) {
        let core = match rnd {
            Some((r, width)) => Conversion::new(
                F32,
                dst,
                Rounding::stochastic(r[i] as u64 & ((1 << width) - 1), width),
                policy,
            ),
            None => c,
        };
        assert_eq!(
            whole[i] as u64,
            core.apply(x[i] as u64).bits,
            "{what}: element {i} ({:#010x}) against the core",
            x[i]
        );
    }
}

/// The whole slice converted into words `D`, widened to `u32`.
fn narrow<D: Word>(k: &Kernel, x: &[u32], rnd: Option<(&[u32], u32)>) -> Vec<u32> {
    let mut out = vec![D::default(); x.len()];
    match rnd {
        Some((r, _)) => k.convert_stochastic(x, &mut out, r).unwrap(),
        None => k.convert(x, &mut out).unwrap(),
    }
    out.iter().map(|w| w.to_u64() as u32).collect()
}

#[test]
fn long_slices_equal_short_pieces_and_the_core() {
    let x = inputs();
    // The specialised kernels (FP8/FP6/FP4, and rz through f16 and a table on AVX-512 VBMI;
    // bf16, and rn through `vcvtneps2bf16` on AVX-512 BF16; tf32 in one stream; f16 through
    // `vcvtps2ph`), the run-time kernel (e3m2 rna), ue8m0 and the integer kernel.
    check(E4M3, Rounding::RN, sf(), &x, None);
    check(E2M1, Rounding::RZ, sf(), &x, None);
    check(E5M2, Rounding::RN, Policy::default(), &x, None);
    check(BF16, Rounding::RZ, Policy::default(), &x, None);
    check(BF16, Rounding::RN, Policy::default(), &x, None);
    check(TF32, Rounding::RZ, Policy::default(), &x, None);
    check(F16, Rounding::RN, Policy::default(), &x, None);
    check(E3M2, Rounding::RNA, sf(), &x, None);
    check(UE8M0, Rounding::RP, sf(), &x, None);
    check(S32, Rounding::RNI, Policy::default(), &x, None);
    // Stochastic rounding: each element's random value must follow it into its stream.
    let r: Vec<u32> = x.iter().map(|&v| v.rotate_left(13) ^ 0x5bd1_e995).collect();
    check(E4M3, Rounding::stochastic(0, 8), sf(), &x, Some((&r, 8)));
    check(
        F16,
        Rounding::stochastic(0, 13),
        Policy::default(),
        &x,
        Some((&r, 13)),
    );
}
