"""The panes of the main screen, in screen order.

The left column stacks `LEFT_PANES`; the right side shows one of `RIGHT_PANES` at a time, as
tabs. A new pane is a `Pane` subclass (see `base.py`) in a module of its own here, added to one
of these lists; its `KEY` digit focuses it and its bindings reach the footer, the help screen
and the command palette without further wiring.
"""

from __future__ import annotations

from workbench.tui.panes.actions import ActionsPane
from workbench.tui.panes.base import Pane
from workbench.tui.panes.breakpoints import BreakpointsPane
from workbench.tui.panes.diff import DiffPane
from workbench.tui.panes.executions import ExecutionsPane
from workbench.tui.panes.iree import IreePane
from workbench.tui.panes.modules import ModulesPane
from workbench.tui.panes.replay_log import ReplayLogPane
from workbench.tui.panes.stats import StatsPane
from workbench.tui.panes.timeline import TimelinePane

LEFT_PANES: list[type[Pane]] = [ModulesPane, ExecutionsPane, TimelinePane]
RIGHT_PANES: list[type[Pane]] = [DiffPane, ActionsPane, BreakpointsPane, StatsPane,
                                  ReplayLogPane, IreePane]
