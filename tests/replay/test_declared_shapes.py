"""A result must be what its instruction declares, and what grows from attributes (padding,
dilation) is sized before it is made: a module whose attributes disagree with its shapes is an
error naming the instruction, never a verdict on made-up values nor memory past the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.replay.processes import memory


def module(declared: str, body: str) -> str:
    return f"""HloModule m, entry_computation_layout={{(f32[4])->{declared}}}

ENTRY main {{
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  ROOT r = {body}
}}
"""


# padding=0_250000000 makes 250 million elements (1 GB) of a declared f32[4].
HUGE_PAD = module("f32[4]", "f32[4] pad(x, zero), padding=0_250000000")
WRONG_PAD = module("f32[4]", "f32[4] pad(x, zero), padding=0_6")
SLICE_TOO_BIG = module("f32[8]", "f32[8] dynamic-slice(x, s), dynamic_slice_sizes={8}").replace(
    "zero = f32[] constant(0)", "s = s32[] constant(0)")
SLICE_TOO_BIG_DECLARED_SMALL = SLICE_TOO_BIG.replace("f32[8]", "f32[4]")
# Base dilation of 80 million: a dilated input of 240 million elements (960 MB).
HUGE_BASE_DILATION = module(
    "f32[1]", "f32[1] reduce-window(x, zero), window={size=1 stride=300000000 "
    "lhs_dilate=80000000}, to_apply=add") + """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""
HUGE_CONVOLUTION_DILATION = """HloModule m, entry_computation_layout={(f32[1,4,1])->f32[1,1,1]}

ENTRY main {
  x = f32[1,4,1] parameter(0)
  k = f32[1,1,1] constant({{{1}}})
  ROOT r = f32[1,1,1] convolution(x, k), window={size=1 stride=300000000 lhs_dilate=80000000},
    dim_labels=b0f_0io->b0f
}
"""


@pytest.fixture(autouse=True)
def no_limit_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--memory-limit` sets the environment; the test's changes are undone after it."""
    monkeypatch.delenv(memory.ENVIRONMENT_VARIABLE, raising=False)


def replay(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str],
           *options: str) -> list[dict]:
    root = tmp_path / "dump"
    root.mkdir()
    for step in ("before_optimizations", "0001.pipeline.after_pass.before_next"):
        (root / f"module_0001.m.{step}.txt").write_text(text)
    main(["replay", str(root), "m", "--fake-data", "--json", *options])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return json.loads(out)["results"]


@pytest.mark.parametrize("text", [HUGE_PAD, HUGE_BASE_DILATION, HUGE_CONVOLUTION_DILATION],
                         ids=["pad", "reduce-window", "convolution"])
def test_growth_from_attributes_is_sized_before_it_is_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    results = replay(tmp_path, text, capsys, "--memory-limit", "100MB")
    assert [r["kind"] for r in results] == ["error"]  # the reference: nothing is judged
    status = results[0]["status"]
    assert "(limit 100 MB) for r: " in status and "padded or dilated to" in status, status


@pytest.mark.parametrize("text", [WRONG_PAD, SLICE_TOO_BIG, SLICE_TOO_BIG_DECLARED_SMALL],
                         ids=["pad f32[10] for f32[4]", "dynamic-slice of 8 from f32[4]",
                              "dynamic-slice of 8 declared f32[4]"])
def test_a_result_other_than_declared_is_an_error_naming_the_instruction(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    results = replay(tmp_path, text, capsys)
    assert [r["kind"] for r in results] == ["error"]  # the reference: nothing is judged
    status = results[0]["status"]
    assert status.startswith(("error: r (pad): its result is float32[10], its declared shape "
                              "f32[4]", "error: main/r (dynamic-slice): a slice of size [8]")), \
        status
