"""HPCToolkit databases: hatchet GraphFrames and NumPy arrays.

:func:`read` returns what ``hatchet.GraphFrame.from_hpctoolkit_latest(path)`` returns (the same
graph, the same dataframe index, columns and values) when hatchet is installed, and the
dataframe alone (pandas) otherwise. Rust reads the database and hands over column arrays; this
module builds the DataFrame from them in bulk, and hatchet's Node and Frame objects in one
native loop.

:class:`Database` gives the per-profile values and the traces as NumPy arrays.
"""

import gc
import os
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._profcodec import Database, hatchet_columns, hatchet_nodes

__all__ = ["Database", "open", "read", "read_dataframe"]

#: The exclusions of ``from_hpctoolkit_latest``, as its keyword arguments name them.
_EXCLUSIONS = (
    "mpi_function_details",
    "openmp_function_details",
    "cuda_function_details",
    "system_libraries_source_code",
    "function_call_lines",
    "no_source_code_instructions",
    "instructions",
    "non_function_nodes",
)


def open(path: "os.PathLike[str] | str") -> Database:
    """Opens an HPCToolkit database directory (its files memory-mapped)."""
    return Database(path)


def _columns(
    path: "os.PathLike[str] | str",
    metric_names: Optional[Sequence[str]],
    metric_scopes: Optional[Sequence[str]],
    summary_metrics: Optional[Sequence[str]],
    label_function_nodes: bool,
    max_depth: Optional[int],
    min_percentage_of_application_time: Optional[float],
    directory_mapping: Optional[Dict[str, str]],
    exclude: List[str],
) -> Dict[str, Any]:
    # hatchet's defaults, also for an empty list.
    return hatchet_columns(
        path,
        metric_names=list(metric_names or ["time"]),
        metric_scopes=list(metric_scopes or ["i", "e"]),
        summary_metrics=list(summary_metrics or ["sum", "min", "max"]),
        label_function_nodes=label_function_nodes,
        max_depth=max_depth,
        min_percentage_of_application_time=min_percentage_of_application_time,
        directory_mapping=list((directory_mapping or {}).items()),
        exclude=exclude,
    )


def _dataframe(columns: Dict[str, Any], nodes: Optional[Any]) -> Any:
    """The DataFrame hatchet's reader makes: the metric columns and ``name``, in hatchet's
    column order, indexed by ``node``: the Node objects, or the ctxIds without them."""
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError(
            "profcodec.hpctoolkit.read makes a pandas DataFrame: pip install pandas "
            "(and llnl-hatchet for the GraphFrame), or use profcodec.hpctoolkit.open(path) "
            "for NumPy arrays"
        ) from e

    data = {
        name: columns["name"] if name == "name" else columns["metrics"][name]
        for name in columns["columns"]
    }
    if nodes is None:
        index = pd.Index(columns["ctx_id"], name="node")
    else:
        index = pd.Index(nodes, dtype=object, name="node")
    return pd.DataFrame(data, index=index)


def _fast_construction_matches(frame_class: Any, node_class: Any) -> bool:
    """True when hatchet's own constructors give a Frame and a Node exactly the attributes that
    ``hatchet_nodes(fast=True)`` sets, so that objects made without them are the same."""
    try:
        frame = frame_class({"type": "function", "name": "f"})
        parent = node_class(frame, parent=None, hnid=0, depth=0)
        node = node_class(frame, parent=parent, hnid=1, depth=1)
    except Exception:
        return False
    return (
        list(vars(frame)) == ["attrs", "_tuple_repr"]
        and frame.attrs == {"type": "function", "name": "f"}
        and frame._tuple_repr is None
        and list(vars(node)) == ["frame", "_depth", "_hatchet_nid", "parents", "children"]
        and node.parents == [parent]
        and node.children == []
        and parent.children == []
    )


def _metadata(path: Any) -> Dict[str, Any]:
    """The metadata hatchet gives a summary-mode GraphFrame: the folder's modification time
    (UTC), the path as given, and the number after the last ``_`` of the folder's name."""
    try:
        nodes = int(path.split("/")[-1].split("_")[-1])
    except Exception:
        nodes = 0
    mtime = os.path.getmtime(path)
    date = datetime.fromtimestamp(mtime, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return {"date": date, "file_path": path, "nodes": nodes}


def read(
    path: "os.PathLike[str] | str",
    directory_mapping: Optional[Dict[str, str]] = None,
    parallel_profiles_mode: bool = False,
    max_depth: Optional[int] = None,
    min_percentage_of_application_time: Optional[float] = None,
    exclude_mpi_function_details: bool = False,
    exclude_openmp_function_details: bool = False,
    exclude_cuda_function_details: bool = False,
    exclude_system_libraries_source_code: bool = False,
    exclude_function_call_lines: bool = False,
    exclude_no_source_code_instructions: bool = False,
    exclude_instructions: bool = False,
    exclude_non_function_nodes: bool = False,
    label_function_nodes: bool = True,
    metric_names: Optional[Sequence[str]] = None,
    metric_scopes: Optional[Sequence[str]] = None,
    summary_metrics: Optional[Sequence[str]] = None,
    profile_ranks: Optional[Sequence[int]] = None,
    graphframe: Optional[bool] = None,
) -> Any:
    """Reads an HPCToolkit database directory as ``hatchet.GraphFrame.from_hpctoolkit_latest``
    does, with the same arguments.

    Returns a ``hatchet.GraphFrame`` equal to hatchet's (the same graph of ``Node`` objects,
    ``hnid`` the ctxId; the same dataframe: index ``node``, columns ``time (inc)``, ``time``,
    ``time:min (inc)``... and ``name``; the same ``inc_metrics``, ``exc_metrics``,
    ``default_metric`` and ``metadata``) when hatchet is installed, else the dataframe alone,
    indexed by ctxId (a pandas DataFrame). ``graphframe=False`` asks for the dataframe even
    with hatchet installed, ``True`` requires hatchet.

    The summary profile is read, as hatchet's default mode reads it; ``parallel_profiles_mode``
    and ``profile_ranks`` are not supported (use :meth:`Database.values` for per-profile
    values). Raises ``profcodec.Error`` subclasses on damaged or missing files.
    """
    if parallel_profiles_mode or profile_ranks:
        raise NotImplementedError(
            "profcodec.hpctoolkit.read reads the summary profile, as hatchet's default mode; "
            "per-profile values are in profcodec.hpctoolkit.open(path).values()"
        )
    flags = {
        "mpi_function_details": exclude_mpi_function_details,
        "openmp_function_details": exclude_openmp_function_details,
        "cuda_function_details": exclude_cuda_function_details,
        "system_libraries_source_code": exclude_system_libraries_source_code,
        "function_call_lines": exclude_function_call_lines,
        "no_source_code_instructions": exclude_no_source_code_instructions,
        "instructions": exclude_instructions,
        "non_function_nodes": exclude_non_function_nodes,
    }
    columns = _columns(
        path,
        metric_names,
        metric_scopes,
        summary_metrics,
        label_function_nodes,
        max_depth,
        min_percentage_of_application_time,
        directory_mapping,
        [name for name in _EXCLUSIONS if flags[name]],
    )
    hatchet = None
    if graphframe is not False:
        try:
            import hatchet
            from hatchet.frame import Frame
            from hatchet.graph import Graph
            from hatchet.node import Node
        except ImportError:
            if graphframe:
                raise
            hatchet = None
    if hatchet is None:
        return _dataframe(columns, None)
    # Millions of new container objects would each trigger the cycle collector, which would
    # walk them all again and again while they are made; nothing made here is garbage. The
    # collector sees them once, after.
    enabled = gc.isenabled()
    gc.disable()
    try:
        roots, nodes = _nodes(columns, Frame, Node)
        dataframe = _dataframe(columns, nodes)
        names = list(dataframe.columns)
        return hatchet.GraphFrame(
            Graph(roots),
            dataframe,
            inc_metrics=[c for c in names if c.endswith("(inc)")],
            exc_metrics=[c for c in names if not c.endswith("(inc)")],
            default_metric=columns["time_metric"],
            metadata=_metadata(path),
        )
    finally:
        if enabled:
            gc.enable()


def _nodes(columns: Dict[str, Any], frame_class: Any, node_class: Any) -> Tuple[list, Any]:
    """hatchet's Node objects for the rows, linked: the roots, and the nodes in row order (a
    NumPy object array)."""
    return hatchet_nodes(
        frame_class,
        node_class,
        columns["ctx_id"],
        columns["parent"],
        columns["depth"],
        columns["kind"],
        columns["name_id"],
        columns["names"],
        _fast_construction_matches(frame_class, node_class),
    )


def read_dataframe(path: "os.PathLike[str] | str", **options: Any) -> Any:
    """:func:`read` without hatchet: the dataframe of hatchet's GraphFrame (same columns and
    values), indexed by ctxId, as a pandas DataFrame."""
    return read(path, graphframe=False, **options)
