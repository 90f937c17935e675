//! cct.db writer (FORMATS.md, `cct.db` version 4.0; hpctoolkit-db-v4.md).
//!
//! Layout, as hpcprof writes it: a 0x30-byte header (not 0x20: bytes 0x20..0x2F are what hpcprof
//! leaves there, `00 x8, 01, 00 x7`), the Context Info section at 0x30 (a 0x10-byte header, then
//! `nCtxs` entries of `szCtx` = 0x20 bytes), the value blocks in the order written (values, then
//! metric indices, each block at a 4-byte-aligned offset; empty blocks point at the current end),
//! then the footer `__ctx.db`.

use std::io::{self, Seek, Write};

use super::bytes::{Buf, Out, check_block, file_header, put_metric_starts, put_profile_values};
use super::invalid;
use crate::model::{MetricStart, ProfileValue};

/// The footer of cct.db.
const FOOTER: &[u8; 8] = b"__ctx.db";
/// Size of the file header (hpctoolkit-db-v4.md: 0x30, not 0x20).
const HEADER_SIZE: u64 = 0x30;
/// The bytes hpcprof leaves at 0x20..0x2F of the header.
const HEADER_TAIL: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
/// Size of the Context Info section header.
const SECTION_HEADER_SIZE: u64 = 0x10;
/// `szCtx`.
const CONTEXT_INFO_SIZE: u64 = 0x20;

/// Streams cct.db: the number of contexts up front, then each context's block as it is
/// produced (any order, each at most once), then [`CctDbWriter::finish`]. Only the 32-byte
/// block headers stay in memory.
#[derive(Debug)]
pub struct CctDbWriter<W> {
    out: Out<W>,
    blocks: Vec<[u64; 4]>,
    written: Vec<bool>,
    scratch: Vec<u8>,
}

impl<W: Write + Seek> CctDbWriter<W> {
    /// Writes the header and a provisional Context Info table for `ctxId`s `0..n_ctxs`.
    pub fn new(out: W, n_ctxs: u32) -> io::Result<Self> {
        let table = CONTEXT_INFO_SIZE * u64::from(n_ctxs);
        let mut head = Buf::default();
        file_header(
            &mut head,
            b"ctxt",
            &[(SECTION_HEADER_SIZE + table, HEADER_SIZE)],
        );
        head.bytes.extend_from_slice(&HEADER_TAIL);
        head.u64(HEADER_SIZE + SECTION_HEADER_SIZE);
        head.u32(n_ctxs);
        head.u8(CONTEXT_INFO_SIZE as u8);
        head.align(8);
        let mut out = Out::new(out)?;
        out.write_at(0, &head.bytes)?;
        // The table itself is written by finish(); reserve it with zeros.
        let zeros = vec![0u8; 1 << 16];
        let mut left = table;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            let at = out.pos();
            out.write_at(at, &zeros[..n])?;
            left -= n as u64;
        }
        Ok(CctDbWriter {
            out,
            blocks: vec![[0; 4]; n_ctxs as usize],
            written: vec![false; n_ctxs as usize],
            scratch: Vec::new(),
        })
    }

    /// Writes the block of `ctx_id`: `metrics` sorted by `metricId`, each with at least one
    /// value, starting at 0; each metric's values sorted by `profIndex`.
    pub fn write_context(
        &mut self,
        ctx_id: u32,
        metrics: &[MetricStart],
        values: &[ProfileValue],
    ) -> io::Result<()> {
        let i = ctx_id as usize;
        match self.written.get(i) {
            None => return Err(invalid("ctxId out of range of cct.db")),
            Some(true) => return Err(invalid("a context's block was written twice")),
            Some(false) => {}
        }
        check_block(
            "cct.db value block",
            metrics.iter().map(|m| (m.metric_id, m.start)),
            values,
            |v| v.prof_index,
        )?;
        if metrics.len() > usize::from(u16::MAX) {
            return Err(invalid("more than u16::MAX metrics in one context"));
        }
        let p_values = self.out.pos();
        put_profile_values(&mut self.out, values, &mut self.scratch)?;
        let p_metrics = self.out.pos();
        put_metric_starts(&mut self.out, metrics, &mut self.scratch)?;
        // Metric indices are 10 bytes each; the next block starts at a 4-byte boundary.
        self.out.pad_to(4)?;
        self.blocks[i] = [
            values.len() as u64,
            p_values,
            metrics.len() as u64,
            p_metrics,
        ];
        self.written[i] = true;
        Ok(())
    }

    /// Writes the footer and the Context Info table (contexts never written are empty).
    pub fn finish(mut self) -> io::Result<W> {
        let end = self.out.pos();
        self.out.write_at(end, FOOTER)?;
        // Written in slices, so that the table never needs a second copy in memory.
        let mut at = HEADER_SIZE + SECTION_HEADER_SIZE;
        for (blocks, written) in self.blocks.chunks(4096).zip(self.written.chunks(4096)) {
            let mut table = Buf::default();
            for (block, written) in blocks.iter().zip(written) {
                let [n_values, p_values, n_metrics, p_metrics] =
                    if *written { *block } else { [0, end, 0, end] };
                table.u64(n_values);
                table.u64(p_values);
                table.u16(n_metrics as u16);
                table.zeros(6);
                table.u64(p_metrics);
            }
            self.out.write_at(at, &table.bytes)?;
            at += table.pos();
        }
        self.out.seek_to(end + FOOTER.len() as u64)?;
        Ok(self.out.inner)
    }
}
