//! The independent reference model of every gpucvt conversion, shared by the test suites of
//! every crate: exact big-rational arithmetic that shares no code with the engine (see the
//! documentation of [`mod@reference`]), and the suites' seeded generator ([`Rng`]).
#![forbid(unsafe_code)]

pub mod reference;
pub mod support;

pub use reference::*;
pub use support::{npy_bytes, Rng};
