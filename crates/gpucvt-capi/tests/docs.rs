//! The C and C++ examples of docs/guide/c.md and README.md: every complete program (a block
//! with `main`) is built with the test flags and run, and prints the `text` block that
//! follows it; every excerpt is a verbatim part of the example file it quotes; the warp's
//! output is what the example prints.

use crate::common::{blocks, build, root, run, scratch, warp_expected};

fn check_page(rel: &str) -> usize {
    let page = std::fs::read_to_string(root().join(rel)).unwrap();
    let blocks = blocks(&page);
    let mut checked = 0;
    for (k, b) in blocks.iter().enumerate() {
        let cpp = match b.lang.as_str() {
            "c" => false,
            "cpp" => true,
            "text" if b.text.starts_with("lane 0:") => {
                assert_eq!(
                    b.text,
                    warp_expected(),
                    "{rel}:{}: the warp's output",
                    b.line
                );
                checked += 1;
                continue;
            }
            _ => continue,
        };
        checked += 1;
        if !b.text.contains("int main(") {
            let file = if cpp {
                "examples/cpp/warp_cvt.cpp"
            } else {
                "examples/c/warp_cvt.c"
            };
            let source = std::fs::read_to_string(root().join(file)).unwrap();
            assert!(
                source.contains(&b.text),
                "{rel}:{}: the excerpt is not in {file}",
                b.line
            );
            continue;
        }
        let name = format!("doc-{}-{}", rel.replace(['/', '.'], "-"), b.line);
        let src = scratch().join(format!("{name}.{}", if cpp { "cpp" } else { "c" }));
        std::fs::write(&src, &b.text).unwrap();
        let out = run(&build(&name, &[src], cpp), &[], "");
        match blocks.get(k + 1) {
            Some(next) if next.lang == "text" && next.follows_block => {
                assert_eq!(out, next.text, "{rel}:{}: what the program prints", b.line)
            }
            _ => panic!(
                "{rel}:{}: a program without its output (a text block right after it)",
                b.line
            ),
        }
    }
    checked
}

#[test]
fn c_page_examples_run() {
    assert!(check_page("docs/guide/c.md") >= 6);
}

#[test]
fn readme_c_example_runs() {
    assert!(check_page("README.md") >= 1);
}
