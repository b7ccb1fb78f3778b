//! The stateless core for compilers and quantizers: formats by name, and one
//! [`Conversion`] of one encoding under a policy.

use crate::diag::gpucvt_diag;
use crate::ffi::{c_str, element_flags, guard, guard_value, read_sized, write_str};
use crate::gpucvt_status::{self, *};
use model::core::format::CATALOGUE;
use model::core::{Conversion, Format, IntNan, IntOverflow, NanResult, Overflow, Policy, Rounding};
use std::ffi::c_char;

/// A number format of gpucvt's catalogue. A value: copy it freely; it needs no freeing.
/// Get one from `gpucvt_format_by_name`; `id` is an index into this library's catalogue
/// (0 is no format), not stable across versions, so programs keep names, not ids.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct gpucvt_format {
    /// 1 + the catalogue index; 0 for no format.
    pub id: u32,
}

fn format_of(f: gpucvt_format) -> Option<&'static Format> {
    CATALOGUE.get((f.id as usize).checked_sub(1)?)
}

/// Looks a format up by any name gpucvt accepts, case-insensitively: its own (`e4m3`,
/// `bf16`, `s32`), ml_dtypes' (`float8_e4m3fn`, `bfloat16`), safetensors' (`F8_E4M3`),
/// MLIR's (`f8E4M3FN`), LLVM APFloat's (`Float8E4M3FN`, `Float8E8M0FNU`, `Float4E2M1FN`,
/// `IEEEhalf`, `BFloat`), and PTX's type names with their dot (`.e4m3`, `.bf16`, `.u8`).
/// `GPUCVT_E_UNKNOWN_NAME` for a name gpucvt does not know, another tool's format it does not
/// have, or a name tools read differently (`float`): `*diag` (when `diag` is not NULL) says
/// which, with the nearest name when one is close.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `out` is NULL or writable; `diag` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_format_by_name(
    name: *const c_char,
    out: *mut gpucvt_format,
    diag: *mut *mut gpucvt_diag,
) -> gpucvt_status {
    guard(|| {
        if !diag.is_null() {
            // SAFETY: `diag` is non-NULL and writable.
            unsafe { diag.write(std::ptr::null_mut()) };
        }
        if out.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        // SAFETY: `name` is NULL or NUL-terminated.
        let name = match unsafe { c_str(name) } {
            Ok(Some(n)) => n,
            Ok(None) => return Err(GPUCVT_E_NULL),
            Err(s) => {
                // SAFETY: `diag` is NULL or writable.
                unsafe { gpucvt_diag::new(s, "", "the name is not UTF-8", 0, 0).give(diag) };
                return Err(s);
            }
        };
        // PTX writes its types with a dot; the names are otherwise gpucvt's own.
        let bare = name.trim().strip_prefix('.').unwrap_or(name);
        match Format::from_name(bare) {
            Ok(f) => {
                let i = CATALOGUE
                    .iter()
                    .position(|c| c == f)
                    .ok_or(GPUCVT_E_PANIC)?;
                // SAFETY: `out` is non-NULL and writable.
                unsafe { out.write(gpucvt_format { id: i as u32 + 1 }) };
                Ok(())
            }
            Err(e) => {
                let d = gpucvt_diag::new(GPUCVT_E_UNKNOWN_NAME, "", &e.to_string(), 0, 0);
                // SAFETY: `diag` is NULL or writable.
                unsafe { d.give(diag) };
                Err(GPUCVT_E_UNKNOWN_NAME)
            }
        }
    })
}

/// The width of a format's encodings in bits (0 for no format).
#[no_mangle]
pub extern "C" fn gpucvt_format_bits(f: gpucvt_format) -> u32 {
    guard_value(0, || format_of(f).map_or(0, |f| f.width()))
}

/// The format's catalogue name (`e4m3` for `Float8E4M3FN`), written with a NUL into `buf`
/// of `cap` bytes, its length without the NUL in `*len` (when `len` is not NULL, also when
/// `GPUCVT_E_TOO_SMALL` says `cap` is too small). `GPUCVT_E_ARGUMENT` for no format.
///
/// # Safety
/// `buf` is NULL or has `cap` writable bytes; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_format_name(
    f: gpucvt_format,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> gpucvt_status {
    guard(|| {
        let f = format_of(f).ok_or(GPUCVT_E_ARGUMENT)?;
        // SAFETY: as the caller guarantees.
        unsafe { write_str(f.name, buf, cap, len) }
    })
}

/// Rounding: to nearest, ties to even (the default).
pub const GPUCVT_ROUND_RN: u32 = 0;
/// Rounding: to nearest, ties away from zero.
pub const GPUCVT_ROUND_RNA: u32 = 1;
/// Rounding: toward zero.
pub const GPUCVT_ROUND_RZ: u32 = 2;
/// Rounding: toward negative infinity.
pub const GPUCVT_ROUND_RM: u32 = 3;
/// Rounding: toward positive infinity.
pub const GPUCVT_ROUND_RP: u32 = 4;
/// Rounding: stochastic, with the caller's random bits (`rbits`, `rbits_width` of them).
pub const GPUCVT_ROUND_RS: u32 = 5;
/// Rounding: to an integral value, nearest even.
pub const GPUCVT_ROUND_RNI: u32 = 6;
/// Rounding: to an integral value, toward zero.
pub const GPUCVT_ROUND_RZI: u32 = 7;
/// Rounding: to an integral value, toward negative infinity.
pub const GPUCVT_ROUND_RMI: u32 = 8;
/// Rounding: to an integral value, toward positive infinity.
pub const GPUCVT_ROUND_RPI: u32 = 9;

/// Policy: subnormal inputs become zeros of the same sign (PTX `.ftz` on an f32 source).
pub const GPUCVT_POLICY_FLUSH_INPUTS: u32 = 1;
/// Policy: subnormal results become zeros of the same sign.
pub const GPUCVT_POLICY_FLUSH_OUTPUTS: u32 = 2;
/// Policy: `.sat`: float results clamp to [0, 1] (NaN gives +0); integers to their range.
pub const GPUCVT_POLICY_SAT: u32 = 4;
/// Policy: `.satfinite`: infinities and overflows give the largest finite value.
pub const GPUCVT_POLICY_SATFINITE: u32 = 8;
/// Policy: `.relu`: negative results and -0 become +0.
pub const GPUCVT_POLICY_RELU: u32 = 16;
/// Policy: a -0 result becomes +0.
pub const GPUCVT_POLICY_POSITIVE_ZERO: u32 = 32;
/// Policy: float overflow always gives the largest finite value (not IEEE 754's infinity).
pub const GPUCVT_POLICY_OVERFLOW_SATURATE: u32 = 64;
/// Policy: a NaN keeps its sign and payload (truncated or extended) instead of becoming
/// the destination's canonical NaN.
pub const GPUCVT_POLICY_NAN_PAYLOAD: u32 = 128;
/// Policy: NaN into an integer gives `1 << (width - 1)` instead of 0.
pub const GPUCVT_POLICY_INT_NAN_HIGH_BIT: u32 = 256;
/// Policy: out-of-range integer results keep their low bits instead of clamping.
pub const GPUCVT_POLICY_INT_WRAP: u32 = 512;

const POLICY_KNOWN: u32 = 1023;

/// How `gpucvt_convert` rounds and what policies apply. Zero-initialise it and set `size`:
/// zeros are IEEE 754 round-to-nearest-even with no flushing, clamping or saturation.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gpucvt_policy {
    /// `sizeof(gpucvt_policy)`.
    pub size: usize,
    /// `GPUCVT_ROUND_*`.
    pub rounding: u32,
    /// `GPUCVT_ROUND_RS`: how many random bits `rbits` holds (1 to 64); 0 is the width of a
    /// lane of PTX's `.rs` forms into the destination (13 for f16, 16 for bf16, 8 otherwise).
    pub rbits_width: u32,
    /// `GPUCVT_POLICY_*` bits.
    pub options: u32,
    /// Multiply the input by 2^scale before rounding (exact).
    pub scale: i32,
}

// SAFETY: `repr(C)` integers only; this is the first version's layout.
unsafe impl crate::ffi::Growing for gpucvt_policy {
    const OLDER_SIZES: &'static [usize] = &[];
}

fn rounding(r: u32, width: u32, rbits: u64, dst: &Format) -> Result<Rounding, gpucvt_status> {
    Ok(match r {
        GPUCVT_ROUND_RN => Rounding::RN,
        GPUCVT_ROUND_RNA => Rounding::RNA,
        GPUCVT_ROUND_RZ => Rounding::RZ,
        GPUCVT_ROUND_RM => Rounding::RM,
        GPUCVT_ROUND_RP => Rounding::RP,
        GPUCVT_ROUND_RS => {
            let w = if width == 0 {
                model::ptx::eval::default_rbits_width(dst)
            } else {
                width
            };
            if w > 64 {
                return Err(GPUCVT_E_ARGUMENT);
            }
            if w < 64 && rbits >> w != 0 {
                return Err(GPUCVT_E_OPERANDS);
            }
            Rounding::stochastic(rbits, w)
        }
        GPUCVT_ROUND_RNI => Rounding::RNI,
        GPUCVT_ROUND_RZI => Rounding::RZI,
        GPUCVT_ROUND_RMI => Rounding::RMI,
        GPUCVT_ROUND_RPI => Rounding::RPI,
        _ => return Err(GPUCVT_E_ARGUMENT),
    })
}

/// Converts one encoding `bits` of `src` into `dst` under `policy` (NULL: round to nearest
/// even, IEEE 754 behaviour): the result in `*out` and its `GPUCVT_FLAG_*` in `*flags` (when
/// `flags` is not NULL). `rbits` are the random bits of `GPUCVT_ROUND_RS` (0 otherwise).
/// `GPUCVT_E_OPERANDS` when `bits` (or `rbits`) has bits above its width;
/// `GPUCVT_E_ARGUMENT` for no format, an unknown rounding or policy bit. Allocation-free.
///
/// # Safety
/// `policy` is NULL or a valid `gpucvt_policy` of `policy->size` bytes; `out` is NULL or
/// writable; `flags` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_convert(
    src: gpucvt_format,
    dst: gpucvt_format,
    policy: *const gpucvt_policy,
    bits: u64,
    rbits: u64,
    out: *mut u64,
    flags: *mut u32,
) -> gpucvt_status {
    guard(|| {
        if out.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        let (s, d) = (
            format_of(src).ok_or(GPUCVT_E_ARGUMENT)?,
            format_of(dst).ok_or(GPUCVT_E_ARGUMENT)?,
        );
        // SAFETY: `policy` is NULL or a valid struct of `policy->size` bytes.
        let p = unsafe { read_sized(policy) }?.unwrap_or(gpucvt_policy {
            size: 0,
            rounding: GPUCVT_ROUND_RN,
            rbits_width: 0,
            options: 0,
            scale: 0,
        });
        if p.options & !POLICY_KNOWN != 0 {
            return Err(GPUCVT_E_ARGUMENT);
        }
        if p.rounding != GPUCVT_ROUND_RS && rbits != 0 {
            return Err(GPUCVT_E_OPERANDS);
        }
        if bits & !s.mask() != 0 {
            return Err(GPUCVT_E_OPERANDS);
        }
        let on = |bit: u32| p.options & bit != 0;
        let policy = Policy {
            // Peers' NaN and ue8m0 rules (`gpucvt::compat`) are not offered in C yet.
            no_nan: Default::default(),
            lowest_binade_up: false,
            unrepresentable_nan: false,
            flush_inputs: on(GPUCVT_POLICY_FLUSH_INPUTS),
            flush_outputs: on(GPUCVT_POLICY_FLUSH_OUTPUTS),
            sat: on(GPUCVT_POLICY_SAT),
            satfinite: on(GPUCVT_POLICY_SATFINITE),
            relu: on(GPUCVT_POLICY_RELU),
            positive_zero: on(GPUCVT_POLICY_POSITIVE_ZERO),
            overflow: if on(GPUCVT_POLICY_OVERFLOW_SATURATE) {
                Overflow::Saturate
            } else {
                Overflow::Ieee
            },
            nan: if on(GPUCVT_POLICY_NAN_PAYLOAD) {
                NanResult::Payload
            } else {
                NanResult::Canonical
            },
            int_nan: if on(GPUCVT_POLICY_INT_NAN_HIGH_BIT) {
                IntNan::HighBit
            } else {
                IntNan::Zero
            },
            int_overflow: if on(GPUCVT_POLICY_INT_WRAP) {
                IntOverflow::Wrap
            } else {
                IntOverflow::Clamp
            },
            scale: p.scale,
        };
        let r = rounding(p.rounding, p.rbits_width, rbits, d)?;
        let o = Conversion::new(*s, *d, r, policy).apply(bits);
        // SAFETY: `out` is non-NULL and writable; `flags` NULL or writable.
        unsafe {
            out.write(o.bits);
            if !flags.is_null() {
                flags.write(element_flags(Some(s), Some(d), bits, o.bits, o.flags));
            }
        }
        Ok(())
    })
}
