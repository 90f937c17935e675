//! The profile model (`profile` feature) judged by `Devel::StatProfiler::Report`'s aggregation
//! (`add_trace_file`, lib/Devel/StatProfiler/Report.pm at 754126d), rebuilt here over two
//! independent sources of traces:
//!
//! - for the corpus, the real reader's own dumps (`*.reader.txt`, `Devel::StatProfiler::Reader`
//!   run by `dump.pl`), parsed line by line;
//! - for `testdata/statprofiler` (no real reader output), this crate's [`TraceReader`].
//!
//! The report adds each trace's weight to `total`; prepends a `CORE::<op>` frame when the op is
//! a slow op; keys subs by `uq_sub_name` (file, full name, first line; `<file>:main` and
//! `<file>:eval` for main and eval frames); adds the weight to a sub's `exclusive` for the
//! innermost frame and to its `inclusive` once per trace (`%tracked_sub`); and per line (line >
//! 0) to the file's line exclusive (innermost frame) and line inclusive (every frame).
#![cfg(feature = "profile")]
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use profcodec_profile::{ContextFilter, GroupBy, IdKind, Profile, Query, Source};
use profcodec_statprofiler::profile::is_slow_op;
use profcodec_statprofiler::read::reader_file_name;
use profcodec_statprofiler::session::open_session;
use profcodec_statprofiler::{Frame, PerlStr, ProfileConverter, Reader, TraceReader, to_profile};
use profcodec_testkit::corpus::{corpus_subdir, files_below};

/// A frame as the real reader returns it (`Devel::StatProfiler::StackFrame` and friends).
#[derive(Debug, Clone)]
enum RFrame {
    Sub {
        fq: String,
        file: String,
        line: i32,
        first_line: i32,
    },
    Xsub {
        fq: String,
    },
    Main {
        file: String,
        line: i32,
    },
    Eval {
        file: String,
        line: i32,
    },
    /// The report's `CORE::<op>` frame.
    Core {
        op: String,
        file: String,
    },
}

impl RFrame {
    fn file(&self) -> &str {
        match self {
            RFrame::Sub { file, .. }
            | RFrame::Main { file, .. }
            | RFrame::Eval { file, .. }
            | RFrame::Core { file, .. } => file,
            RFrame::Xsub { .. } => "",
        }
    }

    fn line(&self) -> i32 {
        match self {
            RFrame::Sub { line, .. } | RFrame::Main { line, .. } | RFrame::Eval { line, .. } => {
                *line
            }
            RFrame::Xsub { .. } => -1,
            RFrame::Core { .. } => -2,
        }
    }

    /// `uq_sub_name` (Reader.pm).
    fn uq_name(&self) -> String {
        let stack_frame = |file: &str, fq: &str, first_line: i32| {
            let file = if file.is_empty() { "(unknown)" } else { file };
            if first_line > 0 {
                format!("{file}:{fq}:{first_line}")
            } else {
                format!("{file}:{fq}")
            }
        };
        match self {
            RFrame::Sub {
                fq,
                file,
                first_line,
                ..
            } => stack_frame(file, fq, *first_line),
            RFrame::Xsub { fq } => stack_frame("", fq, -1),
            RFrame::Core { op, file } => stack_frame(file, &format!("CORE::{op}"), -2),
            RFrame::Main { file, .. } => format!("{file}:main"),
            RFrame::Eval { file, .. } => format!("{file}:eval"),
        }
    }

    /// The (function, file) of the model's row for this sub, as the converter names it.
    fn row_identity(&self) -> RowIdentity {
        let file = |f: &str| (!f.is_empty()).then(|| f.to_owned());
        match self {
            RFrame::Sub {
                fq,
                file: f,
                first_line,
                ..
            } => {
                // Special blocks and anonymous subs carry their first line (`main::BEGIN@3`).
                let short = fq.rsplit("::").next().unwrap();
                let many = ["BEGIN", "UNITCHECK", "CHECK", "INIT", "END", "__ANON__"];
                // In an eval STRING, with the eval's name (`main::__ANON__@(eval 12):1`).
                let eval = f
                    .strip_prefix("qeval:")
                    .and_then(|f| f.split_once('/'))
                    .map(|(_, eval)| format!("{eval}:"));
                if *first_line > 0 && many.contains(&short) {
                    (
                        format!("{fq}@{}{first_line}", eval.unwrap_or_default()),
                        file(f),
                    )
                } else {
                    (fq.clone(), file(f))
                }
            }
            RFrame::Xsub { fq } => (fq.clone(), None),
            RFrame::Core { op, file: f } => (format!("CORE::{op}"), file(f)),
            RFrame::Main { file: f, .. } => (format!("{f}:main"), file(f)),
            RFrame::Eval { file: f, .. } => (f.clone(), file(f)),
        }
    }
}

/// A model row's identity: function and file.
type RowIdentity = (String, Option<String>);

/// A trace: weight, op name, frames innermost first.
type RTrace = (u64, String, Vec<RFrame>);

/// What the report computes.
#[derive(Debug, Default)]
struct Report {
    total: u64,
    /// By `uq_sub_name`: the row identity, exclusive, inclusive.
    subs: BTreeMap<String, (RowIdentity, u64, u64)>,
    /// By (file, line): exclusive, inclusive as the report counts it (every frame), and
    /// inclusive once per trace.
    lines: BTreeMap<(String, u32), (u64, u64, u64)>,
}

impl Report {
    fn add_trace(&mut self, (weight, op, frames): &RTrace) {
        let weight = *weight;
        self.total += weight;
        let mut frames = frames.clone();
        if is_slow_op(op.as_bytes()) {
            // `$frames->[0]->file`: the report has no frame to take it from in an empty trace.
            let file = frames
                .first()
                .map(|f| f.file().to_owned())
                .unwrap_or_default();
            frames.insert(
                0,
                RFrame::Core {
                    op: op.clone(),
                    file,
                },
            );
        }
        let mut tracked: HashSet<String> = HashSet::new();
        let mut tracked_lines: HashSet<(String, u32)> = HashSet::new();
        for (i, frame) in frames.iter().enumerate() {
            let uq = frame.uq_name();
            let sub = self
                .subs
                .entry(uq.clone())
                .or_insert_with(|| (frame.row_identity(), 0, 0));
            if tracked.insert(uq) {
                sub.2 += weight;
            }
            if i == 0 {
                sub.1 += weight;
            }
            if frame.line() > 0 {
                let key = (frame.file().to_owned(), frame.line() as u32);
                let once = tracked_lines.insert(key.clone());
                let line = self.lines.entry(key).or_default();
                line.1 += weight;
                if once {
                    line.2 += weight;
                }
                if i == 0 {
                    line.0 += weight;
                }
            }
        }
    }
}

/// Parses `dump.pl`'s output: the traces, frames innermost first.
fn parse_reader_dump(text: &str) -> Vec<RTrace> {
    fn field<'a>(line: &'a str, key: &str) -> &'a str {
        let at = line
            .find(key)
            .unwrap_or_else(|| panic!("{key} in {line:?}"))
            + key.len();
        let rest = &line[at..];
        if let Some(quoted) = rest.strip_prefix('"') {
            &quoted[..quoted.find('"').unwrap()]
        } else {
            rest.split(' ').next().unwrap()
        }
    }
    let quoted_name = |line: &str| {
        let start = line.find('"').unwrap() + 1;
        line[start..start + line[start..].find('"').unwrap()].to_owned()
    };
    let mut traces: Vec<RTrace> = Vec::new();
    for line in text.lines() {
        if line.starts_with("trace ") {
            traces.push((
                field(line, "weight=").parse().unwrap(),
                field(line, "op=").to_owned(),
                Vec::new(),
            ));
            continue;
        }
        let Some(frame) = line.strip_prefix("  ") else {
            continue;
        };
        let frames = &mut traces.last_mut().unwrap().2;
        let num = |key| field(frame, key).parse::<i32>().unwrap();
        frames.push(match frame.split(' ').next().unwrap() {
            "sub" => RFrame::Sub {
                fq: quoted_name(frame),
                file: field(frame, "file=").to_owned(),
                line: num("line="),
                first_line: num("first_line="),
            },
            "xsub" => RFrame::Xsub {
                fq: quoted_name(frame),
            },
            "main" => RFrame::Main {
                file: field(frame, "file=").to_owned(),
                line: num("line="),
            },
            "eval" => RFrame::Eval {
                file: field(frame, "file=").to_owned(),
                line: num("line="),
            },
            other => panic!("unknown frame kind {other:?} in {line:?}"),
        });
    }
    traces
}

/// The traces of a file through this crate's [`TraceReader`], in the real reader's terms.
fn crate_traces(data: &[u8]) -> Vec<RTrace> {
    let reader = Reader::from_slice(data).unwrap();
    let id = reader.header().genealogy.unwrap_or_default().id;
    let mut traces = TraceReader::new(reader);
    let mut out = Vec::new();
    // As the converter shows bytes: UTF-8, or else Latin-1.
    let text = |b: &[u8]| PerlStr::bytes(b).to_string();
    while let Some(t) = traces.next_trace().unwrap() {
        let frames = t
            .frames()
            .map(|f| match f {
                Frame::Sub {
                    package,
                    name,
                    file,
                    line,
                    first_line,
                } => RFrame::Sub {
                    fq: format!("{}::{}", text(package.bytes), text(name.bytes)),
                    file: text(&reader_file_name(file.bytes, &id)),
                    line,
                    first_line,
                },
                Frame::Xsub { package, name } => RFrame::Xsub {
                    fq: format!("{}::{}", text(package.bytes), text(name.bytes)),
                },
                Frame::Eval { file, line } => RFrame::Eval {
                    file: text(&reader_file_name(file.bytes, &id)),
                    line,
                },
                Frame::Main { file, line } => RFrame::Main {
                    file: text(file.bytes),
                    line,
                },
            })
            .collect();
        out.push((u64::from(t.weight), text(t.op_name.bytes), frames));
    }
    out
}

/// The model's answers for `filter`, checked against `report`: the total; per sub, self and
/// inclusive (grouped by function); per line, self and once-per-trace inclusive; `time` as
/// samples times the tick. Returns the number of rows compared.
fn check(
    what: &str,
    profile: &Profile,
    filter: ContextFilter,
    report: &Report,
    tick: f64,
) -> usize {
    let query = Query::new()
        .value_type("samples")
        .contexts(filter)
        .source(Source::Tree);
    let table = profile.top(&query).unwrap();
    assert_eq!(table.total.self_value, report.total as f64, "{what}: total");
    assert_eq!(
        table.total.inclusive,
        Some(report.total as f64),
        "{what}: total inclusive"
    );

    let mut want: HashMap<RowIdentity, (u64, u64)> = HashMap::new();
    for (uq, (identity, exclusive, inclusive)) in &report.subs {
        if *inclusive == 0 {
            continue;
        }
        // Two report subs in one model row would make the comparison meaningless.
        assert!(
            want.insert(identity.clone(), (*exclusive, *inclusive))
                .is_none(),
            "{what}: {uq} shares its row {identity:?} with another sub"
        );
    }
    let got: HashMap<RowIdentity, (f64, Option<f64>)> = table
        .rows
        .iter()
        .map(|r| {
            (
                (r.function.clone().unwrap(), r.file.clone()),
                (r.self_value, r.inclusive),
            )
        })
        .collect();
    assert_eq!(got.len(), table.rows.len(), "{what}: rows are distinct");
    for (identity, &(exclusive, inclusive)) in &want {
        let Some(&(s, i)) = got.get(identity) else {
            panic!("{what}: the report's sub {identity:?} is not a row");
        };
        assert_eq!(s, exclusive as f64, "{what}: exclusive of {identity:?}");
        assert_eq!(
            i,
            Some(inclusive as f64),
            "{what}: inclusive of {identity:?}"
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: rows beyond the report's subs"
    );

    // Per line: rows of frames with a line (XSUBs and slow ops have none and keep their
    // function rows).
    let lines = profile.top(&query.clone().group(GroupBy::Line)).unwrap();
    let mut line_rows = 0;
    for row in lines.rows.iter().filter(|r| r.line.is_some()) {
        let key = (row.file.clone().unwrap(), row.line.unwrap());
        let Some(&(exclusive, _, once)) = report.lines.get(&key) else {
            panic!("{what}: line row {key:?} is not in the report");
        };
        assert_eq!(row.self_value, exclusive as f64, "{what}: line {key:?}");
        assert_eq!(row.inclusive, Some(once as f64), "{what}: line {key:?}");
        line_rows += 1;
    }
    assert_eq!(
        line_rows,
        report.lines.values().filter(|l| l.1 > 0).count(),
        "{what}: line rows"
    );

    let time = profile
        .top(&Query {
            value_type: Some("time".into()),
            ..query
        })
        .unwrap();
    assert_eq!(time.total.self_value, report.total as f64 * tick, "{what}");
    assert_eq!(time.unit, "microseconds");
    want.len()
}

fn corpus_files() -> Option<Vec<PathBuf>> {
    let dir = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler")?;
    let files: Vec<PathBuf> = files_below(&dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name.starts_with("statprof.out.") || name == "profile.bin")
                && !name.ends_with(".reader.txt")
        })
        .collect();
    assert!(files.len() >= 8, "expected the 8 corpus files: {files:?}");
    Some(files)
}

fn reader_dump_of(file: &Path) -> Vec<RTrace> {
    let mut path = file.to_path_buf().into_os_string();
    path.push(".reader.txt");
    parse_reader_dump(&std::fs::read_to_string(path).unwrap())
}

fn report_of<'a>(traces: impl IntoIterator<Item = &'a RTrace>) -> Report {
    let mut report = Report::default();
    for t in traces {
        report.add_trace(t);
    }
    report
}

/// Every corpus file: the model equals the report computed from the real reader's dump, and
/// the same report computed from this crate's trace reader.
#[test]
fn every_corpus_file_equals_the_report_over_the_real_readers_traces() {
    let Some(files) = corpus_files() else {
        return;
    };
    let mut rows = 0;
    let mut slow = 0;
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let real = reader_dump_of(file);
        let ours = crate_traces(&data);
        assert_eq!(real.len(), ours.len(), "{}", file.display());
        let profile = to_profile(&data).unwrap();
        let what = file.display().to_string();
        let report = report_of(&real);
        slow += report.subs.keys().filter(|k| k.contains(":CORE::")).count();
        rows += check(&what, &profile, ContextFilter::Whole, &report, 1000.0);
        check(
            &what,
            &profile,
            ContextFilter::Whole,
            &report_of(&ours),
            1000.0,
        );
        // One context: the file's process, named after its program.
        assert_eq!(profile.contexts().len(), 1, "{what}");
        let pid = Reader::from_slice(&data)
            .unwrap()
            .header()
            .genealogy
            .unwrap()
            .id
            .words()[0];
        let (context, _) = profile.contexts().next().unwrap();
        assert!(
            profile
                .context_label(context)
                .starts_with(&format!("process {pid} (progs/")),
            "{what}: {}",
            profile.context_label(context)
        );
    }
    // The corpus holds subs, XSUBs, evals, mains and slow ops (sort, waitpid).
    assert!(rows > 20, "{rows} rows compared");
    assert!(slow >= 2, "{slow} slow-op frames");
}

/// The fork session as one profile: one context per process; each equals the report over its
/// process's files, and the whole equals the report over every file (`mixed_process`).
#[test]
fn the_fork_session_has_one_context_per_process() {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler") else {
        return;
    };
    let procs = open_session(&dir.join("fork")).unwrap();
    assert_eq!(procs.len(), 2);
    let mut converter = ProfileConverter::new();
    let mut all = Vec::new();
    let mut per_process = Vec::new();
    for process in &procs {
        let mut traces = Vec::new();
        for f in &process.files {
            converter
                .add_file(&std::fs::read(&f.path).unwrap())
                .unwrap();
            traces.extend(reader_dump_of(&f.path));
        }
        all.extend(traces.iter().cloned());
        per_process.push((process.id.words()[0], traces));
    }
    let profile = converter.finish();
    assert_eq!(profile.contexts().len(), 2);
    for (pid, traces) in &per_process {
        let filter = ContextFilter::Matching(vec![(IdKind::Process, u64::from(*pid))]);
        check(
            &format!("fork process {pid}"),
            &profile,
            filter,
            &report_of(traces),
            1000.0,
        );
    }
    check(
        "fork session",
        &profile,
        ContextFilter::Whole,
        &report_of(&all),
        1000.0,
    );
}

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/statprofiler")
        .join(name)
}

/// The files of `testdata/statprofiler` (every record kind, a session with rotations, a fork and
/// a file still open): the model equals the report over this crate's traces.
#[test]
fn testdata_equals_the_report_over_the_crates_traces() {
    for name in ["features.statprof", "features.plain.statprof"] {
        let data = std::fs::read(testdata(name)).unwrap();
        let profile = to_profile(&data).unwrap();
        let tick = f64::from(
            Reader::from_slice(&data)
                .unwrap()
                .header()
                .tick_duration_us
                .unwrap(),
        );
        check(
            name,
            &profile,
            ContextFilter::Whole,
            &report_of(&crate_traces(&data)),
            tick,
        );
    }
    let procs = open_session(&testdata("session")).unwrap();
    assert_eq!(procs.len(), 3);
    let mut converter = ProfileConverter::new();
    let mut all = Vec::new();
    let mut tick = 0.0;
    for process in &procs {
        for f in &process.files {
            let data = std::fs::read(&f.path).unwrap();
            tick = f64::from(f.header.tick_duration_us.unwrap());
            converter.add_file(&data).unwrap();
            all.extend(crate_traces(&data));
        }
    }
    let profile = converter.finish();
    assert_eq!(profile.contexts().len(), 3);
    check(
        "session",
        &profile,
        ContextFilter::Whole,
        &report_of(&all),
        tick,
    );
}

/// Without slow-op frames, every sample keeps its stack as stored: no `CORE::` row.
#[test]
fn slow_op_frames_can_be_turned_off() {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler") else {
        return;
    };
    let file = files_below(&dir.join("xsubs"))
        .into_iter()
        .find(|p| !p.to_string_lossy().ends_with(".txt"))
        .unwrap();
    let data = std::fs::read(file).unwrap();
    let mut converter = ProfileConverter::new();
    converter.set_slow_op_frames(false);
    converter.add_file(&data).unwrap();
    let without = converter.finish();
    let with = to_profile(&data).unwrap();
    let query = Query::new().value_type("samples");
    let rows = |p: &Profile| {
        p.top(&query)
            .unwrap()
            .rows
            .iter()
            .map(|r| r.name.clone())
            .collect::<Vec<_>>()
    };
    assert!(rows(&with).iter().any(|n| n == "CORE::sort"));
    assert!(rows(&without).iter().all(|n| !n.starts_with("CORE::")));
    assert_eq!(
        with.top(&query).unwrap().total,
        without.top(&query).unwrap().total
    );
}

/// A damaged file: an error with the file offset, and what was read before stays converted.
#[test]
fn a_cut_file_keeps_the_samples_before_the_cut() {
    let data = std::fs::read(testdata("features.plain.statprof")).unwrap();
    let cut = &data[..data.len() - 20];
    let mut converter = ProfileConverter::new();
    let err = converter.add_file(cut).unwrap_err();
    assert!(err.offset().is_some(), "{err}");
    let profile = converter.finish();
    let total = profile
        .top(&Query::new().value_type("samples"))
        .unwrap()
        .total
        .self_value;
    let full = to_profile(&data)
        .unwrap()
        .top(&Query::new().value_type("samples"))
        .unwrap()
        .total
        .self_value;
    assert!(total > 0.0 && total <= full, "{total} of {full}");
}
