//! The specialised kernel of one conversion: which compiled instance of
//! [`crate::portable::fast`] (through [`crate::isa`]'s dispatch) serves it.

use crate::portable::fast::Knobs;
use crate::portable::small::{self, RM, RN, RNA, RP, RS, RZ};
use crate::portable::spec::{formats, Fmt, Id, Spec};
use crate::portable::ue8m0;
use gpucvt_core::format::Format;

/// A specialised slice function over the natural word of its format.
pub(crate) type SliceFn<N> = fn(&[u32], &mut [N], &[u32], Knobs);

/// A specialised `RS` slice function whose random values come in the output word.
pub(crate) type NarrowFn<N> = fn(&[u32], &mut [N], &[N], Knobs);

/// A specialised `RS` slice function with narrow random values, by natural word.
#[derive(Clone, Copy)]
pub(crate) enum NarrowRs {
    U8(NarrowFn<u8>),
    U16(NarrowFn<u16>),
}

/// A specialised slice function, by natural word.
#[derive(Clone, Copy)]
pub(crate) enum FastFn {
    U8(SliceFn<u8>),
    U16(SliceFn<u16>),
    U32(SliceFn<u32>),
}

/// The instance for format `$f`, word `$d`, random word `$r`, constant random width
/// `$w` (0: run-time), the run-time parameters `$p`, direction `$m`, by policy.
macro_rules! policies {
    ($f:ty, $m:expr, $w:expr, $d:ty, $r:ty, $p:expr) => {
        match ($p.satfinite, $p.relu || $p.ftz_in) {
            (false, false) => {
                crate::isa::fast::<$f, { $m }, false, false, { $w }, $d, $r>
                    as fn(&[u32], &mut [$d], &[$r], Knobs)
            }
            (true, false) => crate::isa::fast::<$f, { $m }, true, false, { $w }, $d, $r>,
            (false, true) => crate::isa::fast::<$f, { $m }, false, true, { $w }, $d, $r>,
            (true, true) => crate::isa::fast::<$f, { $m }, true, true, { $w }, $d, $r>,
        }
    };
}

/// The instance for format `$f`, word `$d`, the run-time parameters `$p`, among the
/// directions listed (else `return None`); after `RS;`, also `RS`: with the format's PTX
/// width as a constant when the conversion has that width, else with the run-time width.
macro_rules! pick {
    ($f:ty, $d:ty, $p:expr, RS; $($m:ident)*) => {
        match $p.mode {
            RS if $p.rs_width == <$f>::RS_WIDTH => {
                policies!($f, RS, <$f>::RS_WIDTH, $d, u32, $p) as SliceFn<$d>
            }
            RS => policies!($f, RS, 0, $d, u32, $p),
            $(
                $m => policies!($f, $m, 0, $d, u32, $p),
            )*
            _ => return None,
        }
    };
    ($f:ty, $d:ty, $p:expr; $($m:ident)*) => {
        match $p.mode {
            $(
                $m => policies!($f, $m, 0, $d, u32, $p) as SliceFn<$d>,
            )*
            _ => return None,
        }
    };
}

/// The `RS` instance for format `$f` whose random values come in the output word
/// `$d` (`u8` for the 8-bit formats, `u16` for f16 and bf16), with the PTX width as a
/// constant when the conversion has it.
macro_rules! pick_rs_narrow {
    ($f:ty, $d:ty, $p:expr) => {
        if $p.rs_width == <$f>::RS_WIDTH {
            policies!($f, RS, <$f>::RS_WIDTH, $d, $d, $p) as NarrowFn<$d>
        } else {
            policies!($f, RS, 0, $d, $d, $p)
        }
    };
}

/// The specialised kernel of one conversion.
#[derive(Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) f: FastFn,
    /// Whether it consumes random values (`RS`).
    pub(crate) rs: bool,
    /// For `RS`: the same kernel taking its random values in the output word.
    pub(crate) narrow: Option<NarrowRs>,
    pub(crate) knobs: Knobs,
}

impl Plan {
    /// The specialised kernel for a conversion the run-time kernel `p` handles, if it has
    /// one: the formats of [`formats`] in the directions PTX has for them (and `rz` for the
    /// 8-, 6- and 4-bit formats), with `.satfinite`, `.relu` and `.ftz`.
    pub(crate) fn new(dst: &Format, p: &small::Params) -> Option<Plan> {
        if p.sat || p.pzo || !p.spec.signed || p.saturate_overflow != p.satfinite {
            return None;
        }
        if !crate::isa::has_fast() {
            return None;
        }
        let spec = Spec::of(dst);
        let id = Id::of(&spec)?;
        if p.mode == RS && p.rs_width > 23 - spec.man {
            return None;
        }
        let f = match id {
            Id::F16 => FastFn::U16(pick!(formats::F16, u16, p, RS; RN RZ RM RP)),
            Id::Bf16 => FastFn::U16(pick!(formats::BF16, u16, p, RS; RN RZ RM RP)),
            Id::Tf32 => FastFn::U32(pick!(formats::TF32, u32, p; RNA RN RZ)),
            Id::E4m3 => FastFn::U8(pick!(formats::E4M3, u8, p, RS; RN RZ)),
            Id::E5m2 => FastFn::U8(pick!(formats::E5M2, u8, p, RS; RN RZ)),
            Id::E2m3 => FastFn::U8(pick!(formats::E2M3, u8, p, RS; RN RZ)),
            Id::E3m2 => FastFn::U8(pick!(formats::E3M2, u8, p, RS; RN RZ)),
            Id::E2m1 => FastFn::U8(pick!(formats::E2M1, u8, p, RS; RN RZ)),
        };
        let narrow = if p.mode != RS {
            None
        } else {
            match id {
                Id::F16 => Some(NarrowRs::U16(pick_rs_narrow!(formats::F16, u16, p))),
                Id::Bf16 => Some(NarrowRs::U16(pick_rs_narrow!(formats::BF16, u16, p))),
                Id::E4m3 => Some(NarrowRs::U8(pick_rs_narrow!(formats::E4M3, u8, p))),
                Id::E5m2 => Some(NarrowRs::U8(pick_rs_narrow!(formats::E5M2, u8, p))),
                Id::E2m3 => Some(NarrowRs::U8(pick_rs_narrow!(formats::E2M3, u8, p))),
                Id::E3m2 => Some(NarrowRs::U8(pick_rs_narrow!(formats::E3M2, u8, p))),
                Id::E2m1 => Some(NarrowRs::U8(pick_rs_narrow!(formats::E2M1, u8, p))),
                Id::Tf32 => None,
            }
        };
        Some(Plan {
            f,
            rs: p.mode == RS,
            narrow,
            knobs: Knobs {
                w: p.rs_width,
                ftz_below: if p.ftz_in { 0x0080_0000 } else { 0 },
                relu: if p.relu { !0 } else { 0 },
            },
        })
    }
}

/// The `ue8m0` kernel as a specialised slice function.
pub(crate) fn ue8m0_plan(p: &ue8m0::Params) -> Plan {
    fn entry<const UP: bool, const P: u8>(src: &[u32], dst: &mut [u8], _: &[u32], _: Knobs) {
        crate::isa::ue8m0::<UP, P, u8>(src, dst)
    }
    macro_rules! pick {
        ($($p:expr),*) => {
            match (p.up, p.bits()) {
                $(
                    (false, $p) => entry::<false, $p> as SliceFn<u8>,
                    (true, $p) => entry::<true, $p>,
                )*
                _ => unreachable!("satfinite and plain overflow saturation exclude each other"),
            }
        };
    }
    // `ue8m0::SF | ue8m0::OVSAT` never occurs.
    let f = pick!(0, 1, 2, 4, 5, 6);
    Plan {
        f: FastFn::U8(f),
        rs: false,
        narrow: None,
        knobs: Knobs {
            w: 0,
            ftz_below: 0,
            relu: 0,
        },
    }
}
