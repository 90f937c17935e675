#![no_main]
//! HPCToolkit profile.db: parse, validate, every profile and point lookup. After `validate`
//! succeeds every profile must open and every stored value must be found by its lookup.
use profcodec_hpctoolkit::ProfileDb;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(p) = ProfileDb::parse(data) else {
        return;
    };
    let valid = p.validate().is_ok();
    for prof in p.profiles() {
        match prof {
            Ok(prof) => {
                for (ctx, vals) in prof.contexts() {
                    for v in vals {
                        let found = prof.value(ctx, v.metric_id());
                        if valid {
                            assert_eq!(found.map(f64::to_bits), Some(v.value().to_bits()));
                        }
                    }
                }
                let _ = prof.metrics_of(u32::MAX);
            }
            Err(e) => {
                let _ = (e.to_string(), e.offset());
                assert!(!valid, "a profile failed after validate succeeded: {e}");
            }
        }
    }
});
