//! PTX forms over slices (`gpucvt::ptx::slices::CvtKernel`): one thread against two, and the
//! packing of the x2/x4 forms against the plain per-element kernel, on in-cache (1 Mi) and
//! in-memory (16 Mi) inputs.
//!
//! Run with `cargo bench -p gpucvt --bench slices`. The issue asks two threads to be at least
//! 1.8× one thread on in-cache sizes: compare `…/threads-1` with `…/threads-2`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpucvt::ptx::parse_instruction;
use gpucvt::ptx::slices::{CvtKernel, Order};
use std::hint::black_box;

/// f32 bit patterns of ordinary magnitude (a fixed splitmix64 stream).
fn inputs(n: usize) -> Vec<u32> {
    let mut s = 7u64;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (((z >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 600.0).to_bits()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    for (size, label) in [(1usize << 20, "1Mi"), (1 << 24, "16Mi")] {
        let src = inputs(size);
        let mut g = c.benchmark_group(format!("slices-{label}"));
        g.throughput(Throughput::Bytes(4 * size as u64));
        g.sample_size(10);
        for (name, text) in [
            ("f16", "cvt.rn.f16.f32"),
            ("e4m3x2", "cvt.rn.satfinite.e4m3x2.f32"),
            ("e2m1x4-rs", "cvt.rs.satfinite.e2m1x4.f32"),
        ] {
            let form = parse_instruction(text).unwrap().form;
            let k = CvtKernel::new(&form, Order::Memory).unwrap();
            let per = k.sources_per_result();
            let results = size / per;
            let rbits: Vec<u32> = (0..results as u32)
                .map(|i| i.wrapping_mul(0x9e37_79b9))
                .collect();
            let r = k.is_stochastic().then_some(&rbits[..]);
            for threads in [1usize, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let id = BenchmarkId::new(name, format!("threads-{threads}"));
                match k.result_bits() {
                    16 => {
                        let mut dst = vec![0u16; results];
                        g.bench_function(id, |b| {
                            b.iter(|| {
                                pool.install(|| k.convert_par(black_box(&src), &mut dst, r))
                                    .unwrap()
                            })
                        });
                    }
                    _ => {
                        let mut dst = vec![0u8; results];
                        g.bench_function(id, |b| {
                            b.iter(|| {
                                pool.install(|| k.convert_par(black_box(&src), &mut dst, r))
                                    .unwrap()
                            })
                        });
                    }
                }
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
