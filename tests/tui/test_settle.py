"""The TUI tests' waits hold on a starved machine: a key press returns once the key has been
handled, and `settle` returns once the selection it caused has loaded, however long the
event loop takes to turn. A loop whose every turn costs more than the app's timers stands
in for a machine where the test's process is descheduled again and again."""

from __future__ import annotations

import asyncio
import selectors
import time
from pathlib import Path

from textual import events
from textual.pilot import Pilot

from workbench.tui.app import MODULE_DELAY, WorkbenchApp
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.timeline import TimelinePane


class LaggingSelector(selectors.DefaultSelector):
    """Every turn of an event loop on this selector lasts at least `lag` seconds of wall time,
    so timers expire while the messages they raced wait for the next turns."""

    lag = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if self.lag:
            time.sleep(self.lag)
            timeout = None if timeout is None else max(0.0, timeout - self.lag)
        return super().select(timeout)


def test_keys_and_selections_are_waited_for_on_a_starved_loop(example: Path, drive,
                                                              wait) -> None:
    selector = LaggingSelector()
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        table = app.pane(ModulesPane).table
        selector.lag = MODULE_DELAY  # from here on, every turn outlasts the selection delay
        await pilot.press("t")
        assert len(table.rows) == 7  # the key's binding ran before `press` returned
        app.post_message(events.Key("g", "g"))  # as the terminal delivers it: nothing waits
        await wait(pilot)
        selector.lag = 0.0
        assert table.current_key == "module_0000"
        assert app.module is not None and app.module.key == "module_0000"
        timeline = app.pane(TimelinePane).table
        assert app.step is not None and app.step is timeline.current
        assert app.step in app.module.steps

    drive(app, scenario, loop=lambda: asyncio.SelectorEventLoop(selector))
