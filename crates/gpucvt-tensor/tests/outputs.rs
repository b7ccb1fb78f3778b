//! An output and its sidecar files as one unit, and the other hazards of writing files:
//! stale sidecars, concurrent writers, the blocking recorded, modes and owners, long names,
//! cancellation, and the message of a raw file cut short (issue 41 §6).

use gpucvt_core::format::{self, Format};
use gpucvt_core::{Conversion, Policy, Rounding};
use gpucvt_tensor::chunk::splitmix64;
use gpucvt_tensor::{
    convert_file, dequantize_file, metadata_path, scale_2_path, scale_path, ConvertRequest,
    DequantizeOptions, Error, Options, ScalingRequest, Summary,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

// ---------- helpers ----------

/// The options of `gpucvt convert --recipe NAME` (`more` changes the request).
fn recipe(name: &str, more: impl FnOnce(&mut ConvertRequest)) -> Options {
    let mut req = ConvertRequest {
        scaling: ScalingRequest {
            recipe: Some(name.into()),
            ..Default::default()
        },
        threads: 2,
        all: true,
        ..Default::default()
    };
    more(&mut req);
    req.build().unwrap().options
}

/// The options of `gpucvt convert --to FMT --block BLOCK [--scale SCALE]`.
fn blocked(to: &str, block: &str, scale: Option<&str>) -> Options {
    ConvertRequest {
        to: Some(to.into()),
        satfinite: true,
        scaling: ScalingRequest {
            block: Some(block.into()),
            scale: scale.map(String::from),
            ..Default::default()
        },
        threads: 2,
        all: true,
        ..Default::default()
    }
    .build()
    .unwrap()
    .options
}

fn plain(dst: Format) -> Options {
    let mut o = Options::new(Box::new(move |src| {
        Ok(Conversion::new(*src, dst, Rounding::RN, Policy::default()))
    }));
    o.threads = 2;
    o.all = true;
    o
}

fn run(input: &Path, output: &Path, opts: &Options) -> Result<Summary, Error> {
    convert_file(input, output, opts, &mut |_, _| {})
}

fn dequantize(input: &Path, output: &Path, opts: &DequantizeOptions) -> Result<Summary, Error> {
    dequantize_file(input, output, opts, &mut |_, _| {})
}

fn to_f64() -> DequantizeOptions {
    DequantizeOptions {
        to: format::F64,
        threads: 2,
        ..DequantizeOptions::default()
    }
}

/// `n` f32 values of varied magnitudes (a xorshift stream), without NaN or infinities.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut x = splitmix64(seed);
    (0..n)
        .map(|_| {
            x = splitmix64(x);
            let m = (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            m * (1 << ((x >> 8) % 12)) as f32
        })
        .collect()
}

fn npy_f32(path: &Path, shape: &[u64], v: &[f32]) {
    let data: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, gpucvt_reference::npy_bytes("<f4", shape, &data)).unwrap();
}

/// The data of a `.npy` file of `f64`, read by the tests' own reading of the format.
fn npy_f64s(path: &Path) -> Vec<f64> {
    let b = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize + 10;
    b[hlen..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn max_error(x: &[f32], y: &[f64]) -> (f64, usize) {
    assert_eq!(x.len(), y.len());
    let nan = y.iter().filter(|v| v.is_nan()).count();
    let e = x
        .iter()
        .zip(y)
        .filter(|(_, b)| !b.is_nan())
        .map(|(a, b)| (*a as f64 - b).abs())
        .fold(0.0, f64::max);
    (e, nan)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The bytes of every part of the unit of `data` (absent parts as `None`).
fn unit_bytes(data: &Path) -> Vec<Option<Vec<u8>>> {
    [
        data.to_path_buf(),
        scale_path(data),
        scale_2_path(data),
        metadata_path(data),
    ]
    .iter()
    .map(|p| std::fs::read(p).ok())
    .collect()
}

/// Copies the unit of `from` to that of `to`, byte for byte, parts absent from `from`
/// removed at `to`.
fn copy_unit(from: &Path, to: &Path) {
    let parts = |p: &Path| -> [PathBuf; 4] {
        [
            p.to_path_buf(),
            scale_path(p),
            scale_2_path(p),
            metadata_path(p),
        ]
    };
    for (a, b) in parts(from).iter().zip(parts(to).iter()) {
        match std::fs::read(a) {
            Ok(bytes) => std::fs::write(b, bytes).unwrap(),
            Err(_) => {
                let _ = std::fs::remove_file(b);
            }
        }
    }
}

// ---------- stale sidecars ----------

/// Issue 41 §6: nvfp4 then mxfp4 into one `.npy` name left the first run's `_scale_2`, which
/// a dequantization then used (64 NaN, max error 2.84 where 0.99 is right).
#[test]
fn a_second_run_removes_the_sidecars_it_does_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(64 * 64, 1);
    npy_f32(&d.join("x.npy"), &[64, 64], &x);
    let q = d.join("q.npy");
    run(&d.join("x.npy"), &q, &recipe("nvfp4", |_| {})).unwrap();
    assert!(scale_2_path(&q).exists() && metadata_path(&q).exists());
    let nvfp4 = unit_bytes(&q);
    let mxfp4 = run(&d.join("x.npy"), &q, &recipe("mxfp4", |_| {})).unwrap();
    assert!(!scale_2_path(&q).exists(), "{:?}", listing(d));
    // The unit equals the same run into a fresh name.
    let fresh = d.join("fresh.npy");
    run(&d.join("x.npy"), &fresh, &recipe("mxfp4", |_| {})).unwrap();
    let (now, want) = (unit_bytes(&q), unit_bytes(&fresh));
    assert_eq!(now[..3], want[..3]);
    let meta = String::from_utf8(now[3].clone().unwrap()).unwrap();
    assert!(meta.contains("\"elements\": \"e2m1\""), "{meta}");
    assert!(
        meta.contains("scale=ue8m0") && !meta.contains("scale_2"),
        "{meta}"
    );
    // Dequantized with no options: the blocking and the element format come from the
    // metadata, and the exact values' largest distance from the input is the error the
    // mxfp4 quantization counted.
    let back = d.join("back.npy");
    dequantize(&q, &back, &to_f64()).unwrap();
    let (err, nan) = max_error(&x, &npy_f64s(&back));
    assert_eq!((err, nan), (mxfp4.total.max_abs_error, 0));
    // The old second level put back beside the new data is refused, not used.
    std::fs::write(scale_2_path(&q), nvfp4[2].clone().unwrap()).unwrap();
    let e = dequantize(&q, &back, &to_f64()).unwrap_err().to_string();
    assert!(
        e.contains("q_scale_2.npy does not belong to")
            && e.contains("records no second-level scale"),
        "{e}"
    );
    std::fs::remove_file(scale_2_path(&q)).unwrap();
    // So are the old block scales (the same shape, other bytes) and the old data.
    std::fs::write(scale_path(&q), nvfp4[1].clone().unwrap()).unwrap();
    let e = dequantize(&q, &back, &to_f64()).unwrap_err().to_string();
    assert!(e.contains("q_scale.npy"), "{e}");
    copy_unit(&fresh, &q);
    std::fs::write(&q, nvfp4[0].clone().unwrap()).unwrap();
    let e = dequantize(&q, &back, &to_f64()).unwrap_err().to_string();
    assert!(
        e.contains("does not match its metadata") && e.contains("checksum differs"),
        "{e}"
    );
}

/// Issue 41 §6: mxfp8 then plain e4m3 into one name left `_scale`, so the plain codes were
/// dequantized with the old scales (max error 4.3).
#[test]
fn a_run_without_scales_removes_the_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(4 * 64, 2);
    npy_f32(&d.join("x.npy"), &[4, 64], &x);
    let q = d.join("q.npy");
    run(&d.join("x.npy"), &q, &recipe("mxfp8", |_| {})).unwrap();
    assert!(scale_path(&q).exists() && metadata_path(&q).exists());
    run(&d.join("x.npy"), &q, &plain(format::E4M3)).unwrap();
    assert_eq!(listing(d), vec!["q.npy", "x.npy"]);
    let opts = DequantizeOptions {
        elements: Some(format::E4M3),
        ..to_f64()
    };
    let e = dequantize(&q, &d.join("back.npy"), &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("its block scales") && e.contains("are missing"),
        "{e}"
    );
}

/// A dequantized output is a unit too: sidecars of an earlier quantized file of that name
/// go, so that it cannot be read with them.
#[test]
fn a_dequantized_output_removes_the_old_sidecars() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(2 * 64, 3);
    npy_f32(&d.join("x.npy"), &[2, 64], &x);
    run(&d.join("x.npy"), &d.join("q.npy"), &recipe("mxfp8", |_| {})).unwrap();
    run(&d.join("x.npy"), &d.join("r.npy"), &recipe("nvfp4", |_| {})).unwrap();
    let opts = DequantizeOptions {
        to: format::F16,
        ..to_f64()
    };
    dequantize(&d.join("q.npy"), &d.join("r.npy"), &opts).unwrap();
    assert_eq!(
        listing(d),
        vec![
            "q.npy",
            "q.npy.gpucvt.json",
            "q_scale.npy",
            "r.npy",
            "x.npy"
        ]
    );
}

/// The metadata records the element format, the shape, the blocking and a checksum of each
/// part, and is itself checked: one it cannot read is an error naming it.
#[test]
fn the_metadata_is_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(32 * 48, 4);
    npy_f32(&d.join("x.npy"), &[32, 48], &x);
    let q = d.join("q.npy");
    run(&d.join("x.npy"), &q, &recipe("nvfp4", |_| {})).unwrap();
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(metadata_path(&q)).unwrap()).unwrap();
    assert_eq!(meta["gpucvt"], "quantized unit 1");
    assert_eq!(meta["elements"], "e2m1");
    assert_eq!(meta["shape"], serde_json::json!([32, 48]));
    assert_eq!(
        meta["scaling"],
        "block=16 axis=-1 scale=ue4m3 rule=floor second_level=true layout=rows"
    );
    // Each checksum is the XXH3-64 of the part's bytes after its .npy header.
    for (key, path) in [
        ("data", q.clone()),
        ("scale", scale_path(&q)),
        ("scale_2", scale_2_path(&q)),
    ] {
        let b = std::fs::read(&path).unwrap();
        let h = gpucvt_tensor::npy::read_header(&mut &b[..], "t").unwrap();
        let body = &b[h.header_len as usize..];
        assert_eq!(meta[key]["bytes"], body.len() as u64, "{key}");
        assert_eq!(
            meta[key]["xxh3"],
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(body)),
            "{key}"
        );
        assert_eq!(
            meta[key]["file"],
            path.file_name().unwrap().to_str().unwrap()
        );
    }
    // Given options must agree with it.
    let e = dequantize(
        &q,
        &d.join("b.npy"),
        &DequantizeOptions {
            elements: Some(format::E4M3),
            ..to_f64()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("records e2m1 elements, not e4m3"), "{e}");
    let e = dequantize(
        &q,
        &d.join("b.npy"),
        &DequantizeOptions {
            block: ScalingRequest {
                block: Some("32".into()),
                ..Default::default()
            }
            .build()
            .unwrap(),
            ..to_f64()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("records the blocking block=16"), "{e}");
    // The recipe it was quantized with is accepted (its scale rule does not matter).
    let nvfp4 = ScalingRequest {
        recipe: Some("nvfp4".into()),
        rule: None,
        ..Default::default()
    }
    .dequantize(format::F64, None, 2)
    .unwrap();
    dequantize(&q, &d.join("b.npy"), &nvfp4).unwrap();
    std::fs::write(metadata_path(&q), b"{\"gpucvt\": 1}").unwrap();
    let e = dequantize(&q, &d.join("c.npy"), &to_f64())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("q.npy.gpucvt.json: not the metadata gpucvt writes"),
        "{e}"
    );
    assert!(!d.join("c.npy").exists());
    // Hostile ones: huge (not read whole), or a FIFO (not waited on).
    std::fs::write(metadata_path(&q), vec![b' '; 2 << 20]).unwrap();
    let e = dequantize(&q, &d.join("c.npy"), &to_f64())
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("it is 2097152 bytes long"), "{e}");
    std::fs::remove_file(metadata_path(&q)).unwrap();
    #[cfg(unix)]
    if std::process::Command::new("mkfifo")
        .arg(metadata_path(&q))
        .status()
        .is_ok_and(|s| s.success())
    {
        let e = dequantize(&q, &d.join("c.npy"), &to_f64())
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("it is not a regular file"), "{e}");
    }
}

// ---------- the blocking read back ----------

/// Issue 41 §6: a 300×300 tensor in 100×100 tiles, dequantized without the blocking, was
/// read in tiles of another size (error 340 instead of 13).
#[test]
fn tiles_are_read_back_from_the_metadata_and_never_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = values(300 * 300, 5);
    npy_f32(&d.join("x.npy"), &[300, 300], &x);
    let q = d.join("q.npy");
    let opts = blocked("e4m3", "100x100", Some("f32"));
    let s = run(&d.join("x.npy"), &q, &opts).unwrap();
    let back = d.join("back.npy");
    dequantize(&q, &back, &to_f64()).unwrap();
    let (err, _) = max_error(&x, &npy_f64s(&back));
    assert_eq!(err, s.total.max_abs_error);
    let with_block = DequantizeOptions {
        block: opts.block,
        elements: Some(format::E4M3),
        ..to_f64()
    };
    dequantize(&q, &d.join("given.npy"), &with_block).unwrap();
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(d.join("given.npy")).unwrap()
    );
    // Without the metadata (a file gpucvt did not write) the shapes fit tiles of 100 to 149:
    // refused, saying what to give.
    std::fs::remove_file(metadata_path(&q)).unwrap();
    let e4m3 = DequantizeOptions {
        elements: Some(format::E4M3),
        ..to_f64()
    };
    let e = dequantize(&q, &d.join("guess.npy"), &e4m3)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fit tiles of several sizes (100 to 149 rows by 100 to 149 columns)")
            && e.contains("for example 100x100"),
        "{e}"
    );
    assert!(!d.join("guess.npy").exists());
    // Given, it is read as given.
    dequantize(&q, &d.join("given2.npy"), &with_block).unwrap();
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(d.join("given2.npy")).unwrap()
    );
}

/// Tiles whose side is the power of two that divides (DeepSeek's 128 × 128, also ragged)
/// are still read off the shapes where no metadata says.
#[test]
fn evident_tiles_are_still_read_off_the_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 576 rows: 5 tiles of 116 to 143, of which 128 is the power of two and no side
    // divides 576 into 5; 200 rows: 2 tiles of 100 to 199, and both 100 (which divides)
    // and 128 are evident readings.
    for (shape, ok) in [
        ([256u64, 384u64], true),
        ([576, 384], true),
        ([100, 100], true),
        ([200, 384], false),
    ] {
        let n = (shape[0] * shape[1]) as usize;
        let x = values(n, 6);
        npy_f32(&d.join("x.npy"), &shape, &x);
        let q = d.join("q.npy");
        run(&d.join("x.npy"), &q, &recipe("fp8-block128", |_| {})).unwrap();
        dequantize(&q, &d.join("a.npy"), &to_f64()).unwrap();
        std::fs::remove_file(metadata_path(&q)).unwrap();
        let e4m3 = DequantizeOptions {
            elements: Some(format::E4M3),
            ..to_f64()
        };
        let r = dequantize(&q, &d.join("b.npy"), &e4m3);
        if ok {
            assert!(r.is_ok(), "{shape:?}: {r:?}");
            assert_eq!(
                std::fs::read(d.join("a.npy")).unwrap(),
                std::fs::read(d.join("b.npy")).unwrap(),
                "{shape:?}"
            );
        } else {
            let e = r.unwrap_err().to_string();
            assert!(e.contains("(100 to 199 rows by 128 columns)"), "{e}");
        }
    }
}

// ---------- concurrent writers ----------

/// Issue 41 §6: writers into one `.npy` output could leave the data of one and the scales
/// of another (1–4 of 10 trials with Python threads). Now the unit left is always one
/// writer's, byte for byte.
#[test]
fn concurrent_writers_leave_one_writers_unit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let writers = 4;
    let mut want = Vec::new();
    for w in 0..writers {
        let x = values(16 * 256, 100 + w);
        npy_f32(&d.join(format!("x{w}.npy")), &[16, 256], &x);
        let r = d.join(format!("r{w}.npy"));
        run(&d.join(format!("x{w}.npy")), &r, &recipe("nvfp4", |_| {})).unwrap();
        let mut u = unit_bytes(&r);
        // The metadata names its files; the rest is the same.
        u[3] = None;
        want.push(u);
    }
    let q = d.join("q.npy");
    for round in 0..30 {
        std::thread::scope(|s| {
            for w in 0..writers {
                let (d, q) = (d, &q);
                s.spawn(move || {
                    let opts = recipe("nvfp4", |r| r.threads = 1);
                    run(&d.join(format!("x{w}.npy")), q, &opts).unwrap();
                });
            }
        });
        let mut got = unit_bytes(&q);
        assert!(got[3].is_some(), "round {round}: no metadata");
        got[3] = None;
        assert!(
            want.contains(&got),
            "round {round}: the parts of q.npy come from different writers"
        );
        dequantize(&q, &d.join("back.npy"), &to_f64()).unwrap();
    }
    // No lock file or temporary is left.
    let left: Vec<String> = listing(d)
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

// ---------- mode, owner, read-only ----------

#[cfg(unix)]
#[test]
fn an_overwritten_output_keeps_its_mode_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy_f32(&d.join("x.npy"), &[2, 32], &values(64, 7));
    let q = d.join("q.npy");
    std::fs::write(&q, b"old").unwrap();
    std::fs::set_permissions(&q, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Root may give the file away: the owner is kept too.
    let root = std::fs::metadata(&q).unwrap().uid() == 0;
    if root {
        std::os::unix::fs::chown(&q, Some(4321), Some(4322)).unwrap();
    }
    run(&d.join("x.npy"), &q, &recipe("mxfp8", |_| {})).unwrap();
    // The data keeps its mode; the new sidecars get the output's.
    for p in [q.clone(), scale_path(&q), metadata_path(&q)] {
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(m.mode() & 0o777, 0o600, "{}", p.display());
        if root {
            assert_eq!((m.uid(), m.gid()), (4321, 4322), "{}", p.display());
        }
    }
    // Each part keeps its own.
    std::fs::set_permissions(scale_path(&q), std::fs::Permissions::from_mode(0o640)).unwrap();
    run(&d.join("x.npy"), &q, &recipe("mxfp8", |_| {})).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
    assert_eq!((mode(&q), mode(&scale_path(&q))), (0o600, 0o640));
    // A dequantized output keeps its own too.
    let b = d.join("b.npy");
    std::fs::write(&b, b"old").unwrap();
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o604)).unwrap();
    dequantize(&q, &b, &to_f64()).unwrap();
    assert_eq!(mode(&b), 0o604);
}

/// Issue 41 §6: a read-only (0444) output was replaced. It is refused unless forced, and
/// so is a read-only sidecar the run would replace or remove.
#[cfg(unix)]
#[test]
fn a_read_only_output_is_replaced_only_when_forced() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy_f32(&d.join("x.npy"), &[2, 32], &values(64, 8));
    let q = d.join("q.npy");
    std::fs::write(&q, b"old").unwrap();
    std::fs::set_permissions(&q, std::fs::Permissions::from_mode(0o444)).unwrap();
    let e = run(&d.join("x.npy"), &q, &plain(format::BF16)).unwrap_err();
    assert!(
        matches!(e, Error::ReadOnly { ref path } if path == &q),
        "{e}"
    );
    assert!(e
        .to_string()
        .ends_with("q.npy is read-only: it is replaced or removed only when forced"));
    assert_eq!(std::fs::read(&q).unwrap(), b"old");
    assert_eq!(listing(d), vec!["q.npy", "x.npy"]);
    let mut forced = plain(format::BF16);
    forced.force = true;
    run(&d.join("x.npy"), &q, &forced).unwrap();
    assert_ne!(std::fs::read(&q).unwrap(), b"old");
    let m = std::fs::metadata(&q).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777,
        0o444
    );
    // A read-only sidecar that a run without scales would remove.
    let r = d.join("r.npy");
    run(&d.join("x.npy"), &r, &recipe("mxfp8", |_| {})).unwrap();
    std::fs::set_permissions(scale_path(&r), std::fs::Permissions::from_mode(0o444)).unwrap();
    let e = run(&d.join("x.npy"), &r, &plain(format::BF16)).unwrap_err();
    assert!(
        matches!(e, Error::ReadOnly { ref path } if path == &scale_path(&r)),
        "{e}"
    );
    assert!(scale_path(&r).exists() && metadata_path(&r).exists());
    // The dry run says so too, and so does a dequantization into it.
    assert!(matches!(
        gpucvt_tensor::plan_file(&d.join("x.npy"), &q, &plain(format::BF16)),
        Err(Error::ReadOnly { .. })
    ));
    let e = dequantize(&r, &q, &to_f64()).unwrap_err();
    assert!(matches!(e, Error::ReadOnly { .. }), "{e}");
    dequantize(
        &r,
        &q,
        &DequantizeOptions {
            force: true,
            ..to_f64()
        },
    )
    .unwrap();
    // A .safetensors output.
    let st = d.join("m.safetensors");
    let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header);
    b.extend_from_slice(&[0; 8]);
    std::fs::write(&st, b).unwrap();
    let o = d.join("o.safetensors");
    std::fs::write(&o, b"old").unwrap();
    std::fs::set_permissions(&o, std::fs::Permissions::from_mode(0o400)).unwrap();
    assert!(matches!(
        run(&st, &o, &plain(format::BF16)),
        Err(Error::ReadOnly { .. })
    ));
    assert_eq!(std::fs::read(&o).unwrap(), b"old");
}

// ---------- long names ----------

/// Issue 41 §6: output names of 237 to 255 bytes failed ("File name too long"): the
/// temporary's name was 19 bytes longer.
#[test]
fn output_names_up_to_255_bytes_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy_f32(&d.join("x.npy"), &[2, 32], &values(64, 9));
    for len in [230, 236, 237, 250, 255] {
        let name = format!("{}.npy", "n".repeat(len - 4));
        let out = d.join(&name);
        run(&d.join("x.npy"), &out, &plain(format::BF16)).unwrap();
        assert!(out.exists(), "{len}");
        std::fs::remove_file(&out).unwrap();
        // Non-ASCII names are cut at a character boundary.
        let name = format!("{}é.bin", "n".repeat(len - 6));
        std::fs::write(d.join("x.bin"), [0u8; 16]).unwrap();
        let mut o = plain(format::BF16);
        o.from = Some(format::F32);
        run(&d.join("x.bin"), &d.join(&name), &o).unwrap();
        std::fs::remove_file(d.join(&name)).unwrap();
    }
    // With block scales, up to the length whose sidecars still fit; longer is refused
    // before anything is written, naming the sidecar.
    let name = format!("{}.npy", "s".repeat(243 - 4));
    run(&d.join("x.npy"), &d.join(&name), &recipe("mxfp8", |_| {})).unwrap();
    let name = format!("{}.npy", "t".repeat(250 - 4));
    let e = run(&d.join("x.npy"), &d.join(&name), &recipe("mxfp8", |_| {}))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("would have a name of 256 bytes, more than the 255"),
        "{e}"
    );
    let left: Vec<String> = listing(d)
        .into_iter()
        .filter(|n| n.starts_with('.') || n.starts_with('t'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

// ---------- cancellation ----------

/// A set cancel flag stops a conversion between chunks: the existing output is untouched
/// and no temporary is left (the flag Python's `convert_file` sets on Ctrl-C).
#[test]
fn a_cancelled_conversion_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 24 MiB of f32: three chunks of the streaming engine, and several of the quantizer.
    let n = 6 << 20;
    std::fs::write(
        d.join("x.bin"),
        (0..n)
            .flat_map(|i| (i as f32 * 0.25).to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    std::fs::write(d.join("y.bin"), b"old").unwrap();
    let variants: Vec<Options> = vec![
        plain(format::E4M3),
        blocked("e4m3", "32", Some("f32")),
        recipe("fp8-tensor", |_| {}),
    ];
    for mut o in variants {
        o.from = Some(format::F32);
        let flag = Arc::new(AtomicBool::new(false));
        o.cancel = Some(flag.clone());
        // It stops at the next chunk: no chunk is done after the flag is set.
        let mut after = None;
        let e = convert_file(
            &d.join("x.bin"),
            &d.join("y.bin"),
            &o,
            &mut |done, _| match after.as_mut() {
                Some(n) => *n += 1,
                None if done > 0 => {
                    flag.store(true, Ordering::Relaxed);
                    after = Some(0);
                }
                None => {}
            },
        )
        .unwrap_err();
        assert!(matches!(e, Error::Cancelled), "{e}");
        assert_eq!(after, Some(0));
        assert_eq!(listing(d), vec!["x.bin", "y.bin"]);
        assert_eq!(std::fs::read(d.join("y.bin")).unwrap(), b"old");
    }
    // Set before it starts, for a dequantization too.
    let flag = Arc::new(AtomicBool::new(true));
    npy_f32(&d.join("s.npy"), &[2, 32], &values(64, 10));
    let mut o = recipe("mxfp8", |_| {});
    run(&d.join("s.npy"), &d.join("q.npy"), &o).unwrap();
    o.cancel = Some(flag.clone());
    assert!(matches!(
        run(&d.join("s.npy"), &d.join("r.npy"), &o),
        Err(Error::Cancelled)
    ));
    let opts = DequantizeOptions {
        cancel: Some(flag),
        ..to_f64()
    };
    assert!(matches!(
        dequantize(&d.join("q.npy"), &d.join("b.npy"), &opts),
        Err(Error::Cancelled)
    ));
    assert!(!d.join("r.npy").exists() && !d.join("b.npy").exists());
}

// ---------- a raw file cut short ----------

/// Issue 41 §6: a raw file that ends early was said to end "before the header says it
/// does"; raw data has no header.
#[test]
fn a_raw_file_shortened_while_read_is_not_said_to_have_a_header() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 6 << 20;
    let bytes: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    for (i, mut o) in [plain(format::BF16), blocked("e4m3", "64", Some("f32"))]
        .into_iter()
        .enumerate()
    {
        let x = d.join("x.bin");
        std::fs::write(&x, &bytes).unwrap();
        o.from = Some(format::F32);
        let mut cut = false;
        let e = convert_file(&x, &d.join("y.bin"), &o, &mut |done, _| {
            if done > 0 && !cut {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&x)
                    .unwrap()
                    .set_len(1 << 20)
                    .unwrap();
                cut = true;
            }
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("x.bin: the file ends before its data was read") && !e.contains("header"),
            "{i}: {e}"
        );
        assert!(!d.join("y.bin").exists());
    }
}
