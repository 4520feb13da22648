"""What a dump folder can hold besides plain files, and files caught mid-change: the index and
the commands never raise, never block and never write, whatever they meet.

Fifos, symlink loops, folders that cannot be listed, names that are not UTF-8, files deleted
or replaced by a folder between listing and reading, files still being written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from damage import manifest

from workbench.check import check_dump
from workbench.cli import main
from workbench.index import claim_paths, list_files, scan
from workbench.loader import read_bytes
from workbench.model import Dump, Source
from workbench.watch import ChangeBatch, LiveIndex

CORPUS = Path(__file__).parent / "data" / "corpus"
LN = "module_0010.jit_ln"
LOG = "print-ir-after-change.log"
TRACE = "module_0000.jit_f.mlir-trace.pb"


def small_dump(root: Path) -> Path:
    """Real files of three formats: an XLA module (text, proto, snapshot), a print-ir log with
    its action log, an mlir_replay trace."""
    layernorm = CORPUS / "xla" / "layernorm"
    (root / "xla").mkdir(parents=True)
    for path in layernorm.glob(f"{LN}.*"):
        shutil.copy(path, root / "xla")
    (root / "loops").mkdir()
    for name in (LOG, "actions.log"):
        shutil.copy(CORPUS / "mlir" / "iree-opt-to-loops" / name, root / "loops")
    shutil.copytree(CORPUS / "mlir" / "mlir-trace-clean", root / "trace")
    return root


def keys(dump: Dump) -> list[str]:
    return [module.key for module in dump.modules]


def finishes(function: Callable[[], object], seconds: float = 20) -> object:
    """The result of `function`, run in a thread; fails the test if it blocks."""
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(function()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "blocked"
    assert outcome, "raised (see the thread's exception above)"
    return outcome[0]


# --- fifos ----------------------------------------------------------------------------------

FIFO_NAMES = ("loops/stderr.log", "loops/input.mlir", "trace/module_0003.jit_g.mlir-trace.pb",
              "xla/module_0010.jit_ln.snapshot.5.pb",
              "xla/module_0010.jit_ln.0099.p.after_x.before_y.txt",
              "tree/builtin_module_m/func_func_f/0_1_cse.mlir")


@pytest.fixture
def fifos(tmp_path: Path):
    """A small dump with fifos named like every format. Afterwards each fifo is opened for
    writing once, which releases a reader still waiting on it (if a test failed)."""
    root = small_dump(tmp_path / "dump")
    for name in FIFO_NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / name)
    yield root
    for name in FIFO_NAMES:
        with contextlib.suppress(OSError):  # no reader waiting: nothing to release
            os.close(os.open(root / name, os.O_WRONLY | os.O_NONBLOCK))


def test_fifos_do_not_block_the_index(fifos: Path) -> None:
    before = manifest(fifos)
    dump = finishes(lambda: scan(fifos))
    assert keys(dump) == keys(scan(small_dump(fifos.parent / "plain")))
    # The live index adds what the watcher reports, fifos too, without the listing's filter.
    listing = list_files(fifos, [])
    watched = finishes(lambda: claim_paths(Dump(root=fifos), sorted([*listing, *FIFO_NAMES])))
    assert "loops/print-ir-after-change.log" in keys(watched)
    live = LiveIndex(fifos)
    live.scan()
    finishes(lambda: live.apply(ChangeBatch(changed=frozenset(FIFO_NAMES))))
    # A fifo with no writer reads as an empty file: the reason every reader gives for those.
    empty = "empty file (still being written?)"
    assert ("trace/module_0003.jit_g.mlir-trace.pb", empty) in \
        [(p.file, p.reason) for p in watched.problems]
    problems = {p.file: p.reason for p in finishes(lambda: check_dump(watched))}
    for name in FIFO_NAMES[3:]:
        assert problems[name] == empty, name
    assert manifest(fifos) == before


def test_reading_a_fifo_with_no_writer_is_reading_an_empty_file(fifos: Path) -> None:
    assert finishes(lambda: read_bytes(fifos, Source("loops/stderr.log"))) == b""


# --- names that are not UTF-8 ---------------------------------------------------------------

def test_names_that_are_not_utf8(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
                                 ) -> None:
    """Linux file names are bytes: Python hands the undecodable ones over as lone surrogates.
    They are listed, read, and printed back as the bytes they are (the JSON escapes them)."""
    root = small_dump(tmp_path / "dump")
    folder = os.fsencode(root)
    os.rename(folder + b"/loops/" + LOG.encode(), folder + b"/loops/print-ir-\xff.log")
    os.rename(folder + b"/trace", folder + b"/trace-\xe9")
    log = os.fsdecode(b"print-ir-\xff.log")
    before = manifest(root)
    dump = scan(root)
    assert {f"loops/{log}", os.fsdecode(b"trace-\xe9/module_0000")} <= set(keys(dump))
    assert check_dump(dump) == []
    assert sys.stdout.errors == "strict"  # as in a UTF-8 locale, unlike Python's C locale
    for argv in (["ls", str(root)], ["ls", str(root), "--check"], ["ls", str(root), "--json"],
                 ["show", str(root / "loops"), log], ["show", str(root / "loops"), log, "--json"],
                 ["report", str(root / "loops" / log)]):
        status = main(argv)
        out = capsysbinary.readouterr().out
        assert status == 0, argv
        if "--json" in argv:
            listed = json.loads(out)
            assert log in json.dumps(listed, ensure_ascii=False)
        elif argv[0] != "report":  # its tables do not repeat the file's name
            assert b"print-ir-\xff" in out or b"trace-\xe9" in out, argv
    assert manifest(root) == before
