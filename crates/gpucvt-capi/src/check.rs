//! `gpucvt_check_text`: a whole PTX module, vISA assembly file or Tile IR file checked as
//! `gpucvt check` checks it, its diagnostics handed back as a list the caller owns.

use crate::diag::gpucvt_diag;
use crate::ffi::{guard, guard_value, read_sized};
use crate::form::{options, GPUCVT_DIALECT_PTX, GPUCVT_DIALECT_TILE, GPUCVT_DIALECT_VISA};
use crate::gpucvt_options;
use crate::gpucvt_status::{self, *};
use model::diag::{Diagnostic, Severity};
use std::ffi::c_char;

/// A diagnostic that is an error (what `gpucvt_diag_severity` returns).
pub const GPUCVT_SEVERITY_ERROR: u32 = 1;
/// A diagnostic that is a warning.
pub const GPUCVT_SEVERITY_WARNING: u32 = 2;

/// The diagnostics of a checked text, in the order `gpucvt check` prints them. Owned by the
/// caller: free it with `gpucvt_diag_list_free` (which frees its diagnostics too).
pub struct gpucvt_diag_list {
    diags: Vec<gpucvt_diag>,
    errors: usize,
}

/// A checker diagnostic as a `gpucvt_diag`: an error's status is `GPUCVT_E_PARSE` for the
/// reader's rules (`syntax…`) and `GPUCVT_E_ILLEGAL` for the checker's; a warning's is
/// `GPUCVT_OK`.
fn of_diagnostic(d: &Diagnostic) -> gpucvt_diag {
    let (status, severity) = match d.severity {
        Severity::Error if d.rule.starts_with("syntax") || d.rule.ends_with(".syntax") => {
            (GPUCVT_E_PARSE, GPUCVT_SEVERITY_ERROR)
        }
        Severity::Error => (GPUCVT_E_ILLEGAL, GPUCVT_SEVERITY_ERROR),
        _ => (GPUCVT_OK, GPUCVT_SEVERITY_WARNING),
    };
    gpucvt_diag::new(status, d.rule, &d.message, d.span.line, d.span.col).with_severity(severity)
}

/// Checks a whole source text of `dialect` (`GPUCVT_DIALECT_PTX`: a PTX module;
/// `GPUCVT_DIALECT_VISA`: vISA assembly; `GPUCVT_DIALECT_TILE`: a CUDA Tile IR `.mlir`
/// file) with the reader's and the checker's rules, as `gpucvt check` does. `opts` (NULL
/// for the defaults): PTX's `target` and `ptx_version` (NULL: the module's own `.target`
/// and `.version`), Tile IR's `tile_version` (NULL: the newest); the other fields are not
/// used. `text` is `len` bytes of UTF-8.
///
/// On `GPUCVT_OK` (no error) and `GPUCVT_E_ILLEGAL` (at least one error diagnostic) `*out`
/// is the list of diagnostics (possibly empty, warnings included), to free with
/// `gpucvt_diag_list_free`, and `*diag`, when not NULL, is NULL. Any other status means the
/// text was not checked (a NULL, text that is not UTF-8, an unknown dialect or name): `*out`
/// is NULL and `*diag` says why.
///
/// # Safety
/// `text` points to `len` readable bytes; `opts` is NULL or a valid `gpucvt_options` of
/// `opts->size` bytes whose strings are NULL or NUL-terminated; `out` is writable; `diag`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_check_text(
    text: *const c_char,
    len: usize,
    dialect: u32,
    opts: *const gpucvt_options,
    out: *mut *mut gpucvt_diag_list,
    diag: *mut *mut gpucvt_diag,
) -> gpucvt_status {
    guard(|| {
        if out.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        // SAFETY: `out` is non-NULL and writable; `diag` NULL or writable.
        unsafe {
            out.write(std::ptr::null_mut());
            if !diag.is_null() {
                diag.write(std::ptr::null_mut());
            }
        }
        let fail = |status: gpucvt_status, message: &str| {
            // SAFETY: `diag` is NULL or writable.
            unsafe { gpucvt_diag::new(status, "", message, 0, 0).give(diag) };
            Err(status)
        };
        if text.is_null() {
            return fail(GPUCVT_E_NULL, "the source text is NULL");
        }
        // SAFETY: `text` points to `len` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
        let Ok(text) = std::str::from_utf8(bytes) else {
            return fail(GPUCVT_E_PARSE, "the source text is not UTF-8");
        };
        // SAFETY: `opts` is NULL or a valid struct of `opts->size` bytes.
        let opts = match unsafe { read_sized(opts) } {
            Ok(o) => o,
            Err(s) => return fail(s, "opts->size is not sizeof(gpucvt_options), or fields this version does not know are set"),
        };
        let opts = match options(opts) {
            Ok(o) => o,
            Err((s, message)) => return fail(s, &message),
        };
        let diags = match dialect {
            GPUCVT_DIALECT_PTX => model::ptx::check::check_source(text, opts.target, opts.version),
            GPUCVT_DIALECT_VISA => model::visa::check::check_source(
                text,
                &model::visa::check::CheckOptions::default(),
            ),
            GPUCVT_DIALECT_TILE => {
                let text = model::tile::check::source_text(text.to_string());
                let version = opts
                    .tile_version
                    .unwrap_or(model::tile::types::SpecVersion::LATEST);
                model::tile::check::check_source(&text, version)
            }
            d => {
                return fail(
                    GPUCVT_E_ARGUMENT,
                    &format!(
                        "dialect {d} is not GPUCVT_DIALECT_PTX (1), GPUCVT_DIALECT_VISA (2) or GPUCVT_DIALECT_TILE (3)"
                    ),
                )
            }
        };
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let list = gpucvt_diag_list {
            diags: diags.iter().map(of_diagnostic).collect(),
            errors,
        };
        // SAFETY: `out` is writable; the caller owns the box from now on.
        unsafe { out.write(Box::into_raw(Box::new(list))) };
        if errors > 0 {
            Err(GPUCVT_E_ILLEGAL)
        } else {
            Ok(())
        }
    })
}

/// How many diagnostics the list holds (0 for NULL).
///
/// # Safety
/// `l` is NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_list_len(l: *const gpucvt_diag_list) -> usize {
    // SAFETY: the caller guarantees `l` is NULL or live.
    unsafe { l.as_ref() }.map_or(0, |l| l.diags.len())
}

/// How many of them are errors (0 for NULL).
///
/// # Safety
/// `l` is NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_list_errors(l: *const gpucvt_diag_list) -> usize {
    // SAFETY: the caller guarantees `l` is NULL or live.
    unsafe { l.as_ref() }.map_or(0, |l| l.errors)
}

/// Diagnostic `i` of the list, owned by it (valid until the list is freed; do not free it
/// with `gpucvt_diag_free`); NULL when `l` is NULL or `i` is not below the length.
///
/// # Safety
/// `l` is NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_list_get(
    l: *const gpucvt_diag_list,
    i: usize,
) -> *const gpucvt_diag {
    // SAFETY: the caller guarantees `l` is NULL or live.
    match unsafe { l.as_ref() }.and_then(|l| l.diags.get(i)) {
        Some(d) => d,
        None => std::ptr::null(),
    }
}

/// Frees a list and its diagnostics (NULL is ignored).
///
/// # Safety
/// `l` is NULL or a list this library returned, not freed before.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_list_free(l: *mut gpucvt_diag_list) {
    if !l.is_null() {
        guard_value((), || {
            // SAFETY: `l` came from `Box::into_raw` in `gpucvt_check_text` and is freed once.
            drop(unsafe { Box::from_raw(l) })
        });
    }
}
