"""IrView: a 6,000-line document renders only what is visible; hunks, search, side by side."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from tests.helpers.caught_up import HandlingPilot, caught_up
from workbench.tui.ir_view import (
    MAX_LINE_CHARS,
    IrView,
    Listing,
    TextRow,
    ViewDocument,
    clipped,
    text_document,
)


class ViewApp(App[None]):
    def __init__(self, document: ViewDocument) -> None:
        super().__init__()
        self.view = IrView()
        self.document = document

    def compose(self) -> ComposeResult:
        yield self.view

    def on_mount(self) -> None:
        self.view.show(self.document)
        self.view.focus()


def test_large_text_scrolls_and_searches(lines) -> None:
    text = "\n".join(f"  %add.{i} = f32[8]{{0}} add(%p.{i}, %q.{i})" for i in range(6000))
    app = ViewApp(text_document(text))

    async def main() -> None:
        async with app.run_test(size=(60, 20)):
            pilot = HandlingPilot(app)
            await caught_up(pilot)
            view = app.view
            assert lines(view)[0].startswith("   1   %add.0 = ")
            for _ in range(50):
                await pilot.press("pagedown")
            assert int(view.scroll_offset.y) == min(50 * (view.size.height - 1), 6000 - 20)
            view.search = "%add.5999 "
            await caught_up(pilot)
            assert view.match_count == 1
            assert any("%add.5999 " in line for line in lines(view))
            await pilot.press("g", "n")
            assert view.current_row == 5999

    asyncio.run(main())


def test_hunks_and_side_by_side(lines) -> None:
    same = TextRow("same", "1 1 ", "a")
    rows = [(same, same)] * 10 + [(TextRow("removed", "2   ", "b"), TextRow("added", "  2 ", "c"))]
    rows += [(same, same)] * 30 + [(TextRow("blank", "", ""), TextRow("added", "  3 ", "d"))]
    app = ViewApp(ViewDocument(rows, side_by_side=True, hunks=[10, 41]))

    async def main() -> None:
        async with app.run_test(size=(40, 10)):
            pilot = HandlingPilot(app)
            await caught_up(pilot)
            view = app.view
            await pilot.press("right_square_bracket")
            assert view.current_row == 10
            row = lines(view)[10 - int(view.scroll_offset.y)]
            left, right = row.split("│")
            assert left.strip() == "2   b" and right.strip() == "2 c"
            await pilot.press("right_square_bracket")
            assert view.current_row == 41
            await pilot.press("right_square_bracket")  # wraps around
            assert view.current_row == 10
            await pilot.press("left_square_bracket")
            assert view.current_row == 41

    asyncio.run(main())


def test_a_line_of_megabytes_is_shown_cut_and_says_so(lines) -> None:
    huge = "x" * 50_000_000  # one 50 MB line, as a damaged or hostile file can hold
    document = text_document(f"first\n{huge}\nlast")
    assert document.rows[1].text.endswith("… (49,990,000 more characters not shown)")
    assert document.text_width < 20_000  # measured on the shown part only
    app = ViewApp(document)

    async def main() -> None:
        async with app.run_test(size=(60, 10)):
            pilot = HandlingPilot(app)
            await caught_up(pilot)
            shown = lines(app.view)
            assert shown[0].rstrip().endswith("first") and shown[2].rstrip().endswith("last")
            assert shown[1].startswith("2 xxxx")

    asyncio.run(main())


def eager_rows(text: str) -> list[TextRow]:
    """Every row of a listing made at once, as the view showed them before listings became
    lazy: the reference a `Listing` must equal."""
    lines = text.splitlines()
    digits = len(str(len(lines)))
    return [TextRow("text", f"{n:>{digits}} ", clipped(line).expandtabs())
            for n, line in enumerate(lines, 1)]


def test_listings_equal_every_row_made_at_once() -> None:
    texts = [
        "",
        "one line",
        "HloModule m\n\nENTRY main {\n  ROOT p = f32[] parameter(0)\n}\n",
        "tabs\there\r\nand CRLF\r\nend",
        "a control \x1b]0;title\x07 and DEL \x7f\nnext",
        "wide 漢字 characters\nand ascii",
        "x" * (MAX_LINE_CHARS + 5) + "\nshort",
        "x" * MAX_LINE_CHARS + "\nshort",
        "\n".join(f"line {i}" for i in range(1234)),
    ]
    for text in texts:
        document = text_document(text)
        rows = document.rows
        assert isinstance(rows, Listing)
        expected = eager_rows(text)
        assert list(rows) == expected, text[:40]
        assert len(rows) == len(expected)
        assert [rows[i] for i in range(-len(expected), len(expected))] == expected * 2
        assert rows[1:4] == expected[1:4] and rows[::-3] == expected[::-3]
        assert document.text_width == ViewDocument(expected).text_width, text[:40]
        for term in ("a", "line 12", "\u241b", "漢", "x" * 20, "zzz"):
            assert rows.find(term) == [i for i, row in enumerate(expected)
                                       if term in row.text.lower()], (text[:40], term)
