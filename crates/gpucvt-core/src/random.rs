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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_splitmix64_at_steps_of_gamma() {
        // Independently: the generator's state after i steps is seed + i·γ, output mixed.
        let mut state = 5u64;
        for i in 0..100u64 {
            state = state.wrapping_add(GAMMA);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            assert_eq!(random_word(5, i), z as u32, "word {i}");
        }
    }
}
