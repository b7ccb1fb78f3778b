//! The AMD dialect (gfx942, gfx950, gfx1200, gfx1201): the FP8/BF8 conversion instructions
//! in LLVM's assembly syntax, their legality as llvm-mc 22 decides it, and their values as
//! the CDNA4 ISA text defines them (`docs/guide/amd.md` lists every rule and the open
//! questions for silicon).
//!
//! - [`types`]: targets (gfx942 means FNUZ fp8/bf8, the others OCP), opcodes, the MODE
//!   register as a knob, the named readings where AMD's texts disagree;
//! - [`parse`]: one instruction as text, with the position of every token;
//! - [`check`]: legality on a target, and the [`check::Form`] it evaluates as;
//! - [`eval`]: the values, as core conversions.
//!
//! There is no `run` yet: whole `.s` files are not read.
//!
//! ```
//! use gpucvt::instr::{Instr, Options};
//! use gpucvt::amd::types::{Mode, Target};
//! let o = Options { amd_target: Some(Target::Gfx942), ..Options::default() };
//! let i = Instr::parse("v_cvt_pk_fp8_f32 v1, v2, v3", &o).unwrap();
//! // 240.0 → 0x7f (the FNUZ maximum), 300.0 → NaN 0x80 with FP16_OVFL = 0.
//! assert_eq!(i.eval_bits(&[0x4370_0000, 0x4396_0000]).unwrap(), (0x807f, 32));
//! let o = Options { amd_mode: Mode::FP16_OVFL, ..o };
//! let i = Instr::parse("v_cvt_pk_fp8_f32 v1, v2, v3", &o).unwrap();
//! assert_eq!(i.eval_bits(&[0x4370_0000, 0x4396_0000]).unwrap(), (0x7f7f, 32));
//! ```

pub mod check;
pub mod eval;
pub mod parse;
pub mod types;

pub use types::{Mode, Opcode, Readings, Target};

/// Whether `text` is written as an AMD vector instruction (its first word starts with `v_`).
pub fn is_amd_text(text: &str) -> bool {
    let t = text.trim_start();
    t.len() >= 2 && t.is_char_boundary(2) && t[..2].eq_ignore_ascii_case("v_")
}

/// Splits an `eval --batch` line of the AMD dialect into the instruction and the rest (the
/// operand words). The instruction runs to a `;` if there is one; otherwise to the end of
/// its last operand (the word after the last comma) and the modifiers that follow it
/// (words with a `:`, and `clamp`).
///
/// ```
/// use gpucvt::amd::split_batch;
/// let (i, rest) = split_batch("v_cvt_pk_fp8_f32 v1, v2, |v3| op_sel:[0,0,1] 0x3f800000 0x0");
/// assert_eq!((i, rest.trim()), ("v_cvt_pk_fp8_f32 v1, v2, |v3| op_sel:[0,0,1]", "0x3f800000 0x0"));
/// assert_eq!(split_batch("v_prng_b32 v1, v2; 0x1").0, "v_prng_b32 v1, v2");
/// ```
pub fn split_batch(line: &str) -> (&str, &str) {
    let t = line.trim();
    if let Some(k) = t.find(';') {
        return (t[..k].trim_end(), &t[k + 1..]);
    }
    let Some(comma) = t.rfind(',') else {
        let k = t.find(char::is_whitespace).unwrap_or(t.len());
        return (&t[..k], &t[k..]);
    };
    let mut end = comma + 1;
    let mut first = true;
    let mut rest = &t[end..];
    loop {
        let lead = rest.len() - rest.trim_start().len();
        let word_start = end + lead;
        let word = t[word_start..].split_whitespace().next().unwrap_or("");
        if word.is_empty() || !(first || word.contains(':') || word.eq_ignore_ascii_case("clamp")) {
            break;
        }
        first = false;
        end = word_start + word.len();
        rest = &t[end..];
    }
    (&t[..end], &t[end..])
}
