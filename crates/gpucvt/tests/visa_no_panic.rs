//! The `.visaasm` reader, checker and executor never panic: random text, token soup, and
//! the example kernels with random edits, run with random initial values.

use gpucvt::visa::check::{check, check_source, symbols, CheckOptions};
use gpucvt::visa::cr0::Cr0;
use gpucvt::visa::eval::{
    mov_plan_with, AltMode, BfPairs, Denormals, DfToUb, MovOptions, NanRule, QNegativeOverflow,
    QToFloat, SatNegativeZero, SmallInt,
};
use gpucvt::visa::parse::{parse, VarKind};
use gpucvt::visa::run::{execute, ExecOptions};
use gpucvt::visa::types::VisaType;
use proptest::prelude::*;

const EXAMPLES: &[&str] = &[
    include_str!("../../../examples/visa/f_to_hf.visaasm"),
    include_str!("../../../examples/visa/sat_f_to_ub.visaasm"),
    include_str!("../../../examples/visa/mistakes.visaasm"),
    "\
.version 3.6
.kernel k
.decl A v_type=G type=df num_elts=16 align=qword
.decl B v_type=G type=bf num_elts=16
.decl U v_type=G type=uw num_elts=16 alias=<B, 0>
.decl Q1 v_type=G type=q num_elts=4
.decl P v_type=P num_elts=16
.decl AD v_type=A type=uw num_elts=1
(!P.all) mov.sat (M1, 8) B(0,0)<2> (-abs)A(0,0)<4;2,1>
(P) mov (M3_NM, 4) Q1(0,0)<1> A(1,1)<0;1,0>
mov (M1_NM, 1) %cr0(0,0)<1> 0x1030:ud
mov (M1, 8) A(0,0)<1> 0xbf80c03f:vf
mov (M1, 1) U(0,3)<1> P
mov (M1, 4) r[AD(0),16]<1>:f A(0,0)<1;1,0>
lbl:
add (M1, 16) A(0,0)<1> A(0,0)<1;1,0> 1.5e-3:df
",
];

const TOKENS: &[&str] = &[
    "mov",
    ".sat",
    "(M1, 16)",
    "(M2_NM, 4)",
    "(NoMask, 1)",
    "(P1)",
    "(!P1.any)",
    "V(0,0)<1>",
    "V(1,3)<2>",
    "S(0,0)<1;1,0>",
    "S(0,2)<8;4,2>",
    "(-)",
    "(abs)",
    "(~)",
    "1.5:f",
    "1:f",
    "0x3c00:hf",
    "0x76543210:v",
    "0xffffffff:vf",
    "-3:w",
    "1e+3:df",
    "1.0e+99999:f",
    "9e-99999:df",
    "r[A(0),-4]<1>:ud",
    ".decl",
    "V",
    "S",
    "P1",
    "v_type=G",
    "v_type=P",
    "type=f",
    "type=hf",
    "type=vf",
    "type=bf",
    "num_elts=8",
    "num_elts=0",
    "num_elts=99999999999999999999",
    "align=GRF",
    "alias=<S, 4>",
    "alias=(V,0)",
    ".version 3.6",
    ".kernel",
    "\"k\"",
    "%cr0",
    "%null",
    "(",
    ")",
    "<",
    ">",
    ";",
    ",",
    ":",
    "[",
    "]",
    "{",
    "}",
    "=",
    "-",
    ".",
    "é",
    "\n",
    " ",
    "//",
    "\"",
    "0x",
    "1.e",
    "\0",
];

fn options() -> impl Strategy<Value = MovOptions> {
    (any::<u16>()).prop_map(|b| MovOptions {
        df_to_ub: if b & 1 != 0 {
            DfToUb::UnsignedRule
        } else {
            DfToUb::Lowering
        },
        q_negative_overflow: if b & 2 != 0 {
            QNegativeOverflow::Imin
        } else {
            QNegativeOverflow::Quirk
        },
        alt_mode: if b & 4 != 0 {
            AltMode::InfToFmax
        } else {
            AltMode::Unchanged
        },
        sat_negative_zero: if b & 8 != 0 {
            SatNegativeZero::Keep
        } else {
            SatNegativeZero::ToPositive
        },
        bf_pairs: if b & 16 != 0 {
            BfPairs::Reject
        } else {
            BfPairs::ViaF
        },
        q_to_float: if b & 32 != 0 {
            QToFloat::AlwaysRne
        } else {
            QToFloat::Cr0
        },
        small_int: if b & 64 != 0 {
            SmallInt::ViaD
        } else {
            SmallInt::DestinationRange
        },
        nan: if b & 128 != 0 {
            NanRule::Canonical
        } else {
            NanRule::QuietPayload
        },
        denormals: if b & 256 != 0 {
            Denormals::HonourCr0
        } else {
            Denormals::Keep
        },
    })
}

/// Parses, checks and runs a text with initial values drawn from `seed` bits.
fn exercise(text: &str, seed: &[u64], cr0: u32, mov: MovOptions, grf64: bool) {
    let (k, mut whole) = parse(text);
    let grf_bytes = if grf64 { 64 } else { 32 };
    let copts = CheckOptions { grf_bytes, mov };
    whole.extend(check(&k, &copts));
    whole.sort_by_key(|d| (d.span.line, d.span.col));
    // The streaming checker gives what checking the whole kernel gives.
    assert_eq!(check_source(text, &copts), whole, "{text:?}");
    let syms = symbols(&k);
    let mut init = Vec::new();
    let mut it = seed.iter().copied().cycle();
    for (name, v) in &syms {
        let n = (v.num_elts.min(64)) as usize;
        let vals: Vec<u64> = match (v.kind, v.ty) {
            (VarKind::Predicate, _) => (0..n).map(|_| it.next().unwrap_or(0) & 1).collect(),
            (VarKind::General, Some(t)) => {
                let w = t.size() * 8;
                let m = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
                (0..n).map(|_| it.next().unwrap_or(0) & m).collect()
            }
            _ => continue,
        };
        if seed.is_empty() {
            continue;
        }
        init.push((name.clone(), vals));
    }
    let opts = ExecOptions {
        cr0: Cr0::from_raw(cr0),
        grf_bytes,
        mov,
    };
    let _ = execute(&k, &init, &opts);
    // Inputs that do not fit must be errors, not panics.
    let _ = execute(&k, &[("A".into(), vec![u64::MAX; 5000])], &opts);
}

fn mutate(seed: &str, edits: &[(u8, usize, usize, usize)]) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    for &(kind, a, b, tok) in edits {
        let n = s.len();
        let a = a % (n + 1);
        let b = b % (n + 1);
        let (lo, hi) = (a.min(b), a.max(b));
        match kind % 4 {
            0 => {
                s.drain(lo..hi.min(lo + 6));
            }
            1 => {
                let t: Vec<char> = TOKENS[tok % TOKENS.len()].chars().collect();
                s.splice(lo..lo, t);
            }
            2 => {
                let part: Vec<char> = s[lo..hi.min(lo + 40)].to_vec();
                s.splice(hi..hi, part);
            }
            _ => {
                if lo < n {
                    s[lo] = char::from(b"0123456789(),;<>:.-xX"[tok % 21]);
                }
            }
        }
    }
    s.into_iter().collect()
}

proptest! {
    // (More cases where `PROPTEST_CASES` asks for more: a long local run.)
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(1500)))]

    #[test]
    fn random_text_never_panics(s in "[ -~\\n\\té]{0,120}", seed in prop::collection::vec(any::<u64>(), 0..4)) {
        exercise(&s, &seed, 0, MovOptions::default(), false);
    }

    #[test]
    fn token_soup_never_panics(
        toks in prop::collection::vec(0usize..TOKENS.len(), 0..30),
        seed in prop::collection::vec(any::<u64>(), 1..4),
    ) {
        let s = toks.iter().map(|&k| TOKENS[k]).collect::<Vec<_>>().join(" ");
        exercise(&s, &seed, 0x4c0, MovOptions::default(), false);
    }

    #[test]
    fn mutated_examples_never_panic(
        which in 0usize..EXAMPLES.len(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<usize>()), 0..6),
        seed in prop::collection::vec(any::<u64>(), 1..6),
        cr0 in any::<u32>(),
        mov in options(),
        grf64 in any::<bool>(),
    ) {
        let text = mutate(EXAMPLES[which], &edits);
        exercise(&text, &seed, cr0, mov, grf64);
    }

    #[test]
    fn every_plan_evaluates_anything(
        d in 0usize..16, s in 0usize..16, sat in any::<bool>(),
        cr0 in any::<u32>(), mov in options(), bits in any::<u64>(),
    ) {
        let (dst, src) = (VisaType::ALL[d], VisaType::ALL[s]);
        if let Ok(p) = mov_plan_with(dst, src, sat, Cr0::from_raw(cr0), &mov) {
            let out = p.eval(bits);
            prop_assert_eq!(out.bits & !p.destination_format().mask(), 0);
        }
    }
}

#[test]
fn the_last_example_is_read_and_executed() {
    let (k, d) = parse(EXAMPLES[3]);
    assert!(d.is_empty(), "{d:?}");
    let diags = check(&k, &CheckOptions::default());
    assert!(
        diags
            .iter()
            .all(|d| d.severity == gpucvt::diag::Severity::Warning),
        "{diags:?}"
    );
    let out = execute(&k, &[], &ExecOptions::default()).unwrap();
    // The %cr0 write switched on float->int RM (bit 12) with RU; later movs see it.
    assert_eq!(out.cr0.raw(), 0x1030);
    assert_eq!(out.movs.len(), 5); // the indirect mov is not executed
}

/// A character of two, three or four bytes (or one after a quote or a backslash) at every
/// position of every example: the reader never stops inside one.
#[test]
fn multi_byte_characters_anywhere() {
    let wide = ["é", "日", "🦀", "\"é", "\\é"];
    for text in EXAMPLES {
        for (k, (at, _)) in text.char_indices().enumerate() {
            let edited = format!("{}{}{}", &text[..at], wide[k % wide.len()], &text[at..]);
            let (kernel, _) = parse(&edited);
            let _ = check(&kernel, &CheckOptions::default());
        }
    }
}

/// Hostile files: CR-only line ends, a byte order mark and other invisible characters, a
/// line of 300,000 characters, a huge name, a long alias chain, declarations after the code.
/// Each is read, checked (streaming and whole), run, and its diagnostics rendered in a few
/// hundred bytes each.
#[test]
fn hostile_files_never_panic_and_stay_small() {
    let mut chain = String::from(".decl V0 v_type=G type=ud num_elts=8\n");
    for i in 1..3000 {
        chain.push_str(&format!(
            ".decl V{i} v_type=G type=ud num_elts=8 alias=<V{}, 0>\n",
            i - 1
        ));
    }
    let files = [
        EXAMPLES[2].replace('\n', "\r"),
        format!("\u{feff}{}", EXAMPLES[0]),
        "mov\u{200b} (M1, 8) A(0,0)<1> B(0,0)<1;1,0>\n\u{0}\u{7f}\n".to_string(),
        format!(
            "mov (M1, 8) {}(0,0)<1> B(0,0)<1;1,0>\n",
            "V".repeat(300_000)
        ),
        format!("{}\n", "mov (M1, 8) A(0,0)<1> B(0,0)<1;1,0> ".repeat(8_000)),
        chain,
        format!("mov (M1, 8) B(0,0)<1> A(0,0)<1;1,0>\n{}", EXAMPLES[1]),
    ];
    for text in &files {
        exercise(text, &[1, 2, 3], 0, MovOptions::default(), false);
        let d = check_source(text, &CheckOptions::default());
        for x in &d {
            assert!(x.render("f.visaasm", text).len() < 2000, "{x:?}");
        }
    }
}
