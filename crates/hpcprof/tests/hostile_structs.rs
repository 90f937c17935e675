//! Hostile structure files in a measurement folder: a damaged hpcstruct file, one nested past
//! the reader's depth limit, one that declares entities. Each is left out as hpcprof leaves it:
//! the database is made, the same as without them. (The kernel listing's inflation cap and the
//! paths opened are tested in `src/symbols.rs`.)

use std::path::Path;

use profcodec_hpcprof::{Options, prof};

fn copy_demo(to: &Path) {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcprof/demo.m");
    std::fs::create_dir_all(to).expect("measurement folder");
    for entry in std::fs::read_dir(demo).expect("demo.m") {
        let entry = entry.expect("entry of demo.m");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}

#[test]
fn unreadable_structure_files_are_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("demo.m");
    copy_demo(&m);
    let structs = m.join("structs");
    std::fs::create_dir(&structs).unwrap();
    std::fs::write(
        structs.join("damaged.hpcstruct"),
        b"<HPCToolkitStructure><LM n=",
    )
    .unwrap();
    let deep = "<P>".repeat(200_000);
    std::fs::write(structs.join("deep.hpcstruct"), deep).unwrap();
    let laughs = br#"<?xml version="1.0"?>
<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<HPCToolkitStructure i="0" version="4.9" n=""><LM i="1" n="&b;" has-calls="0" v="{}"/>
</HPCToolkitStructure>"#;
    std::fs::write(structs.join("entities.hpcstruct"), laughs).unwrap();

    let placed = prof(&[&m], &Options::default()).expect("the database is made");
    let ignored = prof(
        &[&m],
        &Options {
            ignore_structs: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(placed, ignored);
}
