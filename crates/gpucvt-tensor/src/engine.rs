//! Converting one chunk of a tensor: unpacking, MX block scales, the conversion kernels,
//! packing, and the error statistics — in parallel over sub-chunks.

use crate::dtype::Packing;
use crate::{ScaleMethod, Stats};
use gpucvt_core::bulk::{Kernel, Word};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, Layout, F32, F64, TF32, UE8M0};
use gpucvt_core::round::{Direction, Rounding};
use rayon::prelude::*;

/// Elements per unit of parallel work (a multiple of every block size is chosen around it).
pub(crate) const SUB_ELEMENTS: u64 = 1 << 16;

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function applied to `x + γ`: `splitmix64(s + i·γ)` is the `i`-th
/// (0-based) output of a SplitMix64 generator seeded with `s`.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random word of element `index` of a tensor whose stream seed is `stream`: the low 32
/// bits of the `index`-th output of SplitMix64 seeded with `stream`.
pub fn random_word(stream: u64, index: u64) -> u32 {
    splitmix64(stream.wrapping_add(index.wrapping_mul(GAMMA))) as u32
}

/// Little-endian loading and storing of encoding words.
pub(crate) trait Le: Word {
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

macro_rules! le {
    ($t:ty, $n:expr) => {
        impl Le for $t {
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                let mut a = [0u8; $n];
                a.copy_from_slice(&b[..$n]);
                <$t>::from_le_bytes(a)
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b[..$n].copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}
le!(u8, 1);
le!(u16, 2);
le!(u32, 4);
le!(u64, 8);

/// Decodes encodings of one format to `f64` for the statistics (exact for every format of at
/// most 32 bits; `f64` and 64-bit integers as the nearest `f64`).
pub(crate) enum Decoder {
    F32,
    F64,
    Table(Box<[f64]>),
    Signed(u32),
    Unsigned,
    Slow(Format),
}

impl Decoder {
    pub(crate) fn new(f: &Format) -> Decoder {
        if *f == F32 || *f == TF32 {
            Decoder::F32
        } else if *f == F64 {
            Decoder::F64
        } else if f.width() <= 16 {
            Decoder::Table(
                (0..1u64 << f.width())
                    .map(|b| f.decode(b).to_f64_lossy())
                    .collect(),
            )
        } else if let Layout::Fixed(l) = f.layout {
            if l.frac_bits != 0 {
                Decoder::Slow(*f)
            } else if l.signed {
                Decoder::Signed(l.bits)
            } else {
                Decoder::Unsigned
            }
        } else {
            Decoder::Slow(*f)
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, bits: u64) -> f64 {
        match self {
            Decoder::F32 => f32::from_bits(bits as u32) as f64,
            Decoder::F64 => f64::from_bits(bits),
            Decoder::Table(t) => t[bits as usize & (t.len() - 1)],
            Decoder::Signed(w) => (((bits << (64 - w)) as i64) >> (64 - w)) as f64,
            Decoder::Unsigned => bits as f64,
            Decoder::Slow(f) => f.decode(bits).to_f64_lossy(),
        }
    }
}

/// How the elements are converted.
enum Engine {
    /// A bulk kernel straight on the source words.
    Direct(Kernel),
    /// Widen the source exactly to `f32` (a no-op for `f32` sources), scale by adjusting the
    /// exponent field, and run the `f32` kernel; elements where that is not provably the same
    /// as the exact conversion (source subnormals and NaNs, scaled exponents out of the normal
    /// range) go through the exact core.
    ViaF32 {
        kernel: Kernel,
        widen: Option<Widen>,
    },
    /// The exact core, element by element.
    Exact,
}

struct Widen {
    bits: Box<[u32]>,
    exact: Box<[bool]>,
}

/// Block scaling of one tensor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocks {
    pub size: u64,
    pub method: ScaleMethod,
    /// `floor(log2(largest finite value))` of the element format.
    emax: i32,
    /// The element format's largest finite value, as `f32`.
    max_f32: f32,
}

/// Everything needed to convert the elements of one tensor.
pub(crate) struct Plan {
    pub conv: Conversion,
    pub src_pack: Packing,
    pub dst_pack: Packing,
    pub blocks: Option<Blocks>,
    /// PRNG stream of the tensor (stochastic rounding).
    pub stream: u64,
    stochastic: bool,
    engine: Engine,
    src_dec: Decoder,
    dst_dec: Decoder,
    /// The destination range for the `saturated` count.
    lo: f64,
    hi: f64,
}

fn floor_log2(x: f64) -> i32 {
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7ff) as i32;
    if e == 0 {
        let m = b & ((1 << 52) - 1);
        63 - m.leading_zeros() as i32 - 1074
    } else {
        e - 1023
    }
}

impl Plan {
    pub(crate) fn new(
        conv: Conversion,
        src_pack: Packing,
        dst_pack: Packing,
        block: Option<(u64, ScaleMethod)>,
        stream: u64,
    ) -> Plan {
        let stochastic = matches!(conv.rounding.direction, Direction::Stochastic { .. });
        let src = conv.src;
        let via = block.is_some() || (stochastic && src.width() <= 16);
        let engine = if via && (src == F32 || src.width() <= 16) {
            let mut unscaled = conv;
            unscaled.src = F32;
            unscaled.policy.scale = 0;
            let widen = (src != F32).then(|| {
                let to32 = Conversion::new(src, F32, Rounding::RZ, Default::default());
                let n = 1usize << src.width();
                let mut bits = Vec::with_capacity(n);
                let mut exact = Vec::with_capacity(n);
                for b in 0..n as u64 {
                    let out = to32.apply(b);
                    bits.push(out.bits as u32);
                    let w = out.bits as u32;
                    exact.push(
                        !out.flags.is_empty()
                            || src.is_subnormal(b)
                            || src.decode(b).is_nan()
                            || (w & 0x7f80_0000 == 0 && w & 0x007f_ffff != 0),
                    );
                }
                Widen {
                    bits: bits.into(),
                    exact: exact.into(),
                }
            });
            Engine::ViaF32 {
                kernel: Kernel::new(unscaled),
                widen,
            }
        } else if via {
            Engine::Exact
        } else {
            Engine::Direct(Kernel::new(conv))
        };
        let dst = conv.dst;
        let max = dst.decode(dst.max_finite_bits()).to_f64_lossy();
        let (lo, hi) = if conv.policy.sat {
            (0.0, 1.0)
        } else if dst.is_float() {
            (-max, max)
        } else {
            let min = dst
                .min_finite_bits()
                .map(|b| dst.decode(b).to_f64_lossy())
                .unwrap_or(0.0);
            (min, max)
        };
        let blocks = block.map(|(size, method)| Blocks {
            size,
            method,
            emax: floor_log2(max),
            max_f32: max as f32,
        });
        Plan {
            conv,
            src_pack,
            dst_pack,
            blocks,
            stream,
            stochastic,
            engine,
            src_dec: Decoder::new(&src),
            dst_dec: Decoder::new(&dst),
            lo,
            hi,
        }
    }

    /// Elements per parallel work unit: a multiple of 8 (packing) and of the block size.
    pub(crate) fn sub_elements(&self) -> u64 {
        let unit = lcm(8, self.blocks.map_or(1, |b| b.size));
        SUB_ELEMENTS.div_ceil(unit) * unit
    }

    /// Converts `n` elements (`input` holds exactly their bytes) into `output` (resized to
    /// the packed output bytes); the first element has index `first` in the tensor. Returns
    /// the statistics and the block scales.
    pub(crate) fn convert_chunk(
        &self,
        input: &[u8],
        n: u64,
        first: u64,
        output: &mut Vec<u8>,
    ) -> (Stats, Vec<u8>) {
        output.clear();
        output.resize(self.dst_pack.bytes_for(n) as usize, 0);
        let sw = match self.src_pack {
            Packing::Bytes(b) => b,
            _ => 1,
        };
        let dw = match self.dst_pack {
            Packing::Bytes(b) => b,
            _ => 1,
        };
        macro_rules! go {
            ($s:ty) => {
                match dw {
                    1 => self.chunk::<$s, u8>(input, n, first, output),
                    2 => self.chunk::<$s, u16>(input, n, first, output),
                    4 => self.chunk::<$s, u32>(input, n, first, output),
                    _ => self.chunk::<$s, u64>(input, n, first, output),
                }
            };
        }
        match sw {
            1 => go!(u8),
            2 => go!(u16),
            4 => go!(u32),
            _ => go!(u64),
        }
    }

    fn chunk<S: Le, D: Le>(
        &self,
        input: &[u8],
        n: u64,
        first: u64,
        output: &mut [u8],
    ) -> (Stats, Vec<u8>) {
        let sub = self.sub_elements();
        let in_sub = self.src_pack.bytes_for(sub) as usize;
        let out_sub = self.dst_pack.bytes_for(sub) as usize;
        let parts: Vec<(Stats, Vec<u8>)> = output
            .par_chunks_mut(out_sub)
            .enumerate()
            .map_init(Scratch::<S, D>::default, |scratch, (i, out)| {
                let start = i * in_sub;
                let elems = (n - i as u64 * sub).min(sub) as usize;
                let inp = &input[start..start + self.src_pack.bytes_for(elems as u64) as usize];
                self.sub_chunk(scratch, inp, elems, first + i as u64 * sub, out)
            })
            .collect();
        let mut stats = Stats::default();
        let mut scales = Vec::new();
        for (s, sc) in parts {
            stats.merge(&s);
            scales.extend_from_slice(&sc);
        }
        (stats, scales)
    }

    fn sub_chunk<S: Le, D: Le>(
        &self,
        sc: &mut Scratch<S, D>,
        input: &[u8],
        n: usize,
        first: u64,
        output: &mut [u8],
    ) -> (Stats, Vec<u8>) {
        unpack(self.src_pack, input, n, &mut sc.src);
        sc.dst.clear();
        sc.dst.resize(n, D::default());
        if self.stochastic {
            sc.rnd.clear();
            sc.rnd
                .extend((0..n as u64).map(|i| random_word(self.stream, first + i)));
        }
        // Block scales: the exponent k each element is multiplied by (2^k), per block.
        let mut scales = Vec::new();
        sc.ks.clear();
        let bsize = self.blocks.map_or(n.max(1), |b| b.size as usize);
        if let Some(b) = self.blocks {
            for blk in sc.src.chunks(bsize) {
                let (byte, k) = self.block_scale(&b, blk);
                scales.push(byte);
                sc.ks.push(k);
            }
        } else {
            sc.ks.push(0);
        }
        match &self.engine {
            Engine::Direct(kernel) => {
                let r = if self.stochastic {
                    kernel.convert_stochastic(&sc.src, &mut sc.dst, &sc.rnd)
                } else {
                    kernel.convert(&sc.src, &mut sc.dst)
                };
                r.expect("internal error: slice lengths and word widths are checked by the plan");
            }
            Engine::ViaF32 { kernel, widen } => {
                sc.tmp.clear();
                sc.exact.clear();
                for (j, blk) in sc.src.chunks(bsize).enumerate() {
                    let k = sc.ks[j];
                    for (i, x) in blk.iter().enumerate() {
                        let x = x.to_u64();
                        let (mut w, mut ex) = match widen {
                            None => (x as u32, false),
                            Some(t) => (t.bits[x as usize], t.exact[x as usize]),
                        };
                        if !ex && k != 0 {
                            let e = ((w >> 23) & 0xff) as i32;
                            if e == 0 {
                                ex = w & 0x007f_ffff != 0;
                            } else if e != 255 {
                                let e2 = e + k;
                                if (1..=254).contains(&e2) {
                                    w = (w & !0x7f80_0000) | ((e2 as u32) << 23);
                                } else {
                                    ex = true;
                                }
                            }
                        }
                        sc.tmp.push(w);
                        if ex {
                            sc.exact.push(j * bsize + i);
                        }
                    }
                }
                let r = if self.stochastic {
                    kernel.convert_stochastic(&sc.tmp, &mut sc.dst, &sc.rnd)
                } else {
                    kernel.convert(&sc.tmp, &mut sc.dst)
                };
                r.expect("internal error: slice lengths and word widths are checked by the plan");
                for &i in &sc.exact {
                    let x = sc.src[i].to_u64();
                    let k = sc.ks[i / bsize];
                    let r = sc.rnd.get(i).copied().unwrap_or(0);
                    sc.dst[i] = D::from_u64(self.exact(x, k, r));
                }
            }
            Engine::Exact => {
                for (i, (d, s)) in sc.dst.iter_mut().zip(&sc.src).enumerate() {
                    let r = sc.rnd.get(i).copied().unwrap_or(0);
                    *d = D::from_u64(self.exact(s.to_u64(), sc.ks[i / bsize], r));
                }
            }
        }
        let stats = self.stats(&sc.src, &sc.dst, &sc.ks, &scales, bsize);
        pack(self.dst_pack, &sc.dst, output);
        (stats, scales)
    }

    fn exact(&self, x: u64, k: i32, random: u32) -> u64 {
        let mut c = self.conv;
        c.policy.scale = k;
        if let Direction::Stochastic { width, .. } = c.rounding.direction {
            c.rounding.direction = Direction::Stochastic {
                random: random as u64,
                width,
            };
        }
        c.apply(x).bits
    }

    /// The scale byte of a block and the exponent its elements are multiplied by.
    fn block_scale<S: Le>(&self, b: &Blocks, blk: &[S]) -> (u8, i32) {
        let mut amax = 0.0f64;
        for x in blk {
            let v = self.src_dec.get(x.to_u64()).abs();
            if !v.is_finite() {
                // NaN or infinity in the block: the NaN scale, elements unscaled.
                return (0xff, 0);
            }
            amax = amax.max(v);
        }
        let shared = match b.method {
            ScaleMethod::Ocp => {
                if amax == 0.0 {
                    -127
                } else {
                    (floor_log2(amax) - b.emax).clamp(-127, 127)
                }
            }
            ScaleMethod::Rp => {
                let q = (amax as f32) / b.max_f32;
                let c = Conversion::new(
                    F32,
                    UE8M0,
                    Rounding::RP,
                    gpucvt_core::Policy {
                        satfinite: true,
                        ..Default::default()
                    },
                );
                c.apply(q.to_bits() as u64).bits as i32 - 127
            }
        };
        ((shared + 127) as u8, -shared)
    }

    fn stats<S: Le, D: Le>(
        &self,
        src: &[S],
        dst: &[D],
        ks: &[i32],
        scales: &[u8],
        bsize: usize,
    ) -> Stats {
        let mut st = Stats {
            elements: src.len() as u64,
            ..Stats::default()
        };
        if self.blocks.is_some() {
            st.blocks = ks.len() as u64;
        }
        st.nan_blocks = scales.iter().filter(|&&s| s == 0xff).count() as u64;
        // Monomorphise the hot loop on the common decoders.
        let t = match &self.dst_dec {
            Decoder::Table(t) => Some(&t[..]),
            _ => None,
        };
        match (&self.src_dec, t) {
            (Decoder::F32, Some(t)) => self.stats_loop(
                &mut st,
                src,
                dst,
                ks,
                bsize,
                |x| f32::from_bits(x as u32) as f64,
                |y| t[y as usize & (t.len() - 1)],
            ),
            (Decoder::F32, None) => self.stats_loop(
                &mut st,
                src,
                dst,
                ks,
                bsize,
                |x| f32::from_bits(x as u32) as f64,
                |y| self.dst_dec.get(y),
            ),
            (_, Some(t)) => self.stats_loop(
                &mut st,
                src,
                dst,
                ks,
                bsize,
                |x| self.src_dec.get(x),
                |y| t[y as usize & (t.len() - 1)],
            ),
            _ => self.stats_loop(
                &mut st,
                src,
                dst,
                ks,
                bsize,
                |x| self.src_dec.get(x),
                |y| self.dst_dec.get(y),
            ),
        }
        st
    }

    /// The statistics loop, branch-free per element (see [`Stats`] for the classes).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn stats_loop<S: Le, D: Le>(
        &self,
        st: &mut Stats,
        src: &[S],
        dst: &[D],
        ks: &[i32],
        bsize: usize,
        fa: impl Fn(u64) -> f64,
        fb: impl Fn(u64) -> f64,
    ) {
        let relu = self.conv.policy.relu;
        let (lo, hi) = (self.lo, self.hi);
        // Eight independent lanes, so that the element-wise work vectorizes.
        const L: usize = 8;
        let mut acc = [[0u64; L]; 6];
        let mut sum = [0.0f64; L];
        let mut max = [st.max_abs_error; L];
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
                    let e = if ok { err } else { 0.0 };
                    sum[l] += e;
                    max[l] = if e > max[l] { e } else { max[l] };
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
        st.sum_abs_error += sum.iter().sum::<f64>();
        st.max_abs_error = max.iter().fold(0.0f64, |m, &x| m.max(x));
    }
}

fn pow2(k: i32) -> f64 {
    // k is within ±(127 + 1023): split to stay in range.
    let half = k / 2;
    f64::powi(2.0, half) * f64::powi(2.0, k - half)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub(crate) fn lcm(a: u64, b: u64) -> u64 {
    a / gcd(a, b) * b
}

struct Scratch<S, D> {
    src: Vec<S>,
    dst: Vec<D>,
    rnd: Vec<u32>,
    tmp: Vec<u32>,
    exact: Vec<usize>,
    ks: Vec<i32>,
}

impl<S, D> Default for Scratch<S, D> {
    fn default() -> Self {
        Scratch {
            src: Vec::new(),
            dst: Vec::new(),
            rnd: Vec::new(),
            tmp: Vec::new(),
            exact: Vec::new(),
            ks: Vec::new(),
        }
    }
}

/// Unpacks `n` elements from `bytes`.
pub(crate) fn unpack<S: Le>(p: Packing, bytes: &[u8], n: usize, out: &mut Vec<S>) {
    out.clear();
    match p {
        Packing::Bytes(_) => {
            out.extend(bytes.chunks_exact(std::mem::size_of::<S>()).map(S::load));
        }
        Packing::Nibbles => {
            for b in bytes {
                out.push(S::from_u32((b & 0xf) as u32));
                out.push(S::from_u32((b >> 4) as u32));
            }
        }
        Packing::Sixes => {
            for c in bytes.chunks_exact(3) {
                let v = c[0] as u32 | (c[1] as u32) << 8 | (c[2] as u32) << 16;
                for k in 0..4 {
                    out.push(S::from_u32((v >> (6 * k)) & 0x3f));
                }
            }
        }
    }
    out.truncate(n);
}

/// Packs `words` into `out` (exactly their packed size).
pub(crate) fn pack<D: Le>(p: Packing, words: &[D], out: &mut [u8]) {
    match p {
        Packing::Bytes(_) => {
            for (o, d) in out.chunks_exact_mut(std::mem::size_of::<D>()).zip(words) {
                d.store(o);
            }
        }
        Packing::Nibbles => {
            for (o, pair) in out.iter_mut().zip(words.chunks(2)) {
                let lo = pair[0].to_u64() as u8 & 0xf;
                let hi = pair.get(1).map_or(0, |d| d.to_u64() as u8 & 0xf);
                *o = lo | hi << 4;
            }
        }
        Packing::Sixes => {
            for (o, quad) in out.chunks_exact_mut(3).zip(words.chunks(4)) {
                let mut v = 0u32;
                for (k, d) in quad.iter().enumerate() {
                    v |= (d.to_u64() as u32 & 0x3f) << (6 * k);
                }
                o.copy_from_slice(&v.to_le_bytes()[..3]);
            }
        }
    }
}
