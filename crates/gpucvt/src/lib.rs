//! # gpucvt
//!
//! Bit-exact software models of GPU conversion instructions, over the exact engine in
//! [`gpucvt_core`] (re-exported as [`core`]).
//!
//! - [`diag`]: the one diagnostic type every reader and checker returns;
//! - [`ptx`]: the PTX dialect;
//! - [`text`]: numbers as text: decimal, hexadecimal-float and raw-bit literals in, exact
//!   decimals out.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use gpucvt_core as core;

pub mod diag;
pub mod ptx;
pub mod text;
