//! End-to-end tests of `gpucvt convert --recipe` and `--dequantize`: every recipe on a small
//! `.safetensors` file (the scale tensors' dtypes and shapes, the metadata, the printed
//! expansion), the dequantized round trip against the summary's error statistics, `.npy`
//! sidecars, `.npy` and raw dequantization against the `.safetensors` path, and the errors
//! of combinations that do not fit.

use crate::common::gpucvt_in as gpucvt;

use serde_json::{json, Value};
use std::path::Path;

type Tensor = (String, String, Vec<usize>, Vec<u8>);

fn write_safetensors(path: &Path, tensors: &[(&str, &str, Vec<usize>, Vec<u8>)]) {
    let mut h = serde_json::Map::new();
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

/// The metadata and the tensors (in name order).
fn read_safetensors(path: &Path) -> (Value, Vec<Tensor>) {
    let b = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let h: serde_json::Map<String, Value> = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let data = &b[8 + n..];
    let mut meta = Value::Null;
    let mut out = Vec::new();
    for (k, v) in h {
        if k == "__metadata__" {
            meta = v;
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

fn get<'a>(ts: &'a [Tensor], name: &str) -> &'a Tensor {
    ts.iter()
        .find(|t| t.0 == name)
        .unwrap_or_else(|| panic!("tensor {name} present"))
}

/// Values over many binades, a few exact powers of two, no NaN or infinity (the error
/// statistics cover finite elements).
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut x = 0x9e37_79b9u32 ^ seed;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 29 == 0 {
                2f32.powi((i % 7) as i32 - 3)
            } else {
                let m = x as f32 / u32::MAX as f32 - 0.5;
                m * 2f32.powi((x % 9) as i32 - 4)
            }
        })
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// (recipe, expansion, element dtype, scale dtype, scale shape of a [4, 64] tensor, the
/// metadata's description).
type RecipeRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [usize],
    &'static str,
);
const RECIPES: [RecipeRow; 7] = [
    (
        "mxfp8",
        "--to e4m3 --satfinite --block 32 --scale ue8m0 --scale-rule floor",
        "F8_E4M3",
        "F8_E8M0",
        &[4, 2],
        "block=32 axis=-1 scale=ue8m0 rule=floor second_level=false layout=rows",
    ),
    (
        "mxfp6",
        "--to e2m3 --satfinite --block 32 --scale ue8m0 --scale-rule floor",
        "F6_E2M3",
        "F8_E8M0",
        &[4, 2],
        "block=32 axis=-1 scale=ue8m0 rule=floor second_level=false layout=rows",
    ),
    (
        "mxfp4",
        "--to e2m1 --satfinite --block 32 --scale ue8m0 --scale-rule floor",
        "F4",
        "F8_E8M0",
        &[4, 2],
        "block=32 axis=-1 scale=ue8m0 rule=floor second_level=false layout=rows",
    ),
    (
        "nvfp4",
        "--to e2m1 --satfinite --block 16 --scale ue4m3 --scale-2",
        "F4",
        "F8_E4M3",
        &[4, 4],
        "block=16 axis=-1 scale=ue4m3 rule=floor second_level=true layout=rows",
    ),
    (
        "fp8-block128",
        "--to e4m3 --satfinite --block 128x128 --scale f32",
        "F8_E4M3",
        "F32",
        &[1, 1],
        "block=128x128 axis=-1 scale=f32 rule=floor second_level=false layout=rows",
    ),
    (
        "fp8-tensor",
        "--to e4m3 --satfinite --block tensor --scale f32",
        "F8_E4M3",
        "F32",
        &[],
        "block=tensor axis=-1 scale=f32 rule=floor second_level=false layout=rows",
    ),
    (
        "fp8-row",
        "--to e4m3 --satfinite --block row --scale f32",
        "F8_E4M3",
        "F32",
        &[4, 1],
        "block=row axis=-1 scale=f32 rule=floor second_level=false layout=rows",
    ),
];

#[test]
fn every_recipe_and_its_dequantized_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = values(256, 1);
    // "keep": a shape no recipe's blocks fit (3 elements, one axis); copied unchanged.
    let keep = f32_bytes(&[1.5, -2.0, 3.0]);
    write_safetensors(
        &d.join("m.safetensors"),
        &[
            ("w", "F32", vec![4, 64], f32_bytes(&w)),
            ("keep", "I32", vec![3], keep.clone()),
        ],
    );
    for (name, expansion, dtype, sdtype, sshape, describe) in RECIPES {
        let out = format!("{name}.safetensors");
        let (code, text, err) = gpucvt(
            d,
            &[
                "convert",
                "m.safetensors",
                "-o",
                &out,
                "--recipe",
                name,
                "--all",
            ],
        );
        assert_eq!(code, 0, "{name}: {err}");
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            format!("m.safetensors -> {out}  (recipe {name}: {expansion})"),
            "{name}"
        );
        // The JSON run writes the same file and carries the statistics.
        let jout = format!("{name}-j.safetensors");
        let (code, js, err) = gpucvt(
            d,
            &[
                "convert",
                "m.safetensors",
                "-o",
                &jout,
                "--recipe",
                name,
                "--json",
                "--all",
            ],
        );
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(
            std::fs::read(d.join(&out)).unwrap(),
            std::fs::read(d.join(&jout)).unwrap(),
            "{name}: text and JSON runs wrote different files"
        );
        let summary: Value = serde_json::from_str(&js).unwrap();
        let tw = summary["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "w")
            .unwrap();
        // Read from the text with Rust's correctly rounded parser (serde_json's default
        // float parsing may be one ulp off).
        let at = js.find("\"name\": \"w\"").unwrap();
        let key = "\"max_abs_error\": ";
        let from = at + js[at..].find(key).unwrap() + key.len();
        let token: String = js[from..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || ".eE+-".contains(*c))
            .collect();
        let max_err: f64 = token.parse().unwrap();
        assert!(max_err > 0.0, "{name}: {tw}");
        assert_eq!(
            max_err as f32,
            tw["stats"]["max_abs_error"].as_f64().unwrap() as f32
        );

        let (meta, ts) = read_safetensors(&d.join(&out));
        assert_eq!(meta["gpucvt.scales.w"], describe, "{name}: {meta}");
        assert_eq!(meta.get("gpucvt.scales.keep"), None, "{name}: {meta}");
        let (_, dt, shape, _) = get(&ts, "w");
        assert_eq!(
            (dt.as_str(), shape.as_slice()),
            (dtype, &[4usize, 64][..]),
            "{name}"
        );
        let (_, dt, shape, bytes) = get(&ts, "w_scale");
        assert_eq!((dt.as_str(), shape.as_slice()), (sdtype, sshape), "{name}");
        let count: usize = sshape.iter().product();
        assert_eq!(
            bytes.len(),
            count * if sdtype == "F32" { 4 } else { 1 },
            "{name}"
        );
        if name == "nvfp4" {
            let (_, dt, shape, bytes) = get(&ts, "w_scale_2");
            assert_eq!((dt.as_str(), shape.len(), bytes.len()), ("F32", 0, 4));
            // amax / (448 × 6).
            let amax = w.iter().fold(0f32, |m, v| m.max(v.abs()));
            assert_eq!(bytes.as_slice(), (amax / 2688.0).to_le_bytes());
        } else {
            assert!(ts.iter().all(|t| t.0 != "w_scale_2"), "{name}");
        }
        assert_eq!(get(&ts, "keep").3, keep, "{name}");

        // Dequantized to f64, every element is exactly q × s (× s2): its largest distance
        // from the input is the summary's max_abs_error.
        let back = format!("{name}-f64.safetensors");
        let (code, _, err) = gpucvt(
            d,
            &["convert", &out, "-o", &back, "--dequantize", "--to", "f64"],
        );
        assert_eq!(code, 0, "{name}: {err}");
        let (meta, ts) = read_safetensors(&d.join(&back));
        let mut names: Vec<&str> = ts.iter().map(|t| t.0.as_str()).collect();
        names.sort();
        assert_eq!(names, ["keep", "w"], "{name}: scale tensors dropped");
        assert!(
            meta.as_object()
                .is_none_or(|m| m.keys().all(|k| !k.starts_with("gpucvt.scales."))),
            "{name}: {meta}"
        );
        let (_, dt, shape, bytes) = get(&ts, "w");
        assert_eq!((dt.as_str(), shape.as_slice()), ("F64", &[4usize, 64][..]));
        let deq: Vec<f64> = bytes
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let worst = deq
            .iter()
            .zip(&w)
            .map(|(y, &x)| (y - x as f64).abs())
            .fold(0f64, f64::max);
        assert_eq!(worst, max_err, "{name}");
        assert_eq!(get(&ts, "keep").3, keep, "{name}");
    }
}

/// An input `.npy` file, written by the tests' own writer.
fn npy(path: &Path, shape: &[u64], data: &[u8]) {
    std::fs::write(path, gpucvt_reference::npy_bytes("<f4", shape, data)).unwrap();
}

fn npy_header(path: &Path) -> String {
    let b = std::fs::read(path).unwrap();
    let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
    String::from_utf8_lossy(&b[10..10 + hl]).into_owned()
}

#[test]
fn npy_sidecars_for_both_levels() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(4 * 64, 2);
    npy(&d.join("x.npy"), &[4, 64], &f32_bytes(&x));
    let (code, out, err) = gpucvt(d, &["convert", "x.npy", "-o", "q.npy", "--recipe", "nvfp4"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("x.npy -> q.npy  (recipe nvfp4: --to e2m1"),
        "{out}"
    );
    let h = npy_header(&d.join("q_scale.npy"));
    assert!(h.contains("'shape': (4, 4)") && h.contains("|u1"), "{h}");
    let h = npy_header(&d.join("q_scale_2.npy"));
    assert!(h.contains("'shape': ()") && h.contains("<f4"), "{h}");
    let b = std::fs::read(d.join("q_scale_2.npy")).unwrap();
    let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert_eq!(b[b.len() - 4..], (amax / 2688.0).to_le_bytes());

    // One level: no _scale_2 sidecar; fp8-row: f32 scales per row.
    let (code, _, err) = gpucvt(d, &["convert", "x.npy", "-o", "m.npy", "--recipe", "mxfp8"]);
    assert_eq!(code, 0, "{err}");
    assert!(d.join("m_scale.npy").exists() && !d.join("m_scale_2.npy").exists());
    let (code, _, err) = gpucvt(
        d,
        &["convert", "x.npy", "-o", "r.npy", "--recipe", "fp8-row"],
    );
    assert_eq!(code, 0, "{err}");
    let h = npy_header(&d.join("r_scale.npy"));
    assert!(h.contains("'shape': (4, 1)") && h.contains("<f4"), "{h}");

    // Dequantization of an |u1 array takes its element format from the metadata; without
    // it (another program's file), it needs it, and says so.
    let (code, _, err) = gpucvt(d, &["convert", "q.npy", "-o", "d.npy", "--dequantize"]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_file(d.join("d.npy")).unwrap();
    std::fs::remove_file(d.join("q.npy.gpucvt.json")).unwrap();
    let (code, _, err) = gpucvt(d, &["convert", "q.npy", "-o", "d.npy", "--dequantize"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "q.npy: dtype |u1 holds the codes of some element format: say which with --from"
        ),
        "{err}"
    );
    assert!(!d.join("d.npy").exists());
}

/// The f64 values of an output's data (its last `8 × n` bytes).
fn f64s(bytes: &[u8], n: usize) -> Vec<f64> {
    bytes[bytes.len() - 8 * n..]
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The `max_abs_error` of the first tensor of a `--json` summary, parsed from the text with
/// Rust's correctly rounded parser.
fn max_abs_error(js: &str) -> f64 {
    let key = "\"max_abs_error\": ";
    let from = js.find(key).unwrap() + key.len();
    let token: String = js[from..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || ".eE+-".contains(*c))
        .collect();
    token.parse().unwrap()
}

/// Quantizes `input` with `recipe` (`--json`; extra options `more`) and returns its
/// `max_abs_error`.
fn quantize(d: &Path, input: &str, output: &str, recipe: &str, more: &[&str]) -> f64 {
    let mut args = vec!["convert", input, "-o", output, "--recipe", recipe, "--json"];
    if input.ends_with(".safetensors") {
        args.push("--all");
    }
    args.extend_from_slice(more);
    let (code, js, err) = gpucvt(d, &args);
    assert_eq!(code, 0, "{args:?}: {err}");
    max_abs_error(&js)
}

/// Dequantizes (`--dequantize` and `more`) and returns the output's bytes.
fn dequantize(d: &Path, input: &str, output: &str, more: &[&str]) -> Vec<u8> {
    let mut args = vec!["convert", input, "-o", output, "--dequantize"];
    args.extend_from_slice(more);
    let (code, out, err) = gpucvt(d, &args);
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(out.contains("dequantize to"), "{out}");
    std::fs::read(d.join(output)).unwrap()
}

/// Every recipe's `.npy` and raw round trip, quantize → dequantize, gives the bytes the
/// `.safetensors` path gives for the same tensor, and (in f64, exact) its largest distance
/// from the input is the quantization's `max_abs_error`; the blocking given by the recipe,
/// spelled out option by option, or (`.npy`) read off the scale array.
#[test]
fn npy_and_raw_round_trips_equal_the_safetensors_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(4 * 64, 7);
    npy(&d.join("x.npy"), &[4, 64], &f32_bytes(&x));
    std::fs::write(d.join("x.bin"), f32_bytes(&x)).unwrap();
    write_safetensors(
        &d.join("m.safetensors"),
        &[("w", "F32", vec![4, 64], f32_bytes(&x))],
    );
    write_safetensors(
        &d.join("v.safetensors"),
        &[("w", "F32", vec![256], f32_bytes(&x))],
    );
    let worst = |deq: &[f64]| {
        deq.iter()
            .zip(&x)
            .map(|(y, &v)| (y - v as f64).abs())
            .fold(0f64, f64::max)
    };
    // (recipe, element format, the recipe's options one by one).
    let rows: [(&str, &str, &[&str]); 7] = [
        ("mxfp8", "e4m3", &["--block", "32"]),
        ("mxfp6", "e2m3", &["--block", "32"]),
        ("mxfp4", "e2m1", &["--block", "32", "--scale", "ue8m0"]),
        (
            "nvfp4",
            "e2m1",
            &["--block", "16", "--scale", "ue4m3", "--scale-2"],
        ),
        (
            "fp8-block128",
            "e4m3",
            &["--block", "128x128", "--scale", "f32"],
        ),
        (
            "fp8-tensor",
            "e4m3",
            &["--block", "tensor", "--scale", "f32"],
        ),
        ("fp8-row", "e4m3", &["--block", "row", "--scale", "f32"]),
    ];
    for (recipe, elem, spelled) in rows {
        // The safetensors path: [4, 64] and [256].
        let st_err = quantize(
            d,
            "m.safetensors",
            &format!("{recipe}.safetensors"),
            recipe,
            &[],
        );
        let st = dequantize(
            d,
            &format!("{recipe}.safetensors"),
            &format!("{recipe}-d.safetensors"),
            &["--to", "f64"],
        );
        let st = f64s(&st, 256);
        assert_eq!(worst(&st), st_err, "{recipe}");
        let st32 = dequantize(
            d,
            &format!("{recipe}.safetensors"),
            &format!("{recipe}-d32.safetensors"),
            &[],
        );
        let st32 = st32[st32.len() - 4 * 256..].to_vec();

        // .npy: the recipe, --from with the options one by one, --from alone.
        let q = format!("{recipe}.npy");
        let npy_err = quantize(d, "x.npy", &q, recipe, &[]);
        assert_eq!(npy_err, st_err, "{recipe}");
        let mut spelled_from = vec!["--to", "f64", "--from", elem];
        spelled_from.extend_from_slice(spelled);
        for (k, opts) in [
            vec!["--to", "f64", "--recipe", recipe],
            spelled_from,
            vec!["--to", "f64", "--from", elem],
        ]
        .into_iter()
        .enumerate()
        {
            let out = format!("{recipe}-d{k}.npy");
            let b = dequantize(d, &q, &out, &opts);
            assert!(
                npy_header(&d.join(&out))
                    .contains("'descr': '<f8', 'fortran_order': False, 'shape': (4, 64)"),
                "{recipe}"
            );
            assert_eq!(f64s(&b, 256), st, "{recipe} {opts:?}");
        }
        let b = dequantize(d, &q, &format!("{recipe}-d32.npy"), &["--recipe", recipe]);
        assert!(npy_header(&d.join(format!("{recipe}-d32.npy"))).contains("<f4"));
        assert_eq!(b[b.len() - 4 * 256..], st32[..], "{recipe}");

        // Raw (one axis: a tile needs two).
        if recipe == "fp8-block128" {
            continue;
        }
        let vst_err = quantize(
            d,
            "v.safetensors",
            &format!("{recipe}-v.safetensors"),
            recipe,
            &[],
        );
        let vst = dequantize(
            d,
            &format!("{recipe}-v.safetensors"),
            &format!("{recipe}-vd.safetensors"),
            &["--to", "f64"],
        );
        let vst = f64s(&vst, 256);
        let q = format!("{recipe}.bin");
        let raw_err = quantize(d, "x.bin", &q, recipe, &["--from", "f32"]);
        assert_eq!(raw_err, vst_err, "{recipe}");
        assert!(d.join(format!("{recipe}_scale.bin")).exists());
        let mut spelled_from = vec!["--to", "f64", "--from", elem];
        spelled_from.extend_from_slice(spelled);
        for (k, opts) in [vec!["--to", "f64", "--recipe", recipe], spelled_from]
            .into_iter()
            .enumerate()
        {
            let out = format!("{recipe}-d{k}.bin");
            let b = dequantize(d, &q, &out, &opts);
            assert_eq!(b.len(), 8 * 256, "{recipe}");
            let v = f64s(&b, 256);
            assert_eq!(v, vst, "{recipe} {opts:?}");
            assert_eq!(worst(&v), raw_err, "{recipe}");
        }
    }
}

/// Exit code 2, one `error:` line containing `needle`, and `absent` not written.
fn fails_without(dir: &Path, args: &[&str], needle: &str, absent: &str) {
    let (code, out, err) = gpucvt(dir, args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "{args:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.join(absent).exists(), "{args:?} wrote {absent}");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".gpucvt-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn npy_and_raw_dequantize_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(4 * 64, 8);
    npy(&d.join("x.npy"), &[4, 64], &f32_bytes(&x));
    std::fs::write(d.join("x.bin"), f32_bytes(&x)).unwrap();
    quantize(d, "x.npy", "q.npy", "mxfp8", &[]);
    quantize(d, "x.npy", "n.npy", "nvfp4", &[]);
    quantize(d, "x.bin", "q.bin", "mxfp8", &["--from", "f32"]);
    // These are the checks of files without gpucvt's metadata (another program's): with it,
    // the blocking is read from it (tests/units.rs).
    for m in ["q.npy", "n.npy", "q.bin"] {
        std::fs::remove_file(d.join(format!("{m}.gpucvt.json"))).unwrap();
    }
    let npy_run = |input: &'static str, more: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["convert", input, "-o", "e.npy", "--dequantize"];
        a.extend_from_slice(more);
        a
    };
    // The scales do not fit the blocking given.
    fails_without(
        d,
        &npy_run("q.npy", &["--from", "e4m3", "--block", "16"]),
        "q.npy: block 16 needs scales of shape [4, 4], but q_scale.npy has shape [4, 2]",
        "e.npy",
    );
    // A scale format whose dtype is not the file's.
    fails_without(
        d,
        &npy_run("q.npy", &["--from", "e4m3", "--scale", "f32"]),
        "q_scale.npy: the scales are |u1, but f32 scales are written as <f4",
        "e.npy",
    );
    // The recipe's element format against --from, and against the dtype's size.
    fails_without(
        d,
        &npy_run("q.npy", &["--recipe", "mxfp8", "--from", "e5m2"]),
        "--recipe mxfp8 quantizes to e4m3, but --from says e5m2",
        "e.npy",
    );
    fails_without(
        d,
        &npy_run("q.npy", &["--from", "bf16"]),
        "q.npy: dtype |u1 cannot hold bf16 encodings",
        "e.npy",
    );
    // NVFP4 without its second level, and a second level the options do not have.
    std::fs::rename(d.join("n_scale_2.npy"), d.join("saved.npy")).unwrap();
    fails_without(
        d,
        &npy_run("n.npy", &["--recipe", "nvfp4"]),
        "n.npy: its second-level scale n_scale_2.npy is missing",
        "e.npy",
    );
    std::fs::rename(d.join("saved.npy"), d.join("n_scale_2.npy")).unwrap();
    fails_without(
        d,
        &npy_run(
            "n.npy",
            &["--from", "e2m1", "--block", "16", "--scale", "ue4m3"],
        ),
        "n_scale_2.npy is there, but the block scaling has no second level",
        "e.npy",
    );
    // A second-level file that is not one f32.
    std::fs::copy(d.join("n_scale_2.npy"), d.join("saved.npy")).unwrap();
    std::fs::write(
        d.join("n_scale_2.npy"),
        gpucvt_reference::npy_bytes("<f4", &[2], &[0; 8]),
    )
    .unwrap();
    fails_without(
        d,
        &npy_run("n.npy", &["--recipe", "nvfp4"]),
        "n_scale_2.npy: a second-level scale file holds one f32 value (<f4, shape ()), not <f4 of shape [2]",
        "e.npy",
    );
    std::fs::rename(d.join("saved.npy"), d.join("n_scale_2.npy")).unwrap();
    // Codes with bits above the element format's.
    let mut codes = vec![0u8; 256];
    codes[5] = 0x1f;
    std::fs::write(
        d.join("s.npy"),
        gpucvt_reference::npy_bytes("|u1", &[4, 64], &codes),
    )
    .unwrap();
    std::fs::copy(d.join("q_scale.npy"), d.join("s_scale.npy")).unwrap();
    fails_without(
        d,
        &npy_run("s.npy", &["--from", "e2m1"]),
        "s.npy: element 5 is 0x1f, which is not a e2m1 encoding",
        "e.npy",
    );
    // Scales of a dtype the quantizer does not write.
    std::fs::write(
        d.join("s_scale.npy"),
        gpucvt_reference::npy_bytes("<i4", &[4, 2], &[0; 32]),
    )
    .unwrap();
    fails_without(
        d,
        &npy_run("s.npy", &["--from", "e2m1"]),
        "s_scale.npy: scales of dtype <i4 are none the quantizer writes",
        "e.npy",
    );
    // Shapes that say nothing about the blocking.
    std::fs::write(
        d.join("s_scale.npy"),
        gpucvt_reference::npy_bytes("|u1", &[3, 2], &[0; 6]),
    )
    .unwrap();
    fails_without(
        d,
        &npy_run("s.npy", &["--from", "e2m1"]),
        "s.npy: cannot tell how its scales s_scale.npy (shape [3, 2]) block it (shape [4, 64]); give --block (and --axis) or --recipe",
        "e.npy",
    );
    // No sidecar at all: the file looked for is named.
    std::fs::remove_file(d.join("s_scale.npy")).unwrap();
    fails_without(
        d,
        &npy_run("s.npy", &["--from", "e2m1"]),
        "s.npy: its block scales s_scale.npy are missing",
        "e.npy",
    );
    // Raw: the element format and the blocking are required; the sidecar's length must fit.
    let raw_run = |more: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["convert", "q.bin", "-o", "e.bin", "--dequantize"];
        a.extend_from_slice(more);
        a
    };
    fails_without(
        d,
        &raw_run(&["--block", "32"]),
        "q.bin is raw data (not .npy or .safetensors): give the format of its elements with --from",
        "e.bin",
    );
    fails_without(
        d,
        &raw_run(&["--from", "e4m3"]),
        "q.bin is raw data, which records neither its shape nor how it was blocked: give --block",
        "e.bin",
    );
    fails_without(
        d,
        &raw_run(&["--from", "e4m3", "--block", "16"]),
        "q.bin: block 16 over 256 elements needs 16 ue8m0 scales (16 bytes), but q_scale.bin has 8 bytes",
        "e.bin",
    );
    fails_without(
        d,
        &raw_run(&["--from", "e4m3", "--block", "32", "--scale", "f32"]),
        "q.bin: block 32 over 256 elements needs 8 f32 scales (32 bytes), but q_scale.bin has 8 bytes",
        "e.bin",
    );
    // Options that would be ignored, and outputs that cannot be.
    fails_without(
        d,
        &npy_run("q.npy", &["--from", "e4m3", "--axis", "0"]),
        "--axis needs --block or --recipe",
        "e.npy",
    );
    fails_without(
        d,
        &npy_run("q.npy", &["--recipe", "mxfp8", "--dry-run"]),
        "--dequantize has no dry run",
        "e.npy",
    );
    fails_without(
        d,
        &[
            "convert",
            "q.npy",
            "-o",
            "e.bin",
            "--dequantize",
            "--recipe",
            "mxfp8",
        ],
        "the output must be the same kind of file as the input: q.npy is npy, e.bin is raw",
        "e.bin",
    );
    fails_without(
        d,
        &[
            "convert",
            "q.npy",
            "-o",
            "q_scale.npy",
            "--dequantize",
            "--recipe",
            "mxfp8",
        ],
        "the output q_scale.npy is the input's scale file q_scale.npy",
        "e.npy",
    );
    fails_without(
        d,
        &npy_run("q.npy", &["--recipe", "mxfp8", "--to", "e4m3"]),
        "dequantize to f32, bf16, f16 or f64, not e4m3",
        "e.npy",
    );
    // A recipe with --to is still an error when quantizing.
    fails_without(
        d,
        &[
            "convert", "x.npy", "-o", "e.npy", "--recipe", "mxfp8", "--to", "e5m2",
        ],
        "--recipe mxfp8 sets --to",
        "e.npy",
    );
}

/// Exit code 2, one `error:` line containing `needle`, no output file.
fn fails(dir: &Path, args: &[&str], needle: &str) {
    let (code, out, err) = gpucvt(dir, args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "{args:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.join("e.safetensors").exists() && !dir.join("e.npy").exists());
}

/// A file whose data ends early, for every scaling the streamed quantizer does (one pass
/// and two, `f32` and 16-bit sources): a clear error and no output.
#[test]
fn truncated_inputs_of_every_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f16s: Vec<u8> = (0..256u16)
        .flat_map(|i| (0x3c00 + i).to_le_bytes())
        .collect();
    for (name, dtype, bytes) in [
        ("f32.safetensors", "F32", f32_bytes(&values(256, 5))),
        ("f16.safetensors", "F16", f16s),
    ] {
        write_safetensors(&d.join(name), &[("w", dtype, vec![4, 64], bytes)]);
        let b = std::fs::read(d.join(name)).unwrap();
        std::fs::write(d.join(name), &b[..b.len() - 2]).unwrap();
        for r in ["nvfp4", "fp8-tensor", "fp8-row", "fp8-block128", "mxfp4"] {
            let args = ["convert", name, "-o", "e.safetensors", "--recipe", r];
            fails(d, &args, "truncated file");
        }
    }
}

#[test]
fn combinations_that_do_not_fit_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_safetensors(
        &d.join("m.safetensors"),
        &[("w", "F32", vec![4, 64], f32_bytes(&values(256, 3)))],
    );
    let f64s: Vec<u8> = (0..64).flat_map(|i| (i as f64).to_le_bytes()).collect();
    write_safetensors(&d.join("d.safetensors"), &[("w", "F64", vec![2, 32], f64s)]);
    npy(&d.join("x.npy"), &[4, 64], &f32_bytes(&values(256, 4)));
    let m = ["convert", "m.safetensors", "-o", "e.safetensors", "--all"];
    let with =
        |more: &[&'static str]| -> Vec<&'static str> { m.iter().chain(more).copied().collect() };
    fails(
        d,
        &with(&["--recipe", "mxfp9"]),
        "invalid value 'mxfp9' for '--recipe <NAME>'",
    );
    fails(
        d,
        &with(&[
            "--to",
            "e4m3",
            "--block",
            "32",
            "--scale",
            "f32",
            "--scale-rule",
            "rceil",
        ]),
        "--scale-rule chooses ue8m0 (power-of-two) scales",
    );
    fails(
        d,
        &with(&["--to", "e4m3", "--block", "4x32", "--scale-layout", "swizzled"]),
        "the swizzled scale layout is for blocks of N along the last axis (MX, NVFP4), not --block 4x32",
    );
    fails(
        d,
        &with(&[
            "--to",
            "e4m3",
            "--block",
            "32",
            "--scale",
            "f32",
            "--scale-2",
        ]),
        "a second-level (per-tensor) scale goes with ue4m3 block scales (NVFP4), not f32",
    );
    fails(
        d,
        &[
            "convert",
            "d.safetensors",
            "-o",
            "e.safetensors",
            "--to",
            "e4m3",
            "--block",
            "32",
            "--scale",
            "f32",
            "--all",
        ],
        "block scales are computed on f32 values: f32, bf16 and f16 data only, not f64",
    );
    fails(
        d,
        &with(&["--to", "e4m3", "--block", "32", "--axis", "2", "--strict"]),
        "axis 2 is out of range for shape [4, 64] (2 axes)",
    );
    fails(
        d,
        &with(&["--to", "e4m3", "--block", "48", "--strict"]),
        "the last dimension 64 (shape [4, 64]) is not a multiple of the block size 48",
    );
    fails(
        d,
        &[
            "convert", "x.npy", "-o", "e.npy", "--to", "e4m3", "--block", "32", "--axis", "-3",
        ],
        "axis -3 is out of range for shape [4, 64] (2 axes)",
    );
    fails(
        d,
        &[
            "convert", "x.npy", "-o", "e.npy", "--to", "e4m3", "--block", "3", "--axis", "0",
        ],
        "dimension 0 4 (shape [4, 64]) is not a multiple of the block size 3",
    );
}

#[test]
fn ragged_tiles_of_a_3d_tensor_round_trip() {
    // Two 130×8 matrices in 128×8 tiles: each matrix's last tile has two rows, and the
    // second matrix is 2^20 times larger, so a tile that took the other matrix's rows would
    // show in the scales and in the error.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut w = values(2 * 130 * 8, 5);
    for v in &mut w[130 * 8..] {
        *v *= 1048576.0;
    }
    write_safetensors(
        &d.join("m.safetensors"),
        &[("w", "F32", vec![2, 130, 8], f32_bytes(&w))],
    );
    let args = [
        "convert",
        "m.safetensors",
        "-o",
        "q.safetensors",
        "--to",
        "e4m3",
        "--satfinite",
        "--block",
        "128x8",
        "--scale",
        "f32",
        "--json",
        "--all",
    ];
    let (code, js, err) = gpucvt(d, &args);
    assert_eq!(code, 0, "{err}");
    let (_, ts) = read_safetensors(&d.join("q.safetensors"));
    let (_, dt, shape, bytes) = get(&ts, "w_scale");
    assert_eq!(
        (dt.as_str(), shape.as_slice()),
        ("F32", &[2usize, 2, 1][..])
    );
    let scales: Vec<f32> = bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let amax = |m: usize, rows: std::ops::Range<usize>| {
        w[m * 1040 + rows.start * 8..m * 1040 + rows.end * 8]
            .iter()
            .fold(0f32, |a, v| a.max(v.abs()))
    };
    let want = [
        amax(0, 0..128) / 448.0,
        amax(0, 128..130) / 448.0,
        amax(1, 0..128) / 448.0,
        amax(1, 128..130) / 448.0,
    ];
    assert_eq!(scales, want);
    let (code, _, err) = gpucvt(
        d,
        &[
            "convert",
            "q.safetensors",
            "-o",
            "d.safetensors",
            "--dequantize",
            "--to",
            "f64",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (_, ts) = read_safetensors(&d.join("d.safetensors"));
    let deq: Vec<f64> = get(&ts, "w")
        .3
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let worst = deq
        .iter()
        .zip(&w)
        .map(|(y, &x)| (y - x as f64).abs())
        .fold(0f64, f64::max);
    let key = "\"max_abs_error\": ";
    let from = js.find(key).unwrap() + key.len();
    let token: String = js[from..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || ".eE+-".contains(*c))
        .collect();
    assert_eq!(worst, token.parse::<f64>().unwrap());
}

/// The tensor `name` of a `.safetensors` file: (dtype, shape, bytes).
fn tensor_of(path: &Path, name: &str) -> (String, Vec<usize>, Vec<u8>) {
    let (_, ts) = read_safetensors(path);
    let t = get(&ts, name);
    (t.1.clone(), t.2.clone(), t.3.clone())
}

fn has_tensor(path: &Path, name: &str) -> bool {
    read_safetensors(path).1.iter().any(|t| t.0 == name)
}

/// NVFP4 near zero (issue 41 §3), end to end: an all-zero tensor gets elements 0, the scale
/// 0x00 and s2 = 0 (TransformerEngine's rule) and dequantizes to zeros, in `.safetensors` and
/// `.npy`; bf16 subnormals with negative zeros and an all-subnormal f32 tensor get s2 =
/// 2^-121, the scale 0x08 and so the factor 2^127: codes worked out by hand (a bf16
/// subnormal m × 2^-133 becomes m / 64, rounded to e2m1 with ties to even), and exact
/// dequantized values.
#[test]
fn nvfp4_zero_and_tiny_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m: [u16; 16] = [
        0x0000, 0x8000, 0x0001, 0x8001, 0x0010, 0x8010, 0x0020, 0x8020, 0x0030, 0x8030, 0x0040,
        0x8040, 0x0060, 0x8060, 0x007f, 0x807f,
    ];
    let bf: Vec<u8> = m.iter().flat_map(|h| h.to_le_bytes()).collect();
    let tiny: Vec<f32> = (1..=16).map(|k| (k as f64 * 1e-42) as f32).collect();
    write_safetensors(
        &d.join("z.safetensors"),
        &[
            ("z", "F32", vec![1, 16], vec![0; 64]),
            ("b", "BF16", vec![1, 16], bf),
            ("t", "F32", vec![1, 16], f32_bytes(&tiny)),
        ],
    );
    let (code, js, err) = gpucvt(
        d,
        &[
            "convert",
            "z.safetensors",
            "-o",
            "q.safetensors",
            "--recipe",
            "nvfp4",
            "--json",
            "--all",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let q = d.join("q.safetensors");
    let s2_min = 2f32.powi(-121).to_le_bytes().to_vec();
    assert_eq!(tensor_of(&q, "z"), ("F4".into(), vec![1, 16], vec![0; 8]));
    assert_eq!(tensor_of(&q, "z_scale").2, [0x00]);
    assert_eq!(tensor_of(&q, "z_scale_2").2, 0f32.to_le_bytes());
    // Codes 0 8 0 8 0 8 1 9 2 10 2 10 3 11 4 12, two per byte, the first in the low nibble.
    let packed = [0x80, 0x80, 0x80, 0x91, 0xa2, 0xa2, 0xb3, 0xc4];
    assert_eq!(tensor_of(&q, "b").2, packed);
    assert_eq!(tensor_of(&q, "b_scale").2, [0x08]);
    assert_eq!(tensor_of(&q, "b_scale_2").2, s2_min);
    assert_eq!(tensor_of(&q, "t").2, [0; 8]);
    assert_eq!(tensor_of(&q, "t_scale").2, [0x08]);
    assert_eq!(tensor_of(&q, "t_scale_2").2, s2_min);
    let v: Value = serde_json::from_str(&js).unwrap();
    let t = &v["tensors"][2]["stats"];
    assert_eq!(
        (t["flushed_to_zero"].as_u64(), t["nan"].as_u64()),
        (Some(16), Some(0))
    );
    // Dequantized exactly: zeros, and value(code) × 2^-6 × 2^-121.
    dequantize(d, "q.safetensors", "back.safetensors", &["--to", "f64"]);
    let p = d.join("back.safetensors");
    assert_eq!(tensor_of(&p, "z").2, vec![0; 128]);
    assert!(f64s(&tensor_of(&p, "t").2, 16).iter().all(|&x| x == 0.0));
    let e2m1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let want: Vec<f64> = [0u8, 8, 0, 8, 0, 8, 1, 9, 2, 10, 2, 10, 3, 11, 4, 12]
        .iter()
        .map(|&c| {
            let v = e2m1[(c & 7) as usize] * 2f64.powi(-127);
            if c & 8 != 0 {
                -v
            } else {
                v
            }
        })
        .collect();
    let got = f64s(&tensor_of(&p, "b").2, 16);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.to_bits(), w.to_bits(), "{got:?}");
    }

    // The same zeros through .npy sidecars.
    npy(&d.join("z.npy"), &[1, 16], &[0; 64]);
    let (code, _, err) = gpucvt(
        d,
        &["convert", "z.npy", "-o", "zq.npy", "--recipe", "nvfp4"],
    );
    assert_eq!(code, 0, "{err}");
    let side = |f: &str, n: usize| {
        let b = std::fs::read(d.join(f)).unwrap();
        b[b.len() - n..].to_vec()
    };
    assert_eq!(side("zq.npy", 16), vec![0; 16]);
    assert_eq!(side("zq_scale.npy", 1), [0]);
    assert_eq!(side("zq_scale_2.npy", 4), 0f32.to_le_bytes());
    let back = dequantize(d, "zq.npy", "zb.npy", &["--recipe", "nvfp4", "--to", "f64"]);
    assert!(f64s(&back, 16).iter().all(|&x| x == 0.0));
}

/// A `-inf` mask (issue 41 §4) under f32, bf16 and ue4m3 block scales: its block's scale
/// would be NaN (its row's, the whole tensor's), so the tensor is kept unquantized — copied
/// unchanged, no scale tensor, listed as kept with its first NaN or infinity and why in the
/// text and `--json` summaries and in `--dry-run` — while the other tensors are quantized;
/// `--strict` and a `.npy` input make it an error. MX keeps OCP MX's NaN scale: the tensor is
/// quantized, every element of its NaN-scale blocks counts as NaN, and a note names it.
#[test]
fn non_finite_tensors_are_kept_under_amax_scales() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut mask = vec![0f32; 4 * 32];
    mask[32 + 3] = f32::NEG_INFINITY;
    mask[3 * 32 + 17] = f32::NAN;
    let mask_bytes = f32_bytes(&mask);
    let w = values(256, 9);
    write_safetensors(
        &d.join("m.safetensors"),
        &[
            ("mask", "F32", vec![4, 32], mask_bytes.clone()),
            ("w", "F32", vec![4, 64], f32_bytes(&w)),
        ],
    );
    let scopes = [
        (
            "nvfp4",
            vec![],
            "the ue4m3 scale of its block of 16 would be NaN, and the block would read back as NaN",
        ),
        (
            "fp8-tensor",
            vec![],
            "the tensor's one f32 scale would be NaN, and every element would read back as NaN",
        ),
        (
            "fp8-row",
            vec![],
            "the f32 scale of its row would be NaN, and the row would read back as NaN",
        ),
        (
            "fp8-block128",
            vec![],
            "the f32 scale of its 128x128 tile would be NaN, and the tile would read back as NaN",
        ),
        (
            "fp8-row",
            vec!["--block", "8x8", "--scale", "bf16"],
            "the bf16 scale of its 8x8 tile would be NaN",
        ),
    ];
    for (recipe, more, scope) in scopes {
        let mut args = if more.is_empty() {
            vec![
                "convert",
                "m.safetensors",
                "-o",
                "k.safetensors",
                "--recipe",
                recipe,
                "--all",
            ]
        } else {
            vec![
                "convert",
                "m.safetensors",
                "-o",
                "k.safetensors",
                "--to",
                "e4m3",
                "--satfinite",
                "--all",
            ]
        };
        args.extend(more.iter().copied());
        let (code, text, err) = gpucvt(d, &args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let reason = format!("element [1, 3] is -inf: {scope}");
        assert!(
            text.contains("kept unchanged") && text.contains(&format!("  mask: {reason}")),
            "{args:?}: {text}"
        );
        let k = d.join("k.safetensors");
        assert_eq!(
            tensor_of(&k, "mask"),
            ("F32".into(), vec![4, 32], mask_bytes.clone())
        );
        assert!(
            !has_tensor(&k, "mask_scale") && has_tensor(&k, "w_scale"),
            "{args:?}"
        );
        assert_ne!(tensor_of(&k, "w").0, "F32");
        // --json: the same, listed under kept.
        let mut jargs = args.clone();
        jargs[3] = "kj.safetensors";
        jargs.push("--json");
        let (code, js, err) = gpucvt(d, &jargs);
        assert_eq!(code, 0, "{jargs:?}: {err}");
        let v: Value = serde_json::from_str(&js).unwrap();
        assert_eq!(
            v["kept"],
            json!([{"name": "mask", "reason": v["kept"][0]["reason"], "by_default": false}])
        );
        assert!(
            v["kept"][0]["reason"]
                .as_str()
                .unwrap()
                .starts_with(&reason),
            "{js}"
        );
        assert_eq!(v["tensors"].as_array().unwrap().len(), 1);
        assert_eq!(v["total"]["nan"], 0);
        // --dry-run says so too, and --strict refuses.
        let mut dargs = args.clone();
        dargs.push("--dry-run");
        let (code, plan, err) = gpucvt(d, &dargs);
        assert_eq!(code, 0, "{err}");
        assert!(plan.contains(&format!("keep: {reason}")), "{plan}");
        let mut sargs = args.clone();
        sargs.push("--strict");
        sargs[3] = "e.safetensors";
        fails(d, &sargs, &format!("tensor \"mask\": {reason}"));
    }
    // A .npy input of it: an error naming the element.
    npy(&d.join("mask.npy"), &[4, 32], &mask_bytes);
    for (recipe, scope) in [
        ("fp8-row", "the f32 scale of its row would be NaN"),
        ("nvfp4", "the ue4m3 scale of its block of 16 would be NaN"),
    ] {
        fails(
            d,
            &["convert", "mask.npy", "-o", "e.npy", "--recipe", recipe],
            &format!("mask.npy: element [1, 3] is -inf: {scope}"),
        );
        assert!(!d.join("e_scale.npy").exists());
    }
    // MX: the NaN scale for the two blocks holding the -inf and the NaN; their 64 elements
    // read back as NaN, and the note says so.
    let (code, js, err) = gpucvt(
        d,
        &[
            "convert",
            "m.safetensors",
            "-o",
            "x.safetensors",
            "--recipe",
            "mxfp8",
            "--json",
            "--all",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let note = "mask: 2 of its 4 blocks hold a NaN or an infinity and got the NaN scale, so they read back as NaN (64 of its 128 elements are NaN)";
    assert!(err.contains(&format!("note: {note}")), "{err}");
    let v: Value = serde_json::from_str(&js).unwrap();
    assert_eq!(v["notes"], json!([note]));
    let st = &v["tensors"][0]["stats"];
    assert_eq!(
        (st["nan"].as_u64(), st["nan_blocks"].as_u64()),
        (Some(64), Some(2))
    );
    assert_eq!(st["error_elements"].as_u64(), Some(64));
    assert_eq!(v["kept"], json!([]));
    let x = d.join("x.safetensors");
    assert_eq!(tensor_of(&x, "mask_scale").2, [0x00, 0xff, 0x00, 0xff]);
    let (code, text, _) = gpucvt(
        d,
        &[
            "convert",
            "m.safetensors",
            "-o",
            "y.safetensors",
            "--recipe",
            "mxfp8",
            "--all",
        ],
    );
    assert_eq!(code, 0);
    assert!(text.contains("NaN-scale blocks 2"), "{text}");
}

/// Tensors without elements (issue 41 §6) under every recipe: copied unchanged and listed as
/// kept with the reason, the other tensors quantized; a `.npy` input of none is an error
/// that says so.
#[test]
fn zero_size_tensors_are_kept_by_every_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_safetensors(
        &d.join("m.safetensors"),
        &[
            ("e0", "F32", vec![0, 16], vec![]),
            ("w", "F32", vec![4, 64], f32_bytes(&values(256, 4))),
            ("e1", "BF16", vec![128, 0], vec![]),
        ],
    );
    for (recipe, ..) in RECIPES {
        let (code, js, err) = gpucvt(
            d,
            &[
                "convert",
                "m.safetensors",
                "-o",
                "k.safetensors",
                "--recipe",
                recipe,
                "--json",
                "--all",
            ],
        );
        assert_eq!(code, 0, "{recipe}: {err}");
        let v: Value = serde_json::from_str(&js).unwrap();
        assert_eq!(
            v["kept"],
            json!([
                {"name": "e0", "reason": "it has no elements (shape [0, 16]): there is nothing to block-scale", "by_default": false},
                {"name": "e1", "reason": "it has no elements (shape [128, 0]): there is nothing to block-scale", "by_default": false},
            ]),
            "{recipe}"
        );
        let k = d.join("k.safetensors");
        assert_eq!(tensor_of(&k, "e0"), ("F32".into(), vec![0, 16], vec![]));
        assert_eq!(tensor_of(&k, "e1"), ("BF16".into(), vec![128, 0], vec![]));
        assert!(
            has_tensor(&k, "w_scale") && !has_tensor(&k, "e0_scale"),
            "{recipe}"
        );
    }
    npy(&d.join("empty.npy"), &[0, 32], &[]);
    for r in ["fp8-tensor", "fp8-row", "mxfp8"] {
        fails(
            d,
            &["convert", "empty.npy", "-o", "e.npy", "--recipe", r],
            "empty.npy: it has no elements (shape [0, 32]): there is nothing to block-scale",
        );
    }
}
