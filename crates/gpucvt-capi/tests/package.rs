//! The installed package (scripts/install-c) used from outside the tree, as a Makefile
//! project would: pkg-config for the shared library, the static archive, the C++ header.
//! Where `cmake` is on the PATH, a CMake project builds the same programs with
//! `find_package(gpucvt)`; otherwise the CMake files are only checked for their targets.

use crate::common::{profile_and_target, profile_dir, root, run, scratch, warp_expected};
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
    // The lines docs/guide/c.md gives for a Makefile project.
    sh(
        &dir,
        &prefix,
        "cc -std=c11 -o warp main.c $(pkg-config --cflags --libs gpucvt)",
    );
    sh(
        &dir,
        &prefix,
        "c++ -std=c++17 -o warp_cpp main.cpp $(pkg-config --cflags --libs gpucvt)",
    );
    sh(
        &dir,
        &prefix,
        "cc -std=c11 -o warp_static main.c $(pkg-config --cflags gpucvt) \
         \"$(pkg-config --variable=libdir gpucvt)/libgpucvt.a\" -lpthread -ldl -lm",
    );
    assert!(readelf(&dir.join("warp")).contains("Shared library: [libgpucvt.so.1]"));
    assert!(!readelf(&dir.join("warp_static")).contains("libgpucvt"));
    let want = warp_expected();
    for program in ["warp", "warp_cpp"] {
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
    std::fs::write(
        dir.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\n\
         project(warp C CXX)\n\
         find_package(gpucvt 0.1 REQUIRED)\n\
         add_executable(warp main.c)\n\
         target_link_libraries(warp PRIVATE gpucvt::gpucvt)\n\
         add_executable(warp_static main.c)\n\
         target_link_libraries(warp_static PRIVATE gpucvt::gpucvt_static)\n\
         add_executable(warp_cpp main.cpp)\n\
         set_target_properties(warp_cpp PROPERTIES CXX_STANDARD 17)\n\
         target_link_libraries(warp_cpp PRIVATE gpucvt::gpucvt)\n",
    )
    .unwrap();
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
