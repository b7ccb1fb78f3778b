//! A reader for one AMDGPU assembly instruction as LLVM writes it
//! (`v_cvt_pk_fp8_f32 v1, -v2, |v3| op_sel:[0,0,1]`): the mnemonic with its encoding
//! suffix, the operands with their source modifiers, and the trailing modifiers, each with
//! its position. What a target accepts is [`crate::amd::check`]'s business; this reader
//! only knows the syntax, so that a diagnostic can point at the offending token.
//!
//! ```
//! use gpucvt::amd::parse::{parse, OperandKind};
//! let p = parse("v_cvt_pk_fp8_f32 v1, -v2, |v3| op_sel:[0,0,1]").unwrap();
//! assert_eq!(p.mnemonic, "v_cvt_pk_fp8_f32");
//! assert_eq!(p.operands.len(), 3);
//! assert!(p.operands[1].neg && p.operands[2].abs);
//! assert_eq!(p.operands[0].kind, OperandKind::Vgpr { first: 1, count: 1 });
//! assert_eq!(p.modifiers[0].name, "op_sel");
//! let e = parse("v_cvt_pk_fp8_f32 v1, v2,, v3").unwrap_err();
//! assert_eq!(e[0].span.col, 25);
//! ```

use super::types::{Encoding, Opcode};
use crate::diag::{Diagnostic, Span};

/// One instruction as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The whole text (trimmed).
    pub text: String,
    /// The mnemonic without its encoding suffix, lower case.
    pub mnemonic: String,
    /// Where the mnemonic (with suffix) is.
    pub mnemonic_span: Span,
    /// The encoding suffix.
    pub encoding: Encoding,
    /// The modelled opcode, if the mnemonic names one.
    pub opcode: Option<Opcode>,
    /// The operands, destination first.
    pub operands: Vec<Operand>,
    /// The modifiers after the operands, in order.
    pub modifiers: Vec<Modifier>,
}

/// One operand.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// What it is.
    pub kind: OperandKind,
    /// `-x` or `neg(x)`.
    pub neg: bool,
    /// `|x|` or `abs(x)`.
    pub abs: bool,
    /// Where it is (modifiers included).
    pub span: Span,
}

/// A register or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// `vN` or `v[N:M]`.
    Vgpr {
        /// The first register.
        first: u32,
        /// How many.
        count: u32,
    },
    /// `sN` or `s[N:M]`.
    Sgpr {
        /// The first register.
        first: u32,
        /// How many.
        count: u32,
    },
    /// A number: its 32-bit operand value, and whether it is one of the inline constants
    /// (integers −16 to 64; ±0.5, ±1, ±2, ±4, 1/(2π)) rather than a literal.
    Constant {
        /// The 32 bits the operand reads.
        bits: u32,
        /// Inline constant (no literal dword).
        inline: bool,
    },
}

impl OperandKind {
    /// Whether this is a register of either file.
    pub fn is_register(&self) -> bool {
        !matches!(self, OperandKind::Constant { .. })
    }
}

/// A trailing modifier: `clamp`, `op_sel:[0,0,1]`, `byte_sel:2`, `src0_sel:BYTE_3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modifier {
    /// The name, lower case.
    pub name: String,
    /// Its value.
    pub value: ModValue,
    /// Where it is.
    pub span: Span,
}

/// A modifier's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModValue {
    /// A bare flag (`clamp`).
    Flag,
    /// `:N`.
    Int(i64),
    /// `:[a,b,…]`.
    List(Vec<i64>),
    /// `:WORD` (`BYTE_3`), upper case.
    Word(String),
}

/// 1/(2π) as f32: an inline constant since gfx8.
const INV_2PI: u32 = 0x3e22_f983;

/// The float inline constants and their bits.
const FLOAT_INLINE: [u32; 9] = [
    0x3f00_0000, // 0.5
    0xbf00_0000,
    0x3f80_0000, // 1.0
    0xbf80_0000,
    0x4000_0000, // 2.0
    0xc000_0000,
    0x4080_0000, // 4.0
    0xc080_0000,
    INV_2PI,
];

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn span(&self, start: usize, end: usize) -> Span {
        Span::locate(self.text, start, end)
    }
    fn skip_blanks(&mut self) {
        while let Some(c) = self.text[self.pos..].chars().next() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    /// A word of letters, digits, `_`, `.` (numbers and names).
    fn word(&mut self) -> (usize, &'a str) {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                self.pos += 1;
            } else {
                break;
            }
        }
        (start, &self.text[start..self.pos])
    }
    fn error(&self, start: usize, end: usize, message: String) -> Diagnostic {
        Diagnostic::error("amd.syntax", message, self.span(start, end.max(start + 1)))
    }
}

/// Reads one instruction.
///
/// # Errors
/// The syntax diagnostics, each with the position of the offending token.
pub fn parse(text: &str) -> Result<Parsed, Vec<Diagnostic>> {
    let text = text.trim();
    // A trailing `;` comment (LLVM's `; encoding: …`) is not part of the instruction.
    let text = text.split_once(';').map_or(text, |(a, _)| a).trim_end();
    let mut lx = Lexer { text, pos: 0 };
    let (m_start, word) = lx.word();
    if word.is_empty() {
        return Err(vec![lx.error(0, 1, "expected an AMDGPU mnemonic".into())]);
    }
    let lower = word.to_ascii_lowercase();
    let (mnemonic, encoding) = [
        ("_e32", Encoding::E32),
        ("_e64", Encoding::E64),
        ("_sdwa", Encoding::Sdwa),
    ]
    .iter()
    .find_map(|(s, e)| lower.strip_suffix(s).map(|m| (m.to_string(), *e)))
    .unwrap_or((lower.clone(), Encoding::Default));
    let mnemonic_span = lx.span(m_start, lx.pos);
    let mut p = Parsed {
        text: text.to_string(),
        opcode: Opcode::from_mnemonic(&mnemonic),
        mnemonic,
        mnemonic_span,
        encoding,
        operands: Vec::new(),
        modifiers: Vec::new(),
    };
    // Operands: comma separated, up to the first word that is not followed by a comma and
    // reads as a modifier.
    lx.skip_blanks();
    if lx.peek().is_some() {
        loop {
            lx.skip_blanks();
            let op = operand(&mut lx).map_err(|d| vec![d])?;
            p.operands.push(op);
            lx.skip_blanks();
            if !lx.eat(',') {
                break;
            }
        }
    }
    loop {
        lx.skip_blanks();
        if lx.peek().is_none() {
            break;
        }
        p.modifiers.push(modifier(&mut lx).map_err(|d| vec![d])?);
    }
    Ok(p)
}

fn operand(lx: &mut Lexer<'_>) -> Result<Operand, Diagnostic> {
    let start = lx.pos;
    let mut neg = false;
    let mut abs = false;
    if lx.eat('-') {
        neg = true;
        lx.skip_blanks();
        // `-1.0` is a negative constant, not a negated one.
        if lx.peek().is_some_and(|c| c.is_ascii_digit()) {
            let (kind, end) = constant(lx, start)?;
            return Ok(Operand {
                kind,
                neg: false,
                abs: false,
                span: lx.span(start, end),
            });
        }
    }
    let rest = &lx.text[lx.pos..];
    let lower = rest.to_ascii_lowercase();
    let kind = if lx.eat('|') {
        abs = true;
        lx.skip_blanks();
        let k = atom(lx)?;
        lx.skip_blanks();
        if !lx.eat('|') {
            return Err(lx.error(lx.pos, lx.pos + 1, "expected a closing |".into()));
        }
        k
    } else if let Some(f) = ["abs(", "neg("].iter().find(|f| lower.starts_with(**f)) {
        lx.pos += 4;
        if *f == "abs(" {
            abs = true;
        } else {
            neg = !neg;
        }
        lx.skip_blanks();
        // neg(|v1|) and abs(v1) nest like their signs.
        let k = if *f == "neg(" && lx.eat('|') {
            abs = true;
            let k = atom(lx)?;
            if !lx.eat('|') {
                return Err(lx.error(lx.pos, lx.pos + 1, "expected a closing |".into()));
            }
            k
        } else {
            atom(lx)?
        };
        lx.skip_blanks();
        if !lx.eat(')') {
            return Err(lx.error(lx.pos, lx.pos + 1, "expected a closing )".into()));
        }
        k
    } else {
        atom(lx)?
    };
    Ok(Operand {
        kind,
        neg,
        abs,
        span: lx.span(start, lx.pos),
    })
}

/// A register or an unsigned constant.
fn atom(lx: &mut Lexer<'_>) -> Result<OperandKind, Diagnostic> {
    let start = lx.pos;
    match lx.peek() {
        Some(c) if c.is_ascii_digit() => return constant(lx, start).map(|(k, _)| k),
        Some('v' | 'V' | 's' | 'S') => {}
        _ => {
            return Err(lx.error(
                start,
                start + 1,
                "expected an operand: a register (v1, s2, v[2:3]) or a constant".into(),
            ))
        }
    }
    let vector = matches!(lx.peek(), Some('v' | 'V'));
    lx.pos += 1;
    let (first, count) = if lx.eat('[') {
        let a = number(lx)?;
        if !lx.eat(':') {
            return Err(lx.error(lx.pos, lx.pos + 1, "expected : in a register range".into()));
        }
        let b = number(lx)?;
        if !lx.eat(']') {
            return Err(lx.error(
                lx.pos,
                lx.pos + 1,
                "expected ] after a register range".into(),
            ));
        }
        if b < a {
            return Err(lx.error(
                start,
                lx.pos,
                format!("register range [{a}:{b}] runs backwards"),
            ));
        }
        (a, b - a + 1)
    } else {
        let (_, w) = lx.word();
        match w.parse::<u32>() {
            Ok(n) => (n, 1),
            Err(_) => {
                return Err(lx.error(
                    start,
                    lx.pos,
                    format!(
                        "{:?} is not a register (v1, s2, v[2:3])",
                        crate::instr::shorten(&lx.text[start..lx.pos])
                    ),
                ))
            }
        }
    };
    if first.checked_add(count).is_none_or(|end| end > 512) {
        return Err(lx.error(start, lx.pos, "register number out of range".into()));
    }
    Ok(if vector {
        OperandKind::Vgpr { first, count }
    } else {
        OperandKind::Sgpr { first, count }
    })
}

fn number(lx: &mut Lexer<'_>) -> Result<u32, Diagnostic> {
    let start = lx.pos;
    while lx.peek().is_some_and(|c| c.is_ascii_digit()) {
        lx.pos += 1;
    }
    lx.text[start..lx.pos]
        .parse()
        .map_err(|_| lx.error(start, lx.pos, "expected a register number".into()))
}

/// A constant starting at `lx.pos` (digits), negative when `start` holds a `-`; returns the
/// kind and the end.
fn constant(lx: &mut Lexer<'_>, start: usize) -> Result<(OperandKind, usize), Diagnostic> {
    let negative = lx.text[start..].starts_with('-');
    let (_, w) = lx.word();
    let end = lx.pos;
    let bad = |lx: &Lexer<'_>| {
        lx.error(
            start,
            end,
            format!(
                "{:?} is not a number",
                crate::instr::shorten(&lx.text[start..end])
            ),
        )
    };
    let lower = w.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if !lower.contains(['.', 'e']) {
        lower.parse::<i64>().ok()
    } else {
        None
    };
    if let Some(n) = int {
        let n = if negative { -n } else { n };
        if !(-(1i64 << 31)..1i64 << 32).contains(&n) {
            return Err(lx.error(start, end, "constant does not fit in 32 bits".into()));
        }
        return Ok((
            OperandKind::Constant {
                bits: n as u32,
                inline: (-16..=64).contains(&n),
            },
            end,
        ));
    }
    let x: f32 = lower.parse().map_err(|_| bad(lx))?;
    let bits = if negative { -x } else { x }.to_bits();
    // 1/(2π) is written 0.15915494 by LLVM; any decimal that reads as its f32 is it.
    Ok((
        OperandKind::Constant {
            bits,
            inline: FLOAT_INLINE.contains(&bits) || bits == 0,
        },
        end,
    ))
}

fn modifier(lx: &mut Lexer<'_>) -> Result<Modifier, Diagnostic> {
    let start = lx.pos;
    let (_, w) = lx.word();
    if w.is_empty() {
        return Err(lx.error(
            start,
            start + 1,
            format!(
                "unexpected {:?}: expected an operand, a comma or a modifier (op_sel:[0,0,1], byte_sel:N, clamp)",
                lx.peek().unwrap_or(' ')
            ),
        ));
    }
    let name = w.to_ascii_lowercase();
    let value = if lx.eat(':') {
        if lx.eat('[') {
            let mut items = Vec::new();
            loop {
                lx.skip_blanks();
                let s = lx.pos;
                let (_, n) = lx.word();
                items
                    .push(n.parse::<i64>().map_err(|_| {
                        lx.error(s, lx.pos, "expected a number in the list".into())
                    })?);
                lx.skip_blanks();
                if lx.eat(']') {
                    break;
                }
                if !lx.eat(',') {
                    return Err(lx.error(lx.pos, lx.pos + 1, "expected , or ] in the list".into()));
                }
                if items.len() > 8 {
                    return Err(lx.error(s, lx.pos, "list too long".into()));
                }
            }
            ModValue::List(items)
        } else {
            let s = lx.pos;
            let (_, v) = lx.word();
            if v.is_empty() {
                return Err(lx.error(s, s + 1, format!("expected a value after {name}:")));
            }
            match v.parse::<i64>() {
                Ok(n) => ModValue::Int(n),
                Err(_) => ModValue::Word(v.to_ascii_uppercase()),
            }
        }
    } else {
        ModValue::Flag
    };
    Ok(Modifier {
        name,
        value,
        span: lx.span(start, lx.pos),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_and_modifiers() {
        let p = parse("v_cvt_pk_f32_fp8_e64 v[2:3], v1 op_sel:[1,0]").unwrap();
        assert_eq!(p.encoding, Encoding::E64);
        assert_eq!(p.opcode, Some(Opcode::PkF32Fp8));
        assert_eq!(p.operands[0].kind, OperandKind::Vgpr { first: 2, count: 2 });
        assert_eq!(p.modifiers[0].value, ModValue::List(vec![1, 0]));
        let p = parse("v_cvt_f32_fp8_sdwa v1, s2 src0_sel:BYTE_3").unwrap();
        assert_eq!(p.modifiers[0].value, ModValue::Word("BYTE_3".into()));
        let p = parse("v_cvt_pk_fp8_f32 v1, -1.0, neg(|v3|) ; encoding: [0x01]").unwrap();
        assert_eq!(
            p.operands[1].kind,
            OperandKind::Constant {
                bits: 0xbf80_0000,
                inline: true
            }
        );
        assert!(p.operands[2].neg && p.operands[2].abs);
        let p = parse("v_cvt_sr_fp8_f32 v1, v2, 0x1234").unwrap();
        assert_eq!(
            p.operands[2].kind,
            OperandKind::Constant {
                bits: 0x1234,
                inline: false
            }
        );
    }

    #[test]
    fn errors_point_at_the_token() {
        for (text, col) in [
            ("v_cvt_pk_fp8_f32 v1, v2, |v3", 29),
            ("v_cvt_pk_fp8_f32 v1, v[3:2], v3", 22),
            ("v_cvt_pk_fp8_f32 v1, vx, v3", 22),
            ("v_cvt_pk_fp8_f32 v1, v2, v3 op_sel:[0,0", 40),
            ("", 1),
            ("v_cvt_pk_fp8_f32 v1, v2, v3 $", 29),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e[0].span.col, col, "{text}: {e:?}");
        }
    }
}
