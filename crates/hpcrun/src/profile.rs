//! hpcrun measurements in the format-neutral profile model of `profcodec-profile`.
//!
//! # What the model holds
//!
//! - **Nodes**: every CCT node reachable from a root, parents before children, with one frame
//!   each. An hpcrun node is one activation of some procedure, known by an address inside it
//!   (the return address for a caller, the sampled address for a leaf): its frame is a
//!   [`FrameKind::Function`] with the load module's path as `module` and the offset in that
//!   module as `address` (02.00b and later store the offset; 02.00l and 01.98b store an absolute
//!   address, resolved to the load module mapped closest below it). hpcrun files carry no
//!   procedure names: hpcprof names procedures from the binaries' symbols and structure, which
//!   the measurement does not contain, so every such frame is named by its module and address.
//! - **Placeholders** (load module 0, HPCToolkit's `placeholders.h`): the primary root and the
//!   "no activity" node below it, which hpcprof maps to its global context, are left out and
//!   their children become roots (unless they hold values of their own); the thread fences are named as hpcprof's entry points (`main thread`,
//!   `application thread`), the others by their `placeholders.c` names (`<gpu kernel>`,
//!   `<omp idle>`...), an unknown code by its eight characters.
//! - **Value types**: every metric whose values the file stores (a metric with a formula is
//!   derived by hpcprof and stores none), by name, with a unit read from the name or
//!   description: `(sec)` / `seconds` -> seconds, `(usec)` / `(us)` -> microseconds, `(ns)` ->
//!   nanoseconds, `(B)` / `bytes` -> bytes, anything else a count. Values are the stored values
//!   times the metric's period, as hpcprof scales them (`Hpcrun4::realread`), so a metric
//!   counting samples of every 10^8th event becomes an event count. hpcrun measures self
//!   values only ([`Measured::SelfOnly`]); the queries compute inclusive values once,
//!   bottom-up. A `move2proc` metric's values stay at their node (hpcprof moves them to the
//!   calling context; totals are the same).
//! - **Contexts**: one per profile file (thread or GPU stream), its identifier tuple from the
//!   04.00 id tuple (kinds named as in `id-tuple.h`, logical indexes), else from the `mpi-rank`
//!   and `thread-id` header pairs, else from the file name. Files with the same tuple share a
//!   context. Every epoch of a file adds to the same context.
//!
//! Traces are not converted: a trace is a timeline of sampled contexts without durations.
//!
//! # Cost
//!
//! Linear in the input: one pass over each epoch's CCT and its values ([`NodeValues`]), in file
//! order when every parent comes before its children (hpcrun writes its CCT in preorder), else
//! in preorder through [`CctIndex`]; load modules are indexed once per epoch; frames, nodes and
//! strings are interned through the builder's hash tables, a node's values handed over at once.
//! A folder is converted one file at a time, so memory is the model plus the largest file.

use std::collections::HashMap;

use profcodec_profile::{
    Context, ContextId, Frame, FrameId, FrameKind, IdKind, Measured, ModelError, NodeId, Profile,
    ProfileBuilder, Quantity, StringId, Unit, ValueTypeId,
};

use crate::folder::{FolderError, MeasurementFolder, ThreadFiles};
use crate::model::{Epoch, Measurement, MetricDesc};
use crate::{CctIndex, NodeValues};

/// Why a measurement could not be converted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// A file of a measurement folder could not be read or decoded.
    #[error(transparent)]
    Folder(#[from] FolderError),
    /// The model refused an entry (a table over `u32::MAX` entries).
    #[error("the profile model is full: {0}")]
    Model(#[from] ModelError),
}

/// The load module id hpcrun gives its placeholders (`HPCRUN_PLACEHOLDER_LM`).
const PLACEHOLDER_LM: u16 = 0;
/// The load module ids hpcrun 2022+ uses for the nodes of outlined GPU range trees.
const GPU_CONTEXT_NODE: u16 = 65531;
const GPU_RANGE_NODE: u16 = 65532;
const GPU_ROOT_NODE: u16 = 65533;

const fn placeholder(code: &[u8; 8]) -> u64 {
    u64::from_be_bytes(*code)
}

const ROOT_PRIMARY: u64 = placeholder(b"^Primary");
const NO_ACTIVITY: u64 = placeholder(b"NoActvty");

/// The names of hpcrun's placeholders (`placeholders.h` codes, `placeholders.c` names; the
/// fences as the entry points hpcprof makes of them).
const PLACEHOLDERS: &[(&[u8; 8], &str)] = &[
    (b"*Unnorm ", "<unknown>"),
    (b"^Primary", "<program root>"),
    (b"^Partial", "<unknown>"),
    (b"| Main  ", "main thread"),
    (b"| Thread", "application thread"),
    (b"NoActvty", "<no activity>"),
    (b"OMP Idle", "<omp idle>"),
    (b"OMPOvrHd", "<omp overhead>"),
    (b"OMPBarrW", "<omp barrier wait>"),
    (b"OMPTaskW", "<omp task wait>"),
    (b"OMPMtexW", "<omp mutex wait>"),
    (b"OMTAlloc", "<omp tgt alloc>"),
    (b"OMTDelte", "<omp tgt delete>"),
    (b"OMTCpIn ", "<omp tgt copyin>"),
    (b"OMTCpOut", "<omp tgt copyout>"),
    (b"OMTKernl", "<omp tgt kernel>"),
    (b"OMT None", "<omp tgt none>"),
    (b"OMPUresv", "<omp region unresolved>"),
    (b"GPUCp?2?", "<gpu copy>"),
    (b"GPUCpH2D", "<gpu copyin>"),
    (b"GPUCpD2H", "<gpu copyout>"),
    (b"GPUAlloc", "<gpu alloc>"),
    (b"GPUDelte", "<gpu delete>"),
    (b"GPUKernl", "<gpu kernel>"),
    (b"GPUMemst", "<gpu memset>"),
    (b"GPU Sync", "<gpu sync>"),
    (b"GPUTrace", "<gpu kernel>"),
];

/// The display name of placeholder `code`: its `placeholders.c` name, or its eight characters.
fn placeholder_name(code: u64) -> String {
    if let Some((_, name)) = PLACEHOLDERS.iter().find(|(c, _)| placeholder(c) == code) {
        return (*name).to_owned();
    }
    let text: String = code
        .to_be_bytes()
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '?'
            }
        })
        .collect();
    format!("<placeholder {}>", text.trim_end())
}

/// The unit of a metric, from the unit hpcrun puts in its name or description.
fn metric_unit(desc: &MetricDesc) -> Unit {
    unit_in_parentheses(&desc.name.to_string_lossy())
        .or_else(|| unit_in_parentheses(&desc.description.to_string_lossy()))
        .unwrap_or(Unit::Count)
}

/// The unit a text ends with, in parentheses: `(sec)`, `(us)`, `(ns)`, `(B)` and their spellings.
fn unit_in_parentheses(s: &str) -> Option<Unit> {
    let s = s.to_ascii_lowercase();
    let unit = s
        .rsplit_once('(')
        .and_then(|(_, u)| u.strip_suffix(')'))
        .unwrap_or("");
    match unit {
        "sec" | "s" | "seconds" => Some(Unit::Seconds),
        "usec" | "us" | "microseconds" => Some(Unit::Microseconds),
        "nsec" | "ns" | "nanoseconds" => Some(Unit::Nanoseconds),
        "b" | "bytes" => Some(Unit::Bytes),
        _ => None,
    }
}

/// The name a metric's value type has in the model: the metric's name without the unit suffix
/// hpcrun writes (`"CPUTIME (sec)"` is `"CPUTIME"`, `"GSAMP:PER (cyc)"` is `"GSAMP:PER"`), as the
/// HPCToolkit database conversion names it, so that a measurement and the database hpcprof made
/// from it name their metrics alike. The unit itself is the value type's [`Unit`].
pub fn value_type_name(desc: &MetricDesc) -> String {
    let name = desc.name.to_string_lossy();
    match name.rsplit_once(" (") {
        Some((base, suffix)) if suffix.ends_with(')') && !base.is_empty() => base.to_owned(),
        _ => name.into_owned(),
    }
}

/// The model's identifier kind for an id-tuple kind (`id-tuple.h`: 1 NODE, 2 RANK, 3 THREAD,
/// 4 GPUDEVICE, 5 GPUCONTEXT, 6 GPUSTREAM, 7 CORE).
fn id_kind(kind: u16) -> Option<IdKind> {
    Some(match kind {
        1 => IdKind::Node,
        2 => IdKind::Rank,
        3 => IdKind::Thread,
        4 => IdKind::GpuDevice,
        5 => IdKind::GpuContext,
        6 => IdKind::GpuStream,
        7 => IdKind::Core,
        _ => return None,
    })
}

/// Converts hpcrun measurements, one thread at a time, into one [`Profile`].
///
/// ```
/// use profcodec_hpcrun::{ProfileConverter, read_measurement};
/// use profcodec_profile::Query;
///
/// let bytes = std::fs::read(concat!(
///     env!("CARGO_MANIFEST_DIR"),
///     "/../../testdata/hpcrun/demo-04.00b.hpcrun"
/// ))?;
/// let mut converter = ProfileConverter::new();
/// converter.add(&read_measurement(&bytes)?, None)?;
/// let profile = converter.finish();
/// let top = profile.top(&Query::new().limit(3))?;
/// assert!(top.total.self_value > 0.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct ProfileConverter {
    builder: ProfileBuilder,
    default_set: bool,
    name_set: bool,
    #[cfg(feature = "symbolize")]
    symbols: Option<crate::symbols::Symbols>,
}

impl ProfileConverter {
    /// A converter with an empty profile.
    pub fn new() -> Self {
        ProfileConverter::default()
    }

    /// A converter that names each address by function, file and line from the binaries the
    /// load maps name, found by their recorded paths or through `search`
    /// ([`symbols`](crate::symbols)); addresses that cannot be resolved keep their address form.
    #[cfg(feature = "symbolize")]
    pub fn with_symbols(search: crate::symbols::SearchPath) -> Self {
        ProfileConverter {
            symbols: Some(crate::symbols::Symbols::new(search)),
            ..ProfileConverter::default()
        }
    }

    /// Looks for binaries in the measurement folder `folder` and its `vdso/` and `gpubins/`
    /// subfolders too, after the search path (when symbolizing).
    #[cfg(feature = "symbolize")]
    pub fn look_in_folder(&mut self, folder: &std::path::Path) {
        if let Some(s) = &mut self.symbols {
            s.add_folder(folder);
        }
    }

    /// What became of each load module the converted files referred to, by path (empty when
    /// not symbolizing).
    #[cfg(feature = "symbolize")]
    pub fn module_reports(&self) -> Vec<crate::symbols::ModuleReport> {
        self.symbols
            .as_ref()
            .map(|s| s.reports().cloned().collect())
            .unwrap_or_default()
    }

    /// How many binaries were read (each at most once).
    #[cfg(feature = "symbolize")]
    pub fn binaries_read(&self) -> usize {
        self.symbols.as_ref().map_or(0, |s| s.binaries_read())
    }

    /// The structure files (`structs/*.hpcstruct` of the folders looked in) that could not be
    /// read, and why; their modules are named from the binaries instead.
    #[cfg(feature = "symbolize")]
    pub fn structure_errors(&self) -> Vec<(std::path::PathBuf, crate::structs::StructError)> {
        self.symbols
            .as_ref()
            .map(|s| {
                s.structure_errors()
                    .map(|(f, e)| (f.to_owned(), e.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Adds one measurement file (a thread) as one context; `files` names it when it came from a
    /// measurement folder (its rank and thread, when the file has no id tuple or header pairs).
    /// Returns the context.
    pub fn add(
        &mut self,
        m: &Measurement,
        files: Option<&ThreadFiles>,
    ) -> Result<ContextId, ModelError> {
        let context = self.start(m, files)?;
        for epoch in 0..m.epochs.len() {
            self.add_epoch(m, epoch, context)?;
        }
        Ok(context)
    }

    /// [`add`](Self::add), and which model node each CCT node id became (what the ids of the
    /// thread's `.hpctrace` records name): `(id, node)` pairs sorted by id, the placeholders
    /// left out of the model (the primary root, "no activity") absent. When epochs reuse an id,
    /// the last epoch's node is kept.
    pub fn add_with_nodes(
        &mut self,
        m: &Measurement,
        files: Option<&ThreadFiles>,
    ) -> Result<(ContextId, Vec<(i32, NodeId)>), ModelError> {
        let context = self.start(m, files)?;
        let mut nodes = Vec::new();
        for epoch in 0..m.epochs.len() {
            let model = self.add_epoch(m, epoch, context)?;
            nodes.extend(
                m.epochs[epoch]
                    .cct
                    .iter()
                    .zip(model)
                    .filter_map(|(n, id)| Some((n.id, id?))),
            );
        }
        // Stable: for an id several epochs use, the last one wins after dedup_by_key keeps
        // the first of each run, so reverse first.
        nodes.reverse();
        nodes.sort_by_key(|e| e.0);
        nodes.dedup_by_key(|e| e.0);
        Ok((context, nodes))
    }

    /// Takes the program's name if none yet, and makes the measurement's context.
    fn start(
        &mut self,
        m: &Measurement,
        files: Option<&ThreadFiles>,
    ) -> Result<ContextId, ModelError> {
        if !self.name_set
            && let Some(name) = m.header_value("program-name")
        {
            self.builder.set_name(&name.to_string_lossy())?;
            self.name_set = true;
        }
        let ids = self.context_ids(m, files)?;
        self.builder.intern_context(Context::new(ids))
    }

    /// The profile built so far.
    pub fn finish(self) -> Profile {
        self.builder.build()
    }

    /// The profile so far, leaving the converter empty for the next one (a trace's thread at a
    /// time) with what it learnt of the binaries kept, so that each binary is read once; the
    /// frames it made belong to the profile taken and are forgotten.
    pub(crate) fn take_profile(&mut self) -> Profile {
        #[cfg(feature = "symbolize")]
        let symbols = self.symbols.take().map(|mut s| {
            s.forget_frames();
            s
        });
        let done = std::mem::take(self);
        #[cfg(feature = "symbolize")]
        {
            self.symbols = symbols;
        }
        done.finish()
    }

    fn context_ids(
        &mut self,
        m: &Measurement,
        files: Option<&ThreadFiles>,
    ) -> Result<Vec<(IdKind, u64)>, ModelError> {
        let mut ids = Vec::new();
        for (entry, name) in m.id_tuple_names() {
            let kind = match id_kind(entry.kind_id()) {
                Some(kind) => kind,
                // SUMMARY (0) names no measured entity; other kinds keep the file's name.
                None if entry.kind_id() == 0 => continue,
                None => {
                    let name = name.map_or_else(
                        || format!("kind {}", entry.kind_id()),
                        |n| n.to_string_lossy().to_lowercase(),
                    );
                    IdKind::Other(self.builder.intern_string(&name)?)
                }
            };
            ids.push((kind, entry.logical));
        }
        if ids.is_empty() {
            let header = |key: &str| {
                m.header_value(key)
                    .and_then(|v| v.to_string_lossy().trim().parse::<u64>().ok())
            };
            let rank = header("mpi-rank").or(files.and_then(|f| f.rank));
            let thread = header("thread-id").or(files.and_then(|f| f.thread));
            ids.extend(rank.map(|r| (IdKind::Rank, r)));
            ids.extend(thread.map(|t| (IdKind::Thread, t)));
        }
        Ok(ids)
    }

    /// Each metric's value type and the factor its values are scaled by (its period), `None`
    /// for a derived metric.
    fn value_types(
        &mut self,
        epoch: &Epoch,
    ) -> Result<Vec<Option<(ValueTypeId, f64)>>, ModelError> {
        let mut types = Vec::with_capacity(epoch.metrics.len());
        for desc in &epoch.metrics {
            if !desc.formula.as_bytes().is_empty() {
                types.push(None);
                continue;
            }
            let unit = metric_unit(desc);
            let id =
                self.builder
                    .intern_value_type(&value_type_name(desc), unit, Measured::SelfOnly)?;
            if !self.default_set && unit.quantity() == Quantity::Time {
                self.builder.set_default_value_type(id)?;
                self.default_set = true;
            }
            // hpcprof multiplies every value by the period (`Hpcrun4::realread`, `met.factor`);
            // a period of 0 (never written by hpcrun) leaves values as stored.
            let factor = if desc.period == 0 {
                1.0
            } else {
                desc.period as f64
            };
            types.push(Some((id, factor)));
        }
        Ok(types)
    }

    fn add_epoch(
        &mut self,
        m: &Measurement,
        epoch: usize,
        context: ContextId,
    ) -> Result<Vec<Option<NodeId>>, ModelError> {
        let e = &m.epochs[epoch];
        let types = self.value_types(e)?;
        let modules = Modules::new(&mut self.builder, e, m.version.is_legacy())?;
        let values = NodeValues::new(m, epoch);
        let index = CctIndex::new(&e.cct);
        #[cfg(feature = "symbolize")]
        let resolved = match &mut self.symbols {
            Some(s) if !modules.legacy => Some(s.resolve(e, &index, |lm| {
                matches!(
                    lm,
                    PLACEHOLDER_LM | GPU_CONTEXT_NODE | GPU_RANGE_NODE | GPU_ROOT_NODE
                )
            })),
            _ => None,
        };
        // The counts are bounded by the file: the tables grow once instead of doubling (each
        // node has one frame at most, and frames are often as many as nodes).
        self.builder.reserve_nodes(e.cct.len());
        self.builder.reserve_frames(e.cct.len());
        self.builder
            .reserve_node_values(m.sparse.as_ref().map_or(e.values.len(), |s| s.values.len()));
        let mut model: Vec<Option<NodeId>> = vec![None; e.cct.len()];
        let mut placeholder_frames: HashMap<u64, FrameId> = HashMap::new();
        // hpcrun writes its CCT in preorder, parents first: walking the file order then reads
        // every per-node table in sequence. Only a file whose parents do not all come first
        // needs the walk from the roots (a preorder of a shuffled file visits them at random).
        let parents_first = (0..e.cct.len()).all(|i| index.parent(i).is_none_or(|p| p < i));
        let preorder = (!parents_first).then(|| index.preorder());
        let order = || -> Box<dyn Iterator<Item = usize> + '_> {
            match &preorder {
                None => Box::new(0..e.cct.len()),
                Some(preorder) => Box::new(preorder.iter().copied()),
            }
        };
        for i in order() {
            let node = &e.cct[i];
            let parent = index.parent(i).and_then(|p| model[p]);
            let is_root = index.parent(i).is_none();
            let has_values = values.of(i).next().is_some();
            let frame = if modules.legacy {
                modules.absolute(&mut self.builder, node.ip)?
            } else {
                match node.lm_id {
                    // hpcprof maps both to its global context: their children become roots.
                    PLACEHOLDER_LM
                        if !has_values
                            && ((is_root && node.ip == ROOT_PRIMARY)
                                || (parent.is_none() && node.ip == NO_ACTIVITY)) =>
                    {
                        continue;
                    }
                    PLACEHOLDER_LM if modules.by_id(PLACEHOLDER_LM).is_none() => {
                        match placeholder_frames.get(&node.ip) {
                            Some(&f) => f,
                            None => {
                                let name =
                                    self.builder.intern_string(&placeholder_name(node.ip))?;
                                let f = self.builder.intern_frame(Frame::function(name))?;
                                placeholder_frames.insert(node.ip, f);
                                f
                            }
                        }
                    }
                    GPU_CONTEXT_NODE | GPU_RANGE_NODE | GPU_ROOT_NODE => {
                        let name = match node.lm_id {
                            GPU_CONTEXT_NODE => "<gpu context>",
                            GPU_RANGE_NODE => "<gpu range>",
                            _ => "<gpu range root>",
                        };
                        let name = self.builder.intern_string(name)?;
                        self.builder
                            .intern_frame(Frame::function(name).with_address(node.ip))?
                    }
                    lm => {
                        #[cfg(feature = "symbolize")]
                        if let (Some(s), Some(r)) = (&mut self.symbols, &resolved)
                            && let Some(frames) =
                                s.frames(&mut self.builder, r, i, lm, node.ip, modules.by_id(lm))?
                        {
                            // The function, then what was inlined into it: values at the last.
                            let mut node = parent;
                            for &f in frames.iter() {
                                node = Some(self.builder.intern_node(node, f)?);
                            }
                            model[i] = node;
                            continue;
                        }
                        let mut frame = Frame::new(FrameKind::Function).with_address(node.ip);
                        if let Some(module) = modules.by_id(lm) {
                            frame = frame.with_module(module);
                        }
                        self.builder.intern_frame(frame)?
                    }
                }
            };
            model[i] = Some(self.builder.intern_node(parent, frame)?);
        }
        // The values in a second pass over the nodes: interleaved with the interning above, the
        // stream of values evicted the frame and node indexes from the cache between two
        // lookups (each lookup then a miss to memory).
        // In the same order, so that each column takes its nodes in increasing order.
        for i in order() {
            let Some(id) = model[i] else { continue };
            let node_values = values.of(i).filter_map(|(metric, value)| {
                let &(vt, factor) = types.get(usize::from(metric))?.as_ref()?;
                Some((vt, Some(value.as_f64() * factor), None))
            });
            self.builder.add_node_values(context, id, node_values)?;
        }
        Ok(model)
    }
}

/// The load modules of one epoch as interned strings.
struct Modules {
    legacy: bool,
    /// Indexed by load module id (a `u16`: at most 65,536 entries), looked up once per node.
    by_id: Vec<Option<StringId>>,
    /// Legacy versions: (mapped address, module), sorted by address.
    by_address: Vec<(u64, StringId)>,
}

impl Modules {
    fn new(b: &mut ProfileBuilder, e: &Epoch, legacy: bool) -> Result<Modules, ModelError> {
        let mut by_id = Vec::new();
        let mut by_address = Vec::new();
        for (id, lm) in e.load_module_index() {
            let name = b.intern_string(&lm.name.to_string_lossy())?;
            let slot = usize::from(id);
            if by_id.len() <= slot {
                by_id.resize(slot + 1, None);
            }
            by_id[slot] = Some(name);
        }
        if legacy {
            for lm in &e.loadmap {
                by_address.push((lm.mapaddr, b.intern_string(&lm.name.to_string_lossy())?));
            }
            by_address.sort_unstable_by_key(|&(a, _)| a);
        }
        Ok(Modules {
            legacy,
            by_id,
            by_address,
        })
    }

    /// The module of load module id `id`.
    fn by_id(&self, id: u16) -> Option<StringId> {
        self.by_id.get(usize::from(id)).copied().flatten()
    }

    /// The frame of an absolute address (02.00l, 01.98b): the module mapped closest below it and
    /// the offset from its mapping.
    fn absolute(&self, b: &mut ProfileBuilder, ip: u64) -> Result<FrameId, ModelError> {
        let at = self.by_address.partition_point(|&(a, _)| a <= ip);
        let frame = match at.checked_sub(1).map(|i| self.by_address[i]) {
            Some((base, module)) => Frame::new(FrameKind::Function)
                .with_module(module)
                .with_address(ip - base),
            None => Frame::new(FrameKind::Function).with_address(ip),
        };
        b.intern_frame(frame)
    }
}

impl Measurement {
    /// This measurement (one thread) in the profile model ([`ProfileConverter`]).
    pub fn to_profile(&self) -> Result<Profile, ModelError> {
        let mut converter = ProfileConverter::new();
        converter.add(self, None)?;
        Ok(converter.finish())
    }
}

impl MeasurementFolder {
    /// Every profile of the folder as one multi-thread profile, one context per thread
    /// ([`ProfileConverter`]); files are read one at a time.
    pub fn to_profile(&self) -> Result<Profile, ProfileError> {
        self.convert(ProfileConverter::new())
    }

    /// [`to_profile`](Self::to_profile) with addresses named from the binaries
    /// ([`ProfileConverter::with_symbols`]; the folder itself and its `vdso/` and `gpubins/` are
    /// searched too), and what became of each load module. Each binary is read once.
    #[cfg(feature = "symbolize")]
    pub fn to_profile_with_symbols(
        &self,
        search: crate::symbols::SearchPath,
    ) -> Result<(Profile, Vec<crate::symbols::ModuleReport>), ProfileError> {
        let mut converter = ProfileConverter::with_symbols(search);
        converter.look_in_folder(self.path());
        self.add_to(&mut converter)?;
        let reports = converter.module_reports();
        Ok((converter.finish(), reports))
    }

    fn convert(&self, mut converter: ProfileConverter) -> Result<Profile, ProfileError> {
        self.add_to(&mut converter)?;
        Ok(converter.finish())
    }

    /// Adds every profile of the folder, one file at a time.
    pub fn add_to(&self, converter: &mut ProfileConverter) -> Result<(), ProfileError> {
        for thread in self.threads() {
            if let Some(m) = thread.read_profile() {
                converter.add(&m?, Some(thread))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_come_from_the_name_or_description() {
        let desc = |name: &str, description: &str| MetricDesc {
            name: name.into(),
            description: description.into(),
            ..MetricDesc::default()
        };
        assert_eq!(metric_unit(&desc("CPUTIME (sec)", "")), Unit::Seconds);
        assert_eq!(metric_unit(&desc("WALLCLOCK (us)", "")), Unit::Microseconds);
        assert_eq!(metric_unit(&desc("GMEM:PAG (B)", "")), Unit::Bytes);
        assert_eq!(
            metric_unit(&desc("GKER", "GPU time: kernel execution (seconds)")),
            Unit::Seconds
        );
        assert_eq!(metric_unit(&desc("PAPI_TOT_CYC", "")), Unit::Count);
        assert_eq!(metric_unit(&desc("GSAMP:PER (cyc)", "")), Unit::Count);
    }

    #[test]
    fn placeholders_are_named() {
        assert_eq!(placeholder_name(placeholder(b"GPUKernl")), "<gpu kernel>");
        assert_eq!(placeholder_name(placeholder(b"| Main  ")), "main thread");
        assert_eq!(
            placeholder_name(placeholder(b"Zz\x01Other")),
            "<placeholder Zz?Other>"
        );
    }
}
