//! Running one PTX entry: its straight-line `mov`, `cvt` and `cvt.pack` statements, in order,
//! over the registers its `.reg` declarations name (what `gpucvt run FILE.ptx` does).
//!
//! The model:
//! - **Registers** hold bit patterns of their declared width (`.v2`/`.v4` registers: one value
//!   per element, `%v.x` …). A register gets a value from `--set` style initial values
//!   ([`RunInput`]) or from a statement that writes it.
//! - **Reading a register that was never written nor set is an error** (rule `ptx.run-unset`,
//!   with the position of the operand): a PTX register has no defined initial value, and a
//!   silent 0 would hide a mistake in the inputs.
//! - **Sources** wider than the instruction type are chopped to its width (`ptx-cvt.md`
//!   §4.15); **results** are extended to the destination register with
//!   [`extend_to_register`] (sign extension for signed types, zero extension otherwise;
//!   `cvt.pack` results are the 32-bit packed value, zero-extended).
//! - **Immediates**: integers, `0fXXXXXXXX` (f32 bits), `0dXXXXXXXXXXXXXXXX` (f64 bits) and
//!   decimal floats (read by PTX as f64). For a float instruction type the literal's value is
//!   rounded to nearest even into that type (exact for f32 literals in f32, f64 in f64); for
//!   `.bN`/`.uN`/`.sN` and packed types an integer is taken as bits (two's complement) and an
//!   `0f`/`0d` literal as its raw bits when the widths match.
//! - **`mov`** copies (register, immediate), packs (`mov.b32 %r, {%h0, %h1}`: the first
//!   element in the low bits) or unpacks (`mov.b32 {%h0, %h1}, %r`). A `mov` from a name no
//!   `.reg` declares (a special register such as `%tid.x`, or a symbol) is skipped with a note.
//! - **Guards** are honoured: `@%p` runs the statement when `%p` holds 1 (`@!%p` when it holds
//!   0); `%p` gets its value from an initial value (`--set %p=1`) or a `mov.pred`. A guard on a
//!   predicate with no value is an error like any unset read.
//! - **Everything else** — labels, branches (never taken: execution is straight-line), other
//!   instructions and directives — is skipped with a note (rule `ptx.run-skipped`); `ret` and
//!   `exit` silently.
//! - **Unknown registers** ([`crate::unknown`], the rule shared with vISA and Tile IR): the
//!   registers a skipped instruction writes (its first operand: `%r`, `{%a, %b}`, `%p|%q`,
//!   `(%r)`; none for `st`, `red`, `bra`, `bar` and the like; none when its guard is known to
//!   be false), and the destination of a `mov` from a special register, become unknown. A
//!   `cvt` or a guard that reads an unknown register stops (rule `ptx.run-unknown`) naming
//!   the instruction and `--set`; a `mov` copies the unknown along. A register given with
//!   `--set` gets that value at every skipped write (the user stands in for the load, also
//!   after a `mov` of a default: Triton's `mov.u32 %r1, 0x0; @%p1 ld.global.b32 %r1, […]`);
//!   a modelled write replaces it, with a note (rule `ptx.run-set-replaced`) naming the
//!   instruction, which an error about the register repeats. Unknown registers are listed
//!   with [`RegValue::unknown`] set.
//!
//! The file is checked first (reader and [`check_file`]); a file with errors is not run.
//!
//! ```
//! use gpucvt::ptx::parse::parse_file;
//! use gpucvt::ptx::run::{run, RunInput, RunOptions};
//! let src = "\
//! .version 8.6
//! .target sm_90
//! .entry k()
//! {
//!     .reg .f32 %f<3>;
//!     .reg .b16 %h;
//!     mov.f32 %f1, 0f3F800000;
//!     cvt.rn.satfinite.e4m3x2.f32 %h, %f1, %f2;
//! }
//! ";
//! let file = parse_file(src);
//! let input = [RunInput { name: "%f2".into(), value: "300".into() }];
//! let out = run(&file, &input, &RunOptions::default()).unwrap();
//! // 1.0 -> e4m3 0x38 in the high byte; 300 -> 288 (0x79) in the low byte.
//! assert_eq!(out.get("%h"), Some(0x3879));
//! ```

use super::check::{check_file, takes_optional_scale};
use super::eval::{evaluate, extend_to_register, operand_roles, role_bits, Role};
use super::lexer::{lex, TokenKind};
use super::parse::{
    Block, Function, FunctionKind, Immediate, Instruction, Mov, Operand, OperandKind, Predicate,
    PtxFile, RegDecl, RegRef, Statement,
};
use super::target::{PtxVersion, Target};
use super::types::{Kind, PtxType};
use crate::diag::{Diagnostic, Severity, Span};
use crate::text::{parse_bits_named, parse_number, to_decimal, to_short};
use crate::unknown::{skipped_note, Supply, Unknown};
use gpucvt_core::convert::{convert, Flags, Policy};
use gpucvt_core::format::{self, Format};
use gpucvt_core::round::Rounding;
use gpucvt_core::value::Value;
use std::collections::{HashMap, HashSet};

/// How to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// The entry to run; `None`: the file's only `.entry` (an error if it has several).
    pub entry: Option<String>,
    /// The target for the legality check; `None`: the file's `.target`.
    pub target: Option<Target>,
    /// The PTX version for the legality check; `None`: the file's `.version`.
    pub version: Option<PtxVersion>,
}

/// An initial register value, as text (`--set %f1=1.5`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInput {
    /// The register (`%f1`, `%v.x`).
    pub name: String,
    /// The value, read by [`parse_value`] for the register's type.
    pub value: String,
}

/// A register's final value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegValue {
    /// The register (`%h1`, or `%v.x` for an element of a vector register).
    pub name: String,
    /// Its declared type.
    pub reg_type: PtxType,
    /// The type of the instruction (or initial value) that wrote it last: what its bits
    /// mean (`e4m3x2` for the destination of `cvt.rn.satfinite.e4m3x2.f32`).
    pub written_as: PtxType,
    /// The bits, as wide as the register (0 when [`unknown`](Self::unknown)).
    pub bits: u64,
    /// Set when the register ends unknown: the skipped instruction that wrote it (then
    /// `written_as` is the register's type and `bits` 0).
    pub unknown: Option<Unknown>,
}

impl RegValue {
    /// The bits decoded as [`written_as`](Self::written_as) (see [`describe`]), or
    /// `unknown (ld.global.f32 at 26:5)`.
    pub fn describe(&self) -> String {
        match &self.unknown {
            Some(u) => u.describe(),
            None => describe(self.written_as, self.bits),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// The entry that ran.
    pub entry: String,
    /// Every register a statement wrote (not the ones only set, nor those that kept their
    /// set value through skipped writes), in order of first write; unknown ones included.
    pub written: Vec<RegValue>,
    /// Statements not executed and other remarks (warnings: `ptx.run-skipped`,
    /// `ptx.run-guard`, `ptx.run-inexact`).
    pub notes: Vec<Diagnostic>,
    /// How many statements ran.
    pub executed: usize,
}

impl RunResult {
    /// The final bits of a written register (`None` for an unknown one).
    pub fn get(&self, name: &str) -> Option<u64> {
        self.written
            .iter()
            .find(|r| r.name == name && r.unknown.is_none())
            .map(|r| r.bits)
    }

    /// The skipped instruction that left a register unknown.
    pub fn unknown(&self, name: &str) -> Option<&Unknown> {
        self.written
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.unknown.as_ref())
    }
}

/// Why a run did not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The file has errors (the reader's or the checker's): nothing ran.
    #[error("the file has {} error(s); nothing was run", .0.len())]
    Invalid(Vec<Diagnostic>),
    /// A problem with the options or initial values (no such entry, a bad value).
    #[error("{0}")]
    Input(String),
    /// Execution stopped at a statement (an unset or unknown register, a value that does
    /// not fit).
    #[error("{0}")]
    Stopped(Diagnostic),
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Whether a type is a scalar floating-point type (f16, f32, e4m3, …).
fn is_float_scalar(ty: PtxType) -> bool {
    ty.kind() == Kind::Float && ty.lanes() == 1
}

/// The register's value type: `None` when it is too wide to model (`.b128`).
fn modelled(ty: PtxType) -> bool {
    ty.bits() <= 64
}

/// Rounds `v` to nearest even into `f`; `Err` if it is not representable at all.
fn round_into(v: &Value, f: &Format) -> (u64, bool) {
    let out = convert(v, f, Rounding::RN, &Policy::default());
    let changed = out.flags.contains(Flags::INEXACT)
        || out.flags.contains(Flags::OVERFLOW)
        || out.flags.contains(Flags::INVALID);
    (out.bits, changed)
}

fn is_raw_bits(tok: &str) -> bool {
    let lower = tok.to_ascii_lowercase();
    (lower.starts_with("0x") || lower.starts_with("0b"))
        && !lower.contains('.')
        && !lower.contains('p')
}

/// A PTX `0f`/`0d` literal's format and bits (`None` for anything else, malformed literals
/// included).
fn ptx_float_literal(tok: &str) -> Option<(Format, u64)> {
    let (bits, f) = crate::text::ptx_float_literal(tok)?.ok()?;
    Some((f, bits))
}

/// An integer value as bits of a `width`-bit integer type: accepted when it fits as an
/// unsigned or a two's complement signed number.
fn int_bits(v: i128, width: u32) -> Option<u64> {
    let w = width.min(64);
    let max_u = (1i128 << w) - 1;
    let min_s = -(1i128 << (w - 1));
    (min_s..=max_u).contains(&v).then(|| (v as u64) & mask(w))
}

/// Reads a register value given as text for a register (or instruction) type, the way
/// `gpucvt run --set` does. Returns the bits and, when a number was not exact in the type, a
/// note saying so.
///
/// - `.pred`: `0`, `1`, `true`, `false`;
/// - raw bits: `0x…`/`0b…` (without a point or an exponent), and PTX's `0fXXXXXXXX` /
///   `0dXXXXXXXXXXXXXXXX` (for a float type a `0f`/`0d` literal is a value, converted);
/// - float types (`f16`, `f32`, `e4m3`, …): a decimal or hexadecimal-float number (`1.5`,
///   `-0x1.8p3`, `inf`, `nan`), rounded to nearest even;
/// - packed types (`f16x2`, `e4m3x2`, …): a comma list of lane values, most significant
///   lane first (`1.0,-2`);
/// - `.uN`/`.sN`: an integer of the type's range; `.bN`: an integer that fits as unsigned or
///   as two's complement.
///
/// ```
/// use gpucvt::ptx::{run::parse_value, PtxType};
/// assert_eq!(parse_value(PtxType::F32, "1.5").unwrap().0, 0x3fc0_0000);
/// assert_eq!(parse_value(PtxType::F16, "0f3F800000").unwrap().0, 0x3c00);
/// assert_eq!(parse_value(PtxType::F16x2, "1,-2").unwrap().0, 0x3c00_c000);
/// assert_eq!(parse_value(PtxType::B16, "-1").unwrap().0, 0xffff);
/// assert!(parse_value(PtxType::U8, "256").is_err());
/// assert!(parse_value(PtxType::F16, "0.1").unwrap().1.is_some()); // rounded
/// ```
///
/// # Errors
/// [`crate::Error::Value`], saying what was expected.
pub fn parse_value(ty: PtxType, text: &str) -> Result<(u64, Option<String>), crate::Error> {
    parse_value_text(ty, text).map_err(|message| crate::Error::Value { message })
}

/// [`parse_value`] with the message as text.
fn parse_value_text(ty: PtxType, text: &str) -> Result<(u64, Option<String>), String> {
    let text = text.trim();
    let width = ty.bits();
    if !modelled(ty) {
        return Err(format!(".{} registers are not modelled", ty.name()));
    }
    if ty == PtxType::Pred {
        return match text.to_ascii_lowercase().as_str() {
            "0" | "false" => Ok((0, None)),
            "1" | "true" => Ok((1, None)),
            _ => Err(format!(
                "a .pred value is 0, 1, true or false, not {text:?}"
            )),
        };
    }
    let name = ty.name();
    if let Some((f, bits)) = ptx_float_literal(text) {
        if is_float_scalar(ty) {
            let Some(dst) = ty.lane_format() else {
                return Err(format!("cannot read {text} as .{name}"));
            };
            let (b, changed) = round_into(&f.decode(bits), &dst);
            let note = changed.then(|| inexact_note(text, ty, b));
            return Ok((b, note));
        }
        if f.width() != width {
            return Err(format!(
                "{text} is a {}-bit literal; a .{name} value has {width} bits",
                f.width()
            ));
        }
        return Ok((bits, None));
    }
    if is_raw_bits(text) {
        let bits = parse_bits_named(text, width, name).map_err(|e| e.to_string())?;
        return Ok((bits, None));
    }
    match ty.kind() {
        Kind::Float | Kind::Packed => {
            let Some(lane) = ty.lane_format() else {
                return Err(format!("cannot read {text:?} as .{name}"));
            };
            let lanes = ty.lanes();
            let parts: Vec<&str> = text.split(',').collect();
            if parts.len() as u32 != lanes {
                return Err(format!(
                    ".{name} packs {lanes} {} lanes: give raw bits (0x…) or {lanes} comma-separated values, most significant lane first",
                    lane.name
                ));
            }
            let slot = ty.lane_bits();
            let mut bits = 0u64;
            let mut notes = Vec::new();
            for (i, p) in parts.iter().enumerate() {
                let parsed = parse_number(p.trim()).map_err(|e| e.to_string())?;
                let (b, changed) = round_into(&parsed.value, &lane);
                if !lane.is_float() && (changed || !parsed.exact) {
                    return Err(format!("{p} is not a {} value", lane.name));
                }
                if changed || !parsed.exact {
                    notes.push(format!(
                        "{} is not exact in {}: rounded to nearest even, {}",
                        p.trim(),
                        lane.name,
                        to_decimal(&lane.decode(b))
                    ));
                }
                bits |= (b & mask(slot)) << (slot * (lanes - 1 - i as u32));
            }
            Ok((bits, (!notes.is_empty()).then(|| notes.join("; "))))
        }
        Kind::Signed | Kind::Unsigned | Kind::Bits => {
            let parsed = parse_number(text).map_err(|e| e.to_string())?;
            let f = ty.lane_format();
            let candidates: Vec<Format> = match f {
                Some(f) => vec![f],
                None => match width {
                    8 => vec![format::U8, format::S8],
                    16 => vec![format::U16, format::S16],
                    32 => vec![format::U32, format::S32],
                    _ => vec![format::U64, format::S64],
                },
            };
            for c in candidates {
                let (b, changed) = round_into(&parsed.value, &c);
                if parsed.exact && !changed {
                    return Ok((b & mask(width), None));
                }
            }
            Err(format!(
                "{text} is not a .{name} value (an integer that fits in {width} bits); or give raw bits as 0x…"
            ))
        }
        Kind::Pred => Err(format!("cannot read {text:?} as .{name}")),
    }
}

fn inexact_note(text: &str, ty: PtxType, bits: u64) -> String {
    format!(
        "{text} is not exact in .{}: rounded to nearest even, {}",
        ty.name(),
        describe(ty, bits)
    )
}

/// A value's short decimal: exact up to 24 characters, else 9 significant digits (`~`).
fn short(v: &Value) -> String {
    let exact = to_decimal(v);
    if exact.len() <= 24 {
        exact
    } else {
        to_short(v, 9).to_string()
    }
}

/// The bits of a `ty` value as a person reads them: a decimal for scalar types (`1.5`,
/// `-3`, `nan`), the lanes most significant first for packed types (`[448, 1]`), `true` or
/// `false` for `.pred`, and the unsigned integer for `.bN` types. Bits above the type's
/// width are ignored.
///
/// ```
/// use gpucvt::ptx::{run::describe, PtxType};
/// assert_eq!(describe(PtxType::E4m3x2, 0x3879), "[1, 288]");
/// assert_eq!(describe(PtxType::S16, 0xffff_8000), "-32768");
/// assert_eq!(describe(PtxType::F32, 0x3fc0_0000), "1.5");
/// ```
pub fn describe(ty: PtxType, bits: u64) -> String {
    let bits = bits & mask(ty.bits());
    match (ty.kind(), ty.lane_format()) {
        (Kind::Pred, _) => (if bits & 1 == 1 { "true" } else { "false" }).to_string(),
        (Kind::Packed, Some(f)) => {
            let n = ty.lanes();
            let slot = ty.lane_bits();
            let lanes: Vec<String> = (0..n)
                .map(|k| {
                    let b = (bits >> (slot * (n - 1 - k))) & mask(f.width());
                    short(&f.decode(b))
                })
                .collect();
            format!("[{}]", lanes.join(", "))
        }
        (_, Some(f)) => short(&f.decode(bits & mask(f.width()))),
        _ => bits.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// The machine.

/// What a skipped write did to a register with a `--set` value.
enum Supplied {
    /// No `--set` value: the register is unknown.
    No,
    /// It still held its `--set` value, and keeps it.
    Kept,
    /// A modelled instruction had replaced it: it takes the `--set` value again.
    Again,
}

/// One register slot: a scalar register or one element of a vector register.
#[derive(Clone, Debug)]
struct Slot {
    key: String,
    ty: PtxType,
}

struct Machine<'a> {
    /// Declarations in scope, innermost last.
    scopes: Vec<&'a [RegDecl]>,
    values: HashMap<String, (u64, PtxType)>,
    /// Registers a skipped instruction wrote (never also in `values`).
    unknown: HashMap<String, Unknown>,
    /// Registers that still hold their `--set` value.
    user: HashSet<String>,
    /// The `--set` values: what every skipped instruction writes to their registers.
    supplied: HashMap<String, (u64, PtxType)>,
    /// For a register whose `--set` value a modelled instruction replaced: that instruction
    /// (`` `mov.u32 %r1, 0x0` at 7:5 ``).
    replaced: HashMap<String, String>,
    written: Vec<String>,
    notes: Vec<Diagnostic>,
    executed: usize,
}

const COMPONENTS: [&str; 4] = ["x", "y", "z", "w"];

/// Finds the declaration of `name` in `decls`.
fn declared_in<'d>(decls: &'d [RegDecl], name: &str) -> Option<&'d RegDecl> {
    decls
        .iter()
        .rev()
        .find(|d| d.names.iter().any(|n| n.declares(name)))
}

/// Resolves a register reference (`%r1`, `%v.x`) against declarations; `None` if no `.reg`
/// declares it.
fn resolve<'d>(
    scopes: impl Iterator<Item = &'d [RegDecl]>,
    r: &RegRef,
) -> Option<Result<Slot, String>> {
    let mut found = None;
    for decls in scopes {
        if let Some(d) = declared_in(decls, &r.name) {
            found = Some(d);
        }
    }
    let d = found?;
    Some(match (d.lanes, r.component) {
        (1, None) => Ok(Slot {
            key: r.name.clone(),
            ty: d.ty,
        }),
        (1, Some(_)) => Err(format!("{} is not a vector register", r.name)),
        (n, Some(c)) if c < n => Ok(Slot {
            key: format!("{}.{}", r.name, COMPONENTS[c as usize]),
            ty: d.ty,
        }),
        (n, Some(c)) => Err(format!(
            "{} has {n} elements: .{} is out of range",
            r.name,
            COMPONENTS[(c as usize).min(3)]
        )),
        (n, None) => Err(format!(
            "{} is a .v{n} register: use its elements ({}.x …)",
            r.name, r.name
        )),
    })
}

fn stop(rule: &'static str, message: impl Into<String>, span: Span) -> RunError {
    RunError::Stopped(Diagnostic::error(rule, message, span))
}

/// The bits of an immediate as an operand of type `ty` (see the module documentation).
fn immediate_bits(imm: Immediate, ty: PtxType, span: Span) -> Result<u64, RunError> {
    let width = ty.bits();
    let name = ty.name();
    if is_float_scalar(ty) {
        let Some(f) = ty.lane_format() else {
            return Err(stop(
                "ptx.run-immediate",
                format!("cannot use an immediate as .{name}"),
                span,
            ));
        };
        let v = match imm {
            Immediate::Int(i) => Value::from_i128(i),
            Immediate::F32(b) => format::F32.decode(u64::from(b)),
            Immediate::F64(b) => format::F64.decode(b),
        };
        return Ok(round_into(&v, &f).0);
    }
    let bad = |what: String| stop("ptx.run-immediate", what, span);
    match imm {
        Immediate::Int(i) => int_bits(i, width).ok_or_else(|| {
            bad(format!(
                "the immediate {i} does not fit a {width}-bit .{name} operand"
            ))
        }),
        Immediate::F32(b) if width == 32 => Ok(u64::from(b)),
        Immediate::F64(b) if width == 64 => Ok(b),
        Immediate::F32(_) | Immediate::F64(_) => Err(bad(format!(
            "a floating-point immediate does not fit a {width}-bit .{name} operand"
        ))),
    }
}

impl<'a> Machine<'a> {
    fn slot(&self, r: &RegRef, span: Span) -> Result<Option<Slot>, RunError> {
        match resolve(self.scopes.iter().copied(), r) {
            None => Ok(None),
            Some(Ok(s)) => Ok(Some(s)),
            Some(Err(m)) => Err(stop("ptx.run-register", m, span)),
        }
    }

    /// Reads a declared register; an error if it has no value or an unknown one.
    fn read_slot(&self, s: &Slot, span: Span) -> Result<u64, RunError> {
        self.fetch(s, span)?.map_err(|u| {
            let mut d = u.read_error("ptx.run-unknown", &s.key, span);
            if let Some(by) = self.replaced.get(&s.key) {
                d.message.push_str(&format!(
                    " (the --set {} value was replaced by {by})",
                    s.key
                ));
            }
            RunError::Stopped(d)
        })
    }

    /// Reads a declared register that may be unknown (what a `mov` copies); an error if it
    /// has no value at all.
    fn fetch(&self, s: &Slot, span: Span) -> Result<Result<u64, Unknown>, RunError> {
        if let Some(u) = self.unknown.get(&s.key) {
            return Ok(Err(u.clone()));
        }
        self.values.get(&s.key).map(|v| Ok(v.0)).ok_or_else(|| {
            stop(
                "ptx.run-unset",
                format!(
                    "{} is read but was never written nor set (give it a value with --set {}=…)",
                    s.key, s.key
                ),
                span,
            )
        })
    }

    /// A modelled instruction (`by`, its text, at `span`) is about to write `s`: when `s`
    /// holds its `--set` value, a note says that the value is replaced, and by what.
    fn replacing(&mut self, s: &Slot, by: &str, span: Span) {
        if !self.user.remove(&s.key) {
            return;
        }
        let what = format!("`{by}` at {}:{}", span.line, span.col);
        self.notes.push(Diagnostic::warning(
            "ptx.run-set-replaced",
            format!(
                "{} is written by {what}, which replaces its --set value; a skipped instruction that writes {} later gives it the --set value again",
                s.key, s.key
            ),
            span,
        ));
        self.replaced.insert(s.key.clone(), what);
    }

    fn write(&mut self, s: &Slot, bits: u64, written_as: PtxType) {
        let bits = bits & mask(s.ty.bits());
        self.unknown.remove(&s.key);
        self.user.remove(&s.key);
        if self
            .values
            .insert(s.key.clone(), (bits, written_as))
            .is_none()
            || !self.written.contains(&s.key)
        {
            self.written.push(s.key.clone());
        }
    }

    /// A write by a skipped instruction: the register becomes unknown, unless it has a
    /// `--set` value, which stands for what the instruction writes.
    fn write_unknown(&mut self, s: &Slot, u: Unknown) -> Supplied {
        if self.user.contains(&s.key) {
            return Supplied::Kept;
        }
        if let Some(&v) = self.supplied.get(&s.key) {
            self.unknown.remove(&s.key);
            self.values.insert(s.key.clone(), v);
            self.user.insert(s.key.clone());
            self.replaced.remove(&s.key);
            return Supplied::Again;
        }
        self.set_unknown(s, u);
        Supplied::No
    }

    /// `s` becomes unknown (a skipped write, or a `mov` of an unknown value).
    fn set_unknown(&mut self, s: &Slot, u: Unknown) {
        self.values.remove(&s.key);
        self.unknown.insert(s.key.clone(), u);
        if !self.written.contains(&s.key) {
            self.written.push(s.key.clone());
        }
    }

    /// Skips an instruction: a note, and what it writes becomes unknown.
    fn skip(&mut self, head: &str, text: &str, span: Span, dests: &[RegRef]) {
        let mut unknown = Vec::new();
        let mut kept = Vec::new();
        let mut slots = Vec::new();
        for r in dests {
            match self.slot(r, span) {
                Ok(Some(s)) => slots.push(s),
                // A whole vector register (`ld.v2.f32 %v, […]`): each of its elements.
                Err(_) if r.component.is_none() => {
                    for c in 0..COMPONENTS.len() as u8 {
                        let e = RegRef {
                            name: r.name.clone(),
                            component: Some(c),
                        };
                        match self.slot(&e, span) {
                            Ok(Some(s)) => slots.push(s),
                            _ => break,
                        }
                    }
                }
                // Names no `.reg` declares (special registers, symbols) are not modelled
                // state.
                _ => {}
            }
        }
        let mut again = Vec::new();
        for s in slots {
            let u = Unknown::new(text, span, s.key.clone(), Supply::Set);
            match self.write_unknown(&s, u) {
                Supplied::Kept => kept.push(s.key),
                Supplied::Again => again.push(s.key),
                Supplied::No => unknown.push(s.key),
            }
        }
        self.notes.push(skipped_note(
            "ptx.run-skipped",
            head,
            &unknown,
            &kept,
            &again,
            Supply::Set,
            span,
        ));
    }

    /// Whether a skipped instruction's guard is known to be false (it then writes nothing).
    fn guard_known_false(&self, g: &Option<(bool, String)>) -> bool {
        let Some((negated, reg)) = g else {
            return false;
        };
        let r = RegRef {
            name: reg.clone(),
            component: None,
        };
        match self.slot(&r, Span::default()) {
            Ok(Some(s)) if !self.unknown.contains_key(&s.key) => self
                .values
                .get(&s.key)
                .is_some_and(|v| (v.0 & 1 == 1) == *negated),
            _ => false,
        }
    }

    fn note(&mut self, rule: &'static str, message: String, span: Span) {
        self.notes.push(Diagnostic::warning(rule, message, span));
    }

    /// Whether a guard lets the statement run.
    fn guard(&mut self, p: &Option<Predicate>, span: Span) -> Result<bool, RunError> {
        let Some(p) = p else { return Ok(true) };
        let r = RegRef {
            name: p.reg.clone(),
            component: None,
        };
        let Some(s) = self.slot(&r, p.span)? else {
            return Err(stop(
                "ptx.run-register",
                format!("the guard {} is not declared by .reg", p.reg),
                p.span,
            ));
        };
        let v = self.read_slot(&s, p.span)? & 1 == 1;
        let runs = v != p.negated;
        if !runs {
            self.note(
                "ptx.run-guard",
                format!(
                    "not executed: the guard {}{} is false",
                    if p.negated { "@!" } else { "@" },
                    p.reg
                ),
                span,
            );
        }
        Ok(runs)
    }

    fn block(&mut self, b: &'a Block) -> Result<(), RunError> {
        self.scopes.push(&b.regs);
        for s in &b.statements {
            match s {
                Statement::Label { name, span } => self.note(
                    "ptx.run-skipped",
                    format!("label {name} ignored: execution is straight-line"),
                    *span,
                ),
                Statement::Cvt(i) => self.cvt(i)?,
                Statement::Mov(m) => self.mov(m)?,
                Statement::Block(inner) => self.block(inner)?,
                Statement::Other { opcode, span, text } => {
                    let base = opcode.split('.').next().unwrap_or("");
                    let (guard, dests) = if opcode.starts_with('.') {
                        (None, Vec::new())
                    } else {
                        written_by(text)
                    };
                    let dests = if self.guard_known_false(&guard) {
                        Vec::new()
                    } else {
                        dests
                    };
                    match base {
                        "ret" | "exit" => {}
                        "bra" | "brx" | "call" => self.skip(
                            &format!("{opcode} not followed: execution is straight-line"),
                            text,
                            *span,
                            &dests,
                        ),
                        _ => self.skip(
                            &format!("{opcode} not executed: only mov, cvt and cvt.pack run"),
                            text,
                            *span,
                            &dests,
                        ),
                    }
                }
            }
        }
        self.scopes.pop();
        Ok(())
    }

    fn mov(&mut self, m: &Mov) -> Result<(), RunError> {
        if !self.guard(&m.predicate, m.span)? {
            return Ok(());
        }
        let ty = m.ty;
        let width = ty.bits();
        if !modelled(ty) {
            self.note(
                "ptx.run-skipped",
                format!("mov.{} not executed: wider than 64 bits", ty.name()),
                m.span,
            );
            return Ok(());
        }
        let text = format!(
            "mov.{} {}, {}",
            ty.name(),
            operand_text(&m.dst),
            operand_text(&m.src)
        );
        // The source value (`Err`: an unknown one, copied along).
        let mut value: Result<u64, Unknown> = Ok(0);
        match &m.src.kind {
            OperandKind::Reg(r) => match self.slot(r, m.src.span)? {
                Some(s) => value = self.fetch(&s, m.src.span)?.map(|v| v & mask(width)),
                None => {
                    let dests = operand_regs(&m.dst);
                    self.skip(
                        &format!(
                            "mov not executed: {} is not a register declared by .reg (a special register or a symbol)",
                            r.name
                        ),
                        &text,
                        m.span,
                        &dests,
                    );
                    return Ok(());
                }
            },
            OperandKind::Imm(imm) => value = Ok(immediate_bits(*imm, ty, m.src.span)?),
            OperandKind::Vector(elems) => {
                let w = width / (elems.len().max(1) as u32);
                let mut v = 0u64;
                for (i, e) in elems.iter().enumerate() {
                    let bits = match &e.kind {
                        OperandKind::Reg(r) => match self.slot(r, e.span)? {
                            Some(s) => match self.fetch(&s, e.span)? {
                                Ok(b) => b,
                                Err(u) => {
                                    if value.is_ok() {
                                        value = Err(u);
                                    }
                                    0
                                }
                            },
                            None => {
                                return Err(stop(
                                    "ptx.run-register",
                                    format!("{} is not declared by .reg", r.name),
                                    e.span,
                                ))
                            }
                        },
                        OperandKind::Imm(Immediate::Int(n)) => {
                            int_bits(*n, w).ok_or_else(|| {
                                stop(
                                    "ptx.run-immediate",
                                    format!("the immediate {n} does not fit {w} bits"),
                                    e.span,
                                )
                            })?
                        }
                        _ => {
                            return Err(stop(
                                "ptx.run-operand",
                                "a packing mov takes registers or integers",
                                e.span,
                            ))
                        }
                    };
                    v |= (bits & mask(w)) << (w * i as u32);
                }
                value = value.map(|_| v);
            }
            OperandKind::Sink => {
                return Err(stop(
                    "ptx.run-operand",
                    "the sink _ cannot be a source",
                    m.src.span,
                ))
            }
        }
        let value = match value {
            Ok(v) => v,
            Err(u) => {
                // A copy of an unknown value is unknown, traced to the same instruction.
                for r in operand_regs(&m.dst) {
                    let Some(s) = self.slot(&r, m.dst.span)? else {
                        return Err(stop(
                            "ptx.run-register",
                            format!("{} is not declared by .reg", r.name),
                            m.dst.span,
                        ));
                    };
                    self.replacing(&s, &text, m.span);
                    self.set_unknown(&s, u.clone());
                }
                self.executed += 1;
                return Ok(());
            }
        };
        // The destination(s).
        match &m.dst.kind {
            OperandKind::Reg(r) => {
                let Some(s) = self.slot(r, m.dst.span)? else {
                    return Err(stop(
                        "ptx.run-register",
                        format!("{} is not declared by .reg", r.name),
                        m.dst.span,
                    ));
                };
                let bits = extend_to_register(ty, value, s.ty.bits());
                self.replacing(&s, &text, m.span);
                self.write(&s, bits, if s.ty.bits() == width { ty } else { s.ty });
            }
            OperandKind::Vector(elems) => {
                let w = width / (elems.len().max(1) as u32);
                for (i, e) in elems.iter().enumerate() {
                    match &e.kind {
                        OperandKind::Sink => {}
                        OperandKind::Reg(r) => {
                            let Some(s) = self.slot(r, e.span)? else {
                                return Err(stop(
                                    "ptx.run-register",
                                    format!("{} is not declared by .reg", r.name),
                                    e.span,
                                ));
                            };
                            let part = (value >> (w * i as u32)) & mask(w);
                            self.replacing(&s, &text, m.span);
                            self.write(&s, part, s.ty);
                        }
                        _ => {
                            return Err(stop(
                                "ptx.run-operand",
                                "an unpacking mov writes registers or _",
                                e.span,
                            ))
                        }
                    }
                }
            }
            OperandKind::Sink => {}
            OperandKind::Imm(_) => {
                return Err(stop(
                    "ptx.run-operand",
                    "a mov destination must be a register",
                    m.dst.span,
                ))
            }
        }
        self.executed += 1;
        Ok(())
    }

    fn cvt(&mut self, i: &Instruction) -> Result<(), RunError> {
        if !self.guard(&i.predicate, i.span)? {
            return Ok(());
        }
        let form = &i.form;
        let Some(ops) = &i.operands else {
            return Err(stop(
                "ptx.run-operand",
                "a cvt without operands cannot run",
                i.span,
            ));
        };
        let Some((dst, srcs)) = ops.split_first() else {
            return Err(stop("ptx.run-operand", "a cvt needs operands", i.span));
        };
        let flat: Vec<&Operand> = srcs
            .iter()
            .flat_map(|o| match &o.kind {
                OperandKind::Vector(v) => v.iter().collect::<Vec<_>>(),
                _ => vec![o],
            })
            .collect();
        let roles = operand_roles(form);
        if takes_optional_scale(form) && flat.len() == roles.len() + 1 {
            return Err(stop(
                "ptx.run-operand",
                format!(
                    "ptxas accepts {} with a third, 8-bit operand and no .scaled::n1::ue8m0, \
                     but what the hardware does with it is not documented; \
                     write .scaled::n1::ue8m0 to scale by it, or drop it",
                    form.spelling()
                ),
                i.span,
            ));
        }
        if roles.len() != flat.len() {
            return Err(stop(
                "ptx.run-operand",
                format!(
                    "{} takes {} source operand(s), found {}",
                    form.spelling(),
                    roles.len(),
                    flat.len()
                ),
                i.span,
            ));
        }
        let mut values = Vec::with_capacity(flat.len());
        for (&role, op) in roles.iter().zip(&flat) {
            let bits = role_bits(form, role);
            let v = match &op.kind {
                OperandKind::Reg(r) => match self.slot(r, op.span)? {
                    Some(s) => self.read_slot(&s, op.span)? & mask(bits),
                    None => {
                        return Err(stop(
                            "ptx.run-register",
                            format!("{} is not declared by .reg", r.name),
                            op.span,
                        ))
                    }
                },
                OperandKind::Imm(imm) => {
                    let ty = match role {
                        Role::A | Role::B | Role::E | Role::F => form.atype,
                        _ => match bits {
                            8 => PtxType::B8,
                            16 => PtxType::B16,
                            64 => PtxType::B64,
                            _ => PtxType::B32,
                        },
                    };
                    immediate_bits(*imm, ty, op.span)? & mask(bits)
                }
                _ => {
                    return Err(stop(
                        "ptx.run-operand",
                        format!("operand {} must be a register or an immediate", role.name()),
                        op.span,
                    ))
                }
            };
            values.push(v);
        }
        let out =
            evaluate(form, &values).map_err(|e| stop("ptx.run-eval", e.to_string(), i.span))?;
        match &dst.kind {
            OperandKind::Sink => {}
            OperandKind::Reg(r) => {
                let Some(s) = self.slot(r, dst.span)? else {
                    return Err(stop(
                        "ptx.run-register",
                        format!("{} is not declared by .reg", r.name),
                        dst.span,
                    ));
                };
                let reg_bits = s.ty.bits();
                let bits = if form.pack {
                    out.bits & mask(out.width)
                } else {
                    extend_to_register(form.dtype, out.bits, reg_bits)
                };
                let written_as = if form.pack { PtxType::B32 } else { form.dtype };
                let by = format!(
                    "{} {}",
                    form.spelling(),
                    ops.iter().map(operand_text).collect::<Vec<_>>().join(", ")
                );
                self.replacing(&s, &by, i.span);
                self.write(&s, bits, written_as);
            }
            _ => {
                return Err(stop(
                    "ptx.run-operand",
                    "the destination must be a register",
                    dst.span,
                ))
            }
        }
        self.executed += 1;
        Ok(())
    }
}

/// The registers an operand names (a register, or the registers of a vector), in order.
fn operand_regs(o: &Operand) -> Vec<RegRef> {
    match &o.kind {
        OperandKind::Reg(r) => vec![r.clone()],
        OperandKind::Vector(v) => v.iter().flat_map(operand_regs).collect(),
        _ => Vec::new(),
    }
}

fn operand_text(o: &Operand) -> String {
    let reg = |r: &RegRef| match r.component {
        Some(c) => format!("{}.{}", r.name, COMPONENTS[(c as usize).min(3)]),
        None => r.name.clone(),
    };
    match &o.kind {
        OperandKind::Reg(r) => reg(r),
        OperandKind::Vector(v) => format!(
            "{{{}}}",
            v.iter().map(operand_text).collect::<Vec<_>>().join(", ")
        ),
        OperandKind::Sink => "_".to_string(),
        OperandKind::Imm(Immediate::Int(n)) => n.to_string(),
        OperandKind::Imm(Immediate::F32(b)) => format!("0f{b:08X}"),
        OperandKind::Imm(Immediate::F64(b)) => format!("0d{b:016X}"),
    }
}

/// Opcodes (before the first `.`) whose first operand is not a register they write: stores
/// and reductions to memory, branches, barriers and fences, and the like.
const WRITES_NOTHING: [&str; 22] = [
    "st",
    "red",
    "bra",
    "brx",
    "bar",
    "barrier",
    "nanosleep",
    "membar",
    "fence",
    "prefetch",
    "prefetchu",
    "trap",
    "brkpt",
    "pmevent",
    "exit",
    "ret",
    "setmaxnreg",
    "griddepcontrol",
    "stmatrix",
    "sust",
    "sured",
    "cp",
];

/// What a skipped instruction's text says it writes: its guard (negated, predicate), if
/// any, and the registers of its destination — the first operand after the opcode: `%r`,
/// `%v.x`, `{%a, %b}`, `%p|%q`, or the return list `(%r)` of a `call`. A first operand in
/// memory (`[addr]`), a label or an immediate writes no register.
fn written_by(text: &str) -> (Option<(bool, String)>, Vec<RegRef>) {
    let toks = lex(text).tokens;
    let word = |i: usize| toks.get(i).map(|t| t.text(text)).unwrap_or("");
    let punct = |i: usize, c: char| toks.get(i).is_some_and(|t| t.is_punct(text, c));
    let mut i = 0;
    let mut guard = None;
    if punct(0, '@') {
        let negated = punct(1, '!');
        i = if negated { 2 } else { 1 };
        guard = Some((negated, word(i).to_string()));
        i += 1;
    }
    let opcode = word(i);
    let root = opcode.split('.').next().unwrap_or("");
    // `bar.red` reduces into its first operand.
    let is_bar_red = (root == "bar" || root == "barrier") && opcode.contains(".red");
    if WRITES_NOTHING.contains(&root) && !is_bar_red {
        return (guard, Vec::new());
    }
    i += 1;
    let reg = |t: &str| -> Option<RegRef> {
        if !t.starts_with('%') {
            return None;
        }
        Some(match t.rsplit_once('.') {
            Some((n, c)) if COMPONENTS.contains(&c) => RegRef {
                name: n.to_string(),
                component: COMPONENTS.iter().position(|x| *x == c).map(|k| k as u8),
            },
            _ => RegRef {
                name: t.to_string(),
                component: None,
            },
        })
    };
    let mut out = Vec::new();
    let close = if punct(i, '{') {
        Some('}')
    } else if punct(i, '(') {
        Some(')')
    } else {
        None
    };
    match close {
        Some(c) => {
            i += 1;
            while i < toks.len() && !punct(i, c) {
                if toks[i].kind == TokenKind::Word {
                    out.extend(reg(word(i)));
                }
                i += 1;
            }
        }
        None => {
            if toks.get(i).is_some_and(|t| t.kind == TokenKind::Word) {
                out.extend(reg(word(i)));
                // `setp … %p|%q`: a second predicate.
                if punct(i + 1, '|') {
                    out.extend(reg(word(i + 2)));
                }
            }
        }
    }
    (guard, out)
}

/// Every `.reg` declaration of a block and its nested blocks.
fn all_decls<'a>(b: &'a Block, out: &mut Vec<&'a RegDecl>) {
    out.extend(b.regs.iter());
    for s in &b.statements {
        if let Statement::Block(inner) = s {
            all_decls(inner, out);
        }
    }
}

fn choose_entry<'a>(file: &'a PtxFile, entry: Option<&str>) -> Result<&'a Function, RunError> {
    let bodies: Vec<&Function> = file.functions.iter().filter(|f| f.body.is_some()).collect();
    let entries: Vec<&Function> = bodies
        .iter()
        .copied()
        .filter(|f| f.kind == FunctionKind::Entry)
        .collect();
    let names = |fs: &[&Function]| {
        fs.iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match entry {
        Some(n) => bodies.iter().copied().find(|f| f.name == n).ok_or_else(|| {
            RunError::Input(format!(
                "no function named {n:?} with a body; the file has: {}",
                if bodies.is_empty() {
                    "none".to_string()
                } else {
                    names(&bodies)
                }
            ))
        }),
        None => match entries.as_slice() {
            [one] => Ok(one),
            [] => Err(RunError::Input(
                "the file has no .entry with a body (name a .func with --entry)".to_string(),
            )),
            several => Err(RunError::Input(format!(
                "the file has several entries ({}): choose one with --entry",
                names(several)
            ))),
        },
    }
}

/// Runs one entry of a parsed PTX file from the given initial values (see the module
/// documentation for the model).
///
/// # Errors
/// [`RunError::Invalid`] with every error diagnostic when the file does not pass the reader
/// and [`check_file`]; [`RunError::Input`] for an unknown entry or register, or a value that
/// does not match its register's type; [`RunError::Stopped`] when a statement cannot run
/// (an unset register is read, an immediate does not fit). Never panics.
pub fn run(file: &PtxFile, inputs: &[RunInput], opts: &RunOptions) -> Result<RunResult, RunError> {
    let mut errors: Vec<Diagnostic> = file
        .diagnostics
        .iter()
        .chain(check_file(file, opts.target, opts.version).iter())
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect();
    if !errors.is_empty() {
        errors.sort_by_key(|d| (d.span.line, d.span.col));
        return Err(RunError::Invalid(errors));
    }
    let f = choose_entry(file, opts.entry.as_deref())?;
    let Some(body) = &f.body else {
        return Err(RunError::Input(format!("{} has no body", f.name)));
    };
    let mut decls = Vec::new();
    all_decls(body, &mut decls);
    let mut m = Machine {
        scopes: Vec::new(),
        values: HashMap::new(),
        unknown: HashMap::new(),
        user: HashSet::new(),
        supplied: HashMap::new(),
        replaced: HashMap::new(),
        written: Vec::new(),
        notes: Vec::new(),
        executed: 0,
    };
    for input in inputs {
        let (name, component) = match input.name.split_once('.') {
            Some((n, c)) => match COMPONENTS.iter().position(|x| *x == c) {
                Some(k) => (n.to_string(), Some(k as u8)),
                None => {
                    return Err(RunError::Input(format!(
                        "{}: .{c} is not an element (.x .y .z .w)",
                        input.name
                    )))
                }
            },
            None => (input.name.clone(), None),
        };
        let r = RegRef { name, component };
        let decl_lists: Vec<&[RegDecl]> = decls.iter().map(|d| std::slice::from_ref(*d)).collect();
        let slot = match resolve(decl_lists.into_iter(), &r) {
            None => {
                return Err(RunError::Input(format!(
                    "{} is not declared by .reg in {}",
                    input.name, f.name
                )))
            }
            Some(Err(e)) => return Err(RunError::Input(e)),
            Some(Ok(s)) => s,
        };
        let (bits, note) = parse_value_text(slot.ty, &input.value)
            .map_err(|e| RunError::Input(format!("{}: {e}", input.name)))?;
        if let Some(n) = note {
            m.note(
                "ptx.run-inexact",
                format!("{}: {n}", input.name),
                Span::default(),
            );
        }
        m.values.insert(slot.key.clone(), (bits, slot.ty));
        m.supplied.insert(slot.key.clone(), (bits, slot.ty));
        m.user.insert(slot.key.clone());
    }
    m.block(body)?;
    let written = m
        .written
        .iter()
        .filter_map(|k| {
            let unknown = m.unknown.get(k).cloned();
            let (bits, written_as) = match &unknown {
                Some(_) => (0, PtxType::B8),
                None => *m.values.get(k)?,
            };
            let reg_type = decls
                .iter()
                .find(|d| {
                    let base = k.split('.').next().unwrap_or(k);
                    d.names.iter().any(|n| n.declares(base))
                })
                .map_or(written_as, |d| d.ty);
            Some(RegValue {
                name: k.clone(),
                reg_type,
                written_as: if unknown.is_some() {
                    reg_type
                } else {
                    written_as
                },
                bits,
                unknown,
            })
        })
        .collect();
    Ok(RunResult {
        entry: f.name.clone(),
        written,
        notes: m.notes,
        executed: m.executed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::parse::parse_file;

    fn kernel(body: &str) -> String {
        format!(
            ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{{\n{body}}}\n"
        )
    }

    fn go(body: &str, sets: &[(&str, &str)]) -> Result<RunResult, RunError> {
        let file = parse_file(&kernel(body));
        let inputs: Vec<RunInput> = sets
            .iter()
            .map(|(n, v)| RunInput {
                name: n.to_string(),
                value: v.to_string(),
            })
            .collect();
        run(&file, &inputs, &RunOptions::default())
    }

    #[test]
    fn immediates_and_fp8() {
        let r = go(
            "    .reg .f32 %f<3>;\n    .reg .b16 %h;\n    mov.f32 %f1, 0f3F800000;\n    mov.f32 %f2, 448.5;\n    cvt.rn.satfinite.e4m3x2.f32 %h, %f1, %f2;\n",
            &[],
        )
        .unwrap();
        assert_eq!(r.get("%f1"), Some(0x3f80_0000));
        assert_eq!(r.get("%f2"), Some(0x43e0_4000));
        // 1.0 -> 0x38; 448.5 saturates to 448 = 0x7e.
        assert_eq!(r.get("%h"), Some(0x387e));
        assert_eq!(r.written[2].describe(), "[1, 448]");
        assert_eq!(r.executed, 3);
    }

    #[test]
    fn wide_registers_chop_and_extend() {
        // A b32 source of an f16 cvt is chopped to 16 bits; an s16 result sign-extends.
        let r = go(
            "    .reg .b32 %r<3>;\n    .reg .f32 %f;\n    cvt.f32.f16 %f, %r1;\n    cvt.rzi.s16.f32 %r2, %f;\n",
            &[("%r1", "0xdead_c000")],
        )
        .unwrap();
        assert_eq!(r.get("%f"), Some(0xc000_0000)); // -2.0
        assert_eq!(r.get("%r2"), Some(0xffff_fffe));
    }

    /// The ue5m3x2 form ptxas accepts with a stray 8-bit operand is refused with a message
    /// that says why, not evaluated as something it may not be.
    #[test]
    fn the_optional_ue5m3_scale_operand_is_refused_with_its_reason() {
        let src = ".version 9.4\n.target sm_107a\n.address_size 64\n.visible .entry k()\n{\n    \
                   .reg .b32 %r;\n    .reg .b16 %h;\n    .reg .b8 %s;\n    \
                   cvt.rn.ue5m3x2.f16x2 %h, %r, %s;\n}\n";
        let e = run(
            &parse_file(src),
            &[
                RunInput {
                    name: "%r".into(),
                    value: "0x3c003c00".into(),
                },
                RunInput {
                    name: "%s".into(),
                    value: "127".into(),
                },
            ],
            &RunOptions::default(),
        )
        .unwrap_err();
        let RunError::Stopped(d) = e else {
            panic!("{e:?}")
        };
        assert_eq!(d.rule, "ptx.run-operand");
        assert!(d.message.contains("not documented"), "{}", d.message);
    }

    #[test]
    fn unset_reads_are_errors_with_positions() {
        let e = go(
            "    .reg .f32 %f<2>;\n    .reg .b16 %h;\n    cvt.rn.f16.f32 %h, %f1;\n",
            &[],
        )
        .unwrap_err();
        let RunError::Stopped(d) = e else {
            panic!("{e:?}")
        };
        assert_eq!((d.rule, d.span.line, d.span.col), ("ptx.run-unset", 8, 24));
    }

    #[test]
    fn guards_pack_and_notes() {
        let body = "    .reg .pred %p;\n    .reg .b32 %r<4>;\n    .reg .b16 %h<2>;\n    \
                    add.s32 %r0, %r1, 1;\n    @%p mov.b32 %r1, 7;\n    @!%p mov.b32 %r2, 9;\n    \
                    mov.b16 %h0, 0x1234;\n    mov.b16 %h1, 0xabcd;\n    mov.b32 %r3, {%h0, %h1};\n";
        let r = go(body, &[("%p", "1")]).unwrap();
        assert_eq!(r.get("%r1"), Some(7));
        assert_eq!(r.get("%r2"), None);
        assert_eq!(r.get("%r3"), Some(0xabcd_1234));
        assert!(r.notes.iter().any(|n| n.rule == "ptx.run-guard"));
        assert!(r
            .notes
            .iter()
            .any(|n| n.rule == "ptx.run-skipped" && n.message.starts_with("add.s32")));
        // Without a value for %p the guard is an error.
        assert!(matches!(go(body, &[]), Err(RunError::Stopped(_))));
    }

    #[test]
    fn cvt_pack_and_inputs() {
        let r = go(
            "    .reg .s32 %s<3>;\n    .reg .b32 %r;\n    cvt.pack.sat.u8.s32.b32 %r, %s1, %s2, 0;\n",
            &[("%s1", "300"), ("%s2", "-5")],
        )
        .unwrap();
        assert_eq!(r.get("%r"), Some(0xff00));
        assert!(matches!(
            go("    .reg .f32 %f;\n", &[("%g", "1")]),
            Err(RunError::Input(_))
        ));
        assert!(matches!(
            go("    .reg .u8 %u;\n", &[("%u", "256")]),
            Err(RunError::Input(_))
        ));
    }

    #[test]
    fn invalid_files_do_not_run() {
        let e = go(
            "    .reg .f32 %f;\n    .reg .b16 %h;\n    cvt.f16.f32 %h, %f;\n",
            &[],
        )
        .unwrap_err();
        assert!(matches!(e, RunError::Invalid(d) if d[0].rule == "ptx.rounding-required"));
    }

    #[test]
    fn destinations_of_skipped_instructions() {
        let names = |t: &str| -> Vec<String> {
            written_by(t)
                .1
                .iter()
                .map(|r| match r.component {
                    Some(c) => format!("{}.{}", r.name, COMPONENTS[c as usize]),
                    None => r.name.clone(),
                })
                .collect()
        };
        assert_eq!(names("ld.global.f32 %f1, [%rd1];"), ["%f1"]);
        assert_eq!(
            names("ld.global.v4.f32 {%f1, %f2, _, %v.w}, [%rd3];"),
            ["%f1", "%f2", "%v.w"]
        );
        assert_eq!(names("setp.lt.f32 %p|%q, %f1, %f2;"), ["%p", "%q"]);
        assert_eq!(names("call.uni (%r1), f, (%r2);"), ["%r1"]);
        assert_eq!(names("bar.red.popc.u32 %r1, 0, %p;"), ["%r1"]);
        assert!(names("st.global.f32 [%rd1], %f1;").is_empty());
        assert!(names("brx.idx %r1, tbl;").is_empty());
        assert!(names("bar.sync %r1;").is_empty());
        assert!(names("red.global.add.f32 [%rd1], %f1;").is_empty());
        assert!(names("call f, (%r2);").is_empty());
        let (g, d) = written_by("@!%p add.s32 %r1, %r2, 1;");
        assert_eq!(g, Some((true, "%p".to_string())));
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn skipped_writes_are_unknown() {
        let body = "    .reg .f32 %f<4>;\n    .reg .b16 %h;\n    .reg .b64 %rd;\n    .reg .pred %p;\n    \
                    ld.param.u64 %rd, [p];\n    ld.global.f32 %f1, [%rd];\n    mov.f32 %f2, %f1;\n    \
                    cvt.rn.f16.f32 %h, %f2;\n";
        let e = go(body, &[]).unwrap_err();
        let RunError::Stopped(d) = e else {
            panic!("{e:?}")
        };
        assert_eq!(
            (d.rule, d.span.line, d.span.col),
            ("ptx.run-unknown", 13, 24)
        );
        assert!(
            d.message.contains("(from %f1)")
                && d.message.contains("`ld.global.f32 %f1, [%rd]` at 11:5")
                && d.message.ends_with("--set %f1=…"),
            "{}",
            d.message
        );
        // With --set the load keeps the value; %rd stays unknown without error.
        let r = go(body, &[("%f1", "1.5")]).unwrap();
        assert_eq!(r.get("%h"), Some(0x3e00));
        assert_eq!(r.get("%f1"), None);
        let u = r.unknown("%rd").unwrap();
        assert_eq!((u.span.line, u.span.col), (10, 5));
        let rd = r.written.iter().find(|v| v.name == "%rd").unwrap();
        assert_eq!(rd.describe(), "unknown (ld.param.u64 at 10:5)");
        assert!(r.notes.iter().any(|n| n.message
            == "ld.global.f32 not executed: only mov, cvt and cvt.pack run; %f1 keeps the --set value"));
        // --set on %f2, which a mov writes later: the mov's (unknown) copy replaces it.
        assert!(go(body, &[("%f2", "1")]).is_err());
        // A guard known to be false: nothing is written.
        let g = "    .reg .f32 %f<2>;\n    .reg .b16 %h;\n    .reg .pred %p;\n    \
                 mov.f32 %f1, 2.0;\n    @%p ld.global.f32 %f1, [a];\n    cvt.rn.f16.f32 %h, %f1;\n";
        assert_eq!(go(g, &[("%p", "0")]).unwrap().get("%h"), Some(0x4000));
        assert!(go(g, &[("%p", "1")]).is_err());
        // A mov from a special register leaves its destination unknown.
        let t = "    .reg .b32 %r<2>;\n    .reg .f32 %f;\n    mov.u32 %r1, %tid.x;\n    \
                 cvt.rn.f32.u32 %f, %r1;\n";
        let RunError::Stopped(d) = go(t, &[]).unwrap_err() else {
            panic!()
        };
        assert!(
            d.message.contains("`mov.u32 %r1, %tid.x` at 8:5"),
            "{}",
            d.message
        );
    }

    #[test]
    fn parse_value_forms() {
        assert_eq!(parse_value(PtxType::Pred, "true").unwrap().0, 1);
        assert_eq!(parse_value(PtxType::E4m3x2, "1,288").unwrap().0, 0x3879);
        assert_eq!(parse_value(PtxType::S8, "-128").unwrap().0, 0x80);
        assert_eq!(
            parse_value(PtxType::F64, "0d3FF0000000000000").unwrap().0,
            0x3ff0 << 48
        );
        assert!(parse_value(PtxType::B16, "0f3F800000").is_err());
        assert!(parse_value(PtxType::F16x2, "1.0").is_err());
    }
}
