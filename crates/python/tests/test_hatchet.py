"""profcodec.hpctoolkit.read judged by hatchet: on every corpus database, the GraphFrame equals
``hatchet.GraphFrame.from_hpctoolkit_latest``'s (the dataframe compared with pandas' testing
helpers, the graph node by node), with hatchet's default arguments and with its others."""

import re
import shutil

import pandas.testing as pdt
import pytest

import profcodec
from conftest import corpus_dir

CORPUS = corpus_dir()


def databases():
    if CORPUS is None:
        return []
    root = CORPUS / "hpctoolkit"
    dirs = sorted(p for p in (root / "dbase").iterdir() if p.is_dir())
    return dirs + [root / "hatchet-gamess"]


def test_the_corpus_has_databases(corpus):
    assert len(databases()) >= 15


def preorder(graph):
    """Every node of a hatchet graph in pre-order, children in their stored order."""
    stack = list(reversed(graph.roots))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def assert_same_graphframe(ours, theirs):
    pdt.assert_frame_equal(ours.dataframe, theirs.dataframe, check_exact=True)
    # The index holds equal nodes (pandas compares them by hnid): their frames and depths too.
    for a, b in zip(ours.dataframe.index, theirs.dataframe.index):
        assert (a._hatchet_nid, a._depth, a.frame.attrs) == (b._hatchet_nid, b._depth, b.frame.attrs)
    assert ours.inc_metrics == theirs.inc_metrics
    assert ours.exc_metrics == theirs.exc_metrics
    assert ours.default_metric == theirs.default_metric
    assert ours.metadata == theirs.metadata
    # The graph, node by node: same frame (attributes in the same order), hnid, depth, parent
    # and children, in the same order.
    assert len(ours.graph.roots) == len(theirs.graph.roots)
    ours_nodes, their_nodes = list(preorder(ours.graph)), list(preorder(theirs.graph))
    assert len(ours_nodes) == len(their_nodes)
    count = 0
    for a, b in zip(ours_nodes, their_nodes):
        assert list(a.frame.attrs.items()) == list(b.frame.attrs.items())
        assert a.frame == b.frame
        assert (a._hatchet_nid, a._depth) == (b._hatchet_nid, b._depth)
        assert [p._hatchet_nid for p in a.parents] == [p._hatchet_nid for p in b.parents]
        assert [c._hatchet_nid for c in a.children] == [c._hatchet_nid for c in b.children]
        count += 1
    assert count == len(ours.dataframe) == len(ours.graph)
    assert ours.graph == theirs.graph


def hatchet_or_none(hatchet, path, **options):
    """hatchet's GraphFrame, or None when hatchet fails on the database (it needs a CPUTIME,
    REALTIME or CYCLES metric and a main-thread entry point)."""
    try:
        return hatchet.GraphFrame.from_hpctoolkit_latest(str(path), **options)
    except (KeyError, TypeError, ValueError):
        return None


@pytest.mark.parametrize("path", databases(), ids=lambda p: p.name)
def test_read_equals_hatchet(hatchet, path):
    theirs = hatchet_or_none(hatchet, path)
    ours = profcodec.hpctoolkit.read(str(path))
    assert isinstance(ours, hatchet.GraphFrame)
    if theirs is None:
        # hatchet cannot read it; profcodec still gives the tree (without time columns).
        assert "time" not in ours.dataframe.columns
        return
    assert_same_graphframe(ours, theirs)


def test_hatchet_reads_most_of_the_corpus(corpus, hatchet):
    read = [p for p in databases() if hatchet_or_none(hatchet, p) is not None]
    # loops-cputime-t (2), loops-perf (2)? small (2), hatchet-gamess at least.
    assert len(read) >= 5, read


OPTIONS = [
    {"metric_names": ["time"], "summary_metrics": ["sum"]},
    {"metric_scopes": ["i"]},
    {"metric_scopes": ["i", "e", "p"]},
    {"summary_metrics": ["max", "sum"]},
    {"label_function_nodes": False},
    {"max_depth": 4},
    {"min_percentage_of_application_time": 1},
    {"exclude_instructions": True},
    {"exclude_non_function_nodes": True},
    {"exclude_function_call_lines": True},
    {"exclude_no_source_code_instructions": True},
    {"exclude_mpi_function_details": True},
    {"exclude_openmp_function_details": True},
    {"exclude_cuda_function_details": True},
    {"exclude_system_libraries_source_code": True},
    {"directory_mapping": {"/usr": "USR", "src": "SRC"}},
    {"exclude_function_call_lines": True, "exclude_instructions": True, "max_depth": 6},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o))
def test_options_equal_hatchet(corpus, hatchet, options):
    judged = 0
    for path in databases():
        theirs = hatchet_or_none(hatchet, path, **options)
        if theirs is None:
            continue
        assert_same_graphframe(profcodec.hpctoolkit.read(str(path), **options), theirs)
        judged += 1
    assert judged >= 4


def test_every_metric_of_gamess_equals_hatchet(corpus, hatchet):
    """All the metrics hatchet can name apart (lower case, unit dropped), every statistic."""
    path = corpus / "hpctoolkit" / "hatchet-gamess"
    names = {}
    for m in profcodec.hpctoolkit.open(path).metrics():
        name = m["name"].lower().strip()
        if name.endswith(")"):
            name = name[:-1].split("(")[0].strip()
        name = "time" if name in ("cputime", "realtime", "cycles") else name
        names.setdefault(name, set()).add(m["name"])
    metric_names = sorted(n for n, raw in names.items() if len(raw) == 1)
    assert "time" in metric_names and len(metric_names) > 10
    options = {"metric_names": metric_names, "metric_scopes": ["i", "e", "p"]}
    ours = profcodec.hpctoolkit.read(str(path), **options)
    assert_same_graphframe(ours, hatchet.GraphFrame.from_hpctoolkit_latest(str(path), **options))
    assert len(ours.dataframe.columns) > 6


def test_without_hatchet_the_dataframe_alone(corpus, hatchet):
    path = corpus / "hpctoolkit" / "hatchet-gamess"
    frame = profcodec.hpctoolkit.read(path, graphframe=False)
    theirs = hatchet.GraphFrame.from_hpctoolkit_latest(str(path)).dataframe
    assert list(frame.columns) == list(theirs.columns)
    assert list(frame.index) == [n._hatchet_nid for n in theirs.index]
    pdt.assert_frame_equal(frame.reset_index(drop=True), theirs.reset_index(drop=True))


def test_a_path_object_reads_as_hatchet_reads_it(corpus, hatchet):
    path = corpus / "hpctoolkit" / "dbase" / "small.d"
    assert_same_graphframe(
        profcodec.hpctoolkit.read(path), hatchet.GraphFrame.from_hpctoolkit_latest(path)
    )


@pytest.mark.filterwarnings("ignore::FutureWarning")  # hatchet's squash uses DataFrame.swapaxes
def test_hatchet_queries_work_on_the_result(corpus, hatchet):
    """What hatchet users do next: filter, squash, tree."""
    gf = profcodec.hpctoolkit.read(str(corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d"))
    filtered = gf.filter(lambda row: row["time (inc)"] > 0).squash()
    assert len(filtered.graph) > 0
    text = gf.tree()
    assert re.search(r"function: main", text)


def test_parallel_profiles_mode_is_refused(corpus):
    with pytest.raises(NotImplementedError):
        profcodec.hpctoolkit.read(corpus / "hpctoolkit" / "hatchet-gamess", parallel_profiles_mode=True)


# Databases made from loops-cputime-t.d by rewriting strings of meta.db in place, each with one of
# the constructs hatchet's options act on (same length, so every pointer stays valid).
VARIANTS = {
    # An MPI routine whose name hatchet cuts (`MPI_Send.part.0` -> `MPI_Send`) and one it keeps.
    "mpi": [(b"test_separated_loops_helper", b"PMPI_Allreduce_x.part.0_abc"), (b"func2", b"MPI_X")],
    # Sources in an OpenMP runtime folder.
    "openmp": [(b"/builds/", b"/openmp/")],
    # Sources in a CUDA folder.
    "cuda": [(b"/builds/", b"/cuda/x/")],
    # Sources of a system library.
    "system": [(b"/builds/hpctoolkit", b"/usr/src/debug/hpc")],
    # Sources copied into the database (hpcprof's `src/` prefix, which hatchet drops).
    "copied": [(b"/builds/", b"src/bld/")],
}


@pytest.fixture(scope="module")
def variants(corpus, tmp_path_factory):
    source = corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d"
    made = {}
    for name, replacements in VARIANTS.items():
        target = tmp_path_factory.mktemp(name) / "db"
        shutil.copytree(source, target)
        meta = (target / "meta.db").read_bytes()
        for old, new in replacements:
            assert len(old) == len(new) and old in meta
            meta = meta.replace(old, new)
        (target / "meta.db").write_bytes(meta)
        made[name] = target
    return made


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("options", [{}] + OPTIONS, ids=lambda o: ",".join(o) or "defaults")
def test_variants_equal_hatchet(hatchet, variants, variant, options):
    if variant == "copied" and "directory_mapping" in options:
        options = {"directory_mapping": {"/bld": "BUILD"}}
    path = str(variants[variant])
    theirs = hatchet.GraphFrame.from_hpctoolkit_latest(path, **options)
    assert_same_graphframe(profcodec.hpctoolkit.read(path, **options), theirs)


def test_the_variants_change_what_hatchet_shows(hatchet, variants):
    """Each variant makes its option drop or rename something (else it tests nothing)."""
    for variant, option in [
        ("mpi", "exclude_mpi_function_details"),
        ("openmp", "exclude_openmp_function_details"),
        ("cuda", "exclude_cuda_function_details"),
        ("system", "exclude_system_libraries_source_code"),
    ]:
        path = str(variants[variant])
        plain = profcodec.hpctoolkit.read(path).dataframe
        excluded = profcodec.hpctoolkit.read(path, **{option: True}).dataframe
        assert len(excluded) < len(plain) or set(excluded["name"]) != set(plain["name"]), variant
    names = set(profcodec.hpctoolkit.read(str(variants["mpi"])).dataframe["name"])
    assert "function: PMPI_Allreduce_x" in names and "function: MPI_X" in names
    copied = profcodec.hpctoolkit.read(str(variants["copied"])).dataframe["name"]
    assert any(n.startswith("loop /bld/") for n in copied)
