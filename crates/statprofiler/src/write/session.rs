//! A process's files with rotation by size, as the profiler writes them (the crate docs,
//! "Files"; R:779-793, T:1065-1101).

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use crate::model::{Container, Genealogy, Header, PerlText, ProcessId, Record};
use crate::write::Writer;

/// `<template>.<48 hex id>.<8 hex ordinal>` (T:1071-1083).
pub fn session_file_name(template: &Path, id: &ProcessId, ordinal: u32) -> PathBuf {
    let mut name = template.as_os_str().to_owned();
    name.push(format!(".{}.{ordinal:08x}", id.hex()));
    PathBuf::from(name)
}

/// Writes one process's stream into rotated files: each file is written as `<name>_` and renamed
/// on close (T:1085-1087); before a sample, when the file's position passed `max_size`, the file
/// is closed with a file-end record and the next ordinal starts with a full header (R:790-793).
#[derive(Debug)]
pub struct SessionWriter {
    template: PathBuf,
    header: Header,
    genealogy: Genealogy,
    container: Container,
    max_size: u64,
    current: Option<(Writer<BufWriter<File>>, PathBuf)>,
    files: Vec<PathBuf>,
}

impl SessionWriter {
    /// Starts ordinal `genealogy.ordinal` (usually 1) of process `genealogy.id`; `header` gives
    /// the other header fields; `max_size` is `-maxsize` (default 10 MiB).
    pub fn new(
        template: impl Into<PathBuf>,
        header: &Header,
        genealogy: Genealogy,
        container: Container,
        max_size: u64,
    ) -> io::Result<Self> {
        let mut w = SessionWriter {
            template: template.into(),
            header: header.clone(),
            genealogy,
            container,
            max_size,
            current: None,
            files: Vec::new(),
        };
        w.open()?;
        Ok(w)
    }

    fn open(&mut self) -> io::Result<()> {
        let path = session_file_name(&self.template, &self.genealogy.id, self.genealogy.ordinal);
        let mut temp = path.clone().into_os_string();
        temp.push("_");
        let file = BufWriter::with_capacity(1 << 16, File::create(&temp)?);
        let mut header = self.header.clone();
        header.genealogy = Some(self.genealogy);
        self.current = Some((Writer::new(file, &header, self.container)?, path));
        Ok(())
    }

    fn close(&mut self, end: Record<&[u8], &[u8]>) -> io::Result<()> {
        if let Some((mut writer, path)) = self.current.take() {
            writer.write(&end)?;
            writer.finish()?;
            let mut temp = path.clone().into_os_string();
            temp.push("_");
            std::fs::rename(&temp, &path)?;
            self.files.push(path);
        }
        Ok(())
    }

    /// Writes a record, rotating first when it starts a sample and the file is full.
    pub fn write<S: PerlText, B: AsRef<[u8]>>(&mut self, record: &Record<S, B>) -> io::Result<()> {
        if matches!(record, Record::SampleStart { .. })
            && self
                .current
                .as_ref()
                .is_some_and(|(w, _)| w.position() > self.max_size)
        {
            self.close(Record::FileEnd)?;
            self.genealogy.ordinal += 1;
            self.open()?;
        }
        match self.current.as_mut() {
            Some((w, _)) => w.write(record),
            None => Err(io::Error::other("session writer already finished")),
        }
    }

    /// Ends the stream (stream-end record), closes the last file and returns every file written.
    pub fn finish(mut self) -> io::Result<Vec<PathBuf>> {
        self.close(Record::StreamEnd)?;
        Ok(std::mem::take(&mut self.files))
    }
}

impl PerlText for &[u8] {
    fn flags(&self) -> u8 {
        0
    }
    fn bytes(&self) -> &[u8] {
        self
    }
}
