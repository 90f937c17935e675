"""Where the tests find their inputs.

- The shared corpus: ``PROFCODEC_CORPUS`` when set (it must then exist: CI cannot pass by
  skipping the real files), else ``../shared/corpus`` beside the repository when present; when
  absent, the corpus tests are skipped with a message.
- hatchet: ``PROFCODEC_PYTEST_STRICT=1`` (set by ``cargo xtask test``) makes a missing hatchet a
  failure; otherwise the tests that compare with hatchet are skipped when it is not installed.
- The command line whose ``convert`` and ``sql`` the package must equal: ``PROFCODEC_CLI`` (set
  by ``cargo xtask test``), else ``target/debug/profcodec`` when built; skipped when absent,
  a failure under ``PROFCODEC_PYTEST_STRICT=1``.
- pyarrow (for ``Input.tables()``): skipped when not installed, a failure when strict.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
STRICT = os.environ.get("PROFCODEC_PYTEST_STRICT") == "1"


def corpus_dir():
    configured = os.environ.get("PROFCODEC_CORPUS")
    if configured:
        path = Path(configured)
        assert path.is_dir(), f"PROFCODEC_CORPUS={configured} is set but is not a folder"
        return path
    path = REPO.parent / "shared" / "corpus"
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def corpus():
    path = corpus_dir()
    if path is None:
        if STRICT:
            pytest.fail("the shared corpus is missing (PROFCODEC_CORPUS unset, ../shared absent)")
        pytest.skip("corpus tests not run: PROFCODEC_CORPUS is unset and ../shared/corpus is absent")
    return path


@pytest.fixture(scope="session")
def hatchet():
    try:
        import hatchet
    except ImportError:
        if STRICT:
            raise
        pytest.skip("hatchet is not installed (pip install llnl-hatchet)")
    return hatchet


@pytest.fixture(scope="session")
def testdata():
    return REPO / "testdata"


@pytest.fixture(scope="session")
def cli():
    configured = os.environ.get("PROFCODEC_CLI")
    path = Path(configured) if configured else REPO / "target" / "debug" / "profcodec"
    if not path.is_file():
        if STRICT or configured:
            pytest.fail(f"the profcodec command line is missing at {path}")
        pytest.skip("the profcodec command line is not built (cargo build -p profcodec-cli)")
    return path


@pytest.fixture(scope="session")
def pyarrow():
    try:
        import pyarrow
    except ImportError:
        if STRICT:
            raise
        pytest.skip("pyarrow is not installed (pip install pyarrow)")
    return pyarrow


def nytprof_varint(v):
    """NYTProf's varint, for the profiles tests craft byte by byte: the length in the first
    byte's prefix bits, big-endian after."""
    if v < 0x80:
        return bytes([v])
    if v < 0x4000:
        return bytes([0x80 | v >> 8, v & 0xFF])
    if v < 0x200000:
        return bytes([0xC0 | v >> 16, v >> 8 & 0xFF, v & 0xFF])
    if v < 0x10000000:
        return bytes([0xE0 | v >> 24, v >> 16 & 0xFF, v >> 8 & 0xFF, v & 0xFF])
    return bytes([0xFF]) + v.to_bytes(4, "big")
