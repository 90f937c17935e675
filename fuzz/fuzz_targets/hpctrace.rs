#![no_main]
//! `.hpctrace` files: the view, its record iterator (every complete record, then the error), the
//! owned model and the writer.
use profcodec_hpcrun::{TraceView, write_trace};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(view) = TraceView::parse(data) else {
        return;
    };
    let n = view.iter().filter(|r| r.is_ok()).count();
    assert_eq!(n, view.len());
    if let Ok(t) = view.to_model() {
        assert_eq!(
            write_trace(&t),
            data,
            "an intact trace rewrites byte for byte"
        );
    }
});
