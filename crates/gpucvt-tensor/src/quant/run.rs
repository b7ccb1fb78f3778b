//! [`Quantizer`]: a tensor's `f32` words quantized in memory (tile rows in parallel), and the
//! quantized elements dequantized.

use crate::engine::exp2i;
use crate::engine::scale::{max_magnitude, scale as scale_word};
use crate::error::{Error, Result};
use crate::quant::scale::{block_scale, scale_value, Divisor, Element};
use crate::quant::{swizzle, swizzle_dims, unswizzle, BlockScaling, Geometry, ScaleLayout};
use crate::Stats;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, F32};
use gpucvt_core::round::{Direction, Rounding};
use gpucvt_kernels::{Kernel, Word};
use rayon::prelude::*;

/// Quantizes one tensor (its `f32` words in memory) with block scales, and dequantizes it.
///
/// ```
/// use gpucvt_core::{format::{E2M1, F32}, Conversion, Policy, Rounding};
/// use gpucvt_tensor::quant::{Block, BlockScaling, Quantizer, ScaleFormat, ScaleLayout, ScaleRule};
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
    /// Whether every result of a finite input is finite (`.satfinite`, or a destination
    /// without infinities and NaN): the statistics then take a shorter way.
    finite_outputs: bool,
    kernel: Kernel,
    scaling: BlockScaling,
    geo: Geometry,
    elem: Element,
    shape: Vec<u64>,
}

impl Quantizer {
    /// A quantizer of a tensor of `shape` whose `f32` elements `conv` converts (its source
    /// must be `f32`, its destination a float format of at most 16 bits).
    pub fn new(conv: Conversion, scaling: &BlockScaling, shape: &[u64]) -> Result<Quantizer> {
        let (elem, geo) = Quantizer::check(&conv, scaling, shape)?;
        Ok(Quantizer {
            conv,
            finite_outputs: conv.policy.satfinite
                || !(conv.dst.has_infinity() || conv.dst.has_nan()),
            kernel: Kernel::new(conv),
            scaling: *scaling,
            geo,
            elem,
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
        swizzle_dims(&crate::quant::scale_shape(
            &self.shape,
            self.scaling.block,
            self.scaling.axis,
        ))
    }

    /// The per-tensor second-level scale of the elements `x` (with a second level):
    /// `RN_f32(amax / (448 × max))`, `amax` over the blocks without NaN or infinity, at least
    /// `f32`'s smallest normal.
    pub fn tensor_scale(&self, x: &[u32]) -> Option<f32> {
        if !self.scaling.second_level {
            return None;
        }
        Some(self.second_from(&self.tile_maxima(x)))
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
        if self.scaling.second_level && second.is_none() {
            return Err(Error::Invalid(
                "quantize: the second-level scale is missing".into(),
            ));
        }
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
        if self.scaling.second_level && second.is_none() {
            return Err(Error::Invalid(
                "quantize: the second-level scale is missing".into(),
            ));
        }
        self.run(x, second, Some(Words::Given(rbits)), q, scales)
            .map(|r| r.0)
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
        // 1. Every tile's largest magnitude, then its scale and what its elements are
        //    multiplied or divided by.
        let amax = self.tile_maxima(x);
        let second = match second {
            None if self.scaling.second_level => Some(self.second_from(&amax)),
            s => s,
        };
        let tiles: Vec<(u32, Divisor)> = amax
            .par_iter()
            .map(|&m| {
                block_scale(
                    self.scaling.format,
                    self.scaling.rule,
                    &self.elem,
                    m,
                    second,
                )
            })
            .collect();
        for (s, t) in scales.iter_mut().zip(&tiles) {
            *s = t.0;
        }
        let finite: Vec<bool> = amax.iter().map(|&m| m < 0x7f80_0000).collect();
        let s2 = second.map_or(1.0, |s| s as f64);
        let factors: Vec<f64> = tiles
            .iter()
            .zip(&finite)
            .map(|(&(bits, d), &fin)| match d {
                Divisor::Pow2(e) => exp2i(-e),
                _ if !fin => 1.0,
                _ => scale_value(self.scaling.format, bits) * s2,
            })
            .collect();
        // 2. The elements, in pieces of whole rows (or of one long row) in parallel.
        let table = decode_table(&self.conv.dst);
        let k = self.geo.k as usize;
        let piece = if k >= PIECE { PIECE } else { PIECE / k * k };
        let mut st = x
            .par_chunks(piece)
            .zip(q.par_chunks_mut(piece))
            .enumerate()
            .map_init(Scratch::default, |scratch, (pi, (xs, qs))| {
                let at = pi * piece;
                let work = Piece {
                    at,
                    tiles: &tiles,
                    finite: &finite,
                    factors: &factors,
                    table: &table,
                    random: random.map(|s| (s, at as u64)),
                };
                self.piece(xs, qs, &work, scratch)
            })
            .reduce(Stats::default, |mut a, b| {
                a.merge(&b);
                a
            });
        st.blocks = amax.len() as u64;
        st.nan_blocks = finite.iter().filter(|f| !**f).count() as u64;
        Ok((st, second))
    }

    /// The largest magnitude of every tile, as the `f32` encoding without its sign (NaN and
    /// infinity above every finite one), in row-major tile order.
    fn tile_maxima(&self, x: &[u32]) -> Vec<u32> {
        let g = self.geo;
        let (k, c) = (g.k as usize, g.c as usize);
        let ct = g.col_tiles() as usize;
        let band = (g.r.min(g.m) * g.k) as usize;
        // The bands of tiles of each matrix (a short last band ends with its matrix).
        let (per, _) = self.matrix_sizes();
        let all: Vec<&[u32]> = x.chunks(per).flat_map(|m| m.chunks(band)).collect();
        if all.len() >= 64 || band <= PIECE {
            // Many bands (or small ones): a band per task.
            let mut out = vec![0u32; all.len() * ct];
            out.par_chunks_mut(ct)
                .zip(all.par_iter())
                .for_each(|(o, b)| band_maxima(b, k, c, o));
            return out;
        }
        // Few large bands (a whole tensor, tall tiles): each band split into pieces of rows,
        // or of one long row, whose maxima are combined.
        let mut out = Vec::with_capacity(all.len() * ct);
        for b in all {
            let m = if b.len() > k {
                b.par_chunks(k * (PIECE / k).max(1))
                    .map(|p| {
                        let mut o = vec![0u32; ct];
                        band_maxima(p, k, c, &mut o);
                        o
                    })
                    .reduce(
                        || vec![0u32; ct],
                        |mut a, o| {
                            a.iter_mut().zip(&o).for_each(|(a, o)| *a = (*a).max(*o));
                            a
                        },
                    )
            } else {
                // One row: pieces of whole tiles (or of the one tile).
                let step = if c >= PIECE { PIECE } else { PIECE / c * c };
                let per: Vec<(usize, u32)> = b
                    .par_chunks(step)
                    .enumerate()
                    .flat_map_iter(|(i, p)| {
                        let first = i * step;
                        p.chunks(c.min(step))
                            .enumerate()
                            .map(move |(j, t)| ((first + j * c.min(step)) / c, max_magnitude(t)))
                    })
                    .collect();
                let mut o = vec![0u32; ct];
                for (t, m) in per {
                    o[t] = o[t].max(m);
                }
                o
            };
            out.extend(m);
        }
        out
    }

    /// Quantizes a piece of the tensor (elements `w.at ..`): scaled, converted, fixed
    /// where scaling is not exact in `f32`, and counted.
    fn piece<D: Word>(&self, xs: &[u32], qs: &mut [D], w: &Piece<'_>, sc: &mut Scratch) -> Stats {
        let Scratch { y, exact, rnd } = sc;
        y.resize(xs.len(), 0);
        let y = &mut y[..xs.len()];
        exact.clear();
        self.segments(w.at, xs.len(), |s, e, t| {
            let (xb, yb) = (&xs[s..e], &mut y[s..e]);
            match w.tiles[t].1 {
                Divisor::Pow2(p) => {
                    for (i, (&v, o)) in xb.iter().zip(yb.iter_mut()).enumerate() {
                        let (r, ex) = scale_word(v, p);
                        *o = r;
                        if ex && p != 0 {
                            exact.push((s + i, p));
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
        let max = self.elem.max as f64;
        let relu = self.conv.policy.relu;
        self.segments(w.at, xs.len(), |s, e, t| {
            let f = w.factors[t];
            let (xb, qb, yb) = (&xs[s..e], &qs[s..e], &y[s..e]);
            if w.finite[t] && f.is_finite() && !relu && self.finite_outputs {
                // A finite block into a format whose saturating results are finite: no NaN
                // or infinity on either side. (Powers of two: the input scaled exactly, as
                // `y` keeps the inputs the exact core converts.)
                let pow2 = match w.tiles[t].1 {
                    Divisor::Pow2(p) => Some(exp2i(p)),
                    _ => None,
                };
                let (sum, top, sat, zero) = finite_stats(xb, qb, yb, w.table, f, max, pow2);
                st.elements += xb.len() as u64;
                st.error_elements += xb.len() as u64;
                st.sum_abs_error += sum;
                st.max_abs_error = st.max_abs_error.max(top);
                st.saturated += sat;
                st.flushed_to_zero += zero;
            } else {
                self.count_slowly(xb, qb, yb, f, w.tiles[t].1, w.table, &mut st);
            }
        });
        st.mean_abs_error = if st.error_elements == 0 {
            0.0
        } else {
            st.sum_abs_error / st.error_elements as f64
        };
        st
    }

    /// Calls `f(start, end, tile)` for each run of elements of one tile among the `len`
    /// elements from flat index `at` on (`start`, `end` relative to `at`).
    fn segments(&self, at: usize, len: usize, mut f: impl FnMut(usize, usize, usize)) {
        let g = self.geo;
        let (m, k, r, c) = (g.m as usize, g.k as usize, g.r as usize, g.c as usize);
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

    /// The statistics of elements that may be NaN or infinite on either side (see [`Stats`]).
    #[allow(clippy::too_many_arguments)]
    fn count_slowly<D: Word>(
        &self,
        xb: &[u32],
        qb: &[D],
        yb: &[u32],
        factor: f64,
        d: Divisor,
        table: &[f64],
        st: &mut Stats,
    ) {
        let max = self.elem.max as f64;
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
            if scaled.abs() > max {
                st.saturated += 1;
            } else if out == 0.0 && x != 0.0 && !(self.conv.policy.relu && x < 0.0) {
                st.flushed_to_zero += 1;
            }
            if x.is_finite() {
                let err = (out * factor - x).abs();
                st.error_elements += 1;
                st.sum_abs_error += err;
                st.max_abs_error = st.max_abs_error.max(err);
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

/// The error sum and maximum, the saturated and the flushed counts of a run of finite
/// elements of one block whose values are `q × f` (`pow2`: the power of two the inputs are
/// scaled by; else the scaled inputs are `yb`). In eight lanes, so that the compiler keeps
/// eight sums and maxima in flight instead of one chain.
#[inline(always)]
fn finite_stats<D: Word>(
    xb: &[u32],
    qb: &[D],
    yb: &[u32],
    table: &[f64],
    f: f64,
    max: f64,
    pow2: Option<f64>,
) -> (f64, f64, u64, u64) {
    const L: usize = 8;
    let (mut sum, mut top, mut sat, mut zero) = ([0f64; L], [0f64; L], [0u64; L], [0u64; L]);
    let (use_y, m) = (pow2.is_none(), pow2.unwrap_or(0.0));
    let mut one = |l: usize, xv: u32, qv: &D, yv: u32| {
        let v = f32::from_bits(xv) as f64;
        let out = table[qv.to_u64() as usize];
        let err = (out * f - v).abs();
        sum[l] += err;
        top[l] = if err > top[l] { err } else { top[l] };
        let scaled = if use_y {
            f32::from_bits(yv) as f64
        } else {
            v * m
        };
        sat[l] += (scaled.abs() > max) as u64;
        zero[l] += ((out == 0.0) & (v != 0.0)) as u64;
    };
    let whole = xb.len() / L * L;
    for ((xc, qc), yc) in xb[..whole]
        .chunks_exact(L)
        .zip(qb[..whole].chunks_exact(L))
        .zip(yb[..whole].chunks_exact(L))
    {
        for l in 0..L {
            one(l, xc[l], &qc[l], yc[l]);
        }
    }
    for i in whole..xb.len() {
        one(0, xb[i], &qb[i], yb[i]);
    }
    (
        sum.iter().sum(),
        top.iter().fold(0.0, |a: f64, &b| a.max(b)),
        sat.iter().sum(),
        zero.iter().sum(),
    )
}

/// Elements per piece of parallel work.
const PIECE: usize = 1 << 16;

/// A worker's buffers, kept from one piece to the next.
#[derive(Default)]
struct Scratch {
    /// The scaled `f32` words.
    y: Vec<u32>,
    /// Elements for the exact core, with their power of two.
    exact: Vec<(usize, i32)>,
    /// Random words (stochastic rounding).
    rnd: Vec<u32>,
}

/// What [`Quantizer::piece`] needs besides its elements.
struct Piece<'a> {
    /// The flat index of its first element.
    at: usize,
    tiles: &'a [(u32, Divisor)],
    finite: &'a [bool],
    /// What each tile's element codes are multiplied by to give its values.
    factors: &'a [f64],
    table: &'a [f64],
    /// The random words and the index of the first element (stochastic rounding).
    random: Option<(Words<'a>, u64)>,
}

/// Where stochastic rounding's random words come from.
#[derive(Clone, Copy)]
enum Words<'a> {
    /// The stream `gpucvt_kernels::random` draws from this state.
    Stream(u64),
    /// One word per element of the tensor.
    Given(&'a [u32]),
}

/// The maxima of the tiles of a band of rows `b` (`k` columns, tiles `c` wide) into `o`.
fn band_maxima(b: &[u32], k: usize, c: usize, o: &mut [u32]) {
    for row in b.chunks(k) {
        for (a, t) in o.iter_mut().zip(row.chunks(c)) {
            *a = (*a).max(max_magnitude(t));
        }
    }
}

/// The per-tensor scale of a second level: `RN_f32(amax / (448 × max))`, at least `f32`'s
/// smallest normal (an all-zero tensor).
pub fn second_level_scale(amax: f32, elem_max: f32) -> f32 {
    (amax / (448.0 * elem_max)).max(f32::MIN_POSITIVE)
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
    use crate::quant::{Block, ScaleFormat, ScaleRule};
    use gpucvt_core::format::E4M3;
    use gpucvt_core::Policy;

    /// Given random words: the stream's own words give the stream's result, zero words give
    /// round-toward-zero, and the count and the rounding are checked.
    #[test]
    fn given_random_words() {
        let sat = Policy {
            satfinite: true,
            ..Policy::default()
        };
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
        let sat = Policy {
            satfinite: true,
            ..Policy::default()
        };
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
