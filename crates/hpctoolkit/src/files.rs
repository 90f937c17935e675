//! The files of one input as the caller opened it ([`Source`]): a database directory's files,
//! each opened through the caller's [`Members`](profcodec_common::Members) (so that the caller
//! maps them and notices one cut while read), or the single `.db` file given.

use std::io;

use profcodec_common::source::{Member, Source};

use crate::{CctDb, Database, Error, FileKind, MetaDb, ProfileDb, TraceDb};

/// The bytes of one file: the input's own, or a member the caller opened.
enum Held<'a> {
    Given(&'a [u8]),
    Opened(Member),
}

impl Held<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Held::Given(bytes) => bytes,
            Held::Opened(member) => (**member).as_ref(),
        }
    }
}

/// The files of an HPCToolkit input: those of a database directory that exist, or the one
/// `.db` file given (its kind read from its format identifier).
pub struct DatabaseFiles<'a> {
    /// True for a database directory.
    directory: bool,
    /// Indexed like [`FileKind::ALL`].
    files: [Option<Held<'a>>; 4],
}

impl std::fmt::Debug for DatabaseFiles<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseFiles")
            .field("directory", &self.directory)
            .field("files", &self.names())
            .finish()
    }
}

fn slot(kind: FileKind) -> usize {
    match kind {
        FileKind::Meta => 0,
        FileKind::Profile => 1,
        FileKind::Cct => 2,
        FileKind::Trace => 3,
    }
}

impl<'a> DatabaseFiles<'a> {
    /// The files of `input`, an HPCToolkit database directory (its `.db` files that exist,
    /// opened through `input.members`) or one of its files (`input.bytes`).
    ///
    /// Fails when a file of the directory cannot be opened (the error of
    /// [`Members::open`](profcodec_common::Members::open), which names the file), or when a
    /// single file's format identifier is none of the four.
    pub fn load(input: &Source<'a>) -> io::Result<DatabaseFiles<'a>> {
        let mut files = DatabaseFiles {
            directory: input.is_folder(),
            files: [None, None, None, None],
        };
        if files.directory {
            for kind in FileKind::ALL {
                let path = input.path.join(kind.file_name());
                if path.is_file() {
                    files.files[slot(kind)] = Some(Held::Opened(input.members.open(&path)?));
                }
            }
        } else {
            let kind = file_kind(input.bytes).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, "not an HPCToolkit .db file")
            })?;
            files.files[slot(kind)] = Some(Held::Given(input.bytes));
        }
        Ok(files)
    }

    /// True for a database directory, false for a single file.
    pub fn is_directory(&self) -> bool {
        self.directory
    }

    /// The bytes of the file of `kind`, if the input has it.
    pub fn bytes(&self, kind: FileKind) -> Option<&[u8]> {
        self.files[slot(kind)].as_ref().map(Held::bytes)
    }

    /// The names of the files present, in [`FileKind::ALL`] order.
    pub fn names(&self) -> Vec<&'static str> {
        FileKind::ALL
            .into_iter()
            .filter(|&k| self.bytes(k).is_some())
            .map(FileKind::file_name)
            .collect()
    }

    /// meta.db's view (headers checked), if present.
    pub fn meta(&self) -> Result<Option<MetaDb<'_>>, Error> {
        self.bytes(FileKind::Meta).map(MetaDb::parse).transpose()
    }

    /// profile.db's view (headers checked), if present.
    pub fn profile(&self) -> Result<Option<ProfileDb<'_>>, Error> {
        self.bytes(FileKind::Profile)
            .map(ProfileDb::parse)
            .transpose()
    }

    /// cct.db's view (headers checked), if present.
    pub fn cct(&self) -> Result<Option<CctDb<'_>>, Error> {
        self.bytes(FileKind::Cct).map(CctDb::parse).transpose()
    }

    /// trace.db's view (headers checked), if present.
    pub fn trace(&self) -> Result<Option<TraceDb<'_>>, Error> {
        self.bytes(FileKind::Trace).map(TraceDb::parse).transpose()
    }

    /// The files cross-linked ([`Database::from_parts`]); a missing meta.db reads as an empty
    /// one, which fails its header check.
    pub fn database(&self) -> Result<Database<&[u8]>, Error> {
        Database::from_parts(
            self.bytes(FileKind::Meta).unwrap_or_default(),
            self.bytes(FileKind::Profile),
            self.bytes(FileKind::Cct),
            self.bytes(FileKind::Trace),
        )
    }
}

/// The kind of a `.db` file, from the format identifier after the `HPCTOOLKIT` magic.
pub(crate) fn file_kind(bytes: &[u8]) -> Option<FileKind> {
    bytes
        .get(10..14)
        .and_then(|id| <[u8; 4]>::try_from(id).ok())
        .and_then(FileKind::from_format_id)
}
