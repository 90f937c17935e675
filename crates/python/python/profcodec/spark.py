"""Profiles on a Spark cluster: the data source ``profcodec`` of Spark 4's Python Data Source API
(``pyspark.sql.datasource``), which decodes raw profiles on the executors.

>>> from profcodec.spark import register                          # doctest: +SKIP
>>> register(spark)                                                # doctest: +SKIP
>>> df = (spark.read.format("profcodec")                           # doctest: +SKIP
...       .option("table", "hpctoolkit.values")
...       .load("/shared/runs/run-*/"))

- The driver plans without reading a profile: the schema is the table's declaration
  (``profcodec._profcodec.table_schema``), and the paths given to ``load`` (files, folders, globs, a
  list of them) become inputs as ``profcodec.sql`` takes them (a database,
  measurement folder or session is one input; a folder of profiles its profiles). Each input is
  read whole by one task; small inputs are grouped into partitions of about ``partitionBytes``
  (128 MiB by default) of files.
- The executors decode with the Rust package (``Input.table``) and hand Spark Arrow record
  batches, with no Python per row. The wheel must be installed in the executors' Python, and
  the paths must name the same files on every executor (a shared file system): the driver
  passes paths, not bytes.
- A format's table (``nytprof.lines``) has rows of the inputs of that format only; inputs of
  other formats among the paths give none, as in ``profcodec sql``. The ``profile`` tables
  have rows of every input.
- Every row has an ``input`` column: the path of the input it came from (the Parquet export's
  ``input`` is the input's number; its ``inputs`` table maps numbers to these paths).
- Options: ``table`` (required: a table as ``profcodec sql`` names it, ``set.table``);
  ``mode``: ``FAILFAST`` (the default: the first bad input fails the query with an error that
  names it), ``PERMISSIVE`` (a bad input becomes one row whose column ``_corrupt_input``, added
  to the schema in this mode only, holds the reason, its other columns null but ``input``) or
  ``DROPMALFORMED`` (a bad input is skipped and each is logged, with a count per partition, in
  the executor's log); ``partitionBytes``; ``binaryPath`` (folders, separated by ``:``, searched
  first for hpcrun's binaries, as ``Input.profile(binary_path=...)``).
- Columns: the Arrow types Spark has no type for are widened as Spark's Parquet reader widens
  them: ``uint8`` to ``short``, ``uint16`` to ``int``, ``uint32`` to ``bigint``, ``uint64`` to
  ``decimal(20,0)``. Every column is nullable. The Python Data Source API of Spark 4 passes a
  reader no column list, so every column of the table is decoded, selected or not.
"""

from __future__ import annotations

import glob
import json
import logging
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

from . import _profcodec
from ._errors import Error

__all__ = ["ProfcodecDataSource", "register"]

#: The name ``spark.read.format`` takes.
FORMAT = "profcodec"
#: The column a bad input's reason is in, in mode ``PERMISSIVE``.
CORRUPT_INPUT = "_corrupt_input"
#: The modes of Spark's file readers, the first the default.
MODES = ("FAILFAST", "PERMISSIVE", "DROPMALFORMED")
#: The bytes of input files a partition holds before the next input starts a new one.
DEFAULT_PARTITION_BYTES = 128 << 20

log = logging.getLogger("profcodec.spark")


def register(spark: Any) -> None:
    """Registers the data source ``profcodec`` with the session ``spark``."""
    spark.dataSource.register(ProfcodecDataSource)


def _spark_type(arrow_type: Any) -> DataType:
    """The Spark type of a column of Arrow type ``arrow_type``: the same, or the smallest that
    holds every value where Spark has no unsigned integers (as Spark reads them from Parquet)."""
    import pyarrow as pa

    t = pa.types
    if t.is_boolean(arrow_type):
        return BooleanType()
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return StringType()
    if t.is_float64(arrow_type):
        return DoubleType()
    if t.is_float32(arrow_type):
        return FloatType()
    widened = {
        pa.int8(): ByteType(),
        pa.int16(): ShortType(),
        pa.int32(): IntegerType(),
        pa.int64(): LongType(),
        pa.uint8(): ShortType(),
        pa.uint16(): IntegerType(),
        pa.uint32(): LongType(),
        pa.uint64(): DecimalType(20, 0),
    }
    if arrow_type in widened:
        return widened[arrow_type]
    raise Error(f"the Arrow type {arrow_type} has no Spark type in profcodec's data source")


def spark_schema(table: str, mode: str = "FAILFAST") -> StructType:
    """The Spark schema of ``table`` (``set.table``) as the data source reads it in ``mode``:
    its declared columns, then ``input`` (the input's path), then in ``PERMISSIVE`` mode
    ``_corrupt_input``."""
    fields = [
        StructField(f.name, _spark_type(f.type), True) for f in _profcodec.table_schema(table)
    ]
    fields.append(StructField("input", StringType(), True))
    if mode == "PERMISSIVE":
        fields.append(StructField(CORRUPT_INPUT, StringType(), True))
    return StructType(fields)


def _mode(options: Dict[str, str]) -> str:
    mode = options.get("mode", MODES[0]).upper()
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {options['mode']!r}")
    return mode


def _paths(options: Dict[str, str]) -> List[str]:
    """The paths given to ``load``: one (``path``) or several (``paths``, a JSON list)."""
    paths: List[str] = []
    if options.get("paths"):
        paths.extend(json.loads(options["paths"]))
    if options.get("path"):
        paths.append(options["path"])
    if not paths:
        raise ValueError("load() needs the path of the profiles: files, folders or globs")
    return paths


def _local(path: str) -> str:
    """``path`` on the file system every executor sees (``file:`` URLs accepted)."""
    if path.startswith("file://"):
        path = path[len("file://") :]
    elif path.startswith("file:"):
        path = path[len("file:") :]
    elif "://" in path:
        raise ValueError(
            f"{path}: profcodec's data source reads files by path; give a path that every "
            "executor sees (a shared or local file system), not a URL"
        )
    return os.path.abspath(path)


def expand(paths: Sequence[str]) -> List[str]:
    """The inputs ``paths`` stand for, as absolute paths: globs matched (in name order), then
    folders of profiles expanded as ``profcodec.sql`` and ``merged_profile`` expand them."""
    given: List[str] = []
    for path in map(_local, paths):
        if glob.has_magic(path):
            matches = sorted(glob.glob(path))
            if not matches:
                raise FileNotFoundError(f"{path}: no file or folder matches")
            given.extend(m.rstrip(os.sep) for m in matches)
        else:
            given.append(path)
    return [os.fspath(p) for p in _profcodec.expand_inputs(given)]


def _size(path: str) -> int:
    """The bytes of the input at ``path`` (a folder's files summed), from the file system."""
    try:
        if not os.path.isdir(path):
            return os.stat(path).st_size
        total = 0
        for folder, _, files in os.walk(path):
            for name in files:
                try:
                    total += os.stat(os.path.join(folder, name)).st_size
                except OSError:
                    pass
        return total
    except OSError:
        # Reading it says what is wrong with it, in the mode asked for.
        return 0


class ProfcodecPartition(InputPartition):
    """Inputs read by one task, in order."""

    def __init__(self, inputs: List[str]) -> None:
        super().__init__(inputs)
        self.inputs = inputs


def partitions(inputs: Sequence[str], target: int) -> List[ProfcodecPartition]:
    """``inputs`` grouped in order into partitions of at most ``target`` bytes, an input larger
    than that alone in its own."""
    groups: List[List[str]] = []
    filled = 0
    for path in inputs:
        size = _size(path)
        if not groups or filled + size > target:
            groups.append([])
            filled = 0
        groups[-1].append(path)
        filled += size
    return [ProfcodecPartition(g) for g in groups]


class ProfcodecDataSource(DataSource):
    """``spark.read.format("profcodec")``: a table of profcodec's (option ``table``) read from
    raw profiles on the executors. See the module's documentation for the options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def _table(self) -> str:
        table = self.options.get("table")
        if not table:
            raise ValueError(
                "option 'table' names the table to read, as profcodec sql names it: "
                + ", ".join(_profcodec.table_names())
            )
        return table

    def schema(self) -> StructType:
        return spark_schema(self._table(), _mode(self.options))

    def reader(self, schema: StructType) -> "ProfcodecReader":
        options = self.options
        binary_path = [p for p in options.get("binaryPath", "").split(os.pathsep) if p]
        target = int(options.get("partitionBytes", DEFAULT_PARTITION_BYTES))
        if target <= 0:
            raise ValueError(f"partitionBytes must be a positive number of bytes, not {target}")
        return ProfcodecReader(
            table=self._table(),
            schema=schema,
            mode=_mode(options),
            inputs=expand(_paths(options)),
            partition_bytes=target,
            binary_path=binary_path,
        )


class ProfcodecReader(DataSourceReader):
    """Plans the partitions on the driver and decodes them on the executors."""

    def __init__(
        self,
        table: str,
        schema: StructType,
        mode: str,
        inputs: List[str],
        partition_bytes: int,
        binary_path: List[str],
    ) -> None:
        self.table = table
        self.schema = schema
        self.mode = mode
        self.inputs = inputs
        self.partition_bytes = partition_bytes
        self.binary_path = binary_path

    def partitions(self) -> Sequence[InputPartition]:
        return partitions(self.inputs, self.partition_bytes)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        # Exactly the Arrow schema Spark checks each batch against.
        target = to_arrow_schema(self.schema, timezone="UTC")
        dropped = 0
        inputs: List[str] = partition.inputs  # type: ignore[attr-defined]
        table_set = self.table.split(".", 1)[0]
        for path in inputs:
            try:
                opened = _profcodec.open(path)
                # An input of another format has no rows of a format's table, as in
                # `profcodec sql`, which reads each table from the inputs that have it.
                if table_set != "profile" and opened.codec != table_set:
                    continue
                # Read whole before any row is handed on, so that a bad input gives no rows in
                # PERMISSIVE and DROPMALFORMED modes, not the rows before its damage.
                decoded = opened.table(self.table, binary_path=self.binary_path)
            except Error as e:
                reason = str(e) if path in str(e) else f"{path}: {e}"
                if self.mode == "FAILFAST":
                    raise type(e)(reason, e.offset, getattr(e, "errno", None)) from e
                if self.mode == "DROPMALFORMED":
                    dropped += 1
                    log.warning("profcodec: dropped a malformed input: %s", reason)
                    continue
                yield _corrupt_row(pa, target, path, reason)
                continue
            yield from _batches(pa, target, decoded, path)
        if dropped:
            log.warning(
                "profcodec: dropped %d malformed of the %d inputs of this partition of %s",
                dropped,
                len(inputs),
                self.table,
            )


def _batches(pa: Any, target: Any, decoded: Any, path: str) -> Iterator[Any]:
    """The record batches of ``decoded`` (a pyarrow Table of one input) in the schema
    ``target``: its columns cast to Spark's types, ``input`` = ``path``."""
    rows = decoded.num_rows
    if rows == 0:
        return
    columns = []
    for field in target:
        if field.name == "input":
            column = pa.nulls(rows, pa.string()).fill_null(path)
        elif field.name == CORRUPT_INPUT:
            column = pa.nulls(rows, pa.string())
        else:
            column = decoded.column(field.name).cast(field.type)
        columns.append(column)
    yield from pa.Table.from_arrays(columns, schema=target).to_batches()


def _corrupt_row(pa: Any, target: Any, path: str, reason: str) -> Any:
    """The one row that stands for a bad input in mode PERMISSIVE."""
    columns = []
    for field in target:
        value: Optional[str] = None
        if field.name == "input":
            value = path
        elif field.name == CORRUPT_INPUT:
            value = reason
        columns.append(pa.array([value], field.type))
    return pa.RecordBatch.from_arrays(columns, schema=target)
