#![no_main]
//! Structure-aware: an arbitrary owned database (the `arbitrary` feature) goes through the
//! writers; whatever they accept must parse, pass each file's `validate`, convert back to the
//! model with the same meta.db content (values are compared through the bytes, NaNs included),
//! and write again to the same bytes. The whole-database `validate` may refuse the cross-file
//! references of an arbitrary model (metric ids unknown to meta.db), with a typed error.
use std::io::Cursor;

use profcodec_hpctoolkit::model::Database;
use profcodec_hpctoolkit::read::{self, CctDb, MetaDb, ProfileDb, TraceDb};
use profcodec_hpctoolkit::write::{write_context_major, write_meta, write_profiles, write_traces};

/// meta.db, profile.db, cct.db, trace.db as written; `None` when a writer refuses the model.
type Files = (Vec<u8>, Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

fn write(db: &Database) -> Option<Files> {
    let mut meta = Vec::new();
    write_meta(&db.meta, &mut meta).ok()?;
    let profile = write_profiles(&db.profiles, Cursor::new(Vec::new()))
        .ok()?
        .into_inner();
    let cct = match &db.context_major {
        Some(c) => Some(
            write_context_major(c, Cursor::new(Vec::new()))
                .ok()?
                .into_inner(),
        ),
        None => None,
    };
    let trace = match &db.traces {
        Some(t) => Some(write_traces(t, Cursor::new(Vec::new())).ok()?.into_inner()),
        None => None,
    };
    Some((meta, profile, cct, trace))
}

libfuzzer_sys::fuzz_target!(|model: Database| {
    let Some(files) = write(&model) else {
        return;
    };
    let (meta, profile, cct, trace) = &files;
    MetaDb::parse(meta)
        .and_then(|m| m.validate())
        .expect("the writer's meta.db validates");
    ProfileDb::parse(profile)
        .and_then(|p| p.validate())
        .expect("the writer's profile.db validates");
    if let Some(c) = cct {
        CctDb::parse(c)
            .and_then(|c| c.validate())
            .expect("the writer's cct.db validates");
    }
    if let Some(t) = trace {
        TraceDb::parse(t)
            .and_then(|t| t.validate())
            .expect("the writer's trace.db validates");
    }
    let db = read::Database::from_parts(
        meta.as_slice(),
        Some(profile.as_slice()),
        cct.as_deref(),
        trace.as_deref(),
    )
    .expect("the writer's database opens");
    // Cross-file references may be wrong in an arbitrary model; the answer must be typed.
    if let Err(e) = db.validate() {
        let _ = (e.offset(), e.to_string());
    }
    let back = Database::from_read(&db).expect("the writer's database converts to the model");
    assert_eq!(back.meta, model.meta.normalized(), "meta.db content");
    assert_eq!(back.profiles.len(), model.profiles.len(), "profile count");
    assert_eq!(
        write(&back),
        Some(files),
        "a second write is byte-identical"
    );
});
