//! The integration tests of this crate, as modules of one test binary: one link instead of
//! one per file (the files stay where they were; `cargo test --test integration NAME`
//! runs those whose path contains NAME, e.g. `tile::`).

mod amd;
mod compat;
mod fuzz_targets;
mod ptx_corpus;
mod ptx_files;
mod ptx_no_panic;
mod ptx_ptxas_accepts;
mod ptx_slices;
mod ptx_values;
mod ptxas_legality;
mod readers;
mod run_unknown;
mod tile;
mod tile_no_panic;
mod vectors;
mod visa_mov;
mod visa_no_panic;
mod visa_text;
mod visa_values;
