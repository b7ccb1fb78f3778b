//! The PTX reader and the legality checker never panic, whatever the input: random strings,
//! and valid instructions and files with random edits.

use gpucvt::ptx::check::{check, check_file, check_form, legal_somewhere, OperandShape};
use gpucvt::ptx::parse::{parse_file, parse_instruction};
use gpucvt::ptx::target::{PtxVersion, Target};
use gpucvt::ptx::types::{PtxType, RegType};
use proptest::prelude::*;

const SEEDS: &[&str] = &[
    "cvt.rn.f16.f32 %f16_d, %f32_a;",
    "cvt.rn.satfinite.e4m3x2.f32 %b16_d, %f32_a, %f32_b;",
    "cvt.rs.relu.satfinite.e2m1x4.f32 %b16_d, {%f32_a, %f32_b, %f32_e, %f32_f}, %b32_rbits;",
    "cvt.rn.satfinite.relu.scaled::n2::ue8m0.s2f6x2.f32 %b16_d, %f32_a, %f32_b, %b16_scale;",
    "@!%p cvt.pack.sat.u8.s32.b32 %b32_d, %s32_a, -1, 0x7f;",
    "cvt.rni.ftz.sat.s32.f32 %s32_d, 0f3F800000;",
    "cvt.f64.f32 %f64_d, 1.5e-3;",
    "cvt.rn.satfinite.e2m1x2.bf16x2 %b8_d, {%b32_a, %b32_b};",
    "cvt.rn.satfinite.e4m3x2.f32",
];

const FILE: &str = "\
.version 9.5
.target sm_100a, debug
.address_size 64
.file 1 \"k.cu\"
.visible .entry k(.param .u64 k_p0, .param .align 8 .b8 k_p1[16])
.maxntid 128, 1, 1
{
    .reg .pred %p<3>;
    .reg .f32 %f<8>;
    .reg .b16 %h<4>;
    .reg .v4 .b32 %v;
    .loc 1 10 3
    mov.f32 %f1, 0f3F800000;
$L__BB0_1:
    @%p1 bra $L__BB0_1;
    cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;
    { .reg .b32 %r; cvt.rs.satfinite.e4m3x4.f32 %r, {%f1, %f2, %f3, %f4}, %v.x; }
    st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};
    ret;
}
";

const TOKENS: &[&str] = &[
    "cvt",
    ".rn",
    ".rz",
    ".rs",
    ".rna",
    ".rni",
    ".sat",
    ".ftz",
    ".relu",
    ".satfinite",
    ".pzo",
    ".scaled::n1::ue8m0",
    ".scaled::n2::ue8m0",
    ".pack",
    ".f16",
    ".f32",
    ".bf16x2",
    ".e4m3x2",
    ".u8",
    ".s32",
    ".b32",
    ".e2m1x4",
    ".ue8m0x2",
    ".s2f6x2",
    "%r",
    "%f32_a",
    "%b16_d",
    "{",
    "}",
    ",",
    ";",
    "@",
    "!",
    "-",
    "0f",
    "0d3FF0000000000000",
    "0x",
    "1.",
    "1e",
    "_",
    ".x",
    "<",
    ">",
    "/*",
    "*/",
    "//",
    "\"",
    "\n",
    " ",
    ".reg",
    ".v4",
    ".entry",
    "(",
    ")",
    ":",
    "é",
    "\0",
];

fn regs(name: &str) -> Option<RegType> {
    let ty = name.strip_prefix('%')?.split('_').next()?;
    PtxType::from_name(ty).map(RegType::scalar)
}

fn exercise_instruction(text: &str) {
    if let Ok(i) = parse_instruction(text) {
        for (t, v) in [
            ("sm_80", "7.0"),
            ("sm_100a", "9.5"),
            ("sm_10", "1.0"),
            ("sm_107f", "9.4"),
        ] {
            let t: Target = t.parse().unwrap();
            let v: PtxVersion = v.parse().unwrap();
            let _ = check(&i, &regs, t, v);
            if let Some(shape) = OperandShape::natural(&i.form) {
                let _ = check_form(&i.form, &shape, t, v);
            }
            if let Some(ops) = &i.operands {
                let _ = check_form(&i.form, &OperandShape::of(ops), t, v);
            }
        }
        let _ = legal_somewhere(&i.form);
    }
}

fn exercise_file(text: &str) {
    let f = parse_file(text);
    let _ = check_file(&f, None, None);
    let _ = check_file(
        &f,
        Some("sm_90".parse().unwrap()),
        Some(PtxVersion::new(8, 0)),
    );
}

/// A random edit: delete a range, insert a token, or duplicate a range.
fn mutate(seed: &str, edits: &[(u8, usize, usize, usize)]) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    for &(kind, a, b, tok) in edits {
        let n = s.len();
        let a = if n == 0 { 0 } else { a % (n + 1) };
        let b = if n == 0 { 0 } else { b % (n + 1) };
        let (lo, hi) = (a.min(b), a.max(b));
        match kind % 3 {
            0 => {
                s.drain(lo..hi.min(lo + 8));
            }
            1 => {
                let t: Vec<char> = TOKENS[tok % TOKENS.len()].chars().collect();
                s.splice(lo..lo, t);
            }
            _ => {
                let part: Vec<char> = s[lo..hi.min(lo + 12)].to_vec();
                s.splice(hi..hi, part);
            }
        }
    }
    s.into_iter().collect()
}

proptest! {
    // (More cases where `PROPTEST_CASES` asks for more: a long local run.)
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(3000)))]

    #[test]
    fn random_text_never_panics(s in "[ -~\\n\\t{}é]{0,80}") {
        exercise_instruction(&s);
        exercise_file(&s);
        exercise_instruction(&format!("cvt.{s}"));
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(0usize..TOKENS.len(), 0..24)) {
        let s: String = toks.iter().map(|&k| TOKENS[k]).collect::<Vec<_>>().join("");
        exercise_instruction(&s);
        exercise_file(&s);
        let spaced: String = toks.iter().map(|&k| TOKENS[k]).collect::<Vec<_>>().join(" ");
        exercise_instruction(&spaced);
    }

    #[test]
    fn mutated_instructions_never_panic(
        seed in 0usize..SEEDS.len(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<usize>()), 1..6),
    ) {
        let text = mutate(SEEDS[seed], &edits);
        exercise_instruction(&text);
    }

    #[test]
    fn mutated_files_never_panic(
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<usize>()), 1..8),
    ) {
        let text = mutate(FILE, &edits);
        exercise_file(&text);
    }
}

#[test]
fn seeds_are_valid() {
    for s in SEEDS {
        assert!(parse_instruction(s).is_ok(), "{s}");
    }
    let f = parse_file(FILE);
    assert!(f.diagnostics.is_empty(), "{:?}", f.diagnostics);
    let d = check_file(&f, None, None);
    assert!(d.is_empty(), "{d:?}");
}

/// A character of two, three or four bytes (or one after a quote or a backslash) at every
/// position of the file and of every seed instruction: the reader never stops inside one.
#[test]
fn multi_byte_characters_anywhere() {
    let wide = ["é", "日", "🦀", "\"é", "\\é"];
    for text in SEEDS.iter().copied().chain([FILE]) {
        for (k, (at, _)) in text.char_indices().enumerate() {
            let edited = format!("{}{}{}", &text[..at], wide[k % wide.len()], &text[at..]);
            exercise_instruction(&edited);
            exercise_file(&edited);
        }
    }
}

/// Hostile nesting: tens of thousands of `{` (balanced, unclosed, or as stray closers) give
/// a depth diagnostic, never a stack overflow, in the reader, the checker and the runner.
#[test]
fn deep_nesting_is_reported_not_overflowed() {
    use gpucvt::ptx::parse::MAX_BLOCK_DEPTH;
    use gpucvt::ptx::run::{run, RunOptions};
    let head = ".version 8.0\n.target sm_90\n.entry k()\n{\n.reg .f32 %f;\n.reg .b16 %h;\n";
    for n in [MAX_BLOCK_DEPTH - 1, MAX_BLOCK_DEPTH, 10_000, 100_000] {
        for (open, close) in [("{", "}"), ("{", ""), ("{ ", "} }")] {
            let text = format!(
                "{head}{}cvt.rn.f16.f32 %h, %f;\n{}\n}}\n",
                open.repeat(n),
                close.repeat(n)
            );
            // Run on a thread with a small stack, so that recursion per level would show.
            let t = text.clone();
            let diags = std::thread::Builder::new()
                .stack_size(4 << 20)
                .spawn(move || {
                    let f = parse_file(&t);
                    let mut d = f.diagnostics.clone();
                    d.extend(check_file(&f, None, None));
                    let _ = run(&f, &[], &RunOptions::default());
                    d
                })
                .unwrap()
                .join()
                .expect("no stack overflow");
            let deep = diags
                .iter()
                .filter(|d| d.rule == "syntax.block-depth")
                .count();
            // Depth counts the function body too: MAX_BLOCK_DEPTH - 1 nested blocks fit.
            assert_eq!(
                deep,
                usize::from(n >= MAX_BLOCK_DEPTH),
                "{n} {open:?} {close:?}"
            );
        }
    }
}

/// A `\r` alone ends a line: a CR-only file reads like its LF twin, positions included.
#[test]
fn cr_only_files_read_like_lf_files() {
    let lf = FILE.to_string();
    let cr = lf.replace('\n', "\r");
    let (a, b) = (parse_file(&lf), parse_file(&cr));
    assert!(b.version.is_some() && b.target.is_some());
    assert_eq!(a.functions.len(), b.functions.len());
    let pos = |f: &gpucvt::ptx::parse::PtxFile| -> Vec<(u32, u32)> {
        f.diagnostics
            .iter()
            .map(|d| (d.span.line, d.span.col))
            .collect()
    };
    assert_eq!(pos(&a), pos(&b));
    let body = |f: &gpucvt::ptx::parse::PtxFile| f.functions[0].body.clone().unwrap();
    let lines =
        |b: gpucvt::ptx::parse::Block| -> Vec<u32> { b.regs.iter().map(|r| r.span.line).collect() };
    assert_eq!(lines(body(&a)), lines(body(&b)));
    exercise_file(&cr);
    exercise_file(&lf.replace('\n', "\r\n"));
    exercise_file("\r\r\r{\r}\r");
}

/// Hostile files: one line of 15,000 errors (300 KB), a 300,000-character token, a byte
/// order mark and invisible characters, CR-only line ends. Each is read, checked and run,
/// and each diagnostic renders in a few hundred bytes.
#[test]
fn hostile_files_never_panic_and_stay_small() {
    let head = ".version 8.0\n.target sm_90\n.entry k()\n{\n .reg .f32 %f;\n .reg .b16 %h;\n";
    let files = [
        format!("{head}{}\n}}\n", " cvt.f16.f32 %h, %f;".repeat(15_000)),
        format!("{head} cvt.rn.{}.f32 %h, %f;\n}}\n", "x".repeat(300_000)),
        format!("\u{feff}{head} cvt\u{200b}.rn.f16.f32 %h, %f;\u{0}\n}}\n"),
        format!("{head} cvt.rn.f16.f32 %h, %f;\n}}\n").replace('\n', "\r"),
    ];
    for text in &files {
        exercise_file(text);
        let d = gpucvt::ptx::check::check_source(text, None, None);
        let lines: Vec<&str> = text.split('\n').collect();
        for x in d.iter().take(200) {
            assert!(x.render_in("f.ptx", text, &lines).len() < 2000, "{x:?}");
        }
        let _ = gpucvt::ptx::run::run(
            &parse_file(text),
            &[],
            &gpucvt::ptx::run::RunOptions::default(),
        );
    }
}
