//! The executor: runs a kernel's `mov`s over whole regions.
//!
//! Variables live in little-endian byte storage, one buffer per declared variable; an alias
//! is a view into its root's bytes, so a `uw` alias of a `bf` variable sees the same bits.
//! Each `mov` reads every enabled channel's source element first, converts it with the
//! [`Plan`](crate::visa::mov::Plan) for the declared types and the current cr0, then writes
//! the destination elements. Channels: the execution size starting at the mask's offset
//! (M1 = 0, M2 = 4, …); every channel is enabled in the dispatch mask, so a channel is off
//! only through the instruction predicate (`.any` / `.all` combine the predicate bits of the
//! execution size). A `mov` into `%cr0` changes the control register for the movs after it;
//! writes to `%null` are dropped. Indirect operands and other instructions are not executed
//! (the checker warns).
//!
//! ```
//! use gpucvt::visa::{asm::parse, exec::{execute, ExecOptions}};
//! let text = "\
//! .decl S v_type=G type=df num_elts=4
//! .decl D v_type=G type=b num_elts=4
//! mov (M1, 4) D(0,0)<1> S(0,0)<1;1,0>
//! mov.sat (M1, 2) D(0,2)<1> S(0,0)<1;1,0>
//! ";
//! let (k, _) = parse(text);
//! let init = [("S".to_string(), vec![300f64.to_bits(), (-2.5f64).to_bits(), 0, 0])];
//! let out = execute(&k, &init, &ExecOptions::default()).unwrap();
//! // 300.0 -> 0x2C through W; -2.5 -> -2; with .sat: 127 and -2.
//! assert_eq!(out.get("D"), Some(&[0x2c, 0xfe, 0x7f, 0xfe][..]));
//! ```

use super::asm::{DstOperand, Kernel, Mov, PredControl, SrcMod, SrcOperand, Stmt};
use super::check::{
    base_element, check, dst_element, src_elements, symbols, CheckOptions, VarInfo, CR0_NAME,
    NULL_NAME,
};
use super::cr0::Cr0;
use super::mov::{mov_plan_with, MovOptions};
use super::types::{unpack, VisaType};
use crate::diag::{Diagnostic, Severity, Span};
use gpucvt_core::convert::Flags;
use gpucvt_core::value::{Class, Value};
use std::collections::HashMap;

/// How to run a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecOptions {
    /// The control register at kernel entry ([`Cr0::KERNEL_ENTRY`] by default; OpenCL
    /// kernels run with [`Cr0::OPENCL`], which gives the same MOV results under the default
    /// choices).
    pub cr0: Cr0,
    /// Bytes per GRF (see [`CheckOptions::grf_bytes`]).
    pub grf_bytes: u32,
    /// The readings of the open questions.
    pub mov: MovOptions,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            cr0: Cr0::KERNEL_ENTRY,
            grf_bytes: 32,
            mov: MovOptions::default(),
        }
    }
}

/// A variable's final contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The name the movs wrote it through.
    pub name: String,
    /// Its declared type (BOOL for predicates).
    pub ty: VisaType,
    /// Every element's bits, element 0 first.
    pub elements: Vec<u64>,
}

/// What one executed mov did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovRecord {
    /// The instruction.
    pub span: Span,
    /// The plan, described ([`Plan::describe`](crate::visa::mov::Plan::describe)).
    pub plan: String,
    /// Channels written (enabled by the predicate).
    pub channels: u32,
    /// The union of the flags of every element.
    pub flags: Flags,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecResult {
    /// The variables the movs wrote, in order of first write, with their final contents.
    pub values: Vec<Written>,
    /// One record per executed mov.
    pub movs: Vec<MovRecord>,
    /// The checker's warnings (movs it marks unsupported were not executed).
    pub warnings: Vec<Diagnostic>,
    /// The control register at the end.
    pub cr0: Cr0,
}

impl ExecResult {
    /// The final elements of a written variable.
    pub fn get(&self, name: &str) -> Option<&[u64]> {
        self.values
            .iter()
            .find(|w| w.name == name)
            .map(|w| w.elements.as_slice())
    }
}

struct Machine {
    syms: HashMap<String, VarInfo>,
    bytes: HashMap<String, Vec<u8>>,
    preds: HashMap<String, Vec<bool>>,
    grf_bytes: u32,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Machine {
    fn read(&self, v: &VarInfo, ty: VisaType, idx: u64) -> Option<u64> {
        let size = ty.size() as u64;
        if idx >= v.num_elts {
            return None;
        }
        let buf = self.bytes.get(&v.root)?;
        let off = usize::try_from(v.byte_offset.checked_add(idx.checked_mul(size)?)?).ok()?;
        let chunk = buf.get(off..off.checked_add(size as usize)?)?;
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        Some(u64::from_le_bytes(b))
    }

    fn write(&mut self, v: &VarInfo, ty: VisaType, idx: u64, bits: u64) -> bool {
        let size = ty.size() as u64;
        if idx >= v.num_elts {
            return false;
        }
        let Some(buf) = self.bytes.get_mut(&v.root) else {
            return false;
        };
        let Some(off) = idx
            .checked_mul(size)
            .and_then(|x| x.checked_add(v.byte_offset))
            .and_then(|x| usize::try_from(x).ok())
        else {
            return false;
        };
        let Some(chunk) = off
            .checked_add(size as usize)
            .and_then(|end| buf.get_mut(off..end))
        else {
            return false;
        };
        chunk.copy_from_slice(&bits.to_le_bytes()[..size as usize]);
        true
    }
}

fn input_error(msg: String) -> Diagnostic {
    Diagnostic::error("visa.exec-input", msg, Span::default())
}

/// Runs the movs of a kernel from the given initial element values (bit patterns, element 0
/// first; predicates take 0 or 1 per element; missing variables and elements start at 0).
///
/// Returns the checker's errors (and input errors, rule `visa.exec-input`) instead of
/// running when there are any. Never panics.
pub fn execute(
    k: &Kernel,
    init: &[(String, Vec<u64>)],
    opts: &ExecOptions,
) -> Result<ExecResult, Vec<Diagnostic>> {
    let copts = CheckOptions {
        grf_bytes: opts.grf_bytes,
        mov: opts.mov,
    };
    let diags = check(k, &copts);
    let (errors, warnings): (Vec<_>, Vec<_>) = diags
        .into_iter()
        .partition(|d| d.severity == Severity::Error);
    if !errors.is_empty() {
        return Err(errors);
    }
    let syms = symbols(k);
    let mut m = Machine {
        bytes: HashMap::new(),
        preds: HashMap::new(),
        grf_bytes: opts.grf_bytes,
        syms,
    };
    for v in m.syms.values() {
        match v.kind {
            super::asm::VarKind::Predicate => {
                m.preds
                    .insert(v.name.clone(), vec![false; v.num_elts as usize]);
            }
            _ if v.root == v.name => {
                m.bytes
                    .insert(v.name.clone(), vec![0u8; v.bytes() as usize]);
            }
            _ => {}
        }
    }
    if let Some(cr0) = m.syms.get(CR0_NAME).cloned() {
        m.write(&cr0, VisaType::Ud, 0, opts.cr0.raw() as u64);
    }
    // Initial values.
    let mut errs = Vec::new();
    for (name, vals) in init {
        let Some(v) = m.syms.get(name).cloned() else {
            errs.push(input_error(format!(
                "initial value for `{name}`, which is not declared"
            )));
            continue;
        };
        if vals.len() as u64 > v.num_elts {
            errs.push(input_error(format!(
                "{} initial values for `{name}`, which has {} elements",
                vals.len(),
                v.num_elts
            )));
            continue;
        }
        match (v.kind, v.ty) {
            (super::asm::VarKind::Predicate, _) => {
                if let Some(p) = m.preds.get_mut(name) {
                    for (slot, &x) in p.iter_mut().zip(vals) {
                        if x > 1 {
                            errs.push(input_error(format!(
                                "predicate `{name}` elements are 0 or 1, not {x:#x}"
                            )));
                        }
                        *slot = x & 1 == 1;
                    }
                }
            }
            (super::asm::VarKind::General, Some(t)) => {
                let w = t.size() * 8;
                for (i, &x) in vals.iter().enumerate() {
                    if x & !mask(w) != 0 {
                        errs.push(input_error(format!(
                            "element {i} of `{name}` = {x:#x} does not fit the {w} bits of {t}"
                        )));
                    } else {
                        m.write(&v, t, i as u64, x);
                    }
                }
            }
            _ => errs.push(input_error(format!(
                "`{name}` is not a general or predicate variable"
            ))),
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let mut cr0 = current_cr0(&m, opts.cr0);
    let mut written: Vec<String> = Vec::new();
    let mut records = Vec::new();
    for s in &k.stmts {
        let Stmt::Mov(mv) = s else { continue };
        if let Some(rec) = run_mov(&mut m, mv, cr0, opts, &mut written) {
            records.push(rec);
            cr0 = current_cr0(&m, cr0);
        }
    }
    let values = written
        .into_iter()
        .filter_map(|name| {
            let v = m.syms.get(&name)?.clone();
            let ty = v.ty.unwrap_or(VisaType::Bool);
            let elements = (0..v.num_elts)
                .map(|i| m.read(&v, ty, i).unwrap_or(0))
                .collect();
            Some(Written { name, ty, elements })
        })
        .collect();
    Ok(ExecResult {
        values,
        movs: records,
        warnings,
        cr0,
    })
}

fn current_cr0(m: &Machine, fallback: Cr0) -> Cr0 {
    m.syms
        .get(CR0_NAME)
        .and_then(|v| m.read(v, VisaType::Ud, 0))
        .map_or(fallback, |x| Cr0::from_raw(x as u32))
}

fn apply_modifier(ty: VisaType, bits: u64, md: Option<SrcMod>) -> Value {
    let f = ty.element_format();
    let Some(md) = md else {
        return f.decode(bits);
    };
    if ty.is_float() {
        let sign = f.sign_bit().unwrap_or(0);
        let b = match md {
            SrcMod::Neg => bits ^ sign,
            SrcMod::Abs => bits & !sign,
            SrcMod::NegAbs => bits | sign,
            SrcMod::Not => bits,
        };
        return f.decode(b);
    }
    let v = f.decode(bits);
    let n: i128 = match v.class {
        Class::Finite(d) if d.exp >= 0 && d.exp < 64 => {
            let mag = (d.sig << d.exp) as i128;
            if v.negative {
                -mag
            } else {
                mag
            }
        }
        _ => 0,
    };
    let r = match md {
        SrcMod::Neg => -n,
        SrcMod::Abs => n.abs(),
        SrcMod::NegAbs => -n.abs(),
        SrcMod::Not => n,
    };
    Value::from_i128(r)
}

fn run_mov(
    m: &mut Machine,
    mv: &Mov,
    cr0: Cr0,
    opts: &ExecOptions,
    written: &mut Vec<String>,
) -> Option<MovRecord> {
    let n = mv.exec.size;
    let offset = mv.exec.offset as u64;
    // The destination.
    let (dvar, dty, dbase, dh) = match &mv.dst {
        DstOperand::Direct { var, hstride, .. } => {
            if var.name == NULL_NAME {
                (None, None, 0, *hstride)
            } else {
                let v = m.syms.get(&var.name)?.clone();
                let t = v.ty?;
                let base = base_element(var.row, var.col, t.size(), m.grf_bytes);
                (Some((var.name.clone(), v)), Some(t), base, *hstride)
            }
        }
        DstOperand::Indirect { .. } => return None,
    };
    // The source type, to make the plan; %null takes the source's type.
    let sty = match &mv.src {
        SrcOperand::Direct { var, .. } => m.syms.get(&var.name)?.ty?,
        SrcOperand::Imm(i) => i.ty,
        SrcOperand::Pred { .. } => VisaType::Bool,
        SrcOperand::Indirect { .. } => return None,
    };
    let dty = dty.unwrap_or(if sty.is_variable_type() {
        sty
    } else {
        VisaType::Ud
    });
    let plan = mov_plan_with(dty, sty, mv.sat, cr0, &opts.mov).ok()?;
    // Enabled channels.
    let enabled: Vec<bool> = match &mv.pred {
        None => vec![true; n as usize],
        Some(p) => {
            let bits = m.preds.get(&p.name)?;
            let bit = |c: u64| bits.get(c as usize).copied().unwrap_or(false);
            let range = offset..offset + n;
            let group = match p.control {
                PredControl::PerChannel => None,
                PredControl::Any => Some(range.clone().any(bit)),
                PredControl::All => Some(range.clone().all(bit)),
            };
            range
                .map(|c| group.unwrap_or_else(|| bit(c)) != p.negated)
                .collect()
        }
    };
    // Read every enabled channel's source.
    let mut inputs: Vec<Option<Value>> = Vec::with_capacity(n as usize);
    match &mv.src {
        SrcOperand::Direct {
            modifier,
            var,
            region,
            ..
        } => {
            let v = m.syms.get(&var.name)?.clone();
            let base = base_element(var.row, var.col, sty.size(), m.grf_bytes);
            let els = src_elements(base, region.vstride, region.width, region.hstride, n);
            for (i, &e) in els.iter().enumerate() {
                if !enabled[i] {
                    inputs.push(None);
                    continue;
                }
                let bits = m.read(&v, sty, e)?;
                inputs.push(Some(apply_modifier(sty, bits, modifier.map(|x| x.0))));
            }
        }
        SrcOperand::Imm(imm) => {
            let els = unpack(imm.ty, imm.bits);
            let f = plan.source_format();
            for (i, &on) in enabled.iter().enumerate() {
                inputs.push(on.then(|| f.decode(els[i % els.len()])));
            }
        }
        SrcOperand::Pred { name, .. } => {
            let bits = m.preds.get(name)?;
            let mut x = 0u64;
            for (j, &b) in bits.iter().enumerate().take(64) {
                x |= (b as u64) << j;
            }
            let f = plan.source_format();
            for &on in &enabled {
                inputs.push(on.then(|| f.decode(x)));
            }
        }
        SrcOperand::Indirect { .. } => return None,
    }
    // Convert and write.
    let mut flags = Flags::empty();
    let mut channels = 0;
    for (i, inp) in inputs.iter().enumerate() {
        let Some(v) = inp else { continue };
        let out = plan.run_value(v);
        flags |= out.flags;
        channels += 1;
        if let Some((_, var)) = &dvar {
            let idx = dst_element(dbase, dh, i as u64);
            if !m.write(var, dty, idx, out.bits) {
                return None;
            }
        }
    }
    if let Some((name, _)) = dvar {
        if !written.contains(&name) {
            written.push(name);
        }
    }
    Some(MovRecord {
        span: mv.span,
        plan: plan.describe(),
        channels,
        flags,
    })
}

/// Reads one element value given as text for a variable of type `ty` (what `gpucvt run
/// --set` does): `0`/`1`/`true`/`false` for predicates; raw bits `0x…`/`0b…` (without a point
/// or an exponent) of the element's width; otherwise a number — decimal or hexadecimal float
/// — rounded to nearest even for float types, exact and in range for integer types.
///
/// ```
/// use gpucvt::visa::{exec::parse_element, types::VisaType};
/// assert_eq!(parse_element(VisaType::Hf, "1.5"), Ok(0x3e00));
/// assert_eq!(parse_element(VisaType::B, "-2"), Ok(0xfe));
/// assert_eq!(parse_element(VisaType::F, "0x3f800000"), Ok(0x3f80_0000));
/// assert!(parse_element(VisaType::Ub, "256").is_err());
/// ```
///
/// # Errors
/// A message saying what was expected.
pub fn parse_element(ty: VisaType, text: &str) -> Result<u64, String> {
    use crate::text::{parse_bits_named, parse_number};
    use gpucvt_core::convert::{convert, Policy};
    use gpucvt_core::round::Rounding;
    let t = text.trim();
    if ty == VisaType::Bool {
        return match t.to_ascii_lowercase().as_str() {
            "0" | "false" => Ok(0),
            "1" | "true" => Ok(1),
            _ => Err(format!("a predicate element is 0 or 1, not {t:?}")),
        };
    }
    let f = ty.element_format();
    let lower = t.to_ascii_lowercase();
    if (lower.starts_with("0x") || lower.starts_with("0b"))
        && !lower.contains('.')
        && !lower.contains('p')
    {
        return parse_bits_named(t, f.width(), ty.name()).map_err(|e| e.to_string());
    }
    let parsed = parse_number(t).map_err(|e| e.to_string())?;
    let out = convert(&parsed.value, &f, Rounding::RN, &Policy::default());
    let changed = !parsed.exact
        || out.flags.contains(Flags::INEXACT)
        || out.flags.contains(Flags::OVERFLOW)
        || out.flags.contains(Flags::INVALID);
    if !ty.is_float() && changed {
        return Err(format!(
            "{t} is not a {} value (an integer of its range); or give raw bits as 0x…",
            ty.doc_name()
        ));
    }
    Ok(out.bits)
}

/// Reads a variable's initial elements, `[1.0,2.5,…]` or `1.0,2.5,…` (element 0 first), each
/// read by [`parse_element`] for the variable's declared type; the value for `name` in the
/// form [`execute`] takes.
///
/// ```
/// use gpucvt::visa::{asm::parse, exec::initial_value};
/// let (k, _) = parse(".decl V v_type=G type=hf num_elts=4\n");
/// assert_eq!(initial_value(&k, "V", "[1.0, -2]").unwrap().1, vec![0x3c00, 0xc000]);
/// assert!(initial_value(&k, "W", "1").is_err());
/// ```
///
/// # Errors
/// An undeclared variable, too many elements, or an element that does not parse.
pub fn initial_value(k: &Kernel, name: &str, text: &str) -> Result<(String, Vec<u64>), String> {
    let syms = symbols(k);
    let Some(v) = syms.get(name) else {
        let mut names: Vec<&str> = k.decls.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        return Err(format!(
            "{name} is not declared; declared: {}",
            names.join(", ")
        ));
    };
    let ty = match v.kind {
        super::asm::VarKind::Predicate => VisaType::Bool,
        _ => {
            v.ty.ok_or_else(|| format!("{name} has no type that can be set"))?
        }
    };
    let body = text.trim();
    let body = body
        .strip_prefix('[')
        .and_then(|b| b.strip_suffix(']'))
        .unwrap_or(body);
    let elems = body
        .split(',')
        .map(|e| parse_element(ty, e).map_err(|m| format!("{name}: {m}")))
        .collect::<Result<Vec<u64>, String>>()?;
    if elems.len() as u64 > v.num_elts {
        return Err(format!(
            "{} values for {name}, which has {} elements",
            elems.len(),
            v.num_elts
        ));
    }
    Ok((name.to_string(), elems))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::visa::asm::parse;

    fn run(text: &str, init: &[(&str, Vec<u64>)], cr0: u32) -> ExecResult {
        let (k, d) = parse(text);
        assert!(d.is_empty(), "{d:?}");
        let init: Vec<(String, Vec<u64>)> = init
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        let opts = ExecOptions {
            cr0: Cr0::from_raw(cr0),
            ..ExecOptions::default()
        };
        execute(&k, &init, &opts).unwrap()
    }

    #[test]
    fn regions_predicates_modifiers() {
        let text = "\
.decl S v_type=G type=w num_elts=16
.decl D v_type=G type=d num_elts=16
.decl P v_type=P num_elts=8
(!P) mov (M1, 8) D(0,0)<2> (-)S(0,1)<4;2,1>
";
        let s: Vec<u64> = (0..16).map(|i| i as u64).chain([]).collect();
        let mut s = s;
        s[1] = 0x8000; // -32768: (-) gives 32768 in D
        let out = run(text, &[("S", s), ("P", vec![0, 1, 0, 0, 0, 0, 0, 1])], 0);
        let d = out.get("D").unwrap();
        // Channel i reads S[1 + (i/2)*4 + (i%2)], writes D[2i]; channels 1 and 7 are off.
        assert_eq!(d[0], 32768);
        assert_eq!(d[2], 0); // disabled
        assert_eq!(d[4], (-5i32) as u32 as u64);
        assert_eq!(d[6], (-6i32) as u32 as u64);
        assert_eq!(d[12], (-13i32) as u32 as u64);
        assert_eq!(d[14], 0); // disabled
        assert_eq!(out.movs[0].channels, 6);
    }

    #[test]
    fn cr0_writes_change_rounding() {
        let text = "\
.decl S v_type=G type=f num_elts=1
.decl A v_type=G type=hf num_elts=1
.decl B v_type=G type=hf num_elts=1
mov (M1_NM, 1) A(0,0)<1> S(0,0)<0;1,0>
mov (M1_NM, 1) %cr0(0,0)<1> 0x4f0:ud
mov (M1_NM, 1) B(0,0)<1> S(0,0)<0;1,0>
";
        // 1 + 2^-10 + 2^-11 + 2^-20: RNE rounds up, RTZ truncates.
        let x = 0x3f80_0000u64 | (1 << 13) | (1 << 12) | (1 << 3);
        let out = run(text, &[("S", vec![x])], 0x4c0);
        assert_eq!(out.get("A"), Some(&[0x3c02][..]));
        assert_eq!(out.get("B"), Some(&[0x3c01][..]));
        assert_eq!(out.cr0.raw(), 0x4f0);
    }

    #[test]
    fn packed_immediates_and_aliases() {
        let text = "\
.decl F1 v_type=G type=f num_elts=8
.decl U v_type=G type=ud num_elts=8 alias=<F1, 0>
.decl W1 v_type=G type=w num_elts=8
mov (M1, 8) W1(0,0)<1> 0xfedc3210:v
mov (M1, 4) F1(0,0)<1> 0xb8803830:vf
";
        let out = run(text, &[], 0);
        assert_eq!(
            out.get("W1"),
            Some(&[0, 1, 2, 3, 0xfffc, 0xfffd, 0xfffe, 0xffff][..])
        );
        assert_eq!(
            out.get("F1").map(|f| f[..4].to_vec()),
            Some(vec![0x3f80_0000, 0x3fc0_0000, 0x8000_0000, 0xbfc0_0000])
        );
    }
}
