//! Every text reader is linear in its input: each is timed on an input of size n and of size
//! 10n (hostile shapes included: many errors, one long line of modifiers, deep nesting), and
//! the ratio of the two times is printed. A linear reader gives about 10; a quadratic one
//! about 100. A ratio above 25 fails the run (exit code 1), so that a reader that becomes
//! quadratic is noticed when the benchmarks run, without a timed test in the test suite
//! (these machines are too noisy for one).
//!
//! Run with `cargo bench -p gpucvt --bench readers`.

use gpucvt::batch::Batch;
use gpucvt::diag::Diagnostic;
use gpucvt::instr::Options;
use gpucvt::ptx::check::check_source;
use gpucvt::tile::check::check_file;
use gpucvt::tile::types::SpecVersion;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The ratio of the 10n time to the n time above which a reader counts as super-linear.
const LIMIT: f64 = 25.0;

/// The fastest of a few runs of `f` (the least disturbed by other work on the machine).
fn best(f: &dyn Fn()) -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// A valid PTX module with `n` `cvt` statements.
fn ptx_valid(n: usize) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .f32 %f<4>;\n.reg .b16 %h<4>;\n",
    );
    for i in 0..n {
        s.push_str(&format!("cvt.rn.f16.f32 %h{}, %f{};\n", i % 4, (i + 1) % 4));
    }
    s.push_str("ret;\n}\n");
    s
}

/// A PTX module whose `n` statements each get a diagnostic, rendered with their lines.
fn ptx_errors(n: usize) -> String {
    ptx_valid(n).replace("cvt.rn.f16.f32", "cvt.f16.f32")
}

/// PTX with `n` nested blocks (deeper than the reader's limit: the rest is skipped).
fn ptx_nested(n: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_90\n.entry k()\n{\n");
    s.push_str(&"{".repeat(n));
    s.push_str(&"}".repeat(n));
    s.push_str("}\n");
    s
}

/// A Tile IR module with `n` conversion ops.
fn tile_module(n: usize) -> String {
    let mut s = String::from(
        "cuda_tile.module @m {\n  entry @e(%x: !cuda_tile.tile<f32>) {\n    %v0 = ftof %x rounding<nearest_even> : tile<f32> -> tile<f16>\n",
    );
    for i in 1..n {
        s.push_str(&format!(
            "    %v{i} = ftof %v{} : tile<f16> -> tile<f32>\n",
            i - 1
        ));
        s.push_str(&format!(
            "    %w{i} = ftof %v{i} rounding<nearest_even> : tile<f32> -> tile<f16>\n"
        ));
    }
    s.push_str("    return\n  }\n}\n");
    s
}

/// A Tile IR dense constant nested `n` levels.
fn tile_nested(n: usize) -> String {
    format!(
        "cuda_tile.module @m {{\n  entry @e() {{\n    %c = constant <f32: {}1.0{}> : tile<f32>\n    return\n  }}\n}}\n",
        "[".repeat(n),
        "]".repeat(n)
    )
}

/// A vISA kernel with `n` moves.
fn visa_kernel(n: usize) -> String {
    let mut s = String::from(
        ".version 3.6\n.kernel \"k\"\n.decl S v_type=G type=f num_elts=8\n.decl D v_type=G type=hf num_elts=8\n",
    );
    for _ in 0..n {
        s.push_str("mov (M1_NM, 8) D(0,0)<1> S(0,0)<1;1,0>\n");
    }
    s
}

/// A vISA kernel of `n` declarations, each an alias of the one before.
fn visa_aliases(n: usize) -> String {
    let mut s = String::from(".decl V0 v_type=G type=ud num_elts=8\n");
    for i in 1..n {
        s.push_str(&format!(
            ".decl V{i} v_type=G type=ud num_elts=8 alias=<V{}, 0>\n",
            i - 1
        ));
    }
    s
}

/// A vISA kernel of `n` moves on one line ended by lone CRs (old Mac line ends) but one:
/// each line an error, rendered with its source line.
fn visa_cr_lines(n: usize) -> String {
    "mov (M1, 8) D(0,0)<1> Z(0,0)<1;1,0>\r".repeat(n)
}

/// `n` Tile IR ops on one line, each with a verifier error.
fn tile_one_line(n: usize) -> String {
    let ops: Vec<String> = (0..n)
        .map(|i| format!("%a{i} = bitcast %n : tile<4xi32> -> tile<4xi16>"))
        .collect();
    format!(
        "cuda_tile.module @m {{\n  entry @k(%n: tile<4xi32>) {{\n    {}\n    return\n  }}\n}}\n",
        ops.join(" ")
    )
}

/// A PTX line of `n` statements, each an error, rendered with (a window of) the line.
fn ptx_long_line(n: usize) -> String {
    ptx_errors(n).replace(";\n", "; ")
}

/// One `eval --batch` line of `n` repeated modifiers.
fn batch_modifiers(n: usize) -> String {
    format!("cvt{}.f16.f32 0x3f800000\n", ".rn".repeat(n))
}

/// `n` ordinary `eval --batch` lines.
fn batch_lines(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "cvt.rn.f16.f32 {:#010x}\n",
                (i as u32).wrapping_mul(2_654_435_761)
            )
        })
        .collect()
}

fn render(path: &str, text: &str, diags: &[Diagnostic]) -> usize {
    let lines: Vec<&str> = text.split('\n').collect();
    diags
        .iter()
        .map(|d| d.render_in(path, text, &lines).len())
        .sum()
}

fn main() {
    // (name, n, the input for a size, what reads it)
    type Reader = (&'static str, usize, fn(usize) -> String, fn(&str));
    let readers: [Reader; 13] = [
        ("ptx check, valid statements", 20_000, ptx_valid, |t| {
            black_box(check_source(t, None, None));
        }),
        (
            "ptx check + render, one error each",
            5_000,
            ptx_errors,
            |t| {
                let d = check_source(t, None, None);
                black_box(render("f.ptx", t, &d));
            },
        ),
        (
            "ptx check + render, one long line",
            2_000,
            ptx_long_line,
            |t| {
                let d = check_source(t, None, None);
                black_box(render("f.ptx", t, &d));
            },
        ),
        ("ptx check, nested blocks", 5_000, ptx_nested, |t| {
            black_box(check_source(t, None, None));
        }),
        ("tile parse + verify, ops", 2_000, tile_module, |t| {
            let f = gpucvt::tile::parse::parse_file(t);
            black_box(check_file(&f, SpecVersion::LATEST));
        }),
        (
            "tile check + render, ops on one line",
            1_000,
            tile_one_line,
            |t| {
                let d = gpucvt::tile::check::check_source(t, SpecVersion::LATEST);
                black_box(render("f.mlir", t, &d));
            },
        ),
        ("tile check (streaming), ops", 2_000, tile_module, |t| {
            black_box(gpucvt::tile::check::check_source(t, SpecVersion::LATEST));
        }),
        ("tile parse, nested constant", 5_000, tile_nested, |t| {
            black_box(gpucvt::tile::parse::parse_file(t));
        }),
        ("visa parse + check, moves", 5_000, visa_kernel, |t| {
            black_box(gpucvt::visa::check::check_source(
                t,
                &gpucvt::visa::check::CheckOptions::default(),
            ));
        }),
        ("visa check, alias chain", 2_000, visa_aliases, |t| {
            black_box(gpucvt::visa::check::check_source(
                t,
                &gpucvt::visa::check::CheckOptions::default(),
            ));
        }),
        (
            "visa check + render, CR-only lines",
            5_000,
            visa_cr_lines,
            |t| {
                let t = gpucvt::diag::lone_cr_to_lf(t.to_string());
                let d = gpucvt::visa::check::check_source(
                    &t,
                    &gpucvt::visa::check::CheckOptions::default(),
                );
                black_box(render("f.visaasm", &t, &d));
            },
        ),
        (
            "eval --batch, one line of modifiers",
            20_000,
            batch_modifiers,
            |t| {
                let mut out = Vec::new();
                let _ = Batch::new(Options::default()).run(t.as_bytes(), &mut out);
                black_box(out);
            },
        ),
        ("eval --batch, lines", 20_000, batch_lines, |t| {
            let mut out = Vec::new();
            let _ = Batch::new(Options::default()).run(t.as_bytes(), &mut out);
            black_box(out);
        }),
    ];
    let mut worst: f64 = 0.0;
    println!(
        "{:<40} {:>10} {:>12} {:>12} {:>7}",
        "reader", "n", "n", "10n", "ratio"
    );
    for (name, n, make, read) in readers {
        let (small, large) = (make(n), make(10 * n));
        let (a, b) = (best(&|| read(&small)), best(&|| read(&large)));
        let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-9);
        worst = worst.max(ratio);
        println!(
            "{name:<40} {n:>10} {:>10.2}ms {:>10.2}ms {ratio:>7.1}{}",
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            if ratio > LIMIT { "  super-linear" } else { "" }
        );
    }
    if worst > LIMIT {
        eprintln!("a reader grew more than {LIMIT}x for 10x the input");
        std::process::exit(1);
    }
}
