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


def test_every_pane_key_is_in_the_table_with_its_pane() -> None:
    """Context keys too (arrows, `g`, `s`, `e`, Enter): each binding of a pane or of the widget
    it focuses, and each key of a manual bisection, has a row naming where it works."""
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.key_table import key_display, table_rows
    from workbench.tui.keys import all_bindings
    from workbench.tui.panes import LEFT_PANES, RIGHT_PANES

    rows = table_rows()

    def listed(key: str, where: str) -> bool:
        return any(f"`{key}`" in keys.split() and where in places.split(", ")
                   for keys, places, _ in rows)

    expected = [(key_display(b), "during a manual bisection (`B`)")
                for b in all_bindings(WorkbenchApp) if b.priority]
    for pane_type in (*LEFT_PANES, *RIGHT_PANES):
        pane = pane_type()
        expected += [(key_display(b), pane.TITLE) for b in
                     all_bindings(pane_type) + all_bindings(type(pane.focus_target()))]
    missing = [(key, where) for key, where in expected if not listed(key, where)]
    assert missing == []
    for key, where in [("←", "IR diff"), ("→", "IR diff"), ("⏎", "Timeline"), ("g", "Breaks"),
                       ("s", "Modules"), ("s", "Breaks"), ("e", "during a manual bisection (`B`)"),
                       ("g", "during a manual bisection (`B`)"), ("↑", "Breaks")]:
        assert (key, where) in expected and listed(key, where)
