"""In the IR diff: `:` jumps to a line, `Y` copies the change at the top of the view; `<` and
`>` move the split between the left and right panes for the rest of the session."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.tui.app import SPLIT_STEP, WorkbenchApp
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.timeline import TimelinePane


async def on_step(pilot: Pilot, row: int, wait, until) -> DiffPane:  # type: ignore[no-untyped-def]  # pytest's fixtures, passed untyped
    """The diff of the timeline's `row`, loaded and focused."""
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]  # Pilot.app is typed as a plain App
    pane = app.pane(DiffPane)
    await pilot.press("3")
    app.pane(TimelinePane).table.move_to(row)
    await wait(pilot)
    await until(pilot, lambda: pane.request is not None and pane.shown_step is not None)
    await pilot.press("4")
    return pane


def newer_line(gutter: str) -> int:
    """The newer text's line number in a unified row's gutter (`  a  b   `, `     b + `)."""
    words = gutter.split()
    return int(words[1] if len(words) == 2 and words[1].isdigit() else words[0])


def test_colon_jumps_to_a_line_of_the_newer_step(example: Path, drive, wait, until) -> None:
    app = WorkbenchApp(example, watch=False)
    said: list[str] = []
    app.notify = lambda message, **kw: said.append(message)  # type: ignore[method-assign]  # a test's stand-in for the method

    async def scenario(pilot: Pilot) -> None:
        pane = await on_step(pilot, 30, wait, until)
        view = pane.view
        assert view.document.hunks  # a diff, not one text
        shown = sorted(newer_line(r.gutter) for r in view.document.rows if r.kind != "removed")
        hidden = next(n for n in range(1, shown[-1]) if n not in shown)  # normalized away
        for asked, line in ((shown[-3], shown[-3]), (hidden, min(n for n in shown if n > hidden))):
            await pilot.press("colon", *str(asked), "enter")
            await wait(pilot)
            row = view.current_row
            assert row is not None and newer_line(view.document.rows[row].gutter) == line
            assert view.scroll_offset.y <= row < view.scroll_offset.y + view.size.height
            assert app.focused is view and not pane.line_box.is_open
            assert f"line {line}" in str(pane.header.render())
        await pilot.press("colon", "x", "enter")
        assert said[-1] == "not a line number: x" and app.focused is view
        await pilot.press("colon", *"99999", "enter")
        assert said[-1] == "no line 99999: the text is shorter"
        await pilot.press("colon", "escape")  # closed, nothing typed later lands in it
        await pilot.press("8", "4", "5")
        assert not pane.line_box.is_open and pane.line_box.value == ""

    drive(app, scenario, size=(120, 40))


def test_shift_y_in_the_diff_copies_the_change_at_the_top(
    example: Path, drive, wait, until
) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = await on_step(pilot, 30, wait, until)
        view = pane.view
        hunks = view.document.hunks
        assert len(hunks) >= 2
        await pilot.press("right_square_bracket", "right_square_bracket")  # the second change
        assert view.current_row == hunks[1]
        await pilot.press("Y")
        copied = app.clipboard.splitlines()
        assert copied and all(line[:1] in "-+" for line in copied)
        rows = view.document.rows
        end = hunks[1] + len(copied)
        shown = [("-" if r.kind == "removed" else "+") + r.text for r in rows[hunks[1] : end]]
        assert copied == shown  # exactly the change's rows
        assert rows[end].kind not in ("added", "removed")
        assert "+" in {line[0] for line in copied}

    drive(app, scenario, size=(120, 40))


def test_shift_y_without_a_change_copies_the_last_finding(
    example: Path, drive, wait, until
) -> None:
    app = WorkbenchApp(example, watch=False)
    said: list[str] = []
    app.notify = lambda message, **kw: said.append(message)  # type: ignore[method-assign]  # a test's stand-in for the method

    async def scenario(pilot: Pilot) -> None:
        pane = await on_step(pilot, 0, wait, until)
        assert not pane.view.document.hunks
        await pilot.press("Y")
        assert said[-1].startswith("nothing to copy yet") and app.clipboard == ""

    drive(app, scenario, size=(120, 40))


def test_the_split_moves_and_holds(example: Path, drive, wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        left = app.screen.query_one("#left")
        right = app.screen.query_one("#right")
        start = left.outer_size.width
        await pilot.press("greater_than_sign", "greater_than_sign")
        await wait(pilot)
        wider = left.outer_size.width
        assert wider > start and app.split is not None
        assert abs(wider - 120 * app.split / 100) <= 1
        assert left.outer_size.width + right.outer_size.width == 120
        for _ in range(30):  # narrows down to its limit, no further
            await pilot.press("less_than_sign")
        await wait(pilot)
        narrow = left.outer_size.width
        assert 0 < narrow < start and app.split == 15
        await pilot.press("z", "z")  # a zoom and back keeps it
        await pilot.resize_terminal(100, 30)  # so does a resize, as a share of the width
        await wait(pilot)
        assert abs(left.outer_size.width - 100 * 15 / 100) <= 1
        await pilot.press("greater_than_sign")
        assert app.split == 15 + SPLIT_STEP

    drive(app, scenario, size=(120, 40))
