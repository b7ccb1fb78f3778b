//! cargo-fuzz target `visa_asm`: see `gpucvt_fuzz::visa_asm`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gpucvt_fuzz::visa_asm(data);
});
