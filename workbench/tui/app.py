"""The workbench terminal app: the main screen, live scan and watch, and the pane wiring.

The app owns the state every pane reads (the model `dump`, the `book` of results, marks, the
`selection`) and relays selection: a pane posts that its cursor moved, the app updates the
selection and calls the hooks of every pane (see `panes/base.py`). Panes see the app as a
`PaneContext` (`context.py`), never as this class. The replay keys and job messages go to the
`ReplayControl`, the localization keys to the `LocalizeControl`: objects the app owns, which
see it as a `ControlContext`. Slow work runs in thread workers (scan, step facts, loading) or
worker processes (replay); they report back with messages, so the event loop only ever draws.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.dom import DOMNode
from textual.filter import LineFilter, NoColor
from textual.lazy import Lazy
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane

from workbench.model import Dump, Module, Step
from workbench.output.safe_text import visible
from workbench.replay.bisect import Mark
from workbench.step_facts import StepFacts, known_facts
from workbench.tui.bisect_bar import BisectBar
from workbench.tui.book import Book
from workbench.tui.commands import PaneCommands
from workbench.tui.context import ControlContext, PaneContext, Selection, WidgetType
from workbench.tui.contrast import Legible16
from workbench.tui.focus import PaneTabs, move_focus
from workbench.tui.footer import WholeKeysFooter
from workbench.tui.glyphs import AsciiGlyphs, wants_ascii
from workbench.tui.help_screen import HelpScreen
from workbench.tui.jobs import (
    JobEnded,
    JobPhase,
    JobProgress,
    Jobs,
    StepReplayed,
    TriageReported,
    VerdictReached,
)
from workbench.tui.keys import all_bindings
from workbench.tui.localize_control import LOCALIZE_BINDINGS, LocalizeControl, Localized
from workbench.tui.notice_line import Noticed, NoticeLine
from workbench.tui.panes import LEFT_PANES, RIGHT_PANES
from workbench.tui.panes.base import Pane
from workbench.tui.replay_control import REPLAY_BINDINGS, ReplayControl
from workbench.tui.row_table import RowTable
from workbench.tui.signal_guard import SignalGuard, let_go_of_a_dead_terminal
from workbench.tui.status_bar import StatusBar, progress_bar
from workbench.tui.themes import DEFAULT_THEME, SHIPPED_ORDER, load_theme_argument, load_themes
from workbench.tui.words import plural
from workbench.watch import DumpChange, FolderWatcher, LiveIndex, watch_index

if TYPE_CHECKING:
    from workbench.model import Execution
    from workbench.replay.bisect import Verdict

SELECTION_DELAY = 0.06  # seconds a cursor must rest before the panes load what it points at
MODULE_DELAY = 0.15  # the same for the module list (a module loads more; typing a filter moves it)
SPLIT_STEP = 4  # percent of the width `<` and `>` move the split by
SPLIT_LIMITS = (15, 85)  # the left panes' share of the width, in percent, they keep within
RESULTS_INTERVAL = 0.1  # seconds between two redraws for streamed replay results
NO_COLOR_FILTER = NoColor()
ASCII_FILTER = AsciiGlyphs()
LEGIBLE_16_FILTER = Legible16()


class DumpChanged(Message):
    """The live index rebuilt the model (first scan or a batch of file changes)."""

    def __init__(self, change: DumpChange, initial: bool = False) -> None:
        super().__init__()
        self.change = change
        self.initial = initial


class ScanProgress(Message):
    def __init__(self, dump: Dump, files: int) -> None:
        super().__init__()
        self.dump = dump
        self.files = files


class LazyPane(Lazy):
    """Textual's `Lazy` for a tab's pane, except when the app closes before the first refresh
    (`q` or a signal at once): `Lazy` would then mount into a tab being removed, and the
    app would die of MountError instead of closing."""

    async def mount_composed_widgets(self, widgets: list[Widget]) -> None:
        tab = self.parent
        if not isinstance(tab, Widget):
            return

        async def mount() -> None:
            if tab.is_attached:
                await tab.mount(self._replace_widget, after=self)
                await self.remove()

        self.call_after_refresh(mount)


class MainScreen(Screen[None]):
    """The main screen. Its footer lists the keys of a mode first (the manual bisection's
    priority keys), ahead of the focused pane's: a narrow footer cuts the last ones."""

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        found = super().active_bindings
        return dict(sorted(found.items(), key=lambda item: not item[1].binding.priority))


class WorkbenchApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "workbench"
    COMMANDS: ClassVar = App.COMMANDS | {PaneCommands}

    # In footer order (after the focused pane's keys; what does not fit is in `?` and ctrl+p).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?"),
        # Quit early in the footer (a narrow one cuts the last keys). ctrl+c and ctrl+q quit too:
        # Textual's own ctrl+c only says which key quits (in an input box it copies the text).
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False),
        Binding("ctrl+q", "quit", "Quit", show=False),
        *REPLAY_BINDINGS,
        *LOCALIZE_BINDINGS,
        Binding("z", "zoom", "Zoom", tooltip="Zoom the focused pane (again: restore)"),
        Binding("less_than_sign", f"split(-{SPLIT_STEP})", "Split left", show=False,
                key_display="<", tooltip="Move the split between the left and right panes "
                "left (kept until you quit)"),
        Binding("greater_than_sign", f"split({SPLIT_STEP})", "Split right", show=False,
                key_display=">", tooltip="Move the split between the left and right panes "
                "right (kept until you quit)"),
        Binding("ctrl+t", "next_theme", "Theme",
                tooltip="Switch to the next theme"),
        Binding("y", "copy", "Copy",
                tooltip="Copy the last finding (a verdict, an instruction, the reproducer's "
                "folder) to the clipboard, over SSH too (OSC 52)"),
        *(Binding(pane.KEY, f"focus_pane('{pane.__name__}')", f"Go to {pane.TITLE}", show=False,
                  tooltip=f"Focus the {pane.TITLE} pane") for pane in (*LEFT_PANES, *RIGHT_PANES)
          if pane.KEY),
    ]

    def __init__(self, target: Path | str, *, theme: str | Theme | None = None,
                 watch: bool = True, recorded: Path | None = None) -> None:
        super().__init__()  # reads NO_COLOR into `no_color` (see `get_line_filters`)
        self.ascii = wants_ascii(os.environ)  # a locale that is not UTF-8: ASCII glyphs
        self.target = Path(target)
        self.recorded = recorded  # --recorded DIR: executions for dumps without snapshots
        self.live = LiveIndex(self.target)
        self.dump: Dump = Dump(root=self.live.root)
        self.book = Book()
        self.marked: dict[str, str] = {}  # module key -> step key of the marked step
        self.culprit: dict[str, str] = {}  # module key -> step key of the found culprit
        self.evaluating: tuple[str, str] | None = None  # (module key, step key) being evaluated
        self.writing: frozenset[str] = frozenset()  # files still being written
        self.selection = Selection()
        self.verdicts: dict[str, tuple[Execution | None, Verdict]] = {}  # last bisections
        self.split: int | None = None  # the left panes' width in percent, once `<`/`>` moved it
        self.copyable = ""  # what `y` copies: the last verdict, instruction or folder
        self.watching = watch
        self.watcher: FolderWatcher | None = None
        self.signal_guard = SignalGuard(self._terminated, terminal=_terminal())
        self.scanned = False
        self._selection_timers: dict[str, Timer] = {}  # a module's rest, the panes' rest
        self._theme_names: list[str] = []
        self._theme_problems: list[str] = []
        self._register_themes(theme)  # before the DOM exists: styling it once, not twice
        self.jobs = Jobs(self)
        self._changed_results: set[str] = set()
        self._modules_by_key: tuple[Dump, dict[str, Module]] | None = None
        self._results_timer: Timer | None = None
        context: ControlContext = self
        self.replay_control = ReplayControl(context)
        self.localize_control = LocalizeControl(context)

    # ----- layout -----------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        self.status_bar = StatusBar(id="status-bar")
        yield self.status_bar
        self._panes: dict[type[Widget], Pane] = {
            pane: pane(id=f"pane-{pane.__name__.lower()}") for pane in (*LEFT_PANES, *RIGHT_PANES)}
        context: PaneContext = self
        for made in self._panes.values():
            made.context = context
        with Horizontal(id="main"):
            with Vertical(id="left"):
                for pane in LEFT_PANES:
                    yield self._panes[pane]
            with PaneTabs(id="right"):
                for index, pane in enumerate(RIGHT_PANES):
                    with TabPane(pane.TITLE, id=f"tab-{pane.__name__.lower()}"):
                        # Tabs not shown first are mounted after the first frame.
                        yield self._panes[pane] if index == 0 else LazyPane(self._panes[pane])
        self.bisect_bar = BisectBar(id="bisect-bar")
        yield self.bisect_bar
        self.notice_line = NoticeLine(id="notice-line")
        yield self.notice_line
        yield WholeKeysFooter(compact=True)

    @property
    def panes(self) -> list[Pane]:
        """The panes of the main screen (also while another screen, such as help, is on top)."""
        return list(self._panes.values())

    def pane(self, pane_type: type[WidgetType]) -> WidgetType:
        pane = self._panes[pane_type]
        assert isinstance(pane, pane_type)
        return pane

    @property
    def module(self) -> Module | None:
        """The selected module (`selection.module`)."""
        return self.selection.module

    @property
    def step(self) -> Step | None:
        """The selected step (`selection.step`)."""
        return self.selection.step

    def step_facts(self, step: Step) -> StepFacts:
        return known_facts(self.dump.root, step)

    def facts_arrived(self, module_key: str) -> None:
        for pane in self.panes:
            pane.facts_changed(self, module_key)

    def on_mount(self) -> None:
        for problem in self._theme_problems:
            self.notify(problem, severity="warning", timeout=8)
        self.status_bar.folder = self._folder_label()
        move_focus(self.pane(LEFT_PANES[0]).focus_target())
        if self.watching:
            self.watcher = watch_index(self.live, lambda change: self.post_message(
                DumpChanged(change)))
        self.signal_guard.install()
        self.run_scan()

    def _terminated(self, signum: int) -> None:
        """SIGTERM or SIGHUP (`SignalGuard`): close as `q` does."""
        self.stop_watching()
        self.exit(return_code=128 + signum)

    def _folder_label(self) -> str:
        home = str(Path.home())
        text = str(self.target)
        return "~" + text[len(home):] if text.startswith(home + os.sep) else text

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Under NO_COLOR no colour at all: Textual would draw its greys (`Monochrome`); here
        every colour goes, and what colour marked, a text style marks (`:nocolor` rules in
        app.tcss: reverse for the cursor, bold, underline). Under a locale that is not UTF-8
        every glyph is drawn in ASCII (`glyphs.py`). In a 16-colour terminal every text is
        drawn in a pair of standard colours that reads at 4.5:1 (`contrast.py`)."""
        filters: list[LineFilter] = ([NO_COLOR_FILTER] if self.no_color
                                     else list(super().get_line_filters()))
        if not self.no_color and self.console.color_system == "standard":
            filters.append(LEGIBLE_16_FILTER)
        return [*filters, ASCII_FILTER] if self.ascii else filters

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Every notification, the panes' too: its text may quote the dump (a module name, an
        error about a file), so it is never read as markup and its control characters show.
        On the main screen it takes a line of its own (`NoticeLine`) instead of a toast over
        the panes; Textual's toast stays for the screens on top (help, pickers)."""
        shown, heading = visible(message, lines=True), visible(title)
        super().notify(shown, title=heading, severity=severity, timeout=timeout, markup=False)
        self.post_message(Noticed(f"{heading}: {shown}" if heading else shown, severity,
                                  self.NOTIFICATION_TIMEOUT if timeout is None else timeout))

    def on_noticed(self, event: Noticed) -> None:
        self.notice_line.add(event.text, event.severity, event.timeout)

    async def action_quit(self) -> None:
        self.stop_watching()
        self.exit(0)

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None

    def on_unmount(self) -> None:
        self.signal_guard.restore()
        for timer in (*self._selection_timers.values(), self._results_timer):
            if timer is not None:
                timer.stop()
        self.stop_watching()
        self.jobs.close()

    # ----- themes -----------------------------------------------------------------------------

    def _register_themes(self, wanted: str | Theme | None) -> None:
        themes, errors = load_themes()
        for theme in themes:
            self.register_theme(theme)
        self._theme_names = [t.name for t in themes]
        self._theme_names.sort(key=lambda n: (SHIPPED_ORDER.index(n)
                                              if n in SHIPPED_ORDER else len(SHIPPED_ORDER), n))
        self._theme_problems = [f"theme not loaded: {error}" for error in errors]
        if isinstance(wanted, Theme):
            self.register_theme(wanted)
            self._theme_names.append(wanted.name)
            wanted = wanted.name
        name = wanted or DEFAULT_THEME
        if name not in self.available_themes:
            self._theme_problems.append(
                f"no theme {name!r}; themes: {', '.join(self._theme_names)}")
            name = DEFAULT_THEME
        self.theme = name

    def action_next_theme(self) -> None:
        names = self._theme_names or [self.theme]
        index = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(index + 1) % len(names)]
        self.notify(f"theme: {self.theme}", timeout=2)

    # ----- scan and watch ---------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def run_scan(self) -> None:
        change = self.live.scan(lambda dump, files: self.post_message(ScanProgress(dump, files)))
        self.post_message(DumpChanged(change, initial=True))

    def on_scan_progress(self, event: ScanProgress) -> None:
        if self.scanned:
            return
        self.status_bar.scan = f"scanning… {plural(event.files, 'file')}"
        self._set_dump(event.dump, None)

    def on_dump_changed(self, event: DumpChanged) -> None:
        if event.initial:
            self.scanned = True
            self.call_after_refresh(self.jobs.show_cached_triage)  # badges from the cache
        elif not self.scanned:
            return  # the scan's own result is newer than this
        change = event.change
        self.writing = change.writing
        if change.dump is self.dump and not (change.files_changed or change.files_removed):
            from workbench.tui.panes.timeline import TimelinePane

            self.pane(TimelinePane).table.refresh_rows()  # only the `being written` marks
            return
        for key in change.changed + change.removed:
            self.jobs.forget(key)
        self._set_dump(change.dump, change)

    def _set_dump(self, dump: Dump, change: DumpChange | None) -> None:
        if self.recorded is not None:
            from workbench.replay.inputs import InputError
            from workbench.replay.recorded_io import attach_recorded

            with contextlib.suppress(InputError, OSError):  # checked at start; a folder
                attach_recorded(dump, self.recorded, require=False)  # changed since adds none
        self.dump = dump
        watching = "" if self.watcher is None else (
            " · watching (polling)" if self.watcher.polling else " · watching")
        if self.scanned:
            problems = f" · {plural(len(dump.problems), 'problem')}" if dump.problems else ""
            self.status_bar.scan = (
                f"{plural(self.live.file_count, 'file')} · {plural(len(dump.modules), 'module')}"
                f"{problems}{watching}")
        for pane in self.panes:
            pane.dump_changed(self)
        if self.module is not None:
            current = next((m for m in dump.modules if m.key == self.module.key), None)
            if current is None or change is None or self.module.key in change.changed or (
                    change.files_changed & {s.file for s in current.steps}):
                self.select_module(current.key if current else None)

    # ----- selection --------------------------------------------------------------------------

    def on_row_table_highlighted(self, event: RowTable.Highlighted) -> None:
        if event.typing:
            return  # a filter is being typed: select when it is done (the pane announces)
        table_id = event.table.id
        if table_id == "modules-table":
            self._later(table_id, lambda: self.select_module(event.key), MODULE_DELAY)
        elif table_id == "timeline-table":
            self._later(table_id, self.step_changed)
        elif table_id == "executions-table":
            self._later(table_id, self.execution_changed)

    def on_row_table_selected(self, event: RowTable.Selected) -> None:
        """Enter drills down: from a module to its timeline, from a step to its diff."""
        from workbench.tui.panes.diff import DiffPane
        from workbench.tui.panes.timeline import TimelinePane

        target = {"modules-table": TimelinePane, "timeline-table": DiffPane}.get(
            event.table.id or "")
        if target is not None:
            self.action_focus_pane(target.__name__)

    def _later(self, table_id: str, callback: Callable[[], None],
               delay: float = SELECTION_DELAY) -> None:
        """Run `callback` once the cursor of table `table_id` has rested a moment (holding `j`
        loads nothing). A module move rests on a timer of its own: the timeline's and the
        executions' cursors move when a module loads, and must not cancel a module move still
        resting; those two share one, so the next step's move drops an executions reload
        the last one started (each step loads its diff once, not twice)."""
        rest = "modules" if table_id == "modules-table" else "panes"
        timer = self._selection_timers.pop(rest, None)
        if timer is not None:
            timer.stop()

        def fire() -> None:
            self._selection_timers.pop(rest, None)
            callback()

        self._selection_timers[rest] = self.set_timer(delay, fire)

    @property
    def selection_pending(self) -> bool:
        """A cursor move whose panes have not loaded yet (its timer has not fired)."""
        return bool(self._selection_timers)

    def select_module(self, key: str | None) -> None:
        from workbench.tui.panes.executions import ExecutionsPane

        module = self.module_by_key(key)
        if module is None and self.module is None:
            return
        self.selection.module = module
        self.selection.execution = None
        for pane in self.panes:  # in screen order: Executions takes the module's rows first
            pane.module_selected(self, module)
            if isinstance(pane, ExecutionsPane):
                self.selection.execution = pane.current
        self.step_changed()

    def step_changed(self) -> None:
        """The timeline's cursor (or the marked step) changed: tell the panes."""
        from workbench.tui.panes.timeline import TimelinePane

        self.selection.step = self.pane(TimelinePane).table.current
        if self.module is None:
            return
        for pane in self.panes:
            pane.step_selected(self, self.module, self.step)

    def execution_changed(self) -> None:
        """The Executions pane's cursor moved: tell the panes."""
        from workbench.tui.panes.executions import ExecutionsPane

        if self.module is None:
            return
        execution = self.selection.execution = self.pane(ExecutionsPane).current
        for pane in self.panes:
            pane.execution_selected(self, self.module, execution)

    def results_changed(self, module_key: str) -> None:
        """Replay results of a module changed. Panes hear of it at most every
        RESULTS_INTERVAL, for all modules at once: a triage reports hundreds a second."""
        self._changed_results.add(module_key)
        if self._results_timer is None:
            self._results_timer = self.set_timer(RESULTS_INTERVAL, self._flush_results)

    def _flush_results(self) -> None:
        keys, self._changed_results = self._changed_results, set()
        self._results_timer = None
        self.show_job()
        for pane in self.panes:
            pane.results_changed(self, keys)

    def module_by_key(self, key: str | None) -> Module | None:
        if key is None:
            return None
        if self._modules_by_key is None or self._modules_by_key[0] is not self.dump:
            self._modules_by_key = (self.dump, {m.key: m for m in self.dump.modules})
        return self._modules_by_key[1].get(key)

    def offer_copy(self, text: str) -> None:
        self.copyable = text

    def action_copy(self) -> None:
        if not self.copyable:
            self.notify("nothing to copy yet: bisect (b), localize (L) or write (W) first",
                        timeout=4)
            return
        # OSC 52: the terminal (an SSH client, tmux with set-clipboard on) puts it on the
        # clipboard; `app.clipboard` keeps it for pasting inside the app. Whether the terminal
        # took it cannot be known (tmux's default ignores it), so it is also written to a file
        # the notice names.
        self.copy_to_clipboard(self.copyable)
        kept = copy_file()
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(self.copyable + "\n", encoding="utf-8")
        except OSError as error:
            self.notify(f"sent to the terminal's clipboard (OSC 52); not kept in {kept}: "
                        f"{error.strerror or error}", severity="warning", timeout=6)
            return
        shown = self.copyable if len(self.copyable) <= 80 else self.copyable[:79] + "…"
        self.notify(f"sent to the terminal's clipboard (OSC 52; tmux needs set-clipboard on) "
                    f"and written to {kept}: {shown}", timeout=6)

    def log_line(self, text: str) -> None:
        from workbench.tui.panes.replay_log import ReplayLogPane

        self.pane(ReplayLogPane).write(text)

    def show_job(self) -> None:
        """The running job and its progress on the status line (redrawn with the results)."""
        job = self.jobs.current
        if job is None:
            self.status_bar.job = ""
            return
        count = f" {job.done}/{job.total} {progress_bar(job.done, job.total)}" if job.total \
            else ""
        if job.phase:
            count += f" {job.phase}"  # `evaluating #45 fusion in …`, `f64 truth`: what runs now
        elif job.total and not job.done:
            count += " reading and evaluating the reference…"  # the long first phase
        left = job.time_left(time.monotonic())
        if left is not None:
            count += f" about {duration(left)} left"
        self.status_bar.job = f"{job.label}{count} esc:cancel"

    def go_to_step(self, module_key: str, step: Step, open_diff: bool = False) -> None:
        """Select `step` of module `module_key` in the panes (selecting the module first)."""
        from workbench.tui.panes.diff import DiffPane
        from workbench.tui.panes.modules import ModulesPane
        from workbench.tui.panes.timeline import TimelinePane

        if self.module is None or self.module.key != module_key:
            modules = self.pane(ModulesPane)
            if not modules.table.move_to_key(module_key):
                modules.show_module(module_key)
            self.select_module(module_key)
        timeline = self.pane(TimelinePane)
        timeline.show_step(step)
        self.step_changed()
        if open_diff:
            self.pane(DiffPane).open_at_first_change()
            self.action_focus_pane("DiffPane")

    # ----- replay and localization: handed to the controls -------------------------------------
    # Textual looks for `action_*`, `on_*` and `check_action` on the app itself.

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return self.replay_control.check_action(action, parameters)

    def action_replay(self) -> None:
        self.replay_control.action_replay()

    def action_bisect(self) -> None:
        self.replay_control.action_bisect()

    def action_triage(self) -> None:
        self.replay_control.action_triage()

    def action_cancel(self) -> None:
        """Escape closes the focused pane's open filter or search box first, then cancels."""
        pane = next((p for p in self.panes if p.has_focus_within), None)
        if pane is not None and pane.close_boxes():
            return
        self.replay_control.action_cancel()

    def action_manual_bisect(self) -> None:
        self.replay_control.action_manual_bisect()

    def action_bisect_mark(self, mark: Mark) -> None:
        self.replay_control.action_bisect_mark(mark)

    def action_bisect_evaluate(self) -> None:
        self.replay_control.action_bisect_evaluate()

    def action_bisect_stop(self) -> None:
        self.action_cancel()

    def on_job_progress(self, event: JobProgress) -> None:
        self.replay_control.on_job_progress(event)

    def on_job_phase(self, event: JobPhase) -> None:
        self.replay_control.on_job_phase(event)

    def on_step_replayed(self, event: StepReplayed) -> None:
        self.replay_control.on_step_replayed(event)

    def on_verdict_reached(self, event: VerdictReached) -> None:
        self.replay_control.on_verdict_reached(event)

    def on_triage_reported(self, event: TriageReported) -> None:
        self.replay_control.on_triage_reported(event)

    def on_job_ended(self, event: JobEnded) -> None:
        self.replay_control.on_job_ended(event)

    def action_localize(self) -> None:
        self.localize_control.action_localize()

    def action_write_reduced(self) -> None:
        self.localize_control.action_write_reduced()

    def on_localized(self, event: Localized) -> None:
        self.localize_control.on_localized(event)

    def action_open_written(self) -> None:
        """Open the reproducer `W` wrote in a second workbench (this one waits)."""
        from workbench.tui.outside import open_in_workbench

        folder = self.localize_control.written
        if folder is None:
            self.notify("no reproducer written yet: L, then W", timeout=4)
            return
        open_in_workbench(self, folder)

    # ----- focus, zoom, help ------------------------------------------------------------------

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        for pane in event.pane.query(Pane):
            pane.shown(self)

    def action_focus_pane(self, name: str) -> None:
        """Focus a pane (its digit, Enter drilling down, a finished job, the palette); focus
        moves at once (`move_focus`), so the next key typed lands in it."""
        for pane in self.panes:
            if type(pane).__name__ == name:
                if type(pane) in RIGHT_PANES:  # its tab mounts the pane if it has not yet
                    self.screen_stack[0].query_one("#right", TabbedContent).active = (
                        f"tab-{name.lower()}")
                move_focus(pane.focus_target())
                return

    def action_split(self, step: int) -> None:
        """Widen (`step` > 0) or narrow the left panes; app.tcss's width until the first move,
        then the share chosen (in percent, so it holds when the terminal is resized)."""
        left = self.screen_stack[0].query_one("#left")
        total = max(self.screen_stack[0].size.width, 1)
        if self.split is None:
            self.split = round(100 * left.outer_size.width / total)
        low, high = SPLIT_LIMITS
        self.split = max(low, min(high, self.split + step))
        left.styles.width = f"{self.split}%"
        left.styles.min_width = 0  # app.tcss's bounds are for the width it chooses itself
        left.styles.max_width = "100%"

    def action_zoom(self) -> None:
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        pane = next((p for p in self.panes if p.has_focus_within), None)
        if pane is not None:
            screen.maximize(pane, container=False)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def command_bindings(self) -> Iterator[tuple[str, DOMNode, Binding]]:
        """Every command of the app and its panes: (pane title or "", node, binding).

        Navigation keys (hidden, without a tooltip) are left out; the help screen lists them.
        """
        for binding in self._bindings_of(self):
            yield "", self, binding
        for pane in self.panes:
            for node in (pane, pane.focus_target()):
                for binding in self._bindings_of(node):
                    yield pane.TITLE, node, binding

    @staticmethod
    def _bindings_of(node: DOMNode) -> Iterator[Binding]:
        seen: set[str] = set()
        for binding in all_bindings(type(node)):
            if binding.action in seen or not binding.description:
                continue
            if binding.show or binding.tooltip:
                seen.add(binding.action)
                yield binding

    async def run_command(self, node: DOMNode, binding: Binding) -> None:
        """What the palette does: focus the binding's pane, then run its action there."""
        for pane in self.panes:
            if node is pane or node is pane.focus_target():
                self.action_focus_pane(type(pane).__name__)
        await self.run_action(binding.action, node)


def duration(seconds: float) -> str:
    """`40 s`, `3 min`, `1 h 5 min`: a time left, as precise as such a guess deserves."""
    if seconds < 90:
        return f"{max(round(seconds), 1)} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def copy_file() -> Path:
    """Where `y` also writes what it copies: `$XDG_CACHE_HOME/workbench/copied.txt` (never
    in the dump folder)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workbench" / "copied.txt"


def _terminal() -> int | None:
    """The terminal the app reads its keys from (Textual's driver reads standard input)."""
    import sys

    stdin = sys.__stdin__
    try:
        return stdin.fileno() if stdin is not None and stdin.isatty() else None
    except (OSError, ValueError):
        return None


def run_app(target: Path, theme: str | None = None, watch: bool = True,
            recorded: Path | None = None) -> int:
    """Run the app on `target` (a folder or one file); the exit status for the CLI."""
    import sys

    if not target.exists():
        print(f"workbench: no such folder or file: {target}", file=sys.stderr)
        return 2
    try:
        chosen = load_theme_argument(theme) if theme else None
    except ValueError as error:
        print(f"workbench: {error}", file=sys.stderr)
        return 2
    app = WorkbenchApp(target, theme=chosen, watch=watch, recorded=recorded)
    result = app.run()
    let_go_of_a_dead_terminal(app.signal_guard.terminal)
    # Non-zero when the app died of an error (Textual sets 1) or of a signal.
    return app.return_code or (result if isinstance(result, int) else 0)
