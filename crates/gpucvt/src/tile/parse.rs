//! The reader for small Tile IR files (`tile-ir.md` §2): `cuda_tile.module`, `entry` (and
//! the test-only `testing$func`), `constant` with every literal form, the nine conversion ops
//! in their pretty assembly syntax, and `return`. Other ops (and the generic `"op"(…)` form)
//! are skipped. The `cuda_tile.` prefix is optional everywhere; types may be written
//! `tile<…>` or `!cuda_tile.tile<…>`.
//!
//! The reader is version-neutral: it records what is written (a rounding word, a
//! `saturating` flag) and leaves version-dependent checks to [`super::verify`]. Syntax
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
use gpucvt_core::convert::{convert, Policy};
use gpucvt_core::format;
use gpucvt_core::Rounding;

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
    /// The arguments.
    pub args: Vec<Arg>,
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
}

/// The ops the reader understands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // conversions are the common case; files are small
pub enum Op {
    /// `constant <E: literal> : tile<…>`.
    Constant(Constant),
    /// One of the nine conversion ops.
    Convert(ConvOp),
    /// `return` with its operands.
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
}

const RULE_SYNTAX: &str = "tile.syntax";
const RULE_TYPE: &str = "tile.type";
const RULE_CONSTANT: &str = "tile.constant";

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$')
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            diags: Vec::new(),
        }
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::locate(self.text, start, end)
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
    fn ws(&mut self) {
        while let Some(b) = self.peek() {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if self.starts("//") {
                while let Some(b) = self.peek() {
                    if b == b'\n' {
                        break;
                    }
                    self.bump();
                }
            } else {
                break;
            }
        }
    }

    /// Skips spaces, tabs and comments but not newlines.
    fn ws_inline(&mut self) {
        while let Some(b) = self.peek() {
            if b == b' ' || b == b'\t' || b == b'\r' {
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
        Some(Spanned {
            value: self.text[name_start..self.pos].to_string(),
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
                b'\n' if depth == 0 => return,
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
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.bump();
                    }
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
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1;
            }
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
        if let Err(m) = ty.check_size() {
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

    fn literal(&mut self, elem: ElemType) -> PResult<Lit> {
        self.ws();
        let start = self.pos;
        if self.peek() == Some(b'[') {
            self.pos += 1;
            let mut items = Vec::new();
            self.ws();
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Lit::List(items, start));
            }
            loop {
                items.push(self.literal(elem)?);
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
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.peek() == Some(b'.') {
                self.pos += 1;
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                }
                if self.peek().is_some_and(|b| b == b'e' || b == b'E') {
                    let save = self.pos;
                    self.pos += 1;
                    if self.peek().is_some_and(|b| b == b'+' || b == b'-') {
                        self.pos += 1;
                    }
                    if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                            self.pos += 1;
                        }
                    } else {
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

    fn file(&mut self) -> Vec<Module> {
        let mut modules = Vec::new();
        loop {
            self.ws();
            if self.at_eof() {
                break;
            }
            let start = self.pos;
            match self.peek_ident() {
                Some("cuda_tile.module") | Some("module") => match self.module() {
                    Ok(m) => modules.push(m),
                    Err(d) => {
                        self.diags.extend(d);
                        self.pos = start;
                        self.skip_statement();
                        if self.pos == start {
                            self.bump();
                        }
                    }
                },
                _ => {
                    self.diags
                        .extend(self.err(RULE_SYNTAX, "expected 'cuda_tile.module'", start));
                    self.skip_statement();
                    if self.pos == start {
                        self.pos += 1;
                    }
                }
            }
        }
        modules
    }

    fn module(&mut self) -> PResult<Module> {
        let kw = self
            .ident()
            .ok_or_else(|| self.err(RULE_SYNTAX, "expected module", self.pos))?;
        let name = self
            .sigil_name(b'@')
            .ok_or_else(|| self.err(RULE_SYNTAX, "expected symbol name", self.pos))?;
        // Attributes such as `attributes {…}` may come before the body.
        self.ws();
        while !self.at_eof() && self.peek() != Some(b'{') {
            if self.peek() == Some(b'<') {
                self.skip_group();
            } else if self.peek_ident() == Some("attributes") {
                let _ = self.ident();
                self.ws();
                self.skip_group();
            } else {
                return Err(self.err(RULE_SYNTAX, "expected '{'", self.pos));
            }
            self.ws();
        }
        self.expect("{")?;
        let mut functions = Vec::new();
        loop {
            self.ws();
            if self.at_eof() {
                return Err(self.err(RULE_SYNTAX, "expected '}' to close the module", self.pos));
            }
            if self.peek() == Some(b'}') {
                self.pos += 1;
                break;
            }
            let start = self.pos;
            let id = self.peek_ident().unwrap_or("");
            let short = id.strip_prefix("cuda_tile.").unwrap_or(id);
            if short == "entry" || short == "testing$func" {
                match self.function() {
                    Ok(f) => functions.push(f),
                    Err(d) => {
                        // Skip the whole function, body included.
                        self.diags.extend(d);
                        self.pos = start;
                        self.skip_statement();
                    }
                }
            } else {
                self.skip_statement();
            }
            if self.pos == start {
                self.pos += 1;
            }
        }
        Ok(Module {
            name: name.value,
            span: kw.span,
            functions,
        })
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
        if !self.eat(")") {
            loop {
                let n = self
                    .sigil_name(b'%')
                    .ok_or_else(|| self.err(RULE_SYNTAX, "expected SSA identifier", self.pos))?;
                self.expect(":")?;
                let ty = self.tile_type()?;
                args.push(Arg {
                    name: n.value,
                    ty: ty.value,
                    span: n.span,
                });
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
                Some(_) => {
                    let s = self.pos;
                    if self.ident_here().is_none() {
                        self.pos = s + 1;
                    }
                }
            }
        }
        self.pos += 1;
        let mut body = Vec::new();
        loop {
            self.ws();
            match self.peek() {
                None => {
                    return Err(self.err(RULE_SYNTAX, "expected '}' to close the body", self.pos))
                }
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => {}
            }
            let start = self.pos;
            match self.statement(false) {
                Ok(Some(s)) => body.push(s),
                Ok(None) => {}
                Err(d) => {
                    self.diags.extend(d);
                    self.skip_statement();
                }
            }
            if self.pos == start {
                self.pos += 1;
            }
        }
        Ok(Function {
            name: name.value,
            span: kw.span,
            test_func,
            args,
            body,
        })
    }

    /// One statement; `Ok(None)` for a skipped op that could not be named.
    fn statement(&mut self, operand_optional: bool) -> PResult<Option<Stmt>> {
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
                    while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                        self.pos += 1;
                    }
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
            let s = self.pos;
            self.skip_statement();
            let name = self.text[s..self.pos]
                .split('"')
                .nth(1)
                .unwrap_or("")
                .to_string();
            return Ok(Some(Stmt {
                results,
                op: Op::Other(name),
                span: self.span(start, self.pos),
            }));
        }
        let Some(name) = self.ident() else {
            return Err(self.err(RULE_SYNTAX, "expected operation name", self.pos));
        };
        let short = name.value.strip_prefix("cuda_tile.").unwrap_or(name.value);
        let op = if let Some(kind) = OpKind::from_name(short) {
            Op::Convert(self.conv_op(kind, start, operand_optional)?)
        } else if short == "constant" {
            Op::Constant(self.constant()?)
        } else if short == "return" {
            let mut ops = Vec::new();
            self.ws_inline();
            while let Some(n) = self.sigil_name(b'%') {
                ops.push(n);
                if !self.eat(",") {
                    break;
                }
            }
            self.skip_statement();
            Op::Return(ops)
        } else {
            self.skip_statement();
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
        Ok(Some(Stmt { results, op, span }))
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
        let lit = self.literal(elem)?;
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
    let mut r = Reader::new(text);
    let modules = r.file();
    TileFile {
        modules,
        diagnostics: r.diags,
    }
}

/// Reads one conversion op written on its own, as in `ftof %x rounding<zero> : tile<f32> ->
/// tile<f16>`: the result (`%r =`) and the operand name are optional, the `cuda_tile.`
/// prefix too. Version-dependent rules are checked by [`super::verify::verify_op`].
///
/// ```
/// use gpucvt::tile::{parse::parse_op, types::{OpKind, RoundingMode}};
/// let op = parse_op("ftof rounding<zero> : tile<f32> -> tile<f16>").unwrap();
/// assert_eq!(op.kind, OpKind::FtoF);
/// assert_eq!(op.rounding_mode(), Some(RoundingMode::Zero));
/// ```
pub fn parse_op(text: &str) -> Result<ConvOp, Vec<Diagnostic>> {
    let mut r = Reader::new(text);
    let stmt = r.statement(true)?;
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
