#![no_main]
//! The logical stream: the input is stored without packets (a build without Snappy), so every
//! byte reaches the record parser; the events, the real reader's view, and a rewrite that must
//! read back the same.
use profcodec_statprofiler::{Profile, Reader, TraceReader};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut file = b"=statprofiler\x01".to_vec();
    // A byte above 0x91 after the prologue marks the stream as unpacketised.
    if data.first().is_none_or(|b| *b <= 0x91) {
        file.push(254);
    }
    file.extend_from_slice(data);
    if let Ok(r) = Reader::from_slice(&file) {
        let mut t = TraceReader::new(r);
        while let Ok(Some(trace)) = t.next_trace() {
            for f in trace.frames() {
                std::hint::black_box(f);
            }
        }
    }
    if let Ok(p) = Profile::parse(&file) {
        let again = Profile::parse(&p.to_bytes()).expect("a rewrite reads back");
        assert_eq!(again, p);
    }
});
