"""Modules pane: every module of the dump with its replay badge; filter, sort, hide helpers."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.fuzzy import Matcher
from textual.widget import Widget

from workbench.model import Module
from workbench.output.short_names import short_name
from workbench.replay.judge.outcome import Kind
from workbench.tui.filter_input import FilterInput
from workbench.tui.panes.base import FilteredTablePane
from workbench.tui.row_table import Cell, Column, RowTable
from workbench.tui.status import State
from workbench.tui.words import plural

if TYPE_CHECKING:
    from workbench.tui.context import PaneContext

# JAX compiles one small module per eagerly executed jax.numpy / lax operation (`x / 7.0` gives
# `jit_true_divide`), and one per internal function it jits (`jit__reduce_sum`, `jit__normal`):
# those are named here one by one. A user's own function with a leading underscore, or a
# lambda (`jit__lambda`), is the user's program and is never hidden.
_JAX_INTERNALS = (
    "_reduce_sum|_reduce_prod|_reduce_max|_reduce_min|_reduce_any|_reduce_all|_reduce_or|"
    "_reduce_and|_reduce_xor|_mean|_var|_std|_average|_ptp|_nanmean|_count_nonzero|"
    "_cumsum_with_promotion|_cumprod_with_promotion|_cumulative_reduction|_roll_static|"
    "_roll_dynamic|_linspace|_logspace|_geomspace|_squeeze|_where|_take|_rewriting_take|_gather|"
    "_einsum|_argmax|_argmin|_isclose|_searchsorted|_multi_slice|_split|_normal|_normal_real|"
    "_uniform|_randint|_bernoulli|_gumbel|_categorical|_truncated_normal|_exponential|_gamma|"
    "_beta|_dirichlet|_poisson|_permutation|_shuffle|_random_bits|_threefry_seed|"
    "_threefry_split|_threefry_split_original|_threefry_split_foldlike|_threefry_fold_in|"
    "_threefry_random_bits|_threefry_random_bits_original|_convert_and_clip_integer"
)
_HELPER_RE = re.compile(
    r"^jit_(?:" + _JAX_INTERNALS + r"|iota|convert_element_type|broadcast_in_dim|reshape|"
    r"squeeze|expand_dims|concatenate|transpose|true_divide|divide|add|subtract|mul|multiply|negative|equal|"
    r"not_equal|less|greater|abs|isnan|where|select_n|clip|astype|copy|pad|slice|"
    r"dynamic_slice|dynamic_update_slice|gather|full|zeros_like|ones_like|arange|stack|split)$"
)
SORTS = ("id", "name", "steps", "status")
# Sorting by status: the most alarming first, then the running, the fine, the not replayed.
STATUS_ORDER: dict[State, int] = {Kind.MISMATCH: 0, Kind.ERROR: 1, Kind.UNSUPPORTED: 2,
                                  "running": 3, Kind.OK: 4, "none": 5}


def is_helper_module(module: Module) -> bool:
    """A module JAX made for one eager operation, not a program the user wrote."""
    return bool(_HELPER_RE.match(module.name))


def short_key(module: Module) -> str:
    return module.key.replace("module_", "", 1)


class ModulesPane(FilteredTablePane):
    TITLE = "Modules"
    KEY = "1"
    HELP = ("Every module found in the folder, with its replay badge: · not replayed, … running, "
            "✓ ok, ✗ failing at a pass, ? unsupported, ! error. Helper modules JAX compiles for "
            "single eager operations are hidden (t shows them); failing ones always show.")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("s", "sort", "Sort"),
        Binding("t", "toggle_helpers", "Helpers"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sort = "id"
        self.hide_helpers = True
        self.hidden = 0
        self.table: RowTable[Module] = RowTable(
            [
                Column("", 1),
                Column("id", 5, grow=48),
                Column("module", flex=True),
                Column("status", 12, min_width=60, grow=40),
                Column("steps", 5, align="right"),
                Column("ex", 2, align="right"),
            ],
            row_key=lambda module: module.key,
            render_row=self._cells,
            empty_text="no modules (yet)",
            id="modules-table",
        )
        self.filter = FilterInput(placeholder="filter modules (fuzzy)", id="modules-filter")

    def compose(self) -> ComposeResult:
        yield self.table
        yield self.filter

    def focus_target(self) -> Widget:
        return self.table

    def _cells(self, module: Module) -> list[Cell]:
        status = self.context.book.module_status(module.key)
        return [
            (status.symbol, status.style),
            (short_key(module), "dim"),
            (short_name(module.name) or module.key, ""),
            (status.text, status.style),
            (str(module.step_count), ""),
            (str(len(module.executions)), ""),
        ]

    def _visible(self, app: PaneContext) -> list[Module]:
        modules = list(app.dump.modules)
        self.hidden = 0
        if self.hide_helpers:
            kept = [m for m in modules if not is_helper_module(m)
                    or app.book.module_status(m.key).state in (Kind.MISMATCH, Kind.ERROR)]
            self.hidden = len(modules) - len(kept)
            modules = kept
        query = self.filter.value.strip()
        if query:
            matcher = Matcher(query)
            scored = [(matcher.match(f"{m.key} {m.name}"), m) for m in modules]
            scored = [(score, m) for score, m in scored if score > 0]
            scored.sort(key=lambda pair: -pair[0])  # best matches first
            modules = [m for _, m in scored]
        if self.sort == "name":
            modules.sort(key=lambda m: (m.name, m.key))
        elif self.sort == "steps":
            modules.sort(key=lambda m: (-m.step_count, m.key))
        elif self.sort == "status":
            modules.sort(key=lambda m: (STATUS_ORDER[app.book.module_status(m.key).state], m.key))
        return modules

    def refill(self) -> None:
        app = self.context
        rows = self._visible(app)
        self.table.set_rows(rows)
        total = len(app.dump.modules)
        parts = [f"{len(rows)}/{total}" if len(rows) != total else str(total)]
        if self.hidden:
            parts.append(f"{plural(self.hidden, 'helper')} hidden")
        if self.sort != "id":
            parts.append(f"by {self.sort}")
        self.set_title(" · ".join(parts))

    def dump_changed(self, app: PaneContext) -> None:
        self.refill()

    def results_changed(self, app: PaneContext, module_keys: set[str]) -> None:
        if self.hide_helpers or self.sort == "status":
            self.refill()  # a failing helper shows; the order by status moved
        else:
            self.table.refresh_rows(list(module_keys))

    def show_module(self, key: str) -> None:
        """Make module `key` visible (clear the filter, show helpers) and put the cursor on it."""
        if self.table.move_to_key(key):
            return
        self.filter.value = ""
        self.filter.remove_class("-open")
        self.hide_helpers = False
        self.refill()
        self.table.move_to_key(key)

    def action_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.refill()

    def action_toggle_helpers(self) -> None:
        self.hide_helpers = not self.hide_helpers
        self.refill()

