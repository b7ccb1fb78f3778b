//! The options of a conversion as plain values, checked and turned into [`Options`]: one
//! builder for the CLI and the Python package's `convert_file`, so that both take the same
//! options and fail for the same reasons; a message that names options is an
//! [`Error::Option`], which each front end renders in its own spelling.

use crate::options::{msg, Message, Opt, Piece};
use crate::scaling::{Block, Recipe, ScaleFormat, ScaleLayout};
use crate::{BlockScaling, Error, Options, Result, ScaleRule};
use gpucvt::ptx;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Format;
use gpucvt_core::names::NameError;
use gpucvt_core::round::{Direction, Rounding};

/// Looks up a format given to an option (an [`Opt`], or a front end's own words for where
/// the name came from, such as `"values"`): a catalogue name or another tool's name for it
/// ([`gpucvt_core::names`]). An unknown name is [`Error::Option`] with the nearest name and
/// the list of names; the CLI and the Python package both report it.
///
/// ```
/// use gpucvt_tensor::options::Opt;
/// let e = gpucvt_tensor::lookup_format("e4m3f", Opt::To).unwrap_err();
/// assert!(e.to_string().starts_with("unknown format \"e4m3f\" for to (did you mean"));
/// assert_eq!(gpucvt_tensor::lookup_format("F8_E4M3", Opt::To).unwrap().name, "e4m3");
/// ```
pub fn lookup_format(name: &str, option: impl Into<Piece>) -> Result<&'static Format> {
    let option = option.into();
    Format::from_name(name).map_err(|e| {
        Error::Option(match &e {
            NameError::Unknown { name, suggestion } => {
                let hint = match suggestion {
                    Some((s, c)) if s == c => format!(" (did you mean {s:?}?)"),
                    Some((s, c)) => format!(" (did you mean {s:?}, that is {c}?)"),
                    None => String::new(),
                };
                msg![
                    format!("unknown format {name:?} for "),
                    option,
                    format!(
                        "{hint}; accepted: {}, and their ml_dtypes, safetensors and MLIR names",
                        Format::names().collect::<Vec<_>>().join(", ")
                    )
                ]
            }
            _ => msg![option, format!(": {e}")],
        })
    })
}

/// What a conversion is asked to do, before it is checked (the fields are the options of
/// their names, [`Opt`]).
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
    pub rbits_width: Option<i64>,
    /// `--cvt`: a PTX cvt form instead of `to` and its modifiers.
    pub cvt: Option<String>,
    /// `--from`: the element format of raw input (or the reinterpreted `.npy` container).
    pub from: Option<String>,
    /// `--tensor` patterns.
    pub tensors: Vec<String>,
    /// `--all`: every tensor, not only linear layers' weights.
    pub all: bool,
    /// `--exclude` patterns.
    pub exclude: Vec<String>,
    /// `--strict`.
    pub strict: bool,
    /// `--threads` (0: one per core).
    pub threads: usize,
    /// `--seed`.
    pub seed: u64,
    /// The block-scaling options, with the recipe (which sets `to` and `satfinite` too).
    pub scaling: ScalingRequest,
    /// `--force`: replace a read-only output.
    pub force: bool,
    /// `--layout`: the serving stack whose checkpoint layout the output follows.
    pub layout: Option<String>,
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
            all: false,
            exclude: Vec::new(),
            strict: false,
            threads: 0,
            seed: 0,
            scaling: ScalingRequest::default(),
            force: false,
            layout: None,
        }
    }
}

/// Checked options and the conversion's label (`e4m3 rn .satfinite`, the `cvt` form as
/// gpucvt spells it, or the recipe with the options it stands for).
pub struct Built {
    /// The options of [`crate::convert_file`] and [`crate::plan_file`].
    pub options: Options,
    /// The label a front end prints (and its summaries give as `conversion`), in its own
    /// spelling of the options a recipe stands for.
    pub label: Message,
}

impl ConvertRequest {
    /// Checks the request and builds its [`Options`]; a request that cannot be honoured is
    /// [`Error::Option`] (or [`Error::Invalid`]) with the message for the user.
    ///
    /// ```
    /// use gpucvt_tensor::{ConvertRequest, ScalingRequest};
    /// let r = ConvertRequest {
    ///     scaling: ScalingRequest { recipe: Some("mxfp8".into()), ..Default::default() },
    ///     ..Default::default()
    /// };
    /// assert_eq!(r.build()?.label.command_line(),
    ///            "recipe mxfp8: --to e4m3 --satfinite --block 32 --scale ue8m0 --scale-rule floor");
    /// let both = ConvertRequest { cvt: Some("cvt.rn.f16.f32".into()), satfinite: true, ..Default::default() };
    /// assert!(both.build().is_err());
    /// # Ok::<(), gpucvt_tensor::Error>(())
    /// ```
    pub fn build(&self) -> Result<Built> {
        let recipe = self.scaling.recipe()?;
        let block = self.scaling.build()?;
        if self.all && !self.tensors.is_empty() {
            return Err(Error::Option(msg![
                Opt::All,
                " converts every tensor: give it or ",
                Opt::Tensor,
                ", not both"
            ]));
        }
        self.check_exclusive(recipe)?;
        let (rule, mut label, integers) = self.recipe(recipe)?;
        if let (Some(r), Some(x)) = (recipe, self.scaling.expansion(self.mode)?) {
            label = msg![format!("recipe {}: ", r.name)];
            label.0.extend(x.0);
        }
        let recipe = rule;
        let mut options = Options::new(recipe);
        options.integers = integers;
        options.exclude = self.exclude.clone();
        options.strict = self.strict;
        options.from = match &self.from {
            Some(f) => Some(*lookup_format(f, Opt::From)?),
            None => None,
        };
        options.tensors = self.tensors.clone();
        options.all = self.all;
        options.threads = self.threads;
        options.seed = self.seed;
        options.block = block;
        options.force = self.force;
        if let Some(l) = &self.layout {
            options.layout = crate::options::Layout::named(l)?;
        }
        Ok(Built { options, label })
    }

    /// Exactly one of `to`, `cvt` and a recipe (`to` beside a recipe only naming its
    /// format); a `cvt` form carries its rounding and modifiers, so it takes none.
    fn check_exclusive(&self, recipe: Option<&Recipe>) -> Result<()> {
        if let (Some(r), Some(t)) = (recipe, &self.to) {
            let f = lookup_format(t, Opt::To)?;
            if f.name != r.to {
                return Err(Error::Option(msg![
                    (Opt::Recipe, r.name),
                    format!(" converts to {}, not {}: leave ", r.to, f.name),
                    Opt::To,
                    " out with ",
                    Opt::Recipe
                ]));
            }
        }
        let given = [
            (self.to.is_some(), Opt::To),
            (self.cvt.is_some(), Opt::Cvt),
            (recipe.is_some(), Opt::Recipe),
        ];
        let n =
            given.iter().filter(|g| g.0).count() - (self.to.is_some() && recipe.is_some()) as usize;
        if n == 0 {
            return Err(Error::Option(msg![
                "say what to convert to: ",
                (Opt::To, "FMT"),
                " (with its rounding and modifiers), ",
                (Opt::Cvt, "'cvt.…'"),
                " or ",
                (Opt::Recipe, "NAME")
            ]));
        }
        if n > 1 {
            return Err(Error::Option(msg![
                "give one of ",
                Opt::To,
                ", ",
                Opt::Cvt,
                " and ",
                Opt::Recipe,
                ", not several"
            ]));
        }
        let modifiers = [
            (self.mode != ptx::RoundMod::Rn, Opt::Mode),
            (self.satfinite, Opt::Satfinite),
            (self.sat, Opt::Sat),
            (self.relu, Opt::Relu),
            (self.ftz, Opt::Ftz),
            (self.pzo, Opt::Pzo),
            (self.rbits_width.is_some(), Opt::RbitsWidth),
        ];
        if let (Some(_), Some(&(_, o))) = (&self.cvt, modifiers.iter().find(|m| m.0)) {
            return Err(Error::Option(msg![
                Opt::Cvt,
                " is a whole PTX form: its rounding and modifiers are in it (",
                o,
                " goes with ",
                Opt::To,
                ")"
            ]));
        }
        Ok(())
    }

    /// The conversion of each tensor, its label, and whether it is meant for integer sources
    /// (a `cvt` form from an integer type).
    fn recipe(&self, recipe: Option<&Recipe>) -> Result<(crate::Recipe, Message, bool)> {
        if let Some(text) = &self.cvt {
            let instr = ptx::parse_instruction(text).map_err(|diags| {
                let msgs: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
                Error::Option(msg![
                    (Opt::Cvt, format!("{text:?}")),
                    format!(": {}", msgs.join("; "))
                ])
            })?;
            let form = instr.form;
            if !ptx::legal_somewhere(&form) {
                return Err(Error::Option(msg![
                    (Opt::Cvt, format!("{text:?}")),
                    " is not a legal PTX form on any target"
                ]));
            }
            let conv = ptx::eval::lane_conversion(&form).map_err(|e| {
                Error::Option(msg![(Opt::Cvt, format!("{text:?}")), format!(": {e}")])
            })?;
            let spelled = form.spelling();
            let label = msg![spelled.clone()];
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
        let (to, satfinite) = match (recipe, &self.to) {
            (Some(r), _) => (r.to, self.satfinite || r.satfinite),
            (None, Some(t)) => (t.as_str(), self.satfinite),
            (None, None) => {
                return Err(Error::Internal(
                    "a request with nothing to convert to passed its checks".into(),
                ))
            }
        };
        let rule = ElementRequest {
            to: *lookup_format(to, Opt::To)?,
            mode: self.mode,
            satfinite,
            sat: self.sat,
            relu: self.relu,
            ftz: self.ftz,
            pzo: self.pzo,
            rbits_width: self.rbits_width,
        }
        .build()?;
        let label = msg![rule.label()];
        Ok((
            Box::new(move |src: &Format| rule.conversion(src)),
            label,
            false,
        ))
    }
}

/// A conversion asked for by its destination, rounding and PTX modifiers, for whatever
/// source format the data has: what `to` with `mode`, `satfinite`, `sat`, `relu`, `ftz`,
/// `pzo` and `rbits_width` asks for, in [`ConvertRequest`] and in the Python package's
/// `astype` and quantizers alike.
///
/// ```
/// use gpucvt_core::format::{E4M3, F32};
/// use gpucvt_tensor::options::ElementRequest;
/// let rule = ElementRequest { satfinite: true, ..ElementRequest::new(E4M3) }.build()?;
/// assert_eq!(rule.label(), "e4m3 rn .satfinite");
/// assert_eq!(rule.conversion(&F32)?.apply(500f32.to_bits() as u64).bits, 0x7e);
/// let bad = ElementRequest { rbits_width: Some(5), ..ElementRequest::new(E4M3) }.build();
/// assert_eq!(bad.unwrap_err().to_string(), "rbits_width is only valid with mode=\"rs\"");
/// # Ok::<(), gpucvt_tensor::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ElementRequest {
    /// The destination format.
    pub to: Format,
    /// The rounding, as PTX names it.
    pub mode: ptx::RoundMod,
    /// PTX `.satfinite`.
    pub satfinite: bool,
    /// PTX `.sat`.
    pub sat: bool,
    /// PTX `.relu`.
    pub relu: bool,
    /// PTX `.ftz`.
    pub ftz: bool,
    /// PTX `.pzo`.
    pub pzo: bool,
    /// Random bits per element of stochastic rounding (1 to 32; by default PTX's for the
    /// destination). Any integer is taken and checked, so that a front end passes on what
    /// its user gave.
    pub rbits_width: Option<i64>,
}

impl ElementRequest {
    /// To `to`, rounding to nearest even, no modifiers.
    pub fn new(to: Format) -> ElementRequest {
        ElementRequest {
            to,
            mode: ptx::RoundMod::Rn,
            satfinite: false,
            sat: false,
            relu: false,
            ftz: false,
            pzo: false,
            rbits_width: None,
        }
    }

    /// The rounding named (any case; [`Error::Option`] listing the names).
    pub fn mode_named(name: &str) -> Result<ptx::RoundMod> {
        ptx::RoundMod::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let names: Vec<&str> = ptx::RoundMod::ALL.iter().map(|r| r.name()).collect();
                Error::Option(msg![
                    "invalid ",
                    Opt::Mode,
                    format!(" {name:?}; expected one of: {}", names.join(", "))
                ])
            })
    }

    /// Checks the request: the rounding is one the core has, random bits only with `rs`
    /// and 1 to 32 of them.
    pub fn build(&self) -> Result<ElementRule> {
        let mode = self.mode;
        let mut rounding = Rounding::from_name(mode.name()).ok_or_else(|| {
            Error::Option(msg![(Opt::Mode, mode.name()), ": not a core rounding"])
        })?;
        if let Direction::Stochastic { .. } = rounding.direction {
            let width = match self.rbits_width {
                Some(w) if !(1..=32).contains(&w) => {
                    return Err(Error::Option(msg![
                        Opt::RbitsWidth,
                        format!(" must be 1 to 32, not {w}")
                    ]))
                }
                Some(w) => w as u32,
                None => ptx::eval::default_rbits_width(&self.to),
            };
            rounding = Rounding::stochastic(0, width);
        } else if self.rbits_width.is_some() {
            return Err(Error::Option(msg![
                Opt::RbitsWidth,
                " is only valid with ",
                (Opt::Mode, "rs")
            ]));
        }
        // The modifiers as a PTX form; its types are each source's pair.
        let mut form = ptx::CvtForm::new(ptx::PtxType::F32, ptx::PtxType::F32);
        form.rounding = Some(mode);
        form.ftz = self.ftz;
        form.sat = self.sat;
        form.relu = self.relu;
        form.satfinite = self.satfinite;
        form.pzo = self.pzo;
        Ok(ElementRule {
            form,
            rounding,
            dst: self.to,
        })
    }
}

/// A checked [`ElementRequest`]: the conversion of each source format.
#[derive(Clone, Copy, Debug)]
pub struct ElementRule {
    form: ptx::CvtForm,
    rounding: Rounding,
    dst: Format,
}

impl ElementRule {
    /// The conversion of `src` elements: PTX `cvt`'s lane conversion of that pair with the
    /// modifiers ([`ptx::eval::element_conversion`]); a pair PTX does not convert is
    /// [`Error::Refused`] with the reason.
    pub fn conversion(&self, src: &Format) -> Result<Conversion> {
        ptx::eval::element_conversion(&self.form, self.rounding, src, &self.dst)
            .map_err(|e| Error::Refused(e.to_string()))
    }

    /// `e4m3 rn .satfinite`: the destination, the rounding and the modifiers.
    pub fn label(&self) -> String {
        let mut label = format!("{} {}", self.dst.name, self.rounding.name());
        let f = &self.form;
        for (on, name) in [
            (f.ftz, "ftz"),
            (f.sat, "sat"),
            (f.relu, "relu"),
            (f.satfinite, "satfinite"),
            (f.pzo, "pzo"),
        ] {
            if on {
                label.push_str(&format!(" .{name}"));
            }
        }
        label
    }
}

/// The block-scaling options of a conversion (recipe, block, axis, scale, scale rule, scale
/// layout, second level) as text, checked and built into a [`BlockScaling`]: one reader for
/// the CLI and the Python package.
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
    /// The recipe named (an unknown name is [`Error::Option`] listing the names).
    pub fn recipe(&self) -> Result<Option<&'static Recipe>> {
        match &self.recipe {
            None => Ok(None),
            Some(name) => Recipe::named(&name.to_ascii_lowercase())
                .map(Some)
                .ok_or_else(|| {
                    Error::Option(msg![
                        format!("unknown recipe {name:?} for "),
                        Opt::Recipe,
                        format!(
                            "; accepted: {}",
                            Recipe::names().collect::<Vec<_>>().join(", ")
                        )
                    ])
                }),
        }
    }

    /// The block scaling asked for (`None` without a block or a recipe; the other options
    /// without them are an error), checked.
    ///
    /// ```
    /// use gpucvt_tensor::ScalingRequest;
    /// let r = ScalingRequest { block: Some("32".into()), rule: Some("rp".into()), ..Default::default() };
    /// assert_eq!(r.build().unwrap().unwrap().describe(),
    ///            "block=32 axis=-1 scale=ue8m0 rule=rceil second_level=false layout=rows");
    /// let bad = ScalingRequest { block: Some("16".into()), scale: Some("f32".into()), rule: Some("ceil".into()), ..Default::default() };
    /// assert!(bad.build().unwrap_err().to_string().starts_with("scale_rule chooses ue8m0"));
    /// let twice = ScalingRequest { recipe: Some("nvfp4".into()), block: Some("32".into()), ..Default::default() };
    /// assert!(twice.build().unwrap_err().to_string().starts_with("recipe=\"nvfp4\" sets block"));
    /// ```
    pub fn build(&self) -> Result<Option<BlockScaling>> {
        let mut b = match (self.recipe()?, &self.block) {
            (Some(r), _) => {
                // A recipe fixes these: a second value would be silently ignored.
                let fixed = [
                    (self.block.is_some(), Opt::Block),
                    (self.scale.is_some(), Opt::Scale),
                    (self.second_level, Opt::Scale2),
                ];
                if let Some(&(_, name)) = fixed.iter().find(|g| g.0) {
                    return Err(Error::Option(msg![
                        (Opt::Recipe, r.name),
                        " sets ",
                        name,
                        "; give the options one by one instead of the recipe to change it"
                    ]));
                }
                r.scaling
            }
            (None, Some(text)) => BlockScaling {
                block: Block::parse(text)?,
                ..BlockScaling::mx(1, ScaleRule::Floor)
            },
            (None, None) => {
                let given = [
                    (self.axis.is_some(), Opt::Axis),
                    (self.scale.is_some(), Opt::Scale),
                    (self.rule.is_some(), Opt::ScaleRule),
                    (self.layout.is_some(), Opt::ScaleLayout),
                    (self.second_level, Opt::Scale2),
                ];
                if let Some(&(_, name)) = given.iter().find(|g| g.0) {
                    return Err(Error::Option(msg![
                        name,
                        " needs ",
                        Opt::Block,
                        " or ",
                        Opt::Recipe
                    ]));
                }
                return Ok(None);
            }
        };
        if let Some(f) = &self.scale {
            b.format = scale_format(f)?;
        }
        if let Some(r) = &self.rule {
            let rule = ScaleRule::from_name(&r.to_ascii_lowercase()).ok_or_else(|| {
                Error::Option(msg![
                    format!("unknown scale rule {r:?} for "),
                    Opt::ScaleRule,
                    "; accepted: floor (ocp), rceil (rp), ceil, even"
                ])
            })?;
            if b.format != ScaleFormat::Ue8m0 {
                return Err(Error::Option(msg![
                    Opt::ScaleRule,
                    format!(
                        " chooses ue8m0 (power-of-two) scales; {0} scales are amax / max rounded to {0}",
                        b.format.name()
                    )
                ]));
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
                    return Err(Error::Option(msg![
                        format!("unknown scale layout {l:?} for "),
                        Opt::ScaleLayout,
                        "; accepted: rows, swizzled"
                    ]))
                }
            };
        }
        b.second_level |= self.second_level;
        b.check()?;
        Ok(Some(b))
    }

    /// The options of a dequantization: the block options describe the input's scales. A
    /// recipe gives the element format (`from`, if given too, must agree) and the blocking;
    /// a block the blocking; without either, the scale format alone says what the scales
    /// are and the blocking is read off the file, and the other block options are an error
    /// (they would be ignored).
    ///
    /// ```
    /// use gpucvt_tensor::ScalingRequest;
    /// let r = ScalingRequest { recipe: Some("nvfp4".into()), ..Default::default() };
    /// let o = r.dequantize(gpucvt_core::format::F64, None, 0).unwrap();
    /// assert_eq!((o.elements.unwrap().name, o.block.unwrap().second_level), ("e2m1", true));
    /// let clash = r.dequantize(gpucvt_core::format::F32, Some("e4m3"), 0).unwrap_err();
    /// assert!(clash.to_string().starts_with("recipe=\"nvfp4\" quantizes to e2m1"));
    /// let axis = ScalingRequest { axis: Some(0), ..Default::default() };
    /// assert_eq!(axis.dequantize(gpucvt_core::format::F32, None, 0).unwrap_err().to_string(),
    ///            "axis needs block or recipe");
    /// ```
    pub fn dequantize(
        &self,
        to: Format,
        from: Option<&str>,
        threads: usize,
    ) -> Result<crate::DequantizeOptions> {
        let recipe = self.recipe()?;
        let mut elements = match from {
            Some(f) => Some(*lookup_format(f, Opt::From)?),
            None => None,
        };
        if let Some(r) = recipe {
            let rf = *lookup_format(r.to, Opt::Recipe)?;
            match elements {
                Some(e) if e != rf => {
                    return Err(Error::Option(msg![
                        (Opt::Recipe, r.name),
                        format!(" quantizes to {}, but ", rf.name),
                        Opt::From,
                        format!(" says {}; give one of them", e.name)
                    ]))
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
                Some(f) => Some(scale_format(f)?),
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
    pub fn expansion(&self, mode: ptx::RoundMod) -> Result<Option<crate::options::Message>> {
        let Some(r) = self.recipe()? else {
            return Ok(None);
        };
        let Some(b) = self.build()? else {
            return Ok(None);
        };
        let mut s = crate::scaling::recipes::spell(r.to, r.satfinite, &b);
        if mode != ptx::RoundMod::Rn {
            s.0.push(Piece::Text(" ".into()));
            s.0.push(Piece::Set(Opt::Mode, mode.name().to_string()));
        }
        Ok(Some(s))
    }
}

/// The scale format named (any case).
fn scale_format(name: &str) -> Result<ScaleFormat> {
    ScaleFormat::from_name(&name.to_ascii_lowercase()).ok_or_else(|| {
        Error::Option(msg![
            format!("unknown scale format {name:?} for "),
            Opt::Scale,
            "; accepted: ue8m0, ue4m3, f32, bf16"
        ])
    })
}
