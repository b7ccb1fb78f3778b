//! Why a file conversion failed.

use std::path::{Path, PathBuf};

/// Why a file conversion failed. Every variant carries a complete, one-line message naming
/// the file (and tensor) concerned; no output file is left behind.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read, created or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A truncated or corrupt header, or data that does not match it.
    #[error("{0}")]
    Corrupt(String),
    /// A dtype or feature that cannot be converted.
    #[error("{0}")]
    Unsupported(String),
    /// Options that cannot be honoured (output equal to input, block size not dividing the
    /// last dimension, an unknown tensor name, …).
    #[error("{0}")]
    Invalid(String),
    /// Options that cannot be honoured, in a message that names options: each front end
    /// renders it in its own spelling ([`crate::options::Message::render`]); `Display`
    /// names them plainly (`scale_rule`, `mode=rs`).
    #[error("{0}")]
    Option(crate::options::Message),
    /// A [`crate::Recipe`] does not take tensors of this element format: why (for example
    /// "cvt.rn.f16.f32 converts f32 elements, but the data is bf16"). The tensor is kept
    /// unchanged and listed with this reason (with `strict`, or for `.npy` and raw input, the
    /// conversion fails with it).
    #[error("{0}")]
    Refused(String),
    /// An existing output (or one of its sidecar files) is read-only: it is replaced or
    /// removed only when forced ([`crate::Options::force`]).
    #[error("{} is read-only: it is replaced or removed only when forced", path.display())]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// The caller's cancel flag was set ([`crate::Options::cancel`]): the temporaries were
    /// removed and nothing was written.
    #[error("interrupted: nothing was written")]
    Cancelled,
    /// The output read back differs from what was converted (a bug in gpucvt, or storage
    /// that does not keep what it is given); the output was not kept.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The error with `what` (a file or tensor) and a colon before its message; a message
    /// naming options stays one.
    pub(crate) fn about(self, what: &str) -> Error {
        match self {
            Error::Option(m) => Error::Option(m.after(format!("{what}: "))),
            e => Error::Invalid(format!("{what}: {e}")),
        }
    }

    pub(crate) fn io(what: &str, path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            context: format!("cannot {what} {}", path.display()),
            source,
        }
    }
}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;
