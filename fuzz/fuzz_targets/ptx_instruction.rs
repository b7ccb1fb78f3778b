//! cargo-fuzz target `ptx_instruction`: see `gpucvt_fuzz::ptx_instruction`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gpucvt_fuzz::ptx_instruction(data);
});
