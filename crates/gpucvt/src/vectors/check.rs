//! Another implementation's answers against the vectors: agreement counts and each
//! disagreement classified, by asking the model what would have given the other answer.
//!
//! Classes, tested in this order for the first lane that differs:
//! - `rbits` (`.rs` forms, tested on the whole case first): the answer is the model's for
//!   the same inputs with the `rbits` fields taken from other bits (lanes' fields swapped or
//!   permuted, the high bits of a 16-bit half instead of the low ones, or none at all);
//! - `nan-encoding`: both NaN in the destination format, different bits;
//! - `saturation`: one is ±max finite, the other ±inf or NaN (saturation against overflow);
//! - `sign-of-zero`: both zero, opposite signs;
//! - `subnormal`: the input is subnormal and one answer is zero (inputs flushed);
//! - `rounding`: the answer is the model's under another rounding direction (named);
//! - `subnormal`: one is zero where the other is subnormal (results flushed);
//! - `rounding`: the destination's other neighbour of the exact value;
//! - `other`.

use super::{answer_text, mask, Vectors, VectorsError};
use crate::core::convert::Conversion;
use crate::core::format::{Format, Layout};
use crate::core::round::{Direction, Rounding};
use crate::core::value::Class as ValueClass;
use crate::instr::Instr;
use crate::ptx::eval::{lane_rbits_place, rbits_width};
use rayon::prelude::*;

/// What kind of disagreement a case is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Both NaN, encoded differently.
    NanEncoding,
    /// One ±max finite, the other ±inf or NaN.
    Saturation,
    /// Both zero, opposite signs.
    SignOfZero,
    /// A subnormal input or result flushed (or kept) by one side.
    Subnormal,
    /// Another rounding direction, or the other neighbour.
    Rounding,
    /// The `rbits` fields read from other bits.
    Rbits,
    /// None of the above (including answers that do not read).
    Other,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 7] = [
        Class::NanEncoding,
        Class::Saturation,
        Class::SignOfZero,
        Class::Subnormal,
        Class::Rounding,
        Class::Rbits,
        Class::Other,
    ];

    /// The stable name (`nan-encoding`, `saturation`, `sign-of-zero`, `subnormal`,
    /// `rounding`, `rbits`, `other`).
    pub fn name(self) -> &'static str {
        match self {
            Class::NanEncoding => "nan-encoding",
            Class::Saturation => "saturation",
            Class::SignOfZero => "sign-of-zero",
            Class::Subnormal => "subnormal",
            Class::Rounding => "rounding",
            Class::Rbits => "rbits",
            Class::Other => "other",
        }
    }

    /// Looks a class up by its name.
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// One line saying what the class means.
    pub fn description(self) -> &'static str {
        match self {
            Class::NanEncoding => "both answers are NaN, with different bits",
            Class::Saturation => "one answer is ±max finite, the other ±inf or NaN",
            Class::SignOfZero => "both answers are zero, with opposite signs",
            Class::Subnormal => "a subnormal input or result flushed to zero by one side",
            Class::Rounding => "the other neighbour of the exact value: another rounding",
            Class::Rbits => "stochastic rounding with the random bits taken from other bits",
            Class::Other => "none of the above",
        }
    }
}

/// One case where the answers differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The case's index (0-based).
    pub case: u64,
    /// Its `eval --batch` input line.
    pub input: String,
    /// The model's answer.
    pub expected: String,
    /// The implementation's answer.
    pub got: String,
    /// Its class.
    pub class: Class,
    /// The lane that decided (0 = most significant), when one did.
    pub lane: Option<usize>,
    /// Why (`matches rz`, `lane a: +max vs NaN`, …).
    pub detail: String,
}

/// The rule an implementation's `rbits` use follows, inferred from its answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RbitsRule {
    /// Each lane's field as the implementation reads it (`a: rbits[7:0]`, …), or
    /// `rbits ignored (as if 0)`.
    pub rule: String,
    /// The model's own rule, in the same words.
    pub model: String,
    /// Cases the rule explains.
    pub explains: u64,
    /// Cases checked.
    pub cases: u64,
}

/// The result of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The instruction.
    pub instruction: String,
    /// Cases checked.
    pub cases: u64,
    /// Cases answered as the model does.
    pub agree: u64,
    /// Disagreements per class (every class, report order).
    pub classes: Vec<(Class, u64)>,
    /// The first disagreements (as many as asked for).
    pub shown: Vec<Disagreement>,
    /// For `.rs` forms with `rbits` disagreements: the inferred rule.
    pub rbits: Option<RbitsRule>,
}

impl Report {
    /// Disagreements.
    pub fn disagree(&self) -> u64 {
        self.cases - self.agree
    }

    /// Disagreements of one class.
    pub fn count(&self, class: Class) -> u64 {
        self.classes
            .iter()
            .find(|c| c.0 == class)
            .map_or(0, |c| c.1)
    }

    /// Disagreements outside `allowed`.
    pub fn disallowed(&self, allowed: &[Class]) -> u64 {
        self.classes
            .iter()
            .filter(|(c, _)| !allowed.contains(c))
            .map(|c| c.1)
            .sum()
    }

    /// The report as text: counts, each class with disagreements, the inferred `rbits`
    /// rule, the first disagreements.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{}: {} of {} cases agree, {} disagree\n",
            self.instruction,
            self.agree,
            self.cases,
            self.disagree()
        );
        for (c, n) in &self.classes {
            if *n > 0 {
                s.push_str(&format!("  {:<13} {n:>8}  {}\n", c.name(), c.description()));
            }
        }
        if let Some(r) = &self.rbits {
            s.push_str(&format!(
                "  rbits: the answers follow {} ({} of {} cases); the model reads {}\n",
                r.rule, r.explains, r.cases, r.model
            ));
        }
        for d in &self.shown {
            s.push_str(&format!(
                "  case {}: {} -> expected {}, got {}: {}{}\n",
                d.case,
                d.input,
                d.expected,
                d.got,
                d.class.name(),
                if d.detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", d.detail)
                }
            ));
        }
        s
    }
}

/// Reads an answer as `words` 64-bit words: one `0x` word per Tile IR element (`words` of
/// them), else one `0x` word of any width (least significant 64 bits first).
///
/// # Errors
/// A message for an `error:` line, a word that is not `0x` hex, a wrong count.
pub fn parse_answer(text: &str, words: usize) -> Result<Vec<u64>, String> {
    let text = text.trim();
    if let Some(e) = text.strip_prefix("error:") {
        return Err(format!("an error: {}", e.trim()));
    }
    let parts: Vec<&str> = text.split_whitespace().collect();
    let hexes: Vec<&str> = parts
        .iter()
        .map(|p| {
            p.strip_prefix("0x")
                .or_else(|| p.strip_prefix("0X"))
                .filter(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_hexdigit()))
                .ok_or_else(|| format!("{p:?} is not a 0x hex word"))
        })
        .collect::<Result<_, _>>()?;
    if hexes.len() == words && words > 1 || hexes.len() == 1 && words == 1 {
        return hexes
            .iter()
            .map(|d| {
                let d = d.trim_start_matches('0');
                if d.len() > 16 {
                    return Err("a word wider than 64 bits".to_string());
                }
                u64::from_str_radix(if d.is_empty() { "0" } else { d }, 16)
                    .map_err(|e| e.to_string())
            })
            .collect();
    }
    if hexes.len() == 1 {
        // One wide word: its 64-bit pieces, least significant first.
        let d = hexes[0].trim_start_matches('0');
        if d.len() > 16 * words {
            return Err(format!("wider than the {} bits of the result", 64 * words));
        }
        let mut out = vec![0u64; words];
        for (k, chunk) in d.as_bytes().rchunks(16).enumerate() {
            let s = std::str::from_utf8(chunk).map_err(|e| e.to_string())?;
            out[k] = u64::from_str_radix(s, 16).map_err(|e| e.to_string())?;
        }
        return Ok(out);
    }
    Err(format!("{} words; the answer has {words}", hexes.len()))
}

/// One `rbits` hypothesis: the field of lane `k` comes from bit `from[k]` (the model's
/// width), or every field is 0.
#[derive(Clone, Debug)]
struct Hypothesis {
    from: Option<Vec<u32>>,
    name: String,
}

fn lane_names(v: &Vectors, lanes: usize) -> Vec<String> {
    let numeric: Vec<&str> = v
        .operands
        .iter()
        .filter(|o| o.format.is_some() && o.lanes == 1)
        .map(|o| o.name.as_str())
        .collect();
    if numeric.len() == lanes {
        numeric.into_iter().map(String::from).collect()
    } else {
        (0..lanes).map(|k| format!("lane {k}")).collect()
    }
}

fn field_text(names: &[String], from: &[u32], w: u32) -> String {
    let parts: Vec<String> = names
        .iter()
        .zip(from)
        .map(|(n, &s)| format!("{n}: rbits[{}:{}]", s + w - 1, s))
        .collect();
    parts.join(", ")
}

/// The model's placement and the alternatives tried, for an `.rs` PTX form.
fn hypotheses(v: &Vectors) -> Option<(String, Vec<Hypothesis>)> {
    let Instr::Ptx(p) = &v.instr else {
        return None;
    };
    let w = rbits_width(&p.form);
    if w == 0 {
        return None;
    }
    let lanes = p.form.dtype.lanes().max(1) as usize;
    let model: Vec<u32> = (0..lanes).map(|k| lane_rbits_place(&p.form, k).0).collect();
    let names = lane_names(v, lanes);
    let mut out = Vec::new();
    let mut perms = vec![Vec::new()];
    for _ in 0..lanes {
        perms = perms
            .into_iter()
            .flat_map(|q: Vec<usize>| {
                (0..lanes)
                    .filter(|i| !q.contains(i))
                    .map(|i| {
                        let mut q = q.clone();
                        q.push(i);
                        q
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    // The high bits of a 16-bit half, where a field is narrower than its half.
    let lifts: &[u32] = if lanes == 2 && w < 16 {
        &[0, 16 - w]
    } else {
        &[0]
    };
    for perm in &perms {
        for &lift in lifts {
            let from: Vec<u32> = perm.iter().map(|&i| model[i] + lift).collect();
            if from == model {
                continue;
            }
            out.push(Hypothesis {
                name: field_text(&names, &from, w),
                from: Some(from),
            });
        }
    }
    out.push(Hypothesis {
        from: None,
        name: "rbits ignored (as if 0)".into(),
    });
    Some((field_text(&names, &model, w), out))
}

/// The `rbits` operand the model would need to give what an implementation following `h`
/// gives for `rbits`.
fn remap(v: &Vectors, h: &Hypothesis, rbits: u64) -> u64 {
    let (Instr::Ptx(p), Some(from)) = (&v.instr, &h.from) else {
        return 0;
    };
    let mut out = 0u64;
    for (k, &src) in from.iter().enumerate() {
        let (shift, width) = lane_rbits_place(&p.form, k);
        out |= ((rbits >> src) & mask(width)) << shift;
    }
    out
}

/// The model's answer words for some operands.
pub(super) fn model_words(instr: &Instr, answer_words: usize, ops: &[u64]) -> Option<Vec<u64>> {
    match instr {
        Instr::Tile(t) => {
            let out = instr.eval(ops).ok()?;
            let mut w = vec![0u64; answer_words];
            let eb = t.op.dst.value.elem.bits().max(1);
            for l in &out.lanes {
                let k = (l.shift / eb) as usize;
                if let Some(x) = w.get_mut(k) {
                    *x = l.bits;
                }
            }
            Some(w)
        }
        _ => {
            let out = instr.eval(ops).ok()?;
            let mut w = vec![0u64; answer_words];
            for l in &out.lanes {
                let (k, b) = ((l.shift / 64) as usize, l.shift % 64);
                if let Some(x) = w.get_mut(k) {
                    *x |= l.bits << b;
                }
                if b > 0 {
                    if let Some(x) = w.get_mut(k + 1) {
                        *x |= l.bits >> (64 - b);
                    }
                }
            }
            Some(w)
        }
    }
}

impl Vectors {
    fn instr_element_bits(&self) -> u32 {
        match &self.instr {
            Instr::Tile(t) => t.op.dst.value.elem.bits(),
            _ => 64,
        }
    }
}

fn bits_at(words: &[u64], shift: u32, width: u32) -> u64 {
    let (k, b) = ((shift / 64) as usize, shift % 64);
    let mut x = words.get(k).map_or(0, |w| w >> b);
    if b > 0 && b + width > 64 {
        x |= words.get(k + 1).map_or(0, |w| w << (64 - b));
    }
    x & mask(width)
}

fn is_max(f: &Format, bits: u64) -> bool {
    let sign = f.sign_bit().unwrap_or(0);
    bits & !sign == f.max_finite_bits() & !sign
        || f.min_finite_bits()
            .is_some_and(|m| bits == m && !f.is_float())
}

fn inf_or_nan(f: &Format, bits: u64) -> bool {
    matches!(
        f.decode(bits).class,
        ValueClass::Infinite | ValueClass::Nan { .. }
    )
}

/// Classifies one lane: the conversion(s) that produced it, its input, both answers.
fn classify_lane(
    chain: &[Conversion],
    input: u64,
    expected: u64,
    got: u64,
) -> Option<(Class, String)> {
    let last = chain.last()?;
    let f = last.dst;
    let (e, g) = (f.decode(expected), f.decode(got));
    if e.is_nan() && g.is_nan() {
        return Some((Class::NanEncoding, String::new()));
    }
    if is_max(&f, expected) && inf_or_nan(&f, got) {
        return Some((
            Class::Saturation,
            "the model saturates, the answer overflows".into(),
        ));
    }
    if is_max(&f, got) && inf_or_nan(&f, expected) {
        return Some((
            Class::Saturation,
            "the answer saturates, the model overflows".into(),
        ));
    }
    let zero = |v: &crate::core::value::Value| v.class == ValueClass::Zero;
    if zero(&e) && zero(&g) {
        return Some((Class::SignOfZero, String::new()));
    }
    let src = chain[0].src;
    let sub = |fm: &Format, b: u64| fm.is_float() && fm.is_subnormal(b);
    // A subnormal input flushed comes first; a subnormal result flushed only after the
    // other roundings (rz of the smallest subnormal's neighbourhood is zero too).
    if sub(&src, input) && (zero(&g) || zero(&e)) {
        return Some((Class::Subnormal, "a subnormal input flushed".into()));
    }
    if chain.len() == 1 {
        let r = last.rounding;
        for alt in [
            Direction::NearestEven,
            Direction::NearestAway,
            Direction::TowardZero,
            Direction::Down,
            Direction::Up,
        ] {
            if alt == r.direction {
                continue;
            }
            let c = Conversion {
                rounding: Rounding::new(alt, r.integral),
                ..*last
            };
            if c.apply(input).bits == got {
                let name = c.rounding.name();
                return Some((Class::Rounding, format!("matches {name}")));
            }
        }
    }
    if (zero(&g) && sub(&f, expected)) || (zero(&e) && sub(&f, got)) {
        return Some((Class::Subnormal, "a subnormal result flushed".into()));
    }
    // Same sign, one encoding apart: the other neighbour.
    if let Layout::Float(_) = f.layout {
        let sign = f.sign_bit().unwrap_or(0);
        if (expected ^ got) & sign == 0 && (expected & !sign).abs_diff(got & !sign) == 1 {
            return Some((Class::Rounding, "the other neighbour".into()));
        }
    } else if expected.abs_diff(got) == 1 {
        return Some((Class::Rounding, "the other neighbour".into()));
    }
    if e.is_nan() != g.is_nan() {
        return Some((Class::Other, "NaN against a number".into()));
    }
    None
}

/// Checks answers (`None`: one that does not read, with its text) against the vectors,
/// keeping the first `show` disagreements.
///
/// # Errors
/// [`VectorsError::AnswerCount`] when there are not as many answers as cases.
pub fn check(
    v: &Vectors,
    answers: &[Result<Vec<u64>, String>],
    show: usize,
) -> Result<Report, crate::Error> {
    let n = v.cases();
    if answers.len() != n {
        return Err(VectorsError::AnswerCount {
            cases: n as u64,
            got: answers.len() as u64,
        }
        .into());
    }
    let differs: Vec<usize> = (0..n)
        .into_par_iter()
        .filter(|&i| answers[i].as_deref() != Ok(v.case_expected(i)))
        .collect();
    // For .rs forms: which hypothesis explains the answers, over every case.
    let rbits_index = v.operands.iter().position(|o| o.name == "rbits");
    let mut rbits_rule = None;
    let mut rbits_match: Vec<bool> = vec![false; differs.len()];
    if let (Some(j), Some((model, hyps)), false) = (rbits_index, hypotheses(v), differs.is_empty())
    {
        let explains = |h: &Hypothesis, i: usize| -> bool {
            let mut ops = v.case_inputs(i).to_vec();
            ops[j] = remap(v, h, ops[j]);
            match (&answers[i], model_words(&v.instr, v.answer_words, &ops)) {
                (Ok(a), Some(m)) => *a == m,
                _ => false,
            }
        };
        // Each hypothesis's score over the disagreements, then the best over every case.
        let scores: Vec<usize> = hyps
            .par_iter()
            .map(|h| differs.iter().filter(|&&i| explains(h, i)).count())
            .collect();
        if let Some((best, &score)) = scores
            .iter()
            .enumerate()
            .max_by_key(|(k, s)| (**s, usize::MAX - k))
        {
            if score > 0 {
                let h = &hyps[best];
                for (k, &i) in differs.iter().enumerate() {
                    rbits_match[k] = explains(h, i);
                }
                let total = (0..n).into_par_iter().filter(|&i| explains(h, i)).count();
                rbits_rule = Some(RbitsRule {
                    rule: h.name.clone(),
                    model,
                    explains: total as u64,
                    cases: n as u64,
                });
            }
        }
    }
    let classified: Vec<(Class, Option<usize>, String)> = differs
        .par_iter()
        .zip(&rbits_match)
        .map(|(&i, &rb)| {
            if rb {
                return (Class::Rbits, None, "matches the inferred rbits rule".into());
            }
            let got = match &answers[i] {
                Ok(g) => g,
                Err(m) => return (Class::Other, None, format!("not an answer: {m}")),
            };
            let Ok(out) = v.instr.eval(v.case_inputs(i)) else {
                return (Class::Other, None, String::new());
            };
            let per_element = matches!(v.instr, Instr::Tile(_));
            for (k, lane) in out.lanes.iter().enumerate() {
                let Some(last) = lane.conversions.last() else {
                    continue;
                };
                let w = last.dst.width();
                let g = if per_element {
                    let idx = (lane.shift / v.instr_element_bits().max(1)) as usize;
                    got.get(idx).copied().unwrap_or(0) & mask(w)
                } else {
                    bits_at(got, lane.shift, w)
                };
                if g == lane.bits {
                    continue;
                }
                return match classify_lane(&lane.conversions, lane.input, lane.bits, g) {
                    Some((c, d)) => (c, Some(k), d),
                    None => (Class::Other, Some(k), String::new()),
                };
            }
            // The lanes agree but the words do not: bits outside every lane.
            (Class::Other, None, "bits outside the lanes differ".into())
        })
        .collect();
    let mut counts = [0u64; 7];
    for (c, _, _) in &classified {
        counts[Class::ALL.iter().position(|x| x == c).unwrap_or(6)] += 1;
    }
    let shown = differs
        .iter()
        .zip(&classified)
        .take(show)
        .map(|(&i, (c, lane, d))| Disagreement {
            case: i as u64,
            input: v.input_line(i),
            expected: answer_text(&v.instr, v.case_expected(i)),
            got: match &answers[i] {
                Ok(g) => answer_text(&v.instr, g),
                Err(m) => m.clone(),
            },
            class: *c,
            lane: *lane,
            detail: d.clone(),
        })
        .collect();
    Ok(Report {
        instruction: v.instr.spelling(),
        cases: n as u64,
        agree: (n - differs.len()) as u64,
        classes: Class::ALL.iter().copied().zip(counts).collect(),
        shown,
        rbits: rbits_rule,
    })
}

/// [`check`] on answer lines as a program prints them (`0x…` per line).
///
/// # Errors
/// As [`check`].
pub fn check_lines<S: AsRef<str> + Sync>(
    v: &Vectors,
    lines: &[S],
    show: usize,
) -> Result<Report, crate::Error> {
    let answers: Vec<Result<Vec<u64>, String>> = lines
        .par_iter()
        .map(|l| {
            parse_answer(l.as_ref(), v.answer_words).map_err(|m| format!("{:?}: {m}", l.as_ref()))
        })
        .collect();
    check(v, &answers, show)
}
