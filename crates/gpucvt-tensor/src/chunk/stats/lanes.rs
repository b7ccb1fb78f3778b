//! The fast statistics of `f32` sources into formats whose values are `f32` numbers computed
//! from the bits ([`FastJob`]): groups of blocks in lane-wise passes, vectorized.

use crate::chunk::decode::Codes;
use crate::chunk::exp2i;
use crate::chunk::pack::Le;
use crate::chunk::stats::{
    add_counts, count_pass, error_pass, flush_counts, outside, Counter, Errors, LANES,
};
use crate::Stats;
use gpucvt_kernels::{vectorized_up_to, Vectorizable, Word};
use zerocopy::IntoBytes;

/// The statistics of `f32` sources into formats whose values are `f32` numbers computed
/// from the bits (`fv`), as work for [`vectorized`]: [`Counter::fast_stats`] with the blocks of
/// finite elements in one pass ([`finite_groups`]).
pub(crate) struct FastJob<'a, S, D, FV, FC, FS> {
    pub(crate) plan: &'a Counter,
    pub(crate) st: &'a mut Stats,
    pub(crate) src: &'a [S],
    pub(crate) dst: &'a [D],
    pub(crate) ks: &'a [i32],
    pub(crate) bsize: usize,
    /// The zero and infinite outputs, `relu`.
    pub(crate) tests: Tests,
    /// The value of a finite encoding (NaN for the others).
    pub(crate) fv: FV,
    /// The class bits of an encoding.
    pub(crate) fc: FC,
    /// The value of any encoding.
    pub(crate) slow: FS,
}

impl<S: Le, D: Le, FV: Fn(u32) -> f32 + Copy, FC: Fn(u32) -> u32, FS: Fn(u32) -> f64> Vectorizable
    for FastJob<'_, S, D, FV, FC, FS>
{
    type Output = ();

    #[inline(always)]
    fn run(self) {
        if self.plan.blocks.is_some() {
            self.go::<true>()
        } else {
            self.go::<false>()
        }
    }
}

impl<S: Le, D: Le, FV: Fn(u32) -> f32 + Copy, FC: Fn(u32) -> u32, FS: Fn(u32) -> f64>
    FastJob<'_, S, D, FV, FC, FS>
{
    /// As [`Counter::fast_stats_k`].
    #[inline(always)]
    fn go<const SCALED: bool>(self) {
        let FastJob {
            plan,
            st,
            src,
            dst,
            ks,
            bsize,
            tests,
            fv,
            fc,
            slow,
        } = self;
        let relu = tests.relu;
        let mut acc = Groups::new(st);
        let mut counts = [0u64; 6];
        let mut last: Option<(i32, i32, i32)> = None;
        // One block, on its own. (A macro, not a closure: a closure that is not inlined
        // would be compiled for the baseline target, not for `vectorized`'s.)
        macro_rules! block {
            ($k:expr, $sb:expr, $db:expr) => {{
                let (k, sb, db): (i32, &[u32], &[D]) = ($k, $sb, $db);
                let down = if SCALED { exp2i(-k) } else { 1.0 };
                let (t_lo, t_hi) = plan.block_thresholds(k, down, &mut last);
                let mut g = acc.restart();
                let blk = BlockRange { down, t_lo, t_hi };
                finite_groups::<SCALED, false, D>(
                    &mut g,
                    &mut Odd::default(),
                    sb,
                    db,
                    &fv,
                    blk,
                    tests,
                );
                if !acc.take(&g, sb.len(), &mut counts) {
                    // Again, leaving the non-finite elements out, with the general counts.
                    error_pass::<SCALED, true, u32, D>(sb, db, down, &slow, &mut acc.err);
                    let c = count_pass(sb, db, t_lo, t_hi, relu, &fc);
                    for (t, c) in counts.iter_mut().zip(c) {
                        *t += c as u64;
                    }
                }
            }};
        }
        let src: &[u32] =
            <[u32] as zerocopy::FromBytes>::ref_from_bytes(src.as_bytes()).expect("4-byte words");
        // Small blocks whose elements fill whole lane vectors: groups of blocks of about
        // [`PIECE`] elements in one pass ([`scaled_group`]). A group where an output is not
        // finite (MX scales can take elements past a format's largest value, into NaN or
        // infinity) is done again with the pass that leaves those out ([`tolerant_groups`]),
        // and so are the groups after it until one has no such output. A group with an input
        // that is not finite, or whose infinities are no range of codes, is done again block
        // by block. Each way gives the same sums: element `i` of a block goes to lane `i mod
        // LANES`, the lanes adding in the same order.
        let per = if SCALED && bsize % LANES == 0 {
            (PIECE / bsize).max(1)
        } else {
            1
        };
        if per > 1 {
            let at = GroupSlices {
                src,
                dst,
                ks,
                bsize,
                per,
            };
            let n = at.count();
            let mut par = [BlockRange::default(); PIECE / LANES];
            let mut j = 0;
            while j < n {
                // The usual pass, group after group, until a group has an element that is
                // not finite. (The other passes are outside this loop: with a call in it,
                // the compiler vectorized it worse.)
                while j < n {
                    let (sg, dg, kg) = at.group(j);
                    // (A last block that is not whole lane vectors, never in files: block
                    // by block.)
                    if sg.len() % LANES != 0 {
                        break;
                    }
                    // The blocks' factors and range thresholds first, so that the pass over
                    // the group keeps its accumulators in registers.
                    let par = block_ranges(plan, kg, &mut last, &mut par);
                    let mut g = acc.restart();
                    let odd = &mut Odd::default();
                    let group = Group { x: sg, y: dg, par };
                    scaled_group::<false, D>(&mut g, odd, group, bsize, &fv, tests);
                    if !acc.take(&g, sg.len(), &mut counts) {
                        break;
                    }
                    j += 1;
                }
                if j == n {
                    break;
                }
                if tests.inf.is_some() && at.group(j).0.len().is_multiple_of(LANES) {
                    // From this group on, the pass that leaves non-finite outputs out, until
                    // a group has none (then the usual pass again) or has an input that is
                    // not finite (then that group block by block).
                    let (next, clean) = tolerant_groups(TolerantRun {
                        plan,
                        at,
                        acc: &mut acc,
                        counts: &mut counts,
                        last: &mut last,
                        from: j,
                        // (A copy: a reference would let the closure's address out of this
                        // function, and keep its fields out of registers.)
                        fv,
                        tests,
                    });
                    j = next;
                    if clean {
                        continue;
                    }
                }
                let (sg, dg, kg) = at.group(j);
                for ((sb, db), &k) in sg.chunks(bsize).zip(dg.chunks(bsize)).zip(kg) {
                    block!(k, sb, db);
                }
                j += 1;
            }
        } else {
            for (j, (sb, db)) in src.chunks(bsize).zip(dst.chunks(bsize)).enumerate() {
                let k = if SCALED { ks[j] } else { 0 };
                block!(k, sb, db);
            }
        }
        add_counts(st, &counts, &acc.err);
    }
}

/// The groups of small blocks of a [`FastJob`]: `per` blocks of `bsize` elements each (the
/// last group may be shorter).
#[derive(Clone, Copy)]
pub(crate) struct GroupSlices<'a, D> {
    pub(crate) src: &'a [u32],
    pub(crate) dst: &'a [D],
    pub(crate) ks: &'a [i32],
    pub(crate) bsize: usize,
    pub(crate) per: usize,
}

impl<'a, D> GroupSlices<'a, D> {
    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        self.src.len().div_ceil(self.bsize * self.per)
    }

    /// Group `j`'s inputs, outputs and block exponents.
    #[inline(always)]
    pub(crate) fn group(&self, j: usize) -> (&'a [u32], &'a [D], &'a [i32]) {
        let g = self.bsize * self.per;
        let (lo, hi) = (j * g, ((j + 1) * g).min(self.src.len()));
        let kh = ((j + 1) * self.per).min(self.ks.len());
        (
            &self.src[lo..hi],
            &self.dst[lo..hi],
            &self.ks[j * self.per..kh],
        )
    }
}

/// The factors 2^−k and range thresholds of the blocks of exponents `kg` into `par` (at most
/// `PIECE / LANES` of them); returns them.
#[inline(always)]
pub(crate) fn block_ranges<'p>(
    plan: &Counter,
    kg: &[i32],
    last: &mut Option<(i32, i32, i32)>,
    par: &'p mut [BlockRange; PIECE / LANES],
) -> &'p [BlockRange] {
    for (p, &k) in par.iter_mut().zip(kg) {
        let down = exp2i(-k);
        let (t_lo, t_hi) = plan.block_thresholds(k, down, last);
        *p = BlockRange { down, t_lo, t_hi };
    }
    &par[..kg.len()]
}

/// Runs `work` through [`vectorized`], in a function of its own, called outside the loop of
/// the usual pass: inlined into [`FastJob`]'s pass, or called from inside its loop, this
/// rarer pass made the compiler vectorize the usual one worse (a sixth more instructions for
/// MX conversions whose outputs are all finite).
#[inline(never)]
pub(crate) fn tolerant_groups<D: Le, FV: Fn(u32) -> f32>(
    work: TolerantRun<'_, D, FV>,
) -> (usize, bool) {
    vectorized_up_to(work.plan.isa, work)
}

/// The groups of a [`FastJob`] from group `from` on, in the pass that leaves non-finite
/// outputs out ([`scaled_group`] with `TOLERANT`), as work for [`vectorized`]: while each
/// group has such an output, and its inputs are all finite. Returns the next group, and
/// whether it is to be done as usual (`true`: the last group done had only finite elements,
/// or there is none left) or block by block (`false`: it has an input that is not finite or
/// is not whole lane vectors).
pub(crate) struct TolerantRun<'a, D, FV> {
    pub(crate) plan: &'a Counter,
    pub(crate) at: GroupSlices<'a, D>,
    pub(crate) acc: &'a mut Groups,
    pub(crate) counts: &'a mut [u64; 6],
    pub(crate) last: &'a mut Option<(i32, i32, i32)>,
    pub(crate) from: usize,
    pub(crate) fv: FV,
    pub(crate) tests: Tests,
}

impl<D: Le, FV: Fn(u32) -> f32> Vectorizable for TolerantRun<'_, D, FV> {
    type Output = (usize, bool);

    #[inline(always)]
    fn run(self) -> (usize, bool) {
        let TolerantRun {
            plan,
            at,
            acc,
            counts,
            last,
            from,
            fv,
            tests,
        } = self;
        let n = at.count();
        let mut par = [BlockRange::default(); PIECE / LANES];
        for j in from..n {
            let (sg, dg, kg) = at.group(j);
            if sg.len() % LANES != 0 {
                return (j, false);
            }
            let par = block_ranges(plan, kg, last, &mut par);
            let mut g = acc.restart();
            let mut odd = Odd::default();
            let group = Group { x: sg, y: dg, par };
            scaled_group::<true, D>(&mut g, &mut odd, group, at.bsize, &fv, tests);
            match acc.take_tolerant(&g, &odd, sg.len(), counts) {
                None => return (j, false),
                Some(0) => return (j + 1, true),
                Some(_) => {}
            }
        }
        (n, true)
    }
}

/// What the statistics test of an element besides its value: whether `.relu` is on, and the
/// destination's zero and infinite encodings (`inf`: `None` when they are no range of codes).
#[derive(Clone, Copy)]
pub(crate) struct Tests {
    pub(crate) relu: bool,
    pub(crate) zero: Codes,
    pub(crate) inf: Option<Codes>,
}

/// The lane sums and maxima of the errors and the lane counts of [`finite_groups`] (the
/// counts in twice [`LANES`] lanes, so that the 32-bit work of two lane vectors is one
/// vector: counts are sums, which lane counts an element does not matter).
#[derive(Clone, Copy)]
pub(crate) struct Groups {
    pub(crate) err: Errors,
    pub(crate) sat: [u32; 2 * LANES],
    pub(crate) flushed: [u32; 2 * LANES],
}

/// The lane counts of elements that are not finite, of [`lane_pass`] with `TOLERANT` (apart
/// from [`Groups`], so that the usual pass does not carry them).
#[derive(Clone, Copy, Default)]
pub(crate) struct Odd {
    /// Outputs that are NaN or infinite.
    pub(crate) nonfinite: [u32; 2 * LANES],
    /// Infinite outputs.
    pub(crate) inf: [u32; 2 * LANES],
    /// Inputs that are NaN or infinite.
    pub(crate) bad_input: [u32; 2 * LANES],
}

impl Groups {
    /// Empty sums, the maxima at those of `st`.
    pub(crate) fn new(st: &Stats) -> Groups {
        Groups {
            err: Errors::new(st),
            sat: [0; 2 * LANES],
            flushed: [0; 2 * LANES],
        }
    }

    /// A pass that goes on from these sums and maxima, its counts at zero.
    #[inline(always)]
    pub(crate) fn restart(&self) -> Groups {
        Groups {
            err: self.err,
            sat: [0; 2 * LANES],
            flushed: [0; 2 * LANES],
        }
    }

    /// Takes the pass `g` over `n` elements if its lane sums are finite, which they are
    /// exactly when every element is finite on both sides (an error is at most ~2^256, a
    /// pass at most 2^16 elements): its sums and maxima become these, its saturated and
    /// flushed counts and `n` go to `counts`. Returns whether it did.
    #[inline(always)]
    pub(crate) fn take(&mut self, g: &Groups, n: usize, counts: &mut [u64; 6]) -> bool {
        // (The tolerant take of a pass without non-finite counts: those fold away.)
        self.take_tolerant(g, &Odd::default(), n, counts).is_some()
    }

    /// Takes the pass `g` of [`lane_pass`] with `TOLERANT` over `n` elements if every input
    /// was finite: the outputs that are not finite then count as NaN or as overflows to
    /// infinity (the inputs are finite), and every other element is in the errors, as
    /// [`count_pass`] counts them. Returns the number of outputs that are not finite, or
    /// `None` if it did not take the pass.
    #[inline(always)]
    pub(crate) fn take_tolerant(
        &mut self,
        g: &Groups,
        odd: &Odd,
        n: usize,
        counts: &mut [u64; 6],
    ) -> Option<u64> {
        if total(&odd.bad_input) > 0 || !g.err.finite() {
            return None;
        }
        let (nonfinite, inf) = (total(&odd.nonfinite), total(&odd.inf));
        self.err = g.err;
        counts[0] += nonfinite - inf;
        counts[2] += inf;
        counts[3] += total(&g.sat);
        counts[4] += total(&g.flushed);
        counts[5] += n as u64 - nonfinite;
        Some(nonfinite)
    }
}

/// The sum of lane counts.
#[inline(always)]
pub(crate) fn total(c: &[u32; 2 * LANES]) -> u64 {
    c.iter().map(|&c| c as u64).sum()
}

/// Adds the errors and the saturated and flushed counts of `x.len()` elements, all assumed
/// finite on both sides (a non-finite one makes the sums non-finite; with `TOLERANT`, see
/// [`lane_pass`]), as [`error_pass`] (without `SKIP`) and [`count_finite`] do: element `i` in
/// lane `i mod LANES` ([`lane_pass`]).
#[inline(always)]
pub(crate) fn finite_groups<const SCALED: bool, const TOLERANT: bool, D: Word>(
    g: &mut Groups,
    odd: &mut Odd,
    x: &[u32],
    y: &[D],
    fv: &impl Fn(u32) -> f32,
    blk: BlockRange,
    tests: Tests,
) {
    if symmetric(blk.t_lo, blk.t_hi) {
        lane_pass::<SCALED, true, TOLERANT, D>(g, odd, x, y, fv, blk, tests);
    } else {
        lane_pass::<SCALED, false, TOLERANT, D>(g, odd, x, y, fv, blk, tests);
    }
}

/// A block's factor 2^−k (`down`, 1 without blocks) and the keys `t_lo ..= t_hi` of the
/// inputs whose conversion does not saturate ([`Counter::block_thresholds`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BlockRange {
    pub(crate) down: f64,
    pub(crate) t_lo: i32,
    pub(crate) t_hi: i32,
}

/// A group of blocks: their inputs, outputs, and each block's factor and range ([`BlockRange`]).
#[derive(Clone, Copy)]
pub(crate) struct Group<'a, D> {
    pub(crate) x: &'a [u32],
    pub(crate) y: &'a [D],
    pub(crate) par: &'a [BlockRange],
}

/// [`finite_groups`] of a group of blocks of `bsize` elements, a multiple of [`LANES`],
/// scaled (`par`: each block's factor 2^−k and range thresholds), in a single pass with
/// lane-wise sums, maxima and counts (no reduction across lanes): the same sums (element `i`
/// of a block in lane `i mod LANES`, in order), maxima and counts.
#[inline(always)]
pub(crate) fn scaled_group<const TOLERANT: bool, D: Word>(
    g: &mut Groups,
    odd: &mut Odd,
    group: Group<'_, D>,
    bsize: usize,
    fv: &impl Fn(u32) -> f32,
    tests: Tests,
) {
    let Group { x, y, par } = group;
    if bsize == 32 && par.iter().all(|b| symmetric(b.t_lo, b.t_hi)) && x.len() == 32 * par.len() {
        // The MX block size with symmetric ranges only (the usual group): blocks of a
        // constant length, so that each is two unrolled steps without a rest and without a
        // test per block.
        let blocks = x.chunks_exact(32).zip(y.chunks_exact(32));
        for ((xb, yb), &blk) in blocks.zip(par) {
            lane_pass::<true, true, TOLERANT, D>(g, odd, xb, yb, fv, blk, tests);
        }
    } else {
        let blocks = x.chunks(bsize).zip(y.chunks(bsize));
        for ((xb, yb), &blk) in blocks.zip(par) {
            finite_groups::<true, TOLERANT, D>(g, odd, xb, yb, fv, blk, tests);
        }
    }
}

/// Whether the range keys `t_lo ..= t_hi` are symmetric: `t_lo = −1 − t_hi` and `t_hi ≥ 0`,
/// so that (as `key(−m) = −1 − m`) an element is out of the range exactly when its
/// magnitude's bits are above `t_hi`.
#[inline(always)]
pub(crate) fn symmetric(t_lo: i32, t_hi: i32) -> bool {
    t_hi >= 0 && t_lo == -1 - t_hi
}

/// The errors `|fv(y) · down − x|` of `x.len()` elements (all assumed finite on both sides)
/// added to the lane sums and maxima of `g`, element `i` in lane `i mod LANES` in order, and
/// their saturated and flushed counts to its count lanes. `SYM`: the range is
/// [`symmetric`]. Two lane vectors at a time: first
/// the 32-bit work of both (the outputs' values and the counts, one vector of 2 × `LANES`),
/// then the errors in `f64`, those of elements `0 .. LANES` added to the lanes before the
/// next ones.
///
/// `TOLERANT`: an output that is not finite adds no error and is not counted as saturated
/// (nor, being no zero, as flushed); it is counted in `nonfinite` (and in `inf` if it is an
/// infinity), and inputs that are not finite in `bad_input`, for [`Groups::take_tolerant`].
#[inline(always)]
pub(crate) fn lane_pass<const SCALED: bool, const SYM: bool, const TOLERANT: bool, D: Word>(
    g: &mut Groups,
    odd: &mut Odd,
    x: &[u32],
    y: &[D],
    fv: &impl Fn(u32) -> f32,
    blk: BlockRange,
    tests: Tests,
) {
    let BlockRange { down, t_lo, t_hi } = blk;
    let Tests { relu, zero, inf } = tests;
    let relu = relu as u32;
    let inf = inf.unwrap_or(Codes::NONE);
    // Local copies, so that the accumulators live in registers.
    let Groups {
        mut err,
        mut sat,
        mut flushed,
    } = *g;
    let mut o = *odd;
    let mut count = |l: usize, xv: u32, yv: u32, b: f32| {
        let finite = if TOLERANT { b.is_finite() as u32 } else { 1 };
        sat[l] += finite
            & if SYM {
                ((xv & 0x7fff_ffff) as i32 > t_hi) as u32
            } else {
                outside(xv, t_lo, t_hi)
            };
        flushed[l] += zero.test(yv) as u32 & flush_counts(xv, relu);
        if TOLERANT {
            o.nonfinite[l] += finite ^ 1;
            o.inf[l] += inf.test(yv) as u32;
            o.bad_input[l] += (xv & 0x7fff_ffff >= 0x7f80_0000) as u32;
        }
    };
    // One error into lane `l`. NaN errors are left out of the maxima here, but make the sums
    // NaN (and the caller does the elements again); with `TOLERANT`, errors that are not
    // finite are left out.
    let add = |err: &mut Errors, l: usize, b: f32, xv: u32| {
        let b = if SCALED { b as f64 * down } else { b as f64 };
        let a = f32::from_bits(xv) as f64;
        let e = (b - a).abs();
        let (e, a) = if TOLERANT && !e.is_finite() {
            (0.0, 0.0)
        } else {
            (e, a)
        };
        err.add(l, e, a);
    };
    let mut xs = x.chunks_exact(2 * LANES);
    let mut ys = y.chunks_exact(2 * LANES);
    for (xc, yc) in xs.by_ref().zip(ys.by_ref()) {
        let mut b = [0.0f32; 2 * LANES];
        for l in 0..2 * LANES {
            let yv = yc[l].to_u64() as u32;
            b[l] = fv(yv);
            count(l, xc[l], yv, b[l]);
        }
        for (bh, xh) in b.chunks_exact(LANES).zip(xc.chunks_exact(LANES)) {
            for l in 0..LANES {
                add(&mut err, l, bh[l], xh[l]);
            }
        }
    }
    // The rest (under 2 × LANES elements, starting at a multiple of LANES): lane `i mod
    // LANES` again.
    for (i, (&xv, yv)) in xs.remainder().iter().zip(ys.remainder()).enumerate() {
        let yv = yv.to_u64() as u32;
        let b = fv(yv);
        count(i, xv, yv, b);
        add(&mut err, i % LANES, b, xv);
    }
    g.err = err;
    g.sat = sat;
    g.flushed = flushed;
    if TOLERANT {
        *odd = o;
    }
}

/// Elements per group of small blocks of [`scaled_group`] (about: whole blocks): enough to
/// amortise a group's check, few enough that its blocks' parameters stay in the
/// first-level cache.
pub(crate) const PIECE: usize = 512;
