//! include/gpucvt.h is what cbindgen generates from this crate now (`GPUCVT_BLESS=1`
//! rewrites it).

use crate::common::root;

#[test]
fn header_is_current() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let config =
        cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml");
    let mut text = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate")
        .write(&mut text);
    let text = String::from_utf8(text).expect("UTF-8");
    let path = root().join("include/gpucvt.h");
    if std::env::var_os("GPUCVT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "include/gpucvt.h is not what cbindgen generates from crates/gpucvt-capi; regenerate it with\n  GPUCVT_BLESS=1 cargo test -p gpucvt-capi --test integration header::"
    );
}
