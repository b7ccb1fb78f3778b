//! End-to-end tests of `gpucvt convert`: outputs compared element by element with the exact
//! core, `--cvt` against `--to`, selection, block scaling, and every kind of bad input (exit
//! code 2, a one-line message, and no output or temporary file left behind). Test files are
//! generated in temporary folders.

use crate::common::gpucvt_in as gpucvt;

use gpucvt::core::format::{self, Format};
use gpucvt::core::{Conversion, Policy, Rounding};
use serde_json::{json, Value};
use std::path::Path;

fn values(n: usize) -> Vec<f32> {
    let mut x = 0x9e37_79b9u32;
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        300.0,
        1e-9,
        -448.0,
        464.0,
        f32::INFINITY,
        f32::NAN,
    ];
    while v.len() < n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push((x as f32 / u32::MAX as f32 - 0.5) * 20.0);
    }
    v.truncate(n);
    v
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn write_safetensors(
    path: &Path,
    tensors: &[(&str, &str, Vec<usize>, Vec<u8>)],
    meta: Option<Value>,
) {
    let mut h = serde_json::Map::new();
    if let Some(m) = meta {
        h.insert("__metadata__".into(), m);
    }
    let (mut off, mut data) = (0, Vec::new());
    for (name, dtype, shape, bytes) in tensors {
        h.insert(
            name.to_string(),
            json!({"dtype": dtype, "shape": shape, "data_offsets": [off, off + bytes.len()]}),
        );
        off += bytes.len();
        data.extend_from_slice(bytes);
    }
    let mut hb = serde_json::to_vec(&Value::Object(h)).unwrap();
    while !hb.len().is_multiple_of(8) {
        hb.push(b' ');
    }
    let mut out = (hb.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&hb);
    out.extend_from_slice(&data);
    std::fs::write(path, out).unwrap();
}

/// name → (dtype, shape, bytes), and the metadata.
#[allow(clippy::type_complexity)]
fn read_safetensors(path: &Path) -> (Option<Value>, Vec<(String, String, Vec<usize>, Vec<u8>)>) {
    let b = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let h: serde_json::Map<String, Value> = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let data = &b[8 + n..];
    let mut meta = None;
    let mut out = Vec::new();
    for (k, v) in h {
        if k == "__metadata__" {
            meta = Some(v);
            continue;
        }
        let off: Vec<usize> = serde_json::from_value(v["data_offsets"].clone()).unwrap();
        out.push((
            k,
            v["dtype"].as_str().unwrap().to_string(),
            serde_json::from_value(v["shape"].clone()).unwrap(),
            data[off[0]..off[1]].to_vec(),
        ));
    }
    (meta, out)
}

fn get<'a>(
    ts: &'a [(String, String, Vec<usize>, Vec<u8>)],
    name: &str,
) -> &'a (String, String, Vec<usize>, Vec<u8>) {
    ts.iter().find(|t| t.0 == name).expect("tensor present")
}

/// An input `.npy` file, written by the tests' own writer (not gpucvt's).
fn npy(path: &Path, descr: &str, shape: &[u64], data: &[u8]) {
    std::fs::write(path, gpucvt_reference::npy_bytes(descr, shape, data)).unwrap();
}

fn npy_payload(path: &Path) -> (String, Vec<u8>) {
    let b = std::fs::read(path).unwrap();
    let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
    (
        String::from_utf8_lossy(&b[10..10 + hl]).into_owned(),
        b[10 + hl..].to_vec(),
    )
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn sf() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

fn check_elements(input: &[f32], out: &[u64], c: &Conversion) {
    assert_eq!(input.len(), out.len());
    for (x, y) in input.iter().zip(out) {
        assert_eq!(*y, c.apply(x.to_bits() as u64).bits, "{} {x}", c.dst);
    }
}

/// Runs a failing conversion: exit code 2, one `error:` line mentioning `needle`, nothing
/// left in the folder.
fn fails(dir: &Path, args: &[&str], needle: &str) {
    let before = listing(dir);
    let (code, out, err) = gpucvt(dir, args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "{args:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(listing(dir), before, "{args:?} left files behind");
}

#[test]
fn safetensors_every_tensor_to_fp8() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = values(512);
    let b = values(16);
    write_safetensors(
        &d.join("m.safetensors"),
        &[
            ("w", "F32", vec![16, 32], f32_bytes(&w)),
            ("b", "F32", vec![16], f32_bytes(&b)),
        ],
        Some(json!({"format": "pt"})),
    );
    let (code, out, err) = gpucvt(
        d,
        &[
            "convert",
            "m.safetensors",
            "-o",
            "q.safetensors",
            "--to",
            "e4m3",
            "--satfinite",
            "--all",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("elements         528"), "{out}");
    assert!(out.contains("became NaN       2"), "{out}");
    let (meta, ts) = read_safetensors(&d.join("q.safetensors"));
    assert_eq!(meta, Some(json!({"format": "pt"})));
    let c = Conversion::new(format::F32, format::E4M3, Rounding::RN, sf());
    for (name, v) in [("w", &w), ("b", &b)] {
        let t = get(&ts, name);
        assert_eq!(t.1, "F8_E4M3");
        check_elements(v, &t.3.iter().map(|&x| x as u64).collect::<Vec<_>>(), &c);
    }
    // --cvt gives the same file as --to with the same modifiers.
    let (code, _, err) = gpucvt(
        d,
        &[
            "convert",
            "m.safetensors",
            "-o",
            "c.safetensors",
            "--cvt",
            "cvt.rn.satfinite.e4m3x2.f32",
            "--all",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(d.join("c.safetensors")).unwrap(),
        std::fs::read(d.join("q.safetensors")).unwrap()
    );
}

#[test]
fn cvt_and_to_agree_on_modifiers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut v = values(256);
    v.extend([1e-40f32, -1e-40, 70000.0, -70000.0, 0.5, 2.0]);
    v.truncate(256);
    npy(&d.join("x.npy"), "<f4", &[256], &f32_bytes(&v));
    for (cvt, to) in [
        (
            "cvt.rn.ftz.sat.f16.f32",
            &["--to", "f16", "--ftz", "--sat"][..],
        ),
        (
            "cvt.rz.relu.bf16.f32",
            &["--to", "bf16", "--mode", "rz", "--relu"][..],
        ),
        (
            "cvt.rn.relu.satfinite.e5m2x2.f32",
            &["--to", "e5m2", "--relu", "--satfinite"][..],
        ),
        (
            "cvt.rp.satfinite.ue8m0x2.f32",
            &["--to", "ue8m0", "--mode", "rp", "--satfinite"][..],
        ),
    ] {
        let (code, _, err) = gpucvt(d, &["convert", "x.npy", "-o", "a.npy", "--cvt", cvt]);
        assert_eq!(code, 0, "{cvt}: {err}");
        let mut args = vec!["convert", "x.npy", "-o", "b.npy"];
        args.extend_from_slice(to);
        let (code, _, err) = gpucvt(d, &args);
        assert_eq!(code, 0, "{to:?}: {err}");
        assert_eq!(
            std::fs::read(d.join("a.npy")).unwrap(),
            std::fs::read(d.join("b.npy")).unwrap(),
            "{cvt}"
        );
    }
}

#[test]
fn stochastic_rounding_is_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("x.bin"), f32_bytes(&values(1000))).unwrap();
    let run = |out: &str, seed: &str| {
        let (code, _, err) = gpucvt(
            d,
            &[
                "convert",
                "x.bin",
                "--from",
                "f32",
                "-o",
                out,
                "--cvt",
                "cvt.rs.satfinite.e2m1x4.f32",
                "--seed",
                seed,
            ],
        );
        assert_eq!(code, 0, "{err}");
        std::fs::read(d.join(out)).unwrap()
    };
    let a = run("a.fp4", "1");
    assert_eq!(a.len(), 500);
    assert_eq!(run("b.fp4", "1"), a);
    assert_ne!(run("c.fp4", "2"), a);
}

#[test]
fn tensor_selection_copies_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = values(64);
    let ids: Vec<u8> = (0..8i64).flat_map(|i| i.to_le_bytes()).collect();
    write_safetensors(
        &d.join("m.safetensors"),
        &[
            ("a", "F32", vec![64], f32_bytes(&w)),
            ("ids", "I64", vec![8], ids.clone()),
            ("b", "F32", vec![2, 32], f32_bytes(&w)),
        ],
        None,
    );
    let (code, out, err) = gpucvt(
        d,
        &[
            "convert",
            "m.safetensors",
            "-o",
            "o.safetensors",
            "--to",
            "bf16",
            "--tensor",
            "b",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["copied"], json!(["a", "ids"]));
    assert_eq!(j["tensors"][0]["name"], "b");
    assert_eq!(j["tensors"][0]["dtype"], "BF16");
    assert_eq!(j["total"]["elements"], 64);
    let (_, ts) = read_safetensors(&d.join("o.safetensors"));
    assert_eq!(get(&ts, "a").3, f32_bytes(&w));
    assert_eq!(get(&ts, "ids").3, ids);
    let b = get(&ts, "b");
    assert_eq!((b.1.as_str(), &b.2), ("BF16", &vec![2, 32]));
    let got: Vec<u64> =
        b.3.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u64)
            .collect();
    check_elements(
        &w,
        &got,
        &Conversion::new(format::F32, format::BF16, Rounding::RN, Policy::default()),
    );
    fails(
        d,
        &[
            "convert",
            "m.safetensors",
            "-o",
            "o2.safetensors",
            "--to",
            "bf16",
            "--tensor",
            "zzz",
        ],
        "no tensor named \"zzz\"",
    );
}

#[test]
fn mx_block_scaling_npy_with_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut v = values(128);
    v[7] = 1.0; // keep block 0 finite (values() starts with specials)
    v[8] = 2.0;
    npy(&d.join("w.npy"), "<f4", &[2, 64], &f32_bytes(&v));
    let (code, out, err) = gpucvt(
        d,
        &[
            "convert",
            "w.npy",
            "-o",
            "q.npy",
            "--to",
            "e2m1",
            "--satfinite",
            "--block",
            "32",
            "--scale",
            "ue8m0",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("blocks           4"), "{out}");
    let (h, scales) = npy_payload(&d.join("q_scale.npy"));
    assert!(
        h.contains("'descr': '|u1'") && h.contains("'shape': (2, 2)"),
        "{h}"
    );
    let (h, q) = npy_payload(&d.join("q.npy"));
    assert!(h.contains("'shape': (2, 64)"), "{h}");
    for (i, (x, y)) in v.iter().zip(&q).enumerate() {
        let s = scales[i / 32];
        let k = if s == 0xff { 0 } else { 127 - s as i32 };
        let c = Conversion::new(
            format::F32,
            format::E2M1,
            Rounding::RN,
            Policy { scale: k, ..sf() },
        );
        assert_eq!(*y as u64, c.apply(x.to_bits() as u64).bits, "element {i}");
    }
    // Block 0's amax is 464: floor(log2 464) − emax(e2m1) = 8 − 2 = 6 → 127 + 6 = 0x85.
    assert_eq!(scales[0], 0x85);
    fails(
        d,
        &[
            "convert", "w.npy", "-o", "r.npy", "--to", "e2m1", "--block", "48",
        ],
        "not a multiple of the block size 48",
    );
    fails(
        d,
        &[
            "convert", "w.npy", "-o", "r.npy", "--to", "e2m1", "--block", "32", "--scale", "e8m0",
        ],
        "invalid value 'e8m0' for '--scale <FMT>'; [possible values: ue8m0, ue4m3, f32, bf16]",
    );
}

fn formats_roundtrip(dst: &Format, rounding: Rounding) -> Conversion {
    Conversion::new(format::F32, *dst, rounding, sf())
}

#[test]
fn raw_every_small_format() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = values(1024);
    std::fs::write(d.join("x.f32"), f32_bytes(&v)).unwrap();
    for (name, f) in [
        ("e4m3", format::E4M3),
        ("e5m2", format::E5M2),
        ("e2m3", format::E2M3),
        ("e3m2", format::E3M2),
        ("e2m1", format::E2M1),
    ] {
        let out = format!("x.{name}");
        let (code, _, err) = gpucvt(
            d,
            &[
                "convert",
                "x.f32",
                "--from",
                "f32",
                "-o",
                &out,
                "--to",
                name,
                "--satfinite",
                "--threads",
                "2",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let b = std::fs::read(d.join(&out)).unwrap();
        let got: Vec<u64> = match name {
            "e2m1" => b
                .iter()
                .flat_map(|x| [(x & 15) as u64, (x >> 4) as u64])
                .collect(),
            "e2m3" | "e3m2" => b
                .chunks(3)
                .flat_map(|c| {
                    let w = c[0] as u64 | (c[1] as u64) << 8 | (c[2] as u64) << 16;
                    (0..4).map(move |k| (w >> (6 * k)) & 63)
                })
                .collect(),
            _ => b.iter().map(|&x| x as u64).collect(),
        };
        check_elements(&v, &got, &formats_roundtrip(&f, Rounding::RN));
    }
}

#[test]
fn bad_inputs_exit_2_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy(&d.join("ok.npy"), "<f4", &[4], &f32_bytes(&[1.0; 4]));
    let ok = std::fs::read(d.join("ok.npy")).unwrap();
    std::fs::write(d.join("trunc.npy"), &ok[..30]).unwrap();
    std::fs::write(d.join("short.npy"), &ok[..ok.len() - 2]).unwrap();
    npy(&d.join("mismatch.npy"), "<f4", &[5], &f32_bytes(&[1.0; 4]));
    npy(&d.join("complex.npy"), "<c8", &[2], &[0; 16]);
    npy(&d.join("str.npy"), "<U3", &[2], &[0; 24]);
    write_safetensors(
        &d.join("ok.safetensors"),
        &[("a", "F32", vec![4], f32_bytes(&[1.0; 4]))],
        None,
    );
    let st = std::fs::read(d.join("ok.safetensors")).unwrap();
    std::fs::write(d.join("trunc.safetensors"), &st[..12]).unwrap();
    let mut bad = st.clone();
    bad[8] = b'#';
    std::fs::write(d.join("corrupt.safetensors"), bad).unwrap();
    std::fs::write(d.join("data.safetensors"), &st[..st.len() - 1]).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["convert", "trunc.npy", "-o", "o.npy", "--to", "f16"],
            "truncated",
        ),
        (
            &["convert", "short.npy", "-o", "o.npy", "--to", "f16"],
            "truncated file",
        ),
        (
            &["convert", "mismatch.npy", "-o", "o.npy", "--to", "f16"],
            "shape [5] of <f4 needs 20 bytes of data but the file has 16",
        ),
        (
            &["convert", "complex.npy", "-o", "o.npy", "--to", "f16"],
            "\"<c8\" cannot be converted",
        ),
        (
            &["convert", "str.npy", "-o", "o.npy", "--to", "f16"],
            "\"<U3\" cannot be converted",
        ),
        (
            &[
                "convert",
                "trunc.safetensors",
                "-o",
                "o.safetensors",
                "--to",
                "f16", "--all",
            ],
            "truncated header",
        ),
        (
            &[
                "convert",
                "corrupt.safetensors",
                "-o",
                "o.safetensors",
                "--to",
                "f16", "--all",
            ],
            "JSON header is invalid",
        ),
        (
            &[
                "convert",
                "data.safetensors",
                "-o",
                "o.safetensors",
                "--to",
                "f16", "--all",
            ],
            "truncated file",
        ),
        (
            &["convert", "ok.npy", "-o", "ok.npy", "--to", "f16"],
            "is the input file",
        ),
        (
            &["convert", "ok.npy", "-o", "./ok.npy", "--to", "f16"],
            "is the input file",
        ),
        (
            &["convert", "ok.npy", "-o", "o.safetensors", "--to", "f16"],
            "same kind of file",
        ),
        (
            &["convert", "missing.npy", "-o", "o.npy", "--to", "f16"],
            "missing.npy",
        ),
        (
            &["convert", "ok.npy", "-o", "o.npy"],
            "the following required arguments were not provided: <--to <FMT>|--cvt <FORM>|--recipe <NAME>|--dequantize>",
        ),
        // What clap checks: --to or --cvt, not both; --cvt without the --to modifiers;
        // ranges and value sets.
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--to",
                "f16",
                "--cvt",
                "cvt.rn.f16.f32",
            ],
            "the argument '--to <FMT>' cannot be used with '--cvt <FORM>'",
        ),
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--cvt",
                "cvt.rn.f16.f32",
                "--sat",
            ],
            "the argument '--cvt <FORM>' cannot be used with '--sat'",
        ),
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--to",
                "f16",
                "--mode",
                "rs",
                "--rbits-width",
                "33",
            ],
            "invalid value '33' for '--rbits-width <N>': 33 is not in 1..=32",
        ),
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--to",
                "f16",
                "--mode",
                "rq",
            ],
            "invalid value 'rq' for '--mode <MODE>'; [possible values: rn, rna, rz, rm, rp, rs, rni, rzi, rmi, rpi]",
        ),
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--to",
                "e2m1",
                "--block",
                "32",
                "--scale-rule",
                "nearest",
            ],
            "invalid value 'nearest' for '--scale-rule <RULE>'; [possible values: floor, rceil, ceil, even]",
        ),
        (
            &["convert", "ok.npy", "-o", "o.npy", "--to", "e9m9"],
            "unknown format \"e9m9\"",
        ),
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--cvt",
                "cvt.rn.e5m2x2.f32",
            ],
            "not a legal PTX form",
        ),
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--cvt",
                "cvt.rn.bf16.f16",
            ],
            "converts f16 elements, but the data is f32",
        ),
        (
            &[
                "convert",
                "ok.npy",
                "-o",
                "o.npy",
                "--cvt",
                "cvt.rn.satfinite.e2m1x2",
            ],
            "--cvt",
        ),
        (
            &[
                "convert",
                "ok.safetensors",
                "-o",
                "o.safetensors",
                "--to",
                "ue4m3", "--all",
            ],
            "no dtype for ue4m3",
        ),
    ];
    for (args, needle) in cases {
        fails(d, args, needle);
    }
    // The inputs are untouched.
    assert_eq!(std::fs::read(d.join("ok.npy")).unwrap(), ok);
}

#[cfg(unix)]
#[test]
fn read_only_output_folder() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy(&d.join("ok.npy"), "<f4", &[4], &f32_bytes(&[1.0; 4]));
    let ro = d.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let probe = ro.join("probe");
    if std::fs::write(&probe, b"x").is_ok() {
        // Root: permission bits are not enforced.
        let _ = std::fs::remove_file(&probe);
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!("skipped: running with permissions not enforced");
        return;
    }
    let (code, _, err) = gpucvt(d, &["convert", "ok.npy", "-o", "ro/o.npy", "--to", "f16"]);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code, 2);
    assert!(err.contains("cannot create the output ro/o.npy"), "{err}");
    assert!(listing(&ro).is_empty());
}

#[test]
fn dry_run_and_kept_tensors_in_the_text_summary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_safetensors(
        &d.join("m.safetensors"),
        &[
            ("w", "F32", vec![2, 32], f32_bytes(&values(64))),
            ("s", "F32", vec![], f32_bytes(&[2.0])),
            ("ids", "I64", vec![2], vec![0; 16]),
        ],
        None,
    );
    let args = [
        "convert",
        "m.safetensors",
        "-o",
        "o.safetensors",
        "--to",
        "e4m3",
        "--satfinite",
        "--block",
        "32",
        "--all",
    ];
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let before = listing(d);
    let (code, out, err) = gpucvt(d, &dry);
    assert_eq!(code, 0, "{err}");
    assert_eq!(listing(d), before, "a dry run writes nothing");
    assert!(out.contains("dry run: nothing written"), "{out}");
    assert!(out.contains("convert F32 -> F8_E4M3"), "{out}");
    assert!(out.contains("64 + 2 scales"), "{out}");
    assert!(
        out.contains("keep: a scalar cannot be block-scaled"),
        "{out}"
    );
    assert!(out.contains("keep: integer dtype I64"), "{out}");
    let (code, out, err) = gpucvt(d, &args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kept unchanged"), "{out}");
    assert!(
        out.contains("  s: a scalar cannot be block-scaled"),
        "{out}"
    );
    let mut strict = args.to_vec();
    strict.push("--strict");
    fails(
        d,
        &strict,
        "tensor \"s\": a scalar cannot be block-scaled (--strict",
    );
}

/// A Llama-shaped file with everything a checkpoint holds beside its linear layers (finite
/// values: `--strict` refuses the NaN-scale blocks an infinity would give under MX scales).
fn checkpoint(d: &Path) -> Vec<(&'static str, Vec<usize>)> {
    let tensors: Vec<(&str, Vec<usize>)> = vec![
        ("model.embed_tokens.weight", vec![16, 32]),
        ("model.layers.0.input_layernorm.weight", vec![32]),
        ("model.layers.0.self_attn.q_proj.weight", vec![32, 32]),
        ("model.layers.0.self_attn.q_proj.bias", vec![32]),
        ("model.layers.0.self_attn.rotary_emb.inv_freq", vec![16]),
        ("model.layers.0.mlp.gate.weight", vec![4, 32]),
        ("model.layers.0.mlp.experts.0.up_proj.weight", vec![64, 32]),
        ("model.layers.0.mlp.experts.gate_up_proj", vec![4, 64, 32]),
        ("model.norm.weight", vec![32]),
        ("lm_head.weight", vec![16, 32]),
        ("logit_scale", vec![]),
    ];
    let data: Vec<(&str, &str, Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(n, shape)| {
            let count = shape.iter().product::<usize>();
            let finite: Vec<f32> = values(count)
                .into_iter()
                .map(|v| if v.is_finite() { v } else { 2.0 })
                .collect();
            (*n, "F32", shape.clone(), f32_bytes(&finite))
        })
        .collect();
    write_safetensors(&d.join("m.safetensors"), &data, None);
    tensors
}

#[test]
fn by_default_only_linear_weights_are_converted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tensors = checkpoint(d);
    let base = [
        "convert",
        "m.safetensors",
        "-o",
        "o.safetensors",
        "--recipe",
        "mxfp8",
    ];
    let with = |more: &[&'static str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(more);
        a
    };
    let (code, out, err) = gpucvt(d, &with(&["--json", "--strict"]));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let converted: Vec<&str> = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        converted,
        [
            "model.layers.0.self_attn.q_proj.weight",
            "model.layers.0.mlp.experts.0.up_proj.weight"
        ]
    );
    let kept = v["kept"].as_array().unwrap();
    assert_eq!(kept.len(), tensors.len() - 2);
    let reason = |name: &str| {
        let k = kept.iter().find(|k| k["name"] == name).unwrap();
        assert_eq!(k["by_default"], true, "{k}");
        k["reason"].as_str().unwrap().to_string()
    };
    for (name, why) in [
        ("model.embed_tokens.weight", "an embedding"),
        ("model.layers.0.input_layernorm.weight", "part of a norm"),
        ("model.layers.0.self_attn.q_proj.bias", "a 1-d tensor"),
        (
            "model.layers.0.self_attn.rotary_emb.inv_freq",
            "a rotary table",
        ),
        ("model.layers.0.mlp.gate.weight", "router"),
        (
            "model.layers.0.mlp.experts.gate_up_proj",
            "more than two dimensions",
        ),
        ("model.norm.weight", "part of a norm"),
        ("lm_head.weight", "the output head"),
        ("logit_scale", "a 0-d tensor"),
    ] {
        assert!(reason(name).contains(why), "{name}: {}", reason(name));
    }
    assert!(v["copied"].as_array().unwrap().is_empty());
    // The kept tensors are the input's bytes, and no scale tensor is added for them.
    let (_, input) = read_safetensors(&d.join("m.safetensors"));
    let (_, output) = read_safetensors(&d.join("o.safetensors"));
    for (name, dtype, shape, bytes) in &input {
        let o = output.iter().find(|o| &o.0 == name).unwrap();
        if converted.contains(&name.as_str()) {
            assert_eq!(o.1, "F8_E4M3", "{name}");
        } else {
            assert_eq!((&o.1, &o.2, &o.3), (dtype, shape, bytes), "{name}");
            assert!(
                !output.iter().any(|o| o.0 == format!("{name}_scale")),
                "{name}"
            );
        }
    }
    assert_eq!(output.len(), input.len() + 2, "two scale tensors");
    // The text lists the default's kept tensors apart from the refused ones.
    let (code, out, err) = gpucvt(d, &base);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("kept unchanged (not linear layers' weights; --tensor or --all converts them):\n  model.embed_tokens.weight: an embedding"),
        "{out}"
    );
    assert!(!out.contains("the conversion cannot take them"), "{out}");
    // The plan says the same.
    let (code, out, err) = gpucvt(d, &with(&["--dry-run", "--json"]));
    assert_eq!(code, 0, "{err}");
    let plan: Value = serde_json::from_str(&out).unwrap();
    let actions: Vec<&str> = plan["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions.iter().filter(|a| **a == "convert").count(), 2);
    assert_eq!(
        actions.iter().filter(|a| **a == "keep").count(),
        tensors.len() - 2
    );
    // --all: every tensor is a candidate again, and the refusals are the conversion's.
    let (code, out, err) = gpucvt(d, &with(&["--all", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // (Only the scalar and the 16 elements of inv_freq do not fill a block of 32.)
    assert_eq!(v["tensors"].as_array().unwrap().len(), tensors.len() - 2);
    assert!(v["kept"]
        .as_array()
        .unwrap()
        .iter()
        .all(|k| k["by_default"] == false));
    // --tensor chooses by name alone.
    let (code, out, err) = gpucvt(d, &with(&["--tensor", "lm_head.weight", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tensors"][0]["name"], "lm_head.weight");
    assert_eq!(v["copied"].as_array().unwrap().len(), tensors.len() - 1);
    // --exclude still applies to the default choice.
    let (code, out, err) = gpucvt(d, &with(&["--exclude", "*experts*", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tensors"].as_array().unwrap().len(), 1);
    fails(
        d,
        &with(&["--all", "--tensor", "lm_head.weight"]),
        "cannot be used with",
    );
    // A file without a linear layer's weight names its tensors' reasons and the options.
    write_safetensors(
        &d.join("x.safetensors"),
        &[("x", "F32", vec![2, 32], f32_bytes(&values(64)))],
        None,
    );
    fails(
        d,
        &["convert", "x.safetensors", "-o", "y.safetensors", "--to", "bf16"],
        "no tensor of x.safetensors is chosen: by default only linear layers' weights are converted, and none of its tensors can be converted as one (\"x\": not a weight: its name does not end in \"weight\"); name the tensors to convert (--tensor) or convert them all (--all)",
    );
}

#[test]
fn special_outputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("x.bin"), f32_bytes(&values(8))).unwrap();
    fails(
        d,
        &[
            "convert",
            "x.bin",
            "--from",
            "f32",
            "-o",
            "/dev/null",
            "--to",
            "bf16",
        ],
        "the output /dev/null is a character device",
    );
    assert!(std::fs::metadata("/dev/null").is_ok_and(|m| !m.is_file()));
    fails(
        d,
        &["sweep", "cvt.rn.f16.f32", "--out", "/dev/null"],
        "the output /dev/null is a character device",
    );
}

/// SIGTERM while a conversion writes: exit code 130 and no temporary file left.
#[cfg(unix)]
#[test]
fn an_interrupted_conversion_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // f64 with block scaling goes through the exact core element by element: slow enough
    // to be caught while it writes.
    let n = 1 << 22;
    let data: Vec<u8> = (0..n)
        .flat_map(|i| (i as f64 * 0.37).to_le_bytes())
        .collect();
    std::fs::write(d.join("x.bin"), data).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .current_dir(d)
        .args([
            "convert",
            "x.bin",
            "--from",
            "f64",
            "-o",
            "y.bin",
            "--to",
            "e4m3",
            "--satfinite",
            "--block",
            "32",
            "--threads",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let temporary = || {
        listing(d)
            .into_iter()
            .any(|n| n.starts_with(".y.bin.") && n.ends_with(".gpucvt-tmp"))
    };
    let start = std::time::Instant::now();
    while !temporary() && start.elapsed().as_secs() < 30 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    if child.try_wait().unwrap().is_some() {
        // It finished before it could be caught: nothing to test on this machine.
        eprintln!("the conversion finished before the signal; skipped");
        return;
    }
    assert!(
        temporary(),
        "the temporary (named after y.bin) exists while converting"
    );
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!temporary(), "{:?}", listing(d));
    assert!(!d.join("y.bin").exists());
}

#[test]
fn many_tensors_text_lists_the_first_ten_thousand() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 10_005;
    let names: Vec<String> = (0..n).map(|i| format!("t{i:05}")).collect();
    let tensors: Vec<(&str, &str, Vec<usize>, Vec<u8>)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let v: Vec<f32> = (0..32).map(|j| (i * 32 + j) as f32 / 7.0).collect();
            (name.as_str(), "F32", vec![32], f32_bytes(&v))
        })
        .collect();
    write_safetensors(&d.join("m.safetensors"), &tensors, None);
    let args = [
        "convert",
        "m.safetensors",
        "-o",
        "o.safetensors",
        "--to",
        "e4m3",
        "--satfinite",
        "--block",
        "32",
        "--all",
    ];
    let (code, out, err) = gpucvt(d, &args);
    assert_eq!(code, 0, "{err}");
    let rows = out
        .lines()
        .filter(|l| l.starts_with("t0") || l.starts_with("t1"))
        .count();
    assert_eq!(rows, 10_000, "{}", &out[..out.len().min(2000)]);
    // The worst first: listed in ascending SQNR.
    let sqnr: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with('t'))
        .filter_map(|l| l.split(" dB").next()?.rsplit(' ').next()?.parse().ok())
        .collect();
    assert_eq!(sqnr.len(), 10_000);
    assert!(sqnr.windows(2).all(|w| w[0] <= w[1]), "worst first");
    assert!(
        out.contains(
            "(5 more converted tensors not listed: the 10,000 worst are; --json lists all)"
        ),
        "{}",
        &out[out.len().saturating_sub(2000)..]
    );
    assert!(
        out.contains("elements         320,160"),
        "the totals count all"
    );
    let mut json = args.to_vec();
    json.push("--json");
    let (code, out, err) = gpucvt(d, &json);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let listed = v["tensors"].as_array().unwrap();
    assert_eq!(listed.len(), n);
    assert_eq!(listed[n - 1]["name"], "t10004");
    assert_eq!(listed[n - 1]["scale"], "t10004_scale");
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let (code, out, err) = gpucvt(d, &dry);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("(5 more tensors not listed"),
        "{}",
        &out[out.len().saturating_sub(500)..]
    );
    // Every converted tensor and its scales are where the header says, in the output read
    // back: the last one equals the same tensor converted alone.
    write_safetensors(&d.join("one.safetensors"), &tensors[n - 1..], None);
    let mut one = args.to_vec();
    one[1] = "one.safetensors";
    one[3] = "one-o.safetensors";
    let (code, _, err) = gpucvt(d, &one);
    assert_eq!(code, 0, "{err}");
    let (_, all) = read_safetensors(&d.join("o.safetensors"));
    let (_, alone) = read_safetensors(&d.join("one-o.safetensors"));
    assert_eq!(all.len(), 2 * n);
    assert_eq!(all[2 * n - 2..], alone[..]);
}

#[test]
fn npy_to_the_fnuz_formats() {
    // One byte per element; -0 and a tiny negative value give +0, NaN and infinity the one
    // NaN 0x80, an overflow NaN (rn) or +-max (--satfinite).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = [
        1.5f32,
        -0.0,
        -1e-30,
        f32::NAN,
        f32::INFINITY,
        1e6,
        -57344.0,
        -1.5,
    ];
    npy(&d.join("x.npy"), "<f4", &[8], &f32_bytes(&v));
    let (code, _, err) = gpucvt(d, &["convert", "x.npy", "-o", "y.npy", "--to", "e5m2fnuz"]);
    assert_eq!(code, 0, "{err}");
    let (header, data) = npy_payload(&d.join("y.npy"));
    assert!(header.contains("'|u1'"), "{header}");
    assert_eq!(data, [0x42, 0x00, 0x00, 0x80, 0x80, 0x80, 0xff, 0xc2]);
    let (code, _, err) = gpucvt(
        d,
        &[
            "convert",
            "x.npy",
            "-o",
            "z.npy",
            "--to",
            "float8_e5m2fnuz",
            "--satfinite",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (_, data) = npy_payload(&d.join("z.npy"));
    assert_eq!(data, [0x42, 0x00, 0x00, 0x80, 0x7f, 0x7f, 0xff, 0xc2]);
}

/// `sweep --out` and `--units-out` write as `convert` does: a replaced file keeps its mode,
/// a read-only one is refused and left as it was.
#[cfg(unix)]
#[test]
fn sweep_outputs_keep_the_mode_of_the_file_they_replace() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("r.bin");
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (code, _, err) = gpucvt(d, &["sweep", "cvt.f32.f16", "--out", "r.bin"]);
    assert_eq!(code, 0, "{err}");
    let m = std::fs::metadata(&out).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    assert_eq!(m.len(), 65536 * 4);
    let locked = d.join("locked.bin");
    std::fs::write(&locked, b"keep").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    let (code, _, err) = gpucvt(d, &["sweep", "cvt.f32.f16", "--out", "locked.bin"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("locked.bin") && err.contains("read-only"),
        "{err}"
    );
    assert_eq!(std::fs::read(&locked).unwrap(), b"keep");
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("gpucvt"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
