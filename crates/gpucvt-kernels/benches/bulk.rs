//! Bulk conversion throughput, as ratios against baselines measured in the same run:
//!
//! - `memcpy`: a copy of the input bytes;
//! - `roofline-16`, `roofline-8`: a plain shift-truncate of `f32` to 16 or 8 bits, which reads
//!   and writes the same bytes as a conversion but does no rounding (the roofline), and
//!   `roofline-32`, a mask to the tf32 bits (`memcpy` may write with non-temporal stores that
//!   a plain loop does not use, so it is no roofline for 32-bit results at 64 Mi);
//! - `roofline-rs-16`, `roofline-rs-8`: the same combined (xor) with one random `u32` per
//!   element, the bytes a stochastic-rounding kernel moves with `u32` random values (`-rs32`);
//!   `roofline-rs-16w`, `roofline-rs-8w`: with one random value in the output word (`u16`,
//!   `u8`), the bytes of the `-rs` kernels;
//! - the roofline loops are compiled for the instruction set the kernels use (AVX-512 or
//!   AVX2 where the CPU has it: `gpucvt_kernels::vectorized`), so that they vectorise as the
//!   kernels do;
//! - the `half` crate's `convert_from_f32_slice` (f16 with the F16C path where the CPU has it,
//!   bf16), and the `float8` crate element by element (e4m3, e5m2);
//! - gpucvt's kernels for `f32` → f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, ue8m0 in
//!   `rn`, `rz` and `rs` (`rna` for tf32; `rz`, `rp` for ue8m0), one element per lane: the
//!   PTX x2/x4 forms are packings of the same per-lane conversion. Stochastic rounding reads
//!   a stream of random values: `-rs` takes them in the narrowest word that holds the width
//!   (`u8` for the 8-bit widths, `u16` for f16 and bf16: `Kernel::convert_stochastic_words`),
//!   `-rs32` one `u32` per element (`Kernel::convert_stochastic`);
//! - `roof/NAME`: the roofline of case `NAME` (its output width's, or the rs roofline that
//!   reads the same random bytes), measured again just before the case, so that the ratio of
//!   the two is taken seconds apart rather than minutes (the table's `× paired`).
//!
//! `cargo bench -p gpucvt-kernels --bench bulk` runs 1 Mi elements (in cache) and 64 Mi elements
//! (in memory) in one process; `GPUCVT_BENCH_LARGE=0` skips the 64 Mi group. Then
//! `python3 scripts/bulk-bench-table.py` prints the ratio table from criterion's output
//! (`$CARGO_TARGET_DIR/criterion`, or `target/criterion`). `GPUCVT_ISA=avx2` (or `baseline`)
//! runs the kernels and the roofline loops that another machine would, as far as this CPU
//! has them; the benchmark prints which.

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use gpucvt_core::format::*;
use gpucvt_core::Conversion;
use gpucvt_kernels::Kernel;
use std::hint::black_box;

mod common;
use common::{cases, roofline, Data, ROOFLINES};
use std::time::Duration;

fn sizes() -> Vec<usize> {
    let mut v = vec![1 << 20];
    if std::env::var("GPUCVT_BENCH_LARGE").map_or(true, |s| s != "0") {
        v.push(64 << 20);
    }
    v
}

fn bench(c: &mut Criterion) {
    eprintln!(
        "kernels and roofline loops compiled for {}",
        gpucvt_kernels::instruction_set()
    );
    let only = std::env::var("GPUCVT_BENCH_ONLY").ok();
    for n in sizes() {
        let large = n > 1 << 20;
        let mut data = Data::new(n);
        let mut g = c.benchmark_group(format!("f32x{}Mi", n >> 20));
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.sample_size(10);
        if large {
            // One pass over 64 Mi elements takes tens of milliseconds: ten samples of a few
            // passes each.
            g.sampling_mode(SamplingMode::Flat);
            g.warm_up_time(Duration::from_millis(200));
            g.measurement_time(Duration::from_secs(1));
        } else {
            g.warm_up_time(Duration::from_millis(300));
            g.measurement_time(Duration::from_secs(1));
        }
        let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));

        if wanted("memcpy") {
            g.bench_function("memcpy", |b| {
                b.iter(|| data.dst32.copy_from_slice(black_box(&data.src)))
            });
        }
        for name in ROOFLINES {
            if wanted(name) {
                g.bench_function(name, |b| b.iter(|| roofline(name, &mut data)));
            }
        }
        let floats: Vec<f32> = data.src.iter().map(|&b| f32::from_bits(b)).collect();
        if wanted("half") {
            let mut halves = vec![half::f16::ZERO; n];
            g.bench_function("half-f16", |b| {
                b.iter(|| {
                    half::slice::HalfFloatSliceExt::convert_from_f32_slice(
                        &mut halves[..],
                        black_box(&floats[..]),
                    )
                })
            });
            let mut bhalves = vec![half::bf16::ZERO; n];
            g.bench_function("half-bf16", |b| {
                b.iter(|| {
                    half::slice::HalfFloatSliceExt::convert_from_f32_slice(
                        &mut bhalves[..],
                        black_box(&floats[..]),
                    )
                })
            });
        }
        if wanted("float8") {
            g.bench_function("float8-e4m3", |b| {
                b.iter(|| {
                    for (d, &f) in data.dst8.iter_mut().zip(black_box(&floats[..])) {
                        *d = float8::F8E4M3::from_f32(f).to_bits();
                    }
                })
            });
            g.bench_function("float8-e5m2", |b| {
                b.iter(|| {
                    for (d, &f) in data.dst8.iter_mut().zip(black_box(&floats[..])) {
                        *d = float8::F8E5M2::from_f32(f).to_bits();
                    }
                })
            });
        }
        drop(floats);

        for (name, dst, rounding, policy) in cases() {
            if !wanted(name) {
                continue;
            }
            let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
            let stochastic = name.ends_with("-rs");
            let variants: &[&str] = if stochastic { &["", "32"] } else { &[""] };
            for &suffix in variants {
                let case = format!("{name}{suffix}");
                // The case's own roofline, measured just before it: the two are seconds
                // apart, so the ratio of the two does not take in the machine's drift over
                // the minutes of the whole group.
                let roof = roofline_of(&case, dst);
                g.bench_function(BenchmarkId::new("roof", &case), |b| {
                    b.iter(|| roofline(roof, &mut data))
                });
                let id = BenchmarkId::new("gpucvt", &case);
                let Data {
                    src,
                    random,
                    random16,
                    random8,
                    dst32,
                    dst16,
                    dst8,
                } = &mut data;
                let src = &src[..];
                match (dst.width(), stochastic, suffix) {
                    (w, false, _) if w <= 8 => g.bench_function(id, |b| {
                        b.iter(|| k.convert(black_box(src), &mut dst8[..]).unwrap())
                    }),
                    (w, false, _) if w <= 16 => g.bench_function(id, |b| {
                        b.iter(|| k.convert(black_box(src), &mut dst16[..]).unwrap())
                    }),
                    (_, false, _) => g.bench_function(id, |b| {
                        b.iter(|| k.convert(black_box(src), &mut dst32[..]).unwrap())
                    }),
                    (w, true, "") if w <= 8 => g.bench_function(id, |b| {
                        b.iter(|| {
                            k.convert_stochastic_words(black_box(src), &mut dst8[..], random8)
                                .unwrap()
                        })
                    }),
                    (_, true, "") => g.bench_function(id, |b| {
                        b.iter(|| {
                            k.convert_stochastic_words(black_box(src), &mut dst16[..], random16)
                                .unwrap()
                        })
                    }),
                    (w, true, _) if w <= 8 => g.bench_function(id, |b| {
                        b.iter(|| {
                            k.convert_stochastic(black_box(src), &mut dst8[..], random)
                                .unwrap()
                        })
                    }),
                    (_, true, _) => g.bench_function(id, |b| {
                        b.iter(|| {
                            k.convert_stochastic(black_box(src), &mut dst16[..], random)
                                .unwrap()
                        })
                    }),
                };
            }
        }
        g.finish();
    }
}

/// The roofline a gpucvt case is compared with: its output width's shift-truncate for `rn`,
/// `rz`, `rna` and `rp` (`roofline-32` for tf32), and for stochastic rounding the loop that
/// reads the same random bytes (`roofline-rs-16w`, `roofline-rs-8w` for the `-rs` cases,
/// which take their random values in the output word; `roofline-rs-16`, `roofline-rs-8` for
/// the `-rs32` cases, one `u32` per element).
pub fn roofline_of(name: &str, dst: Format) -> &'static str {
    let w = dst.width();
    if name.ends_with("-rs") {
        if w <= 8 {
            "roofline-rs-8w"
        } else {
            "roofline-rs-16w"
        }
    } else if name.ends_with("-rs32") {
        if w <= 8 {
            "roofline-rs-8"
        } else {
            "roofline-rs-16"
        }
    } else if w <= 8 {
        "roofline-8"
    } else if w <= 16 {
        "roofline-16"
    } else {
        "roofline-32"
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
