//! The owned model: plain data for every version, one shape.
//!
//! A field a version does not carry is left at its default (zero, empty, `None`) by the reader
//! and ignored by that version's writer; each field's doc says which versions carry it.

use crate::Text;

/// A measurement file version (`crate::format`, version table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Version {
    /// `HPCRUN____02.00l`: little-endian trunk format of 2009 (the given spec).
    #[cfg_attr(feature = "serde", serde(rename = "02.00l"))]
    V0200L,
    /// `HPCRUN-profile____01.98b`: the big-endian successor of 02.00l (2009-08-21 .. 2009-09-03).
    #[cfg_attr(feature = "serde", serde(rename = "01.98b"))]
    V0198B,
    /// `HPCRUN-profile____02.00b` as releases 2018.09 and later trunk wrote it (metric descriptors
    /// end with the four auxiliary fields).
    #[cfg_attr(feature = "serde", serde(rename = "02.00b"))]
    V0200B,
    /// `HPCRUN-profile____02.00b` as releases 2016.12 and 2017.06 wrote it: the same magic, but
    /// metric descriptors lack the four auxiliary fields.
    #[cfg_attr(feature = "serde", serde(rename = "02.00b-no-aux"))]
    V0200BNoAux,
    /// `HPCRUN-profile____03.00b` (releases 2020.08 .. 2022.04).
    #[cfg_attr(feature = "serde", serde(rename = "03.00b"))]
    V0300B,
    /// `HPCRUN-profile____04.00b` (release 2022.10 onward): 1024-aligned sections, sparse
    /// metrics, a footer.
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "04.00b"))]
    V0400B,
}

impl Version {
    /// Every version, oldest layout first.
    pub const ALL: [Version; 6] = [
        Version::V0200L,
        Version::V0198B,
        Version::V0200BNoAux,
        Version::V0200B,
        Version::V0300B,
        Version::V0400B,
    ];

    /// The magic the file starts with (16 bytes for 02.00l, 24 for the others).
    pub fn magic(self) -> &'static [u8] {
        match self {
            Version::V0200L => b"HPCRUN____02.00l",
            Version::V0198B => b"HPCRUN-profile____01.98b",
            Version::V0200B | Version::V0200BNoAux => b"HPCRUN-profile____02.00b",
            Version::V0300B => b"HPCRUN-profile____03.00b",
            Version::V0400B => b"HPCRUN-profile____04.00b",
        }
    }

    /// The version as the magic spells it (`02.00l`, `04.00b`, ...).
    pub fn as_str(self) -> &'static str {
        let m = self.magic();
        std::str::from_utf8(&m[m.len() - 6..]).unwrap_or("?")
    }

    /// True for 02.00l, the only little-endian version.
    pub fn is_little_endian(self) -> bool {
        self == Version::V0200L
    }

    /// True for the versions made of epochs (all but 04.00).
    pub fn has_epochs(self) -> bool {
        self != Version::V0400B
    }

    /// True for the versions with the 02.00l-style tables: metric descriptors of (name, flags,
    /// period), load modules of (name, vaddr, mapaddr), CCT nodes with an absolute IP.
    pub fn is_legacy(self) -> bool {
        matches!(self, Version::V0200L | Version::V0198B)
    }

    /// True when metric descriptors end with the four auxiliary fields.
    pub fn has_metric_aux(self) -> bool {
        matches!(self, Version::V0200B | Version::V0300B | Version::V0400B)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name/value pair of a header (`crate::format`, Primitives: `nvpairs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct NvPair {
    /// The name (for example `program-name`).
    pub name: Text,
    /// The value.
    pub value: Text,
}

impl NvPair {
    /// A pair from two strings.
    pub fn new(name: impl Into<Text>, value: impl Into<Text>) -> Self {
        NvPair {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// The header of an epoch (versions before 04.00).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct EpochHeader {
    /// Epoch flags; bit 0 ([`crate::raw::EPOCH_FLAG_LOGICAL_UNWIND`]) makes CCT nodes carry LUSH
    /// fields in 01.98b, 02.00b and 03.00b.
    pub flags: u64,
    /// Characteristic return-address distance (02.00l, 01.98b); in 02.00b and 03.00b the u32 that
    /// replaced it (written 0).
    pub ra_distance: u32,
    /// Measurement granularity.
    pub granularity: u64,
    /// The epoch's name/value pairs.
    pub nvpairs: Vec<NvPair>,
}

impl EpochHeader {
    /// True when the epoch was measured with logical unwinding.
    pub fn is_logical_unwind(&self) -> bool {
        self.flags & crate::raw::EPOCH_FLAG_LOGICAL_UNWIND != 0
    }
}

/// How a metric's 8-byte values are to be read (hpcrun-fmt.h, `MetricFlags_ValFmt_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ValueFormat {
    /// Unsigned 64-bit integers.
    Int,
    /// IEEE doubles.
    Real,
    /// Not stated (valFmt 0 or unknown); hpcrun's own printer reads such values as doubles.
    Unknown,
}

impl ValueFormat {
    /// `int`, `real` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            ValueFormat::Int => "int",
            ValueFormat::Real => "real",
            ValueFormat::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for ValueFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One metric value, typed by its metric's [`ValueFormat`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum MetricValue {
    /// An integer value.
    Int(u64),
    /// A real value.
    Real(f64),
}

impl MetricValue {
    /// Types the raw bits of a value.
    pub fn from_bits(bits: u64, format: ValueFormat) -> Self {
        match format {
            ValueFormat::Int => MetricValue::Int(bits),
            ValueFormat::Real | ValueFormat::Unknown => MetricValue::Real(f64::from_bits(bits)),
        }
    }

    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            MetricValue::Int(i) => i as f64,
            MetricValue::Real(r) => r,
        }
    }
}

impl std::fmt::Display for MetricValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricValue::Int(i) => write!(f, "{i}"),
            MetricValue::Real(r) => write!(f, "{r}"),
        }
    }
}

/// The flags of a metric descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum MetricFlags {
    /// 02.00l and 01.98b: one u64 of bits (bit 1 async, bit 2 real).
    Legacy(u64),
    /// 02.00b and later: the 16-byte structure.
    Fields(MetricFlagFields),
}

impl Default for MetricFlags {
    fn default() -> Self {
        MetricFlags::Fields(MetricFlagFields::default())
    }
}

/// The 16-byte flags of a 02.00b+ metric descriptor (hpcrun-fmt.h, `hpcrun_metricFlags_fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MetricFlagFields {
    /// Kind: 0 null, 1 raw, 2 final, 3 derived.
    pub kind: u8,
    /// Value type: 0 null, 1 inclusive, 2 exclusive.
    pub value_type: u8,
    /// Value format: 0 null, 1 int, 2 real.
    pub value_format: u8,
    /// `move2proc` (a pad byte before it existed).
    pub move2proc: u8,
    /// Partner metric id.
    pub partner: u16,
    /// Show flag.
    pub show: u8,
    /// Show-percent flag.
    pub show_percent: u8,
    /// The eight unused bytes, as the host wrote them (little-endian).
    pub unused: u64,
}

/// The four auxiliary fields that end a metric descriptor in 02.00b (2018.09+), 03.00b, 04.00b.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MetricAux {
    /// `is_frequency_metric`.
    pub is_frequency: u16,
    /// `is_multiplexed`.
    pub is_multiplexed: u16,
    /// `threshold_mean`.
    pub threshold_mean: f64,
    /// `num_samples`.
    pub num_samples: u64,
}

/// A metric descriptor.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MetricDesc {
    /// Name.
    pub name: Text,
    /// Description (02.00b and later).
    pub description: Text,
    /// Flags.
    pub flags: MetricFlags,
    /// Sampling period.
    pub period: u64,
    /// Formula (02.00b and later).
    pub formula: Text,
    /// Display format (02.00b and later).
    pub format: Text,
    /// The four auxiliary fields (02.00b from 2018.09, 03.00b, 04.00b).
    pub aux: Option<MetricAux>,
}

impl MetricDesc {
    /// How this metric's values are to be read.
    pub fn value_format(&self) -> ValueFormat {
        match self.flags {
            MetricFlags::Legacy(bits) if bits & crate::raw::LEGACY_METRIC_FLAG_REAL != 0 => {
                ValueFormat::Real
            }
            MetricFlags::Legacy(_) => ValueFormat::Int,
            MetricFlags::Fields(f) => match f.value_format {
                1 => ValueFormat::Int,
                2 => ValueFormat::Real,
                _ => ValueFormat::Unknown,
            },
        }
    }
}

/// A load-map entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct LoadModule {
    /// Load-module id (02.00b and later), referenced by [`CctNode::lm_id`].
    pub id: u16,
    /// Path of the module.
    pub name: Text,
    /// Flags (02.00b and later; bit 0 = analyze).
    pub flags: u64,
    /// Virtual address (02.00l, 01.98b).
    pub vaddr: u64,
    /// Mapped address (02.00l, 01.98b).
    pub mapaddr: u64,
}

/// The LUSH fields of a CCT node (02.00l always; 01.98b, 02.00b, 03.00b under the epoch's
/// logical-unwind flag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Lush {
    /// `lush_assoc_info_t` bits.
    pub assoc: u32,
    /// The logical IP (`lush_lip_t`, two u64).
    pub lip: [u64; 2],
}

/// A calling-context-tree node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CctNode {
    /// Node id (hpcrun makes leaf ids negative in versions before 04.00).
    pub id: i32,
    /// Parent id; 0 for a root.
    pub parent: i32,
    /// Load-module id (02.00b and later).
    pub lm_id: u16,
    /// Offset in the load module (02.00b and later) or absolute IP (02.00l, 01.98b).
    pub ip: u64,
    /// LUSH fields, where the version and epoch carry them.
    pub lush: Option<Lush>,
    /// The node's flag byte (04.00; bit 0 = unwound).
    pub flags: u8,
}

impl CctNode {
    /// True when this node came from a stack unwind (04.00 flag bit 0).
    pub fn is_unwound(&self) -> bool {
        self.flags & crate::raw::CCT_FLAG_UNWOUND != 0
    }
}

/// One epoch: metric table, load map, CCT and (before 04.00) dense metric values.
///
/// A 04.00 file holds exactly one epoch, without header and with sparse values
/// ([`Measurement::sparse`]).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Epoch {
    /// The epoch header (None in 04.00).
    pub header: Option<EpochHeader>,
    /// Metric descriptors; a metric's id is its index.
    pub metrics: Vec<MetricDesc>,
    /// Load map.
    pub loadmap: Vec<LoadModule>,
    /// CCT nodes in file order.
    pub cct: Vec<CctNode>,
    /// Dense metric values (before 04.00): `cct.len() * metrics.len()` raw 8-byte values, node
    /// after node. Type them with [`Epoch::value`].
    pub values: Vec<u64>,
}

impl Epoch {
    /// The metric named `name` and its id (its index in [`Epoch::metrics`]); the first one when
    /// several share the name.
    pub fn metric_by_name(&self, name: &str) -> Option<(u16, &MetricDesc)> {
        self.metrics
            .iter()
            .enumerate()
            .find(|(_, m)| m.name == *name)
            .map(|(i, m)| (i as u16, m))
    }

    /// The load module with id `id` (02.00b and later; [`CctNode::lm_id`] names it), the first
    /// one when several share it. One scan of the load map: to resolve every node, take
    /// [`Epoch::load_module_index`] once.
    pub fn load_module(&self, id: u16) -> Option<&LoadModule> {
        self.loadmap.iter().find(|lm| lm.id == id)
    }

    /// Every load module by id (02.00b and later), built in one pass over the load map; the first
    /// module wins when several share an id.
    pub fn load_module_index(&self) -> std::collections::HashMap<u16, &LoadModule> {
        let mut index = std::collections::HashMap::with_capacity(self.loadmap.len());
        for lm in &self.loadmap {
            index.entry(lm.id).or_insert(lm);
        }
        index
    }

    /// The value of metric `metric` at the node at index `node` (dense versions), typed.
    pub fn value(&self, node: usize, metric: usize) -> Option<MetricValue> {
        let desc = self.metrics.get(metric)?;
        let bits = *self.values.get(node * self.metrics.len() + metric)?;
        Some(MetricValue::from_bits(bits, desc.value_format()))
    }
}

/// An element of the 04.00 identifier tuple (id-tuple.h, `pms_id_t`).
///
/// `Debug` names the kind as hpcrun's standard dictionary does (`kind: RANK`, with the
/// interpretation after it when it is not 0: `kind: RANK | logical_global`); a kind past that
/// dictionary prints its number.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct IdTupleEntry {
    /// Kind in the low 14 bits, interpretation in the top 2 bits.
    pub kind: u16,
    /// Physical index.
    pub physical: u64,
    /// Logical index.
    pub logical: u64,
}

impl IdTupleEntry {
    /// The kind without the interpretation bits (0 SUMMARY, 1 NODE, 2 RANK, 3 THREAD, ...).
    pub fn kind_id(&self) -> u16 {
        self.kind & 0x3fff
    }

    /// The interpretation (0 both valid, 1 logical local, 2 logical global, 3 logical only).
    pub fn interpretation(&self) -> u16 {
        self.kind >> 14
    }
}

impl std::fmt::Debug for IdTupleEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        /// The kind, named, and its interpretation when it is not 0.
        struct Kind(IdTupleEntry);
        impl std::fmt::Debug for Kind {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match STANDARD_KIND_NAMES.get(usize::from(self.0.kind_id())) {
                    Some(name) => f.write_str(name)?,
                    None => write!(f, "{}", self.0.kind_id())?,
                }
                match self.0.interpretation() {
                    0 => Ok(()),
                    _ => write!(f, " | {}", self.0.interpretation_kind()),
                }
            }
        }
        f.debug_struct("IdTupleEntry")
            .field("kind", &Kind(*self))
            .field("physical", &self.physical)
            .field("logical", &self.logical)
            .finish()
    }
}

/// The interpretation of an id-tuple entry (the top 2 bits of its kind; id-tuple.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Interpretation {
    /// 0: physical and logical indexes are both valid.
    BothValid,
    /// 1: the logical index is local (for example per node).
    LogicalLocal,
    /// 2: the logical index is global.
    LogicalGlobal,
    /// 3: only the logical index is known.
    LogicalOnly,
}

impl Interpretation {
    /// The snake_case name (`both_valid`, `logical_local`, `logical_global`, `logical_only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Interpretation::BothValid => "both_valid",
            Interpretation::LogicalLocal => "logical_local",
            Interpretation::LogicalGlobal => "logical_global",
            Interpretation::LogicalOnly => "logical_only",
        }
    }
}

impl std::fmt::Display for Interpretation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl IdTupleEntry {
    /// The interpretation, named.
    pub fn interpretation_kind(&self) -> Interpretation {
        match self.interpretation() {
            0 => Interpretation::BothValid,
            1 => Interpretation::LogicalLocal,
            2 => Interpretation::LogicalGlobal,
            _ => Interpretation::LogicalOnly,
        }
    }
}

/// Names the kinds of id-tuple entries from a dictionary: one pass over the dictionary to index
/// it, then one lookup per entry (O(dictionary + tuple), whatever their sizes; a fixed table of
/// 2^14 kinds). The first
/// dictionary entry of a kind wins, as a scan would find it.
pub fn name_id_tuple(
    dictionary: &[DictionaryEntry],
    tuple: impl IntoIterator<Item = IdTupleEntry>,
) -> Vec<(IdTupleEntry, Option<&Text>)> {
    // A table over every 14-bit kind id: a dictionary kind above 0x3fff names no entry.
    let mut names: Vec<Option<&Text>> = vec![None; 1 << 14];
    for d in dictionary {
        crate::work::add(1);
        if let Some(slot @ None) = names.get_mut(usize::from(d.kind)) {
            *slot = Some(&d.name);
        }
    }
    tuple
        .into_iter()
        .map(|id| {
            crate::work::add(1);
            (id, names[usize::from(id.kind_id())])
        })
        .collect()
}

/// An entry of the 04.00 id-tuple dictionary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DictionaryEntry {
    /// Kind id.
    pub kind: u16,
    /// Its name (SUMMARY, NODE, RANK, ...).
    pub name: Text,
}

/// The kind names of the dictionary hpcrun writes into every 04.00 file, by kind id.
pub const STANDARD_KIND_NAMES: [&str; 8] = [
    "SUMMARY",
    "NODE",
    "RANK",
    "THREAD",
    "GPUDEVICE",
    "GPUCONTEXT",
    "GPUSTREAM",
    "CORE",
];

/// The dictionary hpcrun writes into every 04.00 file (`hpcrun_fmt_idtuple_dxnry_fwrite`).
pub fn standard_dictionary() -> Vec<DictionaryEntry> {
    STANDARD_KIND_NAMES
        .iter()
        .enumerate()
        .map(|(kind, name)| DictionaryEntry {
            kind: kind as u16,
            name: Text::from(*name),
        })
        .collect()
}

/// One non-zero value of a 04.00 profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SparseValue {
    /// Raw value bits.
    pub value: u64,
    /// Metric id.
    pub metric: u16,
}

/// An entry of the 04.00 context index: where a context's values start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SparseContext {
    /// CCT node id.
    pub ctx: u32,
    /// Index of its first value in [`SparseMetrics::values`].
    pub start: u64,
}

/// The sparse metrics section of a 04.00 file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SparseMetrics {
    /// The profile's identifier tuple.
    pub id_tuple: Vec<IdTupleEntry>,
    /// Values, grouped by context.
    pub values: Vec<SparseValue>,
    /// Contexts with values, in file order (without the final entry).
    pub contexts: Vec<SparseContext>,
    /// The final entry of the context index: hpcrun writes context id "end!" (0x656E6421) and
    /// the number of values.
    pub end: SparseContext,
}

impl SparseMetrics {
    /// The values of the context at index `i` of [`SparseMetrics::contexts`].
    pub fn values_of(&self, i: usize) -> &[SparseValue] {
        let Some(c) = self.contexts.get(i) else {
            return &[];
        };
        let end = self.contexts.get(i + 1).unwrap_or(&self.end).start;
        let (s, e) = (c.start as usize, end as usize);
        if s <= e && e <= self.values.len() {
            &self.values[s..e]
        } else {
            &[]
        }
    }
}

/// An hpcrun measurement file of any version.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Measurement {
    /// The version (and so the byte layout) of the file.
    pub version: Version,
    /// The file header's name/value pairs.
    pub header: Vec<NvPair>,
    /// The epochs (exactly one in 04.00).
    pub epochs: Vec<Epoch>,
    /// The id-tuple dictionary (04.00).
    pub dictionary: Vec<DictionaryEntry>,
    /// The sparse metrics (04.00).
    pub sparse: Option<SparseMetrics>,
}

impl Measurement {
    /// The value of header pair `name`, if present.
    pub fn header_value(&self, name: &str) -> Option<&Text> {
        self.header
            .iter()
            .find(|p| p.name == *name)
            .map(|p| &p.value)
    }

    /// The metric named `name` in the first epoch (the only one of a 04.00 file) and its id.
    pub fn metric_by_name(&self, name: &str) -> Option<(u16, &MetricDesc)> {
        self.epochs.first()?.metric_by_name(name)
    }

    /// The profile's id tuple (04.00) with each entry's kind named by the file's dictionary
    /// ([`name_id_tuple`]).
    pub fn id_tuple_names(&self) -> Vec<(IdTupleEntry, Option<&Text>)> {
        let tuple = self.sparse.as_ref().map_or(&[][..], |s| &s.id_tuple[..]);
        name_id_tuple(&self.dictionary, tuple.iter().copied())
    }

    /// Every value of the node with id `ctx` in epoch `epoch`, as (metric id, typed value).
    ///
    /// One scan to find the node: for the values of every node, take [`crate::NodeValues`] once.
    pub fn node_values(&self, epoch: usize, ctx: i32) -> Vec<(u16, MetricValue)> {
        let Some(e) = self.epochs.get(epoch) else {
            return Vec::new();
        };
        let format = |m: u16| {
            e.metrics
                .get(m as usize)
                .map_or(ValueFormat::Unknown, MetricDesc::value_format)
        };
        if let Some(sparse) = &self.sparse {
            let Some(i) = sparse.contexts.iter().position(|c| c.ctx == ctx as u32) else {
                return Vec::new();
            };
            return sparse
                .values_of(i)
                .iter()
                .map(|v| (v.metric, MetricValue::from_bits(v.value, format(v.metric))))
                .collect();
        }
        let Some(node) = e.cct.iter().position(|n| n.id == ctx) else {
            return Vec::new();
        };
        (0..e.metrics.len())
            .filter_map(|m| Some((m as u16, e.value(node, m)?)))
            .collect()
    }
}

impl std::fmt::Display for TraceVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A trace file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum TraceVersion {
    /// `HPCRUN-trace______01.00b`: 24-byte header, no flags.
    #[cfg_attr(feature = "serde", serde(rename = "01.00b"))]
    V0100B,
    /// `HPCRUN-trace______01.01b`: 32-byte header with flags.
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "01.01b"))]
    V0101B,
}

impl TraceVersion {
    /// The version as the magic spells it (`01.00b`, `01.01b`).
    pub fn as_str(self) -> &'static str {
        match self {
            TraceVersion::V0100B => "01.00b",
            TraceVersion::V0101B => "01.01b",
        }
    }

    /// The 24-byte magic.
    pub fn magic(self) -> &'static [u8; 24] {
        match self {
            TraceVersion::V0100B => b"HPCRUN-trace______01.00b",
            TraceVersion::V0101B => b"HPCRUN-trace______01.01b",
        }
    }
}

/// One trace record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct TraceRecord {
    /// Time in nanoseconds.
    pub time: u64,
    /// CCT node id.
    pub ctx: u32,
    /// Metric id (data-centric traces only).
    pub metric: Option<u32>,
}

/// An `.hpctrace` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Trace {
    /// The version.
    pub version: TraceVersion,
    /// Header flags (01.01b): bit 0 data-centric, bit 1 LCA recorded, bit 2 call trace.
    pub flags: u64,
    /// The records.
    pub records: Vec<TraceRecord>,
}

impl Trace {
    /// True when records carry a metric id.
    pub fn is_data_centric(&self) -> bool {
        self.version == TraceVersion::V0101B
            && self.flags & crate::raw::TRACE_FLAG_DATA_CENTRIC != 0
    }
}

#[cfg(test)]
mod debug_tests {
    use super::*;

    #[test]
    fn id_tuple_entries_debug_print_their_kind_by_name() {
        let rank = IdTupleEntry {
            kind: 2,
            physical: 0,
            logical: 3,
        };
        assert_eq!(
            format!("{rank:?}"),
            "IdTupleEntry { kind: RANK, physical: 0, logical: 3 }"
        );
        let thread = IdTupleEntry {
            kind: 3 | 2 << 14,
            ..rank
        };
        assert!(format!("{thread:?}").contains("kind: THREAD | logical_global,"));
        let unknown = IdTupleEntry { kind: 99, ..rank };
        assert!(format!("{unknown:?}").contains("kind: 99,"));
    }
}
