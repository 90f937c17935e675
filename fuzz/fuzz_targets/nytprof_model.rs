#![no_main]
//! Structure-aware: an arbitrary owned profile (the `arbitrary` feature) is written, compressed
//! or not; whatever the writer accepts must load back (raw) with as many files, and collapsing
//! its evals must not fail.
use profcodec_nytprof::{ModelOptions, Profile};

libfuzzer_sys::fuzz_target!(|input: (Profile, Option<u8>)| {
    let (profile, level) = input;
    // The writer spells a line count out as that many statement records; keep each run short.
    let statements: u64 = profile
        .line_times
        .values()
        .flat_map(|l| l.values())
        .map(|t| t.count.unsigned_abs().min(1 << 40))
        .sum();
    if statements > 100_000 {
        return;
    }
    let mut bytes = Vec::new();
    if profile
        .write_with(&mut bytes, level.map(|l| u32::from(l % 10)))
        .is_err()
    {
        return;
    }
    let mut back =
        Profile::from_bytes_with(&bytes, ModelOptions::raw()).expect("the writer's output loads");
    assert_eq!(back.files.len(), profile.files.len());
    back.collapse_evals(2);
    let _ = back.dump_profile_data();
});
