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
    let mut out = Vec::new();
    if profile.write(&mut out).is_ok() {
        Profile::from_bytes(&out).expect("a converted profile loads");
    }
});
