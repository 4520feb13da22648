"""Names from a dump are data: markup and terminal escapes in file names, module names and
pass names reach no command's output as markup or as control codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_names import make_hostile_dump

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
        # The name is shown with its brackets and its escapes made visible (tables may wrap it).
        for fragment in ("jit_ln[bold", "[link=https:evil]", "[@click=app.quit]", "␛]0;pwned␇"):
            assert fragment in out, fragment
