//! `with_threaded_reader` gives what `Reader::from_slice` gives: the same records, the same
//! traces, the same error at the same place, on every corpus and testdata file, whole, cut and
//! with bit flips.
#![allow(clippy::unwrap_used)]

mod common;

use profcodec_common::hostile::{bit_flips, truncation_points};
use profcodec_statprofiler::read::with_threaded_reader;
use profcodec_statprofiler::{Error, OwnedFrame, OwnedRecord, PerlString, Reader, TraceReader};

type Traces = Vec<(u32, PerlString, Vec<OwnedFrame>)>;

/// Every record, then the error if any.
fn events<S: profcodec_statprofiler::read::packets::StreamSource>(
    mut r: Reader<S>,
) -> (Vec<OwnedRecord>, Option<Error>) {
    let mut out = Vec::new();
    loop {
        match r.next_event() {
            Ok(Some(e)) => out.push(e.to_owned()),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// Every trace, then the error if any.
fn traces<S: profcodec_statprofiler::read::packets::StreamSource>(
    r: Reader<S>,
) -> (Traces, Option<Error>) {
    let mut t = TraceReader::new(r);
    let mut out = Vec::new();
    loop {
        match t.next_trace() {
            Ok(Some(tr)) => out.push((
                tr.weight,
                tr.op_name.to_owned(),
                tr.frames().map(|f| f.to_owned()).collect(),
            )),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn check(data: &[u8]) {
    let slice =
        Reader::from_slice(data).map(|r| (events(r), traces(Reader::from_slice(data).unwrap())));
    let threaded = with_threaded_reader(data, |r| Ok(events(r)))
        .and_then(|ev| with_threaded_reader(data, |r| Ok(traces(r))).map(|tr| (ev, tr)));
    assert_eq!(format!("{slice:?}"), format!("{threaded:?}"));
}

#[test]
fn threaded_reader_agrees_with_the_slice_reader() {
    for (path, data) in common::inputs() {
        check(&data);
        // Every twentieth cut and a few flips keep this test short; hostile.rs sweeps them all.
        for cut in truncation_points(data.len()).into_iter().step_by(20) {
            check(&data[..cut]);
        }
        for flipped in bit_flips(&data, 40) {
            check(&flipped);
        }
        eprintln!("{}: ok", path.display());
    }
}
