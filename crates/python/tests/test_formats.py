"""Every corpus file of every format opens and yields its info, its profile and the top
functions; what an input cannot give is a profcodec.UnsupportedError."""

import json
import math
import os

import pytest

import profcodec
from conftest import corpus_dir

CORPUS = corpus_dir()

# Inputs that hold no values: a trace alone, or a database file without meta.db.
NO_PROFILE = (".hpctrace", "profile.db", "cct.db", "trace.db")


def inputs():
    """Every input profcodec opens in the corpus: files, databases, measurement folders and
    sessions (the dumps and notes beside them excluded)."""
    if CORPUS is None:
        return []
    found = []
    hpctoolkit = CORPUS / "hpctoolkit"
    for db in sorted((hpctoolkit / "dbase").iterdir()) + [hpctoolkit / "hatchet-gamess"]:
        if db.is_dir():
            found.append(db)
            found.extend(sorted(db.glob("*.db")))
    for meas in sorted((hpctoolkit / "meas").iterdir()):
        found.append(meas)
        found.extend(sorted(meas.glob("*.hpcrun")) + sorted(meas.glob("*.hpctrace")))
    found.extend(sorted((CORPUS / "nytprof").glob("*.nytprof.out")))
    found.extend(sorted((CORPUS / "easyprofiler").glob("*.prof")))
    for session in sorted((CORPUS / "statprofiler").iterdir()):
        if session.is_dir() and session.name != "progs":
            found.append(session)
            found.extend(
                sorted(f for f in session.iterdir() if not f.name.endswith(".txt"))
            )
    return found


def test_the_corpus_has_every_format(corpus):
    codecs = {profcodec.open(p).codec for p in inputs()}
    assert codecs == {"hpctoolkit", "hpcrun", "nytprof", "easyprofiler", "statprofiler"}
    assert len(inputs()) > 100


@pytest.mark.parametrize("path", inputs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_opens_with_info_profile_and_top(path):
    run = profcodec.open(path)
    assert run.path == path
    assert os.fspath(run) == str(path)
    assert run.format
    assert run.codec in ("hpctoolkit", "hpcrun", "nytprof", "easyprofiler", "statprofiler")
    assert run.version
    info = run.info()
    assert info["version"] == run.version
    assert isinstance(info["details"], dict) and info["details"]
    json.dumps(info)
    if path.name.endswith(NO_PROFILE):
        with pytest.raises(profcodec.UnsupportedError):
            run.profile()
        return
    profile = run.profile()
    if path.name == "meta.db":
        # A lone meta.db: the tree without values.
        assert profile.node_count > 0 and not profile.contexts
        assert profile.top().total_self == 0
        return
    assert profile.contexts
    top = profile.top(limit=5)
    assert top.value_type == profile.default_value_type
    assert len(top) <= 5
    assert math.isfinite(top.total_self)
    for row in top.rows:
        assert row["name"]
        assert math.isfinite(row["self"])
    assert list(top.to_pandas().columns)[:2] == ["name", "function"]
    everything = profile.top(limit=None, by="inclusive")
    assert len(everything) >= len(top)


def test_profile_questions(corpus):
    """Lines, modules, a thread, a mean, another metric: the model's answers on a real
    database with two threads."""
    profile = profcodec.open(corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d").profile()
    assert profile.default_value_type == "CPUTIME"
    assert {"name": "CPUTIME", "unit": "seconds", "measured": "self_and_inclusive"} in (
        profile.value_types
    )
    whole = profile.top(limit=None)
    threads = [c for c in profile.contexts if "thread" in c]
    assert len(threads) >= 2
    per_thread = [profile.top(limit=None, thread=t).total_self for t in (0, 1)]
    assert all(v > 0 for v in per_thread)
    assert profile.top(limit=None, mean=True).total_self <= whole.total_self
    assert profile.top(group="line").rows[0]["line"] is not None
    assert profile.top(group="module").rows[0]["module"]
    with pytest.raises(profcodec.QueryError, match="CPUTIME"):
        profile.top("no such metric")
    with pytest.raises(ValueError):
        profile.top(by="total")
    # Threads, ranks and processes select as --thread, --rank and --process do; a selection
    # that keeps nothing says what there is.
    with pytest.raises(profcodec.QueryError, match="no thread matches 'no such thread'"):
        profile.top(thread="no such thread")
    with pytest.raises(TypeError):
        profile.top(rank="zero")


def test_database_arrays(corpus):
    """Per-profile values and traces as NumPy arrays, against the summary the reader gives."""
    path = corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d"
    db = profcodec.hpctoolkit.open(path)
    db.validate()
    info = profcodec.open(path).info()["details"]
    values = db.values()
    assert len(values["value"]) == info["profile_values"]
    assert values["value"].dtype.name == "float64" and values["ctx_id"].dtype.name == "uint32"
    assert set(values["profile"].tolist()) <= set(range(info["profiles"] + 1))
    one = db.values(1)
    assert "profile" not in one
    with pytest.raises(IndexError):
        db.values(info["profiles"] + 1)
    assert len(one["value"]) == (values["profile"] == 1).sum()
    traces = db.traces()
    assert len(traces["timestamp"]) == info["trace_samples"]
    assert traces["timestamp"].min() == info["min_timestamp_ns"]
    line = db.traces(profile=int(traces["profile"][0]))
    assert (line["profile"] == traces["profile"][0]).all()
    assert (line["timestamp"][1:] >= line["timestamp"][:-1]).all()
    profiles = db.profiles()
    assert profiles[0] == {"profile": 0, "summary": True}
    assert sum("thread" in p for p in profiles) == info["threads"]
    metrics = db.metrics()
    assert {m["role"] for m in metrics} == {"propagated", "summary"}
    assert "sum" in {m["combine"] for m in metrics if m["role"] == "summary"}
    assert db.title == info["title"]


def test_a_database_without_traces_says_so(corpus):
    db = profcodec.hpctoolkit.open(corpus / "hpctoolkit" / "hatchet-gamess")
    with pytest.raises(profcodec.UnsupportedError, match="trace.db"):
        db.traces()
