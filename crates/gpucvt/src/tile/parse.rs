//! The reader for small Tile IR files (`tile-ir.md` §2): `cuda_tile.module`, `entry` (and
//! the test-only `testing$func`), `constant` with every literal form, the nine conversion ops
//! in their pretty assembly syntax, and `return`. Other ops (and the generic `"op"(…)` form)
//! are skipped. The `cuda_tile.` prefix is optional everywhere; types may be written
//! `tile<…>` or `!cuda_tile.tile<…>`.
//!
//! The reader is version-neutral: it records what is written (a rounding word, a
//! `saturating` flag) and leaves version-dependent checks to [`super::check`]. Syntax
//! errors are reported with positions, and reading resumes at the next line, so one file can
//! hold many cases. It never panics.
//!
//! ```
//! use gpucvt::tile::parse::{parse_file, Op};
//! let f = parse_file("cuda_tile.module @m {\n  entry @k(%a: tile<4xf32>) {\n    %h = ftof %a rounding<zero> : tile<4xf32> -> tile<4xf16>\n  }\n}\n");
//! assert!(f.diagnostics.is_empty());
//! let stmt = &f.modules[0].functions[0].body[0];
//! assert!(matches!(stmt.op, Op::Convert(_)));
//! ```

use super::types::{ElemType, Element, OpKind, Overflow, RoundingMode, Signedness, TileType};
use crate::diag::{Diagnostic, Span};
use core::cell::Cell;
use gpucvt_core::convert::{convert, Policy};
use gpucvt_core::format;
use gpucvt_core::Rounding;
use std::collections::HashMap;

/// A value with the span it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

/// A whole file: its modules and the syntax errors found while reading it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileFile {
    /// The `cuda_tile.module`s, in order.
    pub modules: Vec<Module>,
    /// Syntax, type and literal errors (the reader's share of the diagnostics).
    pub diagnostics: Vec<Diagnostic>,
    /// Notes: one per op name the reader skipped, at its first use, with a count.
    pub notes: Vec<Diagnostic>,
}

/// `cuda_tile.module @name { … }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// The symbol name without `@`.
    pub name: String,
    /// The span of `cuda_tile.module`.
    pub span: Span,
    /// The entries (and `testing$func`s).
    pub functions: Vec<Function>,
}

/// `entry @name(%a: tile<…>, …) { … }` (or `testing$func`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// The symbol name without `@`.
    pub name: String,
    /// The span of the op name.
    pub span: Span,
    /// Whether this is the test-only `testing$func` rather than `entry`.
    pub test_func: bool,
    /// The arguments of tile type.
    pub args: Vec<Arg>,
    /// The arguments of other types (pointers, tensor views, partition views, tokens).
    pub other_args: Vec<Binding>,
    /// The statements of the body that were read without error.
    pub body: Vec<Stmt>,
}

/// A function argument `%name: type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The name without `%`.
    pub name: String,
    /// Its type.
    pub ty: TileType,
    /// Where the name is.
    pub span: Span,
}

/// One statement: `%r = op …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// The result names without `%` (empty for `return` and result-less ops).
    pub results: Vec<Spanned<String>>,
    /// The op.
    pub op: Op,
    /// The op's location: from the first result (or the op name) to the end of the
    /// statement. Verifier diagnostics point here, as MLIR's do.
    pub span: Span,
    /// The regions of an op the reader does not model (`if`, `for`, `reduce` bodies), read
    /// so that the conversion ops inside them are verified too. Empty for the other ops.
    pub regions: Vec<Region>,
}

/// A region of a skipped op: the values it binds and its statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Block arguments (`^bb0(%a: …)`, the `(%a: …, %b: …)` of `reduce`/`scan`) and the
    /// names the op's header binds (`for %iv in …`, `iter_values(%x = …)`).
    pub args: Vec<Binding>,
    /// The statements read without error.
    pub body: Vec<Stmt>,
}

/// What the reader knows of a value's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// A tile type.
    Tile(TileType),
    /// Another type (`!cuda_tile.ptr<f32>`, `tensor_view<…>`, `token`), as written.
    Other(String),
    /// Not written where the value is bound.
    Unknown,
}

/// A name bound without being an op's result: a function argument whose type is not a
/// tile, or a region argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The name without `%`.
    pub name: String,
    /// Its type, as far as it is known.
    pub ty: ValueType,
    /// Where the name is.
    pub span: Span,
}

/// The ops the reader understands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // conversions are the common case; files are small
pub enum Op {
    /// `constant <E: literal> : tile<…>`.
    Constant(Constant),
    /// One of the nine conversion ops.
    Convert(ConvOp),
    /// `return` (or `yield` in a region) with its operands.
    Return(Vec<Spanned<String>>),
    /// Any other op, skipped (its name as written).
    Other(String),
}

/// The elements of a constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstElements {
    /// One value for every element.
    Splat(u64),
    /// Every element, in row-major order.
    Dense(Vec<u64>),
}

/// `constant <E: literal> : tile<…>`: the elements as bit patterns of the element type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constant {
    /// The tile type.
    pub ty: TileType,
    /// The elements.
    pub elements: ConstElements,
}

impl Constant {
    /// Element `i` (row-major).
    pub fn element(&self, i: usize) -> u64 {
        match &self.elements {
            ConstElements::Splat(v) => *v,
            ConstElements::Dense(v) => v.get(i).copied().unwrap_or(0),
        }
    }
}

/// One conversion op as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvOp {
    /// Which op.
    pub kind: OpKind,
    /// The operand name without `%` (optional in [`parse_op`]).
    pub operand: Option<Spanned<String>>,
    /// `signed` / `unsigned` (exti, ftoi, itof).
    pub signedness: Option<Signedness>,
    /// The word inside `rounding<…>`, if written.
    pub rounding: Option<Spanned<String>>,
    /// `overflow<…>` of `trunci` (default `none`).
    pub overflow: Overflow,
    /// Where `saturating` is written, if it is (ftoi, 13.4).
    pub saturating: Option<Span>,
    /// The source tile type.
    pub src: Spanned<TileType>,
    /// The result tile type.
    pub dst: Spanned<TileType>,
    /// The op's location (see [`Stmt::span`]).
    pub loc: Span,
}

impl ConvOp {
    /// The rounding mode in effect: the written one, or the op's default when none is
    /// written. `None` when the op has no rounding or the written word is not a mode.
    pub fn rounding_mode(&self) -> Option<RoundingMode> {
        match &self.rounding {
            Some(w) => RoundingMode::from_name(&w.value),
            None => self.kind.default_rounding(),
        }
    }

    /// Whether `saturating` is set.
    pub fn is_saturating(&self) -> bool {
        self.saturating.is_some()
    }

    /// A conversion op built from its parts (no spans), with default attributes.
    pub fn new(kind: OpKind, src: TileType, dst: TileType) -> ConvOp {
        let sp = |t| Spanned {
            value: t,
            span: Span::default(),
        };
        ConvOp {
            kind,
            operand: None,
            signedness: None,
            rounding: None,
            overflow: Overflow::None,
            saturating: None,
            src: sp(src),
            dst: sp(dst),
            loc: Span::default(),
        }
    }

    /// The canonical printed form (the printer omits default attributes): `ftof %x
    /// rounding<zero> : tile<f32> -> tile<f16>`. The operand prints as `%<name>` when known.
    pub fn to_text(&self) -> String {
        let mut s = String::from(self.kind.name());
        if let Some(o) = &self.operand {
            s.push_str(" %");
            s.push_str(&o.value);
        }
        if let Some(sg) = self.signedness {
            s.push(' ');
            s.push_str(sg.name());
        }
        if let Some(r) = &self.rounding {
            if Some(r.value.as_str()) != self.kind.default_rounding().map(|m| m.name()) {
                s.push_str(&format!(" rounding<{}>", r.value));
            }
        }
        if self.saturating.is_some() {
            s.push_str(" saturating");
        }
        if self.overflow != Overflow::None {
            s.push_str(&format!(" overflow<{}>", self.overflow.name()));
        }
        s.push_str(&format!(" : {} -> {}", self.src.value, self.dst.value));
        s
    }
}

type PResult<T> = Result<T, Vec<Diagnostic>>;

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    diags: Vec<Diagnostic>,
    lines: Lines,
    /// Each skipped op name (without the `cuda_tile.` prefix): where it was first seen and
    /// how often, in order of first use.
    skipped: Vec<(String, Span, usize)>,
    skipped_index: HashMap<String, usize>,
    /// A streaming reader's listener: the functions' statements go to it as they are read,
    /// and the functions keep none ([`read_functions`]).
    stream: Option<&'a mut dyn FnMut(Event<'_>)>,
    /// Whether the block labels of the function body being read declare its arguments (the
    /// generic form).
    labels_are_args: bool,
}

/// What a streaming reader ([`read_functions`]) tells as it reads a function.
pub(crate) enum Event<'e> {
    /// A function begins: its name and the arguments of its signature (none in the generic
    /// form, whose block labels give them); its body is empty.
    Function(&'e Function),
    /// The block label of a generic function's body, with the arguments it declares.
    Labels(&'e [Binding]),
    /// A statement of the function's body (regions included), in source order.
    Stmt(Box<Stmt>),
    /// The function ended well-formed.
    End,
    /// The function was malformed and is left out (as [`parse_file`] leaves it out).
    Abort,
    /// A module begins.
    Module,
    /// The module ended well-formed.
    ModuleEnd,
    /// The module was malformed and is left out with every function in it.
    ModuleAbort,
}

/// How deep regions (ops inside the bodies of ops) and dense literal brackets may nest.
/// Deeper input gets a diagnostic: the reader recurses on both, and the stack is finite.
const MAX_DEPTH: usize = 100;

/// Lines and columns of positions, found by counting from the furthest position located so
/// far (no table of line starts: memory does not follow the text). A line ends at `\n`,
/// `\r\n` or a lone `\r`. The reader asks for positions mostly in increasing order; one
/// behind the furthest (a statement's start, once the statement is read) costs its
/// distance from there, so reading stays linear.
struct Lines {
    /// Where the first line starts (after a byte order mark).
    first: usize,
    /// The furthest position located: (offset, line index, offset of its line's start,
    /// column).
    memo: Cell<(usize, usize, usize, u32)>,
}

fn line_break_at(bytes: &[u8], i: usize) -> bool {
    bytes[i] == b'\n' || (bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
}

/// The characters (bytes that start one) in `bytes[from..to]` (none when `to <= from`).
fn chars_in(bytes: &[u8], from: usize, to: usize) -> u32 {
    bytes.get(from..to).map_or(0, |b| {
        b.iter().filter(|&&c| c & 0xc0 != 0x80).count() as u32
    })
}

impl Lines {
    fn new(first: usize) -> Lines {
        Lines {
            first,
            memo: Cell::new((first, 0, first, 1)),
        }
    }

    fn span(&self, bytes: &[u8], start: usize, end: usize) -> Span {
        let start = start.min(bytes.len());
        let (pos, line, line_start, col) = self.memo.get();
        let (line, col) = if start >= pos {
            let (mut line, mut line_start) = (line, line_start);
            for i in pos..start {
                if line_break_at(bytes, i) {
                    line += 1;
                    line_start = i + 1;
                }
            }
            let col = if line_start > pos {
                1 + chars_in(bytes, line_start, start)
            } else {
                col + chars_in(bytes, pos, start)
            };
            self.memo.set((start, line, line_start, col));
            (line, col)
        } else {
            let breaks = (start..pos).filter(|&i| line_break_at(bytes, i)).count();
            if breaks == 0 {
                (line, col.saturating_sub(chars_in(bytes, start, pos)).max(1))
            } else {
                let ls = (self.first..start)
                    .rev()
                    .find(|&i| line_break_at(bytes, i))
                    .map_or(self.first, |i| i + 1);
                (line - breaks, 1 + chars_in(bytes, ls, start))
            }
        };
        Span {
            start,
            end: end.max(start).min(bytes.len()),
            line: line as u32 + 1,
            col,
        }
    }
}

const RULE_SYNTAX: &str = "tile.syntax";
const RULE_TYPE: &str = "tile.type";
const RULE_CONSTANT: &str = "tile.constant";
const RULE_SKIPPED: &str = "tile.skipped";

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$')
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        // A UTF-8 byte order mark is not part of the text (positions stay those of the
        // whole text, columns count from after the mark).
        let first = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: first,
            diags: Vec::new(),
            lines: Lines::new(first),
            skipped: Vec::new(),
            skipped_index: HashMap::new(),
            stream: None,
            labels_are_args: false,
        }
    }

    fn emit(&mut self, e: Event<'_>) {
        if let Some(f) = self.stream.as_mut() {
            f(e);
        }
    }

    fn span(&self, start: usize, end: usize) -> Span {
        self.lines.span(self.bytes, start, end)
    }

    fn err(&self, rule: &'static str, msg: impl Into<String>, start: usize) -> Vec<Diagnostic> {
        let end = self.token_end(start);
        vec![Diagnostic::error(rule, msg, self.span(start, end))]
    }

    /// The end of the token starting at `start` (for underlining).
    fn token_end(&self, start: usize) -> usize {
        let mut e = start;
        while e < self.bytes.len() && is_ident_char(self.bytes[e]) {
            e += 1;
        }
        if e == start && start < self.bytes.len() {
            e = start
                + self.text[start..]
                    .chars()
                    .next()
                    .map_or(1, |c| c.len_utf8());
        }
        e
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn at_eof(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Steps over one whole character (the skipping loops see bytes; stepping a byte at a
    /// time could leave the position inside a multi-byte character, where slicing panics).
    fn bump(&mut self) {
        let n = self
            .text
            .get(self.pos..)
            .and_then(|t| t.chars().next())
            .map_or(1, char::len_utf8);
        self.pos = (self.pos + n).min(self.bytes.len());
    }

    /// Skips whitespace and `//` comments.
    /// Steps over a run of ASCII digits; whether there was one.
    fn digits(&mut self) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos > start
    }

    fn ws(&mut self) {
        while let Some(b) = self.peek() {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if self.starts("//") {
                self.skip_comment();
            } else {
                break;
            }
        }
    }

    /// Skips a `//` comment up to the line break.
    fn skip_comment(&mut self) {
        while let Some(b) = self.peek() {
            if b == b'\n' || b == b'\r' {
                break;
            }
            self.bump();
        }
    }

    /// Skips spaces and tabs but not line breaks.
    fn ws_inline(&mut self) {
        while let Some(b) = self.peek() {
            if b == b' ' || b == b'\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn starts(&self, s: &str) -> bool {
        self.bytes[self.pos.min(self.bytes.len())..].starts_with(s.as_bytes())
    }

    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.starts(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str) -> PResult<()> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.err(RULE_SYNTAX, format!("expected '{s}'"), self.pos))
        }
    }

    /// An identifier (`[A-Za-z_][A-Za-z0-9_.$]*`) at the current position, without eating
    /// leading whitespace.
    fn ident_here(&mut self) -> Option<&'a str> {
        let start = self.pos;
        if !self.peek().is_some_and(is_ident_start) {
            return None;
        }
        while self.peek().is_some_and(is_ident_char) {
            self.pos += 1;
        }
        Some(&self.text[start..self.pos])
    }

    fn ident(&mut self) -> Option<Spanned<&'a str>> {
        self.ws();
        let start = self.pos;
        let id = self.ident_here()?;
        Some(Spanned {
            value: id,
            span: self.span(start, self.pos),
        })
    }

    /// Peeks the identifier at the current position (after whitespace) without consuming it.
    fn peek_ident(&mut self) -> Option<&'a str> {
        self.ws();
        let save = self.pos;
        let id = self.ident_here();
        self.pos = save;
        id
    }

    /// `%name` or `@name`: the name after the sigil.
    fn sigil_name(&mut self, sigil: u8) -> Option<Spanned<String>> {
        self.ws();
        if self.peek() != Some(sigil) {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        let name_start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'-'))
        {
            self.pos += 1;
        }
        if self.pos == name_start {
            self.pos = start;
            return None;
        }
        let name_end = self.pos;
        // `%r#1`: one result of a pack; the name is the pack's.
        if sigil == b'%' && self.peek() == Some(b'#') {
            let save = self.pos;
            self.pos += 1;
            if !self.digits() {
                self.pos = save;
            }
        }
        Some(Spanned {
            value: self.text[name_start..name_end].to_string(),
            span: self.span(start, self.pos),
        })
    }

    /// Skips a balanced group starting at an opening bracket at the current position.
    fn skip_group(&mut self) {
        let mut depth: Vec<u8> = Vec::new();
        while let Some(b) = self.peek() {
            match b {
                b'{' | b'(' | b'[' => depth.push(b),
                b'<' => depth.push(b),
                b'}' | b')' | b']' => {
                    // Close through any unbalanced '<'.
                    while depth.last() == Some(&b'<') {
                        depth.pop();
                    }
                    depth.pop();
                }
                b'>' if depth.last() == Some(&b'<') => {
                    depth.pop();
                }
                b'"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek() {
                        self.bump();
                        if c == b'\\' {
                            self.bump();
                        } else if c == b'"' {
                            break;
                        }
                    }
                    self.pos = self.pos.min(self.bytes.len());
                    if depth.is_empty() {
                        return;
                    }
                    continue;
                }
                _ => {}
            }
            self.bump();
            if depth.is_empty() {
                return;
            }
        }
    }

    /// Skips the rest of a statement: to the end of the line, over balanced `{…}` regions,
    /// stopping before a `}` that closes an enclosing block.
    fn skip_statement(&mut self) {
        let mut depth = 0usize;
        while let Some(b) = self.peek() {
            match b {
                b'\n' | b'\r' if depth == 0 => return,
                b'{' => depth += 1,
                b'}' => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                b'"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek() {
                        if c == b'\n' {
                            break;
                        }
                        self.bump();
                        if c == b'\\' {
                            self.bump();
                        } else if c == b'"' {
                            break;
                        }
                    }
                    continue;
                }
                b'/' if self.starts("//") => {
                    self.skip_comment();
                    continue;
                }
                _ => {}
            }
            self.bump();
        }
    }

    // ---- types ----

    /// `tile<…>` or `!cuda_tile.tile<…>`, with the size rules checked.
    fn tile_type(&mut self) -> PResult<Spanned<TileType>> {
        self.ws();
        let start = self.pos;
        if !(self.eat("!cuda_tile.tile<") || self.eat("tile<")) {
            return Err(self.err(RULE_SYNTAX, "expected tile type", start));
        }
        let mut shape = Vec::new();
        loop {
            self.ws();
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                break;
            }
            let ds = self.pos;
            self.digits();
            let d: u64 = self.text[ds..self.pos]
                .parse()
                .map_err(|_| self.err(RULE_TYPE, "tile dimension is too large", ds))?;
            shape.push(d);
            if self.peek() != Some(b'x') {
                return Err(self.err(RULE_SYNTAX, "expected 'x' in a dimension list", self.pos));
            }
            self.pos += 1;
        }
        let elem = self.element()?;
        self.expect(">")?;
        let ty = TileType { shape, elem };
        if let Err(m) = ty.size_rule() {
            return Err(self.err(RULE_TYPE, m, start));
        }
        Ok(Spanned {
            value: ty,
            span: self.span(start, self.pos),
        })
    }

    fn elem_type(&mut self) -> PResult<ElemType> {
        self.ws();
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        if word.is_empty() {
            return Err(self.err(RULE_SYNTAX, "expected element type", start));
        }
        ElemType::from_name(word)
            .ok_or_else(|| self.err(RULE_TYPE, format!("invalid element type '{word}'"), start))
    }

    fn element(&mut self) -> PResult<Element> {
        self.ws();
        if self.eat("!cuda_tile.ptr<") || self.eat("ptr<") {
            let t = self.elem_type()?;
            if t == ElemType::I4 {
                return Err(self.err(RULE_TYPE, "invalid pointee type 'i4'", self.pos));
            }
            self.expect(">")?;
            return Ok(Element::Ptr(t));
        }
        Ok(Element::Num(self.elem_type()?))
    }

    // ---- literals ----

    fn literal(&mut self, elem: ElemType, depth: usize) -> PResult<Lit> {
        self.ws();
        let start = self.pos;
        if self.peek() == Some(b'[') {
            if depth >= MAX_DEPTH {
                return Err(self.err(
                    RULE_CONSTANT,
                    format!("dense literal nested more than {MAX_DEPTH} deep"),
                    start,
                ));
            }
            self.pos += 1;
            let mut items = Vec::new();
            self.ws();
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Lit::List(items, start));
            }
            loop {
                items.push(self.literal(elem, depth + 1)?);
                self.ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b']') => {
                        self.pos += 1;
                        return Ok(Lit::List(items, start));
                    }
                    _ => return Err(self.err(RULE_SYNTAX, "expected ',' or ']'", self.pos)),
                }
            }
        }
        let neg = self.peek() == Some(b'-');
        if neg {
            self.pos += 1;
        }
        let body = self.pos;
        if self.starts("0x") || self.starts("0X") {
            self.pos += 2;
            while self.peek().is_some_and(|b| b.is_ascii_hexdigit()) {
                self.pos += 1;
            }
        } else if self.peek().is_some_and(is_ident_start) {
            let _ = self.ident_here();
        } else {
            self.digits();
            if self.peek() == Some(b'.') {
                self.pos += 1;
                self.digits();
                if self.peek().is_some_and(|b| b == b'e' || b == b'E') {
                    let save = self.pos;
                    self.pos += 1;
                    if self.peek().is_some_and(|b| b == b'+' || b == b'-') {
                        self.pos += 1;
                    }
                    if !self.digits() {
                        self.pos = save;
                    }
                }
            }
        }
        let tok = &self.text[body..self.pos];
        if tok.is_empty() {
            return Err(self.err(RULE_SYNTAX, "expected a literal", start));
        }
        let bits = self.scalar(elem, neg, tok, start)?;
        Ok(Lit::Scalar(bits))
    }

    fn scalar(&self, elem: ElemType, neg: bool, tok: &str, start: usize) -> PResult<u64> {
        let cerr = |m: &str| {
            vec![Diagnostic::error(
                RULE_CONSTANT,
                m,
                self.span(start, start + tok.len() + neg as usize),
            )]
        };
        let w = elem.bits();
        let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let hex = tok.starts_with("0x") || tok.starts_with("0X");
        if elem.is_int() {
            if tok == "true" || tok == "false" {
                if elem != ElemType::I1 || neg {
                    return Err(cerr("expected integer value"));
                }
                return Ok((tok == "true") as u64);
            }
            let mag: u128 = if hex {
                u128::from_str_radix(&tok[2..], 16).map_err(|_| {
                    if tok.len() > 2 {
                        cerr("integer constant out of range for type")
                    } else {
                        cerr("expected integer value")
                    }
                })?
            } else if tok.bytes().all(|b| b.is_ascii_digit()) {
                tok.parse::<u128>()
                    .map_err(|_| cerr("integer constant out of range for type"))?
            } else {
                return Err(cerr("expected integer value"));
            };
            // The union of the signed and unsigned ranges.
            let ok = if neg {
                mag <= 1u128 << (w - 1)
            } else {
                mag < 1u128 << w
            };
            if !ok {
                return Err(cerr("integer constant out of range for type"));
            }
            let v = if neg {
                (mag as u64).wrapping_neg()
            } else {
                mag as u64
            };
            return Ok(v & mask);
        }
        // Float element.
        if hex {
            if neg {
                return Err(cerr(
                    "hexadecimal float literal should not have a leading minus",
                ));
            }
            let v = u128::from_str_radix(&tok[2..], 16)
                .map_err(|_| cerr("float constant out of range for type"))?;
            if v > mask as u128 {
                return Err(cerr("float constant out of range for type"));
            }
            return Ok(v as u64);
        }
        if tok == "true" || tok == "false" || !tok.as_bytes()[0].is_ascii_digit() {
            return Err(cerr("expected floating point literal"));
        }
        if !tok.contains('.') {
            return Err(cerr(
                "unexpected decimal integer literal for a floating point value",
            ));
        }
        let text = if neg {
            format!("-{tok}")
        } else {
            tok.to_string()
        };
        let parsed = crate::text::parse_number(&text)
            .map_err(|_| cerr("expected floating point literal"))?;
        // MLIR parses to f64 first, then converts to the element type: two roundings.
        let pol = Policy::default();
        let d = convert(&parsed.value, &format::F64, Rounding::RN, &pol).bits;
        let dv = format::F64.decode(d);
        Ok(convert(&dv, &elem.format(None), Rounding::RN, &pol).bits & mask)
    }

    // ---- statements ----

    /// The top level: modules, builtin `module { … }` wrappers and attribute aliases
    /// (`#loc = loc(…)`), until the end of the text.
    fn file(&mut self) -> Vec<Module> {
        let mut modules = Vec::new();
        self.items(&mut modules, false);
        modules
    }

    /// Items of the top level or of a module body: modules (pretty or generic form), entries
    /// and `testing$func`s into `funcs` (a module body), aliases, and in a module body other
    /// ops (skipped with a note). Stops before a `}` when `inner`, at the end otherwise.
    fn items_into(
        &mut self,
        modules: &mut Vec<Module>,
        mut funcs: Option<&mut Vec<Function>>,
        inner: bool,
    ) {
        loop {
            self.ws();
            let start = self.pos;
            let in_module = funcs.is_some();
            let generic = self.peek() == Some(b'"');
            let word = match self.peek() {
                None => return,
                Some(b'}') if inner => return,
                Some(b'#') => {
                    // `#name = attribute`: aliases hold nothing gpucvt models.
                    self.pos += 1;
                    self.skip_op(None, 0);
                    continue;
                }
                Some(b'"') => {
                    let w = self.string_here();
                    self.pos = start;
                    w
                }
                _ => self.peek_ident().unwrap_or("").to_string(),
            };
            let short = word.strip_prefix("cuda_tile.").unwrap_or(&word);
            let r = match short {
                "module" | "builtin.module" => {
                    self.emit(Event::Module);
                    let m = if generic {
                        let _ = self.string_here();
                        self.generic_module(start, modules)
                    } else {
                        self.module(modules)
                    };
                    self.emit(if m.is_ok() {
                        Event::ModuleEnd
                    } else {
                        Event::ModuleAbort
                    });
                    m
                }
                "entry" | "testing$func" if in_module => {
                    let f = if generic {
                        let _ = self.string_here();
                        self.generic_function(start, short == "testing$func")
                    } else {
                        self.function()
                    };
                    self.emit(if f.is_ok() { Event::End } else { Event::Abort });
                    f.map(|f| {
                        // A streaming reader keeps no functions.
                        if let (Some(fs), None) = (funcs.as_deref_mut(), &self.stream) {
                            fs.push(f);
                        }
                    })
                }
                _ if in_module => match self.statement(false, 0) {
                    Ok(_) => Ok(()),
                    Err(d) => {
                        // Resume at the next line.
                        self.diags.extend(d);
                        self.skip_statement();
                        Ok(())
                    }
                },
                _ => Err(self.err(RULE_SYNTAX, "expected 'cuda_tile.module'", start)),
            };
            if let Err(d) = r {
                // Skip the whole item, body included.
                self.diags.extend(d);
                self.pos = start;
                self.skip_statement();
            }
            if self.pos == start {
                self.bump();
            }
        }
    }

    fn items(&mut self, modules: &mut Vec<Module>, inner: bool) {
        self.items_into(modules, None, inner);
    }

    /// The text of the string literal at the current position, stepped over.
    fn string_here(&mut self) -> String {
        let s = self.pos + 1;
        self.pos += 1;
        while let Some(c) = self.peek() {
            if c == b'"' || c == b'\n' || c == b'\r' {
                break;
            }
            self.bump();
            if c == b'\\' {
                self.bump();
            }
        }
        let name = self.text[s..self.pos.min(self.bytes.len())].to_string();
        if self.peek() == Some(b'"') {
            self.pos += 1;
        }
        name
    }

    /// `module @name attributes {…} { … }` (the `cuda_tile.` or `builtin.` prefix optional,
    /// the name too): pushed with its functions, then the modules nested in it. A module
    /// without a name or functions (a builtin wrapper) is not pushed itself.
    fn module(&mut self, out: &mut Vec<Module>) -> PResult<()> {
        let kw = self
            .ident()
            .ok_or_else(|| self.err(RULE_SYNTAX, "expected module", self.pos))?;
        let name = self.sigil_name(b'@');
        // Attributes such as `attributes {…}` may come before the body.
        self.ws();
        while !self.at_eof() && self.peek() != Some(b'{') {
            if self.peek() == Some(b'<') {
                self.skip_group();
            } else if self.peek_ident() == Some("attributes") {
                let _ = self.ident();
                self.ws();
                if self.peek() != Some(b'{') {
                    return Err(self.err(RULE_SYNTAX, "expected '{'", self.pos));
                }
                self.skip_group();
            } else if name.is_none() && self.peek() == Some(b'@') {
                return Err(self.err(RULE_SYNTAX, "expected symbol name", self.pos));
            } else {
                return Err(self.err(RULE_SYNTAX, "expected '{'", self.pos));
            }
            self.ws();
        }
        self.expect("{")?;
        let mut functions = Vec::new();
        let mut nested = Vec::new();
        self.items_into(&mut nested, Some(&mut functions), true);
        if !self.eat("}") {
            return Err(self.err(RULE_SYNTAX, "expected '}' to close the module", self.pos));
        }
        self.trailing_loc();
        if name.is_some() || !functions.is_empty() {
            out.push(Module {
                name: name.map(|n| n.value).unwrap_or_default(),
                span: kw.span,
                functions,
            });
        }
        out.extend(nested);
        Ok(())
    }

    /// The generic form `"cuda_tile.module"() <{sym_name = "m"}> ({ … }) : () -> ()`, the
    /// name string already read.
    fn generic_module(&mut self, start: usize, out: &mut Vec<Module>) -> PResult<()> {
        let name = self.generic_head()?;
        let mut functions = Vec::new();
        let mut nested = Vec::new();
        self.items_into(&mut nested, Some(&mut functions), true);
        self.generic_tail()?;
        if name.is_some() || !functions.is_empty() {
            out.push(Module {
                name: name.unwrap_or_default(),
                span: self.span(start, self.token_end(start + 1) + 1),
                functions,
            });
        }
        out.extend(nested);
        Ok(())
    }

    /// Of a generic op with one region: `(operands) <{properties}> {attributes} ({`, up to
    /// and including the `{` of the region. Returns the `sym_name` property, if any.
    fn generic_head(&mut self) -> PResult<Option<String>> {
        let mut sym = None;
        loop {
            self.ws();
            match self.peek() {
                Some(b'(') => {
                    let s = self.pos;
                    self.pos += 1;
                    self.ws();
                    if self.peek() == Some(b'{') {
                        self.pos += 1;
                        return Ok(sym);
                    }
                    self.pos = s;
                    self.skip_group();
                }
                Some(b'<') | Some(b'{') => {
                    let s = self.pos;
                    self.skip_group();
                    let group = &self.text[s..self.pos];
                    if let Some(i) = group.find("sym_name") {
                        let rest = group[i + 8..].trim_start();
                        if let Some(rest) = rest.strip_prefix('=') {
                            if let Some(rest) = rest.trim_start().strip_prefix('"') {
                                sym = rest.split('"').next().map(str::to_string);
                            }
                        }
                    }
                }
                _ => return Err(self.err(RULE_SYNTAX, "expected '({' and a region", self.pos)),
            }
        }
    }

    /// Of a generic op with one region: `}) : () -> ()` and a location.
    fn generic_tail(&mut self) -> PResult<()> {
        if !self.eat("}") {
            return Err(self.err(RULE_SYNTAX, "expected '}' to close the region", self.pos));
        }
        self.expect(")")?;
        self.skip_op(None, 0);
        Ok(())
    }

    /// `"cuda_tile.entry"() <{… sym_name = "f" …}> ({ ^bb0(%a: …): … }) : () -> ()`.
    fn generic_function(&mut self, start: usize, test_func: bool) -> PResult<Function> {
        let name = self.generic_head()?.unwrap_or_default();
        let mut args = Vec::new();
        let mut other_args = Vec::new();
        let mut labels = Vec::new();
        if self.stream.is_some() {
            let header = Function {
                name: name.clone(),
                span: self.span(start, self.token_end(start + 1) + 1),
                test_func,
                args: Vec::new(),
                other_args: Vec::new(),
                body: Vec::new(),
            };
            self.emit(Event::Function(&header));
        }
        self.labels_are_args = true;
        let body = self.body_statements(0, &mut labels);
        self.labels_are_args = false;
        let body = body?;
        for b in labels {
            match b.ty {
                ValueType::Tile(ty) => args.push(Arg {
                    name: b.name,
                    ty,
                    span: b.span,
                }),
                _ => other_args.push(b),
            }
        }
        self.generic_tail()?;
        Ok(Function {
            name,
            span: self.span(start, self.token_end(start + 1) + 1),
            test_func,
            args,
            other_args,
            body,
        })
    }

    /// `^bb0(%a: type, …):` — the block's arguments.
    fn block_label(&mut self) -> PResult<Vec<Binding>> {
        self.pos += 1;
        let _ = self.ident_here();
        let mut out = Vec::new();
        if self.eat("(") && !self.eat(")") {
            loop {
                out.push(self.binding()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.expect(":")?;
        Ok(out)
    }

    /// `%name: type` with optional attributes and location, as in argument lists.
    fn binding(&mut self) -> PResult<Binding> {
        let n = self
            .sigil_name(b'%')
            .ok_or_else(|| self.err(RULE_SYNTAX, "expected SSA identifier", self.pos))?;
        self.expect(":")?;
        self.ws();
        let ty = if self.starts("tile<") || self.starts("!cuda_tile.tile<") {
            ValueType::Tile(self.tile_type()?.value)
        } else {
            ValueType::Other(self.other_type()?)
        };
        self.ws();
        if self.peek() == Some(b'{') {
            self.skip_group();
        }
        self.trailing_loc();
        Ok(Binding {
            name: n.value,
            ty,
            span: n.span,
        })
    }

    /// A type other than a tile (`!cuda_tile.ptr<f32>`, `tensor_view<?x2xf32,
    /// strides=[1,?]>`, `token`), as balanced text up to a `,` or `)` outside brackets.
    fn other_type(&mut self) -> PResult<String> {
        self.ws();
        let start = self.pos;
        if self.peek() == Some(b'!') {
            self.pos += 1;
        }
        if self.ident_here().is_none() {
            return Err(self.err(RULE_SYNTAX, "expected a type", start));
        }
        if self.peek() == Some(b'<') {
            let s = self.pos;
            self.skip_group();
            if self.bytes.get(self.pos.wrapping_sub(1)) != Some(&b'>') || self.pos == s {
                return Err(self.err(RULE_SYNTAX, "expected '>' to close the type", s));
            }
        }
        Ok(self.text[start..self.pos].to_string())
    }

    /// A `loc(…)` after an op or a value, on the same line or continuing on the next.
    fn trailing_loc(&mut self) {
        let save = self.pos;
        self.ws();
        if self.starts("loc") && self.bytes.get(self.pos + 3) == Some(&b'(') {
            self.pos += 3;
            self.skip_group();
        } else {
            self.pos = save;
        }
    }

    fn function(&mut self) -> PResult<Function> {
        let kw = self
            .ident()
            .ok_or_else(|| self.err(RULE_SYNTAX, "expected entry", self.pos))?;
        let test_func = kw.value.ends_with("testing$func");
        let name = self
            .sigil_name(b'@')
            .ok_or_else(|| self.err(RULE_SYNTAX, "expected symbol name", self.pos))?;
        self.expect("(")?;
        let mut args = Vec::new();
        let mut other_args = Vec::new();
        if !self.eat(")") {
            loop {
                let b = self.binding()?;
                match b.ty {
                    ValueType::Tile(ty) => args.push(Arg {
                        name: b.name,
                        ty,
                        span: b.span,
                    }),
                    _ => other_args.push(b),
                }
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        // Results and attributes (`-> tile<…>`, `optimization_hints=<…>`) up to the body.
        loop {
            self.ws();
            match self.peek() {
                None => return Err(self.err(RULE_SYNTAX, "expected '{'", self.pos)),
                Some(b'{') => break,
                Some(b'<') | Some(b'(') | Some(b'[') => self.skip_group(),
                Some(b'-') if self.starts("->") => self.pos += 2,
                Some(b'}') => return Err(self.err(RULE_SYNTAX, "expected '{'", self.pos)),
                Some(b'"') => {
                    let _ = self.string_here();
                }
                Some(_) => {
                    let s = self.pos;
                    if self.ident_here().is_none() {
                        self.pos = s + 1;
                    }
                }
            }
        }
        self.pos += 1;
        if self.stream.is_some() {
            let header = Function {
                name: name.value.clone(),
                span: kw.span,
                test_func,
                args: std::mem::take(&mut args),
                other_args: std::mem::take(&mut other_args),
                body: Vec::new(),
            };
            self.emit(Event::Function(&header));
            (args, other_args) = (header.args, header.other_args);
        }
        let body = self.body_statements(0, &mut Vec::new())?;
        if !self.eat("}") {
            return Err(self.err(RULE_SYNTAX, "expected '}' to close the body", self.pos));
        }
        // Attributes may follow the body (`} {cuda_tile.loop_split = 0}`).
        self.ws_inline();
        if self.peek() == Some(b'{') {
            self.skip_group();
        }
        self.trailing_loc();
        Ok(Function {
            name: name.value,
            span: kw.span,
            test_func,
            args,
            other_args,
            body,
        })
    }

    /// Statements up to (not including) the `}` that closes their block; statements with
    /// errors are reported and skipped. The arguments of block labels (`^bb0(%a: …):`) go
    /// to `labels`.
    fn body_statements(&mut self, depth: usize, labels: &mut Vec<Binding>) -> PResult<Vec<Stmt>> {
        let mut body = Vec::new();
        loop {
            self.ws();
            match self.peek() {
                None => {
                    return Err(self.err(RULE_SYNTAX, "expected '}' to close the body", self.pos))
                }
                Some(b'}') => return Ok(body),
                Some(b'^') => {
                    match self.block_label() {
                        Ok(b) => {
                            if depth == 0 && self.labels_are_args {
                                self.emit(Event::Labels(&b));
                            }
                            labels.extend(b);
                        }
                        Err(d) => {
                            self.diags.extend(d);
                            self.skip_statement();
                        }
                    }
                    continue;
                }
                _ => {}
            }
            let start = self.pos;
            // A region's labels are not the function's arguments.
            let labels_are_args = std::mem::replace(&mut self.labels_are_args, false);
            let stmt = self.statement(false, depth);
            self.labels_are_args = labels_are_args;
            match stmt {
                Ok(Some(s)) if depth == 0 && self.stream.is_some() => {
                    self.emit(Event::Stmt(Box::new(s)))
                }
                Ok(Some(s)) => body.push(s),
                Ok(None) => {}
                Err(d) => {
                    self.diags.extend(d);
                    self.skip_statement();
                }
            }
            if self.pos == start {
                self.bump();
            }
        }
    }

    /// One statement; `Ok(None)` for a skipped op that could not be named.
    fn statement(&mut self, operand_optional: bool, depth: usize) -> PResult<Option<Stmt>> {
        self.ws();
        let start = self.pos;
        let mut results = Vec::new();
        if self.peek() == Some(b'%') {
            loop {
                let r = self
                    .sigil_name(b'%')
                    .ok_or_else(|| self.err(RULE_SYNTAX, "expected SSA identifier", self.pos))?;
                // `%r:2` result packs.
                self.ws_inline();
                if self.peek() == Some(b':') {
                    self.pos += 1;
                    self.digits();
                }
                results.push(r);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("=")?;
        }
        self.ws();
        if self.peek() == Some(b'"') {
            let name_at = self.pos;
            let name = self.string_here();
            let short = name.strip_prefix("cuda_tile.").unwrap_or(&name);
            if let Some(kind) = OpKind::from_name(short).filter(|_| name.starts_with("cuda_tile."))
            {
                let mut c = self.generic_conv(kind, start)?;
                self.end_of_op()?;
                c.loc = self.span(start, self.pos);
                return Ok(Some(Stmt {
                    results,
                    op: Op::Convert(c),
                    span: self.span(start, self.pos),
                    regions: Vec::new(),
                }));
            }
            let (op, regions) = if short == "return" || short == "yield" {
                let mut ops = Vec::new();
                if self.eat("(") && !self.eat(")") {
                    loop {
                        let o = self.sigil_name(b'%').ok_or_else(|| {
                            self.err(RULE_SYNTAX, "expected SSA operand", self.pos)
                        })?;
                        ops.push(o);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                self.skip_op(None, depth);
                (Op::Return(ops), Vec::new())
            } else {
                self.note_skipped(short, name_at, self.pos);
                let regions = self.skip_op(Some(&results), depth);
                (Op::Other(name), regions)
            };
            return Ok(Some(Stmt {
                results,
                op,
                span: self.span(start, self.pos),
                regions,
            }));
        }
        let Some(name) = self.ident() else {
            return Err(self.err(RULE_SYNTAX, "expected operation name", self.pos));
        };
        let short = name.value.strip_prefix("cuda_tile.").unwrap_or(name.value);
        let mut regions = Vec::new();
        let op = if let Some(kind) = OpKind::from_name(short) {
            let c = self.conv_op(kind, start, operand_optional)?;
            self.end_of_op()?;
            Op::Convert(c)
        } else if short == "constant" {
            let c = self.constant()?;
            self.end_of_op()?;
            Op::Constant(c)
        } else if short == "return" || short == "yield" {
            let mut ops = Vec::new();
            self.ws_inline();
            // Operands start on the same line (a `%` on the next is the next statement).
            if self.peek() == Some(b'%') {
                while let Some(n) = self.sigil_name(b'%') {
                    ops.push(n);
                    if !self.eat(",") {
                        break;
                    }
                }
            }
            self.skip_op(None, depth);
            Op::Return(ops)
        } else {
            self.note_skipped(short, name.span.start, name.span.end);
            regions = self.skip_op(Some(&results), depth);
            Op::Other(name.value.to_string())
        };
        // Fix the location of a conversion op to the whole statement.
        let span = self.span(start, self.pos);
        let op = match op {
            Op::Convert(mut c) => {
                c.loc = span;
                Op::Convert(c)
            }
            o => o,
        };
        Ok(Some(Stmt {
            results,
            op,
            span,
            regions,
        }))
    }

    /// A conversion op in the generic form, after its name: `(%x) <{signedness =
    /// #cuda_tile.signedness<signed>, rounding_mode = #cuda_tile.rounding<zero>, overflow =
    /// #cuda_tile.overflow<no_wrap>, saturating}> : (T) -> T`.
    fn generic_conv(&mut self, kind: OpKind, start: usize) -> PResult<ConvOp> {
        self.expect("(")?;
        let operand = self
            .sigil_name(b'%')
            .ok_or_else(|| self.err(RULE_SYNTAX, "expected SSA operand", self.pos))?;
        self.expect(")")?;
        let mut signedness = None;
        let mut rounding = None;
        let mut overflow = Overflow::None;
        let mut saturating = None;
        self.ws();
        if self.starts("<{") {
            self.pos += 2;
            loop {
                self.ws();
                if self.eat("}") {
                    break;
                }
                let key = self
                    .ident()
                    .ok_or_else(|| self.err(RULE_SYNTAX, "expected attribute name", self.pos))?;
                let mut word = None;
                if self.eat("=") {
                    self.ws();
                    if self.eat("#cuda_tile.") {
                        let _ = self.ident_here();
                        self.expect("<")?;
                        self.ws();
                        let ws = self.pos;
                        let w = self.ident_here().unwrap_or("");
                        word = Some(Spanned {
                            value: w.to_string(),
                            span: self.span(ws, self.pos),
                        });
                        self.expect(">")?;
                    } else {
                        let _ = self.ident_here();
                    }
                }
                let bad = |r: &Self| {
                    r.err(
                        RULE_SYNTAX,
                        format!("unexpected value of attribute '{}'", key.value),
                        key.span.start,
                    )
                };
                match key.value {
                    "signedness" => {
                        signedness = match word.as_ref().map(|w| w.value.as_str()) {
                            Some("signed") => Some(Signedness::Signed),
                            Some("unsigned") => Some(Signedness::Unsigned),
                            _ => return Err(bad(self)),
                        }
                    }
                    "rounding_mode" => rounding = Some(word.ok_or_else(|| bad(self))?),
                    "overflow" => {
                        overflow = word
                            .and_then(|w| Overflow::from_name(&w.value))
                            .ok_or_else(|| bad(self))?
                    }
                    "saturating" => saturating = Some(key.span),
                    _ => {}
                }
                if !self.eat(",") {
                    self.expect("}")?;
                    break;
                }
            }
            self.expect(">")?;
        }
        self.ws();
        if self.peek() == Some(b'{') {
            self.skip_group();
        }
        if kind.has_signedness() && signedness.is_none() {
            return Err(self.err(
                RULE_SYNTAX,
                format!(
                    "'cuda_tile.{}' op requires attribute 'signedness'",
                    kind.name()
                ),
                start,
            ));
        }
        self.expect(":")?;
        self.expect("(")?;
        let src = self.tile_type()?;
        self.expect(")")?;
        self.expect("->")?;
        let dst = self.tile_type()?;
        Ok(ConvOp {
            kind,
            operand: Some(operand),
            signedness,
            rounding,
            overflow,
            saturating,
            src,
            dst,
            loc: self.span(start, self.pos),
        })
    }

    /// Counts a skipped op for the file's notes.
    fn note_skipped(&mut self, short: &str, at: usize, end: usize) {
        if let Some(&i) = self.skipped_index.get(short) {
            self.skipped[i].2 += 1;
        } else {
            let span = self.span(at, end);
            self.skipped_index
                .insert(short.to_string(), self.skipped.len());
            self.skipped.push((short.to_string(), span, 1));
        }
    }

    /// After a modelled op: an optional `loc(…)`, then the end of the statement (a line
    /// break, a comment, the `}` of the block, or the end of the text).
    fn end_of_op(&mut self) -> PResult<()> {
        self.trailing_loc();
        let before = self.pos;
        self.ws_inline();
        match self.peek() {
            None | Some(b'\n') | Some(b'\r') | Some(b'}') => Ok(()),
            Some(b'/') if self.starts("//") => Ok(()),
            // MLIR's line breaks are white space: another op may follow on the same line.
            _ if self.pos > before && self.op_follows() => Ok(()),
            _ => Err(self.err(RULE_SYNTAX, "unexpected text after the operation", self.pos)),
        }
    }

    /// Whether an op starts at the current position: results (`%y =`, `%a, %b =`), a
    /// generic op (`"cuda_tile.…"`), or the name of an op the reader models.
    fn op_follows(&mut self) -> bool {
        let save = self.pos;
        let r = match self.peek() {
            Some(b'%') => {
                self.pos += 1;
                while self.peek().is_some_and(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'-')
                }) {
                    self.pos += 1;
                }
                self.ws_inline();
                if self.peek() == Some(b':') {
                    self.pos += 1;
                    self.digits();
                    self.ws_inline();
                }
                matches!(self.peek(), Some(b',')) || (self.starts("=") && !self.starts("=="))
            }
            Some(b'"') => self.starts("\"cuda_tile."),
            Some(b) if is_ident_start(b) => {
                let id = self.ident_here().unwrap_or("");
                let short = id.strip_prefix("cuda_tile.").unwrap_or(id);
                OpKind::from_name(short).is_some()
                    || matches!(short, "constant" | "return" | "yield")
            }
            _ => false,
        };
        self.pos = save;
        r
    }

    /// Reads the rest of an op the reader does not model as balanced text: brackets,
    /// strings, attributes, `loc(…)`, over line breaks where the op goes on (see
    /// [`Self::continues`]), stopping before the `}` of the enclosing block. Its regions
    /// are read as statements (at `depth + 1`), each seeing the names the op's header
    /// binds. With `results` as `None`, regions are skipped unread.
    fn skip_op(&mut self, results: Option<&[Spanned<String>]>, depth: usize) -> Vec<Region> {
        let mut regions = Vec::new();
        let mut header: Vec<Binding> = Vec::new();
        let mut stack: Vec<u8> = Vec::new();
        let (mut last, mut prev) = (b' ', b' ');
        while let Some(b) = self.peek() {
            match b {
                b'\n' | b'\r' => {
                    if stack.is_empty() && !self.continues(last, prev) {
                        break;
                    }
                    self.pos += 1;
                    continue;
                }
                b' ' | b'\t' => {
                    self.pos += 1;
                    continue;
                }
                b'/' if self.starts("//") => {
                    self.skip_comment();
                    continue;
                }
                b'"' => {
                    let _ = self.string_here();
                    (prev, last) = (last, b'"');
                    continue;
                }
                b'%' if results.is_some() => {
                    if let Some(n) = self.sigil_name(b'%') {
                        let ty = self.binding_type();
                        if !results.is_some_and(|r| r.iter().any(|x| x.value == n.value)) {
                            header.push(Binding {
                                name: n.value,
                                ty,
                                span: n.span,
                            });
                        }
                        (prev, last) = (last, b'a');
                        continue;
                    }
                }
                b'{' if results.is_some()
                    && stack.last().is_none_or(|&t| t == b'(')
                    && self.region_follows() =>
                {
                    match self.region(&header, depth + 1) {
                        Ok(r) => regions.push(r),
                        Err(d) => self.diags.extend(d),
                    }
                    (prev, last) = (last, b'}');
                    continue;
                }
                b'(' | b'[' | b'{' | b'<' => stack.push(b),
                b')' | b']' | b'}' => {
                    while stack.last() == Some(&b'<') {
                        stack.pop();
                    }
                    if stack.pop().is_none() && b == b'}' {
                        // The `}` of the enclosing block.
                        break;
                    }
                }
                // Not the `>` of `->`.
                b'>' if stack.last() == Some(&b'<') && self.bytes[self.pos - 1] != b'-' => {
                    stack.pop();
                }
                _ => {}
            }
            (prev, last) = (last, b);
            self.bump();
        }
        regions
    }

    /// After a name in a skipped op's header: `: tile<…>` gives its type (the region
    /// arguments of `reduce`/`scan`); anything else leaves it unknown.
    fn binding_type(&mut self) -> ValueType {
        let save = self.pos;
        self.ws_inline();
        if self.peek() == Some(b':') {
            self.pos += 1;
            self.ws_inline();
            if self.starts("tile<") || self.starts("!cuda_tile.tile<") {
                if let Ok(t) = self.tile_type() {
                    return ValueType::Tile(t.value);
                }
            }
        }
        self.pos = save;
        ValueType::Unknown
    }

    /// Whether a skipped op goes on after the line break at the current position (outside
    /// brackets): the line ends with `,`, `=`, `:` or `->`, or the next line starts with
    /// what cannot start a statement — punctuation (`:`, `->`, `(`, `{`, …), `attributes`,
    /// `else`, a word with its argument (`loc(…)`, `iter_values(…)`) or a keyword attribute
    /// (`dim=0`, `rounding<zero>`).
    fn continues(&mut self, last: u8, prev: u8) -> bool {
        if matches!(last, b',' | b'=' | b':') || (last == b'>' && prev == b'-') {
            return true;
        }
        let save = self.pos;
        self.ws();
        let r = match self.peek() {
            Some(b':' | b',' | b'=' | b'(' | b'[' | b'<' | b'{' | b')' | b']' | b'>' | b'-') => {
                true
            }
            Some(b) if is_ident_start(b) => {
                let id = self.ident_here().unwrap_or("");
                matches!(id, "attributes" | "else")
                    || matches!(self.peek(), Some(b'=' | b'<' | b'('))
            }
            _ => false,
        };
        self.pos = save;
        r
    }

    /// At a `{` in a skipped op: whether it opens a region (statements) rather than an
    /// attribute dictionary (`{name = value, unit_attr}`).
    fn region_follows(&mut self) -> bool {
        let save = self.pos;
        self.pos += 1;
        self.ws_inline();
        let same_line = !matches!(self.peek(), Some(b'\n' | b'\r'));
        self.ws();
        let r = match self.peek() {
            Some(b'%' | b'^' | b'"') => true,
            Some(b) if is_ident_start(b) => {
                let _ = self.ident_here();
                self.ws_inline();
                !(same_line && matches!(self.peek(), Some(b'=' | b',' | b'}')))
            }
            _ => false,
        };
        self.pos = save;
        r
    }

    /// A region at its `{`: an optional block label, then statements to the `}`.
    fn region(&mut self, header: &[Binding], depth: usize) -> PResult<Region> {
        if depth > MAX_DEPTH {
            let e = self.err(
                RULE_SYNTAX,
                format!("regions nested more than {MAX_DEPTH} deep"),
                self.pos,
            );
            self.skip_group();
            return Err(e);
        }
        self.pos += 1;
        let mut args = header.to_vec();
        let body = self.body_statements(depth, &mut args)?;
        self.pos += 1; // the `}`
        Ok(Region { args, body })
    }

    fn conv_op(&mut self, kind: OpKind, start: usize, operand_optional: bool) -> PResult<ConvOp> {
        let operand = self.sigil_name(b'%');
        if operand.is_none() && !operand_optional {
            return Err(self.err(RULE_SYNTAX, "expected SSA operand", self.pos));
        }
        let mut signedness = None;
        if kind.has_signedness() {
            self.ws();
            let at = self.pos;
            match self.ident_here() {
                Some("signed") => signedness = Some(Signedness::Signed),
                Some("unsigned") => signedness = Some(Signedness::Unsigned),
                Some(_) => {
                    return Err(self.err(
                        RULE_SYNTAX,
                        "expected signedness to be one of: {'signed', 'unsigned'}",
                        at,
                    ))
                }
                None => {
                    let mut d = self.err(RULE_SYNTAX, "expected valid keyword", at);
                    d.extend(self.err(
                        RULE_SYNTAX,
                        "expected signedness to be one of: {'signed', 'unsigned'}",
                        at,
                    ));
                    return Err(d);
                }
            }
        }
        let mut rounding = None;
        let mut saturating = None;
        let mut overflow = Overflow::None;
        loop {
            self.ws();
            let at = self.pos;
            match self.peek_ident() {
                Some("rounding") if kind.has_rounding() && rounding.is_none() => {
                    let _ = self.ident();
                    self.expect("<")?;
                    self.ws();
                    let ws = self.pos;
                    let word = self.ident_here().unwrap_or("").to_string();
                    let span = self.span(ws, self.pos);
                    self.expect(">")?;
                    rounding = Some(Spanned { value: word, span });
                }
                Some("saturating") if kind == OpKind::FtoI && saturating.is_none() => {
                    let s = self.ident().map(|s| s.span).unwrap_or_default();
                    saturating = Some(s);
                }
                Some("overflow") if kind == OpKind::TruncI => {
                    let _ = self.ident();
                    self.expect("<")?;
                    self.ws();
                    let ws = self.pos;
                    let word = self.ident_here().unwrap_or("");
                    overflow = Overflow::from_name(word).ok_or_else(|| {
                        self.err(
                            RULE_SYNTAX,
                            format!(
                                "expected overflow to be one of: 'none', 'no_signed_wrap', \
                                 'no_unsigned_wrap', 'no_wrap', got: '{word}'"
                            ),
                            ws,
                        )
                    })?;
                    self.expect(">")?;
                }
                Some(_) => {
                    return Err(self.err(RULE_SYNTAX, "expected ':'", at));
                }
                None => break,
            }
        }
        self.ws();
        if self.peek() == Some(b'{') {
            self.skip_group();
        }
        self.expect(":")?;
        let src = self.tile_type()?;
        self.expect("->")?;
        let dst = self.tile_type()?;
        Ok(ConvOp {
            kind,
            operand,
            signedness,
            rounding,
            overflow,
            saturating,
            src,
            dst,
            loc: self.span(start, self.pos),
        })
    }

    fn constant(&mut self) -> PResult<Constant> {
        self.expect("<")?;
        self.ws();
        let es = self.pos;
        let elem = self.elem_type()?;
        self.expect(":")?;
        let lit = self.literal(elem, 0)?;
        self.expect(">")?;
        self.ws();
        if self.peek() == Some(b'{') {
            self.skip_group();
        }
        self.expect(":")?;
        let ty = self.tile_type()?;
        let t = ty.value;
        let Some(tile_elem) = t.num() else {
            return Err(self.err(
                RULE_CONSTANT,
                format!("constant of pointer tile type '{t}' is not supported"),
                ty.span.start,
            ));
        };
        if tile_elem != elem {
            return Err(self.err(
                RULE_CONSTANT,
                format!(
                    "mismatch between the element type: '{elem}' and the tile element type \
                     '{tile_elem}'"
                ),
                es,
            ));
        }
        let elements = match lit {
            Lit::Scalar(v) => ConstElements::Splat(v),
            Lit::List(_, lstart) => {
                let shape = lit
                    .shape()
                    .map_err(|m| self.err(RULE_CONSTANT, m, lstart))?;
                if shape != t.shape {
                    let show = |s: &[u64]| {
                        s.iter()
                            .map(|d| d.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    return Err(self.err(
                        RULE_CONSTANT,
                        format!(
                            "inferred shape of elements literal ([{}]) does not match type ([{}])",
                            show(&shape),
                            show(&t.shape)
                        ),
                        lstart,
                    ));
                }
                let mut v = Vec::new();
                lit.flatten(&mut v);
                ConstElements::Dense(v)
            }
        };
        Ok(Constant { ty: t, elements })
    }
}

/// A literal as written: a scalar bit pattern or a nested list (with its start offset).
enum Lit {
    Scalar(u64),
    List(Vec<Lit>, usize),
}

impl Lit {
    fn shape(&self) -> Result<Vec<u64>, String> {
        match self {
            Lit::Scalar(_) => Ok(Vec::new()),
            Lit::List(items, _) => {
                let mut inner: Option<Vec<u64>> = None;
                for it in items {
                    let s = it.shape()?;
                    match &inner {
                        None => inner = Some(s),
                        Some(p) if *p == s => {}
                        Some(_) => {
                            return Err(
                                "tensor literal is invalid; ranks are not consistent between \
                                 elements"
                                    .into(),
                            )
                        }
                    }
                }
                let mut out = vec![items.len() as u64];
                out.extend(inner.unwrap_or_default());
                Ok(out)
            }
        }
    }

    fn flatten(&self, out: &mut Vec<u64>) {
        match self {
            Lit::Scalar(v) => out.push(*v),
            Lit::List(items, _) => items.iter().for_each(|i| i.flatten(out)),
        }
    }
}

/// Reads a file: every `cuda_tile.module` in it, with the syntax errors found. Never panics.
pub fn parse_file(text: &str) -> TileFile {
    read(text, None)
}

fn read<'a>(text: &'a str, stream: Option<&'a mut dyn FnMut(Event<'_>)>) -> TileFile {
    let mut r = Reader::new(text);
    r.stream = stream;
    let modules = r.file();
    let notes = r
        .skipped
        .iter()
        .map(|(name, span, n)| {
            let times = if *n == 1 {
                String::new()
            } else {
                format!(" ({n} times)")
            };
            Diagnostic::note(
                RULE_SKIPPED,
                format!("op '{name}' is not modelled by gpucvt: read and skipped{times}"),
                *span,
            )
        })
        .collect();
    TileFile {
        modules,
        diagnostics: r.diags,
        notes,
    }
}

/// [`parse_file`] for a reader that needs one statement at a time (the checker): each
/// function's header, block labels and statements go to `on_event` as they are read, and
/// are dropped when it returns, so that memory does not follow the file. Returns the file
/// without its functions (modules are kept, with no functions); the diagnostics and notes
/// are [`parse_file`]'s.
pub(crate) fn read_functions(text: &str, on_event: &mut dyn FnMut(Event<'_>)) -> TileFile {
    read(text, Some(on_event))
}

/// Reads one conversion op written on its own, as in `ftof %x rounding<zero> : tile<f32> ->
/// tile<f16>`: the result (`%r =`) and the operand name are optional, the `cuda_tile.`
/// prefix too. Version-dependent rules are checked by [`super::check::verify_op`].
///
/// ```
/// use gpucvt::tile::{parse::parse_op, types::{OpKind, RoundingMode}};
/// let op = parse_op("ftof rounding<zero> : tile<f32> -> tile<f16>").unwrap();
/// assert_eq!(op.kind, OpKind::FtoF);
/// assert_eq!(op.rounding_mode(), Some(RoundingMode::Zero));
/// ```
pub fn parse_op(text: &str) -> Result<ConvOp, Vec<Diagnostic>> {
    let mut r = Reader::new(text);
    let stmt = r.statement(true, 0)?;
    r.ws();
    if !r.at_eof() {
        return Err(r.err(RULE_SYNTAX, "unexpected text after the operation", r.pos));
    }
    match stmt.map(|s| s.op) {
        Some(Op::Convert(c)) => Ok(c),
        _ => Err(vec![Diagnostic::error(
            RULE_SYNTAX,
            "expected one of the conversion ops: bitcast, exti, trunci, ftof, ftoi, itof, \
             int_to_ptr, ptr_to_int, ptr_to_ptr",
            Span::locate(text, 0, text.len()),
        )]),
    }
}

/// Reads one tile type (`tile<4x8xf32>`, `!cuda_tile.tile<ptr<f32>>`), with the size rules.
pub fn parse_tile_type(text: &str) -> Result<TileType, Vec<Diagnostic>> {
    let mut r = Reader::new(text);
    let t = r.tile_type()?;
    r.ws();
    if !r.at_eof() {
        return Err(r.err(RULE_SYNTAX, "unexpected text after the type", r.pos));
    }
    Ok(t.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting locator gives every position the line and column a scan from the start
    /// gives (lone CR, CRLF and LF line ends, multi-byte characters, a byte order mark), in
    /// any order of asking.
    #[test]
    fn positions_match_a_scan_from_the_start() {
        let text = "\u{feff}ab\r\ncdé\rf\n\n  x\r\r\néé y\nlast";
        let bytes = text.as_bytes();
        let first = 3;
        // The reference: lines end at \n, \r\n or a lone \r; columns count characters; the
        // first line starts after the mark.
        let reference = |p: usize| -> (u32, u32) {
            let (mut line, mut ls) = (1u32, first);
            for i in first..p {
                if line_break_at(bytes, i) {
                    line += 1;
                    ls = i + 1;
                }
            }
            (line, 1 + chars_in(bytes, ls, p))
        };
        let boundaries: Vec<usize> = (first..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        let mut orders = vec![
            boundaries.clone(),
            boundaries.iter().rev().copied().collect(),
        ];
        let mut zigzag = Vec::new();
        for w in boundaries.chunks(3) {
            zigzag.extend(w.iter().rev());
        }
        orders.push(zigzag);
        for order in orders {
            let lines = Lines::new(first);
            for &p in &order {
                let sp = lines.span(bytes, p, p);
                assert_eq!((sp.line, sp.col), reference(p), "at {p}");
            }
        }
    }

    fn one(text: &str) -> Result<Constant, Vec<Diagnostic>> {
        let src = format!("cuda_tile.module @m {{ entry @k() {{\n %c = {text}\n }} }}");
        let f = parse_file(&src);
        if !f.diagnostics.is_empty() {
            return Err(f.diagnostics);
        }
        match &f.modules[0].functions[0].body[0].op {
            Op::Constant(c) => Ok(c.clone()),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn constants() {
        let c = one("constant <i16: 0xFFFF> : tile<i16>").unwrap();
        assert_eq!(c.elements, ConstElements::Splat(0xffff));
        let c = one("constant <f32: [[1.0, 2.0], [3.0, 4.0]]> : tile<2x2xf32>").unwrap();
        assert_eq!(c.element(3), 0x4080_0000);
        let c = one("constant <f16: 70000.0> : tile<f16>").unwrap();
        assert_eq!(c.element(0), 0x7c00);
        let c = one("constant <f32: 1.00000005960464477539062500001> : tile<f32>").unwrap();
        assert_eq!(c.element(0), 0x3f80_0000);
        let c = one("constant <i1: true> : tile<4xi1>").unwrap();
        assert_eq!(c.element(2), 1);
        let c = one("constant <f4E2M1FN: [0x2, 0x4]> : tile<2xf4E2M1FN>").unwrap();
        assert_eq!(c.elements, ConstElements::Dense(vec![2, 4]));
        let c = one("constant <i8: -128> : tile<i8>").unwrap();
        assert_eq!(c.element(0), 0x80);
        let msg = |t: &str| one(t).unwrap_err()[0].message.clone();
        assert!(msg("constant <i8: 256> : tile<i8>").contains("out of range"));
        assert!(msg("constant <i8: true> : tile<i8>").contains("expected integer value"));
        assert!(msg("constant <f32: 1> : tile<f32>").contains("unexpected decimal integer"));
        assert!(msg("constant <f16: 0x10000> : tile<f16>").contains("float constant out of range"));
        assert!(msg("constant <f16: 1.0> : tile<f32>").contains("mismatch between the element"));
        assert!(msg("constant <f32: [1.0, 2.0]> : tile<4xf32>")
            .contains("inferred shape of elements literal ([2]) does not match type ([4])"));
    }

    #[test]
    fn op_forms() {
        let op = parse_op(
            "%r = cuda_tile.trunci %x overflow<no_wrap> : !cuda_tile.tile<i16> -> tile<i8>",
        )
        .unwrap();
        assert_eq!(op.overflow, Overflow::NoWrap);
        assert_eq!(
            op.to_text(),
            "trunci %x overflow<no_wrap> : tile<i16> -> tile<i8>"
        );
        let op = parse_op("ftoi %t signed  saturating : tile<16xf32> -> tile<16xi32>").unwrap();
        assert!(op.is_saturating());
        let e = parse_op("exti %x : tile<i8> -> tile<i16>").unwrap_err();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].message, "expected valid keyword");
        assert!(parse_tile_type("tile<3xf32>").is_err());
        assert!(parse_tile_type("tile<4x!cuda_tile.ptr<f32>>").is_ok());
    }
}
