"""Profiles of HPCToolkit, hpcrun, Devel::NYTProf, EasyProfiler and Devel::StatProfiler in
Python, read by the profcodec Rust crates.

>>> import profcodec
>>> profile = profcodec.open("hpctoolkit-database").profile()    # doctest: +SKIP
>>> for row in profile.top(limit=5).rows:                          # doctest: +SKIP
...     print(f"{row['self']:12.6f}  {row['name']}")

- :func:`open` detects the format of a file or folder; :class:`Input` gives its ``format``,
  ``version``, ``info()`` (what ``profcodec info`` prints) and ``profile()``.
- :meth:`Input.tables` gives the input's tables (its format's, or the profile model's with
  ``"profile"``) as ``pyarrow.Table`` objects, imported through the Arrow C stream interface;
  :meth:`Input.to_pandas` as pandas DataFrames; :meth:`Input.arrow_stream` as an
  :class:`ArrowStream` any Arrow library reads (``__arrow_c_stream__``).
- :meth:`Input.validate`, :meth:`Input.dump` (and :meth:`Input.records`) and
  :meth:`Input.rewrite` are ``profcodec validate``, ``dump`` and ``rewrite``;
  :meth:`Input.convert` writes what ``profcodec convert`` writes, the timelines (``perfetto``,
  ``chrome``) included.
- :class:`Profile` is the format-neutral profile model; ``top()`` answers which functions,
  lines or modules cost the most; ``to_folded()`` and ``convert(to=...)`` write folded stacks,
  callgrind, speedscope, pprof or the Firefox Profiler's format, as ``profcodec convert`` does.
- :func:`diff` compares two profiles as ``profcodec diff`` does (a :class:`Diff`).
- :func:`merged_profile` reads many inputs (a test suite's runs, a folder of them, one file
  per rank) as one :class:`Profile`, decoded on every core, as ``profcodec top A B ...`` reads
  them.
- :func:`merge` writes many profiles of one program as one file of their format, as
  ``profcodec merge`` does (NYTProf, as ``nytprofmerge`` merges them).
- :func:`prof` makes an HPCToolkit database of hpcrun measurements, as ``profcodec prof``
  (and HPCToolkit's ``hpcprof``) makes it.
- :func:`sql` runs a SQL query over the inputs' tables and :func:`export_parquet` writes them
  as a Parquet dataset, as ``profcodec sql`` and ``profcodec export`` do (with the package
  built with its cargo feature ``sql``).
- :mod:`profcodec.hpctoolkit`: ``read(path)`` returns what hatchet's
  ``GraphFrame.from_hpctoolkit_latest(path)`` returns, many times faster; ``Database`` gives
  per-profile values and traces as NumPy arrays.

Every error is a :class:`profcodec.Error` carrying the message and the byte offset of the
damage (``InvalidDataError``, ``UnknownFormatError``, ``UnsupportedError``, ``QueryError``,
``FileError``).
"""

from ._errors import (
    Error,
    FileError,
    InvalidDataError,
    QueryError,
    UnknownFormatError,
    UnsupportedError,
)
from ._profcodec import (
    ArrowStream,
    Diff,
    Input,
    Profile,
    Top,
    diff,
    export_parquet,
    merge,
    merged_profile,
    open,
    prof,
    sql,
)
from . import hpctoolkit

try:
    from importlib.metadata import PackageNotFoundError as _NotInstalled
    from importlib.metadata import version as _version

    __version__: str = _version("profcodec")
except _NotInstalled:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "ArrowStream",
    "Diff",
    "Error",
    "FileError",
    "InvalidDataError",
    "Input",
    "Profile",
    "QueryError",
    "Top",
    "UnknownFormatError",
    "UnsupportedError",
    "diff",
    "export_parquet",
    "hpctoolkit",
    "merge",
    "merged_profile",
    "open",
    "prof",
    "sql",
]
