"""Every type-ignore comment in the project (the package, its tests, benchmarks and scripts) names
the error it silences and says why on its own line, so a reader meets the reason where the
checker is told to look away."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("workbench", "tests", "benchmarks", "docs", "examples")
IGNORE = "# type: " "ignore"  # spelled apart, so this file's own examples are not counted
# `# type: ignore[code]  # the reason`
EXPLAINED = re.compile(IGNORE + r"\[[a-z-]+(?:, *[a-z-]+)*\]  # \S.*$")


def unexplained(text: str) -> list[int]:
    """Line numbers of type-ignore comments without an error code and a reason on that line."""
    return [number for number, line in enumerate(text.splitlines(), 1)
            if IGNORE in line and not EXPLAINED.search(line)]


def test_every_type_ignore_gives_its_reason_on_its_line() -> None:
    files = [path for folder in CODE for path in (ROOT / folder).rglob("*.py")
             if not path.name.endswith("_pb2.py")]
    assert len(files) > 400  # the whole project, not a folder that moved
    found = {str(path.relative_to(ROOT)): unexplained(path.read_text(encoding="utf-8"))
             for path in files}
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_the_check_tells_the_forms_apart() -> None:
    assert unexplained(f"x = 1  {IGNORE}[attr-defined]  # xDSL types it as Attribute") == []
    assert unexplained(f"x = 1  {IGNORE}[attr-defined]") == [1]
    assert unexplained(f"x = 1  {IGNORE}") == [1]
    assert unexplained(f"# the reason above\nx = 1  {IGNORE}[misc]") == [2]
