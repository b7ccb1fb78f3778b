//! What the tests share: where the repository and the built libraries are, and building C
//! and C++ programs against them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// This test binary's cargo profile and target folder: target/<profile dir>/deps/integration-HASH.
pub fn profile_and_target() -> (String, PathBuf) {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let profile = match dir.file_name().unwrap().to_str().unwrap() {
        "debug" => "test",
        "release" => "bench",
        other => other,
    };
    (profile.to_string(), dir.parent().unwrap().to_path_buf())
}

/// The folder holding libgpucvt.so and libgpucvt.a, built once per test run by `cargo build
/// -p gpucvt-capi` with the profile and target folder of this test binary (integration tests
/// do not depend on a library that has no rlib, so cargo test alone would not rebuild them).
pub fn profile_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let (profile, target) = profile_and_target();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "-p",
                "gpucvt-capi",
                "--profile",
                &profile,
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p gpucvt-capi failed");
        std::env::current_exe()
            .unwrap()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf()
    })
}

/// libgpucvt.so.
pub fn cdylib() -> PathBuf {
    profile_dir().join("libgpucvt.so")
}

/// libgpucvt.a.
pub fn staticlib() -> PathBuf {
    profile_dir().join("libgpucvt.a")
}

/// A scratch folder for the programs the tests build.
pub fn scratch() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The flags every test program is compiled with: warnings are errors, and AddressSanitizer
/// (with its leak checker) and UndefinedBehaviorSanitizer stop the program at the first
/// finding.
pub const SANITIZE: &[&str] = &[
    "-g",
    "-O1",
    "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-Wall",
    "-Wextra",
    "-Werror",
];

/// Builds `sources` (C, or C++17 with `cpp`) into `scratch()/name`, linked with
/// libgpucvt.a, and returns the program's path. The compilers are `$CC` / `$CXX`, else `cc`
/// / `c++`.
pub fn build(name: &str, sources: &[PathBuf], cpp: bool) -> PathBuf {
    let (var, default, std) = if cpp {
        ("CXX", "c++", "-std=c++17")
    } else {
        ("CC", "cc", "-std=c11")
    };
    let compiler = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let out = scratch().join(name);
    let status = Command::new(&compiler)
        .arg(std)
        .args(SANITIZE)
        .arg("-I")
        .arg(root().join("include"))
        .args(sources)
        .arg(staticlib())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(status.success(), "{compiler} failed to build {name}");
    out
}

/// Runs a test program with `input` on its standard input: its standard output, after
/// checking it exited 0 (a sanitizer's finding makes it exit non-zero).
pub fn run(program: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0:exitcode=3")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A deterministic stream of random words (the core's SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(1);
        model::core::random::splitmix64(self.0)
    }
}

/// What examples/c/warp_cvt.c and examples/cpp/warp_cvt.cpp print, from the Rust API: the
/// same lanes, operands and random bits.
pub fn warp_expected() -> String {
    use model::instr::{Instr, Options};
    let opts = Options {
        target: Some("sm_100a".parse().unwrap()),
        ..Options::default()
    };
    let form = Instr::parse("cvt.rs.satfinite.e4m3x4.f32", &opts).unwrap();
    let mut out = String::new();
    for i in 0..8u32 {
        let ops = [
            (1.0f32 + i as f32 / 64.0).to_bits(),
            (-0.3f32 * i as f32).to_bits(),
            1000.0f32.to_bits(),
            (i as f32 / 512.0).to_bits(),
            0x9e37_79b9u32.wrapping_mul(i + 1),
        ]
        .map(u64::from);
        let d = if i == 4 {
            0xdead_beef // inactive
        } else {
            form.eval_bits(&ops).unwrap().0
        };
        out.push_str(&format!("lane {i}: d = {d:08x}\n"));
    }
    out.push_str("lane 16: d = deadbeef (inactive)\n");
    out
}

/// A fenced block of a Markdown page: its language, its text and the line it starts on.
pub struct Block {
    pub lang: String,
    pub text: String,
    pub line: usize,
    /// Whether only blank lines separate it from the block before.
    pub follows_block: bool,
}

/// The fenced blocks of a Markdown page, in order.
pub fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    let mut since_last = true; // only blank lines since the last block closed
    let mut first = true;
    for (i, line) in page.lines().enumerate() {
        if let Some(b) = current.as_mut() {
            if line.trim_end() == "```" {
                out.push(current.take().unwrap());
                since_last = true;
            } else {
                b.text.push_str(line);
                b.text.push('\n');
            }
        } else if let Some(lang) = line.strip_prefix("```") {
            current = Some(Block {
                lang: lang.trim().to_string(),
                text: String::new(),
                line: i + 1,
                follows_block: since_last && !first,
            });
            first = false;
        } else if !line.trim().is_empty() {
            since_last = false;
        }
    }
    out
}

/// docs/guide/c.md.
pub fn c_page() -> String {
    std::fs::read_to_string(root().join("docs/guide/c.md")).unwrap()
}

/// The shell lines of a page's `sh` blocks that start with `prefix`, with continuation lines
/// joined and comments dropped.
pub fn sh_lines(page: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in blocks(page).iter().filter(|b| b.lang == "sh") {
        let joined = b.text.replace("\\\n", " ");
        for l in joined.lines() {
            let l = l.split(" #").next().unwrap().trim();
            if l.starts_with(prefix) {
                out.push(l.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
    }
    out
}
