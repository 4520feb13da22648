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
