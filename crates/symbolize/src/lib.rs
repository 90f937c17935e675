//! Resolve addresses in ELF binaries to function, file and line, as binutils' `addr2line -f -i -C`
//! does: the DWARF line tables and inlined subroutines through [`addr2line`], the ELF symbol
//! table through [`object`] where DWARF says nothing, C++ and Rust names demangled.
//!
//! Format-neutral: a profiler format that records a load module's path and addresses inside it
//! (hpcrun's load map, a pprof mapping) asks a [`Symbolizer`] for each module.
//!
//! - **Finding binaries**: a [`SearchPath`] of folders (`--binary-path DIR`, the environment
//!   variable `PROFCODEC_BINARY_PATH`, colon-separated like `PPROF_BINARY_PATH`) is tried first,
//!   each folder for the recorded file name and then for the recorded path below it (a sysroot);
//!   the recorded path itself last, and only where it lies under one of the folders. Nothing
//!   outside them is opened, nothing under `/proc`, `/sys` or `/dev`, and only regular files
//!   with a plausible ELF header (see the README's "What it refuses, and its bounds").
//! - **Checking them**: a binary found on disk may not be the one that ran (rebuilt since, or
//!   another version of a library of the same name). When the caller knows the build id it is
//!   compared; otherwise every address recorded for the module must lie in the binary's
//!   executable sections, and on x86-64 the return addresses (the addresses of calling frames)
//!   must follow a call instruction (at least 90% of them: a signal frame's address does
//!   not). A candidate that fails is skipped for the next one, and the reason is kept for the
//!   report ([`Resolution`]); no name is ever attached from a binary that failed the check.
//! - **Bounds**: only the headers, symbol tables and needed DWARF sections are read, never a
//!   file whole; compressed sections inflate within [`MAX_INFLATION_RATIO`] and
//!   [`MAX_DEBUG_BYTES`]; DWARF nested deeper than [`MAX_DIE_DEPTH`] is not used.
//! - **Cost**: each binary is read once per [`Symbolizer`] (its DWARF parsed lazily, per
//!   compilation unit, by `addr2line`), and each address looked up once: a thousand rank files
//!   of the same program read each binary once.
//!
//! ```no_run
//! use profcodec_symbolize::{Probe, Resolution, SearchPath, Symbolizer};
//! let mut symbolizer = Symbolizer::new(SearchPath::from_env());
//! let probes = [Probe::leaf(0x1139), Probe::ret(0x1187)];
//! if let Resolution::Resolved { binary, .. } = symbolizer.resolve("/usr/bin/prog", &probes, None) {
//!     for frame in symbolizer.lookup(binary, probes[0]).iter() {
//!         println!("{:?} {:?}:{:?}", frame.function, frame.file, frame.line);
//!     }
//! }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

mod read;

pub use read::{MAX_DEBUG_BYTES, MAX_DIE_DEPTH, MAX_INFLATION_RATIO};

/// The environment variable naming the folders binaries are searched in, colon-separated.
pub const BINARY_PATH_ENV: &str = "PROFCODEC_BINARY_PATH";

/// The share of return addresses that must follow a call instruction (x86-64).
const CALL_SITES_NEEDED: f64 = 0.9;

/// One source frame of an address: the function, and the file and line of the address in it
/// (for an inlined call's caller, the line of the call).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceFrame {
    /// The function's name, demangled.
    pub function: Option<String>,
    /// The source file.
    pub file: Option<String>,
    /// The line (1-based).
    pub line: Option<u32>,
}

/// An address to resolve, and whether it is a return address (the address of a calling frame,
/// looked up one byte before, at the call instruction, as debuggers and pprof do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Probe {
    /// The address in the binary's own address space (the load offset removed).
    pub address: u64,
    /// The address follows a call instruction.
    pub is_return: bool,
}

impl Probe {
    /// A sampled address (a leaf frame).
    pub fn leaf(address: u64) -> Probe {
        Probe {
            address,
            is_return: false,
        }
    }

    /// A return address (a calling frame).
    pub fn ret(address: u64) -> Probe {
        Probe {
            address,
            is_return: true,
        }
    }

    /// The address looked up: a return address minus one.
    pub fn lookup_address(self) -> u64 {
        if self.is_return {
            self.address.saturating_sub(1)
        } else {
            self.address
        }
    }
}

/// Folders where binaries are searched, matched by file name.
#[derive(Debug, Clone, Default)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
}

impl SearchPath {
    /// The folders `dirs`, in order.
    pub fn new(dirs: impl IntoIterator<Item = PathBuf>) -> SearchPath {
        SearchPath {
            dirs: dirs.into_iter().collect(),
        }
    }

    /// The folders of [`BINARY_PATH_ENV`] (none when it is unset).
    pub fn from_env() -> SearchPath {
        SearchPath::new(
            std::env::var_os(BINARY_PATH_ENV)
                .map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .filter(|d| !d.as_os_str().is_empty()),
        )
    }

    /// These folders, then `more`.
    pub fn with(mut self, more: impl IntoIterator<Item = PathBuf>) -> SearchPath {
        self.dirs.extend(more);
        self
    }

    /// The folders.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The places a binary recorded as `recorded` may be, in the order tried: each folder's
    /// file of the same name, each folder's copy of the whole recorded path, the recorded path.
    pub fn candidates(&self, recorded: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(name) = recorded.file_name() {
            out.extend(self.dirs.iter().map(|d| d.join(name)));
        }
        if recorded.is_absolute() {
            let relative: PathBuf = recorded.components().skip(1).collect();
            out.extend(self.dirs.iter().map(|d| d.join(&relative)));
        }
        out.push(recorded.to_owned());
        out.dedup();
        out
    }
}

/// Why a binary could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// It could not be opened or read.
    Unreadable(String),
    /// It is not a regular file, or not an ELF executable or shared library of a plausible
    /// shape: refused before anything past its header is read.
    NotABinary(String),
    /// Its path, its symbolic links resolved, leaves the folders binaries are read from.
    Escapes {
        /// Where it leads.
        resolved: PathBuf,
    },
    /// It lies under `/proc`, `/sys` or `/dev`, never read as a binary.
    SystemPath {
        /// Where it leads.
        resolved: PathBuf,
    },
    /// Its build id is not the one recorded.
    BuildId {
        /// The recorded build id, in hex.
        expected: String,
        /// The binary's build id, in hex (empty when it has none).
        found: String,
    },
    /// Some recorded addresses are not in its code.
    OutsideCode {
        /// How many addresses were outside.
        outside: usize,
        /// How many addresses were checked.
        of: usize,
        /// The first one outside.
        first: u64,
    },
    /// Too few return addresses follow a call instruction.
    NotCallSites {
        /// How many return addresses follow no call.
        failed: usize,
        /// How many return addresses were checked.
        of: usize,
    },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Unreadable(e) => write!(f, "unreadable: {e}"),
            Rejection::NotABinary(e) => write!(f, "not a binary: {e}"),
            Rejection::Escapes { resolved } => write!(
                f,
                "leads to {} through a symbolic link, outside the folders binaries are read \
                 from: not read",
                resolved.display()
            ),
            Rejection::SystemPath { resolved } => write!(
                f,
                "leads to {}: /proc, /sys and /dev are never read as binaries",
                resolved.display()
            ),
            Rejection::BuildId { expected, found } if found.is_empty() => {
                write!(f, "no build id, but {expected} was recorded")
            }
            Rejection::BuildId { expected, found } => {
                write!(f, "build id {found}, but {expected} was recorded")
            }
            Rejection::OutsideCode { outside, of, first } => write!(
                f,
                "{outside} of {of} recorded addresses lie outside its code (first 0x{first:x}): \
                 not the binary that ran"
            ),
            Rejection::NotCallSites { failed, of } => write!(
                f,
                "{failed} of {of} return addresses follow no call instruction: not the binary \
                 that ran"
            ),
        }
    }
}

/// What became of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// A binary passed the checks: look addresses up with [`Symbolizer::lookup`].
    Resolved {
        /// The binary's handle in the symbolizer.
        binary: BinaryId,
        /// Where it was found.
        path: PathBuf,
        /// Why its identity is not proven, when no build id was given to compare: the recorded
        /// addresses fit it, as they would fit another program of the same shape.
        unverified: Option<String>,
    },
    /// No candidate exists.
    NotFound {
        /// The places tried.
        tried: Vec<PathBuf>,
        /// Candidates not looked at: outside the folders binaries are read from (the search
        /// path and the folders the caller adds, such as the input's own).
        outside: Vec<PathBuf>,
    },
    /// Candidates exist, and each was rejected.
    Rejected {
        /// Each candidate found and why it was not used.
        candidates: Vec<(PathBuf, Rejection)>,
    },
}

impl fmt::Display for Resolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resolution::Resolved { path, .. } => write!(f, "resolved from {}", path.display()),
            Resolution::NotFound { tried, outside } => {
                write!(f, "not found (tried ")?;
                for (i, t) in tried.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}", t.display())?;
                }
                if tried.is_empty() {
                    write!(f, "nothing")?;
                }
                write!(f, ")")?;
                for (i, o) in outside.iter().enumerate() {
                    let lead = if i == 0 {
                        "; not read, outside the folders binaries are read from: "
                    } else {
                        ", "
                    };
                    write!(f, "{lead}{}", o.display())?;
                }
                Ok(())
            }
            Resolution::Rejected { candidates } => {
                for (i, (path, why)) in candidates.iter().enumerate() {
                    if i > 0 {
                        write!(f, "; ")?;
                    }
                    write!(f, "{}: {why}", path.display())?;
                }
                Ok(())
            }
        }
    }
}

/// A binary read by a [`Symbolizer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BinaryId(usize);

type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// An executable section: its addresses and where its bytes are in the file.
#[derive(Debug, Clone, Copy)]
struct Code {
    start: u64,
    end: u64,
    /// File offset of `start`, when the section has bytes in the file.
    offset: Option<u64>,
}

/// One ELF binary, checked and read once: its section headers, symbol tables and DWARF (never
/// its code or data whole; the few code bytes a check needs are read where they lie).
pub struct Binary {
    path: PathBuf,
    store: read::Store,
    x86_64: bool,
    build_id: Option<Vec<u8>>,
    code: Vec<Code>,
    /// Function symbols: (start, end, name), sorted by start.
    symbols: Vec<(u64, u64, String)>,
    dwarf: Option<addr2line::Context<Reader>>,
    /// Why its DWARF was not used (names then come from its symbol table).
    dwarf_refused: Option<String>,
    lookups: HashMap<Probe, Arc<[SourceFrame]>>,
}

impl fmt::Debug for Binary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binary")
            .field("path", &self.path)
            .field("bytes", &self.store.len())
            .field("symbols", &self.symbols.len())
            .field("dwarf", &self.dwarf.is_some())
            .field("dwarf_refused", &self.dwarf_refused)
            .finish()
    }
}

/// A function name demangled when it is a mangled C++ (`_Z`) or Rust (`_R`, `_ZN...E`) name.
pub fn demangle(name: &str) -> Cow<'_, str> {
    if name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("__Z") {
        addr2line::demangle_auto(Cow::Borrowed(name), None)
    } else {
        Cow::Borrowed(name)
    }
}

/// What the object-level parse of a binary keeps.
struct Parsed {
    x86_64: bool,
    little_endian: bool,
    build_id: Option<Vec<u8>>,
    code: Vec<Code>,
    symbols: Vec<(u64, u64, String)>,
    /// The debugging sections, by their `.debug_*` name (`.zdebug_*` too).
    debug: HashMap<String, read::DebugSection>,
}

/// The DWARF sections the lookups read; the others (locations, macros, frames, type units) are
/// never loaded.
const DWARF_NEEDED: [gimli::SectionId; 10] = [
    gimli::SectionId::DebugAbbrev,
    gimli::SectionId::DebugAddr,
    gimli::SectionId::DebugAranges,
    gimli::SectionId::DebugInfo,
    gimli::SectionId::DebugLine,
    gimli::SectionId::DebugLineStr,
    gimli::SectionId::DebugStr,
    gimli::SectionId::DebugStrOffsets,
    gimli::SectionId::DebugRanges,
    gimli::SectionId::DebugRngLists,
];

impl Binary {
    /// Reads the ELF executable or shared library at `path`: only a regular file, only an ELF
    /// of a plausible shape (checked from its header before anything else is read), and of it
    /// only the section headers, symbol tables and DWARF (see the crate docs for the bounds).
    pub fn open(path: &Path) -> Result<Binary, Rejection> {
        let store = read::open_regular(path)?;
        Binary::from_store(path.to_owned(), store)
    }

    /// [`open`](Binary::open) over bytes in memory, `name` standing for its path.
    pub fn from_bytes(
        name: impl Into<PathBuf>,
        bytes: impl Into<Arc<[u8]>>,
    ) -> Result<Binary, Rejection> {
        Binary::from_store(name.into(), read::Store::Bytes(bytes.into()))
    }

    fn from_store(path: PathBuf, store: read::Store) -> Result<Binary, Rejection> {
        read::check_elf_header(&store)?;
        // A dependency's panic on a crafted binary becomes a refusal, not a crash.
        let (parsed, store) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let parsed = match &store {
                read::Store::Bytes(bytes) => Binary::parse_object(&**bytes),
                read::Store::File { file, .. } => {
                    // Reads only the ranges the parse touches; dropped before the DWARF is read.
                    let cache = object::ReadCache::new(file);
                    Binary::parse_object(&cache)
                }
            };
            (parsed, store)
        }))
        .map_err(|_| {
            Rejection::NotABinary("its object file structure made the ELF reader fail".to_owned())
        })?;
        let parsed = parsed?;
        let mut binary = Binary {
            x86_64: parsed.x86_64,
            build_id: parsed.build_id,
            path,
            code: parsed.code,
            symbols: parsed.symbols,
            dwarf: None,
            dwarf_refused: None,
            lookups: HashMap::new(),
            store,
        };
        if parsed.debug.contains_key(".debug_info") {
            let endian = if parsed.little_endian {
                gimli::RunTimeEndian::Little
            } else {
                gimli::RunTimeEndian::Big
            };
            let store = &binary.store;
            let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Binary::load_dwarf(store, &parsed.debug, endian)
            }))
            .unwrap_or_else(|_| Err("its DWARF made the DWARF reader fail".to_owned()));
            match loaded {
                Ok(context) => binary.dwarf = Some(context),
                Err(why) => binary.dwarf_refused = Some(why),
            }
        }
        Ok(binary)
    }

    fn parse_object<'d, R: object::ReadRef<'d>>(data: R) -> Result<Parsed, Rejection> {
        let unreadable = |e: object::Error| Rejection::NotABinary(e.to_string());
        let file = object::File::parse(data).map_err(unreadable)?;
        let code = file
            .sections()
            .filter(|s| s.kind() == SectionKind::Text && s.size() > 0)
            .map(|s| Code {
                start: s.address(),
                end: s.address().saturating_add(s.size()),
                offset: s.file_range().map(|(o, _)| o),
            })
            .collect();
        let mut symbols: Vec<(u64, u64, String)> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.address() != 0)
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_owned())))
            .collect();
        symbols.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        symbols.dedup_by_key(|s| s.0);
        // A symbol without a size ends where the next one starts.
        let starts: Vec<u64> = symbols.iter().map(|s| s.0).collect();
        for (i, s) in symbols.iter_mut().enumerate() {
            s.1 = if s.1 > 0 {
                s.0.saturating_add(s.1)
            } else {
                starts.get(i + 1).copied().unwrap_or(u64::MAX)
            };
        }
        let mut debug = HashMap::new();
        for section in file.sections() {
            let Ok(name) = section.name() else { continue };
            let name = match name.strip_prefix(".zdebug_") {
                Some(rest) => format!(".debug_{rest}"),
                None if name.starts_with(".debug_") => name.to_owned(),
                None => continue,
            };
            if let Ok(range) = section.compressed_file_range() {
                debug.entry(name).or_insert(read::DebugSection { range });
            }
        }
        Ok(Parsed {
            x86_64: file.architecture() == object::Architecture::X86_64,
            little_endian: file.is_little_endian(),
            build_id: file.build_id().ok().flatten().map(<[u8]>::to_vec),
            code,
            symbols,
            debug,
        })
    }

    /// The DWARF of the sections `debug`, each read (or inflated) within the budget, and its
    /// nesting checked before the recursive parser sees it.
    fn load_dwarf(
        store: &read::Store,
        debug: &HashMap<String, read::DebugSection>,
        endian: gimli::RunTimeEndian,
    ) -> Result<addr2line::Context<Reader>, String> {
        let mut budget = read::MAX_DEBUG_BYTES;
        let mut sections: HashMap<gimli::SectionId, Arc<[u8]>> = HashMap::new();
        for id in DWARF_NEEDED {
            if let Some(section) = debug.get(id.name()) {
                let bytes = read::section_bytes(store, id.name(), *section, &mut budget)?;
                sections.insert(id, bytes.into());
            }
        }
        let dwarf = gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
            let bytes = sections
                .get(&id)
                .cloned()
                .unwrap_or_else(|| Arc::from(&[][..]));
            Ok(gimli::EndianReader::new(bytes, endian))
        })
        .map_err(|e| format!("its DWARF cannot be read: {e}"))?;
        read::check_depth(&dwarf)?;
        addr2line::Context::from_dwarf(dwarf).map_err(|e| format!("its DWARF cannot be read: {e}"))
    }

    /// Where the binary was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its GNU build id, if it has one.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// Whether it has DWARF debugging information (else names come from its symbol table, with
    /// no file or line).
    pub fn has_debug_info(&self) -> bool {
        self.dwarf.is_some()
    }

    /// Why the binary's DWARF was not used, when it has DWARF that was refused (a compressed
    /// section past its bounds, entries nested too deep, DWARF that cannot be read): its names
    /// then come from its symbol table, with no file or line.
    pub fn debug_info_refused(&self) -> Option<&str> {
        self.dwarf_refused.as_deref()
    }

    fn code_at(&self, address: u64) -> Option<&Code> {
        self.code
            .iter()
            .find(|c| c.start <= address && address < c.end)
    }

    /// Whether `probes` could have been recorded running this binary (see the crate docs), and
    /// `build_id` is its build id when given.
    pub fn check(&self, probes: &[Probe], build_id: Option<&[u8]>) -> Result<(), Rejection> {
        if let Some(expected) = build_id {
            let found = self.build_id.as_deref().unwrap_or_default();
            if found != expected {
                return Err(Rejection::BuildId {
                    expected: hex(expected),
                    found: hex(found),
                });
            }
            return Ok(());
        }
        let mut outside = 0;
        let mut first = None;
        for p in probes {
            if self.code_at(p.lookup_address()).is_none() {
                outside += 1;
                first.get_or_insert(p.address);
            }
        }
        if let Some(first) = first {
            return Err(Rejection::OutsideCode {
                outside,
                of: probes.len(),
                first,
            });
        }
        if self.x86_64 {
            let returns: Vec<u64> = probes
                .iter()
                .filter(|p| p.is_return)
                .map(|p| p.address)
                .collect();
            let failed = returns.iter().filter(|&&a| !self.follows_call(a)).count();
            if failed > 0
                && (returns.len() - failed) as f64 / (returns.len() as f64) < CALL_SITES_NEEDED
            {
                return Err(Rejection::NotCallSites {
                    failed,
                    of: returns.len(),
                });
            }
        }
        Ok(())
    }

    /// The up to 8 bytes before `address` in the file.
    fn bytes_before(&self, address: u64) -> Option<Vec<u8>> {
        let code = self.code_at(address.checked_sub(1)?)?;
        let end = code.offset?.checked_add(address - code.start)?;
        let start = end.saturating_sub(8).max(code.offset?);
        self.store.read_at(start, end - start)
    }

    /// Whether an x86-64 call instruction ends at `address`: `call rel32` (`E8`), or `call r/m`
    /// (`FF /2`, any ModRM form, with a REX or `notrack` prefix).
    fn follows_call(&self, address: u64) -> bool {
        let Some(before) = self.bytes_before(address) else {
            return false;
        };
        let n = before.len();
        if n >= 5 && before[n - 5] == 0xE8 {
            return true;
        }
        // `FF modrm [sib] [disp]`: the instruction's length from its ModRM byte.
        (2..=7).any(|len| {
            if n < len {
                return false;
            }
            let at = n - len;
            if before[at] != 0xFF {
                return false;
            }
            let modrm = before[at + 1];
            if (modrm >> 3) & 7 != 2 {
                return false;
            }
            let (md, rm) = (modrm >> 6, modrm & 7);
            let sib = md != 3 && rm == 4;
            let sib_base5 = sib && n > at + 2 && before[at + 2] & 7 == 5;
            let disp = match md {
                0 if rm == 5 || sib_base5 => 4,
                0 | 3 => 0,
                1 => 1,
                _ => 4,
            };
            2 + usize::from(sib) + disp == len
        })
    }

    /// The source frames of `probe`, outermost first (the function that was called, then the
    /// functions inlined into it down to the innermost); empty when nothing is known. Each
    /// address is looked up once.
    pub fn lookup(&mut self, probe: Probe) -> Arc<[SourceFrame]> {
        if let Some(found) = self.lookups.get(&probe) {
            return found.clone();
        }
        // A dependency's panic on crafted DWARF leaves the address unnamed rather than crash.
        let address = probe.lookup_address();
        let found: Arc<[SourceFrame]> =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.find(address)))
                .unwrap_or_default()
                .into();
        self.lookups.insert(probe, found.clone());
        found
    }

    fn find(&self, address: u64) -> Vec<SourceFrame> {
        let mut frames = Vec::new();
        if let Some(dwarf) = &self.dwarf
            && let Ok(mut iter) = dwarf.find_frames(address).skip_all_loads()
        {
            while let Ok(Some(frame)) = iter.next() {
                let function = frame
                    .function
                    .as_ref()
                    .and_then(|f| f.raw_name().ok())
                    .map(|n| demangle(n.as_ref()).into_owned());
                let (file, line) = frame
                    .location
                    .map_or((None, None), |l| (l.file.map(str::to_owned), l.line));
                frames.push(SourceFrame {
                    function,
                    file,
                    line,
                });
            }
        }
        frames.reverse();
        // DWARF that knows the line but not the function (or nothing): the symbol table.
        if frames.first().is_none_or(|f| f.function.is_none())
            && let Some(name) = self.symbol(address)
        {
            match frames.first_mut() {
                Some(f) => f.function = Some(demangle(name).into_owned()),
                None => frames.push(SourceFrame {
                    function: Some(demangle(name).into_owned()),
                    ..SourceFrame::default()
                }),
            }
        }
        frames
    }

    /// The symbol table's function at `address`.
    fn symbol(&self, address: u64) -> Option<&str> {
        self.function_at(address).map(|(_, name)| name)
    }

    /// The symbol table's function at `address` (DWARF is not consulted): its start address and
    /// its name as the table spells it (not demangled). Of aliases at one address, the longest,
    /// then the first of the static and then the dynamic table, is kept.
    pub fn function_at(&self, address: u64) -> Option<(u64, &str)> {
        let at = self.symbols.partition_point(|s| s.0 <= address);
        let (start, end, name) = self.symbols.get(at.checked_sub(1)?)?;
        (address < *end).then_some((*start, name.as_str()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Finds, checks and reads binaries, each once, and looks addresses up in them, each once.
#[derive(Debug, Default)]
pub struct Symbolizer {
    search: SearchPath,
    binaries: Vec<Binary>,
    /// Every path tried, by what it gave.
    opened: HashMap<PathBuf, Result<usize, Rejection>>,
    /// The search folders with their symbolic links resolved (`None`: it does not exist).
    roots: HashMap<PathBuf, Option<PathBuf>>,
}

impl Symbolizer {
    /// A symbolizer searching `search` before the recorded paths.
    pub fn new(search: SearchPath) -> Symbolizer {
        Symbolizer {
            search,
            ..Symbolizer::default()
        }
    }

    /// The search path.
    pub fn search_path(&self) -> &SearchPath {
        &self.search
    }

    /// How many binaries were read.
    pub fn binaries_read(&self) -> usize {
        self.binaries.len()
    }

    /// The binary `id`.
    pub fn binary(&self, id: BinaryId) -> &Binary {
        &self.binaries[id.0]
    }

    /// The first candidate for the module recorded as `recorded` that `probes` (and the
    /// recorded `build_id`, if any) fit. Each file is read at most once per symbolizer; the
    /// check runs for every call (it is linear in `probes`).
    pub fn resolve(
        &mut self,
        recorded: &str,
        probes: &[Probe],
        build_id: Option<&[u8]>,
    ) -> Resolution {
        self.resolve_with(recorded, &[], probes, build_id)
    }

    /// [`resolve`](Self::resolve), searching the folders `more_dirs` after the search path's
    /// (the folder of the input that names the module, for one).
    ///
    /// Binaries are read only under these folders (the search path's and `more_dirs`): the
    /// recorded path itself is a candidate only when it lies under one of them, a candidate
    /// whose symbolic links lead out of them is refused, and so is anything under `/proc`,
    /// `/sys` or `/dev`.
    pub fn resolve_with(
        &mut self,
        recorded: &str,
        more_dirs: &[PathBuf],
        probes: &[Probe],
        build_id: Option<&[u8]>,
    ) -> Resolution {
        self.resolve_within(recorded, more_dirs, &[], probes, build_id)
    }

    /// [`resolve_with`](Self::resolve_with), the recorded path also read where it lies under
    /// one of `more_roots` (folders not searched by file name: where the input says its
    /// program ran, for one).
    pub fn resolve_within(
        &mut self,
        recorded: &str,
        more_dirs: &[PathBuf],
        more_roots: &[PathBuf],
        probes: &[Probe],
        build_id: Option<&[u8]>,
    ) -> Resolution {
        let search = if more_dirs.is_empty() {
            self.search.clone()
        } else {
            self.search.clone().with(more_dirs.iter().cloned())
        };
        let mut roots = search.dirs().to_vec();
        roots.extend(more_roots.iter().cloned());
        let mut tried = Vec::new();
        let mut outside = Vec::new();
        let mut rejected = Vec::new();
        for path in search.candidates(Path::new(recorded)) {
            if !roots.iter().any(|r| path.starts_with(r)) {
                outside.push(path);
                continue;
            }
            tried.push(path.clone());
            let index = match self.opened.get(&path) {
                Some(Ok(i)) => *i,
                Some(Err(Rejection::Unreadable(e))) if e == NOT_FOUND => continue,
                Some(Err(e)) => {
                    rejected.push((path.clone(), e.clone()));
                    continue;
                }
                None => {
                    let opened = self.open_under(&path, &roots);
                    match opened {
                        Ok(b) => {
                            self.binaries.push(b);
                            let i = self.binaries.len() - 1;
                            self.opened.insert(path.clone(), Ok(i));
                            i
                        }
                        Err(e) => {
                            let missing = matches!(&e, Rejection::Unreadable(m) if m == NOT_FOUND);
                            self.opened.insert(path.clone(), Err(e.clone()));
                            if !missing {
                                rejected.push((path.clone(), e));
                            }
                            continue;
                        }
                    }
                }
            };
            match self.binaries[index].check(probes, build_id) {
                Ok(()) => {
                    let unverified = build_id.is_none().then(|| {
                        format!(
                            "no build id was recorded to compare, and the {} recorded addresses \
                             that fit its code would fit another build of the same shape",
                            probes.len()
                        )
                    });
                    return Resolution::Resolved {
                        binary: BinaryId(index),
                        path: path.clone(),
                        unverified,
                    };
                }
                Err(e) => rejected.push((path.clone(), e)),
            }
        }
        if rejected.is_empty() {
            Resolution::NotFound { tried, outside }
        } else {
            Resolution::Rejected {
                candidates: rejected,
            }
        }
    }

    /// Opens `path` (which lies under one of `roots`) if, its symbolic links resolved, it still
    /// does and is no system file.
    fn open_under(&mut self, path: &Path, roots: &[PathBuf]) -> Result<Binary, Rejection> {
        let resolved = match std::fs::canonicalize(path) {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Rejection::Unreadable(NOT_FOUND.to_owned()));
            }
            Err(e) => return Err(Rejection::Unreadable(e.to_string())),
        };
        if ["/proc", "/sys", "/dev"]
            .iter()
            .any(|s| resolved.starts_with(s))
        {
            return Err(Rejection::SystemPath { resolved });
        }
        let inside = roots.iter().any(|root| {
            let canonical = self
                .roots
                .entry(root.clone())
                .or_insert_with(|| std::fs::canonicalize(root).ok());
            canonical.as_ref().is_some_and(|c| resolved.starts_with(c))
        });
        if !inside {
            return Err(Rejection::Escapes { resolved });
        }
        Binary::open(&resolved).map(|mut b| {
            b.path = path.to_owned();
            b
        })
    }

    /// The source frames of `probe` in `binary` ([`Binary::lookup`]).
    pub fn lookup(&mut self, binary: BinaryId, probe: Probe) -> Arc<[SourceFrame]> {
        self.binaries[binary.0].lookup(probe)
    }
}

const NOT_FOUND: &str = "no such file";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_try_the_search_path_first() {
        let search = SearchPath::new([PathBuf::from("/a"), PathBuf::from("/b")]);
        assert_eq!(
            search.candidates(Path::new("/usr/lib/libx.so")),
            [
                "/a/libx.so",
                "/b/libx.so",
                "/a/usr/lib/libx.so",
                "/b/usr/lib/libx.so",
                "/usr/lib/libx.so"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn mangled_names_are_demangled() {
        assert_eq!(demangle("_ZN2ns3fooEi"), "ns::foo(int)");
        assert_eq!(demangle("main"), "main");
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
    }
}
