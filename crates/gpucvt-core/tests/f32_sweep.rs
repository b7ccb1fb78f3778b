//! Every one of the 2^32 `f32` patterns into `f16` (rn), `bf16` (rn) and `e4m3` (rn with
//! `.satfinite`), against the reference. Ignored by default: it takes tens of minutes on two
//! cores. Run it with
//!
//! ```text
//! cargo test -p gpucvt-core --release --test f32_sweep -- --ignored --nocapture
//! ```
//!
//! `GPUCVT_SWEEP_STRIDE=k` checks every k-th magnitude only (a quick smoke run).

use gpucvt_reference::reference;

use gpucvt_core::format::{BF16, E4M3, F16, F32};
use gpucvt_core::{Format, Policy, Rounding};
use reference::*;
use std::sync::atomic::{AtomicU64, Ordering as AtOrd};
use std::time::Instant;

#[test]
#[ignore = "sweeps all 2^32 f32 patterns; takes tens of minutes"]
fn every_f32_pattern() {
    let stride: u64 = std::env::var("GPUCVT_SWEEP_STRIDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let satfinite = Policy {
        satfinite: true,
        ..Policy::default()
    };
    let cases: [(Format, Rounding, Policy, &str); 3] = [
        (F16, Rounding::RN, Policy::default(), "default"),
        (BF16, Rounding::RN, Policy::default(), "default"),
        (E4M3, Rounding::RN, satfinite, "satfinite"),
    ];
    let models: Vec<&Dst> = cases.iter().map(|c| dst_model(&c.0)).collect();
    let start = Instant::now();
    let bad = Mismatches::default();
    let checked = AtomicU64::new(0);
    // Magnitude patterns 0 ..= 0x7fffffff in chunks; each magnitude is bracketed once per
    // destination and checked with both signs.
    const CHUNK: u64 = 1 << 22;
    let chunks = (1u64 << 31) / CHUNK;
    let done = AtomicU64::new(0);
    parallel(chunks as usize, |c| {
        let lo = c as u64 * CHUNK;
        let mut n = 0u64;
        let mut m = lo;
        while m < lo + CHUNK {
            let dec = decode(&F32, m);
            for (k, (dst, r, p, name)) in cases.iter().enumerate() {
                let d = models[k];
                let loc = match &dec.val {
                    Val::Num { mag, .. } => Some(locate(d, mag, r.integral)),
                    _ => None,
                };
                for sign in [0, 0x8000_0000u64] {
                    let bits = m | sign;
                    let mut dec = dec.clone();
                    if sign != 0 {
                        dec.val = match dec.val {
                            Val::Nan { payload, .. } => Val::Nan { neg: true, payload },
                            Val::Inf { .. } => Val::Inf { neg: true },
                            Val::Zero { .. } => Val::Zero { neg: true },
                            Val::Num { mag, .. } => Val::Num { neg: true, mag },
                        };
                        debug_assert_eq!(dec, decode(&F32, bits));
                    }
                    let want = match pre(&dec, d, p, None) {
                        Pre::Done(e) => e,
                        Pre::Round { neg, which, flags } => {
                            assert_eq!(which, Which::Source);
                            finish(d, neg, loc.as_ref().unwrap(), *r, p, flags)
                        }
                    };
                    let got = engine(&F32, bits, dst, *r, p);
                    bad.check(&F32, bits, dst, r, name, p, &want, &got);
                    n += 1;
                }
            }
            m += stride;
        }
        checked.fetch_add(n, AtOrd::Relaxed);
        let d = done.fetch_add(1, AtOrd::Relaxed) + 1;
        if d.is_multiple_of(32) {
            eprintln!(
                "f32 sweep: {d}/{chunks} chunks, {:.0?}, {} disagreements",
                start.elapsed(),
                bad.count()
            );
        }
    });
    let total = checked.load(AtOrd::Relaxed);
    eprintln!("f32 sweep: {total} conversions in {:.1?}", start.elapsed());
    bad.assert_none("f32 sweep", total);
}
