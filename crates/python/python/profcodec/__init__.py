"""Profiles of HPCToolkit, hpcrun, Devel::NYTProf, EasyProfiler and Devel::StatProfiler in
Python, read by the profcodec Rust crates.

>>> import profcodec
>>> profile = profcodec.open("hpctoolkit-database").profile()    # doctest: +SKIP
>>> for row in profile.top(limit=5).rows:                          # doctest: +SKIP
...     print(f"{row['self']:12.6f}  {row['name']}")

- :func:`open` detects the format of a file or folder; :class:`Input` gives its ``format``,
  ``version``, ``info()`` (what ``profcodec info`` prints) and ``profile()``.
- :class:`Profile` is the format-neutral profile model; ``top()`` answers which functions,
  lines or modules cost the most.
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
from ._profcodec import Input, Profile, Top, open
from . import hpctoolkit

__all__ = [
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
