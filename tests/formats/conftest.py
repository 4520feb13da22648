"""Corpus HLO text modules, parsed once per test session (several test files compare them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.formats.hlo_text import parse_hlo_text
from workbench.hlo_ir import HloModule

REPORTS = re.compile(r"buffer-assignment|memory-usage-report|live-range")


@pytest.fixture(scope="session")
def hlo_text_modules(corpus: Path) -> dict[Path, HloModule]:
    """Every HLO module text dump of the corpus (not the buffer/memory/live-range reports),
    parsed, keyed by path."""
    files = sorted(p for p in corpus.glob("xla*/**/*.txt") if not REPORTS.search(p.name))
    return {path: parse_hlo_text(path.read_text(), str(path)) for path in files}
