"""Shared fixtures: the real dump corpus copied into tests/data/corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"


@pytest.fixture(scope="session")
def corpus() -> Path:
    return CORPUS
