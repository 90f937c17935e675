#![no_main]
//! Structure-aware: an arbitrary owned capture (the `arbitrary` feature) is written in its
//! version; whatever the writer accepts reads without panicking in both modes, and whatever
//! reads into the model writes back to the same bytes.
use profcodec_easyprofiler::{Capture, Mode, parse_with};

libfuzzer_sys::fuzz_target!(|c: Capture| {
    let Ok(bytes) = c.to_bytes() else {
        return;
    };
    for mode in [Mode::Tolerant, Mode::Strict] {
        if let Ok(view) = parse_with(&bytes, mode) {
            let _ = view.tree();
            if let Ok(back) = view.to_model() {
                assert_eq!(back.to_bytes().expect("writes again"), bytes);
            }
        }
    }
});
