"""Make the picture of the app that the README and the site show: the terminal app on the shipped
example, after `b` has bisected it, on the culprit pass with its diff open. The app draws it
itself (Textual's SVG export), so the picture is what a user sees.

    python docs/make_screenshot.py           # rewrite docs/images/app.svg
    python docs/make_screenshot.py --check   # exit 1 if it is not current

tests/test_docs_screenshot.py makes it again and compares.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "images" / "app.svg"
EXAMPLE = "examples/layernorm-broken-fusion"
SIZE = (110, 32)
# Long enough for a loaded machine; the bisection takes about a second on an idle one.
PATIENCE = 120.0


def normalized(svg: str) -> str:
    """The SVG with what varies between equal screens made equal: the ids Rich derives from a
    hash of the whole document."""
    return re.sub(r"terminal-\d+", "terminal", svg)


async def _bisected_screen() -> str:
    from workbench.tui.app import WorkbenchApp

    # Relative, so the title reads the same in every checkout.
    app = WorkbenchApp(Path(EXAMPLE), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + PATIENCE

        async def until(condition: object) -> None:
            while not callable(condition) or not condition():
                if time.monotonic() > deadline:
                    raise TimeoutError("the app did not finish the bisection in time")
                await pilot.pause(0.1)

        await until(lambda: app.dump is not None and len(app.dump.modules) == 7)
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        await pilot.press("b")
        await until(lambda: not app.jobs.busy and app.culprit.get("module_0010"))
        for _ in range(3):  # the selection's timers, then what they start
            await pilot.pause(0.5)
            await app.workers.wait_for_complete()
        await pilot.pause(0.5)  # scrollbars are widgets of their own: let them catch up
        return app.export_screenshot(title="workbench examples/layernorm-broken-fusion")


def screenshot_svg() -> str:
    """The screen as SVG, made in a fresh results cache (a cached verdict would show as such)
    from the repository's root (the example's path as the README gives it)."""
    with tempfile.TemporaryDirectory(prefix="workbench-screenshot-") as cache:
        saved = {name: os.environ.get(name)
                 for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "LC_ALL", "NO_COLOR")}
        here = Path.cwd()
        os.environ["XDG_CACHE_HOME"] = cache
        os.environ["XDG_CONFIG_HOME"] = cache  # no user themes
        os.environ["LC_ALL"] = "C.UTF-8"  # the app's glyphs, not their ASCII stand-ins
        os.environ.pop("NO_COLOR", None)
        os.chdir(ROOT)
        try:
            return asyncio.run(_bisected_screen())
        finally:
            os.chdir(here)
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def main(argv: list[str]) -> int:
    svg = screenshot_svg()
    if argv == ["--check"]:
        current = PICTURE.exists() and normalized(PICTURE.read_text(encoding="utf-8"))
        if current != normalized(svg):
            print(f"{PICTURE.relative_to(ROOT)} is stale: run python docs/make_screenshot.py",
                  file=sys.stderr)
            return 1
        return 0
    PICTURE.parent.mkdir(parents=True, exist_ok=True)
    PICTURE.write_text(svg, encoding="utf-8")
    print(f"wrote {PICTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # the workbench of this checkout
    sys.exit(main(sys.argv[1:]))
