"""Widgets for text that quotes the dump (names, IR, reports): never read as markup, control
characters shown visibly (see `workbench.output.safe_text`). Textual reads a `str` given to a
`Static` or a `Tree` label as markup; these do not."""

from __future__ import annotations

from typing import Any, TypeVar

from rich.text import Text
from textual.widgets import Static, Tree

from workbench.output.safe_text import visible, visible_text


def _shown(content: Any) -> Any:
    if isinstance(content, str):
        return visible(content, lines=True)
    if isinstance(content, Text):
        return visible_text(content)
    return content


class DataStatic(Static):
    def __init__(self, content: Any = "", **options: Any) -> None:
        super().__init__(_shown(content), markup=False, **options)

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        super().update(_shown(content), layout=layout)


NodeData = TypeVar("NodeData")


class DataTree(Tree[NodeData]):
    def process_label(self, label: str | Text) -> Text:
        shown = Text(visible(label, lines=True)) if isinstance(label, str) else visible_text(label)
        return shown.split()[0] if shown.plain else shown
