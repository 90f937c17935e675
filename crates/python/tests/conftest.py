"""Where the tests find their inputs.

- The shared corpus: ``PROFCODEC_CORPUS`` when set (it must then exist: CI cannot pass by
  skipping the real files), else ``../shared/corpus`` beside the repository when present; when
  absent, the corpus tests are skipped with a message.
- hatchet: ``PROFCODEC_PYTEST_STRICT=1`` (set by ``cargo xtask test``) makes a missing hatchet a
  failure; otherwise the tests that compare with hatchet are skipped when it is not installed.
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
