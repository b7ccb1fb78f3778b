//! Where outputs are written: the path an output may have, the temporary file it is
//! written to and renamed from, and the registry of temporaries a signal handler removes.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The path an output is written to: an existing output must be a regular file (a symbolic
/// link is followed, so the file it points to is replaced and the link kept). A folder,
/// device, FIFO or socket is refused, because the output is written beside it and renamed
/// over it, which would replace it.
pub fn resolve_output(output: &Path) -> Result<PathBuf> {
    let Ok(m) = std::fs::symlink_metadata(output) else {
        return Ok(output.to_path_buf());
    };
    if m.file_type().is_symlink() {
        let target = std::fs::canonicalize(output).map_err(|e| {
            Error::Invalid(format!(
                "the output {} is a symbolic link that does not lead to a file ({e})",
                output.display()
            ))
        })?;
        let m = std::fs::metadata(&target).map_err(|e| Error::io("inspect", &target, e))?;
        refuse_special(output, &m)?;
        return Ok(target);
    }
    refuse_special(output, &m)?;
    Ok(output.to_path_buf())
}

pub(crate) fn file_type_name(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

pub(crate) fn refuse_special(output: &Path, m: &std::fs::Metadata) -> Result<()> {
    if m.is_file() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "the output {} is {}: gpucvt writes a complete file beside the output and renames it into place, which would replace it; give the path of a regular file",
        output.display(),
        file_type_name(m)
    )))
}

pub(crate) fn refuse_same(input: &Path, output: &Path) -> Result<()> {
    let same = || -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(output)) {
                return a.dev() == b.dev() && a.ino() == b.ino();
            }
        }
        let Ok(a) = std::fs::canonicalize(input) else {
            return false;
        };
        let parent = match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        match (std::fs::canonicalize(parent), output.file_name()) {
            (Ok(p), Some(n)) => p.join(n) == a,
            _ => false,
        }
    };
    if input == output || same() {
        return Err(Error::Invalid(format!(
            "the output {} is the input file; choose another output path (the input is never overwritten)",
            output.display()
        )));
    }
    Ok(())
}

/// The longest file name the common file systems take (ext4, XFS, Btrfs, ZFS, APFS, NTFS).
pub(crate) const NAME_MAX: usize = 255;

/// What a temporary's name adds to the output's: a dot before it, then a dot, six random
/// characters and this suffix after it.
const TEMP_SUFFIX: &str = ".gpucvt-tmp";
const TEMP_EXTRA: usize = 2 + 6 + TEMP_SUFFIX.len();

/// The longest start of `name` that is at most `room` bytes, cut at a character boundary.
pub(crate) fn truncated(name: &str, room: usize) -> &str {
    if name.len() <= room {
        return name;
    }
    let mut end = room;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// A temporary file beside `path`, renamed to it by [`Temp::finish`] and removed if dropped
/// (or by [`remove_temporaries`] on a signal).
pub(crate) struct Temp {
    pub(crate) file: tempfile::NamedTempFile,
    pub(crate) path: PathBuf,
    pub(crate) _registered: Registered,
}

/// Unregisters a temporary ([`register_temporary`]) when dropped.
pub(crate) struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        unregister_temporary(&self.0);
    }
}

/// The temporary files being written, for [`remove_temporaries`].
pub(crate) static LIVE_TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> =
    std::sync::Mutex::new(Vec::new());

pub(crate) fn live_temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it as it was: still a valid list.
    LIVE_TEMPORARIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Held while the parts of an output are renamed into place, so that a signal handler's
/// [`remove_temporaries`] waits for the renames to end instead of stopping the process
/// between them (which would leave an output whose parts come from two runs).
static COMMITTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn committing() -> std::sync::MutexGuard<'static, ()> {
    COMMITTING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers a temporary file that [`remove_temporaries`] removes if the process is stopped
/// while it exists. Every output temporary of this crate is registered; a caller that writes
/// temporaries of its own (the CLI's `sweep --out`) registers them too.
pub fn register_temporary(path: &Path) {
    live_temporaries().push(path.to_path_buf());
}

/// Forgets a temporary registered with [`register_temporary`] (it was renamed or removed).
pub fn unregister_temporary(path: &Path) {
    let mut live = live_temporaries();
    if let Some(i) = live.iter().rposition(|p| p == path) {
        live.swap_remove(i);
    }
}

/// Removes every registered temporary file: for a signal handler (SIGINT, SIGTERM) to call
/// before the process exits, so that an interrupted conversion leaves nothing behind. An
/// output whose parts are being renamed into place is finished first (that takes
/// milliseconds), so that it is never left half old, half new.
pub fn remove_temporaries() {
    let _committing = committing();
    for p in live_temporaries().drain(..) {
        // (A checkpoint folder's temporary is a folder.)
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(p);
        } else {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Whether an existing file is read-only: no write permission for anyone (the mode's write
/// bits, not what the process may do: root may write anything).
fn read_only(m: &std::fs::Metadata) -> bool {
    m.permissions().readonly()
}

/// Refuses to replace or remove `path` if it is a read-only file, unless `force`.
pub(crate) fn refuse_read_only(path: &Path, force: bool) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && read_only(&m) && !force => Err(Error::ReadOnly {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// Gives `file` the permission bits of `like` and, where the process may, its owner and
/// group (a process that may not give a file away may still give it one of its groups).
/// Best effort: a file system that keeps no modes or owners keeps the temporary's.
fn take_attributes(file: &std::fs::File, like: &std::fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{fchown, MetadataExt, PermissionsExt};
        if let Ok(mine) = file.metadata() {
            if (mine.uid(), mine.gid()) != (like.uid(), like.gid())
                && fchown(file, Some(like.uid()), Some(like.gid())).is_err()
            {
                let _ = fchown(file, None, Some(like.gid()));
            }
        }
        // The permission bits only: a set-user-ID bit is not carried to new contents.
        let _ = file.set_permissions(std::fs::Permissions::from_mode(like.mode() & 0o777));
    }
    #[cfg(not(unix))]
    {
        let _ = file.set_permissions(like.permissions());
    }
}

impl Temp {
    pub(crate) fn new(path: &Path) -> Result<Temp> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The target's name is in the temporary's, so that a leftover says what it was; cut
        // short where the whole would be longer than a file name may be.
        let prefix = format!(".{}.", truncated(&name, NAME_MAX - TEMP_EXTRA));
        let create = |prefix: &str| {
            let mut b = tempfile::Builder::new();
            b.prefix(prefix).suffix(TEMP_SUFFIX);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                b.permissions(std::fs::Permissions::from_mode(0o644));
            }
            b.tempfile_in(dir)
        };
        let file = match create(&prefix) {
            // A file system whose names are shorter still: a temporary without the name.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename => create(".gpucvt."),
            r => r,
        }
        .map_err(|e| Error::Io {
            context: format!(
                "cannot create the output {}: cannot create a file in {}",
                path.display(),
                dir.display()
            ),
            source: e,
        })?;
        register_temporary(file.path());
        Ok(Temp {
            _registered: Registered(file.path().to_path_buf()),
            file,
            path: path.to_path_buf(),
        })
    }

    /// Renames the temporary to its path, with the mode and owner of the file it replaces;
    /// a read-only file is replaced only with `force`.
    pub(crate) fn finish(self, force: bool) -> Result<()> {
        refuse_read_only(&self.path, force)?;
        self.finish_like(None)
    }

    /// Renames the temporary to its path, with the mode and owner of the file it replaces,
    /// or of `like` where there is none (a new sidecar gets its output's). The caller has
    /// checked that the file may be replaced.
    pub(crate) fn finish_like(self, like: Option<&std::fs::Metadata>) -> Result<()> {
        let existing = std::fs::metadata(&self.path).ok().filter(|m| m.is_file());
        if let Some(m) = existing.as_ref().or(like) {
            take_attributes(self.file.as_file(), m);
        }
        let path = self.path;
        self.file
            .persist(&path)
            .map(|_| ())
            .map_err(|e| Error::io("write", &path, e.error))
    }
}

/// A whole output file of another command (`gpucvt sweep --out`): written to a temporary
/// beside it and renamed into place by [`OutputFile::commit`], with the mode and owner of
/// the file it replaces, as `convert` writes its outputs. Dropped without a commit, the
/// temporary is removed; a signal's clean-up ([`remove_temporaries`]) removes it too.
pub struct OutputFile(Temp);

impl OutputFile {
    /// A new temporary for the output `path` (a symbolic link is followed to its file; a
    /// folder or a device is refused).
    pub fn create(path: &Path) -> Result<OutputFile> {
        Temp::new(&resolve_output(path)?).map(OutputFile)
    }

    /// The output's path, links resolved.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// Flushes to disk and renames the temporary into place; a read-only output is refused
    /// unless `force`.
    pub fn commit(self, force: bool) -> Result<()> {
        let path = self.0.path.clone();
        self.0
            .file
            .as_file()
            .sync_all()
            .map_err(|e| Error::io("write", &path, e))?;
        self.0.finish(force)
    }
}

impl std::io::Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.file.flush()
    }
}
