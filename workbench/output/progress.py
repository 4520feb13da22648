"""A progress bar on stderr for long commands: done / total, failures so far, rate, time left.

Shown only when stderr is a terminal and the output is for people (not `--json`); otherwise
`Progress.advance` does nothing, so the commands call it unconditionally. `rich` is imported
only when a bar is shown.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


def wanted(json_output: bool) -> bool:
    stream = sys.stderr
    return not json_output and stream is not None and stream.isatty()


class Progress:
    """`with Progress("triage", total, enabled): ... progress.advance(failed=...)`."""

    def __init__(self, description: str, total: int | None, enabled: bool,
                 unit: str = "jobs") -> None:
        self.description = description
        self.total = total
        self.enabled = enabled
        self.unit = unit
        self.failures = 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if not self.enabled:
            return self
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar

        from workbench.output.safe_text import terminal_console

        self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TaskProgressColumn(), TextColumn("{task.fields[failures]} failing"),
                        TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                        console=terminal_console(stderr=True), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.description, total=self.total, failures=0,
                                        rate="")
        return self

    def advance(self, failed: bool = False) -> None:
        if failed:
            self.failures += 1
        if self._bar is None:
            return
        task = self._bar.tasks[0]
        speed = task.finished_speed or task.speed
        rate = f"{speed:.1f} {self.unit}/s" if speed else ""
        self._bar.update(self._task, advance=1, failures=self.failures, rate=rate)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, error, traceback)
            self._bar = None
