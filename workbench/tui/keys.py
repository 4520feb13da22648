"""Which commands the app and its panes offer, for the help screen and the command palette.

Both reach the app through `CommandHost`, never through the app class, so neither imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.app import SystemCommand
    from textual.dom import DOMNode
    from textual.screen import Screen

    from workbench.tui.panes.base import Pane


@runtime_checkable
class CommandHost(Protocol):
    """What the help screen and the palette need of the app."""

    @property
    def panes(self) -> list[Pane]: ...

    def command_bindings(self) -> Iterator[tuple[str, DOMNode, Binding]]: ...

    async def run_command(self, node: DOMNode, binding: Binding) -> None: ...

    def get_key_display(self, binding: Binding) -> str: ...

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]: ...


def all_bindings(node_type: type[DOMNode]) -> list[Binding]:
    """The workbench's own bindings of a widget class and its bases, own ones first (the
    scrolling keys Textual's base classes add are overridden, so they are left out)."""
    found: list[Binding] = []
    for cls in node_type.__mro__:
        if cls.__module__.startswith("workbench."):
            found.extend(Binding.make_bindings(cls.__dict__.get("BINDINGS", [])))
    return found
