//! The statistics of `f32` sources into formats of at most 8 bits ([`Counter::sse2_stats`]),
//! with SSE2 (part of every `x86_64` target) through the safe intrinsics of `safe_arch`.

use crate::chunk::decode::{Codes, DstTable};
use crate::chunk::exp2i;
use crate::chunk::stats::lanes::{symmetric, BlockRange};
use crate::chunk::stats::{
    add_counts, count_finite, count_pass, error_pass, Chunk, Counter, Errors, LANES,
};
use crate::Stats;
use safe_arch::*;

impl Counter {
    /// [`Counter::fast_stats`] of `f32` sources and destinations of at most 8 bits whose zeros
    /// are a range of codes, with SSE2 vectors: the same per-element errors added to the same
    /// eight lanes in the same order (lane pairs in vectors), and the same counts.
    #[cfg(target_arch = "x86_64")]
    pub(in crate::chunk) fn sse2_stats<const SCALED: bool>(
        &self,
        st: &mut Stats,
        c: Chunk<'_, u32, u8>,
        t: &DstTable,
        zero: Codes,
    ) {
        let Chunk {
            src,
            dst,
            ks,
            bsize,
        } = c;
        let relu = self.conv.policy.relu;
        let fv = |y: u32| t.val[y as u16 as usize];
        let fc = |y: u32| t.cls[y as u16 as usize] as u32;
        let mut counts = [0u64; 6];
        let mut acc = Acc::new(&Errors::new(st));
        let mut last: Option<(i32, i32, i32)> = None;
        for (j, (sb, db)) in src.chunks(bsize).zip(dst.chunks(bsize)).enumerate() {
            let k = if SCALED { ks[j] } else { 0 };
            let down = if SCALED { exp2i(-k) } else { 1.0 };
            let (t_lo, t_hi) = self.block_thresholds(k, down, &mut last);
            let before = acc;
            let whole = sb.len() / LANES * LANES;
            let (x, y) = (&sb[..whole], &db[..whole]);
            let simple = !relu && zero.span == 0 && symmetric(t_lo, t_hi);
            let blk = BlockRange { down, t_lo, t_hi };
            if simple {
                groups::<SCALED, true>(&mut acc, x, y, &t.val, blk, relu, zero);
            } else {
                groups::<SCALED, false>(&mut acc, x, y, &t.val, blk, relu, zero);
            }
            let mut errs = acc.lanes();
            let mut tail = [0u32; 2];
            if whole < sb.len() {
                // The last elements, in lanes 0, 1, …: as [`error_pass`] and [`count_finite`].
                let (xs, ys) = (&sb[whole..], &db[whole..]);
                error_pass::<SCALED, false, u32, u8>(xs, ys, down, &fv, &mut errs);
                let c = count_finite(xs, ys, t_lo, t_hi, relu, zero);
                tail = [c[3], c[4]];
            }
            // The lane sums are finite exactly when every element is finite on both sides
            // (an error is at most ~2^256, a block at most 2^16 elements).
            if errs.finite() {
                if whole < sb.len() {
                    acc.set_lanes(&errs);
                }
                counts[3] += tail[0] as u64;
                counts[4] += tail[1] as u64;
                counts[5] += sb.len() as u64;
            } else {
                // Again, leaving the non-finite elements out, with the general counts.
                acc = before;
                let mut errs = acc.lanes();
                error_pass::<SCALED, true, u32, u8>(sb, db, down, &fv, &mut errs);
                acc.set_lanes(&errs);
                let c = count_pass(sb, db, t_lo, t_hi, relu, &fc);
                for (t, c) in counts.iter_mut().zip(c) {
                    *t += c as u64;
                }
            }
        }
        let errs = acc.lanes();
        let [sat, flushed] = acc.counts();
        counts[3] += sat;
        counts[4] += flushed;
        add_counts(st, &counts, &errs);
    }
}

/// The lane sums of the errors, of their squares and of the inputs' squares (lanes `2i` and
/// `2i + 1` in element `i` of `s`, `q` and `g`), the largest absolute and relative errors (in
/// two lanes: only the largest of all is reported, and every error is finite here, so that
/// it does not matter which lane holds which), the saturated and flushed counts (four lanes
/// each).
#[derive(Clone, Copy)]
pub(in crate::chunk) struct Acc {
    pub(in crate::chunk) s: [m128d; 4],
    pub(in crate::chunk) q: [m128d; 4],
    pub(in crate::chunk) g: [m128d; 4],
    pub(in crate::chunk) m: m128d,
    pub(in crate::chunk) r: m128d,
    pub(in crate::chunk) sat: m128i,
    pub(in crate::chunk) flushed: m128i,
}

impl Acc {
    pub(in crate::chunk) fn new(errs: &Errors) -> Acc {
        let zero = m128d::from_array([0.0; 2]);
        let mut a = Acc {
            s: [zero; 4],
            q: [zero; 4],
            g: [zero; 4],
            m: zero,
            r: zero,
            sat: m128i::from([0i32; 4]),
            flushed: m128i::from([0i32; 4]),
        };
        a.set_lanes(errs);
        a
    }

    /// Sets the lanes (the maxima to the largest of the lanes' for all).
    pub(in crate::chunk) fn set_lanes(&mut self, errs: &Errors) {
        let pair = |v: &[f64; LANES], i: usize| m128d::from_array([v[2 * i], v[2 * i + 1]]);
        for i in 0..4 {
            self.s[i] = pair(&errs.sum, i);
            self.q[i] = pair(&errs.sq, i);
            self.g[i] = pair(&errs.signal, i);
        }
        let top = |v: &[f64; LANES]| v.iter().fold(0.0f64, |m, &x| m.max(x));
        let (m, r) = (top(&errs.max), top(&errs.rel));
        self.m = m128d::from_array([m, m]);
        self.r = m128d::from_array([r, r]);
    }

    /// The lanes (as [`Acc::set_lanes`]: each maximum the largest).
    pub(in crate::chunk) fn lanes(&self) -> Errors {
        let unpair = |v: &[m128d; 4]| {
            let mut out = [0.0; LANES];
            for i in 0..4 {
                [out[2 * i], out[2 * i + 1]] = v[i].to_array();
            }
            out
        };
        let top = |v: m128d| {
            let [a, b] = v.to_array();
            [a.max(b); LANES]
        };
        Errors {
            sum: unpair(&self.s),
            max: top(self.m),
            sq: unpair(&self.q),
            signal: unpair(&self.g),
            rel: top(self.r),
        }
    }

    /// The saturated and flushed counts.
    pub(in crate::chunk) fn counts(&self) -> [u64; 2] {
        let total =
            |v: m128i| -> u64 { <[i32; 4]>::from(v).iter().map(|&c| c as u32 as u64).sum() };
        [total(self.sat), total(self.flushed)]
    }
}

/// Adds the errors and counts of `x.len()` (a multiple of [`LANES`]) elements, all
/// assumed finite on both sides, as [`super::error_pass`] (without `SKIP`) and
/// [`super::count_finite`] do. `SIMPLE`: the common case where the range is symmetric
/// (`t_lo = −1 − t_hi`, `t_hi ≥ 0`: out of range ⇔ the magnitude's bits above `t_hi`),
/// zero is one magnitude code (`zero.span = 0`) and there is no `.relu`.
#[inline(never)]
pub(in crate::chunk) fn groups<const SCALED: bool, const SIMPLE: bool>(
    acc: &mut Acc,
    x: &[u32],
    y: &[u8],
    val: &[f64; 1 << 16],
    blk: BlockRange,
    relu: bool,
    zero: Codes,
) {
    let BlockRange { down, t_lo, t_hi } = blk;
    let Acc {
        mut s,
        mut q,
        mut g,
        mut m,
        mut r,
        mut sat,
        mut flushed,
    } = *acc;
    let zero_d = m128d::from_array([0.0; 2]);
    let abs = cast_to_m128d_from_m128i(set_splat_i64_m128i(i64::MAX));
    let downv = set_splat_m128d(down);
    let thi = set_splat_i32_m128i(t_hi);
    let tlo = set_splat_i32_m128i(t_lo);
    let magnitude = set_splat_i32_m128i(0x7fff_ffff);
    let relu = set_splat_i32_m128i(if relu { -1 } else { 0 });
    // The zero codes: lo ≤ y & mask ≤ lo + span (at most 8 bits, so signed compares do).
    let zmask = set_splat_i32_m128i(zero.mask as i32);
    let zlo = set_splat_i32_m128i(zero.lo as i32);
    let zhi = set_splat_i32_m128i(zero.lo.wrapping_add(zero.span) as i32);
    let nothing = m128i::from([0i32; 4]);
    for (xc, yc) in x.chunks_exact(LANES).zip(y.chunks_exact(LANES)) {
        let yq = u64::from_le_bytes(yc.try_into().expect("8 codes"));
        let code = |i: usize| yc[i] as usize;
        let xw = [
            m128i::from([xc[0] as i32, xc[1] as i32, xc[2] as i32, xc[3] as i32]),
            m128i::from([xc[4] as i32, xc[5] as i32, xc[6] as i32, xc[7] as i32]),
        ];
        // The errors.
        let mut e = [zero_d; 4];
        let mut rel = [zero_d; 4];
        for (h, &xv) in xw.iter().enumerate() {
            let f = cast_to_m128_from_m128i(xv);
            let a = [
                convert_to_m128d_from_lower2_m128(f),
                convert_to_m128d_from_lower2_m128(move_high_low_m128(f, f)),
            ];
            for (p, &a) in a.iter().enumerate() {
                let i = 4 * h + 2 * p;
                let mut b = m128d::from_array([val[code(i)], val[code(i + 1)]]);
                if SCALED {
                    b = mul_m128d(b, downv);
                }
                let j = 2 * h + p;
                e[j] = bitand_m128d(sub_m128d(b, a), abs);
                s[j] = add_m128d(s[j], e[j]);
                q[j] = add_m128d(q[j], mul_m128d(e[j], e[j]));
                g[j] = add_m128d(g[j], mul_m128d(a, a));
                // e / |a| where a is not zero, else 0 (as [`Errors::add`]).
                let mag = bitand_m128d(a, abs);
                let nonzero = cmp_neq_mask_m128d(mag, zero_d);
                rel[j] = bitand_m128d(div_m128d(e[j], mag), nonzero);
            }
        }
        m = max_m128d(max_m128d(max_m128d(e[0], e[1]), max_m128d(e[2], e[3])), m);
        r = max_m128d(
            max_m128d(max_m128d(rel[0], rel[1]), max_m128d(rel[2], rel[3])),
            r,
        );
        // The counts.
        let yb = unpack_low_i8_m128i(set_i64_m128i_s(yq as i64), nothing);
        let yw = [
            unpack_low_i16_m128i(yb, nothing),
            unpack_high_i16_m128i(yb, nothing),
        ];
        for (xv, yv) in xw.into_iter().zip(yw) {
            let mag = bitand_m128i(xv, magnitude);
            // Not flushed: the input ±0 (or negative, with .relu), or the output not zero.
            let x_zero = cmp_eq_mask_i32_m128i(mag, nothing);
            let ym = bitand_m128i(yv, zmask);
            if SIMPLE {
                sat = sub_i32_m128i(sat, cmp_gt_mask_i32_m128i(mag, thi));
                // −1 where flushed: the output zero, the input not.
                let f = bitandnot_m128i(x_zero, cmp_eq_mask_i32_m128i(ym, zlo));
                flushed = sub_i32_m128i(flushed, f);
            } else {
                let sign = shr_imm_i32_m128i::<31>(xv);
                let kx = bitxor_m128i(xv, shr_imm_u32_m128i::<1>(sign));
                let out = bitor_m128i(
                    cmp_gt_mask_i32_m128i(kx, thi),
                    cmp_lt_mask_i32_m128i(kx, tlo),
                );
                sat = sub_i32_m128i(sat, out);
                let not_counted = bitor_m128i(x_zero, bitand_m128i(sign, relu));
                let not_zero = bitor_m128i(
                    cmp_gt_mask_i32_m128i(ym, zhi),
                    cmp_lt_mask_i32_m128i(ym, zlo),
                );
                let f = cmp_eq_mask_i32_m128i(bitor_m128i(not_zero, not_counted), nothing);
                flushed = sub_i32_m128i(flushed, f);
            }
        }
    }
    *acc = Acc {
        s,
        q,
        g,
        m,
        r,
        sat,
        flushed,
    };
}
