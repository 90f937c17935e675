#![no_main]
//! The old Pynytprof layout: parse, convert into the model and write a real profile, which must
//! load again.
use profcodec_nytprof::{Profile, pynytprof};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = pynytprof::detect(data);
    let Ok(py) = pynytprof::parse(data) else {
        return;
    };
    let profile = pynytprof::to_profile(&py);
    // The writer spells a line count out as that many statement records, and ticks beyond i32 as
    // more records: a fixed 64 KiB buffer bounds each execution (the writer's error on a full
    // buffer is fine), where a plain Vec let one input write millions of records.
    let mut buf = vec![0u8; 1 << 16];
    let mut out = std::io::Cursor::new(&mut buf[..]);
    if profile.write(&mut out).is_ok() {
        let len = out.position() as usize;
        Profile::from_bytes(&buf[..len]).expect("a converted profile loads");
    }
});
