//! Function, file and line for the addresses of a measurement, from the binaries its load map
//! names (feature `symbolize`, through `profcodec-symbolize`).
//!
//! hpcrun records each CCT node's address as an offset in its load module, in the module's own
//! address space (`hpcrun_normalize_ip`: the load offset removed), so that the offset is what
//! `addr2line -e MODULE` takes. A node with children is a calling frame: its address is a return
//! address, looked up one byte before (at the call), as hpcprof and pprof do; the frame keeps the
//! recorded address.
//!
//! Binaries are found by the load map's path or through a search path
//! ([`SearchPath`]: `--binary-path`, `PROFCODEC_BINARY_PATH`), and for a measurement folder in
//! the folder itself and its `vdso/` and `gpubins/` subfolders (where hpcrun copies the vDSO and
//! GPU binaries it saw). hpcrun records no build id or size for a module: a found binary must
//! fit the measurement's own addresses ([`profcodec_symbolize::Binary::check`]), and a binary that
//! does not is never used. Legacy files (02.00l, 01.98b) store absolute addresses and are not
//! symbolized. [`ModuleReport`]s say what became of each module.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::rc::Rc;

use profcodec_profile::{Frame, FrameId, FrameKind, ModelError, ProfileBuilder, StringId};
use profcodec_symbolize::{BinaryId, Probe, Symbolizer};
pub use profcodec_symbolize::{Resolution, SearchPath};

use crate::CctIndex;
use crate::model::Epoch;

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
    reports: BTreeMap<String, ModuleReport>,
    /// The frames of each looked-up address, by binary, module string and probe.
    frames: HashMap<(BinaryId, StringId, Probe), Rc<[FrameId]>>,
}

/// The modules of one epoch, resolved: by load module id, the binary if one was found.
pub(crate) struct Resolved {
    by_id: HashMap<u16, BinaryId>,
    has_children: Vec<bool>,
}

impl Symbols {
    pub(crate) fn new(search: SearchPath) -> Symbols {
        Symbols {
            symbolizer: Symbolizer::new(search),
            first: Vec::new(),
            reports: BTreeMap::new(),
            frames: HashMap::new(),
        }
    }

    /// Looks in `folder` (a measurement folder) and its `vdso/` and `gpubins/` too.
    pub(crate) fn add_folder(&mut self, folder: &std::path::Path) {
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

    pub(crate) fn reports(&self) -> impl Iterator<Item = &ModuleReport> {
        self.reports.values()
    }

    pub(crate) fn binaries_read(&self) -> usize {
        self.symbolizer.binaries_read()
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
            let resolution = self
                .symbolizer
                .resolve_with(&name, &self.first, &probes, None);
            let report = self
                .reports
                .entry(name.clone())
                .or_insert_with(|| ModuleReport {
                    module: name,
                    files: 0,
                    resolved: 0,
                    binary: None,
                    unresolved: None,
                });
            report.files += 1;
            match resolution {
                Resolution::Resolved { binary, path } => {
                    report.resolved += 1;
                    report.binary = Some(path);
                    by_id.insert(lm, binary);
                }
                other => {
                    report.unresolved.get_or_insert(other);
                }
            }
        }
        Resolved {
            by_id,
            has_children,
        }
    }

    /// The frames of node `i` (outermost first: the function, then what was inlined into it),
    /// or `None` when its module was not resolved or the address is in no known function.
    pub(crate) fn frames(
        &mut self,
        b: &mut ProfileBuilder,
        resolved: &Resolved,
        i: usize,
        lm: u16,
        ip: u64,
        module: Option<StringId>,
    ) -> Result<Option<Rc<[FrameId]>>, ModelError> {
        let (Some(&binary), Some(module)) = (resolved.by_id.get(&lm), module) else {
            return Ok(None);
        };
        let probe = probe(ip, resolved.has_children[i]);
        if let Some(frames) = self.frames.get(&(binary, module, probe)) {
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
        self.frames.insert((binary, module, probe), frames.clone());
        Ok((!frames.is_empty()).then_some(frames))
    }
}

fn probe(ip: u64, calls: bool) -> Probe {
    if calls {
        Probe::ret(ip)
    } else {
        Probe::leaf(ip)
    }
}
