"""Binaries made to hurt name lookup, found through ``binary_path`` for a real measurement
(HOSTILE.md classes 5, 6 and 8 through Python): compressed debugging sections that claim
gigabytes, a 2 GiB file named as the program, DWARF nested 20,000 deep, and a program that
is not proven to be the one that ran. Each is refused or bounded with a warning that says why;
the interpreter lives, and its memory does not follow the claims.

The binaries are written here byte by byte: an ELF64 shared library for AArch64 (no call-site
check on its return addresses) whose code section and one function span every address the
measurement records, so that lookups reach its DWARF."""

import resource
import shutil
import struct
import zlib

import pytest

import profcodec

MEASUREMENT = ("hpctoolkit", "meas", "small.m")
# The load module small.m records for its program.
PROGRAM = "testmeas-small"
SPAN = 1 << 40


def section_header(name, kind, flags, offset, size, link=0, info=0, entsize=0, addr=0):
    return struct.pack("<IIQQQQIIQQ", name, kind, flags, addr, offset, size, link, info, 1, entsize)


def elf(debug):
    """An ELF64 AArch64 shared library: ``.text`` and a function ``work`` over [1, 2^40), and
    the sections ``debug``: (name, bytes, SHF_COMPRESSED)."""
    strtab = b"\0work\0"
    symtab = bytes(24) + struct.pack("<IBBHQQ", 1, 0x12, 0, 1, 1, SPAN - 1)
    sections = [(".symtab", 2, 0, symtab, 3, 1, 24), (".strtab", 3, 0, strtab, 0, 0, 0)]
    sections += [(name, 1, 0x800 if packed else 0, data, 0, 0, 0) for name, data, packed in debug]
    names = b"\0.text\0" + b"".join(s[0].encode() + b"\0" for s in sections) + b".shstrtab\0"
    body = bytearray(64)
    headers = [bytes(64), section_header(1, 1, 0x6, 0, SPAN)]  # .text: PROGBITS, ALLOC|EXEC
    at = 7
    for name, kind, flags, data, link, info, entsize in sections:
        headers.append(section_header(at, kind, flags, len(body), len(data), link, info, entsize))
        at += len(name) + 1
        body += data
    headers.append(section_header(at, 3, 0, len(body), len(names)))
    body += names
    shoff = len(body)
    body += b"".join(headers)
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    header = struct.pack(
        "<16sHHIQQQIHHHHHH", ident, 3, 183, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(headers),
        len(headers) - 1,
    )
    body[:64] = header
    return bytes(body)


def uleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def nested_dwarf(depth):
    """``.debug_abbrev`` and ``.debug_info`` (DWARF 4): a unit and a subprogram ``deep`` over
    the code, with ``depth`` inlined subroutines nested in one another."""
    addr, data8, string = 0x01, 0x07, 0x08
    span = [(0x11, addr), (0x12, data8)]

    def abbrev(code, tag, attrs):
        return bytes([code, tag, 1]) + b"".join(bytes([a, f]) for a, f in attrs) + b"\0\0"

    abbrevs = abbrev(1, 0x11, span) + abbrev(2, 0x2E, [(0x03, string)] + span)
    abbrevs += abbrev(3, 0x1D, span) + b"\0"
    pc = struct.pack("<QQ", 0, SPAN)
    dies = b"\x01" + pc + b"\x02deep\0" + pc + (b"\x03" + pc) * depth + bytes(depth + 2)
    info = struct.pack("<IHIB", len(dies) + 7, 4, 0, 8) + dies
    return [(".debug_abbrev", abbrevs, False), (".debug_info", info, False)]


def chdr(kind, claimed, payload):
    return struct.pack("<IIQQ", kind, 0, claimed, 1) + payload


def zstd_rle_bomb(blocks):
    """A zstd frame of ``blocks`` RLE blocks of 128 KiB each: 4 bytes per 128 KiB."""
    frame = b"\x28\xb5\x2f\xfd" + b"\x00" + b"\x38"  # no content size; a 128 KiB window
    block = lambda last: ((128 * 1024) << 3 | 1 << 1 | last).to_bytes(3, "little") + b"\0"
    return frame + b"".join(block(0) for _ in range(blocks - 1)) + block(1)


def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def lookup(corpus, folder):
    """The measurement's profile with binaries searched in ``folder``, what was said, and how
    much the peak memory grew (KiB).

    The measurement is read from a copy without its ``structs`` folder: hpcstruct's file there
    names every address the measurement records, and names from a binary are only used for
    addresses it leaves unnamed."""
    measurement = folder.parent / MEASUREMENT[-1]
    if not measurement.exists():
        shutil.copytree(
            corpus.joinpath(*MEASUREMENT), measurement, ignore=shutil.ignore_patterns("structs")
        )
    before = peak_kib()
    with pytest.warns(UserWarning) as caught:
        profile = profcodec.open(measurement).profile(binary_path=[folder])
    return profile, [str(w.message) for w in caught], peak_kib() - before


def put(folder, data):
    folder.mkdir(exist_ok=True)
    (folder / PROGRAM).write_bytes(data)
    return folder


@pytest.mark.parametrize("kind", ["zlib", "zstd"])
def test_a_compressed_section_bomb_is_refused_before_it_inflates(corpus, tmp_path, kind):
    payload = zlib.compress(bytes(48 << 20), 9) if kind == "zlib" else zstd_rle_bomb(12_000)
    bomb = chdr(1 if kind == "zlib" else 2, 1_900_000_000, payload)
    folder = put(tmp_path / "bin", elf(nested_dwarf(1) + [(".debug_str", bomb, True)]))
    profile, said, grew = lookup(corpus, folder)
    refused = [m for m in said if "decompression bomb" in m]
    assert len(refused) == 1, said
    assert "no file or line for" in refused[0] and ".debug_str" in refused[0]
    assert grew < 200 * 1024, f"peak memory grew {grew} KiB"
    # The symbol table still names the addresses.
    assert any(r["name"] == "work" for r in profile.top(limit=None).rows)


def test_a_2_gib_file_named_as_the_program_is_refused_unread(corpus, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    with open(folder / PROGRAM, "wb") as f:
        f.truncate(2 << 30)
    _, said, grew = lookup(corpus, folder)
    assert any("not an ELF file" in m and str(folder / PROGRAM) in m for m in said), said
    assert grew < 100 * 1024, f"peak memory grew {grew} KiB"


def test_dwarf_nested_20000_deep_is_refused_not_recursed(corpus, tmp_path):
    folder = put(tmp_path / "bin", elf(nested_dwarf(20_000)))
    profile, said, _ = lookup(corpus, folder)
    deep = [m for m in said if "nests its entries deeper than 256" in m]
    assert len(deep) == 1, said
    names = {r["name"] for r in profile.top(limit=None).rows}
    assert "work" in names and "deep" not in names


def test_names_from_a_binary_without_a_build_id_are_said_to_be_unverified(corpus, tmp_path):
    # DWARF that names every address `deep`: used, and said to be unverified, once.
    folder = put(tmp_path / "bin", elf(nested_dwarf(0)))
    profile, said, _ = lookup(corpus, folder)
    unverified = [m for m in said if m.startswith("names from an unverified binary: ")]
    assert len(unverified) == 1, said
    assert str(folder / PROGRAM) in unverified[0] and "no build id was recorded" in unverified[0]
    assert any(r["name"] == "deep" for r in profile.top(limit=None).rows)
