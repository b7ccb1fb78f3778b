//! # gpucvt
//!
//! Bit-exact software models of GPU conversion instructions, over the exact engine in
//! [`gpucvt_core`] (re-exported as [`core`]).
//!
//! - [`bulk`]: one PTX `cvt` form over whole slices, with the fastest correct kernel;
//! - [`instr`], [`batch`]: one instruction of any dialect, and the batch evaluator;
//! - [`diff`]: two single-input conversions compared over every input, differences sorted
//!   into classes;
//! - [`diag`]: the one diagnostic type every reader and checker returns;
//! - [`ptx`]: the PTX dialect;
//! - [`visa`]: the Intel vISA dialect: types, cr0, `mov` conversions, `.visaasm` reading,
//!   checking and execution;
//! - [`tile`]: the CUDA Tile IR dialect: tile types, `.mlir` reading, verification and evaluation;
//! - [`text`]: numbers as text: decimal, hexadecimal-float and raw-bit literals in, exact
//!   decimals out.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use gpucvt_core as core;
pub use gpucvt_kernels as kernels;

pub mod batch;
pub mod bulk;
pub mod diag;
pub mod diff;
pub mod error;
pub mod instr;
pub mod ptx;
pub mod text;
pub mod tile;
pub mod unknown;
pub mod visa;

pub use error::Error;
