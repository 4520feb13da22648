"""IREE pane: the HAL replay capture under the Executions cursor, its records, and a replay.

The summary and records come from `iree-dump-replay` in a thread worker (exclusive: moving on
drops the previous load; a hidden tab waits until it is shown). `r` replays the capture with
`iree-run-replay` in another thread worker that streams the tool's output into the log; `x`
cancels it (the tool's whole process group is killed) and leaving the app does too. A failed
replay shows the tool's message verbatim and changes nothing else: the app keeps working.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import RichLog

from workbench.external_tools import ToolMissing, ToolProcess, ToolResult
from workbench.formats.iree_replay import ReplayDump, ReplayRecord, read_replay
from workbench.loader import ReadError
from workbench.model import Execution, Module
from workbench.output.safe_text import visible
from workbench.replay.iree_runner import ReplayOptions, start_replay
from workbench.replay.judge.outcome import Kind
from workbench.tui.data_widgets import DataStatic
from workbench.tui.filter_input import FilterInput
from workbench.tui.panes.base import FilteredTablePane
from workbench.tui.row_table import Cell, Column, RowTable
from workbench.tui.status import Status
from workbench.tui.words import plural

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext

CAPTURE_KIND = "ireereplay"
NO_CAPTURE = "select an IREE capture (.ireereplay) in Executions"
DEVICES = ("local-sync", "local-task")  # the CPU drivers every iree-base-runtime wheel has


def capture_of(execution: Execution | None) -> Execution | None:
    return execution if execution is not None and execution.kind == CAPTURE_KIND else None


def record_matches(record: ReplayRecord, query: str) -> bool:
    """Every word of `query` is part of the record's kind, operation, object type or a scope."""
    fields = (record.kind, record.operation, record.object_type, *record.scopes)
    return all(any(word in field for field in fields) for word in query.lower().split())


def summary_text(dump: ReplayDump) -> str:
    s = dump.summary
    yes_no = {True: "✓", False: "✗"}
    executables = ", ".join(f"{e.id} {e.format or '?'}" for e in dump.executables) or "none"
    return (f"v{s.version} · {s.record_count} records · {s.object_count} objects · "
            f"{s.operation_count} ops\n"
            f"hermetic {yes_no[s.hermetic]} · strict replay {yes_no[s.strict_replay_supported]}"
            f" · files {s.files.get('file_object_count', 0)}\n"
            f"scopes: {', '.join(s.scopes) or 'none'} · executables: {executables}")


def result_status(result: ToolResult) -> Status:
    if result.ok:
        return Status(Kind.OK)
    if result.outcome == "failed":
        return Status(Kind.ERROR, result.status_code or f"exit status {result.exit_code}")
    return Status(Kind.ERROR, "timed out" if result.outcome == "timeout" else "cancelled")


class IreePane(FilteredTablePane):
    TITLE = "IREE"
    KEY = "9"
    HELP = ("The IREE HAL replay capture (.ireereplay) under the Executions cursor: its summary "
            "from iree-dump-replay and its records in capture order with their replay scopes "
            "(/ keeps records whose kind, operation, object or scope contain every word). r "
            "replays it with iree-run-replay in the background on the device d chooses, x "
            "cancels; the log shows the tool's output and, on failure, its message verbatim. "
            "Needs the IREE runtime tools: pip install 'dump-triage-workbench[iree]'.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "replay", "Replay", tooltip="Replay the capture with iree-run-replay"),
        Binding("x", "cancel", "Cancel", tooltip="Cancel the running replay"),
        Binding("d", "device", "Device", tooltip="Replay on the next device (local-sync, ...)"),
        Binding("slash", "filter", "Filter"),
    ]

    DEFAULT_CSS = """
    IreePane {
        #iree-header { height: 1; color: $text-muted; background: $boost; }
        #iree-summary { height: auto; max-height: 5; color: $text-muted; }
        #iree-log { height: 7; border-top: solid $panel-lighten-2; scrollbar-size-vertical: 1; }
    }
    """

    class Loaded(Message):
        def __init__(self, request: tuple, dump: ReplayDump | None, error: str) -> None:
            super().__init__()
            self.request = request
            self.dump = dump
            self.error = error

    class ReplayOutput(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ReplayEnded(Message):
        def __init__(self, serial: int, name: str, result: ToolResult) -> None:
            super().__init__()
            self.serial = serial
            self.name = name
            self.result = result

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.capture: Path | None = None
        self.request: tuple = ()
        self.stale = False  # the capture changed while the pane was not showing
        self.dump: ReplayDump | None = None
        self.device = DEVICES[0]
        self.process: ToolProcess | None = None
        self.replay_status: Status | None = None
        self.replay_name = ""
        self.replay_serial = 0
        self.header = DataStatic("", id="iree-header")
        self.summary = DataStatic("", id="iree-summary")
        self.table: RowTable[ReplayRecord] = RowTable(
            [
                Column("#", 4, align="right"),
                Column("scope", 8, min_width=40),
                Column("operation", flex=True),
                Column("object", 18, min_width=64),
                Column("status", 6, min_width=72),
                Column("details", 40, min_width=110),
            ],
            row_key=lambda record: str(record.ordinal),
            render_row=self._cells,
            empty_text=NO_CAPTURE,
            id="iree-records",
        )
        self.filter = FilterInput(placeholder="filter records: kind, operation, scope",
                                  id="iree-filter")
        self.log_view = RichLog(id="iree-log", wrap=True, min_width=20, markup=False,
                                highlight=False)

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.summary
        yield self.table
        yield self.filter
        yield self.log_view

    def focus_target(self) -> Widget:
        return self.table

    def _cells(self, record: ReplayRecord) -> list[Cell]:
        operation = record.operation if record.operation != "none" else record.kind
        obj = f"{record.object_type}:{record.object_id}" if record.object_id else ""
        return [
            (str(record.ordinal), "dim"),
            (record.scopes[-1] if record.scopes else "", "dim"),
            (operation, "" if record.kind == "operation" else "dim"),
            (obj, "dim"),
            (record.status, "" if record.status == "OK" else "status--fail"),
            (record.details(), "dim"),
        ]

    # ----- selection --------------------------------------------------------------------------

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        self.show_capture(app, module, app.selection.execution)

    def execution_selected(self, app: PaneContext, module: Module,
                           execution: Execution | None) -> None:
        self.show_capture(app, module, execution)

    def show_capture(self, app: PaneContext, module: Module | None,
                     execution: Execution | None) -> None:
        capture = capture_of(execution)
        request = (module.key, capture.file) if module and capture else ()
        if request == self.request:
            return
        self.request = request
        self.dump = None
        self.capture = app.dump.root / capture.file if capture else None
        self.table.empty_text = "reading the capture…" if capture else NO_CAPTURE
        self.table.set_rows([])
        self.summary.update("")
        self._show_state()
        # A hidden tab reads the capture when it comes up (`shown`), not on every selection.
        self.stale = self.capture is not None
        self.shown(app)

    def shown(self, app: PaneContext) -> None:
        if self.stale and self.showing and self.capture is not None:
            self.stale = False
            self.load(self.capture, self.request)

    @work(thread=True, exclusive=True, group="iree-dump", exit_on_error=False)
    def load(self, capture: Path, request: tuple) -> None:
        try:
            self.post_message(self.Loaded(request, read_replay(capture), ""))
        except ReadError as error:  # the header names the file; the reason is the tool's
            self.post_message(self.Loaded(request, None, error.reason))
        except ToolMissing as error:
            self.post_message(self.Loaded(request, None, str(error)))

    def on_iree_pane_loaded(self, event: Loaded) -> None:
        if event.request != self.request:
            return  # a newer selection is being loaded
        self.dump = event.dump
        self.summary.update(summary_text(event.dump) if event.dump else event.error)
        self.table.empty_text = "no records match" if event.dump else "no records (see above)"
        self.refill()

    def refill(self) -> None:
        records = self.dump.records if self.dump else []
        query = self.filter.value.strip()
        if query:
            records = [r for r in records if record_matches(r, query)]
        self.table.set_rows(records)
        self._show_state()

    def _show_state(self) -> None:
        """The header line (and the title, where a layout shows pane titles): the capture,
        how many records show, and the last replay's state as a symbol and words."""
        parts = []
        if self.capture is not None:
            parts.append(self.capture.name)
        if self.dump is not None:
            total = len(self.dump.records)
            shown = len(self.table.rows)
            records = plural(total, "record")
            parts.append(f"{shown}/{records}" if shown != total else records)
        if self.replay_status is not None:
            which = "" if self.capture and self.replay_name == self.capture.name \
                else f" of {self.replay_name}"
            status = self.replay_status
            parts.append(f"replay{which} {status.short if status.detail else status.text}")
        text = " · ".join(parts)
        self.header.update(text)
        self.set_title(text)

    # ----- replay -----------------------------------------------------------------------------

    def action_replay(self) -> None:
        if self.capture is None:
            self.notify("select an IREE capture (.ireereplay) first", timeout=3)
            return
        if self.process is not None:
            self.process.cancel()  # one replay at a time: the new one replaces it
        command = f"$ iree-run-replay --device={self.device} {self.capture.name}"
        self.log_view.write(visible(command))
        self.replay_name = self.capture.name
        try:
            # Started here, not in the worker, so `x` can cancel it from the first moment.
            process = start_replay(self.capture, ReplayOptions(device=self.device))
        except ToolMissing as error:
            self.process = None
            self.log_view.write(visible(str(error), lines=True))
            self.replay_status = Status(Kind.ERROR, "IREE tools missing")
            self._show_state()
            return
        self.process = process
        self.replay_serial += 1
        self.replay_status = Status("running")
        self._show_state()
        self.follow(process, self.capture.name, self.replay_serial)

    @work(thread=True, group="iree-replay", exit_on_error=False)
    def follow(self, process: ToolProcess, name: str, serial: int) -> None:
        for line in process.lines():
            self.post_message(self.ReplayOutput(line.text))
        self.post_message(self.ReplayEnded(serial, name, process.wait()))

    def on_iree_pane_replay_output(self, event: ReplayOutput) -> None:
        self.log_view.write(visible(event.text, lines=True))

    def on_iree_pane_replay_ended(self, event: ReplayEnded) -> None:
        result = event.result
        status = result_status(result)
        # A failure's message was streamed into the log just above, verbatim.
        ended = (f"failed with exit status {result.exit_code}" if result.outcome == "failed"
                 else result.describe())
        self.log_view.write(visible(f"{status.symbol} {event.name}: replay {ended}"))
        if event.serial != self.replay_serial:
            return  # a replay this one was cancelled for is running now
        self.process = None
        self.replay_name = event.name
        self.replay_status = status
        self._show_state()

    def action_cancel(self) -> None:
        if self.process is None:
            self.notify("no replay is running", timeout=2)
            return
        self.process.cancel()

    def action_device(self) -> None:
        self.device = DEVICES[(DEVICES.index(self.device) + 1) % len(DEVICES)]
        self.notify(f"IREE replays run on {self.device}", timeout=2)

    def on_unmount(self) -> None:
        if self.process is not None:
            self.process.cancel()
