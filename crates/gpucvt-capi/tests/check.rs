//! `gpucvt_check_text` (through tests/c/check.c, under the sanitizers) against the Rust
//! checkers `gpucvt check` runs, on every example file of each dialect and on texts made to
//! fail: the same diagnostics (position, severity, rule, message) in the same order.

use crate::common::{build, root, run};
use model::diag::{Diagnostic, Severity};

/// What the C program prints for these diagnostics.
fn expected(diags: &[Diagnostic]) -> String {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let mut s = format!(
        "status {} errors {errors}\n",
        if errors > 0 { 1003 } else { 0 }
    );
    for d in diags {
        let (severity, status) = match d.severity {
            Severity::Error if d.rule.starts_with("syntax") || d.rule.ends_with(".syntax") => {
                (1, 1002)
            }
            Severity::Error => (1, 1003),
            _ => (2, 0),
        };
        s += &format!(
            "{}\t{}\t{severity}\t{status}\t{}\t{}\n",
            d.span.line, d.span.col, d.rule, d.message
        );
    }
    s
}

#[test]
fn every_example_and_broken_texts_give_the_checkers_diagnostics() {
    let p = build(
        "check",
        &[root().join("crates/gpucvt-capi/tests/c/check.c")],
        false,
    );
    let mut checked = 0;
    let mut with_errors = 0;
    for (dir, dialect) in [("ptx", "ptx"), ("visa", "visa"), ("tile", "tile")] {
        for e in std::fs::read_dir(root().join("examples").join(dir)).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            let mut texts = vec![text.clone()];
            // A broken copy: a line of garbage in the middle.
            let mid = text.len() / 2;
            let cut = text[..mid].rfind('\n').map_or(0, |i| i + 1);
            texts.push(format!(
                "{}@@ not an instruction @@\n{}",
                &text[..cut],
                &text[cut..]
            ));
            for t in texts {
                let cases: Vec<(&str, &str)> = match dialect {
                    "ptx" => vec![("-", "-"), ("sm_80", "-"), ("sm_100a", "8.7")],
                    "tile" => vec![("-", "-"), ("-", "13.1")],
                    _ => vec![("-", "-")],
                };
                for (target, version) in cases {
                    let diags = match dialect {
                        "ptx" => model::ptx::check::check_source(
                            &t,
                            (target != "-").then(|| target.parse().unwrap()),
                            (version != "-").then(|| version.parse().unwrap()),
                        ),
                        "visa" => model::visa::check::check_source(
                            &t,
                            &model::visa::check::CheckOptions::default(),
                        ),
                        _ => model::tile::check::check_source(
                            &model::tile::check::source_text(t.clone()),
                            model::tile::types::SpecVersion::from_name(if version == "-" {
                                "13.4"
                            } else {
                                version
                            })
                            .unwrap(),
                        ),
                    };
                    with_errors += usize::from(diags.iter().any(|d| d.severity == Severity::Error));
                    let got = run(&p, &[dialect, target, version], &t);
                    assert_eq!(got, expected(&diags), "{dialect} {target} {version}:\n{t}");
                    checked += 1;
                }
            }
        }
    }
    assert!(
        checked >= 20 && with_errors >= 10,
        "{checked} texts, {with_errors} with errors"
    );
}

#[test]
fn texts_that_are_not_checked_say_why() {
    let p = build(
        "check_fail",
        &[root().join("crates/gpucvt-capi/tests/c/check.c")],
        false,
    );
    let out = run(&p, &["ptx", "sm_9000", "-"], ".version 8.0\n");
    assert!(
        out.starts_with("status 1005 errors 0\nnot checked: unknown target"),
        "{out}"
    );
}
