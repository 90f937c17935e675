//! `dump`: a header, then flat records streamed as each file is read (schema in the CLI
//! README, section hpcrun).

use std::borrow::Cow;
use std::path::Path;

use profcodec_common::inspect::{Dump, Error, Finding, Source};
use serde::Serialize;

use super::{
    file_name, folder, invalid, invalid_in, is_trace, open_member, profile_version, trailing,
};
use crate::{MeasurementFolder, Text, TraceView, V4View, Version};

pub(super) fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    if let Some(folder) = folder(input) {
        return dump_folder(input, &folder?, dump);
    }
    let data = input.bytes;
    if is_trace(data) {
        let view = TraceView::parse(data).map_err(invalid)?;
        dump.header(&Header {
            format: crate::FORMAT_NAME,
            version: view.version.as_str(),
            data_centric: Some(matches!(view.records, crate::TraceRecords::DataCentric(_))),
            trace_flags: Some(view.flags),
            files: None,
        })?;
        return dump_trace(&view, &mut Sink { dump, file: None });
    }
    dump.header(&Header {
        format: crate::FORMAT_NAME,
        version: profile_version(data).map_err(invalid)?,
        data_centric: None,
        trace_flags: None,
        files: None,
    })?;
    dump_profile(data, &mut Sink { dump, file: None })
}

/// The dump header.
#[derive(Serialize)]
struct Header<'a> {
    /// [`crate::FORMAT_NAME`], for a profile, a trace or a folder alike.
    format: &'static str,
    version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_centric: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_flags: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<usize>,
}

/// The kind of a file of a folder.
#[derive(Serialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum FileKind {
    Profile,
    Trace,
}

/// One dump record (schema in the CLI README, section hpcrun).
#[derive(Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum Record<'a> {
    /// A file of a folder; the records after it, up to the next `file`, carry its id.
    File {
        id: u32,
        name: &'a str,
        kind: FileKind,
        version: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        rank: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        thread: Option<u64>,
    },
    HeaderPair {
        name: &'a Text,
        value: &'a Text,
    },
    Epoch {
        epoch: usize,
        flags: u64,
        logical_unwind: bool,
        ra_distance: u32,
        granularity: u64,
    },
    EpochPair {
        epoch: usize,
        name: &'a Text,
        value: &'a Text,
    },
    Metric {
        #[serde(skip_serializing_if = "Option::is_none")]
        epoch: Option<usize>,
        id: usize,
        name: &'a Text,
        value_format: Cow<'static, str>,
        #[serde(flatten)]
        flags: MetricFlags,
        period: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a Text>,
        #[serde(skip_serializing_if = "Option::is_none")]
        formula: Option<&'a Text>,
        #[serde(skip_serializing_if = "Option::is_none")]
        format: Option<&'a Text>,
        #[serde(flatten)]
        aux: Option<MetricAux>,
    },
    LoadModule {
        #[serde(skip_serializing_if = "Option::is_none")]
        epoch: Option<usize>,
        id: u16,
        name: &'a Text,
        flags: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        vaddr: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        mapaddr: Option<u64>,
    },
    Node {
        #[serde(skip_serializing_if = "Option::is_none")]
        epoch: Option<usize>,
        id: i32,
        parent: Option<i32>,
        lm_id: u16,
        ip: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        unwound: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        lush_assoc: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        lush_lip: Option<[u64; 2]>,
    },
    Value {
        #[serde(skip_serializing_if = "Option::is_none")]
        epoch: Option<usize>,
        node: i32,
        metric: u16,
        value: Number,
    },
    DictionaryEntry {
        kind: u16,
        name: &'a Text,
    },
    IdTupleEntry {
        index: usize,
        kind: Cow<'a, str>,
        kind_id: u16,
        interpretation: crate::Interpretation,
        physical: u64,
        logical: u64,
    },
    Sample {
        time_ns: u64,
        node: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        metric: Option<u32>,
    },
    /// Bytes after the end of the measurement (what `validate` reports as a finding).
    TrailingData {
        offset: u64,
        size: u64,
    },
}

/// A metric value as a JSON number: an integer or a double, by the metric's value format.
#[derive(Serialize, Clone, Copy)]
#[serde(untagged)]
enum Number {
    Int(u64),
    Real(f64),
}

impl From<crate::MetricValue> for Number {
    fn from(v: crate::MetricValue) -> Self {
        match v {
            crate::MetricValue::Int(i) => Number::Int(i),
            crate::MetricValue::Real(r) => Number::Real(r),
        }
    }
}

/// A metric's flags, named: `legacy_flags` for 02.00l and 01.98b, the fields for later versions.
#[derive(Serialize)]
#[serde(untagged)]
enum MetricFlags {
    Legacy {
        legacy_flags: u64,
    },
    Fields {
        kind: Cow<'static, str>,
        value_type: Cow<'static, str>,
        partner: u16,
        show: bool,
        show_percent: bool,
        move2proc: u8,
        unused: u64,
    },
}

#[derive(Serialize)]
struct MetricAux {
    is_frequency: u16,
    is_multiplexed: u16,
    threshold_mean: f64,
    num_samples: u64,
}

fn named(code: u8, names: &[&'static str]) -> Cow<'static, str> {
    names.get(usize::from(code)).map_or_else(
        || Cow::Owned(format!("unknown_{code}")),
        |n| Cow::Borrowed(*n),
    )
}

fn metric_record<'a>(
    epoch: Option<usize>,
    id: usize,
    d: &'a crate::MetricDesc,
    legacy: bool,
) -> Record<'a> {
    let (flags, value_format) = match d.flags {
        crate::MetricFlags::Legacy(bits) => (
            MetricFlags::Legacy { legacy_flags: bits },
            Cow::Borrowed(d.value_format().as_str()),
        ),
        crate::MetricFlags::Fields(f) => (
            MetricFlags::Fields {
                kind: named(f.kind, &["null", "raw", "final", "derived"]),
                value_type: named(f.value_type, &["null", "inclusive", "exclusive"]),
                partner: f.partner,
                show: f.show != 0,
                show_percent: f.show_percent != 0,
                move2proc: f.move2proc,
                unused: f.unused,
            },
            named(f.value_format, &["null", "int", "real"]),
        ),
    };
    let text = |t: &'a Text| (!legacy).then_some(t);
    Record::Metric {
        epoch,
        id,
        name: &d.name,
        value_format,
        flags,
        period: d.period,
        description: text(&d.description),
        formula: text(&d.formula),
        format: text(&d.format),
        aux: d.aux.map(|a| MetricAux {
            is_frequency: a.is_frequency,
            is_multiplexed: a.is_multiplexed,
            threshold_mean: a.threshold_mean,
            num_samples: a.num_samples,
        }),
    }
}

/// Records into the dump, each carrying the id of its file in a folder.
struct Sink<'d, 'w> {
    dump: &'d mut Dump<'w>,
    file: Option<u32>,
}

impl Sink<'_, '_> {
    fn put(&mut self, record: Record<'_>) -> Result<(), Error> {
        #[derive(Serialize)]
        struct InFile<'r> {
            #[serde(flatten)]
            record: Record<'r>,
            file: u32,
        }
        match self.file {
            None => self.dump.record(&record),
            Some(file) => self.dump.record(&InFile { record, file }),
        }
    }
}

fn dump_v4(view: &V4View<'_>, data_len: usize, out: &mut Sink<'_, '_>) -> Result<(), Error> {
    // The cross-references are checked first (one pass, nothing allocated per record), so that
    // every value record below names a node and a metric that exist.
    view.validate().map_err(invalid)?;
    for p in &view.header {
        out.put(Record::HeaderPair {
            name: &p.name,
            value: &p.value,
        })?;
    }
    for (id, d) in view.metrics.iter().enumerate() {
        out.put(metric_record(None, id, d, false))?;
    }
    for lm in &view.loadmap {
        out.put(Record::LoadModule {
            epoch: None,
            id: lm.id,
            name: &lm.name,
            flags: lm.flags,
            vaddr: None,
            mapaddr: None,
        })?;
    }
    for n in view.cct {
        let parent = n.parent.get();
        out.put(Record::Node {
            epoch: None,
            id: n.id.get(),
            parent: (parent != 0).then_some(parent),
            lm_id: n.lm_id.get(),
            ip: n.lm_ip.get(),
            unwound: Some(n.flags & crate::raw::CCT_FLAG_UNWOUND != 0),
            lush_assoc: None,
            lush_lip: None,
        })?;
    }
    for d in &view.dictionary {
        out.put(Record::DictionaryEntry {
            kind: d.kind,
            name: &d.name,
        })?;
    }
    let tuple = view.id_tuple.iter().map(|r| crate::IdTupleEntry {
        kind: r.kind.get(),
        physical: r.physical.get(),
        logical: r.logical.get(),
    });
    for (index, (id, name)) in crate::name_id_tuple(&view.dictionary, tuple)
        .into_iter()
        .enumerate()
    {
        out.put(Record::IdTupleEntry {
            index,
            kind: name.map_or_else(
                || Cow::Owned(format!("unknown_{}", id.kind_id())),
                |n| Cow::Owned(n.to_string().to_lowercase()),
            ),
            kind_id: id.kind_id(),
            interpretation: id.interpretation_kind(),
            physical: id.physical,
            logical: id.logical,
        })?;
    }
    for i in 0..view.contexts.len().saturating_sub(1) {
        let node = view.contexts[i].ctx.get() as i32;
        for (metric, value) in view.context_values(i) {
            out.put(Record::Value {
                epoch: None,
                node,
                metric,
                value: value.into(),
            })?;
        }
    }
    if let Some(Finding::TrailingData { offset, size }) = trailing(view.end(), data_len) {
        out.put(Record::TrailingData { offset, size })?;
    }
    Ok(())
}

fn dump_epochs(m: &crate::Measurement, out: &mut Sink<'_, '_>) -> Result<(), Error> {
    let legacy = m.version.is_legacy();
    for p in &m.header {
        out.put(Record::HeaderPair {
            name: &p.name,
            value: &p.value,
        })?;
    }
    for (ei, e) in m.epochs.iter().enumerate() {
        let epoch = Some(ei);
        if let Some(h) = &e.header {
            out.put(Record::Epoch {
                epoch: ei,
                flags: h.flags,
                logical_unwind: h.is_logical_unwind(),
                ra_distance: h.ra_distance,
                granularity: h.granularity,
            })?;
            for p in &h.nvpairs {
                out.put(Record::EpochPair {
                    epoch: ei,
                    name: &p.name,
                    value: &p.value,
                })?;
            }
        }
        for (id, d) in e.metrics.iter().enumerate() {
            out.put(metric_record(epoch, id, d, legacy))?;
        }
        for lm in &e.loadmap {
            out.put(Record::LoadModule {
                epoch,
                id: lm.id,
                name: &lm.name,
                flags: lm.flags,
                vaddr: legacy.then_some(lm.vaddr),
                mapaddr: legacy.then_some(lm.mapaddr),
            })?;
        }
        for n in &e.cct {
            out.put(Record::Node {
                epoch,
                id: n.id,
                parent: (n.parent != 0).then_some(n.parent),
                lm_id: n.lm_id,
                ip: n.ip,
                unwound: None,
                lush_assoc: n.lush.map(|l| l.assoc),
                lush_lip: n.lush.map(|l| l.lip),
            })?;
        }
        let values = crate::NodeValues::new(m, ei);
        for (i, n) in e.cct.iter().enumerate() {
            for (metric, value) in values.of(i) {
                out.put(Record::Value {
                    epoch,
                    node: n.id,
                    metric,
                    value: value.into(),
                })?;
            }
        }
    }
    Ok(())
}

fn dump_trace(view: &TraceView<'_>, out: &mut Sink<'_, '_>) -> Result<(), Error> {
    for r in view.iter() {
        let r = r.map_err(invalid)?;
        out.put(Record::Sample {
            time_ns: r.time,
            node: r.ctx,
            metric: r.metric,
        })?;
    }
    Ok(())
}

/// Dumps one profile's records (the header is the caller's).
fn dump_profile(data: &[u8], out: &mut Sink<'_, '_>) -> Result<(), Error> {
    if crate::detect_version(data).map_err(invalid)? == Version::V0400B {
        let view = V4View::parse_prefix(data).map_err(invalid)?;
        return dump_v4(&view, data.len(), out);
    }
    let (m, end) = crate::read_measurement_prefix(data).map_err(invalid)?;
    dump_epochs(&m, out)?;
    if let Some(Finding::TrailingData { offset, size }) = trailing(end, data.len()) {
        out.put(Record::TrailingData { offset, size })?;
    }
    Ok(())
}

/// Dumps every file of a folder, each announced by a `file` record whose id the records after it
/// carry.
fn dump_folder(
    input: &Source<'_>,
    folder: &MeasurementFolder,
    dump: &mut Dump<'_>,
) -> Result<(), Error> {
    let files: Vec<&Path> = folder.files().collect();
    dump.header(&Header {
        format: crate::FORMAT_NAME,
        version: "measurement folder",
        data_centric: None,
        trace_flags: None,
        files: Some(files.len()),
    })?;
    let mut id = 0u32;
    for thread in folder.threads() {
        for (path, kind) in [
            (thread.profile.as_deref(), FileKind::Profile),
            (thread.trace.as_deref(), FileKind::Trace),
        ] {
            let Some(path) = path else { continue };
            let name = file_name(path);
            let member = open_member(input, path)?;
            let data = (*member).as_ref();
            let named = |e: Error| match e {
                Error::Invalid { message, offset } => Error::Invalid {
                    message: format!("{name}: {message}"),
                    offset,
                },
                other => other,
            };
            let version = match kind {
                FileKind::Profile => profile_version(data).map_err(|e| invalid_in(&name, e))?,
                FileKind::Trace => TraceView::parse(data)
                    .map_err(|e| invalid_in(&name, e))?
                    .version
                    .as_str(),
            };
            dump.record(&Record::File {
                id,
                name: &name,
                kind,
                version,
                rank: thread.rank,
                thread: thread.thread,
            })?;
            let mut sink = Sink {
                dump,
                file: Some(id),
            };
            match kind {
                FileKind::Profile => dump_profile(data, &mut sink).map_err(named)?,
                FileKind::Trace => {
                    let view = TraceView::parse(data).map_err(|e| invalid_in(&name, e))?;
                    dump_trace(&view, &mut sink).map_err(named)?;
                }
            }
            id += 1;
        }
    }
    Ok(())
}
