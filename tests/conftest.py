"""Shared fixtures: the real dump corpus copied into tests/data/corpus."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from workbench.external_tools import ToolMissing, find_tool
from workbench.sizes import MEMORY_LIMIT_VARIABLE
from workbench.sources import FOLLOW_LINKS_VARIABLE, READ_LIMIT_VARIABLE

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"

# Rewriting the asserts of every test module is most of collection. Where bytecode is not
# written beside the sources (PYTHONDONTWRITEBYTECODE), it is kept in pytest's own cache folder
# during collection instead, so a second run reuses it; nothing is written into the source
# tree, and the tests run as the environment says (`pytest_collection_finish`).
_BYTECODE_AS_FOUND = (sys.dont_write_bytecode, sys.pycache_prefix)
if sys.dont_write_bytecode and not sys.pycache_prefix:
    sys.pycache_prefix = str(Path(__file__).parents[1] / ".pytest_cache" / "bytecode")
    sys.dont_write_bytecode = False


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.dont_write_bytecode, sys.pycache_prefix = _BYTECODE_AS_FOUND


@pytest.fixture(autouse=True)
def own_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
                     request: pytest.FixtureRequest) -> None:
    """Each test its own (empty) user cache folder: a triage results cache left by one test
    (or by the user) must not show in another."""
    name = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache" / name))


@pytest.fixture(autouse=True)
def no_limits_from_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with the default limits: a command run in-process with `--max-read`,
    `--memory-limit` or `--follow-links` sets them in the environment (for its workers), and a
    test that ran one must not change what the next one reads (a link out of the dump listed
    as a module, say)."""
    for name in (MEMORY_LIMIT_VARIABLE, READ_LIMIT_VARIABLE, FOLLOW_LINKS_VARIABLE):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def corpus() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def iree_tools() -> None:
    """Skip the test when the IREE runtime tools are not installed (they come with an extra),
    looked for as the workbench looks: on PATH, then beside the running interpreter."""
    missing = []
    for tool in ("iree-dump-replay", "iree-run-replay"):
        try:
            find_tool(tool)
        except ToolMissing:
            missing.append(tool)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: pip install '.[iree]' to run this test")
