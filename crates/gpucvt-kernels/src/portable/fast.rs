//! `f32` → small float, specialised at compile time.
//!
//! The same conversion as [`super::small`], but with the destination format, the rounding
//! direction and the policy as compile-time constants: `elem::<F, M, SF, KN, W>` is
//! monomorphised per (format, mode, policy) so that every field of the format becomes an
//! immediate and every policy test folds away; stochastic rounding has an instance whose random
//! width `W` is the format's PTX width (`Fmt::RS_WIDTH`) and one that reads the width at run
//! time. The kernel picks one instance per slice ([`crate::Kernel::new`], through `crate::plan`); conversions outside
//! the instantiated set go through the run-time-parameterised kernel of `small.rs`.
//!
//! Round-to-nearest-even into the formats with a narrower exponent range than `f32` is one
//! floating-point addition whose addend's unit in the last place is the destination's grid
//! step at the input and whose sum holds the encoding, normal and subnormal results alike
//! ([`mag_rn`]). The other deterministic roundings are an add-then-shift on the `f32` bit
//! pattern (the increment for the direction is added below the destination's last mantissa
//! bit, then the pattern is shifted and re-biased; a carry into the exponent is the right
//! result). Results below the destination's smallest normal use a second path: for
//! round-toward-zero a scaled floor, for the other directions a per-lane variable shift.
//! Stochastic rounding truncates the magnitude to `w` bits below the destination's grid step
//! (a shift of the pattern, or per-lane of the significand below the smallest normal), adds
//! the random bits and shifts them out, in integer operations only. Formats with the `f32`
//! exponent range (`bf16`, `tf32`) need no second path. (`isa/` takes some of these
//! conversions to the CPU's own instructions where it has them, with tables built here:
//! [`byte_tables`].)
//!
//! The exact core is the reference: `tests.rs` compares every instance with it.

use super::small::{RM, RN, RNA, RP, RS, RZ};
pub(crate) use super::spec::{Fmt, Spec};

/// The run-time part of a specialised kernel: the policies that cost a select or two.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Knobs {
    /// The random values' width (`RS`; 1 ..= 23 − man bits).
    pub(crate) w: u32,
    /// Inputs whose magnitude pattern is below this are flushed to zero: `0x0080_0000` for
    /// `.ftz`, else 0.
    pub(crate) ftz_below: u32,
    /// All ones for `.relu`, else 0.
    pub(crate) relu: u32,
}

/// Input `x` with `.ftz` and `.relu` of `k` applied, as [`elem`] applies them: a magnitude
/// below `k.ftz_below` flushed to zero of the same sign, then with `.relu` a negative input
/// that is not a NaN (−0 to −∞: at most `0xff80_0000` as a signed number) made +0. [`elem`]
/// without the knobs then gives for it what it gives for `x` with them, so the kernels
/// without the knobs serve the forms that have them (`isa/mod.rs`: `knobs_first`).
#[inline(always)]
pub(crate) fn with_knobs(x: u32, k: Knobs) -> u32 {
    let flush = ((x & 0x7fff_ffff) < k.ftz_below) as u32;
    let x = x & !(flush.wrapping_neg() & 0x7fff_ffff);
    let negative = ((x as i32) <= 0xff80_0000u32 as i32) as u32;
    x & !(negative.wrapping_neg() & k.relu)
}

/// Converts one `f32` bit pattern into the full encoding of format `F::SPEC`, rounding in
/// direction `M`, with `.satfinite` if `SF`, applying `.relu` and `.ftz` from `k` only if `KN`
/// (without, they cost nothing). `r` is the random value for `RS`, of width `W` (`1 ..=
/// 23 − man bits`), or of width `k.w` if `W` is 0.
#[inline(always)]
pub(crate) fn elem<F: Fmt, const M: u8, const SF: bool, const KN: bool, const W: u32>(
    x: u32,
    r: u32,
    k: Knobs,
) -> u32 {
    let sp = const { F::SPEC };
    let w = if W != 0 { W } else { k.w };
    // Bits of an `f32` significand below the destination's grid step, for normal results.
    let s = const { 23 - F::SPEC.man };
    // Biased `f32` exponent of the destination's smallest normal, and its bit pattern.
    let e0 = const { (128 - F::SPEC.bias) as u32 };
    let min_norm = e0 << 23;
    // Re-biasing, in encoding units.
    let off = const { ((127 - F::SPEC.bias) as u32) << F::SPEC.man };

    let mut abs = x & 0x7fff_ffff;
    if KN && abs < k.ftz_below {
        abs = 0;
    }
    let neg = (x as i32) < 0;
    // All ones where `.relu` makes the result +0.
    let relu_zero = if KN {
        ((x as i32) >> 31) as u32 & k.relu
    } else {
        0
    };

    // Round to nearest into a format narrower than f32's exponent range: one addition
    // (`mag_rn`), which also clamps the magnitude, so the overflow step below does not.
    let one_addition = M == RN && sp.bias != 127;
    let mag = if M == RS {
        // Stochastic rounding: the magnitude in units of the grid step `2^-w` apart, `t`
        // (truncated), plus the random bits, shifted right by `w`: the discarded bits plus
        // the random bits carry out of the grid step exactly when the rounding goes away
        // from zero. Normal results take `t` from the `f32` pattern (re-biased in advance:
        // the shift by `w` then gives the encoding); results below the smallest normal from
        // the significand with its leading one, shifted right per lane (by 32 or more: 0,
        // as for `f32` subnormals). Integer operations only, and one select.
        let tn = (abs >> (s - w)).wrapping_sub(off << w);
        let t = if sp.bias != 127 {
            let m24 = (abs & 0x007f_ffff) | 0x0080_0000;
            let sh = (s - w + e0).wrapping_sub(abs >> 23);
            let ts = m24.checked_shr(sh).unwrap_or(0);
            if abs < min_norm {
                ts
            } else {
                tn
            }
        } else {
            tn
        };
        t.wrapping_add(r & ((1u32 << w) - 1)) >> w
    } else if one_addition {
        mag_rn::<F, SF>(abs)
    } else {
        mag_det::<F, M>(abs, neg)
    };

    // Overflow, infinities and NaNs (as signed compares: every magnitude is below 2^31).
    let max = sp.max_enc;
    let is_nan = abs > 0x7f80_0000;
    let mut nan_out = is_nan;
    let finite_only = !sp.has_inf && !sp.has_nan;
    let mag = if SF || finite_only {
        if one_addition {
            mag
        } else {
            (mag as i32).min(max as i32) as u32
        }
    } else if matches!(M, RN | RNA) && sp.has_inf && sp.inf_enc == max + 1 {
        if one_addition {
            mag
        } else {
            (mag as i32).min(sp.inf_enc as i32) as u32
        }
    } else if M == RZ && sp.bias == 127 && sp.has_inf && sp.inf_enc == max + 1 {
        // Truncation in the `f32` exponent range (bf16, tf32): a finite magnitude stays at
        // most the largest finite encoding, infinity gives the infinity encoding (and NaN is
        // selected below): nothing to clamp.
        mag
    } else if M == RS && sp.has_inf && sp.inf_enc == max + 1 {
        // Overflows go to infinity where the rounding went up, else to the largest finite
        // value: `mag` less the excess of the truncated magnitude `lo` over the largest
        // finite value (the truncation of infinity counted as one step below it, so that it
        // stays infinite). Below the smallest normal `lo` is under `off + 2^man`, no excess.
        let lo = (abs.min(0x7f7f_ffff) >> s) as i32;
        let excess = (lo - (max + off) as i32).max(0);
        (mag as i32 - excess) as u32
    } else {
        let to_inf = match M {
            RN | RNA => true,
            RZ => false,
            RP => !neg,
            RM => neg,
            // Rounded up (only read where `mag` overflows: normal results).
            _ => mag.wrapping_add(off) != abs >> s,
        };
        let over = (mag as i32) > max as i32;
        let inf_lane = (over & to_inf) | (abs == 0x7f80_0000);
        if sp.has_inf {
            if inf_lane {
                sp.inf_enc
            } else {
                (mag as i32).min(max as i32) as u32
            }
        } else {
            // No infinity: what would be one is NaN (unless `.relu` makes it +0).
            nan_out |= inf_lane & (relu_zero == 0);
            (mag as i32).min(max as i32) as u32
        }
    };
    if M == RS && const { simple_nan(&F::SPEC, SF) } {
        // NaN results only from NaN inputs: the NaN magnitude is selected before the sign,
        // which (as `.relu`) applies to negative non-NaN inputs only: below `0xff80_0001` as
        // a signed number.
        let neg_num = (x as i32) < 0xff80_0001u32 as i32;
        let mag = if is_nan { sp.nan_full >> sp.pad } else { mag };
        let sign = if sp.signed && neg_num {
            1 << sp.sign_pos
        } else {
            0
        };
        let relu_zero = if KN && neg_num { k.relu } else { 0 };
        return ((mag << sp.pad) | sign) & !relu_zero;
    }
    let sign = if sp.signed {
        (x >> 31) << sp.sign_pos
    } else {
        0
    };
    // `.relu`: every negative non-NaN result is +0.
    let full = ((mag << sp.pad) | sign) & !relu_zero;
    if nan_out {
        sp.nan_full
    } else {
        full
    }
}

/// The knobs of the element function when it builds `isa/avx512.rs`'s tables: no `.relu`, no
/// `.ftz` (the random width is not read).
const TABLE_KNOBS: Knobs = Knobs {
    w: 1,
    ftz_below: 0,
    relu: 0,
};

/// The `f32` bit pattern of the `f16` of bit pattern `h`, by the exact core (f16 → f32 is
/// exact).
fn f16_as_f32(h: u32) -> u32 {
    let widen = gpucvt_core::Conversion::new(
        gpucvt_core::format::F16,
        gpucvt_core::format::F32,
        gpucvt_core::Rounding::RN,
        gpucvt_core::Policy::default(),
    );
    widen.apply(u64::from(h)).bits as u32
}

/// The tables of `isa/avx512.rs`'s byte-table kernel for format `F::SPEC` (one of the 8-, 6- and
/// 4-bit formats), rounding `M` (toward zero or to nearest even), with `.satfinite` if `SF`.
/// The kernel converts each input toward zero into f16 (to nearest: with a sticky bit, round
/// to odd, bit 0 of the f16 set where the conversion was inexact), and the result is a
/// function of that f16's high byte without the sign (`i`, the row: 128 rows, repeated in
/// the upper half of each table, whose index bit 7 is the sign) and its low byte (`lo`):
/// `base[i]`, plus one where `lo > limit[i]`, plus one more where `lo > second[i]` (0xff:
/// never). A format with three significand bits has the third in `lo`, so a row can go up
/// (once toward zero, twice to nearest). `base[i]` has the format's sign bit set where a
/// negative input takes the same code with the sign, so that the kernel applies the sign by
/// one `vpternlogd`; NaNs that `vcvtps2ph` makes are quiet (bit 9 set), so rows 0x7e and
/// 0x7f are NaN's and infinity's row 0x7c has the one entry.
///
/// Toward zero, f16's grid refines each of these formats' at every magnitude and its range
/// covers theirs: truncating twice is truncating once. To nearest, round to odd into a
/// format with at least two more significand bits at every magnitude, then to nearest, is
/// rounding to nearest once: f16's significand has 10 bits against these formats' 3 at
/// most; but where f16 is subnormal (below 2^-14) the sticky bit may be missing, which
/// matters only to formats with midpoints there (e5m2, whose subnormals are f16's) and only
/// where the low byte is 0x80 (a midpoint, where only the bits below decide): the kernel
/// sends a group with such an element to the portable kernel (`subnormal_midpoints`). The
/// entries come from this module's element function for an f32 of each f16 pattern, and for
/// an inexact f32 that gives the same f16 (to nearest, with bit 0 set: just above the
/// pattern below it; toward zero: just above the pattern), which must give the same result;
/// `None` if some row does not fit the scheme (a jump other than +1, one step too many, a
/// sign other than the marked one): then the kernel is not used.
pub(crate) fn byte_tables<F: Fmt, const M: u8, const SF: bool>() -> Option<ByteTables> {
    let sp = const { F::SPEC };
    let odd = M == RN;
    if !(odd || M == RZ) {
        return None;
    }
    let subnormal_midpoints = byte_subnormal_midpoints(&sp, odd);
    let sign = 1u32 << sp.sign_pos;
    let (k, f32_of) = (TABLE_KNOBS, f16_as_f32);
    let (infinity, quiet) = (0x7c, 0x7e);
    // (The kernel looks up this many limits, a constant: no row may rise more often.)
    let steps = byte_steps(&sp, odd) as u32;
    let (mut base, mut limit, mut second) = ([0u8; 256], [0u8; 256], [0xffu8; 256]);
    for i in 0..128u32 {
        let last = match i {
            0x7c => 0,
            0x7d => continue,
            _ => 0xff,
        };
        let (mut ups, mut row_base, mut row_sign, mut level) = ([None; 2], 0, false, 0);
        for lo in 0..=last {
            let h = i << 8 | lo;
            let mut inputs = vec![f32_of(h)];
            if i < infinity && odd && lo & 1 == 1 {
                inputs.push(f32_of(h - 1) + 1);
            } else if i < infinity && !odd {
                inputs.push(f32_of(h) + 1);
            }
            let results: Vec<(u32, u32)> = inputs
                .iter()
                .map(|&x| {
                    (
                        elem::<F, M, SF, false, 0>(x, 0, k),
                        elem::<F, M, SF, false, 0>(x | 0x8000_0000, 0, k),
                    )
                })
                .collect();
            let (pos, neg) = results[0];
            if results.iter().any(|&r| r != (pos, neg)) || pos & sign != 0 || pos > 0xff {
                return None;
            }
            let signed = neg == pos | sign;
            if !signed && neg != pos {
                return None;
            }
            if lo == 0 {
                (row_base, row_sign) = (pos, signed);
            }
            // The results of a row rise one at a time, `steps` times at most.
            let now = match pos.checked_sub(row_base) {
                Some(d) if d <= steps => d as usize,
                _ => return None,
            };
            if signed != row_sign || now < level || now > level + 1 {
                return None;
            }
            if now > level {
                ups[level] = Some(lo);
                level = now;
            }
        }
        base[i as usize] = (if row_sign { row_base | sign } else { row_base }) as u8;
        let limit_of = |up: Option<u32>| up.map_or(0xff, |lo| (lo - 1) as u8);
        (limit[i as usize], second[i as usize]) = (limit_of(ups[0]), limit_of(ups[1]));
    }
    // Row 0x7d, which no f16 of the kernel reaches, as NaN's.
    (base[0x7d], limit[0x7d]) = (base[quiet], 0xff);
    for t in [&mut base, &mut limit, &mut second] {
        let half = *t;
        t[128..].copy_from_slice(&half[..128]);
    }
    let used = |t: &[u8; 256]| t.iter().any(|&l| l != 0xff);
    Some(ByteTables {
        base,
        limit,
        second,
        steps: used(&limit) as u8 + used(&second) as u8,
        subnormal_midpoints,
    })
}

/// How many limits the kernel of [`byte_tables`] looks up for format `sp`, to nearest if
/// `rn` (else toward zero): a format with three significand bits has the third in the low
/// byte, so its rows go up once toward zero, and rounding to nearest adds one. A table that
/// needs more is not built.
pub(crate) const fn byte_steps(sp: &Spec, rn: bool) -> u8 {
    (sp.man >= 3) as u8 + rn as u8
}

/// Whether the kernel of [`byte_tables`] for format `sp`, to nearest if `rn`, must check for
/// midpoints in f16's subnormal range (where its sticky bit may be missing): to nearest,
/// where the format's smallest midpoint, 2^(1 − bias − man − 1), is below f16's smallest
/// normal number (e5m2).
pub(crate) const fn byte_subnormal_midpoints(sp: &Spec, rn: bool) -> bool {
    rn && 1 - sp.bias - sp.man as i32 - 1 < -14
}

/// The tables of [`byte_tables`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ByteTables {
    /// The result at the bottom of each row, the sign bit set where a negative input takes it.
    pub base: [u8; 256],
    /// Above which low bits the result is one more.
    pub limit: [u8; 256],
    /// Above which low bits the result is one more again (0xff: never).
    pub second: [u8; 256],
    /// How many times a row goes up at most (0, 1 or 2): the limits the kernel looks up.
    pub steps: u8,
    /// Whether an element in f16's subnormal range (high byte's magnitude under 4) with the
    /// low byte 0x80 must go to the portable kernel (to nearest into e5m2).
    pub subnormal_midpoints: bool,
}

/// Whether NaN inputs are the only NaN results of format `sp` (with `.satfinite` if `sf`)
/// and its NaN encoding is a positive magnitude: then the NaN can be selected before the
/// sign is applied.
const fn simple_nan(sp: &Spec, sf: bool) -> bool {
    (sf || sp.has_inf || !sp.has_nan)
        && sp.nan_full < 1 << sp.sign_pos
        && (sp.nan_full >> sp.pad) << sp.pad == sp.nan_full
}

/// The `f32` bit pattern of the value of encoding `enc` (unpadded magnitude, a normal number)
/// of format `sp`.
pub(crate) const fn value_bits(sp: &Spec, enc: u32) -> u32 {
    let e = (enc >> sp.man) as i32;
    let m = enc & ((1 << sp.man) - 1);
    (((e - sp.bias + 127) as u32) << 23) | (m << (23 - sp.man))
}

/// The magnitude encoding of `abs` (an `f32` magnitude pattern) rounded to nearest even, for
/// the formats whose exponent range is narrower than `f32`'s, normal and subnormal results
/// alike: one floating-point addition rounds on the destination's grid and leaves the
/// encoding in the sum's low bits.
///
/// The magnitude is first clamped to the largest finite value with `.satfinite` (`SF`) or
/// for a format with neither infinity nor NaN, else to the value one encoding above it (the
/// infinity, or the code the overflow logic turns into NaN); both are on the grid, so larger
/// inputs round to them, and their exponents keep the addend below infinity. (NaN
/// inputs are clamped too: the caller selects their result.) Then, with `e` the biased
/// exponent of `abs` raised to at least `e0`, the one of the smallest normal, the addend
/// is the `f32` of exponent `e + s` (`s` = 23 − mantissa bits), whose unit in the last
/// place is the destination's grid step at `abs` (its subnormal step for `e0`), and of
/// significand bits `(e − e0) << man`. The sum rounds `abs` to that grid in the
/// processor's round-to-nearest-even (its last bit is the destination's), stays in the
/// addend's binade, and its significand bits are `(e − e0) << man` plus the rounded
/// magnitude in grid steps, `q`: for a normal result `q = 2^man + m`, so the sum's
/// significand is the encoding `(e − e0 + 1) << man | m`, a carry into the next exponent
/// included; for a subnormal one (`e = e0`) it is `q`, the encoding. With the clamp, six
/// integer operations and one addition per vector (AVX-512: `vpminud`, `vpandd`, `vpmaxud`,
/// `vpsrld`, `vpord`, `vpaddd`, `vaddps`; the mask of the low bits joins the sign's
/// `vpternlogd`), against ten for [`mag_det`]'s integer rounding, its subnormal path, the
/// select and the clamp after it: 15 instructions per 16 e4m3 results instead of 18.
#[inline(always)]
fn mag_rn<F: Fmt, const SF: bool>(abs: u32) -> u32 {
    let s = const { 23 - F::SPEC.man };
    let e0 = const { (128 - F::SPEC.bias) as u32 };
    let top = const {
        let sp = F::SPEC;
        let saturates = SF || (!sp.has_inf && !sp.has_nan);
        value_bits(
            &sp,
            if saturates {
                sp.max_enc
            } else {
                sp.max_enc + 1
            },
        )
    };
    // `(e + s) << 23` and `(e − e0) << man` from `e << 23`: `e << 23` plus `e << man`
    // (`e << 23 >> s`) plus this constant.
    let k = const {
        let sp = F::SPEC;
        ((23 - sp.man) << 23).wrapping_sub(((128 - sp.bias) as u32) << sp.man)
    };
    let abs = abs.min(top);
    let e23 = (abs & 0x7f80_0000).max(e0 << 23);
    let addend = e23.wrapping_add(e23 >> s).wrapping_add(k);
    (f32::from_bits(abs) + f32::from_bits(addend)).to_bits() & 0x007f_ffff
}

/// The magnitude encoding of `abs` (an `f32` magnitude pattern, negative if `neg`) rounded in
/// the deterministic direction `M` (not `RS`; `RN` only for the formats with the `f32`
/// exponent range, the others take [`mag_rn`]), before overflow and NaN handling.
#[inline(always)]
fn mag_det<F: Fmt, const M: u8>(abs: u32, neg: bool) -> u32 {
    let sp = const { F::SPEC };
    let s = const { 23 - F::SPEC.man };
    let e0 = const { (128 - F::SPEC.bias) as u32 };
    let min_norm = e0 << 23;
    let off = const { ((127 - F::SPEC.bias) as u32) << F::SPEC.man };

    // Normal results: add the increment below the grid step, shift, re-bias.
    let add = match M {
        RN => ((1u32 << (s - 1)) - 1) + ((abs >> s) & 1),
        RNA => 1u32 << (s - 1),
        RP if !neg => (1u32 << s) - 1,
        RM if neg => (1u32 << s) - 1,
        _ => 0,
    };
    let mut mag = (abs.wrapping_add(add) >> s).wrapping_sub(off);

    if sp.bias != 127 {
        // Results below the smallest normal (all lanes compute it; a select keeps it).
        // (`RN` takes `mag_rn` for these formats.)
        let sub = if M == RZ {
            // |x| scaled so that the destination's subnormal step becomes 1: a
            // multiplication by a power of two, exact, and below 2^man. Its integer part
            // comes from the magic-number addition, which rounds to nearest, corrected down
            // by one where that went up: a floor in five vector operations. (Lanes at or
            // above the smallest normal are clamped, and not selected below.)
            let scale_bits = ((127 + F::SPEC.bias - 1 + F::SPEC.man as i32) as u32) << 23;
            let y = f32::from_bits(abs.min(min_norm)) * f32::from_bits(scale_bits);
            const TWO_23: f32 = 8_388_608.0;
            let m = y + TWO_23;
            let nearest = m.to_bits().wrapping_sub(TWO_23.to_bits());
            nearest.wrapping_sub(((m - TWO_23) > y) as u32)
        } else {
            let e = abs >> 23;
            let mant = (abs & 0x007f_ffff) | if e != 0 { 0x0080_0000 } else { 0 };
            let s_full = (s + e0) as i32 - e.max(1) as i32;
            let sh = s_full.clamp(0, 31) as u32;
            // RNA, RP, RM (RN and RZ are above): add the increment, shift.
            let add = match M {
                RNA => (1u32 << sh) >> 1,
                RP if !neg => (1u32 << sh) - 1,
                RM if neg => (1u32 << sh) - 1,
                _ => 0,
            };
            (mant + add) >> sh
        };
        if abs < min_norm {
            mag = sub;
        }
    }
    mag
}

/// Converts a slice into the natural word `D` of the format; `rnd` has one random value per
/// element for `RS`, in any word, of width `W` (0: `k.w`; ignored otherwise).
#[inline(always)]
pub(crate) fn run<
    F: Fmt,
    const M: u8,
    const SF: bool,
    const KN: bool,
    const W: u32,
    D: crate::Word,
    R: crate::Word,
>(
    src: &[u32],
    dst: &mut [D],
    rnd: &[R],
    k: Knobs,
) {
    if M == RS {
        for ((d, &x), &r) in dst.iter_mut().zip(src).zip(rnd) {
            *d = D::from_u32(elem::<F, M, SF, KN, W>(x, r.to_u64() as u32, k));
        }
    } else {
        let k = Knobs { w: 1, ..k };
        for (d, &x) in dst.iter_mut().zip(src) {
            *d = D::from_u32(elem::<F, M, SF, KN, 0>(x, 0, k));
        }
    }
}
