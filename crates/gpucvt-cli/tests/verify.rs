//! `gpucvt verify` and `gpucvt sweep`, run as a user runs them.
//!
//! Expected results come from the library's PTX model (`gpucvt::ptx::eval::evaluate_bits`),
//! an independent path from the slice kernels the commands run.

use crate::common::{gpucvt_with, run};

use gpucvt::ptx::{eval::evaluate_bits, parse_instruction};

#[test]
fn verify_a_16_bit_source_exhaustively() {
    let (code, out, err) = run(&["verify", "cvt.rn.f16x2.e4m3x2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("every input: 65536 inputs"), "{out}");
    assert!(out.contains("all results agree"), "{out}");
    let (code, out, err) = run(&["verify", "cvt.rn.f32.f64", "--sample", "1000", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["form"], "cvt.rn.f32.f64");
    assert_eq!(v["exhaustive"], false);
    assert_eq!(v["mismatches"], 0);
    assert!(v["inputs"].as_u64().unwrap() > 1000);
    assert!(v["examples"].as_array().unwrap().is_empty());
}

#[test]
fn gpucvt_isa_lowers_the_kernels_instruction_set_and_a_bad_value_is_refused() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // A 16-bit source, so that each run is short in a debug build (`verify` runs all 2^32
    // inputs of an `f32` source): the JSON report names the process's instruction set,
    // whichever kernel the form takes; the text names it for `f32` kernels only (a table
    // is the same code on every one).
    let args = ["verify", "cvt.rn.f16x2.e4m3x2"];
    let json = ["verify", "cvt.rn.f16x2.e4m3x2", "--json"];
    let (code, out, err) = gpucvt_with(dir, &args, &[("GPUCVT_ISA", "baseline")]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("table kernel against the exact model"),
        "{out}"
    );
    assert!(out.contains("all results agree"), "{out}");
    // The baseline exists on every machine.
    let (code, out, err) = gpucvt_with(dir, &json, &[("GPUCVT_ISA", "baseline")]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["isa"], "baseline", "{out}");
    assert_eq!(v["mismatches"], 0);
    // A ceiling, in any case and with spaces: AVX2 where the CPU has it, else the baseline.
    let (code, out, err) = gpucvt_with(dir, &json, &[("GPUCVT_ISA", " AVX2 ")]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["isa"] == "avx2" || v["isa"] == "baseline", "{out}");
    // Unset or empty: the best the CPU has.
    let (code, out, err) = gpucvt_with(dir, &json, &[("GPUCVT_ISA", "")]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let isa = v["isa"].as_str().unwrap();
    assert!(["avx512", "avx2", "baseline"].contains(&isa), "{out}");
    for bad in ["sse9", "avx"] {
        let (code, out, err) = gpucvt_with(dir, &args, &[("GPUCVT_ISA", bad)]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(
            err,
            format!(
                "error: GPUCVT_ISA=\"{bad}\" names no instruction set: use baseline, avx2 or \
                 avx512\n"
            )
        );
    }
}

#[test]
fn verify_refuses_what_it_cannot_run() {
    for (args, needle) in [
        (vec!["verify", "mov hf <- f"], "PTX cvt form"),
        (vec!["verify", "cvt.rn.f16.f33"], "f33"),
        (
            vec!["verify", "cvt.rn.f16.f32", "--threads", "0"],
            "--threads",
        ),
        (vec!["sweep", "cvt.rn.f32.f64", "--hash"], "at most 32 bits"),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn sweep_writes_every_result_in_input_order_and_hashes_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e4m3.bin");
    // Sources of 16 bits: a scalar one and a packed pair of 8-bit lanes.
    for (i, (form, width)) in [("cvt.f32.f16", 4usize), ("cvt.rn.f16x2.e4m3x2", 4)]
        .into_iter()
        .enumerate()
    {
        let p = path.with_extension(i.to_string());
        let (code, out, err) = run(&["sweep", form, "--out", p.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("wrote 65536 results"), "{out}");
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len(), 65536 * width);
        let f = parse_instruction(form).unwrap().form;
        for x in (0..65536u64)
            .step_by(97)
            .chain([0x7c00, 0xfc01, 0x3c00, 0x0001])
        {
            let at = x as usize * width;
            let got = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as u64;
            assert_eq!(got, evaluate_bits(&f, &[x]).unwrap().0, "{form} {x:#x}");
        }
        let (code, out, err) = run(&["sweep", form, "--hash"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out.trim(),
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))
        );
    }
    // Only the outputs are in the folder: the temporary files were renamed.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn sweep_to_a_missing_folder_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/folder/out.bin");
    let (code, _, err) = run(&["sweep", "cvt.f32.f16", "--out", missing.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot create the output") && err.contains("no/such/folder"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn sweep_list_gives_every_legal_form_with_its_layout() {
    let (code, out, err) = run(&["sweep", "--list", "--target", "sm_90", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["target"], "sm_90");
    let forms = v["forms"].as_array().unwrap();
    let legal = gpucvt::ptx::legal_forms(
        "sm_90".parse().unwrap(),
        "sm_90"
            .parse::<gpucvt::ptx::target::Target>()
            .unwrap()
            .max_version(),
    );
    assert_eq!(forms.len(), legal.len());
    let find = |name: &str| forms.iter().find(|f| f["form"] == name).unwrap();
    let pair = find("cvt.rn.satfinite.e4m3x2.f32");
    assert_eq!(pair["units_per_instruction"], 2);
    assert_eq!(pair["every_input"], 1u64 << 31);
    assert_eq!(pair["operands"][0]["unit"], 1);
    assert_eq!(pair["operands"][1]["unit"], 0);
    let wide = find("cvt.rn.f32.f64");
    assert!(wide["every_input"].is_null());
    let pack = find("cvt.pack.sat.s8.s32.b32");
    assert_eq!(
        (pack["dst_bits"].as_u64(), pack["result_bytes"].as_u64()),
        (Some(32), Some(4))
    );
    assert_eq!(pack["operands"][2]["feed"], "fixed");
    // The text form: one line per form.
    let (code, out, _) = run(&["sweep", "--list", "--target", "sm_90"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), forms.len());
    // --list needs a target and takes no form.
    let (code, _, err) = run(&["sweep", "--list"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--target"), "{err}");
    let (code, _, err) = run(&["sweep", "--list", "--target", "sm_90", "cvt.f32.f16"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_sweep_range_is_that_slice_of_the_whole_and_a_sample_lists_its_units() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.bin");
    let part = dir.path().join("part.bin");
    let (code, _, err) = run(&["sweep", "cvt.f32.f16", "--out", whole.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&[
        "sweep",
        "cvt.f32.f16",
        "--first",
        "31000",
        "--count",
        "2000",
        "--out",
        part.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let whole = std::fs::read(&whole).unwrap();
    assert_eq!(std::fs::read(&part).unwrap(), whole[31000 * 4..33000 * 4]);
    // A count past the end stops at the end; a first past it is an error.
    let (code, out, err) = run(&[
        "sweep",
        "cvt.f32.f16",
        "--first",
        "65000",
        "--count",
        "9999",
        "--hash",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"], 536);
    let (code, _, err) = run(&["sweep", "cvt.f32.f16", "--first", "65536", "--hash"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("starts at instruction 65536, but there are 65536"),
        "{err}"
    );

    // A sampled 64-bit source: the units written are those the results convert.
    let units = dir.path().join("units.bin");
    let out = dir.path().join("out.bin");
    let (code, _, err) = run(&[
        "sweep",
        "cvt.rn.f32.f64",
        "--sample",
        "500",
        "--seed",
        "3",
        "--first",
        "100",
        "--count",
        "700",
        "--units-out",
        units.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let units = std::fs::read(&units).unwrap();
    let out = std::fs::read(&out).unwrap();
    assert_eq!((units.len(), out.len()), (700 * 8, 700 * 4));
    let f = parse_instruction("cvt.rn.f32.f64").unwrap().form;
    for (u, r) in units.chunks_exact(8).zip(out.chunks_exact(4)) {
        let u = u64::from_le_bytes(u.try_into().unwrap());
        let r = u32::from_le_bytes(r.try_into().unwrap()) as u64;
        assert_eq!(r, evaluate_bits(&f, &[u]).unwrap().0, "{u:#x}");
    }
}
