#![no_main]
//! HPCToolkit cct.db: parse, validate, every context block and point lookup. After `validate`
//! succeeds every block must open and every stored value must be found by its lookup.
use profcodec_hpctoolkit::CctDb;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(c) = CctDb::parse(data) else {
        return;
    };
    let _ = c.header_gap();
    let valid = c.validate().is_ok();
    for ctx in c.contexts() {
        match ctx {
            Ok(ctx) => {
                for (metric, vals) in ctx.metrics() {
                    for v in vals {
                        let found = ctx.value(v.prof_index(), metric);
                        if valid {
                            assert_eq!(found.map(f64::to_bits), Some(v.value().to_bits()));
                        }
                    }
                }
            }
            Err(e) => {
                let _ = (e.to_string(), e.offset());
                assert!(!valid, "a context failed after validate succeeded: {e}");
            }
        }
    }
});
