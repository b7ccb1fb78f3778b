//! cargo-fuzz target `tile_file`: see `gpucvt_fuzz::tile_file`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gpucvt_fuzz::tile_file(data);
});
