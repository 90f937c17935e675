//! The forward pass that every reading of the blocks starts with (crate docs, "The format":
//! "Nesting", "Runtime names", "Time"; R:1040-1259): thread sections merged by id, context
//! switches and records checked, ticks converted, records before the capture's begin dropped,
//! runtime names given their synthetic descriptors, the counters and the tail checked. The block
//! tree ([`CaptureView::tree`]) and the walk ([`CaptureView::walk`]) differ only in what they keep
//! of each block, so both are visitors of this one pass.
//!
//! Also here: the C++ reader's nesting rule, forwards (as it reads) and backwards (as a walk from
//! the end of a thread meets the same blocks).

use std::collections::HashMap;
use std::sync::Arc;

use super::{CaptureView, DescriptorRef, DescriptorTable, RawRecord, TailRef, ThreadView, c_str};
use crate::error::{Error, Oddity};
use crate::name::Name;

/// The C++ reader fails when a block would get this depth (R:1215).
pub(crate) const DEPTH_LIMIT: u32 = 254;

/// A kept context switch (converted to ns, clamped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextSwitchNode<'a> {
    /// Begin (ns).
    pub begin: u64,
    /// End (ns).
    pub end: u64,
    /// Target thread id.
    pub target_tid: u64,
    /// Target name.
    pub name: Name<'a>,
    /// Index among all kept context switches and records of the capture (the C++ block index).
    pub block_index: u32,
}

/// A descriptor of the tree: a file descriptor, or a synthetic one for a runtime name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeDescriptor<'a> {
    /// The file descriptor (for a synthetic one, the descriptor it copies).
    pub descriptor: DescriptorRef<'a>,
    /// The runtime name of a synthetic descriptor.
    pub runtime_name: Option<Name<'a>>,
}

impl<'a> TreeDescriptor<'a> {
    /// The name the C++ reader shows: the runtime name, else the descriptor's name (up to its
    /// first NUL).
    pub fn name(&self) -> Name<'a> {
        self.runtime_name
            .unwrap_or_else(|| Name(c_str(self.descriptor.name.as_bytes())))
    }
}

/// Converts ticks to ns as the C++ reader does (R:920, `t *= 1e9 / cpu_freq` in double).
#[derive(Debug, Clone, Copy)]
pub struct TickConverter {
    factor: Option<f64>,
}

impl TickConverter {
    /// The converter for a header's `cpu_frequency` (0 means ns already).
    pub fn new(cpu_frequency: i64) -> Self {
        TickConverter {
            factor: (cpu_frequency != 0).then(|| 1e9 / (cpu_frequency as u64) as f64),
        }
    }
    /// `t` in ns.
    #[inline]
    pub fn ns(&self, t: u64) -> u64 {
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        match self.factor {
            Some(f) => {
                // Below 2^63 the signed conversions round and truncate exactly as the unsigned
                // ones, in one instruction each instead of a branchy sequence.
                let x = if t < 1 << 63 {
                    t as i64 as f64
                } else {
                    t as f64
                };
                let y = x * f;
                if (0.0..TWO_63).contains(&y) {
                    y as i64 as u64
                } else {
                    y as u64
                }
            }
            None => t,
        }
    }
}

/// A kept block, event or value: its times as the C++ reader keeps them and where its record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Begin (ns, clamped to the capture's begin).
    pub begin: u64,
    /// End (ns).
    pub end: u64,
    /// Descriptor id after runtime naming (a synthetic id for a runtime-named block).
    pub descriptor: u32,
    /// Offset of its record's size prefix ([`CaptureView::record_at`] reads it again).
    pub offset: u64,
}

/// The descriptors blocks name: the file's slots, then one synthetic descriptor per distinct
/// runtime name, across threads, in the order the names first appear (R:1150-1172).
#[derive(Debug, Clone)]
pub(crate) struct Descriptors<'a> {
    /// The file's descriptor slots (shared with the view).
    file: Arc<DescriptorTable<'a>>,
    /// One synthetic descriptor per distinct runtime name, after the file's slots.
    runtime: Vec<TreeDescriptor<'a>>,
    /// The synthetic id of each runtime name.
    ids: HashMap<Name<'a>, u32>,
}

impl<'a> Descriptors<'a> {
    fn new(file: Arc<DescriptorTable<'a>>) -> Self {
        Descriptors {
            file,
            runtime: Vec::new(),
            ids: HashMap::new(),
        }
    }

    /// The number of descriptor ids.
    pub(crate) fn len(&self) -> usize {
        self.file.len() + self.runtime.len()
    }

    /// The number of the file's slots (the first synthetic id).
    pub(crate) fn file_len(&self) -> usize {
        self.file.len()
    }

    /// The synthetic descriptors.
    pub(crate) fn runtime(&self) -> &[TreeDescriptor<'a>] {
        &self.runtime
    }

    /// The descriptor `id` names; `None` for an empty slot or an id out of range.
    #[inline]
    pub(crate) fn get(&self, id: u32) -> Option<TreeDescriptor<'a>> {
        match (id as usize).checked_sub(self.file.len()) {
            None => self.file.get(id).map(|&descriptor| TreeDescriptor {
                descriptor,
                runtime_name: None,
            }),
            Some(i) => self.runtime.get(i).copied(),
        }
    }

    /// The descriptor id of record `r`, giving a runtime name met for the first time its
    /// synthetic descriptor (a copy of the record's own, which `decode_record` found present).
    #[inline]
    fn assign(&mut self, r: &RawRecord<'a>) -> u32 {
        let name = r.runtime_name();
        if name.is_empty() {
            return r.descriptor();
        }
        if let Some(&id) = self.ids.get(&name) {
            return id;
        }
        let id = self.len() as u32;
        if let Some(&d) = self.file.get(r.descriptor()) {
            self.runtime.push(TreeDescriptor {
                descriptor: d,
                runtime_name: Some(name),
            });
        }
        self.ids.insert(name, id);
        id
    }

    /// The descriptor id of record `r`, read again after the forward pass named it.
    #[inline]
    pub(crate) fn id(&self, r: &RawRecord<'a>) -> u32 {
        let name = r.runtime_name();
        if name.is_empty() {
            return r.descriptor();
        }
        self.ids.get(&name).copied().unwrap_or(r.descriptor())
    }
}

/// What the forward pass hands to the one who keeps the blocks.
pub(crate) trait Visit<'a> {
    /// A 2.1 file states its thread count: room for `threads` of them (already bounded by the
    /// bytes that could hold them).
    fn reserve_threads(&mut self, threads: usize);
    /// A thread id met for the first time: thread number `thread` (the order of first appearance).
    fn new_thread(&mut self, thread: usize, id: u64);
    /// A section of `thread` names it (up to the first NUL; the last section that names it
    /// wins).
    fn name(&mut self, thread: usize, name: Name<'a>);
    /// A kept context switch of `thread`.
    fn context_switch(&mut self, thread: usize, cs: ContextSwitchNode<'a>);
    /// A file section of `thread` is about to give its records: at most `capacity` of them, the
    /// first kept one having the C++ block index `first_block`.
    fn section(&mut self, thread: usize, view: &ThreadView<'a>, first_block: u64, capacity: usize);
    /// A kept record of `thread`, in file order, the `record`-th of its section (dropped ones
    /// counted). True when its nesting reaches the C++ reader's depth limit (a visitor that does
    /// not nest the blocks says false).
    fn block(&mut self, thread: usize, block: Block, record: u32) -> bool;
}

/// What the forward pass found besides what the visitor kept.
#[derive(Debug)]
pub(crate) struct Scanned<'a> {
    /// Capture begin (ns).
    pub(crate) begin_time: u64,
    /// Capture end (ns).
    pub(crate) end_time: u64,
    /// The tick converter of the capture.
    pub(crate) converter: TickConverter,
    /// The descriptors, runtime names included.
    pub(crate) descriptors: Descriptors<'a>,
    /// Context switches and records kept.
    pub(crate) blocks_kept: u64,
    /// Everything odd about the file (header, counters, depth, tail).
    pub(crate) oddities: Vec<Oddity>,
    /// What follows the threads.
    pub(crate) tail: TailRef<'a>,
}

impl<'a> CaptureView<'a> {
    /// The forward pass over every thread section (and so over every byte), handing each kept
    /// context switch and record to `visit`. In strict mode an oddity the C++ reader refuses is
    /// an [`Error::Refused`]; the depth limit is refused where it is met, as the reader does.
    pub(crate) fn scan(&self, visit: &mut impl Visit<'a>) -> Result<Scanned<'a>, Error> {
        let h = self.header();
        let conv = TickConverter::new(h.cpu_frequency);
        let begin_time = conv.ns(h.begin_time);
        let mut s = Scanned {
            begin_time,
            end_time: conv.ns(h.end_time),
            converter: conv,
            descriptors: Descriptors::new(self.descriptors_shared()),
            blocks_kept: 0,
            oddities: self.header_oddities().to_vec(),
            tail: TailRef::default(),
        };
        let mut by_id: HashMap<u64, usize> = HashMap::new();
        let mut memory = 0u64;
        let mut kept: u64 = 0;
        let mut depth_reported = false;

        let mut iter = self.threads();
        if h.version.layout() == crate::model::Layout::V2_1 {
            // The stated thread count, bounded by what the smallest thread sections (18 bytes)
            // could hold, so that many threads cost no growth of the list and the map (growth
            // would double what they hold); a count that lies costs no more than honest threads.
            let rest = self.data().len() - self.threads_offset();
            let threads = (h.counters.threads_count as usize).min(rest / 18);
            by_id.reserve(threads);
            visit.reserve_threads(threads);
        }
        while let Some(t) = iter.next() {
            let t = t?;
            let threads = by_id.len();
            let ti = *by_id.entry(t.id).or_insert_with(|| {
                visit.new_thread(threads, t.id);
                threads
            });
            if let Some(name) = t.name {
                visit.name(ti, Name(c_str(name.as_bytes())));
            }
            for cs in t.context_switches() {
                let cs = cs?;
                memory += cs.size(h.version.layout().wide_ids()) as u64;
                let b = conv.ns(cs.begin);
                let e = conv.ns(cs.end);
                // Context switches need end > begin of the capture (R:1057).
                if e > begin_time {
                    visit.context_switch(
                        ti,
                        ContextSwitchNode {
                            begin: b.max(begin_time),
                            end: e,
                            target_tid: cs.target_tid,
                            name: Name(c_str(cs.name.as_bytes())),
                            block_index: kept as u32,
                        },
                    );
                    kept += 1;
                }
            }
            let cap = t.records_capacity()?;
            visit.section(ti, &t, kept, cap);
            let mut records = t.records();
            for (record, r) in records.by_ref().enumerate() {
                let r = r?;
                // Checks the descriptor id and the record's shape (R:1122-1132).
                self.decode_record(&r)?;
                memory += r.payload.len() as u64;
                let end = conv.ns(r.end());
                if end < begin_time {
                    continue;
                }
                let block = Block {
                    begin: conv.ns(r.begin()).max(begin_time),
                    end,
                    descriptor: s.descriptors.assign(&r),
                    offset: r.offset,
                };
                if visit.block(ti, block, record as u32) && !depth_reported {
                    depth_reported = true;
                    let odd = Oddity::DepthLimit { offset: r.offset };
                    s.oddities.push(odd);
                    if self.mode() == super::Mode::Strict {
                        return Err(Error::Refused(odd));
                    }
                }
                kept += 1;
            }
            // Every record was walked: the thread iterator need not skip them again.
            iter.records_walked(&records);
        }
        s.blocks_kept = kept;
        let offsets = self.offsets();
        let c = h.counters;
        if kept != u64::from(c.blocks_count) {
            s.oddities.push(Oddity::BlocksCount {
                offset: offsets.blocks_count,
                header: c.blocks_count.into(),
                found: kept,
            });
        }
        if memory > c.memory_size {
            s.oddities.push(Oddity::MemorySizeExceeded {
                offset: offsets.memory_size,
                header: c.memory_size,
                found: memory,
            });
        } else if memory < c.memory_size {
            s.oddities.push(Oddity::MemorySizeLarger {
                offset: offsets.memory_size,
                header: c.memory_size,
                found: memory,
            });
        }
        if let Some(end) = iter.end() {
            s.tail = self.tail(end)?;
            s.oddities.extend_from_slice(&s.tail.oddities);
        }
        self.refuse(&s.oddities)?;
        Ok(s)
    }
}

/// The C++ reader's nesting as it reads (R:1174-1241): a record that begins at `begin` adopts
/// the last of the `roots` top-level entries when it begins before that one ends (`last_end`),
/// and then, walking back, every earlier one that begins at or after it. Returns the index of
/// the first entry adopted (`roots` when none is).
#[inline]
pub(crate) fn adopted_from(
    begin: u64,
    roots: usize,
    last_end: u64,
    root_begin: impl Fn(usize) -> u64,
) -> usize {
    if roots == 0 || begin >= last_end {
        return roots;
    }
    let mut k = roots - 1;
    while k > 0 && begin <= root_begin(k - 1) {
        k -= 1;
    }
    k
}

/// The same nesting seen from the end of a thread: whether an open block, met before (so later
/// in the file), holds `child`, the next block met walking back.
///
/// Walking back from a block, the blocks still open are its ancestors; the child's parent is the
/// innermost of them that adopted it when the reader met that parent. When the reader met an
/// open block `o`, the top-level entries after the child were exactly `o`'s children that come
/// after it, all adopted by `o`. So `o` adopted the child as the last entry (`o` has no child
/// seen yet) when `o` begins before the child ends, and otherwise (walking back past its later
/// children, which `o` adopted) when `o` begins at or before the child begins. An open block
/// that does not hold the child holds nothing before it: it is closed.
#[inline]
pub(crate) fn holds(open_begin: u64, open_has_children: bool, child: &Block) -> bool {
    if open_has_children {
        open_begin <= child.begin
    } else {
        open_begin < child.end
    }
}

#[cfg(test)]
mod tests {
    use super::TickConverter;

    #[test]
    fn fast_conversion_equals_the_plain_double_arithmetic() {
        for freq in [1i64, 3, 1_000_000_000, 2_596_007_000, -5, i64::MAX] {
            let c = TickConverter::new(freq);
            let f = 1e9 / (freq as u64) as f64;
            let mut t = 1u64;
            while t != 0 {
                for v in [t - 1, t, t | 1, t.wrapping_mul(3)] {
                    assert_eq!(c.ns(v), (v as f64 * f) as u64, "{freq} {v}");
                }
                t <<= 1;
            }
            assert_eq!(c.ns(u64::MAX), (u64::MAX as f64 * f) as u64);
        }
    }
}
