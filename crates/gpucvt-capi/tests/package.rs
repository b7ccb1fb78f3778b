//! The installed package (scripts/install-c) used from outside the tree, as a Makefile
//! project would: pkg-config for the shared library, the static archive, the C++ header.
//! Where `cmake` is on the PATH, a CMake project builds the same programs with
//! `find_package(gpucvt)`; otherwise the CMake files are only checked for their targets.

use crate::common::{
    blocks, c_page, profile_and_target, profile_dir, root, run, scratch, sh_lines, warp_expected,
};
use std::path::Path;
use std::process::Command;

fn sh(dir: &Path, prefix: &Path, script: &str) {
    let out = Command::new("sh")
        .args(["-ec", script])
        .current_dir(dir)
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{script}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn readelf(path: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(path)
        .output()
        .expect("readelf runs");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn installed_package_builds_programs_out_of_tree() {
    profile_dir(); // the libraries, built once
    let (profile, target) = profile_and_target();
    let prefix = scratch().join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    let status = Command::new(root().join("scripts/install-c"))
        .args(["--profile", &profile])
        .arg(&prefix)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("scripts/install-c runs");
    assert!(status.success());
    for f in [
        "include/gpucvt.h",
        "include/gpucvt.hpp",
        "lib/libgpucvt.so.1",
        "lib/libgpucvt.so",
        "lib/libgpucvt.a",
        "lib/pkgconfig/gpucvt.pc",
        "lib/cmake/gpucvt/gpucvt-config.cmake",
        "lib/cmake/gpucvt/gpucvt-config-version.cmake",
    ] {
        assert!(prefix.join(f).exists(), "{f} is installed");
    }
    assert!(
        readelf(&prefix.join("lib/libgpucvt.so.1")).contains("Library soname: [libgpucvt.so.1]")
    );
    let cmake =
        std::fs::read_to_string(prefix.join("lib/cmake/gpucvt/gpucvt-config.cmake")).unwrap();
    assert!(cmake.contains("add_library(gpucvt::gpucvt SHARED IMPORTED)") && !cmake.contains('@'));

    // A project outside the tree, with its own copy of the example.
    let dir = scratch().join("out-of-tree");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(root().join("examples/c/warp_cvt.c"), dir.join("main.c")).unwrap();
    std::fs::copy(
        root().join("examples/cpp/warp_cvt.cpp"),
        dir.join("main.cpp"),
    )
    .unwrap();
    // The command lines docs/guide/c.md gives (shared, C++, static), and its Makefile lines
    // with make's built-in rule (PKG_CONFIG_PATH given on make's command line, over the
    // page's /opt/gpucvt).
    let page = c_page();
    let lines: Vec<String> = ["cc ", "c++ "]
        .iter()
        .flat_map(|p| sh_lines(&page, p))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for l in &lines {
        sh(&dir, &prefix, l);
    }
    let make = blocks(&page)
        .into_iter()
        .find(|b| b.lang == "make")
        .expect("a make block");
    std::fs::write(dir.join("Makefile"), &make.text).unwrap();
    let pc = prefix.join("lib/pkgconfig");
    sh(
        &dir,
        &prefix,
        &format!(
            "make -s PKG_CONFIG_PATH={} main && mv main warp_make",
            pc.display()
        ),
    );
    assert!(readelf(&dir.join("warp")).contains("Shared library: [libgpucvt.so.1]"));
    assert!(!readelf(&dir.join("warp_static")).contains("libgpucvt"));
    let want = warp_expected();
    for program in ["warp", "warp_cpp", "warp_make"] {
        let out = Command::new(dir.join(program))
            .env("LD_LIBRARY_PATH", prefix.join("lib"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{program}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{program}");
    }
    assert_eq!(run(&dir.join("warp_static"), &[], ""), want);

    // The lines docs/guide/c.md gives for a CMake project.
    if Command::new("cmake").arg("--version").output().is_err() {
        eprintln!("package: no cmake on the PATH; the CMake package was not built against");
        return;
    }
    let cmake = blocks(&page)
        .into_iter()
        .find(|b| b.lang == "cmake")
        .expect("a cmake block");
    std::fs::write(dir.join("CMakeLists.txt"), &cmake.text).unwrap();
    let prefix_arg = format!("-DCMAKE_PREFIX_PATH={}", prefix.display());
    sh(
        &dir,
        &prefix,
        &format!("cmake -S . -B build {prefix_arg} >/dev/null && cmake --build build >/dev/null"),
    );
    for program in ["warp", "warp_static", "warp_cpp"] {
        // CMake links with the library's folder as the run path: no LD_LIBRARY_PATH.
        assert_eq!(
            run(&dir.join("build").join(program), &[], ""),
            want,
            "cmake {program}"
        );
    }
}
