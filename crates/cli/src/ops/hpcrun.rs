//! `profcodec` CLI operations for hpcrun measurements (`.hpcrun`) and traces (`.hpctrace`)
//! (profcodec-hpcrun).

use std::path::Path;

use profcodec_hpcrun as hpcrun;
use serde_json::{Map, Value, json};

use super::dump::Dump;
use super::{Codec, Info, OpError, RewriteOptions, RewriteReport, Validated, write_json};
use profcodec::{Format, Opened};

/// The hpcrun codec: both file kinds of an hpcrun measurement directory.
pub(super) struct Hpcrun;

fn invalid(e: hpcrun::Error) -> OpError {
    OpError::invalid(e, e.offset())
}

fn measurement(input: &Opened) -> Result<hpcrun::Measurement, OpError> {
    hpcrun::read_measurement(input.bytes()).map_err(invalid)
}

fn trace(input: &Opened) -> Result<hpcrun::Trace, OpError> {
    hpcrun::read_trace(input.bytes()).map_err(invalid)
}

fn measurement_info(m: &hpcrun::Measurement) -> Map<String, Value> {
    let mut d = Map::new();
    if let Some(name) = m.header_value("program-name") {
        d.insert("program".into(), json!(name.to_string()));
    }
    d.insert("header pairs".into(), json!(m.header.len()));
    if m.version.has_epochs() {
        d.insert("epochs".into(), json!(m.epochs.len()));
    }
    let sum = |f: fn(&hpcrun::Epoch) -> usize| m.epochs.iter().map(f).sum::<usize>();
    d.insert("metrics".into(), json!(sum(|e| e.metrics.len())));
    d.insert("load modules".into(), json!(sum(|e| e.loadmap.len())));
    d.insert("cct nodes".into(), json!(sum(|e| e.cct.len())));
    if let Some(s) = &m.sparse {
        d.insert("sparse values".into(), json!(s.values.len()));
        d.insert("contexts with values".into(), json!(s.contexts.len()));
        let tuple: Vec<String> = s
            .id_tuple
            .iter()
            .map(|id| {
                let kind = m
                    .dictionary
                    .iter()
                    .find(|d| d.kind == id.kind_id())
                    .map_or_else(|| id.kind_id().to_string(), |d| d.name.to_string());
                format!("{kind} {}", id.logical)
            })
            .collect();
        d.insert("id tuple".into(), json!(tuple.join(", ")));
    } else {
        d.insert("dense values".into(), json!(sum(|e| e.values.len())));
    }
    d
}

fn typed(v: hpcrun::MetricValue) -> Value {
    match v {
        hpcrun::MetricValue::Int(i) => json!(i),
        hpcrun::MetricValue::Real(r) => json!(r),
    }
}

/// The model as JSON, with metric values typed by their metric's value format (the model keeps
/// the raw bits): dense `values` become numbers, sparse `{value, metric}` pairs get a typed
/// `value`.
fn typed_dump(m: &hpcrun::Measurement) -> Result<Value, OpError> {
    let mut doc = serde_json::to_value(m).map_err(std::io::Error::other)?;
    for (e, epoch) in m.epochs.iter().enumerate() {
        let nm = epoch.metrics.len().max(1);
        let typed_values: Vec<Value> = (0..epoch.values.len())
            .filter_map(|i| epoch.value(i / nm, i % nm).map(typed))
            .collect();
        doc["epochs"][e]["values"] = Value::Array(typed_values);
    }
    if let Some(sparse) = &m.sparse {
        let metrics = m.epochs.first().map_or(&[][..], |e| &e.metrics[..]);
        let values: Vec<Value> = sparse
            .values
            .iter()
            .map(|v| {
                let format = metrics
                    .get(v.metric as usize)
                    .map_or(hpcrun::ValueFormat::Unknown, hpcrun::MetricDesc::value_format);
                json!({"metric": v.metric, "value": typed(hpcrun::MetricValue::from_bits(v.value, format))})
            })
            .collect();
        doc["sparse"]["values"] = Value::Array(values);
    }
    Ok(doc)
}

impl Codec for Hpcrun {
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        if input.format() == Format::Hpctrace {
            let t = trace(input)?;
            let mut d = Map::new();
            d.insert("flags".into(), json!(format!("{:#x}", t.flags)));
            d.insert("data-centric".into(), json!(t.is_data_centric()));
            d.insert("records".into(), json!(t.records.len()));
            if let (Some(a), Some(b)) = (t.records.first(), t.records.last()) {
                d.insert("first time (ns)".into(), json!(a.time));
                d.insert("last time (ns)".into(), json!(b.time));
            }
            let version = String::from_utf8_lossy(&t.version.magic()[18..]).into_owned();
            return Ok(Info {
                format: input.format(),
                version,
                details: d,
            });
        }
        let m = measurement(input)?;
        Ok(Info {
            format: input.format(),
            version: m.version.as_str().to_owned(),
            details: measurement_info(&m),
        })
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        // Findings (trailing data) are not reported yet by this format.
        let checked = || -> Result<(), OpError> {
            let data = input.bytes();
            if input.format() == Format::Hpctrace {
                return hpcrun::TraceView::parse(data)
                    .and_then(|v| v.validate())
                    .map_err(invalid);
            }
            if hpcrun::detect_version(data).map_err(invalid)? == hpcrun::Version::V0400B {
                return hpcrun::V4View::parse(data)
                    .and_then(|v| v.validate())
                    .map_err(invalid);
            }
            measurement(input).map(drop)
        };
        checked().map(|()| Validated::default())
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        // The whole document as one record until this format streams its records.
        let mut buf = Vec::new();
        let out: &mut dyn std::io::Write = &mut buf;
        let mut whole = || -> Result<(), OpError> {
            if input.format() == Format::Hpctrace {
                return write_json(out, &trace(input)?);
            }
            let m = measurement(input)?;
            write_json(out, &typed_dump(&m)?)
        };
        whole()?;
        let value: serde_json::Value =
            serde_json::from_slice(&buf).map_err(std::io::Error::other)?;
        dump.record(&value)
    }

    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        let target = options
            .to
            .as_deref()
            .map(|t| t.trim_end_matches(['b', 'l']));
        if input.format() == Format::Hpctrace {
            let mut t = trace(input)?;
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
        let m = measurement(input)?;
        let (m, dropped) = match target {
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

    fn testdata(name: &str) -> Opened {
        profcodec::open(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../testdata/hpcrun")
                .join(name),
        )
        .unwrap()
    }

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
        Hpcrun.validate(&migrated).unwrap();
        let info = Hpcrun.info(&migrated).unwrap();
        assert_eq!(info.version, "04.00b");
        assert_eq!(info.details["sparse values"], json!(6));
        assert!(matches!(
            Hpcrun.rewrite(&input, &out, &RewriteOptions::to("03.00")),
            Err(OpError::Usage(_))
        ));
    }

    #[test]
    fn every_testdata_file_rewrites_identically_and_dumps() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "demo-02.00l.hpcrun",
            "demo-01.98b.hpcrun",
            "demo-02.00b.hpcrun",
            "demo-02.00b-no-aux.hpcrun",
            "demo-03.00b.hpcrun",
            "demo-04.00b.hpcrun",
            "demo.hpctrace",
            "demo-datacentric.hpctrace",
        ] {
            let input = testdata(name);
            Hpcrun.validate(&input).unwrap();
            let out = dir.path().join(name);
            let report = Hpcrun
                .rewrite(&input, &out, &RewriteOptions::default())
                .unwrap();
            assert!(report.dropped.is_empty());
            assert_eq!(std::fs::read(&out).unwrap(), input.bytes(), "{name}");
            let doc = crate::ops::dump::dump_value(&Hpcrun, &input);
            assert!(doc["records"][0].get("version").is_some(), "{name}");
        }
        let doc = crate::ops::dump::dump_value(&Hpcrun, &testdata("demo-04.00b.hpcrun"));
        assert_eq!(
            doc["records"][0]["sparse"]["values"][3]["value"],
            json!(0.035)
        );
    }
}
