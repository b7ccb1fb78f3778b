//! The executor: runs a kernel's `mov`s over whole regions.
//!
//! Variables live in little-endian byte storage, one buffer per declared variable; an alias
//! is a view into its root's bytes, so a `uw` alias of a `bf` variable sees the same bits.
//! Each `mov` reads every enabled channel's source element first, converts it with the
//! [`Plan`](crate::visa::eval::Plan) for the declared types and the current cr0, then writes
//! the destination elements. Channels: the execution size starting at the mask's offset
//! (M1 = 0, M2 = 4, …); every channel is enabled in the dispatch mask, so a channel is off
//! only through the instruction predicate (`.any` / `.all` combine the predicate bits of the
//! execution size). A `mov` into `%cr0` changes the control register for the movs after it;
//! writes to `%null` are dropped. Indirect operands are not executed (the checker warns).
//!
//! Other instructions are skipped with a note (rule `visa.run-skipped`; `ret` silently), and
//! what they write becomes *unknown* ([`crate::unknown`], the rule shared with PTX and Tile
//! IR): the elements of their destination — the first operand after the execution size
//! (`add (M1, 16) V33(0,0)<1> …`: the 16 elements of that region; a predicate such as `cmp`'s
//! `P1`: all of it), or the last operand of a message (`send`, `raw_sends`, `oword_ld`,
//! gathers, atomics: the whole variable); stores and scatters write no variable. A `mov`
//! that reads an unknown element (or is predicated by an unknown predicate) stops with an
//! error (rule `visa.run-unknown`) naming the instruction and `--set`. Elements given an
//! initial value get it at every skipped write (the user stands in for the instruction);
//! a `mov` replaces them, with a note (rule `visa.run-set-replaced`). Unknown elements are
//! listed in [`Written::unknown`].
//!
//! ```
//! use gpucvt::visa::{parse::parse, run::{execute, ExecOptions}};
//! let text = "\
//! .decl S v_type=G type=df num_elts=4
//! .decl D v_type=G type=b num_elts=4
//! mov (M1, 4) D(0,0)<1> S(0,0)<1;1,0>
//! mov.sat (M1, 2) D(0,2)<1> S(0,0)<1;1,0>
//! ";
//! let (k, _) = parse(text);
//! let init = [("S".to_string(), vec![300f64.to_bits(), (-2.5f64).to_bits(), 0, 0])];
//! let out = execute(&k, &init, &ExecOptions::default()).unwrap();
//! // 300.0 -> 0x2C through W; -2.5 -> -2; with .sat: 127 and -2.
//! assert_eq!(out.get("D"), Some(&[0x2c, 0xfe, 0x7f, 0xfe][..]));
//! ```

use super::check::{
    base_element, check, dst_element, src_elements, symbols, CheckOptions, VarInfo, CR0_NAME,
    NULL_NAME,
};
use super::cr0::Cr0;
use super::eval::{mov_plan_with, MovOptions};
use super::parse::{
    DstOperand, Kernel, Mov, PredControl, Skipped, SrcMod, SrcOperand, Stmt, VarKind,
};
use super::types::{unpack, VisaType};
use crate::diag::{Diagnostic, Severity, Span};
use crate::unknown::{skipped_note, Supply, Unknown};
use gpucvt_core::convert::Flags;
use gpucvt_core::value::{Class, Value};
use std::collections::HashMap;

/// How to run a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecOptions {
    /// The control register at kernel entry ([`Cr0::KERNEL_ENTRY`] by default; OpenCL
    /// kernels run with [`Cr0::OPENCL`], which gives the same MOV results under the default
    /// choices).
    pub cr0: Cr0,
    /// Bytes per GRF (see [`CheckOptions::grf_bytes`]).
    pub grf_bytes: u32,
    /// The readings of the open questions.
    pub mov: MovOptions,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            cr0: Cr0::KERNEL_ENTRY,
            grf_bytes: 32,
            mov: MovOptions::default(),
        }
    }
}

/// A variable's final contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The name the movs wrote it through.
    pub name: String,
    /// Its declared type (BOOL for predicates).
    pub ty: VisaType,
    /// Every element's bits, element 0 first (0 for an unknown element).
    pub elements: Vec<u64>,
    /// Per element, the skipped instruction that left it unknown (`None`: known). As long
    /// as `elements`.
    pub unknown: Vec<Option<Unknown>>,
}

/// What one executed mov did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovRecord {
    /// The instruction.
    pub span: Span,
    /// The plan, described ([`Plan::describe`](crate::visa::eval::Plan::describe)).
    pub plan: String,
    /// Channels written (enabled by the predicate).
    pub channels: u32,
    /// The union of the flags of every element.
    pub flags: Flags,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecResult {
    /// The variables the movs or skipped instructions wrote, in order of first write, with
    /// their final contents.
    pub values: Vec<Written>,
    /// One record per executed mov.
    pub movs: Vec<MovRecord>,
    /// The checker's warnings (movs it marks unsupported were not executed) and a note per
    /// skipped instruction, in source order.
    pub warnings: Vec<Diagnostic>,
    /// The control register at the end.
    pub cr0: Cr0,
}

impl ExecResult {
    /// The final elements of a written variable.
    pub fn get(&self, name: &str) -> Option<&[u64]> {
        self.values
            .iter()
            .find(|w| w.name == name)
            .map(|w| w.elements.as_slice())
    }
}

struct Machine {
    syms: HashMap<String, VarInfo>,
    bytes: HashMap<String, Vec<u8>>,
    preds: HashMap<String, Vec<bool>>,
    grf_bytes: u32,
    /// The skipped instructions' unknown values; `marks` index it.
    origins: Vec<Unknown>,
    /// Per root variable, per byte (per element for predicates): what the byte holds when
    /// it is not a value a mov wrote.
    marks: HashMap<String, Vec<Mark>>,
    /// Per root variable, per byte (per element for predicates, 0 or 1): the initial value
    /// given, which every skipped instruction's write of it gives again.
    supplied: HashMap<String, Vec<Option<u8>>>,
    /// Notes of movs that replaced initial values.
    replaced: Vec<Diagnostic>,
}

/// What a skipped write did to an element with an initial value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Supplied {
    /// No initial value: the element is unknown.
    No,
    /// It still held its initial value, and keeps it.
    Kept,
    /// A mov had replaced it: it takes the initial value again.
    Again,
}

/// Where a byte's value came from, when not from a mov.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// A mov, the kernel-entry zero, or nothing in particular.
    Plain,
    /// An initial value (`--set`): kept through skipped writes.
    User,
    /// Unknown: written by the skipped instruction `origins[i]`.
    Unknown(usize),
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Machine {
    /// The byte range of element `idx` of `v` (predicates: the element itself) in the
    /// marks of its root.
    fn mark_range(&self, v: &VarInfo, ty: Option<VisaType>, idx: u64) -> Option<(usize, usize)> {
        if idx >= v.num_elts {
            return None;
        }
        if v.kind == VarKind::Predicate {
            let i = usize::try_from(idx).ok()?;
            return Some((i, i + 1));
        }
        let size = ty.map_or(1, |t| t.size() as u64);
        let off = usize::try_from(v.byte_offset.checked_add(idx.checked_mul(size)?)?).ok()?;
        Some((off, off.checked_add(size as usize)?))
    }

    fn marks_of(&self, v: &VarInfo, ty: Option<VisaType>, idx: u64) -> &[Mark] {
        let Some((a, b)) = self.mark_range(v, ty, idx) else {
            return &[];
        };
        self.marks
            .get(&v.root)
            .and_then(|m| m.get(a..b))
            .unwrap_or(&[])
    }

    /// The skipped instruction that left element `idx` unknown, if one did.
    fn unknown(&self, v: &VarInfo, ty: Option<VisaType>, idx: u64) -> Option<&Unknown> {
        self.marks_of(v, ty, idx).iter().find_map(|m| match m {
            Mark::Unknown(i) => self.origins.get(*i),
            _ => None,
        })
    }

    fn set_marks(&mut self, v: &VarInfo, ty: Option<VisaType>, idx: u64, to: Mark) {
        let Some((a, b)) = self.mark_range(v, ty, idx) else {
            return;
        };
        if let Some(m) = self.marks.get_mut(&v.root).and_then(|m| m.get_mut(a..b)) {
            m.fill(to);
        }
    }

    /// A skipped instruction writes element `idx`: unknown, unless it was given an initial
    /// value, which stands for what the instruction writes.
    fn write_unknown(
        &mut self,
        v: &VarInfo,
        ty: Option<VisaType>,
        idx: u64,
        origin: usize,
    ) -> Supplied {
        let Some((a, b)) = self.mark_range(v, ty, idx) else {
            return Supplied::No;
        };
        let given: Option<Vec<u8>> = self
            .supplied
            .get(&v.root)
            .and_then(|s| s.get(a..b))
            .and_then(|s| s.iter().copied().collect());
        let Some(m) = self.marks.get_mut(&v.root).and_then(|m| m.get_mut(a..b)) else {
            return Supplied::No;
        };
        if m.iter().all(|x| *x == Mark::User) {
            return Supplied::Kept;
        }
        let Some(given) = given else {
            m.fill(Mark::Unknown(origin));
            return Supplied::No;
        };
        m.fill(Mark::User);
        if v.kind == VarKind::Predicate {
            if let Some(p) = self.preds.get_mut(&v.root).and_then(|p| p.get_mut(a)) {
                *p = given.first() == Some(&1);
            }
        } else if let Some(bytes) = self.bytes.get_mut(&v.root).and_then(|x| x.get_mut(a..b)) {
            bytes.copy_from_slice(&given);
        }
        Supplied::Again
    }

    /// Records the initial value of element `idx` (already written).
    fn supply(&mut self, v: &VarInfo, ty: Option<VisaType>, idx: u64) {
        let Some((a, b)) = self.mark_range(v, ty, idx) else {
            return;
        };
        let now: Vec<u8> = if v.kind == VarKind::Predicate {
            let bit = self.preds.get(&v.root).and_then(|p| p.get(a)).copied();
            vec![u8::from(bit.unwrap_or(false))]
        } else {
            match self.bytes.get(&v.root).and_then(|x| x.get(a..b)) {
                Some(x) => x.to_vec(),
                None => return,
            }
        };
        let len = self.marks.get(&v.root).map_or(0, Vec::len);
        let slots = self
            .supplied
            .entry(v.root.clone())
            .or_insert_with(|| vec![None; len]);
        if let Some(s) = slots.get_mut(a..b) {
            for (slot, byte) in s.iter_mut().zip(now) {
                *slot = Some(byte);
            }
        }
    }

    fn read(&self, v: &VarInfo, ty: VisaType, idx: u64) -> Option<u64> {
        let size = ty.size() as u64;
        if idx >= v.num_elts {
            return None;
        }
        let buf = self.bytes.get(&v.root)?;
        let off = usize::try_from(v.byte_offset.checked_add(idx.checked_mul(size)?)?).ok()?;
        let chunk = buf.get(off..off.checked_add(size as usize)?)?;
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        Some(u64::from_le_bytes(b))
    }

    fn write(&mut self, v: &VarInfo, ty: VisaType, idx: u64, bits: u64) -> bool {
        let size = ty.size() as u64;
        if idx >= v.num_elts {
            return false;
        }
        let Some(buf) = self.bytes.get_mut(&v.root) else {
            return false;
        };
        let Some(off) = idx
            .checked_mul(size)
            .and_then(|x| x.checked_add(v.byte_offset))
            .and_then(|x| usize::try_from(x).ok())
        else {
            return false;
        };
        let Some(chunk) = off
            .checked_add(size as usize)
            .and_then(|end| buf.get_mut(off..end))
        else {
            return false;
        };
        chunk.copy_from_slice(&bits.to_le_bytes()[..size as usize]);
        true
    }
}

fn input_error(msg: String) -> Diagnostic {
    Diagnostic::error("visa.exec-input", msg, Span::default())
}

/// Runs the movs of a kernel from the given initial element values (bit patterns, element 0
/// first; predicates take 0 or 1 per element; missing variables and elements start at 0).
///
/// Returns the checker's errors (and input errors, rule `visa.exec-input`) instead of
/// running when there are any, and the one error (rule `visa.run-unknown`) of a mov that
/// reads an unknown element. Never panics.
pub fn execute(
    k: &Kernel,
    init: &[(String, Vec<u64>)],
    opts: &ExecOptions,
) -> Result<ExecResult, Vec<Diagnostic>> {
    let copts = CheckOptions {
        grf_bytes: opts.grf_bytes,
        mov: opts.mov,
    };
    let diags = check(k, &copts);
    let (errors, warnings): (Vec<_>, Vec<_>) = diags
        .into_iter()
        .partition(|d| d.severity == Severity::Error);
    if !errors.is_empty() {
        return Err(errors);
    }
    let syms = symbols(k);
    let mut m = Machine {
        bytes: HashMap::new(),
        preds: HashMap::new(),
        grf_bytes: opts.grf_bytes,
        syms,
        origins: Vec::new(),
        marks: HashMap::new(),
        supplied: HashMap::new(),
        replaced: Vec::new(),
    };
    for v in m.syms.values() {
        match v.kind {
            super::parse::VarKind::Predicate => {
                m.preds
                    .insert(v.name.clone(), vec![false; v.num_elts as usize]);
                m.marks
                    .insert(v.name.clone(), vec![Mark::Plain; v.num_elts as usize]);
            }
            _ if v.root == v.name => {
                m.bytes
                    .insert(v.name.clone(), vec![0u8; v.bytes() as usize]);
                m.marks
                    .insert(v.name.clone(), vec![Mark::Plain; v.bytes() as usize]);
            }
            _ => {}
        }
    }
    if let Some(cr0) = m.syms.get(CR0_NAME).cloned() {
        m.write(&cr0, VisaType::Ud, 0, opts.cr0.raw() as u64);
    }
    // Initial values.
    let mut errs = Vec::new();
    for (name, vals) in init {
        let Some(v) = m.syms.get(name).cloned() else {
            errs.push(input_error(format!(
                "initial value for `{name}`, which is not declared"
            )));
            continue;
        };
        if vals.len() as u64 > v.num_elts {
            errs.push(input_error(format!(
                "{} initial values for `{name}`, which has {} elements",
                vals.len(),
                v.num_elts
            )));
            continue;
        }
        match (v.kind, v.ty) {
            (super::parse::VarKind::Predicate, _) => {
                if let Some(p) = m.preds.get_mut(name) {
                    for (slot, &x) in p.iter_mut().zip(vals) {
                        if x > 1 {
                            errs.push(input_error(format!(
                                "predicate `{name}` elements are 0 or 1, not {x:#x}"
                            )));
                        }
                        *slot = x & 1 == 1;
                    }
                }
                for i in 0..vals.len() as u64 {
                    m.set_marks(&v, None, i, Mark::User);
                    m.supply(&v, None, i);
                }
            }
            (super::parse::VarKind::General, Some(t)) => {
                let w = t.size() * 8;
                for (i, &x) in vals.iter().enumerate() {
                    if x & !mask(w) != 0 {
                        errs.push(input_error(format!(
                            "element {i} of `{name}` = {x:#x} does not fit the {w} bits of {t}"
                        )));
                    } else {
                        m.write(&v, t, i as u64, x);
                        m.set_marks(&v, Some(t), i as u64, Mark::User);
                        m.supply(&v, Some(t), i as u64);
                    }
                }
            }
            _ => errs.push(input_error(format!(
                "`{name}` is not a general or predicate variable"
            ))),
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let mut cr0 = current_cr0(&m, opts.cr0);
    let mut written: Vec<String> = Vec::new();
    let mut records = Vec::new();
    let mut warnings = warnings;
    for s in &k.stmts {
        match s {
            Stmt::Mov(mv) => {
                if let Some(rec) =
                    run_mov(&mut m, mv, cr0, opts, &mut written).map_err(|d| vec![d])?
                {
                    records.push(rec);
                    cr0 = current_cr0(&m, cr0);
                }
            }
            Stmt::Skipped(sk) => {
                if let Some(note) = skip(&mut m, sk, &mut written) {
                    warnings.push(note);
                }
            }
        }
    }
    warnings.append(&mut m.replaced);
    warnings.sort_by_key(|d| (d.span.start, d.span.end));
    let values = written
        .into_iter()
        .filter_map(|name| {
            let v = m.syms.get(&name)?.clone();
            let ty = v.ty.unwrap_or(VisaType::Bool);
            let known_ty = (v.kind != VarKind::Predicate).then_some(ty);
            let unknown: Vec<Option<Unknown>> = (0..v.num_elts)
                .map(|i| m.unknown(&v, known_ty, i).cloned())
                .collect();
            let elements = (0..v.num_elts)
                .map(|i| {
                    if unknown[i as usize].is_some() {
                        0
                    } else if v.kind == VarKind::Predicate {
                        m.preds
                            .get(&v.name)
                            .and_then(|p| p.get(i as usize))
                            .map_or(0, |&b| b as u64)
                    } else {
                        m.read(&v, ty, i).unwrap_or(0)
                    }
                })
                .collect();
            Some(Written {
                name,
                ty,
                elements,
                unknown,
            })
        })
        .collect();
    Ok(ExecResult {
        values,
        movs: records,
        warnings,
        cr0,
    })
}

/// Mnemonics (before the first `.`) whose destination is their last operand: messages.
const LAST_IS_DST: [&str; 14] = [
    "send",
    "sends",
    "raw_send",
    "raw_sends",
    "oword_ld",
    "oword_ld_unaligned",
    "media_ld",
    "svm_block_ld",
    "svm_gather",
    "gather",
    "gather_scaled",
    "gather4_scaled",
    "dword_atomic",
    "svm_atomic",
];

/// Mnemonic prefixes of instructions that write no variable (their operands are read).
const NO_DST: [&str; 8] = [
    "ret",
    "oword_st",
    "media_st",
    "scatter",
    "svm_block_st",
    "svm_scatter",
    "lsc_store",
    "jmp",
];

/// The operands of a skipped instruction after its execution size group, split at white
/// space outside brackets.
fn operand_words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = None;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' | '>' => depth -= 1,
            _ => {}
        }
        let space = c.is_whitespace() && depth <= 0;
        match (space, start) {
            (true, Some(s)) => {
                out.push(&text[s..i]);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

/// `Name(row,col)<hstride>` → (name, row, col, hstride); otherwise just the leading name.
fn dst_parts(op: &str) -> (&str, Option<(u64, u64, u64)>) {
    let op = op.trim_start_matches("(-)").trim_start_matches("(abs)");
    let end = op
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_$%@".contains(c)))
        .unwrap_or(op.len());
    let (name, rest) = op.split_at(end);
    let region = (|| {
        let rest = rest.strip_prefix('(')?;
        let (rc, rest) = rest.split_once(')')?;
        let (r, c) = rc.split_once(',')?;
        let h = rest.strip_prefix('<')?.strip_suffix('>')?;
        Some((
            r.trim().parse().ok()?,
            c.trim().parse().ok()?,
            h.trim().parse().ok()?,
        ))
    })();
    (name, region)
}

/// Skips an instruction other than a mov: what it writes becomes unknown. Returns its note
/// (none for `ret`).
fn skip(m: &mut Machine, sk: &Skipped, written: &mut Vec<String>) -> Option<Diagnostic> {
    let root = sk.mnemonic.split('.').next().unwrap_or("");
    if root == "ret" {
        return None;
    }
    let shown = Unknown::new(&sk.text, sk.span, "", Supply::Set);
    let head = format!("{} not executed: only mov runs", shown.opcode());
    let mut unknown = Vec::new();
    let mut kept = Vec::new();
    let mut again = Vec::new();
    // The operands after the execution size group (when the reader found one).
    let after = sk
        .exec
        .map(|e| e.span.end)
        .and_then(|end| end.checked_sub(sk.span.start))
        .and_then(|off| sk.text.get(off..))
        .unwrap_or("");
    let words = operand_words(after);
    let dst = if NO_DST.iter().any(|p| root.starts_with(p)) {
        None
    } else if LAST_IS_DST.contains(&root) {
        words.last().map(|w| (dst_parts(w).0, None))
    } else {
        words.first().map(|w| dst_parts(w))
    };
    if let Some((name, region)) = dst {
        if let Some(v) = m.syms.get(name).cloned() {
            if matches!(v.kind, VarKind::General | VarKind::Predicate) && name != NULL_NAME {
                let origin = m.origins.len();
                m.origins
                    .push(Unknown::new(&sk.text, sk.span, name, Supply::Set));
                let ty = (v.kind == VarKind::General).then_some(v.ty).flatten();
                let elements: Vec<u64> = match (region, sk.exec, v.kind) {
                    (Some((r, c, h)), Some(e), VarKind::General) => {
                        let base = base_element(r, c, ty.map_or(1, |t| t.size()), m.grf_bytes);
                        (0..e.size.min(v.num_elts))
                            .map(|i| dst_element(base, h, i))
                            .collect()
                    }
                    _ => (0..v.num_elts).collect(),
                };
                let (mut any_unknown, mut any_kept, mut any_again) = (false, false, false);
                for idx in elements {
                    match m.write_unknown(&v, ty, idx, origin) {
                        Supplied::Kept => any_kept = true,
                        Supplied::Again => any_again = true,
                        Supplied::No => any_unknown = true,
                    }
                }
                if any_again {
                    again.push(name.to_string());
                }
                if any_unknown {
                    unknown.push(name.to_string());
                    if !written.iter().any(|w| w == name) {
                        written.push(name.to_string());
                    }
                }
                if any_kept {
                    kept.push(name.to_string());
                }
            }
        }
    }
    Some(skipped_note(
        "visa.run-skipped",
        &head,
        &unknown,
        &kept,
        &again,
        Supply::Set,
        sk.span,
    ))
}

fn current_cr0(m: &Machine, fallback: Cr0) -> Cr0 {
    m.syms
        .get(CR0_NAME)
        .and_then(|v| m.read(v, VisaType::Ud, 0))
        .map_or(fallback, |x| Cr0::from_raw(x as u32))
}

fn apply_modifier(ty: VisaType, bits: u64, md: Option<SrcMod>) -> Value {
    let f = ty.element_format();
    let Some(md) = md else {
        return f.decode(bits);
    };
    if ty.is_float() {
        let sign = f.sign_bit().unwrap_or(0);
        let b = match md {
            SrcMod::Neg => bits ^ sign,
            SrcMod::Abs => bits & !sign,
            SrcMod::NegAbs => bits | sign,
            SrcMod::Not => bits,
        };
        return f.decode(b);
    }
    let v = f.decode(bits);
    let n: i128 = match v.class {
        Class::Finite(d) if d.exp >= 0 && d.exp < 64 => {
            let mag = (d.sig << d.exp) as i128;
            if v.negative {
                -mag
            } else {
                mag
            }
        }
        _ => 0,
    };
    let r = match md {
        SrcMod::Neg => -n,
        SrcMod::Abs => n.abs(),
        SrcMod::NegAbs => -n.abs(),
        SrcMod::Not => n,
    };
    Value::from_i128(r)
}

fn run_mov(
    m: &mut Machine,
    mv: &Mov,
    cr0: Cr0,
    opts: &ExecOptions,
    written: &mut Vec<String>,
) -> Result<Option<MovRecord>, Diagnostic> {
    // A mov that cannot run (an indirect operand, a type outside the model) does nothing;
    // the checker has warned.
    macro_rules! or_skip {
        ($e:expr) => {
            match $e {
                Some(x) => x,
                None => return Ok(None),
            }
        };
    }
    let n = mv.exec.size;
    let offset = mv.exec.offset as u64;
    // The destination.
    let (dvar, dty, dbase, dh) = match &mv.dst {
        DstOperand::Direct { var, hstride, .. } => {
            if var.name == NULL_NAME {
                (None, None, 0, *hstride)
            } else {
                let v = or_skip!(m.syms.get(&var.name)).clone();
                let t = or_skip!(v.ty);
                let base = base_element(var.row, var.col, t.size(), m.grf_bytes);
                (Some((var.name.clone(), v)), Some(t), base, *hstride)
            }
        }
        DstOperand::Indirect { .. } => return Ok(None),
    };
    // The source type, to make the plan; %null takes the source's type.
    let sty = match &mv.src {
        SrcOperand::Direct { var, .. } => or_skip!(or_skip!(m.syms.get(&var.name)).ty),
        SrcOperand::Imm(i) => i.ty,
        SrcOperand::Pred { .. } => VisaType::Bool,
        SrcOperand::Indirect { .. } => return Ok(None),
    };
    let dty = dty.unwrap_or(if sty.is_variable_type() {
        sty
    } else {
        VisaType::Ud
    });
    let plan = or_skip!(mov_plan_with(dty, sty, mv.sat, cr0, &opts.mov).ok());
    // Enabled channels.
    let enabled: Vec<bool> = match &mv.pred {
        None => vec![true; n as usize],
        Some(p) => {
            let pv = or_skip!(m.syms.get(&p.name)).clone();
            for c in offset..offset + n {
                if let Some(u) = m.unknown(&pv, None, c) {
                    return Err(u.read_error(
                        "visa.run-unknown",
                        &format!("element {c} of {}", p.name),
                        p.span,
                    ));
                }
            }
            let bits = or_skip!(m.preds.get(&p.name));
            let bit = |c: u64| bits.get(c as usize).copied().unwrap_or(false);
            let range = offset..offset + n;
            let group = match p.control {
                PredControl::PerChannel => None,
                PredControl::Any => Some(range.clone().any(bit)),
                PredControl::All => Some(range.clone().all(bit)),
            };
            range
                .map(|c| group.unwrap_or_else(|| bit(c)) != p.negated)
                .collect()
        }
    };
    // Read every enabled channel's source.
    let mut inputs: Vec<Option<Value>> = Vec::with_capacity(n as usize);
    match &mv.src {
        SrcOperand::Direct {
            modifier,
            var,
            region,
            ..
        } => {
            let v = or_skip!(m.syms.get(&var.name)).clone();
            let base = base_element(var.row, var.col, sty.size(), m.grf_bytes);
            let els = src_elements(base, region.vstride, region.width, region.hstride, n);
            for (i, &e) in els.iter().enumerate() {
                if !enabled[i] {
                    inputs.push(None);
                    continue;
                }
                if let Some(u) = m.unknown(&v, Some(sty), e) {
                    return Err(u.read_error(
                        "visa.run-unknown",
                        &format!("element {e} of {}", var.name),
                        mv.src.span(),
                    ));
                }
                let bits = or_skip!(m.read(&v, sty, e));
                inputs.push(Some(apply_modifier(sty, bits, modifier.map(|x| x.0))));
            }
        }
        SrcOperand::Imm(imm) => {
            let els = unpack(imm.ty, imm.bits);
            let f = plan.source_format();
            for (i, &on) in enabled.iter().enumerate() {
                inputs.push(on.then(|| f.decode(els[i % els.len()])));
            }
        }
        SrcOperand::Pred { name, .. } => {
            let pv = or_skip!(m.syms.get(name)).clone();
            for c in 0..pv.num_elts.min(64) {
                if let Some(u) = m.unknown(&pv, None, c) {
                    return Err(u.read_error(
                        "visa.run-unknown",
                        &format!("element {c} of {name}"),
                        mv.src.span(),
                    ));
                }
            }
            let bits = or_skip!(m.preds.get(name));
            let mut x = 0u64;
            for (j, &b) in bits.iter().enumerate().take(64) {
                x |= (b as u64) << j;
            }
            let f = plan.source_format();
            for &on in &enabled {
                inputs.push(on.then(|| f.decode(x)));
            }
        }
        SrcOperand::Indirect { .. } => return Ok(None),
    }
    // Convert and write.
    let mut flags = Flags::empty();
    let mut channels = 0;
    let mut replaced = Vec::new();
    for (i, inp) in inputs.iter().enumerate() {
        let Some(v) = inp else { continue };
        let out = plan.run_value(v);
        flags |= out.flags;
        channels += 1;
        if let Some((_, var)) = &dvar {
            let idx = dst_element(dbase, dh, i as u64);
            if m.marks_of(var, Some(dty), idx).contains(&Mark::User) {
                replaced.push(idx);
            }
            if !m.write(var, dty, idx, out.bits) {
                return Ok(None);
            }
            m.set_marks(var, Some(dty), idx, Mark::Plain);
        }
    }
    if let Some((name, _)) = dvar {
        if let (Some(first), Some(last)) = (replaced.first(), replaced.last()) {
            let which = if first == last {
                format!("element {first}")
            } else {
                format!("{} elements from {first} to {last}", replaced.len())
            };
            m.replaced.push(Diagnostic::warning(
                "visa.run-set-replaced",
                format!(
                    "this mov writes {which} of {name}, replacing their --set value; a skipped instruction that writes them later gives them the --set value again"
                ),
                mv.span,
            ));
        }
        if !written.contains(&name) {
            written.push(name);
        }
    }
    Ok(Some(MovRecord {
        span: mv.span,
        plan: plan.describe(),
        channels,
        flags,
    }))
}

/// Reads one element value given as text for a variable of type `ty` (what `gpucvt run
/// --set` does): `0`/`1`/`true`/`false` for predicates; raw bits `0x…`/`0b…` (without a point
/// or an exponent) of the element's width; otherwise a number — decimal or hexadecimal float
/// — rounded to nearest even for float types, exact and in range for integer types.
///
/// ```
/// use gpucvt::visa::{run::parse_element, types::VisaType};
/// assert_eq!(parse_element(VisaType::Hf, "1.5").unwrap(), 0x3e00);
/// assert_eq!(parse_element(VisaType::B, "-2").unwrap(), 0xfe);
/// assert_eq!(parse_element(VisaType::F, "0x3f800000").unwrap(), 0x3f80_0000);
/// assert!(parse_element(VisaType::Ub, "256").is_err());
/// ```
///
/// # Errors
/// [`crate::Error::Value`], saying what was expected.
pub fn parse_element(ty: VisaType, text: &str) -> Result<u64, crate::Error> {
    parse_element_text(ty, text).map_err(|message| crate::Error::Value { message })
}

/// [`parse_element`] with the message as text.
fn parse_element_text(ty: VisaType, text: &str) -> Result<u64, String> {
    use crate::text::{parse_bits_named, parse_number};
    use gpucvt_core::convert::{convert, Policy};
    use gpucvt_core::round::Rounding;
    let t = text.trim();
    if ty == VisaType::Bool {
        return match t.to_ascii_lowercase().as_str() {
            "0" | "false" => Ok(0),
            "1" | "true" => Ok(1),
            _ => Err(format!("a predicate element is 0 or 1, not {t:?}")),
        };
    }
    let f = ty.element_format();
    let lower = t.to_ascii_lowercase();
    if (lower.starts_with("0x") || lower.starts_with("0b"))
        && !lower.contains('.')
        && !lower.contains('p')
    {
        return parse_bits_named(t, f.width(), ty.name()).map_err(|e| e.to_string());
    }
    let parsed = parse_number(t).map_err(|e| e.to_string())?;
    let out = convert(&parsed.value, &f, Rounding::RN, &Policy::default());
    let changed = !parsed.exact
        || out.flags.contains(Flags::INEXACT)
        || out.flags.contains(Flags::OVERFLOW)
        || out.flags.contains(Flags::INVALID);
    if !ty.is_float() && changed {
        return Err(format!(
            "{t} is not a {} value (an integer of its range); or give raw bits as 0x…",
            ty.doc_name()
        ));
    }
    Ok(out.bits)
}

/// Reads a variable's initial elements, `[1.0,2.5,…]` or `1.0,2.5,…` (element 0 first), each
/// read by [`parse_element`] for the variable's declared type; the value for `name` in the
/// form [`execute`] takes.
///
/// ```
/// use gpucvt::visa::{parse::parse, run::initial_value};
/// let (k, _) = parse(".decl V v_type=G type=hf num_elts=4\n");
/// assert_eq!(initial_value(&k, "V", "[1.0, -2]").unwrap().1, vec![0x3c00, 0xc000]);
/// assert!(initial_value(&k, "W", "1").is_err());
/// ```
///
/// # Errors
/// [`crate::Error::Value`]: an undeclared variable, too many elements, or an element that
/// does not parse.
pub fn initial_value(
    k: &Kernel,
    name: &str,
    text: &str,
) -> Result<(String, Vec<u64>), crate::Error> {
    initial_value_text(k, name, text).map_err(|message| crate::Error::Value { message })
}

/// [`initial_value`] with the message as text.
fn initial_value_text(k: &Kernel, name: &str, text: &str) -> Result<(String, Vec<u64>), String> {
    let syms = symbols(k);
    let Some(v) = syms.get(name) else {
        let mut names: Vec<&str> = k.decls.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        return Err(format!(
            "{name} is not declared; declared: {}",
            names.join(", ")
        ));
    };
    let ty = match v.kind {
        super::parse::VarKind::Predicate => VisaType::Bool,
        _ => {
            v.ty.ok_or_else(|| format!("{name} has no type that can be set"))?
        }
    };
    let body = text.trim();
    let body = body
        .strip_prefix('[')
        .and_then(|b| b.strip_suffix(']'))
        .unwrap_or(body);
    let elems = body
        .split(',')
        .map(|e| parse_element_text(ty, e).map_err(|m| format!("{name}: {m}")))
        .collect::<Result<Vec<u64>, String>>()?;
    if elems.len() as u64 > v.num_elts {
        return Err(format!(
            "{} values for {name}, which has {} elements",
            elems.len(),
            v.num_elts
        ));
    }
    Ok((name.to_string(), elems))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::visa::parse::parse;

    fn run(text: &str, init: &[(&str, Vec<u64>)], cr0: u32) -> ExecResult {
        let (k, d) = parse(text);
        assert!(d.is_empty(), "{d:?}");
        let init: Vec<(String, Vec<u64>)> = init
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        let opts = ExecOptions {
            cr0: Cr0::from_raw(cr0),
            ..ExecOptions::default()
        };
        execute(&k, &init, &opts).unwrap()
    }

    #[test]
    fn regions_predicates_modifiers() {
        let text = "\
.decl S v_type=G type=w num_elts=16
.decl D v_type=G type=d num_elts=16
.decl P v_type=P num_elts=8
(!P) mov (M1, 8) D(0,0)<2> (-)S(0,1)<4;2,1>
";
        let s: Vec<u64> = (0..16).map(|i| i as u64).chain([]).collect();
        let mut s = s;
        s[1] = 0x8000; // -32768: (-) gives 32768 in D
        let out = run(text, &[("S", s), ("P", vec![0, 1, 0, 0, 0, 0, 0, 1])], 0);
        let d = out.get("D").unwrap();
        // Channel i reads S[1 + (i/2)*4 + (i%2)], writes D[2i]; channels 1 and 7 are off.
        assert_eq!(d[0], 32768);
        assert_eq!(d[2], 0); // disabled
        assert_eq!(d[4], (-5i32) as u32 as u64);
        assert_eq!(d[6], (-6i32) as u32 as u64);
        assert_eq!(d[12], (-13i32) as u32 as u64);
        assert_eq!(d[14], 0); // disabled
        assert_eq!(out.movs[0].channels, 6);
    }

    #[test]
    fn cr0_writes_change_rounding() {
        let text = "\
.decl S v_type=G type=f num_elts=1
.decl A v_type=G type=hf num_elts=1
.decl B v_type=G type=hf num_elts=1
mov (M1_NM, 1) A(0,0)<1> S(0,0)<0;1,0>
mov (M1_NM, 1) %cr0(0,0)<1> 0x4f0:ud
mov (M1_NM, 1) B(0,0)<1> S(0,0)<0;1,0>
";
        // 1 + 2^-10 + 2^-11 + 2^-20: RNE rounds up, RTZ truncates.
        let x = 0x3f80_0000u64 | (1 << 13) | (1 << 12) | (1 << 3);
        let out = run(text, &[("S", vec![x])], 0x4c0);
        assert_eq!(out.get("A"), Some(&[0x3c02][..]));
        assert_eq!(out.get("B"), Some(&[0x3c01][..]));
        assert_eq!(out.cr0.raw(), 0x4f0);
    }

    #[test]
    fn packed_immediates_and_aliases() {
        let text = "\
.decl F1 v_type=G type=f num_elts=8
.decl U v_type=G type=ud num_elts=8 alias=<F1, 0>
.decl W1 v_type=G type=w num_elts=8
mov (M1, 8) W1(0,0)<1> 0xfedc3210:v
mov (M1, 4) F1(0,0)<1> 0xb8803830:vf
";
        let out = run(text, &[], 0);
        assert_eq!(
            out.get("W1"),
            Some(&[0, 1, 2, 3, 0xfffc, 0xfffd, 0xfffe, 0xffff][..])
        );
        assert_eq!(
            out.get("F1").map(|f| f[..4].to_vec()),
            Some(vec![0x3f80_0000, 0x3fc0_0000, 0x8000_0000, 0xbfc0_0000])
        );
    }
}
