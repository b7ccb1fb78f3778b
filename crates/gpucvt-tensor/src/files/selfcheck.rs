//! The writer checks itself: every byte region of an output is hashed (XXH3-64) as it is
//! handed to the file, and before the temporary file is renamed into place it is read back,
//! its header parsed (for `.safetensors` by the `safetensors` crate, not by gpucvt's own
//! reader) and each region's bytes hashed again. A difference means the bytes on disk are not
//! the ones converted (a wrong offset, a short write, a second handle writing over the
//! first): that is an internal error, and the output is not kept.

use crate::error::{Error, Result};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use xxhash_rust::xxh3::Xxh3;

/// A writer that hashes what passes through it; [`Hashing::take`] ends one region.
pub(crate) struct Hashing<W> {
    inner: W,
    hasher: Xxh3,
    len: u64,
}

impl<W> Hashing<W> {
    pub(crate) fn new(inner: W) -> Hashing<W> {
        Hashing {
            inner,
            hasher: Xxh3::new(),
            len: 0,
        }
    }

    /// The hash and length of the bytes written since the last call, and a fresh start.
    pub(crate) fn take(&mut self) -> (u64, u64) {
        let out = (self.hasher.digest(), self.len);
        self.hasher.reset();
        self.len = 0;
        out
    }

    pub(crate) fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    pub(crate) fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One region of an output file as the writer meant it: where it is (bytes from the start
/// of the data section for `.safetensors`, of the file otherwise), how long, and the hash of
/// its bytes.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    pub name: String,
    pub start: u64,
    pub len: u64,
    pub hash: u64,
}

fn internal(path: &Path, what: String) -> Error {
    Error::Internal(format!(
        "{}: the written file does not read back as written: {what}; no output was kept (please report this)",
        path.display()
    ))
}

/// Hashes `len` bytes of `f` from its position on.
fn hash_bytes(f: &mut impl Read, len: u64, buf: &mut [u8]) -> std::io::Result<u64> {
    let mut h = Xxh3::new();
    let mut left = len;
    while left > 0 {
        let m = left.min(buf.len() as u64) as usize;
        f.read_exact(&mut buf[..m])?;
        h.update(&buf[..m]);
        left -= m as u64;
    }
    Ok(h.digest())
}

fn read_error(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        internal(path, "it is shorter than written".into())
    } else {
        Error::io("read back", path, e)
    }
}

/// Checks a finished `.safetensors` file: the header parses and validates with the
/// `safetensors` crate, names exactly the expected tensors at the expected offsets, the data
/// section is exactly as long as the header says, and every tensor's bytes hash as written.
/// `shown` is the path named in messages.
pub(crate) fn verify_safetensors(path: &Path, shown: &Path, regions: &[Region]) -> Result<()> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io("read back", shown, e))?;
    let len = f
        .metadata()
        .map_err(|e| Error::io("read back", shown, e))?
        .len();
    let mut n8 = [0u8; 8];
    f.read_exact(&mut n8).map_err(|e| read_error(shown, e))?;
    let n = u64::from_le_bytes(n8);
    if n > len.saturating_sub(8) {
        return Err(internal(
            shown,
            format!("its header length {n} exceeds the file"),
        ));
    }
    let mut text = vec![0u8; n as usize];
    f.read_exact(&mut text).map_err(|e| read_error(shown, e))?;
    let meta = std::str::from_utf8(&text)
        .map_err(|e| e.to_string())
        .and_then(crate::files::safetensors::header::crate_metadata)
        .map_err(|e| {
            internal(
                shown,
                format!("the safetensors crate rejects its header: {e}"),
            )
        })?;
    drop(text);
    let data_start = 8 + n;
    if data_start + meta.data_len() as u64 != len {
        return Err(internal(
            shown,
            format!(
                "its header describes {} data bytes but the file holds {}",
                meta.data_len(),
                len - data_start
            ),
        ));
    }
    let names = meta.offset_keys();
    if names.len() != regions.len() {
        return Err(internal(
            shown,
            format!(
                "its header has {} tensors, {} were written",
                names.len(),
                regions.len()
            ),
        ));
    }
    let mut buf = vec![0u8; 1 << 20];
    for r in regions {
        let info = meta
            .info(&r.name)
            .ok_or_else(|| internal(shown, format!("tensor {:?} is missing", r.name)))?;
        let (s, e) = info.data_offsets;
        if (s as u64, e as u64) != (r.start, r.start + r.len) {
            return Err(internal(
                shown,
                format!(
                    "tensor {:?} is at bytes [{s}, {e}) of the data, written at [{}, {})",
                    r.name,
                    r.start,
                    r.start + r.len
                ),
            ));
        }
        f.seek(SeekFrom::Start(data_start + r.start))
            .map_err(|e| read_error(shown, e))?;
        if hash_bytes(&mut f, r.len, &mut buf).map_err(|e| read_error(shown, e))? != r.hash {
            return Err(internal(
                shown,
                format!(
                    "the bytes of tensor {:?} differ from those converted",
                    r.name
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that the file at `path` is exactly `total` bytes long and that each region's bytes
/// hash as written (`.npy`, raw and scale side files).
pub(crate) fn verify_regions(
    path: &Path,
    shown: &Path,
    total: u64,
    regions: &[Region],
) -> Result<()> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io("read back", shown, e))?;
    let len = f
        .metadata()
        .map_err(|e| Error::io("read back", shown, e))?
        .len();
    if len != total {
        return Err(internal(
            shown,
            format!("it is {len} bytes long, {total} were written"),
        ));
    }
    let mut buf = vec![0u8; 1 << 20];
    for r in regions {
        f.seek(SeekFrom::Start(r.start))
            .map_err(|e| read_error(shown, e))?;
        if hash_bytes(&mut f, r.len, &mut buf).map_err(|e| read_error(shown, e))? != r.hash {
            return Err(internal(
                shown,
                format!("the bytes of {} differ from those converted", r.name),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use safetensors::tensor::TensorInfo;
    use safetensors::Dtype;

    fn hash(b: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64(b)
    }

    /// A two-tensor file and the regions its writer would record.
    fn file(dir: &Path) -> (std::path::PathBuf, Vec<u8>, Vec<Region>) {
        let a = [1u8, 2, 3, 4];
        let b = [5u8, 6];
        let header = crate::files::safetensors::header::header_bytes(
            None,
            vec![
                (
                    "a".into(),
                    TensorInfo {
                        dtype: Dtype::U8,
                        shape: vec![4],
                        data_offsets: (0, 4),
                    },
                ),
                (
                    "b".into(),
                    TensorInfo {
                        dtype: Dtype::U8,
                        shape: vec![2],
                        data_offsets: (4, 6),
                    },
                ),
            ],
        )
        .unwrap();
        let mut bytes = header.clone();
        bytes.extend_from_slice(&a);
        bytes.extend_from_slice(&b);
        let path = dir.join("t.safetensors");
        std::fs::write(&path, &bytes).unwrap();
        let regions = vec![
            Region {
                name: "a".into(),
                start: 0,
                len: 4,
                hash: hash(&a),
            },
            Region {
                name: "b".into(),
                start: 4,
                len: 2,
                hash: hash(&b),
            },
        ];
        (path, bytes, regions)
    }

    #[test]
    fn a_file_as_written_passes_and_every_corruption_fails() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes, regions) = file(dir.path());
        verify_safetensors(&path, &path, &regions).unwrap();
        let fails = |bytes: &[u8], regions: &[Region], needle: &str| {
            std::fs::write(&path, bytes).unwrap();
            let e = verify_safetensors(&path, &path, regions).unwrap_err();
            assert!(matches!(e, Error::Internal(_)), "{e}");
            assert!(e.to_string().contains(needle), "{e} should say {needle:?}");
        };
        // A flipped data byte.
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        fails(&flipped, &regions, "the bytes of tensor \"b\" differ");
        // A missing byte, and a byte too many.
        fails(
            &bytes[..bytes.len() - 1],
            &regions,
            "data bytes but the file holds",
        );
        let mut longer = bytes.clone();
        longer.push(0);
        fails(&longer, &regions, "data bytes but the file holds");
        // Data written at another offset than the header says (the shape of the bug this
        // check exists for: a tensor's bytes landing over its neighbour's).
        let mut moved = regions.clone();
        moved[1].start = 3;
        fails(
            &bytes,
            &moved,
            "tensor \"b\" is at bytes [4, 6) of the data, written at [3, 5)",
        );
        // A header the safetensors crate rejects.
        let mut bad = bytes.clone();
        bad[9] = b'[';
        fails(&bad, &regions, "the safetensors crate rejects its header");
        // A tensor the writer did not write.
        fails(
            &bytes,
            &regions[..1],
            "its header has 2 tensors, 1 were written",
        );
    }

    #[test]
    fn regions_of_plain_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        std::fs::write(&path, [9u8, 8, 7]).unwrap();
        let r = [Region {
            name: "the data".into(),
            start: 1,
            len: 2,
            hash: hash(&[8, 7]),
        }];
        verify_regions(&path, &path, 3, &r).unwrap();
        let e = verify_regions(&path, &path, 4, &r).unwrap_err();
        assert!(
            e.to_string().contains("it is 3 bytes long, 4 were written"),
            "{e}"
        );
        std::fs::write(&path, [9u8, 8, 6]).unwrap();
        let e = verify_regions(&path, &path, 3, &r).unwrap_err();
        assert!(
            e.to_string().contains("the bytes of the data differ"),
            "{e}"
        );
    }
}
