//! The shared library's soname, `libgpucvt.so.N` with N the C ABI version
//! (`GPUCVT_ABI_VERSION` in src/lib.rs, read from there so that it has one home).

fn main() {
    println!("cargo:rerun-if-changed=src/lib.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let lib = std::fs::read_to_string("src/lib.rs").expect("src/lib.rs");
    let abi = lib
        .lines()
        .find_map(|l| l.strip_prefix("pub const GPUCVT_ABI_VERSION: u32 = "))
        .and_then(|rest| rest.strip_suffix(';'))
        .expect("src/lib.rs defines GPUCVT_ABI_VERSION");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libgpucvt.so.{abi}");
}
