//! Round trips: varints, strings, whole files (model -> bytes -> model), the text format.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use profcodec_statprofiler::raw::{MAX_VARINT_LEN, decode_varint, encode_varint};
use profcodec_statprofiler::text::{self, TextSample};
use profcodec_statprofiler::{
    Container, Frame, Genealogy, Header, OwnedFrame, OwnedRecord, PerlString, PerlVersion,
    ProcessId, Profile, Reader, Record, TraceReader,
};

fn perl_string() -> impl Strategy<Value = PerlString> {
    (
        prop_oneof![Just(0u8), Just(1u8), any::<u8>()],
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(flags, bytes)| PerlString { flags, bytes })
}

fn frame() -> impl Strategy<Value = OwnedFrame> {
    prop_oneof![
        (
            perl_string(),
            perl_string(),
            perl_string(),
            any::<i32>(),
            any::<i32>()
        )
            .prop_map(|(package, name, file, line, first_line)| Frame::Sub {
                package,
                name,
                file,
                line,
                first_line
            }),
        (perl_string(), perl_string()).prop_map(|(package, name)| Frame::Xsub { package, name }),
        (perl_string(), any::<i32>()).prop_map(|(file, line)| Frame::Eval { file, line }),
        (perl_string(), any::<i32>()).prop_map(|(file, line)| Frame::Main { file, line }),
    ]
}

const KNOWN: &[u8] = &[1, 2, 3, 4, 5, 6, 8, 196, 197, 198, 199, 200];

fn record() -> impl Strategy<Value = OwnedRecord> {
    prop_oneof![
        4 => (any::<u32>(), perl_string()).prop_map(|(weight, op_name)| Record::SampleStart { weight, op_name }),
        8 => frame().prop_map(Record::Frame),
        1 => (perl_string(), any::<u32>()).prop_map(|(source, seq)| Record::EvalSource { source, seq }),
        4 => prop::collection::vec(any::<u8>(), 0..3).prop_map(|skipped| Record::SampleEnd { skipped }),
        1 => perl_string().prop_map(|name| Record::SectionStart { name }),
        1 => perl_string().prop_map(|name| Record::SectionEnd { name }),
        1 => (perl_string(), perl_string()).prop_map(|(key, value)| Record::Metadata { key, value }),
        1 => Just(Record::FileEnd),
        1 => Just(Record::StreamEnd),
        1 => (any::<u8>().prop_filter("unknown tag", |t| !KNOWN.contains(t)), prop::collection::vec(any::<u8>(), 0..20))
            .prop_map(|(tag, payload)| Record::Unknown { tag, payload }),
    ]
}

fn header() -> impl Strategy<Value = Header> {
    (
        prop::option::of((any::<u32>(), any::<u32>(), any::<u32>())),
        prop::option::of(any::<u32>()),
        prop::option::of(any::<u32>()),
        prop::option::of((
            any::<u32>(),
            any::<u32>(),
            any::<[u8; 24]>(),
            any::<[u8; 24]>(),
        )),
        prop::collection::vec((perl_string(), perl_string()), 0..3),
    )
        .prop_map(|(v, t, d, g, metadata)| Header {
            perl_version: v.map(|(revision, version, subversion)| PerlVersion {
                revision,
                version,
                subversion,
            }),
            tick_duration_us: t,
            stack_depth: d,
            genealogy: g.map(|(ordinal, parent_ordinal, id, pid)| Genealogy {
                ordinal,
                parent_ordinal,
                id: ProcessId(id),
                parent_id: ProcessId(pid),
            }),
            metadata,
        })
}

fn profile() -> impl Strategy<Value = Profile> {
    (
        prop_oneof![Just(Container::Snappy), Just(Container::Plain)],
        header(),
        prop::collection::vec(record(), 0..60),
    )
        .prop_map(|(container, header, records)| Profile {
            container,
            header,
            records,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn varints_round_trip(v: u32) {
        let mut buf = [0u8; MAX_VARINT_LEN];
        let enc = encode_varint(v, &mut buf).to_vec();
        prop_assert_eq!(decode_varint(&enc), Some((v, enc.len())));
        // Big-endian groups: every byte but the last has the continuation bit.
        prop_assert!(enc[..enc.len() - 1].iter().all(|b| b & 0x80 != 0));
        prop_assert!(enc[enc.len() - 1] & 0x80 == 0);
    }

    #[test]
    fn strings_round_trip(key in perl_string(), value in perl_string()) {
        let p = Profile {
            records: vec![Record::Metadata { key: key.clone(), value: value.clone() }],
            ..Profile::default()
        };
        let back = Profile::parse(&p.to_bytes()).unwrap();
        prop_assert_eq!(back.records, vec![Record::Metadata { key, value }]);
    }

    #[test]
    fn files_round_trip(p in profile()) {
        let bytes = p.to_bytes();
        let back = Profile::parse(&bytes).unwrap();
        prop_assert_eq!(&back, &p);
        // The io::Read path agrees.
        let mut r = Reader::new(std::io::Cursor::new(&bytes)).unwrap();
        let mut n = 0;
        while let Some(e) = r.next_event().unwrap() {
            prop_assert_eq!(&e.to_owned(), &p.records[n]);
            n += 1;
        }
        prop_assert_eq!(n, p.records.len());
    }
}

/// Records spanning many packets: long strings and many samples.
#[test]
fn records_span_packets() {
    let big = PerlString::new(vec![b'x'; 100_000]);
    let mut records = vec![Record::EvalSource {
        source: big.clone(),
        seq: 7,
    }];
    for i in 0..5000u32 {
        records.push(Record::SampleStart {
            weight: i,
            op_name: PerlString::new("add"),
        });
        records.push(Record::Frame(Frame::Sub {
            package: PerlString::new("main"),
            name: PerlString::new(format!("f{i}")),
            file: PerlString::new("t.pl"),
            line: i as i32,
            first_line: -1,
        }));
        records.push(Record::SampleEnd { skipped: vec![] });
    }
    let p = Profile {
        records,
        ..Profile::default()
    };
    let bytes = p.to_bytes();
    let packets = profcodec_statprofiler::read::packets::Packets::new(&bytes)
        .unwrap()
        .count();
    assert!(packets > 5, "{packets} packets");
    assert_eq!(Profile::parse(&bytes).unwrap(), p);
}

fn name_part() -> impl Strategy<Value = Vec<u8>> {
    "[A-Za-z_][A-Za-z0-9_]{0,8}(::[A-Za-z0-9_]{1,5})?".prop_map(String::into_bytes)
}

fn text_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>().prop_filter("no NUL", |b| *b != 0), 0..20)
}

fn text_frame() -> impl Strategy<Value = OwnedFrame> {
    prop_oneof![
        (
            name_part(),
            "[A-Za-z_][A-Za-z0-9_]{0,8}",
            text_bytes(),
            0i32..100000
        )
            .prop_map(|(package, name, file, line)| Frame::Sub {
                package: PerlString::new(package),
                name: PerlString::new(name),
                file: PerlString::new(file),
                line,
                first_line: -1,
            }),
        (name_part(), "[A-Za-z_][A-Za-z0-9_]{0,8}").prop_map(|(package, name)| Frame::Xsub {
            package: PerlString::new(package),
            name: PerlString::new(name),
        }),
        (text_bytes(), any::<i32>()).prop_map(|(file, line)| Frame::Eval {
            file: PerlString::new(file),
            line
        }),
        (text_bytes(), any::<i32>()).prop_map(|(file, line)| Frame::Main {
            file: PerlString::new(file),
            line
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn text_round_trips(samples in prop::collection::vec(
        (any::<u32>(), prop::collection::vec(text_frame(), 0..6), text_bytes()).prop_map(
            |(weight, frames, op)| TextSample { weight, frames, op_name: PerlString::new(op) }),
        0..20))
    {
        // An Xsub-shaped sub frame (empty file, line -1) reads back as an XSUB.
        let samples: Vec<TextSample> = samples.into_iter().map(|mut s| {
            for f in &mut s.frames {
                if let Frame::Sub { package, name, file, line: -1, .. } = f
                    && file.bytes.is_empty()
                {
                    *f = Frame::Xsub { package: package.clone(), name: name.clone() };
                }
            }
            s
        }).collect();
        let out = text::write_text(&samples, Vec::new()).unwrap();
        let back = text::parse_text(&out).unwrap();
        prop_assert_eq!(back, samples);
    }
}

#[test]
fn text_reads_the_notes_example_shape() {
    let t = b"3;9,main::foo,t.pl,4;0,,t.pl,10;add\n\n1;nextstate\n";
    let s = text::parse_text(t).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].weight, 3);
    assert_eq!(s[0].frames.len(), 2);
    assert!(matches!(&s[0].frames[0], Frame::Sub { name, .. } if name.bytes == b"foo"));
    assert_eq!(s[1].frames.len(), 0);
    let err = text::parse_text(b"x;add\n").unwrap_err();
    assert_eq!(err.offset(), Some(0));
    assert!(text::parse_text(b"1;5,a,b,c;add").is_err());
}

/// A string for the trace test: mostly short (the hot path), sometimes 128 bytes or more (the
/// record-by-record path), sometimes `BEGIN`.
fn trace_string() -> impl Strategy<Value = PerlString> {
    prop_oneof![
        6 => prop::collection::vec(any::<u8>(), 0..12).prop_map(PerlString::new),
        1 => Just(PerlString::new("BEGIN")),
        1 => prop::collection::vec(any::<u8>(), 120..300).prop_map(PerlString::new),
    ]
}

/// A line: mostly 1 or 2 varint bytes, sometimes more, sometimes negative.
fn trace_line() -> impl Strategy<Value = i32> {
    prop_oneof![4 => 0i32..16384, 1 => any::<i32>()]
}

fn trace_frame() -> impl Strategy<Value = OwnedFrame> {
    prop_oneof![
        4 => (trace_string(), trace_string(), trace_string(), trace_line(), trace_line())
            .prop_map(|(package, name, file, line, first_line)| Frame::Sub {
                package, name, file, line, first_line,
            }),
        1 => (trace_string(), trace_string()).prop_map(|(package, name)| Frame::Xsub { package, name }),
        1 => (trace_string(), trace_line()).prop_map(|(file, line)| Frame::Eval { file, line }),
        2 => (trace_string(), trace_line()).prop_map(|(file, line)| Frame::Main { file, line }),
    ]
}

/// One sample (with now and then an eval source among its frames, or a sample end with a
/// payload), or a section start and end around nothing, or metadata.
fn trace_group() -> impl Strategy<Value = Vec<OwnedRecord>> {
    prop_oneof![
        8 => (
            prop_oneof![4 => 0u32..16384, 1 => any::<u32>()],
            trace_string(),
            prop::collection::vec(trace_frame(), 0..12),
            prop::option::weighted(0.1, (0usize..12, trace_string())),
            prop_oneof![8 => Just(vec![]), 1 => prop::collection::vec(any::<u8>(), 1..3)],
        )
            .prop_map(|(weight, op_name, frames, eval, skipped)| {
                let mut r = vec![Record::SampleStart { weight, op_name }];
                r.extend(frames.into_iter().map(Record::Frame));
                if let Some((at, source)) = eval {
                    r.insert(1 + at.min(r.len() - 1), Record::EvalSource { source, seq: 1 });
                }
                r.push(Record::SampleEnd { skipped });
                r
            }),
        1 => trace_string().prop_map(|name| vec![
            Record::SectionStart { name: name.clone() },
            Record::SectionEnd { name },
        ]),
        1 => (trace_string(), trace_string()).prop_map(|(key, value)| vec![Record::Metadata { key, value }]),
    ]
}

/// The traces the real reader returns for well-formed records (traces.rs module docs): one per
/// sample, an eval or main frame after a `BEGIN` frame dropped, one empty trace per section
/// record.
fn expected_traces(records: &[OwnedRecord]) -> Vec<(u32, PerlString, Vec<OwnedFrame>)> {
    let mut out = Vec::new();
    let mut open: Option<(u32, PerlString, Vec<OwnedFrame>)> = None;
    let mut last_was_begin = false;
    for r in records {
        match r {
            Record::SampleStart { weight, op_name } => {
                open = Some((*weight, op_name.clone(), vec![]));
                last_was_begin = false;
            }
            Record::Frame(f) => {
                let frames = &mut open.as_mut().unwrap().2;
                match f {
                    Frame::Sub { name, .. } | Frame::Xsub { name, .. } => {
                        last_was_begin = name.bytes == b"BEGIN";
                        frames.push(f.clone());
                    }
                    Frame::Eval { .. } | Frame::Main { .. } => {
                        if !last_was_begin {
                            frames.push(f.clone());
                        }
                        last_was_begin = false;
                    }
                }
            }
            Record::SampleEnd { .. } => out.push(open.take().unwrap()),
            Record::SectionStart { .. } | Record::SectionEnd { .. } => {
                out.push((0, PerlString::default(), vec![]));
            }
            _ => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Samples complete in one packet take the hot path, the others (spanning packets, long
    /// strings, long varints, eval sources among the frames) are read record by record: the
    /// traces are the same.
    #[test]
    fn traces_follow_the_records(
        groups in prop::collection::vec(trace_group(), 0..400),
        container in prop_oneof![Just(Container::Snappy), Just(Container::Plain)],
    ) {
        let records: Vec<OwnedRecord> = groups.into_iter().flatten().collect();
        let expected = expected_traces(&records);
        let bytes = Profile { container, records, ..Profile::default() }.to_bytes();
        let mut traces = TraceReader::new(Reader::from_slice(&bytes).unwrap());
        let mut got = Vec::new();
        while let Some(t) = traces.next_trace().unwrap() {
            prop_assert_eq!(t.frames().len(), t.frame_count());
            got.push((t.weight, t.op_name.to_owned(), t.frames().map(|f| f.to_owned()).collect::<Vec<_>>()));
        }
        prop_assert_eq!(got, expected);
    }
}
