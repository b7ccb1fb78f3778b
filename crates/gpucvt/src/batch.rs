//! The batch evaluator behind `gpucvt eval --batch`: the machine interface outside
//! verification tools use.
//!
//! Each input line is `<instruction> <operand>...`: the instruction without operands (a PTX
//! form such as `cvt.rn.satfinite.e4m3x2.f32`, or a vISA move `mov.sat hf <- f`), then the
//! source operands as `0x` hex bit patterns of their natural widths, in instruction order
//! (`d, a, b`: a then b; x4 forms: a b e f rbits; `cvt.pack` with c: a b c). For each input
//! line exactly one output line: the destination value as `0x` hex zero-padded to the
//! destination type's width (packed types: the packed register's width; a vISA move of a
//! packed `V`/`UV`/`VF` immediate: every element, up to 512 bits), or `error: <message>` —
//! and the evaluator goes on with the next line.
//!
//! An operand may also be a PTX float literal, `0f` and 8 hex digits for a 32-bit operand or
//! `0d` and 16 for a 64-bit one. A PTX line may start with a whole statement ending in `;`
//! (`cvt.rn.f16.f32 %h1, %f1; 0x3f800000`): its operand list is checked against the form and
//! its register names are ignored. Lines without `;` read as they always have.
//!
//! Hostile input stays bounded: a line is read up to [`MAX_LINE`] bytes (a longer one gives
//! an `error:` line and is skipped), the work per line is linear in its length, an `error:`
//! line reports at most three diagnostics and quotes at most 200 characters of a word.
//!
//! AMD lines are the instruction as LLVM writes it, registers included (`v_cvt_pk_fp8_f32
//! v1, v2, v3 op_sel:[0,0,1]`; optionally ended by `;`), then one `0x` pattern per register
//! source operand; the target, MODE and the destination's old value come from [`Options`]
//! (`0x0000807f` for `v_cvt_pk_fp8_f32 v1, v2, v3 0x43700000 0x43960000` on gfx942).
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

use crate::core::format::Format;
use crate::instr::{is_tile_text, shorten, shorten_to, tile_batch_line, Instr, Options};
use crate::text::ptx_float_literal;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write};

/// [`Instr::parse`] with its error as the line's message (what the cache keeps).
fn parse(text: &str, opts: &Options) -> Result<Instr, String> {
    Instr::parse(text, opts).map_err(|e| e.to_string())
}

/// A batch evaluator: instructions are parsed and checked once and remembered.
#[derive(Debug)]
pub struct Batch {
    opts: Options,
    cache: HashMap<String, Result<Instr, String>>,
    /// A reused buffer for the instruction text of vISA lines.
    key: String,
    /// The last instruction too long to remember.
    uncached: Option<Result<Instr, String>>,
}

/// Instructions remembered at most (a stream of distinct instructions stays bounded).
const CACHE_LIMIT: usize = 4096;

/// Instruction texts longer than this are parsed every time rather than remembered.
const CACHE_TEXT_LIMIT: usize = 256;

/// The longest `error:` message written for one line (longer ones are cut with `…`).
const LINE_MESSAGE_LIMIT: usize = 1000;

/// The longest input line read; the rest of a longer line is skipped and the line gives an
/// `error:` line.
pub const MAX_LINE: usize = 1 << 20;

impl Batch {
    /// A new evaluator with the given target / version / control-register options.
    pub fn new(opts: Options) -> Batch {
        Batch {
            opts,
            cache: HashMap::new(),
            key: String::new(),
            uncached: None,
        }
    }

    /// Evaluates one input line and appends exactly one output line (with its `\n`) to
    /// `out`.
    pub fn line(&mut self, line: &str, out: &mut String) {
        let result = if is_tile_text(line) {
            self.tile_line(line).map(Res::Hex)
        } else {
            self.eval_line(line)
        };
        match result {
            Ok(Res::Bits(bits, width)) => {
                let digits = width.div_ceil(4) as usize;
                let _ = writeln!(out, "0x{bits:0digits$x}");
            }
            Ok(Res::Hex(words)) => {
                out.push_str(&words);
                out.push('\n');
            }
            Err(msg) => {
                out.push_str("error: ");
                out.push_str(&shorten_to(&msg, LINE_MESSAGE_LIMIT).replace(['\n', '\r'], " "));
                out.push('\n');
            }
        }
    }

    fn tile_line(&mut self, line: &str) -> Result<String, String> {
        let opts = self.opts;
        let cache = &mut self.cache;
        tile_batch_line(line, |text| {
            if text.len() > CACHE_TEXT_LIMIT {
                return parse(text, &opts);
            }
            if !cache.contains_key(text) {
                if cache.len() >= CACHE_LIMIT {
                    cache.clear();
                }
                cache.insert(text.to_string(), parse(text, &opts));
            }
            cache
                .get(text)
                .cloned()
                .unwrap_or_else(|| Err("internal error: instruction cache".into()))
        })
    }

    fn eval_line(&mut self, line: &str) -> Result<Res, String> {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Err("empty line: expected <instruction> <operand>...".into());
        }
        // A PTX statement's guard (`@%p cvt…`): the conversion is computed as if it runs.
        let trimmed = crate::instr::strip_guard(trimmed).map_err(|e| e.to_string())?;
        let visa = trimmed.len() >= 3
            && trimmed.is_char_boundary(3)
            && trimmed[..3].eq_ignore_ascii_case("mov");
        let mut ops = Operands {
            bits: [0u64; 8],
            literal: [None; 8],
            n: 0,
            words: 0,
            bad: None,
        };
        let mut operand = |i: usize, w: &str| {
            ops.words += 1;
            if ops.bad.is_some() || ops.n == ops.bits.len() {
                return;
            }
            match parse_word(w) {
                Ok((v, lit)) => {
                    ops.bits[ops.n] = v;
                    ops.literal[ops.n] = lit;
                    ops.n += 1;
                }
                Err(e) => ops.bad = Some((i, e)),
            }
        };
        // The instruction text: the first word (PTX), or the first four tokens of a vISA
        // move, the arrow a token of its own (`mov hf<-f` reads as `mov hf <- f`), joined
        // by single spaces in a reused buffer. No allocation for either on a cache hit.
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        let instr_text: &str = if crate::amd::is_amd_text(trimmed) {
            // An AMD instruction with its register operands (`v_cvt_pk_fp8_f32 v1, v2, v3`),
            // then the source registers' values.
            let (first, rest) = crate::amd::split_batch(trimmed);
            for (i, w) in rest.split_whitespace().enumerate() {
                operand(i, w);
            }
            first
        } else if visa {
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
            // A whole PTX statement (`cvt.rn.f16.f32 %h1, %f1; 0x3f800000`): the instruction
            // runs to its `;`, which no operand word contains.
            let (first, rest) = match trimmed.find(';') {
                Some(k) => (&trimmed[..=k], &trimmed[k + 1..]),
                None => {
                    let k = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
                    (&trimmed[..k], &trimmed[k..])
                }
            };
            for (i, w) in rest.split_whitespace().enumerate() {
                operand(i, w);
            }
            first
        };
        let result = self.eval_parsed(instr_text, &ops);
        self.key = key;
        result
    }

    /// The instruction for `text`, parsed once and remembered (short texts only: a stream of
    /// distinct or huge texts keeps the memory bounded).
    fn instr(&mut self, text: &str) -> Result<&Instr, String> {
        if text.len() > CACHE_TEXT_LIMIT {
            self.uncached = Some(parse(text, &self.opts));
            return match &self.uncached {
                Some(Ok(i)) => Ok(i),
                Some(Err(e)) => Err(e.clone()),
                None => Err("internal error: instruction cache".into()),
            };
        }
        if !self.cache.contains_key(text) {
            if self.cache.len() >= CACHE_LIMIT {
                self.cache.clear();
            }
            let parsed = parse(text, &self.opts);
            self.cache.insert(text.to_string(), parsed);
        }
        match self.cache.get(text) {
            Some(Ok(i)) => Ok(i),
            Some(Err(e)) => Err(e.clone()),
            None => Err("internal error: instruction cache".into()),
        }
    }

    fn eval_parsed(&mut self, instr_text: &str, ops: &Operands) -> Result<Res, String> {
        // Errors in the order the operands come: a malformed word before too many words.
        if let Some((i, e)) = &ops.bad {
            if *i < ops.bits.len() {
                return Err(match e {
                    WordError::NotHex(w) => format!(
                        "operand {} {:?} is not a 0x hex bit pattern",
                        i + 1,
                        shorten(w)
                    ),
                    WordError::Literal(msg) => format!("operand {}: {msg}", i + 1),
                    WordError::TooWide(w, bits) => {
                        let what = match self.instr(instr_text) {
                            Ok(instr) => match instr.operands().get(*i) {
                                Some(spec) => format!(
                                    "operand {} of {} is {} bits",
                                    spec.name,
                                    instr.spelling(),
                                    spec.bits
                                ),
                                None => format!(
                                    "{} takes {} operand(s)",
                                    instr.spelling(),
                                    instr.operands().len()
                                ),
                            },
                            Err(_) => "no operand is wider than 64 bits".to_string(),
                        };
                        format!("operand {} {:?} has {bits} bits; {what}", i + 1, shorten(w))
                    }
                });
            }
        }
        if ops.words > ops.bits.len() {
            return Err(format!("too many operands ({})", ops.words));
        }
        let n = ops.n;
        let instr = self.instr(instr_text)?;
        if ops.literal[..n].iter().any(Option::is_some) {
            let specs = instr.operands();
            for (i, (lit, spec)) in ops.literal[..n].iter().zip(&specs).enumerate() {
                if let Some(f) = lit {
                    if f.width() != spec.bits {
                        return Err(format!(
                            "operand {} is a PTX {} literal ({} bits); operand {} of {} is {} bits: give it as a 0x pattern",
                            i + 1,
                            f.name,
                            f.width(),
                            spec.name,
                            instr.spelling(),
                            spec.bits
                        ));
                    }
                }
            }
        }
        if instr.result_bits() > 128 {
            return instr
                .eval(&ops.bits[..n])
                .map(|o| Res::Hex(o.to_hex()))
                .map_err(|e| e.to_string());
        }
        instr
            .eval_bits(&ops.bits[..n])
            .map(|(b, w)| Res::Bits(b, w))
            .map_err(|e| e.to_string())
    }

    /// Runs over every line of `input`, writing one line per input line to `output`.
    /// Returns the number of lines.
    ///
    /// The answers are written in blocks, and flushed whenever the input has no more bytes
    /// already buffered (before a read that may wait): a program that writes one line and
    /// waits for its answer gets it, while a stream keeps the block writes.
    ///
    /// # Errors
    /// Only I/O errors; bad lines produce `error:` lines.
    pub fn run(&mut self, input: impl BufRead, mut output: impl Write) -> std::io::Result<u64> {
        let mut lines = 0u64;
        let mut buf = String::with_capacity(1 << 16);
        let mut line = Vec::new();
        let mut input = input;
        // Whether the input's buffer was used up (the next fill may wait for the writer), and
        // whether `output` holds bytes not yet flushed.
        let mut drained = true;
        let mut unflushed = false;
        loop {
            line.clear();
            let (read, too_long) = read_line_capped(&mut input, &mut line, &mut drained, || {
                if !buf.is_empty() || unflushed {
                    output.write_all(buf.as_bytes())?;
                    buf.clear();
                    output.flush()?;
                    unflushed = false;
                }
                Ok(())
            })?;
            if read == 0 {
                break;
            }
            lines += 1;
            if too_long {
                let _ = writeln!(buf, "error: the line is longer than {MAX_LINE} bytes");
            } else {
                match std::str::from_utf8(&line) {
                    Ok(text) => self.line(text, &mut buf),
                    Err(_) => buf.push_str("error: the line is not UTF-8\n"),
                }
            }
            if buf.len() >= 1 << 15 {
                output.write_all(buf.as_bytes())?;
                buf.clear();
                unflushed = true;
            }
        }
        output.write_all(buf.as_bytes())?;
        output.flush()?;
        Ok(lines)
    }
}

/// Reads one line (through its `\n`) into `line`, keeping at most [`MAX_LINE`] bytes of it
/// (plus the `\n`): returns the bytes read and whether the line was longer (then `line` is
/// empty). Memory stays bounded whatever the input. `drained` says whether the input's
/// buffer is known to be empty, so that the next fill may wait: `before_wait` runs then.
fn read_line_capped(
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
    drained: &mut bool,
    mut before_wait: impl FnMut() -> std::io::Result<()>,
) -> std::io::Result<(usize, bool)> {
    let mut read = 0;
    let mut too_long = false;
    loop {
        if *drained {
            before_wait()?;
        }
        let avail = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            *drained = true;
            return Ok((read, too_long));
        }
        let (used, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        if !too_long {
            let content = used - usize::from(done);
            if line.len() + content > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&avail[..used]);
            }
        }
        *drained = used == avail.len();
        input.consume(used);
        read += used;
        if done {
            return Ok((read, too_long));
        }
    }
}

/// A line's result: the destination bits and width, or (Tile IR element lists, results
/// wider than 128 bits) the text itself.
enum Res {
    Bits(u128, u32),
    Hex(String),
}

/// The operand words of a line.
struct Operands {
    bits: [u64; 8],
    /// For a PTX float literal, its format (`f32` for `0f…`, `f64` for `0d…`).
    literal: [Option<Format>; 8],
    n: usize,
    words: usize,
    bad: Option<(usize, WordError)>,
}

/// What is wrong with an operand word.
pub(crate) enum WordError {
    /// Not a `0x` pattern nor a PTX float literal.
    NotHex(String),
    /// A `0x` pattern of more than 64 significant bits (the word, its bit count).
    TooWide(String, u32),
    /// A malformed PTX float literal.
    Literal(String),
}

/// One operand word: a `0x` hex pattern, or a PTX float literal `0f…` (8 digits) / `0d…`
/// (16 digits) giving the bits of an `f32` / `f64` (with its format, to check the operand's
/// width against).
pub(crate) fn parse_word(w: &str) -> Result<(u64, Option<Format>), WordError> {
    if let Some(digits) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(WordError::NotHex(w.to_string()));
        }
        let significant = digits.trim_start_matches('0');
        if significant.len() > 16 {
            let lead = significant.as_bytes()[0];
            let lead_bits = 8 - (char::from(lead).to_digit(16).unwrap_or(1) as u8).leading_zeros();
            let bits = (significant.len() as u64 - 1) * 4 + u64::from(lead_bits);
            return Err(WordError::TooWide(
                w.to_string(),
                u32::try_from(bits).unwrap_or(u32::MAX),
            ));
        }
        return u64::from_str_radix(
            if significant.is_empty() {
                "0"
            } else {
                significant
            },
            16,
        )
        .map(|v| (v, None))
        .map_err(|_| WordError::NotHex(w.to_string()));
    }
    match ptx_float_literal(w) {
        Some(Ok((v, f))) => Ok((v, Some(f))),
        Some(Err(e)) => Err(WordError::Literal(e.to_string())),
        None => Err(WordError::NotHex(w.to_string())),
    }
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
    fn literals_statements_wide_results_and_reasons() {
        let input = "cvt.rn.f16.f32 0f3F800000\n\
                     cvt.rn.f16.f32 %h1, %f1; 0x3f800000\n\
                     cvt.rn.f16.f32 0x1ffffffffffffffff\n\
                     cvt.rn.f16.f32 0x1ffffffff\n\
                     cvt.rn.f16.f32 0d3FF0000000000000\n\
                     mov d <- uv 0x76543210\n\
                     ftof : tile<f32> -> tile<f16> 0f3F800000\n\
                     ftof : tile<f32> -> tile<f16> 0d3FF0000000000000\n\
                     @!%p cvt.rn.f16.f32 %h1, %f1; 0x3f800000\n\
                     @%p cvt.rn.f16.f32 0x3f800000\n\
                     @%1 cvt.rn.f16.f32 0x3f800000\n";
        let out = run(input, Options::default());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "0x3c00");
        assert_eq!(lines[1], "0x3c00");
        assert_eq!(
            lines[2],
            "error: operand 1 \"0x1ffffffffffffffff\" has 65 bits; operand a of cvt.rn.f16.f32 is 32 bits"
        );
        assert!(lines[3].contains("does not fit in 32 bits"), "{}", lines[3]);
        assert!(
            lines[4].contains("PTX f64 literal (64 bits)"),
            "{}",
            lines[4]
        );
        // UV 0x76543210: element k is k, as 32-bit integers, element 7 highest.
        let want: String = (0..8).rev().map(|k| format!("{k:08x}")).collect();
        assert_eq!(lines[5], format!("0x{want}"));
        assert_eq!(lines[6], "0x3c00");
        assert!(lines[7].contains("elements are 32 bits"), "{}", lines[7]);
        // A guard is ignored: the conversion is computed as if the statement runs.
        assert_eq!(lines[8], "0x3c00");
        assert_eq!(lines[9], "0x3c00");
        assert!(
            lines[10].contains("malformed guard \"@%1\""),
            "{}",
            lines[10]
        );
    }

    /// A co-process writes a line and waits for its answer: every answer must be flushed
    /// before the evaluator reads again (when nothing more is buffered).
    #[test]
    fn answers_are_flushed_before_each_wait_for_input() {
        use std::cell::RefCell;
        use std::rc::Rc;
        struct Out {
            pending: Vec<u8>,
            flushed: Rc<RefCell<Vec<u8>>>,
        }
        impl Write for Out {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.pending.extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                self.flushed.borrow_mut().append(&mut self.pending);
                Ok(())
            }
        }
        // One line per read, as a pipe gives a writer's lines; each read records how many
        // answers had been flushed by then.
        struct In {
            lines: Vec<&'static str>,
            flushed: Rc<RefCell<Vec<u8>>>,
            seen: Vec<usize>,
        }
        impl std::io::Read for In {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let answers = self
                    .flushed
                    .borrow()
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                self.seen.push(answers);
                if self.lines.is_empty() {
                    return Ok(0);
                }
                let l = self.lines.remove(0).as_bytes();
                buf[..l.len()].copy_from_slice(l);
                Ok(l.len())
            }
        }
        let flushed = Rc::new(RefCell::new(Vec::new()));
        let mut input = In {
            lines: vec![
                "cvt.rn.f16.f32 0x3f800000\n",
                "cvt.rn.f16.",
                "f32 0x40000000\n",
                "zz\n",
            ],
            flushed: flushed.clone(),
            seen: Vec::new(),
        };
        let out = Out {
            pending: Vec::new(),
            flushed: flushed.clone(),
        };
        let n = Batch::new(Options::default())
            .run(std::io::BufReader::new(&mut input), out)
            .unwrap();
        assert_eq!(n, 3);
        // Before the reads: nothing asked, 1 answer, 1 (the second line is incomplete), 2, 3.
        assert_eq!(input.seen, [0, 1, 1, 2, 3]);
        let out = String::from_utf8(flushed.borrow().clone()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..2], ["0x3c00", "0x4000"]);
        assert!(lines[2].starts_with("error: "), "{out}");
    }

    #[test]
    fn long_lines_are_refused_in_bounded_memory() {
        let mut input = "cvt.rn.f16.f32 0x".to_string();
        input.push_str(&"0".repeat(MAX_LINE));
        input.push_str("\ncvt.rn.f16.f32 0x3f800000");
        let out = run(&input, Options::default());
        assert_eq!(
            out,
            format!("error: the line is longer than {MAX_LINE} bytes\n0x3c00\n")
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
