//! [`Plan`]: everything needed to convert one tensor's elements, and the loop over a chunk:
//! sub-chunks in parallel, each unpacked, block-scaled, converted, packed and counted.

use crate::chunk::decode::{Decoder, FastDst};
use crate::chunk::io::{read_exact_at, with_scratch, Scratch, Source};
use crate::chunk::mx::{Blocks, FusedScaleJob, ScaleJob};
use crate::chunk::pack::{le_words, le_words_mut, pack, unpack, Le};
use crate::chunk::stats::{key_above, key_below, Counter};
use crate::chunk::{exp2i, lcm, SUB_ELEMENTS};
use crate::dtype::Packing;
use crate::{ScaleRule, Stats};
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::F32;
use gpucvt_core::round::Direction;
use gpucvt_kernels::{vectorized_up_to, InstructionSet};
use gpucvt_kernels::{Kernel, Widening};
use rayon::prelude::*;
use std::fs::File;
use zerocopy::IntoBytes;

/// How the elements are converted.
pub(super) enum Engine {
    /// A bulk kernel straight on the source words.
    Direct(Kernel),
    /// Widen the source exactly to `f32` (a no-op for `f32` sources), scale by adjusting the
    /// exponent field, and run the `f32` kernel; elements where that is not provably the same
    /// as the exact conversion (source subnormals and NaNs, scaled exponents out of the normal
    /// range) go through the exact core.
    ViaF32 {
        kernel: Kernel,
        widen: Option<Widening>,
    },
    /// The exact core, element by element.
    Exact,
}

/// Everything needed to convert the elements of one tensor.
pub(crate) struct Plan {
    pub conv: Conversion,
    pub src_pack: Packing,
    pub dst_pack: Packing,
    pub blocks: Option<Blocks>,
    /// PRNG stream of the tensor (stochastic rounding).
    pub stream: u64,
    pub(super) stochastic: bool,
    pub(super) engine: Engine,
    /// The error statistics of its chunks.
    pub(super) counter: Counter,
    /// The widest instruction set of the engine's own vectorized loops (block maxima and
    /// scaling, statistics): [`InstructionSet::Avx512`], which tests lower to run each version.
    pub(super) isa: InstructionSet,
}

impl Plan {
    pub(crate) fn new(
        conv: Conversion,
        src_pack: Packing,
        dst_pack: Packing,
        block: Option<(u64, ScaleRule)>,
        stream: u64,
    ) -> Plan {
        let stochastic = matches!(conv.rounding.direction, Direction::Stochastic { .. });
        let (src, dst) = (conv.src, conv.dst);
        let (lo, hi) = crate::chunk::stats::bounds::saturation_bounds(&conv);
        let blocks = block.map(|(size, method)| Blocks {
            size,
            method,
            elem: crate::scaling::Element::of_max(&dst),
        });
        Plan {
            isa: InstructionSet::Avx512,
            conv,
            src_pack,
            dst_pack,
            blocks,
            stream,
            stochastic,
            engine: Engine::of(conv, block.is_some(), stochastic),
            counter: Counter {
                isa: InstructionSet::Avx512,
                conv,
                blocks,
                src_dec: Decoder::new(&src),
                dst_dec: Decoder::new(&dst),
                fast: FastDst::of(&src, &dst),
                thresholds: match block {
                    Some(_) => block_thresholds(lo, hi),
                    None => Box::new([]),
                },
                lo,
                hi,
            },
        }
    }

    /// The plan with its vectorized loops limited to `isa` (tests run each version).
    #[cfg(test)]
    pub(super) fn with_isa(mut self, isa: InstructionSet) -> Plan {
        self.isa = isa;
        self.counter.isa = isa;
        self
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

    pub(super) fn convert_source(
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

    pub(super) fn chunk<S: Le, D: Le>(
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

    pub(super) fn sub_chunk<S: Le, D: Le>(
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
    pub(super) fn check_containers<S: Le>(&self, src: &[S], first: u64) -> std::io::Result<()> {
        let f = self.conv.src;
        let container = match self.src_pack {
            Packing::Bytes(b) => 8 * b as u32,
            _ => return Ok(()),
        };
        if f.width() >= container {
            return Ok(());
        }
        gpucvt_kernels::check_encodings(&f, src, first)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
    }

    /// Converts the words `src` into `dst` (as long), the first element having index `first`
    /// in the tensor; returns the statistics and the block scales.
    pub(super) fn convert_words<S: Le, D: Le>(
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
        let bsize = self.blocks.map_or(n.max(1), |b| b.size as usize);
        // The words of an `f32` source (always 4-byte words), for the vectorized passes.
        let words = match self.counter.src_dec {
            Decoder::F32 => <[u32] as zerocopy::FromBytes>::ref_from_bytes(src.as_bytes()).ok(),
            _ => None,
        };
        let mut scales = Vec::new();
        let fused = self.block_scales(sc, src, words, bsize, &mut scales);
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
        let stats = self.counter.stats(src, dst, &sc.ks, &scales, bsize);
        (stats, scales)
    }

    /// The block scales of the elements `src` (`words`: the same as `f32` words, for an
    /// `f32` source) appended to `scales`, and in `sc.ks` the exponent k each block's elements
    /// are multiplied by (2^k; one 0 without blocks). Returns whether the scaled `f32` words
    /// and the elements needing the exact core are in `sc.tmp` and `sc.exact` too: `f32`
    /// sources into formats reached through `f32` words, with block scales, get the scales
    /// and the scaled words in one pass ([`FusedScaleJob`]).
    fn block_scales<S: Le, D: Le>(
        &self,
        sc: &mut Scratch<S, D>,
        src: &[S],
        words: Option<&[u32]>,
        bsize: usize,
        scales: &mut Vec<u8>,
    ) -> bool {
        let n = src.len();
        sc.ks.clear();
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
                        scales,
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
                Some(w) => b.scales_f32(self.isa, w, bsize, scales, &mut sc.ks, &mut sc.amax),
                None => {
                    for blk in src.chunks(bsize) {
                        let (byte, k) = b.scale_of(&self.counter.src_dec, blk);
                        scales.push(byte);
                        sc.ks.push(k);
                    }
                }
            }
        } else {
            sc.ks.push(0);
        }
        fused
    }

    pub(super) fn exact(&self, x: u64, k: i32, random: u32) -> u64 {
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
}

impl Engine {
    /// The engine of `conv`: through `f32` words where elements are block-scaled, or
    /// stochastically rounded from at most 16 bits, and the source widens to `f32` words
    /// (the exact core where it does not); else the bulk kernel directly.
    fn of(conv: Conversion, blocks: bool, stochastic: bool) -> Engine {
        let src = conv.src;
        let via = blocks || (stochastic && src.width() <= 16);
        if via && (src == F32 || src.width() <= 16) {
            let mut unscaled = conv;
            unscaled.src = F32;
            unscaled.policy.scale = 0;
            Engine::ViaF32 {
                kernel: Kernel::new(unscaled),
                widen: (src != F32).then(|| Widening::of(&src)),
            }
        } else if via {
            Engine::Exact
        } else {
            Engine::Direct(Kernel::new(conv))
        }
    }
}

/// The range thresholds ([`Plan::block_thresholds`]) of the block exponents −127..=127.
fn block_thresholds(lo: f64, hi: f64) -> Box<[(i32, i32)]> {
    (-127..=127)
        .map(|k| {
            let down = exp2i(-k);
            (key_below(lo * down), key_above(hi * down))
        })
        .collect()
}
