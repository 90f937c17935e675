//! Sets of tables, named by a string, and what reads them.

use profcodec_common::Source;

use crate::{Batches, Error, ScanOptions, TableDef};

/// A set of tables: one per format (`nytprof`), plus the profile model's (`profile`). Its name
/// is the SQL schema and the Parquet export's top folder; its tables are in order.
#[derive(Debug, Clone, Copy)]
pub struct TableSet {
    name: &'static str,
    tables: &'static [TableDef],
}

impl TableSet {
    /// The set called `name` with `tables`, in order.
    pub const fn new(name: &'static str, tables: &'static [TableDef]) -> Self {
        TableSet { name, tables }
    }

    /// The set's name: the SQL schema and the export's top folder.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The set's tables, in order.
    pub fn tables(self) -> &'static [TableDef] {
        self.tables
    }

    /// The table called `name`, or [`Error::UnknownTable`] listing the set's tables.
    pub fn table(self, name: &str) -> Result<&'static TableDef, Error> {
        self.tables
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| Error::UnknownTable {
                set: self.name,
                table: name.to_owned(),
                known: self
                    .tables
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// Two sets are the same set when they have the same name.
impl PartialEq for TableSet {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for TableSet {}

impl std::hash::Hash for TableSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl std::fmt::Display for TableSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Anything that yields the tables of one set.
pub trait Tables: std::fmt::Debug + Send + Sync {
    /// The set: its name and its tables.
    fn set(&self) -> TableSet;

    /// The record batches of table `name` of the set, read as they are consumed.
    fn batches(&self, name: &str, options: &ScanOptions) -> Result<Batches<'_>, Error>;

    /// Whether what was read is the input's: an error when one of its files shrank while it
    /// was read (a profiler rewriting it), so that the tables read zeros in place of what was
    /// cut. A caller checks it once it has read the batches, and reports this error in place
    /// of its result.
    fn check_intact(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// A format's tables of one input, read through the [`Source`] the input was opened as: what
/// the format keeps between reads (checked headers, an index, a model made on first use) is
/// here; the input's bytes and files are the `source` each read is given. The opener of the
/// input (the umbrella `profcodec`) keeps the source alive and makes a [`Tables`] of the two.
pub trait SourceTables: std::fmt::Debug + Send + Sync {
    /// The set: its name and its tables.
    fn set(&self) -> TableSet;

    /// The record batches of table `name` of the input `source`, which must be the input these
    /// tables were opened from, read as they are consumed.
    fn batches<'a>(
        &'a self,
        source: Source<'a>,
        name: &str,
        options: &ScanOptions,
    ) -> Result<Batches<'a>, Error>;

    /// The rows of every table of the input `source`, in the set's order, each table read
    /// through to its end (what `export --dry-run` counts, and a check that every table reads).
    /// A batch holds at most `options.batch_rows` rows, in its table's schema.
    fn row_counts(&self, source: Source<'_>, options: &ScanOptions) -> Result<Vec<usize>, Error> {
        self.set()
            .tables()
            .iter()
            .map(|def| {
                let mut rows = 0;
                for batch in self.batches(source, def.name, options)? {
                    let batch = batch?;
                    debug_assert!(
                        batch.num_rows() <= options.batch_rows.max(1),
                        "{}",
                        def.name
                    );
                    debug_assert_eq!(batch.schema(), def.schema(), "{}", def.name);
                    rows += batch.num_rows();
                }
                Ok(rows)
            })
            .collect()
    }
}
