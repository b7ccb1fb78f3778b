//! Long runs of gpucvt's random stream ([`gpucvt_core::random`]), many words at a time.

use crate::isa::{vectorized_isa, InstructionSet, Vectorizable};
use crate::Word;
#[cfg(test)]
use gpucvt_core::random::random_word;
use gpucvt_core::random::{splitmix64, GAMMA};

/// Words `first, first + 1, …` of the stream seeded with `stream` into `out`:
/// `out[j] == random_word(stream, first + j)`, many at a time (compiled for AVX-512 or AVX2
/// where the CPU has them), for tools that need long runs of the stream.
///
/// ```
/// use gpucvt_core::random::random_word;
/// use gpucvt_kernels::random::random_words;
/// let mut w = [0u32; 5];
/// random_words(9, 1 << 40, &mut w);
/// assert_eq!(w[3], random_word(9, (1 << 40) + 3));
/// ```
pub fn random_words(stream: u64, first: u64, out: &mut [u32]) {
    random_words_isa(InstructionSet::Avx512, stream, first, out);
}

/// [`random_words`] truncated to a narrower word: `out[j]` is the low 8 or 16 bits of
/// `random_word(stream, first + j)` (all of it for `u32`, the word zero-extended for `u64`).
/// Stochastic rounding reads only the low bits of its random value (8 for the FP8/FP6/FP4
/// forms, 13 for `f16`, 16 for `bf16`), so these are the same random values in a quarter
/// or half of the bytes, for [`crate::Kernel::convert_stochastic_words`].
///
/// ```
/// use gpucvt_core::random::random_word;
/// use gpucvt_kernels::random::random_values;
/// let mut b = [0u8; 5];
/// random_values(9, 100, &mut b);
/// assert_eq!(b[4], random_word(9, 104) as u8);
/// ```
pub fn random_values<R: Word>(stream: u64, first: u64, out: &mut [R]) {
    random_words_isa(InstructionSet::Avx512, stream, first, out);
}

/// [`random_values`] through the best instruction set up to `isa`
/// ([`crate::isa::vectorized_isa`]; tests run each).
fn random_words_isa<R: Word>(isa: InstructionSet, stream: u64, first: u64, out: &mut [R]) {
    vectorized_isa(isa, Words { stream, first, out });
}

/// [`random_values`] as work for a loop compiled for wider vectors: the `j`-th word's
/// generator state is `stream + (first + j + 1)·γ`, so the words are independent of each
/// other.
struct Words<'a, R> {
    stream: u64,
    first: u64,
    out: &'a mut [R],
}

impl<R: Word> Vectorizable for Words<'_, R> {
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
                    for isa in InstructionSet::ALL {
                        let mut got = vec![0x5a5a_5a5a; n];
                        random_words_isa(isa, stream, first, &mut got);
                        assert_eq!(got, want, "isa {isa} stream {stream:#x} first {first:#x}");
                    }
                    let mut got = vec![0; n];
                    random_words(stream, first, &mut got);
                    assert_eq!(got, want);
                    for isa in InstructionSet::ALL {
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
