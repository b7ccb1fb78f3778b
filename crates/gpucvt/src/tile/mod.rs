//! The CUDA Tile IR (`cuda_tile`) dialect's conversion ops (`tile-ir.md`).
//!
//! - [`types`]: element types with their MLIR spellings, tile types and their size rules,
//!   spec versions, rounding modes, signedness and overflow flags;
//! - [`parse`]: the reader for small `.mlir` files and single op lines, with positions;
//! - [`check`]: the dialect's verifier, per spec version (13.1 … 13.4), with its wording,
//!   and the legality table;
//! - [`eval`]: elementwise evaluation under two semantics, `spec` (the specification text,
//!   single correctly-rounded conversions, undefined results marked) and `tileiras` (the PTX
//!   `cvt` sequences NVIDIA's compiler emits) and the lowering as data;
//! - [`run`]: whole entries, their conversion ops in order over given values.

pub mod check;
pub mod eval;
pub mod parse;
pub mod run;
pub mod types;

pub use check::{check_file, legal_table, verify_op, LegalEntry};
pub use eval::{
    difference, differs, eval_op, lowering, Difference, ElementResult, EvalError, Lowering,
    Machine, Semantics, Step, DEFAULT_TARGET,
};
pub use parse::{parse_file, parse_op, parse_tile_type, ConvOp, TileFile};
pub use run::{run_entry, RunOptions, ValueResult};
pub use types::{
    ElemType, Element, OpKind, Overflow, RoundingMode, Signedness, SpecVersion, TileType,
};
