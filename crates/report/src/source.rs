//! The text of source files: embedded in the profile, else read from disk.

use std::path::{Path, PathBuf};

use crate::{Input, SourceRoot};

/// The largest source file read from disk.
const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// Where a file's text came from, or why there is none.
pub(crate) enum Text {
    Found { lines: Vec<String>, from: String },
    Missing { note: String },
}

/// The candidate paths of `file` on this machine, in the order they are tried.
fn candidates(file: &str, roots: &[SourceRoot]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let recorded = Path::new(file);
    for root in roots {
        match &root.from {
            Some(from) => {
                if let Some(rest) = file.strip_prefix(from.as_str()) {
                    out.push(root.to.join(rest.trim_start_matches('/')));
                }
            }
            None => {
                out.push(root.to.join(file.trim_start_matches('/')));
                if let Some(name) = recorded.file_name() {
                    out.push(root.to.join(name));
                }
            }
        }
    }
    out.push(recorded.to_path_buf());
    out
}

/// The text of `file`: embedded in `input`, else the first candidate on disk that is a readable
/// file.
pub(crate) fn text(input: &Input<'_>, file: &str, roots: &[SourceRoot]) -> Text {
    if let Some(lines) = input.embedded.get(file) {
        return Text::Found {
            lines: lines.clone(),
            from: "the profile (saved source)".to_owned(),
        };
    }
    let tried = candidates(file, roots);
    for path in &tried {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_SOURCE_BYTES {
            continue;
        }
        if let Ok(bytes) = std::fs::read(path) {
            let text = String::from_utf8_lossy(&bytes);
            return Text::Found {
                lines: text.lines().map(str::to_owned).collect(),
                from: path.display().to_string(),
            };
        }
    }
    let looked: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    Text::Missing {
        note: format!(
            "The source is not in the profile and was not found on disk (looked at {}); \
             --source-root FROM=TO maps recorded paths to this machine's.",
            looked.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_map_recorded_paths() {
        let roots: Vec<SourceRoot> = vec![
            "/build=/src".parse().unwrap_or_else(|e| match e {}),
            "/x".parse().unwrap_or_else(|e| match e {}),
        ];
        let c = candidates("/build/a/b.pl", &roots);
        assert_eq!(
            c,
            [
                PathBuf::from("/src/a/b.pl"),
                PathBuf::from("/x/build/a/b.pl"),
                PathBuf::from("/x/b.pl"),
                PathBuf::from("/build/a/b.pl"),
            ]
        );
    }
}
