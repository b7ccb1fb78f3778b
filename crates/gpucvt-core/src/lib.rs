//! # gpucvt-core
//!
//! The exact engine of gpucvt: every GPU number format as data, exact decoding, one rounding
//! routine for every pair of formats, and the conversion policies the ISAs differ in.
//!
//! The layers, bottom up:
//!
//! - [`format`](mod@format): one descriptor type, [`Format`], for every format, and the catalogue;
//! - [`names`]: every name a format is known by (gpucvt's and other tools'), one look-up;
//! - [`value`]: exact values ([`Value`], [`Dyadic`]): decode any encoding, encode back;
//! - [`round`]: the one rounding routine, [`round::round_magnitude`];
//! - [`convert`]: a [`Conversion`] = source, destination, [`Rounding`] and [`Policy`];
//! - [`random`]: the one random stream (SplitMix64) that stochastic rounding draws from.
//!
//! The fast slice kernels are in the `gpucvt-kernels` crate, which tests them against this
//! one. This crate has no dependencies and no `unsafe` code; its optional feature `serde`
//! derives `Serialize` and `Deserialize` for the policy types ([`Policy`] and its enums), which
//! the command line prints in its `--json` output.
//!
//! ```
//! use gpucvt_core::{Conversion, Policy, Rounding, format::{F32, F16}};
//! let cvt = Conversion::new(F32, F16, Rounding::RN, Policy::default());
//! let out = cvt.apply(0x3f80_0001); // 1 + 2^-23
//! assert_eq!(out.bits, 0x3c00);
//! assert!(out.flags.contains(gpucvt_core::Flags::INEXACT));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod convert;
pub mod format;
pub mod names;
pub mod random;
pub mod round;
pub mod value;

pub use convert::{
    Chain, Conversion, Flags, IntNan, IntOverflow, NanResult, NoNanResult, Outcome, Overflow,
    Policy,
};
pub use format::Format;
pub use round::{Direction, Rounding};
pub use value::{Class, Dyadic, Value};
