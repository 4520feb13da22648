"""The key reference page's table is the one the bindings generate."""

from __future__ import annotations

from pathlib import Path

from workbench.tui.key_table import BEGIN, END, markdown

PAGE = Path(__file__).parents[2] / "docs" / "reference" / "keys.md"


def test_key_page_table_equals_the_bindings() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    table = text[text.index(BEGIN):text.index(END) + len(END)]
    assert table == markdown(), "run `python docs/gen_reference.py`"
    assert "| `y` | everywhere |" in table and "| `w` | Log |" in table
