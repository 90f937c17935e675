//! Building a measurement from scratch with typed handles, so that node parents, load modules
//! and metrics cannot be mixed up or point nowhere.

use crate::model::*;
use crate::{Text, migrate};

/// A metric added to a [`MeasurementBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MetricId(u16);

/// A load module added to a [`MeasurementBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LoadModuleId(u16);

/// A CCT node added to a [`MeasurementBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId(u32);

/// Builds a [`Measurement`] of any version: metrics, load modules and CCT nodes are added through
/// handles; values accumulate per (node, metric).
///
/// ```
/// use profcodec_hpcrun::{MeasurementBuilder, MetricValue, ValueFormat, Version, write_measurement};
/// let mut b = MeasurementBuilder::new(Version::V0400B);
/// b.header("program-name", "demo").header("mpi-rank", "0").header("thread-id", "0");
/// let cycles = b.metric("CYCLES", ValueFormat::Int, 1_000_000);
/// let exe = b.load_module("/bin/demo");
/// let main = b.node(None, exe, 0x1000);
/// let leaf = b.node(Some(main), exe, 0x1040);
/// b.add(leaf, cycles, MetricValue::Int(5));
/// b.add(leaf, cycles, MetricValue::Int(2));
/// let m = b.build();
/// assert_eq!(m.inclusive_sum(0, 1, 0), 7.0);
/// assert!(write_measurement(&m).is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct MeasurementBuilder {
    version: Version,
    header: Vec<NvPair>,
    metrics: Vec<MetricDesc>,
    loadmap: Vec<LoadModule>,
    nodes: Vec<CctNode>,
    values: Vec<(u32, u16, MetricValue)>,
}

impl MeasurementBuilder {
    /// An empty measurement of `version`.
    pub fn new(version: Version) -> Self {
        MeasurementBuilder {
            version,
            header: Vec::new(),
            metrics: Vec::new(),
            loadmap: Vec::new(),
            nodes: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Adds a header pair.
    pub fn header(&mut self, name: impl Into<Text>, value: impl Into<Text>) -> &mut Self {
        self.header.push(NvPair::new(name, value));
        self
    }

    /// Adds a metric (a raw, shown metric of the given value format).
    pub fn metric(&mut self, name: impl Into<Text>, format: ValueFormat, period: u64) -> MetricId {
        let real = format == ValueFormat::Real;
        let name = name.into();
        self.metrics.push(MetricDesc {
            description: if self.version.is_legacy() {
                Text::default()
            } else {
                name.clone()
            },
            name,
            flags: if self.version.is_legacy() {
                MetricFlags::Legacy(if real {
                    crate::raw::LEGACY_METRIC_FLAG_REAL
                } else {
                    0
                })
            } else {
                MetricFlags::Fields(MetricFlagFields {
                    kind: 1,
                    value_format: match format {
                        ValueFormat::Int => 1,
                        ValueFormat::Real => 2,
                        ValueFormat::Unknown => 0,
                    },
                    show: 1,
                    show_percent: 1,
                    ..MetricFlagFields::default()
                })
            },
            period,
            aux: self
                .version
                .has_metric_aux()
                .then_some(MetricAux::default()),
            ..MetricDesc::default()
        });
        MetricId(self.metrics.len() as u16 - 1)
    }

    /// Adds a load module; ids count from 1 as hpcrun's do.
    pub fn load_module(&mut self, path: impl Into<Text>) -> LoadModuleId {
        let id = self.loadmap.len() as u16 + 1;
        self.loadmap.push(LoadModule {
            id: if self.version.is_legacy() { 0 } else { id },
            name: path.into(),
            ..LoadModule::default()
        });
        LoadModuleId(id)
    }

    /// Adds a CCT node under `parent` (a root when `None`) at `ip` in load module `lm` (for
    /// 02.00l and 01.98b, whose nodes have no load module, `ip` is the absolute address).
    pub fn node(&mut self, parent: Option<NodeId>, lm: LoadModuleId, ip: u64) -> NodeId {
        let id = self.nodes.len() as u32 + 1;
        self.nodes.push(CctNode {
            id: id as i32,
            parent: parent.map_or(0, |p| p.0 as i32),
            lm_id: if self.version.is_legacy() { 0 } else { lm.0 },
            ip,
            lush: (self.version == Version::V0200L).then_some(Lush::default()),
            flags: 0,
        });
        NodeId(id)
    }

    /// Adds `value` to the value of `metric` at `node`.
    pub fn add(&mut self, node: NodeId, metric: MetricId, value: MetricValue) -> &mut Self {
        self.values.push((node.0, metric.0, value));
        self
    }

    /// The measurement.
    pub fn build(self) -> Measurement {
        let nm = self.metrics.len();
        let mut dense = vec![0u64; self.nodes.len() * nm];
        for (node, metric, value) in self.values {
            let slot = &mut dense[(node as usize - 1) * nm + metric as usize];
            *slot = match value {
                MetricValue::Int(i) => slot.wrapping_add(i),
                MetricValue::Real(r) => (f64::from_bits(*slot) + r).to_bits(),
            };
        }
        let target = self.version;
        let dense_version = if target == Version::V0400B {
            Version::V0300B
        } else {
            target
        };
        let m = Measurement {
            version: dense_version,
            header: self.header,
            epochs: vec![Epoch {
                header: Some(EpochHeader::default()),
                metrics: self.metrics,
                loadmap: self.loadmap,
                cct: self.nodes,
                values: dense,
            }],
            ..Measurement::default()
        };
        if target == Version::V0400B {
            // The dense model holds everything 04.00 needs; the migration adds the sparse
            // values, the unwound flags, the dictionary and the id tuple.
            migrate::to_v4(&m).0
        } else {
            m
        }
    }
}
