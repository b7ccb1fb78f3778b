//! The `.safetensors` header: an 8-byte little-endian length `n`, `n` bytes of JSON mapping
//! tensor names to `{dtype, shape, data_offsets}` (plus an optional `__metadata__` map of
//! strings), then the data section. The `safetensors` crate provides the dtype names and the
//! header types and validates what is written; the data is streamed here, because the crate
//! works on whole in-memory buffers.

use crate::error::{Error, Result};
use safetensors::tensor::{Metadata, TensorInfo};
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

/// The safetensors crate's own bound on the header size.
const MAX_HEADER: u64 = 100_000_000;

/// The header's JSON object as written, in its order; a name given twice is an error (a map
/// would keep one of the two silently, and the offsets would then not add up).
struct RawHeader {
    metadata: Option<HashMap<String, String>>,
    tensors: Vec<(String, TensorInfo)>,
}

impl<'de> Deserialize<'de> for RawHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = RawHeader;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object mapping tensor names to their dtype, shape and offsets")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<RawHeader, A::Error> {
                let mut metadata = None;
                let mut tensors = Vec::new();
                let mut seen = HashSet::new();
                while let Some(name) = m.next_key::<String>()? {
                    if !seen.insert(name.clone()) {
                        return Err(A::Error::custom(format!("the name {name:?} appears twice")));
                    }
                    if name == "__metadata__" {
                        metadata = Some(m.next_value()?);
                    } else {
                        let info = m.next_value::<TensorInfo>()?;
                        tensors.push((name, info));
                    }
                }
                Ok(RawHeader { metadata, tensors })
            }
        }
        d.deserialize_map(Entries)
    }
}

/// The header JSON `text` read as the safetensors crate reads it (its `TensorInfo` for each
/// entry, its `Metadata` checks of offsets and sizes), but entry by entry into a list: the
/// crate's own `Deserialize` buffers the whole object in a generic map first, which takes
/// about three times the memory (800 MB for a header of a million tensors).
pub(crate) fn crate_metadata(text: &str) -> std::result::Result<Metadata, String> {
    let raw: RawHeader = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut tensors = raw.tensors;
    tensors.sort_by_key(|t| t.1.data_offsets);
    Metadata::new(raw.metadata, tensors).map_err(|e| e.to_string())
}

/// A parsed and validated header.
pub(crate) struct StHeader {
    pub metadata: Option<HashMap<String, String>>,
    /// The tensors in data order.
    pub tensors: Vec<(String, TensorInfo)>,
}

pub(crate) fn elements(shape: &[usize]) -> Option<u64> {
    shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d as u64))
}

/// Reads the header of a file of `len` bytes (leaving `r` at the start of the data) and
/// checks it against the file: offsets contiguous from 0, each tensor's byte size equal to
/// its shape's, and the data section exactly as long as the offsets say.
pub(crate) fn read_header(r: &mut impl Read, len: u64, path: &Path) -> Result<StHeader> {
    let file = path.display();
    let corrupt = |m: String| Error::Corrupt(format!("{file}: not a valid .safetensors file: {m}"));
    if len < 8 {
        return Err(corrupt(format!(
            "it is {len} bytes long, shorter than the 8-byte header length (truncated)"
        )));
    }
    let mut b = [0u8; 8];
    r.read_exact(&mut b)
        .map_err(|e| Error::io("read", path, e))?;
    let n = u64::from_le_bytes(b);
    if n > MAX_HEADER {
        return Err(corrupt(format!(
            "the header length {n} is implausibly large (over {MAX_HEADER} bytes)"
        )));
    }
    if n > len - 8 {
        return Err(corrupt(format!(
            "the header length is {n} bytes but only {} bytes follow (truncated header)",
            len - 8
        )));
    }
    let mut text = vec![0u8; n as usize];
    r.read_exact(&mut text)
        .map_err(|e| Error::io("read", path, e))?;
    let text = std::str::from_utf8(&text).map_err(|_| corrupt("the header is not UTF-8".into()))?;
    let raw: RawHeader = serde_json::from_str(text)
        .map_err(|e| corrupt(format!("the JSON header is invalid: {e}")))?;
    let mut tensors = raw.tensors;
    tensors.sort_by(|a, b| a.1.data_offsets.cmp(&b.1.data_offsets).then(a.0.cmp(&b.0)));
    let mut end = 0u64;
    for (name, info) in &tensors {
        let (s, e) = (info.data_offsets.0 as u64, info.data_offsets.1 as u64);
        if s != end || e < s {
            return Err(corrupt(format!(
                "tensor {name:?}: data offsets [{s}, {e}] do not start where the previous tensor ends ({end})"
            )));
        }
        let count = elements(&info.shape)
            .ok_or_else(|| corrupt(format!("tensor {name:?}: the shape overflows")))?;
        let bits = count as u128 * info.dtype.bitsize() as u128;
        if !bits.is_multiple_of(8) {
            return Err(corrupt(format!(
                "tensor {name:?}: {count} elements of {:?} are not a whole number of bytes",
                info.dtype
            )));
        }
        if bits / 8 != (e - s) as u128 {
            return Err(Error::Corrupt(format!(
                "{file}: tensor {name:?}: shape {:?} of {:?} needs {} bytes but its data offsets span {} bytes",
                info.shape,
                info.dtype,
                bits / 8,
                e - s
            )));
        }
        end = e;
    }
    let have = len - 8 - n;
    if have != end {
        return Err(Error::Corrupt(format!(
            "{file}: the data section is {have} bytes but the header's tensors need {end}{}",
            if have < end { " (truncated file)" } else { "" }
        )));
    }
    Ok(StHeader {
        metadata: raw.metadata,
        tensors,
    })
}

/// The bytes of a header (length and JSON, padded with spaces so that the data starts at a
/// multiple of 8 bytes), validated by the safetensors crate.
pub(crate) fn header_bytes(
    metadata: Option<HashMap<String, String>>,
    tensors: Vec<(String, TensorInfo)>,
) -> Result<Vec<u8>> {
    let write_error = |e: serde_json::Error| {
        Error::Invalid(format!("internal error: cannot write the header: {e}"))
    };
    // The metadata's keys sorted: a HashMap's order changes from run to run, and the same
    // conversion must give the same bytes.
    let sorted: Option<std::collections::BTreeMap<String, String>> =
        metadata.as_ref().map(|m| m.clone().into_iter().collect());
    let meta = Metadata::new(metadata, tensors)
        .map_err(|e| Error::Invalid(format!("internal error: invalid output header: {e}")))?;
    // The JSON goes after room for its length (one buffer: a header can be 100 MB).
    let mut out = vec![0u8; 8];
    match sorted {
        None => serde_json::to_writer(&mut out, &meta).map_err(write_error)?,
        Some(m) => {
            // The crate writes "__metadata__" first; the tensors after it are kept as
            // written, the metadata object replaced by the sorted one.
            let text = serde_json::to_string(&meta).map_err(write_error)?;
            let map = serde_json::to_string(&m).map_err(write_error)?;
            let head = format!("{{\"__metadata__\":{map}");
            let rest = text
                .strip_prefix("{\"__metadata__\":")
                .and_then(|t| t.get(map.len()..))
                .ok_or_else(|| {
                    Error::Invalid("internal error: unexpected header layout".to_string())
                })?;
            out.extend_from_slice(head.as_bytes());
            out.extend_from_slice(rest.as_bytes());
        }
    }
    while !out.len().is_multiple_of(8) {
        out.push(b' ');
    }
    let n = (out.len() - 8) as u64;
    out[..8].copy_from_slice(&n.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use safetensors::Dtype;

    /// The metadata comes out in the same (sorted) order whatever the map's order.
    #[test]
    fn metadata_keys_are_sorted() {
        let info = TensorInfo {
            dtype: Dtype::F32,
            shape: vec![2],
            data_offsets: (0, 8),
        };
        let mut m = HashMap::new();
        for k in [
            "zeta",
            "alpha",
            "mid",
            "beta",
            "gpucvt.scales.c",
            "gpucvt.scales.a",
        ] {
            m.insert(k.to_string(), format!("v{k}"));
        }
        let b = header_bytes(Some(m), vec![("t".into(), info)]).unwrap();
        let text = std::str::from_utf8(&b[8..]).unwrap().trim_end();
        assert_eq!(
            text,
            concat!(
                r#"{"__metadata__":{"alpha":"valpha","beta":"vbeta","gpucvt.scales.a":"vgpucvt.scales.a","#,
                r#""gpucvt.scales.c":"vgpucvt.scales.c","mid":"vmid","zeta":"vzeta"},"#,
                r#""t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#
            )
        );
        let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
        assert_eq!(n + 8, b.len());
        assert_eq!(b.len() % 8, 0);
    }
}
