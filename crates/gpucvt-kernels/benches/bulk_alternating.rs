//! The kernels of `bulk.rs` against their roofline loops in alternating runs: for each case,
//! `REPS` times the roofline (the shift-truncate of the case's output width, or for
//! stochastic cases the loop that reads the same random words) and then the kernel, each run
//! timed on its own, and the median of the per-pair ratios (roofline time / kernel time),
//! then in parentheses the ratio of the two best times (the other tenants of a shared
//! machine only ever slow a run down, so each best time is the nearest to that loop's own
//! speed; at 64 Mi elements, where memory binds, the two figures can differ widely), and
//! the best times as gigabytes of input per second.
//! The two runs of a pair are milliseconds apart, so a change of the shared machine's speed
//! between them is rarer than across criterion's groups; this complements `bulk.rs`, it
//! does not replace it.
//!
//! `cargo bench -p gpucvt-kernels --bench bulk_alternating -- [CASE…]`, with `N` elements
//! (default 64 Mi) and `REPS` pairs (default 11) from the environment; the cases are the
//! names of `common::cases` (`e4m3-rn`, `f16-rs` …), all of them without arguments.

mod common;

use common::*;
use gpucvt_core::format::F32;
use gpucvt_core::Conversion;
use gpucvt_kernels::Kernel;
use std::time::Instant;

fn main() {
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let n = env("N", 64 << 20);
    let reps = env("REPS", 11).max(1);
    // Cargo passes `--bench`; the other arguments name cases.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let mut d = Data::new(n);
    println!(
        "{n} elements, {reps} alternating pairs, {}; ratio = roofline time / kernel time",
        gpucvt_kernels::instruction_set()
    );
    for (name, dst, rounding, policy) in cases() {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let stochastic = name.ends_with("-rs");
        let w = dst.width();
        let roof = match (stochastic, w) {
            (true, 0..=8) => "roofline-rs-8w",
            (true, _) => "roofline-rs-16w",
            (false, 0..=8) => "roofline-8",
            (false, 9..=16) => "roofline-16",
            _ => "roofline-32",
        };
        debug_assert!(ROOFLINES.contains(&roof));
        let k = Kernel::new(Conversion::new(F32, dst, rounding, policy));
        let mut ratios = Vec::with_capacity(reps);
        let (mut best_roof, mut best_kernel) = (f64::MAX, f64::MAX);
        for _ in 0..reps {
            let t = Instant::now();
            roofline(roof, &mut d);
            let a = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let src = std::hint::black_box(&d.src[..]);
            let done = match (stochastic, w) {
                (true, 0..=8) => k.convert_stochastic_words(src, &mut d.dst8, &d.random8),
                (true, _) => k.convert_stochastic_words(src, &mut d.dst16, &d.random16),
                (false, 0..=8) => k.convert(src, &mut d.dst8),
                (false, 9..=16) => k.convert(src, &mut d.dst16),
                _ => k.convert(src, &mut d.dst32),
            };
            let b = t.elapsed().as_secs_f64();
            done.expect("the benchmark's slices have equal lengths");
            ratios.push(a / b);
            (best_roof, best_kernel) = (best_roof.min(a), best_kernel.min(b));
        }
        ratios.sort_by(f64::total_cmp);
        // Input bytes per second of the best runs, for comparing machines (a ratio of two
        // loops in the same run is what the targets use).
        let gbs = |t: f64| (4 * n) as f64 / t / 1e9;
        println!(
            "{name:10} {:.2}   (best times: {:.2}; roofline {:.1} GB/s, kernel {:.1} GB/s of input)",
            ratios[ratios.len() / 2],
            best_roof / best_kernel,
            gbs(best_roof),
            gbs(best_kernel)
        );
    }
}
