//! Test vectors for other implementations: a form's cases with the model's answers
//! (`gpucvt vectors`), and an implementation's answers checked and their disagreements
//! classified (`gpucvt conform`, Python's `gpucvt.testing`), in the roles of Berkeley
//! TestFloat's `testfloat_gen` and `testfloat_ver`.
//!
//! A case is an input line of `gpucvt eval --batch` (the instruction, then one `0x` word per
//! source operand) and the answer the batch evaluator gives for it: the expected answers
//! come from [`crate::batch::Batch`] itself, so a file says exactly what `eval --batch` says.
//!
//! Which cases ([`generate`]):
//! - level 1, sources of at most 16 bits: every encoding in every lane;
//! - level 1, wider sources: the boundary points of the destination's grid (each value and
//!   tie as the nearest source encodings and ±1 ulp of the source, the overflow threshold,
//!   the integers and half integers of integral roundings, subnormal edges, ±0, ±inf, NaN
//!   payloads);
//! - several lanes (`a b`, `a b e f`, packed sources): lane `s` of case `i` takes value
//!   `(i + s·n/m) mod n` of the list of `n` values (`m` lanes), so that every value appears
//!   once in every lane, each time beside different values, rather than the full cross
//!   product;
//! - `rbits` (`.rs`): every case under each of the per-field patterns 0, 1, half − 1, half
//!   and all ones, the same in every lane and staggered (lane `k` takes the pattern after
//!   lane `k − 1`'s); ue8m0 scale factors: 1.0, 0, the smallest and largest, 2^1 and NaN; `c` of
//!   `cvt.pack`: a few fixed words, in turn;
//! - level 2: level 1 plus `count` cases from the seeded SplitMix64 stream (uniform bits,
//!   and level-1 values with their low bits perturbed), with seeded `rbits`.
//!
//! Cases whose answer is undefined (Tile IR's `spec` semantics) are left out.
//!
//! ```
//! use gpucvt::vectors::{generate, Request};
//! let v = generate(&Request::new("cvt.rn.f16.f32")).unwrap();
//! assert!(v.cases() > 1000);
//! let line = v.line(0);
//! assert!(line.starts_with("cvt.rn.f16.f32 0x") && line.contains(" -> 0x"));
//! ```

mod check;
mod points;

pub use check::{check, check_lines, parse_answer, Class, Disagreement, RbitsRule, Report};

use crate::batch::Batch;
use crate::core::format::Format;
use crate::core::random::random_word;
use crate::instr::{Instr, Options};
use crate::ptx::eval::{lane_rbits_place, rbits_width};
use crate::ptx::target::{PtxVersion, Target};
use crate::tile::eval::Semantics;
use crate::tile::types::SpecVersion;
use crate::visa::cr0::Cr0;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// The random cases of level 2 when no count is given.
pub const DEFAULT_COUNT: u64 = 10_000;

/// The most cases one file holds (a form whose level-1 set would be larger is refused).
pub const MAX_CASES: u64 = 1 << 24;

/// What goes wrong building, reading or checking vectors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VectorsError {
    /// A level other than 1 or 2.
    #[error("level {0} does not exist: level 1 is the boundaries (exhaustive for sources of at most 16 bits), level 2 adds seeded random cases")]
    Level(u8),
    /// `count` is only meaningful at level 2.
    #[error("a count of random cases applies to level 2 only: level 1 has none")]
    CountAtLevel1,
    /// Too many cases.
    #[error("{cases} cases are more than one file holds ({MAX_CASES})")]
    TooMany {
        /// How many there would be.
        cases: u64,
    },
    /// A dialect whose operands the builder does not describe yet.
    #[error("{0}: test vectors of AMD instructions are not built yet")]
    Dialect(String),
    /// The model gives no answer for any case.
    #[error("{instruction}: the model gives no defined answer for any case ({first})")]
    NoAnswers {
        /// The instruction.
        instruction: String,
        /// The first case's error.
        first: String,
    },
    /// A line of a vectors file that does not read.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The evaluator and `eval --batch` disagree (a bug of gpucvt's).
    #[error("internal error: {message}")]
    Internal {
        /// What differs.
        message: String,
    },
    /// An answer count that does not match the cases.
    #[error("{got} answers for {cases} cases")]
    AnswerCount {
        /// Cases.
        cases: u64,
        /// Answers.
        got: u64,
    },
}

/// Which vectors to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The instruction without operands, in any dialect.
    pub instruction: String,
    /// Target, PTX version, vISA cr0, Tile IR semantics and version.
    pub options: Options,
    /// 1 (boundaries) or 2 (boundaries and random cases).
    pub level: u8,
    /// The seed of the random cases and of `rbits` at level 2.
    pub seed: u64,
    /// Random cases at level 2 (`None`: [`DEFAULT_COUNT`]).
    pub count: Option<u64>,
}

impl Request {
    /// Level 1 of `instruction` with the default options.
    pub fn new(instruction: &str) -> Request {
        Request {
            instruction: instruction.to_string(),
            options: Options::default(),
            level: 1,
            seed: 0,
            count: None,
        }
    }

    /// The random cases this request adds.
    pub fn random_cases(&self) -> u64 {
        if self.level >= 2 {
            self.count.unwrap_or(DEFAULT_COUNT)
        } else {
            0
        }
    }
}

/// The dialect of an instruction.
pub fn dialect(instr: &Instr) -> &'static str {
    match instr {
        Instr::Ptx(_) => "ptx",
        Instr::Visa(_) => "visa",
        Instr::Tile(_) => "tile",
        Instr::Amd(_) => "amd",
    }
}

/// What one `0x` word of a case's input line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// Its name (`a`, `b`, `rbits`, `scale-factor`, `c`, `src`, `x[3]` for a tile element).
    pub name: String,
    /// Its width in bits.
    pub bits: u32,
    /// The format of each lane when it holds numbers.
    pub format: Option<Format>,
    /// Lanes (1 for scalars).
    pub lanes: u32,
}

/// Test cases of one instruction with the model's answers.
#[derive(Clone, Debug)]
pub struct Vectors {
    /// What was asked for.
    pub request: Request,
    /// The instruction, parsed.
    pub instr: Instr,
    /// The words of each input line after the instruction.
    pub operands: Vec<Operand>,
    /// Operand words, case after case (`cases() × operands.len()`).
    pub inputs: Vec<u64>,
    /// 64-bit words per answer: one per element of a Tile IR result, else the result's
    /// 64-bit pieces, least significant first.
    pub answer_words: usize,
    /// The expected answers, case after case (`cases() × answer_words`).
    pub expected: Vec<u64>,
    /// Cases left out because the model leaves them undefined.
    pub undefined: u64,
}

/// The source words of an instruction's input lines.
pub fn operands_of(instr: &Instr) -> Vec<Operand> {
    match instr {
        Instr::Tile(t) => {
            let bits = t.op.src.value.elem.bits();
            (0..t.elements())
                .map(|i| Operand {
                    name: format!("x[{i}]"),
                    bits,
                    format: t.source_format(),
                    lanes: 1,
                })
                .collect()
        }
        _ => instr
            .operands()
            .into_iter()
            .map(|s| Operand {
                name: s.name.to_string(),
                bits: s.bits,
                format: s.format,
                lanes: s.lanes,
            })
            .collect(),
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The words an answer has for `instr`.
fn answer_words_of(instr: &Instr) -> usize {
    match instr {
        Instr::Tile(t) => t.elements() as usize,
        _ => instr.result_bits().div_ceil(64).max(1) as usize,
    }
}

/// The `rbits` patterns of level 1: each lane's field all 0, 1, half − 1, half, all ones.
fn rbits_patterns(instr: &Instr) -> Vec<u64> {
    let form = match instr {
        Instr::Ptx(p) if rbits_width(&p.form) > 0 => p.form,
        _ => return vec![0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff],
    };
    let lanes = form.dtype.lanes().max(1) as usize;
    let w = rbits_width(&form);
    let fields = [0u64, 1, (1 << (w - 1)) - 1, 1 << (w - 1), mask(w)];
    let word = |pick: &dyn Fn(usize) -> u64| {
        (0..lanes).fold(0u64, |acc, k| {
            let (shift, width) = lane_rbits_place(&form, k);
            acc | ((pick(k) & mask(width)) << shift)
        })
    };
    // Every lane with the same field, then staggered (lane k takes the next pattern's
    // field), so that an implementation that reads another lane's field is seen.
    let mut out: Vec<u64> = (0..fields.len()).map(|p| word(&|_| fields[p])).collect();
    out.extend((0..fields.len()).map(|p| word(&|k| fields[(p + k + 1) % fields.len()])));
    out
}

/// ue8m0 scale bytes: 1.0, 0 (2^-127), 1 (2^-126), 2^1, the largest (2^127), NaN.
const SCALE_BYTES: [u64; 6] = [0x7f, 0x00, 0x01, 0x80, 0xfe, 0xff];

/// Patterns of an operand that holds no numbers (`rbits`, scale factors, `c`).
fn aux_patterns(instr: &Instr, op: &Operand) -> Vec<u64> {
    match op.name.as_str() {
        "rbits" => rbits_patterns(instr),
        "scale-factor" if op.bits == 16 => {
            let mut v = Vec::new();
            for (i, &hi) in SCALE_BYTES.iter().enumerate() {
                v.push((hi << 8) | hi);
                v.push((hi << 8) | SCALE_BYTES[(i + 1) % SCALE_BYTES.len()]);
            }
            v
        }
        "scale-factor" => SCALE_BYTES.to_vec(),
        _ => vec![0, mask(op.bits), 0x1234_5678 & mask(op.bits)],
    }
}

/// The conversion of the instruction's first result lane (the destination grid and
/// rounding the boundaries come from), if the model gives one.
fn lane_conversion(instr: &Instr, n_ops: usize) -> Option<crate::core::convert::Conversion> {
    let zeros = vec![0u64; n_ops];
    let out = instr.eval(&zeros).ok()?;
    out.lanes.first()?.conversions.last().copied()
}

/// Where lane slot `s` of `m` starts in a list of `n` values: spread over the list, but off
/// the halves (a sorted list has its negative values in the second half, and a shift of
/// exactly n/2 would always pair a value with one of the other sign).
fn offset(s: usize, n: usize) -> usize {
    ((s as u128 * n as u128 * 0x9e37_79b9) >> 32) as usize % n.max(1)
}

/// One case's operand words into `row`, for base value index `i` of `values`.
fn fill_base(row: &mut [u64], ops: &[Operand], values: &[u64], i: usize) {
    let n = values.len();
    let mut slot = 0usize;
    for (w, op) in row.iter_mut().zip(ops) {
        if op.format.is_none() {
            continue;
        }
        let lanes = op.lanes.max(1);
        let lb = op.bits / lanes;
        let mut word = 0u64;
        // Lane 0 is the most significant, as the PTX lanes are numbered.
        for k in 0..lanes {
            let v = values[(i + offset(slot, n)) % n];
            slot += 1;
            let shift = lb * (lanes - 1 - k);
            if shift < 64 {
                word |= (v & mask(lb)) << shift;
            }
        }
        *w = word;
    }
}

/// Builds the vectors of a request.
///
/// # Errors
/// The instruction's own errors ([`crate::Error::Invalid`], [`crate::Error::Illegal`], …) and
/// [`VectorsError`]s (a level that does not exist, too many cases).
pub fn generate(req: &Request) -> Result<Vectors, crate::Error> {
    if !(1..=2).contains(&req.level) {
        return Err(VectorsError::Level(req.level).into());
    }
    if req.level == 1 && req.count.is_some() {
        return Err(VectorsError::CountAtLevel1.into());
    }
    let instr = Instr::parse(&req.instruction, &req.options)?;
    if let Instr::Amd(_) = instr {
        return Err(VectorsError::Dialect(req.instruction.clone()).into());
    }
    let ops = operands_of(&instr);
    let conv = lane_conversion(&instr, ops.len());
    // The lane format every numeric operand shares (the first one's).
    let src = ops.iter().find_map(|o| o.format);
    let values: Vec<u64> = match src {
        None => vec![0],
        Some(f) => points::exhaustive(&f).unwrap_or_else(|| match conv {
            Some(c) => points::boundary(&f, &c.dst, c.rounding.integral),
            None => points::boundary(&f, &f, false),
        }),
    };
    let aux: Vec<(usize, Vec<u64>)> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.format.is_none())
        .map(|(i, o)| (i, aux_patterns(&instr, o)))
        .collect();
    // Every base case under every auxiliary pattern while that stays small; in turn
    // otherwise.
    let combos: u64 = aux.iter().map(|(_, p)| p.len() as u64).product();
    let n = values.len() as u64;
    let cross = n.saturating_mul(combos) <= 1 << 19;
    let base = if cross { n * combos } else { n };
    let total = base + req.random_cases();
    if total > MAX_CASES {
        return Err(VectorsError::TooMany { cases: total }.into());
    }
    let width = ops.len();
    let mut inputs = vec![0u64; total as usize * width];
    // The random stream of operand `j`: an index of its own in the SplitMix64 family.
    let stream = |j: usize, which: u64| req.seed ^ ((j as u64 + 1) << 40) ^ (which << 56);
    inputs
        .par_chunks_mut(width.max(1))
        .enumerate()
        .for_each(|(c, row)| {
            let c = c as u64;
            if c < base {
                let (i, mut p) = if cross {
                    (c / combos, c % combos)
                } else {
                    (c, c)
                };
                fill_base(row, &ops, &values, i as usize);
                for (j, pats) in &aux {
                    let k = pats.len() as u64;
                    row[*j] = pats[(p % k) as usize];
                    if cross {
                        p /= k;
                    }
                }
            } else {
                let r = c - base;
                for (j, (w, op)) in row.iter_mut().zip(&ops).enumerate() {
                    let hi = random_word(stream(j, 0), r) as u64;
                    let lo = random_word(stream(j, 1), r) as u64;
                    let word = (hi << 32) | lo;
                    *w = if op.format.is_some() && hi & 1 == 1 {
                        // A level-1 value in every lane, its low bits perturbed: random
                        // cases near the boundaries as well as uniform ones.
                        let lanes = op.lanes.max(1);
                        let lb = op.bits / lanes;
                        let mut x = 0u64;
                        for k in 0..lanes {
                            let pick = random_word(stream(j, 2 + k as u64), r) as u64;
                            let v = values[(pick % n) as usize] ^ (pick >> 24 & 0x3);
                            let shift = lb * (lanes - 1 - k);
                            if shift < 64 {
                                x |= (v & mask(lb)) << shift;
                            }
                        }
                        x
                    } else {
                        word
                    } & mask(op.bits);
                }
            }
        });
    let answer_words = answer_words_of(&instr);
    let spelling = instr.spelling();
    let opts = req.options;
    // The answers: the evaluator `eval --batch` runs, its answers read back as words. Every
    // 97th case also goes through the batch evaluator's own text, which must read back the
    // same: the files say exactly what `eval --batch` says.
    const CHUNK: usize = 4096;
    let answers: Vec<Vec<Option<Vec<u64>>>> = inputs
        .par_chunks(width.max(1) * CHUNK)
        .enumerate()
        .map(|(c, rows)| {
            let mut batch = Batch::new(opts);
            let mut line = String::new();
            let mut out = String::new();
            rows.chunks(width.max(1))
                .enumerate()
                .map(|(k, row)| {
                    let words = eval_words(&instr, answer_words, row);
                    if (c * CHUNK + k).is_multiple_of(97) {
                        line.clear();
                        input_line_into(&mut line, &spelling, &ops, row);
                        out.clear();
                        batch.line(&line, &mut out);
                        let text = parse_answer(out.trim_end(), answer_words).ok();
                        if text != words {
                            return Err(crate::Error::Vectors(VectorsError::Internal {
                                message: format!(
                                    "{line}: eval --batch says {:?}, the evaluator {words:?}",
                                    out.trim_end()
                                ),
                            }));
                        }
                    }
                    Ok(words)
                })
                .collect()
        })
        .collect::<Result<_, _>>()?;
    let mut kept_inputs = Vec::with_capacity(inputs.len());
    let mut expected = Vec::with_capacity(total as usize * answer_words);
    let mut undefined = 0u64;
    for (row, a) in inputs
        .chunks(width.max(1))
        .zip(answers.into_iter().flatten())
    {
        match a {
            Some(words) => {
                kept_inputs.extend_from_slice(&row[..width]);
                expected.extend(words);
            }
            None => undefined += 1,
        }
    }
    if expected.is_empty() {
        let mut out = String::new();
        let mut line = String::new();
        input_line_into(&mut line, &spelling, &ops, &inputs[..width]);
        Batch::new(opts).line(&line, &mut out);
        return Err(VectorsError::NoAnswers {
            instruction: spelling,
            first: out.trim_end().to_string(),
        }
        .into());
    }
    Ok(Vectors {
        request: req.clone(),
        instr,
        operands: ops,
        inputs: kept_inputs,
        answer_words,
        expected,
        undefined,
    })
}

/// The answer words of one case (`None` where the model gives no answer).
fn eval_words(instr: &Instr, answer_words: usize, row: &[u64]) -> Option<Vec<u64>> {
    match instr {
        Instr::Ptx(_) if answer_words == 1 => {
            instr.eval_bits(row).ok().map(|(b, _)| vec![b as u64])
        }
        _ => check::model_words(instr, answer_words, row),
    }
}

fn input_line_into(line: &mut String, spelling: &str, ops: &[Operand], row: &[u64]) {
    line.push_str(spelling);
    for (op, w) in ops.iter().zip(row) {
        let digits = op.bits.div_ceil(4).max(1) as usize;
        let _ = write!(line, " 0x{w:0digits$x}");
    }
}

impl Vectors {
    /// How many cases.
    pub fn cases(&self) -> usize {
        self.expected.len() / self.answer_words.max(1)
    }

    /// The operand words of case `i`.
    pub fn case_inputs(&self, i: usize) -> &[u64] {
        let w = self.operands.len();
        &self.inputs[i * w..(i + 1) * w]
    }

    /// The expected answer words of case `i`.
    pub fn case_expected(&self, i: usize) -> &[u64] {
        let w = self.answer_words;
        &self.expected[i * w..(i + 1) * w]
    }

    /// The `eval --batch` input line of case `i`.
    pub fn input_line(&self, i: usize) -> String {
        let mut s = String::new();
        input_line_into(
            &mut s,
            &self.instr.spelling(),
            &self.operands,
            self.case_inputs(i),
        );
        s
    }

    /// An answer as `eval --batch` prints it: `0x` and the result padded to its width, or
    /// for a Tile IR op the elements separated by spaces.
    pub fn answer_text(&self, words: &[u64]) -> String {
        answer_text(&self.instr, words)
    }

    /// Case `i` as a line of the text format: `INPUT_LINE -> ANSWER`.
    pub fn line(&self, i: usize) -> String {
        format!(
            "{} -> {}",
            self.input_line(i),
            self.answer_text(self.case_expected(i))
        )
    }

    /// The header of the text format: `# key: value` lines.
    pub fn header(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# gpucvt vectors: {}", self.instr.spelling());
        for (k, v) in self.settings() {
            let _ = writeln!(s, "# {k}: {v}");
        }
        let _ = writeln!(s, "# cases: {}", self.cases());
        let names: Vec<&str> = self.operands.iter().map(|o| o.name.as_str()).collect();
        let _ = writeln!(
            s,
            "# line: INSTRUCTION {} -> EXPECTED (an eval --batch input line, then its answer)",
            names.join(" ")
        );
        s
    }

    /// The options and parameters that made the file, as `(key, value)` pairs: `dialect`,
    /// then what applies to it (`target`, `ptx-version`, `cr0`, `semantics`,
    /// `tile-version`), then `level`, `seed`, `count`.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        let o = &self.request.options;
        let mut v = vec![("dialect", dialect(&self.instr).to_string())];
        match &self.instr {
            Instr::Ptx(_) => {
                if let Some(t) = o.target {
                    v.push(("target", t.to_string()));
                }
                if let Some(p) = o.version {
                    v.push(("ptx-version", p.to_string()));
                }
            }
            Instr::Visa(_) => v.push(("cr0", o.cr0.to_string())),
            // Refused when the vectors are built.
            Instr::Amd(_) => {}
            Instr::Tile(t) => {
                v.push(("semantics", o.semantics.name().to_string()));
                v.push(("target", t.target.to_string()));
                if let Some(tv) = o.tile_version {
                    v.push(("tile-version", tv.to_string()));
                }
            }
        }
        v.push(("level", self.request.level.to_string()));
        v.push(("seed", self.request.seed.to_string()));
        v.push(("count", self.request.random_cases().to_string()));
        v
    }

    /// The whole text format (the header, then one line per case) and
    /// [`Vectors::cases_sha256`], in one pass.
    pub fn to_text(&self) -> (String, String) {
        let mut s = self.header();
        let start = s.len();
        for i in 0..self.cases() {
            s.push_str(&self.line(i));
            s.push('\n');
        }
        let h = sha256_hex(&s.as_bytes()[start..]);
        (s, h)
    }

    /// SHA-256 of the case lines (each with its `\n`, without the header): the same for the
    /// text and `.npz` files of one set of cases, whatever the machine or thread count.
    pub fn cases_sha256(&self) -> String {
        let mut h = Sha256::new();
        for i in 0..self.cases() {
            h.update(self.line(i).as_bytes());
            h.update(b"\n");
        }
        hex(&h.finalize())
    }

    /// The manifest of a file holding these vectors: `file` its name, `kind` `text` or
    /// `npz`, `sha256` the file's bytes' hash, `cases_sha256` [`Vectors::cases_sha256`].
    pub fn manifest(
        &self,
        file: &str,
        kind: &str,
        sha256: String,
        cases_sha256: String,
    ) -> Manifest {
        let conv = lane_conversion(&self.instr, self.operands.len());
        Manifest {
            gpucvt_version: env!("CARGO_PKG_VERSION").to_string(),
            file: file.to_string(),
            kind: kind.to_string(),
            instruction: self.instr.spelling(),
            settings: self
                .settings()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            rounding: conv.map(|c| c.rounding.name().to_string()),
            policy: conv.map(|c| c.policy),
            operands: self.operands.iter().map(|o| o.name.clone()).collect(),
            result_bits: self.instr.result_bits(),
            answer_words: self.answer_words,
            cases: self.cases() as u64,
            undefined: self.undefined,
            sha256,
            cases_sha256,
        }
    }
}

/// [`Vectors::answer_text`] for any instruction.
pub fn answer_text(instr: &Instr, words: &[u64]) -> String {
    match instr {
        Instr::Tile(t) => {
            let digits = t.op.dst.value.elem.bits().div_ceil(4).max(1) as usize;
            let parts: Vec<String> = words.iter().map(|w| format!("0x{w:0digits$x}")).collect();
            parts.join(" ")
        }
        _ => {
            let digits = instr.result_bits().div_ceil(4).max(1) as usize;
            let mut s = String::with_capacity(2 + digits);
            s.push_str("0x");
            for d in (0..digits).rev() {
                let nibble = words.get(d / 16).map_or(0, |w| (w >> (4 * (d % 16))) & 0xf);
                s.push(char::from_digit(nibble as u32, 16).unwrap_or('0'));
            }
            s
        }
    }
}

/// Lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// SHA-256 of some bytes, in lower-case hexadecimal.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// What a published file of vectors is: enough to cite it and to make it again.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Manifest {
    /// The gpucvt that wrote it.
    pub gpucvt_version: String,
    /// The file's name.
    pub file: String,
    /// `text` or `npz`.
    pub kind: String,
    /// The instruction's canonical spelling.
    pub instruction: String,
    /// [`Vectors::settings`]: dialect, target and options, level, seed, count.
    pub settings: std::collections::BTreeMap<String, String>,
    /// The rounding of the first lane's conversion.
    pub rounding: Option<String>,
    /// The policy of the first lane's conversion (saturation, NaN results, flushing, …).
    pub policy: Option<crate::core::convert::Policy>,
    /// The operand words of each input line.
    pub operands: Vec<String>,
    /// The result's width in bits.
    pub result_bits: u32,
    /// 64-bit words per answer.
    pub answer_words: usize,
    /// Cases.
    pub cases: u64,
    /// Cases left out as undefined.
    pub undefined: u64,
    /// SHA-256 of the file's bytes.
    pub sha256: String,
    /// SHA-256 of the case lines ([`Vectors::cases_sha256`]).
    pub cases_sha256: String,
}

/// Reads the options of a text file's header back (`# key: value` lines) into a request.
///
/// # Errors
/// [`VectorsError::Parse`] for a value that does not read.
pub fn request_from_header(text: &str) -> Result<Request, crate::Error> {
    let mut req = Request::new("");
    let mut count = 0u64;
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix('#') else {
            break;
        };
        let Some((key, value)) = rest.trim().split_once(':') else {
            continue;
        };
        let value = value.trim();
        let bad = |what: &str| -> crate::Error {
            VectorsError::Parse {
                line: i as u64 + 1,
                message: format!("{what} {value:?} does not read"),
            }
            .into()
        };
        match key.trim() {
            "gpucvt vectors" => req.instruction = value.to_string(),
            "target" => {
                req.options.target = Some(value.parse::<Target>().map_err(|_| bad("target"))?)
            }
            "ptx-version" => {
                req.options.version = Some(
                    value
                        .parse::<PtxVersion>()
                        .map_err(|_| bad("ptx-version"))?,
                )
            }
            "cr0" => req.options.cr0 = Cr0::parse(value).map_err(|_| bad("cr0"))?,
            "semantics" => {
                req.options.semantics =
                    Semantics::from_name(value).ok_or_else(|| bad("semantics"))?
            }
            "tile-version" => {
                req.options.tile_version =
                    Some(SpecVersion::from_name(value).ok_or_else(|| bad("tile-version"))?)
            }
            "level" => req.level = value.parse().map_err(|_| bad("level"))?,
            "seed" => req.seed = value.parse().map_err(|_| bad("seed"))?,
            "count" => count = value.parse().map_err(|_| bad("count"))?,
            _ => {}
        }
    }
    if req.instruction.is_empty() {
        return Err(VectorsError::Parse {
            line: 1,
            message:
                "not a gpucvt vectors file: the first line is not `# gpucvt vectors: INSTRUCTION`"
                    .into(),
        }
        .into());
    }
    if req.level >= 2 {
        req.count = Some(count);
    }
    Ok(req)
}

/// Reads a text file of vectors back: its request (from the header), the instruction, and
/// each case's input line and expected answer.
///
/// # Errors
/// [`VectorsError::Parse`] for a malformed line, the instruction's own errors.
pub fn read_text(text: &str) -> Result<(Vectors, Vec<String>), crate::Error> {
    let req = request_from_header(text)?;
    let instr = Instr::parse(&req.instruction, &req.options)?;
    if let Instr::Amd(_) = instr {
        return Err(VectorsError::Dialect(req.instruction.clone()).into());
    }
    let ops = operands_of(&instr);
    let answer_words = answer_words_of(&instr);
    let mut inputs = Vec::new();
    let mut expected = Vec::new();
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| -> crate::Error {
            VectorsError::Parse {
                line: i as u64 + 1,
                message,
            }
            .into()
        };
        let (input, answer) = line
            .split_once(" -> ")
            .ok_or_else(|| bad("expected `INPUT -> EXPECTED`".into()))?;
        let (_, words) = crate::instr::split_line(input);
        if words.len() != ops.len() {
            return Err(bad(format!(
                "{} operand words; {} takes {}",
                words.len(),
                instr.spelling(),
                ops.len()
            )));
        }
        for w in &words {
            let digits = w
                .strip_prefix("0x")
                .ok_or_else(|| bad(format!("operand {w:?} is not a 0x word")))?;
            inputs.push(
                u64::from_str_radix(digits, 16)
                    .map_err(|_| bad(format!("operand {w:?} is not a 0x word")))?,
            );
        }
        let e =
            parse_answer(answer, answer_words).map_err(|m| bad(format!("expected answer: {m}")))?;
        expected.extend(e);
        lines.push(input.to_string());
    }
    Ok((
        Vectors {
            request: req,
            instr,
            operands: ops,
            inputs,
            answer_words,
            expected,
            undefined: 0,
        },
        lines,
    ))
}
