//! The order in which a kernel walks a long slice.

use crate::Word;

/// The index ranges of a slice of `n` elements from words `S` into words `D` in the order a
/// kernel converts them: for `n` of at least [`INTERLEAVE_MIN`], two streams, the first half
/// and the second, a tile of [`INTERLEAVE_TILE`] elements of each in turn (and the second
/// half's last, shorter part at the end); else, and for results as wide as their inputs
/// (`f32` → tf32 or a 32-bit integer), `0..n` at once.
///
/// Why: a conversion that streams from memory is bound by how far ahead the hardware
/// prefetcher fetches, which it does per stream, and a kernel of ~20 instructions per 16
/// elements keeps fewer loads in flight than a plain shift loop's ~3; two streams give the
/// prefetcher twice the reach. Results as wide as their inputs already move twice the bytes
/// per element, and four streams (two read, two written) slowed their near-roofline
/// kernels instead, hence the exception for full-width results.
/// In cache (1 Mi elements) the split does not help, hence the threshold.
pub(crate) fn streams_for<S: Word, D: Word>(
    n: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let min = if D::BITS >= S::BITS {
        usize::MAX
    } else {
        INTERLEAVE_MIN
    };
    two_streams_of(n, min, INTERLEAVE_TILE)
}

/// [`streams_for`]'s ranges with the threshold `min` and the tile `tile`.
pub(crate) fn two_streams_of(
    n: usize,
    min: usize,
    tile: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let half = if n < min { 0 } else { n / 2 / tile * tile };
    (0..half)
        .step_by(tile.max(1))
        .flat_map(move |i| [i..i + tile, half + i..half + i + tile])
        .chain(std::iter::once(2 * half..n))
}

/// Slices of at least this many elements (16 MiB of `f32`, beyond the caches of one core)
/// are converted as two streams ([`streams_for`]). The unit tests use a low threshold, so
/// that their slices of 2^12 elements and more (the exhaustive ones among them) go through
/// the two streams.
const INTERLEAVE_MIN: usize = if cfg!(test) { 1 << 12 } else { 1 << 22 };

/// Elements per tile of the two streams (2 KiB of `f32`: half a page).
const INTERLEAVE_TILE: usize = 512;
