"""Pass timeline pane: the selected module's steps, what changed, sizes, timing, replay results.

Step facts (IR statistics, changed flags) are computed in a thread worker when a module is
selected and stream into the rows as they arrive; the keys keep working meanwhile.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.fuzzy import Matcher
from textual.message import Message
from textual.widget import Widget
from textual.worker import get_current_worker

from workbench.model import Module, Step
from workbench.sources import ReadError
from workbench.stats import IrStats
from workbench.step_facts import all_known, compute_facts
from workbench.tui.book import step_key
from workbench.tui.filter_input import FilterInput
from workbench.tui.panes.base import FilteredTablePane
from workbench.tui.row_table import Cell, Column, RowTable
from workbench.tui.words import plural

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext


def instruction_delta(before: IrStats | ReadError | None, after: IrStats | ReadError | None
                      ) -> str:
    """`+3`, `-2`, `0`; empty when a count is missing."""
    if not isinstance(after, IrStats) or not isinstance(before, IrStats):
        return ""
    delta = after.instructions - before.instructions
    return f"{delta:+d}" if delta else "0"


PIPELINE_ENDS = {"pipeline-start": "start of", "pipeline-end": "end of"}


def pass_cell(step: Step) -> str:
    """The pass column: the pass; for XLA's pipeline-start and -end steps, which pipeline
    they start or end (`start of fusion`): dozens of rows would read `pipeline-start`."""
    where = PIPELINE_ENDS.get(step.pass_name)
    return f"{where} {step.pipeline}" if where and step.pipeline else step.pass_name


def matching_steps(steps: list[Step], query: str) -> list[Step]:
    """The steps a filter keeps. A user types a pass name, or a part of it: the steps whose
    pass column contains the query (any case), else those whose pipeline does; only when
    neither does is the query matched fuzzily (`lyasgn` for layout-assignment). Fuzzy
    matching first kept 41 of 85 steps for `alg` (flatten-call-graph, dot_decomposer, ...)."""
    wanted = query.lower()
    for part in (pass_cell, lambda step: step.pipeline or ""):
        named = [s for s in steps if wanted in part(s).lower()]
        if named:
            return named
    matcher = Matcher(query)
    return [s for s in steps if matcher.match(f"{s.pass_name} {s.pipeline or ''}") > 0]


# The changed column: the mark and its style (None: not known, or nothing to compare with).
CHANGED_MARKS: dict[bool | None, tuple[str, str]] = {
    True: ("●", "mark--changed"), False: ("·", "mark--same"), None: ("", "")}
WRITING_MARK = ("✎", "status--running")  # the step's file is still being written
EVALUATING_MARK = ("▶", "status--running")  # the step a replay is evaluating now


class TimelinePane(FilteredTablePane):
    TITLE = "Timeline"
    KEY = "3"
    HELP = ("The selected module's pass timeline. ● the step changed the IR, · it did not; Δ is "
            "the change in instruction count; the last column is the replay result of the step "
            "(✓ matches the reference, ✗ differs, ? unsupported, ! error; ▶ being evaluated "
            "now). ✎ the step's file is still being written: it is read again when complete, "
            "the cursor and the diff staying where they are. m marks a step: the diff then "
            "compares the selected step with the marked one instead of its predecessor. / "
            "filters by pass name (a part of it), else by pipeline name, fuzzily when no name "
            "contains what was typed.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("u", "toggle_unchanged", "Unchanged"),
        Binding("right_square_bracket", "changed(1)", "Next chg"),
        Binding("left_square_bracket", "changed(-1)", "Prev chg"),
        Binding("m", "mark", "Mark"),
    ]

    class FactsArrived(Message):
        def __init__(self, module_key: str, done: bool) -> None:
            super().__init__()
            self.module_key = module_key
            self.done = done

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.module: Module | None = None
        self.hide_unchanged = False
        self.table: RowTable[Step] = RowTable(
            [
                Column("#", 3, align="right"),
                Column("", 1),
                Column("step", 4, min_width=44),
                Column("pass", flex=True),
                Column("pipeline", 22, min_width=90),
                Column("Δinst", 5, align="right"),
                Column("time", 7, align="right", min_width=60),
                Column("", 1),
            ],
            row_key=step_key,
            render_row=self._cells,
            empty_text="select a module",
            id="timeline-table",
        )
        self.filter = FilterInput(placeholder="filter passes (by name, else fuzzy)",
                                  id="timeline-filter")

    def compose(self) -> ComposeResult:
        yield self.table
        yield self.filter

    def focus_target(self) -> Widget:
        return self.table

    def _cells(self, step: Step) -> list[Cell]:
        app = self.context
        book = app.book
        facts = app.step_facts(step)
        module = self.module
        previous = module.steps[step.index - 1] if module and step.index > 0 else None
        before = app.step_facts(previous).stats \
            if previous is not None and previous.ir == step.ir else None
        changed = CHANGED_MARKS[facts.changed]
        if module is not None and app.marked.get(module.key) == step_key(step):
            changed = ("◆", "mark--marked")
        if step.file in app.writing:
            changed = WRITING_MARK
        status = book.step_status(module.key, step) if module else None
        result = (status.symbol, status.style) if status and status.state != "none" else ("", "")
        if app.culprit.get(module.key if module else "") == step_key(step):
            result = ("✗", "mark--culprit")
        if module is not None and app.evaluating == (module.key, step_key(step)):
            result = EVALUATING_MARK
        timing = f"{step.timing_s * 1000:.1f}ms" if step.timing_s is not None else ""
        return [
            (str(step.index), "dim"),
            changed,
            (f"{step.xla_step:04d}" if step.xla_step is not None else "", "dim"),
            (pass_cell(step), "" if facts.changed is not False else "dim"),
            (step.pipeline or "", "dim"),
            (instruction_delta(before, facts.stats), "dim"),
            (timing, "dim"),
            result,
        ]

    # ----- filling ----------------------------------------------------------------------------

    def _visible(self) -> list[Step]:
        if self.module is None:
            return []
        steps = list(self.module.steps)
        if self.hide_unchanged:
            steps = [s for s in steps if self.context.step_facts(s).changed is not False]
        query = self.filter.value.strip()
        return matching_steps(steps, query) if query else steps

    def refill(self, keep: str | None = None) -> None:
        rows = self._visible()
        self.table.set_rows(rows, keep=keep)
        if self.module is None:
            self.set_title()
            return
        total = len(self.module.steps)
        shown = f"{len(rows)}/{plural(total, 'step')}" if len(rows) != total \
            else plural(total, "step")
        self.set_title(f"{self.module.name or self.module.key} · {shown}"
                       + (" · changed only" if self.hide_unchanged else ""))

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        same = module is not None and self.module is not None and module.key == self.module.key
        keep = self.table.current_key if same else None
        self.module = module
        self.table.empty_text = (
            "select a module" if module is None
            else "no pass steps in this module (its other files are in Stats and Actions)"
            if not module.steps else "no step to show: clear the filter (/) or show unchanged (u)")
        self.refill(keep=keep)
        if module is not None:
            self.compute_facts(app, module)

    def results_changed(self, app: PaneContext, module_keys: set[str]) -> None:
        if self.module is not None and self.module.key in module_keys:
            self.table.refresh_rows()

    # ----- step facts -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="timeline-facts", exit_on_error=False)
    def compute_facts(self, app: PaneContext, module: Module) -> None:
        """Each step's IR statistics and whether it changed the IR (normalized: renumbering
        alone is no change), streamed into the rows as they are known."""
        worker = get_current_worker()
        root = app.dump.root
        if all_known(root, module):
            return  # known from an earlier visit (and the files are the same)
        last_post = time.monotonic()
        for _step in compute_facts(root, module):
            if worker.is_cancelled:
                return
            if time.monotonic() - last_post > 0.1:
                last_post = time.monotonic()
                self.post_message(self.FactsArrived(module.key, done=False))
        self.post_message(self.FactsArrived(module.key, done=True))

    def on_timeline_pane_facts_arrived(self, event: FactsArrived) -> None:
        if self.module is None or event.module_key != self.module.key:
            return
        if self.hide_unchanged and event.done:
            self.refill()
        else:
            self.table.refresh_rows()
        self.context.facts_arrived(event.module_key)

    def show_step(self, step: Step) -> None:
        """Put the cursor on `step`, clearing the filter and showing unchanged steps if that is
        what hides it."""
        key = step_key(step)
        if self.table.move_to_key(key):
            return
        self.filter.value = ""
        self.filter.remove_class("-open")
        self.hide_unchanged = False
        self.refill(keep=key)

    # ----- actions ----------------------------------------------------------------------------

    def action_toggle_unchanged(self) -> None:
        self.hide_unchanged = not self.hide_unchanged
        self.refill()

    def action_changed(self, direction: int) -> None:
        rows = self.table.rows
        index = self.table.cursor + direction
        while 0 <= index < len(rows):
            if self.context.step_facts(rows[index]).changed:
                self.table.move_to(index)
                return
            index += direction
        self.notify("no further changed step", timeout=2)

    def action_mark(self) -> None:
        step = self.table.current
        if self.module is None or step is None:
            return
        marks = self.context.marked
        key = step_key(step)
        if marks.get(self.module.key) == key:
            del marks[self.module.key]
        else:
            marks[self.module.key] = key
        self.table.refresh_rows()
        self.context.step_changed()

