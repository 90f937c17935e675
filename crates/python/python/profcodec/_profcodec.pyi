"""Type stubs of the native module profcodec._profcodec (the Rust half of profcodec)."""

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, "os.PathLike[str]"]

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
    def profile(self) -> Profile:
        """The input in the format-neutral profile model."""
    def __fspath__(self) -> str: ...

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
        thread: Optional[int] = None,
        rank: Optional[int] = None,
        process: Optional[int] = None,
        mean: bool = False,
    ) -> Top:
        """The functions, lines ("line") or modules ("module") that cost the most."""

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
    def __len__(self) -> int: ...

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
