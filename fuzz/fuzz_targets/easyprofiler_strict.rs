#![no_main]
//! EasyProfiler in strict mode (refusing what the C++ reader refuses): header, tree, model. What
//! strict mode accepts, tolerant mode reads to the same model.
use profcodec_easyprofiler::{Mode, parse_with};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(view) = parse_with(data, Mode::Strict) else {
        return;
    };
    let _ = view.tree();
    if let Ok(model) = view.to_model() {
        let tolerant = parse_with(data, Mode::Tolerant).expect("strict accepted the header");
        assert_eq!(tolerant.to_model().expect("strict accepted it"), model);
    }
});
