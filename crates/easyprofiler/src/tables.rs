//! The tables of an EasyProfiler capture (feature `arrow`): threads, descriptors, blocks with
//! their parents and depths, values, context switches and bookmarks, as the C++ reader sees them
//! (times in ns, runtime-named blocks with their own descriptors, records before the capture's
//! begin dropped). They are read from the input's bytes through the [`CaptureView`] and its
//! [`Walk`], as their batches are consumed: no node per block is held, the blocks of a thread
//! come from [`Walk::flat`] (two chunks of blocks, and the open blocks per chunk), the values
//! and context switches are read again from the input.

use std::rc::Rc;

use profcodec_common::Source;
use profcodec_tables::{Batches, Error, ScanOptions, SourceTables, TableSet, batches, table};

use crate::read::walk::FlatState;
use crate::{
    BlockType, BookmarkRef, CaptureView, ContextSwitchNode, DataType, FlatBlock, Name, RecordRef,
    TreeDescriptor, Value, ValueData, Walk, c_str,
};

table! {
    /// EasyProfiler `threads`: one row per thread (file sections of one thread id merged, as
    /// the C++ reader merges them).
    Threads, ThreadRows, "threads" {
        thread: UInt64 => "The thread id, the key of the other tables' `thread`.",
        name: Utf8 => "The thread's name.",
        blocks: UInt64 => "How many blocks, events and values it has.",
        context_switches: UInt64 => "How many context switches it has.",
    }
}

table! {
    /// EasyProfiler `descriptors`: one row per descriptor id: the file's descriptors, then one
    /// per distinct runtime block name (a copy of its block's descriptor under that name).
    Descriptors, DescriptorRows, "descriptors" {
        descriptor: UInt32 => "The descriptor id, the key of `blocks.descriptor`.",
        name: Utf8 => "The name the C++ reader shows (the runtime name of a runtime-named block).",
        file: Utf8 => "The source file.",
        line: Int32 => "The source line.",
        color: UInt32 => "The ARGB colour.",
        block_type: Utf8 => "`event`, `block` or `value` (`unknown_<n>` otherwise).",
        status: UInt8 => "The descriptor's status byte (enabled and other flags).",
        copy_of: UInt32 nullable => "For a runtime name's descriptor: the file descriptor it copies.",
    }
}

table! {
    /// EasyProfiler `blocks`: one row per block, event and value of every thread's tree, in
    /// the file's order (a block ends after its children).
    Blocks, BlockRows, "blocks" {
        thread: UInt64 => "The thread (`threads.thread`).",
        id: UInt32 => "The block's index (the C++ reader's: among all context switches and blocks kept).",
        parent: UInt32 nullable => "The enclosing block's `id` (null at the top level).",
        depth: UInt32 => "0 at the top level, the parent's depth + 1 below.",
        descriptor: UInt32 => "The descriptor (`descriptors.descriptor`).",
        begin_ns: UInt64 => "Begin, in ns (clamped to the capture's begin).",
        end_ns: UInt64 => "End, in ns.",
    }
}

table! {
    /// EasyProfiler `values`: one row per value record (a block of a `value` descriptor).
    Values, ValueRows, "values" {
        thread: UInt64 => "The thread (`threads.thread`).",
        id: UInt32 => "The value's block (`blocks.id`).",
        descriptor: UInt32 => "The value's descriptor (`descriptors.descriptor`).",
        time_ns: UInt64 => "When it was recorded, in ns.",
        value_id: UInt64 => "The value's id (by default the variable's address).",
        data_type: Utf8 => "`bool`, `char`, `int8` ... `uint64`, `float`, `double` or `string` (`unknown_<n>` otherwise).",
        is_array: Boolean => "Whether it is an array (or a string).",
        value: Float64 nullable => "A numeric or boolean scalar's value.",
        text: Utf8 nullable => "A string's text, or an array's elements as `[a, b, ...]`.",
    }
}

table! {
    /// EasyProfiler `context_switches`: one row per context switch kept.
    ContextSwitches, ContextSwitchRows, "context_switches" {
        thread: UInt64 => "The thread switched out (`threads.thread`).",
        begin_ns: UInt64 => "Begin, in ns.",
        end_ns: UInt64 => "End, in ns.",
        target_thread: UInt64 => "The thread switched to.",
        name: Utf8 => "The target's name.",
    }
}

table! {
    /// EasyProfiler `bookmarks`: the bookmarks the GUI saves (2.1 captures).
    Bookmarks, BookmarkRows, "bookmarks" {
        position_ns: UInt64 => "Where, in ns.",
        color: UInt32 => "The ARGB colour.",
        text: Utf8 => "The bookmark's text.",
    }
}

/// The set's name: the SQL schema of its tables, and the format its errors name.
const NAME: &str = crate::FORMAT_NAME;

/// The `easyprofiler` set: its tables, in order.
pub const SET: TableSet = TableSet::new(
    NAME,
    &[
        Threads::DEF,
        Descriptors::DEF,
        Blocks::DEF,
        Values::DEF,
        ContextSwitches::DEF,
        Bookmarks::DEF,
    ],
);

/// The tables of one capture, whose header was checked when it was opened.
#[derive(Debug)]
pub struct TableReader {
    _checked: (),
}

impl TableReader {
    /// The tables of the capture `source` holds, its header checked.
    pub fn open(source: &Source<'_>) -> Result<TableReader, Error> {
        view(source)?;
        Ok(TableReader { _checked: () })
    }
}

/// An error of the capture `source` holds.
fn invalid(source: &Source<'_>, e: crate::Error) -> Error {
    Error::invalid(source.path, NAME, e.offset(), e)
}

/// The view of the capture `source` holds.
fn view<'a>(source: &Source<'a>) -> Result<CaptureView<'a>, Error> {
    crate::parse(source.bytes).map_err(|e| invalid(source, e))
}

impl SourceTables for TableReader {
    fn set(&self) -> TableSet {
        SET
    }

    fn batches<'a>(
        &'a self,
        source: Source<'a>,
        table: &str,
        options: &ScanOptions,
    ) -> Result<Batches<'a>, Error> {
        SET.table(table)?;
        let view = view(&source)?;
        // The walk checks the capture as the tree would, and holds no node per block: the
        // blocks and values are read again from the input as their batches are consumed.
        let walk = Rc::new(view.walk().map_err(|e| invalid(&source, e))?);
        Ok(match table {
            Threads::NAME => {
                let items = (0..walk.threads.len()).map(move |t| Ok((Rc::clone(&walk), t)));
                batches(
                    ThreadRows::new(),
                    items,
                    options,
                    |rows, (walk, t): (Rc<Walk<'a>>, usize)| {
                        let th = &walk.threads[t];
                        rows.thread.append_value(th.id);
                        rows.name.append_value(text(th.name));
                        rows.blocks.append_value(th.blocks);
                        rows.context_switches.append_value(th.context_switches);
                    },
                )
            }
            Descriptors::NAME => {
                let file_descriptors = walk.file_descriptors_len() as u32;
                let items = (0..walk.descriptors_len() as u32)
                    .filter_map(move |id| walk.descriptor(id).map(|d| Ok((id, d))));
                batches(
                    DescriptorRows::new(),
                    items,
                    options,
                    move |rows, (id, d): (u32, TreeDescriptor<'a>)| {
                        let base = d.descriptor;
                        rows.descriptor.append_value(id);
                        rows.name.append_value(text(d.name()));
                        rows.file
                            .append_value(text(Name(c_str(base.file.as_bytes()))));
                        rows.line.append_value(base.line);
                        rows.color.append_value(base.color);
                        rows.block_type.append_value(match base.block_type {
                            0 => "event".to_owned(),
                            1 => "block".to_owned(),
                            2 => "value".to_owned(),
                            n => format!("unknown_{n}"),
                        });
                        rows.status.append_value(base.status);
                        rows.copy_of
                            .append_option((id >= file_descriptors).then_some(base.id));
                    },
                )
            }
            Blocks::NAME => batches(
                BlockRows::new(),
                flat_blocks(walk).map(Ok),
                options,
                |rows, (thread, n): (u64, FlatBlock)| {
                    rows.thread.append_value(thread);
                    rows.id.append_value(n.id);
                    rows.parent.append_option(n.parent);
                    rows.depth.append_value(n.depth);
                    rows.descriptor.append_value(n.block.descriptor);
                    rows.begin_ns.append_value(n.block.begin);
                    rows.end_ns.append_value(n.block.end);
                },
            ),
            Values::NAME => {
                // The value records among the blocks, their data read again from the input.
                let mut failed = false;
                let values = Rc::clone(&walk);
                let items = flat_blocks(walk).filter_map(move |(thread, n)| {
                    // Only a record of a value descriptor can be a value: only those are read.
                    let value = values.descriptor(n.block.descriptor).is_some_and(|d| {
                        matches!(
                            BlockType::from_u8(d.descriptor.block_type),
                            Some(BlockType::Value)
                        )
                    });
                    if failed || !value {
                        return None;
                    }
                    let row = match view.record_at(n.block.offset) {
                        Ok(RecordRef::Named { .. }) => return None,
                        decoded => decoded.map_err(|e| invalid(&source, e)).map(|r| ValueRow {
                            thread,
                            id: n.id,
                            descriptor: n.block.descriptor,
                            time: n.block.begin,
                            value: r.to_value(),
                        }),
                    };
                    failed = row.is_err();
                    Some(row)
                });
                batches(ValueRows::new(), items, options, |rows, v: ValueRow| {
                    append_value(rows, v)
                })
            }
            ContextSwitches::NAME => {
                let items = (0..walk.threads.len()).flat_map(move |t| {
                    let thread = walk.threads[t].id;
                    walk.context_switches_owned(&walk.threads[t])
                        .map(move |cs| Ok((thread, cs)))
                });
                batches(
                    ContextSwitchRows::new(),
                    items,
                    options,
                    |rows, (thread, cs): (u64, ContextSwitchNode<'a>)| {
                        rows.thread.append_value(thread);
                        rows.begin_ns.append_value(cs.begin);
                        rows.end_ns.append_value(cs.end);
                        rows.target_thread.append_value(cs.target_tid);
                        rows.name.append_value(text(cs.name));
                    },
                )
            }
            _ => {
                let bookmarks = walk.tail().bookmarks.clone();
                batches(
                    BookmarkRows::new(),
                    bookmarks.into_iter().map(Ok),
                    options,
                    |rows, b: BookmarkRef<'a>| {
                        rows.position_ns.append_value(b.position);
                        rows.color.append_value(b.color);
                        rows.text.append_value(text(Name(c_str(b.text.as_bytes()))));
                    },
                )
            }
        })
    }
}

/// Every thread's blocks in file order, each with its thread id, its parent and depth
/// ([`Walk::flat`]), one thread after the other, read from the input as they are asked for.
fn flat_blocks<'a>(walk: Rc<Walk<'a>>) -> impl Iterator<Item = (u64, FlatBlock)> + 'a {
    let mut thread = 0;
    let mut state: Option<FlatState> = None;
    std::iter::from_fn(move || {
        loop {
            if let Some(s) = state.as_mut() {
                if let Some(b) = s.next(&walk) {
                    return Some((walk.threads[thread].id, b));
                }
                state = None;
                thread += 1;
            }
            if thread >= walk.threads.len() {
                return None;
            }
            state = Some(FlatState::new(&walk, thread));
        }
    })
}

/// A name as text (bytes that are not UTF-8 replaced).
fn text(name: Name<'_>) -> String {
    name.to_string()
}

struct ValueRow {
    thread: u64,
    id: u32,
    descriptor: u32,
    time: u64,
    value: Option<Value>,
}

fn append_value(rows: &mut ValueRows, v: ValueRow) {
    rows.thread.append_value(v.thread);
    rows.id.append_value(v.id);
    rows.descriptor.append_value(v.descriptor);
    rows.time_ns.append_value(v.time);
    let value = v.value.unwrap_or_default();
    rows.value_id.append_value(value.value_id);
    rows.data_type.append_value(match value.kind() {
        Some(kind) => type_name(kind).to_owned(),
        None => format!("unknown_{}", value.data_type),
    });
    rows.is_array.append_value(value.is_array());
    let (scalar, text) = match value.decode() {
        Some(ValueData::String(bytes)) => (None, Some(string_value(&bytes))),
        Some(data) => {
            let numbers = numbers(&data);
            match numbers.as_slice() {
                [one] if !value.is_array() => (Some(*one), None),
                all => (
                    None,
                    Some(format!(
                        "[{}]",
                        all.iter()
                            .map(f64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                ),
            }
        }
        None => (None, None),
    };
    rows.value.append_option(scalar);
    rows.text.append_option(text);
}

/// A string value's text, up to its NUL (`EASY_TEXT` includes it).
fn string_value(bytes: &[u8]) -> String {
    String::from_utf8_lossy(c_str(bytes)).into_owned()
}

/// The elements of numeric (or boolean) data as doubles.
fn numbers(data: &ValueData) -> Vec<f64> {
    fn all<T: Copy + Into<f64>>(v: &[T]) -> Vec<f64> {
        v.iter().map(|&x| x.into()).collect()
    }
    match data {
        ValueData::Bool(v) => v.iter().map(|&b| f64::from(u8::from(b))).collect(),
        ValueData::Char(v) | ValueData::Int8(v) => all(v),
        ValueData::Uint8(v) => all(v),
        ValueData::Int16(v) => all(v),
        ValueData::Uint16(v) => all(v),
        ValueData::Int32(v) => all(v),
        ValueData::Uint32(v) => all(v),
        ValueData::Int64(v) => v.iter().map(|&x| x as f64).collect(),
        ValueData::Uint64(v) => v.iter().map(|&x| x as f64).collect(),
        ValueData::Float(v) => all(v),
        ValueData::Double(v) => v.clone(),
        ValueData::String(_) => Vec::new(),
    }
}

/// The lower-case name of a data type.
fn type_name(kind: DataType) -> &'static str {
    match kind {
        DataType::Bool => "bool",
        DataType::Char => "char",
        DataType::Int8 => "int8",
        DataType::Uint8 => "uint8",
        DataType::Int16 => "int16",
        DataType::Uint16 => "uint16",
        DataType::Int32 => "int32",
        DataType::Uint32 => "uint32",
        DataType::Int64 => "int64",
        DataType::Uint64 => "uint64",
        DataType::Float => "float",
        DataType::Double => "double",
        DataType::String => "string",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use profcodec_tables::arrow_array::cast::AsArray;
    use profcodec_tables::arrow_array::types::UInt32Type;

    use super::*;

    #[test]
    fn blocks_have_parents_and_depths_in_bounded_batches() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/easyprofiler/small_v210.prof"
        );
        let bytes = std::fs::read(path).unwrap();
        let source = Source::file(path.as_ref(), &bytes);
        let tables = TableReader::open(&source).unwrap();
        let options = ScanOptions::new().batch_rows(7);
        let mut depths = Vec::new();
        for batch in tables.batches(source, "blocks", &options).unwrap() {
            let batch = batch.unwrap();
            assert!((1..=7).contains(&batch.num_rows()));
            assert_eq!(batch.schema(), Blocks::schema());
            let depth = batch.column_by_name("depth").unwrap();
            depths.extend(depth.as_primitive::<UInt32Type>().values().iter().copied());
        }
        assert!(
            depths.contains(&0) && depths.iter().any(|&d| d > 0),
            "{depths:?}"
        );
        for def in SET.tables() {
            for batch in tables.batches(source, def.name, &options).unwrap() {
                assert_eq!(batch.unwrap().schema(), def.schema(), "{}", def.name);
            }
        }
        let damaged = &bytes[..bytes.len() / 2];
        let source = Source::file(path.as_ref(), damaged);
        let refused = TableReader::open(&source).and_then(|t| {
            t.batches(source, "blocks", &options)?
                .collect::<Result<Vec<_>, _>>()
        });
        let err = refused.err().unwrap();
        assert!(err.to_string().contains("easyprofiler: "), "{err}");
    }
}
