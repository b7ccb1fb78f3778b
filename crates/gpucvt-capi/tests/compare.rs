//! The C library against the batch evaluator behind `gpucvt eval --batch`
//! ([`model::batch::Batch`], the same engine the binary runs), bit for bit, on rows of
//! PTX forms (ptxas's verdicts on every target of `ptxas-cvt-legality.tsv.gz`, accepted
//! and rejected), every vISA `mov` pair under several cr0 values, and Tile IR conversion ops
//! under both semantics; and the flags against the Rust API's per-lane flags.

use crate::common::{build, root, run, Rng};
use model::batch::Batch;
use model::core::{Flags, Format};
use model::instr::{Instr, Options};
use model::ptx::target::{PtxVersion, Target};
use model::tile::eval::Semantics;
use model::tile::types::{ElemType, OpKind, RoundingMode};
use model::visa::cr0::Cr0;
use model::visa::types::VisaType;
use std::collections::HashMap;
use std::io::Read;

/// One row: the options as the C program reads them, the instruction, its operands.
#[derive(Clone)]
struct Row {
    target: Option<&'static str>,
    version: Option<String>,
    cr0: u32,
    spec: bool,
    text: String,
    ops: Vec<u64>,
}

impl Row {
    fn options(&self) -> Options {
        // An AMD row names its gfx target in the target column and MODE in cr0's.
        if let Some(t) = self.target.filter(|t| t.starts_with("gfx")) {
            return Options {
                amd_target: Some(t.parse::<model::amd::Target>().unwrap()),
                amd_mode: model::amd::Mode::from_raw(self.cr0),
                ..Options::default()
            };
        }
        Options {
            target: self.target.map(|t| t.parse::<Target>().unwrap()),
            version: self
                .version
                .as_ref()
                .map(|v| v.parse::<PtxVersion>().unwrap()),
            cr0: Cr0::from_raw(self.cr0),
            semantics: if self.spec {
                Semantics::Spec
            } else {
                Semantics::Tileiras
            },
            tile_version: None,
            ..Options::default()
        }
    }

    fn line(&self) -> String {
        let ops: Vec<String> = self.ops.iter().map(|o| format!("{o:#x}")).collect();
        format!(
            "{}\t{}\t{:x}\t{}\t{}\t{}\n",
            self.target.unwrap_or("-"),
            self.version.as_deref().unwrap_or("-"),
            self.cr0,
            u8::from(self.spec),
            self.text,
            ops.join(" ")
        )
    }
}

/// Operands for an instruction: random bit patterns of each operand's width, a quarter of
/// them from the patterns where conversions differ (zeros, ones, NaNs, the largest values).
fn operands(instr: &Instr, rng: &mut Rng) -> Vec<u64> {
    let widths: Vec<(u32, Option<Format>)> = match instr {
        Instr::Tile(t) => {
            let bits = t.op.src.value.elem.bits();
            (0..t.elements())
                .map(|_| (bits, t.source_format()))
                .collect()
        }
        _ => instr
            .operands()
            .iter()
            .map(|o| {
                // A packed operand's lanes are drawn whole.
                (o.bits, o.format.filter(|_| o.lanes == 1))
            })
            .collect(),
    };
    widths
        .into_iter()
        .map(|(bits, format)| {
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let r = rng.next();
            if r.is_multiple_of(4) {
                let specials = [
                    0,
                    1,
                    mask,
                    mask >> 1,
                    1u64 << (bits - 1),
                    format.and_then(|f| f.canonical_nan()).unwrap_or(0),
                    format.map_or(0, |f| f.max_finite_bits()),
                    format.map_or(2, |f| f.max_finite_bits() | (1u64 << (bits - 1))),
                ];
                specials[(r >> 8) as usize % specials.len()] & mask
            } else {
                rng.next() & mask
            }
        })
        .collect()
}

/// PTX rows: a sample of ptxas's verdicts on every target (statements as ptxas saw them),
/// the accepted ones with random operands, some at the smallest `.version` ptxas accepts.
fn ptx_rows(rng: &mut Rng) -> Vec<Row> {
    let path = root().join("crates/gpucvt/tests/data/ptxas-cvt-legality.tsv.gz");
    let mut gz = Vec::new();
    std::fs::File::open(path)
        .unwrap()
        .read_to_end(&mut gz)
        .unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    let mut rows = Vec::new();
    for (i, line) in text.lines().skip(1).enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        let (instr, target, accepted, min_version) = (
            cols[0],
            cols[1],
            cols[2] == "yes",
            cols.get(5).copied().unwrap_or(""),
        );
        // Every 7th accepted row (about 4,500 across the three targets), every 400th
        // rejected one.
        if (accepted && i % 7 != 0) || (!accepted && i % 400 != 0) {
            continue;
        }
        let target: &'static str = match target {
            "sm_80" => "sm_80",
            "sm_90" => "sm_90",
            "sm_100a" => "sm_100a",
            other => panic!("target {other}"),
        };
        let version = (!min_version.is_empty() && i % 2 == 0).then(|| min_version.to_string());
        let mut row = Row {
            target: Some(target),
            version,
            cr0: 0,
            spec: false,
            text: instr.to_string(),
            ops: Vec::new(),
        };
        if let Ok(parsed) = Instr::parse(instr, &row.options()) {
            row.ops = operands(&parsed, rng);
        }
        rows.push(row);
    }
    rows
}

/// vISA rows: every type pair, with and without `.sat`, under cr0 values that change the
/// rounding, the denormal handling and the float-to-int rounding.
fn visa_rows(rng: &mut Rng) -> Vec<Row> {
    let rm = |m: u32| m << 4;
    let cr0s = [
        0,
        rm(1),
        rm(2),
        rm(3),
        Cr0::F_DENORM | Cr0::DF_DENORM | Cr0::HF_DENORM | Cr0::BF_DENORM,
        Cr0::FLOAT_TO_INT_RM | rm(2),
        Cr0::ALT | rm(3),
    ];
    let mut rows = Vec::new();
    for dst in VisaType::ALL {
        for src in VisaType::ALL {
            for sat in ["", ".sat"] {
                for &cr0 in &cr0s {
                    let mut row = Row {
                        target: None,
                        version: None,
                        cr0,
                        spec: false,
                        text: format!("mov{sat} {} <- {}", dst.name(), src.name()),
                        ops: Vec::new(),
                    };
                    match Instr::parse(&row.text, &row.options()) {
                        Ok(parsed) => {
                            for _ in 0..3 {
                                let ops = operands(&parsed, rng);
                                rows.push(Row { ops, ..row.clone() });
                            }
                        }
                        Err(_) => {
                            row.ops = vec![0];
                            rows.push(row);
                        }
                    }
                }
            }
        }
    }
    rows
}

/// Tile IR rows: every op kind between every pair of number element types, with each
/// rounding mode and signedness the op takes, on 0-d tiles and tiles of two and three
/// elements, under both semantics; the texts the reader or verifier refuses are kept too
/// (some of them), for their messages.
fn tile_rows(rng: &mut Rng) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut refused = 0usize;
    let kinds = [
        OpKind::FtoF,
        OpKind::FtoI,
        OpKind::ItoF,
        OpKind::ExtI,
        OpKind::TruncI,
        OpKind::Bitcast,
    ];
    for kind in kinds {
        for src in ElemType::ALL {
            for dst in ElemType::ALL {
                let mut variants: Vec<String> = vec![String::new()];
                if matches!(kind, OpKind::FtoI | OpKind::ItoF | OpKind::ExtI) {
                    variants = vec![" signed".into(), " unsigned".into()];
                }
                if matches!(kind, OpKind::FtoF | OpKind::FtoI | OpKind::ItoF) {
                    let base = variants.clone();
                    for m in RoundingMode::ALL {
                        for b in &base {
                            variants.push(format!("{b} rounding<{}>", m.name()));
                        }
                    }
                }
                if kind == OpKind::FtoI {
                    variants.push(" signed saturating".into());
                }
                for (k, v) in variants.iter().enumerate() {
                    let shape = ["", "2x", "3x"][k % 3];
                    let text = format!(
                        "{}{v} : tile<{shape}{}> -> tile<{shape}{}>",
                        kind.name(),
                        src.name(),
                        dst.name()
                    );
                    for spec in [false, true] {
                        let mut row = Row {
                            target: None,
                            version: None,
                            cr0: 0,
                            spec,
                            text: text.clone(),
                            ops: Vec::new(),
                        };
                        match Instr::parse(&text, &row.options()) {
                            Ok(parsed) => {
                                row.ops = operands(&parsed, rng);
                                rows.push(row);
                            }
                            Err(_) => {
                                refused += 1;
                                if refused.is_multiple_of(50) {
                                    row.ops = vec![0];
                                    rows.push(row);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    rows
}

/// AMD rows: every instruction llvm-mc 22 assembled for gfx942, gfx950 and gfx1200
/// (tests/data/amd/enum_*.txt), each under MODE 0 and with FP16_OVFL, on each of the three
/// targets (so that the other targets' refusals are compared too), with random operands.
fn amd_rows(rng: &mut Rng) -> Vec<Row> {
    let mut rows = Vec::new();
    let targets: [&'static str; 3] = ["gfx942", "gfx950", "gfx1200"];
    for file in targets {
        let path = root().join(format!("crates/gpucvt/tests/data/amd/enum_{file}.txt"));
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let text = line.split(';').next().unwrap_or("");
            // llvm-mc's remarks inside the text (/* … */) are not the instruction's.
            let mut text = text.to_string();
            while let (Some(a), Some(b)) = (text.find("/*"), text.find("*/")) {
                if b < a {
                    break;
                }
                text = format!("{}{}", &text[..a], &text[b + 2..]);
            }
            let text = text.trim().to_string();
            if text.is_empty() {
                continue;
            }
            for target in targets {
                for mode in [0, model::amd::Mode::FP16_OVFL.raw()] {
                    let mut row = Row {
                        target: Some(target),
                        version: None,
                        cr0: mode,
                        spec: false,
                        text: text.clone(),
                        ops: vec![0],
                    };
                    if let Ok(parsed) = Instr::parse(&text, &row.options()) {
                        row.ops = operands(&parsed, rng);
                    }
                    rows.push(row);
                }
            }
        }
    }
    rows
}

/// The flags of an evaluation through the Rust API, in the C encoding the header documents.
fn flags_of(instr: &Instr, ops: &[u64]) -> u32 {
    let Ok(out) = instr.eval(ops) else { return 0 };
    let table = [
        (Flags::INEXACT, 1),
        (Flags::OVERFLOW, 2),
        (Flags::UNDERFLOW, 4),
        (Flags::INVALID, 8),
        (Flags::SATURATED, 16),
        (Flags::FLUSHED, 32),
    ];
    let mut bits = 0;
    for lane in &out.lanes {
        for (f, b) in table {
            if lane.flags.contains(f) {
                bits |= b;
            }
        }
        let (Some(first), Some(last)) = (lane.conversions.first(), lane.conversions.last()) else {
            continue;
        };
        let pointer = matches!(instr, Instr::Tile(t) if t.source_format().is_none() || t.result_format().is_none());
        if !pointer
            && last.dst.canonical_nan() == Some(lane.bits)
            && first.src.decode(lane.input).is_nan()
        {
            bits |= 64;
        }
    }
    bits
}

/// What the C program must print for `row`: the batch evaluator's line and the flags.
fn expected(row: &Row, batches: &mut HashMap<String, Batch>) -> (String, u32) {
    let opts = row.options();
    let key = format!("{opts:?}");
    let batch = batches.entry(key).or_insert_with(|| Batch::new(opts));
    let ops: Vec<String> = row.ops.iter().map(|o| format!("{o:#x}")).collect();
    let mut out = String::new();
    batch.line(&format!("{} {}", row.text, ops.join(" ")), &mut out);
    let flags = Instr::parse(&row.text, &opts).map_or(0, |i| flags_of(&i, &row.ops));
    (out.trim_end().to_string(), flags)
}

fn compare(name: &str, rows: &[Row]) {
    let program = build(
        &format!("compare-{name}"),
        &[root().join("crates/gpucvt-capi/tests/c/compare.c")],
        false,
    );
    let input: String = rows.iter().map(Row::line).collect();
    let output = run(&program, &[], &input);
    let got: Vec<&str> = output.lines().collect();
    assert_eq!(got.len(), rows.len(), "{name}: one line per row");
    let mut batches = HashMap::new();
    let (mut results, mut errors, mut mismatches) = (0, 0, Vec::new());
    for (row, line) in rows.iter().zip(got) {
        let (want, want_flags) = expected(row, &mut batches);
        let (result, flags) = line.rsplit_once('\t').unwrap();
        let flags: u32 = flags.parse().unwrap();
        let ok = if result == "error: undefined" {
            want.starts_with("error: undefined")
        } else if result.starts_with("error: status") {
            // An evaluation error without a message: the batch evaluator must fail too.
            want.starts_with("error: ")
        } else {
            result == want
        };
        if want.starts_with("error: ") {
            errors += 1;
        } else {
            results += 1;
        }
        if !ok || (!want.starts_with("error: ") && flags != want_flags) {
            mismatches.push(format!(
                "{}: C {result:?} flags {flags}, batch {want:?} flags {want_flags}",
                row.line().trim_end()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{name}: {} of {} rows differ:\n{}",
        mismatches.len(),
        rows.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
    eprintln!("{name}: {results} results and {errors} errors equal to the batch evaluator's");
    assert!(
        results > 0 && errors > 0,
        "{name}: both results and errors are compared"
    );
}

#[test]
fn ptx_rows_equal_the_batch_evaluator() {
    compare("ptx", &ptx_rows(&mut Rng(1)));
}

#[test]
fn visa_rows_equal_the_batch_evaluator() {
    compare("visa", &visa_rows(&mut Rng(2)));
}

#[test]
fn tile_rows_equal_the_batch_evaluator() {
    compare("tile", &tile_rows(&mut Rng(3)));
}

#[test]
fn amd_rows_equal_the_batch_evaluator() {
    compare("amd", &amd_rows(&mut Rng(4)));
}
