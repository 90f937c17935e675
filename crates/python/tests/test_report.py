"""Input.report() writes the report ``profcodec report`` writes (the same library function),
under the same output policy."""

import json
import re
import subprocess
from pathlib import Path

import pytest

import profcodec

REPO = Path(__file__).resolve().parents[3]
TESTDATA = REPO / "testdata"
INPUTS = [
    TESTDATA / "nytprof" / "hello.nytprof.out",
    TESTDATA / "hpctoolkit" / "demo.d",
    TESTDATA / "hpcrun" / "demo-04.00b.hpcrun",
    TESTDATA / "easyprofiler" / "small_v210.prof",
    TESTDATA / "statprofiler" / "features.statprof",
]


def page_rows(index):
    """(name, file) -> {column: raw value} of the whole program's top-functions table."""
    text = index.read_text(encoding="utf-8")
    start = text.index('id="top-all"')
    table = text[start : text.index("</table>", start)]
    rows = {}
    for tr in table.split("<tr")[1:]:
        tag = tr[: tr.index(">")]
        name = re.search(r'data-name="([^"]*)"', tag)
        if not name:
            continue
        file = re.search(r'data-file="([^"]*)"', tag)
        unescape = lambda s: (
            s.replace("&#x2f;", "/").replace("&quot;", '"').replace("&lt;", "<")
            .replace("&gt;", ">").replace("&#x27;", "'").replace("&amp;", "&")
        )
        values = {
            col: float(value)
            for col, value in re.findall(r'data-col="([^"]*)" data-value="([^"]*)"', tr)
        }
        rows.setdefault((unescape(name.group(1)), unescape(file.group(1))), values)
    return rows


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_report_holds_the_top_functions(tmp_path, path):
    out = tmp_path / "report"
    assert profcodec.open(path).report(out) is None
    index = out / "index.html"
    assert index.is_file()
    rows = page_rows(index)
    assert rows, "no rows on the page"
    assert "http://" not in index.read_text(encoding="utf-8").replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )


def test_report_equals_the_command_lines(tmp_path, cli):
    path = INPUTS[0]
    ours = tmp_path / "py"
    profcodec.open(path).report(ours)
    theirs = tmp_path / "cli"
    done = subprocess.run([str(cli), "report", "-o", str(theirs), str(path)], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    top = json.loads(
        subprocess.run([str(cli), "top", "--json", "-n", "10", str(path)], capture_output=True, check=True).stdout
    )
    py_rows, cli_rows = page_rows(ours / "index.html"), page_rows(theirs / "index.html")
    assert py_rows == cli_rows
    for row in top:
        values = py_rows[(row["name"], row.get("file", ""))]
        assert values[f"self:{row['metric']}"] == row["self"]


def test_a_comparison_has_a_differential_flame_graph(tmp_path):
    new = TESTDATA / "hpcrun" / "demo-04.00b.hpcrun"
    base = TESTDATA / "hpcrun" / "demo-03.00b.hpcrun"
    out = tmp_path / "compare"
    profcodec.open(new).report(out, base=base)
    assert (out / "diff.svg").is_file()
    assert 'id="changes"' in (out / "index.html").read_text(encoding="utf-8")


def test_output_policy(tmp_path):
    path = INPUTS[3]
    out = tmp_path / "report"
    profcodec.open(path).report(out)
    with pytest.raises(profcodec.FileError, match="overwrite=True"):
        profcodec.open(path).report(out)
    profcodec.open(path).report(out, overwrite=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    with pytest.raises(profcodec.FileError):
        profcodec.open(path).report(mine, overwrite=True)
    assert (mine / "notes.txt").read_text() == "keep"


def test_unknown_metric_is_a_query_error(tmp_path):
    with pytest.raises(profcodec.QueryError, match="no such metric"):
        profcodec.open(INPUTS[0]).report(tmp_path / "r", metric="nope")
    assert not (tmp_path / "r").exists()


def test_a_timeline_is_written_beside_the_page(tmp_path, cli):
    path = TESTDATA / "hpctoolkit" / "demo.d"
    ours = tmp_path / "py"
    profcodec.open(path).report(ours)
    converted = tmp_path / "trace.perfetto-trace"
    subprocess.run(
        [str(cli), "convert", "--to", "perfetto", "-o", str(converted), str(path)], check=True
    )
    assert (ours / "trace.perfetto-trace").read_bytes() == converted.read_bytes()
    assert 'href="trace.perfetto-trace"' in (ours / "index.html").read_text(encoding="utf-8")
