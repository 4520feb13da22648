"""Legible text in a 16-colour terminal (`TERM=screen`, `vt100`, a serial console).

A theme's colours are chosen for truecolor and 256 colours; reduced to the 16 standard colours
two of them may land on colours too close to read (the dark theme's cursor row becomes white
on bright black, 3.95:1; the light theme's muted text on its panel 2.17:1). In a 16-colour
terminal a line filter gives each pair of colours that falls under WCAG's 4.5:1 a foreground
(then, if need be, a background) among the 16 that reaches it, closest in kind to the theme's
own: its bright or dim twin first, then white or black.

The 16 colours are measured in two palettes, Rich's default terminal palette and the VGA one
Rich reduces colours with: a pair is kept only when it reaches 4.5:1 in both, since the user's
terminal palette is not known.
"""

from __future__ import annotations

from functools import lru_cache

from rich._palettes import STANDARD_PALETTE
from rich.color import Color, ColorSystem, ColorType
from rich.color_triplet import ColorTriplet
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import DEFAULT_TERMINAL_THEME
from textual.color import Color as TextualColor
from textual.filter import LineFilter

GOAL = 4.5  # WCAG AA for body text
PALETTES: tuple[tuple[ColorTriplet, ...], ...] = (
    tuple(DEFAULT_TERMINAL_THEME.ansi_colors[n] for n in range(16)),
    tuple(STANDARD_PALETTE[n] for n in range(16)),
)
TWIN = {n: n + 8 if n < 8 else n - 8 for n in range(16)}  # dim <-> bright of one hue
WHITE, GREY, BLACK = 15, 7, 0


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = rgb
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio of two sRGB colours, 1 to 21."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def standard_number(color: Color) -> int:
    """Which of the 16 standard colours a 16-colour terminal draws for `color`."""
    color = color.downgrade(ColorSystem.STANDARD)
    if color.type == ColorType.DEFAULT or color.number is None:
        return WHITE
    return color.number


def worst_contrast(fg: int, bg: int) -> float:
    """The contrast of standard colours `fg` on `bg` in the palette that reads worst."""
    return min(contrast(palette[fg], palette[bg]) for palette in PALETTES)


@lru_cache(maxsize=1024)
def legible_pair(fg: Color, bg: Color, base: Color) -> tuple[Color, Color]:
    """Standard colours for `fg` on `bg` that reach GOAL, as close to the theme's as may be.
    A background that must change never becomes `base` (the screen's), so a cursor row or a
    marked line stays apart from the lines around it."""
    fore, back, screen = standard_number(fg), standard_number(bg), standard_number(base)
    backs = [back] + [b for b in (TWIN[back], GREY, BLACK, WHITE) if b not in (back, screen)]
    pairs = [(f, b) for b in backs for f in (fore, TWIN[fore], WHITE, BLACK)]
    fore, back = next(
        (pair for pair in pairs if worst_contrast(*pair) >= GOAL),
        max(pairs, key=lambda pair: worst_contrast(*pair)),
    )
    return Color.from_ansi(fore), Color.from_ansi(back)


class Legible16(LineFilter):
    """Draws every coloured text segment in a pair of standard colours that reads at 4.5:1."""

    def apply(self, segments: list[Segment], background: TextualColor) -> list[Segment]:
        base = background.rich_color
        drawn = []
        for text, style, control in segments:
            if style is not None and not control and style.color and style.bgcolor:
                if style.reverse:
                    bg, fg = legible_pair(style.bgcolor, style.color, base)
                else:
                    fg, bg = legible_pair(style.color, style.bgcolor, base)
                style = style + Style(
                    color=bg if style.reverse else fg, bgcolor=fg if style.reverse else bg
                )
            drawn.append(Segment(text, style, control))
        return drawn
