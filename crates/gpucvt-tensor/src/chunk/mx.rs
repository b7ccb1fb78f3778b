//! MX's fast path: the block maxima, each block's scale (by the rules of
//! [`crate::scaling::rule`]), and `f32` words scaled by 2^k block by block (vectorized,
//! fused with finding the scales).

use crate::chunk::decode::Decoder;
use crate::chunk::pack::Le;
use crate::scaling::rule::{ue8m0_shared, ue8m0_shared_f64};
use crate::ScaleRule;
use gpucvt_kernels::{vectorized_up_to, InstructionSet, Vectorizable};

/// The scale byte of a finite block whose shared exponent is `shared`, and the exponent its
/// elements are multiplied by.
#[inline(always)]
fn scale_pair(shared: i32) -> (u8, i32) {
    ((shared + 127) as u8, -shared)
}

/// Block scaling of one tensor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocks {
    pub size: u64,
    pub method: ScaleRule,
    /// The element format's numbers the rules need.
    pub(super) elem: crate::scaling::Element,
}

impl Blocks {
    /// The scale bytes and exponents ([`Blocks::scale_of`]) of the blocks of the words of an
    /// `f32` source, appended to `scales` and `ks` (`tmp`: scratch): the largest magnitudes
    /// vectorized, then [`scale_of_max`] of each.
    pub(super) fn scales_f32(
        &self,
        isa: InstructionSet,
        src: &[u32],
        bsize: usize,
        scales: &mut Vec<u8>,
        ks: &mut Vec<i32>,
        tmp: &mut Vec<u32>,
    ) {
        tmp.clear();
        vectorized_up_to(
            isa,
            BlockMax {
                src,
                bsize,
                out: tmp,
            },
        );
        for &m in tmp.iter() {
            let (byte, k) = scale_of_max(self, m);
            scales.push(byte);
            ks.push(k);
        }
    }

    /// The scale byte and exponent of a block of finite elements whose largest magnitude is
    /// `amax` (any source format: those of at most 32 bits are `f32` values exactly).
    pub(super) fn amax_scale(&self, amax: f64) -> (u8, i32) {
        let narrow = amax as f32;
        scale_pair(if narrow as f64 == amax && narrow.is_finite() {
            ue8m0_shared(self.method, &self.elem, narrow.to_bits())
        } else {
            ue8m0_shared_f64(self.method, &self.elem, amax)
        })
    }

    /// The scale byte of a block (its elements decoded by `dec`) and the exponent its
    /// elements are multiplied by.
    pub(super) fn scale_of<S: Le>(&self, dec: &Decoder, blk: &[S]) -> (u8, i32) {
        let mut amax = 0.0f64;
        if matches!(dec, Decoder::F32) {
            // The largest magnitude is the largest encoding without the sign bit.
            let m = blk
                .iter()
                .fold(0u32, |m, x| m.max(x.to_u64() as u32 & 0x7fff_ffff));
            if m >= 0x7f80_0000 {
                // NaN or infinity in the block: the NaN scale, elements unscaled.
                return (0xff, 0);
            }
            amax = f32::from_bits(m) as f64;
        } else {
            for x in blk {
                let v = dec.get(x.to_u64()).abs();
                if !v.is_finite() {
                    // NaN or infinity in the block: the NaN scale, elements unscaled.
                    return (0xff, 0);
                }
                amax = amax.max(v);
            }
        }
        self.amax_scale(amax)
    }
}

/// The largest magnitude of each block of `f32` words, as the encoding without its sign bit
/// (appended to `out`), as work for [`vectorized`].
pub(super) struct BlockMax<'a> {
    pub(super) src: &'a [u32],
    pub(super) bsize: usize,
    pub(super) out: &'a mut Vec<u32>,
}

impl Vectorizable for BlockMax<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        if self.bsize == 32 {
            // The MX block size, unrolled.
            let whole = self.src.chunks_exact(32);
            let rest = whole.remainder();
            self.out.extend(whole.map(max_magnitude));
            if !rest.is_empty() {
                self.out.push(max_magnitude(rest));
            }
        } else {
            self.out
                .extend(self.src.chunks(self.bsize).map(max_magnitude));
        }
    }
}

/// The largest magnitude of the `f32` words `blk`, as the encoding without its sign bit
/// (NaN and infinity above every finite one).
#[inline(always)]
pub(crate) fn max_magnitude(blk: &[u32]) -> u32 {
    blk.iter().fold(0, |m, &x| m.max(x & 0x7fff_ffff))
}

/// The scale byte of a block of `f32` words whose largest magnitude is the encoding `m`
/// ([`max_magnitude`]) and the exponent its elements are multiplied by: the NaN scale and 0
/// for a block with NaN or infinity, else [`ue8m0_shared`]'s. Without branches on `m` for
/// `floor`, so that a loop over the maxima of several blocks is vectorized.
#[inline(always)]
pub(super) fn scale_of_max(b: &Blocks, m: u32) -> (u8, i32) {
    let (byte, k) = scale_pair(ue8m0_shared(b.method, &b.elem, m.min(0x7f7f_ffff)));
    if m >= 0x7f80_0000 {
        (0xff, 0)
    } else {
        (byte, k)
    }
}

/// Scales `f32` words by 2^k per block (`ks`) into `out` as [`Engine::ViaF32`] does, as work
/// for [`vectorized`]: a normal value whose exponent stays normal gets its exponent field
/// adjusted; the others are left as they are and, unless they are zeros, infinities or NaNs
/// (which scaling leaves alone) or `k` is 0, their indices are appended to `exact`.
pub(super) struct ScaleJob<'a> {
    pub(super) src: &'a [u32],
    pub(super) ks: &'a [i32],
    pub(super) bsize: usize,
    pub(super) out: &'a mut [u32],
    pub(super) exact: &'a mut Vec<usize>,
}

impl Vectorizable for ScaleJob<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let blocks = self
            .src
            .chunks(self.bsize)
            .zip(self.out.chunks_mut(self.bsize));
        for (j, ((s, o), &k)) in blocks.zip(self.ks).enumerate() {
            scale_block(s, o, k, j * self.bsize, self.exact);
        }
    }
}

/// The scaled word and whether the element needs the exact core ([`ScaleJob`]).
#[inline(always)]
pub(crate) fn scale(x: u32, k: i32) -> (u32, bool) {
    let e = (x >> 23) & 0xff;
    // Both the exponent field and the scaled one in 1..=254.
    let ok = (e.wrapping_sub(1) < 254) & (((e as i32 + k - 1) as u32) < 254);
    let y = if ok {
        x.wrapping_add((k as u32) << 23)
    } else {
        x
    };
    (y, !ok & (e != 255) & (x & 0x7fff_ffff != 0))
}

/// One block of [`ScaleJob`]: `s` scaled by 2^k into `o`, the indices of the elements that
/// need the exact core (the first having index `at`) appended to `exact`.
#[inline(always)]
pub(super) fn scale_block(s: &[u32], o: &mut [u32], k: i32, at: usize, exact: &mut Vec<usize>) {
    if scale_words(s, o, k) {
        exact_elements(s, k, at, exact);
    }
}

/// `s` scaled by 2^k into `o` ([`scale`]; with `k` = 0 a copy); returns whether an element
/// needs the exact core (never with `k` = 0: nothing is scaled).
#[inline(always)]
pub(crate) fn scale_words(s: &[u32], o: &mut [u32], k: i32) -> bool {
    let mut any = false;
    for (x, y) in s.iter().zip(o.iter_mut()) {
        let (w, ex) = scale(*x, k);
        *y = w;
        any |= ex;
    }
    any & (k != 0)
}

/// Appends to `exact` the indices (the first element having index `at`) of the elements of
/// `s` that scaling by 2^k cannot keep exact (none with `k` = 0).
#[inline(always)]
pub(super) fn exact_elements(s: &[u32], k: i32, at: usize, exact: &mut Vec<usize>) {
    if k != 0 {
        for (i, &x) in s.iter().enumerate() {
            if scale(x, k).1 {
                exact.push(at + i);
            }
        }
    }
}

/// The block scales of the words of an `f32` source (one byte and exponent per block, as
/// [`Plan::block_scales_f32`] gives them, `ocp` or `rp`) and the words scaled by them (as
/// [`ScaleJob`]), block by block in one pass (a block still in the first-level cache when it
/// is scaled), as work for [`vectorized`].
pub(super) struct FusedScaleJob<'a> {
    pub(super) src: &'a [u32],
    pub(super) bsize: usize,
    /// The block scaling: its method, [`Blocks::emax`] for `ocp`, [`Blocks::max_f32`] for
    /// `rp`.
    pub(super) blocks: Blocks,
    pub(super) scales: &'a mut [u8],
    pub(super) ks: &'a mut [i32],
    pub(super) out: &'a mut [u32],
    pub(super) exact: &'a mut Vec<usize>,
}

impl Vectorizable for FusedScaleJob<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        if self.bsize == 32 {
            // The MX block size, unrolled.
            self.go(32)
        } else {
            let bsize = self.bsize;
            self.go(bsize)
        }
    }
}

/// Blocks per group of [`FusedScaleJob`] with blocks of 32.
pub(super) const GROUP: usize = 16;

impl FusedScaleJob<'_> {
    /// With blocks of 32 elements, in groups of [`GROUP`] blocks: first the group's block
    /// maxima, then their scales (a loop the compiler vectorizes across blocks), then the
    /// scaled words, and only in a group where some element needs the exact core, the loop
    /// that lists them. The rest (and other block sizes) block by block.
    #[inline(always)]
    pub(super) fn go(self, bsize: usize) {
        let mut done = 0;
        if bsize == 32 {
            const W: usize = 32 * GROUP;
            done = self.src.len() / W * W;
            let words = self.src[..done]
                .chunks_exact(W)
                .zip(self.out[..done].chunks_exact_mut(W));
            let per = self
                .scales
                .chunks_exact_mut(GROUP)
                .zip(self.ks.chunks_exact_mut(GROUP));
            for (g, ((s, o), (bytes, ks))) in words.zip(per).enumerate() {
                // (Each maximum through `black_box`: without it, the compiler vectorizes this
                // loop across the blocks, with a gather per element.)
                let mut m = [0u32; GROUP];
                for (m, blk) in m.iter_mut().zip(s.chunks_exact(32)) {
                    *m = std::hint::black_box(max_magnitude(blk));
                }
                for ((m, byte), k) in m.iter().zip(bytes.iter_mut()).zip(ks.iter_mut()) {
                    (*byte, *k) = scale_of_max(&self.blocks, *m);
                }
                let mut any = false;
                let blocks = s.chunks_exact(32).zip(o.chunks_exact_mut(32));
                for ((x, y), &k) in blocks.zip(ks.iter()) {
                    any |= scale_words(x, y, k);
                }
                if any {
                    for (b, (x, &k)) in s.chunks_exact(32).zip(ks.iter()).enumerate() {
                        exact_elements(x, k, (g * GROUP + b) * 32, self.exact);
                    }
                }
            }
        }
        let first = done / bsize;
        let blocks = self.src[done..]
            .chunks(bsize)
            .zip(self.out[done..].chunks_mut(bsize));
        let per = self.scales[first..]
            .iter_mut()
            .zip(self.ks[first..].iter_mut());
        for (j, ((s, o), (byte, k))) in (first..).zip(blocks.zip(per)) {
            let m = if s.len() == bsize {
                // (Whole blocks: a loop of a fixed count where `bsize` is a constant.)
                max_magnitude(&s[..bsize])
            } else {
                max_magnitude(s)
            };
            (*byte, *k) = scale_of_max(&self.blocks, m);
            if s.len() == bsize {
                scale_block(&s[..bsize], &mut o[..bsize], *k, j * bsize, self.exact);
            } else {
                scale_block(s, o, *k, j * bsize, self.exact);
            }
        }
    }
}
