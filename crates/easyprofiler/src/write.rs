//! The writer: a model to the bytes of its version's layout (the crate docs, "The format"; PM:1051-1141 for
//! the runtime writer, W:425-560 for the GUI's save).
//!
//! The header counters are written as the model holds them, so that a file read and written
//! again is byte-identical; [`Capture::update_counters`] makes them match the content.

use std::io::Write;

use binrw::BinWrite;

use crate::error::WriteError;
use crate::model::{Capture, Layout, Record, RecordBody, Version};
use crate::raw::{
    self, HeaderV1Body, HeaderV100, HeaderV120, HeaderV130, HeaderV200, HeaderV210, Prelude,
};

fn u16_size(what: &'static str, size: usize) -> Result<u16, WriteError> {
    u16::try_from(size).map_err(|_| WriteError::TooLarge { what, size })
}

fn binrw_bytes<T>(value: &T) -> Vec<u8>
where
    T: BinWrite + binrw::meta::WriteEndian,
    for<'x> T::Args<'x>: Default,
{
    let mut c = std::io::Cursor::new(Vec::new());
    // Writing plain integers into a Vec cannot fail.
    let _ = value.write(&mut c);
    c.into_inner()
}

impl Capture {
    /// Writes the capture in the layout of its version.
    ///
    /// Fails when the version cannot carry the content: values before 2.0, bookmarks or a tail
    /// before 2.1, ids wider than 32 bits before 1.3, a pid before 1.0.1, an item larger than its
    /// u16 size prefix.
    pub fn write(&self, mut out: impl Write) -> Result<(), WriteError> {
        let mut buf = Vec::with_capacity(1 << 16);
        self.encode(&mut buf)?;
        out.write_all(&buf)?;
        Ok(())
    }

    /// The encoded bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, WriteError> {
        let mut buf = Vec::new();
        self.encode(&mut buf)?;
        Ok(buf)
    }

    fn unrepresentable(&self, what: &'static str) -> WriteError {
        WriteError::Unrepresentable {
            version: self.version,
            what,
        }
    }

    fn header_bytes(&self) -> Result<Vec<u8>, WriteError> {
        let layout = self.version.layout();
        let c = &self.counters;
        let descriptors_count = u32::try_from(self.descriptors.len())
            .map_err(|_| self.unrepresentable("more than u32::MAX descriptors"))?;
        let mut out = binrw_bytes(&Prelude {
            signature: raw::SIGNATURE,
            version: self.version.0,
        });
        let v1 = HeaderV1Body {
            cpu_frequency: self.cpu_frequency,
            begin_time: self.begin_time,
            end_time: self.end_time,
            blocks_count: c.blocks_count,
            memory_size: c.memory_size,
            descriptors_count,
            descriptors_memory_size: c.descriptors_memory_size,
        };
        let v2 = HeaderV200 {
            pid: self.pid,
            cpu_frequency: self.cpu_frequency,
            begin_time: self.begin_time,
            end_time: self.end_time,
            memory_size: c.memory_size,
            descriptors_memory_size: c.descriptors_memory_size,
            blocks_count: c.blocks_count,
            descriptors_count,
        };
        out.extend(match layout {
            Layout::V1NoPid => {
                if self.pid != 0 {
                    return Err(self.unrepresentable("a pid (none up to 1.0.0)"));
                }
                binrw_bytes(&HeaderV100 { body: v1 })
            }
            Layout::V1Pid32 => binrw_bytes(&HeaderV120 {
                pid: u32::try_from(self.pid)
                    .map_err(|_| self.unrepresentable("a pid wider than 32 bits"))?,
                body: v1,
            }),
            Layout::V1Pid64 => binrw_bytes(&HeaderV130 {
                pid: self.pid,
                body: v1,
            }),
            Layout::V2_0 => binrw_bytes(&v2),
            Layout::V2_1 => binrw_bytes(&HeaderV210 {
                v200: v2,
                threads_count: c.threads_count,
                bookmarks_count: c.bookmarks_count,
                padding: c.padding,
            }),
        });
        Ok(out)
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<(), WriteError> {
        let layout = self.version.layout();
        out.extend(self.header_bytes()?);
        for d in &self.descriptors {
            let Some(d) = d else {
                out.extend(0u16.to_le_bytes());
                continue;
            };
            let size = u16_size("descriptor", d.encoded_size())?;
            let name_len = u16_size("descriptor name", d.name.len() + 1)?;
            out.extend(size.to_le_bytes());
            out.extend(d.id.to_le_bytes());
            out.extend(d.line.to_le_bytes());
            out.extend(d.color.to_le_bytes());
            out.push(d.block_type);
            out.push(d.status);
            out.extend(name_len.to_le_bytes());
            out.extend(&d.name);
            out.push(0);
            out.extend(&d.file);
            out.push(0);
        }
        let wide = layout.wide_ids();
        for t in &self.threads {
            if wide {
                out.extend(t.id.to_le_bytes());
            } else {
                let id = u32::try_from(t.id)
                    .map_err(|_| self.unrepresentable("a thread id wider than 32 bits"))?;
                out.extend(id.to_le_bytes());
            }
            match &t.name {
                None => out.extend(0u16.to_le_bytes()),
                Some(name) => {
                    out.extend(u16_size("thread name", name.len() + 1)?.to_le_bytes());
                    out.extend(name);
                    out.push(0);
                }
            }
            let cs_count = u32::try_from(t.context_switches.len())
                .map_err(|_| self.unrepresentable("more than u32::MAX context switches"))?;
            out.extend(cs_count.to_le_bytes());
            for cs in &t.context_switches {
                out.extend(u16_size("context switch", cs.encoded_size(layout))?.to_le_bytes());
                out.extend(cs.begin.to_le_bytes());
                out.extend(cs.end.to_le_bytes());
                if wide {
                    out.extend(cs.target_tid.to_le_bytes());
                } else {
                    let tid = u32::try_from(cs.target_tid).map_err(|_| {
                        self.unrepresentable("a context-switch target wider than 32 bits")
                    })?;
                    out.extend(tid.to_le_bytes());
                }
                out.extend(&cs.name);
                out.push(0);
            }
            let count = u32::try_from(t.records.len())
                .map_err(|_| self.unrepresentable("more than u32::MAX records"))?;
            out.extend(count.to_le_bytes());
            for r in &t.records {
                self.encode_record(r, layout, out)?;
            }
        }
        if layout == Layout::V2_1 {
            // What the reader reads back is decided by the counters: keep them consistent.
            let threads = self.threads.len() as u64;
            let wanted = u64::from(self.counters.threads_count);
            if threads > wanted || (threads < wanted && !self.tail.missing_threads_end_mark) {
                return Err(self.unrepresentable("threads_count disagrees with the threads"));
            }
            let marks = self.bookmarks.len() as u64;
            let wanted = u64::from(self.counters.bookmarks_count);
            let cut_short =
                self.tail.missing_threads_end_mark || self.tail.missing_bookmarks_end_mark;
            if marks > wanted || (marks < wanted && !cut_short) {
                return Err(self.unrepresentable("bookmarks_count disagrees with the bookmarks"));
            }
            if !self.tail.missing_threads_end_mark {
                out.extend(raw::SIGNATURE.to_le_bytes());
            } else if !self.bookmarks.is_empty() {
                return Err(self.unrepresentable("bookmarks without the threads end signature"));
            }
            for b in &self.bookmarks {
                out.extend(
                    u16_size("bookmark", raw::BOOKMARK_BASE + b.text.len() + 1)?.to_le_bytes(),
                );
                out.extend(b.position.to_le_bytes());
                out.extend(b.color.to_le_bytes());
                out.extend(&b.text);
                out.push(0);
            }
            if self.counters.bookmarks_count != 0
                && !self.tail.missing_threads_end_mark
                && !self.tail.missing_bookmarks_end_mark
            {
                out.extend(raw::SIGNATURE.to_le_bytes());
            }
        } else if !self.bookmarks.is_empty() {
            return Err(self.unrepresentable("bookmarks (from 2.1.0)"));
        }
        out.extend(&self.tail.trailing);
        Ok(())
    }

    #[inline]
    fn encode_record(
        &self,
        r: &Record,
        layout: Layout,
        out: &mut Vec<u8>,
    ) -> Result<(), WriteError> {
        out.extend(u16_size("record", r.encoded_size())?.to_le_bytes());
        out.extend(r.begin.to_le_bytes());
        out.extend(r.end.to_le_bytes());
        out.extend(r.descriptor.to_le_bytes());
        match &r.body {
            RecordBody::Named(name) => {
                out.extend(name);
                out.push(0);
            }
            RecordBody::Value(v) => {
                if !layout.has_values() {
                    return Err(self.unrepresentable("value records (from 2.0.0)"));
                }
                out.extend(v.stub);
                out.extend(u16_size("value data", v.data.len())?.to_le_bytes());
                out.push(v.data_type);
                out.push(v.is_array);
                out.extend(v.value_id.to_le_bytes());
                out.extend(&v.data);
            }
        }
        Ok(())
    }

    /// The capture as the GUI saves it (W:425-560): version 2.1.0, cpu_frequency 0 and every
    /// time in ns, records ending before the capture's begin dropped and the others clamped, the
    /// runtime writer's counters replaced by the GUI's (descriptor sizes with their prefixes).
    pub fn to_gui_convention(&self) -> Capture {
        let conv = crate::read::TickConverter::new(self.cpu_frequency);
        let begin = conv.ns(self.begin_time);
        let mut c = self.clone();
        c.version = Version::V2_1_0;
        c.cpu_frequency = 0;
        c.begin_time = begin;
        c.end_time = conv.ns(self.end_time);
        for t in &mut c.threads {
            t.context_switches.retain_mut(|cs| {
                cs.begin = conv.ns(cs.begin).max(begin);
                cs.end = conv.ns(cs.end);
                cs.end > begin
            });
            t.records.retain_mut(|r| {
                r.begin = conv.ns(r.begin).max(begin);
                r.end = conv.ns(r.end);
                r.end >= begin
            });
            if t.name.is_none() {
                t.name = Some(Vec::new());
            }
        }
        c.tail = Default::default();
        c.update_counters(crate::model::Convention::Gui);
        c
    }
}
