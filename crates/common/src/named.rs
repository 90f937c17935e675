//! Files named inside an input: a source file a profile records, a binary a measurement loads.
//!
//! A profile may come from someone else, so a path found inside it says nothing of what the
//! user wants read. Such a file is read only when, with every symbolic link and `..` resolved,
//! it lies under a folder the user allowed ([`Allowed`]: a folder given on the command line,
//! the input's own folder), never under `/proc`, `/sys` or `/dev`, only when it is a regular
//! file, and only up to a size limit. Every refusal says why ([`Refusal`]), so that a front end
//! can tell the user which rule kept a file out and how to let it in.
//!
//! ```
//! use profcodec_common::named::{Allowed, Refusal};
//!
//! let dir = std::env::temp_dir().join(format!("named-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("t.pl"), "print 1;\n")?;
//! let mut allowed = Allowed::new();
//! allowed.allow(&dir, "the input's own folder");
//! assert_eq!(allowed.read(&dir.join("t.pl"), 1024)?.bytes, b"print 1;\n");
//! // `..` leaves the folder: refused, whatever is there.
//! assert!(matches!(
//!     allowed.read(&dir.join("../../etc/passwd"), 1024),
//!     Err(Refusal::Outside { .. } | Refusal::Missing)
//! ));
//! assert!(matches!(
//!     allowed.read("/proc/self/environ".as_ref(), 1024),
//!     Err(Refusal::System { .. })
//! ));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Read;
use std::path::{Path, PathBuf};

/// The folders whose files are never read when an input names them: the kernel's views of
/// processes, devices and settings (`/proc/self/environ` holds every environment variable).
pub const NEVER_READ: [&str; 3] = ["/proc", "/sys", "/dev"];

/// One allowed folder, resolved, with the rule that allows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Root {
    folder: PathBuf,
    rule: String,
}

/// The folders under which files named inside an input may be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowed {
    roots: Vec<Root>,
}

/// A file read under an [`Allowed`] folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The file with every link and `..` resolved.
    pub resolved: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Why a file named inside an input was not read. Its words follow "is" ([`Refusal::explain`]
/// puts the path in front).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// Nothing is at the path (or a folder on the way cannot be entered).
    #[error("not found")]
    Missing,
    /// The path resolves under `/proc`, `/sys` or `/dev`.
    #[error("under /proc, /sys or /dev, which are never read")]
    System {
        /// The path resolved.
        resolved: PathBuf,
    },
    /// The path resolves outside every allowed folder.
    #[error("outside the folders allowed ({allowed})")]
    Outside {
        /// The path resolved.
        resolved: PathBuf,
        /// The allowed folders, each with its rule, or "none".
        allowed: String,
    },
    /// The path is a folder, a FIFO, a socket or a device.
    #[error("{kind}, not a regular file")]
    NotRegular {
        /// The path resolved.
        resolved: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The file is larger than the limit.
    #[error("{bytes} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The path resolved.
        resolved: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The file could not be read.
    #[error("unreadable: {error}")]
    Unreadable {
        /// The path resolved.
        resolved: PathBuf,
        /// The system's words.
        error: String,
    },
}

impl Refusal {
    /// The path resolved (links and `..` followed), where it was.
    pub fn resolved(&self) -> Option<&Path> {
        match self {
            Refusal::Missing => None,
            Refusal::System { resolved }
            | Refusal::Outside { resolved, .. }
            | Refusal::NotRegular { resolved, .. }
            | Refusal::TooLarge { resolved, .. }
            | Refusal::Unreadable { resolved, .. } => Some(resolved),
        }
    }

    /// This refusal of `path` in words: `path` (and what it resolves to, where that differs)
    /// is ... .
    pub fn explain(&self, path: &Path) -> String {
        match self.resolved() {
            Some(resolved) if resolved != path => format!(
                "{} (resolving to {}) is {self}",
                path.display(),
                resolved.display()
            ),
            _ => format!("{} is {self}", path.display()),
        }
    }
}

impl Allowed {
    /// No folder allowed yet.
    pub fn new() -> Allowed {
        Allowed::default()
    }

    /// Allows the files under `folder`, for the reason `rule` (said when a file is refused,
    /// such as "--source-root" or "the input's own folder"). The folder is resolved now; one
    /// that does not exist holds nothing and is left out.
    pub fn allow(&mut self, folder: &Path, rule: impl Into<String>) {
        if let Ok(folder) = std::fs::canonicalize(folder)
            && folder.is_dir()
            && !self.roots.iter().any(|r| r.folder == folder)
        {
            self.roots.push(Root {
                folder,
                rule: rule.into(),
            });
        }
    }

    /// Whether no folder is allowed.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The allowed folders with their rules, as [`Refusal::Outside`] names them.
    fn describe(&self) -> String {
        if self.roots.is_empty() {
            return "none".to_owned();
        }
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|r| format!("{} {}", r.rule, r.folder.display()))
            .collect();
        roots.join(", ")
    }

    /// `path` resolved, when it may be read: under an allowed folder, outside `/proc`, `/sys`
    /// and `/dev`, a regular file.
    pub fn check(&self, path: &Path) -> Result<PathBuf, Refusal> {
        let never = |p: &Path| NEVER_READ.iter().any(|n| p.starts_with(n));
        if never(path) {
            return Err(Refusal::System {
                resolved: path.to_owned(),
            });
        }
        let resolved = std::fs::canonicalize(path).map_err(|_| Refusal::Missing)?;
        if never(&resolved) {
            return Err(Refusal::System { resolved });
        }
        if !self.roots.iter().any(|r| resolved.starts_with(&r.folder)) {
            return Err(Refusal::Outside {
                resolved,
                allowed: self.describe(),
            });
        }
        let meta = std::fs::metadata(&resolved).map_err(|_| Refusal::Missing)?;
        if !meta.is_file() {
            return Err(Refusal::NotRegular {
                resolved,
                kind: kind(&meta.file_type()),
            });
        }
        Ok(resolved)
    }

    /// The bytes of `path` when [`Allowed::check`] allows it and it holds at most `limit`
    /// bytes; the size is checked on the file opened, so a file that grows meanwhile is read
    /// no further than one byte past the limit.
    pub fn read(&self, path: &Path, limit: u64) -> Result<Named, Refusal> {
        let resolved = self.check(path)?;
        let unreadable = |e: std::io::Error, resolved: &Path| Refusal::Unreadable {
            resolved: resolved.to_owned(),
            error: e.to_string(),
        };
        let file = std::fs::File::open(&resolved).map_err(|e| unreadable(e, &resolved))?;
        let meta = file.metadata().map_err(|e| unreadable(e, &resolved))?;
        if !meta.is_file() {
            return Err(Refusal::NotRegular {
                resolved,
                kind: kind(&meta.file_type()),
            });
        }
        let too_large = |bytes: u64, resolved: PathBuf| Refusal::TooLarge {
            resolved,
            bytes,
            limit,
        };
        if meta.len() > limit {
            return Err(too_large(meta.len(), resolved));
        }
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| unreadable(e, &resolved))?;
        if bytes.len() as u64 > limit {
            return Err(too_large(bytes.len() as u64, resolved));
        }
        Ok(Named { resolved, bytes })
    }
}

/// What a path that is not a regular file is, in words.
fn kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("named-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_link_out_of_an_allowed_folder_is_refused() {
        let dir = scratch("link");
        let root = dir.join("root");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(dir.join("secret"), "key").unwrap();
        std::fs::write(root.join("ok.pl"), "1;").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.join("secret"), root.join("link.pl")).unwrap();
        let mut allowed = Allowed::new();
        allowed.allow(&root, "--source-root");
        assert_eq!(allowed.read(&root.join("ok.pl"), 10).unwrap().bytes, b"1;");
        #[cfg(unix)]
        assert!(matches!(
            allowed.read(&root.join("link.pl"), 10),
            Err(Refusal::Outside { .. })
        ));
        assert!(matches!(
            allowed.read(&root.join("../secret"), 10),
            Err(Refusal::Outside { .. })
        ));
        assert!(matches!(
            allowed.read(&root, 10),
            Err(Refusal::NotRegular {
                kind: "a folder",
                ..
            })
        ));
        assert!(matches!(
            allowed.read(&root.join("ok.pl"), 1),
            Err(Refusal::TooLarge {
                bytes: 2,
                limit: 1,
                ..
            })
        ));
        assert_eq!(
            allowed.read(&root.join("absent"), 10),
            Err(Refusal::Missing)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_kernels_folders_are_never_read_even_when_allowed() {
        let mut allowed = Allowed::new();
        allowed.allow(Path::new("/"), "--source-root");
        for path in ["/proc/self/environ", "/dev/null", "/sys/kernel/notes"] {
            assert!(
                matches!(
                    allowed.read(Path::new(path), 1 << 20),
                    Err(Refusal::System { .. })
                ),
                "{path}"
            );
        }
    }
}
