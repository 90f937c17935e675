"""Papercuts of the Python package (issue 44): counts are ints, the package has a version."""

import importlib.metadata
import pathlib

import profcodec

TESTDATA = pathlib.Path(__file__).resolve().parents[3] / "testdata"


def test_calls_are_ints_when_whole():
    profile = profcodec.open(str(TESTDATA / "nytprof" / "hello.nytprof.out")).profile()
    rows = profile.top(limit=None).rows
    calls = [row["calls"] for row in rows if row["calls"] is not None]
    assert calls, rows
    assert all(isinstance(c, int) for c in calls), calls


def test_a_mean_that_is_not_whole_stays_a_float():
    for row in profcodec.open(str(TESTDATA / "nytprof" / "hello.nytprof.out")).profile().top(
        limit=None, mean=True
    ).rows:
        if row["calls"] is not None:
            assert isinstance(row["calls"], (int, float))


def test_the_package_has_its_version():
    assert profcodec.__version__ == importlib.metadata.version("profcodec")
    assert "__version__" in profcodec.__all__
