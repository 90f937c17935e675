//! Read-only file mappings that survive the file shrinking under them: the one module of the
//! workspace with `unsafe` code.
//!
//! A mapped page whose file offset lies past the file's end faults with SIGBUS when it is read,
//! which kills the process (a profiler that rewrites its output truncates it first: a new
//! `perl -d:NYTProf` run does to `nytprof.out`). A [`Mapping`] is registered in a fixed,
//! lock-free table that a process-wide SIGBUS handler consults: a fault inside a registered
//! mapping replaces the pages from the faulting one to the mapping's end with anonymous zero
//! pages, so that the reader goes on over zeros (and finishes or fails), and sets the mapping's
//! flag, which [`Mapping::faulted`] reads so that the result is replaced by an error. A fault
//! anywhere else is given back to the action that was installed before (by default: the
//! process dies of SIGBUS, as without this module).
//!
//! Guarded mappings exist on Linux and macOS. Elsewhere [`Mapping::map`] declines on Unix (the
//! caller reads the file into memory) and maps unguarded on Windows, where a mapped file cannot
//! be truncated.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;

/// A file mapped read-only, guarded against the file shrinking (see the module documentation).
#[derive(Debug)]
pub(crate) struct Mapping {
    map: memmap2::Mmap,
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    slot: &'static guard::Slot,
}

impl Mapping {
    /// Maps `file`, whose length is not zero, read-only and guarded; `Ok(None)` when it cannot
    /// be guarded (every slot of the table is taken, the handler could not be installed, or
    /// this platform has no guard): the caller reads the file instead.
    pub(crate) fn map(file: &File) -> io::Result<Option<Mapping>> {
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        {
            if !guard::install() {
                return Ok(None);
            }
            let Some(slot) = guard::Slot::claim() else {
                return Ok(None);
            };
            let map = match map(file) {
                Ok(map) => map,
                Err(e) => {
                    slot.release();
                    return Err(e);
                }
            };
            slot.register(map.as_ptr() as usize, map.len());
            Ok(Some(Mapping { map, slot }))
        }
        #[cfg(windows)]
        {
            map(file).map(|map| Some(Mapping { map }))
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
        {
            let _ = file;
            Ok(None)
        }
    }

    /// The mapped bytes: the file's, or zeros from the first page that faulted because the file
    /// had shrunk ([`Mapping::faulted`]).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// True once a read of the mapping faulted because the file had shrunk under it: its bytes
    /// from the faulting page on are zeros, not the file's.
    pub(crate) fn faulted(&self) -> bool {
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        {
            self.slot.faulted()
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            false
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregistered before `map` is unmapped (fields drop after this): no fault can be in
        // flight, since nothing borrows the bytes any more.
        self.slot.release();
    }
}

/// Maps a file read-only.
fn map(file: &File) -> io::Result<memmap2::Mmap> {
    // SAFETY: `Mmap::map` is unsafe because the file may change while it is mapped. A change of
    // bytes is seen by the decoders as any other input (they check every bound and hold no
    // `unsafe`), and a truncation faults, which the guard turns into zeros and a flag (on
    // Windows a mapped file cannot be truncated). The mapping is read-only and private to the
    // `Mapping` that owns it; its bytes are only lent out for the `Mapping`'s lifetime.
    unsafe { memmap2::Mmap::map(file) }
}

/// The table of guarded mappings and the SIGBUS handler that reads it.
///
/// Everything the handler touches is async-signal-safe: atomics in a static array (no lock,
/// no allocation), and the `mmap`, `sigaction` and `raise` system calls.
#[cfg(any(target_os = "linux", target_os = "macos"))]
mod guard {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};

    /// How many mappings can be guarded at once; past that, files are read into memory. A
    /// verb holds a few (a database's four files), a Python session one per open input.
    const SLOTS: usize = 1024;

    /// One registered mapping: its address range under a sequence lock (odd while written), so
    /// that the handler never pairs one mapping's start with another's length.
    #[derive(Debug)]
    pub(super) struct Slot {
        taken: AtomicBool,
        seq: AtomicUsize,
        start: AtomicUsize,
        len: AtomicUsize,
        faulted: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)] // the array's initializer, once per slot
    const FREE: Slot = Slot {
        taken: AtomicBool::new(false),
        seq: AtomicUsize::new(0),
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        faulted: AtomicBool::new(false),
    };

    static TABLE: [Slot; SLOTS] = [FREE; SLOTS];

    impl Slot {
        /// A free slot, now taken, with no range yet.
        pub(super) fn claim() -> Option<&'static Slot> {
            TABLE.iter().find(|s| {
                s.taken
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            })
        }

        /// Records the mapping `[start, start + len)`, not faulted.
        pub(super) fn register(&self, start: usize, len: usize) {
            self.write(start, len);
        }

        /// Empties the slot and gives it back.
        pub(super) fn release(&self) {
            self.write(0, 0);
            self.taken.store(false, Ordering::Release);
        }

        fn write(&self, start: usize, len: usize) {
            self.seq.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::Release);
            self.start.store(start, Ordering::Relaxed);
            self.len.store(len, Ordering::Relaxed);
            self.faulted.store(false, Ordering::Relaxed);
            self.seq.fetch_add(1, Ordering::Release);
        }

        pub(super) fn faulted(&self) -> bool {
            self.faulted.load(Ordering::Acquire)
        }

        /// The range, if it was read whole (not while the slot was being written).
        fn range(&self) -> Option<(usize, usize)> {
            let before = self.seq.load(Ordering::Acquire);
            if before % 2 == 1 {
                return None;
            }
            let (start, len) = (
                self.start.load(Ordering::Relaxed),
                self.len.load(Ordering::Relaxed),
            );
            fence(Ordering::Acquire);
            (self.seq.load(Ordering::Relaxed) == before && len > 0).then_some((start, len))
        }
    }

    /// The action SIGBUS had before ours, given back a fault that is not ours.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
    /// The page size, read before the handler is installed.
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    /// Whether the handler is in place.
    static INSTALLED: OnceLock<bool> = OnceLock::new();

    /// Installs the handler once per process; false if it could not be.
    pub(super) fn install() -> bool {
        *INSTALLED.get_or_init(|| {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            let Ok(page) = usize::try_from(page) else {
                return false;
            };
            if !page.is_power_of_two() {
                return false;
            }
            PAGE.store(page, Ordering::Relaxed);
            // SAFETY: an all-zero sigaction is a valid value (no handler, empty mask).
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            // On the alternate stack when the thread has one (a SIGBUS may be a stack
            // overflow on macOS); SIGBUS stays blocked while the handler runs.
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            // SAFETY: `action.sa_mask` is a valid sigset_t to initialize.
            unsafe { libc::sigemptyset(&mut action.sa_mask) };
            // SAFETY: as above, a zeroed sigaction is valid to be overwritten by the kernel.
            let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: both pointers are to valid sigaction values; `on_sigbus` has the
            // signature SA_SIGINFO requires and is async-signal-safe (see it).
            if unsafe { libc::sigaction(libc::SIGBUS, &action, &mut previous) } != 0 {
                return false;
            }
            // A fault before this is set (not ours: nothing is registered yet) gets the
            // default action.
            let _ = PREVIOUS.set(previous);
            true
        })
    }

    /// The SIGBUS handler: a fault in a registered mapping gets zero pages and a flag; any
    /// other is given back to the previous action.
    extern "C" fn on_sigbus(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        _context: *mut libc::c_void,
    ) {
        let errno = errno();
        // SAFETY: errno() points to this thread's errno.
        let saved = unsafe { *errno };
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
        let info = unsafe { &*info };
        if !(info.si_code > 0 && zero_fill(fault_address(info))) {
            give_back(signal, info);
        }
        // SAFETY: as above.
        unsafe { *errno = saved };
    }

    /// Maps zero pages over the registered mapping that holds `addr`, from its page to the
    /// mapping's end, and flags the mapping; false if no mapping holds it.
    fn zero_fill(addr: usize) -> bool {
        let page = PAGE.load(Ordering::Relaxed);
        for slot in &TABLE {
            let Some((start, len)) = slot.range() else {
                continue;
            };
            if addr < start || addr - start >= len {
                continue;
            }
            let from = addr & !(page - 1);
            let end = (start + len).next_multiple_of(page);
            // SAFETY: `[from, end)` lies within the pages of a live mapping that this process
            // owns (registered until it is unmapped, and a read of it is in progress, so it is
            // not being dropped); MAP_FIXED replaces exactly those pages with private zero
            // pages, readable as the file's were. The bytes lent out change from the file's
            // to zeros, which the mapping's contract already allows (see `map`).
            let mapped = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANON,
                    -1,
                    0,
                )
            };
            if mapped == libc::MAP_FAILED {
                return false;
            }
            slot.faulted.store(true, Ordering::Release);
            return true;
        }
        false
    }

    /// Restores the previous action (the default if none was recorded) for a fault that is not
    /// ours: returning re-runs the faulting access, which faults again into that action. A
    /// SIGBUS sent by a process is raised again, delivered once the handler returns.
    fn give_back(signal: libc::c_int, info: &libc::siginfo_t) {
        // SAFETY: a valid sigaction (the recorded one, or the default with an empty mask);
        // sigaction and raise are async-signal-safe.
        unsafe {
            let default = {
                let mut a: libc::sigaction = std::mem::zeroed();
                a.sa_sigaction = libc::SIG_DFL;
                a
            };
            let previous = PREVIOUS.get().unwrap_or(&default);
            libc::sigaction(signal, previous, std::ptr::null_mut());
            if info.si_code <= 0 {
                libc::raise(signal);
            }
        }
    }

    fn fault_address(info: &libc::siginfo_t) -> usize {
        #[cfg(target_os = "linux")]
        // SAFETY: a SIGBUS with a positive si_code is a fault, whose siginfo carries si_addr.
        let addr = unsafe { info.si_addr() };
        #[cfg(target_os = "macos")]
        let addr = info.si_addr;
        addr as usize
    }

    fn errno() -> *mut libc::c_int {
        #[cfg(target_os = "linux")]
        // SAFETY: no preconditions.
        let errno = unsafe { libc::__errno_location() };
        #[cfg(target_os = "macos")]
        // SAFETY: no preconditions.
        let errno = unsafe { libc::__error() };
        errno
    }
}
