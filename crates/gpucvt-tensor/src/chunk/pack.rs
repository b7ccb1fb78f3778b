//! Encoding words in little-endian bytes, and the packed layouts: FP4 two per byte (the
//! first in the low nibble), FP6 four per three bytes (a little-endian bit stream).

use crate::dtype::Packing;
use gpucvt_kernels::Word;
use gpucvt_kernels::{vectorized, Vectorizable};

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

/// The bytes `b` as words of `S`, when they are exactly that: one element per container of
/// `S`'s size, on a little-endian machine, `b` aligned to `S`.
pub(super) fn le_words<S: Le>(p: Packing, b: &[u8]) -> Option<&[S]> {
    if cfg!(target_endian = "little") && p == Packing::Bytes(std::mem::size_of::<S>()) {
        <[S] as zerocopy::FromBytes>::ref_from_bytes(b).ok()
    } else {
        None
    }
}

/// [`le_words`], mutable.
pub(super) fn le_words_mut<D: Le>(p: Packing, b: &mut [u8]) -> Option<&mut [D]> {
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
pub(super) struct PackNibbles<'a, D> {
    pub(super) words: &'a [D],
    pub(super) out: &'a mut [u8],
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
