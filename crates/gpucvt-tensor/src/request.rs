//! The options of `gpucvt convert` as plain values, checked and turned into [`Options`]: one
//! builder for the CLI and the Python package's `convert_file`, so that both take the same
//! options and fail with the same messages (which name the CLI's options).

use crate::{BlockScaling, Error, Options, Result};
use gpucvt::ptx;
use gpucvt_core::format::Format;
use gpucvt_core::names::NameError;
use gpucvt_core::round::{Direction, Rounding};

/// Looks up a format given to an option (`"--to"`, `"--from"`, `"values"`): a catalogue
/// name or another tool's name for it ([`gpucvt_core::names`]). An unknown name is
/// [`Error::Invalid`] with the nearest name and the list of names; the CLI and the Python
/// package both report it.
///
/// ```
/// let e = gpucvt_tensor::lookup_format("e4m3f", "--to").unwrap_err();
/// assert!(e.to_string().starts_with("unknown format \"e4m3f\" for --to (did you mean"));
/// assert_eq!(gpucvt_tensor::lookup_format("F8_E4M3", "--to").unwrap().name, "e4m3");
/// ```
pub fn lookup_format(name: &str, option: &str) -> Result<&'static Format> {
    Format::from_name(name).map_err(|e| {
        Error::Invalid(match &e {
            NameError::Unknown { name, suggestion } => {
                let hint = match suggestion {
                    Some((s, c)) if s == c => format!(" (did you mean {s:?}?)"),
                    Some((s, c)) => format!(" (did you mean {s:?}, that is {c}?)"),
                    None => String::new(),
                };
                format!(
                    "unknown format {name:?} for {option}{hint}; accepted: {}, and the ml_dtypes, safetensors and MLIR names the README lists",
                    Format::names().collect::<Vec<_>>().join(", ")
                )
            }
            _ => format!("{option}: {e}"),
        })
    })
}

/// What `gpucvt convert` is asked to do, before it is checked.
#[derive(Clone, Debug)]
pub struct ConvertRequest {
    /// `--to`: the destination format's name (or `cvt`, exactly one of them).
    pub to: Option<String>,
    /// `--mode` (with `to`).
    pub mode: ptx::RoundMod,
    /// `--satfinite` (with `to`).
    pub satfinite: bool,
    /// `--sat` (with `to`).
    pub sat: bool,
    /// `--relu` (with `to`).
    pub relu: bool,
    /// `--ftz` (with `to`).
    pub ftz: bool,
    /// `--pzo` (with `to`).
    pub pzo: bool,
    /// `--rbits-width` (with `to` and `mode` `rs`).
    pub rbits_width: Option<u32>,
    /// `--cvt`: a PTX cvt form instead of `to` and its modifiers.
    pub cvt: Option<String>,
    /// `--from`: the element format of raw input (or the reinterpreted `.npy` container).
    pub from: Option<String>,
    /// `--tensor` patterns.
    pub tensors: Vec<String>,
    /// `--exclude` patterns.
    pub exclude: Vec<String>,
    /// `--strict`.
    pub strict: bool,
    /// `--threads` (0: one per core).
    pub threads: usize,
    /// `--seed`.
    pub seed: u64,
    /// `--block` with `--scale-method`.
    pub block: Option<BlockScaling>,
}

impl Default for ConvertRequest {
    fn default() -> ConvertRequest {
        ConvertRequest {
            to: None,
            mode: ptx::RoundMod::Rn,
            satfinite: false,
            sat: false,
            relu: false,
            ftz: false,
            pzo: false,
            rbits_width: None,
            cvt: None,
            from: None,
            tensors: Vec::new(),
            exclude: Vec::new(),
            strict: false,
            threads: 0,
            seed: 0,
            block: None,
        }
    }
}

/// Checked options and the conversion's label (`e4m3 rn .satfinite`, or the `--cvt` form as
/// gpucvt spells it).
pub struct Built {
    /// The options of [`crate::convert_file`] and [`crate::plan_file`].
    pub options: Options,
    /// The label the CLI prints and its `--json` gives as `conversion`.
    pub label: String,
}

impl ConvertRequest {
    /// Checks the request and builds its [`Options`]; a request that cannot be honoured is
    /// [`Error::Invalid`] with the message for the user.
    pub fn build(&self) -> Result<Built> {
        let (recipe, label, integers) = self.recipe()?;
        let mut options = Options::new(recipe);
        options.integers = integers;
        options.exclude = self.exclude.clone();
        options.strict = self.strict;
        options.from = match &self.from {
            Some(f) => Some(*lookup_format(f, "--from")?),
            None => None,
        };
        options.tensors = self.tensors.clone();
        options.threads = self.threads;
        options.seed = self.seed;
        options.block = self.block;
        Ok(Built { options, label })
    }

    /// The conversion of each tensor, its label, and whether it is meant for integer sources
    /// (a `--cvt` form from an integer type).
    fn recipe(&self) -> Result<(crate::Recipe, String, bool)> {
        if let Some(text) = &self.cvt {
            let instr = ptx::parse_instruction(text).map_err(|diags| {
                let msgs: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
                Error::Invalid(format!("--cvt {text:?}: {}", msgs.join("; ")))
            })?;
            let form = instr.form;
            if !ptx::legal_somewhere(&form) {
                return Err(Error::Invalid(format!(
                    "--cvt {text:?} is not a legal PTX form on any target (see gpucvt check / gpucvt eval)"
                )));
            }
            let conv = ptx::eval::lane_conversion(&form)
                .map_err(|e| Error::Invalid(format!("--cvt {text:?}: {e}")))?;
            let spelled = form.spelling();
            let label = spelled.clone();
            let integers = conv.src.is_integer();
            return Ok((
                Box::new(move |src: &Format| {
                    if *src == conv.src {
                        Ok(conv)
                    } else {
                        Err(Error::Refused(format!(
                            "{spelled} converts {} elements, but the data is {src}",
                            conv.src
                        )))
                    }
                }),
                label,
                integers,
            ));
        }
        let Some(to) = &self.to else {
            return Err(Error::Invalid(
                "say what to convert to: --to FMT [--mode MODE --satfinite …] or --cvt 'cvt.…'"
                    .to_string(),
            ));
        };
        let dst = *lookup_format(to, "--to")?;
        let mode = self.mode;
        let mut rounding = Rounding::from_name(mode.name()).ok_or_else(|| {
            Error::Invalid(format!("--mode {}: not a core rounding", mode.name()))
        })?;
        if let Direction::Stochastic { .. } = rounding.direction {
            let width = self
                .rbits_width
                .unwrap_or(ptx::eval::default_rbits_width(&dst));
            rounding = Rounding::stochastic(0, width);
        } else if self.rbits_width.is_some() {
            return Err(Error::Invalid(
                "--rbits-width is only valid with --mode rs".to_string(),
            ));
        }
        let mut label = format!("{} {}", dst.name, rounding.name());
        for (on, name) in [
            (self.ftz, "ftz"),
            (self.sat, "sat"),
            (self.relu, "relu"),
            (self.satfinite, "satfinite"),
            (self.pzo, "pzo"),
        ] {
            if on {
                label.push_str(&format!(" .{name}"));
            }
        }
        // The modifiers as a PTX form; its types are each tensor's pair.
        let mut form = ptx::CvtForm::new(ptx::PtxType::F32, ptx::PtxType::F32);
        form.rounding = Some(mode);
        form.ftz = self.ftz;
        form.sat = self.sat;
        form.relu = self.relu;
        form.satfinite = self.satfinite;
        form.pzo = self.pzo;
        Ok((
            Box::new(move |src: &Format| {
                ptx::eval::element_conversion(&form, rounding, src, &dst)
                    .map_err(|e| Error::Refused(e.to_string()))
            }),
            label,
            false,
        ))
    }
}
