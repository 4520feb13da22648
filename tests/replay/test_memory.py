"""Evaluation memory is bounded: arrays are sized from their declared shapes before they are
made, and a step over the limit ends as an error with the numbers, not a MemoryError."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.replay.processes import memory

BROADCAST = """HloModule big, entry_computation_layout={(f32[])->f32[30000,30000]}

ENTRY main {
  x = f32[] parameter(0)
  ROOT b = f32[30000,30000] broadcast(x), dimensions={}
}
"""

# Three f32[4000,4000] arrays (61 MB each) live at once; each alone is under 100 MB.
MANY_LIVE = """HloModule live, entry_computation_layout={(f32[])->f32[4000,4000]}

ENTRY main {
  x = f32[] parameter(0)
  a = f32[4000,4000] broadcast(x), dimensions={}
  b = f32[4000,4000] negate(a)
  c = f32[4000,4000] add(a, b)
  ROOT d = f32[4000,4000] add(c, a)
}
"""

HUGE_PARAMETER = """HloModule param, entry_computation_layout={(f32[100000,100000])->f32[]}

ENTRY main {
  x = f32[100000,100000] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(x, zero), dimensions={0,1}, to_apply=add
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""

SMALL = """HloModule small, entry_computation_layout={(f32[4])->f32[4]}

ENTRY main {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
"""


@pytest.fixture(autouse=True)
def no_limit_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--memory-limit` sets the environment; the test's changes are undone after it."""
    monkeypatch.delenv(memory.ENVIRONMENT_VARIABLE, raising=False)


def dump_of(tmp_path: Path, **modules: str) -> Path:
    root = tmp_path / "dump"
    root.mkdir()
    for number, (name, text) in enumerate(modules.items(), start=1):
        for step in ("before_optimizations", "0001.pipeline.after_pass.before_next"):
            (root / f"module_{number:04d}.{name}.{step}.txt").write_text(text)
    return root


def test_array_bytes_are_exact() -> None:
    assert memory.array_bytes(np.dtype(np.float32), (100000, 100000)) == 40_000_000_000


def test_one_array_over_the_limit_is_an_error_with_the_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = dump_of(tmp_path, big=BROADCAST)
    main(["replay", str(root), "big", "--fake-data", "--memory-limit", "1G", "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    text = json.dumps(json.loads(out))
    assert "needs 3.35 GB (limit 1 GB) for main/b f32[30000,30000]" in text


def test_the_arrays_live_at_once_count_together(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = dump_of(tmp_path, live=MANY_LIVE)
    main(["replay", str(root), "live", "--fake-data", "--memory-limit", "100M", "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert "needs 183 MB (limit 100 MB) for the values main holds at once" in out
    # Within a limit that holds them, it runs.
    main(["replay", str(root), "live", "--fake-data", "--memory-limit", "300M", "--json"])
    statuses = [r["status"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert statuses == ["ok", "ok"]


def test_fake_data_and_npy_headers_are_sized_before_they_are_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = dump_of(tmp_path, param=HUGE_PARAMETER)
    assert main(["replay", str(root), "param", "--fake-data"]) == 2
    err = capsys.readouterr().err
    assert "needs 37.3 GB" in err and "f32[100000,100000]" in err and "Traceback" not in err

    claims_40_gb = tmp_path / "header-only.npy"
    with open(claims_40_gb, "wb") as stream:
        np.lib.format.write_array_header_1_0(
            stream, {"descr": "<f4", "fortran_order": False, "shape": (100000, 100000)})
    assert claims_40_gb.stat().st_size < 200
    assert main(["replay", str(root), "param", "--inputs", str(claims_40_gb)]) == 2
    err = capsys.readouterr().err
    assert f"{claims_40_gb}: needs 37.3 GB" in err and "Traceback" not in err


def test_triage_goes_on_past_a_module_over_the_limit(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root = dump_of(tmp_path, big=BROADCAST, small=SMALL)
    main(["triage", str(root), "--fake-data", "--memory-limit", "1G", "--json"])
    results = {r["name"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert results["big"]["status"] == "error"
    assert "needs 3.35 GB (limit 1 GB)" in results["big"]["detail"]
    assert results["small"]["status"] == "ok"


def test_workers_run_each_call_under_the_limit_set_since_they_started(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.replay.processes.workers import FORWARDED_ENVIRONMENT, WorkerPool

    assert memory.ENVIRONMENT_VARIABLE in FORWARDED_ENVIRONMENT
    with WorkerPool(1) as pool:
        assert pool.call(memory.memory_limit).value == memory.default_limit()
        memory.set_memory_limit(12345)  # after the worker started
        assert pool.call(memory.memory_limit).value == 12345
        monkeypatch.delenv(memory.ENVIRONMENT_VARIABLE)
        assert pool.call(memory.memory_limit).value == memory.default_limit()


def test_bisect_says_before_it_starts_that_the_noise_stage_would_not_fit(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A step whose inputs are kept on disk (large for the limit) is sized for the
    random-rounding stage before the bisection starts: a stage that would not fit is said at
    once, with what it needs, not minutes later at the first step that needs it; the steps,
    and the recording, that only it could judge are then not judged, as said."""
    from tests.helpers.cli import run_cli

    dump = Path(__file__).parents[1] / "data" / "noise" / "gpt_adamw_mini"
    tight = run_cli(capsys, "bisect", dump, "module_0022", "--memory-limit", "2M")
    note = tight.err.splitlines()[0]
    assert note.startswith("workbench bisect: note: a step that only the random-rounding "
                           "stage could judge will not be judged: it needs ")
    assert "(limit 2 MB) for the random-rounding stage" in note
    # Nor is the recording, which only the stage could explain: no mismatch is claimed.
    assert "2 steps judged, 2 not judged" in tight.out and tight.status == 5
    assert "the recorded result is not judged: 4 of 44930 elements are beyond" in tight.out
    replayed = run_cli(capsys, "replay", dump, "module_0022", "--memory-limit", "2M")
    assert "recorded result vs reference: not judged: " in replayed.out
    assert replayed.status == 5
    roomy = run_cli(capsys, "bisect", dump, "module_0022", "--memory-limit", "1G")
    assert "random-rounding stage could judge" not in roomy.err
    assert roomy.status == 0, roomy.out
