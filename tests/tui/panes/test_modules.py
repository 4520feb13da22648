"""Modules pane: rows, badges, helper hiding, fuzzy filter, sort."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.model import Module
from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.modules import ModulesPane, is_helper_module
from workbench.tui.panes.timeline import TimelinePane
from workbench.tui.row_table import RowTable


def test_helpers_hidden_then_shown_filter_and_sort(example: Path, drive, wait, lines) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        pane = app.pane(ModulesPane)
        table = pane.table
        assert [m.name for m in table.rows] == ["jit_ln"]
        assert "6 helpers hidden" in str(pane.border_title)
        shown = lines(table)
        assert shown[0].split() == ["id", "module", "steps", "ex"]
        assert shown[1].split() == ["·", "0010", "jit_ln", "39", "1"]  # · = not replayed

        await pilot.press("t")
        assert len(table.rows) == 7
        assert table.current_key == "module_0010"  # the cursor stayed on its module

        await pilot.press("s")  # by name
        names = [m.name for m in table.rows]
        assert names == sorted(names)

        await pilot.press("slash", *"cnvrt")
        assert [m.name for m in table.rows] == ["jit_convert_element_type"]
        await pilot.press("enter")
        assert table.has_focus
        await pilot.press("slash", "escape")
        assert len(table.rows) == 7

    drive(app, scenario)


def test_moving_the_cursor_selects_the_module(example: Path, drive, wait) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        assert app.module is not None and app.module.name == "jit_ln"
        await pilot.press("t", "g")
        await wait(pilot)
        rows = app.pane(ModulesPane).table.rows
        assert app.module is not None and app.module.key == rows[0].key == "module_0000"
        await pilot.press("j")
        await wait(pilot)
        assert app.module is not None and app.module.key == rows[1].key

    drive(app, scenario)


def test_a_resting_module_move_survives_the_timeline_moving(
        example: Path, drive, wait, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded module moves the timeline's cursor, whose announcement may reach the app (a
    busy machine, a live update) while the next module move still rests: it must not cancel
    that move, or the panes show the old module under the new cursor."""
    app = WorkbenchApp(example, watch=False)
    handle = WorkbenchApp.on_row_table_highlighted

    def then_the_timeline_announces(self: WorkbenchApp, event: RowTable.Highlighted) -> None:
        handle(self, event)
        timeline = self.pane(TimelinePane).table
        if event.table.id == "modules-table":
            handle(self, RowTable.Highlighted(timeline, timeline.current_key))

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("t", "g")
        await wait(pilot)
        monkeypatch.setattr(WorkbenchApp, "on_row_table_highlighted",
                            then_the_timeline_announces)
        await pilot.press("j")
        await wait(pilot)
        rows = app.pane(ModulesPane).table.rows
        assert app.module is not None and app.module.key == rows[1].key

    drive(app, scenario)


def test_helper_names(example: Path) -> None:
    from workbench.index import scan

    helpers = {m.name for m in scan(example).modules if is_helper_module(m)}
    assert helpers == {"jit_iota", "jit_reshape", "jit_true_divide", "jit_convert_element_type",
                       "jit_broadcast_in_dim", "jit__reduce_sum"}


def test_a_users_program_is_never_a_helper() -> None:
    """JAX's internal helpers by name; a lambda or a user's own `_step` is the user's."""
    for name in ("jit__lambda", "jit__step", "jit__train_step", "jit_f", "jit_mlp"):
        assert not is_helper_module(Module(id="module_0001", name=name, format="xla")), name
    for name in ("jit__normal", "jit__threefry_seed", "jit__reduce_max", "jit__roll_static",
                 "jit__cumsum_with_promotion", "jit_true_divide"):
        assert is_helper_module(Module(id="module_0001", name=name, format="xla")), name
