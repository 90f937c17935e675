//! Timelines of any input (`profcodec::timeline`):
//!
//! - the Chrome JSON output of every corpus timeline, whatever its format, loads in the real
//!   speedscope app (npm `speedscope`, in headless Chromium), which imports Chrome's trace-event
//!   format;
//! - an input that would cost far more output than its size is refused with `validate`'s error:
//!   an HPCToolkit trace.db whose lines all point at one line's samples (50,904 bytes were
//!   4.85 GB of Chrome JSON), by both writers before any event;
//! - the corpus' EasyProfiler capture: its int arrays are JSON arrays in Chrome's JSON and array
//!   annotations in Perfetto, each worker's counters a series of their own, its threads in
//!   thread id order;
//! - the corpus' sampled traces (HPCToolkit databases, hpcrun measurements) with the capture in
//!   one trace: no two lanes share a (pid, tid), no group takes the capture's pid, and each
//!   rank's lines come in THREAD order (GPU streams after);
//! - a capture whose pid is the one a rank group would take keeps it; the group takes another.
//!
//! The browser harness is the one the exporters' tests use (`profcodec_testkit::speedscope`):
//! `cargo xtask test` installs the app and Chromium and names them in the environment. Outside
//! the xtask this test writes the outputs, checks that they are JSON, and says the browser
//! check was not run.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec::timeline::{Error, Filter, Format, TimelineWriter, add_path};

fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = vec![
        root.join("testdata/hpctoolkit/demo.d"),
        root.join("testdata/easyprofiler/small_v210.prof"),
    ];
    if let Some(c) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        for p in profcodec_testkit::corpus::files_below(&c) {
            let Some(dir) = p.parent() else { continue };
            match p.extension().and_then(|e| e.to_str()) {
                Some("prof") => inputs.push(p.clone()),
                Some("db") if p.file_name().is_some_and(|n| n == "trace.db") => {
                    inputs.push(dir.to_path_buf())
                }
                Some("hpctrace") if !inputs.iter().any(|i| i == dir) => {
                    inputs.push(dir.to_path_buf())
                }
                _ => {}
            }
        }
    }
    inputs
}

#[test]
fn chrome_output_loads_in_speedscope() {
    use profcodec_testkit::speedscope::{IMPORTED_NAME, Speedscope};
    let speedscope = Speedscope::from_env();
    assert!(
        speedscope.is_some() || std::env::var_os("PROFCODEC_EXPORT_CONSUMERS").is_none(),
        "the speedscope app is not named under the xtask"
    );
    let tmp = tempfile::tempdir().unwrap();
    for input in inputs() {
        let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
        add_path(&mut w, &input).unwrap();
        let json = w.finish().unwrap();
        serde_json::from_slice::<serde_json::Value>(&json).unwrap();
        let Some(speedscope) = &speedscope else {
            continue;
        };
        let file = tmp.path().join("trace.json");
        std::fs::write(&file, &json).unwrap();
        let rendered = speedscope.load(&file, tmp.path()).unwrap();
        // speedscope names an imported Chrome trace after the URL it was served from.
        assert!(
            rendered.shows(IMPORTED_NAME),
            "{}: speedscope shows {:?}",
            input.display(),
            rendered.title
        );
    }
}

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("profcodec-timeline-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    dir
}

#[test]
fn aliased_trace_lines_are_refused_by_both_writers() {
    let demo = testdata("hpctoolkit/demo.d");
    let dir = temp_dir("aliased-trace");
    profcodec_benches::hostile::write_hpctoolkit_aliased_database(&demo, &dir, 1000).unwrap();
    let bytes = std::fs::read(dir.join("trace.db")).unwrap();
    let expected = profcodec::hpctoolkit::Database::open(&dir)
        .unwrap()
        .validate()
        .expect_err("validate refuses aliased lines")
        .to_string();
    assert!(
        expected.starts_with("data used twice: trace.db CTH.pStart"),
        "{expected}"
    );
    let at = profcodec::hpctoolkit::TraceDb::parse(&bytes)
        .unwrap()
        .trace(1)
        .unwrap()
        .offset
        + 8;
    assert!(expected.contains(&format!("at byte {at:#x}")), "{expected}");

    for format in [Format::Chrome, Format::Perfetto] {
        let mut w = TimelineWriter::new(Vec::new(), format, Filter::new());
        let e = add_path(&mut w, &dir).expect_err("aliased lines");
        assert!(
            matches!(&e, Error::Input { source, .. } if source.is::<profcodec::hpctoolkit::Error>()),
            "{e:?}"
        );
        assert_eq!(e.to_string(), format!("{}: {expected}", dir.display()));
        // Nothing was written before the error: the finished trace is an empty one.
        let out = w.finish().unwrap();
        let empty = TimelineWriter::new(Vec::new(), format, Filter::new())
            .finish()
            .unwrap();
        assert_eq!(out, empty, "{format:?}");
    }
    // demo.d's own trace.db converts.
    std::fs::copy(demo.join("trace.db"), dir.join("trace.db")).unwrap();
    let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
    assert!(add_path(&mut w, &dir).unwrap().slices > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The events of a Chrome trace.
fn chrome_events(json: &[u8]) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    v["traceEvents"].as_array().unwrap().clone()
}

/// `inputs` written as one trace in `format`.
fn trace_of(inputs: &[PathBuf], format: Format) -> Vec<u8> {
    let mut w = TimelineWriter::new(Vec::new(), format, Filter::new());
    for input in inputs {
        add_path(&mut w, input).unwrap();
    }
    w.finish().unwrap()
}

/// The EasyProfiler 2.1.0 capture of the corpus: four threads, three workers recording the same
/// values, an int array among them.
fn sample_v210() -> Option<PathBuf> {
    let dir = profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler")?;
    Some(dir.join("sample_v210_rdtsc.prof"))
}

#[test]
fn easyprofiler_arrays_are_arrays_and_counters_keep_their_thread() {
    use profcodec::easyprofiler::{DataType, RecordRef, ValueData};
    let Some(path) = sample_v210() else {
        eprintln!("no corpus: skipped");
        return;
    };
    // The capture's arrays, as its reader decodes them: (tid, time ns) -> elements.
    let bytes = std::fs::read(&path).unwrap();
    let view = profcodec::easyprofiler::parse(&bytes).unwrap();
    let walk = view.walk().unwrap();
    let mut arrays = std::collections::BTreeMap::new();
    for (t, thread) in walk.threads.iter().enumerate() {
        for flat in walk.flat(t) {
            let n = flat.block;
            if let Ok(RecordRef::Value { head, data }) = view.record_at(n.offset)
                && head.is_array != 0
                && let Some(ValueData::Int32(v)) =
                    DataType::from_u8(head.data_type).map(|ty| ValueData::decode(ty, data))
            {
                arrays.insert((thread.id as i64, n.end), serde_json::json!(v));
            }
        }
    }
    assert!(arrays.len() >= 3, "the capture's int arrays: {arrays:?}");

    let events = chrome_events(&trace_of(std::slice::from_ref(&path), Format::Chrome));
    let mut shown = std::collections::BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["ph"] == "i" && e["name"] == "arr")
    {
        let ts = (e["ts"].as_f64().unwrap() * 1000.0).round() as u64;
        shown.insert((e["tid"].as_i64().unwrap(), ts), e["args"]["value"].clone());
    }
    assert_eq!(shown, arrays, "the arrays as JSON arrays, on their threads");

    // Each worker's counters are a series of their own: on the worker's lane, with its id.
    let mut series: std::collections::BTreeMap<(String, i64), usize> = Default::default();
    for e in events.iter().filter(|e| e["ph"] == "C") {
        let tid = e["tid"].as_i64().unwrap();
        assert_eq!(e["id"], tid.to_string(), "{e}");
        *series
            .entry((e["name"].as_str().unwrap().to_owned(), tid))
            .or_default() += 1;
    }
    let workers: std::collections::BTreeSet<i64> = walk
        .threads
        .iter()
        .filter(|t| t.name.to_string().starts_with("Worker"))
        .map(|t| t.id as i64)
        .collect();
    assert_eq!(workers.len(), 3);
    let frame_no: std::collections::BTreeSet<i64> = series
        .keys()
        .filter(|(name, _)| name == "frame_no")
        .map(|&(_, tid)| tid)
        .collect();
    assert_eq!(frame_no, workers, "one frame_no series per worker");

    // Perfetto: the thread descriptors in thread id order, the root track asking for that
    // order, the arrays as array annotations (Perfetto's own classes, when the venv is there).
    if let Some(d) = profcodec_testkit::timeline::decoded(&trace_of(&[path], Format::Perfetto)) {
        assert_eq!(d["root"]["thread_ordering"], 1);
        let threads: Vec<(i64, i64)> = d["tracks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"] == "thread")
            .map(|t| (t["tid"].as_i64().unwrap(), t["order"].as_i64().unwrap()))
            .collect();
        assert_eq!(threads.len(), 4);
        assert!(
            threads
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1),
            "{threads:?}"
        );
        let uuids: std::collections::HashMap<u64, i64> = d["tracks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"] == "thread")
            .map(|t| (t["uuid"].as_u64().unwrap(), t["tid"].as_i64().unwrap()))
            .collect();
        let mut shown = std::collections::BTreeMap::new();
        for i in d["instants"].as_array().unwrap() {
            if i["name"] == "arr" {
                let tid = uuids[&i["track"].as_u64().unwrap()];
                shown.insert((tid, i["ts"].as_u64().unwrap()), i["args"]["value"].clone());
            }
        }
        assert_eq!(shown, arrays);
    }
}

/// The corpus' sampled traces: HPCToolkit databases with a trace.db and hpcrun measurements
/// with .hpctrace files.
fn sampled_traces() -> Vec<PathBuf> {
    inputs().into_iter().filter(|p| p.is_dir()).collect()
}

#[test]
fn sampled_lines_come_in_thread_order_and_lanes_never_share_an_id() {
    use std::collections::{BTreeMap, BTreeSet};
    let traces = sampled_traces();
    // Every sampled trace and the EasyProfiler capture in one trace, the capture first (its
    // real pid and tids are known before any lane is invented).
    let mut all: Vec<PathBuf> = sample_v210().into_iter().collect();
    all.extend(traces.iter().cloned());
    let events = chrome_events(&trace_of(&all, Format::Chrome));
    let mut lanes: BTreeMap<(i64, i64), String> = BTreeMap::new();
    let mut processes: BTreeMap<i64, String> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "M") {
        let (pid, tid) = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        let name = e["args"]["name"].as_str().unwrap_or_default().to_owned();
        match e["name"].as_str().unwrap() {
            "thread_name" => {
                let old = lanes.insert((pid, tid), name.clone());
                assert!(old.is_none(), "lane {pid}/{tid} named {old:?} and {name:?}");
            }
            "process_name" => {
                let old = processes.insert(pid, name.clone());
                assert!(old.is_none(), "process {pid} named {old:?} and {name:?}");
            }
            _ => {}
        }
    }
    // Every event is on a lane the trace named (a counter on its thread's).
    for e in events
        .iter()
        .filter(|e| matches!(e["ph"].as_str(), Some("B" | "i" | "C")))
    {
        let lane = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        assert!(lanes.contains_key(&lane), "{e}");
    }
    if let Some(capture) = all
        .first()
        .filter(|p| p.extension().is_some_and(|e| e == "prof"))
    {
        let bytes = std::fs::read(capture).unwrap();
        let view = profcodec::easyprofiler::parse(&bytes).unwrap();
        let pid = view.header().pid as i64;
        let real: BTreeSet<i64> = view
            .walk()
            .unwrap()
            .threads
            .iter()
            .map(|t| t.id as i64)
            .collect();
        let invented: Vec<&(i64, i64)> = lanes
            .keys()
            .filter(|(p, t)| *p == pid && !real.contains(t))
            .collect();
        assert!(!invented.is_empty(), "the capture's own lanes");
        assert_eq!(
            processes.keys().filter(|&&p| p == pid).count(),
            1,
            "no group took the capture's pid"
        );
    }

    // Perfetto: within each rank, the lines with a THREAD identifier in its order, the others
    // after.
    for trace in &traces {
        let Some(d) = profcodec_testkit::timeline::decoded(&trace_of(
            std::slice::from_ref(trace),
            Format::Perfetto,
        )) else {
            return;
        };
        let tracks = d["tracks"].as_array().unwrap();
        let mut children: BTreeMap<u64, Vec<(i64, Option<u64>)>> = BTreeMap::new();
        for t in tracks.iter().filter(|t| !t["parent"].is_null()) {
            let name = t["name"].as_str().unwrap();
            let thread = name.split(" / ").find_map(|id| {
                id.strip_prefix("THREAD ")
                    .and_then(|n| n.parse::<u64>().ok())
            });
            children
                .entry(t["parent"].as_u64().unwrap())
                .or_default()
                .push((t["order"].as_i64().unwrap(), thread));
        }
        for (parent, mut lines) in children {
            lines.sort_by_key(|l| l.0);
            let threads: Vec<(bool, Option<u64>)> =
                lines.iter().map(|l| (l.1.is_none(), l.1)).collect();
            let mut sorted = threads.clone();
            sorted.sort();
            assert_eq!(threads, sorted, "{}: rank track {parent}", trace.display());
            // Shown in that order as they come, too.
            let ranks: Vec<i64> = lines.iter().map(|l| l.0).collect();
            assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
        }
    }
}

#[test]
fn a_group_never_takes_a_capture_pid() {
    // A capture whose pid is the one the first rank group of a trace would take (2^31 - 1):
    // the group takes the next below, the capture keeps its own.
    use profcodec::easyprofiler::{Capture, Convention, Descriptor, Record, RecordBody, Thread};
    let pid = i64::from(i32::MAX);
    let mut c = Capture {
        version: profcodec::easyprofiler::Version::V2_1_0,
        pid: pid as u64,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: 10,
        descriptors: vec![Some(Box::new(Descriptor {
            id: 0,
            line: 1,
            color: 0,
            block_type: 1,
            status: 1,
            name: b"b".to_vec(),
            file: b"f.cpp".to_vec(),
        }))],
        threads: vec![Thread {
            id: 2,
            name: Some(b"main".to_vec()),
            context_switches: Vec::new(),
            records: vec![Record {
                begin: 1,
                end: 2,
                descriptor: 0,
                body: RecordBody::Named(Vec::new()),
            }],
        }],
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    let dir = temp_dir("group-pid");
    let capture = dir.join("top.prof");
    std::fs::write(&capture, c.to_bytes().unwrap()).unwrap();
    let events = chrome_events(&trace_of(
        &[capture, testdata("hpctoolkit/demo.d")],
        Format::Chrome,
    ));
    let processes: Vec<(i64, &str)> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_i64().unwrap(),
                e["args"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(processes[0], (pid, "EasyProfiler capture (pid 2147483647)"));
    assert!(
        processes[1..]
            .iter()
            .all(|p| p.0 != pid && p.1.starts_with("rank ")),
        "{processes:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
