//! The slice kernels of `gpucvt::ptx::slices` against the exact model, as `gpucvt verify` runs
//! them: exhaustively for every form with a source of at most 16 bits (normal suite), and
//! over all 2^32 inputs for one form of every destination family (ignored: minutes each;
//! `cargo test --release -p gpucvt --test ptx_slices -- --ignored`).

use gpucvt::ptx::parse_instruction;
use gpucvt::ptx::slices::verify::{verify, Inputs, Report};

fn check(text: &str) -> Report {
    let form = parse_instruction(text)
        .unwrap_or_else(|e| panic!("{text}: {e:?}"))
        .form;
    let r = verify(&form, Inputs::default(), 5, &|_| {}).unwrap();
    assert_eq!(r.mismatches, 0, "{text}: {:#x?}", r.examples);
    r
}

#[test]
fn every_small_source_form_exhaustively() {
    for text in [
        "cvt.f32.f16",
        "cvt.f64.bf16",
        "cvt.rn.f16.bf16",
        "cvt.rni.s16.f16",
        "cvt.rzi.sat.u8.f16",
        "cvt.rn.f16.s16",
        "cvt.rn.f16x2.e4m3x2",
        "cvt.rn.relu.f16x2.e5m2x2",
        "cvt.rn.f16x2.e2m3x2",
        "cvt.rn.f16x2.e3m2x2",
        "cvt.rn.f16x2.e2m1x2",
        "cvt.rn.bf16x2.ue8m0x2",
        "cvt.s32.s8",
        "cvt.u16.u8",
    ] {
        let r = check(text);
        assert!(r.exhaustive, "{text}");
    }
}

#[test]
fn wide_sources_by_boundaries_and_samples() {
    for text in [
        "cvt.rn.f32.f64",
        "cvt.rz.f16.f64",
        "cvt.rni.s64.f64",
        "cvt.rn.f32.s64",
    ] {
        let form = parse_instruction(text).unwrap().form;
        let r = verify(
            &form,
            Inputs {
                sample: 100_000,
                seed: 3,
            },
            5,
            &|_| {},
        )
        .unwrap();
        assert!(!r.exhaustive);
        assert_eq!(r.mismatches, 0, "{text}: {:#x?}", r.examples);
    }
}

macro_rules! full {
    ($($name:ident: $text:expr,)*) => {$(
        #[test]
        #[ignore = "all 2^32 inputs: minutes"]
        fn $name() {
            let r = check($text);
            assert!(r.exhaustive);
            assert_eq!(r.inputs, 1 << 32);
        }
    )*};
}

full! {
    f16_rn: "cvt.rn.f16.f32",
    f16_rz_ftz_sat: "cvt.rz.ftz.sat.f16.f32",
    // The CPU's own conversion (`vcvtps2ph`) where AVX-512 is present, in every direction.
    f16_rz: "cvt.rz.f16.f32",
    f16_rm: "cvt.rm.f16.f32",
    f16_rp: "cvt.rp.f16.f32",
    f16x2_rs_relu: "cvt.rs.relu.satfinite.f16x2.f32",
    bf16_rn: "cvt.rn.bf16.f32",
    bf16_rz: "cvt.rz.bf16.f32",
    bf16x2_rs: "cvt.rs.satfinite.bf16x2.f32",
    tf32_rna: "cvt.rna.satfinite.tf32.f32",
    tf32_rz: "cvt.rz.tf32.f32",
    e4m3x2_rn: "cvt.rn.satfinite.e4m3x2.f32",
    e4m3x4_rs: "cvt.rs.satfinite.e4m3x4.f32",
    e5m2x2_rn_relu: "cvt.rn.satfinite.relu.e5m2x2.f32",
    e2m3x2_rn: "cvt.rn.satfinite.e2m3x2.f32",
    e3m2x2_rn: "cvt.rn.satfinite.e3m2x2.f32",
    e2m1x2_rn: "cvt.rn.satfinite.e2m1x2.f32",
    e2m1x4_rs: "cvt.rs.satfinite.e2m1x4.f32",
    ue8m0x2_rp: "cvt.rp.satfinite.ue8m0x2.f32",
    ue8m0x2_rz: "cvt.rz.satfinite.ue8m0x2.f32",
    s32_rni: "cvt.rni.s32.f32",
    u32_rpi: "cvt.rpi.u32.f32",
    u8_rmi_ftz_sat: "cvt.rmi.ftz.sat.u8.f32",
    s16_rzi: "cvt.rzi.s16.f32",
    s64_rni: "cvt.rni.s64.f32",
    u64_rzi: "cvt.rzi.u64.f32",
    e4m3x2_f16x2: "cvt.rn.satfinite.e4m3x2.f16x2",
}
