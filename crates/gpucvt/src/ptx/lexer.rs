//! The PTX lexer: source text to tokens with spans (byte range, line, column).
//!
//! Four kinds of token: words (`cvt.rn.f16.f32`, `%r1`, `.reg`, `$L__BB0_1`,
//! `.scaled::n2::ue8m0`), numbers (`1`, `-` is separate, `0f3F800000`, `0d3FF0000000000000`,
//! `0x1F`, `1.5e-3`), strings (`"file.cu"`) and single punctuation characters. Comments
//! (`// …`, `/* … */`) are skipped. Lexing never fails: an unterminated comment or string
//! gives a diagnostic and the lexer carries on.
//!
//! ```
//! use gpucvt::ptx::lexer::{lex, TokenKind};
//! let src = "cvt.rn.f16.f32 %h, %f; // convert\n";
//! let out = lex(src);
//! let texts: Vec<&str> = out.tokens.iter().map(|t| t.text(src)).collect();
//! assert_eq!(texts, ["cvt.rn.f16.f32", "%h", ",", "%f", ";"]);
//! assert_eq!(out.tokens[1].kind, TokenKind::Word);
//! assert_eq!((out.tokens[1].span.line, out.tokens[1].span.col), (1, 16));
//! assert!(out.diagnostics.is_empty());
//! ```

use crate::diag::{Diagnostic, Span};

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// An identifier, register, directive or dotted opcode.
    Word,
    /// A numeric literal (integer, hexadecimal, `0f`/`0d` float bits, decimal float).
    Number,
    /// A string literal, quotes included.
    Str,
    /// One punctuation character.
    Punct,
}

/// One token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    /// Its kind.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
    /// Whether it is the first token on its line.
    pub line_start: bool,
}

impl Token {
    /// The token's text in `src` (the text it was lexed from).
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        src.get(self.span.start..self.span.end).unwrap_or("")
    }

    /// Whether this is the punctuation character `c`.
    pub fn is_punct(&self, src: &str, c: char) -> bool {
        self.kind == TokenKind::Punct && self.text(src).starts_with(c)
    }
}

/// The result of lexing: the tokens and any problems found.
#[derive(Clone, Debug, Default)]
pub struct Lexed {
    /// The tokens, in order.
    pub tokens: Vec<Token>,
    /// Unterminated comments and strings.
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug)]
struct Cursor<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    col: u32,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        let lone_cr = c == '\r' && self.peek() != Some('\n');
        if c == '\n' || lone_cr {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn starts_with(&self, s: &str) -> bool {
        self.src[self.pos..].starts_with(s)
    }

    fn span_from(&self, start: usize, line: u32, col: u32) -> Span {
        Span {
            start,
            end: self.pos,
            line,
            col,
        }
    }
}

fn word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%' | '.')
}

fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

/// Splits `src` into tokens.
pub fn lex(src: &str) -> Lexed {
    let mut lexer = Lexer::new(src);
    let mut tokens = Vec::new();
    while let Some(t) = lexer.next_token() {
        tokens.push(t);
    }
    Lexed {
        tokens,
        diagnostics: lexer.diagnostics,
    }
}

/// An incremental lexer: the tokens of `src` one at a time, so that a reader of a large
/// file need not hold them all (see [`lex`] for the whole list).
#[derive(Clone, Debug)]
pub struct Lexer<'a> {
    cur: Cursor<'a>,
    last_line: u32,
    /// Unterminated comments and strings found so far.
    pub diagnostics: Vec<Diagnostic>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            cur: Cursor {
                src,
                pos: 0,
                line: 1,
                col: 1,
            },
            last_line: 0,
            diagnostics: Vec::new(),
        }
    }

    /// The next token, or `None` at the end of the text.
    pub fn next_token(&mut self) -> Option<Token> {
        let cur = &mut self.cur;
        while let Some(c) = cur.peek() {
            if c.is_whitespace() {
                cur.bump();
                continue;
            }
            let (start, line, col) = (cur.pos, cur.line, cur.col);
            if cur.starts_with("//") {
                while cur.peek().is_some_and(|c| !is_line_end(c)) {
                    cur.bump();
                }
                continue;
            }
            if cur.starts_with("/*") {
                cur.bump();
                cur.bump();
                let mut closed = false;
                while cur.peek().is_some() {
                    if cur.starts_with("*/") {
                        cur.bump();
                        cur.bump();
                        closed = true;
                        break;
                    }
                    cur.bump();
                }
                if !closed {
                    self.diagnostics.push(Diagnostic::error(
                        "syntax.comment",
                        "unterminated block comment: '/*' without a closing '*/'",
                        Span {
                            start,
                            end: start + 2,
                            line,
                            col,
                        },
                    ));
                }
                continue;
            }
            let kind = if c == '"' {
                cur.bump();
                let mut closed = false;
                while let Some(c) = cur.peek() {
                    if is_line_end(c) {
                        break;
                    }
                    cur.bump();
                    if c == '\\' {
                        if cur.peek().is_some_and(|c| !is_line_end(c)) {
                            cur.bump();
                        }
                    } else if c == '"' {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    self.diagnostics.push(Diagnostic::error(
                        "syntax.string",
                        "unterminated string literal",
                        cur.span_from(start, line, col),
                    ));
                }
                TokenKind::Str
            } else if c.is_ascii_digit()
                || (c == '.' && cur.peek_at(1).is_some_and(|d| d.is_ascii_digit()))
            {
                lex_number(cur);
                TokenKind::Number
            } else if word_start(c) {
                cur.bump();
                loop {
                    match cur.peek() {
                        // A directive or type word ends at the next dot: `.reg.u32` and
                        // `.v4.u16` are two words each, as ptxas reads them.
                        Some('.') if c == '.' => break,
                        Some(c) if word_char(c) => {
                            cur.bump();
                        }
                        // `::` inside a word (`.scaled::n2::ue8m0`), never a label's `:`.
                        Some(':')
                            if cur.peek_at(1) == Some(':')
                                && cur.peek_at(2).is_some_and(|c| c.is_ascii_alphanumeric()) =>
                        {
                            cur.bump();
                            cur.bump();
                        }
                        _ => break,
                    }
                }
                TokenKind::Word
            } else {
                cur.bump();
                TokenKind::Punct
            };
            let token = Token {
                kind,
                span: cur.span_from(start, line, col),
                line_start: line != self.last_line,
            };
            self.last_line = line;
            return Some(token);
        }
        None
    }
}

/// `\n`, and `\r` alone (old Mac line ends); `\r\n` counts once, at its `\n`.
fn is_line_end(c: char) -> bool {
    c == '\n' || c == '\r'
}

fn lex_number(cur: &mut Cursor<'_>) {
    let hex_prefix = cur.peek() == Some('0')
        && matches!(cur.peek_at(1), Some('x' | 'X' | 'f' | 'F' | 'd' | 'D'))
        && cur.peek_at(2).is_some_and(|c| c.is_ascii_hexdigit());
    if hex_prefix {
        cur.bump();
        cur.bump();
        while cur.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
            cur.bump();
        }
    } else {
        while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            cur.bump();
        }
        let dot_ends_number = match cur.peek_at(1) {
            None => true,
            Some(c) => c.is_ascii_digit() || !word_start(c),
        };
        if cur.peek() == Some('.') && dot_ends_number {
            cur.bump();
            while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                cur.bump();
            }
        }
        if matches!(cur.peek(), Some('e' | 'E')) {
            let after = cur.peek_at(1);
            let digit_after = match after {
                Some('+' | '-') => cur.peek_at(2).is_some_and(|c| c.is_ascii_digit()),
                Some(c) => c.is_ascii_digit(),
                None => false,
            };
            if digit_after {
                cur.bump();
                if matches!(cur.peek(), Some('+' | '-')) {
                    cur.bump();
                }
                while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                    cur.bump();
                }
            }
        }
    }
    // A suffix (`U`) or junk glued to the number stays part of the token; the parser judges it.
    while cur
        .peek()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        cur.bump();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        lex(src).tokens.iter().map(|t| t.text(src)).collect()
    }

    #[test]
    fn numbers_and_words() {
        assert_eq!(
            texts("mov.f32 %f1, 0f3F800000; add %r<10>, 1.5e-3, 0x1FU, 2.0;"),
            [
                "mov.f32",
                "%f1",
                ",",
                "0f3F800000",
                ";",
                "add",
                "%r",
                "<",
                "10",
                ">",
                ",",
                "1.5e-3",
                ",",
                "0x1FU",
                ",",
                "2.0",
                ";"
            ]
        );
        assert_eq!(
            texts("cvt.rn.scaled::n2::ue8m0.bf16x2.s2f6x2 $L__BB0_1: x"),
            [
                "cvt.rn.scaled::n2::ue8m0.bf16x2.s2f6x2",
                "$L__BB0_1",
                ":",
                "x"
            ]
        );
        assert_eq!(texts(".version 9.5"), [".version", "9.5"]);
    }

    #[test]
    fn comments_strings_and_positions() {
        let src = "a /* x\ny */ b // c\n\"s\\\"t\" é";
        let out = lex(src);
        let t: Vec<&str> = out.tokens.iter().map(|t| t.text(src)).collect();
        assert_eq!(t, ["a", "b", "\"s\\\"t\"", "é"]);
        assert_eq!((out.tokens[1].span.line, out.tokens[1].span.col), (2, 6));
        assert!(out.tokens[1].line_start && !out.tokens[3].line_start);
        assert!(out.diagnostics.is_empty());
        assert_eq!(lex("/* open").diagnostics.len(), 1);
        assert_eq!(lex("\"open\n").diagnostics.len(), 1);
    }
}
