//! Inputs and helpers shared by the hostile-input tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use profcodec_statprofiler::raw::{MAX_PACKET_LEN, PROLOGUE_LEN};
use profcodec_statprofiler::read::packets::{Packets, parse_prologue};
use profcodec_statprofiler::{Container, Reader};
use profcodec_testkit::corpus::{corpus_subdir, files_below};

/// Every StatProfiler file of the corpus and of testdata.
pub(crate) fn inputs() -> Vec<(PathBuf, Vec<u8>)> {
    let mut paths = Vec::new();
    if let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler") {
        paths.extend(files_below(&dir));
    }
    paths.extend(files_below(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/statprofiler"),
    ));
    paths
        .into_iter()
        .filter_map(|p| {
            let data = std::fs::read(&p).ok()?;
            data.starts_with(b"=statprofiler").then_some((p, data))
        })
        .collect()
}

/// The logical stream of a valid file and the decompressed size of each packet.
pub(crate) fn logical(data: &[u8]) -> (Vec<u8>, Vec<usize>) {
    if parse_prologue(data).unwrap() == Container::Plain {
        let s = data[PROLOGUE_LEN..].to_vec();
        let n = s.len();
        return (s, vec![n]);
    }
    let mut dec = snap::raw::Decoder::new();
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    for p in Packets::new(data).unwrap() {
        sizes.push(p.unwrap().decompress_into(&mut dec, &mut out).unwrap());
    }
    (out, sizes)
}

/// A file holding `stream` as its logical stream, in packets of at most 32000 bytes.
pub(crate) fn packetize(stream: &[u8]) -> Vec<u8> {
    let mut out = b"=statprofiler\x01".to_vec();
    let mut enc = snap::raw::Encoder::new();
    for chunk in stream.chunks(MAX_PACKET_LEN) {
        let block = enc.compress_vec(chunk).unwrap();
        out.extend_from_slice(&(block.len() as u16).to_be_bytes());
        out.extend_from_slice(&block);
    }
    out
}

/// The stream offset of every body record of a valid file, and the header's end.
pub(crate) fn record_starts(data: &[u8]) -> Vec<u64> {
    let mut r = Reader::from_slice(data).unwrap();
    let mut starts = Vec::new();
    while r.next_event().unwrap().is_some() {
        starts.push(r.record_offset());
    }
    starts
}

/// A snappy file (ticks of 1 ms) of `events`, then a stream end.
#[cfg(feature = "profile")]
pub(crate) fn file_of_events<'a>(
    events: impl IntoIterator<Item = profcodec_statprofiler::Event<'a>>,
) -> Vec<u8> {
    use profcodec_statprofiler::{Event, Header, Writer};
    let header = Header {
        tick_duration_us: Some(1000),
        ..Header::default()
    };
    let mut w = Writer::new(Vec::new(), &header, Container::Snappy).unwrap();
    for event in events {
        w.write(&event).unwrap();
    }
    w.write(&Event::StreamEnd).unwrap();
    w.finish().unwrap()
}

/// The events of a sample: its start, `frames` (innermost first), the frame of the main
/// program `bin/app.pl`, its end.
#[cfg(feature = "profile")]
pub(crate) fn sample_in_main<'a>(
    weight: u32,
    op: &'a [u8],
    frames: impl IntoIterator<Item = profcodec_statprofiler::Event<'a>>,
) -> impl Iterator<Item = profcodec_statprofiler::Event<'a>> {
    use profcodec_statprofiler::{Event, Frame, PerlStr};
    std::iter::once(Event::SampleStart {
        weight,
        op_name: PerlStr::bytes(op),
    })
    .chain(frames)
    .chain([
        Event::Frame(Frame::Main {
            file: PerlStr::bytes(b"bin/app.pl"),
            line: 3,
        }),
        Event::SampleEnd { skipped: &[] },
    ])
}
