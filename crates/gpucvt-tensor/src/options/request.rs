//! The options of `gpucvt convert` as plain values, checked and turned into [`Options`]: one
//! builder for the CLI and the Python package's `convert_file`, so that both take the same
//! options and fail with the same messages (which name the CLI's options).

use crate::scaling::{Block, Recipe, ScaleFormat, ScaleLayout};
use crate::{BlockScaling, Error, Options, Result, ScaleRule};
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
                    "unknown format {name:?} for {option}{hint}; accepted: {}, and their ml_dtypes, safetensors and MLIR names",
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
    /// `--block` with `--scale-rule`.
    pub block: Option<BlockScaling>,
    /// `--force`: replace a read-only output.
    pub force: bool,
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
            force: false,
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
        options.force = self.force;
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

/// The block-scaling options of `gpucvt convert` (`--recipe`, `--block`, `--axis`,
/// `--scale`, `--scale-rule`, `--scale-layout`, `--scale-2`) as text, checked and built into
/// a [`BlockScaling`] with the CLI's messages: one reader for the CLI and the Python
/// package.
#[derive(Clone, Debug, Default)]
pub struct ScalingRequest {
    /// `--recipe`.
    pub recipe: Option<String>,
    /// `--block`: `N`, `RxC`, `row` or `tensor`.
    pub block: Option<String>,
    /// `--axis`.
    pub axis: Option<i64>,
    /// `--scale`: `ue8m0`, `ue4m3`, `f32` or `bf16`.
    pub scale: Option<String>,
    /// `--scale-rule`: `floor`, `rceil`, `ceil`, `even`
    /// (or `ocp`, `rp`).
    pub rule: Option<String>,
    /// `--scale-layout`: `rows` or `swizzled`.
    pub layout: Option<String>,
    /// `--scale-2`.
    pub second_level: bool,
}

impl ScalingRequest {
    /// The recipe named (an unknown name is [`Error::Invalid`] listing the names).
    pub fn recipe(&self) -> Result<Option<&'static Recipe>> {
        match &self.recipe {
            None => Ok(None),
            Some(name) => Recipe::named(&name.to_ascii_lowercase())
                .map(Some)
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "unknown recipe {name:?} for --recipe; accepted: {}",
                        Recipe::names().collect::<Vec<_>>().join(", ")
                    ))
                }),
        }
    }

    /// The block scaling asked for (`None` without `--block` or `--recipe`; the other
    /// options without them are an error), checked.
    ///
    /// ```
    /// use gpucvt_tensor::ScalingRequest;
    /// let r = ScalingRequest { block: Some("32".into()), rule: Some("rp".into()), ..Default::default() };
    /// assert_eq!(r.build().unwrap().unwrap().describe(),
    ///            "block=32 axis=-1 scale=ue8m0 rule=rceil second_level=false layout=rows");
    /// let bad = ScalingRequest { block: Some("16".into()), scale: Some("f32".into()), rule: Some("ceil".into()), ..Default::default() };
    /// assert!(bad.build().unwrap_err().to_string().starts_with("--scale-rule chooses ue8m0"));
    /// let twice = ScalingRequest { recipe: Some("nvfp4".into()), block: Some("32".into()), ..Default::default() };
    /// assert!(twice.build().unwrap_err().to_string().starts_with("--recipe nvfp4 sets --block"));
    /// ```
    pub fn build(&self) -> Result<Option<BlockScaling>> {
        let mut b = match (self.recipe()?, &self.block) {
            (Some(r), _) => {
                // A recipe fixes these: a second value would be silently ignored.
                let fixed = [
                    (self.block.is_some(), "--block"),
                    (self.scale.is_some(), "--scale"),
                    (self.second_level, "--scale-2"),
                ];
                if let Some((_, name)) = fixed.iter().find(|g| g.0) {
                    return Err(Error::Invalid(format!(
                        "--recipe {} sets {name}; give the options one by one instead of the recipe to change it",
                        r.name
                    )));
                }
                r.scaling
            }
            (None, Some(text)) => BlockScaling {
                block: Block::parse(text)?,
                ..BlockScaling::mx(1, ScaleRule::Floor)
            },
            (None, None) => {
                let given = [
                    (self.axis.is_some(), "--axis"),
                    (self.scale.is_some(), "--scale"),
                    (self.rule.is_some(), "--scale-rule"),
                    (self.layout.is_some(), "--scale-layout"),
                    (self.second_level, "--scale-2"),
                ];
                if let Some((_, name)) = given.iter().find(|g| g.0) {
                    return Err(Error::Invalid(format!("{name} needs --block or --recipe")));
                }
                return Ok(None);
            }
        };
        if let Some(f) = &self.scale {
            b.format = ScaleFormat::from_name(&f.to_ascii_lowercase()).ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown scale format {f:?} for --scale; accepted: ue8m0, ue4m3, f32, bf16"
                ))
            })?;
        }
        if let Some(r) = &self.rule {
            let rule = ScaleRule::from_name(&r.to_ascii_lowercase()).ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown scale rule {r:?} for --scale-rule; accepted: floor (ocp), rceil (rp), ceil, even"
                ))
            })?;
            if b.format != ScaleFormat::Ue8m0 {
                return Err(Error::Invalid(format!(
                    "--scale-rule chooses ue8m0 (power-of-two) scales; {0} scales are amax / max rounded to {0}",
                    b.format.name()
                )));
            }
            b.rule = rule;
        }
        if let Some(ax) = self.axis {
            b.axis = ax;
        }
        if let Some(l) = &self.layout {
            b.layout = match l.to_ascii_lowercase().as_str() {
                "rows" => ScaleLayout::Rows,
                "swizzled" => ScaleLayout::Swizzled,
                _ => {
                    return Err(Error::Invalid(format!(
                        "unknown scale layout {l:?} for --scale-layout; accepted: rows, swizzled"
                    )))
                }
            };
        }
        b.second_level |= self.second_level;
        b.check()?;
        Ok(Some(b))
    }

    /// The options of a dequantization (`--dequantize`): the block options describe the
    /// input's scales. A recipe gives the element format (`from`, if given too, must agree)
    /// and the blocking; `--block` the blocking; without either, `--scale` alone says what
    /// the scales are and the blocking is read off the file, and the other block options
    /// are an error (they would be ignored).
    ///
    /// ```
    /// use gpucvt_tensor::ScalingRequest;
    /// let r = ScalingRequest { recipe: Some("nvfp4".into()), ..Default::default() };
    /// let o = r.dequantize(gpucvt_core::format::F64, None, 0).unwrap();
    /// assert_eq!((o.elements.unwrap().name, o.block.unwrap().second_level), ("e2m1", true));
    /// let clash = r.dequantize(gpucvt_core::format::F32, Some("e4m3"), 0).unwrap_err();
    /// assert!(clash.to_string().starts_with("--recipe nvfp4 quantizes to e2m1"));
    /// let axis = ScalingRequest { axis: Some(0), ..Default::default() };
    /// assert_eq!(axis.dequantize(gpucvt_core::format::F32, None, 0).unwrap_err().to_string(),
    ///            "--axis needs --block or --recipe");
    /// ```
    pub fn dequantize(
        &self,
        to: Format,
        from: Option<&str>,
        threads: usize,
    ) -> Result<crate::DequantizeOptions> {
        let recipe = self.recipe()?;
        let mut elements = match from {
            Some(f) => Some(*lookup_format(f, "--from")?),
            None => None,
        };
        if let Some(r) = recipe {
            let rf = *lookup_format(r.to, "--recipe")?;
            match elements {
                Some(e) if e != rf => {
                    return Err(Error::Invalid(format!(
                        "--recipe {} quantizes to {}, but --from says {}; give one of them",
                        r.name, rf.name, e.name
                    )))
                }
                _ => elements = Some(rf),
            }
        }
        let (block, scale) = if recipe.is_some() || self.block.is_some() {
            (self.build()?, None)
        } else {
            ScalingRequest {
                scale: None,
                ..self.clone()
            }
            .build()?;
            let scale = match &self.scale {
                Some(f) => Some(ScaleFormat::from_name(&f.to_ascii_lowercase()).ok_or_else(
                    || {
                        Error::Invalid(format!(
                            "unknown scale format {f:?} for --scale; accepted: ue8m0, ue4m3, f32, bf16"
                        ))
                    },
                )?),
                None => None,
            };
            (None, scale)
        };
        Ok(crate::DequantizeOptions {
            to,
            block,
            elements,
            scale,
            threads,
            ..crate::DequantizeOptions::default()
        })
    }

    /// What the recipe stands for, with the options given beside it (`None` without a
    /// recipe).
    pub fn expansion(&self, mode: ptx::RoundMod) -> Result<Option<String>> {
        let Some(r) = self.recipe()? else {
            return Ok(None);
        };
        let Some(b) = self.build()? else {
            return Ok(None);
        };
        let mut s = crate::scaling::recipes::spell(r.to, r.satfinite, &b);
        if mode != ptx::RoundMod::Rn {
            s.push_str(&format!(" --mode {}", mode.name()));
        }
        Ok(Some(s))
    }
}
