"""The help screen (`?`): every key of the app and of each pane, with what the pane shows.

Generated from the bindings themselves, so it cannot drift from what the keys do.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from workbench.tui.keys import CommandHost, all_bindings


def key_lines(app: CommandHost, bindings: list[Binding]) -> Text:
    """One line per command: its keys, then what it does."""
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for binding in bindings:
        if binding.action in seen or not binding.description:
            continue
        seen.add(binding.action)
        keys = " ".join(app.get_key_display(binding.with_key(key))
                        for key in binding.key.split(","))
        rows.append((keys, binding.tooltip or binding.description))
    width = max((len(keys) for keys, _ in rows), default=0)
    text = Text()
    for keys, what in rows:
        text.append(f"  {keys.ljust(width)}  ", style="bold")
        text.append(f"{what}\n")
    text.rstrip()
    return text


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
