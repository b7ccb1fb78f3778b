//! The PTX dialect: types, `cvt`/`cvt.pack` forms, legality and evaluation.
//!
//! - [`types`]: every PTX type as data, registers, operand type-compatibility;
//! - [`form`]: the canonical form of a `cvt`/`cvt.pack` (types and modifiers);
//! - [`target`]: targets (`sm_10` … `sm_121a`, `a`/`f` variants, families) and PTX versions;
//! - [`lexer`], [`parse`]: PTX text to tokens, one instruction, or a whole module, with spans;
//! - [`check`](mod@check): what ptxas accepts, per target and PTX version, with diagnostics;
//! - [`eval`]: evaluation of a legal form;
//! - [`run`]: running the straight-line `mov`/`cvt` statements of one entry;
//! - [`slices`]: one form over whole slices on the fast kernels (`CvtKernel`), `verify`, `sweep`;
//! - [`table`]: the ISA's conversion tables (15 and 16), computed from the legality rules.

pub mod check;
pub mod eval;
pub mod form;
pub mod lexer;
pub mod parse;
pub mod run;
pub mod slices;
pub mod table;
pub mod target;
pub mod types;

pub use check::{check, check_file, check_form, legal_forms, legal_somewhere, OperandShape};
pub use form::{CvtForm, Modifier, RoundMod, Scaled};
pub use parse::{parse_file, parse_instruction, Instruction, PtxFile};
pub use target::{PtxVersion, Target};
pub use types::{PtxType, RegType};
