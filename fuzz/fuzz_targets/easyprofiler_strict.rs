#![no_main]
// Placeholder until the format crate's decoder lands.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = data;
});
