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
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.damage import manifest
from tests.helpers.patience import PATIENCE
from workbench.check import check_dump
from workbench.cli import main
from workbench.index import claim_paths, list_files, scan
from workbench.loader import ReadError, load_step_hlo, read_bytes
from workbench.model import Dump, Source
from workbench.replay.steps import open_replay
from workbench.sources import FOLLOW_LINKS_VARIABLE
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


def finishes(function: Callable[[], object], seconds: float = PATIENCE) -> object:
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
              "xla/module_0010.jit_ln.0036.p.after_x.before_y.txt",  # next after the last
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


def test_fifos_are_problems_never_opened(fifos: Path) -> None:
    """A FIFO is never opened (a plain open waits for a writer): the listing names it as a
    problem, it makes no module of its own, and one named like a step or a snapshot of a
    module stays in that module as a file that cannot be read. The live index, told about
    the FIFOs by the watcher, takes them by the same rules."""
    before = manifest(fifos)
    dump = finishes(lambda: scan(fifos))
    assert keys(dump) == keys(scan(small_dump(fifos.parent / "plain")))
    reason = "cannot read: a FIFO, not a regular file"
    assert {(p.file, p.reason) for p in dump.problems} == {(n, reason) for n in FIFO_NAMES}
    assert not set(FIFO_NAMES) & set(dump.others)
    module = dump.find_module("module_0010")
    assert "xla/module_0010.jit_ln.0036.p.after_x.before_y.txt" in module.step_files()
    assert "xla/module_0010.jit_ln.snapshot.5.pb" in [e.file for e in module.executions]
    assert finishes(lambda: check_dump(dump)) == []  # the listing named them already

    def refused() -> str:
        with pytest.raises(ReadError) as caught:
            read_bytes(fifos, Source("loops/stderr.log"))
        return caught.value.reason

    assert finishes(refused) == reason
    assert manifest(fifos) == before
    live = LiveIndex(fifos)
    live.scan()
    for name in FIFO_NAMES:
        os.unlink(fifos / name)
    live.apply(ChangeBatch(deleted=frozenset(FIFO_NAMES)))
    assert live.dump.problems == []
    for name in FIFO_NAMES:
        os.mkfifo(fifos / name)
    finishes(lambda: live.apply(ChangeBatch(changed=frozenset(FIFO_NAMES))))
    assert keys(live.dump) == keys(dump)
    assert {(p.file, p.reason) for p in live.dump.problems} == \
        {(p.file, p.reason) for p in dump.problems}


# --- names that are not UTF-8 ---------------------------------------------------------------

def test_names_that_are_not_utf8(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
                                 ) -> None:
    """Linux file names are bytes: Python hands the undecodable ones over as lone surrogates.
    They are listed, read, and printed back as the bytes they are (the JSON escapes them),
    but for the bytes 0x80-0x9f, which an 8-bit terminal takes as C1 controls (0x9b is CSI):
    those show as U+FFFD, as a C1 control character does."""
    root = small_dump(tmp_path / "dump")
    folder = os.fsencode(root)
    os.rename(folder + b"/loops/" + LOG.encode(), folder + b"/loops/print-ir-\xff.log")
    os.rename(folder + b"/trace", folder + b"/trace-\xe9\x9b31m")
    log = os.fsdecode(b"print-ir-\xff.log")
    before = manifest(root)
    dump = scan(root)
    assert {f"loops/{log}", os.fsdecode(b"trace-\xe9\x9b31m/module_0000")} <= set(keys(dump))
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
        assert b"\x9b" not in out, argv
    main(["ls", str(root)])
    assert b"trace-\xe9" + "\ufffd".encode() + b"31m" in capsysbinary.readouterr().out
    assert manifest(root) == before


# --- links, folders that cannot be listed or read --------------------------------------------

def test_symlink_loops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = small_dump(tmp_path / "dump")
    expected = keys(scan(root))
    (root / "self.log").symlink_to("self.log")
    (root / "ping.mlir").symlink_to("pong.mlir")
    (root / "pong.mlir").symlink_to("ping.mlir")
    (root / "xla" / "up").symlink_to("..")
    (root / "loops" / "gone.log").symlink_to("nowhere.log")
    before = manifest(root)
    dump = finishes(lambda: scan(root))
    assert keys(dump) == expected
    reasons = {p.file: p.reason for p in dump.problems}
    assert reasons == {**{name: "cannot stat: Too many levels of symbolic links"
                          for name in ("self.log", "ping.mlir", "pong.mlir")},
                       "loops/gone.log": "dangling link: its target does not exist"}
    assert main(["ls", str(root), "--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["problems"] == [
        {"file": p.file, "reason": p.reason} for p in dump.problems]
    loop = root / "self.log"
    assert main(["ls", str(loop)]) == 0 and "problem" in capsys.readouterr().out
    assert manifest(root) == before


def test_folders_that_cannot_be_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated (tests may run as root, who can list anything)."""
    root = small_dump(tmp_path / "dump")
    real = os.scandir

    def scandir(path: object) -> object:
        if os.fspath(path).endswith("loops"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    dump = scan(root)
    assert [(p.file, p.reason) for p in dump.problems] == [
        ("loops", "cannot list folder: Permission denied")]
    assert keys(dump) == ["trace/module_0000", "xla/module_0010"]


def test_files_that_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A log, a trace and a snapshot the user may not read (simulated): each is a problem
    naming it, and the rest is listed, checked and replayed."""
    root = small_dump(tmp_path / "dump")
    locked = {f"loops/{LOG}", f"trace/{TRACE}", "xla/module_0010.jit_ln.snapshot.-17687811.pb"}
    real = os.open

    def denied(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if any(os.fspath(path).endswith(name) for name in locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, flags, *args, **kwargs)  # type: ignore[arg-type]  # os.open's own arguments, passed on

    monkeypatch.setattr(os, "open", denied)
    dump = scan(root)
    assert {(p.file, p.reason) for p in dump.problems} == {
        (f"loops/{LOG}", "cannot read: Permission denied"),
        (f"trace/{TRACE}", "permission denied")}
    assert "xla/module_0010" in keys(dump)
    assert [(p.file, p.reason) for p in check_dump(dump)] == [
        ("xla/module_0010.jit_ln.snapshot.-17687811.pb", "permission denied")]
    assert main(["replay", str(root / "xla"), "module_0010"]) == 2
    assert capsys.readouterr().err == (
        "workbench replay: cannot get the inputs: module_0010.jit_ln.snapshot.-17687811.pb: "
        "permission denied\n")


# --- files deleted or replaced between listing and reading ----------------------------------

def test_files_deleted_after_listing(tmp_path: Path) -> None:
    root = small_dump(tmp_path / "dump")
    listing = list_files(root, [])
    for name in (f"loops/{LOG}", f"trace/{TRACE}"):
        (root / name).unlink()
    dump = claim_paths(Dump(root=root), listing)  # as the live index does with its listing
    assert {(p.file, p.reason) for p in dump.problems} == {
        (f"loops/{LOG}", "cannot read: No such file or directory"),
        (f"trace/{TRACE}", "file not found (deleted since the folder was listed?)")}
    module = dump.find_module("module_0010")
    step = module.steps[5]
    assert step.text is not None and step.proto is not None
    (root / step.text.file).unlink()
    (root / step.proto.file).unlink()
    with pytest.raises(ReadError, match="file not found"):
        load_step_hlo(root, step)


def test_files_replaced_by_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = small_dump(tmp_path / "dump")
    dump = scan(root)
    module = dump.find_module("module_0010")
    step = module.steps[3]
    assert step.text is not None and step.proto is not None
    snapshot = module.executions[0].file
    for name in (step.text.file, step.proto.file, snapshot, f"loops/{LOG}"):
        (root / name).unlink()
        (root / name).mkdir()
    reasons = {p.file: p.reason for p in check_dump(dump)}
    for name in (step.text.file, step.proto.file, snapshot):
        assert reasons[name] == "cannot read: a folder, not a regular file", name
    with pytest.raises(ReadError, match="a folder, not a regular file"):
        load_step_hlo(root, step)
    with pytest.raises(ReadError, match="a folder, not a regular file"):
        open_replay(root, module, module.executions[0])
    # Listed again, the folder stands where the snapshot was: a problem, never read.
    assert main(["replay", str(root / "xla"), "module_0010"]) == 2
    assert f"{Path(snapshot).name}: cannot read: a folder, not a regular file" in \
        capsys.readouterr().err
    assert main(["ls", str(root), "--check", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert "xla/module_0010" in [m["key"] for m in listed["modules"]]


# --- files still being written --------------------------------------------------------------

def test_proto_created_empty_then_written(tmp_path: Path) -> None:
    """XLA creates a `.hlo.pb`, then fills it: a problem while it is empty (the text stands
    in for it), none once it has its content, and the cache does not keep the stand-in."""
    root = small_dump(tmp_path / "dump")
    dump = scan(root)
    step = dump.find_module("module_0010").steps[7]
    assert step.proto is not None
    content = (root / step.proto.file).read_bytes()
    (root / step.proto.file).write_bytes(b"")
    assert [(p.file, p.reason) for p in check_dump(dump)] == [
        (step.proto.file, "empty file (still being written?)")]
    assert load_step_hlo(root, step).id is None  # from the text: it carries no module id
    (root / step.proto.file).write_bytes(content)
    assert check_dump(scan(root)) == []
    assert load_step_hlo(root, step).id == 10  # from the proto now


def cut_then_complete(path: Path, at: int) -> bytes:
    """Leave the first `at` bytes of `path` (a writer caught mid-way); returns the rest."""
    data = path.read_bytes()
    path.write_bytes(data[:at])
    return data[at:]


def test_logs_and_traces_still_being_written(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = small_dump(tmp_path / "dump")
    complete = scan(root)
    live = LiveIndex(root)
    log, actions, trace = root / "loops" / LOG, root / "loops" / "actions.log", \
        root / "trace" / TRACE
    rests = {path: cut_then_complete(path, path.stat().st_size // 2)
             for path in (log, actions, trace)}
    partial = live.scan().dump
    reasons = {p.file: p.reason for p in partial.problems}
    assert "not an MlirCompilationTrace" in reasons[f"trace/{TRACE}"]
    assert 0 < len(partial.find_module(f"loops/{LOG}").steps) < 6
    assert main(["actions", str(actions), "--json"]) == 0
    assert "never completed" in json.dumps(json.loads(capsys.readouterr().out)["problems"])
    for path, rest in rests.items():
        with open(path, "ab") as handle:
            handle.write(rest)
    change = live.apply(ChangeBatch(changed=frozenset(
        str(path.relative_to(root)) for path in rests)))
    assert change is not None
    assert change.dump.problems == []
    assert [(m.key, len(m.steps)) for m in change.dump.modules] == \
        [(m.key, len(m.steps)) for m in complete.modules]
    assert main(["actions", str(actions), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["problems"] == []


def test_log_truncated_while_the_index_reads_it(tmp_path: Path) -> None:
    """A compiler run again truncates its log (`2> log`) while the index reads the previous
    one: the index must see a shorter log, not die of SIGBUS on memory that was the file.
    Run in a child process, which the signal would kill."""
    root = small_dump(tmp_path / "dump")
    log = root / "loops" / LOG
    script = f"""
import os
import workbench.formats.mlir_files as mlir_files
from workbench.index import scan

check = mlir_files._utf8_problem

def truncated_first(*args, **kwargs):
    os.truncate({str(log)!r}, 100)
    return check(*args, **kwargs)

mlir_files._utf8_problem = truncated_first
dump = scan({str(log)!r})
print(len(dump.modules[0].steps), [p.reason for p in dump.problems])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=PATIENCE, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.startswith("0 ["), done.stdout


def test_devices_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link to /dev/zero named like a step: read whole, it would fill the memory. (Links
    out of the dump are followed here, as with --follow-links, to reach the device.)"""
    monkeypatch.setenv(FOLLOW_LINKS_VARIABLE, "1")
    root = small_dump(tmp_path / "dump")
    names = ("xla/module_0010.jit_ln.0099.p.after_x.before_y.hlo.pb", "loops/zero.log")
    for name in names:
        (root / name).symlink_to("/dev/zero")
    assert keys(finishes(lambda: scan(root))) == keys(scan(small_dump(tmp_path / "plain")))
    listing = sorted([*list_files(root, []), *names])  # as the live index may have it
    dump = finishes(lambda: claim_paths(Dump(root=root), listing))
    assert ("loops/zero.log", "cannot read: a device, not a regular file") in \
        [(p.file, p.reason) for p in dump.problems]
    assert (names[0], "cannot read: a device, not a regular file") in \
        [(p.file, p.reason) for p in finishes(lambda: check_dump(dump))]


def test_links_out_of_the_dump_are_problems_not_read(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FOLLOW_LINKS_VARIABLE, raising=False)
    root = small_dump(tmp_path / "dump")
    expected = keys(scan(root))
    secret = tmp_path / "secret.txt"
    secret.write_text("HloModule secret\n")
    (root / "module_0077.jit_secret.before_optimizations.txt").symlink_to(secret)
    (root / "elsewhere").symlink_to(tmp_path)
    (root / "inside.log").symlink_to(root / "loops")  # a link that stays inside is fine
    dump = scan(root)
    assert keys(dump) == expected  # nothing of the linked file became a module
    reasons = {p.file: p.reason for p in dump.problems}
    assert reasons["module_0077.jit_secret.before_optimizations.txt"] == (
        f"link outside the dump: {secret} (read it with --follow-links)")
    assert reasons["elsewhere"] == f"link outside the dump: {tmp_path} (read it with " \
        "--follow-links)"
    with pytest.raises(ReadError, match="link outside the dump"):
        read_bytes(root, Source("module_0077.jit_secret.before_optimizations.txt"))
    assert main(["ls", str(root), "--json", "--follow-links"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert "module_0077" in [m["id"] for m in listed["modules"]]
