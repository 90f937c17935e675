//! Reading: the container ([`packets`]), the logical stream ([`Reader`]) and the real reader's
//! view of it ([`TraceReader`]); [`with_threaded_reader`] splits the Snappy decompression and
//! the parsing over two threads.

mod hot;
pub mod packets;
mod parse;
mod reader;
mod threaded;
mod traces;

pub use reader::Reader;
pub use threaded::{ThreadedSource, with_threaded_reader};
pub(crate) use traces::is_eval_file;
pub use traces::{Trace, TraceReader, normalize_references, reader_file_name};
