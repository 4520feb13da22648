"""A progress bar on stderr for long commands: done / total, failures so far, rate, time left;
for a replay, which evaluation runs, the memory of the process tree (workers included, read
live) and the replay's own estimate of the time left (`replay/progress.py`).

Shown only when stderr is a terminal and the output is for people (not `--json`); otherwise
`Progress.advance` does nothing, so the commands call it unconditionally. `rich` is imported
only when a bar is shown.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.replay.progress import ReplayPhase


def wanted(json_output: bool) -> bool:
    stream = sys.stderr
    return not json_output and stream is not None and stream.isatty()


class Progress:
    """`with Progress("triage", total, enabled): ... progress.advance(failed=...)`."""

    def __init__(self, description: str, total: int | None, enabled: bool,
                 unit: str = "jobs", phases: bool = False) -> None:
        self.description = description
        self.total = total
        self.enabled = enabled
        self.unit = unit
        self.failures = 0
        self._bar: Any = None
        self._task: Any = None
        self.phases = phases  # a replay's phases say what runs and the time left (`phase`)

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

        columns: list[Any] = [TextColumn("{task.description}"), BarColumn(),
                              MofNCompleteColumn(), TaskProgressColumn(),
                              TextColumn("{task.fields[failures]} failing")]
        if self.phases:
            columns += [TextColumn("{task.fields[phase]}", markup=False), _TreeMemory(),
                        TextColumn("{task.fields[left]}")]
        else:
            columns += [TextColumn("{task.fields[rate]}"), TimeRemainingColumn()]
        self._bar = Bar(*columns, console=terminal_console(stderr=True), transient=True,
                        refresh_per_second=4)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.description, total=self.total, failures=0,
                                        rate="", phase="", left="")
        return self

    def phase(self, phase: ReplayPhase) -> None:
        """Show which evaluation runs and the replay's estimate of the time left."""
        if self._bar is None:
            return
        left = "" if phase.seconds_left is None else f"~{_duration(phase.seconds_left)} left"
        self._bar.update(self._task, phase=phase.describe(), left=left)

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


def _duration(seconds: float) -> str:
    """`42 s`, `3:05` (minutes), `1:02:03`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, second = divmod(whole, 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}" if hours else f"{minute}:{second:02d}"


def _TreeMemory() -> Any:
    """A column with the resident memory of this process and its descendants, read at each
    refresh (a long evaluation's memory moves while its phase stays)."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    from workbench.replay.progress import tree_resident_bytes
    from workbench.sizes import format_size

    class TreeMemory(ProgressColumn):
        max_refresh = 1.0  # a walk of /proc a second, not one a frame

        def render(self, task: Task) -> Text:
            size = tree_resident_bytes()
            return Text("" if size is None else format_size(size))

    return TreeMemory()
