//! End-to-end tests of file conversion: every output element is compared with the exact
//! core's `Conversion::apply` on the input element. Test files are generated here.

use gpucvt_core::format::{self, Format};
use gpucvt_core::{Conversion, Policy, Rounding};
use gpucvt_tensor::chunk::{random_word, splitmix64};
use gpucvt_tensor::{convert_file, BlockScaling, Error, Options, ScaleRule, Summary};
use serde_json::{json, Value};
use std::path::Path;

// ---------- helpers ----------

fn satfinite() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

/// Options converting every tensor (the default choice of linear layers' weights has its
/// own tests).
fn to(dst: Format, rounding: Rounding, policy: Policy) -> Options {
    let mut o = Options::new(Box::new(move |src| {
        Ok(Conversion::new(*src, dst, rounding, policy))
    }));
    o.all = true;
    o
}

fn run(input: &Path, output: &Path, opts: &Options) -> Result<Summary, Error> {
    convert_file(input, output, opts, &mut |_, _| {})
}

/// Interesting f32 values: zeros, subnormals, boundaries, specials, and a sweep.
fn f32_values(n: usize) -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001,
        0x43e0_0000, // 448
        0x43e8_0000, // 464
        0x4780_0000, // 65536
        0x3c00_0000,
        0x3a80_0000,
    ];
    let mut x = 0x1234_5678u64;
    while v.len() < n {
        x = splitmix64(x);
        // Mostly moderate magnitudes, some anything.
        let r = x as u32;
        let w = if x >> 60 == 0 {
            r
        } else {
            (r & 0x807f_ffff) | ((((r >> 23) & 0x3f) + 100) << 23)
        };
        v.push(w);
    }
    v.truncate(n);
    v
}

fn le_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A safetensors file from (name, dtype, shape, data) and metadata, in the given order.
fn write_safetensors(
    path: &Path,
    tensors: &[(&str, &str, Vec<usize>, Vec<u8>)],
    meta: Option<Value>,
) {
    let mut header = serde_json::Map::new();
    if let Some(m) = meta {
        header.insert("__metadata__".into(), m);
    }
    let mut off = 0;
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.insert(
            name.to_string(),
            json!({"dtype": dtype, "shape": shape, "data_offsets": [off, off + bytes.len()]}),
        );
        off += bytes.len();
        data.extend_from_slice(bytes);
    }
    let mut h = serde_json::to_vec(&Value::Object(header)).unwrap();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    std::fs::write(path, out).unwrap();
}

/// Reads a safetensors file: metadata and name → (dtype, shape, bytes).
#[allow(clippy::type_complexity)]
fn read_safetensors(path: &Path) -> (Option<Value>, Vec<(String, String, Vec<usize>, Vec<u8>)>) {
    let b = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    assert_eq!((8 + n) % 8, 0, "data is 8-byte aligned");
    let h: serde_json::Map<String, Value> = serde_json::from_slice(&b[8..8 + n]).unwrap();
    let data = &b[8 + n..];
    let mut meta = None;
    let mut out = Vec::new();
    let mut end = 0;
    for (k, v) in h {
        if k == "__metadata__" {
            meta = Some(v);
            continue;
        }
        let off: Vec<usize> = serde_json::from_value(v["data_offsets"].clone()).unwrap();
        let shape: Vec<usize> = serde_json::from_value(v["shape"].clone()).unwrap();
        end = end.max(off[1]);
        out.push((
            k,
            v["dtype"].as_str().unwrap().to_string(),
            shape,
            data[off[0]..off[1]].to_vec(),
        ));
    }
    assert_eq!(end, data.len(), "no trailing bytes");
    (meta, out)
}

fn tensor<'a>(
    ts: &'a [(String, String, Vec<usize>, Vec<u8>)],
    name: &str,
) -> &'a (String, String, Vec<usize>, Vec<u8>) {
    ts.iter()
        .find(|t| t.0 == name)
        .unwrap_or_else(|| panic!("no tensor {name}"))
}

/// Unpacks elements of `f` as gpucvt documents: F4 two per byte (low nibble first), F6 four
/// per three bytes (little-endian bit stream), otherwise little-endian containers.
fn unpack(f: &Format, bytes: &[u8], dense: bool) -> Vec<u64> {
    if dense && f.name == "e2m1" {
        return bytes
            .iter()
            .flat_map(|b| [(b & 0xf) as u64, (b >> 4) as u64])
            .collect();
    }
    if dense && (f.name == "e2m3" || f.name == "e3m2") {
        let mut out = Vec::new();
        for c in bytes.chunks(3) {
            let v = c[0] as u64 | (c[1] as u64) << 8 | (c[2] as u64) << 16;
            for k in 0..4 {
                out.push((v >> (6 * k)) & 63);
            }
        }
        return out;
    }
    let w = match f.width() {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    };
    bytes
        .chunks(w)
        .map(|c| {
            let mut a = [0u8; 8];
            a[..w].copy_from_slice(c);
            u64::from_le_bytes(a)
        })
        .collect()
}

/// An input `.npy` file, written by the tests' own writer (not gpucvt's).
fn npy_file(path: &Path, descr: &str, shape: &[u64], data: &[u8]) {
    std::fs::write(path, gpucvt_reference::npy_bytes(descr, shape, data)).unwrap();
}

fn npy_data(path: &Path) -> (gpucvt_tensor::npy::NpyHeader, Vec<u8>) {
    let b = std::fs::read(path).unwrap();
    let h = gpucvt_tensor::npy::read_header(&mut &b[..], "t").unwrap();
    (h.clone(), b[h.header_len as usize..].to_vec())
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn stochastic(width: u32) -> Rounding {
    Rounding::stochastic(0, width)
}

fn with_random(c: &Conversion, r: u32) -> Conversion {
    let mut c = *c;
    if let gpucvt_core::Direction::Stochastic { width, .. } = c.rounding.direction {
        c.rounding = Rounding::stochastic(r as u64, width);
    }
    c
}

// ---------- round trips and every dtype ----------

#[test]
fn f32_to_bf16_and_back_matches_the_core() {
    let dir = tempfile::tempdir().unwrap();
    let vals = f32_values(5000);
    let a = dir.path().join("a.npy");
    npy_file(&a, "<f4", &[50, 100], &le_bytes(&vals));
    let b = dir.path().join("b.npy");
    let s = run(&a, &b, &to(format::BF16, Rounding::RN, Policy::default())).unwrap();
    assert_eq!(s.total.elements, 5000);
    let (h, d) = npy_data(&b);
    assert_eq!(h.descr, "<u2");
    assert_eq!(h.shape, vec![50, 100]);
    let bf = unpack(&format::BF16, &d, false);
    let c1 = Conversion::new(format::F32, format::BF16, Rounding::RN, Policy::default());
    for (x, y) in vals.iter().zip(&bf) {
        assert_eq!(*y, c1.apply(*x as u64).bits, "f32 {x:#x}");
    }
    // And back: the <u2 container read as bf16.
    let c = dir.path().join("c.npy");
    let mut o = to(format::F32, Rounding::RN, Policy::default());
    o.from = Some(format::BF16);
    run(&b, &c, &o).unwrap();
    let (h, d) = npy_data(&c);
    assert_eq!(h.descr, "<f4");
    let back = unpack(&format::F32, &d, false);
    let c2 = Conversion::new(format::BF16, format::F32, Rounding::RN, Policy::default());
    for (y, z) in bf.iter().zip(&back) {
        assert_eq!(*z, c2.apply(*y).bits);
    }
}

#[test]
fn every_output_dtype_equals_the_core() {
    let dir = tempfile::tempdir().unwrap();
    let vals = f32_values(4096);
    let input = dir.path().join("in.safetensors");
    write_safetensors(&input, &[("w", "F32", vec![64, 64], le_bytes(&vals))], None);
    let cases: Vec<(Format, &str, Rounding, Policy)> = vec![
        (format::F16, "F16", Rounding::RN, Policy::default()),
        (format::BF16, "BF16", Rounding::RZ, Policy::default()),
        (format::BF16, "BF16", stochastic(16), Policy::default()),
        (format::TF32, "F32", Rounding::RNA, Policy::default()),
        (format::F64, "F64", Rounding::RN, Policy::default()),
        (format::E4M3, "F8_E4M3", Rounding::RN, satfinite()),
        (format::E4M3, "F8_E4M3", stochastic(8), satfinite()),
        (format::E5M2, "F8_E5M2", Rounding::RN, satfinite()),
        (format::E5M2, "F8_E5M2", Rounding::RN, Policy::default()),
        (format::E2M3, "F6_E2M3", Rounding::RN, satfinite()),
        (format::E3M2, "F6_E3M2", Rounding::RZ, satfinite()),
        (format::E2M1, "F4", Rounding::RN, satfinite()),
        (format::E2M1, "F4", stochastic(8), satfinite()),
        (format::UE8M0, "F8_E8M0", Rounding::RP, satfinite()),
        (format::S8, "I8", Rounding::RNI, Policy::default()),
        (format::U16, "U16", Rounding::RZI, Policy::default()),
        (format::S32, "I32", Rounding::RNI, Policy::default()),
    ];
    for (k, (dst, dtype, rounding, policy)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("out{k}.safetensors"));
        let mut opts = to(dst, rounding, policy);
        opts.seed = 7;
        opts.threads = 2;
        run(&input, &out, &opts).unwrap();
        let (_, ts) = read_safetensors(&out);
        let t = tensor(&ts, "w");
        assert_eq!(t.1, dtype, "{dst}");
        assert_eq!(t.2, vec![64, 64]);
        let got = unpack(&dst, &t.3, true);
        assert_eq!(got.len(), vals.len(), "{dst}");
        let c = Conversion::new(format::F32, dst, rounding, policy);
        let stream = splitmix64(7);
        for (i, (x, y)) in vals.iter().zip(&got).enumerate() {
            let want = with_random(&c, random_word(stream, i as u64))
                .apply(*x as u64)
                .bits;
            assert_eq!(*y, want, "{dst} {} element {i} {x:#x}", rounding.name());
        }
    }
}

#[test]
fn narrow_sources_and_stochastic_rounding_from_them() {
    // bf16 and e4m3 sources (tables and the widening path), stochastic and not.
    let dir = tempfile::tempdir().unwrap();
    let bf: Vec<u16> = (0..=0xffffu32).map(|b| b as u16).collect();
    let e4: Vec<u8> = (0..=255u8).collect();
    let input = dir.path().join("in.safetensors");
    write_safetensors(
        &input,
        &[
            (
                "a",
                "BF16",
                vec![256, 256],
                bf.iter().flat_map(|b| b.to_le_bytes()).collect(),
            ),
            ("b", "F8_E4M3", vec![256], e4.clone()),
        ],
        None,
    );
    for rounding in [Rounding::RN, stochastic(8)] {
        let out = dir.path().join("out.safetensors");
        let mut opts = to(format::E2M1, rounding, satfinite());
        opts.seed = 99;
        run(&input, &out, &opts).unwrap();
        let (_, ts) = read_safetensors(&out);
        for (t, name, src, words) in [
            (
                0u64,
                "a",
                format::BF16,
                bf.iter().map(|&b| b as u64).collect::<Vec<_>>(),
            ),
            (1, "b", format::E4M3, e4.iter().map(|&b| b as u64).collect()),
        ] {
            let got = unpack(&format::E2M1, &tensor(&ts, name).3, true);
            let c = Conversion::new(src, format::E2M1, rounding, satfinite());
            let stream = splitmix64(99 + t);
            for (i, (x, y)) in words.iter().zip(&got).enumerate() {
                assert_eq!(
                    *y,
                    with_random(&c, random_word(stream, i as u64))
                        .apply(*x)
                        .bits,
                    "{name} {x:#x}"
                );
            }
        }
    }
}

#[test]
fn many_chunks_with_threads_and_stochastic_rounding() {
    // 3 Mi elements: several 8 MiB chunks and many parallel sub-chunks.
    let dir = tempfile::tempdir().unwrap();
    let vals = f32_values(3 << 20);
    let input = dir.path().join("big.bin");
    std::fs::write(&input, le_bytes(&vals)).unwrap();
    let out = dir.path().join("big.e4m3");
    let mut opts = to(format::E4M3, stochastic(8), satfinite());
    opts.from = Some(format::F32);
    opts.seed = 3;
    opts.threads = 2;
    let mut calls = 0;
    let mut last = (0, 0);
    let s = convert_file(&input, &out, &opts, &mut |d, t| {
        calls += 1;
        last = (d, t);
    })
    .unwrap();
    assert!(calls >= 2);
    assert_eq!(last, (vals.len() as u64 * 4, vals.len() as u64 * 4));
    assert_eq!(s.kind, "raw");
    let got = std::fs::read(&out).unwrap();
    assert_eq!(got.len(), vals.len());
    let c = Conversion::new(format::F32, format::E4M3, stochastic(8), satfinite());
    let stream = splitmix64(3);
    for (i, (x, y)) in vals.iter().zip(&got).enumerate().step_by(7) {
        assert_eq!(
            *y as u64,
            with_random(&c, random_word(stream, i as u64))
                .apply(*x as u64)
                .bits
        );
    }
    // Same result with one thread.
    let out1 = dir.path().join("big1.e4m3");
    opts.threads = 1;
    run(&input, &out1, &opts).unwrap();
    assert_eq!(std::fs::read(&out1).unwrap(), got);
}

// ---------- safetensors ----------

#[test]
fn safetensors_keeps_names_metadata_and_copies_unselected() {
    let dir = tempfile::tempdir().unwrap();
    let w = f32_values(96);
    let b16: Vec<u8> = (0..40u16)
        .flat_map(|i| (0x3f80 + i).to_le_bytes())
        .collect();
    let ids: Vec<u8> = (0..24i32).flat_map(|i| i.to_le_bytes()).collect();
    let input = dir.path().join("m.safetensors");
    write_safetensors(
        &input,
        &[
            ("layer.0.weight", "F32", vec![8, 12], le_bytes(&w)),
            ("layer.0.bias", "BF16", vec![40], b16.clone()),
            ("ids", "I32", vec![2, 3, 4], ids.clone()),
        ],
        Some(json!({"format": "pt", "note": "hello"})),
    );
    // All tensors (the integer one too: `integers`).
    let out = dir.path().join("all.safetensors");
    let mut all = to(format::F16, Rounding::RN, Policy::default());
    all.integers = true;
    let s = run(&input, &out, &all).unwrap();
    assert_eq!(s.tensors.len(), 3);
    assert_eq!(s.total.elements, 96 + 40 + 24);
    let (meta, ts) = read_safetensors(&out);
    assert_eq!(meta.unwrap(), json!({"format": "pt", "note": "hello"}));
    assert_eq!(ts.len(), 3);
    for (name, _, shape, _) in &ts {
        let want: Vec<usize> = match name.as_str() {
            "layer.0.weight" => vec![8, 12],
            "layer.0.bias" => vec![40],
            _ => vec![2, 3, 4],
        };
        assert_eq!(shape, &want);
    }
    let ids16 = unpack(&format::F16, &tensor(&ts, "ids").3, true);
    let c = Conversion::new(format::S32, format::F16, Rounding::RN, Policy::default());
    for (i, y) in ids16.iter().enumerate() {
        assert_eq!(*y, c.apply(i as u64).bits);
    }
    // Selection: only the weight; the others copied byte for byte.
    let out = dir.path().join("sel.safetensors");
    let mut opts = to(format::E4M3, Rounding::RN, satfinite());
    opts.tensors = vec!["layer.0.weight".into()];
    let s = run(&input, &out, &opts).unwrap();
    assert_eq!(s.tensors.len(), 1);
    assert_eq!(
        s.copied,
        vec!["layer.0.bias".to_string(), "ids".to_string()]
    );
    let (meta, ts) = read_safetensors(&out);
    assert!(meta.is_some());
    let t = tensor(&ts, "layer.0.weight");
    assert_eq!(t.1, "F8_E4M3");
    assert_eq!(t.3.len(), 96);
    let bias = tensor(&ts, "layer.0.bias");
    assert_eq!((bias.1.as_str(), &bias.3), ("BF16", &b16));
    let id = tensor(&ts, "ids");
    assert_eq!((id.1.as_str(), &id.3), ("I32", &ids));
    // An unknown name is an error and leaves nothing.
    let before = listing(dir.path());
    let mut opts = to(format::E4M3, Rounding::RN, satfinite());
    opts.tensors = vec!["nope".into()];
    let e = run(&input, &dir.path().join("x.safetensors"), &opts).unwrap_err();
    assert!(e.to_string().contains("no tensor named \"nope\""), "{e}");
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn fp4_and_fp6_packing_need_whole_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("odd.safetensors");
    write_safetensors(
        &input,
        &[("t", "F32", vec![3], le_bytes(&[0x3f80_0000; 3]))],
        None,
    );
    let before = listing(dir.path());
    for dst in [format::E2M1, format::E2M3] {
        let e = run(
            &input,
            &dir.path().join("o.safetensors"),
            &to(dst, Rounding::RN, satfinite()),
        )
        .unwrap_err();
        assert!(e.to_string().contains("do not fill whole bytes"), "{e}");
    }
    // No safetensors dtype for ue4m3.
    let e = run(
        &input,
        &dir.path().join("o.safetensors"),
        &to(format::UE4M3, Rounding::RN, satfinite()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("no dtype for ue4m3"), "{e}");
    assert_eq!(listing(dir.path()), before);
}

// ---------- npy ----------

#[test]
fn npy_shapes_and_header_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for shape in [vec![], vec![7u64], vec![2, 3, 5], vec![1, 1, 4, 2]] {
        let n: u64 = shape.iter().product();
        let vals = f32_values(n as usize);
        let a = dir.path().join("a.npy");
        npy_file(&a, "<f4", &shape, &le_bytes(&vals));
        let b = dir.path().join("b.npy");
        run(&a, &b, &to(format::E5M2, Rounding::RN, Policy::default())).unwrap();
        let raw = std::fs::read(&b).unwrap();
        let dims = match shape.len() {
            1 => format!("{},", shape[0]),
            _ => shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let dict = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({dims}), }}");
        assert_eq!(&raw[..8], b"\x93NUMPY\x01\x00");
        let hl = u16::from_le_bytes([raw[8], raw[9]]) as usize;
        assert_eq!((10 + hl) % 64, 0);
        assert!(std::str::from_utf8(&raw[10..10 + hl])
            .unwrap()
            .starts_with(&dict));
        assert_eq!(raw[10 + hl - 1], b'\n');
        let c = Conversion::new(format::F32, format::E5M2, Rounding::RN, Policy::default());
        let data = &raw[10 + hl..];
        assert_eq!(data.len() as u64, n);
        for (x, y) in vals.iter().zip(data) {
            assert_eq!(*y as u64, c.apply(*x as u64).bits);
        }
    }
    // Fortran order is kept (element-wise conversion).
    let a = dir.path().join("f.npy");
    let mut bytes = gpucvt_tensor::npy::header_bytes("<f2", true, &[2, 3]);
    bytes.extend_from_slice(&[0u8; 12]);
    std::fs::write(&a, bytes).unwrap();
    let b = dir.path().join("g.npy");
    run(&a, &b, &to(format::F32, Rounding::RN, Policy::default())).unwrap();
    let (h, d) = npy_data(&b);
    assert!(h.fortran_order);
    assert_eq!((h.descr.as_str(), d.len()), ("<f4", 24));
}

// ---------- raw ----------

#[test]
fn raw_f32_to_fp4_packs_low_nibble_first() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.f32");
    // 1.0 → 0x2, 6.0 → 0x7, -0.5 → 0x9, 3.0 → 0x5
    std::fs::write(
        &input,
        le_bytes(&[0x3f80_0000, 0x40c0_0000, 0xbf00_0000, 0x4040_0000]),
    )
    .unwrap();
    let out = dir.path().join("x.fp4");
    let mut opts = to(format::E2M1, Rounding::RN, satfinite());
    opts.from = Some(format::F32);
    run(&input, &out, &opts).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), vec![0x72, 0x59]);
    // And raw FP4 back to f16.
    let back = dir.path().join("y.f16");
    let mut opts = to(format::F16, Rounding::RN, Policy::default());
    opts.from = Some(format::E2M1);
    run(&out, &back, &opts).unwrap();
    let h: Vec<u16> = std::fs::read(&back)
        .unwrap()
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(h, vec![0x3c00, 0x4600, 0xb800, 0x4200]);
    // FP6: 4 per 3 bytes.
    let out6 = dir.path().join("x.fp6");
    let mut opts = to(format::E3M2, Rounding::RN, satfinite());
    opts.from = Some(format::F32);
    run(&input, &out6, &opts).unwrap();
    let got = std::fs::read(&out6).unwrap();
    assert_eq!(got.len(), 3);
    let c = Conversion::new(format::F32, format::E3M2, Rounding::RN, satfinite());
    let want: Vec<u64> = [0x3f80_0000u64, 0x40c0_0000, 0xbf00_0000, 0x4040_0000]
        .iter()
        .map(|&x| c.apply(x).bits)
        .collect();
    assert_eq!(unpack(&format::E3M2, &got, true), want);
}

#[test]
fn raw_needs_a_format_and_whole_elements() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.bin");
    std::fs::write(&input, [0u8; 10]).unwrap();
    let before = listing(dir.path());
    let e = run(
        &input,
        &dir.path().join("y.bin"),
        &to(format::F16, Rounding::RN, Policy::default()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("give its element format"), "{e}");
    let mut opts = to(format::F16, Rounding::RN, Policy::default());
    opts.from = Some(format::F32);
    let e = run(&input, &dir.path().join("y.bin"), &opts).unwrap_err();
    assert!(
        e.to_string().contains("not a whole number of f32 elements"),
        "{e}"
    );
    assert_eq!(listing(dir.path()), before);
}

// ---------- block scaling ----------

fn mx_options(dst: Format, method: ScaleRule) -> Options {
    let mut o = to(dst, Rounding::RN, satfinite());
    o.block = Some(BlockScaling::mx(32, method));
    o
}

#[test]
fn block_scaling_on_crafted_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let mut vals = Vec::new();
    // Block 0: all zero (with a -0).
    vals.extend(std::iter::repeat_n(0u32, 31));
    vals.push(0x8000_0000);
    // Block 1: a NaN among ordinary values.
    vals.extend((0..32).map(|i| {
        if i == 5 {
            0x7fc0_0000
        } else {
            (1.0f32 + i as f32).to_bits()
        }
    }));
    // Block 2: an infinity.
    vals.extend((0..32).map(|i| {
        if i == 9 {
            0xff80_0000
        } else {
            (0.5f32 * i as f32).to_bits()
        }
    }));
    // Block 3: subnormal amax.
    vals.extend((0..32u32).map(|i| i * 3 + 1));
    // Block 4: huge amax.
    vals.extend((0..32).map(|i| {
        if i == 0 {
            0x7f7f_ffff
        } else {
            (i as f32 * 1e30).to_bits()
        }
    }));
    // Block 5: ordinary, values of both signs.
    vals.extend((0..32).map(|i| ((i as f32 - 16.0) * 0.37).to_bits()));
    // Block 6: amax just above a power of two (the rp scale differs from OCP).
    vals.extend((0..32).map(|i| {
        if i == 3 {
            7.0f32.to_bits()
        } else {
            (i as f32 * 0.1).to_bits()
        }
    }));
    let n = vals.len();
    assert_eq!(n, 7 * 32);
    let input = dir.path().join("in.safetensors");
    write_safetensors(&input, &[("w", "F32", vec![7, 32], le_bytes(&vals))], None);
    for dst in [
        format::E4M3,
        format::E5M2,
        format::E2M3,
        format::E3M2,
        format::E2M1,
    ] {
        let max = dst.decode(dst.max_finite_bits()).to_f64_lossy();
        let emax = max.log2().floor() as i32;
        let mbits = match dst.layout {
            format::Layout::Float(l) => l.man_bits as i32,
            _ => unreachable!(),
        };
        for method in ScaleRule::ALL {
            let out = dir.path().join("out.safetensors");
            let s = run(&input, &out, &mx_options(dst, method)).unwrap();
            assert_eq!(s.total.blocks, 7);
            assert_eq!(s.total.nan_blocks, 2);
            assert_eq!(s.tensors[0].scale.as_deref(), Some("w_scale"));
            let (_, ts) = read_safetensors(&out);
            let sc = tensor(&ts, "w_scale");
            assert_eq!((sc.1.as_str(), &sc.2), ("F8_E8M0", &vec![7, 1]));
            let scales = &sc.3;
            // Expected scales, independently.
            for (b, &byte) in scales.iter().enumerate() {
                let blk = &vals[b * 32..b * 32 + 32];
                let fs: Vec<f32> = blk.iter().map(|&x| f32::from_bits(x)).collect();
                let want = if fs.iter().any(|v| !v.is_finite()) {
                    0xff
                } else {
                    let amax = fs.iter().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
                    match method {
                        _ if amax == 0.0 && method != ScaleRule::Rceil => 0,
                        ScaleRule::Floor => {
                            ((amax.log2().floor() as i32 - emax).clamp(-127, 127) + 127) as u8
                        }
                        ScaleRule::Ceil => {
                            ((amax.log2().ceil() as i32 - emax).clamp(-127, 127) + 127) as u8
                        }
                        ScaleRule::Even => {
                            // amax to the element's mantissa bits, halves up.
                            let ulp = 2f64.powi(amax.log2().floor() as i32 - mbits);
                            let r = (amax / ulp + 0.5).floor() * ulp;
                            ((r.log2().floor() as i32 - emax).clamp(-127, 127) + 127) as u8
                        }
                        ScaleRule::Rceil => {
                            let q = (amax as f32) / (max as f32);
                            let c = Conversion::new(
                                format::F32,
                                format::UE8M0,
                                Rounding::RP,
                                satfinite(),
                            );
                            c.apply(q.to_bits() as u64).bits as u8
                        }
                    }
                };
                assert_eq!(byte, want, "{dst} {method:?} block {b}");
            }
            let got = unpack(&dst, &tensor(&ts, "w").3, true);
            for (i, (x, y)) in vals.iter().zip(&got).enumerate() {
                let byte = scales[i / 32];
                let k = if byte == 0xff { 0 } else { 127 - byte as i32 };
                let c = Conversion::new(
                    format::F32,
                    dst,
                    Rounding::RN,
                    Policy {
                        scale: k,
                        ..satfinite()
                    },
                );
                assert_eq!(
                    *y,
                    c.apply(*x as u64).bits,
                    "{dst} {method:?} element {i} {x:#x}"
                );
            }
            if method == ScaleRule::Rceil {
                // Nothing saturates with the rp scale (in blocks with a finite scale).
                for (i, x) in vals.iter().enumerate() {
                    let byte = scales[i / 32];
                    if byte != 0xff {
                        let v = f32::from_bits(*x).abs() as f64 * 2f64.powi(127 - byte as i32);
                        assert!(v <= max, "{dst} element {i}");
                    }
                }
            }
        }
    }
}

#[test]
fn block_scaling_from_bf16_and_npy_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let bf: Vec<u16> = (0..4096u32).map(|i| splitmix64(i as u64) as u16).collect();
    let a = dir.path().join("w.npy");
    npy_file(
        &a,
        "<u2",
        &[64, 64],
        &bf.iter().flat_map(|b| b.to_le_bytes()).collect::<Vec<_>>(),
    );
    let out = dir.path().join("q.npy");
    let mut opts = mx_options(format::E2M1, ScaleRule::Floor);
    opts.from = Some(format::BF16);
    let s = run(&a, &out, &opts).unwrap();
    let side = dir.path().join("q_scale.npy");
    assert_eq!(s.tensors[0].scale.as_deref(), Some(side.to_str().unwrap()));
    let (h, scales) = npy_data(&side);
    assert_eq!((h.descr.as_str(), h.shape.clone()), ("|u1", vec![64, 2]));
    let (h, d) = npy_data(&out);
    assert_eq!((h.descr.as_str(), h.shape.clone()), ("|u1", vec![64, 64]));
    for (i, (x, y)) in bf.iter().zip(&d).enumerate() {
        let byte = scales[i / 32];
        let k = if byte == 0xff { 0 } else { 127 - byte as i32 };
        let c = Conversion::new(
            format::BF16,
            format::E2M1,
            Rounding::RN,
            Policy {
                scale: k,
                ..satfinite()
            },
        );
        assert_eq!(*y as u64, c.apply(*x as u64).bits, "element {i} {x:#x}");
    }
}

#[test]
fn block_size_must_divide_the_last_dimension() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    write_safetensors(
        &input,
        &[("w", "F32", vec![4, 30], le_bytes(&f32_values(120)))],
        None,
    );
    let before = listing(dir.path());
    let e = run(
        &input,
        &dir.path().join("o.safetensors"),
        &mx_options(format::E4M3, ScaleRule::Floor),
    )
    .unwrap_err();
    assert!(e.to_string().contains("last dimension 30"), "{e}");
    assert_eq!(listing(dir.path()), before);
}

// ---------- bad input ----------

fn expect_failure(dir: &Path, input: &Path, output: &Path, opts: &Options, needle: &str) {
    let before = listing(dir);
    let e = run(input, output, opts).unwrap_err();
    assert!(
        e.to_string().contains(needle),
        "{e:?} should mention {needle:?}"
    );
    assert_eq!(listing(dir), before, "nothing is left after: {e}");
}

#[test]
fn truncated_and_corrupt_npy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = d.join("o.npy");
    let opts = to(format::F16, Rounding::RN, Policy::default());
    let good = {
        let mut b = gpucvt_tensor::npy::header_bytes("<f4", false, &[4]);
        b.extend_from_slice(&le_bytes(&[0x3f80_0000; 4]));
        b
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.npy", vec![], "truncated"),
        (
            "magic.npy",
            b"\x93NUMPX\x01\x00\x10\x00{}".to_vec(),
            "magic",
        ),
        ("short.npy", good[..40].to_vec(), "truncated"),
        (
            "data.npy",
            good[..good.len() - 3].to_vec(),
            "truncated file",
        ),
        (
            "extra.npy",
            [good.clone(), vec![0; 4]].concat(),
            "needs 16 bytes of data but the file has 20",
        ),
        (
            "dict.npy",
            {
                let mut b = good.clone();
                b[12] = b'!';
                b
            },
            "not a valid .npy",
        ),
        (
            "version.npy",
            {
                let mut b = good.clone();
                b[6] = 9;
                b
            },
            "version 9.0",
        ),
    ];
    for (name, bytes, needle) in cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        expect_failure(d, &p, &o, &opts, needle);
    }
}

#[test]
fn unsupported_npy_dtypes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = d.join("o.npy");
    let opts = to(format::F16, Rounding::RN, Policy::default());
    for (descr, size, needle) in [
        ("<c8", 8, "cannot be converted"),
        ("<U5", 20, "cannot be converted"),
        ("|b1", 1, "cannot be converted"),
        (">f4", 4, "cannot be converted"),
        ("|O", 8, "cannot be converted"),
    ] {
        let p = d.join("u.npy");
        npy_file(&p, descr, &[3], &vec![0u8; 3 * size]);
        expect_failure(d, &p, &o, &opts, needle);
    }
    // Structured.
    let p = d.join("s.npy");
    let dict = "{'descr': [('a', '<f4'), ('b', '<i2')], 'fortran_order': False, 'shape': (2,), }";
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    let mut dict = dict.to_string();
    while !(10 + dict.len() + 1).is_multiple_of(64) {
        dict.push(' ');
    }
    dict.push('\n');
    b.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    b.extend_from_slice(dict.as_bytes());
    b.extend_from_slice(&[0u8; 12]);
    std::fs::write(&p, b).unwrap();
    expect_failure(d, &p, &o, &opts, "structured dtype");
    // --from with the wrong container.
    let p = d.join("w.npy");
    npy_file(&p, "<f4", &[3], &[0u8; 12]);
    let mut o2 = to(format::F16, Rounding::RN, Policy::default());
    o2.from = Some(format::BF16);
    expect_failure(d, &p, &o, &o2, "cannot hold bf16");
}

#[test]
fn truncated_and_corrupt_safetensors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = d.join("o.safetensors");
    let opts = to(format::F16, Rounding::RN, Policy::default());
    let gp = d.join("good.safetensors");
    write_safetensors(&gp, &[("a", "F32", vec![2, 2], le_bytes(&[0; 4]))], None);
    let good = std::fs::read(&gp).unwrap();
    let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
    let with_header = |h: &str, data: usize| {
        let mut b = (h.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(h.as_bytes());
        b.extend(std::iter::repeat_n(0u8, data));
        b
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "empty.safetensors",
            vec![],
            "shorter than the 8-byte header length",
        ),
        (
            "five.safetensors",
            vec![1, 2, 3, 4, 5],
            "shorter than the 8-byte header length",
        ),
        (
            "hdr.safetensors",
            good[..8 + n / 2].to_vec(),
            "truncated header",
        ),
        (
            "data.safetensors",
            good[..good.len() - 4].to_vec(),
            "truncated file",
        ),
        (
            "huge.safetensors",
            {
                let mut b = good.clone();
                b[..8].copy_from_slice(&u64::MAX.to_le_bytes());
                b
            },
            "implausibly large",
        ),
        (
            "json.safetensors",
            with_header("{\"a\": {\"dtype\": \"F32\", ", 0),
            "JSON header is invalid",
        ),
        (
            "utf8.safetensors",
            {
                let mut b = good.clone();
                b[9] = 0xff;
                b
            },
            "not UTF-8",
        ),
        (
            "shape.safetensors",
            with_header(
                r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
                8,
            ),
            "needs 12 bytes but its data offsets span 8",
        ),
        (
            "gap.safetensors",
            with_header(
                r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}"#,
                12,
            ),
            "do not start where the previous tensor ends",
        ),
        (
            "dtype.safetensors",
            with_header(
                r#"{"a":{"dtype":"F7","shape":[1],"data_offsets":[0,4]}}"#,
                4,
            ),
            "unknown variant",
        ),
        (
            "complex.safetensors",
            with_header(
                r#"{"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}}"#,
                8,
            ),
            "dtype C64 has no gpucvt format",
        ),
        (
            "bool.safetensors",
            with_header(
                r#"{"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}"#,
                2,
            ),
            "dtype BOOL has no gpucvt format",
        ),
    ];
    for (name, bytes, needle) in cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        expect_failure(d, &p, &o, &opts, needle);
    }
}

#[test]
fn output_equal_to_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = d.join("a.npy");
    npy_file(&p, "<f4", &[2], &le_bytes(&[0x3f80_0000; 2]));
    let before = std::fs::read(&p).unwrap();
    let opts = to(format::F16, Rounding::RN, Policy::default());
    expect_failure(d, &p, &p, &opts, "is the input file");
    // The same file by another spelling, and through a hard link.
    let other = d.join(".").join("a.npy");
    expect_failure(d, &p, &other, &opts, "is the input file");
    let link = d.join("b.npy");
    if std::fs::hard_link(&p, &link).is_ok() {
        expect_failure(d, &p, &link, &opts, "is the input file");
    }
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // The scale sidecar may not be the input either.
    let q = d.join("q_scale.npy");
    npy_file(&q, "<f4", &[32], &le_bytes(&[0x3f80_0000; 32]));
    let mut o = mx_options(format::E4M3, ScaleRule::Floor);
    o.threads = 1;
    expect_failure(d, &q, &d.join("q.npy"), &o, "is the input file");
}

fn permissions_enforced(dir: &Path) -> bool {
    // Root ignores permission bits: probe with a write.
    let probe = dir.join("probe");
    let ok = std::fs::write(&probe, b"x").is_err();
    let _ = std::fs::remove_file(&probe);
    ok
}

#[cfg(unix)]
#[test]
fn read_only_output_folder() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    npy_file(&p, "<f4", &[2], &le_bytes(&[0x3f80_0000; 2]));
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if !permissions_enforced(&ro) {
        eprintln!("skipped: permissions are not enforced (running as root)");
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        return;
    }
    let opts = to(format::F16, Rounding::RN, Policy::default());
    let e = run(&p, &ro.join("o.npy"), &opts).unwrap_err();
    assert!(e.to_string().contains("cannot create the output"), "{e}");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(listing(&ro).is_empty());
}

#[test]
fn an_existing_output_is_replaced_only_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = d.join("a.npy");
    npy_file(&p, "<f4", &[2], &le_bytes(&[0x3f80_0000; 2]));
    let o = d.join("o.npy");
    std::fs::write(&o, b"old").unwrap();
    // Failure: the old output stays as it was.
    let bad = d.join("bad.npy");
    std::fs::write(&bad, b"\x93NUMPY\x01\x00").unwrap();
    let opts = to(format::F16, Rounding::RN, Policy::default());
    assert!(run(&bad, &o, &opts).is_err());
    assert_eq!(std::fs::read(&o).unwrap(), b"old");
    run(&p, &o, &opts).unwrap();
    assert_ne!(std::fs::read(&o).unwrap(), b"old");
    assert_eq!(listing(d), vec!["a.npy", "bad.npy", "o.npy"]);
}

#[test]
fn summary_counts() {
    let dir = tempfile::tempdir().unwrap();
    let vals: Vec<u32> = vec![
        1.0f32.to_bits(),
        1000.0f32.to_bits(),     // saturates (e4m3 max 448)
        f32::INFINITY.to_bits(), // saturates
        f32::NAN.to_bits(),      // NaN
        1e-9f32.to_bits(),       // flushed to zero
        0.3f32.to_bits(),
        (-0.0f32).to_bits(),
        2.0f32.to_bits(),
    ];
    let input = dir.path().join("s.npy");
    npy_file(&input, "<f4", &[8], &le_bytes(&vals));
    let s = run(
        &input,
        &dir.path().join("t.npy"),
        &to(format::E4M3, Rounding::RN, satfinite()),
    )
    .unwrap();
    let t = s.total;
    assert_eq!(t.elements, 8);
    assert_eq!(t.saturated, 2);
    assert_eq!(t.nan, 1);
    assert_eq!(t.flushed_to_zero, 1);
    assert_eq!(t.overflow_to_inf, 0);
    // Error over the 6 finite pairs: 1000→448 is the largest.
    assert_eq!(t.error_elements, 6);
    assert_eq!(t.max_abs_error, 552.0);
    // e5m2 without satfinite: 1e6 overflows to infinity.
    let input = dir.path().join("o.npy");
    npy_file(
        &input,
        "<f4",
        &[2],
        &le_bytes(&[1e6f32.to_bits(), 1.0f32.to_bits()]),
    );
    let s = run(
        &input,
        &dir.path().join("p.npy"),
        &to(format::E5M2, Rounding::RN, Policy::default()),
    )
    .unwrap();
    assert_eq!(s.total.overflow_to_inf, 1);
    assert_eq!(s.total.error_elements, 1);
}

// ---------- multi-tensor files, read back with the safetensors crate ----------

/// Reads a converted file with the `safetensors` crate (not gpucvt's own header reader):
/// name → (dtype, shape, bytes).
#[allow(clippy::type_complexity)]
fn read_with_crate(path: &Path) -> Vec<(String, String, Vec<usize>, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut out: Vec<_> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| {
            (
                n,
                format!("{:?}", v.dtype()),
                v.shape().to_vec(),
                v.data().to_vec(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Tensors of several dtypes whose last dimensions divide into blocks of 32.
fn mixed_tensors() -> Vec<(&'static str, &'static str, Vec<usize>, Vec<u8>)> {
    let v = f32_values(4096);
    let halves = |k: usize, n: usize| -> Vec<u8> {
        v[k..k + n]
            .iter()
            .flat_map(|w| ((w >> 16) as u16).to_le_bytes())
            .collect()
    };
    vec![
        ("a", "F32", vec![8, 64], le_bytes(&v[..512])),
        ("b", "BF16", vec![4, 32], halves(512, 128)),
        ("c", "F32", vec![2, 96], le_bytes(&v[700..892])),
        ("d", "F16", vec![32], halves(1000, 32)),
        ("e", "F32", vec![3, 32], le_bytes(&v[2000..2096])),
    ]
}

#[test]
fn mx_multi_tensor_file_equals_each_tensor_converted_alone() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    let tensors = mixed_tensors();
    write_safetensors(&input, &tensors, None);
    for dst in [format::E2M1, format::E4M3, format::E3M2] {
        for method in ScaleRule::ALL {
            let opts = mx_options(dst, method);
            let out = dir.path().join("o.safetensors");
            run(&input, &out, &opts).unwrap();
            let got = read_with_crate(&out);
            // Five tensors and five scale tensors, each equal to its conversion alone.
            assert_eq!(got.len(), 10);
            for t in &tensors {
                let one = dir.path().join(format!("one-{}.safetensors", t.0));
                write_safetensors(&one, std::slice::from_ref(t), None);
                let one_out = dir.path().join(format!("one-{}-o.safetensors", t.0));
                run(&one, &one_out, &opts).unwrap();
                let alone = read_with_crate(&one_out);
                for name in [t.0.to_string(), format!("{}_scale", t.0)] {
                    let want = alone.iter().find(|x| x.0 == name).unwrap();
                    let have = got.iter().find(|x| x.0 == name).unwrap();
                    assert_eq!(have, want, "{dst} {method:?}: {name}");
                }
            }
        }
    }
}

#[test]
fn tensors_a_recipe_cannot_take_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    let ids: Vec<u8> = (0..8u64).flat_map(|i| i.to_le_bytes()).collect();
    let mut tensors = mixed_tensors();
    tensors.push(("scalar", "F32", vec![], le_bytes(&[0x3f80_0000])));
    tensors.push(("odd", "F32", vec![3, 5], le_bytes(&f32_values(15))));
    tensors.push(("ids", "I64", vec![8], ids.clone()));
    tensors.push(("mask", "BOOL", vec![8], vec![1; 8]));
    write_safetensors(&input, &tensors, None);
    let out = dir.path().join("o.safetensors");
    let s = run(&input, &out, &mx_options(format::E4M3, ScaleRule::Floor)).unwrap();
    let kept: Vec<(&str, &str)> = s
        .kept
        .iter()
        .map(|k| (k.name.as_str(), k.reason.as_str()))
        .collect();
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert!(
        kept[0].1.contains("a scalar cannot be block-scaled"),
        "{kept:?}"
    );
    assert!(kept[1].1.contains("last dimension 5"), "{kept:?}");
    assert!(kept[2].1.contains("integer dtype I64"), "{kept:?}");
    assert!(kept[3].1.contains("BOOL"), "{kept:?}");
    let got = read_with_crate(&out);
    for t in &tensors[5..] {
        let have = got.iter().find(|x| x.0 == t.0).unwrap();
        assert_eq!(&have.3, &t.3, "{} is copied byte for byte", t.0);
        assert!(!got.iter().any(|x| x.0 == format!("{}_scale", t.0)));
    }
    // --strict: the first of them is an error, and nothing is written.
    let mut strict = mx_options(format::E4M3, ScaleRule::Floor);
    strict.strict = true;
    expect_failure(
        dir.path(),
        &input,
        &dir.path().join("s.safetensors"),
        &strict,
        "\"scalar\": a scalar cannot be block-scaled (strict",
    );
    // An integer tensor named exactly is converted.
    let mut named = to(format::F32, Rounding::RN, Policy::default());
    named.tensors = vec!["ids".into()];
    let s = run(&input, &out, &named).unwrap();
    assert_eq!(s.tensors.len(), 1);
    assert_eq!(s.tensors[0].name, "ids");
}

#[test]
fn glob_selection_and_exclusion() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    let v = f32_values(64);
    let names = [
        "model.layers.0.attn.weight",
        "model.layers.0.norm.weight",
        "model.layers.1.attn.weight",
        "model.layers.1.attn.bias",
        "lm_head.weight",
    ];
    let tensors: Vec<_> = names
        .iter()
        .map(|n| (*n, "F32", vec![16], le_bytes(&v[..16])))
        .collect();
    write_safetensors(&input, &tensors, None);
    let out = dir.path().join("o.safetensors");
    let mut opts = to(format::BF16, Rounding::RN, Policy::default());
    opts.tensors = vec!["model.*.weight".into()];
    opts.exclude = vec!["*norm*".into()];
    let s = run(&input, &out, &opts).unwrap();
    let converted: Vec<&str> = s.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        converted,
        ["model.layers.0.attn.weight", "model.layers.1.attn.weight"]
    );
    assert_eq!(s.copied.len(), 3);
    // A pattern that matches nothing is an error naming it.
    opts.tensors = vec!["*.wieght".into()];
    expect_failure(
        dir.path(),
        &input,
        &out,
        &opts,
        "no tensor named \"*.wieght\"",
    );
    opts.tensors = vec!["[".into()];
    expect_failure(dir.path(), &input, &out, &opts, "not a valid pattern");
}

#[test]
fn dry_run_plans_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    let mut tensors = mixed_tensors();
    tensors.push(("scalar", "F32", vec![], le_bytes(&[0x3f80_0000])));
    write_safetensors(&input, &tensors, None);
    let out = dir.path().join("o.safetensors");
    let opts = mx_options(format::E4M3, ScaleRule::Floor);
    let before = listing(dir.path());
    let plan = gpucvt_tensor::plan_file(&input, &out, &opts).unwrap();
    assert_eq!(listing(dir.path()), before);
    assert_eq!(plan.tensors.len(), 6);
    assert_eq!(plan.tensors[0].action, "convert");
    assert_eq!(plan.tensors[0].bytes, 512);
    assert_eq!(plan.tensors[0].scale_bytes, Some(16));
    assert_eq!(plan.tensors[5].action, "keep");
    run(&input, &out, &opts).unwrap();
    assert_eq!(plan.output_bytes, std::fs::metadata(&out).unwrap().len());
}

#[test]
fn stray_bits_above_a_narrow_format_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("codes.npy");
    npy_file(&input, "|u1", &[4], &[0x01, 0x0f, 0x1f, 0xff]);
    let out = dir.path().join("o.npy");
    for rounding in [Rounding::RN, stochastic(8)] {
        for block in [None, Some(2)] {
            let mut opts = to(format::F32, rounding, Policy::default());
            opts.from = Some(format::E2M1);
            opts.block = block.map(|size| BlockScaling::mx(size, ScaleRule::Floor));
            expect_failure(
                dir.path(),
                &input,
                &out,
                &opts,
                "element 2 is 0x1f, which is not a e2m1 encoding",
            );
        }
    }
}

#[test]
fn special_files_are_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    write_safetensors(&input, &mixed_tensors(), None);
    let opts = to(format::BF16, Rounding::RN, Policy::default());
    #[cfg(unix)]
    {
        let e = run(&input, Path::new("/dev/null"), &opts);
        // (The kinds differ, so the extension check may speak first: either way, refused.)
        assert!(e.is_err());
        let fifo = dir.path().join("p.safetensors");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let e = run(&input, &fifo, &opts).unwrap_err();
            assert!(e.to_string().contains("a FIFO"), "{e}");
            let m = std::fs::symlink_metadata(&fifo).unwrap();
            assert!(std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
            // A pipe as the input: a clear error, not "Illegal seek".
            let e = run(&fifo, &dir.path().join("o.safetensors"), &opts).unwrap_err();
            assert!(e.to_string().contains("regular file"), "{e}");
        }
        // A symbolic link to a file: the file is replaced, the link kept.
        let target = dir.path().join("target.safetensors");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.safetensors");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        run(&input, &link, &opts).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(read_with_crate(&target).len(), 5);
    }
    let folder = dir.path().join("f.safetensors");
    std::fs::create_dir(&folder).unwrap();
    let e = run(&input, &folder, &opts).unwrap_err();
    assert!(e.to_string().contains("a folder"), "{e}");
}

#[test]
fn a_duplicate_tensor_name_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("dup.safetensors");
    let h = br#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#;
    let mut b = (h.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(h);
    b.extend_from_slice(&[0; 8]);
    std::fs::write(&input, b).unwrap();
    expect_failure(
        dir.path(),
        &input,
        &dir.path().join("o.safetensors"),
        &to(format::BF16, Rounding::RN, Policy::default()),
        "the name \"a\" appears twice",
    );
}

#[test]
fn absurd_thread_counts_are_lowered_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    write_safetensors(&input, &mixed_tensors(), None);
    let mut opts = to(format::BF16, Rounding::RN, Policy::default());
    opts.threads = 1_000_000;
    let s = run(&input, &dir.path().join("o.safetensors"), &opts).unwrap();
    assert_eq!(s.notes.len(), 1);
    assert!(
        s.notes[0].contains("1000000 threads asked for"),
        "{:?}",
        s.notes
    );
}

#[test]
fn deeply_nested_npy_descr_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("deep.npy");
    let descr = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (1,), }}\n");
    let mut b = b"\x93NUMPY\x02\x00".to_vec();
    b.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    b.extend_from_slice(dict.as_bytes());
    std::fs::write(&input, b).unwrap();
    expect_failure(
        dir.path(),
        &input,
        &dir.path().join("o.npy"),
        &to(format::BF16, Rounding::RN, Policy::default()),
        "nested more than",
    );
}

/// A recipe that takes only `f32` tensors, refusing the others with [`Error::Refused`].
fn f32_only() -> Options {
    let mut o = Options::new(Box::new(|src| {
        if *src == format::F32 {
            Ok(Conversion::new(
                *src,
                format::F16,
                Rounding::RN,
                Policy::default(),
            ))
        } else {
            Err(Error::Refused(format!("only f32 is taken, not {src}")))
        }
    }));
    o.all = true;
    o
}

#[test]
fn a_recipe_refusal_is_the_kept_reason_or_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.safetensors");
    let halves: Vec<u8> = [0x3c00u16; 4]
        .iter()
        .flat_map(|h| h.to_le_bytes())
        .collect();
    let tensors = vec![
        ("a", "F32", vec![4], le_bytes(&[0x3f80_0000; 4])),
        ("b", "F16", vec![4], halves.clone()),
    ];
    write_safetensors(&input, &tensors, None);
    let s = run(&input, &dir.path().join("o.safetensors"), &f32_only()).unwrap();
    assert_eq!(s.tensors.len(), 1);
    assert_eq!(s.kept.len(), 1);
    assert_eq!(s.kept[0].name, "b");
    // The refusal's message as it is, nothing added.
    assert_eq!(s.kept[0].reason, "only f32 is taken, not f16");
    let mut strict = f32_only();
    strict.strict = true;
    expect_failure(
        dir.path(),
        &input,
        &dir.path().join("s.safetensors"),
        &strict,
        "\"b\": only f32 is taken, not f16 (strict",
    );
    // One tensor (.npy): the refusal, after the file's name, is the error.
    let npy = dir.path().join("h.npy");
    npy_file(&npy, "<f2", &[4], &halves);
    expect_failure(
        dir.path(),
        &npy,
        &dir.path().join("h2.npy"),
        &f32_only(),
        "h.npy: only f32 is taken, not f16",
    );
}
