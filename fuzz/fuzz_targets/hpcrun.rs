#![no_main]
//! hpcrun measurement files of every version: the owned-model reader, the partial reader, the
//! 04.00 view with validation, the CCT helpers and the writer. A file that reads must write back
//! to bytes that read to the same model.
use profcodec_hpcrun::{
    CctIndex, V4View, migrate, read_measurement, read_measurement_partial, write_measurement,
};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = read_measurement_partial(data);
    if let Ok(v) = V4View::parse(data) {
        let _ = v.validate();
        let _ = v.is_canonical();
        let _ = v.context_values(0).count();
    }
    let Ok(m) = read_measurement(data) else {
        return;
    };
    for (i, e) in m.epochs.iter().enumerate() {
        let index = CctIndex::new(&e.cct);
        if let Some(r) = index.roots().next() {
            let _ = index.path_to_root(r);
            let _ = m.inclusive_sum(i, e.cct[r].id, 0);
        }
    }
    let bytes = write_measurement(&m).expect("a model read from a file writes");
    let back = read_measurement(&bytes).expect("written bytes read");
    assert_eq!(
        write_measurement(&back).expect("writes again"),
        bytes,
        "write(read(write(m))) differs"
    );
    let (v4, _) = migrate::to_v4(&m);
    if let Ok(b) = write_measurement(&v4) {
        V4View::parse(&b).expect("a migrated file reads");
    }
});
