"""Open an HTML file in headless Chromium as a reader would: its screenshot, its DOM as the
browser built it, and the console messages it logged (a script blocked by the page's
Content Security Policy, a resource it tried to fetch, an error).

Chromium logs each console message to stderr as `...:INFO:CONSOLE:<line>] "<message>"` with
`--enable-logging=stderr --v=0`. `.ci/run` installs Chromium where it is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Nothing in the background: no network of its own, no first-run pages, no GPU.
QUIET = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]


@dataclass
class PageView:
    screenshot: Path
    dom: str
    console: list[str]  # console messages, from both runs


def _run(page: Path, profile: Path, extra: list[str]) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile.mkdir(parents=True)
    return subprocess.run(
        [CHROMIUM, *QUIET, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180, check=True)


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def view(page: Path, scratch: Path, size: tuple[int, int] = (1200, 2400)) -> PageView:
    """Screenshot `page` at `size` and dump its DOM, each in a new empty profile."""
    screenshot = scratch / f"{page.stem}.png"
    shot = _run(page, scratch / "profile-shot",
                [f"--window-size={size[0]},{size[1]}", f"--screenshot={screenshot}"])
    dom = _run(page, scratch / "profile-dom", ["--dump-dom"])
    return PageView(screenshot, dom.stdout, _console(shot.stderr) + _console(dom.stderr))


def colour_pixels(screenshot: Path, colour: str, tolerance: int = 12) -> int:
    """How many pixels of the screenshot are `colour` (#rrggbb), give or take `tolerance`
    per channel (anti-aliasing)."""
    import matplotlib.image

    image = matplotlib.image.imread(screenshot)[..., :3]
    pixels = np.rint(np.asarray(image, dtype=np.float64) * 255)
    wanted = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.float64)
    return int(np.count_nonzero(np.all(np.abs(pixels - wanted) <= tolerance, axis=-1)))
