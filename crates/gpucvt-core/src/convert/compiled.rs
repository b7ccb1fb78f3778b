//! [`Conversion::apply`] compiled for fixed pairs of formats.
//!
//! The exact core reads its formats as data at run time. For the pairs that are converted in
//! bulk — every 32-bit pattern in `gpucvt verify`, the fallback path of the slice kernels —
//! the same code is instantiated here with the formats as constants, so that the compiler
//! folds the layouts' fields and drops the branches a pair cannot take. The source is the same
//! (`convert::run`); only the constants differ. Tests check every instance against the
//! run-time path.

use super::{run, Conversion, NoTrace, Outcome};
use crate::format::*;
use crate::round::{Direction, Rounding};

/// A function converting one encoding exactly as [`Conversion::apply`] does.
pub type ApplyFn = fn(&Conversion, u64) -> Outcome;

/// A function converting many encodings: `out[i] = c.apply(src[i]).bits`, where with
/// `random` given, stochastic rounding takes `random[i]` as element `i`'s random bits (the
/// width stays the conversion's). See [`Conversion::compiled_bits`].
pub type BitsFn = fn(&Conversion, &[u64], Option<&[u64]>, &mut [u64]);

/// The stochastic loop of `bits_loop!`: element `i` rounded with `random[i]` at the
/// width `$width` (a constant where the caller passes a literal).
macro_rules! stochastic_loop {
    ($c:expr, $src_fmt:expr, $dst_fmt:expr, $src:expr, $random:expr, $out:expr, $width:expr) => {
        for ((o, &x), &r) in $out.iter_mut().zip($src).zip($random) {
            let rounding = Rounding::stochastic(r, $width);
            *o = run($src_fmt, $dst_fmt, rounding, &$c.policy, x, &mut NoTrace).bits;
        }
    };
}

/// `out[i]` converted from `src[i]` with the rounding `$rounding` (a constant where the
/// caller passes one).
macro_rules! rounding_loop {
    ($c:expr, $src_fmt:expr, $dst_fmt:expr, $src:expr, $out:expr, $rounding:expr) => {
        for (o, &x) in $out.iter_mut().zip($src) {
            *o = run($src_fmt, $dst_fmt, $rounding, &$c.policy, x, &mut NoTrace).bits;
        }
    };
}

/// The loop of a [`BitsFn`] for the formats `$src` and `$dst` (a macro, so that the
/// conversion is inlined into it). With `integral` last (the fixed-point destinations), the
/// integral roundings get loops of their own too.
macro_rules! bits_loop {
    ($c:expr, $src_fmt:expr, $dst_fmt:expr, $src:expr, $random:expr, $out:expr, integral) => {{
        let (c, src, random, out): (&Conversion, &[u64], Option<&[u64]>, &mut [u64]) =
            ($c, $src, $random, $out);
        assert_eq!(src.len(), out.len(), "one result per source");
        // `.rni .rzi .rmi .rpi` (float to integer) as constants, so that the grid step of 1
        // and the direction fold.
        match c.rounding {
            Rounding::RNI => rounding_loop!(c, $src_fmt, $dst_fmt, src, out, Rounding::RNI),
            Rounding::RZI => rounding_loop!(c, $src_fmt, $dst_fmt, src, out, Rounding::RZI),
            Rounding::RMI => rounding_loop!(c, $src_fmt, $dst_fmt, src, out, Rounding::RMI),
            Rounding::RPI => rounding_loop!(c, $src_fmt, $dst_fmt, src, out, Rounding::RPI),
            _ => bits_loop!(c, $src_fmt, $dst_fmt, src, random, out),
        }
    }};
    ($c:expr, $src_fmt:expr, $dst_fmt:expr, $src:expr, $random:expr, $out:expr) => {{
        let (c, src, random, out): (&Conversion, &[u64], Option<&[u64]>, &mut [u64]) =
            ($c, $src, $random, $out);
        assert_eq!(src.len(), out.len(), "one result per source");
        match (random, c.rounding.direction) {
            (Some(random), Direction::Stochastic { width, .. }) => {
                assert_eq!(random.len(), src.len(), "one random word per source");
                // The widths of PTX `.rs` as constants (8 bits a lane for the fp8/fp6/fp4
                // destinations, 13 for f16x2, 16 for bf16x2), so that the masks and shifts
                // of the random bits fold; any other width at run time.
                match width {
                    8 => stochastic_loop!(c, $src_fmt, $dst_fmt, src, random, out, 8),
                    13 => stochastic_loop!(c, $src_fmt, $dst_fmt, src, random, out, 13),
                    16 => stochastic_loop!(c, $src_fmt, $dst_fmt, src, random, out, 16),
                    _ => stochastic_loop!(c, $src_fmt, $dst_fmt, src, random, out, width),
                }
            }
            // The commonest roundings as constants too.
            (_, _) if c.rounding == Rounding::RN => {
                rounding_loop!(c, $src_fmt, $dst_fmt, src, out, Rounding::RN)
            }
            (_, _) if c.rounding == Rounding::RZ => {
                rounding_loop!(c, $src_fmt, $dst_fmt, src, out, Rounding::RZ)
            }
            _ => rounding_loop!(c, $src_fmt, $dst_fmt, src, out, c.rounding),
        }
    }};
}

/// [`BitsFn`] by the run-time path, for the pairs without an instance.
pub(super) fn bits_by_apply(c: &Conversion, src: &[u64], random: Option<&[u64]>, out: &mut [u64]) {
    bits_loop!(c, &c.src, &c.dst, src, random, out)
}

macro_rules! pairs {
    ($($src:ident => [$($dst:ident),* $(,)?] [$($int:ident),* $(,)?]),* $(,)?) => {
        /// The instances for `src` → `dst`, if there are.
        pub(super) fn lookup(src: &Format, dst: &Format) -> Option<(ApplyFn, BitsFn)> {
            $($(
                if *src == $src && *dst == $dst {
                    return Some(pairs!(@fns $src, $dst));
                }
            )*
            $(
                if *src == $src && *dst == $int {
                    return Some(pairs!(@fns $src, $int, integral));
                }
            )*)*
            None
        }

        /// Every pair with an instance.
        #[cfg(test)]
        pub(super) const PAIRS: &[(Format, Format)] =
            &[$($(($src, $dst),)* $(($src, $int),)*)*];
    };
    (@fns $src:ident, $dst:ident $(, $integral:ident)?) => {{
        fn one(c: &Conversion, bits: u64) -> Outcome {
            run(&$src, &$dst, c.rounding, &c.policy, bits, &mut NoTrace)
        }
        fn many(c: &Conversion, src: &[u64], random: Option<&[u64]>, out: &mut [u64]) {
            bits_loop!(c, &$src, &$dst, src, random, out $(, $integral)?)
        }
        (one as ApplyFn, many as BitsFn)
    }};
}

// Float destinations first, then the fixed-point ones (with loops for the integral
// roundings).
pairs! {
    F32 => [F16, BF16, TF32, E4M3, E5M2, E2M3, E3M2, E2M1, UE8M0, UE4M3, F64]
        [S2F6, S8, S16, S32, S64, U8, U16, U32, U64],
    F64 => [F32, F16, BF16, TF32] [S32, S64, U32, U64],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{IntNan, IntOverflow, NanResult, Policy};
    use crate::random::splitmix64;
    use crate::round::Rounding;

    /// Source words: every exponent with mantissas at the edges and a few in between,
    /// both signs, and random words.
    fn inputs(src: &Format) -> Vec<u64> {
        let w = src.width();
        let man = if w == 32 { 23 } else { 52 };
        let mut out = Vec::new();
        for e in 0..(1u64 << (w - 1 - man)) {
            for m in [0, 1, 2, 3, 0x55, 1 << (man - 1), (1 << (man - 1)) + 1] {
                for m in [m, (1u64 << man) - 1 - m] {
                    for sign in [0, 1u64 << (w - 1)] {
                        out.push(sign | e << man | m);
                    }
                }
            }
        }
        out.extend((0..20_000u64).map(|i| splitmix64(i) & src.mask()));
        out
    }

    #[test]
    fn every_instance_equals_the_run_time_path() {
        let satfinite = Policy {
            satfinite: true,
            ..Policy::default()
        };
        let policies = [
            Policy::default(),
            satfinite,
            Policy {
                relu: true,
                ..satfinite
            },
            Policy {
                sat: true,
                flush_inputs: true,
                flush_outputs: true,
                ..Policy::default()
            },
            Policy {
                nan: NanResult::Payload,
                positive_zero: true,
                int_nan: IntNan::HighBit,
                int_overflow: IntOverflow::Wrap,
                scale: -3,
                ..Policy::default()
            },
        ];
        let roundings = [
            Rounding::RN,
            Rounding::RNA,
            Rounding::RZ,
            Rounding::RM,
            Rounding::RP,
            Rounding::RNI,
            Rounding::RZI,
            Rounding::RMI,
            Rounding::RPI,
            // Every width with a loop of its own (8, 13, 16) and others at run time.
            Rounding::stochastic(0x9e37_79b9, 8),
            Rounding::stochastic(0x9e37_79b9, 13),
            Rounding::stochastic(0x9e37_79b9, 16),
            Rounding::stochastic(0x9e37_79b9, 5),
            Rounding::stochastic(0x9e37_79b9, 64),
        ];
        for (src, dst) in PAIRS {
            let (apply, many) = lookup(src, dst).expect("an instance for every listed pair");
            let xs = inputs(src);
            for r in roundings {
                for p in policies {
                    let c = Conversion::new(*src, *dst, r, p);
                    assert!(std::ptr::fn_addr_eq(c.compiled(), apply));
                    let random: Vec<u64> = (0..xs.len() as u64).map(splitmix64).collect();
                    let mut bits = vec![0; xs.len()];
                    let mut bits_random = vec![0; xs.len()];
                    many(&c, &xs, None, &mut bits);
                    many(&c, &xs, Some(&random), &mut bits_random);
                    let mut by_apply = vec![0; xs.len()];
                    bits_by_apply(&c, &xs, Some(&random), &mut by_apply);
                    assert_eq!(bits_random, by_apply);
                    for (i, &x) in xs.iter().enumerate() {
                        assert_eq!(bits[i], c.apply(x).bits);
                        if let Direction::Stochastic { width, .. } = r.direction {
                            let ci = Conversion {
                                rounding: Rounding::stochastic(random[i], width),
                                ..c
                            };
                            assert_eq!(bits_random[i], ci.apply(x).bits);
                        } else {
                            assert_eq!(bits_random[i], bits[i]);
                        }
                        assert_eq!(
                            apply(&c, x),
                            c.apply(x),
                            "{} -> {} {r:?} {p:?} {x:#x}",
                            src.name,
                            dst.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn pairs_without_an_instance_use_apply() {
        let c = Conversion::new(E4M3, F16, Rounding::RN, Policy::default());
        assert!(lookup(&c.src, &c.dst).is_none());
        assert!(std::ptr::fn_addr_eq(
            c.compiled(),
            Conversion::apply as ApplyFn
        ));
        assert!(std::ptr::fn_addr_eq(
            c.compiled_bits(),
            bits_by_apply as BitsFn
        ));
    }
}
