//! Exhaustive comparison with the reference: every bit pattern of every catalogue format of
//! at most 16 bits, converted to every catalogue format, in every rounding of
//! [`reference::roundings`] (stochastic rounding with several random values and widths), under
//! the policy combinations of [`reference::policies`].
//!
//! The full cross product is 1.2 billion conversions (about two CPU-minutes for the engine
//! alone), so the default test runs it in full for every source of at most 8 bits, and for
//! the four 16-bit sources runs every pattern in every rounding under the default policy and
//! every pattern under every policy that applies to the destination (float or integer) in
//! one rounding that rotates with the pattern, so that each (policy, rounding) pair still
//! meets about 5,000 patterns of every 16-bit source for every destination. The ignored test
//! `full_cross_product` runs everything.
//!
//! The reference's expensive part — bracketing a magnitude on the destination grid — is done
//! once per (magnitude, destination, scale, integral grid) and shared by every pattern of that
//! magnitude, every rounding and every policy; the cheap input and output stages run for
//! each combination.
//!
//! `GPUCVT_EXHAUSTIVE_FULL=1` makes the default test run the full cross product too (about
//! 80 s on two idle cores); `GPUCVT_EXHAUSTIVE_SRC` / `GPUCVT_EXHAUSTIVE_DST`
//! (comma-separated format names) restrict the run, for debugging; `GPUCVT_REPORT=path`
//! writes every disagreeing group to a file.

use gpucvt_reference::{reference, Rng};

use gpucvt_core::format::CATALOGUE;
use gpucvt_core::{Format, Rounding};
use num_traits::One;
use reference::*;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering as AtOrd};
use std::time::Instant;

/// A source format with its patterns decoded and grouped by magnitude.
struct Source {
    format: Format,
    decoded: Vec<Decoded>,
    /// Distinct non-zero finite magnitudes, ascending, each with its patterns.
    mags: Vec<(Q, Vec<u64>)>,
    /// Patterns that are zeros, infinities or NaNs.
    others: Vec<u64>,
}

impl Source {
    fn new(format: Format) -> Source {
        let n = 1u64 << width_of(&format);
        let decoded: Vec<Decoded> = (0..n).map(|b| decode(&format, b)).collect();
        let mut finite: Vec<(Q, u64)> = Vec::new();
        let mut others = Vec::new();
        for (b, d) in decoded.iter().enumerate() {
            match &d.val {
                Val::Num { mag, .. } => finite.push((mag.clone(), b as u64)),
                _ => others.push(b as u64),
            }
        }
        finite.sort_by(|a, b| qcmp(&a.0, &b.0).then(a.1.cmp(&b.1)));
        let mut mags: Vec<(Q, Vec<u64>)> = Vec::new();
        for (m, b) in finite {
            match mags.last_mut() {
                Some((last, pats)) if qcmp(last, &m) == Ordering::Equal => pats.push(b),
                _ => mags.push((m, vec![b])),
            }
        }
        Source {
            format,
            decoded,
            mags,
            others,
        }
    }
}

fn selected(var: &str, f: &Format) -> bool {
    match std::env::var(var) {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .any(|n| n.trim().eq_ignore_ascii_case(f.name)),
        _ => true,
    }
}

#[test]
fn every_small_pattern_to_every_format() {
    run(std::env::var("GPUCVT_EXHAUSTIVE_FULL").is_ok_and(|v| v == "1"));
}

#[test]
#[ignore = "the full cross product takes several minutes on two cores"]
fn full_cross_product() {
    run(true);
}

/// Whether a policy can change the result for this kind of destination (the others are
/// still run against every source of at most 8 bits).
fn applies(np: &NamedPolicy, float_dst: bool) -> bool {
    match np.name {
        "pzo" | "overflow=saturate" | "nan=payload" => float_dst,
        "int_overflow=wrap" | "int_nan=highbit" => !float_dst,
        _ => true,
    }
}

fn run(full: bool) {
    let start = Instant::now();
    let sources: Vec<Source> = CATALOGUE
        .iter()
        .filter(|f| width_of(f) <= 16 && selected("GPUCVT_EXHAUSTIVE_SRC", f))
        .map(|f| Source::new(*f))
        .collect();
    let dsts: Vec<&'static Dst> = CATALOGUE
        .iter()
        .filter(|f| selected("GPUCVT_EXHAUSTIVE_DST", f))
        .map(dst_model)
        .collect();
    let policies = policies();
    let roundings = roundings();
    assert_eq!(roundings.len(), 13);
    assert_eq!(roundings[0], Rounding::RN);
    eprintln!(
        "exhaustive: {} sources, {} destinations, {} roundings, {} policies (setup {:.1?})",
        sources.len(),
        dsts.len(),
        roundings.len(),
        policies.len(),
        start.elapsed()
    );

    // Work items: (source, destination, chunk of magnitudes); chunk `None` = the zeros,
    // infinities and NaNs.
    const CHUNK: usize = 2048;
    let mut items: Vec<(usize, usize, Option<usize>)> = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        for di in 0..dsts.len() {
            items.push((si, di, None));
            for c in 0..s.mags.len().div_ceil(CHUNK) {
                items.push((si, di, Some(c)));
            }
        }
    }
    // Biggest first, so that the threads finish together.
    items.sort_by_key(|&(si, _, c)| (std::cmp::Reverse(c.map_or(0, |_| sources[si].mags.len())),));

    let bad = Mismatches::default();
    let checked = AtomicU64::new(0);
    let one = Q::one();
    let scaled_one = |d: &Dst| [locate(d, &one, false), locate(d, &one, true)];

    parallel(items.len(), |i| {
        let (si, di, chunk) = items[i];
        let s = &sources[si];
        let d = dsts[di];
        let src = &s.format;
        let dst = &d.format;
        let narrow = width_of(src) <= 8;
        let float_dst = matches!(dst.layout, gpucvt_core::format::Layout::Float(_));
        let mut n = 0u64;
        let mut compare = |bits: u64, r: &Rounding, np: &NamedPolicy, want: Expect| {
            let got = engine(src, bits, dst, *r, &np.policy);
            n += 1;
            bad.check(src, bits, dst, r, np.name, &np.policy, &want, &got);
        };
        match chunk {
            None => {
                for &bits in &s.others {
                    let dec = &s.decoded[bits as usize];
                    for np in &policies {
                        let Pre::Done(want) = pre(dec, d, &np.policy, None) else {
                            panic!(
                                "{} {bits:#x}: a zero, infinity or NaN needs no rounding",
                                src
                            )
                        };
                        for r in &roundings {
                            compare(bits, r, np, want);
                        }
                    }
                }
            }
            Some(c) => {
                let ones = scaled_one(d);
                let lo = c * CHUNK;
                let hi = (lo + CHUNK).min(s.mags.len());
                for (mag, patterns) in &s.mags[lo..hi] {
                    let xs = scaled(mag, SCALE);
                    let locs = [
                        locate(d, mag, false),
                        locate(d, mag, true),
                        locate(d, &xs, false),
                        locate(d, &xs, true),
                    ];
                    let above = [
                        qcmp(mag, &one) == Ordering::Greater,
                        qcmp(&xs, &one) == Ordering::Greater,
                    ];
                    for &bits in patterns {
                        let dec = &s.decoded[bits as usize];
                        for (pi, np) in policies.iter().enumerate() {
                            let every = full || narrow || pi == 0;
                            if !every && !applies(np, float_dst) {
                                continue;
                            }
                            let si = usize::from(np.policy.scale != 0);
                            assert!(np.policy.scale == 0 || np.policy.scale == SCALE);
                            let stage = pre(dec, d, &np.policy, Some(above[si]));
                            // One rounding per (pattern, policy), rotating through all of
                            // them, unless every one is run.
                            let h = Rng(bits << 8 | pi as u64).next_u64() as usize % 13;
                            let chosen = if every {
                                &roundings[..]
                            } else {
                                &roundings[h..=h]
                            };
                            for r in chosen {
                                let want = match stage {
                                    Pre::Done(e) => e,
                                    Pre::Round { neg, which, flags } => {
                                        let g = usize::from(r.integral);
                                        let loc = match which {
                                            Which::One => &ones[g],
                                            Which::Source => &locs[si * 2 + g],
                                        };
                                        finish(d, neg, loc, *r, &np.policy, flags)
                                    }
                                };
                                compare(bits, r, np, want);
                            }
                        }
                    }
                }
            }
        }
        checked.fetch_add(n, AtOrd::Relaxed);
    });
    let total = checked.load(AtOrd::Relaxed);
    eprintln!("exhaustive: {total} conversions in {:.1?}", start.elapsed());
    bad.assert_none("exhaustive", total);
}
