//! Reading: the container ([`packets`]), the logical stream ([`Reader`]) and the real reader's
//! view of it ([`TraceReader`]).

mod hot;
pub mod packets;
mod parse;
mod reader;
mod traces;

pub use reader::Reader;
pub use traces::{Trace, TraceReader, normalize_references, reader_file_name};
