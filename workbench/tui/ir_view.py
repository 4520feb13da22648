"""A virtualized view of IR text and IR diffs (unified or side by side).

Like toolong's log view it never builds a widget per line: a document is a list of small row
objects, `render_line(y)` renders only what is on screen, and rendered lines are kept in an LRU
cache, so a 6,000-line module scrolls as fast as a 60-line one. Styles come from component
classes, so added/removed lines follow the theme, and every changed line also carries a `+`/`-`
marker in its gutter (readable without colour).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, overload

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from workbench.output.safe_text import visible
from workbench.tui.component_style import component_style

# The longest line shown whole: a line of a damaged or hostile file can be gigabytes, and
# measuring or drawing it would stall the app; past this the row says how much is cut.
MAX_LINE_CHARS = 10_000


def clipped(line: str) -> str:
    """`line` as shown: its control characters visible (tabs kept for `expandtabs`), and at
    most its first MAX_LINE_CHARS characters, with how many more there are."""
    if len(line) <= MAX_LINE_CHARS:
        return visible(line, lines=True)
    return (f"{visible(line[:MAX_LINE_CHARS], lines=True)} … "
            f"({len(line) - MAX_LINE_CHARS:,} more characters not shown)")


@dataclass(frozen=True, slots=True)
class TextRow:
    """One rendered line: `kind` picks its style ("same", "added", "removed", "hunk", "text",
    "blank", "note"); `gutter` holds line numbers and marker, as wide on every row of a
    document."""

    kind: str
    gutter: str
    text: str


Row = TextRow | tuple[TextRow, TextRow]


@dataclass
class ViewDocument:
    """What the view shows: rows (pairs when side by side), and where each hunk starts."""

    rows: Sequence[Row]
    side_by_side: bool = False
    hunks: list[int] = field(default_factory=list)
    # The row of each line of the newer text (1-based) a diff shows; a listing's row is its
    # line number less one.
    line_rows: dict[int, int] = field(default_factory=dict)
    # Measured where the document is made (a loader's thread), never while the event loop
    # draws: a 1,000,000-line listing takes seconds to measure character by character.
    text_width: int = field(init=False)

    def __post_init__(self) -> None:
        if self.side_by_side:
            self.text_width = 0  # halves are cut to the view's width; no horizontal scrolling
        elif isinstance(self.rows, Listing):
            self.text_width = self.rows.width()
        else:
            self.text_width = _rows_width(self.rows)


def _width(text: str) -> int:
    """Cells `text` takes: its length when it is printable ASCII (one cell a character)."""
    return len(text) if text.isascii() and text.isprintable() else cell_len(text)


def _rows_width(rows: Iterable[Row]) -> int:
    return max((_width(r.gutter) + _width(r.text) for r in rows if isinstance(r, TextRow)),
               default=0)


class Listing(Sequence[TextRow]):
    """The lines of a text as numbered rows, each made when it is asked for: a million-line
    module costs its lines, not a million row objects made while the app waits.

    A text of printable ASCII lines none longer than MAX_LINE_CHARS (the usual IR) is `plain`:
    each line is shown as it is, so its width is its length and a search reads the lines."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.digits = len(str(len(self.lines)))
        self.longest = max(map(len, self.lines), default=0)
        self.plain = (self.longest <= MAX_LINE_CHARS and text.isascii()
                      and text.replace("\n", "").isprintable())

    def _row(self, number: int, line: str) -> TextRow:
        return TextRow("text", f"{number:>{self.digits}} ", clipped(line).expandtabs())

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> TextRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[TextRow]: ...

    def __getitem__(self, index: int | slice) -> TextRow | list[TextRow]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.lines)))]
        line = self.lines[index]  # IndexError past either end
        return self._row(index + 1 if index >= 0 else len(self.lines) + index + 1, line)

    def __iter__(self) -> Iterator[TextRow]:
        return (self._row(number, line) for number, line in enumerate(self.lines, 1))

    def width(self) -> int:
        if not self.plain or not self.lines:
            return _rows_width(self)
        return self.digits + 1 + self.longest

    def find(self, term: str) -> list[int]:
        """Rows whose shown text holds `term` (lower case)."""
        if self.plain:
            return [index for index, line in enumerate(self.lines) if term in line.lower()]
        return [index for index, row in enumerate(self) if term in row.text.lower()]


def text_document(text: str) -> ViewDocument:
    """A plain listing of `text` with line numbers."""
    return ViewDocument(Listing(text))


def message_document(message: str) -> ViewDocument:
    return ViewDocument([TextRow("note", "", clipped(line)) for line in message.splitlines()])


class IrView(ScrollView, can_focus=True):
    """Scrolls a `ViewDocument`; jumps between hunks and search matches."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ir-view--gutter",
        "ir-view--added",
        "ir-view--removed",
        "ir-view--hunk",
        "ir-view--blank",
        "ir-view--note",
        "ir-view--match",
        "ir-view--current",
    }

    DEFAULT_CSS = """
    IrView {
        height: 1fr;
        scrollbar-size: 1 1;
        & > .ir-view--gutter { color: $text-muted; }
        & > .ir-view--added { background: $success 20%; color: $foreground; }
        & > .ir-view--removed { background: $error 20%; color: $foreground; }
        & > .ir-view--hunk { color: $accent; text-style: bold; }
        & > .ir-view--blank { color: $text-disabled; }
        & > .ir-view--note { color: $text-muted; text-style: italic; }
        & > .ir-view--match { background: $warning 50%; text-style: bold underline; }
        & > .ir-view--current { text-style: reverse; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "scroll_by(0, -1)", "Up", show=False),
        Binding("down,j", "scroll_by(0, 1)", "Down", show=False),
        Binding("left,h", "scroll_by(-8, 0)", "Left", show=False),
        Binding("right,l", "scroll_by(8, 0)", "Right", show=False),
        Binding("pageup,ctrl+b", "page(-1)", "Page up", show=False),
        Binding("pagedown,ctrl+f,space", "page(1)", "Page down", show=False),
        Binding("ctrl+u", "half_page(-1)", "Half page up", show=False),
        Binding("ctrl+d", "half_page(1)", "Half page down", show=False),
        Binding("home,g", "top", "Top", show=False),
        Binding("end,G", "bottom", "Bottom", show=False),
        Binding("right_square_bracket", "hunk(1)", "Next hunk"),
        Binding("left_square_bracket", "hunk(-1)", "Prev hunk"),
        Binding("n", "match(1)", "Next match", show=False),
        Binding("N", "match(-1)", "Prev match", show=False),
    ]

    search: reactive[str] = reactive("", init=False)

    class Moved(Message):
        """The view scrolled to a hunk or match (for the pane's position display)."""

        def __init__(self, view: IrView, what: str, index: int, total: int,
                     wrapped: bool = False) -> None:
            super().__init__()
            self.view = view
            self.what = what
            self.index = index
            self.total = total
            self.wrapped = wrapped  # went past the last (first) one to the first (last)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.document = ViewDocument([])
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)
        self._matches: list[int] = []
        self.current_row: int | None = None  # the hunk or match last jumped to
        self.marked: set[int] = set()  # rows shown as matches (a localized instruction)

    def show(self, document: ViewDocument, keep_position: bool = False) -> None:
        y = self.scroll_offset.y if keep_position else 0
        self.document = document
        self.current_row = None
        self.marked = set()
        self._cache.clear()
        self._matches = self._find(self.search)
        self.virtual_size = Size(document.text_width, len(document.rows))
        self.scroll_to(0, y, animate=False, immediate=True)
        self.refresh()

    # ----- navigation -------------------------------------------------------------------------

    def action_scroll_by(self, dx: int, dy: int) -> None:
        self.scroll_to(self.scroll_offset.x + dx, self.scroll_offset.y + dy, animate=False)

    def action_page(self, direction: int) -> None:
        self.action_scroll_by(0, direction * max(self.size.height - 1, 1))

    def action_half_page(self, direction: int) -> None:
        self.action_scroll_by(0, direction * max(self.size.height // 2, 1))

    def action_top(self) -> None:
        self.scroll_to(y=0, animate=False)

    def action_bottom(self) -> None:
        self.scroll_to(y=len(self.document.rows), animate=False)

    def _jump(self, targets: list[int], direction: int, what: str) -> None:
        if not targets:
            self.notify(f"no {what}s", timeout=2)
            return
        here = self.current_row if self.current_row is not None else int(self.scroll_offset.y) - 1
        if direction > 0:
            following = [t for t in targets if t > here]
            target = following[0] if following else targets[0]
        else:
            preceding = [t for t in targets if t < here]
            target = preceding[-1] if preceding else targets[-1]
        wrapped = not (following if direction > 0 else preceding) and len(targets) > 1
        self.go_to_row(target)
        self.post_message(self.Moved(self, what, targets.index(target), len(targets), wrapped))

    def go_to_row(self, row: int) -> None:
        """Scroll so `row` is near the top (with two rows of context above) and mark it."""
        self.current_row = row
        self._cache.clear()
        self._scroll_to_row(row, attempts=5)
        self.refresh()

    def _scroll_to_row(self, row: int, attempts: int) -> None:
        """Scroll to `row` (if it is still the current one); a document just shown is not laid
        out yet (its height clamps the scroll), so try again after the next refreshes."""
        if row != self.current_row:
            return
        y = max(row - 2, 0)
        self.scroll_to(y=y, animate=False, immediate=True)
        missed = self.scroll_offset.y != min(y, self.max_scroll_y) or self.max_scroll_y == 0 < y
        if missed and attempts > 0:
            self.call_after_refresh(self._scroll_to_row, row, attempts - 1)

    def line_row(self, number: int) -> tuple[int, int] | None:
        """(line, row): the row showing line `number` of the text (a diff: of the newer
        text), or the first shown line after it (lines the normalized diff leaves out, lines
        of another computation); None past the last line."""
        if isinstance(self.document.rows, Listing):
            number = max(number, 1)
            return (number, number - 1) if number <= len(self.document.rows) else None
        shown = [line for line in self.document.line_rows if line >= number]
        if not shown:
            return None
        line = min(shown)
        return line, self.document.line_rows[line]

    def hunk_here(self) -> int | None:
        """Which hunk the view is at: the last one starting at or above the current row (or
        the top row), else the first one; None when there are none."""
        hunks = self.document.hunks
        if not hunks:
            return None
        here = self.current_row if self.current_row is not None else int(self.scroll_offset.y)
        return max((k for k, start in enumerate(hunks) if start <= here), default=0)

    def hunk_text(self, k: int) -> str:
        """Hunk `k` as `diff -u` body lines: what went (`-`), then what came (`+`)."""
        rows = self.document.rows
        start = self.document.hunks[k]
        removed: list[str] = []
        added: list[str] = []
        for row in rows[start:]:
            halves = row if isinstance(row, tuple) else (row,)
            if not any(half.kind in ("added", "removed") for half in halves):
                break
            for half in halves:
                if half.kind == "removed":
                    removed.append(f"-{half.text}")
                elif half.kind == "added":
                    added.append(f"+{half.text}")
        return "\n".join(removed + added)

    def mark_rows(self, rows: set[int]) -> None:
        """Show `rows` in the match style until the next document."""
        self.marked = rows
        self._cache.clear()
        self.refresh()

    def action_hunk(self, direction: int) -> None:
        self._jump(self.document.hunks, direction, "hunk")

    def action_match(self, direction: int) -> None:
        self._jump(self._matches, direction, "match")

    def watch_search(self, term: str) -> None:
        self._matches = self._find(term)
        self._cache.clear()
        self.refresh()
        if self._matches:
            self._jump(self._matches, 1, "match")

    @property
    def match_count(self) -> int:
        return len(self._matches)

    def _find(self, term: str) -> list[int]:
        if not term:
            return []
        term = term.lower()
        if isinstance(self.document.rows, Listing):
            return self.document.rows.find(term)
        found = []
        for index, row in enumerate(self.document.rows):
            halves = row if isinstance(row, tuple) else (row,)
            if any(term in half.text.lower() for half in halves):
                found.append(index)
        return found

    # ----- rendering --------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def on_resize(self) -> None:
        self._cache.clear()

    def _style(self, name: str) -> Style:
        return component_style(self, name)

    def _kind_style(self, kind: str) -> Style:
        if kind in ("added", "removed", "hunk", "blank", "note"):
            return self._style(f"ir-view--{kind}")
        return Style()

    def _render_half(self, row: TextRow, width: int, scroll_x: int, base: Style) -> list[Segment]:
        style = base + self._kind_style(row.kind)
        # A changed line's own colour wins over the muted gutter: it reads on its background.
        gutter_style = base + self._style("ir-view--gutter") + self._kind_style(row.kind)
        gutter = row.gutter[:width]
        text_width = max(width - cell_len(gutter), 0)
        text = row.text[scroll_x:] if scroll_x else row.text
        segments = [Segment(gutter, gutter_style)]
        term = self.search.lower()
        if term and term in text.lower():
            segments.extend(self._highlight(text, term, style))
        else:
            segments.append(Segment(text, style))
        return list(Strip(segments).crop_extend(0, cell_len(gutter) + text_width, style))

    def _highlight(self, text: str, term: str, style: Style) -> list[Segment]:
        match_style = style + self._style("ir-view--match")
        lower = text.lower()
        segments, start = [], 0
        while (found := lower.find(term, start)) >= 0:
            segments.append(Segment(text[start:found], style))
            segments.append(Segment(text[found:found + len(term)], match_style))
            start = found + len(term)
        segments.append(Segment(text[start:], style))
        return segments

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = int(self.scroll_offset.y) + y
        rows = self.document.rows
        if index >= len(rows):
            return Strip.blank(width, base)
        scroll_x = int(self.scroll_offset.x)
        is_current = index == self.current_row
        is_marked = index in self.marked
        key = (index, width, scroll_x, is_current, is_marked)
        strip = self._cache.get(key)
        if strip is not None:
            return strip
        row = rows[index]
        if isinstance(row, tuple):
            left_width = (width - 1) // 2
            right_width = width - 1 - left_width
            segments = self._render_half(row[0], left_width, 0, base)
            segments.append(Segment("│", base + self._style("ir-view--gutter")))
            segments.extend(self._render_half(row[1], right_width, 0, base))
        else:
            segments = self._render_half(row, width, scroll_x, base)
        strip = Strip(segments).crop_extend(0, width, base)
        if is_marked:
            strip = strip.apply_style(self._style("ir-view--match"))
        if is_current:
            strip = Strip(
                [Segment(s.text, (s.style or Style()) + self._style("ir-view--current"))
                 if i == 0 else s for i, s in enumerate(strip)]
            )
        self._cache[key] = strip
        return strip
