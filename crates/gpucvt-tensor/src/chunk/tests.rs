use super::*;
use crate::chunk::decode::{Decoder, DstTable};
use crate::chunk::pack::{pack, unpack};
use crate::chunk::plan::Plan;
use crate::chunk::stats::{key, key_above, key_below, Chunk};
use crate::dtype::Packing;
use crate::{ScaleRule, Stats};
use gpucvt_core::convert::{Conversion, Flags, Overflow};
use gpucvt_core::format::{Format, BF16, F32, TF32, UE8M0};
use gpucvt_core::round::{Direction, Rounding};
use gpucvt_kernels::InstructionSet;

use gpucvt_core::format::{E2M1, E2M3, E3M2, E4M3, E5M2, F16, S8, U8};
use gpucvt_core::Policy;

/// Inputs that exercise every class: NaNs, infinities, zeros, subnormals, the largest
/// values of the destinations and just beyond them, values rounding to the largest
/// finite value, values underflowing to zero — then pseudo-random encodings.
fn tricky(n: usize) -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0x0000_0000,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001,
        0x7f80_0001,
        0x0000_0001,
        0x8000_0001,
        0x0040_0000,
        0x807f_ffff,
        0x0080_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f7f_0000,
        0x7f7f_8000,
        0xff7f_7fff,
    ];
    for x in [
        448.0f32, 449.0, 463.9, 464.0, 480.0, -448.0, -470.0, 57344.0, 61440.0, 65504.0, 65520.0,
        6.0, 6.5, 7.0, -6.1, 1.0, -1.0, 0.5, 1.0e-3, -1.0e-3, 1.0e-40, 127.4, 127.5, 128.0, -128.5,
        -129.0, 255.5, 256.0, 2e-3, 9.7e-4, 1.9e-3, 3e38, -3e38,
    ] {
        v.push(x.to_bits());
    }
    let mut i = 0u64;
    while v.len() < n {
        let r = splitmix64(i) as u32;
        // Mostly moderate magnitudes, some anything.
        v.push(if i.is_multiple_of(4) {
            r
        } else {
            (r & 0x8fff_ffff) | 0x3000_0000
        });
        i += 1;
    }
    v.truncate(n);
    v
}

/// The statistics computed the straightforward way: both sides decoded by the core,
/// classified by the definitions of [`Stats`] (saturation by the core's own flag), the errors summed in the lanes of the
/// engine (element `i` of a block in lane `i mod 8`).
fn reference(plan: &Plan, src: &[u32], dst: &[u64], scales: &[u8], bsize: usize) -> Stats {
    let (sf, df) = (plan.conv.src, plan.conv.dst);
    let mut st = Stats {
        elements: src.len() as u64,
        ..Stats::default()
    };
    if plan.blocks.is_some() {
        st.blocks = scales.len() as u64;
        st.nan_blocks = scales.iter().filter(|&&s| s == 0xff).count() as u64;
    }
    let mut sum = [0.0f64; 8];
    let mut max = [0.0f64; 8];
    let (mut sq, mut signal, mut rel) = ([0.0f64; 8], [0.0f64; 8], 0.0f64);
    for (i, (&x, &y)) in src.iter().zip(dst).enumerate() {
        let k = match scales.get(i / bsize) {
            // A NaN scale: the element's value is NaN, whatever its code.
            Some(&0xff) => {
                st.nan += 1;
                continue;
            }
            None => 0,
            Some(&s) => 127 - s as i32,
        };
        let a = sf.decode(x as u64).to_f64_lossy();
        let b = df.decode(y).to_f64_lossy();
        if b.is_nan() {
            st.nan += 1;
        } else if a.is_nan() {
            st.nan_to_number += 1;
        } else if b.is_infinite() {
            if !a.is_infinite() {
                st.overflow_to_inf += 1;
            }
        } else {
            if really_saturated(&plan.conv, x as u64, a, k) {
                st.saturated += 1;
            }
            if a.is_finite() {
                if b == 0.0 && a != 0.0 && !(plan.conv.policy.relu && a < 0.0) {
                    st.flushed_to_zero += 1;
                }
                let e = (b * 2f64.powi(-k) - a).abs();
                st.error_elements += 1;
                let l = (i % bsize) % 8;
                sum[l] += e;
                max[l] = max[l].max(e);
                sq[l] += e * e;
                signal[l] += a * a;
                if a != 0.0 {
                    rel = rel.max(e / a.abs());
                }
            }
        }
    }
    st.sum_abs_error = sum.iter().sum();
    st.max_abs_error = max.iter().fold(0.0, |m: f64, &x| m.max(x));
    st.sum_sq_error = sq.iter().sum();
    st.sum_sq_input = signal.iter().sum();
    st.max_rel_error = rel;
    st.derive();
    st
}

/// Whether saturation changed the element `x` (value `a`) scaled by 2^k, by the exact core:
/// converted without `.sat`/`.satfinite` and with overflow judged on the rounded value
/// (`Overflow::Infinite`), the result overflowed, or (under `.sat`) left [0, 1]; an
/// infinity that became a number. Stochastic rounding's outcome depends on random bits the
/// statistics do not see: there, an input beyond the range counts.
fn really_saturated(conv: &Conversion, x: u64, a: f64, k: i32) -> bool {
    let p = conv.policy;
    if p.relu && a < 0.0 {
        return false;
    }
    if a.is_infinite() {
        return true;
    }
    let scaled = a * 2f64.powi(k);
    let max = conv.dst.decode(conv.dst.max_finite_bits()).to_f64_lossy();
    if let Direction::Stochastic { .. } = conv.rounding.direction {
        return match p.sat {
            true => !(0.0..=1.0).contains(&scaled),
            false => scaled.abs() > max,
        };
    }
    let mut c = *conv;
    c.policy.scale += k;
    c.policy.sat = false;
    c.policy.satfinite = false;
    c.policy.overflow = Overflow::Infinite;
    let o = c.apply(x);
    let v = c.dst.decode(o.bits).to_f64_lossy();
    o.flags.contains(Flags::OVERFLOW)
        || (p.sat && c.dst.is_float() && !v.is_nan() && !(0.0..=1.0).contains(&v))
}

fn check(conv: Conversion, block: Option<(u64, ScaleRule)>) {
    let n = 4099usize - (block.is_some() as usize) * 3;
    let src = tricky(n);
    check_on(conv, block, src.clone());
    // Without NaNs and infinities (the blocks' shortcut).
    let finite = src
        .iter()
        .map(|&x| {
            if x & 0x7f80_0000 == 0x7f80_0000 {
                0x3f80_0000
            } else {
                x
            }
        })
        .collect();
    check_on(conv, block, finite);
}

fn check_on(conv: Conversion, block: Option<(u64, ScaleRule)>, src: Vec<u32>) {
    let n = src.len();
    let dst_pack = Packing::Bytes(crate::dtype::container_bytes(&conv.dst));
    let plan = Plan::new(conv, Packing::Bytes(4), dst_pack, block, 7);
    assert!(
        plan.counter.fast.is_some(),
        "{conv:?}: the fast statistics apply"
    );
    let bytes: Vec<u8> = src.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut out = vec![0u8; plan.dst_pack.bytes_for(n as u64) as usize];
    let (mut stats, scales) = plan.convert_chunk(&bytes, n as u64, 0, &mut out);
    same_on_every_isa(&plan, block, &bytes, 0, (&out, &stats, &scales));
    let cb = crate::dtype::container_bytes(&conv.dst);
    let words: Vec<u64> = out
        .chunks_exact(cb)
        .map(|c| c.iter().rev().fold(0u64, |w, &b| w << 8 | b as u64))
        .collect();
    assert_eq!(words.len(), n);
    let bsize = block.map_or(n, |b| b.0 as usize);
    let want = reference(&plan, &src, &words, &scales, bsize);
    // Compare the sums through `merge`, which also derives the mean.
    let mut got = Stats::default();
    got.merge(&stats);
    let mut w = Stats::default();
    w.merge(&want);
    assert_eq!(got, w, "{conv:?} {block:?}");
    assert!(got.saturated + got.flushed_to_zero > 0);
    // And the general decoders agree too, on the blocks whose scale is not NaN (those of a
    // NaN scale are all NaN).
    let mut nan_scaled = 0u64;
    let (mut kept_src, mut kept_words, mut ks) = (Vec::new(), Vec::new(), Vec::new());
    if block.is_some() {
        for (j, &s) in scales.iter().enumerate() {
            let r = j * bsize..((j + 1) * bsize).min(n);
            if s == 0xff {
                nan_scaled += r.len() as u64;
            } else {
                kept_src.extend_from_slice(&src[r.clone()]);
                kept_words.extend_from_slice(&words[r]);
                ks.push(127 - s as i32);
            }
        }
    } else {
        (kept_src, kept_words, ks) = (src.clone(), words.clone(), vec![0]);
    }
    let mut g = Stats {
        elements: n as u64,
        blocks: got.blocks,
        nan_blocks: got.nan_blocks,
        nan: nan_scaled,
        ..Stats::default()
    };
    let (sd, dd) = (Decoder::new(&conv.src), Decoder::new(&conv.dst));
    plan.counter.generic_stats(
        &mut g,
        &sd,
        &dd,
        Chunk {
            src: &kept_src,
            dst: &kept_words,
            ks: &ks,
            bsize,
        },
    );
    stats.mean_abs_error = 0.0;
    stats.sqnr_db = None;
    g.mean_abs_error = 0.0;
    assert_eq!(stats, g, "{conv:?} {block:?}: general decoders");
}

/// The engine's vectorized loops compiled for the baseline target and for AVX2 (where
/// the CPU has it) give the words, statistics and scales `want` of the best version.
fn same_on_every_isa(
    plan: &Plan,
    block: Option<(u64, ScaleRule)>,
    bytes: &[u8],
    first: u64,
    want: (&[u8], &Stats, &[u8]),
) {
    let n = bytes.len() as u64 / 4;
    for isa in [InstructionSet::Baseline, InstructionSet::Avx2] {
        let p =
            Plan::new(plan.conv, plan.src_pack, plan.dst_pack, block, plan.stream).with_isa(isa);
        let mut out = vec![0u8; want.0.len()];
        let (stats, scales) = p.convert_chunk(bytes, n, first, &mut out);
        // (Through `Debug`: a NaN mean compares equal to itself there.)
        assert_eq!(
            format!("{:?}", (&out[..], &stats, &scales[..])),
            format!("{want:?}"),
            "{:?} on {isa:?}",
            plan.conv
        );
    }
}

fn conv(dst: Format, rounding: Rounding, p: Policy) -> Conversion {
    Conversion::new(F32, dst, rounding, p)
}

#[test]
fn fast_statistics_equal_the_reference() {
    let sf = Policy {
        satfinite: true,
        ..Policy::default()
    };
    let plain = Policy::default();
    let relu = Policy {
        relu: true,
        ..Policy::default()
    };
    let sat = Policy {
        sat: true,
        ..Policy::default()
    };
    for c in [
        conv(E4M3, Rounding::RN, sf),
        conv(E4M3, Rounding::RN, plain),
        conv(E4M3, Rounding::RZ, relu),
        conv(E4M3, Rounding::RN, sat),
        conv(E5M2, Rounding::RN, plain),
        conv(E5M2, Rounding::RP, sf),
        conv(BF16, Rounding::RN, plain),
        conv(BF16, Rounding::RZ, sf),
        conv(F16, Rounding::RN, relu),
        conv(E2M1, Rounding::RN, sf),
        conv(S8, Rounding::RNI, plain),
        conv(U8, Rounding::RZI, sat),
        conv(UE8M0, Rounding::RP, sf),
        conv(TF32, Rounding::RNA, plain),
    ] {
        check(c, None);
    }
    for method in ScaleRule::ALL {
        check(conv(E2M1, Rounding::RN, sf), Some((32, method)));
        check(conv(E4M3, Rounding::RN, plain), Some((16, method)));
    }
}

/// MX blocks of 32 in groups of 16 whose outputs or inputs are not finite in a pattern
/// that takes the statistics through each of their ways: the usual pass; the pass that
/// leaves non-finite outputs out, for one group and for several in a row, back to the
/// usual pass after a group without them; block by block for a group with a NaN or
/// infinite input, met in either pass; a short last group. Every block has a flushed
/// element (2^−40 of its top) and its largest element beyond the largest finite value
/// (with OCP scales: 1.9 · 2^e becomes 486 for e4m3 (NaN without `.satfinite`) or 62259 for
/// e5m2 (infinity); 1.76 · 2^e becomes 450.6 or 57672, which round to 448 or 57344 without
/// saturating).
#[test]
fn non_finite_groups_equal_the_reference() {
    // Per group: (block with an output that is not finite, block with a bad input).
    type Pattern = (Option<usize>, Option<(usize, u32)>);
    let groups: [Pattern; 9] = [
        (None, None),
        (Some(3), None),
        (Some(7), None),
        (None, None),
        (Some(2), Some((9, 0x7fc0_0000))),
        (None, Some((0, 0x7f80_0000))),
        (Some(15), None),
        (Some(0), Some((0, 0xff80_0000))),
        (Some(4), None),
    ];
    let mut src = Vec::new();
    for (gi, &(odd_out, bad_in)) in groups.iter().enumerate() {
        // The last group is short: 5 blocks.
        let blocks = if gi == groups.len() - 1 { 5 } else { 16 };
        for b in 0..blocks {
            let e = ((gi * 7 + b * 3) % 9) as i32 - 4;
            let top = if odd_out == Some(b) { 1.9f32 } else { 1.76 };
            for i in 0..32u32 {
                let x = match i {
                    0 => top,
                    1 => 2f32.powi(-40),
                    _ => 1.0 + (i * 37 % 32) as f32 / 64.0,
                } * 2f32.powi(e);
                let x = if i % 2 == 1 { -x } else { x };
                src.push(match bad_in {
                    Some((bb, w)) if bb == b && i == 5 => w,
                    _ => x.to_bits(),
                });
            }
        }
    }
    for dst in [E4M3, E5M2] {
        check_on(
            conv(dst, Rounding::RN, Policy::default()),
            Some((32, ScaleRule::Floor)),
            src.clone(),
        );
    }
}

/// `f32` words in blocks of varied magnitudes: per block a top binade anywhere in the
/// `f32` range and elements up to 40 binades below it (into the subnormals), some whole
/// blocks of zeros or of subnormals, and NaNs, infinities, the largest and the smallest
/// values sprinkled in (about one block in ten has a NaN or an infinity).
fn mx_data(n: usize, bsize: usize, seed: u64) -> Vec<u32> {
    let mut r = seed << 32;
    let mut next = move || {
        r += 1;
        splitmix64(r)
    };
    let mut v = Vec::with_capacity(n + bsize);
    while v.len() < n {
        let kind = next() % 16;
        let top = (next() % 254) as u32 + 1;
        for _ in 0..bsize {
            let x = next();
            let sign = x as u32 & 0x8000_0000;
            let frac = (x >> 8) as u32 & 0x007f_ffff;
            let w = match kind {
                0 => sign,
                1 => sign | frac,
                _ => sign | top.saturating_sub(((x >> 40) % 40) as u32) << 23 | frac,
            };
            v.push(match (x >> 50) % 1024 {
                0 => 0x7fc0_0000 | sign | (x >> 2) as u32 & 0x3f_ffff,
                1 => 0x7f80_0000 | sign,
                2..=5 => 0x7f7f_ffff | sign,
                6..=9 => 1 | sign,
                _ => w,
            });
        }
    }
    v.truncate(n);
    v
}

/// The MX block path of `f32` sources (block maxima, scales, scaling, kernels, packing)
/// against the scalar block scale of [`Plan::block_scale`] and the exact core element
/// by element ([`Plan::exact`]); its statistics against [`reference`].
#[test]
fn block_path_equals_the_exact_core() {
    use crate::dtype::dense_packing as packing;
    let sf = Policy {
        satfinite: true,
        ..Policy::default()
    };
    let plain = Policy::default();
    let mut configs = 0;
    for dst in [E2M1, E4M3, E5M2, E2M3, E3M2] {
        for (rounding, policy) in [
            (Rounding::RN, sf),
            (Rounding::RN, plain),
            (Rounding::RZ, sf),
            (Rounding::stochastic(0, 8), sf),
        ] {
            for method in ScaleRule::ALL {
                for (bsize, n) in [(32usize, 70_000usize), (16, 3001), (12, 3000)] {
                    if bsize != 32 && dst != E2M1 && dst != E4M3 {
                        continue;
                    }
                    let conv = Conversion::new(F32, dst, rounding, policy);
                    let seed = configs as u64;
                    check_blocks(conv, method, bsize, mx_data(n, bsize, seed), packing(&dst));
                    configs += 1;
                }
            }
        }
    }
    assert!(configs >= 40);
}

fn check_blocks(
    conv: Conversion,
    method: ScaleRule,
    bsize: usize,
    src: Vec<u32>,
    pack_as: Packing,
) {
    let n = src.len();
    let first = 1000;
    let block = Some((bsize as u64, method));
    let what = format!("{conv:?} {method:?} {bsize}");
    // Unpacked words (compared with the exact core), and packed as the file format is.
    let plan = Plan::new(conv, Packing::Bytes(4), Packing::Bytes(1), block, 3);
    let bytes: Vec<u8> = src.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut out = vec![0u8; n];
    let (stats, scales) = plan.convert_chunk(&bytes, n as u64, first, &mut out);
    same_on_every_isa(&plan, block, &bytes, first, (&out, &stats, &scales));
    let Some(b) = plan.blocks else { unreachable!() };
    let stochastic = plan.stochastic;
    let (mut exact_scales, mut exact_out) = (Vec::new(), Vec::new());
    for (j, blk) in src.chunks(bsize).enumerate() {
        let (byte, k) = b.scale_of(&plan.counter.src_dec, blk);
        exact_scales.push(byte);
        for (i, &x) in blk.iter().enumerate() {
            let at = (j * bsize + i) as u64;
            let r = if stochastic {
                random_word(plan.stream, first + at)
            } else {
                0
            };
            exact_out.push(plan.exact(x as u64, k, r) as u8);
        }
    }
    assert_eq!(scales, exact_scales, "{what}: scales");
    for (i, (&got, &want)) in out.iter().zip(&exact_out).enumerate() {
        assert_eq!(got, want, "{what}: element {i} ({:#010x})", src[i]);
    }
    let nan_blocks = scales.iter().filter(|&&s| s == 0xff).count();
    assert!(
        nan_blocks > 0 && nan_blocks < scales.len(),
        "{what}: NaN blocks"
    );
    // The statistics, merged over the parallel work units in order as the engine does.
    let words: Vec<u64> = out.iter().map(|&y| y as u64).collect();
    let sub = plan.sub_elements() as usize;
    let (mut got, mut w) = (Stats::default(), Stats::default());
    got.merge(&stats);
    for (i, (x, y)) in src.chunks(sub).zip(words.chunks(sub)).enumerate() {
        let sc = &scales[i * sub / bsize..];
        w.merge(&reference(
            &plan,
            x,
            y,
            &sc[..x.len().div_ceil(bsize)],
            bsize,
        ));
    }
    assert!(n > sub || bsize != 32, "{what}: several work units");
    assert_eq!(got, w, "{what}: statistics");
    // Packed: the same statistics and the packed words.
    // (Whole blocks only: a shortened last block may have another scale.)
    let whole = crate::chunk::lcm(pack_as.unit(), bsize as u64) as usize;
    let units = n - n % whole;
    let packed = Plan::new(conv, Packing::Bytes(4), pack_as, block, 3);
    let mut pout = vec![0u8; pack_as.bytes_for(units as u64) as usize];
    let (pstats, pscales) =
        packed.convert_chunk(&bytes[..4 * units], units as u64, first, &mut pout);
    let mut unpacked: Vec<u8> = Vec::new();
    unpack(pack_as, &pout, units, &mut unpacked);
    let bits = pack_as.bits() as u32;
    let low: Vec<u8> = exact_out[..units]
        .iter()
        .map(|&y| y & ((1u16 << bits.min(8)) - 1) as u8)
        .collect();
    assert_eq!(unpacked, low, "{what}: packed");
    assert_eq!(
        pscales,
        scales[..units.div_ceil(bsize)],
        "{what}: packed scales"
    );
    if units == n {
        assert_eq!(pstats, stats, "{what}: packed statistics");
    }
}

/// Packing and unpacking nibbles and six-bit groups, against the bits laid out one
/// element after another (little-endian, the first element in the lowest bits).
#[test]
fn packing_lays_out_the_bits() {
    for p in [Packing::Nibbles, Packing::Sixes] {
        let bits = p.bits() as usize;
        for n in (0..100).step_by(p.unit() as usize) {
            let words: Vec<u8> = (0..n).map(|i| splitmix64(i as u64 + 77) as u8).collect();
            let mut out = vec![0u8; p.bytes_for(n as u64) as usize];
            pack(p, &words, &mut out);
            let mut want = vec![0u8; out.len()];
            for (i, &w) in words.iter().enumerate() {
                for b in 0..bits {
                    let at = i * bits + b;
                    want[at / 8] |= ((w >> b) & 1) << (at % 8);
                }
            }
            assert_eq!(out, want, "{p:?} {n}");
            let mut back: Vec<u8> = Vec::new();
            unpack(p, &out, n, &mut back);
            let low: Vec<u8> = words.iter().map(|&w| w & ((1 << bits) - 1) as u8).collect();
            assert_eq!(back, low, "{p:?} {n}");
        }
    }
}

#[test]
fn arithmetic_decoders_give_the_table_values() {
    // `Arith::new` checks every encoding against the table: these formats must pass
    // (else the statistics fall back to the slower paths), the others need not.
    for f in [E4M3, E5M2, E2M1, E2M3, E3M2, F16, BF16] {
        let t = DstTable::of(&f);
        let a = t
            .arith
            .unwrap_or_else(|| panic!("{f}: no arithmetic decoder"));
        for y in 0..1u32 << f.width() {
            let (v, w) = (a.get(y) as f64, f.decode(y as u64).to_f64_lossy());
            assert!(
                v.to_bits() == w.to_bits() || (v.is_nan() && !w.is_finite()),
                "{f} {y:#x}: {v} != {w}"
            );
        }
    }
    assert!(DstTable::of(&UE8M0).arith.is_none());
}

#[test]
fn range_keys() {
    // a > h ⇔ key(a) > key_above(h); a < l ⇔ key(a) < key_below(l), for every kind of
    // threshold, including ones between the f32 values and around zero.
    let hs = [
        0.0,
        -0.0,
        1e-50,
        -1e-50,
        448.0,
        448.5,
        -448.5,
        1.0,
        3.5e38,
        -3.5e38,
        1e300,
        f32::MAX as f64,
        1.4e-45,
        -1.4e-45,
        2.1e-45,
    ];
    let xs = tricky(300);
    for &h in &hs {
        let (ta, tb) = (key_above(h), key_below(h));
        for &x in &xs {
            let a = f32::from_bits(x);
            if a.is_nan() {
                continue;
            }
            assert_eq!((a as f64) > h, key(x) > ta, "{a} > {h}");
            assert_eq!(((a as f64) < h), key(x) < tb, "{a} < {h}");
        }
    }
}
