//! `gpucvt_diag`: why a parse or a name look-up failed, owned by the caller.

use crate::ffi::guard_value;
use crate::gpucvt_status::{self, *};
use model::Error;
use std::ffi::{c_char, CString};

/// Why a call failed: the status, the checker's rule id (empty when the error comes from
/// no checker rule), the 1-based line and column in the text (0 when there is no position)
/// and a one-line message (the one `gpucvt eval --batch` prints after `error: `). Owned by
/// the caller: free it with `gpucvt_diag_free`.
pub struct gpucvt_diag {
    status: gpucvt_status,
    rule: CString,
    message: CString,
    line: u32,
    column: u32,
    severity: u32,
}

/// A C string from text that may hold NUL bytes (an echoed input): each becomes `\0`.
fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

impl gpucvt_diag {
    pub(crate) fn new(
        status: gpucvt_status,
        rule: &str,
        message: &str,
        line: u32,
        column: u32,
    ) -> Self {
        gpucvt_diag {
            status,
            rule: c_string(rule),
            message: c_string(message),
            line,
            column,
            severity: crate::GPUCVT_SEVERITY_ERROR,
        }
    }

    /// The diagnostic as a checker's warning or error (`GPUCVT_SEVERITY_ERROR`, `_WARNING`).
    pub(crate) fn with_severity(mut self, severity: u32) -> Self {
        self.severity = severity;
        self
    }

    /// The diagnostic of an error of the Rust API: its message, and the first checker
    /// diagnostic's rule and position where it has one.
    pub(crate) fn of_error(status: gpucvt_status, e: &Error) -> Self {
        let first = match e {
            Error::Invalid { diagnostics, .. } => diagnostics.first(),
            Error::Illegal { diagnostic, .. } => Some(&**diagnostic),
            _ => None,
        };
        let (rule, line, column) = first.map_or(("", 0, 0), |d| (d.rule, d.span.line, d.span.col));
        gpucvt_diag::new(status, rule, &e.to_string(), line, column)
    }

    /// Hands the diagnostic to the caller through `out` (when it is not NULL).
    ///
    /// # Safety
    /// `out` is NULL or writable.
    pub(crate) unsafe fn give(self, out: *mut *mut gpucvt_diag) {
        if !out.is_null() {
            // SAFETY: `out` is non-NULL and writable; the caller owns the box from now on.
            unsafe { out.write(Box::into_raw(Box::new(self))) };
        }
    }
}

/// An empty string for accessors given NULL.
const EMPTY: &[u8] = b"\0";

/// The status of the call that produced `d` (`GPUCVT_E_NULL` for NULL).
///
/// # Safety
/// `d` is NULL or a diagnostic this library returned and that has not been freed.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_status(d: *const gpucvt_diag) -> gpucvt_status {
    guard_value(GPUCVT_E_PANIC, || {
        // SAFETY: the caller guarantees `d` is NULL or live.
        unsafe { d.as_ref() }.map_or(GPUCVT_E_NULL, |d| d.status)
    })
}

/// The rule id (`ptx.rounding-illegal`, `syntax.operand`, …): a NUL-terminated string owned
/// by `d`, empty when the error comes from no checker rule or `d` is NULL.
///
/// # Safety
/// `d` is NULL or a live diagnostic; the string lives as long as `d`.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_rule(d: *const gpucvt_diag) -> *const c_char {
    // SAFETY: the caller guarantees `d` is NULL or live.
    let d = unsafe { d.as_ref() };
    d.map_or(EMPTY.as_ptr().cast(), |d| d.rule.as_ptr())
}

/// The message: a NUL-terminated string owned by `d` (empty for NULL).
///
/// # Safety
/// `d` is NULL or a live diagnostic; the string lives as long as `d`.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_message(d: *const gpucvt_diag) -> *const c_char {
    // SAFETY: the caller guarantees `d` is NULL or live.
    let d = unsafe { d.as_ref() };
    d.map_or(EMPTY.as_ptr().cast(), |d| d.message.as_ptr())
}

/// The 1-based line of the diagnostic in the text (0: no position, or `d` NULL).
///
/// # Safety
/// `d` is NULL or a live diagnostic.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_line(d: *const gpucvt_diag) -> u32 {
    // SAFETY: the caller guarantees `d` is NULL or live.
    unsafe { d.as_ref() }.map_or(0, |d| d.line)
}

/// The 1-based column (in characters) of the diagnostic in the text (0: no position, or `d`
/// NULL).
///
/// # Safety
/// `d` is NULL or a live diagnostic.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_column(d: *const gpucvt_diag) -> u32 {
    // SAFETY: the caller guarantees `d` is NULL or live.
    unsafe { d.as_ref() }.map_or(0, |d| d.column)
}

/// `GPUCVT_SEVERITY_ERROR` or, for a warning of `gpucvt_check_text`, `GPUCVT_SEVERITY_WARNING`
/// (0 for NULL). Every diagnostic of a failed call is an error.
///
/// # Safety
/// `d` is NULL or a live diagnostic.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_severity(d: *const gpucvt_diag) -> u32 {
    // SAFETY: the caller guarantees `d` is NULL or live.
    unsafe { d.as_ref() }.map_or(0, |d| d.severity)
}

/// Frees a diagnostic (NULL is ignored).
///
/// # Safety
/// `d` is NULL or a diagnostic this library returned, not freed before.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_diag_free(d: *mut gpucvt_diag) {
    if !d.is_null() {
        guard_value((), || {
            // SAFETY: `d` came from `Box::into_raw` in `give` and is freed once.
            drop(unsafe { Box::from_raw(d) })
        });
    }
}
