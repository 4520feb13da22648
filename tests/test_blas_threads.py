"""The CLI runs with one BLAS thread unless the environment names a count."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.patience import PATIENCE

REPO = Path(__file__).resolve().parent.parent
PROBE = (
    "import os, sys\n"
    "from workbench.cli import main\n"
    "main(['ls', sys.argv[1], '--json'])\n"
    "print('threads', os.environ.get('OPENBLAS_NUM_THREADS'), file=sys.stderr)\n"
)


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("3", "3")])
def test_cli_sets_one_blas_thread_unless_given(
    tmp_path: Path, given: str | None, expected: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    assert f"threads {expected}" in done.stderr
