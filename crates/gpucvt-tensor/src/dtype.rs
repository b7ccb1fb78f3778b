//! Element types of the files: gpucvt formats, their containers and packings, and the
//! `.npy` / `.safetensors` names for them.

use gpucvt_core::format::{self, Format};
use safetensors::Dtype;

/// How the elements of a tensor are laid out in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Packing {
    /// One element per little-endian container of this many bytes (1, 2, 4 or 8); a format
    /// narrower than its container sits in the low bits, the high bits are zero.
    Bytes(usize),
    /// Two 4-bit elements per byte, the first element in the low nibble (`F4`, `e2m1`).
    Nibbles,
    /// Four 6-bit elements per three bytes, as a little-endian bit stream: element `i`
    /// occupies bits `6i … 6i+5` of the 24-bit little-endian word formed by the three bytes
    /// (`F6_E2M3`, `F6_E3M2`).
    Sixes,
}

impl Packing {
    /// Bits per element.
    pub fn bits(self) -> u64 {
        match self {
            Packing::Bytes(b) => 8 * b as u64,
            Packing::Nibbles => 4,
            Packing::Sixes => 6,
        }
    }

    /// How many elements a whole number of bytes must hold a multiple of.
    pub fn unit(self) -> u64 {
        match self {
            Packing::Bytes(_) => 1,
            Packing::Nibbles => 2,
            Packing::Sixes => 4,
        }
    }

    /// Bytes of `n` elements (`n` a multiple of [`Packing::unit`]).
    pub fn bytes_for(self, n: u64) -> u64 {
        n * self.bits() / 8
    }
}

/// The container width in bytes of a format's encodings (1, 2, 4 or 8).
pub fn container_bytes(f: &Format) -> usize {
    match f.width() {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}

/// The format a safetensors dtype holds, or `None` for dtypes gpucvt does not convert
/// (`BOOL`, `C64`).
pub fn format_of_safetensors(d: Dtype) -> Option<Format> {
    Some(match d {
        Dtype::F64 => format::F64,
        Dtype::F32 => format::F32,
        Dtype::F16 => format::F16,
        Dtype::BF16 => format::BF16,
        Dtype::F8_E4M3 => format::E4M3,
        Dtype::F8_E5M2 => format::E5M2,
        Dtype::F8_E8M0 => format::UE8M0,
        Dtype::F8_E4M3FNUZ => format::E4M3FNUZ,
        Dtype::F8_E5M2FNUZ => format::E5M2FNUZ,
        Dtype::F6_E2M3 => format::E2M3,
        Dtype::F6_E3M2 => format::E3M2,
        Dtype::F4 => format::E2M1,
        Dtype::I8 => format::S8,
        Dtype::U8 => format::U8,
        Dtype::I16 => format::S16,
        Dtype::U16 => format::U16,
        Dtype::I32 => format::S32,
        Dtype::U32 => format::U32,
        Dtype::I64 => format::S64,
        Dtype::U64 => format::U64,
        _ => return None,
    })
}

/// The safetensors dtype for a format, or `None` when safetensors has no name for it
/// (`ue4m3`, `ue5m3`, `s2f6`, `vf`, `e4m3ieee`, `e3m4`, `e4m3b11fnuz`, integers narrower
/// than 8 bits). `tf32` is written as
/// `F32`: its encodings are `f32` encodings with the 13 low bits zero.
pub fn safetensors_of(f: &Format) -> Option<Dtype> {
    Some(match f.name {
        "f64" => Dtype::F64,
        "f32" | "tf32" => Dtype::F32,
        "f16" => Dtype::F16,
        "bf16" => Dtype::BF16,
        "e4m3" => Dtype::F8_E4M3,
        "e5m2" => Dtype::F8_E5M2,
        "ue8m0" => Dtype::F8_E8M0,
        "e4m3fnuz" => Dtype::F8_E4M3FNUZ,
        "e5m2fnuz" => Dtype::F8_E5M2FNUZ,
        "e2m3" => Dtype::F6_E2M3,
        "e3m2" => Dtype::F6_E3M2,
        "e2m1" => Dtype::F4,
        "s8" => Dtype::I8,
        "u8" => Dtype::U8,
        "s16" => Dtype::I16,
        "u16" => Dtype::U16,
        "s32" => Dtype::I32,
        "u32" => Dtype::U32,
        "s64" => Dtype::I64,
        "u64" => Dtype::U64,
        _ => return None,
    })
}

/// The packing of a format in `.safetensors` and raw files: `e2m1` two per byte, `e2m3` and
/// `e3m2` four per three bytes, everything else one element per container.
pub fn dense_packing(f: &Format) -> Packing {
    match f.name {
        "e2m1" => Packing::Nibbles,
        "e2m3" | "e3m2" => Packing::Sixes,
        _ => Packing::Bytes(container_bytes(f)),
    }
}

/// The `.npy` type string written for a format: the native numpy type where there is one
/// (`<f8 <f4 <f2 |i1 |u1 <i2 …`), otherwise the unsigned integer container of its encodings
/// (`bf16` → `<u2`, the FP8/FP6/FP4 formats and `ue8m0` → `|u1`, one element per byte).
pub fn npy_descr_of(f: &Format) -> &'static str {
    match f.name {
        "f64" => "<f8",
        "f32" | "tf32" => "<f4",
        "f16" => "<f2",
        "s8" => "|i1",
        "s16" => "<i2",
        "s32" => "<i4",
        "s64" => "<i8",
        "u16" => "<u2",
        "u32" => "<u4",
        "u64" => "<u8",
        _ => match container_bytes(f) {
            1 => "|u1",
            2 => "<u2",
            4 => "<u4",
            _ => "<u8",
        },
    }
}

/// The format of an `.npy` type string, for the numeric little-endian types.
pub fn format_of_npy(descr: &str) -> Option<Format> {
    let d = descr
        .strip_prefix('<')
        .or_else(|| descr.strip_prefix('|'))
        .or_else(|| {
            // '=' is native order; gpucvt's little-endian containers assume a little-endian host.
            if cfg!(target_endian = "little") {
                descr.strip_prefix('=')
            } else {
                None
            }
        })?;
    Some(match d {
        "f8" => format::F64,
        "f4" => format::F32,
        "f2" => format::F16,
        "i1" => format::S8,
        "u1" => format::U8,
        "i2" => format::S16,
        "u2" => format::U16,
        "i4" => format::S32,
        "u4" => format::U32,
        "i8" => format::S64,
        "u8" => format::U64,
        _ => return None,
    })
}

/// The item size in bytes of a numeric `.npy` type string such as `<f4` (`None` if it has no
/// plain numeric size).
pub fn npy_itemsize(descr: &str) -> Option<usize> {
    let digits: String = descr.chars().skip(2).collect();
    if descr.len() < 3 || !descr.chars().nth(1)?.is_ascii_alphabetic() {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safetensors_dtypes_round_trip() {
        for f in format::CATALOGUE {
            if let Some(d) = safetensors_of(f) {
                let back = format_of_safetensors(d).unwrap();
                // tf32 is written as F32.
                assert!(
                    back == *f || (f.name == "tf32" && back == format::F32),
                    "{f}"
                );
            }
        }
        assert_eq!(
            format_of_safetensors(Dtype::F8_E4M3FNUZ),
            Some(format::E4M3FNUZ)
        );
        assert_eq!(
            format_of_safetensors(Dtype::F8_E5M2FNUZ),
            Some(format::E5M2FNUZ)
        );
        // No safetensors name; .npy holds them in a byte container.
        for f in [format::E4M3IEEE, format::E3M4, format::E4M3B11FNUZ] {
            assert_eq!(safetensors_of(&f), None, "{f}");
            assert_eq!(npy_descr_of(&f), "|u1", "{f}");
        }
    }
}
