"""Input.report() against crafted profiles (HOSTILE.md classes 4 and 7): a statement at a huge
line number with its source beside the input is one row of the page, not a row per line number;
deep chains of long names (600 nested EasyProfiler blocks of a 10 KB name, an 8,000-deep NYTProf
chain) cost their size, not depth squared; and a report over ``max_output`` is refused before a
byte is written."""

import os
import resource
import shutil
import struct
import subprocess
import sys
import warnings

import pytest

import profcodec
from conftest import nytprof_varint as varint


def statement_at(name, line):
    """A NYTProf profile whose one timed statement lies at ``line`` of the file ``name``."""
    out = bytearray(b"NYTProf 5 0\n:ticks_per_sec=10000000\n:nv_size=8\n")
    out += b"P" + varint(7) + varint(1) + struct.pack("<d", 1.0)
    encoded = name.encode()
    out += b"@" + b"".join(varint(v) for v in (1, 0, 0, 0x2, 0, 0))
    out += b"'" + varint(len(encoded)) + encoded
    out += b"+" + varint(5000) + varint(1) + varint(line)
    out += b"p" + varint(7) + struct.pack("<d", 2.0)
    return bytes(out)


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("line", [1_000_000, 2**31 - 1, 4_000_000_000])
def test_a_statement_at_a_huge_line_number_is_one_row(tmp_path, line):
    folder = tmp_path / "input"
    folder.mkdir()
    (folder / "prog.pl").write_text("my $x = 1;\nmy $y = 2;\nprint $x + $y;\n")
    path = folder / "nytprof.out"
    path.write_bytes(statement_at(str(folder / "prog.pl"), line))
    before = peak_rss_mib()
    out = tmp_path / "report"
    with warnings.catch_warnings():
        # Where each source's text came from is said by a warning: not the question here.
        warnings.simplefilter("ignore")
        profcodec.open(path).report(out)
    # A row per line number took 411 MB at line 10^6 and aborted beyond.
    assert peak_rss_mib() - before < 200
    # The source rows, on whichever page of the report shows the file.
    pages = [p.read_text() for p in sorted(out.rglob("*.html"))]
    rows = [int(c.split('"', 1)[0]) for page in pages for c in page.split('<tr data-line="')[1:]]
    assert rows == [1, 2, 3, line]


def test_a_report_over_max_output_is_refused_before_writing(tmp_path):
    folder = tmp_path / "input"
    folder.mkdir()
    path = folder / "nytprof.out"
    path.write_bytes(statement_at("prog.pl", 1))
    out = tmp_path / "report"
    with pytest.raises(profcodec.UnsupportedError, match="over the output budget"):
        profcodec.open(path).report(out, max_output=1000)
    assert not out.exists()
    profcodec.open(path).report(out, max_output=64 << 20)
    assert (out / "index.html").is_file()


def report_peak_mib(path, out):
    """Input.report() of ``path`` into ``out`` in a fresh interpreter: its peak resident memory
    (MiB), which sees the Rust allocations tracemalloc does not. Linux's VmHWM, not ru_maxrss:
    a child keeps the ru_maxrss of the process it was forked from (here pytest's) across exec."""
    script = (
        "import re, resource, sys, warnings\n"
        "import profcodec\n"
        "warnings.simplefilter('ignore')\n"
        "profcodec.open(sys.argv[1]).report(sys.argv[2])\n"
        "try:\n"
        "    status = open('/proc/self/status').read()\n"
        "    print(re.search(r'VmHWM:\\s*(\\d+) kB', status).group(1))\n"
        "except OSError:\n"
        "    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1]) / 1024


def test_six_hundred_nested_blocks_of_a_10_kb_name(testdata, tmp_path):
    # 24 KB: easyprofiler_deep(600, 10_000) of benches/src/hostile.rs, kept current by
    # crates/profcodec/tests/report_hostile.rs (PROFCODEC_BLESS=1 writes it again).
    path = testdata / "hostile" / "easyprofiler_deep_600.prof"
    assert path.stat().st_size < 32 << 10
    out = tmp_path / "report"
    # Every node's whole folded path (twice) was 600 x 600 x 10 KB and aborted the interpreter.
    peak = report_peak_mib(path, out)
    assert peak < 256, f"peak resident memory {peak:.0f} MiB"
    written = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    assert written < 64 << 20, f"{written} bytes written"
    assert "n" * 10_000 in (out / "index.html").read_text()


def chain_program(depth):
    """A Perl program of ``depth`` subs with long names, each calling the next once."""
    name = lambda i: f"Some::Package::Name::sub_{i:020}"
    lines = [f"sub {name(i)} {{ {name(i + 1)}() }}" for i in range(depth - 1)]
    lines.append(f"sub {name(depth - 1)} {{ my $x = 0; $x += $_ for 1 .. 1000; $x }}")
    lines.append(f"{name(0)}();")
    return "\n".join(lines) + "\n"


def test_an_8000_deep_nytprof_chain(tmp_path):
    if shutil.which("perl") is None or subprocess.run(
        ["perl", "-MDevel::NYTProf::Data", "-e", "1"], capture_output=True
    ).returncode:
        pytest.skip("perl with Devel::NYTProf is not installed (Debian: libdevel-nytprof-perl)")
    program = tmp_path / "chain.pl"
    program.write_text(chain_program(8000))
    path = tmp_path / "nytprof.out"
    subprocess.run(
        ["perl", "-d:NYTProf", str(program)],
        env={**os.environ, "NYTPROF": f"file={path}:compress=0"},
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = tmp_path / "report"
    peak = report_peak_mib(path, out)
    assert peak < 256, f"peak resident memory {peak:.0f} MiB"
    page = (out / "index.html").read_text()
    assert f"sub_{7999:020}" in page
