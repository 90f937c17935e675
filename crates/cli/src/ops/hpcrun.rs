//! `profcodec` CLI operations for hpcrun measurements (`.hpcrun`), traces (`.hpctrace`) and
//! measurement folders (`*.m`, every `.hpcrun` and `.hpctrace` in it) (profcodec-hpcrun).
//!
//! Every operation reads each file once: a 04.00 profile through the borrowed [`V4View`] (its
//! CCT and sparse values are never copied), an older one into the owned model, a trace through
//! the borrowed [`TraceView`]. Dump records are streamed from those as they are read.

use std::borrow::Cow;
use std::path::Path;

use profcodec_hpcrun::{self as hpcrun, MeasurementFolder, Text, TraceView, V4View, Version};
use serde::Serialize;

use super::dump::Dump;
use super::{Codec, Finding, Info, OpError, RewriteOptions, RewriteReport, Validated};
use profcodec::{Format, Opened};

/// The hpcrun codec: both file kinds of an hpcrun measurement folder, and the folder.
pub(super) struct Hpcrun;

fn invalid(e: hpcrun::Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// The error of file `name` of a folder, named.
fn invalid_in(name: &str, e: hpcrun::Error) -> OpError {
    OpError::invalid(format!("{name}: {e}"), e.offset())
}

fn trailing(end: u64, len: usize) -> Option<Finding> {
    let len = len as u64;
    (end < len).then(|| Finding::TrailingData {
        offset: end,
        size: len - end,
    })
}

/// The folder behind `input`, when it is a directory (a measurement folder).
fn folder(input: &Opened) -> Option<Result<MeasurementFolder, OpError>> {
    input
        .path()
        .is_dir()
        .then(|| MeasurementFolder::open(input.path()).map_err(|e| OpError::invalid(e, None)))
}

/// Each file of a folder, opened for `input` (a shrink fails `input`'s check) and named by its
/// file name.
fn folder_files<'a>(
    input: &'a Opened,
    folder: &'a MeasurementFolder,
) -> impl Iterator<Item = Result<(String, Opened), OpError>> + 'a {
    folder.files().map(|path| {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let opened = input
            .open_member(path)
            .map_err(|e| OpError::invalid(e, None))?;
        Ok((name, opened))
    })
}

// ---------------------------------------------------------------------------------------------
// validate

/// Validates one file: the fullest check, once. A 04.00 profile is viewed and every
/// cross-reference checked (no model is built); an older one is read into the model; a trace is
/// viewed. Bytes after the measurement are a finding.
fn validate_file(format: Format, data: &[u8]) -> Result<Option<Finding>, hpcrun::Error> {
    if format == Format::Hpctrace {
        // A trace has no end marker: records run to the end of the file, and a cut final record
        // is a truncation, so nothing can trail it.
        TraceView::parse(data)?.validate()?;
        return Ok(None);
    }
    if hpcrun::detect_version(data)? == Version::V0400B {
        let view = V4View::parse_prefix(data)?;
        view.validate()?;
        return Ok(trailing(view.end(), data.len()));
    }
    let (_, end) = hpcrun::read_measurement_prefix(data)?;
    Ok(trailing(end, data.len()))
}

/// Validates every file of a folder; the first damaged file ends it, named in the error.
fn validate_folder(input: &Opened, folder: &MeasurementFolder) -> Result<Validated, OpError> {
    let mut findings = Vec::new();
    for file in folder_files(input, folder) {
        let (name, opened) = file?;
        let found =
            validate_file(opened.format(), opened.bytes()).map_err(|e| invalid_in(&name, e))?;
        findings.extend(found);
    }
    Ok(Validated { findings })
}

// ---------------------------------------------------------------------------------------------
// dump

/// The dump header.
#[derive(Serialize)]
struct Header<'a> {
    format: Format,
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
        interpretation: hpcrun::Interpretation,
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

impl From<hpcrun::MetricValue> for Number {
    fn from(v: hpcrun::MetricValue) -> Self {
        match v {
            hpcrun::MetricValue::Int(i) => Number::Int(i),
            hpcrun::MetricValue::Real(r) => Number::Real(r),
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
    d: &'a hpcrun::MetricDesc,
    legacy: bool,
) -> Record<'a> {
    let (flags, value_format) = match d.flags {
        hpcrun::MetricFlags::Legacy(bits) => (
            MetricFlags::Legacy { legacy_flags: bits },
            Cow::Borrowed(d.value_format().as_str()),
        ),
        hpcrun::MetricFlags::Fields(f) => (
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
    fn put(&mut self, record: Record<'_>) -> Result<(), OpError> {
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

fn dump_v4(view: &V4View<'_>, data_len: usize, out: &mut Sink<'_, '_>) -> Result<(), OpError> {
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
            unwound: Some(n.flags & hpcrun::raw::CCT_FLAG_UNWOUND != 0),
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
    let tuple = view.id_tuple.iter().map(|r| hpcrun::IdTupleEntry {
        kind: r.kind.get(),
        physical: r.physical.get(),
        logical: r.logical.get(),
    });
    for (index, (id, name)) in hpcrun::name_id_tuple(&view.dictionary, tuple)
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

fn dump_epochs(m: &hpcrun::Measurement, out: &mut Sink<'_, '_>) -> Result<(), OpError> {
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
        let values = hpcrun::NodeValues::new(m, ei);
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

fn dump_trace(view: &TraceView<'_>, out: &mut Sink<'_, '_>) -> Result<(), OpError> {
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
fn dump_profile(data: &[u8], out: &mut Sink<'_, '_>) -> Result<(), OpError> {
    if hpcrun::detect_version(data).map_err(invalid)? == Version::V0400B {
        let view = V4View::parse_prefix(data).map_err(invalid)?;
        return dump_v4(&view, data.len(), out);
    }
    let (m, end) = hpcrun::read_measurement_prefix(data).map_err(invalid)?;
    dump_epochs(&m, out)?;
    if let Some(Finding::TrailingData { offset, size }) = trailing(end, data.len()) {
        out.put(Record::TrailingData { offset, size })?;
    }
    Ok(())
}

fn profile_version(data: &[u8]) -> Result<&'static str, hpcrun::Error> {
    let v = hpcrun::detect_version(data)?;
    if v == Version::V0200B {
        // Which 02.00b layout only the full read tells.
        return Ok(hpcrun::read_measurement_prefix(data)?.0.version.as_str());
    }
    Ok(v.as_str())
}

fn dump_folder(
    input: &Opened,
    folder: &MeasurementFolder,
    dump: &mut Dump<'_>,
) -> Result<(), OpError> {
    let files: Vec<&Path> = folder.files().collect();
    dump.header(&Header {
        format: Format::Hpcrun,
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
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let opened = input
                .open_member(path)
                .map_err(|e| OpError::invalid(e, None))?;
            let data = opened.bytes();
            let named = |e: OpError| match e {
                OpError::Invalid { message, offset } => OpError::Invalid {
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

impl Codec for Hpcrun {
    /// [`profcodec::info`]: one file, or a whole folder summarised once.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        Ok(profcodec::info(input)?)
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        if let Some(folder) = folder(input) {
            return validate_folder(input, &folder?);
        }
        let found = validate_file(input.format(), input.bytes()).map_err(invalid)?;
        Ok(Validated {
            findings: found.into_iter().collect(),
        })
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        if let Some(folder) = folder(input) {
            return dump_folder(input, &folder?, dump);
        }
        let data = input.bytes();
        if input.format() == Format::Hpctrace {
            let view = TraceView::parse(data).map_err(invalid)?;
            dump.header(&Header {
                format: input.format(),
                version: view.version.as_str(),
                data_centric: Some(matches!(view.records, hpcrun::TraceRecords::DataCentric(_))),
                trace_flags: Some(view.flags),
                files: None,
            })?;
            return dump_trace(&view, &mut Sink { dump, file: None });
        }
        dump.header(&Header {
            format: input.format(),
            version: profile_version(data).map_err(invalid)?,
            data_centric: None,
            trace_flags: None,
            files: None,
        })?;
        dump_profile(data, &mut Sink { dump, file: None })
    }

    /// [`profcodec::to_profile`]: a `.hpcrun` file is one thread's profile; a measurement folder
    /// is one profile with a context per thread. A trace alone holds no values.
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        Ok(profcodec::to_profile(input)?)
    }

    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        if input.path().is_dir() {
            return Err(OpError::Usage(
                "a measurement folder is rewritten one file at a time: name a .hpcrun or \
                 .hpctrace file"
                    .to_owned(),
            ));
        }
        let target = options
            .to
            .as_deref()
            .map(|t| t.trim_end_matches(['b', 'l']));
        if input.format() == Format::Hpctrace {
            let mut t = hpcrun::read_trace(input.bytes()).map_err(invalid)?;
            match target {
                None => {}
                Some("01.01") => t.version = hpcrun::TraceVersion::V0101B,
                Some("01.00") if t.flags == 0 => t.version = hpcrun::TraceVersion::V0100B,
                Some(to) => {
                    return Err(OpError::Usage(format!(
                        "an hpctrace file is rewritten as 01.01 (or as 01.00 when its flags are 0), not {to}"
                    )));
                }
            }
            std::fs::write(out, hpcrun::write_trace(&t))?;
            return Ok(RewriteReport::default());
        }
        let data = input.bytes();
        let (m, end) = hpcrun::read_measurement_prefix(data).map_err(invalid)?;
        let (m, mut dropped) = match target {
            None => (m, Vec::new()),
            Some(to) if to == &m.version.as_str()[..5] => (m, Vec::new()),
            Some("04.00") => hpcrun::migrate::to_v4(&m),
            Some(to) => {
                return Err(OpError::Usage(format!(
                    "an hpcrun {} file is rewritten in its own version or migrated to 04.00, not {to}",
                    m.version.as_str()
                )));
            }
        };
        if let Some(Finding::TrailingData { offset, size }) = trailing(end, data.len()) {
            dropped.push(format!(
                "{size} bytes after the end of the measurement (at byte {offset:#x})"
            ));
        }
        let bytes = hpcrun::write_measurement(&m).map_err(|e| OpError::Usage(e.to_string()))?;
        std::fs::write(out, bytes)?;
        Ok(RewriteReport {
            dropped,
            ..RewriteReport::default()
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ops::dump::{DumpLayout, DumpOptions};
    use serde_json::{Value, json};

    fn testdata_path(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/hpcrun")
            .join(name)
    }

    fn testdata(name: &str) -> Opened {
        profcodec::open(testdata_path(name)).unwrap()
    }

    const TESTDATA: [&str; 8] = [
        "demo-02.00l.hpcrun",
        "demo-01.98b.hpcrun",
        "demo-02.00b.hpcrun",
        "demo-02.00b-no-aux.hpcrun",
        "demo-03.00b.hpcrun",
        "demo-04.00b.hpcrun",
        "demo.hpctrace",
        "demo-datacentric.hpctrace",
    ];

    #[test]
    fn migration_reports_what_it_dropped_and_writes_a_valid_04_00_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.hpcrun");
        let input = testdata("demo-02.00l.hpcrun");
        let report = Hpcrun
            .rewrite(&input, &out, &RewriteOptions::to("04.00"))
            .unwrap();
        assert!(report.dropped.iter().any(|d| d.contains("vaddr")));
        let migrated = profcodec::open(&out).unwrap();
        assert!(Hpcrun.validate(&migrated).unwrap().findings.is_empty());
        let info = Hpcrun.info(&migrated).unwrap();
        assert_eq!(info.version, "04.00b");
        assert_eq!(info.details["values"], json!(6));
        assert!(matches!(
            Hpcrun.rewrite(&input, &out, &RewriteOptions::to("03.00")),
            Err(OpError::Usage(_))
        ));
    }

    #[test]
    fn every_testdata_file_rewrites_identically_and_dumps_flat_records() {
        let dir = tempfile::tempdir().unwrap();
        for name in TESTDATA {
            let input = testdata(name);
            assert!(Hpcrun.validate(&input).unwrap().findings.is_empty());
            let out = dir.path().join(name);
            let report = Hpcrun
                .rewrite(&input, &out, &RewriteOptions::default())
                .unwrap();
            assert!(report.dropped.is_empty());
            assert_eq!(std::fs::read(&out).unwrap(), input.bytes(), "{name}");
            let doc = crate::ops::dump::dump_value(&Hpcrun, &input);
            assert!(doc["header"]["version"].is_string(), "{name}");
            for line in ndjson(&input).lines().skip(1) {
                assert!(line.starts_with("{\"record\":"), "{name}: {line}");
            }
            for r in doc["records"].as_array().unwrap() {
                let r = r.as_object().unwrap();
                // Flat: no record holds an object, and keys are snake_case.
                assert!(r.values().all(|v| !v.is_object()), "{name}: {r:?}");
                assert!(
                    r.keys()
                        .all(|k| !k.contains(|c: char| c.is_ascii_uppercase() || c == ' '))
                );
            }
            let info = Hpcrun.info(&input).unwrap();
            assert!(info.details.keys().all(|k| !k.contains(' ')), "{name}");
        }
        let doc = crate::ops::dump::dump_value(&Hpcrun, &testdata("demo-04.00b.hpcrun"));
        let records = doc["records"].as_array().unwrap();
        let values: Vec<&Value> = records.iter().filter(|r| r["record"] == "value").collect();
        assert_eq!(values[3]["value"], json!(0.035));
        let node = records.iter().find(|r| r["record"] == "node").unwrap();
        assert!(node["parent"].is_null() || node["parent"].is_number());
        let tuple: Vec<&Value> = records
            .iter()
            .filter(|r| r["record"] == "id_tuple_entry")
            .collect();
        assert!(
            tuple
                .iter()
                .all(|t| t["kind"].is_string() && t["interpretation"].is_string())
        );
        let metric = records.iter().find(|r| r["record"] == "metric").unwrap();
        assert!(metric["kind"].is_string() && metric["value_format"].is_string());
    }

    #[test]
    fn trailing_bytes_are_a_finding_and_the_last_dump_record() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "demo-04.00b.hpcrun",
            "demo-02.00l.hpcrun",
            "demo-02.00b.hpcrun",
        ] {
            let mut data = std::fs::read(testdata_path(name)).unwrap();
            let end = data.len() as u64;
            data.extend_from_slice(&[0x55; 300]);
            let path = dir.path().join(name);
            std::fs::write(&path, &data).unwrap();
            let input = profcodec::open(&path).unwrap();
            let validated = Hpcrun.validate(&input).unwrap();
            assert_eq!(
                validated.findings,
                [Finding::TrailingData {
                    offset: end,
                    size: 300
                }],
                "{name}"
            );
            let doc = crate::ops::dump::dump_value(&Hpcrun, &input);
            let last = doc["records"].as_array().unwrap().last().unwrap().clone();
            assert_eq!(
                last,
                json!({"record": "trailing_data", "offset": end, "size": 300})
            );
            let out = dir.path().join(format!("out-{name}"));
            let report = Hpcrun
                .rewrite(&input, &out, &RewriteOptions::default())
                .unwrap();
            assert!(report.dropped[0].contains("300 bytes"), "{name}");
            assert_eq!(std::fs::read(&out).unwrap(), &data[..end as usize]);
        }
    }

    /// The dump as ndjson text, whose keys keep their order.
    fn ndjson(input: &Opened) -> String {
        crate::ops::dump::dump_text(&Hpcrun, input, DumpLayout::Ndjson)
    }

    fn dump_folder_value(input: &Opened, folder: &MeasurementFolder) -> Value {
        let mut out = Vec::new();
        let mut dump = Dump::new(
            &mut out,
            DumpOptions {
                layout: DumpLayout::Json,
                pretty: false,
            },
        );
        dump_folder(input, folder, &mut dump).unwrap();
        dump.finish().unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn a_file_or_a_folder_is_one_profile() {
        let demo = testdata("demo-04.00b.hpcrun");
        let profile = Hpcrun.profile(&demo).unwrap();
        assert_eq!(profile.contexts().len(), 1);
        assert!(profile.nodes().len() > 1);
        let Some(corpus) = std::env::var_os("PROFCODEC_CORPUS") else {
            return;
        };
        let dir = Path::new(&corpus).join("hpctoolkit/meas/loops-cputime-t.m");
        let opened = profcodec::open(&dir).unwrap();
        let profile = Hpcrun.profile(&opened).unwrap();
        assert_eq!(profile.contexts().len(), 4);
        let top = profile
            .top(&profcodec_profile::Query::new().value_type("CPUTIME"))
            .unwrap();
        assert_eq!(top.unit, "seconds");
        assert_eq!(top.contexts, 4);
        // The four threads' CPU time (`profcodec info` and hpcprof's database agree on it).
        assert!(
            (top.total.self_value - 3.973308).abs() < 1e-6,
            "{}",
            top.total.self_value
        );
        let trace = dir.join("testmeas-loops-000000-000-11ac0300-4974-0.hpctrace");
        let trace = profcodec::open(&trace).unwrap();
        assert!(matches!(Hpcrun.profile(&trace), Err(OpError::Usage(_))));
    }

    #[test]
    fn a_measurement_folder_is_one_input() {
        let Some(corpus) = std::env::var_os("PROFCODEC_CORPUS") else {
            return;
        };
        let dir = Path::new(&corpus).join("hpctoolkit/meas/loops-cputime-t.m");
        let folder = MeasurementFolder::open(&dir).unwrap();
        let input = profcodec::open(&dir).unwrap();
        let info = Hpcrun.info(&input).unwrap();
        assert_eq!(info.version, "04.00b");
        assert!(info.details["program"].is_string());
        assert_eq!(info.details["threads"], json!(4));
        assert_eq!(info.details["profiles"], json!(4));
        assert_eq!(info.details["traces"], json!(4));
        assert!(info.details["duration_s"].as_f64().unwrap() > 0.0);
        assert!(!info.details["metrics"].as_array().unwrap().is_empty());
        assert!(
            validate_folder(&input, &folder)
                .unwrap()
                .findings
                .is_empty()
        );
        let doc = dump_folder_value(&input, &folder);
        assert_eq!(doc["header"]["files"], json!(8));
        let records = doc["records"].as_array().unwrap();
        let files: Vec<&Value> = records.iter().filter(|r| r["record"] == "file").collect();
        assert_eq!(files.len(), 8);
        assert_eq!(files[1]["kind"], "trace");
        assert!(
            records
                .iter()
                .filter(|r| r["record"] != "file")
                .all(|r| r["file"].is_u64())
        );
        let samples = records.iter().filter(|r| r["record"] == "sample").count() as u64;
        assert_eq!(json!(samples), info.details["trace_records"]);
    }
}
