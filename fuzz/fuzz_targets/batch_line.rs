//! cargo-fuzz target `batch_line`: see `gpucvt_fuzz::batch_line`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gpucvt_fuzz::batch_line(data);
});
