//! The AMD dialect's vocabulary: targets, opcodes, the MODE register as a knob, and the
//! named readings where AMD's own texts disagree.
//!
//! Everything here is data: which formats a target's `fp8`/`bf8` mean, which opcodes a
//! target has, and what each opcode's operands are. The rules that use it live in
//! [`crate::amd::check`] (legality) and [`crate::amd::eval`] (values).
//!
//! ```
//! use gpucvt::amd::types::{Mode, Opcode, Target};
//! let t: Target = "gfx942".parse().unwrap();
//! assert_eq!(Opcode::PkFp8F32.destination_format(t).unwrap().name, "e4m3fnuz");
//! assert_eq!(Opcode::PkFp8F32.destination_format(Target::Gfx950).unwrap().name, "e4m3");
//! assert!(Mode::parse("1").unwrap().fp16_ovfl());
//! assert_eq!(Mode::parse("0x800000").unwrap(), Mode::FP16_OVFL);
//! ```

use core::fmt;
use gpucvt_core::format::{self, Format};

/// An AMD GPU target, named as LLVM names it (`-mcpu=gfx942`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// MI300 (CDNA3): FNUZ fp8/bf8.
    Gfx942,
    /// MI350 (CDNA4): the same opcodes as gfx942 on OCP fp8/bf8.
    Gfx950,
    /// RDNA4: OCP fp8/bf8, other opcodes and `byte_sel` syntax.
    Gfx1200,
    /// RDNA4, as gfx1200 for these instructions.
    Gfx1201,
}

/// The instruction-set family: gfx9 spells selections with `op_sel` and SDWA, gfx12 with
/// `byte_sel` and `op_sel` on VOP3 encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// gfx942, gfx950.
    Gfx9,
    /// gfx1200, gfx1201.
    Gfx12,
}

impl Target {
    /// Every modelled target.
    pub const ALL: [Target; 4] = [
        Target::Gfx942,
        Target::Gfx950,
        Target::Gfx1200,
        Target::Gfx1201,
    ];

    /// The LLVM processor name.
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
            Target::Gfx1200 => "gfx1200",
            Target::Gfx1201 => "gfx1201",
        }
    }

    /// The family.
    pub fn family(self) -> Family {
        match self {
            Target::Gfx942 | Target::Gfx950 => Family::Gfx9,
            Target::Gfx1200 | Target::Gfx1201 => Family::Gfx12,
        }
    }

    /// Whether `fp8`/`bf8` are the FNUZ formats (only gfx942 of the modelled targets: AMD's
    /// HIP headers and rocJITsu select FNUZ for CDNA3 alone).
    pub fn fnuz(self) -> bool {
        self == Target::Gfx942
    }

    /// The format `fp8` means on this target.
    pub fn fp8(self) -> Format {
        if self.fnuz() {
            format::E4M3FNUZ
        } else {
            format::E4M3
        }
    }

    /// The format `bf8` means on this target.
    pub fn bf8(self) -> Format {
        if self.fnuz() {
            format::E5M2FNUZ
        } else {
            format::E5M2
        }
    }

    /// Whether the text names an AMD target (`gfx` and digits), modelled or not.
    pub fn looks_like(text: &str) -> bool {
        let t = text.trim().to_ascii_lowercase();
        t.strip_prefix("gfx")
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_alphanumeric()))
    }
}

/// An AMD target name that is not modelled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown AMD target {0:?}: modelled are gfx942, gfx950, gfx1200 and gfx1201")]
pub struct UnknownTarget(pub String);

impl core::str::FromStr for Target {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Target, UnknownTarget> {
        Target::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownTarget(crate::instr::shorten(s)))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which of the 8-bit float formats an opcode converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Small {
    /// `fp8`: e4m3 (OCP) or e4m3fnuz.
    Fp8,
    /// `bf8`: e5m2 (OCP) or e5m2fnuz.
    Bf8,
}

impl Small {
    /// The format on `target`.
    pub fn format(self, target: Target) -> Format {
        match self {
            Small::Fp8 => target.fp8(),
            Small::Bf8 => target.bf8(),
        }
    }
}

/// What an opcode does, which decides its operands and selections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Two f32 sources to two bytes in one 16-bit half of the destination (`op_sel` picks it).
    Pack8(Small),
    /// One f32 source and a 32-bit seed to one byte of the destination.
    Stochastic8(Small),
    /// One byte of the source to an f32.
    Widen8(Small),
    /// Two bytes (one 16-bit half) of the source to an f32 pair `v[n:n+1]`.
    WidenPair8(Small),
    /// Two f32 sources to a packed bf16 pair (src0 in the low half).
    PackBf16,
    /// The next value of the 32-bit LFSR.
    Prng,
}

/// The modelled opcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// `v_cvt_pk_fp8_f32`.
    PkFp8F32,
    /// `v_cvt_pk_bf8_f32`.
    PkBf8F32,
    /// `v_cvt_sr_fp8_f32`.
    SrFp8F32,
    /// `v_cvt_sr_bf8_f32`.
    SrBf8F32,
    /// `v_cvt_f32_fp8`.
    F32Fp8,
    /// `v_cvt_f32_bf8`.
    F32Bf8,
    /// `v_cvt_pk_f32_fp8`.
    PkF32Fp8,
    /// `v_cvt_pk_f32_bf8`.
    PkF32Bf8,
    /// `v_cvt_pk_bf16_f32` (gfx950).
    PkBf16F32,
    /// `v_prng_b32` (gfx950).
    PrngB32,
}

/// `(opcode, mnemonic, shape, targets that have it)`, from the llvm-mc 22 opcode sweeps
/// (`tests/data/amd/enum_gfx*.txt`).
type Row = (Opcode, &'static str, Shape, &'static [Target]);

const EVERY: &[Target] = &Target::ALL;
const GFX950: &[Target] = &[Target::Gfx950];

const OPCODES: &[Row] = &[
    (
        Opcode::PkFp8F32,
        "v_cvt_pk_fp8_f32",
        Shape::Pack8(Small::Fp8),
        EVERY,
    ),
    (
        Opcode::PkBf8F32,
        "v_cvt_pk_bf8_f32",
        Shape::Pack8(Small::Bf8),
        EVERY,
    ),
    (
        Opcode::SrFp8F32,
        "v_cvt_sr_fp8_f32",
        Shape::Stochastic8(Small::Fp8),
        EVERY,
    ),
    (
        Opcode::SrBf8F32,
        "v_cvt_sr_bf8_f32",
        Shape::Stochastic8(Small::Bf8),
        EVERY,
    ),
    (
        Opcode::F32Fp8,
        "v_cvt_f32_fp8",
        Shape::Widen8(Small::Fp8),
        EVERY,
    ),
    (
        Opcode::F32Bf8,
        "v_cvt_f32_bf8",
        Shape::Widen8(Small::Bf8),
        EVERY,
    ),
    (
        Opcode::PkF32Fp8,
        "v_cvt_pk_f32_fp8",
        Shape::WidenPair8(Small::Fp8),
        EVERY,
    ),
    (
        Opcode::PkF32Bf8,
        "v_cvt_pk_f32_bf8",
        Shape::WidenPair8(Small::Bf8),
        EVERY,
    ),
    (
        Opcode::PkBf16F32,
        "v_cvt_pk_bf16_f32",
        Shape::PackBf16,
        GFX950,
    ),
    (Opcode::PrngB32, "v_prng_b32", Shape::Prng, GFX950),
];

impl Opcode {
    /// Every modelled opcode.
    pub fn all() -> impl Iterator<Item = Opcode> {
        OPCODES.iter().map(|r| r.0)
    }

    fn row(self) -> &'static Row {
        // The table has one row per variant, in declaration order.
        &OPCODES[self as usize]
    }

    /// The mnemonic without an encoding suffix.
    pub fn mnemonic(self) -> &'static str {
        self.row().1
    }

    /// The opcode of a mnemonic (without suffix; any case).
    pub fn from_mnemonic(m: &str) -> Option<Opcode> {
        OPCODES
            .iter()
            .find(|r| r.1.eq_ignore_ascii_case(m))
            .map(|r| r.0)
    }

    /// What it does.
    pub fn shape(self) -> Shape {
        self.row().2
    }

    /// Whether `target` has it.
    pub fn on(self, target: Target) -> bool {
        self.row().3.contains(&target)
    }

    /// Whether it has only a VOP3 encoding (the VOP1 ones also have `_e32`, and on gfx9 `_sdwa`).
    pub fn vop3_only(self) -> bool {
        matches!(
            self.shape(),
            Shape::Pack8(_) | Shape::Stochastic8(_) | Shape::PackBf16
        )
    }

    /// How many source operands it reads (the destination's old value not counted).
    pub fn sources(self) -> usize {
        match self.shape() {
            Shape::Pack8(_) | Shape::Stochastic8(_) | Shape::PackBf16 => 2,
            Shape::Widen8(_) | Shape::WidenPair8(_) | Shape::Prng => 1,
        }
    }

    /// Whether the instruction writes only part of its destination, so that the old value
    /// of the destination register shows through (`Pack8`: 16 bits; `Stochastic8`: 8).
    pub fn merges_old(self) -> bool {
        matches!(self.shape(), Shape::Pack8(_) | Shape::Stochastic8(_))
    }

    /// The number format of the destination lanes on `target` (`None` for `v_prng_b32`).
    pub fn destination_format(self, target: Target) -> Option<Format> {
        match self.shape() {
            Shape::Pack8(s) | Shape::Stochastic8(s) => Some(s.format(target)),
            Shape::Widen8(_) | Shape::WidenPair8(_) => Some(format::F32),
            Shape::PackBf16 => Some(format::BF16),
            Shape::Prng => None,
        }
    }

    /// The number format of the converted source lanes on `target`.
    pub fn source_format(self, target: Target) -> Option<Format> {
        match self.shape() {
            Shape::Pack8(_) | Shape::Stochastic8(_) | Shape::PackBf16 => Some(format::F32),
            Shape::Widen8(s) | Shape::WidenPair8(s) => Some(s.format(target)),
            Shape::Prng => None,
        }
    }

    /// The destination's width in bits (a register pair for `WidenPair8`).
    pub fn destination_bits(self) -> u32 {
        match self.shape() {
            Shape::WidenPair8(_) => 64,
            _ => 32,
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

/// The encoding suffix written after the mnemonic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// No suffix: the assembler picks (VOP1 `_e32` for the VOP1 opcodes).
    #[default]
    Default,
    /// `_e32` (VOP1).
    E32,
    /// `_e64` (VOP3).
    E64,
    /// `_sdwa` (gfx9 VOP1 with a sub-dword source select).
    Sdwa,
}

impl Encoding {
    /// The suffix as written (`""` for the default).
    pub fn suffix(self) -> &'static str {
        match self {
            Encoding::Default => "",
            Encoding::E32 => "_e32",
            Encoding::E64 => "_e64",
            Encoding::Sdwa => "_sdwa",
        }
    }
}

/// The per-wave MODE register, as its raw value. Only FP16_OVFL (bit 23, CDNA4 ISA L613)
/// changes these conversions: with it set, an f32 → fp8/bf8 overflow (and ±∞) gives the
/// largest finite value of its sign (the ISA's table, L2739–2745). The rounding bits do
/// not matter: the conversions set round-to-nearest-even themselves (the pseudocode,
/// L13215 ff.). Every other bit is kept and ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mode(u32);

impl Mode {
    /// The FP16_OVFL bit.
    pub const FP16_OVFL_BIT: u32 = 23;
    /// MODE with only FP16_OVFL set.
    pub const FP16_OVFL: Mode = Mode(1 << Self::FP16_OVFL_BIT);

    /// The raw value.
    pub const fn from_raw(raw: u32) -> Mode {
        Mode(raw)
    }

    /// The raw value.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// MODE.FP16_OVFL.
    pub const fn fp16_ovfl(self) -> bool {
        self.0 >> Self::FP16_OVFL_BIT & 1 == 1
    }

    /// The same with FP16_OVFL set or clear.
    pub const fn with_fp16_ovfl(self, on: bool) -> Mode {
        let bit = 1 << Self::FP16_OVFL_BIT;
        Mode(if on { self.0 | bit } else { self.0 & !bit })
    }

    /// Reads `0` or `1` (the FP16_OVFL bit alone) or a whole MODE word in hexadecimal
    /// (`0x800000`).
    ///
    /// # Errors
    /// [`crate::Error::Value`], naming the accepted spellings.
    pub fn parse(text: &str) -> Result<Mode, crate::Error> {
        let t = text.trim();
        match t {
            "0" => return Ok(Mode(0)),
            "1" => return Ok(Mode::FP16_OVFL),
            _ => {}
        }
        let hex = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"));
        hex.and_then(|h| u32::from_str_radix(h, 16).ok())
            .map(Mode)
            .ok_or_else(|| crate::Error::Value {
                message: format!(
                    "invalid MODE {:?}: give 0 or 1 (FP16_OVFL) or a 32-bit MODE word in hex (0x800000)",
                    crate::instr::shorten(t)
                ),
            })
    }
}

/// Where AMD's own texts give different answers, the reading a conversion follows. The
/// defaults are the CDNA4 ISA's tables and prose; the others are named so that a user can
/// reproduce a peer, and so that a silicon run can decide (`docs/guide/amd.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Readings {
    /// ±∞ into fp8/bf8 under FP16_OVFL = 1.
    pub inf: InfReading,
    /// The NaN bytes of f32 → fp8/bf8 on the OCP targets.
    pub nan: NanReading,
    /// How `v_cvt_sr_*` uses its seed.
    pub sr: SrReading,
}

/// ±∞ into fp8/bf8 with MODE.FP16_OVFL = 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InfReading {
    /// ±∞ saturates to ±max like a finite overflow: the ISA's FP8/BF8 table (L2739–2745),
    /// rocJITsu's tests.
    #[default]
    Table,
    /// ±∞ stays what FP16_OVFL = 0 gives (NaN in fp8, ±∞ in bf8) and only finite overflow
    /// saturates: the MODE field's own description ("preserving true INF values", L613) and
    /// an RDNA4 emulator whose comments cite GPU captures.
    KeepInf,
}

/// The NaN byte of an f32 → fp8/bf8 conversion on an OCP target (FNUZ has one NaN, 0x80).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NanReading {
    /// Every mantissa bit set, the sign kept: e4m3 0x7f/0xff, e5m2 0x7f/0xff (rocJITsu's
    /// tests, AMD's HIP fp8 header).
    #[default]
    SignedAllOnes,
    /// e5m2's quiet NaN without payload, the sign kept: 0x7e/0xfe (ml_dtypes, AMD's OCP host
    /// emulation); e4m3 as the default.
    SignedQuiet,
}

/// How `v_cvt_sr_fp8_f32` / `v_cvt_sr_bf8_f32` use the seed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SrReading {
    /// The ISA's prose (L2699–2700): the seed's high bits (`seed[31:12]` for fp8,
    /// `seed[31:11]` for bf8, L13245 ff.) are added below the last kept bit of the f32
    /// significand, aligned to the destination's smallest normal exponent (bits shifted out
    /// by the alignment are lost, no sticky), a carry into the exponent kept, and the sum is
    /// truncated.
    #[default]
    Prose,
    /// The ISA's pseudocode read literally (L13247–13252): the same seed bits are added to
    /// the 23-bit mantissa field without alignment, the sum wraps at 2^23 (the exponent
    /// unchanged), and the result is rounded to nearest even.
    Pseudocode,
    /// The rule of AMD's HIP and Composable Kernel host code: the seed's *low* 20 (fp8) / 21
    /// (bf8) bits added after the same alignment, then truncated. The same distribution as
    /// the hardware, different bits for a given seed: what a software emulation computes.
    HostLowBits,
}

impl SrReading {
    /// The names the CLI and the docs use.
    pub fn name(self) -> &'static str {
        match self {
            SrReading::Prose => "prose",
            SrReading::Pseudocode => "pseudocode",
            SrReading::HostLowBits => "host-low-bits",
        }
    }
}
