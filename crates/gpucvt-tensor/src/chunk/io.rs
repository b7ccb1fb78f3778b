//! Where a chunk's bytes come from (memory, or positioned reads of the input file), and the
//! per-thread scratch buffers the sub-chunks are converted in.

use crate::chunk::random::Randoms;
use std::fs::File;

thread_local! {
    /// The scratch buffers of the thread's last sub-chunk, kept for the next one: a fresh
    /// set per rayon job (as `map_init` gave) was allocated, zeroed and faulted in again for
    /// every chunk, about 5% of a conversion's processor time.
    static SCRATCH: std::cell::RefCell<Option<Box<dyn std::any::Any>>> =
        const { std::cell::RefCell::new(None) };
}

/// Where the input bytes of a chunk come from ([`Plan::convert_chunk`],
/// [`Plan::convert_chunk_at`]).
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    #[cfg(test)]
    Bytes(&'a [u8]),
    File {
        file: &'a File,
        at: u64,
    },
}

/// Fills `buf` from byte `at` of `file` without moving its position (`UnexpectedEof` if the
/// file ends first).
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut at) = (buf, at);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, at) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(k) => {
                    buf = &mut buf[k..];
                    at += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, at);
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "positioned reads are not available on this platform",
        ))
    }
}

/// Runs `f` with this thread's [`Scratch`] of these word types (a new one if it has none of
/// them). The scratch is taken out of the thread's slot while `f` runs, so a job that rayon
/// runs on this thread meanwhile gets a fresh one instead of a conflicting borrow.
pub(super) fn with_scratch<S: 'static, D: 'static, R>(
    f: impl FnOnce(&mut Scratch<S, D>) -> R,
) -> R {
    let mut sc: Box<Scratch<S, D>> = SCRATCH
        .with(|slot| slot.borrow_mut().take())
        .and_then(|b| b.downcast().ok())
        .unwrap_or_default();
    let r = f(&mut sc);
    SCRATCH.with(|slot| *slot.borrow_mut() = Some(sc));
    r
}

pub(super) struct Scratch<S, D> {
    /// The input bytes read from a file ([`Source::File`]).
    pub(super) input: Vec<u64>,
    pub(super) src: Vec<S>,
    pub(super) dst: Vec<D>,
    pub(super) rnd: Randoms,
    pub(super) tmp: Vec<u32>,
    /// The largest magnitudes of the blocks of `f32` words.
    pub(super) amax: Vec<u32>,
    pub(super) exact: Vec<usize>,
    pub(super) ks: Vec<i32>,
}

impl<S, D> Default for Scratch<S, D> {
    fn default() -> Self {
        Scratch {
            input: Vec::new(),
            src: Vec::new(),
            dst: Vec::new(),
            rnd: Randoms::default(),
            tmp: Vec::new(),
            amax: Vec::new(),
            exact: Vec::new(),
            ks: Vec::new(),
        }
    }
}
