//! One conversion instruction of any dialect, ready to evaluate: what `gpucvt eval` and
//! `gpucvt eval --batch` work on.
//!
//! The text decides the dialect: PTX `cvt…`/`cvt.pack…` forms, vISA moves in the compact
//! spelling `mov[.sat] DST <- SRC` (vISA type names, any case: `mov.sat hf <- f`), and CUDA
//! Tile IR conversion ops in their assembly syntax (`ftof %x rounding<zero> : tile<f32> ->
//! tile<f16>`; the operand name, a `%r =` result and the `cuda_tile.` prefix are optional),
//! and AMD vector instructions as LLVM writes them (`v_cvt_pk_fp8_f32 v1, v2, v3
//! op_sel:[0,0,1]`, on [`Options::amd_target`]; the register source operands are the
//! operands of [`Instr::eval`], constants in the text are used as written, and the old value
//! of a partly written destination is [`Options::amd_old`]).
//!
//! A Tile IR op's one source operand is a whole tile: [`Instr::eval`] takes one bit pattern
//! per element (row-major; one for a 0-d tile), and the result has one lane per element.
//! Where the `spec` semantics leaves an element undefined, [`Instr::eval`] is an error whose
//! message starts with `undefined`; [`TileInstr::eval_elements`] gives the per-element
//! [`ElementResult`]s with their markers.
//!
//! ```
//! use gpucvt::instr::{Instr, Options};
//! let i = Instr::parse("cvt.rn.satfinite.e4m3x2.f32", &Options::default()).unwrap();
//! assert_eq!(i.eval(&[0x3f80_0000, 0x4396_0000]).unwrap().bits, 0x3879);
//! let v = Instr::parse("mov.sat ub <- f", &Options::default()).unwrap();
//! assert_eq!(v.eval(&[300.0f32.to_bits() as u64]).unwrap().bits, 0xff);
//! let t = Instr::parse("itof %x signed : tile<i32> -> tile<f8E5M2>", &Options::default()).unwrap();
//! assert_eq!(t.eval(&[4609]).unwrap().bits, 0x6c); // tileiras: through f16, two roundings
//! ```

use crate::amd::types::{Mode, Readings, Target as AmdTarget};
use crate::core::convert::{Conversion, Flags};
use crate::core::format::Format;
use crate::error::{tidy, Error};
use crate::ptx::check::{check_form, check_form_text, legal_somewhere, OperandShape};
use crate::ptx::eval::{operand_roles, role_bits, LaneResult, Planned, Role};
use crate::ptx::target::{PtxVersion, Target};
use crate::ptx::{parse::parse_instruction, CvtForm};
use crate::tile::check::verify_op;
use crate::tile::eval::{eval_op, lowering, ElementResult, Lowering, Semantics, DEFAULT_TARGET};
use crate::tile::parse::{parse_op, ConvOp};
use crate::tile::types::{Element, OpKind, Signedness, SpecVersion};
use crate::visa::cr0::Cr0;
use crate::visa::eval::{mov_plan, Plan};
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
    /// Tile IR: the semantics (default `tileiras`, the PTX NVIDIA's compiler emits, for
    /// `target` or [`DEFAULT_TARGET`]).
    pub semantics: Semantics,
    /// Tile IR: the specification version the op is verified at; `None` is the newest.
    pub tile_version: Option<SpecVersion>,
    /// AMD: the target (required: the same opcode means FNUZ fp8 on gfx942 and OCP fp8 on
    /// the others).
    pub amd_target: Option<AmdTarget>,
    /// AMD: the MODE register (only FP16_OVFL matters).
    pub amd_mode: Mode,
    /// AMD: the named readings where AMD's texts disagree.
    pub amd_readings: Readings,
    /// AMD: the destination register's old value, which a partial write keeps.
    pub amd_old: u64,
}

/// An AMD instruction, checked on its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdInstr {
    /// The text as written (trimmed).
    pub text: String,
    /// The checked form.
    pub form: crate::amd::check::Form,
    /// The state it is evaluated under.
    pub state: crate::amd::eval::State,
    /// The checker's warnings (a scalar source where the ISA says VGPR only).
    pub warnings: Vec<crate::diag::Diagnostic>,
}

/// A PTX conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxInstr {
    /// The form.
    pub form: CvtForm,
    /// Its source operands, in order.
    pub roles: Vec<Role>,
    /// Its evaluation, planned once.
    pub plan: Planned,
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

/// A CUDA Tile IR conversion op, verified, with the semantics it is evaluated under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileInstr {
    /// The op as written.
    pub op: ConvOp,
    /// The semantics.
    pub semantics: Semantics,
    /// The PTX target of the `tileiras` lowering.
    pub target: Target,
    /// The `tileiras` lowering of one element (`None` under `spec`).
    pub lowering: Option<Lowering>,
}

/// An instruction of some dialect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// PTX `cvt` / `cvt.pack`.
    Ptx(PtxInstr),
    /// vISA `mov`.
    Visa(VisaInstr),
    /// CUDA Tile IR conversion op (boxed: the op carries its spans and types).
    Tile(Box<TileInstr>),
    /// AMD vector instruction.
    Amd(Box<AmdInstr>),
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

impl Output {
    /// The destination value as `0x` and hexadecimal digits, zero-padded to the width, for
    /// any width (a vISA move of a packed immediate into 64-bit elements gives 512 bits):
    /// the lanes side by side, each at its shift.
    ///
    /// ```
    /// use gpucvt::instr::{Instr, Options};
    /// let i = Instr::parse("mov df <- vf", &Options::default()).unwrap();
    /// let hex = i.eval(&[0x3830_3030]).unwrap().to_hex(); // 1.0, 1.0, 1.0, 1.5
    /// assert_eq!(hex.len(), 2 + 64);
    /// assert!(hex.starts_with("0x3ff8000000000000"));
    /// ```
    pub fn to_hex(&self) -> String {
        let mut words = vec![0u64; self.width.div_ceil(64) as usize];
        for l in &self.lanes {
            let (w, b) = ((l.shift / 64) as usize, l.shift % 64);
            if let Some(x) = words.get_mut(w) {
                *x |= l.bits << b;
            }
            if b > 0 {
                if let Some(x) = words.get_mut(w + 1) {
                    *x |= l.bits >> (64 - b);
                }
            }
        }
        let digits = self.width.div_ceil(4).max(1) as usize;
        let mut s = String::with_capacity(2 + digits);
        s.push_str("0x");
        for d in (0..digits).rev() {
            let nibble = words.get(d / 16).map_or(0, |w| (w >> (4 * (d % 16))) & 0xf);
            s.push(char::from_digit(nibble as u32, 16).unwrap_or('0'));
        }
        s
    }
}

/// At most this many diagnostics are reported for one instruction text.
const MAX_MESSAGES: usize = 3;

/// The reader's or checker's diagnostics of an instruction text as an [`Error::Invalid`].
fn invalid(diagnostics: Vec<crate::diag::Diagnostic>) -> Error {
    Error::Invalid {
        message: diagnostics_text(&diagnostics),
        diagnostics,
    }
}

/// Diagnostics of one instruction text as one line: `message (column N)`, joined by `; `,
/// at most [`MAX_MESSAGES`] of them, each cut to [`MESSAGE_LIMIT`] characters.
fn diagnostics_text(d: &[crate::diag::Diagnostic]) -> String {
    let mut msgs: Vec<String> = d
        .iter()
        .take(MAX_MESSAGES)
        .map(|d| {
            format!(
                "{} (column {})",
                shorten_to(&tidy(&d.message), MESSAGE_LIMIT),
                d.span.col
            )
        })
        .collect();
    if d.len() > MAX_MESSAGES {
        msgs.push(format!("and {} more", d.len() - MAX_MESSAGES));
    }
    msgs.join("; ")
}

/// The longest piece of input quoted in a message; longer ones are cut with `…`.
pub const ECHO_LIMIT: usize = 200;

/// The longest single diagnostic message kept (it may quote input).
const MESSAGE_LIMIT: usize = 300;

/// `text` cut to [`ECHO_LIMIT`] characters, with `…` when it was longer.
pub fn shorten(text: &str) -> String {
    shorten_to(text, ECHO_LIMIT)
}

/// `text` cut to `limit` characters, with `…` when it was longer.
pub fn shorten_to(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// `text` without the guard predicate of a PTX statement copied from a file (`@%p`,
/// `@!%p`, then blanks), or `text` itself when it has none. The guard only decides whether
/// the statement runs; evaluating it means computing the conversion as if it does.
///
/// # Errors
/// A one-line message when the `@` is not followed by a register name.
pub(crate) fn strip_guard(text: &str) -> Result<&str, Error> {
    let Some(rest) = text.strip_prefix('@') else {
        return Ok(text);
    };
    let name = rest.strip_prefix('!').unwrap_or(rest);
    let end = name
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '%' | '_' | '$')))
        .unwrap_or(name.len());
    let (reg, after) = name.split_at(end);
    let ident = reg.strip_prefix('%').unwrap_or(reg);
    let starts_well = ident
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '$'));
    if !starts_well || ident.contains('%') || !after.starts_with(char::is_whitespace) {
        return Err(Error::Syntax {
            message: format!(
                "malformed guard {:?}: expected @%p or @!%p (a predicate register), then the instruction",
                shorten(text.split_whitespace().next().unwrap_or(text))
            ),
        });
    }
    Ok(after.trim_start())
}

impl Instr {
    /// Reads an instruction without operands (or a whole PTX statement, whose operand list
    /// is checked against the form and otherwise ignored; a guard `@%p` is ignored too) and
    /// checks that it is legal (PTX:
    /// on the target, or on some target without one), with the diagnostics `gpucvt check`
    /// gives.
    ///
    /// # Errors
    /// [`Error::UnknownInstruction`], [`Error::Syntax`], [`Error::Invalid`] (the checker's
    /// diagnostics), [`Error::Illegal`] (not on the target), [`Error::Visa`] or
    /// [`Error::Tile`] (a pair or op with no semantics there); each displays as one line.
    pub fn parse(text: &str, opts: &Options) -> Result<Instr, Error> {
        let t = strip_guard(text.trim())?;
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("mov") {
            return parse_visa(t, opts).map(Instr::Visa);
        }
        if is_tile_text(t) {
            return parse_tile(t, opts).map(|t| Instr::Tile(Box::new(t)));
        }
        if crate::amd::is_amd_text(t) {
            return parse_amd(t, opts).map(|a| Instr::Amd(Box::new(a)));
        }
        if !lower.starts_with("cvt") {
            return Err(Error::UnknownInstruction {
                text: shorten(t.split_whitespace().next().unwrap_or("")),
            });
        }
        let instr = parse_instruction(t).map_err(invalid)?;
        // The target-independent rules, with the messages `gpucvt check` gives. A whole
        // statement (`cvt.rn.f16.f32 %h1, %f1;`) is accepted: its operand list must have the
        // form's shape, and the register names are otherwise ignored.
        check_form_text(&instr).map_err(|d| invalid(vec![d]))?;
        let form = instr.form;
        let shape = OperandShape::natural(&form).ok_or_else(|| Error::Syntax {
            message: format!("{} is not a conversion form", form.spelling()),
        })?;
        match opts.target {
            Some(target) => {
                let version = opts.version.unwrap_or(PtxVersion::LATEST);
                check_form(&form, &shape, target, version).map_err(|d| Error::Illegal {
                    message: tidy(&d.message),
                    form: form.spelling(),
                    target: Some(target),
                    diagnostic: Box::new(d),
                })?;
            }
            None => {
                if !legal_somewhere(&form) {
                    // Explain with the newest-target diagnosis.
                    let d = Target::all()
                        .filter_map(|t| check_form(&form, &shape, t, t.max_version()).err())
                        .next()
                        .unwrap_or_else(|| {
                            crate::diag::Diagnostic::error(
                                "ptx.illegal",
                                "",
                                crate::diag::Span::default(),
                            )
                        });
                    return Err(Error::Illegal {
                        message: format!(
                            "{} is not legal on any target: {}",
                            form.spelling(),
                            tidy(&d.message)
                        ),
                        form: form.spelling(),
                        target: None,
                        diagnostic: Box::new(d),
                    });
                }
            }
        }
        Ok(Instr::Ptx(PtxInstr {
            roles: operand_roles(&form),
            plan: Planned::new(&form),
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
            Instr::Tile(t) => t.op.to_text(),
            Instr::Amd(a) => a.text.clone(),
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
            Instr::Tile(t) => {
                let n = t.elements();
                vec![OperandSpec {
                    name: "x",
                    bits: (n.saturating_mul(t.op.src.value.elem.bits() as u64)).min(u32::MAX as u64)
                        as u32,
                    format: t.source_format(),
                    lanes: n.min(u32::MAX as u64) as u32,
                }]
            }
            Instr::Amd(a) => {
                let op = a.form.opcode;
                let numeric = op.source_format(a.form.target);
                a.form
                    .sources
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.kind.is_register())
                    .map(|(i, _)| {
                        // The seed of SR and the LFSR state are words, not numbers.
                        let word = matches!(op.shape(), crate::amd::types::Shape::Prng)
                            || (i == 1
                                && matches!(op.shape(), crate::amd::types::Shape::Stochastic8(_)));
                        let lanes = match op.shape() {
                            crate::amd::types::Shape::Widen8(_) => 4,
                            crate::amd::types::Shape::WidenPair8(_) => 4,
                            _ => 1,
                        };
                        OperandSpec {
                            name: ["src0", "src1"][i],
                            bits: 32,
                            format: if word { None } else { numeric },
                            lanes: if word { 1 } else { lanes },
                        }
                    })
                    .collect()
            }
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
            Instr::Tile(t) => (t
                .elements()
                .saturating_mul(t.op.dst.value.elem.bits() as u64))
            .min(u32::MAX as u64) as u32,
            Instr::Amd(a) => a.form.opcode.destination_bits(),
        }
    }

    /// Evaluates on source operand bit patterns (in the order of [`Instr::operands`]; for a
    /// Tile IR op, one bit pattern per element of its tile, row-major).
    ///
    /// # Errors
    /// Wrong operand count, or an operand wider than its type; for a Tile IR op, an element
    /// the `spec` semantics leaves undefined (the message starts with `undefined`), or an op
    /// `tileiras` does not compile for the target.
    pub fn eval(&self, ops: &[u64]) -> Result<Output, Error> {
        match self {
            Instr::Tile(t) => t.eval_output(ops),
            Instr::Amd(a) => crate::amd::eval::evaluate(&a.form, ops, &a.state),
            Instr::Ptx(p) => {
                let mut lanes = Vec::with_capacity(4);
                let (bits, width) = p.plan.evaluate_each(ops, |l: &LaneResult| {
                    lanes.push(Lane {
                        input: l.input,
                        conversions: vec![l.conversion],
                        bits: l.outcome.bits,
                        shift: l.shift,
                        flags: l.outcome.flags,
                    })
                })?;
                Ok(Output { bits, width, lanes })
            }
            Instr::Visa(v) => {
                let conversions: Vec<Conversion> =
                    v.plan.steps.iter().map(|s| s.conversion).collect();
                let mut out = Output {
                    bits: 0,
                    width: 0,
                    lanes: Vec::new(),
                };
                let (bits, width) = self.visa_each(v, ops, |e| {
                    out.lanes.push(Lane {
                        input: e.input,
                        conversions: conversions.clone(),
                        bits: e.bits,
                        shift: e.shift,
                        flags: e.flags,
                    })
                })?;
                out.bits = bits as u64;
                out.width = width;
                Ok(out)
            }
        }
    }

    /// A vISA move on its one source operand, each element shown to `visit` (the last,
    /// most significant, first), without heap allocation: the low 128 bits of the result
    /// and its width.
    fn visa_each(
        &self,
        v: &VisaInstr,
        ops: &[u64],
        mut visit: impl FnMut(&ElementOutcome),
    ) -> Result<(u128, u32), Error> {
        if ops.len() != 1 {
            return Err(Error::Operand {
                message: format!(
                    "{} takes 1 source operand, got {}",
                    self.spelling(),
                    ops.len()
                ),
            });
        }
        let bits = v.src.size() * 8;
        if bits < 64 && ops[0] >> bits != 0 {
            return Err(Error::Operand {
                message: format!("operand src = {:#x} does not fit in {bits} bits", ops[0]),
            });
        }
        let dbits = v.dst.size() * 8;
        let (src, dst) = (v.plan.source_format(), v.plan.destination_format());
        let mut wide = 0u128;
        let mut n = 0u32;
        for (i, e) in crate::visa::types::elements(v.src, ops[0])
            .enumerate()
            .rev()
        {
            let r = v.plan.eval(e);
            let shift = dbits * i as u32;
            if shift < 128 {
                wide |= (r.bits as u128) << shift;
            }
            n = n.max(i as u32 + 1);
            visit(&ElementOutcome {
                src: Some(src),
                dst: Some(dst),
                input: e,
                bits: r.bits,
                shift,
                flags: r.flags,
            });
        }
        Ok((wide, dbits * n))
    }

    /// [`Instr::eval_bits`] that shows each element of the result to `visit` as it is
    /// computed, most significant first, with its flags: the low 128 bits of the
    /// destination and its width. A result wider than 128 bits (a vISA move of a packed
    /// immediate into 64-bit elements, a Tile IR tile of many elements) is the elements side
    /// by side, each at its shift. PTX forms and vISA moves evaluate without heap
    /// allocation; a Tile IR op evaluates its tile as [`Instr::eval`] does (and reports no
    /// flags).
    ///
    /// # Errors
    /// As [`Instr::eval`].
    ///
    /// ```
    /// use gpucvt::core::Flags;
    /// use gpucvt::instr::{Instr, Options};
    /// let i = Instr::parse("mov.sat ub <- f", &Options::default()).unwrap();
    /// let mut flags = Flags::empty();
    /// assert_eq!(i.eval_each(&[0x4396_0000], |e| flags |= e.flags).unwrap(), (0xff, 8));
    /// assert!(flags.contains(Flags::SATURATED));
    /// ```
    pub fn eval_each(
        &self,
        ops: &[u64],
        mut visit: impl FnMut(&ElementOutcome),
    ) -> Result<(u128, u32), Error> {
        match self {
            Instr::Ptx(p) => {
                let (bits, width) = p.plan.evaluate_each(ops, |l| {
                    visit(&ElementOutcome {
                        src: Some(l.conversion.src),
                        dst: Some(l.conversion.dst),
                        input: l.input,
                        bits: l.outcome.bits,
                        shift: l.shift,
                        flags: l.outcome.flags,
                    })
                })?;
                Ok((bits as u128, width))
            }
            Instr::Visa(v) => self.visa_each(v, ops, visit),
            Instr::Amd(_) => {
                let r = self.eval(ops)?;
                let mut wide = 0u128;
                for l in &r.lanes {
                    if l.shift < 128 {
                        wide |= (l.bits as u128) << l.shift;
                    }
                    visit(&ElementOutcome {
                        src: l.conversions.first().map(|c| c.src),
                        dst: l.conversions.last().map(|c| c.dst),
                        input: l.input,
                        bits: l.bits,
                        shift: l.shift,
                        flags: l.flags,
                    });
                }
                Ok((wide, r.width))
            }
            Instr::Tile(t) => {
                let r = self.eval(ops)?;
                let (src, dst) = (t.source_format(), t.result_format());
                let mut wide = 0u128;
                for l in &r.lanes {
                    if l.shift < 128 {
                        wide |= (l.bits as u128) << l.shift;
                    }
                    visit(&ElementOutcome {
                        src,
                        dst,
                        input: l.input,
                        bits: l.bits,
                        shift: l.shift,
                        flags: l.flags,
                    });
                }
                Ok((wide, r.width))
            }
        }
    }
}

/// One element of a result, as [`Instr::eval_each`] shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementOutcome {
    /// The format of the element's source bits (`None` for a Tile IR pointer).
    pub src: Option<Format>,
    /// The format of the result element (`None` for a Tile IR pointer).
    pub dst: Option<Format>,
    /// The element's source bits.
    pub input: u64,
    /// The element's result bits.
    pub bits: u64,
    /// Bit offset of the element in the destination.
    pub shift: u32,
    /// Flags (none for Tile IR ops).
    pub flags: Flags,
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
    pub fn eval_bits(&self, ops: &[u64]) -> Result<(u128, u32), Error> {
        match self {
            Instr::Ptx(p) => Ok(p
                .plan
                .evaluate_each(ops, |_| {})
                .map(|(bits, width)| (bits as u128, width))?),
            Instr::Visa(_) | Instr::Tile(_) | Instr::Amd(_) => {
                let (bits, width) = self.eval_each(ops, |_| {})?;
                if width > 128 {
                    return Err(Error::ResultTooWide { bits: width });
                }
                Ok((bits, width))
            }
        }
    }
}

/// The nine Tile IR conversion op names.
const TILE_OPS: [&str; 9] = [
    "bitcast",
    "exti",
    "trunci",
    "ftof",
    "ftoi",
    "itof",
    "int_to_ptr",
    "ptr_to_int",
    "ptr_to_ptr",
];

/// Whether `text` is written as a Tile IR conversion op: its first word (after an optional
/// `%r =` and `cuda_tile.` prefix) is one of the nine op names.
///
/// ```
/// use gpucvt::instr::is_tile_text;
/// assert!(is_tile_text("cuda_tile.ftof %x : tile<f32> -> tile<f16>"));
/// assert!(is_tile_text("%r = itof %x signed : tile<i32> -> tile<f32>"));
/// assert!(!is_tile_text("cvt.rn.f16.f32"));
/// ```
pub fn is_tile_text(text: &str) -> bool {
    let mut t = text.trim_start();
    if t.starts_with('%') {
        match t.find('=') {
            Some(i) => t = t[i + 1..].trim_start(),
            None => return false,
        }
    }
    let t = t.strip_prefix("cuda_tile.").unwrap_or(t);
    let word = t
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    TILE_OPS.contains(&word)
}

/// Splits a Tile IR batch line after its result type (`… -> tile<…>`): the op text and the
/// rest (the operand patterns). Without a complete result type, the whole line is the op.
fn split_tile(line: &str) -> (&str, &str) {
    let t = line.trim();
    let Some(arrow) = t.find("->") else {
        return (t, "");
    };
    let after = &t[arrow + 2..];
    let lead = after.len() - after.trim_start().len();
    let mut i = arrow + 2 + lead;
    if t[i..].starts_with("!cuda_tile.") {
        i += "!cuda_tile.".len();
    }
    if !t[i..].starts_with("tile<") {
        return (t, "");
    }
    let mut depth = 0usize;
    for (k, c) in t[i..].char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let end = i + k + 1;
                    return (&t[..end], &t[end..]);
                }
            }
            _ => {}
        }
    }
    (t, "")
}

/// Splits the operand text of a Tile IR line into its element words: whitespace and commas
/// separate them, brackets (`[0x1, 0x2]`, nested for 2-d tiles) are ignored.
pub fn tile_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']'))
        .filter(|w| !w.is_empty())
}

fn parse_tile(text: &str, opts: &Options) -> Result<TileInstr, Error> {
    let op = parse_op(text).map_err(invalid)?;
    let version = opts.tile_version.unwrap_or(SpecVersion::LATEST);
    let diags = verify_op(&op, version);
    if let Some(d) = diags.first() {
        return Err(Error::Invalid {
            message: format!(
                "{} (Tile IR {}, column {})",
                tidy(&d.message),
                version.name(),
                d.span.col
            ),
            diagnostics: diags,
        });
    }
    if version != SpecVersion::LATEST {
        let diags = verify_op(&op, SpecVersion::LATEST);
        if let Some(d) = diags.first() {
            return Err(Error::Invalid {
                message: format!(
                    "{} (evaluation follows the {} text)",
                    tidy(&d.message),
                    SpecVersion::LATEST.name()
                ),
                diagnostics: diags,
            });
        }
    }
    let target = opts.target.unwrap_or(DEFAULT_TARGET);
    let lowering = match opts.semantics {
        Semantics::Spec => None,
        Semantics::Tileiras => Some(lowering(&op, target)?),
    };
    Ok(TileInstr {
        op,
        semantics: opts.semantics,
        target,
        lowering,
    })
}

impl TileInstr {
    /// The number of elements of the source (and result) tile.
    pub fn elements(&self) -> u64 {
        self.op.src.value.num_elements()
    }

    fn format_of(e: Element, signedness: Option<Signedness>) -> Option<Format> {
        e.num().map(|t| t.format(signedness))
    }

    /// The core format of a source element (`None` for pointers): integers are signed when
    /// the op reads them as signed (`itof signed`, `exti signed`), raw (unsigned) otherwise.
    pub fn source_format(&self) -> Option<Format> {
        let sg = match self.op.kind {
            OpKind::ItoF | OpKind::ExtI => self.op.signedness,
            _ => None,
        };
        Self::format_of(self.op.src.value.elem, sg)
    }

    /// The core format of a result element (`None` for pointers): signed for `ftoi signed`
    /// and `exti signed`.
    pub fn result_format(&self) -> Option<Format> {
        let sg = match self.op.kind {
            OpKind::FtoI | OpKind::ExtI => self.op.signedness,
            _ => None,
        };
        Self::format_of(self.op.dst.value.elem, sg)
    }

    /// Evaluates the op on the elements of its source tile (one bit pattern each, row-major)
    /// under the instruction's semantics.
    ///
    /// # Errors
    /// A wrong number of elements, an element wider than the element type.
    pub fn eval_elements(&self, elements: &[u64]) -> Result<Vec<ElementResult>, Error> {
        let n = self.elements();
        if elements.len() as u64 != n {
            return Err(Error::Operand {
                message: format!(
                    "{} takes a tile of {n} element(s) ({}), got {}",
                    self.op.kind.name(),
                    self.op.src.value,
                    elements.len()
                ),
            });
        }
        self.eval_with(self.semantics, elements)
    }

    /// Evaluates any number of elements under `semantics` (the instruction's target).
    ///
    /// # Errors
    /// An element wider than the element type, or an op `tileiras` does not compile.
    pub fn eval_with(
        &self,
        semantics: Semantics,
        elements: &[u64],
    ) -> Result<Vec<ElementResult>, Error> {
        let bits = self.op.src.value.elem.bits();
        if let (Semantics::Tileiras, Some(low)) = (semantics, &self.lowering) {
            let out_bits = self.op.dst.value.elem.bits();
            return elements
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    if bits < 64 && x >> bits != 0 {
                        return Err(Error::Operand {
                            message: format!(
                                "element {i} = {x:#x} does not fit in the {bits} bits of the source element type"
                            ),
                        });
                    }
                    Ok(low.apply(x).map(|b| ElementResult::Bits(b & mask(out_bits)))?)
                })
                .collect();
        }
        Ok(eval_op(&self.op, semantics, self.target, elements)?)
    }

    fn eval_output(&self, ops: &[u64]) -> Result<Output, Error> {
        let results = self.eval_elements(ops)?;
        if let Some(message) = undefined_message(&results, self.op.dst.value.elem.bits()) {
            return Err(Error::Undefined { message });
        }
        let w = self.op.dst.value.elem.bits();
        let nominal = Conversion::new(
            self.source_format().unwrap_or(crate::core::format::U64),
            self.result_format().unwrap_or(crate::core::format::U64),
            self.op
                .rounding_mode()
                .and_then(|m| m.rounding())
                .unwrap_or(crate::core::Rounding::RN),
            crate::core::convert::Policy::default(),
        );
        let mut out = Output {
            bits: 0,
            width: (results.len() as u64 * w as u64).min(u32::MAX as u64) as u32,
            lanes: Vec::with_capacity(results.len()),
        };
        for (i, (r, &x)) in results.iter().zip(ops).enumerate().rev() {
            let b = r.bits().unwrap_or(0);
            let shift = (i as u64 * w as u64).min(u32::MAX as u64) as u32;
            if shift < 64 {
                out.bits |= b << shift;
            }
            out.lanes.push(Lane {
                input: x,
                conversions: vec![nominal],
                bits: b,
                shift,
                flags: Flags::default(),
            });
        }
        Ok(out)
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `0x…` padded to `bits`.
fn hex(b: u64, bits: u32) -> String {
    let digits = bits.div_ceil(4).max(1) as usize;
    format!("0x{b:0digits$x}")
}

/// The message of a result with undefined elements (`None` when every element is defined):
/// `undefined (spec semantics): element 1: ftoi: NaN input`, and for tiles of several
/// elements every result, `undefined` in place of the undefined ones.
pub fn undefined_message(results: &[ElementResult], bits: u32) -> Option<String> {
    let (i, why) = results.iter().enumerate().find_map(|(i, r)| match r {
        ElementResult::Undefined(why) => Some((i, *why)),
        ElementResult::Bits(_) => None,
    })?;
    let mut msg = format!("undefined (spec semantics): element {i}: {why}");
    if results.len() > 1 {
        let all: Vec<String> = results
            .iter()
            .map(|r| match r {
                ElementResult::Bits(b) => hex(*b, bits),
                ElementResult::Undefined(_) => "undefined".to_string(),
            })
            .collect();
        msg.push_str(&format!("; results: {}", all.join(" ")));
    }
    Some(msg)
}

/// Evaluates one Tile IR batch line (`<op> <0x element>...`) with an instruction cache: the
/// result elements, each `0x…` padded to the element width, separated by single spaces.
pub(crate) fn tile_batch_line<F>(line: &str, lookup: F) -> Result<String, String>
where
    F: FnOnce(&str) -> Result<Instr, String>,
{
    use crate::batch::{parse_word, WordError};
    let (text, rest) = split_tile(line);
    let mut elements = Vec::new();
    let mut literals = Vec::new();
    for (i, w) in tile_words(rest).enumerate() {
        match parse_word(w) {
            Ok((v, lit)) => {
                elements.push(v);
                if let Some(f) = lit {
                    literals.push((i, f));
                }
            }
            Err(WordError::NotHex(w)) => {
                return Err(format!(
                    "operand {} {:?} is not a 0x hex bit pattern",
                    i + 1,
                    shorten(&w)
                ))
            }
            Err(WordError::TooWide(w, bits)) => {
                return Err(format!(
                    "operand {} {:?} has {bits} bits; no element is wider than 64 bits",
                    i + 1,
                    shorten(&w)
                ))
            }
            Err(WordError::Literal(msg)) => return Err(format!("operand {}: {msg}", i + 1)),
        }
        if elements.len() > 1 << 16 {
            return Err("too many operands".into());
        }
    }
    let Instr::Tile(t) = lookup(text)? else {
        return Err("internal error: not a Tile IR op".into());
    };
    let elem_bits = t.op.src.value.elem.bits();
    if let Some((i, f)) = literals.iter().find(|(_, f)| f.width() != elem_bits) {
        return Err(format!(
            "operand {} is a PTX {} literal ({} bits); the source elements are {elem_bits} bits: give it as a 0x pattern",
            i + 1,
            f.name,
            f.width()
        ));
    }
    let results = t.eval_elements(&elements).map_err(|e| e.to_string())?;
    let w = t.op.dst.value.elem.bits();
    if let Some(msg) = undefined_message(&results, w) {
        return Err(msg);
    }
    let words: Vec<String> = results
        .iter()
        .map(|r| hex(r.bits().unwrap_or(0), w))
        .collect();
    Ok(words.join(" "))
}

fn parse_amd(text: &str, opts: &Options) -> Result<AmdInstr, Error> {
    let p = crate::amd::parse::parse(text).map_err(invalid)?;
    let Some(target) = opts.amd_target else {
        let d = crate::diag::Diagnostic::error(
            "amd.target-required",
            "an AMD instruction needs a target (gfx942, gfx950, gfx1200 or gfx1201): the same opcode converts FNUZ fp8 on gfx942 and OCP fp8 on the others",
            p.mnemonic_span,
        );
        return Err(invalid(vec![d]));
    };
    let (form, warnings) = crate::amd::check::check(&p, target).map_err(invalid)?;
    Ok(AmdInstr {
        text: p.text,
        form,
        state: crate::amd::eval::State {
            mode: opts.amd_mode,
            readings: opts.amd_readings,
            old: opts.amd_old,
        },
        warnings,
    })
}

fn parse_visa(text: &str, opts: &Options) -> Result<VisaInstr, Error> {
    let spaced = text.replace("<-", " <- ");
    let toks: Vec<&str> = spaced.split_whitespace().collect();
    let usage =
        "a vISA move is written mov[.sat] DST <- SRC with vISA type names (mov.sat hf <- f)";
    let syntax = |message: String| Error::Syntax { message };
    let (op, dst, arrow, src) = match toks.as_slice() {
        [op, dst, arrow, src] => (*op, *dst, *arrow, *src),
        _ => return Err(syntax(usage.into())),
    };
    if arrow != "<-" {
        return Err(syntax(usage.into()));
    }
    let sat = match op.to_ascii_lowercase().as_str() {
        "mov" => false,
        "mov.sat" => true,
        other => {
            return Err(syntax(format!(
                "unknown vISA opcode {:?}: only mov and mov.sat convert ({usage})",
                shorten(other)
            )))
        }
    };
    let ty = |name: &str, role: &str| {
        VisaType::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = VisaType::ALL.iter().map(|t| t.name()).collect();
            syntax(format!(
                "unknown vISA type {:?} for the {role}; accepted: {}",
                shorten(name),
                names.join(", ")
            ))
        })
    };
    let (dst, src) = (ty(dst, "destination")?, ty(src, "source")?);
    let plan = mov_plan(dst, src, sat, opts.cr0)?;
    Ok(VisaInstr {
        dst,
        src,
        sat,
        plan,
    })
}

/// Splits a batch line into the instruction text and its operand tokens: a vISA move's
/// instruction is its first four words (`mov.sat hf <- f`; the arrow may touch its
/// neighbours), a PTX form its first word, a Tile IR op everything up to its result type
/// (`ftof : tile<2xf32> -> tile<2xf16>`; brackets and commas between the element patterns
/// are ignored).
///
/// ```
/// use gpucvt::instr::split_line;
/// assert_eq!(split_line("mov hf<-f 0x1"), ("mov hf <- f".to_string(), vec!["0x1".to_string()]));
/// ```
pub fn split_line(line: &str) -> (String, Vec<String>) {
    let t = line.trim();
    if is_tile_text(t) {
        let (op, rest) = split_tile(t);
        return (
            op.to_string(),
            tile_words(rest).map(|w| w.to_string()).collect(),
        );
    }
    if crate::amd::is_amd_text(t) {
        let (i, rest) = crate::amd::split_batch(t);
        return (
            i.to_string(),
            rest.split_whitespace().map(|w| w.to_string()).collect(),
        );
    }
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
    fn tile_ops() {
        let spec = Options {
            semantics: Semantics::Spec,
            ..Options::default()
        };
        let op = "ftoi %x signed : tile<2xf32> -> tile<2xi8>";
        let t = Instr::parse(op, &Options::default()).unwrap();
        assert_eq!(t.operands()[0].lanes, 2);
        assert_eq!(t.result_bits(), 16);
        // 200.0 → s16 200 → low byte 0xc8 (element 0, low); -1.0 → 0xff.
        assert_eq!(
            t.eval_bits(&[0x4348_0000, 0xbf80_0000]).unwrap(),
            (0xffc8, 16)
        );
        let s = Instr::parse(op, &spec).unwrap();
        let e = s.eval(&[0x4348_0000, 0xbf80_0000]).unwrap_err().to_string();
        assert!(
            e.starts_with("undefined (spec semantics): element 0"),
            "{e}"
        );
        assert!(e.ends_with("results: undefined 0xff"), "{e}");
        assert!(t.eval(&[0]).is_err());
        let v13_3 = Options {
            tile_version: Some(SpecVersion::V13_3),
            ..Options::default()
        };
        assert!(
            Instr::parse("ftoi %x signed saturating : tile<f32> -> tile<i32>", &v13_3).is_err()
        );
        let sm80 = Options {
            target: Some(Target::SM_80),
            ..Options::default()
        };
        assert!(Instr::parse("ftof : tile<f32> -> tile<f8E5M2>", &sm80).is_err());
        assert!(Instr::parse(
            "ftof : tile<f32> -> tile<f8E5M2>",
            &Options {
                semantics: Semantics::Spec,
                ..sm80
            }
        )
        .is_ok());
        assert_eq!(
            split_line("ftof : tile<2xf32> -> !cuda_tile.tile<2xf16> [0x1, 0x2]"),
            (
                "ftof : tile<2xf32> -> !cuda_tile.tile<2xf16>".to_string(),
                vec!["0x1".to_string(), "0x2".to_string()]
            )
        );
    }

    #[test]
    fn illegal_forms_are_refused() {
        assert!(Instr::parse("cvt.f16.f32", &Options::default()).is_err());
        // A whole statement is read; its registers are ignored, its shape is checked.
        assert!(Instr::parse("cvt.rn.f16.f32 %r1, %r2;", &Options::default()).is_ok());
        let e = Instr::parse("cvt.rn.f16.f32 %r1, %r2, %r3;", &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("takes 2 operands"), "{e}");
        // The checker's diagnosis, not a generic one.
        let err = Instr::parse("cvt.rn.f32.f16", &Options::default()).unwrap_err();
        // Typed: the checker's diagnostic with its column in the text.
        let Error::Invalid { diagnostics, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(diagnostics[0].span.col, 4, "{diagnostics:?}");
        let e = err.to_string();
        assert!(!e.contains("is not a conversion form"), "{e}");
        assert!(e.contains(".rn"), "{e}");
        assert!(Instr::parse("add.f32", &Options::default()).is_err());
        // A guard is read and ignored; a malformed one is named.
        for guarded in [
            "@%p cvt.rn.f16.f32 %h, %f;",
            "@!%p1\tcvt.rn.f16.f32",
            "@p cvt.rn.f16.f32",
        ] {
            assert!(
                Instr::parse(guarded, &Options::default()).is_ok(),
                "{guarded}"
            );
        }
        for bad in [
            "@ cvt.rn.f16.f32",
            "@%1 cvt.rn.f16.f32",
            "@%p",
            "@%p;cvt.rn.f16.f32",
        ] {
            let e = Instr::parse(bad, &Options::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains("malformed guard"), "{bad}: {e}");
        }
        assert!(Instr::parse("@%p add.f32 %f1, %f2;", &Options::default())
            .unwrap_err()
            .to_string()
            .contains("unknown instruction \"add.f32\""));
        assert!(Instr::parse("mov hf <- zz", &Options::default()).is_err());
    }
}
