"""Every corpus input yields its tables as pyarrow Tables, row for row and sum for sum what the
command line's SQL session (``profcodec sql``, the same profcodec-arrow readers through
DataFusion) counts; the profile model's tables agree with ``Profile.top()``."""

import json
import subprocess
import sys

import pytest

import profcodec
from test_formats import NO_PROFILE, inputs

# One file of an HPCToolkit database: its tables are read from the database folder.
DATABASE_FILES = ("meta.db", "profile.db", "cct.db", "trace.db")


def column_checks(table):
    """For every column: its non-null count, the sum of a number or boolean column (as a
    double) and the characters of a string column; `column_sql` asks the same in SQL."""
    import pyarrow as pa
    import pyarrow.compute as pc

    checks = []
    for field in table.schema:
        column = table.column(field.name)
        checks.append(len(column) - column.null_count)
        if pa.types.is_integer(field.type) or pa.types.is_floating(field.type):
            total = pc.sum(column.cast(pa.float64(), safe=False)).as_py()
            checks.append(total)
        elif pa.types.is_boolean(field.type):
            total = pc.sum(column.cast(pa.int64())).as_py()
            checks.append(total)
        elif pa.types.is_string(field.type):
            total = pc.sum(pc.utf8_length(column)).as_py()
            checks.append(total)
    return checks


def column_sql(schema):
    """The checks of `column_checks` as SQL expressions, for a table of this schema."""
    import pyarrow as pa

    expressions = []
    for field in schema:
        quoted = f'"{field.name}"'
        expressions.append(f"CAST(COUNT({quoted}) AS DOUBLE)")
        if pa.types.is_integer(field.type) or pa.types.is_floating(field.type):
            expressions.append(f"SUM(CAST({quoted} AS DOUBLE))")
        elif pa.types.is_boolean(field.type):
            expressions.append(f"CAST(SUM(CAST({quoted} AS BIGINT)) AS DOUBLE)")
        elif pa.types.is_string(field.type):
            expressions.append(f"CAST(SUM(CHARACTER_LENGTH({quoted})) AS DOUBLE)")
    return expressions


def cli_answers(cli, paths, schemas):
    """``profcodec sql``'s checks of every table of `schemas` ({"set.table": schema}) over the
    inputs `paths`, in one session: {(input position, "set.table"): row}, a row's checks in
    columns c0, c1... (no row for a table an input has no rows of)."""
    expressions = {name: column_sql(schema) for name, schema in schemas.items()}
    width = max(len(e) for e in expressions.values())
    branches = []
    for name, columns in expressions.items():
        set_name, table = name.split(".")
        columns = columns + ["CAST(NULL AS DOUBLE)"] * (width - len(columns))
        selected = ", ".join(f"{expr} AS c{k}" for k, expr in enumerate(columns))
        branches.append(
            f"SELECT '{name}' AS name, input, COUNT(*) AS row_count, {selected} "
            f'FROM {set_name}."{table}" GROUP BY input'
        )
    query = " UNION ALL ".join(branches)
    out = subprocess.run(
        [str(cli), "sql", "--format", "json", query] + [str(p) for p in paths],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return {(row["input"], row["name"]): row for row in json.loads(out.stdout)}


def test_every_input_yields_its_tables(corpus, cli, pyarrow):
    """Row counts, non-null counts, sums and string lengths of every column of every table of
    every corpus input (the format's set and the profile model's), against ``profcodec sql``
    over all of them at once."""
    # Inputs with a profile model, and those without (a trace alone): the SQL session reads
    # the `profile` tables of every input it is given.
    groups = {True: [], False: []}
    for path in inputs():
        run = profcodec.open(path)
        if path.name in DATABASE_FILES:
            with pytest.raises(profcodec.UnsupportedError, match="database folder"):
                run.tables()
            continue
        tables = {}
        own = run.tables()
        assert list(own) == run.table_names()
        tables.update({f"{run.table_set}.{name}": t for name, t in own.items()})
        has_profile = not path.name.endswith(NO_PROFILE)
        if has_profile:
            model = run.tables("profile")
            assert list(model) == run.table_names("profile")
            tables.update({f"profile.{name}": t for name, t in model.items()})
        for name, table in tables.items():
            assert isinstance(table, pyarrow.Table), name
            for field in table.schema:
                # Each column's meaning travels with it through the C data interface.
                assert field.metadata and b"description" in field.metadata, (name, field)
        groups[has_profile].append((path, tables))
    checked = 0
    for group in groups.values():
        schemas = {n: t.schema for _, tables in group for n, t in tables.items()}
        rows = cli_answers(cli, [path for path, _ in group], schemas)
        for k, (path, tables) in enumerate(group):
            for name, table in tables.items():
                row = rows.get((k, name), {"row_count": 0})
                assert table.num_rows == row["row_count"], (path, name)
                for c, value in enumerate(column_checks(table)):
                    expected = row.get(f"c{c}")
                    if value is None or expected is None or table.num_rows == 0:
                        assert (value or 0) == (expected or 0), (path, name, c)
                    else:
                        assert value == pytest.approx(expected, rel=1e-9, abs=1e-9), (path, name, c)
                checked += 1
    assert checked > 500


def summary_self(run, metric):
    """The self values of `metric` summed over the summary contexts (every context where the
    profile has no summary), from the profile model's tables, as ``profcodec top`` counts."""
    import pyarrow.compute as pc

    t = run.tables("profile")
    contexts = t["contexts"]
    summary = contexts.filter(contexts["summary"])
    if summary.num_rows == 0:
        summary = contexts
    types = t["value_types"].filter(pc.equal(t["value_types"]["name"], metric))
    values = t["node_values"]
    chosen = pc.and_(
        pc.is_in(values["context"], summary["context"]),
        pc.is_in(values["value_type"], types["value_type"]),
    )
    return pc.sum(values.filter(chosen)["self_value"]).as_py() or 0.0


@pytest.mark.parametrize(
    "relative",
    [
        "hpctoolkit/dbase/loops-cputime-t.d",
        "hpctoolkit/hatchet-gamess",
        "easyprofiler/sample_v210_rdtsc.prof",
    ],
)
def test_the_model_tables_add_up_to_top(corpus, pyarrow, relative):
    run = profcodec.open(corpus / relative)
    top = run.profile().top(limit=None)
    assert summary_self(run, top.value_type) == pytest.approx(top.total_self, rel=1e-9)


def test_tables_of_one_name(corpus, pyarrow):
    run = profcodec.open(corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d")
    values = run.table("values")
    assert values.equals(run.tables()["values"])
    assert run.table("profile.nodes").equals(run.table("nodes", set="profile"))
    assert values.schema.field("value").type == pyarrow.float64()
    frames = run.to_pandas()
    assert list(frames) == run.table_names()
    assert len(frames["values"]) == values.num_rows
    assert frames["values"]["value"].sum() == pytest.approx(
        pyarrow.compute.sum(values["value"]).as_py()
    )
    model = run.to_pandas("profile")
    assert set(model) == set(run.table_names("profile"))


def test_the_arrow_stream_is_the_pycapsule_interface(corpus, pyarrow):
    run = profcodec.open(corpus / "nytprof" / "nested__compress0.nytprof.out")
    stream = run.arrow_stream("lines")
    assert stream.name == "nytprof.lines"
    assert len(stream) == stream.num_rows > 0
    capsule = stream.__arrow_c_stream__()
    assert type(capsule).__name__ == "PyCapsule"
    reader = pyarrow.RecordBatchReader._import_from_c_capsule(capsule)
    first = reader.read_all()
    # A stream can be read again; each read shares the same buffers.
    again = pyarrow.RecordBatchReader.from_stream(stream).read_all()
    assert first.equals(again)
    assert first.equals(run.table("lines"))
    # A capsule never consumed releases its stream when collected.
    stream.__arrow_c_stream__()


def test_unknown_tables_and_sets(corpus):
    run = profcodec.open(corpus / "nytprof" / "nested__compress0.nytprof.out")
    with pytest.raises(profcodec.QueryError, match="lines, subs"):
        run.arrow_stream("values")
    with pytest.raises(profcodec.QueryError, match="profile"):
        run.table_names("hpctoolkit")
    with pytest.raises(profcodec.QueryError):
        run.arrow_stream("hpctoolkit.values")
    with pytest.raises(profcodec.QueryError):
        run.arrow_stream("profile.nodes", set="nytprof")


def test_tables_without_pyarrow_say_how_to_install_it(corpus, monkeypatch):
    run = profcodec.open(corpus / "nytprof" / "nested__compress0.nytprof.out")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match="pip install pyarrow"):
        run.tables()
    # The stream needs no pyarrow.
    assert run.arrow_stream("files").num_rows > 0
