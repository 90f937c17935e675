//! The text of source files: embedded in the profile, else read from disk where the user allows
//! it.
//!
//! A profile names its source files, and a profile may come from someone else: a file it names
//! is read only under a folder the user allowed (a `--source-root` folder, or the folder of the
//! input itself: a database's `src/`, a measurement folder, the folder of a profile file), never
//! under `/proc`, `/sys` or `/dev`, only when it is a regular file of at most 16 MiB
//! ([`profcodec_common::named`], the rule every file named inside an input follows).

use std::path::{Path, PathBuf};

use profcodec_common::named::{Allowed, Refusal};

use crate::{Input, SourceRoot};

/// The largest source file read from disk.
const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// How a front end allows a folder of sources, named where a file outside them is refused.
const ALLOW: &str = "--source-root DIR (Python: source_roots=[DIR]) allows a folder, \
                     --source-root FROM=TO maps recorded paths to this machine's";

/// Where a file's text came from, or why there is none.
pub(crate) enum Text {
    Found { lines: Vec<String>, from: String },
    Missing { note: String },
}

/// Where the text of one source file shown line by line came from, or why the page has none:
/// what a front end tells the user of the files the page embeds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceUse {
    /// The file's text is on the page.
    Embedded {
        /// The file as the profile names it.
        file: String,
        /// Where the text was read: a path on this machine, or the profile's saved source.
        from: String,
    },
    /// The page shows the file's line values without its text.
    Left {
        /// The file as the profile names it.
        file: String,
        /// Why: not found, or which rule kept it out and how to let it in.
        why: String,
    },
}

impl SourceUse {
    /// The use of `file` as the page shows it: text `from` somewhere, else the `note` that says
    /// why not.
    pub(crate) fn of(file: &str, from: Option<&str>, note: Option<&str>) -> SourceUse {
        match from {
            Some(from) => SourceUse::Embedded {
                file: file.to_owned(),
                from: from.to_owned(),
            },
            None => SourceUse::Left {
                file: file.to_owned(),
                why: note.unwrap_or_default().to_owned(),
            },
        }
    }
}

impl std::fmt::Display for SourceUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceUse::Embedded { file, from } => {
                write!(f, "source of {file} embedded in the page, from {from}")
            }
            SourceUse::Left { file, why } => write!(f, "source of {file} not embedded. {why}"),
        }
    }
}

/// The candidate paths of `file` on this machine, in the order they are tried: under each
/// `--source-root`, then a relative recorded path under each of the input's folders, then the
/// recorded path itself.
fn candidates(file: &str, roots: &[SourceRoot], folders: &[PathBuf]) -> Vec<PathBuf> {
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
    if recorded.is_relative() {
        out.extend(folders.iter().map(|folder| folder.join(recorded)));
    }
    out.push(recorded.to_path_buf());
    out.dedup();
    out
}

/// The folders whose files `input` may show: the `--source-root` folders and the input's own.
fn allowed(input: &Input<'_>, roots: &[SourceRoot]) -> Allowed {
    let mut allowed = Allowed::new();
    for root in roots {
        allowed.allow(&root.to, "--source-root");
    }
    for folder in &input.source_folders {
        allowed.allow(folder, "the input's folder");
    }
    allowed
}

/// Why an eval's code has no text: it was a string, never a file, so no folder can hold it.
const EVAL_NOTE: &str = "This is the code of a string eval: it has no file on disk, and the \
     profile did not save its source (Devel::NYTProf saves it with savesrc=1, \
     Devel::StatProfiler with -source all_evals).";

/// Whether `file` names the code of a string eval as Perl names it (`(eval 12)`, NYTProf's
/// `(eval 12)[lib/A.pm:40]`), not a file: nothing is looked for on disk.
fn is_eval(file: &str) -> bool {
    file.starts_with("(eval ") || file.contains("/(eval ")
}

/// The text of `file`: embedded in `input`, else the first candidate on disk that the rule of
/// [`profcodec_common::named`] allows; else why none was read.
pub(crate) fn text(input: &Input<'_>, file: &str, roots: &[SourceRoot]) -> Text {
    if let Some(lines) = input.embedded.get(file) {
        return Text::Found {
            lines: lines.clone(),
            from: "the profile (saved source)".to_owned(),
        };
    }
    if is_eval(file) {
        return Text::Missing {
            note: EVAL_NOTE.to_owned(),
        };
    }
    let allowed = allowed(input, roots);
    let tried = candidates(file, roots, &input.source_folders);
    let mut refused: Vec<String> = Vec::new();
    for path in &tried {
        match allowed.read(path, MAX_SOURCE_BYTES) {
            Ok(named) => {
                let text = String::from_utf8_lossy(&named.bytes);
                return Text::Found {
                    lines: text.lines().map(str::to_owned).collect(),
                    from: path.display().to_string(),
                };
            }
            Err(Refusal::Missing) => {}
            Err(why) => {
                let why = match why {
                    Refusal::TooLarge { bytes, .. } => format!(
                        "{} is too large: {} ({bytes} bytes), over the {} a report reads",
                        path.display(),
                        crate::text::bytes(bytes),
                        crate::text::bytes(MAX_SOURCE_BYTES),
                    ),
                    Refusal::Outside { .. } => format!("{}; {ALLOW}", why.explain(path)),
                    why => why.explain(path),
                };
                if !refused.contains(&why) {
                    refused.push(why);
                }
            }
        }
    }
    let note = if refused.is_empty() {
        let looked: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
        format!(
            "The source is not in the profile and was not found on disk (looked at {}); \
             {ALLOW}.",
            looked.join(", ")
        )
    } else {
        format!(
            "The source is not in the profile and was not read from disk: {}.",
            refused.join("; ")
        )
    };
    Text::Missing { note }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evals_are_code_without_a_file() {
        assert!(is_eval("(eval 12)"));
        assert!(is_eval("(eval 3)[lib/A.pm:40]"));
        assert!(is_eval("/home/u/(eval 7)"));
        assert!(!is_eval("lib/eval.pm"));
        assert!(!is_eval("evaluate (eval"));
    }

    #[test]
    fn roots_map_recorded_paths() {
        let roots: Vec<SourceRoot> = vec![
            "/build=/src".parse().unwrap_or_else(|e| match e {}),
            "/x".parse().unwrap_or_else(|e| match e {}),
        ];
        let c = candidates("/build/a/b.pl", &roots, &[PathBuf::from("/in")]);
        assert_eq!(
            c,
            [
                PathBuf::from("/src/a/b.pl"),
                PathBuf::from("/x/build/a/b.pl"),
                PathBuf::from("/x/b.pl"),
                PathBuf::from("/build/a/b.pl"),
            ]
        );
        let c = candidates("src/a.c", &[], &[PathBuf::from("/db")]);
        assert_eq!(c, [PathBuf::from("/db/src/a.c"), PathBuf::from("src/a.c")]);
    }
}
