#![no_main]
//! HPCToolkit trace.db: parse, validate, every trace line and the time search. After `validate`
//! succeeds every line must open and each element's own timestamp must find an element with
//! that timestamp.
use profcodec_hpctoolkit::TraceDb;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(t) = TraceDb::parse(data) else {
        return;
    };
    let valid = t.validate().is_ok();
    for tr in t.traces() {
        match tr {
            Ok(tr) => {
                for e in tr.elems {
                    let found = tr.at_or_before(e.timestamp());
                    if valid {
                        assert_eq!(found.map(|f| f.timestamp()), Some(e.timestamp()));
                    }
                }
                let _ = tr.at_or_before(0);
            }
            Err(e) => {
                let _ = (e.to_string(), e.offset());
                assert!(!valid, "a trace failed after validate succeeded: {e}");
            }
        }
    }
});
