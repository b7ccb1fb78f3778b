//! Every symbol the shared library exports starts with `gpucvt_`, and every function the
//! header declares is exported.

use crate::common::{cdylib, root};
use std::process::Command;

#[test]
fn every_export_is_prefixed_and_declared() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(cdylib())
        .output()
        .expect("nm runs (binutils)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let exported: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(exported.len() > 10, "{text}");
    let stray: Vec<&&str> = exported
        .iter()
        .filter(|s| !s.starts_with("gpucvt_"))
        .collect();
    assert!(
        stray.is_empty(),
        "exported without the gpucvt_ prefix: {stray:?}"
    );
    let header = std::fs::read_to_string(root().join("include/gpucvt.h")).unwrap();
    // A function's declaration is its name followed by `(`; comments are left out (they
    // name functions too).
    let code: String = header
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with('*'))
        .collect::<Vec<_>>()
        .join("\n");
    let mut declared: Vec<String> = Vec::new();
    for (i, _) in code.match_indices("gpucvt_") {
        let name: String = code[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if code[i + name.len()..].starts_with('(') && !declared.contains(&name) {
            declared.push(name);
        }
    }
    for name in &exported {
        assert!(
            declared.iter().any(|d| d == name),
            "{name} is exported but not in gpucvt.h"
        );
    }
    for name in &declared {
        assert!(
            exported.contains(&name.as_str()),
            "{name} is in gpucvt.h but not exported"
        );
    }
}
