"""A small list to pick one computation or function of a diff (or all of them)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.diff.ir_diff import SectionChange
from workbench.output.safe_text import visible

_MARKS = {"changed": "~", "added": "+", "removed": "-", "unchanged": " "}
ALL = "\0all"  # the option id meaning "every section"


class SectionPicker(ModalScreen[str | None]):
    """Dismisses with a section name, `ALL`, or None (cancelled)."""

    DEFAULT_CSS = """
    SectionPicker {
        align: center middle;
        & > OptionList { width: 70%; max-width: 90; height: auto; max-height: 80%;
                         border: round $primary; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "cancel", "Cancel")]

    def __init__(self, sections: list[SectionChange], current: str | None) -> None:
        super().__init__()
        self.sections = sections
        self.current = current

    def compose(self) -> ComposeResult:
        options = [Option(Text("all computations / functions", style="bold"), id=ALL)]
        # Changed ones first: that is what one wants to look at.
        order = {"changed": 0, "added": 1, "removed": 2, "unchanged": 3}
        for change in sorted(self.sections, key=lambda c: order[c.status]):
            counts = f"  -{change.removed_lines} +{change.added_lines}" if (
                change.removed_lines or change.added_lines) else ""
            label = Text(f"{_MARKS[change.status]} {visible(change.name)}")
            label.append(f"  {change.status}{counts}", style="dim")
            options.append(Option(label, id=change.name))
        option_list = OptionList(*options)
        yield option_list

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        if self.current is not None:
            option_list.highlighted = option_list.get_option_index(self.current)
        option_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
