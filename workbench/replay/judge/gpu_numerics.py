"""What a GPU may legally compute for a dot or convolution: the allowance a recorded GPU result
is judged with.

On Ampere and later, an f32 dot or convolution at default precision runs on tensor cores in
TF32: each operand rounded to 10 mantissa bits, products summed in f32 (XLA's default
`xla_gpu_enable_tf32`-style behaviour through cuBLAS, cuDNN and Triton). An instruction that
names `precision_config={highest,...}` or `algorithm=dot_f32_f32_f32` keeps full f32; one that
names `dot_bf16_bf16_f32_x3` / `_x6` rounds through bf16 with 3 / 6 partial products (about
16 / 24 mantissa bits). The allowance is the reference evaluated in f64 with those operand
roundings (`reduce-precision` inserted before each such operand): its distance from the truth
is the legal spread, in place of the input perturbation of `error_bound.py`.

A GPU also sums a reduction in whatever order its threads meet (tree reductions across a
block, atomics across blocks): XLA may not promise one order. A float `reduce` whose reducer
adds is allowed |reordered - in order| <= n * eps * sum|x| (n the elements summed, eps the
type's): the allowance module moves each such sum by that much, with a fixed sign pattern, so
the spread it makes downstream is what any order may legally make ("reordered-sum").

Only the recorded result of a module compiled for a GPU (its timeline ends in an
`sm_*_gpu_after_optimizations` step) is judged so: steps replayed on this CPU compute in f32.
On any platform, a dot that names a lower-precision `algorithm=` (`dot_bf16_bf16_f32`, what
`jax.nn.dot_product_attention` asks for) may round its operands so (`platform_defaults` off:
that alone, without the GPU's TF32 and reordered sums).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, Shape
from workbench.model import Module

_GPU_STEP = re.compile(r"sm_\d+\.\d+\w*_gpu_after_optimizations|gpu_after_optimizations")
# algorithm -> (exponent bits, mantissa bits) each operand is rounded to
_ALGORITHMS = {"dot_tf32_tf32_f32": (8, 10), "dot_tf32_tf32_f32_x3": (8, 21),
               "dot_bf16_bf16_f32": (8, 7), "dot_bf16_bf16_f32_x3": (8, 16),
               "dot_bf16_bf16_f32_x6": (8, 23), "dot_bf16_bf16_f32_x9": (8, 23)}
_LIBRARY_TARGETS = ("__cudnn$conv", "__cublas$gemm", "__cublas$lt$matmul")
TF32 = (8, 10)
REORDERED_SUM = "reordered-sum"
_SUMMED_TYPES = ("f32", "bf16", "f16")
NAMES = {(8, 10): "TF32", (8, 7): "bf16", (8, 16): "bf16x3", (8, 21): "TF32x3",
         (8, 23): "bf16x6"}


def is_gpu_module(module: Module) -> bool:
    """Compiled for a GPU: a step (or file) of its timeline is XLA GPU's optimized module."""
    return any(_GPU_STEP.search(step.pass_name or "") or _GPU_STEP.search(step.file or "")
               for step in module.steps)


def operand_rounding(instruction: Instruction, f32_operands: bool,
                     platform_defaults: bool = True) -> tuple[int, int] | None:
    """The (exponent, mantissa) bits a GPU may round this instruction's operands to (with
    `platform_defaults` off, only what its `algorithm=` names)."""
    algorithm = instruction.attrs.get("algorithm")
    if algorithm:
        return _ALGORITHMS.get(algorithm)
    if not platform_defaults:
        return None
    precision = " ".join((instruction.attrs.get("operand_precision", ""),
                          *(instruction.operand_precision or ()))).lower()
    if "highest" in precision or "high" in precision or not f32_operands:
        return None
    if instruction.opcode in ("dot", "convolution") or (
            instruction.opcode == "custom-call"
            and (instruction.custom_call_target or "").startswith(_LIBRARY_TARGETS)):
        return TF32
    return None


def gpu_rounded_module(module: HloModule, platform_defaults: bool = True
                       ) -> tuple[HloModule, set[str]] | None:
    """The module with each dot/convolution's float operands rounded as the GPU may round
    them and each float sum moved as far as another order may move it, and the names of the
    allowances applied; None when nothing changes."""
    applied: set[str] = set()
    computations = []
    for computation in module.computations:
        shapes = {i.name: i.shape for i in computation.instructions}
        instructions: list[Instruction] = []
        for instruction in computation.instructions:
            if platform_defaults and _is_float_sum(instruction, shapes, module):
                applied.add(REORDERED_SUM)
                instructions.extend(_reordered(instruction, shapes[instruction.operands[0]]))
                continue
            f32 = all(shapes[o].element_type == "f32" for o in instruction.operands[:2]
                      if o in shapes) and len(instruction.operands) >= 2
            rounding = operand_rounding(instruction, f32, platform_defaults)
            if rounding is None:
                instructions.append(instruction)
                continue
            applied.add(NAMES.get(rounding, f"{rounding[1]}-bit mantissa"))
            operands = list(instruction.operands)
            for k, operand in enumerate(operands[:2]):
                name = f"{instruction.name}.gpu_rounded.{k}"
                instructions.append(Instruction(name, "reduce-precision", shapes[operand],
                                                [operand], exponent_bits=rounding[0],
                                                mantissa_bits=rounding[1]))
                operands[k] = name
            instructions.append(replace(instruction, operands=operands))
        computations.append(replace(computation, instructions=instructions)
                            if len(instructions) != len(computation.instructions)
                            else computation)
    if not applied:
        return None
    return replace(module, computations=computations), applied


def _is_float_sum(instruction: Instruction, shapes: dict[str, Shape],
                  module: HloModule) -> bool:
    """A one-operand `reduce` of f32/bf16/f16 whose reducer returns the sum of its two
    parameters."""
    if (instruction.opcode != "reduce" or len(instruction.operands) != 2
            or instruction.shape.is_tuple or not instruction.called_computations
            or instruction.shape.element_type not in _SUMMED_TYPES):
        return False
    reducer: Computation | None = module.by_name.get(instruction.called_computations[0])
    if reducer is None:
        return False
    root = reducer.by_name.get(reducer.root_name)
    parameters = {i.name for i in reducer.instructions if i.opcode == "parameter"}
    return (root is not None and root.opcode == "add" and len(parameters) == 2
            and set(root.operands) == parameters
            and shapes[instruction.operands[0]].element_type == instruction.shape.element_type)


def _reordered(instruction: Instruction, operand: Shape) -> list[Instruction]:
    """`instruction` (a float sum) under its own name moved by +-n * eps * sum|x|, each
    element's sign from a fixed pattern."""
    import ml_dtypes

    from workbench.replay.hlo.dtypes import dtype_of

    name, shape = instruction.name, instruction.shape
    summed = int(np.prod([operand.dims[d] for d in instruction.dimensions or ()], dtype=np.int64))
    eps = float(ml_dtypes.finfo(dtype_of(shape.element_type)).eps)
    signs = np.random.default_rng(20261127).choice([-1.0, 1.0], size=shape.dims)
    slack = (signs * summed * eps).astype(dtype_of(shape.element_type))
    x, init = instruction.operands
    return [
        replace(instruction, name=f"{name}.gpu_in_order"),
        Instruction(f"{name}.gpu_abs", "abs", operand, [x]),
        replace(instruction, name=f"{name}.gpu_sum_abs", operands=[f"{name}.gpu_abs", init]),
        Instruction(f"{name}.gpu_slack", "constant", shape, literal=slack),
        Instruction(f"{name}.gpu_moved", "multiply", shape,
                    [f"{name}.gpu_sum_abs", f"{name}.gpu_slack"]),
        Instruction(name, "add", shape, [f"{name}.gpu_in_order", f"{name}.gpu_moved"]),
    ]
