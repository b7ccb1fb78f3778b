//! PTX targets (`sm_90a`, `sm_100f`, …) and PTX ISA versions (`.version 9.5`), with the
//! relations the legality rules need: each target's own minimum PTX version, the
//! architecture-specific (`a`) and family-specific (`f`) variants, and which families a target
//! belongs to.
//!
//! ```
//! use gpucvt::ptx::target::{PtxVersion, Target, Variant};
//! let t: Target = "sm_100a".parse().unwrap();
//! assert_eq!((t.arch(), t.variant()), (100, Variant::Arch));
//! assert_eq!(t.min_version(), PtxVersion::new(8, 6));
//! assert_eq!(t.to_string(), "sm_100a");
//! let v: PtxVersion = "7.8".parse().unwrap();
//! assert_eq!(v.prev(), Some(PtxVersion::new(7, 7)));
//! assert_eq!(PtxVersion::new(8, 0).prev(), Some(PtxVersion::new(7, 8)));
//! ```

use core::fmt;
use core::str::FromStr;

/// A PTX ISA version, `major.minor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PtxVersion {
    /// Major version.
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

/// Every PTX ISA version that exists, oldest first (1.0 … 9.5; ptxas 13.5 reads up to 9.5).
const VERSIONS: &[(u8, &[u8])] = &[
    (1, &[0, 1, 2, 3, 4, 5]),
    (2, &[0, 1, 2, 3]),
    (3, &[0, 1, 2]),
    (4, &[0, 1, 2, 3]),
    (5, &[0]),
    (6, &[0, 1, 2, 3, 4, 5]),
    (7, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
    (8, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
    (9, &[0, 1, 2, 3, 4, 5]),
];

impl PtxVersion {
    /// The version `major.minor` (not checked against the list of real versions).
    pub const fn new(major: u8, minor: u8) -> PtxVersion {
        PtxVersion { major, minor }
    }

    /// The newest version gpucvt knows (9.5, what ptxas 13.5 reads).
    pub const LATEST: PtxVersion = PtxVersion::new(9, 5);

    /// Every real PTX ISA version, oldest first.
    pub fn all() -> impl Iterator<Item = PtxVersion> {
        VERSIONS
            .iter()
            .flat_map(|&(major, minors)| minors.iter().map(move |&m| PtxVersion::new(major, m)))
    }

    /// Whether this version exists (1.0 … 1.5, 2.0 … 2.3, …, 9.0 … 9.5).
    pub fn is_known(self) -> bool {
        PtxVersion::all().any(|v| v == self)
    }

    /// The version just before this one (`8.0` → `7.8`), if any.
    pub fn prev(self) -> Option<PtxVersion> {
        PtxVersion::all().take_while(|&v| v < self).last()
    }

    /// The version just after this one (`7.8` → `8.0`), if any.
    pub fn next(self) -> Option<PtxVersion> {
        PtxVersion::all().find(|&v| v > self)
    }
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why a version or target string could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

impl FromStr for PtxVersion {
    type Err = ParseError;

    /// Reads `9.5`. The version must be one that exists.
    fn from_str(s: &str) -> Result<PtxVersion, ParseError> {
        let bad = || {
            ParseError(format!(
                "'{s}' is not a PTX ISA version (expected e.g. 9.5)"
            ))
        };
        let (a, b) = s.trim().split_once('.').ok_or_else(bad)?;
        if a.is_empty() || b.len() != 1 || !a.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let major: u8 = a.parse().map_err(|_| bad())?;
        let minor: u8 = b.parse().map_err(|_| bad())?;
        let v = PtxVersion::new(major, minor);
        if v.is_known() {
            Ok(v)
        } else if v > PtxVersion::LATEST {
            Err(ParseError(format!(
                "PTX ISA version {v} is newer than the newest known version {}",
                PtxVersion::LATEST
            )))
        } else {
            Err(ParseError(format!("PTX ISA version {v} does not exist")))
        }
    }
}

/// The suffix of a target name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// `sm_90`: the baseline features of the architecture, forward compatible.
    Base,
    /// `sm_100f`: the baseline plus the features of the architecture's family.
    Family,
    /// `sm_90a`: everything, including the architecture-specific features.
    Arch,
}

/// A compilation target, `sm_<arch>[a|f]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    arch: u32,
    variant: Variant,
}

/// `(arch, min PTX of sm_XX, min PTX of sm_XXa, min PTX of sm_XXf)`; `None` where the variant
/// does not exist.
type TargetRow = (
    u32,
    Option<PtxVersion>,
    Option<PtxVersion>,
    Option<PtxVersion>,
);

/// Every known target with its own minimum PTX version, from the PTX ISA's target table.
/// sm_107's floor is not documented in the sources gpucvt has; 9.4, the version of its first
/// features, is assumed.
const TARGETS: &[TargetRow] = {
    const fn v(major: u8, minor: u8) -> Option<PtxVersion> {
        Some(PtxVersion::new(major, minor))
    }
    &[
        (10, v(1, 0), None, None),
        (11, v(1, 0), None, None),
        (12, v(1, 2), None, None),
        (13, v(1, 2), None, None),
        (20, v(2, 0), None, None),
        (21, v(2, 0), None, None),
        (30, v(3, 0), None, None),
        (32, v(4, 0), None, None),
        (35, v(3, 1), None, None),
        (37, v(4, 1), None, None),
        (50, v(4, 0), None, None),
        (52, v(4, 1), None, None),
        (53, v(4, 2), None, None),
        (60, v(5, 0), None, None),
        (61, v(5, 0), None, None),
        (62, v(5, 0), None, None),
        (70, v(6, 0), None, None),
        (72, v(6, 1), None, None),
        (75, v(6, 3), None, None),
        (80, v(7, 0), None, None),
        (86, v(7, 1), None, None),
        (87, v(7, 4), None, None),
        (88, v(9, 0), None, None),
        (89, v(7, 8), None, None),
        (90, v(7, 8), v(8, 0), None),
        (100, v(8, 6), v(8, 6), v(8, 8)),
        (101, v(8, 6), v(8, 6), v(8, 8)),
        (103, v(8, 8), v(8, 8), v(8, 8)),
        (107, v(9, 4), v(9, 4), v(9, 4)),
        (110, v(9, 0), v(9, 0), v(9, 0)),
        (120, v(8, 7), v(8, 7), v(8, 8)),
        (121, v(8, 8), v(8, 8), v(8, 8)),
    ]
};

/// Architecture families: a family-specific feature of `sm_<base>f` is available on every
/// `a` or `f` target whose architecture is in the family.
const FAMILIES: &[(u32, &[u32])] = &[
    (100, &[100, 103, 107]),
    (103, &[103]),
    (107, &[107]),
    (110, &[110]),
    (120, &[120, 121]),
    (121, &[121]),
];

impl Target {
    /// The target `sm_<arch>` with the given variant, if it exists.
    pub fn new(arch: u32, variant: Variant) -> Option<Target> {
        let t = Target { arch, variant };
        t.min_version_opt().map(|_| t)
    }

    /// Every known target, oldest first, each architecture's variants in the order base, `f`,
    /// `a`.
    pub fn all() -> impl Iterator<Item = Target> {
        TARGETS.iter().flat_map(|&(arch, b, a, f)| {
            [
                b.map(|_| Target::new_unchecked(arch, Variant::Base)),
                f.map(|_| Target::new_unchecked(arch, Variant::Family)),
                a.map(|_| Target::new_unchecked(arch, Variant::Arch)),
            ]
            .into_iter()
            .flatten()
        })
    }

    const fn new_unchecked(arch: u32, variant: Variant) -> Target {
        Target { arch, variant }
    }

    /// `sm_80`.
    pub const SM_80: Target = Target::new_unchecked(80, Variant::Base);
    /// `sm_90`.
    pub const SM_90: Target = Target::new_unchecked(90, Variant::Base);
    /// `sm_100a`.
    pub const SM_100A: Target = Target::new_unchecked(100, Variant::Arch);

    /// The architecture number (`100` for `sm_100a`).
    pub fn arch(self) -> u32 {
        self.arch
    }

    /// The variant (`a`, `f` or none).
    pub fn variant(self) -> Variant {
        self.variant
    }

    fn min_version_opt(self) -> Option<PtxVersion> {
        let row = TARGETS.iter().find(|r| r.0 == self.arch)?;
        match self.variant {
            Variant::Base => row.1,
            Variant::Arch => row.2,
            Variant::Family => row.3,
        }
    }

    /// The oldest PTX ISA version that knows this target.
    pub fn min_version(self) -> PtxVersion {
        self.min_version_opt().unwrap_or(PtxVersion::LATEST)
    }

    /// The newest PTX ISA version that still accepts this target: `sm_101*` was renamed
    /// `sm_110*` in PTX ISA 9.0.
    pub fn max_version(self) -> PtxVersion {
        if self.arch == 101 {
            PtxVersion::new(8, 8)
        } else {
            PtxVersion::LATEST
        }
    }

    /// The architecture number used for comparisons (`sm_101` is the chip later called
    /// `sm_110`).
    fn canonical_arch(self) -> u32 {
        if self.arch == 101 {
            110
        } else {
            self.arch
        }
    }

    /// Whether this target has the baseline features of `sm_<min>` (any variant of an
    /// architecture at least `min`).
    pub fn at_least(self, min: u32) -> bool {
        self.arch >= min
    }

    /// Whether this target has the architecture-specific features of `sm_<arch>a`.
    pub fn is_arch_specific(self, arch: u32) -> bool {
        self.variant == Variant::Arch && self.canonical_arch() == arch
    }

    /// Whether this target has the family-specific features of `sm_<family>f`: an `a` or `f`
    /// target whose architecture is in that family.
    pub fn in_family(self, family: u32) -> bool {
        self.variant != Variant::Base
            && FAMILIES
                .iter()
                .find(|f| f.0 == family)
                .is_some_and(|f| f.1.contains(&self.canonical_arch()))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.variant {
            Variant::Base => "",
            Variant::Family => "f",
            Variant::Arch => "a",
        };
        write!(f, "sm_{}{}", self.arch, suffix)
    }
}

impl FromStr for Target {
    type Err = ParseError;

    /// Reads `sm_90a`, `sm_100f`, `sm_80` (also `compute_90a`, the virtual architecture of
    /// the same name).
    fn from_str(s: &str) -> Result<Target, ParseError> {
        let body = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))
            .ok_or_else(|| {
                ParseError(format!(
                    "'{s}' is not a target (expected e.g. sm_90a or sm_100f)"
                ))
            })?;
        let (digits, variant) = match body.as_bytes().last() {
            Some(b'a') => (&body[..body.len() - 1], Variant::Arch),
            Some(b'f') => (&body[..body.len() - 1], Variant::Family),
            _ => (body, Variant::Base),
        };
        if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(ParseError(format!(
                "'{s}' is not a target (expected e.g. sm_90a or sm_100f)"
            )));
        }
        let arch: u32 = digits
            .parse()
            .map_err(|_| ParseError(format!("'{s}' is not a target")))?;
        if let Some(t) = Target::new(arch, variant) {
            return Ok(t);
        }
        if TARGETS.iter().any(|r| r.0 == arch) {
            let which = if variant == Variant::Arch {
                "an 'a'"
            } else {
                "an 'f'"
            };
            Err(ParseError(format!(
                "sm_{arch} has no {which} variant (known: {})",
                Target::all()
                    .filter(|t| t.arch == arch)
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        } else {
            Err(ParseError(format!("unknown target '{s}'")))
        }
    }
}

/// A condition on the target, one alternative of a feature's requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetReq {
    /// Every target.
    Any,
    /// `sm_<n>` or higher, any variant (a baseline feature).
    Min(u32),
    /// One of these `sm_<n>a` targets (an architecture-specific feature).
    Arch(&'static [u32]),
    /// An `a` or `f` target in one of these families (a family-specific feature).
    Family(&'static [u32]),
}

impl TargetReq {
    /// Whether `t` meets the condition.
    pub fn holds(self, t: Target) -> bool {
        match self {
            TargetReq::Any => true,
            TargetReq::Min(n) => t.at_least(n),
            TargetReq::Arch(list) => list.iter().any(|&a| t.is_arch_specific(a)),
            TargetReq::Family(list) => list.iter().any(|&f| t.in_family(f)),
        }
    }
}

impl fmt::Display for TargetReq {
    /// `sm_90 or higher`, `sm_100a, sm_103a or sm_107a`, `an sm_100f or sm_120f family
    /// target`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |l: &[u32], suffix: &str| {
            let names: Vec<String> = l.iter().map(|a| format!("sm_{a}{suffix}")).collect();
            match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("{} or {last}", rest.join(", "))
                }
                _ => names.join(""),
            }
        };
        match *self {
            TargetReq::Any => f.write_str("any target"),
            TargetReq::Min(n) => write!(f, "sm_{n} or higher"),
            TargetReq::Arch(l) => f.write_str(&list(l, "a")),
            TargetReq::Family(l) => write!(f, "an {} family target", list(l, "f")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(PtxVersion::all().count(), 6 + 4 + 3 + 4 + 1 + 6 + 9 + 9 + 6);
        assert_eq!(PtxVersion::new(7, 0).prev(), Some(PtxVersion::new(6, 5)));
        assert_eq!(PtxVersion::new(1, 0).prev(), None);
        assert!("9.6".parse::<PtxVersion>().is_err());
        assert!("7.9".parse::<PtxVersion>().is_err());
        assert!("x".parse::<PtxVersion>().is_err());
        assert_eq!("6.5".parse::<PtxVersion>(), Ok(PtxVersion::new(6, 5)));
    }

    #[test]
    fn targets() {
        for t in Target::all() {
            assert_eq!(t.to_string().parse::<Target>(), Ok(t));
        }
        assert!("sm_80a".parse::<Target>().is_err());
        assert!("sm_99".parse::<Target>().is_err());
        assert!("gfx90a".parse::<Target>().is_err());
        assert!("sm_".parse::<Target>().is_err());
        let t: Target = "sm_103a".parse().unwrap();
        assert!(t.in_family(100) && t.in_family(103) && !t.in_family(120));
        assert!(t.is_arch_specific(103) && !t.is_arch_specific(100));
        let f: Target = "sm_100f".parse().unwrap();
        assert!(f.in_family(100) && !f.is_arch_specific(100));
        let b: Target = "sm_100".parse().unwrap();
        assert!(!b.in_family(100) && b.at_least(90));
        assert!("sm_101a".parse::<Target>().unwrap().is_arch_specific(110));
    }
}
