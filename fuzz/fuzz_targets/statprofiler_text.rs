#![no_main]
//! The early design note's text format: parse, write, parse again.
use profcodec_statprofiler::text;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(samples) = text::parse_text(data) {
        let out = text::write_text(&samples, Vec::new()).expect("writing to a Vec");
        let again = text::parse_text(&out).expect("written text reads back");
        assert_eq!(again.len(), samples.len());
    }
});
