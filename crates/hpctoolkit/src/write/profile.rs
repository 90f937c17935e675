//! profile.db writer (FORMATS.md, `profile.db` version 4.0; hpctoolkit-db-v4.md).
//!
//! Layout, as hpcprof writes it: the 0x30-byte header, the Profile Info section at 0x30 (a
//! 0x10-byte header then `nProfiles` entries of `szProfile` = 0x30 bytes), the Identifier Tuple
//! section, then the value blocks in the order they are written (each at a 4-byte-aligned
//! offset: values, padding to 4, context indices), then the footer `_prof.db`.

use std::io::{self, Seek, Write};

use super::bytes::{Buf, Out, check_block, file_header, put_context_starts, put_metric_values};
use super::invalid;
use crate::model::{ContextStart, Identifier, MetricValue};

/// The footer of profile.db.
const FOOTER: &[u8; 8] = b"_prof.db";
/// Size of the file header.
const HEADER_SIZE: u64 = 0x30;
/// Size of the Profile Info section header.
const SECTION_HEADER_SIZE: u64 = 0x10;
/// `szProfile`: real files store 0x30, not FORMATS.md's "currently 40" (hpctoolkit-db-v4.md).
const PROFILE_INFO_SIZE: u64 = 0x30;

/// What profile.db says about a profile besides its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileInfo<'a> {
    /// `flags` (bit 0: `isSummary`).
    pub flags: u32,
    /// The identifier tuple; `None` writes `pIdTuple` = 0 (the canonical summary profile).
    pub id_tuple: Option<&'a [Identifier]>,
}

/// The value-block header of one profile ({PSVB}).
#[derive(Debug, Clone, Copy, Default)]
struct Block {
    n_values: u64,
    p_values: u64,
    n_ctxs: u32,
    p_ctx_indices: u64,
    written: bool,
}

/// Streams profile.db: the profiles' identities up front, then each profile's values as they
/// are produced, in any order, then [`ProfileDbWriter::finish`]. Only the per-profile headers
/// (a few dozen bytes each) stay in memory.
///
/// ```
/// use profcodec_hpctoolkit::model::{ContextStart, MetricValue};
/// use profcodec_hpctoolkit::write::{ProfileDbWriter, ProfileInfo};
/// let infos = [
///     ProfileInfo { flags: 1, id_tuple: None },
///     ProfileInfo { flags: 0, id_tuple: Some(&[]) },
/// ];
/// let mut w = ProfileDbWriter::new(std::io::Cursor::new(Vec::new()), &infos).unwrap();
/// w.write_profile(1, &[ContextStart { ctx_id: 5, start: 0 }], &[MetricValue { metric_id: 0, value: 2.0 }]).unwrap();
/// let bytes = w.finish().unwrap().into_inner();
/// assert!(bytes.ends_with(b"_prof.db"));
/// ```
#[derive(Debug)]
pub struct ProfileDbWriter<W> {
    out: Out<W>,
    id_tuple_ptrs: Vec<u64>,
    flags: Vec<u32>,
    blocks: Vec<Block>,
    scratch: Vec<u8>,
}

impl<W: Write + Seek> ProfileDbWriter<W> {
    /// Writes the header, the (provisional) Profile Info table and the identifier tuples.
    /// Profile `i` of `profiles` gets `profIndex` i; hpcprof puts the summary profile at 0.
    pub fn new(out: W, profiles: &[ProfileInfo<'_>]) -> io::Result<Self> {
        let n =
            u32::try_from(profiles.len()).map_err(|_| invalid("more than u32::MAX profiles"))?;
        let infos_size = SECTION_HEADER_SIZE + PROFILE_INFO_SIZE * u64::from(n);
        let tuples_at = HEADER_SIZE + infos_size;
        let mut tuples = Buf::default();
        let mut id_tuple_ptrs = Vec::with_capacity(profiles.len());
        for p in profiles {
            let Some(ids) = p.id_tuple else {
                id_tuple_ptrs.push(0);
                continue;
            };
            let n_ids = u16::try_from(ids.len())
                .map_err(|_| invalid("an identifier tuple longer than u16::MAX"))?;
            id_tuple_ptrs.push(tuples_at + tuples.pos());
            tuples.u16(n_ids);
            tuples.align(8);
            for id in ids {
                tuples.u8(id.kind);
                tuples.u8(0);
                tuples.u16(id.flags);
                tuples.u32(id.logical_id);
                tuples.u64(id.physical_id);
            }
        }
        let mut head = Buf::default();
        file_header(
            &mut head,
            b"prof",
            &[(infos_size, HEADER_SIZE), (tuples.pos(), tuples_at)],
        );
        head.u64(HEADER_SIZE + SECTION_HEADER_SIZE);
        head.u32(n);
        head.u8(PROFILE_INFO_SIZE as u8);
        head.align(8);
        // The table is filled in by finish(); zeros until then.
        head.zeros((PROFILE_INFO_SIZE * u64::from(n)) as usize);
        head.bytes.extend_from_slice(&tuples.bytes);
        head.align(8);
        let mut out = Out::new(out)?;
        out.write_at(0, &head.bytes)?;
        Ok(ProfileDbWriter {
            out,
            id_tuple_ptrs,
            flags: profiles.iter().map(|p| p.flags).collect(),
            blocks: vec![Block::default(); profiles.len()],
            scratch: Vec::new(),
        })
    }

    /// Writes the values of profile `prof_index`: `contexts` sorted by `ctxId`, each with at
    /// least one value, starting at index 0; each context's values sorted by `metricId`. Each
    /// profile is written at most once.
    pub fn write_profile(
        &mut self,
        prof_index: u32,
        contexts: &[ContextStart],
        values: &[MetricValue],
    ) -> io::Result<()> {
        let block = self
            .blocks
            .get(prof_index as usize)
            .ok_or_else(|| invalid("profile index out of range"))?;
        if block.written {
            return Err(invalid("a profile's values were written twice"));
        }
        check_block(
            "profile.db value block",
            contexts.iter().map(|c| (c.ctx_id, c.start)),
            values,
            |v| v.metric_id,
        )?;
        let n_ctxs =
            u32::try_from(contexts.len()).map_err(|_| invalid("more than u32::MAX contexts"))?;
        let p_values = self.out.pos();
        put_metric_values(&mut self.out, values, &mut self.scratch)?;
        // Values are 10 bytes each; the context indices start at the next 4-byte boundary.
        self.out.pad_to(4)?;
        let p_ctx_indices = self.out.pos();
        put_context_starts(&mut self.out, contexts, &mut self.scratch)?;
        self.blocks[prof_index as usize] = Block {
            n_values: values.len() as u64,
            p_values,
            n_ctxs,
            p_ctx_indices,
            written: true,
        };
        Ok(())
    }

    /// Writes the footer and the Profile Info table; profiles never written are empty. Returns
    /// the output, positioned after the footer.
    pub fn finish(mut self) -> io::Result<W> {
        let end = self.out.pos();
        self.out.write_at(end, FOOTER)?;
        let mut table = Buf::default();
        for ((block, ptr), flags) in self.blocks.iter().zip(&self.id_tuple_ptrs).zip(&self.flags) {
            let (pv, pc) = if block.written {
                (block.p_values, block.p_ctx_indices)
            } else {
                (end, end)
            };
            table.u64(block.n_values);
            table.u64(pv);
            table.u32(block.n_ctxs);
            table.u32(0);
            table.u64(pc);
            table.u64(*ptr);
            table.u32(*flags);
            table.u32(0);
        }
        self.out
            .write_at(HEADER_SIZE + SECTION_HEADER_SIZE, &table.bytes)?;
        self.out.seek_to(end + FOOTER.len() as u64)?;
        Ok(self.out.inner)
    }
}
