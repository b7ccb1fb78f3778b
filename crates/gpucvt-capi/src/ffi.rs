//! What every entry point shares: the panic guard, reading size-first structs, writing
//! strings into caller buffers, and the flags' C encoding.

use crate::gpucvt_status::{self, *};
use crate::{
    GPUCVT_FLAG_FLUSHED, GPUCVT_FLAG_INEXACT, GPUCVT_FLAG_INVALID, GPUCVT_FLAG_NAN_CANONICAL,
    GPUCVT_FLAG_OVERFLOW, GPUCVT_FLAG_SATURATED, GPUCVT_FLAG_UNDERFLOW,
};
use model::core::{Flags, Format};
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs an entry point's body; a panic becomes [`GPUCVT_E_PANIC`] instead of unwinding into
/// C (which would be undefined behaviour).
pub(crate) fn guard(body: impl FnOnce() -> Result<(), gpucvt_status>) -> gpucvt_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => GPUCVT_OK,
        Ok(Err(s)) => s,
        Err(_) => GPUCVT_E_PANIC,
    }
}

/// [`guard`] for the accessors that return a value: `fallback` on a panic.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// A reference from a pointer that must not be NULL.
///
/// # Safety
/// `p` is NULL or points to a valid `T` that lives for `'a` and is not written meanwhile.
pub(crate) unsafe fn non_null<'a, T>(p: *const T) -> Result<&'a T, gpucvt_status> {
    // SAFETY: the caller guarantees that a non-NULL `p` points to a live `T`.
    unsafe { p.as_ref() }.ok_or(GPUCVT_E_NULL)
}

/// The largest `size` accepted in a size-first struct: a guard against a garbage size
/// sending the zero check far past the caller's struct.
const MAX_STRUCT_SIZE: usize = 4096;

/// A size-first struct (its first field a `size_t` holding its size in bytes) that may grow:
/// new fields are added at the end, and every field's all-zero bytes mean its default.
///
/// # Safety
/// The implementer is `#[repr(C)]`, made of integers and raw pointers only (so that all-zero
/// bytes are a valid value), and `OLDER_SIZES` are the sizes of its earlier published
/// versions, each ending on a field boundary.
pub(crate) unsafe trait Growing: Copy {
    /// `sizeof` each earlier version of the struct (the sizes an older caller gives).
    const OLDER_SIZES: &'static [usize];
}

/// A copy of a size-first struct. An earlier version's struct (of one of its sizes) is read
/// with the fields it lacks zero, their defaults; a newer, larger one is accepted when the
/// fields this library does not know are all zero, so that a caller never has a setting
/// silently ignored. Any other size is [`GPUCVT_E_ARGUMENT`].
///
/// # Safety
/// `p` is NULL or points to at least `size` readable bytes, `size` being its first field.
pub(crate) unsafe fn read_sized<T: Growing>(p: *const T) -> Result<Option<T>, gpucvt_status> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: every such struct starts with a `size_t`; `p` is non-NULL and readable.
    let size = unsafe { p.cast::<usize>().read_unaligned() };
    let ours = std::mem::size_of::<T>();
    if (size < ours && !T::OLDER_SIZES.contains(&size)) || size > MAX_STRUCT_SIZE {
        return Err(GPUCVT_E_ARGUMENT);
    }
    if size > ours {
        // SAFETY: the caller's struct has `size` bytes, and `size > ours`.
        let extra = unsafe { std::slice::from_raw_parts(p.cast::<u8>().add(ours), size - ours) };
        if extra.iter().any(|&b| b != 0) {
            return Err(GPUCVT_E_ARGUMENT);
        }
    }
    let mut out = std::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: `p` has at least `min(size, ours)` readable bytes and `out` `ours` writable
    // ones; they do not overlap. All-zero bytes are a valid `T` (the `Growing` contract),
    // and the copied prefix is the caller's valid fields.
    unsafe {
        std::ptr::copy_nonoverlapping(
            p.cast::<u8>(),
            out.as_mut_ptr().cast::<u8>(),
            size.min(ours),
        );
        Ok(Some(out.assume_init()))
    }
}

/// A NUL-terminated string argument as UTF-8 (`None` for NULL).
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const c_char) -> Result<Option<&'a str>, gpucvt_status> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map(Some).map_err(|_| GPUCVT_E_UNKNOWN_NAME)
}

/// Writes `text` and a NUL into `buf` (of `cap` bytes), and its length without the NUL into
/// `*len` when `len` is not NULL, which it always is, so that a first call with `cap` 0
/// tells the size to allocate. [`GPUCVT_E_TOO_SMALL`] (and nothing written to `buf`) when
/// `cap` is less than the length plus one.
///
/// # Safety
/// `buf` is NULL or points to `cap` writable bytes; `len` is NULL or writable.
pub(crate) unsafe fn write_str(
    text: &str,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> Result<(), gpucvt_status> {
    if !len.is_null() {
        // SAFETY: `len` is non-NULL and writable.
        unsafe { len.write(text.len()) };
    }
    if cap < text.len() + 1 {
        return Err(GPUCVT_E_TOO_SMALL);
    }
    if buf.is_null() {
        return Err(GPUCVT_E_NULL);
    }
    // SAFETY: `buf` has `cap >= text.len() + 1` writable bytes, and `text` does not overlap
    // it (it is this library's own string).
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        buf.add(text.len()).write(0);
    }
    Ok(())
}

/// The core's flags in the C encoding.
pub(crate) fn flags_bits(f: Flags) -> u32 {
    let mut out = 0;
    for (flag, bit) in [
        (Flags::INEXACT, GPUCVT_FLAG_INEXACT),
        (Flags::OVERFLOW, GPUCVT_FLAG_OVERFLOW),
        (Flags::UNDERFLOW, GPUCVT_FLAG_UNDERFLOW),
        (Flags::INVALID, GPUCVT_FLAG_INVALID),
        (Flags::SATURATED, GPUCVT_FLAG_SATURATED),
        (Flags::FLUSHED, GPUCVT_FLAG_FLUSHED),
    ] {
        if f.contains(flag) {
            out |= bit;
        }
    }
    out
}

/// The flags of one element: the core's, and [`GPUCVT_FLAG_NAN_CANONICAL`] when a NaN input
/// came out as the destination's canonical NaN. (The input is decoded only when the result
/// is that pattern, so that the common case costs one comparison.)
pub(crate) fn element_flags(
    src: Option<&Format>,
    dst: Option<&Format>,
    input: u64,
    bits: u64,
    flags: Flags,
) -> u32 {
    let mut out = if flags.is_empty() {
        0
    } else {
        flags_bits(flags)
    };
    if let (Some(src), Some(dst)) = (src, dst) {
        if dst.canonical_nan() == Some(bits) && src.decode(input).is_nan() {
            out |= GPUCVT_FLAG_NAN_CANONICAL;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic inside an entry point's body is a status, never an unwind into C.
    #[test]
    fn panics_become_statuses() {
        assert_eq!(guard(|| panic!("a bug")), GPUCVT_E_PANIC);
        assert_eq!(guard(|| Err(GPUCVT_E_OPERANDS)), GPUCVT_E_OPERANDS);
        assert_eq!(guard(|| Ok(())), GPUCVT_OK);
        assert_eq!(guard_value(7u32, || panic!("a bug")), 7);
    }

    #[test]
    fn flags_map_one_to_one() {
        let all = [
            Flags::INEXACT,
            Flags::OVERFLOW,
            Flags::UNDERFLOW,
            Flags::INVALID,
            Flags::SATURATED,
            Flags::FLUSHED,
        ];
        let mut seen = 0u32;
        for f in all {
            let b = flags_bits(f);
            assert_eq!(b.count_ones(), 1, "{f}");
            assert_eq!(seen & b, 0, "{f}");
            seen |= b;
        }
        assert_eq!(seen & GPUCVT_FLAG_NAN_CANONICAL, 0);
    }
}
