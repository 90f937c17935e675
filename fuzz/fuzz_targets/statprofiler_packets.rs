#![no_main]
//! The container: prologue, packet framing, Snappy blocks (each decompressed into a bounded
//! buffer), then the whole file through the streaming reader, on one thread and with the packets
//! decompressed on another (which must give the same records and error).
use profcodec_statprofiler::read::packets::{Packets, StreamSource};
use profcodec_statprofiler::read::with_threaded_reader;
use profcodec_statprofiler::{Error, OwnedRecord, Profile, Reader};

/// Every record, then the error if any.
fn events<S: StreamSource>(mut r: Reader<S>) -> (Vec<OwnedRecord>, Option<Error>) {
    let mut error = None;
    let records = std::iter::from_fn(|| match r.next_event() {
        Ok(e) => e.map(|e| e.to_owned()),
        Err(e) => error.replace(e).and(None),
    })
    .collect();
    (records, error)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(packets) = Packets::new(data) {
        let mut out = Vec::new();
        for packet in packets {
            let Ok(packet) = packet else { break };
            out.clear();
            if let Ok(n) = packet.decompress(&mut out) {
                assert!(n <= 32000);
            }
        }
    }
    let _ = Profile::parse(data);
    let slice = Reader::from_slice(data).map(events);
    let threaded = with_threaded_reader(data, |r| Ok(events(r)));
    assert_eq!(format!("{slice:?}"), format!("{threaded:?}"));
    if let Ok(r) = Reader::new(data) {
        let _ = r.header();
    }
});
