//! Raw input: little-endian elements of the format `--from` names, packed as `.safetensors`
//! packs them (FP4 two per byte, FP6 four per three bytes), with no header. A raw output is
//! written the same way, its block scales as raw bytes in a sidecar.

use crate::dtype::dense_packing;
use crate::error::{Error, Result};
use crate::files::single::Input;
use crate::Options;

/// The tensor of a raw input of `len` bytes: a vector of the `--from` format, which must
/// fill the bytes exactly.
pub(crate) fn read_input(file: &str, len: u64, opts: &Options) -> Result<Input> {
    let src = opts.from.ok_or_else(|| {
        Error::Invalid(format!(
            "{file} is raw data (not .npy or .safetensors): give its element format (for example f32)"
        ))
    })?;
    let pack = dense_packing(&src);
    let bits = len * 8;
    if !bits.is_multiple_of(pack.bits()) || !(bits / pack.bits()).is_multiple_of(pack.unit()) {
        return Err(Error::Corrupt(format!(
            "{file}: {len} bytes is not a whole number of {src} elements ({} bits each{})",
            pack.bits(),
            if pack.unit() > 1 {
                format!(
                    ", packed {} per {} bytes",
                    pack.unit(),
                    pack.bytes_for(pack.unit())
                )
            } else {
                String::new()
            }
        )));
    }
    Ok(Input {
        src,
        dtype: format!("raw {src}"),
        shape: vec![bits / pack.bits()],
        fortran: false,
        data_start: 0,
        pack,
    })
}
