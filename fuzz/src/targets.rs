//! The bodies of the fuzz targets: each takes arbitrary bytes, reads them as text and drives
//! one reader of gpucvt end to end. None may panic, whatever the bytes. Shared by the
//! cargo-fuzz targets (`fuzz/fuzz_targets/`) and the stable regression test
//! (`crates/gpucvt/tests/fuzz_targets.rs`, which includes this file).

use gpucvt::batch::Batch;
use gpucvt::instr::Options;
use gpucvt::ptx::check::{check, check_file, check_form, legal_somewhere, OperandShape};
use gpucvt::ptx::eval::{evaluate, operand_roles};
use gpucvt::ptx::parse::{parse_file as parse_ptx_file, parse_instruction};
use gpucvt::ptx::target::{PtxVersion, Target};
use gpucvt::ptx::types::RegType;
use gpucvt::tile::eval::Semantics;
use gpucvt::tile::parse::{parse_file, Op};
use gpucvt::tile::run::{run_entry, RunOptions};
use gpucvt::tile::types::SpecVersion;
use gpucvt::visa::check::CheckOptions;

/// Operand values drawn from the bytes: eight bytes each, cycling (zeros if there are none).
fn operands(data: &[u8], n: usize) -> Vec<u64> {
    (0..n)
        .map(|k| {
            let mut v = [0u8; 8];
            for (j, b) in v.iter_mut().enumerate() {
                if !data.is_empty() {
                    *b = data[(k * 8 + j) % data.len()];
                }
            }
            u64::from_le_bytes(v)
        })
        .collect()
}

fn targets() -> Vec<(Target, PtxVersion)> {
    [("sm_80", "7.0"), ("sm_90a", "8.6"), ("sm_100a", "9.5")]
        .iter()
        .filter_map(|(t, v)| Some((t.parse().ok()?, v.parse().ok()?)))
        .collect()
}

/// `ptx_instruction`: read one PTX instruction, check it on a few targets, and evaluate its
/// form on operands drawn from the bytes (masked to each operand's width and unmasked).
pub fn ptx_instruction(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(i) = parse_instruction(&text) else {
        return;
    };
    let regs = |_: &str| -> Option<RegType> { None };
    for (t, v) in targets() {
        let _ = check(&i, &regs, t, v);
        if let Some(shape) = OperandShape::natural(&i.form) {
            let _ = check_form(&i.form, &shape, t, v);
        }
        if let Some(ops) = &i.operands {
            let _ = check_form(&i.form, &OperandShape::of(ops), t, v);
        }
    }
    let _ = legal_somewhere(&i.form);
    let roles = operand_roles(&i.form);
    let raw = operands(data, roles.len());
    let _ = evaluate(&i.form, &raw);
    let narrow: Vec<u64> = raw
        .iter()
        .zip(&roles)
        .map(|(&v, r)| {
            let bits = gpucvt::ptx::eval::role_bits(&i.form, *r);
            if bits >= 64 {
                v
            } else {
                v & ((1u64 << bits) - 1)
            }
        })
        .collect();
    let _ = evaluate(&i.form, &narrow);
    let _ = evaluate(&i.form, &narrow[..narrow.len().saturating_sub(1)]);
}

/// `ptx_file`: read a PTX module and check it with its own and with explicit targets.
pub fn ptx_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let f = parse_ptx_file(&text);
    let _ = check_file(&f, None, None);
    for (t, v) in targets() {
        let _ = check_file(&f, Some(t), Some(v));
    }
}

/// `batch_line`: every line through the batch evaluator; exactly one output line each.
pub fn batch_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut batch = Batch::new(Options::default());
    for line in text.split('\n') {
        let mut out = String::new();
        batch.line(line, &mut out);
        assert!(
            out.ends_with('\n') && out.matches('\n').count() == 1,
            "{line:?} gave {out:?}"
        );
    }
    // The stream interface too, on the raw bytes (not necessarily UTF-8).
    let mut out = Vec::new();
    let lines = Batch::new(Options::default())
        .run(data, &mut out)
        .unwrap_or(0);
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count() as u64, lines);
}

/// `visa_asm`: read a `.visaasm` file and check it with both GRF sizes.
pub fn visa_asm(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (kernel, _) = gpucvt::visa::parse::parse(&text);
    for grf_bytes in [32, 64] {
        let opts = CheckOptions {
            grf_bytes,
            ..CheckOptions::default()
        };
        let _ = gpucvt::visa::check::check(&kernel, &opts);
    }
}

/// Asserts that every diagnostic points into `text` at the line and column of its start.
fn positioned(diags: &[gpucvt::diag::Diagnostic], text: &str) {
    for d in diags {
        let s = d.span;
        assert!(
            s.line >= 1 && s.col >= 1 && s.start <= s.end && s.end <= text.len(),
            "{d:?} in {text:?}"
        );
        assert!(text.is_char_boundary(s.start), "{d:?} in {text:?}");
        // The Tile IR reader takes a lone CR as a line break and skips a leading byte
        // order mark: compare with the text so normalised (same byte offsets).
        let lf: String = text
            .char_indices()
            .map(|(i, c)| {
                if c == '\r' && text.as_bytes().get(i + 1) != Some(&b'\n') {
                    '\n'
                } else {
                    c
                }
            })
            .collect();
        let mut again = gpucvt::diag::Span::locate(&lf, s.start, s.end);
        if again.line == 1 && text.starts_with('\u{feff}') {
            again.col -= 1;
        }
        assert_eq!(
            (again.line, again.col),
            (s.line, s.col),
            "{d:?} in {text:?}"
        );
    }
}

/// The most elements a value may have for the entry to be run (the reader accepts tiles of
/// 2^24 elements; running those on every input would be slow, not wrong).
const RUN_LIMIT: u64 = 1 << 12;

/// `tile_file`: read a `.mlir` file, verify it at every spec version (every diagnostic with
/// a correct line and column), run every entry on zero arguments under both semantics and
/// on two targets, and send every line through the batch evaluator (one output line each)
/// and the single-op reader.
pub fn tile_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let f = parse_file(&text);
    positioned(&f.diagnostics, &text);
    for v in SpecVersion::ALL {
        positioned(&gpucvt::tile::check::check_file(&f, v), &text);
    }
    for m in &f.modules {
        for func in &m.functions {
            let big = func.args.iter().any(|a| a.ty.num_elements() > RUN_LIMIT)
                || func.body.iter().any(|s| match &s.op {
                    Op::Constant(c) => c.ty.num_elements() > RUN_LIMIT,
                    Op::Convert(c) => c.src.value.num_elements() > RUN_LIMIT,
                    _ => false,
                });
            if big {
                continue;
            }
            let args: Vec<Vec<u64>> = func.args.iter().map(|_| vec![0]).collect();
            for semantics in [Semantics::Spec, Semantics::Tileiras] {
                for target in [Target::SM_80, Target::SM_100A] {
                    let _ = run_entry(&f, &func.name, &args, &RunOptions { semantics, target });
                }
            }
        }
    }
    for semantics in [Semantics::Spec, Semantics::Tileiras] {
        let mut batch = Batch::new(Options {
            semantics,
            ..Options::default()
        });
        for line in text.split('\n') {
            if let Ok(op) = gpucvt::tile::parse::parse_op(line) {
                positioned(
                    &gpucvt::tile::check::verify_op(&op, SpecVersion::V13_1),
                    line,
                );
            } else if let Err(d) = gpucvt::tile::parse::parse_op(line) {
                positioned(&d, line);
            }
            let mut out = String::new();
            batch.line(line, &mut out);
            assert!(
                out.ends_with('\n') && out.matches('\n').count() == 1,
                "{line:?} gave {out:?}"
            );
        }
    }
}
