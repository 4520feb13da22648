"""The values a verdict keeps go to disk when they would crowd the memory limit, and the
verdict is the same.

A GPT-2-size step's result is 1.9 GB: the reference, the judged step's result, the f64 truth
and its bound kept in memory passed the memory limit before any evaluation ran. Beyond
`spill.KEPT_SHARE` of the limit they are written to unnamed temporary files and read through
read-only mappings.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workbench.index import scan
from workbench.replay import spill
from workbench.replay.bisect import bisect_replay
from workbench.replay.judge.compare import NOISE
from workbench.replay.judge.error_bound import truth_of
from workbench.replay.steps import Replay, open_replay

NOISE_DATA = Path(__file__).resolve().parents[1] / "data" / "noise"


def _replay() -> Replay:
    dump = scan(NOISE_DATA / "gpt_adamw_mini")
    module = next(m for m in dump.modules if m.key == "module_0022")
    return open_replay(dump.root, module, module.executions[0])


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, tuple):
        return [leaf for part in value for leaf in _leaves(part)]
    return [] if value is None else [value]


def _on_disk(array: Any) -> bool:
    """Whether `array`'s memory is a file mapping (a memmap, or a view of one)."""
    while array is not None:
        if isinstance(array, mmap.mmap):
            return True
        array = getattr(array, "base", None)
    return False


def _verdict(replay: Replay) -> tuple[Any, ...]:
    verdict = bisect_replay(replay)
    culprit = None if verdict.culprit is None else verdict.culprit.step.index
    return (verdict.status, culprit, verdict.evaluations,
            [(r.position, r.status, r.comparison and r.comparison.summary)
             for r in verdict.results])


def test_a_replay_whose_kept_values_would_crowd_the_limit_keeps_them_on_disk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    in_memory = _replay()
    expected = _verdict(in_memory)
    assert not any(_on_disk(a) for a in _leaves(in_memory.reference_value))

    monkeypatch.setattr(spill, "KEPT_SHARE", 0.0)  # anything kept is too much
    monkeypatch.setattr(spill, "SMALLEST", 1)
    on_disk = _replay()
    assert _verdict(on_disk) == expected
    kept = _leaves(on_disk.reference_value)
    assert kept and all(_on_disk(a) for a in kept)
    truth = on_disk.truth(True)
    assert truth is not None
    assert all(_on_disk(a) for a in _leaves(truth.value) + _leaves(truth.bound))
    noisy = on_disk.truth(NOISE)
    assert noisy is not None and all(_on_disk(a) for a in _leaves(noisy.bound))


def test_spilled_arrays_read_back_as_written_and_leave_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    value = (np.arange(300_000, dtype=np.float32).reshape(500, 600).T, None,
             np.ones(3), np.zeros((0, 4)))
    kept = spill.spilled(value)
    assert isinstance(kept[0], np.memmap) and not kept[0].flags.writeable
    assert np.array_equal(kept[0], value[0]) and kept[1] is None
    assert kept[2] is value[2] and kept[3] is value[3]  # small and empty stay in memory
    view = np.asarray(kept[0])[1:]
    assert spill.spilled(view) is view  # on disk already: not written again
    import pickle

    copied = pickle.loads(pickle.dumps(kept[0]))  # a memmap in memory (from a worker)
    assert _on_disk(spill.spilled(copied)) and not _on_disk(copied)
    assert list(tmp_path.iterdir()) == []  # unnamed: gone with its last mapping


def test_spill_is_decided_by_the_result_against_the_memory_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_MEMORY_LIMIT", "6G")
    assert not spill.should_spill(100 << 20)  # 600 MB kept of a 3 GB share
    assert spill.should_spill(1900 << 20)  # a GPT-2-size step's 1.9 GB result


def test_each_bound_array_is_kept_as_it_is_made() -> None:
    strict = (np.linspace(1, 2, 10, dtype=np.float32), np.arange(3),
              np.linspace(-1, 1, 7, dtype=np.float32))
    shadow = tuple(np.asarray(a, dtype=np.float64) for a in (strict[0], strict[2]))
    shadow = (shadow[0], strict[1], shadow[1])
    kept: list[np.ndarray] = []

    def keep(bound: np.ndarray) -> np.ndarray:
        kept.append(bound)
        return bound

    truth = truth_of(strict, shadow, shadow, keep=keep)
    assert [id(b) for b in kept] == [id(truth.bound[0]), id(truth.bound[2])]
    assert truth.bound[1] is None


def test_outputs_only_the_result_reads_go_to_disk_as_they_are_made(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.formats.hlo_text import parse_hlo_text
    from workbench.replay.hlo import evaluate_module

    module = parse_hlo_text("""HloModule step

ENTRY main {
  p = f32[300000] parameter(0)
  m = f32[300000] parameter(1)
  g = f32[300000] multiply(p, p)
  new_m = f32[300000] add(m, g)
  update = f32[300000] multiply(new_m, g)
  new_p = f32[300000] subtract(p, update)
  ROOT t = (f32[300000], f32[300000], f32[300000]) tuple(new_p, new_m, p)
}
""")
    arguments = [np.linspace(-1, 1, 300_000, dtype=np.float32),
                 np.linspace(0, 2, 300_000, dtype=np.float32)]
    made: list[str] = []
    original = spill.spilled

    def seen(value: Any) -> Any:
        made.append(describe(value))
        return original(value)

    def describe(value: Any) -> str:
        return f"{np.asarray(value).dtype}{np.asarray(value).shape}"

    monkeypatch.setattr(spill, "spilled", seen)
    interpreter = spill.OutputsToDisk(module)
    result = evaluate_module(module, arguments, interpreter=interpreter)
    expected = evaluate_module(module, arguments)
    # new_p only: new_m is read by `update` too, p is an argument the caller holds.
    assert made == ["float32(300000,)"]
    assert _on_disk(result[0]) and not _on_disk(result[1]) and not _on_disk(result[2])
    assert all(np.array_equal(a, b) for a, b in zip(result, expected, strict=True))


def test_a_replay_whose_arguments_would_crowd_the_limit_reads_them_from_disk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "KEPT_SHARE", 0.0)
    monkeypatch.setattr(spill, "SMALLEST", 1)
    replay = _replay()
    assert all(_on_disk(a) for a in _leaves(tuple(replay.inputs.arguments)))


def test_anonymous_tree_memory_leaves_out_what_a_spill_maps() -> None:
    from workbench.replay.progress import tree_resident_bytes

    size = 64 * 2**20
    kept = spill.spilled(np.ones(size // 8))
    before = (tree_resident_bytes() or 0, tree_resident_bytes(anonymous=True) or 0)
    assert float(np.asarray(kept).sum()) == size // 8  # every page read: mapped, resident
    total, anonymous = tree_resident_bytes() or 0, tree_resident_bytes(anonymous=True) or 0
    assert total - before[0] >= size // 2
    assert anonymous - before[1] < size // 4
