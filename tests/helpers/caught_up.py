"""Waiting until a headless Textual app has handled what a test sent it, however busy the
machine: `Pilot.press` and `Pilot.pause` wait for the messages queued when they were called,
one hop, while a key or a cursor move travels several."""

from __future__ import annotations

import time

from textual.app import App
from textual.message_pump import MessagePump
from textual.pilot import Pilot

from tests.helpers.patience import PATIENCE


def queued_messages(app: App[object]) -> dict[str, int]:
    """Messages waiting in each message pump of `app` that has any: the app, its screens,
    every widget, and the widgets' scrollbars (pumps of their own, outside the DOM)."""
    pumps: list[MessagePump] = [app, *app._registry]  # no public list holds the scrollbars
    return {repr(pump): pump.message_queue_size for pump in pumps if pump.message_queue_size}


async def caught_up(pilot: Pilot, timeout: float = PATIENCE) -> None:
    """Wait until the app has handled every message, and every message those posted, with
    nothing new queued across two pauses in a row.

    `Pilot.pause` (and `Pilot.press`) wait for the messages queued when they were called, one
    hop: a key goes from the app to the focused widget and bubbles back for its binding, a
    cursor move announces itself through its pane to the app, a redraw runs the callbacks
    waiting for it. On a busy machine those hops may not have been travelled yet."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    quiet = 0
    while quiet < 2:
        await pilot.pause()
        queued = queued_messages(app)
        quiet = 0 if queued else quiet + 1
        assert time.monotonic() < deadline, f"messages still queued: {queued}"


class HandlingPilot(Pilot[object]):
    """A pilot whose key presses return once the app has handled them and everything they
    posted (see `caught_up`), so a test may check a key's effect at once. The keys of one
    call are sent as fast as `Pilot.press` sends them, as a typist's would be."""

    async def press(self, *keys: str) -> None:
        await super().press(*keys)
        await caught_up(self)
