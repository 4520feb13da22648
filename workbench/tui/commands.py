"""Command palette (ctrl+p): every command of the app and its panes, found by fuzzy search.

Built from the same bindings the footer and the help screen show, so a new pane binding is a
palette command without further work; choosing one focuses its pane and runs it there.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from workbench.tui.keys import CommandHost


class PaneCommands(Provider):
    def _commands(self) -> list[tuple[str, str, partial]]:
        app = self.app
        assert isinstance(app, CommandHost)
        commands = []
        # Textual's own commands (Quit, Theme, Keys, ...) are listed once, by Textual.
        system = {command.title.lower() for command in app.get_system_commands(self.screen)}
        for pane_title, node, binding in app.command_bindings():
            title = f"{pane_title}: {binding.description}" if pane_title else binding.description
            if title.lower() in system:
                continue
            key = app.get_key_display(binding)
            help_text = escape(f"{binding.tooltip} · key {key}" if binding.tooltip
                               else f"key {key}")
            commands.append((title, help_text, partial(app.run_command, node, binding)))
        return commands

    async def discover(self) -> Hits:
        for title, help_text, command in self._commands():
            yield DiscoveryHit(title, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, help=help_text)
