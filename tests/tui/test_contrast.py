"""Every piece of text on the main screen against its background, as WCAG 2 contrast ratios,
in each shipped theme and in the three colour modes a terminal may have: truecolor, 256
colours (tmux without COLORTERM, most SSH sessions) and 16 colours (TERM=screen, vt100).

The colours are read from the rendered screen, not from the theme file, so every rule that
paints text (Textual's own widgets too) is measured; they are reduced to 256 and 16 colours as
Rich does for such a terminal, 16 colours drawn with Rich's default terminal palette and with
the VGA palette Rich reduces colours with. At 16 colours the app runs as in such a terminal
(`TERM=screen`, no COLORTERM), where it draws text in standard colours chosen to be legible.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich._palettes import STANDARD_PALETTE
from rich.color import Color, ColorSystem
from rich.terminal_theme import DEFAULT_TERMINAL_THEME
from textual.pilot import Pilot

from workbench.tui.app import WorkbenchApp
from workbench.tui.contrast import contrast, legible_pair
from workbench.tui.panes.timeline import TimelinePane

GOAL = 4.5  # WCAG AA for text
LINES_ONLY = " ─━▏▕│┃╸╺▁▂▃▄▅▆▇█▔▎▍▌"  # rules and bars, not text


def shown(color: Color, system: ColorSystem, vga: bool = False) -> tuple[int, int, int]:
    """The colour a terminal of `system` shows for `color` (16 colours: in the VGA palette
    when `vga`, else in Rich's default terminal palette)."""
    if system != ColorSystem.TRUECOLOR:
        color = color.downgrade(system)
    if vga and color.number is not None and color.number < 16:
        triplet = STANDARD_PALETTE[color.number]
    else:
        triplet = color.get_truecolor(DEFAULT_TERMINAL_THEME)
    return triplet.red, triplet.green, triplet.blue


def test_contrast_formula() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)


def test_a_legible_pair_is_kept_and_every_other_made_legible() -> None:
    palettes = (False, True)
    for base in (0, 15):
        for fore in range(16):
            for back in range(16):
                fg, bg = legible_pair(
                    Color.from_ansi(fore), Color.from_ansi(back), Color.from_ansi(base)
                )
                ratios = [
                    contrast(
                        shown(fg, ColorSystem.STANDARD, vga), shown(bg, ColorSystem.STANDARD, vga)
                    )
                    for vga in palettes
                ]
                assert min(ratios) >= GOAL, (fore, back, ratios)
                before = [
                    contrast(
                        shown(Color.from_ansi(fore), ColorSystem.STANDARD, vga),
                        shown(Color.from_ansi(back), ColorSystem.STANDARD, vga),
                    )
                    for vga in palettes
                ]
                if min(before) >= GOAL:
                    assert (fg.number, bg.number) == (fore, back)
                elif bg.number != back:  # a background changes only to leave the screen's
                    assert bg.number != base


def screen_pairs(app: WorkbenchApp) -> set[tuple[str, Color, Color]]:
    """Each text drawn on the screen now with its foreground and background colours."""
    pairs = set()
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            style = segment.style
            text = segment.text.strip(LINES_ONLY)
            if not text or style is None or style.color is None or style.bgcolor is None:
                continue
            fg, bg = (style.bgcolor, style.color) if style.reverse else (style.color, style.bgcolor)
            pairs.add((text, fg, bg))
    return pairs


def measure(app: WorkbenchApp, drive, wait) -> set[tuple[str, Color, Color]]:
    """The pairs on the main screen with the module list's unfocused cursor, the timeline
    focused on a changed step and the diff with added and removed lines, the tabs, the
    footer, the status line."""
    pairs: set[tuple[str, Color, Color]] = set()

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("3")
        app.pane(TimelinePane).table.move_to(30)
        await wait(pilot)
        pairs.update(screen_pairs(app))

    drive(app, scenario, size=(120, 40))
    assert len(pairs) > 50
    return pairs


@pytest.mark.parametrize("theme", ["dark", "light", "mono"])
def test_every_text_on_screen_reaches_the_contrast_goal(
    theme: str, example: Path, drive, wait
) -> None:
    pairs = measure(WorkbenchApp(example, watch=False, theme=theme), drive, wait)
    for system in (ColorSystem.TRUECOLOR, ColorSystem.EIGHT_BIT):
        worst = min(pairs, key=lambda p: contrast(shown(p[1], system), shown(p[2], system)))
        ratio = contrast(shown(worst[1], system), shown(worst[2], system))
        assert ratio >= GOAL, (system.name, round(ratio, 2), worst)


@pytest.mark.parametrize("theme", ["dark", "light", "mono"])
def test_every_text_reaches_the_goal_in_a_16_colour_terminal(
    theme: str, example: Path, drive, wait, monkeypatch
) -> None:
    monkeypatch.setenv("TERM", "screen")
    monkeypatch.delenv("COLORTERM", raising=False)
    app = WorkbenchApp(example, watch=False, theme=theme)
    assert app.console.color_system == "standard"
    pairs = measure(app, drive, wait)
    system = ColorSystem.STANDARD
    for vga in (False, True):
        worst = min(
            pairs, key=lambda p: contrast(shown(p[1], system, vga), shown(p[2], system, vga))
        )
        ratio = contrast(shown(worst[1], system, vga), shown(worst[2], system, vga))
        assert ratio >= GOAL, ("VGA" if vga else "default", round(ratio, 2), worst)
