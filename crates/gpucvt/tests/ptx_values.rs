//! Every legal PTX `cvt` / `cvt.pack` form, evaluated by gpucvt's PTX dialect, against the
//! independent big-rational reference (`gpucvt-reference`) driven by a model of PTX written
//! here from the specification (`ptx-cvt.md` §4): the packing table of §4.1 as explicit bit
//! ranges, the modifier rules, the random-bit layout of §4.14, the scale factors of §4.13 and
//! `cvt.pack`'s clamping in plain integer arithmetic.
//!
//! Inputs: every pattern of every lane for 8- and 16-bit sources; boundary-dense plus seeded
//! random samples for 32- and 64-bit sources.

use gpucvt::core::format::{self, Format};
use gpucvt::core::{IntNan, IntOverflow, NanResult, Policy, Rounding};
use gpucvt::ptx::check::legal_forms;
use gpucvt::ptx::eval::evaluate;
use gpucvt::ptx::target::Target;
use gpucvt::ptx::{CvtForm, PtxType, RoundMod, Scaled};
use gpucvt_reference::{reference, Rng};
use std::collections::BTreeSet;

/// Where a destination lane's source comes from: operand index (0 = a, 1 = b, 2 = e, 3 = f),
/// the bit range in that operand, and the destination bit range.
#[derive(Clone, Copy, Debug)]
struct Wire {
    operand: usize,
    src_lo: u32,
    src_bits: u32,
    dst_lo: u32,
    dst_bits: u32,
}

const fn w(operand: usize, src_hi: u32, src_lo: u32, dst_hi: u32, dst_lo: u32) -> Wire {
    Wire {
        operand,
        src_lo,
        src_bits: src_hi - src_lo + 1,
        dst_lo,
        dst_bits: dst_hi - dst_lo + 1,
    }
}

/// §4.1, written out: the first operand (or the high half of a packed source) goes to the
/// high bits.
fn wiring(d: PtxType, a: PtxType) -> Vec<Wire> {
    use PtxType::*;
    let packed_src = a.lanes() > 1;
    let abits = a.bits();
    match d {
        F16x2 | Bf16x2 if !packed_src => vec![w(0, 31, 0, 31, 16), w(1, 31, 0, 15, 0)],
        F16x2 | Bf16x2 => {
            // Up-conversions: a's upper lane → d[31:16].
            let half = abits / 2;
            vec![w(0, abits - 1, half, 31, 16), w(0, half - 1, 0, 15, 0)]
        }
        E4m3x2 | E5m2x2 | Ue8m0x2 | Ue5m3x2 | S2f6x2 if !packed_src => {
            vec![w(0, 31, 0, 15, 8), w(1, 31, 0, 7, 0)]
        }
        E4m3x2 | E5m2x2 | Ue8m0x2 | Ue5m3x2 | S2f6x2 => {
            vec![w(0, 31, 16, 15, 8), w(0, 15, 0, 7, 0)]
        }
        E2m3x2 | E3m2x2 if !packed_src => vec![w(0, 31, 0, 13, 8), w(1, 31, 0, 5, 0)],
        E2m3x2 | E3m2x2 => vec![w(0, 31, 16, 13, 8), w(0, 15, 0, 5, 0)],
        E2m1x2 if !packed_src => vec![w(0, 31, 0, 7, 4), w(1, 31, 0, 3, 0)],
        E2m1x2 => vec![w(0, 31, 16, 7, 4), w(0, 15, 0, 3, 0)],
        E2m1x4 => vec![
            w(0, 31, 0, 15, 12),
            w(1, 31, 0, 11, 8),
            w(2, 31, 0, 7, 4),
            w(3, 31, 0, 3, 0),
        ],
        E4m3x4 | E5m2x4 => vec![
            w(0, 31, 0, 31, 24),
            w(1, 31, 0, 23, 16),
            w(2, 31, 0, 15, 8),
            w(3, 31, 0, 7, 0),
        ],
        E2m3x4 | E3m2x4 => vec![
            w(0, 31, 0, 29, 24),
            w(1, 31, 0, 21, 16),
            w(2, 31, 0, 13, 8),
            w(3, 31, 0, 5, 0),
        ],
        _ => vec![w(0, abits - 1, 0, d.bits() - 1, 0)],
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn fmt_of(t: PtxType) -> Format {
    t.lane_format().expect("numeric type")
}

fn is_int(f: &Format) -> bool {
    !f.is_float() && f.is_integer()
}

/// The PTX modifiers as core policy (§3, §4.2–§4.13, §11, §12).
fn policy(form: &CvtForm, src: &Format, dst: &Format) -> Policy {
    let mut p = Policy {
        sat: form.sat,
        satfinite: form.satfinite,
        relu: form.relu,
        positive_zero: form.pzo,
        ..Policy::default()
    };
    if form.ftz {
        // Only f32 operands are flushed; f32 → f16 inputs are not (measured, §11).
        p.flush_inputs = form.atype == PtxType::F32 && form.dtype != PtxType::F16;
        p.flush_outputs = form.dtype == PtxType::F32;
    }
    if form.scaled == Some(Scaled::N1Ue8m0) {
        p.flush_inputs = true; // §12 item 3
    }
    if is_int(src) && is_int(dst) {
        p.int_overflow = IntOverflow::Wrap; // chop, unless .sat
    }
    if *src == format::F64 || (is_int(dst) && dst.width() == 64) {
        p.int_nan = IntNan::HighBit; // §4.4
    }
    if *src == format::BF16 && (*dst == format::F32 || *dst == format::F64) {
        p.nan = NanResult::Payload; // choice: bf16 widening is a shift
    }
    p
}

fn rounding(form: &CvtForm) -> Rounding {
    match form.rounding {
        None | Some(RoundMod::Rn) => Rounding::RN,
        Some(RoundMod::Rna) => Rounding::RNA,
        Some(RoundMod::Rz) => Rounding::RZ,
        Some(RoundMod::Rm) => Rounding::RM,
        Some(RoundMod::Rp) => Rounding::RP,
        Some(RoundMod::Rni) => Rounding::RNI,
        Some(RoundMod::Rzi) => Rounding::RZI,
        Some(RoundMod::Rmi) => Rounding::RMI,
        Some(RoundMod::Rpi) => Rounding::RPI,
        Some(RoundMod::Rs) => Rounding::stochastic(0, 32),
    }
}

/// §4.14: the random field of each lane (lane index in wiring order).
fn rbits_field(d: PtxType, lane: usize, rbits: u64) -> (u64, u32) {
    let take = |lo: u32, bits: u32| ((rbits >> lo) & ((1 << bits) - 1), bits);
    match d {
        PtxType::F16x2 => [take(16, 13), take(0, 13)][lane],
        PtxType::Bf16x2 => [take(16, 16), take(0, 16)][lane],
        PtxType::E2m1x4 => [take(24, 8), take(8, 8), take(16, 8), take(0, 8)][lane],
        _ => [take(24, 8), take(16, 8), take(8, 8), take(0, 8)][lane],
    }
}

/// What the operands are: numeric sources, then rbits, then the scale factor.
struct Case {
    sources: Vec<u64>,
    rbits: Option<u64>,
    scale: Option<u64>,
}

fn operands(c: &Case) -> Vec<u64> {
    let mut v = c.sources.clone();
    v.extend(c.rbits);
    v.extend(c.scale);
    v
}

fn expected(form: &CvtForm, c: &Case) -> u64 {
    let src = fmt_of(form.atype);
    let dst = fmt_of(form.dtype);
    let mut out = 0u64;
    let base_policy = policy(form, &src, &dst);
    let scaled =
        form.scaled.is_some() || form.dtype == PtxType::S2f6x2 || form.atype == PtxType::S2f6x2;
    let down = dst.width() < src.width();
    for (lane, wire) in wiring(form.dtype, form.atype).iter().enumerate() {
        let mut bits = (c.sources[wire.operand] >> wire.src_lo) & mask(wire.src_bits);
        let mut lane_src = src;
        let mut p = base_policy;
        if scaled {
            let e = match (form.scaled, c.scale) {
                (Some(Scaled::N1Ue8m0), s) => s.unwrap_or(0x7f) & 0xff,
                (_, s) => (s.unwrap_or(0x7f7f) >> if lane == 0 { 8 } else { 0 }) & 0xff,
            };
            if e == 0xff {
                lane_src = format::F32;
                bits = 0x7fc0_0000;
            } else {
                let k = e as i32 - 127;
                p.scale = if down { -k } else { k };
            }
        }
        let mut r = rounding(form);
        if form.rounding == Some(RoundMod::Rs) {
            let (random, width) = rbits_field(form.dtype, lane, c.rbits.unwrap_or(0));
            r = Rounding::stochastic(random, width);
        }
        let e = reference(&lane_src, bits, &dst, r, &p);
        out |= (e.bits & mask(wire.dst_bits)) << wire.dst_lo;
    }
    out
}

/// `cvt.pack` (§4.16) in plain integers.
fn expected_pack(form: &CvtForm, a: u64, b: u64, c: Option<u64>) -> u64 {
    let (lo, hi, size): (i64, i64, u32) = match form.dtype {
        PtxType::U16 => (0, 65535, 16),
        PtxType::S16 => (-32768, 32767, 16),
        PtxType::U8 => (0, 255, 8),
        PtxType::S8 => (-128, 127, 8),
        PtxType::U4 => (0, 15, 4),
        PtxType::S4 => (-8, 7, 4),
        PtxType::U2 => (0, 3, 2),
        PtxType::S2 => (-2, 1, 2),
        t => panic!("not a pack type {t:?}"),
    };
    let clamp = |v: u64| ((v as u32 as i32 as i64).clamp(lo, hi) as u64) & ((1 << size) - 1);
    let td = (clamp(a) << size) | clamp(b);
    match c {
        Some(c) => ((c << (2 * size)) | td) & 0xffff_ffff,
        None => td,
    }
}

/// Boundary-dense samples of a 32- or 64-bit source format.
fn samples(f: &Format, rng: &mut Rng, random: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::new();
    let w = f.width();
    if f.is_float() {
        let (e_bits, m_bits) = if w == 64 { (11u32, 52u32) } else { (8, 23) };
        for e in 0..(1u64 << e_bits) {
            // Binade ends and a few interior points of every binade, both signs.
            let near_interesting = e < 8
                || e >= (1 << e_bits) - 8
                || (e as i64 - ((1 << (e_bits - 1)) - 1)).abs() < 40;
            if !near_interesting && e % 16 != 0 {
                continue;
            }
            for m in [
                0u64,
                1,
                2,
                (1 << m_bits) - 1,
                1 << (m_bits - 1),
                (1 << (m_bits - 1)) + 1,
                (1 << (m_bits - 1)) - 1,
                rng.next_u64() & ((1 << m_bits) - 1),
                // Ties and near-ties at the 16-, 8- and 4-bit rounding positions.
                1 << (m_bits - 11),
                (1 << (m_bits - 11)) + 1,
                1 << (m_bits - 8),
                3 << (m_bits - 8),
                (1 << (m_bits - 4)) | 1,
                1 << (m_bits - 3),
                1 << (m_bits - 2),
            ] {
                let bits = (e << m_bits) | m;
                v.push(bits);
                v.push(bits | 1 << (w - 1));
            }
        }
    } else {
        for k in 0..w {
            let b = 1u64 << k;
            v.extend([b, b - 1, b + 1, b.wrapping_neg(), (!b) & f.mask()]);
        }
        v.extend([0, 1, f.mask(), f.mask() - 1]);
    }
    for _ in 0..random {
        v.push(rng.next_u64());
    }
    let mask = f.mask();
    let mut v: Vec<u64> = v.into_iter().map(|x| x & mask).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn all_forms() -> Vec<CvtForm> {
    let mut set = BTreeSet::new();
    let mut forms = Vec::new();
    for t in Target::all() {
        for f in legal_forms(t, t.max_version()) {
            if set.insert(f.spelling()) {
                forms.push(f);
            }
        }
    }
    forms
}

fn check_form(form: &CvtForm, rng: &mut Rng) -> Result<usize, String> {
    let mut count = 0;
    let fail = |c: &Case, got: u64, want: u64| {
        Err(format!(
            "{}: operands {:x?} rbits {:?} scale {:?}: gpucvt {got:#x}, reference model {want:#x}",
            form.spelling(),
            c.sources,
            c.rbits,
            c.scale
        ))
    };
    if form.pack {
        let ints = samples(&format::S32, rng, 200);
        for (i, &a) in ints.iter().enumerate() {
            let b = ints[(i * 7 + 3) % ints.len()];
            let c = form.ctype.map(|_| rng.next_u64() & 0xffff_ffff);
            let mut ops = vec![a, b];
            ops.extend(c);
            let got = evaluate(form, &ops).map_err(|e| e.to_string())?.bits;
            let want = expected_pack(form, a, b, c);
            if got != want {
                return Err(format!(
                    "{}: {ops:x?}: gpucvt {got:#x}, model {want:#x}",
                    form.spelling()
                ));
            }
            count += 1;
        }
        return Ok(count);
    }
    let src = fmt_of(form.atype);
    let n_sources = wiring(form.dtype, form.atype)
        .iter()
        .map(|w| w.operand + 1)
        .max()
        .unwrap_or(1);
    let lane_bits = src.width();
    let a_bits = form.atype.bits();
    // Source operand values: exhaustive per lane for ≤ 16-bit lanes.
    let sources: Vec<Vec<u64>> = if lane_bits <= 16 {
        let all = 1u64 << lane_bits;
        if form.atype.lanes() > 1 {
            // Packed: every value in every lane at once (a bijection pairs the lanes).
            if a_bits <= 16 {
                (0..(1u64 << a_bits)).map(|a| vec![a]).collect()
            } else {
                (0..all)
                    .map(|v| {
                        let other = (v.wrapping_mul(0x9e37) ^ 0x5a5a) & (all - 1);
                        vec![(v << lane_bits) | other]
                    })
                    .collect()
            }
        } else {
            (0..all)
                .map(|v| {
                    (0..n_sources)
                        .map(|k| (v.wrapping_add(k as u64 * 0x3b1)) & (all - 1))
                        .collect()
                })
                .collect()
        }
    } else {
        let s = samples(&src, rng, 3000);
        (0..s.len())
            .map(|i| {
                (0..n_sources)
                    .map(|k| s[(i + k * (s.len() / 4 + 1)) % s.len()])
                    .collect()
            })
            .collect()
    };
    let takes_rbits = form.rounding == Some(RoundMod::Rs);
    let scales = [0x7f7fu64, 0x8000, 0x7e81, 0x00ff, 0xff00, 0x9060, 0x0101];
    for (i, srcs) in sources.into_iter().enumerate() {
        let rbits = takes_rbits.then(|| rng.next_u64() & 0xffff_ffff);
        let scale = form.scaled.map(|s| {
            let v = scales[i % scales.len()];
            if s == Scaled::N1Ue8m0 {
                v & 0xff
            } else {
                v
            }
        });
        let c = Case {
            sources: srcs,
            rbits,
            scale,
        };
        let ops = operands(&c);
        let got = evaluate(form, &ops).map_err(|e| format!("{}: {e}", form.spelling()))?;
        let want = expected(form, &c);
        if got.bits != want {
            return fail(&c, got.bits, want);
        }
        count += 1;
    }
    Ok(count)
}

#[test]
fn every_legal_form_agrees_with_the_reference_model() {
    let forms = all_forms();
    assert!(forms.len() > 1000, "only {} legal forms", forms.len());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let chunks: Vec<Vec<CvtForm>> = (0..threads)
        .map(|t| forms.iter().skip(t).step_by(threads).copied().collect())
        .collect();
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .enumerate()
            .map(|(t, chunk)| {
                s.spawn(move || {
                    let mut rng = Rng(0x1234_5678_9abc_def1 ^ t as u64);
                    let mut n = 0;
                    let mut errors = Vec::new();
                    for f in chunk {
                        match check_form(f, &mut rng) {
                            Ok(k) => n += k,
                            Err(e) => errors.push(e),
                        }
                    }
                    (n, errors)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total: usize = results.iter().map(|r| r.0).sum();
    let errors: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    for e in errors.iter().take(40) {
        eprintln!("{e}");
    }
    assert!(
        errors.is_empty(),
        "{} of {} forms disagree ({} evaluations)",
        errors.len(),
        forms.len(),
        total
    );
    eprintln!("{} forms, {} evaluations", forms.len(), total);
}

/// Hand-checked vectors from the specification's examples.
#[test]
fn vectors_from_the_spec() {
    let f = |text: &str| {
        gpucvt::ptx::parse::parse_instruction(text)
            .unwrap_or_else(|d| panic!("{text}: {d:?}"))
            .form
    };
    let cases: &[(&str, &[u64], u64)] = &[
        // §12 item 7: ue8m0 rp/rz.
        ("cvt.rp.ue8m0x2.f32", &[0x3f80_0008, 0x3f80_0001], 0x8080),
        ("cvt.rz.ue8m0x2.f32", &[0x3f80_0008, 0x3f80_0001], 0x7f7f),
        ("cvt.rp.ue8m0x2.f32", &[0x0040_0000, 0x0020_0000], 0x0000),
        ("cvt.rp.ue8m0x2.f32", &[0x0040_0001, 0x0080_0001], 0x0102),
        ("cvt.rp.ue8m0x2.f32", &[0x3fc0_0000, 0xbfc0_0000], 0x8080),
        // §4.6 / §11: f16 overflow is IEEE.
        ("cvt.rn.f16.f32", &[0x477f_f000], 0x7c00),
        ("cvt.rz.f16.f32", &[0x477f_f000], 0x7bff),
        ("cvt.rn.satfinite.f16.f32", &[0x7f80_0000], 0x7bff),
        // §11: .ftz does not flush f32 → f16 inputs: +subnormal rounds up to 0x0001.
        ("cvt.rp.ftz.f16.f32", &[0x0000_0001], 0x0001),
        // §4.4: NaN → integer.
        ("cvt.rzi.s32.f32", &[0x7fc0_0000], 0),
        ("cvt.rzi.u8.f64", &[0x7ff8_0000_0000_0000], 0x80),
        ("cvt.rzi.s64.f32", &[0x7fc0_0000], 0x8000_0000_0000_0000),
        // §4.2: chop and saturate.
        ("cvt.s16.u32", &[0x0001_8000], 0x8000),
        ("cvt.sat.u8.s32", &[0xffff_fffb], 0),
        ("cvt.sat.s8.u8", &[200], 127),
        // §4.8: e2m1 NaN → +MAX_NORM, -0.1 → -0.
        (
            "cvt.rn.satfinite.e2m1x2.f32",
            &[0x7fc0_0000, 0xbdcc_cccd],
            0x78,
        ),
        // §4.10: bf16x2 ← ue8m0x2.
        ("cvt.rn.bf16x2.ue8m0x2", &[0x00ff], 0x0040_7fff),
        // §4.16: the cvt.pack example shape.
        (
            "cvt.pack.sat.u8.s32.b32",
            &[300, 0xffff_ffff, 0xabcd],
            0xabcd_ff00,
        ),
        ("cvt.pack.sat.s16.s32", &[0x8000, 0xffff_0000], 0x7fff_8000),
    ];
    for (text, ops, want) in cases {
        let got = evaluate(&f(text), ops).unwrap().bits;
        assert_eq!(got, *want, "{text} {ops:x?}: got {got:#x}, want {want:#x}");
    }
}
