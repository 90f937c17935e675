//! Read and write EasyProfiler `.prof` captures of every version, with the block tree the C++
//! reader builds.
//!
//! The blocks that take the most self time in a capture, with their calls and totals:
//!
//! ```
//! use profcodec_easyprofiler::parse;
//!
//! let bytes = std::fs::read("../../testdata/easyprofiler/small_v210_gui_bookmarks.prof")?;
//! let view = parse(&bytes)?;
//! let tree = view.tree()?;
//! let mut totals = tree.totals();
//! totals.sort_by_key(|t| std::cmp::Reverse(t.self_time));
//! println!("{:<24} {:>6} {:>10} {:>10}", "block", "calls", "self ns", "total ns");
//! for t in totals.iter().take(5) {
//!     let name = tree.descriptor(t.descriptor).map(|d| d.name()).unwrap_or_default();
//!     println!("{name:<24} {:>6} {:>10} {:>10}", t.count, t.self_time, t.total);
//! }
//! assert_eq!(totals[0].count, 96); // "leaf"
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The layout followed is what yse/easy_profiler writes and reads (see [The format](#the-format)
//! below); where the original format document disagrees, the real tool wins.
//!
//! - [`parse`] / [`parse_with`] read the header and descriptors of any version (1.0.0 and older
//!   without pid, u32 ids before 1.3.0, 1.3.x, 2.0.x, 2.1.x; later versions read as 2.1) and
//!   give a [`CaptureView`] borrowing the input.
//! - [`CaptureView::threads`] walks the thread sections; each [`ThreadView`] has zero-copy
//!   iterators over its context switches and records ([`RawRecord`] borrows the input).
//! - [`CaptureView::tree`] builds the block tree exactly as the C++ reader does: post-order
//!   adoption by begin time, depth limit 254, runtime-named blocks, ticks to ns, records before
//!   the capture's begin dropped or clamped, header counters checked.
//! - [`Mode::Tolerant`] (the default) reads what real writers produce, such as a 2.1 file with
//!   zero blocks, and reports [`Oddity`]s; [`Mode::Strict`] refuses what the C++ reader refuses.
//! - [`CaptureView::walk`] checks the same and nests the blocks the same way without a tree in
//!   memory: [`Walk::pre_order`] gives a thread's blocks in time order and
//!   [`Walk::to_profile`] the profile, [`Walk::flat`] its blocks in file order with their
//!   parents and depths and [`Walk::totals`] the per-descriptor totals, all read again from the
//!   input, in memory that grows with the threads, the nesting depth and (for the profile) the
//!   distinct call paths, not with the blocks. The inspection verbs (`info`, `validate`,
//!   `dump`) and the tables read the capture this way.
//! - [`CaptureView::to_model`] gives the owned [`Capture`]; [`Capture::write`] writes it back.
//!   Reading then writing any file gives the same bytes (the model keeps every byte, including
//!   the header counters as stored and any trailing bytes).
//! - [`BlockTree::to_profile`] (feature `profile`, on by default) gives the capture in the
//!   format-neutral model of `profcodec-profile`: per thread, every block's call path with its
//!   self and inclusive time and its calls, so that `Profile::top` answers "which blocks cost
//!   the most" per thread or over all of them.
//! - [`timeline`] (feature `profile`): the capture as a timeline (threads, blocks as nested
//!   slices, events, values, context switches, bookmarks), the model `profcodec-timeline`
//!   writes as Perfetto or Chrome traces.
//! - `tables` (feature `arrow`): threads, descriptors, blocks, values, context switches and
//!   bookmarks as Arrow record batches, the `easyprofiler` set of `profcodec-arrow`'s SQL and
//!   Parquet export.
//!
//! ```
//! use profcodec_easyprofiler::{Capture, Convention, Descriptor, Record, RecordBody, Thread, Version};
//!
//! let mut capture = Capture { version: Version::V2_1_0, cpu_frequency: 0, ..Capture::default() };
//! capture.descriptors.push(Some(Box::new(Descriptor {
//!     id: 0, block_type: 1, name: b"frame".to_vec(), file: b"main.cpp".to_vec(), ..Descriptor::default()
//! })));
//! capture.threads.push(Thread {
//!     id: 7, name: Some(b"Main".to_vec()), context_switches: vec![],
//!     records: vec![Record { begin: 10, end: 20, descriptor: 0, body: RecordBody::Named(vec![]) }],
//! });
//! capture.end_time = 30;
//! capture.update_counters(Convention::Runtime);
//! let bytes = capture.to_bytes().unwrap();
//!
//! let view = profcodec_easyprofiler::parse(&bytes).unwrap();
//! let tree = view.tree().unwrap();
//! assert_eq!(tree.threads[0].nodes[0].end, 20);
//! assert_eq!(view.to_model().unwrap(), capture);
//! ```
//!
//! # The format
//!
//! As yse/easy_profiler (2.1.0, `easy_profiler_core/`) writes and reads it. Citations: `R:` lines
//! of `reader.cpp`, `W:` of `writer.cpp`, `PM:` of `profile_manager.cpp`, `SB:` of
//! `include/easy/serialized_block.h`. Little-endian packed structs; every variable-size item starts
//! with a u16 size counting the bytes after it.
//!
//! - **Header** (R:686-915): u32 signature `0x45617379` (`ysaE` on disk), u32 version
//!   (`major << 24 | minor << 16 | patch`; at least 0.1.0, anything above 2.1 reads as 2.1). Before
//!   2.0: pid (none up to 1.0.0, u32 before 1.3.0, u64 after), i64 cpu_frequency, u64 begin,
//!   u64 end, u32 blocks_count, u64 memory_size, u32 descriptors_count, u64
//!   descriptors_memory_size. 2.0: u64 pid, i64 cpu_frequency, u64 begin, u64 end, u64
//!   memory_size, u64 descriptors_memory_size, u32 blocks_count, u32 descriptors_count; 2.1 adds
//!   u32 threads_count, u16 bookmarks_count, u16 padding. The C++ reader refuses a zero counter,
//!   yet real writers produce a 2.1 file with zero blocks. `blocks_count` counts context switches
//!   and records kept; `descriptors_memory_size` excludes the size prefixes in the runtime writer
//!   and includes them in the GUI's (W:499).
//! - **Descriptors** (R:944-970): u16 size (0: an empty slot), u32 id, i32 line, u32 ARGB
//!   colour, u8 type (0 event, 1 block, 2 value from 2.0), u8 status, u16 name length (with its
//!   NUL), the name, the file name with its NUL.
//! - **Threads** (R:988-1259), until the end of the input before 2.1, `threads_count` of them
//!   from 2.1: thread id (u32 before 1.3.0, u64 after), u16 name size and name; u32 context-switch
//!   count and `{u16 size, u64 begin, u64 end, target tid (u32 before 1.3.0), name NUL}` (begin,
//!   end, tid: the original document's order is wrong); u32 record count and `{u16 size, u64
//!   begin, u64 end, u32 descriptor id, runtime name NUL}`, or for a value (type-2 descriptor,
//!   from 2.0; SB:168-245) a 34-byte head (time twice, id, two stub bytes, u16 data size, u8 data
//!   type, u8 is_array, u64 value id) and the data. There is no end mark per thread.
//! - **After the threads** (2.1 only; R:1269-1336): the signature again; when bookmarks_count is
//!   not 0, the bookmarks `{u16 size, u64 position (ns), u32 colour, text NUL}` and the signature
//!   once more.
//! - **Nesting** (R:1174-1241): there is no parent field. Records are stored when they end, so a
//!   thread's records are in post-order; a record that begins before the last top-level entry
//!   ends adopts it and, walking back, every earlier entry that begins at or after it. A block
//!   whose children reach 254 levels below it is refused ("Stack depth exceeded value of 254"):
//!   a chain of 255 nested blocks reads, 256 do not.
//! - **Runtime names** (R:1150-1172): a block with a non-empty runtime name gets a synthetic
//!   descriptor (a copy of its own) per distinct name, across threads.
//! - **Time** (R:919-937): with a non-zero cpu_frequency every time is converted with
//!   `t * (1e9 / cpu_frequency)` in double precision (1e9 and 0 both mean ns); records ending
//!   before the capture's begin are dropped and the others clamped to it.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The format's one name in every machine-readable output: the `format` of a dump's header and
/// of `info --json`, the table set of `sql` and `export`, and the umbrella's cargo feature.
pub const FORMAT_NAME: &str = "easyprofiler";

mod error;
#[cfg(feature = "inspect")]
pub mod inspect;
mod model;
mod name;
#[cfg(feature = "profile")]
mod profile;
pub mod raw;
mod read;
#[cfg(feature = "arrow")]
pub mod tables;
#[cfg(feature = "profile")]
pub mod timeline;
mod write;

pub use error::{Error, Oddity, WriteError};
pub use name::Name;
/// The format-neutral profile model that [`BlockTree::to_profile`] builds (feature `profile`).
#[cfg(feature = "profile")]
pub use profcodec_profile;
#[cfg(feature = "profile")]
pub use profile::ProfileOptions;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
pub use model::{
    BlockType, Bookmark, Capture, ContextSwitch, Convention, Counters, DataType, Descriptor,
    Layout, Record, RecordBody, Tail, Thread, Value, ValueData, Version,
};
pub use read::{
    Block, BlockTotals, BlockTree, BookmarkRef, CSwitchIter, CaptureView, ChildrenRev,
    ContextSwitchNode, ContextSwitchRef, DescriptorRef, DescriptorTable, Flat, FlatBlock, FlatNode,
    FlatNodes, Header, Mode, Node, NodeRecords, PreOrder, RawRecord, RecordIter, RecordRef, Step,
    TailRef, ThreadIter, ThreadTree, ThreadView, ThreadWalk, ThreadsEnd, TickConverter,
    TreeBuffers, TreeDescriptor, Walk, c_str, parse, parse_with,
};
