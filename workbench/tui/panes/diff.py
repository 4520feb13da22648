"""IR diff pane: the selected step against its predecessor (or the marked step).

Loading and diffing run in a thread worker (exclusive: moving on cancels the previous load),
so holding `j` in the timeline never queues up work; the view is the virtualized `IrView`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from workbench.loader import ReadError, read_text
from workbench.model import Module, Step
from workbench.tui.filter_input import FilterInput
from workbench.tui.ir_view import IrView, ViewDocument, message_document, text_document
from workbench.tui.panes.base import Pane

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


class DiffPane(Pane):
    TITLE = "IR"
    KEY = "4"
    HELP = ("The IR of the selected step. ] and [ jump between hunks, / searches and n / N "
            "jump between matches; h/l scroll sideways.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search"),
    ]

    class Loaded(Message):
        def __init__(self, document: ViewDocument, header: str, request: tuple) -> None:
            super().__init__()
            self.document = document
            self.header = header
            self.request = request

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: tuple = ()
        self.header = Static("", id="diff-header", markup=False)
        self.view = IrView(id="diff-view")
        self.search = FilterInput(placeholder="search the IR", id="diff-search")

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.view
        yield self.search

    def focus_target(self) -> Widget:
        return self.view

    def step_selected(self, app: WorkbenchApp, module: Module, step: Step | None) -> None:
        if step is None:
            self.request = ()
            self.view.show(message_document("select a step"))
            self.header.update("")
            return
        request = (module.key, step.index, step.file)
        if request == self.request:
            return
        self.request = request
        self.load(app, module, step, request)

    @work(thread=True, exclusive=True, group="diff-load", exit_on_error=False)
    def load(self, app: WorkbenchApp, module: Module, step: Step, request: tuple) -> None:
        header = f"{step.label}  ·  {step.file or 'no file'}"
        try:
            if step.text is None:
                raise ReadError(step.file or "?", "no printed IR for this step")
            document = text_document(read_text(app.dump.root, step.text))
        except ReadError as error:
            document = message_document(str(error))
        self.post_message(self.Loaded(document, header, request))

    def on_diff_pane_loaded(self, event: Loaded) -> None:
        if event.request != self.request:
            return  # a newer selection is being loaded
        self.header.update(event.header)
        self.view.show(event.document)

    def action_search(self) -> None:
        self.search.open()

    def on_input_changed(self, event: FilterInput.Changed) -> None:
        event.stop()
        self.view.search = event.value

    def on_filter_input_done(self, event: FilterInput.Done) -> None:
        event.stop()
        self.view.focus()
