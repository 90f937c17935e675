//! Views borrowing the input (the crate docs, "The format"): the header and descriptors, parsed by [`parse`];
//! thread sections and their records, walked lazily by zero-copy iterators.

mod model;
pub(crate) mod scan;
mod tail;
pub(crate) mod tree;
pub(crate) mod walk;

use std::sync::Arc;

use profcodec_common::{Cursor, Truncated, checked_capacity};
use zerocopy::FromBytes;

use crate::error::{Error, Oddity};
use crate::model::{Counters, Layout, Version};
use crate::name::Name;
use crate::raw::{
    self, BlockBase, CSwitchBase, CSwitchBaseV1, DescriptorBase, HeaderV100, HeaderV120,
    HeaderV130, HeaderV200, HeaderV210, Prelude, ValueBase,
};

pub use scan::{Block, ContextSwitchNode, TickConverter, TreeDescriptor};
pub use tail::{BookmarkRef, TailRef};
pub use tree::{
    BlockTotals, BlockTree, ChildrenRev, FlatNode, FlatNodes, Node, NodeRecords, ThreadTree,
    TreeBuffers,
};
pub use walk::{Flat, FlatBlock, PreOrder, Step, ThreadWalk, Walk};

/// How strictly to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Read what real writers produce (for example a 2.1 file with zero blocks) and report the
    /// oddities.
    #[default]
    Tolerant,
    /// Refuse what the C++ reader refuses, with the reason ([`Error::Refused`]).
    Strict,
}

/// The parsed header (crate docs, "The format": Header), every version in one shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Version.
    pub version: Version,
    /// Process id (0 up to 1.0.0).
    pub pid: u64,
    /// Ticks per second; 0 and 1e9 mean ns.
    pub cpu_frequency: i64,
    /// Capture begin (ticks).
    pub begin_time: u64,
    /// Capture end (ticks).
    pub end_time: u64,
    /// Descriptor slots.
    pub descriptors_count: u32,
    /// The other counters (threads, bookmarks and padding are 0 before 2.1).
    pub counters: Counters,
}

/// Offsets of the header counters, for oddity reports.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CounterOffsets {
    pub(crate) blocks_count: u64,
    pub(crate) memory_size: u64,
    pub(crate) descriptors_count: u64,
    pub(crate) descriptors_memory_size: u64,
    pub(crate) threads_count: u64,
    pub(crate) padding: u64,
}

/// A descriptor borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptorRef<'a> {
    /// Offset of the size prefix.
    pub offset: u64,
    /// Stored id.
    pub id: u32,
    /// Source line.
    pub line: i32,
    /// ARGB colour.
    pub color: u32,
    /// 0 Event, 1 Block, 2 Value.
    pub block_type: u8,
    /// Status flags.
    pub status: u8,
    /// Name field without its final NUL.
    pub name: Name<'a>,
    /// File field without its final NUL.
    pub file: Name<'a>,
}

/// The descriptor slots of a capture, by id.
///
/// Present descriptors are stored one after the other; an empty slot (a size of 0, two bytes in
/// the file) costs four bytes of index, and none while no slot is empty. So the table holds at most
/// 2 bytes per byte of the descriptor section plus 56 per present descriptor (at least 20 bytes
/// in the file), whatever the slot count says.
#[derive(Debug, Clone, Default)]
pub struct DescriptorTable<'a> {
    /// Per slot, the index into `present` (`EMPTY` for an empty slot); left empty while every
    /// slot so far is present, so that the common file needs no index.
    slots: Vec<u32>,
    present: Vec<DescriptorRef<'a>>,
}

impl<'a> DescriptorTable<'a> {
    const EMPTY: u32 = u32::MAX;

    fn push(&mut self, d: DescriptorRef<'a>) {
        if !self.slots.is_empty() {
            self.slots.push(self.present.len() as u32);
        }
        self.present.push(d);
    }

    /// Records the empty slot `slot` of `count` (the checked slot count).
    fn push_empty(&mut self, slot: usize, count: usize) {
        if self.slots.is_empty() {
            self.slots.reserve_exact(count);
            self.slots.extend(0..slot as u32);
        }
        self.slots.push(Self::EMPTY);
    }

    /// The number of slots (present or empty).
    pub fn len(&self) -> usize {
        if self.slots.is_empty() {
            self.present.len()
        } else {
            self.slots.len()
        }
    }

    /// True when there is no slot.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The descriptor with id `id`, unless its slot is empty or out of range.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&DescriptorRef<'a>> {
        if self.slots.is_empty() {
            self.present.get(id as usize)
        } else {
            // `EMPTY` is never an index into `present`.
            self.present.get(*self.slots.get(id as usize)? as usize)
        }
    }

    /// Every slot in id order (`None`: an empty slot).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&DescriptorRef<'a>>> + '_ {
        (0..self.len() as u32).map(|id| self.get(id))
    }

    /// The present descriptors in id order, without the empty slots.
    pub fn present(&self) -> &[DescriptorRef<'a>] {
        &self.present
    }
}

/// A capture borrowed from the input: header and descriptors parsed, threads walked on demand.
#[derive(Debug, Clone)]
pub struct CaptureView<'a> {
    data: &'a [u8],
    header: Header,
    offsets: CounterOffsets,
    mode: Mode,
    descriptors: Arc<DescriptorTable<'a>>,
    threads_offset: usize,
    oddities: Vec<Oddity>,
}

/// Parses the header and descriptors in tolerant mode.
///
/// ```
/// # let bytes = {
/// #     let mut c = profcodec_easyprofiler::Capture::default();
/// #     c.version = profcodec_easyprofiler::Version::V2_1_0;
/// #     let mut out = Vec::new(); c.write(&mut out).unwrap(); out };
/// let view = profcodec_easyprofiler::parse(&bytes).unwrap();
/// assert_eq!(view.header().version.to_string(), "2.1.0");
/// ```
pub fn parse(data: &[u8]) -> Result<CaptureView<'_>, Error> {
    CaptureView::new(data, Mode::Tolerant)
}

/// Parses the header and descriptors in the given mode.
pub fn parse_with(data: &[u8], mode: Mode) -> Result<CaptureView<'_>, Error> {
    CaptureView::new(data, mode)
}

/// Reads a binrw header struct from `bytes` after checking that enough bytes are there, so the
/// read itself cannot fail.
fn read_struct<T>(bytes: &[u8], offset: u64, size: usize, what: &'static str) -> Result<T, Error>
where
    T: binrw::BinRead + binrw::meta::ReadEndian,
    for<'x> T::Args<'x>: Default,
{
    let truncated = || Truncated {
        offset,
        what,
        needed: size as u64,
        available: bytes.len() as u64,
    };
    if bytes.len() < size {
        return Err(truncated().into());
    }
    T::read(&mut std::io::Cursor::new(bytes)).map_err(|_| truncated().into())
}

fn read_header(data: &[u8]) -> Result<(Header, CounterOffsets, usize), Error> {
    let prelude: Prelude = read_struct(data, 0, 8, "header signature and version")?;
    if prelude.signature != raw::SIGNATURE {
        return Err(Error::BadSignature {
            offset: 0,
            what: "header signature",
            found: prelude.signature,
        });
    }
    if prelude.version < raw::V_MIN {
        return Err(Error::UnsupportedVersion {
            offset: 4,
            found: prelude.version,
        });
    }
    let version = Version(prelude.version);
    let layout = version.layout();
    let body = &data[8..];
    let size = layout.header_size() - 8;
    let what = "header";
    let mut h = Header {
        version,
        pid: 0,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: 0,
        descriptors_count: 0,
        counters: Counters::default(),
    };
    // Both header families carry the same fields in another order: fill them once.
    let fill = |h: &mut Header, b: raw::HeaderV1Body| {
        h.cpu_frequency = b.cpu_frequency;
        h.begin_time = b.begin_time;
        h.end_time = b.end_time;
        h.descriptors_count = b.descriptors_count;
        h.counters.blocks_count = b.blocks_count;
        h.counters.memory_size = b.memory_size;
        h.counters.descriptors_memory_size = b.descriptors_memory_size;
    };
    let v1 = |h: &mut Header, b: raw::HeaderV1Body, base: u64| {
        fill(h, b);
        CounterOffsets {
            blocks_count: base + 24,
            memory_size: base + 28,
            descriptors_count: base + 36,
            descriptors_memory_size: base + 40,
            ..CounterOffsets::default()
        }
    };
    let v2 = |h: &mut Header, b: HeaderV200| {
        h.pid = b.pid;
        let body = raw::HeaderV1Body {
            cpu_frequency: b.cpu_frequency,
            begin_time: b.begin_time,
            end_time: b.end_time,
            blocks_count: b.blocks_count,
            memory_size: b.memory_size,
            descriptors_count: b.descriptors_count,
            descriptors_memory_size: b.descriptors_memory_size,
        };
        fill(h, body);
        CounterOffsets {
            memory_size: 40,
            descriptors_memory_size: 48,
            blocks_count: 56,
            descriptors_count: 60,
            threads_count: 64,
            padding: 70,
        }
    };
    let offsets = match layout {
        Layout::V1NoPid => {
            let r: HeaderV100 = read_struct(body, 8, size, what)?;
            v1(&mut h, r.body, 8)
        }
        Layout::V1Pid32 => {
            let r: HeaderV120 = read_struct(body, 8, size, what)?;
            h.pid = u64::from(r.pid);
            v1(&mut h, r.body, 12)
        }
        Layout::V1Pid64 => {
            let r: HeaderV130 = read_struct(body, 8, size, what)?;
            h.pid = r.pid;
            v1(&mut h, r.body, 16)
        }
        Layout::V2_0 => {
            let r: HeaderV200 = read_struct(body, 8, size, what)?;
            v2(&mut h, r)
        }
        Layout::V2_1 => {
            let r: HeaderV210 = read_struct(body, 8, size, what)?;
            h.counters.threads_count = r.threads_count;
            h.counters.bookmarks_count = r.bookmarks_count;
            h.counters.padding = r.padding;
            v2(&mut h, r.v200)
        }
    };
    Ok((h, offsets, layout.header_size()))
}

impl<'a> CaptureView<'a> {
    fn new(data: &'a [u8], mode: Mode) -> Result<Self, Error> {
        let (header, offsets, header_size) = read_header(data)?;
        let mut oddities = Vec::new();
        // The C++ reader refuses every zero counter (R:720-812).
        let mut zero = |value: u64, offset: u64, what: &'static str| {
            if value == 0 {
                oddities.push(Oddity::ZeroCounter { offset, what });
            }
        };
        let c = header.counters;
        zero(
            c.blocks_count.into(),
            offsets.blocks_count,
            "header blocks_count",
        );
        zero(c.memory_size, offsets.memory_size, "header memory_size");
        zero(
            header.descriptors_count.into(),
            offsets.descriptors_count,
            "header descriptors_count",
        );
        zero(
            c.descriptors_memory_size,
            offsets.descriptors_memory_size,
            "header descriptors_memory_size",
        );
        if header.version.layout() == Layout::V2_1 {
            zero(
                c.threads_count.into(),
                offsets.threads_count,
                "header threads_count",
            );
            if c.padding != 0 {
                oddities.push(Oddity::NonZeroPadding {
                    offset: offsets.padding,
                    found: c.padding,
                });
            }
        }

        let mut cur = Cursor::new(&data[header_size..], header_size as u64);
        // Checked against the input (every slot takes at least its 2-byte size), so a hostile
        // count cannot reserve more than the bytes that hold it.
        let count = checked_capacity(
            header.descriptors_count.into(),
            2,
            cur.remaining(),
            offsets.descriptors_count,
            "header descriptors_count",
        )?;
        let mut descriptors = DescriptorTable::default();
        let mut desc_bytes = 0u64;
        for slot in 0..count {
            let offset = cur.offset();
            let size = cur.u16_le("descriptor size")?;
            if size == 0 {
                descriptors.push_empty(slot, count);
                continue;
            }
            let payload = cur.bytes(size.into(), "descriptor")?;
            desc_bytes += u64::from(size);
            descriptors.push(descriptor(payload, offset)?);
        }
        if desc_bytes > c.descriptors_memory_size {
            oddities.push(Oddity::DescriptorMemoryExceeded {
                offset: offsets.descriptors_memory_size,
                header: c.descriptors_memory_size,
                found: desc_bytes,
            });
        }
        let view = CaptureView {
            data,
            header,
            offsets,
            mode,
            descriptors: Arc::new(descriptors),
            threads_offset: cur.offset() as usize,
            oddities,
        };
        view.refuse(&view.oddities)?;
        Ok(view)
    }

    /// In strict mode, the first oddity the C++ reader refuses, as an error.
    pub(crate) fn refuse(&self, oddities: &[Oddity]) -> Result<(), Error> {
        if self.mode == Mode::Strict
            && let Some(o) = oddities.iter().find(|o| o.cpp_refuses())
        {
            return Err(Error::Refused(*o));
        }
        Ok(())
    }

    /// The input.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }
    /// The reading mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub(crate) fn offsets(&self) -> &CounterOffsets {
        &self.offsets
    }
    /// Oddities of the header and descriptors (the tree builder reports the rest).
    pub fn header_oddities(&self) -> &[Oddity] {
        &self.oddities
    }
    /// The descriptor slots.
    pub fn descriptors(&self) -> &DescriptorTable<'a> {
        &self.descriptors
    }
    /// The descriptor slots, shared (the block tree keeps them without a copy).
    pub(crate) fn descriptors_shared(&self) -> Arc<DescriptorTable<'a>> {
        Arc::clone(&self.descriptors)
    }
    /// Offset of the first thread section.
    pub fn threads_offset(&self) -> usize {
        self.threads_offset
    }

    /// The thread sections, in file order.
    pub fn threads(&self) -> ThreadIter<'a> {
        ThreadIter {
            data: self.data,
            pos: self.threads_offset,
            layout: self.header.version.layout(),
            limit: match self.header.version.layout() {
                Layout::V2_1 => Some(self.header.counters.threads_count),
                _ => None,
            },
            read: 0,
            pending: None,
            end: None,
            failed: false,
        }
    }

    /// The record whose size prefix is at `offset` (for example [`RawRecord::offset`]), decoded.
    pub fn record_at(&self, offset: u64) -> Result<RecordRef<'a>, Error> {
        let mut it = RecordIter {
            data: self.data,
            pos: usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(self.data.len()),
            left: 1,
            failed: false,
        };
        match it.next() {
            Some(r) => self.decode_record(&r?),
            None => Err(truncated_at(offset, "record", 0)),
        }
    }

    /// Decodes a record by its descriptor: block/event or (from 2.0, descriptor type 2) value.
    #[inline]
    pub fn decode_record(&self, r: &RawRecord<'a>) -> Result<RecordRef<'a>, Error> {
        let id = r.descriptor();
        let Some(desc) = self.descriptors.get(id) else {
            return Err(Error::BadDescriptorId {
                offset: r.offset,
                id,
                count: self.descriptors.len() as u32,
            });
        };
        if desc.block_type == 2 && self.header.version.layout().has_values() {
            let Ok((head, data)) = ValueBase::ref_from_prefix(r.payload) else {
                return Err(Error::TooSmall {
                    offset: r.offset,
                    what: "value record",
                    min: raw::VALUE_BASE as u64,
                    found: r.payload.len() as u64,
                });
            };
            if usize::from(head.data_size.get()) != data.len() {
                return Err(Error::ValueSize {
                    offset: r.offset + 2 + 22,
                    expected: data.len() as u64,
                    found: head.data_size.get().into(),
                });
            }
            return Ok(RecordRef::Value { head, data });
        }
        let last = r.payload.len() - 1;
        if r.payload[last] != 0 {
            return Err(Error::MissingNul {
                offset: r.offset + 2 + last as u64,
                what: "block runtime name",
                found: r.payload[last],
            });
        }
        Ok(RecordRef::Named {
            base: r.base,
            name: Name(&r.payload[raw::BLOCK_BASE..last]),
        })
    }
}

fn descriptor(payload: &[u8], offset: u64) -> Result<DescriptorRef<'_>, Error> {
    let too_small = |min: usize| Error::TooSmall {
        offset,
        what: "descriptor",
        min: min as u64,
        found: payload.len() as u64,
    };
    let Ok((base, rest)) = DescriptorBase::ref_from_prefix(payload) else {
        return Err(too_small(raw::DESCRIPTOR_BASE + 2));
    };
    let name_len = usize::from(base.name_len.get());
    if name_len == 0 {
        // The length counts the name's NUL, so it is at least 1.
        return Err(Error::TooSmall {
            offset: offset + 2 + 14,
            what: "descriptor name length",
            min: 1,
            found: 0,
        });
    }
    if rest.len() < name_len + 1 {
        return Err(too_small(raw::DESCRIPTOR_BASE + name_len + 1));
    }
    let (name, file) = rest.split_at(name_len);
    let name_at = offset + 2 + raw::DESCRIPTOR_BASE as u64;
    let name = strip_nul(name, name_at, "descriptor name")?;
    let file = strip_nul(file, name_at + name_len as u64, "descriptor file")?;
    Ok(DescriptorRef {
        offset,
        id: base.id.get(),
        line: base.line.get(),
        color: base.color.get(),
        block_type: base.block_type,
        status: base.status,
        name: Name(name),
        file: Name(file),
    })
}

/// `field` without its final NUL, which must be there (the library always writes it).
pub(crate) fn strip_nul<'a>(
    field: &'a [u8],
    offset: u64,
    what: &'static str,
) -> Result<&'a [u8], Error> {
    match field.split_last() {
        Some((0, rest)) => Ok(rest),
        Some((&b, rest)) => Err(Error::MissingNul {
            offset: offset + rest.len() as u64,
            what,
            found: b,
        }),
        None => Err(Error::TooSmall {
            offset,
            what,
            min: 1,
            found: 0,
        }),
    }
}

/// The C string at the start of `bytes` (up to the first NUL), as the C++ reader sees it.
#[inline]
pub fn c_str(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&b| b == 0) {
        Some(n) => &bytes[..n],
        None => bytes,
    }
}

/// Where the thread sections ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadsEnd {
    /// Offset just after the last complete thread.
    pub offset: usize,
    /// Threads read.
    pub threads: u32,
    /// True when a 2.1 file's `threads_count` was reached; false when the input ended first
    /// (then the bytes from `offset`, fewer than a thread id, are trailing).
    pub by_count: bool,
}

/// Iterator over thread sections. After an error it yields nothing more.
#[derive(Debug, Clone)]
pub struct ThreadIter<'a> {
    data: &'a [u8],
    pos: usize,
    layout: Layout,
    limit: Option<u32>,
    read: u32,
    /// The previous thread's records, not yet skipped: (offset of the first, count).
    pending: Option<(usize, u32)>,
    end: Option<ThreadsEnd>,
    failed: bool,
}

impl<'a> ThreadIter<'a> {
    /// Where the threads ended, once the iterator has returned `None` (not after an error).
    pub fn end(&self) -> Option<ThreadsEnd> {
        self.end
    }

    /// Tells the iterator that the last thread's records were all walked by `records`, so that
    /// the next thread starts where it stopped instead of skipping them again.
    pub fn records_walked(&mut self, records: &RecordIter<'a>) {
        if records.left == 0
            && !records.failed
            && self.pending.is_some_and(|(pos, _)| pos <= records.pos)
        {
            self.pending = None;
            self.pos = records.pos;
        }
    }

    fn finish(&mut self, by_count: bool) {
        self.end = Some(ThreadsEnd {
            offset: self.pos,
            threads: self.read,
            by_count,
        });
    }

    fn next_thread(&mut self) -> Result<Option<ThreadView<'a>>, Error> {
        if let Some((pos, count)) = self.pending.take() {
            self.pos = skip_items(self.data, pos, count, "record", raw::BLOCK_BASE + 1)?;
        }
        if self.limit.is_some_and(|l| self.read >= l) {
            self.finish(true);
            return Ok(None);
        }
        let wide = self.layout.wide_ids();
        let id_size = if wide { 8 } else { 4 };
        // The C++ reader stops at the end of the input, even inside a thread id (R:988-1000).
        if self.data.len() - self.pos < id_size {
            self.finish(false);
            return Ok(None);
        }
        let offset = self.pos as u64;
        let mut cur = Cursor::new(&self.data[self.pos..], offset);
        let id = if wide {
            cur.u64_le("thread id")?
        } else {
            u64::from(cur.u32_le("thread id")?)
        };
        let name_size = cur.u16_le("thread name size")?;
        let name = if name_size == 0 {
            None
        } else {
            let at = cur.offset();
            Some(Name(strip_nul(
                cur.bytes(name_size.into(), "thread name")?,
                at,
                "thread name",
            )?))
        };
        let cs_count = cur.u32_le("context switch count")?;
        let cs_start = self.pos + cur.position();
        let cs_min = if wide { 25 } else { 21 };
        let cs_end = skip_items(self.data, cs_start, cs_count, "context switch", cs_min)?;
        let mut cur = Cursor::new(&self.data[cs_end..], cs_end as u64);
        let records_count = cur.u32_le("record count")?;
        let records_start = cs_end + 4;
        self.pending = Some((records_start, records_count));
        self.read += 1;
        Ok(Some(ThreadView {
            offset,
            id,
            name,
            data: self.data,
            wide,
            cs_start,
            cs_count,
            records_start,
            records_count,
        }))
    }
}

impl<'a> Iterator for ThreadIter<'a> {
    type Item = Result<ThreadView<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.end.is_some() || self.failed {
            return None;
        }
        match self.next_thread() {
            Ok(t) => t.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Skips `count` size-prefixed items of at least `min` bytes from `pos`; returns the end.
fn skip_items(
    data: &[u8],
    mut pos: usize,
    count: u32,
    what: &'static str,
    min: usize,
) -> Result<usize, Error> {
    for _ in 0..count {
        let size = item_size(data, pos, what, min)?;
        pos += 2 + size;
    }
    Ok(pos)
}

/// The size of the item at `pos`, checked against `min` and the input.
#[inline]
fn item_size(data: &[u8], pos: usize, what: &'static str, min: usize) -> Result<usize, Error> {
    let Some(prefix) = data.get(pos..pos + 2) else {
        return Err(Truncated {
            offset: pos as u64,
            what,
            needed: 2,
            available: (data.len() - pos.min(data.len())) as u64,
        }
        .into());
    };
    let size = usize::from(u16::from_le_bytes([prefix[0], prefix[1]]));
    if size < min {
        return Err(Error::TooSmall {
            offset: pos as u64,
            what,
            min: min as u64,
            found: size as u64,
        });
    }
    let available = data.len() - pos - 2;
    if size > available {
        return Err(Truncated {
            offset: pos as u64 + 2,
            what,
            needed: size as u64,
            available: available as u64,
        }
        .into());
    }
    Ok(size)
}

/// One thread section.
#[derive(Debug, Clone, Copy)]
pub struct ThreadView<'a> {
    /// Offset of the thread id.
    pub offset: u64,
    /// Thread id.
    pub id: u64,
    /// Name without its NUL (`None` when the name size is 0).
    pub name: Option<Name<'a>>,
    data: &'a [u8],
    wide: bool,
    cs_start: usize,
    /// Context switches.
    pub cs_count: u32,
    records_start: usize,
    /// Records.
    pub records_count: u32,
}

impl<'a> ThreadView<'a> {
    /// The context switches.
    pub fn context_switches(&self) -> CSwitchIter<'a> {
        CSwitchIter {
            data: self.data,
            pos: self.cs_start,
            left: self.cs_count,
            wide: self.wide,
        }
    }
    /// The records: every complete record before any damage, then the error.
    pub fn records(&self) -> RecordIter<'a> {
        RecordIter {
            data: self.data,
            pos: self.records_start,
            left: self.records_count,
            failed: false,
        }
    }
    /// The record count as a safe capacity (checked against the bytes that remain).
    pub(crate) fn records_capacity(&self) -> Result<usize, Error> {
        Ok(checked_capacity(
            self.records_count.into(),
            2 + raw::BLOCK_BASE + 1,
            self.data.len() - self.records_start,
            self.records_start as u64 - 4,
            "record count",
        )?)
    }
    /// The context-switch count as a safe capacity (checked against the bytes that remain).
    pub(crate) fn context_switches_capacity(&self) -> Result<usize, Error> {
        Ok(checked_capacity(
            self.cs_count.into(),
            2 + 21,
            self.data.len() - self.cs_start,
            self.cs_start as u64 - 4,
            "context switch count",
        )?)
    }
    /// Offset of the first record's size prefix.
    pub fn records_offset(&self) -> usize {
        self.records_start
    }
}

/// A context switch borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextSwitchRef<'a> {
    /// Offset of the size prefix.
    pub offset: u64,
    /// Begin (ticks).
    pub begin: u64,
    /// End (ticks).
    pub end: u64,
    /// Target thread id (u32 on disk before 1.3.0).
    pub target_tid: u64,
    /// Target name without its NUL.
    pub name: Name<'a>,
}

impl ContextSwitchRef<'_> {
    /// Size after the u16 prefix.
    pub fn size(&self, wide: bool) -> usize {
        16 + if wide { 8 } else { 4 } + self.name.len() + 1
    }
}

/// Iterator over a thread's context switches.
#[derive(Debug, Clone)]
pub struct CSwitchIter<'a> {
    data: &'a [u8],
    pos: usize,
    left: u32,
    wide: bool,
}

impl<'a> CSwitchIter<'a> {
    fn read_one(&mut self) -> Result<ContextSwitchRef<'a>, Error> {
        let what = "context switch";
        let min = if self.wide { 25 } else { 21 };
        let size = item_size(self.data, self.pos, what, min)?;
        let offset = self.pos as u64;
        let payload = &self.data[self.pos + 2..self.pos + 2 + size];
        self.pos += 2 + size;
        // Begin, end, target tid: u64 from 1.3.0, u32 before (SB:87-101).
        let (begin, end, tid, rest) = if self.wide {
            match CSwitchBase::ref_from_prefix(payload) {
                Ok((b, rest)) => (b.begin.get(), b.end.get(), b.target_tid.get(), rest),
                Err(_) => return Err(truncated_at(offset, what, size)),
            }
        } else {
            match CSwitchBaseV1::ref_from_prefix(payload) {
                Ok((b, rest)) => (b.begin.get(), b.end.get(), b.target_tid.get().into(), rest),
                Err(_) => return Err(truncated_at(offset, what, size)),
            }
        };
        let name_at = offset + 2 + (size - rest.len()) as u64;
        Ok(ContextSwitchRef {
            offset,
            begin,
            end,
            target_tid: tid,
            name: Name(strip_nul(rest, name_at, "context switch name")?),
        })
    }
}

fn truncated_at(offset: u64, what: &'static str, size: usize) -> Error {
    Error::TooSmall {
        offset,
        what,
        min: 21,
        found: size as u64,
    }
}

impl<'a> Iterator for CSwitchIter<'a> {
    type Item = Result<ContextSwitchRef<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let r = self.read_one();
        if r.is_err() {
            self.left = 0;
        }
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}

/// A record borrowed from the input: its fixed part, viewed in place, and its whole payload.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// Offset of the size prefix.
    pub offset: u64,
    /// The fixed part (begin, end, descriptor id).
    pub base: &'a BlockBase,
    /// The payload (everything after the size prefix, fixed part included).
    pub payload: &'a [u8],
}

impl<'a> RawRecord<'a> {
    /// Begin (ticks).
    #[inline]
    pub fn begin(&self) -> u64 {
        self.base.begin.get()
    }
    /// End (ticks).
    #[inline]
    pub fn end(&self) -> u64 {
        self.base.end.get()
    }
    /// Descriptor id.
    #[inline]
    pub fn descriptor(&self) -> u32 {
        self.base.id.get()
    }
    /// The runtime name as the C++ reader sees it: the bytes after the fixed part up to the first
    /// NUL (empty for unnamed blocks and for values, whose name stub is 0).
    #[inline]
    pub fn runtime_name(&self) -> Name<'a> {
        let tail = &self.payload[raw::BLOCK_BASE..];
        if tail.first() == Some(&0) {
            return Name(&[]);
        }
        Name(c_str(tail))
    }
}

/// Iterator over a thread's records: every complete record before any damage, then the error.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) left: u32,
    pub(crate) failed: bool,
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<RawRecord<'a>, Error>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let pos = self.pos;
        let size = match item_size(self.data, pos, "record", raw::BLOCK_BASE + 1) {
            Ok(s) => s,
            Err(e) => {
                self.left = 0;
                self.failed = true;
                return Some(Err(e));
            }
        };
        let payload = &self.data[pos + 2..pos + 2 + size];
        self.pos = pos + 2 + size;
        match BlockBase::ref_from_prefix(payload) {
            Ok((base, _)) => Some(Ok(RawRecord {
                offset: pos as u64,
                base,
                payload,
            })),
            Err(_) => {
                self.left = 0;
                self.failed = true;
                Some(Err(truncated_at(pos as u64, "record", size)))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}

impl RecordRef<'_> {
    /// The owned value, for a value record.
    pub fn to_value(&self) -> Option<crate::model::Value> {
        match self {
            RecordRef::Named { .. } => None,
            RecordRef::Value { head, data } => Some(crate::model::Value {
                stub: [head.name_stub, head.padding],
                data_type: head.data_type,
                is_array: head.is_array,
                value_id: head.value_id.get(),
                data: data.to_vec(),
            }),
        }
    }
}

/// A record decoded by its descriptor.
#[derive(Debug, Clone, Copy)]
pub enum RecordRef<'a> {
    /// Block or event.
    Named {
        /// Begin, end, descriptor id.
        base: &'a BlockBase,
        /// Runtime name field without its final NUL.
        name: Name<'a>,
    },
    /// Value (descriptor type 2, from 2.0).
    Value {
        /// The 34-byte header.
        head: &'a ValueBase,
        /// `data_size` bytes.
        data: &'a [u8],
    },
}
