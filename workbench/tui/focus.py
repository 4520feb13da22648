"""The one way the workbench moves focus: at once, turning the tab and leaving the zoom that
would hide the target.

Textual's `Widget.focus()` takes effect on a later turn of the event loop, and the app used to
wait for a redraw as well; keys typed meanwhile (a fast typist, a paste over SSH) went to the
widget being left, or focus fell to whatever Textual picked when a tab hid the focused widget.
Here the tab is turned and the focus set before the next key is read, so it lands in `target`.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane


class PaneTabs(TabbedContent):
    """Tabs that follow focus only while it is still there: Textual turns to the tab of a
    widget that was focused when it hears of it, which can be after a faster key has moved
    focus to another tab (`9` then `5` landed back on the IREE tab)."""

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.screen.focused
        if focused is None or event.tab_pane not in focused.ancestors:
            event.prevent_default()  # Textual's own handler (called after this one) is skipped
            event.stop()


def move_focus(target: Widget) -> None:
    """Focus `target` now (after the next redraw if its tab has not mounted it yet)."""
    if not target.is_attached:
        target.app.call_after_refresh(move_focus, target)
        return
    for ancestor in target.ancestors:
        if isinstance(ancestor, TabPane):
            tabs = next((a for a in ancestor.ancestors if isinstance(a, TabbedContent)), None)
            if tabs is not None and ancestor.id is not None and tabs.active != ancestor.id:
                tabs.active = ancestor.id
    screen = target.screen
    zoomed = screen.maximized
    if zoomed is not None and zoomed is not target and zoomed not in target.ancestors:
        screen.minimize()
    screen.set_focus(target)
