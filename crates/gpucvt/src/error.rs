//! The error of reading and evaluating one instruction ([`crate::instr::Instr`]): a caller
//! can tell text that names no modelled instruction from a form that breaks its dialect's
//! rules (with the checker's [`Diagnostic`]s and their columns), from a form that is not
//! legal on the target asked for, from operands that do not fit the form.
//!
//! The message of each variant (its `Display`) is the one-line text `gpucvt eval` and
//! `gpucvt eval --batch` print.
//!
//! ```
//! use gpucvt::instr::{Instr, Options};
//! use gpucvt::Error;
//! let sm80 = Options { target: Some("sm_80".parse().unwrap()), ..Options::default() };
//! // A rounding the form does not take: the checker's diagnostic, with its column.
//! match Instr::parse("cvt.rn.f32.f16", &sm80) {
//!     Err(Error::Invalid { diagnostics, .. }) => {
//!         assert_eq!(diagnostics[0].rule, "ptx.rounding-illegal");
//!         assert_eq!(diagnostics[0].span.col, 4);
//!     }
//!     other => panic!("{other:?}"),
//! }
//! // A form that needs a newer target.
//! let Err(Error::Illegal { form, target, .. }) = Instr::parse("cvt.rn.satfinite.e2m1x2.f32", &sm80)
//! else { panic!() };
//! assert_eq!((form.as_str(), target.map(|t| t.to_string())), ("cvt.rn.satfinite.e2m1x2.f32", Some("sm_80".into())));
//! // An operand that does not fit: the PTX evaluator's own error.
//! let i = Instr::parse("cvt.rn.f16.f32", &sm80).unwrap();
//! assert!(matches!(i.eval(&[1 << 40]), Err(Error::Ptx(_))));
//! // Not an instruction gpucvt models.
//! assert!(matches!(Instr::parse("add.f32", &sm80), Err(Error::UnknownInstruction { .. })));
//! ```

use crate::diag::Diagnostic;
use crate::ptx::target::Target;

/// Why an instruction text could not be read, checked or evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not a PTX `cvt`/`cvt.pack` form, a vISA move, a Tile IR conversion op or an
    /// AMD `v_…` instruction.
    #[error("unknown instruction {text:?}: expected a PTX cvt/cvt.pack form (cvt.rn.f16.f32), a vISA move (mov.sat hf <- f), a Tile IR conversion op (ftof : tile<f32> -> tile<f16>) or an AMD instruction (v_cvt_pk_fp8_f32 v1, v2, v3)")]
    UnknownInstruction {
        /// The first word of the text (cut to [`crate::instr::ECHO_LIMIT`] characters).
        text: String,
    },
    /// The text does not read as an instruction of its dialect, and there is no position to
    /// point at: a malformed guard, a vISA move not written `mov[.sat] DST <- SRC`, an
    /// unknown vISA type.
    #[error("{message}")]
    Syntax {
        /// What is wrong.
        message: String,
    },
    /// The dialect's reader or checker rejects the instruction: its diagnostics, with
    /// columns in the instruction text (PTX, Tile IR, AMD: also an AMD instruction the
    /// target does not have).
    #[error("{message}")]
    Invalid {
        /// The diagnostics as one line.
        message: String,
        /// The diagnostics themselves (rule, message, span).
        diagnostics: Vec<Diagnostic>,
    },
    /// A PTX form that is not legal on the target asked for (or, with no target, on any).
    #[error("{message}")]
    Illegal {
        /// The one-line message.
        message: String,
        /// The form's canonical spelling.
        form: String,
        /// The target, `None` when no target was given (the form is legal nowhere).
        target: Option<Target>,
        /// The legality checker's diagnostic (boxed: it is large, and errors travel in
        /// `Result`s).
        diagnostic: Box<Diagnostic>,
    },
    /// A vISA type pair with no `mov` semantics.
    #[error("{}", tidy(&.0.to_string()))]
    Visa(#[from] crate::visa::eval::PlanError),
    /// The PTX evaluator's error: an operand count or width, a form with no conversion.
    #[error(transparent)]
    Ptx(#[from] crate::ptx::eval::EvalError),
    /// The Tile IR evaluator's error: an element wider than its type, an op `tileiras` does
    /// not compile for the target.
    #[error("{}", tidy(&.0.to_string()))]
    Tile(#[from] crate::tile::eval::EvalError),
    /// Operands that do not fit the instruction: their count, or a width the dialect checks
    /// before evaluating (vISA sources, Tile IR tiles).
    #[error("{message}")]
    Operand {
        /// What is wrong.
        message: String,
    },
    /// A Tile IR op under the `spec` semantics left an element undefined; the message starts
    /// with `undefined` and lists every element's result.
    #[error("{message}")]
    Undefined {
        /// The message.
        message: String,
    },
    /// Two instructions that [`crate::diff::Comparison`] cannot compare: other than one
    /// source operand each, different source or result widths.
    #[error("{message}")]
    Incomparable {
        /// What differs.
        message: String,
    },
    /// A value that does not read as a register's or variable's type (the program runners'
    /// inputs: [`crate::ptx::run::parse_value`], [`crate::visa::run::parse_element`],
    /// [`crate::visa::run::initial_value`]).
    #[error("{message}")]
    Value {
        /// What was expected.
        message: String,
    },
    /// A Tile IR tile type that breaks the dialect's size rules
    /// ([`crate::tile::types::TileType::check_size`]).
    #[error("{message}")]
    TileSize {
        /// The dialect's message.
        message: String,
    },
    /// A PTX form that cannot run over slices ([`crate::ptx::slices::CvtKernel`]).
    #[error(transparent)]
    Bulk(#[from] crate::ptx::slices::CvtBulkError),
    /// A sweep over a source wider than 32 bits.
    #[error("the source words are {bits} bits wide: a sweep of every input covers sources of at most 32 bits (sample wider ones: `--sample N`)")]
    SweepTooWide {
        /// The source width.
        bits: u32,
    },
    /// A sweep's first instruction is past its last.
    #[error("the sweep starts at instruction {first}, but there are {total}")]
    SweepRange {
        /// The first instruction asked for.
        first: u64,
        /// How many instructions the sweep has.
        total: u64,
    },
    /// Writing or reading failed.
    #[error("{message}")]
    Io {
        /// The kind of failure.
        kind: std::io::ErrorKind,
        /// The operating system's message.
        message: String,
    },
    /// A peer's conversion that [`crate::compat::Peer`] does not describe.
    #[error("{message}")]
    Compat {
        /// What the peer lacks.
        message: String,
    },
    /// Building, reading or checking test vectors ([`crate::vectors`]).
    #[error(transparent)]
    Vectors(#[from] crate::vectors::VectorsError),
    /// The result is wider than the caller can take (at most 128 bits from
    /// [`crate::instr::Instr::eval_bits`]).
    #[error("the result is {bits} bits wide; at most 128 bits fit")]
    ResultTooWide {
        /// The result's width.
        bits: u32,
    },
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// A message on one line.
pub(crate) fn tidy(s: &str) -> String {
    s.replace('\n', " ")
}
