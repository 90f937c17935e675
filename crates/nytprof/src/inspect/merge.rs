//! `merge`: many files of one program into one v5.0 file that Devel::NYTProf reads, with
//! `nytprofmerge`'s rules ([`crate::merge`]).

use std::io::Write;
use std::path::Path;

use profcodec_common::inspect::{Error, Source};

use super::{invalid, load_error};
use crate::merge::{Merger, ReadInput};
use crate::pynytprof;

/// One input read by [`Merge::read`], ready to merge.
#[derive(Debug)]
pub struct MergeInput(Read);

#[derive(Debug)]
enum Read {
    /// A v5.0 file.
    File(Box<ReadInput>),
    /// A Pynytprof file, converted.
    Model(Box<crate::Profile>),
}

/// The merge of the inputs read so far; the umbrella feeds it one input at a time, so that
/// only the merged model and one input's model are in memory.
#[derive(Debug, Default)]
pub struct Merge {
    merger: Merger,
}

impl Merge {
    /// An empty merge.
    pub fn new() -> Merge {
        Merge::default()
    }

    /// Reads `input` (a v5.0 file, compressed or not, or a Pynytprof file) and merges it; on
    /// an error nothing of it is merged.
    pub fn add(&mut self, input: &Source<'_>) -> Result<(), Error> {
        self.add_read(Merge::read(input)?);
        Ok(())
    }

    /// Reads `input` for [`Merge::add_read`] without a merge, so that inputs can be read on
    /// several threads and merged in order on one.
    pub fn read(input: &Source<'_>) -> Result<MergeInput, Error> {
        Merge::read_with(input, true)
    }

    /// [`Merge::read`], with a second thread for a compressed file only when `second_thread`
    /// ([`ModelOptions::second_thread`](crate::ModelOptions::second_thread): off where every
    /// core already reads an input of its own).
    pub fn read_with(input: &Source<'_>, second_thread: bool) -> Result<MergeInput, Error> {
        let bytes = input.bytes;
        if pynytprof::detect(bytes) {
            let py = pynytprof::parse(bytes).map_err(invalid)?;
            return Ok(MergeInput(Read::Model(Box::new(pynytprof::to_profile(
                &py,
            )))));
        }
        match Merger::read_with(bytes, second_thread) {
            Ok(read) => Ok(MergeInput(Read::File(Box::new(read)))),
            Err((report, e)) => Err(load_error(e, &report)),
        }
    }

    /// Merges an input that [`Merge::read`] read.
    pub fn add_read(&mut self, input: MergeInput) {
        match input.0 {
            Read::File(read) => self.merger.add_read(*read),
            Read::Model(profile) => self.merger.add(&profile),
        }
    }

    /// Writes the merged profile into `out`, which does not exist yet (deflated when an input
    /// was), and returns what `nytprofmerge` would have warned about. Nothing is created when
    /// the merged profile cannot be written.
    pub fn write(self, out: &Path) -> Result<Vec<String>, Error> {
        let warnings = self.merger.warnings().to_vec();
        let level = self.merger.compression();
        let merged = self.merger.finish();
        merged.check_writable().map_err(invalid)?;
        let mut sink = std::io::BufWriter::new(std::fs::File::create(out)?);
        merged.write_with(&mut sink, level).map_err(invalid)?;
        sink.flush()?;
        Ok(warnings)
    }
}
