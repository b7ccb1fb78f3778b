//! `Quantizer` against an independent model of the definitions in `quant/mod.rs`, on random
//! and edge data: each element's block found from its multi-index, the scales computed in
//! f64 (f64 division and multiplication of f32 operands rounded once to f32 are correctly
//! rounded f32 operations), the element conversions by `gpucvt_reference`'s big-rational
//! model, the swizzled layout rebuilt from torchao's `to_blocked` reshape/permute
//! description, and the summary's statistics counted element by element from those codes
//! and scales.

use gpucvt_core::format::{Format, BF16, E2M1, E2M3, E3M2, E4M3, E5M2, F32};
use gpucvt_core::{Conversion, Policy, Rounding};
use gpucvt_reference::{exact_f64, reference, Rng, Val};
use gpucvt_tensor::chunk::Quantizer;
use gpucvt_tensor::scaling::{Block, BlockScaling, ScaleFormat, ScaleLayout, ScaleRule};

fn sat(scale: i32) -> Policy {
    Policy {
        satfinite: true,
        scale,
        ..Policy::default()
    }
}

/// The reference code of the f32 word `w` × 2^`scale`, RN, satfinite.
fn code(elem: &Format, w: u32, scale: i32) -> u8 {
    reference(&F32, w as u64, elem, Rounding::RN, &sat(scale)).bits as u8
}

/// Whether the big-rational model's conversion of `f32` pattern `w` (times 2^scale) into
/// `elem` saturated: its rounded value was beyond the largest finite one, or it was an
/// infinity, and `.satfinite` clamped it.
fn saturates(elem: &Format, w: u32, scale: i32) -> bool {
    reference(&F32, w as u64, elem, Rounding::RN, &sat(scale))
        .flags
        .saturated
}

/// The value of a code of `f` by the big-rational model's decoder (not the crate's tables).
fn value(f: &Format, bits: u64) -> f64 {
    match gpucvt_reference::decode(f, bits).val {
        Val::Nan { .. } => f64::NAN,
        Val::Inf { neg } => {
            if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        Val::Zero { neg } => {
            if neg {
                -0.0
            } else {
                0.0
            }
        }
        Val::Num { neg, mag } => {
            let m = exact_f64(&mag).expect("a narrow format's value is an f64");
            if neg {
                -m
            } else {
                m
            }
        }
    }
}

/// An f32 operation done in f64 and rounded once.
fn f32_of(v: f64) -> f32 {
    v as f32
}

/// floor(log2 |v|) of a non-zero finite f64 (every f32 is a normal f64).
fn exponent(v: f64) -> i32 {
    ((v.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023
}

fn is_pow2(v: f64) -> bool {
    v.abs().to_bits() & ((1u64 << 52) - 1) == 0
}

struct Elem {
    max: f64,
    emax: i32,
    mbits: i32,
}

fn elem_numbers(f: &Format) -> Elem {
    let (max, mbits) = match f.name {
        "e4m3" => (448.0, 3),
        "e5m2" => (57344.0, 2),
        "e2m3" => (7.5, 3),
        "e3m2" => (28.0, 2),
        "e2m1" => (6.0, 1),
        n => panic!("{n}"),
    };
    Elem {
        max,
        emax: exponent(max),
        mbits,
    }
}

/// The shared exponent of a ue8m0 scale by the rule's definition.
fn shared(rule: ScaleRule, e: &Elem, amax: f32) -> i32 {
    let a = amax as f64;
    let s = match rule {
        _ if a == 0.0 && rule != ScaleRule::Rceil => -127,
        ScaleRule::Floor => exponent(a) - e.emax,
        ScaleRule::Ceil => exponent(a) + !is_pow2(a) as i32 - e.emax,
        ScaleRule::Even => {
            // amax rounded half up to the element's mantissa bits.
            let ulp = 2f64.powi(exponent(a) - e.mbits);
            exponent((a / ulp + 0.5).floor() * ulp) - e.emax
        }
        ScaleRule::Rceil => {
            let q = f32_of(a / e.max) as f64;
            if q == 0.0 {
                -127
            } else {
                exponent(q) + !is_pow2(q) as i32
            }
        }
    };
    s.clamp(-127, 127)
}

/// The expected quantization: codes, row-major scales, second-level scale.
struct Expected {
    q: Vec<u8>,
    scales: Vec<u32>,
    s2: Option<f32>,
    stats: Counts,
    sum_abs_error: f64,
    sum_sq_error: f64,
    sum_sq_input: f64,
}

/// The summary's statistics, from the reference's codes and scales and the definitions in
/// `gpucvt_tensor::Stats`: an element's error is |value(code) × its block's factor − x|, the
/// factor being the scale's value (× the second level; 1 for a NaN scale).
#[derive(Debug, Default, PartialEq)]
struct Counts {
    elements: u64,
    nan: u64,
    nan_to_number: u64,
    overflow_to_inf: u64,
    saturated: u64,
    flushed_to_zero: u64,
    blocks: u64,
    nan_blocks: u64,
    error_elements: u64,
    max_abs_error: f64,
    max_rel_error: f64,
}

/// The scale index of every element, and the scale shape, from the multi-index.
fn block_of(shape: &[usize], block: Block, axis: i64) -> (Vec<usize>, Vec<usize>) {
    let nd = shape.len();
    let a = if axis < 0 { nd as i64 + axis } else { axis } as usize;
    let mut sshape = shape.to_vec();
    match block {
        Block::Len(n) => sshape[a] /= n as usize,
        Block::Row => sshape[a] = 1,
        Block::Tile(r, c) => {
            sshape[nd - 2] = shape[nd - 2].div_ceil(r as usize);
            sshape[nd - 1] = shape[nd - 1].div_ceil(c as usize);
        }
        Block::Tensor => sshape = vec![],
    }
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let mut idx = vec![0; nd];
        let mut rest = flat;
        for d in (0..nd).rev() {
            idx[d] = rest % shape[d];
            rest /= shape[d];
        }
        match block {
            Block::Len(n) => idx[a] /= n as usize,
            Block::Row => idx[a] = 0,
            Block::Tile(r, c) => {
                idx[nd - 2] /= r as usize;
                idx[nd - 1] /= c as usize;
            }
            Block::Tensor => idx.clear(),
        }
        out.push(idx.iter().zip(&sshape).fold(0, |acc, (&i, &d)| acc * d + i));
    }
    (out, sshape)
}

fn expected(x: &[u32], shape: &[usize], b: &BlockScaling, elem: &Format) -> Expected {
    let e = elem_numbers(elem);
    let (which, sshape) = block_of(shape, b.block, b.axis);
    let ns: usize = sshape.iter().product();
    let mut amax = vec![0f32; ns];
    let mut special = vec![false; ns];
    for (&w, &s) in x.iter().zip(&which) {
        let v = f32::from_bits(w);
        if v.is_finite() {
            amax[s] = amax[s].max(v.abs());
        } else {
            special[s] = true;
        }
    }
    let s2 = b.second_level.then(|| {
        // Over the blocks without NaN or infinity.
        let t = amax
            .iter()
            .zip(&special)
            .filter(|(_, &sp)| !sp)
            .fold(0f32, |m, (&a, _)| m.max(a));
        // 0 for an all-zero tensor; else at least 2^-121, where 2^121 / 2^-6 is still an f32.
        if t == 0.0 {
            0.0
        } else {
            f32_of(t as f64 / (448.0 * e.max)).max(2f32.powi(-121))
        }
    });
    // Per block: the scale bits, and how an element is turned into its code.
    #[derive(Clone, Copy)]
    enum How {
        Pow2(i32),
        Div(f32),
        Mul(f32),
    }
    let mut scales = vec![0u32; ns];
    let mut how = vec![How::Pow2(0); ns];
    for s in 0..ns {
        if special[s] {
            scales[s] = match b.format {
                ScaleFormat::Ue8m0 => 0xff,
                ScaleFormat::Ue4m3 => 0x7f,
                ScaleFormat::F32 => 0x7fc0_0000,
                ScaleFormat::Bf16 => 0x7fc0,
            };
            continue;
        }
        let a = amax[s] as f64;
        match b.format {
            ScaleFormat::Ue8m0 => {
                let k = shared(b.rule, &e, amax[s]);
                scales[s] = (k + 127) as u32;
                how[s] = How::Pow2(-k);
            }
            ScaleFormat::F32 => {
                let t = f32_of(a / e.max).max(f32::MIN_POSITIVE);
                scales[s] = t.to_bits();
                how[s] = How::Div(t);
            }
            ScaleFormat::Bf16 => {
                let t = f32_of(a / e.max);
                let bits = (reference(
                    &F32,
                    t.to_bits() as u64,
                    &BF16,
                    Rounding::RN,
                    &Policy::default(),
                )
                .bits as u32)
                    .max(0x0080);
                scales[s] = bits;
                how[s] = How::Div(f32::from_bits(bits << 16));
            }
            ScaleFormat::Ue4m3 => {
                let mut q = f32_of(a / e.max);
                if let Some(p) = s2 {
                    q = f32_of(q as f64 / p as f64);
                }
                if s2 == Some(0.0) {
                    // An all-zero tensor: scale 0, and every element ±0.
                    scales[s] = 0;
                    how[s] = How::Mul(0.0);
                    continue;
                }
                let q = q.clamp(0.015625, 448.0);
                let byte = reference(&F32, q.to_bits() as u64, &E4M3, Rounding::RN, &sat(0)).bits;
                scales[s] = byte as u32;
                let sv = value(&E4M3, byte);
                let r = match s2 {
                    Some(p) => f32_of(f32_of(1.0 / p as f64) as f64 / sv),
                    None => f32_of(1.0 / sv),
                };
                how[s] = How::Mul(r);
            }
        }
    }
    let q: Vec<u8> = x
        .iter()
        .zip(&which)
        .map(|(&w, &s)| match how[s] {
            How::Pow2(k) => code(elem, w, k),
            How::Div(t) => code(
                elem,
                f32_of(f32::from_bits(w) as f64 / t as f64).to_bits(),
                0,
            ),
            How::Mul(r) => code(
                elem,
                f32_of(f32::from_bits(w) as f64 * r as f64).to_bits(),
                0,
            ),
        })
        .collect();
    // The statistics, element by element.
    let factor: Vec<f64> = (0..ns)
        .map(|s| match (special[s], how[s]) {
            (true, _) => 1.0,
            (false, How::Pow2(k)) => 2f64.powi(-k),
            (false, How::Div(t)) => t as f64,
            (false, How::Mul(_)) => value(&E4M3, scales[s] as u64) * s2.map_or(1.0, |p| p as f64),
        })
        .collect();
    let mut st = Counts {
        elements: x.len() as u64,
        blocks: ns as u64,
        nan_blocks: special.iter().filter(|&&sp| sp).count() as u64,
        ..Counts::default()
    };
    let (mut sum, mut sq, mut signal) = (0.0, 0.0, 0.0);
    for ((&w, &s), &c) in x.iter().zip(&which).zip(&q) {
        let v = f32::from_bits(w) as f64;
        let out = value(elem, c as u64);
        if special[s] {
            // A NaN scale: the element's value is NaN, whatever its code.
            st.nan += 1;
        } else if out.is_nan() {
            st.nan += 1;
        } else if v.is_nan() {
            st.nan_to_number += 1;
        } else if out.is_infinite() {
            st.overflow_to_inf += v.is_finite() as u64;
        } else {
            // The element as it was converted: scaled by a power of two exactly, or the
            // f32 quotient or product.
            let saturated = match how[s] {
                How::Pow2(k) => saturates(elem, w, k),
                How::Div(t) => saturates(elem, f32_of(v / t as f64).to_bits(), 0),
                How::Mul(r) => saturates(elem, f32_of(v * r as f64).to_bits(), 0),
            };
            if saturated {
                st.saturated += 1;
            } else if out == 0.0 && v != 0.0 {
                st.flushed_to_zero += 1;
            }
            if v.is_finite() {
                let err = (out * factor[s] - v).abs();
                st.error_elements += 1;
                sum += err;
                st.max_abs_error = st.max_abs_error.max(err);
                sq += err * err;
                signal += v * v;
                if v != 0.0 {
                    st.max_rel_error = st.max_rel_error.max(err / v.abs());
                }
            }
        }
    }
    Expected {
        q,
        scales,
        s2,
        stats: st,
        sum_abs_error: sum,
        sum_sq_error: sq,
        sum_sq_input: signal,
    }
}

/// Random data with the edges in some of its blocks: per element a magnitude class.
fn data(rng: &mut Rng, n: usize, elem_max: f32) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::with_capacity(n);
    // Runs of 1 to 40 elements share a kind, so whole blocks are zero, tiny, huge, ….
    while v.len() < n {
        let kind = rng.below(12);
        let run = 1 + rng.below(40) as usize;
        let e = rng.below(60) as i32 - 30;
        for _ in 0..run.min(n - v.len()) {
            let sign = (rng.below(2) as u32) << 31;
            let mant = rng.next_u32() & 0x7f_ffff;
            let w = match kind {
                0 => 0,
                1 => (1 + rng.below(0x7f_ffff)) as u32, // f32 subnormal
                2 => ((127 + e) as u32) << 23,          // a power of two
                3 => (elem_max * 2f32.powi(e)).to_bits(), // elem max × 2^e
                4 => (elem_max * 2f32.powi(e)).to_bits() + 1,
                5 => (((1 + rng.below(253)) as u32) << 23) | mant, // any normal
                6 if rng.below(20) == 0 => 0x7fc0_0000,
                7 if rng.below(20) == 0 => 0x7f80_0000,
                _ => ((127 + e + rng.below(6) as i32) as u32) << 23 | mant,
            };
            v.push(w | sign);
        }
    }
    v
}

/// torchao's `to_blocked` as its reshape/permute steps: zero-pad to 128·⌈R/128⌉ ×
/// 4·⌈C/4⌉, view (R'/128, 128, C'/4, 4), permute to (R'/128, C'/4, 128, 4), each tile as
/// (4, 32, 4) with its first two axes swapped, flattened.
fn to_blocked(s: &[u32], rows: usize, cols: usize) -> Vec<u32> {
    let (rp, cp) = (rows.div_ceil(128) * 128, cols.div_ceil(4) * 4);
    let at = |r: usize, c: usize| {
        if r < rows && c < cols {
            s[r * cols + c]
        } else {
            0
        }
    };
    let mut out = Vec::with_capacity(rp * cp);
    for rb in 0..rp / 128 {
        for cb in 0..cp / 4 {
            for j in 0..32 {
                for i in 0..4 {
                    for cc in 0..4 {
                        out.push(at(rb * 128 + i * 32 + j, cb * 4 + cc));
                    }
                }
            }
        }
    }
    out
}

fn check(seed: u64, shape: &[usize], b: BlockScaling, elem: &Format) {
    let mut rng = Rng(seed);
    let n: usize = shape.iter().product();
    let e = elem_numbers(elem);
    let x = data(&mut rng, n, e.max as f32);
    let conv = Conversion::new(F32, *elem, Rounding::RN, sat(0));
    let shape64: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let qz = Quantizer::new(conv, &b, &shape64).unwrap();
    let s2 = qz.tensor_scale(&x);
    let mut q = vec![0u8; n];
    let mut scales = vec![0u32; qz.scale_count()];
    let stats = qz.quantize(&x, s2, None, &mut q, &mut scales).unwrap();
    let want = expected(&x, shape, &b, elem);
    let what = format!("{shape:?} {} {} {}", b.describe(), elem.name, seed);
    assert_eq!(s2.map(f32::to_bits), want.s2.map(f32::to_bits), "{what}");
    assert_eq!(scales.len(), want.scales.len(), "{what}");
    for (i, (g, w)) in scales.iter().zip(&want.scales).enumerate() {
        assert_eq!(g, w, "{what}: scale {i}");
    }
    for (i, (g, w)) in q.iter().zip(&want.q).enumerate() {
        assert_eq!(g, w, "{what}: element {i} = {:e}", f32::from_bits(x[i]));
    }
    assert_eq!(stats.blocks as usize, want.scales.len(), "{what}");
    let got = Counts {
        elements: stats.elements,
        nan: stats.nan,
        nan_to_number: stats.nan_to_number,
        overflow_to_inf: stats.overflow_to_inf,
        saturated: stats.saturated,
        flushed_to_zero: stats.flushed_to_zero,
        blocks: stats.blocks,
        nan_blocks: stats.nan_blocks,
        error_elements: stats.error_elements,
        max_abs_error: stats.max_abs_error,
        max_rel_error: stats.max_rel_error,
    };
    assert_eq!(got, want.stats, "{what}: statistics");
    // The sum is added in another order (lanes, pieces): equal up to rounding.
    let tol = 1e-12 * want.sum_abs_error.max(f64::MIN_POSITIVE);
    assert!(
        (stats.sum_abs_error - want.sum_abs_error).abs() <= tol,
        "{what}: sum of errors {} against {}",
        stats.sum_abs_error,
        want.sum_abs_error
    );
    for (g, w, name) in [
        (stats.sum_sq_error, want.sum_sq_error, "squared errors"),
        (stats.sum_sq_input, want.sum_sq_input, "squared inputs"),
    ] {
        assert!(
            (g - w).abs() <= 1e-12 * w.max(f64::MIN_POSITIVE),
            "{what}: {name} {g} against {w}"
        );
    }
    // The SQNR from the reference's sums.
    let sqnr =
        (want.sum_sq_error > 0.0).then(|| 10.0 * (want.sum_sq_input / want.sum_sq_error).log10());
    match (stats.sqnr_db, sqnr) {
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{what}: SQNR {g} against {w}"
        ),
        (g, w) => assert_eq!(g, w, "{what}: SQNR"),
    }
    if b.layout == ScaleLayout::Swizzled {
        // A 2-D scale matrix: rows × columns.
        let rows: usize = shape[..shape.len() - 1].iter().product();
        let cols = want.scales.len() / rows;
        let sw = to_blocked(&want.scales, rows, cols);
        assert_eq!(qz.lay_out(&scales), sw, "{what}: swizzled");
        assert_eq!(qz.read_layout(&sw).unwrap(), scales, "{what}: read back");
    }
}

fn base(block: Block, format: ScaleFormat) -> BlockScaling {
    BlockScaling {
        block,
        axis: -1,
        format,
        rule: ScaleRule::Floor,
        second_level: false,
        layout: ScaleLayout::Rows,
    }
}

#[test]
fn mx_every_element_and_rule() {
    for (k, elem) in [E4M3, E5M2, E2M3, E3M2, E2M1].iter().enumerate() {
        for rule in ScaleRule::ALL {
            for seed in 0..4 {
                let b = BlockScaling::mx(32, rule);
                check(seed * 10 + k as u64, &[16, 96], b, elem);
                // Blocks along axis 0 of a 3-D tensor.
                check(seed + 100, &[64, 3, 5], BlockScaling { axis: 0, ..b }, elem);
            }
        }
    }
}

#[test]
fn f32_and_bf16_scales_on_tiles_rows_and_tensors() {
    for format in [ScaleFormat::F32, ScaleFormat::Bf16] {
        for elem in [E4M3, E5M2, E2M1] {
            for seed in 0..3 {
                // Ragged tiles on 2-D and 3-D shapes.
                check(seed, &[37, 45], base(Block::Tile(16, 32), format), &elem);
                check(seed, &[3, 20, 33], base(Block::Tile(8, 8), format), &elem);
                check(seed, &[5, 7, 9], base(Block::Row, format), &elem);
                check(
                    seed,
                    &[5, 7, 9],
                    BlockScaling {
                        axis: 1,
                        ..base(Block::Row, format)
                    },
                    &elem,
                );
                check(seed, &[3, 4, 5], base(Block::Tensor, format), &elem);
                check(seed, &[96], base(Block::Len(32), format), &elem);
            }
        }
    }
}

#[test]
fn ue8m0_tiles_and_rows() {
    for rule in ScaleRule::ALL {
        check(
            7,
            &[37, 45],
            BlockScaling {
                rule,
                ..base(Block::Tile(16, 16), ScaleFormat::Ue8m0)
            },
            &E4M3,
        );
        check(
            8,
            &[6, 40],
            BlockScaling {
                rule,
                ..base(Block::Row, ScaleFormat::Ue8m0)
            },
            &E2M1,
        );
    }
}

#[test]
fn nvfp4_one_and_two_levels() {
    for second_level in [false, true] {
        for seed in 0..6 {
            let b = BlockScaling {
                second_level,
                ..base(Block::Len(16), ScaleFormat::Ue4m3)
            };
            check(seed, &[8, 64], b, &E2M1);
            check(seed, &[2, 3, 32], b, &E2M1);
            check(seed, &[2, 32, 5], BlockScaling { axis: 1, ..b }, &E2M1);
            check(
                seed,
                &[130, 80],
                BlockScaling {
                    layout: ScaleLayout::Swizzled,
                    ..b
                },
                &E2M1,
            );
        }
    }
}

#[test]
fn swizzled_mx_with_padding_both_ways() {
    for (rows, cols) in [(130, 64), (1, 32), (128, 128), (257, 96)] {
        let b = BlockScaling {
            layout: ScaleLayout::Swizzled,
            ..BlockScaling::mx(32, ScaleRule::Rceil)
        };
        check(rows as u64, &[rows, cols], b, &E4M3);
    }
}

#[test]
fn edge_blocks_exactly() {
    // One block each: all zero, a NaN, an infinity, amax a power of two, amax the element's
    // max, amax subnormal, the smallest subnormal, f32 max.
    let blocks: [&[f32]; 8] = [
        &[0.0, -0.0],
        &[1.0, f32::NAN],
        &[1.0, f32::NEG_INFINITY],
        &[0.25, -0.125],
        &[448.0, 1.0],
        &[1e-40, -3e-41],
        &[f32::from_bits(1), 0.0],
        &[f32::MAX, -1.0],
    ];
    let mut x = Vec::new();
    for blk in blocks {
        for i in 0..32 {
            x.push(blk[i % blk.len()].to_bits());
        }
    }
    for elem in [E4M3, E2M1] {
        for rule in ScaleRule::ALL {
            for format in [
                ScaleFormat::Ue8m0,
                ScaleFormat::F32,
                ScaleFormat::Bf16,
                ScaleFormat::Ue4m3,
            ] {
                for second_level in [false, format == ScaleFormat::Ue4m3] {
                    let b = BlockScaling {
                        rule,
                        second_level,
                        ..base(Block::Len(32), format)
                    };
                    let shape = [8usize, 32];
                    let conv = Conversion::new(F32, elem, Rounding::RN, sat(0));
                    let qz = Quantizer::new(conv, &b, &[8, 32]).unwrap();
                    let s2 = qz.tensor_scale(&x);
                    let mut q = vec![0u8; x.len()];
                    let mut scales = vec![0u32; 8];
                    let st = qz.quantize(&x, s2, None, &mut q, &mut scales).unwrap();
                    let want = expected(&x, &shape, &b, &elem);
                    let what = format!("{} {}", b.describe(), elem.name);
                    assert_eq!(scales, want.scales, "{what}");
                    assert_eq!(q, want.q, "{what}");
                    assert_eq!(st.nan_blocks, 2, "{what}");
                    // The all-zero block quantizes to zeros of the input's signs, never NaN.
                    assert!(
                        q[..32].iter().all(|&c| value(&elem, c as u64) == 0.0),
                        "{what}"
                    );
                }
            }
        }
    }
}

#[test]
fn ragged_tiles_of_a_3d_tensor_stay_in_their_matrix() {
    // Two 5×4 matrices in 4×4 tiles: each matrix's last tile has one row. Its band must not
    // take the next matrix's rows (here a NaN), and every scale must be written.
    let mut x: Vec<u32> = (0..40).map(|i| (1.0 + i as f32).to_bits()).collect();
    x[20] = f32::NAN.to_bits();
    let b = base(Block::Tile(4, 4), ScaleFormat::F32);
    let conv = Conversion::new(F32, E4M3, Rounding::RN, sat(0));
    let qz = Quantizer::new(conv, &b, &[2, 5, 4]).unwrap();
    let mut q = vec![0u8; 40];
    let mut scales = vec![0u32; 4];
    let st = qz.quantize(&x, None, None, &mut q, &mut scales).unwrap();
    let want = expected(&x, &[2, 5, 4], &b, &E4M3);
    assert_eq!(scales, want.scales);
    assert_eq!(f32::from_bits(scales[1]), 20.0 / 448.0);
    assert!(f32::from_bits(scales[2]).is_nan());
    assert_eq!(q, want.q);
    assert_eq!((st.blocks, st.nan_blocks), (4, 1));
    // Dequantization pairs each element with its own block's scale.
    let (which, _) = block_of(&[2, 5, 4], b.block, b.axis);
    let back = qz.dequantize(&q, &scales, None).unwrap();
    for i in 0..40 {
        let s = f32::from_bits(scales[which[i]]) as f64;
        let v = value(&E4M3, q[i] as u64) * s;
        assert!(back[i] == v || (back[i].is_nan() && v.is_nan()), "{i}");
    }
}

/// Quantizes `x` of `shape` with `b` (e2m1 elements) and checks it against the reference:
/// codes, scales, second level and statistics; every block whose scale is not NaN
/// dequantizes to finite values, an all-zero block to zeros. Returns the codes, scales and
/// second level.
fn exactly(
    x: &[u32],
    shape: &[usize],
    b: BlockScaling,
    what: &str,
) -> (Vec<u8>, Vec<u32>, Option<f32>) {
    let conv = Conversion::new(F32, E2M1, Rounding::RN, sat(0));
    let shape64: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let qz = Quantizer::new(conv, &b, &shape64).unwrap();
    let s2 = qz.tensor_scale(x);
    let mut q = vec![0u8; x.len()];
    let mut scales = vec![0u32; qz.scale_count()];
    let st = qz.quantize(x, s2, None, &mut q, &mut scales).unwrap();
    let want = expected(x, shape, &b, &E2M1);
    let what = format!("{what} {}", b.describe());
    assert_eq!(
        s2.map(f32::to_bits),
        want.s2.map(f32::to_bits),
        "{what}: s2"
    );
    assert_eq!(scales, want.scales, "{what}: scales");
    assert_eq!(q, want.q, "{what}: codes");
    let got = Counts {
        elements: st.elements,
        nan: st.nan,
        nan_to_number: st.nan_to_number,
        overflow_to_inf: st.overflow_to_inf,
        saturated: st.saturated,
        flushed_to_zero: st.flushed_to_zero,
        blocks: st.blocks,
        nan_blocks: st.nan_blocks,
        error_elements: st.error_elements,
        max_abs_error: st.max_abs_error,
        max_rel_error: st.max_rel_error,
    };
    assert_eq!(got, want.stats, "{what}: statistics");
    let (which, _) = block_of(shape, b.block, b.axis);
    let back = qz.dequantize(&q, &scales, s2).unwrap();
    for (i, (&v, &w)) in back.iter().zip(x).enumerate() {
        let s = scales[which[i]];
        if s & 0x7f == 0x7f {
            assert!(v.is_nan(), "{what}: element {i} of a NaN-scale block");
            continue;
        }
        assert!(v.is_finite(), "{what}: element {i} = {v}");
        if f32::from_bits(w) == 0.0 {
            assert_eq!(v, 0.0, "{what}: element {i}");
        }
    }
    (q, scales, s2)
}

/// NVFP4 near zero (issue 41 §3): an all-zero tensor, an all-subnormal bf16 tensor with
/// negative zeros, a zero block beside an infinite one, an all-subnormal f32 tensor, and
/// tensors whose amax lies around 2688 × 2^-121 (the second level's clamp) with small blocks
/// (whose reciprocal factor overflowed with a clamp at 2^-126), against the reference, with
/// one and two levels; the cases also against hand-computed bytes.
#[test]
fn nvfp4_near_zero_exactly() {
    let nv = |second_level| BlockScaling {
        second_level,
        ..base(Block::Len(16), ScaleFormat::Ue4m3)
    };
    let f = |v: f32| v.to_bits();
    // zeros((1, 16)): TransformerEngine's rule, s2 = 0, scale 0x00, elements 0.
    let zeros = vec![0u32; 16];
    let (q, s, s2) = exactly(&zeros, &[1, 16], nv(true), "zeros");
    assert_eq!((q, s, s2), (vec![0; 16], vec![0], Some(0.0)));
    let (q, s, _) = exactly(&zeros, &[1, 16], nv(false), "zeros");
    assert_eq!((q, s), (vec![0; 16], vec![0x08]));
    // bf16 subnormals m × 2^-133 and negative zeros: s2 = 2^-121, s = 2^-6, so the factor is
    // 2^127 and an element is m / 64 rounded to e2m1 (ties to even).
    let m: [u16; 16] = [
        0x0000, 0x8000, 0x0001, 0x8001, 0x0010, 0x8010, 0x0020, 0x8020, 0x0030, 0x8030, 0x0040,
        0x8040, 0x0060, 0x8060, 0x007f, 0x807f,
    ];
    let bf: Vec<u32> = m.iter().map(|&h| (h as u32) << 16).collect();
    let (q, s, s2) = exactly(&bf, &[1, 16], nv(true), "bf16 subnormals");
    let codes = [0, 8, 0, 8, 0, 8, 1, 9, 2, 10, 2, 10, 3, 11, 4, 12];
    assert_eq!(
        (q, s, s2),
        (codes.to_vec(), vec![0x08], Some(2f32.powi(-121)))
    );
    // [[0]*16 + [-inf]*16]: the zero block zeros, the infinite one the NaN scale.
    let mut zi = vec![0u32; 16];
    zi.extend([f(f32::NEG_INFINITY); 16]);
    let (q, s, s2) = exactly(&zi, &[1, 32], nv(true), "zero and -inf");
    let mut codes = vec![0u8; 16];
    codes.extend([0xf; 16]);
    assert_eq!((q, s, s2), (codes, vec![0x00, 0x7f], Some(0.0)));
    exactly(&zi, &[1, 32], nv(false), "zero and -inf");
    // arange(1, 17) * 1e-42: every element (below 2^-128 after scaling) flushes to zero.
    let tiny: Vec<u32> = (1..=16).map(|k| f((k as f64 * 1e-42) as f32)).collect();
    let (q, s, s2) = exactly(&tiny, &[1, 16], nv(true), "f32 subnormals");
    assert_eq!((q, s, s2), (vec![0; 16], vec![0x08], Some(2f32.powi(-121))));
    exactly(&tiny, &[1, 16], nv(false), "f32 subnormals");
    // Around the clamp: amax 2688 × 2^-121 (s2 exactly 2^-121), one ulp either side, and
    // 1e-34; each with blocks of 1e-38 and 1e-39 (small scales), zeros, subnormals and -0.
    let edge = 2688.0 * 2f32.powi(-121);
    for top in [
        edge,
        f32::from_bits(edge.to_bits() - 1),
        f32::from_bits(edge.to_bits() + 1),
        1e-34,
        1e-36,
        f32::MIN_POSITIVE,
    ] {
        let mut x = vec![f(top), f(-top / 3.0)];
        x.extend((0..14).map(|i| f(top * i as f32 / 16.0)));
        x.extend((0..16).map(|i| f(1e-38 * (i as f32 - 7.5))));
        x.extend((0..16).map(|i| f(1e-39 * (i as f32 - 7.5))));
        x.extend((0..16).map(|i| if i % 2 == 0 { 0 } else { 0x8000_0000 }));
        x.extend((0..16).map(|i| (i * 0x1234) as u32 | ((i as u32 & 1) << 31)));
        for second_level in [true, false] {
            let (_, _, s2) = exactly(&x, &[1, 80], nv(second_level), &format!("top {top:e}"));
            if second_level {
                assert!(s2.unwrap() >= 2f32.powi(-121), "{top:e}");
            }
        }
    }
    // The largest amax: the factor (1/s2)/s is at its smallest (about 2^-126).
    let big: Vec<u32> = (0..32)
        .map(|i| f(f32::MAX / (1 + i % 16) as f32) | ((i as u32 & 1) << 31))
        .collect();
    exactly(&big, &[2, 16], nv(true), "f32 max");
}

/// The audit of issue 41 §3: no scale format, rule or second level makes an element factor
/// (or a dequantization factor) infinite or NaN, at every edge of the f32 range — zero, the
/// smallest subnormal, the largest subnormal, the smallest normal, 1, the element's max,
/// 2^127, f32 max — for every element format the quantizer takes (f16 and bf16 elements,
/// whose max × 448 is beyond f32, included). Blocks with NaN or infinity get the NaN scale
/// and no scaling.
#[test]
fn no_factor_is_infinite_or_nan() {
    use gpucvt_core::format::F16;
    use gpucvt_tensor::scaling::{block_scale, scale_value, second_level_scale, Divisor, Element};
    let amaxes = [
        0u32,
        1,
        0x007f_ffff,
        0x0080_0000,
        0x0300_0000,
        0x3f80_0000,
        0x7f00_0000,
        0x7f7f_ffff,
    ];
    for elem in [E4M3, E5M2, E2M3, E3M2, E2M1, F16, BF16] {
        let e = Element::of(&elem).unwrap();
        let mut seconds: Vec<Option<f32>> = vec![None];
        for &m in &amaxes {
            seconds.push(Some(second_level_scale(f32::from_bits(m), e.max)));
        }
        for format in ScaleFormat::ALL {
            for rule in ScaleRule::ALL {
                for &second in &seconds {
                    if second.is_some() && format != ScaleFormat::Ue4m3 {
                        continue;
                    }
                    let s2 = second.map_or(1.0, |s| s as f64);
                    for &m in &amaxes {
                        let what = format!(
                            "{} {} {} {second:?} amax {m:#x}",
                            elem.name,
                            format.name(),
                            rule.name()
                        );
                        let (bits, d) = block_scale(format, rule, &e, m, second);
                        match d {
                            Divisor::Pow2(k) => assert!((-127..=127).contains(&k), "{what}"),
                            Divisor::Div(v) => assert!(v.is_finite() && v > 0.0, "{what}: {v}"),
                            Divisor::Mul(r) => assert!(r.is_finite() && r >= 0.0, "{what}: {r}"),
                        }
                        let v = scale_value(format, bits) * s2;
                        assert!(v.is_finite() && v >= 0.0, "{what}: scale {v}");
                        // The block's largest element, scaled, stays finite.
                        let x = f32::from_bits(m);
                        let y = match d {
                            Divisor::Pow2(k) => (x as f64 * 2f64.powi(k)) as f32,
                            Divisor::Div(v) => x / v,
                            Divisor::Mul(r) => x * r,
                        };
                        assert!(!y.is_nan(), "{what}: {y}");
                    }
                    for m in [0x7f80_0000u32, 0x7fc0_0000] {
                        let (bits, d) = block_scale(format, rule, &e, m, second);
                        assert!(scale_value(format, bits).is_nan(), "{m:#x}");
                        let unscaled = [Divisor::Pow2(0), Divisor::Div(1.0), Divisor::Mul(1.0)];
                        assert!(unscaled.contains(&d), "{m:#x}: {d:?}");
                    }
                }
            }
        }
    }
}

/// A second-level scale given to the quantizer must keep the factor finite: 0 or at least
/// 2^-121 (what `tensor_scale` gives); a smaller, negative, infinite or NaN one is refused.
#[test]
fn a_second_level_scale_below_the_clamp_is_refused() {
    let b = BlockScaling {
        second_level: true,
        ..base(Block::Len(16), ScaleFormat::Ue4m3)
    };
    let conv = Conversion::new(F32, E2M1, Rounding::RN, sat(0));
    let qz = Quantizer::new(conv, &b, &[1, 16]).unwrap();
    let x: Vec<u32> = (0..16).map(|i| (i as f32 * 1e-40).to_bits()).collect();
    let (mut q, mut s) = (vec![0u8; 16], vec![0u32; 1]);
    for bad in [1e-40, 2f32.powi(-122), -1.0, f32::INFINITY, f32::NAN] {
        let e = qz
            .quantize(&x, Some(bad), None, &mut q, &mut s)
            .unwrap_err();
        assert!(e.to_string().contains("at least 2^-121"), "{bad}: {e}");
    }
    for ok in [0.0, 2f32.powi(-121), 1.0] {
        qz.quantize(&x, Some(ok), None, &mut q, &mut s).unwrap();
    }
}
