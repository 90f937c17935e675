#![no_main]
//! The container: prologue, packet framing, Snappy blocks (each decompressed into a bounded
//! buffer), then the whole file through the streaming reader.
use profcodec_statprofiler::read::packets::Packets;
use profcodec_statprofiler::{Profile, Reader};

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
    if let Ok(r) = Reader::new(data) {
        let _ = r.header();
    }
});
