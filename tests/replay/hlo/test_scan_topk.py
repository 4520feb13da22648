"""The `scan` op (with carries, reversed) and XLA CPU's `custom-call TopK`, each against an
independent numpy computation; both on real dumps too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.formats.hlo_proto import read_hlo_proto
from workbench.formats.hlo_text import parse_hlo_text
from workbench.formats.snapshot import read_snapshot
from workbench.hlo_ir import HloModule
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import evaluate_module

PRODUCERS = Path(__file__).parents[2] / "data" / "producers"
JAX12 = PRODUCERS / "topk_sort_take"
GPU_F = PRODUCERS / "gpu_sort_topk_scatter"

# Two inputs, two carries: a running sum of x and a running max of y, with a product output.
SCAN = """HloModule s, entry_computation_layout={(f32[3,5]{1,0}, f32[3,5]{1,0})->(f32[3,5]{1,0}, f32[3,5]{1,0}, f32[3]{0}, f32[3]{0})}

%step (x: f32[3], y: f32[3], sum: f32[3], top: f32[3]) -> (f32[3], f32[3], f32[3], f32[3]) {
  %x = f32[3]{0} parameter(0)
  %y = f32[3]{0} parameter(1)
  %sum = f32[3]{0} parameter(2)
  %top = f32[3]{0} parameter(3)
  %new_sum = f32[3]{0} add(%sum, %x)
  %new_top = f32[3]{0} maximum(%top, %y)
  %product = f32[3]{0} multiply(%new_sum, %y)
  ROOT %out = (f32[3]{0}, f32[3]{0}, f32[3]{0}, f32[3]{0}) tuple(%new_sum, %product, %new_sum, %new_top)
}

ENTRY %main (a: f32[3,5], b: f32[3,5]) -> (f32[3,5], f32[3,5], f32[3], f32[3]) {
  %a = f32[3,5]{1,0} parameter(0)
  %b = f32[3,5]{1,0} parameter(1)
  %zero = f32[] constant(0)
  %zeros = f32[3]{0} broadcast(%zero), dimensions={}
  %low = f32[] constant(-inf)
  %lows = f32[3]{0} broadcast(%low), dimensions={}
  ROOT %scan = (f32[3,5]{1,0}, f32[3,5]{1,0}, f32[3]{0}, f32[3]{0}) scan(%a, %b, %zeros, %lows), dimensions={1}, num_carries=2, ATTRS to_apply=%step
}
"""  # noqa: E501


def numpy_scan(a: np.ndarray, b: np.ndarray, reverse: bool) -> list[np.ndarray]:
    columns = range(a.shape[1] - 1, -1, -1) if reverse else range(a.shape[1])
    total = np.zeros(3, np.float32)
    top = np.full(3, -np.inf, np.float32)
    sums = np.zeros_like(a)
    products = np.zeros_like(a)
    for j in columns:
        total = total + a[:, j]
        top = np.maximum(top, b[:, j])
        sums[:, j] = total
        products[:, j] = total * b[:, j]
    return [sums, products, total, top]


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_with_two_carries_forward_and_reversed(reverse: bool) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(np.float32)
    attrs = "is_reverse=true, " if reverse else ""
    module = parse_hlo_text(SCAN.replace("ATTRS ", attrs), "scan.txt")
    result = evaluate_module(module, [a, b])
    expected = numpy_scan(a, b, reverse)
    assert len(result) == 4
    for got, want in zip(result, expected, strict=True):
        np.testing.assert_array_equal(got, want)  # the same additions in the same order


def test_scan_num_carries_that_contradicts_the_shapes_is_an_error() -> None:
    module = parse_hlo_text(SCAN.replace("num_carries=2", "num_carries=1").replace("ATTRS ", ""),
                            "scan.txt")
    with pytest.raises(Exception, match="num_carries=1, but the operands' shapes give 2"):
        evaluate_module(module, [np.ones((3, 5), np.float32)] * 2)


def gpu_module(kind: str) -> HloModule:
    base = "module_3977.jit_f.before_optimizations"
    if kind == "text":
        return parse_hlo_text((GPU_F / f"{base}.txt").read_text(), base)
    return read_hlo_proto((GPU_F / f"{base}.hlo.pb").read_bytes(), base)


@pytest.mark.parametrize("kind", ["text", "proto"])
def test_gpu_cumsum_scan_against_numpy(kind: str) -> None:
    """XLA GPU keeps `jnp.cumsum` as a scan: the program's value from its recorded inputs
    matches numpy's f64 computation of the same function, and the GPU's own result."""
    module = gpu_module(kind)
    (scan,) = [i for c in module.computations for i in c.instructions if i.opcode == "scan"]
    assert scan.attrs["num_carries"] == "1" and scan.attrs["is_associative"] == "true"
    x, idx, upd = (np.load(GPU_F / "io" / "inputs" / f"f.arg{k}.npy") for k in range(3))
    result = float(evaluate_module(module, [x, idx, upd]))
    x64 = x.astype(np.float64)
    vals = -np.sort(-x64, axis=-1)[:, :8]
    seg = np.zeros(64)
    np.add.at(seg, idx, upd.astype(np.float64))
    expected = (vals.sum() + np.sort(x64, axis=-1)[:, ::7].sum() + seg.sum()
                + np.argmax(x64, -1).sum() + np.cumsum(x64, -1)[:, -1].sum()
                + x64[idx % 32, idx % 100].sum())
    gpu = float(np.load(GPU_F / "io" / "outputs" / "f.out0.npy"))
    scale = np.abs(x64).sum() * 8  # every term is a sum of at most this much
    assert abs(result - expected) <= scale * 2**-20
    assert abs(result - gpu) <= scale * 2**-20


def test_proto_scan_with_unknown_fields_is_unsupported() -> None:
    module = gpu_module("proto")
    (scan,) = [i for c in module.computations for i in c.instructions if i.opcode == "scan"]
    scan.attrs["unread_proto_fields"] = "97"
    x, idx, upd = (np.load(GPU_F / "io" / "inputs" / f"f.arg{k}.npy") for k in range(3))
    with pytest.raises(Unsupported, match="scan with proto fields 97"):
        evaluate_module(module, [x, idx, upd])


def numpy_top_k(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


@pytest.mark.parametrize("kind", ["txt", "hlo.pb"])
def test_topk_custom_call_of_jax12_against_numpy(kind: str) -> None:
    """The optimized module of `lax.top_k` on XLA CPU (custom-call TopK) on the snapshot's
    inputs: its values and indices are numpy's, and the whole result is the recorded one."""
    path = JAX12 / f"module_0004.jit_topk_sort_take.cpu_after_optimizations.{kind}"
    module = parse_hlo_text(path.read_text(), path.name) if kind == "txt" else \
        read_hlo_proto(path.read_bytes(), path.name)
    targets = [i.custom_call_target for c in module.computations for i in c.instructions
               if i.opcode == "custom-call"]
    assert targets == ["TopK"]
    (snapshot_file,) = JAX12.glob("*.snapshot.*.pb")
    snapshot = read_snapshot(snapshot_file.read_bytes(), snapshot_file.name)
    x, _ = snapshot.arguments
    result = evaluate_module(module, snapshot.arguments)
    values, indices = numpy_top_k(np.asarray(x), 3)
    np.testing.assert_array_equal(result[0], values)
    np.testing.assert_array_equal(result[1], indices)
    for got, recorded in zip(result, snapshot.result, strict=True):
        np.testing.assert_array_equal(got, recorded)


def test_topk_custom_call_ties_keep_the_lower_index() -> None:
    path = JAX12 / "module_0004.jit_topk_sort_take.cpu_after_optimizations.txt"
    module = parse_hlo_text(path.read_text(), path.name)
    x = np.array([[1, 5, 5, 2, 5, 0, 5, 3], [-1, -1, -1, -1, 0, 0, 7, 7]], np.float32)
    result = evaluate_module(module, [x, np.array([0, 1, 2], np.int32)])
    values, indices = numpy_top_k(x, 3)
    np.testing.assert_array_equal(result[1], indices)
    assert indices[0].tolist() == [1, 2, 4] and indices[1].tolist() == [6, 7, 4]
    np.testing.assert_array_equal(result[0], values)
