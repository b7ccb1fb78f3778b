//! The error statistics of converted elements ([`crate::Stats`]): which path a chunk takes,
//! the general loop over decoded values, and the passes the fast paths share (errors,
//! counts, order-preserving keys of `f32` encodings).

pub(crate) mod bounds;
pub(crate) mod lanes;
#[cfg(target_arch = "x86_64")]
pub(in crate::chunk) mod sse2;

use crate::chunk::decode::{Codes, Decoder, FastDst, INF, NAN, ZERO};
use crate::chunk::pack::Le;
use crate::chunk::stats::lanes::{FastJob, Tests};
use crate::chunk::{exp2i, pow2};
use crate::Stats;
use gpucvt_kernels::vectorized_up_to;
use zerocopy::IntoBytes;

/// The class bits ([`NAN`], [`INF`], [`ZERO`]) of an `f32` encoding.
#[inline(always)]
pub(in crate::chunk) fn f32_class(w: u32) -> u32 {
    let m = w & 0x7fff_ffff;
    ((m > 0x7f80_0000) as u32 * NAN) | ((m == 0x7f80_0000) as u32 * INF) | ((m == 0) as u32 * ZERO)
}

/// An order-preserving key of a non-NaN `f32` encoding: `key(a) < key(b)` ⇔ `a < b`, except
/// that `−0` (key −1) is below `+0` (key 0).
#[inline(always)]
pub(in crate::chunk) fn key(w: u32) -> i32 {
    let s = w as i32;
    s ^ ((s >> 31) & 0x7fff_ffff)
}

/// 1 if the `f32` pattern `x` lies outside the keys `t_lo ..= t_hi` (its conversion
/// saturates), else 0.
#[inline(always)]
pub(in crate::chunk) fn outside(x: u32, t_lo: i32, t_hi: i32) -> u32 {
    let k = key(x);
    ((k > t_hi) | (k < t_lo)) as u32
}

/// 1 if a zero result of the `f32` pattern `x` counts as flushed: `x` is not a zero, and not
/// negative under `.relu` (`relu` 1 or 0), else 0.
#[inline(always)]
pub(crate) fn flush_counts(x: u32, relu: u32) -> u32 {
    (x & 0x7fff_ffff != 0) as u32 & ((relu & (x >> 31)) ^ 1)
}

/// The encoding of a key (the inverse of [`key`]).
pub(in crate::chunk) fn unkey(k: i32) -> u32 {
    (k ^ ((k >> 31) & 0x7fff_ffff)) as u32
}

/// The value of a key, as `f64`.
pub(in crate::chunk) fn key_value(k: i32) -> f64 {
    f32::from_bits(unkey(k)) as f64
}

/// For non-NaN `f32` inputs `a`: `a > h` ⇔ `key(a) > key_above(h)` (the key of the largest
/// `f32` not above `h`; `+0` for a zero one, so that `±0` compare alike).
pub(in crate::chunk) fn key_above(h: f64) -> i32 {
    let mut k = key((h as f32).to_bits());
    while key_value(k) > h {
        k -= 1;
    }
    if key_value(k) == 0.0 {
        k = 0;
    }
    k
}

/// For non-NaN `f32` inputs `a`: `a < l` ⇔ `key(a) < key_below(l)` (the key of the smallest
/// `f32` not below `l`; `−0` for a zero one).
pub(in crate::chunk) fn key_below(l: f64) -> i32 {
    let mut k = key((l as f32).to_bits());
    while key_value(k) < l {
        k += 1;
    }
    if key_value(k) == 0.0 {
        k = -1;
    }
    k
}

/// What the error statistics of a tensor's chunks need: its conversion and blocks, the
/// decoders of both sides, the range for the `saturated` count and its thresholds per block
/// exponent. A [`crate::chunk::Plan`] holds one, built with it.
pub(crate) struct Counter {
    pub(crate) conv: gpucvt_core::convert::Conversion,
    pub(crate) blocks: Option<crate::chunk::mx::Blocks>,
    pub(crate) src_dec: Decoder,
    pub(crate) dst_dec: Decoder,
    /// The fast statistics of `f32`/`tf32` sources.
    pub(crate) fast: Option<FastDst>,
    /// The range thresholds ([`Counter::block_thresholds`]) of the block exponents
    /// −127..=127 (empty without blocks).
    pub(crate) thresholds: Box<[(i32, i32)]>,
    /// The destination range for the `saturated` count.
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    /// The widest instruction set of the vectorized loops.
    pub(crate) isa: gpucvt_kernels::InstructionSet,
}

/// The words of a sub-chunk and the exponents of their blocks: what every statistics pass
/// reads.
#[derive(Clone, Copy)]
pub(in crate::chunk) struct Chunk<'a, S, D> {
    pub(in crate::chunk) src: &'a [S],
    pub(in crate::chunk) dst: &'a [D],
    /// The exponent k of each block (its elements are multiplied by 2^k); one 0 without
    /// blocks.
    pub(in crate::chunk) ks: &'a [i32],
    pub(in crate::chunk) bsize: usize,
}

impl Counter {
    pub(in crate::chunk) fn stats<S: Le, D: Le>(
        &self,
        src: &[S],
        dst: &[D],
        ks: &[i32],
        scales: &[u8],
        bsize: usize,
    ) -> Stats {
        if self.blocks.is_some() && scales.contains(&0xff) {
            return self.stats_with_nan_blocks(src, dst, ks, scales, bsize);
        }
        let mut st = Stats {
            elements: src.len() as u64,
            ..Stats::default()
        };
        if self.blocks.is_some() {
            st.blocks = ks.len() as u64;
        }
        st.nan_blocks = scales.iter().filter(|&&s| s == 0xff).count() as u64;
        // f32 sources (4-byte words) into formats decoded arithmetically: the fast statistics,
        // vectorized with the widest instruction set there is.
        // (One construction of the job for every decoder: the decoders are closures of
        // different types.)
        macro_rules! fast {
            ($zero:expr, $inf:expr, $fv:expr, $fc:expr, $slow:expr) => {{
                let tests = Tests {
                    relu: self.conv.policy.relu,
                    zero: $zero,
                    inf: $inf,
                };
                let (fv, fc, slow) = ($fv, $fc, $slow);
                let job = FastJob {
                    plan: self,
                    st: &mut st,
                    src,
                    dst,
                    ks,
                    bsize,
                    tests,
                    fv,
                    fc,
                    slow,
                };
                vectorized_up_to(self.isa, job);
                return st;
            }};
        }
        if std::mem::size_of::<S>() == 4 {
            match &self.fast {
                Some(FastDst::Table(t)) => {
                    if let (Some(a), Some(zero)) = (t.arith, t.zero) {
                        fast!(
                            zero,
                            t.inf,
                            move |y| a.get(y),
                            |y| t.cls[y as u16 as usize] as u32,
                            |y| t.val[y as u16 as usize]
                        );
                    }
                }
                Some(FastDst::Bf16) => {
                    let (zero, inf) = (Codes::range(0x7fff, 0, 0), Codes::range(0x7fff, 0x7f80, 0));
                    fast!(
                        zero,
                        Some(inf),
                        |y| f32::from_bits(y << 16),
                        |y| f32_class(y << 16),
                        |y| f32::from_bits(y << 16) as f64
                    );
                }
                _ => {}
            }
        }
        // Other formats of at most 8 bits (with zeros in a range of codes): SSE2.
        #[cfg(target_arch = "x86_64")]
        if let Some(FastDst::Table(t)) = &self.fast {
            if let (Some(zero), Ok(src), Some(dst)) = (
                t.zero,
                <[u32] as zerocopy::FromBytes>::ref_from_bytes(src.as_bytes()),
                (std::mem::size_of::<D>() == 1).then(|| dst.as_bytes()),
            ) {
                if self.blocks.is_some() {
                    self.sse2_stats::<true>(
                        &mut st,
                        Chunk {
                            src,
                            dst,
                            ks,
                            bsize,
                        },
                        t,
                        zero,
                    );
                } else {
                    self.sse2_stats::<false>(
                        &mut st,
                        Chunk {
                            src,
                            dst,
                            ks,
                            bsize,
                        },
                        t,
                        zero,
                    );
                }
                return st;
            }
        }
        match (&self.fast, std::mem::size_of::<S>()) {
            (Some(FastDst::Table(t)), 4) => self.fast_stats(
                &mut st,
                Chunk {
                    src,
                    dst,
                    ks,
                    bsize,
                },
                t.zero,
                |y| t.val[y as u16 as usize],
                |y| t.cls[y as u16 as usize] as u32,
            ),
            (Some(FastDst::F32), 4) => self.fast_stats(
                &mut st,
                Chunk {
                    src,
                    dst,
                    ks,
                    bsize,
                },
                Some(Codes {
                    mask: 0x7fff_ffff,
                    lo: 0,
                    span: 0,
                }),
                |y| f32::from_bits(y) as f64,
                f32_class,
            ),
            _ => self.generic_stats(
                &mut st,
                &self.src_dec,
                &self.dst_dec,
                Chunk {
                    src,
                    dst,
                    ks,
                    bsize,
                },
            ),
        }
        st
    }

    /// [`Counter::stats`] of a chunk with NaN-scale blocks (they hold a NaN or an infinity):
    /// every element of such a block reads back as NaN, whatever its code (OCP MX); the other
    /// blocks are gathered, in order, and counted as usual (each element keeps its lane, its
    /// index in its block mod 8, so the sums are those of the blocks counted in place).
    fn stats_with_nan_blocks<S: Le, D: Le>(
        &self,
        src: &[S],
        dst: &[D],
        ks: &[i32],
        scales: &[u8],
        bsize: usize,
    ) -> Stats {
        let (mut s, mut d, mut k, mut sc) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut nan = 0u64;
        let blocks = src
            .chunks(bsize)
            .zip(dst.chunks(bsize))
            .zip(ks.iter().zip(scales));
        for ((sb, db), (&kb, &scale)) in blocks {
            if scale == 0xff {
                nan += sb.len() as u64;
            } else {
                s.extend_from_slice(sb);
                d.extend_from_slice(db);
                k.push(kb);
                sc.push(scale);
            }
        }
        let mut st = self.stats(&s, &d, &k, &sc, bsize);
        st.elements = src.len() as u64;
        st.nan += nan;
        st.blocks = ks.len() as u64;
        st.nan_blocks = (scales.len() - sc.len()) as u64;
        st
    }

    /// The statistics of an `f32` source from the encodings: the classes by integer
    /// comparisons of the input's bits and the output's class bits (`fc`), the range check as
    /// a comparison of order-preserving keys with thresholds computed once per block; the
    /// errors from the input widened to `f64` and the output's value (`fv`). Exactly the
    /// numbers of [`Counter::stats_loop`] (the same per-element errors, summed in the same
    /// eight lanes in the same order), without decoding anything element by element.
    #[inline(always)]
    pub(in crate::chunk) fn fast_stats<S: Le, D: Le>(
        &self,
        st: &mut Stats,
        c: Chunk<'_, S, D>,
        zero: Option<Codes>,
        fv: impl Fn(u32) -> f64,
        fc: impl Fn(u32) -> u32,
    ) {
        if self.blocks.is_some() {
            self.fast_stats_k::<true, S, D>(st, c, zero, fv, fc)
        } else {
            self.fast_stats_k::<false, S, D>(st, c, zero, fv, fc)
        }
    }

    /// The range thresholds (as order-preserving keys) of a block scaled by 2^k, `down`
    /// being 2^−k: (a · 2^k > hi) ⇔ (a > hi · 2^−k), both products exact. From the table of
    /// block exponents, if there is one; else `last` keeps the last block's, which the next
    /// blocks mostly share.
    pub(in crate::chunk) fn block_thresholds(
        &self,
        k: i32,
        down: f64,
        last: &mut Option<(i32, i32, i32)>,
    ) -> (i32, i32) {
        if let Some(&t) = self.thresholds.get(k.wrapping_add(127) as usize) {
            return t;
        }
        match *last {
            Some((lk, lo, hi)) if lk == k => (lo, hi),
            _ => {
                let t = (key_below(self.lo * down), key_above(self.hi * down));
                *last = Some((k, t.0, t.1));
                t
            }
        }
    }

    /// [`Counter::fast_stats`], with or without block scales: per block, one branch-free pass
    /// for the errors, one for the counts.
    #[inline(always)]
    pub(in crate::chunk) fn fast_stats_k<const SCALED: bool, S: Le, D: Le>(
        &self,
        st: &mut Stats,
        c: Chunk<'_, S, D>,
        zero: Option<Codes>,
        fv: impl Fn(u32) -> f64,
        fc: impl Fn(u32) -> u32,
    ) {
        let Chunk {
            src,
            dst,
            ks,
            bsize,
        } = c;
        let relu = self.conv.policy.relu;
        let mut errs = Errors::new(st);
        let mut counts = [0u64; 6];
        // The range thresholds of the last block's exponent (blocks mostly share a few).
        let mut last: Option<(i32, i32, i32)> = None;
        for (j, (sb, db)) in src.chunks(bsize).zip(dst.chunks(bsize)).enumerate() {
            let k = if SCALED { ks[j] } else { 0 };
            let down = if SCALED { exp2i(-k) } else { 1.0 };
            let (t_lo, t_hi) = self.block_thresholds(k, down, &mut last);
            // The errors, assuming every element finite on both sides; the lane sums are
            // finite exactly when that holds (an error is at most ~2^256, a block at most
            // 2^16 elements). Otherwise again, leaving the non-finite ones out.
            let mut e = errs;
            error_pass::<SCALED, false, S, D>(sb, db, down, &fv, &mut e);
            let finite = e.finite();
            if finite {
                errs = e;
            } else {
                error_pass::<SCALED, true, S, D>(sb, db, down, &fv, &mut errs);
            }
            let c = match zero {
                Some(z) if finite => count_finite(sb, db, t_lo, t_hi, relu, z),
                _ => count_pass(sb, db, t_lo, t_hi, relu, &fc),
            };
            for (t, c) in counts.iter_mut().zip(c) {
                *t += c as u64;
            }
        }
        add_counts(st, &counts, &errs);
    }
}

impl Counter {
    /// The statistics through general decoders (any formats).
    pub(in crate::chunk) fn generic_stats<S: Le, D: Le>(
        &self,
        st: &mut Stats,
        src_dec: &Decoder,
        dst_dec: &Decoder,
        c: Chunk<'_, S, D>,
    ) {
        // Monomorphise the hot loop on the common decoders.
        let t = match dst_dec {
            Decoder::Table(t) => Some(&t.val),
            _ => None,
        };
        match (src_dec, t) {
            (Decoder::F32, Some(t)) => self.stats_loop(
                st,
                c,
                |x| f32::from_bits(x as u32) as f64,
                |y| t[y as u16 as usize],
            ),
            (Decoder::F32, None) => self.stats_loop(
                st,
                c,
                |x| f32::from_bits(x as u32) as f64,
                |y| dst_dec.get(y),
            ),
            (_, Some(t)) => self.stats_loop(st, c, |x| src_dec.get(x), |y| t[y as u16 as usize]),
            _ => self.stats_loop(st, c, |x| src_dec.get(x), |y| dst_dec.get(y)),
        }
    }

    /// The statistics loop, branch-free per element (see [`Stats`] for the classes).
    #[inline(always)]
    pub(in crate::chunk) fn stats_loop<S: Le, D: Le>(
        &self,
        st: &mut Stats,
        c: Chunk<'_, S, D>,
        fa: impl Fn(u64) -> f64,
        fb: impl Fn(u64) -> f64,
    ) {
        let Chunk {
            src,
            dst,
            ks,
            bsize,
        } = c;
        let relu = self.conv.policy.relu;
        let (lo, hi) = (self.lo, self.hi);
        // Eight independent lanes, so that the element-wise work vectorizes.
        const L: usize = 8;
        let mut acc = [[0u64; L]; 6];
        let mut errs = Errors::new(st);
        let mut a = [0.0f64; L];
        let mut b = [0.0f64; L];
        for (j, (sb, db)) in src.chunks(bsize).zip(dst.chunks(bsize)).enumerate() {
            let k = ks[j];
            let up = pow2(k);
            let down = pow2(-k);
            let mut xs = sb.chunks(L);
            let mut ys = db.chunks(L);
            while let (Some(xc), Some(yc)) = (xs.next(), ys.next()) {
                let m = xc.len();
                for l in 0..L {
                    // A short last group repeats element 0 and is masked below.
                    let i = if l < m { l } else { 0 };
                    a[l] = fa(xc[i].to_u64());
                    b[l] = fb(yc[i].to_u64());
                }
                for l in 0..L {
                    let live = l < m;
                    let (a, b) = (a[l], b[l]);
                    let bn = b.is_nan();
                    let an = a.is_nan();
                    let binf = b.is_infinite();
                    let ainf = a.is_infinite();
                    acc[0][l] += (live & bn) as u64;
                    acc[1][l] += (live & !bn & an) as u64;
                    acc[2][l] += (live & !bn & !an & binf & !ainf) as u64;
                    let rest = live & !bn & !an & !binf;
                    let scaled = a * up;
                    acc[3][l] += (rest & ((scaled > hi) | (scaled < lo))) as u64;
                    let fin = rest & !ainf;
                    acc[4][l] += (fin & (b == 0.0) & (a != 0.0) & !(relu & (a < 0.0))) as u64;
                    let err = (b * down - a).abs();
                    let ok = fin & err.is_finite();
                    acc[5][l] += ok as u64;
                    let (e, a) = if ok { (err, a) } else { (0.0, 0.0) };
                    errs.add(l, e, a);
                }
            }
        }
        let total = |v: &[u64; L]| v.iter().sum::<u64>();
        st.nan += total(&acc[0]);
        st.nan_to_number += total(&acc[1]);
        st.overflow_to_inf += total(&acc[2]);
        st.saturated += total(&acc[3]);
        st.flushed_to_zero += total(&acc[4]);
        st.error_elements += total(&acc[5]);
        errs.add_to(st);
    }
}

/// Lanes of the error sums (element `i` of a block goes to lane `i mod LANES`).
pub(in crate::chunk) const LANES: usize = 8;

/// The error statistics of eight lanes (element `i` of a block in lane `i mod LANES`): the
/// sums of the absolute errors, of their squares and of the inputs' squares, and the largest
/// absolute and relative errors. Every path adds the same elements into the same lanes in
/// the same order ([`Errors::add`]), so that their sums are equal, not only close.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Errors {
    pub(crate) sum: [f64; LANES],
    pub(crate) max: [f64; LANES],
    pub(crate) sq: [f64; LANES],
    pub(crate) signal: [f64; LANES],
    pub(crate) rel: [f64; LANES],
}

impl Errors {
    /// Empty sums, the maxima at those of `st`.
    pub(crate) fn new(st: &Stats) -> Errors {
        Errors {
            sum: [0.0; LANES],
            max: [st.max_abs_error; LANES],
            sq: [0.0; LANES],
            signal: [0.0; LANES],
            rel: [st.max_rel_error; LANES],
        }
    }

    /// Adds the error `e` of the input `a` to lane `l`.
    #[inline(always)]
    pub(crate) fn add(&mut self, l: usize, e: f64, a: f64) {
        self.sum[l] += e;
        self.max[l] = if e > self.max[l] { e } else { self.max[l] };
        self.sq[l] += e * e;
        self.signal[l] += a * a;
        let r = if a != 0.0 { e / a.abs() } else { 0.0 };
        self.rel[l] = if r > self.rel[l] { r } else { self.rel[l] };
    }

    /// Whether every error added was finite (an error is at most ~2^256 and a pass at most
    /// 2^16 elements, so a lane sum overflows only through an element that is not finite).
    #[inline(always)]
    pub(crate) fn finite(&self) -> bool {
        self.sum.iter().all(|x| x.is_finite())
    }

    /// Adds the sums to `st` and takes the maxima.
    pub(crate) fn add_to(&self, st: &mut Stats) {
        let top = |v: &[f64; LANES], from: f64| v.iter().fold(from, |m, &x| m.max(x));
        st.sum_abs_error += self.sum.iter().sum::<f64>();
        st.max_abs_error = top(&self.max, st.max_abs_error);
        st.sum_sq_error += self.sq.iter().sum::<f64>();
        st.sum_sq_input += self.signal.iter().sum::<f64>();
        st.max_rel_error = top(&self.rel, st.max_rel_error);
    }
}

/// Adds the errors `|fv(output) · down − input|` of `f32` inputs to the lanes
/// ([`Errors::add`]); with `SKIP`, leaving out the elements where it is not finite (exactly
/// those where the input or the output is NaN or infinite: `f32` inputs and scales of at
/// most 2^±127 cannot overflow an `f64`).
#[inline(always)]
pub(in crate::chunk) fn error_pass<const SCALED: bool, const SKIP: bool, S: Le, D: Le>(
    src: &[S],
    dst: &[D],
    down: f64,
    fv: &impl Fn(u32) -> f64,
    errs: &mut Errors,
) {
    // A local copy, so that the accumulators live in registers.
    let mut acc = *errs;
    let err = |x: &S, y: &D| {
        let a = f32::from_bits(x.to_u64() as u32) as f64;
        let b = fv(y.to_u64() as u32);
        let b = if SCALED { b * down } else { b };
        let e = (b - a).abs();
        if !SKIP || e < f64::INFINITY {
            (e, a)
        } else {
            (0.0, 0.0)
        }
    };
    let mut xs = src.chunks_exact(LANES);
    let mut ys = dst.chunks_exact(LANES);
    for (xc, yc) in xs.by_ref().zip(ys.by_ref()) {
        for l in 0..LANES {
            let (e, a) = err(&xc[l], &yc[l]);
            acc.add(l, e, a);
        }
    }
    for (l, (x, y)) in xs.remainder().iter().zip(ys.remainder()).enumerate() {
        let (e, a) = err(x, y);
        acc.add(l, e, a);
    }
    *errs = acc;
}

/// The counts of [`Stats`] for `f32` inputs — NaN outputs, NaN to number, overflow to
/// infinity, saturated, flushed to zero, elements in the errors — from the inputs' bits, the
/// outputs' class bits (`fc`) and the range thresholds on [`key`]s.
#[inline(always)]
pub(in crate::chunk) fn count_pass<S: Le, D: Le>(
    src: &[S],
    dst: &[D],
    t_lo: i32,
    t_hi: i32,
    relu: bool,
    fc: &impl Fn(u32) -> u32,
) -> [u32; 6] {
    const INF_BITS: u32 = 0x7f80_0000;
    let relu = relu as u32;
    let mut c = [0u32; 6];
    for (x, y) in src.iter().zip(dst) {
        let x = x.to_u64() as u32;
        let cl = fc(y.to_u64() as u32);
        let ax = x & 0x7fff_ffff;
        let an = (ax > INF_BITS) as u32;
        let ainf = (ax == INF_BITS) as u32;
        let bn = cl & NAN;
        let binf = (cl & INF) >> 1;
        let bz = (cl & ZERO) >> 2;
        // Neither side NaN, the output not infinite.
        let rest = (bn | an | binf) ^ 1;
        let out = outside(x, t_lo, t_hi);
        let nonzero_finite = ((ax != 0) & (ax < INF_BITS)) as u32;
        c[0] += bn;
        c[1] += an & (bn ^ 1);
        c[2] += binf & ((an | ainf) ^ 1);
        c[3] += rest & out;
        c[4] += bz & nonzero_finite & ((relu & (x >> 31)) ^ 1);
        c[5] += rest & (ainf ^ 1);
    }
    c
}

/// [`count_pass`] when every input and output is finite (no NaN, no infinity): only the
/// saturated and flushed counts remain, every element is in the errors; `zero` tests for the
/// zero outputs.
#[inline(always)]
pub(in crate::chunk) fn count_finite<S: Le, D: Le>(
    src: &[S],
    dst: &[D],
    t_lo: i32,
    t_hi: i32,
    relu: bool,
    zero: Codes,
) -> [u32; 6] {
    let relu = relu as u32;
    let (mut sat, mut flushed) = (0u32, 0u32);
    for (x, y) in src.iter().zip(dst) {
        let x = x.to_u64() as u32;
        sat += outside(x, t_lo, t_hi);
        flushed += zero.test(y.to_u64() as u32) as u32 & flush_counts(x, relu);
    }
    [0, 0, 0, sat, flushed, src.len() as u32]
}

/// Adds a statistics pass's counts (NaN, NaN to number, overflow to ∞, saturated, flushed,
/// error elements) and error lanes to `st`.
pub(in crate::chunk) fn add_counts(st: &mut Stats, counts: &[u64; 6], errs: &Errors) {
    st.nan += counts[0];
    st.nan_to_number += counts[1];
    st.overflow_to_inf += counts[2];
    st.saturated += counts[3];
    st.flushed_to_zero += counts[4];
    st.error_elements += counts[5];
    errs.add_to(st);
}
