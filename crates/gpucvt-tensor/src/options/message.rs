//! Messages that name options. The library does not know how a front end spells its
//! options (the CLI's `--scale-rule rp`, Python's `scale_rule="rp"`), so a message keeps
//! each option as a value and the front end renders it ([`Message::render`]).

use std::fmt;

/// An option of a conversion or dequantization request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // Each is the option of its name.
pub enum Opt {
    To,
    Mode,
    Satfinite,
    Sat,
    Relu,
    Ftz,
    Pzo,
    RbitsWidth,
    Cvt,
    From,
    Tensor,
    All,
    Exclude,
    Strict,
    Threads,
    Seed,
    Recipe,
    Block,
    Axis,
    Scale,
    ScaleRule,
    ScaleLayout,
    Scale2,
    Force,
    Dequantize,
    Layout,
}

impl Opt {
    /// The option's plain name, as the Python package's keywords spell it (`rbits_width`,
    /// `scale_2`, `from_`), which is also how [`Message`]'s `Display` names it.
    pub fn name(self) -> &'static str {
        match self {
            Opt::To => "to",
            Opt::Mode => "mode",
            Opt::Satfinite => "satfinite",
            Opt::Sat => "sat",
            Opt::Relu => "relu",
            Opt::Ftz => "ftz",
            Opt::Pzo => "pzo",
            Opt::RbitsWidth => "rbits_width",
            Opt::Cvt => "cvt",
            Opt::From => "from_",
            Opt::Tensor => "tensor",
            Opt::All => "all",
            Opt::Exclude => "exclude",
            Opt::Strict => "strict",
            Opt::Threads => "threads",
            Opt::Seed => "seed",
            Opt::Recipe => "recipe",
            Opt::Block => "block",
            Opt::Axis => "axis",
            Opt::Scale => "scale",
            Opt::ScaleRule => "scale_rule",
            Opt::ScaleLayout => "scale_layout",
            Opt::Scale2 => "scale_2",
            Opt::Force => "force",
            Opt::Dequantize => "dequantize",
            Opt::Layout => "layout",
        }
    }

    /// Whether the option is a switch (it takes no value).
    pub fn is_switch(self) -> bool {
        matches!(
            self,
            Opt::Satfinite
                | Opt::Sat
                | Opt::Relu
                | Opt::Ftz
                | Opt::Pzo
                | Opt::Strict
                | Opt::All
                | Opt::Scale2
                | Opt::Force
                | Opt::Dequantize
        )
    }
}

/// One piece of a [`Message`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Words.
    Text(String),
    /// An option named.
    Opt(Opt),
    /// An option with the value it was (or should be) given.
    Set(Opt, String),
    /// A switch turned on (in a list of the options something stands for).
    On(Opt),
}

impl From<&str> for Piece {
    fn from(s: &str) -> Piece {
        Piece::Text(s.to_string())
    }
}

impl From<String> for Piece {
    fn from(s: String) -> Piece {
        Piece::Text(s)
    }
}

impl From<Opt> for Piece {
    fn from(o: Opt) -> Piece {
        Piece::Opt(o)
    }
}

impl<V: fmt::Display> From<(Opt, V)> for Piece {
    fn from((o, v): (Opt, V)) -> Piece {
        Piece::Set(o, v.to_string())
    }
}

/// A message naming options, rendered by each front end in its own syntax.
///
/// ```
/// use gpucvt_tensor::options::{Message, Opt};
/// let m = Message::new([Opt::RbitsWidth.into(), " is only valid with ".into(), (Opt::Mode, "rs").into()]);
/// assert_eq!(m.to_string(), "rbits_width is only valid with mode=\"rs\"");
/// let cli = m.render(&|o, v| match v {
///     Some(v) => format!("--{} {v}", o.name().replace('_', "-")),
///     None => format!("--{}", o.name().replace('_', "-")),
/// });
/// assert_eq!(cli, "--rbits-width is only valid with --mode rs");
/// assert_eq!(m.command_line(), cli);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message(pub Vec<Piece>);

impl Message {
    /// A message of these pieces.
    pub fn new(pieces: impl IntoIterator<Item = Piece>) -> Message {
        Message(pieces.into_iter().collect())
    }

    /// The text, each option spelled by `spell(option, value)` (a switch turned on,
    /// [`Piece::On`], is `spell(switch, Some(""))`).
    pub fn render(&self, spell: &dyn Fn(Opt, Option<&str>) -> String) -> String {
        let mut s = String::new();
        for p in &self.0 {
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Opt(o) => s.push_str(&spell(*o, None)),
                Piece::Set(o, v) => s.push_str(&spell(*o, Some(v))),
                Piece::On(o) => s.push_str(&spell(*o, Some(""))),
            }
        }
        s
    }

    /// The message in the command line's spelling (`--scale-rule rp`, `--satfinite`): for
    /// front ends that show an equivalent `gpucvt convert` command.
    pub fn command_line(&self) -> String {
        self.render(&|o, v| {
            let flag = format!("--{}", o.name().trim_end_matches('_').replace('_', "-"));
            match v {
                Some(v) if !v.is_empty() => format!("{flag} {v}"),
                _ => flag,
            }
        })
    }

    /// The message with `prefix` before it (a file or tensor name).
    pub fn after(mut self, prefix: impl Into<String>) -> Message {
        self.0.insert(0, Piece::Text(prefix.into()));
        self
    }
}

/// `Display` spells the options as the Python package's keywords: `scale_rule`,
/// `mode="rs"`, `block=32`, `satfinite=True` (a switch turned on).
impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|o, v| match v {
            None => o.name().to_string(),
            Some("") => format!("{}=True", o.name()),
            Some(v) if v.parse::<i64>().is_ok() || v.starts_with('"') => {
                format!("{}={v}", o.name())
            }
            Some(v) => format!("{}={v:?}", o.name()),
        }))
    }
}

/// A [`Message`] of text, options (`Opt::Block`) and options with values
/// (`(Opt::Mode, "rs")`).
macro_rules! msg {
    ($($p:expr),* $(,)?) => {
        $crate::options::Message(vec![$($crate::options::Piece::from($p)),*])
    };
}
pub(crate) use msg;
