"""`mulhi` against Python's exact integers, and the sharding custom-calls as identities on one
device; both also on real dumps JAX wrote (tests/data/ops)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.hlo_builders import element_type, run
from workbench.hlo_ir import Shape
from workbench.index import scan
from workbench.loader import load_snapshot, load_step_hlo
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import evaluate_module
from workbench.replay.judge.compare import compare

OPS = Path(__file__).parents[2] / "data" / "ops"
INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def expected_high(x: int, y: int, dtype: type) -> int:
    """The high half of the exact product, wrapped into the type as XLA's MulHi is."""
    info = np.iinfo(dtype)
    high = (x * y) >> info.bits
    return (high - info.min) % 2**info.bits + info.min if info.min else high % 2**info.bits


@pytest.mark.parametrize("dtype", INTEGERS)
def test_mulhi_matches_python_integers(dtype: type) -> None:
    info = np.iinfo(dtype)
    edge = [info.min, info.max, 0, 1, 2, info.max // 3, info.min + 1]
    if info.min:
        edge += [-1, -2, info.min // 2]
    rng = np.random.default_rng(0)
    random = rng.integers(info.min, info.max, size=50, dtype=dtype, endpoint=True).tolist()
    values = edge + random
    x = np.array([a for a in values for _ in values], dtype)
    y = np.array([b for _ in values for b in values], dtype)
    result = run("mulhi", element_type(np.dtype(dtype)), x, y)
    assert result.dtype == dtype
    expected = [expected_high(int(a), int(b), dtype) for a, b in zip(x, y, strict=True)]
    assert result.tolist() == expected


def test_mulhi_of_floats_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="mulhi on f32"):
        run("mulhi", "f32", np.ones(2, np.float32), np.ones(2, np.float32))


@pytest.mark.parametrize("target", ["xla.sdy.FuncResultSharding", "xla.sdy.GlobalToLocalShape",
                                    "xla.sdy.LocalToGlobalShape", "Sharding",
                                    "SPMDFullToShardShape", "SPMDShardToFullShape"])
def test_sharding_custom_calls_are_identities_on_one_device(target: str) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    result = run("custom-call", Shape("f32", (2, 3)), x, custom_call_target=target)
    assert np.array_equal(result, x)
    pair = Shape("tuple", tuple_shapes=(Shape("f32", (2, 3)), Shape("s32", (4,))))
    y = np.arange(4, dtype=np.int32)
    first, second = run("custom-call", pair, x, y, custom_call_target=target)
    assert np.array_equal(first, x) and np.array_equal(second, y)
    with pytest.raises(Unsupported, match="more than one device"):  # a shard's shape
        run("custom-call", Shape("f32", (1, 3)), x, custom_call_target=target)


def _evaluations(root: Path):
    for module in scan(root).modules:
        for execution in module.executions:
            snapshot = load_snapshot(root, execution)
            for step in module.ir_steps("hlo"):
                yield step, snapshot.result, evaluate_module(load_step_hlo(root, step),
                                                             snapshot.arguments)


def test_real_mulhi_dumps_reproduce_the_recorded_result_bit_for_bit() -> None:
    """s8, s64 and u64 `lax.mulhi` as JAX compiled them: integers, so bit-exact anywhere."""
    results = list(_evaluations(OPS / "mulhi"))
    assert len(results) == 3
    for step, recorded, result in results:
        assert result.dtype == recorded.dtype and result.tolist() == recorded.tolist(), step


def test_real_sharded_dump_reproduces_the_recorded_result() -> None:
    """`Sharding` and `xla.sdy.FuncResultSharding` on a one-device mesh (the program's tanh
    rounds with the machine's libm: compared with the replay's tolerance)."""
    (result,) = list(_evaluations(OPS / "sharded"))
    step, recorded, got = result
    assert compare(recorded, got).ok, step
