//! The output policy as a property: over random trees of files, folders, empty folders and
//! folders profcodec wrote, random output paths, kinds, overwrite policies, inputs and writers
//! that succeed or fail, nothing outside the output path ever changes, and the output path
//! changes only to the new output, and only as the policy allows.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use profcodec::output::{FOLDER_MARKER, OutputKind, OutputPath, Overwrite};
use proptest::prelude::*;

/// What a tree holds: each path below the root, relative, with a file's bytes (`None` for a
/// folder).
type Snapshot = BTreeMap<PathBuf, Option<Vec<u8>>>;

fn snapshot(root: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if path.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// One entry of a generated tree.
#[derive(Debug, Clone)]
enum Node {
    File(u8),
    EmptyFolder,
    Folder(Vec<(usize, Node)>),
    MarkedFolder,
}

const NAMES: [&str; 3] = ["a", "b", "c"];

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        any::<u8>().prop_map(Node::File),
        Just(Node::EmptyFolder),
        Just(Node::MarkedFolder),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop::collection::vec((0..NAMES.len(), inner), 1..3).prop_map(Node::Folder)
    })
}

fn make(dir: &Path, children: &[(usize, Node)]) {
    for (name, node) in children {
        let path = dir.join(NAMES[*name]);
        if path.exists() {
            continue;
        }
        match node {
            Node::File(byte) => std::fs::write(&path, [*byte]).unwrap(),
            Node::EmptyFolder => std::fs::create_dir(&path).unwrap(),
            Node::MarkedFolder => {
                std::fs::create_dir(&path).unwrap();
                std::fs::write(path.join(FOLDER_MARKER), "").unwrap();
                std::fs::write(path.join("old"), "old").unwrap();
            }
            Node::Folder(inner) => {
                std::fs::create_dir(&path).unwrap();
                make(&path, inner);
            }
        }
    }
}

/// Output paths relative to the root: existing names, new names, nested ones, a trailing `/`.
const OUTPUTS: [&str; 9] = ["a", "b", "c", "new", "a/a", "a/new", "b/c", "a/", "new/"];
/// Inputs relative to the root (`None`: no input named).
const INPUTS: [Option<&str>; 5] = [None, Some("a"), Some("b"), Some("a/a"), Some("c/b")];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nothing_outside_the_output_changes(
        tree in prop::collection::vec((0..NAMES.len(), node()), 0..4),
        output in 0..OUTPUTS.len(),
        folder in any::<bool>(),
        force in any::<bool>(),
        input in 0..INPUTS.len(),
        succeed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        make(root, &tree);
        let before = snapshot(root);
        let rel = OUTPUTS[output];
        let out = root.join(rel);
        let kind = if folder { OutputKind::Folder } else { OutputKind::File };
        let mut spec = OutputPath::new(&out, kind).overwrite(Overwrite::from_force(force));
        let input = INPUTS[input].map(|i| root.join(i)).filter(|i| i.exists());
        if let Some(input) = &input {
            spec = spec.input(input);
        }
        let written = spec.check().map_err(|e| e.to_string()).and_then(|checked| {
            let result = if folder {
                checked.write_with(|staged| {
                    if !succeed {
                        return Err(std::io::Error::other("writer failed"));
                    }
                    std::fs::create_dir(staged)?;
                    std::fs::write(staged.join("new"), "new")
                })
            } else {
                checked.write_file(|w| {
                    w.write_all(b"new")?;
                    if succeed { Ok(()) } else { Err(std::io::Error::other("writer failed")) }
                })
            };
            result.map_err(|e| e.to_string())
        });
        let after = snapshot(root);
        let rel_out = Path::new(rel.trim_end_matches('/'));
        let outside = |snap: &Snapshot| -> Snapshot {
            snap.iter()
                .filter(|(p, _)| !p.starts_with(rel_out))
                .map(|(p, v)| (p.clone(), v.clone()))
                .collect()
        };
        prop_assert_eq!(outside(&before), outside(&after), "outside the output changed");
        let at = |snap: &Snapshot| -> Snapshot {
            snap.iter()
                .filter(|(p, _)| p.starts_with(rel_out))
                .map(|(p, v)| (p.clone(), v.clone()))
                .collect()
        };
        match written {
            Err(_) => prop_assert_eq!(at(&before), at(&after), "a refused or failed write changed the output"),
            Ok(()) => {
                prop_assert!(succeed);
                // What was there: nothing, or something of the same kind that may be replaced.
                match before.get(rel_out) {
                    None => {}
                    Some(Some(_)) => prop_assert!(!folder && force, "a file replaced without force or by a folder"),
                    Some(None) => {
                        prop_assert!(folder, "a folder replaced by a file");
                        let empty = !before.keys().any(|p| p.starts_with(rel_out) && p != rel_out);
                        let marked = before.contains_key(&rel_out.join(FOLDER_MARKER));
                        prop_assert!(empty || (marked && force), "a folder replaced that profcodec did not write");
                    }
                }
                if let Some(input) = &input {
                    let input = input.strip_prefix(root).unwrap();
                    prop_assert!(!input.starts_with(rel_out) && !rel_out.starts_with(input), "an input overlapped");
                }
                let mut want = Snapshot::new();
                if folder {
                    want.insert(rel_out.to_path_buf(), None);
                    want.insert(rel_out.join("new"), Some(b"new".to_vec()));
                    want.insert(rel_out.join(FOLDER_MARKER), after.get(&rel_out.join(FOLDER_MARKER)).cloned().flatten().map(Some).unwrap_or(None));
                } else {
                    want.insert(rel_out.to_path_buf(), Some(b"new".to_vec()));
                }
                prop_assert_eq!(at(&after), want);
            }
        }
    }
}
