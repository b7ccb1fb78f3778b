//! The conformance kit against implementations written here, independently of the model:
//! f32 → bf16 by the usual integer tricks (round to nearest even by adding 0x7fff plus the
//! kept bit's parity), and the same with deliberate faults, each of which the check must
//! catch with its class. No expected answer is copied from gpucvt's output.

use gpucvt::vectors::{check, generate, Class, Request, Vectors};

/// f32 → bf16, round to nearest even, NaN → 0x7fff (the canonical NaN of PTX).
fn bf16_rne(x: u32) -> u64 {
    if (x & 0x7fff_ffff) > 0x7f80_0000 {
        return 0x7fff;
    }
    let lsb = (x >> 16) & 1;
    (x.wrapping_add(0x7fff + lsb) >> 16) as u64
}

/// The answers of `f` (one per case) for a one-operand form.
fn answers(v: &Vectors, f: impl Fn(u32) -> u64) -> Vec<Result<Vec<u64>, String>> {
    (0..v.cases())
        .map(|i| Ok(vec![f(v.case_inputs(i)[0] as u32)]))
        .collect()
}

fn bf16_vectors() -> Vectors {
    generate(&Request::new("cvt.rn.bf16.f32")).unwrap()
}

#[test]
fn an_independent_bf16_agrees() {
    let v = bf16_vectors();
    let r = check(&v, &answers(&v, bf16_rne), 5).unwrap();
    assert_eq!(r.agree, r.cases, "{}", r.to_text());
    assert!(r.cases > 100_000);
}

#[test]
fn a_dropped_tie_is_rounding() {
    let v = bf16_vectors();
    // Ties away from zero instead of to even.
    let rna = |x: u32| {
        if (x & 0x7fff_ffff) > 0x7f80_0000 {
            0x7fff
        } else {
            (x.wrapping_add(0x8000) >> 16) as u64
        }
    };
    let r = check(&v, &answers(&v, rna), 3).unwrap();
    assert!(r.disagree() > 0);
    assert_eq!(r.count(Class::Rounding), r.disagree(), "{}", r.to_text());
    assert!(r.shown[0].detail.contains("rna"), "{}", r.to_text());
}

#[test]
fn flushed_subnormals_are_subnormal() {
    let v = bf16_vectors();
    let ftz = |x: u32| {
        if x & 0x7f80_0000 == 0 {
            ((x >> 16) & 0x8000) as u64
        } else {
            bf16_rne(x)
        }
    };
    let r = check(&v, &answers(&v, ftz), 3).unwrap();
    assert!(r.disagree() > 0);
    assert_eq!(r.count(Class::Subnormal), r.disagree(), "{}", r.to_text());
}

#[test]
fn nan_encodings_and_signs_of_zero() {
    let v = bf16_vectors();
    // NaNs keep their payload (a plain shift): only NaN encodings differ.
    let keep = |x: u32| {
        if (x & 0x7fff_ffff) > 0x7f80_0000 {
            ((x >> 16) | 0x40) as u64
        } else {
            bf16_rne(x)
        }
    };
    let r = check(&v, &answers(&v, keep), 3).unwrap();
    assert!(r.disagree() > 0);
    assert_eq!(r.count(Class::NanEncoding), r.disagree(), "{}", r.to_text());
    let abs_zero = |x: u32| match bf16_rne(x) {
        0x8000 => 0,
        b => b,
    };
    let r = check(&v, &answers(&v, abs_zero), 3).unwrap();
    assert!(r.disagree() > 0);
    assert_eq!(r.count(Class::SignOfZero), r.disagree(), "{}", r.to_text());
}

/// f32 → bf16 stochastically rounded with a 16-bit random field `r` (added below the kept
/// bits, then truncated), saturating to ±max finite as `.satfinite` does.
fn bf16_sr(x: u32, r: u32) -> u64 {
    if (x & 0x7fff_ffff) > 0x7f80_0000 {
        return 0x7fff;
    }
    let sign = x & 0x8000_0000;
    let mag = x & 0x7fff_ffff;
    let b = if mag >= 0x7f80_0000 {
        0x7f7f
    } else {
        (mag + (r & 0xffff)) >> 16
    };
    (((sign >> 16) | b.min(0x7f7f)) & 0xffff) as u64
}

#[test]
fn rbits_read_from_the_wrong_half_are_named() {
    let v = generate(&Request::new("cvt.rs.satfinite.bf16x2.f32")).unwrap();
    assert_eq!(v.operands.len(), 3); // a, b, rbits
    let run = |swap: bool| -> Vec<Result<Vec<u64>, String>> {
        (0..v.cases())
            .map(|i| {
                let ops = v.case_inputs(i);
                let (a, b, r) = (ops[0] as u32, ops[1] as u32, ops[2] as u32);
                // PTX: a (the high half of d) takes rbits[31:16], b rbits[15:0].
                let (ra, rb) = if swap { (r, r >> 16) } else { (r >> 16, r) };
                Ok(vec![(bf16_sr(a, ra) << 16) | bf16_sr(b, rb)])
            })
            .collect()
    };
    let good = check(&v, &run(false), 3).unwrap();
    assert_eq!(good.agree, good.cases, "{}", good.to_text());
    let r = check(&v, &run(true), 3).unwrap();
    assert!(r.disagree() > 0);
    assert_eq!(r.count(Class::Rbits), r.disagree(), "{}", r.to_text());
    let rule = r.rbits.as_ref().unwrap();
    assert_eq!(
        rule.rule,
        "a: rbits[15:0], b: rbits[31:16]",
        "{}",
        r.to_text()
    );
    assert_eq!(rule.explains, rule.cases);
}

#[test]
fn saturation_against_overflow() {
    let v = generate(&Request::new("cvt.rn.satfinite.bf16.f32")).unwrap();
    // Overflow to infinity instead of saturating.
    let r = check(&v, &answers(&v, bf16_rne), 3).unwrap();
    assert!(r.disagree() > 0);
    assert_eq!(r.count(Class::Saturation), r.disagree(), "{}", r.to_text());
}

#[test]
fn the_hash_is_the_same_on_any_thread_count() {
    let mut req = Request::new("cvt.rs.satfinite.e4m3x4.f32");
    req.level = 2;
    req.seed = 11;
    req.count = Some(5000);
    let hash = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| generate(&req).unwrap().cases_sha256())
    };
    let one = hash(1);
    assert_eq!(one, hash(3));
    assert_eq!(one, hash(1));
    // And the seed matters.
    req.seed = 12;
    assert_ne!(one, generate(&req).unwrap().cases_sha256());
}

#[test]
fn small_sources_are_exhaustive_and_bad_requests_are_refused() {
    let v = generate(&Request::new("cvt.f32.f16")).unwrap();
    assert_eq!(v.cases(), 65536);
    let mut inputs: Vec<u64> = (0..v.cases()).map(|i| v.case_inputs(i)[0]).collect();
    inputs.sort_unstable();
    inputs.dedup();
    assert_eq!(inputs.len(), 65536);
    let mut req = Request::new("cvt.rn.f16.f32");
    req.level = 3;
    assert!(generate(&req).unwrap_err().to_string().contains("level 3"));
    assert!(generate(&Request::new("cvt.rn.f32.f16")).is_err());
    // Every level-1 case of a text file reads back with its answers.
    let v = generate(&Request::new("cvt.rn.satfinite.e4m3x2.f32")).unwrap();
    let (text, _) = v.to_text();
    let (back, lines) = gpucvt::vectors::read_text(&text).unwrap();
    assert_eq!(back.expected, v.expected);
    assert_eq!(back.inputs, v.inputs);
    assert_eq!(lines.len(), v.cases());
}
