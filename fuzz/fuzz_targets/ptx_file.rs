//! cargo-fuzz target `ptx_file`: see `gpucvt_fuzz::ptx_file`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gpucvt_fuzz::ptx_file(data);
});
