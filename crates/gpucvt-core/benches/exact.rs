//! The exact core, [`Conversion::apply`], one conversion at a time.
//!
//! Each benchmark converts 64 Ki varied source encodings (both signs; magnitudes spread so
//! that the narrow destinations see subnormal, normal and overflowing results; a sprinkling
//! of zeros, infinities and NaNs) and reports the throughput in elements: divide the time per
//! iteration by 65536 for the cost of one `apply`.
//!
//! `cargo bench -p gpucvt-core --bench exact`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpucvt_core::format::*;
use gpucvt_core::{Conversion, Policy, Rounding};
use std::hint::black_box;
use std::time::Duration;

const N: usize = 1 << 16;

/// A deterministic xorshift stream.
fn stream() -> impl FnMut() -> u64 {
    let mut s = 0x1234_5678_9abc_def0u64;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Encodings of a float format with `exp_bits` exponent bits and `man_bits` mantissa bits:
/// mostly finite values with exponent fields within `spread` of the bias, one in 64 a
/// special (zero, infinity or NaN, by the exponent field's extremes), one in 64 anywhere.
fn inputs(exp_bits: u32, man_bits: u32, spread: u64) -> Vec<u64> {
    let mut next = stream();
    let bias = (1u64 << (exp_bits - 1)) - 1;
    let e_all = (1u64 << exp_bits) - 1;
    (0..N)
        .map(|_| {
            let r = next();
            let sign = (r >> 63) << (exp_bits + man_bits);
            let man = r & ((1u64 << man_bits) - 1);
            let e = match (r >> 40) % 64 {
                0 => 0,
                1 => e_all,
                2 => (r >> 20) & e_all,
                _ => (bias + (r >> 20) % (2 * spread + 1)).saturating_sub(spread),
            };
            sign | e.min(e_all) << man_bits | man
        })
        .collect()
}

fn exact(c: &mut Criterion) {
    let satfinite = Policy {
        satfinite: true,
        ..Policy::default()
    };
    let d = Policy::default();
    let f32s = inputs(8, 23, 28);
    let f64s = inputs(11, 52, 160);
    let f16s = inputs(5, 10, 15);
    let cases: [(&str, Conversion, &[u64]); 6] = [
        (
            "f32-f16-rn",
            Conversion::new(F32, F16, Rounding::RN, d),
            &f32s,
        ),
        (
            "f32-e4m3-rn-satfinite",
            Conversion::new(F32, E4M3, Rounding::RN, satfinite),
            &f32s,
        ),
        (
            "f32-bf16-rz",
            Conversion::new(F32, BF16, Rounding::RZ, d),
            &f32s,
        ),
        (
            "f32-s32-rni",
            Conversion::new(F32, S32, Rounding::RNI, d),
            &f32s,
        ),
        (
            "f64-f32-rn",
            Conversion::new(F64, F32, Rounding::RN, d),
            &f64s,
        ),
        (
            "f16-e2m1-rn",
            Conversion::new(F16, E2M1, Rounding::RN, d),
            &f16s,
        ),
    ];
    let mut g = c.benchmark_group("exact");
    g.throughput(Throughput::Elements(N as u64));
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_millis(500));
    g.sample_size(20);
    for (name, cvt, xs) in cases {
        g.bench_with_input(BenchmarkId::from_parameter(name), xs, |b, xs| {
            b.iter(|| {
                let cvt = black_box(&cvt);
                let mut acc = 0u64;
                for &x in xs {
                    let out = cvt.apply(x);
                    acc = acc.wrapping_add(out.bits ^ u64::from(out.flags.is_empty()));
                }
                acc
            })
        });
    }
    g.finish();
}

criterion_group!(benches, exact);
criterion_main!(benches);
