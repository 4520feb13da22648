"""A recorded GPU result judged with the GPU's legal numerics: the H100's TF32 `gelu(x @ w + b)`
(tests/data/xla_gpu/matmul_tf32: an 8 x 16 corner of the corpus's program, its recorded
inputs and result; the module's optimized step there is its before_optimizations text, enough
to mark the module as compiled for sm_9.0a) is ok within TF32 rounding, and a mismatch with
one element moved beyond that bound or when judged as a CPU's f32 result."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_json
from workbench.cli import main
from workbench.formats.hlo_text import parse_hlo_text
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import shadow_module
from workbench.replay.judge.compare import Comparison, Truth, compare
from workbench.replay.judge.error_bound import perturb, truth_of, widen
from workbench.replay.judge.gpu_numerics import gpu_rounded_module

DUMP = Path(__file__).parents[1] / "data" / "xla_gpu" / "matmul_tf32"
GPU_STEP = "module_4639.jit_f.sm_9.0a_gpu_after_optimizations.txt"


def replay(dump: Path, recorded: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["replay", str(dump), "jit_f", "--recorded", str(recorded)])
    lines = capsys.readouterr().out.splitlines()
    return status, next(line for line in lines if line.startswith("recorded result vs"))


def test_the_gpus_tf32_result_is_within_tf32_rounding(capsys: pytest.CaptureFixture[str]) -> None:
    status, line = replay(DUMP, DUMP / "io", capsys)
    assert status == 0, line
    assert line.startswith("recorded result vs reference: ok")
    assert "(within TF32 rounding of the reference)" in line


def test_the_json_verdict_states_the_allowance(capsys: pytest.CaptureFixture[str]) -> None:
    status, payload = run_json(capsys, "replay", DUMP, "jit_f", "--recorded", DUMP / "io",
                               "--json")
    assert status == 0
    assert payload["recorded"]["ok"] and payload["recorded"]["allowance"] == "TF32"
    assert all(r["comparison"]["allowance"] is None for r in payload["results"]
               if r["comparison"] is not None)


def test_one_element_beyond_the_tf32_bound_is_a_mismatch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recorded = tmp_path / "io"
    shutil.copytree(DUMP / "io", recorded)
    out = recorded / "outputs" / "f.out0.npy"
    result = np.load(out)
    result[3, 5] += 0.05  # the TF32 bound here is a few 1e-3
    np.save(out, result)
    status, line = replay(DUMP, recorded, capsys)
    assert status == 1
    assert line.startswith("recorded result vs reference: mismatch: 1 of 128 elements")
    assert "[3,5]" in line and "(beyond TF32 rounding of the reference)" in line


def test_without_a_gpu_step_the_same_result_is_judged_as_f32(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cpu = tmp_path / "dump"
    shutil.copytree(DUMP, cpu)
    (cpu / GPU_STEP).unlink()
    status, line = replay(cpu, cpu / "io", capsys)
    assert status == 1
    assert line.startswith("recorded result vs reference: mismatch") and "TF32" not in line


@pytest.mark.parametrize("attributes, rounding", [
    ("", "TF32"), (", operand_precision={highest,highest}", None),
    (", algorithm=dot_bf16_bf16_f32_x3", "bf16x3"), (", algorithm=dot_f32_f32_f32", None)])
def test_the_instructions_precision_and_algorithm_decide_the_rounding(
        attributes: str, rounding: str | None) -> None:
    module = parse_hlo_text(
        "HloModule m\n\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n"
        "  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"
        f"{attributes}\n}}\n")
    rounded = gpu_rounded_module(module)
    if rounding is None:
        assert rounded is None
        return
    assert rounded is not None
    changed, names = rounded
    assert names == {rounding}
    opcodes = [i.opcode for i in changed.entry.instructions]
    assert opcodes.count("reduce-precision") == 2 and opcodes[-1] == "dot"


SUM = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[8,1024] parameter(0)
  zero = f32[] constant(0)
  ROOT total = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
}
"""


def judged_sum(recorded: np.ndarray, x: np.ndarray, allowance: bool) -> Comparison:
    """The recording judged as `_judge_recorded` does: the bound of the f64 truth, widened by
    the allowance module's spread when `allowance`."""
    module = parse_hlo_text(SUM)
    strict = evaluate_module(module, [x])
    shadow = evaluate_module(shadow_module(module), [widen(x)])
    truth = truth_of(strict, shadow, evaluate_module(shadow_module(module), perturb([x])))
    if allowance:
        rounded = gpu_rounded_module(module)
        assert rounded is not None and rounded[1] == {"reordered-sum"}
        moved = evaluate_module(shadow_module(rounded[0]), [widen(x)])
        truth = Truth(truth.value, np.maximum(truth.bound, truth_of(strict, shadow, moved).bound))
    return compare(strict, recorded, truth=truth)


def test_a_sum_in_another_order_is_within_n_eps_sum_abs_and_one_beyond_is_not() -> None:
    x = (np.random.default_rng(5).standard_normal((8, 1024)) * 100).astype(np.float32)
    reference = np.asarray(evaluate_module(parse_hlo_text(SUM), [x]))
    # Another order: each row summed sequentially from its end, in f32.
    reordered = np.array([np.cumsum(row[::-1], dtype=np.float32)[-1] for row in x])
    assert judged_sum(reordered, x, allowance=True).ok
    slack = 1024 * np.finfo(np.float32).eps * np.abs(x.astype(np.float64)).sum(axis=1)
    within = reference.copy()
    within[3] += np.float32(0.5 * slack[3])  # as far as a bad order may go, about
    assert not judged_sum(within, x, allowance=False).ok
    assert judged_sum(within, x, allowance=True).ok
    beyond = reference.copy()
    beyond[3] += np.float32(20 * slack[3])
    verdict = judged_sum(beyond, x, allowance=True)
    assert not verdict.ok and verdict.mismatches == 1 and verdict.first_index == (3,)


def test_a_max_reduction_is_not_given_the_sum_allowance() -> None:
    module = parse_hlo_text(SUM.replace("add(a, b)", "maximum(a, b)"))
    assert gpu_rounded_module(module) is None
