//! What each modelled AMD instruction computes, as core conversions (CDNA4 ISA text, cited
//! by line; gfx942 and gfx1200/1201 as the note `amd.md` sources them).
//!
//! | rule | where |
//! | --- | --- |
//! | f32 → fp8/bf8 rounds to nearest even whatever MODE's round bits say | pseudocode sets RNE, L13215 ff. |
//! | overflow is judged after rounding (448 + ½ ulp ties to 448 in e4m3) | table L2739–2745 "greater than max" of the rounded value; rocJITsu |
//! | FP16_OVFL = 0: NaN → NaN, ±∞ and overflow → NaN (fp8) / ±∞ (bf8) | table L2739–2745 |
//! | FP16_OVFL = 1: ±∞ and overflow → ±max (reading `KeepInf`: only overflow) | table; L613 |
//! | OCP NaN byte 0x7f with the sign kept (reading `SignedQuiet`: e5m2 0x7e) | rocJITsu, HIP |
//! | FNUZ: NaN, and overflow with FP16_OVFL = 0, give 0x80; every zero 0x00 | rocJITsu; the format |
//! | `v_cvt_pk_*`: src0 → low byte, src1 → high byte of the half `OPSEL[3]` picks; the other half kept | L13218–13224 |
//! | `v_cvt_sr_*`: `OPSEL[3:2]` (gfx12 `byte_sel`) picks the byte; the other 24 bits kept | L2723–2727 |
//! | `v_cvt_sr_*` seed: `seed[31:12]` (fp8) / `seed[31:11]` (bf8) added, then truncated | L13245 ff., L2699 |
//! | fp8/bf8 → f32 exact; byte by SDWA `src0_sel` (gfx9) or `byte_sel` (gfx12) | L7469 ff. |
//! | `v_cvt_pk_f32_*`: the half by SDWA `WORD_1` (gfx9) or `op_sel:[1,0]` (gfx12) | L7501 ff. |
//! | `v_cvt_pk_bf16_f32`: RNE, src0 → low half, NaN quieted | L12890 ff.; LLVM's lowering |
//! | `v_prng_b32`: `(s << 1) ^ (s[31] ? 197 : 0)` | L7521 ff. |
//! | neg/abs act on the sign bit of the f32 source, abs first | VOP3 source modifiers |
//!
//! The stochastic rounding of the default reading ([`SrReading::Prose`]) is the core's
//! [`Direction::Stochastic`](gpucvt_core::round::Direction::Stochastic) with the seed's high
//! `23 − m` bits as the random word: the core adds the discarded part of the value, as a
//! fraction of the gap truncated to that many bits, which is exactly the f32 significand's
//! low bits after alignment to the destination's smallest normal exponent, shifted-out bits
//! lost. The tests check this against a transcription of the ISA's bit-level description.
//!
//! ```
//! use gpucvt::amd::eval::to_small;
//! use gpucvt::amd::types::{Mode, Readings, Small, Target};
//! let r = Readings::default();
//! // 248 → e4m3fnuz: ties up to 256, beyond 240: NaN (0x80), or 240 with FP16_OVFL.
//! assert_eq!(to_small(248f32.to_bits(), Small::Fp8, Target::Gfx942, Mode::default(), r).bits, 0x80);
//! assert_eq!(to_small(248f32.to_bits(), Small::Fp8, Target::Gfx942, Mode::FP16_OVFL, r).bits, 0x7f);
//! ```

use super::check::{Form, Source};
use super::parse::OperandKind;
use super::types::{InfReading, Mode, NanReading, Readings, Shape, Small, SrReading, Target};
use crate::core::convert::{Conversion, NanResult, Outcome, Overflow, Policy};
use crate::core::format::{self, Format, Layout};
use crate::core::round::Rounding;
use crate::error::Error;
use crate::instr::{Lane, Output};

/// The policy of f32 → the fp8/bf8 formats of `target` under `mode`.
pub fn small_policy(target: Target, mode: Mode, readings: Readings) -> Policy {
    // Overflow is judged on the rounded value for every rounding, stochastic included
    // (the table L2739–2745; rocJITsu: SR of 500 gives NaN for every seed).
    let mut p = Policy {
        overflow: Overflow::Infinite,
        ..Policy::default()
    };
    if !target.fnuz() {
        p.nan = match readings.nan {
            NanReading::SignedAllOnes => NanResult::SignedCanonical,
            NanReading::SignedQuiet => NanResult::SignedQuiet,
        };
    }
    if mode.fp16_ovfl() {
        match readings.inf {
            InfReading::Table => p.satfinite = true,
            InfReading::KeepInf => p.overflow = Overflow::Saturate,
        }
    }
    p
}

/// The conversion f32 → `small` on `target` with rounding `r`.
pub fn small_conversion(
    small: Small,
    target: Target,
    mode: Mode,
    readings: Readings,
    r: Rounding,
) -> Conversion {
    Conversion::new(
        format::F32,
        small.format(target),
        r,
        small_policy(target, mode, readings),
    )
}

/// f32 bits → one fp8/bf8 byte, round to nearest even (`v_cvt_pk_*`).
pub fn to_small(x: u32, small: Small, target: Target, mode: Mode, readings: Readings) -> Outcome {
    small_conversion(small, target, mode, readings, Rounding::RN).apply(x as u64)
}

/// How many f32 mantissa bits an 8-bit destination drops: the seed bits an SR conversion uses.
fn dropped_bits(dst: &Format) -> u32 {
    match dst.layout {
        Layout::Float(l) => 23 - l.man_bits,
        Layout::Fixed(_) => unreachable!("fp8/bf8 are floats"),
    }
}

/// The conversion and input of `v_cvt_sr_*` for f32 bits `x` and `seed` under `reading`:
/// what [`stochastic`] applies.
pub fn stochastic_plan(
    x: u32,
    seed: u32,
    small: Small,
    target: Target,
    mode: Mode,
    readings: Readings,
) -> (Conversion, u32) {
    let dst = small.format(target);
    let w = dropped_bits(&dst);
    let high = seed >> (32 - w);
    match readings.sr {
        SrReading::Prose => (
            small_conversion(
                small,
                target,
                mode,
                readings,
                Rounding::stochastic(high as u64, w),
            ),
            x,
        ),
        SrReading::HostLowBits => {
            let low = seed & ((1 << w) - 1);
            (
                small_conversion(
                    small,
                    target,
                    mode,
                    readings,
                    Rounding::stochastic(low as u64, w),
                ),
                x,
            )
        }
        SrReading::Pseudocode => {
            // The mantissa field plus the seed bits, modulo 2^23, the sign and exponent
            // fields unchanged; then round to nearest even.
            let m = (x & 0x7f_ffff).wrapping_add(high) & 0x7f_ffff;
            (
                small_conversion(small, target, mode, readings, Rounding::RN),
                (x & !0x7f_ffff) | m,
            )
        }
    }
}

/// f32 bits → one fp8/bf8 byte with stochastic rounding (`v_cvt_sr_*`).
pub fn stochastic(
    x: u32,
    seed: u32,
    small: Small,
    target: Target,
    mode: Mode,
    readings: Readings,
) -> Outcome {
    let (c, input) = stochastic_plan(x, seed, small, target, mode, readings);
    c.apply(input as u64)
}

/// The conversion fp8/bf8 → f32 (exact; a NaN becomes the quiet f32 NaN of its sign, which
/// the ISA does not pin down: an open question for silicon).
pub fn widen_conversion(small: Small, target: Target) -> Conversion {
    Conversion::new(
        small.format(target),
        format::F32,
        Rounding::RN,
        Policy {
            nan: NanResult::SignedQuiet,
            ..Policy::default()
        },
    )
}

/// f32 → bf16 of `v_cvt_pk_bf16_f32`: round to nearest even, NaN quieted with its payload.
pub fn bf16_conversion() -> Conversion {
    Conversion::new(
        format::F32,
        format::BF16,
        Rounding::RN,
        Policy {
            nan: NanResult::Quieted,
            ..Policy::default()
        },
    )
}

/// `v_prng_b32`: one step of the 32-bit LFSR.
///
/// ```
/// use gpucvt::amd::eval::prng;
/// assert_eq!((prng(1), prng(0), prng(0x8000_0000)), (2, 0, 197));
/// ```
pub fn prng(s: u32) -> u32 {
    (s << 1) ^ if s >> 31 == 1 { 197 } else { 0 }
}

/// The state and readings an instruction is evaluated under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// The MODE register.
    pub mode: Mode,
    /// The named readings.
    pub readings: Readings,
    /// The destination register's value before the instruction (what a partial write keeps;
    /// for a register pair, the low register in the low 32 bits).
    pub old: u64,
}

/// The source operand values: `registers` for the register operands in order, constants from
/// the text; each with its neg/abs applied.
fn source_values(form: &Form, registers: &[u64]) -> Result<Vec<u32>, Error> {
    let wanted = form.sources.iter().filter(|s| s.kind.is_register()).count();
    if registers.len() != wanted {
        return Err(Error::Operand {
            message: format!(
                "{} takes {wanted} register source operand(s), got {}",
                form.opcode,
                registers.len()
            ),
        });
    }
    let mut regs = registers.iter();
    form.sources
        .iter()
        .enumerate()
        .map(|(i, s): (usize, &Source)| {
            let raw = match s.kind {
                OperandKind::Constant { bits, .. } => bits,
                _ => {
                    let v = *regs.next().unwrap_or(&0);
                    u32::try_from(v).map_err(|_| Error::Operand {
                        message: format!("source {i} = {v:#x} does not fit in 32 bits"),
                    })?
                }
            };
            let a = if s.abs { raw & 0x7fff_ffff } else { raw };
            Ok(if s.neg { a ^ 0x8000_0000 } else { a })
        })
        .collect()
}

fn lane(conversion: Conversion, input: u64, out: Outcome, shift: u32) -> Lane {
    Lane {
        input,
        conversions: vec![conversion],
        bits: out.bits,
        shift,
        flags: out.flags,
    }
}

/// A part of the old destination that the instruction keeps, as a lane of `bits` bits.
fn kept(old: u64, shift: u32, bits: u32) -> Lane {
    let f = if bits == 8 { format::U8 } else { format::U16 };
    let v = (old >> shift) & ((1 << bits) - 1);
    Lane {
        input: v,
        conversions: vec![Conversion::new(f, f, Rounding::RZ, Policy::default())],
        bits: v,
        shift,
        flags: Default::default(),
    }
}

/// Evaluates a checked form on its register source values.
///
/// # Errors
/// A wrong number of register operands, or one wider than 32 bits.
pub fn evaluate(form: &Form, registers: &[u64], state: &State) -> Result<Output, Error> {
    let src = source_values(form, registers)?;
    let t = form.target;
    let (mode, readings) = (state.mode, state.readings);
    let old = state.old & 0xffff_ffff;
    let mut lanes = Vec::new();
    match form.opcode.shape() {
        Shape::Pack8(small) => {
            let c = small_conversion(small, t, mode, readings, Rounding::RN);
            let base = 16 * form.select;
            let lo = c.apply(src[0] as u64);
            let hi = c.apply(src[1] as u64);
            if form.select == 0 {
                lanes.push(kept(old, 16, 16));
            }
            lanes.push(lane(c, src[1] as u64, hi, base + 8));
            lanes.push(lane(c, src[0] as u64, lo, base));
            if form.select == 1 {
                lanes.push(kept(old, 0, 16));
            }
        }
        Shape::Stochastic8(small) => {
            let (c, input) = stochastic_plan(src[0], src[1], small, t, mode, readings);
            let out = c.apply(input as u64);
            for byte in (0..4).rev() {
                if byte == form.select {
                    lanes.push(lane(c, input as u64, out, 8 * byte));
                } else {
                    lanes.push(kept(old, 8 * byte, 8));
                }
            }
        }
        Shape::Widen8(small) => {
            let c = widen_conversion(small, t);
            let b = (src[0] >> (8 * form.select)) & 0xff;
            lanes.push(lane(c, b as u64, c.apply(b as u64), 0));
        }
        Shape::WidenPair8(small) => {
            let c = widen_conversion(small, t);
            let half = src[0] >> (16 * form.select);
            let (lo, hi) = (half & 0xff, (half >> 8) & 0xff);
            lanes.push(lane(c, hi as u64, c.apply(hi as u64), 32));
            lanes.push(lane(c, lo as u64, c.apply(lo as u64), 0));
        }
        Shape::PackBf16 => {
            let c = bf16_conversion();
            lanes.push(lane(c, src[1] as u64, c.apply(src[1] as u64), 16));
            lanes.push(lane(c, src[0] as u64, c.apply(src[0] as u64), 0));
        }
        Shape::Prng => {
            let c = Conversion::new(format::U32, format::U32, Rounding::RZ, Policy::default());
            let v = prng(src[0]) as u64;
            lanes.push(Lane {
                input: src[0] as u64,
                conversions: vec![c],
                bits: v,
                shift: 0,
                flags: Default::default(),
            });
        }
    }
    let bits = lanes.iter().fold(0u64, |acc, l| acc | l.bits << l.shift);
    Ok(Output {
        bits,
        width: form.opcode.destination_bits(),
        lanes,
    })
}
