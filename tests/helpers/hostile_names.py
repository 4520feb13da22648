"""A dump whose names hold markup and terminal escapes, for the tests that show nothing of
them is read as markup or reaches the terminal as a control code."""

from __future__ import annotations

import shutil
from pathlib import Path

SOURCE = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
# What an adversarial file name can hold: Rich/Textual markup, a click action, a link, a
# terminal title change, a screen clear and a colour (no dots: XLA names split at them; no
# slash: the folder holds that one, `[/x]`, a closing tag).
NAME = "jit_ln[bold red]X[link=https:evil]L[@click=app.quit]Q[$x]\x1b]0;pwned\x07\x1b[2J"
PASS = "fu[b]sion\x1b[31m"


def make_hostile_dump(top: Path) -> Path:
    """The layernorm module with its files renamed to hold NAME and PASS, in a folder whose
    path holds `[/x]`, plus a module whose text quotes NAME where it cannot be parsed."""
    root = top / "dump[" / "x]"
    root.mkdir(parents=True)
    for source in SOURCE.iterdir():
        if not source.name.startswith("module_0010.") or source.is_dir():
            continue
        name = source.name.replace("jit_ln", NAME, 1).replace("after_fusion.", f"after_{PASS}.")
        shutil.copyfile(source, root / name)
    (root / f"module_0099.{NAME}.before_optimizations.txt").write_text(
        f"HloModule broken\n\nENTRY main {{\n  [/x] {NAME} [b]\n}}\n")  # a parse error quoting it
    return root

