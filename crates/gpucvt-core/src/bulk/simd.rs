//! Run-time CPU-feature dispatch: the only `unsafe` code of gpucvt-core.
//!
//! The kernels in `small.rs` and `ue8m0.rs` are plain safe Rust marked `#[inline(always)]`.
//! Here they are compiled three times — for the baseline target, for AVX2 and for AVX-512 —
//! and the best version the running CPU supports is called. Calling a
//! `#[target_feature]` function is `unsafe` only because the CPU must have the feature; each
//! call below is guarded by `is_x86_feature_detected!` for exactly the features it enables.
#![allow(unsafe_code)]

use super::{small, ue8m0, Word};

macro_rules! dispatch_small {
    ($p:expr, $src:expr, $dst:expr, $r:expr, $mode:ident) => {
        run_small::<{ small::$mode }, D>($p, $src, $dst, $r)
    };
}

/// `f32` → small float over a slice; `rnd` has one random value per element (ignored by
/// deterministic modes).
pub(super) fn small<D: Word>(p: &small::Params, src: &[u32], dst: &mut [D], rnd: &[u32]) {
    match p.mode {
        small::RN => dispatch_small!(p, src, dst, rnd, RN),
        small::RNA => dispatch_small!(p, src, dst, rnd, RNA),
        small::RZ => dispatch_small!(p, src, dst, rnd, RZ),
        small::RM => dispatch_small!(p, src, dst, rnd, RM),
        small::RP => dispatch_small!(p, src, dst, rnd, RP),
        _ => dispatch_small!(p, src, dst, rnd, RS),
    }
}

fn run_small<const MODE: u8, D: Word>(p: &small::Params, src: &[u32], dst: &mut [D], rnd: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
        {
            // SAFETY: the CPU has every feature `small_avx512` enables (checked just above).
            unsafe { small_avx512::<MODE, D>(p, src, dst, rnd) };
            return;
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { small_avx2::<MODE, D>(p, src, dst, rnd) };
            return;
        }
    }
    small::run::<MODE, D>(p, src, dst, rnd, D::from_u32);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn small_avx2<const MODE: u8, D: Word>(
    p: &small::Params,
    src: &[u32],
    dst: &mut [D],
    rnd: &[u32],
) {
    small::run::<MODE, D>(p, src, dst, rnd, D::from_u32);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn small_avx512<const MODE: u8, D: Word>(
    p: &small::Params,
    src: &[u32],
    dst: &mut [D],
    rnd: &[u32],
) {
    small::run::<MODE, D>(p, src, dst, rnd, D::from_u32);
}

/// `f32` → `ue8m0` over a slice.
pub(super) fn ue8m0<D: Word>(p: &ue8m0::Params, src: &[u32], dst: &mut [D]) {
    if p.up {
        run_ue8m0::<true, D>(p, src, dst)
    } else {
        run_ue8m0::<false, D>(p, src, dst)
    }
}

fn run_ue8m0<const UP: bool, D: Word>(p: &ue8m0::Params, src: &[u32], dst: &mut [D]) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { ue8m0_avx2::<UP, D>(p, src, dst) };
            return;
        }
    }
    ue8m0::run::<UP, D>(p, src, dst, D::from_u32);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn ue8m0_avx2<const UP: bool, D: Word>(p: &ue8m0::Params, src: &[u32], dst: &mut [D]) {
    ue8m0::run::<UP, D>(p, src, dst, D::from_u32);
}
