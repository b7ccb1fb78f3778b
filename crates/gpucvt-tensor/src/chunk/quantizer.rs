//! [`Quantizer`]: a tensor's `f32` words quantized (whole, or streamed in chunks of whole
//! tiles; pieces of each in parallel), and the quantized elements dequantized.

use crate::chunk::exp2i;
use crate::chunk::fast::{
    saturation_key, FastCodes, Runs, ScaleJob, Segment, StatsJob, TileWork, Tiles,
};
use crate::chunk::mx::max_magnitude;
use crate::chunk::stats::bounds::saturation_bounds;
use crate::chunk::stats::lanes::{BlockRange, Groups};
use crate::error::{Error, Result};
use crate::scaling::rule::{
    divisor, scale_bits, scale_value, second_level_scale, Divisor, Element, SECOND_LEVEL_MIN,
};
use crate::scaling::{
    swizzle, swizzle_dims, unswizzle, BlockScaling, Geometry, ScaleFormat, ScaleLayout,
};
use crate::Stats;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, F32};
use gpucvt_core::round::{Direction, Rounding};
use gpucvt_kernels::{vectorized, Kernel, Vectorizable, Word};
use rayon::prelude::*;

/// Quantizes one tensor (its `f32` words in memory) with block scales, and dequantizes it.
///
/// ```
/// use gpucvt_core::{format::{E2M1, F32}, Conversion, Policy, Rounding};
/// use gpucvt_tensor::chunk::Quantizer;
/// use gpucvt_tensor::scaling::{Block, BlockScaling, ScaleFormat, ScaleLayout, ScaleRule};
/// // NVFP4: e2m1 elements, blocks of 16, ue4m3 scales, a per-tensor f32 scale.
/// let sat = Policy { satfinite: true, ..Policy::default() };
/// let conv = Conversion::new(F32, E2M1, Rounding::RN, sat);
/// let scaling = BlockScaling {
///     block: Block::Len(16), axis: -1, format: ScaleFormat::Ue4m3,
///     rule: ScaleRule::Floor, second_level: true, layout: ScaleLayout::Rows,
/// };
/// let x: Vec<u32> = (0..32).map(|i| (i as f32 * 0.25).to_bits()).collect();
/// let qz = Quantizer::new(conv, &scaling, &[2, 16])?;
/// let s2 = qz.tensor_scale(&x);
/// let mut q = vec![0u8; 32];
/// let mut scales = vec![0u32; qz.scale_count()];
/// let stats = qz.quantize(&x, s2, None, &mut q, &mut scales)?;
/// assert_eq!(stats.blocks, 2);
/// assert_eq!(s2, Some(7.75 / 2688.0)); // amax / (448 × 6)
/// let back = qz.dequantize(&q, &scales, s2)?;
/// assert!((back[31] - 7.75).abs() < 1e-6); // q × s × s2 = 6 × 448 × s2
/// # Ok::<(), gpucvt_tensor::Error>(())
/// ```
pub struct Quantizer {
    conv: Conversion,
    kernel: Kernel,
    /// How the vectorized statistics decode the element codes (`None`: the general loop).
    codes: Option<FastCodes>,
    /// Every element encoding's value.
    table: Vec<f64>,
    scaling: BlockScaling,
    geo: Geometry,
    elem: Element,
    /// The thresholds of the `saturated` count, in the element's units.
    bounds: (f64, f64),
    shape: Vec<u64>,
}

impl Quantizer {
    /// A quantizer of a tensor of `shape` whose `f32` elements `conv` converts (its source
    /// must be `f32`, its destination a float format of at most 16 bits).
    pub fn new(conv: Conversion, scaling: &BlockScaling, shape: &[u64]) -> Result<Quantizer> {
        let (elem, geo) = Quantizer::check(&conv, scaling, shape)?;
        Ok(Quantizer {
            conv,
            kernel: Kernel::new(conv),
            codes: FastCodes::of(&conv.dst, conv.policy.relu),
            table: decode_table(&conv.dst),
            scaling: *scaling,
            geo,
            elem,
            bounds: saturation_bounds(&conv),
            shape: shape.to_vec(),
        })
    }

    /// Whether [`Quantizer::new`] takes these (without building the kernel): the element
    /// format's numbers and the tiles, or why not.
    pub fn check(
        conv: &Conversion,
        scaling: &BlockScaling,
        shape: &[u64],
    ) -> Result<(Element, Geometry)> {
        scaling.check()?;
        if conv.src != F32 {
            return Err(Error::Invalid(format!(
                "block scales are computed on f32 elements; the conversion takes {}",
                conv.src
            )));
        }
        let elem = match Element::of(&conv.dst) {
            Some(e) if conv.dst.width() <= 16 => e,
            _ => {
                return Err(Error::Invalid(format!(
                    "block-scaled elements must be a float format of at most 16 bits, not {}",
                    conv.dst
                )))
            }
        };
        let geo = Geometry::new(shape, scaling.block, scaling.axis)?;
        Ok((elem, geo))
    }

    /// The tiles.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// The number of block scales (row-major, before any swizzling).
    pub fn scale_count(&self) -> usize {
        self.geo.scales() as usize
    }

    /// The shape of the scales as written ([`BlockScaling::written_shape`]).
    pub fn written_scale_shape(&self) -> Vec<u64> {
        self.scaling.written_shape(&self.shape)
    }

    /// The scales in their written layout (row-major ones as they are, or swizzled).
    pub fn lay_out(&self, scales: &[u32]) -> Vec<u32> {
        match self.scaling.layout {
            ScaleLayout::Rows => scales.to_vec(),
            ScaleLayout::Swizzled => {
                let (b, r, c) = self.swizzle_dims();
                swizzle(scales, b, r, c)
            }
        }
    }

    /// The row-major scales of scales in their written layout.
    pub fn read_layout(&self, written: &[u32]) -> Result<Vec<u32>> {
        let want: u64 = self.written_scale_shape().iter().product();
        if written.len() as u64 != want {
            return Err(Error::Invalid(format!(
                "{} scales were given where shape {:?} needs {want}",
                written.len(),
                self.written_scale_shape()
            )));
        }
        Ok(match self.scaling.layout {
            ScaleLayout::Rows => written.to_vec(),
            ScaleLayout::Swizzled => {
                let (b, r, c) = self.swizzle_dims();
                unswizzle(written, b, r, c)
            }
        })
    }

    fn swizzle_dims(&self) -> (u64, u64, u64) {
        swizzle_dims(&crate::scaling::scale_shape(
            &self.shape,
            self.scaling.block,
            self.scaling.axis,
        ))
    }

    /// The per-tensor second-level scale of the elements `x` (with a second level):
    /// [`second_level_scale`] of the largest magnitude over the blocks without NaN or
    /// infinity.
    pub fn tensor_scale(&self, x: &[u32]) -> Option<f32> {
        if !self.scaling.second_level {
            return None;
        }
        Some(self.second_from(&self.chunk_maxima(x, 0)))
    }

    /// [`Quantizer::tensor_scale`] from the tiles' maxima.
    fn second_from(&self, amax: &[u32]) -> f32 {
        let m = amax
            .iter()
            .copied()
            .filter(|&m| m < 0x7f80_0000)
            .max()
            .unwrap_or(0);
        second_level_scale(f32::from_bits(m), self.elem.max)
    }

    /// [`Quantizer::quantize`] with the second-level scale (if any) taken from `x` itself
    /// (as [`Quantizer::tensor_scale`] gives it, without another pass over `x`); returns it
    /// with the statistics.
    pub fn quantize_auto<D: Word + Send>(
        &self,
        x: &[u32],
        random: Option<u64>,
        q: &mut [D],
        scales: &mut [u32],
    ) -> Result<(Stats, Option<f32>)> {
        self.run(x, None, random.map(Words::Stream), q, scales)
    }

    /// Quantizes the tensor's `f32` words `x` into the element codes `q` and the row-major
    /// block scales' bits `scales` ([`Quantizer::scale_count`] of them); `second`: the
    /// per-tensor scale ([`Quantizer::tensor_scale`]) with a second level; `random`: with
    /// stochastic rounding, the stream whose element `i` rounds element `i`
    /// (`gpucvt_kernels::random`). Returns the statistics. Runs on the current rayon pool.
    pub fn quantize<D: Word + Send>(
        &self,
        x: &[u32],
        second: Option<f32>,
        random: Option<u64>,
        q: &mut [D],
        scales: &mut [u32],
    ) -> Result<Stats> {
        self.check_second(second)?;
        self.run(x, second, random.map(Words::Stream), q, scales)
            .map(|r| r.0)
    }

    /// [`Quantizer::quantize`] with stochastic rounding whose random words are given: word
    /// `i` (its low `width` bits, the conversion's) rounds element `i`, as `cvt.rs`'s
    /// `rbits` operand does.
    pub fn quantize_with_rbits<D: Word + Send>(
        &self,
        x: &[u32],
        second: Option<f32>,
        rbits: &[u32],
        q: &mut [D],
        scales: &mut [u32],
    ) -> Result<Stats> {
        if !matches!(self.conv.rounding.direction, Direction::Stochastic { .. }) {
            return Err(Error::Invalid(
                "quantize: random words go with stochastic rounding (rs)".into(),
            ));
        }
        if rbits.len() != x.len() {
            return Err(Error::Invalid(format!(
                "quantize: {} random words were given for {} elements; one per element",
                rbits.len(),
                x.len()
            )));
        }
        self.check_second(second)?;
        self.run(x, second, Some(Words::Given(rbits)), q, scales)
            .map(|r| r.0)
    }

    /// A given second-level scale: present with a second level, and 0 or a finite `f32` of
    /// at least [`SECOND_LEVEL_MIN`] ([`second_level_scale`] gives no other), so that every
    /// element factor is finite.
    fn check_second(&self, second: Option<f32>) -> Result<()> {
        match second {
            None if self.scaling.second_level => Err(Error::Invalid(
                "quantize: the second-level scale is missing".into(),
            )),
            Some(s)
                if self.scaling.second_level
                    && !(s == 0.0 || (s.is_finite() && s >= SECOND_LEVEL_MIN)) =>
            {
                Err(Error::Invalid(format!(
                    "quantize: the second-level scale must be 0 or a finite float of at least 2^-121 (below it the element factor 1/(s2 x s) is not a finite f32), not {s:e}"
                )))
            }
            _ => Ok(()),
        }
    }

    fn run<D: Word + Send>(
        &self,
        x: &[u32],
        second: Option<f32>,
        random: Option<Words<'_>>,
        q: &mut [D],
        scales: &mut [u32],
    ) -> Result<(Stats, Option<f32>)> {
        let n = self.geo.elements() as usize;
        if x.len() != n || q.len() != n || scales.len() != self.scale_count() {
            return Err(Error::Invalid(format!(
                "quantize: {} elements, {} outputs and {} scales were given for shape {:?} ({n} elements, {} scales)",
                x.len(),
                q.len(),
                scales.len(),
                self.shape,
                self.scale_count()
            )));
        }
        if n == 0 {
            let s2 = self
                .scaling
                .second_level
                .then(|| second.unwrap_or(second_level_scale(0.0, self.elem.max)));
            return Ok((Stats::default(), s2));
        }
        let amax = self.chunk_maxima(x, 0);
        let second = match second {
            None if self.scaling.second_level => Some(self.second_from(&amax)),
            s => s,
        };
        let st = self.quantize_chunk(x, 0, &amax, second, random, q, scales);
        Ok((st, second))
    }

    /// Quantizes a tensor read chunk by chunk from `src` (chunks of whole tiles of about
    /// `target` elements, [`Quantizer::chunk_ranges`]; the pool's workers read their own
    /// pieces of each chunk), each chunk's codes given to `sink` as they are made (in
    /// `bufs.codes`; `sink` may swap that buffer for another of the same kind). One scale
    /// for the whole tensor, or a second level, need the tensor's amax first: `src` is read
    /// twice then, unless `amax` gives the largest magnitude of a tensor without NaN or
    /// infinity. (Holding the tensor in memory between the passes was measured slower:
    /// a second read lands in the cache, a held tensor comes back from memory.) Returns
    /// the statistics, the row-major scales and the second-level scale. `sink` runs on the
    /// caller's thread.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stream<D: Word + Send>(
        &self,
        pool: &rayon::ThreadPool,
        target: u64,
        src: &impl Source,
        random: Option<u64>,
        amax: Option<u32>,
        bufs: &mut StreamBuffers<D>,
        mut sink: impl FnMut(&mut Vec<D>, u64) -> Result<()>,
    ) -> Result<(Stats, Vec<u32>, Option<f32>)> {
        let chunks = self.chunk_ranges(target);
        let tensor = self.scaling.block == crate::scaling::Block::Tensor;
        let StreamBuffers { x, codes } = bufs;
        let first = if let (true, Some(m)) = (self.needs_first_pass(), amax) {
            // Every tile finite: the largest of their maxima is the tensor's.
            debug_assert!(m < 0x7f80_0000);
            Some((m, m))
        } else if self.needs_first_pass() {
            let (mut all, mut fin) = (0u32, 0u32);
            for &(at, len) in &chunks {
                x.resize(len as usize, 0);
                let (a, b) = pool.install(|| self.read_first_pass(src, x, at))?;
                (all, fin) = (all.max(a), fin.max(b));
            }
            // The one tile of `--block tensor` holds a NaN or an infinity if any chunk does.
            if tensor && all >= 0x7f80_0000 {
                fin = 0;
            }
            Some((all, fin))
        } else {
            None
        };
        let second = match first {
            Some((_, fin)) if self.scaling.second_level => Some(self.second_of(fin)),
            _ => None,
        };
        let mut scales = vec![0u32; self.scale_count()];
        let mut stats = Stats::default();
        for (i, &(at, len)) in chunks.iter().enumerate() {
            let n = len as usize;
            let t0 = self.first_tile(at);
            x.resize(n, 0);
            codes.resize(n, D::default());
            let words = random.map(Words::Stream);
            let mut st = pool.install(|| -> Result<Stats> {
                let amax = match first {
                    Some((all, _)) if tensor => {
                        read_pieces(src, x, at)?;
                        vec![all]
                    }
                    _ => self.read_maxima(src, x, at)?,
                };
                let sc = &mut scales[t0..t0 + amax.len()];
                Ok(self.quantize_chunk(x, at, &amax, second, words, &mut codes[..n], sc))
            })?;
            if tensor && i > 0 {
                // The one block, counted with the first chunk.
                (st.blocks, st.nan_blocks) = (0, 0);
            }
            stats.merge(&st);
            sink(codes, len)?;
        }
        Ok((stats, scales, second))
    }

    /// Reads the elements `x` (flat index `at` on, whole tiles) from `src` and returns
    /// their tiles' maxima ([`Quantizer::chunk_maxima`]). Whole tiles one after another are
    /// each piece's maxima found by the worker that read it, while it is in that core's
    /// cache.
    fn read_maxima(&self, src: &impl Source, x: &mut [u32], at: u64) -> Result<Vec<u32>> {
        let c = self.geo.c as usize;
        if self.rows_of_tiles() && (at as usize).is_multiple_of(c) && x.len().is_multiple_of(c) {
            let mut out = vec![0u32; x.len() / c];
            let per = (PIECE / c).max(1);
            out.par_chunks_mut(per)
                .zip(x.par_chunks_mut(per * c))
                .enumerate()
                .try_for_each(|(i, (o, p))| -> Result<()> {
                    src.read_at(p, at + (i * per * c) as u64)?;
                    vectorized(TileMaxima { x: p, c, out: o });
                    Ok(())
                })?;
            return Ok(out);
        }
        read_pieces(src, x, at)?;
        Ok(self.chunk_maxima(x, at))
    }

    /// Reads the elements `x` (flat index `at` on) from `src`, each piece by the worker
    /// that then finds its largest magnitude while it is in that core's cache, and returns
    /// [`Quantizer::first_pass`].
    fn read_first_pass(&self, src: &impl Source, x: &mut [u32], at: u64) -> Result<(u32, u32)> {
        let m = x
            .par_chunks_mut(PIECE)
            .enumerate()
            .map(|(i, p)| -> Result<u32> {
                src.read_at(p, at + (i * PIECE) as u64)?;
                Ok(vectorized(Maxima(p)))
            })
            .try_reduce(|| 0, |a, b| Ok(a.max(b)))?;
        Ok(self.first_pass(x, at, m))
    }

    /// Whether the scales need a first pass over the whole tensor: one scale for the
    /// whole tensor (`--block tensor`), or a second level (its amax).
    pub(crate) fn needs_first_pass(&self) -> bool {
        self.scaling.second_level || self.scaling.block == crate::scaling::Block::Tensor
    }

    /// The element ranges (`start`, `len`) a tensor is quantized in, chunk after chunk, of
    /// about `target` elements: each holds whole tiles (whole bands of tile rows, or whole
    /// tiles of one row), except with one tile for the whole tensor, whose amax comes from
    /// a first pass. Every chunk but the last of a matrix or row holds a multiple of 8
    /// elements (packed elements fill whole bytes).
    pub(crate) fn chunk_ranges(&self, target: u64) -> Vec<(u64, u64)> {
        let g = self.geo;
        let n = g.elements();
        // A multiple of `unit` elements near `target`, and of 8.
        let fit = |unit: u64| {
            let mut s = (target / unit).max(1) * unit;
            while !s.is_multiple_of(8) {
                s += unit;
            }
            s
        };
        let steps = |from: u64, to: u64, step: u64, out: &mut Vec<(u64, u64)>| {
            let mut at = from;
            while at < to {
                let len = step.min(to - at);
                out.push((at, len));
                at += len;
            }
        };
        let mut out = Vec::new();
        let per = g.m * g.k;
        let band = g.r.min(g.m) * g.k;
        if self.scaling.block == crate::scaling::Block::Tensor {
            steps(0, n, fit(1), &mut out);
        } else if per <= target {
            // Whole matrices.
            steps(0, n, fit(per.max(1)), &mut out);
        } else if band <= target || g.r > 1 {
            // Whole bands of each matrix (a band longer than the target still whole).
            let step = fit(band);
            for o in 0..g.outer {
                steps(o * per, (o + 1) * per, step, &mut out);
            }
        } else {
            // Rows longer than the target, one tile high: whole tiles of a row.
            let step = fit(g.c);
            for row in 0..g.outer * g.m {
                steps(row * g.k, (row + 1) * g.k, step, &mut out);
            }
        }
        out
    }

    /// Whether the tiles are runs of one row that divide it: tile `t` holds the elements
    /// `c·t .. c·(t + 1)`.
    fn rows_of_tiles(&self) -> bool {
        self.geo.r == 1 && self.geo.k.is_multiple_of(self.geo.c)
    }

    /// The first tile of the elements from flat index `at` on.
    pub(crate) fn first_tile(&self, at: u64) -> usize {
        let mut t = 0;
        self.segments(at as usize, 1, |_, _, tile| t = tile);
        t
    }

    /// The first pass over the elements `x` (flat index `at` on, whole tiles unless the
    /// tensor is one tile): their largest magnitude (NaN and infinity above every finite
    /// one; the amax of `--block tensor`), and the largest of the maxima of their tiles
    /// without NaN or infinity (a second level's amax). The tensor's are the largest of its
    /// chunks'.
    ///
    /// `m` is the elements' largest magnitude, which the caller found while reading them.
    fn first_pass(&self, x: &[u32], at: u64, m: u32) -> (u32, u32) {
        let finite = |m: u32| if m < 0x7f80_0000 { m } else { 0 };
        if m < 0x7f80_0000 || self.scaling.block == crate::scaling::Block::Tensor {
            // Every tile finite (or one tile, which may hold a NaN in another chunk: the
            // caller's maximum of the first numbers tells).
            return (m, finite(m));
        }
        let maxima = self.chunk_maxima(x, at);
        let all = maxima.iter().copied().max().unwrap_or(0);
        let fin = maxima.into_iter().map(finite).max().unwrap_or(0);
        (all, fin)
    }

    /// The second-level scale of a tensor whose first pass ([`Quantizer::first_pass`]) gave
    /// `amax`.
    pub(crate) fn second_of(&self, amax: u32) -> f32 {
        second_level_scale(f32::from_bits(amax), self.elem.max)
    }

    /// The largest magnitude of every tile of the elements `x` (flat index `at` on, whole
    /// tiles), as the `f32` encoding without its sign (NaN and infinity above every finite
    /// one), in row-major tile order from the first.
    pub(crate) fn chunk_maxima(&self, x: &[u32], at: u64) -> Vec<u32> {
        if x.is_empty() {
            return Vec::new();
        }
        let at = at as usize;
        let c = self.geo.c as usize;
        if self.rows_of_tiles() && at.is_multiple_of(c) && x.len().is_multiple_of(c) {
            // Whole tiles one after another.
            let mut out = vec![0u32; x.len() / c];
            let per = (PIECE / c).max(1);
            out.par_chunks_mut(per)
                .zip(x.par_chunks(per * c))
                .for_each(|(o, p)| vectorized(TileMaxima { x: p, c, out: o }));
            return out;
        }
        let t0 = self.first_tile(at as u64);
        let last = self.first_tile((at + x.len() - 1) as u64);
        // Each piece's maxima over the span of its tiles, then merged.
        let parts: Vec<(usize, Vec<u32>)> = x
            .par_chunks(PIECE)
            .enumerate()
            .map(|(pi, p)| {
                let from = at + pi * PIECE;
                let mut segs = Vec::new();
                self.segments(from, p.len(), |s, e, t| {
                    segs.push(Segment {
                        start: s,
                        end: e,
                        tile: t,
                    })
                });
                // (A piece that starts inside a row comes back to the band's first tiles
                // on the next row: its tiles are a range, but not in order.)
                let lo = segs.iter().map(|s| s.tile).min().unwrap_or(0);
                let hi = segs.iter().map(|s| s.tile).max().unwrap_or(0);
                let mut m = vec![0u32; hi - lo + 1];
                for s in &mut segs {
                    s.tile -= lo;
                }
                vectorized(SegmentMaxima {
                    x: p,
                    segs: &segs,
                    out: &mut m,
                });
                (lo, m)
            })
            .collect();
        let mut out = vec![0u32; last - t0 + 1];
        for (lo, m) in parts {
            for (o, v) in out[lo - t0..].iter_mut().zip(m) {
                *o = (*o).max(v);
            }
        }
        out
    }

    /// Quantizes the elements `x` (flat index `at` on; whole tiles, or any run of the one
    /// tile of the tensor) whose tiles' maxima are `amax` (from the chunk's first tile) into
    /// the codes `q` and the scales of those tiles, `scales`. Returns the statistics (the
    /// blocks counted: those of `amax`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn quantize_chunk<D: Word + Send>(
        &self,
        x: &[u32],
        at: u64,
        amax: &[u32],
        second: Option<f32>,
        random: Option<Words<'_>>,
        q: &mut [D],
        scales: &mut [u32],
    ) -> Stats {
        let at = at as usize;
        let t0 = if x.is_empty() {
            0
        } else {
            self.first_tile(at as u64)
        };
        // 1. Every tile's scale, what its elements are scaled by, and how they are counted.
        let (table, own) = self.tile_work(amax, second, scales);
        let tiles = Tiles {
            table: &table,
            index: own.as_deref().unwrap_or(scales),
        };
        // 2. The elements, in pieces in parallel.
        let mut st = x
            .par_chunks(PIECE)
            .zip(q.par_chunks_mut(PIECE))
            .enumerate()
            .map_init(Scratch::default, |scratch, (pi, (xs, qs))| {
                let from = at + pi * PIECE;
                let work = Piece {
                    at: from,
                    t0,
                    tiles,
                    random: random.map(|s| (s, from as u64)),
                };
                self.piece(xs, qs, &work, scratch)
            })
            .reduce(Stats::default, |mut a, b| {
                a.merge(&b);
                a
            });
        st.blocks = amax.len() as u64;
        st.nan_blocks = amax.iter().filter(|&&m| m >= 0x7f80_0000).count() as u64;
        st
    }

    /// The scales of tiles whose maxima are `amax` (their bits into `scales`), and how each
    /// tile's elements are scaled and counted: the table of [`Tiles`], and its index unless
    /// that is the scales' bits (8-bit scales).
    fn tile_work(
        &self,
        amax: &[u32],
        second: Option<f32>,
        scales: &mut [u32],
    ) -> (Vec<TileWork>, Option<Vec<u32>>) {
        let s2 = second.map_or(1.0, |s| s as f64);
        let (lo, hi) = self.bounds;
        let fast = self.codes.is_some();
        let format = self.scaling.format;
        let work = |bits: u32| -> TileWork {
            let d = divisor(format, bits, second);
            let value = scale_value(format, bits);
            let finite = !value.is_nan();
            let factor = match d {
                Divisor::Pow2(e) => exp2i(-e),
                _ if !finite => 1.0,
                _ => value * s2,
            };
            let key = saturation_key(d, hi);
            // (The negative side by symmetry: scaling −x gives −(x scaled).)
            let t_lo = match lo {
                f64::NEG_INFINITY => Some(i32::MIN),
                _ => saturation_key(d, -lo).map(|t| -1 - t),
            };
            let range = BlockRange {
                down: factor,
                t_lo: t_lo.unwrap_or(-1),
                t_hi: key.unwrap_or(0),
            };
            TileWork {
                div: d,
                range,
                // (The lane passes compare magnitudes: a symmetric range only, so not
                // under `.relu` or a directed rounding.)
                fast: fast
                    && finite
                    && factor.is_finite()
                    && key.is_some()
                    && crate::chunk::stats::lanes::symmetric(range.t_lo, range.t_hi),
                nan_scale: !finite,
            }
        };
        let none = TileWork {
            div: Divisor::Pow2(0),
            range: BlockRange::default(),
            fast: false,
            nan_scale: false,
        };
        if matches!(self.scaling.format, ScaleFormat::Ue8m0 | ScaleFormat::Ue4m3) {
            // Eight-bit scales: what a tile gets depends only on its scale's bits (and the
            // tensor's second level), so each value the scales take is worked out once.
            scales
                .par_chunks_mut(4096)
                .zip(amax.par_chunks(4096))
                .for_each(|(ss, ms)| {
                    vectorized(ScaleBits {
                        q: self,
                        second,
                        amax: ms,
                        out: ss,
                    })
                });
            let mut seen = [false; 256];
            for &bits in scales.iter() {
                seen[bits as usize & 0xff] = true;
            }
            let table = (0..256u32)
                .map(|bits| {
                    if seen[bits as usize] {
                        work(bits)
                    } else {
                        none
                    }
                })
                .collect();
            (table, None)
        } else {
            let mut table = vec![none; amax.len()];
            scales
                .par_iter_mut()
                .zip(table.par_iter_mut())
                .zip(amax.par_iter())
                .for_each(|((s, t), &m)| {
                    *s = scale_bits(format, self.scaling.rule, &self.elem, m, second);
                    *t = work(*s);
                });
            (table, Some((0..amax.len() as u32).collect()))
        }
    }

    /// Quantizes a piece of the tensor (elements `w.at ..`): scaled, converted, fixed
    /// where scaling is not exact in `f32`, and counted.
    fn piece<D: Word>(&self, xs: &[u32], qs: &mut [D], w: &Piece<'_>, sc: &mut Scratch) -> Stats {
        let Scratch {
            y,
            exact,
            rnd,
            segs,
            slow,
        } = sc;
        y.resize(xs.len(), 0);
        let y = &mut y[..xs.len()];
        exact.clear();
        segs.clear();
        let c = self.geo.c as usize;
        let runs = match Runs::uniform(
            self.rows_of_tiles() && w.at.is_multiple_of(c),
            c,
            w.at / c,
            xs.len(),
        ) {
            Some(Runs::Uniform { c, first }) => Runs::Uniform {
                c,
                first: first - w.t0,
            },
            _ => {
                self.segments(w.at, xs.len(), |s, e, t| {
                    segs.push(Segment {
                        start: s,
                        end: e,
                        tile: t - w.t0,
                    })
                });
                Runs::Listed(segs)
            }
        };
        vectorized(ScaleJob {
            x: xs,
            y,
            runs,
            tiles: w.tiles,
            exact,
        });
        if let Some((words, first)) = w.random {
            rnd.resize(xs.len(), 0);
            match words {
                Words::Stream(stream) => {
                    gpucvt_kernels::random::random_values(stream, first, &mut rnd[..xs.len()])
                }
                Words::Given(g) => {
                    let at = first as usize;
                    rnd[..xs.len()].copy_from_slice(&g[at..at + xs.len()]);
                }
            }
            self.kernel
                .convert_stochastic(y, qs, &rnd[..xs.len()])
                .expect("f32 words into words of the element's width");
        } else {
            self.kernel
                .convert(y, qs)
                .expect("f32 words into words of the element's width");
        }
        for &(i, p) in exact.iter() {
            let mut cv = self.conv;
            cv.policy.scale = p;
            if let Direction::Stochastic { width, .. } = cv.rounding.direction {
                cv.rounding = Rounding::stochastic(rnd.get(i).copied().unwrap_or(0) as u64, width);
            }
            qs[i] = D::from_u64(cv.apply(xs[i] as u64).bits);
        }
        let mut st = Stats::default();
        let mut acc = Groups::new(&Stats::default());
        let mut counts = [0u64; 6];
        slow.clear();
        match self.codes {
            Some(codes) => vectorized(StatsJob {
                x: xs,
                q: qs,
                runs,
                tiles: w.tiles,
                codes,
                acc: &mut acc,
                counts: &mut counts,
                slow,
            }),
            None => {
                let c = self.geo.c as usize;
                match runs {
                    Runs::Listed(segs) => slow.extend_from_slice(segs),
                    Runs::Uniform { first, .. } => {
                        slow.extend((0..xs.len() / c).map(|j| Segment {
                            start: j * c,
                            end: j * c + c,
                            tile: first + j,
                        }))
                    }
                }
            }
        }
        let table = self.table();
        for &s in slow.iter() {
            let t = w.tiles.get(s.tile);
            let (xb, qb, yb) = (&xs[s.start..s.end], &qs[s.start..s.end], &y[s.start..s.end]);
            self.count_slowly(xb, qb, yb, &t, table, &mut st);
        }
        st.elements += counts[5];
        st.saturated += counts[3];
        st.flushed_to_zero += counts[4];
        st.error_elements += counts[5];
        acc.err.add_to(&mut st);
        st.derive();
        st
    }

    /// Every encoding's value of the element format.
    fn table(&self) -> &[f64] {
        &self.table
    }

    /// Calls `f(start, end, tile)` for each run of elements of one tile among the `len`
    /// elements from flat index `at` on (`start`, `end` relative to `at`).
    #[inline]
    fn segments(&self, at: usize, len: usize, mut f: impl FnMut(usize, usize, usize)) {
        let g = self.geo;
        let (m, k, r, c) = (g.m as usize, g.k as usize, g.r as usize, g.c as usize);
        if r == 1 && k % c == 0 {
            // Tiles of one row that divide it: tile `t` holds the elements `c·t ..`, one
            // after another.
            let mut tile = at / c;
            let mut i = 0;
            while i < len {
                let e = ((tile + 1) * c - at).min(len);
                f(i, e, tile);
                i = e;
                tile += 1;
            }
            return;
        }
        let (rt, ct) = (g.row_tiles() as usize, g.col_tiles() as usize);
        let mut i = 0;
        while i < len {
            let flat = at + i;
            let (row_all, col) = (flat / k, flat % k);
            let (o, row) = (row_all / m, row_all % m);
            let band = o * rt + row / r;
            let row_end = i + (k - col).min(len - i);
            let mut col = col;
            while i < row_end {
                let j = col / c;
                let n = ((j + 1) * c - col).min(row_end - i);
                f(i, i + n, band * ct + j);
                i += n;
                col += n;
            }
        }
    }

    /// The statistics of elements of one tile (`t`) that may be NaN or infinite on either
    /// side (see [`Stats`]); `yb`: their scaled words.
    fn count_slowly<D: Word>(
        &self,
        xb: &[u32],
        qb: &[D],
        yb: &[u32],
        t: &TileWork,
        table: &[f64],
        st: &mut Stats,
    ) {
        if t.nan_scale {
            // A NaN scale makes every value of the tile NaN, whatever its code.
            st.elements += xb.len() as u64;
            st.nan += xb.len() as u64;
            return;
        }
        let (factor, d) = (t.range.down, t.div);
        let (lo, hi) = self.bounds;
        for ((&w, qv), &yw) in xb.iter().zip(qb).zip(yb) {
            let x = f32::from_bits(w) as f64;
            let out = table[qv.to_u64() as usize];
            st.elements += 1;
            if out.is_nan() {
                st.nan += 1;
                continue;
            }
            if x.is_nan() {
                st.nan_to_number += 1;
                continue;
            }
            let scaled = match d {
                Divisor::Pow2(e) => x * exp2i(e),
                _ => f32::from_bits(yw) as f64,
            };
            if out.is_infinite() {
                if x.is_finite() {
                    st.overflow_to_inf += 1;
                }
                continue;
            }
            if scaled > hi || scaled < lo {
                st.saturated += 1;
            } else if out == 0.0 && x != 0.0 && !(self.conv.policy.relu && x < 0.0) {
                st.flushed_to_zero += 1;
            }
            if x.is_finite() {
                let err = (out * factor - x).abs();
                st.error_elements += 1;
                st.sum_abs_error += err;
                st.max_abs_error = st.max_abs_error.max(err);
                st.sum_sq_error += err * err;
                st.sum_sq_input += x * x;
                if x != 0.0 {
                    st.max_rel_error = st.max_rel_error.max(err / x.abs());
                }
            }
        }
    }

    /// Elements and scales per matrix.
    fn matrix_sizes(&self) -> (usize, usize) {
        let g = self.geo;
        (
            (g.m * g.k).max(1) as usize,
            (g.row_tiles() * g.col_tiles()).max(1) as usize,
        )
    }

    /// The values of quantized elements: `q × s (× s2)` for each element, exact (`f64` holds
    /// every such product of the formats here), NaN where the scale is NaN. `scales`:
    /// row-major, as [`Quantizer::quantize`] gives them ([`Quantizer::read_layout`] of the
    /// written ones).
    pub fn dequantize<D: Word>(
        &self,
        q: &[D],
        scales: &[u32],
        second: Option<f32>,
    ) -> Result<Vec<f64>> {
        let n = self.geo.elements() as usize;
        if q.len() != n {
            return Err(Error::Invalid(format!(
                "dequantize: {} elements were given for shape {:?} ({n})",
                q.len(),
                self.shape
            )));
        }
        if scales.len() != self.scale_count() {
            return Err(Error::Invalid(format!(
                "dequantize: {} scales were given for shape {:?} ({})",
                scales.len(),
                self.shape,
                self.scale_count()
            )));
        }
        let table = decode_table(&self.conv.dst);
        let g = self.geo;
        let (k, c) = (g.k as usize, g.c as usize);
        let group = (g.r.min(g.m) * g.k) as usize;
        let ct = g.col_tiles() as usize;
        let s2 = second.map_or(1.0, |s| s as f64);
        let mut out = vec![0f64; n];
        if n == 0 {
            return Ok(out);
        }
        let (per, per_scales) = self.matrix_sizes();
        out.par_chunks_mut(per)
            .zip(q.par_chunks(per))
            .zip(scales.par_chunks(per_scales))
            .flat_map(|((om, qm), sm)| {
                om.par_chunks_mut(group)
                    .zip(qm.par_chunks(group))
                    .zip(sm.par_chunks(ct))
            })
            .for_each(|((o, qs), ss)| {
                let f: Vec<f64> = ss
                    .iter()
                    .map(|&s| scale_value(self.scaling.format, s) * s2)
                    .collect();
                for (orow, qrow) in o.chunks_mut(k).zip(qs.chunks(k)) {
                    for ((ob, qb), &f) in orow.chunks_mut(c).zip(qrow.chunks(c)).zip(&f) {
                        for (o, qv) in ob.iter_mut().zip(qb) {
                            *o = table[qv.to_u64() as usize] * f;
                        }
                    }
                }
            });
        Ok(out)
    }
}

/// Elements per piece of parallel work.
const PIECE: usize = 1 << 16;

/// Where [`Quantizer::stream`] reads a tensor's `f32` words from: any part of it, from any
/// thread.
pub(crate) trait Source: Sync {
    /// The words from flat index `at` on into `x` (filled).
    fn read_at(&self, x: &mut [u32], at: u64) -> Result<()>;
}

/// Fills `x` with the words from flat index `at` on, each piece by a worker of the current
/// pool.
fn read_pieces(src: &impl Source, x: &mut [u32], at: u64) -> Result<()> {
    x.par_chunks_mut(PIECE)
        .enumerate()
        .try_for_each(|(i, p)| src.read_at(p, at + (i * PIECE) as u64))
}

/// The buffers [`Quantizer::stream`] works in, kept from one tensor to the next (so that
/// each is allocated and faulted in once).
#[derive(Default)]
pub(crate) struct StreamBuffers<D> {
    /// A chunk's `f32` words.
    x: Vec<u32>,
    /// A chunk's element codes.
    codes: Vec<D>,
}

/// A worker's buffers, kept from one piece to the next.
#[derive(Default)]
struct Scratch {
    /// The scaled `f32` words.
    y: Vec<u32>,
    /// Elements for the exact core, with their power of two.
    exact: Vec<(usize, i32)>,
    /// Random words (stochastic rounding).
    rnd: Vec<u32>,
    /// The piece's tile runs.
    segs: Vec<Segment>,
    /// The runs the general statistics loop counts.
    slow: Vec<Segment>,
}

/// What [`Quantizer::piece`] needs besides its elements.
struct Piece<'a> {
    /// The flat index of its first element.
    at: usize,
    /// The first tile of its chunk (`tiles[0]`).
    t0: usize,
    tiles: Tiles<'a>,
    /// The random words and the index of the first element (stochastic rounding).
    random: Option<(Words<'a>, u64)>,
}

/// Where stochastic rounding's random words come from.
#[derive(Clone, Copy)]
pub(crate) enum Words<'a> {
    /// The stream `gpucvt_kernels::random` draws from this state.
    Stream(u64),
    /// One word per element of the tensor.
    Given(&'a [u32]),
}

/// The scales' bits of tiles whose maxima are `amax` into `out` ([`scale_bits`]), as work
/// for [`vectorized`].
struct ScaleBits<'a> {
    q: &'a Quantizer,
    second: Option<f32>,
    amax: &'a [u32],
    out: &'a mut [u32],
}

impl Vectorizable for ScaleBits<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let ScaleBits {
            q,
            second,
            amax,
            out,
        } = self;
        let (format, rule, elem) = (q.scaling.format, q.scaling.rule, q.elem);
        // One loop per format and second level, so that each is vectorized on its own.
        macro_rules! each {
            ($f:expr, $s:expr) => {
                for (o, &m) in out.iter_mut().zip(amax) {
                    *o = scale_bits($f, rule, &elem, m, $s);
                }
            };
        }
        match (format, second) {
            (ScaleFormat::Ue4m3, Some(s2)) => each!(ScaleFormat::Ue4m3, Some(s2)),
            (ScaleFormat::Ue4m3, None) => each!(ScaleFormat::Ue4m3, None),
            (ScaleFormat::Ue8m0, _) => each!(ScaleFormat::Ue8m0, second),
            _ => each!(format, second),
        }
    }
}

/// The largest magnitude of `f32` words ([`max_magnitude`]), as work for [`vectorized`].
pub(crate) struct Maxima<'a>(pub(crate) &'a [u32]);

impl Vectorizable for Maxima<'_> {
    type Output = u32;

    #[inline(always)]
    fn run(self) -> u32 {
        max_magnitude(self.0)
    }
}

/// The maxima of whole tiles of `c` elements one after another into `out`, as work for
/// [`vectorized`].
struct TileMaxima<'a> {
    x: &'a [u32],
    c: usize,
    out: &'a mut [u32],
}

impl Vectorizable for TileMaxima<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let TileMaxima { x, c, out } = self;
        match c {
            16 => maxima_of::<16>(x, out),
            32 => maxima_of::<32>(x, out),
            _ => {
                for (o, t) in out.iter_mut().zip(x.chunks(c)) {
                    *o = max_magnitude(t);
                }
            }
        }
    }
}

/// The maxima of tiles of `C` elements (a multiple of 8): each tile's eight-lane maxima,
/// then their maximum.
#[inline(always)]
fn maxima_of<const C: usize>(x: &[u32], out: &mut [u32]) {
    for (o, t) in out.iter_mut().zip(x.chunks_exact(C)) {
        let mut m = [0u32; 8];
        for c in t.chunks_exact(8) {
            for l in 0..8 {
                m[l] = m[l].max(c[l] & 0x7fff_ffff);
            }
        }
        *o = m.into_iter().max().unwrap_or(0);
    }
}

/// The maxima of a piece's tile runs into `out` (indexed by the runs' tiles), as work for
/// [`vectorized`].
struct SegmentMaxima<'a> {
    x: &'a [u32],
    segs: &'a [Segment],
    out: &'a mut [u32],
}

impl Vectorizable for SegmentMaxima<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        for s in self.segs {
            let m = max_magnitude(&self.x[s.start..s.end]);
            let o = &mut self.out[s.tile];
            *o = (*o).max(m);
        }
    }
}

/// Every encoding's value of a format of at most 16 bits.
fn decode_table(f: &Format) -> Vec<f64> {
    (0..1u64 << f.width())
        .map(|b| f.decode(b).to_f64_lossy())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::{Block, ScaleFormat, ScaleRule};
    use gpucvt_core::format::E4M3;

    /// Given random words: the stream's own words give the stream's result, zero words give
    /// round-toward-zero, and the count and the rounding are checked.
    #[test]
    fn given_random_words() {
        let sat = satfinite();
        let rs = Conversion::new(F32, E4M3, Rounding::stochastic(0, 8), sat);
        let rz = Conversion::new(F32, E4M3, Rounding::RZ, sat);
        let scaling = BlockScaling::mx(32, ScaleRule::Floor);
        let x: Vec<u32> = (0..256)
            .map(|i| ((i as f32 - 100.0) * 1.037).to_bits())
            .collect();
        let run = |conv: Conversion, words: Option<&[u32]>, stream: Option<u64>| {
            let qz = Quantizer::new(conv, &scaling, &[4, 64]).unwrap();
            let mut q = vec![0u8; 256];
            let mut s = vec![0u32; qz.scale_count()];
            match words {
                Some(w) => qz.quantize_with_rbits(&x, None, w, &mut q, &mut s),
                None => qz.quantize(&x, None, stream, &mut q, &mut s),
            }
            .map(|_| (q, s))
        };
        let mut stream_words = vec![0u32; 256];
        gpucvt_kernels::random::random_values(99, 0, &mut stream_words);
        let seeded = run(rs, None, Some(99)).unwrap();
        assert_eq!(run(rs, Some(&stream_words), None).unwrap(), seeded);
        let zero = run(rs, Some(&[0; 256]), None).unwrap();
        assert_eq!(zero, run(rz, None, None).unwrap());
        assert_ne!(zero.0, seeded.0);
        let e = run(rs, Some(&[0; 255]), None).unwrap_err().to_string();
        assert!(
            e.contains("255 random words were given for 256 elements"),
            "{e}"
        );
        let e = run(rz, Some(&[0; 256]), None).unwrap_err().to_string();
        assert!(
            e.contains("random words go with stochastic rounding"),
            "{e}"
        );
    }

    /// Tiles whose rows do not divide a matrix's, over a batch of matrices: each matrix is
    /// quantized as if it were alone (a band of tiles must not run into the next matrix).
    #[test]
    fn ragged_tiles_stay_inside_each_matrix() {
        let sat = satfinite();
        let conv = Conversion::new(F32, E4M3, Rounding::RN, sat);
        let scaling = BlockScaling {
            block: Block::Tile(4, 4),
            axis: -1,
            format: ScaleFormat::F32,
            rule: ScaleRule::Floor,
            second_level: false,
            layout: ScaleLayout::Rows,
        };
        // Two 5x6 matrices; the second's values are 1000 times the first's.
        let x: Vec<u32> = (0..60)
            .map(|i| {
                let v = (i % 30 + 1) as f32 * if i < 30 { 1.0 } else { 1000.0 };
                v.to_bits()
            })
            .collect();
        let both = Quantizer::new(conv, &scaling, &[2, 5, 6]).unwrap();
        assert_eq!(both.scale_count(), 8);
        let mut q = vec![0u8; 60];
        let mut s = vec![0u32; 8];
        both.quantize(&x, None, None, &mut q, &mut s).unwrap();
        let one = Quantizer::new(conv, &scaling, &[5, 6]).unwrap();
        let (mut q1, mut s1) = (vec![0u8; 60], vec![0u32; 8]);
        for m in 0..2 {
            one.quantize(
                &x[m * 30..][..30],
                None,
                None,
                &mut q1[m * 30..][..30],
                &mut s1[m * 4..][..4],
            )
            .unwrap();
        }
        assert_eq!(s, s1);
        assert_eq!(q, q1);
        // The last tile row of the first matrix holds its row 4 only (25 to 30), none of
        // the second matrix's thousands.
        assert_eq!(f32::from_bits(s[2]), 28.0 / 448.0);
        assert_eq!(f32::from_bits(s[3]), 30.0 / 448.0);
        let back = both.dequantize(&q, &s, None).unwrap();
        let mut back1 = one.dequantize(&q1[..30], &s1[..4], None).unwrap();
        back1.extend(one.dequantize(&q1[30..], &s1[4..], None).unwrap());
        assert_eq!(back, back1);
    }
}

/// The policy the quantizer tests convert under: `.satfinite`, as the recipes do.
#[cfg(test)]
fn satfinite() -> gpucvt_core::Policy {
    gpucvt_core::Policy {
        satfinite: true,
        ..gpucvt_core::Policy::default()
    }
}

/// Asserts that two runs' statistics agree: every count and the largest error exactly, the
/// error sums up to their order of addition.
#[cfg(test)]
fn assert_same_stats(got: &Stats, want: &Stats, what: &str) {
    let counts = |t: &Stats| {
        (
            t.elements,
            t.saturated,
            t.flushed_to_zero,
            t.nan,
            t.nan_to_number,
            t.overflow_to_inf,
            t.blocks,
            t.nan_blocks,
            t.error_elements,
            t.max_abs_error,
            t.max_rel_error,
        )
    };
    assert_eq!(counts(got), counts(want), "{what}");
    for (g, w) in [
        (got.sum_abs_error, want.sum_abs_error),
        (got.sum_sq_error, want.sum_sq_error),
        (got.sum_sq_input, want.sum_sq_input),
    ] {
        assert!((g - w).abs() <= 1e-12 * w.max(1e-300), "{what}: {g} {w}");
    }
}

#[cfg(test)]
mod streamed {
    use super::*;
    use crate::scaling::{Block, ScaleFormat, ScaleRule};
    use gpucvt_core::format::{E2M1, E4M3, E5M2};

    /// A tensor in memory as a [`Source`], counting the words read.
    struct Slice<'a> {
        x: &'a [u32],
        read: std::sync::atomic::AtomicU64,
    }

    impl Source for Slice<'_> {
        fn read_at(&self, x: &mut [u32], at: u64) -> Result<()> {
            let at = at as usize;
            x.copy_from_slice(&self.x[at..at + x.len()]);
            self.read
                .fetch_add(x.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
    }

    /// Quantizing chunk by chunk (small chunks, so that tiles, rows and matrices are cut
    /// every way the chunking allows) gives the codes, scales, second level and counts of
    /// quantizing the whole tensor at once; the error sums agree up to their order.
    #[test]
    fn chunks_give_what_the_whole_tensor_gives() {
        let sat = satfinite();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let cases: Vec<(
            Vec<u64>,
            Block,
            ScaleFormat,
            bool,
            gpucvt_core::format::Format,
        )> = vec![
            (vec![6, 64], Block::Len(16), ScaleFormat::Ue4m3, true, E2M1),
            (
                vec![3, 5, 96],
                Block::Len(32),
                ScaleFormat::F32,
                false,
                E4M3,
            ),
            (
                vec![2, 7, 40],
                Block::Tile(4, 16),
                ScaleFormat::F32,
                false,
                E4M3,
            ),
            (vec![9, 33], Block::Row, ScaleFormat::Bf16, false, E5M2),
            (vec![40, 3], Block::Row, ScaleFormat::F32, false, E4M3),
            (vec![4992], Block::Len(32), ScaleFormat::Ue8m0, false, E4M3),
            (vec![3000], Block::Row, ScaleFormat::F32, false, E4M3),
            (vec![12, 50], Block::Tensor, ScaleFormat::F32, false, E4M3),
            (vec![4, 48], Block::Len(16), ScaleFormat::Ue8m0, false, E2M1),
            // A second level over tiles whose maxima take the general loop (tall tiles),
            // and over rows of three tiles.
            (
                vec![2, 7, 40],
                Block::Tile(4, 16),
                ScaleFormat::Ue4m3,
                true,
                E2M1,
            ),
            (vec![5, 48], Block::Len(16), ScaleFormat::Ue4m3, true, E2M1),
        ];
        for (shape, block, format, second_level, dst) in cases {
            let conv = Conversion::new(F32, dst, Rounding::RN, sat);
            let scaling = BlockScaling {
                block,
                axis: -1,
                format,
                rule: ScaleRule::Floor,
                second_level,
                layout: ScaleLayout::Rows,
            };
            let qz = Quantizer::new(conv, &scaling, &shape).unwrap();
            let n: u64 = shape.iter().product();
            // Values over many binades, a NaN and an infinity in some tiles.
            let mut x: Vec<u32> = (0..n)
                .map(|i| {
                    let v = ((i * 2654435761) % 1000) as f32 / 37.0 - 13.0;
                    (v * 2f32.powi((i % 23) as i32 - 11)).to_bits()
                })
                .collect();
            for (i, special) in [(5usize, f32::NAN), (77, f32::INFINITY)] {
                if i < x.len() && block != Block::Tensor {
                    x[i] = special.to_bits();
                }
            }
            let mut q = vec![0u8; n as usize];
            let mut s = vec![0u32; qz.scale_count()];
            let (whole, s2) = pool
                .install(|| qz.quantize_auto(&x, None, &mut q, &mut s))
                .unwrap();
            for target in [8u64, 40, 100, 1000] {
                let what = format!("{shape:?} {block:?} {format:?} chunks of {target}");
                let src = Slice {
                    x: &x,
                    read: 0.into(),
                };
                let mut got = Vec::new();
                let mut bufs = StreamBuffers::default();
                let (st, scales, second) = qz
                    .stream(
                        &pool,
                        target,
                        &src,
                        None,
                        None,
                        &mut bufs,
                        |c: &mut Vec<u8>, len| {
                            assert_eq!(c.len() as u64, len);
                            got.extend_from_slice(c);
                            // The sink may keep the buffer and give another back.
                            *c = vec![7; 3];
                            Ok(())
                        },
                    )
                    .unwrap();
                // Read twice with a first pass, else once.
                let passes = 1 + qz.needs_first_pass() as u64;
                assert_eq!(src.read.into_inner(), passes * n, "{what}");
                assert_eq!(got, q, "{what}");
                assert_eq!(scales, s, "{what}");
                assert_eq!(second, s2, "{what}");
                assert_same_stats(&st, &whole, &what);
                // Chunks of whole tiles (or any run of the one tile), of multiples of 8
                // elements but at the ends of rows or matrices.
                for (at, len) in qz.chunk_ranges(target) {
                    if block != Block::Tensor {
                        let t0 = qz.first_tile(at);
                        let t1 = qz.first_tile(at + len - 1);
                        if at > 0 {
                            assert_ne!(qz.first_tile(at - 1), t0, "{what}: chunk at {at}");
                        }
                        if at + len < n {
                            assert_ne!(qz.first_tile(at + len), t1, "{what}: chunk at {at}");
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod pieces {
    use super::*;
    use crate::scaling::{Block, ScaleFormat, ScaleRule};
    use gpucvt_core::format::E4M3;

    /// Tall tiles whose rows do not divide a piece of parallel work: a piece starts inside a
    /// row and comes back to the band's first tiles on the next. Each tile's scale is its
    /// own maximum's, computed here tile by tile.
    #[test]
    fn pieces_that_start_inside_rows() {
        let sat = satfinite();
        let conv = Conversion::new(F32, E4M3, Rounding::RN, sat);
        let scaling = BlockScaling {
            block: Block::Tile(128, 128),
            axis: -1,
            format: ScaleFormat::F32,
            rule: ScaleRule::Floor,
            second_level: false,
            layout: ScaleLayout::Rows,
        };
        let (m, k) = (300usize, 700usize);
        let qz = Quantizer::new(conv, &scaling, &[m as u64, k as u64]).unwrap();
        let x: Vec<u32> = (0..m * k)
            .map(|i| (((i * 7919) % 1009) as f32 - 500.0).to_bits())
            .collect();
        let mut q = vec![0u8; m * k];
        let mut s = vec![0u32; qz.scale_count()];
        qz.quantize_auto(&x, None, &mut q, &mut s).unwrap();
        let ct = k.div_ceil(128);
        for (t, &bits) in s.iter().enumerate() {
            let (r0, c0) = (t / ct * 128, t % ct * 128);
            let amax = (r0..(r0 + 128).min(m))
                .flat_map(|r| (c0..(c0 + 128).min(k)).map(move |c| r * k + c))
                .map(|i| f32::from_bits(x[i]).abs())
                .fold(0.0f32, f32::max);
            assert_eq!(f32::from_bits(bits), amax / 448.0, "tile {t}");
        }
    }
}

#[cfg(test)]
mod fast_stats {
    use super::*;
    use crate::chunk::mx::scale as scale_word;
    use crate::scaling::{Block, ScaleRule};
    use gpucvt_core::format::{BF16, E2M1, E4M3, E5M2, F16};
    use gpucvt_core::Policy;

    /// The statistics the general loop ([`Quantizer::count_slowly`]) gives over the whole
    /// tensor, tile run by tile run.
    fn general(qz: &Quantizer, x: &[u32], q: &[u16], second: Option<f32>) -> Stats {
        let amax = qz.chunk_maxima(x, 0);
        let mut scales = vec![0u32; amax.len()];
        let (table, own) = qz.tile_work(&amax, second, &mut scales);
        let tiles = Tiles {
            table: &table,
            index: own.as_deref().unwrap_or(&scales),
        };
        let mut st = Stats::default();
        qz.segments(0, x.len(), |s, e, t| {
            let w = tiles.get(t);
            let y: Vec<u32> = x[s..e]
                .iter()
                .map(|&v| match w.div {
                    Divisor::Pow2(p) => scale_word(v, p).0,
                    Divisor::Div(d) => (f32::from_bits(v) / d).to_bits(),
                    Divisor::Mul(r) => (f32::from_bits(v) * r).to_bits(),
                })
                .collect();
            qz.count_slowly(&x[s..e], &q[s..e], &y, &w, &qz.table, &mut st);
        });
        st.blocks = amax.len() as u64;
        st.nan_blocks = amax.iter().filter(|&&m| m >= 0x7f80_0000).count() as u64;
        st
    }

    /// The vectorized statistics (lane passes, groups redone run by run, the general loop
    /// for what they cannot count) equal the general loop's: every count exactly, the
    /// largest error exactly, the error sum up to its order; over destinations with and
    /// without infinities and NaN, `.satfinite` or not, `.relu`, every scale format, tiles
    /// with NaN and infinity, and elements the scaling takes past the format's range.
    #[test]
    fn lane_passes_count_what_the_general_loop_counts() {
        let shape = [8u64, 64];
        let n = 512usize;
        let mut x: Vec<u32> = (0..n)
            .map(|i| {
                let v = ((i * 2654435761) % 997) as f32 / 50.0 - 9.0;
                (v * 2f32.powi((i % 19) as i32 - 9)).to_bits()
            })
            .collect();
        x[3] = f32::NAN.to_bits();
        x[100] = f32::NEG_INFINITY.to_bits();
        x[200] = 0;
        x[201] = 0x8000_0000;
        x[202] = 1; // the smallest subnormal
        let scalings = [
            (Block::Len(32), ScaleFormat::Ue8m0, false),
            (Block::Len(16), ScaleFormat::Ue8m0, false),
            (Block::Len(16), ScaleFormat::Ue4m3, true),
            (Block::Len(16), ScaleFormat::Ue4m3, false),
            (Block::Row, ScaleFormat::F32, false),
            (Block::Tile(4, 16), ScaleFormat::Bf16, false),
            (Block::Len(8), ScaleFormat::F32, false),
        ];
        let mut checked = 0;
        for dst in [E4M3, E5M2, E2M1, F16, BF16] {
            for (satfinite, relu) in [(true, false), (false, false), (true, true)] {
                for (block, format, second_level) in scalings {
                    for rule in [ScaleRule::Floor, ScaleRule::Rceil] {
                        let policy = Policy {
                            satfinite,
                            relu,
                            ..Policy::default()
                        };
                        let conv = Conversion::new(F32, dst, Rounding::RN, policy);
                        let scaling = BlockScaling {
                            block,
                            axis: -1,
                            format,
                            rule,
                            second_level,
                            layout: ScaleLayout::Rows,
                        };
                        let Ok(qz) = Quantizer::new(conv, &scaling, &shape) else {
                            continue;
                        };
                        let what = format!(
                            "{dst} sat {satfinite} relu {relu} {block:?} {format:?} {rule:?}"
                        );
                        let mut q = vec![0u16; n];
                        let mut s = vec![0u32; qz.scale_count()];
                        let (fast, s2) = qz.quantize_auto(&x, None, &mut q, &mut s).unwrap();
                        let slow = general(&qz, &x, &q, s2);
                        assert_same_stats(&fast, &slow, &what);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 150, "{checked}");
    }
}
