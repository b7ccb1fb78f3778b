//! The specialised kernel of one conversion: which compiled instance of
//! [`crate::portable::fast`] (through [`crate::isa`]'s dispatch) serves it.

use crate::portable::fast::{
    Knobs, Spec, I_BF16, I_E2M1, I_E2M3, I_E3M2, I_E4M3, I_E5M2, I_F16, I_TF32, PTX_RS_WIDTH, SPECS,
};
use crate::portable::small::{self, RM, RN, RNA, RP, RS, RZ};
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

/// The instance for format index `$f`, word `$d`, random word `$r`, constant random width
/// `$w` (0: run-time), the run-time parameters `$p`, direction `$m`, by policy.
macro_rules! policies {
    ($f:expr, $m:expr, $w:expr, $d:ty, $r:ty, $p:expr) => {
        match ($p.satfinite, $p.relu || $p.ftz_in) {
            (false, false) => {
                crate::isa::fast::<{ $f }, { $m }, false, false, { $w }, $d, $r>
                    as fn(&[u32], &mut [$d], &[$r], Knobs)
            }
            (true, false) => crate::isa::fast::<{ $f }, { $m }, true, false, { $w }, $d, $r>,
            (false, true) => crate::isa::fast::<{ $f }, { $m }, false, true, { $w }, $d, $r>,
            (true, true) => crate::isa::fast::<{ $f }, { $m }, true, true, { $w }, $d, $r>,
        }
    };
}

/// The instance for format index `$f`, word `$d`, the run-time parameters `$p`, among the
/// directions listed (else `return None`); after `RS;`, also `RS`: with the format's PTX
/// width as a constant when the conversion has that width, else with the run-time width.
macro_rules! pick {
    ($f:expr, $d:ty, $p:expr, RS; $($m:ident)*) => {
        match $p.mode {
            RS if $p.rs_width == PTX_RS_WIDTH[$f] => {
                policies!($f, RS, PTX_RS_WIDTH[$f], $d, u32, $p) as SliceFn<$d>
            }
            RS => policies!($f, RS, 0, $d, u32, $p),
            $(
                $m => policies!($f, $m, 0, $d, u32, $p),
            )*
            _ => return None,
        }
    };
    ($f:expr, $d:ty, $p:expr; $($m:ident)*) => {
        match $p.mode {
            $(
                $m => policies!($f, $m, 0, $d, u32, $p) as SliceFn<$d>,
            )*
            _ => return None,
        }
    };
}

/// The `RS` instance for format index `$f` whose random values come in the output word
/// `$d` (`u8` for the 8-bit formats, `u16` for f16 and bf16), with the PTX width as a
/// constant when the conversion has it.
macro_rules! pick_rs_narrow {
    ($f:expr, $d:ty, $p:expr) => {
        if $p.rs_width == PTX_RS_WIDTH[$f] {
            policies!($f, RS, PTX_RS_WIDTH[$f], $d, $d, $p) as NarrowFn<$d>
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
    /// one: the formats of [`SPECS`] in the directions PTX has for them (and `rz` for the
    /// 8-, 6- and 4-bit formats), with `.satfinite`, `.relu` and `.ftz`.
    pub(crate) fn new(dst: &Format, p: &small::Params) -> Option<Plan> {
        if p.sat || p.pzo || !p.signed || p.saturate_overflow != p.satfinite {
            return None;
        }
        if !crate::isa::has_fast() {
            return None;
        }
        let spec = Spec::of(dst);
        let i = SPECS.iter().position(|s| *s == spec)?;
        if p.mode == RS && p.rs_width > 23 - spec.man {
            return None;
        }
        let f = match i {
            I_F16 => FastFn::U16(pick!(I_F16, u16, p, RS; RN RZ RM RP)),
            I_BF16 => FastFn::U16(pick!(I_BF16, u16, p, RS; RN RZ RM RP)),
            I_TF32 => FastFn::U32(pick!(I_TF32, u32, p; RNA RN RZ)),
            I_E4M3 => FastFn::U8(pick!(I_E4M3, u8, p, RS; RN RZ)),
            I_E5M2 => FastFn::U8(pick!(I_E5M2, u8, p, RS; RN RZ)),
            I_E2M3 => FastFn::U8(pick!(I_E2M3, u8, p, RS; RN RZ)),
            I_E3M2 => FastFn::U8(pick!(I_E3M2, u8, p, RS; RN RZ)),
            I_E2M1 => FastFn::U8(pick!(I_E2M1, u8, p, RS; RN RZ)),
            _ => return None,
        };
        let narrow = if p.mode != RS {
            None
        } else {
            match i {
                I_F16 => Some(NarrowRs::U16(pick_rs_narrow!(I_F16, u16, p))),
                I_BF16 => Some(NarrowRs::U16(pick_rs_narrow!(I_BF16, u16, p))),
                I_E4M3 => Some(NarrowRs::U8(pick_rs_narrow!(I_E4M3, u8, p))),
                I_E5M2 => Some(NarrowRs::U8(pick_rs_narrow!(I_E5M2, u8, p))),
                I_E2M3 => Some(NarrowRs::U8(pick_rs_narrow!(I_E2M3, u8, p))),
                I_E3M2 => Some(NarrowRs::U8(pick_rs_narrow!(I_E3M2, u8, p))),
                I_E2M1 => Some(NarrowRs::U8(pick_rs_narrow!(I_E2M1, u8, p))),
                _ => None,
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
