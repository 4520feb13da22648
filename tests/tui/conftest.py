"""Helpers for driving the app headless (`App.run_test`) without an async test plugin."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget

from tests.helpers.caught_up import HandlingPilot, caught_up
from tests.helpers.patience import PATIENCE
from workbench.tui.app import WorkbenchApp

EXAMPLE = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"

Scenario = Callable[[Pilot], Awaitable[None]]


def working(app: App[object]) -> bool:
    """A selection timer has yet to fire or a background worker has yet to finish."""
    assert isinstance(app, WorkbenchApp)
    return app.selection_pending or not all(worker.is_finished for worker in app.workers)


async def settle(pilot: Pilot) -> None:
    """Wait until the app is idle: every message handled, selection timers fired, background
    workers finished, and whatever those started (a finished worker may start the next one,
    a selection moves other tables' cursors) done too. Waits for the conditions, never for a
    fixed time: a busy machine may take seconds for what usually takes milliseconds."""
    app = pilot.app
    await caught_up(pilot)
    while working(app):
        await wait_until(pilot, lambda: not app.selection_pending)
        await app.workers.wait_for_complete()
        await caught_up(pilot)


async def wait_until(pilot: Pilot, condition: Callable[[], object],
                     timeout: float = PATIENCE) -> None:
    """Poll `condition` (without waiting for the app to be idle) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the app"
        await pilot.pause(0.05)


def run_headless(app: WorkbenchApp, scenario: Scenario, size: tuple[int, int] = (80, 24),
                 loop: Callable[[], asyncio.AbstractEventLoop] | None = None) -> None:
    """Run `scenario` against `app` in a headless terminal of `size`, once it has settled
    (on an event loop made by `loop`, if given)."""

    async def main() -> None:
        async with app.run_test(size=size):
            pilot = HandlingPilot(app)
            await settle(pilot)
            await scenario(pilot)

    with asyncio.Runner(loop_factory=loop) as runner:
        runner.run(main())


def screen_lines(widget: Widget) -> list[str]:
    """The text a Line-API widget shows now, one string per screen line."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


@pytest.fixture(autouse=True)
def utf8_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app draws ASCII glyphs under a locale that is not UTF-8; tests see the UTF-8 ones
    on any machine unless they set the locale themselves."""
    monkeypatch.setenv("LC_ALL", "C.UTF-8")


@pytest.fixture(autouse=True)
def truecolor_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app draws 16-colour terminals (`TERM=xterm`, `screen`, no COLORTERM) in standard
    colours of its own choosing; tests see the theme's colours on any machine unless they set
    the terminal themselves."""
    monkeypatch.setenv("COLORTERM", "truecolor")


@pytest.fixture
def example() -> Path:
    """The layernorm dump with a planted miscompile (module_0010 jit_ln, XLA step 0028)."""
    return EXAMPLE


@pytest.fixture
def drive() -> Callable[..., None]:
    return run_headless


@pytest.fixture
def wait() -> Callable[[Pilot], Awaitable[None]]:
    return settle


@pytest.fixture
def lines() -> Callable[[Widget], list[str]]:
    return screen_lines


@pytest.fixture
def until() -> Callable[..., Awaitable[None]]:
    return wait_until
