//! The names of several outputs written into one folder, one per input (`profcodec convert
//! --split`): each input's file name, told apart from the others' by as many of its folders'
//! names as it takes.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Component, PathBuf};

/// A distinct name for each of `inputs`: its file name, preceded by as many of its folders'
/// names (of its real path, joined by `-`) as make it differ from the others
/// (`a-nytprof.out`, `b-nytprof.out`); the same file named twice gets `-2`, `-3`... after its
/// name. Names are built from the raw names, never a lossy conversion; an input without a
/// name of its own is `profile`.
///
/// ```
/// use std::path::PathBuf;
/// let inputs = [PathBuf::from("/r/a/nytprof.out"), PathBuf::from("/r/b/nytprof.out")];
/// let names = profcodec::output::distinct_names(&inputs);
/// assert_eq!(names, ["a-nytprof.out", "b-nytprof.out"]);
/// ```
pub fn distinct_names(inputs: &[PathBuf]) -> Vec<OsString> {
    // Each input's path components, last first.
    let parts: Vec<Vec<OsString>> = inputs
        .iter()
        .map(|input| {
            let real = std::fs::canonicalize(input).unwrap_or_else(|_| input.clone());
            let mut parts: Vec<OsString> = real
                .components()
                .filter_map(|c| match c {
                    Component::Normal(p) => Some(p.to_os_string()),
                    _ => None,
                })
                .collect();
            parts.reverse();
            if parts.is_empty() {
                parts.push(OsString::from("profile"));
            }
            parts
        })
        .collect();
    let name = |parts: &[OsString], depth: usize| -> OsString {
        let mut name = OsString::new();
        for (i, part) in parts[..depth.min(parts.len())].iter().rev().enumerate() {
            if i > 0 {
                name.push("-");
            }
            name.push(part);
        }
        name
    };
    let mut depth = vec![1usize; inputs.len()];
    loop {
        let names: Vec<OsString> = parts.iter().zip(&depth).map(|(p, &d)| name(p, d)).collect();
        let mut seen: HashMap<&OsStr, Vec<usize>> = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            seen.entry(n.as_os_str()).or_default().push(i);
        }
        let mut deeper = false;
        for clash in seen.values().filter(|v| v.len() > 1) {
            for &i in clash {
                // The same path twice is told apart by a number, not by its folders.
                let differs = clash.iter().any(|&j| parts[j] != parts[i]);
                if differs && depth[i] < parts[i].len() {
                    depth[i] += 1;
                    deeper = true;
                }
            }
        }
        if deeper {
            continue;
        }
        // What is still the same (the same file twice) is numbered.
        let mut count: HashMap<OsString, usize> = HashMap::new();
        return names
            .into_iter()
            .map(|mut n| {
                let k = count.entry(n.clone()).or_insert(0);
                *k += 1;
                if *k > 1 {
                    n.push(format!("-{k}"));
                }
                n
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(inputs: &[&str]) -> Vec<String> {
        let inputs: Vec<PathBuf> = inputs.iter().map(PathBuf::from).collect();
        distinct_names(&inputs)
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn split_names_keep_the_path_that_tells_inputs_apart() {
        assert_eq!(
            names(&["/r/a/nytprof.out", "/r/b/x.out"]),
            ["nytprof.out", "x.out"]
        );
        assert_eq!(
            names(&["/r/a/nytprof.out", "/r/b/nytprof.out", "/r/c.out"]),
            ["a-nytprof.out", "b-nytprof.out", "c.out"]
        );
        assert_eq!(names(&["/x/a/t/p", "/y/a/t/p"]), ["x-a-t-p", "y-a-t-p"]);
        assert_eq!(names(&["/r/p", "/r/p"]), ["p", "p-2"]);
    }

    #[cfg(unix)]
    #[test]
    fn split_names_are_built_from_raw_names() {
        use std::os::unix::ffi::OsStrExt;
        let a = PathBuf::from(OsStr::from_bytes(b"/r/\xff/p"));
        let b = PathBuf::from(OsStr::from_bytes(b"/r/\xfe/p"));
        let names = distinct_names(&[a, b]);
        assert_eq!(names[0].as_bytes(), b"\xff-p");
        assert_eq!(names[1].as_bytes(), b"\xfe-p");
    }
}
