//! How a table is declared once (name, columns, types, meanings) and turned into bounded record
//! batches.
//!
//! [`table!`](crate::table!) generates, from one list of columns, the documented marker type of a
//! table (its rustdoc lists every column), its Arrow schema (each field carrying its meaning as
//! the `description` metadata, which Parquet files keep) and a row builder. [`batches`] drains an
//! iterator of rows into record batches of at most [`ScanOptions::batch_rows`] rows, so that no
//! table is ever held whole; [`filled_batches`] does the same for a table whose columns are
//! filled in bulk ([`columns!`](crate::columns!)).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::Error;

/// How tables are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanOptions {
    /// The most rows a record batch holds (at least 1).
    pub batch_rows: usize,
}

impl ScanOptions {
    /// The default: batches of 65536 rows.
    pub fn new() -> Self {
        ScanOptions { batch_rows: 65536 }
    }

    /// These options with batches of at most `rows` rows (0 is taken as 1).
    pub fn batch_rows(mut self, rows: usize) -> Self {
        self.batch_rows = rows.max(1);
        self
    }
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions::new()
    }
}

/// A table's name and schema, as listed by [`TableSet::tables`](crate::TableSet::tables).
#[derive(Debug, Clone, Copy)]
pub struct TableDef {
    /// The table's name within its set (`values`, `lines`).
    pub name: &'static str,
    /// One line on what a row is.
    pub description: &'static str,
    schema: fn() -> SchemaRef,
}

impl TableDef {
    /// The table called `name`, whose rows are what `description` says, with the schema
    /// `schema` returns ([`table!`](crate::table!) makes each table's).
    pub const fn new(
        name: &'static str,
        description: &'static str,
        schema: fn() -> SchemaRef,
    ) -> Self {
        TableDef {
            name,
            description,
            schema,
        }
    }

    /// The table's Arrow schema.
    pub fn schema(&self) -> SchemaRef {
        (self.schema)()
    }
}

/// A stream of record batches of one table; it ends after the first error.
pub type Batches<'a> = Box<dyn Iterator<Item = Result<RecordBatch, Error>> + 'a>;

/// The row builder of a table (made by [`table!`](crate::table!)).
pub trait Rows {
    /// Rows appended since the last [`Rows::finish`].
    fn len(&self) -> usize;
    /// Whether no row was appended since the last [`Rows::finish`].
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The appended rows as a record batch; the builder is empty afterwards.
    fn finish(&mut self) -> Result<RecordBatch, Error>;
}

/// The batches of a table whose rows are `items`, each appended to the builder by `append`: at
/// most `options.batch_rows` rows a batch, no empty batch, the first error ending the stream.
pub fn batches<'a, R, T>(
    mut rows: R,
    items: impl Iterator<Item = Result<T, Error>> + 'a,
    options: &ScanOptions,
    mut append: impl FnMut(&mut R, T) + 'a,
) -> Batches<'a>
where
    R: Rows + 'a,
{
    let limit = options.batch_rows.max(1);
    let mut items = items.fuse();
    let mut failed = false;
    Box::new(std::iter::from_fn(move || {
        if failed {
            return None;
        }
        for item in items.by_ref() {
            match item {
                Ok(row) => append(&mut rows, row),
                Err(e) => {
                    failed = true;
                    // The rows before the error are dropped with it: a table is whole or an error.
                    return Some(Err(e));
                }
            }
            if rows.len() >= limit {
                return Some(rows.finish());
            }
        }
        (!rows.is_empty()).then(|| rows.finish())
    }))
}

/// The batches of a table made whole by `fill`, which appends at most `limit` rows
/// (`options.batch_rows`) straight into the columns and returns the batch, or `None` when the
/// table is done: for the large tables whose rows sit in the mapped file as runs of fixed-size
/// records, copied a run at a time rather than appended row by row. The first error ends the
/// stream.
pub fn filled_batches<'a>(
    options: &ScanOptions,
    mut fill: impl FnMut(usize) -> Result<Option<RecordBatch>, Error> + 'a,
) -> Batches<'a> {
    let limit = options.batch_rows.max(1);
    let mut done = false;
    Box::new(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let batch = fill(limit).transpose();
        done = !matches!(batch, Some(Ok(_)));
        batch
    }))
}

/// The columns of a batch of a table filled in bulk ([`filled_batches`]), made by
/// [`columns!`](crate::columns!).
pub trait Columns {
    /// The table's name.
    const TABLE: &'static str;
    /// The table's schema.
    fn schema() -> SchemaRef;
    /// Empty columns with room for `rows` rows.
    fn with_capacity(rows: usize) -> Self;
    /// The rows filled.
    fn len(&self) -> usize;
    /// Whether no row is filled.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The columns as arrays, in the schema's order.
    fn into_arrays(self) -> Vec<arrow_array::ArrayRef>;
}

/// A non-null column of numbers filled in bulk (`extend`, `resize`), handed to Arrow without a
/// copy.
#[derive(Debug)]
pub struct Column<T: arrow_array::ArrowPrimitiveType>(pub Vec<T::Native>);

/// A column being filled in bulk: a [`Column`] of numbers, or a bit buffer of booleans.
pub trait ColumnBuffer {
    /// An empty column with room for `rows` rows.
    fn with_capacity(rows: usize) -> Self;
    /// The rows filled.
    fn len(&self) -> usize;
    /// Whether no row is filled.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The column as an Arrow array.
    fn into_array(self) -> arrow_array::ArrayRef;
}

impl<T: arrow_array::ArrowPrimitiveType> ColumnBuffer for Column<T> {
    fn with_capacity(rows: usize) -> Self {
        Column(Vec::with_capacity(rows))
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn into_array(self) -> arrow_array::ArrayRef {
        Arc::new(arrow_array::PrimitiveArray::<T>::new(self.0.into(), None))
    }
}

impl ColumnBuffer for arrow_array::builder::BooleanBufferBuilder {
    fn with_capacity(rows: usize) -> Self {
        arrow_array::builder::BooleanBufferBuilder::new(rows)
    }

    fn len(&self) -> usize {
        arrow_array::builder::BooleanBufferBuilder::len(self)
    }

    fn into_array(mut self) -> arrow_array::ArrayRef {
        Arc::new(arrow_array::BooleanArray::new(self.finish(), None))
    }
}

/// A record batch of table `table` from its columns.
pub fn record_batch(
    table: &'static str,
    schema: SchemaRef,
    columns: Vec<arrow_array::ArrayRef>,
) -> Result<RecordBatch, Error> {
    RecordBatch::try_new(schema, columns).map_err(|source| Error::Arrow { table, source })
}

/// The metadata of a field: its meaning, under the key `description`.
pub fn description(text: &str) -> HashMap<String, String> {
    HashMap::from([("description".to_owned(), text.to_owned())])
}

/// A schema of `fields`, shared.
pub fn schema_ref(fields: Vec<arrow_schema::Field>) -> SchemaRef {
    Arc::new(arrow_schema::Schema::new(fields))
}

/// Declares the [`Columns`] of a table filled in bulk: `columns!(/// docs  Name for Marker {
/// column: Buffer, ... })`, one [`ColumnBuffer`] per column of the marker's schema, in order.
#[macro_export]
macro_rules! columns {
    (
        $(#[doc = $doc:literal])*
        $name:ident for $table:ident { $( $col:ident : $buf:ty ),+ $(,)? }
    ) => {
        $(#[doc = $doc])*
        struct $name {
            $( $col: $buf, )+
        }

        impl $crate::Columns for $name {
            const TABLE: &'static str = $table::NAME;

            fn schema() -> $crate::arrow_schema::SchemaRef {
                $table::schema()
            }

            fn with_capacity(rows: usize) -> Self {
                $name { $( $col: $crate::ColumnBuffer::with_capacity(rows), )+ }
            }

            fn len(&self) -> usize {
                [$( $crate::ColumnBuffer::len(&self.$col) ),+][0]
            }

            fn into_arrays(self) -> Vec<$crate::arrow_array::ArrayRef> {
                vec![$( $crate::ColumnBuffer::into_array(self.$col) ),+]
            }
        }
    };
}

/// The Arrow builder of a column type.
#[doc(hidden)]
#[macro_export]
macro_rules! __column_builder {
    (UInt8) => {
        $crate::arrow_array::builder::UInt8Builder
    };
    (UInt16) => {
        $crate::arrow_array::builder::UInt16Builder
    };
    (UInt32) => {
        $crate::arrow_array::builder::UInt32Builder
    };
    (UInt64) => {
        $crate::arrow_array::builder::UInt64Builder
    };
    (Int32) => {
        $crate::arrow_array::builder::Int32Builder
    };
    (Int64) => {
        $crate::arrow_array::builder::Int64Builder
    };
    (Float64) => {
        $crate::arrow_array::builder::Float64Builder
    };
    (Boolean) => {
        $crate::arrow_array::builder::BooleanBuilder
    };
    (Utf8) => {
        $crate::arrow_array::builder::StringBuilder
    };
}

/// Whether a column is declared `nullable`.
#[doc(hidden)]
#[macro_export]
macro_rules! __nullable {
    () => {
        false
    };
    (nullable) => {
        true
    };
}

/// How a column type reads in the docs.
#[doc(hidden)]
#[macro_export]
macro_rules! __type_doc {
    (UInt8) => {
        "UInt8"
    };
    (UInt16) => {
        "UInt16"
    };
    (UInt32) => {
        "UInt32"
    };
    (UInt64) => {
        "UInt64"
    };
    (Int32) => {
        "Int32"
    };
    (Int64) => {
        "Int64"
    };
    (Float64) => {
        "Float64"
    };
    (Boolean) => {
        "Boolean"
    };
    (Utf8) => {
        "Utf8"
    };
}

/// How nullability reads in the docs.
#[doc(hidden)]
#[macro_export]
macro_rules! __null_doc {
    () => {
        ""
    };
    (nullable) => {
        ", nullable"
    };
}

/// Declares a table: `table!(/// docs  Marker, RowBuilder, "name" { column: Type [nullable] =>
/// "meaning", ... })`. The marker type is public and documents the columns; its `DEF` is the
/// table's [`TableDef`]; the row builder is crate-private with one Arrow builder per column
/// (`UInt8`, `UInt16`, `UInt32`, `UInt64`, `Int32`, `Int64`, `Float64`, `Boolean`, `Utf8`).
/// `table!(/// docs  Marker, "name" { ... })`, without a row builder, is for a table whose
/// batches are filled column by column ([`filled_batches`], [`columns!`](crate::columns!)).
#[macro_export]
macro_rules! table {
    (
        $(#[doc = $doc:literal])*
        $name:ident, $rows:ident, $table:literal { $($cols:tt)+ }
    ) => {
        $crate::table!(@marker $(#[doc = $doc])* $name, $table { $($cols)+ });
        $crate::table!(@rows $name, $rows, $table { $($cols)+ });
    };
    (
        $(#[doc = $doc:literal])*
        $name:ident, $table:literal { $($cols:tt)+ }
    ) => {
        $crate::table!(@marker $(#[doc = $doc])* $name, $table { $($cols)+ });
    };
    (
        @marker
        $(#[doc = $doc:literal])*
        $name:ident, $table:literal {
            $( $col:ident : $ty:ident $($null:ident)? => $cdoc:literal ),+ $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        ///
        /// | column | type | meaning |
        /// |---|---|---|
        $(#[doc = concat!("| `", stringify!($col), "` | ", $crate::__type_doc!($ty), $crate::__null_doc!($($null)?), " | ", $cdoc, " |")])+
        #[derive(Debug, Clone, Copy)]
        pub struct $name;

        impl $name {
            /// The table's name within its set.
            pub const NAME: &'static str = $table;
            /// The table's name, one-line description and schema.
            pub const DEF: $crate::TableDef = $crate::TableDef::new(
                $table,
                concat!($($doc, "\n"),*),
                $name::schema,
            );

            /// The table's Arrow schema (every field's meaning is its `description` metadata).
            pub fn schema() -> $crate::arrow_schema::SchemaRef {
                static SCHEMA: std::sync::OnceLock<$crate::arrow_schema::SchemaRef> =
                    std::sync::OnceLock::new();
                SCHEMA
                    .get_or_init(|| {
                        $crate::schema_ref(vec![$(
                            $crate::arrow_schema::Field::new(
                                stringify!($col),
                                $crate::arrow_schema::DataType::$ty,
                                $crate::__nullable!($($null)?),
                            )
                            .with_metadata($crate::description($cdoc))
                        ),+])
                    })
                    .clone()
            }
        }
    };
    (
        @rows
        $name:ident, $rows:ident, $table:literal {
            $( $col:ident : $ty:ident $($null:ident)? => $cdoc:literal ),+ $(,)?
        }
    ) => {
        /// The row builder of the table of the same name.
        pub(crate) struct $rows {
            $( pub(crate) $col: $crate::__column_builder!($ty), )+
        }

        impl $rows {
            pub(crate) fn new() -> Self {
                $rows { $( $col: <$crate::__column_builder!($ty)>::new(), )+ }
            }
        }

        impl $crate::Rows for $rows {
            fn len(&self) -> usize {
                [$( $crate::arrow_array::builder::ArrayBuilder::len(&self.$col) ),+][0]
            }

            fn finish(&mut self) -> Result<$crate::arrow_array::RecordBatch, $crate::Error> {
                let columns: Vec<$crate::arrow_array::ArrayRef> = vec![$(
                    std::sync::Arc::new(self.$col.finish())
                ),+];
                $crate::record_batch($table, $name::schema(), columns)
            }
        }
    };
}
