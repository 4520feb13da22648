"""The help screen (`?`): every key of the app and of each pane, with what the pane shows.

Generated from the bindings themselves, so it cannot drift from what the keys do.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from workbench.tui.keys import CommandHost, all_bindings


def key_lines(app: CommandHost, bindings: list[Binding]) -> Table:
    """One row per command: all its keys (`q ctrl+c ctrl+q`), then what it does; a long
    description wraps within its column, under its own first line."""
    keys: dict[str, list[str]] = {}  # action -> its keys, in binding order
    what: dict[str, str] = {}
    for binding in bindings:
        if not binding.description:
            continue
        shown = keys.setdefault(binding.action, [])
        for key in binding.key.split(","):
            display = app.get_key_display(binding.with_key(key))
            if display not in shown:
                shown.append(display)
        what.setdefault(binding.action, binding.tooltip or binding.description)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for action, shown in keys.items():
        table.add_row(Text(" " + " ".join(shown)), Text(what[action]))
    return table


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            width: 90%;
            max-width: 100;
            height: 90%;
            border: round $primary;
            background: $surface;
            padding: 0 1;
        }
        Static.help-title { text-style: bold; color: $accent; margin-top: 1; }
        Static.help-text { color: $text-muted; }
        Static.help-close { text-style: bold; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close help"),
        Binding("j,down", "scroll(1)", "Down", show=False),
        Binding("k,up", "scroll(-1)", "Up", show=False),
    ]

    def compose(self) -> ComposeResult:
        app = self.app
        assert isinstance(app, CommandHost)
        with VerticalScroll(id="help-scroll"):
            yield Static(Text("escape, q or ? closes this help; j / k scroll it."),
                         classes="help-close")
            yield Static("Keys everywhere", classes="help-title")
            yield Static(Text("Tab / Shift+Tab move between panes; ctrl+p opens the command "
                              "palette with every command below."), classes="help-text")
            # The priority keys are a mode's: they take over letters only while it runs.
            everywhere = all_bindings(type(app))
            yield Static(key_lines(app, [b for b in everywhere if not b.priority]))
            yield Static("While a manual bisection (B) runs", classes="help-title")
            yield Static(key_lines(app, [b for b in everywhere if b.priority]))
            for pane in app.panes:
                yield Static(f"{pane.KEY}  {pane.TITLE}" if pane.KEY else pane.TITLE,
                             classes="help-title")
                if pane.HELP:
                    yield Static(Text(pane.HELP), classes="help-text")
                bindings = all_bindings(type(pane)) + all_bindings(type(pane.focus_target()))
                yield Static(key_lines(app, bindings))

    def action_scroll(self, lines: int) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        scroll.scroll_to(y=scroll.scroll_y + lines, animate=False)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
