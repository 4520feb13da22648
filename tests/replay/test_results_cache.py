"""The triage results cache: nothing evaluated twice, only what changed re-evaluated, entries
written atomically by concurrent writers, damaged entries ignored and recomputed."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

import workbench.replay.triage.run as triage_module
from workbench.index import scan
from workbench.model import Execution, Module
from workbench.output.json_shapes import triage_result_json
from workbench.replay.judge.outcome import Kind
from workbench.replay.triage.results_cache import ResultsCache, job_files
from workbench.replay.triage.run import TriageJob, TriageOptions, TriageResult, triage, triage_jobs

DUMP = Path(__file__).parents[1] / "data" / "corpus" / "xla" / "layernorm-broken-fusion"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None]]:
    """Every job `triage` evaluates (in this process: jobs=0), as (module, execution)."""
    evaluated: list[tuple[str, str | None]] = []
    real = triage_module.run_job

    def run_job(root, job, options):
        evaluated.append((job.module.key, job.execution.id if job.execution else None))
        return real(root, job, options)

    monkeypatch.setattr(triage_module, "run_job", run_job)
    return evaluated


def payload(results: list[TriageResult]) -> list[dict]:
    lines = [triage_result_json(r) for r in results]
    for line in lines:
        line.pop("seconds")
    return lines


@pytest.fixture
def dump_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DUMP, tmp_path / "dump"))


def test_second_triage_evaluates_nothing(tmp_path: Path, dump_copy: Path, counted) -> None:
    cache = ResultsCache(tmp_path / "cache")
    first = triage(scan(dump_copy), jobs=0, cache=cache)
    assert len(counted) == len(first) == 9
    assert not any(r.cached for r in first)
    counted.clear()
    second = triage(scan(dump_copy), jobs=0, cache=cache)
    assert counted == []
    assert all(r.cached for r in second)
    assert payload(second) == payload(first)
    assert {r.status for r in second} == {"ok", "mismatch"}
    # The cache lives where it was told, never in the dump folder.
    assert sorted(p.name for p in dump_copy.iterdir()) == sorted(p.name for p in DUMP.iterdir())


def test_options_are_part_of_the_key(tmp_path: Path, dump_copy: Path, counted) -> None:
    cache = ResultsCache(tmp_path / "cache")
    triage(scan(dump_copy), jobs=0, cache=cache)
    counted.clear()
    triage(scan(dump_copy), TriageOptions(atol=1e-3), jobs=0, cache=cache)
    assert len(counted) == 9


def test_changed_step_file_re_evaluates_only_its_module(tmp_path: Path, dump_copy: Path,
                                                        counted) -> None:
    cache = ResultsCache(tmp_path / "cache")
    dump = scan(dump_copy)
    triage(dump, jobs=0, cache=cache)
    module = next(m for m in dump.modules if len(m.executions) > 0 and len(m.steps) > 2)
    step_file = dump_copy / module.steps[1].file
    step_file.write_text(step_file.read_text() + "\n")
    counted.clear()
    results = triage(scan(dump_copy), jobs=0, cache=cache)
    assert sorted(counted) == sorted((module.key, e.id) for e in module.executions)
    assert sum(not r.cached for r in results) == len(module.executions)


def test_grown_dump_evaluates_only_the_new_execution(tmp_path: Path, dump_copy: Path,
                                                     counted) -> None:
    cache = ResultsCache(tmp_path / "cache")
    full = scan(dump_copy)
    module = next(m for m in full.modules if len(m.executions) > 1)
    newest = module.executions[-1]
    kept = dump_copy.parent / "newest"
    shutil.move(dump_copy / newest.file, kept)
    triage(scan(dump_copy), jobs=0, cache=cache)
    shutil.move(kept, dump_copy / newest.file)
    counted.clear()
    triage(scan(dump_copy), jobs=0, cache=cache)
    assert counted == [(module.key, newest.id)]


def _entry_files(cache: ResultsCache) -> list[Path]:
    return sorted((cache.folder / "results").rglob("*.result"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "other key"])
def test_damaged_entry_is_recomputed(tmp_path: Path, dump_copy: Path, counted,
                                     damage: str) -> None:
    cache = ResultsCache(tmp_path / "cache")
    first = triage(scan(dump_copy), jobs=0, cache=cache)
    entries = _entry_files(cache)
    assert len(entries) == 9
    victim = entries[0]
    data = victim.read_bytes()
    if damage == "truncate":
        victim.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        victim.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif damage == "empty":
        victim.write_bytes(b"")
    else:  # a whole, valid entry of another job in this job's place
        victim.write_bytes(entries[1].read_bytes())
    for pack in (cache.folder / "packs").glob("*.pack"):
        pack.unlink()  # so the entry is read from its own file
    counted.clear()
    second = triage(scan(dump_copy), jobs=0, cache=cache)
    assert len(counted) == 1
    assert payload(second) == payload(first)
    counted.clear()
    triage(scan(dump_copy), jobs=0, cache=cache)
    assert counted == []


def _write_many(folder: str, text: str, rounds: int) -> None:
    cache = ResultsCache(Path(folder))
    for round_number in range(rounds):
        for key_number in range(5):
            result = TriageResult(f"module_{key_number}", "jit_x", "snapshot.1", Kind.OK,
                                  detail=f"{text} {round_number}")
            cache.put(f"{key_number:064x}", result)


def test_concurrent_writers_never_leave_a_damaged_entry(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(str(folder), "x" * 20000 * (n + 1), 15))
               for n in range(3)]
    for writer in writers:
        writer.start()
    cache = ResultsCache(folder)
    jobs = [TriageJob(Module(id=f"module_{n}", name="jit_x", format="xla"),
                      Execution("snapshot.1", "snapshot.1.pb")) for n in range(5)]
    reads = 0
    while any(w.is_alive() for w in writers):
        for key_number, job in enumerate(jobs):
            hit = cache.get(f"{key_number:064x}", job)
            if hit is not None:
                reads += 1
                assert hit.detail.startswith("x" * 20000) and hit.module == job.module.key
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert reads > 0
    assert len(_entry_files(cache)) == 5
    assert not list((folder / "results").rglob(".tmp-*"))


def test_job_files_are_the_steps_and_the_snapshot() -> None:
    dump = scan(DUMP)
    job = next(j for j in triage_jobs(dump) if j.execution is not None)
    files = job_files(job)
    assert job.execution is not None and job.execution.file in files
    assert all((DUMP / name).is_file() for name in files)
    assert {step.file for step in job.module.steps} <= set(files)
    json.dumps(files)


def test_command_uses_the_cache_and_no_cache_leaves_none(tmp_path: Path, capsys) -> None:
    from workbench.cli import main

    cache = tmp_path / "cache"
    assert main(["triage", str(DUMP), "--jobs", "0", "--cache", str(cache), "--json"]) == 1
    first = json.loads(capsys.readouterr().out)
    assert main(["triage", str(DUMP), "--jobs", "0", "--cache", str(cache)]) == 1
    assert "9 execution(s) (9 from the results cache): 1 mismatch" in capsys.readouterr().out
    assert main(["triage", str(DUMP), "--jobs", "0", "--cache", str(cache), "--json"]) == 1
    again = json.loads(capsys.readouterr().out)
    for line in first["results"] + again["results"]:
        line.pop("seconds")
    assert again == first
    # The default folder is the user's cache folder (it holds the signing secret, which the
    # runs above used); --no-cache neither reads nor writes results there.
    default = Path(os.environ["XDG_CACHE_HOME"]) / "workbench"
    assert main(["triage", str(DUMP), "--jobs", "0", "--no-cache"]) == 1
    assert sorted(p.name for p in default.iterdir()) == ["secret"]
    assert main(["triage", str(DUMP), "--jobs", "0"]) == 1
    assert len(list((default / "results").rglob("*.result"))) == 9


def _pack(cache: ResultsCache) -> Path:
    (pack,) = (cache.folder / "packs").glob("*.pack")
    return pack


def test_a_damaged_pack_costs_only_reads(tmp_path: Path, dump_copy: Path, counted) -> None:
    cache = ResultsCache(tmp_path / "cache")
    first = triage(scan(dump_copy), jobs=0, cache=cache)
    pack = _pack(cache)
    data = pack.read_bytes()
    pack.write_bytes(data[: len(data) // 2])
    counted.clear()
    again = triage(scan(dump_copy), jobs=0, cache=ResultsCache(tmp_path / "cache"))
    assert counted == []  # every entry read from its own file
    assert payload(again) == payload(first)
    assert _pack(cache).read_bytes() != data[: len(data) // 2]  # written whole again


def test_a_damaged_entry_in_a_pack_falls_back_to_its_file(tmp_path: Path, dump_copy: Path,
                                                          counted) -> None:
    cache = ResultsCache(tmp_path / "cache")
    first = triage(scan(dump_copy), jobs=0, cache=cache)
    # A pack whose own checksum holds but whose entries are cut short.
    import hashlib
    import pickle

    from workbench.replay.triage.results_cache import PACK_MAGIC

    entries = {key: data[:-20] for key, data in cache._pack.items()}
    inner = pickle.dumps(entries)
    _pack(cache).write_bytes(PACK_MAGIC + hashlib.sha256(inner).hexdigest().encode() + b"\n"
                             + inner)
    counted.clear()
    again = triage(scan(dump_copy), jobs=0, cache=ResultsCache(tmp_path / "cache"))
    assert counted == []
    assert payload(again) == payload(first)
    for entry in _entry_files(cache):
        entry.unlink()
    triage(scan(dump_copy), jobs=0, cache=ResultsCache(tmp_path / "cache"))
    assert counted == []  # the pack was written whole again, and now serves every entry
