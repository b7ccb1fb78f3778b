//! The PTX corpus (`tests/data/ptx/`): small files in the styles real compilers and tools
//! write, each accepted by ptxas, each with a header comment naming its origin. Every one
//! must check with zero errors, also with its line ends rewritten to `\r\n` and to `\r`.

use gpucvt::diag::Severity;
use gpucvt::ptx::check::check_source;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx");

fn corpus() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(DIR)
        .expect("tests/data/ptx exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable corpus file");
            (p.display().to_string(), text)
        })
        .collect();
    files.sort();
    files
}

fn assert_no_errors(name: &str, text: &str) {
    let errors: Vec<_> = check_source(text, None, None)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.render(name, text))
        .collect();
    assert!(errors.is_empty(), "{}", errors.concat());
}

#[test]
fn every_corpus_file_checks_clean() {
    let files = corpus();
    assert!(files.len() >= 7, "only {} corpus files", files.len());
    for (name, text) in &files {
        assert!(text.contains("Origin:"), "{name} has no origin header");
        assert_no_errors(name, text);
    }
}

#[test]
fn every_corpus_file_checks_clean_with_any_line_end() {
    for (name, text) in corpus() {
        let lf = text.replace("\r\n", "\n").replace('\r', "\n");
        for end in ["\n", "\r\n", "\r"] {
            assert_no_errors(&format!("{name} ({end:?})"), &lf.replace('\n', end));
        }
    }
}

#[test]
fn the_corpus_keeps_its_line_ends() {
    // Guards against a checkout that rewrites line ends (see the directory's .gitattributes).
    let files = corpus();
    let crlf = files
        .iter()
        .find(|(n, _)| n.ends_with("crlf_line_ends.ptx"));
    let cr = files
        .iter()
        .find(|(n, _)| n.ends_with("cr_only_line_ends.ptx"));
    assert!(crlf.is_some_and(|(_, t)| t.contains("\r\n") && !t.replace("\r\n", "").contains('\n')));
    assert!(cr.is_some_and(|(_, t)| t.contains('\r') && !t.contains('\n')));
}
