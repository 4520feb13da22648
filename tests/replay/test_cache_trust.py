"""The results cache holds data, never code, and trusts only what this user wrote: a planted
pickle runs nothing, a forged entry cannot turn a mismatch into ok, a result computed under
other limits is not reused, and a folder others can write is refused."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.index import scan
from workbench.replay.processes.memory import ENVIRONMENT_VARIABLE
from workbench.replay.triage.result_codec import DecodeError, loads
from workbench.replay.triage.results_cache import ResultsCache, UnsafeCache, unsafe_folder
from workbench.replay.triage.run import triage_jobs

DUMP = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"


class Planted:
    """Unpickling this creates a file: the proof that a pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]  # pickle's protocol, untyped
        return (Path.touch, (self.marker,))


def _triage(cache: Path, *extra: str) -> tuple[int, dict]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["triage", str(DUMP), "--jobs", "0", "--cache", str(cache), "--json",
                       *extra])
    return status, json.loads(out.getvalue()) if out.getvalue() else {}


def _statuses(payload: dict) -> dict[tuple[str, str], str]:
    return {(r["module"], r["execution"]): r["status"] for r in payload["results"]}


def test_a_planted_pickle_runs_nothing(tmp_path: Path) -> None:
    """Packs and entries in the format that was read with pickle, with their unkeyed sha256
    right, in the folder where the cache looks: nothing runs and the verdict is computed."""
    marker = tmp_path / "pickle-ran"
    cache = tmp_path / "cache"
    store = ResultsCache(cache)
    payload = pickle.dumps(Planted(marker))
    digest = hashlib.sha256(payload).hexdigest().encode()
    for magic in (b"workbench triage pack v1\n", b"workbench triage pack v2\n"):
        pack = cache / "packs" / f"{store._dump_name(DUMP)}.pack"
        pack.parent.mkdir(parents=True, exist_ok=True)
        pack.write_bytes(magic + digest + b"\n" + payload)
        dump = scan(DUMP)
        hashes = store.hashes(DUMP)
        for job in triage_jobs(dump):
            key = store.key(job, _options(), hashes)
            for entry_magic in (b"workbench triage result v1\n", b"workbench triage result v2\n"):
                header = entry_magic + key.encode() + b"\n"
                path = Path(store._path(key))
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(header + digest + b"\n" + payload)
                assert store.get(key, job) is None
        status, results = _triage(cache)
        assert status == 1 and "mismatch" in _statuses(results).values()
    assert not marker.exists()


def _options():  # type: ignore[no-untyped-def]  # the options' many types
    from workbench.replay.triage.run import TriageOptions

    return TriageOptions()


def test_a_forged_entry_does_not_turn_a_mismatch_into_ok(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    status, first = _triage(cache)
    assert status == 1
    # The forger knows the format and the key function, but not this user's secret: they sign
    # with their own, and flip every status to ok.
    forger = ResultsCache(cache, secret=b"x" * 32)
    forged = 0
    for path in (cache / "results").rglob("*.result"):
        data = path.read_bytes()
        magic, key, _, payload = data.split(b"\n", 3)
        entry = json.loads(payload)
        entry["fields"]["$dict"]["status"] = "ok"
        entry["verdict"] = None
        new_payload = json.dumps(entry).encode()
        header = magic + b"\n" + key + b"\n"
        from workbench.replay.triage.results_cache import _sign

        path.write_bytes(header + _sign(forger.secret, header, new_payload) + b"\n"
                         + new_payload)
        forged += 1
    assert forged == 9
    shutil.rmtree(cache / "packs")
    status, again = _triage(cache)
    assert status == 1
    assert _statuses(again) == _statuses(first)


def test_an_entry_from_another_users_cache_is_recomputed(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache copied from someone else (another secret) verifies nothing: every job runs."""
    cache = tmp_path / "cache"
    _triage(cache)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-user"))
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["triage", str(DUMP), "--jobs", "0", "--cache", str(cache)]) == 1
    assert "from the results cache" not in out.getvalue()


def test_the_limits_are_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "8")
    status, limited = _triage(cache, "--memory-limit", "8")
    assert "error" in _statuses(limited).values()
    monkeypatch.delenv(ENVIRONMENT_VARIABLE)
    status, unlimited = _triage(cache)
    assert status == 1
    assert set(_statuses(unlimited).values()) == {"ok", "mismatch"}


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_a_folder_others_can_write_is_refused(tmp_path: Path, mode: int, capsys) -> None:
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(mode)
    assert "can be written by other users" in (unsafe_folder(cache) or "")
    with pytest.raises(UnsafeCache):
        ResultsCache(cache)
    assert main(["triage", str(DUMP), "--jobs", "0", "--cache", str(cache)]) == 2
    error = capsys.readouterr().err
    assert f"the results cache {cache} is not safe to use" in error and "--no-cache" in error
    # A folder inside it, not yet made, is no safer.
    assert unsafe_folder(cache / "sub") is not None


def test_a_sticky_parent_and_a_private_folder_are_safe(tmp_path: Path) -> None:
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    private = sticky / "mine"
    private.mkdir(mode=0o700)
    assert unsafe_folder(private) is None
    assert unsafe_folder(sticky / "not-yet") is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "theirs"
    cache.mkdir(mode=0o755)
    os.chown(cache, 65534, 65534)
    assert "belongs to another user" in (unsafe_folder(cache) or "")


def test_the_codec_builds_only_its_own_classes() -> None:
    for forged in ('{"$class": "Popen", "fields": {"args": ["true"]}}',
                   '{"$numpy": "object", "shape": [1], "bytes": "AAAAAAAAAAA="}',
                   '{"$class": "Tolerance", "fields": {"atol": 1}}',
                   '{"$enum": "Tolerance", "value": 1}',
                   "[" * 100000 + "]" * 100000):
        with pytest.raises(DecodeError):
            loads(forged)


def test_every_class_a_verdict_can_hold_is_storable() -> None:
    """Walks the type hints from Verdict down: a class a result may hold that the codec does
    not know would make every such result go uncached, silently."""
    import dataclasses
    import typing
    from enum import Enum

    import workbench.hlo_ir
    import workbench.model
    import workbench.replay.bisect
    import workbench.replay.judge.compare
    import workbench.replay.judge.noise.model
    import workbench.replay.judge.outcome
    import workbench.replay.steps
    from workbench.replay.bisect import Verdict
    from workbench.replay.triage.result_codec import _classes

    names: dict[str, object] = {}  # what the annotations name, imported for type checking only
    for module in (workbench.hlo_ir, workbench.model, workbench.replay.bisect,
                   workbench.replay.judge.compare, workbench.replay.judge.noise.model,
                   workbench.replay.judge.outcome, workbench.replay.steps):
        names.update(vars(module))
    seen: set[type] = set()
    pending: list[object] = [Verdict]
    while pending:
        hint = pending.pop()
        if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or issubclass(hint, Enum)
                                       or hasattr(hint, "_fields")):
            if hint in seen:
                continue
            seen.add(hint)
            if not issubclass(hint, Enum):
                pending.extend(typing.get_type_hints(hint, localns=names).values())
        pending.extend(typing.get_args(hint))
    assert {kind.__name__ for kind in seen} <= set(_classes()), seen


def test_other_code_is_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A verdict computed by other code of the same version number is not reused."""
    from workbench.replay.triage import results_cache

    cache = tmp_path / "cache"
    _triage(cache)
    store = ResultsCache(cache)
    dump = scan(DUMP)
    job = triage_jobs(dump)[0]
    key = store.key(job, _options(), store.hashes(DUMP))
    assert store.get(key, job) is not None
    monkeypatch.setattr(results_cache, "code_digest", lambda: "0" * 64)
    other = ResultsCache(cache)
    assert other.key(job, _options(), other.hashes(DUMP)) != key


def test_a_fifo_named_like_a_step_is_hashed_as_unreadable(tmp_path: Path) -> None:
    """The key's content hash never opens a FIFO (an open waits for a writer forever)."""
    from workbench.replay.triage.results_cache import FileHashes

    os.mkfifo(tmp_path / "step.txt")
    assert FileHashes(tmp_path).digest("step.txt").startswith("unreadable: ")
