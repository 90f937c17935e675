//! Function, file and line for the addresses of a measurement, from the binaries its load map
//! names (feature `symbolize`, through `profcodec-symbolize`).
//!
//! hpcrun records each CCT node's address as an offset in its load module, in the module's own
//! address space (`hpcrun_normalize_ip`: the load offset removed), so that the offset is what
//! `addr2line -e MODULE` takes. A node with children is a calling frame: its address is a return
//! address, looked up one byte before (at the call), as hpcprof and pprof do; the frame keeps the
//! recorded address.
//!
//! Binaries are found through a search path ([`SearchPath`]: `--binary-path`,
//! `PROFCODEC_BINARY_PATH`) and, for a measurement folder, in the folder itself and its `vdso/`
//! and `gpubins/` subfolders (where hpcrun copies the vDSO and GPU binaries it saw); the load
//! map's path is read only where it lies under one of these folders, or under the folder that
//! holds a measurement folder hpcrun named (`hpctoolkit-<program>-measurements`: where the
//! program ran) (a path inside a received
//! measurement, such as `/etc/shadow`, is never opened otherwise). hpcrun records no build id
//! or size for a module: a found binary must fit the measurement's own addresses
//! ([`profcodec_symbolize::Binary::check`]), a binary that does not is never used, and one
//! that does is reported as unverified ([`ModuleReport::unverified`]). Legacy files (02.00l, 01.98b) store absolute addresses and are not
//! symbolized. [`ModuleReport`]s say what became of each module.
//!
//! Structure files: where a measurement folder has a `structs/` folder (`hpcstruct
//! MEASUREMENTS` writes one `.hpcstruct` file per binary there), each of its files is read once,
//! and a module that one of them describes (its `<LM n=...>` is the load map's path, or the path
//! the binary was found at) takes procedures, loops, inlined calls and lines from it, as hpcprof
//! does ([`crate::structs`]); the binary's DWARF only names the addresses the structure leaves
//! out. An address then becomes the frames an HPCToolkit database shows for it: its procedure
//! (a [`FrameKind::Function`] frame with the procedure's file, line and entry address), each
//! loop around it (a [`FrameKind::Loop`] frame with its file, line and entry address), each
//! inlined call (a [`FrameKind::Line`] frame for the call site, then a [`FrameKind::Inlined`]
//! frame for the callee), and its statement (a [`FrameKind::Line`] frame); loops and lines carry
//! the name of the function they lie in. As in hpcprof's databases, the instruction itself is
//! no frame: the addresses of one statement share its node. A structure file is trusted as
//! hpcprof trusts it, except that at least 90% of the module's recorded addresses must lie in
//! its statements: a structure of another build is not used, and the report says why.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use profcodec_profile::{Frame, FrameId, FrameKind, ModelError, ProfileBuilder, StringId};
use profcodec_symbolize::{BinaryId, Probe, Symbolizer};
pub use profcodec_symbolize::{Resolution, SearchPath};

use crate::CctIndex;
use crate::model::Epoch;
use crate::structs::{ModuleStructure, Scope, ScopeKind, StructError};

/// The share of a module's recorded addresses a structure file must hold in its statements.
const STRUCTURE_COVERAGE: f64 = 0.9;

/// What became of one load module over every file converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleReport {
    /// The module's path as the load map records it.
    pub module: String,
    /// How many files (threads) referenced it.
    pub files: usize,
    /// In how many of them it was resolved.
    pub resolved: usize,
    /// The binary used (the last one).
    pub binary: Option<PathBuf>,
    /// Why it was not resolved, the first time it was not.
    pub unresolved: Option<Resolution>,
    /// The structure file (`structs/*.hpcstruct`) that named its addresses (the last one).
    pub structure: Option<PathBuf>,
    /// Why a structure file that could be its own was not used, the first time: a file of its
    /// name (hpcstruct's `<binary file name>.hpcstruct`) that could not be read, or a structure
    /// whose statements do not hold the recorded addresses.
    pub structure_error: Option<String>,
    /// Why the binary used is not proven to be the one that ran (hpcrun records no build id:
    /// the recorded addresses fit it, as they would fit another build of the same shape), the
    /// first time; a front end says so once ("names from an unverified binary").
    pub unverified: Option<String>,
    /// Why the binary's DWARF was not used (a compressed section past its bounds, entries
    /// nested too deep), the first time: its names then come from its symbol table.
    pub debug_info_refused: Option<String>,
}

impl ModuleReport {
    /// Whether some of its files could not be symbolized.
    pub fn is_unresolved(&self) -> bool {
        self.resolved < self.files
    }
}

/// The symbolization state a [`ProfileConverter`](crate::ProfileConverter) keeps across files.
#[derive(Debug)]
pub(crate) struct Symbols {
    symbolizer: Symbolizer,
    /// Folders searched after the search path (a measurement folder, its `vdso/`, `gpubins/`).
    first: Vec<PathBuf>,
    /// Folders where a recorded path is read, not searched by file name (the folder a
    /// measurement folder named by hpcrun lies in: where the program ran).
    beside: Vec<PathBuf>,
    reports: BTreeMap<String, ModuleReport>,
    /// The frames of each looked-up address, by where they came from, module string and probe.
    frames: HashMap<(Origin, StringId, Probe), Rc<[FrameId]>>,
    structures: Structures,
}

/// Where the frames of an address come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Origin {
    Binary(BinaryId),
    /// An index into [`Structures::modules`].
    Structure(usize),
}

/// The modules of one epoch, resolved: by load module id, the binary and the structure found.
pub(crate) struct Resolved {
    by_id: HashMap<u16, Sources>,
    has_children: Vec<bool>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Sources {
    binary: Option<BinaryId>,
    structure: Option<usize>,
}

/// The structure files of the measurement folders looked in, each read once.
#[derive(Debug, Default)]
struct Structures {
    /// The `structs/` folders read.
    read: Vec<PathBuf>,
    /// Each load module's structure and its file; the first file describing a module wins.
    modules: Vec<(PathBuf, ModuleStructure)>,
    by_path: HashMap<String, usize>,
    /// The files that could not be read.
    errors: Vec<(PathBuf, StructError)>,
}

impl Structures {
    /// Reads every `.hpcstruct` file of `folder/structs`, in file name order.
    fn read_folder(&mut self, folder: &Path) {
        let dir = folder.join("structs");
        if self.read.contains(&dir) {
            return;
        }
        self.read.push(dir.clone());
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "hpcstruct") && p.is_file())
            .collect();
        files.sort();
        for file in files {
            match crate::structs::read(&file) {
                Ok(modules) => {
                    for m in modules {
                        if !self.by_path.contains_key(m.path()) {
                            self.by_path.insert(m.path().to_owned(), self.modules.len());
                            self.modules.push((file.clone(), m));
                        }
                    }
                }
                Err(e) => self.errors.push((file, e)),
            }
        }
    }

    /// The structure of the module recorded as `recorded` (found at `found`).
    fn find(&self, recorded: &str, found: Option<&Path>) -> Option<usize> {
        self.by_path.get(recorded).copied().or_else(|| {
            let found = found?.to_str()?;
            self.by_path.get(found).copied()
        })
    }

    /// Why a structure file named after the module recorded as `recorded` could not be read.
    fn error_for(&self, recorded: &str) -> Option<String> {
        let name = Path::new(recorded).file_name()?.to_str()?;
        let expected = format!("{name}.hpcstruct");
        self.errors
            .iter()
            .find(|(file, _)| file.file_name().is_some_and(|f| *f == *expected))
            .map(|(file, e)| format!("{}: {e}", file.display()))
    }
}

impl Symbols {
    pub(crate) fn new(search: SearchPath) -> Symbols {
        Symbols {
            symbolizer: Symbolizer::new(search),
            first: Vec::new(),
            beside: Vec::new(),
            reports: BTreeMap::new(),
            frames: HashMap::new(),
            structures: Structures::default(),
        }
    }

    /// Looks in `folder` (a measurement folder) and its `vdso/` and `gpubins/` too, and reads
    /// the structure files of its `structs/`. A folder named as hpcrun names its output
    /// (`hpctoolkit-<program>-measurements[-<job>]`) lies where the program ran: a recorded
    /// path under its parent is read too (not searched there by file name).
    pub(crate) fn add_folder(&mut self, folder: &Path) {
        self.structures.read_folder(folder);
        let named_by_hpcrun = folder
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("hpctoolkit-") && n.contains("-measurements"));
        if let Some(parent) = folder
            .parent()
            .filter(|p| named_by_hpcrun && !p.as_os_str().is_empty())
            && !self.beside.iter().any(|b| b == parent)
        {
            self.beside.push(parent.to_owned());
        }
        for dir in [
            folder.to_owned(),
            folder.join("vdso"),
            folder.join("gpubins"),
        ] {
            if !self.first.contains(&dir) {
                self.first.push(dir);
            }
        }
    }

    /// Forgets the frames made so far: they name frames of a profile builder that is done.
    pub(crate) fn forget_frames(&mut self) {
        self.frames.clear();
    }

    pub(crate) fn reports(&self) -> impl Iterator<Item = &ModuleReport> {
        self.reports.values()
    }

    pub(crate) fn binaries_read(&self) -> usize {
        self.symbolizer.binaries_read()
    }

    /// The structure files that could not be read, and why.
    pub(crate) fn structure_errors(&self) -> impl Iterator<Item = (&Path, &StructError)> {
        self.structures.errors.iter().map(|(f, e)| (f.as_path(), e))
    }

    /// Finds and checks the binary of every module epoch `e`'s nodes refer to (`skip`: the load
    /// module ids that name no binary).
    pub(crate) fn resolve(
        &mut self,
        e: &Epoch,
        index: &CctIndex,
        skip: impl Fn(u16) -> bool,
    ) -> Resolved {
        let mut has_children = vec![false; e.cct.len()];
        for i in 0..e.cct.len() {
            if let Some(p) = index.parent(i) {
                has_children[p] = true;
            }
        }
        let mut probes: BTreeMap<u16, Vec<Probe>> = BTreeMap::new();
        for (i, node) in e.cct.iter().enumerate() {
            if skip(node.lm_id) {
                continue;
            }
            probes
                .entry(node.lm_id)
                .or_default()
                .push(probe(node.ip, has_children[i]));
        }
        let modules = e.load_module_index();
        let mut by_id = HashMap::new();
        for (lm, mut probes) in probes {
            let Some(module) = modules.get(&lm) else {
                continue;
            };
            probes.sort_unstable_by_key(|p| (p.address, p.is_return));
            probes.dedup();
            let name = module.name.to_string_lossy().into_owned();
            let resolution =
                self.symbolizer
                    .resolve_within(&name, &self.first, &self.beside, &probes, None);
            let found = match &resolution {
                Resolution::Resolved { path, .. } => Some(path.as_path()),
                _ => None,
            };
            let mut structure = self.structures.find(&name, found);
            let mut structure_error = self.structures.error_for(&name);
            if let Some(i) = structure {
                let (file, m) = &self.structures.modules[i];
                let outside = probes
                    .iter()
                    .filter(|p| !m.contains(p.lookup_address()))
                    .count();
                if ((probes.len() - outside) as f64) < probes.len() as f64 * STRUCTURE_COVERAGE {
                    structure = None;
                    structure_error.get_or_insert_with(|| {
                        format!(
                            "{}: {outside} of {} recorded addresses lie in no statement of its \
                             structure of {}: not the structure of the binary that ran",
                            file.display(),
                            probes.len(),
                            m.path()
                        )
                    });
                }
            }
            let report = self
                .reports
                .entry(name.clone())
                .or_insert_with(|| ModuleReport {
                    module: name,
                    files: 0,
                    resolved: 0,
                    binary: None,
                    unresolved: None,
                    structure: None,
                    structure_error: None,
                    unverified: None,
                    debug_info_refused: None,
                });
            report.files += 1;
            if let Some(e) = structure_error {
                report.structure_error.get_or_insert(e);
            }
            let mut sources = Sources {
                binary: None,
                structure,
            };
            if let Some(i) = structure {
                report.structure = Some(self.structures.modules[i].0.clone());
            }
            match resolution {
                Resolution::Resolved {
                    binary,
                    path,
                    unverified,
                } => {
                    if let Some(why) = unverified {
                        report
                            .unverified
                            .get_or_insert_with(|| format!("{}: {why}", path.display()));
                    }
                    if let Some(why) = self.symbolizer.binary(binary).debug_info_refused() {
                        report
                            .debug_info_refused
                            .get_or_insert_with(|| format!("{}: {why}", path.display()));
                    }
                    report.binary = Some(path);
                    sources.binary = Some(binary);
                }
                // A structure names the addresses without the binary.
                _ if structure.is_some() => {}
                other => {
                    report.unresolved.get_or_insert(other);
                }
            }
            if sources.binary.is_some() || sources.structure.is_some() {
                report.resolved += 1;
                by_id.insert(lm, sources);
            }
        }
        Resolved {
            by_id,
            has_children,
        }
    }

    /// The frames of node `i`, outermost first: from a structure file, the procedure, loops,
    /// inlined calls and statement line (see the module docs); else from the binary, the
    /// function, then what was inlined into it. `None` when its module was not resolved or the
    /// address is in no known function.
    pub(crate) fn frames(
        &mut self,
        b: &mut ProfileBuilder,
        resolved: &Resolved,
        i: usize,
        lm: u16,
        ip: u64,
        module: Option<StringId>,
    ) -> Result<Option<Rc<[FrameId]>>, ModelError> {
        let (Some(&sources), Some(module)) = (resolved.by_id.get(&lm), module) else {
            return Ok(None);
        };
        let probe = probe(ip, resolved.has_children[i]);
        // The structure first; the binary for what it leaves out.
        if let Some(s) = sources.structure {
            let key = (Origin::Structure(s), module, probe);
            let frames = match self.frames.get(&key) {
                Some(frames) => frames.clone(),
                None => {
                    let scopes = self.structures.modules[s]
                        .1
                        .lookup(probe.lookup_address())
                        .unwrap_or_default();
                    let frames: Rc<[FrameId]> = structure_frames(b, module, &scopes)?.into();
                    self.frames.insert(key, frames.clone());
                    frames
                }
            };
            if !frames.is_empty() {
                return Ok(Some(frames));
            }
        }
        let Some(binary) = sources.binary else {
            return Ok(None);
        };
        let key = (Origin::Binary(binary), module, probe);
        if let Some(frames) = self.frames.get(&key) {
            return Ok((!frames.is_empty()).then(|| frames.clone()));
        }
        let source = self.symbolizer.lookup(binary, probe);
        let mut frames = Vec::with_capacity(source.len());
        // An address with no function name (a line without a function) keeps its address form.
        if source.iter().all(|f| f.function.is_some()) {
            for (depth, f) in source.iter().enumerate() {
                let kind = if depth == 0 {
                    FrameKind::Function
                } else {
                    FrameKind::Inlined
                };
                let mut frame = Frame::new(kind).with_module(module).with_address(ip);
                if let Some(name) = &f.function {
                    frame = frame.with_function(b.intern_string(name)?);
                }
                if let Some(file) = &f.file {
                    frame = frame.with_file(b.intern_string(file)?);
                }
                if let Some(line) = f.line {
                    frame = frame.with_line(line);
                }
                frames.push(b.intern_frame(frame)?);
            }
        }
        let frames: Rc<[FrameId]> = frames.into();
        self.frames.insert(key, frames.clone());
        Ok((!frames.is_empty()).then_some(frames))
    }
}

/// The frames of an address's `scopes` in module `module`, outermost first, as an HPCToolkit
/// database has them (see the module docs).
fn structure_frames(
    b: &mut ProfileBuilder,
    module: StringId,
    scopes: &[Scope<'_>],
) -> Result<Vec<FrameId>, ModelError> {
    let mut frames = Vec::with_capacity(scopes.len());
    // The function the scope lies in: a procedure or an inlined callee.
    let mut owner = None;
    for scope in scopes {
        let name = match scope.name.filter(|n| !n.is_empty()) {
            Some(n) => Some(b.intern_string(n)?),
            None => None,
        };
        let mut frame = match scope.kind {
            ScopeKind::Procedure | ScopeKind::Inlined => {
                owner = name;
                let kind = if scope.kind == ScopeKind::Procedure {
                    FrameKind::Function
                } else {
                    FrameKind::Inlined
                };
                let mut frame = Frame::new(kind).with_module(module);
                frame.function = name;
                frame.address = scope.entry;
                frame
            }
            ScopeKind::Loop => {
                let mut frame = Frame::new(FrameKind::Loop).with_module(module);
                frame.function = owner;
                frame.address = scope.entry;
                frame
            }
            _ => {
                let mut frame = Frame::new(FrameKind::Line);
                frame.function = owner;
                frame
            }
        };
        if let Some(file) = scope.file {
            frame.file = Some(b.intern_string(file)?);
        }
        frame.line = scope.line;
        frames.push(b.intern_frame(frame)?);
    }
    Ok(frames)
}

fn probe(ip: u64, calls: bool) -> Probe {
    if calls {
        Probe::ret(ip)
    } else {
        Probe::leaf(ip)
    }
}
