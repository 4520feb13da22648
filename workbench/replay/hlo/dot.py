"""`dot` with batch and contracting dimensions, as one batched matmul.

Operands are converted to the result type first (HloEvaluator's rule for mixed types);
narrow floats accumulate in f32 and round once at the end, as HloEvaluator does; integers
wrap. Float sums use numpy's matmul order, so the last bits may differ from XLA's (whose own
CPU backend uses Eigen): compare float dots with a tolerance.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.registry import Value, handles

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


# The dot algorithms XLA names (`algorithm=`, PrecisionConfig.Algorithm): the least precision
# a backend may use, operands rounded to the first types and summed in the last.
ALGORITHMS = re.compile(r"dot_(any_f8_any_f8_f32(_fast_accum)?|f16_f16_f16|f16_f16_f32"
                        r"|bf16_bf16_bf16|bf16_bf16_f32(_x3|_x6|_x9)?|tf32_tf32_f32(_x3)?"
                        r"|f32_f32_f32|f64_f64_f64)")


def check_precision(instruction: Instruction) -> None:
    """Precision hints and `algorithm=` do not change the evaluator's numbers: an algorithm is
    the least precision a backend may use, and the evaluator computes as XLA CPU does, in the
    operands' own precision (the judgment allows for an algorithm's rounding where a platform
    uses it, `judge/gpu_numerics.py`). Packed nibbles would, so they are not evaluated, nor is
    an algorithm XLA does not name."""
    precision = instruction.attrs.get("operand_precision", "")
    if "packed_nibble" in precision.lower():
        raise Unsupported(f"{instruction.opcode} with packed nibble operands")
    algorithm = instruction.attrs.get("algorithm")
    if algorithm and not ALGORITHMS.fullmatch(algorithm):
        raise Unsupported(f"{instruction.opcode} algorithm {algorithm}")
    if "sparsity" in instruction.attrs:
        raise Unsupported(f"sparse {instruction.opcode}")


def accumulation(result_dtype: np.dtype) -> np.dtype:
    return dtypes.compute_dtype(result_dtype)


@handles("dot")
def dot(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    check_precision(instruction)
    numbers = instruction.dot_dimension_numbers
    if numbers is None:
        raise EvaluationError(f"{instruction.name}: dot without dimension numbers")
    result_dtype = dtypes.dtype_of(instruction.shape.element_type)
    work = accumulation(result_dtype)
    lhs = dtypes.convert(np.asarray(operands[0]), result_dtype).astype(work, copy=False)
    rhs = dtypes.convert(np.asarray(operands[1]), result_dtype).astype(work, copy=False)
    lhs_batch, rhs_batch = list(numbers.lhs_batch_dims), list(numbers.rhs_batch_dims)
    lhs_contract = list(numbers.lhs_contracting_dims)
    rhs_contract = list(numbers.rhs_contracting_dims)
    lhs_free = [d for d in range(lhs.ndim) if d not in lhs_batch + lhs_contract]
    rhs_free = [d for d in range(rhs.ndim) if d not in rhs_batch + rhs_contract]
    batch = [lhs.shape[d] for d in lhs_batch]
    m = [lhs.shape[d] for d in lhs_free]
    n = [rhs.shape[d] for d in rhs_free]
    k = int(np.prod([lhs.shape[d] for d in lhs_contract], dtype=np.int64))
    b, mm, nn = (int(np.prod(s, dtype=np.int64)) for s in (batch, m, n))
    left = np.transpose(lhs, lhs_batch + lhs_free + lhs_contract).reshape(b, mm, k)
    right = np.transpose(rhs, rhs_batch + rhs_contract + rhs_free).reshape(b, k, nn)
    product = np.matmul(left, right)
    return product.reshape(batch + m + n).astype(result_dtype, copy=False)
