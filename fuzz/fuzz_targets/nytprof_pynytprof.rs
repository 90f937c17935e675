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
    // The writer spells a line count out as that many statement records; keep each run short
    // (a few hundred records exercise every writer path; millions only cost time per execution).
    let statements: i64 = profile
        .line_times
        .values()
        .flat_map(|l| l.values())
        .map(|t| t.count.unsigned_abs().min(1 << 40) as i64)
        .sum();
    if statements > 256 {
        return;
    }
    let mut out = Vec::new();
    if profile.write(&mut out).is_ok() {
        Profile::from_bytes(&out).expect("a converted profile loads");
    }
});
