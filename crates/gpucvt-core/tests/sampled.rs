//! Boundary-dense and random sampling of `f32` and `f64` sources (and, more lightly, of the
//! wide sources `tf32`, `s32`, `u32`, `s64`, `u64`) into every catalogue destination,
//! compared with the reference.
//!
//! For each destination:
//!
//! - boundary points: every representable value (all of them for destinations of at most 16
//!   bits; every binade boundary and its neighbourhood, the subnormal range and a few
//!   thousand random values for the wide ones), every exact midpoint between neighbours, the
//!   overflow threshold and the points past it, integers and half-integers for the integral
//!   roundings — each taken exactly in the source format where it is representable, together
//!   with the patterns ±1 and ±2 source ulps away, in both signs;
//! - zeros, infinities, and NaNs with payloads, in both signs, in every rounding and policy;
//! - one million seeded random source patterns, half `f32` and half `f64`: a third uniform
//!   bit patterns, a third with an exponent in or near the destination's range, a third a few
//!   ulps from a boundary point; the rounding (stochastic rounding with random bits and
//!   width) and the policy (a named one, or a random combination of every knob including a
//!   random scale) are drawn per sample.
//!
//! `GPUCVT_SAMPLES` changes the number of random samples per destination;
//! `GPUCVT_SAMPLED_DST` restricts the destinations; `GPUCVT_REPORT=path` writes every
//! disagreeing group to a file.

use gpucvt_reference::{reference, Rng};

use gpucvt_core::format::{Layout, CATALOGUE, F32, F64, S32, S64, TF32, U32, U64};
use gpucvt_core::{
    Format, IntNan, IntOverflow, NanResult, NoNanResult, Overflow, Policy, Rounding,
};
use num_bigint::BigInt;
use num_traits::{One, Zero};
use reference::*;
use std::sync::atomic::{AtomicU64, Ordering as AtOrd};
use std::time::Instant;

const SOURCES: [Format; 2] = [F32, F64];

fn samples_per_dst() -> usize {
    std::env::var("GPUCVT_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

fn selected_dsts() -> Vec<&'static Dst> {
    let filter = std::env::var("GPUCVT_SAMPLED_DST").unwrap_or_default();
    CATALOGUE
        .iter()
        .filter(|f| {
            filter.trim().is_empty()
                || filter
                    .split(',')
                    .any(|n| n.trim().eq_ignore_ascii_case(f.name))
        })
        .map(dst_model)
        .collect()
}

/// The positive pattern of `src` whose value is exactly `q`, if there is one.
fn exact_pattern(src: &Format, q: &Q) -> Option<u64> {
    if q.is_zero() {
        return Some(0);
    }
    let a = approx(q);
    let bits = if src.name == "f32" {
        let f = a as f32;
        if !f.is_finite() {
            return None;
        }
        f.to_bits() as u64
    } else {
        if !a.is_finite() {
            return None;
        }
        a.to_bits()
    };
    match decode(src, bits).val {
        Val::Num { neg: false, mag } if qcmp(&mag, q).is_eq() => Some(bits),
        _ => None,
    }
}

fn sign_bit(src: &Format) -> u64 {
    1u64 << (width_of(src) - 1)
}

/// Positive magnitudes around which a destination's results change.
fn boundary_points(d: &Dst, rng: &mut Rng) -> Vec<Q> {
    let mut pts: Vec<Q> = Vec::new();
    let half = |a: &Q, b: &Q| (a + b) / Q::from_integer(BigInt::from(2));
    let (p1, p2, p3) = d.grid_params();
    let vals: Vec<&Q> = d.table_values().collect();
    if !vals.is_empty() {
        // Every value, every midpoint, below the smallest and past the largest.
        pts.push(vals[0] / Q::from_integer(BigInt::from(2)));
        for w in vals.windows(2) {
            pts.push(w[0].clone());
            pts.push(half(w[0], w[1]));
        }
        let last = (*vals.last().unwrap()).clone();
        // The grid step past the end: the top binade's (floats) or the fixed step.
        let step = if d.float() {
            pow2(flog2(&last) - p1)
        } else {
            pow2(-p1)
        };
        for k in 0..6 {
            pts.push(&last + &step * Q::from_integer(BigInt::from(k)) / Q::from_integer(2.into()));
        }
        pts.push(&last * Q::from_integer(BigInt::from(2)));
        pts.push(&last * Q::from_integer(BigInt::from(3)));
    } else if d.float() {
        let (man, emin, emax) = (p1, p2, p3);
        // Subnormals and the bottom of the normal range.
        let tiny = pow2(emin - man);
        for k in [1i64, 2, 3, 5, 7] {
            pts.push(&tiny * Q::from_integer(BigInt::from(k)) / Q::from_integer(2.into()));
        }
        for e in emin..=emax + 2 {
            let p = pow2(e);
            let step = pow2(e.max(emin) - man);
            let below = pow2((e - 1).max(emin) - man);
            pts.push(p.clone());
            pts.push(&p + &step / Q::from_integer(2.into()));
            pts.push(&p + &step);
            pts.push(&p - &below / Q::from_integer(2.into()));
            pts.push(&p - &below);
        }
        pts.push(d.max.clone());
        let top = pow2(emax - man);
        pts.push(&d.max + &top / Q::from_integer(2.into()));
        pts.push(&d.max + &top);
        // Random values of the grid and the midpoints above them.
        for _ in 0..3000 {
            let e = emin + rng.below((emax - emin + 1) as u64) as i64;
            let m = (1u64 << man) | (rng.next_u64() & ((1u64 << man) - 1));
            let v = dyadic(BigInt::from(m), e - man);
            pts.push(&v + pow2(e - man - 1));
            pts.push(v);
        }
        // Integers and half-integers for the integral roundings.
        for k in 0..80 {
            let n = BigInt::from(rng.next_u64() >> rng.below(64));
            pts.push(Q::from_integer(n.clone()) + pow2(-1));
            pts.push(Q::from_integer(n));
            pts.push(pow2(k) + pow2(-1));
        }
        for e in [man, man + 1, man + 2] {
            for off in [-3i64, -2, -1, 1, 2, 3] {
                pts.push(pow2(e) + Q::new(BigInt::from(off), BigInt::from(2)));
            }
        }
    } else {
        // Wide integers: around 0, the range ends and the powers of two between.
        let mut bases = vec![Q::zero()];
        for e in [7i64, 8, 15, 16, 31, 32, 53, 54, 63, 64, 65] {
            bases.push(pow2(e));
        }
        for b in bases {
            for twice in -5i64..=5 {
                let v = &b + Q::new(BigInt::from(twice), BigInt::from(2));
                if v > Q::zero() {
                    pts.push(v);
                }
            }
        }
        for _ in 0..3000 {
            let n = BigInt::from(rng.next_u64() >> rng.below(64)) << (rng.below(3) as usize);
            pts.push(Q::from_integer(n.clone()) + pow2(-1));
            pts.push(Q::from_integer(n) + pow2(-(rng.below(8) as i64) - 1));
        }
    }
    pts.retain(|q| !q.is_zero());
    pts
}

/// A random rounding: one of the nine named ones, or stochastic with random bits and width.
fn random_rounding(rng: &mut Rng) -> Rounding {
    let all = roundings();
    let i = rng.below(all.len() as u64 + 2) as usize;
    if i < 9 {
        all[i]
    } else {
        Rounding::stochastic(rng.next_u64(), 1 + rng.below(64) as u32)
    }
}

/// A named policy or a random combination of every knob.
fn random_policy(rng: &mut Rng, named: &[NamedPolicy]) -> (&'static str, Policy) {
    if rng.below(2) == 0 {
        let np = named[rng.below(named.len() as u64) as usize];
        return (np.name, np.policy);
    }
    let nan = [
        NanResult::Canonical,
        NanResult::Payload,
        NanResult::Quieted,
        NanResult::SignedQuiet,
        NanResult::SignedCanonical,
        NanResult::NegativeCanonical,
    ][rng.below(6) as usize];
    let no_nan = [
        NoNanResult::LargestFinite,
        NoNanResult::NegativeZero,
        NoNanResult::OppositeZero,
    ][rng.below(3) as usize];
    let lowest_binade_up = rng.below(4) == 0;
    let unrepresentable_nan = rng.below(4) == 0;
    let mut b = |n: u64| rng.below(n) == 0;
    let p = Policy {
        flush_inputs: b(4),
        flush_outputs: b(4),
        sat: b(6),
        satfinite: b(3),
        relu: b(4),
        positive_zero: b(4),
        overflow: if b(2) {
            Overflow::Saturate
        } else {
            Overflow::Ieee
        },
        nan,
        no_nan,
        lowest_binade_up,
        unrepresentable_nan,
        int_nan: if b(2) { IntNan::HighBit } else { IntNan::Zero },
        int_overflow: if b(2) {
            IntOverflow::Wrap
        } else {
            IntOverflow::Clamp
        },
        scale: if b(2) { 0 } else { rng.below(41) as i32 - 20 },
    };
    ("random", p)
}

/// Layout numbers of a float source: (exponent bits, mantissa bits, bias).
fn src_float(src: &Format) -> (u32, u32, i64) {
    match src.layout {
        Layout::Float(l) => (l.exp_bits, l.man_bits, l.bias as i64),
        _ => unreachable!(),
    }
}

/// A source pattern with a random exponent in `[lo, hi]` (unbiased), random mantissa and
/// sign.
fn pattern_with_exponent(src: &Format, rng: &mut Rng, lo: i64, hi: i64) -> u64 {
    let (eb, mb, bias) = src_float(src);
    let e = lo + rng.below((hi - lo + 1) as u64) as i64;
    let field = (e + bias).clamp(0, (1i64 << eb) - 2) as u64;
    let man = rng.next_u64() & ((1u64 << mb) - 1);
    let sign = rng.below(2) << (eb + mb);
    sign | field << mb | man
}

/// A boundary point and its exact `f32` and `f64` patterns, where it has them.
type Point = (Q, [Option<u64>; 2]);

struct Run {
    bad: Mismatches,
    checked: AtomicU64,
}

impl Run {
    #[allow(clippy::too_many_arguments)]
    fn check(&self, src: &Format, bits: u64, d: &Dst, r: Rounding, name: &str, p: &Policy) {
        let want = reference_decoded(&decode(src, bits), d, r, p);
        let got = engine(src, bits, &d.format, r, p);
        self.bad
            .check(src, bits, &d.format, &r, name, p, &want, &got);
        self.checked.fetch_add(1, AtOrd::Relaxed);
    }
}

#[test]
fn f32_and_f64_sources_boundaries_specials_and_random() {
    let start = Instant::now();
    let dsts = selected_dsts();
    let named = policies();
    let all_roundings = roundings();
    let n_random = samples_per_dst();
    const CHUNK: usize = 50_000;
    let chunks = n_random.div_ceil(CHUNK);
    let run = Run {
        bad: Mismatches::default(),
        checked: AtomicU64::new(0),
    };
    // The boundary points of every destination, with their exact patterns in each source.
    let mut points: Vec<Vec<Point>> = vec![Vec::new(); dsts.len()];
    {
        let slots: Vec<std::sync::Mutex<&mut Vec<Point>>> =
            points.iter_mut().map(std::sync::Mutex::new).collect();
        parallel(dsts.len(), |k| {
            let pts = boundary_points(dsts[k], &mut Rng(0xb0b0 ^ k as u64));
            let with = pts
                .into_iter()
                .map(|q| {
                    let pats = [exact_pattern(&F32, &q), exact_pattern(&F64, &q)];
                    (q, pats)
                })
                .collect();
            **slots[k].lock().unwrap() = with;
        });
    }
    // Work items: per destination, the boundary points (item 0), the special values (item 1)
    // and the random chunks.
    let per_dst = 2 + chunks;
    parallel(dsts.len() * per_dst, |i| {
        let d = dsts[i / per_dst];
        let item = i % per_dst;
        let mut rng = Rng(0x5eed_0000 ^ (i as u64) << 20);
        match item {
            0 => {
                let mut c = 0usize;
                for (si, src) in SOURCES.into_iter().enumerate() {
                    for (_, pats) in &points[i / per_dst] {
                        let Some(p) = pats[si] else {
                            continue;
                        };
                        for (k, off) in [0i64, 1, -1, 2, -2].into_iter().enumerate() {
                            let Some(b) = p.checked_add_signed(off) else {
                                continue;
                            };
                            // Both signs of the point itself, one (alternating) of each
                            // neighbour.
                            let signs: &[u64] = if k == 0 { &[0, 1] } else { &[(c as u64) & 1] };
                            for &s in signs {
                                let b = b | (s * sign_bit(&src));
                                c += 1;
                                run.check(&src, b, d, Rounding::RN, "default", &named[0].policy);
                                let r = all_roundings[c % all_roundings.len()];
                                let np = &named[(c / all_roundings.len()) % named.len()];
                                run.check(&src, b, d, r, np.name, &np.policy);
                            }
                        }
                    }
                }
            }
            1 => {
                for src in SOURCES {
                    let (eb, mb, _) = src_float(&src);
                    let exp_all = ((1u64 << eb) - 1) << mb;
                    let man_all = (1u64 << mb) - 1;
                    let mut pats = vec![
                        0,
                        exp_all,
                        exp_all | 1u64 << (mb - 1),
                        exp_all | man_all,
                        exp_all | 1,
                        exp_all | 1u64 << (mb - 1) | 0x15,
                        exp_all | (rng.next_u64() & man_all).max(1),
                        exp_all | 1u64 << (mb - 1) | (rng.next_u64() & man_all),
                        1,
                        man_all,
                        1u64 << mb,
                        exp_all - 1,
                    ];
                    pats.extend((0..20).map(|_| exp_all | (rng.next_u64() & man_all).max(1)));
                    for p in pats {
                        for s in [0, sign_bit(&src)] {
                            for r in &all_roundings {
                                for np in &named {
                                    run.check(&src, p | s, d, *r, np.name, &np.policy);
                                }
                                for _ in 0..4 {
                                    let (name, pol) = random_policy(&mut rng, &named);
                                    run.check(&src, p | s, d, *r, name, &pol);
                                }
                            }
                        }
                    }
                }
            }
            _ => {
                let chunk = item - 2;
                let n = CHUNK.min(n_random - chunk * CHUNK);
                let pts = &points[i / per_dst];
                let (p1, p2, p3) = d.grid_params();
                let (lo, hi) = if d.float() {
                    if d.table_values().next().is_some() {
                        let first = flog2(d.table_values().next().unwrap());
                        (first - 3, flog2(&d.max) + 3)
                    } else {
                        (p2 - p1 - 3, p3 + 3)
                    }
                } else {
                    (-p1 - 3, width_of(&d.format) as i64 + 2)
                };
                for _ in 0..n {
                    let si = rng.below(2) as usize;
                    let src = SOURCES[si];
                    let mask = (1u128 << width_of(&src)) as u64;
                    let mask = mask.wrapping_sub(1);
                    let bits = match rng.below(3) {
                        0 => rng.next_u64() & mask,
                        1 => pattern_with_exponent(&src, &mut rng, lo, hi),
                        _ => {
                            let (_, pats) = &pts[rng.below(pts.len() as u64) as usize];
                            match pats[si] {
                                Some(p) => {
                                    let off = rng.below(7) as i64 - 3;
                                    let s = rng.below(2) * sign_bit(&src);
                                    p.checked_add_signed(off).unwrap_or(p) | s
                                }
                                None => pattern_with_exponent(&src, &mut rng, lo, hi),
                            }
                        }
                    };
                    let r = random_rounding(&mut rng);
                    let (name, p) = random_policy(&mut rng, &named);
                    run.check(&src, bits, d, r, name, &p);
                }
            }
        }
    });
    let total = run.checked.load(AtOrd::Relaxed);
    eprintln!(
        "sampled: {total} conversions into {} destinations in {:.1?}",
        dsts.len(),
        start.elapsed()
    );
    run.bad.assert_none("sampled (f32/f64 sources)", total);
}

#[test]
fn wide_integer_and_tf32_sources() {
    let start = Instant::now();
    let dsts = selected_dsts();
    let named = policies();
    let sources = [TF32, S32, U32, S64, U64];
    let per_dst = (samples_per_dst() / 10).max(1000);
    let run = Run {
        bad: Mismatches::default(),
        checked: AtomicU64::new(0),
    };
    parallel(dsts.len() * sources.len(), |i| {
        let d = dsts[i / sources.len()];
        let src = sources[i % sources.len()];
        let mut rng = Rng(0x1de5 ^ (i as u64) << 24);
        let w = width_of(&src);
        let mask = if w == 64 { !0 } else { (1u64 << w) - 1 };
        for _ in 0..per_dst / sources.len() {
            // Uniform patterns, and values of a random bit length (small magnitudes of both
            // signs, which is where most destinations are interesting).
            let bits = if rng.below(2) == 0 {
                rng.next_u64() & mask
            } else {
                let len = rng.below(w as u64 + 1) as u32;
                let v = if len == 0 {
                    0
                } else {
                    rng.next_u64() >> (64 - len)
                };
                if rng.below(2) == 0 {
                    v
                } else {
                    v.wrapping_neg() & mask
                }
            };
            let r = random_rounding(&mut rng);
            let (name, p) = random_policy(&mut rng, &named);
            run.check(&src, bits, d, r, name, &p);
        }
    });
    let total = run.checked.load(AtOrd::Relaxed);
    eprintln!(
        "sampled wide sources: {total} conversions in {:.1?}",
        start.elapsed()
    );
    run.bad
        .assert_none("sampled (tf32 and wide integer sources)", total);
}

#[test]
fn reference_is_exact_for_a_few_hand_values() {
    // The sampling helpers themselves: exact patterns only for representable values.
    assert_eq!(exact_pattern(&F32, &Q::one()), Some(0x3f80_0000));
    assert_eq!(exact_pattern(&F64, &pow2(-1074)), Some(1));
    assert_eq!(exact_pattern(&F32, &pow2(-150)), None);
    assert_eq!(
        exact_pattern(&F32, &(Q::one() + pow2(-24))),
        None,
        "1 + 2^-24 is not an f32"
    );
    assert_eq!(
        exact_pattern(&F64, &(Q::one() + pow2(-24))),
        Some(0x3ff0_0000_1000_0000)
    );
}
