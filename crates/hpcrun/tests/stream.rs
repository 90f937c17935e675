//! [`TraceStream`] reads what [`TraceView`] reads, chunk by chunk, on the traces of `testdata/`
//! and of the corpus, on a trace larger than one chunk, and on every cut of a trace.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec_hpcrun::*;

fn streamed(bytes: &[u8]) -> Result<Vec<TraceRecord>, Error> {
    let mut s = TraceStream::new(bytes)?;
    let mut out = Vec::new();
    while let Some(chunk) = s.next_chunk()? {
        out.extend(chunk.iter());
    }
    Ok(out)
}

fn traces() -> Vec<PathBuf> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcrun");
    let mut files: Vec<PathBuf> = profcodec_testkit::corpus::files_below(&testdata);
    if let Some(dir) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        files.extend(profcodec_testkit::corpus::files_below(&dir.join("meas")));
    }
    files.retain(|p| p.extension().is_some_and(|e| e == "hpctrace"));
    files
}

#[test]
fn streamed_records_equal_the_view() {
    let files = traces();
    assert!(files.len() >= 2);
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let view = TraceView::parse(&bytes).unwrap();
        let expected: Vec<TraceRecord> = view.iter().map(Result::unwrap).collect();
        assert_eq!(streamed(&bytes).unwrap(), expected, "{}", path.display());
        let s = TraceStream::new(&bytes[..]).unwrap();
        assert_eq!((s.version(), s.flags()), (view.version, view.flags));
    }
}

#[test]
fn a_trace_of_several_chunks_and_every_cut() {
    let trace = Trace {
        version: TraceVersion::V0101B,
        flags: 0,
        records: (0..150_000u64)
            .map(|i| TraceRecord {
                time: 1000 + i,
                ctx: (i % 7) as u32,
                metric: None,
            })
            .collect(),
    };
    let bytes = write_trace(&trace);
    assert_eq!(streamed(&bytes).unwrap(), trace.records);
    // A record cut short: every whole record first, then the error at the cut record.
    let cut = &bytes[..bytes.len() - 5];
    let mut s = TraceStream::new(cut).unwrap();
    let mut n = 0;
    let err = loop {
        match s.next_chunk() {
            Ok(Some(c)) => n += c.len(),
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert_eq!(n, trace.records.len() - 1);
    assert_eq!(
        err.offset(),
        Some(32 + 12 * (trace.records.len() as u64 - 1))
    );
    for len in 0..40 {
        let _ = streamed(&bytes[..len]);
    }
}
