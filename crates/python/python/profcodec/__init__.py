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
- :class:`Profile` is the format-neutral profile model; ``top()`` answers which functions,
  lines or modules cost the most; ``to_folded()`` and ``convert(to=...)`` write folded stacks,
  callgrind, speedscope, pprof or the Firefox Profiler's format, as ``profcodec convert`` does.
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
from ._profcodec import ArrowStream, Input, Profile, Top, open
from . import hpctoolkit

__all__ = [
    "ArrowStream",
    "Error",
    "FileError",
    "InvalidDataError",
    "Input",
    "Profile",
    "QueryError",
    "Top",
    "UnknownFormatError",
    "UnsupportedError",
    "hpctoolkit",
    "open",
]
