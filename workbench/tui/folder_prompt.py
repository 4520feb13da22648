"""A prompt for the folder a command writes to (`W`'s reproducer), pre-filled with a default.

The folder typed is checked before the prompt closes (`check` says why it is refused: inside
the dump, not empty); a refusal is shown under the box, which stays open to be corrected.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input

from workbench.tui.data_widgets import DataStatic


def typed_folder(text: str) -> Path:
    """The folder a user typed: `~` expanded, relative to the current folder."""
    return Path.cwd() / Path(text.strip()).expanduser()


class FolderPrompt(ModalScreen[Path | None]):
    """Dismisses with the folder chosen (absolute), or None (escape)."""

    DEFAULT_CSS = """
    FolderPrompt {
        align: center middle;
        & > Vertical { width: 90%; max-width: 100; height: auto; border: round $primary;
                       padding: 0 1; }
        & #folder-prompt-title { color: $text; text-style: bold; }
        & #folder-prompt-help { color: $text-muted; }
        & #folder-prompt-refusal { color: $text-error; display: none; }
        & #folder-prompt-refusal.-shown { display: block; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, default: Path, check: Callable[[Path], str | None]) -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.check = check
        self.box = Input(str(default), id="folder-prompt-input")
        self.refusal = DataStatic("", id="folder-prompt-refusal")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield DataStatic(self.title_text, id="folder-prompt-title")
            yield self.box
            yield self.refusal
            yield DataStatic("Enter writes there (a new or empty folder, outside the dump); "
                             "escape cancels", id="folder-prompt-help")

    def on_mount(self) -> None:
        self.box.focus()
        self.box.cursor_position = len(self.box.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.refuse("type a folder")
            return
        folder = typed_folder(event.value)
        problem = self.check(folder)
        if problem:
            self.refuse(problem)
        else:
            self.dismiss(folder)

    def refuse(self, problem: str) -> None:
        self.refusal.update(problem)
        self.refusal.add_class("-shown")

    def action_cancel(self) -> None:
        self.dismiss(None)
