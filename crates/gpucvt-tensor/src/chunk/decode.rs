//! Encodings decoded for the statistics: values as `f64` (exact), tables of every encoding
//! of formats of at most 16 bits, and arithmetic decoders that vectorize.

use crate::chunk::exp2i;
use gpucvt_core::format::{Format, Layout, Specials, ZeroExponent, BF16, F32, F64, TF32};
use std::sync::{Arc, Mutex};

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
    pub(crate) val: Box<[f64; 1 << 16]>,
    /// Its class: [`NAN`] | [`INF`] | [`ZERO`] bits.
    pub(crate) cls: Box<[u8; 1 << 16]>,
    /// The zero encodings as a range of magnitudes, when they are one.
    pub(crate) zero: Option<Codes>,
    /// The infinite encodings likewise ([`Codes::NONE`] for a format without them).
    pub(crate) inf: Option<Codes>,
    /// The values computed from the bits, when that gives the table's.
    pub(crate) arith: Option<Arith>,
}

/// Decodes the encodings of a float format of at most 16 bits with IEEE-style subnormals
/// whose values are all `f32` numbers arithmetically — 32-bit integer and `f32` operations
/// that the compiler vectorizes, instead of table lookups: finite encodings to exactly the
/// value [`DstTable`] holds, the others to NaN (which is all the statistics need of them:
/// they leave the errors out).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arith {
    /// The magnitude bits.
    pub(crate) mag: i32,
    /// The sign bit (0 for unsigned formats), and the shift that takes it to bit 31.
    pub(crate) sign: i32,
    pub(crate) sign_shift: u32,
    /// The shift that takes the magnitude's mantissa field to the top of an `f32`'s.
    pub(crate) shift: u32,
    /// The smallest normal magnitude and the smallest non-finite one (`i32::MAX`: none).
    pub(crate) min_normal: i32,
    pub(crate) special: i32,
    /// Added to the shifted magnitude: normal encodings get their exponent rebiased; a
    /// subnormal one `m` becomes `2^emin · (1 + m / 2^man_bits)`, from which `2^emin` is
    /// then subtracted (exactly).
    pub(crate) normal_offset: i32,
    pub(crate) subnormal_offset: i32,
    pub(crate) emin: f32,
}

impl Arith {
    /// The decoder of `f`, if it has one and it gives the values of `val` (checked for every
    /// encoding).
    pub(crate) fn new(f: &Format, val: &[f64]) -> Option<Arith> {
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
    pub(crate) fn get(self, y: u32) -> f32 {
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
pub(crate) struct Codes {
    pub(crate) mask: u32,
    pub(crate) lo: u32,
    pub(crate) span: u32,
}

impl Codes {
    /// The empty set.
    pub(crate) const NONE: Codes = Codes::range(0, 1, 0);

    /// The encodings whose magnitude bits `y & mask` lie in `lo ..= lo + span`.
    pub(crate) const fn range(mask: u32, lo: u32, span: u32) -> Codes {
        Codes { mask, lo, span }
    }

    #[inline(always)]
    pub(crate) fn test(self, y: u32) -> bool {
        (y & self.mask).wrapping_sub(self.lo) <= self.span
    }

    /// The encodings among `0..2^width` of which `pred` holds, as a range of magnitudes with
    /// or without the top bit as a sign, if they are one (checked against every encoding).
    pub(crate) fn find(width: u32, pred: impl Fn(u32) -> bool) -> Option<Codes> {
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
pub(crate) const NAN: u32 = 1;
/// Class bit of an infinite encoding.
pub(crate) const INF: u32 = 2;
/// Class bit of a zero encoding.
pub(crate) const ZERO: u32 = 4;

impl DstTable {
    /// The table of `f` (built once per process and format).
    pub(crate) fn of(f: &Format) -> Arc<DstTable> {
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
pub(crate) enum FastDst {
    /// Destinations of at most 16 bits other than `bf16`: lookup tables.
    Table(Arc<DstTable>),
    /// `bf16`: the high half of an `f32`.
    Bf16,
    /// `f32`/`tf32`: the word is an `f32`.
    F32,
}

impl FastDst {
    /// The fast statistics of `f32`/`tf32` sources into `dst`, if there are any.
    pub(crate) fn of(src: &Format, dst: &Format) -> Option<FastDst> {
        if *src != F32 && *src != TF32 {
            None
        } else if *dst == F32 || *dst == TF32 {
            Some(FastDst::F32)
        } else if *dst == BF16 {
            Some(FastDst::Bf16)
        } else if dst.width() <= 16 {
            Some(FastDst::Table(DstTable::of(dst)))
        } else {
            None
        }
    }
}
