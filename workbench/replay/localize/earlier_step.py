"""The earlier step's values, made in turns with the later step so that it is evaluated
only about as far as the later one gets.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.hlo_ir import Instruction, LiteralValue
from workbench.replay.localize.recorder import Enough, plain_value
from workbench.replay.localize.result import DynKey

if TYPE_CHECKING:
    from workbench.replay.localize.context import LocalizeContext

EARLIER_STEP_CHUNKS = 4  # the earlier step runs ahead of the later one by ~1/4 of itself


class EarlierStep:
    """The earlier step's values, made as far as the later step needs them: it is evaluated
    in a thread of its own that the search hands the turn to (the two never run at once),
    and that makes about 1/`EARLIER_STEP_CHUNKS` of the step's values each turn; once the
    culprit is found it stops, so the earlier step is evaluated only about as far as the
    later one. `get` gives a value (None when the step never makes it), `finish` runs it to
    its end and gives its result."""

    def __init__(self, localizer: LocalizeContext) -> None:
        self.localizer = localizer
        self.values = localizer.before_values
        self.chunk = max(1, len(localizer.matching.sites_before) // EARLIER_STEP_CHUNKS)
        self.turn = threading.Condition()
        self.made = self.allowed = 0
        self.stopped = self.finished = False
        self.result: LiteralValue | None = None
        self.error: BaseException | None = None
        # in the caller's context (an SPMD device set by `spmd.as_device` holds there too)
        self.thread = threading.Thread(target=contextvars.copy_context().run,
                                       args=(self._evaluate,), name="earlier step", daemon=True)
        self.thread.start()

    def _evaluate(self) -> None:
        localizer = self.localizer
        with self.turn:  # nothing before the first turn: the two threads never run at once
            while not self.allowed and not self.stopped:
                self.turn.wait()
        try:
            if not self.stopped:
                self.result = localizer.evaluate(localizer.before, localizer.arguments,
                                                  self._keep)
        except BaseException as error:  # handed to the search's thread
            self.error = error
        with self.turn:
            self.finished = True
            self.turn.notify_all()

    def _keep(self, key: DynKey, instruction: Instruction, value: Any) -> None:
        localizer = self.localizer
        if key[0] in localizer.wanted:
            localizer.keep_before(key, plain_value(value, instruction, localizer.sub_byte))
        self.made += 1
        if self.made >= self.allowed:
            with self.turn:
                self.turn.notify_all()
                while self.made >= self.allowed and not self.stopped:
                    self.turn.wait()
        if self.stopped:
            raise Enough()

    def get(self, key: DynKey) -> LiteralValue | None:
        value = self.values.get(key)
        if value is None and not self.finished:
            self._advance(lambda: key in self.values)
            value = self.values.get(key)
        return value

    def finish(self) -> LiteralValue | None:
        self._advance(lambda: False)
        return self.result

    def _advance(self, enough: Callable[[], bool]) -> None:
        """Hand the turn to the earlier step, a chunk at a time, until `enough` or its end."""
        with self.turn:
            while not enough() and not self.finished:
                self.allowed = self.made + self.chunk
                self.turn.notify_all()
                while self.made < self.allowed and not self.finished:
                    self.turn.wait()
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        with self.turn:
            self.stopped = True
            self.turn.notify_all()
        self.thread.join()
