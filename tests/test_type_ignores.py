"""Every `# type: ignore` in the package names the error it silences and says why on its own
line, so a reader meets the reason where the checker is told to look away."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"
# `# type: ignore[code]  # the reason`
EXPLAINED = re.compile(r"# type: ignore\[[a-z-]+(?:, *[a-z-]+)*\]  # \S.*$")


def unexplained(text: str) -> list[int]:
    """Line numbers of `# type: ignore` without an error code and a reason on that line."""
    return [number for number, line in enumerate(text.splitlines(), 1)
            if "# type: ignore" in line and not EXPLAINED.search(line)]


def test_every_type_ignore_gives_its_reason_on_its_line() -> None:
    found = {str(path.relative_to(PACKAGE)): unexplained(path.read_text(encoding="utf-8"))
             for path in PACKAGE.rglob("*.py") if not path.name.endswith("_pb2.py")}
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_the_check_tells_the_forms_apart() -> None:
    assert unexplained("x = 1  # type: ignore[attr-defined]  # xDSL types it as Attribute") == []
    assert unexplained("x = 1  # type: ignore[attr-defined]") == [1]
    assert unexplained("x = 1  # type: ignore") == [1]
    assert unexplained("# the reason above\nx = 1  # type: ignore[misc]") == [2]
