//! The option groups several subcommands share (flattened into their `Args`), the option
//! types with a fixed set of values, and the value parsers that turn option text into the
//! library's types, so that clap reports a bad value before a subcommand runs.
//!
//! Value sets that are data in the library (rounding-mode names, PTX rounding modifiers, Tile
//! IR versions) are listed from the library, not copied here. Help text that depends on the
//! subcommand is set where the group is flattened (`mut_arg`).

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use gpucvt::core::convert::{IntNan, NanResult, Overflow};
use gpucvt::core::round::Rounding;
use gpucvt::ptx::target::{ParseError, PtxVersion, Target};
use gpucvt::ptx::RoundMod;
use gpucvt::tile::eval::Semantics;
use gpucvt::tile::types::SpecVersion;
use gpucvt::visa::cr0::Cr0;
use std::ffi::{OsStr, OsString};

/// The PTX modifiers that clamp, flush and fix signs: `--satfinite --sat --relu --ftz --pzo`.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct PolicyFlags {
    /// .satfinite: infinities and overflows give the largest finite value of their sign.
    #[arg(long)]
    pub satfinite: bool,
    /// .sat: clamp float results to [0, 1] (NaN gives +0); integer results to their range.
    #[arg(long)]
    pub sat: bool,
    /// .relu: negative float results (and -0) become +0 (float destinations only).
    #[arg(long)]
    pub relu: bool,
    /// .ftz: flush subnormal inputs and subnormal results to zero.
    #[arg(long)]
    pub ftz: bool,
    /// .pzo: a -0 float result becomes +0 (float destinations only).
    #[arg(long)]
    pub pzo: bool,
}

/// A `--target`: a PTX target (`sm_90a`) or an AMD one (`gfx950`, for `eval` of AMD
/// instructions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnyTarget {
    /// An NVIDIA PTX target.
    Ptx(Target),
    /// An AMD target.
    Amd(gpucvt::amd::Target),
}

/// `--target`: the PTX target whose legality rules apply.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TargetArg {
    /// PTX target whose legality rules apply (sm_80, sm_90a, …).
    #[arg(long, value_name = "SM", value_parser = target)]
    pub target: Option<AnyTarget>,
}

impl TargetArg {
    /// The PTX target, if one was given.
    ///
    /// # Errors
    /// An AMD target, which `what` does not take.
    pub fn ptx(&self, what: &str) -> Result<Option<Target>, crate::common::CliError> {
        match self.target {
            None => Ok(None),
            Some(AnyTarget::Ptx(t)) => Ok(Some(t)),
            Some(AnyTarget::Amd(t)) => Err(crate::common::CliError(format!(
                "--target {t} is an AMD target; {what} takes a PTX target (sm_80, sm_90a, …)"
            ))),
        }
    }
}

/// `--target` and `--ptx-version`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PtxTarget {
    #[command(flatten)]
    pub target: TargetArg,
    /// PTX ISA version for the legality check (default: the newest).
    #[arg(long = "ptx-version", value_name = "X.Y", value_parser = ptx_version)]
    pub ptx_version: Option<PtxVersion>,
}

impl PtxTarget {
    /// `--target`, if a PTX one was given.
    pub fn target(&self) -> Option<Target> {
        match self.target.target {
            Some(AnyTarget::Ptx(t)) => Some(t),
            _ => None,
        }
    }

    /// `--target`, if an AMD one was given.
    pub fn amd_target(&self) -> Option<gpucvt::amd::Target> {
        match self.target.target {
            Some(AnyTarget::Amd(t)) => Some(t),
            _ => None,
        }
    }

    /// Whether `--target` or `--ptx-version` was given.
    pub fn given(&self) -> bool {
        self.target.target.is_some() || self.ptx_version.is_some()
    }

    /// The evaluation options of an instruction (`eval`, `diff`), with the vISA control
    /// register if given.
    pub fn instr_options(&self, cr0: Option<Cr0>) -> gpucvt::instr::Options {
        let mut o = gpucvt::instr::Options {
            target: self.target(),
            version: self.ptx_version,
            amd_target: self.amd_target(),
            ..Default::default()
        };
        if let Some(c) = cr0 {
            o.cr0 = c;
        }
        o
    }
}

/// `--threads` of the kernels (`verify`, `sweep`).
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct Threads {
    /// Worker threads (default: one per core).
    #[arg(long = "threads", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
}

impl Threads {
    /// The number of worker threads, 0 for one per core (rayon's default).
    pub fn count(&self) -> usize {
        self.threads.map_or(0, |n| n as usize)
    }
}

/// `--tile-version`: the Tile IR specification version.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TileVersion {
    /// Tile IR specification version the op is verified at (default: the newest).
    #[arg(long = "tile-version", value_name = "X.Y", value_parser = tile_version())]
    pub tile_version: Option<SpecVersion>,
}

/// The Tile IR options of `eval` and `run`: `--semantics` and `--tile-version`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TileOptions {
    /// Tile IR: the semantics, `tileiras` (default: the PTX NVIDIA's compiler emits) or
    /// `spec` (the specification text: single roundings, undefined results marked).
    #[arg(long, value_name = "SEMANTICS", value_enum, ignore_case = true)]
    pub semantics: Option<SemanticsArg>,
    #[command(flatten)]
    pub version: TileVersion,
}

impl TileOptions {
    /// `--semantics`, or the default (`tileiras`).
    pub fn semantics(&self) -> Semantics {
        self.semantics.map_or(Semantics::default(), Semantics::from)
    }

    /// Whether `--semantics` or `--tile-version` was given.
    pub fn given(&self) -> bool {
        self.semantics.is_some() || self.version.tile_version.is_some()
    }
}

/// `--semantics`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemanticsArg {
    // The specification text: single correctly rounded conversions; undefined results
    // marked.
    Spec,
    // What tileiras emits: the PTX cvt sequences.
    Tileiras,
}

impl From<SemanticsArg> for Semantics {
    fn from(s: SemanticsArg) -> Semantics {
        match s {
            SemanticsArg::Spec => Semantics::Spec,
            SemanticsArg::Tileiras => Semantics::Tileiras,
        }
    }
}

/// `round --overflow`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverflowArg {
    // Infinity or the largest finite value, by rounding direction (IEEE 754).
    Ieee,
    // Always the largest finite value of the same sign.
    Saturate,
    // Always infinity (NaN without infinity), whatever the rounding direction (AMD FP8).
    Infinite,
}

impl From<OverflowArg> for Overflow {
    fn from(o: OverflowArg) -> Overflow {
        match o {
            OverflowArg::Ieee => Overflow::Ieee,
            OverflowArg::Saturate => Overflow::Saturate,
            OverflowArg::Infinite => Overflow::Infinite,
        }
    }
}

/// `round --nan`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum NanArg {
    // The destination's canonical NaN.
    Canonical,
    // Keep the sign and the payload.
    Payload,
}

impl From<NanArg> for NanResult {
    fn from(n: NanArg) -> NanResult {
        match n {
            NanArg::Canonical => NanResult::Canonical,
            NanArg::Payload => NanResult::Payload,
        }
    }
}

/// `round --int-nan`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntNanArg {
    // Zero.
    Zero,
    // 1 << (width - 1).
    Highbit,
}

impl From<IntNanArg> for IntNan {
    fn from(n: IntNanArg) -> IntNan {
        match n {
            IntNanArg::Zero => IntNan::Zero,
            IntNanArg::Highbit => IntNan::HighBit,
        }
    }
}

/// `convert --scale`: the block-scale format.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleFormat {
    // Unsigned power of two, 8-bit exponent (the MX scale).
    Ue8m0,
    // e4m3 with the sign clear (NVFP4's block scale).
    Ue4m3,
    // f32: amax / max of the element format.
    F32,
    // bf16: amax / max, rounded to bf16.
    Bf16,
}

impl From<ScaleFormat> for gpucvt_tensor::scaling::ScaleFormat {
    fn from(f: ScaleFormat) -> Self {
        use gpucvt_tensor::scaling::ScaleFormat as F;
        match f {
            ScaleFormat::Ue8m0 => F::Ue8m0,
            ScaleFormat::Ue4m3 => F::Ue4m3,
            ScaleFormat::F32 => F::F32,
            ScaleFormat::Bf16 => F::Bf16,
        }
    }
}

/// `convert --scale-rule`: how a ue8m0 block scale is chosen (torchao's names).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleRuleArg {
    // floor(log2(amax)) - emax, the OCP MX spec (alias ocp).
    #[value(alias = "ocp")]
    Floor,
    // The smallest power of two not below amax / max: nothing saturates (alias rp).
    #[value(alias = "rp")]
    Rceil,
    // ceil(log2(amax)) - emax.
    Ceil,
    // floor(log2(amax rounded to the element's mantissa bits)) - emax.
    Even,
}

impl From<ScaleRuleArg> for gpucvt_tensor::ScaleRule {
    fn from(r: ScaleRuleArg) -> Self {
        use gpucvt_tensor::ScaleRule as R;
        match r {
            ScaleRuleArg::Floor => R::Floor,
            ScaleRuleArg::Rceil => R::Rceil,
            ScaleRuleArg::Ceil => R::Ceil,
            ScaleRuleArg::Even => R::Even,
        }
    }
}

/// `convert --scale-layout`: where the block scales go.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleLayoutArg {
    // Row-major, one per block.
    Rows,
    // cuBLASLt/CUTLASS's 128x4 swizzled tiles.
    Swizzled,
}

/// A value of a set the library names: the help and clap's error list `names`, and `lookup`
/// (the library's own reader, which may take other spellings too) reads the text.
#[derive(Clone)]
pub struct Named<T> {
    names: Vec<&'static str>,
    lookup: fn(&str) -> Option<T>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Named<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        (self.lookup)(&text).ok_or_else(|| {
            let mut e = clap::Error::new(ErrorKind::InvalidValue).with_cmd(cmd);
            let arg = arg.map_or_else(|| "...".to_string(), ToString::to_string);
            e.insert(ContextKind::InvalidArg, ContextValue::String(arg));
            e.insert(
                ContextKind::InvalidValue,
                ContextValue::String(text.into_owned()),
            );
            e.insert(
                ContextKind::ValidValue,
                ContextValue::Strings(self.names.iter().map(|n| n.to_string()).collect()),
            );
            e
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|n| PossibleValue::new(*n))))
    }
}

/// `round --mode`: the core rounding names (`rn`, …, `rs`, `rni`, …), any case.
pub fn rounding() -> Named<Rounding> {
    Named {
        names: Rounding::NAMES.to_vec(),
        lookup: |text| {
            Rounding::NAMES
                .iter()
                .find(|n| n.eq_ignore_ascii_case(text))
                .and_then(|n| Rounding::from_name(n))
        },
    }
}

/// `convert --recipe`: the library's recipe names.
pub fn recipe() -> Named<String> {
    Named {
        names: gpucvt_tensor::scaling::Recipe::names().collect(),
        lookup: |text| {
            gpucvt_tensor::scaling::Recipe::named(&text.to_ascii_lowercase())
                .map(|r| r.name.to_string())
        },
    }
}

/// `convert --mode`: the PTX rounding modifiers, any case.
pub fn round_mod() -> Named<RoundMod> {
    Named {
        names: RoundMod::ALL.iter().map(|r| r.name()).collect(),
        lookup: |text| {
            RoundMod::ALL
                .into_iter()
                .find(|r| r.name().eq_ignore_ascii_case(text))
        },
    }
}

/// `--tile-version`: the specification versions the library models.
pub fn tile_version() -> Named<SpecVersion> {
    Named {
        names: SpecVersion::ALL.iter().map(|v| v.name()).collect(),
        lookup: SpecVersion::from_name,
    }
}

/// `--target`: the library's parser and its typed error (clap prints its message).
pub fn target(text: &str) -> Result<AnyTarget, String> {
    if gpucvt::amd::types::Target::looks_like(text) {
        return text
            .parse()
            .map(AnyTarget::Amd)
            .map_err(|e: gpucvt::amd::types::UnknownTarget| e.to_string());
    }
    text.parse::<Target>()
        .map(AnyTarget::Ptx)
        .map_err(|e: ParseError| e.to_string())
}

/// `--ptx-version`.
pub fn ptx_version(text: &str) -> Result<PtxVersion, ParseError> {
    text.parse()
}

/// The command line with every operand that starts with `-` (`-1e-8`, `-inf`, `-0x1p0`)
/// kept an operand: clap reads such a word as short options unless it is a plain decimal,
/// and an operand list that takes any hyphenated word would swallow the options after it
/// (`--json`). When a word after the subcommand starts with `-`, is not `-` or `--`, and its
/// first letter is none of the subcommand's short options (`-h`, `-o`), the words are
/// reordered as `SUBCOMMAND OPTIONS… -- OPERANDS…`, each option with its value, so that
/// clap reads the same options and the same operands in the same order. Any other command
/// line is returned as it is.
pub fn hyphen_operands(cli: &clap::Command, argv: Vec<OsString>) -> Vec<OsString> {
    let mut cli = cli.clone();
    // Builds the generated `--help` / `-h` into every subcommand.
    cli.build();
    let Some(sub) = argv
        .get(1)
        .and_then(|a| a.to_str())
        .and_then(|name| cli.find_subcommand(name))
    else {
        return argv;
    };
    if sub.get_positionals().next().is_none() {
        return argv;
    }
    let mut options = Vec::new();
    let mut operands = Vec::new();
    let mut hyphenated = false;
    let mut words = argv[2..].iter();
    while let Some(w) = words.next() {
        let bytes = w.as_encoded_bytes();
        if bytes == b"--" {
            operands.extend(words.by_ref().cloned());
            break;
        }
        if let Some(long) = bytes.strip_prefix(b"--") {
            options.push(w.clone());
            if !long.contains(&b'=') {
                let takes_value = sub.get_arguments().any(|a| {
                    a.get_action().takes_values()
                        && (a.get_long().is_some_and(|l| l.as_bytes() == long)
                            || a.get_all_aliases()
                                .is_some_and(|al| al.iter().any(|x| x.as_bytes() == long)))
                });
                if takes_value {
                    options.extend(words.next().cloned());
                }
            }
            continue;
        }
        if bytes.len() > 1 && bytes[0] == b'-' {
            let first = w.to_str().and_then(|s| s[1..].chars().next());
            let short = first.and_then(|c| sub.get_arguments().find(|a| a.get_short() == Some(c)));
            if let Some(a) = short {
                options.push(w.clone());
                // `-o FILE` (a value glued on, `-oFILE`, needs no next word).
                if a.get_action().takes_values() && bytes.len() == 2 {
                    options.extend(words.next().cloned());
                }
                continue;
            }
            hyphenated = true;
        }
        operands.push(w.clone());
    }
    if !hyphenated {
        return argv;
    }
    let mut out = argv[..2].to_vec();
    out.extend(options);
    out.push(OsString::from("--"));
    out.extend(operands);
    out
}

#[cfg(test)]
mod tests {
    use super::hyphen_operands;
    use std::ffi::OsString;

    fn cli() -> clap::Command {
        clap::Command::new("t")
            .subcommand(
                clap::Command::new("eval")
                    .arg(clap::Arg::new("args").num_args(0..))
                    .arg(
                        clap::Arg::new("json")
                            .long("json")
                            .action(clap::ArgAction::SetTrue),
                    )
                    .arg(clap::Arg::new("target").long("target").visible_alias("sm")),
            )
            .subcommand(
                clap::Command::new("convert")
                    .arg(clap::Arg::new("input"))
                    .arg(clap::Arg::new("output").short('o')),
            )
            .subcommand(clap::Command::new("formats"))
    }

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    fn join(v: Vec<OsString>) -> String {
        v.iter()
            .map(|w| w.to_str().unwrap())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn hyphenated_operands_go_after_the_options() {
        let t = |line: &str| join(hyphen_operands(&cli(), words(line)));
        assert_eq!(
            t("t eval cvt.rn.f16.f32 -1e-8 --json"),
            "t eval --json -- cvt.rn.f16.f32 -1e-8"
        );
        assert_eq!(
            t("t eval cvt -inf --target sm_90 -0x1p0 --json"),
            "t eval --target sm_90 --json -- cvt -inf -0x1p0"
        );
        assert_eq!(
            t("t eval cvt -inf --sm sm_90 --target=-x"),
            "t eval --sm sm_90 --target=-x -- cvt -inf"
        );
        // An option's value is its value, whatever it looks like.
        assert_eq!(
            t("t eval --target -1 cvt -2"),
            "t eval --target -1 -- cvt -2"
        );
        // Words after `--` stay operands; the short options keep their meaning.
        assert_eq!(t("t eval cvt -1 -- --json"), "t eval -- cvt -1 --json");
        assert_eq!(t("t eval cvt -nan -h"), "t eval -h -- cvt -nan");
        assert_eq!(t("t convert -x -o -y"), "t convert -o -y -- -x");
        // Unchanged: nothing hyphenated, no operands, or no such subcommand.
        for same in [
            "t eval cvt 1.5 --json",
            "t eval cvt -- -inf",
            "t eval -h",
            "t convert a -o b",
            "t formats -x",
            "t nosuch -x",
            "t",
        ] {
            assert_eq!(t(same), same);
        }
    }
}
