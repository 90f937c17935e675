//! SQL over the tables of any inputs (feature `sql`), in an embedded DataFusion session.
//!
//! [`Session::new`] registers, for every table of every set its inputs have, one streaming
//! table with one partition per input: `<set>.<table>` (`SELECT * FROM nytprof.lines`), and the
//! bare `<table>` as well where no other set of the inputs has a table of that name. Every table
//! gets an `input` column (the input's position, from 0) after its own, as in the Parquet
//! export; `inputs` lists the inputs. A table is read from its input only when a query scans
//! it, in a blocking task that runs a few batches ahead of the query (and stops when the query
//! has what it needs, after a `LIMIT`), so memory stays bounded whatever the inputs' sizes.
//!
//! `values` is an SQL keyword: name the tables of that name with their set
//! (`hpctoolkit.values`) or in double quotes.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider};
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;

use crate::{Error, InputTables, ScanOptions, TableDef, TableSet, Tables};

/// The DataFusion this module is built on (its `arrow` re-export writes results as CSV, JSON or
/// a table).
pub use datafusion;

/// Batches a scan runs ahead of the query.
const AHEAD: usize = 2;

/// A DataFusion session with the tables of its inputs registered, and the runtime it runs on.
pub struct Session {
    runtime: tokio::runtime::Runtime,
    context: SessionContext,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `inputs` (numbered from 0 in order), reading them with `options`.
    pub fn new(inputs: &[InputTables], options: &ScanOptions) -> Result<Session, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io(std::path::Path::new("the query runtime"), e))?;
        let config = SessionConfig::new()
            .with_batch_size(options.batch_rows)
            .with_information_schema(true);
        let context = SessionContext::new_with_config(config);
        // (set, table) -> one partition per input that has it.
        let mut tables: BTreeMap<(TableSet, &'static str), Vec<Arc<dyn PartitionStream>>> =
            BTreeMap::new();
        for (k, input) in inputs.iter().enumerate() {
            for set in input.sets() {
                for def in set.set().tables() {
                    tables
                        .entry((set.set(), def.name))
                        .or_default()
                        .push(Arc::new(Scan::new(
                            Arc::clone(set),
                            def,
                            k as u32,
                            *options,
                        )));
                }
            }
        }
        let catalog = context
            .catalog("datafusion")
            .ok_or_else(|| DataFusionError::Internal("no default catalog".to_owned()))?;
        let mut schemas: BTreeMap<TableSet, Arc<MemorySchemaProvider>> = BTreeMap::new();
        let mut bare: BTreeMap<&'static str, Vec<TableSet>> = BTreeMap::new();
        for ((set, name), partitions) in tables {
            let schema = with_input(&set.table(name)?.schema());
            let table = Arc::new(StreamingTable::try_new(schema, partitions)?);
            let provider = schemas
                .entry(set)
                .or_insert_with(|| Arc::new(MemorySchemaProvider::new()));
            provider.register_table(name.to_owned(), Arc::clone(&table) as _)?;
            bare.entry(name).or_default().push(set);
        }
        for (set, provider) in &schemas {
            catalog.register_schema(set.name(), Arc::clone(provider) as _)?;
        }
        for (name, sets) in bare {
            if let [set] = sets.as_slice() {
                let table = schemas[set].table(name);
                if let Some(table) = runtime.block_on(table)? {
                    context.register_table(name, table)?;
                }
            }
        }
        context.register_batch("inputs", crate::inputs::batch(inputs)?)?;
        Ok(Session { runtime, context })
    }

    /// The DataFusion session, for anything beyond [`Session::query`].
    pub fn context(&self) -> &SessionContext {
        &self.context
    }

    /// Runs `sql` and returns its rows as a stream of batches, read as they are consumed.
    pub fn query(&self, sql: &str) -> Result<QueryRows<'_>, Error> {
        let stream = self.runtime.block_on(async {
            let frame = self.context.sql(sql).await?;
            frame.execute_stream().await
        })?;
        Ok(QueryRows {
            runtime: &self.runtime,
            schema: stream.schema(),
            stream,
        })
    }
}

/// The rows of a query, as record batches.
pub struct QueryRows<'s> {
    runtime: &'s tokio::runtime::Runtime,
    schema: SchemaRef,
    stream: SendableRecordBatchStream,
}

impl std::fmt::Debug for QueryRows<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryRows")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl QueryRows<'_> {
    /// The result's schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

impl Iterator for QueryRows<'_> {
    type Item = Result<RecordBatch, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime
            .block_on(self.stream.next())
            .map(|r| r.map_err(Error::from))
    }
}

/// `schema` with the `input` column after its own.
fn with_input(schema: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<Arc<Field>> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(
        Field::new("input", DataType::UInt32, false).with_metadata(crate::table::description(
            "The input's position, from 0 (`inputs.input`).",
        )),
    ));
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// One input's partition of a table: read in a blocking task when the query scans it.
struct Scan {
    tables: Arc<dyn Tables>,
    name: &'static str,
    schema: SchemaRef,
    input: u32,
    options: ScanOptions,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("set", &self.tables.set())
            .field("table", &self.name)
            .field("input", &self.input)
            .finish()
    }
}

impl Scan {
    fn new(tables: Arc<dyn Tables>, def: &TableDef, input: u32, options: ScanOptions) -> Self {
        Scan {
            tables,
            name: def.name,
            schema: with_input(&def.schema()),
            input,
            options,
        }
    }
}

impl PartitionStream for Scan {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStream::builder(Arc::clone(&self.schema), AHEAD);
        let tx = builder.tx();
        let tables = Arc::clone(&self.tables);
        let (name, schema, input, options) = (
            self.name,
            Arc::clone(&self.schema),
            self.input,
            self.options,
        );
        builder.spawn_blocking(move || {
            let external = |e: Error| DataFusionError::External(Box::new(e));
            for batch in tables.batches(name, &options).map_err(external)? {
                let batch = batch.map_err(external)?;
                let rows = batch.num_rows();
                let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
                columns.push(Arc::new(UInt32Array::from(vec![input; rows])));
                let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
                // The query stopped reading (a LIMIT reached, an error elsewhere): stop too.
                if tx.blocking_send(Ok(batch)).is_err() {
                    break;
                }
            }
            Ok(())
        });
        builder.build()
    }
}
