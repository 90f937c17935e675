//! Damaged inputs never panic the tables: every table of cut and bit-flipped copies of the
//! workspace's test files is read to its end or to its error.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use profcodec::tables::{Input, ScanOptions, Tables};
use profcodec_testkit::hostile::{bit_flips, truncation_points};

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// Reads every table of `path` (opening may fail: that is an answer too).
fn read_all(path: &Path) {
    let Ok(input) = Input::open(path) else {
        return;
    };
    for table in input.set().tables() {
        if let Ok(batches) = input.batches(table.name, &ScanOptions::new().batch_rows(64)) {
            for batch in batches {
                if batch.is_err() {
                    break;
                }
            }
        }
    }
}

/// About 48 cuts and 48 flips of `data`, each written to `target` and read.
fn mutants(data: &[u8], target: &Path, mut each: impl FnMut(&Path)) {
    let points = truncation_points(data.len());
    let step = (points.len() / 48).max(1);
    for &at in points.iter().step_by(step) {
        std::fs::write(target, &data[..at]).unwrap();
        each(target);
    }
    for mutant in bit_flips(data, 48) {
        std::fs::write(target, &mutant).unwrap();
        each(target);
    }
}

#[test]
fn damaged_files_give_errors_not_panics() {
    let dir = std::env::temp_dir().join(format!("profcodec-arrow-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    for file in [
        "nytprof/hello.nytprof.out",
        "easyprofiler/small_v210.prof",
        "easyprofiler/small_v130.prof",
        "statprofiler/features.statprof",
        "hpcrun/demo-04.00b.hpcrun",
        "hpcrun/demo-02.00b.hpcrun",
        "hpcrun/demo.hpctrace",
    ] {
        let data = std::fs::read(testdata(file)).unwrap();
        let name = Path::new(file).file_name().unwrap();
        mutants(&data, &dir.join(name), read_all);
    }
    // An HPCToolkit database: each of its files damaged in turn, the others intact.
    let db = testdata("hpctoolkit/demo.d");
    let copy = dir.join("demo.d");
    std::fs::create_dir(&copy).unwrap();
    let files = ["meta.db", "profile.db", "cct.db", "trace.db"];
    for f in files {
        if db.join(f).is_file() {
            std::fs::copy(db.join(f), copy.join(f)).unwrap();
        }
    }
    for f in files {
        let Ok(data) = std::fs::read(db.join(f)) else {
            continue;
        };
        mutants(&data, &copy.join(f), |_| read_all(&copy));
        std::fs::write(copy.join(f), &data).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
