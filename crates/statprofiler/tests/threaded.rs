//! Every way of feeding the reader gives what `Reader::from_slice` gives: the same records, the
//! same traces, the same error at the same place, on every corpus and testdata file, whole, cut
//! and with bit flips. `with_threaded_reader` (packets decompressed on another thread), and a
//! source handing out the logical stream a few bytes at a time (so nearly every sample is read
//! record by record, where the slice reader reads it on the hot path).
#![allow(clippy::unwrap_used)]

mod common;

use profcodec_statprofiler::raw::PROLOGUE_LEN;
use profcodec_statprofiler::read::packets::StreamSource;
use profcodec_statprofiler::read::with_threaded_reader;
use profcodec_statprofiler::{
    Container, Error, OwnedFrame, OwnedRecord, PerlString, Reader, TraceReader,
};
use profcodec_testkit::hostile::{bit_flips, truncation_points};

type Traces = Vec<(u32, PerlString, Vec<OwnedFrame>)>;

/// Every record, then the error if any.
fn events<S: StreamSource>(mut r: Reader<S>) -> (Vec<OwnedRecord>, Option<Error>) {
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
fn traces<S: StreamSource>(r: Reader<S>) -> (Traces, Option<Error>) {
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

/// The logical stream of a file, a few bytes at a time (sizes cycling through 1..=13), with the
/// file offsets a file without packets would give.
struct Tiny {
    stream: Vec<u8>,
    at: usize,
    step: usize,
}

impl StreamSource for Tiny {
    fn fill(&mut self, buf: &mut Vec<u8>, at: usize) -> Result<Option<(u64, usize)>, Error> {
        if self.at == self.stream.len() {
            return Ok(None);
        }
        self.step = self.step % 13 + 1;
        let n = self.step.min(self.stream.len() - self.at);
        if buf.len() < at + n {
            buf.resize(at + n, 0);
        }
        buf[at..at + n].copy_from_slice(&self.stream[self.at..self.at + n]);
        let offset = (PROLOGUE_LEN + self.at) as u64;
        self.at += n;
        Ok(Some((offset, n)))
    }

    fn container(&self) -> Container {
        Container::Plain
    }
}

/// A file without packets, read whole and a few bytes at a time.
fn check_tiny(stream: &[u8]) {
    let mut file = b"=statprofiler\x01".to_vec();
    file.extend_from_slice(stream);
    let tiny = |stream: &[u8]| Tiny {
        stream: stream.to_vec(),
        at: 0,
        step: 0,
    };
    let slice =
        Reader::from_slice(&file).map(|r| (events(r), traces(Reader::from_slice(&file).unwrap())));
    let pieces = Reader::with_source(tiny(stream)).map(|r| {
        (
            events(r),
            traces(Reader::with_source(tiny(stream)).unwrap()),
        )
    });
    assert_eq!(format!("{slice:?}"), format!("{pieces:?}"));
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

#[test]
fn a_few_bytes_at_a_time_agree_with_the_slice_reader() {
    for (_, data) in common::inputs() {
        let (stream, _) = common::logical(&data);
        // A byte above 0x91 first marks a file without packets: every logical stream starts
        // with a header tag (200-205, 254).
        check_tiny(&stream);
        for cut in truncation_points(stream.len()).into_iter().step_by(20) {
            if stream[..cut].first().is_none_or(|b| *b > 0x91) {
                check_tiny(&stream[..cut]);
            }
        }
    }
}
