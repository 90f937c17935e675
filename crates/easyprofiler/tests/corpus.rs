//! The real captures of `../shared/corpus/easyprofiler/` against the JSON easy_profiler's own
//! converter made from each: descriptors, every thread's block tree (ids, names, ns times,
//! nesting) and bookmarks; and a byte-identical rewrite of each.

use std::path::PathBuf;

use profcodec_easyprofiler::{BlockTree, Mode, ThreadTree, parse, parse_with};
use serde_json::Value;

fn corpus() -> Option<Vec<PathBuf>> {
    let dir = profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler")?;
    let files: Vec<PathBuf> = profcodec_testkit::corpus::files_below(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "prof"))
        .collect();
    assert!(files.len() >= 4, "expected the four corpus captures");
    Some(files)
}

fn lossy(b: impl AsRef<[u8]>) -> String {
    let b = b.as_ref();
    String::from_utf8_lossy(b).into_owned()
}

fn check_node(tree: &BlockTree<'_>, th: &ThreadTree<'_>, i: u32, json: &Value, path: &str) {
    let n = &th.nodes[i as usize];
    let d = tree.descriptor(n.descriptor).expect("descriptor present");
    assert_eq!(json["id"], u64::from(th.block_index(i)), "{path}: id");
    assert_eq!(json["name"], lossy(d.name()), "{path}: name");
    assert_eq!(json["start"], n.begin, "{path}: start");
    assert_eq!(json["stop"], n.end, "{path}: stop");
    assert_eq!(json["descriptor"], n.descriptor, "{path}: descriptor");
    check_children(tree, th, &th.children(i), json, path);
}

fn check_children(
    tree: &BlockTree<'_>,
    th: &ThreadTree<'_>,
    ours: &[u32],
    json: &Value,
    path: &str,
) {
    let empty = Vec::new();
    let theirs = json
        .get("children")
        .map(|c| c.as_array().expect("children array"))
        .unwrap_or(&empty);
    assert_eq!(ours.len(), theirs.len(), "{path}: number of children");
    for (k, (&i, j)) in ours.iter().zip(theirs).enumerate() {
        check_node(tree, th, i, j, &format!("{path}/{k}"));
    }
}

#[test]
fn trees_equal_the_converter_json() {
    let Some(files) = corpus() else { return };
    for path in files {
        let data = std::fs::read(&path).expect("read capture");
        let json: Value =
            serde_json::from_slice(&std::fs::read(path.with_extension("json")).expect("read json"))
                .expect("parse json");
        let name = path.display().to_string();
        // Real files pass the strict mode too: the C++ converter read them.
        let view = parse_with(&data, Mode::Strict).unwrap_or_else(|e| panic!("{name}: {e}"));
        let tree = view.tree().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(tree.oddities.is_empty(), "{name}: {:?}", tree.oddities);
        assert_eq!(json["version"], view.header().version.to_string());

        // Descriptors, synthetic ones (runtime names) included.
        let descs = json["blockDescriptors"].as_array().expect("descriptors");
        assert_eq!(descs.len(), tree.descriptors_len(), "{name}: descriptors");
        for (i, (ours, theirs)) in tree.descriptors().zip(descs).enumerate() {
            let d = ours.expect("no empty slots in the corpus");
            assert_eq!(theirs["id"], i, "{name}: descriptor {i}");
            let parent = theirs
                .get("parentId")
                .and_then(Value::as_u64)
                .unwrap_or(i as u64);
            assert_eq!(
                parent,
                u64::from(d.descriptor.id),
                "{name}: descriptor {i} parent"
            );
            assert_eq!(theirs["name"], lossy(d.name()), "{name}: descriptor {i}");
            assert_eq!(
                theirs["type"], d.descriptor.block_type,
                "{name}: descriptor {i}"
            );
            assert_eq!(theirs["color"], format!("0x{:x}", d.descriptor.color));
            assert_eq!(theirs["sourceFile"], lossy(d.descriptor.file));
            assert_eq!(theirs["sourceLine"], d.descriptor.line);
        }

        // Every thread's tree.
        let threads = json["threads"].as_array().expect("threads");
        assert_eq!(threads.len(), tree.threads.len(), "{name}: threads");
        for jt in threads {
            let id = jt["threadId"].as_u64().expect("thread id");
            let th = tree
                .threads
                .iter()
                .find(|t| t.id == id)
                .expect("thread present");
            assert_eq!(jt["threadName"], lossy(th.name), "{name}: thread {id}");
            check_children(&tree, th, &th.roots, jt, &format!("{name}: thread {id}"));
        }

        // Bookmarks.
        let marks = json["bookmarks"].as_array().expect("bookmarks");
        let model = view.to_model().expect("model");
        assert_eq!(marks.len(), model.bookmarks.len());
        for (b, j) in model.bookmarks.iter().zip(marks) {
            assert_eq!(j["timestamp"], b.position);
            assert_eq!(j["color"], format!("0x{:x}", b.color));
            assert_eq!(j["text"], lossy(&b.text));
        }
    }
}

#[test]
fn rewrite_is_byte_identical() {
    let Some(files) = corpus() else { return };
    for path in files {
        let data = std::fs::read(&path).expect("read capture");
        let model = parse(&data).and_then(|v| v.to_model()).expect("model");
        assert_eq!(model.to_bytes().expect("write"), data, "{}", path.display());
    }
}

#[test]
fn corpus_versions_and_contents() {
    let Some(files) = corpus() else { return };
    let mut versions = Vec::new();
    for path in files {
        let data = std::fs::read(&path).expect("read capture");
        let view = parse(&data).expect("parse");
        let model = view.to_model().expect("model");
        versions.push(model.version.to_string());
        let cs: usize = model.threads.iter().map(|t| t.context_switches.len()).sum();
        assert!(cs > 0, "{}: context switches expected", path.display());
        let values = model
            .threads
            .iter()
            .flat_map(|t| &t.records)
            .filter(|r| matches!(r.body, profcodec_easyprofiler::RecordBody::Value(_)))
            .count();
        assert_eq!(values > 0, model.version.major() >= 2, "{}", path.display());
        // The raw record scan sees exactly the records the model holds.
        let scanned: usize = view
            .threads()
            .map(|t| t.expect("thread").records().count())
            .sum();
        assert_eq!(
            scanned,
            model.threads.iter().map(|t| t.records.len()).sum::<usize>()
        );
    }
    versions.sort();
    assert_eq!(versions, ["1.2.0", "1.3.0", "2.0.1", "2.1.0"]);
}

#[test]
fn testdata_files_pass_strict_and_rewrite_identically() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/easyprofiler");
    let mut n = 0;
    for path in profcodec_testkit::corpus::files_below(&dir) {
        if path.extension().is_none_or(|e| e != "prof") {
            continue;
        }
        let data = std::fs::read(&path).expect("read");
        let view = parse_with(&data, Mode::Strict).expect("strict");
        let tree = view.tree().expect("tree");
        assert!(
            tree.oddities.is_empty(),
            "{}: {:?}",
            path.display(),
            tree.oddities
        );
        assert_eq!(
            view.to_model().expect("model").to_bytes().expect("write"),
            data
        );
        n += 1;
    }
    assert_eq!(n, 6, "the six testdata captures");
}
