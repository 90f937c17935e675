//! The files of an HPCToolkit input: a database directory's (each mapped on its own) or the
//! single `.db` file given.

use profcodec_hpctoolkit::{CctDb, FileKind, MetaDb, ProfileDb, TraceDb};

use crate::{Format, Opened, ReadError};

/// The files of an HPCToolkit input, opened through [`Opened::open_member`]: those of a
/// database directory that exist, or the one `.db` file opened. A file that shrinks while it
/// is read fails the input's [`Opened::check_intact`] (and [`HpctoolkitFiles::check_intact`]).
#[derive(Debug)]
pub struct HpctoolkitFiles {
    /// meta.db.
    pub meta: Option<Opened>,
    /// profile.db.
    pub profile: Option<Opened>,
    /// cct.db.
    pub cct: Option<Opened>,
    /// trace.db.
    pub trace: Option<Opened>,
}

impl HpctoolkitFiles {
    /// The files of `input`, an HPCToolkit database directory or one of its files.
    pub fn load(input: &Opened) -> Result<HpctoolkitFiles, ReadError> {
        let mut files = HpctoolkitFiles {
            meta: None,
            profile: None,
            cct: None,
            trace: None,
        };
        if input.format() == Format::HpctoolkitDatabase {
            for kind in FileKind::ALL {
                let path = input.path().join(kind.file_name());
                if path.is_file() {
                    *files.slot(kind) = Some(input.open_member(&path)?);
                }
            }
        } else {
            let kind = match input.format() {
                Format::HpctoolkitMeta => FileKind::Meta,
                Format::HpctoolkitProfile => FileKind::Profile,
                Format::HpctoolkitCct => FileKind::Cct,
                _ => FileKind::Trace,
            };
            *files.slot(kind) = Some(input.open_member(input.path())?);
        }
        Ok(files)
    }

    /// [`Opened::check_intact`] of every file: an error when one of them shrank while it was
    /// read.
    pub fn check_intact(&self) -> Result<(), crate::OpenError> {
        [&self.meta, &self.profile, &self.cct, &self.trace]
            .into_iter()
            .flatten()
            .try_for_each(Opened::check_intact)
    }

    fn slot(&mut self, kind: FileKind) -> &mut Option<Opened> {
        match kind {
            FileKind::Meta => &mut self.meta,
            FileKind::Profile => &mut self.profile,
            FileKind::Cct => &mut self.cct,
            FileKind::Trace => &mut self.trace,
        }
    }

    /// The bytes of the file of `kind`, if the input has it.
    pub fn bytes(&self, kind: FileKind) -> Option<&[u8]> {
        match kind {
            FileKind::Meta => &self.meta,
            FileKind::Profile => &self.profile,
            FileKind::Cct => &self.cct,
            FileKind::Trace => &self.trace,
        }
        .as_ref()
        .map(Opened::bytes)
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
    pub fn meta(&self) -> Result<Option<MetaDb<'_>>, ReadError> {
        Ok(self.bytes(FileKind::Meta).map(MetaDb::parse).transpose()?)
    }

    /// profile.db's view (headers checked), if present.
    pub fn profile(&self) -> Result<Option<ProfileDb<'_>>, ReadError> {
        Ok(self
            .bytes(FileKind::Profile)
            .map(ProfileDb::parse)
            .transpose()?)
    }

    /// cct.db's view (headers checked), if present.
    pub fn cct(&self) -> Result<Option<CctDb<'_>>, ReadError> {
        Ok(self.bytes(FileKind::Cct).map(CctDb::parse).transpose()?)
    }

    /// trace.db's view (headers checked), if present.
    pub fn trace(&self) -> Result<Option<TraceDb<'_>>, ReadError> {
        Ok(self
            .bytes(FileKind::Trace)
            .map(TraceDb::parse)
            .transpose()?)
    }

    /// The identifier kind names, indexed by an identifier's `kind`: meta.db's when there is
    /// one (hpcprof's list, lower case), else the kinds hpcprof writes (summary, node, rank,
    /// thread, gpudevice, gpucontext, gpustream, core).
    pub fn kind_names(meta: Option<&MetaDb<'_>>) -> Result<Vec<String>, ReadError> {
        const DEFAULT: [&str; 8] = [
            "summary",
            "node",
            "rank",
            "thread",
            "gpudevice",
            "gpucontext",
            "gpustream",
            "core",
        ];
        match meta {
            Some(m) => Ok(m
                .id_names()
                .map(|n| n.map(|n| n.to_ascii_lowercase()))
                .collect::<Result<_, _>>()?),
            None => Ok(DEFAULT.iter().map(|&s| s.to_owned()).collect()),
        }
    }
}
