#![no_main]
//! HPCToolkit meta.db: parse, validate, then every accessor (which must not panic on damaged
//! input either). After `validate` succeeds no accessor may fail: that promise is asserted.
use profcodec_hpctoolkit::MetaDb;
use profcodec_hpctoolkit::read::ContextNode;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(m) = MetaDb::parse(data) else {
        return;
    };
    let valid = m.validate().is_ok();
    let mut failed = m.title().is_err() | m.description().is_err();
    failed |= m.id_names().any(|r| r.is_err()) | m.scopes().any(|r| r.is_err());
    for metric in m.metrics() {
        match metric {
            Ok(metric) => {
                failed |= m.scope_instances(&metric).any(|r| r.is_err());
                failed |= m.summaries(&metric).any(|r| r.is_err());
            }
            Err(_) => failed = true,
        }
    }
    failed |= m.modules().any(|r| r.is_err()) | m.files().any(|r| r.is_err());
    failed |= m.functions().any(|r| r.is_err());
    for node in m.walk() {
        match node {
            Ok(n) => {
                if let ContextNode::Context(c) = n.node {
                    failed |= m.children(c.children).any(|r| r.is_err());
                }
            }
            Err(e) => {
                let _ = (e.to_string(), e.offset());
                failed = true;
            }
        }
    }
    if let Ok(index) = m.context_index() {
        for id in index.ctx_ids() {
            failed |= m.context(&index, id).is_some_and(|r| r.is_err());
        }
    }
    assert!(
        !(valid && failed),
        "an accessor failed after validate succeeded"
    );
});
