//! The checker: declarations, types, regions and type pairs of a parsed kernel.
//!
//! Errors are what the vISA verifier or assembler rejects (or what has no meaning: an
//! undeclared variable, a region beyond its variable); warnings are what the finalizer
//! constrains or what the model had to choose (see [`crate::visa::eval::CHOICES`]).
//!
//! | rule | severity | what |
//! | --- | --- | --- |
//! | `visa.decl` | error | malformed declaration: unknown or missing `v_type`/`type`/`num_elts` |
//! | `visa.decl-duplicate` | error | a name declared twice |
//! | `visa.decl-type` | error | a general variable of type V, UV, VF or BOOL; an unknown type (warning for IGC's code-only types) |
//! | `visa.decl-num-elts` | error | `num_elts` outside [1, 4096], or more than 4 KiB |
//! | `visa.decl-align` | error | unknown `align=` name (warning for the deprecated `2GRF`) |
//! | `visa.decl-alias` | error | alias of an undeclared variable, a cycle, or beyond the aliased variable |
//! | `visa.undeclared` | error | an operand names no declared variable |
//! | `visa.operand-kind` | error | a predicate or address variable used as data, or data used as a predicate |
//! | `visa.exec-size` | error | execution size not 1, 2, 4, 8, 16 or 32 |
//! | `visa.exec-mask` | error | mask offset (M1…M8) not aligned to the size, or beyond 32 channels |
//! | `visa.region` | error | region values outside the encodable ones, width above the size |
//! | `visa.region-bounds` | error | an element the region touches lies beyond the variable |
//! | `visa.type-pair` | error | a type pair mov cannot convert (V/UV/VF/BOOL destination, predicate rules) |
//! | `visa.bf-pair` | warning | BF with a type other than F: converted through F (`bf-via-f`) |
//! | `visa.bf-mov` | warning | F ↔ BF moves the finalizer rejects with a predicate, `.sat` or a source modifier |
//! | `visa.modifier` | error | `(~)` on a mov (logic instructions only) |
//! | `visa.predicate` | error | predicate source rules (size 1, UB/UW/UD destination wide enough, no predication or `.sat`); a predicate too small for the channels |
//! | `visa.imm-float-bits` | warning | `1:f`: a decimal integer given to a float type is a bit pattern |
//! | `visa.imm-range` | warning | an integer immediate that does not fit its type (truncated) |
//! | `visa.packed-imm` | warning | a packed immediate with more channels than elements; VF needs a platform before Xe2 |
//! | `visa.unsupported` | warning | indirect operands, predefined variables other than `%cr0`/`%null`, and other instructions writing `%cr0`: not executed |
//!
//! ```
//! use gpucvt::visa::{parse::parse, check::{check, CheckOptions}};
//! let (k, _) = parse(".decl A v_type=G type=f num_elts=8\n.decl B v_type=G type=ub num_elts=8\nmov (M1, 16) B(0,0)<1> A(0,0)<1;1,0>\n");
//! let d = check(&k, &CheckOptions::default());
//! assert_eq!(d.len(), 2); // both regions run past their 8 elements
//! assert!(d.iter().all(|d| d.rule == "visa.region-bounds"));
//! ```

use super::cr0::Cr0;
use super::eval::{mov_plan_with, MovOptions};
use super::parse::{
    align_names, Decl, DstOperand, Item, Kernel, Mov, PredControl, SrcMod, SrcOperand, Stmt,
    TypeName, VarKind,
};
use super::types::VisaType;
use crate::diag::{Diagnostic, Span};
use std::collections::HashMap;

/// What the checker (and the executor) assume about the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// Bytes per GRF: 32 (Gen9 to XeHPG, the platforms with VF) or 64 (PVC, Xe2 and later).
    /// A `(row, col)` operand starts at element `row × grf_bytes / type size + col`.
    pub grf_bytes: u32,
    /// The readings of the open questions (only [`MovOptions::bf_pairs`] changes what is legal).
    pub mov: MovOptions,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            grf_bytes: 32,
            mov: MovOptions::default(),
        }
    }
}

/// What a name refers to, after resolving aliases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarInfo {
    /// The name.
    pub name: String,
    /// General, address, predicate, …
    pub kind: VarKind,
    /// The type (general and address variables with a known type).
    pub ty: Option<VisaType>,
    /// Number of elements.
    pub num_elts: u64,
    /// The variable that owns the storage (itself unless it is an alias).
    pub root: String,
    /// Byte offset into the root.
    pub byte_offset: u64,
}

impl VarInfo {
    /// Size in bytes (`num_elts × type size`; predicates: one byte per element).
    pub fn bytes(&self) -> u64 {
        self.num_elts * self.ty.map_or(1, |t| t.size() as u64)
    }
}

/// The predefined variable modelled as storage: `%cr0` (3 × UD).
pub const CR0_NAME: &str = "%cr0";
/// The predefined variable whose writes are dropped: `%null`.
pub const NULL_NAME: &str = "%null";

/// The symbol table of a kernel: every well-formed declaration, aliases resolved.
/// Malformed declarations are left out (the checker reports them).
pub fn symbols(k: &Kernel) -> HashMap<String, VarInfo> {
    symbols_and_diags(&k.decls).0
}

fn symbols_and_diags(decls: &[Decl]) -> (HashMap<String, VarInfo>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut table: HashMap<String, VarInfo> = HashMap::new();
    table.insert(
        CR0_NAME.into(),
        VarInfo {
            name: CR0_NAME.into(),
            kind: VarKind::General,
            ty: Some(VisaType::Ud),
            num_elts: 3,
            root: CR0_NAME.into(),
            byte_offset: 0,
        },
    );
    let mut seen: HashMap<&str, Span> = HashMap::new();
    let mut aliases: Vec<&Decl> = Vec::new();
    for d in decls {
        if let Some(first) = seen.get(d.name.as_str()) {
            diags.push(Diagnostic::error(
                "visa.decl-duplicate",
                format!(
                    "`{}` is declared again (first declared on line {})",
                    d.name, first.line
                ),
                d.name_span,
            ));
            continue;
        }
        seen.insert(&d.name, d.name_span);
        if d.name.starts_with('%') {
            diags.push(Diagnostic::error(
                "visa.decl",
                format!("`{}`: names starting with % are predefined", d.name),
                d.name_span,
            ));
            continue;
        }
        let Some(kind) = d.kind else { continue };
        let mut ok = true;
        let ty = match (&d.ty, kind) {
            (Some((TypeName::Known(t), sp)), VarKind::General) => {
                if !t.is_variable_type() {
                    diags.push(Diagnostic::error(
                        "visa.decl-type",
                        format!(
                            "a general variable cannot have type {t}: {}",
                            if *t == VisaType::Bool {
                                "BOOL is for predicate variables (v_type=P)"
                            } else {
                                "packed types exist only as immediates"
                            }
                        ),
                        *sp,
                    ));
                    ok = false;
                }
                Some(*t)
            }
            (Some((TypeName::Known(t), sp)), VarKind::Address) => {
                if !matches!(t, VisaType::Uw | VisaType::Ud) {
                    diags.push(Diagnostic::error(
                        "visa.decl-type",
                        format!("an address variable has type UW, not {t}"),
                        *sp,
                    ));
                }
                Some(*t)
            }
            (Some((TypeName::CodeOnly(n), sp)), _) => {
                diags.push(Diagnostic::warning(
                    "visa.decl-type",
                    format!("type `{n}` exists in IGC's code but not in the documented type system; movs using it are not modelled"),
                    *sp,
                ));
                None
            }
            (Some((TypeName::Unknown(n), sp)), _) => {
                diags.push(Diagnostic::error(
                    "visa.decl-type",
                    format!("unknown type `{n}` (expected one of ud d uw w ub b df f uq q hf bf)"),
                    *sp,
                ));
                ok = false;
                None
            }
            (Some((_, sp)), VarKind::Predicate | VarKind::Sampler | VarKind::Surface) => {
                diags.push(Diagnostic::warning(
                    "visa.decl",
                    "type= is ignored for predicate, sampler and surface variables",
                    *sp,
                ));
                None
            }
            (None, VarKind::General | VarKind::Address) => {
                diags.push(Diagnostic::error(
                    "visa.decl",
                    format!("`.decl {}` has no type=", d.name),
                    d.span,
                ));
                ok = false;
                None
            }
            (None, _) => None,
        };
        let needs_elts = matches!(
            kind,
            VarKind::General | VarKind::Address | VarKind::Predicate
        );
        let num_elts = match d.num_elts {
            Some((n, sp)) => {
                let max = if kind == VarKind::Predicate { 32 } else { 4096 };
                if n == 0 || n > max {
                    diags.push(Diagnostic::error(
                        "visa.decl-num-elts",
                        format!("num_elts={n} is outside [1, {max}]"),
                        sp,
                    ));
                    ok = false;
                } else if let Some(t) = ty {
                    if n * t.size() as u64 > 4096 {
                        diags.push(Diagnostic::error(
                            "visa.decl-num-elts",
                            format!(
                                "{n} elements of {t} are {} bytes; a variable holds at most 4096",
                                n * t.size() as u64
                            ),
                            sp,
                        ));
                        ok = false;
                    }
                }
                n
            }
            None if needs_elts => {
                diags.push(Diagnostic::error(
                    "visa.decl",
                    format!("`.decl {}` has no num_elts=", d.name),
                    d.span,
                ));
                ok = false;
                0
            }
            None => 1,
        };
        if let Some((a, sp)) = &d.align {
            if a == "2GRF" {
                diags.push(Diagnostic::warning(
                    "visa.decl-align",
                    "align=2GRF is deprecated; write GRFx2",
                    *sp,
                ));
            } else if !align_names().contains(&a.as_str()) {
                diags.push(Diagnostic::error(
                    "visa.decl-align",
                    format!(
                        "unknown alignment `{a}` (expected one of {})",
                        align_names()[..10].join(", ")
                    ),
                    *sp,
                ));
            }
        }
        if !ok {
            continue;
        }
        table.insert(
            d.name.clone(),
            VarInfo {
                name: d.name.clone(),
                kind,
                ty,
                num_elts,
                root: d.name.clone(),
                byte_offset: 0,
            },
        );
        if d.alias.is_some() {
            aliases.push(d);
        }
    }
    // Resolve aliases (a chain ends at a variable without alias; cycles are errors), each
    // declaration's chain once.
    let mut chains = Chains::new(decls);
    for d in aliases {
        let Some(alias) = &d.alias else { continue };
        let (resolved, offset) = match chains.of(&d.name) {
            Chain::Root(root, offset) => (Some(root), offset),
            Chain::Cycle => {
                diags.push(Diagnostic::error(
                    "visa.decl-alias",
                    format!("the alias of `{}` forms a cycle", d.name),
                    alias.span,
                ));
                (None, 0)
            }
            Chain::Missing(target) => {
                diags.push(Diagnostic::error(
                    "visa.decl-alias",
                    format!("`{}` aliases `{target}`, which is not declared", d.name),
                    alias.span,
                ));
                (None, 0)
            }
        };
        let Some(root) = resolved else {
            table.remove(&d.name);
            continue;
        };
        let Some(root_info) = table.get(&root).cloned() else {
            table.remove(&d.name);
            continue;
        };
        let Some(info) = table.get_mut(&d.name) else {
            continue;
        };
        if root_info.kind != VarKind::General || info.kind != VarKind::General {
            diags.push(Diagnostic::error(
                "visa.decl-alias",
                "only general variables can alias general variables",
                alias.span,
            ));
            table.remove(&d.name);
            continue;
        }
        let end = offset.saturating_add(info.bytes());
        if end > root_info.bytes() {
            diags.push(Diagnostic::error(
                "visa.decl-alias",
                format!(
                    "`{}` ({} bytes at offset {offset}) runs past the {} bytes of `{root}`",
                    d.name,
                    info.bytes(),
                    root_info.bytes()
                ),
                alias.span,
            ));
            table.remove(&d.name);
            continue;
        }
        info.root = root;
        info.byte_offset = offset;
    }
    (table, diags)
}

/// Where a name's chain of aliases ends.
#[derive(Clone, Debug)]
enum Chain {
    /// At this variable without alias, this many bytes in.
    Root(String, u64),
    /// At a name nothing declares.
    Missing(String),
    /// Nowhere: it runs in a circle.
    Cycle,
}

/// The alias chains of a kernel's declarations (the first declaration of each name), each
/// followed once: a kernel of `n` aliases resolves in O(n), however long its chains.
struct Chains<'d> {
    decls: &'d [Decl],
    first: HashMap<&'d str, usize>,
    done: Vec<Option<Chain>>,
}

impl<'d> Chains<'d> {
    fn new(decls: &'d [Decl]) -> Chains<'d> {
        let mut first = HashMap::new();
        for (i, d) in decls.iter().enumerate() {
            first.entry(d.name.as_str()).or_insert(i);
        }
        Chains {
            decls,
            first,
            done: vec![None; decls.len()],
        }
    }

    /// The end of `name`'s chain, and the bytes its aliases add up to on the way.
    fn of(&mut self, name: &str) -> Chain {
        let mut path: Vec<usize> = Vec::new();
        let mut on_path = std::collections::HashSet::new();
        let mut name = name;
        let mut end = loop {
            let Some(&i) = self.first.get(name) else {
                break Chain::Missing(name.to_string());
            };
            if let Some(c) = &self.done[i] {
                break c.clone();
            }
            if !on_path.insert(i) {
                break Chain::Cycle;
            }
            path.push(i);
            match &self.decls[i].alias {
                Some(a) => name = &a.target,
                None => break Chain::Root(name.to_string(), 0),
            }
        };
        for &i in path.iter().rev() {
            end = match (&self.decls[i].alias, end) {
                (None, _) => Chain::Root(self.decls[i].name.clone(), 0),
                (Some(a), Chain::Root(r, off)) => Chain::Root(r, off.saturating_add(a.offset)),
                (Some(_), other) => other,
            };
            self.done[i] = Some(end.clone());
        }
        end
    }
}

/// The element indices (in elements of the operand's type, from the variable's start) a
/// region touches for each of `exec_size` channels.
///
/// ```
/// use gpucvt::visa::check::src_elements;
/// assert_eq!(src_elements(2, 8, 2, 2, 4), vec![2, 4, 10, 12]); // <8;2,2> from element 2
/// assert_eq!(src_elements(5, 0, 1, 0, 3), vec![5, 5, 5]);      // scalar <0;1,0>
/// ```
pub fn src_elements(base: u64, vstride: u64, width: u64, hstride: u64, exec: u64) -> Vec<u64> {
    let width = width.max(1);
    (0..exec)
        .map(|i| {
            base.saturating_add((i / width).saturating_mul(vstride))
                .saturating_add((i % width).saturating_mul(hstride))
        })
        .collect()
}

/// The element index of channel `i` of a destination `<hstride>` starting at `base`.
pub fn dst_element(base: u64, hstride: u64, i: u64) -> u64 {
    base.saturating_add(i.saturating_mul(hstride))
}

/// The first element of `Var(row, col)` for a type of `size` bytes.
pub fn base_element(row: u64, col: u64, size: u32, grf_bytes: u32) -> u64 {
    let per_row = (grf_bytes / size.max(1)).max(1) as u64;
    row.saturating_mul(per_row).saturating_add(col)
}

const EXEC_SIZES: [u64; 6] = [1, 2, 4, 8, 16, 32];

/// Reads and checks a `.visaasm` text: the reader's diagnostics and [`check`]'s, in source
/// order (by position; the reader's first at equal positions). This is what `gpucvt check`
/// prints for a `.visaasm` file.
///
/// ```
/// use gpucvt::visa::check::{check_source, CheckOptions};
/// let src = ".decl A v_type=G type=f num_elts=8\n.decl B v_type=G type=hf num_elts=8\nmov (M1, 8) B(0,0)<1> Z(0,0)<1;1,0>\n";
/// let d = check_source(src, &CheckOptions::default());
/// assert_eq!(d[0].span.line, 3);
/// ```
pub fn check_source(text: &str, opts: &CheckOptions) -> Vec<Diagnostic> {
    // Each instruction is checked as soon as it is read, against the declarations read so
    // far, so that memory does not follow the file. That is the whole-kernel answer when
    // the declarations come first, as compilers write them; a `.decl` after an instruction
    // makes a second reading, with every declaration known before the first instruction.
    let mut decls: Vec<Decl> = Vec::new();
    let mut table: Option<HashMap<String, VarInfo>> = None;
    let mut late = false;
    let mut checks = Vec::new();
    let (_, mut all) = super::parse::read(text, &mut |item| match item {
        Item::Decl(d) => {
            late |= table.is_some();
            decls.push(d);
        }
        Item::Stmt(st) if !late => {
            let t = table.get_or_insert_with(|| symbols_and_diags(&decls).0);
            check_stmt(&st, t, opts, &mut checks);
        }
        Item::Stmt(_) => {}
    });
    let (table, mut decl_diags) = symbols_and_diags(&decls);
    if late {
        checks.clear();
        super::parse::read(text, &mut |item| {
            if let Item::Stmt(st) = item {
                check_stmt(&st, &table, opts, &mut checks);
            }
        });
    }
    decl_diags.append(&mut checks);
    decl_diags.sort_by_key(|d| (d.span.start, d.span.end));
    all.append(&mut decl_diags);
    all.sort_by_key(|d| (d.span.line, d.span.col));
    all
}

/// Checks a parsed kernel. The diagnostics are in source order.
pub fn check(k: &Kernel, opts: &CheckOptions) -> Vec<Diagnostic> {
    let (table, mut diags) = symbols_and_diags(&k.decls);
    for s in &k.stmts {
        check_stmt(s, &table, opts, &mut diags);
    }
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    diags
}

/// Checks one instruction against the symbol table.
fn check_stmt(
    s: &Stmt,
    table: &HashMap<String, VarInfo>,
    opts: &CheckOptions,
    diags: &mut Vec<Diagnostic>,
) {
    match s {
        Stmt::Mov(m) => check_mov(m, table, opts, diags),
        Stmt::Skipped(sk) => {
            if sk
                .first_operand
                .as_deref()
                .is_some_and(|o| o.starts_with(CR0_NAME))
            {
                diags.push(Diagnostic::warning(
                    "visa.unsupported",
                    format!(
                        "`{}` writes %cr0 but only mov is executed: its change of rounding or denormal mode is not modelled",
                        sk.mnemonic
                    ),
                    sk.span,
                ));
            }
        }
    }
}

fn untyped(v: &VarInfo, span: Span, diags: &mut Vec<Diagnostic>) {
    if v.ty.is_none() && v.kind == VarKind::General {
        diags.push(Diagnostic::warning(
            "visa.unsupported",
            format!(
                "`{}` has a type outside the modelled subset; the mov is not executed",
                v.name
            ),
            span,
        ));
    }
}

fn lookup<'t>(
    table: &'t HashMap<String, VarInfo>,
    name: &str,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'t VarInfo> {
    match table.get(name) {
        Some(v) => Some(v),
        None => {
            if name.starts_with('%') && name != NULL_NAME {
                diags.push(Diagnostic::warning(
                    "visa.unsupported",
                    format!(
                        "predefined variable `{name}` is not modelled; the mov is not executed"
                    ),
                    span,
                ));
            } else if name != NULL_NAME {
                diags.push(Diagnostic::error(
                    "visa.undeclared",
                    format!("`{name}` is not declared"),
                    span,
                ));
            }
            None
        }
    }
}

fn check_mov(
    m: &Mov,
    table: &HashMap<String, VarInfo>,
    opts: &CheckOptions,
    diags: &mut Vec<Diagnostic>,
) {
    let n = m.exec.size;
    let size_ok = EXEC_SIZES.contains(&n);
    if !size_ok {
        diags.push(Diagnostic::error(
            "visa.exec-size",
            format!("execution size {n} is not 1, 2, 4, 8, 16 or 32"),
            m.exec.span,
        ));
    } else if !(m.exec.offset as u64).is_multiple_of(n) && n <= 32 {
        diags.push(Diagnostic::error(
            "visa.exec-mask",
            format!(
                "mask M{} starts at channel {}, which is not a multiple of the execution size {n}",
                m.exec.offset / 4 + 1,
                m.exec.offset
            ),
            m.exec.span,
        ));
    } else if m.exec.offset as u64 + n > 32 {
        diags.push(Diagnostic::error(
            "visa.exec-mask",
            format!(
                "channels {}..{} run past the 32 channels",
                m.exec.offset,
                m.exec.offset as u64 + n
            ),
            m.exec.span,
        ));
    }
    let n = if size_ok { n } else { 0 };
    // Instruction predicate.
    if let Some(p) = &m.pred {
        if let Some(v) = lookup(table, &p.name, p.span, diags) {
            if v.kind != VarKind::Predicate {
                diags.push(Diagnostic::error(
                    "visa.operand-kind",
                    format!("`{}` is not a predicate variable (v_type=P)", p.name),
                    p.span,
                ));
            } else if p.control == PredControl::PerChannel && m.exec.offset as u64 + n > v.num_elts
            {
                diags.push(Diagnostic::error(
                    "visa.predicate",
                    format!(
                        "`{}` has {} elements but the mov uses channels {}..{}",
                        p.name,
                        v.num_elts,
                        m.exec.offset,
                        m.exec.offset as u64 + n
                    ),
                    p.span,
                ));
            }
        }
    }
    // Destination.
    let dst_ty = match &m.dst {
        DstOperand::Direct { var, hstride, span } => {
            if !matches!(hstride, 1 | 2 | 4) {
                diags.push(Diagnostic::error(
                    "visa.region",
                    format!("destination horizontal stride {hstride} is not 1, 2 or 4"),
                    *span,
                ));
            }
            if var.name == NULL_NAME {
                None
            } else {
                match lookup(table, &var.name, var.name_span, diags) {
                    Some(v) if v.kind != VarKind::General => {
                        diags.push(Diagnostic::error(
                            "visa.operand-kind",
                            format!(
                                "`{}` is not a general variable and cannot be a mov destination",
                                var.name
                            ),
                            var.name_span,
                        ));
                        None
                    }
                    Some(v) => {
                        untyped(v, var.name_span, diags);
                        if let Some(t) = v.ty {
                            let base = base_element(var.row, var.col, t.size(), opts.grf_bytes);
                            let last = (0..n).map(|i| dst_element(base, *hstride, i)).max();
                            if let Some(last) = last {
                                region_bounds(
                                    "destination writes",
                                    last,
                                    &var.name,
                                    v.num_elts,
                                    opts,
                                    *span,
                                    diags,
                                );
                            }
                        }
                        v.ty
                    }
                    None => None,
                }
            }
        }
        DstOperand::Indirect { ind, span, .. } => {
            diags.push(Diagnostic::warning(
                "visa.unsupported",
                "indirect operands are read but not executed",
                *span,
            ));
            indirect_type(&ind.ty, *span, diags)
        }
    };
    // Source.
    let src_ty = match &m.src {
        SrcOperand::Direct {
            var, region, span, ..
        } => {
            check_region(
                region.vstride,
                region.width,
                region.hstride,
                n,
                region.span,
                diags,
            );
            match lookup(table, &var.name, var.name_span, diags) {
                Some(v) if v.kind != VarKind::General => {
                    diags.push(Diagnostic::error(
                        "visa.operand-kind",
                        format!(
                            "`{}` is not a general variable; {}",
                            var.name,
                            if v.kind == VarKind::Predicate {
                                "write a predicate source without (row,col) and region"
                            } else {
                                "it cannot be a mov source"
                            }
                        ),
                        var.name_span,
                    ));
                    None
                }
                Some(v) => {
                    untyped(v, var.name_span, diags);
                    if let Some(t) = v.ty {
                        let base = base_element(var.row, var.col, t.size(), opts.grf_bytes);
                        let els =
                            src_elements(base, region.vstride, region.width, region.hstride, n);
                        if let Some(&last) = els.iter().max() {
                            region_bounds(
                                "source reads",
                                last,
                                &var.name,
                                v.num_elts,
                                opts,
                                *span,
                                diags,
                            );
                        }
                    }
                    v.ty
                }
                None => None,
            }
        }
        SrcOperand::Indirect {
            ind, region, span, ..
        } => {
            check_region(
                region.vstride,
                region.width,
                region.hstride,
                n,
                region.span,
                diags,
            );
            diags.push(Diagnostic::warning(
                "visa.unsupported",
                "indirect operands are read but not executed",
                *span,
            ));
            indirect_type(&ind.ty, *span, diags)
        }
        SrcOperand::Imm(imm) => {
            if imm.decimal_bits {
                diags.push(Diagnostic::warning(
                    "visa.imm-float-bits",
                    format!(
                        "a decimal integer immediate of type {} is a bit pattern, not a value (`1:f` is 2^-149; write `1.0:f`{})",
                        imm.ty,
                        if imm.ty == VisaType::Hf { " as hex, e.g. 0x3c00:hf" } else { "" }
                    ),
                    imm.span,
                ));
            }
            if imm.truncated {
                diags.push(Diagnostic::warning(
                    "visa.imm-range",
                    format!(
                        "the immediate does not fit {}: its low bits {:#x} are used",
                        imm.ty, imm.bits
                    ),
                    imm.span,
                ));
            }
            if imm.ty.is_packed() {
                let per = imm.ty.packed_elements() as u64;
                if n > per {
                    diags.push(Diagnostic::warning(
                        "visa.packed-imm",
                        format!(
                            "a {} immediate holds {per} elements but the mov has {n} channels; channel i takes element i mod {per}",
                            imm.ty
                        ),
                        imm.span,
                    ));
                }
                if imm.ty == VisaType::Vf {
                    diags.push(Diagnostic::warning(
                        "visa.packed-imm",
                        "VF immediates exist only on platforms before Xe2",
                        imm.span,
                    ));
                }
            }
            Some(imm.ty)
        }
        SrcOperand::Pred { name, span } => match lookup(table, name, *span, diags) {
            Some(v) if v.kind == VarKind::Predicate => {
                if n != 1 {
                    diags.push(Diagnostic::error(
                        "visa.predicate",
                        "a mov from a predicate needs execution size 1",
                        m.exec.span,
                    ));
                }
                if m.pred.is_some() {
                    diags.push(Diagnostic::error(
                        "visa.predicate",
                        "a mov from a predicate cannot be predicated",
                        m.span,
                    ));
                }
                if let Some(t) = dst_ty {
                    if matches!(t, VisaType::Ub | VisaType::Uw | VisaType::Ud)
                        && (t.size() as u64) * 8 < v.num_elts
                    {
                        diags.push(Diagnostic::error(
                            "visa.predicate",
                            format!(
                                "{t} has {} bits, fewer than the {} elements of `{name}`",
                                t.size() * 8,
                                v.num_elts
                            ),
                            m.dst.span(),
                        ));
                    }
                }
                Some(VisaType::Bool)
            }
            Some(_) => {
                diags.push(Diagnostic::error(
                    "visa.operand-kind",
                    format!("`{name}` is not a predicate; a variable operand needs (row,col) and a region"),
                    *span,
                ));
                None
            }
            None => None,
        },
    };
    // Modifiers.
    if let Some((md, sp)) = m.src.modifier() {
        if md == SrcMod::Not {
            diags.push(Diagnostic::error(
                "visa.modifier",
                "(~) is a logic modifier; mov takes (-), (abs) or (-abs)",
                sp,
            ));
        } else if src_ty == Some(VisaType::Bf) || dst_ty == Some(VisaType::Bf) {
            diags.push(Diagnostic::warning(
                "visa.bf-mov",
                "the finalizer accepts no source modifier on F <-> BF moves",
                sp,
            ));
        }
    }
    // The type pair.
    let (Some(d), Some(s)) = (dst_ty, src_ty) else {
        return;
    };
    match mov_plan_with(d, s, m.sat, Cr0::OPENCL, &opts.mov) {
        Err(e) => {
            let rule = if s == VisaType::Bool {
                "visa.predicate"
            } else {
                "visa.type-pair"
            };
            diags.push(Diagnostic::error(rule, e.to_string(), m.span));
        }
        Ok(p) => {
            if p.choices.contains(&"bf-via-f") {
                diags.push(Diagnostic::warning(
                    "visa.bf-pair",
                    format!("the vISA type map pairs BF only with F; {d} <- {s} is modelled as two movs through F"),
                    m.span,
                ));
            }
            if d == VisaType::Bf && s == VisaType::F && (m.sat || m.pred.is_some()) {
                diags.push(Diagnostic::warning(
                    "visa.bf-mov",
                    "the finalizer accepts no predicate or .sat on an F -> BF move",
                    m.span,
                ));
            }
            if s == VisaType::Bf && d == VisaType::F && m.pred.is_some() {
                diags.push(Diagnostic::warning(
                    "visa.bf-mov",
                    "the finalizer accepts no predicate on a BF -> F move",
                    m.span,
                ));
            }
        }
    }
}

fn indirect_type(t: &TypeName, span: Span, diags: &mut Vec<Diagnostic>) -> Option<VisaType> {
    match t {
        TypeName::Known(t) if t.is_packed() || *t == VisaType::Bool => {
            diags.push(Diagnostic::error(
                "visa.type-pair",
                format!("indirect operands cannot have type {t}"),
                span,
            ));
            None
        }
        TypeName::Known(t) => Some(*t),
        TypeName::CodeOnly(n) | TypeName::Unknown(n) => {
            diags.push(Diagnostic::error(
                "visa.decl-type",
                format!("`{n}` is not a modelled type"),
                span,
            ));
            None
        }
    }
}

fn check_region(v: u64, w: u64, h: u64, n: u64, span: Span, diags: &mut Vec<Diagnostic>) {
    let mut bad = Vec::new();
    if ![0, 1, 2, 4, 8, 16, 32].contains(&v) {
        bad.push(format!(
            "vertical stride {v} is not 0, 1, 2, 4, 8, 16 or 32"
        ));
    }
    let width_ok = [1, 2, 4, 8, 16].contains(&w);
    if !width_ok {
        bad.push(format!("width {w} is not 1, 2, 4, 8 or 16"));
    }
    if ![0, 1, 2, 4].contains(&h) {
        bad.push(format!("horizontal stride {h} is not 0, 1, 2 or 4"));
    }
    if n > 0 && w > n {
        bad.push(format!("width {w} exceeds the execution size {n}"));
    } else if n > 0 && width_ok && !n.is_multiple_of(w) {
        bad.push(format!(
            "the execution size {n} is not a multiple of the width {w}"
        ));
    }
    for b in bad {
        diags.push(Diagnostic::error("visa.region", b, span));
    }
}

/// `visa.region-bounds`: a region that reaches past the end of its variable.
fn region_bounds(
    what: &str,
    last: u64,
    name: &str,
    num_elts: u64,
    opts: &CheckOptions,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) {
    if last >= num_elts {
        diags.push(Diagnostic::error(
            "visa.region-bounds",
            format!(
                "the {what} element {last} of `{name}`, which has {num_elts} (GRF of {} bytes)",
                opts.grf_bytes
            ),
            span,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::visa::parse::parse;

    fn rules(text: &str) -> Vec<&'static str> {
        let (k, d) = parse(text);
        assert!(d.is_empty(), "{d:?}");
        check(&k, &CheckOptions::default())
            .into_iter()
            .map(|d| d.rule)
            .collect()
    }

    #[test]
    fn declarations() {
        assert_eq!(
            rules(".decl A v_type=G type=f num_elts=8\n.decl A v_type=G type=d num_elts=8\n"),
            ["visa.decl-duplicate"]
        );
        assert_eq!(
            rules(".decl A v_type=G type=vf num_elts=8\n"),
            ["visa.decl-type"]
        );
        assert_eq!(
            rules(".decl A v_type=G type=df num_elts=600\n"),
            ["visa.decl-num-elts"]
        );
        assert_eq!(
            rules(".decl A v_type=G type=f num_elts=8 align=quad\n"),
            ["visa.decl-align"]
        );
        assert_eq!(
            rules(".decl A v_type=G type=f num_elts=8\n.decl B v_type=G type=uw num_elts=17 alias=<A, 0>\n"),
            ["visa.decl-alias"]
        );
        assert_eq!(
            rules(".decl B v_type=G type=uw num_elts=2 alias=<C, 0>\n"),
            ["visa.decl-alias"]
        );
        assert!(rules(
            ".decl A v_type=G type=f num_elts=8\n.decl B v_type=G type=uw num_elts=16 alias=<A, 0>\n"
        )
        .is_empty());
    }

    #[test]
    fn code_only_types() {
        let r = rules(".decl T v_type=G type=tf32 num_elts=8\n.decl F1 v_type=G type=f num_elts=8\nmov (M1, 8) T(0,0)<1> F1(0,0)<1;1,0>\n");
        assert_eq!(r, ["visa.decl-type", "visa.unsupported"]);
    }

    #[test]
    fn movs() {
        let decls = ".decl F1 v_type=G type=f num_elts=16\n.decl H v_type=G type=hf num_elts=16\n.decl P v_type=P num_elts=16\n.decl BF1 v_type=G type=bf num_elts=16\n";
        let r = |body: &str| rules(&format!("{decls}{body}\n"));
        assert!(r("mov (M1, 16) H(0,0)<1> F1(0,0)<1;1,0>").is_empty());
        assert_eq!(
            r("mov (M1, 12) H(0,0)<1> F1(0,0)<1;1,0>"),
            ["visa.exec-size"]
        );
        assert_eq!(
            r("mov (M2, 8) H(0,0)<1> F1(0,0)<1;1,0>"),
            ["visa.exec-mask"]
        );
        assert_eq!(
            r("mov (M1, 16) H(0,0)<1> F1(0,0)<2;1,0>"),
            ["visa.region-bounds"]
        );
        assert_eq!(r("mov (M1, 16) H(0,0)<1> F1(0,0)<1;3,0>"), ["visa.region"]);
        assert_eq!(
            r("mov (M1, 16) H(0,0)<1> X(0,0)<1;1,0>"),
            ["visa.undeclared"]
        );
        assert_eq!(r("mov (M1, 1) H(0,0)<1> P"), ["visa.predicate"]);
        assert_eq!(
            r("mov (M1, 16) BF1(0,0)<1> H(0,0)<1;1,0>"),
            ["visa.bf-pair"]
        );
        assert_eq!(
            r("mov.sat (M1, 16) BF1(0,0)<1> F1(0,0)<1;1,0>"),
            ["visa.bf-mov"]
        );
        assert_eq!(
            r("mov (M1, 16) H(0,0)<1> (~)F1(0,0)<1;1,0>"),
            ["visa.modifier"]
        );
        assert_eq!(r("(P) mov (M1, 16) H(0,0)<1> 1:f"), ["visa.imm-float-bits"]);
        assert_eq!(
            r("(F1) mov (M1, 16) H(0,0)<1> 1.0:f"),
            ["visa.operand-kind"]
        );
        assert_eq!(
            r("mov (M1, 16) H(0,0)<1> 0x76543210:v"),
            ["visa.packed-imm"]
        );
        assert_eq!(r("mov (M1, 16) H(0,0)<1> 300:b"), ["visa.imm-range"]);
        assert_eq!(
            r("and (M1, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0x30:ud"),
            ["visa.unsupported"]
        );
    }
}
