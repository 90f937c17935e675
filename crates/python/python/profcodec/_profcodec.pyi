"""Type stubs of the native module profcodec._profcodec (the Rust half of profcodec)."""

import os
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
import pandas
import pyarrow

_Path = Union[str, "os.PathLike[str]"]
_Target = Literal["folded", "callgrind", "speedscope", "pprof", "firefox"]
_InputTarget = Literal[
    "folded", "callgrind", "speedscope", "pprof", "firefox", "perfetto", "chrome"
]
_Paths = Union[_Path, Sequence[_Path]]

def open(path: _Path) -> Input:
    """Opens a profile file or folder and detects its format.

    Raises profcodec.FileError when the path cannot be read and profcodec.UnknownFormatError
    when it is no profile profcodec knows.
    """

class Input:
    """A file or folder opened by :func:`open`."""

    @property
    def path(self) -> Path: ...
    @property
    def format(self) -> str:
        """The detected format, as ``profcodec info`` names it ("HPCToolkit database")."""
    @property
    def codec(self) -> str:
        """"hpctoolkit", "hpcrun", "nytprof", "easyprofiler" or "statprofiler"."""
    @property
    def version(self) -> str:
        """The format version as the file states it."""
    def info(self) -> Dict[str, Any]:
        """What ``profcodec info --json`` prints: ``format``, ``version``, ``details``."""
    def validate(self, *, allow_trailing: bool = False) -> List[Dict[str, Any]]:
        """Decodes and checks everything, as ``profcodec validate``: the findings that are not
        damage (``finding``, ``offset``, ``size``, ``message``). Raises InvalidDataError on
        damage, and on trailing data unless ``allow_trailing``."""
    def dump(
        self,
        path: Optional[_Path] = None,
        *,
        format: Literal["json", "ndjson"] = "json",
        pretty: bool = False,
        partial: bool = False,
        overwrite: bool = False,
    ) -> Optional[str]:
        """The full content as flat JSON records, as ``profcodec dump``: a str, or None after
        writing ``path`` atomically. ``partial=True`` ends a damaged input's dump with an
        ``error`` record instead of raising."""
    def records(self) -> List[Dict[str, Any]]:
        """The records of ``dump()`` as dicts, the header first."""
    def report(
        self,
        out: _Path,
        base: Optional[_Path] = None,
        *,
        overwrite: bool = False,
        metric: Optional[str] = None,
        min_width: float = 0.1,
        binary_path: Optional[Sequence[_Path]] = None,
        source_roots: Optional[Sequence[str]] = None,
        max_output: Optional[int] = None,
    ) -> None:
        """The HTML report ``profcodec report`` writes, into the folder ``out`` (compared
        with the profile at ``base``); ``binary_path`` as for ``profile()``. ``max_output``:
        the most bytes of the folder (``--max-output``; by default 100 times the input plus
        64 MiB); a report over it raises UnsupportedError and nothing is written. Source files are
        read only under the input's own folder and ``source_roots`` (folders, or ``FROM=TO``;
        ``--source-root``), never under /proc, /sys or /dev; a UserWarning per source file
        says where its text came from, or why the page has none."""
    def rewrite(
        self, out: _Path, to: Optional[str] = None, *, overwrite: bool = False
    ) -> Dict[str, List[str]]:
        """Decodes and encodes the input again at ``out`` (another version or format with
        ``to``), as ``profcodec rewrite``: ``dropped`` and ``copied``."""
    def profile(self, *, binary_path: Optional[Sequence[_Path]] = None) -> Profile:
        """The input in the format-neutral profile model; the binaries of hpcrun measurements
        searched in the folders of ``binary_path`` first (``--binary-path``), a UserWarning for
        each load module left unresolved."""
    @property
    def table_set(self) -> str:
        """The input's own table set: "hpctoolkit", "hpcrun", "nytprof", "easyprofiler" or
        "statprofiler"."""
    def table_names(self, set: Optional[str] = None) -> List[str]:
        """The tables of ``set``: the format's own when None, or "profile" (the model's)."""
    def table(
        self,
        name: str,
        set: Optional[str] = None,
        *,
        binary_path: Optional[Sequence[_Path]] = None,
    ) -> "pyarrow.Table":
        """One table ("values", or with its set: "profile.nodes") as a pyarrow Table, through
        the Arrow C stream interface; the "profile" tables name hpcrun frames as ``profile()``
        does with ``binary_path``. Needs pyarrow."""
    def tables(
        self, set: Optional[str] = None, *, binary_path: Optional[Sequence[_Path]] = None
    ) -> Dict[str, "pyarrow.Table"]:
        """Every table of ``set`` (the format's own when None, or "profile") by name, in the
        set's order. Needs pyarrow."""
    def to_pandas(
        self, set: Optional[str] = None, *, binary_path: Optional[Sequence[_Path]] = None
    ) -> Dict[str, "pandas.DataFrame"]:
        """Every table of ``set`` as a pandas DataFrame, by name. Needs pyarrow and pandas."""
    def arrow_stream(
        self,
        name: str,
        set: Optional[str] = None,
        *,
        binary_path: Optional[Sequence[_Path]] = None,
    ) -> ArrowStream:
        """One table as an object with ``__arrow_c_stream__`` (no pyarrow needed)."""
    def to_folded(
        self,
        path: Optional[_Path] = None,
        *,
        metric: Optional[str] = None,
        overwrite: bool = False,
        binary_path: Optional[Sequence[_Path]] = None,
    ) -> Optional[str]:
        """Folded stacks as ``profcodec convert --to folded`` writes them: a str, or None
        after writing ``path`` atomically. An existing file at ``path`` is replaced only
        with ``overwrite=True``; a folder, or the input itself, never."""
    def convert(
        self,
        to: _InputTarget,
        path: Optional[_Path] = None,
        *,
        metric: Optional[str] = None,
        overwrite: bool = False,
        max_output: Optional[int] = None,
        threads: Optional[Sequence[str]] = None,
        ranks: Optional[Sequence[int]] = None,
        from_ns: Optional[int] = None,
        until_ns: Optional[int] = None,
        depth: Optional[int] = None,
        binary_path: Optional[Sequence[_Path]] = None,
    ) -> Optional[bytes]:
        """The input as ``profcodec convert --to TO`` writes it (the timelines ``perfetto``
        and ``chrome`` with their filters): bytes, or None after writing ``path``
        atomically. ``binary_path`` as for ``profile()``, hpcrun timelines included."""
    def __fspath__(self) -> str: ...

class ArrowStream:
    """One table's record batches, for any Arrow consumer (the Arrow PyCapsule interface):
    ``pyarrow.table(stream)``, ``polars.from_arrow(stream)``, DuckDB."""

    @property
    def name(self) -> str:
        """The table with its set: "hpctoolkit.values"."""
    @property
    def num_rows(self) -> int: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """A PyCapsule named "arrow_array_stream" holding an ArrowArrayStream."""
    def __len__(self) -> int: ...

class Profile:
    """A profile in the format-neutral model."""

    @property
    def value_types(self) -> List[Dict[str, str]]:
        """Dicts with ``name``, ``unit`` and ``measured``."""
    @property
    def default_value_type(self) -> Optional[str]: ...
    @property
    def contexts(self) -> List[str]:
        """The contexts spelled out ("summary", "rank 3 thread 0")."""
    @property
    def node_count(self) -> int: ...
    @property
    def frame_count(self) -> int: ...
    def top(
        self,
        metric: Optional[str] = None,
        *,
        by: str = "self",
        group: str = "function",
        limit: Optional[int] = 20,
        thread: Union[int, str, Sequence[Union[int, str]], None] = None,
        rank: Union[int, Sequence[int], None] = None,
        process: Union[int, Sequence[int], None] = None,
        mean: bool = False,
        full_names: bool = False,
    ) -> Top:
        """The functions, lines ("line") or modules ("module") that cost the most;
        ``full_names``: ``Top.to_text()`` prints names whole (``--full-names``)."""
    def to_folded(
        self,
        path: Optional[_Path] = None,
        *,
        metric: Optional[str] = None,
        overwrite: bool = False,
    ) -> Optional[str]:
        """Folded stacks, frames named as the source tool names them: a str, or None after
        writing ``path`` atomically."""
    def convert(
        self,
        to: _Target,
        path: Optional[_Path] = None,
        *,
        metric: Optional[str] = None,
        overwrite: bool = False,
    ) -> Optional[bytes]:
        """The profile in a viewer's format: bytes, or None after writing ``path``
        atomically."""

class Top:
    """The answer of :meth:`Profile.top`."""

    @property
    def value_type(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def source(self) -> str:
        """"tree" or "flat"."""
    @property
    def contexts(self) -> int: ...
    @property
    def total_self(self) -> float: ...
    @property
    def total_inclusive(self) -> Optional[float]: ...
    @property
    def rows(self) -> List[Dict[str, Any]]:
        """Dicts with name, function, file, line, module, address, self, inclusive, calls."""
    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame."""
    def to_text(self, width: Optional[int] = None) -> str:
        """The table ``profcodec top`` prints, its lines cut to ``width`` characters when
        given (names shortened unless ``full_names``)."""
    def __len__(self) -> int: ...

class Diff:
    """The answer of :func:`diff`."""

    @property
    def value_type(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def base_total(self) -> Dict[str, Optional[float]]:
        """``self`` and ``inclusive``."""
    @property
    def new_total(self) -> Dict[str, Optional[float]]:
        """``self`` and ``inclusive``."""
    @property
    def rows(self) -> List[Dict[str, Any]]:
        """The rows of ``profcodec diff --json``."""
    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame."""
    def __len__(self) -> int: ...

def diff(
    base: Union[_Path, Profile],
    new: Union[_Path, Profile],
    metric: Optional[str] = None,
    *,
    by: str = "self",
    group: str = "function",
    limit: Optional[int] = 20,
    thread: Union[int, str, Sequence[Union[int, str]], None] = None,
    rank: Union[int, Sequence[int], None] = None,
    process: Union[int, Sequence[int], None] = None,
    mean: bool = False,
    min_change: Optional[Union[float, str]] = None,
    min_relative: Optional[Union[float, str]] = None,
    binary_path: Optional[Sequence[_Path]] = None,
) -> Diff:
    """What changed from ``base`` to ``new``, as ``profcodec diff`` compares them."""

def merge(
    inputs: Sequence[_Path], out: _Path, *, overwrite: bool = False
) -> Dict[str, Any]:
    """Many profiles of one program as one file of their format, as ``profcodec merge``
    writes it: ``{"inputs": n, "warnings": [...]}``."""

def prof(
    measurements: Sequence[_Path],
    out: _Path,
    *,
    jobs: Optional[int] = None,
    ignore_structs: bool = False,
    no_traces: bool = False,
    title: Optional[str] = None,
) -> Dict[str, Any]:
    """The HPCToolkit database of hpcrun measurements, written into the new folder ``out`` as
    ``profcodec prof`` writes it: ``{"path", "contexts", "threads", "traces"}``."""

def merged_profile(
    inputs: Sequence[_Path],
    *,
    jobs: Optional[int] = None,
    binary_path: Optional[Sequence[_Path]] = None,
) -> Profile:
    """Many inputs (files, folders) as one profile, decoded on ``jobs`` threads (every core by
    default) and merged in input order, as ``profcodec top A B ...`` reads them."""

def table_names() -> List[str]:
    """Every table this build declares, as ``set.table`` ("hpctoolkit.values",
    "profile.nodes"), set by set."""

def table_schema(name: str) -> "pyarrow.Schema":
    """The Arrow schema the table ``name`` (``set.table``) is declared with, read from no
    input. Needs pyarrow."""

def expand_inputs(paths: Sequence[_Path]) -> List[Path]:
    """The inputs ``paths`` stand for, as ``sql()`` and ``merged_profile()`` read them: a
    folder of profiles replaced by its profiles in name order (a UserWarning for each entry
    passed over); a file, database, measurement folder or session as it is."""

def sql(
    query: str,
    paths: _Paths,
    *,
    memory_limit: Optional[int] = 1 << 30,
    timeout: Optional[float] = 600.0,
    spill_limit: Optional[int] = 2 << 30,
) -> "pyarrow.Table":
    """A read-only SQL query over the inputs' tables, as ``profcodec sql`` runs it, cancelled
    after ``timeout`` seconds and stopped when it spills more than ``spill_limit`` bytes to the
    temporary folder (None: no limit). Needs pyarrow, and the package built with its ``sql``
    feature."""

def export_parquet(
    paths: _Paths,
    out: Optional[_Path] = None,
    *,
    compression: Literal["zstd", "snappy", "none"] = "zstd",
    tables: Optional[Sequence[str]] = None,
    overwrite: bool = False,
    threads: Optional[int] = None,
    dry_run: bool = False,
    append: bool = False,
) -> Dict[str, int]:
    """The inputs' tables as a Hive-partitioned Parquet dataset in ``out``, as
    ``profcodec export --parquet`` writes it: rows per table. ``append=True`` adds the inputs
    to the dataset profcodec wrote in ``out`` (new files only). Needs the package built with
    its ``sql`` feature."""

class Database:
    """An HPCToolkit database directory, its files memory-mapped."""

    def __init__(self, path: _Path) -> None: ...
    @property
    def path(self) -> Path: ...
    @property
    def title(self) -> str: ...
    def validate(self) -> None: ...
    def metrics(self) -> List[Dict[str, Any]]:
        """One dict per metric id: ``id``, ``role``, ``name``, ``scope``, ``combine``."""
    def profiles(self) -> List[Dict[str, Any]]:
        """One dict per profile: ``profile``, ``summary`` and its identifiers by kind."""
    def values(self, profile: Optional[int] = None) -> Dict[str, npt.NDArray[Any]]:
        """``ctx_id``, ``metric_id``, ``value`` (and ``profile`` for every profile)."""
    def traces(self, profile: Optional[int] = None) -> Dict[str, npt.NDArray[Any]]:
        """``profile``, ``timestamp``, ``ctx_id``."""

def hatchet_columns(
    path: _Path,
    *,
    metric_names: Sequence[str],
    metric_scopes: Sequence[str],
    summary_metrics: Sequence[str],
    label_function_nodes: bool,
    max_depth: Optional[int],
    min_percentage_of_application_time: Optional[float],
    directory_mapping: Sequence[Tuple[str, str]],
    exclude: Sequence[str],
) -> Dict[str, Any]:
    """The columns of hatchet's summary-mode GraphFrame (see profcodec.hpctoolkit.read)."""

def hatchet_nodes(
    frame_class: Any,
    node_class: Any,
    ctx_id: "np.ndarray[Any, np.dtype[np.uint32]]",
    parent: "np.ndarray[Any, np.dtype[np.int64]]",
    depth: "np.ndarray[Any, np.dtype[np.int64]]",
    kind: "np.ndarray[Any, np.dtype[np.uint8]]",
    name_id: "np.ndarray[Any, np.dtype[np.uint32]]",
    names: Sequence[str],
    fast: bool,
) -> Tuple[List[Any], "np.ndarray[Any, np.dtype[np.object_]]"]:
    """hatchet's Frame and Node objects for the rows, linked: (roots, nodes in row order)."""
