"""A full disk on redirected standard output (`workbench ls DIR > /dev/full`): a clear error
and the output-error status, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE
from workbench.destinations import OUTPUT_ERROR_STATUS

DUMP = Path(__file__).parent.parent / "data" / "producers" / "shardy_stages"
COMMANDS = [
    ["ls", DUMP],
    ["ls", DUMP, "--json"],
    ["show", DUMP, "module_0010"],
    ["diff", DUMP, "module_0010", "6", "7"],
    ["triage", DUMP, "--no-cache", "--jobs", "0"],
    ["replay", DUMP, "module_0010", "--fake-data", "--json"],
]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(map(str, argv[:1] + argv[2:])))
def test_a_full_standard_output_is_a_clear_error(argv: list[object]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "workbench", *map(str, argv)],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=PATIENCE)
    assert done.returncode == OUTPUT_ERROR_STATUS, done.stderr
    assert "cannot write the output: No space left on device" in done.stderr
    assert "Traceback" not in done.stderr
