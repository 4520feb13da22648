"""A dot that names its algorithm (`algorithm=dot_bf16_bf16_f32`, what
`jax.nn.dot_product_attention` and `DotAlgorithmPreset.BF16_BF16_F32` ask for): read from text
and proto alike, evaluated as XLA CPU computes it (f32 products), and a result rounded as the
algorithm allows (bf16 operands) judged ok on any platform, where without the algorithm it
is a mismatch (tests/data/algorithm, a JAX 0.12 XLA CPU dump)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tests.helpers.cli import run_json
from workbench.formats.hlo_proto import read_hlo_proto
from workbench.formats.hlo_text import parse_hlo_text

DUMP = Path(__file__).parents[1] / "data" / "algorithm"
STEM = "module_0012.jit__lambda"


def dots(module: object) -> list[object]:
    return [i for c in module.computations for i in c.instructions  # type: ignore[attr-defined]  # an HloModule, passed as any object
            if i.opcode == "dot"]


@pytest.mark.parametrize("step", ["before_optimizations", "cpu_after_optimizations"])
def test_text_and_proto_name_the_same_algorithm(step: str) -> None:
    text = parse_hlo_text((DUMP / f"{STEM}.{step}.txt").read_text())
    proto = read_hlo_proto((DUMP / f"{STEM}.{step}.hlo.pb").read_bytes())
    for module in (text, proto):
        assert [d.attrs.get("algorithm") for d in dots(module)] == ["dot_bf16_bf16_f32"]


def text_only(tmp_path: Path, drop_algorithm: bool = False) -> Path:
    """The dump with its text steps and snapshot only (the algorithm taken out, if asked)."""
    folder = tmp_path / "text"
    folder.mkdir()
    for path in DUMP.glob(f"{STEM}.*"):
        if path.suffix == ".txt" or ".snapshot." in path.name:
            text = path.read_bytes()
            if drop_algorithm and path.suffix == ".txt":
                text = text.replace(b", algorithm=dot_bf16_bf16_f32", b"")
            (folder / path.name).write_bytes(text)
    return folder


@pytest.mark.parametrize("form", ["proto", "text"])
def test_the_recording_is_ok_from_text_and_proto(
        form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """XLA CPU's recording (f32 products) is the evaluator's reference: ok, never unsupported."""
    folder = DUMP if form == "proto" else text_only(tmp_path)
    status, payload = run_json(capsys, "replay", folder, "jit__lambda", "--json")
    assert status == 0, payload
    assert payload["recorded"]["ok"] and payload["recorded"]["allowance"] is None


def rounded_as_the_algorithm_allows(folder: Path, tmp_path: Path) -> Path:
    """A recording of the snapshot's inputs with each operand rounded to bf16 and the products
    summed in f32, as a GPU computes `dot_bf16_bf16_f32` (`--recorded` form)."""
    from workbench.index import scan
    from workbench.replay.backends import open_backend
    from workbench.replay.inputs import InputSpec, resolve_inputs

    module = next(m for m in scan(folder).modules if m.name == "jit__lambda")
    backend = open_backend(folder, module)
    assert backend is not None
    a, b = resolve_inputs(backend, module.executions[0], InputSpec()).arguments
    io = tmp_path / "io"
    (io / "inputs").mkdir(parents=True)
    (io / "outputs").mkdir()
    np.save(io / "inputs" / "_lambda.arg0.npy", a)
    np.save(io / "inputs" / "_lambda.arg1.npy", b)
    bf16 = [np.asarray(x).astype(ml_dtypes.bfloat16).astype(np.float32) for x in (a, b)]
    np.save(io / "outputs" / "_lambda.out0.npy", bf16[0] @ bf16[1])
    for snapshot in folder.glob("*.snapshot.*"):  # the recording judged is this one
        snapshot.unlink()
    return io


def test_a_result_rounded_as_the_algorithm_allows_is_ok_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = text_only(tmp_path)
    io = rounded_as_the_algorithm_allows(folder, tmp_path)
    status, payload = run_json(capsys, "replay", folder, "jit__lambda", "--recorded", io,
                               "--json")
    assert status == 0, payload["recorded"]
    assert payload["recorded"]["ok"] and payload["recorded"]["allowance"] == "bf16"


def test_without_the_algorithm_the_same_result_is_a_mismatch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = text_only(tmp_path, drop_algorithm=True)
    io = rounded_as_the_algorithm_allows(folder, tmp_path)
    status, payload = run_json(capsys, "replay", folder, "jit__lambda", "--recorded", io,
                               "--json")
    assert status == 1
    assert not payload["recorded"]["ok"] and payload["recorded"]["allowance"] is None
