//! The random values of stochastic rounding, in the narrowest words that hold them.

use gpucvt_kernels::{Kernel, Word};

/// The random values of a chunk of stochastic rounding: the stream's words
/// (`gpucvt_core::random`) in the narrowest word that holds the conversion's random width,
/// since the rounding reads only that many low bits (a quarter of the bytes for the 8-bit
/// widths of FP8/FP6/FP4, half for `f16` and `bf16`).
#[derive(Default)]
pub(super) struct Randoms {
    pub(super) w8: Vec<u8>,
    pub(super) w16: Vec<u16>,
    pub(super) w32: Vec<u32>,
    /// Which of them holds the chunk's values: 1, 2 or 4 bytes.
    pub(super) bytes: u8,
}

impl Randoms {
    /// The values of elements `first ..` (`n` of them) of `stream`, for a random width of
    /// `width` bits. (`random_values` writes every word: the old ones need not be cleared.)
    pub(super) fn fill(&mut self, stream: u64, first: u64, n: usize, width: u32) {
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
    pub(super) fn get(&self, i: usize) -> u32 {
        match self.bytes {
            1 => self.w8.get(i).map_or(0, |&r| r as u32),
            2 => self.w16.get(i).map_or(0, |&r| r as u32),
            _ => self.w32.get(i).copied().unwrap_or(0),
        }
    }

    /// `kernel`'s stochastic conversion of `src` into `dst` with these values.
    pub(super) fn convert<S: Word, D: Word>(
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
