"""Input.report() against crafted profiles (HOSTILE.md classes 4 and 7): a statement at a huge
line number with its source beside the input is one row of the page, not a row per line number;
and a report over ``max_output`` is refused before a byte is written."""

import resource
import struct
import warnings

import pytest

import profcodec


def varint(v):
    """NYTProf's varint: the length in the first byte's prefix bits, big-endian after."""
    if v < 0x80:
        return bytes([v])
    if v < 0x4000:
        return bytes([0x80 | v >> 8, v & 0xFF])
    if v < 0x200000:
        return bytes([0xC0 | v >> 16, v >> 8 & 0xFF, v & 0xFF])
    if v < 0x10000000:
        return bytes([0xE0 | v >> 24, v >> 16 & 0xFF, v >> 8 & 0xFF, v & 0xFF])
    return bytes([0xFF]) + v.to_bytes(4, "big")


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
    page = (out / "index.html").read_text()
    rows = [int(chunk.split('"', 1)[0]) for chunk in page.split('<tr data-line="')[1:]]
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
