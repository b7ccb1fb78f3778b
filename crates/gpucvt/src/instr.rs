//! One conversion instruction of any dialect, ready to evaluate: what `gpucvt eval` and
//! `gpucvt eval --batch` work on.
//!
//! The text decides the dialect: PTX `cvt…`/`cvt.pack…` forms, and vISA moves in the compact
//! spelling `mov[.sat] DST <- SRC` (vISA type names, any case: `mov.sat hf <- f`).
//!
//! ```
//! use gpucvt::instr::{Instr, Options};
//! let i = Instr::parse("cvt.rn.satfinite.e4m3x2.f32", &Options::default()).unwrap();
//! assert_eq!(i.eval(&[0x3f80_0000, 0x4396_0000]).unwrap().bits, 0x3879);
//! let v = Instr::parse("mov.sat ub <- f", &Options::default()).unwrap();
//! assert_eq!(v.eval(&[300.0f32.to_bits() as u64]).unwrap().bits, 0xff);
//! ```

use crate::core::convert::{Conversion, Flags};
use crate::core::format::Format;
use crate::ptx::eval::{evaluate, evaluate_bits, operand_roles, role_bits, Role};
use crate::ptx::legality::{check_form, legal_somewhere, OperandShape};
use crate::ptx::target::{PtxVersion, Target};
use crate::ptx::{parse::parse_instruction, CvtForm};
use crate::visa::cr0::Cr0;
use crate::visa::mov::{mov_plan, Plan};
use crate::visa::types::VisaType;

/// What an instruction is evaluated for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// PTX: the target whose legality rules apply; `None` accepts every form that is legal
    /// on some target.
    pub target: Option<Target>,
    /// PTX: the `.version`; `None` is the newest version gpucvt knows.
    pub version: Option<PtxVersion>,
    /// vISA: the control register.
    pub cr0: Cr0,
}

/// A PTX conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxInstr {
    /// The form.
    pub form: CvtForm,
    /// Its source operands, in order.
    pub roles: Vec<Role>,
}

/// A vISA move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VisaInstr {
    /// Destination type.
    pub dst: VisaType,
    /// Source type.
    pub src: VisaType,
    /// `.sat`.
    pub sat: bool,
    /// How one element is converted.
    pub plan: Plan,
}

/// An instruction of some dialect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// PTX `cvt` / `cvt.pack`.
    Ptx(PtxInstr),
    /// vISA `mov`.
    Visa(VisaInstr),
}

/// One source operand an instruction takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperandSpec {
    /// Its name (`a`, `b`, `rbits`, `src`, …).
    pub name: &'static str,
    /// Its width in bits.
    pub bits: u32,
    /// The format of each of its lanes, if it holds numbers (not for `rbits`, scale factors,
    /// `c`).
    pub format: Option<Format>,
    /// How many lanes it packs (1 for scalars).
    pub lanes: u32,
}

/// One lane of a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    /// The lane's source bits.
    pub input: u64,
    /// The conversions that produced it, in order (one, or two for a vISA two-step lowering).
    pub conversions: Vec<Conversion>,
    /// The lane's result bits.
    pub bits: u64,
    /// Bit offset of the lane in the destination.
    pub shift: u32,
    /// Flags.
    pub flags: Flags,
}

/// The result of evaluating an instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// The destination value.
    pub bits: u64,
    /// Width of the destination in bits (a vISA packed source yields `lanes × element` bits:
    /// element 0 in the low bits).
    pub width: u32,
    /// The lanes, most significant first.
    pub lanes: Vec<Lane>,
}

fn tidy(s: &str) -> String {
    s.replace('\n', " ")
}

impl Instr {
    /// Reads an instruction without operands and checks that it is legal (PTX: on the
    /// target, or on some target without one).
    ///
    /// # Errors
    /// A one-line message naming the problem.
    pub fn parse(text: &str, opts: &Options) -> Result<Instr, String> {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("mov") {
            return parse_visa(t, opts).map(Instr::Visa);
        }
        if !lower.starts_with("cvt") {
            return Err(format!(
                "unknown instruction {:?}: expected a PTX cvt/cvt.pack form (cvt.rn.f16.f32) or a vISA move (mov.sat hf <- f)",
                t.split_whitespace().next().unwrap_or("")
            ));
        }
        let instr = parse_instruction(t).map_err(|d| {
            let msgs: Vec<String> = d
                .iter()
                .map(|d| format!("{} (column {})", tidy(&d.message), d.span.col))
                .collect();
            msgs.join("; ")
        })?;
        if instr.operands.is_some() {
            return Err("write the instruction without its operands (cvt.rn.f16.f32), then the operand values".into());
        }
        let form = instr.form;
        let shape = OperandShape::natural(&form)
            .ok_or_else(|| format!("{} is not a conversion form", form.spelling()))?;
        match opts.target {
            Some(target) => {
                let version = opts.version.unwrap_or(PtxVersion::LATEST);
                check_form(&form, &shape, target, version).map_err(|d| tidy(&d.message))?;
            }
            None => {
                if !legal_somewhere(&form) {
                    // Explain with the newest-target diagnosis.
                    let why = Target::all()
                        .filter_map(|t| check_form(&form, &shape, t, t.max_version()).err())
                        .map(|d| tidy(&d.message))
                        .next()
                        .unwrap_or_default();
                    return Err(format!(
                        "{} is not legal on any target: {why}",
                        form.spelling()
                    ));
                }
            }
        }
        Ok(Instr::Ptx(PtxInstr {
            roles: operand_roles(&form),
            form,
        }))
    }

    /// The canonical spelling.
    pub fn spelling(&self) -> String {
        match self {
            Instr::Ptx(p) => p.form.spelling(),
            Instr::Visa(v) => format!(
                "mov{} {} <- {}",
                if v.sat { ".sat" } else { "" },
                v.dst.name(),
                v.src.name()
            ),
        }
    }

    /// The source operands the instruction takes, in order.
    pub fn operands(&self) -> Vec<OperandSpec> {
        match self {
            Instr::Ptx(p) => p
                .roles
                .iter()
                .map(|&r| {
                    let numeric = matches!(r, Role::A | Role::B | Role::E | Role::F);
                    OperandSpec {
                        name: r.name(),
                        bits: role_bits(&p.form, r),
                        format: if numeric {
                            p.form.atype.lane_format()
                        } else {
                            None
                        },
                        lanes: if numeric { p.form.atype.lanes() } else { 1 },
                    }
                })
                .collect(),
            Instr::Visa(v) => vec![OperandSpec {
                name: "src",
                bits: v.src.size() * 8,
                format: Some(v.plan.source_format()),
                lanes: v.src.packed_elements().max(1),
            }],
        }
    }

    /// The width of the result in bits.
    pub fn result_bits(&self) -> u32 {
        match self {
            Instr::Ptx(p) => {
                if p.form.pack {
                    32
                } else {
                    p.form.dtype.bits()
                }
            }
            Instr::Visa(v) => v.dst.size() * 8 * v.src.packed_elements().max(1),
        }
    }

    /// Evaluates on source operand bit patterns (in the order of [`Instr::operands`]).
    ///
    /// # Errors
    /// Wrong operand count, or an operand wider than its type.
    pub fn eval(&self, ops: &[u64]) -> Result<Output, String> {
        match self {
            Instr::Ptx(p) => {
                let e = evaluate(&p.form, ops).map_err(|e| e.to_string())?;
                Ok(Output {
                    bits: e.bits,
                    width: e.width,
                    lanes: e
                        .lanes
                        .iter()
                        .map(|l| Lane {
                            input: l.input,
                            conversions: vec![l.conversion],
                            bits: l.outcome.bits,
                            shift: l.shift,
                            flags: l.outcome.flags,
                        })
                        .collect(),
                })
            }
            Instr::Visa(v) => {
                if ops.len() != 1 {
                    return Err(format!(
                        "{} takes 1 source operand, got {}",
                        self.spelling(),
                        ops.len()
                    ));
                }
                let bits = v.src.size() * 8;
                if bits < 64 && ops[0] >> bits != 0 {
                    return Err(format!(
                        "operand src = {:#x} does not fit in {bits} bits",
                        ops[0]
                    ));
                }
                let elements = crate::visa::types::unpack(v.src, ops[0]);
                let dbits = v.dst.size() * 8;
                let n = elements.len() as u32;
                let mut out = Output {
                    bits: 0,
                    width: dbits * n,
                    lanes: Vec::new(),
                };
                // Most significant (last) element first, like PTX lanes.
                for (i, &e) in elements.iter().enumerate().rev() {
                    let r = v.plan.run(e);
                    let shift = dbits * i as u32;
                    if shift < 64 {
                        out.bits |= r.bits << shift;
                    }
                    out.lanes.push(Lane {
                        input: e,
                        conversions: v.plan.steps.iter().map(|s| s.conversion).collect(),
                        bits: r.bits,
                        shift,
                        flags: r.flags,
                    });
                }
                Ok(out)
            }
        }
    }
}

impl Instr {
    /// The destination value and its width, as [`Instr::eval`] gives them (`bits`, or for a
    /// result wider than 64 bits the lanes side by side, element 0 lowest), without the
    /// per-lane record: PTX forms evaluate without heap allocation.
    ///
    /// # Errors
    /// As [`Instr::eval`].
    ///
    /// ```
    /// use gpucvt::instr::{Instr, Options};
    /// let i = Instr::parse("cvt.rn.f16.f32", &Options::default()).unwrap();
    /// assert_eq!(i.eval_bits(&[0x3f80_0000]).unwrap(), (0x3c00, 16));
    /// ```
    pub fn eval_bits(&self, ops: &[u64]) -> Result<(u128, u32), String> {
        match self {
            Instr::Ptx(p) => evaluate_bits(&p.form, ops)
                .map(|(bits, width)| (bits as u128, width))
                .map_err(|e| e.to_string()),
            Instr::Visa(_) => {
                let r = self.eval(ops)?;
                if r.width > 64 {
                    let mut wide: u128 = 0;
                    for l in &r.lanes {
                        if l.shift < 128 {
                            wide |= (l.bits as u128) << l.shift;
                        }
                    }
                    return Ok((wide, r.width));
                }
                Ok((r.bits as u128, r.width))
            }
        }
    }
}

fn parse_visa(text: &str, opts: &Options) -> Result<VisaInstr, String> {
    let spaced = text.replace("<-", " <- ");
    let toks: Vec<&str> = spaced.split_whitespace().collect();
    let usage =
        "a vISA move is written mov[.sat] DST <- SRC with vISA type names (mov.sat hf <- f)";
    let (op, dst, arrow, src) = match toks.as_slice() {
        [op, dst, arrow, src] => (*op, *dst, *arrow, *src),
        _ => return Err(usage.into()),
    };
    if arrow != "<-" {
        return Err(usage.into());
    }
    let sat = match op.to_ascii_lowercase().as_str() {
        "mov" => false,
        "mov.sat" => true,
        other => {
            return Err(format!(
                "unknown vISA opcode {other:?}: only mov and mov.sat convert ({usage})"
            ))
        }
    };
    let ty = |name: &str, role: &str| {
        VisaType::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = VisaType::ALL.iter().map(|t| t.name()).collect();
            format!(
                "unknown vISA type {name:?} for the {role}; accepted: {}",
                names.join(", ")
            )
        })
    };
    let (dst, src) = (ty(dst, "destination")?, ty(src, "source")?);
    let plan = mov_plan(dst, src, sat, opts.cr0).map_err(|e| tidy(&e.to_string()))?;
    Ok(VisaInstr {
        dst,
        src,
        sat,
        plan,
    })
}

/// Splits a batch line into the instruction text and its operand tokens: a vISA move's
/// instruction is its first four words (`mov.sat hf <- f`; the arrow may touch its
/// neighbours), a PTX form its first word.
///
/// ```
/// use gpucvt::instr::split_line;
/// assert_eq!(split_line("mov hf<-f 0x1"), ("mov hf <- f".to_string(), vec!["0x1".to_string()]));
/// ```
pub fn split_line(line: &str) -> (String, Vec<String>) {
    let t = line.trim();
    let visa = t.len() >= 3 && t.is_char_boundary(3) && t[..3].eq_ignore_ascii_case("mov");
    let spaced;
    let words: Vec<&str> = if visa {
        spaced = t.replace("<-", " <- ");
        spaced.split_whitespace().collect()
    } else {
        t.split_whitespace().collect()
    };
    let n = if visa {
        4.min(words.len())
    } else {
        1.min(words.len())
    };
    (
        words[..n].join(" "),
        words[n..].iter().map(|w| w.to_string()).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_lines() {
        let s = |a: &str, b: &[&str]| (a.to_string(), b.iter().map(|x| x.to_string()).collect());
        assert_eq!(
            split_line("cvt.rn.f16.f32 0x3f800000"),
            s("cvt.rn.f16.f32", &["0x3f800000"])
        );
        assert_eq!(
            split_line("mov.sat hf <- f 0x3f800000"),
            s("mov.sat hf <- f", &["0x3f800000"])
        );
        assert_eq!(split_line("mov hf <-f 0x1"), s("mov hf <- f", &["0x1"]));
        assert_eq!(split_line(""), s("", &[]));
    }

    #[test]
    fn visa_packed_sources_give_every_element() {
        let i = Instr::parse("mov f <- vf", &Options::default()).unwrap();
        let out = i.eval(&[0x3830]).unwrap();
        assert_eq!(out.width, 128);
        assert_eq!(out.lanes.len(), 4);
        assert_eq!(out.lanes[3].bits, 0x3f80_0000); // element 0 = 0x30 = 1.0
        assert_eq!(out.lanes[2].bits, 0x3fc0_0000); // element 1 = 0x38 = 1.5
    }

    #[test]
    fn illegal_forms_are_refused() {
        assert!(Instr::parse("cvt.f16.f32", &Options::default()).is_err());
        assert!(Instr::parse("cvt.rn.f16.f32 %r1, %r2;", &Options::default()).is_err());
        assert!(Instr::parse("add.f32", &Options::default()).is_err());
        assert!(Instr::parse("mov hf <- zz", &Options::default()).is_err());
    }
}
