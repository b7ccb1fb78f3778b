//! # gpucvt-capi
//!
//! The C ABI of gpucvt: `libgpucvt.so` / `libgpucvt.a`, described by `include/gpucvt.h`
//! (generated from this crate by cbindgen; the test `header::` keeps it current) and wrapped
//! for C++17 by `include/gpucvt.hpp`.
//!
//! A thin layer over the typed Rust API of the `gpucvt` crate (named `model` here, since this
//! library is itself called `gpucvt`): a form is read once into an [`model::instr::Instr`]
//! (what `gpucvt eval --batch` caches per instruction text) and evaluated many times; the
//! stateless conversion is a [`model::core::Conversion`]. No conversion logic lives here.
//!
//! The rules every entry point keeps:
//!
//! - every symbol starts with `gpucvt_` (the test `exports::` checks the built library);
//! - every pointer is checked for NULL ([`gpucvt_status::GPUCVT_E_NULL`]);
//! - no panic crosses the boundary: each body runs under `catch_unwind`
//!   ([`gpucvt_status::GPUCVT_E_PANIC`]);
//! - no global state: a form is immutable after parsing and may be shared by threads; a
//!   diagnostic is owned by the caller until freed;
//! - structs that may grow start with their size in bytes.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]
// The C names are the Rust names, so that the header and this crate read alike.
#![allow(non_camel_case_types)]

mod check;
mod convert;
mod diag;
mod ffi;
mod form;

pub use check::*;
pub use convert::*;
pub use diag::*;
pub use form::*;

use std::ffi::c_char;

/// The version of the C ABI: it changes when an existing function, struct or constant
/// changes meaning or layout (new functions and new trailing struct fields keep it).
pub const GPUCVT_ABI_VERSION: u32 = 1;

/// What a call did.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum gpucvt_status {
    /// Success.
    GPUCVT_OK = 0,
    /// A pointer argument that must not be NULL was NULL.
    GPUCVT_E_NULL = 1000,
    /// An internal error (a Rust panic, caught at the boundary): a bug in gpucvt.
    GPUCVT_E_PANIC,
    /// The text does not read as an instruction: not a PTX `cvt`/`cvt.pack` form, a vISA
    /// `mov` or a Tile IR conversion op, or malformed (see the diagnostic).
    GPUCVT_E_PARSE,
    /// The instruction reads but breaks its dialect's rules or is not legal on the target
    /// (the diagnostic names the rule), or has no conversion semantics there.
    GPUCVT_E_ILLEGAL,
    /// The operands do not fit the form: their count, or a value wider than its operand.
    GPUCVT_E_OPERANDS,
    /// A name (format, target, version) that gpucvt does not know.
    GPUCVT_E_UNKNOWN_NAME,
    /// An output buffer is too small (a result wider than 128 bits for `gpucvt_form_eval`,
    /// fewer words than the result needs, a string buffer shorter than the string).
    GPUCVT_E_TOO_SMALL,
    /// The model says the result is undefined (a Tile IR op under the `spec` semantics, such
    /// as `ftoi` of a NaN): no bits are written.
    GPUCVT_E_UNDEFINED,
    /// An argument outside its range: a struct size smaller than the first version's, unknown
    /// option bits, more than 64 lanes, mask bits beyond the lanes.
    GPUCVT_E_ARGUMENT,
}

pub use gpucvt_status::*;

/// The version of the C ABI this library implements ([`GPUCVT_ABI_VERSION`]): a program
/// compiled against `gpucvt.h` should check that it equals the header's.
#[no_mangle]
pub extern "C" fn gpucvt_abi_version() -> u32 {
    GPUCVT_ABI_VERSION
}

/// The library's version, `MAJOR.MINOR.PATCH`: a static NUL-terminated string.
#[no_mangle]
pub extern "C" fn gpucvt_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A static NUL-terminated description of a status code (`"unknown status"` for a value that
/// is not one).
#[no_mangle]
pub extern "C" fn gpucvt_status_str(status: i32) -> *const c_char {
    let s: &'static str = match status {
        0 => "ok\0",
        1000 => "a required pointer argument is NULL\0",
        1001 => "internal error (a panic inside gpucvt)\0",
        1002 => "the text does not read as an instruction\0",
        1003 => "the instruction breaks its dialect's rules or is not legal on the target\0",
        1004 => "the operands do not fit the form\0",
        1005 => "unknown name\0",
        1006 => "the output buffer is too small\0",
        1007 => "the result is undefined\0",
        1008 => "an argument is out of range\0",
        _ => "unknown status\0",
    };
    s.as_ptr().cast()
}

// The flags of an evaluation (the union over a result's elements): the core's
// `model::core::Flags`, and GPUCVT_FLAG_NAN_CANONICAL (the only one Tile IR ops report).

/// Flag: the result differs from the exact value.
pub const GPUCVT_FLAG_INEXACT: u32 = 1;
/// Flag: the rounded magnitude exceeded the destination's range.
pub const GPUCVT_FLAG_OVERFLOW: u32 = 2;
/// Flag: the result is tiny (below the smallest normal) and inexact.
pub const GPUCVT_FLAG_UNDERFLOW: u32 = 4;
/// Flag: a NaN became a number, or a value had no encoding (NaN or infinity into a format
/// without).
pub const GPUCVT_FLAG_INVALID: u32 = 8;
/// Flag: a clamp (`.sat`, `.satfinite`, an integer range) changed the value.
pub const GPUCVT_FLAG_SATURATED: u32 = 16;
/// Flag: a subnormal input or result was flushed to zero.
pub const GPUCVT_FLAG_FLUSHED: u32 = 32;
/// Flag: a NaN input gave the destination's canonical NaN pattern (its own sign and payload
/// were not kept).
pub const GPUCVT_FLAG_NAN_CANONICAL: u32 = 64;
