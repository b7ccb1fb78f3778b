//! The CUDA Tile IR (`cuda_tile`) dialect's conversion ops (`tile-ir.md`).
//!
//! - [`types`]: element types with their MLIR spellings, tile types and their size rules,
//!   spec versions, rounding modes, signedness and overflow flags;
//! - [`parse`]: the reader for small `.mlir` files and single op lines, with positions;
//! - [`verify`]: the dialect's verifier, per spec version (13.1 … 13.4), with its wording,
//!   and the legality table;
//! - [`eval`]: elementwise evaluation under two semantics, `spec` (the specification text,
//!   single correctly-rounded conversions, undefined results marked) and `tileiras` (the PTX
//!   `cvt` sequences NVIDIA's compiler emits), the lowering as data, and whole entries.

pub mod eval;
pub mod parse;
pub mod types;
pub mod verify;

pub use eval::{
    difference, differs, eval_op, lowering, run_entry, Difference, ElementResult, EvalError,
    Lowering, Machine, RunOptions, Semantics, Step, ValueResult, DEFAULT_TARGET,
};
pub use parse::{parse_file, parse_op, parse_tile_type, ConvOp, TileFile};
pub use types::{
    ElemType, Element, OpKind, Overflow, RoundingMode, Signedness, SpecVersion, TileType,
};
pub use verify::{check_file, legal_table, verify_op, LegalEntry};
