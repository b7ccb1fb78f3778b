//! Other libraries' conversions, reproduced on purpose: for someone who must match an
//! existing pipeline bit for bit rather than the GPU.
//!
//! gpucvt's own conversions follow PTX (canonical NaNs, correct rounding from every source).
//! The peers differ in a few documented places, and each [`Peer`] names the version its
//! rules describe:
//!
//! - **NaN encodings**: which NaN a NaN (or, in a format without infinity, an infinity or
//!   an overflow) becomes: [`NanResult`]'s peer rules;
//! - **NaN into a format without NaN** (`e2m1`, `e2m3`, `e3m2`): a zero ([`NoNanResult`]);
//! - **`f64` sources rounded twice**, through `f32` first ([`Chain`]);
//! - **`ue8m0`**: ties rounded up, NaN for zero and negatives, or the lowest binade rounded up.
//!
//! Every rule is one field of the core's [`Policy`] or a [`Chain`] of two core conversions:
//! the exact engine runs them, and the exact reference checks them like any other policy.
//! Only round-to-nearest is described: that is the one rounding the peers' casts have.
//!
//! ```
//! use gpucvt::compat::Peer;
//! use gpucvt::core::format::{BF16, E4M3, F32, F64};
//! let torch = Peer::Torch;
//! // -NaN into e4m3: c10 keeps the sign (0xff), PTX gives the canonical 0x7f.
//! let c = torch.chain(&F32, &E4M3).unwrap();
//! assert_eq!(c.apply(0xffc0_0000).bits, 0xff);
//! // f64 -> bf16 through f32: 1 + 2^-8 + 2^-40 rounds to the tie first, then to even.
//! let x = (1.0f64 + 2f64.powi(-8) + 2f64.powi(-40)).to_bits();
//! assert_eq!(torch.chain(&F64, &BF16).unwrap().apply(x).bits, 0x3f80);
//! assert_eq!(Peer::MlDtypes.chain(&F64, &BF16).unwrap().apply(x).bits, 0x3f81);
//! // A format the peer has no cast for is an error, not a guess.
//! assert!(torch.chain(&F32, &gpucvt::core::format::E2M1).is_err());
//! ```

use crate::error::Error;
use gpucvt_core::format::{Format, Layout, F32, F64};
use gpucvt_core::{Chain, Conversion, NanResult, NoNanResult, Policy, Rounding};

/// A library whose conversions gpucvt can reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Peer {
    /// ml_dtypes 0.7 (NumPy `astype` to its dtypes). Checked by the tests against the
    /// pinned package, every input of each 16-bit source and sampled `f32`/`f64` inputs.
    MlDtypes,
    /// PyTorch 2.15's CPU casts (`Tensor.to`): c10's scalar conversions for the FP8 types,
    /// the vectorised copy for `bf16` and `f16`.
    Torch,
    /// JAX 0.12 on XLA:CPU (`jnp.astype`).
    Xla,
}

/// How a peer converts into one destination.
struct Rules {
    /// The NaN a NaN becomes, by destination name; destinations not listed have no cast.
    nan: &'static [(&'static str, NanResult)],
    /// The NaN rule of particular (source, destination) pairs, before `nan`.
    pair_nan: &'static [(&'static str, &'static str, NanResult)],
    /// Pairs the peer leaves to another library (ml_dtypes: NumPy's own types), refused.
    foreign: &'static [&'static str],
    /// NaN into a format without NaN.
    no_nan: NoNanResult,
    /// `f64` sources go through `f32` first for these destinations.
    twice: fn(&Format) -> bool,
    /// `ue8m0`: NaN for zero and negatives.
    e8m0_unrepresentable_nan: bool,
    /// `ue8m0`: the lowest binade rounds up (the `f32` fields rounded).
    e8m0_lowest_binade_up: bool,
}

use NanResult::{NegativeCanonical, Payload, Quieted, SignedCanonical, SignedQuiet};

const ML_DTYPES: Rules = Rules {
    nan: &[
        ("f64", SignedQuiet),
        ("f32", SignedQuiet),
        ("f16", SignedQuiet),
        ("bf16", SignedQuiet),
        ("e4m3", SignedCanonical),
        ("e5m2", SignedQuiet),
        ("e4m3ieee", SignedQuiet),
        ("e3m4", SignedQuiet),
        ("e4m3fnuz", SignedQuiet),
        ("e5m2fnuz", SignedQuiet),
        ("e4m3b11fnuz", SignedQuiet),
        ("e2m3", SignedQuiet),
        ("e3m2", SignedQuiet),
        ("e2m1", SignedQuiet),
        ("ue8m0", SignedQuiet),
    ],
    // bfloat16 widens by a shift (the payload as it is), then through NumPy's f32 -> f64.
    pair_nan: &[("bf16", "f32", Payload), ("bf16", "f64", Quieted)],
    foreign: &["f64", "f32", "f16"],
    no_nan: NoNanResult::OppositeZero,
    twice: |_| false,
    e8m0_unrepresentable_nan: true,
    e8m0_lowest_binade_up: false,
};

const TORCH: Rules = Rules {
    nan: &[
        ("f64", Quieted),
        ("f32", Quieted),
        ("f16", NegativeCanonical),
        ("bf16", NegativeCanonical),
        ("e4m3", SignedCanonical),
        ("e5m2", SignedCanonical),
        ("e4m3fnuz", SignedCanonical),
        ("e5m2fnuz", SignedCanonical),
        ("ue8m0", SignedCanonical),
    ],
    pair_nan: &[],
    foreign: &[],
    no_nan: NoNanResult::LargestFinite,
    twice: |dst| *dst != F32 && *dst != F64,
    e8m0_unrepresentable_nan: false,
    e8m0_lowest_binade_up: true,
};

const XLA: Rules = Rules {
    nan: &[
        ("f64", Quieted),
        ("f32", Quieted),
        ("f16", SignedQuiet),
        ("bf16", SignedQuiet),
        ("e4m3", SignedCanonical),
        ("e5m2", SignedQuiet),
        ("e4m3fnuz", SignedQuiet),
        ("e5m2fnuz", SignedQuiet),
        ("e4m3b11fnuz", SignedQuiet),
        ("e2m3", SignedQuiet),
        ("e3m2", SignedQuiet),
        ("e2m1", SignedQuiet),
        ("ue8m0", SignedQuiet),
    ],
    pair_nan: &[],
    foreign: &[],
    no_nan: NoNanResult::NegativeZero,
    twice: |dst| dst.name == "bf16" || dst.name == "f16",
    e8m0_unrepresentable_nan: true,
    e8m0_lowest_binade_up: true,
};

impl Peer {
    /// Every peer.
    pub const ALL: [Peer; 3] = [Peer::MlDtypes, Peer::Torch, Peer::Xla];

    /// The name a caller gives (`ml_dtypes`, `torch`, `xla`).
    pub fn name(&self) -> &'static str {
        match self {
            Peer::MlDtypes => "ml_dtypes",
            Peer::Torch => "torch",
            Peer::Xla => "xla",
        }
    }

    /// The version whose behaviour the rules describe.
    pub fn version(&self) -> &'static str {
        match self {
            Peer::MlDtypes => "ml_dtypes 0.7.0",
            Peer::Torch => "PyTorch 2.15 (CPU)",
            Peer::Xla => "JAX 0.12 (XLA:CPU)",
        }
    }

    /// The peer of a name: [`Peer::name`], or `jax` for [`Peer::Xla`].
    ///
    /// ```
    /// use gpucvt::compat::Peer;
    /// assert_eq!("jax".parse::<Peer>().unwrap(), Peer::Xla);
    /// assert!("tensorflow".parse::<Peer>().unwrap_err().to_string().contains("ml_dtypes, torch, xla"));
    /// ```
    pub fn from_name(name: &str) -> Option<Peer> {
        match name.to_ascii_lowercase().as_str() {
            "ml_dtypes" | "ml-dtypes" => Some(Peer::MlDtypes),
            "torch" | "pytorch" => Some(Peer::Torch),
            "xla" | "jax" => Some(Peer::Xla),
            _ => None,
        }
    }

    fn rules(&self) -> &'static Rules {
        match self {
            Peer::MlDtypes => &ML_DTYPES,
            Peer::Torch => &TORCH,
            Peer::Xla => &XLA,
        }
    }

    /// The peer's conversion of `src` to `dst`: one core conversion, or two where the peer
    /// rounds an `f64` to `f32` first. An error names the format the peer has no cast for;
    /// integer and fixed-point formats are outside these rules.
    pub fn chain(&self, src: &Format, dst: &Format) -> Result<Chain, Error> {
        let rules = self.rules();
        for f in [src, dst] {
            if !matches!(f.layout, Layout::Float(_)) || !rules.nan.iter().any(|(n, _)| *n == f.name)
            {
                return Err(Error::Compat {
                    message: format!(
                        "{} has no conversion between {} and {} to reproduce: it covers {}",
                        self.version(),
                        src.name,
                        dst.name,
                        rules
                            .nan
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
        if rules.foreign.contains(&src.name) && rules.foreign.contains(&dst.name) {
            return Err(Error::Compat {
                message: format!(
                    "{} has no conversion of its own between {} and {}: NumPy's cast is that",
                    self.version(),
                    src.name,
                    dst.name
                ),
            });
        }
        let last_src = if *src == F64 && (rules.twice)(dst) {
            F32
        } else {
            *src
        };
        let last = self.step(&last_src, dst);
        if last_src == *src {
            return Ok(Chain::single(last));
        }
        let first = self.step(src, &F32);
        Ok(Chain::new(first, last).expect("internal error: the steps meet at f32"))
    }

    /// One rounding of the peer: to nearest, its NaN rules.
    fn step(&self, src: &Format, dst: &Format) -> Conversion {
        let rules = self.rules();
        let pair = rules
            .pair_nan
            .iter()
            .find(|(s, d, _)| *s == src.name && *d == dst.name);
        let nan = match pair {
            Some((_, _, r)) => *r,
            None => rules
                .nan
                .iter()
                .find(|(n, _)| *n == dst.name)
                .map_or(NanResult::Canonical, |(_, r)| *r),
        };
        let e8m0 = dst.name == "ue8m0";
        let policy = Policy {
            nan,
            no_nan: rules.no_nan,
            unrepresentable_nan: e8m0 && rules.e8m0_unrepresentable_nan,
            lowest_binade_up: e8m0 && rules.e8m0_lowest_binade_up,
            ..Policy::default()
        };
        // Every peer rounds `ue8m0` to nearest with ties up (away from zero: a magnitude).
        let rounding = if e8m0 { Rounding::RNA } else { Rounding::RN };
        Conversion::new(*src, *dst, rounding, policy)
    }
}

impl std::str::FromStr for Peer {
    type Err = Error;

    fn from_str(s: &str) -> Result<Peer, Error> {
        Peer::from_name(s).ok_or_else(|| Error::Compat {
            message: format!(
                "unknown peer {s:?}: expected one of {}",
                Peer::ALL.map(|p| p.name()).join(", ")
            ),
        })
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
