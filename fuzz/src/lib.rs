//! Fuzz targets for gpucvt's readers (run with `cargo +nightly fuzz run <target>` from this
//! directory). The target bodies live in `targets.rs`, which the stable regression test
//! `crates/gpucvt/tests/fuzz_targets.rs` includes too.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod targets;

pub use targets::{batch_line, ptx_file, ptx_instruction, tile_file, visa_asm};
