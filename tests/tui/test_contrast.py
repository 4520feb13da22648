"""Every piece of text on the main screen against its background, as WCAG 2 contrast ratios,
in each shipped theme and in the three colour modes a terminal may have: truecolor, 256
colours (tmux without COLORTERM, most SSH sessions) and 16 colours (TERM=screen, vt100).

The colours are read from the rendered screen, not from the theme file, so every rule that
paints text (Textual's own widgets too) is measured; they are reduced to 256 and 16 colours as
Rich does for such a terminal, 16 colours drawn with Rich's default terminal palette.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.color import Color, ColorSystem
from rich.terminal_theme import DEFAULT_TERMINAL_THEME
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.panes.timeline import TimelinePane

GOAL = 4.5  # WCAG AA for text
# 16 colours: a blurred cursor row (white on bright black) reaches 3.95 with the default
# palette, and the light theme's muted text on its panel 2.17; the goal is not met there yet.
FLOOR_16 = {"dark": 3.9, "mono": 3.9, "light": 2.1}
LINES_ONLY = " ─━▏▕│┃╸╺▁▂▃▄▅▆▇█▔▎▍▌"  # rules and bars, not text


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = rgb
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def shown(color: Color, system: ColorSystem) -> tuple[int, int, int]:
    """The colour a terminal of `system` shows for `color`."""
    if system != ColorSystem.TRUECOLOR:
        color = color.downgrade(system)
    triplet = color.get_truecolor(DEFAULT_TERMINAL_THEME)
    return triplet.red, triplet.green, triplet.blue


def test_contrast_formula() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("theme", ["dark", "light", "mono"])
def test_every_text_on_screen_reaches_the_contrast_goal(theme: str, example: Path, drive,
                                                        wait) -> None:
    app = WorkbenchApp(example, watch=False, theme=theme)

    async def scenario(pilot: Pilot) -> None:
        # The module list with the unfocused cursor, the timeline focused on a changed step
        # and the diff with added and removed lines, the tabs, the footer, the status line.
        await pilot.press("3")
        app.pane(TimelinePane).table.move_to(30)
        await wait(pilot)
        pairs = set()
        for strip in app.screen._compositor.render_strips():
            for segment in strip:
                style = segment.style
                text = segment.text.strip(LINES_ONLY)
                if not text or style is None or style.color is None or style.bgcolor is None:
                    continue
                fg, bg = (style.bgcolor, style.color) if style.reverse else (style.color,
                                                                             style.bgcolor)
                pairs.add((text, fg, bg))
        assert len(pairs) > 50
        for system, floor in ((ColorSystem.TRUECOLOR, GOAL), (ColorSystem.EIGHT_BIT, GOAL),
                              (ColorSystem.STANDARD, FLOOR_16[theme])):
            worst = min(pairs, key=lambda p: contrast(shown(p[1], system), shown(p[2], system)))
            ratio = contrast(shown(worst[1], system), shown(worst[2], system))
            assert ratio >= floor, (system.name, round(ratio, 2), worst)

    drive(app, scenario, size=(120, 40))
