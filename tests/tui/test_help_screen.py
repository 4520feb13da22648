"""The help screen lists every pane's keys; the command palette offers every command."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Static

from workbench.tui.app import WorkbenchApp
from workbench.tui.commands import PaneCommands
from workbench.tui.help_screen import HelpScreen
from workbench.tui.keys import all_bindings
from workbench.tui.panes.timeline import TimelinePane


def static_text(static: Static, width: int = 300) -> str:
    """What a Static shows (a text or a table), as plain text `width` cells wide."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    content = static.content
    console.print(content if isinstance(content, (Text, Table)) else str(content))
    return console.export_text()


def test_help_lists_keys_of_every_pane(example: Path, drive) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(static_text(s) for s in app.screen.query(Static))
        for pane in app.panes:
            assert pane.TITLE in text
            for binding in all_bindings(type(pane)) + all_bindings(type(pane.focus_target())):
                if binding.description:
                    assert (binding.tooltip or binding.description) in text
        assert "Next hunk" in text and "Zoom the focused pane" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    drive(app, scenario)


def test_palette_commands_cover_pane_bindings(example: Path, drive, wait, until) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        titles = [f"{pane}: {b.description}" if pane else b.description
                  for pane, _, b in app.command_bindings()]
        assert "Timeline: Unchanged" in titles and "Modules: Sort" in titles
        assert "Go to Timeline" in titles and "Theme" in titles
        # Run one through the palette machinery: it focuses the pane and acts there.
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"timeline unchanged")
        hits = app.screen.query_one(CommandList)
        # The palette searches in the background: wait for the hit before choosing it.
        await until(pilot, lambda: hits.highlighted == 0 and "Timeline: Unchanged"
                    in str(hits.get_option_at_index(0).prompt))
        await pilot.press("enter")
        await wait(pilot)
        pane = app.pane(TimelinePane)
        assert pane.hide_unchanged and pane.table.has_focus
        assert PaneCommands in app.COMMANDS

    drive(app, scenario)


def test_help_says_how_to_close_and_lists_each_key_once(example: Path, drive) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("question_mark")
        statics = list(app.screen.query(Static))
        texts = [str(s.render()) for s in statics]
        assert "escape, q or ? closes this help" in texts[0]
        titles = [t for s, t in zip(statics, texts, strict=True) if s.has_class("help-title")]
        assert titles[:2] == ["Keys everywhere", "While a manual bisection (B) runs"]
        for section in texts:  # within a section, a key says one thing
            keys = [line.split()[0] for line in section.splitlines() if line.startswith("  ")]
            assert len(keys) == len(set(keys)), section
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    drive(app, scenario)


def test_palette_lists_each_command_once(example: Path, drive) -> None:
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        provider = PaneCommands(app.screen)
        ours = [title for title, _, _ in provider._commands()]
        system = [command.title for command in app.get_system_commands(app.screen)]
        every = [title.lower() for title in ours + system]
        assert len(every) == len(set(every)), sorted(every)
        assert "Quit" in system and "Modules: Sort" in ours

    drive(app, scenario)


def test_help_names_every_quit_key_and_indents_wrapped_descriptions(example: Path,
                                                                     drive) -> None:
    """`q`, ctrl+c and ctrl+q all quit, and the help says so on one line; a description too
    long for the help's width continues under its own first word, not under the keys."""
    app = WorkbenchApp(example, watch=False)

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("question_mark")
        keys = next(s for s in app.screen.query(Static) if "Find the culprit" in static_text(s))
        lines = static_text(keys, width=60).splitlines()
        quit_line = next(line for line in lines if line.rstrip().endswith("Quit"))
        assert quit_line.split() == ["q", "^c", "^q", "Quit"]
        culprit = next(i for i, line in enumerate(lines) if "Find the culprit" in line)
        column = lines[culprit].index("Find")
        continued = lines[culprit + 1]
        assert continued[:column].strip() == "" and continued[column] != " ", lines

    drive(app, scenario, size=(80, 24))
