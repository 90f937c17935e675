//! [`profcodec::to_profile`] of HPCToolkit inputs: what it reads of a database directory (every
//! profile of these small databases), of a lone meta.db (the tree without values) and of a lone
//! profile.db (nothing: it has no context tree).
#![cfg(all(feature = "hpctoolkit", feature = "profile"))]

use std::path::Path;

use profcodec::ReadError;

fn profile(path: &Path) -> Result<profcodec::profile::Profile, ReadError> {
    profcodec::to_profile(&profcodec::open(path).expect("open"))
}

#[test]
fn profile_of_every_corpus_database() {
    let Some(corpus) = std::env::var_os("PROFCODEC_CORPUS") else {
        return;
    };
    let root = Path::new(&corpus).join("hpctoolkit");
    let mut dbs: Vec<_> = std::fs::read_dir(root.join("dbase"))
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dbs.push(root.join("hatchet-gamess"));
    for db in dbs {
        let profile = profile(&db).expect("profile");
        let top = profile
            .top(&profcodec::profile::Query::new().limit(5))
            .expect("top");
        assert!(!top.rows.is_empty(), "{}", db.display());
        assert!(top.total.self_value > 0.0, "{}", db.display());
        // Every profile of these small databases is read.
        let n = profcodec::hpctoolkit::Database::open(&db)
            .expect("open")
            .profile()
            .expect("profile.db")
            .profile_count();
        assert_eq!(profile.contexts().len() as u32, n, "{}", db.display());
    }
    // A lone meta.db has the tree without values; a lone profile.db cannot be a model.
    let meta = root.join("dbase/small.d/meta.db");
    let lone = profile(&meta).expect("meta.db alone");
    assert!(lone.node_values().is_empty());
    assert!(matches!(
        profile(&root.join("dbase/small.d/profile.db")),
        Err(ReadError::Unsupported(_))
    ));
}
