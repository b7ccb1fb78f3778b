//! The one documented random stream of gpucvt: SplitMix64. Stochastic rounding over slices
//! (`gpucvt sweep`, `gpucvt verify`, `gpucvt convert`) and the random parts of samples take
//! their words from it, so that every tool reproduces the same bits from the same seed.
//!
//! ```
//! use gpucvt_core::random::{random_word, splitmix64};
//! // The i-th output of a generator seeded with s is splitmix64(s + i·γ).
//! assert_eq!(random_word(5, 0) as u64, splitmix64(5) & 0xffff_ffff);
//! ```

/// SplitMix64's increment γ (the golden ratio times 2^64).
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function applied to `x + γ`: `splitmix64(s + i·γ)` is the `i`-th
/// (0-based) output of a SplitMix64 generator seeded with `s`.
#[inline(always)]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Word `index` of the stream seeded with `stream`: the low 32 bits of the `index`-th output
/// of SplitMix64 seeded with `stream`.
pub fn random_word(stream: u64, index: u64) -> u32 {
    splitmix64(stream.wrapping_add(index.wrapping_mul(GAMMA))) as u32
}

/// Words `first, first + 1, …` of the stream seeded with `stream` into `out`:
/// `out[j] == random_word(stream, first + j)`, many at a time (compiled for AVX-512 or AVX2
/// where the CPU has them), for tools that need long runs of the stream.
///
/// ```
/// use gpucvt_core::random::{random_word, random_words};
/// let mut w = [0u32; 5];
/// random_words(9, 1 << 40, &mut w);
/// assert_eq!(w[3], random_word(9, (1 << 40) + 3));
/// ```
pub fn random_words(stream: u64, first: u64, out: &mut [u32]) {
    random_words_isa(2, stream, first, out);
}

/// [`random_words`] truncated to a narrower word: `out[j]` is the low 8 or 16 bits of
/// `random_word(stream, first + j)` (all of it for `u32`, the word zero-extended for `u64`).
/// Stochastic rounding reads only the low bits of its random value (8 for the FP8/FP6/FP4
/// forms, 13 for `f16`, 16 for `bf16`), so these are the same random values in a quarter
/// or half of the bytes, for [`crate::bulk::Kernel::convert_stochastic_words`].
///
/// ```
/// use gpucvt_core::random::{random_values, random_word};
/// let mut b = [0u8; 5];
/// random_values(9, 100, &mut b);
/// assert_eq!(b[4], random_word(9, 104) as u8);
/// ```
pub fn random_values<R: crate::bulk::Word>(stream: u64, first: u64, out: &mut [R]) {
    random_words_isa(2, stream, first, out);
}

/// [`random_values`] through the best instruction set up to `isa`
/// ([`crate::bulk::vectorized_isa`]; tests run each).
fn random_words_isa<R: crate::bulk::Word>(isa: u8, stream: u64, first: u64, out: &mut [R]) {
    crate::bulk::vectorized_isa(isa, Words { stream, first, out });
}

/// [`random_values`] as work for a loop compiled for wider vectors: the `j`-th word's
/// generator state is `stream + (first + j + 1)·γ`, so the words are independent of each
/// other.
struct Words<'a, R> {
    stream: u64,
    first: u64,
    out: &'a mut [R],
}

impl<R: crate::bulk::Word> crate::bulk::Vectorizable for Words<'_, R> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        // The state as a running sum (an induction variable the compiler steps by a vector
        // of γ multiples): one 64-bit multiplication fewer per word than `j·γ`, of the three
        // that bound this loop.
        let mut x = self.stream.wrapping_add(self.first.wrapping_mul(GAMMA));
        for o in self.out.iter_mut() {
            *o = R::from_u32(splitmix64(x) as u32);
            x = x.wrapping_add(GAMMA);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_words_are_the_stream_on_every_instruction_set() {
        // Lengths around the vector widths, starts near the wrap-around of the index and
        // of the state.
        for stream in [0u64, 7, u64::MAX, GAMMA.wrapping_neg()] {
            for first in [0u64, 1, 1 << 33, u64::MAX - 40] {
                for n in [0usize, 1, 7, 8, 15, 16, 17, 63, 100, 1025] {
                    let want: Vec<u32> = (0..n as u64)
                        .map(|j| random_word(stream, first.wrapping_add(j)))
                        .collect();
                    for isa in 0..=2 {
                        let mut got = vec![0x5a5a_5a5a; n];
                        random_words_isa(isa, stream, first, &mut got);
                        assert_eq!(got, want, "isa {isa} stream {stream:#x} first {first:#x}");
                    }
                    let mut got = vec![0; n];
                    random_words(stream, first, &mut got);
                    assert_eq!(got, want);
                    for isa in 0..=2 {
                        let mut b = vec![0x5au8; n];
                        random_words_isa(isa, stream, first, &mut b);
                        let mut h = vec![0x5a5au16; n];
                        random_words_isa(isa, stream, first, &mut h);
                        for j in 0..n {
                            assert_eq!(b[j], want[j] as u8, "isa {isa} byte {j}");
                            assert_eq!(h[j], want[j] as u16, "isa {isa} half {j}");
                        }
                    }
                }
            }
        }
    }
}
