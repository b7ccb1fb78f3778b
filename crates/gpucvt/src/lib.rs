//! # gpucvt
//!
//! Bit-exact software models of GPU conversion instructions (NVIDIA PTX `cvt`/`cvt.pack`,
//! Intel vISA `mov`, CUDA Tile IR conversion ops, AMD's FP8/BF8 `v_cvt_*`) over the exact engine [`gpucvt_core`]
//! (re-exported as [`core`]) and its slice kernels [`gpucvt_kernels`] ([`kernels`]).
//!
//! The layers, bottom up:
//!
//! - [`text`]: numbers as text (decimal, hexadecimal-float and raw-bit literals in, exact
//!   decimals out); [`diag`]: the one [`diag::Diagnostic`] (rule, message, line:column)
//!   every reader and checker returns;
//! - [`ptx`], [`visa`], [`tile`], [`amd`]: one module per dialect, with the same roles in each:
//!   `types` (the dialect's types), `parse` (its text), `check` (legality, diagnostics),
//!   `eval` (one conversion, bit-exact), `run` (a program's conversions in order), plus its
//!   data; [`unknown`]: the one rule for values a run does not know;
//! - [`instr`]: one instruction of any dialect ([`instr::Instr`]: parse, check on a target,
//!   evaluate); [`batch`]: the `gpucvt eval --batch` contract over it;
//! - [`ptx::slices`]: one PTX form over whole slices, `verify` and `sweep`; [`diff`]: two
//!   conversions compared over every input;
//! - [`vectors`]: test vectors for other implementations and their answers checked
//!   (`gpucvt vectors`, `gpucvt conform`, Python's `gpucvt.testing`);
//! - [`round`]: one number converted to a format, every step reported (`gpucvt round`,
//!   Python's `gpucvt.round`);
//! - [`error`]: [`Error`], what the public functions return.
//!
//! ```
//! use gpucvt::instr::{Instr, Options};
//! use gpucvt::Error;
//! // PTX: f32 -> f16, round to nearest even.
//! let i = Instr::parse("cvt.rn.f16.f32", &Options::default()).unwrap();
//! assert_eq!(i.eval_bits(&[0x3f80_0001]).unwrap(), (0x3c00, 16));
//! // vISA: a move from float to half float, and a Tile IR op, through the same API.
//! let v = Instr::parse("mov hf <- f", &Options::default()).unwrap();
//! assert_eq!(v.eval_bits(&[0x4000_0000]).unwrap(), (0x4000, 16));
//! // Errors are typed: a form the PTX rules reject, with the checker's diagnostics.
//! assert!(matches!(Instr::parse("cvt.rn.f32.f16", &Options::default()), Err(Error::Invalid { .. })));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use gpucvt_core as core;
pub use gpucvt_kernels as kernels;

pub mod amd;
pub mod batch;
pub mod compat;
pub mod diag;
pub mod diff;
pub mod error;
pub mod instr;
pub mod ptx;
pub mod round;
pub mod text;
pub mod tile;
pub mod unknown;
pub mod vectors;
pub mod visa;

pub use error::Error;

/// The Rust examples of the README run as doctests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
