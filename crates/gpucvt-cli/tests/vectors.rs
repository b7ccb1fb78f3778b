//! `gpucvt vectors` and `gpucvt conform` end to end: files, manifests and their hashes, the
//! `.npz` read with the zip crate, an implementation run as a co-process, exit codes.

use crate::common::gpucvt_in;
use std::io::Read;

fn manifest(path: &std::path::Path) -> serde_json::Value {
    let m = std::fs::read_to_string(path.with_file_name(format!(
        "{}.manifest.json",
        path.file_name().unwrap().to_string_lossy()
    )))
    .unwrap();
    serde_json::from_str(&m).unwrap()
}

#[test]
fn text_and_npz_with_stable_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let form = "cvt.rs.satfinite.e4m3x4.f32";
    let common = ["--level", "2", "--seed", "3", "--count", "2000"];
    for (file, threads) in [
        ("a.txt", "1"),
        ("b.txt", "2"),
        ("a.npz", "1"),
        ("b.npz", "2"),
    ] {
        let mut args = vec!["vectors", form, "-o", file, "--threads", threads];
        args.extend(common);
        let (code, out, err) = gpucvt_in(d, &args);
        assert_eq!(code, 0, "{out}{err}");
    }
    let bytes = |f: &str| std::fs::read(d.join(f)).unwrap();
    // Any thread count: the same bytes.
    assert_eq!(bytes("a.txt"), bytes("b.txt"));
    assert_eq!(bytes("a.npz"), bytes("b.npz"));
    let (mt, mn) = (manifest(&d.join("a.txt")), manifest(&d.join("a.npz")));
    // The file hash is the file's, and the case hash is shared by both kinds.
    assert_eq!(
        mt["sha256"],
        gpucvt::vectors::sha256_hex(&bytes("a.txt")).as_str()
    );
    assert_eq!(
        mn["sha256"],
        gpucvt::vectors::sha256_hex(&bytes("a.npz")).as_str()
    );
    assert_eq!(mt["cases_sha256"], mn["cases_sha256"]);
    assert_eq!(mt["settings"]["seed"], "3");
    let cases = mt["cases"].as_u64().unwrap();
    // The .npz: operands (cases × 5 words: a b e f rbits) and expected (cases × 1).
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes("a.npz"))).unwrap();
    let mut npy = Vec::new();
    z.by_name("operands.npy")
        .unwrap()
        .read_to_end(&mut npy)
        .unwrap();
    let header = String::from_utf8_lossy(&npy[..128]).to_string();
    assert!(
        header.contains(&format!("'shape': ({cases}, 5)")),
        "{header}"
    );
    assert!(header.contains("'descr': '<u8'"), "{header}");
    // The first text case's operands are the first row.
    let text = String::from_utf8(bytes("a.txt")).unwrap();
    let first = text.lines().find(|l| !l.starts_with('#')).unwrap();
    let start = npy.len() - (cases as usize) * 5 * 8;
    let a = u64::from_le_bytes(npy[start..start + 8].try_into().unwrap());
    assert!(first.contains(&format!(" 0x{a:08x} ")), "{first} {a:#x}");
}

#[test]
fn conform_runs_an_implementation_and_classifies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = env!("CARGO_BIN_EXE_gpucvt");
    let (code, _, err) = gpucvt_in(d, &["vectors", "cvt.rn.f16.f32", "-o", "f16.txt"]);
    assert_eq!(code, 0, "{err}");
    // The model agrees with itself, streamed through a pipe (380k lines).
    let own = format!("{bin} eval --batch");
    let (code, out, err) = gpucvt_in(d, &["conform", "f16.txt", "--impl", &own]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 disagree"), "{out}");
    // Round toward zero instead of to nearest: rounding, named.
    let rz = format!("sed 's/^cvt.rn/cvt.rz/' | {bin} eval --batch");
    let (code, out, _) = gpucvt_in(d, &["conform", "f16.txt", "--impl", &rz, "--json"]);
    assert_eq!(code, 1, "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(j["disagree"].as_u64().unwrap() > 0);
    // rz differs from rn in rounding, and in overflow: rz saturates where rn overflows.
    let c = &j["classes"];
    assert_eq!(
        c["rounding"].as_u64().unwrap() + c["saturation"].as_u64().unwrap(),
        j["disagree"].as_u64().unwrap(),
        "{out}"
    );
    assert!(c["saturation"].as_u64().unwrap() > 0);
    assert!(j["disagreements"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("rz"));
    let (code, _, _) = gpucvt_in(
        d,
        &[
            "conform",
            "f16.txt",
            "--impl",
            &rz,
            "--allow",
            "rounding,saturation",
        ],
    );
    assert_eq!(code, 0);
    // A program that answers too few lines, and one that fails: errors, exit code 2.
    let (code, _, err) = gpucvt_in(d, &["conform", "f16.txt", "--impl", "head -3"]);
    assert_eq!(code, 2);
    assert!(err.contains("3 answers for the 380950 cases"), "{err}");
    let (code, _, err) = gpucvt_in(d, &["conform", "f16.txt", "--impl", "exit 3"]);
    assert_eq!(code, 2, "{err}");
    // --answers reads a file; an unknown class is refused.
    std::fs::write(d.join("ans.txt"), "0x0000\n").unwrap();
    let (code, _, err) = gpucvt_in(d, &["conform", "f16.txt", "--answers", "ans.txt"]);
    assert_eq!(code, 2);
    assert!(err.contains("1 answers"), "{err}");
    let (code, _, err) = gpucvt_in(
        d,
        &[
            "conform",
            "f16.txt",
            "--answers",
            "ans.txt",
            "--allow",
            "nan",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("unknown class \"nan\""), "{err}");
    // Not a vectors file.
    std::fs::write(d.join("junk.txt"), "hello\n").unwrap();
    let (code, _, err) = gpucvt_in(d, &["conform", "junk.txt", "--answers", "ans.txt"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a gpucvt vectors file"), "{err}");
}

#[test]
fn a_suite_lists_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, out, err) = gpucvt_in(
        d,
        &[
            "vectors", "--suite", "--target", "sm_100a", "--only", "e2m1", "-o", "suite", "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let files = j["files"].as_array().unwrap();
    assert!(files.len() > 5, "{}", files.len());
    assert!(files
        .iter()
        .all(|f| f["instruction"].as_str().unwrap().contains("e2m1")));
    for f in files {
        let name = f["file"].as_str().unwrap();
        let bytes = std::fs::read(d.join("suite").join(name)).unwrap();
        assert_eq!(f["sha256"], gpucvt::vectors::sha256_hex(&bytes).as_str());
    }
    assert!(d.join("suite/manifest.json").exists());
    // No temporaries left behind.
    let left: Vec<_> = std::fs::read_dir(d.join("suite"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(left.is_empty());
}
