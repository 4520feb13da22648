"""The reference pages generated from the code match it: every command, flag and key is on its
page, and the pages are what `python docs/gen_reference.py` writes today."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from workbench.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" /
                                                  "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def every_parser() -> dict[str, argparse.ArgumentParser]:
    from workbench.commands import tui

    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {"": parser, "[DIR]": tui.build_parser(), **action.choices}


def missing_from(page: str) -> list[str]:
    """Commands and flags of the parsers that the page does not name under their command."""
    missing = []
    for name, parser in every_parser().items():
        heading = f"## `workbench {name}`" if name else "# Command line"
        if heading not in page:
            missing.append(f"workbench {name}")
            continue
        start = page.index(heading)
        following = page.find("\n## `workbench ", start + len(heading))
        section = page[start:following if following >= 0 else len(page)]
        if name in ("", "[DIR]"):  # the app's section holds `workbench`'s own flags too
            section = page[:page.index("\n## `workbench ls`")]
        for action in parser._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help") and f"`{flag}`" not in section:
                    missing.append(f"workbench {name} {flag}")
    return missing


def test_every_command_and_flag_is_on_the_cli_page() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert missing_from(page) == []


def test_a_missing_flag_is_caught() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert missing_from(page.replace("`--localize`", "`--localise`")) == [
        "workbench bisect --localize", "workbench triage --localize"]
    assert "workbench completion" in missing_from(page.replace("## `workbench completion`", ""))


def test_every_key_is_on_the_keys_page() -> None:
    from workbench.tui.key_table import table_rows

    page = (ROOT / "docs" / "reference" / "keys.md").read_text(encoding="utf-8")
    rows = table_rows()
    assert len(rows) > 30
    for keys, where, what in rows:
        assert f"| {keys} | {where} |" in page, (keys, where, what)


@pytest.mark.parametrize("page", ["cli.md", "keys.md"])
def test_the_generated_pages_are_current(page: str) -> None:
    generated = {path.name: text for path, text in generator().pages().items()}
    written = (ROOT / "docs" / "reference" / page).read_text(encoding="utf-8")
    assert written == generated[page], "run `python docs/gen_reference.py`"


def test_the_generator_checks_from_the_command_line() -> None:
    done = subprocess.run([sys.executable, "docs/gen_reference.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
