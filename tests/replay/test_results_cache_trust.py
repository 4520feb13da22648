"""The results cache holds data, never code, and no verdict can be planted in it: no pickle is
read, entries carry a MAC under the cache's own secret, the key covers the limits, and a
folder another user can write is refused."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.index import scan
from workbench.replay.results_cache import ResultsCache
from workbench.replay.triage import cached_results, triage

DUMP = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"
ENTRY_V1 = b"workbench triage result v1\n"  # the pickle formats this cache used to read
PACK_V1 = b"workbench triage pack v1\n"


class _Bomb:
    """Unpickling it makes a file: proof that a planted entry ran code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.marker,))


def _plant_pickles(folder: Path, marker: Path) -> int:
    """Replace every file of the cache with a pickle that makes `marker`, each with the header
    and checksum the pickle formats asked for."""
    payload = pickle.dumps(_Bomb(marker))
    digest = hashlib.sha256(payload).hexdigest().encode() + b"\n"
    planted = 0
    for path in folder.rglob("*"):
        if not path.is_file() or path.name == "mac-key" or path.parent.name == "files":
            continue
        if path.parent.name == "packs":
            path.write_bytes(PACK_V1 + digest + payload)
        else:
            path.write_bytes(ENTRY_V1 + path.stem.encode() + b"\n" + digest + payload)
        planted += 1
    return planted


@pytest.fixture
def dump_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DUMP, tmp_path / "dump"))


def _summary(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)["summary"]


def test_planted_pickles_never_run(tmp_path: Path, dump_copy: Path) -> None:
    cache_folder = tmp_path / "cache"
    first = triage(scan(dump_copy), jobs=0, cache=ResultsCache(cache_folder))
    marker = tmp_path / "pickle-ran"
    assert _plant_pickles(cache_folder, marker) >= 10  # every entry and the pack
    cache = ResultsCache(cache_folder)
    assert cached_results(scan(dump_copy), cache) == []  # what the app reads on opening
    again = triage(scan(dump_copy), jobs=0, cache=ResultsCache(cache_folder))
    assert not marker.exists()
    assert [(r.module, r.execution, r.status) for r in again] == \
        [(r.module, r.execution, r.status) for r in first]
    assert not any(r.cached for r in again)
    assert len(cache.notes) == 9 and all("not a cache entry" in n for n in cache.notes)


def _forge_ok(path: Path) -> None:
    """Turn the mismatch an entry holds into ok, with what anyone can compute (sha256)."""
    data = path.read_bytes()
    if data.startswith(ENTRY_V1):  # the pickle format: unpickle, change, checksum again
        header = data[:data.index(b"\n", len(ENTRY_V1)) + 1]
        fields, _ = pickle.loads(data[len(header) + 65:])
        fields.update(status="ok", culprit=None)
        body = pickle.dumps((fields, None))
        path.write_bytes(header + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        return
    head, body, _ = data.split(b"\n")
    result = json.loads(body)
    result.update(status="ok", culprit=None, verdict=None)
    body = json.dumps(result, separators=(",", ":")).encode()
    header = json.loads(head)
    header["mac"] = hashlib.sha256(header["key"].encode() + b"\n" + body).hexdigest()
    path.write_bytes(json.dumps(header).encode() + b"\n" + body + b"\n")


def test_a_forged_entry_never_turns_a_mismatch_into_ok(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    command = ["triage", str(DUMP), "--jobs", "0", "--cache", str(cache), "--json"]
    assert main(command) == 1
    assert _summary(capsys)["mismatch"] == 1
    for pack in (cache / "packs").iterdir():
        pack.unlink()
    for entry in (cache / "results").rglob("*"):
        if entry.is_file():
            _forge_ok(entry)
    assert main(command) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["summary"]["mismatch"] == 1
    assert captured.err.count("is ignored and evaluated again: its MAC does not match") == 9


def test_entries_of_another_cache_are_not_trusted(tmp_path: Path, dump_copy: Path) -> None:
    """A cache copied from someone else (without its secret) serves nothing."""
    triage(scan(dump_copy), jobs=0, cache=ResultsCache(tmp_path / "theirs"))
    mine = tmp_path / "mine"
    shutil.copytree(tmp_path / "theirs", mine)
    (mine / "mac-key").unlink()
    cache = ResultsCache(mine)  # a new secret: their entries are under other names and MACs
    assert cached_results(scan(dump_copy), cache) == []


@pytest.mark.parametrize("limit", [["--memory-limit", "8"], ["--max-read", "10"]])
def test_the_limits_are_part_of_the_key(tmp_path: Path, dump_copy: Path,
                                        capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch,
                                        limit: list[str]) -> None:
    """An error a low limit caused is not returned once the limit is raised. (A fresh copy of
    the dump: this process's loader caches would serve files read by earlier tests.)"""
    # The commands set the limits in the environment: these are put back after the test.
    monkeypatch.setenv("WORKBENCH_MEMORY_LIMIT", "1G")
    monkeypatch.setenv("WORKBENCH_READ_LIMIT", "512M")
    command = ["triage", str(dump_copy), "--jobs", "0", "--cache", str(tmp_path / "cache"),
               "--json"]
    assert main([*command, *limit]) == 0
    low = _summary(capsys)
    assert low["error"] > 0 and low["mismatch"] == 0  # the limit stopped the culprit's job
    raised = {"--memory-limit": "1G", "--max-read": "512M"}[limit[0]]
    assert main([*command, limit[0], raised]) == 1
    assert _summary(capsys) == {"mismatch": 1, "error": 0, "unsupported": 0, "ok": 8}


def test_a_timed_out_job_is_evaluated_again_under_a_longer_limit(tmp_path: Path,
                                                                   dump_copy: Path) -> None:
    """The time limit is not in the key because a job that hits it is never stored."""
    cache = tmp_path / "cache"
    timed_out = triage(scan(dump_copy), jobs=1, time_limit=1e-6, cache=ResultsCache(cache))
    assert {r.status for r in timed_out} == {"error"}
    assert all("time limit" in r.detail for r in timed_out)
    again = triage(scan(dump_copy), jobs=0, cache=ResultsCache(cache))
    assert not any(r.cached for r in again)
    assert {r.status for r in again} == {"ok", "mismatch"}


def _triage_with_cache(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["triage", str(DUMP), "--jobs", "0", "--cache", str(folder), "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["summary"]["mismatch"] == 1  # evaluated all the same
    return captured.err


@pytest.mark.parametrize("mode", [0o770, 0o702])
def test_a_folder_others_can_write_is_refused(tmp_path: Path, mode: int,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "shared-cache"
    folder.mkdir()
    folder.chmod(mode)
    err = _triage_with_cache(folder, capsys)
    assert f"the results cache folder {folder} is not used" in err
    assert "writable by its group or by everyone" in err and "chmod go-w" in err
    assert list(folder.iterdir()) == []  # nothing read, nothing written


def test_a_parent_others_can_write_is_refused_unless_sticky(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = tmp_path / "open"
    folder = parent / "cache"
    folder.mkdir(parents=True, mode=0o700)
    parent.chmod(0o777)  # anyone may rename `cache` away and put their own in its place
    err = _triage_with_cache(folder, capsys)
    assert f"is not used: {parent} is writable by its group or by everyone" in err
    assert list(folder.iterdir()) == []
    parent.chmod(0o1777)  # as /tmp: only the owner may rename what is theirs
    err = _triage_with_cache(folder, capsys)
    assert "not used" not in err
    assert (folder / "mac-key").stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "their-cache"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)
    err = _triage_with_cache(folder, capsys)
    assert "belongs to user 65534, not to you" in err
    assert list(folder.iterdir()) == []


def test_a_key_others_can_read_is_refused(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cache"
    ResultsCache(folder)
    (folder / "mac-key").chmod(0o644)
    err = _triage_with_cache(folder, capsys)
    assert "only you can read (chmod 600" in err


def test_new_cache_folders_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "cache"
    ResultsCache(folder)
    assert folder.stat().st_mode & 0o777 == 0o700


def test_reading_the_cache_never_unpickles() -> None:
    import workbench.replay.results_cache as results_cache
    import workbench.replay.results_codec as results_codec

    for module in (results_cache, results_codec):
        tree = ast.parse(Path(module.__file__).read_text())
        imported = {alias.name for node in ast.walk(tree)
                    if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in node.names} | {
            node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not imported & {"pickle", "marshal", "shelve", "dill", "cloudpickle"}
