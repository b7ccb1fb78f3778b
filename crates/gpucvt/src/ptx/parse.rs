//! Reading PTX: one `cvt`/`cvt.pack` instruction ([`parse_instruction`]) or a whole module
//! ([`parse_file`]).
//!
//! The instruction reader keeps a span for every modifier and type token, so that a
//! diagnostic can point at `.relu` rather than at the whole line; modifier order is free, as
//! for ptxas (`cvt.f16.rn.f32` is `cvt.rn.f16.f32`).
//!
//! The file reader understands the module structure (`.version`, `.target`,
//! `.address_size`, `.entry`/`.func` with parameters, nested blocks, labels, predicates,
//! `.reg` declarations including vectors and parameterized names such as `%r<100>`), `mov`
//! and `cvt`/`cvt.pack`. Every other instruction is kept as an opaque statement, never an
//! error.
//!
//! ```
//! use gpucvt::ptx::parse::{parse_instruction, OperandKind};
//! use gpucvt::ptx::{PtxType, RoundMod};
//! let i = parse_instruction("cvt.rn.f16.f32 %f16_d, %f32_a;").unwrap();
//! assert_eq!(i.form.rounding, Some(RoundMod::Rn));
//! assert_eq!((i.form.dtype, i.form.atype), (PtxType::F16, PtxType::F32));
//! let ops = i.operands.as_ref().unwrap();
//! assert!(matches!(&ops[1].kind, OperandKind::Reg(r) if r.name == "%f32_a"));
//! // The bare form (no operands) is accepted too:
//! let bare = parse_instruction("cvt.rn.satfinite.e4m3x2.f32").unwrap();
//! assert!(bare.operands.is_none() && bare.form.satfinite);
//! // Errors carry positions:
//! let err = parse_instruction("cvt.rn.f16.f33 %h, %f;").unwrap_err();
//! assert_eq!((err[0].span.line, err[0].span.col), (1, 11));
//! ```

use super::form::{CvtForm, Modifier, RoundMod, Scaled};
use super::lexer::{lex, Token, TokenKind};
use super::target::{PtxVersion, Target};
use super::types::{PtxType, RegType};
use crate::diag::{Diagnostic, Span};

/// What one dotted part of a `cvt` opcode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartKind {
    /// A rounding modifier.
    Rounding(RoundMod),
    /// A boolean modifier.
    Modifier(Modifier),
    /// A `.scaled::…` qualifier.
    Scaled(Scaled),
    /// A type; the first is `.dtype`, the second `.atype`, a third `cvt.pack`'s `.ctype`.
    Type(PtxType),
}

/// One dotted part of a `cvt` opcode, with its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Part {
    /// What it is.
    pub kind: PartKind,
    /// Where it is (the dot included).
    pub span: Span,
}

/// A register operand: `%r1`, or one element of a vector register, `%v.x`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegRef {
    /// The register's name (`%v` for `%v.x`).
    pub name: String,
    /// The element index of `.x/.y/.z/.w` (or `.r/.g/.b/.a`), if any.
    pub component: Option<u8>,
}

/// The value of an immediate operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Immediate {
    /// An integer literal (decimal, `0x…`, octal `0…`, binary `0b…`), sign applied.
    Int(i128),
    /// A single-precision literal `0fXXXXXXXX`: its bits.
    F32(u32),
    /// A double-precision literal, `0dXXXXXXXXXXXXXXXX` or decimal (`1.5`, `1e-3`, which PTX
    /// reads as a double): its bits.
    F64(u64),
}

impl Immediate {
    /// Whether this is a floating-point literal.
    pub fn is_float(self) -> bool {
        !matches!(self, Immediate::Int(_))
    }
}

/// What an operand is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// A register.
    Reg(RegRef),
    /// A literal.
    Imm(Immediate),
    /// A vector expression `{a, b, …}`.
    Vector(Vec<Operand>),
    /// The sink `_`.
    Sink,
}

/// One operand, with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Operand {
    /// What it is.
    pub kind: OperandKind,
    /// Where it is.
    pub span: Span,
}

/// A guard predicate `@%p` or `@!%p`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Predicate {
    /// `@!%p`.
    pub negated: bool,
    /// The predicate register.
    pub reg: String,
    /// Where it is.
    pub span: Span,
}

/// A parsed `cvt` or `cvt.pack` instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The canonical form (types and modifiers, order forgotten).
    pub form: CvtForm,
    /// The whole instruction, opcode to last operand.
    pub span: Span,
    /// The `cvt` (or `cvt.pack`) part of the opcode.
    pub opcode: Span,
    /// Every modifier and type part, in source order.
    pub parts: Vec<Part>,
    /// The operands; `None` for the bare form (`cvt.rn.f16.f32` alone).
    pub operands: Option<Vec<Operand>>,
    /// The guard predicate, if any.
    pub predicate: Option<Predicate>,
}

impl Instruction {
    /// The span of the rounding modifier, if written.
    pub fn rounding_span(&self) -> Option<Span> {
        self.parts
            .iter()
            .find(|p| matches!(p.kind, PartKind::Rounding(_)))
            .map(|p| p.span)
    }

    /// The span of the boolean modifier `m`, if written.
    pub fn modifier_span(&self, m: Modifier) -> Option<Span> {
        self.parts
            .iter()
            .find(|p| p.kind == PartKind::Modifier(m))
            .map(|p| p.span)
    }

    /// The span of the `.scaled::…` qualifier, if written.
    pub fn scaled_span(&self) -> Option<Span> {
        self.parts
            .iter()
            .find(|p| matches!(p.kind, PartKind::Scaled(_)))
            .map(|p| p.span)
    }

    /// The span of the `i`-th type (0: `.dtype`, 1: `.atype`, 2: `.ctype`).
    pub fn type_span(&self, i: usize) -> Option<Span> {
        self.parts
            .iter()
            .filter(|p| matches!(p.kind, PartKind::Type(_)))
            .nth(i)
            .map(|p| p.span)
    }

    /// The span from the first to the last type.
    pub fn types_span(&self) -> Span {
        let mut types = self
            .parts
            .iter()
            .filter(|p| matches!(p.kind, PartKind::Type(_)));
        match types.next() {
            Some(first) => {
                let last = types.next_back().unwrap_or(first);
                Span {
                    end: last.span.end,
                    ..first.span
                }
            }
            None => self.opcode,
        }
    }
}

/// Reads one `cvt` or `cvt.pack` instruction, with operands (`cvt.rn.f16.f32 %h, %f;`) or
/// without (`cvt.rn.f16.f32`), an optional guard (`@%p`) and an optional `;`.
///
/// # Errors
/// Every problem found, each with its position: unknown modifiers or types, repeated
/// modifiers, a missing type, malformed operands, another instruction than `cvt`.
pub fn parse_instruction(text: &str) -> Result<Instruction, Vec<Diagnostic>> {
    let lexed = lex(text);
    let mut diags = lexed.diagnostics;
    let mut toks: &[Token] = &lexed.tokens;
    if let Some(last) = toks.last() {
        if last.is_punct(text, ';') {
            toks = &toks[..toks.len() - 1];
        }
    }
    if let Some(semi) = toks.iter().find(|t| t.is_punct(text, ';')) {
        diags.push(Diagnostic::error(
            "syntax.statement",
            "more than one statement: expected a single instruction",
            semi.span,
        ));
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let (predicate, rest) = match parse_predicate(text, toks, &mut diags) {
        Some(x) => x,
        None => return Err(diags),
    };
    if rest.is_empty() {
        diags.push(Diagnostic::error(
            "syntax.empty",
            "expected a cvt instruction",
            end_span(text, toks),
        ));
        return Err(diags);
    }
    let root = opcode_root(rest[0].text(text));
    if rest[0].kind != TokenKind::Word || root != "cvt" {
        diags.push(Diagnostic::error(
            "ptx.instruction-unknown",
            format!(
                "'{}' is not a cvt instruction (this reader takes cvt and cvt.pack)",
                rest[0].text(text)
            ),
            rest[0].span,
        ));
        return Err(diags);
    }
    match parse_cvt(text, rest, predicate, &mut diags) {
        Some(i) if diags.is_empty() => Ok(i),
        _ => Err(diags),
    }
}

fn end_span(text: &str, toks: &[Token]) -> Span {
    match toks.last() {
        Some(t) => Span {
            start: t.span.end,
            end: t.span.end,
            line: t.span.line,
            col: t.span.col + t.text(text).chars().count() as u32,
        },
        None => Span::locate(text, text.len(), text.len()),
    }
}

fn opcode_root(word: &str) -> &str {
    word.split('.').next().unwrap_or("")
}

/// Reads an optional `@%p` / `@!%p` guard; returns it and the remaining tokens.
fn parse_predicate<'t>(
    src: &str,
    toks: &'t [Token],
    diags: &mut Vec<Diagnostic>,
) -> Option<(Option<Predicate>, &'t [Token])> {
    let Some(first) = toks.first() else {
        return Some((None, toks));
    };
    if !first.is_punct(src, '@') {
        return Some((None, toks));
    }
    let mut i = 1;
    let negated = toks.get(i).is_some_and(|t| t.is_punct(src, '!'));
    if negated {
        i += 1;
    }
    match toks.get(i) {
        Some(t) if t.kind == TokenKind::Word => {
            let span = Span {
                end: t.span.end,
                ..first.span
            };
            Some((
                Some(Predicate {
                    negated,
                    reg: t.text(src).to_string(),
                    span,
                }),
                &toks[i + 1..],
            ))
        }
        _ => {
            diags.push(Diagnostic::error(
                "syntax.predicate",
                "expected a predicate register after '@'",
                first.span,
            ));
            None
        }
    }
}

/// The span of `len` bytes at byte `offset` inside a one-line token.
fn sub_span(src: &str, tok: &Token, offset: usize, len: usize) -> Span {
    let text = tok.text(src);
    let prefix = text.get(..offset).unwrap_or(text);
    Span {
        start: tok.span.start + offset,
        end: tok.span.start + offset + len,
        line: tok.span.line,
        col: tok.span.col + prefix.chars().count() as u32,
    }
}

/// Parses a cvt statement from its tokens (opcode first, no `;`).
fn parse_cvt(
    src: &str,
    toks: &[Token],
    predicate: Option<Predicate>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Instruction> {
    let op = toks[0];
    let word = op.text(src);
    if op.kind != TokenKind::Word || opcode_root(word) != "cvt" {
        diags.push(Diagnostic::error(
            "ptx.instruction-unknown",
            format!("'{}' is not a cvt instruction", opcode_root(word)),
            op.span,
        ));
        return None;
    }
    let before = diags.len();
    let mut parts = Vec::new();
    let mut pack = false;
    let mut opcode = sub_span(src, &op, 0, 3);
    // Split `cvt.rn.f16.f32` at the dots, keeping each part's offset.
    let mut offset = 3;
    let mut index = 0;
    let mut unknown = 0;
    // The column of `offset`, advanced piece by piece: counting from the token's start
    // each time would make an opcode of many parts quadratic.
    let mut col = op.span.col + 3;
    for piece in word[3..].split('.').skip(1) {
        let start = offset;
        offset += 1 + piece.len();
        let span = Span {
            start: op.span.start + start,
            end: op.span.start + offset,
            line: op.span.line,
            col,
        };
        col += 1 + piece.chars().count() as u32;
        index += 1;
        if piece.is_empty() {
            diags.push(Diagnostic::error(
                "syntax.opcode",
                "empty part in the opcode (two dots in a row, or a trailing dot)",
                span,
            ));
            continue;
        }
        if piece == "pack" {
            if index == 1 {
                pack = true;
                opcode = sub_span(src, &op, 0, 8);
            } else {
                diags.push(Diagnostic::error(
                    "ptx.pack-position",
                    "'.pack' must directly follow 'cvt' (write cvt.pack.…)",
                    span,
                ));
            }
            continue;
        }
        let kind = if let Some(r) = RoundMod::from_name(piece) {
            PartKind::Rounding(r)
        } else if let Some(m) = Modifier::from_name(piece) {
            PartKind::Modifier(m)
        } else if let Some(s) = Scaled::from_name(piece) {
            PartKind::Scaled(s)
        } else if let Some(t) = PtxType::from_name(piece) {
            PartKind::Type(t)
        } else {
            diags.push(unknown_part(piece, span));
            unknown += 1;
            continue;
        };
        parts.push(Part { kind, span });
    }

    // Fold the parts into a form, rejecting repetitions.
    let mut form = CvtForm::new(PtxType::B32, PtxType::B32);
    form.pack = pack;
    let mut rounding: Option<(RoundMod, Span)> = None;
    let mut scaled: Option<(Scaled, Span)> = None;
    let mut types = Vec::new();
    for p in &parts {
        match p.kind {
            PartKind::Rounding(r) => {
                if let Some((first, _)) = rounding {
                    diags.push(Diagnostic::error(
                        "ptx.rounding-multiple",
                        format!(
                            "multiple rounding modifiers: '.{}' after '.{}'",
                            r.name(),
                            first.name()
                        ),
                        p.span,
                    ));
                } else {
                    rounding = Some((r, p.span));
                }
            }
            PartKind::Modifier(m) => {
                if form.has(m) {
                    diags.push(Diagnostic::error(
                        "ptx.modifier-duplicate",
                        format!("'.{}' is written twice", m.name()),
                        p.span,
                    ));
                }
                form.set(m, true);
            }
            PartKind::Scaled(s) => {
                if let Some((first, _)) = scaled {
                    diags.push(Diagnostic::error(
                        "ptx.modifier-duplicate",
                        format!(
                            "more than one scale qualifier: '.{}' after '.{}'",
                            s.name(),
                            first.name()
                        ),
                        p.span,
                    ));
                } else {
                    scaled = Some((s, p.span));
                }
            }
            PartKind::Type(t) => types.push((t, p.span)),
        }
    }
    form.rounding = rounding.map(|r| r.0);
    form.scaled = scaled.map(|s| s.0);
    let what = if pack { "cvt.pack" } else { "cvt" };
    match types.len() {
        // An unknown part was already reported; it may have been meant as the missing type.
        0 | 1 if unknown > 0 => {}
        0 | 1 => {
            let span = types.first().map_or(op.span, |t| t.1);
            diags.push(Diagnostic::error(
                "ptx.types-missing",
                format!(
                    "{what} needs a destination and a source type (e.g. {what}{}), found {}",
                    if pack { ".sat.u16.s32" } else { ".rn.f16.f32" },
                    types.len()
                ),
                span,
            ));
        }
        2 | 3 => {
            form.dtype = types[0].0;
            form.atype = types[1].0;
            form.ctype = types.get(2).map(|t| t.0);
        }
        _ => {
            diags.push(Diagnostic::error(
                "ptx.types-extra",
                format!(
                    "too many types for {what}: at most 3 (.dtype, .atype and cvt.pack's .ctype)"
                ),
                types[3].1,
            ));
        }
    }

    let operands = if toks.len() > 1 {
        parse_operands(src, &toks[1..], diags)
    } else {
        None
    };
    if diags.len() > before {
        return None;
    }
    let last = toks.last().map_or(op.span, |t| t.span);
    Some(Instruction {
        form,
        span: Span {
            end: last.end,
            ..op.span
        },
        opcode,
        parts,
        operands: if toks.len() > 1 { operands } else { None },
        predicate,
    })
}

fn unknown_part(piece: &str, span: Span) -> Diagnostic {
    let lower = piece.to_ascii_lowercase();
    let known = RoundMod::from_name(&lower).is_some()
        || Modifier::from_name(&lower).is_some()
        || PtxType::from_name(&lower).is_some();
    let hint = if known && lower != piece {
        format!(" (PTX is case-sensitive: '.{lower}')")
    } else if piece.starts_with("scaled") {
        " (the scale qualifiers are .scaled::n2::ue8m0 and .scaled::n1::ue8m0)".to_string()
    } else {
        String::new()
    };
    Diagnostic::error(
        "ptx.unknown-modifier",
        format!("'.{piece}' is neither a modifier nor a type of cvt{hint}"),
        span,
    )
}

/// Parses a comma-separated operand list (the tokens after the opcode, without `;`).
fn parse_operands(src: &str, toks: &[Token], diags: &mut Vec<Diagnostic>) -> Option<Vec<Operand>> {
    let mut ops = Vec::new();
    let mut i = 0;
    loop {
        let (op, next) = parse_operand(src, toks, i, true, diags)?;
        ops.push(op);
        i = next;
        match toks.get(i) {
            None => return Some(ops),
            Some(t) if t.is_punct(src, ',') => {
                i += 1;
                if i >= toks.len() {
                    diags.push(Diagnostic::error(
                        "syntax.operand",
                        "expected an operand after ','",
                        t.span,
                    ));
                    return None;
                }
            }
            Some(t) => {
                diags.push(Diagnostic::error(
                    "syntax.operand",
                    format!(
                        "expected ',' or ';' after an operand, found '{}'",
                        t.text(src)
                    ),
                    t.span,
                ));
                return None;
            }
        }
    }
}

/// Parses one operand starting at `toks[i]`; returns it and the index after it.
fn parse_operand(
    src: &str,
    toks: &[Token],
    i: usize,
    allow_vector: bool,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Operand, usize)> {
    let Some(t) = toks.get(i) else {
        let span = toks.last().map_or_else(Span::default, |t| t.span);
        diags.push(Diagnostic::error(
            "syntax.operand",
            "expected an operand",
            span,
        ));
        return None;
    };
    let text = t.text(src);
    match t.kind {
        TokenKind::Word if text == "_" => Some((
            Operand {
                kind: OperandKind::Sink,
                span: t.span,
            },
            i + 1,
        )),
        TokenKind::Word if !text.starts_with('.') => {
            let reg = parse_reg_ref(text, t.span, diags)?;
            Some((
                Operand {
                    kind: OperandKind::Reg(reg),
                    span: t.span,
                },
                i + 1,
            ))
        }
        TokenKind::Number => {
            let v = parse_immediate(text, false, t.span, diags)?;
            Some((
                Operand {
                    kind: OperandKind::Imm(v),
                    span: t.span,
                },
                i + 1,
            ))
        }
        TokenKind::Punct if text == "-" => match toks.get(i + 1) {
            Some(n) if n.kind == TokenKind::Number && n.span.start == t.span.end => {
                let v = parse_immediate(n.text(src), true, n.span, diags)?;
                Some((
                    Operand {
                        kind: OperandKind::Imm(v),
                        span: Span {
                            end: n.span.end,
                            ..t.span
                        },
                    },
                    i + 2,
                ))
            }
            _ => {
                diags.push(Diagnostic::error(
                    "syntax.operand",
                    "expected a number after '-'",
                    t.span,
                ));
                None
            }
        },
        TokenKind::Punct if text == "{" => {
            if !allow_vector {
                diags.push(Diagnostic::error(
                    "syntax.operand",
                    "vector expressions cannot be nested",
                    t.span,
                ));
                return None;
            }
            let mut elems = Vec::new();
            let mut j = i + 1;
            loop {
                let (e, next) = parse_operand(src, toks, j, false, diags)?;
                elems.push(e);
                j = next;
                match toks.get(j) {
                    Some(c) if c.is_punct(src, ',') => j += 1,
                    Some(c) if c.is_punct(src, '}') => {
                        let span = Span {
                            end: c.span.end,
                            ..t.span
                        };
                        return Some((
                            Operand {
                                kind: OperandKind::Vector(elems),
                                span,
                            },
                            j + 1,
                        ));
                    }
                    Some(c) => {
                        diags.push(Diagnostic::error(
                            "syntax.operand",
                            format!(
                                "expected ',' or '}}' in a vector expression, found '{}'",
                                c.text(src)
                            ),
                            c.span,
                        ));
                        return None;
                    }
                    None => {
                        diags.push(Diagnostic::error(
                            "syntax.operand",
                            "unclosed vector expression: '{' without '}'",
                            t.span,
                        ));
                        return None;
                    }
                }
            }
        }
        _ => {
            diags.push(Diagnostic::error(
                "syntax.operand",
                format!("expected an operand (register, number or {{…}}), found '{text}'"),
                t.span,
            ));
            None
        }
    }
}

/// `%r1` or `%v.x`.
fn parse_reg_ref(text: &str, span: Span, diags: &mut Vec<Diagnostic>) -> Option<RegRef> {
    // A leading `%` or `$` may be followed by a dot-free name; components follow a dot.
    let (name, comp) = match text[1..].find('.') {
        Some(k) => (&text[..k + 1], Some(&text[k + 2..])),
        None => (text, None),
    };
    let component = match comp {
        None => None,
        Some("x" | "r") => Some(0),
        Some("y" | "g") => Some(1),
        Some("z" | "b") => Some(2),
        Some("w" | "a") => Some(3),
        Some(other) => {
            diags.push(Diagnostic::error(
                "syntax.operand",
                format!("'{text}': '.{other}' is not a vector element (use .x, .y, .z or .w)"),
                span,
            ));
            return None;
        }
    };
    Some(RegRef {
        name: name.to_string(),
        component,
    })
}

/// Reads a numeric literal (the lexer's `Number` token).
fn parse_immediate(
    text: &str,
    negative: bool,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<Immediate> {
    let bad = |diags: &mut Vec<Diagnostic>, why: &str| {
        diags.push(Diagnostic::error(
            "syntax.number",
            format!("malformed number '{text}': {why}"),
            span,
        ));
        None
    };
    let bytes = text.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' && matches!(bytes[1], b'f' | b'F' | b'd' | b'D') {
        let digits = &text[2..];
        let want = if matches!(bytes[1], b'f' | b'F') {
            8
        } else {
            16
        };
        if digits.len() != want || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            return bad(
                diags,
                &format!(
                    "0{} needs exactly {want} hexadecimal digits",
                    bytes[1] as char
                ),
            );
        }
        let bits = u64::from_str_radix(digits, 16).ok()?;
        return Some(if want == 8 {
            let b = bits as u32;
            Immediate::F32(if negative { b ^ 0x8000_0000 } else { b })
        } else {
            Immediate::F64(if negative {
                bits ^ 0x8000_0000_0000_0000
            } else {
                bits
            })
        });
    }
    let is_hex = text.starts_with("0x") || text.starts_with("0X");
    if !is_hex && (text.contains('.') || text.contains(['e', 'E'])) {
        return match text.parse::<f64>() {
            Ok(v) if v.is_finite() => {
                let v = if negative { -v } else { v };
                Some(Immediate::F64(v.to_bits()))
            }
            _ => bad(diags, "not a decimal floating-point number"),
        };
    }
    let body = text.strip_suffix(['U', 'u']).unwrap_or(text);
    let (digits, radix) = if is_hex {
        (&body[2..], 16)
    } else if body.starts_with("0b") || body.starts_with("0B") {
        (&body[2..], 2)
    } else if body.len() > 1 && body.starts_with('0') {
        (&body[1..], 8)
    } else {
        (body, 10)
    };
    match u64::from_str_radix(digits, radix) {
        Ok(v) if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_alphanumeric()) => {
            let v = i128::from(v);
            Some(Immediate::Int(if negative { -v } else { v }))
        }
        _ => bad(diags, "not an integer that fits in 64 bits"),
    }
}

// ---------------------------------------------------------------------------------------
// Whole files.

/// A value with the span it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

/// A PTX module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxFile {
    /// `.version`.
    pub version: Option<Located<PtxVersion>>,
    /// The `sm_…` entry of `.target`.
    pub target: Option<Located<Target>>,
    /// The other entries of `.target` (`texmode_independent`, `debug`, …).
    pub target_options: Vec<Located<String>>,
    /// `.address_size`.
    pub address_size: Option<Located<u32>>,
    /// The kernels and functions, in order.
    pub functions: Vec<Function>,
    /// Problems found while reading.
    pub diagnostics: Vec<Diagnostic>,
}

/// `.entry` or `.func`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// A kernel, `.entry`.
    Entry,
    /// A device function, `.func`.
    Func,
}

/// A parameter of a kernel or function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its type, if it has a fundamental one (`.param .u64 p` → `.u64`).
    pub ty: Option<PtxType>,
    /// Where it is declared.
    pub span: Span,
}

/// A kernel or device function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// `.entry` or `.func`.
    pub kind: FunctionKind,
    /// Its name.
    pub name: String,
    /// Where its name is.
    pub span: Span,
    /// `.func`'s return parameters.
    pub returns: Vec<Param>,
    /// The parameters.
    pub params: Vec<Param>,
    /// The body; `None` for a declaration (`.extern .func f();`).
    pub body: Option<Block>,
}

/// A name declared by `.reg`: `%r` or the parameterized `%r<100>` (`%r0` … `%r99`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegName {
    /// The name, or the prefix of a parameterized name.
    pub name: String,
    /// `Some(n)` for `%r<n>`.
    pub count: Option<u32>,
    /// Where it is.
    pub span: Span,
}

impl RegName {
    /// Whether this declaration declares `name`.
    pub fn declares(&self, name: &str) -> bool {
        match self.count {
            None => self.name == name,
            Some(n) => name
                .strip_prefix(self.name.as_str())
                .and_then(|digits| {
                    let ok = !digits.is_empty()
                        && digits.bytes().all(|c| c.is_ascii_digit())
                        && (digits == "0" || !digits.starts_with('0'));
                    if ok {
                        digits.parse::<u64>().ok()
                    } else {
                        None
                    }
                })
                .is_some_and(|k| k < u64::from(n)),
        }
    }
}

/// A `.reg` declaration: `.reg .v2 .b32 %a, %b<4>;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegDecl {
    /// The element type as written (its validity is for [`super::check::check_file`]).
    pub ty: PtxType,
    /// 1, or the `N` of `.vN`.
    pub lanes: u8,
    /// The declared names.
    pub names: Vec<RegName>,
    /// The whole declaration.
    pub span: Span,
    /// The type token.
    pub type_span: Span,
    /// The `.vN` token, if any.
    pub vector_span: Option<Span>,
}

impl RegDecl {
    /// The declared registers' type.
    pub fn reg_type(&self) -> RegType {
        RegType {
            ty: self.ty,
            lanes: self.lanes,
        }
    }
}

/// A `{ … }` block: its declarations and statements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// The `.reg` declarations of this block (visible in it and in nested blocks).
    pub regs: Vec<RegDecl>,
    /// The statements, in order.
    pub statements: Vec<Statement>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A `mov` instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mov {
    /// The instruction type (`mov.f32` → `.f32`).
    pub ty: PtxType,
    /// The destination.
    pub dst: Operand,
    /// The source.
    pub src: Operand,
    /// The guard predicate, if any.
    pub predicate: Option<Predicate>,
    /// The whole instruction.
    pub span: Span,
}

/// A statement of a function body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Statement {
    /// `name:`.
    Label {
        /// The label.
        name: String,
        /// Where it is.
        span: Span,
    },
    /// A `cvt` or `cvt.pack`.
    Cvt(Instruction),
    /// A `mov`.
    Mov(Mov),
    /// A nested block.
    Block(Block),
    /// Any other instruction or directive, kept opaque.
    Other {
        /// Its opcode or directive (`add.s32`, `.loc`).
        opcode: String,
        /// The whole statement.
        span: Span,
        /// The statement as written (what `run` reads to find the registers it writes).
        text: String,
    },
}

/// Reads a PTX module. Never fails: problems are in [`PtxFile::diagnostics`], and the reader
/// carries on after each.
///
/// ```
/// use gpucvt::ptx::parse::{parse_file, Statement};
/// let src = "\
/// .version 8.0
/// .target sm_90
/// .address_size 64
/// .visible .entry k(.param .u64 p)
/// {
///     .reg .f32 %f<2>;
///     .reg .b16 %h;
///     mov.f32 %f0, 0f3F800000;
///     cvt.rn.f16.f32 %h, %f0;
///     ret;
/// }
/// ";
/// let file = parse_file(src);
/// assert!(file.diagnostics.is_empty());
/// assert_eq!(file.target.unwrap().value.to_string(), "sm_90");
/// let body = file.functions[0].body.as_ref().unwrap();
/// assert_eq!(body.regs.len(), 2);
/// assert!(matches!(body.statements[1], Statement::Cvt(_)));
/// ```
pub fn parse_file(src: &str) -> PtxFile {
    let mut functions = Vec::new();
    let mut file = read_functions(src, true, |f, _| functions.push(f));
    file.functions = functions;
    file
}

/// Reads a PTX module one function at a time, for a reader that needs only one at once
/// (the checker): `on_function` gets each `.entry`/`.func` as soon as it is read, with the
/// module read so far (its `.version`, `.target`, …; [`PtxFile::functions`] stays empty),
/// and the function is dropped when it returns, so that memory follows the largest
/// function rather than the file. Returns the module without its functions; the
/// diagnostics are [`parse_file`]'s.
///
/// With `opaque` false, the bodies keep only what legality looks at: the `.reg`
/// declarations, the `cvt`/`cvt.pack` instructions and the nested blocks. Labels, `mov` and
/// the opaque statements are read (and their problems reported) but not kept.
///
/// ```
/// use gpucvt::ptx::parse::{read_functions, Statement};
/// let src = ".version 8.0\n.target sm_90\n.entry a()\n{\n ret;\n}\n.entry b()\n{\n L: ret;\n}\n";
/// let mut names = Vec::new();
/// let file = read_functions(src, false, |f, so_far| {
///     assert!(so_far.target.is_some());
///     assert!(f.body.unwrap().statements.is_empty());
///     names.push(f.name);
/// });
/// assert_eq!(names, ["a", "b"]);
/// assert!(file.functions.is_empty() && file.diagnostics.is_empty());
/// ```
pub fn read_functions(
    src: &str,
    opaque: bool,
    on_function: impl FnMut(Function, &PtxFile),
) -> PtxFile {
    struct Callback<F>(F);
    impl<F: FnMut(Function, &PtxFile)> Sink for Callback<F> {
        fn function(&mut self, f: Function, so_far: &PtxFile) {
            (self.0)(f, so_far);
        }
    }
    read_file(src, opaque, &mut Callback(on_function))
}

/// What the reader tells as it goes: each function once read, and, while it is read, the
/// blocks, `.reg` declarations and `cvt`s of its body in source order.
pub(crate) trait Sink {
    /// A function, read whole (see [`read_functions`]).
    fn function(&mut self, f: Function, so_far: &PtxFile);
    /// Whether the sink takes the bodies' blocks, declarations and `cvt`s as they come
    /// (then the function it gets has none of them).
    fn streams(&self) -> bool {
        false
    }
    /// A block (the body first) opens.
    fn open(&mut self, _so_far: &PtxFile) {}
    /// A `.reg` declaration of the innermost open block (a `.func`'s `.reg` parameters
    /// first, as declarations of its body).
    fn reg(&mut self, _decl: RegDecl) {}
    /// A well-formed `cvt`/`cvt.pack` in the innermost open block.
    fn cvt(&mut self, _instr: Instruction, _so_far: &PtxFile) {}
    /// The innermost open block closes.
    fn close(&mut self) {}
}

pub(crate) fn read_file(src: &str, opaque: bool, sink: &mut dyn Sink) -> PtxFile {
    let mut p = FileParser {
        src,
        toks: Toks::new(src),
        i: 0,
        depth: 0,
        file: PtxFile::default(),
        opaque,
        sink,
    };
    p.module();
    let mut diagnostics = p.toks.into_diagnostics();
    diagnostics.append(&mut p.file.diagnostics);
    p.file.diagnostics = diagnostics;
    p.file
}

/// How deeply `{ … }` blocks may nest in a function body. Real code nests a few levels
/// (inline-asm scopes inside loops); the limit keeps the recursive reader, checker and
/// runner far from the end of the stack on hostile input. Deeper blocks are reported and
/// skipped.
pub const MAX_BLOCK_DEPTH: usize = 256;

/// The file's tokens, lexed on demand. Only the tokens from the start of the current
/// statement on are kept, so that memory follows the longest statement, not the file.
struct Toks<'a> {
    inner: core::cell::RefCell<TokBuf<'a>>,
}

struct TokBuf<'a> {
    lexer: super::lexer::Lexer<'a>,
    /// Tokens `base..base + buf.len()`.
    buf: Vec<Token>,
    base: usize,
    done: bool,
}

impl<'a> Toks<'a> {
    fn new(src: &'a str) -> Toks<'a> {
        Toks {
            inner: core::cell::RefCell::new(TokBuf {
                lexer: super::lexer::Lexer::new(src),
                buf: Vec::new(),
                base: 0,
                done: false,
            }),
        }
    }

    /// Token `k`; `None` past the end (and for a token already released).
    fn get(&self, k: usize) -> Option<Token> {
        let mut b = self.inner.borrow_mut();
        if k < b.base {
            return None;
        }
        while !b.done && b.base + b.buf.len() <= k {
            match b.lexer.next_token() {
                Some(t) => b.buf.push(t),
                None => b.done = true,
            }
        }
        let base = b.base;
        b.buf.get(k - base).copied()
    }

    /// Tokens `a..b` (fewer at the end of the text).
    fn range(&self, a: usize, b: usize) -> Vec<Token> {
        (a..b).map_while(|k| self.get(k)).collect()
    }

    /// Forgets the tokens before `k`; they are never read again.
    fn release(&self, k: usize) {
        let mut b = self.inner.borrow_mut();
        let drop = k.saturating_sub(b.base).min(b.buf.len());
        // Drain in large steps only, so that the cost stays linear in the file.
        if drop >= 4096 && drop * 2 >= b.buf.len() {
            b.buf.drain(..drop);
            b.base += drop;
        }
    }

    fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.inner.into_inner().lexer.diagnostics
    }
}

struct FileParser<'a, 'f> {
    src: &'a str,
    toks: Toks<'a>,
    i: usize,
    /// How many blocks enclose the current position.
    depth: usize,
    /// The module read so far; its functions go to `sink`.
    file: PtxFile,
    /// Whether bodies keep the statements legality ignores (labels, `mov`, the others).
    opaque: bool,
    sink: &'f mut dyn Sink,
}

/// Directives that start a module-level statement; used to recover from a missing `;`.
const TOP_DIRECTIVES: &[&str] = &[
    ".version",
    ".target",
    ".address_size",
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".weak",
    ".common",
    ".global",
    ".const",
    ".shared",
    ".file",
    ".section",
    ".tex",
    ".texref",
    ".surfref",
    ".samplerref",
    ".local",
];

impl<'a> FileParser<'a, '_> {
    fn text(&self, k: usize) -> &'a str {
        self.toks.get(k).map_or("", |t| t.text(self.src))
    }

    /// Token `k`, which the caller knows exists.
    fn tok(&self, k: usize) -> Token {
        // (Built only when asked for: locating the end scans the whole source.)
        self.toks.get(k).unwrap_or_else(|| Token {
            kind: TokenKind::Punct,
            span: Span::locate(self.src, self.src.len(), self.src.len()),
            line_start: false,
        })
    }

    fn peek(&self) -> Option<Token> {
        self.toks.get(self.i)
    }

    fn is_punct(&self, k: usize, c: char) -> bool {
        self.toks.get(k).is_some_and(|t| t.is_punct(self.src, c))
    }

    fn error(&mut self, rule: &'static str, msg: impl Into<String>, span: Span) {
        self.file
            .diagnostics
            .push(Diagnostic::error(rule, msg, span));
    }

    /// Skips the tokens on the same line as token `k` (for `.file`, `.loc`).
    fn skip_line(&mut self) {
        let line = self.peek().map_or(0, |t| t.span.line);
        while self.peek().is_some_and(|t| t.span.line == line) {
            self.i += 1;
        }
    }

    /// Skips one statement: up to and including `;` at depth 0, or up to the `}` that closes
    /// a block the statement opened. Stops early, without consuming, at a line-starting
    /// module directive (a missing `;`), or at a `}` that closes an enclosing block.
    fn skip_statement(&mut self, top_level: bool) {
        let start = self.i;
        self.skip_statement_inner(top_level);
        if self.i == start && self.toks.get(self.i).is_some() {
            // Always make progress.
            self.i += 1;
        }
    }

    fn skip_statement_inner(&mut self, top_level: bool) {
        let start = self.i;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            let text = t.text(self.src);
            if self.i > start
                && depth == 0
                && top_level
                && t.line_start
                && TOP_DIRECTIVES.contains(&text)
            {
                return;
            }
            if t.kind == TokenKind::Punct {
                match text {
                    ";" if depth == 0 => {
                        self.i += 1;
                        return;
                    }
                    "{" | "(" | "[" => depth += 1,
                    "}" | ")" | "]" => {
                        if depth == 0 {
                            return;
                        }
                        depth -= 1;
                        if depth == 0 && text == "}" {
                            self.i += 1;
                            return;
                        }
                    }
                    _ => {}
                }
            }
            self.i += 1;
        }
    }

    fn module(&mut self) {
        while let Some(t) = self.peek() {
            self.toks.release(self.i);
            let text = t.text(self.src);
            match text {
                ".version" => self.version(),
                ".target" => self.target(),
                ".address_size" => self.address_size(),
                ".file" | ".loc" => self.skip_line(),
                ".visible" | ".extern" | ".weak" | ".common" => self.i += 1,
                "}" | ")" | "]" if t.kind == TokenKind::Punct => {
                    self.error("syntax.block", format!("unmatched '{text}'"), t.span);
                    self.i += 1;
                }
                ".entry" | ".func" => self.function(),
                ";" => self.i += 1,
                _ => self.skip_statement(true),
            }
        }
    }

    fn version(&mut self) {
        let d = self.tok(self.i);
        self.i += 1;
        match self.peek() {
            Some(t) if t.kind == TokenKind::Number && !t.line_start => {
                self.i += 1;
                match t.text(self.src).parse::<PtxVersion>() {
                    Ok(v) => {
                        if self.file.version.is_some() {
                            self.error("ptx.directive", "second .version directive", d.span);
                        }
                        self.file.version = Some(Located {
                            value: v,
                            span: t.span,
                        });
                    }
                    Err(e) => self.error("ptx.version-unknown", e.0, t.span),
                }
            }
            _ => self.error(
                "ptx.directive",
                ".version needs a version number (e.g. .version 9.5)",
                d.span,
            ),
        }
    }

    fn target(&mut self) {
        let d = self.tok(self.i);
        self.i += 1;
        let mut first = true;
        loop {
            match self.peek() {
                Some(t) if t.kind == TokenKind::Word => {
                    self.i += 1;
                    let word = t.text(self.src);
                    if word.starts_with("sm_") || word.starts_with("compute_") {
                        match word.parse::<Target>() {
                            Ok(target) => {
                                if self.file.target.is_some() {
                                    self.error(
                                        "ptx.directive",
                                        "more than one sm_… target in .target",
                                        t.span,
                                    );
                                }
                                self.file.target = Some(Located {
                                    value: target,
                                    span: t.span,
                                });
                            }
                            Err(e) => self.error("ptx.target-unknown", e.0, t.span),
                        }
                    } else {
                        self.file.target_options.push(Located {
                            value: word.to_string(),
                            span: t.span,
                        });
                    }
                }
                _ => {
                    if first {
                        self.error(
                            "ptx.directive",
                            ".target needs a target (e.g. .target sm_90a)",
                            d.span,
                        );
                    }
                    return;
                }
            }
            first = false;
            if self.is_punct(self.i, ',') {
                self.i += 1;
            } else {
                return;
            }
        }
    }

    fn address_size(&mut self) {
        let d = self.tok(self.i);
        self.i += 1;
        match self.peek() {
            Some(t) if t.kind == TokenKind::Number => {
                self.i += 1;
                match t.text(self.src) {
                    "32" => {
                        self.file.address_size = Some(Located {
                            value: 32,
                            span: t.span,
                        })
                    }
                    "64" => {
                        self.file.address_size = Some(Located {
                            value: 64,
                            span: t.span,
                        })
                    }
                    other => self.error(
                        "ptx.directive",
                        format!(".address_size must be 32 or 64, not {other}"),
                        t.span,
                    ),
                }
            }
            _ => self.error("ptx.directive", ".address_size needs 32 or 64", d.span),
        }
    }

    /// `.entry name (params) … { body }` or `.func (rets) name (params) … { body }` / `;`.
    fn function(&mut self) {
        let kind = if self.text(self.i) == ".entry" {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        let d = self.tok(self.i);
        self.i += 1;
        let mut returns = Vec::new();
        // `.reg` parameters are registers of the body's scope.
        let mut reg_params = Vec::new();
        if kind == FunctionKind::Func && self.is_punct(self.i, '(') {
            returns = self.params(&mut reg_params);
        }
        let (name, span) = match self.peek() {
            Some(t) if t.kind == TokenKind::Word && !t.text(self.src).starts_with('.') => {
                self.i += 1;
                (t.text(self.src).to_string(), t.span)
            }
            _ => {
                self.error("ptx.directive", "expected a function name", d.span);
                self.skip_statement(true);
                return;
            }
        };
        let params = if self.is_punct(self.i, '(') {
            self.params(&mut reg_params)
        } else {
            Vec::new()
        };
        // Performance directives (`.maxntid 256, 1, 1`, `.noreturn`, …) up to `{` or `;`.
        while let Some(t) = self.peek() {
            if t.is_punct(self.src, '{') || t.is_punct(self.src, ';') {
                break;
            }
            if t.line_start && TOP_DIRECTIVES.contains(&t.text(self.src)) {
                break;
            }
            self.i += 1;
        }
        let body = match self.peek() {
            Some(t) if t.is_punct(self.src, '{') => Some(self.block(reg_params)),
            Some(t) if t.is_punct(self.src, ';') => {
                self.i += 1;
                None
            }
            // A PTX 2.x prototype (nvopencc writes them) ends at the end of its line, with
            // neither a body nor a `;`: the next line starts another module directive.
            None if kind == FunctionKind::Func => None,
            Some(t) if kind == FunctionKind::Func && t.line_start => None,
            _ => {
                self.error(
                    "syntax.function",
                    format!("expected '{{' (a body) or ';' after the declaration of {name}"),
                    span,
                );
                None
            }
        };
        let f = Function {
            kind,
            name,
            span,
            returns,
            params,
            body,
        };
        self.sink.function(f, &self.file);
    }

    /// `( .param .u64 a, .param .align 4 .b8 b[16], .reg .b32 c )`.
    fn params(&mut self, regs: &mut Vec<RegDecl>) -> Vec<Param> {
        let open = self.tok(self.i);
        self.i += 1;
        let mut out = Vec::new();
        let mut cur: Vec<Token> = Vec::new();
        let mut depth = 0;
        loop {
            let Some(t) = self.peek() else {
                self.error("syntax.function", "unclosed parameter list", open.span);
                return out;
            };
            self.i += 1;
            let text = t.text(self.src);
            match text {
                "(" | "[" => depth += 1,
                "]" => depth -= 1,
                ")" if depth > 0 => depth -= 1,
                ")" => {
                    self.param(&cur, &mut out, regs);
                    return out;
                }
                "," if depth == 0 => {
                    self.param(&cur, &mut out, regs);
                    cur.clear();
                    continue;
                }
                "{" | "}" | ";" => {
                    self.error("syntax.function", "unclosed parameter list", open.span);
                    self.i -= 1;
                    return out;
                }
                _ => {}
            }
            cur.push(t);
        }
    }

    fn param(&mut self, toks: &[Token], out: &mut Vec<Param>, regs: &mut Vec<RegDecl>) {
        if toks.is_empty() {
            return;
        }
        if toks[0].text(self.src) == ".reg" {
            let span = Span {
                end: toks[toks.len() - 1].span.end,
                ..toks[0].span
            };
            if let Some(d) = self.reg_decl_body(&toks[1..], span) {
                regs.push(d);
            }
        }
        let ty = toks
            .iter()
            .filter(|t| t.kind == TokenKind::Word)
            .find_map(|t| {
                t.text(self.src)
                    .strip_prefix('.')
                    .and_then(PtxType::from_name)
            });
        let name = toks
            .iter()
            .take_while(|t| !t.is_punct(self.src, '['))
            .filter(|t| t.kind == TokenKind::Word && !t.text(self.src).starts_with('.'))
            .last();
        match name {
            Some(n) => out.push(Param {
                name: n.text(self.src).to_string(),
                ty,
                span: n.span,
            }),
            None => self.error("syntax.function", "parameter without a name", toks[0].span),
        }
    }

    /// A `{ … }` block whose first declarations are `regs`; `self.i` is at the `{`.
    fn block(&mut self, regs: Vec<RegDecl>) -> Block {
        let open = self.tok(self.i);
        self.i += 1;
        let mut block = Block {
            span: open.span,
            ..Block::default()
        };
        self.sink.open(&self.file);
        if self.sink.streams() {
            for d in regs {
                self.sink.reg(d);
            }
        } else {
            block.regs = regs;
        }
        self.depth += 1;
        self.block_items(&mut block, open);
        self.depth -= 1;
        self.sink.close();
        block
    }

    /// Skips the rest of a block nested too deeply, iteratively; `self.i` is after its `{`.
    fn skip_block(&mut self) {
        let mut depth = 1usize;
        while let Some(t) = self.peek() {
            self.i += 1;
            if t.is_punct(self.src, '{') {
                depth += 1;
            } else if t.is_punct(self.src, '}') {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
            if self.i.is_multiple_of(4096) {
                self.toks.release(self.i);
            }
        }
    }

    fn block_items(&mut self, block: &mut Block, open: Token) {
        if self.depth > MAX_BLOCK_DEPTH {
            self.error(
                "syntax.block-depth",
                format!("blocks nested more than {MAX_BLOCK_DEPTH} deep; the rest of this block is skipped"),
                open.span,
            );
            self.skip_block();
            block.span.end = self.tok(self.i.saturating_sub(1)).span.end;
            return;
        }
        loop {
            self.toks.release(self.i);
            let Some(t) = self.peek() else {
                self.error("syntax.block", "unclosed block: '{' without '}'", open.span);
                block.span.end = self.src.len();
                return;
            };
            let text = t.text(self.src);
            if t.is_punct(self.src, '}') {
                self.i += 1;
                block.span.end = t.span.end;
                return;
            }
            if t.is_punct(self.src, '{') {
                let inner = self.block(Vec::new());
                if !self.sink.streams() {
                    block.statements.push(Statement::Block(inner));
                }
                continue;
            }
            if t.is_punct(self.src, ';') {
                self.i += 1;
                continue;
            }
            if t.kind == TokenKind::Word && self.is_punct(self.i + 1, ':') {
                if self.opaque {
                    block.statements.push(Statement::Label {
                        name: text.to_string(),
                        span: t.span,
                    });
                }
                self.i += 2;
                continue;
            }
            match text {
                ".reg" => {
                    if let Some(decl) = self.reg_decl() {
                        if self.sink.streams() {
                            self.sink.reg(decl);
                        } else {
                            block.regs.push(decl);
                        }
                    }
                    continue;
                }
                ".loc" | ".file" => {
                    self.skip_line();
                    continue;
                }
                _ => {}
            }
            if text.starts_with('.') {
                let start = self.i;
                self.skip_statement(false);
                if !self.opaque {
                    continue;
                }
                let span = self.span_of(start);
                block.statements.push(Statement::Other {
                    opcode: text.to_string(),
                    span,
                    text: statement_text(self.src, span),
                });
                continue;
            }
            match self.instruction() {
                Some(Statement::Cvt(i)) if self.sink.streams() => self.sink.cvt(i, &self.file),
                Some(s) => block.statements.push(s),
                None => {}
            }
        }
    }

    fn span_of(&self, start: usize) -> Span {
        let first = self.tok(start).span;
        let last = self.tok(self.i.saturating_sub(1).max(start)).span;
        Span {
            end: last.end,
            ..first
        }
    }

    /// `.reg [.vN] .type name[<N>] {, name[<N>]} ;`
    fn reg_decl(&mut self) -> Option<RegDecl> {
        let start = self.i;
        self.i += 1;
        // The statement's tokens, up to `;`.
        let mut end = self.i;
        while self.toks.get(end).is_some()
            && !self.is_punct(end, ';')
            && !self.is_punct(end, '}')
            && !self.is_punct(end, '{')
        {
            end += 1;
        }
        let has_semi = self.is_punct(end, ';');
        let toks = self.toks.range(self.i, end);
        self.i = if has_semi { end + 1 } else { end };
        let decl_span = Span {
            end: self.tok(end.saturating_sub(1).max(start)).span.end,
            ..self.tok(start).span
        };
        if !has_semi {
            self.error(
                "syntax.statement",
                "missing ';' after the .reg declaration",
                decl_span,
            );
            return None;
        }
        self.reg_decl_body(&toks, decl_span)
    }

    /// What follows `.reg` in a declaration or a `.reg` parameter: `[.vN] .type name…`.
    fn reg_decl_body(&mut self, toks: &[Token], decl_span: Span) -> Option<RegDecl> {
        let mut lanes = 1u8;
        let mut vector_span = None;
        let mut ty: Option<(PtxType, Span)> = None;
        let mut k = 0;
        while let Some(t) = toks.get(k) {
            let text = t.text(self.src);
            if t.kind != TokenKind::Word || !text.starts_with('.') {
                break;
            }
            k += 1;
            match text {
                ".v2" | ".v4" | ".v8" | ".v3" => {
                    if vector_span.is_some() {
                        self.error("ptx.reg", "more than one vector size", t.span);
                        return None;
                    }
                    lanes = text[2..].parse().unwrap_or(1);
                    vector_span = Some(t.span);
                }
                _ => match PtxType::from_name(text) {
                    Some(p) => {
                        if ty.is_some() {
                            self.error(
                                "ptx.reg",
                                "more than one type in a .reg declaration",
                                t.span,
                            );
                            return None;
                        }
                        ty = Some((p, t.span));
                    }
                    None => {
                        self.error(
                            "ptx.reg-type",
                            format!("'{text}' is not a register type"),
                            t.span,
                        );
                        return None;
                    }
                },
            }
        }
        let Some((ty, type_span)) = ty else {
            self.error(
                "ptx.reg",
                ".reg needs a type (e.g. .reg .b32 %r<4>;)",
                decl_span,
            );
            return None;
        };
        let mut names = Vec::new();
        loop {
            let Some(t) = toks.get(k) else {
                if names.is_empty() {
                    self.error("ptx.reg", ".reg declares no register name", decl_span);
                    return None;
                }
                break;
            };
            let text = t.text(self.src);
            if t.kind != TokenKind::Word || text.starts_with('.') {
                self.error(
                    "ptx.reg",
                    format!("expected a register name, found '{text}'"),
                    t.span,
                );
                return None;
            }
            k += 1;
            let mut name = RegName {
                name: text.to_string(),
                count: None,
                span: t.span,
            };
            if toks.get(k).is_some_and(|t| t.is_punct(self.src, '<')) {
                let n = toks.get(k + 1);
                let close = toks.get(k + 2);
                match (n, close) {
                    (Some(n), Some(c))
                        if n.kind == TokenKind::Number && c.is_punct(self.src, '>') =>
                    {
                        match n.text(self.src).parse::<u32>() {
                            Ok(v) if v > 0 => {
                                name.count = Some(v);
                                name.span.end = c.span.end;
                            }
                            _ => {
                                self.error(
                                    "ptx.reg",
                                    format!(
                                        "'{}' is not a valid register count (1 or more)",
                                        n.text(self.src)
                                    ),
                                    n.span,
                                );
                                return None;
                            }
                        }
                        k += 3;
                    }
                    _ => {
                        self.error(
                            "ptx.reg",
                            "expected '<count>' after the register name",
                            toks[k].span,
                        );
                        return None;
                    }
                }
            }
            names.push(name);
            match toks.get(k) {
                None => break,
                Some(c) if c.is_punct(self.src, ',') => k += 1,
                Some(c) => {
                    self.error(
                        "ptx.reg",
                        format!("expected ',' or ';', found '{}'", c.text(self.src)),
                        c.span,
                    );
                    return None;
                }
            }
        }
        Some(RegDecl {
            ty,
            lanes,
            names,
            span: decl_span,
            type_span,
            vector_span,
        })
    }

    /// An instruction statement, `@%p` guard allowed; `self.i` at its first token.
    fn instruction(&mut self) -> Option<Statement> {
        let start = self.i;
        let mut depth = 0i32;
        let mut end = self.i;
        let mut terminated = false;
        while let Some(t) = self.toks.get(end) {
            if t.kind == TokenKind::Punct {
                match t.text(self.src) {
                    ";" if depth == 0 => {
                        terminated = true;
                        break;
                    }
                    "{" | "(" | "[" => depth += 1,
                    "}" | ")" | "]" => {
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                    }
                    _ => {}
                }
            }
            if end > start + 1 && depth == 0 && t.line_start {
                // A line that starts with a guard, or with an opcode-like word right after a
                // complete operand list, begins a new statement: the `;` is missing. Stop
                // here to recover. (Operands continued on the next line start with `%`, `$`,
                // `[`, `{`… or follow a `,`.)
                let prev = self.tok(end - 1);
                let opcode_like = t.kind == TokenKind::Word
                    && t.text(self.src)
                        .starts_with(|c: char| c.is_ascii_alphabetic())
                    && !prev.is_punct(self.src, ',');
                if opcode_like || t.is_punct(self.src, '@') {
                    break;
                }
            }
            end += 1;
        }
        let toks = self.toks.range(start, end);
        let toks = &toks[..];
        self.i = if terminated { end + 1 } else { end };
        let span = Span {
            end: toks.last().map_or(self.tok(start).span.end, |t| t.span.end),
            ..self.tok(start).span
        };
        if !terminated {
            self.error(
                "syntax.statement",
                "missing ';' at the end of the instruction",
                span,
            );
            if end == start {
                self.i += 1;
                return None;
            }
        }
        let mut diags = Vec::new();
        let Some((predicate, rest)) = parse_predicate(self.src, toks, &mut diags) else {
            self.file.diagnostics.extend(diags);
            return None;
        };
        let Some(op) = rest.first() else {
            self.error(
                "syntax.statement",
                "a guard predicate without an instruction",
                span,
            );
            return None;
        };
        let opcode = op.text(self.src);
        if op.kind != TokenKind::Word {
            self.error(
                "syntax.statement",
                format!("expected an instruction, found '{opcode}'"),
                op.span,
            );
            return None;
        }
        match opcode_root(opcode) {
            "cvt" => match parse_cvt(self.src, rest, predicate, &mut diags) {
                Some(i) if diags.is_empty() => Some(Statement::Cvt(i)),
                _ => {
                    self.file.diagnostics.extend(diags);
                    self.opaque.then(|| Statement::Other {
                        opcode: opcode.to_string(),
                        span,
                        text: statement_text(self.src, span),
                    })
                }
            },
            // (`mov` and the rest report no problem of their own: not kept, not read.)
            _ if !self.opaque => None,
            "mov" => Some(
                parse_mov(self.src, rest, predicate, span).unwrap_or(Statement::Other {
                    opcode: opcode.to_string(),
                    span,
                    text: statement_text(self.src, span),
                }),
            ),
            _ => Some(Statement::Other {
                opcode: opcode.to_string(),
                span,
                text: statement_text(self.src, span),
            }),
        }
    }
}

fn statement_text(src: &str, span: Span) -> String {
    src.get(span.start..span.end).unwrap_or("").to_string()
}

/// `mov.type d, a` with a register or immediate source; anything else is left opaque.
fn parse_mov(
    src: &str,
    toks: &[Token],
    predicate: Option<Predicate>,
    span: Span,
) -> Option<Statement> {
    let word = toks[0].text(src);
    let mut parts = word.split('.').skip(1);
    let ty = PtxType::from_name(parts.next()?)?;
    if parts.next().is_some() {
        return None;
    }
    let mut diags = Vec::new();
    let ops = parse_operands(src, toks.get(1..)?, &mut diags)?;
    if !diags.is_empty() || ops.len() != 2 {
        return None;
    }
    let mut it = ops.into_iter();
    let dst = it.next()?;
    let srco = it.next()?;
    Some(Statement::Mov(Mov {
        ty,
        dst,
        src: srco,
        predicate,
        span,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_and_spans() {
        let i = parse_instruction("cvt.f16.relu.rn.f32 %h, %f").unwrap();
        assert!(i.form.relu && i.form.rounding == Some(RoundMod::Rn));
        assert_eq!(i.form.dtype, PtxType::F16);
        let relu = i.modifier_span(Modifier::Relu).unwrap();
        assert_eq!((relu.start, relu.end, relu.col), (7, 12, 8));
        assert_eq!(i.type_span(1).unwrap().col, 16);
        let p = parse_instruction("@!%p cvt.pack.sat.u8.s32.b32 %r, %a, %b, 0;").unwrap();
        assert!(p.form.pack && p.form.ctype == Some(PtxType::B32));
        assert!(p.predicate.unwrap().negated);
        let ops = p.operands.unwrap();
        assert_eq!(ops[3].kind, OperandKind::Imm(Immediate::Int(0)));
    }

    #[test]
    fn operands() {
        let i =
            parse_instruction("cvt.rs.satfinite.e4m3x4.f32 %d, {%a, %b, %v.y, -0f3F800000}, 0x10;")
                .unwrap();
        let ops = i.operands.unwrap();
        let OperandKind::Vector(v) = &ops[1].kind else {
            panic!()
        };
        assert_eq!(v.len(), 4);
        assert_eq!(
            v[2].kind,
            OperandKind::Reg(RegRef {
                name: "%v".into(),
                component: Some(1)
            })
        );
        assert_eq!(v[3].kind, OperandKind::Imm(Immediate::F32(0xBF80_0000)));
        assert_eq!(ops[2].kind, OperandKind::Imm(Immediate::Int(16)));
        let d = parse_instruction("cvt.rn.f32.f64 %f, 1.5;").unwrap();
        assert_eq!(
            d.operands.unwrap()[1].kind,
            OperandKind::Imm(Immediate::F64(1.5f64.to_bits()))
        );
    }

    #[test]
    fn errors() {
        for bad in [
            "",
            "add.s32 %r, %a, %b;",
            "cvt.rn.rz.f16.f32 %h, %f;",
            "cvt.rn.f16 %h, %f;",
            "cvt.RN.f16.f32 %h, %f;",
            "cvt.rn..f16.f32 %h, %f;",
            "cvt.rn.f16.f32 %h %f;",
            "cvt.rn.f16.f32 %h, {%f, {%g}};",
            "cvt.rn.f16.f32 %h, 0f3F80;",
            "cvt.rn.f16.f32 %h, ;",
            "cvt.sat.pack.u8.s32.b32 %r, %a, %b, %c;",
            "cvt.ftz.ftz.f32.f32 %f, %g;",
            "cvt.rn.f16.f32 %h, %f; cvt.rn.f16.f32 %h, %f;",
            "cvt.rn.f16.f32.f32.f32 %h, %f;",
            "cvt.rn.f16.f32 %h.q, %f;",
        ] {
            let e = parse_instruction(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
            assert!(e.iter().all(|d| d.span.line == 1), "{bad}: {e:?}");
        }
    }

    #[test]
    fn reg_names() {
        let n = RegName {
            name: "%r".into(),
            count: Some(100),
            span: Span::default(),
        };
        assert!(n.declares("%r0") && n.declares("%r99"));
        assert!(!n.declares("%r100") && !n.declares("%r") && !n.declares("%r01"));
    }

    #[test]
    fn read_functions_keeps_only_what_legality_reads() {
        let body = ".entry k(.param .u64 p)\n{\n .reg .f32 %f<2>;\n .reg .b16 %h;\n L: \
                    ld.param.u64 %rd, [p];\n mov.f32 %f0, 0f3F800000;\n .pragma \"nounroll\";\n \
                    cvt.rn.f16.f32 %h, %f0;\n cvt.rn.f16.q32 %h, %f0;\n \
                    { add.f32 %f1, %f0, %f0; cvt.f32.f16 %f1, %h; }\n @%p bra L;\n}\n";
        let src = format!(".version 8.0\n.target sm_90\n{body}{body}{body}");
        let whole = parse_file(&src);
        let mut seen = 0;
        let lean = read_functions(&src, false, |f, so_far| {
            assert!(so_far.functions.is_empty());
            let b = f.body.unwrap();
            assert_eq!(b.regs.len(), 2);
            // One cvt and the nested block (with its one cvt): no label, mov or other.
            assert_eq!(b.statements.len(), 2, "{:?}", b.statements);
            assert!(matches!(b.statements[0], Statement::Cvt(_)));
            let Statement::Block(inner) = &b.statements[1] else {
                panic!("{:?}", b.statements[1])
            };
            assert_eq!(inner.statements.len(), 1);
            seen += 1;
        });
        assert_eq!(seen, 3);
        assert_eq!(whole.functions.len(), 3);
        assert_eq!(
            whole.functions[0].body.as_ref().unwrap().statements.len(),
            8
        );
        // The same problems, in the same order (the bad type, once per copy).
        assert_eq!(lean.diagnostics.len(), 3);
        assert_eq!(lean.diagnostics, whole.diagnostics);
        let mut full = 0;
        read_functions(&src, true, |f, _| {
            assert_eq!(Some(&f), whole.functions.get(full));
            full += 1;
        });
        assert_eq!(full, 3);
    }
}
