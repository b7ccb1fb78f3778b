//! `gpucvt_form`: one instruction read once ([`Instr::parse`]), evaluated many times.

use crate::diag::gpucvt_diag;
use crate::ffi::{c_str, element_flags, guard, guard_value, non_null, read_sized, write_str};
use crate::gpucvt_status::{self, *};
use model::instr::{Instr, Options};
use model::ptx::eval::EvalError as PtxEvalError;
use model::ptx::slices::{CvtBulkError, CvtKernel, Order};
use model::ptx::target::{PtxVersion, Target};
use model::tile::eval::{EvalError as TileEvalError, Semantics};
use model::tile::types::SpecVersion;
use model::visa::cr0::Cr0;
use model::Error;
use std::ffi::c_char;
use std::sync::OnceLock;

/// Tile IR semantics: what NVIDIA's `tileiras` compiler emits (the default).
pub const GPUCVT_TILE_TILEIRAS: u32 = 0;
/// Tile IR semantics: the specification's text, with undefined results
/// (`GPUCVT_E_UNDEFINED`).
pub const GPUCVT_TILE_SPEC: u32 = 1;

/// The dialect of a form: a PTX `cvt` / `cvt.pack` form.
pub const GPUCVT_DIALECT_PTX: u32 = 1;
/// The dialect of a form: an Intel vISA `mov`.
pub const GPUCVT_DIALECT_VISA: u32 = 2;
/// The dialect of a form: a CUDA Tile IR conversion op.
pub const GPUCVT_DIALECT_TILE: u32 = 3;
/// An AMD instruction (gfx942, gfx950, gfx12: `v_cvt_*`), read with `gpucvt_options::amd_target`.
pub const GPUCVT_DIALECT_AMD: u32 = 4;

/// What a form is read and checked for. Zero-initialise it and set `size`; every zero or NULL
/// field means the default.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gpucvt_options {
    /// `sizeof(gpucvt_options)`.
    pub size: usize,
    /// PTX (and Tile IR's `tileiras` lowering): the target whose rules apply, as PTX writes
    /// it (`"sm_90a"`, `"sm_100f"`); NULL accepts every PTX form that is legal on some target
    /// (and lowers Tile IR for sm_100a).
    pub target: *const c_char,
    /// PTX: the `.version` (`"9.5"`); NULL is the newest gpucvt knows.
    pub ptx_version: *const c_char,
    /// vISA: the control register cr0 (rounding mode, denormal and float-to-int bits); 0 is
    /// its value at kernel entry.
    pub cr0: u32,
    /// Tile IR: `GPUCVT_TILE_TILEIRAS` (0) or `GPUCVT_TILE_SPEC`.
    pub tile_semantics: u32,
    /// Tile IR: the specification version the op is verified at (`"13.4"`); NULL is the
    /// newest.
    pub tile_version: *const c_char,
    /// AMD: the target (`"gfx942"`, `"gfx950"`, `"gfx1200"`, `"gfx1201"`), required to read
    /// an AMD instruction (the same opcode is FNUZ fp8 on gfx942 and OCP fp8 on the others).
    /// Added in the second version of this struct.
    pub amd_target: *const c_char,
    /// AMD: the MODE register (only its FP16_OVFL bit, 23, matters); 0 at kernel entry.
    pub amd_mode: u32,
    /// AMD: the destination register's old value, which a partial write (`op_sel`,
    /// `byte_sel`, a word select) keeps.
    pub amd_old: u64,
}

// SAFETY: `repr(C)` integers and pointers only; the first version ended at `tile_version`.
unsafe impl crate::ffi::Growing for gpucvt_options {
    const OLDER_SIZES: &'static [usize] = &[std::mem::offset_of!(gpucvt_options, amd_target)];
}

/// A form: an instruction read and checked once, immutable, shareable across threads.
pub struct gpucvt_form {
    instr: Instr,
    /// The slice kernel of a PTX form, built on the first `gpucvt_form_eval_slice` (its
    /// tables cost more than most callers of one-lane evaluation would want to pay).
    kernel: OnceLock<Result<CvtKernel, gpucvt_status>>,
    /// Per operand, its width: PTX and vISA operands, or for a Tile IR op one per element of
    /// its source tile (all of the element width).
    operands: Operands,
    result_bits: u32,
    result_elements: u32,
    /// The width of one element's slot in the result (the whole result for `cvt.pack`).
    element_bits: u32,
    dialect: u32,
}

// C callers share a form across threads: it must be Sync (and Send, to be freed by another).
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<gpucvt_form>();
};

enum Operands {
    List(Vec<u32>),
    Uniform { count: u32, bits: u32 },
}

impl gpucvt_form {
    fn operand_count(&self) -> u32 {
        match &self.operands {
            Operands::List(v) => v.len() as u32,
            Operands::Uniform { count, .. } => *count,
        }
    }

    fn operand_bits(&self, i: u32) -> u32 {
        match &self.operands {
            Operands::List(v) => v.get(i as usize).copied().unwrap_or(0),
            Operands::Uniform { count, bits } => {
                if i < *count {
                    *bits
                } else {
                    0
                }
            }
        }
    }
}

/// The status of an error of the Rust API.
fn status_of(e: &Error) -> gpucvt_status {
    match e {
        Error::UnknownInstruction { .. } | Error::Syntax { .. } => GPUCVT_E_PARSE,
        // The reader's diagnostics (syntax rules) versus the checker's.
        Error::Invalid { diagnostics, .. } => match diagnostics.first() {
            Some(d)
                if d.rule.starts_with("syntax")
                    || d.rule.ends_with(".syntax")
                    || d.rule == "ptx.instruction-unknown" =>
            {
                GPUCVT_E_PARSE
            }
            _ => GPUCVT_E_ILLEGAL,
        },
        Error::Ptx(PtxEvalError::OperandCount { .. } | PtxEvalError::OperandTooWide { .. })
        | Error::Tile(TileEvalError::InputTooWide { .. })
        | Error::Operand { .. } => GPUCVT_E_OPERANDS,
        Error::Undefined { .. } => GPUCVT_E_UNDEFINED,
        Error::ResultTooWide { .. } => GPUCVT_E_TOO_SMALL,
        // Not legal on the target, a vISA pair or Tile IR op with no semantics there, a form
        // with no conversion, and whatever a later version of the Rust API adds.
        _ => GPUCVT_E_ILLEGAL,
    }
}

/// The Rust options from the C ones, or the diagnostic of a bad name.
pub(crate) fn options(o: Option<gpucvt_options>) -> Result<Options, (gpucvt_status, String)> {
    let Some(o) = o else {
        return Ok(Options::default());
    };
    let name = |p: *const c_char, what: &str| {
        // SAFETY: the caller guarantees that each string field is NULL or NUL-terminated.
        unsafe { c_str(p) }.map_err(|s| (s, format!("the {what} is not UTF-8")))
    };
    let unknown = |what: &str, text: &str, e: String| {
        (
            GPUCVT_E_UNKNOWN_NAME,
            format!("unknown {what} {:?}: {e}", model::instr::shorten(text)),
        )
    };
    let target = match name(o.target, "target")? {
        None => None,
        Some(t) => Some(
            t.parse::<Target>()
                .map_err(|e| unknown("target", t, e.to_string()))?,
        ),
    };
    let version = match name(o.ptx_version, "PTX version")? {
        None => None,
        Some(v) => Some(
            v.parse::<PtxVersion>()
                .map_err(|e| unknown("PTX version", v, e.to_string()))?,
        ),
    };
    let tile_version = match name(o.tile_version, "Tile IR version")? {
        None => None,
        Some(v) => Some(SpecVersion::from_name(v).ok_or_else(|| {
            unknown(
                "Tile IR version",
                v,
                "expected 13.1, 13.2, 13.3 or 13.4".into(),
            )
        })?),
    };
    let semantics = match o.tile_semantics {
        GPUCVT_TILE_TILEIRAS => Semantics::Tileiras,
        GPUCVT_TILE_SPEC => Semantics::Spec,
        s => {
            return Err((
                GPUCVT_E_ARGUMENT,
                format!(
                "tile_semantics {s} is neither GPUCVT_TILE_TILEIRAS (0) nor GPUCVT_TILE_SPEC (1)"
            ),
            ))
        }
    };
    let amd_target = match name(o.amd_target, "AMD target")? {
        None => None,
        Some(t) => Some(
            t.parse::<model::amd::Target>()
                .map_err(|e| unknown("AMD target", t, e.to_string()))?,
        ),
    };
    Ok(Options {
        target,
        version,
        cr0: Cr0::from_raw(o.cr0),
        semantics,
        tile_version,
        amd_target,
        amd_mode: model::amd::types::Mode::from_raw(o.amd_mode),
        amd_old: o.amd_old,
        ..Options::default()
    })
}

fn form_of(instr: Instr) -> gpucvt_form {
    let result_bits = instr.result_bits();
    let (operands, dialect, result_elements) = match &instr {
        Instr::Ptx(_) => (
            Operands::List(instr.operands().iter().map(|o| o.bits).collect()),
            GPUCVT_DIALECT_PTX,
            0,
        ),
        // (An AMD result is one register, its elements packed as the instruction writes them.)
        Instr::Amd(_) => (
            Operands::List(instr.operands().iter().map(|o| o.bits).collect()),
            GPUCVT_DIALECT_AMD,
            1,
        ),
        Instr::Visa(v) => (
            Operands::List(instr.operands().iter().map(|o| o.bits).collect()),
            GPUCVT_DIALECT_VISA,
            v.src.packed_elements().max(1),
        ),
        Instr::Tile(t) => {
            let n = u32::try_from(t.elements()).unwrap_or(u32::MAX);
            (
                Operands::Uniform {
                    count: n,
                    bits: t.op.src.value.elem.bits(),
                },
                GPUCVT_DIALECT_TILE,
                n,
            )
        }
    };
    let result_elements = match &instr {
        Instr::Ptx(p) if p.form.pack => 1,
        Instr::Ptx(p) => p.form.dtype.lanes(),
        _ => result_elements,
    };
    let element_bits = match &instr {
        Instr::Ptx(p) if !p.form.pack => p.form.dtype.lane_bits(),
        Instr::Ptx(_) | Instr::Amd(_) => result_bits,
        Instr::Visa(v) => v.dst.size() * 8,
        Instr::Tile(t) => t.op.dst.value.elem.bits(),
    };
    gpucvt_form {
        instr,
        kernel: OnceLock::new(),
        operands,
        result_bits,
        result_elements,
        element_bits,
        dialect,
    }
}

/// Reads and checks one instruction: a PTX `cvt` / `cvt.pack` form (`cvt.rn.f16.f32`, or a
/// whole statement `cvt.rn.f16.f32 %h, %f;`), a vISA move (`mov.sat hf <- f`), a Tile IR
/// conversion op (`ftof rounding<zero> : tile<f32> -> tile<f16>`) or, with
/// `opts->amd_target`, an AMD instruction (`v_cvt_pk_fp8_f32 v1, v2, v3`), with the options
/// (NULL for the defaults). `text` is `len` bytes of UTF-8, not necessarily NUL-terminated.
///
/// On success `*out` is the form (free it with `gpucvt_form_free`) and `*diag`, when `diag`
/// is not NULL, is NULL. On failure `*out` is NULL and `*diag` a diagnostic to free with
/// `gpucvt_diag_free`.
///
/// # Safety
/// `text` points to `len` readable bytes; `opts` is NULL or a valid `gpucvt_options` of
/// `opts->size` bytes whose strings are NULL or NUL-terminated; `out` is writable; `diag`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_parse(
    text: *const c_char,
    len: usize,
    opts: *const gpucvt_options,
    out: *mut *mut gpucvt_form,
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
            return fail(GPUCVT_E_NULL, "the instruction text is NULL");
        }
        // SAFETY: `text` points to `len` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
        let Ok(text) = std::str::from_utf8(bytes) else {
            return fail(GPUCVT_E_PARSE, "the instruction text is not UTF-8");
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
        match Instr::parse(text, &opts) {
            Ok(instr) => {
                let form = Box::new(form_of(instr));
                // SAFETY: `out` is writable; the caller owns the box from now on.
                unsafe { out.write(Box::into_raw(form)) };
                Ok(())
            }
            Err(e) => {
                let status = status_of(&e);
                // SAFETY: `diag` is NULL or writable.
                unsafe { gpucvt_diag::of_error(status, &e).give(diag) };
                Err(status)
            }
        }
    })
}

/// Frees a form (NULL is ignored).
///
/// # Safety
/// `f` is NULL or a form this library returned, not freed before, and no other thread is
/// using it.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_free(f: *mut gpucvt_form) {
    if !f.is_null() {
        guard_value((), || {
            // SAFETY: `f` came from `Box::into_raw` in `gpucvt_form_parse` and is freed once.
            drop(unsafe { Box::from_raw(f) })
        });
    }
}

/// Runs an accessor on a live form; `fallback` for NULL.
///
/// # Safety
/// `f` is NULL or a live form.
unsafe fn with_form<T>(
    f: *const gpucvt_form,
    fallback: T,
    get: impl FnOnce(&gpucvt_form) -> T,
) -> T {
    // SAFETY: the caller guarantees `f` is NULL or live.
    match unsafe { f.as_ref() } {
        Some(f) => guard_value(fallback, || get(f)),
        None => fallback,
    }
}

/// The dialect: `GPUCVT_DIALECT_PTX`, `_VISA`, `_TILE` or `_AMD` (0 for NULL).
///
/// # Safety
/// `f` is NULL or a live form.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_dialect(f: *const gpucvt_form) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe { with_form(f, 0, |f| f.dialect) }
}

/// How many source operands one evaluation takes (0 for NULL): PTX `a`, `b`, …, `rbits`,
/// the scale factor, `c`, in instruction order; vISA 1; Tile IR one per element of the
/// source tile, row-major.
///
/// # Safety
/// `f` is NULL or a live form.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_operand_count(f: *const gpucvt_form) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe { with_form(f, 0, |f| f.operand_count()) }
}

/// The width in bits of operand `i` (0 for NULL or `i` out of range).
///
/// # Safety
/// `f` is NULL or a live form.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_operand_bits(f: *const gpucvt_form, i: u32) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe { with_form(f, 0, |f| f.operand_bits(i)) }
}

/// The width in bits of the result (0 for NULL): the destination type's (PTX packed types:
/// the packed register's), or every element side by side, element 0 lowest.
///
/// # Safety
/// `f` is NULL or a live form.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_result_bits(f: *const gpucvt_form) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe { with_form(f, 0, |f| f.result_bits) }
}

/// How many elements the result holds (0 for NULL): PTX lanes (1 for `cvt.pack`), the
/// elements of a vISA packed immediate (else 1), a Tile IR tile's elements.
///
/// # Safety
/// `f` is NULL or a live form.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_result_elements(f: *const gpucvt_form) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe { with_form(f, 0, |f| f.result_elements) }
}

/// The canonical spelling of the form (`cvt.rn.f16.f32`, `mov.sat hf <- f`), written with a
/// NUL into `buf` of `cap` bytes; `*len` (when `len` is not NULL) is its length without the
/// NUL, also when `GPUCVT_E_TOO_SMALL` says `cap` is less than that plus one.
///
/// # Safety
/// `f` is NULL or a live form; `buf` is NULL or has `cap` writable bytes; `len` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_spelling(
    f: *const gpucvt_form,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> gpucvt_status {
    guard(|| {
        // SAFETY: `f` is NULL or live.
        let f = unsafe { non_null(f) }?;
        // SAFETY: `buf` and `len` as the caller guarantees.
        unsafe { write_str(&f.instr.spelling(), buf, cap, len) }
    })
}

/// A 128-bit result, element 0 in the lowest bits.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct gpucvt_u128 {
    /// Bits 63..0.
    pub lo: u64,
    /// Bits 127..64.
    pub hi: u64,
}

impl From<u128> for gpucvt_u128 {
    fn from(v: u128) -> Self {
        gpucvt_u128 {
            lo: v as u64,
            hi: (v >> 64) as u64,
        }
    }
}

/// One evaluation: the result's low 128 bits and the union of its elements' flags; with
/// `wide`, every element is also placed in those words (for results wider than 128 bits).
fn eval_one(
    f: &gpucvt_form,
    ops: &[u64],
    mut wide: Option<&mut [u64]>,
) -> Result<(u128, u32), gpucvt_status> {
    let mut flags = 0u32;
    if let Some(w) = wide.as_deref_mut() {
        w.fill(0);
    }
    let (bits, _) = f
        .instr
        .eval_each(ops, |e| {
            flags |= element_flags(e.src.as_ref(), e.dst.as_ref(), e.input, e.bits, e.flags);
            if let Some(w) = wide.as_deref_mut() {
                let (i, b) = ((e.shift / 64) as usize, e.shift % 64);
                if let Some(x) = w.get_mut(i) {
                    *x |= e.bits << b;
                }
                if b > 0 {
                    if let Some(x) = w.get_mut(i + 1) {
                        *x |= e.bits >> (64 - b);
                    }
                }
            }
        })
        .map_err(|e| status_of(&e))?;
    Ok((bits, flags))
}

/// Evaluates a form on one set of operands (`n_ops` words, each one operand's bit pattern
/// in the low bits, in the order `gpucvt_form_operand_count` describes): the result in
/// `*out` and the union of its elements' `GPUCVT_FLAG_*` in `*flags` (when `flags` is not
/// NULL). PTX forms and vISA moves evaluate without heap allocation. Nothing is written on
/// failure: `GPUCVT_E_OPERANDS` (count or width), `GPUCVT_E_UNDEFINED` (the model says the
/// result is undefined), `GPUCVT_E_TOO_SMALL` (the result is wider than 128 bits: use
/// `gpucvt_form_eval_wide`).
///
/// # Safety
/// `f` is NULL or a live form; `ops` is NULL or points to `n_ops` readable words; `out` is
/// NULL or writable; `flags` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_eval(
    f: *const gpucvt_form,
    ops: *const u64,
    n_ops: usize,
    out: *mut gpucvt_u128,
    flags: *mut u32,
) -> gpucvt_status {
    guard(|| {
        // SAFETY: `f` is NULL or live.
        let f = unsafe { non_null(f) }?;
        if ops.is_null() || out.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        if f.result_bits > 128 {
            return Err(GPUCVT_E_TOO_SMALL);
        }
        // SAFETY: `ops` points to `n_ops` readable words.
        let ops = unsafe { std::slice::from_raw_parts(ops, n_ops) };
        let (bits, fl) = eval_one(f, ops, None)?;
        // SAFETY: `out` is writable, `flags` NULL or writable.
        unsafe {
            out.write(bits.into());
            if !flags.is_null() {
                flags.write(fl);
            }
        }
        Ok(())
    })
}

/// `gpucvt_form_eval` for results of any width: the result in `out[0..words]`, element 0
/// lowest, `out[0]` the lowest 64 bits; `GPUCVT_E_TOO_SMALL` (nothing written) when `words`
/// is less than `ceil(gpucvt_form_result_bits / 64)`. Words past the result are zeroed.
///
/// # Safety
/// As `gpucvt_form_eval`; `out` is NULL or has `words` writable words.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_eval_wide(
    f: *const gpucvt_form,
    ops: *const u64,
    n_ops: usize,
    out: *mut u64,
    words: usize,
    flags: *mut u32,
) -> gpucvt_status {
    guard(|| {
        // SAFETY: `f` is NULL or live.
        let f = unsafe { non_null(f) }?;
        if ops.is_null() || out.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        let need = f.result_bits.div_ceil(64) as usize;
        if words < need {
            return Err(GPUCVT_E_TOO_SMALL);
        }
        // SAFETY: `ops` points to `n_ops` readable words.
        let ops = unsafe { std::slice::from_raw_parts(ops, n_ops) };
        // Into a scratch copy first, so that a failure leaves `out` untouched.
        let mut result = vec![0u64; need];
        let fl = if f.result_bits <= 128 {
            let (bits, fl) = eval_one(f, ops, None)?;
            let both = [bits as u64, (bits >> 64) as u64];
            result.copy_from_slice(&both[..need]);
            fl
        } else {
            eval_one(f, ops, Some(&mut result))?.1
        };
        // SAFETY: `out` has `words` writable words.
        let out = unsafe { std::slice::from_raw_parts_mut(out, words) };
        out.fill(0);
        out[..need].copy_from_slice(&result);
        if !flags.is_null() {
            // SAFETY: `flags` is non-NULL and writable.
            unsafe { flags.write(fl) };
        }
        Ok(())
    })
}

/// `gpucvt_form_eval` element by element: `bits[k]` and, when `flags` is not NULL,
/// `flags[k]` for element `k` of the result (element 0 in the lowest bits, as in the
/// result; `k` below `gpucvt_form_result_elements`): each PTX lane, vISA element or Tile IR
/// element with its own flags. `cvt.pack` has one element, its whole 32-bit result.
/// `GPUCVT_E_TOO_SMALL` when `n_elements` is less than the result's elements; entries past
/// them are left alone; nothing is written on failure.
///
/// # Safety
/// As `gpucvt_form_eval`; `bits` is NULL or has `n_elements` writable words, `flags` NULL or
/// `n_elements` writable elements.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_eval_elements(
    f: *const gpucvt_form,
    ops: *const u64,
    n_ops: usize,
    bits: *mut u64,
    flags: *mut u32,
    n_elements: usize,
) -> gpucvt_status {
    guard(|| {
        // SAFETY: `f` is NULL or live.
        let f = unsafe { non_null(f) }?;
        if ops.is_null() || bits.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        let n = f.result_elements as usize;
        if n_elements < n {
            return Err(GPUCVT_E_TOO_SMALL);
        }
        // SAFETY: `ops` points to `n_ops` readable words.
        let ops = unsafe { std::slice::from_raw_parts(ops, n_ops) };
        // Into scratch first, so that a failure leaves the caller's arrays untouched.
        let mut out = vec![(0u64, 0u32); n];
        let whole = n == 1;
        let w = f.element_bits.max(1);
        let (low, _) = f
            .instr
            .eval_each(ops, |e| {
                let fl = element_flags(e.src.as_ref(), e.dst.as_ref(), e.input, e.bits, e.flags);
                let k = if whole { 0 } else { (e.shift / w) as usize };
                if let Some(slot) = out.get_mut(k) {
                    slot.0 = e.bits;
                    slot.1 |= fl;
                }
            })
            .map_err(|e| status_of(&e))?;
        if whole {
            // One element: the whole result (cvt.pack's c bits included).
            out[0].0 = low as u64;
        }
        // SAFETY: `bits` has `n_elements >= n` writable words; `flags` NULL or as many.
        unsafe {
            for (k, &(b, fl)) in out.iter().enumerate() {
                bits.add(k).write(b);
                if !flags.is_null() {
                    flags.add(k).write(fl);
                }
            }
        }
        Ok(())
    })
}

/// Evaluates a form for the active lanes of a warp, as a simulator's instruction handler
/// does: lane `i` (for each bit `i` of `active_mask`) takes its `n_ops` operands from
/// `ops[i * n_ops ..]` (lane-major) and writes `out[i]` and, when `flags` is not NULL,
/// `flags[i]`. Inactive lanes are left untouched, and so is every lane whose evaluation fails:
/// its bit is set in `*failed` (when `failed` is not NULL) and the status is that of the
/// lowest failing lane (the other lanes are still evaluated).
///
/// `GPUCVT_E_ARGUMENT` when `n_lanes` is more than 64 or `active_mask` has bits at or above
/// `n_lanes`; `GPUCVT_E_OPERANDS` when `n_ops` is not the form's operand count;
/// `GPUCVT_E_TOO_SMALL` for results wider than 128 bits. Then nothing is written.
///
/// # Safety
/// `f` is NULL or a live form; `ops` is NULL or has `n_lanes * n_ops` readable words; `out`
/// is NULL or has `n_lanes` writable elements; `flags` is NULL or has `n_lanes` writable
/// elements; `failed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_eval_lanes(
    f: *const gpucvt_form,
    n_lanes: u32,
    active_mask: u64,
    ops: *const u64,
    n_ops: usize,
    out: *mut gpucvt_u128,
    flags: *mut u32,
    failed: *mut u64,
) -> gpucvt_status {
    guard(|| {
        // SAFETY: `f` is NULL or live.
        let f = unsafe { non_null(f) }?;
        if ops.is_null() || out.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        if n_lanes > 64 || (n_lanes < 64 && active_mask >> n_lanes != 0) {
            return Err(GPUCVT_E_ARGUMENT);
        }
        if n_ops != f.operand_count() as usize {
            return Err(GPUCVT_E_OPERANDS);
        }
        if f.result_bits > 128 {
            return Err(GPUCVT_E_TOO_SMALL);
        }
        let lanes = n_lanes as usize;
        // SAFETY: the caller guarantees the sizes of `ops`, `out` and `flags`.
        let (ops, out) = unsafe {
            (
                std::slice::from_raw_parts(ops, lanes * n_ops),
                std::slice::from_raw_parts_mut(out, lanes),
            )
        };
        let mut flags = if flags.is_null() {
            None
        } else {
            // SAFETY: `flags` is non-NULL and has `n_lanes` writable elements.
            Some(unsafe { std::slice::from_raw_parts_mut(flags, lanes) })
        };
        let mut status = GPUCVT_OK;
        let mut failed_mask = 0u64;
        let mut mask = active_mask;
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            match eval_one(f, &ops[i * n_ops..(i + 1) * n_ops], None) {
                Ok((bits, fl)) => {
                    out[i] = bits.into();
                    if let Some(fs) = flags.as_deref_mut() {
                        fs[i] = fl;
                    }
                }
                Err(s) => {
                    failed_mask |= 1 << i;
                    if status == GPUCVT_OK {
                        status = s;
                    }
                }
            }
        }
        if !failed.is_null() {
            // SAFETY: `failed` is non-NULL and writable.
            unsafe { failed.write(failed_mask) };
        }
        if status == GPUCVT_OK {
            Ok(())
        } else {
            Err(status)
        }
    })
}

/// The status of a slice kernel's error.
fn bulk_status(e: &CvtBulkError) -> gpucvt_status {
    match e {
        CvtBulkError::Form(_) => GPUCVT_E_ILLEGAL,
        CvtBulkError::Slices(_) => GPUCVT_E_TOO_SMALL,
        _ => GPUCVT_E_OPERANDS,
    }
}

/// Runs `kernel` on words of the widths it takes: `S` and `D` are the smallest of
/// `uint8_t` … `uint64_t` that hold a source and a result word.
///
/// # Safety
/// `src` has `n_src` readable words of `S`, `dst` `n_dst` writable words of `D`, `rbits`
/// (when not NULL) `n_dst` readable words.
unsafe fn run_slice<S: model::kernels::Word, D: model::kernels::Word>(
    kernel: &CvtKernel,
    src: *const core::ffi::c_void,
    n_src: usize,
    dst: *mut core::ffi::c_void,
    n_dst: usize,
    rbits: *const u32,
    threads: usize,
) -> Result<(), gpucvt_status> {
    // SAFETY: as the caller guarantees; the words are plain integers, any bits are valid.
    let (src, dst, rbits) = unsafe {
        (
            std::slice::from_raw_parts(src.cast::<S>(), n_src),
            std::slice::from_raw_parts_mut(dst.cast::<D>(), n_dst),
            (!rbits.is_null()).then(|| std::slice::from_raw_parts(rbits, n_dst)),
        )
    };
    let r = if threads <= 1 {
        match rbits {
            Some(r) => kernel.convert_rs(src, dst, r),
            None => kernel.convert(src, dst),
        }
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|_| GPUCVT_E_ARGUMENT)?;
        pool.install(|| kernel.convert_par(src, dst, rbits))
    };
    r.map_err(|e| bulk_status(&e))
}

/// Evaluates a PTX form on whole arrays through gpucvt's slice kernels (lookup tables for
/// sources of at most 16 bits, vectorised code for f32 sources; the same results as
/// `gpucvt_form_eval`). `dst` holds `n_dst` results, one per instruction, each in the
/// smallest of `uint8_t`, `uint16_t`, `uint32_t`, `uint64_t` that holds
/// `gpucvt_form_result_bits`. `src` holds the instructions' sources in instruction order,
/// each in the smallest such word that holds `gpucvt_form_operand_bits(f, 0)`: one per
/// instruction, or for a scalar source and a packed destination (`cvt.rn.satfinite.e4m3x2.f32`)
/// the `a, b, …` of each instruction one after the other (`n_src` = `n_dst` × that count).
/// `.rs` forms take `rbits`, one word per instruction; other forms take NULL. `.scaled`
/// forms use the scale factor 1 and `cvt.pack` the `c` operand 0. `threads` > 1 spreads long
/// arrays over that many threads (a pool made for the call).
///
/// `GPUCVT_E_ILLEGAL` for a vISA or Tile IR form (there are no slice kernels for them);
/// `GPUCVT_E_OPERANDS` when the lengths do not fit together, `rbits` is missing or not
/// wanted, or a source is wider than its type.
///
/// # Safety
/// `f` is NULL or a live form; `src` is NULL or has `n_src` readable words; `dst` is NULL or
/// has `n_dst` writable words; `rbits` is NULL or has `n_dst` readable words.
#[no_mangle]
pub unsafe extern "C" fn gpucvt_form_eval_slice(
    f: *const gpucvt_form,
    src: *const core::ffi::c_void,
    n_src: usize,
    dst: *mut core::ffi::c_void,
    n_dst: usize,
    rbits: *const u32,
    threads: usize,
) -> gpucvt_status {
    guard(|| {
        // SAFETY: `f` is NULL or live.
        let f = unsafe { non_null(f) }?;
        if src.is_null() || dst.is_null() {
            return Err(GPUCVT_E_NULL);
        }
        let Instr::Ptx(p) = &f.instr else {
            return Err(GPUCVT_E_ILLEGAL);
        };
        let kernel = f
            .kernel
            .get_or_init(|| {
                CvtKernel::new(&p.form, Order::Instruction).map_err(|e| bulk_status(&e))
            })
            .as_ref()
            .map_err(|s| *s)?;
        let bytes = |bits: u32| match bits {
            0..=8 => 1,
            9..=16 => 2,
            17..=32 => 4,
            _ => 8,
        };
        macro_rules! dispatch {
            ($($s:literal $S:ty),*; $($d:literal $D:ty),*) => {
                dispatch!(@outer [$($s $S),*] [$($d $D),*])
            };
            (@outer [$($s:literal $S:ty),*] $ds:tt) => {
                match bytes(kernel.source_bits()) {
                    $($s => dispatch!(@inner $S $ds),)*
                    _ => Err(GPUCVT_E_PANIC),
                }
            };
            (@inner $S:ty [$($d:literal $D:ty),*]) => {
                match bytes(kernel.result_bits()) {
                    // SAFETY: the caller guarantees the arrays' sizes.
                    $($d => unsafe { run_slice::<$S, $D>(kernel, src, n_src, dst, n_dst, rbits, threads) },)*
                    _ => Err(GPUCVT_E_PANIC),
                }
            };
        }
        dispatch!(1 u8, 2 u16, 4 u32, 8 u64; 1 u8, 2 u16, 4 u32, 8 u64)
    })
}
