"""IR diff pane: the selected step against its predecessor, or against the marked step.

Loading and diffing (workbench.diff) run in a thread worker (exclusive: moving on cancels the
previous load, and a result for an older request is dropped), so holding `j` in the timeline
never queues work; the view is the virtualized `IrView`. Unified or side by side, normalized
(renumbering, metadata and locations ignored) or raw, whole module or one computation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget

from workbench.diff.ir_diff import IRDiff, section_counts
from workbench.diff.normalize import NormalizeOptions
from workbench.diff.render import unified
from workbench.diff.steps import diff_steps
from workbench.model import Module, Step
from workbench.output.safe_text import visible
from workbench.sources import ReadError, read_text
from workbench.tui.book import step_key
from workbench.tui.data_widgets import DataStatic
from workbench.tui.diff_document import diff_document
from workbench.tui.filter_input import FilterInput
from workbench.tui.focus import move_focus
from workbench.tui.ir_view import IrView, ViewDocument, message_document, text_document
from workbench.tui.outside import editor_command, open_outside, tool_command
from workbench.tui.panes.base import Pane
from workbench.tui.section_picker import ALL, SectionPicker
from workbench.tui.step_names import pass_in_pipeline, step_name
from workbench.tui.words import plural

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext


class FindingBox(VerticalScroll, can_focus=True):
    """The localization's report above the diff: a few lines, scrolled with the keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("k", "scroll_up", "Up", show=False),
        Binding("j", "scroll_down", "Down", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]


@dataclass(frozen=True)
class DiffRequest:
    """What to show; a result is shown only if it answers the latest request."""

    module_key: str
    step: Step
    base: Step | None  # None: show the step's text alone
    raw: bool
    side_by_side: bool
    section: str | None


def base_step(app: PaneContext, module: Module, step: Step) -> Step | None:
    """The marked step when there is one (and it is not this step), else the closest earlier
    step with the same IR kind; None when there is nothing to compare with."""
    marked = app.marked.get(module.key)
    if marked is not None and marked != step_key(step):
        found = next((s for s in module.steps if step_key(s) == marked), None)
        if found is not None and found.ir == step.ir:
            return found
    earlier = [s for s in module.steps[: step.index] if s.ir == step.ir]
    return earlier[-1] if earlier else None


def diff_header(request: DiffRequest, diff: IRDiff | None) -> str:
    step, base = request.step, request.base
    if base is None:
        return f"{step_name(step)}  ·  {step.file or ''}"
    # `#30 fusion vs #29  ·  -20 +41  ·  in HLO_passes_after_layout_assignment  ·  …`: what
    # fits a narrow pane first. The step before is the row above in the timeline (its number
    # says which); a marked step is named in full.
    against = f"#{base.index}" if base.index == step.index - 1 else f"marked {step_name(base)}"
    parts = [f"#{step.index} {step.pass_name} vs {against}"]
    named = pass_in_pipeline(step)
    pipeline = [named.removeprefix(step.pass_name + " ")] if named != step.pass_name else []
    if diff is not None:
        parts.append(("no change" + ("" if request.raw else " (normalized)")) if diff.equal
                     else f"-{diff.removed} +{diff.added}")
        parts.extend(pipeline)
        if not diff.equal:
            counts = section_counts(diff.sections())
            changed = [f"{n} {what}" for what, n in counts.items() if n and what != "unchanged"]
            parts.append(", ".join(changed))
    parts.append("raw" if request.raw else "normalized")
    if request.section:
        parts.append(f"only {request.section}")
    return "  ·  ".join(parts)


class DiffPane(Pane):
    TITLE = "IR diff"
    KEY = "4"
    HELP = ("The selected step's IR against the step before it (or the step marked with m in "
            "the timeline). Changed lines carry - and + in the gutter. ] and [ jump between "
            "changes, / searches and n / N jump between matches, h / l scroll sideways.")

    DEFAULT_CSS = """
    DiffPane #diff-finding {
        display: none;
        height: auto;
        max-height: 12;
        border-bottom: solid $panel-lighten-2;
        border-subtitle-color: $text-muted;
        &.-shown { display: block; }
        &:focus { border-bottom: solid $primary; }
    }
    DiffPane #diff-finding-text { height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "toggle_side", "Side/unified"),
        Binding("o", "toggle_raw", "Raw/norm"),
        Binding("c", "pick_section", "Computation"),
        Binding("slash", "search", "Search"),
        Binding("colon", "go_to_line", "Go to line", show=False,
                tooltip="Go to a line of the step's IR (of the newer step in a diff)"),
        Binding("Y", "copy_hunk", "Copy hunk", show=False,
                tooltip="Copy the change (hunk) at the top of the view, as - and + lines "
                "(y still copies the last finding)"),
        Binding("P", "pager", "Pager", show=False,
                tooltip="Open the diff (or the step's IR) in $PAGER (less)"),
        Binding("E", "editor", "Editor", show=False,
                tooltip="Open a read-only copy of the step's IR file in $VISUAL / $EDITOR (vi)"),
        Binding("f", "finding", "Report", show=False,
                tooltip="After L: move into the localization report above the diff to scroll "
                "it (j / k), or back to the diff"),
    ]

    class Loaded(Message):
        def __init__(self, request: DiffRequest, document: ViewDocument, header: str,
                     diff: IRDiff | None) -> None:
            super().__init__()
            self.request = request
            self.document = document
            self.header = header
            self.diff = diff

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: DiffRequest | None = None
        self.selected_module: Module | None = None  # the module object last selected
        self.diff: IRDiff | None = None
        self.raw = False
        self.side_by_side = False
        self.section: str | None = None
        self.first_change_pending = False  # jump to the first change once the next diff shows
        self.loaded: DiffRequest | None = None  # the request whose answer is shown
        self.instructions: tuple[str, str] | None = None  # (before, after) names to mark
        self.header_text = ""
        self.shown_step: str | None = None  # step key of the document shown
        self.header = DataStatic("", id="diff-header")
        self.view = IrView(id="diff-view")
        self.search = FilterInput(placeholder="search the IR", id="diff-search")
        self.line_box = FilterInput(placeholder="go to line (a number, Enter)", id="diff-line")
        self.finding_text = DataStatic("", id="diff-finding-text")
        self.finding = FindingBox(self.finding_text, id="diff-finding")  # what `L` found
        self.finding_step: str | None = None

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.finding
        yield self.view
        yield self.search
        yield self.line_box

    def show_finding(self, lines: list[str], step: Step) -> None:
        """Show a localization's report (instruction, values, source line) above the diff of
        `step` until another step is selected; in a box of a few lines, which `f` enters to
        scroll the rest into view."""
        self.finding_text.update("\n".join(lines))
        self.finding.border_subtitle = "f: scroll (j/k)"
        self.finding.add_class("-shown")
        self.finding.scroll_home(animate=False)
        self.finding_step = step_key(step)

    def action_finding(self) -> None:
        if not self.finding.has_class("-shown"):
            self.notify("no report to read: L localizes the culprit first", timeout=3)
        elif self.finding.has_focus:
            move_focus(self.view)
        else:
            move_focus(self.finding)

    def focus_target(self) -> Widget:
        return self.view

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        """Another module, the module read again (its files changed: a new object) or none:
        what the pane shows is read again, even from a file rewritten under the same name, or
        cleared. The same module selected again (the cursor came back to it) changes nothing."""
        if module is self.selected_module:
            return
        self.selected_module = module
        self.request = None
        if module is None:
            self.shown_step = None
            self.view.show(message_document("select a module"))
            self.header.update("")

    def step_selected(self, app: PaneContext, module: Module, step: Step | None) -> None:
        if step is None or step_key(step) != self.finding_step:
            if self.finding.has_focus:
                move_focus(self.view)
            self.finding.remove_class("-shown")
            self.finding_step = None
        if step is None:
            self.request = None
            self.shown_step = None
            self.view.show(message_document("select a step in the timeline"))
            self.header.update("")
            return
        if self.request is not None and (self.request.module_key, step_key(self.request.step)) \
                != (module.key, step_key(step)):
            self.section = None  # another step: its computations differ
        self.refresh_diff(module, step)

    def refresh_diff(self, module: Module | None = None, step: Step | None = None) -> None:
        """(Re)load for the current options; called after a selection or a toggle."""
        if module is None or step is None:
            if self.request is None:
                return
            module, step = self.context.selection.module, self.request.step
            if module is None:
                return
        request = DiffRequest(module.key, step, base_step(self.context, module, step), self.raw,
                              self.side_by_side, self.section)
        if request == self.request:
            return
        self.request = request
        # Until the diff arrives (a 10,000-instruction module takes a while), say so.
        self.header.update(f"{step_name(step)}  ·  diffing…" if request.base else
                           f"{step_name(step)}  ·  reading…")
        if self.shown_step != step_key(step):  # a toggle keeps the old view meanwhile
            self.view.show(message_document(f"diffing {step_name(step)} against "
                                            f"{step_name(request.base)}…" if request.base
                                            else f"reading {step_name(step)}…"))
        self.load(request)

    @work(thread=True, exclusive=True, group="diff-load", exit_on_error=False)
    def load(self, request: DiffRequest) -> None:
        root = self.context.dump.root
        diff: IRDiff | None = None
        try:
            if request.base is None:
                from workbench.formats.hlo_print import printed_source

                source = printed_source(request.step)
                if source is None:
                    raise ReadError(request.step.file or "?", "no printed IR for this step")
                document = text_document(read_text(root, source))
            else:
                options = NormalizeOptions.raw() if request.raw else NormalizeOptions()
                diff = diff_steps(root, request.base, request.step, options)
                document = diff_document(diff, request.side_by_side, request.section)
        except ReadError as error:
            document = message_document(str(error))
        except Exception as error:
            document = message_document(f"cannot show this step: {type(error).__name__}: {error}")
        self.post_message(self.Loaded(request, document, diff_header(request, diff), diff))

    def on_diff_pane_loaded(self, event: Loaded) -> None:
        if event.request != self.request:
            return  # an answer to an older request
        # The same step again (a toggle, or its file read again when complete): keep the place.
        same_step = self.shown_step == step_key(event.request.step)
        self.diff = event.diff
        self.shown_step = step_key(event.request.step)
        self.header_text = event.header
        self.header.update(event.header)
        self.view.show(event.document, keep_position=same_step)
        self.loaded = event.request
        if self.first_change_pending:
            self.first_change_pending = False
            self._go_to_first_change()
        if self.instructions is not None:
            self._mark_instructions()

    def open_at_first_change(self) -> None:
        """Show the first change of the selected step's diff: now if it is shown, else as
        soon as it is (a culprit is landed on to see what its pass changed)."""
        if self.request is not None and self.loaded == self.request:
            self._go_to_first_change()
        else:
            self.first_change_pending = True

    def _go_to_first_change(self) -> None:
        hunks = self.view.document.hunks
        if hunks:
            self.view.go_to_row(hunks[0])
            self.on_ir_view_moved(IrView.Moved(self.view, "hunk", 0, len(hunks)))

    def show_instruction(self, before: str, after: str) -> None:
        """Mark the lines defining instruction `before` (earlier step) and `after` (this
        step) and bring the later one into view; on the raw diff, where names are the dump's."""
        self.instructions = (before, after)
        if not self.raw:
            self.raw = True
            self.refresh_diff()
        else:
            self._mark_instructions()

    def _mark_instructions(self) -> None:
        from workbench.replay.localize.text import defines

        assert self.instructions is not None
        before, after = self.instructions
        marks: dict[int, str] = {}
        for index, row in enumerate(self.view.document.rows):
            for half in (row if isinstance(row, tuple) else (row,)):
                for name in (after, before):
                    if defines(half.text, name):
                        marks.setdefault(index, name)
        self.view.mark_rows(set(marks))
        later = [index for index, name in marks.items() if name == after]
        if later or marks:
            self.view.go_to_row(min(later or marks))

    def on_ir_view_moved(self, event: IrView.Moved) -> None:
        """Say where a jump landed: `change 2/5`, `match 3/12`."""
        word = "change" if event.what == "hunk" else event.what
        wrapped = ""
        if event.wrapped:
            wrapped = f" (wrapped to the {'first' if event.index == 0 else 'last'})"
        self.header.update(f"{self.header_text}  ·  {word} {event.index + 1}/{event.total}"
                           f"{wrapped}")

    # ----- actions ----------------------------------------------------------------------------

    def action_toggle_side(self) -> None:
        self.side_by_side = not self.side_by_side
        self.refresh_diff()

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        self.refresh_diff()

    def action_pick_section(self) -> None:
        if self.diff is None:
            self.notify("no diff to restrict", timeout=2)
            return

        def picked(choice: str | None) -> None:
            if choice is None:
                return
            self.section = None if choice == ALL else choice
            self.refresh_diff()

        self.app.push_screen(SectionPicker(self.diff.sections(), self.section or ALL), picked)

    def action_search(self) -> None:
        self.search.open()

    def _step_text(self, step: Step) -> tuple[str, str] | None:
        """The step's IR text and its file's name; None (said) when it cannot be read."""
        from workbench.formats.hlo_print import printed_source

        source = printed_source(step)
        if source is None:
            self.notify(f"{step_name(step)}: no printed IR for this step", timeout=4)
            return None
        try:
            text = read_text(self.context.dump.root, source)
        except ReadError as error:
            self.notify(str(error), timeout=6)
            return None
        name = Path(source.file).name
        return text, name if source.entry is None else f"{name}.txt"

    def action_pager(self) -> None:
        """The diff shown (as `diff -u`), or the step's text when there is no diff."""
        request = self.request
        if request is None:
            self.notify("select a step in the timeline first", timeout=3)
            return
        diff = self.diff if self.shown_step == step_key(request.step) else None
        if diff is not None and request.base is not None and not diff.equal:
            lines = unified(diff, request.base.label, request.step.label)
            text, name = "\n".join(lines) + "\n", f"{request.step.label}.diff"
        else:
            found = self._step_text(request.step)
            if found is None:
                return
            text, name = found
        open_outside(self.app, tool_command("PAGER", "less"), name, text)

    def action_editor(self) -> None:
        if self.request is None:
            self.notify("select a step in the timeline first", timeout=3)
            return
        found = self._step_text(self.request.step)
        if found is not None:
            open_outside(self.app, editor_command(), found[1], found[0])

    def on_input_changed(self, event: FilterInput.Changed) -> None:
        event.stop()
        if event.input is self.search:
            self.view.search = event.value

    def on_filter_input_done(self, event: FilterInput.Done) -> None:
        event.stop()
        if event.filter_input is self.line_box:
            self._go_to_line(self.line_box.value.strip())
            self.line_box.value = ""  # a line number is used once: the box closes
            self.line_box.remove_class("-open")
        move_focus(self.view)

    def action_go_to_line(self) -> None:
        self.line_box.open()

    def _go_to_line(self, typed: str) -> None:
        if not typed:
            return
        if not typed.isdigit():
            self.notify(f"not a line number: {visible(typed)}", timeout=3)
            return
        found = self.view.line_row(int(typed))
        if found is None:
            self.notify(f"no line {typed}: the text is shorter", timeout=3)
            return
        line, row = found
        self.view.go_to_row(row)
        self.header.update(f"{self.header_text}  ·  line {line}")

    async def action_copy_hunk(self) -> None:
        """The change at the view's top, through the app's clipboard (OSC 52, over SSH too);
        with no change shown, the last finding (as `y`). Not `y` itself: `b` and `L` leave
        the diff focused, and `y` then copies their verdict or instruction."""
        k = self.view.hunk_here()
        if k is None:
            await self.app.run_action("copy")  # the app's copy of the last finding
            return
        text = self.view.hunk_text(k)
        self.app.copy_to_clipboard(text)
        self.notify(f"copied change {k + 1}/{len(self.view.document.hunks)} "
                    f"({plural(len(text.splitlines()), 'line')})", timeout=3)
