//! [`Quantizer`]: a tensor's `f32` words quantized in memory (tile rows in parallel), and the
//! quantized elements dequantized.

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
    /// `RN_f32(amax / (448 × max))` over the finite elements, at least `f32`'s smallest
    /// normal.
    pub fn tensor_scale(&self, x: &[u32]) -> Option<f32> {
        if !self.scaling.second_level {
            return None;
        }
        let m = x
            .par_chunks(1 << 16)
            .map(|c| {
                c.iter()
                    .map(|&w| w & 0x7fff_ffff)
                    .filter(|&w| w < 0x7f80_0000)
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        Some(second_level_scale(f32::from_bits(m), self.elem.max))
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
        if self.scaling.second_level && second.is_none() {
            return Err(Error::Invalid(
                "quantize: the second-level scale is missing".into(),
            ));
        }
        if n == 0 {
            return Ok(Stats::default());
        }
        let g = self.geo;
        let group = (g.r.min(g.m) * g.k) as usize;
        let ct = g.col_tiles() as usize;
        // Bands of tiles never cross from one matrix into the next: a matrix whose row count
        // is not a multiple of the tile's ends in a short band.
        let per = (g.m * g.k) as usize;
        let sper = (g.row_tiles() * g.col_tiles()) as usize;
        let table = decode_table(&self.conv.dst);
        let merge = |mut a: Stats, b: Stats| {
            a.merge(&b);
            a
        };
        let stats = x
            .par_chunks(per)
            .zip(q.par_chunks_mut(per))
            .zip(scales.par_chunks_mut(sper))
            .enumerate()
            .map(|(mi, ((xm, qm), sm))| {
                xm.par_chunks(group)
                    .zip(qm.par_chunks_mut(group))
                    .zip(sm.par_chunks_mut(ct))
                    .enumerate()
                    .map(|(gi, ((xs, qs), ss))| {
                        let first = (mi * per + gi * group) as u64;
                        self.group(xs, qs, ss, second, random.map(|s| (s, first)), &table)
                    })
                    .reduce(Stats::default, merge)
            })
            .reduce(Stats::default, merge);
        Ok(stats)
    }

    /// One band of tiles: `xs` holds up to `r` whole rows of a matrix.
    fn group<D: Word>(
        &self,
        xs: &[u32],
        qs: &mut [D],
        ss: &mut [u32],
        second: Option<f32>,
        random: Option<(u64, u64)>,
        table: &[f64],
    ) -> Stats {
        let g = self.geo;
        let (k, c) = (g.k as usize, g.c as usize);
        let mut amax = vec![0u32; ss.len()];
        for row in xs.chunks(k) {
            for (a, blk) in amax.iter_mut().zip(row.chunks(c)) {
                *a = blk.iter().fold(*a, |m, &w| m.max(w & 0x7fff_ffff));
            }
        }
        let mut divs = Vec::with_capacity(ss.len());
        for (s, &m) in ss.iter_mut().zip(&amax) {
            let (bits, d) = block_scale(
                self.scaling.format,
                self.scaling.rule,
                &self.elem,
                m,
                second,
            );
            *s = bits;
            divs.push(d);
        }
        let mut y = vec![0u32; k];
        let mut exact = Vec::new();
        let mut rnd = vec![0u32; if random.is_some() { k } else { 0 }];
        let mut st = Stats {
            blocks: ss.len() as u64,
            nan_blocks: amax.iter().filter(|&&m| m >= 0x7f80_0000).count() as u64,
            ..Stats::default()
        };
        for (ri, (row, qrow)) in xs.chunks(k).zip(qs.chunks_mut(k)).enumerate() {
            exact.clear();
            for (j, ((blk, yb), d)) in row.chunks(c).zip(y.chunks_mut(c)).zip(&divs).enumerate() {
                match *d {
                    Divisor::Pow2(e) => {
                        for (i, (&w, o)) in blk.iter().zip(yb.iter_mut()).enumerate() {
                            let (v, ex) = pow2_scale(w, e);
                            *o = v;
                            if ex && e != 0 {
                                exact.push((j * c + i, e));
                            }
                        }
                    }
                    Divisor::Div(t) => {
                        for (&w, o) in blk.iter().zip(yb.iter_mut()) {
                            *o = (f32::from_bits(w) / t).to_bits();
                        }
                    }
                    Divisor::Mul(r) => {
                        for (&w, o) in blk.iter().zip(yb.iter_mut()) {
                            *o = (f32::from_bits(w) * r).to_bits();
                        }
                    }
                }
            }
            let row_first = random.map(|(s, f)| (s, f + (ri * k) as u64));
            if let Some((stream, first)) = row_first {
                gpucvt_kernels::random::random_values(stream, first, &mut rnd);
                self.kernel
                    .convert_stochastic(&y[..row.len()], qrow, &rnd[..row.len()])
                    .expect("f32 words into words of the element's width");
            } else {
                self.kernel
                    .convert(&y[..row.len()], qrow)
                    .expect("f32 words into words of the element's width");
            }
            for &(i, e) in &exact {
                let mut cv = self.conv;
                cv.policy.scale = e;
                if let (Direction::Stochastic { width, .. }, Some(_)) =
                    (cv.rounding.direction, row_first)
                {
                    cv.rounding = Rounding::stochastic(rnd[i] as u64, width);
                }
                qrow[i] = D::from_u64(cv.apply(row[i] as u64).bits);
            }
            self.row_stats(row, qrow, &y, &divs, ss, second, table, &mut st);
        }
        st
    }

    /// The statistics of one row (see [`Stats`]): the input against `q × scale (× s2)`.
    #[allow(clippy::too_many_arguments)]
    fn row_stats<D: Word>(
        &self,
        row: &[u32],
        qrow: &[D],
        y: &[u32],
        divs: &[Divisor],
        ss: &[u32],
        second: Option<f32>,
        table: &[f64],
        st: &mut Stats,
    ) {
        let c = self.geo.c as usize;
        let max = self.elem.max as f64;
        for (j, ((blk, qb), yb)) in row
            .chunks(c)
            .zip(qrow.chunks(c))
            .zip(y.chunks(c))
            .enumerate()
        {
            let factor = match divs[j] {
                Divisor::Pow2(e) => 2f64.powi(-e),
                _ if ss[j] == nan_bits(self.scaling.format) => 1.0,
                _ => scale_value(self.scaling.format, ss[j]) * second.map_or(1.0, |s| s as f64),
            };
            for ((&w, qv), &yw) in blk.iter().zip(qb).zip(yb) {
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
                let scaled = match divs[j] {
                    Divisor::Pow2(e) => x * 2f64.powi(e),
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
        st.mean_abs_error = if st.error_elements == 0 {
            0.0
        } else {
            st.sum_abs_error / st.error_elements as f64
        };
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
        let per = (g.m * g.k) as usize;
        let sper = (g.row_tiles() * g.col_tiles()) as usize;
        out.par_chunks_mut(per)
            .zip(q.par_chunks(per))
            .zip(scales.par_chunks(sper))
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

/// The per-tensor scale of a second level: `RN_f32(amax / (448 × max))`, at least `f32`'s
/// smallest normal (an all-zero tensor).
pub fn second_level_scale(amax: f32, elem_max: f32) -> f32 {
    (amax / (448.0 * elem_max)).max(f32::MIN_POSITIVE)
}

fn nan_bits(f: crate::quant::ScaleFormat) -> u32 {
    use crate::quant::ScaleFormat::*;
    match f {
        Ue8m0 => 0xff,
        Ue4m3 => 0x7f,
        F32 => 0x7fc0_0000,
        Bf16 => 0x7fc0,
    }
}

/// Every encoding's value of a format of at most 16 bits.
fn decode_table(f: &Format) -> Vec<f64> {
    (0..1u64 << f.width())
        .map(|b| f.decode(b).to_f64_lossy())
        .collect()
}

/// `x` × 2^e as an `f32` word when both the word and the result are normal (an exponent
/// field adjustment), else `x` unchanged and `true`: the element needs the exact core (unless
/// it is a zero, infinity or NaN, which scaling leaves alone).
#[inline(always)]
fn pow2_scale(x: u32, e: i32) -> (u32, bool) {
    let f = (x >> 23) & 0xff;
    let ok = (f.wrapping_sub(1) < 254) & (((f as i32 + e - 1) as u32) < 254);
    if ok {
        (x.wrapping_add((e as u32) << 23), false)
    } else {
        (x, (f != 255) & (x & 0x7fff_ffff != 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::{Block, ScaleFormat, ScaleRule};
    use gpucvt_core::format::E4M3;
    use gpucvt_core::Policy;

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
