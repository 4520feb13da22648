"""Component-class styles as they show on screen.

Textual's partial component style leaves a translucent colour unblended (`$success 20%` drew
the whole added line bright green, with light grey text on it) and an `auto` colour
unresolved. Here the style is resolved against the widget's background, as Textual does for
whole widgets, and keeps only the colours the class sets, so it can be laid over a row.
"""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget


def component_style(widget: Widget, name: str) -> Style:
    """The style of component class `name` of `widget`, its colours blended and resolved."""
    full = widget.get_component_rich_style(name, partial=False)
    styles = widget.get_component_styles(name)
    color = full.color if styles.has_rule("color") else None
    background = full.bgcolor if styles.has_rule("background") else None
    return full.without_color + Style(color=color, bgcolor=background)
