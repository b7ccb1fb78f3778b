//! Bulk conversion throughput, as ratios against baselines measured in the same run:
//! `memcpy` of the input bytes, and the *roofline* — a plain shift-truncate of f32 to 16 or 8
//! bits, which reads and writes the same bytes as a conversion but does no rounding.
//!
//! `cargo bench -p gpucvt-core --bench bulk` (set `GPUCVT_BENCH_LARGE=0` to skip the 64 Mi
//! runs). Sizes: 1 Mi elements (in cache) and 64 Mi elements (in memory).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpucvt_core::bulk::Kernel;
use gpucvt_core::format::*;
use gpucvt_core::{Conversion, Policy, Rounding};
use std::hint::black_box;
use std::time::Duration;

fn inputs(n: usize) -> Vec<u32> {
    // Values spread over the useful range of every destination (|x| up to ~2^20 and tiny
    // ones), with both signs, deterministic.
    let mut s = 0x1234_5678_9abc_def0u64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = s as u32;
            let exp = 100 + (r >> 24) % 50; // 2^-27 .. 2^22
            (r & 0x8000_0000) | exp << 23 | (r & 0x007f_ffff)
        })
        .collect()
}

fn sizes() -> Vec<usize> {
    let mut v = vec![1 << 20];
    if std::env::var("GPUCVT_BENCH_LARGE").map_or(true, |s| s != "0") {
        v.push(64 << 20);
    }
    v
}

fn satfinite() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

fn bench(c: &mut Criterion) {
    for n in sizes() {
        let src = inputs(n);
        let random: Vec<u32> = src.iter().map(|x| x.rotate_left(7) ^ 0x9e37_79b9).collect();
        let mut g = c.benchmark_group(format!("f32x{}Mi", n >> 20));
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(if n > 1 << 20 { 4 } else { 2 }));

        let mut dst32 = vec![0u32; n];
        let mut dst16 = vec![0u16; n];
        let mut dst8 = vec![0u8; n];
        g.bench_function("memcpy", |b| {
            b.iter(|| dst32.copy_from_slice(black_box(&src)))
        });
        g.bench_function("roofline-16", |b| {
            b.iter(|| {
                for (d, &s) in dst16.iter_mut().zip(black_box(&src)) {
                    *d = (s >> 16) as u16;
                }
            })
        });
        g.bench_function("roofline-8", |b| {
            b.iter(|| {
                for (d, &s) in dst8.iter_mut().zip(black_box(&src)) {
                    *d = (s >> 24) as u8;
                }
            })
        });
        let floats: Vec<f32> = src.iter().map(|&b| f32::from_bits(b)).collect();
        let mut halves = vec![half::f16::ZERO; n];
        g.bench_function("half-f16", |b| {
            b.iter(|| {
                half::slice::HalfFloatSliceExt::convert_from_f32_slice(
                    &mut halves[..],
                    black_box(&floats),
                )
            })
        });
        let mut bhalves = vec![half::bf16::ZERO; n];
        g.bench_function("half-bf16", |b| {
            b.iter(|| {
                half::slice::HalfFloatSliceExt::convert_from_f32_slice(
                    &mut bhalves[..],
                    black_box(&floats),
                )
            })
        });
        g.bench_function("float8-e4m3", |b| {
            b.iter(|| {
                for (d, &f) in dst8.iter_mut().zip(black_box(&floats)) {
                    *d = float8::F8E4M3::from_f32(f).to_bits();
                }
            })
        });

        let cases: &[(&str, Format, Rounding, Policy, bool)] = &[
            ("f16-rn", F16, Rounding::RN, Policy::default(), false),
            ("f16-rz", F16, Rounding::RZ, Policy::default(), false),
            (
                "f16-rs",
                F16,
                Rounding::stochastic(0, 13),
                Policy::default(),
                true,
            ),
            ("bf16-rn", BF16, Rounding::RN, Policy::default(), false),
            ("bf16-rz", BF16, Rounding::RZ, Policy::default(), false),
            (
                "bf16-rs",
                BF16,
                Rounding::stochastic(0, 16),
                Policy::default(),
                true,
            ),
            ("tf32-rna", TF32, Rounding::RNA, Policy::default(), false),
            ("tf32-rn", TF32, Rounding::RN, Policy::default(), false),
            ("tf32-rz", TF32, Rounding::RZ, Policy::default(), false),
            ("e4m3-rn", E4M3, Rounding::RN, satfinite(), false),
            (
                "e4m3-rs",
                E4M3,
                Rounding::stochastic(0, 8),
                satfinite(),
                true,
            ),
            ("e5m2-rn", E5M2, Rounding::RN, satfinite(), false),
            (
                "e5m2-rs",
                E5M2,
                Rounding::stochastic(0, 8),
                satfinite(),
                true,
            ),
            ("e2m3-rn", E2M3, Rounding::RN, satfinite(), false),
            ("e3m2-rn", E3M2, Rounding::RN, satfinite(), false),
            ("e2m1-rn", E2M1, Rounding::RN, satfinite(), false),
            (
                "e2m1-rs",
                E2M1,
                Rounding::stochastic(0, 8),
                satfinite(),
                true,
            ),
            ("ue8m0-rz", UE8M0, Rounding::RZ, Policy::default(), false),
            ("ue8m0-rp", UE8M0, Rounding::RP, satfinite(), false),
        ];
        for &(name, dst, rounding, policy, stochastic) in cases {
            let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
            let id = BenchmarkId::new("gpucvt", name);
            match dst.width() {
                w if w <= 8 => g.bench_function(id, |b| {
                    b.iter(|| {
                        if stochastic {
                            k.convert_stochastic(black_box(&src), &mut dst8, &random)
                        } else {
                            k.convert(black_box(&src), &mut dst8)
                        }
                        .unwrap()
                    })
                }),
                w if w <= 16 => g.bench_function(id, |b| {
                    b.iter(|| {
                        if stochastic {
                            k.convert_stochastic(black_box(&src), &mut dst16, &random)
                        } else {
                            k.convert(black_box(&src), &mut dst16)
                        }
                        .unwrap()
                    })
                }),
                _ => g.bench_function(id, |b| {
                    b.iter(|| k.convert(black_box(&src), &mut dst32).unwrap())
                }),
            };
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
