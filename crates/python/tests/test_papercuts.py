"""Papercuts of the Python package (issue 44): counts are ints, the package has a version."""

import importlib.metadata
import pathlib

import pytest

import profcodec
from test_parity import sql_feature  # noqa: F401 (a fixture)

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


def test_sql_and_export_take_a_folder_of_profiles_as_the_command_line_does(
    pyarrow, sql_feature, tmp_path
):
    """A folder of profiles is its profiles in name order, a warning for what is passed over."""
    folder = tmp_path / "profiles"
    folder.mkdir()
    names = ["a.nytprof.out", "b.nytprof.out"]
    for name, source in zip(names, ["hello.nytprof.out", "workload-100.nytprof.out"]):
        (folder / name).write_bytes((TESTDATA / "nytprof" / source).read_bytes())
    (folder / "notes.txt").write_text("not a profile\n")
    query = "SELECT input, path FROM inputs ORDER BY input"
    with pytest.warns(UserWarning, match="notes.txt"):
        rows = profcodec.sql(query, folder).to_pylist()
    assert rows == [{"input": k, "path": str(folder / name)} for k, name in enumerate(names)]
    files = [folder / name for name in names]
    assert profcodec.sql(query, files).to_pylist() == rows
    with pytest.warns(UserWarning, match="notes.txt"):
        from_folder = profcodec.export_parquet(folder, tmp_path / "from_folder")
    assert from_folder == profcodec.export_parquet(files, tmp_path / "from_files")
    assert from_folder["nytprof.subs"] > 0
