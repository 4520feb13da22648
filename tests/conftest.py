"""Shared fixtures: the real dump corpus copied into tests/data/corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"


@pytest.fixture(scope="session")
def corpus() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def iree_tools() -> None:
    """Skip the test when the IREE runtime tools are not on PATH (they come with an extra)."""
    missing = [t for t in ("iree-dump-replay", "iree-run-replay") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not on PATH: pip install '.[iree]' to run this test")
