//! Legality of one AMD instruction on a target, as llvm-mc 22 decides it, and the
//! [`Form`] it evaluates as.
//!
//! The rules are the assembler's, measured form by form (`scripts/amd-legality.py` writes
//! `tests/data/amd/mc22_verdicts.tsv`; the tests check every line): which encodings an opcode
//! has per family, which operand kinds each encoding takes (gfx9 VOP3 takes no literal and
//! one scalar value; gfx12 VOP3 one literal and two), which source modifiers and which
//! trailing modifiers. Forms the assembler accepts but whose values the ISA text does not
//! define (or that gpucvt does not model yet: `clamp` on an f32 result, output modifiers,
//! SDWA selects the ISA calls illegal) are refused with the rule `amd.not-modelled`, so a
//! caller can tell them from assembler errors.
//!
//! The CDNA4 ISA restricts `CVT_PK_*`/`CVT_SR_*` sources to VGPRs (L2736) where the
//! assembler takes scalars and constants too: such a source gets the warning
//! `amd.isa-vgpr-only`, and the value is computed as for a VGPR.
//!
//! ```
//! use gpucvt::amd::{check::check, parse::parse, types::Target};
//! let p = parse("v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,1,1]").unwrap();
//! assert_eq!(check(&p, Target::Gfx950).unwrap().0.select, 3);
//! let e = check(&p, Target::Gfx1200).unwrap_err();
//! assert_eq!((e[0].rule, e[0].span.col), ("amd.invalid-operand", 29));
//! ```

use super::parse::{ModValue, Modifier, Operand, OperandKind, Parsed};
use super::types::{Encoding, Family, Opcode, Shape, Target};
use crate::diag::{Diagnostic, Span};

/// A legal instruction, ready to evaluate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    /// The opcode.
    pub opcode: Opcode,
    /// The encoding the assembler picks (`Default` resolved: `E32` or `E64`).
    pub encoding: Encoding,
    /// The target.
    pub target: Target,
    /// The source operands, in order.
    pub sources: Vec<Source>,
    /// The selection: the destination half (`Pack8`), the destination byte (`Stochastic8`),
    /// the source byte (`Widen8`) or the source half (`WidenPair8`); 0 otherwise.
    pub select: u32,
}

/// One source operand as the instruction reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// A register, or a constant with its value.
    pub kind: OperandKind,
    /// Negate (flip the sign bit, after `abs`).
    pub neg: bool,
    /// Absolute value (clear the sign bit).
    pub abs: bool,
}

/// Checks `p` on `target`: the form, and the warnings, or the errors.
///
/// # Errors
/// Every error diagnostic, each at its token.
pub fn check(p: &Parsed, target: Target) -> Result<(Form, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let at = |span: Span, rule: &'static str, msg: String| Diagnostic::error(rule, msg, span);
    let Some(op) = p.opcode else {
        let modelled: Vec<&str> = Opcode::all().map(|o| o.mnemonic()).collect();
        return Err(vec![at(
            p.mnemonic_span,
            "amd.unknown-instruction",
            format!(
                "{} is not an instruction gpucvt models; modelled: {}",
                crate::instr::shorten(&p.mnemonic),
                modelled.join(", ")
            ),
        )]);
    };
    if !op.on(target) {
        return Err(vec![at(
            p.mnemonic_span,
            "amd.unsupported",
            format!("{op}: instruction not supported on {target}"),
        )]);
    }
    let family = target.family();
    let shape = op.shape();
    let vop1 = !op.vop3_only();
    // The encoding: VOP3-only opcodes have no e32/SDWA form; SDWA is gfx9's; a VOP1 opcode
    // without suffix becomes VOP3 when a VOP3 modifier is written.
    let wants_vop3 = p.modifiers.iter().any(|m| {
        matches!(
            m.name.as_str(),
            "clamp" | "byte_sel" | "op_sel" | "mul" | "div"
        )
    });
    let encoding = match (p.encoding, vop1) {
        (Encoding::E32 | Encoding::Sdwa, false) => {
            return Err(vec![at(
                p.mnemonic_span,
                "amd.encoding",
                format!(
                    "{}: {} variant of this instruction is not supported",
                    op,
                    &p.encoding.suffix()[1..]
                ),
            )]);
        }
        (Encoding::Sdwa, true) if family == Family::Gfx12 => {
            return Err(vec![at(
                p.mnemonic_span,
                "amd.encoding",
                format!("{op}: sdwa variant of this instruction is not supported on {target}"),
            )]);
        }
        (Encoding::Default, true) if !wants_vop3 => Encoding::E32,
        (Encoding::Default, _) => Encoding::E64,
        (e, _) => e,
    };
    // Operands: the destination, then the sources.
    let want = 1 + op.sources();
    if p.operands.len() != want {
        let span = p
            .operands
            .get(want)
            .map_or(p.mnemonic_span, |o: &Operand| o.span);
        return Err(vec![at(
            span,
            "amd.operands",
            format!(
                "{op} takes {want} operands (destination and {} source(s)), got {}",
                op.sources(),
                p.operands.len()
            ),
        )]);
    }
    let dst = &p.operands[0];
    let dst_count = op.destination_bits() / 32;
    match dst.kind {
        OperandKind::Vgpr { first, count } if count == dst_count => {
            // gfx9 needs an even-aligned VGPR pair.
            if count == 2 && first % 2 == 1 && family == Family::Gfx9 {
                errors.push(at(
                    dst.span,
                    "amd.invalid-operand",
                    format!(
                        "{op}: invalid register alignment (an even first register on {target})"
                    ),
                ));
            }
            if dst.neg || dst.abs {
                errors.push(at(
                    dst.span,
                    "amd.invalid-operand",
                    "a destination takes no modifier".into(),
                ));
            }
        }
        _ => errors.push(at(
            dst.span,
            "amd.invalid-operand",
            format!(
                "{op}: the destination must be {}",
                if dst_count == 2 {
                    "a VGPR pair v[n:n+1]"
                } else {
                    "one VGPR"
                }
            ),
        )),
    }
    // Sources: kinds, the constant bus and literals.
    let sources = &p.operands[1..];
    let mut scalars: Vec<u32> = Vec::new();
    let mut literals: Vec<u32> = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        match s.kind {
            OperandKind::Vgpr { count: 1, .. } => {}
            OperandKind::Sgpr { first, count: 1 } => {
                if !scalars.contains(&first) {
                    scalars.push(first);
                }
            }
            OperandKind::Constant { inline: true, .. } => {}
            OperandKind::Constant {
                bits,
                inline: false,
            } => {
                let allowed = encoding == Encoding::E32
                    || (encoding == Encoding::E64 && family == Family::Gfx12);
                if !allowed {
                    errors.push(at(
                        s.span,
                        "amd.literal",
                        "literal operands are not supported".into(),
                    ));
                } else if !literals.contains(&bits) {
                    literals.push(bits);
                }
            }
            _ => {
                errors.push(at(
                    s.span,
                    "amd.invalid-operand",
                    format!("{op}: source {i} must be one 32-bit register or a constant"),
                ));
                continue;
            }
        }
        if !matches!(s.kind, OperandKind::Vgpr { .. })
            && matches!(shape, Shape::Pack8(_) | Shape::Stochastic8(_))
        {
            warnings.push(Diagnostic::warning(
                "amd.isa-vgpr-only",
                "the CDNA4 ISA says CVT_PK_*/CVT_SR_* take only VGPR sources (L2736); the assembler accepts this one and gpucvt reads its value as a VGPR's",
                s.span,
            ));
        }
        // Source modifiers: both f32 sources of the packing ops, src0 of SR; none on the
        // 8-bit and integer sources.
        let mods_ok = match shape {
            Shape::Pack8(_) | Shape::PackBf16 => true,
            Shape::Stochastic8(_) => i == 0,
            _ => false,
        };
        if (s.neg || s.abs) && !mods_ok {
            errors.push(at(
                s.span,
                "amd.invalid-operand",
                format!("{op}: source {i} takes no neg/abs modifier (not a valid operand)"),
            ));
        }
    }
    if literals.len() > 1 {
        errors.push(at(
            sources[1].span,
            "amd.literal",
            "only one unique literal operand is allowed".into(),
        ));
    }
    let bus = if family == Family::Gfx9 { 1 } else { 2 };
    if scalars.len() + literals.len() > bus && errors.is_empty() {
        errors.push(at(sources[1].span, "amd.constant-bus", format!("invalid operand (violates constant bus restrictions: at most {bus} scalar value(s) on {target})")));
    }
    // Trailing modifiers.
    let mut select = 0u32;
    let mut seen: Vec<&str> = Vec::new();
    for m in &p.modifiers {
        if seen.contains(&m.name.as_str()) {
            errors.push(at(
                m.span,
                "amd.invalid-operand",
                format!("{} given twice (not a valid operand)", m.name),
            ));
            continue;
        }
        seen.push(&m.name);
        match modifier(m, op, shape, encoding, family) {
            Ok(Some(s)) => select = s,
            Ok(None) => {}
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let sources = sources
        .iter()
        .map(|s| Source {
            kind: s.kind,
            neg: s.neg,
            abs: s.abs,
        })
        .collect();
    Ok((
        Form {
            opcode: op,
            encoding,
            target,
            sources,
            select,
        },
        warnings,
    ))
}

/// One trailing modifier: the selection it sets, if any.
fn modifier(
    m: &Modifier,
    op: Opcode,
    shape: Shape,
    encoding: Encoding,
    family: Family,
) -> Result<Option<u32>, Diagnostic> {
    let invalid =
        |why: &str| Diagnostic::error("amd.invalid-operand", format!("{}: {why}", m.name), m.span);
    let not_modelled = |why: &str| {
        Diagnostic::error(
            "amd.not-modelled",
            format!(
                "{} on {op}: the assembler accepts it, gpucvt does not model it: {why}",
                m.name
            ),
            m.span,
        )
    };
    let bits = |v: &ModValue| -> Result<Vec<u32>, Diagnostic> {
        match v {
            ModValue::List(l)
                if !l.is_empty() && l.len() <= 4 && l.iter().all(|&b| b == 0 || b == 1) =>
            {
                Ok(l.iter().map(|&b| b as u32).collect())
            }
            _ => Err(invalid(
                "expected a list of one to four 0/1 bits (invalid op_sel value)",
            )),
        }
    };
    match (m.name.as_str(), shape) {
        ("op_sel", Shape::Pack8(_)) => {
            // The third element is OPSEL[3] (the destination half); the fourth is dropped
            // by the assembler; the first two select halves of 16-bit sources, which the
            // f32 sources of these opcodes do not have (the pseudocode reads OPSEL[3] only).
            let b = bits(&m.value)?;
            Ok(Some(b.get(2).copied().unwrap_or(0)))
        }
        ("op_sel", Shape::Stochastic8(_)) if family == Family::Gfx9 => {
            // OPSEL[3:2] is the destination byte (ISA L2723–2727).
            let b = bits(&m.value)?;
            Ok(Some(
                2 * b.get(3).copied().unwrap_or(0) + b.get(2).copied().unwrap_or(0),
            ))
        }
        ("op_sel", Shape::WidenPair8(_))
            if family == Family::Gfx12 && encoding == Encoding::E64 =>
        {
            let b = bits(&m.value)?;
            if b.iter().skip(1).any(|&x| x == 1) {
                return Err(not_modelled(
                    "only op_sel[0] (the source half) has a documented meaning",
                ));
            }
            Ok(Some(b[0]))
        }
        ("byte_sel", Shape::Stochastic8(_) | Shape::Widen8(_))
            if family == Family::Gfx12 && encoding == Encoding::E64 =>
        {
            match m.value {
                ModValue::Int(n @ 0..=3) => Ok(Some(n as u32)),
                _ => Err(invalid("expected 0 to 3 (invalid byte_sel value)")),
            }
        }
        ("src0_sel", Shape::Widen8(_) | Shape::WidenPair8(_) | Shape::Prng)
            if encoding == Encoding::Sdwa =>
        {
            let ModValue::Word(w) = &m.value else {
                return Err(invalid("expected BYTE_0 … BYTE_3, WORD_0, WORD_1 or DWORD"));
            };
            let sel = match w.as_str() {
                "BYTE_0" => 0,
                "BYTE_1" => 1,
                "BYTE_2" => 2,
                "BYTE_3" => 3,
                "WORD_0" => 4,
                "WORD_1" => 5,
                "DWORD" => 6,
                _ => return Err(invalid("expected BYTE_0 … BYTE_3, WORD_0, WORD_1 or DWORD")),
            };
            match shape {
                // The ISA: only BYTE selects are legal here (DWORD is the default: byte 0).
                Shape::Widen8(_) if sel <= 3 || sel == 6 => Ok(Some(sel % 6)),
                Shape::WidenPair8(_) if sel == 4 || sel == 5 || sel == 6 => {
                    Ok(Some(u32::from(sel == 5)))
                }
                Shape::Prng if sel == 6 => Ok(None),
                _ => Err(not_modelled(
                    "the CDNA4 ISA calls this select illegal for the opcode (L7469 ff.)",
                )),
            }
        }
        ("clamp", Shape::Widen8(_) | Shape::WidenPair8(_))
            if family == Family::Gfx9 && encoding != Encoding::E32 =>
        {
            Err(not_modelled(
                "the ISA does not say what clamp does to this conversion's f32 result",
            ))
        }
        ("clamp" | "mul" | "div", Shape::PackBf16) => Err(not_modelled(
            "the ISA does not say what clamp or an output modifier does to a bf16 result",
        )),
        _ => Err(invalid(&format!(
            "not a valid operand for {op}{} on this target",
            encoding.suffix()
        ))),
    }
}
