"""The one-line filter/search box the panes open with `/`.

Hidden until asked for; typing updates the owner live (`Changed`), Enter submits
(`Submitted`), keeps the text and gives focus back, Escape clears and closes it (also from the
owner's pane, see `Pane.close_boxes`). A box left empty closes when focus leaves it, so no
later key can land in a box nobody sees a reason for.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input

from workbench.tui.focus import move_focus


class FilterInput(Input):
    DEFAULT_CSS = """
    FilterInput {
        display: none;
        height: 1;
        border: none;
        padding: 0 1;
        background: $boost;
        &.-open { display: block; }
        &:focus { border: none; background: $boost; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear", "Clear filter", show=False),
    ]

    class Done(Message):
        """Enter or Escape: the owner takes focus back."""

        def __init__(self, filter_input: FilterInput) -> None:
            super().__init__()
            self.filter_input = filter_input

        @property
        def control(self) -> FilterInput:
            return self.filter_input

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self) -> None:
        self.add_class("-open")
        move_focus(self)

    def on_blur(self) -> None:
        if not self.value:
            self.remove_class("-open")

    def action_clear(self) -> None:
        self.value = ""
        self.remove_class("-open")
        self.post_message(self.Done(self))

    async def action_submit(self) -> None:
        await super().action_submit()  # posts Submitted, for owners that act on Enter
        if not self.value:
            self.remove_class("-open")
        self.post_message(self.Done(self))
