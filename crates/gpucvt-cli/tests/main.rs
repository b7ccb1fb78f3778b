//! The integration tests of this crate, as modules of one test binary: one link instead of
//! one per file (the files stay where they were; `cargo test --test integration NAME`
//! runs those whose path contains NAME, e.g. `tile::`).

mod cli;
mod common;
mod convert;
mod diff;
mod docs;
mod files;
mod interfaces;
mod quantize;
mod round;
mod table;
mod tile;
mod units;
mod vectors;
mod verify;
