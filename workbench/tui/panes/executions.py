"""Executions pane: the recorded runs (snapshots, captures) of the selected module, with the
types of their arguments and a summary of the recorded result (read in a thread worker).

A recording of a program's calls (`--recorded`, or one found beside the dump) is checked
against the module's entry parameters as soon as the module is selected: one that does not
fit is said below the table, with both types, the mismatching parameter first, before `r` or
`b` would meet it (they refuse it and say so)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget

from workbench.hlo_ir import LiteralValue
from workbench.loader import ReadError, load_snapshot
from workbench.model import Execution, Module
from workbench.replay.judge.compare import describe_array
from workbench.replay.recorded_io import KIND as RECORDED
from workbench.replay.recorded_io import RecordingFit
from workbench.tui.data_widgets import DataStatic
from workbench.tui.panes.base import Pane
from workbench.tui.row_table import Cell, Column, RowTable

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext


def value_summary(value: LiteralValue) -> str:
    """`f32[6,8] in [-1.53, 1.53]`, with NaN/Inf counts when there are any."""
    if isinstance(value, tuple):
        return "(" + ", ".join(value_summary(v) for v in value) + ")"
    array = np.asarray(value)
    text = describe_array(array)
    if array.size == 0 or array.dtype.kind not in "biuf":
        return text
    data = array.astype(np.float64)
    finite = data[np.isfinite(data)]
    if finite.size:
        text += f" in [{finite.min():.4g}, {finite.max():.4g}]"
    bad = int(data.size - finite.size)
    if bad:
        text += f", {bad} NaN/Inf"
    return text


class ExecutionsPane(Pane):
    TITLE = "Executions"
    KEY = "2"
    HELP = ("The recorded executions of the selected module (XLA snapshots, replay captures), "
            "with their argument types and the recorded result: the one under the cursor is "
            "what r replays and b bisects. A recording whose files do not fit the module's "
            "parameters is said below the table (the mismatching parameter first), and r and "
            "b refuse it.")

    DEFAULT_CSS = """
    ExecutionsPane { height: 5; }
    ExecutionsPane.-misfit { height: 10; }
    ExecutionsPane #executions-fit {
        display: none;
        height: auto;
        max-height: 7;
        color: $text-error;
    }
    ExecutionsPane.-misfit #executions-fit { display: block; }
    """

    class Described(Message):
        def __init__(self, file: str, arguments: str, result: str,
                     fit: RecordingFit | None = None) -> None:
            super().__init__()
            self.file = file
            self.arguments = arguments
            self.result = result
            self.fit = fit

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.module: Module | None = None
        self.described: dict[str, tuple[str, str]] = {}  # file -> (arguments, result)
        self.fits: dict[str, RecordingFit] = {}  # file of a recorded call -> its fit
        self.fit_text = DataStatic("", id="executions-fit")
        self.table: RowTable[Execution] = RowTable(
            [
                Column("execution", 20),
                Column("arguments", flex=True),
                Column("recorded result", 30, min_width=70),
            ],
            row_key=lambda execution: execution.id,
            render_row=self._cells,
            empty_text="no recorded executions",
            id="executions-table",
        )

    def compose(self) -> ComposeResult:
        yield self.table
        yield self.fit_text

    def focus_target(self) -> Widget:
        return self.table

    @property
    def current(self) -> Execution | None:
        return self.table.current

    def _cells(self, execution: Execution) -> list[Cell]:
        arguments, result = self.described.get(execution.file, ("…", "…"))
        return [(execution.id, ""), (arguments, "dim"), (result, "dim")]

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        keep = self.table.current_key if module is self.module else None
        self.module = module
        self.table.set_rows(module.executions if module else [], keep=keep)
        self.set_title(str(len(module.executions)) if module else "")
        self.show_fit()
        if module is not None:
            missing = [e for e in module.executions if e.file not in self.described]
            if missing:
                self.describe(app, module, missing)

    def execution_selected(self, app: PaneContext, module: Module,
                           execution: Execution | None) -> None:
        self.show_fit()

    def misfit(self, execution: Execution | None) -> RecordingFit | None:
        """The fit of `execution` when it is a recording known not to fit its module."""
        fit = self.fits.get(execution.file) if execution is not None else None
        return fit if fit is not None and not fit.ok else None

    def show_fit(self) -> None:
        """Below the table: what of the selected recording does not fit the module."""
        execution = self.current or (self.table.rows[0] if self.table.rows else None)
        fit = self.misfit(execution)
        if fit is None or execution is None or self.module is None:
            self.remove_class("-misfit")
            return
        name = self.module.name or self.module.key
        lines = [f"✗ {execution.id} does not fit {name}; r and b refuse it:",
                 *(f"  {line}" for line in fit.misfits)]
        if fit.fits:
            lines.append(f"  fits: {'; '.join(fit.fits)}")
        self.fit_text.update("\n".join(lines))
        self.add_class("-misfit")

    def dump_changed(self, app: PaneContext) -> None:
        self.described.clear()  # a snapshot may have been rewritten
        self.fits.clear()

    @work(thread=True, exclusive=True, group="executions", exit_on_error=False)
    def describe(self, app: PaneContext, module: Module, executions: list[Execution]) -> None:
        for execution in executions:
            if execution.kind == RECORDED:
                self.post_message(self._recorded(app, module, execution))
                continue
            if execution.kind != "hlo-snapshot":
                self.post_message(self.Described(execution.file, execution.kind, ""))
                continue
            try:
                snapshot = load_snapshot(app.dump.root, execution)
            except ReadError as error:
                self.post_message(self.Described(execution.file, f"! {error.reason}", ""))
                continue
            arguments = ", ".join(describe_array(a) for a in snapshot.arguments) or "()"
            result = value_summary(snapshot.result) if snapshot.result is not None else \
                "not recorded"
            self.post_message(self.Described(execution.file, arguments, result))

    @staticmethod
    def _recorded(app: PaneContext, module: Module, execution: Execution) -> Described:
        """A recorded call's types, from its files' headers, and how they fit the module."""
        from workbench.replay.backends import NoBackend, open_backend
        from workbench.replay.recorded_io import recording_fit

        try:
            specs = open_backend(app.dump.root, module).parameter_specs()
        except (NoBackend, ReadError) as error:
            return ExecutionsPane.Described(execution.file, f"! {error}", "")
        if specs is None:  # the entry's types are unknown: nothing to check against
            return ExecutionsPane.Described(execution.file, execution.kind, "")
        fit = recording_fit(app.dump.root, execution, specs)
        return ExecutionsPane.Described(execution.file, ", ".join(fit.recorded) or "()",
                                        "" if fit.ok else "✗ does not fit the module", fit)

    def on_executions_pane_described(self, event: Described) -> None:
        self.described[event.file] = (event.arguments, event.result)
        if event.fit is not None:
            self.fits[event.file] = event.fit
            self.show_fit()
        self.table.refresh_rows()
