//! The control register `%cr0.0` as a value (`visa.md` §5).
//!
//! A [`Cr0`] is the raw 32-bit value; accessors name each bit the model uses. Presets:
//! [`Cr0::KERNEL_ENTRY`] (0: IEEE mode, round to nearest even, float → int toward zero, every
//! denormal flushed) and [`Cr0::OPENCL`] (`0x4C0`: the same plus DF, F and HF denormals
//! retained, the prologue IGC emits for OpenCL).
//!
//! | bit(s) | name | meaning |
//! | --- | --- | --- |
//! | 0 | ALT | single-precision float mode: 0 = IEEE, 1 = ALT (legacy D3D9) |
//! | 3 | — | vector-mask enable (written by IGC; no effect on conversions) |
//! | 5:4 | RM | rounding mode: 00 RNE, 01 RU (toward +∞), 10 RD (toward −∞), 11 RTZ |
//! | 6 | DF denorm | 0 = flush DF denormals, 1 = retain |
//! | 7 | F denorm | 0 = flush F denormals, 1 = retain |
//! | 9 | — | IEEE exception trap enable (written by IGC; not modelled) |
//! | 10 | HF denorm | 0 = flush HF denormals, 1 = retain |
//! | 12 | float→int RM | 0 = float → int rounds toward zero whatever RM says; 1 = it uses RM (undocumented; IGC `RMEncoding`) |
//! | 30 | BF/TF32 denorm | 0 = flush, 1 = retain ("systolic" denormals; IGC `FloatDenormModeBFTF`) |
//!
//! The documentation says every other bit is reserved. MOV conversions ignore the denormal
//! bits (`visa.md` §5.4: "conversion instructions retain denorms"); see the
//! `mov-keeps-denormals` choice of [`crate::visa::eval::CHOICES`].
//!
//! ```
//! use gpucvt::visa::cr0::{Cr0, RoundingMode};
//! let cr0 = Cr0::parse("0x4C0").unwrap();
//! assert_eq!(cr0, Cr0::OPENCL);
//! assert_eq!(cr0.rounding_mode(), RoundingMode::Rne);
//! assert!(cr0.f_denorm() && cr0.df_denorm() && cr0.hf_denorm() && !cr0.bf_denorm());
//! let rtz = cr0.with_rounding_mode(RoundingMode::Rtz);
//! assert_eq!(rtz.raw(), 0x4F0);
//! assert_eq!(Cr0::parse("rtz").unwrap().raw(), 0x30);
//! ```

use core::fmt;
use gpucvt_core::round::{Direction, Rounding};

/// The cr0 rounding-mode field (bits 5:4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RoundingMode {
    /// 00: round to nearest, ties to even (the default).
    #[default]
    Rne,
    /// 01: round up, toward +∞.
    Ru,
    /// 10: round down, toward −∞.
    Rd,
    /// 11: round toward zero.
    Rtz,
}

impl RoundingMode {
    /// Every mode, in field order.
    pub const ALL: [RoundingMode; 4] = [
        RoundingMode::Rne,
        RoundingMode::Ru,
        RoundingMode::Rd,
        RoundingMode::Rtz,
    ];

    /// The two-bit field value.
    pub fn field(self) -> u32 {
        match self {
            RoundingMode::Rne => 0,
            RoundingMode::Ru => 1,
            RoundingMode::Rd => 2,
            RoundingMode::Rtz => 3,
        }
    }

    /// The mode of a two-bit field value (only the low two bits are used).
    pub fn from_field(field: u32) -> RoundingMode {
        RoundingMode::ALL[(field & 3) as usize]
    }

    /// The name the vISA documentation uses (`RNE`, `RU`, `RD`, `RTZ`).
    pub fn name(self) -> &'static str {
        match self {
            RoundingMode::Rne => "RNE",
            RoundingMode::Ru => "RU",
            RoundingMode::Rd => "RD",
            RoundingMode::Rtz => "RTZ",
        }
    }

    /// Looks a mode up by name, case-insensitive: `rne` (also `rtne`, `rte`), `ru` (`rtp`),
    /// `rd` (`rtn`), `rtz` (`rz`).
    pub fn from_name(name: &str) -> Option<RoundingMode> {
        Some(match name.to_ascii_lowercase().as_str() {
            "rne" | "rtne" | "rte" => RoundingMode::Rne,
            "ru" | "rtp" => RoundingMode::Ru,
            "rd" | "rtn" => RoundingMode::Rd,
            "rtz" | "rz" => RoundingMode::Rtz,
            _ => return None,
        })
    }

    /// The core rounding direction.
    pub fn direction(self) -> Direction {
        match self {
            RoundingMode::Rne => Direction::NearestEven,
            RoundingMode::Ru => Direction::Up,
            RoundingMode::Rd => Direction::Down,
            RoundingMode::Rtz => Direction::TowardZero,
        }
    }
}

impl fmt::Display for RoundingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The control register `%cr0.0`, as its raw value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cr0 {
    raw: u32,
}

/// Why a cr0 value could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a cr0 value: write a number (0x4C0, 1216), a preset (entry, opencl) or a rounding mode (rne, ru, rd, rtz)")]
pub struct Cr0ParseError(pub String);

impl Cr0 {
    /// Bit 0: ALT floating-point mode (single precision only).
    pub const ALT: u32 = 1 << 0;
    /// Bit 3: vector-mask enable (IGC `SetVectorMask`); no effect on conversions.
    pub const VECTOR_MASK: u32 = 1 << 3;
    /// Bits 5:4: the rounding mode.
    pub const RM_MASK: u32 = 0b11 << 4;
    /// Bit 6: retain DF denormals.
    pub const DF_DENORM: u32 = 1 << 6;
    /// Bit 7: retain F denormals.
    pub const F_DENORM: u32 = 1 << 7;
    /// Bit 9: IEEE exception trap enable (IGC `initCR`); not modelled.
    pub const IEEE_TRAP: u32 = 1 << 9;
    /// Bit 10: retain HF denormals.
    pub const HF_DENORM: u32 = 1 << 10;
    /// Bit 12: float → int conversions use RM instead of rounding toward zero.
    pub const FLOAT_TO_INT_RM: u32 = 1 << 12;
    /// Bit 30: retain BF and TF32 denormals.
    pub const BF_DENORM: u32 = 1 << 30;
    /// Every bit the model knows about; the documentation calls the others reserved.
    pub const KNOWN: u32 = Self::ALT
        | Self::VECTOR_MASK
        | Self::RM_MASK
        | Self::DF_DENORM
        | Self::F_DENORM
        | Self::IEEE_TRAP
        | Self::HF_DENORM
        | Self::FLOAT_TO_INT_RM
        | Self::BF_DENORM;

    /// 0: the value at kernel entry (IGC `CEncoder::initCR`: "those bits must be zero'ed on
    /// entry"): IEEE mode, RNE, float → int toward zero, every denormal flushed.
    pub const KERNEL_ENTRY: Cr0 = Cr0 { raw: 0 };
    /// `0x4C0`: OpenCL's default (and the VC backend's): RNE with DF, F and HF denormals
    /// retained. IGC also sets bit 30 on platforms with BF/TF32 denormal control.
    pub const OPENCL: Cr0 = Cr0 {
        raw: Self::DF_DENORM | Self::F_DENORM | Self::HF_DENORM,
    };

    /// A cr0 value from its raw bits.
    pub const fn from_raw(raw: u32) -> Cr0 {
        Cr0 { raw }
    }

    /// The raw bits.
    pub const fn raw(self) -> u32 {
        self.raw
    }

    /// Parses a cr0 value: a number (`0x4C0`, `0b100_1100_0000`, `1216`; `_` separators
    /// allowed), a preset name (`entry`/`kernel`/`default` for 0, `opencl`/`ocl`/`cm` for
    /// `0x4C0`), or a rounding-mode name (`rne`, `ru`, `rd`, `rtz`: that mode on top of
    /// kernel-entry defaults, so `rtz` reproduces the seed's truncating conversions).
    pub fn parse(text: &str) -> Result<Cr0, Cr0ParseError> {
        let t = text.trim();
        let err = || Cr0ParseError(text.to_string());
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "entry" | "kernel" | "default" | "kernel-entry" => return Ok(Cr0::KERNEL_ENTRY),
            "opencl" | "ocl" | "cm" => return Ok(Cr0::OPENCL),
            _ => {}
        }
        if let Some(m) = RoundingMode::from_name(&lower) {
            return Ok(Cr0::KERNEL_ENTRY.with_rounding_mode(m));
        }
        let digits: String = lower.chars().filter(|&c| c != '_').collect();
        let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
            (16, h)
        } else if let Some(b) = digits.strip_prefix("0b") {
            (2, b)
        } else {
            (10, digits.as_str())
        };
        if body.is_empty() {
            return Err(err());
        }
        u32::from_str_radix(body, radix)
            .map(Cr0::from_raw)
            .map_err(|_| err())
    }

    /// The rounding mode, bits 5:4.
    pub fn rounding_mode(self) -> RoundingMode {
        RoundingMode::from_field(self.raw >> 4)
    }

    /// The same register with another rounding mode.
    pub fn with_rounding_mode(self, mode: RoundingMode) -> Cr0 {
        Cr0 {
            raw: (self.raw & !Self::RM_MASK) | (mode.field() << 4),
        }
    }

    fn with_bit(self, bit: u32, on: bool) -> Cr0 {
        Cr0 {
            raw: if on { self.raw | bit } else { self.raw & !bit },
        }
    }

    /// Bit 12: whether float → int conversions round with RM (else toward zero).
    pub fn float_to_int_uses_rm(self) -> bool {
        self.raw & Self::FLOAT_TO_INT_RM != 0
    }

    /// The same register with bit 12 set or cleared.
    pub fn with_float_to_int_rm(self, on: bool) -> Cr0 {
        self.with_bit(Self::FLOAT_TO_INT_RM, on)
    }

    /// Bit 0: ALT mode. In ALT mode F arithmetic turns ±∞ results into ±fmax, and `log`,
    /// `rsq` and `sqrt` take the absolute value of their source; by the `alt-mode-mov`
    /// choice it does not change MOV conversions.
    pub fn alt(self) -> bool {
        self.raw & Self::ALT != 0
    }

    /// The same register with ALT mode on or off.
    pub fn with_alt(self, on: bool) -> Cr0 {
        self.with_bit(Self::ALT, on)
    }

    /// Bit 6: DF denormals retained.
    pub fn df_denorm(self) -> bool {
        self.raw & Self::DF_DENORM != 0
    }

    /// Bit 7: F denormals retained.
    pub fn f_denorm(self) -> bool {
        self.raw & Self::F_DENORM != 0
    }

    /// Bit 10: HF denormals retained.
    pub fn hf_denorm(self) -> bool {
        self.raw & Self::HF_DENORM != 0
    }

    /// Bit 30: BF and TF32 denormals retained.
    pub fn bf_denorm(self) -> bool {
        self.raw & Self::BF_DENORM != 0
    }

    /// The same register with the denormal-retain bits of DF, F, HF and BF set as given.
    pub fn with_denormals(self, df: bool, f: bool, hf: bool, bf: bool) -> Cr0 {
        self.with_bit(Self::DF_DENORM, df)
            .with_bit(Self::F_DENORM, f)
            .with_bit(Self::HF_DENORM, hf)
            .with_bit(Self::BF_DENORM, bf)
    }

    /// Set bits the documentation calls reserved and the model does not know.
    pub fn reserved_bits(self) -> u32 {
        self.raw & !Self::KNOWN
    }

    /// The rounding of float → float and int → float conversions: RM.
    pub fn float_rounding(self) -> Rounding {
        Rounding::new(self.rounding_mode().direction(), false)
    }

    /// The rounding of float → int conversions: to an integral value toward zero, or with
    /// RM when bit 12 is set.
    pub fn int_rounding(self) -> Rounding {
        if self.float_to_int_uses_rm() {
            Rounding::new(self.rounding_mode().direction(), true)
        } else {
            Rounding::RZI
        }
    }

    /// One line per field, for display: `bits: value — meaning`.
    pub fn describe(self) -> Vec<String> {
        let onoff = |b: bool, on: &str, off: &str| if b { on } else { off }.to_string();
        let mut out = vec![
            format!(
                "bit 0 ALT: {}",
                onoff(
                    self.alt(),
                    "1 — ALT mode (F arithmetic: ±inf results become ±fmax; log/rsq/sqrt take |src|; MOV unchanged)",
                    "0 — IEEE mode"
                )
            ),
            format!(
                "bits 5:4 RM: {:02b} — {} (float → float and int → float conversions)",
                self.rounding_mode().field(),
                self.rounding_mode()
            ),
            format!(
                "bit 6 DF denorm: {}",
                onoff(self.df_denorm(), "1 — retain", "0 — flush (arithmetic only; MOV keeps denormals)")
            ),
            format!(
                "bit 7 F denorm: {}",
                onoff(self.f_denorm(), "1 — retain", "0 — flush (arithmetic only; MOV keeps denormals)")
            ),
            format!(
                "bit 10 HF denorm: {}",
                onoff(self.hf_denorm(), "1 — retain", "0 — flush (arithmetic only; MOV keeps denormals)")
            ),
            format!(
                "bit 12 float→int RM: {}",
                onoff(
                    self.float_to_int_uses_rm(),
                    "1 — float → int rounds with RM",
                    "0 — float → int rounds toward zero"
                )
            ),
            format!(
                "bit 30 BF/TF32 denorm: {}",
                onoff(self.bf_denorm(), "1 — retain", "0 — flush (arithmetic only; MOV keeps denormals)")
            ),
        ];
        if self.raw & Self::VECTOR_MASK != 0 {
            out.push("bit 3: 1 — vector-mask enable (no effect on conversions)".into());
        }
        if self.raw & Self::IEEE_TRAP != 0 {
            out.push("bit 9: 1 — IEEE exception trap enable (not modelled)".into());
        }
        if self.reserved_bits() != 0 {
            out.push(format!(
                "reserved bits set: {:#x} (ignored)",
                self.reserved_bits()
            ));
        }
        out
    }
}

impl fmt::Display for Cr0 {
    /// `0x000004c0`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#010x}", self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_fields() {
        assert_eq!(Cr0::OPENCL.raw(), 0x4C0);
        let c = Cr0::KERNEL_ENTRY;
        assert_eq!(c.rounding_mode(), RoundingMode::Rne);
        assert_eq!(c.int_rounding(), Rounding::RZI);
        assert!(!c.alt() && !c.df_denorm() && !c.f_denorm() && !c.hf_denorm());
        let c = Cr0::from_raw(0x1020);
        assert_eq!(c.rounding_mode(), RoundingMode::Rd);
        assert_eq!(c.int_rounding(), Rounding::RMI);
        assert_eq!(c.float_rounding(), Rounding::RM);
        assert_eq!(Cr0::from_raw(0x10).float_rounding(), Rounding::RP);
        assert_eq!(Cr0::from_raw(0x30).int_rounding(), Rounding::RZI);
        assert_eq!(Cr0::from_raw(0x8000_0000).reserved_bits(), 0x8000_0000);
    }

    #[test]
    fn parsing() {
        assert_eq!(Cr0::parse("1216").unwrap(), Cr0::OPENCL);
        assert_eq!(Cr0::parse(" 0x0000_04c0 ").unwrap(), Cr0::OPENCL);
        assert_eq!(Cr0::parse("0b1").unwrap().raw(), 1);
        assert_eq!(Cr0::parse("OpenCL").unwrap(), Cr0::OPENCL);
        assert_eq!(Cr0::parse("entry").unwrap().raw(), 0);
        assert_eq!(Cr0::parse("RU").unwrap().raw(), 0x10);
        assert!(Cr0::parse("0x").is_err());
        assert!(Cr0::parse("0x1_0000_0000").is_err());
        assert!(Cr0::parse("fast").is_err());
        assert!(Cr0::parse("").is_err());
    }
}
