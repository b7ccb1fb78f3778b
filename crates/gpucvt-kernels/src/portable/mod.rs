//! The kernels as plain safe Rust, `#[inline(always)]`: [`crate::isa`] compiles each for
//! every instruction set and calls the best the CPU has.

pub(crate) mod fast;
pub(crate) mod int;
pub(crate) mod small;
pub(crate) mod spec;
pub(crate) mod ue8m0;
