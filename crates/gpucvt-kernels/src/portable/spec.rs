//! What a kernel reads about its destination format: one [`Spec`] for the run-time kernel
//! (`small.rs`) and the specialised ones (`fast.rs`), and the formats with specialised
//! kernels as zero-sized types ([`formats`]) whose constants are their `Spec`s.

use gpucvt_core::format::{self, Format, Layout};

/// Everything the element function reads about a destination format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    pub(crate) man: u32,
    pub(crate) bias: i32,
    /// Unpadded magnitude encoding of the largest finite value.
    pub(crate) max_enc: u32,
    /// Unpadded magnitude encoding of infinity (0 without).
    pub(crate) inf_enc: u32,
    pub(crate) has_inf: bool,
    pub(crate) has_nan: bool,
    pub(crate) signed: bool,
    pub(crate) sign_pos: u32,
    pub(crate) pad: u32,
    /// Full encoding of the NaN result (the largest finite value for formats without NaN).
    pub(crate) nan_full: u32,
}

impl Spec {
    /// The description of a float format (garbage for other layouts; callers check
    /// `small::Params::new` first).
    pub(crate) const fn of(f: &Format) -> Spec {
        let (man, bias, exp, signed, pad) = match f.layout {
            Layout::Float(l) => (l.man_bits, l.bias, l.exp_bits, l.signed, l.pad_bits),
            Layout::Fixed(_) => (0, 0, 0, false, 0),
        };
        Spec {
            man,
            bias,
            max_enc: (f.max_finite_bits() >> pad) as u32,
            inf_enc: match f.infinity() {
                Some(b) => (b >> pad) as u32,
                None => 0,
            },
            has_inf: f.has_infinity(),
            has_nan: f.has_nan(),
            signed,
            sign_pos: exp + man + pad,
            pad,
            nan_full: match f.canonical_nan() {
                Some(b) => b as u32,
                None => f.max_finite_bits() as u32,
            },
        }
    }
}

/// Which format a specialised kernel is compiled for (some hand-written kernels exist for
/// some formats only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Id {
    F16,
    Bf16,
    Tf32,
    E4m3,
    E5m2,
    E2m3,
    E3m2,
    E2m1,
}

impl Id {
    /// The specialised format described by `spec`, if it is one.
    pub(crate) fn of(spec: &Spec) -> Option<Id> {
        use formats::*;
        [
            (F16::SPEC, F16::ID),
            (BF16::SPEC, BF16::ID),
            (TF32::SPEC, TF32::ID),
            (E4M3::SPEC, E4M3::ID),
            (E5M2::SPEC, E5M2::ID),
            (E2M3::SPEC, E2M3::ID),
            (E3M2::SPEC, E3M2::ID),
            (E2M1::SPEC, E2M1::ID),
        ]
        .into_iter()
        .find(|(s, _)| s == spec)
        .map(|(_, id)| id)
    }

    /// The 8-, 6- and 4-bit formats.
    pub(crate) const fn is_narrow(self) -> bool {
        matches!(self, Id::E4m3 | Id::E5m2 | Id::E2m3 | Id::E3m2 | Id::E2m1)
    }
}

/// A destination format of the specialised kernels, as a type: each kernel is compiled per
/// format with every field of its [`Spec`] an immediate.
pub(crate) trait Fmt: 'static {
    /// The format's description.
    const SPEC: Spec;
    /// Which format.
    const ID: Id;
    /// The random width of the format's PTX `.rs` form (`rbits` holds 13 bits per `f16x2`
    /// lane, 16 per `bf16x2` lane, 8 per lane of the FP8/FP6/FP4 x4 forms; 0: no `.rs`
    /// form). The `RS` kernels have an instance with this width as a compile-time constant
    /// (the mask, the shifts and the subnormal scale become immediates); other widths use the
    /// instance that reads the width from `Knobs::w`.
    const RS_WIDTH: u32;
}

/// The formats with specialised kernels, named as `gpucvt_core::format` names them.
#[allow(clippy::upper_case_acronyms)] // the formats' own names
pub(crate) mod formats {
    use super::{format, Fmt, Id, Spec};

    macro_rules! formats {
        ($($name:ident $id:ident $rs:expr;)*) => {$(
            #[doc = concat!("`", stringify!($name), "` as a type.")]
            pub(crate) enum $name {}
            impl Fmt for $name {
                const SPEC: Spec = Spec::of(&format::$name);
                const ID: Id = Id::$id;
                const RS_WIDTH: u32 = $rs;
            }
        )*};
    }
    formats! {
        F16 F16 13;
        BF16 Bf16 16;
        TF32 Tf32 0;
        E4M3 E4m3 8;
        E5M2 E5m2 8;
        E2M3 E2m3 8;
        E3M2 E3m2 8;
        E2M1 E2m1 8;
    }
}
