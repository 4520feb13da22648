"""The parser takes what real dumps print; what it cannot take is reported, never guessed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.damage import huge_line, output_within
from workbench.formats.mlir_trace import parse_trace
from workbench.replay.errors import MlirParseError, Unsupported
from workbench.replay.mlir import evaluate_mlir

# The MLIR parser is imported where it is used: it imports xDSL, which takes a second, and
# collecting the tests should not pay it.


def test_location_aliases_defined_after_use() -> None:
    from workbench.replay.mlir.parse import parse_module

    module, _ = parse_module("""
    #loc1 = loc("f.py":1:2)
    func.func @main(%a: f32 loc("f.py":2:3)) -> f32 {
      %0 = "arith.addf"(%a, %a) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32 loc(#loc4)
      "func.return"(%0) : (f32) -> () loc(#loc1)
    } loc(callsite("g"("f.py":9:1) at fused["f.py":1:1, "g.py":2:2]))
    #loc4 = loc("f.py":3:10)
    """)
    assert [op.name for op in module.walk()][-2:] == ["arith.addf", "func.return"]


def test_hex_float_elements_are_bit_patterns() -> None:
    text = """
    func.func @main() -> (tensor<2xf32>, tensor<f16>, tensor<bf16>, tensor<i32>) {
      %0 = arith.constant dense<[0xFF800000, 0x7FC00000]> : tensor<2xf32>
      %1 = arith.constant dense<0x7C00> : tensor<f16>
      %2 = arith.constant dense<0x8000> : tensor<bf16>
      %3 = arith.constant dense<0x10> : tensor<i32>
      return %0, %1, %2, %3 : tensor<2xf32>, tensor<f16>, tensor<bf16>, tensor<i32>
    }"""
    floats, half, brain, integer = evaluate_mlir(text, [])
    assert floats[0] == -np.inf and np.isnan(floats[1])
    assert half == np.inf
    assert float(brain) == 0.0 and np.signbit(float(brain))
    assert integer == 16


def test_dense_resources_are_read_per_module() -> None:
    text = """
    func.func @main() -> tensor<2xi32> {
      %0 = arith.constant dense_resource<blob> : tensor<2xi32>
      return %0 : tensor<2xi32>
    }
    {-#
      dialect_resources: {
        builtin: {
          blob: "0x0400000001000000FFFFFFFF"
        }
      }
    #-}"""
    assert evaluate_mlir(text, []).tolist() == [1, -1]
    other = text.replace("01000000FFFFFFFF", "0200000003000000")
    assert evaluate_mlir(other, []).tolist() == [2, 3]


def test_other_dialects_attributes_with_types_and_custom_ops() -> None:
    from workbench.replay.mlir.parse import parse_module

    text = """
    #target = #hal.device.target<"local"> : !hal.device
    module attributes {hal.device.targets = [#hal.device.alias<"local"> : !hal.device]} {
      util.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
        util.return %a : tensor<4xf32>
      }
    }"""
    with pytest.raises(Unsupported, match="util.func"):
        parse_module(text)


def test_parse_errors_carry_the_parsers_message() -> None:
    from workbench.replay.mlir.parse import parse_module

    with pytest.raises(MlirParseError) as raised:
        parse_module("func.func @main() {\n  %0 = arith.addf %x : f32\n}", "step.mlir")
    message = str(raised.value)
    assert message.startswith("step.mlir:2:")
    assert "%0 = arith.addf %x : f32" in message


def test_unknown_ops_of_known_dialects_are_unsupported() -> None:
    from workbench.replay.mlir.parse import parse_module

    text = """
    func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = linalg.softmax dimension(1) ins(%a : tensor<2x2xf32>) outs(%a : tensor<2x2xf32>)
          -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    }"""
    with pytest.raises(Unsupported, match="linalg.softmax"):
        parse_module(text)


def _trace_step(corpus: Path, index: int) -> str:
    trace = corpus / "mlir" / "mlir-trace-clean" / "module_0000.jit_f.mlir-trace.pb"
    return parse_trace(trace.read_bytes(), trace.name).passes[index].mlir_module


def _loops_step(corpus: Path) -> str:
    """The IR after ConvertLinalgToLoopsPass in the corpus trace: loops of memref loads."""
    return _trace_step(corpus, 7)


_PRINT_PARSE_ERROR = """
import sys
from workbench.replay.mlir.parse import MlirParseError, parse_module
try:
    parse_module(sys.stdin.read(), "step.mlir")
except MlirParseError as error:
    print(error)
"""


def test_unterminated_string_in_a_damaged_dump_fails_fast(corpus: Path) -> None:
    """One damaged byte, `memref.load` -> `memref"load`, opens a string that never closes;
    xDSL's own string pattern backtracks exponentially over the rest of the line."""
    text = _loops_step(corpus)
    assert "memref.load %arg1[" in text
    damaged = text.replace("memref.load %arg1[", 'memref"load %arg1[', 1)
    message = output_within(30, _PRINT_PARSE_ERROR, damaged.encode())
    assert message.startswith("step.mlir:") and "closing string literal" in message


def test_damaged_first_token_is_a_parse_error(corpus: Path) -> None:
    from workbench.replay.mlir.parse import parse_module

    text = _loops_step(corpus)  # `module @jit_f {` -> `"odule @jit_f {`
    with pytest.raises(MlirParseError, match=r"^step\.mlir:1:1\b"):
        parse_module('"' + text[1:], "step.mlir")


@pytest.mark.parametrize(("index", "good", "bad", "raised"), [
    (0, "ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x8xf32>)", "ins(%arg0 : tensor<4x8xf32>)",
     "IndexError"),
    (3, 'iterator_types = ["parallel", "parallel"]', "iterator_types = 7", "AssertionError"),
    (7, "arith.constant 2.000000e+00 : f32", "arith.constant 2.000000e+99 : f32",
     "OverflowError"),
])
def test_damaged_operation_xdsl_cannot_build_is_a_parse_error(
        corpus: Path, index: int, good: str, bad: str, raised: str) -> None:
    """xDSL asserts, indexes operands or packs values while it builds some ops from their
    custom form: a `linalg.matmul` left with one input, a `linalg.generic` whose iterator
    types are not a list, an f32 constant out of the type's range."""
    from workbench.replay.mlir.parse import parse_module

    text = _trace_step(corpus, index)
    assert good in text
    with pytest.raises(MlirParseError, match=rf"^step\.mlir:\d+:\d+: cannot build the "
                                             rf"operation before this point \({raised}"):
        parse_module(text.replace(good, bad, 1), "step.mlir")


def test_nesting_too_deep_is_a_parse_error(corpus: Path) -> None:
    """The first line of a real dump, `module @jit_f {`, repeated over 64 KiB: regions
    nested thousands deep."""
    from workbench.replay.mlir.parse import parse_module

    text = (corpus / "mlir" / "iree-opt-to-loops" / "output.mlir").read_bytes()
    damaged = huge_line(text, 0, 64 * 1024).data.decode()
    with pytest.raises(MlirParseError, match=r"^step\.mlir: nested too deeply to parse$"):
        parse_module(damaged, "step.mlir")
