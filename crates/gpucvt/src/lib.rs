#![forbid(unsafe_code)]
pub use gpucvt_core as core;
