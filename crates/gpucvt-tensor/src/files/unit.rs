//! A `.npy` or raw output and its sidecar files are one unit: the data `q.npy`, its block
//! scales `q_scale.npy` and second-level scale `q_scale_2.npy`, and the metadata
//! `q.npy.gpucvt.json` that records how the data was quantized and a checksum of each part.
//! The parts are written to temporaries and renamed into place together under an exclusive
//! lock on the unit (a lock file beside it), and the parts a run does not write are removed
//! then, so that the unit on disk is always one run's. A reader (dequantization) takes the
//! lock shared while it opens the parts, and checks every part against the metadata.

use crate::error::{Error, Result};
use crate::files::output::NAME_MAX;
use crate::files::output::{
    committing, refuse_read_only, refuse_same, refuse_special, truncated, Temp,
};
use crate::scaling::BlockScaling;
use crate::{metadata_path, scale_2_path, scale_path};
use gpucvt_core::format::Format;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The paths of a unit.
pub(crate) struct Unit {
    pub(crate) data: PathBuf,
    pub(crate) scale: PathBuf,
    pub(crate) scale_2: PathBuf,
    pub(crate) meta: PathBuf,
}

impl Unit {
    pub(crate) fn of(data: &Path) -> Unit {
        Unit {
            data: data.to_path_buf(),
            scale: scale_path(data),
            scale_2: scale_2_path(data),
            meta: metadata_path(data),
        }
    }

    /// The sidecar files: the block scales, the second-level scale, the metadata.
    pub(crate) fn sidecars(&self) -> [&Path; 3] {
        [&self.scale, &self.scale_2, &self.meta]
    }

    /// Every part, the data first.
    pub(crate) fn parts(&self) -> [&Path; 4] {
        [&self.data, &self.scale, &self.scale_2, &self.meta]
    }
}

/// The checks before a unit is written from `inputs` (the files read): every existing part
/// will be replaced or removed, so it must be a regular file, none of the inputs, and not
/// read-only unless `force`.
pub(crate) fn check_unit(inputs: &[&Path], unit: &Unit, force: bool) -> Result<()> {
    for side in unit.sidecars() {
        if let Ok(m) = std::fs::symlink_metadata(side) {
            refuse_special(side, &m)?;
        }
    }
    for input in inputs {
        for side in unit.sidecars() {
            refuse_same(input, side).map_err(|_| {
                Error::Invalid(format!(
                    "the output {}: its sidecar file {} is the input file {}; choose another output path (the output's sidecars are replaced or removed, and the input is never overwritten)",
                    unit.data.display(),
                    side.display(),
                    input.display()
                ))
            })?;
        }
    }
    for part in unit.parts() {
        refuse_read_only(part, force)?;
    }
    Ok(())
}

/// Refuses sidecar files (`written`) whose names would be longer than a file name may be,
/// before anything is written.
pub(crate) fn check_names(unit: &Unit, written: &[&Path]) -> Result<()> {
    for side in written {
        let len = side.file_name().map_or(0, |n| n.len());
        if len > NAME_MAX {
            return Err(Error::Invalid(format!(
                "the output {}: its sidecar file {} would have a name of {len} bytes, more than the {NAME_MAX} a file name may have; choose a shorter output name",
                unit.data.display(),
                side.display()
            )));
        }
    }
    Ok(())
}

/// The metadata of a quantized unit, as `q.npy.gpucvt.json` holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Metadata {
    /// What this file is (always [`KIND`]).
    pub(crate) gpucvt: String,
    /// The quantized elements' format (`e2m1`, `e4m3`, …).
    pub(crate) elements: String,
    /// The data's shape (raw data: one axis).
    pub(crate) shape: Vec<u64>,
    /// The block scaling ([`BlockScaling::describe`]).
    pub(crate) scaling: String,
    /// The data file (after its `.npy` header).
    pub(crate) data: Part,
    /// The block scales' file (after its `.npy` header).
    pub(crate) scale: Part,
    /// The second-level scale's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scale_2: Option<Part>,
}

/// The value of [`Metadata::gpucvt`]: the kind of file and its version.
pub(crate) const KIND: &str = "quantized unit 1";

/// One part of a unit: its file's name when written (for the reader; the parts may be
/// renamed together), and the length and XXH3-64 of its bytes after the `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Part {
    pub(crate) file: String,
    pub(crate) bytes: u64,
    pub(crate) xxh3: String,
}

impl Part {
    pub(crate) fn new(path: &Path, bytes: u64, hash: u64) -> Part {
        Part {
            file: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            bytes,
            xxh3: format!("{hash:016x}"),
        }
    }

    /// Whether `bytes` are the part recorded.
    pub(crate) fn matches(&self, bytes: &[u8]) -> bool {
        self.bytes == bytes.len() as u64
            && self.xxh3 == format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
    }
}

/// The metadata read back, checked for sense.
pub(crate) struct Recorded {
    pub(crate) meta: Metadata,
    pub(crate) elements: Format,
    pub(crate) scaling: BlockScaling,
}

/// The largest metadata file read (gpucvt's are a few hundred bytes).
const MAX_METADATA: u64 = 1 << 20;

/// The unit's metadata, if it has a metadata file.
pub(crate) fn read_metadata(path: &Path) -> Result<Option<Recorded>> {
    let bad = |why: String| {
        Error::Corrupt(format!(
            "{}: not the metadata gpucvt writes beside a quantized file: {why}",
            path.display()
        ))
    };
    // (Its type before it is opened: opening a FIFO would wait for a writer.)
    let m = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    if !m.is_file() {
        return Err(bad("it is not a regular file".into()));
    }
    if m.len() > MAX_METADATA {
        return Err(bad(format!("it is {} bytes long", m.len())));
    }
    let mut f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut f, MAX_METADATA), &mut bytes)
        .map_err(|e| Error::io("read", path, e))?;
    let meta: Metadata = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    if meta.gpucvt != KIND {
        return Err(bad(format!(
            "it says {:?}, not {KIND:?} (written by another version?)",
            meta.gpucvt
        )));
    }
    let elements = *Format::from_name(&meta.elements).map_err(|e| bad(e.to_string()))?;
    let scaling = BlockScaling::from_description(&meta.scaling).map_err(|e| bad(e.to_string()))?;
    if scaling.second_level != meta.scale_2.is_some() {
        return Err(bad(
            "the scaling and the second-level scale's entry disagree".into(),
        ));
    }
    Ok(Some(Recorded {
        meta,
        elements,
        scaling,
    }))
}

/// The lock file of the unit whose data is `data`: `.NAME.gpucvt-lock` beside it (a long
/// name cut short, with a hash of the whole so that every process finds the same file).
fn lock_path(data: &Path) -> PathBuf {
    let name = data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let suffix = ".gpucvt-lock";
    let file = if 1 + name.len() + 1 + suffix.len() <= NAME_MAX {
        format!(".{name}{suffix}")
    } else {
        let hash = xxhash_rust::xxh3::xxh3_64(name.as_bytes());
        format!(".{}.{hash:016x}{suffix}", truncated(&name, 200))
    };
    data.with_file_name(file)
}

/// A lock on a unit, released (and its lock file removed, if no one else holds it) when
/// dropped or [`UnitLock::release`]d.
pub(crate) struct UnitLock {
    file: Option<File>,
    path: PathBuf,
    exclusive: bool,
}

/// Whether the open file `f` is still the file at `path` (its last holder removes a lock
/// file; a process that opened it before then must open the new one).
fn still_there(f: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = f;
        path.exists()
    }
}

impl UnitLock {
    fn open(data: &Path, exclusive: bool) -> std::io::Result<UnitLock> {
        let path = lock_path(data);
        loop {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            if exclusive {
                f.lock()?;
            } else {
                f.lock_shared()?;
            }
            if still_there(&f, &path) {
                return Ok(UnitLock {
                    file: Some(f),
                    path,
                    exclusive,
                });
            }
        }
    }

    /// The unit locked for writing (waiting for other writers and readers to finish).
    pub(crate) fn exclusive(data: &Path) -> Result<UnitLock> {
        UnitLock::open(data, true).map_err(|e| Error::Io {
            context: format!(
                "cannot lock the output {} (its lock file {})",
                data.display(),
                lock_path(data).display()
            ),
            source: e,
        })
    }

    /// The unit locked for reading; without a lock where none can be made (a read-only
    /// folder: then no gpucvt writes there either, and the checksums still catch a unit
    /// that was changed meanwhile).
    pub(crate) fn shared(data: &Path) -> UnitLock {
        UnitLock::open(data, false).unwrap_or(UnitLock {
            file: None,
            path: PathBuf::new(),
            exclusive: false,
        })
    }

    /// Releases the lock, removing the lock file if no one else holds or waits on it.
    pub(crate) fn release(mut self) {
        self.unlock();
    }

    fn unlock(&mut self) {
        if let Some(f) = self.file.take() {
            // A reader removes the file only if it can take it for itself (no one else
            // holds it).
            let alone = self.exclusive || f.try_lock().is_ok();
            if alone && still_there(&f, &self.path) {
                let _ = std::fs::remove_file(&self.path);
            }
            // Closing the file releases the lock.
        }
    }
}

impl Drop for UnitLock {
    fn drop(&mut self) {
        self.unlock();
    }
}

/// The finished temporaries of a unit, each checked: the data and whichever sidecars the
/// run writes.
pub(crate) struct Written {
    pub(crate) data: Temp,
    pub(crate) scale: Option<Temp>,
    pub(crate) scale_2: Option<Temp>,
    pub(crate) meta: Option<Temp>,
}

/// Renames the written parts of `unit` into place and removes the sidecars not written,
/// under the unit's exclusive lock; `cancelled` is asked once more before anything is
/// renamed.
///
/// The order makes a unit that is stopped half-way (power loss; a signal waits for the
/// renames) fail loudly rather than read wrongly: first the new metadata (or the removal
/// of the old), whose checksums no old part matches; then the removals; then the sidecars;
/// the data last. If a rename fails, the parts already renamed are removed again.
pub(crate) fn commit(
    unit: &Unit,
    w: Written,
    force: bool,
    cancelled: &dyn Fn() -> Result<()>,
) -> Result<()> {
    let lock = UnitLock::exclusive(&unit.data)?;
    cancelled()?;
    for part in unit.parts() {
        refuse_read_only(part, force)?;
    }
    let like = std::fs::metadata(&unit.data).ok().filter(|m| m.is_file());
    let committing = committing();
    let mut placed: Vec<&Path> = Vec::new();
    // (A name too long to be a file's is no file.)
    let remove = |path: &Path| match std::fs::remove_file(path) {
        Err(e)
            if !matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::InvalidFilename
            ) =>
        {
            Err(Error::io("remove the stale sidecar", path, e))
        }
        _ => Ok(()),
    };
    let result = (|| -> Result<()> {
        match w.meta {
            Some(t) => {
                t.finish_like(like.as_ref())?;
                placed.push(&unit.meta);
            }
            None => remove(&unit.meta)?,
        }
        // The removals before the renames.
        if w.scale.is_none() {
            remove(&unit.scale)?;
        }
        if w.scale_2.is_none() {
            remove(&unit.scale_2)?;
        }
        for (t, path) in [(w.scale, &unit.scale), (w.scale_2, &unit.scale_2)] {
            if let Some(t) = t {
                t.finish_like(like.as_ref())?;
                placed.push(path);
            }
        }
        w.data.finish_like(None)
    })();
    if result.is_err() {
        for p in &placed {
            let _ = std::fs::remove_file(p);
        }
    }
    lock.release();
    drop(committing);
    result
}
