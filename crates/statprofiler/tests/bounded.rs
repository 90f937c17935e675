//! Memory bounded by the answer, not by the samples: a session of three processes (a root and
//! two forked children, rotated at 2 MiB: about 23 MB in 12 files) made by the crate's own
//! [`SessionWriter`] is converted into the profile model, file by file as the umbrella does
//! (`profcodec top` and `convert`), and its `top`, folded stacks and pprof are written, all under
//! one allocation cap of [`CAP`] beyond what is allocated before, several times smaller than the
//! input. With the `arrow` feature, its `samples` and `frames` tables are read through to the end
//! under the same cap (one file open at a time: holding every file of the session cannot pass).
//! Going over the cap makes the allocation fail, which aborts this test binary.
//!
//! The samples cycle over a bounded set of stacks, as a long-running program keeps returning to
//! the same call paths: the answer's size is fixed while the input grows. One test in its own
//! binary, so no other test allocates meanwhile. Each step's total allocation is printed with
//! `--nocapture`.
#![cfg(feature = "profile")]
#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use profcodec_export::{ExportOptions, pprof::write_pprof, write_folded};
use profcodec_statprofiler::profcodec_profile::Query;
use profcodec_statprofiler::{
    Container, Frame, Genealogy, Header, PerlStr, ProcessId, ProfileConverter, Reader, Record,
    SessionWriter, TraceReader,
};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// What a step may allocate beyond what is allocated when it starts, at its peak.
const CAP: usize = 6 << 20;

/// Samples per process.
const SAMPLES: u32 = 64_000;

/// The files' rotation size.
const MAX_SIZE: u64 = 2 << 20;

fn process_id(p: u32) -> ProcessId {
    ProcessId::from_words([0x4000 + p, 2, 0x6b02_6e8c, 0x262f_ea27, 0x5ce8_c4d4, p])
}

/// Writes the session into `dir`; returns its files.
fn session(dir: &Path) -> Vec<PathBuf> {
    let template = dir.join("statprof.out");
    let header = Header {
        tick_duration_us: Some(1000),
        stack_depth: Some(64),
        ..Header::default()
    };
    let names: Vec<String> = (0..40).map(|i| format!("work{i}")).collect();
    let mut files = Vec::new();
    // A linear congruential generator: the stacks are chosen in no simple cycle, which Snappy
    // would compress to nothing.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for p in 0..3 {
        let genealogy = Genealogy {
            ordinal: 1,
            parent_ordinal: u32::from(p > 0),
            id: process_id(p),
            parent_id: if p == 0 {
                ProcessId::default()
            } else {
                process_id(0)
            },
        };
        let mut w =
            SessionWriter::new(&template, &header, genealogy, Container::Snappy, MAX_SIZE).unwrap();
        for _ in 0..SAMPLES {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (state >> 33) as usize;
            // 120 stack shapes of 8 to 31 frames, the innermost at one of 16 lines.
            let shape = r % 120;
            let depth = 8 + shape % 24;
            let op: &[u8] = if r.is_multiple_of(11) {
                b"readline"
            } else {
                b"add"
            };
            w.write(&Record::<PerlStr<'_>, &[u8]>::SampleStart {
                weight: 1 + (r % 3) as u32,
                op_name: PerlStr::bytes(op),
            })
            .unwrap();
            for d in 0..depth {
                let name = &names[(shape * 7 + d * 3) % names.len()];
                let line = if d == 0 {
                    20 + (r / 120 % 16) as i32
                } else {
                    10 + d as i32
                };
                w.write(&Record::<PerlStr<'_>, &[u8]>::Frame(Frame::Sub {
                    package: PerlStr::bytes(b"App::Worker"),
                    name: PerlStr::bytes(name.as_bytes()),
                    file: PerlStr::bytes(b"lib/App/Worker.pm"),
                    line,
                    first_line: 5,
                }))
                .unwrap();
            }
            w.write(&Record::<PerlStr<'_>, &[u8]>::Frame(Frame::Main {
                file: PerlStr::bytes(b"bin/worker.pl"),
                line: 3 + (shape % 4) as i32,
            }))
            .unwrap();
            w.write(&Record::<PerlStr<'_>, &[u8]>::SampleEnd { skipped: &[] })
                .unwrap();
        }
        files.extend(w.finish().unwrap());
    }
    files
}

/// Runs `f` under this binary's allocation cap ([`CAP`] beyond what is allocated now).
fn capped<T>(f: impl FnOnce() -> T) -> (T, usize) {
    profcodec_testkit::hostile::capped(&A, CAP, f)
}

/// Counts the bytes written, keeping none.
#[derive(Default)]
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn top_folded_and_pprof_of_a_large_session_stay_under_one_cap() {
    let dir = tempfile::tempdir().unwrap();
    let files = session(dir.path());
    let input: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert!(files.len() >= 10, "{} files", files.len());
    assert!(
        input > 3 * CAP as u64,
        "{input} bytes of input: too small to tell a bound from a copy"
    );

    let (profile, converted) = capped(|| {
        let mut converter = ProfileConverter::new();
        for file in &files {
            let reader = Reader::new(BufReader::new(File::open(file).unwrap())).unwrap();
            converter.add_traces(&mut TraceReader::new(reader)).unwrap();
        }
        converter.finish()
    });
    let (top, topped) = capped(|| {
        profile
            .top(&Query::new().value_type("samples").limit(20))
            .unwrap()
    });
    // Every sample is counted: 3 processes, weights 1 to 3.
    assert!(top.total.self_value >= f64::from(3 * SAMPLES));
    assert_eq!(profile.contexts().len(), 3);
    let options = ExportOptions::new();
    let (folded, folded_bytes) = capped(|| {
        let mut out = Counter::default();
        write_folded(&profile, &options, &mut out).unwrap();
        out.0
    });
    let (pprof, pprof_bytes) = capped(|| {
        let mut out = Counter::default();
        write_pprof(&profile, &options, &mut out).unwrap();
        out.0
    });
    assert!(folded > 0 && pprof > 0);
    println!(
        "{} files, {input} bytes: allocated {converted} bytes converting, {topped} for top, \
         {folded_bytes} for {folded} bytes of folded stacks, {pprof_bytes} for {pprof} bytes of \
         pprof",
        files.len()
    );
    drop(profile);

    #[cfg(feature = "arrow")]
    {
        use profcodec_common::Source;
        use profcodec_common::source::ReadWhole;
        use profcodec_statprofiler::tables::TableReader;
        use profcodec_tables::{ScanOptions, SourceTables};

        let source = Source {
            path: dir.path(),
            bytes: &[],
            members: &ReadWhole,
        };
        // Opened under the cap too: a reader that opens every file up front cannot pass.
        let (rows, scanned) = capped(|| {
            let tables = TableReader::open(&source).unwrap();
            tables
                .row_counts(source, &ScanOptions::new().batch_rows(8192))
                .unwrap()
        });
        assert_eq!(rows[0], 3);
        assert_eq!(rows[1], 3 * SAMPLES as usize);
        println!("tables: {rows:?} rows, allocated {scanned} bytes");
    }
}
