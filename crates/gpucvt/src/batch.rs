//! The batch evaluator behind `gpucvt eval --batch`: the machine interface outside
//! verification tools use.
//!
//! Each input line is `<instruction> <operand>...`: the instruction without operands (a PTX
//! form such as `cvt.rn.satfinite.e4m3x2.f32`, or a vISA move `mov.sat hf <- f`), then the
//! source operands as `0x` hex bit patterns of their natural widths, in instruction order
//! (`d, a, b`: a then b; x4 forms: a b e f rbits; `cvt.pack` with c: a b c). For each input
//! line exactly one output line: the destination value as `0x` hex zero-padded to the
//! destination type's width (packed types: the packed register's width), or
//! `error: <message>` — and the evaluator goes on with the next line.
//!
//! ```
//! use gpucvt::batch::Batch;
//! use gpucvt::instr::Options;
//! let mut b = Batch::new(Options::default());
//! let mut out = String::new();
//! b.line("cvt.rn.satfinite.e4m3x2.f32 0x3f800000 0x43960000", &mut out);
//! b.line("cvt.rn.f16.f32 0x3f800000 0x1", &mut out);
//! assert_eq!(out, "0x3879\nerror: cvt.rn.f16.f32 takes 1 source operand(s) (a), got 2\n");
//! ```

use crate::instr::{split_line, Instr, Options};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write};

/// A batch evaluator: instructions are parsed and checked once and remembered.
#[derive(Debug)]
pub struct Batch {
    opts: Options,
    cache: HashMap<String, Result<Instr, String>>,
}

/// Instructions remembered at most (a stream of distinct instructions stays bounded).
const CACHE_LIMIT: usize = 4096;

impl Batch {
    /// A new evaluator with the given target / version / control-register options.
    pub fn new(opts: Options) -> Batch {
        Batch {
            opts,
            cache: HashMap::new(),
        }
    }

    /// Evaluates one input line and appends exactly one output line (with its `\n`) to
    /// `out`.
    pub fn line(&mut self, line: &str, out: &mut String) {
        match self.eval_line(line) {
            Ok((bits, width)) => {
                let digits = width.div_ceil(4) as usize;
                let _ = writeln!(out, "0x{bits:0digits$x}");
            }
            Err(msg) => {
                out.push_str("error: ");
                out.push_str(&msg.replace(['\n', '\r'], " "));
                out.push('\n');
            }
        }
    }

    fn eval_line(&mut self, line: &str) -> Result<(u128, u32), String> {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Err("empty line: expected <instruction> <operand>...".into());
        }
        let visa = trimmed.len() >= 3
            && trimmed.is_char_boundary(3)
            && trimmed[..3].eq_ignore_ascii_case("mov");
        let mut ops = [0u64; 8];
        let mut n = 0;
        let (instr_text, owned);
        let words: Vec<&str>;
        if visa {
            (instr_text, owned) = split_line(trimmed);
            words = owned.iter().map(String::as_str).collect();
        } else {
            let mut it = trimmed.split_whitespace();
            instr_text = it.next().unwrap_or("").to_string();
            words = it.collect();
        }
        for (i, w) in words.iter().enumerate() {
            if n == ops.len() {
                return Err(format!("too many operands ({})", words.len()));
            }
            ops[n] = parse_hex(w)
                .ok_or_else(|| format!("operand {} {w:?} is not a 0x hex bit pattern", i + 1))?;
            n += 1;
        }
        if !self.cache.contains_key(&instr_text) {
            if self.cache.len() >= CACHE_LIMIT {
                self.cache.clear();
            }
            let parsed = Instr::parse(&instr_text, &self.opts);
            self.cache.insert(instr_text.clone(), parsed);
        }
        let instr = match &self.cache[&instr_text] {
            Ok(i) => i,
            Err(e) => return Err(e.clone()),
        };
        let r = instr.eval(&ops[..n])?;
        if r.width > 64 {
            // A vISA packed source: the elements side by side, element 0 lowest.
            let mut wide: u128 = 0;
            for l in &r.lanes {
                wide |= (l.bits as u128) << l.shift;
            }
            return Ok((wide, r.width));
        }
        Ok((r.bits as u128, r.width))
    }

    /// Runs over every line of `input`, writing one line per input line to `output`.
    /// Returns the number of lines.
    ///
    /// # Errors
    /// Only I/O errors; bad lines produce `error:` lines.
    pub fn run(&mut self, input: impl BufRead, mut output: impl Write) -> std::io::Result<u64> {
        let mut lines = 0u64;
        let mut buf = String::with_capacity(1 << 16);
        let mut line = Vec::new();
        let mut input = input;
        loop {
            line.clear();
            if input.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            lines += 1;
            match std::str::from_utf8(&line) {
                Ok(text) => self.line(text, &mut buf),
                Err(_) => buf.push_str("error: the line is not UTF-8\n"),
            }
            if buf.len() >= 1 << 15 {
                output.write_all(buf.as_bytes())?;
                buf.clear();
            }
        }
        output.write_all(buf.as_bytes())?;
        output.flush()?;
        Ok(lines)
    }
}

fn parse_hex(w: &str) -> Option<u64> {
    let digits = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X"))?;
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &str, opts: Options) -> String {
        let mut out = Vec::new();
        Batch::new(opts).run(lines.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_line_out_per_line_in() {
        let input = "cvt.rn.f16.f32 0x3f800000\n\
                     \n\
                     cvt.rn.f16.f32 1.0\n\
                     cvt.rn.f16.x32 0x0\n\
                     mov.sat ub <- f 0x43960000\n\
                     cvt.rn.satfinite.e2m1x2.f32 0x3f800000 0xc0c00000\n\
                     cvt.pack.sat.u8.s32.b32 0x100 0xffffffff 0x1234\n\
                     cvt.rn.f16.f32 0x3f800000";
        let out = run(input, Options::default());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 8, "{out}");
        assert_eq!(lines[0], "0x3c00");
        assert!(lines[1].starts_with("error: empty line"));
        assert!(lines[2].starts_with("error: operand 1 \"1.0\""));
        assert!(lines[3].starts_with("error: "));
        assert_eq!(lines[4], "0xff");
        assert_eq!(lines[5], "0x2f");
        assert_eq!(lines[6], "0x1234ff00");
        assert_eq!(lines[7], "0x3c00");
    }

    #[test]
    fn target_gates_forms() {
        let input = "cvt.rn.satfinite.e2m1x2.f32 0x3f800000 0x3f800000\n";
        let sm80 = Options {
            target: Some("sm_80".parse().unwrap()),
            ..Options::default()
        };
        assert!(run(input, sm80).starts_with("error: "));
        assert_eq!(run(input, Options::default()), "0x22\n");
    }
}
