"""What each HLO op does under rounding: which ops round their result, which are exact,
which jump where an operand crosses a threshold, and the float types."""

from __future__ import annotations

import numpy as np

from workbench.hlo_ir import Instruction

# Ops with a tuple of float results, each rounded once to its type (`_rounding_parts`): the
# batch-norm family, whose statistics and normalized values XLA's batchnorm_expander computes
# with reductions and elementwise ops in the operand's type.
ROUNDED_TUPLES = frozenset(("batch-norm-training", "batch-norm-grad"))

# Ops whose result is some operand's values moved or copied: they do not round.
EXACT = frozenset(
    (
        "parameter",
        "constant",
        "tuple",
        "get-tuple-element",
        "bitcast",
        "reshape",
        "broadcast",
        "transpose",
        "slice",
        "dynamic-slice",
        "dynamic-update-slice",
        "concatenate",
        "pad",
        "copy",
        "gather",
        "scatter",
        "reverse",
        "select",
        "iota",
        "while",
        "conditional",
        "call",
        "fusion",
        "custom-call",
        "sort",
        "opt-barrier",
        "abs",
        "negate",
        "maximum",
        "minimum",
        "clamp",
        "real",
        "imag",
        "bitcast-convert",
        "reduce-precision",
        "stochastic-convert",
        "rng",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "sign",
        "after-all",
        "add-dependency",
        "map",
        "reduce",
        "reduce-window",
        "select-and-scatter",
        "all-reduce",
        "copy-start",
        "copy-done",
        "domain",
        "get-dimension-size",
        "set-dimension-size",
    )
)
# Ops whose result jumps where an operand crosses a threshold.
DISCONTINUOUS = frozenset(
    (
        "compare",
        "sign",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "convert",
        "sort",
        "topk",
        "reduce",
        "is-finite",
    )
)
FLOAT_TYPES = frozenset(
    (
        "f16",
        "bf16",
        "f32",
        "f64",
        "c64",
        "c128",
        "f8e5m2",
        "f8e4m3fn",
        "f8e4m3b11fnuz",
        "f8e5m2fnuz",
        "f8e4m3fnuz",
        "f8e4m3",
        "f8e3m4",
        "f4e2m1fn",
        "f8e8m0fnu",
    )
)
# Ops steep where an operand crosses zero: AdamW's m / (sqrt(v) + eps) is about sign(m).
STEEP_AT_ZERO = frozenset(("divide", "sign"))
# Ops whose result steps where the operand crosses an integer (a half-integer for round).
STEPS = frozenset(("floor", "ceil", "round-nearest-afz", "round-nearest-even"))
F32_EPS = float(np.finfo(np.float32).eps)


def eps_of(element_type: str) -> float:
    import ml_dtypes

    from workbench.replay.hlo.dtypes import dtype_of

    dtype = dtype_of(element_type)
    base = np.float32 if dtype == np.complex64 else np.float64 if dtype.kind == "c" else dtype
    return float(ml_dtypes.finfo(base).eps)


def has_discrete(instruction: Instruction) -> bool:
    """Whether some array of the result is integer or pred (an argmax's index)."""
    shape = instruction.shape
    parts = shape.tuple_shapes if shape.is_tuple else (shape,)
    return any(p.is_array and p.element_type not in FLOAT_TYPES for p in parts)


def is_float(instruction: Instruction) -> bool:
    shape = instruction.shape
    return not shape.is_tuple and shape.element_type in FLOAT_TYPES


def converts_exactly(operand: Instruction | None) -> bool:
    """Whether a convert of `operand` to a float type rounds to nearest as a function of its
    operand alone, exactly for any integer the type holds: a convert from an integer or a
    pred array. The samples neither round nor record it (`noisy_interpreter`), and the
    stage's budget keeps nothing for it (`budget`)."""
    return operand is not None and operand.shape.is_array \
        and operand.shape.element_type not in FLOAT_TYPES
