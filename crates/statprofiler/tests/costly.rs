//! Inputs that cost far more than their size, each held by a count of work or of
//! allocated bytes, never a timer. One binary with its own counting allocator; the tests run one
//! after the other (a lock), so that each measures only itself.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::sync::Mutex;

use profcodec_statprofiler::read::packets::{SliceSource, StreamSource};
use profcodec_statprofiler::{
    Container, Error, Frame, Header, PerlStr, Reader, Summary, Warning, Writer, check, validate,
};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Bytes allocated while `f` runs (every allocation, freed or not).
fn allocated_by<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = A.total_allocated();
    let out = f();
    (out, A.total_allocated() - before)
}

/// A source that counts the pieces of the logical stream it hands out.
struct Counting<'a, 'c> {
    inner: SliceSource<'a>,
    fills: &'c Cell<u64>,
}

impl StreamSource for Counting<'_, '_> {
    fn fill(&mut self, buf: &mut Vec<u8>, at: usize) -> Result<Option<(u64, usize)>, Error> {
        self.fills.set(self.fills.get() + 1);
        self.inner.fill(buf, at)
    }
    fn container(&self) -> Container {
        self.inner.container()
    }
    fn rest(&mut self) -> Result<Option<(u64, u64)>, Error> {
        self.inner.rest()
    }
}

fn header() -> Header {
    Header {
        tick_duration_us: Some(1000),
        stack_depth: Some(20),
        ..Header::default()
    }
}

/// A small real-shaped file: a header packet, then one sample and the stream end.
fn small_file() -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), &header(), Container::Snappy).unwrap();
    w.start_sample(1, &PerlStr::bytes(b"add")).unwrap();
    w.frame(&Frame::Main {
        file: PerlStr::bytes(b"t.pl"),
        line: 3,
    })
    .unwrap();
    w.end_sample().unwrap();
    w.write(&profcodec_statprofiler::Event::StreamEnd).unwrap();
    w.finish().unwrap()
}

/// One Snappy packet of 32000 zero bytes (tag 0, length 0 records: the real reader warns on each).
fn zero_packet() -> Vec<u8> {
    let block = snap::raw::Encoder::new()
        .compress_vec(&[0u8; 32000])
        .unwrap();
    let mut p = (block.len() as u16).to_be_bytes().to_vec();
    p.extend_from_slice(&block);
    p
}

/// A file whose stream ends, followed by 3,000 packets of zeros (96 MB of logical stream): the
/// trailing data is measured without one of its packets being decompressed.
#[test]
fn trailing_packets_after_the_stream_end_are_not_decoded() {
    let _one = ONE_AT_A_TIME.lock().unwrap();
    let file = small_file();
    let end = file.len() as u64;
    let packet = zero_packet();
    let mut hostile = file.clone();
    for _ in 0..3000 {
        hostile.extend_from_slice(&packet);
    }
    let fills = Cell::new(0);
    let source = Counting {
        inner: SliceSource::new(&hostile).unwrap(),
        fills: &fills,
    };
    let mut summary = Summary::default();
    let ((), bytes) = allocated_by(|| {
        let mut reader = Reader::with_source(source).unwrap();
        check(&mut reader, &mut summary).unwrap();
    });
    // The header packet, the body packet, and no more.
    assert!(fills.get() <= 3, "{} pieces decoded", fills.get());
    assert!(bytes < 256 << 10, "{bytes} bytes allocated");
    assert_eq!(
        summary.warnings,
        [Warning::TrailingData(
            profcodec_statprofiler::TrailingData {
                offset: end,
                size: hostile.len() as u64 - end,
                stream_offset: summary_stream_end(&file),
                stream_bytes: 0,
            }
        )]
    );
    assert_eq!((summary.samples, summary.frames), (1, 1));
    assert!(summary.stream_ended);
    // The file without them has no warning.
    assert!(validate(&file).unwrap().warnings.is_empty());
}

/// The logical stream's length of a file that ends with its end record.
fn summary_stream_end(file: &[u8]) -> u64 {
    let mut r = Reader::from_slice(file).unwrap();
    while r.next_event().unwrap().is_some() {}
    r.record_offset() + 2
}

/// Zero packets with no stream end before them (tag-0 records, each skipped with a warning by
/// the real reader): decoded, at a cost linear in the stream, with no growing allocation, and
/// counted as one warning.
#[test]
fn zero_packets_without_an_end_cost_no_growing_allocation() {
    let _one = ONE_AT_A_TIME.lock().unwrap();
    let mut w = Writer::new(Vec::new(), &header(), Container::Snappy).unwrap();
    w.start_sample(1, &PerlStr::bytes(b"add")).unwrap();
    w.end_sample().unwrap();
    let mut hostile = w.finish().unwrap();
    let packet = zero_packet();
    for _ in 0..500 {
        hostile.extend_from_slice(&packet);
    }
    // And 2 M empty packets (two zero bytes each): nothing to decode, nothing to keep.
    hostile.resize(hostile.len() + 4_000_000, 0);
    let (summary, bytes) = allocated_by(|| validate(&hostile).unwrap());
    assert!(bytes < 256 << 10, "{bytes} bytes allocated");
    match summary.warnings[..] {
        [
            Warning::UnknownRecords {
                count, first_tag, ..
            },
        ] => {
            assert_eq!((count, first_tag), (500 * 16000, 0));
        }
        ref other => panic!("{other:?}"),
    }
}

/// One sample of 2 M empty frames: validate counts them without keeping them, a record-by-record
/// rewrite keeps none either; allocation stays a small multiple of the input.
#[test]
fn a_sample_of_two_million_empty_frames_is_not_materialised() {
    let _one = ONE_AT_A_TIME.lock().unwrap();
    let mut w = Writer::new(Vec::new(), &header(), Container::Snappy).unwrap();
    w.start_sample(1, &PerlStr::bytes(b"")).unwrap();
    let empty = Frame::Xsub {
        package: PerlStr::bytes(b""),
        name: PerlStr::bytes(b""),
    };
    for _ in 0..2_000_000 {
        w.frame(&empty).unwrap();
    }
    w.end_sample().unwrap();
    let file = w.finish().unwrap();

    let (summary, bytes) = allocated_by(|| validate(&file).unwrap());
    assert_eq!((summary.samples, summary.frames), (1, 2_000_000));
    assert!(
        bytes < 256 << 10,
        "validate: {bytes} bytes for {} bytes",
        file.len()
    );

    let (out, bytes) = allocated_by(|| {
        let mut reader = Reader::from_slice(&file).unwrap();
        let mut writer = Writer::new(
            Vec::with_capacity(file.len() * 2),
            &reader.header().clone(),
            Container::Snappy,
        )
        .unwrap();
        while let Some(event) = reader.next_event().unwrap() {
            writer.write(&event).unwrap();
        }
        writer.finish().unwrap()
    });
    // The output itself (reserved up front) plus a few packets' buffers.
    assert!(
        bytes < file.len() * 2 + (1 << 20),
        "rewrite: {bytes} bytes for {} bytes",
        file.len()
    );
    assert_eq!(validate(&out).unwrap().frames, 2_000_000);
}
