//! A reader for the `.visaasm` subset that conversion code uses (`visa.md` §3).
//!
//! Read: `.version`, `.kernel` / `.function`, `.decl` (general, address, predicate, sampler
//! and surface variables, with `type=`, `num_elts=`, `align=`, `alias=`), and
//! `mov[.sat] (<mask>, <exec size>) <dst> <src>` with an optional predicate, destination and
//! source regions, source modifiers, indirect operands, predicate sources and immediates.
//! Every other instruction is recorded as [`Stmt::Skipped`]; other directives and labels are
//! ignored. Comments start with `//`.
//!
//! Immediates follow the assembler's lexer (§3.3), traps included:
//!
//! | literal | meaning |
//! | --- | --- |
//! | `5:d`, `0x80000000:ud`, `-3:w` | an integer, cast to the type (`-3:w` is `0xFFFD`) |
//! | `1.5:f`, `-2.5:f`, `1.0e-3:df`, `1e+3:f` | a decimal value, rounded to nearest even; an exponent needs its sign |
//! | `1:f`, `0x3f800000:f` | **bit patterns**: `1:f` is 2^-149, not 1.0 |
//! | `0x3c00:hf` | HF only as a bit pattern, below `0x10000` |
//! | `0x76543210:v`, `…:uv`, `…:vf` | the packed dword |
//! | `…:bf` | rejected: BF has no immediate form |
//!
//! The reader never panics; it returns what it could read and a diagnostic per problem.
//!
//! ```
//! use gpucvt::visa::parse::{parse, SrcOperand, Stmt};
//! let (k, diags) = parse("mov.sat (M1, 8) D(0,0)<1> 1.5:f\nadd (M1, 8) D(0,0)<1> D(0,0)<1;1,0> 1:d\n");
//! assert!(diags.is_empty());
//! let Stmt::Mov(m) = &k.stmts[0] else { panic!() };
//! assert!(m.sat);
//! let SrcOperand::Imm(imm) = &m.src else { panic!() };
//! assert_eq!(imm.bits, 0x3fc0_0000);
//! assert!(matches!(&k.stmts[1], Stmt::Skipped(s) if s.mnemonic == "add"));
//! ```

use super::types::{VisaType, CODE_ONLY_NAMES};
use crate::diag::{Diagnostic, Span};
use gpucvt_core::convert::{convert, Policy};
use gpucvt_core::round::Rounding;

/// A parsed `.visaasm` file (one kernel or function).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kernel {
    /// `.version <major>.<minor>`.
    pub version: Option<(u32, u32)>,
    /// The name of `.kernel` or `.function`.
    pub name: Option<String>,
    /// The declarations, in order.
    pub decls: Vec<Decl>,
    /// The instructions, in order.
    pub stmts: Vec<Stmt>,
}

/// What kind of variable a `.decl` declares (`v_type=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarKind {
    /// `G`: a general variable.
    General,
    /// `A`: an address variable.
    Address,
    /// `P`: a predicate variable.
    Predicate,
    /// `S`: a sampler.
    Sampler,
    /// `T`: a surface.
    Surface,
}

impl VarKind {
    fn from_name(s: &str) -> Option<VarKind> {
        Some(match s {
            "G" | "g" => VarKind::General,
            "A" | "a" => VarKind::Address,
            "P" | "p" => VarKind::Predicate,
            "S" | "s" => VarKind::Sampler,
            "T" | "t" => VarKind::Surface,
            _ => return None,
        })
    }
}

/// A type name as written in a declaration or an operand suffix.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeName {
    /// One of the sixteen documented types.
    Known(VisaType),
    /// A type IGC's code knows but the model does not (`tf32`, `hf8`, `bf8`, `e2m1`).
    CodeOnly(String),
    /// Anything else.
    Unknown(String),
}

impl TypeName {
    fn parse(s: &str) -> TypeName {
        if let Some(t) = VisaType::from_name(s) {
            TypeName::Known(t)
        } else if CODE_ONLY_NAMES.iter().any(|n| n.eq_ignore_ascii_case(s)) {
            TypeName::CodeOnly(s.to_string())
        } else {
            TypeName::Unknown(s.to_string())
        }
    }

    /// The type, if it is one of the documented ones.
    pub fn known(&self) -> Option<VisaType> {
        match self {
            TypeName::Known(t) => Some(*t),
            _ => None,
        }
    }
}

/// `alias=<Var, offset>` (or `alias=(Var, offset)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The aliased variable.
    pub target: String,
    /// The byte offset into it.
    pub offset: u64,
    /// Where the alias is written.
    pub span: Span,
}

/// One `.decl`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    /// The variable's name.
    pub name: String,
    /// The name's span.
    pub name_span: Span,
    /// The whole line.
    pub span: Span,
    /// `v_type=` (`None` when missing or unknown; the reader reports it).
    pub kind: Option<VarKind>,
    /// `type=` and its span.
    pub ty: Option<(TypeName, Span)>,
    /// `num_elts=` and its span.
    pub num_elts: Option<(u64, Span)>,
    /// `align=` and its span.
    pub align: Option<(String, Span)>,
    /// `alias=`.
    pub alias: Option<Alias>,
}

/// An instruction: a `mov`, or anything else (skipped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// A `mov`.
    Mov(Box<Mov>),
    /// Another instruction, not modelled.
    Skipped(Skipped),
}

/// An instruction the reader does not model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The mnemonic, lower case, without modifiers.
    pub mnemonic: String,
    /// The text of the first operand after the execution size, if any (to notice writes to
    /// `%cr0`, and what `run` takes as the instruction's destination).
    pub first_operand: Option<String>,
    /// The instruction predicate, if any.
    pub pred: Option<Predicate>,
    /// The execution size group right after the mnemonic (and its modifiers), when it reads
    /// as one.
    pub exec: Option<Exec>,
    /// The instruction as written.
    pub text: String,
    /// The whole line.
    pub span: Span,
}

/// How an instruction predicate combines channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredControl {
    /// Each channel uses its own predicate bit.
    PerChannel,
    /// `.any`: every channel uses the OR of the predicate bits of the execution size.
    Any,
    /// `.all`: every channel uses the AND of those bits.
    All,
}

/// `(P1)`, `(!P1)`, `(P1.any)`, `(!P2.all)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicate {
    /// The predicate variable.
    pub name: String,
    /// `!`.
    pub negated: bool,
    /// `.any` / `.all`.
    pub control: PredControl,
    /// Where.
    pub span: Span,
}

/// The execution mask and size: `(M1, 16)`, `(M5_NM, 8)`, `(NoMask, 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exec {
    /// The first channel (0, 4, …, 28 for M1…M8).
    pub offset: u32,
    /// `_NM` / `NoMask`: the execution mask is ignored (predication still applies).
    pub nomask: bool,
    /// The execution size as written.
    pub size: u64,
    /// Where the parenthesised group is.
    pub span: Span,
}

/// A source region `<vstride;width,hstride>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Vertical stride, in elements.
    pub vstride: u64,
    /// Width: elements per row.
    pub width: u64,
    /// Horizontal stride, in elements.
    pub hstride: u64,
    /// Where.
    pub span: Span,
}

/// A source modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SrcMod {
    /// `(-)`.
    Neg,
    /// `(abs)`.
    Abs,
    /// `(-abs)`.
    NegAbs,
    /// `(~)` (logic instructions only).
    Not,
}

/// `Var(row,col)`: a variable and a starting element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarRef {
    /// The variable.
    pub name: String,
    /// The name's span.
    pub name_span: Span,
    /// The row (register) offset.
    pub row: u64,
    /// The column (element) offset within the row.
    pub col: u64,
}

/// `r[A(sub), imm]`: an indirect operand's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indirect {
    /// The address variable.
    pub addr: String,
    /// Its element.
    pub sub: u64,
    /// The immediate byte offset.
    pub offset: i64,
    /// The type suffix.
    pub ty: TypeName,
}

/// A destination operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DstOperand {
    /// `Var(row,col)<hstride>`.
    Direct {
        /// The variable and element.
        var: VarRef,
        /// The horizontal stride.
        hstride: u64,
        /// The whole operand.
        span: Span,
    },
    /// `r[A(0),64]<1>:ud`.
    Indirect {
        /// The address.
        ind: Indirect,
        /// The horizontal stride.
        hstride: u64,
        /// The whole operand.
        span: Span,
    },
}

impl DstOperand {
    /// The operand's span.
    pub fn span(&self) -> Span {
        match self {
            DstOperand::Direct { span, .. } | DstOperand::Indirect { span, .. } => *span,
        }
    }
}

/// An immediate operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Immediate {
    /// Its type.
    pub ty: VisaType,
    /// Its bits (the whole dword for V/UV/VF).
    pub bits: u64,
    /// The literal was a decimal integer given to a float type (`1:f`: a bit pattern).
    pub decimal_bits: bool,
    /// The literal's value does not fit the type and was truncated.
    pub truncated: bool,
    /// Where.
    pub span: Span,
}

/// A source operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SrcOperand {
    /// `[mod]Var(row,col)<v;w,h>`.
    Direct {
        /// The source modifier.
        modifier: Option<(SrcMod, Span)>,
        /// The variable and element.
        var: VarRef,
        /// The region.
        region: Region,
        /// The whole operand.
        span: Span,
    },
    /// `[mod]r[A(0),64]<v;w,h>:type`.
    Indirect {
        /// The source modifier.
        modifier: Option<(SrcMod, Span)>,
        /// The address.
        ind: Indirect,
        /// The region.
        region: Region,
        /// The whole operand.
        span: Span,
    },
    /// An immediate.
    Imm(Immediate),
    /// A predicate variable read as an integer.
    Pred {
        /// The predicate.
        name: String,
        /// Where.
        span: Span,
    },
}

impl SrcOperand {
    /// The operand's span.
    pub fn span(&self) -> Span {
        match self {
            SrcOperand::Direct { span, .. }
            | SrcOperand::Indirect { span, .. }
            | SrcOperand::Pred { span, .. } => *span,
            SrcOperand::Imm(i) => i.span,
        }
    }

    /// The source modifier, if any.
    pub fn modifier(&self) -> Option<(SrcMod, Span)> {
        match self {
            SrcOperand::Direct { modifier, .. } | SrcOperand::Indirect { modifier, .. } => {
                *modifier
            }
            _ => None,
        }
    }
}

/// A `mov` instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mov {
    /// The instruction predicate.
    pub pred: Option<Predicate>,
    /// `.sat`.
    pub sat: bool,
    /// The execution mask and size.
    pub exec: Exec,
    /// The destination.
    pub dst: DstOperand,
    /// The source.
    pub src: SrcOperand,
    /// The whole line (without comment).
    pub span: Span,
}

// ---------------------------------------------------------------------------------------
// Lexing

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    Ident(&'a str),
    Num(&'a str),
    Str(&'a str),
    Punct(char),
    Bad(char),
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    tok: Tok<'a>,
    start: usize,
    end: usize,
}

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '%' || c == '$'
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '@'
}

/// The tokens of one line into `out`, emptied first (`base` = byte offset of the line in the
/// text).
fn lex_line<'a>(line: &'a str, base: usize, out: &mut Vec<Token<'a>>) {
    out.clear();
    let mut it = line.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if c.is_whitespace() {
            continue;
        }
        let mut end = i + c.len_utf8();
        let tok = if ident_start(c) {
            while let Some(&(j, d)) = it.peek() {
                if ident_char(d) {
                    end = j + d.len_utf8();
                    it.next();
                } else {
                    break;
                }
            }
            Tok::Ident(&line[i..end])
        } else if c.is_ascii_digit() {
            let hex = c == '0' && matches!(it.peek(), Some(&(_, 'x' | 'X')));
            let mut prev = c;
            while let Some(&(j, d)) = it.peek() {
                let sign_after_e = !hex && (d == '+' || d == '-') && (prev == 'e' || prev == 'E');
                if d.is_ascii_alphanumeric() || d == '_' || d == '.' || sign_after_e {
                    end = j + d.len_utf8();
                    prev = d;
                    it.next();
                } else {
                    break;
                }
            }
            Tok::Num(&line[i..end])
        } else if c == '"' {
            let mut closed = false;
            for (j, d) in it.by_ref() {
                end = j + d.len_utf8();
                if d == '"' {
                    closed = true;
                    break;
                }
            }
            if closed {
                Tok::Str(&line[i + 1..end - 1])
            } else {
                Tok::Bad('"')
            }
        } else if "()<>;,=:[]{}!-~&+.*".contains(c) {
            Tok::Punct(c)
        } else {
            Tok::Bad(c)
        };
        out.push(Token {
            tok,
            start: base + i,
            end: base + end,
        });
    }
}

/// Positions in the line being read: the reader works one line at a time, so a span's line
/// is the current one and its column counts from the line's start (no table of every
/// line's start is kept).
struct Locator<'a> {
    text: &'a str,
    /// 1-based number of the current line.
    line: u32,
    /// Byte offset of its first byte.
    start: usize,
}

impl<'a> Locator<'a> {
    fn span(&self, start: usize, end: usize) -> Span {
        let start = start.min(self.text.len()).max(self.start);
        let end = end.max(start).min(self.text.len());
        let col = self
            .text
            .get(self.start..start)
            .map_or(0, |s| s.chars().count())
            + 1;
        Span {
            start,
            end,
            line: self.line,
            col: col as u32,
        }
    }
}

/// The lines of `text` with their byte offsets: a line ends at `\n`, `\r\n` or a lone `\r`
/// (old Mac line ends), as the PTX and Tile IR readers end them. The `\r` of `\r\n` stays
/// in its line (the lexer takes it as white space).
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0usize;
    std::iter::from_fn(move || {
        if at > bytes.len() {
            return None;
        }
        let from = at;
        let mut i = from;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                break;
            }
            i += 1;
        }
        at = i + 1;
        // Line ends are ASCII: `from..i` are character boundaries.
        Some((from, text.get(from..i).unwrap_or("")))
    })
}

// ---------------------------------------------------------------------------------------
// Parsing

struct Line<'a, 'l> {
    toks: Vec<Token<'a>>,
    i: usize,
    loc: &'l Locator<'a>,
    /// Byte offset of the end of the line's content.
    end: usize,
}

type PResult<T> = Result<T, Diagnostic>;

fn describe(t: &Tok<'_>) -> String {
    match t {
        Tok::Ident(s) | Tok::Num(s) => format!("`{s}`"),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::Punct(c) | Tok::Bad(c) => format!("`{c}`"),
    }
}

impl<'a> Line<'a, '_> {
    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.i).map(|t| t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<Tok<'a>> {
        self.toks.get(self.i + k).map(|t| t.tok)
    }

    fn pos(&self) -> usize {
        self.toks.get(self.i).map_or(self.end, |t| t.start)
    }

    fn prev_end(&self) -> usize {
        if self.i == 0 {
            self.pos()
        } else {
            self.toks[self.i - 1].end
        }
    }

    fn span_from(&self, start: usize) -> Span {
        self.loc.span(start, self.prev_end())
    }

    fn error(&self, expected: &str) -> Diagnostic {
        match self.toks.get(self.i) {
            Some(t) => Diagnostic::error(
                "visa.syntax",
                format!("expected {expected}, found {}", describe(&t.tok)),
                self.loc.span(t.start, t.end),
            ),
            None => Diagnostic::error(
                "visa.syntax",
                format!("expected {expected} before the end of the line"),
                self.loc.span(self.end, self.end),
            ),
        }
    }

    fn punct(&mut self, c: char) -> PResult<()> {
        if self.peek() == Some(Tok::Punct(c)) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.error(&format!("`{c}`")))
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(Tok::Punct(c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self, what: &str) -> PResult<(&'a str, Span)> {
        match self.toks.get(self.i) {
            Some(Token {
                tok: Tok::Ident(s),
                start,
                end,
            }) => {
                let sp = self.loc.span(*start, *end);
                self.i += 1;
                Ok((s, sp))
            }
            _ => Err(self.error(what)),
        }
    }

    /// An unsigned integer (decimal or hex).
    fn uint(&mut self, what: &str) -> PResult<(u64, Span)> {
        match self.toks.get(self.i) {
            Some(Token {
                tok: Tok::Num(s),
                start,
                end,
            }) => {
                let sp = self.loc.span(*start, *end);
                match parse_uint(s) {
                    Some(v) => {
                        self.i += 1;
                        Ok((v, sp))
                    }
                    None => Err(Diagnostic::error(
                        "visa.syntax",
                        format!("expected {what}, found `{s}` (not an integer that fits 64 bits)"),
                        sp,
                    )),
                }
            }
            _ => Err(self.error(what)),
        }
    }

    fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    fn expect_end(&self) -> PResult<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error("the end of the line"))
        }
    }
}

/// The message for a character no token starts with, naming it by its code point when it
/// does not show (a byte order mark, a control or format character, a space other than
/// ASCII's).
fn unexpected_character(c: char) -> String {
    let invisible = c.is_control()
        || c.is_whitespace()
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}');
    let code = format!("U+{:04X}", u32::from(c));
    match c {
        '\u{feff}' => format!(
            "unexpected character {code}, a byte order mark (save the file as UTF-8 without one)"
        ),
        _ if invisible => format!("unexpected invisible character {code}"),
        _ => format!("unexpected character `{c}`"),
    }
}

/// A decimal or `0x` hexadecimal unsigned integer that fits in 64 bits.
fn parse_uint(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if h.is_empty() {
            return None;
        }
        u64::from_str_radix(h, 16).ok()
    } else if s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// Reads a `.visaasm` text. Never panics: problems are diagnostics (rule `visa.syntax` for
/// the grammar, `visa.imm` for immediates, `visa.decl` for malformed declarations), and the
/// line with the problem is left out of the kernel.
pub fn parse(text: &str) -> (Kernel, Vec<Diagnostic>) {
    let mut decls = Vec::new();
    let mut stmts = Vec::new();
    let (header, diags) = read(text, &mut |item| match item {
        Item::Decl(d) => decls.push(d),
        Item::Stmt(s) => stmts.push(s),
    });
    let k = Kernel {
        version: header.version,
        name: header.name,
        decls,
        stmts,
    };
    (k, diags)
}

/// A declaration or an instruction, as [`read`] hands them over.
pub(crate) enum Item {
    Decl(Decl),
    Stmt(Stmt),
}

/// What a kernel says of itself: [`Kernel`] without its declarations and instructions.
#[derive(Default)]
pub(crate) struct Header {
    pub(crate) version: Option<(u32, u32)>,
    pub(crate) name: Option<String>,
}

/// [`parse`] one line at a time: each declaration and instruction goes to `on_item` as soon
/// as its line is read, so that a reader that needs only one at once (the checker) holds
/// no more than a line. Returns the header and the reader's diagnostics.
pub(crate) fn read(text: &str, on_item: &mut dyn FnMut(Item)) -> (Header, Vec<Diagnostic>) {
    let mut out = Out {
        header: Header::default(),
        on_item,
    };
    let mut diags = Vec::new();
    let mut toks = Vec::new();
    for (number, (line_start, raw)) in lines(text).enumerate() {
        let content = match raw.find("//") {
            Some(i) => &raw[..i],
            None => raw,
        };
        lex_line(content, line_start, &mut toks);
        if toks.is_empty() {
            continue;
        }
        let end = toks.last().map_or(line_start, |t| t.end);
        let loc = Locator {
            text,
            line: u32::try_from(number + 1).unwrap_or(u32::MAX),
            start: line_start,
        };
        let mut line = Line {
            toks: std::mem::take(&mut toks),
            i: 0,
            loc: &loc,
            end,
        };
        if let Err(d) = parse_line(&mut line, &mut out, &mut diags) {
            diags.push(d);
        }
        toks = line.toks;
    }
    (out.header, diags)
}

/// Where the reader puts what it reads.
struct Out<'s> {
    header: Header,
    on_item: &'s mut dyn FnMut(Item),
}

fn parse_line(l: &mut Line<'_, '_>, k: &mut Out<'_>, diags: &mut Vec<Diagnostic>) -> PResult<()> {
    if let Some(Token {
        tok: Tok::Bad(c),
        start,
        end,
    }) = l.toks.iter().find(|t| matches!(t.tok, Tok::Bad(_)))
    {
        let msg = if *c == '"' {
            "unterminated string".to_string()
        } else {
            unexpected_character(*c)
        };
        return Err(Diagnostic::error(
            "visa.syntax",
            msg,
            l.loc.span(*start, *end),
        ));
    }
    if l.peek() == Some(Tok::Punct('.')) {
        if let Some(Tok::Ident(d)) = l.peek_at(1) {
            l.i += 2;
            return directive(l, d, k, diags);
        }
        return Err(l.error("a directive name"));
    }
    // A label: `name:` alone on the line.
    if let (Some(Tok::Ident(_)), Some(Tok::Punct(':'))) = (l.peek(), l.peek_at(1)) {
        if l.toks.len() == 2 {
            return Ok(());
        }
    }
    instruction(l, k, diags)
}

fn directive(
    l: &mut Line<'_, '_>,
    name: &str,
    k: &mut Out<'_>,
    diags: &mut Vec<Diagnostic>,
) -> PResult<()> {
    match name {
        "version" => {
            let t = l.toks.get(l.i).copied();
            let (s, sp) = match t {
                Some(Token {
                    tok: Tok::Num(s),
                    start,
                    end,
                }) => (s, l.loc.span(start, end)),
                _ => return Err(l.error("a version such as `3.6`")),
            };
            l.i += 1;
            let mut parts = s.splitn(2, '.');
            let maj = parts.next().and_then(|p| p.parse::<u32>().ok());
            let min = parts.next().and_then(|p| p.parse::<u32>().ok());
            match (maj, min) {
                (Some(a), Some(b)) => k.header.version = Some((a, b)),
                _ => {
                    return Err(Diagnostic::error(
                        "visa.syntax",
                        format!("`{s}` is not a version `<major>.<minor>`"),
                        sp,
                    ))
                }
            }
            l.expect_end()
        }
        "kernel" | "function" | "global_function" => {
            let name = match l.peek() {
                Some(Tok::Str(s)) | Some(Tok::Ident(s)) => s.to_string(),
                _ => return Err(l.error("a kernel name")),
            };
            l.i += 1;
            k.header.name = Some(name);
            Ok(())
        }
        "decl" => {
            let d = decl(l, diags)?;
            (k.on_item)(Item::Decl(d));
            Ok(())
        }
        // Other directives (.input, .kernel_attr, .implicit_*, …) do not matter here.
        _ => Ok(()),
    }
}

const ALIGN_NAMES: &[&str] = &[
    "byte", "word", "dword", "qword", "oword", "hword", "wordx32", "wordx64", "GRF", "GRFx2",
    "2GRF",
];

/// The alignment names the assembler accepts (`2GRF` is deprecated).
pub fn align_names() -> &'static [&'static str] {
    ALIGN_NAMES
}

fn decl(l: &mut Line<'_, '_>, diags: &mut Vec<Diagnostic>) -> PResult<Decl> {
    let line_start = l.toks.first().map_or(0, |t| t.start);
    let (name, name_span) = l.ident("a variable name")?;
    let mut d = Decl {
        name: name.to_string(),
        name_span,
        span: l.loc.span(line_start, l.end),
        kind: None,
        ty: None,
        num_elts: None,
        align: None,
        alias: None,
    };
    let mut saw_vtype = false;
    while !l.at_end() {
        let (key, key_span) = l.ident("an attribute such as `type=`")?;
        l.punct('=')?;
        match key {
            "v_type" => {
                let (v, sp) = l.ident("G, A, P, S or T")?;
                saw_vtype = true;
                match VarKind::from_name(v) {
                    Some(kind) => d.kind = Some(kind),
                    None => diags.push(Diagnostic::error(
                        "visa.decl",
                        format!("unknown v_type `{v}` (expected G, A, P, S or T)"),
                        sp,
                    )),
                }
            }
            "type" => {
                let (v, sp) = l.ident("a type name")?;
                d.ty = Some((TypeName::parse(v), sp));
            }
            "num_elts" => {
                d.num_elts = Some(l.uint("a number of elements")?);
            }
            "align" => {
                let t = l.toks.get(l.i).copied();
                match t {
                    Some(Token {
                        tok: Tok::Ident(s) | Tok::Num(s),
                        start,
                        end,
                    }) => {
                        l.i += 1;
                        d.align = Some((s.to_string(), l.loc.span(start, end)));
                    }
                    _ => return Err(l.error("an alignment name")),
                }
            }
            "alias" => {
                let start = l.pos();
                let close = if l.eat('<') {
                    '>'
                } else if l.eat('(') {
                    ')'
                } else {
                    return Err(l.error("`<` (alias=<Var, offset>)"));
                };
                let (target, _) = l.ident("the aliased variable")?;
                l.punct(',')?;
                let (offset, _) = l.uint("a byte offset")?;
                l.punct(close)?;
                d.alias = Some(Alias {
                    target: target.to_string(),
                    offset,
                    span: l.span_from(start),
                });
            }
            "attrs" => {
                l.punct('{')?;
                while !l.eat('}') {
                    if l.at_end() {
                        return Err(l.error("`}`"));
                    }
                    l.i += 1;
                }
            }
            _ => {
                diags.push(Diagnostic::warning(
                    "visa.decl",
                    format!("unknown declaration attribute `{key}` ignored"),
                    key_span,
                ));
                if !l.at_end() {
                    l.i += 1;
                }
            }
        }
    }
    if !saw_vtype {
        diags.push(Diagnostic::error(
            "visa.decl",
            format!("`.decl {}` has no v_type=", d.name),
            d.span,
        ));
    }
    Ok(d)
}

fn instruction(l: &mut Line<'_, '_>, k: &mut Out<'_>, diags: &mut Vec<Diagnostic>) -> PResult<()> {
    let start = l.pos();
    let pred = if l.peek() == Some(Tok::Punct('(')) {
        Some(predicate(l)?)
    } else {
        None
    };
    let (mnemonic, _) = l.ident("an instruction mnemonic")?;
    let mnemonic = mnemonic.to_ascii_lowercase();
    if mnemonic != "mov" {
        // Skip to after the execution size group, note the first operand.
        let mut first_operand = None;
        if let Some(close) = l.toks[l.i..].iter().position(|t| t.tok == Tok::Punct(')')) {
            let j = l.i + close + 1;
            if let Some(t) = l.toks.get(j) {
                let end = l.toks[j..]
                    .iter()
                    .position(|t| t.tok == Tok::Punct('>'))
                    .map_or(t.end, |p| l.toks[j + p].end);
                first_operand = l.loc.text.get(t.start..end).map(str::to_string);
            }
        }
        // The execution size group: the first parenthesis after the mnemonic and its
        // modifiers (`raw_sends.15.1.0.1 (M1, 16) …`).
        let save = l.i;
        let exec = match l.toks[l.i..].iter().position(|t| t.tok == Tok::Punct('(')) {
            Some(p) => {
                l.i += p;
                exec(l).ok()
            }
            None => None,
        };
        l.i = save;
        let span = l.loc.span(start, l.end);
        (k.on_item)(Item::Stmt(Stmt::Skipped(Skipped {
            mnemonic,
            first_operand,
            pred,
            exec,
            text: l
                .loc
                .text
                .get(span.start..span.end)
                .unwrap_or("")
                .to_string(),
            span,
        })));
        return Ok(());
    }
    let mut sat = false;
    while l.eat('.') {
        let (m, sp) = l.ident("an instruction modifier")?;
        if m.eq_ignore_ascii_case("sat") {
            if sat {
                diags.push(Diagnostic::warning("visa.syntax", "`.sat` given twice", sp));
            }
            sat = true;
        } else {
            return Err(Diagnostic::error(
                "visa.syntax",
                format!("unknown mov modifier `.{m}` (only .sat)"),
                sp,
            ));
        }
    }
    let exec = exec(l)?;
    let dst = dst_operand(l)?;
    let src = src_operand(l)?;
    l.expect_end()?;
    (k.on_item)(Item::Stmt(Stmt::Mov(Box::new(Mov {
        pred,
        sat,
        exec,
        dst,
        src,
        span: l.loc.span(start, l.end),
    }))));
    Ok(())
}

fn predicate(l: &mut Line<'_, '_>) -> PResult<Predicate> {
    let start = l.pos();
    l.punct('(')?;
    let negated = l.eat('!');
    let (name, _) = l.ident("a predicate variable")?;
    let mut control = PredControl::PerChannel;
    if l.eat('.') {
        let (c, sp) = l.ident("any or all")?;
        control = match c.to_ascii_lowercase().as_str() {
            "any" => PredControl::Any,
            "all" => PredControl::All,
            _ => {
                return Err(Diagnostic::error(
                    "visa.syntax",
                    format!("unknown predicate control `.{c}` (expected .any or .all)"),
                    sp,
                ))
            }
        };
    }
    l.punct(')')?;
    Ok(Predicate {
        name: name.to_string(),
        negated,
        control,
        span: l.span_from(start),
    })
}

fn exec(l: &mut Line<'_, '_>) -> PResult<Exec> {
    let start = l.pos();
    l.punct('(')?;
    let (m, sp) = l.ident("an execution mask such as M1 or M1_NM")?;
    let upper = m.to_ascii_uppercase();
    let (offset, nomask) = if upper == "NOMASK" || upper == "NM" {
        (0, true)
    } else {
        let (body, nomask) = match upper.strip_suffix("_NM") {
            Some(b) => (b, true),
            None => (upper.as_str(), false),
        };
        let n = body
            .strip_prefix('M')
            .and_then(|d| d.parse::<u32>().ok())
            .filter(|n| (1..=8).contains(n));
        match n {
            Some(n) => ((n - 1) * 4, nomask),
            None => {
                return Err(Diagnostic::error(
                    "visa.syntax",
                    format!(
                        "unknown execution mask `{m}` (expected M1..M8, M1_NM..M8_NM or NoMask)"
                    ),
                    sp,
                ))
            }
        }
    };
    l.punct(',')?;
    let (size, _) = l.uint("an execution size")?;
    l.punct(')')?;
    Ok(Exec {
        offset,
        nomask,
        size,
        span: l.span_from(start),
    })
}

fn var_ref(l: &mut Line<'_, '_>) -> PResult<VarRef> {
    let (name, name_span) = l.ident("a variable")?;
    l.punct('(')?;
    let (row, _) = l.uint("a row offset")?;
    l.punct(',')?;
    let (col, _) = l.uint("a column offset")?;
    l.punct(')')?;
    Ok(VarRef {
        name: name.to_string(),
        name_span,
        row,
        col,
    })
}

fn indirect(l: &mut Line<'_, '_>) -> PResult<(Indirect, Option<Region>, u64)> {
    // r [ A ( sub ) , [-]imm ] region : type
    l.i += 1; // `r`
    l.punct('[')?;
    let (addr, _) = l.ident("an address variable")?;
    l.punct('(')?;
    let (sub, _) = l.uint("an address element")?;
    l.punct(')')?;
    let mut offset = 0i64;
    if l.eat(',') {
        let neg = l.eat('-');
        let (v, sp) = l.uint("an immediate offset")?;
        let v = i64::try_from(v)
            .map_err(|_| Diagnostic::error("visa.syntax", "indirect offset too large", sp))?;
        offset = if neg { -v } else { v };
    }
    l.punct(']')?;
    let rstart = l.pos();
    l.punct('<')?;
    let (a, _) = l.uint("a stride")?;
    let region = if l.eat(';') {
        let (w, _) = l.uint("a width")?;
        l.punct(',')?;
        let (h, _) = l.uint("a horizontal stride")?;
        l.punct('>')?;
        Some(Region {
            vstride: a,
            width: w,
            hstride: h,
            span: l.span_from(rstart),
        })
    } else {
        l.punct('>')?;
        None
    };
    l.punct(':')?;
    let (t, _) = l.ident("a type suffix")?;
    Ok((
        Indirect {
            addr: addr.to_string(),
            sub,
            offset,
            ty: TypeName::parse(t),
        },
        region,
        a,
    ))
}

fn dst_operand(l: &mut Line<'_, '_>) -> PResult<DstOperand> {
    let start = l.pos();
    if matches!(l.peek(), Some(Tok::Ident(_))) && l.peek_at(1) == Some(Tok::Punct('[')) {
        let (ind, region, h) = indirect(l)?;
        if region.is_some() {
            return Err(Diagnostic::error(
                "visa.syntax",
                "a destination region is `<hstride>`, not `<v;w,h>`",
                l.span_from(start),
            ));
        }
        return Ok(DstOperand::Indirect {
            ind,
            hstride: h,
            span: l.span_from(start),
        });
    }
    if !matches!(l.peek(), Some(Tok::Ident(_))) {
        return Err(l.error("a destination operand such as `V1(0,0)<1>`"));
    }
    let var = var_ref(l)?;
    l.punct('<')?;
    let (h, _) = l.uint("a destination horizontal stride")?;
    if l.peek() == Some(Tok::Punct(';')) {
        return Err(Diagnostic::error(
            "visa.syntax",
            "a destination region is `<hstride>`, not `<v;w,h>`",
            l.loc.span(l.pos(), l.pos() + 1),
        ));
    }
    l.punct('>')?;
    Ok(DstOperand::Direct {
        var,
        hstride: h,
        span: l.span_from(start),
    })
}

fn src_modifier(l: &mut Line<'_, '_>) -> PResult<Option<(SrcMod, Span)>> {
    if l.peek() != Some(Tok::Punct('(')) {
        return Ok(None);
    }
    let start = l.pos();
    l.i += 1;
    let m = if l.eat('~') {
        SrcMod::Not
    } else {
        let neg = l.eat('-');
        let abs = match l.peek() {
            Some(Tok::Ident(s)) if s.eq_ignore_ascii_case("abs") => {
                l.i += 1;
                true
            }
            _ => false,
        };
        match (neg, abs) {
            (true, true) => SrcMod::NegAbs,
            (true, false) => SrcMod::Neg,
            (false, true) => SrcMod::Abs,
            (false, false) => return Err(l.error("a source modifier: -, abs, -abs or ~")),
        }
    };
    l.punct(')')?;
    Ok(Some((m, l.span_from(start))))
}

fn src_operand(l: &mut Line<'_, '_>) -> PResult<SrcOperand> {
    let start = l.pos();
    let modifier = src_modifier(l)?;
    match (l.peek(), l.peek_at(1)) {
        (Some(Tok::Ident(_)), Some(Tok::Punct('['))) => {
            let (ind, region, _) = indirect(l)?;
            let Some(region) = region else {
                return Err(Diagnostic::error(
                    "visa.syntax",
                    "an indirect source needs a region `<vstride;width,hstride>`",
                    l.span_from(start),
                ));
            };
            Ok(SrcOperand::Indirect {
                modifier,
                ind,
                region,
                span: l.span_from(start),
            })
        }
        (Some(Tok::Ident(_)), Some(Tok::Punct('('))) => {
            let var = var_ref(l)?;
            let rstart = l.pos();
            l.punct('<')?;
            let (v, _) = l.uint("a vertical stride")?;
            if l.peek() == Some(Tok::Punct('>')) {
                return Err(Diagnostic::error(
                    "visa.syntax",
                    "a source region is `<vstride;width,hstride>`",
                    l.span_from(rstart),
                ));
            }
            l.punct(';')?;
            let (w, _) = l.uint("a width")?;
            l.punct(',')?;
            let (h, _) = l.uint("a horizontal stride")?;
            l.punct('>')?;
            let region = Region {
                vstride: v,
                width: w,
                hstride: h,
                span: l.span_from(rstart),
            };
            Ok(SrcOperand::Direct {
                modifier,
                var,
                region,
                span: l.span_from(start),
            })
        }
        (Some(Tok::Ident(name)), _) => {
            l.i += 1;
            let span = l.span_from(start);
            if modifier.is_some() {
                return Err(Diagnostic::error(
                    "visa.modifier",
                    "a source modifier cannot apply to a predicate source",
                    span,
                ));
            }
            Ok(SrcOperand::Pred {
                name: name.to_string(),
                span,
            })
        }
        (Some(Tok::Punct('&')), _) => Err(Diagnostic::error(
            "visa.unsupported",
            "address-of operands (`&V+off`) are outside the modelled subset",
            l.loc.span(start, l.end),
        )),
        (Some(Tok::Num(_) | Tok::Punct('-')), _) => {
            let imm = immediate(l)?;
            if let Some((_, sp)) = modifier {
                return Err(Diagnostic::error(
                    "visa.modifier",
                    "a source modifier cannot apply to an immediate; write the value itself",
                    sp,
                ));
            }
            Ok(SrcOperand::Imm(imm))
        }
        _ => Err(l.error("a source operand")),
    }
}

fn imm_error(msg: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic::error("visa.imm", msg, span)
}

/// Parses `[-]<number>:<type>`.
fn immediate(l: &mut Line<'_, '_>) -> PResult<Immediate> {
    let start = l.pos();
    let neg = l.eat('-');
    let lit = match l.toks.get(l.i) {
        Some(Token {
            tok: Tok::Num(s), ..
        }) => *s,
        _ => return Err(l.error("a number")),
    };
    l.i += 1;
    if l.peek() != Some(Tok::Punct(':')) {
        return Err(l.error("`:` and a type (immediates need one, e.g. `5:d`)"));
    }
    l.i += 1;
    let (tname, tspan) = l.ident("an immediate type")?;
    let span = l.span_from(start);
    let ty = match TypeName::parse(tname) {
        TypeName::Known(t) => t,
        TypeName::CodeOnly(n) => {
            return Err(imm_error(
                format!("immediates of type `{n}` are outside the modelled subset"),
                tspan,
            ))
        }
        TypeName::Unknown(n) => {
            return Err(imm_error(format!("unknown immediate type `{n}`"), tspan))
        }
    };
    immediate_value(neg, lit, ty, span)
}

enum Lit {
    Int(u128),
    Float,
}

fn classify(lit: &str, span: Span) -> PResult<Lit> {
    let clean: String = lit.chars().filter(|&c| c != '_').collect();
    if let Some(h) = clean
        .strip_prefix("0x")
        .or_else(|| clean.strip_prefix("0X"))
    {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(imm_error(
                format!("`{lit}` is not a hexadecimal number"),
                span,
            ));
        }
        return u128::from_str_radix(h, 16)
            .map(Lit::Int)
            .map_err(|_| imm_error(format!("`{lit}` is too large"), span));
    }
    if clean.bytes().all(|b| b.is_ascii_digit()) {
        return clean
            .parse::<u128>()
            .map(Lit::Int)
            .map_err(|_| imm_error(format!("`{lit}` is too large"), span));
    }
    // A decimal float: digits, an optional fraction, an optional exponent with a sign.
    let b = clean.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut has_point = false;
    if i < b.len() && b[i] == b'.' {
        has_point = true;
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    let mut has_exp = false;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        has_exp = true;
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        } else {
            return Err(imm_error(
                format!("`{lit}`: the exponent needs an explicit sign (write `1e+3`, not `1e3`)"),
                span,
            ));
        }
        let ds = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == ds {
            return Err(imm_error(format!("`{lit}`: missing exponent digits"), span));
        }
    }
    if i != b.len() || !(has_point || has_exp) {
        return Err(imm_error(format!("`{lit}` is not a number"), span));
    }
    Ok(Lit::Float)
}

fn immediate_value(neg: bool, lit: &str, ty: VisaType, span: Span) -> PResult<Immediate> {
    let class = classify(lit, span)?;
    let mut imm = Immediate {
        ty,
        bits: 0,
        decimal_bits: false,
        truncated: false,
        span,
    };
    let width = match ty {
        VisaType::V | VisaType::Uv | VisaType::Vf => 32,
        _ => ty.element_format().width(),
    };
    let mask: u128 = if width >= 64 {
        u64::MAX as u128
    } else {
        (1u128 << width) - 1
    };
    match ty {
        VisaType::Bool => {
            return Err(imm_error("BOOL has no immediate form", span));
        }
        VisaType::Bf => {
            return Err(imm_error(
                "BF has no immediate form (IGC uses an F immediate holding the BF bits << 16)",
                span,
            ));
        }
        _ => {}
    }
    match class {
        Lit::Float => {
            let fmt = match ty {
                VisaType::F => gpucvt_core::format::F32,
                VisaType::Df => gpucvt_core::format::F64,
                VisaType::Hf => {
                    return Err(imm_error(
                        "HF immediates are written as hex bit patterns (`0x3c00:hf` is 1.0)",
                        span,
                    ))
                }
                _ => {
                    return Err(imm_error(
                        format!("a decimal float cannot be a `{}` immediate", ty.name()),
                        span,
                    ))
                }
            };
            let text = if neg {
                format!("-{lit}")
            } else {
                lit.to_string()
            };
            let parsed = crate::text::parse_number(&text)
                .map_err(|e| imm_error(format!("`{text}`: {}", e.kind), span))?;
            let out = convert(&parsed.value, &fmt, Rounding::RN, &Policy::default());
            imm.bits = out.bits;
        }
        Lit::Int(v) => {
            if ty == VisaType::Hf && v > 0xffff {
                return Err(imm_error(
                    format!("HF immediate `{lit}` must be a bit pattern below 0x10000"),
                    span,
                ));
            }
            let is_float = matches!(ty, VisaType::F | VisaType::Df | VisaType::Hf);
            let is_hex = lit.starts_with("0x") || lit.starts_with("0X");
            imm.decimal_bits = is_float && !is_hex && v != 0;
            // Fits as an unsigned pattern, or (with a minus sign) as a two's complement value.
            let fits = if neg { v <= (mask >> 1) + 1 } else { v <= mask };
            if !fits {
                if is_float || ty.is_packed() {
                    return Err(imm_error(
                        format!("`{lit}` does not fit the {width} bits of `{}`", ty.name()),
                        span,
                    ));
                }
                imm.truncated = true;
            }
            let bits = if neg { v.wrapping_neg() } else { v };
            imm.bits = (bits & mask) as u64;
        }
    }
    Ok(imm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imm(text: &str) -> Result<Immediate, Diagnostic> {
        let src = format!("mov (M1, 1) D(0,0)<1> {text}");
        let (k, d) = parse(&src);
        if let Some(e) = d.into_iter().next() {
            return Err(e);
        }
        match &k.stmts[0] {
            Stmt::Mov(m) => match &m.src {
                SrcOperand::Imm(i) => Ok(i.clone()),
                _ => panic!("not an immediate"),
            },
            _ => panic!("not a mov"),
        }
    }

    #[test]
    fn immediates() {
        assert_eq!(imm("5:d").unwrap().bits, 5);
        assert_eq!(imm("-3:w").unwrap().bits, 0xfffd);
        assert_eq!(imm("0x80000000:ud").unwrap().bits, 0x8000_0000);
        assert_eq!(imm("1.5:f").unwrap().bits, 0x3fc0_0000);
        assert_eq!(imm("-2.5:f").unwrap().bits, 0xc020_0000);
        assert_eq!(imm("3.0:df").unwrap().bits, 0x4008_0000_0000_0000);
        assert_eq!(imm("1.0e-3:f").unwrap().bits, 0x3a83_126f);
        assert_eq!(imm("1e+3:f").unwrap().bits, 0x447a_0000);
        assert!(imm("1e3:f").is_err());
        let one = imm("1:f").unwrap();
        assert_eq!(one.bits, 1);
        assert!(one.decimal_bits);
        assert_eq!(imm("0x3f800000:f").unwrap().bits, 0x3f80_0000);
        assert_eq!(imm("0x3c00:hf").unwrap().bits, 0x3c00);
        assert!(imm("0x10000:hf").is_err());
        assert!(imm("1.0:hf").is_err());
        assert!(imm("0x3f80:bf").is_err());
        assert_eq!(imm("0x76543210:v").unwrap().bits, 0x7654_3210);
        assert_eq!(imm("0x30383038:vf").unwrap().ty, VisaType::Vf);
        assert!(imm("1.0:vf").is_err());
        assert!(imm("300:b").unwrap().truncated);
        assert_eq!(imm("300:b").unwrap().bits, 0x2c);
        assert_eq!(imm("-1:q").unwrap().bits, u64::MAX);
        assert_eq!(imm("0.1:f").unwrap().bits, 0x3dcc_cccd);
        assert!(imm("1.5:d").is_err());
        assert!(imm("5").is_err());
        assert!(imm("5:tf32").is_err());
        assert_eq!(imm("1.0e+99999:f").unwrap().bits, 0x7f80_0000);
        assert_eq!(imm("-1.0e-99999:df").unwrap().bits, 1 << 63);
        // (Any exponent rounds like the number it spells.)
        assert_eq!(imm("1.0e+999999999:f").unwrap().bits, 0x7f80_0000);
        assert_eq!(imm("3.4028235677973366e+38:f").unwrap().bits, 0x7f7f_ffff);
    }

    #[test]
    fn operands_and_spans() {
        let text = ".decl P1 v_type=P num_elts=16\n(!P1.any) mov.sat (M2_NM, 4) r[A0(0),16]<1>:f (-abs)V(1,2)<8;4,2>  // c\n";
        let (k, d) = parse(text);
        assert!(d.is_empty(), "{d:?}");
        let Stmt::Mov(m) = &k.stmts[0] else { panic!() };
        let p = m.pred.as_ref().unwrap();
        assert!(p.negated && p.control == PredControl::Any);
        assert_eq!((m.exec.offset, m.exec.nomask, m.exec.size), (4, true, 4));
        assert!(matches!(&m.dst, DstOperand::Indirect { hstride: 1, .. }));
        let SrcOperand::Direct {
            modifier,
            var,
            region,
            ..
        } = &m.src
        else {
            panic!()
        };
        assert_eq!(modifier.unwrap().0, SrcMod::NegAbs);
        assert_eq!((var.row, var.col), (1, 2));
        assert_eq!((region.vstride, region.width, region.hstride), (8, 4, 2));
        assert_eq!((var.name_span.line, var.name_span.col), (2, 53));
    }

    #[test]
    fn errors_have_positions() {
        let (_, d) = parse("mov (M1, 8) D(0,0)<1> S(0,0)<1;1,0> extra\n");
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].span.line, d[0].span.col), (1, 37));
        let (_, d) = parse("\n  mov (M9, 8) D(0,0)<1> S(0,0)<1;1,0>\n");
        assert_eq!((d[0].span.line, d[0].span.col), (2, 8));
        let (_, d) = parse("mov (M1, 8) D(0,0)<1> S(0,0)<1;1,0> é");
        assert_eq!(d[0].rule, "visa.syntax");
    }
}
