//! The dialect's verifier for the nine conversion ops (`tile-ir.md` §1), per spec version,
//! with the dialect's wording (§4): the parser's rounding-word checks, the element-type
//! classes of the operand and the result, the same-shape trait, then each op's own rules.
//! Like MLIR, an op reports only its first failure. Messages of the op verifier are prefixed
//! `'cuda_tile.<op>' op ` and point at the op's location (its first result); the parser's
//! messages point at the offending word.
//!
//! ```
//! use gpucvt::tile::{check::verify_op, parse::parse_op, types::SpecVersion};
//! let op = parse_op("%r = ftof %x : tile<2xf16> -> tile<2xf16>").unwrap();
//! let d = verify_op(&op, SpecVersion::V13_3);
//! assert_eq!(d[0].message, "'cuda_tile.ftof' op converting tiles must not be a no-op");
//! ```
//!
//! # Choices where the sources are silent
//!
//! - 13.4 wording of an illegal `ftof` mode (not quoted anywhere): `invalid rounding mode
//!   specified. Only 'nearest_even' and 'zero' are supported` (the list of the matching rule
//!   of the 13.4 table).
//! - `fnv8E5M3FNU` destinations of `ftof` follow the fp8 row (`nearest_even` only), as the
//!   only PTX form is `cvt.rn.satfinite.ue5m3x2.f32`.
//! - `saturating` before 13.4, and types newer than the selected version, are rejected as
//!   the older parser or type constraint would (the type list of the class is the one of the
//!   selected version).

use super::parse::{Arg, Binding, ConvOp, Event, Op, Spanned, Stmt, TileFile, ValueType};
use super::types::{ElemType, Element, OpKind, RoundingMode, SpecVersion, TileType};
use crate::diag::{Diagnostic, Span};
use std::collections::HashMap;

const RULE_VERIFY: &str = "tile.verify";
const RULE_ROUNDING: &str = "tile.rounding";
const RULE_SYNTAX: &str = "tile.syntax";
const RULE_SSA: &str = "tile.ssa";

/// An element-type class of the dialect's type constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// `IntTileType`: i1 i8 i16 i32 i64.
    Int,
    /// `ExtIOp_IntegerType`: IntTileType and i4 (13.3).
    IntWithI4,
    /// `FloatTileType`.
    Float,
    /// `NumberTileType`.
    Number,
    /// `IntTileInt64Type`.
    I64,
    /// `PointerTileType`.
    Pointer,
}

impl Class {
    fn members(self, v: SpecVersion) -> Vec<ElemType> {
        use ElemType::*;
        let avail = |t: &ElemType| t.since() <= v;
        let ints = [I1, I8, I16, I32, I64];
        let floats = [
            F16,
            BF16,
            F32,
            F64,
            TF32,
            F8E4M3FN,
            F8E5M2,
            F8E8M0FNU,
            F4E2M1FN,
            FNV8E5M3FNU,
        ];
        let list: Vec<ElemType> = match self {
            Class::Int => ints.to_vec(),
            Class::IntWithI4 => vec![I1, I4, I8, I16, I32, I64],
            Class::Float => floats.to_vec(),
            Class::Number => ints.iter().chain(floats.iter()).copied().collect(),
            Class::I64 => vec![I64],
            Class::Pointer => Vec::new(),
        };
        list.into_iter().filter(avail).collect()
    }

    fn accepts(self, e: Element, v: SpecVersion) -> bool {
        match (self, e) {
            (Class::Pointer, Element::Ptr(t)) => t.is_number() && t.since() <= v,
            (Class::Pointer, Element::Num(_)) => false,
            (_, Element::Ptr(_)) => false,
            (c, Element::Num(t)) => c.members(v).contains(&t),
        }
    }

    fn describe(self, v: SpecVersion) -> String {
        match self {
            Class::Pointer => "tile of pointer values".into(),
            c => {
                let names: Vec<&str> = c.members(v).iter().map(|t| t.name()).collect();
                format!("tile of {} values", names.join(" or "))
            }
        }
    }
}

fn classes(kind: OpKind) -> (Class, Class) {
    match kind {
        OpKind::Bitcast => (Class::Number, Class::Number),
        OpKind::ExtI | OpKind::TruncI => (Class::IntWithI4, Class::IntWithI4),
        OpKind::FtoF => (Class::Float, Class::Float),
        OpKind::FtoI => (Class::Float, Class::Int),
        OpKind::ItoF => (Class::Int, Class::Float),
        OpKind::IntToPtr => (Class::I64, Class::Pointer),
        OpKind::PtrToInt => (Class::Pointer, Class::I64),
        OpKind::PtrToPtr => (Class::Pointer, Class::Pointer),
    }
}

/// The rounding words the parser of `itof`/`ftof` accepts at a version.
fn ieee_words(v: SpecVersion) -> Vec<RoundingMode> {
    let mut w = vec![
        RoundingMode::NearestEven,
        RoundingMode::Zero,
        RoundingMode::NegativeInf,
        RoundingMode::PositiveInf,
    ];
    if v >= SpecVersion::V13_4 {
        w.push(RoundingMode::NearestAway);
    }
    w
}

fn quote_list(modes: &[RoundingMode]) -> String {
    modes
        .iter()
        .map(|m| format!("'{}'", m.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn only_list(modes: &[RoundingMode]) -> String {
    let q: Vec<String> = modes.iter().map(|m| format!("'{}'", m.name())).collect();
    match q.len() {
        0 => "Only nothing is supported".into(),
        1 => format!("Only {} is supported", q[0]),
        n => format!(
            "Only {} and {} are supported",
            q[..n - 1].join(", "),
            q[n - 1]
        ),
    }
}

/// Whether every value of `src` is exactly representable in `dst` (the 13.4 table's
/// "strict widening"): no more precision, no finer lowest bit, no larger maximum, and a
/// sign where the source has one.
pub fn exactly_representable(src: ElemType, dst: ElemType) -> bool {
    use gpucvt_core::format::Layout;
    use gpucvt_core::value::Class as VClass;
    let (fs, fd) = (src.format(None), dst.format(None));
    let (Layout::Float(ls), Layout::Float(ld)) = (fs.layout, fd.layout) else {
        return false;
    };
    if src == dst || (ls.signed && !ld.signed) {
        return false;
    }
    let lsb = |f: &gpucvt_core::Format| match f.decode(f.min_positive_bits()).class {
        VClass::Finite(d) => d.exp,
        _ => 0,
    };
    let max = |f: &gpucvt_core::Format| f.decode(f.max_finite_bits());
    let max_ok = matches!(
        max(&fs).partial_cmp_value(&max(&fd)),
        Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
    );
    ls.man_bits <= ld.man_bits && lsb(&fs) >= lsb(&fd) && max_ok
}

/// The `ftof` modes legal for `src → dst` at a version (`tile-ir.md` §1.2, §1.4).
pub fn ftof_modes(src: ElemType, dst: ElemType, v: SpecVersion) -> Vec<RoundingMode> {
    use ElemType::*;
    use RoundingMode::*;
    if v <= SpecVersion::V13_2 {
        return vec![NearestEven];
    }
    if dst == F8E8M0FNU {
        return vec![Zero, PositiveInf];
    }
    if v == SpecVersion::V13_3 {
        return vec![NearestEven];
    }
    if matches!(dst, F8E4M3FN | F8E5M2 | F4E2M1FN | FNV8E5M3FNU) {
        vec![NearestEven]
    } else if exactly_representable(src, dst) {
        vec![NearestEven, Zero, NegativeInf, PositiveInf, NearestAway]
    } else if src == F64 && dst == F32 {
        vec![NearestEven, Zero, NegativeInf, PositiveInf]
    } else if src == F32 && dst == TF32 {
        vec![NearestEven, Zero, NearestAway]
    } else {
        vec![NearestEven, Zero]
    }
}

fn op_err(kind: OpKind, msg: impl AsRef<str>, span: Span) -> Diagnostic {
    Diagnostic::error(
        RULE_VERIFY,
        format!("'cuda_tile.{}' op {}", kind.name(), msg.as_ref()),
        span,
    )
}

/// Verifies one conversion op at a spec version: the parser's version-dependent checks, then
/// the op verifier. Returns the first failure (two diagnostics for nothing but the parser's
/// signedness error, which [`super::parse`] reports itself), or nothing when the op is valid.
pub fn verify_op(op: &ConvOp, v: SpecVersion) -> Vec<Diagnostic> {
    match verify_inner(op, v) {
        Ok(()) => Vec::new(),
        Err(d) => vec![d],
    }
}

fn verify_inner(op: &ConvOp, v: SpecVersion) -> Result<(), Diagnostic> {
    let k = op.kind;
    let loc = op.loc;
    // Parser-level checks, in the order the words appear.
    if let Some(w) = &op.rounding {
        let word = w.value.as_str();
        let mode = RoundingMode::from_name(word);
        match k {
            OpKind::FtoI => {
                if mode != Some(RoundingMode::NearestIntToZero) {
                    return Err(Diagnostic::error(
                        RULE_ROUNDING,
                        format!(
                            "expected rounding mode to be one of: 'nearest_int_to_zero', got: \
                             '{word}'"
                        ),
                        w.span,
                    ));
                }
            }
            _ => {
                let allowed = ieee_words(v);
                if !mode.is_some_and(|m| allowed.contains(&m)) {
                    return Err(Diagnostic::error(
                        RULE_ROUNDING,
                        format!(
                            "expected rounding mode to be one of: {}, got: '{word}'",
                            quote_list(&allowed)
                        ),
                        w.span,
                    ));
                }
            }
        }
    }
    if let Some(s) = op.saturating {
        if v < SpecVersion::V13_4 {
            return Err(Diagnostic::error(
                RULE_SYNTAX,
                format!(
                    "expected ':' ('saturating' needs Tile IR 13.4, the selected version is {v})"
                ),
                s,
            ));
        }
    }
    let (src, dst) = (&op.src.value, &op.dst.value);
    let (cs, cd) = classes(k);
    if !cs.accepts(src.elem, v) {
        return Err(op_err(
            k,
            format!(
                "operand #0 must be {}, but got '{}'",
                cs.describe(v),
                src.long()
            ),
            loc,
        ));
    }
    if !cd.accepts(dst.elem, v) {
        return Err(op_err(
            k,
            format!(
                "result #0 must be {}, but got '{}'",
                cd.describe(v),
                dst.long()
            ),
            loc,
        ));
    }
    if src.shape != dst.shape {
        let (a, b) = k.operand_names();
        return Err(op_err(
            k,
            format!("failed to verify that all of {{{a}, {b}}} have same shape"),
            loc,
        ));
    }
    let (Some(s), Some(d)) = (src.num(), dst.num()) else {
        return Ok(()); // pointer ops: nothing more
    };
    match k {
        OpKind::Bitcast if s.mlir_width() != d.mlir_width() => {
            return Err(op_err(
                k,
                format!(
                    "types must be equal width, cannot convert '{}' of width {} to type '{}' \
                     of width {}",
                    src.long(),
                    s.mlir_width(),
                    dst.long(),
                    d.mlir_width()
                ),
                loc,
            ));
        }
        OpKind::ExtI if d.mlir_width() <= s.mlir_width() => {
            return Err(op_err(k, "extending to smaller or identical integer", loc));
        }
        OpKind::TruncI if d.mlir_width() >= s.mlir_width() => {
            return Err(op_err(k, "truncating to larger or identical integer", loc));
        }
        OpKind::FtoF => {
            if src == dst {
                return Err(op_err(k, "converting tiles must not be a no-op", loc));
            }
            let mode = op.rounding_mode().unwrap_or(RoundingMode::NearestEven);
            let legal = ftof_modes(s, d, v);
            if !legal.contains(&mode) {
                let msg = if v <= SpecVersion::V13_2 {
                    "invalid rounding mode specified for ftof. Only 'nearest_even' is supported"
                        .to_string()
                } else if d == ElemType::F8E8M0FNU {
                    "invalid rounding mode specified for conversion to f8E8M0FNU. Only 'zero' \
                     and 'positive_inf' are supported"
                        .to_string()
                } else {
                    format!("invalid rounding mode specified. {}", only_list(&legal))
                };
                return Err(op_err(k, msg, loc));
            }
        }
        OpKind::ItoF => {
            if d == ElemType::F8E8M0FNU && v >= SpecVersion::V13_3 {
                return Err(op_err(
                    k,
                    "integer to f8E8M0FNU conversion is not supported, please first convert to \
                     another float type",
                    loc,
                ));
            }
            if op.rounding_mode() != Some(RoundingMode::NearestEven) {
                let word = if v <= SpecVersion::V13_2 {
                    "error"
                } else {
                    "mode"
                };
                return Err(op_err(
                    k,
                    format!("invalid rounding {word} specified. Only 'nearest_even' is supported"),
                    loc,
                ));
            }
        }
        OpKind::FtoI if op.rounding_mode() != Some(RoundingMode::NearestIntToZero) => {
            return Err(op_err(
                k,
                "invalid rounding mode specified. Only 'nearest_int_to_zero' is supported",
                loc,
            ));
        }
        _ => {}
    }
    Ok(())
}

fn check_type_version(ty: &TileType, span: Span, v: SpecVersion, out: &mut Vec<Diagnostic>) {
    let t = match ty.elem {
        Element::Num(t) | Element::Ptr(t) => t,
    };
    if t.since() > v {
        out.push(Diagnostic::error(
            "tile.type",
            format!(
                "element type '{t}' is not available in Tile IR {v} (added in {})",
                t.since()
            ),
            span,
        ));
    }
}

/// The text a Tile IR source is read as, for showing its lines: without a leading byte
/// order mark, each lone CR an LF ([`crate::diag::lone_cr_to_lf`]); the reader treats both
/// the same way, so positions do not change.
pub fn source_text(text: String) -> String {
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    crate::diag::lone_cr_to_lf(text)
}

/// Every diagnostic of a Tile IR source at a version, the reader's notes included, in
/// position order: what `gpucvt check FILE.mlir` reports. Give it [`source_text`]'s text.
///
/// Each statement is checked as soon as it is read and then dropped, so that memory follows
/// the values a function defines (their names and types), not the text. A block label
/// after a statement in a generic function's body (its arguments declared late) makes a
/// second reading of the whole file.
pub fn check_source(text: &str, v: SpecVersion) -> Vec<Diagnostic> {
    // The diagnostics of the functions of each open module (the reader leaves a malformed
    // module out with its functions), innermost last; the file's at the bottom.
    let mut modules: Vec<Vec<Diagnostic>> = vec![Vec::new()];
    let mut current: Option<(Scope, Vec<Diagnostic>, bool)> = None;
    let mut late = false;
    let file = super::parse::read_functions(text, &mut |e| match e {
        Event::Function(f) => {
            let mut scope = Scope::default();
            let mut diags = Vec::new();
            define_args(&f.args, &f.other_args, &mut scope, v, &mut diags);
            current = Some((scope, diags, false));
        }
        Event::Labels(bindings) => {
            if let Some((scope, diags, seen_stmt)) = &mut current {
                late |= *seen_stmt;
                let (args, others) = split_args(bindings);
                define_args(&args, &others, scope, v, diags);
            }
        }
        Event::Stmt(st) => {
            if let Some((scope, diags, seen_stmt)) = &mut current {
                *seen_stmt = true;
                check_stmt(&st, scope, v, diags);
            }
        }
        Event::End => {
            if let (Some((_, mut diags, _)), Some(m)) = (current.take(), modules.last_mut()) {
                m.append(&mut diags);
            }
        }
        Event::Abort => current = None,
        Event::Module => modules.push(Vec::new()),
        Event::ModuleEnd | Event::ModuleAbort if modules.len() > 1 => {
            let mut inner = modules.pop().unwrap_or_default();
            if matches!(e, Event::ModuleEnd) {
                if let Some(m) = modules.last_mut() {
                    m.append(&mut inner);
                }
            }
        }
        Event::ModuleEnd | Event::ModuleAbort => {}
    });
    let mut out = modules.into_iter().flatten().collect::<Vec<_>>();
    if late {
        let file = super::parse::parse_file(text);
        out = check_file(&file, v);
        out.retain(|d| !file.diagnostics.contains(d));
    }
    let mut diags = file.diagnostics;
    diags.append(&mut out);
    diags.extend(file.notes);
    diags.sort_by_key(|d| (d.span.line, d.span.col));
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert(d.clone()));
    diags
}

/// Block-label bindings as a function's arguments: the tiles, and the others.
fn split_args(bindings: &[Binding]) -> (Vec<Arg>, Vec<Binding>) {
    let mut args = Vec::new();
    let mut others = Vec::new();
    for b in bindings {
        match &b.ty {
            ValueType::Tile(ty) => args.push(Arg {
                name: b.name.clone(),
                ty: ty.clone(),
                span: b.span,
            }),
            _ => others.push(b.clone()),
        }
    }
    (args, others)
}

/// A function's arguments into its scope: tiles (with their element types' versions
/// checked), then the others.
fn define_args(
    args: &[Arg],
    others: &[Binding],
    scope: &mut Scope,
    v: SpecVersion,
    out: &mut Vec<Diagnostic>,
) {
    for a in args {
        check_type_version(&a.ty, a.span, v, out);
        let k = scope.tile(&a.ty);
        scope.define(&a.name, k);
    }
    for a in others {
        let k = scope.of(&a.ty);
        scope.define(&a.name, k);
    }
}

/// Every diagnostic of a file at a version: the reader's, then for each function in order,
/// SSA errors (undeclared values, a type that differs from the value's), element types newer
/// than the version, and each conversion op's verification, in the regions of skipped ops
/// too. The reader's notes are not included (see [`TileFile::notes`]).
pub fn check_file(file: &TileFile, v: SpecVersion) -> Vec<Diagnostic> {
    let mut out = file.diagnostics.clone();
    for m in &file.modules {
        for f in &m.functions {
            let mut scope = Scope::default();
            define_args(&f.args, &f.other_args, &mut scope, v, &mut out);
            for s in &f.body {
                check_stmt(s, &mut scope, v, &mut out);
            }
        }
    }
    out
}

/// What the checker knows of a value's type: an index into the scope's types.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Known {
    Tile(u32),
    Other(u32),
    /// Defined by an op gpucvt does not model, or bound without a type.
    Unknown,
}

/// The values in scope, each name with what is known of its type (the distinct types kept
/// once: a function of a million values of a few types keeps a few types). Leaving a region
/// drops what it defined, through an undo log kept only inside regions.
#[derive(Default)]
struct Scope {
    map: HashMap<Box<str>, Known>,
    undo: Vec<(Box<str>, Option<Known>)>,
    /// How many regions enclose the statement being checked.
    regions: usize,
    tiles: Vec<TileType>,
    tile_ids: HashMap<TileType, u32>,
    others: Vec<String>,
    other_ids: HashMap<String, u32>,
}

impl Scope {
    fn tile(&mut self, t: &TileType) -> Known {
        if let Some(&i) = self.tile_ids.get(t) {
            return Known::Tile(i);
        }
        let i = u32::try_from(self.tiles.len()).unwrap_or(u32::MAX);
        self.tiles.push(t.clone());
        self.tile_ids.insert(t.clone(), i);
        Known::Tile(i)
    }

    fn other(&mut self, t: &str) -> Known {
        if let Some(&i) = self.other_ids.get(t) {
            return Known::Other(i);
        }
        let i = u32::try_from(self.others.len()).unwrap_or(u32::MAX);
        self.others.push(t.to_string());
        self.other_ids.insert(t.to_string(), i);
        Known::Other(i)
    }

    fn of(&mut self, t: &ValueType) -> Known {
        match t {
            ValueType::Tile(t) => self.tile(t),
            ValueType::Other(s) => self.other(s),
            ValueType::Unknown => Known::Unknown,
        }
    }

    fn define(&mut self, name: &str, k: Known) {
        let old = self.map.insert(name.into(), k);
        if self.regions > 0 {
            self.undo.push((name.into(), old));
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Enters a region: the mark to leave it by.
    fn enter(&mut self) -> usize {
        self.regions += 1;
        self.undo.len()
    }

    fn leave(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let Some((name, old)) = self.undo.pop() else {
                break;
            };
            match old {
                Some(k) => self.map.insert(name, k),
                None => self.map.remove(&name),
            };
        }
        self.regions = self.regions.saturating_sub(1);
    }

    fn describe(&self, k: Known) -> String {
        match k {
            Known::Tile(i) => self.tiles.get(i as usize).map(ToString::to_string),
            Known::Other(i) => self.others.get(i as usize).cloned(),
            Known::Unknown => None,
        }
        .unwrap_or_default()
    }
}

fn undeclared(o: &Spanned<String>) -> Diagnostic {
    Diagnostic::error(RULE_SSA, "use of undeclared SSA value name", o.span)
}

fn check_stmt(s: &Stmt, scope: &mut Scope, v: SpecVersion, out: &mut Vec<Diagnostic>) {
    match &s.op {
        Op::Constant(c) => {
            check_type_version(&c.ty, s.span, v, out);
            if let Some(r) = s.results.first() {
                let k = scope.tile(&c.ty);
                scope.define(&r.value, k);
            }
        }
        Op::Convert(c) => {
            if let Some(d) = use_check(c.operand.as_ref(), &c.src.value, scope) {
                out.push(d);
            } else {
                out.extend(verify_op(c, v));
            }
            if let Some(r) = s.results.first() {
                let k = scope.tile(&c.dst.value);
                scope.define(&r.value, k);
            }
        }
        Op::Return(ops) => {
            for o in ops {
                if !scope.contains(&o.value) {
                    out.push(undeclared(o));
                }
            }
        }
        Op::Other(_) => {
            for r in &s.regions {
                let mark = scope.enter();
                for a in &r.args {
                    // A header name already in scope is a use, not a new value.
                    if !matches!(a.ty, ValueType::Unknown) || !scope.contains(&a.name) {
                        let k = scope.of(&a.ty);
                        scope.define(&a.name, k);
                    }
                }
                for st in &r.body {
                    check_stmt(st, scope, v, out);
                }
                scope.leave(mark);
            }
            for r in &s.results {
                scope.define(&r.value, Known::Unknown);
            }
        }
    }
}

fn use_check(
    operand: Option<&Spanned<String>>,
    ty: &TileType,
    scope: &Scope,
) -> Option<Diagnostic> {
    let o = operand?;
    let prior = match scope.map.get(o.value.as_str()) {
        None => return Some(undeclared(o)),
        Some(Known::Unknown) => return None,
        Some(&Known::Tile(i)) if scope.tiles.get(i as usize) == Some(ty) => return None,
        Some(&k) => scope.describe(k),
    };
    Some(Diagnostic::error(
        RULE_SSA,
        format!(
            "use of value '%{}' expects different type than prior uses: '{}' vs '{}'",
            o.value, ty, prior
        ),
        o.span,
    ))
}

/// One row of the legality table: an op and an element-type pair, with the rounding modes
/// it accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegalEntry {
    /// The op.
    pub op: OpKind,
    /// The source element.
    pub src: Element,
    /// The result element.
    pub dst: Element,
    /// The rounding modes that may be written (the first is the default; empty for ops
    /// without rounding).
    pub modes: Vec<RoundingMode>,
    /// Whether `saturating` may be written (`ftoi`, 13.4).
    pub saturating: bool,
}

/// Which op, element-type pair and rounding mode is legal at a version: every pair the
/// verifier accepts (with `signed` where a signedness is needed; signedness never changes
/// legality), in op order, then source, then result type order.
pub fn legal_table(v: SpecVersion) -> Vec<LegalEntry> {
    let mut nums: Vec<Element> = ElemType::ALL.iter().map(|&t| Element::Num(t)).collect();
    let ptrs: Vec<Element> = ElemType::ALL
        .iter()
        .filter(|t| t.is_number())
        .map(|&t| Element::Ptr(t))
        .collect();
    nums.extend(ptrs);
    let mut out = Vec::new();
    for k in OpKind::ALL {
        for &s in &nums {
            for &d in &nums {
                let mut op = ConvOp::new(
                    k,
                    TileType {
                        shape: vec![2],
                        elem: s,
                    },
                    TileType {
                        shape: vec![2],
                        elem: d,
                    },
                );
                if k.has_signedness() {
                    op.signedness = Some(super::types::Signedness::Signed);
                }
                let candidates: Vec<RoundingMode> = match k {
                    OpKind::FtoI => vec![RoundingMode::NearestIntToZero],
                    OpKind::FtoF | OpKind::ItoF => ieee_words(v),
                    _ => Vec::new(),
                };
                let mut modes = Vec::new();
                if candidates.is_empty() {
                    if verify_inner(&op, v).is_err() {
                        continue;
                    }
                } else {
                    // The default first.
                    let mut ordered = candidates.clone();
                    if let Some(def) = k.default_rounding() {
                        ordered.retain(|&m| m != def);
                        ordered.insert(0, def);
                    }
                    for m in ordered {
                        op.rounding = Some(Spanned {
                            value: m.name().to_string(),
                            span: Span::default(),
                        });
                        if verify_inner(&op, v).is_ok() {
                            modes.push(m);
                        }
                    }
                    if modes.is_empty() {
                        continue;
                    }
                }
                out.push(LegalEntry {
                    op: k,
                    src: s,
                    dst: d,
                    modes,
                    saturating: k == OpKind::FtoI && v >= SpecVersion::V13_4,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElemType::*;
    use RoundingMode::*;

    #[test]
    fn widening() {
        assert!(exactly_representable(F16, F32));
        assert!(exactly_representable(F8E4M3FN, F16));
        assert!(exactly_representable(F8E8M0FNU, BF16));
        assert!(exactly_representable(TF32, F32));
        assert!(!exactly_representable(BF16, F16));
        assert!(!exactly_representable(F32, TF32));
        assert!(!exactly_representable(F8E8M0FNU, F16));
        assert!(!exactly_representable(F16, F8E8M0FNU));
    }

    #[test]
    fn ftof_table() {
        let v = SpecVersion::V13_4;
        assert_eq!(ftof_modes(F32, F16, v), [NearestEven, Zero]);
        assert_eq!(ftof_modes(F64, F32, v).len(), 4);
        assert_eq!(ftof_modes(F32, TF32, v), [NearestEven, Zero, NearestAway]);
        assert_eq!(ftof_modes(F32, F64, v).len(), 5);
        assert_eq!(ftof_modes(F32, F8E8M0FNU, v), [Zero, PositiveInf]);
        assert_eq!(ftof_modes(F32, F64, SpecVersion::V13_3), [NearestEven]);
    }

    #[test]
    fn table_has_rows() {
        let t = legal_table(SpecVersion::V13_4);
        assert!(t.iter().any(|e| e.op == OpKind::FtoF
            && e.src == Element::Num(F32)
            && e.dst == Element::Num(F16)));
        assert!(!t
            .iter()
            .any(|e| e.op == OpKind::ItoF && e.dst == Element::Num(F8E8M0FNU)));
        assert!(!t.iter().any(|e| e.op == OpKind::Bitcast
            && e.src == Element::Num(TF32)
            && e.dst == Element::Num(I32)));
        let t13 = legal_table(SpecVersion::V13_1);
        assert!(!t13.iter().any(|e| e.src == Element::Num(I4)));
    }
}
