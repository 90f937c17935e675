#![no_main]
//! Structure-aware: an arbitrary owned measurement (the `arbitrary` feature) is written in its
//! version; whatever the writer accepts must read back and write to the same bytes.
use profcodec_hpcrun::{Measurement, read_measurement, write_measurement};

libfuzzer_sys::fuzz_target!(|m: Measurement| {
    let Ok(bytes) = write_measurement(&m) else {
        return;
    };
    let back = read_measurement(&bytes).expect("the writer's output reads");
    assert_eq!(write_measurement(&back).expect("writes again"), bytes);
});
