"""README's key table is the one the bindings generate."""

from __future__ import annotations

from pathlib import Path

from workbench.tui.key_table import BEGIN, END, markdown

README = Path(__file__).parents[2] / "README.md"


def test_readme_key_table_equals_the_bindings() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    table = text[text.index(BEGIN):text.index(END) + len(END)]
    assert table == markdown(), "run `python -m workbench.tui.key_table` and paste its output"
    assert "| `y` | everywhere |" in table and "| `w` | Log |" in table
