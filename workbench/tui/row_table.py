"""A virtualized table for the list panes (modules, executions, timeline).

Built on the Line API like toolong's log view: rows are plain objects and only the visible
ones are rendered (`render_line`), so thousands of modules or steps cost nothing until they
scroll into view, and replacing the rows (a filter keystroke, a live update) is a list
assignment, not thousands of widget operations. Cells name a component class for their style,
so badges follow the theme; the header line stays on top while the rows scroll.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input

from workbench.output.safe_text import on_screen
from workbench.tui.component_style import component_style

Item = TypeVar("Item")
Cell = tuple[str, str]  # (text, component class giving its style, or "")


@dataclass(frozen=True)
class Column:
    """A column: fixed `width` cells, or the one `flex` column taking what is left. A column
    with `min_width` shows only when the table is at least that wide. A column with `grow`
    widens to its widest cell (up to `grow` cells) while the flex column keeps `FLEX_MIN`."""

    title: str
    width: int = 0
    align: str = "left"
    flex: bool = False
    min_width: int = 0
    grow: int = 0


FLEX_MIN = 12  # cells the flex column keeps before growing columns take more
MEASURED_ROWS = 5000  # rows measured for growing columns (beyond that, the first ones decide)


def fit(text: str, width: int, align: str = "left") -> str:
    """`text` cut or padded to exactly `width` cells (an ellipsis marks a cut)."""
    length = cell_len(text)
    if length > width:
        if width <= 1:
            return "…"[:width]
        cut = text
        while cell_len(cut) > width - 1:
            cut = cut[:-1]
        return cut + "…"
    padding = " " * (width - length)
    return padding + text if align == "right" else text + padding


class RowTable(ScrollView, Generic[Item], can_focus=True):
    """A list of rows with a cursor, keyed so the cursor survives row replacement."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "row-table--header",
        "row-table--cursor",
        "row-table--cursor-blurred",
        "row-table--empty",
        "status--none",
        "status--running",
        "status--ok",
        "status--fail",
        "status--unsupported",
        "status--error",
        "mark--changed",
        "mark--same",
        "mark--marked",
        "mark--culprit",
        "dim",
    }

    DEFAULT_CSS = """
    RowTable {
        height: 1fr;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
        & > .row-table--header { text-style: bold; color: $text-muted; }
        & > .row-table--cursor {
            background: $block-cursor-blurred-background;
            color: $text;  /* over every cell: a dim or red cell stays legible on it */
        }
        &:focus > .row-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
        & > .row-table--cursor-blurred { background: $block-cursor-blurred-background; }
        & > .row-table--empty { color: $text-muted; text-style: italic; }
        & > .status--none { color: $text-muted; }
        & > .status--running { color: $warning; text-style: bold; }
        & > .status--ok { color: $success; }
        & > .status--fail { color: $error; text-style: bold; }
        & > .status--unsupported { color: $secondary; text-style: italic; }
        & > .status--error { color: $error; text-style: italic; }
        & > .mark--changed { color: $accent; text-style: bold; }
        & > .mark--same { color: $text-muted; }
        & > .mark--marked { color: $primary; text-style: bold reverse; }
        & > .mark--culprit { color: $error; text-style: bold reverse; }
        & > .dim { color: $text-muted; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup,ctrl+b", "page(-1)", "Page up", show=False),
        Binding("pagedown,ctrl+f,space", "page(1)", "Page down", show=False),
        Binding("ctrl+u", "half_page(-1)", "Half page up", show=False),
        Binding("ctrl+d", "half_page(1)", "Half page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last", show=False),
        Binding("enter", "select", "Open", show=False,
                tooltip="Open the row: a module's timeline, a step's diff"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Highlighted(Message):
        """The cursor moved to another row (or the rows changed under it). `typing` is True
        while the table's filter is being typed into: the owner may wait for the result."""

        def __init__(self, table: RowTable, key: str | None, typing: bool = False) -> None:
            super().__init__()
            self.table = table
            self.key = key
            self.typing = typing

        @property
        def control(self) -> RowTable:
            return self.table

    class Selected(Highlighted):
        """Enter was pressed on a row."""

    def __init__(
        self,
        columns: Sequence[Column],
        row_key: Callable[[Item], str],
        render_row: Callable[[Item], Sequence[Cell]],
        *,
        empty_text: str = "nothing here",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.columns = list(columns)
        self.row_key = row_key
        self.render_row = render_row
        self.empty_text = empty_text
        self.rows: list[Item] = []
        self._keys: dict[str, int] = {}
        self._line_cache: LRUCache[tuple, Strip] = LRUCache(512)
        self._highlighted_key: str | None = None
        self._content_widths: list[int] | None = None  # widest cell per column, measured lazily

    # ----- data -------------------------------------------------------------------------------

    def set_rows(self, rows: Sequence[Item], keep: str | None = None) -> None:
        """Replace the rows; the cursor stays on the row with key `keep` (default: the current
        row's key) when it is still there."""
        keep = keep if keep is not None else self.current_key
        self.rows = list(rows)
        self._keys = {self.row_key(item): index for index, item in enumerate(self.rows)}
        self._line_cache.clear()
        self._content_widths = None
        size = Size(self.size.width, len(self.rows) + 1)
        if size != self.virtual_size:  # a new virtual size costs a layout of the screen
            self.virtual_size = size
        index = self._keys.get(keep, min(self.cursor, max(len(self.rows) - 1, 0))) \
            if keep is not None else 0
        self.move_to(index, force=True)
        self.refresh()

    def refresh_rows(self, keys: Sequence[str] | None = None) -> None:
        """Re-render rows whose content changed in place (a badge, a replay result)."""
        self._line_cache.clear()
        before = self._content_widths
        self._content_widths = None
        if keys is None or (before is not None and before != self.content_widths()):
            self.refresh()  # a column grew or shrank: every line moves
            return
        top = int(self.scroll_offset.y)
        for key in keys:
            index = self._keys.get(key)
            if index is not None and top <= index < top + self.size.height:
                self.refresh(Region(0, index - top + 1, self.size.width, 1))

    @property
    def current(self) -> Item | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    @property
    def current_key(self) -> str | None:
        item = self.current
        return None if item is None else self.row_key(item)

    def move_to_key(self, key: str) -> bool:
        index = self._keys.get(key)
        if index is None:
            return False
        self.move_to(index)
        return True

    # ----- cursor -----------------------------------------------------------------------------

    def move_to(self, index: int, force: bool = False) -> None:
        index = max(0, min(index, len(self.rows) - 1)) if self.rows else 0
        self.cursor = index
        self._scroll_to_cursor()
        # Announced from the table's own message loop: a message made while the parent pane
        # handles an event would have the pane as sender, and Textual stops bubbling there.
        self.call_later(self._announce, force)

    def announce(self) -> None:
        """Say again which row is under the cursor (a filter was typed meanwhile)."""
        self.call_later(self._announce, True, False)

    def _announce(self, force: bool, typing: bool | None = None) -> None:
        key = self.current_key
        if force or key != self._highlighted_key:
            self._highlighted_key = key
            if typing is None:
                typing = isinstance(self.screen.focused, Input)
            self.post_message(self.Highlighted(self, key, typing))

    def watch_cursor(self) -> None:
        self._line_cache.clear()
        self.refresh()

    def _scroll_to_cursor(self) -> None:
        rows_visible = max(self.size.height - 1, 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + rows_visible:
            self.scroll_to(y=self.cursor - rows_visible + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(self.size.height - 2, 1))

    def action_half_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max((self.size.height - 1) // 2, 1))

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(len(self.rows) - 1)

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current_key))

    def on_resize(self) -> None:
        self._line_cache.clear()
        self.virtual_size = Size(self.size.width, len(self.rows) + 1)
        self._scroll_to_cursor()

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y) + event.y - 1
        if event.y >= 1 and 0 <= row < len(self.rows):
            self.move_to(row)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._line_cache.clear()

    def on_focus(self) -> None:
        self._line_cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._line_cache.clear()
        self.refresh()

    # ----- rendering --------------------------------------------------------------------------

    def content_widths(self) -> list[int]:
        """The widest cell (or title) of each growing column; 0 for the others."""
        if self._content_widths is None:
            widest = [cell_len(c.title) if c.grow else 0 for c in self.columns]
            for row in self.rows[:MEASURED_ROWS]:
                for index, (text, _) in enumerate(self.render_row(row)):
                    if self.columns[index].grow:
                        widest[index] = max(widest[index], cell_len(on_screen(text)))
            self._content_widths = widest
        return self._content_widths

    def column_widths(self, width: int) -> list[int]:
        """Each column's width at this table width; 0 for a column hidden at this width.
        Growing columns widen to their content, in order, while the flex column keeps
        FLEX_MIN cells."""
        shown = [c for c in self.columns if width >= c.min_width]
        widths = [0 if width < c.min_width else c.width for c in self.columns]
        spare = width - (sum(widths) + len(shown) - 1) - FLEX_MIN
        if any(c.grow for c in shown):
            for index, (column, content) in enumerate(zip(self.columns, self.content_widths(),
                                                          strict=True)):
                if column.grow and widths[index] and spare > 0:
                    extra = max(0, min(content, column.grow) - widths[index])
                    widths[index] += min(extra, spare)
                    spare -= min(extra, spare)
        fixed = sum(w for c, w in zip(self.columns, widths, strict=True) if not c.flex)
        flex = max(width - fixed - (len(shown) - 1), 4)
        return [flex if c.flex and width >= c.min_width else w
                for c, w in zip(self.columns, widths, strict=True)]

    def _style(self, name: str) -> Style:
        if not name:
            return Style()
        return component_style(self, name)

    def _line(self, cells: Sequence[Cell], widths: list[int], base: Style,
              over: Style | None = None) -> Strip:
        """One line of cells; `over` (the cursor) is laid over every cell's own style, so a
        red badge never sits on the cursor's blue."""
        segments: list[Segment] = []
        for (text, style_name), column, width in zip(cells, self.columns, widths, strict=False):
            if not width:
                continue
            if segments:
                segments.append(Segment(" ", base))
            style = base + self._style(style_name)
            segments.append(Segment(fit(on_screen(text), width, column.align),
                                    style + over if over else style))
        return Strip(segments)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            key: tuple = ("header", width)
            if key not in self._line_cache:
                header = base + self._style("row-table--header")
                cells: Sequence[Cell] = [(c.title, "") for c in self.columns]
                self._line_cache[key] = self._line(cells, self.column_widths(width), header)
            return self._line_cache[key].crop_extend(0, width, base)
        index = int(self.scroll_offset.y) + y - 1
        if not self.rows:
            if y == 1:
                return Strip([Segment(fit(self.empty_text, width),
                                      base + self._style("row-table--empty"))])
            return Strip.blank(width, base)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        is_cursor = index == self.cursor
        key = (index, width, is_cursor, self.has_focus)
        strip = self._line_cache.get(key)
        if strip is None:
            style = base
            cursor = self._style("row-table--cursor") if is_cursor else None
            if cursor is not None:
                style = base + cursor
            cells = self.render_row(self.rows[index])
            strip = self._line(cells, self.column_widths(width), style, cursor)
            strip = strip.crop_extend(0, width, style)
            self._line_cache[key] = strip
        return strip
