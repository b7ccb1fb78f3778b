//! The documentation against the binary.
//!
//! - Every `console` block of README.md, CONTRIBUTING.md, python/README.md and the book
//!   (`docs/`) runs, and prints what the page shows.
//! - The generated reference pages (`docs/reference/cli.md` from the `--help` texts,
//!   `docs/reference/formats.md` from `gpucvt formats`) equal what the binary prints now;
//!   `GPUCVT_BLESS=1` rewrites them.
//! - Every relative link of those pages names a file that exists and, with `#anchor`, a
//!   heading of it.
//!
//! A `console` block is a sequence of `$ COMMAND` lines (continued on lines that start with
//! `> `, as a shell's second prompt shows them), each followed by the output it must print
//! (stdout, then stderr). Two markers stand for what a page leaves out, and nothing
//! else is elided: a line `...` matches any number of lines, `[..]` within a line any text
//! on that line. A last line `[exit N]` says the command exits with N (otherwise 0).
//! Commands run with `sh` in a scratch folder that is shared by the blocks of one page and
//! holds `examples/` (a link to the repository's), with the tested binary first on `PATH`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::root;

/// The Markdown files whose examples and links are checked.
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut v = vec![
        root.join("README.md"),
        root.join("CONTRIBUTING.md"),
        root.join("python/README.md"),
    ];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).expect("docs/ is readable") {
            let p = e.expect("a folder entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// One `$ command` of a console block and what it must print.
struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
    exit: i32,
}

/// The examples of a page's `console` blocks, in order.
fn examples(text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_end();
        if !in_block {
            in_block = t == "```console";
            continue;
        }
        if t == "```" {
            in_block = false;
        } else if let Some(cmd) = t.strip_prefix("$ ") {
            out.push(Example {
                line: i + 1,
                command: cmd.to_string(),
                expected: Vec::new(),
                exit: 0,
            });
        } else if let Some(more) = t
            .strip_prefix("> ")
            .filter(|_| out.last().is_some_and(|e: &Example| e.expected.is_empty()))
        {
            let e = out.last_mut().unwrap();
            e.command.push('\n');
            e.command.push_str(more);
        } else if let Some(ex) = out.last_mut() {
            match t
                .strip_prefix("[exit ")
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|n| n.parse().ok())
            {
                Some(n) => ex.exit = n,
                None => ex.expected.push(t.to_string()),
            }
        } else {
            panic!(
                "line {}: a console block must start with a `$ ` command",
                i + 1
            );
        }
    }
    assert!(!in_block, "a console block is not closed");
    out
}

/// Whether `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (k, p) in parts.iter().enumerate() {
        if k + 1 == parts.len() {
            return rest.ends_with(p);
        }
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether the lines `got` match `want`, where a `...` line matches any run of lines.
fn lines_match(want: &[String], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((w, rest)) if w == "..." => (0..=got.len()).any(|k| lines_match(rest, &got[k..])),
        Some((w, rest)) => {
            !got.is_empty() && line_matches(w, got[0]) && lines_match(rest, &got[1..])
        }
    }
}

fn trimmed(lines: &mut Vec<&str>) {
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
}

#[test]
fn console_examples_print_what_the_pages_show() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_gpucvt"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        let ex = examples(&text);
        if ex.is_empty() {
            continue;
        }
        let scratch = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root().join("examples"), scratch.path().join("examples"))
            .unwrap();
        for e in ex {
            let out = Command::new("sh")
                .arg("-c")
                .arg(&e.command)
                .current_dir(scratch.path())
                .env("PATH", &path)
                .env("NO_COLOR", "1")
                .output()
                .expect("sh runs");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let mut got: Vec<&str> = text.lines().map(str::trim_end).collect();
            trimmed(&mut got);
            let mut want = e.expected.clone();
            while want.last().is_some_and(|l| l.is_empty()) {
                want.pop();
            }
            let code = out.status.code().unwrap_or(-1);
            ran += 1;
            if code != e.exit || !lines_match(&want, &got) {
                failures.push(format!(
                    "{}:{}: `{}` exited {code} (the page says {}) and printed:\n{}\n\
                     --- the page shows:\n{}",
                    rel(&page),
                    e.line,
                    e.command,
                    e.exit,
                    got.join("\n"),
                    want.join("\n")
                ));
            }
        }
    }
    assert!(ran >= 10, "only {ran} examples found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Writes or compares a generated page.
fn generated(path: &str, text: &str) {
    let p = root().join(path);
    if std::env::var_os("GPUCVT_BLESS").is_some() {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        return;
    }
    let old = fs::read_to_string(&p).unwrap_or_default();
    assert!(
        old == text,
        "{path} is not what the binary prints now: regenerate it with \
         GPUCVT_BLESS=1 cargo test -p gpucvt-cli --test integration docs::"
    );
}

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gpucvt"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "gpucvt {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

const GENERATED: &str = "<!-- Generated by the test `docs::generated_reference_pages_are_current` \
     (crates/gpucvt-cli/tests/docs.rs) from the binary's own output: do not edit; \
     regenerate with `GPUCVT_BLESS=1 cargo test -p gpucvt-cli --test integration docs::`. -->";

#[test]
fn generated_reference_pages_are_current() {
    let top = stdout_of(&["--help"]);
    let subcommands: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&c| c != "help")
        .collect();
    assert!(subcommands.len() >= 10, "{subcommands:?}");
    let mut cli = format!(
        "{GENERATED}\n\n# Command-line reference\n\nEvery subcommand's `--help`, as the binary \
         prints it. The guide's pages show them at work.\n\n## gpucvt\n\n```text\n{top}```\n"
    );
    for c in &subcommands {
        let help = stdout_of(&[c, "--help"]);
        cli.push_str(&format!("\n## gpucvt {c}\n\n```text\n{help}```\n"));
    }
    generated("docs/reference/cli.md", &cli);

    let formats = stdout_of(&["formats"]);
    let page = format!(
        "{GENERATED}\n\n# The format catalogue\n\nEvery format gpucvt knows, from the core's \
         descriptors (`gpucvt formats`; `--json` for the same as data, `gpucvt values FORMAT` \
         for every encoding of a format of at most 16 bits).\n\n```text\n{formats}```\n"
    );
    generated("docs/reference/formats.md", &page);

    let mut rules = format!(
        "{GENERATED}\n\n# Dialect rules and policies\n\nWhat each dialect allows and what \
         each conversion does, as tables computed from the implementation (`gpucvt table \
         ptx|visa|tile`), and the choices gpucvt makes where the vendors' documentation is \
         silent or contradicts their tools, each with its reason.\n"
    );
    for (title, which) in [
        ("PTX: Tables 15 and 16, computed", "ptx"),
        ("vISA: the `mov` rule of every type pair", "visa"),
        ("CUDA Tile IR: the legal conversions", "tile"),
    ] {
        let t = stdout_of(&["table", which]);
        rules.push_str(&format!("\n## {title}\n\n```text\n{t}```\n"));
    }
    rules.push_str("\n## PTX: the choices where the documentation is open\n\n");
    for c in gpucvt::ptx::eval::CHOICES {
        rules.push_str(&format!("- **`{}`**: {}\n", c.name, c.what));
    }
    rules.push_str("\n## vISA: the choices where the documentation is open\n\n");
    for c in gpucvt::visa::eval::CHOICES {
        rules.push_str(&format!("- **`{}`**: {}", c.name, c.what));
        if let Some(sw) = c.switch {
            rules.push_str(&format!(" The other reading: `{sw}`."));
        }
        rules.push('\n');
    }
    generated("docs/reference/rules.md", &rules);
}

/// The anchor mdBook and GitHub give a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            code = !code;
        } else if !code && line.starts_with('#') {
            let a = anchor(line.trim_start_matches('#'));
            let n = seen.entry(a.clone()).or_default();
            set.insert(if *n == 0 {
                a.clone()
            } else {
                format!("{a}-{n}")
            });
            *n += 1;
        }
    }
    set
}

/// The targets of a page's Markdown links `[text](target)` outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut code = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            code = !code;
            continue;
        }
        if code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((i + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn relative_links_name_files_and_headings_that_exist() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, frag) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            checked += 1;
            if !dest.exists() {
                bad.push(format!("{}:{line}: {target}: no such file", rel(&page)));
                continue;
            }
            if let Some(a) = frag {
                if dest.extension().is_some_and(|x| x == "md") {
                    let t = fs::read_to_string(&dest).unwrap();
                    if !anchors(&t).contains(a) {
                        bad.push(format!(
                            "{}:{line}: {target}: no heading #{a} in {}",
                            rel(&page),
                            rel(&dest)
                        ));
                    }
                }
            }
        }
    }
    assert!(checked >= 5, "only {checked} links");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_example_matchers_can_fail() {
    let w = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&w(&["a", "...", "z"]), &["a", "b", "c", "z"]));
    assert!(lines_match(&w(&["a", "...", "z"]), &["a", "z"]));
    assert!(!lines_match(&w(&["a", "...", "z"]), &["a", "b"]));
    assert!(!lines_match(&w(&["a", "b"]), &["a", "b", "c"]));
    assert!(line_matches("x = [..] (0x3c00)", "x = 1 (0x3c00)"));
    assert!(!line_matches("x = [..] (0x3c00)", "x = 1 (0x3c01)"));
    assert!(!line_matches("abc", "abcd"));
    assert_eq!(
        anchor("Quantization recipes: `--recipe`"),
        "quantization-recipes---recipe"
    );
    let ex = examples("```console\n$ gpucvt x\nout\n[exit 2]\n```\n");
    assert_eq!((ex.len(), ex[0].exit, ex[0].expected.len()), (1, 2, 1));
    let ex = examples("```console\n$ printf 'a\n> b' | gpucvt y\nz\n> w\n```\n");
    assert_eq!(ex[0].command, "printf 'a\nb' | gpucvt y");
    assert_eq!(ex[0].expected, ["z", "> w"]);
}
