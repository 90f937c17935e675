//! Read and write EasyProfiler `.prof` captures of every version, with the block tree the C++
//! reader builds.
//!
//! The layout followed is `shared/specs/as-implemented/easyprofiler.md` (what yse/easy_profiler
//! writes and reads); where the given document disagrees, the real tool wins.
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
//! - [`CaptureView::to_model`] gives the owned [`Capture`]; [`Capture::write`] writes it back.
//!   Reading then writing any file gives the same bytes (the model keeps every byte, including
//!   the header counters as stored and any trailing bytes).
//!
//! ```
//! use profcodec_easyprofiler::{Capture, Convention, Descriptor, Record, RecordBody, Thread, Version};
//!
//! let mut capture = Capture { version: Version::V2_1_0, cpu_frequency: 0, ..Capture::default() };
//! capture.descriptors.push(Some(Descriptor {
//!     id: 0, block_type: 1, name: b"frame".to_vec(), file: b"main.cpp".to_vec(), ..Descriptor::default()
//! }));
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
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod model;
mod name;
pub mod raw;
mod read;
mod write;

pub use error::{Error, Oddity, WriteError};
pub use name::Name;
pub use model::{
    BlockType, Bookmark, Capture, ContextSwitch, Convention, Counters, DataType, Descriptor,
    Layout, Record, RecordBody, Tail, Thread, Value, ValueData, Version,
};
pub use read::tree::TickConverter;
pub use read::{
    BlockTotals, BlockTree, BookmarkRef, CSwitchIter, CaptureView, ChildrenRev, ContextSwitchNode, DescriptorTable, FlatNode, FlatNodes,
    ContextSwitchRef, DescriptorRef, Header, Mode, Node, NodeRecords, RawRecord, RecordIter,
    RecordRef, TailRef, ThreadIter, ThreadTree, ThreadView, ThreadsEnd, TreeBuffers,
    TreeDescriptor, c_str, parse, parse_with,
};
