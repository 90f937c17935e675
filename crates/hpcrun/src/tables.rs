//! The tables of hpcrun measurements (feature `arrow`): a measurement folder (`*.m`, one
//! `.hpcrun` profile and one `.hpctrace` trace per thread), or one such file. Each thread's
//! profile is decoded when its rows are reached (every version, through [`read_measurement`])
//! and dropped after; traces are read through the zero-copy [`TraceView`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use profcodec_common::Source;
use profcodec_common::source::Member;
use profcodec_tables::{
    Batches, Error, ScanOptions, SourceTables, TableSet, batches, id_tuple_text, table,
};

use crate::{
    CctNode, IdTupleEntry, Measurement, MeasurementFolder, MetricDesc, MetricValue, TraceRecord,
    TraceView, V4View, ValueFormat, name_id_tuple, read_measurement,
};

table! {
    /// hpcrun `profiles`: one row per thread of the measurement (a `.hpcrun` file, its
    /// `.hpctrace`, or both), in the folder's order: by rank, thread and file name.
    Profiles, ProfileRows, "profiles" {
        profile: UInt32 => "The thread's position in the folder, the key of the other tables' `profile`.",
        name: Utf8 => "The file name without its extension: `<program>-<rank>-<thread>-<host>-<pid>-<generation>`.",
        rank: UInt64 nullable => "The MPI rank the file name gives.",
        thread: UInt64 nullable => "The thread the file name gives (hpcrun numbers GPU streams from 500).",
        version: Utf8 nullable => "The profile's format version (`04.00b`, `02.00b`...); null without a profile.",
        id_tuple: Utf8 nullable => "A 04.00 profile's identifier tuple, kinds named by its dictionary: `RANK 0 / THREAD 1`.",
        has_trace: Boolean => "Whether the thread has a `.hpctrace`.",
    }
}

table! {
    /// hpcrun `metrics`: one row per metric of each thread's profile (and epoch).
    Metrics, MetricRows, "metrics" {
        profile: UInt32 => "The thread (`profiles.profile`).",
        epoch: UInt32 => "The epoch (0 from 04.00 on, which has one).",
        metric_id: UInt16 => "The metric's id, its position in the epoch's metric table.",
        name: Utf8 => "The metric's name as hpcrun writes it (`CPUTIME (sec)`).",
        description: Utf8 => "Its description.",
        value_format: Utf8 => "How values are stored: `int`, `real` or `unknown` (read as real).",
        period: UInt64 => "The sampling period.",
    }
}

table! {
    /// hpcrun `nodes`: one row per node of each thread's calling context tree.
    Nodes, NodeRows, "nodes" {
        profile: UInt32 => "The thread (`profiles.profile`).",
        epoch: UInt32 => "The epoch.",
        node_id: Int32 => "The node's id (negative for a leaf in some versions, as stored).",
        parent: Int32 => "The parent's id (0 for a root).",
        lm_id: UInt16 => "The load module's id in the epoch's load map.",
        module: Utf8 nullable => "The load module's path.",
        ip: UInt64 => "The instruction: an offset in the load module (02.00b on), an absolute address before.",
        flags: UInt8 => "The node's flags (bit 0: unwound).",
    }
}

table! {
    /// hpcrun `values`: every non-zero metric value of every node, in long form.
    Values, ValueRows, "values" {
        profile: UInt32 => "The thread (`profiles.profile`).",
        epoch: UInt32 => "The epoch.",
        node_id: Int32 => "The node (`nodes.node_id`).",
        metric_id: UInt16 => "The metric (`metrics.metric_id`).",
        value: Float64 => "The value (an integer metric's value converted).",
    }
}

table! {
    /// hpcrun `trace`: every record of each thread's `.hpctrace`.
    Trace, TraceRows, "trace" {
        profile: UInt32 => "The thread (`profiles.profile`).",
        time: UInt64 => "The sample's time in nanoseconds.",
        node_id: UInt32 => "The node sampled (`nodes.node_id`).",
        metric_id: UInt32 nullable => "The metric of a data-centric trace's record.",
    }
}

/// The set's name: the SQL schema of its tables, and the format its errors name.
const NAME: &str = crate::FORMAT_NAME;

/// The `hpcrun` set: its tables, in order.
pub const SET: TableSet = TableSet::new(
    NAME,
    &[
        Profiles::DEF,
        Metrics::DEF,
        Nodes::DEF,
        Values::DEF,
        Trace::DEF,
    ],
);

/// The tables of a measurement folder or of one file of it.
#[derive(Debug)]
pub struct TableReader {
    threads: Vec<Thread>,
}

#[derive(Debug)]
struct Thread {
    name: String,
    rank: Option<u64>,
    thread: Option<u64>,
    profile: Option<File>,
    trace: Option<File>,
}

/// A file of a thread: the input itself (a single-file input), or a file of a measurement
/// folder, opened through the input's members when it is read.
#[derive(Debug)]
enum File {
    Own(PathBuf),
    Member(PathBuf),
}

impl File {
    fn path(&self) -> &Path {
        match self {
            File::Own(path) | File::Member(path) => path,
        }
    }

    /// The file's bytes, from `source` (the input this file belongs to).
    fn bytes<'a>(&self, source: &Source<'a>) -> Result<Bytes<'a>, Error> {
        Ok(match self {
            File::Own(_) => Bytes::Own(source.bytes),
            File::Member(path) => Bytes::Member(source.members.open(path).map_err(Error::open)?),
        })
    }

    /// Runs `f` on the file's bytes.
    fn with_bytes<T>(
        &self,
        source: &Source<'_>,
        f: impl FnOnce(&[u8]) -> Result<T, Error>,
    ) -> Result<T, Error> {
        f(self.bytes(source)?.as_ref())
    }
}

/// A file's bytes: the input's own, or those of a member opened for this read.
enum Bytes<'a> {
    Own(&'a [u8]),
    Member(Member),
}

impl AsRef<[u8]> for Bytes<'_> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Bytes::Own(bytes) => bytes,
            Bytes::Member(member) => (**member).as_ref(),
        }
    }
}

impl TableReader {
    /// The tables of `source`: a measurement folder, whose threads are listed now and whose
    /// files are opened through `source.members` when read, or one `.hpcrun` or `.hpctrace` file.
    pub fn open(source: &Source<'_>) -> Result<TableReader, Error> {
        let path = source.path;
        if path.is_dir() {
            let folder =
                MeasurementFolder::open(path).map_err(|e| Error::invalid(path, NAME, None, e))?;
            let threads = folder
                .threads()
                .iter()
                .map(|t| Thread {
                    name: t.stem.clone(),
                    rank: t.rank,
                    thread: t.thread,
                    profile: t.profile.clone().map(File::Member),
                    trace: t.trace.clone().map(File::Member),
                })
                .collect();
            return Ok(TableReader { threads });
        }
        let is_trace = source.bytes.starts_with(crate::raw::TRACE_PREFIX);
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = Some(File::Own(path.to_path_buf()));
        let (profile, trace) = if is_trace { (None, file) } else { (file, None) };
        Ok(TableReader {
            threads: vec![Thread {
                name,
                rank: None,
                thread: None,
                profile,
                trace,
            }],
        })
    }
}

impl SourceTables for TableReader {
    fn set(&self) -> TableSet {
        SET
    }

    fn batches<'a>(
        &'a self,
        source: Source<'a>,
        table: &str,
        options: &ScanOptions,
    ) -> Result<Batches<'a>, Error> {
        SET.table(table)?;
        Ok(match table {
            Profiles::NAME => self.profiles(source, options),
            Metrics::NAME => self.metrics(source, options),
            Nodes::NAME => self.nodes(source, options),
            Values::NAME => self.values(source, options),
            _ => self.trace(source, options),
        })
    }
}

impl TableReader {
    /// Every thread with a profile, numbered, with its decoded measurement (read when reached).
    fn measurements<'a>(
        &'a self,
        source: Source<'a>,
    ) -> impl Iterator<Item = (u32, Result<Measurement, Error>)> + 'a {
        self.threads.iter().enumerate().filter_map(move |(k, t)| {
            let file = t.profile.as_ref()?;
            let m = file.with_bytes(&source, |bytes| {
                read_measurement(bytes)
                    .map_err(|e| Error::invalid(file.path(), NAME, e.offset(), e))
            });
            Some((k as u32, m))
        })
    }

    fn profiles<'a>(&'a self, source: Source<'a>, options: &ScanOptions) -> Batches<'a> {
        let items = self.threads.iter().enumerate().map(move |(k, t)| {
            let (version, id_tuple) = match &t.profile {
                // The header and small tables only: the version, and a 04.00 file's tuple.
                Some(file) => file.with_bytes(&source, |bytes| {
                    let err = |e: crate::Error| Error::invalid(file.path(), NAME, e.offset(), e);
                    let version = crate::detect_version(bytes).map_err(err)?;
                    let id_tuple = if version == crate::Version::V0400B {
                        Some(v4_id_tuple_text(&V4View::parse(bytes).map_err(err)?))
                    } else {
                        None
                    };
                    Ok((Some(version.as_str()), id_tuple))
                })?,
                None => (None, None),
            };
            Ok((k as u32, t, version, id_tuple))
        });
        batches(
            ProfileRows::new(),
            items,
            options,
            |rows, (k, t, version, id_tuple): (u32, &Thread, Option<&str>, Option<String>)| {
                rows.profile.append_value(k);
                rows.name.append_value(&t.name);
                rows.rank.append_option(t.rank);
                rows.thread.append_option(t.thread);
                rows.version.append_option(version);
                rows.id_tuple.append_option(id_tuple);
                rows.has_trace.append_value(t.trace.is_some());
            },
        )
    }

    fn metrics<'a>(&'a self, source: Source<'a>, options: &ScanOptions) -> Batches<'a> {
        let items = self
            .measurements(source)
            .flat_map(|(k, m)| -> Box<dyn Iterator<Item = _>> {
                match m {
                    Ok(m) => Box::new(m.epochs.into_iter().enumerate().flat_map(move |(e, ep)| {
                        ep.metrics
                            .into_iter()
                            .enumerate()
                            .map(move |(i, d)| Ok((k, e as u32, i as u16, d)))
                    })),
                    Err(e) => Box::new(std::iter::once(Err(e))),
                }
            });
        batches(
            MetricRows::new(),
            items,
            options,
            |rows, (k, e, i, d): (u32, u32, u16, MetricDesc)| {
                rows.profile.append_value(k);
                rows.epoch.append_value(e);
                rows.metric_id.append_value(i);
                rows.name.append_value(d.name.to_string_lossy());
                rows.description
                    .append_value(d.description.to_string_lossy());
                rows.value_format.append_value(d.value_format().as_str());
                rows.period.append_value(d.period);
            },
        )
    }

    fn nodes<'a>(&'a self, source: Source<'a>, options: &ScanOptions) -> Batches<'a> {
        let items = self
            .measurements(source)
            .flat_map(|(k, m)| -> Box<dyn Iterator<Item = _>> {
                match m {
                    Ok(m) => Box::new(m.epochs.into_iter().enumerate().flat_map(move |(e, ep)| {
                        let modules: HashMap<u16, Rc<str>> = ep
                            .loadmap
                            .iter()
                            .map(|lm| (lm.id, Rc::from(lm.name.to_string_lossy().as_ref())))
                            .collect();
                        ep.cct.into_iter().map(move |n| {
                            let module = modules.get(&n.lm_id).cloned();
                            Ok((k, e as u32, n, module))
                        })
                    })),
                    Err(e) => Box::new(std::iter::once(Err(e))),
                }
            });
        batches(
            NodeRows::new(),
            items,
            options,
            |rows, (k, e, n, module): (u32, u32, CctNode, Option<Rc<str>>)| {
                rows.profile.append_value(k);
                rows.epoch.append_value(e);
                rows.node_id.append_value(n.id);
                rows.parent.append_value(n.parent);
                rows.lm_id.append_value(n.lm_id);
                rows.module.append_option(module.as_deref());
                rows.ip.append_value(n.ip);
                rows.flags.append_value(n.flags);
            },
        )
    }

    fn values<'a>(&'a self, source: Source<'a>, options: &ScanOptions) -> Batches<'a> {
        let items = self.measurements(source).flat_map(|(k, m)| match m {
            Ok(m) => measurement_values(k, m),
            Err(e) => Box::new(std::iter::once(Err(e))),
        });
        batches(ValueRows::new(), items, options, |rows, v: ValueRow| {
            rows.profile.append_value(v.profile);
            rows.epoch.append_value(v.epoch);
            rows.node_id.append_value(v.node_id);
            rows.metric_id.append_value(v.metric_id);
            rows.value.append_value(v.value);
        })
    }

    fn trace<'a>(&'a self, source: Source<'a>, options: &ScanOptions) -> Batches<'a> {
        let items = self.threads.iter().enumerate().flat_map(move |(k, t)| {
            let trace: Box<dyn Iterator<Item = _>> = match &t.trace {
                None => Box::new(std::iter::empty()),
                Some(file) => match ThreadTrace::open(k as u32, file, &source) {
                    Ok(trace) => Box::new(trace),
                    Err(e) => Box::new(std::iter::once(Err(e))),
                },
            };
            trace
        });
        batches(
            TraceRows::new(),
            items,
            options,
            |rows, (k, r): (u32, TraceRecord)| {
                rows.profile.append_value(k);
                rows.time.append_value(r.time);
                rows.node_id.append_value(r.ctx);
                rows.metric_id.append_option(r.metric);
            },
        )
    }
}

/// The records of one thread's trace, read from its file through the zero-copy view.
struct ThreadTrace<'a> {
    profile: u32,
    bytes: Bytes<'a>,
    next: usize,
}

impl<'a> ThreadTrace<'a> {
    /// Opens the file and checks its header and that its last record is whole.
    fn open(profile: u32, file: &File, source: &Source<'a>) -> Result<Self, Error> {
        let bytes = file.bytes(source)?;
        let trace = ThreadTrace {
            profile,
            bytes,
            next: 0,
        };
        trace
            .view()
            .and_then(|v| v.validate())
            .map_err(|e| Error::invalid(file.path(), NAME, e.offset(), e))?;
        Ok(trace)
    }

    fn view(&self) -> Result<TraceView<'_>, crate::Error> {
        TraceView::parse(self.bytes.as_ref())
    }
}

impl Iterator for ThreadTrace<'_> {
    type Item = Result<(u32, TraceRecord), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        // The view is O(1) to make (a header read), and it was checked when opened.
        let record = self.view().ok()?.get(self.next)?;
        self.next += 1;
        Some(Ok((self.profile, record)))
    }
}

struct ValueRow {
    profile: u32,
    epoch: u32,
    node_id: i32,
    metric_id: u16,
    value: f64,
}

/// The non-zero values of one thread's measurement, owning it: the sparse values of a 04.00
/// file, or the dense node-by-metric values of the epochs of older versions.
fn measurement_values(
    profile: u32,
    m: Measurement,
) -> Box<dyn Iterator<Item = Result<ValueRow, Error>>> {
    let formats = |metrics: &[MetricDesc]| -> Vec<ValueFormat> {
        metrics.iter().map(MetricDesc::value_format).collect()
    };
    if let Some(sparse) = m.sparse {
        let formats = m
            .epochs
            .first()
            .map(|e| formats(&e.metrics))
            .unwrap_or_default();
        let sparse = Rc::new(sparse);
        let contexts = sparse.contexts.len();
        return Box::new((0..contexts).flat_map(move |i| {
            let sparse = Rc::clone(&sparse);
            let formats = formats.clone();
            let ctx = sparse.contexts[i].ctx as i32;
            (0..sparse.values_of(i).len()).map(move |j| {
                let v = sparse.values_of(i)[j];
                let format = formats
                    .get(usize::from(v.metric))
                    .copied()
                    .unwrap_or(ValueFormat::Unknown);
                Ok(ValueRow {
                    profile,
                    epoch: 0,
                    node_id: ctx,
                    metric_id: v.metric,
                    value: MetricValue::from_bits(v.value, format).as_f64(),
                })
            })
        }));
    }
    Box::new(
        m.epochs
            .into_iter()
            .enumerate()
            .flat_map(move |(e, ep)| {
                let ep = Rc::new(ep);
                let n_metrics = ep.metrics.len();
                (0..ep.cct.len()).flat_map(move |node| {
                    let ep = Rc::clone(&ep);
                    (0..n_metrics).filter_map(move |metric| {
                        let value = ep.value(node, metric)?.as_f64();
                        (value != 0.0).then(|| ValueRow {
                            profile,
                            epoch: e as u32,
                            node_id: ep.cct[node].id,
                            metric_id: metric as u16,
                            value,
                        })
                    })
                })
            })
            .map(Ok),
    )
}

/// A 04.00 profile's identifier tuple as text (`RANK 0 / THREAD 1`), kinds named by its
/// dictionary.
fn v4_id_tuple_text(view: &V4View<'_>) -> String {
    let tuple = view.id_tuple.iter().map(|r| IdTupleEntry {
        kind: r.kind.get(),
        physical: r.physical.get(),
        logical: r.logical.get(),
    });
    id_tuple_text(
        name_id_tuple(&view.dictionary, tuple)
            .iter()
            .map(|(id, name)| (name.map(|n| n.to_string_lossy()), id.kind_id(), id.logical)),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The rows of every table of the file `name` of the test data, read in batches of 7 rows
    /// of the table's schema.
    fn rows(name: &str) -> Vec<usize> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/hpcrun")
            .join(name);
        let bytes = std::fs::read(&path).unwrap();
        let source = Source::file(&path, &bytes);
        let tables = TableReader::open(&source).unwrap();
        tables
            .row_counts(source, &ScanOptions::new().batch_rows(7))
            .unwrap()
    }

    #[test]
    fn a_profile_has_no_trace_and_a_trace_no_profile() {
        // profiles, metrics, nodes, values, trace
        let [profiles, metrics, nodes, values, trace] = rows("demo-04.00b.hpcrun")[..] else {
            unreachable!()
        };
        assert_eq!((profiles, trace), (1, 0));
        assert!(metrics > 0 && nodes > 0 && values > 0);
        let [profiles, metrics, nodes, values, trace] = rows("demo.hpctrace")[..] else {
            unreachable!()
        };
        assert_eq!((profiles, metrics, nodes, values), (1, 0, 0, 0));
        assert!(trace > 0);
        for old in [
            "demo-02.00l.hpcrun",
            "demo-01.98b.hpcrun",
            "demo-03.00b.hpcrun",
        ] {
            assert!(rows(old)[3] > 0, "{old}");
        }
    }
}
