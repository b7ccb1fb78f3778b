//! Throughput of the batch evaluator (`gpucvt eval --batch`) on a realistic mix of lines, in
//! lines per second, next to a baseline that only splits the lines and parses their hex
//! operands (the floor any evaluator pays).
//!
//! Run with `cargo bench -p gpucvt --bench batch`. The issue asks for at least 1,000,000
//! lines per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gpucvt::batch::Batch;
use gpucvt::instr::Options;
use gpucvt_reference::Rng;
use std::hint::black_box;

/// What these inputs draw from the suites' seeded generator.
trait Draw {
    /// An f32 bit pattern, mostly of ordinary magnitude, sometimes anything.
    fn f32_bits(&mut self) -> u32;
}

impl Draw for Rng {
    fn f32_bits(&mut self) -> u32 {
        let r = self.next_u64();
        if r.is_multiple_of(8) {
            r as u32
        } else {
            let v = ((r >> 8) as u32 as f32 / u32::MAX as f32 - 0.5) * 1000.0;
            v.to_bits()
        }
    }
}

/// `n` lines of a realistic mix: PTX f32 -> f16, e4m3x2 / e2m1x2 / bf16x2 packing, integer
/// conversions, some error lines and a few vISA moves.
fn lines(n: usize) -> String {
    let mut rng = Rng(42);
    let mut s = String::new();
    for i in 0..n {
        let line = match i % 20 {
            0..=4 => format!("cvt.rn.f16.f32 {:#010x}", rng.f32_bits()),
            5..=7 => format!(
                "cvt.rn.satfinite.e4m3x2.f32 {:#010x} {:#010x}",
                rng.f32_bits(),
                rng.f32_bits()
            ),
            8..=9 => format!(
                "cvt.rn.satfinite.e2m1x2.f32 {:#010x} {:#010x}",
                rng.f32_bits(),
                rng.f32_bits()
            ),
            10..=11 => format!(
                "cvt.rn.bf16x2.f32 {:#010x} {:#010x}",
                rng.f32_bits(),
                rng.f32_bits()
            ),
            12 => format!("cvt.rzi.s32.f32 {:#010x}", rng.f32_bits()),
            13 => format!("cvt.u8.s32 {:#010x}", rng.next_u64() as u32),
            14 => format!("cvt.rn.f32.s64 {:#018x}", rng.next_u64()),
            15 => format!("cvt.f32.f16 {:#06x}", rng.next_u64() as u16),
            16 => match rng.next_u64() % 3 {
                0 => "cvt.rn.f16.f32 1.5".to_string(),
                1 => "cvt.rn.f16.x32 0x0".to_string(),
                _ => format!("cvt.rn.f16.f32 {:#x} 0x1", rng.next_u64() as u32),
            },
            17 => format!("mov hf <- f {:#010x}", rng.f32_bits()),
            18 => format!("mov.sat ub <- f {:#010x}", rng.f32_bits()),
            _ => format!("cvt.rn.f16x2.e4m3x2 {:#06x}", rng.next_u64() as u16),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// The baseline: split each line into words and parse every `0x` word as hex.
fn baseline(text: &str) -> u64 {
    let mut acc = 0u64;
    for line in text.lines() {
        for w in line.split_whitespace() {
            if let Some(h) = w.strip_prefix("0x") {
                acc = acc.wrapping_add(u64::from_str_radix(h, 16).unwrap_or(0));
            }
        }
    }
    acc
}

fn bench(c: &mut Criterion) {
    const N: usize = 100_000;
    let text = lines(N);
    let mut g = c.benchmark_group("batch");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);
    g.bench_function("baseline_split_and_parse_hex", |b| {
        b.iter(|| black_box(baseline(black_box(&text))))
    });
    g.bench_function("batch_line", |b| {
        let mut batch = Batch::new(Options::default());
        let mut out = String::with_capacity(N * 12);
        b.iter(|| {
            out.clear();
            for line in black_box(&text).lines() {
                batch.line(line, &mut out);
            }
            black_box(out.len())
        })
    });
    g.bench_function("batch_run", |b| {
        let mut batch = Batch::new(Options::default());
        let mut out: Vec<u8> = Vec::with_capacity(N * 12);
        b.iter(|| {
            out.clear();
            batch.run(black_box(text.as_bytes()), &mut out).unwrap_or(0)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
