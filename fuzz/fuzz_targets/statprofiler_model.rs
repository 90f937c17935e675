#![no_main]
//! Structure-aware: an arbitrary owned profile is written and must read back unchanged (unknown
//! records with a known tag are skipped, as the writer would emit a known record).
use profcodec_statprofiler::{Profile, Record};

const KNOWN: &[u8] = &[1, 2, 3, 4, 5, 6, 8, 196, 197, 198, 199, 200];

libfuzzer_sys::fuzz_target!(|profile: Profile| {
    if profile
        .records
        .iter()
        .any(|r| matches!(r, Record::Unknown { tag, .. } if KNOWN.contains(tag)))
    {
        return;
    }
    let bytes = profile.to_bytes();
    let back = Profile::parse(&bytes).expect("a written profile reads back");
    assert_eq!(back, profile);
});
