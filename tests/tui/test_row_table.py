"""RowTable: virtualized rows, keyed cursor, narrow columns, navigation keys."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from tests.helpers.caught_up import HandlingPilot, caught_up
from workbench.tui.row_table import Column, RowTable, fit


class TableApp(App[None]):
    def __init__(self, rows: list[int]) -> None:
        super().__init__()
        self.highlighted: list[str | None] = []
        self.table: RowTable[int] = RowTable(
            [Column("n", 6, align="right"), Column("name", flex=True),
             Column("wide", 6, min_width=40)],
            row_key=str, render_row=lambda n: [(str(n), ""), (f"row {n}", ""), ("w", "")],
        )
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield self.table

    def on_mount(self) -> None:
        self.table.set_rows(self.rows)
        self.table.focus()

    def on_row_table_highlighted(self, event: RowTable.Highlighted) -> None:
        self.highlighted.append(event.key)


def test_only_visible_rows_render_and_the_cursor_is_keyed(lines) -> None:
    rows = list(range(100_000))
    app = TableApp(rows)

    async def main() -> None:
        async with app.run_test(size=(30, 12)):
            pilot = HandlingPilot(app)
            await caught_up(pilot)
            table = app.table
            shown = lines(table)
            assert shown[0].split() == ["n", "name"]  # `wide` hidden below 40 cells
            assert shown[1].split() == ["0", "row", "0"]
            await pilot.press("G")
            assert table.current == 99_999
            assert lines(table)[-1].split() == ["99999", "row", "99999"]
            await pilot.press("k", "k", "ctrl+u")
            assert table.current == 99_997 - (table.size.height - 1) // 2
            key = table.current_key
            table.set_rows(list(reversed(rows)))  # the cursor follows its key
            await caught_up(pilot)
            assert table.current_key == key
            table.set_rows([1, 2, 3])  # gone: the cursor stays in range
            await caught_up(pilot)
            assert table.current in (1, 2, 3)
            await pilot.press("g", "j")
            await caught_up(pilot)
            assert app.highlighted[-1] == "2"

    asyncio.run(main())


def test_fit() -> None:
    assert fit("abcdef", 4) == "abc…"
    assert fit("ab", 4, "right") == "  ab"
    assert fit("ab", 4) == "ab  "
    assert fit("ab", 0) == ""


def test_a_name_that_is_not_utf8_takes_its_cells(lines) -> None:
    """A module named with the byte 0xff (Python hands it over as U+DCFF): the screen shows
    U+FFFD in one cell, and the columns after it stay in place."""
    app = TableApp([1, 2])
    app.table.render_row = lambda n: [(str(n), ""), (f"jit\udcff{n}" if n == 1 else f"jit_{n}",
                                                      ""), ("w", "")]

    async def main() -> None:
        async with app.run_test(size=(30, 12)):
            pilot = HandlingPilot(app)
            await caught_up(pilot)
            first, second = lines(app.table)[1:3]
            assert "jit\ufffd1" in first and "\\udc" not in repr(first)
            assert len(first) == len(second)
            assert first.index("jit") == second.index("jit")

    asyncio.run(main())
