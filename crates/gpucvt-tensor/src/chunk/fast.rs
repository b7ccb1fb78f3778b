//! The vectorized work of a piece of a quantized tensor ([`crate::chunk::Quantizer`]): its
//! elements scaled by their tiles' divisors ([`ScaleJob`]), and the error statistics of their
//! codes ([`StatsJob`]) through the streaming engine's lane passes, both compiled for the
//! widest instruction set the CPU has ([`gpucvt_kernels::vectorized`]).

use crate::chunk::decode::{Arith, Codes, DstTable};
use crate::chunk::exp2i;
use crate::chunk::mx::{scale as scale_word, scale_words};
use crate::chunk::stats::flush_counts;
use crate::chunk::stats::lanes::{finite_groups, BlockRange, Groups, Odd, Tests};
use crate::scaling::rule::Divisor;
use gpucvt_core::format::Format;
use gpucvt_kernels::{Vectorizable, Word};

/// What a tile's elements are scaled and counted with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TileWork {
    /// What its elements are scaled by.
    pub(crate) div: Divisor,
    /// What its element codes' values are multiplied by to give the quantized values
    /// (`range.down`), and the keys of the inputs whose scaled value is within the element
    /// format's range (`range.t_lo ..= range.t_hi`; symmetric where `fast`).
    pub(crate) range: BlockRange,
    /// Whether the lane passes count it: a tile without NaN or infinity whose factor is
    /// finite (the others, and the runs where an output is not finite, are counted by the
    /// general loop).
    pub(crate) fast: bool,
    /// Whether its scale is NaN (it holds a NaN or an infinity): every element's value is
    /// NaN, whatever its code.
    pub(crate) nan_scale: bool,
}

/// How each tile of a chunk is scaled and counted: tile `t`'s [`TileWork`] is
/// `table[index[t]]`. With 8-bit scales the index is the scales' bits (a tile's work depends
/// only on its scale), so that a chunk's tiles share the few entries their scales take
/// instead of each being given a copy; otherwise one entry per tile.
#[derive(Clone, Copy)]
pub(crate) struct Tiles<'a> {
    pub(crate) table: &'a [TileWork],
    pub(crate) index: &'a [u32],
}

impl Tiles<'_> {
    #[inline(always)]
    pub(crate) fn get(&self, t: usize) -> TileWork {
        self.table[self.index[t] as usize]
    }
}

/// A run of the elements of one tile within a piece: `start .. end` (relative to the
/// piece), and the tile (relative to the first tile of the chunk).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) tile: usize,
}

/// The tile runs of a piece.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Runs<'a> {
    /// Listed one by one.
    Listed(&'a [Segment]),
    /// Whole tiles of `C` elements one after another (`C` = 16 or 32: NVFP4's and MX's
    /// blocks, whose loops the compiler unrolls), the first being tile `first`.
    Uniform { c: usize, first: usize },
}

impl Runs<'_> {
    /// The uniform runs of `len` elements whose first is the first of tile `first`, if
    /// tiles of `c` elements are one after another (`rows`: they are) and `c` is one of the
    /// unrolled sizes.
    pub(crate) fn uniform(rows: bool, c: usize, first: usize, len: usize) -> Option<Runs<'static>> {
        (rows && (c == 16 || c == 32) && len.is_multiple_of(c))
            .then_some(Runs::Uniform { c, first })
    }
}

/// The key (`f32` magnitude bits) of the largest non-negative `f32` whose scaled value is at
/// most `bound` (a [`saturation_bounds`](crate::chunk::stats::bounds::saturation_bounds)
/// threshold): scaling is non-decreasing in the input, so the inputs whose conversion
/// saturation changes are exactly those whose magnitude's bits are above it. `None` if not
/// even 0 scales within the range (a multiplier that overflowed to infinity gives NaN).
pub(crate) fn saturation_key(d: Divisor, bound: f64) -> Option<i32> {
    const TOP: u32 = 0x7f7f_ffff;
    let within = |h: u32| -> bool {
        let x = f32::from_bits(h);
        match d {
            Divisor::Pow2(p) => x as f64 * exp2i(p) <= bound,
            Divisor::Div(v) => (x / v) as f64 <= bound,
            Divisor::Mul(r) => (x * r) as f64 <= bound,
        }
    };
    let guess = match d {
        Divisor::Pow2(p) => (bound * exp2i(-p)) as f32,
        Divisor::Div(v) => (bound * v as f64) as f32,
        Divisor::Mul(r) => (bound / r as f64) as f32,
    };
    let g = if guess.is_nan() {
        TOP
    } else {
        guess.abs().to_bits().min(TOP)
    };
    // The answer lies in lo ..= hi (0 always scales to 0, within the range); a bracket of a
    // few units in the last place around the guess first, then bisection.
    if !within(0) {
        return None;
    }
    let (mut lo, mut hi) = (0u32, TOP);
    if within(g) {
        lo = g;
        let up = g.saturating_add(4).min(TOP);
        if !within(up) {
            hi = up - 1;
        }
    } else {
        hi = g - 1;
        let down = g.saturating_sub(4);
        if within(down) {
            lo = down;
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if within(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo as i32)
}

/// How the lane passes decode the element codes: their values computed from the bits, and
/// the zero and infinite codes as ranges (`None` for a format the lane passes cannot decode;
/// the general loop counts everything then).
#[derive(Clone, Copy)]
pub(crate) struct FastCodes {
    arith: Arith,
    tests: Tests,
}

impl FastCodes {
    pub(crate) fn of(dst: &Format, relu: bool) -> Option<FastCodes> {
        let t = DstTable::of(dst);
        Some(FastCodes {
            arith: t.arith?,
            tests: Tests {
                relu,
                zero: t.zero?,
                inf: Some(t.inf.unwrap_or(Codes::NONE)),
            },
        })
    }
}

/// The `f32` words `x` of a piece scaled into `y`, tile run by tile run; the elements whose
/// scaling by a power of two is not exact in `f32` (results below its normal range) appended
/// to `exact` with their power, for the exact core.
pub(crate) struct ScaleJob<'a> {
    pub(crate) x: &'a [u32],
    pub(crate) y: &'a mut [u32],
    pub(crate) runs: Runs<'a>,
    pub(crate) tiles: Tiles<'a>,
    pub(crate) exact: &'a mut Vec<(usize, i32)>,
}

impl Vectorizable for ScaleJob<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let ScaleJob {
            x,
            y,
            runs,
            tiles,
            exact,
        } = self;
        match runs {
            Runs::Listed(segs) => {
                for s in segs {
                    let (xb, yb) = (&x[s.start..s.end], &mut y[s.start..s.end]);
                    scale_run(xb, yb, tiles.get(s.tile).div, s.start, exact);
                }
            }
            Runs::Uniform { c: 16, first } => scale_uniform::<16>(x, y, tiles, first, exact),
            Runs::Uniform { first, .. } => scale_uniform::<32>(x, y, tiles, first, exact),
        }
    }
}

/// [`ScaleJob`] of uniform runs of `C` elements.
#[inline(always)]
fn scale_uniform<const C: usize>(
    x: &[u32],
    y: &mut [u32],
    tiles: Tiles<'_>,
    first: usize,
    exact: &mut Vec<(usize, i32)>,
) {
    let runs = x.chunks_exact(C).zip(y.chunks_exact_mut(C));
    for (j, (xb, yb)) in runs.enumerate() {
        scale_run(xb, yb, tiles.get(first + j).div, j * C, exact);
    }
}

/// One run of a tile's elements scaled (`at`: the index of its first in the piece).
#[inline(always)]
fn scale_run(xb: &[u32], yb: &mut [u32], div: Divisor, at: usize, exact: &mut Vec<(usize, i32)>) {
    match div {
        Divisor::Pow2(p) => {
            if scale_words(xb, yb, p) {
                for (i, &v) in xb.iter().enumerate() {
                    if scale_word(v, p).1 {
                        exact.push((at + i, p));
                    }
                }
            }
        }
        Divisor::Div(d) => {
            for (&v, o) in xb.iter().zip(yb.iter_mut()) {
                *o = (f32::from_bits(v) / d).to_bits();
            }
        }
        Divisor::Mul(r) => {
            for (&v, o) in xb.iter().zip(yb.iter_mut()) {
                *o = (f32::from_bits(v) * r).to_bits();
            }
        }
    }
}

/// Elements per group of tile runs counted in one lane pass before its sums are checked.
const GROUP: usize = 512;

/// The error statistics of a piece's fast tile runs ([`TileWork::fast`]) in the engine's
/// lane passes: the errors `|value(q) × factor − x|` (element `i` of a run in lane `i mod
/// 8`), the saturated and the flushed counts. Runs are counted in groups of about [`GROUP`]
/// elements; a group whose sums are not finite (an output is NaN or infinite) is counted
/// again run by run, and the runs that still are not finite go to `slow` for the general
/// loop, as do the runs of tiles that are not fast.
pub(crate) struct StatsJob<'a, D> {
    pub(crate) x: &'a [u32],
    pub(crate) q: &'a [D],
    pub(crate) runs: Runs<'a>,
    pub(crate) tiles: Tiles<'a>,
    pub(crate) codes: FastCodes,
    pub(crate) acc: &'a mut Groups,
    /// NaN, NaN to number, overflow to infinity, saturated, flushed, error elements.
    pub(crate) counts: &'a mut [u64; 6],
    pub(crate) slow: &'a mut Vec<Segment>,
}

impl<D: Word> Vectorizable for StatsJob<'_, D> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let StatsJob {
            x,
            q,
            runs,
            tiles,
            codes,
            acc,
            counts,
            slow,
        } = self;
        let mut out = Counted { acc, counts, slow };
        match runs {
            Runs::Listed(segs) => count_runs(&mut out, x, q, segs.len(), |i| segs[i], tiles, codes),
            Runs::Uniform { c: 16, first } => {
                count_uniform::<16, D>(&mut out, x, q, tiles, first, codes)
            }
            Runs::Uniform { first, .. } => {
                count_uniform::<32, D>(&mut out, x, q, tiles, first, codes)
            }
        }
    }
}

/// Where [`count_runs`] puts what it counts.
struct Counted<'a> {
    acc: &'a mut Groups,
    counts: &'a mut [u64; 6],
    slow: &'a mut Vec<Segment>,
}

/// [`StatsJob`] over the runs `run(0 .. n)`.
#[inline(always)]
fn count_runs<D: Word>(
    out: &mut Counted<'_>,
    x: &[u32],
    q: &[D],
    n: usize,
    run: impl Fn(usize) -> Segment,
    tiles: Tiles<'_>,
    codes: FastCodes,
) {
    let arith = codes.arith;
    let fv = move |y: u32| arith.get(y);
    let tests = codes.tests;
    let mut i = 0;
    while i < n {
        let s = run(i);
        if !tiles.get(s.tile).fast {
            out.slow.push(s);
            i += 1;
            continue;
        }
        // A group: the fast runs from `i` on, about GROUP elements.
        let (mut j, mut len) = (i, 0);
        let mut g = out.acc.restart();
        while j < n {
            let s = run(j);
            let t = tiles.get(s.tile);
            if !t.fast || len >= GROUP {
                break;
            }
            let (xb, qb) = (&x[s.start..s.end], &q[s.start..s.end]);
            finite_groups::<true, false, D>(
                &mut g,
                &mut Odd::default(),
                xb,
                qb,
                &fv,
                t.range,
                tests,
            );
            len += s.end - s.start;
            j += 1;
        }
        if !out.acc.take(&g, len, out.counts) {
            recount(out, x, q, (i..j).map(&run), tiles, codes);
        }
        i = j;
    }
}

/// Counts a group whose sums were not finite again run by run: the runs that still are not
/// finite go to the general loop.
#[inline(always)]
fn recount<D: Word>(
    out: &mut Counted<'_>,
    x: &[u32],
    q: &[D],
    runs: impl Iterator<Item = Segment>,
    tiles: Tiles<'_>,
    codes: FastCodes,
) {
    let arith = codes.arith;
    let fv = move |y: u32| arith.get(y);
    for s in runs {
        let (xb, qb) = (&x[s.start..s.end], &q[s.start..s.end]);
        let mut g = out.acc.restart();
        let r = tiles.get(s.tile).range;
        finite_groups::<true, false, D>(&mut g, &mut Odd::default(), xb, qb, &fv, r, codes.tests);
        if !out.acc.take(&g, s.end - s.start, out.counts) {
            out.slow.push(s);
        }
    }
}

/// [`count_runs`] of uniform runs of `C` elements (`C` a multiple of 16), the first of tile
/// `first`, in one lane pass per group of tiles ([`uniform_pass`]).
#[inline(always)]
fn count_uniform<const C: usize, D: Word>(
    out: &mut Counted<'_>,
    x: &[u32],
    q: &[D],
    tiles: Tiles<'_>,
    first: usize,
    codes: FastCodes,
) {
    let n = x.len() / C;
    let tile = |j: usize| tiles.get(first + j);
    let seg = |j: usize| Segment {
        start: j * C,
        end: j * C + C,
        tile: first + j,
    };
    let mut par = [BlockRange::default(); GROUP];
    let mut j = 0;
    while j < n {
        if !tile(j).fast {
            out.slow.push(seg(j));
            j += 1;
            continue;
        }
        let mut e = j;
        while e < n && e - j < GROUP / C {
            let t = tile(e);
            if !t.fast {
                break;
            }
            par[e - j] = t.range;
            e += 1;
        }
        let mut g = out.acc.restart();
        uniform_pass::<C, D>(
            &mut g,
            &x[j * C..e * C],
            &q[j * C..e * C],
            &par[..e - j],
            codes,
        );
        if !out.acc.take(&g, (e - j) * C, out.counts) {
            recount(out, x, q, (j..e).map(seg), tiles, codes);
        }
        j = e;
    }
}

/// The engine's lane pass ([`crate::chunk::stats::lanes::lane_pass`], symmetric ranges, no
/// non-finite elements) over consecutive tiles of `C` elements whose factors and ranges are
/// `par`, with the accumulators kept in registers across the tiles: the same sums (element
/// `i` of a tile in lane `i mod 8`, in order), maxima and counts.
#[inline(always)]
fn uniform_pass<const C: usize, D: Word>(
    g: &mut Groups,
    x: &[u32],
    q: &[D],
    par: &[BlockRange],
    codes: FastCodes,
) {
    const L: usize = 8;
    let arith = codes.arith;
    let Tests { relu, zero, .. } = codes.tests;
    let relu = relu as u32;
    let Groups {
        mut err,
        mut sat,
        mut flushed,
    } = *g;
    for ((xb, qb), r) in x.chunks_exact(C).zip(q.chunks_exact(C)).zip(par) {
        for (xc, qc) in xb.chunks_exact(2 * L).zip(qb.chunks_exact(2 * L)) {
            let mut b = [0.0f32; 2 * L];
            for l in 0..2 * L {
                let yv = qc[l].to_u64() as u32;
                b[l] = arith.get(yv);
                sat[l] += ((xc[l] & 0x7fff_ffff) as i32 > r.t_hi) as u32;
                flushed[l] += zero.test(yv) as u32 & flush_counts(xc[l], relu);
            }
            for (bh, xh) in b.chunks_exact(L).zip(xc.chunks_exact(L)) {
                for l in 0..L {
                    let a = f32::from_bits(xh[l]) as f64;
                    err.add(l, (bh[l] as f64 * r.down - a).abs(), a);
                }
            }
        }
    }
    *g = Groups { err, sat, flushed };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The saturation keys against a plain scan of the inputs around them, for divisors of
    /// every kind, including ones whose guess is far off (tiny and huge divisors).
    #[test]
    fn saturation_keys_are_the_last_input_within_range() {
        let max = 448.0f32;
        let divisors = [
            Divisor::Pow2(0),
            Divisor::Pow2(-3),
            Divisor::Pow2(7),
            Divisor::Pow2(-140),
            Divisor::Div(1.0),
            Divisor::Div(0.3),
            Divisor::Div(7.0e-3),
            Divisor::Div(1.0e-44),
            Divisor::Div(3.0e38),
            Divisor::Mul(1.0 / 3.0),
            Divisor::Mul(123.456),
            Divisor::Mul(1.0e-40),
            Divisor::Mul(1.0e38),
        ];
        assert_eq!(
            saturation_key(Divisor::Mul(f32::INFINITY), max as f64),
            None
        );
        for d in divisors {
            let k = saturation_key(d, max as f64).unwrap() as u32;
            let scaled = |h: u32| match d {
                Divisor::Pow2(p) => f32::from_bits(h) as f64 * 2f64.powi(p),
                Divisor::Div(v) => (f32::from_bits(h) / v) as f64,
                Divisor::Mul(r) => (f32::from_bits(h) * r) as f64,
            };
            assert!(scaled(k) <= max as f64, "{d:?}");
            if k < 0x7f7f_ffff {
                assert!(scaled(k + 1) > max as f64, "{d:?}");
            }
            // Monotone: a few keys below are within too.
            for h in k.saturating_sub(3)..k {
                assert!(scaled(h) <= max as f64, "{d:?}");
            }
        }
    }
}
