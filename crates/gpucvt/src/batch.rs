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
//! CUDA Tile IR lines are the op text up to its result type, then one `0x` pattern per
//! element of the source tile (row-major; one for a 0-d tile; brackets and commas between
//! them are ignored): `ftof %x rounding<zero> : tile<f32> -> tile<f16> 0x3f800000`. The
//! output line is the result elements, each `0x…` padded to the element width, separated by
//! single spaces (one pattern for a 0-d tile, exactly as for PTX). An element the `spec`
//! semantics leaves undefined makes the line `error: undefined (spec semantics): element K:
//! <reason>` (for tiles of several elements followed by `; results: …` with `undefined` in
//! its place). The semantics, target and spec version come from [`Options`].
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

use crate::instr::{is_tile_text, tile_batch_line, Instr, Options};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write};

/// A batch evaluator: instructions are parsed and checked once and remembered.
#[derive(Debug)]
pub struct Batch {
    opts: Options,
    cache: HashMap<String, Result<Instr, String>>,
    /// A reused buffer for the instruction text of vISA lines.
    key: String,
}

/// Instructions remembered at most (a stream of distinct instructions stays bounded).
const CACHE_LIMIT: usize = 4096;

impl Batch {
    /// A new evaluator with the given target / version / control-register options.
    pub fn new(opts: Options) -> Batch {
        Batch {
            opts,
            cache: HashMap::new(),
            key: String::new(),
        }
    }

    /// Evaluates one input line and appends exactly one output line (with its `\n`) to
    /// `out`.
    pub fn line(&mut self, line: &str, out: &mut String) {
        if is_tile_text(line) {
            match self.tile_line(line) {
                Ok(words) => {
                    out.push_str(&words);
                    out.push('\n');
                }
                Err(msg) => {
                    out.push_str("error: ");
                    out.push_str(&msg.replace(['\n', '\r'], " "));
                    out.push('\n');
                }
            }
            return;
        }
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

    fn tile_line(&mut self, line: &str) -> Result<String, String> {
        let opts = self.opts;
        let cache = &mut self.cache;
        tile_batch_line(line, |text| {
            if !cache.contains_key(text) {
                if cache.len() >= CACHE_LIMIT {
                    cache.clear();
                }
                cache.insert(text.to_string(), Instr::parse(text, &opts));
            }
            cache
                .get(text)
                .cloned()
                .unwrap_or_else(|| Err("internal error: instruction cache".into()))
        })
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
        let mut n_words = 0;
        let mut bad: Option<(usize, String)> = None;
        let mut operand = |i: usize, w: &str| {
            n_words += 1;
            if bad.is_some() {
                return;
            }
            if n == ops.len() {
                return;
            }
            match parse_hex(w) {
                Some(v) => {
                    ops[n] = v;
                    n += 1;
                }
                None => bad = Some((i, w.to_string())),
            }
        };
        // The instruction text: the first word (PTX), or the first four tokens of a vISA
        // move, the arrow a token of its own (`mov hf<-f` reads as `mov hf <- f`), joined
        // by single spaces in a reused buffer. No allocation for either on a cache hit.
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        let instr_text: &str = if visa {
            let mut k = 0usize;
            for word in trimmed.split_whitespace() {
                for (j, piece) in word.split("<-").enumerate() {
                    let mut tokens = [None, Some(piece)];
                    if j > 0 {
                        tokens[0] = Some("<-");
                    }
                    for t in tokens.into_iter().flatten().filter(|t| !t.is_empty()) {
                        if k < 4 {
                            if k > 0 {
                                key.push(' ');
                            }
                            key.push_str(t);
                        } else {
                            operand(k - 4, t);
                        }
                        k += 1;
                    }
                }
            }
            &key
        } else {
            let mut it = trimmed.split_whitespace();
            let first = it.next().unwrap_or("");
            for (i, w) in it.enumerate() {
                operand(i, w);
            }
            first
        };
        let result = self.eval_parsed(instr_text, &ops, n, n_words, bad);
        self.key = key;
        result
    }

    fn eval_parsed(
        &mut self,
        instr_text: &str,
        ops: &[u64; 8],
        n: usize,
        n_words: usize,
        bad: Option<(usize, String)>,
    ) -> Result<(u128, u32), String> {
        // Errors in the order the operands come: a malformed word before too many words.
        if let Some((i, w)) = bad {
            if i < ops.len() {
                return Err(format!(
                    "operand {} {w:?} is not a 0x hex bit pattern",
                    i + 1
                ));
            }
        }
        if n_words > ops.len() {
            return Err(format!("too many operands ({n_words})"));
        }
        if !self.cache.contains_key(instr_text) {
            if self.cache.len() >= CACHE_LIMIT {
                self.cache.clear();
            }
            let parsed = Instr::parse(instr_text, &self.opts);
            self.cache.insert(instr_text.to_string(), parsed);
        }
        let instr = match self.cache.get(instr_text) {
            Some(Ok(i)) => i,
            Some(Err(e)) => return Err(e.clone()),
            None => return Err("internal error: instruction cache".into()),
        };
        instr.eval_bits(&ops[..n])
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
    fn visa_arrows_and_operand_errors() {
        let input = "mov hf<-f 0x3f800000\n\
                     mov.sat ub<- f 0x43960000\n\
                     mov hf <-f 0x1 0x2\n\
                     cvt.rn.f16.f32 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9\n\
                     cvt.rn.f16.f32 0x1 zz 0x3\n";
        let out = run(input, Options::default());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "0x3c00");
        assert_eq!(lines[1], "0xff");
        assert!(lines[2].starts_with("error: mov hf <- f takes 1 source operand, got 2"));
        assert_eq!(lines[3], "error: too many operands (9)");
        assert_eq!(
            lines[4],
            "error: operand 2 \"zz\" is not a 0x hex bit pattern"
        );
    }

    #[test]
    fn tile_lines() {
        let input = "itof %x signed : tile<i32> -> tile<f8E5M2> 0x1201\n\
                     ftof : tile<2xf32> -> tile<2xf16> 0x3f800000 0xc0000000\n\
                     ftoi signed : tile<f32> -> tile<i8> 0x7fc00000\n\
                     ftof : tile<f32> -> tile<f16>\n\
                     ftof : tile<f32> -> tile<f16> zz\n";
        let out = run(input, Options::default());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert_eq!(lines[0], "0x6c");
        assert_eq!(lines[1], "0x3c00 0xc000");
        assert_eq!(lines[2], "0x00");
        assert!(lines[3].starts_with("error: ftof takes a tile of 1 element(s)"));
        assert!(lines[4].starts_with("error: operand 1 \"zz\""));
        let spec = Options {
            semantics: crate::tile::Semantics::Spec,
            ..Options::default()
        };
        let out = run(input, spec);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "0x6d");
        assert_eq!(
            lines[2],
            "error: undefined (spec semantics): element 0: ftoi: NaN input"
        );
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
