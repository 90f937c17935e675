//! The bytes on disk: magics, constants, `binrw` header structs and `zerocopy` records.
//!
//! No logic lives here. Every structure is named and laid out as in FORMATS.md (HPCToolkit's
//! `doc/FORMATS.md`, database v4.0), corrected by `as-implemented/hpctoolkit-db-v4.md`:
//!
//! - fixed headers and the elements of small tables are `#[binrw]` structs (read and written
//!   little-endian); their `SIZE` is the size this crate knows (the **END** row of FORMATS.md),
//!   a minimum, since "expandable" structures may grow in later minor versions and arrays of them
//!   must be walked with the stride stored in the file;
//! - the large arrays (value blocks, context indices, trace lines, identifiers) are `zerocopy`
//!   records with alignment-1 little-endian fields, because real files only 4-align value blocks
//!   (as-implemented, "Alignment").
//!
//! Gaps inside structures are `pad_before`/`pad_after` (read as skipped, written as zeros).

pub mod cct;
pub mod enums;
pub mod meta;
pub mod profile;
pub mod trace;

use binrw::binrw;

pub use cct::{ContextInfosHeader, ContextValueBlock, MetricIndex, ProfValue};
pub use enums::{Combine, EntryPointKind, LexicalType, Relation, ScopeType};
pub use meta::{
    ContextSpec, ContextTreeHeader, EntryPointSpec, FilesHeader, FunctionSpec, FunctionsHeader,
    GeneralHeader, IdNamesHeader, LoadModuleSpec, MetricDescription, MetricsHeader, ModulesHeader,
    PropagationScopeInstanceSpec, PropagationScopeSpec, SourceFileSpec, SummaryStatisticSpec,
};
pub use profile::{
    CtxIndex, IdTupleHeader, Identifier, ProfileInfo, ProfileInfosHeader, ProfileValueBlock, Value,
};
pub use trace::{ContextTraceHeader, ContextTraceHeadersHeader, TraceElem};

/// `magic` of every file: `HPCTOOLKIT` (FORMATS.md, Common file structure).
pub const MAGIC: [u8; 10] = *b"HPCTOOLKIT";
/// The only major version this crate reads and writes.
pub const MAJOR_VERSION: u8 = 4;
/// The minor version this crate writes (every real file seen says 4.0).
pub const MINOR_VERSION: u8 = 0;
/// Size of the footer every file ends with.
pub const FOOTER_SIZE: usize = 8;

/// Which of the four database files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    /// `meta.db`: properties of the execution, metrics, the context tree.
    Meta,
    /// `profile.db`: values arranged by profile (application thread).
    Profile,
    /// `cct.db`: values arranged by calling context.
    Cct,
    /// `trace.db`: time-centric traces.
    Trace,
}

impl FileKind {
    /// All four, in the order of the database.
    pub const ALL: [FileKind; 4] = [
        FileKind::Meta,
        FileKind::Profile,
        FileKind::Cct,
        FileKind::Trace,
    ];

    /// The 4-byte `format` identifier at offset 0xa.
    pub const fn format_id(self) -> [u8; 4] {
        match self {
            FileKind::Meta => *b"meta",
            FileKind::Profile => *b"prof",
            FileKind::Cct => *b"ctxt",
            FileKind::Trace => *b"trce",
        }
    }

    /// The 8-byte footer the file ends with (as-implemented, "Footers").
    pub const fn footer(self) -> [u8; 8] {
        match self {
            FileKind::Meta => *b"_meta.db",
            FileKind::Profile => *b"_prof.db",
            FileKind::Cct => *b"__ctx.db",
            FileKind::Trace => *b"trace.db",
        }
    }

    /// The file's name inside a database directory.
    pub const fn file_name(self) -> &'static str {
        match self {
            FileKind::Meta => "meta.db",
            FileKind::Profile => "profile.db",
            FileKind::Cct => "cct.db",
            FileKind::Trace => "trace.db",
        }
    }

    /// The kind whose `format` identifier is `id`.
    pub fn from_format_id(id: [u8; 4]) -> Option<FileKind> {
        FileKind::ALL.into_iter().find(|k| k.format_id() == id)
    }

    /// Size of the file header this crate knows (the extendable **END**), where the first section
    /// may start at the earliest. cct.db is special: see [`CCT_HEADER_SPAN`].
    pub const fn header_size(self) -> usize {
        match self {
            FileKind::Meta => MetaDbHeader::SIZE,
            FileKind::Profile => ProfileDbHeader::SIZE,
            FileKind::Cct => CctDbHeader::SIZE,
            FileKind::Trace => TraceDbHeader::SIZE,
        }
    }
}

impl core::fmt::Display for FileKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.file_name())
    }
}

/// A fixed-size on-disk structure: its known size and its name in FORMATS.md.
pub trait RawStruct {
    /// Size in bytes this crate reads and writes (the **END** row).
    const SIZE: usize;
    /// The structure's name, used in errors.
    const NAME: &'static str;
}

macro_rules! raw_struct {
    ($($t:ty => $size:expr, $name:expr;)*) => {$(
        impl $crate::raw::RawStruct for $t {
            const SIZE: usize = $size;
            const NAME: &'static str = $name;
        }
        impl $t {
            /// Size in bytes this crate reads and writes (the **END** row of FORMATS.md).
            pub const SIZE: usize = $size;
        }
    )*};
}
pub(crate) use raw_struct;

/// The common file header (FORMATS.md, Common file structure), 0x10 bytes.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// `HPCTOOLKIT`.
    pub magic: [u8; 10],
    /// `meta`, `prof`, `ctxt` or `trce`.
    pub format: [u8; 4],
    /// Common major version, 4.
    pub major_version: u8,
    /// Minor version of this file type.
    pub minor_version: u8,
}

impl FileHeader {
    /// The header this crate writes for `kind` (version 4.0).
    pub const fn new(kind: FileKind) -> Self {
        FileHeader {
            magic: MAGIC,
            format: kind.format_id(),
            major_version: MAJOR_VERSION,
            minor_version: MINOR_VERSION,
        }
    }
}

/// A `{sz,p}Section` pair of a file header: size first, then pointer.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Section {
    /// `szSection`: total size in bytes.
    pub size: u64,
    /// `pSection`: absolute offset of the section's first byte.
    pub offset: u64,
}

impl Section {
    /// One past the last byte (saturating, for hostile sizes).
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }
}

/// meta.db file header (FORMATS.md, `meta.db` version 4.0), 0x90 bytes.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaDbHeader {
    /// Common header.
    pub file: FileHeader,
    /// General Properties.
    pub general: Section,
    /// Identifier Names.
    pub id_names: Section,
    /// Performance Metrics.
    pub metrics: Section,
    /// Context Tree.
    pub context: Section,
    /// Common String Table.
    pub strings: Section,
    /// Load Modules.
    pub modules: Section,
    /// Source Files.
    pub files: Section,
    /// Functions.
    pub functions: Section,
}

/// profile.db file header, 0x30 bytes.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileDbHeader {
    /// Common header.
    pub file: FileHeader,
    /// Profile Info section.
    pub profile_infos: Section,
    /// Hierarchical Identifier Tuple section.
    pub id_tuples: Section,
}

/// cct.db file header, 0x20 bytes as FORMATS.md lists it.
///
/// hpcprof reserves 0x30 bytes ([`CCT_HEADER_SPAN`]): bytes 0x20..0x30 come from an uninitialised
/// buffer (as-implemented, "cct.db header is 0x30 bytes"). Readers ignore them; the view exposes
/// them so a byte-exact rewrite can keep them.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CctDbHeader {
    /// Common header.
    pub file: FileHeader,
    /// Context Info section.
    pub ctx_infos: Section,
}

/// Where hpcprof starts cct.db's first section: the header occupies 0x30 bytes on disk.
pub const CCT_HEADER_SPAN: usize = 0x30;

/// trace.db file header, 0x20 bytes.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceDbHeader {
    /// Common header.
    pub file: FileHeader,
    /// Context Trace Headers section.
    pub ctx_traces: Section,
}

/// A bare pointer (`char*` of an array such as `ppNames`).
impl RawStruct for u64 {
    const SIZE: usize = 8;
    const NAME: &'static str = "pointer";
}

raw_struct! {
    FileHeader => 0x10, "file header";
    Section => 0x10, "section pointer";
    MetaDbHeader => 0x90, "meta.db header";
    ProfileDbHeader => 0x30, "profile.db header";
    CctDbHeader => 0x20, "cct.db header";
    TraceDbHeader => 0x20, "trace.db header";
}

#[cfg(test)]
mod tests {
    use super::*;
    use binrw::{BinRead, BinWrite};

    fn size_of_written<T: for<'a> BinWrite<Args<'a> = ()> + binrw::meta::WriteEndian>(
        v: &T,
    ) -> usize {
        let mut out = std::io::Cursor::new(Vec::new());
        v.write(&mut out).expect("writing to a Vec cannot fail");
        out.into_inner().len()
    }

    #[test]
    fn sizes_match_formats_md() {
        let h = FileHeader::new(FileKind::Cct);
        assert_eq!(size_of_written(&h), FileHeader::SIZE);
        let meta = MetaDbHeader {
            file: FileHeader::new(FileKind::Meta),
            general: Section::default(),
            id_names: Section::default(),
            metrics: Section::default(),
            context: Section::default(),
            strings: Section::default(),
            modules: Section::default(),
            files: Section::default(),
            functions: Section::default(),
        };
        assert_eq!(size_of_written(&meta), MetaDbHeader::SIZE);
        let mut c = std::io::Cursor::new(b"HPCTOOLKITctxt\x04\x00".to_vec());
        let back = FileHeader::read(&mut c).expect("16 bytes");
        assert_eq!(back, h);
    }
}
