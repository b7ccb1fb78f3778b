//! How many worker threads a bulk job gets: one rule for every front end (each subcommand
//! of the CLI that takes a thread count, and the Python package), so that the same request
//! runs the same way everywhere.

use std::sync::OnceLock;

/// At most this many worker threads per core: more only adds switching and memory (a
/// request of 100,000 threads would otherwise start them all).
pub const THREADS_PER_CORE: usize = 4;

/// The cores this process may use (at least 1). Read once: the standard library reads the
/// cgroup quota files on every call, tens of microseconds.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A thread count as granted: what was asked for, what is used, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threads {
    /// The count asked for (0: one per core).
    pub asked: usize,
    /// The count to use: the one asked for, one per core for 0, and at most
    /// [`THREADS_PER_CORE`] per core.
    pub used: usize,
    /// The cores this process may use.
    pub cores: usize,
}

impl Threads {
    /// The rule for `asked` threads (0: one per core) on this machine.
    ///
    /// ```
    /// use gpucvt_kernels::threads::{cores, Threads, THREADS_PER_CORE};
    /// assert_eq!(Threads::new(0).used, cores());
    /// assert_eq!(Threads::new(1).used, 1);
    /// let t = Threads::new(100_000);
    /// assert_eq!(t.used, THREADS_PER_CORE * cores());
    /// assert!(t.note().unwrap().starts_with("100000 threads asked for; using "));
    /// ```
    pub fn new(asked: usize) -> Threads {
        Threads::on(asked, cores())
    }

    /// The rule for `asked` threads on a machine of `cores` cores.
    pub fn on(asked: usize, cores: usize) -> Threads {
        let cores = cores.max(1);
        let most = cores.saturating_mul(THREADS_PER_CORE);
        let used = if asked == 0 { cores } else { asked.min(most) };
        Threads { asked, used, cores }
    }

    /// What to tell the user when fewer threads are used than were asked for.
    pub fn note(&self) -> Option<String> {
        (self.used < self.asked).then(|| {
            format!(
                "{} threads asked for; using {} ({THREADS_PER_CORE} per core on this machine's {})",
                self.asked, self.used, self.cores
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_clamped_to_four_per_core() {
        assert_eq!(Threads::on(0, 2).used, 2);
        assert_eq!(Threads::on(3, 2).used, 3);
        assert_eq!(Threads::on(8, 2).used, 8);
        assert_eq!(Threads::on(9, 2).used, 8);
        assert_eq!(Threads::on(100_000, 2).used, 8);
        assert_eq!(Threads::on(usize::MAX, usize::MAX).used, usize::MAX);
        assert_eq!(Threads::on(5, 0).used, 4);
        assert_eq!(Threads::on(8, 2).note(), None);
        assert_eq!(
            Threads::on(100_000, 2).note().unwrap(),
            "100000 threads asked for; using 8 (4 per core on this machine's 2)"
        );
    }
}
