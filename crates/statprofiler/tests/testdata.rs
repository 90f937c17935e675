//! The files of `testdata/statprofiler/`, made by this crate's writer (this file holds the
//! generator: `STATPROF_REGENERATE=1 cargo test -p profcodec-statprofiler --test testdata`
//! rewrites them), checked against what they must contain.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use profcodec_statprofiler::session::open_session;
use profcodec_statprofiler::{
    Container, Frame, Genealogy, Header, OwnedRecord, PerlString, PerlVersion, ProcessId, Profile,
    Reader, Record, SessionWriter, TraceReader, text,
};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/statprofiler")
}

fn p(s: &str) -> PerlString {
    PerlString::new(s)
}

fn sample(weight: u32, op: &str, frames: Vec<Frame<PerlString>>) -> Vec<OwnedRecord> {
    let mut v = vec![Record::SampleStart {
        weight,
        op_name: p(op),
    }];
    v.extend(frames.into_iter().map(Record::Frame));
    v.push(Record::SampleEnd { skipped: vec![] });
    v
}

fn sub(pkg: &str, name: &str, file: &str, line: i32, first: i32) -> Frame<PerlString> {
    Frame::Sub {
        package: p(pkg),
        name: p(name),
        file: p(file),
        line,
        first_line: first,
    }
}

fn main_frame(file: &str, line: i32) -> Frame<PerlString> {
    Frame::Main {
        file: p(file),
        line,
    }
}

fn header(id: u32, ordinal: u32, parent: Option<(u32, u32)>) -> Header {
    Header {
        perl_version: Some(PerlVersion {
            revision: 5,
            version: 36,
            subversion: 0,
        }),
        tick_duration_us: Some(1000),
        stack_depth: Some(20),
        genealogy: Some(Genealogy {
            ordinal,
            parent_ordinal: parent.map_or(0, |p| p.1),
            id: ProcessId::from_words([id, 2, 0x6b02_6e8d, 0x1111, 0x2222, 0x3333]),
            parent_id: parent.map_or(ProcessId::default(), |p| {
                ProcessId::from_words([p.0, 2, 0x6b02_6e8d, 0x1111, 0x2222, 0x3333])
            }),
        }),
        metadata: vec![],
    }
}

/// A file using every record the profiler writes, and one it never writes (tag 7).
fn features() -> Profile {
    let mut h = header(0x7e00, 1, None);
    h.metadata = vec![
        (p("host"), p("build-01")),
        (PerlString::utf8("clé"), PerlString::utf8("välue")),
    ];
    let mut r: Vec<OwnedRecord> = Vec::new();
    // The synthetic empty sample the profiler writes after header metadata (T:1170-1181).
    r.extend(sample(0, "", vec![]));
    r.extend(sample(
        3,
        "add",
        vec![
            sub("main", "inner", "t/prog.pl", 3, 3),
            sub("main", "outer", "t/prog.pl", 5, 5),
            main_frame("t/prog.pl", 9),
        ],
    ));
    r.extend(sample(
        1,
        "_xsub",
        vec![
            Frame::Xsub {
                package: p("Digest::MD5"),
                name: p("md5_hex"),
            },
            main_frame("t/prog.pl", 11),
        ],
    ));
    // An eval source written inside a sample, between frames.
    r.push(Record::SampleStart {
        weight: 2,
        op_name: p("iter"),
    });
    r.push(Record::Frame(Frame::Eval {
        file: p("(eval 12)"),
        line: 1,
    }));
    r.push(Record::EvalSource {
        source: p("my $c = CODE(0x55d0c0ffee); $c->()"),
        seq: 12,
    });
    r.push(Record::Frame(main_frame("t/prog.pl", 14)));
    r.push(Record::SampleEnd { skipped: vec![] });
    // A BEGIN block: the real reader drops the main frame after it.
    r.extend(sample(
        1,
        "require",
        vec![
            sub("main", "BEGIN", "t/prog.pl", 2, -1),
            main_frame("t/prog.pl", 2),
        ],
    ));
    r.push(Record::SectionStart { name: p("request") });
    r.push(Record::SectionStart { name: p("db") });
    r.push(Record::Metadata {
        key: p("request_id"),
        value: p("42"),
    });
    r.extend(sample(
        5,
        "entersub",
        vec![
            sub("DB", "query", "lib/DB.pm", 120, 118),
            sub("main", "handler", "(eval 12)", 1, 1),
            main_frame("t/prog.pl", 20),
        ],
    ));
    r.push(Record::SectionEnd { name: p("db") });
    r.push(Record::SectionEnd { name: p("request") });
    r.extend(sample(0, "", vec![]));
    r.push(Record::Unknown {
        tag: 7,
        payload: b"obsolete".to_vec(),
    });
    r.push(Record::EvalSource {
        source: PerlString {
            flags: 0,
            bytes: b"\"k\xe9y\" => 1".to_vec(),
        },
        seq: 13,
    });
    r.extend(sample(
        2,
        "const",
        vec![sub("main", "with_big_line", "t/prog.pl", 300_000_000, -1)],
    ));
    r.push(Record::StreamEnd);
    Profile {
        container: Container::Snappy,
        header: h,
        records: r,
    }
}

fn busy_samples(n: u32, line: i32) -> Vec<OwnedRecord> {
    (0..n)
        .flat_map(|i| {
            sample(
                1 + i % 3,
                ["add", "iter", "gvsv"][(i % 3) as usize],
                vec![
                    sub("main", "work", "t/fork.pl", 3, 3),
                    main_frame("t/fork.pl", line),
                ],
            )
        })
        .collect()
}

/// A session: a parent rotating by size (3 files), a forked child, and a child file still open.
fn write_session(dir: &Path) -> Vec<PathBuf> {
    let template = dir.join("session/statprof.out");
    std::fs::create_dir_all(template.parent().unwrap()).unwrap();
    let h = header(0x7f92, 1, None);
    let g = h.genealogy.unwrap();
    let mut parent = SessionWriter::new(&template, &h, g, Container::Snappy, 600).unwrap();
    for r in busy_samples(60, 4) {
        parent.write(&r).unwrap();
    }
    let mut files = parent.finish().unwrap();
    let hc = header(0x7fa8, 1, Some((0x7f92, 1)));
    let mut child = SessionWriter::new(
        &template,
        &hc,
        hc.genealogy.unwrap(),
        Container::Snappy,
        1 << 20,
    )
    .unwrap();
    for r in busy_samples(10, 8) {
        child.write(&r).unwrap();
    }
    files.extend(child.finish().unwrap());
    // A file still being written: `<name>_`, no end record.
    let ho = header(0x7fb0, 1, Some((0x7f92, 2)));
    let open = Profile {
        container: Container::Snappy,
        header: ho.clone(),
        records: busy_samples(4, 9),
    };
    let mut name =
        profcodec_statprofiler::session_file_name(&template, &ho.genealogy.unwrap().id, 1)
            .into_os_string();
    name.push("_");
    std::fs::write(&name, open.to_bytes()).unwrap();
    files.push(PathBuf::from(name));
    files
}

fn regenerate(dir: &Path) {
    let f = features();
    std::fs::write(dir.join("features.statprof"), f.to_bytes()).unwrap();
    let mut plain = f.clone();
    plain.container = Container::Plain;
    std::fs::write(dir.join("features.plain.statprof"), plain.to_bytes()).unwrap();
    let t = text::write_text(&text::samples(&f), Vec::new()).unwrap();
    std::fs::write(dir.join("features.txt"), t).unwrap();
    write_session(dir);
}

#[test]
fn testdata_is_what_the_generator_writes() {
    let dir = dir();
    if std::env::var_os("STATPROF_REGENERATE").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        regenerate(&dir);
    }
    let tmp = tempfile::tempdir().unwrap();
    regenerate(tmp.path());
    for file in profcodec_testkit::corpus::files_below(tmp.path()) {
        let rel = file.strip_prefix(tmp.path()).unwrap();
        let committed = std::fs::read(dir.join(rel))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(rel).display()));
        assert_eq!(
            std::fs::read(&file).unwrap(),
            committed,
            "{}",
            rel.display()
        );
    }
}

#[test]
fn features_read_as_the_real_reader_would() {
    let data = std::fs::read(dir().join("features.statprof")).unwrap();
    assert_eq!(Profile::parse(&data).unwrap(), features());
    let plain = std::fs::read(dir().join("features.plain.statprof")).unwrap();
    let pp = Profile::parse(&plain).unwrap();
    assert_eq!(pp.container, Container::Plain);
    assert_eq!(pp.records, features().records);

    let mut t = TraceReader::new(Reader::from_slice(&data).unwrap());
    let mut traces = Vec::new();
    while let Some(tr) = t.next_trace().unwrap() {
        traces.push((
            tr.weight,
            tr.op_name.bytes.to_vec(),
            tr.frame_count(),
            tr.sections_changed,
            tr.metadata_changed,
            tr.metadata.len(),
        ));
    }
    // 8 samples + one empty trace per section record (4).
    assert_eq!(traces.len(), 12);
    // The BEGIN sample lost its main frame.
    assert_eq!(traces[4], (1, b"require".to_vec(), 1, false, false, 0));
    // Section start traces.
    assert_eq!(traces[5], (0, vec![], 0, true, false, 0));
    assert_eq!(traces[7], (5, b"entersub".to_vec(), 3, false, true, 1));
    assert!(t.active_sections().is_empty());
    assert_eq!(t.custom_metadata().len(), 3);
    assert_eq!(
        t.source_code()[&12].bytes,
        b"my $c = CODE(0xffffffffff); $c->()"
    );
    assert!(t.stream_ended() && t.file_ended());

    let txt = std::fs::read(dir().join("features.txt")).unwrap();
    assert_eq!(text::parse_text(&txt).unwrap().len(), 8);
}

#[test]
fn session_groups_processes() {
    let procs = open_session(&dir().join("session/statprof.out")).unwrap();
    assert_eq!(procs.len(), 3, "{procs:#?}");
    let parent = &procs[0];
    assert!(parent.parent.is_none());
    assert!(parent.files.len() >= 3);
    for (i, f) in parent.files.iter().enumerate() {
        assert_eq!(f.genealogy().ordinal, i as u32 + 1);
    }
    assert_eq!(procs[1].parent, Some((parent.id, 1)));
    assert!(procs[2].files[0].open);
    // Every file but the last of the parent ends with a file end; the last with a stream end.
    let n = parent.files.len();
    for (i, f) in parent.files.iter().enumerate() {
        let last = Profile::parse(&std::fs::read(&f.path).unwrap())
            .unwrap()
            .records
            .pop()
            .unwrap();
        let want = if i + 1 == n {
            Record::StreamEnd
        } else {
            Record::FileEnd
        };
        assert_eq!(last, want);
    }
    // Reading the parent's stream: samples continue across its files.
    let parts = parent.read().unwrap();
    assert_eq!(parts.len(), n);
    let samples: usize = parts.iter().map(|p| text::samples(p).len()).sum();
    assert_eq!(samples, 60);
    // The same from the directory.
    assert_eq!(open_session(&dir().join("session")).unwrap(), procs);
}
