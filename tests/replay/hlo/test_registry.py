"""The op table: every handler answers to a name XLA gives an opcode, traits are declared where
ops register, and custom-call targets dispatch through the same kind of table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.formats.hlo_text import parse_hlo_text
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.registry import (
    BIT_EXACT,
    CUSTOM_CALLS,
    ELEMENTWISE,
    HANDLERS,
    custom_call_handler_for,
    handles,
    handles_custom_call,
)

XLA_OPCODES = Path(__file__).parents[2] / "data" / "xla_opcodes.txt"


def xla_opcodes() -> set[str]:
    lines = XLA_OPCODES.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_every_handler_is_named_as_xla_names_an_opcode() -> None:
    known = xla_opcodes()
    assert len(known) > 100
    assert sorted(set(HANDLERS) - known) == []


def test_traits_name_registered_opcodes() -> None:
    assert set(HANDLERS) >= ELEMENTWISE and set(HANDLERS) >= BIT_EXACT
    assert {"add", "multiply", "compare", "select", "convert", "mulhi"} <= ELEMENTWISE
    assert {"reduce", "dot", "broadcast", "custom-call"}.isdisjoint(ELEMENTWISE)
    assert {"bitcast-convert", "reduce-precision", "custom-call"} <= BIT_EXACT


def test_an_op_or_target_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="opcode add registered twice"):
        handles("add")(lambda *_: None)
    with pytest.raises(ValueError, match="target TopK registered twice"):
        handles_custom_call("TopK")(lambda *_: None)


def test_custom_call_targets_dispatch_from_the_table() -> None:
    assert {"TopK", "Sharding", "__cudnn$convForward", "cusolver_potrf_ffi",
            "lapack_sgetrf_ffi", "tridiagonal_solve_perturbed_ffi"} <= set(CUSTOM_CALLS)
    with pytest.raises(Unsupported, match="custom-call no_such_target"):
        custom_call_handler_for("no_such_target")
    module = parse_hlo_text("""HloModule m
ENTRY main {
  p = f32[3]{0} parameter(0)
  ROOT s = f32[3]{0} custom-call(p), custom_call_target="Sharding", sharding={replicated}
}
""")
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(evaluate_module(module, [x]), x)
