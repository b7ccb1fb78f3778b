//! The Tile IR reader, verifier and evaluator never panic on damaged `.mlir` text —
//! every prefix of real files, files with lines deleted or swapped, random edits — and
//! every diagnostic they give carries the line and column of the text it points at.

use gpucvt::diag::{Diagnostic, Span};
use gpucvt::instr::{Instr, Options};
use gpucvt::ptx::Target;
use gpucvt::tile::check::{check_file, check_source, verify_op};
use gpucvt::tile::eval::Semantics;
use gpucvt::tile::parse::{parse_file, parse_op, Op};
use gpucvt::tile::run::{run_entry, RunOptions};
use gpucvt::tile::types::SpecVersion;
use proptest::prelude::*;
use std::path::PathBuf;

/// The real files: the examples and the conformance files of the tests.
fn files() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        root.join("../../examples/tile"),
        root.join("tests/data/tile"),
    ] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "mlir"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("readable");
            out.push((p.display().to_string(), text));
        }
    }
    assert!(out.len() >= 5, "{out:?}");
    out
}

/// Every diagnostic points into the text, at the line and column of its start.
#[track_caller]
fn positioned(diags: &[Diagnostic], text: &str) {
    for d in diags {
        let s = d.span;
        assert!(s.line >= 1 && s.col >= 1, "no position: {d:?}\n{text}");
        assert!(
            s.start <= s.end && s.end <= text.len() && text.is_char_boundary(s.start),
            "{d:?}\n{text}"
        );
        let again = Span::locate(text, s.start, s.end);
        assert_eq!((again.line, again.col), (s.line, s.col), "{d:?}\n{text}");
    }
}

/// Reads, verifies at every version, runs every small entry, and reads each line as an op.
fn exercise(text: &str) -> usize {
    let f = parse_file(text);
    positioned(&f.diagnostics, text);
    // The streaming checker gives what checking the whole file gives (each diagnostic once).
    let mut whole = check_file(&f, SpecVersion::LATEST);
    whole.extend(f.notes.iter().cloned());
    whole.sort_by_key(|d| (d.span.line, d.span.col));
    let mut seen = std::collections::HashSet::new();
    whole.retain(|d| seen.insert(d.clone()));
    assert_eq!(check_source(text, SpecVersion::LATEST), whole, "{text:?}");
    let mut n = f.diagnostics.len();
    for v in SpecVersion::ALL {
        let d = check_file(&f, v);
        positioned(&d, text);
        n += d.len();
    }
    for m in &f.modules {
        for func in &m.functions {
            let small = func.args.iter().all(|a| a.ty.num_elements() <= 256)
                && func.body.iter().all(|s| match &s.op {
                    Op::Constant(c) => c.ty.num_elements() <= 256,
                    Op::Convert(c) => c.src.value.num_elements() <= 256,
                    _ => true,
                });
            if !small {
                continue;
            }
            let args: Vec<Vec<u64>> = func.args.iter().map(|_| vec![1]).collect();
            for semantics in [Semantics::Spec, Semantics::Tileiras] {
                for target in [Target::SM_80, Target::SM_100A] {
                    let _ = run_entry(&f, &func.name, &args, &RunOptions { semantics, target });
                }
            }
        }
    }
    for line in text.lines() {
        match parse_op(line) {
            Ok(op) => {
                for v in SpecVersion::ALL {
                    positioned(&verify_op(&op, v), line);
                }
                let opts = Options {
                    semantics: Semantics::Spec,
                    ..Options::default()
                };
                if let Ok(i) = Instr::parse(line, &opts) {
                    if let Instr::Tile(t) = &i {
                        if t.elements() <= 256 {
                            let xs = vec![0; t.elements() as usize];
                            let _ = i.eval(&xs);
                            let _ = t.eval_with(Semantics::Tileiras, &xs);
                        }
                    }
                }
            }
            Err(d) => positioned(&d, line),
        }
    }
    n
}

#[test]
fn every_prefix_of_the_real_files() {
    for (name, text) in files() {
        let mut cuts: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        // Every prefix of the small files; every seventh of the large ones.
        if cuts.len() > 3000 {
            cuts = cuts.into_iter().step_by(7).collect();
        }
        for i in cuts {
            let prefix = &text[..i];
            let r = std::panic::catch_unwind(|| exercise(prefix));
            assert!(r.is_ok(), "{name}: panic on the first {i} bytes");
        }
    }
}

#[test]
fn lines_deleted_or_swapped() {
    for (name, text) in files() {
        let lines: Vec<&str> = text.lines().collect();
        for k in 0..lines.len() {
            let mut without = lines.clone();
            without.remove(k);
            exercise(&without.join("\n"));
            if k + 1 < lines.len() {
                let mut swapped = lines.clone();
                swapped.swap(k, k + 1);
                exercise(&swapped.join("\n"));
            }
        }
        // Unclosed braces and a cut in the middle of every line give diagnostics, not panics.
        let halves: Vec<String> = lines
            .iter()
            .map(|l| l.chars().take(l.chars().count() / 2).collect())
            .collect();
        let n = exercise(&halves.join("\n"));
        assert!(
            n > 0 || halves.iter().all(|l| l.trim().is_empty()),
            "{name}"
        );
    }
}

#[test]
fn damaged_files_report_positions() {
    // A broken type on line 3: the reader says where.
    let text = "cuda_tile.module @m {\n  entry @k(%a: tile<4xf32>) {\n    %h = ftof %a : tile<4xf32> -> tile<3xf16>\n  }\n}\n";
    let f = parse_file(text);
    let d = f
        .diagnostics
        .iter()
        .chain(check_file(&f, SpecVersion::LATEST).iter())
        .map(|d| (d.span.line, d.span.col, d.message.clone()))
        .next()
        .expect("a diagnostic");
    assert_eq!(d.0, 3, "{d:?}");
    assert!(d.1 > 1, "{d:?}");
    // A file cut inside an op.
    let cut = &text[..text.find("-> tile").expect("arrow")];
    let f = parse_file(cut);
    assert!(!f.diagnostics.is_empty());
    positioned(&f.diagnostics, cut);
}

/// A character of two, three or four bytes at every position of every real file: the
/// reader's skipping loops step over whole characters (a regression: stepping a byte at a time
/// left it inside `é` and slicing there panicked).
#[test]
fn multi_byte_characters_anywhere() {
    for (_, text) in files() {
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        for (k, &(at, _)) in chars.iter().enumerate() {
            let wide = ["é", "日", "🦀", "\"é"][k % 4];
            let edited = format!("{}{wide}{}", &text[..at], &text[at..]);
            let f = parse_file(&edited);
            positioned(&f.diagnostics, &edited);
        }
    }
}

const EDITS: &[&str] = &[
    "tile<",
    ">",
    "->",
    ":",
    "%",
    "@",
    "{",
    "}",
    "[",
    "]",
    ",",
    "<",
    "rounding<zero>",
    "saturating",
    "signed",
    "overflow<no_wrap>",
    "ftof",
    "ftoi",
    "itof",
    "exti",
    "trunci",
    "bitcast",
    "ptr<f32>",
    "x",
    "0x",
    "1.0",
    "-",
    "\n",
    "// -----\n",
    "é",
    "16777216x",
    "0x",
    "f4E2M1FN",
    "tf32",
    "i1",
];

proptest! {
    // (More cases where `PROPTEST_CASES` asks for more: a long local run.)
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(1500)))]

    #[test]
    fn random_edits_of_real_files(
        file in 0usize..16,
        edits in prop::collection::vec((any::<u32>(), 0u8..4, 0usize..EDITS.len()), 1..8),
    ) {
        let all = files();
        let (_, text) = &all[file % all.len()];
        let mut s: Vec<char> = text.chars().collect();
        for (at, kind, tok) in edits {
            let at = at as usize % (s.len() + 1);
            match kind {
                0 => { s.splice(at..at, EDITS[tok].chars()); }
                1 => { let end = (at + 1 + tok % 9).min(s.len()); s.drain(at..end); }
                2 => s.truncate(at),
                _ => { let end = (at + 1 + tok).min(s.len()); let seg: Vec<char> = s[at..end].to_vec(); s.splice(at..at, seg); }
            }
        }
        let s: String = s.into_iter().collect();
        exercise(&s);
    }
}

fn in_entry(body: &str) -> String {
    format!("cuda_tile.module @m {{\n  entry @k(%a: tile<f32>) {{\n{body}\n  }}\n}}\n")
}

/// Dense constants nested about 20k levels deep used to overflow the stack; the reader
/// stops at its depth limit with a diagnostic.
#[test]
fn deeply_nested_dense_constant() {
    let n = 20_000;
    let body = format!(
        "    %c = constant <f32: {}1.0{}> : tile<f32>",
        "[".repeat(n),
        "]".repeat(n)
    );
    let text = in_entry(&body);
    let f = parse_file(&text);
    positioned(&f.diagnostics, &text);
    assert_eq!(f.diagnostics.len(), 1, "{:?}", f.diagnostics);
    assert_eq!(
        f.diagnostics[0].to_string(),
        "3:125: error[tile.constant]: dense literal nested more than 100 deep"
    );
}

/// Regions of skipped ops nested 20k deep: a diagnostic at the limit, then reading goes
/// on after the whole nest.
#[test]
fn deeply_nested_regions() {
    let n = 20_000;
    let body = format!(
        "{}{}\n    %h = ftof %a : tile<f32> -> tile<f32>",
        "    %r = if %c {\n".repeat(n),
        "    }\n".repeat(n)
    );
    let text = in_entry(&body);
    let f = parse_file(&text);
    positioned(&f.diagnostics, &text);
    let d = check_file(&f, SpecVersion::LATEST);
    let msgs: Vec<String> = d.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        msgs,
        [
            "103:16: error[tile.syntax]: regions nested more than 100 deep",
            format!(
                "{}:5: error[tile.verify]: 'cuda_tile.ftof' op converting tiles must not be a no-op",
                2 * n + 4
            )
            .as_str()
        ]
    );
}

/// Brackets nested 20k deep inside a skipped op or a type are skipped without recursion.
#[test]
fn deeply_nested_brackets_in_skipped_text() {
    let n = 20_000;
    for (open, close) in [("(", ")"), ("[", "]"), ("<", ">"), ("{", "}")] {
        let body = format!(
            "    %x = foo {}%a{} : tile<f32>\n    %h = ftof %a : tile<f32> -> tile<f16>",
            open.repeat(n),
            close.repeat(n)
        );
        let text = in_entry(&body);
        let f = parse_file(&text);
        positioned(&f.diagnostics, &text);
        assert!(f.diagnostics.is_empty(), "{open}: {:?}", f.diagnostics);
        assert_eq!(f.modules[0].functions[0].body.len(), 2, "{open}");
    }
    let text = format!(
        "cuda_tile.module @m {{\n  entry @k(%v: !cuda_tile.tensor_view{}f32{}) {{\n  }}\n}}\n",
        "<".repeat(n),
        ">".repeat(n)
    );
    let f = parse_file(&text);
    assert!(f.diagnostics.is_empty(), "{:?}", f.diagnostics);
}

/// Many ops: positions come from the line table (the last op's line and column are
/// right), and every op is read.
#[test]
fn many_ops_positions() {
    let n = 5_000;
    let mut body = String::new();
    for i in 0..n {
        body.push_str(&format!("    %h{i} = ftof %a : tile<f32> -> tile<f16>\n"));
    }
    body.push_str("    %bad = ftof %a : tile<f32> -> tile<f32>");
    let text = in_entry(&body);
    let f = parse_file(&text);
    assert_eq!(f.modules[0].functions[0].body.len(), n + 1);
    let d = check_file(&f, SpecVersion::LATEST);
    positioned(&d, &text);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].span.line, d[0].span.col), (n as u32 + 3, 5));
}

/// Hostile files: CR-only line ends, a byte order mark, a line of 300,000 characters, a huge
/// type name, 4,000 ops on one line, junk after an op. Each is read, checked (streaming and
/// whole), run, and its diagnostics rendered in a few hundred bytes each.
#[test]
fn hostile_files_never_panic_and_stay_small() {
    let (_, quantize) = files()
        .into_iter()
        .find(|(n, _)| n.ends_with("quantize.mlir"))
        .unwrap();
    let ops: Vec<String> = (0..4000)
        .map(|i| format!("%a{i} = bitcast %n : tile<4xi32> -> tile<4xi16>"))
        .collect();
    let wrap = |body: &str| {
        format!("cuda_tile.module @m {{\n  entry @k(%x: tile<f32>, %n: tile<4xi32>) {{\n    {body}\n    return\n  }}\n}}\n")
    };
    let files = [
        quantize.replace('\n', "\r"),
        format!("\u{feff}{quantize}"),
        wrap(&ops.join(" ")),
        wrap(&format!(
            "%y = ftof %x : tile<f32> -> tile<{}>",
            "q".repeat(300_000)
        )),
        wrap(&"%y = ftof %x : tile<f32> -> tile<f16> junk ".repeat(5_000)),
        wrap(&"@ ".repeat(100_000)),
    ];
    for text in &files {
        let text = gpucvt::tile::check::source_text(text.clone());
        exercise(&text);
        for d in check_source(&text, SpecVersion::LATEST) {
            assert!(d.render("f.mlir", &text).len() < 2000, "{d:?}");
        }
    }
}
