"""Names from a dump are data: markup and terminal escapes in file names, module names and
pass names reach no command's output as markup or as control codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.hostile_names import make_hostile_dump
from workbench.cli import main

COMMANDS = [
    ["ls", "{dump}"],
    ["ls", "{dump}", "--check"],
    ["show", "{dump}", "module_0010"],
    ["show", "{dump}", "module_0010", "--changed"],
    ["diff", "{dump}", "module_0010", "0027", "0028"],
    ["replay", "{dump}", "module_0010", "--stop-after-first-failure"],
    ["bisect", "{dump}", "module_0010"],
    ["triage", "{dump}", "--no-cache"],
]


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hostile_dump(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:1] + c[2:]))
def test_no_markup_or_control_code_reaches_the_output(dump: Path, command: list[str],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    main([part.format(dump=dump) for part in command])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    for stream in (out, err):
        assert "\x1b" not in stream and "\x07" not in stream
    if command[0] in ("ls", "show", "triage"):
        # The name is shown with its brackets and its escapes made visible (tables may wrap it;
        # `ls` shows a long name's head and tail, `ls --json` the whole name).
        whole = ("jit_ln[bold", "[link=https:evil]", "[@click=app.quit]", "␛]0;pwned␇")
        for fragment in ("jit_ln[bold", "…", "0;pwned␇") if command[0] == "ls" else whole:
            assert fragment in out, fragment


def test_ls_json_keeps_the_whole_name(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tests.helpers.hostile_names import NAME

    main(["ls", str(dump), "--json"])
    names = {module["name"] for module in json.loads(capsys.readouterr().out)["modules"]}
    assert NAME in names
