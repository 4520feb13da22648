"""Action log pane: the MLIR actions (`--log-actions-to`) of the selected module as a tree.

A log holds tens of thousands of actions, so the tree grows on demand (children are added when
a node is expanded). `/` filters by tag, pass and location (`tag:apply-pattern pass:*CSE*
loc:model.py:4`, each a shell pattern as in `workbench actions`), showing the matches as a flat
list. The selected action's backtrace shows below; `o` opens the step its pass run made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from workbench.formats.action_log import Action, ActionLog, filter_actions, load_module_actions
from workbench.model import Module, Step
from workbench.sources import ReadError
from workbench.tui.data_widgets import DataStatic, DataTree
from workbench.tui.filter_input import FilterInput
from workbench.tui.focus import move_focus
from workbench.tui.panes.base import Pane
from workbench.tui.words import plural

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext

MAX_LISTED = 2000  # filter matches shown at once


def action_label(action: Action) -> str:
    if action.tag == "pass-execution":
        where = action.target or action.operation or ""
        return f"{action.pass_name}  on {where}"
    if action.tag == "apply-pattern" and action.pattern:
        return f"apply-pattern {action.pattern}"
    state = "" if action.completed else "  (never completed)"
    return f"{action.printed.strip('`')}{state}"


def parse_filter(text: str) -> dict[str, str]:
    """`tag:X pass:Y loc:Z` -> keyword arguments of `filter_actions`; a bare word is a tag."""
    found: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition(":")
        if sep and key in ("tag", "pass", "loc"):
            found[{"tag": "tag", "pass": "pass_name", "loc": "location"}[key]] = value
        else:
            found["tag"] = word
    return found


class ActionsPane(Pane):
    TITLE = "Actions"
    KEY = "5"
    HELP = ("The MLIR action log of the selected module, nested as it ran. / filters "
            "(tag:PATTERN pass:PATTERN loc:FILE[:LINE[:COL]]); Enter or space opens a nested "
            "action, o (or Enter on a leaf) opens the step the action's pass produced; the "
            "backtrace of the action under the cursor is below.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("o", "jump", "Open step"),
    ]

    class Loaded(Message):
        def __init__(self, module_key: str, log: ActionLog | None,
                     joined: dict[int, Step], error: str = "") -> None:
            super().__init__()
            self.module_key = module_key
            self.log = log
            self.joined = joined
            self.error = error

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.module: Module | None = None
        self.action_log: ActionLog | None = None
        self.joined: dict[int, Step] = {}
        self.action_tree: Tree[Action] = DataTree("actions", id="actions-tree")
        self.backtrace = DataStatic("", id="actions-backtrace")
        self.filter = FilterInput(placeholder="tag:apply-* pass:*CSE* loc:file:line",
                                  id="actions-filter")
        self.stale = False  # the module changed while the pane was not showing

    def compose(self) -> ComposeResult:
        yield self.action_tree
        yield self.backtrace
        yield self.filter

    def focus_target(self) -> Widget:
        return self.action_tree

    def on_mount(self) -> None:
        super().on_mount()
        self.action_tree.show_root = False
        self.action_tree.auto_expand = False

    def module_selected(self, app: PaneContext, module: Module | None) -> None:
        self.module = module
        self.action_log = None
        self.joined = {}
        self.action_tree.clear()
        self.backtrace.update("")
        self.set_title()
        if module is None or not any(a.kind == "mlir-action-log" for a in module.artifacts):
            self.stale = False
            self.action_tree.root.add_leaf("no action log for this module "
                                           "(MLIR --log-actions-to)")
            return
        self.action_tree.root.add_leaf("reading the action log…")
        self.stale = True
        self.shown(app)

    def shown(self, app: PaneContext) -> None:
        if self.showing and self.stale and self.module is not None:
            self.stale = False
            self.load(app, self.module)

    @work(thread=True, exclusive=True, group="actions-load", exit_on_error=False)
    def load(self, app: PaneContext, module: Module) -> None:
        try:
            loaded = load_module_actions(app.dump.root, module)
        except ReadError as error:
            self.post_message(self.Loaded(module.key, None, {}, str(error)))
            return
        log, joined = loaded if loaded is not None else (None, {})
        self.post_message(self.Loaded(module.key, log, joined))

    def on_actions_pane_loaded(self, event: Loaded) -> None:
        if self.module is None or event.module_key != self.module.key:
            return
        self.action_log, self.joined = event.log, event.joined
        self.action_tree.clear()
        if event.log is None:
            self.action_tree.root.add_leaf(event.error or "no action log")
            return
        self.set_title(plural(len(event.log.actions), "action"))
        self._show(event.log.roots, nested=True)

    def _show(self, actions: list[Action], nested: bool) -> None:
        tree = self.action_tree
        tree.clear()
        for action in actions[:MAX_LISTED]:
            self._add(tree.root, action, nested)
        if len(actions) > MAX_LISTED:
            tree.root.add_leaf(f"… {len(actions) - MAX_LISTED:,} more; narrow the filter")
        tree.cursor_line = 0  # keys act on the first action at once, not after a first Down

    def _add(self, parent: TreeNode[Action], action: Action, nested: bool) -> None:
        if nested and action.children:
            node = parent.add(action_label(action), data=action)
            node.allow_expand = True
        else:
            parent.add_leaf(action_label(action), data=action)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Action]) -> None:
        node = event.node
        action = node.data
        if action is not None and not node.children:
            for child in action.children:
                self._add(node, child, nested=True)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Action]) -> None:
        """Enter opens or folds a nested action, and opens the step a leaf's pass made."""
        node = event.node
        if node.allow_expand:
            node.toggle()
        elif node.data is not None:
            self.action_jump()

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Action]) -> None:
        action = event.node.data
        if action is None:
            return
        lines = [f"{'  ' * depth}{action_label(a)}  (line {a.line})"
                 for depth, a in enumerate(reversed(action.backtrace()))]
        self.backtrace.update("\n".join(lines[-6:]))

    def selected_step(self) -> Step | None:
        node = self.action_tree.cursor_node
        action = node.data if node is not None else None
        if action is None:
            return None
        run = action.pass_run()
        return self.joined.get(run.index) if run is not None else None

    def action_jump(self) -> None:
        step = self.selected_step()
        if step is None or self.module is None:
            self.notify("no step for this action (its pass printed no IR)", timeout=3)
            return
        self.context.go_to_step(self.module.key, step)

    def action_filter(self) -> None:
        self.filter.open()

    def on_input_submitted(self, event: FilterInput.Submitted) -> None:
        event.stop()
        if self.action_log is None:
            return
        query = event.value.strip()
        if not query:
            self._show(self.action_log.roots, nested=True)
            return
        try:
            matches = filter_actions(self.action_log.actions, **parse_filter(query))
        except ValueError as error:
            self.notify(str(error), severity="error", timeout=5)
            return
        total = plural(len(self.action_log.actions), "action")
        self.set_title(f"{len(matches):,} of {total} match")
        self._show(matches, nested=False)

    def on_input_changed(self, event: FilterInput.Changed) -> None:
        event.stop()

    def on_filter_input_done(self, event: FilterInput.Done) -> None:
        event.stop()
        if not self.filter.value and self.action_log is not None:
            self._show(self.action_log.roots, nested=True)
            self.set_title(plural(len(self.action_log.actions), "action"))
        move_focus(self.action_tree)
