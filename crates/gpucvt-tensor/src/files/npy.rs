//! The `.npy` header (format versions 1.0, 2.0 and 3.0, as numpy's `format.py` documents):
//! the magic `\x93NUMPY`, a major and minor version byte, the header length (2 bytes
//! little-endian in 1.0, 4 bytes in 2.0/3.0), then a Python dict literal with the keys
//! `descr`, `fortran_order` and `shape`, padded with spaces and a final newline so that the
//! data starts on a 64-byte boundary.
//!
//! The header is parsed here rather than with an npy crate: the crates read elements one by
//! one through typed readers (or load whole arrays), and bring in a general Python-literal
//! parser for a dict of three keys; gpucvt streams the data bytes itself and only needs the
//! header.

use crate::dtype::{self, container_bytes, Packing};
use crate::error::{Error, Result};
use crate::files::shape_text;
use crate::files::single::Input;
use crate::Options;
use std::io::Read;

/// A parsed `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// The type string (`<f4`, `|u1`, …).
    pub descr: String,
    /// Column-major element order.
    pub fortran_order: bool,
    /// The shape (empty for a scalar).
    pub shape: Vec<u64>,
    /// Bytes before the data (magic, version, length and dict).
    pub header_len: u64,
}

impl NpyHeader {
    /// The number of elements (1 for a scalar).
    pub fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// The number of elements, checked against the data of a file `len` bytes long whose
    /// elements are `item` bytes each (a truncated or overlong file is [`Error::Corrupt`]).
    pub(crate) fn data_elements(&self, file: &str, item: u64, len: u64) -> Result<u64> {
        let n = self.elements().ok_or_else(|| {
            Error::Corrupt(format!("{file}: the shape {:?} overflows", self.shape))
        })?;
        let need = n.checked_mul(item);
        let have = len.saturating_sub(self.header_len);
        if need != Some(have) {
            return Err(Error::Corrupt(format!(
                "{file}: shape {} of {} needs {} bytes of data but the file has {have}{}",
                shape_text(&self.shape),
                self.descr,
                need.map_or("too many".into(), |b| b.to_string()),
                if need.is_some_and(|b| have < b) {
                    " (truncated file)"
                } else {
                    ""
                }
            )));
        }
        Ok(n)
    }
}

const MAGIC: &[u8] = b"\x93NUMPY";
const MAX_HEADER: usize = 1 << 20;
/// How deep a structured `descr` may nest (numpy's own dtypes nest a few levels); a bound so
/// that a hostile header gives an error instead of exhausting the stack.
const MAX_NESTING: usize = 64;

/// Reads and parses the header; `name` is used in messages.
pub fn read_header(r: &mut impl Read, name: &str) -> Result<NpyHeader> {
    let corrupt = |what: String| Error::Corrupt(format!("{name}: not a valid .npy file: {what}"));
    let mut pre = [0u8; 8];
    read_full(r, &mut pre).map_err(|e| corrupt(e.to_string()))?;
    if &pre[..6] != MAGIC {
        return Err(corrupt(
            "it does not start with the magic \\x93NUMPY".into(),
        ));
    }
    let (major, minor) = (pre[6], pre[7]);
    let (len, lead) = match major {
        1 => {
            let mut b = [0u8; 2];
            read_full(r, &mut b).map_err(|e| corrupt(e.to_string()))?;
            (u16::from_le_bytes(b) as usize, 10)
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            read_full(r, &mut b).map_err(|e| corrupt(e.to_string()))?;
            (u32::from_le_bytes(b) as usize, 12)
        }
        _ => {
            return Err(Error::Unsupported(format!(
            "{name}: .npy format version {major}.{minor} is not supported (1.0, 2.0 and 3.0 are)"
        )))
        }
    };
    if len > MAX_HEADER {
        return Err(corrupt(format!("header length {len} is implausibly large")));
    }
    let mut text = vec![0u8; len];
    read_full(r, &mut text).map_err(|e| corrupt(e.to_string()))?;
    let text = if major == 3 {
        String::from_utf8(text).map_err(|_| corrupt("the header is not UTF-8".into()))?
    } else {
        // Latin-1.
        text.iter().map(|&b| b as char).collect()
    };
    let (descr, fortran_order, shape) = parse_dict(&text).map_err(corrupt)?;
    Ok(NpyHeader {
        descr,
        fortran_order,
        shape,
        header_len: (lead + len) as u64,
    })
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::result::Result<(), String> {
    r.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            "the header is truncated".to_string()
        } else {
            e.to_string()
        }
    })
}

/// The dict's value for `descr`: a string, or something else (a structured dtype).
enum Descr {
    Str(String),
    Other,
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] as char).is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "expected '{}' at byte {} of the header dict",
                c as char, self.i
            ))
        }
    }
    fn string(&mut self) -> std::result::Result<String, String> {
        let q = self.peek().ok_or("unexpected end of the header dict")?;
        if q != b'\'' && q != b'"' {
            return Err(format!(
                "expected a string at byte {} of the header dict",
                self.i
            ));
        }
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != q {
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return Err("unterminated string in the header dict".into());
        }
        let out = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(out)
    }
    fn word(&mut self) -> String {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
    /// Skips one Python value (used for structured `descr` lists), nested at most
    /// [`MAX_NESTING`] deep.
    fn skip_value(&mut self, depth: usize) -> std::result::Result<(), String> {
        if depth > MAX_NESTING {
            return Err(format!(
                "values nested more than {MAX_NESTING} deep at byte {} of the header dict",
                self.i
            ));
        }
        match self.peek() {
            Some(b'\'') | Some(b'"') => self.string().map(|_| ()),
            Some(open @ (b'[' | b'(' | b'{')) => {
                let close = match open {
                    b'[' => b']',
                    b'(' => b')',
                    _ => b'}',
                };
                self.i += 1;
                loop {
                    if self.eat(close) {
                        return Ok(());
                    }
                    self.skip_value(depth + 1)?;
                    if self.eat(b':') {
                        self.skip_value(depth + 1)?;
                    }
                    if !self.eat(b',') {
                        return self.expect(close);
                    }
                }
            }
            Some(_) => {
                if self.word().is_empty() {
                    Err(format!(
                        "unexpected character at byte {} of the header dict",
                        self.i
                    ))
                } else {
                    Ok(())
                }
            }
            None => Err("unexpected end of the header dict".into()),
        }
    }
}

type Dict = (String, bool, Vec<u64>);

fn parse_dict(text: &str) -> std::result::Result<Dict, String> {
    let mut p = P {
        s: text.as_bytes(),
        i: 0,
    };
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        match key.as_str() {
            "descr" => {
                descr = Some(match p.peek() {
                    Some(b'\'') | Some(b'"') => Descr::Str(p.string()?),
                    _ => {
                        p.skip_value(0)?;
                        Descr::Other
                    }
                })
            }
            "fortran_order" => {
                fortran = Some(match p.word().as_str() {
                    "True" => true,
                    "False" => false,
                    w => return Err(format!("fortran_order must be True or False, not {w:?}")),
                })
            }
            "shape" => {
                p.expect(b'(')?;
                let mut dims = Vec::new();
                loop {
                    if p.eat(b')') {
                        break;
                    }
                    let w = p.word();
                    let w = w.strip_suffix('L').unwrap_or(&w);
                    dims.push(w.parse::<u64>().map_err(|_| {
                        format!("shape has a dimension {w:?} that is not a number")
                    })?);
                    if !p.eat(b',') {
                        p.expect(b')')?;
                        break;
                    }
                }
                shape = Some(dims);
            }
            other => return Err(format!("unknown key {other:?} in the header dict")),
        }
        if !p.eat(b',') {
            p.expect(b'}')?;
            break;
        }
    }
    let descr = match descr.ok_or("the header dict has no 'descr'")? {
        Descr::Str(s) => s,
        Descr::Other => "<structured>".to_string(),
    };
    Ok((
        descr,
        fortran.ok_or("the header dict has no 'fortran_order'")?,
        shape.ok_or("the header dict has no 'shape'")?,
    ))
}

/// The bytes of a header for `descr` and `shape` (version 1.0, or 2.0 when the dict is too
/// long for a 2-byte length), padded so that the data starts at a multiple of 64 bytes.
pub fn header_bytes(descr: &str, fortran_order: bool, shape: &[u64]) -> Vec<u8> {
    let dims = match shape.len() {
        1 => format!("{},", shape[0]),
        _ => shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    let order = if fortran_order { "True" } else { "False" };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': ({dims}), }}");
    let (lead, major) = if dict.len() + 11 < 65536 {
        (10, 1u8)
    } else {
        (12, 2u8)
    };
    let total = (lead + dict.len() + 1).div_ceil(64) * 64;
    while lead + dict.len() + 1 < total {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.push(major);
    out.push(0);
    if major == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

/// The tensor of a `.npy` input (`f` at its start, `len` bytes long): its header read and
/// checked against the file's length and the options (`--from` reinterprets the integer
/// container; block scaling needs C order).
pub(crate) fn read_input(f: &mut impl Read, file: &str, len: u64, opts: &Options) -> Result<Input> {
    let h = read_header(f, file)?;
    if h.descr == "<structured>" {
        return Err(Error::Unsupported(format!(
            "{file}: a structured dtype cannot be converted; numeric little-endian dtypes (<f8 <f4 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8) can"
        )));
    }
    let itemsize = dtype::npy_itemsize(&h.descr);
    let src = match opts.from {
        Some(fmt) => {
            let numeric = dtype::format_of_npy(&h.descr).is_some();
            if !numeric || itemsize != Some(container_bytes(&fmt)) {
                return Err(Error::Invalid(format!(
                    "{file}: dtype {} cannot hold {fmt} encodings; {fmt} needs a {}-byte little-endian integer container",
                    h.descr,
                    container_bytes(&fmt)
                )));
            }
            fmt
        }
        None => dtype::format_of_npy(&h.descr).ok_or_else(|| {
            Error::Unsupported(format!(
                "{file}: dtype {:?} cannot be converted; numeric little-endian dtypes (<f8 <f4 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8) can",
                h.descr
            ))
        })?,
    };
    let item = itemsize.unwrap_or(0) as u64;
    h.data_elements(file, item, len)?;
    if h.fortran_order && opts.block.is_some() {
        return Err(Error::Unsupported(format!(
            "{file}: block scaling needs C order (the blocks run along the last axis), this array is in Fortran order"
        )));
    }
    Ok(Input {
        src,
        dtype: h.descr.clone(),
        shape: h.shape,
        fortran: h.fortran_order,
        data_start: h.header_len,
        pack: Packing::Bytes(item as usize),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        for shape in [vec![], vec![5], vec![2, 3, 4]] {
            let h = header_bytes("<f4", false, &shape);
            assert_eq!(h.len() % 64, 0);
            let got = read_header(&mut &h[..], "x").unwrap();
            assert_eq!(got.shape, shape);
            assert_eq!(got.descr, "<f4");
            assert_eq!(got.header_len, h.len() as u64);
        }
    }

    #[test]
    fn structured_descr_is_reported() {
        let dict =
            "{'descr': [('a', '<f4'), ('b', '<i2')], 'fortran_order': False, 'shape': (3,), }";
        let (d, _, s) = parse_dict(dict).unwrap();
        assert_eq!(d, "<structured>");
        assert_eq!(s, vec![3]);
    }
}
