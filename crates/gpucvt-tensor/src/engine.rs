//! Converting one chunk of a tensor: unpacking, MX block scales, the conversion kernels,
//! packing, and the error statistics — in parallel over sub-chunks.

use crate::dtype::Packing;
use crate::{ScaleMethod, Stats};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::{Format, Layout, Specials, ZeroExponent, BF16, F32, F64, TF32, UE8M0};
use gpucvt_core::round::{Direction, Rounding};
use gpucvt_kernels::{
    ue8m0_rp_satfinite, vectorized, vectorized_up_to, InstructionSet, Vectorizable,
};
use gpucvt_kernels::{Kernel, Word};
use rayon::prelude::*;
use std::fs::File;
use std::sync::{Arc, Mutex};
use zerocopy::IntoBytes;

/// Elements per unit of parallel work (a multiple of every block size is chosen around it).
pub(crate) const SUB_ELEMENTS: u64 = 1 << 16;

pub use gpucvt_core::random::{random_word, splitmix64};

/// Little-endian loading and storing of encoding words; as plain bytes (so that a buffer of
/// them can be viewed as its bytes and back, without copying).
pub(crate) trait Le:
    Word + zerocopy::FromBytes + zerocopy::IntoBytes + zerocopy::Immutable + zerocopy::KnownLayout
{
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
    Table(Arc<DstTable>),
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
            Decoder::Table(DstTable::of(f))
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
            Decoder::Table(t) => t.val[bits as u16 as usize],
            Decoder::Signed(w) => (((bits << (64 - w)) as i64) >> (64 - w)) as f64,
            Decoder::Unsigned => bits as f64,
            Decoder::Slow(f) => f.decode(bits).to_f64_lossy(),
        }
    }
}

/// The decoded values and classes of every encoding of a format of at most 16 bits, indexed
/// by the low 16 bits of a word (so that no index is out of bounds: the entries above
/// `2^width` repeat the lower ones).
pub(crate) struct DstTable {
    /// The value of each encoding, as `f64` (exact).
    val: Box<[f64; 1 << 16]>,
    /// Its class: [`NAN`] | [`INF`] | [`ZERO`] bits.
    cls: Box<[u8; 1 << 16]>,
    /// The zero encodings as a range of magnitudes, when they are one.
    zero: Option<Codes>,
    /// The infinite encodings likewise ([`Codes::NONE`] for a format without them).
    inf: Option<Codes>,
    /// The values computed from the bits, when that gives the table's.
    arith: Option<Arith>,
}

/// Decodes the encodings of a float format of at most 16 bits with IEEE-style subnormals
/// whose values are all `f32` numbers arithmetically — 32-bit integer and `f32` operations
/// that the compiler vectorizes, instead of table lookups: finite encodings to exactly the
/// value [`DstTable`] holds, the others to NaN (which is all the statistics need of them:
/// they leave the errors out).
#[derive(Clone, Copy, Debug)]
struct Arith {
    /// The magnitude bits.
    mag: i32,
    /// The sign bit (0 for unsigned formats), and the shift that takes it to bit 31.
    sign: i32,
    sign_shift: u32,
    /// The shift that takes the magnitude's mantissa field to the top of an `f32`'s.
    shift: u32,
    /// The smallest normal magnitude and the smallest non-finite one (`i32::MAX`: none).
    min_normal: i32,
    special: i32,
    /// Added to the shifted magnitude: normal encodings get their exponent rebiased; a
    /// subnormal one `m` becomes `2^emin · (1 + m / 2^man_bits)`, from which `2^emin` is
    /// then subtracted (exactly).
    normal_offset: i32,
    subnormal_offset: i32,
    emin: f32,
}

impl Arith {
    /// The decoder of `f`, if it has one and it gives the values of `val` (checked for every
    /// encoding).
    fn new(f: &Format, val: &[f64]) -> Option<Arith> {
        let Layout::Float(l) = f.layout else {
            return None;
        };
        let width = f.width();
        let emin = 1 - l.bias;
        // The exponents of the normal numbers (and of 2^emin) must be f32's.
        let emax = (1 << l.exp_bits) - 1 - l.bias - (l.specials == Specials::Ieee) as i32;
        if width > 16
            || l.pad_bits != 0
            || l.zero_exponent != ZeroExponent::Subnormal
            || l.man_bits > 23
            || l.exp_bits == 0
            || emin < -126
            || emax > 127
        {
            return None;
        }
        let mag_bits = width - l.signed as u32;
        let special = (0..1i32 << mag_bits)
            .find(|&m| !val[m as usize].is_finite())
            .unwrap_or(i32::MAX);
        let a = Arith {
            mag: (1 << mag_bits) - 1,
            sign: if l.signed { 1 << (width - 1) } else { 0 },
            sign_shift: 32 - width,
            shift: 23 - l.man_bits,
            min_normal: 1 << l.man_bits,
            special,
            normal_offset: (127 - l.bias) << 23,
            subnormal_offset: (127 + emin) << 23,
            emin: exp2i(emin) as f32,
        };
        (0..1u32 << width)
            .all(|y| {
                let (v, w) = (a.get(y) as f64, val[y as usize]);
                if w.is_finite() {
                    v.to_bits() == w.to_bits()
                } else {
                    v.is_nan()
                }
            })
            .then_some(a)
    }

    /// The value of encoding `y` (branch-free).
    #[inline(always)]
    fn get(self, y: u32) -> f32 {
        let y = y as i32;
        let m = y & self.mag;
        let sub = m < self.min_normal;
        let bits = (m << self.shift).wrapping_add(if sub {
            self.subnormal_offset
        } else {
            self.normal_offset
        });
        let v = f32::from_bits(bits as u32) - if sub { self.emin } else { 0.0 };
        let v = if m >= self.special { f32::NAN } else { v };
        f32::from_bits(v.to_bits() | ((y & self.sign) << self.sign_shift) as u32)
    }
}

/// A set of encodings of a format given as a range of magnitudes: `y` is in it ⇔
/// `(y & mask) − lo ≤ span` (wrapping), so that testing it is branch-free integer code.
#[derive(Clone, Copy, Debug)]
struct Codes {
    mask: u32,
    lo: u32,
    span: u32,
}

impl Codes {
    /// The empty set.
    const NONE: Codes = Codes::range(0, 1, 0);

    /// The encodings whose magnitude bits `y & mask` lie in `lo ..= lo + span`.
    const fn range(mask: u32, lo: u32, span: u32) -> Codes {
        Codes { mask, lo, span }
    }

    #[inline(always)]
    fn test(self, y: u32) -> bool {
        (y & self.mask).wrapping_sub(self.lo) <= self.span
    }

    /// The encodings among `0..2^width` of which `pred` holds, as a range of magnitudes with
    /// or without the top bit as a sign, if they are one (checked against every encoding).
    fn find(width: u32, pred: impl Fn(u32) -> bool) -> Option<Codes> {
        let n = 1u32 << width;
        [n / 2 - 1, n - 1].into_iter().find_map(|mask| {
            let lo = (0..=mask).find(|&m| pred(m))?;
            let hi = (0..=mask).rev().find(|&m| pred(m))?;
            let c = Codes {
                mask,
                lo,
                span: hi - lo,
            };
            (0..n).all(|y| c.test(y) == pred(y)).then_some(c)
        })
    }
}

/// Class bit of a NaN encoding.
const NAN: u32 = 1;
/// Class bit of an infinite encoding.
const INF: u32 = 2;
/// Class bit of a zero encoding.
const ZERO: u32 = 4;

impl DstTable {
    /// The table of `f` (built once per process and format).
    fn of(f: &Format) -> Arc<DstTable> {
        static CACHE: Mutex<Vec<(Format, Arc<DstTable>)>> = Mutex::new(Vec::new());
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = cache.iter().find(|(g, _)| g == f) {
            return t.clone();
        }
        let n = 1usize << f.width();
        let mut val = vec![0.0f64; 1 << 16];
        let mut cls = vec![0u8; 1 << 16];
        for b in 0..n {
            let v = f.decode(b as u64).to_f64_lossy();
            val[b] = v;
            cls[b] = ((v.is_nan() as u32 * NAN)
                | (v.is_infinite() as u32 * INF)
                | ((v == 0.0) as u32 * ZERO)) as u8;
        }
        for b in n..1 << 16 {
            val[b] = val[b & (n - 1)];
            cls[b] = cls[b & (n - 1)];
        }
        let zero = Codes::find(f.width(), |y| cls[y as usize] & ZERO as u8 != 0);
        let inf = if cls.iter().any(|&c| c & INF as u8 != 0) {
            Codes::find(f.width(), |y| cls[y as usize] & INF as u8 != 0)
        } else {
            Some(Codes::NONE)
        };
        let t = Arc::new(DstTable {
            zero,
            inf,
            arith: Arith::new(f, &val),
            val: val.into_boxed_slice().try_into().expect("2^16 entries"),
            cls: cls.into_boxed_slice().try_into().expect("2^16 entries"),
        });
        cache.push((*f, t.clone()));
        t
    }
}

/// How the fast statistics of `f32` (and `tf32`) sources decode destination words.
enum FastDst {
    /// Destinations of at most 16 bits other than `bf16`: lookup tables.
    Table(Arc<DstTable>),
    /// `bf16`: the high half of an `f32`.
    Bf16,
    /// `f32`/`tf32`: the word is an `f32`.
    F32,
}

/// The class bits ([`NAN`], [`INF`], [`ZERO`]) of an `f32` encoding.
#[inline(always)]
fn f32_class(w: u32) -> u32 {
    let m = w & 0x7fff_ffff;
    ((m > 0x7f80_0000) as u32 * NAN) | ((m == 0x7f80_0000) as u32 * INF) | ((m == 0) as u32 * ZERO)
}

/// An order-preserving key of a non-NaN `f32` encoding: `key(a) < key(b)` ⇔ `a < b`, except
/// that `−0` (key −1) is below `+0` (key 0).
#[inline(always)]
fn key(w: u32) -> i32 {
    let s = w as i32;
    s ^ ((s >> 31) & 0x7fff_ffff)
}

/// 1 if the `f32` pattern `x` lies outside the keys `t_lo ..= t_hi` (its conversion
/// saturates), else 0.
#[inline(always)]
fn outside(x: u32, t_lo: i32, t_hi: i32) -> u32 {
    let k = key(x);
    ((k > t_hi) | (k < t_lo)) as u32
}

/// 1 if a zero result of the `f32` pattern `x` counts as flushed: `x` is not a zero, and not
/// negative under `.relu` (`relu` 1 or 0), else 0.
#[inline(always)]
fn flush_counts(x: u32, relu: u32) -> u32 {
    (x & 0x7fff_ffff != 0) as u32 & ((relu & (x >> 31)) ^ 1)
}

/// The encoding of a key (the inverse of [`key`]).
fn unkey(k: i32) -> u32 {
    (k ^ ((k >> 31) & 0x7fff_ffff)) as u32
}

/// The value of a key, as `f64`.
fn key_value(k: i32) -> f64 {
    f32::from_bits(unkey(k)) as f64
}

/// For non-NaN `f32` inputs `a`: `a > h` ⇔ `key(a) > key_above(h)` (the key of the largest
/// `f32` not above `h`; `+0` for a zero one, so that `±0` compare alike).
fn key_above(h: f64) -> i32 {
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
fn key_below(l: f64) -> i32 {
    let mut k = key((l as f32).to_bits());
    while key_value(k) < l {
        k += 1;
    }
    if key_value(k) == 0.0 {
        k = -1;
    }
    k
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
    /// The fast statistics of `f32`/`tf32` sources.
    fast: Option<FastDst>,
    /// The range thresholds ([`Plan::block_thresholds`]) of the block exponents −127..=127
    /// (empty without blocks).
    thresholds: Box<[(i32, i32)]>,
    /// The destination range for the `saturated` count.
    lo: f64,
    hi: f64,
    /// The widest instruction set of the engine's own vectorized loops (block maxima and
    /// scaling, statistics): [`InstructionSet::Avx512`], which tests lower to run each version.
    isa: InstructionSet,
}

/// The conversion of `amax / max` to the `rp` block scale: `cvt.rp.satfinite.ue8m0x2.f32`.
fn rp_scale_conversion() -> Conversion {
    Conversion::new(
        F32,
        UE8M0,
        Rounding::RP,
        gpucvt_core::Policy {
            satfinite: true,
            ..Default::default()
        },
    )
}

/// The `ocp` scale of a block of finite elements whose largest magnitude is `amax`, for
/// an element format whose largest power of two is 2^`emax`: the scale byte and the exponent
/// the elements are multiplied by ([`Plan::amax_scale`]).
#[inline(always)]
fn ocp_scale(amax: f64, emax: i32) -> (u8, i32) {
    let shared = if amax == 0.0 {
        -127
    } else {
        (floor_log2(amax) - emax).clamp(-127, 127)
    };
    ((shared + 127) as u8, -shared)
}

#[inline(always)]
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
            isa: InstructionSet::Avx512,
            conv,
            src_pack,
            dst_pack,
            blocks,
            stream,
            stochastic,
            engine,
            src_dec: Decoder::new(&src),
            dst_dec: Decoder::new(&dst),
            fast: if src == F32 || src == TF32 {
                if dst == F32 || dst == TF32 {
                    Some(FastDst::F32)
                } else if dst == BF16 {
                    Some(FastDst::Bf16)
                } else if dst.width() <= 16 {
                    Some(FastDst::Table(DstTable::of(&dst)))
                } else {
                    None
                }
            } else {
                None
            },
            thresholds: match block {
                Some(_) => (-127..=127)
                    .map(|k| {
                        let down = exp2i(-k);
                        (key_below(lo * down), key_above(hi * down))
                    })
                    .collect(),
                None => Box::new([]),
            },
            lo,
            hi,
        }
    }

    /// Elements per parallel work unit: a multiple of 8 (packing) and of the block size.
    pub(crate) fn sub_elements(&self) -> u64 {
        let unit = lcm(8, self.blocks.map_or(1, |b| b.size));
        SUB_ELEMENTS.div_ceil(unit) * unit
    }

    /// Converts `n` elements (`input` holds exactly their bytes) into `output` (exactly the
    /// packed output bytes); the first element has index `first` in the tensor. Returns the
    /// statistics and the block scales. Buffers aligned to their words (as the pipeline's,
    /// which are `u64` buffers) are converted in place on little-endian machines: the kernels
    /// read the input's bytes as words and write the output's; others are copied through
    /// word buffers. (The tests' entry; the pipeline reads from the file:
    /// [`Plan::convert_chunk_at`].)
    #[cfg(test)]
    pub(crate) fn convert_chunk(
        &self,
        input: &[u8],
        n: u64,
        first: u64,
        output: &mut [u8],
    ) -> (Stats, Vec<u8>) {
        debug_assert_eq!(input.len() as u64, self.src_pack.bytes_for(n));
        self.convert_source(Source::Bytes(input), n, first, output)
            .expect("internal error: bytes in memory are read without I/O")
    }

    /// [`Plan::convert_chunk`] of the `n` elements that start at byte `at` of `file`: each
    /// work unit reads its own bytes into its thread's scratch buffer (a positioned read,
    /// which leaves the file's position alone) and converts them while they are in that
    /// core's cache. A file that ends early gives an `UnexpectedEof` error.
    pub(crate) fn convert_chunk_at(
        &self,
        file: &File,
        at: u64,
        n: u64,
        first: u64,
        output: &mut [u8],
    ) -> std::io::Result<(Stats, Vec<u8>)> {
        self.convert_source(Source::File { file, at }, n, first, output)
    }

    fn convert_source(
        &self,
        input: Source<'_>,
        n: u64,
        first: u64,
        output: &mut [u8],
    ) -> std::io::Result<(Stats, Vec<u8>)> {
        debug_assert_eq!(output.len() as u64, self.dst_pack.bytes_for(n));
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
        input: Source<'_>,
        n: u64,
        first: u64,
        output: &mut [u8],
    ) -> std::io::Result<(Stats, Vec<u8>)> {
        let sub = self.sub_elements();
        let in_sub = self.src_pack.bytes_for(sub) as usize;
        let out_sub = self.dst_pack.bytes_for(sub) as usize;
        let piece = |(i, out): (usize, &mut [u8])| {
            let start = i * in_sub;
            let elems = (n - i as u64 * sub).min(sub) as usize;
            let len = self.src_pack.bytes_for(elems as u64) as usize;
            let first = first + i as u64 * sub;
            with_scratch(|scratch: &mut Scratch<S, D>| match input {
                #[cfg(test)]
                Source::Bytes(b) => {
                    self.sub_chunk(scratch, &b[start..start + len], elems, first, out)
                }
                Source::File { file, at } => {
                    // (`u64` words: the bytes aligned for the kernels to read in place.)
                    let mut buf = std::mem::take(&mut scratch.input);
                    if buf.len() < len.div_ceil(8) {
                        buf.resize(len.div_ceil(8), 0);
                    }
                    let bytes = &mut buf.as_mut_bytes()[..len];
                    let r = read_exact_at(file, bytes, at + start as u64)
                        .and_then(|()| self.sub_chunk(scratch, bytes, elems, first, out));
                    scratch.input = buf;
                    r
                }
            })
        };
        // One piece is converted on the calling thread: handing it to a worker costs more
        // than converting it, for a file of many small tensors.
        let parts: std::io::Result<Vec<(Stats, Vec<u8>)>> = if output.len() <= out_sub {
            output.chunks_mut(out_sub).enumerate().map(piece).collect()
        } else {
            output
                .par_chunks_mut(out_sub)
                .enumerate()
                .map(piece)
                .collect()
        };
        let mut stats = Stats::default();
        let mut scales = Vec::new();
        for (s, sc) in parts? {
            stats.merge(&s);
            scales.extend_from_slice(&sc);
        }
        Ok((stats, scales))
    }

    fn sub_chunk<S: Le, D: Le>(
        &self,
        sc: &mut Scratch<S, D>,
        input: &[u8],
        n: usize,
        first: u64,
        output: &mut [u8],
    ) -> std::io::Result<(Stats, Vec<u8>)> {
        // The input's words: the bytes themselves where they are the words, else unpacked.
        let mut src_buf = std::mem::take(&mut sc.src);
        let src: &[S] = match le_words::<S>(self.src_pack, input) {
            Some(words) => words,
            None => {
                unpack(self.src_pack, input, n, &mut src_buf);
                &src_buf
            }
        };
        if let Err(e) = self.check_containers(src, first) {
            sc.src = src_buf;
            return Err(e);
        }
        let r = match le_words_mut::<D>(self.dst_pack, output) {
            Some(dst) => self.convert_words(sc, src, dst, first),
            None => {
                // (Every word is written: the old ones need not be cleared.)
                let mut dst = std::mem::take(&mut sc.dst);
                dst.truncate(n);
                dst.resize(n, D::default());
                let r = self.convert_words(sc, src, &mut dst, first);
                pack(self.dst_pack, &dst, output);
                sc.dst = dst;
                r
            }
        };
        sc.src = src_buf;
        Ok(r)
    }

    /// A format narrower than its container (e2m1, e2m3, e3m2, ue4m3 or a narrow integer in
    /// a byte) leaves the container's high bits zero; a word with any of them set is not an
    /// encoding of the format, and reading it as one would drop the bits (or index past a
    /// table), so it is an error naming the first such element.
    fn check_containers<S: Le>(&self, src: &[S], first: u64) -> std::io::Result<()> {
        let f = self.conv.src;
        let container = match self.src_pack {
            Packing::Bytes(b) => 8 * b as u32,
            _ => return Ok(()),
        };
        if f.width() >= container {
            return Ok(());
        }
        let stray = !f.mask();
        match src.iter().position(|w| w.to_u64() & stray != 0) {
            None => Ok(()),
            Some(i) => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "element {} is 0x{:x}, which is not a {f} encoding: {f} has {} bits and the bits above them must be zero",
                    first + i as u64,
                    src[i].to_u64(),
                    f.width()
                ),
            )),
        }
    }

    /// Converts the words `src` into `dst` (as long), the first element having index `first`
    /// in the tensor; returns the statistics and the block scales.
    fn convert_words<S: Le, D: Le>(
        &self,
        sc: &mut Scratch<S, D>,
        src: &[S],
        dst: &mut [D],
        first: u64,
    ) -> (Stats, Vec<u8>) {
        let n = src.len();
        if self.stochastic {
            sc.rnd
                .fill(self.stream, first, n, self.conv.rounding.stochastic_width());
        }
        // Block scales: the exponent k each element is multiplied by (2^k), per block.
        let mut scales = Vec::new();
        sc.ks.clear();
        let bsize = self.blocks.map_or(n.max(1), |b| b.size as usize);
        // The words of an `f32` source (always 4-byte words), for the vectorized passes.
        let words = match self.src_dec {
            Decoder::F32 => <[u32] as zerocopy::FromBytes>::ref_from_bytes(src.as_bytes()).ok(),
            _ => None,
        };
        // `f32` sources into formats reached through `f32` words, with block scales: the
        // scales and the scaled words in one pass ([`FusedScaleJob`]).
        let fused = match (&self.engine, words, self.blocks) {
            (Engine::ViaF32 { widen: None, .. }, Some(w), Some(b)) => {
                let nb = w.len().div_ceil(bsize);
                scales.resize(nb, 0);
                sc.ks.resize(nb, 0);
                sc.tmp.resize(n, 0);
                sc.exact.clear();
                vectorized_up_to(
                    self.isa,
                    FusedScaleJob {
                        src: w,
                        bsize,
                        blocks: b,
                        scales: &mut scales,
                        ks: &mut sc.ks,
                        out: &mut sc.tmp,
                        exact: &mut sc.exact,
                    },
                );
                true
            }
            _ => false,
        };
        if fused {
            // Done above.
        } else if let Some(b) = self.blocks {
            match words {
                Some(w) => {
                    self.block_scales_f32(&b, w, bsize, &mut scales, &mut sc.ks, &mut sc.amax)
                }
                None => {
                    for blk in src.chunks(bsize) {
                        let (byte, k) = self.block_scale(&b, blk);
                        scales.push(byte);
                        sc.ks.push(k);
                    }
                }
            }
        } else {
            sc.ks.push(0);
        }
        match &self.engine {
            Engine::Direct(kernel) => {
                let r = if self.stochastic {
                    sc.rnd.convert(kernel, src, dst)
                } else {
                    kernel.convert(src, dst)
                };
                r.expect("internal error: slice lengths and word widths are checked by the plan");
            }
            Engine::ViaF32 { kernel, widen } => {
                let vector = widen.is_none() && words.is_some();
                if !fused {
                    sc.exact.clear();
                }
                if let (true, false, Some(words)) = (vector, fused, words) {
                    // `f32` sources: the same scaled words and exact elements, vectorized
                    // (every word of `tmp` is written: no need to clear it).
                    sc.tmp.resize(n, 0);
                    vectorized_up_to(
                        self.isa,
                        ScaleJob {
                            src: words,
                            ks: &sc.ks,
                            bsize,
                            out: &mut sc.tmp,
                            exact: &mut sc.exact,
                        },
                    );
                }
                if !vector {
                    sc.tmp.clear();
                }
                for (j, blk) in src.chunks(bsize).enumerate().filter(|_| !vector) {
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
                    sc.rnd.convert(kernel, &sc.tmp, dst)
                } else {
                    kernel.convert(&sc.tmp, dst)
                };
                r.expect("internal error: slice lengths and word widths are checked by the plan");
                for &i in &sc.exact {
                    let x = src[i].to_u64();
                    let k = sc.ks[i / bsize];
                    let r = sc.rnd.get(i);
                    dst[i] = D::from_u64(self.exact(x, k, r));
                }
            }
            Engine::Exact => {
                for (i, (d, s)) in dst.iter_mut().zip(src).enumerate() {
                    let r = sc.rnd.get(i);
                    *d = D::from_u64(self.exact(s.to_u64(), sc.ks[i / bsize], r));
                }
            }
        }
        let stats = self.stats(src, dst, &sc.ks, &scales, bsize);
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

    /// The scale bytes and exponents ([`Plan::block_scale`]) of the blocks of the words of an
    /// `f32` source, appended to `scales` and `ks` (`tmp`: scratch): the largest magnitudes
    /// vectorized, then [`scale_of_max`] of each.
    fn block_scales_f32(
        &self,
        b: &Blocks,
        src: &[u32],
        bsize: usize,
        scales: &mut Vec<u8>,
        ks: &mut Vec<i32>,
        tmp: &mut Vec<u32>,
    ) {
        tmp.clear();
        vectorized_up_to(
            self.isa,
            BlockMax {
                src,
                bsize,
                out: tmp,
            },
        );
        for &m in tmp.iter() {
            let (byte, k) = scale_of_max(b, m);
            scales.push(byte);
            ks.push(k);
        }
    }

    /// The scale byte and exponent of a block of finite elements whose largest magnitude is
    /// `amax`.
    fn amax_scale(&self, b: &Blocks, amax: f64) -> (u8, i32) {
        let shared = match b.method {
            ScaleMethod::Ocp => return ocp_scale(amax, b.emax),
            ScaleMethod::Rp => {
                let q = (amax as f32) / b.max_f32;
                rp_scale_conversion().apply(q.to_bits() as u64).bits as i32 - 127
            }
        };
        ((shared + 127) as u8, -shared)
    }

    /// The scale byte of a block and the exponent its elements are multiplied by.
    fn block_scale<S: Le>(&self, b: &Blocks, blk: &[S]) -> (u8, i32) {
        let mut amax = 0.0f64;
        if matches!(self.src_dec, Decoder::F32) {
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
                let v = self.src_dec.get(x.to_u64()).abs();
                if !v.is_finite() {
                    // NaN or infinity in the block: the NaN scale, elements unscaled.
                    return (0xff, 0);
                }
                amax = amax.max(v);
            }
        }
        self.amax_scale(b, amax)
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
                    self.sse2_stats::<true>(&mut st, src, dst, ks, bsize, t, zero);
                } else {
                    self.sse2_stats::<false>(&mut st, src, dst, ks, bsize, t, zero);
                }
                return st;
            }
        }
        match (&self.fast, std::mem::size_of::<S>()) {
            (Some(FastDst::Table(t)), 4) => self.fast_stats(
                &mut st,
                src,
                dst,
                ks,
                bsize,
                t.zero,
                |y| t.val[y as u16 as usize],
                |y| t.cls[y as u16 as usize] as u32,
            ),
            (Some(FastDst::F32), 4) => self.fast_stats(
                &mut st,
                src,
                dst,
                ks,
                bsize,
                Some(Codes {
                    mask: 0x7fff_ffff,
                    lo: 0,
                    span: 0,
                }),
                |y| f32::from_bits(y) as f64,
                f32_class,
            ),
            _ => self.generic_stats(&mut st, &self.src_dec, &self.dst_dec, src, dst, ks, bsize),
        }
        st
    }

    /// The statistics of an `f32` source from the encodings: the classes by integer
    /// comparisons of the input's bits and the output's class bits (`fc`), the range check as
    /// a comparison of order-preserving keys with thresholds computed once per block; the
    /// errors from the input widened to `f64` and the output's value (`fv`). Exactly the
    /// numbers of [`Plan::stats_loop`] (the same per-element errors, summed in the same
    /// eight lanes in the same order), without decoding anything element by element.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fast_stats<S: Le, D: Le>(
        &self,
        st: &mut Stats,
        src: &[S],
        dst: &[D],
        ks: &[i32],
        bsize: usize,
        zero: Option<Codes>,
        fv: impl Fn(u32) -> f64,
        fc: impl Fn(u32) -> u32,
    ) {
        if self.blocks.is_some() {
            self.fast_stats_k::<true, S, D>(st, src, dst, ks, bsize, zero, fv, fc)
        } else {
            self.fast_stats_k::<false, S, D>(st, src, dst, ks, bsize, zero, fv, fc)
        }
    }

    /// The range thresholds (as order-preserving keys) of a block scaled by 2^k, `down`
    /// being 2^−k: (a · 2^k > hi) ⇔ (a > hi · 2^−k), both products exact. From the table of
    /// block exponents, if there is one; else `last` keeps the last block's, which the next
    /// blocks mostly share.
    fn block_thresholds(
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

    /// [`Plan::fast_stats`], with or without block scales: per block, one branch-free pass
    /// for the errors, one for the counts.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fast_stats_k<const SCALED: bool, S: Le, D: Le>(
        &self,
        st: &mut Stats,
        src: &[S],
        dst: &[D],
        ks: &[i32],
        bsize: usize,
        zero: Option<Codes>,
        fv: impl Fn(u32) -> f64,
        fc: impl Fn(u32) -> u32,
    ) {
        let relu = self.conv.policy.relu;
        let mut sum = [0.0f64; LANES];
        let mut max = [st.max_abs_error; LANES];
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
            let (mut s, mut m) = (sum, max);
            error_pass::<SCALED, false, S, D>(sb, db, down, &fv, &mut s, &mut m);
            let finite = s.iter().all(|x| x.is_finite());
            if finite {
                (sum, max) = (s, m);
            } else {
                error_pass::<SCALED, true, S, D>(sb, db, down, &fv, &mut sum, &mut max);
            }
            let c = match zero {
                Some(z) if finite => count_finite(sb, db, t_lo, t_hi, relu, z),
                _ => count_pass(sb, db, t_lo, t_hi, relu, &fc),
            };
            for (t, c) in counts.iter_mut().zip(c) {
                *t += c as u64;
            }
        }
        add_counts(st, &counts, &sum, &max);
    }

    /// [`Plan::fast_stats`] of `f32` sources and destinations of at most 8 bits whose zeros
    /// are a range of codes, with SSE2 vectors: the same per-element errors added to the same
    /// eight lanes in the same order (lane pairs in vectors), and the same counts.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments)]
    fn sse2_stats<const SCALED: bool>(
        &self,
        st: &mut Stats,
        src: &[u32],
        dst: &[u8],
        ks: &[i32],
        bsize: usize,
        t: &DstTable,
        zero: Codes,
    ) {
        use sse2::Acc;
        let relu = self.conv.policy.relu;
        let fv = |y: u32| t.val[y as u16 as usize];
        let fc = |y: u32| t.cls[y as u16 as usize] as u32;
        let mut counts = [0u64; 6];
        let mut acc = Acc::new(&[0.0; LANES], &[st.max_abs_error; LANES]);
        let mut last: Option<(i32, i32, i32)> = None;
        for (j, (sb, db)) in src.chunks(bsize).zip(dst.chunks(bsize)).enumerate() {
            let k = if SCALED { ks[j] } else { 0 };
            let down = if SCALED { exp2i(-k) } else { 1.0 };
            let (t_lo, t_hi) = self.block_thresholds(k, down, &mut last);
            let before = acc;
            let whole = sb.len() / LANES * LANES;
            let (x, y) = (&sb[..whole], &db[..whole]);
            let simple = !relu && zero.span == 0 && symmetric(t_lo, t_hi);
            let args = (&t.val, down, t_lo, t_hi, relu, zero);
            if simple {
                sse2::groups::<SCALED, true>(
                    &mut acc, x, y, args.0, args.1, args.2, args.3, args.4, args.5,
                );
            } else {
                sse2::groups::<SCALED, false>(
                    &mut acc, x, y, args.0, args.1, args.2, args.3, args.4, args.5,
                );
            }
            let (mut sum, mut max) = acc.lanes();
            let mut tail = [0u32; 2];
            if whole < sb.len() {
                // The last elements, in lanes 0, 1, …: as [`error_pass`] and [`count_finite`].
                let (xs, ys) = (&sb[whole..], &db[whole..]);
                error_pass::<SCALED, false, u32, u8>(xs, ys, down, &fv, &mut sum, &mut max);
                let c = count_finite(xs, ys, t_lo, t_hi, relu, zero);
                tail = [c[3], c[4]];
            }
            // The lane sums are finite exactly when every element is finite on both sides
            // (an error is at most ~2^256, a block at most 2^16 elements).
            if sum.iter().all(|x| x.is_finite()) {
                if whole < sb.len() {
                    acc.set_lanes(&sum, &max);
                }
                counts[3] += tail[0] as u64;
                counts[4] += tail[1] as u64;
                counts[5] += sb.len() as u64;
            } else {
                // Again, leaving the non-finite elements out, with the general counts.
                acc = before;
                let (mut sum, mut max) = acc.lanes();
                error_pass::<SCALED, true, u32, u8>(sb, db, down, &fv, &mut sum, &mut max);
                acc.set_lanes(&sum, &max);
                let c = count_pass(sb, db, t_lo, t_hi, relu, &fc);
                for (t, c) in counts.iter_mut().zip(c) {
                    *t += c as u64;
                }
            }
        }
        let (sum, max) = acc.lanes();
        let [sat, flushed] = acc.counts();
        counts[3] += sat;
        counts[4] += flushed;
        add_counts(st, &counts, &sum, &max);
    }

    /// The statistics through general decoders (any formats).
    #[allow(clippy::too_many_arguments)]
    fn generic_stats<S: Le, D: Le>(
        &self,
        st: &mut Stats,
        src_dec: &Decoder,
        dst_dec: &Decoder,
        src: &[S],
        dst: &[D],
        ks: &[i32],
        bsize: usize,
    ) {
        // Monomorphise the hot loop on the common decoders.
        let t = match dst_dec {
            Decoder::Table(t) => Some(&t.val),
            _ => None,
        };
        match (src_dec, t) {
            (Decoder::F32, Some(t)) => self.stats_loop(
                st,
                src,
                dst,
                ks,
                bsize,
                |x| f32::from_bits(x as u32) as f64,
                |y| t[y as u16 as usize],
            ),
            (Decoder::F32, None) => self.stats_loop(
                st,
                src,
                dst,
                ks,
                bsize,
                |x| f32::from_bits(x as u32) as f64,
                |y| dst_dec.get(y),
            ),
            (_, Some(t)) => self.stats_loop(
                st,
                src,
                dst,
                ks,
                bsize,
                |x| src_dec.get(x),
                |y| t[y as u16 as usize],
            ),
            _ => self.stats_loop(
                st,
                src,
                dst,
                ks,
                bsize,
                |x| src_dec.get(x),
                |y| dst_dec.get(y),
            ),
        }
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

/// The largest magnitude of each block of `f32` words, as the encoding without its sign bit
/// (appended to `out`), as work for [`vectorized`].
struct BlockMax<'a> {
    src: &'a [u32],
    bsize: usize,
    out: &'a mut Vec<u32>,
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
fn max_magnitude(blk: &[u32]) -> u32 {
    blk.iter().fold(0, |m, &x| m.max(x & 0x7fff_ffff))
}

/// The scale byte of a block of `f32` words whose largest magnitude is the encoding `m`
/// ([`max_magnitude`]) and the exponent its elements are multiplied by: the NaN scale and 0
/// for a block with NaN or infinity; for `ocp`, [`ocp_scale`]; for `rp`, `amax / max` (as
/// `f32`) through `cvt.rp.satfinite.ue8m0.f32` (the `ue8m0` kernel's element function).
/// Without branches on `m`, so that a loop over the maxima of several blocks is vectorized.
#[inline(always)]
fn scale_of_max(b: &Blocks, m: u32) -> (u8, i32) {
    let (byte, k) = match b.method {
        ScaleMethod::Ocp => ocp_scale_bits(m, b.emax),
        ScaleMethod::Rp => {
            let s = ue8m0_rp_satfinite((f32::from_bits(m) / b.max_f32).to_bits());
            (s, 127 - s as i32)
        }
    };
    if m >= 0x7f80_0000 {
        (0xff, 0)
    } else {
        (byte, k)
    }
}

/// [`ocp_scale`] of the finite `f32` magnitude whose encoding is `m`, in 32-bit integer
/// operations without branches: `floor(log2(amax))` is the exponent field less the bias
/// for a normal `m`, and for a subnormal one (`m` < 2^23, converted to `f32` exactly) the
/// exponent of `m` itself less 127 + 149.
#[inline(always)]
fn ocp_scale_bits(m: u32, emax: i32) -> (u8, i32) {
    let e = (m >> 23) as i32;
    let sub = ((m as f32).to_bits() >> 23) as i32 - (127 + 149);
    let fl = if e > 0 { e - 127 } else { sub };
    let shared = if m == 0 {
        -127
    } else {
        (fl - emax).clamp(-127, 127)
    };
    ((shared + 127) as u8, -shared)
}

/// Scales `f32` words by 2^k per block (`ks`) into `out` as [`Engine::ViaF32`] does, as work
/// for [`vectorized`]: a normal value whose exponent stays normal gets its exponent field
/// adjusted; the others are left as they are and, unless they are zeros, infinities or NaNs
/// (which scaling leaves alone) or `k` is 0, their indices are appended to `exact`.
struct ScaleJob<'a> {
    src: &'a [u32],
    ks: &'a [i32],
    bsize: usize,
    out: &'a mut [u32],
    exact: &'a mut Vec<usize>,
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
fn scale(x: u32, k: i32) -> (u32, bool) {
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
fn scale_block(s: &[u32], o: &mut [u32], k: i32, at: usize, exact: &mut Vec<usize>) {
    if scale_words(s, o, k) {
        exact_elements(s, k, at, exact);
    }
}

/// `s` scaled by 2^k into `o` ([`scale`]; with `k` = 0 a copy); returns whether an element
/// needs the exact core (never with `k` = 0: nothing is scaled).
#[inline(always)]
fn scale_words(s: &[u32], o: &mut [u32], k: i32) -> bool {
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
fn exact_elements(s: &[u32], k: i32, at: usize, exact: &mut Vec<usize>) {
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
struct FusedScaleJob<'a> {
    src: &'a [u32],
    bsize: usize,
    /// The block scaling: its method, [`Blocks::emax`] for `ocp`, [`Blocks::max_f32`] for
    /// `rp`.
    blocks: Blocks,
    scales: &'a mut [u8],
    ks: &'a mut [i32],
    out: &'a mut [u32],
    exact: &'a mut Vec<usize>,
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
const GROUP: usize = 16;

impl FusedScaleJob<'_> {
    /// With blocks of 32 elements, in groups of [`GROUP`] blocks: first the group's block
    /// maxima, then their scales (a loop the compiler vectorizes across blocks), then the
    /// scaled words, and only in a group where some element needs the exact core, the loop
    /// that lists them. The rest (and other block sizes) block by block.
    #[inline(always)]
    fn go(self, bsize: usize) {
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

/// The statistics of `f32` sources into formats whose values are `f32` numbers computed
/// from the bits (`fv`), as work for [`vectorized`]: [`Plan::fast_stats`] with the blocks of
/// finite elements in one pass ([`finite_groups`]).
struct FastJob<'a, S, D, FV, FC, FS> {
    plan: &'a Plan,
    st: &'a mut Stats,
    src: &'a [S],
    dst: &'a [D],
    ks: &'a [i32],
    bsize: usize,
    /// The zero and infinite outputs, `relu`.
    tests: Tests,
    /// The value of a finite encoding (NaN for the others).
    fv: FV,
    /// The class bits of an encoding.
    fc: FC,
    /// The value of any encoding.
    slow: FS,
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
    /// As [`Plan::fast_stats_k`].
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
        let mut acc = Groups::new(st.max_abs_error);
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
                    error_pass::<SCALED, true, u32, D>(
                        sb,
                        db,
                        down,
                        &slow,
                        &mut acc.sum,
                        &mut acc.max,
                    );
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
                    scaled_group::<false, D>(&mut g, odd, sg, dg, bsize, par, &fv, tests);
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
        add_counts(st, &counts, &acc.sum, &acc.max);
    }
}

/// The groups of small blocks of a [`FastJob`]: `per` blocks of `bsize` elements each (the
/// last group may be shorter).
#[derive(Clone, Copy)]
struct GroupSlices<'a, D> {
    src: &'a [u32],
    dst: &'a [D],
    ks: &'a [i32],
    bsize: usize,
    per: usize,
}

impl<'a, D> GroupSlices<'a, D> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.src.len().div_ceil(self.bsize * self.per)
    }

    /// Group `j`'s inputs, outputs and block exponents.
    #[inline(always)]
    fn group(&self, j: usize) -> (&'a [u32], &'a [D], &'a [i32]) {
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
fn block_ranges<'p>(
    plan: &Plan,
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
fn tolerant_groups<D: Le, FV: Fn(u32) -> f32>(work: TolerantRun<'_, D, FV>) -> (usize, bool) {
    vectorized_up_to(work.plan.isa, work)
}

/// The groups of a [`FastJob`] from group `from` on, in the pass that leaves non-finite
/// outputs out ([`scaled_group`] with `TOLERANT`), as work for [`vectorized`]: while each
/// group has such an output, and its inputs are all finite. Returns the next group, and
/// whether it is to be done as usual (`true`: the last group done had only finite elements,
/// or there is none left) or block by block (`false`: it has an input that is not finite or
/// is not whole lane vectors).
struct TolerantRun<'a, D, FV> {
    plan: &'a Plan,
    at: GroupSlices<'a, D>,
    acc: &'a mut Groups,
    counts: &'a mut [u64; 6],
    last: &'a mut Option<(i32, i32, i32)>,
    from: usize,
    fv: FV,
    tests: Tests,
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
            scaled_group::<true, D>(&mut g, &mut odd, sg, dg, at.bsize, par, &fv, tests);
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
struct Tests {
    relu: bool,
    zero: Codes,
    inf: Option<Codes>,
}

/// The lane sums and maxima of the errors and the lane counts of [`finite_groups`] (the
/// counts in twice [`LANES`] lanes, so that the 32-bit work of two lane vectors is one
/// vector: counts are sums, which lane counts an element does not matter).
#[derive(Clone, Copy)]
struct Groups {
    sum: [f64; LANES],
    max: [f64; LANES],
    sat: [u32; 2 * LANES],
    flushed: [u32; 2 * LANES],
}

/// The lane counts of elements that are not finite, of [`lane_pass`] with `TOLERANT` (apart
/// from [`Groups`], so that the usual pass does not carry them).
#[derive(Clone, Copy, Default)]
struct Odd {
    /// Outputs that are NaN or infinite.
    nonfinite: [u32; 2 * LANES],
    /// Infinite outputs.
    inf: [u32; 2 * LANES],
    /// Inputs that are NaN or infinite.
    bad_input: [u32; 2 * LANES],
}

impl Groups {
    /// Empty sums, the maxima at `max`.
    fn new(max: f64) -> Groups {
        Groups {
            sum: [0.0; LANES],
            max: [max; LANES],
            sat: [0; 2 * LANES],
            flushed: [0; 2 * LANES],
        }
    }

    /// A pass that goes on from these sums and maxima, its counts at zero.
    #[inline(always)]
    fn restart(&self) -> Groups {
        Groups {
            sum: self.sum,
            max: self.max,
            ..Groups::new(0.0)
        }
    }

    /// Takes the pass `g` over `n` elements if its lane sums are finite, which they are
    /// exactly when every element is finite on both sides (an error is at most ~2^256, a
    /// pass at most 2^16 elements): its sums and maxima become these, its saturated and
    /// flushed counts and `n` go to `counts`. Returns whether it did.
    #[inline(always)]
    fn take(&mut self, g: &Groups, n: usize, counts: &mut [u64; 6]) -> bool {
        // (The tolerant take of a pass without non-finite counts: those fold away.)
        self.take_tolerant(g, &Odd::default(), n, counts).is_some()
    }

    /// Takes the pass `g` of [`lane_pass`] with `TOLERANT` over `n` elements if every input
    /// was finite: the outputs that are not finite then count as NaN or as overflows to
    /// infinity (the inputs are finite), and every other element is in the errors, as
    /// [`count_pass`] counts them. Returns the number of outputs that are not finite, or
    /// `None` if it did not take the pass.
    #[inline(always)]
    fn take_tolerant(
        &mut self,
        g: &Groups,
        odd: &Odd,
        n: usize,
        counts: &mut [u64; 6],
    ) -> Option<u64> {
        if total(&odd.bad_input) > 0 || !g.sum.iter().all(|x| x.is_finite()) {
            return None;
        }
        let (nonfinite, inf) = (total(&odd.nonfinite), total(&odd.inf));
        self.sum = g.sum;
        self.max = g.max;
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
fn total(c: &[u32; 2 * LANES]) -> u64 {
    c.iter().map(|&c| c as u64).sum()
}

/// Adds the errors and the saturated and flushed counts of `x.len()` elements, all assumed
/// finite on both sides (a non-finite one makes the sums non-finite; with `TOLERANT`, see
/// [`lane_pass`]), as [`error_pass`] (without `SKIP`) and [`count_finite`] do: element `i` in
/// lane `i mod LANES` ([`lane_pass`]).
#[inline(always)]
fn finite_groups<const SCALED: bool, const TOLERANT: bool, D: Le>(
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
/// inputs whose conversion does not saturate ([`Plan::block_thresholds`]).
#[derive(Clone, Copy, Default)]
struct BlockRange {
    down: f64,
    t_lo: i32,
    t_hi: i32,
}

/// [`finite_groups`] of a group of blocks of `bsize` elements, a multiple of [`LANES`],
/// scaled (`par`: each block's factor 2^−k and range thresholds), in a single pass with
/// lane-wise sums, maxima and counts (no reduction across lanes): the same sums (element `i`
/// of a block in lane `i mod LANES`, in order), maxima and counts.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn scaled_group<const TOLERANT: bool, D: Le>(
    g: &mut Groups,
    odd: &mut Odd,
    x: &[u32],
    y: &[D],
    bsize: usize,
    par: &[BlockRange],
    fv: &impl Fn(u32) -> f32,
    tests: Tests,
) {
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
fn symmetric(t_lo: i32, t_hi: i32) -> bool {
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
fn lane_pass<const SCALED: bool, const SYM: bool, const TOLERANT: bool, D: Le>(
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
        mut sum,
        mut max,
        mut sat,
        mut flushed,
        ..
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
    let add = |sum: &mut [f64; LANES], max: &mut [f64; LANES], l: usize, b: f32, xv: u32| {
        let b = if SCALED { b as f64 * down } else { b as f64 };
        let e = (b - f32::from_bits(xv) as f64).abs();
        let e = if TOLERANT && !e.is_finite() { 0.0 } else { e };
        sum[l] += e;
        max[l] = if e > max[l] { e } else { max[l] };
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
                add(&mut sum, &mut max, l, bh[l], xh[l]);
            }
        }
    }
    // The rest (under 2 × LANES elements, starting at a multiple of LANES): lane `i mod
    // LANES` again.
    for (i, (&xv, yv)) in xs.remainder().iter().zip(ys.remainder()).enumerate() {
        let yv = yv.to_u64() as u32;
        let b = fv(yv);
        count(i, xv, yv, b);
        add(&mut sum, &mut max, i % LANES, b, xv);
    }
    g.sum = sum;
    g.max = max;
    g.sat = sat;
    g.flushed = flushed;
    if TOLERANT {
        *odd = o;
    }
}

/// Elements per group of small blocks of [`scaled_group`] (about: whole blocks): enough to
/// amortise a group's check, few enough that its blocks' parameters stay in the
/// first-level cache.
const PIECE: usize = 512;

/// Lanes of the error sums (element `i` of a block goes to lane `i mod LANES`).
const LANES: usize = 8;

/// Adds the errors `|fv(output) · down − input|` of `f32` inputs to the lane sums and maxima;
/// with `SKIP`, leaving out the elements where it is not finite (exactly those where the
/// input or the output is NaN or infinite: `f32` inputs and scales of at most 2^±127 cannot
/// overflow an `f64`).
#[inline(always)]
fn error_pass<const SCALED: bool, const SKIP: bool, S: Le, D: Le>(
    src: &[S],
    dst: &[D],
    down: f64,
    fv: &impl Fn(u32) -> f64,
    sum: &mut [f64; LANES],
    max: &mut [f64; LANES],
) {
    // Local copies, so that the accumulators live in registers.
    let (mut s, mut m) = (*sum, *max);
    let err = |x: &S, y: &D| {
        let a = f32::from_bits(x.to_u64() as u32) as f64;
        let b = fv(y.to_u64() as u32);
        let b = if SCALED { b * down } else { b };
        let e = (b - a).abs();
        if !SKIP || e < f64::INFINITY {
            e
        } else {
            0.0
        }
    };
    let mut xs = src.chunks_exact(LANES);
    let mut ys = dst.chunks_exact(LANES);
    for (xc, yc) in xs.by_ref().zip(ys.by_ref()) {
        for l in 0..LANES {
            let e = err(&xc[l], &yc[l]);
            s[l] += e;
            m[l] = if e > m[l] { e } else { m[l] };
        }
    }
    for (l, (x, y)) in xs.remainder().iter().zip(ys.remainder()).enumerate() {
        let e = err(x, y);
        s[l] += e;
        m[l] = if e > m[l] { e } else { m[l] };
    }
    (*sum, *max) = (s, m);
}

/// The loops of [`Plan::sse2_stats`], with SSE2 (part of every `x86_64` target) through the
/// safe intrinsics of `safe_arch`.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{Codes, LANES};
    use safe_arch::*;

    /// The lane sums of the errors (lanes `2i` and `2i + 1` in `s[i]`), their maximum (in two
    /// lanes: only the largest of all is reported, and every error is finite here, so that
    /// it does not matter which lane holds which), the saturated and flushed counts (four
    /// lanes each).
    #[derive(Clone, Copy)]
    pub(super) struct Acc {
        s: [m128d; 4],
        m: m128d,
        sat: m128i,
        flushed: m128i,
    }

    impl Acc {
        pub(super) fn new(sum: &[f64; LANES], max: &[f64; LANES]) -> Acc {
            let zero = m128d::from_array([0.0; 2]);
            let mut a = Acc {
                s: [zero; 4],
                m: zero,
                sat: m128i::from([0i32; 4]),
                flushed: m128i::from([0i32; 4]),
            };
            a.set_lanes(sum, max);
            a
        }

        /// Sets the lane sums and maxima (the maximum of the lanes' maxima for all).
        pub(super) fn set_lanes(&mut self, sum: &[f64; LANES], max: &[f64; LANES]) {
            for i in 0..4 {
                self.s[i] = m128d::from_array([sum[2 * i], sum[2 * i + 1]]);
            }
            let m = max.iter().fold(0.0f64, |m, &x| m.max(x));
            self.m = m128d::from_array([m, m]);
        }

        /// The lane sums and maxima (as [`Acc::set_lanes`]: each lane with the largest).
        pub(super) fn lanes(&self) -> ([f64; LANES], [f64; LANES]) {
            let mut sum = [0.0; LANES];
            for i in 0..4 {
                [sum[2 * i], sum[2 * i + 1]] = self.s[i].to_array();
            }
            let [a, b] = self.m.to_array();
            (sum, [a.max(b); LANES])
        }

        /// The saturated and flushed counts.
        pub(super) fn counts(&self) -> [u64; 2] {
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
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn groups<const SCALED: bool, const SIMPLE: bool>(
        acc: &mut Acc,
        x: &[u32],
        y: &[u8],
        val: &[f64; 1 << 16],
        down: f64,
        t_lo: i32,
        t_hi: i32,
        relu: bool,
        zero: Codes,
    ) {
        let Acc {
            mut s,
            mut m,
            mut sat,
            mut flushed,
        } = *acc;
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
            let mut e = [m128d::from_array([0.0; 2]); 4];
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
                    e[2 * h + p] = bitand_m128d(sub_m128d(b, a), abs);
                    s[2 * h + p] = add_m128d(s[2 * h + p], e[2 * h + p]);
                }
            }
            m = max_m128d(max_m128d(max_m128d(e[0], e[1]), max_m128d(e[2], e[3])), m);
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
        *acc = Acc { s, m, sat, flushed };
    }
}

/// `2^k` (exact; `k` within ±(127 + 1023)).
#[inline(always)]
fn exp2i(k: i32) -> f64 {
    if (-1022..=1023).contains(&k) {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        pow2(k)
    }
}

/// The counts of [`Stats`] for `f32` inputs — NaN outputs, NaN to number, overflow to
/// infinity, saturated, flushed to zero, elements in the errors — from the inputs' bits, the
/// outputs' class bits (`fc`) and the range thresholds on [`key`]s.
#[inline(always)]
fn count_pass<S: Le, D: Le>(
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
fn count_finite<S: Le, D: Le>(
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

/// The random values of a chunk of stochastic rounding: the stream's words
/// (`gpucvt_core::random`) in the narrowest word that holds the conversion's random width,
/// since the rounding reads only that many low bits (a quarter of the bytes for the 8-bit
/// widths of FP8/FP6/FP4, half for `f16` and `bf16`).
#[derive(Default)]
struct Randoms {
    w8: Vec<u8>,
    w16: Vec<u16>,
    w32: Vec<u32>,
    /// Which of them holds the chunk's values: 1, 2 or 4 bytes.
    bytes: u8,
}

impl Randoms {
    /// The values of elements `first ..` (`n` of them) of `stream`, for a random width of
    /// `width` bits. (`random_values` writes every word: the old ones need not be cleared.)
    fn fill(&mut self, stream: u64, first: u64, n: usize, width: u32) {
        use gpucvt_kernels::random::random_values;
        if width <= 8 {
            self.w8.resize(n, 0);
            random_values(stream, first, &mut self.w8);
            self.bytes = 1;
        } else if width <= 16 {
            self.w16.resize(n, 0);
            random_values(stream, first, &mut self.w16);
            self.bytes = 2;
        } else {
            self.w32.resize(n, 0);
            random_values(stream, first, &mut self.w32);
            self.bytes = 4;
        }
    }

    /// The value of element `i` (0 if there is none).
    fn get(&self, i: usize) -> u32 {
        match self.bytes {
            1 => self.w8.get(i).map_or(0, |&r| r as u32),
            2 => self.w16.get(i).map_or(0, |&r| r as u32),
            _ => self.w32.get(i).copied().unwrap_or(0),
        }
    }

    /// `kernel`'s stochastic conversion of `src` into `dst` with these values.
    fn convert<S: Word, D: Word>(
        &self,
        kernel: &Kernel,
        src: &[S],
        dst: &mut [D],
    ) -> Result<(), gpucvt_kernels::BulkError> {
        match self.bytes {
            1 => kernel.convert_stochastic_words(src, dst, &self.w8),
            2 => kernel.convert_stochastic_words(src, dst, &self.w16),
            _ => kernel.convert_stochastic(src, dst, &self.w32),
        }
    }
}

thread_local! {
    /// The scratch buffers of the thread's last sub-chunk, kept for the next one: a fresh
    /// set per rayon job (as `map_init` gave) was allocated, zeroed and faulted in again for
    /// every chunk, about 5% of a conversion's processor time.
    static SCRATCH: std::cell::RefCell<Option<Box<dyn std::any::Any>>> =
        const { std::cell::RefCell::new(None) };
}

/// Where the input bytes of a chunk come from ([`Plan::convert_chunk`],
/// [`Plan::convert_chunk_at`]).
#[derive(Clone, Copy)]
enum Source<'a> {
    #[cfg(test)]
    Bytes(&'a [u8]),
    File {
        file: &'a File,
        at: u64,
    },
}

/// Fills `buf` from byte `at` of `file` without moving its position (`UnexpectedEof` if the
/// file ends first).
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut at) = (buf, at);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, at) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(k) => {
                    buf = &mut buf[k..];
                    at += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, at);
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "positioned reads are not available on this platform",
        ))
    }
}

/// Runs `f` with this thread's [`Scratch`] of these word types (a new one if it has none of
/// them). The scratch is taken out of the thread's slot while `f` runs, so a job that rayon
/// runs on this thread meanwhile gets a fresh one instead of a conflicting borrow.
fn with_scratch<S: 'static, D: 'static, R>(f: impl FnOnce(&mut Scratch<S, D>) -> R) -> R {
    let mut sc: Box<Scratch<S, D>> = SCRATCH
        .with(|slot| slot.borrow_mut().take())
        .and_then(|b| b.downcast().ok())
        .unwrap_or_default();
    let r = f(&mut sc);
    SCRATCH.with(|slot| *slot.borrow_mut() = Some(sc));
    r
}

struct Scratch<S, D> {
    /// The input bytes read from a file ([`Source::File`]).
    input: Vec<u64>,
    src: Vec<S>,
    dst: Vec<D>,
    rnd: Randoms,
    tmp: Vec<u32>,
    /// The largest magnitudes of the blocks of `f32` words.
    amax: Vec<u32>,
    exact: Vec<usize>,
    ks: Vec<i32>,
}

impl<S, D> Default for Scratch<S, D> {
    fn default() -> Self {
        Scratch {
            input: Vec::new(),
            src: Vec::new(),
            dst: Vec::new(),
            rnd: Randoms::default(),
            tmp: Vec::new(),
            amax: Vec::new(),
            exact: Vec::new(),
            ks: Vec::new(),
        }
    }
}

/// The bytes `b` as words of `S`, when they are exactly that: one element per container of
/// `S`'s size, on a little-endian machine, `b` aligned to `S`.
fn le_words<S: Le>(p: Packing, b: &[u8]) -> Option<&[S]> {
    if cfg!(target_endian = "little") && p == Packing::Bytes(std::mem::size_of::<S>()) {
        <[S] as zerocopy::FromBytes>::ref_from_bytes(b).ok()
    } else {
        None
    }
}

/// [`le_words`], mutable.
fn le_words_mut<D: Le>(p: Packing, b: &mut [u8]) -> Option<&mut [D]> {
    if cfg!(target_endian = "little") && p == Packing::Bytes(std::mem::size_of::<D>()) {
        <[D] as zerocopy::FromBytes>::mut_from_bytes(b).ok()
    } else {
        None
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
        Packing::Nibbles => vectorized(PackNibbles { words, out }),
        Packing::Sixes => {
            // Eight words to six bytes at a time, then the rest four to three.
            let whole = (words.len() / 8).min(out.len() / 6);
            let (w8, words) = words.split_at(whole * 8);
            let (o6, out) = out.split_at_mut(whole * 6);
            for (o, oct) in o6.chunks_exact_mut(6).zip(w8.chunks_exact(8)) {
                let mut v = 0u64;
                for (k, d) in oct.iter().enumerate() {
                    v |= (d.to_u64() & 0x3f) << (6 * k);
                }
                o.copy_from_slice(&v.to_le_bytes()[..6]);
            }
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

/// Packs words into nibbles (the low four bits of each, two to a byte, the first in the low
/// half), as work for [`vectorized`].
struct PackNibbles<'a, D> {
    words: &'a [D],
    out: &'a mut [u8],
}

impl<D: Le> Vectorizable for PackNibbles<'_, D> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let pairs = self.words.chunks_exact(2);
        let last = pairs.remainder().first();
        let mut out = self.out.iter_mut();
        for (o, pair) in out.by_ref().zip(pairs) {
            *o = (pair[0].to_u64() as u8 & 0xf) | (pair[1].to_u64() as u8) << 4;
        }
        if let (Some(o), Some(d)) = (out.next(), last) {
            *o = d.to_u64() as u8 & 0xf;
        }
    }
}

/// Adds a statistics pass's counts (NaN, NaN to number, overflow to ∞, saturated, flushed,
/// error elements) and error lanes to `st`.
fn add_counts(st: &mut Stats, counts: &[u64; 6], sum: &[f64], max: &[f64]) {
    st.nan += counts[0];
    st.nan_to_number += counts[1];
    st.overflow_to_inf += counts[2];
    st.saturated += counts[3];
    st.flushed_to_zero += counts[4];
    st.error_elements += counts[5];
    st.sum_abs_error += sum.iter().sum::<f64>();
    st.max_abs_error = max.iter().fold(0.0f64, |m, &x| m.max(x));
}

#[cfg(test)]
mod tests {
    use super::*;
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
            448.0f32, 449.0, 463.9, 464.0, 480.0, -448.0, -470.0, 57344.0, 61440.0, 65504.0,
            65520.0, 6.0, 6.5, 7.0, -6.1, 1.0, -1.0, 0.5, 1.0e-3, -1.0e-3, 1.0e-40, 127.4, 127.5,
            128.0, -128.5, -129.0, 255.5, 256.0, 2e-3, 9.7e-4, 1.9e-3, 3e38, -3e38,
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
    /// classified by the definitions of [`Stats`], the errors summed in the lanes of the
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
        for (i, (&x, &y)) in src.iter().zip(dst).enumerate() {
            let k = match scales.get(i / bsize) {
                Some(&0xff) | None => 0,
                Some(&s) => 127 - s as i32,
            };
            let a = sf.decode(x as u64).to_f64_lossy();
            let b = df.decode(y).to_f64_lossy();
            let scaled = a * 2f64.powi(k);
            if b.is_nan() {
                st.nan += 1;
            } else if a.is_nan() {
                st.nan_to_number += 1;
            } else if b.is_infinite() {
                if !a.is_infinite() {
                    st.overflow_to_inf += 1;
                }
            } else {
                if scaled > plan.hi || scaled < plan.lo {
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
                }
            }
        }
        st.sum_abs_error = sum.iter().sum();
        st.max_abs_error = max.iter().fold(0.0, |m: f64, &x| m.max(x));
        st
    }

    fn check(conv: Conversion, block: Option<(u64, ScaleMethod)>) {
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

    fn check_on(conv: Conversion, block: Option<(u64, ScaleMethod)>, src: Vec<u32>) {
        let n = src.len();
        let dst_pack = Packing::Bytes(crate::dtype::container_bytes(&conv.dst));
        let plan = Plan::new(conv, Packing::Bytes(4), dst_pack, block, 7);
        assert!(plan.fast.is_some(), "{conv:?}: the fast statistics apply");
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
        // And the general decoders agree too.
        let mut g = Stats {
            elements: n as u64,
            blocks: got.blocks,
            nan_blocks: got.nan_blocks,
            ..Stats::default()
        };
        let ks: Vec<i32> = if block.is_some() {
            scales
                .iter()
                .map(|&s| if s == 0xff { 0 } else { 127 - s as i32 })
                .collect()
        } else {
            vec![0]
        };
        let (sd, dd) = (Decoder::new(&conv.src), Decoder::new(&conv.dst));
        plan.generic_stats(&mut g, &sd, &dd, &src, &words, &ks, bsize);
        stats.mean_abs_error = 0.0;
        g.mean_abs_error = 0.0;
        assert_eq!(stats, g, "{conv:?} {block:?}: general decoders");
    }

    /// The engine's vectorized loops compiled for the baseline target and for AVX2 (where
    /// the CPU has it) give the words, statistics and scales `want` of the best version.
    fn same_on_every_isa(
        plan: &Plan,
        block: Option<(u64, ScaleMethod)>,
        bytes: &[u8],
        first: u64,
        want: (&[u8], &Stats, &[u8]),
    ) {
        let n = bytes.len() as u64 / 4;
        for isa in [InstructionSet::Baseline, InstructionSet::Avx2] {
            let mut p = Plan::new(plan.conv, plan.src_pack, plan.dst_pack, block, plan.stream);
            p.isa = isa;
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
        for method in [ScaleMethod::Ocp, ScaleMethod::Rp] {
            check(conv(E2M1, Rounding::RN, sf), Some((32, method)));
            check(conv(E4M3, Rounding::RN, plain), Some((16, method)));
        }
    }

    /// MX blocks of 32 in groups of 16 whose outputs or inputs are not finite in a pattern
    /// that takes the statistics through each of their ways: the usual pass; the pass that
    /// leaves non-finite outputs out, for one group and for several in a row, back to the
    /// usual pass after a group without them; block by block for a group with a NaN or
    /// infinite input, met in either pass; a short last group. Every block has a saturated
    /// element and a flushed one (with OCP scales: the largest element of a block, 1.9 · 2^e,
    /// becomes 486 for e4m3 (NaN without `.satfinite`) or 62259 for e5m2 (infinity); 1.76 ·
    /// 2^e becomes 448 or 57344, saturated).
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
                        1 => 2f32.powi(-30),
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
                Some((32, ScaleMethod::Ocp)),
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
                for method in [ScaleMethod::Ocp, ScaleMethod::Rp] {
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
        method: ScaleMethod,
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
            let (byte, k) = plan.block_scale(&b, blk);
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
        let units = n - n % pack_as.unit() as usize;
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
    fn integer_ocp_scales_equal_the_f64_ones() {
        // Every subnormal and the first normal binade, both sides of every exponent and a
        // stride through all the finite magnitudes, for the element formats' emax values.
        let mut ms: Vec<u32> = (0..1 << 24).collect();
        for e in 1..255u32 {
            for d in [0u32, 1, 2, 0x3f_ffff, 0x40_0000, 0x7f_fffe, 0x7f_ffff] {
                ms.push((e << 23) | d);
            }
        }
        ms.extend((0..0x7f80_0000u32).step_by(9973));
        for emax in [-3, 0, 2, 4, 8, 15, 127] {
            for &m in &ms {
                assert_eq!(
                    ocp_scale_bits(m, emax),
                    ocp_scale(f32::from_bits(m) as f64, emax),
                    "m {m:#x} emax {emax}"
                );
            }
        }
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
}
