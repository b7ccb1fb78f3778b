//! Whole slices converted, split over threads where the parts pay for them: one engine for
//! the front ends that convert arrays in memory (the Python package's `astype`, the C
//! library's slices), with the same kernels, widening and random words as `gpucvt convert`.

use crate::random::random_values;
use crate::{BulkError, Kernel, Strategy, Widening, Word};
use gpucvt_core::format::F32;
use gpucvt_core::round::Direction;
use gpucvt_core::{Chain, Conversion, Format};
use std::ops::Range;

/// Where stochastic rounding takes its random words.
#[derive(Clone, Copy)]
pub enum Random<'a> {
    /// Not stochastic.
    None,
    /// The caller's, one per element.
    Given(&'a [u32]),
    /// gpucvt's stream: element `i` takes `random_word(stream, i)`.
    Stream(u64),
}

/// Elements per thread below which a second thread costs more than it gains, by the cost of
/// an element (measured with `python/benchmarks/astype.py --threads`): the table and `f32`
/// kernels take a fraction of a nanosecond an element and one thread nearly fills the
/// memory bandwidth, so a thread's start and the second core's wake-up only pay off on
/// large parts; stochastic rounding draws a random word per element; the exact core takes
/// tens of nanoseconds.
const MIN_PER_THREAD_FAST: usize = 1 << 22;
const MIN_PER_THREAD_STOCHASTIC: usize = 1 << 18;
const MIN_PER_THREAD_EXACT: usize = 1 << 14;
/// At most this many threads, whatever `threads` asks (each is an OS thread).
const MAX_THREADS: usize = 256;
/// Elements converted at a time by the stochastic paths (bounds a thread's scratch memory).
const BLOCK: usize = 1 << 14;

/// A conversion ready to run over whole slices, split over threads: its kernel and, for
/// stochastic rounding of sources
/// of at most 16 bits (which the kernels' tables cannot take: each element has its own random
/// word), the way `gpucvt convert` takes too: the source widened exactly to `f32` by a table,
/// then the `f32` kernel, with the elements it cannot serve bit for bit (NaN payloads,
/// subnormals, anything the widening flags) converted by the exact core.
pub struct Bulk {
    kernel: Kernel,
    widen: Option<Widen>,
    /// A first rounding to `f32` before `kernel` (a peer's double rounding, see
    /// `gpucvt::compat`).
    first: Option<Kernel>,
}

struct Widen {
    /// The `f32` kernel of the same rounding and policy.
    kernel: Kernel,
    /// The `f32` word of each source encoding, and which go through the exact core instead.
    table: Widening,
    mask: u64,
}

impl Bulk {
    /// The bulk form of `conv`.
    pub fn new(conv: Conversion) -> Bulk {
        let stochastic = matches!(conv.rounding.direction, Direction::Stochastic { .. });
        let src = conv.src;
        let widen = (stochastic && src.width() <= 16 && src != F32).then(|| {
            let mut wide = conv;
            wide.src = F32;
            Widen {
                kernel: Kernel::new(wide),
                table: Widening::of(&src),
                mask: src.mask(),
            }
        });
        Bulk {
            kernel: Kernel::new(conv),
            widen,
            first: None,
        }
    }

    /// The conversions of `chain`, one after the other (never stochastic: the peers round
    /// to nearest).
    pub fn chained(chain: Chain) -> Bulk {
        let mut r = Bulk::new(chain.last);
        r.first = chain.first.map(Kernel::new);
        r
    }

    /// The fewest elements worth a thread of their own for this conversion.
    pub fn min_per_thread(&self) -> usize {
        let exact = |k: &Kernel| k.strategy() == Strategy::Exact;
        // The widened stochastic path runs the f32 kernel (the exact core only for the few
        // encodings it cannot serve).
        if self.widen.is_some() {
            MIN_PER_THREAD_STOCHASTIC
        } else if exact(&self.kernel) || self.first.as_ref().is_some_and(exact) {
            MIN_PER_THREAD_EXACT
        } else if matches!(
            self.kernel.conversion().rounding.direction,
            Direction::Stochastic { .. }
        ) {
            MIN_PER_THREAD_STOCHASTIC
        } else {
            MIN_PER_THREAD_FAST
        }
    }

    /// The conversion (the last step, where there are two).
    pub fn conversion(&self) -> &Conversion {
        self.kernel.conversion()
    }

    /// The source format (of the first step, where there are two).
    pub fn src(&self) -> &Format {
        let k = self.first.as_ref().unwrap_or(&self.kernel);
        &k.conversion().src
    }

    /// `src` through the first step into `f32` words, then the last step, a block at a time.
    fn twice<S: Word, D: Word>(
        &self,
        first: &Kernel,
        src: &[S],
        dst: &mut [D],
    ) -> Result<(), BulkError> {
        let mut mid = vec![0u32; BLOCK.min(src.len())];
        for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
            let m = &mut mid[..s.len()];
            first.convert(s, m)?;
            self.kernel.convert(m, d)?;
        }
        Ok(())
    }

    /// Stochastic conversion of `src` with the random words `random` (as long).
    fn stochastic<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        random: &[u32],
        wide: &mut Vec<u32>,
    ) -> Result<(), BulkError> {
        let Some(w) = &self.widen else {
            return self.kernel.convert_stochastic(src, dst, random);
        };
        wide.clear();
        wide.extend(
            src.iter()
                .map(|x| w.table.bits[(x.to_u64() & w.mask) as usize]),
        );
        w.kernel.convert_stochastic(wide, dst, random)?;
        let conv = self.kernel.conversion();
        for (i, x) in src.iter().enumerate() {
            let x = x.to_u64() & w.mask;
            if w.table.exact[x as usize] {
                let mut c = *conv;
                if let Direction::Stochastic { width, .. } = c.rounding.direction {
                    c.rounding.direction = Direction::Stochastic {
                        random: random[i] as u64,
                        width,
                    };
                }
                dst[i] = D::from_u64(c.apply(x).bits);
            }
        }
        Ok(())
    }

    /// Converts the elements `at` of the whole array (`src`, `dst`: those elements).
    fn part<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        at: Range<usize>,
        random: Random<'_>,
    ) -> Result<(), BulkError> {
        let mut wide = Vec::new();
        match random {
            Random::None => match &self.first {
                Some(first) => self.twice(first, src, dst),
                None => self.kernel.convert(src, dst),
            },
            Random::Given(words) => {
                let words = &words[at];
                for ((s, d), r) in src
                    .chunks(BLOCK)
                    .zip(dst.chunks_mut(BLOCK))
                    .zip(words.chunks(BLOCK))
                {
                    self.stochastic(s, d, r, &mut wide)?;
                }
                Ok(())
            }
            Random::Stream(stream) => {
                let mut buf = vec![0u32; BLOCK.min(src.len())];
                let mut first = at.start as u64;
                for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
                    let b = &mut buf[..s.len()];
                    random_values(stream, first, b);
                    self.stochastic(s, d, b, &mut wide)?;
                    first += s.len() as u64;
                }
                Ok(())
            }
        }
    }

    /// Converts every element, split into `threads` contiguous parts (each element's random
    /// word depends on its index only, so the split never changes a result).
    pub fn fill<S: Word, D: Word>(
        &self,
        src: &[S],
        dst: &mut [D],
        random: Random<'_>,
        threads: usize,
    ) -> Result<(), BulkError> {
        let n = src.len();
        let parts = threads
            .min(MAX_THREADS)
            .min(n / self.min_per_thread())
            .max(1);
        if parts == 1 {
            return self.part(src, dst, 0..n, random);
        }
        // Parts of a multiple of 64 elements, so that each starts on a cache line.
        let size = n.div_ceil(parts).next_multiple_of(64);
        std::thread::scope(|scope| {
            let handles: Vec<_> = src
                .chunks(size)
                .zip(dst.chunks_mut(size))
                .enumerate()
                .map(|(j, (s, d))| {
                    let at = j * size..j * size + s.len();
                    scope.spawn(move || self.part(s, d, at, random))
                })
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().map_err(|_| BulkError::Panicked)?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpucvt_core::format::{BF16, E4M3};
    use gpucvt_core::{Policy, Rounding};

    /// Splitting never changes a result: every thread count gives the one-part answer, which
    /// is the kernel's (and, for stochastic rounding of a 16-bit source, the exact core's
    /// element by element).
    #[test]
    fn parts_agree_with_one_part() {
        // Long enough for several parts of even the fast kernels (`MIN_PER_THREAD_FAST`).
        let n = 2 * MIN_PER_THREAD_FAST + 77;
        let src: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let sat = Policy {
            satfinite: true,
            ..Policy::default()
        };
        for conv in [
            Conversion::new(F32, E4M3, Rounding::RN, sat),
            Conversion::new(F32, BF16, Rounding::stochastic(0, 16), Policy::default()),
        ] {
            let b = Bulk::new(conv);
            let random = if b.min_per_thread() == MIN_PER_THREAD_FAST {
                Random::None
            } else {
                Random::Stream(7)
            };
            let mut one = vec![0u16; n];
            b.fill(&src, &mut one, random, 1).unwrap();
            for threads in [2, 3, 8] {
                let mut many = vec![0u16; n];
                b.fill(&src, &mut many, random, threads).unwrap();
                assert!(one == many, "{conv:?} {threads} threads");
            }
        }
        let halves: Vec<u16> = (0..=u16::MAX).collect();
        let conv = Conversion::new(BF16, E4M3, Rounding::stochastic(0, 8), sat);
        let b = Bulk::new(conv);
        let random: Vec<u32> = (0..halves.len() as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let mut got = vec![0u8; halves.len()];
        b.fill(&halves, &mut got, Random::Given(&random), 4)
            .unwrap();
        for (i, (&x, &g)) in halves.iter().zip(&got).enumerate() {
            let mut c = conv;
            c.rounding = Rounding::stochastic(random[i] as u64, 8);
            assert_eq!(g as u64, c.apply(x as u64).bits, "{x:#x}");
        }
    }
}
