"""The top line: which folder, how the scan and the watch are doing, and the running job."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from workbench.output.safe_text import on_screen, visible
from workbench.tui.component_style import component_style


def progress_bar(done: int, total: int, width: int = 10) -> str:
    """`▕████░░░░░░▏` with eighth-blocks; readable in monochrome."""
    if total <= 0:
        return ""
    filled = done * width * 8 // total
    full, part = divmod(filled, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part and full < width else "")
    return "▕" + bar.ljust(width, "░") + "▏"


class StatusBar(Widget):
    COMPONENT_CLASSES: ClassVar[set[str]] = {"status-bar--scan"}
    DEFAULT_CSS = """
    StatusBar {
        dock: top;
        height: 1;
        background: $panel;
        color: $text;
        & > .status-bar--scan { color: $text-muted; }
    }
    """

    folder: reactive[str] = reactive("")
    scan: reactive[str] = reactive("")
    job: reactive[str] = reactive("")

    def render(self) -> Text:
        width = self.size.width
        folder = self.folder
        room_for_folder = max(width // 3, 12)
        if len(folder) > room_for_folder:  # keep the end of a long path: the dump's own name
            folder = "…" + folder[-(room_for_folder - 1):]
        left = Text.assemble(("workbench ", "bold"), (on_screen(folder), ""))
        right = Text(visible(self.job), style="bold")
        middle = Text(f"  {self.scan}", style=component_style(self, "status-bar--scan"))
        line = Text.assemble(left, middle)
        room = width - right.cell_len - 1
        if line.cell_len > room:
            line.truncate(max(room, 0), overflow="ellipsis")
        line.append(" " * max(room - line.cell_len, 0))
        line.append_text(right)
        return line
