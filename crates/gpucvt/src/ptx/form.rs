//! The canonical form of a `cvt` / `cvt.pack` instruction: its types and modifiers, with
//! modifier order forgotten (ptxas ignores it). Both the legality checker and the evaluator
//! work on this.

use super::types::PtxType;

/// A rounding modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RoundMod {
    /// `.rn`
    Rn,
    /// `.rna`
    Rna,
    /// `.rz`
    Rz,
    /// `.rm`
    Rm,
    /// `.rp`
    Rp,
    /// `.rs` (stochastic, with an `rbits` operand)
    Rs,
    /// `.rni`
    Rni,
    /// `.rzi`
    Rzi,
    /// `.rmi`
    Rmi,
    /// `.rpi`
    Rpi,
}

impl RoundMod {
    /// Every rounding modifier.
    pub const ALL: [RoundMod; 10] = [
        RoundMod::Rn,
        RoundMod::Rna,
        RoundMod::Rz,
        RoundMod::Rm,
        RoundMod::Rp,
        RoundMod::Rs,
        RoundMod::Rni,
        RoundMod::Rzi,
        RoundMod::Rmi,
        RoundMod::Rpi,
    ];

    /// The name without the dot.
    pub fn name(self) -> &'static str {
        match self {
            RoundMod::Rn => "rn",
            RoundMod::Rna => "rna",
            RoundMod::Rz => "rz",
            RoundMod::Rm => "rm",
            RoundMod::Rp => "rp",
            RoundMod::Rs => "rs",
            RoundMod::Rni => "rni",
            RoundMod::Rzi => "rzi",
            RoundMod::Rmi => "rmi",
            RoundMod::Rpi => "rpi",
        }
    }

    /// Looks a modifier up by name, with or without the dot.
    pub fn from_name(name: &str) -> Option<RoundMod> {
        let name = name.strip_prefix('.').unwrap_or(name);
        RoundMod::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Whether this is an integer rounding (`.rni .rzi .rmi .rpi`).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            RoundMod::Rni | RoundMod::Rzi | RoundMod::Rmi | RoundMod::Rpi
        )
    }
}

/// The `.scaled::…` qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scaled {
    /// `.scaled::n2::ue8m0`: one ue8m0 scale per element (a `.b16` operand).
    N2Ue8m0,
    /// `.scaled::n1::ue8m0`: one ue8m0 scale for both elements (a `.b8` operand).
    N1Ue8m0,
}

/// A boolean modifier of `cvt` (everything but rounding and `.scaled::…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Modifier {
    /// `.ftz`
    Ftz,
    /// `.sat`
    Sat,
    /// `.relu`
    Relu,
    /// `.satfinite`
    Satfinite,
    /// `.pzo`
    Pzo,
}

impl Modifier {
    /// Every boolean modifier.
    pub const ALL: [Modifier; 5] = [
        Modifier::Ftz,
        Modifier::Sat,
        Modifier::Relu,
        Modifier::Satfinite,
        Modifier::Pzo,
    ];

    /// The name without the dot.
    pub fn name(self) -> &'static str {
        match self {
            Modifier::Ftz => "ftz",
            Modifier::Sat => "sat",
            Modifier::Relu => "relu",
            Modifier::Satfinite => "satfinite",
            Modifier::Pzo => "pzo",
        }
    }

    /// Looks a modifier up by name, with or without the dot.
    pub fn from_name(name: &str) -> Option<Modifier> {
        let name = name.strip_prefix('.').unwrap_or(name);
        Modifier::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl Scaled {
    /// The qualifier without the dot (`scaled::n2::ue8m0`).
    pub fn name(self) -> &'static str {
        match self {
            Scaled::N2Ue8m0 => "scaled::n2::ue8m0",
            Scaled::N1Ue8m0 => "scaled::n1::ue8m0",
        }
    }

    /// Looks the qualifier up by name, with or without the dot.
    pub fn from_name(name: &str) -> Option<Scaled> {
        match name.strip_prefix('.').unwrap_or(name) {
            "scaled::n2::ue8m0" => Some(Scaled::N2Ue8m0),
            "scaled::n1::ue8m0" => Some(Scaled::N1Ue8m0),
            _ => None,
        }
    }
}

/// A `cvt` or `cvt.pack` form, without operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CvtForm {
    /// `cvt.pack` rather than `cvt`.
    pub pack: bool,
    /// The rounding modifier, if any.
    pub rounding: Option<RoundMod>,
    /// `.ftz`
    pub ftz: bool,
    /// `.sat`
    pub sat: bool,
    /// `.relu`
    pub relu: bool,
    /// `.satfinite`
    pub satfinite: bool,
    /// `.pzo` (PTX 9.4)
    pub pzo: bool,
    /// `.scaled::n2::ue8m0` / `.scaled::n1::ue8m0`
    pub scaled: Option<Scaled>,
    /// Destination type (`cvt.pack`: the convert type, `.u8` …).
    pub dtype: PtxType,
    /// Source type (`cvt.pack`: the `a`/`b` type, `.s32`).
    pub atype: PtxType,
    /// `cvt.pack`'s `c` type (`.b32`), if written.
    pub ctype: Option<PtxType>,
}

impl CvtForm {
    /// A plain `cvt.dtype.atype` with no modifiers.
    pub fn new(dtype: PtxType, atype: PtxType) -> CvtForm {
        CvtForm {
            pack: false,
            rounding: None,
            ftz: false,
            sat: false,
            relu: false,
            satfinite: false,
            pzo: false,
            scaled: None,
            dtype,
            atype,
            ctype: None,
        }
    }

    /// Whether the boolean modifier `m` is set.
    pub fn has(&self, m: Modifier) -> bool {
        match m {
            Modifier::Ftz => self.ftz,
            Modifier::Sat => self.sat,
            Modifier::Relu => self.relu,
            Modifier::Satfinite => self.satfinite,
            Modifier::Pzo => self.pzo,
        }
    }

    /// Sets or clears the boolean modifier `m`.
    pub fn set(&mut self, m: Modifier, on: bool) {
        match m {
            Modifier::Ftz => self.ftz = on,
            Modifier::Sat => self.sat = on,
            Modifier::Relu => self.relu = on,
            Modifier::Satfinite => self.satfinite = on,
            Modifier::Pzo => self.pzo = on,
        }
    }

    /// The canonical spelling: `cvt.rn.satfinite.relu.e4m3x2.f32` (modifiers in the order
    /// rounding, ftz, sat, relu, satfinite, pzo, scaled).
    pub fn spelling(&self) -> String {
        let mut s = String::from(if self.pack { "cvt.pack" } else { "cvt" });
        if let Some(r) = self.rounding {
            s.push('.');
            s.push_str(r.name());
        }
        for (on, name) in [
            (self.ftz, "ftz"),
            (self.sat, "sat"),
            (self.relu, "relu"),
            (self.satfinite, "satfinite"),
            (self.pzo, "pzo"),
        ] {
            if on {
                s.push('.');
                s.push_str(name);
            }
        }
        match self.scaled {
            Some(Scaled::N2Ue8m0) => s.push_str(".scaled::n2::ue8m0"),
            Some(Scaled::N1Ue8m0) => s.push_str(".scaled::n1::ue8m0"),
            None => {}
        }
        for t in [Some(self.dtype), Some(self.atype), self.ctype]
            .into_iter()
            .flatten()
        {
            s.push('.');
            s.push_str(t.name());
        }
        s
    }
}
