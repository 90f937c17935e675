#![no_main]
//! A whole HPCToolkit database: the input is three little-endian u32 lengths (meta.db,
//! profile.db, cct.db), then those files, then trace.db (the rest). Opens, cross-links and
//! validates it, then follows every cross-link.
use profcodec_hpctoolkit::Database;

fn split(data: &[u8]) -> [&[u8]; 4] {
    let mut rest = data.get(12..).unwrap_or_default();
    let mut parts = [&[][..]; 4];
    for (i, part) in parts.iter_mut().take(3).enumerate() {
        let len = data
            .get(i * 4..i * 4 + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .min(rest.len());
        (*part, rest) = rest.split_at(len);
    }
    parts[3] = rest;
    parts
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [meta, profile, cct, trace] = split(data);
    let opt = |b: &[u8]| -> Option<Vec<u8>> { (!b.is_empty()).then(|| b.to_vec()) };
    let Ok(db) = Database::from_parts(meta.to_vec(), opt(profile), opt(cct), opt(trace)) else {
        return;
    };
    let valid = db.validate().is_ok();
    for id in db.context_index().ctx_ids() {
        let r = db.context(id);
        assert!(
            !(valid && r.is_some_and(|r| r.is_err())),
            "context {id} failed after validate"
        );
    }
    if let Some(p) = db.profile() {
        for i in 0..p.profile_count() {
            let r = db.id_tuple(i);
            assert!(!(valid && r.is_err()), "id tuple {i} failed after validate");
            let _ = db.value(i, 0, 0);
        }
    }
});
