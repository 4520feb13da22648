"""The architecture page (docs/architecture.md) names every package and top-level module of the
code, and names none that is gone: it is redrawn when the code moves."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "workbench"
NOT_ARCHITECTURE = {"__init__", "__main__"}


def architecture_section() -> str:
    return (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def named_in(section: str) -> set[str]:
    """The code named in the section: `pkg/`, `pkg/sub/`, `module` and `pkg/module.py` words."""
    words = set(re.findall(r"[a-z_]+(?:/[a-z_]+)*/?(?:\.py)?", section))
    return {w.removesuffix(".py").rstrip("/") for w in words}


def in_the_code() -> set[str]:
    names = {p.stem for p in PACKAGE.glob("*.py")} - NOT_ARCHITECTURE
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    names |= {f"replay/{p.name}" for p in (PACKAGE / "replay").iterdir()
              if (p / "__init__.py").exists()}
    return names


def test_every_package_and_module_is_on_the_architecture_page() -> None:
    code = in_the_code()
    assert {"replay", "replay/judge", "replay/localize", "index"} <= code
    assert sorted(code - named_in(architecture_section())) == []


def test_every_path_the_page_names_exists() -> None:
    section = architecture_section()
    paths = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+(?:/|\.py))`", section))
    assert len(paths) > 20
    # Relative to the package, to `replay/` (its own list), to the tests, or to the repository.
    places = (PACKAGE, PACKAGE / "replay", ROOT / "tests", ROOT)
    missing = sorted(p for p in paths if not any((place / p).exists() for place in places))
    assert missing == []
